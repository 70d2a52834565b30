//! Long vectors (8 and 16 components) read from buffers, the loads compiler::load_vectors
//! merges into 4-vector loads (issue 21: NVIDIA read clspv's 16 scalar loads per float16 at half
//! its bandwidth): every shape it merges and the ones it must not, checked against the host.
#[macro_use]
mod common;
use common::*;

const N: usize = 64;

const SOURCE: &str = "\
kernel void sum16(global const float16 *a, global float *out) {\n\
    uint i = get_global_id(0);\n\
    float16 v = a[i];\n\
    out[i] = v.s0 + 2 * v.s1 + 3 * v.s2 + 4 * v.s3 + 5 * v.s4 + 6 * v.s5 + 7 * v.s6 + 8 * v.s7\n\
        + 9 * v.s8 + 10 * v.s9 + 11 * v.sa + 12 * v.sb + 13 * v.sc + 14 * v.sd + 15 * v.se + 16 * v.sf;\n\
}\n\
kernel void pairs16(global const int16 *a, global int16 *out) {\n\
    uint i = get_global_id(0);\n\
    out[i] = a[2 * (i / 2)] - a[2 * (i / 2) + 1] * (int16)(i);\n\
}\n\
kernel void copy8(global const uint8 *a, global uint8 *out) { out[get_global_id(0)] = a[get_global_id(0)].s76543210; }\n\
kernel void some16(global const float16 *a, global float *out) {\n\
    uint i = get_global_id(0);\n\
    out[i] = a[i].s5 - a[i].sc;\n\
}\n\
kernel void vload(global const float *a, global float16 *out) { out[get_global_id(0)] = vload16(get_global_id(0), a) * 2; }\n\
kernel void in_place(global float8 *a) { uint i = get_global_id(0); a[i] = a[i].s12345670 + (float8)(1); }\n\
kernel void store_between(global const float16 *a, global float16 *b) {\n\
    uint i = get_global_id(0);\n\
    float x = a[i].s0;\n\
    b[i] = (float16)(x);\n\
    b[i].s1 = a[i].s1 + a[i].s2 + a[i].s3;\n\
}\n";

fn floats(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|j| ((j as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 - 500.0)
        .collect()
}

#[test]
fn long_vector_loads_give_every_component() {
    let env = &Env::new();
    let p = env.program(SOURCE, "");
    // sum16: float16 read whole, weighted sum of its components.
    let a = floats(16 * N, 1);
    let buf = env.buffer_from(&a);
    let out = env.buffer_from(&vec![0f32; N]);
    let k = kernel(p, "sum16");
    arg(k, 0, &buf);
    arg(k, 1, &out);
    env.run(k, None, &[N], None);
    let want: Vec<f32> = (0..N)
        .map(|i| (0..16).map(|c| (c + 1) as f32 * a[16 * i + c]).sum())
        .collect();
    assert_eq!(env.read::<f32>(out, N), want, "sum16");
    // some16: two components of each float16 (no group of four).
    let k = kernel(p, "some16");
    arg(k, 0, &buf);
    arg(k, 1, &out);
    env.run(k, None, &[N], None);
    let want: Vec<f32> = (0..N).map(|i| a[16 * i + 5] - a[16 * i + 12]).collect();
    assert_eq!(env.read::<f32>(out, N), want, "some16");
    // vload: vload16 from a float array.
    let out16 = env.buffer_from(&vec![0f32; 16 * N]);
    let k = kernel(p, "vload");
    arg(k, 0, &buf);
    arg(k, 1, &out16);
    env.run(k, None, &[N], None);
    let want: Vec<f32> = a.iter().map(|x| x * 2.0).collect();
    assert_eq!(env.read::<f32>(out16, 16 * N), want, "vload");
    // pairs16: the int16s at 2j and 2j + 1 (clspv indexes them as one int array).
    let ai: Vec<i32> = floats(16 * N, 7).iter().map(|&x| x as i32).collect();
    let bufi = env.buffer_from(&ai);
    let outi = env.buffer_from(&vec![0i32; 16 * N]);
    let k = kernel(p, "pairs16");
    arg(k, 0, &bufi);
    arg(k, 1, &outi);
    env.run(k, None, &[N], None);
    let want: Vec<i32> = (0..16 * N)
        .map(|e| {
            let (i, c) = (e / 16, e % 16);
            let j = 2 * (i / 2);
            ai[16 * j + c] - ai[16 * (j + 1) + c] * i as i32
        })
        .collect();
    assert_eq!(env.read::<i32>(outi, 16 * N), want, "pairs16");
    // copy8: uint8 reversed, also from a sub-buffer 4 KiB into the buffer.
    let au: Vec<u32> = (0..8 * N as u32 + 1024).map(|x| x * 3 + 1).collect();
    let bufu = env.buffer_from(&au);
    let outu = env.buffer_from(&vec![0u32; 8 * N]);
    let k = kernel(p, "copy8");
    arg(k, 1, &outu);
    for offset in [0usize, 4096] {
        let region = [offset, 8 * N * 4];
        let mut err = 0;
        let sub = unsafe {
            clCreateSubBuffer(
                bufu,
                CL_MEM_READ_ONLY,
                CL_BUFFER_CREATE_TYPE_REGION,
                region.as_ptr().cast(),
                &mut err,
            )
        };
        check!(err);
        arg(k, 0, &sub);
        env.run(k, None, &[N], None);
        let want: Vec<u32> = (0..8 * N)
            .map(|e| au[offset / 4 + 8 * (e / 8) + 7 - e % 8])
            .collect();
        assert_eq!(env.read::<u32>(outu, 8 * N), want, "copy8 at {offset}");
        unsafe { clReleaseMemObject(sub) };
    }
    // in_place: read and written by one kernel (not merged: the buffer is written).
    let a8 = floats(8 * N, 3);
    let buf8 = env.buffer_from(&a8);
    let k = kernel(p, "in_place");
    arg(k, 0, &buf8);
    env.run(k, None, &[N], None);
    let want: Vec<f32> = (0..8 * N)
        .map(|e| a8[8 * (e / 8) + (e % 8 + 1) % 8] + 1.0)
        .collect();
    assert_eq!(env.read::<f32>(buf8, 8 * N), want, "in_place");
    // store_between: a read-only buffer whose components are read around a store to another
    // buffer, bound to the same memory as `a` in the second launch.
    let k = kernel(p, "store_between");
    for same in [false, true] {
        let a = floats(16 * N, 11);
        let src = env.buffer_from(&a);
        let dst = if same {
            src
        } else {
            env.buffer_from(&vec![0f32; 16 * N])
        };
        arg(k, 0, &src);
        arg(k, 1, &dst);
        env.run(k, None, &[N], None);
        let want: Vec<f32> = (0..16 * N)
            .map(|e| {
                let (i, c) = (e / 16, e % 16);
                let x = a[16 * i];
                match (c, same) {
                    (1, false) => a[16 * i + 1] + a[16 * i + 2] + a[16 * i + 3],
                    // Aliased: the store of x came first, then s1..s3 are x.
                    (1, true) => 3.0 * x,
                    _ => x,
                }
            })
            .collect();
        assert_eq!(
            env.read::<f32>(dst, 16 * N),
            want,
            "store_between, same {same}"
        );
        unsafe { clReleaseMemObject(src) };
        if !same {
            unsafe { clReleaseMemObject(dst) };
        }
    }
}
