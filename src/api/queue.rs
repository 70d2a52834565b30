//! Command queues.

use super::info::{v, write};
use super::util::{obj, property_list, return_event, slice, wait_list};
use crate::cl::*;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::event::Event;
use crate::core::object::{handle, register, release, retain};
use crate::core::queue::Queue;
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;

/// Out-of-order queues are accepted and run their commands in order, which the spec allows
/// (out-of-order execution is permitted, not required); overlapping independent commands is
/// the asynchronous-engine issue's work.
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
    check(properties & !SUPPORTED == 0, CL_INVALID_QUEUE_PROPERTIES)?;
    let q = Queue::new(&ctx, &dev, properties, array)?;
    Ok(register(q) as cl_command_queue)
}

entry! {
    fn clCreateCommandQueueWithProperties(
        context: cl_context,
        device: cl_device_id,
        properties: *const cl_queue_properties,
    ) -> cl_command_queue, errcode_ret {
        // SAFETY: properties is NULL or a 0-terminated list.
        let array = unsafe { property_list(properties) };
        let mut props = 0;
        for pair in array.chunks(2).filter(|c| c.len() == 2) {
            match pair[0] as cl_uint {
                CL_QUEUE_PROPERTIES => props = pair[1],
                // Only meaningful for on-device queues, which are refused below.
                CL_QUEUE_SIZE => {}
                _ => {
                    obj::<Context, _>(context)?;
                    return Err(ClError(CL_INVALID_VALUE));
                }
            }
        }
        if array.iter().step_by(2).any(|&n| n as cl_uint == CL_QUEUE_SIZE) && props & CL_QUEUE_ON_DEVICE == 0 {
            obj::<Context, _>(context)?;
            return Err(ClError(CL_INVALID_VALUE));
        }
        create(context, device, props, array)
    }

    fn clCreateCommandQueue(
        context: cl_context,
        device: cl_device_id,
        properties: cl_command_queue_properties,
    ) -> cl_command_queue, errcode_ret {
        create(context, device, properties, vec![])
    }

    fn clRetainCommandQueue(queue: cl_command_queue) {
        super::platform::ensure_init();
        retain::<Queue>(queue as *const c_void)
    }

    fn clReleaseCommandQueue(queue: cl_command_queue) {
        super::platform::ensure_init();
        // The spec: clReleaseCommandQueue performs an implicit flush.
        if let Some(q) = release::<Queue>(queue as *const c_void)? {
            q.flush()?;
        }
        Ok(())
    }

    fn clGetCommandQueueInfo(
        queue: cl_command_queue,
        param_name: cl_command_queue_info,
        param_value_size: usize,
        param_value: *mut c_void,
        param_value_size_ret: *mut usize,
    ) {
        let q: Arc<Queue> = obj(queue)?;
        let value = match param_name {
            CL_QUEUE_CONTEXT => v(&handle(&q.context)),
            CL_QUEUE_DEVICE => v(&handle(&q.device)),
            CL_QUEUE_REFERENCE_COUNT => v(&q.base.api_refs()),
            CL_QUEUE_PROPERTIES => v(&q.properties),
            CL_QUEUE_PROPERTIES_ARRAY => v(&q.properties_array),
            CL_QUEUE_SIZE => Err(ClError(CL_INVALID_COMMAND_QUEUE)),
            CL_QUEUE_DEVICE_DEFAULT => v(&std::ptr::null_mut::<c_void>()),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }?;
        write(&value, param_value_size, param_value, param_value_size_ret)
    }

    fn clSetCommandQueueProperty(
        queue: cl_command_queue,
        properties: cl_command_queue_properties,
        enable: cl_bool,
        old_properties: *mut cl_command_queue_properties,
    ) {
        obj::<Queue, _>(queue)?;
        Err(ClError(CL_INVALID_OPERATION))
    }

    fn clEnqueueMarkerWithWaitList(
        queue: cl_command_queue,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) {
        marker(queue, CL_COMMAND_MARKER, num_events, events, event)
    }

    fn clEnqueueBarrierWithWaitList(
        queue: cl_command_queue,
        num_events: cl_uint,
        events: *const cl_event,
        event: *mut cl_event,
    ) {
        marker(queue, CL_COMMAND_BARRIER, num_events, events, event)
    }

    fn clEnqueueMarker(queue: cl_command_queue, event: *mut cl_event) {
        obj::<Queue, _>(queue)?;
        check(!event.is_null(), CL_INVALID_VALUE)?;
        marker(queue, CL_COMMAND_MARKER, 0, std::ptr::null(), event)
    }

    fn clEnqueueBarrier(queue: cl_command_queue) {
        marker(queue, CL_COMMAND_BARRIER, 0, std::ptr::null(), std::ptr::null_mut())
    }

    fn clEnqueueWaitForEvents(queue: cl_command_queue, num_events: cl_uint, events: *const cl_event) {
        let q: Arc<Queue> = obj(queue)?;
        check(num_events > 0 && !events.is_null(), CL_INVALID_VALUE)?;
        // SAFETY: the application passes num_events handles.
        for &h in unsafe { slice(events, num_events as usize) } {
            let e: Arc<Event> = obj(h)?;
            check(Arc::ptr_eq(&e.context, &q.context), CL_INVALID_CONTEXT)?;
        }
        marker(queue, CL_COMMAND_BARRIER, num_events, events, std::ptr::null_mut())
    }

    fn clFlush(queue: cl_command_queue) {
        obj::<Queue, _>(queue)?.flush()
    }

    fn clFinish(queue: cl_command_queue) {
        obj::<Queue, _>(queue)?.finish()
    }
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
    let wait = wait_list(num_events, events, &q.context)?;
    let e = q.enqueue_marker(command, &wait, vec![])?;
    return_event(e, event);
    Ok(())
}
