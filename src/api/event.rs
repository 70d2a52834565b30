//! Events.

use super::info::{v, write};
use super::util::{obj, slice};
use crate::cl::*;
use crate::core::context::Context;
use crate::core::event::Event;
use crate::core::object::{handle, register, release, retain};
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

pub type EventCallback = unsafe extern "C" fn(cl_event, cl_int, *mut c_void);

#[entry(clWaitForEvents)]
unsafe fn wait_for_events(num_events: cl_uint, event_list: *const cl_event) -> CLResult<()> {
    check(num_events > 0 && !event_list.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes num_events handles.
    let handles = unsafe { slice(event_list, num_events as usize) };
    let events = handles
        .iter()
        .map(|&h| obj::<Event, _>(h))
        .collect::<Result<Vec<_>, _>>()?;
    check(
        events
            .iter()
            .all(|e| Arc::ptr_eq(&e.context, &events[0].context)),
        CL_INVALID_CONTEXT,
    )?;
    let mut result = Ok(());
    for e in &events {
        if e.wait().is_err() {
            result = Err(ClError(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST));
        }
    }
    result
}

#[entry(clGetEventInfo, at_exit)]
unsafe fn get_event_info(
    event: cl_event,
    param_name: cl_event_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let e: Arc<Event> = obj(event)?;
    let value = match param_name {
        CL_EVENT_COMMAND_QUEUE => v::<cl_command_queue>(
            e.queue.as_ref().map_or(std::ptr::null_mut(), handle) as cl_command_queue,
        ),
        CL_EVENT_CONTEXT => v::<cl_context>(handle(&e.context) as cl_context),
        CL_EVENT_COMMAND_TYPE => v::<cl_command_type>(e.command_type),
        CL_EVENT_COMMAND_EXECUTION_STATUS => {
            // Polling must make progress: submit the command's batch.
            // Not after vkcl's exit handler: nothing reaches the GPU any more.
            if let Some(q) = e.queue.as_ref().filter(|_| !crate::shutdown::exiting()) {
                q.flush_to(e.value)?;
            }
            v::<cl_int>(e.status())
        }
        CL_EVENT_REFERENCE_COUNT => v::<cl_uint>(e.base.api_refs()),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clRetainEvent, at_exit)]
fn retain_event(event: cl_event) -> CLResult<()> {
    super::platform::ensure_init();
    retain::<Event>(event as *const c_void)
}

#[entry(clReleaseEvent, at_exit)]
fn release_event(event: cl_event) -> CLResult<()> {
    super::platform::ensure_init();
    release::<Event>(event as *const c_void).map(|_| ())
}

#[entry(clSetEventCallback)]
unsafe fn set_event_callback(
    event: cl_event,
    command_exec_callback_type: cl_int,
    pfn_notify: Option<EventCallback>,
    user_data: *mut c_void,
) -> CLResult<()> {
    let e: Arc<Event> = obj(event)?;
    let f = pfn_notify.ok_or(ClError(CL_INVALID_VALUE))?;
    let known = [CL_SUBMITTED, CL_RUNNING, CL_COMPLETE].map(|s| s as cl_int);
    check(
        known.contains(&command_exec_callback_type),
        CL_INVALID_VALUE,
    )?;
    // The handle stays valid for the callback even if the application releases the event
    // first: the callback holds an application reference, given back after it ran.
    retain::<Event>(event as *const c_void)?;
    let (h, user) = (event as usize, user_data as usize);
    e.on_status(
        command_exec_callback_type,
        Box::new(move |status| {
            // SAFETY: the application's callback, with its own user data.
            unsafe { f(h as cl_event, status, user as *mut c_void) };
            let _ = release::<Event>(h as *const c_void);
        }),
    );
    Ok(())
}

#[entry(clGetEventProfilingInfo)]
unsafe fn get_event_profiling_info(
    event: cl_event,
    param_name: cl_profiling_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let e: Arc<Event> = obj(event)?;
    let known = [
        CL_PROFILING_COMMAND_QUEUED,
        CL_PROFILING_COMMAND_SUBMIT,
        CL_PROFILING_COMMAND_START,
        CL_PROFILING_COMMAND_END,
        CL_PROFILING_COMMAND_COMPLETE,
    ];
    let i = known
        .iter()
        .position(|&k| k == param_name)
        .ok_or(ClError(CL_INVALID_VALUE))?;
    let profiled = e
        .queue
        .as_ref()
        .is_some_and(|q| q.properties & CL_QUEUE_PROFILING_ENABLE != 0);
    check(
        profiled && e.status() == CL_COMPLETE as cl_int,
        CL_PROFILING_INFO_NOT_AVAILABLE,
    )?;
    let t = e.times.lock()[i];
    check(t != 0, CL_PROFILING_INFO_NOT_AVAILABLE)?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe {
        write(
            &t.to_ne_bytes(),
            param_value_size,
            param_value,
            param_value_size_ret,
        )
    }
}

#[entry(clCreateUserEvent)]
fn create_user_event(context: cl_context) -> CLResult<cl_event> {
    let ctx: Arc<Context> = obj(context)?;
    Ok(register(Event::new_user(&ctx)) as cl_event)
}

#[entry(clSetUserEventStatus)]
fn set_user_event_status(event: cl_event, execution_status: cl_int) -> CLResult<()> {
    let e: Arc<Event> = obj(event)?;
    check(e.is_user(), CL_INVALID_EVENT)?;
    check(
        execution_status == CL_COMPLETE as cl_int || execution_status < 0,
        CL_INVALID_VALUE,
    )?;
    // "CL_INVALID_OPERATION if the execution_status for event has already been changed by a
    // previous call to clSetUserEventStatus."
    check(e.status() == CL_SUBMITTED as cl_int, CL_INVALID_OPERATION)?;
    e.set_status(execution_status);
    Ok(())
}
