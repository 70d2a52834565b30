//! Shared virtual memory: clSVMAlloc and the SVM commands (core::svm says how it works).

use super::memory::finish;
use super::util::{obj, slice, wait_list};
use crate::cl::*;
use crate::core::context::Context;
use crate::core::event::Event;
use crate::core::kernel::{ArgValue, Kernel};
use crate::core::memory::{Mapped, Mem};
use crate::core::object::{handle, release, retain};
use crate::core::queue::Queue;
use crate::core::svm;
use crate::core::transfer::{self, HostPtr, Rect};
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

/// cl_ext_buffer_device_address (not in Debian's OpenCL headers; values from the Khronos
/// registry).
#[allow(non_camel_case_types)]
pub type cl_mem_device_address_ext = cl_ulong;
pub const CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT: cl_mem_properties = 0x5000;
pub const CL_MEM_DEVICE_ADDRESS_EXT: cl_mem_info = 0x5001;
pub const CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT: cl_kernel_exec_info = 0x5002;

/// clEnqueueSVMFree's callback.
type FreeCallback = unsafe extern "C" fn(cl_command_queue, cl_uint, *mut *mut c_void, *mut c_void);

/// An application reference to the queue an SVM free callback is given (as an event callback
/// holds its event's): the handle stays valid for the callback even where the application
/// released the queue after enqueueing. Given back after the callback with
/// clReleaseCommandQueue's implicit flush (of what the callback enqueued), or, without a
/// flush, when the command is dropped without running (its wait list failed): it may be
/// dropped under the queue's lock then.
struct HeldQueue(usize);

impl HeldQueue {
    fn new(queue: cl_command_queue) -> CLResult<HeldQueue> {
        retain::<Queue>(queue as *const c_void)?;
        Ok(HeldQueue(queue as usize))
    }

    /// After the callback ran (no vkcl lock is held).
    fn release_and_flush(mut self) {
        let handle = std::mem::replace(&mut self.0, 0);
        if let Ok(Some(q)) = release::<Queue>(handle as *const c_void) {
            if !crate::shutdown::exiting() {
                let _ = q.flush();
            }
        }
    }
}

impl Drop for HeldQueue {
    fn drop(&mut self) {
        if self.0 != 0 {
            let _ = release::<Queue>(self.0 as *const c_void);
        }
    }
}

/// clSVMAlloc's checks; None where the spec has it return NULL.
fn svm_alloc(
    context: cl_context,
    flags: cl_svm_mem_flags,
    size: usize,
    align: u32,
) -> Option<usize> {
    let c: Arc<Context> = obj(context).ok()?;
    let access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
    let known = access | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
    let exclusive = (flags & access).count_ones() <= 1;
    let atomics_need_fine =
        flags & CL_MEM_SVM_ATOMICS == 0 || flags & CL_MEM_SVM_FINE_GRAIN_BUFFER != 0;
    if flags & !known != 0 || !exclusive || !atomics_need_fine {
        return None;
    }
    // "CL_MEM_SVM_FINE_GRAIN_BUFFER or CL_MEM_SVM_ATOMICS is specified in flags and these are
    // not supported by at least one device in context."
    let mut wanted = 0;
    if flags & CL_MEM_SVM_FINE_GRAIN_BUFFER != 0 {
        wanted |= CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
    }
    if flags & CL_MEM_SVM_ATOMICS != 0 {
        wanted |= CL_DEVICE_SVM_ATOMICS;
    }
    let max = c.devices.iter().map(|d| d.max_mem_alloc_size()).min()?;
    let devices_can = c
        .devices
        .iter()
        .all(|d| svm::capabilities(d) & wanted == wanted);
    if !devices_can || size == 0 || size as u64 > max || (align != 0 && !align.is_power_of_two()) {
        return None;
    }
    svm::alloc(&c, flags, size, align as usize)
}

/// # Safety
/// Any arguments: clSVMAlloc returns NULL for invalid ones.
#[no_mangle]
pub unsafe extern "C" fn clSVMAlloc(
    context: cl_context,
    flags: cl_svm_mem_flags,
    size: usize,
    alignment: cl_uint,
) -> *mut c_void {
    std::panic::catch_unwind(|| svm_alloc(context, flags, size, alignment))
        .unwrap_or_else(|_| {
            super::util::panicked("clSVMAlloc");
            None
        })
        .map_or(std::ptr::null_mut(), |p| p as *mut c_void)
}

/// # Safety
/// Any arguments: an invalid context or a pointer of no allocation is ignored.
#[no_mangle]
pub unsafe extern "C" fn clSVMFree(context: cl_context, svm_pointer: *mut c_void) {
    let free = || {
        if let Ok(c) = obj::<Context, _>(context) {
            svm::free(&c, svm_pointer as usize);
        }
    };
    if std::panic::catch_unwind(free).is_err() {
        super::util::panicked("clSVMFree");
    }
}

/// The queue and the events of its wait list.
///
/// # Safety
/// `events` is NULL or points to `num_events` event handles.
unsafe fn queue_and_wait(
    queue: cl_command_queue,
    num_events: cl_uint,
    events: *const cl_event,
) -> CLResult<(Arc<Queue>, Vec<Arc<Event>>)> {
    let q: Arc<Queue> = obj(queue)?;
    // SAFETY: the application's wait list (the caller's contract).
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    Ok((q, wait))
}

#[entry(clEnqueueSVMFree)]
unsafe fn enqueue_svm_free(
    queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *mut c_void,
    pfn_free_func: Option<FreeCallback>,
    user_data: *mut c_void,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    // SAFETY: the application's wait list.
    let (q, wait) = unsafe { queue_and_wait(queue, num_events, events) }?;
    check(
        (num_svm_pointers == 0) == svm_pointers.is_null(),
        CL_INVALID_VALUE,
    )?;
    // SAFETY: `num_svm_pointers` pointers at svm_pointers (the spec's contract).
    let pointers: Vec<usize> = unsafe { slice(svm_pointers, num_svm_pointers as usize) }
        .iter()
        .map(|&p| p as usize)
        .collect();
    let (context, user_data, q_handle) =
        (q.context.clone(), user_data as usize, handle(&q) as usize);
    let held = match pfn_free_func {
        Some(_) => Some(HeldQueue::new(queue)?),
        None => None,
    };
    let e = svm::host_command(&q, CL_COMMAND_SVM_FREE, &wait, vec![], move || {
        match pfn_free_func {
            Some(f) => {
                let mut list: Vec<*mut c_void> = pointers.iter().map(|&p| p as _).collect();
                let (n, list) = (list.len() as cl_uint, list.as_mut_ptr());
                // SAFETY: the application's callback, with the arguments the spec gives it;
                // no vkcl lock is held here.
                unsafe {
                    f(
                        q_handle as cl_command_queue,
                        n,
                        list,
                        user_data as *mut c_void,
                    )
                };
                if let Some(held) = held {
                    held.release_and_flush();
                }
            }
            None => pointers.iter().for_each(|&p| svm::free(&context, p)),
        }
    })?;
    // SAFETY: the application's event out-parameter.
    unsafe { finish(e, false, event) }
}

/// clEnqueueSVMMemcpy's checks (clCommandSVMMemcpyKHR's too): the allocations holding the
/// source and the destination, and the ranges' offsets in them (None: host memory).
#[allow(clippy::type_complexity)]
pub(super) fn memcpy_ranges(
    context: &Context,
    dst: usize,
    src: usize,
    size: usize,
) -> CLResult<(Option<(Arc<Mem>, usize)>, Option<(Arc<Mem>, usize)>)> {
    // 0 bytes: CL_INVALID_VALUE, as OpenCL 2.0 lists it (and as other implementations do).
    check(dst != 0 && src != 0 && size > 0, CL_INVALID_VALUE)?;
    check(
        dst.checked_add(size).is_some() && src.checked_add(size).is_some(),
        CL_INVALID_VALUE,
    )?;
    check(dst >= src + size || src >= dst + size, CL_MEM_COPY_OVERLAP)?;
    let to = svm::find_range(context, dst, size)?;
    let from = svm::find_range(context, src, size)?;
    Ok((from, to))
}

#[entry(clEnqueueSVMMemcpy)]
unsafe fn enqueue_svm_memcpy(
    queue: cl_command_queue,
    blocking: cl_bool,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    // SAFETY: the application's wait list.
    let (q, wait) = unsafe { queue_and_wait(queue, num_events, events) }?;
    let (from, to) = memcpy_ranges(&q.context, dst_ptr as usize, src_ptr as usize, size)?;
    let blocking = blocking != 0;
    let command = CL_COMMAND_SVM_MEMCPY;
    let e = match (from, to) {
        (Some((s, so)), Some((d, doff))) => {
            let (from, to) = (Rect::linear(so, size), Rect::linear(doff, size));
            transfer::copy(&q, command, &s, &d, from, to, [size, 1, 1], &wait)?
        }
        (None, Some((d, doff))) => {
            // SAFETY: `size` readable bytes at src_ptr (the spec's contract).
            let data = unsafe { std::slice::from_raw_parts(src_ptr as *const u8, size) };
            transfer::upload_linear(&q, command, &d, doff, data, blocking, &wait)?
        }
        (Some((s, so)), None) => {
            // SAFETY: `size` writable bytes at dst_ptr until the command completes.
            let dst = unsafe { HostPtr::new(dst_ptr as *mut u8) };
            transfer::download_linear(&q, command, &s, so, size, dst, blocking, &wait)?
        }
        (None, None) => {
            // Host memory on both sides: copied by the thread that completes the commands
            // before it (a host part). A non-blocking call does not wait: it may come from a
            // callback, which runs on the thread completing this queue's commands, and a wait
            // there would wait for that thread itself.
            let (src, dst) = (src_ptr as usize, dst_ptr as usize);
            svm::host_command(&q, command, &wait, vec![], move || {
                // SAFETY: `size` bytes at each, not overlapping (checked above), valid until
                // the command completes (the spec's contract).
                unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, size) };
            })?
        }
    };
    // SAFETY: the application's event out-parameter.
    unsafe { finish(e, blocking, event) }
}

/// clEnqueueSVMMemFill's checks (clCommandSVMMemFillKHR's too): the allocation holding the
/// range, its offset there, and the pattern.
///
/// # Safety
/// `pattern` is NULL or points to `pattern_size` bytes.
pub(super) unsafe fn fill_range<'a>(
    context: &Context,
    at: usize,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
) -> CLResult<(Arc<Mem>, usize, &'a [u8])> {
    check(at != 0 && !pattern.is_null() && size > 0, CL_INVALID_VALUE)?;
    check(
        pattern_size.is_power_of_two() && pattern_size <= 128,
        CL_INVALID_VALUE,
    )?;
    // "svm_ptr is not aligned to pattern_size bytes", "size is not a multiple of pattern_size".
    check(
        at % pattern_size == 0 && size % pattern_size == 0,
        CL_INVALID_VALUE,
    )?;
    // SAFETY: `pattern_size` bytes at pattern (the caller's contract).
    let pattern = unsafe { std::slice::from_raw_parts(pattern as *const u8, pattern_size) };
    let (m, offset) = svm::find_range(context, at, size)?.ok_or(ClError(CL_INVALID_VALUE))?;
    Ok((m, offset, pattern))
}

#[entry(clEnqueueSVMMemFill)]
unsafe fn enqueue_svm_mem_fill(
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    // SAFETY: the application's wait list.
    let (q, wait) = unsafe { queue_and_wait(queue, num_events, events) }?;
    // SAFETY: the application's pattern.
    let (m, offset, pattern) =
        unsafe { fill_range(&q.context, svm_ptr as usize, pattern, pattern_size, size) }?;
    let e = transfer::fill(&q, CL_COMMAND_SVM_MEMFILL, &m, pattern, offset, size, &wait)?;
    // SAFETY: the application's event out-parameter.
    unsafe { finish(e, false, event) }
}

/// Map flags the spec allows: READ and WRITE in any combination, or WRITE_INVALIDATE_REGION
/// alone.
fn check_map_flags(flags: cl_map_flags) -> CLResult<()> {
    let rw = CL_MAP_READ | CL_MAP_WRITE;
    check(
        flags & !(rw | CL_MAP_WRITE_INVALIDATE_REGION) == 0
            && !(flags & CL_MAP_WRITE_INVALIDATE_REGION != 0 && flags & rw != 0),
        CL_INVALID_VALUE,
    )
}

#[entry(clEnqueueSVMMap)]
unsafe fn enqueue_svm_map(
    queue: cl_command_queue,
    blocking_map: cl_bool,
    flags: cl_map_flags,
    svm_ptr: *mut c_void,
    size: usize,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    // SAFETY: the application's wait list.
    let (q, wait) = unsafe { queue_and_wait(queue, num_events, events) }?;
    check(!svm_ptr.is_null() && size > 0, CL_INVALID_VALUE)?;
    check_map_flags(flags)?;
    let blocking = blocking_map != 0;
    let e = match svm::find_range(&q.context, svm_ptr as usize, size)? {
        // Device memory: its host copy is brought up to date (the map engine's
        // CL_MEM_USE_HOST_PTR path: the allocation's host pointer is the copy's).
        Some((m, offset)) if svm::mirrored(&m) => {
            let region = Mapped::Bytes { offset, size };
            let command = CL_COMMAND_SVM_MAP;
            transfer::map(&q, command, &m, flags, region, blocking, &wait)?.1
        }
        // Host-coherent memory: a map only orders the host's accesses after the commands
        // before it.
        found => {
            let keep = found.map(|(m, _)| m).into_iter().collect();
            q.enqueue_marker(CL_COMMAND_SVM_MAP, &wait, keep)?
        }
    };
    // SAFETY: the application's event out-parameter.
    unsafe { finish(e, blocking, event) }
}

/// The allocation holding `[ptr, ptr + size)`, kept by a command on it.
fn keep_of(context: &Context, ptr: usize, size: usize) -> CLResult<Vec<Arc<Mem>>> {
    Ok(svm::find_range(context, ptr, size)?
        .map(|(m, _)| m)
        .into_iter()
        .collect())
}

#[entry(clEnqueueSVMUnmap)]
unsafe fn enqueue_svm_unmap(
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    // SAFETY: the application's wait list.
    let (q, wait) = unsafe { queue_and_wait(queue, num_events, events) }?;
    check(!svm_ptr.is_null(), CL_INVALID_VALUE)?;
    let e = match svm::find(&q.context, svm_ptr as usize) {
        // A pointer that was never mapped has nothing to bring back: like host-coherent
        // memory's, its unmap only orders.
        Some((m, _)) if svm::mirrored(&m) && m.is_mapped(svm_ptr as usize) => {
            transfer::unmap(&q, CL_COMMAND_SVM_UNMAP, &m, svm_ptr, &wait)?
        }
        found => {
            let keep = found.map(|(m, _)| m).into_iter().collect();
            q.enqueue_marker(CL_COMMAND_SVM_UNMAP, &wait, keep)?
        }
    };
    // SAFETY: the application's event out-parameter.
    unsafe { finish(e, false, event) }
}

#[entry(clEnqueueSVMMigrateMem)]
unsafe fn enqueue_svm_migrate_mem(
    queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *const c_void,
    sizes: *const usize,
    flags: cl_mem_migration_flags,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    // SAFETY: the application's wait list.
    let (q, wait) = unsafe { queue_and_wait(queue, num_events, events) }?;
    check(
        num_svm_pointers != 0 && !svm_pointers.is_null(),
        CL_INVALID_VALUE,
    )?;
    let known = CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
    check(flags & !known == 0, CL_INVALID_VALUE)?;
    let n = num_svm_pointers as usize;
    // SAFETY: `n` pointers, and `n` sizes where sizes is not NULL (the spec's contract).
    let (pointers, sizes) = unsafe { (slice(svm_pointers, n), slice(sizes, n)) };
    let mut keep = vec![];
    for (i, &p) in pointers.iter().enumerate() {
        check(!p.is_null(), CL_INVALID_VALUE)?;
        // A size of 0 (or no sizes) means the whole allocation from the pointer.
        let size = sizes.get(i).copied().unwrap_or(0);
        keep.extend(keep_of(&q.context, p as usize, size)?);
    }
    // One memory for host and devices: nothing moves.
    let e = q.enqueue_marker(CL_COMMAND_SVM_MIGRATE_MEM, &wait, keep)?;
    // SAFETY: the application's event out-parameter.
    unsafe { finish(e, false, event) }
}

/// Whether a device of the kernel's context has SVM (CL_INVALID_OPERATION otherwise).
fn check_svm_context(k: &Kernel) -> CLResult<()> {
    let any = k
        .program
        .context
        .devices
        .iter()
        .any(|d| svm::capabilities(d) != 0);
    check(any, CL_INVALID_OPERATION)
}

#[entry(clSetKernelArgSVMPointer)]
fn set_kernel_arg_svm_pointer(
    kernel: cl_kernel,
    index: cl_uint,
    value: *const c_void,
) -> CLResult<()> {
    let k: Arc<Kernel> = obj(kernel)?;
    let arg = svm_pointer_arg(&k, index, value)?;
    k.set_arg(index as usize, arg);
    Ok(())
}

/// clSetKernelArgSVMPointer's checks (a mutable launch's SVM argument updates' too): the
/// argument `value` is for `k`'s argument `index`.
pub(super) fn svm_pointer_arg(
    k: &Kernel,
    index: cl_uint,
    value: *const c_void,
) -> CLResult<ArgValue> {
    check_svm_context(k)?;
    check(
        (index as usize) < k.num_args() as usize,
        CL_INVALID_ARG_INDEX,
    )?;
    check(
        super::kernel::is_pointer_arg(k, index as usize),
        CL_INVALID_ARG_VALUE,
    )?;
    Ok(ArgValue::Pointer(value as u64))
}

#[entry(clSetKernelArgDevicePointerEXT)]
fn set_kernel_arg_device_pointer(
    kernel: cl_kernel,
    index: cl_uint,
    value: cl_mem_device_address_ext,
) -> CLResult<()> {
    let k: Arc<Kernel> = obj(kernel)?;
    let any = k
        .program
        .context
        .devices
        .iter()
        .any(|d| d.has_device_addresses());
    check(any, CL_INVALID_OPERATION)?;
    check(
        (index as usize) < k.num_args() as usize,
        CL_INVALID_ARG_INDEX,
    )?;
    check(
        super::kernel::is_pointer_arg(&k, index as usize),
        CL_INVALID_ARG_VALUE,
    )?;
    k.set_arg(index as usize, ArgValue::Pointer(value));
    Ok(())
}

/// CL_MEM_DEVICE_ADDRESS_EXT: the buffer's address on each device of its context, for
/// buffers created with CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT (and their sub-buffers); else
/// CL_INVALID_OPERATION.
pub(super) fn device_addresses(m: &Mem) -> CLResult<Vec<cl_mem_device_address_ext>> {
    let root: &Mem = m.parent().map_or(m, |p| p);
    let asked = root
        .properties
        .chunks(2)
        .any(|p| p[0] == CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT && p.get(1) == Some(&1));
    check(asked && !m.is_image(), CL_INVALID_OPERATION)?;
    m.context
        .devices
        .iter()
        .map(|d| {
            let storage = m.storage_on(&d.vk()?)?;
            let base = storage
                .device_address()
                .ok_or(ClError(CL_INVALID_OPERATION))?;
            Ok(base + m.offset)
        })
        .collect()
}

/// The 64-bit pointers or device addresses of a clSetKernelExecInfo list (CL_INVALID_VALUE
/// for a size that is not a multiple of theirs).
///
/// # Safety
/// `value` points to `size` readable bytes.
unsafe fn addresses(size: usize, value: *const c_void) -> CLResult<Vec<u64>> {
    let width = std::mem::size_of::<u64>();
    check(
        size % width == 0 && (size == 0 || !value.is_null()),
        CL_INVALID_VALUE,
    )?;
    // SAFETY: `size` bytes at value (the caller's contract).
    Ok(unsafe { slice(value as *const u64, size / width) }.to_vec())
}

/// clSetKernelExecInfo.
///
/// # Safety
/// `value` points to `size` readable bytes.
pub(super) unsafe fn set_exec_info(
    k: &Kernel,
    name: cl_kernel_exec_info,
    size: usize,
    value: *const c_void,
) -> CLResult<()> {
    let mut info = k.exec_info.lock().clone();
    // SAFETY: as the caller guarantees.
    unsafe { apply_exec_info(k, &mut info, name, size, value) }?;
    *k.exec_info.lock() = info;
    Ok(())
}

/// clSetKernelExecInfo's change of `info`, an exec info of `k` (the kernel's, or a mutable
/// launch's own), checked.
///
/// # Safety
/// `value` points to `size` readable bytes.
pub(super) unsafe fn apply_exec_info(
    k: &Kernel,
    info: &mut svm::ExecInfo,
    name: cl_kernel_exec_info,
    size: usize,
    value: *const c_void,
) -> CLResult<()> {
    match name {
        CL_KERNEL_EXEC_INFO_SVM_PTRS => {
            check_svm_context(k)?;
            // SAFETY: `size` bytes at value (the caller's contract).
            let pointers = unsafe { addresses(size, value) }?;
            info.pointers = pointers.iter().map(|&p| p as usize).collect();
        }
        CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT => {
            // SAFETY: as above.
            info.device_pointers = unsafe { addresses(size, value) }?;
        }
        CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM => {
            check_svm_context(k)?;
            check(
                size == std::mem::size_of::<cl_bool>() && !value.is_null(),
                CL_INVALID_VALUE,
            )?;
            // SAFETY: a cl_bool at value.
            let on = unsafe { *(value as *const cl_bool) } != 0;
            // "CL_INVALID_OPERATION ... if param_value is CL_TRUE and no devices in the
            // context associated with kernel support fine-grain system SVM allocations."
            let system = k
                .program
                .context
                .devices
                .iter()
                .any(|d| svm::capabilities(d) & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM != 0);
            check(!on || system, CL_INVALID_OPERATION)?;
            info.fine_grain_system = on;
        }
        _ => return Err(ClError(CL_INVALID_VALUE)),
    }
    Ok(())
}
