//! What every entry point shares: the wrappers that catch panics and write `errcode_ret`,
//! handle and wait-list conversion.

use crate::cl::*;
use crate::core::event::Event;
use crate::core::object::{lookup, ClObject};
use crate::core::{CLResult, ClError};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn log_error(name: &str, e: ClError) {
    log::debug!(target: "api", "{name} -> {e}");
}

/// Panics caught at the C boundary in this process.
static PANICS: AtomicUsize = AtomicUsize::new(0);

/// A panic caught in `name`: CL_OUT_OF_HOST_MEMORY, or the end of the process with
/// VKCL_PANIC=abort (the tests' setting: a panic must not hide behind an error code that
/// every call may return).
pub(crate) fn panicked(name: &str) -> ClError {
    let n = PANICS.fetch_add(1, Ordering::Relaxed) + 1;
    if crate::config::get().panic_abort {
        eprintln!("vkcl: {name} panicked (panic {n} of the process); VKCL_PANIC=abort: aborting");
        std::process::abort();
    }
    log::error!(target: "api", "{name} panicked (panic {n}); returning CL_OUT_OF_HOST_MEMORY");
    ClError(CL_OUT_OF_HOST_MEMORY)
}

/// Runs a `cl_int` entry point's body: panics become errors, nothing unwinds into C.
///
/// After vkcl's exit handler ran (src/shutdown.rs) only `at_exit` entry points run: an
/// application's atexit handlers and static destructors release their objects then, and
/// those releases must succeed (they skip GPU work; core::object::release leaks the object).
pub(crate) fn run_int(name: &str, at_exit: bool, body: impl FnOnce() -> CLResult<()>) -> cl_int {
    crate::logger::init();
    log::trace!(target: "api", "{name}");
    let active = crate::shutdown::enter();
    if active.is_none() && !at_exit {
        return CL_OUT_OF_RESOURCES;
    }
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => CL_SUCCESS,
        Ok(Err(e)) => {
            log_error(name, e);
            e.0
        }
        Err(_) => panicked(name).0,
    }
}

/// Runs an object-returning entry point's body and writes `errcode_ret`.
///
/// # Safety
/// `errcode_ret` is NULL or points to a writable `cl_int`.
pub(crate) unsafe fn run_obj<T: Null, R: Into<Outcome<T>>>(
    name: &str,
    _at_exit: bool,
    errcode_ret: *mut cl_int,
    body: impl FnOnce() -> R,
) -> T {
    crate::logger::init();
    log::trace!(target: "api", "{name}");
    let active = crate::shutdown::enter();
    let body = || match active {
        Some(_) => body().into(),
        None => Outcome::Err(T::null(), ClError(CL_OUT_OF_RESOURCES)),
    };
    let (value, code) = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Outcome::Ok(v)) => (v, CL_SUCCESS),
        Ok(Outcome::Err(v, e)) => {
            log_error(name, e);
            (v, e.0)
        }
        Err(_) => (T::null(), panicked(name).0),
    };
    if !errcode_ret.is_null() {
        // SAFETY: errcode_ret is NULL or points to a cl_int, as the spec requires.
        unsafe { *errcode_ret = code };
    }
    value
}

/// What an object-returning entry point gives back: its object, or an error code with the
/// value to return beside it. That value is NULL, except where the spec returns an object
/// together with an error (clLinkProgram: "a valid non-zero program object" whose link failed,
/// and CL_LINK_PROGRAM_FAILURE): such an entry point returns `CLResult<(T, CLResult<()>)>`,
/// the object and the result of the work it began.
pub(crate) enum Outcome<T> {
    Ok(T),
    Err(T, ClError),
}

impl<T: Null> From<CLResult<T>> for Outcome<T> {
    fn from(r: CLResult<T>) -> Self {
        match r {
            Ok(v) => Outcome::Ok(v),
            Err(e) => Outcome::Err(T::null(), e),
        }
    }
}

impl<T> From<CLResult<(T, CLResult<()>)>> for Outcome<T>
where
    T: Null,
{
    fn from(r: CLResult<(T, CLResult<()>)>) -> Self {
        match r {
            Ok((v, Ok(()))) => Outcome::Ok(v),
            Ok((v, Err(e))) => Outcome::Err(v, e),
            Err(e) => Outcome::Err(T::null(), e),
        }
    }
}

/// Return types of object-returning entry points: their value on error.
pub(crate) trait Null {
    fn null() -> Self;
}
impl<T> Null for *mut T {
    fn null() -> Self {
        std::ptr::null_mut()
    }
}

/// An entry point vkcl does not implement yet: the error of its handle checks, else `code`
/// (logged as unimplemented).
pub(crate) fn unimplemented_after(
    name: &str,
    checks: impl FnOnce() -> CLResult<()>,
    code: cl_int,
) -> cl_int {
    crate::logger::init();
    match catch_unwind(AssertUnwindSafe(checks)) {
        Ok(Err(e)) => e.0,
        Err(_) => panicked(name).0,
        Ok(Ok(())) => {
            log::warn!(target: "api", "{name} is not implemented yet; returning {}", ClError(code));
            code
        }
    }
}

/// The object behind a handle of type `T` (the spec's CL_INVALID_<OBJECT> otherwise).
pub(crate) fn obj<T: ClObject, H>(handle: *mut H) -> CLResult<Arc<T>> {
    crate::api::platform::ensure_init();
    lookup::<T>(handle as *const c_void)
}

/// The events of a wait list, checked as every enqueue command must:
/// CL_INVALID_EVENT_WAIT_LIST for a NULL list with a count or a count of 0 with a list,
/// or an invalid event; CL_INVALID_CONTEXT for an event of another context.
///
/// # Safety
/// `list` is NULL or points to `num` event handles.
pub(crate) unsafe fn wait_list(
    num: cl_uint,
    list: *const cl_event,
    context: &Arc<crate::core::context::Context>,
) -> CLResult<Vec<Arc<Event>>> {
    if (num == 0) != list.is_null() {
        return Err(ClError(CL_INVALID_EVENT_WAIT_LIST));
    }
    if num == 0 {
        return Ok(vec![]);
    }
    // SAFETY: the application passes `num` events at `list`.
    let handles = unsafe { std::slice::from_raw_parts(list, num as usize) };
    let mut events = Vec::with_capacity(handles.len());
    for &h in handles {
        let e: Arc<Event> = obj(h).map_err(|_| ClError(CL_INVALID_EVENT_WAIT_LIST))?;
        if !Arc::ptr_eq(&e.context, context) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        events.push(e);
    }
    Ok(events)
}

/// Writes an event handle to the application's `event` out-parameter, or drops the event.
///
/// # Safety
/// `out` is NULL or points to a writable `cl_event`.
pub(crate) unsafe fn return_event(event: Arc<Event>, out: *mut cl_event) {
    if !out.is_null() {
        // SAFETY: out is NULL or points to a cl_event.
        unsafe { *out = crate::core::object::register(event) as cl_event };
    }
}

/// A slice from a C pointer and count; an empty slice for a count of 0.
///
/// # Safety
/// `ptr` must point to `len` valid elements when `len > 0`.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if len == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// A zero-terminated property list, with the terminator (empty for NULL).
///
/// # Safety
/// `ptr` must be NULL or point to a 0-terminated list of (name, value) pairs.
pub(crate) unsafe fn property_list<T: Copy + PartialEq + Default>(ptr: *const T) -> Vec<T> {
    let mut out = vec![];
    if ptr.is_null() {
        return out;
    }
    let mut i = 0;
    loop {
        // SAFETY: the list is 0-terminated and read up to the terminator.
        let name = unsafe { *ptr.add(i) };
        out.push(name);
        if name == T::default() {
            return out;
        }
        // SAFETY: every non-zero name is followed by its value.
        out.push(unsafe { *ptr.add(i + 1) });
        i += 2;
        if i > 1024 {
            return out; // not terminated: the callers reject it as an unknown property
        }
    }
}
