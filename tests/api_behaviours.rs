//! Issue 16: error codes and behaviours the OpenCL 3.0 API specification states, each checked
//! through the ICD loader as an application meets them.
#[macro_use]
mod common;
use common::*;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

const CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES: cl_uint = 0x1070;
const CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT: cl_uint = 0x1;

fn create_context(props: &[cl_context_properties]) -> (cl_context, cl_int) {
    let dev = device();
    let mut err = 0;
    let c = unsafe { clCreateContext(props.as_ptr(), 1, &dev, None, null_mut(), &mut err) };
    (c, err)
}

/// The ICD loader finds the platform of clCreateContextFromType in its properties: the list
/// gets a CL_CONTEXT_PLATFORM first where it has none.
fn create_context_from_type(props: &[cl_context_properties]) -> (cl_context, cl_int) {
    let mut with_platform = vec![];
    if !props.contains(&CL_CONTEXT_PLATFORM) {
        with_platform = vec![CL_CONTEXT_PLATFORM, platform() as cl_context_properties];
    }
    with_platform.extend_from_slice(props);
    let props = &with_platform[..];
    let mut err = 0;
    let c = unsafe {
        clCreateContextFromType(
            props.as_ptr(),
            CL_DEVICE_TYPE_ALL,
            None,
            null_mut(),
            &mut err,
        )
    };
    (c, err)
}

/// clCreateContext / clCreateContextFromType: "CL_INVALID_PROPERTY if context property name in
/// properties is not a supported property name, if the value specified for a supported
/// property name is not valid, or if the same property name is specified more than once."
#[test]
fn context_properties_invalid_value_duplicate_and_unknown() {
    let p = platform() as cl_context_properties;
    let sync = CL_CONTEXT_INTEROP_USER_SYNC;
    let bad: [&[cl_context_properties]; 5] = [
        &[sync, 2, 0],
        &[sync, -1, 0],
        &[sync, CL_TRUE as isize, sync, CL_FALSE as isize, 0],
        &[CL_CONTEXT_PLATFORM, p, CL_CONTEXT_PLATFORM, p, 0],
        &[0x7777, 1, 0],
    ];
    for props in bad {
        for (name, f) in [
            ("clCreateContext", create_context as fn(&[_]) -> _),
            ("clCreateContextFromType", create_context_from_type),
        ] {
            let (c, err) = f(props);
            assert!(c.is_null(), "{name}({props:?}) returned a context");
            assert_eq!(
                err,
                CL_INVALID_PROPERTY,
                "{name}({props:?}): {}",
                err_name(err)
            );
        }
    }
    // Both valid values of CL_CONTEXT_INTEROP_USER_SYNC are accepted, and reported back.
    for v in [CL_TRUE, CL_FALSE] {
        let props = [CL_CONTEXT_PLATFORM, p, sync, v as isize, 0];
        for f in [create_context as fn(&[_]) -> _, create_context_from_type] {
            let (c, err) = f(&props);
            assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
            let got: Vec<isize> = bytes_to_vec(&context_info(c, CL_CONTEXT_PROPERTIES));
            assert_eq!(got, props);
            check!(clReleaseContext(c));
        }
    }
}

/// clSetDefaultDeviceCommandQueue: "CL_INVALID_OPERATION if device does not support On-Device
/// Queues" (CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES is 0: no device-side enqueue), else
/// CL_INVALID_COMMAND_QUEUE for what is not an on-device queue of the device (a host queue,
/// NULL; tests/device_enqueue.rs has the rest).
#[test]
fn set_default_device_queue_without_device_enqueue() {
    let e = Env::new();
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES);
    let refused = match caps {
        0 => CL_INVALID_OPERATION,
        _ => CL_INVALID_COMMAND_QUEUE,
    };
    check_err!(
        clSetDefaultDeviceCommandQueue(e.ctx, e.dev, e.queue),
        refused
    );
    check_err!(
        clSetDefaultDeviceCommandQueue(e.ctx, e.dev, null_mut()),
        refused
    );
    check_err!(
        clSetDefaultDeviceCommandQueue(null_mut(), e.dev, e.queue),
        CL_INVALID_CONTEXT
    );
    check_err!(
        clSetDefaultDeviceCommandQueue(e.ctx, null_mut(), e.queue),
        CL_INVALID_DEVICE
    );
}

/// clSetKernelArg on a `sampler_t` argument: "CL_INVALID_SAMPLER for an argument declared to be
/// of type sampler_t when the specified arg_value is not a valid sampler object";
/// CL_INVALID_ARG_SIZE for a size other than sizeof(cl_sampler); CL_INVALID_ARG_VALUE for a
/// NULL arg_value.
#[test]
fn set_kernel_arg_sampler_checks() {
    let e = Env::new();
    let p = e.program(
        "kernel void k(read_only image2d_t img, sampler_t s, global float4* out) {\n\
         out[0] = read_imagef(img, s, (int2)(0, 0));\n}\n",
        "",
    );
    let k = kernel(p, "k");
    let mut err = 0;
    let s = unsafe {
        clCreateSampler(
            e.ctx,
            CL_FALSE,
            CL_ADDRESS_CLAMP_TO_EDGE,
            CL_FILTER_NEAREST,
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    let sz = std::mem::size_of::<cl_sampler>();
    check!(clSetKernelArg(k, 1, sz, (&s as *const cl_sampler).cast()));
    // Not a sampler: NULL, a buffer, a sampler of another context.
    let no_sampler: cl_sampler = null_mut();
    check_err!(
        clSetKernelArg(k, 1, sz, (&no_sampler as *const cl_sampler).cast()),
        CL_INVALID_SAMPLER
    );
    let b = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    check_err!(
        clSetKernelArg(k, 1, sz, (&b as *const cl_mem).cast()),
        CL_INVALID_SAMPLER
    );
    let other = Env::new();
    let s2 = unsafe {
        clCreateSampler(
            other.ctx,
            CL_FALSE,
            CL_ADDRESS_CLAMP_TO_EDGE,
            CL_FILTER_NEAREST,
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    check_err!(
        clSetKernelArg(k, 1, sz, (&s2 as *const cl_sampler).cast()),
        CL_INVALID_SAMPLER
    );
    check_err!(clSetKernelArg(k, 1, sz, null()), CL_INVALID_ARG_VALUE);
    for bad in [0, sz - 1, sz + 1, 2 * sz] {
        check_err!(
            clSetKernelArg(k, 1, bad, (&s as *const cl_sampler).cast()),
            CL_INVALID_ARG_SIZE
        );
    }
    check!(clReleaseSampler(s2));
    check!(clReleaseSampler(s));
    check!(clReleaseMemObject(b));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

fn compile(e: &Env, src: &str) -> cl_program {
    let ptr = src.as_ptr() as *const c_char;
    let len = src.len();
    let mut err = 0;
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    check!(clCompileProgram(
        p,
        1,
        &e.dev,
        null(),
        0,
        null(),
        null(),
        None,
        null_mut()
    ));
    assert_eq!(
        build_val::<cl_uint>(p, e.dev, CL_PROGRAM_BINARY_TYPE),
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    );
    p
}

static LINKED: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn link_done(p: cl_program, _: *mut c_void) {
    LINKED.store(p as usize, Ordering::SeqCst);
    CALLS.fetch_add(1, Ordering::SeqCst);
}

/// clLinkProgram: "If the linking operation can begin, clLinkProgram returns a valid non-zero
/// program object. If pfn_notify is NULL, the errcode_ret will be set to CL_SUCCESS if the link
/// operation was successful and CL_LINK_PROGRAM_FAILURE if there is a failure to link".
/// Two objects defining the same kernel cannot be linked.
#[test]
fn link_failure_returns_program_with_log() {
    let e = Env::new();
    let src = "kernel void twice(global int* x) { x[0] = 1; }\n";
    let objs = [compile(&e, src), compile(&e, src)];
    let mut err = 0;
    let p = unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            null(),
            2,
            objs.as_ptr(),
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_LINK_PROGRAM_FAILURE, "{}", err_name(err));
    assert!(!p.is_null(), "a failed link returns its program");
    assert_eq!(
        build_val::<cl_int>(p, e.dev, CL_PROGRAM_BUILD_STATUS),
        CL_BUILD_ERROR
    );
    let log = build_str(p, e.dev, CL_PROGRAM_BUILD_LOG);
    assert!(!log.is_empty(), "a failed link has a log");
    assert_eq!(program_val::<cl_uint>(p, CL_PROGRAM_REFERENCE_COUNT), 1);
    let mut kerr = 0;
    let k = unsafe { clCreateKernel(p, c"twice".as_ptr(), &mut kerr) };
    assert!(k.is_null());
    assert_eq!(kerr, CL_INVALID_PROGRAM_EXECUTABLE, "{}", err_name(kerr));
    check!(clReleaseProgram(p));

    // With a callback: the callback gets the program the call returned, which failed.
    let p = unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            null(),
            2,
            objs.as_ptr(),
            Some(link_done),
            null_mut(),
            &mut err,
        )
    };
    assert!(
        err == CL_SUCCESS || err == CL_LINK_PROGRAM_FAILURE,
        "{}",
        err_name(err)
    );
    assert!(!p.is_null(), "a link with a callback returns its program");
    let start = std::time::Instant::now();
    while CALLS.load(Ordering::SeqCst) == 0 {
        assert!(start.elapsed().as_secs() < 60, "link callback never came");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(LINKED.load(Ordering::SeqCst), p as usize);
    assert_eq!(
        build_val::<cl_int>(p, e.dev, CL_PROGRAM_BUILD_STATUS),
        CL_BUILD_ERROR
    );
    assert!(!build_str(p, e.dev, CL_PROGRAM_BUILD_LOG).is_empty());
    check!(clReleaseProgram(p));
    for o in objs {
        check!(clReleaseProgram(o));
    }
}

/// OpenCL C 3.0 §6.15.14.3: "printf returns 0 if it was executed successfully and -1
/// otherwise."
#[test]
fn printf_returns_zero() {
    let e = Env::new();
    for opts in ["", "-cl-std=CL1.2", "-cl-std=CL2.0", "-cl-std=CL3.0"] {
        printf_result(&e, opts);
    }
}

fn printf_result(e: &Env, opts: &str) {
    let p = e.program(
        "kernel void k(global int* out) {\n\
         int r = printf(\"x\");\n\
         out[0] = r;\n\
         out[1] = printf(\"%d %s\\n\", 5, \"y\");\n\
         printf(\"unused\\n\");\n\
         if (printf(\"z\\n\") == 0) out[2] = 7;\n}\n",
        opts,
    );
    let k = kernel(p, "k");
    let b = e.buffer_from(&[9i32; 3]);
    arg(k, 0, &b);
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<i32>(b, 3), [0, 0, 7], "{opts}");
    check!(clReleaseMemObject(b));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// One rect copy within a buffer of 8-byte rows, 4 rows a slice, 2 slices (64 bytes holding
/// 0..64); Ok(contents after) or the error.
fn rect_copy_within(
    e: &Env,
    use_host_ptr: bool,
    src: [usize; 3],
    dst: [usize; 3],
    region: [usize; 3],
) -> Result<Vec<u8>, cl_int> {
    let init: Vec<u8> = (0..64).collect();
    // The conformance test's buffers: CL_MEM_USE_HOST_PTR on malloc'ed (unaligned) memory.
    let mut host = [0u8; 65];
    host[1..].copy_from_slice(&init);
    let b = if use_host_ptr {
        let flags = CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR;
        e.buffer(flags, 64, host[1..].as_mut_ptr().cast())
    } else {
        e.buffer_from(&init)
    };
    let code = unsafe {
        clEnqueueCopyBufferRect(
            e.queue,
            b,
            b,
            src.as_ptr(),
            dst.as_ptr(),
            region.as_ptr(),
            8,
            32,
            8,
            32,
            0,
            null(),
            null_mut(),
        )
    };
    let out = e.read::<u8>(b, 64);
    check!(clReleaseMemObject(b));
    if code != CL_SUCCESS {
        assert_eq!(out, init, "a refused copy changed the buffer");
        return Err(code);
    }
    // The expected contents, byte by byte.
    let mut want = init.clone();
    for z in 0..region[2] {
        for y in 0..region[1] {
            for x in 0..region[0] {
                let at = |o: [usize; 3]| (o[2] + z) * 32 + (o[1] + y) * 8 + o[0] + x;
                want[at(dst)] = init[at(src)];
            }
        }
    }
    assert_eq!(out, want, "copy {src:?} -> {dst:?} of {region:?}");
    Ok(out)
}

/// clEnqueueCopyBufferRect within one buffer: CL_MEM_COPY_OVERLAP only when the two regions
/// share a byte (the spec's appendix on overlap of rectangular regions); adjacent regions and
/// regions interleaved by the row or slice pitch are copied.
#[test]
fn copy_buffer_rect_within_one_buffer() {
    let e = Env::new();
    let ok: [([usize; 3], [usize; 3], [usize; 3]); 8] = [
        // adjacent within a row
        ([0, 0, 0], [4, 0, 0], [4, 1, 1]),
        ([4, 0, 0], [0, 0, 0], [4, 1, 1]),
        // interleaved by the row pitch: the left and right halves of 4 rows
        ([0, 0, 0], [4, 0, 0], [4, 4, 2]),
        ([4, 0, 0], [0, 0, 0], [4, 4, 2]),
        // adjacent rows
        ([0, 0, 0], [0, 2, 0], [8, 2, 1]),
        // interleaved by the slice pitch: rows 0-1 and rows 2-3 of both slices
        ([0, 0, 0], [0, 2, 0], [8, 2, 2]),
        // adjacent slices
        ([0, 0, 0], [0, 0, 1], [8, 4, 1]),
        // rows that run past the row pitch into the next row, still disjoint
        ([6, 0, 0], [2, 0, 0], [4, 2, 1]),
    ];
    for ((s, d, r), host) in ok.iter().flat_map(|c| [(*c, false), (*c, true)]) {
        if let Err(code) = rect_copy_within(&e, host, s, d, r) {
            panic!("copy {s:?} -> {d:?} of {r:?}: {}", err_name(code));
        }
    }
    let overlapping: [([usize; 3], [usize; 3], [usize; 3]); 6] = [
        // one byte shared in a row
        ([0, 0, 0], [3, 0, 0], [4, 1, 1]),
        // the same region
        ([1, 1, 0], [1, 1, 0], [2, 2, 1]),
        // one row shared
        ([0, 0, 0], [0, 1, 0], [8, 2, 1]),
        // the last byte of a slice's region and the first of the next
        ([7, 3, 0], [0, 0, 1], [2, 1, 1]),
        // one row shared in each slice
        ([0, 0, 0], [0, 1, 0], [8, 2, 2]),
        // wrapping rows that meet the other region
        ([6, 0, 0], [1, 1, 0], [4, 1, 1]),
    ];
    for ((s, d, r), host) in overlapping.iter().flat_map(|c| [(*c, false), (*c, true)]) {
        match rect_copy_within(&e, host, s, d, r) {
            Err(code) => assert_eq!(
                code,
                CL_MEM_COPY_OVERLAP,
                "copy {s:?} -> {d:?} of {r:?}: {}",
                err_name(code)
            ),
            Ok(_) => panic!("copy {s:?} -> {d:?} of {r:?} overlaps but was done"),
        }
    }
}

/// CL_DEVICE_MAX_MEM_ALLOC_SIZE meets the full profile's minimum, and a buffer of that size is
/// created, written and read at its end, and indexed near its end by a kernel.
#[test]
fn max_mem_alloc_size_buffer_is_usable() {
    let e = Env::new();
    let max = device_val::<cl_ulong>(e.dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    let global = device_val::<cl_ulong>(e.dev, CL_DEVICE_GLOBAL_MEM_SIZE);
    let min = (1u64 << 30).min(global / 4).max(128 << 20);
    assert!(
        max >= min,
        "CL_DEVICE_MAX_MEM_ALLOC_SIZE {max} < max(min(1 GiB, {global} / 4), 128 MiB)"
    );
    assert!(max <= global);
    let size = max as usize;
    let b = e.buffer(CL_MEM_READ_WRITE, size, null_mut());
    let tail: Vec<u8> = (0..64u8).map(|i| i ^ 0xA5).collect();
    check!(clEnqueueWriteBuffer(
        e.queue,
        b,
        CL_TRUE,
        size - 64,
        64,
        tail.as_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let mut back = [0u8; 64];
    check!(clEnqueueReadBuffer(
        e.queue,
        b,
        CL_TRUE,
        size - 64,
        64,
        back.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    assert_eq!(back[..], tail[..]);
    // A kernel writes the last 256 words (and reads the one before, written by the host).
    let p = e.program(
        "kernel void k(global uint* b, uint n) {\n\
         uint i = n - 1 - get_global_id(0);\n\
         b[i] = i ^ b[n - 257];\n}\n",
        "",
    );
    let k = kernel(p, "k");
    let words = (size / 4) as u32;
    let marker = [0x5A5A_5A5Au32];
    check!(clEnqueueWriteBuffer(
        e.queue,
        b,
        CL_TRUE,
        (words as usize - 257) * 4,
        4,
        marker.as_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    arg(k, 0, &b);
    arg(k, 1, &words);
    e.run(k, None, &[256], None);
    let mut last = vec![0u32; 256];
    check!(clEnqueueReadBuffer(
        e.queue,
        b,
        CL_TRUE,
        size - 1024,
        1024,
        last.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    for (j, &v) in last.iter().enumerate() {
        let i = words - 256 + j as u32;
        assert_eq!(v, i ^ 0x5A5A_5A5A, "word {i}");
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseMemObject(b));
    // One byte more is refused.
    let mut err = 0;
    let m = unsafe { clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, size + 1, null_mut(), &mut err) };
    assert!(m.is_null());
    assert_eq!(err, CL_INVALID_BUFFER_SIZE, "{}", err_name(err));
}

fn failed_user_event(e: &Env) -> cl_event {
    let mut err = 0;
    let u = unsafe { clCreateUserEvent(e.ctx, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    check!(clSetUserEventStatus(u, -5));
    assert_eq!(
        event_val::<cl_int>(u, CL_EVENT_COMMAND_EXECUTION_STATUS),
        -5
    );
    u
}

fn assert_failed(ev: cl_event) {
    check_err!(
        clWaitForEvents(1, &ev),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    let status = event_val::<cl_int>(ev, CL_EVENT_COMMAND_EXECUTION_STATUS);
    assert!(status < 0, "event status {status}");
}

/// A non-blocking enqueue whose wait list holds an event that already failed succeeds; its
/// event terminates with a negative status. (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST is
/// a return value of blocking calls only.)
#[test]
fn nonblocking_enqueue_after_failed_event() {
    let e = Env::new();
    let u = failed_user_event(&e);
    let b = e.buffer_from(&[1u32; 16]);
    let data = [7u32; 16];
    let mut ev = null_mut();
    check!(clEnqueueWriteBuffer(
        e.queue,
        b,
        CL_FALSE,
        0,
        64,
        data.as_ptr().cast(),
        1,
        &u,
        &mut ev
    ));
    assert_failed(ev);
    check!(clReleaseEvent(ev));
    let p = e.program(
        "kernel void k(global uint* x) { x[get_global_id(0)] = 3; }\n",
        "",
    );
    let k = kernel(p, "k");
    arg(k, 0, &b);
    let n = 16usize;
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        1,
        null(),
        &n,
        null(),
        1,
        &u,
        &mut ev
    ));
    assert_failed(ev);
    check!(clReleaseEvent(ev));
    check!(clEnqueueMarkerWithWaitList(e.queue, 1, &u, &mut ev));
    assert_failed(ev);
    check!(clReleaseEvent(ev));
    let mut host = [0u32; 16];
    check!(clEnqueueReadBuffer(
        e.queue,
        b,
        CL_FALSE,
        0,
        64,
        host.as_mut_ptr().cast(),
        1,
        &u,
        &mut ev
    ));
    assert_failed(ev);
    check!(clReleaseEvent(ev));
    // A blocking call returns the error.
    check_err!(
        clEnqueueReadBuffer(
            e.queue,
            b,
            CL_TRUE,
            0,
            64,
            host.as_mut_ptr().cast(),
            1,
            &u,
            null_mut()
        ),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    // None of those commands ran, and the queue goes on.
    check!(clFinish(e.queue));
    assert_eq!(e.read::<u32>(b, 16), [1; 16]);
    e.run(k, None, &[16], None);
    assert_eq!(e.read::<u32>(b, 16), [3; 16]);
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseMemObject(b));
    check!(clReleaseEvent(u));
}

/// clCreateSubBuffer: "CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context
/// associated with buffer for which the origin field of the cl_buffer_region structure passed
/// in buffer_create_info is aligned to the CL_DEVICE_MEM_BASE_ADDR_ALIGN value."
#[test]
fn sub_buffer_origin_alignment() {
    let e = Env::new();
    let align_bits = device_val::<cl_uint>(e.dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN) as usize;
    let align = align_bits / 8;
    let parent = e.buffer(CL_MEM_READ_WRITE, 4 * align, null_mut());
    let sub = |origin: usize| {
        let region = cl_buffer_region { origin, size: 16 };
        let mut err = 0;
        let m = unsafe {
            clCreateSubBuffer(
                parent,
                CL_MEM_READ_WRITE,
                CL_BUFFER_CREATE_TYPE_REGION,
                (&region as *const cl_buffer_region).cast(),
                &mut err,
            )
        };
        (m, err)
    };
    for origin in [1, 4, align / 2, align + 16] {
        let (m, err) = sub(origin);
        assert!(m.is_null());
        assert_eq!(
            err,
            CL_MISALIGNED_SUB_BUFFER_OFFSET,
            "origin {origin}: {}",
            err_name(err)
        );
    }
    for origin in [0, align, 3 * align] {
        let (m, err) = sub(origin);
        assert_eq!(err, CL_SUCCESS, "origin {origin}: {}", err_name(err));
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseMemObject(parent));
}

/// The conformance test's pattern (basic/bufferreadwriterect): random regions copied within
/// one CL_MEM_USE_HOST_PTR buffer of odd dimensions, skipped where the regions share a byte,
/// each copy checked against a host model.
#[test]
fn copy_buffer_rect_within_one_buffer_random() {
    let e = Env::new();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = |lo: usize, hi: usize| {
        // xorshift64: [lo, hi]
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        lo + (seed % (hi - lo + 1) as u64) as usize
    };
    let (w, h, d) = (37usize, 11usize, 9usize);
    let size = w * h * d;
    let mut model: Vec<u8> = (0..size).map(|i| (i * 7 + 3) as u8).collect();
    let mut host = vec![0u8; size + 1];
    host[1..].copy_from_slice(&model);
    let flags = CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR;
    let b = e.buffer(flags, size, host[1..].as_mut_ptr().cast());
    let (row, slice) = (w, w * h);
    let mut copied = 0;
    for _ in 0..200 {
        let region = [rand(1, w), rand(1, h), rand(1, d)];
        let src = [
            rand(0, w - region[0]),
            rand(0, h - region[1]),
            rand(0, d - region[2]),
        ];
        let dst = [
            rand(0, w - region[0]),
            rand(0, h - region[1]),
            rand(0, d - region[2]),
        ];
        let at = |o: [usize; 3], x: usize, y: usize, z: usize| {
            (o[2] + z) * slice + (o[1] + y) * row + o[0] + x
        };
        let mut src_bytes = std::collections::HashSet::new();
        let mut shared = false;
        for z in 0..region[2] {
            for y in 0..region[1] {
                for x in 0..region[0] {
                    src_bytes.insert(at(src, x, y, z));
                }
            }
        }
        for z in 0..region[2] {
            for y in 0..region[1] {
                for x in 0..region[0] {
                    shared |= src_bytes.contains(&at(dst, x, y, z));
                }
            }
        }
        let code = unsafe {
            clEnqueueCopyBufferRect(
                e.queue,
                b,
                b,
                src.as_ptr(),
                dst.as_ptr(),
                region.as_ptr(),
                row,
                slice,
                row,
                slice,
                0,
                null(),
                null_mut(),
            )
        };
        if shared {
            assert_eq!(
                code,
                CL_MEM_COPY_OVERLAP,
                "{src:?} -> {dst:?} of {region:?}: {}",
                err_name(code)
            );
            continue;
        }
        assert_eq!(
            code,
            CL_SUCCESS,
            "{src:?} -> {dst:?} of {region:?}: {}",
            err_name(code)
        );
        copied += 1;
        let before = model.clone();
        for z in 0..region[2] {
            for y in 0..region[1] {
                for x in 0..region[0] {
                    model[at(dst, x, y, z)] = before[at(src, x, y, z)];
                }
            }
        }
        assert!(
            e.read::<u8>(b, size) == model,
            "{src:?} -> {dst:?} of {region:?}"
        );
    }
    assert!(copied > 20, "only {copied} disjoint copies");
    check!(clReleaseMemObject(b));
}
