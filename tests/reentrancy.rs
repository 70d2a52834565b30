//! Application callbacks that call back into the API: event callbacks that flush or enqueue
//! on their own queue, memory-object destructor callbacks that set kernel arguments, and the
//! order in which a memory object's storage and its destructor callbacks go; SVM free callbacks
//! and event callbacks that copy host memory on their queue; a context's destructor callbacks,
//! after its objects' and re-entering the API. No vkcl lock is
//! held while application code runs, so none of these may hang; each test has a watchdog that
//! aborts the process (a failure) if it does.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Runs `f`, aborting the process with `name` if it takes longer than a minute (a hang).
fn watchdog<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        while t0.elapsed() < Duration::from_secs(60) {
            if flag.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("{name}: hung for 60 s (a callback re-entering the API deadlocked)");
        std::process::abort();
    });
    let r = f();
    done.store(true, Ordering::SeqCst);
    r
}

/// What a callback saw and did, for the test to check afterwards.
#[derive(Default)]
struct Seen {
    calls: AtomicUsize,
    status: AtomicI32,
    /// The codes of the API calls the callback made.
    codes: Mutex<Vec<cl_int>>,
}

struct Ctx {
    queue: cl_command_queue,
    buffer: cl_mem,
    seen: Seen,
}

fn fill(
    q: cl_command_queue,
    m: cl_mem,
    value: u32,
    wait: &[cl_event],
    ev: *mut cl_event,
) -> cl_int {
    unsafe {
        clEnqueueFillBuffer(
            q,
            m,
            (&value as *const u32).cast(),
            4,
            0,
            64,
            wait.len() as cl_uint,
            if wait.is_empty() {
                null()
            } else {
                wait.as_ptr()
            },
            ev,
        )
    }
}

/// Flushes its queue and enqueues a fill of 7s on it.
unsafe extern "C" fn flush_and_enqueue(_: cl_event, status: cl_int, user: *mut c_void) {
    let c = unsafe { &*(user as *const Ctx) };
    c.seen.status.store(status, Ordering::SeqCst);
    let mut codes = vec![unsafe { clFlush(c.queue) }];
    codes.push(fill(c.queue, c.buffer, 7, &[], null_mut()));
    codes.push(unsafe { clFlush(c.queue) });
    c.seen.codes.lock().unwrap().extend(codes);
    c.seen.calls.fetch_add(1, Ordering::SeqCst);
}

/// Runs `body(env, buffer, user_data)` under the watchdog, where `body` registers
/// `flush_and_enqueue` (with `user_data`) on events that reach their status `calls` times in
/// all; then every call inside the callbacks must have succeeded, and the buffer must hold the
/// callbacks' fill (7s), which comes after every fill of `body`.
fn callbacks_flush_and_enqueue(
    name: &'static str,
    calls: usize,
    body: impl FnOnce(&Env, cl_mem, *mut c_void),
) -> cl_int {
    setup();
    let e = Env::new();
    let b = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let c = Box::new(Ctx {
        queue: e.queue,
        buffer: b,
        seen: Seen::default(),
    });
    watchdog(name, || body(&e, b, &*c as *const Ctx as *mut c_void));
    assert_eq!(c.seen.calls.load(Ordering::SeqCst), calls);
    assert_eq!(*c.seen.codes.lock().unwrap(), vec![CL_SUCCESS; 3 * calls]);
    assert_eq!(e.read::<u32>(b, 16), vec![7; 16]);
    unsafe { clReleaseMemObject(b) };
    c.seen.status.load(Ordering::SeqCst)
}

/// Issue 17, item 1: a CL_SUBMITTED callback that flushes and enqueues on its own queue runs
/// (while clFlush submits the batch) and its calls succeed.
#[test]
fn submitted_callback_flushes_and_enqueues_on_its_queue() {
    let name = "submitted_callback_flushes_and_enqueues_on_its_queue";
    callbacks_flush_and_enqueue(name, 1, |e, b, user| {
        let mut ev = null_mut();
        check!(fill(e.queue, b, 1, &[], &mut ev));
        let submitted = CL_SUBMITTED as cl_int;
        check!(clSetEventCallback(
            ev,
            submitted,
            Some(flush_and_enqueue),
            user
        ));
        check!(clFlush(e.queue));
        check!(clFinish(e.queue));
        check!(clWaitForEvents(1, &ev));
        unsafe { clReleaseEvent(ev) };
    });
}

/// Issue 17, item 2: a command gated by a user event that then fails: its CL_COMPLETE
/// callback gets the error and may flush and enqueue on the queue.
#[test]
fn failed_gate_callback_flushes_and_enqueues_on_its_queue() {
    let name = "failed_gate_callback_flushes_and_enqueues_on_its_queue";
    let status = callbacks_flush_and_enqueue(name, 1, |e, b, user| {
        let mut err = 0;
        let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
        assert_eq!(err, CL_SUCCESS);
        let mut ev = null_mut();
        check!(fill(e.queue, b, 1, &[gate], &mut ev));
        let complete = CL_COMPLETE as cl_int;
        check!(clSetEventCallback(
            ev,
            complete,
            Some(flush_and_enqueue),
            user
        ));
        check!(clFlush(e.queue));
        check!(clSetUserEventStatus(gate, -1));
        // The gated command failed and was not executed; the callback's fill runs.
        let status: cl_int = event_val(ev, CL_EVENT_COMMAND_EXECUTION_STATUS);
        assert!(status < 0, "status {status}");
        check!(clFinish(e.queue));
        unsafe {
            clReleaseEvent(ev);
            clReleaseEvent(gate);
        }
    });
    assert!(status < 0, "the callback got status {status}");
}

/// An event callback that enqueues on its queue, registered on a command that has already
/// completed (so it runs inside clSetEventCallback) and on one completing in a clFinish.
#[test]
fn complete_callbacks_enqueue_on_their_queue() {
    let name = "complete_callbacks_enqueue_on_their_queue";
    callbacks_flush_and_enqueue(name, 2, |e, b, user| {
        let mut ev = null_mut();
        check!(fill(e.queue, b, 1, &[], &mut ev));
        let complete = CL_COMPLETE as cl_int;
        check!(clSetEventCallback(
            ev,
            complete,
            Some(flush_and_enqueue),
            user
        ));
        check!(clFinish(e.queue));
        check!(clWaitForEvents(1, &ev));
        // Already complete: the callback runs at once.
        check!(clSetEventCallback(
            ev,
            complete,
            Some(flush_and_enqueue),
            user
        ));
        check!(clFinish(e.queue));
        unsafe { clReleaseEvent(ev) };
    });
}

const COPY: &str = "kernel void put(global uint *out, uint v) { out[get_global_id(0)] = v; }";

struct ArgSwap {
    kernel: cl_kernel,
    replacement: cl_mem,
    calls: AtomicUsize,
    code: AtomicI32,
}

unsafe extern "C" fn set_arg_in_destructor(_: cl_mem, user: *mut c_void) {
    let s = unsafe { &*(user as *const ArgSwap) };
    let code = unsafe {
        clSetKernelArg(
            s.kernel,
            0,
            std::mem::size_of::<cl_mem>(),
            (&s.replacement as *const cl_mem).cast(),
        )
    };
    s.code.store(code, Ordering::SeqCst);
    s.calls.fetch_add(1, Ordering::SeqCst);
}

/// Issue 17, item 3 (and issue 16: "implementations shall not allow cl_kernel objects to hold
/// reference counts to cl_kernel arguments"): a buffer released by the application while set
/// as a kernel argument is deleted then (its destructor callback runs), and that callback may
/// set the same kernel's argument.
#[test]
fn kernel_arguments_do_not_keep_buffers_alive() {
    setup();
    let e = Env::new();
    let p = e.program(COPY, "");
    let k = kernel(p, "put");
    let first = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let second = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let s = Box::new(ArgSwap {
        kernel: k,
        replacement: second,
        calls: AtomicUsize::new(0),
        code: AtomicI32::new(1),
    });
    watchdog("kernel_arguments_do_not_keep_buffers_alive", || {
        arg(k, 0, &first);
        arg(k, 1, &5u32);
        check!(clSetMemObjectDestructorCallback(
            first,
            Some(set_arg_in_destructor),
            &*s as *const ArgSwap as *mut c_void
        ));
        check!(clReleaseMemObject(first));
        // Deleted at once: no command uses it, and the kernel holds no reference.
        assert_eq!(s.calls.load(Ordering::SeqCst), 1);
        assert_eq!(s.code.load(Ordering::SeqCst), CL_SUCCESS);
        e.run(k, None, &[16], None);
    });
    assert_eq!(e.read::<u32>(second, 16), vec![5; 16]);
    unsafe {
        clReleaseMemObject(second);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

static RELEASED_AT_LAUNCH: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_release(_: cl_mem, _: *mut c_void) {
    RELEASED_AT_LAUNCH.fetch_add(1, Ordering::SeqCst);
}

/// A buffer released after a launch that uses it lives until that launch completes (the
/// command, not the kernel, keeps it), and a launch of a kernel whose argument was deleted
/// fails with CL_INVALID_KERNEL_ARGS rather than touching freed memory.
#[test]
fn commands_keep_their_buffers_until_they_complete() {
    setup();
    let e = Env::new();
    let p = e.program(COPY, "");
    let k = kernel(p, "put");
    let b = e.buffer(CL_MEM_READ_WRITE, 4096, null_mut());
    let copy = e.buffer(CL_MEM_READ_WRITE, 4096, null_mut());
    arg(k, 0, &b);
    arg(k, 1, &9u32);
    check!(clSetMemObjectDestructorCallback(
        b,
        Some(count_release),
        null_mut()
    ));
    let gws = [1024usize];
    let code = unsafe {
        clEnqueueNDRangeKernel(
            e.queue,
            k,
            1,
            null(),
            gws.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
        )
    };
    check!(code);
    check!(clEnqueueCopyBuffer(
        e.queue,
        b,
        copy,
        0,
        0,
        4096,
        0,
        null(),
        null_mut()
    ));
    check!(clReleaseMemObject(b));
    check!(clFinish(e.queue));
    // Its commands have completed: the buffer is gone, and it was alive while they ran.
    let t0 = std::time::Instant::now();
    while RELEASED_AT_LAUNCH.load(Ordering::SeqCst) == 0 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(RELEASED_AT_LAUNCH.load(Ordering::SeqCst), 1);
    assert_eq!(e.read::<u32>(copy, 1024), vec![9; 1024]);
    let code = unsafe {
        clEnqueueNDRangeKernel(
            e.queue,
            k,
            1,
            null(),
            gws.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(code, CL_INVALID_KERNEL_ARGS, "{}", err_name(code));
    unsafe {
        clReleaseMemObject(copy);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

const PAGE: usize = 4096;

extern "C" {
    fn mmap(addr: *mut c_void, len: usize, prot: i32, flags: i32, fd: i32, off: i64)
        -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> i32;
}

unsafe extern "C" fn free_host_memory(_: cl_mem, user: *mut c_void) {
    // What the callback is for: the application frees the memory it gave the buffer.
    eprintln!("vkcl-test: destructor callback");
    assert_eq!(unsafe { munmap(user, PAGE) }, 0);
}

/// Issue 17, item 4: a CL_MEM_USE_HOST_PTR buffer's destructor callback runs after the
/// buffer's storage is released, so that freeing `host_ptr` there frees memory no Vulkan
/// allocation imports any more. Checked in a child process through vkcl's memory log: the
/// imported memory's release is logged before the callback's line.
#[test]
fn destructor_callbacks_run_after_the_storage_is_released() {
    if std::env::var("VKCL_TEST_DESTRUCTOR_CHILD").is_ok() {
        setup();
        let e = Env::new();
        // SAFETY: an anonymous private mapping of one page.
        let host = unsafe { mmap(null_mut(), PAGE, 3, 0x22, -1, 0) };
        assert_ne!(host as isize, -1);
        unsafe { std::ptr::write_bytes(host as *mut u8, 3, PAGE) };
        let b = e.buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, PAGE, host);
        check!(clSetMemObjectDestructorCallback(
            b,
            Some(free_host_memory),
            host
        ));
        assert_eq!(e.read::<u8>(b, 16), vec![3; 16]);
        eprintln!("vkcl-test: releasing");
        check!(clReleaseMemObject(b));
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "destructor_callbacks_run_after_the_storage_is_released",
            "--exact",
            "--nocapture",
        ])
        .env("VKCL_TEST_DESTRUCTOR_CHILD", "1")
        .env("VKCL_LOG", "memory=debug")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{log}");
    let tail = &log[log.find("vkcl-test: releasing").expect("child ran")..];
    let released = tail.find("released imported host memory");
    let callback = tail.find("vkcl-test: destructor callback");
    assert!(
        released.is_some() && callback.is_some() && released < callback,
        "the storage must be released before the callback runs:\n{tail}"
    );
}

struct Reported {
    messages: Mutex<Vec<String>>,
    build_done: AtomicUsize,
}

unsafe extern "C" fn context_error(
    msg: *const std::ffi::c_char,
    _: *const c_void,
    _: usize,
    user: *mut c_void,
) {
    let r = unsafe { &*(user as *const Reported) };
    let msg = unsafe { std::ffi::CStr::from_ptr(msg) }
        .to_string_lossy()
        .into_owned();
    r.messages.lock().unwrap().push(msg);
}

unsafe extern "C" fn build_done(_: cl_program, user: *mut c_void) {
    let r = unsafe { &*(user as *const Reported) };
    r.build_done.fetch_add(1, Ordering::SeqCst);
}

/// Issue 17, item 5: the context's error callback (pfn_notify of clCreateContext) hears of
/// asynchronous errors: here a build that fails on its own thread (clBuildProgram with a
/// callback returns at once, so only the callbacks can tell). A build that fails
/// synchronously returns its error and is not reported.
#[test]
fn asynchronous_errors_reach_the_context_callback() {
    setup();
    let dev = device();
    let r = Box::new(Reported {
        messages: Mutex::new(vec![]),
        build_done: AtomicUsize::new(0),
    });
    let user = &*r as *const Reported as *mut c_void;
    let mut err = 0;
    let ctx = unsafe { clCreateContext(null(), 1, &dev, Some(context_error), user, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let src = "kernel void broken(global int *p) { p[0] = undeclared; }";
    let (ptr, len) = (src.as_ptr() as *const std::ffi::c_char, src.len());
    let p = unsafe { clCreateProgramWithSource(ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let code = unsafe { clBuildProgram(p, 1, &dev, null(), None, null_mut()) };
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(r.messages.lock().unwrap().is_empty());
    watchdog("asynchronous_errors_reach_the_context_callback", || {
        check!(clBuildProgram(p, 1, &dev, null(), Some(build_done), user));
        while r.build_done.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let messages = r.messages.lock().unwrap().clone();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("build"), "{messages:?}");
    unsafe {
        clReleaseProgram(p);
        clReleaseContext(ctx);
    }
}

/// What a callback copying host memory on its queue works with: two host arrays (not SVM
/// allocations), a buffer to fill, the context.
struct HostCopy {
    ctx: cl_context,
    queue: cl_command_queue,
    buffer: cl_mem,
    src: [u32; 16],
    dst: std::cell::UnsafeCell<[u32; 16]>,
    seen: Seen,
    /// The queue and pointer count an SVM free callback got.
    got: Mutex<Vec<(usize, cl_uint)>>,
}
unsafe impl Sync for HostCopy {}

impl HostCopy {
    fn new(e: &Env) -> Box<HostCopy> {
        Box::new(HostCopy {
            ctx: e.ctx,
            queue: e.queue,
            buffer: e.buffer(CL_MEM_READ_WRITE, 64, null_mut()),
            src: std::array::from_fn(|i| 100 + i as u32),
            dst: std::cell::UnsafeCell::new([0; 16]),
            seen: Seen::default(),
            got: Mutex::new(vec![]),
        })
    }

    /// A non-blocking copy between two host arrays (clEnqueueSVMMemcpy takes host pointers on
    /// both sides), then a fill of 7s, on the queue: neither call may wait for the queue, on
    /// whose completing thread the callback runs.
    fn copy_and_fill(&self) {
        let mut codes = vec![unsafe {
            clEnqueueSVMMemcpy(
                self.queue,
                CL_FALSE,
                self.dst.get().cast(),
                self.src.as_ptr().cast(),
                64,
                0,
                null(),
                null_mut(),
            )
        }];
        codes.push(fill(self.queue, self.buffer, 7, &[], null_mut()));
        codes.push(unsafe { clFlush(self.queue) });
        self.seen.codes.lock().unwrap().extend(codes);
        self.seen.calls.fetch_add(1, Ordering::SeqCst);
    }

    /// After the callbacks (`calls` of them) and a clFinish: every call succeeded, the copy
    /// and the fill happened.
    fn check(&self, e: &Env, calls: usize) {
        assert_eq!(self.seen.calls.load(Ordering::SeqCst), calls);
        assert_eq!(
            *self.seen.codes.lock().unwrap(),
            vec![CL_SUCCESS; 3 * calls]
        );
        assert_eq!(unsafe { *self.dst.get() }, self.src);
        assert_eq!(e.read::<u32>(self.buffer, 16), vec![7; 16]);
        unsafe { clReleaseMemObject(self.buffer) };
    }
}

/// clEnqueueSVMFree's callback: copies and fills on the queue it got, then frees the
/// pointers with clSVMFree.
unsafe extern "C" fn svm_free_copies(
    q: cl_command_queue,
    n: cl_uint,
    ptrs: *mut *mut c_void,
    user: *mut c_void,
) {
    let c = unsafe { &*(user as *const HostCopy) };
    c.got.lock().unwrap().push((q as usize, n));
    c.copy_and_fill();
    for i in 0..n as usize {
        unsafe { clSVMFree(c.ctx, *ptrs.add(i)) };
    }
}

/// An SVM free callback (clEnqueueSVMFree) runs on the thread completing the queue's commands
/// (here the one in clFinish) and re-enters the API on its queue: a non-blocking copy of host
/// memory (which waited for the queue, and so for the thread running the callback: a hang
/// before), a fill, clSVMFree of the pointers it was given.
#[test]
fn svm_free_callback_copies_and_enqueues_on_its_queue() {
    setup();
    let e = Env::new();
    let c = HostCopy::new(&e);
    let user = &*c as *const HostCopy as *mut c_void;
    let mut ptrs: Vec<*mut c_void> = (0..2)
        .map(|_| unsafe { clSVMAlloc(e.ctx, CL_MEM_READ_WRITE, 256, 0) })
        .collect();
    assert!(ptrs.iter().all(|p| !p.is_null()), "clSVMAlloc");
    watchdog("svm_free_callback_copies_and_enqueues_on_its_queue", || {
        check!(fill(e.queue, c.buffer, 1, &[], null_mut()));
        let mut ev = null_mut();
        check!(clEnqueueSVMFree(
            e.queue,
            2,
            ptrs.as_mut_ptr(),
            Some(svm_free_copies),
            user,
            0,
            null(),
            &mut ev
        ));
        check!(clFinish(e.queue));
        assert_eq!(c.seen.calls.load(Ordering::SeqCst), 1);
        // What the callback enqueued.
        check!(clFinish(e.queue));
        assert_eq!(event_status(ev), CL_COMPLETE as cl_int);
        unsafe { clReleaseEvent(ev) };
    });
    assert_eq!(*c.got.lock().unwrap(), vec![(e.queue as usize, 2)]);
    c.check(&e, 1);
}

unsafe extern "C" fn complete_copies(_: cl_event, _: cl_int, user: *mut c_void) {
    unsafe { &*(user as *const HostCopy) }.copy_and_fill();
}

/// The same from an event callback run by the queue's completion thread (nobody waits for
/// the command: the test only polls the callback's count).
#[test]
fn complete_callback_on_the_completion_thread_copies_host_memory() {
    setup();
    let e = Env::new();
    let c = HostCopy::new(&e);
    let user = &*c as *const HostCopy as *mut c_void;
    watchdog(
        "complete_callback_on_the_completion_thread_copies_host_memory",
        || {
            let mut ev = null_mut();
            check!(fill(e.queue, c.buffer, 1, &[], &mut ev));
            let complete = CL_COMPLETE as cl_int;
            check!(clSetEventCallback(
                ev,
                complete,
                Some(complete_copies),
                user
            ));
            check!(clFlush(e.queue));
            while c.seen.calls.load(Ordering::SeqCst) == 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
            check!(clFinish(e.queue));
            unsafe { clReleaseEvent(ev) };
        },
    );
    c.check(&e, 1);
}

fn event_status(ev: cl_event) -> cl_int {
    let mut status: cl_int = 99;
    check!(clGetEventInfo(
        ev,
        CL_EVENT_COMMAND_EXECUTION_STATUS,
        4,
        (&mut status as *mut cl_int).cast(),
        null_mut()
    ));
    status
}

/// What a context's destructor callback and its memory object's saw.
struct Teardown {
    /// Another context's queue, which the context's destructor callback uses.
    other: cl_context,
    queue: cl_command_queue,
    order: Mutex<Vec<&'static str>>,
    codes: Mutex<Vec<cl_int>>,
    value: AtomicI32,
}

unsafe extern "C" fn buffer_gone(_: cl_mem, user: *mut c_void) {
    let t = unsafe { &*(user as *const Teardown) };
    t.order.lock().unwrap().push("buffer");
}

/// A context's destructor callback that makes, uses and releases objects of another context:
/// a buffer filled and read (non-blocking: waiting is undefined in a callback) on that
/// context's queue, and a user event.
unsafe extern "C" fn context_gone(_: cl_context, user: *mut c_void) {
    let t = unsafe { &*(user as *const Teardown) };
    t.order.lock().unwrap().push("context");
    let mut err = 0;
    let mut codes = vec![];
    let b = unsafe { clCreateBuffer(t.other, CL_MEM_READ_WRITE, 64, null_mut(), &mut err) };
    codes.push(err);
    codes.push(fill(t.queue, b, 42, &[], null_mut()));
    codes.push(unsafe {
        clEnqueueReadBuffer(
            t.queue,
            b,
            CL_FALSE,
            0,
            4,
            t.value.as_ptr().cast(),
            0,
            null(),
            null_mut(),
        )
    });
    codes.push(unsafe { clReleaseMemObject(b) });
    let user_event = unsafe { clCreateUserEvent(t.other, &mut err) };
    codes.push(err);
    codes.push(unsafe { clSetUserEventStatus(user_event, CL_COMPLETE) });
    codes.push(unsafe { clReleaseEvent(user_event) });
    codes.push(unsafe { clFlush(t.queue) });
    t.codes.lock().unwrap().extend(codes);
}

/// A context whose last reference is held by one of its memory objects goes when that object
/// goes: the object's destructor callbacks run first, then the context's (which here makes,
/// uses and releases objects of another context, re-entering the API).
#[test]
fn context_destructor_runs_after_its_objects_and_reenters() {
    setup();
    let e = Env::new();
    let t = Box::new(Teardown {
        other: e.ctx,
        queue: e.queue,
        order: Mutex::new(vec![]),
        codes: Mutex::new(vec![]),
        value: AtomicI32::new(0),
    });
    let user = &*t as *const Teardown as *mut c_void;
    let mut err = 0;
    let ctx = unsafe { clCreateContext(null(), 1, &e.dev, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let b = unsafe { clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    check!(clSetContextDestructorCallback(
        ctx,
        Some(context_gone),
        user
    ));
    check!(clSetMemObjectDestructorCallback(b, Some(buffer_gone), user));
    watchdog(
        "context_destructor_runs_after_its_objects_and_reenters",
        || {
            check!(clReleaseContext(ctx));
            assert!(t.order.lock().unwrap().is_empty(), "the buffer holds it");
            check!(clReleaseMemObject(b));
            // The callback's read.
            check!(clFinish(e.queue));
        },
    );
    assert_eq!(*t.order.lock().unwrap(), vec!["buffer", "context"]);
    assert_eq!(*t.codes.lock().unwrap(), vec![CL_SUCCESS; 8]);
    assert_eq!(t.value.load(Ordering::SeqCst), 42);
}

/// What a callback given a handle the application has released meanwhile did with it.
#[derive(Default)]
struct Released {
    codes: Mutex<Vec<cl_int>>,
    calls: AtomicUsize,
    src: [u32; 16],
    dst: std::cell::UnsafeCell<[u32; 16]>,
}
unsafe impl Sync for Released {}

/// An SVM free callback that finds the context through the queue it was given, frees the
/// pointers there and enqueues on that queue.
unsafe extern "C" fn svm_free_through_its_queue(
    q: cl_command_queue,
    n: cl_uint,
    ptrs: *mut *mut c_void,
    user: *mut c_void,
) {
    let r = unsafe { &*(user as *const Released) };
    let mut ctx: cl_context = null_mut();
    let mut codes = vec![unsafe {
        clGetCommandQueueInfo(
            q,
            CL_QUEUE_CONTEXT,
            std::mem::size_of::<cl_context>(),
            (&mut ctx as *mut cl_context).cast(),
            null_mut(),
        )
    }];
    if !ctx.is_null() {
        for i in 0..n as usize {
            unsafe { clSVMFree(ctx, *ptrs.add(i)) };
        }
    }
    codes.push(unsafe {
        clEnqueueSVMMemcpy(
            q,
            CL_FALSE,
            r.dst.get().cast(),
            r.src.as_ptr().cast(),
            64,
            0,
            null(),
            null_mut(),
        )
    });
    codes.push(unsafe { clFlush(q) });
    r.codes.lock().unwrap().extend(codes);
    r.calls.fetch_add(1, Ordering::SeqCst);
}

/// Waits (20 s at most) until `calls` reaches `n`.
fn wait_calls(calls: &AtomicUsize, n: usize) {
    let t0 = std::time::Instant::now();
    while calls.load(Ordering::SeqCst) < n && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The queue an SVM free callback is given is a handle it may use, even where the application
/// released its own reference after clEnqueueSVMFree (clReleaseCommandQueue: the queue lives
/// until its commands are done): as an event callback's event, the callback holds a reference.
#[test]
fn svm_free_callback_uses_its_queue_after_the_application_released_it() {
    setup();
    let e = Env::new();
    let r = Box::new(Released {
        src: std::array::from_fn(|i| 7 * i as u32 + 1),
        ..Default::default()
    });
    let user = &*r as *const Released as *mut c_void;
    let mut err = 0;
    let q = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let mut ptrs: Vec<*mut c_void> = (0..2)
        .map(|_| unsafe { clSVMAlloc(e.ctx, CL_MEM_READ_WRITE, 256, 0) })
        .collect();
    assert!(ptrs.iter().all(|p| !p.is_null()), "clSVMAlloc");
    watchdog(
        "svm_free_callback_uses_its_queue_after_the_application_released_it",
        || {
            let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
            assert_eq!(err, CL_SUCCESS);
            check!(clEnqueueSVMFree(
                q,
                2,
                ptrs.as_mut_ptr(),
                Some(svm_free_through_its_queue),
                user,
                1,
                &gate,
                null_mut()
            ));
            // Released while the command waits: the callback runs afterwards.
            check!(clReleaseCommandQueue(q));
            check!(clSetUserEventStatus(gate, CL_COMPLETE));
            unsafe { clReleaseEvent(gate) };
            wait_calls(&r.calls, 1);
            // The callback's copy completes on the queue's completion thread.
            let t0 = std::time::Instant::now();
            while unsafe { *r.dst.get() } != r.src && t0.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(2));
            }
        },
    );
    assert_eq!(r.calls.load(Ordering::SeqCst), 1);
    assert_eq!(*r.codes.lock().unwrap(), vec![CL_SUCCESS; 3]);
    assert_eq!(unsafe { *r.dst.get() }, r.src);
}

/// A build callback that uses the program it reports: its status, a kernel of it.
unsafe extern "C" fn build_uses_its_program(p: cl_program, user: *mut c_void) {
    let r = unsafe { &*(user as *const Released) };
    let mut status: cl_int = 1;
    let dev = device();
    let mut codes = vec![unsafe {
        clGetProgramBuildInfo(
            p,
            dev,
            CL_PROGRAM_BUILD_STATUS,
            4,
            (&mut status as *mut cl_int).cast(),
            null_mut(),
        )
    }];
    codes.push(if status == CL_BUILD_SUCCESS {
        CL_SUCCESS
    } else {
        status
    });
    let mut err = 0;
    let k = unsafe { clCreateKernel(p, c"put".as_ptr(), &mut err) };
    codes.push(err);
    if !k.is_null() {
        codes.push(unsafe { clReleaseKernel(k) });
    }
    r.codes.lock().unwrap().extend(codes);
    r.calls.fetch_add(1, Ordering::SeqCst);
}

/// The program a build callback is given is a handle it may use, even where the application
/// released its own reference right after clBuildProgram returned (the build goes on).
#[test]
fn build_callback_uses_its_program_after_the_application_released_it() {
    setup();
    let e = Env::new();
    let r = Box::<Released>::default();
    let user = &*r as *const Released as *mut c_void;
    let (ptr, len) = (COPY.as_ptr() as *const std::ffi::c_char, COPY.len());
    let mut err = 0;
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    watchdog(
        "build_callback_uses_its_program_after_the_application_released_it",
        || {
            check!(clBuildProgram(
                p,
                1,
                &e.dev,
                null(),
                Some(build_uses_its_program),
                user
            ));
            check!(clReleaseProgram(p));
            wait_calls(&r.calls, 1);
        },
    );
    assert_eq!(r.calls.load(Ordering::SeqCst), 1);
    assert_eq!(*r.codes.lock().unwrap(), vec![CL_SUCCESS; 4]);
}
