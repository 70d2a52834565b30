//! Markers and barriers, event callbacks, sub-buffers, destructor callbacks, migration and
//! kernel cloning.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Mutex;

type EventNotify = Option<unsafe extern "C" fn(cl_event, cl_int, *mut c_void)>;
type MemNotify = Option<unsafe extern "C" fn(cl_mem, *mut c_void)>;
type ContextNotify = Option<unsafe extern "C" fn(cl_context, *mut c_void)>;

#[repr(C)]
struct BufferRegion {
    origin: usize,
    size: usize,
}

#[link(name = "OpenCL")]
extern "C" {
    fn clEnqueueMarkerWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        l: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueBarrierWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        l: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueMarker(q: cl_command_queue, e: *mut cl_event) -> cl_int;
    fn clEnqueueBarrier(q: cl_command_queue) -> cl_int;
    fn clEnqueueWaitForEvents(q: cl_command_queue, n: cl_uint, l: *const cl_event) -> cl_int;
    fn clSetEventCallback(e: cl_event, ty: cl_int, f: EventNotify, ud: *mut c_void) -> cl_int;
    fn clCreateSubBuffer(
        m: cl_mem,
        flags: cl_bitfield,
        ty: cl_uint,
        info: *const c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clSetMemObjectDestructorCallback(m: cl_mem, f: MemNotify, ud: *mut c_void) -> cl_int;
    fn clSetContextDestructorCallback(c: cl_context, f: ContextNotify, ud: *mut c_void) -> cl_int;
    fn clEnqueueMigrateMemObjects(
        q: cl_command_queue,
        n: cl_uint,
        m: *const cl_mem,
        flags: cl_bitfield,
        nw: cl_uint,
        wl: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clCloneKernel(k: cl_kernel, err: *mut cl_int) -> cl_kernel;
    fn clGetEventProfilingInfo(
        e: cl_event,
        name: cl_uint,
        sz: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
}

const CL_COMMAND_MARKER: cl_uint = 0x11FE;
const CL_COMMAND_BARRIER: cl_uint = 0x1205;
const CL_COMMAND_MIGRATE_MEM_OBJECTS: cl_uint = 0x1206;
const CL_EVENT_COMMAND_TYPE: cl_uint = 0x11D1;
const CL_EVENT_COMMAND_EXECUTION_STATUS: cl_uint = 0x11D3;
const CL_SUBMITTED_: cl_int = 2;
const CL_RUNNING_: cl_int = 1;
const CL_BUFFER_CREATE_TYPE_REGION: cl_uint = 0x1220;
const CL_MIGRATE_MEM_OBJECT_HOST: cl_bitfield = 1;

fn event_status(e: cl_event) -> cl_int {
    let mut s: cl_int = -1;
    check!(clGetEventInfo(
        e,
        CL_EVENT_COMMAND_EXECUTION_STATUS,
        4,
        (&mut s as *mut cl_int).cast(),
        null_mut()
    ));
    s
}

fn command_type(e: cl_event) -> cl_uint {
    let mut t: cl_uint = 0;
    check!(clGetEventInfo(
        e,
        CL_EVENT_COMMAND_TYPE,
        4,
        (&mut t as *mut cl_uint).cast(),
        null_mut()
    ));
    t
}

#[test]
fn markers_and_barriers_complete_after_earlier_commands() {
    let e = Env::new();
    let n = 1 << 16;
    let m = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let v: u32 = 0x1234_5678;
    check!(clEnqueueFillBuffer(
        e.queue,
        m,
        (&v as *const u32).cast(),
        4,
        0,
        n * 4,
        0,
        null(),
        null_mut()
    ));
    let mut marker = null_mut();
    check!(clEnqueueMarkerWithWaitList(e.queue, 0, null(), &mut marker));
    assert_eq!(command_type(marker), CL_COMMAND_MARKER);
    let mut barrier = null_mut();
    check!(clEnqueueBarrierWithWaitList(
        e.queue,
        1,
        &marker,
        &mut barrier
    ));
    assert_eq!(command_type(barrier), CL_COMMAND_BARRIER);
    check!(clWaitForEvents(1, &barrier));
    assert_eq!(event_status(marker), CL_COMPLETE);
    assert_eq!(e.read::<u32>(m, n), vec![v; n]);
    // 1.x variants.
    let mut old = null_mut();
    check!(clEnqueueMarker(e.queue, &mut old));
    check!(clEnqueueBarrier(e.queue));
    check!(clEnqueueWaitForEvents(e.queue, 1, &old));
    check_err!(clEnqueueMarker(e.queue, null_mut()), CL_INVALID_VALUE);
    check_err!(clEnqueueWaitForEvents(e.queue, 0, null()), CL_INVALID_VALUE);
    check_err!(
        clEnqueueMarkerWithWaitList(e.queue, 1, null(), null_mut()),
        CL_INVALID_EVENT_WAIT_LIST
    );
    check!(clFinish(e.queue));
    for ev in [marker, barrier, old] {
        check!(clReleaseEvent(ev));
    }
    check!(clReleaseMemObject(m));
}

/// The first `n` uints of `m`, read on `q` (blocking) after `event`.
fn read_after(q: cl_command_queue, m: cl_mem, n: usize, event: cl_event) -> Vec<u32> {
    let mut out = vec![0u32; n];
    check!(clEnqueueReadBuffer(
        q,
        m,
        CL_TRUE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        1,
        &event,
        null_mut()
    ));
    out
}

#[test]
fn a_wait_list_orders_commands_across_queues() {
    let e = Env::new();
    let mut err = 0;
    let q2 = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let n = 1 << 18;
    let m = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let v: u32 = 7;
    let mut filled = null_mut();
    check!(clEnqueueFillBuffer(
        e.queue,
        m,
        (&v as *const u32).cast(),
        4,
        0,
        n * 4,
        0,
        null(),
        &mut filled
    ));
    // The read on the second queue waits (GPU-side) for the fill on the first.
    let out = read_after(q2, m, n, filled);
    assert!(out.iter().all(|&x| x == v));
    check!(clReleaseEvent(filled));
    check!(clReleaseMemObject(m));
    check!(clReleaseCommandQueue(q2));
}

/// Queues created after others were released (whose timelines they reuse, going on from the
/// values those reached) order, wait and complete their commands as the first ones did.
#[test]
fn queues_created_after_released_ones_work_the_same() {
    let e = Env::new();
    let n = 1 << 16;
    let m = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let mut err = 0;
    for round in 0..4u32 {
        let q1 = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
        assert_eq!(err, CL_SUCCESS);
        let q2 = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
        assert_eq!(err, CL_SUCCESS);
        // Advance q1's timeline by a different number of commands each round.
        for i in 0..=round {
            let v = 100 * round + i;
            check!(clEnqueueFillBuffer(
                q1,
                m,
                (&v as *const u32).cast(),
                4,
                0,
                n * 4,
                0,
                null(),
                null_mut()
            ));
            check!(clFlush(q1));
        }
        let mut last = null_mut();
        check!(clEnqueueMarkerWithWaitList(q1, 0, null(), &mut last));
        // q2 waits (GPU-side) for q1's last command, then reads.
        let out = read_after(q2, m, n, last);
        let want = 100 * round + round;
        assert!(out.iter().all(|&x| x == want), "round {round}");
        assert_eq!(event_status(last), CL_COMPLETE as cl_int, "round {round}");
        check!(clReleaseEvent(last));
        check!(clReleaseCommandQueue(q1));
        check!(clReleaseCommandQueue(q2));
    }
    check!(clReleaseMemObject(m));
}

static CALLS: Mutex<Vec<(usize, cl_int)>> = Mutex::new(Vec::new());

unsafe extern "C" fn record(_e: cl_event, status: cl_int, user: *mut c_void) {
    CALLS.lock().unwrap().push((user as usize, status));
}

#[test]
fn event_callbacks_run_once_each_in_status_order() {
    let e = Env::new();
    let m = e.buffer(CL_MEM_READ_WRITE, 4096, null_mut());
    let data = vec![1u8; 4096];
    // The write waits for a user event, so that it is pending while the callbacks are set (a
    // write on an idle queue may complete at once).
    let mut err = 0;
    let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let mut ev = null_mut();
    check!(clEnqueueWriteBuffer(
        e.queue,
        m,
        CL_FALSE,
        0,
        4096,
        data.as_ptr().cast(),
        1,
        &gate,
        &mut ev
    ));
    let tag = 0x5eed_0000usize;
    check!(clSetEventCallback(
        ev,
        CL_COMPLETE,
        Some(record),
        (tag + 3) as *mut c_void
    ));
    check!(clSetEventCallback(
        ev,
        CL_RUNNING_,
        Some(record),
        (tag + 2) as *mut c_void
    ));
    check!(clSetEventCallback(
        ev,
        CL_SUBMITTED_,
        Some(record),
        (tag + 1) as *mut c_void
    ));
    check_err!(
        clSetEventCallback(ev, CL_SUBMITTED_, None, null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clSetEventCallback(ev, 3, Some(record), null_mut()),
        CL_INVALID_VALUE
    );
    // Released before it completes: the callbacks still run, with a valid handle.
    check!(clReleaseEvent(ev));
    check!(clSetUserEventStatus(gate, CL_COMPLETE));
    check!(clReleaseEvent(gate));
    check!(clFinish(e.queue));
    // Callbacks run on vkcl's completion thread: give it a moment after clFinish.
    let mine = || {
        CALLS
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.0 & !0xff == tag)
            .copied()
            .collect::<Vec<_>>()
    };
    for _ in 0..200 {
        if mine().len() == 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(
        mine(),
        vec![
            (tag + 1, CL_SUBMITTED_),
            (tag + 2, CL_RUNNING_),
            (tag + 3, CL_COMPLETE)
        ]
    );
    // A callback registered on a complete event runs at once.
    let mut ev2 = null_mut();
    check!(clEnqueueMarkerWithWaitList(e.queue, 0, null(), &mut ev2));
    check!(clWaitForEvents(1, &ev2));
    check!(clSetEventCallback(
        ev2,
        CL_COMPLETE,
        Some(record),
        (tag + 4) as *mut c_void
    ));
    assert_eq!(mine().last(), Some(&(tag + 4, CL_COMPLETE)));
    check!(clReleaseEvent(ev2));
    check!(clReleaseMemObject(m));
}

fn sub_buffer(m: cl_mem, flags: cl_bitfield, origin: usize, size: usize) -> Result<cl_mem, cl_int> {
    let region = BufferRegion { origin, size };
    let mut err = 0;
    let s = unsafe {
        clCreateSubBuffer(
            m,
            flags,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const BufferRegion).cast(),
            &mut err,
        )
    };
    if err == CL_SUCCESS {
        Ok(s)
    } else {
        assert!(s.is_null());
        Err(err)
    }
}

#[test]
fn sub_buffers_alias_their_parent() {
    let e = Env::new();
    let align = {
        let mut bits: cl_uint = 0;
        check!(clGetDeviceInfo(
            e.dev,
            0x1019, /* MEM_BASE_ADDR_ALIGN */
            4,
            (&mut bits as *mut u32).cast(),
            null_mut()
        ));
        bits as usize / 8
    };
    let n = 4 * align;
    let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
    let parent = e.buffer_from(&data);
    let sub = sub_buffer(parent, 0, align, align).expect("aligned sub-buffer");
    assert_eq!(e.read::<u8>(sub, align), data[align..2 * align].to_vec());
    // Writes through the sub-buffer land in the parent.
    e.write(sub, &vec![0xAAu8; align]);
    let all = e.read::<u8>(parent, n);
    assert!(all[align..2 * align].iter().all(|&b| b == 0xAA));
    assert_eq!(all[..align], data[..align]);
    // A kernel sees the sub-buffer from its origin.
    let p = e.program(
        "kernel void inc(global uchar* b) { b[get_global_id(0)] += 1; }",
        "",
    );
    let k = kernel(p, "inc");
    arg(k, 0, &sub);
    e.run(k, None, &[align], None);
    let all = e.read::<u8>(parent, n);
    assert!(all[align..2 * align].iter().all(|&b| b == 0xAB));
    assert_eq!(all[2 * align..], data[2 * align..]);
    // Info: associated object and offset.
    let mut assoc: cl_mem = null_mut();
    check!(clGetMemObjectInfo(
        sub,
        CL_MEM_ASSOCIATED_MEMOBJECT,
        8,
        (&mut assoc as *mut cl_mem).cast(),
        null_mut()
    ));
    assert_eq!(assoc, parent);
    let mut off = 0usize;
    check!(clGetMemObjectInfo(
        sub,
        CL_MEM_OFFSET,
        8,
        (&mut off as *mut usize).cast(),
        null_mut()
    ));
    assert_eq!(off, align);
    // Errors.
    if align > 1 {
        assert_eq!(
            sub_buffer(parent, 0, 1, 16),
            Err(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        );
    }
    assert_eq!(sub_buffer(parent, 0, 0, 0), Err(CL_INVALID_BUFFER_SIZE));
    assert_eq!(sub_buffer(parent, 0, 0, n + 1), Err(CL_INVALID_VALUE));
    assert_eq!(sub_buffer(sub, 0, 0, 16), Err(CL_INVALID_MEM_OBJECT));
    assert_eq!(
        sub_buffer(parent, CL_MEM_COPY_HOST_PTR, 0, 16),
        Err(CL_INVALID_VALUE)
    );
    let ro = e.buffer(CL_MEM_READ_ONLY, n, null_mut());
    assert_eq!(
        sub_buffer(ro, CL_MEM_WRITE_ONLY, 0, 16),
        Err(CL_INVALID_VALUE)
    );
    let ro_sub = sub_buffer(ro, 0, 0, 16).unwrap();
    let mut flags: cl_bitfield = 0;
    check!(clGetMemObjectInfo(
        ro_sub,
        CL_MEM_FLAGS,
        8,
        (&mut flags as *mut u64).cast(),
        null_mut()
    ));
    assert_eq!(
        flags & CL_MEM_READ_ONLY,
        CL_MEM_READ_ONLY,
        "access flags are inherited"
    );
    for m in [ro_sub, ro, sub, parent] {
        check!(clReleaseMemObject(m));
    }
    unsafe {
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

static DESTROYED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn mem_destroyed(_m: cl_mem, user: *mut c_void) {
    DESTROYED.lock().unwrap().push(user as usize);
}

unsafe extern "C" fn context_destroyed(_c: cl_context, user: *mut c_void) {
    DESTROYED.lock().unwrap().push(user as usize);
}

#[test]
fn destructor_callbacks_run_after_the_last_use_in_reverse_order() {
    let dev = device();
    let mut err = 0;
    let ctx = unsafe { clCreateContext(null(), 1, &dev, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let m = unsafe { clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let base = 0xd00d_0000usize;
    check!(clSetMemObjectDestructorCallback(
        m,
        Some(mem_destroyed),
        (base + 1) as *mut c_void
    ));
    check!(clSetMemObjectDestructorCallback(
        m,
        Some(mem_destroyed),
        (base + 2) as *mut c_void
    ));
    check!(clSetContextDestructorCallback(
        ctx,
        Some(context_destroyed),
        (base + 3) as *mut c_void
    ));
    check_err!(
        clSetMemObjectDestructorCallback(m, None, null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clSetContextDestructorCallback(ctx, None, null_mut()),
        CL_INVALID_VALUE
    );
    let mine = || {
        DESTROYED
            .lock()
            .unwrap()
            .iter()
            .filter(|&&x| x & !0xff == base)
            .copied()
            .collect::<Vec<_>>()
    };
    check!(clReleaseMemObject(m));
    assert_eq!(mine(), vec![base + 2, base + 1]);
    check!(clReleaseContext(ctx));
    assert_eq!(mine(), vec![base + 2, base + 1, base + 3]);
}

#[test]
fn migrate_mem_objects_orders_like_a_command() {
    let e = Env::new();
    let m = e.buffer_from(&[1u32, 2, 3, 4]);
    let mut ev = null_mut();
    check!(clEnqueueMigrateMemObjects(
        e.queue,
        1,
        &m,
        CL_MIGRATE_MEM_OBJECT_HOST,
        0,
        null(),
        &mut ev
    ));
    check!(clWaitForEvents(1, &ev));
    assert_eq!(command_type(ev), CL_COMMAND_MIGRATE_MEM_OBJECTS);
    check_err!(
        clEnqueueMigrateMemObjects(e.queue, 0, null(), 0, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueMigrateMemObjects(e.queue, 1, &m, 1 << 7, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(e.read::<u32>(m, 4), vec![1, 2, 3, 4]);
    check!(clReleaseEvent(ev));
    check!(clReleaseMemObject(m));
}

#[test]
fn cloned_kernels_keep_the_arguments_set_so_far() {
    let e = Env::new();
    let p = e.program(
        "kernel void fill(global int* b, int v) { b[get_global_id(0)] = v; }",
        "",
    );
    let k = kernel(p, "fill");
    let a = e.buffer(CL_MEM_READ_WRITE, 64 * 4, null_mut());
    arg(k, 0, &a);
    arg(k, 1, &5i32);
    let mut err = 0;
    let c = unsafe { clCloneKernel(k, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    // Changing the original does not change the clone.
    arg(k, 1, &9i32);
    e.run(c, None, &[64], None);
    assert_eq!(e.read::<i32>(a, 64), vec![5; 64]);
    e.run(k, None, &[64], None);
    assert_eq!(e.read::<i32>(a, 64), vec![9; 64]);
    unsafe {
        clReleaseKernel(c);
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseMemObject(a);
    }
}

const CL_QUEUE_PROPERTIES: cl_queue_properties = 0x1093;
const CL_QUEUE_PROFILING_ENABLE: cl_queue_properties = 1 << 1;
const CL_PROFILING_INFO_NOT_AVAILABLE_: cl_int = -7;

fn profile(e: cl_event) -> Vec<u64> {
    (0x1280..=0x1284)
        .map(|name| {
            let mut t = 0u64;
            check!(clGetEventProfilingInfo(
                e,
                name,
                8,
                (&mut t as *mut u64).cast(),
                null_mut()
            ));
            t
        })
        .collect()
}

#[test]
fn profiling_times_are_ordered_and_measure_the_command() {
    let e = Env::new();
    let props = [CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0];
    let mut err = 0;
    let q = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, props.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let p = e.program(
        "kernel void spin(global float* b, int n) { float x = b[get_global_id(0)]; \
         for (int i = 0; i < n; i++) x = x * 0.999f + 1.0f; b[get_global_id(0)] = x; }",
        "",
    );
    let k = kernel(p, "spin");
    let m = e.buffer(CL_MEM_READ_WRITE, 4096 * 4, null_mut());
    arg(k, 0, &m);
    // The profiling times are on the host timer: they fall between readings taken before the
    // enqueues and after the wait, and the device timer is that same clock.
    let (mut before, mut dev_before, mut after) = (0u64, 0u64, 0u64);
    check!(clGetDeviceAndHostTimer(e.dev, &mut dev_before, &mut before));
    assert!(dev_before > 0 && before > 0);
    let mut events = vec![];
    // Enough work in the second that scheduling noise on a loaded CPU cannot hide it.
    for n in [1i32, 200_000] {
        arg(k, 1, &n);
        let mut ev = null_mut();
        let g = [1024usize];
        check!(clEnqueueNDRangeKernel(
            q,
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            &mut ev
        ));
        events.push(ev);
    }
    let mut marker = null_mut();
    check!(clEnqueueMarkerWithWaitList(q, 0, null(), &mut marker));
    check!(clWaitForEvents(1, &marker));
    check!(clGetHostTimer(e.dev, &mut after));
    let short = profile(events[0]);
    let long = profile(events[1]);
    assert!(
        before <= short[0] && long[4] <= after,
        "{before} {short:?} {long:?} {after}"
    );
    assert!(platform_val::<u64>(platform(), CL_PLATFORM_HOST_TIMER_RESOLUTION) > 0);
    for t in [&short, &long] {
        assert!(
            t.windows(2).all(|w| w[0] <= w[1]),
            "QUEUED <= SUBMIT <= START <= END <= COMPLETE: {t:?}"
        );
    }
    // In-order: the second kernel starts after the first ends, and runs longer.
    assert!(long[2] >= short[3], "{short:?} {long:?}");
    assert!(
        long[3] - long[2] > short[3] - short[2],
        "{short:?} {long:?}"
    );
    // Not available: unknown name, short buffer, a queue without profiling.
    let mut t = 0u64;
    check_err!(
        clGetEventProfilingInfo(
            events[0],
            0x7777,
            8,
            (&mut t as *mut u64).cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clGetEventProfilingInfo(
            events[0],
            0x1283,
            4,
            (&mut t as *mut u64).cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    let mut plain = null_mut();
    check!(clEnqueueMarkerWithWaitList(e.queue, 0, null(), &mut plain));
    check!(clWaitForEvents(1, &plain));
    check_err!(
        clGetEventProfilingInfo(plain, 0x1283, 8, (&mut t as *mut u64).cast(), null_mut()),
        CL_PROFILING_INFO_NOT_AVAILABLE_
    );
    for ev in events.into_iter().chain([marker, plain]) {
        check!(clReleaseEvent(ev));
    }
    unsafe {
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseMemObject(m);
        clReleaseCommandQueue(q);
    }
}

#[test]
fn launches_beyond_the_dispatch_limit_are_split() {
    let e = Env::new();
    let p = e.program(
        "kernel void ids(global uint* b) { b[get_global_id(0)] = get_global_id(0) * 2 + get_group_id(0); }\n\
         kernel void count(global uint* b) { b[get_global_id(0)] = get_num_groups(0); }",
        "",
    );
    // 140000 groups of 1: more than lavapipe's (and most GPUs') 65535 per dispatch. (Where
    // small groups are coalesced, as on lavapipe, these make 2188 Vulkan groups and one
    // dispatch; tests/coalesced_groups.rs splits coalesced and uncoalesced launches.)
    let n = 140_000usize;
    let m = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let k = kernel(p, "ids");
    arg(k, 0, &m);
    e.run(k, None, &[n], Some(&[1]));
    let out = e.read::<u32>(m, n);
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(v, 3 * i as u32, "work-item {i}");
    }
    // A kernel that reads the group count cannot be split: where the device needs a split
    // (65535 groups per dispatch) it is refused, never run with wrong values; where it does
    // not (NVIDIA: 2^31 - 1), or coalescing makes one dispatch of it (lavapipe), it runs.
    let c = kernel(p, "count");
    arg(c, 0, &m);
    let (g, l) = ([n], [1usize]);
    let code = unsafe {
        clEnqueueNDRangeKernel(
            e.queue,
            c,
            1,
            null(),
            g.as_ptr(),
            l.as_ptr(),
            0,
            null(),
            null_mut(),
        )
    };
    match code {
        CL_SUCCESS => assert!(e.read::<u32>(m, n).iter().all(|&x| x == n as u32)),
        _ => assert_eq!(code, CL_OUT_OF_RESOURCES, "{}", err_name(code)),
    }
    unsafe {
        clReleaseKernel(c);
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseMemObject(m);
    }
}

#[link(name = "OpenCL")]
extern "C" {
    fn clCreateUserEvent(c: cl_context, err: *mut cl_int) -> cl_event;
    fn clSetUserEventStatus(e: cl_event, status: cl_int) -> cl_int;
}

const CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST_: cl_int = -14;

#[test]
fn user_events_gate_commands_on_two_queues() {
    let e = Env::new();
    let mut err = 0;
    let q2 = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(command_type(gate), 0x1204 /* CL_COMMAND_USER */);
    assert_eq!(event_status(gate), CL_SUBMITTED_);
    let n = 4096;
    let a = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let b = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let (va, vb) = (11u32, 22u32);
    // Both fills wait for the user event; a later command on the first queue waits in order.
    let mut fa = null_mut();
    let mut fb = null_mut();
    check!(clEnqueueFillBuffer(
        e.queue,
        a,
        (&va as *const u32).cast(),
        4,
        0,
        n * 4,
        1,
        &gate,
        &mut fa
    ));
    check!(clEnqueueFillBuffer(
        q2,
        b,
        (&vb as *const u32).cast(),
        4,
        0,
        n * 4,
        1,
        &gate,
        &mut fb
    ));
    let mut out = vec![0u32; n];
    let mut read = null_mut();
    check!(clEnqueueReadBuffer(
        e.queue,
        a,
        CL_FALSE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        0,
        null(),
        &mut read
    ));
    check!(clFlush(e.queue));
    check!(clFlush(q2));
    std::thread::sleep(std::time::Duration::from_millis(50));
    for ev in [fa, fb, read] {
        assert_ne!(
            event_status(ev),
            CL_COMPLETE,
            "a command ran before its user event"
        );
    }
    // Set from another thread while this one waits.
    let g = gate as usize;
    let setter =
        std::thread::spawn(move || unsafe { clSetUserEventStatus(g as cl_event, CL_COMPLETE) });
    check!(clWaitForEvents(1, &read));
    assert_eq!(setter.join().unwrap(), CL_SUCCESS);
    assert!(out.iter().all(|&x| x == va));
    check!(clWaitForEvents(1, &fb));
    assert_eq!(e.read::<u32>(b, n), vec![vb; n]);
    // Status can be set once, to CL_COMPLETE or an error; only on user events.
    check_err!(
        clSetUserEventStatus(gate, CL_COMPLETE),
        CL_INVALID_OPERATION
    );
    check_err!(clSetUserEventStatus(fa, CL_COMPLETE), CL_INVALID_EVENT);
    let g2 = unsafe { clCreateUserEvent(e.ctx, &mut err) };
    check_err!(clSetUserEventStatus(g2, CL_SUBMITTED_), CL_INVALID_VALUE);
    for ev in [gate, fa, fb, read, g2] {
        check!(clReleaseEvent(ev));
    }
    check!(clReleaseMemObject(a));
    check!(clReleaseMemObject(b));
    check!(clReleaseCommandQueue(q2));
}

/// Commands of two queues that wait for each other's, in turn, behind one user event: each
/// queue's later commands wait for the other queue's earlier ones, so each queue must let its
/// first commands go as soon as their own wait list is done, not once every command it holds
/// back may go (which deadlocked: each queue's held commands waited for the other's).
#[test]
fn queues_waiting_for_each_other_in_turn_all_run() {
    let e = Env::new();
    let mut err = 0;
    let q2 = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let n = 1024;
    let m = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    // Fills of the buffer with 1, 2, ... 6 on alternate queues, each after the one before.
    let mut last = gate;
    let mut events = vec![];
    for round in 0..6u32 {
        let q = if round % 2 == 0 { e.queue } else { q2 };
        let v = round + 1;
        let mut ev = null_mut();
        check!(clEnqueueFillBuffer(
            q,
            m,
            (&v as *const u32).cast(),
            4,
            0,
            n * 4,
            1,
            &last,
            &mut ev
        ));
        check!(clFlush(q));
        events.push(ev);
        last = ev;
    }
    assert_ne!(event_status(last), CL_COMPLETE);
    check!(clSetUserEventStatus(gate, CL_COMPLETE));
    check!(clWaitForEvents(1, &last));
    for ev in &events {
        assert_eq!(event_status(*ev), CL_COMPLETE);
    }
    assert_eq!(e.read::<u32>(m, n), vec![6; n]);
    for ev in events.into_iter().chain([gate]) {
        check!(clReleaseEvent(ev));
    }
    check!(clReleaseMemObject(m));
    check!(clReleaseCommandQueue(q2));
}

#[test]
fn a_failed_user_event_fails_the_commands_waiting_for_it() {
    let e = Env::new();
    let mut err = 0;
    let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
    let m = e.buffer_from(&[7u32; 16]);
    let v = 5u32;
    let mut fill = null_mut();
    check!(clEnqueueFillBuffer(
        e.queue,
        m,
        (&v as *const u32).cast(),
        4,
        0,
        64,
        1,
        &gate,
        &mut fill
    ));
    // A later command of the in-order queue, enqueued while the fill waits, depends on it.
    let mut later = null_mut();
    check!(clEnqueueFillBuffer(
        e.queue,
        m,
        (&v as *const u32).cast(),
        4,
        0,
        4,
        0,
        null(),
        &mut later
    ));
    check!(clSetUserEventStatus(gate, -1234));
    check_err!(
        clWaitForEvents(1, &later),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST_
    );
    check_err!(
        clWaitForEvents(1, &fill),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST_
    );
    assert_eq!(
        event_status(fill),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST_
    );
    assert_eq!(event_status(gate), -1234);
    // Neither ran, and the queue goes on.
    check!(clFinish(e.queue));
    assert_eq!(e.read::<u32>(m, 16), [7; 16]);
    check!(clReleaseEvent(later));
    check!(clReleaseEvent(fill));
    check!(clReleaseEvent(gate));
    check!(clReleaseMemObject(m));
}

#[test]
fn out_of_order_queues_honour_wait_lists_and_barriers() {
    let e = Env::new();
    let props = [
        CL_QUEUE_PROPERTIES,
        1, /* OUT_OF_ORDER_EXEC_MODE_ENABLE */
        0,
    ];
    let mut err = 0;
    let q = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, props.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    let n = 1 << 14;
    let a = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let b = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let v = 77u32;
    let mut filled = null_mut();
    check!(clEnqueueFillBuffer(
        q,
        a,
        (&v as *const u32).cast(),
        4,
        0,
        n * 4,
        0,
        null(),
        &mut filled
    ));
    let mut copied = null_mut();
    check!(clEnqueueCopyBuffer(
        q,
        a,
        b,
        0,
        0,
        n * 4,
        1,
        &filled,
        &mut copied
    ));
    check!(clEnqueueBarrierWithWaitList(q, 0, null(), null_mut()));
    let mut out = vec![0u32; n];
    check!(clEnqueueReadBuffer(
        q,
        b,
        CL_TRUE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    assert!(out.iter().all(|&x| x == v));
    for ev in [filled, copied] {
        check!(clReleaseEvent(ev));
    }
    check!(clReleaseMemObject(a));
    check!(clReleaseMemObject(b));
    check!(clReleaseCommandQueue(q));
}

/// An out-of-order queue runs independent commands without ordering them, but a command
/// waiting for another command's event of the same queue, or following a barrier, sees its
/// results: a chain of dependent increments through events, interleaved with independent ones.
#[test]
fn out_of_order_dependencies_through_events_hold() {
    let e = Env::new();
    let props = [
        CL_QUEUE_PROPERTIES,
        1, /* OUT_OF_ORDER_EXEC_MODE_ENABLE */
        0,
    ];
    let mut err = 0;
    let q = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, props.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let p = e.program(
        "kernel void inc(global int *b) { b[get_global_id(0)] += 1; }",
        "",
    );
    let k = kernel(p, "inc");
    let n = 4096usize;
    let chain = e.buffer_from(&vec![0i32; n]);
    // (Each independent command has a buffer of its own: unordered commands on one buffer
    // would race.)
    let others: Vec<cl_mem> = (0..40).map(|_| e.buffer_from(&vec![0i32; n])).collect();
    let mut last: cl_event = null_mut();
    for other in &others {
        arg(k, 0, &chain);
        let mut ev = null_mut();
        let (nw, wl) = if last.is_null() {
            (0, null())
        } else {
            (1, &last as *const cl_event)
        };
        check!(clEnqueueNDRangeKernel(
            q,
            k,
            1,
            null(),
            [n].as_ptr(),
            null(),
            nw,
            wl,
            &mut ev
        ));
        if !last.is_null() {
            check!(clReleaseEvent(last));
        }
        last = ev;
        arg(k, 0, other);
        check!(clEnqueueNDRangeKernel(
            q,
            k,
            1,
            null(),
            [n].as_ptr(),
            null(),
            0,
            null(),
            null_mut()
        ));
    }
    // After a barrier, every command sees everything before it.
    check!(clEnqueueBarrierWithWaitList(q, 0, null(), null_mut()));
    arg(k, 0, &chain);
    check!(clEnqueueNDRangeKernel(
        q,
        k,
        1,
        null(),
        [n].as_ptr(),
        null(),
        0,
        null(),
        null_mut()
    ));
    check!(clFinish(q));
    assert_eq!(e.read::<i32>(chain, n), vec![41; n]);
    for &o in &others {
        assert_eq!(e.read::<i32>(o, n), vec![1; n]);
    }
    unsafe {
        clReleaseEvent(last);
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseMemObject(chain);
        for o in others {
            clReleaseMemObject(o);
        }
        clReleaseCommandQueue(q);
    }
}

/// Launches recorded into one batch, the same kernel with the same arguments (nothing is
/// re-bound), then with other buffers, values and sizes, and another kernel in between: each
/// sees its own arguments.
#[test]
fn launches_in_one_batch_each_see_their_own_arguments() {
    let e = Env::new();
    let p = e.program(
        "kernel void add(global int* b, int v) { b[get_global_id(0)] += v; }\n\
         kernel void twice(global int* b) { b[get_global_id(0)] *= 2; }",
        "",
    );
    let (add, twice) = (kernel(p, "add"), kernel(p, "twice"));
    let a = e.buffer_from(&[0i32; 64]);
    let b = e.buffer_from(&[0i32; 64]);
    let launch = |k: cl_kernel, n: usize| {
        check!(clEnqueueNDRangeKernel(
            e.queue,
            k,
            1,
            null(),
            [n].as_ptr(),
            null(),
            0,
            null(),
            null_mut()
        ));
    };
    arg(add, 0, &a);
    arg(add, 1, &1i32);
    launch(add, 64);
    launch(add, 64);
    arg(add, 1, &10i32);
    launch(add, 64);
    arg(twice, 0, &a);
    launch(twice, 32);
    launch(add, 64);
    arg(add, 0, &b);
    launch(add, 16);
    arg(add, 1, &3i32);
    launch(add, 64);
    check!(clFinish(e.queue));
    let mut want_a = vec![(1 + 1 + 10) * 2 + 10; 32];
    want_a.extend([1 + 1 + 10 + 10; 32]);
    assert_eq!(e.read::<i32>(a, 64), want_a);
    let mut want_b = vec![13; 16];
    want_b.extend([3; 48]);
    assert_eq!(e.read::<i32>(b, 64), want_b);
    unsafe {
        clReleaseKernel(add);
        clReleaseKernel(twice);
        clReleaseProgram(p);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    }
}

static COMPLETED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn completed(_: cl_event, status: cl_int, user: *mut c_void) {
    assert_eq!(status, CL_COMPLETE);
    COMPLETED.lock().unwrap().push(user as usize);
}

/// Waiting threads complete batches themselves while the completion thread completes those
/// nobody waits for: whoever completes them, every event completes once, in queue order,
/// and clFinish / clWaitForEvents return only after the callbacks of what they waited for.
#[test]
fn events_complete_in_order_whoever_waits() {
    let e = Env::new();
    let p = e.program(
        "kernel void add(global int* b, int v) { b[get_global_id(0)] += v; }",
        "",
    );
    let k = kernel(p, "add");
    let m = e.buffer_from(&[0i32; 256]);
    arg(k, 0, &m);
    arg(k, 1, &1i32);
    let n = 400;
    for i in 0..n {
        let mut ev = null_mut();
        check!(clEnqueueNDRangeKernel(
            e.queue,
            k,
            1,
            null(),
            [256usize].as_ptr(),
            null(),
            0,
            null(),
            &mut ev
        ));
        check!(clSetEventCallback(
            ev,
            CL_COMPLETE,
            Some(completed),
            i as *mut c_void
        ));
        match i % 7 {
            0 => check!(clFlush(e.queue)),
            3 => {
                check!(clWaitForEvents(1, &ev));
                assert!(COMPLETED.lock().unwrap().contains(&i));
            }
            5 if i % 3 == 0 => {
                check!(clFinish(e.queue));
                assert_eq!(COMPLETED.lock().unwrap().len(), i + 1);
            }
            _ => {}
        }
        check!(clReleaseEvent(ev));
    }
    check!(clFinish(e.queue));
    assert_eq!(*COMPLETED.lock().unwrap(), (0..n).collect::<Vec<_>>());
    assert_eq!(e.read::<i32>(m, 256), vec![n as i32; 256]);
    unsafe {
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseMemObject(m);
    }
}
