//! Images, samplers, and the image commands (sections 5.3 and 5.13 of the spec).

use super::info::{array, v, write};
use super::memory::{
    check_flags, check_map_access, check_map_flags, finish, finish_write, NO_HOST_READ,
    NO_HOST_WRITE,
};
use super::util::{obj, property_list, wait_list};
use crate::cl::*;
use crate::core::context::Context;
use crate::core::event::Event;
use crate::core::format::{valid, Format, Use};
use crate::core::image::{self, Desc, Pitches};
use crate::core::memory::Mem;
use crate::core::object::{handle, register, release, retain};
use crate::core::queue::Queue;
use crate::core::sampler::Sampler;
use crate::core::transfer::HostPtr;
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

const IMAGE_TYPES: [cl_mem_object_type; 6] = [
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
];

const ACCESS: cl_mem_flags = CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY;
const HOST_ACCESS: cl_mem_flags =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;

/// Whether every device of the context that supports images supports `format` for
/// `image_type` with `flags` (and at least one device supports images).
fn supported(
    ctx: &Context,
    format: &Format,
    image_type: cl_mem_object_type,
    flags: cl_mem_flags,
) -> bool {
    let devices: Vec<_> = ctx.devices.iter().filter(|d| d.has_images()).collect();
    !devices.is_empty()
        && devices
            .iter()
            .all(|d| d.supports(format, image_type, Use::of(flags)))
}

/// clCreateImage's checks, in the spec's terms, then the image.
///
/// # Safety
/// `format` and `desc` are NULL or point to the structures their types name; `host_ptr`
/// holds the image as `desc` lays it out where `flags` name it (the spec's contracts).
unsafe fn new_image(
    context: cl_context,
    properties: Vec<cl_mem_properties>,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let ctx: Arc<Context> = obj(context)?;
    check(properties.len() <= 1, CL_INVALID_PROPERTY)?;
    check_flags(flags)?;
    check(!format.is_null(), CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)?;
    // SAFETY: not NULL; the application passes a cl_image_format.
    let f = unsafe { *format };
    let (order, data_type) = (f.image_channel_order, f.image_channel_data_type);
    check(valid(order, data_type), CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)?;
    check(!desc.is_null(), CL_INVALID_IMAGE_DESCRIPTOR)?;
    // SAFETY: not NULL; the application passes a cl_image_desc.
    let d = unsafe { *desc };
    let ty = d.image_type;
    check(IMAGE_TYPES.contains(&ty), CL_INVALID_IMAGE_DESCRIPTOR)?;
    check(
        d.num_mip_levels == 0 && d.num_samples == 0,
        CL_INVALID_IMAGE_DESCRIPTOR,
    )?;
    check(
        ctx.devices.iter().any(|d| d.has_images()),
        CL_INVALID_OPERATION,
    )?;
    let desc = Desc {
        image_type: ty,
        width: d.image_width,
        height: d.image_height,
        depth: d.image_depth,
        array_size: d.image_array_size,
        row_pitch: d.image_row_pitch,
        slice_pitch: d.image_slice_pitch,
    };
    let dims = desc.dims();
    check(!dims.contains(&0), CL_INVALID_IMAGE_DESCRIPTOR)?;
    let buffer = desc_buffer(&ctx, &d)?;
    let Some(fmt) = Format::new(order, data_type) else {
        return Err(ClError(CL_IMAGE_FORMAT_NOT_SUPPORTED));
    };
    let element = fmt.element_size();
    let original = buffer.as_ref().filter(|b| b.is_image());
    check_pitches(&d, &fmt, dims, buffer.as_ref(), host_ptr)?;
    let mut flags = inherited_flags(flags, buffer.as_deref(), host_ptr)?;
    if flags & ACCESS == 0 {
        flags |= CL_MEM_READ_WRITE;
    }
    check(
        supported(&ctx, &fmt, ty, flags),
        CL_IMAGE_FORMAT_NOT_SUPPORTED,
    )?;
    check_size(&ctx, ty, dims, element)?;
    if let Some(b) = buffer
        .as_ref()
        .filter(|_| ty == CL_MEM_OBJECT_IMAGE1D_BUFFER)
    {
        check(dims[0] * element <= b.size, CL_INVALID_IMAGE_DESCRIPTOR)?;
    }
    let mem = match original {
        Some(o) => Mem::new_image_view(o, flags, fmt, properties)?,
        // SAFETY: host_ptr holds the image at the pitches of `desc` where the flags name it
        // (the spec's contract; NULL with those flags was refused above).
        None => unsafe { Mem::new_image(&ctx, flags, fmt, desc, host_ptr, buffer, properties) }?,
    };
    Ok(register(mem) as cl_mem)
}

/// The memory object of a description: a buffer for 1D buffer images (required) and 2D
/// images (cl_khr_image2d_from_buffer), or a 2D image for a 2D image over the same texels.
fn desc_buffer(ctx: &Arc<Context>, d: &cl_image_desc) -> CLResult<Option<Arc<Mem>>> {
    let ty = d.image_type;
    if ty == CL_MEM_OBJECT_IMAGE1D_BUFFER
        || (ty == CL_MEM_OBJECT_IMAGE2D && !d.mem_object.is_null())
    {
        check(!d.mem_object.is_null(), CL_INVALID_IMAGE_DESCRIPTOR)?;
        let b: Arc<Mem> = obj(d.mem_object).map_err(|_| ClError(CL_INVALID_IMAGE_DESCRIPTOR))?;
        let from_image = ty == CL_MEM_OBJECT_IMAGE2D && b.mem_type() == CL_MEM_OBJECT_IMAGE2D;
        check(
            b.mem_type() == CL_MEM_OBJECT_BUFFER || from_image,
            CL_INVALID_IMAGE_DESCRIPTOR,
        )?;
        check(Arc::ptr_eq(&b.context, ctx), CL_INVALID_IMAGE_DESCRIPTOR)?;
        Ok(Some(b))
    } else {
        check(d.mem_object.is_null(), CL_INVALID_IMAGE_DESCRIPTOR)?;
        Ok(None)
    }
}

/// The description's pitches and sizes against the image it views or the memory it is
/// created from.
fn check_pitches(
    d: &cl_image_desc,
    fmt: &Format,
    dims: [usize; 3],
    buffer: Option<&Arc<Mem>>,
    host_ptr: *mut c_void,
) -> CLResult<()> {
    // Pitches: only with a host pointer; multiples of the element (row) and the row (slice).
    let element = fmt.element_size();
    let ty = d.image_type;
    let original = buffer.filter(|b| b.is_image());
    if let Some(o) = original {
        // A 2D image from a 2D image: the same size and row pitch, the same data type, and
        // the same channel order or its sRGB / linear twin (CL_IMAGE_FORMAT_DESCRIPTOR else).
        let oi = o.image()?;
        check(
            oi.format == *fmt || oi.format.twin() == Some(*fmt),
            CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
        )?;
        let od = oi.desc;
        check(
            d.image_width == od.width
                && d.image_height == od.height
                && (d.image_row_pitch == 0 || d.image_row_pitch == od.row_pitch)
                && d.image_slice_pitch == 0,
            CL_INVALID_IMAGE_DESCRIPTOR,
        )?;
    } else if let Some(b) = buffer.filter(|_| ty == CL_MEM_OBJECT_IMAGE2D) {
        // A 2D image from a buffer: rows of image_row_pitch bytes (a multiple of
        // CL_DEVICE_IMAGE_PITCH_ALIGNMENT, 1 pixel), all inside the buffer.
        let row = d.image_row_pitch;
        check(
            row == 0 || (row >= dims[0] * element && row % element == 0),
            CL_INVALID_IMAGE_DESCRIPTOR,
        )?;
        let row = if row == 0 { dims[0] * element } else { row };
        check(d.image_slice_pitch == 0, CL_INVALID_IMAGE_DESCRIPTOR)?;
        check(row * dims[1] <= b.size, CL_INVALID_IMAGE_DESCRIPTOR)?;
    } else if host_ptr.is_null() {
        check(
            d.image_row_pitch == 0 && d.image_slice_pitch == 0,
            CL_INVALID_IMAGE_DESCRIPTOR,
        )?;
    } else {
        let row = d.image_row_pitch;
        check(
            row == 0 || (row >= dims[0] * element && row % element == 0),
            CL_INVALID_IMAGE_DESCRIPTOR,
        )?;
        let row = if row == 0 { dims[0] * element } else { row };
        let slice = d.image_slice_pitch;
        let min_slice = match ty {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
            CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D => row * dims[1],
            _ => 0,
        };
        check(
            slice == 0 || (min_slice > 0 && slice >= min_slice && slice % row == 0),
            CL_INVALID_IMAGE_DESCRIPTOR,
        )?;
    }
    Ok(())
}

/// The flags of an image, completed from its buffer's (an image of a buffer inherits what
/// the buffer says where its flags leave it open, and may not widen it); the host pointer
/// checked against them.
fn inherited_flags(
    mut flags: cl_mem_flags,
    buffer: Option<&Mem>,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem_flags> {
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    if let Some(b) = buffer {
        let bf = b.flags;
        check(
            flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) == 0,
            CL_INVALID_VALUE,
        )?;
        if flags & ACCESS == 0 {
            flags |= bf & ACCESS;
        }
        let widens = (bf & CL_MEM_WRITE_ONLY != 0
            && flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY) != 0)
            || (bf & CL_MEM_READ_ONLY != 0 && flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY) != 0);
        check(!widens, CL_INVALID_VALUE)?;
        if flags & HOST_ACCESS == 0 {
            flags |= bf & HOST_ACCESS;
        }
        let host_widens = (bf & CL_MEM_HOST_WRITE_ONLY != 0 && flags & CL_MEM_HOST_READ_ONLY != 0)
            || (bf & CL_MEM_HOST_READ_ONLY != 0 && flags & CL_MEM_HOST_WRITE_ONLY != 0)
            || (bf & CL_MEM_HOST_NO_ACCESS != 0
                && flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY) != 0);
        check(!host_widens, CL_INVALID_VALUE)?;
        check(host_ptr.is_null(), CL_INVALID_HOST_PTR)?;
    } else {
        check(wants_ptr != host_ptr.is_null(), CL_INVALID_HOST_PTR)?;
    }
    Ok(flags)
}

/// The image's size against every device's limits (CL_INVALID_IMAGE_SIZE).
fn check_size(
    ctx: &Context,
    ty: cl_mem_object_type,
    dims: [usize; 3],
    element: usize,
) -> CLResult<()> {
    for dev in ctx.devices.iter().filter(|d| d.has_images()) {
        let l = dev.image_limits();
        let fits = match ty {
            CL_MEM_OBJECT_IMAGE1D_BUFFER => dims[0] <= l.max_buffer,
            CL_MEM_OBJECT_IMAGE3D => dims.iter().all(|&x| x <= l.max_3d),
            CL_MEM_OBJECT_IMAGE1D_ARRAY => dims[0] <= l.max_2d && dims[1] <= l.max_array,
            CL_MEM_OBJECT_IMAGE2D_ARRAY => {
                dims[0] <= l.max_2d && dims[1] <= l.max_2d && dims[2] <= l.max_array
            }
            _ => dims[0] <= l.max_2d && dims[1] <= l.max_2d,
        };
        check(fits, CL_INVALID_IMAGE_SIZE)?;
        let bytes = dims.iter().product::<usize>() as u64 * element as u64;
        check(bytes <= dev.max_mem_alloc_size(), CL_INVALID_IMAGE_SIZE)?;
    }
    Ok(())
}

/// The image behind a handle (CL_INVALID_MEM_OBJECT for other memory objects).
fn image_obj(mem: cl_mem) -> CLResult<Arc<Mem>> {
    let m: Arc<Mem> = obj(mem)?;
    check(m.is_image(), CL_INVALID_MEM_OBJECT)?;
    Ok(m)
}

/// The queue and the image, checked to be of one context, on a device with images.
fn queue_and_image(queue: cl_command_queue, mem: cl_mem) -> CLResult<(Arc<Queue>, Arc<Mem>)> {
    let q: Arc<Queue> = obj(queue)?;
    let m = image_on(&q, mem)?;
    Ok((q, m))
}

/// An image a command on `q` may use (a queue's or a command-buffer's).
fn image_on(q: &Queue, mem: cl_mem) -> CLResult<Arc<Mem>> {
    let m = image_obj(mem)?;
    check(Arc::ptr_eq(&q.context, &m.context), CL_INVALID_CONTEXT)?;
    check(q.device.has_images(), CL_INVALID_OPERATION)?;
    Ok(m)
}

/// What an image copy names, checked: source, its origin, destination, its origin, region.
pub(super) type ImageCopyArgs = (Arc<Mem>, [usize; 3], Arc<Mem>, [usize; 3], [usize; 3]);

/// clEnqueueCopyImage's arguments on `q`, checked.
///
/// # Safety
/// The origins and region are NULL or point to 3 values.
pub(super) unsafe fn copy_image_args(
    q: &Queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
) -> CLResult<ImageCopyArgs> {
    let (src, dst) = (image_on(q, src_image)?, image_on(q, dst_image)?);
    check(
        src.image()?.format == dst.image()?.format,
        CL_IMAGE_FORMAT_MISMATCH,
    )?;
    let (src_o, r) = origin_region(&src, src_origin, region)?;
    let (dst_o, _) = origin_region(&dst, dst_origin, region)?;
    check(
        !Arc::ptr_eq(&src, &dst) || !overlap(src_o, dst_o, r),
        CL_MEM_COPY_OVERLAP,
    )?;
    Ok((src, src_o, dst, dst_o, r))
}

/// clEnqueueCopyImageToBuffer's (`to_buffer`) or clEnqueueCopyBufferToImage's arguments on
/// `q`, checked: the image, its origin and the region, the buffer at `offset`.
///
/// # Safety
/// The origin and region are NULL or point to 3 values.
pub(super) unsafe fn image_buffer_args(
    q: &Queue,
    image: cl_mem,
    origin: *const usize,
    region: *const usize,
    buffer: cl_mem,
    offset: usize,
    to_buffer: bool,
) -> CLResult<ImageCopyArgs> {
    let m = image_on(q, image)?;
    let (o, r) = origin_region(&m, origin, region)?;
    let b = buffer_for(q, buffer, offset, region_bytes(&m, r)?)?;
    Ok(match to_buffer {
        true => (m, o, b, [0; 3], r),
        false => (b, [0; 3], m, o, r),
    })
}

/// clEnqueueFillImage's arguments on `q`, checked: the image, the color, origin and region.
///
/// # Safety
/// `fill_color` is NULL or points to 16 bytes; origin and region NULL or to 3 values.
pub(super) unsafe fn fill_image_args(
    q: &Queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
) -> CLResult<(Arc<Mem>, [u32; 4], [usize; 3], [usize; 3])> {
    let m = image_on(q, image)?;
    check(!fill_color.is_null(), CL_INVALID_VALUE)?;
    let (o, r) = origin_region(&m, origin, region)?;
    // SAFETY: the application passes a four-component color (16 bytes).
    let color = unsafe { *(fill_color as *const [u32; 4]) };
    Ok((m, color, o, r))
}

/// An origin and region from the application, checked against the image (CL_INVALID_VALUE):
/// non-zero, inside the image, and 1 (origin 0) in the dimensions its type lacks.
fn origin_region(
    m: &Mem,
    origin: *const usize,
    region: *const usize,
) -> CLResult<([usize; 3], [usize; 3])> {
    check(!origin.is_null() && !region.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: not NULL; the application passes three size_t each.
    let (o, r) = unsafe {
        (
            *(origin as *const [usize; 3]),
            *(region as *const [usize; 3]),
        )
    };
    let info = m.image()?;
    let dims = info.desc.dims();
    let used = match info.desc.image_type {
        CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => 1,
        CL_MEM_OBJECT_IMAGE2D | CL_MEM_OBJECT_IMAGE1D_ARRAY => 2,
        _ => 3,
    };
    for i in 0..3 {
        check(r[i] > 0, CL_INVALID_VALUE)?;
        if i >= used {
            check(o[i] == 0 && r[i] == 1, CL_INVALID_VALUE)?;
        }
        check(
            o[i].checked_add(r[i]).is_some_and(|end| end <= dims[i]),
            CL_INVALID_VALUE,
        )?;
    }
    Ok((o, r))
}

/// The checked arguments of clEnqueueReadImage / clEnqueueWriteImage.
struct HostTransfer {
    queue: Arc<Queue>,
    image: Arc<Mem>,
    origin: [usize; 3],
    region: [usize; 3],
    pitches: Pitches,
    wait: Vec<Arc<Event>>,
}

/// Checks a host transfer's arguments; `forbidden`: the host-access flags that refuse it
/// (CL_INVALID_OPERATION).
#[allow(clippy::too_many_arguments)]
fn host_transfer(
    queue: cl_command_queue,
    image: cl_mem,
    origin: *const usize,
    region: *const usize,
    [row_pitch, slice_pitch]: [usize; 2],
    ptr: *const c_void,
    (num_events, events): (cl_uint, *const cl_event),
    forbidden: cl_mem_flags,
) -> CLResult<HostTransfer> {
    let (q, m) = queue_and_image(queue, image)?;
    let (o, r) = origin_region(&m, origin, region)?;
    check(!ptr.is_null(), CL_INVALID_VALUE)?;
    let info = m.image()?;
    let element = info.format.element_size();
    let pitches = Pitches::new(info.desc.image_type, element, r, row_pitch, slice_pitch)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    check(m.flags & forbidden == 0, CL_INVALID_OPERATION)?;
    Ok(HostTransfer {
        queue: q,
        image: m,
        origin: o,
        region: r,
        pitches,
        wait,
    })
}

/// Whether regions of one image overlap (CL_MEM_COPY_OVERLAP).
fn overlap(a: [usize; 3], b: [usize; 3], region: [usize; 3]) -> bool {
    (0..3).all(|i| a[i] < b[i] + region[i] && b[i] < a[i] + region[i])
}

/// A buffer of the queue's context for the image ↔ buffer copies, with room for `bytes` at
/// `offset`.
fn buffer_for(q: &Queue, mem: cl_mem, offset: usize, bytes: usize) -> CLResult<Arc<Mem>> {
    let b: Arc<Mem> = obj(mem)?;
    check(b.mem_type() == CL_MEM_OBJECT_BUFFER, CL_INVALID_MEM_OBJECT)?;
    check(Arc::ptr_eq(&q.context, &b.context), CL_INVALID_CONTEXT)?;
    b.check_device(&q.vk)?;
    b.check_range(offset, bytes)?;
    Ok(b)
}

fn region_bytes(m: &Mem, region: [usize; 3]) -> CLResult<usize> {
    Ok(region.iter().product::<usize>() * m.image()?.format.element_size())
}

#[entry(clGetSupportedImageFormats)]
unsafe fn get_supported_image_formats(
    context: cl_context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
    num_entries: cl_uint,
    image_formats: *mut cl_image_format,
    num_image_formats: *mut cl_uint,
) -> CLResult<()> {
    let ctx: Arc<Context> = obj(context)?;
    check_flags(flags)?;
    check(IMAGE_TYPES.contains(&image_type), CL_INVALID_VALUE)?;
    check(num_entries > 0 || image_formats.is_null(), CL_INVALID_VALUE)?;
    let flags = if flags & ACCESS == 0 {
        flags | CL_MEM_READ_WRITE
    } else {
        flags
    };
    let list: Vec<Format> = Format::all()
        .filter(|f| supported(&ctx, f, image_type, flags))
        .collect();
    if !image_formats.is_null() {
        for (i, f) in list.iter().take(num_entries as usize).enumerate() {
            // SAFETY: the application gives room for num_entries formats.
            unsafe { *image_formats.add(i) = f.cl() };
        }
    }
    if !num_image_formats.is_null() {
        // SAFETY: NULL or a cl_uint.
        unsafe { *num_image_formats = list.len() as cl_uint };
    }
    Ok(())
}

#[entry(clCreateImage)]
unsafe fn create_image(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    // SAFETY: the application's format, description and host pointer (the spec's contract).
    unsafe { new_image(context, vec![], flags, image_format, image_desc, host_ptr) }
}

#[entry(clCreateImageWithProperties)]
unsafe fn create_image_with_properties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    // SAFETY: properties is NULL or a 0-terminated list.
    let props = unsafe { property_list(properties) };
    // SAFETY: the application's format, description and host pointer (the spec's contract).
    unsafe { new_image(context, props, flags, image_format, image_desc, host_ptr) }
}

#[entry(clCreateImage2D)]
unsafe fn create_image2d(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_row_pitch: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    // "CL_INVALID_IMAGE_SIZE if image_width or image_height are 0".
    check(image_width > 0 && image_height > 0, CL_INVALID_IMAGE_SIZE)?;
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width,
        image_height,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        mem_object: std::ptr::null_mut(),
    };
    // SAFETY: the application's format, description and host pointer (the spec's contract).
    unsafe { new_image(context, vec![], flags, image_format, &desc, host_ptr) }
}

#[entry(clCreateImage3D)]
unsafe fn create_image3d(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_depth: usize,
    image_row_pitch: usize,
    image_slice_pitch: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    // "CL_INVALID_IMAGE_SIZE if image_width or image_height are 0 or image_depth <= 1".
    check(
        image_width > 0 && image_height > 0 && image_depth > 1,
        CL_INVALID_IMAGE_SIZE,
    )?;
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE3D,
        image_width,
        image_height,
        image_depth,
        image_array_size: 0,
        image_row_pitch,
        image_slice_pitch,
        num_mip_levels: 0,
        num_samples: 0,
        mem_object: std::ptr::null_mut(),
    };
    // SAFETY: the application's format, description and host pointer (the spec's contract).
    unsafe { new_image(context, vec![], flags, image_format, &desc, host_ptr) }
}

#[entry(clGetImageInfo, at_exit)]
unsafe fn get_image_info(
    image: cl_mem,
    param_name: cl_image_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let m = image_obj(image)?;
    let i = m.image()?;
    let value = match param_name {
        CL_IMAGE_FORMAT => v::<cl_image_format>(cl_image_format {
            image_channel_order: i.format.order,
            image_channel_data_type: i.format.data_type,
        }),
        CL_IMAGE_ELEMENT_SIZE => v::<usize>(i.format.element_size()),
        CL_IMAGE_ROW_PITCH => v::<usize>(i.desc.row_pitch),
        CL_IMAGE_SLICE_PITCH => v::<usize>(i.desc.slice_pitch),
        CL_IMAGE_WIDTH => v::<usize>(i.desc.width),
        CL_IMAGE_HEIGHT => v::<usize>(i.desc.height),
        CL_IMAGE_DEPTH => v::<usize>(i.desc.depth),
        CL_IMAGE_ARRAY_SIZE => v::<usize>(i.desc.array_size),
        CL_IMAGE_BUFFER => v::<cl_mem>(m.parent().map_or(std::ptr::null_mut(), handle) as cl_mem),
        CL_IMAGE_NUM_MIP_LEVELS | CL_IMAGE_NUM_SAMPLES => v::<cl_uint>(0u32),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clEnqueueReadImage)]
unsafe fn enqueue_read_image(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_read: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let t = host_transfer(
        command_queue,
        image,
        origin,
        region,
        [row_pitch, slice_pitch],
        ptr,
        (num_events_in_wait_list, event_wait_list),
        NO_HOST_READ,
    )?;
    let blocking = blocking_read != 0;
    let e = image::read(
        &t.queue,
        CL_COMMAND_READ_IMAGE,
        &t.image,
        t.origin,
        t.region,
        t.pitches,
        // SAFETY: the application's memory for the region, valid until the command completes
        // (the spec's contract for ptr).
        unsafe { HostPtr::new(ptr as *mut u8) },
        blocking,
        &t.wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, blocking, event) }
}

#[entry(clEnqueueWriteImage)]
unsafe fn enqueue_write_image(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_write: cl_bool,
    origin: *const usize,
    region: *const usize,
    input_row_pitch: usize,
    input_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let t = host_transfer(
        command_queue,
        image,
        origin,
        region,
        [input_row_pitch, input_slice_pitch],
        ptr,
        (num_events_in_wait_list, event_wait_list),
        NO_HOST_WRITE,
    )?;
    let blocking = blocking_write != 0;
    // SAFETY: the application's memory holds the region at these pitches.
    let e = unsafe {
        image::write(
            &t.queue,
            CL_COMMAND_WRITE_IMAGE,
            &t.image,
            t.origin,
            t.region,
            t.pitches,
            ptr as *const u8,
            blocking,
            &t.wait,
        )?
    };
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish_write(e, blocking, &t.wait, event) }
}

#[entry(clEnqueueFillImage)]
unsafe fn enqueue_fill_image(
    command_queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(command_queue)?;
    // SAFETY: the application passes the color, origin and region as the spec requires.
    let (m, color, o, r) = unsafe { fill_image_args(&q, image, fill_color, origin, region) }?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events_in_wait_list, event_wait_list, &q.context) }?;
    let e = image::fill(&q, &m, color, o, r, &wait)?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}

#[entry(clEnqueueCopyImage)]
unsafe fn enqueue_copy_image(
    command_queue: cl_command_queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(command_queue)?;
    // SAFETY: the application passes the origins and region as the spec requires.
    let (src, src_o, dst, dst_o, r) =
        unsafe { copy_image_args(&q, src_image, dst_image, src_origin, dst_origin, region) }?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events_in_wait_list, event_wait_list, &q.context) }?;
    let e = image::copy(
        &q,
        CL_COMMAND_COPY_IMAGE,
        &src,
        src_o,
        &dst,
        dst_o,
        r,
        0,
        &wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}

#[entry(clEnqueueCopyImageToBuffer)]
unsafe fn enqueue_copy_image_to_buffer(
    command_queue: cl_command_queue,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(command_queue)?;
    // SAFETY: the application passes the origin and region as the spec requires.
    let (src, o, dst, _, r) = unsafe {
        image_buffer_args(
            &q, src_image, src_origin, region, dst_buffer, dst_offset, true,
        )
    }?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events_in_wait_list, event_wait_list, &q.context) }?;
    let e = image::copy(
        &q,
        CL_COMMAND_COPY_IMAGE_TO_BUFFER,
        &src,
        o,
        &dst,
        [0; 3],
        r,
        dst_offset,
        &wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}

#[entry(clEnqueueCopyBufferToImage)]
unsafe fn enqueue_copy_buffer_to_image(
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(command_queue)?;
    // SAFETY: the application passes the origin and region as the spec requires.
    let (src, _, dst, o, r) = unsafe {
        image_buffer_args(
            &q, dst_image, dst_origin, region, src_buffer, src_offset, false,
        )
    }?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events_in_wait_list, event_wait_list, &q.context) }?;
    let e = image::copy(
        &q,
        CL_COMMAND_COPY_BUFFER_TO_IMAGE,
        &src,
        [0; 3],
        &dst,
        o,
        r,
        src_offset,
        &wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}

#[entry(clEnqueueMapImage)]
unsafe fn enqueue_map_image(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    origin: *const usize,
    region: *const usize,
    image_row_pitch: *mut usize,
    image_slice_pitch: *mut usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<*mut c_void> {
    let (q, m) = queue_and_image(command_queue, image)?;
    let (o, r) = origin_region(&m, origin, region)?;
    check(!image_row_pitch.is_null(), CL_INVALID_VALUE)?;
    let slices = matches!(
        m.mem_type(),
        CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D
    );
    check(!slices || !image_slice_pitch.is_null(), CL_INVALID_VALUE)?;
    check_map_flags(map_flags)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events_in_wait_list, event_wait_list, &q.context) }?;
    check_map_access(map_flags, m.flags)?;
    let blocking = blocking_map != 0;
    let (ptr, pitches, e) = image::map(&q, &m, map_flags, o, r, blocking, &wait)?;
    // SAFETY: checked not NULL above (the slice pitch where the image has slices).
    unsafe {
        *image_row_pitch = pitches.row;
        if !image_slice_pitch.is_null() {
            *image_slice_pitch = if slices { pitches.slice } else { 0 };
        }
    }
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, blocking, event) }?;
    Ok(ptr)
}

#[entry(clCreateSampler)]
fn create_sampler(
    context: cl_context,
    normalized_coords: cl_bool,
    addressing_mode: cl_addressing_mode,
    filter_mode: cl_filter_mode,
) -> CLResult<cl_sampler> {
    let ctx: Arc<Context> = obj(context)?;
    check(
        ctx.devices.iter().any(|d| d.has_images()),
        CL_INVALID_OPERATION,
    )?;
    check(normalized_coords <= 1, CL_INVALID_VALUE)?;
    let s = Sampler::new(
        &ctx,
        normalized_coords != 0,
        addressing_mode,
        filter_mode,
        vec![],
    )?;
    Ok(register(s) as cl_sampler)
}

#[entry(clCreateSamplerWithProperties)]
unsafe fn create_sampler_with_properties(
    context: cl_context,
    sampler_properties: *const cl_sampler_properties,
) -> CLResult<cl_sampler> {
    let ctx: Arc<Context> = obj(context)?;
    // SAFETY: NULL or a 0-terminated list.
    let props = unsafe { property_list(sampler_properties) };
    let (mut normalized, mut addressing, mut filter) = (true, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST);
    let mut seen = vec![];
    for pair in props.chunks(2).filter(|p| p.len() == 2) {
        let (name, value) = (pair[0] as cl_uint, pair[1]);
        check(!seen.contains(&name), CL_INVALID_VALUE)?;
        seen.push(name);
        match name {
            CL_SAMPLER_NORMALIZED_COORDS => {
                check(value == 0 || value == 1, CL_INVALID_VALUE)?;
                normalized = value != 0;
            }
            CL_SAMPLER_ADDRESSING_MODE => addressing = value as cl_uint,
            CL_SAMPLER_FILTER_MODE => filter = value as cl_uint,
            _ => return Err(ClError(CL_INVALID_VALUE)),
        }
    }
    check(props.len() % 2 == 1 || props.is_empty(), CL_INVALID_VALUE)?;
    check(
        ctx.devices.iter().any(|d| d.has_images()),
        CL_INVALID_OPERATION,
    )?;
    let s = Sampler::new(&ctx, normalized, addressing, filter, props)?;
    Ok(register(s) as cl_sampler)
}

#[entry(clRetainSampler, at_exit)]
fn retain_sampler(sampler: cl_sampler) -> CLResult<()> {
    super::platform::ensure_init();
    retain::<Sampler>(sampler as *const c_void)
}

#[entry(clReleaseSampler, at_exit)]
fn release_sampler(sampler: cl_sampler) -> CLResult<()> {
    super::platform::ensure_init();
    release::<Sampler>(sampler as *const c_void).map(|_| ())
}

#[entry(clGetSamplerInfo, at_exit)]
unsafe fn get_sampler_info(
    sampler: cl_sampler,
    param_name: cl_sampler_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let s: Arc<Sampler> = obj(sampler)?;
    let value = match param_name {
        CL_SAMPLER_REFERENCE_COUNT => v::<cl_uint>(s.base.api_refs()),
        CL_SAMPLER_CONTEXT => v::<cl_context>(handle(&s.context) as cl_context),
        CL_SAMPLER_NORMALIZED_COORDS => v::<cl_bool>(s.normalized as cl_bool),
        CL_SAMPLER_ADDRESSING_MODE => v::<cl_addressing_mode>(s.addressing),
        CL_SAMPLER_FILTER_MODE => v::<cl_filter_mode>(s.filter),
        CL_SAMPLER_PROPERTIES => array::<cl_sampler_properties>(&s.properties),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}
