//! Where the time of three slow conformance shapes goes (issue 16 item 4), printed, not
//! asserted: `cargo run --release --example conformance_timing -- [shuffle N] [atomics]
//! [shuffle16 N] [atomics] [dims]` with ci/env.sh sourced (no argument: all, 100 programs
//! each).
//!
//! - shuffle: N small programs of the relationals shuffle shape (one `shuffle` of a vector by
//!   a constant mask per program, each mask different so that no cache answers), each built,
//!   its kernel created and launched twice; the mean of every phase. `shuffle16`: `shuffle2`
//!   of two 16-element vectors of char ... double instead.
//! - atomics: c11_atomics' fetch_or / fetch_and / fetch_xor / fetch_max shape, 1,024
//!   work-items in one group on global and on local memory, one program per memory order and
//!   scope as the conformance test builds them; build and launch times.
//! - dims: thread_dimensions' quick 3D shape, every work-item writing its linear id into a
//!   128 MiB buffer, for several explicit local sizes; launch times.
#[path = "../tests/common/mod.rs"]
#[macro_use]
#[allow(unused_macros)]
mod common;
use common::*;
use std::ptr::{null, null_mut};
use std::time::Instant;

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

/// Enqueues `k` over `gws` (local `lws`) and waits; seconds.
fn launch(e: &Env, k: cl_kernel, gws: &[usize], lws: Option<&[usize]>) -> f64 {
    let t = Instant::now();
    e.run(k, None, gws, lws);
    secs(t)
}

/// The shuffle of program `i`: a char4 → char8 `shuffle`, or (`wide`) a `shuffle2` of two
/// 16-element vectors of a type taken in turn from char ... double.
fn shuffle_source(i: usize, wide: bool) -> String {
    if wide {
        let ty = ["char", "short", "int", "long", "float", "double"][i % 6];
        let mask: Vec<String> = (0..16)
            .map(|j| ((i * 7 + j * 5 + i / 6) % 32).to_string())
            .collect();
        let m = ["uchar", "ushort", "uint", "ulong", "uint", "ulong"][i % 6];
        return format!(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
             kernel void sample_test(global {ty}16 *source, global {ty}16 *dest) {{
                 size_t tid = get_global_id(0);
                 {ty}16 a = source[tid], b = source[tid + 1];
                 dest[tid] = shuffle2(a, b, ({m}16)({}));
             }}",
            mask.join(", ")
        );
    }
    let mask: Vec<String> = (0..8)
        .map(|j| ((i * 7 + j * 3 + i / 8) % 4).to_string())
        .collect();
    format!(
        "kernel void sample_test(global char4 *source, global char8 *dest) {{
             size_t tid = get_global_id(0);
             dest[tid] = shuffle(source[tid], (uchar8)({}));
         }}",
        mask.join(", ")
    )
}

fn shuffle(n: usize, wide: bool) {
    let e = Env::new();
    let (mut build, mut create, mut first, mut second) = (0.0, 0.0, 0.0, 0.0);
    let items = 1024usize;
    let src = e.buffer_from(&vec![7u8; (items + 1) * 128]);
    let dst = e.buffer_from(&vec![0u8; items * 128]);
    for i in 0..n {
        let code = shuffle_source(i, wide);
        let t = Instant::now();
        let p = e.program(&code, "");
        build += secs(t);
        let t = Instant::now();
        let k = kernel(p, "sample_test");
        arg(k, 0, &src);
        arg(k, 1, &dst);
        create += secs(t);
        let f = launch(&e, k, &[items], None);
        if std::env::var_os("TIMING_EACH").is_some() {
            println!("  program {i}: first launch {:.1} ms", 1e3 * f);
        }
        first += f;
        second += launch(&e, k, &[items], None);
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
    let ms = |s: f64| 1e3 * s / n as f64;
    println!(
        "shuffle{}: {n} programs, per program: build {:.1} ms, create kernel {:.2} ms, \
         first launch {:.1} ms, second launch {:.2} ms; total {:.1} s",
        if wide {
            " (shuffle2 of 16-element vectors)"
        } else {
            ""
        },
        ms(build),
        ms(create),
        ms(first),
        ms(second),
        build + create + first + second
    );
}

fn atomics() {
    let e = Env::new();
    let orders = [
        "memory_order_relaxed",
        "memory_order_acquire",
        "memory_order_release",
        "memory_order_acq_rel",
    ];
    let scopes = ["memory_scope_work_group", "memory_scope_device"];
    let n = 1024usize;
    for op in ["or", "and", "xor", "max"] {
        let (mut build, mut run, mut programs) = (0.0, 0.0, 0);
        for order in orders {
            for scope in scopes {
                for local in [false, true] {
                    let body = if local {
                        format!(
                            "local atomic_uint l[32]; uint tid = get_local_id(0);
                             if (tid < 32) atomic_store_explicit(&l[tid], 0u, memory_order_relaxed, memory_scope_work_group);
                             barrier(CLK_LOCAL_MEM_FENCE);
                             old[tid] = atomic_fetch_{op}_explicit(&l[tid / 32], 1u << (tid % 32), {order}, {scope});
                             barrier(CLK_LOCAL_MEM_FENCE);
                             if (tid < 32) dest[tid] = atomic_load_explicit(&l[tid], memory_order_relaxed, memory_scope_work_group);"
                        )
                    } else {
                        format!(
                            "uint tid = get_global_id(0);
                             old[tid] = atomic_fetch_{op}_explicit((volatile global atomic_uint *)&dest[tid / 32], 1u << (tid % 32), {order}, {scope});"
                        )
                    };
                    let code = format!(
                        "kernel void test_atomic_kernel(global uint *dest, global uint *old) {{ {body} }}"
                    );
                    let t = Instant::now();
                    let p = e.program(&code, "-cl-std=CL3.0");
                    build += secs(t);
                    let k = kernel(p, "test_atomic_kernel");
                    let dest = e.buffer_from(&[0u32; 32]);
                    let old = e.buffer_from(&vec![0u32; n]);
                    arg(k, 0, &dest);
                    arg(k, 1, &old);
                    run += launch(&e, k, &[n], Some(&[n]));
                    for m in [dest, old] {
                        check!(clReleaseMemObject(m));
                    }
                    check!(clReleaseKernel(k));
                    check!(clReleaseProgram(p));
                    programs += 1;
                }
            }
        }
        println!(
            "atomic_fetch_{op}: {programs} programs (4 orders x 2 scopes x global/local; no seq_cst: not claimed), \
             1,024 work-items in one group: build {:.2} s, launches {:.3} s",
            build, run
        );
    }
}

fn dims() {
    let e = Env::new();
    let p = e.program(
        "kernel void sample_test(global uint *out) {
             size_t i = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
             out[i] = (uint)i;
         }",
        "",
    );
    let k = kernel(p, "sample_test");
    let words = 32usize << 20; // 128 MiB
    let mut err = 0;
    let out = unsafe { clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, words * 4, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    arg(k, 0, &out);
    let gws = [512usize, 512, 128];
    for lws in [
        [1usize, 1, 1],
        [8, 8, 1],
        [16, 4, 4],
        [64, 2, 2],
        [256, 1, 1],
        [4, 4, 16],
    ] {
        let t = launch(&e, k, &gws, Some(&lws));
        println!(
            "dims: global {gws:?} local {lws:?} ({} groups): {:.3} s",
            gws.iter().zip(&lws).map(|(g, l)| g / l).product::<usize>(),
            t
        );
    }
    let _ = null::<u8>();
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.is_empty();
    for (name, wide) in [("shuffle", false), ("shuffle16", true)] {
        if all || args.iter().any(|a| a == name) {
            let n = args
                .iter()
                .skip_while(|a| *a != name)
                .nth(1)
                .and_then(|n| n.parse().ok())
                .unwrap_or(100);
            shuffle(n, wide);
        }
    }
    if all || args.iter().any(|a| a == "atomics") {
        atomics();
    }
    if all || args.iter().any(|a| a == "dims") {
        dims();
    }
}
