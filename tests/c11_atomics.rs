//! C11 atomics' orders and scopes (OpenCL C 3.0 §6.15.12): what
//! CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES / FENCE_CAPABILITIES claim agrees with the feature
//! macros; atomic_flag as a lock (global and local), atomic_init, atomic_work_item_fence; and
//! message passing with release/acquire between work-items of a group (local memory) and
//! across groups (global memory).
//!
//! The message-passing tests fail only where the orders are not honoured and the device
//! reorders: lavapipe runs a work-group's sub-groups one after another on one x86 thread
//! (a total store order), so there they check the values and the compiler's ordering, and
//! cannot make a weakened order fail; on a GPU (the H200) they can.
#[macro_use]
mod common;
use common::*;

const CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: cl_uint = 0x1063;
const CL_DEVICE_ATOMIC_FENCE_CAPABILITIES: cl_uint = 0x1064;
const CL_DEVICE_OPENCL_C_FEATURES: cl_uint = 0x106F;
const RELAXED: u64 = 1 << 0;
const ACQ_REL: u64 = 1 << 1;
const SEQ_CST: u64 = 1 << 2;
const WORK_GROUP: u64 = 1 << 4;
const DEVICE: u64 = 1 << 5;
const ALL_DEVICES: u64 = 1 << 6;

/// Spins a consumer makes before it gives up on a flag (no forward progress is promised).
const SPINS: u32 = 1 << 16;

fn caps(e: &Env, name: cl_uint) -> u64 {
    bytes_to(&info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(e.dev, name, sz, v, r)
    }))
}

fn has_feature(e: &Env, name: &str) -> bool {
    let f = info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(e.dev, CL_DEVICE_OPENCL_C_FEATURES, sz, v, r)
    });
    // cl_name_version entries: a version, then a NUL-padded name.
    f.chunks(68)
        .any(|c| c[4..].split(|&b| b == 0).next() == Some(name.as_bytes()))
}

/// The capabilities are what vkcl honours (relaxed and acquire/release, work-group and
/// device scope everywhere; seq_cst and all-devices scope, which clspv weakens, together and
/// only where vkcl makes them hold: lavapipe), and the feature macros say the same.
#[test]
fn capabilities_match_the_feature_macros() {
    setup();
    let e = Env::new();
    for name in [
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES,
    ] {
        let c = caps(&e, name);
        // The OpenCL 3.0 minimum, and what vkcl claims beyond it.
        assert_eq!(
            c & (RELAXED | WORK_GROUP),
            RELAXED | WORK_GROUP,
            "{name:#x}: {c:#x}"
        );
        assert_eq!(
            c & ACQ_REL != 0,
            has_feature(&e, "__opencl_c_atomic_order_acq_rel")
        );
        assert_eq!(
            c & SEQ_CST != 0,
            has_feature(&e, "__opencl_c_atomic_order_seq_cst")
        );
        assert_eq!(
            c & DEVICE != 0,
            has_feature(&e, "__opencl_c_atomic_scope_device")
        );
        assert_eq!(
            c & ALL_DEVICES != 0,
            has_feature(&e, "__opencl_c_atomic_scope_all_devices")
        );
        assert_eq!(c & SEQ_CST != 0, c & ALL_DEVICES != 0, "{name:#x}: {c:#x}");
        assert_eq!(c & SEQ_CST != 0, seq_cst_claimed(&e), "{name:#x}: {c:#x}");
    }
    // Without __opencl_c_atomic_order_seq_cst the language has no memory_order_seq_cst, and
    // no functions without `_explicit`.
    for src in [
        "kernel void k(global atomic_int *a) {\n\
         atomic_fetch_add_explicit(a, 1, memory_order_seq_cst, memory_scope_device); }",
        "kernel void k(global atomic_int *a) { atomic_store(a, atomic_load(a + 1)); }",
        "kernel void k(global atomic_flag *f) {\n\
         if (!atomic_flag_test_and_set(f)) atomic_flag_clear(f); }",
    ] {
        let built = build_program(e.ctx, e.dev, src, "-cl-std=CL3.0");
        assert_eq!(built.is_ok(), seq_cst_claimed(&e), "{src}");
        if let Ok(p) = built {
            check!(clReleaseProgram(p));
        }
    }
}

/// Whether the device has 64-bit atomics and doubles (a skip says so where not).
fn has_64bit_atomics_and_doubles(e: &Env) -> bool {
    let ext = device_str(e.dev, CL_DEVICE_EXTENSIONS);
    let has = ext.contains("cl_khr_int64_base_atomics") && ext.contains("cl_khr_fp64");
    if !has {
        eprintln!("skipped: no 64-bit atomics or doubles");
    }
    has
}

/// Whether the device claims seq_cst (CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES).
fn seq_cst_claimed(e: &Env) -> bool {
    caps(e, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES) & SEQ_CST != 0
}

const LOCK_SOURCE: &str = r#"
/* Every contender takes the lock once, reads and increments the plain counter in the
   critical section, and records what it read (a permutation of 0..n if the lock orders the
   critical sections). Work-items of one sub-group have no forward progress among themselves
   (on lavapipe all but about one per sub-group gave up spinning), so contenders are
   work-groups of one work-item (global_lock) or the first work-item of each sub-group
   (local_lock). */
kernel void global_lock(global atomic_flag *lock, global int *counter, global int *seen,
                        global int *stuck) {
    size_t g = get_global_id(0);
    seen[g] = -1;
    for (uint i = 0; i < SPINS; ++i) {
        if (!atomic_flag_test_and_set_explicit(lock, memory_order_acquire, memory_scope_device)) {
            int c = *counter;
            seen[g] = c;
            *counter = c + 1;
            atomic_flag_clear_explicit(lock, memory_order_release, memory_scope_device);
            return;
        }
    }
    atomic_fetch_add_explicit((global atomic_int *)stuck, 1, memory_order_relaxed,
                              memory_scope_device);
}

kernel void local_lock(global int *seen, global int *totals) {
    local atomic_flag lock;
    local int counter;
    size_t l = get_local_id(0);
    if (l == 0) {
        atomic_init((local atomic_int *)&lock, 0);
        counter = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    seen[get_global_id(0)] = -1;
    if (get_sub_group_local_id() != 0)
        return;
    for (uint i = 0; i < SPINS; ++i) {
        if (!atomic_flag_test_and_set_explicit(&lock, memory_order_acq_rel, memory_scope_work_group)) {
            int c = counter;
            seen[get_global_id(0)] = c;
            counter = c + 1;
            atomic_flag_clear_explicit(&lock, memory_order_release, memory_scope_work_group);
            break;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0)
        totals[get_group_id(0)] = counter;
    if (l == 0)
        totals[get_num_groups(0)] = get_max_sub_group_size();
}
"#;

/// Builds `src` with SPINS defined.
fn program(e: &Env, src: &str) -> cl_program {
    e.program(src, &format!("-cl-std=CL3.0 -DSPINS={SPINS}u"))
}

fn assert_permutation(seen: &[i32], what: &str) {
    let mut s = seen.to_vec();
    s.sort_unstable();
    let want: Vec<i32> = (0..seen.len() as i32).collect();
    assert_eq!(
        s, want,
        "{what}: the critical sections overlapped or a value was lost"
    );
}

#[test]
fn atomic_flag_locks_global_memory() {
    setup();
    let e = Env::new();
    let p = program(&e, LOCK_SOURCE);
    let k = kernel(p, "global_lock");
    let n = 128usize;
    let lock = e.buffer_from(&[0i32]);
    let counter = e.buffer_from(&[0i32]);
    let seen = e.buffer_from(&vec![0i32; n]);
    let stuck = e.buffer_from(&[0i32]);
    for (i, m) in [lock, counter, seen, stuck].iter().enumerate() {
        arg(k, i as u32, m);
    }
    e.run(k, None, &[n], Some(&[1]));
    let stuck_n = e.read::<i32>(stuck, 1)[0];
    assert_eq!(stuck_n, 0, "work-items that never got the lock");
    assert_eq!(e.read::<i32>(counter, 1)[0], n as i32);
    assert_permutation(&e.read::<i32>(seen, n), "global lock");
    assert_eq!(e.read::<i32>(lock, 1)[0], 0, "the lock was left set");
    for m in [lock, counter, seen, stuck] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn atomic_flag_locks_local_memory() {
    setup();
    let e = Env::new();
    if !has_feature(&e, "__opencl_c_subgroups") {
        eprintln!("skipped: the contenders are sub-groups, and the device has none");
        return;
    }
    let p = program(&e, LOCK_SOURCE);
    let k = kernel(p, "local_lock");
    let (n, local) = (192usize, 64usize);
    let seen = e.buffer_from(&vec![0i32; n]);
    let totals = e.buffer_from(&vec![0i32; n / local + 1]);
    arg(k, 0, &seen);
    arg(k, 1, &totals);
    e.run(k, None, &[n], Some(&[local]));
    let t = e.read::<i32>(totals, n / local + 1);
    let size = t[n / local] as usize;
    let per_group = local.div_ceil(size);
    assert_eq!(t[..n / local], vec![per_group as i32; n / local]);
    let s = e.read::<i32>(seen, n);
    for (group, chunk) in s.chunks(local).enumerate() {
        let firsts: Vec<i32> = chunk.iter().step_by(size).copied().collect();
        assert_permutation(&firsts, &format!("local lock of group {group}"));
    }
    check!(clReleaseMemObject(seen));
    check!(clReleaseMemObject(totals));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const MESSAGE_SOURCE: &str = r#"
/* Producers write data, then publish it with a release; consumers that see the flag with an
   acquire must see the data. Consumers spin a bounded number of times and record -1 when
   the flag never came (allowed); they record the data they read otherwise. */
#define DATA(i) ((int)(i) * 7 + 3)

/* Across work-groups: group 0 produces, group 1 consumes, through global memory; FENCES
   uses relaxed atomics with release/acquire fences instead of ordered atomics. */
kernel void across_groups(global int *data, global atomic_int *flags, global int *got,
                          int fences) {
    size_t i = get_local_id(0);
    if (get_group_id(0) == 0) {
        data[i] = DATA(i);
        if (fences) {
            atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);
            atomic_store_explicit(&flags[i], 1, memory_order_relaxed, memory_scope_device);
        } else {
            atomic_store_explicit(&flags[i], 1, memory_order_release, memory_scope_device);
        }
        return;
    }
    int r = -1;
    for (uint s = 0; s < SPINS; ++s) {
        int f;
        if (fences) {
            f = atomic_load_explicit(&flags[i], memory_order_relaxed, memory_scope_device);
            atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acquire, memory_scope_device);
        } else {
            f = atomic_load_explicit(&flags[i], memory_order_acquire, memory_scope_device);
        }
        if (f) {
            r = data[i];
            break;
        }
    }
    got[i] = r;
}

/* Within a work-group: the first half produces into local memory, the second half (other
   sub-groups) consumes, with work-group scope. */
kernel void within_group(global int *got) {
    local int data[256];
    local atomic_int flags[256];
    size_t l = get_local_id(0), h = get_local_size(0) / 2;
    if (l < h)
        atomic_init(&flags[l], 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < h) {
        data[l] = DATA(l + get_group_id(0));
        atomic_store_explicit(&flags[l], 1, memory_order_release, memory_scope_work_group);
        return;
    }
    size_t i = l - h;
    int r = -1;
    for (uint s = 0; s < SPINS; ++s) {
        if (atomic_load_explicit(&flags[i], memory_order_acquire, memory_scope_work_group)) {
            r = data[i];
            break;
        }
    }
    got[get_group_id(0) * h + i] = r;
}
"#;

/// Every consumer saw the data or no flag; returns how many saw the flag.
fn check_messages(got: &[i32], data: impl Fn(usize) -> i32, what: &str) -> usize {
    for (i, &g) in got.iter().enumerate() {
        assert!(
            g == -1 || g == data(i),
            "{what}: consumer {i} read {g}, not {}",
            data(i)
        );
    }
    got.iter().filter(|&&g| g != -1).count()
}

#[test]
fn release_acquire_passes_messages_across_groups() {
    setup();
    let e = Env::new();
    let p = program(&e, MESSAGE_SOURCE);
    let k = kernel(p, "across_groups");
    let n = 64usize;
    for fences in [0i32, 1] {
        let mut observed = 0;
        for _ in 0..8 {
            let data = e.buffer_from(&vec![0i32; n]);
            let flags = e.buffer_from(&vec![0i32; n]);
            let got = e.buffer_from(&vec![-2i32; n]);
            arg(k, 0, &data);
            arg(k, 1, &flags);
            arg(k, 2, &got);
            arg(k, 3, &fences);
            e.run(k, None, &[2 * n], Some(&[n]));
            let g = e.read::<i32>(got, n);
            observed += check_messages(&g, |i| i as i32 * 7 + 3, "across groups");
            for m in [data, flags, got] {
                check!(clReleaseMemObject(m));
            }
        }
        eprintln!(
            "fences={fences}: {observed} of {} consumers saw the flag",
            8 * n
        );
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn release_acquire_passes_messages_within_a_group() {
    setup();
    let e = Env::new();
    let p = program(&e, MESSAGE_SOURCE);
    let k = kernel(p, "within_group");
    let (groups, local) = (4usize, 128usize);
    let h = local / 2;
    let got = e.buffer_from(&vec![-2i32; groups * h]);
    arg(k, 0, &got);
    e.run(k, None, &[groups * local], Some(&[local]));
    let g = e.read::<i32>(got, groups * h);
    let seen = check_messages(&g, |i| (i % h + i / h) as i32 * 7 + 3, "within a group");
    eprintln!("{seen} of {} consumers saw the flag", groups * h);
    check!(clReleaseMemObject(got));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const STORE_BUFFERING_SOURCE: &str = r#"
/* The store-buffering litmus test (Dekker's core): in round i, group 0 stores x[i] then loads
   y[i], group 1 stores y[i] then loads x[i]. Under seq_cst one of the loads must see the other
   group's store; with release stores and acquire loads both may read 0 (lavapipe showed 53
   such rounds of 20,000 before vkcl made seq_cst hold there). The groups meet before each
   round (a bounded spin: with no forward progress promised, a group that waited long enough
   goes on alone). T is the atomic's type; EXPLICIT picks the _explicit forms. */
#define A_(t) atomic_##t
#define A(t) A_(t)
#if EXPLICIT
#define STORE(p, v) atomic_store_explicit(p, v, memory_order_seq_cst, memory_scope_all_svm_devices)
#define LOAD(p) atomic_load_explicit(p, memory_order_seq_cst, memory_scope_device)
#else
#define STORE(p, v) atomic_store(p, v)
#define LOAD(p) atomic_load(p)
#endif
kernel void store_buffering(global A(T) *x, global A(T) *y, global int *r,
                            global atomic_int *meet, int rounds) {
    if (get_local_id(0) != 0)
        return;
    int g = get_group_id(0);
    for (int i = 0; i < rounds; ++i) {
        atomic_fetch_add_explicit(meet, 1, memory_order_relaxed, memory_scope_device);
        for (uint s = 0; s < SPINS; ++s)
            if (atomic_load_explicit(meet, memory_order_relaxed, memory_scope_device) >= 2 * (i + 1))
                break;
        if (g == 0) {
            STORE(&x[i], (T)1);
            r[2 * i] = (int)LOAD(&y[i]);
        } else {
            STORE(&y[i], (T)1);
            r[2 * i + 1] = (int)LOAD(&x[i]);
        }
    }
}
"#;

/// seq_cst where it is claimed: the store-buffering outcome (both loads 0) never happens,
/// with the `_explicit` forms and without, for 32- and 64-bit integers and floating point,
/// under OpenCL C 3.0 and 2.0.
#[test]
fn seq_cst_forbids_store_buffering() {
    setup();
    let e = Env::new();
    let rounds = 20000usize;
    let claimed = seq_cst_claimed(&e);
    if !claimed {
        // What claiming it would face: clspv's weakened seq_cst, under OpenCL C 2.0.
        let (p, both_zero) = store_buffering(&e, rounds, "int", 4, "CL2.0", 1);
        eprintln!("seq_cst is not claimed; weakened, {both_zero} of {rounds} rounds read 0 twice");
        check!(clReleaseProgram(p));
        return;
    }
    let cases = [
        ("int", 4, "CL3.0", 0),
        ("int", 4, "CL3.0", 1),
        ("uint", 4, "CL2.0", 0),
        ("long", 8, "CL3.0", 0),
        ("ulong", 8, "CL3.0", 1),
        ("float", 4, "CL3.0", 0),
        ("double", 8, "CL2.0", 1),
    ];
    for (t, size, std, explicit) in cases {
        let (p, both_zero) = store_buffering(&e, rounds, t, size, std, explicit);
        assert_eq!(
            both_zero, 0,
            "{t} {std} explicit={explicit}: rounds where both loads read 0"
        );
        check!(clReleaseProgram(p));
    }
}

/// Runs `rounds` rounds of the store-buffering test with atomics of type `t` (`size` bytes);
/// the program, and the number of rounds where both loads read 0.
fn store_buffering(
    e: &Env,
    rounds: usize,
    t: &str,
    size: usize,
    std: &str,
    explicit: i32,
) -> (cl_program, usize) {
    let opts = format!("-cl-std={std} -DT={t} -DEXPLICIT={explicit} -DSPINS={SPINS}u");
    let p = e.program(STORE_BUFFERING_SOURCE, &opts);
    let k = kernel(p, "store_buffering");
    let x = e.buffer_from(&vec![0u8; size * rounds]);
    let y = e.buffer_from(&vec![0u8; size * rounds]);
    let r = e.buffer_from(&vec![-1i32; 2 * rounds]);
    let meet = e.buffer_from(&[0i32]);
    for (i, m) in [x, y, r, meet].iter().enumerate() {
        arg(k, i as u32, m);
    }
    arg(k, 4, &(rounds as i32));
    e.run(k, None, &[128], Some(&[64]));
    let got = e.read::<i32>(r, 2 * rounds);
    assert!(
        got.iter().all(|&v| v == 0 || v == 1),
        "{opts}: a load read neither 0 nor 1"
    );
    for m in [x, y, r, meet] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    (p, got.chunks(2).filter(|c| c[0] == 0 && c[1] == 0).count())
}

const EVERY_TYPE_SOURCE: &str = r#"
/* Atomic loads and stores of every atomic type in one kernel, in the order ORDER_A or its
   reverse: each reads the value another type's store left in its own buffer. */
kernel void every_type(global atomic_int *i, global atomic_uint *u, global atomic_long *l,
                       global atomic_ulong *ul, global atomic_float *f,
                       global atomic_double *d, global long *out, global float *of,
                       global double *od, int reverse) {
    if (!reverse) {
        out[0] = atomic_load_explicit(i, memory_order_acquire, memory_scope_device);
        out[1] = atomic_load_explicit(u, memory_order_relaxed, memory_scope_device);
        out[2] = atomic_load_explicit(l, memory_order_acquire, memory_scope_device);
        out[3] = (long)atomic_load_explicit(ul, memory_order_relaxed, memory_scope_device);
        of[0] = atomic_load_explicit(f, memory_order_acquire, memory_scope_device);
        od[0] = atomic_load_explicit(d, memory_order_relaxed, memory_scope_device);
        atomic_store_explicit(i + 1, -7, memory_order_release, memory_scope_device);
        atomic_store_explicit(u + 1, 0xfedcba98u, memory_order_relaxed, memory_scope_device);
        atomic_store_explicit(l + 1, -0x123456789abcdefL, memory_order_release, memory_scope_device);
        atomic_store_explicit(ul + 1, 0xfedcba9876543210UL, memory_order_relaxed, memory_scope_device);
        atomic_store_explicit(f + 1, 2.5f, memory_order_release, memory_scope_device);
        atomic_store_explicit(d + 1, -1.0 / 3.0, memory_order_relaxed, memory_scope_device);
    } else {
        od[0] = atomic_load_explicit(d, memory_order_relaxed, memory_scope_device);
        of[0] = atomic_load_explicit(f, memory_order_acquire, memory_scope_device);
        out[3] = (long)atomic_load_explicit(ul, memory_order_relaxed, memory_scope_device);
        out[2] = atomic_load_explicit(l, memory_order_acquire, memory_scope_device);
        out[1] = atomic_load_explicit(u, memory_order_relaxed, memory_scope_device);
        out[0] = atomic_load_explicit(i, memory_order_acquire, memory_scope_device);
        atomic_store_explicit(d + 1, -1.0 / 3.0, memory_order_relaxed, memory_scope_device);
        atomic_store_explicit(f + 1, 2.5f, memory_order_release, memory_scope_device);
        atomic_store_explicit(ul + 1, 0xfedcba9876543210UL, memory_order_relaxed, memory_scope_device);
        atomic_store_explicit(l + 1, -0x123456789abcdefL, memory_order_release, memory_scope_device);
        atomic_store_explicit(u + 1, 0xfedcba98u, memory_order_relaxed, memory_scope_device);
        atomic_store_explicit(i + 1, -7, memory_order_release, memory_scope_device);
    }
}
"#;

/// Atomic loads and stores of int, uint, long, ulong, float and double in one kernel, in
/// either order, read and write whole values of their own type (clspv 0.0.1 gives every
/// atomic load of a module the type of the first it meets: an int load then a float load
/// crashed it, an int load then a long load read the low word).
#[test]
fn atomic_loads_and_stores_of_every_type_in_one_kernel() {
    setup();
    let e = Env::new();
    if !has_64bit_atomics_and_doubles(&e) {
        return;
    }
    let p = e.program(EVERY_TYPE_SOURCE, "-cl-std=CL3.0");
    let k = kernel(p, "every_type");
    let d0 = 6.0f64.sqrt();
    for reverse in [0i32, 1] {
        let i = e.buffer_from(&[-123456789i32, 0]);
        let u = e.buffer_from(&[0x89abcdefu32, 0]);
        let l = e.buffer_from(&[0x7123456789abcdefi64, 0]);
        let ul = e.buffer_from(&[0x8000000000000001u64, 0]);
        let f = e.buffer_from(&[1.75f32, 0.0]);
        let d = e.buffer_from(&[d0, 0.0]);
        let out = e.buffer_from(&[0i64; 4]);
        let of = e.buffer_from(&[0f32]);
        let od = e.buffer_from(&[0f64]);
        for (n, m) in [i, u, l, ul, f, d, out, of, od].iter().enumerate() {
            arg(k, n as u32, m);
        }
        arg(k, 9, &reverse);
        e.run(k, None, &[1], Some(&[1]));
        let got = e.read::<i64>(out, 4);
        let want = [
            -123456789i64,
            0x89abcdef,
            0x7123456789abcdef,
            0x8000000000000001u64 as i64,
        ];
        assert_eq!(got, want, "loads, reverse={reverse}");
        assert_eq!(
            e.read::<f32>(of, 1)[0],
            1.75,
            "float load, reverse={reverse}"
        );
        assert_eq!(
            e.read::<f64>(od, 1)[0],
            d0,
            "double load, reverse={reverse}"
        );
        assert_eq!(e.read::<i32>(i, 2)[1], -7, "reverse={reverse}");
        assert_eq!(e.read::<u32>(u, 2)[1], 0xfedcba98, "reverse={reverse}");
        assert_eq!(
            e.read::<i64>(l, 2)[1],
            -0x123456789abcdef,
            "reverse={reverse}"
        );
        assert_eq!(
            e.read::<u64>(ul, 2)[1],
            0xfedcba9876543210,
            "reverse={reverse}"
        );
        assert_eq!(e.read::<f32>(f, 2)[1], 2.5, "reverse={reverse}");
        assert_eq!(e.read::<f64>(d, 2)[1], -1.0 / 3.0, "reverse={reverse}");
        for m in [i, u, l, ul, f, d, out, of, od] {
            check!(clReleaseMemObject(m));
        }
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const EVERY_RMW_SOURCE: &str = r#"
/* Every C11 read-modify-write on int, uint, long and ulong in one kernel (clspv 0.0.1 typed
   every atomic load of a module as the first one; the read-modify-writes must each keep
   their own type). out[k] gets each old value; the buffers keep the results. */
#define RMW(T, p, o, OUT)                                                          \
    OUT[o + 0] = (long)atomic_fetch_add_explicit(p, (T)3, memory_order_relaxed,   \
                                                 memory_scope_device);            \
    OUT[o + 1] = (long)atomic_fetch_sub_explicit(p + 1, (T)5, memory_order_acq_rel, \
                                                 memory_scope_device);            \
    OUT[o + 2] = (long)atomic_fetch_or_explicit(p + 2, (T)0x30, memory_order_release, \
                                                memory_scope_device);             \
    OUT[o + 3] = (long)atomic_fetch_xor_explicit(p + 3, (T)0xff, memory_order_acquire, \
                                                 memory_scope_device);            \
    OUT[o + 4] = (long)atomic_fetch_and_explicit(p + 4, (T)0x0f, memory_order_relaxed, \
                                                 memory_scope_device);            \
    OUT[o + 5] = (long)atomic_fetch_min_explicit(p + 5, (T)2, memory_order_relaxed, \
                                                 memory_scope_device);            \
    OUT[o + 6] = (long)atomic_fetch_max_explicit(p + 6, (T)9, memory_order_relaxed, \
                                                 memory_scope_device);            \
    OUT[o + 7] = (long)atomic_exchange_explicit(p + 7, (T)11, memory_order_acq_rel, \
                                                memory_scope_device);             \
    {                                                                             \
        T e = (T)100;                                                             \
        OUT[o + 8] = atomic_compare_exchange_strong_explicit(p + 8, &e, (T)7,     \
            memory_order_acq_rel, memory_order_relaxed, memory_scope_device);     \
        OUT[o + 9] = (long)e;                                                     \
        e = (T)8;                                                                 \
        while (!atomic_compare_exchange_weak_explicit(p + 9, &e, (T)12,           \
            memory_order_acq_rel, memory_order_relaxed, memory_scope_device))     \
            ;                                                                     \
        OUT[o + 10] = (long)e;                                                    \
    }
kernel void every_rmw(global atomic_int *i, global atomic_uint *u, global atomic_long *l,
                      global atomic_ulong *ul, global long *out, int reverse) {
    if (!reverse) {
        RMW(int, i, 0, out) RMW(uint, u, 11, out) RMW(long, l, 22, out) RMW(ulong, ul, 33, out)
    } else {
        RMW(ulong, ul, 33, out) RMW(long, l, 22, out) RMW(uint, u, 11, out) RMW(int, i, 0, out)
    }
}
"#;

/// Every C11 read-modify-write on 32- and 64-bit integers in one kernel, in either order:
/// the old values and the results are those of each type (checked on values whose high
/// words differ from their low words).
#[test]
fn read_modify_writes_of_every_integer_type_in_one_kernel() {
    setup();
    let e = Env::new();
    let ext = device_str(e.dev, CL_DEVICE_EXTENSIONS);
    if !ext.contains("cl_khr_int64_extended_atomics") {
        eprintln!("skipped: no 64-bit atomics");
        return;
    }
    let p = e.program(EVERY_RMW_SOURCE, "-cl-std=CL3.0");
    let k = kernel(p, "every_rmw");
    // Initial values per operation (add, sub, or, xor, and, min, max, exchange, strong
    // compare-exchange that fails, weak one that succeeds after a retry, unused); the 64-bit
    // types get a high word on top, so that a 32-bit access shows.
    let init: [i64; 11] = [40, 50, 0x101, 0x0f0, 0xf3, 6, 4, 1, 99, 8, 0];
    let wide = init.map(|v| v + (7i64 << 40));
    // The old values each operation returns (the strong compare-exchange's result, 0, then
    // what it read; the weak one's last expected value), and the values left.
    let old = |b: [i64; 11]| {
        [
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], 0, b[8], b[9],
        ]
    };
    let left = |b: [i64; 11]| {
        [
            b[0] + 3,
            b[1] - 5,
            b[2] | 0x30,
            b[3] ^ 0xff,
            b[4] & 0x0f,
            b[5].min(2),
            b[6].max(9),
            11,
            b[8],
            12,
            b[10],
        ]
    };
    for reverse in [0i32, 1] {
        let i = e.buffer_from(&init.map(|v| v as i32));
        let u = e.buffer_from(&init.map(|v| v as u32));
        let l = e.buffer_from(&wide);
        let ul = e.buffer_from(&wide.map(|v| v as u64));
        let out = e.buffer_from(&[0i64; 44]);
        for (n, m) in [i, u, l, ul, out].iter().enumerate() {
            arg(k, n as u32, m);
        }
        arg(k, 5, &reverse);
        e.run(k, None, &[1], Some(&[1]));
        let got = e.read::<i64>(out, 44);
        for (t, start, base) in [
            ("int", 0, init),
            ("uint", 11, init),
            ("long", 22, wide),
            ("ulong", 33, wide),
        ] {
            assert_eq!(
                got[start..start + 11],
                old(base),
                "{t}: old values, reverse={reverse}"
            );
        }
        let what = format!("values left, reverse={reverse}");
        assert_eq!(
            e.read::<i32>(i, 11),
            left(init).map(|v| v as i32),
            "int {what}"
        );
        assert_eq!(
            e.read::<u32>(u, 11),
            left(init).map(|v| v as u32),
            "uint {what}"
        );
        assert_eq!(e.read::<i64>(l, 11), left(wide), "long {what}");
        assert_eq!(
            e.read::<u64>(ul, 11),
            left(wide).map(|v| v as u64),
            "ulong {what}"
        );
        for m in [i, u, l, ul, out] {
            check!(clReleaseMemObject(m));
        }
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const FLOAT_RMW_SOURCE: &str = r#"
/* atomic_exchange and the compare-exchanges on atomic_float and atomic_double (OpenCL C 2.0
   declares them for every atomic type). */
kernel void float_rmw(global atomic_float *f, global atomic_double *d, global float *of,
                      global double *od, global int *ok) {
    of[0] = atomic_exchange_explicit(f, 2.5f, memory_order_acq_rel, memory_scope_device);
    od[0] = atomic_exchange_explicit(d, -0.75, memory_order_relaxed, memory_scope_device);
    float ef = 1.5f;
    ok[0] = atomic_compare_exchange_strong_explicit(f + 1, &ef, 4.0f, memory_order_acq_rel,
                                                    memory_order_relaxed, memory_scope_device);
    of[1] = ef;
    double ed = 3.0;
    ok[1] = atomic_compare_exchange_weak_explicit(d + 1, &ed, 8.0, memory_order_relaxed,
                                                  memory_order_relaxed, memory_scope_device);
    od[1] = ed;
}
"#;

/// Exchange and compare-exchange of floats and doubles: old values, results, and the value
/// a failed compare-exchange read.
#[test]
fn float_exchanges_and_compare_exchanges() {
    setup();
    let e = Env::new();
    if !has_64bit_atomics_and_doubles(&e) {
        return;
    }
    let p = e.program(FLOAT_RMW_SOURCE, "-cl-std=CL3.0");
    let k = kernel(p, "float_rmw");
    let f = e.buffer_from(&[1.25f32, 1.5]);
    let d = e.buffer_from(&[6.5f64, 3.5]);
    let of = e.buffer_from(&[0f32; 2]);
    let od = e.buffer_from(&[0f64; 2]);
    let ok = e.buffer_from(&[-1i32; 2]);
    for (n, m) in [f, d, of, od, ok].iter().enumerate() {
        arg(k, n as u32, m);
    }
    e.run(k, None, &[1], Some(&[1]));
    assert_eq!(e.read::<f32>(of, 2), [1.25, 1.5], "float old values");
    assert_eq!(e.read::<f64>(od, 2), [6.5, 3.5], "double old values");
    assert_eq!(e.read::<i32>(ok, 2), [1, 0], "compare-exchange results");
    assert_eq!(e.read::<f32>(f, 2), [2.5, 4.0], "floats left");
    assert_eq!(e.read::<f64>(d, 2), [-0.75, 3.5], "doubles left");
    for m in [f, d, of, od, ok] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const GLOBAL_COUNTER_SOURCE: &str = r#"
/* A program-scope atomic counter at the widest scope the device claims: OpenCL C 3.0 names
   it memory_scope_all_devices (the 2.0 header, which programs with program-scope globals are
   rebuilt against, has only memory_scope_all_svm_devices). */
#ifdef __opencl_c_atomic_scope_all_devices
#define SCOPE memory_scope_all_devices
#else
#define SCOPE memory_scope_device
#endif
global atomic_int counter = ATOMIC_VAR_INIT(5);

kernel void count(global int *old, int base) {
    old[base + get_global_id(0)] = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed, SCOPE);
}

kernel void total(global int *out) {
    out[0] = atomic_load_explicit(&counter, memory_order_relaxed, SCOPE);
}
"#;

/// A program-scope atomic updated at the widest claimed scope keeps its count across
/// launches of the program's kernels, every old value seen once.
#[test]
fn program_scope_atomic_at_the_widest_scope() {
    setup();
    let e = Env::new();
    if !has_feature(&e, "__opencl_c_program_scope_global_variables") {
        eprintln!("skipped: no program-scope global variables");
        return;
    }
    let p = e.program(GLOBAL_COUNTER_SOURCE, "-cl-std=CL3.0");
    let (count, total) = (kernel(p, "count"), kernel(p, "total"));
    let n = 256usize;
    let old = e.buffer_from(&vec![-1i32; 2 * n]);
    let out = e.buffer_from(&[0i32]);
    arg(total, 0, &out);
    arg(count, 0, &old);
    for launch in 0..2 {
        arg(count, 1, &((launch * n) as i32));
        e.run(count, None, &[n], Some(&[64]));
    }
    e.run(total, None, &[1], Some(&[1]));
    assert_eq!(
        e.read::<i32>(out, 1),
        [5 + 2 * n as i32],
        "count after two launches"
    );
    let mut seen = e.read::<i32>(old, 2 * n);
    seen.sort_unstable();
    assert_eq!(
        seen,
        (5..5 + 2 * n as i32).collect::<Vec<_>>(),
        "old values"
    );
    for m in [old, out] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(count));
    check!(clReleaseKernel(total));
    check!(clReleaseProgram(p));
}
