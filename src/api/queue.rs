//! Command queues.

use super::info::{array, v, write};
use super::util::{obj, property_list, return_event, slice, wait_list};
use crate::cl::*;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::device_enqueue::DeviceQueue;
use crate::core::event::Event;
use crate::core::object::{handle, register, release, retain};
use crate::core::queue::Queue;
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

/// Out-of-order queues let independent commands of a batch overlap: a command waits only for
/// the pending events of its own queue in its wait list, a barrier, or (as the first of its
/// batch) the batches before it (docs/DECISIONS.md, "Queues and events").
const SUPPORTED: cl_command_queue_properties =
    CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
const KNOWN: cl_command_queue_properties = CL_QUEUE_PROFILING_ENABLE
    | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
    | CL_QUEUE_ON_DEVICE
    | CL_QUEUE_ON_DEVICE_DEFAULT;

fn create(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    array: Vec<cl_queue_properties>,
) -> CLResult<cl_command_queue> {
    let ctx: Arc<Context> = obj(context)?;
    let dev: Arc<Device> = obj(device)?;
    check(ctx.has_device(&dev), CL_INVALID_DEVICE)?;
    check(properties & !KNOWN == 0, CL_INVALID_VALUE)?;
    // On-device queues need CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE (else the value is invalid).
    check(
        properties & CL_QUEUE_ON_DEVICE == 0
            || properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0,
        CL_INVALID_VALUE,
    )?;
    check(
        properties & CL_QUEUE_ON_DEVICE_DEFAULT == 0 || properties & CL_QUEUE_ON_DEVICE != 0,
        CL_INVALID_VALUE,
    )?;
    if properties & CL_QUEUE_ON_DEVICE != 0 {
        return create_on_device(&ctx, &dev, properties, array);
    }
    check(properties & !SUPPORTED == 0, CL_INVALID_QUEUE_PROPERTIES)?;
    let q = Queue::new(&ctx, &dev, properties, array)?;
    Ok(register(q) as cl_command_queue)
}

/// An on-device queue (device-side enqueue, core::device_enqueue). With
/// CL_QUEUE_ON_DEVICE_DEFAULT, the device's default device queue: where there is one already,
/// that queue, retained ("attempts to create more than one default device queue ... return
/// the default device queue that has already been created and increment its retain count").
fn create_on_device(
    ctx: &Arc<Context>,
    dev: &Arc<Device>,
    properties: cl_command_queue_properties,
    array: Vec<cl_queue_properties>,
) -> CLResult<cl_command_queue> {
    use crate::core::device_enqueue as de;
    check(dev.has_device_enqueue(), CL_INVALID_QUEUE_PROPERTIES)?;
    let supported = SUPPORTED | CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT;
    check(properties & !supported == 0, CL_INVALID_QUEUE_PROPERTIES)?;
    let size = array
        .chunks(2)
        .find(|p| p.len() == 2 && p[0] as cl_uint == CL_QUEUE_SIZE)
        .map_or(de::PREFERRED_SIZE as u64, |p| p[1]);
    check(size <= de::MAX_SIZE as u64, CL_INVALID_VALUE)?;
    let default = properties & CL_QUEUE_ON_DEVICE_DEFAULT != 0;
    if let Some(q) = ctx.default_device_queue(dev).filter(|_| default) {
        let h = handle(&q) as cl_command_queue;
        retain::<DeviceQueue>(h as *const c_void)?;
        return Ok(h);
    }
    let q = DeviceQueue::new(ctx, dev, properties, array, size as u32);
    if default {
        ctx.set_default_device_queue(&q);
    }
    Ok(register(q) as cl_command_queue)
}

#[entry(clCreateCommandQueueWithProperties)]
unsafe fn create_command_queue_with_properties(
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_queue_properties,
) -> CLResult<cl_command_queue> {
    // SAFETY: properties is NULL or a 0-terminated list.
    let array = unsafe { property_list(properties) };
    let mut props = 0;
    for pair in array.chunks(2).filter(|c| c.len() == 2) {
        match pair[0] as cl_uint {
            CL_QUEUE_PROPERTIES => props = pair[1],
            // Only for on-device queues (checked below).
            CL_QUEUE_SIZE => {}
            _ => {
                obj::<Context, _>(context)?;
                return Err(ClError(CL_INVALID_VALUE));
            }
        }
    }
    if array
        .iter()
        .step_by(2)
        .any(|&n| n as cl_uint == CL_QUEUE_SIZE)
        && props & CL_QUEUE_ON_DEVICE == 0
    {
        obj::<Context, _>(context)?;
        return Err(ClError(CL_INVALID_VALUE));
    }
    create(context, device, props, array)
}

#[entry(clCreateCommandQueue)]
fn create_command_queue(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
) -> CLResult<cl_command_queue> {
    create(context, device, properties, vec![])
}

#[entry(clRetainCommandQueue, at_exit)]
fn retain_command_queue(queue: cl_command_queue) -> CLResult<()> {
    super::platform::ensure_init();
    if obj::<DeviceQueue, _>(queue).is_ok() {
        return retain::<DeviceQueue>(queue as *const c_void);
    }
    retain::<Queue>(queue as *const c_void)
}

#[entry(clReleaseCommandQueue, at_exit)]
fn release_command_queue(queue: cl_command_queue) -> CLResult<()> {
    super::platform::ensure_init();
    if obj::<DeviceQueue, _>(queue).is_ok() {
        return release::<DeviceQueue>(queue as *const c_void).map(drop);
    }
    // The spec: clReleaseCommandQueue performs an implicit flush.
    // At exit (after vkcl's exit handler) nothing reaches the GPU any more.
    if let Some(q) = release::<Queue>(queue as *const c_void)? {
        if !crate::shutdown::exiting() {
            q.flush()?;
        }
    }
    Ok(())
}

#[entry(clGetCommandQueueInfo, at_exit)]
unsafe fn get_command_queue_info(
    queue: cl_command_queue,
    param_name: cl_command_queue_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    // A host queue's or an on-device queue's (which has a size).
    let (context, device, refs, properties, properties_array, size) =
        match obj::<DeviceQueue, _>(queue) {
            Ok(q) => (
                q.context.clone(),
                q.device.clone(),
                q.base.api_refs(),
                q.properties,
                q.properties_array.clone(),
                Some(q.size),
            ),
            Err(_) => {
                let q: Arc<Queue> = obj(queue)?;
                let array = q.properties_array.clone();
                (
                    q.context.clone(),
                    q.device.clone(),
                    q.base.api_refs(),
                    q.properties,
                    array,
                    None,
                )
            }
        };
    let value = match param_name {
        CL_QUEUE_CONTEXT => v::<cl_context>(handle(&context) as cl_context),
        CL_QUEUE_DEVICE => v::<cl_device_id>(handle(&device) as cl_device_id),
        CL_QUEUE_REFERENCE_COUNT => v::<cl_uint>(refs),
        CL_QUEUE_PROPERTIES => v::<cl_command_queue_properties>(properties),
        CL_QUEUE_PROPERTIES_ARRAY => array::<cl_queue_properties>(&properties_array),
        // "CL_INVALID_COMMAND_QUEUE ... if command_queue is not a valid command-queue for
        // the device" (the query is for device queues).
        CL_QUEUE_SIZE => size.map_or(Err(ClError(CL_INVALID_COMMAND_QUEUE)), v::<cl_uint>),
        CL_QUEUE_DEVICE_DEFAULT => {
            let default = context.default_device_queue(&device);
            v::<cl_command_queue>(
                default.map_or(std::ptr::null_mut(), |q| handle(&q)) as cl_command_queue
            )
        }
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clSetCommandQueueProperty)]
fn set_command_queue_property(
    queue: cl_command_queue,
    _properties: cl_command_queue_properties,
    _enable: cl_bool,
    _old_properties: *mut cl_command_queue_properties,
) -> CLResult<()> {
    obj::<Queue, _>(queue)?;
    Err(ClError(CL_INVALID_OPERATION))
}

#[entry(clEnqueueMarkerWithWaitList)]
unsafe fn enqueue_marker_with_wait_list(
    queue: cl_command_queue,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    marker(queue, CL_COMMAND_MARKER, num_events, events, event)
}

#[entry(clEnqueueBarrierWithWaitList)]
unsafe fn enqueue_barrier_with_wait_list(
    queue: cl_command_queue,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    marker(queue, CL_COMMAND_BARRIER, num_events, events, event)
}

#[entry(clEnqueueMarker)]
unsafe fn enqueue_marker(queue: cl_command_queue, event: *mut cl_event) -> CLResult<()> {
    obj::<Queue, _>(queue)?;
    check(!event.is_null(), CL_INVALID_VALUE)?;
    marker(queue, CL_COMMAND_MARKER, 0, std::ptr::null(), event)
}

#[entry(clEnqueueBarrier)]
fn enqueue_barrier(queue: cl_command_queue) -> CLResult<()> {
    marker(
        queue,
        CL_COMMAND_BARRIER,
        0,
        std::ptr::null(),
        std::ptr::null_mut(),
    )
}

#[entry(clEnqueueWaitForEvents)]
unsafe fn enqueue_wait_for_events(
    queue: cl_command_queue,
    num_events: cl_uint,
    events: *const cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(queue)?;
    check(num_events > 0 && !events.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes num_events handles.
    for &h in unsafe { slice(events, num_events as usize) } {
        let e: Arc<Event> = obj(h)?;
        check(Arc::ptr_eq(&e.context, &q.context), CL_INVALID_CONTEXT)?;
    }
    marker(
        queue,
        CL_COMMAND_BARRIER,
        num_events,
        events,
        std::ptr::null_mut(),
    )
}

#[entry(clFlush)]
fn flush(queue: cl_command_queue) -> CLResult<()> {
    obj::<Queue, _>(queue)?.flush()
}

#[entry(clFinish)]
fn finish(queue: cl_command_queue) -> CLResult<()> {
    obj::<Queue, _>(queue)?.finish()
}

/// Markers and barriers: on an in-order queue both complete after every earlier command and
/// the events in their wait list, and order every later command after them.
fn marker(
    queue: cl_command_queue,
    command: cl_command_type,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(queue)?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    let e = q.enqueue_marker(command, &wait, vec![])?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { return_event(e, event) };
    Ok(())
}

/// Makes `command_queue`, an on-device queue of `device`, its default device queue: "CL_INVALID_
/// OPERATION if device does not support a replaceable default On-Device Queue", once the
/// context and the device are valid; CL_INVALID_COMMAND_QUEUE if the queue is not an
/// on-device queue of the device in the context.
#[entry(clSetDefaultDeviceCommandQueue)]
fn set_default_device_command_queue(
    context: cl_context,
    device: cl_device_id,
    command_queue: cl_command_queue,
) -> CLResult<()> {
    let ctx: Arc<Context> = obj(context)?;
    let dev: Arc<Device> = obj(device)?;
    check(ctx.has_device(&dev), CL_INVALID_DEVICE)?;
    check(dev.has_device_enqueue(), CL_INVALID_OPERATION)?;
    let q: Arc<DeviceQueue> = obj(command_queue)?;
    check(
        Arc::ptr_eq(&q.context, &ctx) && Arc::ptr_eq(&q.device, &dev),
        CL_INVALID_COMMAND_QUEUE,
    )?;
    ctx.set_default_device_queue(&q);
    Ok(())
}
