//! The sub-group extensions (cl_khr_subgroup_ballot, _non_uniform_vote, _shuffle,
//! _shuffle_relative, _extended_types, _non_uniform_arithmetic, _clustered_reduce): every
//! function against a host model of the sub-groups (consecutive runs of
//! get_max_sub_group_size() local ids, the last one partial), in uniform control flow and
//! in a branch that only some work-items of a sub-group take.
#[macro_use]
mod common;
use common::*;

const EXTENSIONS: &[&str] = &SUBGROUP_EXTENSIONS;

/// Slots per work-item in the uint kernel's output.
const N: usize = 48;

const UINT_SOURCE: &str = r#"
#if !defined(cl_khr_subgroup_ballot) || !defined(cl_khr_subgroup_non_uniform_vote) \
    || !defined(cl_khr_subgroup_shuffle) || !defined(cl_khr_subgroup_shuffle_relative) \
    || !defined(cl_khr_subgroup_non_uniform_arithmetic) || !defined(cl_khr_subgroup_clustered_reduce)
#error a sub-group extension macro is missing
#endif
kernel void k(global const uint *in, global uint *out) {
    uint g = get_global_id(0), x = in[g], lid = get_sub_group_local_id();
    global uint *o = out + 48 * g;
    uint4 b = sub_group_ballot((x & 1u) || lid == 0u);
    o[0] = b.x;
    o[1] = sub_group_inverse_ballot(b);
    o[2] = sub_group_ballot_bit_extract(b, 2u);
    o[3] = sub_group_ballot_bit_count(b);
    o[4] = sub_group_ballot_inclusive_scan(b);
    o[5] = sub_group_ballot_exclusive_scan(b);
    o[6] = sub_group_ballot_find_lsb(b);
    o[7] = sub_group_ballot_find_msb(b);
    o[8] = get_sub_group_eq_mask().x;
    o[9] = get_sub_group_ge_mask().x;
    o[10] = get_sub_group_gt_mask().x;
    o[11] = get_sub_group_le_mask().x;
    o[12] = get_sub_group_lt_mask().x;
    o[13] = sub_group_non_uniform_broadcast(x, 1u);
    o[14] = sub_group_broadcast_first(x);
    o[15] = sub_group_elect();
    o[16] = sub_group_non_uniform_all(x > 0u);
    o[17] = sub_group_non_uniform_any(x > 50u);
    o[18] = sub_group_non_uniform_all_equal(x);
    o[19] = sub_group_non_uniform_all_equal(x / 1000u);
    uint n = get_sub_group_size();
    uint s = sub_group_shuffle(x, n - 1u - lid);
    o[20] = s;
    s = sub_group_shuffle_xor(x, 1u);
    o[21] = (lid ^ 1u) < n ? s : 0u;
    s = sub_group_shuffle_up(x, 1u);
    o[22] = lid >= 1u ? s : 0u;
    s = sub_group_shuffle_down(x, 2u);
    o[23] = lid + 2u < n ? s : 0u;
    o[24] = sub_group_non_uniform_reduce_add(x);
    o[25] = sub_group_non_uniform_reduce_mul(x % 3u + 1u);
    o[26] = sub_group_non_uniform_reduce_min(x);
    o[27] = sub_group_non_uniform_reduce_max(x);
    o[28] = sub_group_non_uniform_reduce_and(x);
    o[29] = sub_group_non_uniform_reduce_or(x);
    o[30] = sub_group_non_uniform_reduce_xor(x);
    o[31] = sub_group_non_uniform_reduce_logical_and((int)(x & 1u));
    o[32] = sub_group_non_uniform_reduce_logical_or((int)(x & 1u));
    o[33] = sub_group_non_uniform_reduce_logical_xor((int)(x & 1u));
    o[34] = sub_group_non_uniform_scan_inclusive_add(x);
    o[35] = sub_group_non_uniform_scan_exclusive_add(x);
    o[36] = sub_group_non_uniform_scan_inclusive_max(x);
    o[37] = sub_group_non_uniform_scan_exclusive_min(x);
    o[38] = sub_group_non_uniform_scan_inclusive_xor(x);
    o[39] = sub_group_non_uniform_scan_exclusive_logical_or((int)(x & 1u));
    o[40] = sub_group_clustered_reduce_add(x, 4u);
    o[41] = sub_group_clustered_reduce_max(x, 2u);
    o[42] = sub_group_clustered_reduce_or(x, 8u);
    o[43] = get_max_sub_group_size();
    if (x & 1u) {
        o[44] = sub_group_non_uniform_reduce_add(x);
        o[45] = sub_group_non_uniform_scan_inclusive_add(x);
        o[46] = sub_group_broadcast_first(x);
        o[47] = sub_group_ballot(1).x;
    }
}
"#;

/// One sub-group of a launch: its work-items' global ids, in local-id order.
fn sub_groups(global: usize, local: usize, size: usize) -> Vec<Vec<usize>> {
    let mut v = vec![];
    for group in (0..global).step_by(local) {
        let end = (group + local).min(global);
        for start in (group..end).step_by(size) {
            v.push((start..(start + size).min(end)).collect());
        }
    }
    v
}

fn bits(ids: impl Iterator<Item = usize>) -> u32 {
    ids.filter(|&i| i < 32).fold(0, |m, i| m | 1 << i)
}

/// The expected slots 0..48 of the uint kernel for each work-item of a sub-group.
fn model_uint(x: &[u32], max: usize) -> Vec<[Option<u32>; N]> {
    let n = x.len();
    let b: Vec<bool> = (0..n).map(|l| x[l] & 1 == 1 || l == 0).collect();
    let bmask = bits((0..n).filter(|&l| b[l]));
    let odd: Vec<usize> = (0..n).filter(|&l| x[l] & 1 == 1).collect();
    let fold = |ids: &[usize], f: &dyn Fn(u32, u32) -> u32, id: u32, v: &dyn Fn(usize) -> u32| {
        ids.iter().fold(id, |a, &l| f(a, v(l)))
    };
    let all: Vec<usize> = (0..n).collect();
    (0..n)
        .map(|l| {
            let mut e = [None; N];
            let le: Vec<usize> = (0..=l).collect();
            let lt: Vec<usize> = (0..l).collect();
            let val = |i: usize| x[i];
            let set = |e: &mut [Option<u32>; N], i: usize, v: u32| e[i] = Some(v);
            set(&mut e, 0, bmask);
            set(&mut e, 1, b[l] as u32);
            set(&mut e, 2, (n > 2 && b[2]) as u32);
            set(&mut e, 3, bmask.count_ones());
            set(&mut e, 4, (bmask & ((2u64 << l) - 1) as u32).count_ones());
            set(&mut e, 5, (bmask & ((1u64 << l) - 1) as u32).count_ones());
            set(&mut e, 6, bmask.trailing_zeros());
            set(&mut e, 7, 31 - bmask.leading_zeros());
            set(&mut e, 8, 1 << l);
            set(&mut e, 9, bits(l..max));
            set(&mut e, 10, bits(l + 1..max));
            set(&mut e, 11, bits(0..=l));
            set(&mut e, 12, bits(0..l));
            if n > 1 {
                set(&mut e, 13, x[1]);
            }
            set(&mut e, 14, x[0]);
            set(&mut e, 15, (l == 0) as u32);
            set(&mut e, 16, x.iter().all(|&v| v > 0) as u32);
            set(&mut e, 17, x.iter().any(|&v| v > 50) as u32);
            set(&mut e, 18, x.iter().all(|&v| v == x[0]) as u32);
            set(
                &mut e,
                19,
                x.iter().all(|&v| v / 1000 == x[0] / 1000) as u32,
            );
            set(&mut e, 20, x[n - 1 - l]);
            set(&mut e, 21, if l ^ 1 < n { x[l ^ 1] } else { 0 });
            set(&mut e, 22, if l >= 1 { x[l - 1] } else { 0 });
            set(&mut e, 23, if l + 2 < n { x[l + 2] } else { 0 });
            let add = |a: u32, v: u32| a.wrapping_add(v);
            set(&mut e, 24, fold(&all, &add, 0, &val));
            set(
                &mut e,
                25,
                fold(&all, &|a, v| a.wrapping_mul(v), 1, &|i| x[i] % 3 + 1),
            );
            set(&mut e, 26, fold(&all, &|a, v| a.min(v), u32::MAX, &val));
            set(&mut e, 27, fold(&all, &|a, v| a.max(v), 0, &val));
            set(&mut e, 28, fold(&all, &|a, v| a & v, !0, &val));
            set(&mut e, 29, fold(&all, &|a, v| a | v, 0, &val));
            set(&mut e, 30, fold(&all, &|a, v| a ^ v, 0, &val));
            let p = |i: usize| x[i] & 1;
            set(&mut e, 31, fold(&all, &|a, v| a & v, 1, &p));
            set(&mut e, 32, fold(&all, &|a, v| a | v, 0, &p));
            set(&mut e, 33, fold(&all, &|a, v| a ^ v, 0, &p));
            set(&mut e, 34, fold(&le, &add, 0, &val));
            set(&mut e, 35, fold(&lt, &add, 0, &val));
            set(&mut e, 36, fold(&le, &|a, v| a.max(v), 0, &val));
            set(&mut e, 37, fold(&lt, &|a, v| a.min(v), u32::MAX, &val));
            set(&mut e, 38, fold(&le, &|a, v| a ^ v, 0, &val));
            set(&mut e, 39, fold(&lt, &|a, v| a | v, 0, &p));
            let cluster =
                |c: usize| -> Vec<usize> { (l / c * c..((l / c + 1) * c).min(n)).collect() };
            set(&mut e, 40, fold(&cluster(4), &add, 0, &val));
            set(&mut e, 41, fold(&cluster(2), &|a, v| a.max(v), 0, &val));
            set(&mut e, 42, fold(&cluster(8), &|a, v| a | v, 0, &val));
            set(&mut e, 43, max as u32);
            if x[l] & 1 == 1 {
                let odd_le: Vec<usize> = odd.iter().copied().filter(|&i| i <= l).collect();
                set(&mut e, 44, fold(&odd, &add, 0, &val));
                set(&mut e, 45, fold(&odd_le, &add, 0, &val));
                set(&mut e, 46, x[odd[0]]);
                set(&mut e, 47, bits(odd.iter().copied()));
            } else {
                e[44..48].iter_mut().for_each(|v| *v = Some(0));
            }
            e
        })
        .collect()
}

fn device_extensions(dev: cl_device_id) -> Vec<String> {
    let s = bytes_to_string(&info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sz, v, r)
    }));
    s.split_whitespace().map(String::from).collect()
}

fn is_lavapipe(e: &Env) -> bool {
    let name = bytes_to_string(&info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(e.dev, CL_DEVICE_NAME, sz, v, r)
    }));
    name.contains("llvmpipe")
}

/// Whether this device reports the extensions (a skip says so).
fn has_extensions(e: &Env) -> bool {
    if device_extensions(e.dev).iter().any(|n| n == EXTENSIONS[0]) {
        return true;
    }
    eprintln!("skipped: no sub-group extensions on this device");
    false
}

fn seed_values(seed: &mut u64, n: usize, modulo: u64) -> Vec<u32> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 33) % modulo) as u32 + 1
        })
        .collect()
}

/// Every device with sub-groups (and, as lavapipe and NVIDIA have, Vulkan's
/// shaderSubgroupExtendedTypes) lists all the extensions, or none of them.
#[test]
fn devices_with_sub_groups_list_the_extensions() {
    setup();
    let e = Env::new();
    let max: cl_uint = bytes_to(&info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(e.dev, CL_DEVICE_MAX_NUM_SUB_GROUPS, sz, v, r)
    }));
    let ext = device_extensions(e.dev);
    let listed: Vec<bool> = EXTENSIONS
        .iter()
        .map(|n| ext.iter().any(|e| e == n))
        .collect();
    assert!(listed.iter().all(|&l| l == listed[0]), "{ext:?}");
    assert!(
        !listed[0] || max > 0,
        "sub-group extensions without sub-groups"
    );
    if is_lavapipe(&e) {
        assert!(listed[0], "lavapipe has every operation they need: {ext:?}");
    }
}

#[test]
fn uint_functions_match_the_model() {
    setup();
    let e = Env::new();
    if !has_extensions(&e) {
        return;
    }
    for std in ["-cl-std=CL3.0", "-cl-std=CL2.0"] {
        check_uint_functions(&e, std);
    }
}

/// The uint kernel built with `std`, against the model.
fn check_uint_functions(e: &Env, std: &str) {
    let p = e.program(UINT_SOURCE, std);
    let k = kernel(p, "k");
    let mut seed = 7;
    // Work-groups of 20 and, in the last of them, 13 work-items: partial sub-groups.
    for (global, local, modulo) in [(53usize, 20usize, 100u64), (64, 64, 3), (40, 40, 1)] {
        let mut x = seed_values(&mut seed, global, modulo);
        if modulo == 1 {
            x.iter_mut().for_each(|v| *v = 5);
        }
        let inp = e.buffer_from(&x);
        let out = e.buffer_from(&vec![0u32; N * global]);
        arg(k, 0, &inp);
        arg(k, 1, &out);
        e.run(k, None, &[global], Some(&[local]));
        let got = e.read::<u32>(out, N * global);
        let max = got[43] as usize;
        assert!(max > 0 && max <= 128, "get_max_sub_group_size() = {max}");
        for ids in sub_groups(global, local, max) {
            let xs: Vec<u32> = ids.iter().map(|&g| x[g]).collect();
            for (l, want) in model_uint(&xs, max).iter().enumerate() {
                let g = ids[l];
                for (slot, w) in want.iter().enumerate() {
                    if let Some(w) = w {
                        assert_eq!(
                            got[N * g + slot],
                            *w,
                            "{std}: slot {slot}, work-item {g} (lane {l} of {xs:?}), local size {local}"
                        );
                    }
                }
            }
        }
        check!(clReleaseMemObject(inp));
        check!(clReleaseMemObject(out));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// Slots per work-item in the typed kernel's output.
const M: usize = 21;

const TYPED_SOURCE: &str = r#"
#ifdef HALF
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
#define V2 CAT(T, 2)
#define V4 CAT(T, 4)
#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b
kernel void k(global const int *in, global int *out) {
    uint g = get_global_id(0), lid = get_sub_group_local_id(), n = get_sub_group_size();
    T x = (T)in[g];
    global int *o = out + 21 * g;
    o[0] = (int)sub_group_broadcast(x, 1u);
    V4 v = (V4)(x, x + (T)1, x + (T)2, x + (T)3);
    o[1] = (int)sub_group_broadcast(v, 0u).w;
    o[2] = (int)sub_group_non_uniform_broadcast(v, 1u).z;
    o[3] = (int)sub_group_broadcast_first((V2)(x, x + (T)1)).y;
    o[4] = (int)sub_group_shuffle(x, n - 1u - lid);
    T s = sub_group_shuffle_xor(x, 1u);
    o[5] = (lid ^ 1u) < n ? (int)s : -1;
    s = sub_group_shuffle_up(x, 1u);
    o[6] = lid >= 1u ? (int)s : -1;
    s = sub_group_shuffle_down(x, 1u);
    o[7] = lid + 1u < n ? (int)s : -1;
    o[8] = (int)sub_group_reduce_add(x);
    o[9] = (int)sub_group_scan_inclusive_min(x);
    o[10] = (int)sub_group_non_uniform_reduce_add(x);
    o[11] = (int)sub_group_non_uniform_reduce_max(x);
    o[12] = (int)sub_group_non_uniform_scan_inclusive_add(x);
    o[13] = (int)sub_group_non_uniform_scan_exclusive_min(x);
    o[14] = (int)sub_group_clustered_reduce_add(x, 2u);
    o[15] = sub_group_non_uniform_all_equal(x);
    o[16] = (int)sub_group_clustered_reduce_mul(x, 2u);
    o[17] = (int)sub_group_clustered_reduce_min(x, 4u);
#ifdef INTEGER
    o[18] = (int)sub_group_non_uniform_reduce_or(x);
    o[19] = (int)sub_group_non_uniform_scan_inclusive_and(x);
    o[20] = (int)sub_group_clustered_reduce_xor(x, 4u);
#endif
}
"#;

/// The expected slots of the typed kernel for each work-item of a sub-group (values small
/// enough for every type; a min over no work-items is the type's largest value, which
/// slot 13 of lane 0 leaves out).
fn model_typed(x: &[i32], integer: bool) -> Vec<[Option<i32>; M]> {
    let n = x.len();
    let sum = |ids: std::ops::Range<usize>| ids.map(|i| x[i]).sum::<i32>();
    (0..n)
        .map(|l| {
            let mut e = [None; M];
            if n > 1 {
                e[0] = Some(x[1]);
                e[2] = Some(x[1] + 2);
            }
            e[1] = Some(x[0] + 3);
            e[3] = Some(x[0] + 1);
            e[4] = Some(x[n - 1 - l]);
            e[5] = Some(if l ^ 1 < n { x[l ^ 1] } else { -1 });
            e[6] = Some(if l >= 1 { x[l - 1] } else { -1 });
            e[7] = Some(if l + 1 < n { x[l + 1] } else { -1 });
            e[8] = Some(sum(0..n));
            e[9] = x[..=l].iter().copied().min();
            e[10] = Some(sum(0..n));
            e[11] = x.iter().copied().max();
            e[12] = Some(sum(0..l + 1));
            e[13] = x[..l].iter().copied().min();
            e[14] = Some(sum(l / 2 * 2..(l / 2 * 2 + 2).min(n)));
            e[15] = Some(x.iter().all(|&v| v == x[0]) as i32);
            let cluster = |c: usize| &x[l / c * c..(l / c * c + c).min(n)];
            e[16] = Some(cluster(2).iter().product());
            e[17] = cluster(4).iter().copied().min();
            if integer {
                e[18] = Some(x.iter().fold(0, |a, v| a | v));
                e[19] = Some(x[..=l].iter().fold(!0, |a, v| a & v));
                e[20] = Some(cluster(4).iter().fold(0, |a, v| a ^ v));
            }
            e
        })
        .collect()
}

#[test]
fn every_type_matches_the_model() {
    setup();
    let e = Env::new();
    if !has_extensions(&e) {
        return;
    }
    let ext = device_extensions(e.dev);
    let has = |n: &str| ext.iter().any(|e| e == n);
    let mut types = vec!["int", "uint", "float", "char", "uchar", "short", "ushort"];
    // CL_DEVICE_OPENCL_C_FEATURES: cl_name_version entries.
    let features = info_bytes(|sz, v, r| unsafe { clGetDeviceInfo(e.dev, 0x106F, sz, v, r) });
    if String::from_utf8_lossy(&features).contains("__opencl_c_int64") {
        types.extend(["long", "ulong"]);
    }
    if has("cl_khr_fp64") {
        types.push("double");
    }
    if has("cl_khr_fp16") {
        types.push("half");
    }
    let (global, local) = (45usize, 15usize);
    let mut seed = 11;
    let x: Vec<i32> = seed_values(&mut seed, global, 4)
        .iter()
        .map(|&v| v as i32)
        .collect();
    for t in types {
        let half = if t == "half" { " -DHALF" } else { "" };
        let integer = !["float", "double", "half"].contains(&t);
        let int = if integer { " -DINTEGER" } else { "" };
        let p = e.program(TYPED_SOURCE, &format!("-cl-std=CL3.0 -DT={t}{half}{int}"));
        let k = kernel(p, "k");
        let inp = e.buffer_from(&x);
        let out = e.buffer_from(&vec![0i32; M * global]);
        arg(k, 0, &inp);
        arg(k, 1, &out);
        e.run(k, None, &[global], Some(&[local]));
        let got = e.read::<i32>(out, M * global);
        let max = max_sub_group_size();
        for ids in sub_groups(global, local, max) {
            let xs: Vec<i32> = ids.iter().map(|&g| x[g]).collect();
            for (l, want) in model_typed(&xs, integer).iter().enumerate() {
                for (slot, w) in want.iter().enumerate() {
                    if let Some(w) = w {
                        let g = ids[l];
                        assert_eq!(
                            got[M * g + slot],
                            *w,
                            "{t}: slot {slot}, lane {l} of {xs:?}"
                        );
                    }
                }
            }
        }
        check!(clReleaseMemObject(inp));
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// get_max_sub_group_size() as a kernel sees it.
fn max_sub_group_size() -> usize {
    let src = "kernel void m(global uint *o) { o[0] = get_max_sub_group_size(); }";
    let out = run_with_buffers::<u32, u32>(src, "-cl-std=CL3.0", "m", &[vec![0u32]], &[], 1);
    out[0][0] as usize
}

/// A program of OpenCL C 1.1 (no sub-group built-ins) whose text names them only in code it
/// leaves out builds and runs: CLBlast's GEMM kernels (built with -cl-std=CL1.1) do this
/// (#if USE_SUBGROUP_SHUFFLING), and vkcl's sub-group prelude once broke their build.
#[test]
fn a_version_without_sub_groups_ignores_their_names_in_disabled_code() {
    let src = "#if defined(USE_SHUFFLING)\n\
               #define SHUFFLE(x, i) sub_group_shuffle(x, i)\n\
               #define N get_sub_group_size()\n\
               #endif\n\
               kernel void k(global uint *o) { o[get_global_id(0)] = 2u * get_global_id(0); }";
    for std in ["-cl-std=CL1.2", "-cl-std=CL1.1", ""] {
        let out = run_with_buffers::<u32, u32>(src, std, "k", &[vec![0u32; 4]], &[], 4);
        assert_eq!(out[0], [0, 2, 4, 6], "{std}");
    }
}

/// The ballot functions that read a bit field (bit_count, find_lsb, find_msb) consider the
/// bottom get_max_sub_group_size() bits, in a partial last sub-group too (SPIR-V's "bits
/// required to represent all bits of the group's invocations"; the conformance suite's
/// ballot test); vkcl's library considered only the partial sub-group's work-items. Run under
/// OpenCL C 1.2 as well, where the extensions' functions now exist.
#[test]
fn ballot_bit_fields_in_a_partial_sub_group() {
    let e = Env::new();
    if !has_extensions(&e) {
        return;
    }
    let max = max_sub_group_size();
    assert!(max <= 32, "a sub-group of {max} work-items");
    let src = "kernel void k(global uint *o) {\n\
               uint max = get_max_sub_group_size(), g = get_global_id(0);\n\
               uint all = max == 32u ? 0xffffffffu : (1u << max) - 1u;\n\
               uint above = max == 32u ? 0u : 1u << max;\n\
               o[4 * g] = sub_group_ballot_bit_count((uint4)(all | above, 0u, 0u, 0u));\n\
               o[4 * g + 1] = sub_group_ballot_find_msb((uint4)(all | above, 0u, 0u, 0u));\n\
               o[4 * g + 2] = sub_group_ballot_find_lsb((uint4)(all & ~1u, 0u, 0u, 0u));\n\
               o[4 * g + 3] = get_sub_group_size(); }";
    // A work-group of one and a half sub-groups.
    let local = max + max / 2;
    for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
        let p = e.program(src, std);
        let k = kernel(p, "k");
        let o = e.buffer_from(&vec![0u32; 4 * local]);
        arg(k, 0, &o);
        e.run(k, None, &[local], Some(&[local]));
        let r = e.read::<u32>(o, 4 * local);
        for l in 0..local {
            let size = if l < max { max } else { local - max };
            let want = [max as u32, max as u32 - 1, 1, size as u32];
            assert_eq!(r[4 * l..4 * l + 4], want, "{std}, work-item {l}");
        }
        check!(clReleaseMemObject(o));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}
