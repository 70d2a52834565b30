//! Launches with small work-groups (issue 16, thread_dimensions): vkcl may run several
//! OpenCL work-groups in one Vulkan work-group for kernels where that cannot be observed
//! (`compiler::coalesce`). Every work-item built-in must give exactly what the OpenCL
//! model says, for 1-3 dimensions, small local sizes, global offsets and non-uniform
//! last groups; kernels that can observe their work-group (barriers, `__local` memory)
//! must stay correct.
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

/// Per work-item, F uints: work_dim, then for dims 0..3 the global id, local id, group id,
/// global offset, global size, local size, number of groups and enqueued local size.
const IDS_SRC: &str = r#"
#define F 25
kernel void ids(global uint* out) {
    size_t lin = (get_global_id(0) - get_global_offset(0))
               + (get_global_id(1) - get_global_offset(1)) * get_global_size(0)
               + (get_global_id(2) - get_global_offset(2)) * get_global_size(0) * get_global_size(1);
    global uint* o = out + lin * F;
    o[0] = get_work_dim();
#define W(i) o[1 + i] = get_global_id(i); o[4 + i] = get_local_id(i); o[7 + i] = get_group_id(i); \
             o[10 + i] = get_global_offset(i); o[13 + i] = get_global_size(i); \
             o[16 + i] = get_local_size(i); o[19 + i] = get_num_groups(i); \
             o[22 + i] = get_enqueued_local_size(i);
    W(0) W(1) W(2)
}
"#;
const F: usize = 25;

/// The same, without get_enqueued_local_size (an OpenCL C 2.0 built-in): for 1.2 builds.
fn ids_src_12() -> String {
    IDS_SRC.replace("get_enqueued_local_size(i)", "get_local_size(i)")
}

/// What work-item `rel` (relative to the offset) of dimension `d` must see:
/// (global id, local id, group id, global offset, global size, local size, groups,
/// enqueued local size).
fn model(rel: usize, off: usize, g: usize, l: usize) -> [usize; 8] {
    let group = rel / l;
    let size = if (group + 1) * l <= g {
        l
    } else {
        g - group * l
    };
    [rel + off, rel % l, group, off, g, size, g.div_ceil(l), l]
}

/// Runs `k` (an `ids` kernel) over the geometry and checks every value of every work-item.
/// `enqueued`: the kernel writes get_enqueued_local_size (else get_local_size again).
fn check_ids(e: &Env, k: cl_kernel, off: &[usize], gws: &[usize], lws: &[usize], enqueued: bool) {
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
    e.run(k, Some(off), gws, Some(lws));
    let v: Vec<u32> = e.read(out, n * F);
    check!(clReleaseMemObject(out));
    let at = |a: &[usize], i: usize, none: usize| if i < dim { a[i] } else { none };
    let what = format!("off {off:?} gws {gws:?} lws {lws:?}");
    for lin in 0..n {
        let r = &v[lin * F..lin * F + F];
        let g = [at(gws, 0, 1), at(gws, 1, 1), at(gws, 2, 1)];
        let rel = [lin % g[0], (lin / g[0]) % g[1], lin / (g[0] * g[1])];
        assert_eq!(r[0] as usize, dim, "{what}: work_dim at item {lin}");
        for i in 0..3 {
            let mut want = model(rel[i], at(off, i, 0), g[i], at(lws, i, 1));
            if !enqueued {
                want[7] = want[5];
            }
            let got: Vec<usize> = (0..8).map(|f| r[1 + 3 * f + i] as usize).collect();
            assert_eq!(
                got, want,
                "{what}: item {lin} dim {i} (global id, local id, group id, offset, \
                 global size, local size, groups, enqueued local size)"
            );
        }
    }
}

/// Uniform launches (OpenCL C 1.2): small local sizes in 1, 2 and 3 dimensions, with and
/// without global offsets.
#[test]
fn small_uniform_groups() {
    let e = Env::new();
    let p = e.program(&ids_src_12(), "");
    let k = kernel(p, "ids");
    for (off, gws, lws) in [
        (&[0][..], &[1000][..], &[1][..]),
        (&[0], &[1000], &[2]),
        (&[7], &[999], &[3]),
        (&[0], &[640], &[5]),
        (&[0], &[64], &[64]),
        (&[0], &[96], &[32]),
        (&[0, 0], &[40, 30], &[1, 1]),
        (&[0, 0], &[40, 30], &[2, 1]),
        (&[0, 0], &[40, 30], &[1, 3]),
        (&[5, 9], &[36, 12], &[4, 2]),
        (&[0, 0, 0], &[12, 10, 9], &[1, 1, 1]),
        (&[0, 0, 0], &[12, 10, 14], &[3, 5, 7]),
        (&[1, 2, 3], &[8, 6, 4], &[2, 1, 2]),
        (&[0, 0, 0], &[2, 30, 4], &[1, 3, 1]),
    ] {
        check_ids(&e, k, off, gws, lws, false);
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// Non-uniform launches (OpenCL C 3.0 and 2.0): last work-groups of the remainder size in
/// each dimension, with global offsets.
#[test]
fn small_non_uniform_groups() {
    let e = Env::new();
    for opts in ["-cl-std=CL3.0", "-cl-std=CL2.0"] {
        let p = e.program(IDS_SRC, opts);
        let k = kernel(p, "ids");
        for (off, gws, lws) in [
            (&[0][..], &[1001][..], &[1][..]),
            (&[0], &[1001], &[2]),
            (&[11], &[1000], &[3]),
            (&[0], &[130], &[7]),
            (&[0], &[100], &[64]),
            (&[0, 0], &[41, 31], &[1, 1]),
            (&[0, 0], &[41, 31], &[2, 1]),
            (&[3, 4], &[40, 31], &[1, 3]),
            (&[0, 0], &[39, 14], &[5, 4]),
            (&[0, 0, 0], &[13, 11, 9], &[1, 1, 1]),
            (&[0, 0, 0], &[13, 11, 9], &[3, 5, 7]),
            (&[2, 0, 5], &[7, 12, 15], &[3, 5, 7]),
            (&[0, 0, 0], &[9, 7, 5], &[2, 2, 2]),
        ] {
            check_ids(&e, k, off, gws, lws, true);
        }
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// More OpenCL work-groups along x than a Vulkan dispatch can hold (65,535 on lavapipe):
/// the launch is split into dispatches with a base group.
#[test]
fn many_small_groups() {
    let e = Env::new();
    let src = r#"
        kernel void ids3(global uint* out) {
            size_t g = get_global_id(0) - get_global_offset(0);
            out[3 * g] = get_global_id(0);
            out[3 * g + 1] = get_local_id(0);
            out[3 * g + 2] = get_group_id(0);
        }"#;
    for opts in ["", "-cl-std=CL3.0"] {
        let p = e.program(src, opts);
        let k = kernel(p, "ids3");
        for (off, n, l) in [(0usize, 200_000usize, 1usize), (5, 150_001, 2)] {
            if opts.is_empty() && n % l != 0 {
                continue;
            }
            let out = e.buffer(CL_MEM_READ_WRITE, n * 12, null_mut());
            arg(k, 0, &out);
            e.run(k, Some(&[off]), &[n], Some(&[l]));
            let v: Vec<u32> = e.read(out, n * 3);
            for g in 0..n {
                assert_eq!(
                    &v[3 * g..3 * g + 3],
                    &[(g + off) as u32, (g % l) as u32, (g / l) as u32],
                    "{opts}: n {n} l {l} item {g}"
                );
            }
            check!(clReleaseMemObject(out));
        }
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// Launches whose coalesced Vulkan groups are still more than a dispatch holds (split with a
/// base group), and a kernel that cannot be coalesced split the same way.
#[test]
fn coalesced_and_split() {
    let e = Env::new();
    let src = r#"
        kernel void ids(global uint* out) {
            out[get_global_id(0)] = get_group_id(0) * get_local_size(0) + get_local_id(0);
        }
        kernel void synced(global uint* out) {
            local uint t[2];
            t[get_local_id(0)] = get_group_id(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = t[0] * get_local_size(0) + get_local_id(0);
        }"#;
    let p = e.program(src, "");
    // 4.5 million groups of 2 (140,625 Vulkan groups of 32 of them); 140,000 of 1.
    for (name, n, l) in [("ids", 9_000_000usize, 2usize), ("synced", 140_000, 1)] {
        let k = kernel(p, name);
        let out = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        arg(k, 0, &out);
        e.run(k, None, &[n], Some(&[l]));
        let v: Vec<u32> = e.read(out, n);
        let wrong = v
            .iter()
            .enumerate()
            .filter(|&(i, &x)| x != i as u32)
            .count();
        assert_eq!(wrong, 0, "{name}: {wrong} of {n} work-items wrong");
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
}

/// An OpenCL C 1.2 kernel reads its group count from NumWorkgroups, which a launch split
/// into several dispatches would get wrong: such launches are refused (CL_OUT_OF_RESOURCES)
/// unless coalescing makes one dispatch of them (lavapipe: 65,535 groups per dispatch).
#[test]
fn group_count_beyond_the_dispatch_limit() {
    let e = Env::new();
    let src = r#"
        kernel void count(global uint* out) {
            out[2 * get_global_id(0)] = get_num_groups(0);
            out[2 * get_global_id(0) + 1] = get_global_size(0);
        }"#;
    let p = e.program(src, "");
    let k = kernel(p, "count");
    let n = 140_000usize;
    let out = e.buffer(CL_MEM_READ_WRITE, n * 8, null_mut());
    arg(k, 0, &out);
    let coalescing = match std::env::var("VKCL_COALESCE").as_deref() {
        Ok("0") => false,
        Ok(v) if !v.is_empty() => true,
        _ => device_val::<cl_bitfield>(e.dev, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU != 0,
    };
    let (g, l) = ([n], [1usize]);
    let code = unsafe {
        clEnqueueNDRangeKernel(
            e.queue,
            k,
            1,
            null(),
            g.as_ptr(),
            l.as_ptr(),
            0,
            null(),
            null_mut(),
        )
    };
    if coalescing || code == CL_SUCCESS {
        assert_eq!(code, CL_SUCCESS, "{}", err_name(code));
        let v: Vec<u32> = e.read(out, 2 * n);
        assert!(v.iter().all(|&x| x == n as u32));
    } else {
        assert_eq!(code, CL_OUT_OF_RESOURCES, "{}", err_name(code));
    }
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// Kernels whose work-items leave early, loop on their ids and write through atomics: the
/// work-items of a coalesced group that have no OpenCL work-item must do nothing.
#[test]
fn early_returns_and_atomics() {
    let e = Env::new();
    let src = r#"
        kernel void count(global uint* hits, global uint* total, uint limit) {
            size_t g = get_global_id(0) + get_global_size(0) * get_global_id(1);
            if (get_global_id(0) >= limit) return;
            for (uint i = 0; i <= get_local_id(0); i++)
                atomic_add(&hits[g], 1u);
            atomic_inc(total);
        }"#;
    for opts in ["", "-cl-std=CL3.0"] {
        let p = e.program(src, opts);
        let k = kernel(p, "count");
        let (gws, lws) = if opts.is_empty() {
            ([60usize, 7], [3usize, 1])
        } else {
            ([61, 7], [3, 2])
        };
        let limit = 50u32;
        let n = gws[0] * gws[1];
        let hits = e.buffer_from(&vec![0u32; n]);
        let total = e.buffer_from(&[0u32]);
        arg(k, 0, &hits);
        arg(k, 1, &total);
        arg(k, 2, &limit);
        e.run(k, None, &gws, Some(&lws));
        let h: Vec<u32> = e.read(hits, n);
        let t: Vec<u32> = e.read(total, 1);
        for y in 0..gws[1] {
            for x in 0..gws[0] {
                let want = if x < limit as usize {
                    x % lws[0] + 1
                } else {
                    0
                };
                assert_eq!(h[x + gws[0] * y] as usize, want, "{opts}: item ({x}, {y})");
            }
        }
        assert_eq!(t[0] as usize, limit as usize * gws[1], "{opts}: total");
        check!(clReleaseMemObject(hits));
        check!(clReleaseMemObject(total));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// Kernels that observe their work-group (a barrier over `__local` memory, a `__local`
/// argument, a work-group function): still one OpenCL work-group per Vulkan work-group,
/// and right with small local sizes; a kernel of the same program that does not.
#[test]
fn group_observing_kernels_with_small_groups() {
    let e = Env::new();
    let src = r#"
        kernel void rotate(global uint* out) {
            local uint tmp[64];
            size_t l = get_local_id(0), n = get_local_size(0);
            tmp[l] = get_global_id(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = tmp[(l + 1) % n];
        }
        kernel void rotate_arg(global uint* out, local uint* tmp) {
            size_t l = get_local_id(0), n = get_local_size(0);
            tmp[l] = get_global_id(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = tmp[(l + 1) % n];
        }
        kernel void group_sum(global uint* out) {
            out[get_global_id(0)] = work_group_reduce_add((uint)get_global_id(0));
        }
        kernel void plain(global uint* out) {
            out[get_global_id(0)] = get_group_id(0) * 1000 + get_local_id(0);
        }"#;
    let p = e.program(src, "-cl-std=CL3.0");
    let n = 300usize;
    // `plain` may be coalesced beside the others' `__local` variables and barriers.
    for name in ["rotate", "rotate_arg", "group_sum", "plain"] {
        let k = kernel(p, name);
        for l in [1usize, 2, 3, 7] {
            let out = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
            arg(k, 0, &out);
            if name == "rotate_arg" {
                arg_local(k, 1, 64 * 4);
            }
            e.run(k, None, &[n], Some(&[l]));
            let v: Vec<u32> = e.read(out, n);
            for (g, &got) in v.iter().enumerate() {
                let start = g / l * l;
                let size = l.min(n - start);
                let want = match name {
                    "group_sum" => (start..start + size).sum::<usize>(),
                    "plain" => g / l * 1000 + g % l,
                    _ => start + (g - start + 1) % size,
                };
                assert_eq!(got as usize, want, "{name}: l {l} item {g}");
            }
            check!(clReleaseMemObject(out));
        }
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
}

/// get_local_linear_id and get_global_linear_id (OpenCL C 2.0), which clspv computes from
/// the local ids and sizes.
#[test]
fn linear_ids() {
    let e = Env::new();
    let src = r#"
        kernel void lin(global uint* out) {
            size_t g = get_global_linear_id();
            out[2 * g] = g;
            out[2 * g + 1] = get_local_linear_id();
        }"#;
    let p = e.program(src, "-cl-std=CL3.0");
    let k = kernel(p, "lin");
    for (off, gws, lws) in [
        ([0usize, 0, 0], [12usize, 10, 6], [1usize, 1, 1]),
        ([1, 2, 3], [13, 10, 7], [2, 3, 2]),
        ([0, 0, 0], [5, 40, 3], [1, 4, 1]),
    ] {
        let n: usize = gws.iter().product();
        let out = e.buffer(CL_MEM_READ_WRITE, n * 8, null_mut());
        arg(k, 0, &out);
        e.run(k, Some(&off), &gws, Some(&lws));
        let v: Vec<u32> = e.read(out, n * 2);
        for g in 0..n {
            let rel = [g % gws[0], g / gws[0] % gws[1], g / (gws[0] * gws[1])];
            let size: Vec<usize> = (0..3)
                .map(|d| {
                    let start = rel[d] / lws[d] * lws[d];
                    lws[d].min(gws[d] - start)
                })
                .collect();
            let lid: Vec<usize> = (0..3).map(|d| rel[d] % lws[d]).collect();
            let local = lid[0] + size[0] * (lid[1] + size[1] * lid[2]);
            assert_eq!(
                (v[2 * g] as usize, v[2 * g + 1] as usize),
                (g, local),
                "off {off:?} gws {gws:?} lws {lws:?} item {g}"
            );
        }
        check!(clReleaseMemObject(out));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
