//! Program and kernel details found by client suites (piglit): empty sources, attribute
//! strings, argument info, vector loads at a buffer's end, allocation limits.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

#[link(name = "OpenCL")]
extern "C" {
    fn clGetKernelArgInfo(
        k: cl_kernel,
        i: cl_uint,
        name: cl_uint,
        sz: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
}

const CL_KERNEL_ARG_NAME: cl_uint = 0x119A;
const CL_KERNEL_ARG_INFO_NOT_AVAILABLE: cl_int = -19;

#[test]
fn an_empty_source_builds_a_program_without_kernels() {
    let e = Env::new();
    let empty = c"";
    let mut err = 0;
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, &empty.as_ptr(), null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    check!(clBuildProgram(p, 1, &e.dev, null(), None, null_mut()));
    let mut n = 99usize;
    check!(clGetProgramInfo(
        p,
        CL_PROGRAM_NUM_KERNELS,
        8,
        (&mut n as *mut usize).cast(),
        null_mut()
    ));
    assert_eq!(n, 0);
    unsafe { clReleaseProgram(p) };
}

#[test]
fn kernel_attributes_are_returned_as_declared_without_whitespace() {
    let e = Env::new();
    let p = e.program(
        "__attribute__((reqd_work_group_size(8, 4, 1))) __attribute__((vec_type_hint(float4)))\n\
         kernel void a(global int* b) { b[0] = 1; }\n\
         kernel void plain(global int* b) { b[0] = 1; }",
        "",
    );
    let a = kernel(p, "a");
    let attrs = kernel_str(a, CL_KERNEL_ATTRIBUTES);
    let mut parts: Vec<&str> = attrs.split(' ').collect();
    parts.sort();
    assert_eq!(
        parts,
        ["reqd_work_group_size(8,4,1)", "vec_type_hint(float4)"],
        "{attrs:?}"
    );
    let plain = kernel(p, "plain");
    assert_eq!(kernel_str(plain, CL_KERNEL_ATTRIBUTES), "");
    unsafe {
        clReleaseKernel(a);
        clReleaseKernel(plain);
        clReleaseProgram(p);
    }
}

#[test]
fn argument_info_needs_the_build_option() {
    let e = Env::new();
    let src = "kernel void k(global int* data) { data[0] = 1; }";
    for (opts, available) in [("", false), ("-cl-kernel-arg-info", true)] {
        let p = e.program(src, opts);
        let k = kernel(p, "k");
        let mut name = [0u8; 16];
        let code = unsafe {
            clGetKernelArgInfo(
                k,
                0,
                CL_KERNEL_ARG_NAME,
                16,
                name.as_mut_ptr().cast(),
                null_mut(),
            )
        };
        if available {
            assert_eq!(code, CL_SUCCESS, "{}", err_name(code));
            assert_eq!(&name[..5], b"data\0");
        } else {
            assert_eq!(code, CL_KERNEL_ARG_INFO_NOT_AVAILABLE, "{}", err_name(code));
        }
        unsafe {
            clReleaseKernel(k);
            clReleaseProgram(p);
        }
    }
}

#[test]
fn vector_loads_reach_the_last_bytes_of_an_odd_sized_buffer() {
    let e = Env::new();
    // 7 halves (14 bytes): vloada_half3 at element 4 reads the last three (clspv loads 8 bytes).
    let halves: [u16; 7] = [0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700]; // 1..7
    let input = e.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        14,
        halves.as_ptr() as *mut c_void,
    );
    let out = e.buffer(CL_MEM_READ_WRITE, 16, null_mut());
    let p = e.program(
        "kernel void k(global const half* in, global float4* out) { out[0] = (float4)(vload_half3(0, in + 4), 0.0f); }",
        "",
    );
    let k = kernel(p, "k");
    arg(k, 0, &input);
    arg(k, 1, &out);
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<f32>(out, 4), vec![5.0, 6.0, 7.0, 0.0]);
    unsafe {
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseMemObject(input);
        clReleaseMemObject(out);
    }
}

#[test]
fn max_mem_alloc_size_meets_the_full_profile_minimum() {
    let d = device();
    let mut alloc = 0u64;
    let mut global = 0u64;
    check!(clGetDeviceInfo(
        d,
        0x1010, /* MAX_MEM_ALLOC_SIZE */
        8,
        (&mut alloc as *mut u64).cast(),
        null_mut()
    ));
    check!(clGetDeviceInfo(
        d,
        0x101F, /* GLOBAL_MEM_SIZE */
        8,
        (&mut global as *mut u64).cast(),
        null_mut()
    ));
    let min = (1u64 << 30).min(global / 4).max(32 << 20);
    assert!(
        alloc >= min,
        "CL_DEVICE_MAX_MEM_ALLOC_SIZE {alloc} < {min} (global {global})"
    );
    let _ = null::<u8>();
}
