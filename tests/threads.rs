//! Thread safety: 8 threads enqueue at once, into one shared in-order queue and into a queue
//! of their own, with kernels, writes, reads, copies, events across queues and user events;
//! every result is checked. Repeated so that races have a chance to show.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const THREADS: usize = 8;
const ROUNDS: usize = 3;
const N: usize = 1024;

/// Handles are plain pointers: OpenCL objects may be used from any thread.
#[derive(Clone, Copy)]
struct Shared {
    ctx: cl_context,
    dev: cl_device_id,
    queue: cl_command_queue,
    kernel_src: cl_program,
}
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

const SRC: &str = "kernel void axpb(global int *x, int a, int b) { \
                   size_t i = get_global_id(0); x[i] = x[i] * a + b; }";

fn worker(s: Shared, t: usize) {
    let mut err = 0;
    // Each thread makes its own kernel object (kernels are not thread-safe in OpenCL: their
    // arguments are per object) and its own queue.
    let k = unsafe { clCreateKernel(s.kernel_src, c"axpb".as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let own = unsafe { clCreateCommandQueueWithProperties(s.ctx, s.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    for round in 0..ROUNDS {
        let seed = (t * 1000 + round) as i32;
        let input: Vec<i32> = (0..N as i32).map(|i| i + seed).collect();
        let mut bufs = vec![];
        for _ in 0..2 {
            let b =
                unsafe { clCreateBuffer(s.ctx, CL_MEM_READ_WRITE, N * 4, null_mut(), &mut err) };
            assert_eq!(err, CL_SUCCESS);
            bufs.push(b);
        }
        // On the shared queue: write, x = 3x + t, then copy to the second buffer.
        let gate = unsafe { clCreateUserEvent(s.ctx, &mut err) };
        assert_eq!(err, CL_SUCCESS);
        check!(clEnqueueWriteBuffer(
            s.queue,
            bufs[0],
            CL_FALSE,
            0,
            N * 4,
            input.as_ptr().cast(),
            1,
            &gate,
            null_mut()
        ));
        let (a, b) = (3i32, t as i32);
        check!(clSetKernelArg(k, 0, 8, (&bufs[0] as *const cl_mem).cast()));
        check!(clSetKernelArg(k, 1, 4, (&a as *const i32).cast()));
        check!(clSetKernelArg(k, 2, 4, (&b as *const i32).cast()));
        let g = [N];
        check!(clEnqueueNDRangeKernel(
            s.queue,
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut()
        ));
        let mut copied = null_mut();
        check!(clEnqueueCopyBuffer(
            s.queue,
            bufs[0],
            bufs[1],
            0,
            0,
            N * 4,
            0,
            null(),
            &mut copied
        ));
        check!(clFlush(s.queue));
        // On the thread's own queue, after the copy (an event of another queue): x = 2x + 1.
        let (a2, b2) = (2i32, 1i32);
        check!(clSetKernelArg(k, 0, 8, (&bufs[1] as *const cl_mem).cast()));
        check!(clSetKernelArg(k, 1, 4, (&a2 as *const i32).cast()));
        check!(clSetKernelArg(k, 2, 4, (&b2 as *const i32).cast()));
        check!(clEnqueueNDRangeKernel(
            own,
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            1,
            &copied,
            null_mut()
        ));
        // Nothing ran yet: the write waits for the user event.
        check!(clSetUserEventStatus(gate, CL_COMPLETE));
        let mut out = vec![0i32; N];
        check!(clEnqueueReadBuffer(
            own,
            bufs[1],
            CL_TRUE,
            0,
            N * 4,
            out.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ));
        let expected: Vec<i32> = input.iter().map(|&x| (x * 3 + t as i32) * 2 + 1).collect();
        assert_eq!(out, expected, "thread {t} round {round}");
        unsafe {
            clReleaseEvent(gate);
            clReleaseEvent(copied);
            for b in bufs {
                clReleaseMemObject(b);
            }
        }
    }
    check!(clFinish(own));
    unsafe {
        clReleaseCommandQueue(own);
        clReleaseKernel(k);
    }
}

#[test]
fn eight_threads_enqueue_into_shared_and_own_queues() {
    let e = Env::new();
    let p = e.program(SRC, "");
    let s = Shared {
        ctx: e.ctx,
        dev: e.dev,
        queue: e.queue,
        kernel_src: p,
    };
    for _ in 0..3 {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| std::thread::spawn(move || worker(s, t)))
            .collect();
        for h in handles {
            h.join().expect("worker thread");
        }
    }
    check!(clFinish(e.queue));
    unsafe { clReleaseProgram(p) };
}

/// Building, creating and releasing objects from many threads at once.
#[test]
fn objects_are_created_and_released_from_many_threads() {
    let e = Env::new();
    let s = Shared {
        ctx: e.ctx,
        dev: e.dev,
        queue: e.queue,
        kernel_src: null_mut(),
    };
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            std::thread::spawn(move || {
                let s = s; // the whole struct (Send), not its fields
                for i in 0..4 {
                    let src = format!(
                        "kernel void k{t}_{i}(global int *o) {{ o[0] = {t} * 100 + {i}; }}"
                    );
                    let p = build_program(s.ctx, s.dev, &src, "").expect("build");
                    let k = kernel(p, &format!("k{t}_{i}"));
                    let mut err = 0;
                    let b = unsafe {
                        clCreateBuffer(s.ctx, CL_MEM_READ_WRITE, 4, null_mut(), &mut err)
                    };
                    assert_eq!(err, CL_SUCCESS);
                    arg(k, 0, &b);
                    let one = [1usize];
                    check!(clEnqueueNDRangeKernel(
                        s.queue,
                        k,
                        1,
                        null(),
                        one.as_ptr(),
                        null(),
                        0,
                        null(),
                        null_mut()
                    ));
                    let mut v = 0i32;
                    check!(clEnqueueReadBuffer(
                        s.queue,
                        b,
                        CL_TRUE,
                        0,
                        4,
                        (&mut v as *mut i32).cast(),
                        0,
                        null(),
                        null_mut()
                    ));
                    assert_eq!(v, (t * 100 + i) as i32);
                    unsafe {
                        clReleaseMemObject(b);
                        clReleaseKernel(k);
                        clReleaseProgram(p);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("worker thread");
    }
}

/// What a re-entrant callback works on, and what it saw: calls that did not return
/// CL_SUCCESS and callbacks that ran.
struct Reentry {
    ctx: cl_context,
    queue: cl_command_queue,
    kernel: cl_kernel,
    dev: cl_device_id,
    /// A buffer of `ctx` the callbacks fill.
    buffer: cl_mem,
    /// Host memory an SVM free callback copies (clEnqueueSVMMemcpy between host pointers).
    src: [u32; 16],
    dst: std::cell::UnsafeCell<[u32; 16]>,
    /// The thread's own context (scenario "context"), whose callbacks re-enter it.
    own: std::sync::atomic::AtomicPtr<c_void>,
    /// A buffer on SVM memory (scenario "svm_free"), released by the SVM free callback.
    on_svm: std::sync::atomic::AtomicPtr<c_void>,
    failures: std::sync::atomic::AtomicUsize,
    ran: std::sync::atomic::AtomicUsize,
}
unsafe impl Sync for Reentry {}

/// Callbacks run by every thread of `callbacks_reenter_the_api_from_many_threads`: its
/// watchdog's measure of progress.
static PROGRESS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Reentry {
    fn expect(&self, what: &str, code: cl_int) {
        if code != CL_SUCCESS {
            eprintln!("re-entrant {what}: {}", err_name(code));
            self.failures
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    fn ran(&self) {
        self.ran.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        PROGRESS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn check(&self, what: &str, ok: bool) {
        if !ok {
            eprintln!("re-entrant callback: {what}");
            self.failures
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    /// Checks that `p`'s build (compile, link) status on the thread's device is `want`.
    fn check_build_status(&self, p: cl_program, what: &str, want: cl_int) {
        let mut status: cl_int = 1;
        self.expect(&format!("clGetProgramBuildInfo ({what})"), unsafe {
            clGetProgramBuildInfo(
                p,
                self.dev,
                CL_PROGRAM_BUILD_STATUS,
                4,
                (&mut status as *mut cl_int).cast(),
                null_mut(),
            )
        });
        self.check(&format!("{what}: status {status}"), status == want);
    }
    /// A non-blocking fill of the thread's buffer with `v` on its queue.
    fn fill(&self, v: i32) {
        self.expect("clEnqueueFillBuffer", unsafe {
            clEnqueueFillBuffer(
                self.queue,
                self.buffer,
                (&v as *const i32).cast(),
                4,
                0,
                4 * N,
                0,
                null(),
                null_mut(),
            )
        });
    }
}

unsafe extern "C" fn count_cb(_: cl_event, _: cl_int, ud: *mut c_void) {
    unsafe { &*(ud as *const Reentry) }.ran();
}

/// An event callback that uses its own queue and event: flush, enqueue, retain, release and
/// one more callback on the same event.
unsafe extern "C" fn event_reenters(ev: cl_event, status: cl_int, ud: *mut c_void) {
    let r = unsafe { &*(ud as *const Reentry) };
    unsafe {
        r.expect("clFlush", clFlush(r.queue));
        let mut marker = null_mut();
        // A marker after the event (not waiting for a failed one, which is an error of its
        // own).
        let n = u32::from(status >= 0);
        r.expect(
            "clEnqueueMarkerWithWaitList",
            clEnqueueMarkerWithWaitList(r.queue, n, if n == 1 { &ev } else { null() }, &mut marker),
        );
        r.expect("clReleaseEvent(marker)", clReleaseEvent(marker));
        r.expect("clRetainEvent", clRetainEvent(ev));
        r.expect(
            "clSetEventCallback",
            clSetEventCallback(ev, CL_COMPLETE, Some(count_cb), ud),
        );
        r.expect("clReleaseEvent", clReleaseEvent(ev));
    }
    r.ran();
}

/// A memory object's destructor callback that sets an argument of the kernel that held it.
unsafe extern "C" fn destructor_reenters(_: cl_mem, ud: *mut c_void) {
    let r = unsafe { &*(ud as *const Reentry) };
    let x = 5i32;
    r.expect("clSetKernelArg", unsafe {
        clSetKernelArg(r.kernel, 1, 4, (&x as *const i32).cast())
    });
    r.ran();
}

/// A build callback that queries the build it reports.
unsafe extern "C" fn build_reenters(p: cl_program, ud: *mut c_void) {
    let r = unsafe { &*(ud as *const Reentry) };
    r.check_build_status(p, "build", CL_BUILD_SUCCESS);
    r.ran();
}

/// A destructor callback that only counts.
unsafe extern "C" fn counts(_: cl_mem, ud: *mut c_void) {
    unsafe { &*(ud as *const Reentry) }.ran();
}

/// clEnqueueSVMFree's callback: on the queue it was given (the thread's), a non-blocking copy
/// between two host arrays and a fill; clSVMFree of its pointers; an SVM free of a new
/// allocation, without a callback; a buffer made and released; the release of a buffer on the
/// first allocation (whose destructor callback then runs inside this one).
unsafe extern "C" fn svm_free_reenters(
    q: cl_command_queue,
    n: cl_uint,
    ptrs: *mut *mut c_void,
    ud: *mut c_void,
) {
    let r = unsafe { &*(ud as *const Reentry) };
    r.check("the SVM free callback's queue", q == r.queue && n == 2);
    unsafe {
        r.expect(
            "clEnqueueSVMMemcpy",
            clEnqueueSVMMemcpy(
                q,
                CL_FALSE,
                r.dst.get().cast(),
                r.src.as_ptr().cast(),
                64,
                0,
                null(),
                null_mut(),
            ),
        );
        r.fill(11);
        // The buffer on the first allocation goes first (its destructor callback runs here).
        let on_svm = r.on_svm.load(std::sync::atomic::Ordering::SeqCst);
        r.expect("clReleaseMemObject (on SVM)", clReleaseMemObject(on_svm));
        for i in 0..n as usize {
            clSVMFree(r.ctx, *ptrs.add(i));
        }
        let mut more = clSVMAlloc(r.ctx, CL_MEM_READ_WRITE, 64, 0);
        r.check("clSVMAlloc", !more.is_null());
        r.expect(
            "clEnqueueSVMFree",
            clEnqueueSVMFree(q, 1, &mut more, None, null_mut(), 0, null(), null_mut()),
        );
        let mut err = 0;
        let b = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, 64, null_mut(), &mut err);
        r.expect("clCreateBuffer", err);
        r.expect("clReleaseMemObject", clReleaseMemObject(b));
        r.expect("clFlush", clFlush(q));
    }
    r.ran();
}

/// The error callback of the thread's own context (it hears of the failed build): queries the
/// context, makes and releases a buffer of it.
unsafe extern "C" fn error_reenters(
    _: *const std::ffi::c_char,
    _: *const c_void,
    _: usize,
    ud: *mut c_void,
) {
    let r = unsafe { &*(ud as *const Reentry) };
    let own = r.own.load(std::sync::atomic::Ordering::SeqCst);
    let mut n: cl_uint = 0;
    r.expect("clGetContextInfo", unsafe {
        clGetContextInfo(
            own,
            CL_CONTEXT_NUM_DEVICES,
            4,
            (&mut n as *mut cl_uint).cast(),
            null_mut(),
        )
    });
    r.check("CL_CONTEXT_NUM_DEVICES", n == 1);
    let mut err = 0;
    let b = unsafe { clCreateBuffer(own, CL_MEM_READ_WRITE, 64, null_mut(), &mut err) };
    r.expect("clCreateBuffer (error callback)", err);
    r.expect("clReleaseMemObject (error callback)", unsafe {
        clReleaseMemObject(b)
    });
    r.ran();
}

/// A failed build's callback: the status and log of the build, then the program's release.
unsafe extern "C" fn failed_build_reenters(p: cl_program, ud: *mut c_void) {
    let r = unsafe { &*(ud as *const Reentry) };
    r.check_build_status(p, "failed build", CL_BUILD_ERROR);
    let mut size = 0;
    r.expect("clGetProgramBuildInfo(log)", unsafe {
        clGetProgramBuildInfo(p, r.dev, CL_PROGRAM_BUILD_LOG, 0, null_mut(), &mut size)
    });
    r.check("a build log", size > 1);
    r.expect("clReleaseProgram", unsafe { clReleaseProgram(p) });
    r.ran();
}

/// The destructor callback of the thread's own context: makes, uses and releases objects of
/// another context (the shared one): a buffer filled on the thread's queue, a user event.
unsafe extern "C" fn context_reenters(_: cl_context, ud: *mut c_void) {
    let r = unsafe { &*(ud as *const Reentry) };
    let mut err = 0;
    unsafe {
        let b = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, 64, null_mut(), &mut err);
        r.expect("clCreateBuffer (context destructor)", err);
        let v = 3i32;
        r.expect(
            "clEnqueueFillBuffer (context destructor)",
            clEnqueueFillBuffer(
                r.queue,
                b,
                (&v as *const i32).cast(),
                4,
                0,
                64,
                0,
                null(),
                null_mut(),
            ),
        );
        r.expect(
            "clReleaseMemObject (context destructor)",
            clReleaseMemObject(b),
        );
        let e = clCreateUserEvent(r.ctx, &mut err);
        r.expect("clCreateUserEvent", err);
        r.expect("clSetUserEventStatus", clSetUserEventStatus(e, CL_COMPLETE));
        r.expect("clReleaseEvent", clReleaseEvent(e));
        r.expect("clFlush (context destructor)", clFlush(r.queue));
    }
    r.ran();
}

/// clCompileProgram's callback: the compile's status.
unsafe extern "C" fn compile_reenters(p: cl_program, ud: *mut c_void) {
    let r = unsafe { &*(ud as *const Reentry) };
    r.check_build_status(p, "compile", CL_BUILD_SUCCESS);
    r.ran();
}

/// clLinkProgram's callback: the link's status, a kernel of the linked program made, given an
/// argument and released, then the program released (the callback owns it).
unsafe extern "C" fn link_reenters(p: cl_program, ud: *mut c_void) {
    let r = unsafe { &*(ud as *const Reentry) };
    let mut err = 0;
    r.check_build_status(p, "link", CL_BUILD_SUCCESS);
    unsafe {
        let k = clCreateKernel(p, c"axpb".as_ptr(), &mut err);
        r.expect("clCreateKernel (link)", err);
        r.expect(
            "clSetKernelArg (link)",
            clSetKernelArg(k, 0, 8, (&r.buffer as *const cl_mem).cast()),
        );
        r.expect("clReleaseKernel (link)", clReleaseKernel(k));
        r.expect("clReleaseProgram (link)", clReleaseProgram(p));
    }
    r.ran();
}

/// The destructor callback of a buffer that only a command buffer still used: it runs on the
/// thread completing the command buffer's last enqueue (the command lets the buffer go), and
/// re-enters on that queue: a non-blocking copy of host memory, a fill, a kernel argument.
unsafe extern "C" fn command_buffer_memory_reenters(_: cl_mem, ud: *mut c_void) {
    let r = unsafe { &*(ud as *const Reentry) };
    r.expect("clEnqueueSVMMemcpy (command buffer)", unsafe {
        clEnqueueSVMMemcpy(
            r.queue,
            CL_FALSE,
            r.dst.get().cast(),
            r.src.as_ptr().cast(),
            64,
            0,
            null(),
            null_mut(),
        )
    });
    r.fill(13);
    let x = 2i32;
    r.expect("clSetKernelArg (command buffer)", unsafe {
        clSetKernelArg(r.kernel, 1, 4, (&x as *const i32).cast())
    });
    r.expect("clFlush (command buffer)", unsafe { clFlush(r.queue) });
    r.ran();
}

/// cl_khr_command_buffer's entry points that `reenter` uses.
#[allow(clippy::type_complexity)]
struct CommandBuffers {
    create: unsafe extern "C" fn(
        cl_uint,
        *const cl_command_queue,
        *const cl_bitfield,
        *mut cl_int,
    ) -> *mut c_void,
    nd_range: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_bitfield,
        cl_kernel,
        cl_uint,
        *const usize,
        *const usize,
        *const usize,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    finalize: unsafe extern "C" fn(*mut c_void) -> cl_int,
    enqueue: unsafe extern "C" fn(
        cl_uint,
        *mut cl_command_queue,
        *mut c_void,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    release: unsafe extern "C" fn(*mut c_void) -> cl_int,
}

fn command_buffers() -> CommandBuffers {
    /// The entry point `name`, as the function pointer type `F` (its signature).
    unsafe fn entry<F>(name: &std::ffi::CStr) -> F {
        let f = unsafe { clGetExtensionFunctionAddressForPlatform(platform(), name.as_ptr()) };
        assert!(!f.is_null(), "{name:?} is not returned");
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&f));
        // SAFETY: a pointer-sized function pointer type, of the entry point's signature.
        unsafe { std::mem::transmute_copy(&f) }
    }
    // SAFETY: each field's type is the signature of the entry point of that name.
    unsafe {
        CommandBuffers {
            create: entry(c"clCreateCommandBufferKHR"),
            nd_range: entry(c"clCommandNDRangeKernelKHR"),
            finalize: entry(c"clFinalizeCommandBufferKHR"),
            enqueue: entry(c"clEnqueueCommandBufferKHR"),
            release: entry(c"clReleaseCommandBufferKHR"),
        }
    }
}

/// One thread's round of callbacks that call back into OpenCL: event callbacks (CL_SUBMITTED
/// and CL_COMPLETE of a fill, CL_COMPLETE of a command failed by its user event), a
/// destructor callback run by clSetKernelArg, a build callback, an SVM free callback, a
/// context's error callback and its destructor callback, a failed build's callback, compile
/// and link callbacks, the destructor callback of a buffer a command buffer's completion lets
/// go (and clSetProgramReleaseCallback refused: vkcl calls none). Returns the callbacks that
/// ran.
fn reenter(s: Shared) -> usize {
    let mut err = 0;
    let q = unsafe { clCreateCommandQueueWithProperties(s.ctx, s.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let k = unsafe { clCreateKernel(s.kernel_src, c"axpb".as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let b = unsafe { clCreateBuffer(s.ctx, CL_MEM_READ_WRITE, 4 * N, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let r = Box::new(Reentry {
        ctx: s.ctx,
        queue: q,
        kernel: k,
        dev: s.dev,
        buffer: b,
        src: std::array::from_fn(|i| q as usize as u32 ^ i as u32),
        dst: std::cell::UnsafeCell::new([0; 16]),
        own: null_mut::<c_void>().into(),
        on_svm: null_mut::<c_void>().into(),
        failures: 0.into(),
        ran: 0.into(),
    });
    let ud = &*r as *const Reentry as *mut c_void;
    let mut want = 0;
    unsafe {
        if on("event") {
            // Event callbacks on their own queue (CL_SUBMITTED: issue 17 item 1).
            let mut ev = null_mut();
            let pat = 7i32;
            check!(clEnqueueFillBuffer(
                q,
                b,
                (&pat as *const i32).cast(),
                4,
                0,
                4 * N,
                0,
                null(),
                &mut ev
            ));
            check!(clSetEventCallback(
                ev,
                CL_SUBMITTED,
                Some(event_reenters),
                ud
            ));
            check!(clSetEventCallback(
                ev,
                CL_COMPLETE,
                Some(event_reenters),
                ud
            ));
            check!(clFlush(q));
            check!(clWaitForEvents(1, &ev));
            check!(clFinish(q));
            check!(clReleaseEvent(ev));
            want += 4;
        }
        if on("failed") {
            // A command gated by a user event that fails: its CL_COMPLETE callback re-enters
            // (item 2).
            let user = clCreateUserEvent(s.ctx, &mut err);
            assert_eq!(err, CL_SUCCESS);
            let mut gated = null_mut();
            check!(clEnqueueMarkerWithWaitList(q, 1, &user, &mut gated));
            check!(clSetEventCallback(
                gated,
                CL_COMPLETE,
                Some(event_reenters),
                ud
            ));
            check!(clSetUserEventStatus(user, -1));
            assert_eq!(
                clWaitForEvents(1, &gated),
                CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
            );
            check!(clFinish(q));
            check!(clReleaseEvent(user));
            check!(clReleaseEvent(gated));
            want += 2;
        }
        if on("destructor") {
            // A destructor callback run by replacing the kernel argument that holds the
            // buffer (item 3).
            let b2 = clCreateBuffer(s.ctx, CL_MEM_READ_WRITE, 4 * N, null_mut(), &mut err);
            assert_eq!(err, CL_SUCCESS);
            arg(k, 0, &b2);
            check!(clSetMemObjectDestructorCallback(
                b2,
                Some(destructor_reenters),
                ud
            ));
            check!(clReleaseMemObject(b2));
            arg(k, 0, &b);
            want += 1;
        }
        if on("build") {
            let ptr = SRC.as_ptr() as *const std::ffi::c_char;
            let len = SRC.len();
            let p = clCreateProgramWithSource(s.ctx, 1, &ptr, &len, &mut err);
            assert_eq!(err, CL_SUCCESS);
            check!(clBuildProgram(
                p,
                1,
                &s.dev,
                c"".as_ptr(),
                Some(build_reenters),
                ud
            ));
            // With a callback the build may finish after clBuildProgram returns: the program
            // stays alive until its callback ran.
            want += 1;
            wait_for(&r, want);
            check!(clReleaseProgram(p));
        }
        if on("svm_free") {
            // clEnqueueSVMFree's callback, run by the thread completing the queue's commands
            // (here clFinish's), re-enters on its queue: a non-blocking copy of host memory
            // there waited for that thread itself before.
            let mut ptrs: Vec<*mut c_void> = (0..2)
                .map(|_| clSVMAlloc(s.ctx, CL_MEM_READ_WRITE, 256, 0))
                .collect();
            assert!(ptrs.iter().all(|p| !p.is_null()), "clSVMAlloc");
            let flags = CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR;
            let on_svm = clCreateBuffer(s.ctx, flags, 256, ptrs[0], &mut err);
            assert_eq!(err, CL_SUCCESS);
            check!(clSetMemObjectDestructorCallback(on_svm, Some(counts), ud));
            r.on_svm.store(on_svm, std::sync::atomic::Ordering::SeqCst);
            check!(clEnqueueSVMFree(
                q,
                2,
                ptrs.as_mut_ptr(),
                Some(svm_free_reenters),
                ud,
                0,
                null(),
                null_mut()
            ));
            check!(clFinish(q));
            // The SVM free callback and the destructor callback it ran.
            want += 2;
            wait_for(&r, want);
            // What the callback enqueued.
            check!(clFinish(q));
            assert_eq!(*r.dst.get(), r.src, "the callback's copy");
            let mut v = [0i32; 4];
            check!(clEnqueueReadBuffer(
                q,
                b,
                CL_TRUE,
                0,
                16,
                v.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ));
            assert_eq!(v, [11; 4], "the callback's fill");
        }
        if on("context") {
            // A context of the thread's own: its error callback hears of a build failing on
            // the build thread, whose callback then releases the program; its destructor
            // callback runs when the last of those references goes.
            let own = clCreateContext(null(), 1, &s.dev, Some(error_reenters), ud, &mut err);
            assert_eq!(err, CL_SUCCESS);
            r.own.store(own, std::sync::atomic::Ordering::SeqCst);
            check!(clSetContextDestructorCallback(
                own,
                Some(context_reenters),
                ud
            ));
            let broken = "kernel void broken(global int *p) { p[0] = undeclared; }";
            let (ptr, len) = (broken.as_ptr() as *const std::ffi::c_char, broken.len());
            let p = clCreateProgramWithSource(own, 1, &ptr, &len, &mut err);
            assert_eq!(err, CL_SUCCESS);
            check!(clBuildProgram(
                p,
                1,
                &s.dev,
                c"".as_ptr(),
                Some(failed_build_reenters),
                ud
            ));
            // The error and build callbacks (the context is the application's until then).
            want += 2;
            wait_for(&r, want);
            check!(clReleaseContext(own));
            want += 1;
            wait_for(&r, want);
            // What the destructor callback enqueued.
            check!(clFinish(q));
        }
        if on("compile_link") {
            let ptr = SRC.as_ptr() as *const std::ffi::c_char;
            let len = SRC.len();
            let p = clCreateProgramWithSource(s.ctx, 1, &ptr, &len, &mut err);
            assert_eq!(err, CL_SUCCESS);
            check!(clCompileProgram(
                p,
                1,
                &s.dev,
                c"".as_ptr(),
                0,
                null(),
                null(),
                Some(compile_reenters),
                ud
            ));
            want += 1;
            wait_for(&r, want);
            // The link's callback releases the linked program.
            let linked = clLinkProgram(
                s.ctx,
                1,
                &s.dev,
                c"".as_ptr(),
                1,
                &p,
                Some(link_reenters),
                ud,
                &mut err,
            );
            assert_eq!(err, CL_SUCCESS);
            assert!(!linked.is_null());
            want += 1;
            wait_for(&r, want);
            check!(clReleaseProgram(p));
        }
        if on("command_buffer") {
            // A buffer used by a recorded launch, released by the application, then the
            // command buffer released after its enqueue: the buffer goes when that enqueue
            // completes, on the thread completing it (clFinish's here).
            let cb = command_buffers();
            let used = clCreateBuffer(s.ctx, CL_MEM_READ_WRITE, 4 * N, null_mut(), &mut err);
            assert_eq!(err, CL_SUCCESS);
            check!(clSetMemObjectDestructorCallback(
                used,
                Some(command_buffer_memory_reenters),
                ud
            ));
            let (a, c) = (1i32, 1i32);
            arg(k, 0, &used);
            check!(clSetKernelArg(k, 1, 4, (&a as *const i32).cast()));
            check!(clSetKernelArg(k, 2, 4, (&c as *const i32).cast()));
            let buffer = (cb.create)(1, &q, null(), &mut err);
            assert_eq!(err, CL_SUCCESS);
            let g = [N];
            check!((cb.nd_range)(
                buffer,
                null_mut(),
                null(),
                k,
                1,
                null(),
                g.as_ptr(),
                null(),
                0,
                null(),
                null_mut(),
                null_mut()
            ));
            check!((cb.finalize)(buffer));
            arg(k, 0, &b);
            let mut queues = [q];
            check!((cb.enqueue)(
                1,
                queues.as_mut_ptr(),
                buffer,
                0,
                null(),
                null_mut()
            ));
            check!(clReleaseMemObject(used));
            check!((cb.release)(buffer));
            check!(clFinish(q));
            want += 1;
            wait_for(&r, want);
            // What the callback enqueued.
            check!(clFinish(q));
            let mut v = [0i32; 4];
            check!(clEnqueueReadBuffer(
                q,
                b,
                CL_TRUE,
                0,
                16,
                v.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ));
            assert_eq!(v, [13; 4], "the callback's fill");
        }
        if on("program_release") {
            // vkcl calls no program release callback: programs have no program-scope global
            // destructors (CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT is false), and OpenCL 3.0
            // lets clSetProgramReleaseCallback refuse. Were it implemented, this scenario
            // would need a callback of that kind.
            let ptr = SRC.as_ptr() as *const std::ffi::c_char;
            let len = SRC.len();
            let p = clCreateProgramWithSource(s.ctx, 1, &ptr, &len, &mut err);
            assert_eq!(err, CL_SUCCESS);
            assert_eq!(
                clSetProgramReleaseCallback(p, Some(build_reenters), ud),
                CL_INVALID_OPERATION
            );
            check!(clReleaseProgram(p));
        }
        check!(clFinish(q));
        check!(clReleaseKernel(k));
        check!(clReleaseMemObject(b));
        check!(clReleaseCommandQueue(q));
    }
    // Callbacks may still be finishing on vkcl's thread after clFinish: wait for the count.
    wait_for(&r, want);
    assert_eq!(r.failures.load(std::sync::atomic::Ordering::SeqCst), 0);
    let ran = r.ran.load(std::sync::atomic::Ordering::SeqCst);
    // The callbacks hold `ud`: keep it for the life of the process.
    std::mem::forget(r);
    assert_eq!(ran, want, "callbacks that ran");
    ran
}

/// Waits (20 s at most) until `want` callbacks ran.
fn wait_for(r: &Reentry, want: usize) {
    let t0 = std::time::Instant::now();
    while r.ran.load(std::sync::atomic::Ordering::SeqCst) < want && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The scenarios of `reenter` to run: all, or those VKCL_TEST_REENTER names
/// (`event,failed,destructor,build,svm_free,context,compile_link,command_buffer,
/// program_release`).
fn on(scenario: &str) -> bool {
    std::env::var("VKCL_TEST_REENTER").map_or(true, |v| v.split(',').any(|s| s == scenario))
}

/// Issue 17 items 1-3 and 7: callbacks that call back into OpenCL, from 8 threads at once:
/// callbacks of every kind vkcl calls (event, memory-object destructor, build, compile and
/// link, SVM free, context error, context destructor; see `reenter`).
/// A hang (a callback run under a vkcl lock that the call inside it takes again) aborts the
/// process after 60 s with a message, rather than stalling the test run.
#[test]
fn callbacks_reenter_the_api_from_many_threads() {
    setup();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = done.clone();
    std::thread::spawn(move || {
        // 60 s without a callback running (builds on a loaded machine take a while, in all).
        let mut t0 = std::time::Instant::now();
        let mut seen = PROGRESS.load(std::sync::atomic::Ordering::SeqCst);
        while !watch.load(std::sync::atomic::Ordering::SeqCst) {
            let now = PROGRESS.load(std::sync::atomic::Ordering::SeqCst);
            if now != seen {
                (seen, t0) = (now, std::time::Instant::now());
            }
            if t0.elapsed().as_secs() >= 60 {
                // Not eprintln!: the test harness captures it, and the abort would lose it.
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "callbacks_reenter_the_api_from_many_threads: no progress in 60 s: a callback \
                     that re-enters the API hangs (run under a vkcl lock); aborting"
                );
                std::process::abort();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    let e = Env::new();
    let p = e.program(SRC, "");
    let s = Shared {
        ctx: e.ctx,
        dev: e.dev,
        queue: e.queue,
        kernel_src: p,
    };
    let ran: Vec<usize> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..THREADS).map(|_| sc.spawn(move || reenter(s))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    // Each thread asserted its own count (`reenter`).
    println!("callbacks run per thread: {ran:?}");
    unsafe { clReleaseProgram(p) };
}
