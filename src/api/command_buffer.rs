//! cl_khr_command_buffer: command-buffers, their commands, and their enqueue.
//!
//! Without cl_khr_command_buffer_multi_device a buffer has one queue, and each command's
//! `command_queue` must be NULL. No command property is defined, and without
//! cl_khr_command_buffer_mutable_dispatch no command returns a mutable handle.

use super::info::{array, v, write};
use super::memory::buffer_on;
use super::util::{obj, property_list, return_event, slice, wait_list};
use crate::cl::*;
use crate::core::command_buffer::{work_groups, CommandBuffer, MutableCommand, MutableLaunch};
use crate::core::image::{self, ImageCopy};
use crate::core::kernel::{self, Kernel};
use crate::core::memory::Mem;
use crate::core::object::{handle, register, release, retain};
use crate::core::queue::Queue;
use crate::core::svm;
use crate::core::transfer;
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

/// The queue properties a command-buffer's queue may have
/// (CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR): all a queue can have.
pub(crate) const SUPPORTED_QUEUE_PROPERTIES: cl_command_queue_properties =
    CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
/// CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR: simultaneous use (a bit mutable dispatch
/// defines since version 0.9.8 of the base: a buffer may be updated while replays of it are
/// pending; every buffer may be enqueued while pending, as its replay is a secondary command
/// buffer begun with SIMULTANEOUS_USE). Not KERNEL_PRINTF: kernels that print are not
/// recorded.
pub(crate) const CAPABILITIES: cl_device_command_buffer_capabilities_khr =
    CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR;

/// The command-buffer flags the extensions define: simultaneous use, mutable (mutable
/// dispatch), device-side sync (device-side enqueue).
const KNOWN_FLAGS: cl_command_buffer_flags_khr = 0b111;
const SUPPORTED_FLAGS: cl_command_buffer_flags_khr =
    CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR | CL_COMMAND_BUFFER_MUTABLE_KHR;

#[entry(clCreateCommandBufferKHR)]
unsafe fn create_command_buffer(
    num_queues: cl_uint,
    queues: *const cl_command_queue,
    properties: *const cl_command_buffer_properties_khr,
) -> CLResult<cl_command_buffer_khr> {
    check(num_queues == 1 && !queues.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes num_queues (1) queues.
    let q: Arc<Queue> = obj(unsafe { *queues })?;
    // SAFETY: properties is NULL or a 0-terminated list.
    let list = unsafe { property_list(properties) };
    let mut flags = None;
    let mut asserts = None;
    for pair in list.chunks(2).filter(|c| c.len() == 2) {
        // "CL_INVALID_VALUE if values specified in properties are not valid, or if the same
        // property name is specified more than once."
        if pair[0] == CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR {
            let known = CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR;
            check(asserts.is_none() && pair[1] & !known == 0, CL_INVALID_VALUE)?;
            asserts = Some(pair[1]);
            continue;
        }
        check(
            pair[0] == CL_COMMAND_BUFFER_FLAGS_KHR && flags.is_none(),
            CL_INVALID_VALUE,
        )?;
        // The device-side sync flag of a layered extension is a valid value this device
        // does not support.
        check(pair[1] & !KNOWN_FLAGS == 0, CL_INVALID_VALUE)?;
        check(pair[1] & !SUPPORTED_FLAGS == 0, CL_INVALID_PROPERTY)?;
        flags = Some(pair[1]);
    }
    check(list.last().is_none_or(|&l| l == 0), CL_INVALID_VALUE)?;
    check(
        q.properties & !SUPPORTED_QUEUE_PROPERTIES == 0,
        CL_INCOMPATIBLE_COMMAND_QUEUE_KHR,
    )?;
    let cb = CommandBuffer::new(&q, (flags.unwrap_or(0), asserts.unwrap_or(0)), list)?;
    Ok(register(cb) as cl_command_buffer_khr)
}

#[entry(clFinalizeCommandBufferKHR)]
fn finalize_command_buffer(command_buffer: cl_command_buffer_khr) -> CLResult<()> {
    obj::<CommandBuffer, _>(command_buffer)?.finalize()
}

#[entry(clRetainCommandBufferKHR)]
fn retain_command_buffer(command_buffer: cl_command_buffer_khr) -> CLResult<()> {
    super::platform::ensure_init();
    retain::<CommandBuffer>(command_buffer as *const c_void)
}

#[entry(clReleaseCommandBufferKHR, at_exit)]
fn release_command_buffer(command_buffer: cl_command_buffer_khr) -> CLResult<()> {
    super::platform::ensure_init();
    // Its pending replays hold it until they complete.
    release::<CommandBuffer>(command_buffer as *const c_void).map(|_| ())
}

#[entry(clGetCommandBufferInfoKHR)]
unsafe fn get_command_buffer_info(
    command_buffer: cl_command_buffer_khr,
    param_name: cl_command_buffer_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let cb: Arc<CommandBuffer> = obj(command_buffer)?;
    let value = match param_name {
        CL_COMMAND_BUFFER_QUEUES_KHR => {
            array::<cl_command_queue>(&[handle(&cb.queue) as cl_command_queue])
        }
        CL_COMMAND_BUFFER_NUM_QUEUES_KHR => v::<cl_uint>(1u32),
        CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR => v::<cl_uint>(cb.base.api_refs()),
        CL_COMMAND_BUFFER_STATE_KHR => v::<cl_command_buffer_state_khr>(cb.state()),
        CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR => {
            array::<cl_command_buffer_properties_khr>(&cb.properties)
        }
        CL_COMMAND_BUFFER_CONTEXT_KHR => v::<cl_context>(handle(cb.context()) as cl_context),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clEnqueueCommandBufferKHR)]
unsafe fn enqueue_command_buffer(
    num_queues: cl_uint,
    queues: *mut cl_command_queue,
    command_buffer: cl_command_buffer_khr,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let cb: Arc<CommandBuffer> = obj(command_buffer)?;
    check((num_queues == 0) == queues.is_null(), CL_INVALID_VALUE)?;
    // "CL_INVALID_VALUE if num_queues is > 0 and not the same value as num_queues set on
    // command_buffer creation."
    check(num_queues <= 1, CL_INVALID_VALUE)?;
    let q = match num_queues {
        0 => cb.queue.clone(),
        // SAFETY: the application passes num_queues (1) queues.
        _ => obj::<Queue, _>(unsafe { *queues })?,
    };
    check(Arc::ptr_eq(&q.context, cb.context()), CL_INVALID_CONTEXT)?;
    // "A compatible command-queue is defined as a command-queue with identical properties
    // targeting the same device and in the same OpenCL context" (queue substitution): it
    // runs the same Vulkan commands, ordered as they were recorded for.
    check(
        Arc::ptr_eq(&q.device, &cb.queue.device) && q.properties == cb.queue.properties,
        CL_INCOMPATIBLE_COMMAND_QUEUE_KHR,
    )?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, cb.context()) }?;
    let e = cb.enqueue(&q, &wait)?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { return_event(e, event) };
    Ok(())
}

/// What clUpdateMutableCommandsKHR can change: arguments (SVM ones included), sizes,
/// offsets, SVM exec info.
pub(crate) const MUTABLE_CAPABILITIES: cl_bitfield = CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR
    | CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR
    | CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR
    | CL_MUTABLE_DISPATCH_ARGUMENTS_KHR
    | CL_MUTABLE_DISPATCH_EXEC_INFO_KHR;

/// CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR: `MUTABLE_CAPABILITIES`, without exec info on
/// a device without SVM.
pub(crate) fn mutable_capabilities(device: &crate::core::device::Device) -> cl_bitfield {
    match svm::capabilities(device) {
        0 => MUTABLE_CAPABILITIES & !CL_MUTABLE_DISPATCH_EXEC_INFO_KHR,
        _ => MUTABLE_CAPABILITIES,
    }
}

/// A launch's properties: the fields a mutable launch lets change (every field the device
/// can change when not given), its assertions, and the list as given (with its 0; empty for NULL). Names
/// are read one at a time, so an unknown one ends the list (CL_INVALID_VALUE).
///
/// # Safety
/// `properties` is NULL or a 0-terminated list of (name, value) pairs.
unsafe fn launch_properties(
    properties: *const cl_command_properties_khr,
) -> CLResult<((cl_bitfield, cl_bitfield), Vec<cl_command_properties_khr>)> {
    let (mut fields, mut asserts, mut list) = (None, None, vec![]);
    let mut at = properties;
    while !at.is_null() {
        // SAFETY: inside the list, read up to its terminator.
        let name = unsafe { *at };
        list.push(name);
        if name == 0 {
            break;
        }
        let (slot, known) = match name {
            CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR => (&mut fields, MUTABLE_CAPABILITIES),
            CL_MUTABLE_DISPATCH_ASSERTS_KHR => (
                &mut asserts,
                CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR,
            ),
            _ => return Err(ClError(CL_INVALID_VALUE)),
        };
        // SAFETY: a known name is followed by its value.
        let value = unsafe { *at.add(1) };
        check(slot.is_none() && value & !known == 0, CL_INVALID_VALUE)?;
        *slot = Some(value);
        list.push(value);
        // SAFETY: the next name, inside the list.
        at = unsafe { at.add(2) };
    }
    Ok((
        (fields.unwrap_or(MUTABLE_CAPABILITIES), asserts.unwrap_or(0)),
        list,
    ))
}

/// The checks every command-recording entry point starts with, in the spec's order; returns
/// the buffer and the sync points the command waits for.
///
/// # Safety
/// `properties` is NULL or a 0-terminated list; `sync_points` is NULL or points to
/// `num_sync_points` values.
unsafe fn recording(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    num_sync_points: cl_uint,
    sync_points: *const cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<(Arc<CommandBuffer>, Vec<cl_sync_point_khr>)> {
    let cb: Arc<CommandBuffer> = obj(command_buffer)?;
    // "If the cl_khr_command_buffer_multi_device extension is not supported, ...
    // command_queue must be NULL." (Checked after the buffer, as the CTS expects.)
    check(command_queue.is_null(), CL_INVALID_COMMAND_QUEUE)?;
    // No command property is defined (so only the terminator is read); without mutable
    // dispatch no handle is returned.
    // SAFETY: as the caller guarantees.
    check(
        properties.is_null() || unsafe { *properties } == 0,
        CL_INVALID_VALUE,
    )?;
    check(mutable_handle.is_null(), CL_INVALID_VALUE)?;
    cb.check_recording()?;
    check(
        (num_sync_points == 0) == sync_points.is_null(),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
    )?;
    // SAFETY: as the caller guarantees.
    let wait = unsafe { slice(sync_points, num_sync_points as usize) }.to_vec();
    Ok((cb, wait))
}

/// Writes a command's sync point to the application's out-parameter (NULL or a sync point).
///
/// # Safety
/// `out` is NULL or points to a writable `cl_sync_point_khr`.
unsafe fn return_sync_point(sync_point: cl_sync_point_khr, out: *mut cl_sync_point_khr) {
    if !out.is_null() {
        // SAFETY: as the caller guarantees.
        unsafe { *out = sync_point };
    }
}

#[entry(clCommandBarrierWithWaitListKHR)]
unsafe fn command_barrier_with_wait_list(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    let s = cb.barrier(&wait)?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(s, sync_point) };
    Ok(())
}

#[entry(clCommandNDRangeKernelKHR)]
unsafe fn command_nd_range_kernel(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_offset: *const usize,
    global_size: *const usize,
    local_size: *const usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them (the properties and
    // the handle are the launch's own: none given here).
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            std::ptr::null(),
            num_sync_points,
            sync_point_wait_list,
            std::ptr::null_mut(),
        )
    }?;
    // SAFETY: NULL or a 0-terminated list, as the spec requires.
    let (fields, props) = unsafe { launch_properties(properties) }?;
    let k: Arc<Kernel> = obj(kernel)?;
    // SAFETY: the application passes the sizes as the spec requires.
    let nd = unsafe {
        super::kernel::nd_range(
            &cb.queue,
            &k,
            work_dim,
            global_offset,
            global_size,
            local_size,
        )
    }?;
    // "CL_INVALID_OPERATION if the device associated with command_queue does not support
    // CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR and kernel contains a printf call."
    check(!k.reflection.may_use_printf, CL_INVALID_OPERATION)?;
    // Likewise without CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR for a kernel that
    // enqueues kernels (core::device_enqueue: its children run in its launch's host part).
    check(!k.reflection.device_queue, CL_INVALID_OPERATION)?;
    // The arguments as they are now: later clSetKernelArg calls do not change the command.
    // Those of a mutable launch whose arguments may change may be set later, by an update
    // (the buffer is Finalized, not Executable, until then).
    let deferrable = !mutable_handle.is_null() && fields.0 & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR != 0;
    let args = match deferrable {
        true => k.args_set(),
        false => k.args()?.into_iter().map(Some).collect(),
    };
    let s = if mutable_handle.is_null() {
        let args = args.into_iter().flatten().collect();
        let launch = kernel::prepare(&cb.queue, &k, args, &nd)?;
        // Held across the buffer's lock (as `kernel::enqueue_as` does): a launch that fails
        // to record drops its memory objects under it, and the arguments are weak references.
        let held = launch.as_ref().map(kernel::Prepared::memory);
        let s = cb.record(&wait, |rec| match launch {
            Some(launch) => Ok(launch.record(rec)?.keep),
            None => Ok(vec![]),
        });
        drop(held);
        s?
    } else {
        let command = MutableCommand::new(&cb, &k, fields, props, args, nd);
        let s = cb.record_mutable(&wait, &command)?;
        // SAFETY: not NULL: the application's handle out-parameter.
        unsafe { *mutable_handle = register(command) as cl_mutable_command_khr };
        s
    };
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(s, sync_point) };
    Ok(())
}

#[entry(clCommandCopyBufferKHR)]
unsafe fn command_copy_buffer(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    let (s, d) = (
        buffer_on(&cb.queue, src_buffer)?,
        buffer_on(&cb.queue, dst_buffer)?,
    );
    super::memory::check_copy(&s, &d, src_offset, dst_offset, size)?;
    // Prepared here, outside the buffer's lock; by the copy kernel where clEnqueueCopyBuffer
    // would take it.
    let copy = transfer::LinearCopy::new(&cb.queue, &s, &d, src_offset, dst_offset, size)?;
    let p = cb.record(&wait, |rec| Ok(copy.record(rec)?.keep))?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

#[entry(clCommandCopyBufferRectKHR)]
unsafe fn command_copy_buffer_rect(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    let (s, d) = (
        buffer_on(&cb.queue, src_buffer)?,
        buffer_on(&cb.queue, dst_buffer)?,
    );
    let pitches = [
        src_row_pitch,
        src_slice_pitch,
        dst_row_pitch,
        dst_slice_pitch,
    ];
    // SAFETY: the application passes the origins and region as the spec requires.
    let (from, to, region) =
        unsafe { super::memory::copy_rects(&s, &d, src_origin, dst_origin, region, pitches) }?;
    let copy = transfer::Copy::new(&cb.queue.vk, &s, &d, from, to, region)?;
    let p = cb.record(&wait, |rec| Ok(copy.record(rec).keep))?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

#[entry(clCommandFillBufferKHR)]
unsafe fn command_fill_buffer(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    let m = buffer_on(&cb.queue, buffer)?;
    // SAFETY: the application passes pattern_size bytes at pattern (copied when recorded).
    let pattern = unsafe { super::memory::fill_pattern(&m, pattern, pattern_size, offset, size) }?;
    let p = record_fill(&cb, &wait, &m, pattern, offset, size)?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

/// Records a fill of `size` bytes of a buffer (or an SVM allocation) from `offset`, checked
/// (its pattern copied into the recording).
fn record_fill(
    cb: &CommandBuffer,
    wait: &[cl_sync_point_khr],
    m: &Arc<Mem>,
    pattern: &[u8],
    offset: usize,
    size: usize,
) -> CLResult<cl_sync_point_khr> {
    cb.record(wait, |rec| {
        transfer::record_fill(rec, &cb.queue.vk, m, pattern, offset, size)?;
        Ok(vec![m.clone()])
    })
}

/// Records an image copy checked by the `super::image` helpers.
fn record_image_copy(
    cb: &CommandBuffer,
    wait: &[cl_sync_point_khr],
    (src, src_o, dst, dst_o, r): super::image::ImageCopyArgs,
    buffer_offset: usize,
) -> CLResult<cl_sync_point_khr> {
    let copy = ImageCopy::new(&cb.queue, &src, src_o, &dst, dst_o, r, buffer_offset)?;
    cb.record(wait, |rec| Ok(copy.record(rec).keep))
}

#[entry(clCommandCopyImageKHR)]
unsafe fn command_copy_image(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    // SAFETY: the application passes the origins and region as the spec requires.
    let args = unsafe {
        super::image::copy_image_args(
            &cb.queue, src_image, dst_image, src_origin, dst_origin, region,
        )
    }?;
    let p = record_image_copy(&cb, &wait, args, 0)?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

#[entry(clCommandCopyImageToBufferKHR)]
unsafe fn command_copy_image_to_buffer(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    // SAFETY: the application passes the origin and region as the spec requires.
    let args = unsafe {
        super::image::image_buffer_args(
            &cb.queue, src_image, src_origin, region, dst_buffer, dst_offset, true,
        )
    }?;
    let p = record_image_copy(&cb, &wait, args, dst_offset)?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

#[entry(clCommandCopyBufferToImageKHR)]
unsafe fn command_copy_buffer_to_image(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    // SAFETY: the application passes the origin and region as the spec requires.
    let args = unsafe {
        super::image::image_buffer_args(
            &cb.queue, dst_image, dst_origin, region, src_buffer, src_offset, false,
        )
    }?;
    let p = record_image_copy(&cb, &wait, args, src_offset)?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

#[entry(clCommandFillImageKHR)]
unsafe fn command_fill_image(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    // SAFETY: the application passes the color, origin and region as the spec requires.
    let (m, color, o, r) =
        unsafe { super::image::fill_image_args(&cb.queue, image, fill_color, origin, region) }?;
    let p = cb.record(&wait, |rec| {
        image::record_fill(rec, &cb.queue, &m, color, o, r)?;
        Ok(vec![m.clone()])
    })?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

#[entry(clUpdateMutableCommandsKHR)]
unsafe fn update_mutable_commands(
    command_buffer: cl_command_buffer_khr,
    num_configs: cl_uint,
    config_types: *const cl_command_buffer_update_type_khr,
    configs: *const *const c_void,
) -> CLResult<()> {
    let cb: Arc<CommandBuffer> = obj(command_buffer)?;
    // "CL_INVALID_OPERATION if command_buffer has not been finalized" or was not created
    // with CL_COMMAND_BUFFER_MUTABLE_KHR.
    check(
        cb.flags & CL_COMMAND_BUFFER_MUTABLE_KHR != 0,
        CL_INVALID_OPERATION,
    )?;
    check(
        cb.state() != CL_COMMAND_BUFFER_STATE_RECORDING_KHR,
        CL_INVALID_OPERATION,
    )?;
    check(
        num_configs > 0 && !config_types.is_null() && !configs.is_null(),
        CL_INVALID_VALUE,
    )?;
    // SAFETY: the application passes num_configs types and configs.
    let (types, configs) = unsafe {
        (
            slice(config_types, num_configs as usize),
            slice(configs, num_configs as usize),
        )
    };
    let mut changes = Vec::with_capacity(configs.len());
    for (&ty, &config) in types.iter().zip(configs) {
        check(
            ty == CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR && !config.is_null(),
            CL_INVALID_VALUE,
        )?;
        // SAFETY: a dispatch config, as its type says.
        let config = unsafe { &*(config as *const cl_mutable_dispatch_config_khr) };
        // SAFETY: the config's lists and sizes as the spec requires them.
        changes.push(unsafe { dispatch_change(&cb, config) }?);
    }
    cb.update(changes)
}

/// One command's new arguments and geometry, from its config, checked.
///
/// # Safety
/// The config's lists point to their counts of entries; its sizes are NULL or point to
/// `work_dim` values.
unsafe fn dispatch_change(
    cb: &Arc<CommandBuffer>,
    config: &cl_mutable_dispatch_config_khr,
) -> CLResult<(Arc<MutableCommand>, MutableLaunch)> {
    let command: Arc<MutableCommand> = obj(config.command)?;
    check(
        std::ptr::eq(command.buffer.as_ptr(), Arc::as_ptr(cb)),
        CL_INVALID_MUTABLE_COMMAND_KHR,
    )?;
    check(
        (config.num_args == 0) == config.arg_list.is_null()
            && (config.num_svm_args == 0) == config.arg_svm_list.is_null()
            && (config.num_exec_infos == 0) == config.exec_info_list.is_null(),
        CL_INVALID_VALUE,
    )?;
    let allowed = |field: cl_bitfield, given: bool| {
        check(!given || command.fields & field != 0, CL_INVALID_OPERATION)
    };
    allowed(
        CL_MUTABLE_DISPATCH_ARGUMENTS_KHR,
        config.num_args > 0 || config.num_svm_args > 0,
    )?;
    allowed(CL_MUTABLE_DISPATCH_EXEC_INFO_KHR, config.num_exec_infos > 0)?;
    allowed(
        CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR,
        !config.global_work_offset.is_null(),
    )?;
    allowed(
        CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR,
        !config.global_work_size.is_null(),
    )?;
    allowed(
        CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR,
        !config.local_work_size.is_null(),
    )?;
    let (mut args, old, mut info) = command.launch();
    // The launch's dimensions do not change.
    check(
        config.work_dim == 0 || config.work_dim == old.work_dim,
        CL_INVALID_VALUE,
    )?;
    // SAFETY: the application passes num_args arguments.
    for a in unsafe { slice(config.arg_list, config.num_args as usize) } {
        // SAFETY: each argument's value as clSetKernelArg takes it.
        let value = unsafe {
            super::kernel::arg_value(&command.kernel, a.arg_index, a.arg_size, a.arg_value)
        }?;
        args[a.arg_index as usize] = Some(value);
    }
    // SAFETY: the application passes num_svm_args SVM arguments.
    for a in unsafe { slice(config.arg_svm_list, config.num_svm_args as usize) } {
        let value = super::svm::svm_pointer_arg(&command.kernel, a.arg_index, a.arg_value)?;
        args[a.arg_index as usize] = Some(value);
    }
    // SAFETY: the application passes num_exec_infos exec infos.
    for e in unsafe { slice(config.exec_info_list, config.num_exec_infos as usize) } {
        // SAFETY: each value as clSetKernelExecInfo takes it.
        unsafe {
            super::svm::apply_exec_info(
                &command.kernel,
                &mut info,
                e.param_name,
                e.param_value_size,
                e.param_value,
            )
        }?;
    }
    let or = |given: *const usize, old: &[usize; 3]| {
        if given.is_null() {
            old.as_ptr()
        } else {
            given
        }
    };
    let local = match (config.local_work_size.is_null(), &old.local) {
        (false, _) => config.local_work_size,
        (true, Some(l)) => l.as_ptr(),
        (true, None) => std::ptr::null(),
    };
    // "CL_INVALID_WORK_GROUP_SIZE" where the buffer or the launch asserted no additional
    // work-groups and the update would add some (or cannot tell: no local size).
    if command.asserts & CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR != 0 {
        // SAFETY: work_dim values where given.
        let given = |p: *const usize| unsafe { slice(p, old.work_dim as usize) };
        let mut nd = old.clone();
        nd.global[..given(config.global_work_size).len()]
            .copy_from_slice(given(config.global_work_size));
        let local = match given(config.local_work_size) {
            [] => old.local,
            l => Some(std::array::from_fn(|d| l.get(d).copied().unwrap_or(1))),
        };
        let local = local.ok_or(ClError(CL_INVALID_WORK_GROUP_SIZE))?;
        check(
            work_groups(&nd, Some(&local)) <= command.groups,
            CL_INVALID_WORK_GROUP_SIZE,
        )?;
    }
    // SAFETY: each size is the config's (work_dim values) or the launch's own.
    let nd = unsafe {
        super::kernel::nd_range(
            &cb.queue,
            &command.kernel,
            old.work_dim,
            or(config.global_work_offset, &old.offset),
            or(config.global_work_size, &old.global),
            local,
        )
    }?;
    Ok((command, (args, nd, info)))
}

#[entry(clGetMutableCommandInfoKHR)]
unsafe fn get_mutable_command_info(
    command: cl_mutable_command_khr,
    param_name: cl_mutable_command_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let c: Arc<MutableCommand> = obj(command)?;
    let cb = c
        .buffer
        .upgrade()
        .ok_or(ClError(CL_INVALID_MUTABLE_COMMAND_KHR))?;
    let (_, nd, _) = c.launch();
    let dims = nd.work_dim as usize;
    let value = match param_name {
        CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR => {
            v::<cl_command_queue>(handle(&cb.queue) as cl_command_queue)
        }
        CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR => {
            v::<cl_command_buffer_khr>(handle(&cb) as cl_command_buffer_khr)
        }
        CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR => v::<cl_command_type>(CL_COMMAND_NDRANGE_KERNEL),
        CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR => {
            array::<cl_command_properties_khr>(&c.properties)
        }
        CL_MUTABLE_DISPATCH_KERNEL_KHR => v::<cl_kernel>(handle(&c.kernel) as cl_kernel),
        CL_MUTABLE_DISPATCH_DIMENSIONS_KHR => v::<cl_uint>(nd.work_dim),
        CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR => array::<usize>(&nd.offset[..dims]),
        CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR => array::<usize>(&nd.global[..dims]),
        // A launch given no local size reports zeros.
        CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR => {
            array::<usize>(&nd.local.unwrap_or([0; 3])[..dims])
        }
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

/// The checks clCommandSVMMemcpyKHR and clCommandSVMMemFillKHR start with: `recording`'s,
/// then CL_INVALID_OPERATION where the buffer's device has no SVM.
///
/// # Safety
/// As `recording`.
unsafe fn svm_recording(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<(Arc<CommandBuffer>, Vec<cl_sync_point_khr>)> {
    // SAFETY: as the caller guarantees.
    let (cb, wait) = unsafe {
        recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    check(
        svm::capabilities(&cb.queue.device) != 0,
        CL_INVALID_OPERATION,
    )?;
    Ok((cb, wait))
}

#[entry(clCommandSVMMemcpyKHR)]
unsafe fn command_svm_memcpy(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        svm_recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    let ranges = super::svm::memcpy_ranges(cb.context(), dst_ptr as usize, src_ptr as usize, size)?;
    // A replay runs on the device alone: both sides must be SVM allocations (the devices
    // have no system SVM), which the GPU copies as buffers.
    let (Some((s, so)), Some((d, doff))) = ranges else {
        return Err(ClError(CL_INVALID_VALUE));
    };
    let copy = transfer::Copy::linear(&cb.queue.vk, &s, &d, so, doff, size)?;
    let p = cb.record(&wait, |rec| Ok(copy.record(rec).keep))?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

#[entry(clCommandSVMMemFillKHR)]
unsafe fn command_svm_mem_fill(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_sync_points: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    // SAFETY: the application's arguments, as the spec requires them.
    let (cb, wait) = unsafe {
        svm_recording(
            command_buffer,
            command_queue,
            properties,
            num_sync_points,
            sync_point_wait_list,
            mutable_handle,
        )
    }?;
    // SAFETY: pattern_size bytes at pattern (copied when recorded), as the spec requires.
    let (m, offset, pattern) = unsafe {
        super::svm::fill_range(cb.context(), svm_ptr as usize, pattern, pattern_size, size)
    }?;
    let p = record_fill(&cb, &wait, &m, pattern, offset, size)?;
    // SAFETY: the application's out-parameter.
    unsafe { return_sync_point(p, sync_point) };
    Ok(())
}

/// The extension's entry points, for clGetExtensionFunctionAddress*.
pub(super) fn entry_point(name: &str) -> *mut c_void {
    match name {
        "clCreateCommandBufferKHR" => clCreateCommandBufferKHR as *mut c_void,
        "clFinalizeCommandBufferKHR" => clFinalizeCommandBufferKHR as *mut c_void,
        "clRetainCommandBufferKHR" => clRetainCommandBufferKHR as *mut c_void,
        "clReleaseCommandBufferKHR" => clReleaseCommandBufferKHR as *mut c_void,
        "clGetCommandBufferInfoKHR" => clGetCommandBufferInfoKHR as *mut c_void,
        "clEnqueueCommandBufferKHR" => clEnqueueCommandBufferKHR as *mut c_void,
        "clCommandBarrierWithWaitListKHR" => clCommandBarrierWithWaitListKHR as *mut c_void,
        "clCommandNDRangeKernelKHR" => clCommandNDRangeKernelKHR as *mut c_void,
        "clCommandCopyBufferKHR" => clCommandCopyBufferKHR as *mut c_void,
        "clCommandCopyBufferRectKHR" => clCommandCopyBufferRectKHR as *mut c_void,
        "clCommandFillBufferKHR" => clCommandFillBufferKHR as *mut c_void,
        "clCommandCopyImageKHR" => clCommandCopyImageKHR as *mut c_void,
        "clCommandCopyImageToBufferKHR" => clCommandCopyImageToBufferKHR as *mut c_void,
        "clCommandCopyBufferToImageKHR" => clCommandCopyBufferToImageKHR as *mut c_void,
        "clCommandFillImageKHR" => clCommandFillImageKHR as *mut c_void,
        "clCommandSVMMemcpyKHR" => clCommandSVMMemcpyKHR as *mut c_void,
        "clCommandSVMMemFillKHR" => clCommandSVMMemFillKHR as *mut c_void,
        "clUpdateMutableCommandsKHR" => clUpdateMutableCommandsKHR as *mut c_void,
        "clGetMutableCommandInfoKHR" => clGetMutableCommandInfoKHR as *mut c_void,
        _ => std::ptr::null_mut(),
    }
}
