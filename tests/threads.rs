//! Thread safety: 8 threads enqueue at once, into one shared in-order queue and into a queue
//! of their own, with kernels, writes, reads, copies, events across queues and user events;
//! every result is checked. Repeated so that races have a chance to show.
#[macro_use]
mod common;
use common::*;
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
