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

// ------------------------------------------------ buffers in each device's own memory (issue 22)

/// A buffer of `data` (or of `n` undefined ints) with `flags`.
fn ints(ctx: cl_context, flags: cl_bitfield, data: Option<&[i32]>, n: usize) -> cl_mem {
    let mut err = 0;
    let (flags, ptr) = match data {
        Some(d) => (flags | CL_MEM_COPY_HOST_PTR, d.as_ptr() as *mut c_void),
        None => (flags, null_mut()),
    };
    let b = unsafe { clCreateBuffer(ctx, flags, n * 4, ptr, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    b
}

/// `n` bytes of `b` from `origin`, as a sub-buffer.
fn sub(b: cl_mem, flags: cl_bitfield, origin: usize, n: usize) -> cl_mem {
    let mut err = 0;
    let region = [origin, n];
    let s = unsafe { clCreateSubBuffer(b, flags, 0x1220, region.as_ptr().cast(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    s
}

/// Launches `k` over `n` work-items (groups of `local`, if given) on `q` after `wait`.
fn launch(
    q: cl_command_queue,
    k: cl_kernel,
    n: usize,
    local: Option<usize>,
    wait: &[cl_event],
) -> cl_event {
    let mut e = null_mut();
    let local = local.map(|l| [l]);
    let (count, list) = wait_list(wait);
    check!(clEnqueueNDRangeKernel(
        q,
        k,
        1,
        null(),
        [n].as_ptr(),
        local.as_ref().map_or(null(), |l| l.as_ptr()),
        count,
        list,
        &mut e
    ));
    e
}

/// A blocking read of `n` ints of `b` on `q` after `wait`.
fn read(q: cl_command_queue, b: cl_mem, n: usize, wait: &[cl_event]) -> Vec<i32> {
    let mut out = vec![0i32; n];
    let (count, list) = wait_list(wait);
    check!(clEnqueueReadBuffer(
        q,
        b,
        CL_TRUE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        count,
        list,
        null_mut()
    ));
    out
}

fn release_all(events: &[cl_event], mems: &[cl_mem]) {
    for &e in events {
        check!(clReleaseEvent(e));
    }
    for &m in mems {
        check!(clReleaseMemObject(m));
    }
}

fn end(ctx: cl_context, q: [cl_command_queue; 2], p: cl_program, kernels: &[cl_kernel]) {
    for &k in kernels {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    for q in q {
        check!(clFinish(q));
        check!(clReleaseCommandQueue(q));
    }
    check!(clReleaseContext(ctx));
}

const STEP: &str = "kernel void step(global int *b, int by) {
    size_t i = get_global_id(0); b[i] = b[i] * 3 + by; }";

/// A buffer passed back and forth between the devices by kernels (each after the other's
/// event, without clFinish), large enough for several staging chunks; after each round the
/// other device's read agrees with the host's model.
#[test]
fn a_buffer_ping_pongs_between_the_devices_through_kernels() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(ctx, &devs, STEP);
    let k = [kernel(p, "step"), kernel(p, "step")];
    let n = 3 << 20;
    let mut model: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(7919)).collect();
    let b = ints(ctx, CL_MEM_READ_WRITE, Some(&model), n);
    let mut last: Vec<cl_event> = vec![];
    for round in 0..6 {
        let d = round % 2;
        arg(k[d], 0, &b);
        arg(k[d], 1, &(round as i32 + 1));
        let e = launch(q[d], k[d], n, None, &last);
        check!(clFlush(q[d]));
        release_all(&last, &[]);
        last = vec![e];
        for x in &mut model {
            *x = x.wrapping_mul(3).wrapping_add(round as i32 + 1);
        }
        if round % 3 == 2 {
            // The other device reads what this one wrote.
            assert!(read(q[1 - d], b, n, &last) == model, "round {round}");
        }
    }
    for queue in q {
        assert!(read(queue, b, n, &last) == model);
    }
    release_all(&last, &[b]);
    end(ctx, q, p, &k);
}

/// Sub-buffers of one buffer written by the two devices at the same time (no order between
/// them) each keep their device's data; then a reduction split across the devices: each sums
/// its half of a read-only input into its half of the partial sums.
#[test]
fn sub_buffers_of_one_buffer_are_written_by_both_devices_at_once() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(
        ctx,
        &devs,
        &format!(
            "{STEP}
            kernel void sum(global const int *in, global int *partial, local int *scratch) {{
                size_t l = get_local_id(0), n = get_local_size(0);
                scratch[l] = in[get_global_id(0)];
                for (size_t s = n / 2; s > 0; s /= 2) {{
                    barrier(CLK_LOCAL_MEM_FENCE);
                    if (l < s) scratch[l] += scratch[l + s];
                }}
                if (l == 0) partial[get_group_id(0)] = scratch[0];
            }}"
        ),
    );
    let k = [kernel(p, "step"), kernel(p, "step")];
    let half = 1 << 18; // ints: 1 MiB, a multiple of every base-address alignment
    let data: Vec<i32> = (0..2 * half as i32).map(|i| (i % 1000) - 500).collect();
    let b = ints(ctx, CL_MEM_READ_WRITE, Some(&data), 2 * half);
    let halves = [0, 1].map(|d| sub(b, CL_MEM_READ_WRITE, d * half * 4, half * 4));
    let events: Vec<cl_event> = (0..2)
        .map(|d| {
            arg(k[d], 0, &halves[d]);
            arg(k[d], 1, &(d as i32 + 1));
            let e = launch(q[d], k[d], half, None, &[]);
            check!(clFlush(q[d]));
            e
        })
        .collect();
    let want: Vec<i32> = (0..2 * half)
        .map(|i| data[i] * 3 + if i < half { 1 } else { 2 })
        .collect();
    for queue in q {
        assert!(read(queue, b, 2 * half, &events) == want);
    }
    // The reduction: `b` (now `want`) read-only through sub-buffers, partial sums per group
    // of 256 into the halves of one buffer.
    let groups = half / 256;
    let partial = ints(ctx, CL_MEM_READ_WRITE, None, 2 * groups);
    let parts = [0, 1].map(|d| sub(partial, CL_MEM_READ_WRITE, d * groups * 4, groups * 4));
    let inputs = [0, 1].map(|d| sub(b, CL_MEM_READ_ONLY, d * half * 4, half * 4));
    let sums = [kernel(p, "sum"), kernel(p, "sum")];
    let summed: Vec<cl_event> = (0..2)
        .map(|d| {
            arg(sums[d], 0, &inputs[d]);
            arg(sums[d], 1, &parts[d]);
            arg_local(sums[d], 2, 256 * 4);
            let e = launch(q[d], sums[d], half, Some(256), &[]);
            check!(clFlush(q[d]));
            e
        })
        .collect();
    let got: i64 = read(q[0], partial, 2 * groups, &summed)
        .iter()
        .map(|&x| x as i64)
        .sum();
    assert_eq!(got, want.iter().map(|&x| x as i64).sum::<i64>());
    release_all(&events, &halves);
    release_all(&summed, &parts);
    release_all(&[], &inputs);
    release_all(&[], &[partial, b]);
    end(ctx, q, p, &[k[0], k[1], sums[0], sums[1]]);
}

/// clEnqueueMigrateMemObjects with each flag: plain (the data comes to the queue's device),
/// CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED (then overwritten there), CL_MIGRATE_MEM_OBJECT_HOST
/// (the host then reads the latest data on either device); an unknown flag is refused.
#[test]
fn migrations_with_every_flag_keep_the_data_right() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(ctx, &devs, STEP);
    let k = [kernel(p, "step"), kernel(p, "step")];
    let n = 4096;
    let data: Vec<i32> = (0..n as i32).collect();
    let b = ints(ctx, CL_MEM_READ_WRITE, Some(&data), n);
    let migrate = |queue: cl_command_queue, flags: cl_bitfield, wait: cl_event| {
        let mut e = null_mut();
        check!(clEnqueueMigrateMemObjects(
            queue, 1, &b, flags, 1, &wait, &mut e
        ));
        e
    };
    // Written on device 1, migrated to device 0, updated there.
    arg(k[1], 0, &b);
    arg(k[1], 1, &1i32);
    let e1 = launch(q[1], k[1], n, None, &[]);
    let m0 = migrate(q[0], 0, e1);
    arg(k[0], 0, &b);
    arg(k[0], 1, &2i32);
    let e0 = launch(q[0], k[0], n, None, &[m0]);
    let want: Vec<i32> = data.iter().map(|x| (x * 3 + 1) * 3 + 2).collect();
    assert_eq!(read(q[1], b, n, &[e0]), want);
    // Content undefined, then every byte written on device 1: device 0 reads that.
    let m1 = migrate(q[1], 1 << 1 /* CONTENT_UNDEFINED */, e0);
    let filled = 0x5a5a5a5ai32;
    let mut f = null_mut();
    check!(clEnqueueFillBuffer(
        q[1],
        b,
        (&filled as *const i32).cast(),
        4,
        0,
        n * 4,
        1,
        &m1,
        &mut f
    ));
    assert_eq!(read(q[0], b, n, &[f]), vec![filled; n]);
    // To the host after a kernel on device 0: a map on device 1 sees the kernel's writes.
    let e2 = launch(q[0], k[0], n, None, &[f]);
    let h = migrate(q[1], 1 << 0 /* HOST */, e2);
    let mut err = 0;
    let ptr = unsafe {
        clEnqueueMapBuffer(
            q[1],
            b,
            CL_TRUE,
            CL_MAP_READ,
            0,
            n * 4,
            1,
            &h,
            null_mut(),
            &mut err,
        )
    } as *const i32;
    assert_eq!(err, CL_SUCCESS);
    let mapped = unsafe { std::slice::from_raw_parts(ptr, n) };
    assert!(mapped
        .iter()
        .all(|&x| x == filled.wrapping_mul(3).wrapping_add(2)));
    check!(clEnqueueUnmapMemObject(
        q[1],
        b,
        ptr as *mut c_void,
        0,
        null(),
        null_mut()
    ));
    let mut bad = null_mut();
    assert_eq!(
        unsafe { clEnqueueMigrateMemObjects(q[0], 1, &b, 1 << 5, 0, null(), &mut bad) },
        CL_INVALID_VALUE
    );
    release_all(&[e1, m0, e0, m1, f, e2, h], &[b]);
    end(ctx, q, p, &k);
}

/// Maps after kernels on the other device see their results; what a write map's host stores
/// leave at an unmap on one device, kernels and reads on the other see (also after a
/// CL_MAP_WRITE_INVALIDATE_REGION map of part of the buffer).
#[test]
fn maps_see_the_latest_data_wherever_it_is() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(ctx, &devs, STEP);
    let k = [kernel(p, "step"), kernel(p, "step")];
    let n = 8192;
    let data: Vec<i32> = (0..n as i32).collect();
    let b = ints(ctx, CL_MEM_READ_WRITE, Some(&data), n);
    let map = |queue, flags, offset: usize, len: usize, wait: &[cl_event]| {
        let mut err = 0;
        let ptr = unsafe {
            clEnqueueMapBuffer(
                queue,
                b,
                CL_TRUE,
                flags,
                offset * 4,
                len * 4,
                wait.len() as cl_uint,
                if wait.is_empty() {
                    null()
                } else {
                    wait.as_ptr()
                },
                null_mut(),
                &mut err,
            )
        } as *mut i32;
        assert_eq!(err, CL_SUCCESS);
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    };
    let unmap = |queue, m: &mut [i32]| {
        let mut e = null_mut();
        check!(clEnqueueUnmapMemObject(
            queue,
            b,
            m.as_mut_ptr().cast(),
            0,
            null(),
            &mut e
        ));
        e
    };
    arg(k[1], 0, &b);
    arg(k[1], 1, &5i32);
    let e = launch(q[1], k[1], n, None, &[]);
    let m = map(q[0], CL_MAP_READ | CL_MAP_WRITE, 0, n, &[e]);
    let mut model: Vec<i32> = data.iter().map(|x| x * 3 + 5).collect();
    assert!(m == &model[..]);
    for (i, x) in m.iter_mut().enumerate().step_by(3) {
        *x = -(i as i32);
        model[i] = -(i as i32);
    }
    // Unmapped on device 1, then a kernel there.
    let u = unmap(q[1], m);
    arg(k[1], 1, &1i32);
    let e2 = launch(q[1], k[1], n, None, &[u]);
    model.iter_mut().for_each(|x| *x = *x * 3 + 1);
    assert_eq!(read(q[0], b, n, &[e2]), model);
    // Part of it overwritten through an invalidating map on device 0: device 1 reads it.
    let m = map(q[0], CL_MAP_WRITE_INVALIDATE_REGION, 100, 50, &[e2]);
    m.iter_mut().for_each(|x| *x = 77);
    model[100..150].iter_mut().for_each(|x| *x = 77);
    let u2 = unmap(q[0], m);
    assert_eq!(read(q[1], b, n, &[u2]), model);
    release_all(&[e, u, e2, u2], &[b]);
    end(ctx, q, p, &k);
}

/// A kernel on device 1 held back by a user event, a read on device 0 after it: the read waits
/// for the kernel (the copy between the devices waits too) and sees its writes once the user
/// event is set; a buffer with CL_MEM_USE_HOST_PTR stays the application's memory.
#[test]
fn commands_held_back_by_a_user_event_move_the_data_when_released() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(ctx, &devs, STEP);
    let k = [kernel(p, "step"), kernel(p, "step")];
    let n = 2048;
    let data: Vec<i32> = (0..n as i32).collect();
    let b = ints(ctx, CL_MEM_READ_WRITE, Some(&data), n);
    let mut err = 0;
    let user = unsafe { clCreateUserEvent(ctx, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    arg(k[1], 0, &b);
    arg(k[1], 1, &9i32);
    let e = launch(q[1], k[1], n, None, &[user]);
    let mut out = vec![0i32; n];
    let mut r = null_mut();
    check!(clEnqueueReadBuffer(
        q[0],
        b,
        CL_FALSE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        1,
        &e,
        &mut r
    ));
    check!(clFlush(q[0]));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let status = event_status(r);
    assert!(
        status == CL_QUEUED || status == CL_SUBMITTED,
        "not before the user event: {status}"
    );
    check!(clSetUserEventStatus(user, CL_COMPLETE));
    check!(clWaitForEvents(1, &r));
    assert_eq!(out, data.iter().map(|x| x * 3 + 9).collect::<Vec<_>>());
    // CL_MEM_USE_HOST_PTR: a kernel on device 1, then a map on device 0 returns host_ptr.
    let host = Aligned::new(n * 4);
    let h = unsafe {
        clCreateBuffer(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
            n * 4,
            host.ptr.cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    arg(k[1], 0, &h);
    let e2 = launch(q[1], k[1], n, None, &[]);
    let ptr = unsafe {
        clEnqueueMapBuffer(
            q[0],
            h,
            CL_TRUE,
            CL_MAP_READ,
            0,
            n * 4,
            1,
            &e2,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(ptr.cast(), host.ptr);
    let mapped = unsafe { std::slice::from_raw_parts(ptr as *const i32, n) };
    assert!(mapped.iter().all(|&x| x == 9));
    check!(clEnqueueUnmapMemObject(q[0], h, ptr, 0, null(), null_mut()));
    check!(clFinish(q[0]));
    release_all(&[user, e, r, e2], &[b, h]);
    end(ctx, q, p, &k);
}

fn event_status(e: cl_event) -> cl_int {
    let mut s: cl_int = 0;
    check!(clGetEventInfo(
        e,
        0x11D3,
        4,
        (&mut s as *mut cl_int).cast(),
        null_mut()
    ));
    s
}

// ------------------------------------------------ images in each device's own memory (issue 22)

const IMAGES: &str = "
    kernel void paint(write_only image2d_t im, int by) {
        int2 p = (int2)(get_global_id(0), get_global_id(1));
        write_imagei(im, p, (int4)(p.x * 3 + p.y * 1000 + by, 0, 0, 0));
    }
    kernel void bump(read_only image2d_t in, write_only image2d_t out, int by) {
        int2 p = (int2)(get_global_id(0), get_global_id(1));
        write_imagei(out, p, read_imagei(in, p) + (int4)(by, 0, 0, 0));
    }
    kernel void texels(read_only image1d_buffer_t in, global int *out) {
        int i = get_global_id(0);
        out[i] = read_imagei(in, i).x;
    }";

const R_INT: cl_image_format = cl_image_format {
    image_channel_order: CL_R,
    image_channel_data_type: CL_SIGNED_INT32,
};

/// A 2D CL_R / CL_SIGNED_INT32 image of `w` × `h` (of `data`, if given).
fn image2d(ctx: cl_context, w: usize, h: usize, data: Option<&[i32]>) -> cl_mem {
    let desc = image_desc(CL_MEM_OBJECT_IMAGE2D, w, h, null_mut());
    let (flags, ptr) = match data {
        Some(d) => (CL_MEM_COPY_HOST_PTR, d.as_ptr() as *mut c_void),
        None => (0, null_mut()),
    };
    let mut err = 0;
    let m = unsafe { clCreateImage(ctx, CL_MEM_READ_WRITE | flags, &R_INT, &desc, ptr, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    m
}

fn image_desc(image_type: cl_uint, w: usize, h: usize, buffer: cl_mem) -> cl_image_desc {
    cl_image_desc {
        image_type,
        image_width: w,
        image_height: h,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        mem_object: buffer,
    }
}

fn wait_list(wait: &[cl_event]) -> (cl_uint, *const cl_event) {
    match wait {
        [] => (0, null()),
        _ => (wait.len() as cl_uint, wait.as_ptr()),
    }
}

/// A blocking read of a `w` × `h` region at (`x`, `y`) of an image on `q` after `wait`.
fn read_image(
    q: cl_command_queue,
    im: cl_mem,
    at: [usize; 2],
    wh: [usize; 2],
    wait: &[cl_event],
) -> Vec<i32> {
    let mut out = vec![0i32; wh[0] * wh[1]];
    let (n, list) = wait_list(wait);
    check!(clEnqueueReadImage(
        q,
        im,
        CL_TRUE,
        [at[0], at[1], 0].as_ptr(),
        [wh[0], wh[1], 1].as_ptr(),
        0,
        0,
        out.as_mut_ptr().cast(),
        n,
        list,
        null_mut()
    ));
    out
}

/// A 2D launch of `w` × `h` on `q` after `wait`.
fn launch2(q: cl_command_queue, k: cl_kernel, w: usize, h: usize, wait: &[cl_event]) -> cl_event {
    let mut e = null_mut();
    let (n, list) = wait_list(wait);
    check!(clEnqueueNDRangeKernel(
        q,
        k,
        2,
        null(),
        [w, h].as_ptr(),
        null(),
        n,
        list,
        &mut e
    ));
    e
}

/// Images of a two-device context live on each device that uses them, and their texels follow
/// the commands across the devices: kernels writing on one device and reading on the other,
/// reads, partial writes, copies and maps on either, an image with initial contents first used
/// on the second device, and a 1D buffer image whose buffer the other device wrote.
#[test]
fn images_move_between_the_devices_with_their_texels() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(ctx, &devs, &format!("{STEP}\n{IMAGES}"));
    let (w, h) = (64, 32);
    let at = |x: usize, y: usize| (x * 3 + y * 1000) as i32;
    let a = image2d(ctx, w, h, None);
    let b = image2d(ctx, w, h, None);
    let paint = kernel(p, "paint");
    let bump = kernel(p, "bump");
    // Painted on device 0, bumped into `b` on device 1; both read on device 0.
    arg(paint, 0, &a);
    arg(paint, 1, &7i32);
    let e0 = launch2(q[0], paint, w, h, &[]);
    arg(bump, 0, &a);
    arg(bump, 1, &b);
    arg(bump, 2, &100i32);
    let e1 = launch2(q[1], bump, w, h, &[e0]);
    let mut model: Vec<i32> = (0..h).flat_map(|y| (0..w).map(move |x| at(x, y))).collect();
    let painted: Vec<i32> = model.iter().map(|v| v + 7).collect();
    model.iter_mut().for_each(|v| *v += 107);
    assert!(read_image(q[0], b, [0, 0], [w, h], &[e1]) == model);
    assert!(read_image(q[0], a, [0, 0], [w, h], &[e1]) == painted);
    // Part of `b` written on device 0, then all of it read on device 1: the rest is kept.
    let patch = [-5i32; 10 * 4];
    let mut e2 = null_mut();
    check!(clEnqueueWriteImage(
        q[0],
        b,
        CL_FALSE,
        [3, 5, 0].as_ptr(),
        [10, 4, 1].as_ptr(),
        0,
        0,
        patch.as_ptr().cast(),
        0,
        null(),
        &mut e2
    ));
    for y in 5..9 {
        model[y * w + 3..y * w + 13]
            .iter_mut()
            .for_each(|v| *v = -5);
    }
    assert!(read_image(q[1], b, [0, 0], [w, h], &[e2]) == model);
    // Copied into `a` on device 1, mapped on device 0.
    let mut e3 = null_mut();
    check!(clEnqueueCopyImage(
        q[1],
        b,
        a,
        [0, 0, 0].as_ptr(),
        [0, 0, 0].as_ptr(),
        [w, h, 1].as_ptr(),
        1,
        &e2,
        &mut e3
    ));
    let (mut rp, mut err) = (0usize, 0);
    let mapped = unsafe {
        clEnqueueMapImage(
            q[0],
            a,
            CL_TRUE,
            CL_MAP_READ,
            [0, 0, 0].as_ptr(),
            [w, h, 1].as_ptr(),
            &mut rp,
            null_mut(),
            1,
            &e3,
            null_mut(),
            &mut err,
        )
    } as *const i32;
    assert_eq!(err, CL_SUCCESS);
    for y in 0..h {
        let row = unsafe { std::slice::from_raw_parts(mapped.add(y * rp / 4), w) };
        assert!(row == &model[y * w..(y + 1) * w], "row {y}");
    }
    check!(clEnqueueUnmapMemObject(
        q[0],
        a,
        mapped as *mut c_void,
        0,
        null(),
        null_mut()
    ));
    // An image with initial contents, first used on device 1.
    let init: Vec<i32> = (0..(w * h) as i32).map(|i| i * 11 - 3).collect();
    let c = image2d(ctx, w, h, Some(&init));
    assert!(read_image(q[1], c, [0, 0], [w, h], &[]) == init);
    // A 1D buffer image whose buffer device 1 wrote, read by a kernel on device 0.
    let n = 4096;
    let data: Vec<i32> = (0..n as i32).collect();
    let buf = ints(ctx, CL_MEM_READ_WRITE, Some(&data), n);
    let step = kernel(p, "step");
    arg(step, 0, &buf);
    arg(step, 1, &4i32);
    let e4 = launch(q[1], step, n, None, &[]);
    let desc = image_desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, n, 0, buf);
    let texels =
        unsafe { clCreateImage(ctx, CL_MEM_READ_ONLY, &R_INT, &desc, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let out = ints(ctx, CL_MEM_READ_WRITE, None, n);
    let read_texels = kernel(p, "texels");
    arg(read_texels, 0, &texels);
    arg(read_texels, 1, &out);
    let e5 = launch(q[0], read_texels, n, None, &[e4]);
    let want: Vec<i32> = data.iter().map(|x| x * 3 + 4).collect();
    assert_eq!(read(q[1], out, n, &[e5]), want);
    // A 2D image made from a buffer that a kernel on device 0 wrote, read on device 1.
    let words = ints(ctx, CL_MEM_READ_WRITE, Some(&init), w * h);
    arg(step, 0, &words);
    arg(step, 1, &1i32);
    let e6 = launch(q[0], step, w * h, None, &[]);
    let desc = image_desc(CL_MEM_OBJECT_IMAGE2D, w, h, words);
    let from_buffer =
        unsafe { clCreateImage(ctx, CL_MEM_READ_WRITE, &R_INT, &desc, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let stepped: Vec<i32> = init.iter().map(|x| x * 3 + 1).collect();
    assert!(read_image(q[1], from_buffer, [0, 0], [w, h], &[e6]) == stepped);
    // Rows 2..6 of `b` into `words` at row 10 on device 1, read back whole on device 0: the
    // rows around them are `stepped`'s still.
    let mut e7 = null_mut();
    check!(clEnqueueCopyImageToBuffer(
        q[1],
        b,
        words,
        [0, 2, 0].as_ptr(),
        [w, 4, 1].as_ptr(),
        10 * w * 4,
        0,
        null(),
        &mut e7
    ));
    let mut want = stepped.clone();
    want[10 * w..14 * w].copy_from_slice(&model[2 * w..6 * w]);
    assert_eq!(read(q[0], words, w * h, &[e7]), want);
    check!(clReleaseEvent(e7));
    release_all(&[e0, e1, e2, e3, e4, e5, e6], &[a, b, c, texels, buf, out]);
    release_all(&[], &[from_buffer, words]);
    end(ctx, q, p, &[paint, bump, step, read_texels]);
}

/// A read on device 1 of what a kernel on device 0 wrote, while device 0's in-order queue holds
/// a later command behind a user event that the application sets only after the read: moving
/// the data waits for the kernel alone (the read's dependencies), not for the held command.
#[test]
fn moving_data_waits_only_for_the_command_that_wrote_it() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (ctx, devs, q) = two();
    let p = build_program_multi(ctx, &devs, STEP);
    let k = kernel(p, "step");
    let n = 4096;
    let data: Vec<i32> = (0..n as i32).collect();
    let b = ints(ctx, CL_MEM_READ_WRITE, Some(&data), n);
    let other = ints(ctx, CL_MEM_READ_WRITE, Some(&data), n);
    arg(k, 0, &b);
    arg(k, 1, &2i32);
    let e = launch(q[0], k, n, None, &[]);
    let mut err = 0;
    let gate = unsafe { clCreateUserEvent(ctx, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    arg(k, 0, &other);
    let held = launch(q[0], k, n, None, &[gate]);
    check!(clFlush(q[0]));
    // A watchdog sets the user event if the read is still blocked after 30 s (a failure).
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let (d, g) = (done.clone(), gate as usize);
    let watchdog = std::thread::spawn(move || {
        for _ in 0..300 {
            if d.load(Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        unsafe { clSetUserEventStatus(g as cl_event, CL_COMPLETE) };
        true
    });
    let got = read(q[1], b, n, &[e]);
    done.store(true, Ordering::SeqCst);
    let fired = watchdog.join().unwrap();
    assert!(
        !fired,
        "the read waited for a command it does not depend on"
    );
    let want: Vec<i32> = data.iter().map(|x| x * 3 + 2).collect();
    assert_eq!(got, want);
    check!(clSetUserEventStatus(gate, CL_COMPLETE));
    assert_eq!(read(q[1], other, n, &[held]), want);
    release_all(&[e, held, gate], &[b, other]);
    end(ctx, q, p, &[k]);
}

/// Rect reads, writes and copies of a buffer the other device wrote: each brings (or marks)
/// the rows it spans, and the bytes between them keep their latest values.
#[test]
fn rect_transfers_follow_the_data_across_the_devices() {
    let (ctx, devs, q) = two();
    let p = build_program_multi(ctx, &devs, STEP);
    let k = kernel(p, "step");
    let w = 64; // ints per row, 64 rows
    let data: Vec<i32> = (0..(w * w) as i32).collect();
    let b = ints(ctx, CL_MEM_READ_WRITE, Some(&data), w * w);
    arg(k, 0, &b);
    arg(k, 1, &5i32);
    let e = launch(q[1], k, w * w, None, &[]);
    let mut model: Vec<i32> = data.iter().map(|x| x * 3 + 5).collect();
    // A 10 × 8 block at (5, 7) read on device 0.
    let (x0, y0, bw, bh) = (5, 7, 10, 8);
    let block = |m: &[i32]| -> Vec<i32> {
        (y0..y0 + bh)
            .flat_map(|y| m[y * w + x0..y * w + x0 + bw].to_vec())
            .collect()
    };
    let mut got = vec![0i32; bw * bh];
    let rows = [x0 * 4, y0, 0];
    let region = [bw * 4, bh, 1];
    check!(clEnqueueReadBufferRect(
        q[0],
        b,
        CL_TRUE,
        rows.as_ptr(),
        [0, 0, 0].as_ptr(),
        region.as_ptr(),
        w * 4,
        0,
        bw * 4,
        0,
        got.as_mut_ptr().cast(),
        1,
        &e,
        null_mut()
    ));
    assert_eq!(got, block(&model));
    // The block overwritten on device 0, then the whole buffer copied on device 1.
    let patch = vec![-1i32; bw * bh];
    let mut e2 = null_mut();
    check!(clEnqueueWriteBufferRect(
        q[0],
        b,
        CL_FALSE,
        rows.as_ptr(),
        [0, 0, 0].as_ptr(),
        region.as_ptr(),
        w * 4,
        0,
        bw * 4,
        0,
        patch.as_ptr().cast(),
        0,
        null(),
        &mut e2
    ));
    for y in y0..y0 + bh {
        model[y * w + x0..y * w + x0 + bw].fill(-1);
    }
    let copy = ints(ctx, CL_MEM_READ_WRITE, None, w * w);
    let mut e3 = null_mut();
    check!(clEnqueueCopyBufferRect(
        q[1],
        b,
        copy,
        [0, 0, 0].as_ptr(),
        [0, 0, 0].as_ptr(),
        [w * 4, w, 1].as_ptr(),
        w * 4,
        0,
        w * 4,
        0,
        1,
        &e2,
        &mut e3
    ));
    assert_eq!(read(q[0], copy, w * w, &[e3]), model);
    assert_eq!(read(q[1], b, w * w, &[e3]), model);
    release_all(&[e, e2, e3], &[b, copy]);
    end(ctx, q, p, &[k]);
}
