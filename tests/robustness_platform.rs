//! API robustness: Platform, device, context and queue entry points.
//! The rules the expectations follow are in tests/robust/mod.rs.
#![allow(unused_imports, unused_macros)]
#[macro_use]
mod common;
#[macro_use]
mod robust;
use common::*;
use robust::*;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

#[test]
fn platform_entry_points() {
    let f = Fix::new();
    let mut c = Check::default();
    let mut p: cl_platform_id = null_mut();
    expect!(
        c,
        clGetPlatformIDs(0, null_mut(), null_mut()),
        CL_INVALID_VALUE
    );
    expect!(c, clGetPlatformIDs(0, &mut p, null_mut()), CL_INVALID_VALUE);
    info_rules(
        &mut c,
        "clGetPlatformInfo",
        CL_PLATFORM_NAME,
        |n, s, v, r| unsafe { clGetPlatformInfo(platform(), n, s, v, r) },
    );
    if wrong_types() {
        let mut sz = 0;
        expect!(
            c,
            clGetPlatformInfo(f.not_platform(), CL_PLATFORM_NAME, 0, null_mut(), &mut sz),
            CL_INVALID_PLATFORM
        );
        expect!(
            c,
            clUnloadPlatformCompiler(f.not_platform()),
            CL_INVALID_PLATFORM
        );
        let mut n = 0;
        expect!(
            c,
            clGetDeviceIDs(f.not_platform(), CL_DEVICE_TYPE_ALL, 0, null_mut(), &mut n),
            CL_INVALID_PLATFORM
        );
    }
    expect!(c, clUnloadPlatformCompiler(platform()), CL_SUCCESS);
    expect!(c, clUnloadCompiler(), CL_SUCCESS);
    // extension lookups answer NULL for unknown or NULL names, never crash
    let q = unsafe {
        clGetExtensionFunctionAddressForPlatform(platform(), c"clNoSuchFunctionXYZ".as_ptr())
    };
    c.truth(
        "clGetExtensionFunctionAddressForPlatform(unknown) is NULL",
        q.is_null(),
    );
    let q = unsafe { clGetExtensionFunctionAddressForPlatform(platform(), null()) };
    c.truth(
        "clGetExtensionFunctionAddressForPlatform(NULL name) is NULL",
        q.is_null(),
    );
    let q = unsafe { clGetExtensionFunctionAddress(c"clNoSuchFunctionXYZ".as_ptr()) };
    c.truth(
        "clGetExtensionFunctionAddress(unknown) is NULL",
        q.is_null(),
    );
    c.done();
}

#[test]
fn device_entry_points() {
    let f = Fix::new();
    let mut c = Check::default();
    let mut n = 0;
    let mut d: cl_device_id = null_mut();
    // pocl 3.1 bug: CL_DEVICE_NOT_FOUND for an invalid device_type.
    if !is_pocl() {
        expect!(
            c,
            clGetDeviceIDs(platform(), 0, 1, &mut d, null_mut()),
            CL_INVALID_DEVICE_TYPE
        );
        expect!(
            c,
            clGetDeviceIDs(platform(), 1 << 20, 1, &mut d, null_mut()),
            CL_INVALID_DEVICE_TYPE
        );
    }
    expect!(
        c,
        clGetDeviceIDs(platform(), CL_DEVICE_TYPE_ALL, 0, &mut d, &mut n),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        clGetDeviceIDs(platform(), CL_DEVICE_TYPE_ALL, 1, null_mut(), null_mut()),
        CL_INVALID_VALUE
    );
    info_rules(
        &mut c,
        "clGetDeviceInfo",
        CL_DEVICE_NAME,
        |n, s, v, r| unsafe { clGetDeviceInfo(f.dev(), n, s, v, r) },
    );
    let mut sz = 0;
    expect!(
        c,
        clGetDeviceInfo(null_mut(), CL_DEVICE_NAME, 0, null_mut(), &mut sz),
        CL_INVALID_DEVICE
    );
    expect!(c, clRetainDevice(null_mut()), CL_INVALID_DEVICE);
    expect!(c, clReleaseDevice(null_mut()), CL_INVALID_DEVICE);
    // root devices: retain/release succeed and change nothing
    expect!(c, clRetainDevice(f.dev()), CL_SUCCESS);
    expect!(c, clReleaseDevice(f.dev()), CL_SUCCESS);
    let mut ts = 0u64;
    let mut hs = 0u64;
    if wrong_types() {
        expect!(
            c,
            clGetDeviceInfo(f.not_dev(), CL_DEVICE_NAME, 0, null_mut(), &mut sz),
            CL_INVALID_DEVICE
        );
        expect!(c, clRetainDevice(f.not_dev()), CL_INVALID_DEVICE);
        expect!(c, clReleaseDevice(f.not_dev()), CL_INVALID_DEVICE);
        let props = [CL_DEVICE_PARTITION_EQUALLY, 1, 0];
        expect!(
            c,
            clCreateSubDevices(f.not_dev(), props.as_ptr(), 0, null_mut(), &mut n),
            CL_INVALID_DEVICE
        );
        expect!(
            c,
            clGetDeviceAndHostTimer(f.not_dev(), &mut ts, &mut hs),
            CL_INVALID_DEVICE
        );
        expect!(c, clGetHostTimer(f.not_dev(), &mut hs), CL_INVALID_DEVICE);
    }
    // sub-devices: NULL or unknown partition scheme, and a scheme the device does not support
    // (CL_INVALID_VALUE: "values specified in properties are not valid or ... not supported")
    expect!(
        c,
        clCreateSubDevices(f.dev(), null(), 0, null_mut(), &mut n),
        CL_INVALID_VALUE
    );
    let unknown = [0x7777isize, 1, 0];
    expect!(
        c,
        clCreateSubDevices(f.dev(), unknown.as_ptr(), 0, null_mut(), &mut n),
        CL_INVALID_VALUE
    );
    let max_sub: u32 = device_val(f.dev(), CL_DEVICE_PARTITION_MAX_SUB_DEVICES);
    if max_sub <= 1 {
        let eq = [CL_DEVICE_PARTITION_EQUALLY, 1, 0];
        expect!(
            c,
            clCreateSubDevices(f.dev(), eq.as_ptr(), 0, null_mut(), &mut n),
            [CL_INVALID_VALUE, CL_DEVICE_PARTITION_FAILED]
        );
    }
    // timers: NULL out-pointers are CL_INVALID_VALUE; a platform with host timer resolution 0
    // does not support the synchronisation: CL_INVALID_OPERATION
    let res: u64 = platform_val(platform(), CL_PLATFORM_HOST_TIMER_RESOLUTION);
    let timer_ok = if res == 0 {
        CL_INVALID_OPERATION
    } else {
        CL_SUCCESS
    };
    expect!(
        c,
        clGetDeviceAndHostTimer(f.dev(), &mut ts, &mut hs),
        timer_ok
    );
    expect!(c, clGetHostTimer(f.dev(), &mut hs), timer_ok);
    expect!(
        c,
        clGetDeviceAndHostTimer(f.dev(), null_mut(), &mut hs),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        clGetHostTimer(f.dev(), null_mut()),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        clGetDeviceAndHostTimer(null_mut(), &mut ts, &mut hs),
        CL_INVALID_DEVICE
    );
    // no device supports on-device queues here: the default device queue cannot be replaced
    if device_val::<u64>(f.dev(), CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES) == 0 {
        expect!(
            c,
            clSetDefaultDeviceCommandQueue(f.ctx(), f.dev(), f.q()),
            [CL_INVALID_OPERATION, CL_INVALID_COMMAND_QUEUE]
        );
    }
    expect!(
        c,
        clSetDefaultDeviceCommandQueue(null_mut(), f.dev(), f.q()),
        CL_INVALID_CONTEXT
    );
    if wrong_types() {
        expect!(
            c,
            clSetDefaultDeviceCommandQueue(f.not_ctx(), f.dev(), f.q()),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            clSetDefaultDeviceCommandQueue(f.ctx(), f.not_dev(), f.q()),
            CL_INVALID_DEVICE
        );
    }
    c.done();
}

// ---------------------------------------------------------------- context

#[test]
fn context_entry_points() {
    let f = Fix::new();
    let mut c = Check::default();
    let d = f.dev();
    let plat = platform() as isize;
    let mk = |props: &[isize], devs: &[cl_device_id]| {
        let pp = if props.is_empty() {
            null()
        } else {
            props.as_ptr()
        };
        create(|e| unsafe {
            clCreateContext(pp, devs.len() as u32, devs.as_ptr(), None, null_mut(), e)
        })
    };
    c.eq(
        "clCreateContext: unknown property",
        mk(&[0x7777, 1, 0], &[d]),
        CL_INVALID_PROPERTY,
    );
    c.eq(
        "clCreateContext: CL_CONTEXT_PLATFORM twice",
        mk(
            &[CL_CONTEXT_PLATFORM, plat, CL_CONTEXT_PLATFORM, plat, 0],
            &[d],
        ),
        CL_INVALID_PROPERTY,
    );
    c.eq(
        "clCreateContext: CL_CONTEXT_INTEROP_USER_SYNC twice",
        mk(
            &[
                CL_CONTEXT_INTEROP_USER_SYNC,
                0,
                CL_CONTEXT_INTEROP_USER_SYNC,
                0,
                0,
            ],
            &[d],
        ),
        CL_INVALID_PROPERTY,
    );
    c.eq(
        "clCreateContext: device list [dev, NULL]",
        mk(&[], &[d, null_mut()]),
        CL_INVALID_DEVICE,
    );
    if wrong_types() {
        c.eq(
            "clCreateContext: cl_context as device",
            mk(&[], &[f.not_dev()]),
            CL_INVALID_DEVICE,
        );
        c.eq(
            "clCreateContext: [dev, cl_context]",
            mk(&[], &[d, f.not_dev()]),
            CL_INVALID_DEVICE,
        );
    }
    expect!(
        c,
        create(|e| clCreateContext(null(), 0, &d, None, null_mut(), e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateContext(null(), 1, null(), None, null_mut(), e)),
        CL_INVALID_VALUE
    );
    let mut ud = 0u8;
    let udp: *mut c_void = (&mut ud as *mut u8).cast();
    expect!(
        c,
        create(|e| clCreateContext(null(), 1, &d, None, udp, e)),
        CL_INVALID_VALUE
    );
    // errcode_ret NULL: the error still has no handle
    let h = unsafe { clCreateContext(null(), 0, &d, None, null_mut(), null_mut()) };
    c.truth(
        "clCreateContext(errcode_ret NULL) returns NULL on error",
        h.is_null(),
    );

    let props = [CL_CONTEXT_PLATFORM, plat, 0];
    let pp = props.as_ptr();
    // pocl 3.1 bug: returns a context together with the error.
    if !is_pocl() {
        expect!(
            c,
            create(|e| clCreateContextFromType(pp, 0, None, null_mut(), e)),
            CL_INVALID_DEVICE_TYPE
        );
    }
    let unknown = [0x7777isize, 1, CL_CONTEXT_PLATFORM, plat, 0];
    expect!(
        c,
        create(|e| clCreateContextFromType(
            unknown.as_ptr(),
            CL_DEVICE_TYPE_ALL,
            None,
            null_mut(),
            e
        )),
        CL_INVALID_PROPERTY
    );
    let twice = [CL_CONTEXT_PLATFORM, plat, CL_CONTEXT_PLATFORM, plat, 0];
    expect!(
        c,
        create(|e| clCreateContextFromType(
            twice.as_ptr(),
            CL_DEVICE_TYPE_ALL,
            None,
            null_mut(),
            e
        )),
        CL_INVALID_PROPERTY
    );
    expect!(
        c,
        create(|e| clCreateContextFromType(pp, CL_DEVICE_TYPE_ALL, None, udp, e)),
        CL_INVALID_VALUE
    );
    if wrong_types() {
        let bad_plat = [CL_CONTEXT_PLATFORM, f.not_platform() as isize, 0];
        expect!(
            c,
            create(|e| clCreateContextFromType(
                bad_plat.as_ptr(),
                CL_DEVICE_TYPE_ALL,
                None,
                null_mut(),
                e
            )),
            CL_INVALID_PLATFORM
        );
        expect!(
            c,
            create(|e| clCreateContext(bad_plat.as_ptr(), 1, &d, None, null_mut(), e)),
            CL_INVALID_PLATFORM
        );
    }

    info_rules(
        &mut c,
        "clGetContextInfo",
        CL_CONTEXT_NUM_DEVICES,
        |n, s, v, r| unsafe { clGetContextInfo(f.ctx(), n, s, v, r) },
    );
    expect!(
        c,
        clSetContextDestructorCallback(f.ctx(), None, null_mut()),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        clSetContextDestructorCallback(null_mut(), None, null_mut()),
        CL_INVALID_CONTEXT
    );
    expect!(c, clRetainContext(null_mut()), CL_INVALID_CONTEXT);
    if wrong_types() {
        let mut sz = 0;
        expect!(
            c,
            clGetContextInfo(f.not_ctx(), CL_CONTEXT_NUM_DEVICES, 0, null_mut(), &mut sz),
            CL_INVALID_CONTEXT
        );
        expect!(c, clRetainContext(f.not_ctx()), CL_INVALID_CONTEXT);
        expect!(c, clReleaseContext(f.not_ctx()), CL_INVALID_CONTEXT);
        unsafe extern "C" fn cb(_: cl_context, _: *mut c_void) {}
        expect!(
            c,
            clSetContextDestructorCallback(f.not_ctx(), Some(cb), null_mut()),
            CL_INVALID_CONTEXT
        );
    }
    c.done();
}

// ---------------------------------------------------------------- command queue

#[test]
fn queue_entry_points() {
    let f = Fix::new();
    let mut c = Check::default();
    let (ctx, d) = (f.ctx(), f.dev());
    let mkq = |props: &[u64]| {
        create(|e| unsafe { clCreateCommandQueueWithProperties(ctx, d, props.as_ptr(), e) })
    };
    // CL_INVALID_VALUE: "values specified in properties are not valid"
    c.eq(
        "queue: unknown property name",
        mkq(&[0x7777, 1, 0]),
        CL_INVALID_VALUE,
    );
    c.eq(
        "queue: unknown CL_QUEUE_PROPERTIES bit",
        mkq(&[CL_QUEUE_PROPERTIES as u64, 1 << 20, 0]),
        CL_INVALID_VALUE,
    );
    // CL_QUEUE_SIZE is only valid together with CL_QUEUE_ON_DEVICE
    // pocl 3.1 bug: accepts CL_QUEUE_SIZE on a host queue.
    if !is_pocl() {
        c.eq(
            "queue: CL_QUEUE_SIZE without ON_DEVICE",
            mkq(&[CL_QUEUE_SIZE as u64, 1024, 0]),
            CL_INVALID_VALUE,
        );
    }
    // ON_DEVICE requires OUT_OF_ORDER_EXEC_MODE_ENABLE
    if !is_pocl() {
        // pocl 3.1 aborts the process on any CL_QUEUE_ON_DEVICE request.
        c.eq(
            "queue: ON_DEVICE without OUT_OF_ORDER",
            mkq(&[CL_QUEUE_PROPERTIES as u64, CL_QUEUE_ON_DEVICE, 0]),
            CL_INVALID_VALUE,
        );
    }
    expect!(
        c,
        create(|e| clCreateCommandQueueWithProperties(null_mut(), d, null(), e)),
        CL_INVALID_CONTEXT
    );
    expect!(
        c,
        create(|e| clCreateCommandQueueWithProperties(ctx, null_mut(), null(), e)),
        CL_INVALID_DEVICE
    );
    expect!(
        c,
        create(|e| clCreateCommandQueue(ctx, d, 1 << 20, e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateCommandQueue(ctx, null_mut(), 0, e)),
        CL_INVALID_DEVICE
    );
    // a device that is not in the context
    let d2 = f.e2.dev;
    if d2 != d {
        expect!(
            c,
            create(|e| clCreateCommandQueue(ctx, d2, 0, e)),
            CL_INVALID_DEVICE
        );
    }
    if wrong_types() {
        expect!(
            c,
            create(|e| clCreateCommandQueueWithProperties(f.not_ctx(), d, null(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateCommandQueueWithProperties(ctx, f.not_dev(), null(), e)),
            CL_INVALID_DEVICE
        );
        expect!(
            c,
            create(|e| clCreateCommandQueue(f.not_ctx(), d, 0, e)),
            CL_INVALID_CONTEXT
        );
        let nq = f.not_queue();
        let mut sz = 0;
        expect!(
            c,
            clGetCommandQueueInfo(nq, CL_QUEUE_CONTEXT, 0, null_mut(), &mut sz),
            CL_INVALID_COMMAND_QUEUE
        );
        expect!(c, clRetainCommandQueue(nq), CL_INVALID_COMMAND_QUEUE);
        expect!(c, clReleaseCommandQueue(nq), CL_INVALID_COMMAND_QUEUE);
        expect!(c, clFlush(nq), CL_INVALID_COMMAND_QUEUE);
        expect!(c, clFinish(nq), CL_INVALID_COMMAND_QUEUE);
        let mut old = 0;
        expect!(
            c,
            clSetCommandQueueProperty(nq, CL_QUEUE_PROFILING_ENABLE, CL_TRUE, &mut old),
            CL_INVALID_COMMAND_QUEUE
        );
    }
    info_rules(
        &mut c,
        "clGetCommandQueueInfo",
        CL_QUEUE_CONTEXT,
        |n, s, v, r| unsafe { clGetCommandQueueInfo(f.q(), n, s, v, r) },
    );
    // OpenCL 1.0's clSetCommandQueueProperty is gone since 1.1: any error, no crash
    let mut old = 0;
    // pocl 3.1 crashes (SIGSEGV) in clSetCommandQueueProperty.
    if !is_pocl() {
        expect!(
            c,
            clSetCommandQueueProperty(f.q(), 1 << 20, CL_TRUE, &mut old),
            neg
        );
    }
    expect!(
        c,
        clSetCommandQueueProperty(null_mut(), 0, CL_TRUE, &mut old),
        CL_INVALID_COMMAND_QUEUE
    );
    c.done();
}

// ---------------------------------------------------------------- memory objects
