//! Device-side enqueue (OpenCL C 2.0 §6.13.17, OpenCL 3.0 §5.1 on-device queues): blocks
//! enqueued by kernels, their events and markers, the ND-range forms, `__local` blocks, the
//! error codes of enqueue_kernel, and the API of on-device queues.
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

const CL_QUEUE_ON_DEVICE_DEFAULT: cl_bitfield = 1 << 3;
const CL_QUEUE_DEVICE_DEFAULT: cl_uint = 0x1095;
const CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES: cl_uint = 0x1070;
const CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES: cl_uint = 0x104E;
const CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE: cl_uint = 0x104F;
const CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE: cl_uint = 0x1050;
const CL_DEVICE_MAX_ON_DEVICE_QUEUES: cl_uint = 0x1051;
const CL_DEVICE_MAX_ON_DEVICE_EVENTS: cl_uint = 0x1052;
const CL_DEVICE_OPENCL_C_FEATURES: cl_uint = 0x106F;
const CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR: cl_uint = 0x105F;

#[link(name = "OpenCL")]
extern "C" {
    fn clSetDefaultDeviceCommandQueue(
        c: cl_context,
        d: cl_device_id,
        q: cl_command_queue,
    ) -> cl_int;
}

/// Whether the device offers device-side enqueue; where the compiler it needs (clang-15) is
/// installed, a device with buffer device addresses must.
fn supported(dev: cl_device_id) -> bool {
    let caps: cl_bitfield = device_val(dev, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES);
    // VKCL_CLANG, else clang-15 or clang-16 on PATH.
    let clang = match std::env::var_os("VKCL_CLANG").filter(|c| !c.is_empty()) {
        Some(c) => std::path::Path::new(&c).is_file(),
        None => std::env::var_os("PATH").is_some_and(|p| {
            std::env::split_paths(&p)
                .any(|d| ["clang-15", "clang-16"].iter().any(|c| d.join(c).is_file()))
        }),
    };
    let addresses = device_str(dev, CL_DEVICE_EXTENSIONS).contains("cl_ext_buffer_device_address");
    assert_eq!(
        caps != 0,
        clang && addresses,
        "device-side enqueue offered where it works"
    );
    caps != 0
}

/// CL_DEVICE_OPENCL_C_FEATURES' names, joined.
fn feature_names(dev: cl_device_id) -> String {
    let bytes = device_info(dev, CL_DEVICE_OPENCL_C_FEATURES);
    bytes
        .chunks(68)
        .map(|c| bytes_to_string(&c[4..]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A context with a host queue and a default device queue.
fn env() -> Option<(Env, cl_command_queue)> {
    let e = Env::new();
    if !supported(e.dev) {
        return None;
    }
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0,
    ];
    let mut err = 0;
    let q = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, props.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "on-device queue: {}", err_name(err));
    Some((e, q))
}

fn build(e: &Env, src: &str, std: &str) -> cl_program {
    match build_program(e.ctx, e.dev, src, std) {
        Ok(p) => p,
        Err((code, log)) => panic!("{}: {log}", err_name(code)),
    }
}

const CAPTURES: &str = r#"
typedef struct { char c; int i; float2 f; } S;
kernel void parent(global long *out, int n, long big, float x, char c, float4 v, S s) {
    size_t id = get_global_id(0);
    short sh = (short)(id * 3);
    int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(n),
        ^{
            size_t j = get_global_id(0);
            global long *o = out + 16 * (id * n + j);
            o[0] = (long)id; o[1] = (long)j; o[2] = big; o[3] = (long)(x * 4.0f); o[4] = c;
            o[5] = (long)(v.x + v.y * 10 + v.z * 100 + v.w * 1000); o[6] = s.c; o[7] = s.i;
            o[8] = (long)(s.f.y * 2.0f); o[9] = sh; o[10] = (long)get_global_size(0);
        });
    out[1024 + id] = r;
}
"#;

/// Each work-item enqueues a block over `n` work-items that writes what it captured: values
/// of every size (char to long, a vector, a struct, a pointer), its own id.
#[test]
fn blocks_capture_values_of_every_kind() {
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let Some((e, dq)) = env() else { return };
        let p = build(&e, CAPTURES, std);
        let k = kernel(p, "parent");
        let out = e.buffer_from(&vec![0i64; 1024 + 8]);
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct S {
            c: i8,
            i: i32,
            f: [f32; 2],
        }
        let n = 5i32;
        arg(k, 0, &out);
        arg(k, 1, &n);
        arg(k, 2, &(1i64 << 40));
        arg(k, 3, &2.5f32);
        arg(k, 4, &(-7i8));
        arg(k, 5, &[1.0f32, 2.0, 3.0, 4.0]);
        arg(
            k,
            6,
            &S {
                c: 9,
                i: -123456,
                f: [0.5, 7.5],
            },
        );
        e.run(k, None, &[4], None);
        let o: Vec<i64> = e.read(out, 1024 + 8);
        for id in 0..4usize {
            assert_eq!(o[1024 + id], 0, "{std}: enqueue_kernel's result for {id}");
            for j in 0..n as usize {
                let r = &o[16 * (id * n as usize + j)..][..11];
                assert_eq!(
                    r,
                    [
                        id as i64,
                        j as i64,
                        1 << 40,
                        10,
                        -7,
                        4321,
                        9,
                        -123456,
                        15,
                        3 * id as i64,
                        n as i64
                    ],
                    "{std}: child {j} of {id}"
                );
            }
        }
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
        check!(clReleaseCommandQueue(dq));
    }
}

const NESTED: &str = r#"
void record(global int *o, int slot) {
    global int *r = o + 16 * slot;
    r[0] = (int)get_work_dim();
    for (int d = 0; d < 3; d++) {
        r[1 + d] = (int)get_global_size(d);
        r[4 + d] = (int)get_local_size(d);
        r[7 + d] = (int)get_global_offset(d);
    }
    r[10] = 1 + r[10];
}
kernel void forms(global int *o) {
    queue_t q = get_default_queue();
    size_t g2[2] = {4, 6}, l2[2] = {2, 3}, o2[2] = {1, 2};
    size_t g3[3] = {2, 4, 6}, l3[3] = {1, 2, 3}, o3[3] = {5, 6, 7};
    int r = 0;
    // One child writes its shape (the last work-item of each), into its own slot.
    r |= enqueue_kernel(q, 0, ndrange_1D(8), ^{ if (get_global_id(0) == 7) record(o, 0); });
    r |= enqueue_kernel(q, 0, ndrange_1D(8, 4), ^{ if (get_global_id(0) == 7) record(o, 1); });
    r |= enqueue_kernel(q, 0, ndrange_1D(3, 8, 4), ^{ if (get_global_id(0) == 10) record(o, 2); });
    r |= enqueue_kernel(q, 0, ndrange_2D(g2, l2), ^{
        if (get_global_id(0) == 3 && get_global_id(1) == 5) record(o, 3); });
    r |= enqueue_kernel(q, 0, ndrange_2D(o2, g2, l2), ^{
        if (get_global_id(0) == 4 && get_global_id(1) == 7) record(o, 4); });
    r |= enqueue_kernel(q, 0, ndrange_3D(g3), ^{
        if (get_global_linear_id() == 47) record(o, 5); });
    r |= enqueue_kernel(q, 0, ndrange_3D(o3, g3, l3), ^{
        if (get_global_id(0) == 6 && get_global_id(1) == 9 && get_global_id(2) == 12) record(o, 6); });
    // Non-uniform work-groups: 10 work-items in groups of 4 (the last of 2), 2D 5x7 in 2x3.
    r |= enqueue_kernel(q, 0, ndrange_1D(10, 4), ^{
        atomic_add(&o[201], 1);
        if (get_global_id(0) == 9) { o[202] = (int)get_local_size(0); o[203] = (int)get_enqueued_local_size(0); }
    });
    size_t g5[2] = {5, 7}, l5[2] = {2, 3};
    r |= enqueue_kernel(q, 0, ndrange_2D(g5, l5), ^{
        atomic_add(&o[204], (int)(get_global_id(0) + 10 * get_global_id(1)));
        if (get_global_id(0) == 4 && get_global_id(1) == 6) { o[205] = (int)(get_local_size(0) * 10 + get_local_size(1)); }
    });
    o[200] = r;
}

// Each level enqueues the next until `depth`: a chain of grandchildren, each adding its level.
void level(global int *o, int depth, int at) {
    atomic_add(&o[0], at);
    if (at < depth)
        enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(2),
                       ^{ level(o, depth, at + 1); });
}
kernel void nested(global int *o, int depth) {
    level(o, depth, 1);
}
"#;

/// Children see the ND-range they were enqueued with (1D, 2D and 3D, with and without local
/// sizes and offsets), and children enqueue their own children, several levels deep.
#[test]
fn ndrange_forms_and_nested_children() {
    let Some((e, dq)) = env() else { return };
    let p = build(&e, NESTED, "-cl-std=CL2.0");
    let k = kernel(p, "forms");
    let o = e.buffer_from(&vec![0i32; 256]);
    arg(k, 0, &o);
    e.run(k, None, &[1], None);
    let r: Vec<i32> = e.read(o, 256);
    assert_eq!(r[200], 0, "enqueue_kernel's results");
    let expect: [[i32; 11]; 7] = [
        // dims, global[3], local[3] (chosen: divides the global size), offset[3], count
        [1, 8, 1, 1, r[4], 1, 1, 0, 0, 0, 1],
        [1, 8, 1, 1, 4, 1, 1, 0, 0, 0, 1],
        [1, 8, 1, 1, 4, 1, 1, 3, 0, 0, 1],
        [2, 4, 6, 1, 2, 3, 1, 0, 0, 0, 1],
        [2, 4, 6, 1, 2, 3, 1, 1, 2, 0, 1],
        [
            3,
            2,
            4,
            6,
            r[16 * 5 + 4],
            r[16 * 5 + 5],
            r[16 * 5 + 6],
            0,
            0,
            0,
            1,
        ],
        [3, 2, 4, 6, 1, 2, 3, 5, 6, 7, 1],
    ];
    for (slot, want) in expect.iter().enumerate() {
        assert_eq!(&r[16 * slot..16 * slot + 11], want, "child {slot}");
    }
    assert_eq!(8 % r[4], 0, "a chosen local size divides the global size");
    assert_eq!(&r[201..204], [10, 2, 4], "non-uniform 1D work-groups");
    // Σx over 5 columns × 7 rows + 10 Σy.
    assert_eq!(r[204], 7 * 10 + 10 * 5 * 21, "non-uniform 2D work-groups");
    assert_eq!(r[205], 11, "the last 2D work-group is 1 × 1");
    let nested = kernel(p, "nested");
    for depth in [1, 3, 6] {
        let o = e.buffer_from(&[0i32; 1]);
        arg(nested, 0, &o);
        arg(nested, 1, &depth);
        e.run(nested, None, &[1], None);
        // Level n runs 2^(n-1) times and adds n each time.
        let want: i32 = (1..=depth).map(|n| n << (n - 1)).sum();
        assert_eq!(e.read::<i32>(o, 1)[0], want, "depth {depth}");
        check!(clReleaseMemObject(o));
    }
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseKernel(nested));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

const CHOSEN: &str = r#"
// Each level's child has an ndrange chosen at run time among 1D, 2D and 3D, with a local size
// from a buffer, as the conformance suite's enqueue_mix_wg_size kernels choose theirs.
void level_fn(int level, global int *rnd, global int *o) {
    size_t linear = get_global_linear_id();
    if (--level < 0)
        return;
    void (^next)(void) = ^{ level_fn(level, rnd, o); };
    uint wg = get_kernel_work_group_size(next);
    ndrange_t nd = ndrange_1D(1);
    switch ((linear + level) % 3) {
    case 0: {
        size_t l = rnd[level] % wg % 64;
        nd = ndrange_1D(64, l ? l : 1);
    } break;
    case 1: {
        const size_t g[] = {4, 16};
        size_t l[] = {1, rnd[level] % wg % 16};
        l[1] = l[1] ? l[1] : 1;
        nd = ndrange_2D(g, l);
    } break;
    case 2: {
        const size_t g[] = {4, 4, 4};
        size_t l[] = {1, 1, rnd[level] % wg % 4};
        l[2] = l[2] ? l[2] : 1;
        nd = ndrange_3D(g, l);
    } break;
    default:
        break;
    }
    if (linear == 0) {
        atomic_inc(&o[0]);
        o[1 + level] = get_work_dim() * 1000 + (int)get_global_size(0);
        int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, nd, next);
        if (r != CLK_SUCCESS)
            o[16 + level] = r;
    }
}
kernel void mixed(global int *o, int levels, global int *rnd) {
    level_fn(levels, rnd, o);
}
"#;

/// An ndrange chosen at run time among ndrange_1D, _2D and _3D, level after level: clspv
/// 0.0.1 miscompiled enqueue_kernel's loop over the ndrange's dimensions then (the
/// work-item never came back from enqueue_kernel, and no child ran).
#[test]
fn ndrange_chosen_at_run_time() {
    let Some((e, dq)) = env() else { return };
    let p = build(&e, CHOSEN, "-cl-std=CL2.0");
    let k = kernel(p, "mixed");
    let o = e.buffer_from(&[0i32; 32]);
    let rnd = e.buffer_from(&[7i32, 13, 5, 64, 3, 9, 1, 2]);
    let levels = 6i32;
    arg(k, 0, &o);
    arg(k, 1, &levels);
    arg(k, 2, &rnd);
    e.run(k, None, &[64], Some(&[64]));
    let r: Vec<i32> = e.read(o, 32);
    assert_eq!(r[0], levels, "levels that ran");
    // Level n (counted down from `levels` - 1) runs in a launch its parent chose by
    // (n + 1) % 3 (1D of 64, 2D of 4 × 16, 3D of 4 × 4 × 4); the first in the host's.
    for n in 0..levels as usize {
        let want = match n + 1 {
            6 => 1064,
            m => [1064, 2004, 3004][m % 3],
        };
        assert_eq!(
            r[1 + n],
            want,
            "level {n}: work dimensions and global size 0"
        );
    }
    assert_eq!(
        &r[16..16 + levels as usize],
        [0; 6],
        "enqueue_kernel's results"
    );
    check!(clReleaseMemObject(o));
    check!(clReleaseMemObject(rnd));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

const EVENTS: &str = r#"
kernel void events(global int *o) {
    queue_t q = get_default_queue();
    clk_event_t first, second, marker, user = create_user_event();
    // `second` reads what `first` wrote: it waits for it.
    int r = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(64), 0, NULL, &first,
                           ^{ o[get_global_id(0)] = (int)get_global_id(0) + 1; });
    r |= enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(64), 1, &first, &second,
                        ^{ o[64 + get_global_id(0)] = o[63 - get_global_id(0)] * 2; });
    clk_event_t both[2] = {first, second};
    r |= enqueue_marker(q, 2, both, &marker);
    // The last child waits for the marker and for a user event the next child sets.
    clk_event_t gate[2] = {marker, user};
    r |= enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 2, gate, NULL,
                        ^{ o[128] = o[64] + o[127]; });
    r |= enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                        ^{ o[129] = 7; set_user_event_status(user, CL_COMPLETE); });
    o[130] = r;
    o[131] = is_valid_event(first) + 2 * is_valid_event(CLK_NULL_EVENT) + 4 * is_valid_event(user);
    retain_event(first);
    release_event(first);
    release_event(second);
    release_event(marker);
    release_event(user);
}
"#;

/// Children wait for the events in their wait lists (of children, of a marker, of a user event
/// another child completes), however they were enqueued.
#[test]
fn events_markers_and_user_events_order_children() {
    let Some((e, dq)) = env() else { return };
    let p = build(&e, EVENTS, "-cl-std=CL2.0");
    let k = kernel(p, "events");
    let o = e.buffer_from(&vec![0i32; 132]);
    arg(k, 0, &o);
    e.run(k, None, &[1], None);
    let r: Vec<i32> = e.read(o, 132);
    for i in 0..64 {
        assert_eq!(r[i], i as i32 + 1);
        assert_eq!(r[64 + i], (64 - i as i32) * 2, "second child, item {i}");
    }
    assert_eq!(&r[128..132], [128 + 2, 7, 0, 1 + 4]);
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

const LOCALS: &str = r#"
kernel void locals(global int *o, uint n) {
    // A block with two __local buffers of sizes given at enqueue: a work-group reduction.
    int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(64, 16),
        ^(local void *a, local void *b) {
            local int *sum = (local int *)a;
            local int *items = (local int *)b;
            size_t l = get_local_id(0);
            items[l] = (int)get_global_id(0);
            if (l == 0) *sum = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            atomic_add(sum, items[l]);
            barrier(CLK_LOCAL_MEM_FENCE);
            if (l == 0) o[get_group_id(0)] = *sum;
        }, 4u, n * 4);
    o[10] = r;
    // A size of 0 is refused.
    o[11] = enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), ^(local void *a) {}, 0u);
}
"#;

/// `__local` pointers of a block get memory of the sizes given to enqueue_kernel.
#[test]
fn blocks_with_local_memory() {
    let Some((e, dq)) = env() else { return };
    let p = build(&e, LOCALS, "-cl-std=CL2.0");
    let k = kernel(p, "locals");
    let o = e.buffer_from(&[-1i32; 12]);
    arg(k, 0, &o);
    arg(k, 1, &16u32);
    e.run(k, None, &[1], None);
    let r: Vec<i32> = e.read(o, 12);
    for g in 0..4 {
        let want: i32 = (16 * g..16 * g + 16).sum();
        assert_eq!(r[g as usize], want, "group {g}");
    }
    assert_eq!(r[10], 0);
    assert_eq!(r[11], CLK_INVALID_ARG_SIZE);
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

const CLK_INVALID_QUEUE: i32 = -102;
const CLK_INVALID_NDRANGE: i32 = -160;
const CLK_INVALID_EVENT_WAIT_LIST: i32 = -57;
const CLK_INVALID_ARG_SIZE: i32 = -51;

const ERRORS: &str = r#"
kernel void errors(global int *o) {
    queue_t q = get_default_queue();
    size_t g[2] = {4, 4}, big[2] = {4096, 4096};
    clk_event_t e;
    o[0] = enqueue_kernel(q, 0, ndrange_2D(g, big), ^{ o[9] = 1; });
    o[1] = enqueue_kernel(q, 0, ndrange_1D(0), ^{ o[9] = 1; });
    size_t tall[2] = {1, 1 << 20};
    o[5] = enqueue_kernel(q, 0, ndrange_2D(tall, tall), ^{ o[9] = 1; });
    o[2] = enqueue_kernel(q, 0, ndrange_1D(4), 1, NULL, &e, ^{ o[9] = 1; });
    queue_t none = CLK_NULL_QUEUE;
    o[3] = enqueue_kernel(none, 0, ndrange_1D(4), ^{ o[9] = 1; });
    o[4] = q == CLK_NULL_QUEUE;
}
// Every work-item enqueues until the queue is full: what was accepted runs once.
kernel void fill(global int *o, global int *ran) {
    size_t id = get_global_id(0);
    int accepted = 0, full = 0;
    for (int i = 0; i < 64; i++) {
        int r = enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), ^{ atomic_inc(&ran[id]); });
        if (r == CLK_SUCCESS) accepted++;
        else if (r == CLK_DEVICE_QUEUE_FULL) full++;
    }
    o[2 * id] = accepted;
    o[2 * id + 1] = full;
}
"#;

/// enqueue_kernel's error codes, with nothing run for a refused enqueue; a full device queue
/// refuses more and runs each accepted block once.
#[test]
fn enqueue_errors_and_a_full_queue() {
    let Some((e, dq)) = env() else { return };
    let p = build(&e, ERRORS, "-cl-std=CL2.0");
    let k = kernel(p, "errors");
    let o = e.buffer_from(&[7i32; 10]);
    arg(k, 0, &o);
    e.run(k, None, &[1], None);
    let r: Vec<i32> = e.read(o, 10);
    assert_eq!(
        r,
        [
            CLK_INVALID_NDRANGE,
            CLK_INVALID_NDRANGE,
            CLK_INVALID_EVENT_WAIT_LIST,
            CLK_INVALID_QUEUE,
            0,
            CLK_INVALID_NDRANGE,
            7,
            7,
            7,
            7
        ]
    );
    let fill = kernel(p, "fill");
    let items = 64usize;
    let o = e.buffer_from(&vec![0i32; 2 * items]);
    let ran = e.buffer_from(&vec![0i32; items]);
    arg(fill, 0, &o);
    arg(fill, 1, &ran);
    e.run(fill, None, &[items], None);
    let counts: Vec<i32> = e.read(o, 2 * items);
    let ran: Vec<i32> = e.read(ran, items);
    let accepted: i32 = counts.iter().step_by(2).sum();
    let full: i32 = counts.iter().skip(1).step_by(2).sum();
    assert_eq!(
        accepted + full,
        64 * items as i32,
        "every enqueue accepted or refused as full"
    );
    assert!(
        full > 0 && accepted > 0,
        "the default queue fills: {accepted} accepted"
    );
    for id in 0..items {
        assert_eq!(
            ran[id],
            counts[2 * id],
            "work-item {id}'s blocks ran once each"
        );
    }
    check!(clReleaseKernel(k));
    check!(clReleaseKernel(fill));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

/// Without a default device queue get_default_queue() is CLK_NULL_QUEUE and enqueuing to it
/// fails; a queue_t argument takes an on-device queue (CL_INVALID_DEVICE_QUEUE for a host
/// queue).
#[test]
fn no_default_queue_and_queue_arguments() {
    let e = Env::new();
    if !supported(e.dev) {
        return;
    }
    let src = r#"
        kernel void k(global int *o, queue_t q) {
            o[0] = get_default_queue() == CLK_NULL_QUEUE;
            o[1] = enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), ^{ o[3] = 5; });
            o[2] = enqueue_kernel(q, 0, ndrange_1D(1), ^{ o[3] = 6; });
        }"#;
    let p = build(&e, src, "-cl-std=CL2.0");
    let k = kernel(p, "k");
    let o = e.buffer_from(&[0i32; 4]);
    arg(k, 0, &o);
    let host = e.queue;
    let bad = unsafe {
        clSetKernelArg(
            k,
            1,
            std::mem::size_of::<cl_command_queue>(),
            (&host as *const cl_command_queue).cast(),
        )
    };
    assert_eq!(bad, CL_INVALID_DEVICE_QUEUE);
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0,
    ];
    let mut err = 0;
    let dq = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, props.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    // A queue_t argument's size is a cl_command_queue's (§5.9.2 clSetKernelArg).
    let short = unsafe { clSetKernelArg(k, 1, 4, (&dq as *const cl_command_queue).cast()) };
    assert_eq!(short, CL_INVALID_ARG_SIZE);
    arg(k, 1, &dq);
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<i32>(o, 4), [1, CLK_INVALID_QUEUE, 0, 6]);
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

/// The device's queries, on-device queue objects (the default one returned again, retained;
/// CL_QUEUE_SIZE, CL_QUEUE_DEVICE_DEFAULT, clSetDefaultDeviceCommandQueue), host commands
/// refused on them, and the block kernels hidden from the program's kernels.
#[test]
fn on_device_queues_and_queries() {
    let e = Env::new();
    if !supported(e.dev) {
        // Nothing about on-device queues is offered.
        assert_eq!(
            device_val::<cl_bitfield>(e.dev, CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES),
            0
        );
        assert_eq!(
            device_val::<cl_uint>(e.dev, CL_DEVICE_MAX_ON_DEVICE_QUEUES),
            0
        );
        return;
    }
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES);
    assert_eq!(
        caps, 3,
        "CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT"
    );
    let props: cl_bitfield = device_val(e.dev, CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES);
    assert_eq!(
        props,
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE
    );
    let preferred: cl_uint = device_val(e.dev, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE);
    let max: cl_uint = device_val(e.dev, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE);
    assert!(preferred >= 16 * 1024 && max >= 256 * 1024 && preferred <= max);
    assert!(device_val::<cl_uint>(e.dev, CL_DEVICE_MAX_ON_DEVICE_QUEUES) >= 1);
    assert!(device_val::<cl_uint>(e.dev, CL_DEVICE_MAX_ON_DEVICE_EVENTS) >= 1024);
    let features = feature_names(e.dev);
    assert!(features.contains("__opencl_c_device_enqueue"), "{features}");

    let create = |props: cl_bitfield, size: Option<cl_uint>| {
        let mut list = vec![CL_QUEUE_PROPERTIES as cl_queue_properties, props];
        if let Some(s) = size {
            list.extend([
                CL_QUEUE_SIZE as cl_queue_properties,
                s as cl_queue_properties,
            ]);
        }
        list.push(0);
        let mut err = 0;
        let q =
            unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, list.as_ptr(), &mut err) };
        (q, err)
    };
    let on = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    // On-device queues are out of order; the size is at most the maximum.
    assert_eq!(create(CL_QUEUE_ON_DEVICE, None).1, CL_INVALID_VALUE);
    assert_eq!(create(on, Some(max + 1)).1, CL_INVALID_VALUE);
    let (plain, err) = create(on, Some(64 * 1024));
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(queue_val::<cl_uint>(plain, CL_QUEUE_SIZE), 64 * 1024);
    assert!(queue_val::<cl_command_queue>(plain, CL_QUEUE_DEVICE_DEFAULT).is_null());
    let (default, err) = create(on | CL_QUEUE_ON_DEVICE_DEFAULT, None);
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(queue_val::<cl_uint>(default, CL_QUEUE_SIZE), preferred);
    let (again, err) = create(on | CL_QUEUE_ON_DEVICE_DEFAULT, None);
    assert_eq!(
        (again, err),
        (default, CL_SUCCESS),
        "the default device queue, again"
    );
    assert_eq!(queue_val::<cl_uint>(default, CL_QUEUE_REFERENCE_COUNT), 2);
    check!(clReleaseCommandQueue(again));
    assert_eq!(
        queue_val::<cl_command_queue>(plain, CL_QUEUE_DEVICE_DEFAULT),
        default
    );
    assert_eq!(
        queue_val::<cl_command_queue>(e.queue, CL_QUEUE_DEVICE_DEFAULT),
        default
    );
    check!(clSetDefaultDeviceCommandQueue(e.ctx, e.dev, plain));
    assert_eq!(
        queue_val::<cl_command_queue>(default, CL_QUEUE_DEVICE_DEFAULT),
        plain
    );
    // A host queue is no on-device queue, and on-device queues take no host commands.
    assert_eq!(
        unsafe { clSetDefaultDeviceCommandQueue(e.ctx, e.dev, e.queue) },
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(unsafe { clFinish(plain) }, CL_INVALID_COMMAND_QUEUE);
    let m = e.buffer_from(&[0u8; 16]);
    let mut byte = 0u8;
    let read = unsafe {
        clEnqueueReadBuffer(
            plain,
            m,
            CL_TRUE,
            0,
            1,
            (&mut byte as *mut u8).cast(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(read, CL_INVALID_COMMAND_QUEUE);
    assert_eq!(queue_val::<cl_context>(plain, CL_QUEUE_CONTEXT), e.ctx);
    assert_eq!(queue_val::<cl_device_id>(plain, CL_QUEUE_DEVICE), e.dev);
    assert_eq!(queue_val::<cl_bitfield>(plain, CL_QUEUE_PROPERTIES), on);
    assert_eq!(
        unsafe { clGetCommandQueueInfo(e.queue, CL_QUEUE_SIZE, 0, null_mut(), null_mut()) },
        CL_INVALID_COMMAND_QUEUE
    );

    // The program's kernels are the application's: not the block kernels.
    let p = build(&e, CAPTURES, "-cl-std=CL2.0");
    assert_eq!(program_str(p, CL_PROGRAM_KERNEL_NAMES), "parent");
    assert_eq!(program_val::<usize>(p, CL_PROGRAM_NUM_KERNELS), 1);
    let mut n = 0;
    check!(clCreateKernelsInProgram(p, 0, null_mut(), &mut n));
    assert_eq!(n, 1);
    let mut err = 0;
    let name = std::ffi::CString::new("__vkcl_child_0").unwrap();
    assert!(unsafe { clCreateKernel(p, name.as_ptr(), &mut err) }.is_null());
    assert_eq!(err, CL_INVALID_KERNEL_NAME);
    check!(clReleaseMemObject(m));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(default));
    check!(clReleaseCommandQueue(plain));
}

/// Where device-side enqueue is offered with everything else OpenCL C 2.0 requires (lavapipe),
/// OpenCL C 2.0 is claimed, and a 2.0 program that uses it builds.
#[test]
fn opencl_c_2_0_where_everything_it_requires_works() {
    let e = Env::new();
    let version = device_str(e.dev, CL_DEVICE_OPENCL_C_VERSION);
    let all = device_info(e.dev, CL_DEVICE_OPENCL_C_ALL_VERSIONS);
    // cl_name_version: a version (cl_uint) and a 64-byte name.
    let versions: Vec<u32> = all
        .chunks(68)
        .map(|c| u32::from_ne_bytes(c[..4].try_into().unwrap()))
        .collect();
    let two = versions.contains(&(2 << 22));
    assert_eq!(two, version.starts_with("OpenCL C 2.0"), "{version}");
    let numeric: u32 = device_val(e.dev, CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR);
    assert_eq!(numeric, if two { 2 << 22 } else { (1 << 22) | (2 << 12) });
    let features = feature_names(e.dev);
    for f in [
        "__opencl_c_device_enqueue",
        "__opencl_c_atomic_order_seq_cst",
        "__opencl_c_pipes",
        "__opencl_c_generic_address_space",
        "__opencl_c_program_scope_global_variables",
        "__opencl_c_work_group_collective_functions",
    ] {
        assert!(!two || features.contains(f), "2.0 claimed without {f}");
    }
    if device_str(e.dev, CL_DEVICE_NAME).starts_with("llvmpipe") && supported(e.dev) {
        assert!(two, "lavapipe has every feature of OpenCL C 2.0");
    }
}

/// Where the compiler device-side enqueue needs is missing (VKCL_CLANG naming no file), the
/// device offers none of it and says so through every door: on-device queues are refused
/// (CL_INVALID_QUEUE_PROPERTIES), clSetDefaultDeviceCommandQueue too (CL_INVALID_OPERATION:
/// no replaceable default), OpenCL C 2.0 is not claimed, and a program with a block fails to
/// build with a log, instead of building into something that cannot run.
#[test]
fn without_clang_none_of_it_is_offered() {
    const VAR: &str = "VKCL_TEST_WITHOUT_CLANG";
    if std::env::var_os(VAR).is_none() {
        let args = [(VAR, "1"), ("VKCL_CLANG", "/nonexistent/clang")];
        stdout_of_test_run_with("without_clang_none_of_it_is_offered", &args);
        return;
    }
    let e = Env::new();
    assert!(!supported(e.dev));
    assert_eq!(
        device_val::<cl_bitfield>(e.dev, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES),
        0
    );
    assert!(!feature_names(e.dev).contains("__opencl_c_device_enqueue"));
    let version = device_str(e.dev, CL_DEVICE_OPENCL_C_VERSION);
    assert!(!version.starts_with("OpenCL C 2.0"), "{version}");
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0,
    ];
    let mut err = 0;
    let q = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, props.as_ptr(), &mut err) };
    assert!(q.is_null());
    assert_eq!(err, CL_INVALID_QUEUE_PROPERTIES, "{}", err_name(err));
    let set = unsafe { clSetDefaultDeviceCommandQueue(e.ctx, e.dev, e.queue) };
    assert_eq!(set, CL_INVALID_OPERATION, "{}", err_name(set));
    let src = "kernel void k(global int *o) {
        enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), ^{ o[0] = 1; }); }";
    match build_program(e.ctx, e.dev, src, "-cl-std=CL3.0") {
        Ok(_) => panic!("a program with a block built without the compiler it needs"),
        Err((code, log)) => {
            assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
            assert!(!log.is_empty());
        }
    }
}

const SLOW_CHILDREN: &str = r#"
// The parent writes 1 to its slots; its children, two levels down, write 2 and then 3, so a
// command that ran before the grandchildren ended would see 1 or 2.
kernel void parent(global int *o, int base) {
    size_t id = get_global_id(0);
    o[base + id] = 1;
    enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1), ^{
        for (int i = 0; i < 1000; i++) o[base + id] = 2;
        enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1),
                       ^{ o[base + id] = 3; });
    });
}
kernel void copy(global int *o, int from, int to) {
    o[to + get_global_id(0)] = o[from + get_global_id(0)];
}
kernel void timed(global ulong *t) {
    clk_event_t e;
    enqueue_kernel(get_default_queue(), 0, ndrange_1D(256), 0, NULL, &e, ^{
        for (int i = 0; i < 100; i++) t[8 + get_global_id(0)] += i; });
    capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, t);
    release_event(e);
}
"#;

/// A parent's command (and its event) completes when its children have: the commands after
/// it on its queue, and commands of another queue waiting for its event, see what the
/// children wrote; capture_event_profiling_info gives a child's times.
#[test]
fn later_commands_wait_for_the_children() {
    let Some((e, dq)) = env() else { return };
    let p = build(&e, SLOW_CHILDREN, "-cl-std=CL2.0");
    let parent = kernel(p, "parent");
    let copy = kernel(p, "copy");
    let n = 16usize;
    let o = e.buffer_from(&vec![0i32; 8 * n]);
    arg(parent, 0, &o);
    arg(copy, 0, &o);
    // Three launches in a row with a copy after each, none waited for in between.
    for round in 0..3i32 {
        arg(parent, 1, &(2 * n as i32 * round));
        check!(clEnqueueNDRangeKernel(
            e.queue,
            parent,
            1,
            null(),
            &n,
            null(),
            0,
            null(),
            null_mut()
        ));
        arg(copy, 1, &(2 * n as i32 * round));
        arg(copy, 2, &(2 * n as i32 * round + n as i32));
        check!(clEnqueueNDRangeKernel(
            e.queue,
            copy,
            1,
            null(),
            &n,
            null(),
            0,
            null(),
            null_mut()
        ));
    }
    check!(clFinish(e.queue));
    let r: Vec<i32> = e.read(o, 6 * n);
    assert!(r.iter().all(|&v| v == 3), "{r:?}");

    // Another queue waits for the parent's event.
    let mut err = 0;
    let other = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
    arg(parent, 1, &(6 * n as i32));
    let mut done: cl_event = null_mut();
    check!(clEnqueueNDRangeKernel(
        e.queue,
        parent,
        1,
        null(),
        &n,
        null(),
        1,
        &gate,
        &mut done
    ));
    arg(copy, 1, &(6 * n as i32));
    arg(copy, 2, &(7 * n as i32));
    check!(clEnqueueNDRangeKernel(
        other,
        copy,
        1,
        null(),
        &n,
        null(),
        1,
        &done,
        null_mut()
    ));
    check!(clFlush(other));
    check!(clSetUserEventStatus(gate, CL_COMPLETE));
    check!(clFinish(other));
    assert_eq!(
        event_val::<cl_int>(done, CL_EVENT_COMMAND_EXECUTION_STATUS),
        CL_COMPLETE
    );
    let r: Vec<i32> = e.read(o, 8 * n);
    assert!(r[7 * n..].iter().all(|&v| v == 3), "{:?}", &r[7 * n..]);
    check!(clReleaseEvent(done));
    check!(clReleaseEvent(gate));

    let timed = kernel(p, "timed");
    let t = e.buffer_from(&vec![0u64; 8 + 256]);
    arg(timed, 0, &t);
    e.run(timed, None, &[1], None);
    let times: Vec<u64> = e.read(t, 8 + 256);
    assert!(
        times[0] > 0 && times[1] >= times[0],
        "profiling info {:?}",
        &times[..2]
    );
    assert!(times[0] < 60_000_000_000, "{} ns", times[0]);
    assert!(times[8..].iter().all(|&v| v == 4950));
    check!(clReleaseMemObject(o));
    check!(clReleaseMemObject(t));
    check!(clReleaseKernel(parent));
    check!(clReleaseKernel(copy));
    check!(clReleaseKernel(timed));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(other));
    check!(clReleaseCommandQueue(dq));
}

/// A program binary of a device-enqueue program builds and runs again (its block kernels
/// still hidden and launched); clCompileProgram of such a source fails with a log that says
/// to build it with clBuildProgram.
#[test]
fn binaries_and_separate_compilation() {
    let Some((e, dq)) = env() else { return };
    let p = build(&e, NESTED, "-cl-std=CL2.0");
    let bins = binaries(p);
    let (q, status, err) = from_binaries(e.ctx, &[e.dev], &[&bins[0]]);
    assert_eq!((status[0], err), (CL_SUCCESS, CL_SUCCESS));
    check!(clBuildProgram(q, 1, &e.dev, null(), None, null_mut()));
    assert_eq!(
        program_str(q, CL_PROGRAM_KERNEL_NAMES),
        program_str(p, CL_PROGRAM_KERNEL_NAMES)
    );
    let k = kernel(q, "nested");
    let o = e.buffer_from(&[0i32; 1]);
    arg(k, 0, &o);
    arg(k, 1, &4i32);
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<i32>(o, 1)[0], 1 + 2 * 2 + 3 * 4 + 4 * 8);

    let src = std::ffi::CString::new(NESTED).unwrap();
    let ptr = src.as_ptr();
    let mut err = 0;
    let c = unsafe { clCreateProgramWithSource(e.ctx, 1, &ptr, null(), &mut err) };
    let opts = std::ffi::CString::new("-cl-std=CL2.0").unwrap();
    let r = unsafe {
        clCompileProgram(
            c,
            1,
            &e.dev,
            opts.as_ptr(),
            0,
            null(),
            null(),
            None,
            null_mut(),
        )
    };
    assert_eq!(r, CL_COMPILE_PROGRAM_FAILURE);
    let log = build_str(c, e.dev, CL_PROGRAM_BUILD_LOG);
    assert!(log.contains("clBuildProgram"), "{log}");
    check!(clReleaseProgram(c));
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(q));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

/// Blocks called as functions (OpenCL C 2.0 §6.12: blocks without enqueue), each kernel
/// writing 0 where its block gave the right value: blocks at program scope, in kernels, in
/// functions, in statements; captures taken when the literal is made; nested blocks and their
/// captures; arguments of every kind (structs, a union, an enum, an array typedef, thirteen
/// ints, private, global and constant pointers), returned structs and pointers; captured
/// pointers to private memory, read and written through; blocks in
/// loops, conditions and switches; a block with a barrier and atomics.
#[test]
fn blocks_called_directly() {
    let e = Env::new();
    if !supported(e.dev) {
        return;
    }
    let programs: [(&str, &str); 13] = [
        (
            "scopes",
            r#"
            constant int factor = 5;
            int (^constant at_program_scope)(int) = ^int(int x) { return factor * x; };
            int twice_plus(int a) {
                int add = 4;
                int (^f)(int) = ^(int x) { return 2 * x + add; };
                return f(a);
            }
            kernel void scopes(global int *res) {
                size_t id = get_global_id(0);
                int k = 3;
                int (^times_k)(int) = ^(int x) { return x * k; };
                k = 100;  // the block captured 3
                int r = at_program_scope(2) + times_k(7) + twice_plus(10);
                r += ^int(int v) { return v - 1; }(8);
                res[id] = r - (10 + 21 + 24 + 7);
            }"#,
        ),
        (
            "nested",
            r#"
            kernel void nested(global int *res) {
                int a = 2, b = 3;
                volatile int c = 5;
                int (^outer)(int) = ^(int x) {
                    int (^inner)(int) = ^(int y) { return a * y; };
                    return b * inner(x) + ^(int z) { return c * z; }(1);
                };
                res[get_global_id(0)] = outer((int)get_global_id(0) + 1) - (6 * ((int)get_global_id(0) + 1) + 5);
            }"#,
        ),
        (
            "structs",
            r#"
            struct pair { short s; long l; };
            struct two { struct pair a, b; };
            kernel void structs(global int *res) {
                long (^product)(struct pair, struct two) = ^long(struct pair p, struct two t) {
                    return p.s * p.l * t.a.s * t.a.l * t.b.s * t.b.l;
                };
                struct pair p = {2, 3};
                struct two t = {{4, 5}, {6, 7}};
                struct pair (^make)(int) = ^struct pair(int v) { struct pair q = {(short)v, 10L * v}; return q; };
                res[get_global_id(0)] = (int)(product(p, t) - 5040) + (int)(make(4).l - 40);
            }"#,
        ),
        (
            "mixed",
            r#"
            union num { long l; float f; };
            enum color { RED, GREEN, BLUE };
            typedef char three[3];
            kernel void mixed(global int *res) {
                int (^f)(int, three, union num, enum color, int, int, int, int, int, int, int, int, int, int, int, int, int) =
                    ^int(int a, three t, union num n, enum color c, int i1, int i2, int i3, int i4, int i5, int i6,
                         int i7, int i8, int i9, int i10, int i11, int i12, int i13) {
                        return a * t[0] * t[1] * t[2] * (int)n.l * c - i1 - i2 - i3 - i4 - i5 - i6 - i7 - i8 - i9 - i10 - i11 - i12 - i13;
                    };
                three t = {1, 2, 3};
                union num n; n.l = 4;
                res[get_global_id(0)] = f(-5, t, n, BLUE, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13) + 331;
            }"#,
        ),
        (
            "pointers",
            r#"
            constant int seven = 7;
            kernel void pointers(global int *res) {
                size_t id = get_global_id(0);
                int (^deref)(int *, int *) = ^int(int *x, int *y) { return *x * *y; };
                int a[2] = {6, 7};
                global int *(^mark)(global int *) = ^global int *(global int *r) { r[id] = 9; return r; };
                constant int *(^same)(constant int *) = ^(constant int *p) { return p; };
                int r = deref(a, a + 1) - 42 + (same(&seven) == &seven ? 0 : 1);
                mark(res)[id] += r - 9;
            }"#,
        ),
        (
            "private_captures",
            r#"
            // Captured pointers to private memory: an array (read and written through the
            // capture), a scalar, a pointer a nested block moves back (the conformance suite's
            // block_typedef_kernel shape).
            kernel void private_captures(global int *res) {
                size_t id = get_global_id(0);
                int a[4] = {3, 4, 4, 1};
                a[(id & 1) * 2] = 4;
                int *p = a;
                int x = (int)id;
                int *px = &x;
                int (^read)(void) = ^{ return p[3] + *px; };
                void (^write)(int) = ^(int v) { p[2] = v; *px = v; };
                typedef int *(^step_t)(int *);
                step_t back = ^(int *q) {
                    step_t one = ^(int *n) { return n - 1; };
                    return q + *(one(p + 4));
                };
                int r = read() - 1 - (int)id;
                write(9);
                r += a[2] - 9 + x - 9;
                r += *back(a) - 4;
                res[id] = r;
            }"#,
        ),
        (
            "loops",
            r#"
            kernel void loops(global int *res) {
                int m = 2;
                int (^twice)(int) = ^(int x) { return x * m; };
                int r = 0;
                for (int i = twice(2); i < twice(5); i = i + twice(1)) r += i;          // 4 6 8
                int j = 3;
                while (twice(j)) { r -= j; j--; }                                     // -6
                do { int (^inc)(int) = ^(int x) { return x + 1; }; r = inc(r); } while (r < 13);
                switch (twice(3)) { case 6: r += ^(int x) { return x; }(7); break; default: r = 1000; }
                res[get_global_id(0)] = r - 20 + (twice(1) == 2 ? 0 : 99);
            }"#,
        ),
        (
            "typedefs",
            r#"
            typedef int (^unary)(int);
            constant unary neg = ^(int x) { return -x; };
            kernel void typedefs(global int *res) {
                typedef float (^fblock)(float);
                const fblock half_of = ^(float f) { return f * 0.5f; };
                unary sq = ^(int x) { return x * x; };
                int sum = -1;
                for (int i = 0; i < 3; i++) {
                    const unary next = ^(int x) { return x + i + 1; };
                    sum = next(sum);
                }
                res[get_global_id(0)] = neg(sq(3)) + 9 + (int)half_of(4.0f) - 2 + sum - 5;
            }"#,
        ),
        (
            "empty",
            r#"
            kernel void empty(global int *res) {
                void (^nothing)(void) = ^{};
                res[get_global_id(0)] = -1;
                nothing();
                int b = 3;
                res[get_global_id(0)] = ^(int a) { return (int)abs(a - b); }(2) - 1;
            }"#,
        ),
        (
            "barrier",
            r#"
            kernel void barrier_in_block(global int *res) {
                size_t id = get_global_id(0), first = get_group_id(0) * get_local_size(0);
                res[id] = (int)get_local_size(0);
                barrier(CLK_GLOBAL_MEM_FENCE);
                int (^leave)(void) = ^{
                    atomic_dec(res + first);
                    barrier(CLK_GLOBAL_MEM_FENCE);
                    return res[first];
                };
                res[id] = leave();
            }"#,
        ),
        (
            "literal_in_function",
            r#"
            int f(void) { return ^(int i) { return ^(ushort u) { return (int)u + i; }(3); }(7) - 10; }
            kernel void literal_in_function(global int *res) { res[get_global_id(0)] = f(); }"#,
        ),
        (
            "statement",
            r#"
            kernel void statement(global int *res) {
                int flag = 1, sum = 0;
                if (flag) {
                    typedef int (^b_t)(int);
                    const b_t outer = ^(int v) { b_t in = ^(int w) { return w + 1; }; return v + in(1); };
                    sum = outer(sum);
                }
                res[get_global_id(0)] = sum - 2;
            }"#,
        ),
        (
            "goto",
            r#"
            kernel void goto_in_block(global int *res) {
                int (^count)(int) = ^(int n) {
                    int r = 1;
                    for (int i = 0; i < n; i++) {
                        switch (i) {
                        case 0: case 1: case 2: r += i; break;
                        case 3: r += r < n ? i : 2 * i; break;
                        case 4: while (1) { r++; if (r) goto out; } break;
                        default: return 777;
                        }
                    }
                    out:;
                    while (n) { n--; if (n % 2 == 0) continue; r++; }
                    return r;
                };
                res[get_global_id(0)] = count(7) - 11;
            }"#,
        ),
    ];
    let n = 256usize;
    for (name, src) in programs {
        let p = build(&e, src, "-cl-std=CL2.0");
        let k = kernel(
            p,
            if name == "barrier" {
                "barrier_in_block"
            } else if name == "goto" {
                "goto_in_block"
            } else {
                name
            },
        );
        let res = e.buffer_from(&vec![-1i32; n]);
        arg(k, 0, &res);
        e.run(k, None, &[n], Some(&[16]));
        let r: Vec<i32> = e.read(res, n);
        assert!(r.iter().all(|&v| v == 0), "{name}: {r:?}");
        check!(clReleaseMemObject(res));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

const PROFILED: &str = r#"
global ulong times[4];
kernel void profiled(global ulong *o) {
    clk_event_t done, gate = create_user_event();
    enqueue_kernel(get_default_queue(), 0, ndrange_1D(64), 0, NULL, &done, ^{
        for (int i = 0; i < 100; i++) o[8 + get_global_id(0)] += i; });
    // After it ended (a later round): the times are there at once, for the block to read.
    enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), 1, &done, NULL, ^{
        capture_event_profiling_info(done, CLK_PROFILING_COMMAND_EXEC_TIME, times);
        o[0] = times[0]; o[1] = times[1];
        set_user_event_status(gate, CL_COMPLETE);
    });
    // Before it ran: written once it has.
    capture_event_profiling_info(done, CLK_PROFILING_COMMAND_EXEC_TIME, times + 2);
    enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), 1, &gate, NULL, ^{ o[2] = times[2]; o[3] = times[3]; });
}
"#;

/// capture_event_profiling_info of a command that has ended gives its times at once; of one
/// that has not, once it has.
#[test]
fn profiling_info_captured_before_and_after_the_command() {
    let Some((e, dq)) = env() else { return };
    let p = build(&e, PROFILED, "-cl-std=CL2.0");
    let k = kernel(p, "profiled");
    let o = e.buffer_from(&vec![0u64; 8 + 64]);
    arg(k, 0, &o);
    e.run(k, None, &[1], None);
    let r: Vec<u64> = e.read(o, 8 + 64);
    assert!(
        r[..4].iter().all(|&t| t > 0 && t < 60_000_000_000),
        "{:?}",
        &r[..4]
    );
    assert!(r[8..].iter().all(|&v| v == 4950));
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

const FAN_OUT: &str = r#"
void spread(global int *counts, int level, int depth, int slot) {
    atomic_inc(&counts[level]);
    if (level + 1 < depth)
        for (int i = 0; i < 4; i++)
            enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1),
                           ^{ spread(counts, level + 1, depth, 4 * slot + i); });
}
kernel void fan_out(global int *counts, int depth) {
    spread(counts, 0, depth, (int)get_global_id(0));
}
"#;

/// A round of thousands of children: 64 work-items, each child enqueueing four more, four
/// levels deep (4,096 children in the last round, as the conformance suite's nested launches
/// have) into a default device queue of the maximum size.
#[test]
fn thousands_of_children_in_one_round() {
    let e = Env::new();
    if !supported(e.dev) {
        return;
    }
    let max: cl_uint = device_val(e.dev, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE);
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        CL_QUEUE_SIZE as cl_queue_properties,
        max as cl_queue_properties,
        0,
    ];
    let mut err = 0;
    let dq = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, props.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let p = build(&e, FAN_OUT, "-cl-std=CL2.0");
    let k = kernel(p, "fan_out");
    let counts = e.buffer_from(&[0i32; 4]);
    arg(k, 0, &counts);
    arg(k, 1, &4i32);
    e.run(k, None, &[64], None);
    assert_eq!(e.read::<i32>(counts, 4), [64, 256, 1024, 4096]);
    check!(clReleaseMemObject(counts));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseCommandQueue(dq));
}

/// printf in a child kernel: its output reaches stdout, after the parent's. The kernels run
/// in a child process (this test again) whose stdout the test reads.
#[test]
fn children_print() {
    if std::env::var_os("VKCL_TEST_PRINTF_CHILD").is_some() {
        let Some((e, dq)) = env() else { return };
        let src = r#"
            kernel void parent(int n) {
                printf("parent %d\n", n);
                enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1),
                               ^{ printf("child of %d: %.2f\n", n, n * 0.5f); });
            }"#;
        let p = build(&e, src, "-cl-std=CL2.0");
        let k = kernel(p, "parent");
        arg(k, 0, &3i32);
        e.run(k, None, &[1], None);
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
        check!(clReleaseCommandQueue(dq));
        return;
    }
    if !supported(device()) {
        return;
    }
    let text = stdout_of_test_run("children_print", "VKCL_TEST_PRINTF_CHILD");
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            ["parent ", "child "]
                .iter()
                .find_map(|w| l.find(w).map(|i| &l[i..]))
        })
        .collect();
    assert_eq!(lines, ["parent 3", "child of 3: 1.50"], "{text}");
}
