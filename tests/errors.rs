//! Build failures and invalid (NULL) handles.
//!
//! Only NULL handles are tested: the ocl-icd loader dereferences non-NULL handles to find
//! the dispatch table, so a garbage handle would crash in the loader, not reach the ICD.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_char;
use std::ptr::{null, null_mut};

fn create_program(e: &Env, src: &str) -> cl_program {
    let ptr = src.as_ptr() as *const c_char;
    let len = src.len();
    let mut err = 0;
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    p
}

#[test]
fn build_failure_reports_log_and_process_keeps_working() {
    let e = Env::new();
    let bad = "kernel void bad(global int* x) {\n    x[0] = undeclared_thing_xyz + 1;\n}\n";
    let p = create_program(&e, bad);
    check_err!(
        clBuildProgram(p, 1, &e.dev, null(), None, null_mut()),
        CL_BUILD_PROGRAM_FAILURE
    );
    assert_eq!(
        build_val::<i32>(p, e.dev, CL_PROGRAM_BUILD_STATUS),
        CL_BUILD_ERROR
    );
    let log = build_str(p, e.dev, CL_PROGRAM_BUILD_LOG);
    assert!(
        log.contains("undeclared_thing_xyz"),
        "build log does not name the offending identifier:\n{log}"
    );
    assert!(
        log.contains(":2:") || log.contains("line 2") || log.contains("2:"),
        "build log has no line number:\n{log}"
    );
    // no executable: kernels cannot be created
    let mut err = 0;
    let k = unsafe { clCreateKernel(p, c"bad".as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE, "{}", err_name(err));
    let mut sz = 0;
    check_err!(
        clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, 0, null_mut(), &mut sz),
        CL_INVALID_PROGRAM_EXECUTABLE
    );
    check!(clReleaseProgram(p));

    // the implementation is still fully usable afterwards
    let p = e.program(
        "kernel void good(global int* x) { x[get_global_id(0)] = 42; }\n",
        "",
    );
    let k = kernel(p, "good");
    let b = e.buffer_from(&[0i32; 8]);
    arg(k, 0, &b);
    e.run(k, None, &[8], None);
    assert_eq!(e.read::<i32>(b, 8), [42; 8]);
    check!(clReleaseMemObject(b));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn build_failure_syntax_error() {
    let e = Env::new();
    match build_program(
        e.ctx,
        e.dev,
        "kernel void f(global int* x) { x[0] = 1 }\n",
        "",
    ) {
        Ok(_) => panic!("a syntax error must fail the build"),
        Err((code, log)) => {
            assert_eq!(code, CL_BUILD_PROGRAM_FAILURE, "{}", err_name(code));
            assert!(!log.trim().is_empty(), "empty build log");
        }
    }
}

#[test]
fn invalid_build_options() {
    let e = Env::new();
    let p = create_program(&e, "kernel void f(global int* x) { x[0] = 1; }\n");
    check_err!(
        clBuildProgram(
            p,
            1,
            &e.dev,
            c"-cl-no-such-option-xyz".as_ptr(),
            None,
            null_mut()
        ),
        CL_INVALID_BUILD_OPTIONS
    );
    // still buildable with valid options
    check!(clBuildProgram(
        p,
        1,
        &e.dev,
        c"-cl-fast-relaxed-math -DX=1".as_ptr(),
        None,
        null_mut()
    ));
    check!(clReleaseProgram(p));
}

#[test]
fn create_kernel_errors() {
    let e = Env::new();
    let src = "kernel void exists(global int* x) { x[0] = 1; }\n";
    let p = create_program(&e, src);
    let mut err = 0;
    let k = unsafe { clCreateKernel(p, c"exists".as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(
        err,
        CL_INVALID_PROGRAM_EXECUTABLE,
        "before build: {}",
        err_name(err)
    );
    check!(clBuildProgram(p, 1, &e.dev, null(), None, null_mut()));
    let k = unsafe { clCreateKernel(p, c"does_not_exist".as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_KERNEL_NAME, "{}", err_name(err));
    let k = unsafe { clCreateKernel(p, null(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "NULL name: {}", err_name(err));
    let k = unsafe { clCreateKernel(p, c"exists".as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn create_program_with_source_errors() {
    let e = Env::new();
    let src = c"kernel void f(global int* x) { x[0] = 1; }";
    let ptrs = [src.as_ptr()];
    let nulls: [*const c_char; 1] = [null()];
    let mut err = 0;
    let p = unsafe { clCreateProgramWithSource(e.ctx, 0, ptrs.as_ptr(), null(), &mut err) };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "count 0: {}", err_name(err));
    // pocl 3.1 crashes (SIGSEGV) on strings == NULL.
    if !is_pocl() {
        let p = unsafe { clCreateProgramWithSource(e.ctx, 1, null(), null(), &mut err) };
        assert!(p.is_null());
        assert_eq!(err, CL_INVALID_VALUE, "NULL strings: {}", err_name(err));
    }
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, nulls.as_ptr(), null(), &mut err) };
    assert!(p.is_null());
    assert_eq!(
        err,
        CL_INVALID_VALUE,
        "NULL string entry: {}",
        err_name(err)
    );
    let p = unsafe { clCreateProgramWithSource(null_mut(), 1, ptrs.as_ptr(), null(), &mut err) };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT, "{}", err_name(err));
    // NULL lengths = all NUL-terminated
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, ptrs.as_ptr(), null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(program_str(p, CL_PROGRAM_SOURCE), src.to_str().unwrap());
    check!(clReleaseProgram(p));
}

#[test]
fn null_handles_to_info_queries() {
    setup();
    let mut sz = 0;
    check_err!(
        clGetDeviceInfo(null_mut(), CL_DEVICE_NAME, 0, null_mut(), &mut sz),
        CL_INVALID_DEVICE
    );
    check_err!(
        clGetContextInfo(
            null_mut(),
            CL_CONTEXT_REFERENCE_COUNT,
            0,
            null_mut(),
            &mut sz
        ),
        CL_INVALID_CONTEXT
    );
    check_err!(
        clGetCommandQueueInfo(null_mut(), CL_QUEUE_CONTEXT, 0, null_mut(), &mut sz),
        CL_INVALID_COMMAND_QUEUE
    );
    check_err!(
        clGetMemObjectInfo(null_mut(), CL_MEM_SIZE, 0, null_mut(), &mut sz),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        clGetProgramInfo(null_mut(), CL_PROGRAM_CONTEXT, 0, null_mut(), &mut sz),
        CL_INVALID_PROGRAM
    );
    check_err!(
        clGetProgramBuildInfo(
            null_mut(),
            device(),
            CL_PROGRAM_BUILD_STATUS,
            0,
            null_mut(),
            &mut sz
        ),
        CL_INVALID_PROGRAM
    );
    check_err!(
        clGetKernelInfo(null_mut(), CL_KERNEL_NUM_ARGS, 0, null_mut(), &mut sz),
        CL_INVALID_KERNEL
    );
    check_err!(
        clGetKernelWorkGroupInfo(
            null_mut(),
            device(),
            CL_KERNEL_WORK_GROUP_SIZE,
            0,
            null_mut(),
            &mut sz
        ),
        CL_INVALID_KERNEL
    );
    check_err!(
        clGetEventInfo(null_mut(), CL_EVENT_CONTEXT, 0, null_mut(), &mut sz),
        CL_INVALID_EVENT
    );
}

#[test]
fn null_handles_to_retain_release() {
    setup();
    check_err!(clRetainContext(null_mut()), CL_INVALID_CONTEXT);
    check_err!(clReleaseContext(null_mut()), CL_INVALID_CONTEXT);
    check_err!(clRetainCommandQueue(null_mut()), CL_INVALID_COMMAND_QUEUE);
    check_err!(clReleaseCommandQueue(null_mut()), CL_INVALID_COMMAND_QUEUE);
    check_err!(clRetainMemObject(null_mut()), CL_INVALID_MEM_OBJECT);
    check_err!(clReleaseMemObject(null_mut()), CL_INVALID_MEM_OBJECT);
    check_err!(clRetainProgram(null_mut()), CL_INVALID_PROGRAM);
    check_err!(clReleaseProgram(null_mut()), CL_INVALID_PROGRAM);
    check_err!(clRetainKernel(null_mut()), CL_INVALID_KERNEL);
    check_err!(clReleaseKernel(null_mut()), CL_INVALID_KERNEL);
    check_err!(clRetainEvent(null_mut()), CL_INVALID_EVENT);
    check_err!(clReleaseEvent(null_mut()), CL_INVALID_EVENT);
}

#[test]
fn null_queue_to_enqueue_calls() {
    let e = Env::new();
    let m = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let mut buf = [0u8; 64];
    let q = null_mut();
    let qe = CL_INVALID_COMMAND_QUEUE;
    check_err!(clFlush(q), qe);
    check_err!(clFinish(q), qe);
    check_err!(
        clEnqueueReadBuffer(
            q,
            m,
            CL_TRUE,
            0,
            64,
            buf.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        qe
    );
    check_err!(
        clEnqueueWriteBuffer(
            q,
            m,
            CL_TRUE,
            0,
            64,
            buf.as_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        qe
    );
    check_err!(
        clEnqueueCopyBuffer(q, m, m, 0, 32, 16, 0, null(), null_mut()),
        qe
    );
    check_err!(
        clEnqueueFillBuffer(q, m, buf.as_ptr().cast(), 4, 0, 16, 0, null(), null_mut()),
        qe
    );
    check_err!(
        clEnqueueNDRangeKernel(
            q,
            null_mut(),
            1,
            null(),
            [1usize].as_ptr(),
            null(),
            0,
            null(),
            null_mut()
        ),
        qe
    );
    check_err!(
        clEnqueueUnmapMemObject(q, m, buf.as_mut_ptr().cast(), 0, null(), null_mut()),
        qe
    );
    let mut err = 0;
    let p = unsafe {
        clEnqueueMapBuffer(
            q,
            m,
            CL_TRUE,
            CL_MAP_READ,
            0,
            16,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, qe, "{}", err_name(err));
    check!(clReleaseMemObject(m));
}

#[test]
fn null_objects_to_valid_queue_and_creators() {
    let e = Env::new();
    let mut buf = [0u8; 64];
    let mut err = 0;
    check_err!(
        clEnqueueWriteBuffer(
            e.queue,
            null_mut(),
            CL_TRUE,
            0,
            16,
            buf.as_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        clEnqueueFillBuffer(
            e.queue,
            null_mut(),
            buf.as_ptr().cast(),
            4,
            0,
            16,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_MEM_OBJECT
    );
    let p = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            null_mut(),
            CL_TRUE,
            CL_MAP_READ,
            0,
            16,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_MEM_OBJECT, "{}", err_name(err));
    check_err!(
        clEnqueueUnmapMemObject(
            e.queue,
            null_mut(),
            buf.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        clBuildProgram(null_mut(), 0, null(), null(), None, null_mut()),
        CL_INVALID_PROGRAM
    );
    let k = unsafe { clCreateKernel(null_mut(), c"f".as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_PROGRAM, "{}", err_name(err));
    let mut n = 0;
    check_err!(
        clCreateKernelsInProgram(null_mut(), 0, null_mut(), &mut n),
        CL_INVALID_PROGRAM
    );
    check_err!(
        clSetKernelArg(null_mut(), 0, 4, buf.as_ptr().cast()),
        CL_INVALID_KERNEL
    );
    let m = unsafe { clCreateBuffer(null_mut(), CL_MEM_READ_WRITE, 64, null_mut(), &mut err) };
    assert!(m.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT, "{}", err_name(err));
    let q = unsafe { clCreateCommandQueueWithProperties(null_mut(), e.dev, null(), &mut err) };
    assert!(q.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT, "{}", err_name(err));
    let ev: [cl_event; 1] = [null_mut()];
    check_err!(clWaitForEvents(1, ev.as_ptr()), CL_INVALID_EVENT);
}
