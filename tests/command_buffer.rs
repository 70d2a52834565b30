//! cl_khr_command_buffer through the loader: recording, replay, sync points, barriers,
//! simultaneous use, events, info queries and the extension's error codes.
#[macro_use]
mod common;
use common::*;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

type CommandBuffer = *mut c_void;
type SyncPoint = cl_uint;

const CL_INVALID_COMMAND_BUFFER_KHR: cl_int = -1138;
const CL_INVALID_SYNC_POINT_WAIT_LIST_KHR: cl_int = -1139;
const CL_INCOMPATIBLE_COMMAND_QUEUE_KHR: cl_int = -1140;
const CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR: cl_uint = 0x12A9;
const CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR: cl_uint = 0x129A;
const CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR: cl_uint = 0x12AA;
const CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR: cl_bitfield = 1 << 2;
const CL_COMMAND_BUFFER_FLAGS_KHR: cl_bitfield = 0x1293;
const CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR: cl_bitfield = 1;
const CL_COMMAND_BUFFER_QUEUES_KHR: cl_uint = 0x1294;
const CL_COMMAND_BUFFER_NUM_QUEUES_KHR: cl_uint = 0x1295;
const CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR: cl_uint = 0x1296;
const CL_COMMAND_BUFFER_STATE_KHR: cl_uint = 0x1297;
const CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR: cl_uint = 0x1298;
const CL_COMMAND_BUFFER_CONTEXT_KHR: cl_uint = 0x1299;
const RECORDING: cl_uint = 0;
const EXECUTABLE: cl_uint = 1;
const CL_COMMAND_COMMAND_BUFFER_KHR: cl_uint = 0x12A8;

type Info = unsafe extern "C" fn(CommandBuffer, cl_uint, usize, *mut c_void, *mut usize) -> cl_int;

/// The extension's entry points, from clGetExtensionFunctionAddressForPlatform.
#[allow(clippy::type_complexity)]
struct Ext {
    create: unsafe extern "C" fn(
        cl_uint,
        *const cl_command_queue,
        *const cl_bitfield,
        *mut cl_int,
    ) -> CommandBuffer,
    finalize: unsafe extern "C" fn(CommandBuffer) -> cl_int,
    retain: unsafe extern "C" fn(CommandBuffer) -> cl_int,
    release: unsafe extern "C" fn(CommandBuffer) -> cl_int,
    info: Info,
    enqueue: unsafe extern "C" fn(
        cl_uint,
        *mut cl_command_queue,
        CommandBuffer,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    barrier: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
    nd_range: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_kernel,
        cl_uint,
        *const usize,
        *const usize,
        *const usize,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
    copy: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_mem,
        cl_mem,
        usize,
        usize,
        usize,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
    copy_rect: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_mem,
        cl_mem,
        *const usize,
        *const usize,
        *const usize,
        usize,
        usize,
        usize,
        usize,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
    copy_image: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_mem,
        cl_mem,
        *const usize,
        *const usize,
        *const usize,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
    image_to_buffer: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_mem,
        cl_mem,
        *const usize,
        *const usize,
        usize,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
    buffer_to_image: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_mem,
        cl_mem,
        usize,
        *const usize,
        *const usize,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
    fill_image: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_mem,
        *const c_void,
        *const usize,
        *const usize,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
    fill: unsafe extern "C" fn(
        CommandBuffer,
        cl_command_queue,
        *const cl_bitfield,
        cl_mem,
        *const c_void,
        usize,
        usize,
        usize,
        cl_uint,
        *const SyncPoint,
        *mut SyncPoint,
        *mut *mut c_void,
    ) -> cl_int,
}

fn entry(name: &str) -> *mut c_void {
    let c = std::ffi::CString::new(name).unwrap();
    let f = unsafe { clGetExtensionFunctionAddressForPlatform(platform(), c.as_ptr()) };
    assert!(!f.is_null(), "{name} is not returned");
    f
}

fn ext() -> Ext {
    // SAFETY: each pointer is the entry point of that name, of the extension's signature.
    unsafe {
        Ext {
            create: std::mem::transmute(entry("clCreateCommandBufferKHR")),
            finalize: std::mem::transmute(entry("clFinalizeCommandBufferKHR")),
            retain: std::mem::transmute(entry("clRetainCommandBufferKHR")),
            release: std::mem::transmute(entry("clReleaseCommandBufferKHR")),
            info: std::mem::transmute(entry("clGetCommandBufferInfoKHR")),
            enqueue: std::mem::transmute(entry("clEnqueueCommandBufferKHR")),
            barrier: std::mem::transmute(entry("clCommandBarrierWithWaitListKHR")),
            nd_range: std::mem::transmute(entry("clCommandNDRangeKernelKHR")),
            copy: std::mem::transmute(entry("clCommandCopyBufferKHR")),
            copy_rect: std::mem::transmute(entry("clCommandCopyBufferRectKHR")),
            fill: std::mem::transmute(entry("clCommandFillBufferKHR")),
            copy_image: std::mem::transmute(entry("clCommandCopyImageKHR")),
            image_to_buffer: std::mem::transmute(entry("clCommandCopyImageToBufferKHR")),
            buffer_to_image: std::mem::transmute(entry("clCommandCopyBufferToImageKHR")),
            fill_image: std::mem::transmute(entry("clCommandFillImageKHR")),
        }
    }
}

const SRC: &str = r#"
kernel void add(global int* a, int v) { a[get_global_id(0)] += v; }
kernel void scale(global const int* a, global int* b, int f) {
    size_t i = get_global_id(0); b[i] = a[i] * f;
}
"#;

struct Fixture {
    env: Env,
    ext: Ext,
    program: cl_program,
}

impl Fixture {
    fn new() -> Fixture {
        let env = Env::new();
        let program = env.program(SRC, "");
        Fixture {
            env,
            ext: ext(),
            program,
        }
    }

    fn create(&self, q: cl_command_queue, props: &[cl_bitfield]) -> CommandBuffer {
        let mut err = 0;
        let p = if props.is_empty() {
            null()
        } else {
            props.as_ptr()
        };
        let cb = unsafe { (self.ext.create)(1, &q, p, &mut err) };
        assert_eq!(
            err,
            CL_SUCCESS,
            "clCreateCommandBufferKHR: {}",
            err_name(err)
        );
        cb
    }

    /// Records `k` over `n` work-items after `wait`; returns its sync point.
    fn launch(&self, cb: CommandBuffer, k: cl_kernel, n: usize, wait: &[SyncPoint]) -> SyncPoint {
        let mut s = 0;
        let w = if wait.is_empty() {
            null()
        } else {
            wait.as_ptr()
        };
        check!((self.ext.nd_range)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            &n,
            null(),
            wait.len() as u32,
            w,
            &mut s,
            null_mut()
        ));
        s
    }

    fn enqueue(&self, cb: CommandBuffer, wait: &[cl_event]) -> cl_event {
        let mut e = null_mut();
        let w = if wait.is_empty() {
            null()
        } else {
            wait.as_ptr()
        };
        check!((self.ext.enqueue)(
            0,
            null_mut(),
            cb,
            wait.len() as u32,
            w,
            &mut e
        ));
        e
    }

    fn state(&self, cb: CommandBuffer) -> cl_uint {
        let mut s: cl_uint = 9;
        check!((self.ext.info)(
            cb,
            CL_COMMAND_BUFFER_STATE_KHR,
            4,
            (&mut s as *mut cl_uint).cast(),
            null_mut()
        ));
        s
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unsafe { clReleaseProgram(self.program) };
    }
}

fn has_extension(name: &str) -> bool {
    device_str(device(), CL_DEVICE_EXTENSIONS)
        .split(' ')
        .any(|e| e == name)
}

#[test]
fn extension_and_device_queries() {
    setup();
    assert!(has_extension("cl_khr_command_buffer"));
    let versions: Vec<cl_name_version> =
        bytes_to_vec(&device_info(device(), CL_DEVICE_EXTENSIONS_WITH_VERSION));
    let v = versions
        .iter()
        .find(|v| v.name() == "cl_khr_command_buffer")
        .expect("listed with its version");
    assert_eq!(v.version, (9 << 12) | 8, "0.9.8");
    let m = versions
        .iter()
        .find(|v| v.name() == "cl_khr_command_buffer_mutable_dispatch")
        .expect("listed with its version");
    assert_eq!(m.version, (9 << 12) | 5, "0.9.5");
    let caps: cl_bitfield = device_val(device(), CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR);
    assert_eq!(caps, CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR);
    let supported: cl_bitfield = device_val(
        device(),
        CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR,
    );
    assert_eq!(
        supported,
        CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
    );
    let required: cl_bitfield = device_val(
        device(),
        CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
    );
    assert_eq!(required, 0);
    ext();
}

/// A chain of dependent launches, replayed several times: each replay runs every command,
/// with the arguments they had when recorded.
#[test]
fn replay_runs_the_recorded_launches_with_their_arguments() {
    setup();
    let f = Fixture::new();
    let n = 256;
    let init: Vec<i32> = (0..n as i32).collect();
    let a = f.env.buffer_from(&init);
    let k = kernel(f.program, "add");
    arg(k, 0, &a);
    let cb = f.create(f.env.queue, &[]);
    assert_eq!(f.state(cb), RECORDING);
    let launches = 10;
    for i in 0..launches {
        arg(k, 1, &(i + 1));
        f.launch(cb, k, n, &[]);
    }
    // Changing the argument after recording changes nothing recorded.
    arg(k, 1, &1000);
    check!((f.ext.finalize)(cb));
    assert_eq!(f.state(cb), EXECUTABLE);
    let replays = 3;
    for _ in 0..replays {
        let e = f.enqueue(cb, &[]);
        check!(clWaitForEvents(1, &e));
        let ty: cl_uint = event_val(e, CL_EVENT_COMMAND_TYPE);
        assert_eq!(ty, CL_COMMAND_COMMAND_BUFFER_KHR);
        unsafe { clReleaseEvent(e) };
    }
    assert_eq!(f.state(cb), EXECUTABLE);
    let per_replay: i32 = (1..=launches).sum();
    let want: Vec<i32> = init.iter().map(|x| x + replays * per_replay).collect();
    assert_eq!(f.env.read::<i32>(a, n), want);
    check!((f.ext.release)(cb));
    unsafe {
        clReleaseKernel(k);
        clReleaseMemObject(a);
    }
}

/// An out-of-order buffer: a launch waiting for a sync point sees the result of the command
/// it names, and one after a barrier the results of all before it.
#[test]
fn sync_points_and_barriers_order_commands() {
    setup();
    let f = Fixture::new();
    let mut err = 0;
    let q = unsafe {
        clCreateCommandQueue(
            f.env.ctx,
            f.env.dev,
            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let n = 1024;
    let a = f.env.buffer_from(&vec![3i32; n]);
    let b = f.env.buffer_from(&vec![0i32; n]);
    let c = f.env.buffer_from(&vec![0i32; n]);
    let (k1, k2, k3) = (
        kernel(f.program, "scale"),
        kernel(f.program, "scale"),
        kernel(f.program, "add"),
    );
    arg(k1, 0, &a);
    arg(k1, 1, &b);
    arg(k1, 2, &5);
    arg(k2, 0, &b);
    arg(k2, 1, &c);
    arg(k2, 2, &7);
    arg(k3, 0, &a);
    arg(k3, 1, &1);
    let cb = f.create(q, &[]);
    let s1 = f.launch(cb, k1, n, &[]); // b = 15
    let s2 = f.launch(cb, k2, n, &[s1]); // c = 105
    let mut s3 = 0;
    check!((f.ext.barrier)(
        cb,
        null_mut(),
        null(),
        1,
        &s2,
        &mut s3,
        null_mut()
    ));
    assert!(s1 != s2 && s2 != s3 && s1 != s3, "distinct sync points");
    f.launch(cb, k3, n, &[]); // a = 4, after everything
    check!((f.ext.finalize)(cb));
    let mut e = null_mut();
    let mut queues = [q];
    check!((f.ext.enqueue)(
        1,
        queues.as_mut_ptr(),
        cb,
        0,
        null(),
        &mut e
    ));
    check!(clWaitForEvents(1, &e));
    assert_eq!(f.env.read::<i32>(b, n), vec![15; n]);
    assert_eq!(f.env.read::<i32>(c, n), vec![105; n]);
    assert_eq!(f.env.read::<i32>(a, n), vec![4; n]);
    unsafe {
        clReleaseEvent(e);
        (f.ext.release)(cb);
        for k in [k1, k2, k3] {
            clReleaseKernel(k);
        }
        for m in [a, b, c] {
            clReleaseMemObject(m);
        }
        clReleaseCommandQueue(q);
    }
}

/// Version 0.9.8: any buffer may be enqueued again while earlier enqueues are pending (here
/// behind a user event), with or without the simultaneous-use flag, on an in-order queue and
/// in the same batch; its state stays Executable; every replay runs, in order.
#[test]
fn enqueued_again_while_pending() {
    setup();
    let f = Fixture::new();
    let n = 64;
    let a = f.env.buffer_from(&vec![0i32; n]);
    let k = kernel(f.program, "add");
    arg(k, 0, &a);
    arg(k, 1, &2);
    let plain = f.create(f.env.queue, &[]);
    let simultaneous = f.create(
        f.env.queue,
        &[
            CL_COMMAND_BUFFER_FLAGS_KHR,
            CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR,
            0,
        ],
    );
    for cb in [plain, simultaneous] {
        f.launch(cb, k, n, &[]);
        check!((f.ext.finalize)(cb));
    }
    let mut err = 0;
    let user = unsafe { clCreateUserEvent(f.env.ctx, &mut err) };
    let e1 = f.enqueue(plain, &[user]);
    let e2 = f.enqueue(plain, &[]);
    let e3 = f.enqueue(simultaneous, &[user]);
    let e4 = f.enqueue(simultaneous, &[]);
    assert_eq!(f.state(plain), EXECUTABLE);
    assert_eq!(f.state(simultaneous), EXECUTABLE);
    let status: cl_int = event_val(e4, CL_EVENT_COMMAND_EXECUTION_STATUS);
    assert!(status > CL_COMPLETE, "waits for the user event");
    check!(clSetUserEventStatus(user, CL_COMPLETE));
    check!(clWaitForEvents(4, [e1, e2, e3, e4].as_ptr()));
    assert_eq!(f.env.read::<i32>(a, n), vec![8; n]);
    // Released while a replay is pending: the replay still runs.
    let e5 = f.enqueue(plain, &[]);
    check!((f.ext.release)(plain));
    check!(clWaitForEvents(1, &e5));
    assert_eq!(f.env.read::<i32>(a, n), vec![10; n]);
    unsafe {
        for e in [user, e1, e2, e3, e4, e5] {
            clReleaseEvent(e);
        }
        (f.ext.release)(simultaneous);
        clReleaseKernel(k);
        clReleaseMemObject(a);
    }
}

/// Every query, through the size/value protocol.
#[test]
fn info_queries() {
    setup();
    let f = Fixture::new();
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR,
        0,
    ];
    let cb = f.create(f.env.queue, &props);
    let query = |p: cl_uint| {
        let mut size = 0;
        check!((f.ext.info)(cb, p, 0, null_mut(), &mut size));
        let mut v = vec![0u8; size];
        check!((f.ext.info)(cb, p, size, v.as_mut_ptr().cast(), null_mut()));
        v
    };
    assert_eq!(
        bytes_to::<cl_command_queue>(&query(CL_COMMAND_BUFFER_QUEUES_KHR)),
        f.env.queue
    );
    assert_eq!(query(CL_COMMAND_BUFFER_QUEUES_KHR).len(), 8);
    assert_eq!(
        bytes_to::<cl_uint>(&query(CL_COMMAND_BUFFER_NUM_QUEUES_KHR)),
        1
    );
    assert_eq!(
        bytes_to::<cl_context>(&query(CL_COMMAND_BUFFER_CONTEXT_KHR)),
        f.env.ctx
    );
    assert_eq!(
        bytes_to::<cl_uint>(&query(CL_COMMAND_BUFFER_STATE_KHR)),
        RECORDING
    );
    assert_eq!(
        bytes_to_vec::<cl_bitfield>(&query(CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR)),
        props.to_vec()
    );
    assert_eq!(
        bytes_to::<cl_uint>(&query(CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR)),
        1
    );
    check!((f.ext.retain)(cb));
    assert_eq!(
        bytes_to::<cl_uint>(&query(CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR)),
        2
    );
    check!((f.ext.release)(cb));
    let mut small = 0u8;
    check_err!(
        (f.ext.info)(
            cb,
            CL_COMMAND_BUFFER_NUM_QUEUES_KHR,
            1,
            (&mut small as *mut u8).cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        (f.ext.info)(cb, 0x12FF, 0, null_mut(), null_mut()),
        CL_INVALID_VALUE
    );
    // Created without properties: an empty array.
    let plain = f.create(f.env.queue, &[]);
    let mut size = 1;
    check!((f.ext.info)(
        plain,
        CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR,
        0,
        null_mut(),
        &mut size
    ));
    assert_eq!(size, 0);
    check!((f.ext.release)(plain));
    check!((f.ext.release)(cb));
}

/// An enqueued command-buffer's event profiles like any command: queued ≤ submit ≤ start ≤ end.
#[test]
fn profiling_of_an_enqueued_buffer() {
    setup();
    let f = Fixture::new();
    let mut err = 0;
    let q =
        unsafe { clCreateCommandQueue(f.env.ctx, f.env.dev, CL_QUEUE_PROFILING_ENABLE, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let n = 4096;
    let a = f.env.buffer_from(&vec![0i32; n]);
    let k = kernel(f.program, "add");
    arg(k, 0, &a);
    arg(k, 1, &1);
    let cb = f.create(q, &[]);
    for _ in 0..20 {
        f.launch(cb, k, n, &[]);
    }
    check!((f.ext.finalize)(cb));
    let mut e = null_mut();
    check!((f.ext.enqueue)(0, null_mut(), cb, 0, null(), &mut e));
    check!(clWaitForEvents(1, &e));
    let t = |p| {
        let mut v = 0u64;
        check!(clGetEventProfilingInfo(
            e,
            p,
            8,
            (&mut v as *mut u64).cast(),
            null_mut()
        ));
        v
    };
    let (queued, submit, start, end) = (
        t(CL_PROFILING_COMMAND_QUEUED),
        t(0x1281),
        t(CL_PROFILING_COMMAND_START),
        t(CL_PROFILING_COMMAND_END),
    );
    assert!(
        queued <= submit && submit <= start && start <= end,
        "{queued} {submit} {start} {end}"
    );
    assert!(start > 0 && end >= start);
    assert_eq!(f.env.read::<i32>(a, n), vec![20; n]);
    unsafe {
        clReleaseEvent(e);
        (f.ext.release)(cb);
        clReleaseKernel(k);
        clReleaseMemObject(a);
        clReleaseCommandQueue(q);
    }
}

#[test]
fn create_errors() {
    setup();
    let f = Fixture::new();
    let mut err = 0;
    let q = f.env.queue;
    let create = |n: cl_uint, qs: *const cl_command_queue, p: *const cl_bitfield| {
        let mut err = 0;
        let cb = unsafe { (f.ext.create)(n, qs, p, &mut err) };
        assert!(cb.is_null());
        err
    };
    assert_eq!(create(1, null(), null()), CL_INVALID_VALUE);
    assert_eq!(create(0, &q, null()), CL_INVALID_VALUE);
    assert_eq!(create(2, [q, q].as_ptr(), null()), CL_INVALID_VALUE);
    assert_eq!(create(1, &null_mut(), null()), CL_INVALID_COMMAND_QUEUE);
    let repeated = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR,
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR,
        0,
    ];
    assert_eq!(create(1, &q, repeated.as_ptr()), CL_INVALID_VALUE);
    assert_eq!(
        create(1, &q, [CL_COMMAND_BUFFER_FLAGS_KHR, !0, 0].as_ptr()),
        CL_INVALID_VALUE
    );
    assert_eq!(create(1, &q, [0x1234, 0, 0].as_ptr()), CL_INVALID_VALUE);
    // Valid flags of layered extensions vkcl does not have (mutable, device-side sync).
    assert_eq!(
        create(1, &q, [CL_COMMAND_BUFFER_FLAGS_KHR, 0b110, 0].as_ptr()),
        CL_INVALID_PROPERTY
    );
    assert_eq!(
        create(1, &q, [CL_COMMAND_BUFFER_FLAGS_KHR, 0b101, 0].as_ptr()),
        CL_INVALID_PROPERTY
    );
    // A NULL errcode_ret is allowed.
    let cb = unsafe { (f.ext.create)(1, &q, null(), null_mut()) };
    assert!(!cb.is_null());
    check!((f.ext.release)(cb));
    let _ = &mut err;
}

#[test]
fn handle_and_state_errors() {
    setup();
    let f = Fixture::new();
    let bogus = 0x1234usize as CommandBuffer;
    check_err!((f.ext.finalize)(null_mut()), CL_INVALID_COMMAND_BUFFER_KHR);
    check_err!((f.ext.retain)(bogus), CL_INVALID_COMMAND_BUFFER_KHR);
    check_err!((f.ext.release)(null_mut()), CL_INVALID_COMMAND_BUFFER_KHR);
    check_err!(
        (f.ext.info)(
            null_mut(),
            CL_COMMAND_BUFFER_STATE_KHR,
            0,
            null_mut(),
            null_mut()
        ),
        CL_INVALID_COMMAND_BUFFER_KHR
    );
    check_err!(
        (f.ext.enqueue)(0, null_mut(), null_mut(), 0, null(), null_mut()),
        CL_INVALID_COMMAND_BUFFER_KHR
    );
    check_err!(
        (f.ext.barrier)(
            null_mut(),
            null_mut(),
            null(),
            0,
            null(),
            null_mut(),
            null_mut()
        ),
        CL_INVALID_COMMAND_BUFFER_KHR
    );
    // A queue handle passed as a command-buffer.
    check_err!(
        (f.ext.finalize)(f.env.queue as CommandBuffer),
        CL_INVALID_COMMAND_BUFFER_KHR
    );
    let cb = f.create(f.env.queue, &[]);
    // Not finalized: not enqueued.
    check_err!(
        (f.ext.enqueue)(0, null_mut(), cb, 0, null(), null_mut()),
        CL_INVALID_OPERATION
    );
    check!((f.ext.finalize)(cb));
    check_err!((f.ext.finalize)(cb), CL_INVALID_OPERATION);
    // Finalized: nothing more is recorded.
    check_err!(
        (f.ext.barrier)(cb, null_mut(), null(), 0, null(), null_mut(), null_mut()),
        CL_INVALID_OPERATION
    );
    let k = kernel(f.program, "add");
    let a = f.env.buffer_from(&[0i32; 4]);
    arg(k, 0, &a);
    arg(k, 1, &1);
    let n = 4usize;
    check_err!(
        (f.ext.nd_range)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            &n,
            null(),
            0,
            null(),
            null_mut(),
            null_mut()
        ),
        CL_INVALID_OPERATION
    );
    check!((f.ext.release)(cb));
    unsafe {
        clReleaseKernel(k);
        clReleaseMemObject(a);
    }
}

#[test]
fn command_errors() {
    setup();
    let f = Fixture::new();
    let cb = f.create(f.env.queue, &[]);
    let k = kernel(f.program, "add");
    let n = 4usize;
    let nd = |q: cl_command_queue,
              props: *const cl_bitfield,
              k: cl_kernel,
              dim: cl_uint,
              ns: cl_uint,
              sl: *const SyncPoint,
              mh: *mut *mut c_void| unsafe {
        (f.ext.nd_range)(
            cb,
            q,
            props,
            k,
            dim,
            null(),
            &n,
            null(),
            ns,
            sl,
            null_mut(),
            mh,
        )
    };
    // Arguments not set.
    assert_eq!(
        nd(null_mut(), null(), k, 1, 0, null(), null_mut()),
        CL_INVALID_KERNEL_ARGS
    );
    let a = f.env.buffer_from(&[0i32; 4]);
    arg(k, 0, &a);
    arg(k, 1, &1);
    assert_eq!(
        nd(f.env.queue, null(), k, 1, 0, null(), null_mut()),
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(
        nd(
            null_mut(),
            [0x1234, 1, 0].as_ptr(),
            k,
            1,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    assert_eq!(
        nd(null_mut(), null(), null_mut(), 1, 0, null(), null_mut()),
        CL_INVALID_KERNEL
    );
    assert_eq!(
        nd(null_mut(), null(), k, 0, 0, null(), null_mut()),
        CL_INVALID_WORK_DIMENSION
    );
    let s = [1];
    assert_eq!(
        nd(null_mut(), null(), k, 1, 1, null(), null_mut()),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    assert_eq!(
        nd(null_mut(), null(), k, 1, 0, s.as_ptr(), null_mut()),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    // No command recorded yet: sync point 1 does not exist.
    assert_eq!(
        nd(null_mut(), null(), k, 1, 1, s.as_ptr(), null_mut()),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    // An empty property list is fine.
    assert_eq!(
        nd(null_mut(), [0].as_ptr(), k, 1, 0, null(), null_mut()),
        CL_SUCCESS
    );
    assert_eq!(
        nd(null_mut(), null(), k, 1, 1, s.as_ptr(), null_mut()),
        CL_SUCCESS
    );
    assert_eq!(
        nd(null_mut(), null(), k, 1, 1, [3].as_ptr(), null_mut()),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    // With mutable dispatch a launch returns a handle (barriers do not: below).
    let mut handle = null_mut();
    assert_eq!(
        nd(null_mut(), null(), k, 1, 0, null(), &mut handle),
        CL_SUCCESS
    );
    assert!(!handle.is_null());
    check_err!(
        (f.ext.barrier)(cb, f.env.queue, null(), 0, null(), null_mut(), null_mut()),
        CL_INVALID_COMMAND_QUEUE
    );
    check_err!(
        (f.ext.barrier)(cb, null_mut(), null(), 0, null(), null_mut(), &mut handle),
        CL_INVALID_VALUE
    );
    check_err!(
        (f.ext.barrier)(
            cb,
            null_mut(),
            null(),
            1,
            [9].as_ptr(),
            null_mut(),
            null_mut()
        ),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    // A kernel of another context.
    let other = Env::new();
    let p2 = other.program(SRC, "");
    let k2 = kernel(p2, "add");
    let b = other.buffer_from(&[0i32; 4]);
    arg(k2, 0, &b);
    arg(k2, 1, &1);
    assert_eq!(
        nd(null_mut(), null(), k2, 1, 0, null(), null_mut()),
        CL_INVALID_CONTEXT
    );
    // Failed commands recorded nothing: three launches of +1.
    check!((f.ext.finalize)(cb));
    let e = f.enqueue(cb, &[]);
    check!(clWaitForEvents(1, &e));
    assert_eq!(f.env.read::<i32>(a, 4), vec![3; 4]);
    unsafe {
        clReleaseEvent(e);
        (f.ext.release)(cb);
        clReleaseKernel(k);
        clReleaseKernel(k2);
        clReleaseProgram(p2);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    }
}

#[test]
fn enqueue_errors() {
    setup();
    let f = Fixture::new();
    let cb = f.create(f.env.queue, &[]);
    check!((f.ext.finalize)(cb));
    let mut q = [f.env.queue];
    check_err!(
        (f.ext.enqueue)(1, null_mut(), cb, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        (f.ext.enqueue)(0, q.as_mut_ptr(), cb, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    let mut two = [f.env.queue, f.env.queue];
    check_err!(
        (f.ext.enqueue)(2, two.as_mut_ptr(), cb, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    let mut bad = [null_mut()];
    check_err!(
        (f.ext.enqueue)(1, bad.as_mut_ptr(), cb, 0, null(), null_mut()),
        CL_INVALID_COMMAND_QUEUE
    );
    let other = Env::new();
    let mut foreign = [other.queue];
    check_err!(
        (f.ext.enqueue)(1, foreign.as_mut_ptr(), cb, 0, null(), null_mut()),
        CL_INVALID_CONTEXT
    );
    let mut err = 0;
    let foreign_event = unsafe { clCreateUserEvent(other.ctx, &mut err) };
    check_err!(
        (f.ext.enqueue)(0, null_mut(), cb, 1, &foreign_event, null_mut()),
        CL_INVALID_CONTEXT
    );
    check_err!(
        (f.ext.enqueue)(0, null_mut(), cb, 1, null(), null_mut()),
        CL_INVALID_EVENT_WAIT_LIST
    );
    check_err!(
        (f.ext.enqueue)(0, null_mut(), cb, 0, &foreign_event, null_mut()),
        CL_INVALID_EVENT_WAIT_LIST
    );
    check_err!(
        (f.ext.enqueue)(0, null_mut(), cb, 1, &null_mut(), null_mut()),
        CL_INVALID_EVENT_WAIT_LIST
    );
    // Another queue of the same device and context may run it (queue substitution).
    let q2 = unsafe { clCreateCommandQueue(f.env.ctx, f.env.dev, 0, &mut err) };
    let mut sub = [q2];
    check!((f.ext.enqueue)(
        1,
        sub.as_mut_ptr(),
        cb,
        0,
        null(),
        null_mut()
    ));
    check!(clFinish(q2));
    // A queue of other properties is not compatible (the spec: identical properties).
    const CL_QUEUE_PROPERTIES: cl_uint = 0x1093;
    let props: cl_bitfield = queue_val(f.env.queue, CL_QUEUE_PROPERTIES);
    let q3 = unsafe {
        clCreateCommandQueue(
            f.env.ctx,
            f.env.dev,
            props ^ CL_QUEUE_PROFILING_ENABLE,
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let mut other_props = [q3];
    check_err!(
        (f.ext.enqueue)(1, other_props.as_mut_ptr(), cb, 0, null(), null_mut()),
        CL_INCOMPATIBLE_COMMAND_QUEUE_KHR
    );
    unsafe {
        clSetUserEventStatus(foreign_event, CL_COMPLETE);
        clReleaseEvent(foreign_event);
        clReleaseCommandQueue(q2);
        clReleaseCommandQueue(q3);
        (f.ext.release)(cb);
    }
    let _: *const c_char = null();
}

/// Fills (word and wider patterns), a kernel, a copy and a rect copy, in order, replayed
/// twice: every replay refills, so both give the same contents.
#[test]
fn copies_and_fills() {
    setup();
    let f = Fixture::new();
    let n = 64;
    let a = f.env.buffer_from(&vec![0i32; n]);
    let b = f.env.buffer_from(&vec![0i32; n]);
    let c = f.env.buffer_from(&vec![0i32; 8 * 8]);
    let k = kernel(f.program, "add");
    arg(k, 0, &a);
    arg(k, 1, &1);
    let cb = f.create(f.env.queue, &[]);
    let word = 5i32;
    check!((f.ext.fill)(
        cb,
        null_mut(),
        null(),
        a,
        (&word as *const i32).cast(),
        4,
        0,
        4 * n,
        0,
        null(),
        null_mut(),
        null_mut()
    ));
    // An 8-byte pattern over the second half: not a repeated word.
    let wide = [7i32, 9];
    check!((f.ext.fill)(
        cb,
        null_mut(),
        null(),
        a,
        wide.as_ptr().cast(),
        8,
        2 * n,
        2 * n,
        0,
        null(),
        null_mut(),
        null_mut()
    ));
    f.launch(cb, k, n, &[]);
    check!((f.ext.copy)(
        cb,
        null_mut(),
        null(),
        a,
        b,
        0,
        0,
        4 * n,
        0,
        null(),
        null_mut(),
        null_mut()
    ));
    // A 2x3 rect of ints of b (row pitch 8 ints) into c at (1, 2) (row pitch 8 ints).
    let (so, dof, region) = ([0usize, 0, 0], [4usize, 2, 0], [8usize, 3, 1]);
    check!((f.ext.copy_rect)(
        cb,
        null_mut(),
        null(),
        b,
        c,
        so.as_ptr(),
        dof.as_ptr(),
        region.as_ptr(),
        32,
        0,
        32,
        0,
        0,
        null(),
        null_mut(),
        null_mut()
    ));
    check!((f.ext.finalize)(cb));
    let mut want_a: Vec<i32> = (0..n)
        .map(|i| if i < n / 2 { word } else { wide[i % 2] })
        .collect();
    for x in &mut want_a {
        *x += 1;
    }
    let mut want_c = vec![0i32; 64];
    for row in 0..3 {
        for col in 0..2 {
            want_c[(2 + row) * 8 + 1 + col] = want_a[row * 8 + col];
        }
    }
    for _ in 0..2 {
        let e = f.enqueue(cb, &[]);
        check!(clWaitForEvents(1, &e));
        unsafe { clReleaseEvent(e) };
        assert_eq!(f.env.read::<i32>(a, n), want_a);
        assert_eq!(f.env.read::<i32>(b, n), want_a);
        assert_eq!(f.env.read::<i32>(c, 64), want_c);
    }
    unsafe {
        (f.ext.release)(cb);
        clReleaseKernel(k);
        for m in [a, b, c] {
            clReleaseMemObject(m);
        }
    }
}

#[test]
fn copy_and_fill_errors() {
    setup();
    let f = Fixture::new();
    let a = f.env.buffer_from(&[0i32; 16]);
    let b = f.env.buffer_from(&[0i32; 16]);
    let other = Env::new();
    let foreign = other.buffer_from(&[0i32; 16]);
    let cb = f.create(f.env.queue, &[]);
    let copy = |s: cl_mem, d: cl_mem, so: usize, dof: usize, size: usize| unsafe {
        (f.ext.copy)(
            cb,
            null_mut(),
            null(),
            s,
            d,
            so,
            dof,
            size,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(copy(a, null_mut(), 0, 0, 4), CL_INVALID_MEM_OBJECT);
    assert_eq!(copy(a, foreign, 0, 0, 4), CL_INVALID_CONTEXT);
    assert_eq!(copy(a, b, 60, 0, 8), CL_INVALID_VALUE);
    assert_eq!(copy(a, b, 0, 0, 0), CL_INVALID_VALUE);
    assert_eq!(copy(a, a, 0, 4, 8), CL_MEM_COPY_OVERLAP);
    check_err!(
        (f.ext.copy)(
            cb,
            f.env.queue,
            null(),
            a,
            b,
            0,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut()
        ),
        CL_INVALID_COMMAND_QUEUE
    );
    let p = 1i32;
    let fill = |m: cl_mem, ps: usize, off: usize, size: usize| unsafe {
        (f.ext.fill)(
            cb,
            null_mut(),
            null(),
            m,
            (&p as *const i32).cast(),
            ps,
            off,
            size,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(fill(a, 3, 0, 12), CL_INVALID_VALUE);
    assert_eq!(fill(a, 4, 2, 4), CL_INVALID_VALUE);
    assert_eq!(fill(a, 4, 0, 128), CL_INVALID_VALUE);
    assert_eq!(fill(foreign, 4, 0, 4), CL_INVALID_CONTEXT);
    check_err!(
        (f.ext.fill)(
            cb,
            null_mut(),
            null(),
            a,
            null(),
            4,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    let (o, r) = ([0usize; 3], [4usize, 1, 1]);
    check_err!(
        (f.ext.copy_rect)(
            cb,
            null_mut(),
            null(),
            a,
            b,
            o.as_ptr(),
            null(),
            r.as_ptr(),
            0,
            0,
            0,
            0,
            0,
            null(),
            null_mut(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check!((f.ext.finalize)(cb));
    assert_eq!(fill(a, 4, 0, 4), CL_INVALID_OPERATION);
    unsafe {
        (f.ext.release)(cb);
        for m in [a, b, foreign] {
            clReleaseMemObject(m);
        }
    }
}

fn image_8x8(ctx: cl_context) -> cl_mem {
    let fmt = cl_image_format {
        image_channel_order: CL_R,
        image_channel_data_type: CL_UNSIGNED_INT32,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: 8,
        image_height: 8,
        ..unsafe { std::mem::zeroed() }
    };
    let mut err = 0;
    let m = unsafe { clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "clCreateImage: {}", err_name(err));
    m
}

/// Image fill, buffer-to-image, image-to-image and image-to-buffer copies, in order, replayed
/// twice.
#[test]
fn image_copies_and_fills() {
    setup();
    let f = Fixture::new();
    let (a, b) = (image_8x8(f.env.ctx), image_8x8(f.env.ctx));
    let block: Vec<u32> = (0..16).collect();
    let src = f.env.buffer_from(&block);
    let out = f.env.buffer_from(&[0u32; 64]);
    let cb = f.create(f.env.queue, &[]);
    let (zero, whole, at, block_region) =
        ([0usize; 3], [8usize, 8, 1], [2usize, 3, 0], [4usize, 4, 1]);
    let color = [7u32, 0, 0, 0];
    let none = (0, null(), null_mut(), null_mut());
    check!((f.ext.fill_image)(
        cb,
        null_mut(),
        null(),
        a,
        color.as_ptr().cast(),
        zero.as_ptr(),
        whole.as_ptr(),
        none.0,
        none.1,
        none.2,
        none.3
    ));
    check!((f.ext.buffer_to_image)(
        cb,
        null_mut(),
        null(),
        src,
        a,
        0,
        at.as_ptr(),
        block_region.as_ptr(),
        none.0,
        none.1,
        none.2,
        none.3
    ));
    check!((f.ext.copy_image)(
        cb,
        null_mut(),
        null(),
        a,
        b,
        zero.as_ptr(),
        zero.as_ptr(),
        whole.as_ptr(),
        none.0,
        none.1,
        none.2,
        none.3
    ));
    check!((f.ext.image_to_buffer)(
        cb,
        null_mut(),
        null(),
        b,
        out,
        zero.as_ptr(),
        whole.as_ptr(),
        0,
        none.0,
        none.1,
        none.2,
        none.3
    ));
    check!((f.ext.finalize)(cb));
    let mut want = vec![7u32; 64];
    for y in 0..4 {
        for x in 0..4 {
            want[(3 + y) * 8 + 2 + x] = block[y * 4 + x];
        }
    }
    for _ in 0..2 {
        f.env.write(out, &[0u32; 64]);
        let e = f.enqueue(cb, &[]);
        check!(clWaitForEvents(1, &e));
        unsafe { clReleaseEvent(e) };
        assert_eq!(f.env.read::<u32>(out, 64), want);
    }
    // The image errors of the clEnqueue* commands.
    check_err!(
        (f.ext.copy_image)(
            cb,
            null_mut(),
            null(),
            a,
            b,
            zero.as_ptr(),
            zero.as_ptr(),
            whole.as_ptr(),
            none.0,
            none.1,
            none.2,
            none.3
        ),
        CL_INVALID_OPERATION
    );
    let cb2 = f.create(f.env.queue, &[]);
    let big = [9usize, 8, 1];
    check_err!(
        (f.ext.copy_image)(
            cb2,
            null_mut(),
            null(),
            a,
            b,
            zero.as_ptr(),
            zero.as_ptr(),
            big.as_ptr(),
            none.0,
            none.1,
            none.2,
            none.3
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        (f.ext.copy_image)(
            cb2,
            null_mut(),
            null(),
            a,
            a,
            zero.as_ptr(),
            [1usize, 0, 0].as_ptr(),
            block_region.as_ptr(),
            none.0,
            none.1,
            none.2,
            none.3
        ),
        CL_MEM_COPY_OVERLAP
    );
    check_err!(
        (f.ext.fill_image)(
            cb2,
            null_mut(),
            null(),
            a,
            null(),
            zero.as_ptr(),
            whole.as_ptr(),
            none.0,
            none.1,
            none.2,
            none.3
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        (f.ext.image_to_buffer)(
            cb2,
            null_mut(),
            null(),
            src,
            out,
            zero.as_ptr(),
            whole.as_ptr(),
            0,
            none.0,
            none.1,
            none.2,
            none.3
        ),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        (f.ext.buffer_to_image)(
            cb2,
            null_mut(),
            null(),
            src,
            a,
            0,
            zero.as_ptr(),
            whole.as_ptr(),
            none.0,
            none.1,
            none.2,
            none.3
        ),
        CL_INVALID_VALUE
    );
    unsafe {
        (f.ext.release)(cb);
        (f.ext.release)(cb2);
        for m in [a, b, src, out] {
            clReleaseMemObject(m);
        }
    }
}

// cl_khr_command_buffer_mutable_dispatch
const CL_COMMAND_BUFFER_MUTABLE_KHR: cl_bitfield = 1 << 1;
const CL_INVALID_MUTABLE_COMMAND_KHR: cl_int = -1141;
const CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR: cl_uint = 0x12B0;
const CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR: cl_bitfield = 0x12B1;
const GLOBAL_OFFSET: cl_bitfield = 1;
const GLOBAL_SIZE: cl_bitfield = 2;
const LOCAL_SIZE: cl_bitfield = 4;
const ARGUMENTS: cl_bitfield = 8;
const EXEC_INFO: cl_bitfield = 16;
const CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR: cl_uint = 0x12A0;
const CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR: cl_uint = 0x12A1;
const CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR: cl_uint = 0x12AD;
const CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR: cl_uint = 0x12A2;
const CL_MUTABLE_DISPATCH_KERNEL_KHR: cl_uint = 0x12A3;
const CL_MUTABLE_DISPATCH_DIMENSIONS_KHR: cl_uint = 0x12A4;
const CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR: cl_uint = 0x12A5;
const CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR: cl_uint = 0x12A6;
const CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR: cl_uint = 0x12A7;
const CL_COMMAND_NDRANGE_KERNEL: cl_uint = 0x11F0;

#[repr(C)]
struct MutableArg {
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
}

#[repr(C)]
struct DispatchConfig {
    command: *mut c_void,
    num_args: cl_uint,
    num_svm_args: cl_uint,
    num_exec_infos: cl_uint,
    work_dim: cl_uint,
    arg_list: *const MutableArg,
    arg_svm_list: *const MutableArg,
    exec_info_list: *const c_void,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
}

impl DispatchConfig {
    fn new(command: *mut c_void) -> DispatchConfig {
        DispatchConfig {
            command,
            num_args: 0,
            num_svm_args: 0,
            num_exec_infos: 0,
            work_dim: 0,
            arg_list: null(),
            arg_svm_list: null(),
            exec_info_list: null(),
            global_work_offset: null(),
            global_work_size: null(),
            local_work_size: null(),
        }
    }
}

type Update =
    unsafe extern "C" fn(CommandBuffer, cl_uint, *const cl_uint, *const *const c_void) -> cl_int;

fn update_fn() -> Update {
    unsafe { std::mem::transmute(entry("clUpdateMutableCommandsKHR")) }
}

fn mutable_info_fn() -> Info {
    unsafe { std::mem::transmute(entry("clGetMutableCommandInfoKHR")) }
}

fn apply(update: Update, cb: CommandBuffer, config: &DispatchConfig) -> cl_int {
    let ty: cl_uint = 0;
    let p = config as *const DispatchConfig as *const c_void;
    unsafe { update(cb, 1, &ty, &p) }
}

impl Fixture {
    /// Records `k` over `n` work-items with a mutable handle and `props` (none if empty).
    fn launch_mutable(
        &self,
        cb: CommandBuffer,
        k: cl_kernel,
        n: usize,
        props: &[cl_bitfield],
    ) -> *mut c_void {
        let mut handle = null_mut();
        let p = if props.is_empty() {
            null()
        } else {
            props.as_ptr()
        };
        check!((self.ext.nd_range)(
            cb,
            null_mut(),
            p,
            k,
            1,
            null(),
            &n,
            null(),
            0,
            null(),
            null_mut(),
            &mut handle
        ));
        assert!(!handle.is_null());
        handle
    }
}

#[test]
fn mutable_dispatch_updates_arguments_and_sizes() {
    setup();
    assert!(has_extension("cl_khr_command_buffer_mutable_dispatch"));
    let caps: cl_bitfield = device_val(device(), CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR);
    // SVM exec info where the device has SVM.
    let exec_info = if has_svm() { EXEC_INFO } else { 0 };
    assert_eq!(
        caps,
        GLOBAL_OFFSET | GLOBAL_SIZE | LOCAL_SIZE | ARGUMENTS | exec_info
    );
    let f = Fixture::new();
    let update = update_fn();
    let n = 64;
    let a = f.env.buffer_from(&vec![0i32; n]);
    let b = f.env.buffer_from(&vec![0i32; n]);
    let c = f.env.buffer_from(&vec![0i32; n]);
    let (k, k2) = (kernel(f.program, "add"), kernel(f.program, "add"));
    arg(k, 0, &a);
    arg(k, 1, &1);
    arg(k2, 0, &b);
    arg(k2, 1, &1);
    let cb = f.create(
        f.env.queue,
        &[
            CL_COMMAND_BUFFER_FLAGS_KHR,
            CL_COMMAND_BUFFER_MUTABLE_KHR,
            0,
        ],
    );
    f.launch(cb, k2, n, &[]); // b += 1, not mutable, before and after the mutable launch
    let m = f.launch_mutable(cb, k, n, &[]);
    f.launch(cb, k2, n, &[]);
    check!((f.ext.finalize)(cb));
    let run = || {
        let e = f.enqueue(cb, &[]);
        check!(clWaitForEvents(1, &e));
        unsafe { clReleaseEvent(e) };
    };
    run(); // a = 1
    let five = 5i32;
    let args = [MutableArg {
        arg_index: 1,
        arg_size: 4,
        arg_value: (&five as *const i32).cast(),
    }];
    let mut config = DispatchConfig::new(m);
    config.num_args = 1;
    config.arg_list = args.as_ptr();
    assert_eq!(apply(update, cb, &config), CL_SUCCESS);
    run(); // a = 6
    assert_eq!(f.env.read::<i32>(a, n), vec![6; n]);
    // The first half only, then the second half (an offset), into another buffer.
    let half = n / 2;
    let mut config = DispatchConfig::new(m);
    config.global_work_size = &half;
    assert_eq!(apply(update, cb, &config), CL_SUCCESS);
    run(); // a[..half] = 11
    let buf_arg = [MutableArg {
        arg_index: 0,
        arg_size: 8,
        arg_value: (&c as *const cl_mem).cast(),
    }];
    let mut config = DispatchConfig::new(m);
    config.global_work_offset = &half;
    config.num_args = 1;
    config.arg_list = buf_arg.as_ptr();
    assert_eq!(apply(update, cb, &config), CL_SUCCESS);
    run(); // c[half..] = 5
    let want_a: Vec<i32> = (0..n).map(|i| if i < half { 11 } else { 6 }).collect();
    let want_c: Vec<i32> = (0..n).map(|i| if i < half { 0 } else { 5 }).collect();
    assert_eq!(f.env.read::<i32>(a, n), want_a);
    assert_eq!(f.env.read::<i32>(c, n), want_c);
    // The commands not updated ran every time.
    assert_eq!(f.env.read::<i32>(b, n), vec![8; n]);
    // What the handle reports now.
    let info = mutable_info_fn();
    let q = |p: cl_uint| {
        let mut size = 0;
        check!(info(m, p, 0, null_mut(), &mut size));
        let mut v = vec![0u8; size];
        check!(info(m, p, size, v.as_mut_ptr().cast(), null_mut()));
        v
    };
    assert_eq!(
        bytes_to::<cl_command_queue>(&q(CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR)),
        f.env.queue
    );
    assert_eq!(
        bytes_to::<CommandBuffer>(&q(CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR)),
        cb
    );
    assert_eq!(
        bytes_to::<cl_uint>(&q(CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR)),
        CL_COMMAND_NDRANGE_KERNEL
    );
    assert!(q(CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR).is_empty());
    assert_eq!(bytes_to::<cl_kernel>(&q(CL_MUTABLE_DISPATCH_KERNEL_KHR)), k);
    assert_eq!(
        bytes_to::<cl_uint>(&q(CL_MUTABLE_DISPATCH_DIMENSIONS_KHR)),
        1
    );
    assert_eq!(
        bytes_to_vec::<usize>(&q(CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR)),
        vec![half]
    );
    assert_eq!(
        bytes_to_vec::<usize>(&q(CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR)),
        vec![half]
    );
    assert_eq!(
        bytes_to_vec::<usize>(&q(CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR)),
        vec![0]
    );
    check_err!(info(m, 0x12FF, 0, null_mut(), null_mut()), CL_INVALID_VALUE);
    check_err!(
        info(
            null_mut(),
            CL_MUTABLE_DISPATCH_KERNEL_KHR,
            0,
            null_mut(),
            null_mut()
        ),
        CL_INVALID_MUTABLE_COMMAND_KHR
    );
    check!((f.ext.release)(cb));
    // The handle dies with its buffer.
    check_err!(
        info(m, CL_MUTABLE_DISPATCH_KERNEL_KHR, 0, null_mut(), null_mut()),
        CL_INVALID_MUTABLE_COMMAND_KHR
    );
    unsafe {
        clReleaseKernel(k);
        clReleaseKernel(k2);
        for x in [a, b, c] {
            clReleaseMemObject(x);
        }
    }
}

/// An update while a replay is pending: that replay runs the old command, the next the new.
#[test]
fn mutable_dispatch_update_while_pending() {
    setup();
    let f = Fixture::new();
    let update = update_fn();
    let n = 16;
    let a = f.env.buffer_from(&vec![0i32; n]);
    let k = kernel(f.program, "add");
    arg(k, 0, &a);
    arg(k, 1, &1);
    let flags = CL_COMMAND_BUFFER_MUTABLE_KHR | CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR;
    let cb = f.create(f.env.queue, &[CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0]);
    let m = f.launch_mutable(
        cb,
        k,
        n,
        &[CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, ARGUMENTS, 0],
    );
    check!((f.ext.finalize)(cb));
    let mut err = 0;
    let user = unsafe { clCreateUserEvent(f.env.ctx, &mut err) };
    let e1 = f.enqueue(cb, &[user]);
    let ten = 10i32;
    let args = [MutableArg {
        arg_index: 1,
        arg_size: 4,
        arg_value: (&ten as *const i32).cast(),
    }];
    let mut config = DispatchConfig::new(m);
    config.num_args = 1;
    config.arg_list = args.as_ptr();
    assert_eq!(apply(update, cb, &config), CL_SUCCESS);
    let e2 = f.enqueue(cb, &[]);
    check!(clSetUserEventStatus(user, CL_COMPLETE));
    check!(clWaitForEvents(2, [e1, e2].as_ptr()));
    assert_eq!(f.env.read::<i32>(a, n), vec![11; n]);
    // Only the arguments may change: a size update is refused.
    let size = 8usize;
    let mut config = DispatchConfig::new(m);
    config.global_work_size = &size;
    assert_eq!(apply(update, cb, &config), CL_INVALID_OPERATION);
    unsafe {
        for e in [user, e1, e2] {
            clReleaseEvent(e);
        }
        (f.ext.release)(cb);
        clReleaseKernel(k);
        clReleaseMemObject(a);
    }
}

#[test]
fn mutable_dispatch_errors() {
    setup();
    let f = Fixture::new();
    let update = update_fn();
    let n = 16usize;
    let a = f.env.buffer_from(&vec![0i32; n]);
    let k = kernel(f.program, "add");
    arg(k, 0, &a);
    arg(k, 1, &1);
    let mutable = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        0,
    ];
    let cb = f.create(f.env.queue, &mutable);
    // Launch properties: unknown fields, the same name twice, an unknown name.
    let mut h = null_mut();
    for props in [
        // A field no version defines.
        vec![CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, 1 << 5, 0],
        vec![
            CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
            ARGUMENTS,
            CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
            ARGUMENTS,
            0,
        ],
        vec![0x1234, 0, 0],
    ] {
        check_err!(
            (f.ext.nd_range)(
                cb,
                null_mut(),
                props.as_ptr(),
                k,
                1,
                null(),
                &n,
                null(),
                0,
                null(),
                null_mut(),
                &mut h
            ),
            CL_INVALID_VALUE
        );
    }
    let props = [
        CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
        ARGUMENTS | GLOBAL_SIZE,
        0,
    ];
    let m = f.launch_mutable(cb, k, n, &props);
    let info = mutable_info_fn();
    let mut got = [0u64; 3];
    check!(info(
        m,
        CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR,
        24,
        got.as_mut_ptr().cast(),
        null_mut()
    ));
    assert_eq!(got, props);
    let ok = DispatchConfig::new(m);
    // Not finalized.
    assert_eq!(apply(update, cb, &ok), CL_INVALID_OPERATION);
    check!((f.ext.finalize)(cb));
    assert_eq!(apply(update, cb, &ok), CL_SUCCESS);
    let ty: cl_uint = 0;
    let p = &ok as *const DispatchConfig as *const c_void;
    check_err!(update(cb, 0, &ty, &p), CL_INVALID_VALUE);
    check_err!(update(cb, 1, null(), &p), CL_INVALID_VALUE);
    check_err!(update(cb, 1, &ty, null()), CL_INVALID_VALUE);
    check_err!(update(cb, 1, &5, &p), CL_INVALID_VALUE);
    check_err!(
        update(null_mut(), 1, &ty, &p),
        CL_INVALID_COMMAND_BUFFER_KHR
    );
    assert_eq!(
        apply(update, cb, &DispatchConfig::new(null_mut())),
        CL_INVALID_MUTABLE_COMMAND_KHR
    );
    // A handle of another buffer.
    let other = f.create(f.env.queue, &mutable);
    let m2 = f.launch_mutable(other, k, n, &[]);
    check!((f.ext.finalize)(other));
    assert_eq!(
        apply(update, cb, &DispatchConfig::new(m2)),
        CL_INVALID_MUTABLE_COMMAND_KHR
    );
    // A field the launch does not let change; a bad argument; other dimensions.
    let mut config = DispatchConfig::new(m);
    config.global_work_offset = &n;
    assert_eq!(apply(update, cb, &config), CL_INVALID_OPERATION);
    let v = 1i32;
    let bad = [MutableArg {
        arg_index: 7,
        arg_size: 4,
        arg_value: (&v as *const i32).cast(),
    }];
    let mut config = DispatchConfig::new(m);
    config.num_args = 1;
    config.arg_list = bad.as_ptr();
    assert_eq!(apply(update, cb, &config), CL_INVALID_ARG_INDEX);
    let bad = [MutableArg {
        arg_index: 1,
        arg_size: 2,
        arg_value: (&v as *const i32).cast(),
    }];
    config.arg_list = bad.as_ptr();
    assert_eq!(apply(update, cb, &config), CL_INVALID_ARG_SIZE);
    let mut config = DispatchConfig::new(m);
    config.work_dim = 2;
    assert_eq!(apply(update, cb, &config), CL_INVALID_VALUE);
    let mut config = DispatchConfig::new(m);
    config.num_args = 1;
    assert_eq!(apply(update, cb, &config), CL_INVALID_VALUE);
    // A buffer without the mutable flag: handles, but no updates.
    let plain = f.create(f.env.queue, &[]);
    let m3 = f.launch_mutable(plain, k, n, &[]);
    check!((f.ext.finalize)(plain));
    assert_eq!(
        apply(update, plain, &DispatchConfig::new(m3)),
        CL_INVALID_OPERATION
    );
    // Failed updates changed nothing: the launch still adds 1 to all 16.
    let e = f.enqueue(cb, &[]);
    check!(clWaitForEvents(1, &e));
    assert_eq!(f.env.read::<i32>(a, n), vec![1; n]);
    unsafe {
        clReleaseEvent(e);
        for x in [cb, other, plain] {
            (f.ext.release)(x);
        }
        clReleaseKernel(k);
        clReleaseMemObject(a);
    }
}

/// CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR (of the buffer or of the launch):
/// an update that adds work-groups, or whose count cannot be told (no local size), is refused.
#[test]
fn mutable_dispatch_no_additional_work_groups() {
    setup();
    let f = Fixture::new();
    let update = update_fn();
    let n = 64;
    let a = f.env.buffer_from(&vec![0i32; n]);
    let k = kernel(f.program, "add");
    arg(k, 0, &a);
    arg(k, 1, &1);
    const BUFFER_ASSERTS: cl_bitfield = 0x12B7;
    const LAUNCH_ASSERTS: cl_bitfield = 0x12B8;
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        BUFFER_ASSERTS,
        1,
        0,
    ];
    let cb = f.create(f.env.queue, &props);
    let (global, local) = (16usize, 4usize);
    let mut with_local = null_mut();
    check!((f.ext.nd_range)(
        cb,
        null_mut(),
        null(),
        k,
        1,
        null(),
        &global,
        &local,
        0,
        null(),
        null_mut(),
        &mut with_local
    ));
    let without_local = f.launch_mutable(cb, k, global, &[]);
    check!((f.ext.finalize)(cb));
    let sized = |m, g: &usize| {
        let mut c = DispatchConfig::new(m);
        c.global_work_size = g;
        apply(update, cb, &c)
    };
    assert_eq!(sized(with_local, &32), CL_INVALID_WORK_GROUP_SIZE);
    assert_eq!(sized(with_local, &8), CL_SUCCESS);
    assert_eq!(sized(without_local, &8), CL_INVALID_WORK_GROUP_SIZE);
    // The launch's own assertion, in a buffer without one.
    let cb2 = f.create(
        f.env.queue,
        &[
            CL_COMMAND_BUFFER_FLAGS_KHR,
            CL_COMMAND_BUFFER_MUTABLE_KHR,
            0,
        ],
    );
    let mut m = null_mut();
    let launch_props = [LAUNCH_ASSERTS, 1, 0];
    check!((f.ext.nd_range)(
        cb2,
        null_mut(),
        launch_props.as_ptr(),
        k,
        1,
        null(),
        &global,
        &local,
        0,
        null(),
        null_mut(),
        &mut m
    ));
    check!((f.ext.finalize)(cb2));
    let mut c = DispatchConfig::new(m);
    let big = 20usize;
    c.global_work_size = &big;
    assert_eq!(apply(update, cb2, &c), CL_INVALID_WORK_GROUP_SIZE);
    // Replays run the updated sizes: 8 items of the first launch, 16 of the second.
    let e = f.enqueue(cb, &[]);
    check!(clWaitForEvents(1, &e));
    let want: Vec<i32> = (0..n).map(|i| (i < 8) as i32 + (i < 16) as i32).collect();
    assert_eq!(f.env.read::<i32>(a, n), want);
    unsafe {
        clReleaseEvent(e);
        (f.ext.release)(cb);
        (f.ext.release)(cb2);
        clReleaseKernel(k);
        clReleaseMemObject(a);
    }
}

/// A mutable launch whose arguments may change may be recorded before they are all set: the
/// buffer is then Finalized, not Executable (no enqueue), until an update sets them.
#[test]
fn mutable_dispatch_deferred_arguments() {
    setup();
    let f = Fixture::new();
    let update = update_fn();
    let n = 32;
    let a = f.env.buffer_from(&vec![1i32; n]);
    let k = kernel(f.program, "add");
    arg(k, 0, &a); // argument 1 not set
    let flags = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        0,
    ];
    let cb = f.create(f.env.queue, &flags);
    // Not deferrable: a plain launch, and a mutable one whose arguments may not change.
    check_err!(
        (f.ext.nd_range)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            &n,
            null(),
            0,
            null(),
            null_mut(),
            null_mut()
        ),
        CL_INVALID_KERNEL_ARGS
    );
    let sizes_only = [CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, GLOBAL_SIZE, 0];
    let mut h = null_mut();
    check_err!(
        (f.ext.nd_range)(
            cb,
            null_mut(),
            sizes_only.as_ptr(),
            k,
            1,
            null(),
            &n,
            null(),
            0,
            null(),
            null_mut(),
            &mut h
        ),
        CL_INVALID_KERNEL_ARGS
    );
    let m = f.launch_mutable(
        cb,
        k,
        n,
        &[CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, ARGUMENTS, 0],
    );
    check!((f.ext.finalize)(cb));
    const FINALIZED: cl_uint = 2;
    assert_eq!(f.state(cb), FINALIZED);
    check_err!(
        (f.ext.enqueue)(0, null_mut(), cb, 0, null(), null_mut()),
        CL_INVALID_OPERATION
    );
    let v = 41i32;
    let args = [MutableArg {
        arg_index: 1,
        arg_size: 4,
        arg_value: (&v as *const i32).cast(),
    }];
    let mut config = DispatchConfig::new(m);
    config.num_args = 1;
    config.arg_list = args.as_ptr();
    assert_eq!(apply(update, cb, &config), CL_SUCCESS);
    assert_eq!(f.state(cb), EXECUTABLE);
    let e = f.enqueue(cb, &[]);
    check!(clWaitForEvents(1, &e));
    assert_eq!(f.env.read::<i32>(a, n), vec![42; n]);
    unsafe {
        clReleaseEvent(e);
        (f.ext.release)(cb);
        clReleaseKernel(k);
        clReleaseMemObject(a);
    }
}

type SvmCopy = unsafe extern "C" fn(
    CommandBuffer,
    cl_command_queue,
    *const cl_bitfield,
    *mut c_void,
    *const c_void,
    usize,
    cl_uint,
    *const SyncPoint,
    *mut SyncPoint,
    *mut *mut c_void,
) -> cl_int;
type SvmFill = unsafe extern "C" fn(
    CommandBuffer,
    cl_command_queue,
    *const cl_bitfield,
    *mut c_void,
    *const c_void,
    usize,
    usize,
    cl_uint,
    *const SyncPoint,
    *mut SyncPoint,
    *mut *mut c_void,
) -> cl_int;

fn svm_fns() -> (SvmCopy, SvmFill) {
    // SAFETY: the entry points of these names, of these signatures.
    unsafe {
        (
            std::mem::transmute::<*mut c_void, SvmCopy>(entry("clCommandSVMMemcpyKHR")),
            std::mem::transmute::<*mut c_void, SvmFill>(entry("clCommandSVMMemFillKHR")),
        )
    }
}

const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
const CL_MEM_SVM_FINE_GRAIN_BUFFER: cl_bitfield = 1 << 10;

fn has_svm() -> bool {
    device_val::<cl_bitfield>(device(), CL_DEVICE_SVM_CAPABILITIES) & 1 != 0
}

/// The SVM commands on a device without SVM: CL_INVALID_OPERATION after the command-buffer's
/// own checks (as clEnqueueSVMMemcpy on such a device). On lavapipe (which has SVM) this
/// checks only the command-buffer's checks.
#[test]
fn svm_commands_checks_before_svm() {
    setup();
    let f = Fixture::new();
    let (copy, fill) = svm_fns();
    let cb = f.create(f.env.queue, &[]);
    let mut x = [0u32; 16];
    let (p, q) = (x.as_mut_ptr().cast::<c_void>(), x[8..].as_mut_ptr().cast());
    let none = (0, null(), null_mut(), null_mut());
    check_err!(
        copy(
            null_mut(),
            null_mut(),
            null(),
            p,
            q,
            4,
            none.0,
            none.1,
            none.2,
            none.3
        ),
        CL_INVALID_COMMAND_BUFFER_KHR
    );
    check_err!(
        fill(
            cb,
            f.env.queue,
            null(),
            p,
            p,
            4,
            16,
            none.0,
            none.1,
            none.2,
            none.3
        ),
        CL_INVALID_COMMAND_QUEUE
    );
    if !has_svm() {
        check_err!(
            copy(
                cb,
                null_mut(),
                null(),
                p,
                q,
                4,
                none.0,
                none.1,
                none.2,
                none.3
            ),
            CL_INVALID_OPERATION
        );
        check_err!(
            fill(
                cb,
                null_mut(),
                null(),
                p,
                p,
                4,
                16,
                none.0,
                none.1,
                none.2,
                none.3
            ),
            CL_INVALID_OPERATION
        );
    }
    check!((f.ext.release)(cb));
}

/// clCommandSVMMemcpyKHR / clCommandSVMMemFillKHR with a launch on an SVM pointer between
/// them: each replay copies, fills and adds at replay time (the source changed between
/// replays shows in the second), checked against a reference computed here.
#[test]
fn svm_commands_copy_and_fill_at_replay() {
    setup();
    if !has_svm() {
        // Covered by svm_commands_checks_before_svm on such devices.
        return;
    }
    let f = Fixture::new();
    let (copy, fill) = svm_fns();
    let n = 256usize;
    let bytes = 4 * n;
    let ctx = f.env.ctx;
    // A fine-grained source the host writes directly, a coarse-grained destination.
    let src = unsafe {
        clSVMAlloc(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
            bytes,
            0,
        )
    };
    let dst = unsafe { clSVMAlloc(ctx, CL_MEM_READ_WRITE, bytes, 0) };
    assert!(!src.is_null() && !dst.is_null());
    let host = |v: &dyn Fn(usize) -> i32| {
        let s = unsafe { std::slice::from_raw_parts_mut(src.cast::<i32>(), n) };
        (0..n).for_each(|i| s[i] = v(i));
    };
    host(&|i| i as i32);
    let k = kernel(f.program, "add");
    check!(clSetKernelArgSVMPointer(k, 0, dst));
    arg(k, 1, &1000i32);
    let cb = f.create(f.env.queue, &[]);
    let none = (0, null(), null_mut());
    // dst[0..n/2] = src[n/2..n]; dst[n/2..3n/4] = 7 (a word); dst[3n/4..n] = (5, 6) (8 bytes).
    let mut s1 = 0;
    check!(copy(
        cb,
        null_mut(),
        null(),
        dst,
        unsafe { src.cast::<i32>().add(n / 2) }.cast(),
        bytes / 2,
        none.0,
        none.1,
        &mut s1,
        none.2
    ));
    let word = 7i32;
    let mut s2 = 0;
    check!(fill(
        cb,
        null_mut(),
        null(),
        unsafe { dst.cast::<i32>().add(n / 2) }.cast(),
        (&word as *const i32).cast(),
        4,
        bytes / 4,
        none.0,
        none.1,
        &mut s2,
        none.2
    ));
    let wide = [5i32, 6];
    let mut s3 = 0;
    check!(fill(
        cb,
        null_mut(),
        null(),
        unsafe { dst.cast::<i32>().add(3 * n / 4) }.cast(),
        wide.as_ptr().cast(),
        8,
        bytes / 4,
        none.0,
        none.1,
        &mut s3,
        none.2
    ));
    assert_eq!((s1, s2, s3), (1, 2, 3));
    // Then every element += 1000, after the three.
    f.launch(cb, k, n, &[s1, s2, s3]);
    check!((f.ext.finalize)(cb));
    let expect = |base: &dyn Fn(usize) -> i32| -> Vec<i32> {
        (0..n)
            .map(|i| {
                1000 + match i {
                    i if i < n / 2 => base(i + n / 2),
                    i if i < 3 * n / 4 => 7,
                    i => [5, 6][i % 2],
                }
            })
            .collect()
    };
    let read = || {
        let mut out = vec![0i32; n];
        check!(clEnqueueSVMMemcpy(
            f.env.queue,
            1,
            out.as_mut_ptr().cast(),
            dst,
            bytes,
            0,
            null(),
            null_mut()
        ));
        out
    };
    // Recorded, not run: the destination is untouched until the replay.
    let e = f.enqueue(cb, &[]);
    check!(clWaitForEvents(1, &e));
    assert_eq!(read(), expect(&|i| i as i32));
    host(&|i| 3 * i as i32);
    let e2 = f.enqueue(cb, &[]);
    check!(clWaitForEvents(1, &e2));
    assert_eq!(read(), expect(&|i| 3 * i as i32));
    unsafe {
        clReleaseEvent(e);
        clReleaseEvent(e2);
        (f.ext.release)(cb);
        clReleaseKernel(k);
        clSVMFree(ctx, src);
        clSVMFree(ctx, dst);
    }
}

/// Every error code the spec lists for clCommandSVMMemcpyKHR / clCommandSVMMemFillKHR that
/// the device can produce, and that a failed command records nothing (the next sync point).
#[test]
fn svm_command_errors() {
    setup();
    if !has_svm() {
        // Covered by svm_commands_checks_before_svm on such devices.
        return;
    }
    let f = Fixture::new();
    let (copy, fill) = svm_fns();
    let ctx = f.env.ctx;
    let a = unsafe { clSVMAlloc(ctx, CL_MEM_READ_WRITE, 4096, 0) };
    let b = unsafe { clSVMAlloc(ctx, CL_MEM_READ_WRITE, 4096, 0) };
    assert!(!a.is_null() && !b.is_null());
    let at = |p: *mut c_void, o: usize| unsafe { p.cast::<u8>().add(o) }.cast::<c_void>();
    let cb = f.create(f.env.queue, &[]);
    type Mh = *mut *mut c_void;
    let c = |cb: CommandBuffer,
             q: cl_command_queue,
             props: *const cl_bitfield,
             d: *mut c_void,
             s: *mut c_void,
             size: usize,
             ns: cl_uint,
             wl: *const SyncPoint,
             mh: Mh| unsafe { copy(cb, q, props, d, s, size, ns, wl, null_mut(), mh) };
    let nm: *mut c_void = null_mut();
    let nq: cl_command_queue = null_mut();
    let no: Mh = null_mut();
    let props: [cl_bitfield; 3] = [0x12A4, 0, 0];
    let mut handle = null_mut();
    let sp: SyncPoint = 1;
    // Command-buffer checks.
    assert_eq!(
        c(nm, nq, null(), a, b, 16, 0, null(), no),
        CL_INVALID_COMMAND_BUFFER_KHR
    );
    assert_eq!(
        c(cb, f.env.queue, null(), a, b, 16, 0, null(), no),
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(
        c(cb, nq, props.as_ptr(), a, b, 16, 0, null(), no),
        CL_INVALID_VALUE
    );
    assert_eq!(
        c(cb, nq, null(), a, b, 16, 0, null(), &mut handle),
        CL_INVALID_VALUE
    );
    assert_eq!(
        c(cb, nq, null(), a, b, 16, 1, null(), no),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    assert_eq!(
        c(cb, nq, null(), a, b, 16, 0, &sp, no),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    // No sync point handed out yet.
    assert_eq!(
        c(cb, nq, null(), a, b, 16, 1, &sp, no),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    // The copy's own.
    assert_eq!(
        c(cb, nq, null(), nm, b, 16, 0, null(), no),
        CL_INVALID_VALUE
    );
    assert_eq!(
        c(cb, nq, null(), a, null_mut(), 16, 0, null(), no),
        CL_INVALID_VALUE
    );
    assert_eq!(
        c(cb, nq, null(), a, at(a, 8), 16, 0, null(), no),
        CL_MEM_COPY_OVERLAP
    );
    assert_eq!(
        c(cb, nq, null(), at(a, 8), a, 16, 0, null(), no),
        CL_MEM_COPY_OVERLAP
    );
    // Past the end of an allocation; host memory, which a replay cannot reach.
    assert_eq!(
        c(cb, nq, null(), at(a, 4090), b, 16, 0, null(), no),
        CL_INVALID_VALUE
    );
    let mut host = [0u8; 64];
    let h = host.as_mut_ptr().cast::<c_void>();
    assert_eq!(c(cb, nq, null(), a, h, 16, 0, null(), no), CL_INVALID_VALUE);
    assert_eq!(c(cb, nq, null(), h, a, 16, 0, null(), no), CL_INVALID_VALUE);
    let fl = |p: *mut c_void, pat: *const c_void, psz: usize, size: usize, mh: Mh| unsafe {
        fill(cb, nq, null(), p, pat, psz, size, 0, null(), null_mut(), mh)
    };
    let pat = [1u8; 256];
    let pp = pat.as_ptr().cast::<c_void>();
    assert_eq!(fl(nm, pp, 4, 16, no), CL_INVALID_VALUE);
    assert_eq!(fl(a, null(), 4, 16, no), CL_INVALID_VALUE);
    for bad in [0, 3, 6, 256] {
        assert_eq!(
            fl(a, pp, bad, 768, no),
            CL_INVALID_VALUE,
            "pattern_size {bad}"
        );
    }
    // Not aligned to the pattern; size not a multiple of it; past the end; host memory.
    assert_eq!(fl(at(a, 2), pp, 4, 16, no), CL_INVALID_VALUE);
    assert_eq!(fl(a, pp, 4, 18, no), CL_INVALID_VALUE);
    assert_eq!(fl(at(a, 4088), pp, 4, 16, no), CL_INVALID_VALUE);
    assert_eq!(fl(h, pp, 4, 16, no), CL_INVALID_VALUE);
    assert_eq!(fl(a, pp, 4, 16, &mut handle), CL_INVALID_VALUE);
    // Nothing was recorded: the first command that succeeds gets sync point 1.
    let mut s = 0;
    check!(fill(cb, nq, null(), a, pp, 4, 16, 0, null(), &mut s, no));
    assert_eq!(s, 1);
    let mut s2 = 0;
    check!(copy(cb, nq, null(), b, a, 16, 1, &s, &mut s2, no));
    assert_eq!(s2, 2);
    check!((f.ext.finalize)(cb));
    // Finalized: CL_INVALID_OPERATION.
    assert_eq!(
        c(cb, nq, null(), a, b, 16, 0, null(), no),
        CL_INVALID_OPERATION
    );
    assert_eq!(fl(a, pp, 4, 16, no), CL_INVALID_OPERATION);
    unsafe {
        (f.ext.release)(cb);
        clSVMFree(ctx, a);
        clSVMFree(ctx, b);
    }
}

/// The buffer a destructor callback asks about (a cl_command_buffer_khr) and what it saw.
struct Probe {
    cb: usize,
    info: Info,
    state: std::sync::Mutex<Option<cl_int>>,
}

unsafe extern "C" fn query_buffer(_m: cl_mem, ud: *mut c_void) {
    let probe = unsafe { &*(ud as *const Probe) };
    let mut s: cl_uint = 9;
    let err = unsafe {
        (probe.info)(
            probe.cb as CommandBuffer,
            CL_COMMAND_BUFFER_STATE_KHR,
            4,
            (&mut s as *mut cl_uint).cast(),
            null_mut(),
        )
    };
    *probe.state.lock().unwrap() = Some(err);
}

/// No application callback runs under a command-buffer's lock: an update that replaces the
/// last reference to a buffer argument runs that buffer's destructor callback, which queries
/// the command-buffer (taking its lock). Under the lock it would deadlock: the scenario runs on
/// a thread of its own and must finish within a minute.
#[test]
fn update_runs_destructor_callbacks_outside_the_buffer_lock() {
    setup();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let f = Fixture::new();
        let update = update_fn();
        let n = 16;
        let a = f.env.buffer_from(&vec![0i32; n]);
        let b = f.env.buffer_from(&vec![5i32; n]);
        let k = kernel(f.program, "add");
        arg(k, 0, &a);
        arg(k, 1, &1);
        let flags = CL_COMMAND_BUFFER_MUTABLE_KHR;
        let cb = f.create(f.env.queue, &[CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0]);
        let m = f.launch_mutable(
            cb,
            k,
            n,
            &[CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, ARGUMENTS, 0],
        );
        check!((f.ext.finalize)(cb));
        let e = f.enqueue(cb, &[]);
        check!(clWaitForEvents(1, &e));
        check!(clFinish(f.env.queue));
        assert_eq!(f.env.read::<i32>(a, n), vec![1; n]);
        let probe = Box::new(Probe {
            cb: cb as usize,
            info: f.ext.info,
            state: std::sync::Mutex::new(None),
        });
        let ud = &*probe as *const Probe as *mut c_void;
        check!(clSetMemObjectDestructorCallback(a, Some(query_buffer), ud));
        // The kernel and the application let go of `a`: the recorded launch holds it alone.
        arg(k, 0, &b);
        check!(clReleaseMemObject(a));
        assert_eq!(*probe.state.lock().unwrap(), None);
        let args = [MutableArg {
            arg_index: 0,
            arg_size: std::mem::size_of::<cl_mem>(),
            arg_value: (&b as *const cl_mem).cast(),
        }];
        let mut config = DispatchConfig::new(m);
        config.num_args = 1;
        config.arg_list = args.as_ptr();
        assert_eq!(apply(update, cb, &config), CL_SUCCESS);
        // The callback ran (in the update, or once nothing used `a`), and its query worked.
        check!(clFinish(f.env.queue));
        assert_eq!(*probe.state.lock().unwrap(), Some(CL_SUCCESS));
        let e2 = f.enqueue(cb, &[]);
        check!(clWaitForEvents(1, &e2));
        assert_eq!(f.env.read::<i32>(b, n), vec![6; n]);
        unsafe {
            clReleaseEvent(e);
            clReleaseEvent(e2);
            (f.ext.release)(cb);
            clReleaseKernel(k);
            clReleaseMemObject(b);
        }
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the update deadlocked: a callback ran under the command-buffer's lock");
}

/// Two threads record into command-buffers of their own at once (launches, copies, fills),
/// then replay them: each gets its own results. (Recording takes the buffer's own lock and
/// per-kernel ones only; nothing global.)
#[test]
fn threads_record_into_their_own_buffers_at_once() {
    setup();
    const COMMANDS: usize = 50;
    let f = Fixture::new();
    #[derive(Clone, Copy)]
    struct Handles(cl_context, cl_command_queue, cl_program);
    unsafe impl Send for Handles {}
    let h = Handles(f.env.ctx, f.env.queue, f.program);
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let h = h;
                let x = ext();
                let n = 256usize;
                let mut err = 0;
                let mk = || unsafe {
                    let mut err = 0;
                    let m = clCreateBuffer(h.0, CL_MEM_READ_WRITE, 4 * n, null_mut(), &mut err);
                    assert_eq!(err, CL_SUCCESS);
                    m
                };
                let (a, b) = (mk(), mk());
                let k = kernel(h.2, "add");
                arg(k, 0, &a);
                arg(k, 1, &((t + 1) as i32));
                let cb = unsafe { (x.create)(1, &h.1, null(), &mut err) };
                assert_eq!(err, CL_SUCCESS);
                let zero = 0i32;
                barrier.wait();
                check!((x.fill)(
                    cb,
                    null_mut(),
                    null(),
                    a,
                    (&zero as *const i32).cast(),
                    4,
                    0,
                    4 * n,
                    0,
                    null(),
                    null_mut(),
                    null_mut()
                ));
                for _ in 0..COMMANDS {
                    check!((x.nd_range)(
                        cb,
                        null_mut(),
                        null(),
                        k,
                        1,
                        null(),
                        &n,
                        null(),
                        0,
                        null(),
                        null_mut(),
                        null_mut()
                    ));
                }
                check!((x.copy)(
                    cb,
                    null_mut(),
                    null(),
                    a,
                    b,
                    0,
                    0,
                    4 * n,
                    0,
                    null(),
                    null_mut(),
                    null_mut()
                ));
                check!((x.finalize)(cb));
                let mut e = null_mut();
                check!((x.enqueue)(0, null_mut(), cb, 0, null(), &mut e));
                check!(clWaitForEvents(1, &e));
                let mut out = vec![0i32; n];
                check!(clEnqueueReadBuffer(
                    h.1,
                    b,
                    CL_TRUE,
                    0,
                    4 * n,
                    out.as_mut_ptr().cast(),
                    0,
                    null(),
                    null_mut()
                ));
                assert_eq!(out, vec![(COMMANDS * (t + 1)) as i32; n], "thread {t}");
                unsafe {
                    clReleaseEvent(e);
                    (x.release)(cb);
                    clReleaseKernel(k);
                    clReleaseMemObject(a);
                    clReleaseMemObject(b);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// A recorded copy of a large device-local buffer takes the copy kernel where the device's
/// workarounds say clEnqueueCopyBuffer does (forced here with VKCL_COPY_BY_KERNEL=1 and
/// VKCL_PLACEMENT=device, in a child process): the launch log names the kernel, and the
/// replay copies the bytes.
#[test]
fn recorded_large_copy_takes_the_copy_kernel() {
    setup();
    if std::env::var_os("VKCL_TEST_COPY_KERNEL_CHILD").is_some() {
        let f = Fixture::new();
        let n = (4 << 20) / 4;
        let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let a = f.env.buffer_from(&data);
        let b = f.env.buffer_from(&vec![0u32; n]);
        let cb = f.create(f.env.queue, &[]);
        eprintln!("vkcl-test: recording");
        check!((f.ext.copy)(
            cb,
            null_mut(),
            null(),
            a,
            b,
            0,
            0,
            4 * n,
            0,
            null(),
            null_mut(),
            null_mut()
        ));
        eprintln!("vkcl-test: recorded");
        check!((f.ext.finalize)(cb));
        let e = f.enqueue(cb, &[]);
        check!(clWaitForEvents(1, &e));
        assert!(f.env.read::<u32>(b, n) == data, "the replay copied wrongly");
        unsafe {
            clReleaseEvent(e);
            (f.ext.release)(cb);
            clReleaseMemObject(a);
            clReleaseMemObject(b);
        }
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "recorded_large_copy_takes_the_copy_kernel",
            "--exact",
            "--nocapture",
        ])
        .env("VKCL_TEST_COPY_KERNEL_CHILD", "1")
        .env("VKCL_COPY_BY_KERNEL", "1")
        .env("VKCL_PLACEMENT", "device")
        .env("VKCL_LOG", "launch=debug")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{log}");
    let start = log.find("vkcl-test: recording").expect("child ran");
    let end = log.find("vkcl-test: recorded").expect("child recorded");
    assert!(
        log[start..end].contains("vkcl_copy16"),
        "the recorded copy did not take the copy kernel:\n{}",
        &log[start..end]
    );
}

/// clCommandNDRangeKernelKHR returns the errors of clEnqueueNDRangeKernel: each case gives the
/// spec's code, the same as the enqueue gives (and records nothing).
#[test]
fn launch_errors_match_cl_enqueue_nd_range_kernel() {
    setup();
    let f = Fixture::new();
    let k = kernel(f.program, "add");
    let a = f.env.buffer_from(&[0i32; 8]);
    arg(k, 0, &a);
    arg(k, 1, &1);
    let cb = f.create(f.env.queue, &[]);
    const CL_DEVICE_MAX_WORK_ITEM_SIZES: cl_uint = 0x1005;
    let items: Vec<usize> = bytes_to_vec(&device_info(device(), CL_DEVICE_MAX_WORK_ITEM_SIZES));
    let big = u32::MAX as usize + 1;
    let too_wide = items[0] + 1;
    let cases: [(&str, usize, usize, Option<usize>, cl_int); 4] = [
        (
            "global size past 2^32",
            0,
            big,
            None,
            CL_INVALID_GLOBAL_WORK_SIZE,
        ),
        (
            "offset + size past 2^32",
            u32::MAX as usize,
            4,
            None,
            CL_INVALID_GLOBAL_OFFSET,
        ),
        ("local size 0", 0, 4, Some(0), CL_INVALID_WORK_GROUP_SIZE),
        (
            "local size past the device's",
            0,
            too_wide,
            Some(too_wide),
            CL_INVALID_WORK_ITEM_SIZE,
        ),
    ];
    for (what, offset, global, local, expect) in cases {
        let l = local.as_ref().map_or(null(), |l| l as *const usize);
        let recorded = unsafe {
            (f.ext.nd_range)(
                cb,
                null_mut(),
                null(),
                k,
                1,
                &offset,
                &global,
                l,
                0,
                null(),
                null_mut(),
                null_mut(),
            )
        };
        let enqueued = unsafe {
            clEnqueueNDRangeKernel(
                f.env.queue,
                k,
                1,
                &offset,
                &global,
                l,
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(
            (err_name(recorded), err_name(enqueued)),
            (err_name(expect), err_name(expect)),
            "{what}"
        );
    }
    // Nothing was recorded: the first launch gets sync point 1.
    assert_eq!(f.launch(cb, k, 8, &[]), 1);
    unsafe {
        (f.ext.release)(cb);
        clReleaseKernel(k);
        clReleaseMemObject(a);
    }
}

/// clCommandCopyImageKHR of images of different formats: CL_IMAGE_FORMAT_MISMATCH, as
/// clEnqueueCopyImage.
#[test]
fn image_copy_of_other_formats_mismatches() {
    setup();
    let f = Fixture::new();
    let a = image_8x8(f.env.ctx);
    let fmt = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNSIGNED_INT8,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: 8,
        image_height: 8,
        ..unsafe { std::mem::zeroed() }
    };
    let mut err = 0;
    let b = unsafe {
        clCreateImage(
            f.env.ctx,
            CL_MEM_READ_WRITE,
            &fmt,
            &desc,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let cb = f.create(f.env.queue, &[]);
    let (origin, region) = ([0usize; 3], [8usize, 8, 1]);
    check_err!(
        (f.ext.copy_image)(
            cb,
            null_mut(),
            null(),
            a,
            b,
            origin.as_ptr(),
            origin.as_ptr(),
            region.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut()
        ),
        CL_IMAGE_FORMAT_MISMATCH
    );
    check_err!(
        clEnqueueCopyImage(
            f.env.queue,
            a,
            b,
            origin.as_ptr(),
            origin.as_ptr(),
            region.as_ptr(),
            0,
            null(),
            null_mut()
        ),
        CL_IMAGE_FORMAT_MISMATCH
    );
    unsafe {
        (f.ext.release)(cb);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    }
}

/// With two devices in a context (VKCL_DEVICE_COPIES=2, in a child process): a queue of the
/// other device is not compatible (CL_INCOMPATIBLE_COMMAND_QUEUE_KHR), a kernel whose program
/// was built for the other device alone is CL_INVALID_PROGRAM_EXECUTABLE, and a buffer takes
/// one queue (no cl_khr_command_buffer_multi_device: CL_INVALID_VALUE for two).
#[test]
fn second_device_of_a_context() {
    setup();
    if std::env::var_os("VKCL_TEST_TWO_DEVICES_CHILD").is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["second_device_of_a_context", "--exact", "--nocapture"])
            .env("VKCL_TEST_TWO_DEVICES_CHILD", "1")
            .env("VKCL_DEVICE_COPIES", "2")
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "child failed:\n{stdout}{log}");
        assert!(stdout.contains("1 passed"), "child ran nothing:\n{stdout}");
        return;
    }
    let x = ext();
    let mut devs = [null_mut(); 2];
    let mut n = 0;
    check!(clGetDeviceIDs(
        platform(),
        CL_DEVICE_TYPE_ALL,
        2,
        devs.as_mut_ptr(),
        &mut n
    ));
    assert_eq!(n, 2, "VKCL_DEVICE_COPIES=2 gives two devices");
    assert!(!has_extension("cl_khr_command_buffer_multi_device"));
    let mut err = 0;
    let ctx = unsafe { clCreateContext(null(), 2, devs.as_ptr(), None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let q0 = unsafe { clCreateCommandQueue(ctx, devs[0], 0, &mut err) };
    let q1 = unsafe { clCreateCommandQueue(ctx, devs[1], 0, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let src = std::ffi::CString::new(SRC).unwrap();
    let p = unsafe { clCreateProgramWithSource(ctx, 1, &src.as_ptr(), null(), &mut err) };
    check!(clBuildProgram(
        p,
        1,
        &devs[1],
        c"".as_ptr(),
        None,
        null_mut()
    ));
    let k = kernel(p, "add");
    let a = unsafe { clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, null_mut(), &mut err) };
    arg(k, 0, &a);
    arg(k, 1, &1);
    let two = [q0, q1];
    let mut e2 = 0;
    let none = unsafe { (x.create)(2, two.as_ptr(), null(), &mut e2) };
    assert!(none.is_null());
    assert_eq!(err_name(e2), err_name(CL_INVALID_VALUE));
    let cb = unsafe { (x.create)(1, &q0, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let g = 16usize;
    check_err!(
        (x.nd_range)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            &g,
            null(),
            0,
            null(),
            null_mut(),
            null_mut()
        ),
        CL_INVALID_PROGRAM_EXECUTABLE
    );
    check!((x.finalize)(cb));
    let mut other = [q1];
    check_err!(
        (x.enqueue)(1, other.as_mut_ptr(), cb, 0, null(), null_mut()),
        CL_INCOMPATIBLE_COMMAND_QUEUE_KHR
    );
    let mut same = [q0];
    check!((x.enqueue)(1, same.as_mut_ptr(), cb, 0, null(), null_mut()));
    check!(clFinish(q0));
    unsafe {
        (x.release)(cb);
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseMemObject(a);
        clReleaseCommandQueue(q0);
        clReleaseCommandQueue(q1);
        clReleaseContext(ctx);
    }
}

/// Mutable dispatch of SVM arguments and SVM exec info (arg_svm_list, exec_info_list): a
/// launch reaching an SVM buffer through a pointer stored in another is updated to a new pair
/// of allocations; each replay increments the allocation it was recorded or updated for, and
/// the kernel's own exec info set after recording does not change the recorded launch.
#[test]
fn mutable_dispatch_svm_arguments_and_exec_info() {
    setup();
    if !has_svm() {
        // No SVM: nothing to update (CL_INVALID_OPERATION from clSetKernelArgSVMPointer).
        return;
    }
    let f = Fixture::new();
    let update = update_fn();
    let n = 64usize;
    let ctx = f.env.ctx;
    // The pointer held as an address (clspv refuses pointers in structures, as LIST in
    // tests/svm.rs).
    let src = "typedef struct { ulong ptr; } wrapper;
        kernel void bump(global wrapper* w) { ((global int*)w->ptr)[get_global_id(0)]++; }\n";
    let p = f.env.program(src, "");
    let k = kernel(p, "bump");
    let alloc = |size| unsafe {
        clSVMAlloc(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
            size,
            0,
        )
    };
    // (wrapper, buffer) pairs: the wrapper holds the buffer's address.
    let pair = || {
        let (w, b) = (alloc(8), alloc(4 * n));
        assert!(!w.is_null() && !b.is_null());
        unsafe {
            *w.cast::<*mut c_void>() = b;
            std::ptr::write_bytes(b.cast::<i32>(), 0, n);
        }
        (w, b)
    };
    let ((w1, b1), (w2, b2)) = (pair(), pair());
    let values =
        |b: *mut c_void| unsafe { std::slice::from_raw_parts(b.cast::<i32>(), n).to_vec() };
    const CL_KERNEL_EXEC_INFO_SVM_PTRS: cl_uint = 0x11B6;
    check!(clSetKernelArgSVMPointer(k, 0, w1));
    check!(clSetKernelExecInfo(
        k,
        CL_KERNEL_EXEC_INFO_SVM_PTRS,
        8,
        (&b1 as *const *mut c_void).cast()
    ));
    let flags = CL_COMMAND_BUFFER_MUTABLE_KHR;
    let cb = f.create(f.env.queue, &[CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0]);
    let m = f.launch_mutable(
        cb,
        k,
        n,
        &[
            CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
            ARGUMENTS | EXEC_INFO,
            0,
        ],
    );
    // A launch that may change its arguments only: its exec info may not change.
    let fixed = f.launch_mutable(
        cb,
        k,
        n,
        &[CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, ARGUMENTS, 0],
    );
    check!((f.ext.finalize)(cb));
    // The kernel's exec info changing later does not change the recording.
    check!(clSetKernelExecInfo(
        k,
        CL_KERNEL_EXEC_INFO_SVM_PTRS,
        8,
        (&b2 as *const *mut c_void).cast()
    ));
    let run = || {
        let e = f.enqueue(cb, &[]);
        check!(clWaitForEvents(1, &e));
        check!(clFinish(f.env.queue));
        unsafe { clReleaseEvent(e) };
    };
    run();
    assert_eq!(values(b1), vec![2; n], "both launches on the first pair");
    assert_eq!(values(b2), vec![0; n]);
    let svm_args = [MutableArg {
        arg_index: 0,
        arg_size: 0,
        arg_value: w2,
    }];
    #[repr(C)]
    struct ExecInfo {
        param_name: cl_uint,
        param_value_size: usize,
        param_value: *const c_void,
    }
    let infos = [ExecInfo {
        param_name: CL_KERNEL_EXEC_INFO_SVM_PTRS,
        param_value_size: 8,
        param_value: (&b2 as *const *mut c_void).cast(),
    }];
    // Errors first: exec info of a launch that may not change it; an SVM argument past the
    // kernel's; lists without counts.
    let mut config = DispatchConfig::new(fixed);
    config.num_exec_infos = 1;
    config.exec_info_list = infos.as_ptr().cast();
    assert_eq!(
        err_name(apply(update, cb, &config)),
        err_name(CL_INVALID_OPERATION)
    );
    let bad_index = [MutableArg {
        arg_index: 1,
        arg_size: 0,
        arg_value: w2,
    }];
    let mut config = DispatchConfig::new(m);
    config.num_svm_args = 1;
    config.arg_svm_list = bad_index.as_ptr();
    assert_eq!(
        err_name(apply(update, cb, &config)),
        err_name(CL_INVALID_ARG_INDEX)
    );
    config.arg_svm_list = null();
    assert_eq!(
        err_name(apply(update, cb, &config)),
        err_name(CL_INVALID_VALUE)
    );
    let mut config = DispatchConfig::new(m);
    config.num_exec_infos = 1;
    assert_eq!(
        err_name(apply(update, cb, &config)),
        err_name(CL_INVALID_VALUE)
    );
    let bad_info = [ExecInfo {
        param_name: 0x1234,
        param_value_size: 8,
        param_value: (&b2 as *const *mut c_void).cast(),
    }];
    config.exec_info_list = bad_info.as_ptr().cast();
    assert_eq!(
        err_name(apply(update, cb, &config)),
        err_name(CL_INVALID_VALUE)
    );
    // Nothing changed: a replay bumps the first pair again.
    run();
    assert_eq!(values(b1), vec![4; n]);
    // The first launch moves to the second pair (argument and exec info in one update).
    let mut config = DispatchConfig::new(m);
    config.num_svm_args = 1;
    config.arg_svm_list = svm_args.as_ptr();
    config.num_exec_infos = 1;
    config.exec_info_list = infos.as_ptr().cast();
    assert_eq!(apply(update, cb, &config), CL_SUCCESS);
    run();
    assert_eq!(
        values(b1),
        vec![5; n],
        "the second launch stays on the first pair"
    );
    assert_eq!(
        values(b2),
        vec![1; n],
        "the first launch moved to the second pair"
    );
    unsafe {
        (f.ext.release)(cb);
        clReleaseKernel(k);
        clReleaseProgram(p);
        for q in [w1, b1, w2, b2] {
            clSVMFree(ctx, q);
        }
    }
}

/// A kernel that enqueues kernels is refused (CL_INVALID_OPERATION: no
/// CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR).
#[test]
fn a_kernel_that_enqueues_kernels_is_refused() {
    let f = Fixture::new();
    let caps: cl_bitfield = device_val(f.env.dev, 0x1070);
    if caps == 0 {
        return;
    }
    let src = "kernel void k(global int *o) { enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), ^{ o[0] = 1; }); }";
    let p = f.env.program(src, "-cl-std=CL2.0");
    let k = kernel(p, "k");
    let o = f.env.buffer_from(&[0i32; 1]);
    arg(k, 0, &o);
    let cb = f.create(f.env.queue, &[]);
    let n = 1usize;
    let r = unsafe {
        (f.ext.nd_range)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            &n,
            null(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION);
    check!((f.ext.release)(cb));
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
