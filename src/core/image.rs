//! Images (section 5.3 of the spec): image memory objects and the commands on them.
//!
//! An image is a VkImage (vk::image), except 1D buffer images, whose texels are the bytes of
//! their buffer (a texel-buffer view for kernels). In a context of several devices it has one
//! on each device that uses it (`residence::PerDevice`), and `residence` moves the texels
//! between them (a view of it in the buffer's copy on that device, for a 1D buffer image). Host
//! transfers go through staging memory with the texels tightly packed: the host packs and
//! unpacks rows at the application's pitches, the GPU copies between the staging buffer and
//! the image. Maps (the engine of `transfer::map`, shared with buffers) return a staging
//! shadow of the region (or, for CL_MEM_USE_HOST_PTR images, the application's memory, brought
//! up to date), written back at unmap.

use super::context::Context;
use super::error::{check, CLResult, ClError};
use super::event::Event;
use super::format::{Format, Use};
use super::memory::{Mapped, Mem, MemKind};
use super::queue::{HostPart, Queue, Recorded};
use super::residence::{self, Access, Copies, PerDevice};
use super::transfer::{self, HostPtr};
use crate::cl::*;
use crate::vk::device::Device as VkDevice;
use crate::vk::image::{Image as VkImage, ImageShape, TexelCopy, TexelView};
use crate::vk::memory::{Buffer, Placement};
use crate::vk::staging::Lease;
use crate::vk::submit::Recorder;
use std::ffi::c_void;
use std::sync::Arc;

/// An image's description (clGetImageInfo) and where its texels are.
pub struct ImageInfo {
    pub format: Format,
    /// As clGetImageInfo reports it: the sizes the type does not use are 0; the pitches are
    /// the application's memory's with CL_MEM_USE_HOST_PTR, else those of packed texels
    /// (slice pitch 0 for types without slices).
    pub desc: Desc,
    pub store: Store,
    /// In a context of several devices: where the texels are up to date (an image with a
    /// Vulkan image of its own; one made from another image or a buffer has its parent's).
    pub copies: Option<Copies>,
    /// A 2D image created from a buffer (cl_khr_image2d_from_buffer): the buffer (the Mem's
    /// parent and storage) holds the texels, rows `desc.row_pitch` bytes apart, and is the
    /// reference: every command using the Vulkan image first copies the buffer into it, and
    /// one that writes the image copies it back (`sync_in`, `sync_out`).
    pub backed: bool,
}

pub enum Store {
    /// The Vulkan image, per device.
    Image(PerDevice<VkImage>),
    /// A 1D buffer image: the texels are its buffer's bytes (the Mem's storage, at its
    /// offset), seen by kernels through this view (per device: of the buffer there).
    Texels(PerDevice<TexelView>),
}

/// The description given to clCreateImage, checked.
#[derive(Clone, Copy, Debug)]
pub struct Desc {
    pub image_type: cl_mem_object_type,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub array_size: usize,
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

impl Desc {
    /// The description with the sizes the type does not use set to 0 and the given pitches.
    fn reported(&self, row_pitch: usize, slice_pitch: usize) -> Desc {
        let t = self.image_type;
        let has_height = matches!(
            t,
            CL_MEM_OBJECT_IMAGE2D | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D
        );
        let arrayed = matches!(t, CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY);
        Desc {
            image_type: t,
            width: self.width,
            height: if has_height { self.height } else { 0 },
            depth: if t == CL_MEM_OBJECT_IMAGE3D {
                self.depth
            } else {
                0
            },
            array_size: if arrayed { self.array_size } else { 0 },
            row_pitch,
            slice_pitch: if Pitches::has_slices(t) {
                slice_pitch
            } else {
                0
            },
        }
    }

    /// The size in CL's coordinates: width, height (or layers of a 1D array), depth (or
    /// layers of a 2D array).
    pub fn dims(&self) -> [usize; 3] {
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => [self.width, 1, 1],
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [self.width, self.array_size, 1],
            CL_MEM_OBJECT_IMAGE2D => [self.width, self.height, 1],
            CL_MEM_OBJECT_IMAGE2D_ARRAY => [self.width, self.height, self.array_size],
            _ => [self.width, self.height, self.depth],
        }
    }
}

/// The host layout of an image region: bytes between rows and between slices (for a 1D
/// array, between its 1D images), with the spec's defaults for 0.
#[derive(Clone, Copy, Debug)]
pub struct Pitches {
    pub row: usize,
    pub slice: usize,
}

impl Pitches {
    /// The pitches of `region` of an image of `image_type` and `element` bytes per texel;
    /// CL_INVALID_VALUE where a non-zero pitch is too small (or, for `strict` — commands —
    /// a slice pitch given for an image without slices).
    pub fn new(
        image_type: cl_mem_object_type,
        element: usize,
        region: [usize; 3],
        row: usize,
        slice: usize,
    ) -> CLResult<Pitches> {
        let min_row = region[0] * element;
        let row = if row == 0 { min_row } else { row };
        check(row >= min_row, CL_INVALID_VALUE)?;
        let min_slice = match image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
            CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D => row * region[1],
            _ => 0,
        };
        check(
            Pitches::has_slices(image_type) || slice == 0,
            CL_INVALID_VALUE,
        )?;
        let slice = if slice == 0 { min_slice } else { slice };
        check(slice >= min_slice, CL_INVALID_VALUE)?;
        Ok(Pitches { row, slice })
    }

    /// Whether images of this type have slices (a slice pitch).
    fn has_slices(image_type: cl_mem_object_type) -> bool {
        matches!(
            image_type,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D
        )
    }

    /// The byte offset of row `y`, slice `z` of a region of `image_type`.
    fn at(&self, image_type: cl_mem_object_type, y: usize, z: usize) -> usize {
        if image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            y * self.slice
        } else {
            y * self.row + z * self.slice
        }
    }
}

/// Calls `f(host offset, packed offset, bytes)` for every row of `region` laid out at
/// `pitches` in host memory and tightly packed.
fn rows(
    image_type: cl_mem_object_type,
    element: usize,
    region: [usize; 3],
    pitches: Pitches,
    mut f: impl FnMut(usize, usize, usize),
) {
    let len = region[0] * element;
    let mut packed = 0;
    for z in 0..region[2] {
        for y in 0..region[1] {
            f(pitches.at(image_type, y, z), packed, len);
            packed += len;
        }
    }
}

impl Mem {
    pub fn image(&self) -> CLResult<&ImageInfo> {
        match &self.kind {
            MemKind::Image { info, .. } => Ok(info),
            _ => Err(ClError(CL_INVALID_MEM_OBJECT)),
        }
    }

    /// clCreateImage of a 2D image from the 2D image `original`: the same texels read as
    /// `format` (its sRGB / linear twin, or the same format).
    pub fn new_image_view(
        original: &Arc<Mem>,
        flags: cl_mem_flags,
        format: Format,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let info = original.image()?;
        let Store::Image(images) = &info.store else {
            return Err(ClError(CL_INVALID_IMAGE_DESCRIPTOR));
        };
        let (texel, storage) = (format.texel, format.writable());
        let view = VkImage::view_of(images.first(), texel, storage)?;
        let of = original.clone();
        let views = PerDevice::new(images.devices().to_vec(), view, move |d| {
            Ok(VkImage::view_of(&vk_image(&of, d)?, texel, storage)?)
        });
        let info = ImageInfo {
            format,
            desc: info.desc,
            store: Store::Image(views),
            copies: None,
            backed: info.backed,
        };
        Ok(Mem::new_view(
            original,
            flags,
            original.size,
            info,
            properties,
        ))
    }

    /// clCreateImage; `buffer` is the buffer of a 1D buffer image (or of a 2D image from a
    /// buffer).
    ///
    /// # Safety
    /// With COPY_HOST_PTR or USE_HOST_PTR, `host_ptr` holds the image at `desc`'s pitches;
    /// with USE_HOST_PTR it stays valid for the image's life (the spec's contract).
    pub unsafe fn new_image(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        format: Format,
        desc: Desc,
        host_ptr: *mut c_void,
        buffer: Option<Arc<Mem>>,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let devices = super::memory::vk_devices(context)?;
        let device = devices[0].clone();
        let element = format.element_size();
        let dims = desc.dims();
        let pitches = Pitches::new(
            desc.image_type,
            element,
            dims,
            desc.row_pitch,
            desc.slice_pitch,
        )?;
        let packed = dims.iter().product::<usize>() * element;
        let reported = desc.reported(pitches.row, pitches.slice);
        let use_host = flags & CL_MEM_USE_HOST_PTR != 0;
        if let Some(buffer) = buffer
            .as_ref()
            .filter(|_| desc.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER)
        {
            let (texel, offset, size) = (format.texel, buffer.offset, packed as u64);
            let view = TexelView::new(&device, buffer.storage()?, offset, texel, size)?;
            let of = buffer.clone();
            let views = PerDevice::new(devices, view, move |d| {
                Ok(TexelView::new(d, of.storage_on(d)?, offset, texel, size)?)
            });
            let info = ImageInfo {
                format,
                desc: reported,
                store: Store::Texels(views),
                copies: None,
                backed: false,
            };
            return Ok(Mem::new_view(buffer, flags, packed, info, properties));
        }
        let data = (flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR) != 0).then(|| {
            let mut data = vec![0u8; packed];
            rows(desc.image_type, element, dims, pitches, |host, at, len| {
                // SAFETY: the application's memory holds the image at these pitches (the
                // caller's contract).
                let src =
                    unsafe { std::slice::from_raw_parts((host_ptr as *const u8).add(host), len) };
                data[at..at + len].copy_from_slice(src);
            });
            data
        });
        let arrayed = crate::vk::image::arrayed(desc.image_type);
        let [w, h, d] = dims;
        let extent = match desc.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [w, 1, 1],
            CL_MEM_OBJECT_IMAGE2D_ARRAY => [w, h, 1],
            _ => [w, h, d],
        };
        // A storage view where kernels may write (or read_write) it; the storage usage also
        // where another view of the image may be written (a 2D image from this one).
        let writable = |f: &Format| {
            let rw = Use {
                read: true,
                write: true,
            };
            context.devices[0].supports(f, desc.image_type, rw)
        };
        let storage = writable(&format);
        let shape = ImageShape {
            image_type: desc.image_type,
            extent: extent.map(|x| x as u32),
            layers: if arrayed { desc.array_size as u32 } else { 1 },
            texel: format.texel,
            storage,
            storage_usage: storage || format.twin().is_some_and(|t| writable(&t)),
        };
        let image = VkImage::new(&device, shape, data.as_deref())?;
        // Per device: an image made from a buffer takes its texels from the buffer there;
        // another is tracked by `residence` where the context's devices can migrate data.
        let copies = match buffer {
            Some(_) => None,
            None => super::memory::image_copies(context, packed, data.is_some())?,
        };
        let devices = match (&buffer, &copies) {
            (Some(_), _) => devices,
            (None, Some(c)) => c.devices().to_vec(),
            (None, None) => vec![device],
        };
        let backing = buffer.clone();
        let images = PerDevice::new(devices, image, move |d| {
            if let Some(b) = &backing {
                // Its texels come from the buffer there.
                b.storage_on(d)?;
            }
            Ok(VkImage::new(d, shape, None)?)
        });
        let info = ImageInfo {
            format,
            desc: reported,
            store: Store::Image(images),
            copies,
            backed: buffer.is_some(),
        };
        if let Some(buffer) = &buffer {
            // A 2D image from a buffer: rows of row_pitch bytes.
            let size = pitches.row * dims[1];
            return Ok(Mem::new_view(buffer, flags, size, info, properties));
        }
        let host_ptr = if use_host { host_ptr as usize } else { 0 };
        Ok(Mem::new_image_object(
            context, flags, packed, host_ptr, info, properties,
        ))
    }
}

/// Copies a region's rows between the application's memory at `host` (laid out at `pitches`)
/// and tightly packed bytes at `packed`: into `packed` when `pack`, else out of it.
///
/// # Safety
/// `host` holds the region at `pitches`, `packed` the packed region; the one written is
/// writable.
unsafe fn repack(
    info: &ImageInfo,
    region: [usize; 3],
    pitches: Pitches,
    host: *mut u8,
    packed: *mut u8,
    pack: bool,
) {
    let element = info.format.element_size();
    rows(
        info.desc.image_type,
        element,
        region,
        pitches,
        |h, p, len| {
            // SAFETY: in bounds of both (the caller's contract).
            unsafe {
                if pack {
                    std::ptr::copy_nonoverlapping(host.add(h), packed.add(p), len)
                } else {
                    std::ptr::copy_nonoverlapping(packed.add(p), host.add(h), len)
                }
            }
        },
    );
}

/// The pitches of the whole image in the application's memory (CL_MEM_USE_HOST_PTR).
pub(super) fn host_pitches(info: &ImageInfo) -> Pitches {
    Pitches {
        row: info.desc.row_pitch,
        slice: info.desc.slice_pitch,
    }
}

/// The byte offset of texel `origin` in the application's memory (CL_MEM_USE_HOST_PTR).
pub(super) fn host_offset(info: &ImageInfo, origin: [usize; 3]) -> usize {
    let e = info.format.element_size();
    host_pitches(info).at(info.desc.image_type, origin[1], origin[2]) + origin[0] * e
}

pub(super) fn region_bytes(info: &ImageInfo, region: [usize; 3]) -> usize {
    region.iter().product::<usize>() * info.format.element_size()
}

/// The byte range of a region of a 1D buffer image in its buffer.
fn texel_range(info: &ImageInfo, origin: [usize; 3], region: [usize; 3]) -> (usize, usize) {
    let e = info.format.element_size();
    (origin[0] * e, region[0] * e)
}

/// The Vulkan image of an image on `device`, made there at its first use
/// (CL_MEM_OBJECT_ALLOCATION_FAILURE where the image cannot be on that device of the context,
/// CL_INVALID_MEM_OBJECT for 1D buffer images, which have none).
pub(super) fn vk_image(mem: &Mem, device: &Arc<VkDevice>) -> CLResult<Arc<VkImage>> {
    match &mem.image()?.store {
        Store::Image(images) => images.on(device).cloned(),
        Store::Texels(_) => Err(ClError(CL_INVALID_MEM_OBJECT)),
    }
}

/// The image whose Vulkan images hold `mem`'s texels and track them (`Mem::copies`): itself, or
/// the image it was made from; None for buffers and images whose texels are a buffer's.
pub(super) fn texel_owner(mem: &Arc<Mem>) -> Option<&Arc<Mem>> {
    match &mem.kind {
        MemKind::Image { parent: None, .. } => Some(mem),
        MemKind::Image {
            parent: Some(p), ..
        } if p.is_image() => Some(p),
        _ => None,
    }
}

/// The texels of an image with a Vulkan image as a command uses them, for `residence` (all
/// of them: its own, or its buffer's bytes for an image made from a buffer).
fn texel_use(mem: &Arc<Mem>, access: Access) -> Vec<residence::Use<'_>> {
    match mem.copies() {
        Some(_) => vec![residence::Use::whole(mem, access)],
        None => vec![],
    }
}

/// The copy between a buffer-backed image and its buffer (the whole image, at the image's row
/// pitch); None for other images.
fn backing<'a>(mem: &'a Mem, image: &VkImage) -> Option<(&'a Arc<Buffer>, TexelCopy)> {
    let info = mem.image().ok().filter(|i| i.backed)?;
    let texels = info.desc.row_pitch / info.format.element_size();
    let whole = image.region([0; 3], image.cl_region());
    let copy = whole.at(mem.offset).with_row_length(texels as u32);
    Some((mem.storage_on(&image.device).ok()?, copy))
}

/// Before a command uses the Vulkan image of a buffer-backed image: the buffer's texels into it.
pub(super) fn sync_in(rec: &mut Recorder, mem: &Mem, image: &Arc<VkImage>) {
    if let Some((buffer, copy)) = backing(mem, image) {
        rec.buffer_to_image(buffer, image, &[copy]);
    }
}

/// After a command wrote the Vulkan image of a buffer-backed image: its texels into the buffer.
pub(super) fn sync_out(rec: &mut Recorder, mem: &Mem, image: &Arc<VkImage>) {
    if let Some((buffer, copy)) = backing(mem, image) {
        rec.image_to_buffer(image, buffer, &[copy]);
    }
}

/// clEnqueueReadImage (and the download of a region into any host memory, as `command`).
#[allow(clippy::too_many_arguments)]
pub fn read(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    origin: [usize; 3],
    region: [usize; 3],
    pitches: Pitches,
    dst: HostPtr,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let info = mem.image()?;
    if let Store::Texels(_) = info.store {
        let (offset, size) = texel_range(info, origin, region);
        return transfer::download_linear(queue, command, mem, offset, size, dst, blocking, wait);
    }
    let image = vk_image(mem, &queue.vk)?;
    let uses = texel_use(mem, Access::Read);
    let wait = &*residence::before(queue, &uses, wait)?;
    let stage = Arc::new(queue.staging.acquire(
        Placement::Readback,
        region_bytes(info, region),
        None,
    )?);
    let vk_region = image.region(origin, region).at(0);
    let (s, m) = (stage.clone(), mem.clone());
    let deliver: HostPart = Box::new(move || {
        let src = s.host().expect("staging memory is host-visible").as_ptr();
        // SAFETY: the copy into the staging buffer has completed; dst holds the region at
        // these pitches (the spec's contract).
        unsafe { repack(m.image()?, region, pitches, dst.get(), src, false) };
        Ok(())
    });
    queue.enqueue(command, wait, |rec| {
        sync_in(rec, mem, &image);
        rec.image_to_buffer(&image, &stage, &[vk_region]);
        Ok(Recorded {
            host: Some(deliver),
            keep: vec![mem.clone()],
        })
    })
}

/// clEnqueueWriteImage (and the upload of a region from any host memory).
///
/// # Safety
/// `src` holds the region at `pitches`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn write(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    origin: [usize; 3],
    region: [usize; 3],
    pitches: Pitches,
    src: *const u8,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let info = mem.image()?;
    if let Store::Texels(_) = info.store {
        let (offset, size) = texel_range(info, origin, region);
        // SAFETY: src holds `size` bytes (a 1D region).
        let data = unsafe { std::slice::from_raw_parts(src, size) };
        return transfer::upload_linear(queue, command, mem, offset, data, blocking, wait);
    }
    let stage = transfer::stage(queue, Placement::Upload, region_bytes(info, region))?;
    let at = stage
        .host()
        .expect("staging memory is host-visible")
        .as_ptr();
    // SAFETY: the staging buffer holds the packed region; src holds it at `pitches`.
    unsafe { repack(info, region, pitches, src as *mut u8, at, true) };
    upload_staged(queue, command, mem, origin, region, stage, wait)
}

/// Copies the region of the image into `stage`, packed.
pub(super) fn read_into(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    origin: [usize; 3],
    region: [usize; 3],
    stage: &Arc<Lease>,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let image = vk_image(mem, &queue.vk)?;
    let vk_region = image.region(origin, region).at(0);
    let wait = &*residence::before(queue, &texel_use(mem, Access::Read), wait)?;
    queue.enqueue(command, wait, |rec| {
        sync_in(rec, mem, &image);
        rec.image_to_buffer(&image, stage, &[vk_region]);
        Ok(Recorded {
            host: None,
            keep: vec![mem.clone()],
        })
    })
}

/// Copies the packed region in `stage` into the image.
pub(super) fn upload_staged(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    origin: [usize; 3],
    region: [usize; 3],
    stage: Arc<Lease>,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let image = vk_image(mem, &queue.vk)?;
    residence::around(queue, &texel_use(mem, Access::Write), wait, |wait| {
        queue.enqueue(command, wait, |rec| {
            record_upload(rec, mem, &image, &stage, origin, region);
            Ok(Recorded {
                host: None,
                keep: vec![mem.clone()],
            })
        })
    })
}

/// Records the copy of the packed region in `stage` into the image.
fn record_upload(
    rec: &mut Recorder,
    mem: &Mem,
    image: &Arc<VkImage>,
    stage: &Arc<Lease>,
    origin: [usize; 3],
    region: [usize; 3],
) {
    sync_in(rec, mem, image);
    rec.buffer_to_image(stage, image, &[image.region(origin, region).at(0)]);
    sync_out(rec, mem, image);
}

/// clCommandFillImageKHR: the filled region, packed, in staging memory kept with the
/// recording (a 1D buffer image's: a fill of its buffer).
pub fn record_fill(
    rec: &mut Recorder,
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    color: [u32; 4],
    origin: [usize; 3],
    region: [usize; 3],
) -> CLResult<()> {
    let info = mem.image()?;
    let texel = info.format.pack(color);
    if let Store::Texels(_) = info.store {
        let (offset, size) = texel_range(info, origin, region);
        return transfer::record_fill(rec, &queue.vk, mem, &texel, offset, size);
    }
    let data = texel.repeat(region.iter().product());
    let stage = transfer::stage(queue, Placement::Upload, data.len())?;
    let at = stage.host().expect("staging memory is host-visible");
    // SAFETY: the staging buffer is new to this command and holds the packed region.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), at.as_ptr(), data.len()) };
    record_upload(rec, mem, &vk_image(mem, &queue.vk)?, &stage, origin, region);
    Ok(())
}

/// clEnqueueFillImage: `color` is the fill color's 16 bytes (four floats, ints or uints).
pub fn fill(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    color: [u32; 4],
    origin: [usize; 3],
    region: [usize; 3],
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let info = mem.image()?;
    let texel = info.format.pack(color);
    let data = texel.repeat(region.iter().product());
    let pitches = Pitches::new(info.desc.image_type, texel.len(), region, 0, 0)?;
    // SAFETY: `data` is the region, tightly packed (the pitches just computed).
    unsafe {
        write(
            queue,
            CL_COMMAND_FILL_IMAGE,
            mem,
            origin,
            region,
            pitches,
            data.as_ptr(),
            false,
            wait,
        )
    }
}

/// Where a region of an image or buffer is, for copies between them.
enum Side {
    Image(Arc<VkImage>, [usize; 3]),
    /// A buffer (or a 1D buffer image's buffer) and the byte offset.
    Bytes(Arc<Buffer>, u64),
}

fn side(queue: &Queue, mem: &Arc<Mem>, origin: [usize; 3], buffer_offset: usize) -> CLResult<Side> {
    match mem.image().ok().map(|i| &i.store) {
        Some(Store::Image(_)) => Ok(Side::Image(vk_image(mem, &queue.vk)?, origin)),
        Some(Store::Texels(_)) => {
            let e = mem.image()?.format.element_size();
            Ok(Side::Bytes(
                mem.storage_on(&queue.vk)?.clone(),
                mem.at(origin[0] * e),
            ))
        }
        None => Ok(Side::Bytes(
            mem.storage_on(&queue.vk)?.clone(),
            mem.at(buffer_offset),
        )),
    }
}

/// clEnqueueCopyImage, clEnqueueCopyImageToBuffer and clEnqueueCopyBufferToImage: `region`
/// of `src` at `src_origin` to `dst` at `dst_origin`, counted in the format and type of the
/// image among them; a buffer's side starts at byte `buffer_offset`.
#[allow(clippy::too_many_arguments)]
pub fn copy(
    queue: &Arc<Queue>,
    command: cl_command_type,
    src: &Arc<Mem>,
    src_origin: [usize; 3],
    dst: &Arc<Mem>,
    dst_origin: [usize; 3],
    region: [usize; 3],
    buffer_offset: usize,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let copy = ImageCopy::new(
        queue,
        src,
        src_origin,
        dst,
        dst_origin,
        region,
        buffer_offset,
    )?;
    let side = |mem, access| copy_use(mem, buffer_offset, copy.bytes, access);
    let uses = [side(src, Access::Read), side(dst, Access::Write)];
    residence::around(queue, &uses, wait, |wait| {
        queue.enqueue(command, wait, |rec| Ok(copy.record(rec)))
    })
}

/// What an image copy uses of `mem`, for `residence`: an image, all of it; a buffer, `bytes`
/// from `offset`.
fn copy_use(mem: &Arc<Mem>, offset: usize, bytes: u64, access: Access) -> residence::Use<'_> {
    match mem.is_image() {
        true => residence::Use::whole(mem, access),
        false => residence::Use::bytes(mem, offset, bytes as usize, access),
    }
}

/// A copy between images, or an image and a buffer, ready to record.
pub struct ImageCopy<'a> {
    src: &'a Arc<Mem>,
    dst: &'a Arc<Mem>,
    from: Side,
    to: Side,
    region: [usize; 3],
    bytes: u64,
    stage: Option<Arc<Lease>>,
}

impl<'a> ImageCopy<'a> {
    /// The arguments as `copy`'s.
    pub fn new(
        queue: &Queue,
        src: &'a Arc<Mem>,
        src_origin: [usize; 3],
        dst: &'a Arc<Mem>,
        dst_origin: [usize; 3],
        region: [usize; 3],
        buffer_offset: usize,
    ) -> CLResult<ImageCopy<'a>> {
        let info = src.image().or(dst.image())?;
        let element = info.format.element_size();
        let bytes = region_bytes(info, region) as u64;
        let from = side(queue, src, src_origin, buffer_offset)?;
        let to = side(queue, dst, dst_origin, buffer_offset)?;
        // Vulkan copies between buffers and images need buffer offsets that are multiples of
        // the texel size: others go through a staging buffer.
        let aligned = |s: &Side| !matches!(s, Side::Bytes(_, off) if off % element as u64 != 0);
        let stage = if aligned(&from) && aligned(&to) {
            None
        } else {
            Some(Arc::new(queue.staging.acquire(
                Placement::Upload,
                bytes as usize,
                None,
            )?))
        };
        Ok(ImageCopy {
            src,
            dst,
            from,
            to,
            region,
            bytes,
            stage,
        })
    }

    pub fn record(self, rec: &mut Recorder) -> Recorded {
        let (region, bytes) = (self.region, self.bytes);
        for (mem, side) in [(self.src, &self.from), (self.dst, &self.to)] {
            if let Side::Image(image, _) = side {
                sync_in(rec, mem, image);
            }
        }
        match (&self.from, &self.to) {
            (Side::Image(a, ao), Side::Image(b, bo)) => {
                for r in a.copies_to(*ao, b, *bo, region) {
                    rec.copy_image(a, b, r);
                }
            }
            (Side::Image(a, ao), Side::Bytes(buf, off)) => {
                let r = a.region(*ao, region);
                match &self.stage {
                    None => rec.image_to_buffer(a, buf, &[r.at(*off)]),
                    Some(s) => {
                        rec.image_to_buffer(a, s, &[r.at(0)]);
                        rec.copy_buffer(s, 0, buf, *off, bytes);
                    }
                }
            }
            (Side::Bytes(buf, off), Side::Image(b, bo)) => {
                let r = b.region(*bo, region);
                match &self.stage {
                    None => rec.buffer_to_image(buf, b, &[r.at(*off)]),
                    Some(s) => {
                        rec.copy_buffer(buf, *off, s, 0, bytes);
                        rec.buffer_to_image(s, b, &[r.at(0)]);
                    }
                }
            }
            (Side::Bytes(a, ao), Side::Bytes(b, bo)) => rec.copy_buffer(a, *ao, b, *bo, bytes),
        }
        if let Side::Image(image, _) = &self.to {
            sync_out(rec, self.dst, image);
        }
        Recorded {
            host: None,
            keep: vec![self.src.clone(), self.dst.clone()],
        }
    }
}

/// clEnqueueMapImage: the host address, the row and slice pitches there, and the event (the
/// map itself is `transfer::map`'s, as for buffers).
#[allow(clippy::too_many_arguments)]
pub fn map(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    flags: cl_map_flags,
    origin: [usize; 3],
    region: [usize; 3],
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<(*mut c_void, Pitches, Arc<Event>)> {
    let info = mem.image()?;
    let mapped = match info.store {
        // A 1D buffer image: bytes of its buffer.
        Store::Texels(_) => {
            let (offset, size) = texel_range(info, origin, region);
            Mapped::Bytes { offset, size }
        }
        Store::Image(_) => Mapped::Texels { origin, region },
    };
    let pitches = transfer::map_pitches(mem, mapped)?;
    let command = CL_COMMAND_MAP_IMAGE;
    let (ptr, event) = transfer::map(queue, command, mem, flags, mapped, blocking, wait)?;
    Ok((ptr, pitches, event))
}
