//! Object life cycle: releasing a queue, context or memory object with work pending completes
//! that work first; a process that exits without releasing anything, with work in flight,
//! exits cleanly (run as child processes of this test binary).
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

const SPIN: &str = "kernel void spin(global int *b, int n) { int x = b[get_global_id(0)]; \
                    for (int i = 0; i < n; i++) x = x * 3 + 1; b[get_global_id(0)] = x + 7 - x; }";

static DESTROYED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_destroyed(_: cl_mem, _: *mut c_void) {
    DESTROYED.fetch_add(1, Ordering::SeqCst);
}

/// Everything released right after enqueueing: the kernel still runs to the end (its result
/// lands in the application's memory through USE_HOST_PTR... read back through a blocking read
/// enqueued before the releases), and the buffer's destructor runs only after it.
#[test]
fn releasing_everything_with_work_pending_completes_the_work() {
    setup();
    let dev = device();
    let mut err = 0;
    let ctx = unsafe { clCreateContext(null(), 1, &dev, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let q = unsafe { clCreateCommandQueueWithProperties(ctx, dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let p = build_program(ctx, dev, SPIN, "").expect("build");
    let k = kernel(p, "spin");
    let n = 4096usize;
    let b = unsafe { clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    check!(clSetMemObjectDestructorCallback(
        b,
        Some(count_destroyed),
        null_mut()
    ));
    arg(k, 0, &b);
    arg(k, 1, &20_000i32);
    check!(clEnqueueNDRangeKernel(
        q,
        k,
        1,
        null(),
        [n].as_ptr(),
        null(),
        0,
        null(),
        null_mut()
    ));
    let mut out = vec![0i32; n];
    let mut read = null_mut();
    check!(clEnqueueReadBuffer(
        q,
        b,
        CL_FALSE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        0,
        null(),
        &mut read
    ));
    let before = DESTROYED.load(Ordering::SeqCst);
    unsafe {
        clReleaseMemObject(b);
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    }
    // The read's event still answers, and the data arrives.
    check!(clWaitForEvents(1, &read));
    assert_eq!(out, vec![7; n]);
    // The buffer is destroyed once its commands are done (its callback has run or runs soon).
    let t0 = std::time::Instant::now();
    while DESTROYED.load(Ordering::SeqCst) == before && t0.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(DESTROYED.load(Ordering::SeqCst), before + 1);
    check!(clReleaseEvent(read));
}

/// A process that exits (returning from main, so atexit handlers and static destructors run)
/// with commands in flight and nothing released, and ones that exit while another thread
/// enqueues, or waits in clFinish: all exit with status 0 in time.
#[test]
fn exiting_without_releasing_is_clean() {
    if let Ok(mode) = std::env::var("VKCL_TEST_EXIT_CHILD") {
        let e = Env::new();
        let p = e.program(SPIN, "");
        let k = kernel(p, "spin");
        let b = e.buffer(CL_MEM_READ_WRITE, 1 << 20, null_mut());
        arg(k, 0, &b);
        arg(k, 1, &100_000i32);
        if mode == "thread" || mode == "finish" {
            let (q, k) = (e.queue as usize, k as usize);
            let finish = mode == "finish";
            std::thread::spawn(move || loop {
                let (q, k) = (q as cl_command_queue, k as cl_kernel);
                unsafe {
                    clEnqueueNDRangeKernel(
                        q,
                        k,
                        1,
                        null(),
                        [1usize << 18].as_ptr(),
                        null(),
                        0,
                        null(),
                        null_mut(),
                    );
                    // "finish": the thread is waiting on the timeline when the process exits.
                    if finish {
                        clFinish(q);
                    } else {
                        clFlush(q);
                    }
                }
            });
            std::thread::sleep(std::time::Duration::from_millis(300));
        } else {
            for _ in 0..4 {
                check!(clEnqueueNDRangeKernel(
                    e.queue,
                    k,
                    1,
                    null(),
                    [1usize << 18].as_ptr(),
                    null(),
                    0,
                    null(),
                    null_mut()
                ));
            }
            check!(clFlush(e.queue));
        }
        std::process::exit(0);
    }
    for mode in ["flight", "thread", "finish"] {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "exiting_without_releasing_is_clean",
                "--exact",
                "--nocapture",
            ])
            .env("VKCL_TEST_EXIT_CHILD", mode)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed().as_secs() > 60 {
                let _ = child.kill();
                panic!("the {mode} child hangs at exit");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(status.success(), "{mode}: {status}");
    }
}

/// The objects the exit handler of `releasing_at_exit_succeeds`'s child releases.
static AT_EXIT: std::sync::OnceLock<[usize; 6]> = std::sync::OnceLock::new();

extern "C" {
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
    fn _exit(status: std::ffi::c_int) -> !;
}

/// Runs after main returned and after vkcl's own exit handler (registered later, so run
/// earlier), as an application's static destructors do: every release, retain and query of
/// known state succeeds, and a handle released to zero is then invalid. A failure ends the
/// process with status 3 + the step's number.
extern "C" fn release_at_exit() {
    let Some(&[ctx, q, b, p, k, ev]) = AT_EXIT.get() else {
        unsafe { _exit(2) }
    };
    let fail = |step: i32, code: cl_int, want: cl_int| {
        if code != want {
            eprintln!(
                "at exit, step {step}: {} (want {})",
                err_name(code),
                err_name(want)
            );
            unsafe { _exit(3 + step) }
        }
    };
    let b = b as cl_mem;
    unsafe {
        fail(0, clRetainMemObject(b), CL_SUCCESS);
        let mut refs: cl_uint = 0;
        let code = clGetMemObjectInfo(
            b,
            CL_MEM_REFERENCE_COUNT,
            4,
            &mut refs as *mut _ as *mut c_void,
            null_mut(),
        );
        fail(1, code, CL_SUCCESS);
        fail(2, if refs == 2 { CL_SUCCESS } else { -1000 }, CL_SUCCESS);
        fail(3, clReleaseMemObject(b), CL_SUCCESS);
        fail(4, clReleaseMemObject(b), CL_SUCCESS);
        // Released to zero: the handle is gone, as at any other time.
        fail(5, clRetainMemObject(b), CL_INVALID_MEM_OBJECT);
        fail(6, clReleaseEvent(ev as cl_event), CL_SUCCESS);
        fail(7, clReleaseKernel(k as cl_kernel), CL_SUCCESS);
        fail(8, clReleaseProgram(p as cl_program), CL_SUCCESS);
        fail(9, clReleaseCommandQueue(q as cl_command_queue), CL_SUCCESS);
        fail(10, clReleaseContext(ctx as cl_context), CL_SUCCESS);
        fail(11, clReleaseContext(ctx as cl_context), CL_INVALID_CONTEXT);
    }
}

/// Issue 17 item 8: a process whose exit path (an atexit handler registered before the first
/// OpenCL call, like a static destructor) releases its objects after vkcl's exit handler ran
/// gets CL_SUCCESS from every release (CLBlast's programs printed `clReleaseProgram: -5`).
#[test]
fn releasing_at_exit_succeeds() {
    if std::env::var_os("VKCL_TEST_AT_EXIT_CHILD").is_some() {
        // SAFETY: registers a function with no captured state.
        unsafe { atexit(release_at_exit) };
        let dev = device();
        let mut err = 0;
        let ctx = unsafe { clCreateContext(null(), 1, &dev, None, null_mut(), &mut err) };
        assert_eq!(err, CL_SUCCESS);
        let q = unsafe { clCreateCommandQueueWithProperties(ctx, dev, null(), &mut err) };
        assert_eq!(err, CL_SUCCESS);
        let p = build_program(ctx, dev, SPIN, "").expect("build");
        let k = kernel(p, "spin");
        let b = unsafe { clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, null_mut(), &mut err) };
        assert_eq!(err, CL_SUCCESS);
        arg(k, 0, &b);
        arg(k, 1, &1000i32);
        let mut ev = null_mut();
        check!(clEnqueueNDRangeKernel(
            q,
            k,
            1,
            null(),
            [1usize << 16].as_ptr(),
            null(),
            0,
            null(),
            &mut ev
        ));
        check!(clFlush(q));
        let objs = [
            ctx as usize,
            q as usize,
            b as usize,
            p as usize,
            k as usize,
            ev as usize,
        ];
        AT_EXIT.set(objs).unwrap();
        std::process::exit(0);
    }
    setup();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["releasing_at_exit_succeeds", "--exact", "--nocapture"])
        .env("VKCL_TEST_AT_EXIT_CHILD", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the child's exit-time releases failed: {} (status 3+n: step n; stderr: {})",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
