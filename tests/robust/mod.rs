//! Shared by the robustness suites (tests/robustness_*.rs): the rules, soft assertions and
//! fixtures.
//!
//!
//! Rules the expectations follow (OpenCL 3.0 API spec, "Errors" lists of each function):
//! - NULL first-argument handles are answered by the ocl-icd loader itself (it has no object to
//!   dispatch through); the code is still asserted.
//! - A handle of the wrong type (e.g. a cl_mem passed as a cl_kernel) reaches the ICD, because
//!   the loader dispatches through whatever dispatch table the object carries: the ICD must
//!   answer the CL_INVALID_<OBJECT> of the parameter. Released handles are never used (UB).
//! - Handles are checked before anything that needs the object: an invalid handle has no
//!   context or device whose capabilities (images, SVM, pipes, IL...) could be consulted, so
//!   CL_INVALID_<OBJECT> is the only possible answer for it, even from an entry point the
//!   device does not support (where valid handles may get CL_INVALID_OPERATION).
//! - An invalid command queue beats every other error of an enqueue call (nothing else can be
//!   validated without the queue's context).
//! - For entry points vkcl does not implement yet, value errors are only required to be
//!   negative; handle errors are asserted exactly.
//!
//! Each test collects all mismatches and fails once, listing them. Mismatches vkcl is known to
//! have (entry points of later issues) are listed in KNOWN with their reason.
#![allow(dead_code, unused_macros, unused_imports)]
use super::common::*;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

// ---------------------------------------------------------------- soft assertions

/// Mismatches vkcl is known to have today: (test, the call's text, reason and the issue that
/// will remove it). A listed call that no longer mismatches fails its test too, so the list
/// stays current.
pub const KNOWN: &[(&str, &str, &str)] = &[];

#[derive(Default)]
pub struct Check {
    pub fails: Vec<String>,
}

impl Check {
    pub fn eq(&mut self, what: &str, got: cl_int, exp: cl_int) {
        if got != exp {
            self.fails.push(format!(
                "{what}\n    expected {} got {}",
                err_name(exp),
                err_name(got)
            ));
        }
    }
    pub fn any(&mut self, what: &str, got: cl_int, exp: &[cl_int]) {
        if !exp.contains(&got) {
            let names: Vec<String> = exp.iter().map(|&e| err_name(e)).collect();
            self.fails.push(format!(
                "{what}\n    expected one of {names:?} got {}",
                err_name(got)
            ));
        }
    }
    pub fn neg(&mut self, what: &str, got: cl_int) {
        if got >= 0 {
            self.fails.push(format!(
                "{what}\n    expected an error got {}",
                err_name(got)
            ));
        }
    }
    pub fn truth(&mut self, what: &str, ok: bool) {
        if !ok {
            self.fails.push(format!("{what}\n    does not hold"));
        }
    }
    /// Fails on any mismatch not in KNOWN, and on a KNOWN entry of this test that holds now.
    /// (libtest names each test's thread after the test.)
    pub fn done(self) {
        let thread = std::thread::current();
        let test = thread.name().unwrap_or("");
        let known: Vec<_> = KNOWN.iter().filter(|k| k.0 == test).collect();
        let call = |f: &String| f.lines().next().unwrap_or("").trim().to_string();
        let new: Vec<&String> = self
            .fails
            .iter()
            .filter(|f| !known.iter().any(|k| k.1 == call(f)))
            .collect();
        let fixed: Vec<&str> = known
            .iter()
            .filter(|k| !self.fails.iter().any(|f| call(f) == k.1))
            .map(|k| k.1)
            .collect();
        assert!(
            new.is_empty() && fixed.is_empty(),
            "{} mismatch(es):\n  {}\nlisted in KNOWN but no longer mismatching (remove them):\n  {}",
            new.len(),
            new.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  "),
            fixed.join("\n  ")
        );
    }
}

/// `expect!(c, call, CODE)`: exact code; `expect!(c, call, [A, B])`: one of; `expect!(c, call, neg)`.
macro_rules! expect {
    ($c:expr, $call:expr, [$($e:expr),+ $(,)?]) => {{
        #[allow(unused_unsafe)]
        let code: cl_int = unsafe { $call };
        $c.any(stringify!($call), code, &[$($e),+])
    }};
    ($c:expr, $call:expr, neg) => {{
        #[allow(unused_unsafe)]
        let code: cl_int = unsafe { $call };
        $c.neg(stringify!($call), code)
    }};
    ($c:expr, $call:expr, $e:expr) => {{
        #[allow(unused_unsafe)]
        let code: cl_int = unsafe { $call };
        $c.eq(stringify!($call), code, $e)
    }};
}

/// Returned by `create` when a creator reported an error but still returned a handle.
pub const HANDLE_WITH_ERROR: cl_int = -9999;

/// Runs a creator (`f` gets the errcode_ret pointer) and returns its code; a handle returned
/// together with an error turns into HANDLE_WITH_ERROR. Handles created on success are leaked.
pub fn create<T>(f: impl FnOnce(*mut cl_int) -> *mut T) -> cl_int {
    let mut e: cl_int = 1;
    let h = f(&mut e);
    if e != CL_SUCCESS && !h.is_null() {
        return HANDLE_WITH_ERROR;
    }
    e
}

/// pocl 3.1 does not check handle types (it trusts any object of its own), so the wrong-type
/// cases only run against vkcl.
pub fn wrong_types() -> bool {
    !is_pocl()
}

// ---------------------------------------------------------------- fixture

pub const SRC: &str = "kernel void k(global int* x, int v) { x[get_global_id(0)] = v; }\n";

/// Valid objects of every implemented kind, a second context with its own buffer and event,
/// and a completed event.
pub struct Fix {
    pub e: Env,
    pub m: cl_mem,
    pub p: cl_program,
    pub k: cl_kernel,
    pub ev: cl_event,
    pub e2: Env,
    pub m2: cl_mem,
    pub ev2: cl_event,
}

impl Fix {
    pub fn new() -> Fix {
        let e = Env::new();
        let m = e.buffer(CL_MEM_READ_WRITE, 256, null_mut());
        let p = e.program(SRC, "");
        let k = kernel(p, "k");
        let ev = completed_event(&e, m);
        let e2 = Env::new();
        let m2 = e2.buffer(CL_MEM_READ_WRITE, 256, null_mut());
        let ev2 = completed_event(&e2, m2);
        Fix {
            e,
            m,
            p,
            k,
            ev,
            e2,
            m2,
            ev2,
        }
    }
    pub fn ctx(&self) -> cl_context {
        self.e.ctx
    }
    pub fn q(&self) -> cl_command_queue {
        self.e.queue
    }
    pub fn dev(&self) -> cl_device_id {
        self.e.dev
    }
    // wrong-type stand-ins, one per handle type
    pub fn not_ctx(&self) -> cl_context {
        self.e.queue
    }
    pub fn not_queue(&self) -> cl_command_queue {
        self.m
    }
    pub fn not_mem(&self) -> cl_mem {
        self.k
    }
    pub fn not_prog(&self) -> cl_program {
        self.k
    }
    pub fn not_kernel(&self) -> cl_kernel {
        self.m
    }
    pub fn not_event(&self) -> cl_event {
        self.m
    }
    pub fn not_dev(&self) -> cl_device_id {
        self.e.ctx
    }
    pub fn not_platform(&self) -> cl_platform_id {
        self.e.ctx
    }
    pub fn not_sampler(&self) -> cl_sampler {
        self.m
    }
}

impl Drop for Fix {
    fn drop(&mut self) {
        unsafe {
            clReleaseEvent(self.ev);
            clReleaseEvent(self.ev2);
            clReleaseKernel(self.k);
            clReleaseProgram(self.p);
            clReleaseMemObject(self.m);
            clReleaseMemObject(self.m2);
        }
    }
}

pub fn completed_event(e: &Env, m: cl_mem) -> cl_event {
    let data = [0u8; 16];
    let mut ev = null_mut();
    check!(clEnqueueWriteBuffer(
        e.queue,
        m,
        CL_TRUE,
        0,
        16,
        data.as_ptr().cast(),
        0,
        null(),
        &mut ev
    ));
    check!(clWaitForEvents(1, &ev));
    ev
}

/// The bad wait lists every enqueue call must reject: (count, list) pairs.
pub struct WaitLists {
    pub null_entry: [cl_event; 2],
    pub wrong_type: [cl_event; 1],
    pub foreign: [cl_event; 2],
    pub good: [cl_event; 1],
}

impl WaitLists {
    pub fn new(f: &Fix) -> WaitLists {
        WaitLists {
            null_entry: [f.ev, null_mut()],
            wrong_type: [f.not_event()],
            foreign: [f.ev, f.ev2],
            good: [f.ev],
        }
    }
}

/// Checks the spec's wait-list rules on one enqueue entry point, given as a closure over
/// (queue, num_events, event_list): count/list mismatch, NULL entries and wrong-type entries
/// are CL_INVALID_EVENT_WAIT_LIST; an event of another context is CL_INVALID_CONTEXT; an
/// invalid queue wins over a bad list.
pub fn wait_list_rules(
    c: &mut Check,
    f: &Fix,
    name: &str,
    call: impl Fn(cl_command_queue, cl_uint, *const cl_event) -> cl_int,
) {
    let w = WaitLists::new(f);
    let ewl = CL_INVALID_EVENT_WAIT_LIST;
    c.eq(
        &format!("{name}: n=1, list NULL"),
        call(f.q(), 1, null()),
        ewl,
    );
    c.eq(
        &format!("{name}: n=0, list non-NULL"),
        call(f.q(), 0, w.good.as_ptr()),
        ewl,
    );
    c.eq(
        &format!("{name}: NULL entry"),
        call(f.q(), 2, w.null_entry.as_ptr()),
        ewl,
    );
    if wrong_types() {
        c.eq(
            &format!("{name}: cl_mem in the list"),
            call(f.q(), 1, w.wrong_type.as_ptr()),
            ewl,
        );
        c.eq(
            &format!("{name}: invalid queue and bad list"),
            call(f.not_queue(), 1, null()),
            CL_INVALID_COMMAND_QUEUE,
        );
    }
    c.eq(
        &format!("{name}: event of another context"),
        call(f.q(), 2, w.foreign.as_ptr()),
        CL_INVALID_CONTEXT,
    );
    c.eq(
        &format!("{name}: NULL queue and bad list"),
        call(null_mut(), 1, null()),
        CL_INVALID_COMMAND_QUEUE,
    );
}

/// clGet*Info protocol errors: unknown name, and a too-small buffer for a valid name.
pub fn info_rules(
    c: &mut Check,
    name: &str,
    valid_param: cl_uint,
    call: impl Fn(cl_uint, usize, *mut c_void, *mut usize) -> cl_int,
) {
    let mut sz = 0usize;
    c.eq(
        &format!("{name}: unknown param_name"),
        call(0x7FFF_0001, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE,
    );
    let mut byte = 0u8;
    c.eq(
        &format!("{name}: param_value_size 1 < size of the value"),
        call(valid_param, 1, (&mut byte as *mut u8).cast(), null_mut()),
        CL_INVALID_VALUE,
    );
    c.eq(
        &format!("{name}: all-NULL outputs are allowed"),
        call(valid_param, 0, null_mut(), null_mut()),
        CL_SUCCESS,
    );
}

// ---------------------------------------------------------------- platform and device
