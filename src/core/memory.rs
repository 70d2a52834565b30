//! Memory objects: buffers, sub-buffers and pipes. The commands on them are in `transfer`.
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
use crate::cl::*;
use crate::compiler::pipes;
use crate::config::PlacementMode;
use crate::vk::device::Device as VkDevice;
use crate::vk::memory::{Buffer, Placement};
use crate::vk::staging::Lease;
use crate::vk::submit::upload_now;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

#[repr(C)]
pub struct Mem {
    pub base: Base,
    pub context: Arc<Context>,
    pub mem_type: cl_mem_object_type,
    pub flags: cl_mem_flags,
    pub size: usize,
    /// The application's pointer with CL_MEM_USE_HOST_PTR (else null), as an address.
    pub host_ptr: usize,
    pub properties: Vec<cl_mem_properties>,
    pub storage: Arc<Buffer>,
    /// Offset of byte 0 of this object in `storage`.
    pub offset: u64,
    /// A sub-buffer's parent, and its origin in the parent.
    pub parent: Option<(Arc<Mem>, usize)>,
    /// A pipe's packet size and capacity (see `compiler::pipes` for its layout).
    pub pipe: Option<PipeShape>,
    /// An image's description and texels (`storage` is then a placeholder, except for 1D
    /// buffer images, whose texels are its bytes).
    pub image: Option<super::image::ImageInfo>,
    maps: Mutex<HashMap<usize, Mapping>>,
    /// In a context of several devices: the same memory imported into the other devices.
    elsewhere: Vec<Arc<Buffer>>,
    /// The host memory `storage` and `elsewhere` import (freed after them).
    shared: Option<HostAlloc>,
    /// Last, so that the callbacks run once the fields above (the object's Vulkan memory,
    /// which may import the application's CL_MEM_USE_HOST_PTR memory) are gone.
    destructors: Destructors,
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
        // field order of Mem drops them first).
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// Memory imported into every device of a context: the host allocation (None for the
/// application's USE_HOST_PTR memory), the first device's buffer and the others'.
type SharedStorage = (Option<HostAlloc>, Buffer, Vec<Arc<Buffer>>);

/// A clSetMemObjectDestructorCallback callback, given the object's handle.
pub type Destructor = Box<dyn FnOnce(*mut c_void) + Send>;

impl Drop for Mem {
    /// The destructor callbacks run when the object is deleted, after its last use, in
    /// reverse order of registration.
    fn drop(&mut self) {
        // The callbacks run when the last field drops (`Destructors`).
        self.destructors.handle = self as *mut Mem as usize;
        self.destructors.parent = self.parent.as_ref().map(|(p, _)| p.clone());
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
    /// The object's buffer on `device`: its storage, or the same memory imported there. Where
    /// the context's devices could not share memory, the storage lives on the first device
    /// only, and commands elsewhere fail with CL_MEM_OBJECT_ALLOCATION_FAILURE (the data store
    /// cannot be made available there; there is no migration).
    pub fn storage_on(&self, device: &Arc<VkDevice>) -> CLResult<&Arc<Buffer>> {
        std::iter::once(&self.storage)
            .chain(&self.elsewhere)
            .find(|b| Arc::ptr_eq(&b.device, device))
            .ok_or_else(|| {
                log::warn!(target: "api", "a buffer of another device of the context (no shared memory)");
                ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE)
            })
    }

    pub fn check_device(&self, device: &Arc<VkDevice>) -> CLResult<()> {
        self.storage_on(device).map(|_| ())
    }

    /// A sub-buffer used on `device`: CL_MISALIGNED_SUB_BUFFER_OFFSET if its origin is not
    /// aligned to that device's CL_DEVICE_MEM_BASE_ADDR_ALIGN (clCreateSubBuffer accepts an
    /// origin aligned for one device of the context; enqueues and kernel arguments check the
    /// device of the queue, as the spec's commands do).
    pub fn check_sub_buffer_alignment(&self, device: &super::device::Device) -> CLResult<()> {
        let origin = self.parent.as_ref().map_or(0, |p| p.1 as u64);
        check(
            origin % device.mem_base_addr_align() == 0,
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
        // SAFETY: host_ptr is 0 or the USE_HOST_PTR memory (the caller's contract).
        unsafe { Self::new_root(context, flags, size, init, host_ptr, properties, None) }
    }

    /// clCreatePipe: a buffer holding the header of an empty pipe, then the packets.
    pub fn new_pipe(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        shape: PipeShape,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let size = pipes::buffer_size(shape.packet_size, shape.max_packets);
        let size = usize::try_from(size).map_err(|_| ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE))?;
        let header: Vec<u8> = pipes::header(shape.packet_size, shape.max_packets)
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
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
        let device = context.devices[0].vk()?;
        // SAFETY: host_ptr as the caller's contract says.
        let shared = unsafe { shared_storage(context, size, init, host_ptr) }?;
        let (shared, storage, elsewhere) = match shared {
            Some(s) => s,
            None => (
                None,
                // SAFETY: as above.
                unsafe { root_storage(&device, flags, size, init, host_ptr) }?,
                vec![],
            ),
        };
        Ok(Arc::new(Mem {
            base: Base::new(Kind::Mem),
            context: context.clone(),
            mem_type: if pipe.is_some() {
                CL_MEM_OBJECT_PIPE
            } else {
                CL_MEM_OBJECT_BUFFER
            },
            flags,
            size,
            host_ptr,
            properties,
            storage: Arc::new(storage),
            offset: 0,
            parent: None,
            pipe,
            image: None,
            maps: Mutex::new(HashMap::new()),
            destructors: Destructors::default(),
            elsewhere,
            shared,
        }))
    }
}

impl Mem {
    /// An image with a Vulkan image of its own (`info.store`) on `device`.
    pub(super) fn new_image_object(
        context: &Arc<Context>,
        device: &Arc<VkDevice>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: usize,
        info: super::image::ImageInfo,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let placeholder = Buffer::new(device, 16, Placement::Upload, "image")?;
        Ok(Arc::new(Mem {
            base: Base::new(Kind::Mem),
            context: context.clone(),
            mem_type: info.desc.image_type,
            flags,
            size,
            host_ptr,
            properties,
            storage: Arc::new(placeholder),
            offset: 0,
            parent: None,
            pipe: None,
            image: Some(info),
            maps: Mutex::new(HashMap::new()),
            destructors: Destructors::default(),
            elsewhere: vec![],
            shared: None,
        }))
    }

    /// An image whose texels are the bytes of `buffer` (a 1D buffer image).
    pub(super) fn new_view(
        buffer: &Arc<Mem>,
        flags: cl_mem_flags,
        size: usize,
        info: super::image::ImageInfo,
        properties: Vec<cl_mem_properties>,
    ) -> Arc<Mem> {
        Arc::new(Mem {
            base: Base::new(Kind::Mem),
            context: buffer.context.clone(),
            mem_type: info.desc.image_type,
            flags,
            size,
            host_ptr: buffer.host_ptr,
            properties,
            storage: buffer.storage.clone(),
            offset: buffer.offset,
            parent: Some((buffer.clone(), 0)),
            pipe: None,
            image: Some(info),
            maps: Mutex::new(HashMap::new()),
            destructors: Destructors::default(),
            elsewhere: buffer.elsewhere.clone(),
            shared: None,
        })
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
) -> CLResult<Option<SharedStorage>> {
    let mut devices: Vec<Arc<VkDevice>> = vec![];
    for d in &context.devices {
        let vk = d.vk()?;
        if !devices.iter().any(|v| Arc::ptr_eq(v, &vk)) {
            devices.push(vk);
        }
    }
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
        // valid while the buffers exist: Mem drops them before `shared`.
        match unsafe { Buffer::import(d, ptr, rounded as u64) } {
            Some(b) => buffers.push(b),
            None => return Ok(None),
        }
    }
    let first = buffers.remove(0);
    log::debug!(target: "memory", "buffer of {size} bytes shared by {} devices", devices.len());
    Ok(Some((
        alloc,
        first,
        buffers.into_iter().map(Arc::new).collect(),
    )))
}

impl Mem {
    /// clCreateSubBuffer: `size` bytes of `parent` from `origin` (checked by the caller).
    pub fn new_sub_buffer(
        parent: &Arc<Mem>,
        flags: cl_mem_flags,
        origin: usize,
        size: usize,
    ) -> Arc<Mem> {
        Arc::new(Mem {
            base: Base::new(Kind::Mem),
            context: parent.context.clone(),
            mem_type: CL_MEM_OBJECT_BUFFER,
            flags,
            size,
            host_ptr: if parent.host_ptr != 0 {
                parent.host_ptr + origin
            } else {
                0
            },
            properties: vec![],
            storage: parent.storage.clone(),
            offset: parent.offset + origin as u64,
            parent: Some((parent.clone(), origin)),
            pipe: None,
            image: None,
            maps: Mutex::new(HashMap::new()),
            destructors: Destructors::default(),
            elsewhere: parent.elsewhere.clone(),
            shared: None,
        })
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
