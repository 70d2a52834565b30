//! Contexts with several devices (VKCL_DEVICE_COPIES=2: the first Vulkan device twice, each
//! with its own VkDevice): buffers are usable on every device of their context, and commands
//! on different devices ordered by events see each other's results.
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

fn two() -> (cl_context, [cl_device_id; 2], [cl_command_queue; 2]) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::env::set_var("VKCL_DEVICE_COPIES", "2"));
    setup();
    let mut n = 0;
    check!(clGetDeviceIDs(
        platform(),
        CL_DEVICE_TYPE_ALL,
        0,
        null_mut(),
        &mut n
    ));
    assert!(n >= 2, "VKCL_DEVICE_COPIES=2 gives two devices");
    let mut d = [null_mut(); 2];
    check!(clGetDeviceIDs(
        platform(),
        CL_DEVICE_TYPE_ALL,
        2,
        d.as_mut_ptr(),
        null_mut()
    ));
    let mut err = 0;
    let ctx = unsafe { clCreateContext(null(), 2, d.as_ptr(), None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let q = d.map(|dev| {
        let q = unsafe { clCreateCommandQueueWithProperties(ctx, dev, null(), &mut err) };
        assert_eq!(err, CL_SUCCESS);
        q
    });
    (ctx, d, q)
}

#[test]
fn buffers_are_shared_by_the_devices_of_a_context() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(
        ctx,
        &devs,
        "kernel void inc(global int *b, int by) { b[get_global_id(0)] += by; }",
    );
    let k0 = kernel(p, "inc");
    let k1 = kernel(p, "inc");
    let n = 1000usize;
    let data: Vec<i32> = (0..n as i32).collect();
    let mut err = 0;
    let b = unsafe {
        clCreateBuffer(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            n * 4,
            data.as_ptr() as *mut _,
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    // Device 0 adds 1, then device 1 adds 10 after it (an event of the other device's queue),
    // then device 0 adds 100 after that; reads on both devices see 111 added.
    arg(k0, 0, &b);
    arg(k0, 1, &1i32);
    let mut e0 = null_mut();
    check!(clEnqueueNDRangeKernel(
        q[0],
        k0,
        1,
        null(),
        [n].as_ptr(),
        null(),
        0,
        null(),
        &mut e0
    ));
    arg(k1, 0, &b);
    arg(k1, 1, &10i32);
    let mut e1 = null_mut();
    check!(clEnqueueNDRangeKernel(
        q[1],
        k1,
        1,
        null(),
        [n].as_ptr(),
        null(),
        1,
        &e0,
        &mut e1
    ));
    arg(k0, 1, &100i32);
    let mut e2 = null_mut();
    check!(clEnqueueNDRangeKernel(
        q[0],
        k0,
        1,
        null(),
        [n].as_ptr(),
        null(),
        1,
        &e1,
        &mut e2
    ));
    for queue in q {
        let mut out = vec![0i32; n];
        check!(clEnqueueReadBuffer(
            queue,
            b,
            CL_TRUE,
            0,
            n * 4,
            out.as_mut_ptr().cast(),
            1,
            &e2,
            null_mut()
        ));
        assert_eq!(out, data.iter().map(|x| x + 111).collect::<Vec<_>>());
    }
    // Writes, copies, fills and maps on device 1, read on device 0.
    let c = unsafe { clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    check!(clEnqueueCopyBuffer(
        q[1],
        b,
        c,
        0,
        0,
        n * 4,
        0,
        null(),
        null_mut()
    ));
    let seven = 7i32;
    check!(clEnqueueFillBuffer(
        q[1],
        c,
        (&seven as *const i32).cast(),
        4,
        0,
        16,
        0,
        null(),
        null_mut()
    ));
    check!(clFinish(q[1]));
    let mut out = vec![0i32; n];
    check!(clEnqueueReadBuffer(
        q[0],
        c,
        CL_TRUE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    assert_eq!(&out[..4], &[7; 4]);
    assert_eq!(
        out[4..],
        data[4..].iter().map(|x| x + 111).collect::<Vec<_>>()[..]
    );
    // A sub-buffer on device 1.
    let region = [256usize, 64 * 4];
    let sub = unsafe {
        clCreateSubBuffer(
            c,
            CL_MEM_READ_WRITE,
            0x1220, /* CL_BUFFER_CREATE_TYPE_REGION */
            region.as_ptr().cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    arg(k1, 0, &sub);
    arg(k1, 1, &1000i32);
    check!(clEnqueueNDRangeKernel(
        q[1],
        k1,
        1,
        null(),
        [64usize].as_ptr(),
        null(),
        0,
        null(),
        null_mut()
    ));
    check!(clFinish(q[1]));
    check!(clEnqueueReadBuffer(
        q[0],
        c,
        CL_TRUE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    assert_eq!(out[64], 64 + 111 + 1000);
    assert_eq!(out[127], 127 + 111 + 1000);
    assert_eq!(out[128], 128 + 111);
    unsafe {
        for e in [e0, e1, e2] {
            clReleaseEvent(e);
        }
        clReleaseMemObject(sub);
        clReleaseMemObject(b);
        clReleaseMemObject(c);
        clReleaseKernel(k0);
        clReleaseKernel(k1);
        clReleaseProgram(p);
        for queue in q {
            clReleaseCommandQueue(queue);
        }
        clReleaseContext(ctx);
    }
}

fn build_program_multi(ctx: cl_context, devs: &[cl_device_id], src: &str) -> cl_program {
    let mut err = 0;
    let ptr = src.as_ptr() as *const std::ffi::c_char;
    let len = src.len();
    let p = unsafe { clCreateProgramWithSource(ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    check!(clBuildProgram(
        p,
        devs.len() as u32,
        devs.as_ptr(),
        null(),
        None,
        null_mut()
    ));
    p
}

extern "C" {
    fn clSVMAlloc(c: cl_context, flags: cl_bitfield, size: usize, align: cl_uint) -> *mut c_void;
    fn clSVMFree(c: cl_context, p: *mut c_void);
    fn clSetKernelArgSVMPointer(k: cl_kernel, i: cl_uint, p: *const c_void) -> cl_int;
}
use std::ffi::c_void;

/// An SVM allocation of a two-device context: one pointer that kernels on both devices and the
/// host use, at an offset too (issue 18).
#[test]
fn svm_is_shared_by_the_devices_of_a_context() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(
        ctx,
        &devs,
        "kernel void inc(global int *b, int by) { b[get_global_id(0)] += by; }",
    );
    let n = 1000usize;
    let a = unsafe { clSVMAlloc(ctx, 1 << 10, n * 4, 0) } as *mut i32;
    let caps: cl_bitfield = device_val(devs[0], 0x1053); // CL_DEVICE_SVM_CAPABILITIES
    if caps == 0 {
        // No SVM (NVIDIA: the probe found other device addresses): clSVMAlloc returns NULL.
        assert!(a.is_null(), "clSVMAlloc on a device without SVM");
        return;
    }
    if a.is_null() {
        // Where SVM is memory mapped at its device address (VK_EXT_map_memory_placed: NVIDIA,
        // docs/DECISIONS.md "Shared virtual memory"), an allocation lives in one Vulkan device,
        // and each copy of a device has its own: a context of two gets NULL (the spec's
        // allocation failure), each device alone gets its allocation.
        for d in devs {
            let mut err = 0;
            let c = unsafe { clCreateContext(null(), 1, &d, None, null_mut(), &mut err) };
            assert_eq!(err, CL_SUCCESS);
            let one = unsafe { clSVMAlloc(c, 1 << 10, n * 4, 0) };
            assert!(!one.is_null(), "clSVMAlloc in a one-device context");
            unsafe { clSVMFree(c, one) };
            check!(clReleaseContext(c));
        }
        eprintln!("SVM of placed maps: none across two Vulkan devices");
        return;
    }
    for i in 0..n {
        unsafe { *a.add(i) = i as i32 };
    }
    let k = [kernel(p, "inc"), kernel(p, "inc")];
    let mut ev: cl_event = null_mut();
    for (d, by) in [(0usize, 10i32), (1, 1000)] {
        check!(clSetKernelArgSVMPointer(
            k[d],
            0,
            unsafe { a.add(d * 7) }.cast()
        ));
        arg(k[d], 1, &by);
        let wait: &[cl_event] = if ev.is_null() {
            &[]
        } else {
            std::slice::from_ref(&ev)
        };
        let mut next: cl_event = null_mut();
        let global = [n - 7];
        check!(clEnqueueNDRangeKernel(
            q[d],
            k[d],
            1,
            null(),
            global.as_ptr(),
            null(),
            wait.len() as cl_uint,
            if wait.is_empty() {
                null()
            } else {
                wait.as_ptr()
            },
            &mut next
        ));
        check!(clFlush(q[d]));
        if !ev.is_null() {
            check!(clReleaseEvent(ev));
        }
        ev = next;
    }
    check!(clWaitForEvents(1, &ev));
    check!(clReleaseEvent(ev));
    let got: Vec<i32> = (0..n).map(|i| unsafe { *a.add(i) }).collect();
    let want: Vec<i32> = (0..n)
        .map(|i| i as i32 + if i < n - 7 { 10 } else { 0 } + if i >= 7 { 1000 } else { 0 })
        .collect();
    assert_eq!(got, want);
    for k in k {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    unsafe { clSVMFree(ctx, a.cast()) };
    for q in q {
        check!(clReleaseCommandQueue(q));
    }
    check!(clReleaseContext(ctx));
}
