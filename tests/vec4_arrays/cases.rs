//! The cases of tests/vec4_arrays.rs and tests/vec4_arrays_off.rs: kernels reading and
//! writing long-vector buffers at computed indices (clpeak's global-bandwidth kernels, copies,
//! partial writes of components, in-place updates, loops, vload16/vstore16, a struct with a
//! float16 member), each result compared with the host's.
use crate::common::*;

/// The environment, with VKCL_VEC4_ARRAYS set for this binary before the first OpenCL call.
fn env() -> Env {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::env::set_var("VKCL_VEC4_ARRAYS", if crate::ON { "1" } else { "0" }));
    Env::new()
}

/// The SPIR-V words in a program binary (vkcl's container holds the module as it is).
fn spirv_in(binary: &[u8]) -> Vec<u32> {
    let magic = 0x0723_0203u32.to_le_bytes();
    let start = binary
        .windows(4)
        .position(|w| w == magic)
        .expect("a SPIR-V module in the binary");
    binary[start..]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Whether `spirv` declares a runtime array of 4-vectors.
fn has_vec4_runtime_array(spirv: &[u32]) -> bool {
    let mut vec4 = std::collections::HashSet::new();
    let mut at = 5;
    while let Some(&w) = spirv.get(at) {
        let (op, len) = (w & 0xffff, (w >> 16) as usize);
        if len == 0 || at + len > spirv.len() {
            break;
        }
        let i = &spirv[at..at + len];
        match op {
            23 if len == 4 && i[3] == 4 => _ = vec4.insert(i[1]),
            29 if len == 3 && vec4.contains(&i[2]) => return true,
            _ => {}
        }
        at += len;
    }
    false
}

fn release(k: cl_kernel, p: cl_program, mems: &[cl_mem]) {
    unsafe {
        for &m in mems {
            clReleaseMemObject(m);
        }
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

/// clpeak's global_bandwidth_v8 and global_bandwidth_v16 (src/kernels/global_bandwidth_kernels.cl).
const CLPEAK: &str = r#"
#define FETCH_2(sum, id, A)      sum += A[id];   id += get_local_size(0);   sum += A[id];   id += get_local_size(0);
#define FETCH_8(sum, id, A)      FETCH_2(sum, id, A);   FETCH_2(sum, id, A);   FETCH_2(sum, id, A);   FETCH_2(sum, id, A);
#define FETCH_PER_WI  16

__kernel void global_bandwidth_v8(__global float8 *A, __global float *B)
{
    int id = (get_group_id(0) * get_local_size(0) * FETCH_PER_WI) + get_local_id(0);
    float8 sum = 0;

    FETCH_8(sum, id, A);
    FETCH_8(sum, id, A);

    B[get_global_id(0)] = (sum.S0) + (sum.S1) + (sum.S2) + (sum.S3) + (sum.S4) + (sum.S5) + (sum.S6) + (sum.S7);
}

__kernel void global_bandwidth_v16(__global float16 *A, __global float *B)
{
    int id = (get_group_id(0) * get_local_size(0) * FETCH_PER_WI) + get_local_id(0);
    float16 sum = 0;

    FETCH_8(sum, id, A);
    FETCH_8(sum, id, A);

    float t = (sum.S0) + (sum.S1) + (sum.S2) + (sum.S3) + (sum.S4) + (sum.S5) + (sum.S6) + (sum.S7);
    t += (sum.S8) + (sum.S9) + (sum.SA) + (sum.SB) + (sum.SC) + (sum.SD) + (sum.SE) + (sum.SF);
    B[get_global_id(0)] = t;
}
"#;

/// Small whole numbers (every sum of them exact in float).
fn small(i: usize) -> f32 {
    ((i * 7 + i / 13) % 23) as f32
}

#[test]
fn clpeak_global_bandwidth_float8_and_float16() {
    let e = env();
    let p = e.program(CLPEAK, "");
    // The pass is on in one binary and off in the other: the float16 buffer's type says which.
    let spirv = spirv_in(&binaries(p)[0]);
    assert_eq!(has_vec4_runtime_array(&spirv), crate::ON);
    let (groups, local) = (6usize, 32usize);
    let global = groups * local;
    for w in [8usize, 16] {
        let elements = global * 16;
        let a: Vec<f32> = (0..elements * w).map(small).collect();
        let mut want = vec![0f32; global];
        for (gid, out) in want.iter_mut().enumerate() {
            let (group, lid) = (gid / local, gid % local);
            let mut id = group * local * 16 + lid;
            let mut sum = vec![0f32; w];
            for _ in 0..16 {
                for (c, s) in sum.iter_mut().enumerate() {
                    *s += a[id * w + c];
                }
                id += local;
            }
            *out = sum.iter().sum();
        }
        let k = kernel(p, &format!("global_bandwidth_v{w}"));
        let (ba, bb) = (e.buffer_from(&a), e.buffer_from(&vec![-1f32; global]));
        arg(k, 0, &ba);
        arg(k, 1, &bb);
        e.run(k, None, &[global], Some(&[local]));
        assert_eq!(e.read::<f32>(bb, global), want, "float{w}");
        unsafe {
            clReleaseMemObject(ba);
            clReleaseMemObject(bb);
            clReleaseKernel(k);
        }
    }
    unsafe { clReleaseProgram(p) };
}

/// `dst[i] = src[(i * 7 + 3) % n] * 2 + i` and, in a second kernel of the program on the same
/// argument types, the reverse copy: `T` one of float16, float8, int16, uint16, int8.
#[test]
fn copies_at_computed_indices() {
    let e = env();
    let n = 96usize;
    for (ty, w) in [
        ("float", 16usize),
        ("float", 8),
        ("int", 16),
        ("uint", 16),
        ("int", 8),
    ] {
        let t = format!("{ty}{w}");
        let src = format!(
            "kernel void scaled(global const {t} *src, global {t} *dst, int n) {{
                 int i = get_global_id(0);
                 dst[i] = src[(i * 7 + 3) % n] * ({t})(2) + ({t})(i);
             }}
             kernel void reversed(global const {t} *src, global {t} *dst, int n) {{
                 int i = get_global_id(0);
                 {t} v = src[n - 1 - i];
                 dst[i] = v;
             }}"
        );
        let p = e.program(&src, "");
        // Bit patterns: small whole numbers, as floats or as ints.
        let value = |x: usize| -> u32 {
            let v = (x * 5 + x / 7) % 41;
            match ty {
                "float" => (v as f32).to_bits(),
                _ => v as u32,
            }
        };
        let input: Vec<u32> = (0..n * w).map(value).collect();
        let op = |x: u32, i: usize| -> u32 {
            match ty {
                "float" => (f32::from_bits(x) * 2.0 + i as f32).to_bits(),
                _ => x.wrapping_mul(2).wrapping_add(i as u32),
            }
        };
        let mut scaled = vec![0u32; n * w];
        let mut reversed = vec![0u32; n * w];
        for i in 0..n {
            let j = (i * 7 + 3) % n;
            for c in 0..w {
                scaled[i * w + c] = op(input[j * w + c], i);
                reversed[i * w + c] = input[(n - 1 - i) * w + c];
            }
        }
        for (name, want) in [("scaled", scaled), ("reversed", reversed)] {
            let k = kernel(p, name);
            let (a, b) = (
                e.buffer_from(&input),
                e.buffer_from(&vec![0xeeee_eeeeu32; n * w]),
            );
            arg(k, 0, &a);
            arg(k, 1, &b);
            arg(k, 2, &(n as i32));
            e.run(k, None, &[n], None);
            assert_eq!(e.read::<u32>(b, n * w), want, "{t} {name}");
            unsafe {
                clReleaseMemObject(a);
                clReleaseMemObject(b);
                clReleaseKernel(k);
            }
        }
        unsafe { clReleaseProgram(p) };
    }
}

/// Writes of some components only (a whole group of four among them, `.lo.lo`), the others
/// left as they were; reads of single components.
#[test]
fn partial_writes_of_components() {
    let e = env();
    let n = 40usize;
    let src =
        "kernel void part(global const float16 *src, global float16 *dst, global int16 *ints) {
        int i = get_global_id(0);
        int j = (i * 3 + 1) % 40;
        dst[i].s3 = src[j].s5;
        dst[i].sf = src[i].s0 + 1.0f;
        dst[i].lo.lo = src[j].hi.hi;
        dst[i].s9 = (float)i;
        dst[i].sa = src[j].sa * 3.0f;
        ints[j].s7 = i;
        ints[j].s4 = ints[j].s5 + i;
    }";
    let p = e.program(src, "");
    let k = kernel(p, "part");
    let input: Vec<f32> = (0..n * 16).map(small).collect();
    let before: Vec<f32> = (0..n * 16).map(|x| -(x as f32)).collect();
    let ints_before: Vec<i32> = (0..n * 16).map(|x| (x * 3) as i32).collect();
    let (a, b, c) = (
        e.buffer_from(&input),
        e.buffer_from(&before),
        e.buffer_from(&ints_before),
    );
    arg(k, 0, &a);
    arg(k, 1, &b);
    arg(k, 2, &c);
    e.run(k, None, &[n], None);
    let mut want = before.clone();
    let mut ints = ints_before.clone();
    for i in 0..n {
        let j = (i * 3 + 1) % n;
        let (d, s, sj) = (i * 16, i * 16, j * 16);
        want[d + 3] = input[sj + 5];
        want[d + 15] = input[s] + 1.0;
        for c in 0..4 {
            want[d + c] = input[sj + 12 + c];
        }
        want[d + 9] = i as f32;
        want[d + 10] = input[sj + 10] * 3.0;
        ints[sj + 7] = i as i32;
        ints[sj + 4] = ints[sj + 5] + i as i32;
    }
    assert_eq!(e.read::<f32>(b, n * 16), want);
    assert_eq!(e.read::<i32>(c, n * 16), ints);
    release(k, p, &[a, b, c]);
}

/// In-place updates: `a[i] += b[i]`, components swapped through the buffer itself (each read
/// after the other's write), a component incremented.
#[test]
fn in_place_updates() {
    let e = env();
    let n = 48usize;
    let src = "kernel void update(global float16 *a, global const float16 *b, global uint8 *u) {
        int i = get_global_id(0);
        a[i] += b[i];
        a[i].s0 = a[i].s1;
        a[i].s1 = a[i].s0 * 2.0f;
        a[i].s6 += 1.0f;
        u[i] = u[i].s76543210 + (uint8)(1);
        u[i].s2 = u[i].s3;
    }";
    let p = e.program(src, "");
    let k = kernel(p, "update");
    let av: Vec<f32> = (0..n * 16).map(small).collect();
    let bv: Vec<f32> = (0..n * 16).map(|x| small(x + 5)).collect();
    let uv: Vec<u32> = (0..n * 8).map(|x| (x * 11 % 97) as u32).collect();
    let (a, b, u) = (e.buffer_from(&av), e.buffer_from(&bv), e.buffer_from(&uv));
    arg(k, 0, &a);
    arg(k, 1, &b);
    arg(k, 2, &u);
    e.run(k, None, &[n], None);
    let mut wa = av.clone();
    let mut wu = uv.clone();
    for i in 0..n {
        let x = &mut wa[i * 16..i * 16 + 16];
        for c in 0..16 {
            x[c] += bv[i * 16 + c];
        }
        x[0] = x[1];
        x[1] = x[0] * 2.0;
        x[6] += 1.0;
        let y: Vec<u32> = (0..8).map(|c| uv[i * 8 + 7 - c] + 1).collect();
        wu[i * 8..i * 8 + 8].copy_from_slice(&y);
        wu[i * 8 + 2] = wu[i * 8 + 3];
    }
    assert_eq!(e.read::<f32>(a, n * 16), wa);
    assert_eq!(e.read::<u32>(u, n * 8), wu);
    release(k, p, &[a, b, u]);
}

/// Loads in a loop (another block than the index's), a load under a condition, a store in a
/// branch.
#[test]
fn loops_and_branches() {
    let e = env();
    let (n, local) = (64usize, 16usize);
    let src = "kernel void looped(global const int16 *a, global int16 *b, int n) {
        int i = get_global_id(0);
        int16 sum = 0;
        for (int j = 0; j < 8; j++)
            sum += a[(i + j * get_local_size(0)) % n];
        if (i % 3 == 0)
            sum.s5 = a[i].sc;
        if (i % 2)
            b[i] = sum;
        else
            b[i].hi = sum.lo;
    }";
    let p = e.program(src, "");
    let k = kernel(p, "looped");
    let av: Vec<i32> = (0..n * 16).map(|x| (x * 13 % 101) as i32 - 50).collect();
    let before: Vec<i32> = (0..n * 16).map(|x| x as i32).collect();
    let (a, b) = (e.buffer_from(&av), e.buffer_from(&before));
    arg(k, 0, &a);
    arg(k, 1, &b);
    arg(k, 2, &(n as i32));
    e.run(k, None, &[n], Some(&[local]));
    let mut want = before.clone();
    for i in 0..n {
        let mut sum = [0i32; 16];
        for j in 0..8 {
            let x = (i + j * local) % n;
            for c in 0..16 {
                sum[c] += av[x * 16 + c];
            }
        }
        if i % 3 == 0 {
            sum[5] = av[i * 16 + 12];
        }
        if i % 2 == 1 {
            want[i * 16..i * 16 + 16].copy_from_slice(&sum);
        } else {
            want[i * 16 + 8..i * 16 + 16].copy_from_slice(&sum[..8]);
        }
    }
    assert_eq!(e.read::<i32>(b, n * 16), want);
    release(k, p, &[a, b]);
}

/// vload16 / vstore16 on float pointers, and on float16 buffers through float pointers.
#[test]
fn vload16_and_vstore16() {
    let e = env();
    let n = 32usize;
    let src = "kernel void scalar(global const float *a, global float *b) {
        int i = get_global_id(0);
        vstore16(vload16((i * 5) % 32, a) + 1.0f, i, b);
    }
    kernel void vector(global const float16 *a, global float16 *b) {
        int i = get_global_id(0);
        float16 v = vload16(0, (global const float *)(a + (i * 5) % 32));
        vstore16(v * 2.0f, 0, (global float *)(b + i));
        b[i].s4 = a[i].s4 - 1.0f;
    }";
    let p = e.program(src, "");
    let input: Vec<f32> = (0..n * 16).map(small).collect();
    for name in ["scalar", "vector"] {
        let k = kernel(p, name);
        let (a, b) = (e.buffer_from(&input), e.buffer_from(&vec![0f32; n * 16]));
        arg(k, 0, &a);
        arg(k, 1, &b);
        e.run(k, None, &[n], None);
        let mut want = vec![0f32; n * 16];
        for i in 0..n {
            let j = (i * 5) % n;
            for c in 0..16 {
                want[i * 16 + c] = match name {
                    "scalar" => input[j * 16 + c] + 1.0,
                    _ if c == 4 => input[i * 16 + 4] - 1.0,
                    _ => input[j * 16 + c] * 2.0,
                };
            }
        }
        assert_eq!(e.read::<f32>(b, n * 16), want, "{name}");
        unsafe {
            clReleaseMemObject(a);
            clReleaseMemObject(b);
            clReleaseKernel(k);
        }
    }
    unsafe { clReleaseProgram(p) };
}

/// A struct with a float16 member (64-byte aligned: 128-byte elements), read and written.
#[test]
fn struct_with_a_float16_member() {
    let e = env();
    let n = 24usize;
    let src = "typedef struct { float16 v; int k; } S;
    kernel void structs(global S *a, global float *o) {
        int i = get_global_id(0);
        o[i] = a[i].v.s3 * (float)a[i].k + a[i].v.sf;
        a[i].v.s7 = (float)i;
        a[i].k += 1;
    }";
    let p = e.program(src, "");
    let k = kernel(p, "structs");
    // 32 words per element: v (16 floats), k, padding.
    let mut words = vec![0u32; n * 32];
    for i in 0..n {
        for c in 0..16 {
            words[i * 32 + c] = small(i * 16 + c).to_bits();
        }
        words[i * 32 + 16] = (i % 5) as u32;
    }
    let (a, o) = (e.buffer_from(&words), e.buffer_from(&vec![0f32; n]));
    arg(k, 0, &a);
    arg(k, 1, &o);
    e.run(k, None, &[n], None);
    let mut want = words.clone();
    let mut out = vec![0f32; n];
    for i in 0..n {
        let f = |c: usize| f32::from_bits(words[i * 32 + c]);
        out[i] = f(3) * (i % 5) as f32 + f(15);
        want[i * 32 + 7] = (i as f32).to_bits();
        want[i * 32 + 16] += 1;
    }
    assert_eq!(e.read::<f32>(o, n), out);
    let got = e.read::<u32>(a, n * 32);
    for i in 0..n {
        assert_eq!(
            got[i * 32..i * 32 + 17],
            want[i * 32..i * 32 + 17],
            "element {i}"
        );
    }
    release(k, p, &[a, o]);
}

/// One program whose first kernel writes a float16 buffer and whose second only reads it at the
/// same binding (clspv's one variable; the reader gets a NonWritable copy of it).
#[test]
fn one_kernel_writes_what_another_reads() {
    let e = env();
    let n = 64usize;
    let src = "kernel void fill(global float16 *a, global const float *b) {
        int i = get_global_id(0);
        a[i] = (float16)(b[i]) + (float16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    }
    kernel void total(global const float16 *a, global float *b) {
        int i = get_global_id(0);
        float16 x = a[(i + 5) % 64];
        b[i] = x.s0 + x.s7 + x.s8 + x.sf;
    }";
    let p = e.program(src, "");
    let (fill, total) = (kernel(p, "fill"), kernel(p, "total"));
    let bv: Vec<f32> = (0..n).map(|i| small(i * 3)).collect();
    let (a, b, o) = (
        e.buffer_from(&vec![0f32; n * 16]),
        e.buffer_from(&bv),
        e.buffer_from(&vec![0f32; n]),
    );
    arg(fill, 0, &a);
    arg(fill, 1, &b);
    e.run(fill, None, &[n], None);
    arg(total, 0, &a);
    arg(total, 1, &o);
    e.run(total, None, &[n], None);
    let filled: Vec<f32> = (0..n * 16).map(|x| bv[x / 16] + (x % 16) as f32).collect();
    assert_eq!(e.read::<f32>(a, n * 16), filled);
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let j = (i + 5) % n;
            [0, 7, 8, 15].iter().map(|&c| filled[j * 16 + c]).sum()
        })
        .collect();
    assert_eq!(e.read::<f32>(o, n), want);
    unsafe {
        clReleaseKernel(total);
    }
    release(fill, p, &[a, b, o]);
}
