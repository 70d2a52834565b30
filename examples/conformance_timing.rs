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
//!   128 MiB buffer, for several explicit local sizes; the first and second launch's times,
//!   the result checked.
#[path = "../tests/common/mod.rs"]
#[macro_use]
#[allow(unused_macros)]
mod common;
use common::*;
use std::ptr::{null, null_mut};
use std::time::Instant;

const CL_DEVICE_ADDRESS_BITS: cl_uint = 0x100D;
const CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: cl_uint = 0x1063;
const CL_DEVICE_ATOMIC_ORDER_RELAXED: cl_bitfield = 1 << 0;
const CL_DEVICE_ATOMIC_ORDER_ACQ_REL: cl_bitfield = 1 << 1;
const CL_DEVICE_ATOMIC_ORDER_SEQ_CST: cl_bitfield = 1 << 2;
const CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP: cl_bitfield = 1 << 4;
const CL_DEVICE_ATOMIC_SCOPE_DEVICE: cl_bitfield = 1 << 5;
const CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES: cl_bitfield = 1 << 6;

/// The conformance tests' element types and their sizes in bytes.
const CTS_TYPES: [(&str, usize); 11] = [
    ("char", 1),
    ("uchar", 1),
    ("short", 2),
    ("ushort", 2),
    ("int", 4),
    ("uint", 4),
    ("long", 8),
    ("ulong", 8),
    ("float", 4),
    ("half", 2),
    ("double", 8),
];

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

/// One atomic type of c11_atomics' fetch tests: its name, its size on the device (the pointer
/// types follow CL_DEVICE_ADDRESS_BITS) and whether `max` compares it signed.
struct AtomicTy {
    name: &'static str,
    bytes: usize,
    signed: bool,
}

/// The c11_atomics fetch shapes as the conformance test generates them (test_atomics.cpp and
/// common.h of OpenCL-CTS, rewritten here): for one operation and one type, every supported
/// memory order x scope, on `__local` and on `__global` memory, the atomics passed as an
/// argument or declared in the program (kernel-scope `__local` array; program-scope
/// `__global` array and a `finishedThreads` counter), used in the kernel, in a function taking
/// a named address space and in one taking a generic pointer: one program each, built, its
/// work-group size asked, launched over 1,024 work-items (one group; groups of 16 for
/// `memory_scope_device` on global memory), both buffers read back and checked, then (except
/// for program-scope globals) the start value rewritten and one work-item launched to check
/// the returned old value.
#[allow(clippy::too_many_arguments)]
fn c11_source(
    op: &str,
    ty: &AtomicTy,
    order_scope: &str,
    local: bool,
    declared: bool,
    function: Option<bool>,
    dest_items: usize,
    start: u64,
) -> String {
    let t = ty.name;
    let a = format!("atomic_{t}");
    let explicit = if order_scope.is_empty() {
        ""
    } else {
        "_explicit"
    };
    let mut s = String::new();
    if ty.bytes == 8 {
        s += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n\
              #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n";
    }
    if !local && declared {
        s += "__global volatile atomic_uint finishedThreads = ATOMIC_VAR_INIT(0);\n";
        let init = vec![format!("  ATOMIC_VAR_INIT({start})"); dest_items].join(",\n");
        s += &format!("__global volatile {a} destMemory[{dest_items}] = {{\n{init}\n}};\n\n");
    }
    let core = match op {
        "or" | "and" => format!(
            "  size_t numBits = sizeof({t}) * 8;\n  int whichResult = tid / numBits;\n  \
             int bitIndex = tid - (whichResult * numBits);\n\n  oldValues[tid] = \
             atomic_fetch_{op}{explicit}(&destMemory[whichResult], {}(({t})1 << bitIndex) \
             {order_scope});\n",
            if op == "and" { "~" } else { "" }
        ),
        "xor" => format!(
            "  int numBits = sizeof({t}) * 8;\n  int bitIndex = (numBits-1)*(tid+1)/threadCount;\
             \n\n  oldValues[tid] = atomic_fetch_xor{explicit}(&destMemory[0], (({t})1 << \
             bitIndex) {order_scope});\n"
        ),
        _ => format!(
            "  oldValues[tid] = atomic_fetch_max{explicit}(&destMemory[0], oldValues[tid] \
             {order_scope});\n"
        ),
    };
    if let Some(generic) = function {
        s +=
            &format!(
            "void test_atomic_function(uint tid, uint threadCount, uint numDestItems, volatile \
             {}{a} *destMemory, __global {t} *oldValues)\n{{\n{core}}}\n\n",
            if generic { "" } else if local { "__local " } else { "__global " }
        );
    }
    s += "__kernel void test_atomic_kernel(uint threadCount, uint numDestItems, ";
    if local {
        s += &format!(
            "__global {t} *finalDest, __global {t} *oldValues, volatile __local {a} *{}destMemory",
            if declared { "notUsed" } else { "" }
        );
    } else if declared {
        s += &format!("volatile __global {t} *finalDest, __global {t} *oldValues");
    } else {
        s += &format!("volatile __global {a} *destMemory, __global {t} *oldValues");
    }
    s += ")\n{\n";
    if local && declared {
        s += &format!("  __local volatile {a} destMemory[{dest_items}];\n");
    }
    s += "  uint  tid = get_global_id(0);\n\n";
    if local {
        s += "  if(get_local_id(0) == 0)\n    for(uint dstItemIdx = 0; dstItemIdx < numDestItems; \
              dstItemIdx++)\n      atomic_store_explicit(destMemory+dstItemIdx, \
              finalDest[dstItemIdx], memory_order_relaxed, memory_scope_work_group);\n  \
              barrier(CLK_LOCAL_MEM_FENCE);\n\n";
    }
    if function.is_some() {
        s += "  test_atomic_function(tid, threadCount, numDestItems, destMemory, oldValues);\n";
    } else {
        s += &core;
    }
    if local {
        s +=
            "  barrier(CLK_LOCAL_MEM_FENCE);\n  if(get_local_id(0) == 0)\n    for(uint dstItemIdx \
              = 0; dstItemIdx < numDestItems; dstItemIdx++)\n      finalDest[dstItemIdx] = \
              atomic_load_explicit(destMemory+dstItemIdx, memory_order_relaxed, \
              memory_scope_work_group);\n";
    } else if declared {
        s += "  if(atomic_fetch_add_explicit(&finishedThreads, 1u, memory_order_acq_rel, \
              memory_scope_device) == get_global_size(0)-1)\n    for(uint dstItemIdx = 0; \
              dstItemIdx < numDestItems; dstItemIdx++)\n      finalDest[dstItemIdx] = \
              atomic_load_explicit(destMemory+dstItemIdx, memory_order_relaxed, \
              memory_scope_device);\n";
    }
    s += "}\n";
    s
}

/// Values of `bytes` bytes as host bytes (little-endian).
fn to_bytes(v: &[u64], bytes: usize) -> Vec<u8> {
    v.iter()
        .flat_map(|x| x.to_le_bytes()[..bytes].to_vec())
        .collect()
}

fn from_bytes(b: &[u8], bytes: usize) -> Vec<u64> {
    b.chunks(bytes)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..bytes].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

fn sign_extend(v: u64, bytes: usize) -> i64 {
    let shift = 64 - 8 * bytes as u32;
    ((v << shift) as i64) >> shift
}

/// Where the time of one operation's conformance test goes (see `c11_source`); `types`
/// limits the types (all eight by default).
fn c11(op: &str, types: &[String]) {
    let e = Env::new();
    let mut bits: cl_uint = 0;
    check!(clGetDeviceInfo(
        e.dev,
        CL_DEVICE_ADDRESS_BITS,
        4,
        (&mut bits as *mut cl_uint).cast(),
        null_mut()
    ));
    let mut caps: cl_bitfield = 0;
    check!(clGetDeviceInfo(
        e.dev,
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
        8,
        (&mut caps as *mut cl_bitfield).cast(),
        null_mut()
    ));
    let ptr = bits as usize / 8;
    let all = [
        AtomicTy {
            name: "int",
            bytes: 4,
            signed: true,
        },
        AtomicTy {
            name: "uint",
            bytes: 4,
            signed: false,
        },
        AtomicTy {
            name: "long",
            bytes: 8,
            signed: true,
        },
        AtomicTy {
            name: "ulong",
            bytes: 8,
            signed: false,
        },
        AtomicTy {
            name: "intptr_t",
            bytes: ptr,
            signed: true,
        },
        AtomicTy {
            name: "uintptr_t",
            bytes: ptr,
            signed: false,
        },
        AtomicTy {
            name: "size_t",
            bytes: ptr,
            signed: false,
        },
        AtomicTy {
            name: "ptrdiff_t",
            bytes: ptr,
            signed: true,
        },
    ];
    // The orders and scopes the conformance test takes from the capabilities ("" is the
    // function without the argument: the seq_cst order, the device scope).
    let mut orders = vec![];
    if caps & CL_DEVICE_ATOMIC_ORDER_RELAXED != 0 {
        orders.push("memory_order_relaxed");
    }
    if caps & CL_DEVICE_ATOMIC_ORDER_ACQ_REL != 0 {
        orders.extend([
            "memory_order_acquire",
            "memory_order_release",
            "memory_order_acq_rel",
        ]);
    }
    if caps & CL_DEVICE_ATOMIC_ORDER_SEQ_CST != 0 {
        orders.extend(["", "memory_order_seq_cst"]);
    }
    let mut scopes = vec![];
    if caps & CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP != 0 {
        scopes.push("memory_scope_work_group");
    }
    if caps & CL_DEVICE_ATOMIC_SCOPE_DEVICE != 0 {
        scopes.extend(["", "memory_scope_device"]);
    }
    if caps & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES != 0 {
        scopes.extend(["memory_scope_all_devices", "memory_scope_all_svm_devices"]);
    }
    let threads = 1024usize;
    let (mut build, mut info, mut setup, mut run, mut old_check) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut programs, mut builds) = (0, 0);
    let total = Instant::now();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for ty in all
        .iter()
        .filter(|t| types.is_empty() || types.iter().any(|n| n == t.name))
    {
        let n = ty.bytes;
        let width = 8 * n;
        let mask = if n == 8 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let start = match op {
            "or" => 0,
            "and" => mask,
            "xor" => 0x2f08ab418ba0541u64 & mask,
            _ => {
                if ty.signed {
                    (1u64 << (width - 1)) & mask
                } else {
                    0
                }
            }
        };
        let dest_items = if op == "or" || op == "and" {
            threads.div_ceil(width)
        } else {
            1
        };
        for &order in &orders {
            for &scope in &scopes {
                if order.is_empty() && !scope.is_empty() {
                    continue;
                }
                let mut order_scope = String::new();
                for s in [order, scope] {
                    if !s.is_empty() {
                        order_scope += ", ";
                        order_scope += s;
                    }
                }
                for local in [true, false] {
                    if local && !scope.is_empty() && scope != "memory_scope_work_group" {
                        continue;
                    }
                    for declared in [false, true] {
                        for function in [None, Some(false), Some(true)] {
                            let code = c11_source(
                                op,
                                ty,
                                &order_scope,
                                local,
                                declared,
                                function,
                                dest_items,
                                start,
                            );
                            let mut group = if scope == "memory_scope_device" && !local {
                                16
                            } else {
                                threads
                            };
                            // The conformance test halves the group and builds again while the
                            // kernel's work-group size is smaller.
                            let (p, k) = loop {
                                let t = Instant::now();
                                let p = e.program(&code, "-cl-std=CL3.0");
                                let tb = secs(t);
                                let k = kernel(p, "test_atomic_kernel");
                                build += secs(t);
                                if std::env::var_os("TIMING_EACH").is_some() {
                                    println!(
                                        "  build {:.1} ms, kernel {:.1} ms",
                                        1e3 * tb,
                                        1e3 * (secs(t) - tb)
                                    );
                                }
                                builds += 1;
                                let t = Instant::now();
                                let mut wg: usize = 0;
                                check!(clGetKernelWorkGroupInfo(
                                    k,
                                    e.dev,
                                    CL_KERNEL_WORK_GROUP_SIZE,
                                    8,
                                    (&mut wg as *mut usize).cast(),
                                    null_mut()
                                ));
                                if local {
                                    let mut used: cl_ulong = 0;
                                    check!(clGetKernelWorkGroupInfo(
                                        k,
                                        e.dev,
                                        CL_KERNEL_LOCAL_MEM_SIZE,
                                        8,
                                        (&mut used as *mut cl_ulong).cast(),
                                        null_mut()
                                    ));
                                }
                                info += secs(t);
                                if group <= wg || group == 1 {
                                    break (p, k);
                                }
                                group /= 2;
                                check!(clReleaseKernel(k));
                                check!(clReleaseProgram(p));
                            };
                            let groups = if local || scope == "memory_scope_work_group" {
                                1
                            } else {
                                threads / group
                            };
                            let count = group * groups;
                            let t = Instant::now();
                            let refs: Vec<u64> = (0..count)
                                .map(|_| {
                                    rng ^= rng << 13;
                                    rng ^= rng >> 7;
                                    rng ^= rng << 17;
                                    let r = rng & 0xffff_ffff;
                                    if n == 8 {
                                        r | ((rng >> 32) << 16)
                                    } else {
                                        r
                                    }
                                })
                                .collect();
                            let dest = e.buffer_from(&to_bytes(&vec![start; dest_items], n));
                            let old = if op == "max" {
                                e.buffer_from(&to_bytes(&refs, n))
                            } else {
                                e.buffer(CL_MEM_READ_WRITE, count * n, null_mut())
                            };
                            let (tc, nd) = (count as cl_uint, dest_items as cl_uint);
                            arg(k, 0, &tc);
                            arg(k, 1, &nd);
                            arg(k, 2, &dest);
                            arg(k, 3, &old);
                            if local {
                                arg_local(k, 4, n * dest_items);
                            }
                            setup += secs(t);
                            let t = Instant::now();
                            check!(clEnqueueNDRangeKernel(
                                e.queue,
                                k,
                                1,
                                null(),
                                &count,
                                &group,
                                0,
                                null(),
                                null_mut()
                            ));
                            let t1 = Instant::now();
                            check!(clFlush(e.queue));
                            let t2 = Instant::now();
                            let got = from_bytes(&e.read::<u8>(dest, dest_items * n), n);
                            let t3 = Instant::now();
                            let olds = from_bytes(&e.read::<u8>(old, count * n), n);
                            run += secs(t);
                            if std::env::var_os("TIMING_EACH").is_some() {
                                println!(
                                    "  enqueue {:.2} ms, flush {:.2} ms, read {:.2} ms, read {:.2} ms",
                                    1e3 * (t1 - t).as_secs_f64(),
                                    1e3 * (t2 - t1).as_secs_f64(),
                                    1e3 * (t3 - t2).as_secs_f64(),
                                    1e3 * t3.elapsed().as_secs_f64()
                                );
                            }
                            let expected: Vec<u64> = match op {
                                "or" | "and" => (0..dest_items)
                                    .map(|d| {
                                        let k = (count - d * width).min(width);
                                        let m = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
                                        if op == "or" {
                                            start | m
                                        } else {
                                            start & !m & mask
                                        }
                                    })
                                    .collect(),
                                "xor" => vec![(0..count).fold(start, |v, i| {
                                    v ^ (1u64 << ((width - 1) * (i + 1) / count))
                                })],
                                _ => vec![refs.iter().fold(start, |m, &r| {
                                    let bigger = if ty.signed {
                                        sign_extend(r, n) > sign_extend(m, n)
                                    } else {
                                        r > m
                                    };
                                    if bigger {
                                        r
                                    } else {
                                        m
                                    }
                                })],
                            };
                            assert_eq!(got, expected, "{op} {} {order_scope} local {local} declared {declared} function {function:?}\n{code}", ty.name);
                            // Every old value is a value of the type.
                            assert!(olds.iter().all(|&o| o & !mask == 0));
                            if !declared || local {
                                let t = Instant::now();
                                e.write(dest, &to_bytes(&vec![start; dest_items], n));
                                let one = 1usize;
                                check!(clEnqueueNDRangeKernel(
                                    e.queue,
                                    k,
                                    1,
                                    null(),
                                    &one,
                                    &one,
                                    0,
                                    null(),
                                    null_mut()
                                ));
                                let first = from_bytes(&e.read::<u8>(old, n), n)[0];
                                old_check += secs(t);
                                assert_eq!(first, start, "old value of {op} {}", ty.name);
                            }
                            for m in [dest, old] {
                                check!(clReleaseMemObject(m));
                            }
                            check!(clReleaseKernel(k));
                            check!(clReleaseProgram(p));
                            programs += 1;
                        }
                    }
                }
            }
        }
    }
    println!(
        "c11 atomic_fetch_{op}: {programs} programs ({builds} builds), {:.1} s: build + \
         create kernel {:.2} s ({:.1} ms each), work-group info {:.3} s, buffers + arguments \
         {:.3} s, launch + reads {:.2} s ({:.1} ms each), old-value launch {:.2} s",
        secs(total),
        build,
        1e3 * build / builds as f64,
        info,
        setup,
        run,
        1e3 * run / programs as f64,
        old_check
    );
}

/// One program of relationals' shuffle tests as the conformance test generates them
/// (test_shuffles.cpp of OpenCL-CTS, rewritten here): 32 swizzle copies of `ty` vectors of
/// `inn` to `out` components in one kernel that work-item 0 runs (`mode` copy, function:
/// through a function returning its argument, builtin: `shuffle`, dual: `shuffle2`).
/// Returns the source and, per copy, the (source component, destination component) pairs
/// (component indices above `inn` name the second source).
fn cts_shuffle_source(
    mode: &str,
    ty: &str,
    inn: usize,
    out: usize,
    rng: &mut u64,
) -> (String, Vec<Vec<(usize, usize)>>) {
    let mut next = |n: usize| {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        (*rng % n as u64) as usize
    };
    let sz = |n: usize| if n == 1 { String::new() } else { n.to_string() };
    let (ins, outs) = (sz(inn), sz(out));
    let in_arg = if inn == 3 { String::new() } else { ins.clone() };
    let out_arg = if out == 3 {
        String::new()
    } else {
        outs.clone()
    };
    let builtin = mode == "builtin" || mode == "dual";
    let mut s = String::new();
    if ty == "double" {
        s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    }
    if mode == "function" {
        s += &format!("{ty}{ins} shuffle_fn({ty}{ins} source);\n{ty}{ins} shuffle_fn({ty}{ins} source) {{ return source; }}\n\n");
    }
    let second = if mode == "dual" {
        format!("__global {ty}{in_arg} *secondSource, ")
    } else {
        String::new()
    };
    // SHUFFLE_NO_GUARD: without the test's `if (get_global_id(0) != 0) return;` (every
    // work-item then writes the same values), to see what the guard costs lavapipe's compile.
    let guard = match std::env::var_os("SHUFFLE_NO_GUARD") {
        Some(_) => "",
        None => "    if (get_global_id(0) != 0) return;\n",
    };
    s += &format!(
        "__kernel void sample_test({second}__global {ty}{in_arg} *source, __global {ty}{out_arg} *dest)\n{{\n{guard}  {ty}{outs} tmp;\n"
    );
    let names = |order: &[usize], rng_case: usize| -> String {
        if order.iter().all(|&o| o < 4) && rng_case % 2 == 0 {
            order.iter().map(|&o| b"xyzw"[o] as char).collect()
        } else {
            let digits = b"0123456789abcdef";
            let mut n = String::from(if rng_case % 3 == 0 { "S" } else { "s" });
            for (k, &o) in order.iter().enumerate() {
                let c = digits[o] as char;
                n.push(if (rng_case >> k) & 1 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c
                });
            }
            n
        }
    };
    let mut pairs = vec![];
    let max = inn.min(out);
    for i in 0..32usize {
        if builtin {
            let range = if mode == "dual" { 2 * inn } else { inn };
            let mask: Vec<usize> = (0..out).map(|_| next(range)).collect();
            let mty = match ty {
                "float" => "uint".to_string(),
                "double" => "ulong".to_string(),
                t if t.starts_with('u') => t.to_string(),
                t => format!("u{t}"),
            };
            let list: Vec<String> = mask.iter().map(|m| m.to_string()).collect();
            let src2 = if mode == "dual" {
                format!("            {ty}{ins} src2 = secondSource[ {i} ];\n")
            } else {
                String::new()
            };
            let call = if mode == "dual" {
                "shuffle2( src1, src2, mask )"
            } else {
                "shuffle( src1, mask )"
            };
            s += &format!(
                "        tmp = ({ty}{outs})(({ty})0);\n        {{\n            {ty}{ins} src1 = source[ {i} ];\n{src2}            {mty}{outs} mask = ({mty}{outs})( {} );\n            tmp = {call};\n            dest[ {i} ] = tmp;\n        }}\n",
                list.join(", ")
            );
            pairs.push(mask.iter().enumerate().map(|(k, &m)| (m, k)).collect());
            continue;
        }
        let len = {
            let l = (i as f64 / 32.0 * max as f64) as usize + 1;
            match l {
                1 => 1,
                2..=3 => 2,
                4..=7 => 4,
                8..=15 => 8,
                _ => 16,
            }
        };
        let src_order: Vec<usize> = (0..len).map(|_| next(inn)).collect();
        let mut dst_order: Vec<usize> = vec![];
        while dst_order.len() < len {
            let d = next(out);
            if !dst_order.contains(&d) {
                dst_order.push(d);
            }
        }
        let case = next(1 << 20);
        let out_sw = if out > 1 {
            format!(".{}", names(&dst_order, case))
        } else {
            String::new()
        };
        let in_sw = if inn > 1 {
            format!(".{}", names(&src_order, case >> 3))
        } else {
            String::new()
        };
        let load = match (inn == 3, mode == "function") {
            (true, true) => format!("shuffle_fn( vload3({i}, source) )"),
            (true, false) => format!("vload3({i}, source)"),
            (false, true) => format!("shuffle_fn( source[{i}] )"),
            (false, false) => format!("source[{i}]"),
        };
        let store = if out == 3 {
            format!("vstore3(tmp, {i}, dest);")
        } else {
            format!("dest[{i}] = tmp;")
        };
        s += &format!(
            "        tmp = ({ty}{outs})(({ty})0);\n        tmp{out_sw} = {load}{in_sw};\n        {store}\n"
        );
        pairs.push(src_order.into_iter().zip(dst_order).collect());
    }
    s += "}\n";
    (s, pairs)
}

/// relationals' shuffle tests (`mode`: copy, function, builtin, dual) over the ten types and
/// the sizes 1, 2, 3, 4, 8, 16 each way (even sizes only for the built-ins): two programs of
/// 32 copies per pair of sizes, each built, launched over 32 work-items and checked.
fn cts_shuffles(mode: &str, types: &[String]) {
    let e = Env::new();
    let sizes = [1usize, 2, 3, 4, 8, 16];
    let builtin = mode == "builtin" || mode == "dual";
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let (mut build, mut first, mut again, mut programs) = (0.0, 0.0, 0.0, 0usize);
    let (mut slowest_build, mut slowest_first) = ((0.0, String::new()), (0.0, String::new()));
    let total = Instant::now();
    // The relationals tests have no half.
    for (ty, ts) in CTS_TYPES
        .iter()
        .filter(|t| t.0 != "half")
        .filter(|t| types.is_empty() || types.iter().any(|n| n == t.0))
    {
        for &inn in &sizes {
            for &out in &sizes {
                if builtin && (inn % 2 == 1 || out % 2 == 1) {
                    continue;
                }
                // SHUFFLE_SIZES=IN,OUT: that pair of sizes only.
                if let Ok(only) = std::env::var("SHUFFLE_SIZES") {
                    if only != format!("{inn},{out}") {
                        continue;
                    }
                }
                for _ in 0..2 {
                    let (src, pairs) = cts_shuffle_source(mode, ty, inn, out, &mut rng);
                    let t = Instant::now();
                    let p = e.program(&src, "");
                    let k = kernel(p, "sample_test");
                    let b = secs(t);
                    build += b;
                    let what = format!("{ty}{inn} -> {ty}{out}");
                    if b > slowest_build.0 {
                        slowest_build = (b, what.clone());
                    }
                    // Element bytes, floating-point ones kept finite and normal.
                    let mut data = |n: usize| -> Vec<u8> {
                        let mut v = vec![0u8; n * ts];
                        for (j, b) in v.iter_mut().enumerate() {
                            rng ^= rng << 13;
                            rng ^= rng >> 7;
                            rng ^= rng << 17;
                            *b = rng as u8;
                            if (*ty == "float" || *ty == "double") && j % ts == ts - 1 {
                                *b = (*b & !0x40) | 0x20;
                            }
                        }
                        v
                    };
                    let a = data(32 * inn);
                    let a2 = data(32 * inn);
                    let src_buf = e.buffer_from(&a);
                    let src2_buf = e.buffer_from(&a2);
                    let dst_buf = e.buffer_from(&vec![0u8; 32 * out * ts]);
                    let mut i = 0;
                    if mode == "dual" {
                        arg(k, 0, &src2_buf);
                        i = 1;
                    }
                    arg(k, i, &src_buf);
                    arg(k, i + 1, &dst_buf);
                    let t = Instant::now();
                    let n = 32usize;
                    check!(clEnqueueNDRangeKernel(
                        e.queue,
                        k,
                        1,
                        null(),
                        &n,
                        &n,
                        0,
                        null(),
                        null_mut()
                    ));
                    let got: Vec<u8> = e.read(dst_buf, 32 * out * ts);
                    let f = secs(t);
                    first += f;
                    if f > slowest_first.0 {
                        slowest_first = (f, what.clone());
                    }
                    // The same launch again: what the first one spent beyond it was lavapipe
                    // compiling the shader (at its first dispatch, not at pipeline creation).
                    let t = Instant::now();
                    check!(clEnqueueNDRangeKernel(
                        e.queue,
                        k,
                        1,
                        null(),
                        &n,
                        &n,
                        0,
                        null(),
                        null_mut()
                    ));
                    check!(clFinish(e.queue));
                    again += secs(t);
                    for (c, pairs) in pairs.iter().enumerate() {
                        let mut want = vec![0u8; out * ts];
                        for &(from, to) in pairs {
                            let (v, from) = if mode == "dual" && from >= inn {
                                (&a2, from - inn)
                            } else {
                                (&a, from)
                            };
                            let at = (c * inn + from) * ts;
                            want[to * ts..(to + 1) * ts].copy_from_slice(&v[at..at + ts]);
                        }
                        assert_eq!(
                            &got[c * out * ts..(c + 1) * out * ts],
                            &want[..],
                            "{mode} {what}, copy {c}\n{src}"
                        );
                    }
                    for m in [src_buf, src2_buf, dst_buf] {
                        check!(clReleaseMemObject(m));
                    }
                    check!(clReleaseKernel(k));
                    check!(clReleaseProgram(p));
                    programs += 1;
                }
            }
        }
    }
    println!(
        "cts shuffle {mode}: {programs} programs, {:.1} s: build + create kernel {:.2} s ({:.1} ms \
         each, slowest {:.0} ms: {}), launch + read {:.2} s ({:.1} ms each, slowest {:.0} ms: {}), \
         second launch {:.1} ms each",
        secs(total),
        build,
        1e3 * build / programs as f64,
        1e3 * slowest_build.0,
        slowest_build.1,
        first,
        1e3 * first / programs as f64,
        1e3 * slowest_first.0,
        slowest_first.1,
        1e3 * again / programs as f64
    );
}

/// thread_dimensions' quick 3D explicit-local test (OpenCL-CTS test_thread_dimensions.cpp,
/// rewritten here): global sizes 1, 32 and 1,024 in each dimension and each minus one, the
/// local size 1,024 (or the largest divisor of the size below it) in the largest dimension,
/// the kernel counting each work-item into a 128 MiB window of its linear id with `atom_add`
/// and launched once per window. Runs the launches of up to `max_items` work-items each,
/// checked, and reports the time per work-item and the work-items of all the test's launches.
fn cts_dims(max_items: u64) {
    let e = Env::new();
    let src = "#pragma OPENCL EXTENSION cl_khr_global_int32_base_atomics : enable\n\
        __kernel void test_thread_dimension_atomic(__global uint *dst, uint final_x_size, \
        uint final_y_size, uint final_z_size, ulong start_address, ulong end_address)\n{\n\
        uint error = 0;\n\
        if (get_global_id(0) >= final_x_size) error = 64;\n\
        if (get_global_id(1) >= final_y_size) error = 128;\n\
        if (get_global_id(2) >= final_z_size) error = 256;\n\
        unsigned long t_address = (unsigned long)get_global_id(2)*(unsigned long)final_y_size*\
        (unsigned long)final_x_size + (unsigned long)get_global_id(1)*(unsigned long)final_x_size \
        + (unsigned long)get_global_id(0);\n\
        if ((t_address >= start_address) && (t_address < end_address))\n\
            atom_add(&dst[t_address-start_address], 1u);\n\
        if (error) atom_or(&dst[t_address-start_address], error);\n}\n";
    let p = e.program(src, "");
    let k = kernel(p, "test_thread_dimension_atomic");
    let window = 32u64 << 20; // words: 128 MiB
    let mut err = 0;
    let buf = unsafe {
        clCreateBuffer(
            e.ctx,
            CL_MEM_READ_WRITE,
            (window * 4) as usize,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let (mut total_items, mut total_launches) = (0u64, 0u64);
    let (mut run_items, mut run_secs) = (0u64, 0.0);
    let bases = [1u64, 32, 1024];
    for z in bases {
        for y in bases {
            for x in bases {
                for minus in [0, 1] {
                    let g = [x, y, z].map(|v| (v - minus).max(1));
                    let big = if g[2] > g[1] && g[2] > g[0] {
                        2
                    } else if g[1] > g[0] {
                        1
                    } else {
                        0
                    };
                    let mut l = [1u64; 3];
                    l[big] = 1024;
                    while l[big] > 1 && g[big] % l[big] != 0 {
                        l[big] -= 1;
                    }
                    let items = g[0] * g[1] * g[2];
                    let windows = items.div_ceil(window);
                    total_items += items * windows;
                    total_launches += windows;
                    if items > max_items {
                        continue;
                    }
                    let gws = g.map(|v| v as usize);
                    let lws = l.map(|v| v as usize);
                    let (fx, fy, fz) = (g[0] as cl_uint, g[1] as cl_uint, g[2] as cl_uint);
                    arg(k, 0, &buf);
                    arg(k, 1, &fx);
                    arg(k, 2, &fy);
                    arg(k, 3, &fz);
                    let mut start = 0u64;
                    while start < items {
                        let end = (start + window).min(items);
                        let zero = 0u32;
                        check!(clEnqueueFillBuffer(
                            e.queue,
                            buf,
                            (&zero as *const u32).cast(),
                            4,
                            0,
                            (window * 4) as usize,
                            0,
                            null(),
                            null_mut()
                        ));
                        arg(k, 4, &start);
                        arg(k, 5, &end);
                        let t = Instant::now();
                        check!(clEnqueueNDRangeKernel(
                            e.queue,
                            k,
                            3,
                            null(),
                            gws.as_ptr(),
                            lws.as_ptr(),
                            0,
                            null(),
                            null_mut()
                        ));
                        check!(clFinish(e.queue));
                        let s = secs(t);
                        run_secs += s;
                        run_items += items;
                        let got: Vec<u32> = e.read(buf, (end - start) as usize);
                        assert!(got.iter().all(|&v| v == 1), "global {g:?} local {l:?}");
                        if s > 0.5 {
                            println!("  global {g:?} local {l:?}, window at {start}: {s:.2} s");
                        }
                        start = end;
                    }
                }
            }
        }
    }
    let ns = 1e9 * run_secs / run_items as f64;
    println!(
        "cts dims (quick 3D): launches of up to {max_items} work-items: {run_items} work-items in \
         {run_secs:.1} s, {ns:.1} ns per work-item; the whole test launches {total_launches} \
         times, {:.2e} work-items: {:.0} s at that rate",
        total_items as f64,
        ns * total_items as f64 / 1e9
    );
    check!(clReleaseMemObject(buf));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
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
        [2, 1, 1],
        [1, 4, 1],
        [4, 4, 2],
        [8, 8, 1],
        [16, 4, 4],
        [64, 2, 2],
        [256, 1, 1],
        [4, 4, 16],
    ] {
        let zero = 0u32;
        check!(clEnqueueFillBuffer(
            e.queue,
            out,
            (&zero as *const u32).cast(),
            4,
            0,
            words * 4,
            0,
            null(),
            null_mut()
        ));
        // The first launch includes the pipeline's creation and lavapipe's compile.
        let first = launch(&e, k, &gws, Some(&lws));
        let again = launch(&e, k, &gws, Some(&lws));
        let got: Vec<u32> = e.read(out, words);
        let wrong = got
            .iter()
            .enumerate()
            .filter(|&(i, &v)| v != i as u32)
            .count();
        assert_eq!(wrong, 0, "dims: local {lws:?}: {wrong} words wrong");
        println!(
            "dims: global {gws:?} local {lws:?} ({} groups): {first:.3} s, again {again:.3} s",
            gws.iter().zip(&lws).map(|(g, l)| g / l).product::<usize>(),
        );
    }
    let _ = null::<u8>();
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// basic's vector_creation (OpenCL-CTS test_vector_creation.cpp, rewritten here): for an
/// output of `n` components, every way of writing it as a sequence of parts of 1, 2, 3, 4, 8
/// or 16 components (at most `n`), in the order of their part sequences, each one line
/// `result[k] = (T n)(src[o], vloadP(0, src + o), ...)` of a kernel that one work-item runs
/// (`vstore3` for n = 3); a kernel stops after 32 KiB of source and the next one goes on.
/// For 16 components the sequences start at (3, 3, 3, ...), as the test's do.
fn vector_creation_sources(ty: &str, n: usize) -> Vec<(String, usize)> {
    const PARTS: [usize; 6] = [1, 2, 3, 4, 8, 16];
    let parts = &PARTS[..PARTS.iter().position(|&p| p == n).unwrap() + 1];
    // Every composition of n into `parts`, in lexicographic order of part indices.
    fn compose(left: usize, parts: &[usize], seq: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if left == 0 {
            out.push(seq.clone());
            return;
        }
        for (i, &p) in parts.iter().enumerate() {
            if p <= left {
                seq.push(i);
                compose(left - p, parts, seq, out);
                seq.pop();
            }
        }
    }
    let mut all = vec![];
    compose(n, parts, &mut vec![], &mut all);
    if n == 16 {
        all.retain(|s| s.as_slice() >= &[2usize; 16][..]);
    }
    let suffix = |p: usize| if p == 1 { String::new() } else { p.to_string() };
    let head = |ty: &str| {
        let ext = match ty {
            "double" => "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
            "half" => "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
            _ => "",
        };
        let out = if n == 3 { String::new() } else { suffix(n) };
        format!("{ext}__kernel void test_vector_creation(__global {ty} *src, __global {ty}{out} *result) {{\n")
    };
    let mut kernels = vec![];
    let (mut src, mut lines) = (head(ty), 0);
    for seq in all {
        let mut offset = 0;
        let args: Vec<String> = seq
            .iter()
            .map(|&i| {
                let a = match parts[i] {
                    1 => format!("src[{offset}]"),
                    p => format!("vload{p}(0,src+{offset})"),
                };
                offset += parts[i];
                a
            })
            .collect();
        let value = format!("({ty}{n})({})", args.join(","));
        src += &match n {
            3 => format!("\tvstore3( {value}, {lines}, result );\n"),
            _ => format!("\tresult[{lines}] = {value};\n"),
        };
        lines += 1;
        if src.len() > 32 * 1024 {
            kernels.push((src + "}\n", lines));
            (src, lines) = (head(ty), 0);
        }
    }
    if lines > 0 {
        kernels.push((src + "}\n", lines));
    }
    kernels
}

/// vector_creation's kernels for the types named (all eleven by default) and the sizes 2 to
/// 16, one work-item each, checked (`src[i]` is i, so every line stores 0, 1, ..., n - 1):
/// build, first launch (lavapipe compiles the shader at its first dispatch) and second launch.
fn vector_creation(types: &[String]) {
    let e = Env::new();
    let total = Instant::now();
    for (ty, ts) in CTS_TYPES
        .iter()
        .filter(|t| types.is_empty() || types.iter().any(|n| n == t.0))
    {
        let value = |i: usize| -> Vec<u8> {
            let v: u64 = match *ty {
                "float" => (i as f32).to_bits() as u64,
                "double" => (i as f64).to_bits(),
                "half" => half_bits(i as f32) as u64,
                _ => i as u64,
            };
            v.to_le_bytes()[..*ts].to_vec()
        };
        let input: Vec<u8> = (0..16).flat_map(value).collect();
        let src_buf = e.buffer_from(&input);
        for n in [2usize, 3, 4, 8, 16] {
            let want: Vec<u8> = (0..n).flat_map(value).collect();
            for (source, lines) in vector_creation_sources(ty, n) {
                let t = Instant::now();
                let p = e.program(&source, "");
                let k = kernel(p, "test_vector_creation");
                let build = secs(t);
                let bytes = lines * n * ts;
                let out = e.buffer_from(&vec![0xffu8; bytes]);
                arg(k, 0, &src_buf);
                arg(k, 1, &out);
                let first = launch(&e, k, &[1], None);
                let second = launch(&e, k, &[1], None);
                let got: Vec<u8> = e.read(out, bytes);
                for (line, got) in got.chunks(n * ts).enumerate() {
                    assert_eq!(got, &want[..], "{ty}{n}, line {line}");
                }
                println!(
                    "vector_creation {ty}{n}: {lines} lines, {} bytes of source: build {:.0} ms, \
                     first launch {:.0} ms, second {:.1} ms",
                    source.len(),
                    1e3 * build,
                    1e3 * first,
                    1e3 * second
                );
                check!(clReleaseMemObject(out));
                check!(clReleaseKernel(k));
                check!(clReleaseProgram(p));
            }
        }
        check!(clReleaseMemObject(src_buf));
    }
    println!("vector_creation: {:.1} s", secs(total));
}

/// The half nearest `f` (exact for the small integers vector_creation uses).
fn half_bits(f: f32) -> u16 {
    if f == 0.0 {
        return 0;
    }
    let b = f.to_bits();
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    ((exp as u16) << 10) | ((b >> 13) & 0x3ff) as u16
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
    if let Some(i) = args.iter().position(|a| a == "c11") {
        // c11 OP [TYPE...]: one operation of c11_atomics (or, and, xor, max), all types or
        // those named.
        let op = args.get(i + 1).map_or("or", |s| s.as_str());
        c11(op, &args[(i + 2).min(args.len())..]);
    }
    if let Some(i) = args.iter().position(|a| a == "cts_shuffle") {
        // cts_shuffle MODE [TYPE...]: relationals' shuffle_copy (copy), shuffle_function_call
        // (function), shuffle_built_in (builtin), shuffle_built_in_dual_input (dual).
        let mode = args.get(i + 1).map_or("copy", |s| s.as_str());
        cts_shuffles(mode, &args[(i + 2).min(args.len())..]);
    }
    if let Some(i) = args.iter().position(|a| a == "cts_dims") {
        // cts_dims [MAX_ITEMS]: thread_dimensions' quick 3D explicit-local launches of up to
        // MAX_ITEMS work-items (default 2^25), and the projected time of all of them.
        let max = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1 << 25);
        cts_dims(max);
    }
    if let Some(i) = args.iter().position(|a| a == "vector_creation") {
        // vector_creation [TYPE...]: basic's vector_creation kernels, all types or those named.
        vector_creation(&args[i + 1..]);
    }
    if all || args.iter().any(|a| a == "dims") {
        dims();
    }
}
