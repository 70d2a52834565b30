//! Buffers and the buffer commands.

use super::info::{array, v, write};
use super::util::{obj, property_list, return_event, wait_list};
use crate::cl::*;
use crate::core::context::Context;
use crate::core::event::Event;
use crate::core::memory::{Mapped, Mem, MemKind};
use crate::core::object::{handle, register, release, retain};
use crate::core::queue::Queue;
use crate::core::transfer::{self, HostPtr, Rect};
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

const ACCESS: cl_mem_flags = CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY;
const HOST_ACCESS: cl_mem_flags =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
const HOST_PTR: cl_mem_flags = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;

/// Host-access flags that refuse host reads, and host writes (CL_INVALID_OPERATION).
pub(super) const NO_HOST_READ: cl_mem_flags = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS;
pub(super) const NO_HOST_WRITE: cl_mem_flags = CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;

/// clEnqueueMapBuffer / clEnqueueMapImage's map flags: known bits, and
/// CL_MAP_WRITE_INVALIDATE_REGION alone (CL_INVALID_VALUE).
pub(super) fn check_map_flags(flags: cl_map_flags) -> CLResult<()> {
    let all = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
    check(flags & !all == 0, CL_INVALID_VALUE)?;
    check(
        flags & CL_MAP_WRITE_INVALIDATE_REGION == 0 || flags & (CL_MAP_READ | CL_MAP_WRITE) == 0,
        CL_INVALID_VALUE,
    )
}

/// Whether a memory object's host-access flags allow a map with `flags` (CL_INVALID_OPERATION).
pub(super) fn check_map_access(flags: cl_map_flags, mem_flags: cl_mem_flags) -> CLResult<()> {
    let writes = flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0;
    check(
        flags & CL_MAP_READ == 0 || mem_flags & NO_HOST_READ == 0,
        CL_INVALID_OPERATION,
    )?;
    check(
        !writes || mem_flags & NO_HOST_WRITE == 0,
        CL_INVALID_OPERATION,
    )
}

/// The spec's rules on cl_mem_flags: known bits, at most one access and one host-access
/// flag, USE_HOST_PTR excluding ALLOC/COPY_HOST_PTR.
pub(super) fn check_flags(flags: cl_mem_flags) -> CLResult<()> {
    check(
        flags & !(ACCESS | HOST_ACCESS | HOST_PTR | CL_MEM_KERNEL_READ_AND_WRITE) == 0,
        CL_INVALID_VALUE,
    )?;
    check((flags & ACCESS).count_ones() <= 1, CL_INVALID_VALUE)?;
    check((flags & HOST_ACCESS).count_ones() <= 1, CL_INVALID_VALUE)?;
    check(
        flags & CL_MEM_USE_HOST_PTR == 0
            || flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) == 0,
        CL_INVALID_VALUE,
    )
}

fn new_buffer(
    context: cl_context,
    properties: Vec<cl_mem_properties>,
    mut flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let ctx: Arc<Context> = obj(context)?;
    // OpenCL 3.0 defines no buffer properties; cl_ext_buffer_device_address defines one.
    check(
        properties.len() % 2 == 1 || properties.is_empty(),
        CL_INVALID_PROPERTY,
    )?;
    for p in properties.chunks(2).filter(|p| p.len() == 2) {
        let address = p[0] == super::svm::CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT;
        let usable = ctx.devices.iter().all(|d| d.has_device_addresses());
        check(address && usable && p[1] <= 1, CL_INVALID_PROPERTY)?;
    }
    check_flags(flags)?;
    let max = ctx
        .devices
        .iter()
        .map(|d| d.max_mem_alloc_size())
        .min()
        .unwrap_or(0);
    check(size > 0 && size as u64 <= max, CL_INVALID_BUFFER_SIZE)?;
    // "CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
    // are set in flags or if host_ptr is not NULL but CL_MEM_COPY_HOST_PTR or
    // CL_MEM_USE_HOST_PTR are not set in flags."
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    check(wants_ptr != host_ptr.is_null(), CL_INVALID_HOST_PTR)?;
    if flags & ACCESS == 0 {
        flags |= CL_MEM_READ_WRITE;
    }
    // SAFETY: host_ptr holds `size` bytes where the flags name it (the spec's contract; NULL
    // with those flags was refused above).
    let mem = unsafe { Mem::new_buffer(&ctx, flags, size, host_ptr, properties) }?;
    Ok(register(mem) as cl_mem)
}

pub type MemCallback = unsafe extern "C" fn(cl_mem, *mut c_void);

/// A sub-buffer's flags: the spec's rules against its parent's, with access and host-access
/// flags inherited when not given.
fn sub_buffer_flags(parent: cl_mem_flags, mut flags: cl_mem_flags) -> CLResult<cl_mem_flags> {
    check_flags(flags)?;
    check(flags & HOST_PTR == 0, CL_INVALID_VALUE)?;
    let p_access = parent & ACCESS;
    let access_ok = match flags & ACCESS {
        0 => true,
        CL_MEM_READ_WRITE => p_access == CL_MEM_READ_WRITE,
        CL_MEM_READ_ONLY => p_access != CL_MEM_WRITE_ONLY,
        _ => p_access != CL_MEM_READ_ONLY,
    };
    check(access_ok, CL_INVALID_VALUE)?;
    let p_host = parent & HOST_ACCESS;
    let host_ok = match flags & HOST_ACCESS {
        CL_MEM_HOST_READ_ONLY => p_host & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) == 0,
        CL_MEM_HOST_WRITE_ONLY => p_host & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) == 0,
        _ => true,
    };
    check(host_ok, CL_INVALID_VALUE)?;
    if flags & ACCESS == 0 {
        flags |= p_access;
    }
    if flags & HOST_ACCESS == 0 {
        flags |= p_host;
    }
    Ok(flags | (parent & HOST_PTR))
}

/// The two sides of a rect transfer on `mem`: the buffer side (checked to lie inside it) and
/// the host side, from the C arguments (pitches: buffer row, slice, host row, slice).
fn rects(
    mem: &Mem,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    pitches: [usize; 4],
) -> CLResult<(Rect, Rect, [usize; 3])> {
    check(
        !buffer_origin.is_null() && !host_origin.is_null() && !region.is_null(),
        CL_INVALID_VALUE,
    )?;
    // SAFETY: each points to three size_t values, as the spec requires.
    let (bo, ho, region) = unsafe {
        (
            *(buffer_origin as *const [usize; 3]),
            *(host_origin as *const [usize; 3]),
            *(region as *const [usize; 3]),
        )
    };
    check(region.iter().all(|&r| r > 0), CL_INVALID_VALUE)?;
    let buf = Rect::new(bo, region, pitches[0], pitches[1])?;
    let host = Rect::new(ho, region, pitches[2], pitches[3])?;
    check(
        buf.end(region).is_some_and(|end| end <= mem.size),
        CL_INVALID_VALUE,
    )?;
    check(host.end(region).is_some(), CL_INVALID_VALUE)?;
    Ok((buf, host, region))
}

/// The queue, and the memory object checked to be of its context.
fn queue_and_mem(queue: cl_command_queue, mem: cl_mem) -> CLResult<(Arc<Queue>, Arc<Mem>)> {
    let q: Arc<Queue> = obj(queue)?;
    let m = buffer_on(&q, mem)?;
    Ok((q, m))
}

/// A buffer a command on `q` may use (a queue's or a command-buffer's).
pub(super) fn buffer_on(q: &Queue, mem: cl_mem) -> CLResult<Arc<Mem>> {
    let m: Arc<Mem> = obj(mem)?;
    check(Arc::ptr_eq(&q.context, &m.context), CL_INVALID_CONTEXT)?;
    check(m.mem_type() == CL_MEM_OBJECT_BUFFER, CL_INVALID_MEM_OBJECT)?;
    m.check_device(&q.vk)?;
    m.check_sub_buffer_alignment(&q.device)?;
    Ok(m)
}

/// Finishes an enqueue: waits when blocking, hands out the event.
///
/// # Safety
/// `out` is NULL or points to a writable `cl_event`.
pub(super) unsafe fn finish(event: Arc<Event>, blocking: bool, out: *mut cl_event) -> CLResult<()> {
    if blocking {
        event.wait()?;
    }
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { return_event(event, out) };
    Ok(())
}

/// Finishes a write. When a write command returns, it has copied the application's data
/// (into the memory object, or into staging memory the queue copies from), which is all a
/// blocking write promises ("the memory pointed to by ptr can be reused by the application
/// after the call returns"); so a blocking write waits only when its wait list is not resolved
/// yet, to return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if one of its events fails.
///
/// # Safety
/// `out` is NULL or points to a writable `cl_event`.
pub(super) unsafe fn finish_write(
    event: Arc<Event>,
    blocking: bool,
    wait: &[Arc<Event>],
    out: *mut cl_event,
) -> CLResult<()> {
    let resolved = wait.iter().all(|e| e.status() == CL_COMPLETE as cl_int);
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(event, blocking && !resolved, out) }
}

#[entry(clCreateBuffer)]
unsafe fn create_buffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    new_buffer(context, vec![], flags, size, host_ptr)
}

#[entry(clCreateBufferWithProperties)]
unsafe fn create_buffer_with_properties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    // SAFETY: properties is NULL or a 0-terminated list.
    let props = unsafe { property_list(properties) };
    new_buffer(context, props, flags, size, host_ptr)
}

#[entry(clRetainMemObject, at_exit)]
fn retain_mem_object(mem: cl_mem) -> CLResult<()> {
    super::platform::ensure_init();
    retain::<Mem>(mem as *const c_void)
}

#[entry(clReleaseMemObject, at_exit)]
fn release_mem_object(mem: cl_mem) -> CLResult<()> {
    super::platform::ensure_init();
    release::<Mem>(mem as *const c_void).map(|_| ())
}

#[entry(clGetMemObjectInfo, at_exit)]
unsafe fn get_mem_object_info(
    mem: cl_mem,
    param_name: cl_mem_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let m: Arc<Mem> = obj(mem)?;
    let value = match param_name {
        CL_MEM_TYPE => v::<cl_mem_object_type>(m.mem_type()),
        CL_MEM_FLAGS => v::<cl_mem_flags>(m.flags),
        CL_MEM_SIZE => v::<usize>(m.size),
        CL_MEM_HOST_PTR => v::<*mut c_void>(m.host_ptr as *mut c_void),
        CL_MEM_MAP_COUNT => v::<cl_uint>(m.map_count()),
        CL_MEM_REFERENCE_COUNT => v::<cl_uint>(m.base.api_refs()),
        CL_MEM_CONTEXT => v::<cl_context>(handle(&m.context) as cl_context),
        CL_MEM_ASSOCIATED_MEMOBJECT => {
            v::<cl_mem>(m.parent().map_or(std::ptr::null_mut(), handle) as cl_mem)
        }
        CL_MEM_OFFSET => v::<usize>(m.origin()),
        CL_MEM_USES_SVM_POINTER => v::<cl_bool>(m.uses_svm() as cl_bool),
        super::svm::CL_MEM_DEVICE_ADDRESS_EXT => {
            array::<super::svm::cl_mem_device_address_ext>(&super::svm::device_addresses(&m)?)
        }
        CL_MEM_PROPERTIES => array::<cl_mem_properties>(&m.properties),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clCreateSubBuffer)]
unsafe fn create_sub_buffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    create_type: cl_buffer_create_type,
    create_info: *const c_void,
) -> CLResult<cl_mem> {
    let parent: Arc<Mem> = obj(buffer)?;
    check(
        matches!(parent.kind, MemKind::Buffer(_)),
        CL_INVALID_MEM_OBJECT,
    )?;
    let flags = sub_buffer_flags(parent.flags, flags)?;
    check(
        create_type == CL_BUFFER_CREATE_TYPE_REGION && !create_info.is_null(),
        CL_INVALID_VALUE,
    )?;
    // SAFETY: CL_BUFFER_CREATE_TYPE_REGION passes a cl_buffer_region.
    let region = unsafe { *(create_info as *const cl_buffer_region) };
    check(region.size > 0, CL_INVALID_BUFFER_SIZE)?;
    parent.check_range(region.origin, region.size)?;
    // "CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated with
    // buffer for which the origin field ... is aligned to the CL_DEVICE_MEM_BASE_ADDR_ALIGN
    // value": one such device is enough (commands on another device refuse the sub-buffer,
    // Mem::check_sub_buffer_alignment).
    let aligned = parent
        .context
        .devices
        .iter()
        .any(|d| region.origin as u64 % d.mem_base_addr_align() == 0);
    check(aligned, CL_MISALIGNED_SUB_BUFFER_OFFSET)?;
    Ok(register(Mem::new_sub_buffer(
        &parent,
        flags,
        region.origin,
        region.size,
    )) as cl_mem)
}

#[entry(clSetMemObjectDestructorCallback)]
unsafe fn set_mem_object_destructor_callback(
    mem: cl_mem,
    pfn_notify: Option<MemCallback>,
    user_data: *mut c_void,
) -> CLResult<()> {
    let m: Arc<Mem> = obj(mem)?;
    let f = pfn_notify.ok_or(ClError(CL_INVALID_VALUE))?;
    let user = user_data as usize;
    // SAFETY: the application's callback with its user data, called once.
    m.on_destroy(Box::new(move |h| unsafe {
        f(h as cl_mem, user as *mut c_void)
    }));
    Ok(())
}

#[entry(clEnqueueMigrateMemObjects)]
unsafe fn enqueue_migrate_mem_objects(
    queue: cl_command_queue,
    num_mem_objects: cl_uint,
    mem_objects: *const cl_mem,
    flags: cl_mem_migration_flags,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(queue)?;
    check(
        num_mem_objects > 0 && !mem_objects.is_null(),
        CL_INVALID_VALUE,
    )?;
    // SAFETY: the application passes num_mem_objects handles.
    let handles = unsafe { super::util::slice(mem_objects, num_mem_objects as usize) };
    let mems = handles
        .iter()
        .map(|&h| obj::<Mem, _>(h))
        .collect::<CLResult<Vec<_>>>()?;
    check(
        mems.iter().all(|m| Arc::ptr_eq(&m.context, &q.context)),
        CL_INVALID_CONTEXT,
    )?;
    let known = CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
    check(flags & !known == 0, CL_INVALID_VALUE)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    let e = crate::core::residence::migrate(&q, mems, flags, &wait)?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}

#[entry(clEnqueueReadBufferRect)]
unsafe fn enqueue_read_buffer_rect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, m) = queue_and_mem(queue, buffer)?;
    let (buf, host, region) = rects(
        &m,
        buffer_origin,
        host_origin,
        region,
        [
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
        ],
    )?;
    check(!ptr.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    check(m.flags & NO_HOST_READ == 0, CL_INVALID_OPERATION)?;
    let e = transfer::read(
        &q,
        &m,
        buf,
        host,
        region,
        // SAFETY: the application's memory for the region, valid until the command completes
        // (the spec's contract for ptr).
        unsafe { HostPtr::new(ptr as *mut u8) },
        blocking != 0,
        &wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, blocking != 0, event) }
}

#[entry(clEnqueueWriteBufferRect)]
unsafe fn enqueue_write_buffer_rect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, m) = queue_and_mem(queue, buffer)?;
    let (buf, host, region) = rects(
        &m,
        buffer_origin,
        host_origin,
        region,
        [
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
        ],
    )?;
    check(!ptr.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    check(m.flags & NO_HOST_WRITE == 0, CL_INVALID_OPERATION)?;
    // SAFETY: the application passes the region at its pitches in ptr.
    let e = unsafe {
        transfer::write(
            &q,
            &m,
            buf,
            host,
            region,
            ptr as *const u8,
            blocking != 0,
            &wait,
        )
    }?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish_write(e, blocking != 0, &wait, event) }
}

/// The rects of a buffer-rect copy, checked: origins, region and pitches (source row and
/// slice, destination row and slice), then overlap within one buffer.
///
/// # Safety
/// The origins and region are NULL or point to 3 values.
pub(super) unsafe fn copy_rects(
    s: &Mem,
    d: &Mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    pitches: [usize; 4],
) -> CLResult<(Rect, Rect, [usize; 3])> {
    let [srp, ssp, drp, dsp] = pitches;
    let (sr, _, region3) = rects(s, src_origin, src_origin, region, [srp, ssp, srp, ssp])?;
    let (dr, _, _) = rects(d, dst_origin, dst_origin, region, [drp, dsp, drp, dsp])?;
    if Arc::ptr_eq(s.storage()?, d.storage()?) {
        check(
            sr.slice_pitch == dr.slice_pitch || sr.row_pitch == dr.row_pitch,
            CL_INVALID_VALUE,
        )?;
        let overlap =
            transfer::rects_overlap(&sr, s.offset as usize, &dr, d.offset as usize, region3);
        check(!overlap, CL_MEM_COPY_OVERLAP)?;
    }
    Ok((sr, dr, region3))
}

#[entry(clEnqueueCopyBufferRect)]
unsafe fn enqueue_copy_buffer_rect(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, s) = queue_and_mem(queue, src)?;
    let (_, d) = queue_and_mem(queue, dst)?;
    let pitches = [
        src_row_pitch,
        src_slice_pitch,
        dst_row_pitch,
        dst_slice_pitch,
    ];
    // SAFETY: the application passes the origins and region as the spec requires.
    let (sr, dr, region3) = unsafe { copy_rects(&s, &d, src_origin, dst_origin, region, pitches) }?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    let e = transfer::copy(
        &q,
        CL_COMMAND_COPY_BUFFER_RECT,
        &s,
        &d,
        sr,
        dr,
        region3,
        &wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}

#[entry(clEnqueueReadBuffer)]
unsafe fn enqueue_read_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, m) = queue_and_mem(queue, buffer)?;
    m.check_range(offset, size)?;
    check(!ptr.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    check(m.flags & NO_HOST_READ == 0, CL_INVALID_OPERATION)?;
    let e = transfer::download_linear(
        &q,
        CL_COMMAND_READ_BUFFER,
        &m,
        offset,
        size,
        // SAFETY: the application's memory for the region, valid until the command completes
        // (the spec's contract for ptr).
        unsafe { HostPtr::new(ptr as *mut u8) },
        blocking != 0,
        &wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, blocking != 0, event) }
}

#[entry(clEnqueueWriteBuffer)]
unsafe fn enqueue_write_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, m) = queue_and_mem(queue, buffer)?;
    m.check_range(offset, size)?;
    check(!ptr.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    check(m.flags & NO_HOST_WRITE == 0, CL_INVALID_OPERATION)?;
    // SAFETY: the application passes `size` readable bytes at ptr.
    let data = unsafe { std::slice::from_raw_parts(ptr as *const u8, size) };
    let e = transfer::upload_linear(
        &q,
        CL_COMMAND_WRITE_BUFFER,
        &m,
        offset,
        data,
        blocking != 0,
        &wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish_write(e, blocking != 0, &wait, event) }
}

/// The ranges of a buffer copy: inside their buffers, not empty, not overlapping.
pub(super) fn check_copy(
    s: &Mem,
    d: &Mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
) -> CLResult<()> {
    s.check_range(src_offset, size)?;
    d.check_range(dst_offset, size)?;
    check(size > 0, CL_INVALID_VALUE)?;
    let overlap = Arc::ptr_eq(s.storage()?, d.storage()?) && {
        let (a, b) = (
            s.offset as usize + src_offset,
            d.offset as usize + dst_offset,
        );
        a < b + size && b < a + size
    };
    check(!overlap, CL_MEM_COPY_OVERLAP)
}

#[entry(clEnqueueCopyBuffer)]
unsafe fn enqueue_copy_buffer(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, s) = queue_and_mem(queue, src)?;
    let (_, d) = queue_and_mem(queue, dst)?;
    check_copy(&s, &d, src_offset, dst_offset, size)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    let e = transfer::copy_linear(&q, &s, &d, src_offset, dst_offset, size, &wait)?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}

/// A buffer fill's pattern, checked with its range.
///
/// # Safety
/// `pattern` is NULL or points to `pattern_size` bytes, alive for `'a`.
pub(super) unsafe fn fill_pattern<'a>(
    m: &Mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
) -> CLResult<&'a [u8]> {
    m.check_range(offset, size)?;
    check(
        !pattern.is_null() && pattern_size.is_power_of_two() && pattern_size <= 128,
        CL_INVALID_VALUE,
    )?;
    check(
        offset % pattern_size == 0 && size % pattern_size == 0,
        CL_INVALID_VALUE,
    )?;
    // SAFETY: as the caller guarantees.
    Ok(unsafe { std::slice::from_raw_parts(pattern as *const u8, pattern_size) })
}

#[entry(clEnqueueFillBuffer)]
unsafe fn enqueue_fill_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, m) = queue_and_mem(queue, buffer)?;
    // SAFETY: the application passes pattern_size bytes at pattern.
    let pattern = unsafe { fill_pattern(&m, pattern, pattern_size, offset, size) }?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    let e = transfer::fill(&q, CL_COMMAND_FILL_BUFFER, &m, pattern, offset, size, &wait)?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}

#[entry(clEnqueueMapBuffer)]
unsafe fn enqueue_map_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<*mut c_void> {
    let (q, m) = queue_and_mem(queue, buffer)?;
    m.check_range(offset, size)?;
    check(size > 0, CL_INVALID_VALUE)?;
    check_map_flags(flags)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    check_map_access(flags, m.flags)?;
    let (ptr, e) = transfer::map(
        &q,
        CL_COMMAND_MAP_BUFFER,
        &m,
        flags,
        Mapped::Bytes { offset, size },
        blocking != 0,
        &wait,
    )?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, blocking != 0, event) }?;
    Ok(ptr)
}

#[entry(clEnqueueUnmapMemObject)]
unsafe fn enqueue_unmap_mem_object(
    queue: cl_command_queue,
    mem: cl_mem,
    mapped_ptr: *mut c_void,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(queue)?;
    let m: Arc<Mem> = obj(mem)?;
    check(Arc::ptr_eq(&q.context, &m.context), CL_INVALID_CONTEXT)?;
    m.check_device(&q.vk)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    let e = transfer::unmap(&q, CL_COMMAND_UNMAP_MEM_OBJECT, &m, mapped_ptr, &wait)?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { finish(e, false, event) }
}
