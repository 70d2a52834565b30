//! Events.

use super::info::{v, write};
use super::util::{obj, slice};
use crate::cl::*;
use crate::core::event::Event;
use crate::core::object::{handle, release, retain};
use crate::core::{check, ClError};
use std::ffi::c_void;
use std::sync::Arc;

entry! {
    fn clWaitForEvents(num_events: cl_uint, event_list: *const cl_event) {
        check(num_events > 0 && !event_list.is_null(), CL_INVALID_VALUE)?;
        // SAFETY: the application passes num_events handles.
        let handles = unsafe { slice(event_list, num_events as usize) };
        let events = handles.iter().map(|&h| obj::<Event, _>(h)).collect::<Result<Vec<_>, _>>()?;
        check(events.iter().all(|e| Arc::ptr_eq(&e.context, &events[0].context)), CL_INVALID_CONTEXT)?;
        let mut result = Ok(());
        for e in &events {
            if e.wait().is_err() {
                result = Err(ClError(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST));
            }
        }
        result
    }

    fn clGetEventInfo(
        event: cl_event,
        param_name: cl_event_info,
        param_value_size: usize,
        param_value: *mut c_void,
        param_value_size_ret: *mut usize,
    ) {
        let e: Arc<Event> = obj(event)?;
        let value = match param_name {
            CL_EVENT_COMMAND_QUEUE => v(&e.queue.as_ref().map_or(std::ptr::null_mut(), handle)),
            CL_EVENT_CONTEXT => v(&handle(&e.context)),
            CL_EVENT_COMMAND_TYPE => v(&e.command_type),
            CL_EVENT_COMMAND_EXECUTION_STATUS => {
                // Polling must make progress: submit the command's batch.
                if let Some(q) = &e.queue {
                    q.flush_to(e.value)?;
                }
                v(&e.status())
            }
            CL_EVENT_REFERENCE_COUNT => v(&e.base.api_refs()),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }?;
        write(&value, param_value_size, param_value, param_value_size_ret)
    }

    fn clRetainEvent(event: cl_event) {
        super::platform::ensure_init();
        retain::<Event>(event as *const c_void)
    }

    fn clReleaseEvent(event: cl_event) {
        super::platform::ensure_init();
        release::<Event>(event as *const c_void).map(|_| ())
    }

    fn clGetEventProfilingInfo(
        event: cl_event,
        param_name: cl_profiling_info,
        param_value_size: usize,
        param_value: *mut c_void,
        param_value_size_ret: *mut usize,
    ) {
        obj::<Event, _>(event)?;
        // Timestamps come with the asynchronous-engine work; until then no event has them.
        Err(ClError(CL_PROFILING_INFO_NOT_AVAILABLE))
    }
}
