//! Program-scope global variables (OpenCL C 2.0 `global` variables at program scope and
//! `static` locals).
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

const SOURCE: &str = r#"
global int counter = 5;
global float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
kernel void bump(global int *o) {
    static global int calls = 100;
    if (get_global_id(0) == 0) {
        o[0] = counter++;
        o[1] = calls++;
        o[2] = (int)(table[1] * 2.0f);
        table[1] += 1.0f;
    }
}
kernel void peek(global int *o) { o[0] = counter; o[1] = (int)(table[1] * 2.0f); }
"#;

#[test]
fn globals_persist_across_launches_and_kernels() {
    persist("-cl-std=CL2.0");
}

#[test]
fn globals_persist_across_launches_and_kernels_cl30() {
    persist("-cl-std=CL3.0");
}

fn persist(std: &str) {
    let e = Env::new();
    let p = match build_program(e.ctx, e.dev, SOURCE, std) {
        Ok(p) => p,
        Err((code, log)) => panic!("{}: {log}", err_name(code)),
    };
    let bump = kernel(p, "bump");
    let peek = kernel(p, "peek");
    let o = e.buffer_from(&[0i32; 3]);
    arg(bump, 0, &o);
    arg(peek, 0, &o);
    for i in 0..3 {
        e.run(bump, None, &[4], None);
        assert_eq!(e.read::<i32>(o, 3), [5 + i, 100 + i, 5 + 2 * i]);
    }
    e.run(peek, None, &[1], None);
    assert_eq!(e.read::<i32>(o, 2), [8, 11]);
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(bump));
    check!(clReleaseKernel(peek));
    check!(clReleaseProgram(p));
}

const TYPES: &str = r#"
typedef struct { char c; int i; float2 f; long l[2]; } S;
global S s = { 'a', -7, (float2)(0.5f, 1.5f), { 1L << 40, -3 } };
global double d = 2.25;
global uchar bytes[5] = { 1, 2, 3, 4, 5 };
global int4 v = (int4)(1, 2, 3, 4);
global int zero[3];
global float plain;

int next(void) { static global int n; return n++; }

kernel void types(global long *o) {
    o[0] = s.c; o[1] = s.i; o[2] = (long)(s.f.y * 2); o[3] = s.l[0]; o[4] = s.l[1];
    o[5] = (long)(d * 4); o[6] = bytes[0] + bytes[4] * 10; o[7] = v.x + v.w * 10;
    o[8] = zero[0] + zero[1] + zero[2]; o[9] = (long)plain; o[10] = next(); o[11] = next();
    s.i += 1; bytes[4] += 1; v.w += 1; zero[2] += 2; plain += 1.0f; d += 1.0;
}
"#;

/// Initializers of structs, vectors, doubles, chars and arrays laid out as written; variables
/// without one start at zero; a `static` local in a function that is not a kernel; and
/// CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE covering them all.
#[test]
fn initializers_of_every_shape() {
    initializers("-cl-std=CL2.0");
}

#[test]
fn initializers_of_every_shape_cl30() {
    initializers("-cl-std=CL3.0");
}

fn initializers(std: &str) {
    let e = Env::new();
    let fp64 = device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64");
    let src = if fp64 {
        TYPES.to_string()
    } else {
        TYPES.replace("double", "float")
    };
    let p = e.program(&src, std);
    let total: usize = bytes_to(&info_bytes(|s, v, r| unsafe {
        clGetProgramBuildInfo(
            p,
            e.dev,
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
            s,
            v,
            r,
        )
    }));
    // S is 32 bytes; the others at least their size; each starts on 16 bytes.
    assert!(
        (32 + 8 + 5 + 16 + 12 + 4 + 4..=16 * 16).contains(&total),
        "total {total}"
    );
    let k = kernel(p, "types");
    let o = e.buffer_from(&[0i64; 12]);
    arg(k, 0, &o);
    for i in 0..2 {
        e.run(k, None, &[1], None);
        let want = [
            'a' as i64,
            -7 + i,
            3,
            1 << 40,
            -3,
            9 + 4 * i,
            51 + 10 * i,
            41 + 10 * i,
            2 * i,
            i,
            2 * i,
            2 * i + 1,
        ];
        assert_eq!(e.read::<i64>(o, 12), want, "launch {i}");
    }
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// A program made from another's binary starts from the initial values again (its own
/// buffer) and keeps them across its launches.
#[test]
fn binaries_keep_the_initial_values() {
    from_binary("-cl-std=CL2.0");
}

#[test]
fn binaries_keep_the_initial_values_cl30() {
    from_binary("-cl-std=CL3.0");
}

fn from_binary(std: &str) {
    let e = Env::new();
    let p = e.program(SOURCE, std);
    let bump = kernel(p, "bump");
    let o = e.buffer_from(&[0i32; 3]);
    arg(bump, 0, &o);
    e.run(bump, None, &[1], None);
    let bins = binaries(p);
    let (q, status, err) = from_binaries(e.ctx, &[e.dev], &[&bins[0]]);
    assert_eq!((err, status[0]), (CL_SUCCESS, CL_SUCCESS));
    check!(clBuildProgram(q, 1, &e.dev, null(), None, null_mut()));
    let again = kernel(q, "bump");
    arg(again, 0, &o);
    for i in 0..2 {
        e.run(again, None, &[1], None);
        assert_eq!(e.read::<i32>(o, 3), [5 + i, 100 + i, 5 + 2 * i]);
    }
    // The first program's variables went on from where they were.
    e.run(bump, None, &[1], None);
    assert_eq!(e.read::<i32>(o, 3), [6, 101, 7]);
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(bump));
    check!(clReleaseKernel(again));
    check!(clReleaseProgram(p));
    check!(clReleaseProgram(q));
}

/// clCompileProgram then clLinkProgram: the linked program has the variables too.
#[test]
fn compiled_and_linked_programs_have_them() {
    compile_and_link(c"-cl-std=CL2.0");
}

#[test]
fn compiled_and_linked_programs_have_them_cl30() {
    compile_and_link(c"-cl-std=CL3.0");
}

fn compile_and_link(opts: &std::ffi::CStr) {
    let e = Env::new();
    let obj = e.compiled(SOURCE, opts);
    let (p, err) = e.linked(None, &[obj]);
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    let bump = kernel(p, "bump");
    let o = e.buffer_from(&[0i32; 3]);
    arg(bump, 0, &o);
    for i in 0..2 {
        e.run(bump, None, &[1], None);
        assert_eq!(e.read::<i32>(o, 3), [5 + i, 100 + i, 5 + 2 * i]);
    }
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(bump));
    check!(clReleaseProgram(p));
    check!(clReleaseProgram(obj));
}

/// A variable defined in one compiled program and declared `extern` in another, linked: both
/// kernels see one variable (under 3.0 clang refused the `extern` declaration: "extern variable
/// must reside in constant address space"; conformance progvar_prog_scope_misc).
#[test]
fn extern_declarations_reach_the_variable_of_another_object() {
    extern_declarations(c"-cl-std=CL2.0");
}

#[test]
fn extern_declarations_reach_the_variable_of_another_object_cl30() {
    extern_declarations(c"-cl-std=CL3.0");
}

fn extern_declarations(opts: &std::ffi::CStr) {
    const WRITER: &str = "typedef struct { uchar c; uint i; } pair_t;\n\
        pair_t var = { 'a', 42 };\n\
        kernel void writer(uchar c, uint i) { var.c = c; var.i = i; }\n";
    const READER: &str = "typedef struct { uchar c; uint i; } pair_t;\n\
        extern pair_t var;\n\
        kernel void reader(global uint *out) { out[0] = var.c; out[1] = var.i; }\n";
    let e = Env::new();
    let objects = [WRITER, READER].map(|src| e.compiled(src, opts));
    let (p, err) = e.linked(None, &objects);
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    let (writer, reader) = (kernel(p, "writer"), kernel(p, "reader"));
    let o = e.buffer_from(&[0u32; 2]);
    arg(reader, 0, &o);
    e.run(reader, None, &[1], None);
    assert_eq!(e.read::<u32>(o, 2), [b'a' as u32, 42]);
    arg(writer, 0, &b'b');
    arg(writer, 1, &43u32);
    e.run(writer, None, &[1], None);
    e.run(reader, None, &[1], None);
    assert_eq!(e.read::<u32>(o, 2), [b'b' as u32, 43]);
    check!(clReleaseMemObject(o));
    for k in [writer, reader] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    for obj in objects {
        check!(clReleaseProgram(obj));
    }
}

/// A program-scope atomic counter, contended by every work-item and kept across launches,
/// and a 64-bit one read with atomic_load (clspv 0.0.1 alone types a program-scope
/// atomic_long given to atomic_load as two uints and loads only the low one).
#[test]
fn program_scope_atomics() {
    atomics("-cl-std=CL2.0");
}

/// OpenCL C 3.0 without __opencl_c_atomic_order_seq_cst has only the _explicit forms.
#[test]
fn program_scope_atomics_cl30() {
    atomics("-cl-std=CL3.0");
}

fn atomics(std: &str) {
    let src = "#if __OPENCL_C_VERSION__ >= 300\n\
               #define atomic_fetch_add(p, v) atomic_fetch_add_explicit(p, v, memory_order_relaxed)\n\
               #define atomic_load(p) atomic_load_explicit(p, memory_order_relaxed)\n\
               #endif\n\
               global atomic_int counter = ATOMIC_VAR_INIT(7);\n\
               global atomic_long total;\n\
               kernel void count(global int *o) {\n\
                   int i = get_global_id(0);\n\
                   o[i] = atomic_fetch_add(&counter, 1);\n\
                   atomic_fetch_add(&total, (long)i << 32);\n\
               }\n\
               kernel void read(global long *o) {\n\
                   o[0] = atomic_load(&counter);\n\
                   o[1] = atomic_load(&total);\n\
               }";
    let e = Env::new();
    let p = e.program(src, std);
    let count = kernel(p, "count");
    let read = kernel(p, "read");
    let n = 256usize;
    let o = e.buffer_from(&vec![-1i32; n]);
    let r = e.buffer_from(&[0i64; 2]);
    arg(count, 0, &o);
    arg(read, 0, &r);
    for launch in 0..2 {
        e.run(count, None, &[n], Some(&[64]));
        let mut tickets = e.read::<i32>(o, n);
        tickets.sort();
        let first = 7 + (launch * n) as i32;
        assert!(
            tickets.iter().copied().eq(first..first + n as i32),
            "{tickets:?}"
        );
    }
    e.run(read, None, &[1], None);
    let sum: i64 = (0..n as i64).sum::<i64>() << 32;
    assert_eq!(e.read::<i64>(r, 2), [7 + 2 * n as i64, 2 * sum]);
    for m in [o, r] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(count));
    check!(clReleaseKernel(read));
    check!(clReleaseProgram(p));
}

/// atomic_load of initialized program-scope atomics of every type, in one program and in
/// one kernel (clspv 0.0.1 alone gives them all the type of the first load: a long read as
/// its low word, or a crash).
#[test]
fn program_scope_atomic_loads_of_every_type() {
    let e = Env::new();
    let fp64 = device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64");
    let src = format!(
        "global atomic_int i = ATOMIC_VAR_INIT(-7);\n\
         global atomic_uint u = ATOMIC_VAR_INIT(9u);\n\
         global atomic_long l = ATOMIC_VAR_INIT(0x500000009L);\n\
         global atomic_ulong ul = ATOMIC_VAR_INIT(0xF00000003UL);\n\
         global atomic_float f = ATOMIC_VAR_INIT(2.5f);\n\
         {}\n\
         kernel void small(global long *o) {{\n\
             o[0] = atomic_load(&i);\n\
             o[1] = atomic_load_explicit(&u, memory_order_acquire);\n\
             o[2] = (long)(atomic_load_explicit(&f, memory_order_relaxed, memory_scope_device) * 4);\n\
         }}\n\
         kernel void wide(global long *o) {{\n\
             o[3] = atomic_load(&l);\n\
             o[4] = atomic_load_explicit(&ul, memory_order_relaxed);\n\
             {}\n\
         }}\n\
         kernel void mixed(global long *o) {{\n\
             o[6] = atomic_load(&i) + atomic_load(&l);\n\
             atomic_fetch_add(&l, 1L << 32);\n\
             o[7] = atomic_load_explicit(&l, memory_order_relaxed) - atomic_load(&u);\n\
         }}",
        if fp64 { "global atomic_double d = ATOMIC_VAR_INIT(-1.25);" } else { "" },
        if fp64 { "o[5] = (long)(atomic_load(&d) * 8);" } else { "o[5] = -10;" },
    );
    let p = e.program(&src, "-cl-std=CL2.0");
    let o = e.buffer_from(&[0i64; 8]);
    for name in ["small", "wide", "mixed"] {
        let k = kernel(p, name);
        arg(k, 0, &o);
        e.run(k, None, &[1], None);
        check!(clReleaseKernel(k));
    }
    let l = 0x5_0000_0009i64;
    let want = [-7, 9, 10, l, 0xF_0000_0003, -10, l - 7, l + (1 << 32) - 9];
    assert_eq!(e.read::<i64>(o, 8), want);
    check!(clReleaseMemObject(o));
    check!(clReleaseProgram(p));
}

const CL_DEVICE_OPENCL_C_FEATURES: cl_uint = 0x106F;
const CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE: cl_uint = 0x104D;
const CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE: cl_uint = 0x1054;

fn has_feature(e: &Env, name: &str) -> bool {
    let f = info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(e.dev, CL_DEVICE_OPENCL_C_FEATURES, sz, v, r)
    });
    // cl_name_version entries: a version, then a NUL-padded name.
    f.chunks(68)
        .any(|c| c[4..].split(|&b| b == 0).next() == Some(name.as_bytes()))
}

fn device_size(e: &Env, name: cl_uint) -> usize {
    bytes_to(&info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(e.dev, name, sz, v, r)
    }))
}

/// Under OpenCL C 3.0 the feature is reported and its macro defined; the program reads as
/// 3.0 (its version and feature macros are the 3.0 build's, not those of clang's 2.0 mode,
/// which vkcl builds it in); the two sizes are at least OpenCL's 64 KiB minimum; a variable
/// of CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE bytes works, and more than that fails to build
/// with a log that says why.
#[test]
fn the_feature_under_opencl_c_3_0() {
    let e = Env::new();
    const FEATURE: &str = "__opencl_c_program_scope_global_variables";
    assert!(has_feature(&e, FEATURE));
    let max = device_size(&e, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE);
    let preferred = device_size(&e, CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE);
    assert!(max >= 64 * 1024 && preferred >= 1, "{max} {preferred}");
    // Each macro as the device claims it (clang's 2.0 header defines all of these).
    let mut checks = String::new();
    for f in [
        "__opencl_c_atomic_order_seq_cst",
        "__opencl_c_atomic_scope_all_devices",
        "__opencl_c_device_enqueue",
        "__opencl_c_pipes",
        "__opencl_c_generic_address_space",
        "__opencl_c_int64",
        FEATURE,
    ] {
        let (wrong, what) = if has_feature(&e, f) {
            ("!", "claimed, not defined")
        } else {
            ("", "defined, not claimed")
        };
        checks += &format!("#if {wrong}defined({f})\n#error {f} {what}\n#endif\n");
    }
    let n = max / 4;
    let src = format!(
        "{checks}#if __OPENCL_C_VERSION__ != 300\n#error not 3.0\n#endif\n\
         global uint big[{n}];\n\
         kernel void k(global uint *o) {{\n\
             uint i = get_global_id(0);\n\
             o[i] = big[i * 64 + 1];\n\
             big[i * 64 + 1] = i + 10;\n\
         }}\n"
    );
    let p = e.program(&src, "-cl-std=CL3.0");
    let total: usize = bytes_to(&info_bytes(|s, v, r| unsafe {
        clGetProgramBuildInfo(
            p,
            e.dev,
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
            s,
            v,
            r,
        )
    }));
    assert_eq!(total, max);
    let k = kernel(p, "k");
    let items = n / 64;
    let o = e.buffer_from(&vec![7u32; items]);
    arg(k, 0, &o);
    e.run(k, None, &[items], None);
    assert_eq!(e.read::<u32>(o, items), vec![0u32; items]);
    e.run(k, None, &[items], None);
    let want: Vec<u32> = (0..items as u32).map(|i| i + 10).collect();
    assert_eq!(e.read::<u32>(o, items), want);
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    let over = format!(
        "global uint big[{}];\nkernel void k(global uint *o) {{ o[0] = big[o[1]]++; }}\n",
        n + 1
    );
    match build_program(e.ctx, e.dev, &over, "-cl-std=CL3.0") {
        Ok(_) => panic!("{} bytes of program-scope variables built", max + 4),
        Err((code, log)) => {
            assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
            assert!(log.contains("CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE"), "{log}");
        }
    }
}

/// 3.0 programs that name `global` at program scope or `static` in a function are built in 2.0
/// mode at once (issue 16): programs that only look like it (a typedef of a global pointer, a
/// static constant local) and real program-scope variables build and compute right.
#[test]
fn program_scope_words_cl30() {
    let e = Env::new();
    let src = "typedef global int *gptr;\n\
               global int counter = 5;\n\
               kernel void k(gptr o) {\n\
                   static constant int t[2] = { 7, 9 };\n\
                   o[get_global_id(0)] = t[get_global_id(0) & 1] + counter;\n\
               }\n";
    let looks_only = "typedef global int *gptr;\n\
               kernel void k(gptr o) {\n\
                   static constant int t[2] = { 7, 9 };\n\
                   o[get_global_id(0)] = t[get_global_id(0) & 1] + 5;\n\
               }\n";
    for src in [src, looks_only] {
        let p = e.program(src, "-cl-std=CL3.0");
        let k = kernel(p, "k");
        let o = e.buffer_from(&[0i32; 4]);
        arg(k, 0, &o);
        e.run(k, None, &[4], None);
        assert_eq!(e.read::<i32>(o, 4), [12, 14, 12, 14], "{src}");
        check!(clReleaseMemObject(o));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// A build error in a 3.0 program with program-scope variables is reported at the line the
/// application wrote.
#[test]
fn errors_name_the_application_lines_cl30() {
    let e = Env::new();
    let src = "global int g = 1;\nkernel void k(global int *o) {\n  o[0] = g + undeclared;\n}\n";
    match build_program(e.ctx, e.dev, src, "-cl-std=CL3.0") {
        Ok(_) => panic!("built"),
        Err((_, log)) => assert!(log.contains("source:3:"), "{log}"),
    }
}

/// A large array with a short initializer (clang types it as a struct of the initialised
/// elements and an array of zeros, which clspv indexes at run time: invalid SPIR-V before
/// compiler::globals made it one array), read and written at run-time indices.
#[test]
fn partly_initialised_arrays() {
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let e = Env::new();
        let src = "global uint big[1000] = { 3, 4 };\n\
                   global float f[64] = { 0.5f };\n\
                   kernel void k(global uint *o) {\n\
                       uint i = get_global_id(0);\n\
                       o[i] = big[i * 100 + 1] + (uint)(f[i] * 2.0f) * 1000;\n\
                       big[i * 100 + 1] = i + 10;\n\
                       f[i] = 3.0f;\n\
                   }\n";
        let p = e.program(src, std);
        let k = kernel(p, "k");
        let o = e.buffer_from(&[7u32; 10]);
        arg(k, 0, &o);
        e.run(k, None, &[10], None);
        assert_eq!(
            e.read::<u32>(o, 10),
            [1004, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            "{std}"
        );
        e.run(k, None, &[10], None);
        let want: Vec<u32> = (10..20).map(|v| v + 6000).collect();
        assert_eq!(e.read::<u32>(o, 10), want, "{std}");
        check!(clReleaseMemObject(o));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

extern "C" {
    fn clSVMAlloc(
        c: cl_context,
        flags: cl_bitfield,
        size: usize,
        align: cl_uint,
    ) -> *mut std::ffi::c_void;
    fn clSVMFree(c: cl_context, p: *mut std::ffi::c_void);
    fn clSetKernelArgSVMPointer(k: cl_kernel, i: cl_uint, p: *const std::ffi::c_void) -> cl_int;
}

const SVM_SOURCE: &str = r#"
typedef struct { char c; int i; float2 f; long l[2]; } S;
global S s = { 'a', -7, (float2)(0.5f, 1.5f), { 1L << 40, -3 } };
global int counter = 5;
global uint big[100] = { 3, 4 };
global int slots[8];

int next(void) { static global int n = 40; return n++; }

void add_to(global int *p, int v) { *p += v; }

kernel void first(global long *o, global int *in) {
    size_t i = get_global_id(0);
    if (i == 0) {
        o[0] = counter++; o[1] = s.i; o[2] = s.l[0]; o[3] = (long)(s.f.y * 2.0f);
        o[4] = next(); o[5] = big[1] + big[50]; o[6] = s.c;
        s.i += 1; big[50] += 7;
    }
    global int *p = (i & 1) ? &slots[i] : &in[i];
    add_to(p, 100 + (int)i);
}

kernel void second(global int *o) {
    size_t i = get_global_id(0);
    o[i] = slots[i] + counter * 1000;
}

kernel void plain(global int *o) {
    o[0] = counter; o[1] = slots[1]; o[2] = s.i; o[3] = next();
    counter += 100; slots[1] += 5;
}
"#;

/// Program-scope variables in a program whose kernels take SVM pointers (so the launches run
/// its physical-addressing build, where clspv makes them initialised PhysicalStorageBuffer
/// variables: invalid SPIR-V before compiler::globals gathered them there too): initializers,
/// a static local, a partly initialised array, values kept across launches and kernels, and
/// a pointer that is either a variable's element or an SVM element, given to a function; and
/// one set of values for the launches of either build (a kernel launched with a buffer runs
/// the program's first build: it sees and changes what the SVM launches left).
#[test]
fn svm_kernels_use_program_scope_variables() {
    const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
    const FINE_GRAIN: cl_bitfield = 1 << 10;
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let e = Env::new();
        let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
        if caps == 0 {
            eprintln!("no SVM on this device");
            return;
        }
        let p = e.program(SVM_SOURCE, std);
        let (first, second) = (kernel(p, "first"), kernel(p, "second"));
        let o = unsafe { clSVMAlloc(e.ctx, FINE_GRAIN, 8 * 8, 0) }.cast::<i64>();
        let v = unsafe { clSVMAlloc(e.ctx, FINE_GRAIN, 8 * 4, 0) }.cast::<i32>();
        assert!(!o.is_null() && !v.is_null());
        unsafe {
            std::ptr::write_bytes(o, 0, 8);
            std::ptr::write_bytes(v, 0, 8);
        }
        check!(clSetKernelArgSVMPointer(first, 0, o.cast()));
        check!(clSetKernelArgSVMPointer(first, 1, v.cast()));
        check!(clSetKernelArgSVMPointer(second, 0, v.cast()));
        for round in 0..2i64 {
            e.run(first, None, &[8], None);
            let got = unsafe { std::slice::from_raw_parts(o, 7) }.to_vec();
            assert_eq!(
                got,
                [
                    5 + round,
                    -7 + round,
                    1 << 40,
                    3,
                    40 + round,
                    4 + 7 * round,
                    97
                ],
                "{std} round {round}"
            );
            let got = unsafe { std::slice::from_raw_parts(v, 8) }.to_vec();
            let want: Vec<i32> = (0..8)
                .map(|i| {
                    if i & 1 == 0 {
                        (100 + i) * (round as i32 + 1)
                    } else {
                        0
                    }
                })
                .collect();
            assert_eq!(got, want, "{std} round {round}");
        }
        let plain = kernel(p, "plain");
        let b = e.buffer_from(&[0i32; 4]);
        arg(plain, 0, &b);
        e.run(plain, None, &[1], None);
        assert_eq!(
            e.read::<i32>(b, 4),
            [7, 202, -5, 42],
            "{std}: the first build"
        );
        e.run(second, None, &[8], None);
        let got = unsafe { std::slice::from_raw_parts(v, 8) }.to_vec();
        let want: Vec<i32> = (0..8)
            .map(|i| {
                let slot = if i & 1 == 1 { (100 + i) * 2 } else { 0 };
                107000 + slot + if i == 1 { 5 } else { 0 }
            })
            .collect();
        assert_eq!(got, want, "{std}");
        check!(clReleaseMemObject(b));
        check!(clReleaseKernel(plain));
        unsafe {
            clSVMFree(e.ctx, o.cast());
            clSVMFree(e.ctx, v.cast());
        }
        check!(clReleaseKernel(first));
        check!(clReleaseKernel(second));
        check!(clReleaseProgram(p));
    }
}

const WIDE_SOURCE: &str = r#"
global size_t count = 7;
global ptrdiff_t delta = -3;
global uintptr_t where_ = 0;
global int after = 11;
intptr_t step(void) { static global intptr_t n = -5; return n--; }

kernel void look(global long *o) {
    o[0] = count; o[1] = delta; o[2] = where_; o[3] = after; o[4] = step();
}
kernel void wide(global long *o) {
    look(o);
    count = ((size_t)1 << 32) + 5; delta = -((ptrdiff_t)1 << 32) - 2;
    where_ = ((uintptr_t)2 << 32) + 9; after += 1;
}
kernel void narrow(global long *o) {
    look(o);
    count = 0xfffffff0u; delta = -9; where_ = 17; after += 1;
}
"#;

/// `size_t`, `ptrdiff_t`, `uintptr_t` and `intptr_t` program-scope variables shared by the
/// program's two builds (issue 18): one variable, as OpenCL C says. A kernel launched with SVM
/// pointers (the physical build) writes values above 2^32; one launched with a buffer (the
/// first build) reads them whole (both builds are 64-bit where SVM is: CL_DEVICE_ADDRESS_BITS
/// 64) and writes values the physical build then reads whole.
#[test]
fn size_t_variables_are_one_variable_in_both_builds() {
    const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
    const FINE_GRAIN: cl_bitfield = 1 << 10;
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let e = Env::new();
        let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
        if caps == 0 {
            eprintln!("no SVM on this device");
            return;
        }
        let p = e.program(WIDE_SOURCE, std);
        let (wide, narrow) = (kernel(p, "wide"), kernel(p, "narrow"));
        let o = unsafe { clSVMAlloc(e.ctx, FINE_GRAIN, 8 * 8, 0) }.cast::<i64>();
        assert!(!o.is_null());
        check!(clSetKernelArgSVMPointer(wide, 0, o.cast()));
        let svm = |k: cl_kernel| {
            e.run(k, None, &[1], None);
            unsafe { std::slice::from_raw_parts(o, 5) }.to_vec()
        };
        let b = e.buffer_from(&[0i64; 8]);
        arg(narrow, 0, &b);
        let plain = |k: cl_kernel| {
            e.run(k, None, &[1], None);
            e.read::<i64>(b, 5)
        };
        // The initial values.
        assert_eq!(svm(wide), [7, -3, 0, 11, -5], "{std}: initial values");
        let big = [
            (1i64 << 32) + 5,
            -(1i64 << 32) - 2,
            (2i64 << 32) + 9,
            12,
            -6,
        ];
        assert_eq!(plain(narrow), big, "{std}: what the SVM launch wrote");
        assert_eq!(
            svm(wide),
            [0xffff_fff0, -9, 17, 13, -7],
            "{std}: what the buffer launch wrote"
        );
        unsafe { clSVMFree(e.ctx, o.cast()) };
        check!(clReleaseMemObject(b));
        check!(clReleaseKernel(wide));
        check!(clReleaseKernel(narrow));
        check!(clReleaseProgram(p));
    }
}

/// Program-scope variables of pointer type (issue 18): clspv 0.0.1 crashes (SIGSEGV) on every
/// one, with an address in its initializer or without one, in both addressing modes, before
/// any module exists (so there is no relocation to apply). A physical-addressing build
/// declares each scalar one `ulong` (compiler::pointer_members); the program, whose first
/// build crashes, is built in physical mode only. The values: the initializer's address until
/// the first store, stores kept across launches, reads and writes through it.
#[test]
fn pointer_variables() {
    let e = Env::new();
    let sources = [
        (
            "global int x[4] = {10, 11, 12, 13};\nglobal int *p = &x[2];\n\
             kernel void k(global int *o) { o[0] = *p; o[1] = p[1]; o[2] = x[2];\n\
             *p += 5; p = &x[0]; }",
            [[12, 13, 12], [10, 11, 17], [15, 11, 17]],
        ),
        (
            "global int x[4] = {10, 11, 12, 13};\nglobal int *p;\n\
             kernel void k(global int *o) { o[2] = p ? 1 : 0; if (!p) p = &x[1];\n\
             o[0] = *p; o[1] = p[2]; *p += 1; }",
            [[11, 13, 0], [12, 13, 1], [13, 13, 1]],
        ),
        (
            "constant int c[3] = {100, 101, 102};\nconstant int *constant cp = &c[1];\n\
             kernel void k(global int *o) { o[0] = *cp; o[1] = cp[1]; o[2] = cp[-1]; }",
            [[101, 102, 100], [101, 102, 100], [101, 102, 100]],
        ),
    ];
    for (src, want) in sources {
        for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
            let p = match build_program(e.ctx, e.dev, src, std) {
                Ok(p) => p,
                Err((code, log)) => panic!("{}: {std}\n{src}\n{log}", err_name(code)),
            };
            let k = kernel(p, "k");
            let out = e.buffer_from(&[0i32; 4]);
            arg(k, 0, &out);
            for round in &want[..2] {
                e.run(k, None, &[1], None);
                assert_eq!(&e.read::<i32>(out, 3)[..], round, "{std}\n{src}");
            }
            // The pointer set so far holds in a new kernel object's launch too.
            let again = kernel(p, "k");
            arg(again, 0, &out);
            e.run(again, None, &[1], None);
            assert_eq!(&e.read::<i32>(out, 3)[..], want[2], "{std}\n{src}");
            unsafe {
                clReleaseKernel(k);
                clReleaseKernel(again);
                clReleaseMemObject(out);
                clReleaseProgram(p);
            }
        }
    }
}

/// `constant` arrays of pointers to constant data: this clspv crashes on them in both
/// addressing modes ("Don't know how to handle updating user of __constant"), and no rewrite
/// takes them; the build fails (the process lives on) with a log that says why (it named only
/// the crash before).
#[test]
fn constant_pointer_arrays_fail_to_build_with_a_log_that_says_why() {
    let e = Env::new();
    let src = "constant int c[3] = {100, 101, 102};\n\
               constant int *constant cp[2] = {&c[0], &c[2]};\n\
               kernel void k(global int *o) { o[0] = *cp[0]; o[1] = *cp[1]; }";
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        match build_program(e.ctx, e.dev, src, std) {
            Ok(p) => {
                unsafe { clReleaseProgram(p) };
                panic!("{std}: built (clspv has learnt them: test the values)");
            }
            Err((code, log)) => {
                assert_eq!(code, CL_BUILD_PROGRAM_FAILURE, "{std}\n{log}");
                assert!(
                    log.contains("program-scope variables (or static locals) of pointer type"),
                    "{std}\n{log}"
                );
            }
        }
    }
}

/// One kernel per long-vector type: a variable array without and one with an initialiser,
/// each written at `idx` through a pointer and read whole, an initialised struct holding one
/// and an initialised `static` local of that struct, both updated.
fn long_vector_source(types: &[(&str, usize)], fp64: bool) -> String {
    let mut s = match fp64 {
        true => "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n".to_string(),
        false => String::new(),
    };
    for &(ty, w) in types {
        let t = format!("{ty}{w}");
        let (gi, si, pi) = (
            literal(ty, w, |c| 10 + c),
            literal(ty, w, |c| 20 + c),
            literal(ty, w, |c| 40 + c),
        );
        s += &format!(
            "global {t} g_{t}[2];\n\
             global {t} gi_{t}[2] = {{ ({t})(1), {gi} }};\n\
             typedef struct {{ char c; {t} i; }} s_{t};\n\
             global s_{t} s_{t}_var = {{ 3, {si} }};\n\
             kernel void k_{t}(global {t} *dest, global char *tags, global const {t} *src,\n\
             \x20                 uint idx) {{\n\
             \x20   static global s_{t} persistent = {{ 1, {pi} }};\n\
             \x20   g_{t}[0] = ({t})(5); g_{t}[1] = ({t})(6);\n\
             \x20   global {t} *p = g_{t} + idx;\n\
             \x20   *p = src[0];\n\
             \x20   dest[0] = g_{t}[0]; dest[1] = g_{t}[1];\n\
             \x20   global {t} *q = gi_{t} + idx;\n\
             \x20   *q = src[1];\n\
             \x20   dest[2] = gi_{t}[0]; dest[3] = gi_{t}[1];\n\
             \x20   dest[4] = s_{t}_var.i; dest[5] = persistent.i;\n\
             \x20   tags[0] = s_{t}_var.c; tags[1] = persistent.c;\n\
             \x20   s_{t}_var.i += ({t})(1); persistent.i += ({t})(2); persistent.c += 1;\n\
             }}\n"
        );
    }
    s
}

/// Program-scope arrays of 8- and 16-component vectors written through a pointer at an index
/// given at run time (the read of `a[1]` after `*(a + 1) = v` gave the value stored before:
/// clspv's long-vector lowering left it a second variable), and initialised arrays, structs
/// and `static` locals holding them (clspv crashed), across launches, for every type.
#[test]
fn long_vector_variables() {
    long_vectors("-cl-std=CL2.0");
}

#[test]
fn long_vector_variables_cl30() {
    long_vectors("-cl-std=CL3.0");
}

fn long_vectors(std: &str) {
    let e = Env::new();
    let fp64 = device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64");
    let types = long_vector_types(fp64);
    let p = e.program(&long_vector_source(&types, fp64), std);
    for &(ty, w) in &types {
        let t = format!("{ty}{w}");
        let k = kernel(p, &format!("k_{t}"));
        let size = component(ty, 0).len() * w;
        let dest = e.buffer_from(&vec![0u8; 6 * size]);
        let tags = e.buffer_from(&[0u8; 2]);
        let src = e.buffer_from(&vec![0u8; 2 * size]);
        arg(k, 0, &dest);
        arg(k, 1, &tags);
        arg(k, 2, &src);
        // The host's model of the initialised array.
        let mut gi = [vector(ty, w, |_| 1), vector(ty, w, |c| 10 + c)];
        for (launch, idx) in [1u32, 0, 1].into_iter().enumerate() {
            let l = launch as i64;
            let (src0, src1) = (
                vector(ty, w, |c| 100 + l + c),
                vector(ty, w, |c| 70 + l + c),
            );
            e.write(src, &[src0.clone(), src1.clone()].concat());
            arg(k, 3, &idx);
            e.run(k, None, &[1], Some(&[1]));
            let mut g = [vector(ty, w, |_| 5), vector(ty, w, |_| 6)];
            g[idx as usize] = src0;
            gi[idx as usize] = src1;
            let want = [
                g.concat(),
                gi.concat(),
                vector(ty, w, |c| 20 + c + l),
                vector(ty, w, |c| 40 + c + 2 * l),
            ]
            .concat();
            let got = e.read::<u8>(dest, 6 * size);
            for (n, what) in ["array", "initialised array", "struct, static local"]
                .iter()
                .enumerate()
            {
                let r = 2 * n * size..2 * (n + 1) * size;
                assert_eq!(got[r.clone()], want[r], "{std} {t} launch {launch}: {what}");
            }
            assert_eq!(e.read::<u8>(tags, 2), [3, 1 + l as u8], "{std} {t}");
        }
        check!(clReleaseMemObject(dest));
        check!(clReleaseMemObject(tags));
        check!(clReleaseMemObject(src));
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
}
