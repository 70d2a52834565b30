//! Program and kernel details found by client suites (piglit): empty sources, attribute
//! strings, argument info, vector loads at a buffer's end, allocation limits.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

type BuildNotify = Option<unsafe extern "C" fn(cl_program, *mut c_void)>;

#[link(name = "OpenCL")]
extern "C" {
    fn clCompileProgram(
        p: cl_program,
        n: cl_uint,
        d: *const cl_device_id,
        opts: *const std::ffi::c_char,
        nh: cl_uint,
        headers: *const cl_program,
        names: *const *const std::ffi::c_char,
        f: BuildNotify,
        ud: *mut c_void,
    ) -> cl_int;
    fn clLinkProgram(
        c: cl_context,
        n: cl_uint,
        d: *const cl_device_id,
        opts: *const std::ffi::c_char,
        ni: cl_uint,
        inputs: *const cl_program,
        f: BuildNotify,
        ud: *mut c_void,
        err: *mut cl_int,
    ) -> cl_program;
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

const CL_INVALID_BINARY: cl_int = -42;

fn from_binary(e: &Env, bin: &[u8]) -> (cl_program, cl_int, cl_int) {
    let (p, status, err) = from_binaries(e.ctx, &[e.dev], &[bin]);
    (p, status[0], err)
}

#[test]
fn binaries_round_trip_and_bad_ones_are_refused() {
    let e = Env::new();
    let src = "kernel void twice(global int* b) { b[get_global_id(0)] *= 2; }";
    let p = e.program(src, "-DUNUSED=1");
    let bin = binaries(p).swap_remove(0);
    let (q, status, err) = from_binary(&e, &bin);
    assert_eq!((status, err), (CL_SUCCESS, CL_SUCCESS));
    // An executable binary is usable at once (as on other implementations), and building it
    // is allowed and changes nothing.
    assert_eq!(
        build_val::<i32>(q, e.dev, CL_PROGRAM_BUILD_STATUS),
        0 /* CL_BUILD_SUCCESS */
    );
    check!(clBuildProgram(q, 1, &e.dev, null(), None, null_mut()));
    assert_eq!(build_str(q, e.dev, CL_PROGRAM_BUILD_OPTIONS), "-DUNUSED=1");
    let k = kernel(q, "twice");
    let m = e.buffer_from(&[1i32, 2, 3, 4]);
    arg(k, 0, &m);
    e.run(k, None, &[4], None);
    assert_eq!(e.read::<i32>(m, 4), vec![2, 4, 6, 8]);
    assert_eq!(
        binaries(q).swap_remove(0),
        bin,
        "a binary program gives back the same binary"
    );
    // Corrupt, truncated and foreign binaries.
    let mut flipped = bin.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 1;
    // A well-formed binary that another vkcl compiled (docs/BINARY.md: the compiler identity
    // after the options; the FNV-1a 64 checksum at the end made right again).
    let mut foreign = bin.clone();
    let options_len = u32::from_le_bytes(foreign[52..56].try_into().unwrap()) as usize;
    let at = 56 + options_len;
    let id_len = u32::from_le_bytes(foreign[at..at + 4].try_into().unwrap()) as usize;
    let identity = String::from_utf8_lossy(&foreign[at + 4..at + 4 + id_len]).into_owned();
    assert!(identity.contains("vkcl"), "{identity}");
    foreign[at + 4 + id_len - 1] ^= 1;
    let body = foreign.len() - 8;
    let sum = foreign[..body]
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        });
    foreign[body..].copy_from_slice(&sum.to_le_bytes());
    for bad in [
        &flipped[..],
        &bin[..bin.len() - 1],
        b"not a binary at all",
        &foreign[..],
    ] {
        let (p2, status, err) = from_binary(&e, bad);
        assert!(p2.is_null());
        assert_eq!((status, err), (CL_INVALID_BINARY, CL_INVALID_BINARY));
    }
    unsafe {
        clReleaseKernel(k);
        clReleaseProgram(q);
        clReleaseProgram(p);
        clReleaseMemObject(m);
    }
}

const CL_PROGRAM_BINARY_TYPE: cl_uint = 0x1184;

fn source_program(e: &Env, src: &str) -> cl_program {
    let mut err = 0;
    let ptr = src.as_ptr() as *const std::ffi::c_char;
    let len = src.len();
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    p
}

fn binary_type(p: cl_program, d: cl_device_id) -> u32 {
    let mut t = 0u32;
    check!(clGetProgramBuildInfo(
        p,
        d,
        CL_PROGRAM_BINARY_TYPE,
        4,
        (&mut t as *mut u32).cast(),
        null_mut()
    ));
    t
}

#[test]
fn compile_with_an_embedded_header_then_link_through_a_library() {
    let e = Env::new();
    let header = source_program(&e, "#define FACTOR 7\nint scale(int x);\n");
    let main = source_program(&e, "#include \"inc/scale.h\"\nkernel void k(global int* b) { b[get_global_id(0)] = scale(b[get_global_id(0)]) + FACTOR; }\n");
    let lib = source_program(&e, "int scale(int x) { return x * 3; }\n");
    let name = c"inc/scale.h";
    check!(clCompileProgram(
        main,
        1,
        &e.dev,
        null(),
        1,
        &header,
        &name.as_ptr(),
        None,
        null_mut()
    ));
    check!(clCompileProgram(
        lib,
        1,
        &e.dev,
        null(),
        0,
        null(),
        null(),
        None,
        null_mut()
    ));
    assert_eq!(binary_type(main, e.dev), 0x1 /* COMPILED_OBJECT */);
    // The object cannot make kernels.
    let mut err = 0;
    unsafe { clCreateKernel(main, c"k".as_ptr(), &mut err) };
    assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE);
    // A library of the helper, then an executable of both.
    let library = unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            c"-create-library".as_ptr(),
            1,
            &lib,
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    assert_eq!(binary_type(library, e.dev), 0x2 /* LIBRARY */);
    let inputs = [main, library];
    let exe = unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            null(),
            2,
            inputs.as_ptr(),
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    assert_eq!(binary_type(exe, e.dev), 0x4 /* EXECUTABLE */);
    let k = kernel(exe, "k");
    let m = e.buffer_from(&[1i32, 2, 3]);
    arg(k, 0, &m);
    e.run(k, None, &[3], None);
    assert_eq!(e.read::<i32>(m, 3), vec![10, 13, 16]);
    // Errors.
    check_err!(
        clCompileProgram(
            main,
            1,
            &e.dev,
            c"-bogus".as_ptr(),
            0,
            null(),
            null(),
            None,
            null_mut()
        ),
        CL_INVALID_COMPILER_OPTIONS
    );
    check_err!(
        clCompileProgram(main, 1, &e.dev, null(), 1, null(), null(), None, null_mut()),
        CL_INVALID_VALUE
    );
    unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            c"-bogus".as_ptr(),
            1,
            &lib,
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_INVALID_LINKER_OPTIONS);
    unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            null(),
            0,
            null(),
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_INVALID_VALUE);
    // A program that was never compiled cannot be linked; a binary program cannot be compiled.
    let raw = source_program(&e, "int unused(void) { return 1; }");
    unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            null(),
            1,
            &raw,
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_INVALID_OPERATION, "{}", err_name(err));
    let bin = binaries(exe).swap_remove(0);
    let (from_bin, _, _) = from_binary(&e, &bin);
    check_err!(
        clCompileProgram(
            from_bin,
            1,
            &e.dev,
            null(),
            0,
            null(),
            null(),
            None,
            null_mut()
        ),
        CL_INVALID_OPERATION
    );
    let bad = source_program(&e, "int broken( {");
    check_err!(
        clCompileProgram(bad, 1, &e.dev, null(), 0, null(), null(), None, null_mut()),
        CL_COMPILE_PROGRAM_FAILURE
    );
    unsafe {
        clReleaseKernel(k);
        clReleaseMemObject(m);
        for p in [header, main, lib, library, exe, bad, raw, from_bin] {
            clReleaseProgram(p);
        }
    }
}

/// Extension macros OpenCL C defines for extensions of the language (the extension
/// specifications: "defined ... if and only if the extension is supported"), with
/// `SUBGROUP_EXTENSIONS`.
const OTHER_LANGUAGE_EXTENSIONS: &[&str] = &[
    "cl_khr_byte_addressable_store",
    "cl_khr_fp16",
    "cl_khr_fp64",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_3d_image_writes",
    "cl_khr_depth_images",
    "cl_khr_gl_msaa_sharing",
    "cl_khr_mipmap_image",
    "cl_khr_mipmap_image_writes",
    "cl_khr_srgb_image_writes",
    "cl_khr_subgroups",
    "cl_khr_subgroup_rotate",
    "cl_khr_integer_dot_product",
    "cles_khr_int64",
];

/// Under every OpenCL C version the device lists (1.1 on), a kernel sees the macro of each
/// language extension exactly where CL_DEVICE_EXTENSIONS lists the extension (clspv's front
/// end defined nine that no vkcl device has, and vkcl's sub-group library defined three it
/// lists only from OpenCL C 2.0 on).
#[test]
fn extension_macros_are_defined_where_the_device_lists_the_extension() {
    let e = Env::new();
    let listed = device_str(e.dev, CL_DEVICE_EXTENSIONS);
    let listed: Vec<&str> = listed.split_whitespace().collect();
    let names: Vec<&str> = OTHER_LANGUAGE_EXTENSIONS
        .iter()
        .chain(&SUBGROUP_EXTENSIONS)
        .copied()
        .collect();
    let checks: String = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("#ifdef {n}\n o[{i}] = 1;\n#else\n o[{i}] = 0;\n#endif\n"))
        .collect();
    let src = format!("kernel void k(global int *o) {{\n{checks}}}");
    for std in [
        "-cl-std=CL1.1",
        "-cl-std=CL1.2",
        "-cl-std=CL2.0",
        "-cl-std=CL3.0",
    ] {
        let claims_2_0 = device_str(e.dev, CL_DEVICE_OPENCL_C_VERSION).contains("2.0");
        if std.ends_with("2.0") && !claims_2_0 {
            continue;
        }
        let p = e.program(&src, std);
        let k = kernel(p, "k");
        let o = e.buffer_from(&vec![-1i32; names.len()]);
        arg(k, 0, &o);
        e.run(k, None, &[1], None);
        let defined = e.read::<i32>(o, names.len());
        for (name, d) in names.iter().zip(defined) {
            assert_eq!(d == 1, listed.contains(name), "{std}: {name} defined {d}");
        }
        check!(clReleaseMemObject(o));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// -Werror makes -Wall's warnings and those clang gives by default errors, not the ones it
/// gives only under -Weverything (which clspv's front end turns on): an implicit float-to-int
/// conversion, a function without a prototype, a declaration after a statement and a padded
/// struct build; a missing return and an unknown extension's pragma fail.
#[test]
fn werror_fails_the_build_on_wall_and_default_warnings_only() {
    let e = Env::new();
    let quiet = "typedef struct { char c; int i; } padded;\n\
                 int helper(int x) { return x + 1; }\n\
                 kernel void k(global float *src, global int *dst) {\n\
                 size_t tid = get_global_id(0);\n\
                 dst[tid] = src[tid];\n\
                 padded p = { 1, helper(2) };\n\
                 dst[tid] += p.i; }";
    let p = build_program(e.ctx, e.dev, quiet, "-Werror").unwrap_or_else(|(c, log)| {
        panic!("{}: {log}", err_name(c));
    });
    check!(clReleaseProgram(p));
    // A function that falls off its end without a value: a warning by default.
    let loud = "int f(int x) { if (x) return 1; }\n\
                kernel void k(global int *o) { o[0] = f(o[1]); }";
    let (code, log) = build_program(e.ctx, e.dev, loud, "-Werror").expect_err("built");
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(log.contains("non-void function"), "{log}");
    let p = build_program(e.ctx, e.dev, loud, "").unwrap_or_else(|(c, log)| {
        panic!("{}: {log}", err_name(c));
    });
    check!(clReleaseProgram(p));
    let pragma = "#pragma OPENCL EXTENSION made_up_extension : enable\n\
                  kernel void k(global int *o) { o[0] = 1; }";
    let (code, log) = build_program(e.ctx, e.dev, pragma, "-Werror").expect_err("built");
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(log.contains("made_up_extension"), "{log}");
}
