//! cl_khr_int64_base_atomics and cl_khr_int64_extended_atomics: every `atom_*` function on
//! `long` and `ulong` in global and local memory, from many work-items at once, against the
//! host's arithmetic; the extension macros defined where the extensions are listed.
#[macro_use]
mod common;
use common::*;

const SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#if !defined(cl_khr_int64_base_atomics) || !defined(cl_khr_int64_extended_atomics)
#error the int64 atomics macros are not defined
#endif
#define BIG(i) (((T)(i) << 33) | (T)(i))

/* r[0..10]: add, sub, xchg (any id), inc, dec, cmpxchg (one winner), min, max, and, or, xor. */
#define ALL(r, i) \
    atom_add(&r[0], BIG(i)); \
    atom_sub(&r[1], BIG(i)); \
    atom_xchg(&r[2], BIG(i + 1)); \
    atom_inc(&r[3]); \
    atom_dec(&r[4]); \
    atom_cmpxchg(&r[5], (T)0, BIG(i + 1)); \
    atom_min(&r[6], BIG(i) - (T)(1L << 40)); \
    atom_max(&r[7], BIG(i)); \
    atom_and(&r[8], ~((T)1 << (i % 64))); \
    atom_or(&r[9], (T)1 << (i % 64)); \
    atom_xor(&r[10], BIG(i));

__kernel void global_ops(__global T *r) {
    int i = get_global_id(0);
    ALL(r, i)
}

__kernel void local_ops(__global T *r) {
    __local T l[11];
    int i = get_global_id(0);
    if (get_local_id(0) == 0)
        for (int j = 0; j < 11; j++)
            l[j] = r[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    ALL(l, i)
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        for (int j = 0; j < 11; j++)
            r[j] = l[j];
}
"#;

const N: u64 = 256;

fn initial() -> [u64; 11] {
    [
        5,
        1 << 50,
        0,
        7,
        1 << 40,
        0,
        i64::MAX as u64,
        0,
        u64::MAX,
        0,
        0x5555,
    ]
}

/// The final values for `n` items 0..n starting from `initial()`; `signed` for long's min/max.
/// xchg and cmpxchg leave one of the items' values: checked separately.
fn expected(signed: bool) -> [u64; 11] {
    let big = |i: u64| (i << 33) | i;
    let mut r = initial();
    for i in 0..N {
        r[0] = r[0].wrapping_add(big(i));
        r[1] = r[1].wrapping_sub(big(i));
        r[3] = r[3].wrapping_add(1);
        r[4] = r[4].wrapping_sub(1);
        let m = big(i).wrapping_sub(1 << 40);
        r[6] = if signed {
            (r[6] as i64).min(m as i64) as u64
        } else {
            r[6].min(m)
        };
        r[7] = if signed {
            (r[7] as i64).max(big(i) as i64) as u64
        } else {
            r[7].max(big(i))
        };
        r[8] &= !(1u64 << (i % 64));
        r[9] |= 1u64 << (i % 64);
        r[10] ^= big(i);
    }
    r
}

#[test]
fn every_atom_function_on_64_bit_integers() {
    let e = Env::new();
    let ext = device_str(e.dev, CL_DEVICE_EXTENSIONS);
    let listed = ["cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"]
        .map(|x| ext.split_whitespace().any(|w| w == x));
    assert_eq!(listed[0], listed[1], "vkcl lists both or neither: {ext}");
    if !listed[0] {
        eprintln!("no 64-bit atomics on this device: nothing to test");
        return;
    }
    for (ty, signed) in [("long", true), ("ulong", false)] {
        let p = e.program(SOURCE, &format!("-DT={ty}"));
        for name in ["global_ops", "local_ops"] {
            let k = kernel(p, name);
            let r = e.buffer_from(&initial());
            arg(k, 0, &r);
            // One work-group for the local form (its atomics are the group's).
            e.run(k, None, &[N as usize], Some(&[N as usize]));
            let got = e.read::<u64>(r, 11);
            let want = expected(signed);
            for j in [0, 1, 3, 4, 6, 7, 8, 9, 10] {
                assert_eq!(got[j], want[j], "{ty} {name}: result {j}");
            }
            let ids = |v: u64| v & 0xffff_ffff == v >> 33 && (1..=N).contains(&(v >> 33));
            assert!(ids(got[2]), "{ty} {name}: xchg left {:#x}", got[2]);
            assert!(ids(got[5]), "{ty} {name}: cmpxchg left {:#x}", got[5]);
            check!(clReleaseMemObject(r));
            check!(clReleaseKernel(k));
        }
        check!(clReleaseProgram(p));
    }
}

/// The C11 atomics on `atomic_long`/`atomic_ulong` (OpenCL C 2.0 and 3.0 with the int64
/// atomics extensions): every function, the plain forms (OpenCL C 2.0: seq_cst, device scope)
/// and the `_explicit` ones, in global and local memory, every work-item on the same objects.
const C11_SOURCE: &str = r#"
#define BIG(i) (((V)(i) << 33) | (V)(i))
#ifdef PLAIN
#define LOAD(p) atomic_load(p)
#define STORE(p, v) atomic_store(p, v)
#define XCHG(p, v) atomic_exchange(p, v)
#define CAS(p, e, v) atomic_compare_exchange_strong(p, e, v)
#define CASW(p, e, v) atomic_compare_exchange_weak(p, e, v)
#define OP(op, p, v) atomic_fetch_##op(p, v)
#else
#define ORD memory_order_relaxed
#define LOAD(p) atomic_load_explicit(p, memory_order_acquire, memory_scope_work_group)
#define STORE(p, v) atomic_store_explicit(p, v, memory_order_release)
#define XCHG(p, v) atomic_exchange_explicit(p, v, memory_order_acq_rel, memory_scope_device)
#define CAS(p, e, v) atomic_compare_exchange_strong_explicit(p, e, v, \
    memory_order_acq_rel, memory_order_acquire, memory_scope_work_group)
#define CASW(p, e, v) atomic_compare_exchange_weak_explicit(p, e, v, ORD, ORD)
#define OP(op, p, v) atomic_fetch_##op##_explicit(p, v, ORD, memory_scope_device)
#endif

/* r[0..12]: add, sub, exchange, strong CAS (one winner), weak-CAS add loop, min, max, and,
   or, xor, store, strong-CAS winners, ticket counter; o[i]: item i's ticket. */
#define ALL(r, i, o) { \
    OP(add, &r[0], BIG(i)); \
    OP(sub, &r[1], BIG(i)); \
    XCHG(&r[2], BIG(i + 1)); \
    V e = 0; \
    if (CAS(&r[3], &e, BIG(i + 1))) OP(add, &r[11], (V)1); \
    else if (e == 0) OP(add, &r[11], (V)1000); \
    V old = LOAD(&r[4]); \
    while (!CASW(&r[4], &old, old + BIG(i))) {} \
    OP(min, &r[5], BIG(i) - (V)(1L << 40)); \
    OP(max, &r[6], BIG(i)); \
    OP(and, &r[7], ~((V)1 << (i % 64))); \
    OP(or, &r[8], (V)1 << (i % 64)); \
    OP(xor, &r[9], BIG(i)); \
    STORE(&r[10], BIG(i + 1)); \
    o[i] = OP(add, &r[12], (V)1); }

__kernel void global_ops(__global A *r, __global V *o) {
    int i = get_global_id(0);
    ALL(r, i, o)
}

__kernel void local_ops(__global V *r, __global V *o) {
    __local A l[13];
    int i = get_global_id(0);
    if (get_local_id(0) == 0)
        for (int j = 0; j < 13; j++)
            atomic_store_explicit(&l[j], r[j], memory_order_relaxed);
    barrier(CLK_LOCAL_MEM_FENCE);
    ALL(l, i, o)
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        for (int j = 0; j < 13; j++)
            r[j] = atomic_load_explicit(&l[j], memory_order_relaxed);
}
"#;

fn c11_initial() -> [u64; 13] {
    let a = initial();
    [
        a[0], a[1], a[2], 0, 3, a[6], a[7], a[8], a[9], a[10], 0, 0, 0,
    ]
}

/// The host's model of C11_SOURCE over items 0..N (exchange, store and CAS checked apart).
fn c11_expected(signed: bool) -> [u64; 13] {
    let big = |i: u64| (i << 33) | i;
    let a = expected(signed);
    let mut r = c11_initial();
    for i in 0..N {
        r[4] = r[4].wrapping_add(big(i));
    }
    [
        a[0], a[1], 0, 0, r[4], a[6], a[7], a[8], a[9], a[10], 0, 1, N,
    ]
}

#[test]
fn c11_atomics_on_64_bit_integers() {
    let e = Env::new();
    let ext = device_str(e.dev, CL_DEVICE_EXTENSIONS);
    if !ext
        .split_whitespace()
        .any(|w| w == "cl_khr_int64_base_atomics")
    {
        eprintln!("no 64-bit atomics on this device: nothing to test");
        return;
    }
    let forms = [
        ("-cl-std=CL2.0 -DPLAIN", "plain, CL2.0"),
        ("-cl-std=CL2.0", "explicit, CL2.0"),
        ("-cl-std=CL3.0", "explicit, CL3.0"),
    ];
    for (opts, form) in forms {
        for (a, v, signed) in [
            ("atomic_long", "long", true),
            ("atomic_ulong", "ulong", false),
        ] {
            let p = e.program(C11_SOURCE, &format!("{opts} -DA={a} -DV={v}"));
            for name in ["global_ops", "local_ops"] {
                let what = format!("{v} {name} ({form})");
                let k = kernel(p, name);
                let r = e.buffer_from(&c11_initial());
                let o = e.buffer_from(&[0u64; N as usize]);
                arg(k, 0, &r);
                arg(k, 1, &o);
                e.run(k, None, &[N as usize], Some(&[N as usize]));
                let got = e.read::<u64>(r, 13);
                let want = c11_expected(signed);
                for j in [0, 1, 4, 5, 6, 7, 8, 9, 11, 12] {
                    assert_eq!(got[j], want[j], "{what}: result {j}");
                }
                let ids = |v: u64| v & 0xffff_ffff == v >> 33 && (1..=N).contains(&(v >> 33));
                for j in [2, 3, 10] {
                    assert!(ids(got[j]), "{what}: result {j} is {:#x}", got[j]);
                }
                let mut tickets = e.read::<u64>(o, N as usize);
                tickets.sort();
                assert!(
                    tickets.iter().copied().eq(0..N),
                    "{what}: fetch_add returned {tickets:?}"
                );
                check!(clReleaseMemObject(r));
                check!(clReleaseMemObject(o));
                check!(clReleaseKernel(k));
            }
            check!(clReleaseProgram(p));
        }
    }
}
