//! API robustness: Programs and kernels.
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
fn program_creation() {
    let f = Fix::new();
    let mut c = Check::default();
    let (ctx, d) = (f.ctx(), f.dev());
    let bin = [0xDEu8, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4];
    let bp = bin.as_ptr();
    let len = bin.len();
    let zero = 0usize;
    let nullbin: *const u8 = null();
    let mut st = 0;
    // clCreateProgramWithBinary: list/lengths/binaries checks are CL_INVALID_VALUE; a binary
    // that is not one is CL_INVALID_BINARY (with binary_status set)
    expect!(
        c,
        create(|e| clCreateProgramWithBinary(ctx, 0, &d, &len, &bp, &mut st, e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateProgramWithBinary(ctx, 1, null(), &len, &bp, &mut st, e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateProgramWithBinary(ctx, 1, &d, null(), &bp, &mut st, e)),
        CL_INVALID_VALUE
    );
    // pocl 3.1 crashes (SIGSEGV) on binaries == NULL.
    if !is_pocl() {
        expect!(
            c,
            create(|e| clCreateProgramWithBinary(ctx, 1, &d, &len, null(), &mut st, e)),
            CL_INVALID_VALUE
        );
    }
    expect!(
        c,
        create(|e| clCreateProgramWithBinary(ctx, 1, &d, &zero, &bp, &mut st, e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateProgramWithBinary(ctx, 1, &d, &len, &nullbin, &mut st, e)),
        CL_INVALID_VALUE
    );
    let garbage =
        create(|e| unsafe { clCreateProgramWithBinary(ctx, 1, &d, &len, &bp, &mut st, e) });
    c.eq(
        "clCreateProgramWithBinary(garbage binary)",
        garbage,
        CL_INVALID_BINARY,
    );
    c.eq(
        "binary_status of a garbage binary",
        if garbage == CL_INVALID_BINARY {
            st
        } else {
            CL_INVALID_BINARY
        },
        CL_INVALID_BINARY,
    );
    expect!(
        c,
        create(|e| clCreateProgramWithBinary(null_mut(), 1, &d, &len, &bp, &mut st, e)),
        CL_INVALID_CONTEXT
    );
    // built-in kernels: the device has none with this name
    expect!(
        c,
        create(|e| clCreateProgramWithBuiltInKernels(
            ctx,
            1,
            &d,
            c"no_such_builtin_xyz".as_ptr(),
            e
        )),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateProgramWithBuiltInKernels(ctx, 1, &d, null(), e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateProgramWithBuiltInKernels(ctx, 0, &d, c"x".as_ptr(), e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateProgramWithBuiltInKernels(ctx, 1, null(), c"x".as_ptr(), e)),
        CL_INVALID_VALUE
    );
    // IL: the device may not take IL at all (CL_INVALID_OPERATION), else NULL/empty/garbage IL
    expect!(
        c,
        create(|e| clCreateProgramWithIL(ctx, null(), 16, e)),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        create(|e| clCreateProgramWithIL(ctx, bin.as_ptr().cast(), 0, e)),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        create(|e| clCreateProgramWithIL(ctx, bin.as_ptr().cast(), len, e)),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        create(|e| clCreateProgramWithIL(null_mut(), bin.as_ptr().cast(), len, e)),
        CL_INVALID_CONTEXT
    );
    // source: count 0 / NULL entries
    let s = c"kernel void f() {}";
    let sp = s.as_ptr();
    let nulls: *const c_char = null();
    expect!(
        c,
        create(|e| clCreateProgramWithSource(ctx, 0, &sp, null(), e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateProgramWithSource(ctx, 1, &nulls, null(), e)),
        CL_INVALID_VALUE
    );
    if wrong_types() {
        let nc = f.not_ctx();
        expect!(
            c,
            create(|e| clCreateProgramWithSource(nc, 1, &sp, null(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateProgramWithBuiltInKernels(nc, 1, &d, c"x".as_ptr(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateProgramWithBinary(nc, 1, &d, &len, &bp, &mut st, e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateProgramWithIL(nc, bin.as_ptr().cast(), len, e)),
            CL_INVALID_CONTEXT
        );
        let nd = f.not_dev();
        expect!(
            c,
            create(|e| clCreateProgramWithBinary(ctx, 1, &nd, &len, &bp, &mut st, e)),
            CL_INVALID_DEVICE
        );
        expect!(
            c,
            create(|e| clCreateProgramWithBuiltInKernels(ctx, 1, &nd, c"x".as_ptr(), e)),
            CL_INVALID_DEVICE
        );
    }
    c.done();
}

#[test]
fn program_build_compile_link() {
    let f = Fix::new();
    let mut c = Check::default();
    let (ctx, d) = (f.ctx(), f.dev());
    let s = c"kernel void f(global int* x) { x[0] = 1; }";
    let sp = s.as_ptr();
    let mut e = 0;
    let p = unsafe { clCreateProgramWithSource(ctx, 1, &sp, null(), &mut e) };
    assert_eq!(e, CL_SUCCESS);
    let mut ud = 0u8;
    let udp: *mut c_void = (&mut ud as *mut u8).cast();
    let nd: cl_device_id = null_mut();
    expect!(
        c,
        clBuildProgram(p, 1, null(), null(), None, null_mut()),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        clBuildProgram(p, 0, &d, null(), None, null_mut()),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        clBuildProgram(p, 1, &d, null(), None, udp),
        CL_INVALID_VALUE
    );
    // pocl 3.1 crashes (SIGSEGV) on a NULL device in the list.
    if !is_pocl() {
        expect!(
            c,
            clBuildProgram(p, 1, &nd, null(), None, null_mut()),
            CL_INVALID_DEVICE
        );
    }
    // a program with kernels attached cannot be rebuilt
    expect!(
        c,
        clBuildProgram(f.p, 1, &d, null(), None, null_mut()),
        CL_INVALID_OPERATION
    );
    expect!(
        c,
        clBuildProgram(null_mut(), 1, &d, null(), None, null_mut()),
        CL_INVALID_PROGRAM
    );
    // clCompileProgram: the same list rules, plus headers
    expect!(
        c,
        clCompileProgram(p, 1, null(), null(), 0, null(), null(), None, null_mut()),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        clCompileProgram(p, 0, &d, null(), 0, null(), null(), None, null_mut()),
        CL_INVALID_VALUE
    );
    // pocl 3.1 crashes (SIGSEGV) on num_input_headers > 0 with NULL headers.
    if !is_pocl() {
        expect!(
            c,
            clCompileProgram(p, 1, &d, null(), 1, null(), null(), None, null_mut()),
            CL_INVALID_VALUE
        );
    }
    expect!(
        c,
        clCompileProgram(p, 1, &d, null(), 0, null(), null(), None, udp),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        clCompileProgram(
            null_mut(),
            1,
            &d,
            null(),
            0,
            null(),
            null(),
            None,
            null_mut()
        ),
        CL_INVALID_PROGRAM
    );
    // clLinkProgram: no input programs, NULL list, a NULL program in the list
    let np: cl_program = null_mut();
    expect!(
        c,
        create(|e| clLinkProgram(ctx, 1, &d, null(), 0, null(), None, null_mut(), e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clLinkProgram(ctx, 1, &d, null(), 1, null(), None, null_mut(), e)),
        CL_INVALID_VALUE
    );
    // pocl 3.1 crashes (SIGSEGV) on a NULL program in the input list.
    if !is_pocl() {
        expect!(
            c,
            create(|e| clLinkProgram(ctx, 1, &d, null(), 1, &np, None, null_mut(), e)),
            CL_INVALID_PROGRAM
        );
    }
    expect!(
        c,
        create(|e| clLinkProgram(ctx, 1, null(), null(), 1, &p, None, null_mut(), e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clLinkProgram(null_mut(), 1, &d, null(), 1, &p, None, null_mut(), e)),
        CL_INVALID_CONTEXT
    );
    // a source program is not an IL program; devices without IL support: CL_INVALID_OPERATION
    let v = 1u32;
    let vp: *const c_void = (&v as *const u32).cast();
    // pocl 3.1 aborts (assertion) on a program without devices' IL here.
    if !is_pocl() {
        expect!(
            c,
            clSetProgramSpecializationConstant(p, 0, 4, vp),
            [CL_INVALID_PROGRAM, CL_INVALID_OPERATION]
        );
    }
    expect!(
        c,
        clSetProgramSpecializationConstant(null_mut(), 0, 4, vp),
        CL_INVALID_PROGRAM
    );
    expect!(
        c,
        clSetProgramReleaseCallback(p, None, null_mut()),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        clSetProgramReleaseCallback(null_mut(), None, null_mut()),
        CL_INVALID_PROGRAM
    );
    if wrong_types() {
        let npg = f.not_prog();
        expect!(
            c,
            clBuildProgram(npg, 1, &d, null(), None, null_mut()),
            CL_INVALID_PROGRAM
        );
        let wd = f.not_dev();
        expect!(
            c,
            clBuildProgram(p, 1, &wd, null(), None, null_mut()),
            CL_INVALID_DEVICE
        );
        expect!(
            c,
            clCompileProgram(npg, 1, &d, null(), 0, null(), null(), None, null_mut()),
            CL_INVALID_PROGRAM
        );
        expect!(
            c,
            create(|e| clLinkProgram(f.not_ctx(), 1, &d, null(), 1, &p, None, null_mut(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clLinkProgram(ctx, 1, &d, null(), 1, &npg, None, null_mut(), e)),
            CL_INVALID_PROGRAM
        );
        expect!(
            c,
            clSetProgramSpecializationConstant(npg, 0, 4, vp),
            CL_INVALID_PROGRAM
        );
        unsafe extern "C" fn cb(_: cl_program, _: *mut c_void) {}
        expect!(
            c,
            clSetProgramReleaseCallback(npg, Some(cb), null_mut()),
            CL_INVALID_PROGRAM
        );
    }
    check!(clReleaseProgram(p));
    c.done();
}

#[test]
fn program_queries() {
    let f = Fix::new();
    let mut c = Check::default();
    let d = f.dev();
    info_rules(
        &mut c,
        "clGetProgramInfo",
        CL_PROGRAM_NUM_DEVICES,
        |n, s, v, r| unsafe { clGetProgramInfo(f.p, n, s, v, r) },
    );
    info_rules(
        &mut c,
        "clGetProgramBuildInfo",
        CL_PROGRAM_BUILD_STATUS,
        |n, s, v, r| unsafe { clGetProgramBuildInfo(f.p, d, n, s, v, r) },
    );
    let mut sz = 0;
    expect!(
        c,
        clGetProgramBuildInfo(
            f.p,
            null_mut(),
            CL_PROGRAM_BUILD_STATUS,
            0,
            null_mut(),
            &mut sz
        ),
        CL_INVALID_DEVICE
    );
    expect!(c, clRetainProgram(null_mut()), CL_INVALID_PROGRAM);
    if wrong_types() {
        let np = f.not_prog();
        expect!(
            c,
            clGetProgramInfo(np, CL_PROGRAM_NUM_DEVICES, 0, null_mut(), &mut sz),
            CL_INVALID_PROGRAM
        );
        expect!(
            c,
            clGetProgramBuildInfo(np, d, CL_PROGRAM_BUILD_STATUS, 0, null_mut(), &mut sz),
            CL_INVALID_PROGRAM
        );
        expect!(
            c,
            clGetProgramBuildInfo(
                f.p,
                f.not_dev(),
                CL_PROGRAM_BUILD_STATUS,
                0,
                null_mut(),
                &mut sz
            ),
            CL_INVALID_DEVICE
        );
        expect!(c, clRetainProgram(np), CL_INVALID_PROGRAM);
        expect!(c, clReleaseProgram(np), CL_INVALID_PROGRAM);
    }
    c.done();
}

// ---------------------------------------------------------------- kernels

#[test]
fn kernel_creation_and_args() {
    let f = Fix::new();
    let mut c = Check::default();
    let k = f.k;
    expect!(
        c,
        create(|e| clCreateKernel(f.p, c"nope".as_ptr(), e)),
        CL_INVALID_KERNEL_NAME
    );
    expect!(
        c,
        create(|e| clCreateKernel(f.p, null(), e)),
        CL_INVALID_VALUE
    );
    let mut ks = [null_mut(); 1];
    let mut n = 0;
    // the program has one kernel: num_kernels 0 with a non-NULL array is too small
    expect!(
        c,
        clCreateKernelsInProgram(f.p, 0, ks.as_mut_ptr(), &mut n),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCloneKernel(null_mut(), e)),
        CL_INVALID_KERNEL
    );
    let v = 7i32;
    let vp: *const c_void = (&v as *const i32).cast();
    expect!(c, clSetKernelArg(k, 2, 4, vp), CL_INVALID_ARG_INDEX);
    expect!(c, clSetKernelArg(k, u32::MAX, 4, vp), CL_INVALID_ARG_INDEX);
    expect!(c, clSetKernelArg(k, 1, 2, vp), CL_INVALID_ARG_SIZE);
    expect!(c, clSetKernelArg(k, 1, 4, null()), CL_INVALID_ARG_VALUE);
    let mp: *const c_void = (&f.m as *const cl_mem).cast();
    expect!(c, clSetKernelArg(k, 0, 4, mp), CL_INVALID_ARG_SIZE);
    let nk = f.not_mem();
    let nkp: *const c_void = (&nk as *const cl_mem).cast();
    if wrong_types() {
        expect!(
            c,
            clSetKernelArg(k, 0, std::mem::size_of::<cl_mem>(), nkp),
            CL_INVALID_MEM_OBJECT
        );
    }
    // exec info: unknown name; SVM names on a device without SVM are CL_INVALID_OPERATION
    // pocl 3.1 bug: accepts unknown exec info names.
    if !is_pocl() {
        expect!(c, clSetKernelExecInfo(k, 0x7777, 4, vp), CL_INVALID_VALUE);
    }
    let svm: u64 = device_val(f.dev(), CL_DEVICE_SVM_CAPABILITIES);
    if svm == 0 {
        let ptrs = [null_mut::<c_void>(); 1];
        expect!(
            c,
            clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 8, ptrs.as_ptr().cast()),
            CL_INVALID_OPERATION
        );
        expect!(
            c,
            clSetKernelArgSVMPointer(k, 0, null()),
            CL_INVALID_OPERATION
        );
    }
    expect!(
        c,
        clSetKernelArgSVMPointer(null_mut(), 0, null()),
        CL_INVALID_KERNEL
    );
    if wrong_types() {
        let nk = f.not_kernel();
        expect!(
            c,
            create(|e| clCreateKernel(f.not_prog(), c"k".as_ptr(), e)),
            CL_INVALID_PROGRAM
        );
        expect!(
            c,
            clCreateKernelsInProgram(f.not_prog(), 0, null_mut(), &mut n),
            CL_INVALID_PROGRAM
        );
        expect!(c, create(|e| clCloneKernel(nk, e)), CL_INVALID_KERNEL);
        expect!(c, clSetKernelArg(nk, 1, 4, vp), CL_INVALID_KERNEL);
        expect!(
            c,
            clSetKernelExecInfo(nk, CL_KERNEL_EXEC_INFO_SVM_PTRS, 8, vp),
            CL_INVALID_KERNEL
        );
        expect!(
            c,
            clSetKernelArgSVMPointer(nk, 0, null()),
            CL_INVALID_KERNEL
        );
        expect!(c, clRetainKernel(nk), CL_INVALID_KERNEL);
        expect!(c, clReleaseKernel(nk), CL_INVALID_KERNEL);
    }
    // an unbuilt program has no executable
    let s = c"kernel void f() {}";
    let sp = s.as_ptr();
    let mut e = 0;
    let p = unsafe { clCreateProgramWithSource(f.ctx(), 1, &sp, null(), &mut e) };
    expect!(
        c,
        create(|e| clCreateKernel(p, c"f".as_ptr(), e)),
        CL_INVALID_PROGRAM_EXECUTABLE
    );
    expect!(
        c,
        clCreateKernelsInProgram(p, 0, null_mut(), &mut n),
        CL_INVALID_PROGRAM_EXECUTABLE
    );
    check!(clReleaseProgram(p));
    c.done();
}

#[test]
fn kernel_queries() {
    let f = Fix::new();
    let mut c = Check::default();
    let (k, d) = (f.k, f.dev());
    info_rules(
        &mut c,
        "clGetKernelInfo",
        CL_KERNEL_NUM_ARGS,
        |n, s, v, r| unsafe { clGetKernelInfo(k, n, s, v, r) },
    );
    info_rules(
        &mut c,
        "clGetKernelWorkGroupInfo",
        CL_KERNEL_WORK_GROUP_SIZE,
        |n, s, v, r| unsafe { clGetKernelWorkGroupInfo(k, d, n, s, v, r) },
    );
    let mut sz = 0;
    // CL_KERNEL_GLOBAL_WORK_SIZE: only for custom devices or built-in kernels
    expect!(
        c,
        clGetKernelWorkGroupInfo(k, d, CL_KERNEL_GLOBAL_WORK_SIZE, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        clGetKernelArgInfo(k, 2, CL_KERNEL_ARG_NAME, 0, null_mut(), &mut sz),
        CL_INVALID_ARG_INDEX
    );
    expect!(
        c,
        clGetKernelArgInfo(k, 0, 0x7777, 0, null_mut(), &mut sz),
        [CL_INVALID_VALUE, CL_KERNEL_ARG_INFO_NOT_AVAILABLE]
    );
    expect!(
        c,
        clGetKernelArgInfo(null_mut(), 0, CL_KERNEL_ARG_NAME, 0, null_mut(), &mut sz),
        CL_INVALID_KERNEL
    );
    // sub-groups: a device reporting sub-groups (CL_DEVICE_MAX_NUM_SUB_GROUPS > 0) must answer
    let subgroups: u32 = device_val(d, CL_DEVICE_MAX_NUM_SUB_GROUPS);
    let mut v = 0usize;
    let vp: *mut c_void = (&mut v as *mut usize).cast();
    let subgroup_ok = if subgroups > 0 {
        CL_SUCCESS
    } else {
        CL_INVALID_OPERATION
    };
    expect!(
        c,
        clGetKernelSubGroupInfo(
            k,
            d,
            CL_KERNEL_MAX_NUM_SUB_GROUPS,
            0,
            null(),
            8,
            vp,
            null_mut()
        ),
        subgroup_ok
    );
    expect!(
        c,
        clGetKernelSubGroupInfo(k, d, 0x7777, 0, null(), 8, vp, null_mut()),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        clGetKernelSubGroupInfo(
            null_mut(),
            d,
            CL_KERNEL_MAX_NUM_SUB_GROUPS,
            0,
            null(),
            8,
            vp,
            null_mut()
        ),
        CL_INVALID_KERNEL
    );
    expect!(
        c,
        clGetKernelWorkGroupInfo(
            null_mut(),
            d,
            CL_KERNEL_WORK_GROUP_SIZE,
            0,
            null_mut(),
            &mut sz
        ),
        CL_INVALID_KERNEL
    );
    if wrong_types() {
        let nk = f.not_kernel();
        let nd = f.not_dev();
        expect!(
            c,
            clGetKernelInfo(nk, CL_KERNEL_NUM_ARGS, 0, null_mut(), &mut sz),
            CL_INVALID_KERNEL
        );
        expect!(
            c,
            clGetKernelWorkGroupInfo(nk, d, CL_KERNEL_WORK_GROUP_SIZE, 0, null_mut(), &mut sz),
            CL_INVALID_KERNEL
        );
        expect!(
            c,
            clGetKernelWorkGroupInfo(k, nd, CL_KERNEL_WORK_GROUP_SIZE, 0, null_mut(), &mut sz),
            CL_INVALID_DEVICE
        );
        expect!(
            c,
            clGetKernelArgInfo(nk, 0, CL_KERNEL_ARG_NAME, 0, null_mut(), &mut sz),
            CL_INVALID_KERNEL
        );
        expect!(
            c,
            clGetKernelSubGroupInfo(
                nk,
                d,
                CL_KERNEL_MAX_NUM_SUB_GROUPS,
                0,
                null(),
                8,
                vp,
                null_mut()
            ),
            CL_INVALID_KERNEL
        );
        expect!(
            c,
            clGetKernelSubGroupInfo(
                k,
                nd,
                CL_KERNEL_MAX_NUM_SUB_GROUPS,
                0,
                null(),
                8,
                vp,
                null_mut()
            ),
            CL_INVALID_DEVICE
        );
    }
    c.done();
}

// ---------------------------------------------------------------- events
