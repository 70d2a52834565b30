//! Programs and kernels: build, arguments, NDRange geometry, info queries, enqueue errors.
#[macro_use]
mod common;
use common::*;
use std::ffi::{c_char, CString};
use std::ptr::{null, null_mut};

/// Writes, per work-item, 22 uints: work_dim, then for dims 0..3 global id, local id,
/// group id, global offset, global size, local size, num groups (explicit dims: clspv-friendly).
const IDS_SRC: &str = r#"
#define F 22
kernel void ids(global uint* out) {
    size_t lin = (get_global_id(0) - get_global_offset(0))
               + (get_global_id(1) - get_global_offset(1)) * get_global_size(0)
               + (get_global_id(2) - get_global_offset(2)) * get_global_size(0) * get_global_size(1);
    global uint* o = out + lin * F;
    o[0] = get_work_dim();
#define W(i) o[1 + i] = get_global_id(i); o[4 + i] = get_local_id(i); o[7 + i] = get_group_id(i); \
             o[10 + i] = get_global_offset(i); o[13 + i] = get_global_size(i); \
             o[16 + i] = get_local_size(i); o[19 + i] = get_num_groups(i);
    W(0) W(1) W(2)
}
"#;
const F: usize = 22;

/// Runs `ids` over the given geometry and checks every value every work-item wrote.
fn check_ids(e: &Env, k: cl_kernel, off: &[usize], gws: &[usize], lws: Option<&[usize]>) {
    let dim = gws.len();
    let n: usize = gws.iter().product();
    let out = e.buffer(CL_MEM_READ_WRITE, n * F * 4, null_mut());
    let fill = 0xFFFF_FFFFu32;
    check!(clEnqueueFillBuffer(
        e.queue,
        out,
        (&fill as *const u32).cast(),
        4,
        0,
        n * F * 4,
        0,
        null(),
        null_mut()
    ));
    arg(k, 0, &out);
    e.run(k, Some(off), gws, lws);
    let v: Vec<u32> = e.read(out, n * F);
    check!(clReleaseMemObject(out));
    let g3 = |i: usize| if i < dim { gws[i] } else { 1 };
    let o3 = |i: usize| if i < dim { off[i] } else { 0 };
    let what = format!("off {off:?} gws {gws:?} lws {lws:?}");
    for lin in 0..n {
        let r = &v[lin * F..lin * F + F];
        let rel = [lin % g3(0), (lin / g3(0)) % g3(1), lin / (g3(0) * g3(1))];
        assert_eq!(r[0] as usize, dim, "{what}: work_dim at item {lin}");
        for i in 0..3 {
            let (gid, lid, grp, goff, gsz, lsz, ngr) = (
                r[1 + i] as usize,
                r[4 + i] as usize,
                r[7 + i] as usize,
                r[10 + i] as usize,
                r[13 + i] as usize,
                r[16 + i] as usize,
                r[19 + i] as usize,
            );
            let ctx = format!("{what}: item {lin} dim {i}: {r:?}");
            assert_eq!(gid, rel[i] + o3(i), "global id, {ctx}");
            assert_eq!(goff, o3(i), "global offset, {ctx}");
            assert_eq!(gsz, g3(i), "global size, {ctx}");
            match lws {
                Some(l) => {
                    let l3 = if i < dim { l[i] } else { 1 };
                    assert_eq!(lsz, l3, "local size, {ctx}");
                    assert_eq!(lid, rel[i] % l3, "local id, {ctx}");
                    assert_eq!(grp, rel[i] / l3, "group id, {ctx}");
                    assert_eq!(ngr, g3(i) / l3, "num groups, {ctx}");
                }
                None => {
                    // implementation-chosen local size: check internal consistency
                    assert!(lsz >= 1 && lid < lsz && grp < ngr, "{ctx}");
                    if gsz % lsz == 0 {
                        assert_eq!(ngr, gsz / lsz, "num groups, {ctx}");
                        assert_eq!(rel[i], grp * lsz + lid, "group/local id, {ctx}");
                    }
                }
            }
        }
    }
}

fn max_wg(e: &Env, k: cl_kernel) -> usize {
    wg_val::<usize>(k, e.dev, CL_KERNEL_WORK_GROUP_SIZE)
        .min(device_val::<usize>(e.dev, CL_DEVICE_MAX_WORK_GROUP_SIZE))
}

#[test]
fn ndrange_1d_global_and_local_sizes() {
    let e = Env::new();
    let p = e.program(IDS_SRC, "");
    let k = kernel(p, "ids");
    let max = max_wg(&e, k);
    let item_max = bytes_to_vec::<usize>(&device_info(e.dev, CL_DEVICE_MAX_WORK_ITEM_SIZES))[0];
    for g in [1usize, 7, 64, 1000, 4096, 100000] {
        check_ids(&e, k, &[0], &[g], None);
        for l in [1usize, 16, 64] {
            if g % l == 0 && l <= max && l <= item_max && !(l == 1 && g > 4096) {
                check_ids(&e, k, &[0], &[g], Some(&[l]));
            }
        }
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn ndrange_1d_global_offsets() {
    let e = Env::new();
    let p = e.program(IDS_SRC, "");
    let k = kernel(p, "ids");
    check_ids(&e, k, &[5], &[7], None);
    check_ids(&e, k, &[17], &[1000], None);
    check_ids(&e, k, &[1000], &[64], Some(&[16]));
    check_ids(&e, k, &[3], &[4096], Some(&[64]));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn ndrange_2d() {
    let e = Env::new();
    let p = e.program(IDS_SRC, "");
    let k = kernel(p, "ids");
    check_ids(&e, k, &[0, 0], &[7, 5], None);
    check_ids(&e, k, &[0, 0], &[64, 16], Some(&[16, 4]));
    check_ids(&e, k, &[3, 5], &[64, 16], Some(&[8, 8]));
    check_ids(&e, k, &[2, 9], &[100, 30], None);
    check_ids(&e, k, &[0, 0], &[1, 64], Some(&[1, 16]));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn ndrange_3d() {
    let e = Env::new();
    let p = e.program(IDS_SRC, "");
    let k = kernel(p, "ids");
    check_ids(&e, k, &[0, 0, 0], &[3, 5, 7], None);
    check_ids(&e, k, &[0, 0, 0], &[8, 4, 6], Some(&[4, 2, 3]));
    check_ids(&e, k, &[1, 2, 3], &[16, 8, 4], Some(&[4, 4, 2]));
    check_ids(&e, k, &[7, 0, 11], &[20, 10, 5], None);
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const POD_SRC: &str = r#"
kernel void pod(global int* out, int a, float b, int4 v, local int* scratch) {
    size_t l = get_local_id(0), g = get_global_id(0), n = get_local_size(0);
    scratch[l] = (int)g * a;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g * 4 + 0] = scratch[n - 1 - l];
    out[g * 4 + 1] = (int)(b * 2.0f);
    out[g * 4 + 2] = v.x + v.y * 10 + v.z * 100 + v.w * 1000;
    out[g * 4 + 3] = (int)n;
}
"#;

#[test]
fn kernel_with_buffer_pod_vector_and_local_args() {
    let e = Env::new();
    let p = e.program(POD_SRC, "");
    let k = kernel(p, "pod");
    let (n, l) = (256usize, 16usize);
    let out = e.buffer(CL_MEM_WRITE_ONLY, n * 16, null_mut());
    arg(k, 0, &out);
    arg(k, 1, &3i32);
    arg(k, 2, &10.75f32);
    arg(k, 3, &[1i32, 2, 3, 4]);
    arg_local(k, 4, l * 4);
    e.run(k, None, &[n], Some(&[l]));
    let v: Vec<i32> = e.read(out, n * 4);
    for g in 0..n {
        let mirror = (g / l) * l + (l - 1 - g % l);
        assert_eq!(
            &v[g * 4..g * 4 + 4],
            &[mirror as i32 * 3, 21, 4321, l as i32],
            "item {g}"
        );
    }
    // re-setting one argument and re-running uses the new value
    arg(k, 1, &-2i32);
    e.run(k, None, &[n], Some(&[l]));
    let v: Vec<i32> = e.read(out, n * 4);
    assert_eq!(v[0], (l as i32 - 1) * -2);
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const REDUCE_SRC: &str = r#"
kernel void reduce(global const int* in, global int* partial, local int* tmp) {
    uint l = get_local_id(0), n = get_local_size(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = n / 2; s > 0; s >>= 1) {
        if (l < s) tmp[l] += tmp[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[get_group_id(0)] = tmp[0];
}
__attribute__((reqd_work_group_size(64, 1, 1)))
kernel void reduce_static(global const int* in, global int* partial) {
    local int tmp[64];
    uint l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 32; s > 0; s >>= 1) {
        if (l < s) tmp[l] += tmp[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[get_group_id(0)] = tmp[0];
}
"#;

#[test]
fn work_group_reduction_with_local_memory() {
    let e = Env::new();
    let p = e.program(REDUCE_SRC, "");
    let n = 64 * 100;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 1000 - 300).collect();
    let inb = e.buffer_from(&input);
    for (name, l) in [("reduce", 64usize), ("reduce", 16), ("reduce_static", 64)] {
        let k = kernel(p, name);
        let groups = n / l;
        let part = e.buffer(CL_MEM_READ_WRITE, groups * 4, null_mut());
        arg(k, 0, &inb);
        arg(k, 1, &part);
        if name == "reduce" {
            arg_local(k, 2, l * 4);
        }
        e.run(k, None, &[n], Some(&[l]));
        let partial: Vec<i32> = e.read(part, groups);
        for (g, &s) in partial.iter().enumerate() {
            assert_eq!(
                s,
                input[g * l..(g + 1) * l].iter().sum::<i32>(),
                "{name} local {l} group {g}"
            );
        }
        assert_eq!(partial.iter().sum::<i32>(), input.iter().sum::<i32>());
        check!(clReleaseMemObject(part));
        check!(clReleaseKernel(k));
    }
    check!(clReleaseMemObject(inb));
    check!(clReleaseProgram(p));
}

#[test]
fn kernel_with_constant_argument() {
    let e = Env::new();
    let p = e.program("kernel void lut(global int* out, constant int* table, int n) {\n    size_t i = get_global_id(0);\n    out[i] = table[i % n] * 3;\n}\n", "");
    let k = kernel(p, "lut");
    let table: Vec<i32> = (0..37).map(|i| i * i - 5).collect();
    let tb = e.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        table.len() * 4,
        table.as_ptr() as *mut _,
    );
    let n = 1000;
    let out = e.buffer(CL_MEM_WRITE_ONLY, n * 4, null_mut());
    arg(k, 0, &out);
    arg(k, 1, &tb);
    arg(k, 2, &(table.len() as i32));
    e.run(k, None, &[n], None);
    let v: Vec<i32> = e.read(out, n);
    for i in 0..n {
        assert_eq!(v[i], table[i % table.len()] * 3, "item {i}");
    }
    for m in [out, tb] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const TWO_SRC: &str = "kernel void k_add(global int* a, int v) { a[get_global_id(0)] += v; }\n\
                       kernel void k_mul(global int* a, int v) { a[get_global_id(0)] *= v; }\n";

#[test]
fn program_with_two_kernels_and_create_kernels_in_program() {
    let e = Env::new();
    let p = e.program(TWO_SRC, "");
    let mut n = 0;
    check!(clCreateKernelsInProgram(p, 0, null_mut(), &mut n));
    assert_eq!(n, 2);
    let mut ks = [null_mut(); 2];
    check_err!(
        clCreateKernelsInProgram(p, 1, ks.as_mut_ptr(), null_mut()),
        CL_INVALID_VALUE
    );
    check!(clCreateKernelsInProgram(p, 2, ks.as_mut_ptr(), &mut n));
    let mut names: Vec<String> = ks
        .iter()
        .map(|&k| kernel_str(k, CL_KERNEL_FUNCTION_NAME))
        .collect();
    names.sort();
    assert_eq!(names, ["k_add", "k_mul"]);
    let add = kernel(p, "k_add");
    let mul = kernel(p, "k_mul");
    let data: Vec<i32> = (0..100).collect();
    let b = e.buffer_from(&data);
    arg(add, 0, &b);
    arg(add, 1, &5i32);
    arg(mul, 0, &b);
    arg(mul, 1, &3i32);
    // two kernels back to back on an in-order queue
    check!(clEnqueueNDRangeKernel(
        e.queue,
        add,
        1,
        null(),
        [100usize].as_ptr(),
        null(),
        0,
        null(),
        null_mut()
    ));
    let mut ev = null_mut();
    check!(clEnqueueNDRangeKernel(
        e.queue,
        mul,
        1,
        null(),
        [100usize].as_ptr(),
        null(),
        0,
        null(),
        &mut ev
    ));
    check!(clWaitForEvents(1, &ev));
    assert_eq!(
        event_val::<u32>(ev, CL_EVENT_COMMAND_TYPE),
        CL_COMMAND_NDRANGE_KERNEL
    );
    assert_eq!(
        event_val::<i32>(ev, CL_EVENT_COMMAND_EXECUTION_STATUS),
        CL_COMPLETE
    );
    check!(clReleaseEvent(ev));
    let v: Vec<i32> = e.read(b, 100);
    assert_eq!(v, data.iter().map(|x| (x + 5) * 3).collect::<Vec<_>>());
    for k in [add, mul, ks[0], ks[1]] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseMemObject(b));
    check!(clReleaseProgram(p));
}

#[test]
fn kernel_info() {
    let e = Env::new();
    let p = e.program(POD_SRC, "");
    let k = kernel(p, "pod");
    assert_eq!(kernel_str(k, CL_KERNEL_FUNCTION_NAME), "pod");
    assert_eq!(kernel_val::<u32>(k, CL_KERNEL_NUM_ARGS), 5);
    assert_eq!(kernel_val::<u32>(k, CL_KERNEL_REFERENCE_COUNT), 1);
    check!(clRetainKernel(k));
    assert_eq!(kernel_val::<u32>(k, CL_KERNEL_REFERENCE_COUNT), 2);
    check!(clReleaseKernel(k));
    assert_eq!(kernel_val::<usize>(k, CL_KERNEL_CONTEXT), e.ctx as usize);
    assert_eq!(kernel_val::<usize>(k, CL_KERNEL_PROGRAM), p as usize);
    assert_eq!(kernel_str(k, CL_KERNEL_ATTRIBUTES), "");
    let mut sz = 0;
    check_err!(
        clGetKernelInfo(k, 0xDEAD, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    let mut v = 0u16;
    check_err!(
        clGetKernelInfo(
            k,
            CL_KERNEL_NUM_ARGS,
            2,
            (&mut v as *mut u16).cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check!(clReleaseKernel(k));
    // attributes are reported
    let p2 = e.program(REDUCE_SRC, "");
    let k = kernel(p2, "reduce_static");
    let attrs = kernel_str(k, CL_KERNEL_ATTRIBUTES);
    assert!(
        attrs.contains("reqd_work_group_size"),
        "CL_KERNEL_ATTRIBUTES = {attrs:?}"
    );
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p2));
    check!(clReleaseProgram(p));
}

#[test]
fn kernel_work_group_info() {
    let e = Env::new();
    let p = e.program(REDUCE_SRC, "");
    let dev_max = device_val::<usize>(e.dev, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    let k = kernel(p, "reduce");
    let wg = wg_val::<usize>(k, e.dev, CL_KERNEL_WORK_GROUP_SIZE);
    assert!(wg >= 1 && wg <= dev_max, "CL_KERNEL_WORK_GROUP_SIZE {wg}");
    assert_eq!(
        bytes_to_vec::<usize>(&wg_info(k, e.dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE)),
        [0, 0, 0]
    );
    assert!(wg_val::<usize>(k, e.dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) >= 1);
    let _private: u64 = wg_val(k, e.dev, CL_KERNEL_PRIVATE_MEM_SIZE);
    let _local: u64 = wg_val(k, e.dev, CL_KERNEL_LOCAL_MEM_SIZE);
    // with a single-device context, device may be NULL
    assert_eq!(
        wg_val::<usize>(k, null_mut(), CL_KERNEL_WORK_GROUP_SIZE),
        wg
    );
    let mut sz = 0;
    check_err!(
        clGetKernelWorkGroupInfo(k, e.dev, 0xDEAD, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    check!(clReleaseKernel(k));

    let k = kernel(p, "reduce_static");
    assert_eq!(
        bytes_to_vec::<usize>(&wg_info(k, e.dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE)),
        [64, 1, 1]
    );
    let local: u64 = wg_val(k, e.dev, CL_KERNEL_LOCAL_MEM_SIZE);
    assert!(
        local >= 64 * 4,
        "CL_KERNEL_LOCAL_MEM_SIZE {local} must include the 256-byte local array"
    );
    let wg = wg_val::<usize>(k, e.dev, CL_KERNEL_WORK_GROUP_SIZE);
    assert!(
        wg >= 64,
        "a reqd_work_group_size(64) kernel must allow 64 work-items, got {wg}"
    );
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

static ZEROED: [u8; 256] = [0; 256];

#[test]
fn set_kernel_arg_errors() {
    let e = Env::new();
    let p = e.program(POD_SRC, "");
    let k = kernel(p, "pod");
    let out = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let i = 1i32;
    check_err!(
        clSetKernelArg(k, 5, 4, (&i as *const i32).cast()),
        CL_INVALID_ARG_INDEX
    );
    check_err!(
        clSetKernelArg(k, 100, 4, (&i as *const i32).cast()),
        CL_INVALID_ARG_INDEX
    );
    // POD of the wrong size
    let l = 1i64;
    check_err!(
        clSetKernelArg(k, 1, 8, (&l as *const i64).cast()),
        CL_INVALID_ARG_SIZE
    );
    check_err!(
        clSetKernelArg(k, 3, 8, (&l as *const i64).cast()),
        CL_INVALID_ARG_SIZE
    );
    // POD with a NULL value
    check_err!(clSetKernelArg(k, 1, 4, null()), CL_INVALID_ARG_VALUE);
    // __local: size 0 / non-NULL value
    check_err!(clSetKernelArg(k, 4, 0, null()), CL_INVALID_ARG_SIZE);
    check_err!(
        clSetKernelArg(k, 4, 64, (&i as *const i32).cast()),
        CL_INVALID_ARG_VALUE
    );
    // memory object: wrong size, invalid handle
    check_err!(
        clSetKernelArg(k, 0, 4, (&out as *const cl_mem).cast()),
        CL_INVALID_ARG_SIZE
    );
    let bogus: cl_mem = ZEROED.as_ptr() as cl_mem;
    let code = unsafe {
        clSetKernelArg(
            k,
            0,
            std::mem::size_of::<cl_mem>(),
            (&bogus as *const cl_mem).cast(),
        )
    };
    // pocl 3.1 does not validate cl_mem argument values (accepts the bogus handle).
    if !is_pocl() {
        assert_eq!(
            code,
            CL_INVALID_MEM_OBJECT,
            "bogus cl_mem argument: {}",
            err_name(code)
        );
    }
    // a NULL buffer is a legal value for a global pointer argument
    let nul: cl_mem = null_mut();
    check!(clSetKernelArg(
        k,
        0,
        std::mem::size_of::<cl_mem>(),
        (&nul as *const cl_mem).cast()
    ));
    check!(clSetKernelArg(k, 0, std::mem::size_of::<cl_mem>(), null()));
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn enqueue_ndrange_errors() {
    let e = Env::new();
    let p = e.program(&format!("{TWO_SRC}{REDUCE_SRC}"), "");
    let k = kernel(p, "k_add");
    let g4 = [16usize, 1, 1, 1];
    let run = |k, dim, gws: &[usize], lws: Option<&[usize]>| unsafe {
        clEnqueueNDRangeKernel(
            e.queue,
            k,
            dim,
            null(),
            gws.as_ptr(),
            lws.map_or(null(), |l| l.as_ptr()),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(run(k, 1, &g4, None), CL_INVALID_KERNEL_ARGS, "no args set");
    arg(k, 1, &1i32);
    assert_eq!(
        run(k, 1, &g4, None),
        CL_INVALID_KERNEL_ARGS,
        "one arg missing"
    );
    let b = e.buffer_from(&[0i32; 64]);
    arg(k, 0, &b);
    check_err!(run(k, 1, &g4, None), CL_SUCCESS);
    check_err!(run(k, 0, &g4, None), CL_INVALID_WORK_DIMENSION);
    check_err!(
        run(k, 4, &g4, Some(&[1, 1, 1, 1])),
        CL_INVALID_WORK_DIMENSION
    );
    check_err!(run(k, 4, &g4, None), CL_INVALID_WORK_DIMENSION);
    // programs built without -cl-std use OpenCL C 1.x: work-groups must be uniform
    check_err!(run(k, 1, &[10], Some(&[4])), CL_INVALID_WORK_GROUP_SIZE);
    let too_big = wg_val::<usize>(k, e.dev, CL_KERNEL_WORK_GROUP_SIZE) * 2;
    let code = run(k, 1, &[too_big * 2], Some(&[too_big]));
    assert!(
        code == CL_INVALID_WORK_GROUP_SIZE || code == CL_INVALID_WORK_ITEM_SIZE,
        "{}",
        err_name(code)
    );
    // pocl 3.1 crashes (SIGSEGV) on a NULL kernel with a valid queue.
    if !is_pocl() {
        check_err!(
            clEnqueueNDRangeKernel(
                e.queue,
                null_mut(),
                1,
                null(),
                g4.as_ptr(),
                null(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_KERNEL
        );
    }
    // reqd_work_group_size(64,1,1): a different local size is rejected
    let rk = kernel(p, "reduce_static");
    let part = e.buffer(CL_MEM_READ_WRITE, 1024, null_mut());
    arg(rk, 0, &part);
    arg(rk, 1, &part);
    check_err!(run(rk, 1, &[128], Some(&[32])), CL_INVALID_WORK_GROUP_SIZE);
    check_err!(run(rk, 1, &[128], Some(&[64])), CL_SUCCESS);
    check!(clFinish(e.queue));
    for m in [b, part] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(rk));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// OpenCL 2.1+ (and so 3.0): "If global_work_size is NULL, or the value in any passed
/// dimension is 0 then the kernel command will trivially succeed after its event dependencies
/// are satisfied and subsequently update its completion event" -- returning
/// CL_INVALID_GLOBAL_WORK_SIZE for zero sizes is only the pre-2.1 behaviour.
#[test]
fn enqueue_ndrange_zero_global_size_is_a_no_op() {
    let e = Env::new();
    let p = e.program(TWO_SRC, "");
    let k = kernel(p, "k_add");
    let b = e.buffer_from(&[7i32; 16]);
    arg(k, 0, &b);
    arg(k, 1, &1i32);
    let mut ev = null_mut();
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        1,
        null(),
        [0usize].as_ptr(),
        null(),
        0,
        null(),
        &mut ev
    ));
    check!(clWaitForEvents(1, &ev));
    assert_eq!(
        event_val::<i32>(ev, CL_EVENT_COMMAND_EXECUTION_STATUS),
        CL_COMPLETE
    );
    check!(clReleaseEvent(ev));
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        2,
        null(),
        [16usize, 0].as_ptr(),
        null(),
        0,
        null(),
        null_mut()
    ));
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        1,
        null(),
        null(),
        null(),
        0,
        null(),
        null_mut()
    ));
    assert_eq!(e.read::<i32>(b, 16), [7; 16]);
    check!(clReleaseMemObject(b));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn program_info_and_build_info() {
    let e = Env::new();
    let s1 = "kernel void first(global int* x) { x[0] = VAL; }\n";
    let s2 = CString::new("kernel void second(global int* x) { x[1] = VAL * 2; }\n").unwrap();
    let srcs = [s1.as_ptr() as *const c_char, s2.as_ptr()];
    let lens = [s1.len(), 0]; // 0 = NUL-terminated
    let mut err = 0;
    let p = unsafe { clCreateProgramWithSource(e.ctx, 2, srcs.as_ptr(), lens.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    assert_eq!(program_val::<u32>(p, CL_PROGRAM_REFERENCE_COUNT), 1);
    check!(clRetainProgram(p));
    assert_eq!(program_val::<u32>(p, CL_PROGRAM_REFERENCE_COUNT), 2);
    check!(clReleaseProgram(p));
    assert_eq!(program_val::<usize>(p, CL_PROGRAM_CONTEXT), e.ctx as usize);
    assert_eq!(program_val::<u32>(p, CL_PROGRAM_NUM_DEVICES), 1);
    assert_eq!(
        bytes_to_vec::<cl_device_id>(&program_info(p, CL_PROGRAM_DEVICES)),
        [e.dev]
    );
    assert_eq!(
        program_str(p, CL_PROGRAM_SOURCE),
        format!("{s1}{}", s2.to_str().unwrap())
    );
    // not built yet
    let mut sz = 0;
    check_err!(
        clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, 0, null_mut(), &mut sz),
        CL_INVALID_PROGRAM_EXECUTABLE
    );
    check_err!(
        clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, null_mut(), &mut sz),
        CL_INVALID_PROGRAM_EXECUTABLE
    );
    assert_eq!(
        build_val::<i32>(p, e.dev, CL_PROGRAM_BUILD_STATUS),
        CL_BUILD_NONE
    );
    assert_eq!(
        build_val::<u32>(p, e.dev, CL_PROGRAM_BINARY_TYPE),
        CL_PROGRAM_BINARY_TYPE_NONE
    );
    let mut kerr = 0;
    let k = unsafe { clCreateKernel(p, c"first".as_ptr(), &mut kerr) };
    assert!(k.is_null());
    assert_eq!(kerr, CL_INVALID_PROGRAM_EXECUTABLE, "{}", err_name(kerr));
    // build
    let opts = c"-DVAL=3";
    check!(clBuildProgram(
        p,
        1,
        &e.dev,
        opts.as_ptr(),
        None,
        null_mut()
    ));
    assert_eq!(
        build_val::<i32>(p, e.dev, CL_PROGRAM_BUILD_STATUS),
        CL_BUILD_SUCCESS
    );
    assert_eq!(build_str(p, e.dev, CL_PROGRAM_BUILD_OPTIONS), "-DVAL=3");
    let _log = build_str(p, e.dev, CL_PROGRAM_BUILD_LOG);
    assert_eq!(
        build_val::<u32>(p, e.dev, CL_PROGRAM_BINARY_TYPE),
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE
    );
    assert_eq!(program_val::<usize>(p, CL_PROGRAM_NUM_KERNELS), 2);
    let names = program_str(p, CL_PROGRAM_KERNEL_NAMES);
    let mut list: Vec<&str> = names.split(';').collect();
    list.sort();
    assert_eq!(
        list,
        ["first", "second"],
        "CL_PROGRAM_KERNEL_NAMES = {names:?}"
    );
    check_err!(
        clGetProgramInfo(p, 0xDEAD, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    check_err!(
        clGetProgramBuildInfo(p, e.dev, 0xDEAD, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    check_err!(
        clGetProgramBuildInfo(
            p,
            null_mut(),
            CL_PROGRAM_BUILD_STATUS,
            0,
            null_mut(),
            &mut sz
        ),
        CL_INVALID_DEVICE
    );
    // the built program runs, with the -D value applied
    let k = kernel(p, "second");
    let b = e.buffer_from(&[0i32; 2]);
    arg(k, 0, &b);
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<i32>(b, 2), [0, 6]);
    check!(clReleaseMemObject(b));
    check!(clReleaseKernel(k));
    // the kernel holds a reference to the program: release order does not matter
    check!(clReleaseProgram(p));
}

#[test]
fn build_with_null_device_list_and_rebuild() {
    let e = Env::new();
    let src = "kernel void f(global int* x) { x[get_global_id(0)] = V; }\n";
    let ptr = src.as_ptr() as *const c_char;
    let len = src.len();
    let mut err = 0;
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    check!(clBuildProgram(
        p,
        0,
        null(),
        c"-DV=1".as_ptr(),
        None,
        null_mut()
    ));
    check!(clBuildProgram(
        p,
        0,
        null(),
        c"-DV=2".as_ptr(),
        None,
        null_mut()
    ));
    let k = kernel(p, "f");
    let b = e.buffer_from(&[0i32; 4]);
    arg(k, 0, &b);
    e.run(k, None, &[4], None);
    assert_eq!(e.read::<i32>(b, 4), [2; 4]);
    // errors
    check_err!(
        clBuildProgram(p, 1, null(), null(), None, null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clBuildProgram(p, 0, &e.dev, null(), None, null_mut()),
        CL_INVALID_VALUE
    );
    check!(clReleaseMemObject(b));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// printf from kernels: decoded when each launch completes, in the queue's order, on stdout.
/// The kernels run in a child process (this test again) whose stdout the test reads.
#[test]
fn printf_output_reaches_stdout_in_order() {
    if std::env::var_os("VKCL_TEST_PRINTF_CHILD").is_some() {
        let e = Env::new();
        let p = e.program(
            r#"
kernel void hello(int n, float x) {
    int i = get_global_id(0);
    if (i == 0) printf("launch %d: x=%.3f %s %v4hld %c\n", n, x, "str", (int4)(1, 2, 3, 4), 'z');
}
kernel void quiet(global int *o) { o[0] = 1; }
"#,
            "",
        );
        let k = kernel(p, "hello");
        for n in 0..3 {
            arg(k, 0, &n);
            arg(k, 1, &(n as f32 * 0.5));
            e.run(k, None, &[64], None);
        }
        // A kernel without printf in the same program prints nothing.
        let q = kernel(p, "quiet");
        let b = e.buffer_from(&[0i32]);
        arg(q, 0, &b);
        e.run(q, None, &[1], None);
        assert_eq!(e.read::<i32>(b, 1), [1]);
        return;
    }
    let text = stdout_of_test_run(
        "printf_output_reaches_stdout_in_order",
        "VKCL_TEST_PRINTF_CHILD",
    );
    // (libtest's own "test ... " line may precede the first one on the same line.)
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.find("launch ").map(|i| &l[i..]))
        .collect();
    assert_eq!(
        lines,
        [
            "launch 0: x=0.000 str 1,2,3,4 z",
            "launch 1: x=0.500 str 1,2,3,4 z",
            "launch 2: x=1.000 str 1,2,3,4 z"
        ],
        "{text}"
    );
}

/// Non-uniform work-groups (OpenCL C 2.0+): the launch is split into regions; every work-item
/// runs once and sees its global id, local id, group id, local size and enqueued local size.
#[test]
fn non_uniform_work_groups_cover_the_range_exactly() {
    let e = Env::new();
    assert_eq!(
        device_val::<cl_bool>(e.dev, 0x1065 /* NON_UNIFORM_WORK_GROUP_SUPPORT */),
        CL_TRUE
    );
    let src = r#"
kernel void nu(global uint *out, global uint *counts) {
    size_t gx = get_global_id(0) - get_global_offset(0), gy = get_global_id(1) - get_global_offset(1);
    size_t i = gy * get_global_size(0) + gx;
    atomic_inc(&counts[i]);
    out[i * 6 + 0] = get_local_id(0) + 1000 * get_local_id(1);
    out[i * 6 + 1] = get_group_id(0) + 1000 * get_group_id(1);
    out[i * 6 + 2] = get_local_size(0) + 1000 * get_local_size(1);
    out[i * 6 + 3] = get_enqueued_local_size(0) + 1000 * get_enqueued_local_size(1);
    out[i * 6 + 4] = get_num_groups(0) + 1000 * get_num_groups(1);
    out[i * 6 + 5] = get_global_id(0) + 1000 * get_global_id(1);
}
"#;
    let p = e.program(src, "-cl-std=CL3.0");
    let k = kernel(p, "nu");
    let (gw, gh, lw, lh, ox, oy) = (37usize, 11usize, 8usize, 4usize, 5usize, 2usize);
    let n = gw * gh;
    let out = e.buffer_from(&vec![0u32; n * 6]);
    let counts = e.buffer_from(&vec![0u32; n]);
    arg(k, 0, &out);
    arg(k, 1, &counts);
    e.run(k, Some(&[ox, oy]), &[gw, gh], Some(&[lw, lh]));
    assert_eq!(
        e.read::<u32>(counts, n),
        vec![1; n],
        "every work-item runs once"
    );
    let got = e.read::<u32>(out, n * 6);
    let pair = |x: usize, y: usize| (x + 1000 * y) as u32;
    for y in 0..gh {
        for x in 0..gw {
            let i = y * gw + x;
            let size = |g: usize, l: usize, id: usize| if id / l == g / l { g % l } else { l };
            let (sx, sy) = (size(gw, lw, x), size(gh, lh, y));
            let expected = [
                pair(x % lw, y % lh),
                pair(x / lw, y / lh),
                pair(sx, sy),
                pair(lw, lh),
                pair(gw.div_ceil(lw), gh.div_ceil(lh)),
                pair(x + ox, y + oy),
            ];
            assert_eq!(&got[i * 6..i * 6 + 6], &expected, "work-item ({x}, {y})");
        }
    }
    // OpenCL C 1.2 programs need uniform work-groups.
    let p12 = e.program(
        src.replace("get_enqueued_local_size", "get_local_size")
            .as_str(),
        "",
    );
    let k12 = kernel(p12, "nu");
    arg(k12, 0, &out);
    arg(k12, 1, &counts);
    let global = [gw, gh];
    let local = [lw, lh];
    check_err!(
        clEnqueueNDRangeKernel(
            e.queue,
            k12,
            2,
            null(),
            global.as_ptr(),
            local.as_ptr(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_WORK_GROUP_SIZE
    );
    unsafe {
        clReleaseKernel(k);
        clReleaseKernel(k12);
        clReleaseProgram(p);
        clReleaseProgram(p12);
        clReleaseMemObject(out);
        clReleaseMemObject(counts);
    }
}

/// Sub-groups (__opencl_c_subgroups; not cl_khr_subgroups, which needs independent forward
/// progress: CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS is false and the extension is not
/// listed): the kernel sees the sizes the queries report, and the
/// sub-group functions compute over its sub-group.
#[test]
fn sub_groups_match_the_queries() {
    let e = Env::new();
    assert!(!device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_subgroups"));
    assert_eq!(
        device_val::<u32>(e.dev, 0x105D /* SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS */),
        0
    );
    if device_val::<u32>(e.dev, 0x105C /* MAX_NUM_SUB_GROUPS */) == 0 {
        // A device without fixed-size subgroups (lavapipe and NVIDIA have them).
        return;
    }
    let src = r#"
kernel void sg(global uint *o, global int *in, uint n5) {
    uint i = get_global_id(0);
    o[i * 5 + 0] = get_sub_group_size();
    o[i * 5 + 1] = get_num_sub_groups();
    o[i * 5 + 2] = get_sub_group_id();
    o[i * 5 + 3] = get_sub_group_local_id();
    o[i * 5 + 4] = sub_group_reduce_add(in[i]);
    o[n5 + i] = get_max_sub_group_size();
}
"#;
    for opts in ["", "-cl-std=CL3.0"] {
        let p = e.program(src, opts);
        let k = kernel(p, "sg");
        // Three whole sub-groups per work-group. (With a partial last sub-group, lavapipe
        // reports one sub-group fewer from get_num_sub_groups, and NVIDIA the full size from
        // get_sub_group_size: Vulkan's SubgroupSize is the size, not the active count.)
        let big = 3 * 256usize;
        let mut sg = 0usize;
        check!(clGetKernelSubGroupInfo(
            k,
            e.dev,
            0x2033,
            8,
            (&big as *const usize).cast(),
            8,
            (&mut sg as *mut usize).cast(),
            null_mut()
        ));
        // Whole sub-groups, and a partial last one (the spec: get_sub_group_size is the
        // number of work-items in the sub-group, get_num_sub_groups counts the partial one).
        for local in [3 * sg, 3 * sg - 3] {
            let info = |name: cl_uint| sub_group_info(k, e.dev, name, local);
            let sg_size = info(0x2033 /* MAX_SUB_GROUP_SIZE_FOR_NDRANGE */);
            let sg_count = info(0x2034 /* SUB_GROUP_COUNT_FOR_NDRANGE */);
            assert!(sg_size >= 1 && sg_count == local.div_ceil(sg_size));
            let n = 2 * local;
            let input: Vec<i32> = (0..n as i32).collect();
            let (out, inb) = (e.buffer_from(&vec![0u32; n * 6]), e.buffer_from(&input));
            arg(k, 0, &out);
            arg(k, 1, &inb);
            arg(k, 2, &((n * 5) as u32));
            e.run(k, None, &[n], Some(&[local]));
            let o = e.read::<u32>(out, n * 6);
            assert!(
            o[n * 5..].iter().all(|&m| m as usize == sg_size),
            "get_max_sub_group_size {:?} vs the query's {sg_size} (local size {local}, {opts:?})",
            &o[n * 5..n * 5 + 4]
        );
            for i in 0..n {
                let l = i % local;
                let (id, lid) = (l / sg_size, l % sg_size);
                let first = i - lid;
                let last = (first + sg_size).min(i - l + local);
                let sum: i32 = input[first..last].iter().sum();
                let size = last - first;
                assert_eq!(
                    &o[i * 5..i * 5 + 5],
                    &[
                        size as u32,
                        sg_count as u32,
                        id as u32,
                        lid as u32,
                        sum as u32
                    ],
                    "item {i} (local size {local}, {opts:?})"
                );
            }
            check!(clReleaseMemObject(out));
            check!(clReleaseMemObject(inb));
        }
        // The local size for a sub-group count, and the kernel's maximum.
        let mut local_for = [0usize; 3];
        let count = 2usize;
        check!(clGetKernelSubGroupInfo(
            k,
            e.dev,
            0x11B8, /* LOCAL_SIZE_FOR_SUB_GROUP_COUNT */
            8,
            (&count as *const usize).cast(),
            24,
            local_for.as_mut_ptr().cast(),
            null_mut()
        ));
        assert_eq!(local_for, [2 * sg, 1, 1]);
        let mut max = 0usize;
        check!(clGetKernelSubGroupInfo(
            k,
            e.dev,
            0x11B9, /* MAX_NUM_SUB_GROUPS */
            0,
            null(),
            8,
            (&mut max as *mut usize).cast(),
            null_mut()
        ));
        assert_eq!(max as u32, device_val::<u32>(e.dev, 0x105C));
        check_err!(
            clGetKernelSubGroupInfo(
                k,
                e.dev,
                0x2033,
                0,
                null(),
                8,
                (&mut max as *mut usize).cast(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        // Not a device of the kernel's program; an unknown query.
        let one = 1usize;
        let not_a_device = e.ctx as cl_device_id;
        check_err!(
            clGetKernelSubGroupInfo(
                k,
                not_a_device,
                0x2033,
                8,
                (&one as *const usize).cast(),
                8,
                (&mut max as *mut usize).cast(),
                null_mut()
            ),
            CL_INVALID_DEVICE
        );
        check_err!(
            clGetKernelSubGroupInfo(
                k,
                e.dev,
                0x7777,
                8,
                (&one as *const usize).cast(),
                8,
                (&mut max as *mut usize).cast(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        unsafe {
            clReleaseKernel(k);
            clReleaseProgram(p);
        }
    }
}

/// `__constant` arguments honour CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE in all (spec Table 1):
/// beyond it the launch is CL_OUT_OF_RESOURCES; within it the data is read.
#[test]
fn constant_arguments_honour_the_device_limit() {
    let e = Env::new();
    let limit: u64 = device_val(e.dev, 0x1020 /* MAX_CONSTANT_BUFFER_SIZE */);
    assert!(device_val::<u32>(e.dev, 0x1021 /* MAX_CONSTANT_ARGS */) >= 8);
    let p = e.program(
        "kernel void k(global int *o, constant int *a, constant int *b) { o[0] = a[0] + b[0]; }",
        "-cl-kernel-arg-info",
    );
    let k = kernel(p, "k");
    let o = e.buffer_from(&[0i32]);
    let a = e.buffer_from(&[40i32]);
    let b = e.buffer_from(&[2i32]);
    arg(k, 0, &o);
    arg(k, 1, &a);
    arg(k, 2, &b);
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<i32>(o, 1), [42]);
    // Two constant buffers of half the limit each, plus a few bytes: too much in all.
    let half = (limit / 2) as usize + 16;
    let big_a = e.buffer(CL_MEM_READ_ONLY, half, null_mut());
    let big_b = e.buffer(CL_MEM_READ_ONLY, half, null_mut());
    arg(k, 1, &big_a);
    arg(k, 2, &big_b);
    check_err!(
        clEnqueueNDRangeKernel(
            e.queue,
            k,
            1,
            null(),
            [1usize].as_ptr(),
            null(),
            0,
            null(),
            null_mut()
        ),
        CL_OUT_OF_RESOURCES
    );
    unsafe {
        for m in [o, a, b, big_a, big_b] {
            clReleaseMemObject(m);
        }
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

/// A kernel that only reads an argument gets it as a read-only (NonWritable) buffer while
/// another kernel of the program writes the same binding (src/compiler/spirv.rs): both still
/// see and make the right values, also with the read-only and the written argument bound to
/// one buffer.
#[test]
fn read_only_arguments_alias_written_ones() {
    const SRC: &str = "
        kernel void twice(global const int* a, global int* b) {
            size_t i = get_global_id(0);
            b[i] = a[i] * 2;
        }
        kernel void bump(global int* a) { a[get_global_id(0)] += 1; }
    ";
    let e = Env::new();
    let p = e.program(SRC, "");
    let (twice, bump) = (kernel(p, "twice"), kernel(p, "bump"));
    let data: Vec<i32> = (0..256).collect();
    let (x, y) = (e.buffer_from(&data), e.buffer_from(&data));
    arg(bump, 0, &x);
    e.run(bump, None, &[256], None);
    arg(twice, 0, &x);
    arg(twice, 1, &y);
    e.run(twice, None, &[256], None);
    assert_eq!(
        e.read::<i32>(y, 256),
        data.iter().map(|v| (v + 1) * 2).collect::<Vec<_>>()
    );
    // a and b one buffer: each work-item reads its element, then writes it.
    arg(twice, 1, &x);
    e.run(twice, None, &[256], None);
    e.run(bump, None, &[256], None);
    assert_eq!(
        e.read::<i32>(x, 256),
        data.iter().map(|v| (v + 1) * 2 + 1).collect::<Vec<_>>()
    );
    for k in [twice, bump] {
        check!(clReleaseKernel(k));
    }
    for m in [x, y] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseProgram(p));
}

/// Launches of one kernel whose arguments change between batches (a clFinish after each, so
/// that each batch records its descriptor sets anew and may reuse a set an earlier batch
/// wrote): each writes where its own arguments say, also after the buffer of an earlier
/// launch is released and another created, and through a sub-buffer at an offset.
#[test]
fn launches_across_batches_write_through_their_own_arguments() {
    let e = Env::new();
    let p = e.program(
        "kernel void put(global int *o, int v) { o[get_global_id(0)] = v; }\n",
        "",
    );
    let k = kernel(p, "put");
    let n = 64usize;
    let mut bufs: Vec<cl_mem> = (0..2).map(|_| e.buffer_from(&vec![0i32; 2 * n])).collect();
    let mut want: Vec<Vec<i32>> = vec![vec![0; 2 * n]; 2];
    let region = [n * 4, n * 4]; // origin, size: the second half
    for i in 0..24i32 {
        let which = (i as usize * 7 / 3) % 2;
        if i == 12 {
            // The first buffer goes and another takes its place.
            unsafe { clReleaseMemObject(bufs[0]) };
            bufs[0] = e.buffer_from(&vec![-1i32; 2 * n]);
            want[0] = vec![-1; 2 * n];
        }
        let half = i % 3 == 2;
        let mut err = 0;
        let target = if half {
            unsafe {
                clCreateSubBuffer(
                    bufs[which],
                    CL_MEM_READ_WRITE,
                    CL_BUFFER_CREATE_TYPE_REGION,
                    region.as_ptr().cast(),
                    &mut err,
                )
            }
        } else {
            bufs[which]
        };
        assert_eq!(err, CL_SUCCESS);
        arg(k, 0, &target);
        arg(k, 1, &(100 + i));
        e.run(k, None, &[n], None);
        let range = if half { n..2 * n } else { 0..n };
        want[which][range].fill(100 + i);
        for (b, w) in bufs.iter().zip(&want) {
            assert_eq!(&e.read::<i32>(*b, 2 * n), w, "after launch {i}");
        }
        if half {
            unsafe { clReleaseMemObject(target) };
        }
    }
    unsafe {
        for b in bufs {
            clReleaseMemObject(b);
        }
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

/// A switch on `size_t` (piglit's switch-case, whose build failed once `size_t` was 64-bit:
/// clspv narrowed the selector to an `i40`, compiler::odd_widths), and on a `ulong` above
/// 2^32, which must take the default even where its low word is a case
/// (compiler::wide_switches).
#[test]
fn switches_on_size_t_and_ulong() {
    let e = Env::new();
    let src = r#"
kernel void sw(global int *out, ulong add) {
    size_t i = get_global_id(0);
    int r;
    switch (i + add) {
        case 0: r = 4; break;
        case 1: r = 14; break;
        case 2: case 6: r = 20; break;
        case 12: r = 6; break;
        default: r = 8 + (int)i; break;
    }
    out[i] = r;
}
kernel void by_id(global int *out) {
    switch (get_global_id(0)) {
        case 0: out[get_global_id(0)] = get_global_id(0) + 4; break;
        case 6: out[get_global_id(0)] = get_global_id(0) + 11; break;
        case 12: out[get_global_id(0)] = get_global_id(0) + 6; break;
        default: out[get_global_id(0)] = get_global_id(0) + 8; break;
    }
}
"#;
    let p = e.program(src, "");
    let k = kernel(p, "sw");
    let out = e.buffer_from(&[0i32; 16]);
    arg(k, 0, &out);
    let model = |add: u64| -> Vec<i32> {
        (0..16u64)
            .map(|i| match i + add {
                0 => 4,
                1 => 14,
                2 | 6 => 20,
                12 => 6,
                _ => 8 + i as i32,
            })
            .collect()
    };
    for add in [0u64, 1 << 32, (1 << 33) + 2] {
        arg(k, 1, &add);
        e.run(k, None, &[16], None);
        assert_eq!(e.read::<i32>(out, 16), model(add), "add {add:#x}");
    }
    let k2 = kernel(p, "by_id");
    arg(k2, 0, &out);
    e.run(k2, None, &[16], None);
    let want: Vec<i32> = (0..16)
        .map(|i| match i {
            0 => 4,
            6 => 17,
            12 => 18,
            _ => i + 8,
        })
        .collect();
    assert_eq!(e.read::<i32>(out, 16), want, "switch (get_global_id(0))");
    check!(clReleaseKernel(k2));
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
