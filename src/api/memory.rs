//! Buffers and the buffer commands.

use super::info::{v, write};
use super::util::{obj, property_list, return_event, wait_list};
use crate::cl::*;
use crate::core::context::Context;
use crate::core::event::Event;
use crate::core::memory::Mem;
use crate::core::object::{handle, register, release, retain};
use crate::core::queue::Queue;
use crate::core::transfer::{self, HostPtr, Rect};
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;

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

fn create_buffer(
    context: cl_context,
    properties: Vec<cl_mem_properties>,
    mut flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let ctx: Arc<Context> = obj(context)?;
    // OpenCL 3.0 defines no buffer properties: any name is invalid.
    check(properties.len() <= 1, CL_INVALID_PROPERTY)?;
    check_flags(flags)?;
    let max = ctx
        .devices
        .iter()
        .map(|d| d.max_mem_alloc_size())
        .min()
        .unwrap_or(0);
    check(size > 0 && size as u64 <= max, CL_INVALID_BUFFER_SIZE)?;
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    check(wants_ptr == !host_ptr.is_null(), CL_INVALID_HOST_PTR)?;
    if flags & ACCESS == 0 {
        flags |= CL_MEM_READ_WRITE;
    }
    let mem = Mem::new_buffer(&ctx, flags, size, host_ptr, properties)?;
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
    let m: Arc<Mem> = obj(mem)?;
    check(Arc::ptr_eq(&q.context, &m.context), CL_INVALID_CONTEXT)?;
    check(m.mem_type == CL_MEM_OBJECT_BUFFER, CL_INVALID_MEM_OBJECT)?;
    m.check_device(&q.vk)?;
    Ok((q, m))
}

/// Finishes an enqueue: waits when blocking, hands out the event.
pub(super) fn finish(event: Arc<Event>, blocking: bool, out: *mut cl_event) -> CLResult<()> {
    if blocking {
        event.wait()?;
    }
    return_event(event, out);
    Ok(())
}

/// Finishes a write. When a write command returns, it has copied the application's data
/// (into the memory object, or into staging memory the queue copies from), which is all a
/// blocking write promises ("the memory pointed to by ptr can be reused by the application
/// after the call returns"); so a blocking write waits only when its wait list is not resolved
/// yet, to return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if one of its events fails.
pub(super) fn finish_write(
    event: Arc<Event>,
    blocking: bool,
    wait: &[Arc<Event>],
    out: *mut cl_event,
) -> CLResult<()> {
    let resolved = wait.iter().all(|e| e.status() == CL_COMPLETE as cl_int);
    finish(event, blocking && !resolved, out)
}

entry! {
    fn clCreateBuffer(context: cl_context, flags: cl_mem_flags, size: usize, host_ptr: *mut c_void) -> cl_mem, errcode_ret {
        create_buffer(context, vec![], flags, size, host_ptr)
    }

    fn clCreateBufferWithProperties(
        context: cl_context,
        properties: *const cl_mem_properties,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: *mut c_void,
    ) -> cl_mem, errcode_ret {
        // SAFETY: properties is NULL or a 0-terminated list.
        let props = unsafe { property_list(properties) };
        create_buffer(context, props, flags, size, host_ptr)
    }

    fn clRetainMemObject(mem: cl_mem) {
        super::platform::ensure_init();
        retain::<Mem>(mem as *const c_void)
    }

    fn clReleaseMemObject(mem: cl_mem) {
        super::platform::ensure_init();
        release::<Mem>(mem as *const c_void).map(|_| ())
    }

    fn clGetMemObjectInfo(
        mem: cl_mem,
        param_name: cl_mem_info,
        param_value_size: usize,
        param_value: *mut c_void,
        param_value_size_ret: *mut usize,
    ) {
        let m: Arc<Mem> = obj(mem)?;
        let cl_false: cl_bool = CL_FALSE;
        let value = match param_name {
            CL_MEM_TYPE => v(&m.mem_type),
            CL_MEM_FLAGS => v(&m.flags),
            CL_MEM_SIZE => v(&m.size),
            CL_MEM_HOST_PTR => v(&m.host_ptr),
            CL_MEM_MAP_COUNT => v(&m.map_count()),
            CL_MEM_REFERENCE_COUNT => v(&m.base.api_refs()),
            CL_MEM_CONTEXT => v(&handle(&m.context)),
            CL_MEM_ASSOCIATED_MEMOBJECT => v(&m.parent.as_ref().map_or(std::ptr::null_mut(), |p| handle(&p.0))),
            CL_MEM_OFFSET => v(&m.parent.as_ref().map_or(0, |p| p.1)),
            CL_MEM_USES_SVM_POINTER => v(&cl_false),
            CL_MEM_PROPERTIES => v(&m.properties),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }?;
        write(&value, param_value_size, param_value, param_value_size_ret)
    }

    fn clCreateSubBuffer(
        buffer: cl_mem,
        flags: cl_mem_flags,
        create_type: cl_buffer_create_type,
        create_info: *const c_void,
    ) -> cl_mem, errcode_ret {
        let parent: Arc<Mem> = obj(buffer)?;
        check(parent.mem_type == CL_MEM_OBJECT_BUFFER && parent.parent.is_none(), CL_INVALID_MEM_OBJECT)?;
        let flags = sub_buffer_flags(parent.flags, flags)?;
        check(create_type == CL_BUFFER_CREATE_TYPE_REGION && !create_info.is_null(), CL_INVALID_VALUE)?;
        // SAFETY: CL_BUFFER_CREATE_TYPE_REGION passes a cl_buffer_region.
        let region = unsafe { *(create_info as *const cl_buffer_region) };
        check(region.size > 0, CL_INVALID_BUFFER_SIZE)?;
        parent.check_range(region.origin, region.size)?;
        let aligned = parent.context.devices.iter().all(|d| region.origin as u64 % d.mem_base_addr_align() == 0);
        check(aligned, CL_MISALIGNED_SUB_BUFFER_OFFSET)?;
        Ok(register(Mem::new_sub_buffer(&parent, flags, region.origin, region.size)) as cl_mem)
    }

    fn clSetMemObjectDestructorCallback(mem: cl_mem, pfn_notify: Option<MemCallback>, user_data: *mut c_void) {
        let m: Arc<Mem> = obj(mem)?;
        let f = pfn_notify.ok_or(ClError(CL_INVALID_VALUE))?;
        let user = user_data as usize;
        // SAFETY: the application's callback with its user data, called once.
        m.on_destroy(Box::new(move |h| unsafe { f(h as cl_mem, user as *mut c_void) }));
        Ok(())
    }

    fn clEnqueueMigrateMemObjects(
        queue: cl_command_queue,
        num_mem_objects: cl_uint,
        mem_objects: *const cl_mem,
        flags: cl_mem_migration_flags,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) {
        let q: Arc<Queue> = obj(queue)?;
        check(num_mem_objects > 0 && !mem_objects.is_null(), CL_INVALID_VALUE)?;
        // SAFETY: the application passes num_mem_objects handles.
        let handles = unsafe { super::util::slice(mem_objects, num_mem_objects as usize) };
        let mems = handles.iter().map(|&h| obj::<Mem, _>(h)).collect::<CLResult<Vec<_>>>()?;
        check(mems.iter().all(|m| Arc::ptr_eq(&m.context, &q.context)), CL_INVALID_CONTEXT)?;
        let known = CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
        check(flags & !known == 0, CL_INVALID_VALUE)?;
        let wait = wait_list(num_events, events, &q.context)?;
        // Every buffer lives in memory the context's device reaches: nothing moves; the command
        // still orders like any other.
        let keep = mems.iter().map(|m| m.clone() as Arc<dyn std::any::Any + Send + Sync>).collect();
        let e = q.enqueue_marker(CL_COMMAND_MIGRATE_MEM_OBJECTS, &wait, keep)?;
        finish(e, false, event)
    }

    fn clEnqueueReadBufferRect(
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
    ) {
        let (q, m) = queue_and_mem(queue, buffer)?;
        let (buf, host, region) = rects(&m, buffer_origin, host_origin, region, [buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch])?;
        check(!ptr.is_null(), CL_INVALID_VALUE)?;
        let wait = wait_list(num_events, events, &q.context)?;
        check(m.flags & NO_HOST_READ == 0, CL_INVALID_OPERATION)?;
        let e = transfer::read(&q, &m, buf, host, region, HostPtr(ptr as *mut u8), blocking != 0, &wait)?;
        finish(e, blocking != 0, event)
    }

    fn clEnqueueWriteBufferRect(
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
    ) {
        let (q, m) = queue_and_mem(queue, buffer)?;
        let (buf, host, region) = rects(&m, buffer_origin, host_origin, region, [buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch])?;
        check(!ptr.is_null(), CL_INVALID_VALUE)?;
        let wait = wait_list(num_events, events, &q.context)?;
        check(m.flags & NO_HOST_WRITE == 0, CL_INVALID_OPERATION)?;
        // SAFETY: the application passes the region at its pitches in ptr.
        let e = unsafe { transfer::write(&q, &m, buf, host, region, ptr as *const u8, blocking != 0, &wait) }?;
        finish_write(e, blocking != 0, &wait, event)
    }

    fn clEnqueueCopyBufferRect(
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
    ) {
        let (q, s) = queue_and_mem(queue, src)?;
        let (_, d) = queue_and_mem(queue, dst)?;
        let (sr, _, region3) = rects(&s, src_origin, src_origin, region, [src_row_pitch, src_slice_pitch, src_row_pitch, src_slice_pitch])?;
        let (dr, _, _) = rects(&d, dst_origin, dst_origin, region, [dst_row_pitch, dst_slice_pitch, dst_row_pitch, dst_slice_pitch])?;
        let wait = wait_list(num_events, events, &q.context)?;
        if Arc::ptr_eq(&s.storage, &d.storage) {
            check(sr.slice_pitch == dr.slice_pitch || sr.row_pitch == dr.row_pitch, CL_INVALID_VALUE)?;
            let overlap = transfer::rects_overlap(&sr, s.offset as usize, &dr, d.offset as usize, region3);
            check(!overlap, CL_MEM_COPY_OVERLAP)?;
        }
        let e = transfer::copy(&q, CL_COMMAND_COPY_BUFFER_RECT, &s, &d, sr, dr, region3, &wait)?;
        finish(e, false, event)
    }

    fn clEnqueueReadBuffer(
        queue: cl_command_queue,
        buffer: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        ptr: *mut c_void,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) {
        let (q, m) = queue_and_mem(queue, buffer)?;
        m.check_range(offset, size)?;
        check(!ptr.is_null(), CL_INVALID_VALUE)?;
        let wait = wait_list(num_events, events, &q.context)?;
        check(m.flags & NO_HOST_READ == 0, CL_INVALID_OPERATION)?;
        let e = transfer::download_linear(&q, CL_COMMAND_READ_BUFFER, &m, offset, size, HostPtr(ptr as *mut u8), blocking != 0, &wait)?;
        finish(e, blocking != 0, event)
    }

    fn clEnqueueWriteBuffer(
        queue: cl_command_queue,
        buffer: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        ptr: *const c_void,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) {
        let (q, m) = queue_and_mem(queue, buffer)?;
        m.check_range(offset, size)?;
        check(!ptr.is_null(), CL_INVALID_VALUE)?;
        let wait = wait_list(num_events, events, &q.context)?;
        check(m.flags & NO_HOST_WRITE == 0, CL_INVALID_OPERATION)?;
        // SAFETY: the application passes `size` readable bytes at ptr.
        let data = unsafe { std::slice::from_raw_parts(ptr as *const u8, size) };
        let e = transfer::upload_linear(&q, CL_COMMAND_WRITE_BUFFER, &m, offset, data, blocking != 0, &wait)?;
        finish_write(e, blocking != 0, &wait, event)
    }

    fn clEnqueueCopyBuffer(
        queue: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_offset: usize,
        dst_offset: usize,
        size: usize,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) {
        let (q, s) = queue_and_mem(queue, src)?;
        let (_, d) = queue_and_mem(queue, dst)?;
        s.check_range(src_offset, size)?;
        d.check_range(dst_offset, size)?;
        check(size > 0, CL_INVALID_VALUE)?;
        let wait = wait_list(num_events, events, &q.context)?;
        let overlap = Arc::ptr_eq(&s.storage, &d.storage) && {
            let (a, b) = (s.offset as usize + src_offset, d.offset as usize + dst_offset);
            a < b + size && b < a + size
        };
        check(!overlap, CL_MEM_COPY_OVERLAP)?;
        let e = transfer::copy_linear(&q, &s, &d, src_offset, dst_offset, size, &wait)?;
        finish(e, false, event)
    }

    fn clEnqueueFillBuffer(
        queue: cl_command_queue,
        buffer: cl_mem,
        pattern: *const c_void,
        pattern_size: usize,
        offset: usize,
        size: usize,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) {
        let (q, m) = queue_and_mem(queue, buffer)?;
        m.check_range(offset, size)?;
        check(!pattern.is_null() && pattern_size.is_power_of_two() && pattern_size <= 128, CL_INVALID_VALUE)?;
        check(offset % pattern_size == 0 && size % pattern_size == 0, CL_INVALID_VALUE)?;
        let wait = wait_list(num_events, events, &q.context)?;
        // SAFETY: the application passes pattern_size bytes at pattern.
        let pattern = unsafe { std::slice::from_raw_parts(pattern as *const u8, pattern_size) };
        let e = transfer::fill(&q, &m, pattern, offset, size, &wait)?;
        finish(e, false, event)
    }

    fn clEnqueueMapBuffer(
        queue: cl_command_queue,
        buffer: cl_mem,
        blocking: cl_bool,
        flags: cl_map_flags,
        offset: usize,
        size: usize,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) -> *mut c_void, errcode_ret {
        let (q, m) = queue_and_mem(queue, buffer)?;
        m.check_range(offset, size)?;
        check(size > 0, CL_INVALID_VALUE)?;
        check_map_flags(flags)?;
        let wait = wait_list(num_events, events, &q.context)?;
        check_map_access(flags, m.flags)?;
        let (ptr, e) = transfer::map(&q, CL_COMMAND_MAP_BUFFER, &m, flags, offset, size, blocking != 0, &wait)?;
        finish(e, blocking != 0, event)?;
        Ok(ptr)
    }

    fn clEnqueueUnmapMemObject(
        queue: cl_command_queue,
        mem: cl_mem,
        mapped_ptr: *mut c_void,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) {
        let q: Arc<Queue> = obj(queue)?;
        let m: Arc<Mem> = obj(mem)?;
        check(Arc::ptr_eq(&q.context, &m.context), CL_INVALID_CONTEXT)?;
        m.check_device(&q.vk)?;
        let wait = wait_list(num_events, events, &q.context)?;
        let e = if m.image.is_some() {
            crate::core::image::unmap(&q, &m, mapped_ptr, &wait)?
        } else {
            transfer::unmap(&q, &m, mapped_ptr, &wait)?
        };
        finish(e, false, event)
    }
}
