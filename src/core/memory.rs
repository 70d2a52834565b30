//! Memory objects: a header every kind shares (`Mem`) and the kind (`MemKind`: buffer,
//! sub-buffer, pipe, image). Images are in `image`, the commands on memory in `transfer`.
//!
//! Placement (docs/MEMORY.md): buffers live in device-local memory on discrete GPUs and in
//! host-visible memory where memory is unified (lavapipe, integrated GPUs); CL_MEM_ALLOC_HOST_PTR
//! asks for host memory, and CL_MEM_USE_HOST_PTR imports the application's memory where the
//! device can (VK_EXT_external_memory_host), else keeps a device copy synchronised at the
//! points the spec names (map, unmap).

use super::context::Context;
use super::error::{check, CLResult, ClError};
use super::event::Event;
use super::object::{Base, ClObject, Kind};
use super::residence::Copies;
use crate::cl::*;
use crate::compiler::pipes;
use crate::config::{MultiDevice, PlacementMode};
use crate::vk::device::Device as VkDevice;
use crate::vk::memory::{Buffer, Placement};
use crate::vk::staging::Lease;
use crate::vk::submit::upload_now;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

/// What every memory object has (section 5.4's clGetMemObjectInfo), and its kind.
#[repr(C)]
pub struct Mem {
    pub base: Base,
    pub flags: cl_mem_flags,
    pub size: usize,
    /// The application's pointer with CL_MEM_USE_HOST_PTR (else null), as an address.
    pub host_ptr: usize,
    pub properties: Vec<cl_mem_properties>,
    /// Offset of byte 0 of this object in the buffer holding its bytes (`storage`): a
    /// sub-buffer's origin there, that of the buffer an image is made from; else 0.
    pub offset: u64,
    pub kind: MemKind,
    maps: Mutex<HashMap<usize, Mapping>>,
    /// After the object's memory, so that the callbacks run once the fields above (the
    /// object's Vulkan memory, which may import the application's CL_MEM_USE_HOST_PTR memory)
    /// are gone.
    destructors: Destructors,
    /// Last: where this object holds the context's last reference, the context (and its own
    /// destructor callbacks, clSetContextDestructorCallback) goes after the object's callbacks
    /// ran, as the context is deleted once the objects attached to it are.
    pub context: Arc<Context>,
}

pub enum MemKind {
    /// A buffer with memory of its own.
    Buffer(Bytes),
    /// `size` bytes of `parent` (a buffer) from `origin`.
    SubBuffer { parent: Arc<Mem>, origin: usize },
    /// A buffer holding a pipe's header and packets (see `compiler::pipes` for the layout).
    Pipe(Bytes, PipeShape),
    /// An image. `parent` is the buffer of a 1D buffer image or of a 2D image from a buffer
    /// (its texels are the buffer's bytes), or the image a 2D image was created from (the
    /// same texels in another format); other images have a Vulkan image only.
    Image {
        info: super::image::ImageInfo,
        parent: Option<Arc<Mem>>,
    },
}

/// The memory of a buffer or pipe.
pub struct Bytes {
    pub storage: Arc<Buffer>,
    /// In a context of several devices: the same memory imported into the other devices.
    elsewhere: Vec<Arc<Buffer>>,
    /// The host memory `storage` and `elsewhere` import (freed after them).
    #[allow(dead_code)] // held only to be freed last
    shared: Option<HostAlloc>,
    /// A CL_MEM_USE_HOST_PTR buffer on SVM memory: the allocation (whose buffers `storage` and
    /// `elsewhere` are) and where the buffer starts in it.
    svm: Option<(Arc<Mem>, u64)>,
    /// In a context of several devices: a copy per device (`storage` the first one's), and
    /// where the bytes are up to date.
    copies: Option<Copies>,
}

/// A memory object's destructor callbacks, run when it drops: in reverse order of
/// registration, after the object's storage is released and before its parent (of a
/// sub-buffer) goes.
#[derive(Default)]
struct Destructors {
    list: Mutex<Vec<Destructor>>,
    /// The object's handle, set when it drops.
    handle: usize,
    /// A sub-buffer's parent, kept until the callbacks have run.
    parent: Option<Arc<Mem>>,
}

impl Drop for Destructors {
    fn drop(&mut self) {
        for f in std::mem::take(self.list.get_mut()).into_iter().rev() {
            f(self.handle as *mut c_void);
        }
    }
}

/// Host memory that the devices of a multi-device context import (VK_EXT_external_memory_host):
/// every device sees the same bytes, so a buffer needs no migration between them.
struct HostAlloc {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: plain memory, owned; only its address is shared (with the devices).
unsafe impl Send for HostAlloc {}
unsafe impl Sync for HostAlloc {}

impl HostAlloc {
    fn new(size: usize, align: usize) -> Option<HostAlloc> {
        let layout = std::alloc::Layout::from_size_align(size, align).ok()?;
        // SAFETY: the layout's size is not zero (callers round up to the alignment).
        let ptr = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(HostAlloc { ptr, layout })
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout; the buffers importing it are gone (the
        // field order of Bytes drops them first).
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// A clSetMemObjectDestructorCallback callback, given the object's handle.
pub type Destructor = Box<dyn FnOnce(*mut c_void) + Send>;

impl Drop for Mem {
    /// The destructor callbacks run when the object is deleted, after its last use, in
    /// reverse order of registration.
    fn drop(&mut self) {
        // The callbacks run when the last field drops (`Destructors`).
        self.destructors.handle = self as *mut Mem as usize;
        self.destructors.parent = self.parent().cloned();
    }
}

impl ClObject for Mem {
    const KIND: Kind = Kind::Mem;
    const INVALID: i32 = CL_INVALID_MEM_OBJECT;
    fn base(&self) -> &Base {
        &self.base
    }
}

#[derive(Clone, Copy, Debug)]
pub struct PipeShape {
    pub packet_size: u32,
    pub max_packets: u32,
}

/// What a map covers.
#[derive(Clone, Copy, Debug)]
pub enum Mapped {
    /// `size` bytes at `offset` of a buffer (or of a 1D buffer image).
    Bytes { offset: usize, size: usize },
    /// A region of an image (in texels, its array index the last coordinate its type uses).
    Texels {
        origin: [usize; 3],
        region: [usize; 3],
    },
}

/// An outstanding map of a region.
#[derive(Clone)]
pub struct Mapping {
    pub region: Mapped,
    pub flags: cl_map_flags,
    /// The host-visible copy the map returned, for device-local memory.
    pub shadow: Option<Arc<Lease>>,
    /// Outstanding maps of this address (the same region may be mapped more than once).
    count: u32,
}

/// Where a buffer with `flags` lives (unless its host memory is imported): the application's
/// choice with CL_MEM_ALLOC_HOST_PTR (host memory: zero-copy maps), else device-local memory on
/// discrete GPUs and host-visible memory where device and host share memory, unless
/// VKCL_PLACEMENT says otherwise.
fn placement(flags: cl_mem_flags, caps: &crate::vk::probe::Caps) -> Placement {
    let unified = caps.unified_memory();
    if flags & CL_MEM_ALLOC_HOST_PTR != 0 {
        return if unified {
            Placement::Upload
        } else {
            Placement::Readback
        };
    }
    match crate::config::get().placement {
        PlacementMode::Device => Placement::Device,
        PlacementMode::Mapped => Placement::Mapped,
        PlacementMode::Host => Placement::Upload,
        PlacementMode::Auto if unified => Placement::Upload,
        PlacementMode::Auto if caps.mappable_device_memory() => Placement::Mapped,
        PlacementMode::Auto => Placement::Device,
    }
}

impl Mem {
    fn new(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: usize,
        properties: Vec<cl_mem_properties>,
        kind: MemKind,
    ) -> Arc<Mem> {
        let offset = match &kind {
            MemKind::SubBuffer { parent, origin } => parent.offset + *origin as u64,
            MemKind::Image {
                parent: Some(p), ..
            } => p.offset,
            MemKind::Buffer(b) => b.svm.as_ref().map_or(0, |s| s.1),
            _ => 0,
        };
        Arc::new(Mem {
            base: Base::new(Kind::Mem),
            context: context.clone(),
            flags,
            size,
            host_ptr,
            properties,
            offset,
            kind,
            maps: Mutex::new(HashMap::new()),
            destructors: Destructors::default(),
        })
    }

    /// CL_MEM_TYPE.
    pub fn mem_type(&self) -> cl_mem_object_type {
        match &self.kind {
            MemKind::Buffer(_) | MemKind::SubBuffer { .. } => CL_MEM_OBJECT_BUFFER,
            MemKind::Pipe(..) => CL_MEM_OBJECT_PIPE,
            MemKind::Image { info, .. } => info.desc.image_type,
        }
    }

    /// The object this one was created from (CL_MEM_ASSOCIATED_MEMOBJECT).
    pub fn parent(&self) -> Option<&Arc<Mem>> {
        match &self.kind {
            MemKind::SubBuffer { parent, .. } => Some(parent),
            MemKind::Image { parent, .. } => parent.as_ref(),
            _ => None,
        }
    }

    /// A sub-buffer's origin in its parent (CL_MEM_OFFSET); 0 for other objects.
    pub fn origin(&self) -> usize {
        match self.kind {
            MemKind::SubBuffer { origin, .. } => origin,
            _ => 0,
        }
    }

    /// A pipe's packet size and capacity.
    pub fn pipe(&self) -> Option<PipeShape> {
        match self.kind {
            MemKind::Pipe(_, shape) => Some(shape),
            _ => None,
        }
    }

    pub fn is_image(&self) -> bool {
        matches!(self.kind, MemKind::Image { .. })
    }

    /// The memory holding the object's bytes: its own, or its parent's (sub-buffers, images
    /// whose texels are a buffer's bytes); None for images with a Vulkan image only.
    fn bytes(&self) -> Option<&Bytes> {
        match &self.kind {
            MemKind::Buffer(b) | MemKind::Pipe(b, _) => Some(b),
            MemKind::SubBuffer { parent, .. } => parent.bytes(),
            MemKind::Image { parent, .. } => parent.as_ref()?.bytes(),
        }
    }

    /// The buffer holding the object's bytes on the context's first device
    /// (CL_INVALID_MEM_OBJECT for an image with a Vulkan image only).
    pub fn storage(&self) -> CLResult<&Arc<Buffer>> {
        self.bytes()
            .map(|b| &b.storage)
            .ok_or(ClError(CL_INVALID_MEM_OBJECT))
    }

    /// The object's buffer on `device`: its storage, its copy there (`Copies`), or the same
    /// memory imported there. Where the context's devices could not share memory, the storage lives on the first device
    /// only, and commands elsewhere fail with CL_MEM_OBJECT_ALLOCATION_FAILURE (the data store
    /// cannot be made available there; there is no migration).
    pub fn storage_on(&self, device: &Arc<VkDevice>) -> CLResult<&Arc<Buffer>> {
        let bytes = self.bytes().ok_or(ClError(CL_INVALID_MEM_OBJECT))?;
        if let Some(copies) = &bytes.copies {
            return copies.on(&bytes.storage, device);
        }
        std::iter::once(&bytes.storage)
            .chain(&bytes.elsewhere)
            .find(|b| Arc::ptr_eq(&b.device, device))
            .ok_or_else(|| {
                log::warn!(target: "api", "a buffer of another device of the context (no shared memory)");
                ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE)
            })
    }

    /// CL_MEM_OBJECT_ALLOCATION_FAILURE where the object's memory (its bytes, or its Vulkan
    /// image) is not on `device`.
    pub fn check_device(&self, device: &Arc<VkDevice>) -> CLResult<()> {
        match self.bytes() {
            Some(_) => self.storage_on(device).map(|_| ()),
            None => super::image::vk_image(self, device).map(|_| ()),
        }
    }

    /// A sub-buffer used on `device`: CL_MISALIGNED_SUB_BUFFER_OFFSET if its origin is not
    /// aligned to that device's CL_DEVICE_MEM_BASE_ADDR_ALIGN (clCreateSubBuffer accepts an
    /// origin aligned for one device of the context; enqueues and kernel arguments check the
    /// device of the queue, as the spec's commands do).
    pub fn check_sub_buffer_alignment(&self, device: &super::device::Device) -> CLResult<()> {
        check(
            self.origin() as u64 % device.mem_base_addr_align() == 0,
            CL_MISALIGNED_SUB_BUFFER_OFFSET,
        )
    }

    /// clCreateBuffer.
    ///
    /// # Safety
    /// With CL_MEM_COPY_HOST_PTR or CL_MEM_USE_HOST_PTR, `host_ptr` points to `size` readable
    /// bytes; with CL_MEM_USE_HOST_PTR they stay valid for the buffer's life (the spec's
    /// contract for host_ptr).
    pub unsafe fn new_buffer(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: *mut c_void,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let copy = flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR) != 0;
        // SAFETY: `size` readable bytes at host_ptr (the caller's contract).
        let init = copy.then(|| unsafe { std::slice::from_raw_parts(host_ptr as *const u8, size) });
        let use_host = flags & CL_MEM_USE_HOST_PTR != 0;
        let host_ptr = if use_host { host_ptr as usize } else { 0 };
        if use_host {
            if let Some((svm, _)) = super::svm::find_range(context, host_ptr, size)? {
                return Mem::new_on_svm(&svm, flags, size, host_ptr, properties);
            }
        }
        // SAFETY: host_ptr is 0 or the USE_HOST_PTR memory (the caller's contract).
        unsafe { Self::new_root(context, flags, size, init, host_ptr, properties, None) }
    }

    /// clCreatePipe: a buffer holding the header and slot states of an empty pipe, then the
    /// packets.
    pub fn new_pipe(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        shape: PipeShape,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let size = pipes::buffer_size(shape.packet_size, shape.max_packets);
        let size = usize::try_from(size).map_err(|_| ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE))?;
        let header = pipes::initial_bytes(shape.packet_size, shape.max_packets);
        // SAFETY: no host pointer.
        unsafe {
            Self::new_root(
                context,
                flags,
                size,
                Some(&header),
                0,
                properties,
                Some(shape),
            )
        }
    }

    /// A buffer or pipe with storage of its own.
    ///
    /// # Safety
    /// `host_ptr` is 0, or the address of `size` bytes that stay valid for the object's life
    /// (CL_MEM_USE_HOST_PTR memory).
    unsafe fn new_root(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        init: Option<&[u8]>,
        host_ptr: usize,
        properties: Vec<cl_mem_properties>,
        pipe: Option<PipeShape>,
    ) -> CLResult<Arc<Mem>> {
        // SAFETY: host_ptr as the caller's contract says.
        let bytes = match device_shared_storage(context, flags, size, init)? {
            Some(b) => b,
            None => unsafe { Self::root_bytes(context, flags, size, init, host_ptr) }?,
        };
        let kind = match pipe {
            Some(shape) => MemKind::Pipe(bytes, shape),
            None => MemKind::Buffer(bytes),
        };
        Ok(Mem::new(context, flags, size, host_ptr, properties, kind))
    }

    /// The memory of a buffer of a context of one device, or of several that do not share
    /// device memory: copies per device, one host allocation they import, or the first
    /// device's memory.
    ///
    /// # Safety
    /// As `new_root`'s.
    unsafe fn root_bytes(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        init: Option<&[u8]>,
        host_ptr: usize,
    ) -> CLResult<Bytes> {
        let copies = copies(context, flags, size, init.is_some())?;
        // SAFETY: host_ptr as the caller's contract says.
        let shared = match copies {
            Some(_) => None,
            None => unsafe { shared_storage(context, size, init, host_ptr) }?,
        };
        if let Some(b) = shared {
            return Ok(b);
        }
        let device = context.devices[0].vk()?;
        Ok(Bytes {
            // SAFETY: as above.
            storage: Arc::new(unsafe { root_storage(&device, flags, size, init, host_ptr) }?),
            elsewhere: vec![],
            shared: None,
            svm: None,
            copies,
        })
    }
}

impl Mem {
    /// An image with a Vulkan image of its own (`info.store`).
    pub(super) fn new_image_object(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: usize,
        info: super::image::ImageInfo,
        properties: Vec<cl_mem_properties>,
    ) -> Arc<Mem> {
        let kind = MemKind::Image { info, parent: None };
        Mem::new(context, flags, size, host_ptr, properties, kind)
    }

    /// An image made from `parent`: a buffer (whose bytes are its texels) or an image (whose
    /// texels it reads in another format).
    pub(super) fn new_view(
        parent: &Arc<Mem>,
        flags: cl_mem_flags,
        size: usize,
        info: super::image::ImageInfo,
        properties: Vec<cl_mem_properties>,
    ) -> Arc<Mem> {
        let kind = MemKind::Image {
            info,
            parent: Some(parent.clone()),
        };
        let context = &parent.context;
        Mem::new(context, flags, size, parent.host_ptr, properties, kind)
    }
}

/// A buffer's storage on one device: imported application memory (USE_HOST_PTR, where the
/// device can), else an allocation placed as `placement` says, holding `init`.
///
/// # Safety
/// As `Mem::new_root`'s for `host_ptr`.
unsafe fn root_storage(
    device: &Arc<VkDevice>,
    flags: cl_mem_flags,
    size: usize,
    init: Option<&[u8]>,
    host_ptr: usize,
) -> CLResult<Buffer> {
    // SAFETY: host_ptr, when not 0, holds `size` bytes for the buffer's lifetime (the
    // caller's contract).
    let imported = (host_ptr != 0)
        .then(|| unsafe { Buffer::import(device, host_ptr as *mut u8, size as u64) })
        .flatten();
    let storage = match imported {
        Some(b) => b,
        None => {
            let placement = placement(flags, &device.caps);
            let storage = Buffer::new(device, size as u64, placement, "cl_mem")?;
            if let Some(src) = init {
                if storage.host().or(storage.write_combined()).is_some() {
                    // SAFETY: the buffer is new, so no GPU work touches it.
                    unsafe { storage.write(0, src) };
                } else {
                    upload_now(device, &storage, 0, src)?;
                }
            }
            storage
        }
    };
    log::debug!(target: "memory", "buffer of {size} bytes: {}", match storage.host() {
        _ if storage.imported() => "imported host memory",
        Some(_) => "host-visible",
        None if storage.write_combined().is_some() => "device-local, mapped",
        None => "device-local",
    });
    Ok(storage)
}

/// The context's Vulkan devices, each once, the first device's first.
pub(super) fn vk_devices(context: &Context) -> CLResult<Vec<Arc<VkDevice>>> {
    let mut devices: Vec<Arc<VkDevice>> = vec![];
    for d in &context.devices {
        let vk = d.vk()?;
        if !devices.iter().any(|v| Arc::ptr_eq(v, &vk)) {
            devices.push(vk);
        }
    }
    Ok(devices)
}

/// A copy per device (`residence`) for a buffer with `flags` in a context of several Vulkan
/// devices that can all import host memory (the copies between them go through it), unless
/// the application asked for host memory (CL_MEM_USE_HOST_PTR, CL_MEM_ALLOC_HOST_PTR: one
/// allocation all devices import) or VKCL_MULTI_DEVICE=shared. `initialised`: the first
/// device's copy gets the buffer's initial contents.
fn copies(
    context: &Context,
    flags: cl_mem_flags,
    size: usize,
    initialised: bool,
) -> CLResult<Option<Copies>> {
    let host = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR;
    if flags & host != 0 || crate::config::get().multi_device == MultiDevice::Shared {
        return Ok(None);
    }
    let Some(devices) = migrating_devices(context)? else {
        return Ok(None);
    };
    let placement = devices.iter().map(|d| placement(flags, &d.caps)).collect();
    Ok(Some(Copies::new(
        devices,
        placement,
        size as u64,
        initialised,
    )))
}

/// In a context of several VkDevices of one GPU that share device memory
/// (`VkDevice::shares_memory_with`; VKCL_MULTI_DEVICE=auto), a buffer without host-pointer
/// flags: one device-local allocation of the first device that the others import, holding
/// `init`. No copies, nothing to move between the devices. None elsewhere.
fn device_shared_storage(
    context: &Context,
    flags: cl_mem_flags,
    size: usize,
    init: Option<&[u8]>,
) -> CLResult<Option<Bytes>> {
    let host = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR;
    let devices = vk_devices(context)?;
    let one_gpu = devices.len() > 1
        && devices[1..]
            .iter()
            .all(|d| devices[0].shares_memory_with(d));
    if flags & host != 0 || crate::config::get().multi_device != MultiDevice::Auto || !one_gpu {
        return Ok(None);
    }
    let shared = Buffer::exportable(&devices[0], size as u64).and_then(|first| {
        let elsewhere = devices[1..]
            .iter()
            .map(|d| first.import_into(d).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((first, elsewhere))
    });
    let (first, elsewhere) = match shared {
        Ok(s) => s,
        Err(e) => {
            // The driver would not export or import this memory: copies per device instead.
            log::info!(target: "memory", "sharing {size} bytes of device memory failed ({e}): copies per device");
            return Ok(None);
        }
    };
    if let Some(src) = init {
        upload_now(&devices[0], &first, 0, src)?;
    }
    log::debug!(target: "memory", "buffer of {size} bytes: device-local, shared by {} devices of one GPU", devices.len());
    Ok(Some(Bytes {
        storage: Arc::new(first),
        elsewhere,
        shared: None,
        svm: None,
        copies: None,
    }))
}

/// The context's Vulkan devices where there are several and all import host memory (what
/// copies between them go through).
fn migrating_devices(context: &Context) -> CLResult<Option<Vec<Arc<VkDevice>>>> {
    let devices = vk_devices(context)?;
    let migrate = devices.len() > 1 && devices.iter().all(|d| d.imports_host_memory());
    Ok(migrate.then_some(devices))
}

/// The tracking of an image's copies per device (`residence`; the Vulkan images are the
/// image's own) of `size` bytes, in a context whose devices can migrate data (else None: the
/// image lives on the first device only). `initialised`: the first device's holds the
/// image's initial contents.
pub(super) fn image_copies(
    context: &Context,
    size: usize,
    initialised: bool,
) -> CLResult<Option<Copies>> {
    let devices = migrating_devices(context)?;
    Ok(devices.map(|d| Copies::new(d, vec![], size as u64, initialised)))
}

/// In a context of several Vulkan devices that can all import host memory: one host
/// allocation holding `init` (or the application's USE_HOST_PTR memory, if aligned), imported
/// into each device; returns it with the first device's buffer and the others'. None where
/// the context has one device or the devices cannot share (the caller allocates normally).
///
/// # Safety
/// As `Mem::new_root`'s for `host_ptr`.
unsafe fn shared_storage(
    context: &Context,
    size: usize,
    init: Option<&[u8]>,
    host_ptr: usize,
) -> CLResult<Option<Bytes>> {
    let devices = vk_devices(context)?;
    let align = devices
        .iter()
        .map(|d| d.caps.min_imported_host_pointer_alignment as usize)
        .max()
        .unwrap_or(0);
    if devices.len() < 2 || align == 0 || devices.iter().any(|d| !d.imports_host_memory()) {
        return Ok(None);
    }
    let rounded = size.max(1).next_multiple_of(align);
    let (alloc, ptr) = if host_ptr != 0 {
        // The application's memory: only where the import covers exactly its bytes.
        if host_ptr % align != 0 || size % align != 0 {
            return Ok(None);
        }
        (None, host_ptr as *mut u8)
    } else {
        let Some(alloc) = HostAlloc::new(rounded, align.max(16)) else {
            return Err(ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE));
        };
        if let Some(data) = init {
            // SAFETY: the allocation has `rounded` >= data.len() bytes; nothing else uses it.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), alloc.ptr.as_ptr(), data.len()) };
        }
        let ptr = alloc.ptr.as_ptr();
        (Some(alloc), ptr)
    };
    let mut buffers = vec![];
    for d in &devices {
        // SAFETY: the memory (ours, or the application's under USE_HOST_PTR's contract) stays
        // valid while the buffers exist: Bytes drops them before `shared`.
        match unsafe { Buffer::import(d, ptr, rounded as u64) } {
            Some(b) => buffers.push(b),
            None => return Ok(None),
        }
    }
    let first = buffers.remove(0);
    log::debug!(target: "memory", "buffer of {size} bytes shared by {} devices", devices.len());
    Ok(Some(Bytes {
        storage: Arc::new(first),
        elsewhere: buffers.into_iter().map(Arc::new).collect(),
        shared: alloc,
        svm: None,
        copies: None,
    }))
}

impl Mem {
    /// The memory of an SVM allocation (clSVMAlloc): `size` bytes of host memory aligned to
    /// `align` (a power of two, at least the devices' import alignment), imported into every
    /// device of the context; its host address is the SVM pointer. None where a device cannot
    /// import host memory or gives the import a device address other than its host address
    /// (a pointer value would not mean the same memory on both sides). Devices that place
    /// maps instead get memory mapped at its device address: device-local with a host copy
    /// for coarse-grained allocations where `svm::mirrors`, else host-visible.
    pub fn new_svm(context: &Arc<Context>, flags: cl_mem_flags, size: usize) -> Option<Arc<Mem>> {
        let devices = vk_devices(context).ok()?;
        let align = super::svm::alignment(context)?;
        let rounded = size.max(1).next_multiple_of(align);
        if super::svm::placed(context) {
            let (device, bytes) = (&devices[0], rounded as u64);
            let b = (super::svm::mirrors(context, flags))
                .then(|| Buffer::mirrored(device, bytes))
                .flatten()
                .or_else(|| Buffer::at_device_address(device, bytes))?;
            let ptr = b.mirror().or(b.host())?.as_ptr() as usize;
            let bytes = Bytes {
                storage: Arc::new(b),
                elsewhere: vec![],
                shared: None,
                svm: None,
                copies: None,
            };
            return Some(Mem::new(
                context,
                flags,
                size,
                ptr,
                vec![],
                MemKind::Buffer(bytes),
            ));
        }
        let alloc = HostAlloc::new(rounded, align)?;
        let ptr = alloc.ptr.as_ptr();
        let mut buffers = vec![];
        for d in &devices {
            // SAFETY: the memory is ours and outlives the buffers (Bytes drops them first).
            let b = unsafe { Buffer::import(d, ptr, rounded as u64) }?;
            if b.device_address() != Some(ptr as u64) {
                log::info!(target: "memory", "SVM: device address {:#x?} of host memory at {ptr:?}", b.device_address());
                return None;
            }
            buffers.push(Arc::new(b));
        }
        let bytes = Bytes {
            storage: buffers.remove(0),
            elsewhere: buffers,
            shared: Some(alloc),
            svm: None,
            copies: None,
        };
        let kind = MemKind::Buffer(bytes);
        Some(Mem::new(context, flags, size, ptr as usize, vec![], kind))
    }

    /// clCreateBuffer with CL_MEM_USE_HOST_PTR at `ptr` inside the SVM allocation `svm`: the
    /// allocation's memory from there (the same bytes, on every device).
    pub fn new_on_svm(
        svm: &Arc<Mem>,
        flags: cl_mem_flags,
        size: usize,
        ptr: usize,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let from = svm.bytes().ok_or(ClError(CL_INVALID_HOST_PTR))?;
        let bytes = Bytes {
            storage: from.storage.clone(),
            elsewhere: from.elsewhere.clone(),
            shared: None,
            svm: Some((svm.clone(), (ptr - svm.host_ptr) as u64)),
            copies: None,
        };
        let kind = MemKind::Buffer(bytes);
        Ok(Mem::new(&svm.context, flags, size, ptr, properties, kind))
    }

    /// Host memory of `size` bytes that every device of the context imports: what copies
    /// between devices go through (`residence`).
    pub(super) fn transit(context: &Arc<Context>, size: usize) -> CLResult<Arc<Mem>> {
        // SAFETY: no host pointer.
        let bytes = unsafe { shared_storage(context, size, None, 0) }?
            .ok_or(ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE))?;
        let kind = MemKind::Buffer(bytes);
        Ok(Mem::new(context, CL_MEM_READ_WRITE, size, 0, vec![], kind))
    }

    /// The copies per device (`residence`) of a buffer, or of an image's texels, if it has
    /// them.
    pub(super) fn copies(&self) -> Option<&Copies> {
        match &self.kind {
            MemKind::Image { info, parent: None } => info.copies.as_ref(),
            MemKind::Image {
                parent: Some(p), ..
            } if p.is_image() => p.copies(),
            _ => self.bytes()?.copies.as_ref(),
        }
    }

    /// Whether the object's memory is an SVM allocation's (CL_MEM_USES_SVM_POINTER).
    pub fn uses_svm(&self) -> bool {
        self.bytes().is_some_and(|b| b.svm.is_some())
    }
}

impl Mem {
    /// clCreateSubBuffer: `size` bytes of `parent` from `origin` (checked by the caller).
    pub fn new_sub_buffer(
        parent: &Arc<Mem>,
        flags: cl_mem_flags,
        origin: usize,
        size: usize,
    ) -> Arc<Mem> {
        let host_ptr = if parent.host_ptr != 0 {
            parent.host_ptr + origin
        } else {
            0
        };
        let kind = MemKind::SubBuffer {
            parent: parent.clone(),
            origin,
        };
        Mem::new(&parent.context, flags, size, host_ptr, vec![], kind)
    }

    pub fn on_destroy(&self, f: Destructor) {
        self.destructors.list.lock().push(f);
    }

    pub fn map_count(&self) -> u32 {
        self.maps.lock().values().map(|m| m.count).sum()
    }

    /// `[offset, offset + size)` lies inside the buffer.
    pub fn check_range(&self, offset: usize, size: usize) -> CLResult<()> {
        check(
            offset.checked_add(size).is_some_and(|end| end <= self.size),
            CL_INVALID_VALUE,
        )
    }

    /// The offset in `storage` of byte `offset` of this object.
    pub fn at(&self, offset: usize) -> u64 {
        self.offset + offset as u64
    }

    /// Records a map of `region` at `ptr`: a shadow's own address, or memory several maps can
    /// share (a buffer's own, the application's of a CL_MEM_USE_HOST_PTR object). The first
    /// map of an address gives the mapping its shadow and start; later maps of bytes widen it.
    pub fn add_mapping(
        &self,
        ptr: usize,
        region: Mapped,
        flags: cl_map_flags,
        shadow: Option<Arc<Lease>>,
    ) {
        let mut maps = self.maps.lock();
        let m = maps.entry(ptr).or_insert(Mapping {
            region,
            flags,
            shadow,
            count: 0,
        });
        m.count += 1;
        m.flags |= flags;
        if let (Mapped::Bytes { size: have, .. }, Mapped::Bytes { size, .. }) =
            (&mut m.region, region)
        {
            *have = (*have).max(size);
        }
    }

    /// Completes the map of `ptr` that `event` performs: a blocking map waits for it, and if
    /// it failed (its wait list failed), the map is undone: the call returns NULL with
    /// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, and nothing stays mapped.
    pub fn complete_map(&self, ptr: usize, event: &Arc<Event>, blocking: bool) -> CLResult<()> {
        if !blocking {
            return Ok(());
        }
        event.wait().inspect_err(|_| {
            let _ = self.remove_mapping(ptr);
        })
    }

    /// Whether `ptr` is mapped.
    pub fn is_mapped(&self, ptr: usize) -> bool {
        self.maps.lock().contains_key(&ptr)
    }

    /// Ends one map of `ptr` (CL_INVALID_VALUE if it is not mapped).
    pub fn remove_mapping(&self, ptr: usize) -> CLResult<Mapping> {
        let mut maps = self.maps.lock();
        let m = maps.get_mut(&ptr).ok_or(ClError(CL_INVALID_VALUE))?;
        m.count -= 1;
        if m.count == 0 {
            return Ok(maps.remove(&ptr).expect("found above"));
        }
        Ok(m.clone())
    }
}
