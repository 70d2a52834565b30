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
