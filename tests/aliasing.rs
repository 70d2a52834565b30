//! One buffer bound to two arguments of one launch (issue 15 item 6). OpenCL C pointers without
//! `restrict` may alias: a work-item that writes through one argument and reads the same memory
//! through another sees its own writes in program order, and barriers order them across
//! work-items. Vulkan lets a driver assume that two storage-buffer variables without `Aliased`
//! do not overlap, so vkcl must say so when the same cl_mem, or overlapping sub-buffers of one
//! buffer, are bound twice (docs/DECISIONS.md, "Aliasing"). Every result is compared with a
//! reference computed here on the host; the non-aliasing cases must keep working too.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;

extern "C" {
    fn clCreateSubBuffer(
        m: cl_mem,
        flags: cl_bitfield,
        ty: cl_uint,
        info: *const c_void,
        err: *mut cl_int,
    ) -> cl_mem;
}

#[repr(C)]
struct BufferRegion {
    origin: usize,
    size: usize,
}

fn sub_buffer(m: cl_mem, origin: usize, size: usize) -> cl_mem {
    let region = BufferRegion { origin, size };
    let mut err = 0;
    let s = unsafe {
        clCreateSubBuffer(
            m,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const BufferRegion).cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "clCreateSubBuffer: {}", err_name(err));
    s
}

/// CL_DEVICE_MEM_BASE_ADDR_ALIGN in ints: sub-buffer origins are multiples of it.
fn align_ints(e: &Env) -> usize {
    device_val::<cl_uint>(e.dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN) as usize / 32
}

/// Data 1..=n with some variety.
fn data(n: usize) -> Vec<i32> {
    (0..n as i32).map(|i| 1 + (i * 7919) % 13).collect()
}

/// Sets the arguments (`cl_mem`s) and runs `name` over `gws` in groups of `lws`.
fn launch(e: &Env, p: cl_program, name: &str, args: &[cl_mem], gws: usize, lws: Option<usize>) {
    let k = kernel(p, name);
    for (i, m) in args.iter().enumerate() {
        arg(k, i as u32, m);
    }
    let lws = lws.map(|l| [l]);
    e.run(k, None, &[gws], lws.as_ref().map(|l| &l[..]));
    check!(clReleaseKernel(k));
}

/// Within one work-item, through two arguments: loads after stores and stores after loads.
const WORK_ITEM: &str = r#"
// b[i] += a[i] four times: with a == b the value doubles each time (x * 16); a load of a[i]
// hoisted out of the loop gives x * 5.
kernel void accumulate(global const int *a, global int *b) {
    uint i = get_global_id(0);
    for (int k = 0; k < 4; k++) b[i] += a[i];
}
// A load through a after a store through b: with a == b it sees the store.
kernel void reload(global int *a, global int *b) {
    uint i = get_global_id(0);
    int x = a[i];
    b[i] = x + 1;
    int y = a[i];
    b[i] = y * 3;
}
// A store through b between a store and a load through a: with a == b the load sees 7, and
// c[i] = 7.
kernel void forward(global int *a, global int *b, global int *c) {
    uint i = get_global_id(0);
    a[i] = 5;
    b[i] = 7;
    c[i] = a[i];
}
"#;

#[test]
fn same_buffer_twice_within_a_work_item() {
    let e = Env::new();
    let p = e.program(WORK_ITEM, "");
    let n = 1024;
    let x = data(n);

    let m = e.buffer_from(&x);
    launch(&e, p, "accumulate", &[m, m], n, None);
    let want: Vec<i32> = x.iter().map(|v| v * 16).collect();
    assert_eq!(e.read::<i32>(m, n), want, "accumulate with a == b");

    e.write(m, &x);
    launch(&e, p, "reload", &[m, m], n, None);
    let want: Vec<i32> = x.iter().map(|v| (v + 1) * 3).collect();
    assert_eq!(e.read::<i32>(m, n), want, "reload with a == b");

    let c = e.buffer_from(&vec![0i32; n]);
    launch(&e, p, "forward", &[m, m, c], n, None);
    assert_eq!(e.read::<i32>(c, n), vec![7; n], "forward with a == b");
    assert_eq!(e.read::<i32>(m, n), vec![7; n], "forward with a == b");

    // Distinct buffers: the launches without aliasing give the distinct answers.
    let (a, b) = (e.buffer_from(&x), e.buffer_from(&x));
    launch(&e, p, "accumulate", &[a, b], n, None);
    let want: Vec<i32> = x.iter().map(|v| v * 5).collect();
    assert_eq!(e.read::<i32>(b, n), want, "accumulate with a != b");
    launch(&e, p, "forward", &[a, b, c], n, None);
    assert_eq!(e.read::<i32>(c, n), vec![5; n], "forward with a != b");
    for m in [m, c, a, b] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseProgram(p));
}

/// Across the work-items of a group, ordered by barriers: each reads its neighbour's new value
/// through the other argument, and an in-place Hillis-Steele scan in global memory (the
/// read-only argument is read again after every barrier).
const GROUP: &str = r#"
kernel void neighbour(global const int *in, global int *out) {
    uint i = get_global_id(0), l = get_local_id(0), n = get_local_size(0);
    int v = in[i];
    out[i] = v * 2;
    barrier(CLK_GLOBAL_MEM_FENCE);
    int w = in[i - l + (l + 1) % n];
    barrier(CLK_GLOBAL_MEM_FENCE);
    out[i] = w + v;
}
kernel void scan(global const int *in, global int *out) {
    uint i = get_global_id(0), l = get_local_id(0), n = get_local_size(0);
    for (uint d = 1; d < n; d *= 2) {
        int s = in[i] + (l >= d ? in[i - d] : 0);
        barrier(CLK_GLOBAL_MEM_FENCE);
        out[i] = s;
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}
"#;

fn group_scan(x: &[i32], group: usize) -> Vec<i32> {
    x.chunks(group)
        .flat_map(|c| {
            c.iter().scan(0, |acc, v| {
                *acc += v;
                Some(*acc)
            })
        })
        .collect()
}

#[test]
fn same_buffer_twice_across_work_items_with_barriers() {
    let e = Env::new();
    let p = e.program(GROUP, "");
    let (n, group) = (2048, 64);
    let x = data(n);

    let m = e.buffer_from(&x);
    launch(&e, p, "neighbour", &[m, m], n, Some(group));
    let want: Vec<i32> = (0..n)
        .map(|i| 2 * x[i - i % group + (i % group + 1) % group] + x[i])
        .collect();
    assert_eq!(e.read::<i32>(m, n), want, "neighbour with in == out");

    e.write(m, &x);
    launch(&e, p, "scan", &[m, m], n, Some(group));
    assert_eq!(e.read::<i32>(m, n), group_scan(&x, group), "scan in place");
    check!(clReleaseMemObject(m));
    check!(clReleaseProgram(p));
}

/// A scan in place as pyopencl's InclusiveScanKernel does it (the same array as input and
/// output of every pass): a scan of each work-group's part in local memory that also writes
/// the part's sum, a scan of the sums, then each element plus the sums before its part.
const SCAN: &str = r#"
kernel void scan_parts(global const int *in, global int *out, global int *sums,
                       local int *tmp) {
    uint i = get_global_id(0), l = get_local_id(0), n = get_local_size(0);
    tmp[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < n; d *= 2) {
        int t = l >= d ? tmp[l - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        tmp[l] += t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[i] = tmp[l];
    if (l == n - 1) sums[get_group_id(0)] = tmp[l];
}
kernel void add_sums(global const int *in, global int *out, global const int *sums) {
    uint i = get_global_id(0), g = get_group_id(0);
    if (g > 0) out[i] = in[i] + sums[g - 1];
}
"#;

#[test]
fn scan_in_place_like_pyopencl() {
    let e = Env::new();
    let p = e.program(SCAN, "");
    let (group, groups) = (128, 128);
    let n = group * groups;
    let x = data(n);
    let m = e.buffer_from(&x);
    let sums = e.buffer_from(&vec![0i32; groups]);
    let scan_parts = |args: [cl_mem; 3], gws: usize, lws: usize| {
        let k = kernel(p, "scan_parts");
        for (i, a) in args.iter().enumerate() {
            arg(k, i as u32, a);
        }
        arg_local(k, 3, 4 * lws);
        e.run(k, None, &[gws], Some(&[lws]));
        check!(clReleaseKernel(k));
    };
    let dummy = e.buffer_from(&[0i32; 1]);
    scan_parts([m, m, sums], n, group);
    scan_parts([sums, sums, dummy], groups, groups);
    launch(&e, p, "add_sums", &[m, m, sums], n, Some(group));
    assert_eq!(
        e.read::<i32>(m, n),
        group_scan(&x, n),
        "inclusive scan in place"
    );
    for b in [m, sums, dummy] {
        check!(clReleaseMemObject(b));
    }
    check!(clReleaseProgram(p));
}

/// Overlapping sub-buffers of one parent bound to two arguments, a sub-buffer with its parent,
/// and non-overlapping sub-buffers (which must keep their separate answers).
const SUB: &str = r#"
kernel void accumulate_at(global const int *a, global int *b, uint shift) {
    uint i = get_global_id(0);
    for (int k = 0; k < 4; k++) b[i] += a[i + shift];
}
"#;

#[test]
fn overlapping_sub_buffers() {
    let e = Env::new();
    let p = e.program(SUB, "");
    let step = align_ints(&e).max(64);
    let n = 4 * step;
    let x = data(3 * n);
    let parent = e.buffer_from(&x);
    let run = |a: cl_mem, b: cl_mem, shift: u32, gws: usize| {
        let k = kernel(p, "accumulate_at");
        arg(k, 0, &a);
        arg(k, 1, &b);
        arg(k, 2, &shift);
        e.run(k, None, &[gws], None);
        check!(clReleaseKernel(k));
    };

    // a = [0, 2n), b = [n, 3n): b[i] is a[i + n].
    let a = sub_buffer(parent, 0, 8 * n);
    let b = sub_buffer(parent, 4 * n, 8 * n);
    run(a, b, n as u32, n);
    let mut want = x.clone();
    for v in &mut want[n..2 * n] {
        *v *= 16;
    }
    assert_eq!(
        e.read::<i32>(parent, 3 * n),
        want,
        "overlapping sub-buffers"
    );

    // The parent and a sub-buffer inside it: b[i] is parent[i + n].
    e.write(parent, &x);
    run(parent, b, n as u32, n);
    assert_eq!(e.read::<i32>(parent, 3 * n), want, "parent and sub-buffer");

    // Overlapping, but the elements read are not the elements written (a[i] is b[i - n]).
    e.write(parent, &x);
    run(a, b, 0, n);
    let mut want = x.clone();
    for i in n..2 * n {
        want[i] = x[i] + 4 * x[i - n];
    }
    assert_eq!(
        e.read::<i32>(parent, 3 * n),
        want,
        "overlap, other elements"
    );

    // Disjoint sub-buffers [0, n) and [n, 2n) of the parent.
    e.write(parent, &x);
    let c = sub_buffer(parent, 0, 4 * n);
    let d = sub_buffer(parent, 4 * n, 4 * n);
    run(c, d, 0, n);
    assert_eq!(e.read::<i32>(parent, 3 * n), want, "disjoint sub-buffers");
    for m in [a, b, c, d, parent] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseProgram(p));
}

/// The same bytes of `src` loaded in every line, with stores to `dst` between them (the
/// conformance test vector_creation's shape): a launch with two buffers reads `src` once per
/// address (compiler::repeated_loads), and one with the same buffer twice sees each store in
/// the lines after it. The host model runs the lines in order on one array (the same buffer)
/// or two.
#[test]
fn repeated_loads_between_stores() {
    let lines = 40;
    let mut src = String::from("kernel void k(global const char *src, global char16 *dst) {\n");
    for l in 0..lines {
        src += &format!(
            "    dst[{l}] = (char16)(src[{l}], vload2(0, src + 1), src[3], vload4(0, src + 4), \
             vload8(0, src + 8)) + (char16)({l});\n"
        );
    }
    src += "}\n";
    // The model: line l writes bytes 16l..16l+16 of dst from src's bytes l, 1..16 (read after
    // the earlier lines' stores when dst is src).
    let model = |same: bool| -> Vec<i8> {
        let init: Vec<i8> = (0..16 * lines).map(|i| (i % 61) as i8).collect();
        let (mut s, mut d) = (init.clone(), vec![0i8; 16 * lines]);
        for l in 0..lines {
            let picks = [l, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
            let v: Vec<i8> = picks.iter().map(|&i| s[i].wrapping_add(l as i8)).collect();
            d[16 * l..16 * l + 16].copy_from_slice(&v);
            if same {
                s[16 * l..16 * l + 16].copy_from_slice(&v);
            }
        }
        match same {
            true => s,
            false => d,
        }
    };
    let e = Env::new();
    let p = e.program(&src, "");
    let init: Vec<i8> = (0..16 * lines).map(|i| (i % 61) as i8).collect();
    let (a, b) = (e.buffer_from(&init), e.buffer_from(&vec![0i8; 16 * lines]));
    launch(&e, p, "k", &[a, b], 1, None);
    assert_eq!(e.read::<i8>(b, 16 * lines), model(false), "two buffers");
    e.write(b, &init);
    launch(&e, p, "k", &[b, b], 1, None);
    assert_eq!(e.read::<i8>(b, 16 * lines), model(true), "one buffer twice");
    for m in [a, b] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseProgram(p));
}

/// Pointer parameters compared and subtracted where a launch binds one buffer, or two
/// sub-buffers of one buffer, to both (the spec's pointer rules hold within one object; the
/// conformance test spirv_new spirv14_ptrops passes one buffer twice): `a == b`, `b - a`,
/// `a < b` and `a + 1 == b`, which the first build folds as if a and b pointed into
/// different objects (it gave 0 and a constant difference). The launch takes the
/// physical-addressing build, where clspv crashed on `a + 1 == b` until
/// `compiler::pointer_compares`. Devices without device addresses have no such build; there
/// the test only reports.
#[test]
fn related_pointer_parameters_bound_to_one_buffer() {
    const SRC: &str = "kernel void rel(global int *a, global int *b, global long *out) {\n\
        out[0] = a == b; out[1] = b - a; out[2] = a < b; out[3] = a + 1 == b;\n\
        out[4] = b > a + 16; }";
    let e = Env::new();
    if device_val::<cl_bitfield>(e.dev, CL_DEVICE_SVM_CAPABILITIES) == 0 {
        eprintln!("no device addresses on this device: the first build's answers stand");
        return;
    }
    let p = e.program(SRC, "");
    let step = align_ints(&e).max(1);
    let whole = e.buffer_from(&vec![0i32; 8 * step]);
    let (lo, hi) = (
        sub_buffer(whole, 0, 4 * step * 4),
        sub_buffer(whole, 4 * step * 4, 4 * step * 4),
    );
    let out = e.buffer_from(&[-1i64; 5]);
    let delta = 4 * step as i64;
    for (a, b, want) in [
        (whole, whole, [1, 0, 0, 0, 0]),
        (
            lo,
            hi,
            [0, delta, 1, i64::from(delta == 1), i64::from(delta > 16)],
        ),
        (hi, lo, [0, -delta, 0, 0, 0]),
        (
            whole,
            hi,
            [0, delta, 1, i64::from(delta == 1), i64::from(delta > 16)],
        ),
    ] {
        launch(&e, p, "rel", &[a, b, out], 1, None);
        assert_eq!(e.read::<i64>(out, 5), want, "a and b {delta} ints apart");
    }
    // Different buffers: only the inequality is defined.
    let other = e.buffer_from(&[0i32; 4]);
    launch(&e, p, "rel", &[whole, other, out], 1, None);
    assert_eq!(e.read::<i64>(out, 1), [0]);
    for m in [lo, hi, whole, other, out] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseProgram(p));
}
