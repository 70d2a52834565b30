//! Program objects (spec 5.8.9 and the creation paths): every parameter of Tables 43 and 44
//! with both calls of the size protocol and every error the section lists, per-device build
//! state on a two-device program, binaries of executables, objects and libraries (also across
//! processes), IL programs, asynchronous builds with callbacks, the disk cache, and a compile
//! that crashes clspv.
//!
//! This file's process sees two devices (VKCL_DEVICE_COPIES=2: the first Vulkan device twice)
//! and its own disk cache directory; child processes (this test binary again, with
//! VKCL_TEST_CHILD naming what to do) check what a new process sees.
#[macro_use]
mod common;
use common::*;
use std::ffi::{c_char, c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::mpsc;

const CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT: u32 = 0x1;
const CL_PROGRAM_BINARY_TYPE_LIBRARY: u32 = 0x2;
const CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT: cl_uint = 0x116A;
const CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT: cl_uint = 0x116B;
const CL_BUILD_IN_PROGRESS: cl_int = -3;
const CL_DEVICE_IL_VERSION: cl_uint = 0x105B;
const CL_INVALID_BINARY: cl_int = -42;

const IL: &[u8] = include_bytes!("data/il_kernels.spv");

/// Two devices and a private cache directory for this process; call first in every test.
fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::env::set_var("VKCL_DEVICE_COPIES", "2");
        if std::env::var_os("VKCL_TEST_CHILD").is_none() {
            let dir = std::env::temp_dir().join(format!("vkcl-test-cache-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::env::set_var("VKCL_CACHE_DIR", &dir);
        }
    });
    setup();
}

fn cache_dir() -> std::path::PathBuf {
    std::env::var_os("VKCL_CACHE_DIR")
        .expect("set by init")
        .into()
}

/// The platform's devices (two under vkcl, maybe one elsewhere).
fn devices() -> Vec<cl_device_id> {
    init();
    let mut n = 0;
    check!(clGetDeviceIDs(
        platform(),
        CL_DEVICE_TYPE_ALL,
        0,
        null_mut(),
        &mut n
    ));
    let mut d = vec![null_mut(); n as usize];
    check!(clGetDeviceIDs(
        platform(),
        CL_DEVICE_TYPE_ALL,
        n,
        d.as_mut_ptr(),
        null_mut()
    ));
    d
}

/// A context on the first two devices, with a queue on each.
struct Two {
    ctx: cl_context,
    dev: [cl_device_id; 2],
    queue: [cl_command_queue; 2],
}

impl Two {
    fn new() -> Two {
        let d = devices();
        assert!(d.len() >= 2, "VKCL_DEVICE_COPIES=2 gives two devices");
        let dev = [d[0], d[1]];
        let mut err = 0;
        let ctx = unsafe { clCreateContext(null(), 2, dev.as_ptr(), None, null_mut(), &mut err) };
        assert_eq!(err, CL_SUCCESS);
        let queue = dev.map(|d| {
            let q = unsafe { clCreateCommandQueueWithProperties(ctx, d, null(), &mut err) };
            assert_eq!(err, CL_SUCCESS);
            q
        });
        Two { ctx, dev, queue }
    }
}

impl Drop for Two {
    fn drop(&mut self) {
        unsafe {
            for q in self.queue {
                clReleaseCommandQueue(q);
            }
            clReleaseContext(self.ctx);
        }
    }
}

fn source(ctx: cl_context, strings: &[&[u8]]) -> cl_program {
    let ptrs: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr().cast()).collect();
    let lens: Vec<usize> = strings.iter().map(|s| s.len()).collect();
    let mut err = 0;
    let p = unsafe {
        clCreateProgramWithSource(
            ctx,
            ptrs.len() as u32,
            ptrs.as_ptr(),
            lens.as_ptr(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    p
}

fn build(p: cl_program, devs: &[cl_device_id], opts: &str) -> cl_int {
    let o = CString::new(opts).unwrap();
    unsafe {
        clBuildProgram(
            p,
            devs.len() as u32,
            devs.as_ptr(),
            o.as_ptr(),
            None,
            null_mut(),
        )
    }
}

fn status(p: cl_program, d: cl_device_id) -> cl_int {
    build_val(p, d, CL_PROGRAM_BUILD_STATUS)
}

fn binary_type(p: cl_program, d: cl_device_id) -> u32 {
    build_val(p, d, CL_PROGRAM_BINARY_TYPE)
}

/// Runs `kernel(global int *out)` with one work-item on `q` and returns out[0].
fn run_one(ctx: cl_context, q: cl_command_queue, p: cl_program, name: &str) -> i32 {
    let k = kernel(p, name);
    let mut err = 0;
    let mut value = -1i32;
    let b = unsafe {
        clCreateBuffer(
            ctx,
            CL_MEM_COPY_HOST_PTR,
            4,
            (&mut value as *mut i32).cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    arg(k, 0, &b);
    let one = 1usize;
    check!(clEnqueueNDRangeKernel(
        q,
        k,
        1,
        null(),
        &one,
        null(),
        0,
        null(),
        null_mut()
    ));
    check!(clEnqueueReadBuffer(
        q,
        b,
        CL_TRUE,
        0,
        4,
        (&mut value as *mut i32).cast(),
        0,
        null(),
        null_mut()
    ));
    unsafe {
        clReleaseMemObject(b);
        clReleaseKernel(k);
    }
    value
}

/// A source no other test (or earlier run) has compiled: the compile is real, not cached.
fn fresh(body: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "// {} {} {nanos}\n{body}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs this test binary's test `name` again in a child process with `env`; returns its
/// success.
fn child(name: &str, env: &[(&str, &str)]) -> bool {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .envs(env.iter().copied())
        .env("VKCL_CACHE_DIR", cache_dir())
        .output()
        .expect("run the test binary");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        eprintln!("child {name} {env:?} failed:\n{text}");
    }
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    out.status.success()
}

const TWO_KERNELS: &str = "kernel void first(global int *o) { o[0] = VALUE; }\n\
                           kernel void second(global int *o) { o[0] = 2 * VALUE; }\n";

#[test]
fn table_43_every_program_info_parameter() {
    let t = Two::new();
    // Several strings, one with explicit length and an embedded NUL (stripped), one
    // NUL-terminated (length 0 is not allowed with explicit lengths, so all have lengths).
    let parts: [&[u8]; 3] = [b"#define VALUE 21\n", b"\0// nul\n", TWO_KERNELS.as_bytes()];
    let p = source(t.ctx, &parts);
    assert_eq!(program_val::<cl_uint>(p, CL_PROGRAM_REFERENCE_COUNT), 1);
    check!(clRetainProgram(p));
    assert_eq!(program_val::<cl_uint>(p, CL_PROGRAM_REFERENCE_COUNT), 2);
    check!(clReleaseProgram(p));
    assert_eq!(program_val::<cl_context>(p, CL_PROGRAM_CONTEXT), t.ctx);
    assert_eq!(program_val::<cl_uint>(p, CL_PROGRAM_NUM_DEVICES), 2);
    assert_eq!(
        bytes_to_vec::<cl_device_id>(&program_info(p, CL_PROGRAM_DEVICES)),
        t.dev
    );
    let expected = format!("#define VALUE 21\n// nul\n{TWO_KERNELS}");
    assert_eq!(program_str(p, CL_PROGRAM_SOURCE), expected);
    // CL_PROGRAM_IL of a source program: size 0 and the memory unchanged.
    let mut il = [0x5Au8; 8];
    let mut ret = 99;
    check!(clGetProgramInfo(
        p,
        CL_PROGRAM_IL,
        8,
        il.as_mut_ptr().cast(),
        &mut ret
    ));
    assert_eq!((ret, il), (0, [0x5A; 8]));
    // Nothing built: binary sizes 0, nothing written, and the executable queries refused.
    assert_eq!(
        bytes_to_vec::<usize>(&program_info(p, CL_PROGRAM_BINARY_SIZES)),
        [0, 0]
    );
    assert!(binaries(p).iter().all(|b| b.is_empty()));
    for q in [
        CL_PROGRAM_NUM_KERNELS,
        CL_PROGRAM_KERNEL_NAMES,
        CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT,
        CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT,
    ] {
        let mut size = 0;
        check_err!(
            clGetProgramInfo(p, q, 0, null_mut(), &mut size),
            CL_INVALID_PROGRAM_EXECUTABLE
        );
    }
    // Built for one of the two devices: the executable queries answer.
    assert_eq!(build(p, &t.dev[1..], ""), CL_SUCCESS);
    assert_eq!(program_val::<usize>(p, CL_PROGRAM_NUM_KERNELS), 2);
    let mut names: Vec<String> = program_str(p, CL_PROGRAM_KERNEL_NAMES)
        .split(';')
        .map(String::from)
        .collect();
    names.sort();
    assert_eq!(names, ["first", "second"]);
    assert_eq!(
        program_val::<cl_bool>(p, CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT),
        CL_FALSE
    );
    assert_eq!(
        program_val::<cl_bool>(p, CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT),
        CL_FALSE
    );
    let sizes: Vec<usize> = bytes_to_vec(&program_info(p, CL_PROGRAM_BINARY_SIZES));
    assert_eq!(sizes[0], 0, "no binary for the device not built");
    assert!(sizes[1] > 0);
    let bins = binaries(p);
    assert!(bins[0].is_empty() && bins[1].len() == sizes[1]);
    // Errors: bad name, short buffers, a handle that is not a program.
    let mut v = [0u8; 64];
    check_err!(
        clGetProgramInfo(p, 0x7777, 64, v.as_mut_ptr().cast(), null_mut()),
        CL_INVALID_VALUE
    );
    for q in [
        CL_PROGRAM_REFERENCE_COUNT,
        CL_PROGRAM_NUM_KERNELS,
        CL_PROGRAM_SOURCE,
        CL_PROGRAM_DEVICES,
        CL_PROGRAM_BINARY_SIZES,
        CL_PROGRAM_BINARIES,
    ] {
        check_err!(
            clGetProgramInfo(p, q, 1, v.as_mut_ptr().cast(), null_mut()),
            CL_INVALID_VALUE
        );
    }
    check_err!(
        clGetProgramInfo(
            null_mut(),
            CL_PROGRAM_REFERENCE_COUNT,
            4,
            v.as_mut_ptr().cast(),
            null_mut()
        ),
        CL_INVALID_PROGRAM
    );
    check_err!(
        clGetProgramInfo(
            t.ctx as cl_program,
            CL_PROGRAM_REFERENCE_COUNT,
            4,
            v.as_mut_ptr().cast(),
            null_mut()
        ),
        CL_INVALID_PROGRAM
    );
    check!(clReleaseProgram(p));
}

#[test]
fn table_44_every_build_info_parameter_and_its_transitions() {
    let t = Two::new();
    let d = t.dev[0];
    let p = source(t.ctx, &[TWO_KERNELS.as_bytes()]);
    // Before anything: NONE, empty options and log, no binary, no global variables.
    assert_eq!(status(p, d), CL_BUILD_NONE);
    assert_eq!(build_str(p, d, CL_PROGRAM_BUILD_OPTIONS), "");
    assert_eq!(build_str(p, d, CL_PROGRAM_BUILD_LOG), "");
    assert_eq!(binary_type(p, d), CL_PROGRAM_BINARY_TYPE_NONE);
    assert_eq!(
        build_val::<usize>(p, d, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE),
        0
    );
    // A failed build (VALUE undefined): ERROR, the options given, a log naming the problem.
    assert_eq!(build(p, &[d], "-w"), CL_BUILD_PROGRAM_FAILURE);
    assert_eq!(status(p, d), CL_BUILD_ERROR);
    assert_eq!(build_str(p, d, CL_PROGRAM_BUILD_OPTIONS), "-w");
    assert!(build_str(p, d, CL_PROGRAM_BUILD_LOG).contains("VALUE"));
    assert_eq!(binary_type(p, d), CL_PROGRAM_BINARY_TYPE_NONE);
    // A successful build: SUCCESS, EXECUTABLE.
    assert_eq!(build(p, &[d], "-DVALUE=3"), CL_SUCCESS);
    assert_eq!(status(p, d), CL_BUILD_SUCCESS);
    assert_eq!(build_str(p, d, CL_PROGRAM_BUILD_OPTIONS), "-DVALUE=3");
    assert_eq!(binary_type(p, d), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    // Then a compile of the same program: COMPILED_OBJECT (the last operation counts).
    let opts = c"-DVALUE=4";
    check!(clCompileProgram(
        p,
        1,
        &d,
        opts.as_ptr(),
        0,
        null(),
        null(),
        None,
        null_mut()
    ));
    assert_eq!(
        (status(p, d), binary_type(p, d)),
        (CL_BUILD_SUCCESS, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT)
    );
    assert_eq!(build_str(p, d, CL_PROGRAM_BUILD_OPTIONS), "-DVALUE=4");
    // Link into a library, then into an executable.
    let mut err = 0;
    let lib = unsafe {
        clLinkProgram(
            t.ctx,
            1,
            &d,
            c"-create-library".as_ptr(),
            1,
            &p,
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(
        (status(lib, d), binary_type(lib, d)),
        (CL_BUILD_SUCCESS, CL_PROGRAM_BINARY_TYPE_LIBRARY)
    );
    assert_eq!(
        build_str(lib, d, CL_PROGRAM_BUILD_OPTIONS),
        "-create-library"
    );
    let exe = unsafe { clLinkProgram(t.ctx, 1, &d, null(), 1, &lib, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(
        (status(exe, d), binary_type(exe, d)),
        (CL_BUILD_SUCCESS, CL_PROGRAM_BINARY_TYPE_EXECUTABLE)
    );
    assert_eq!(run_one(t.ctx, t.queue[0], exe, "second"), 8);
    // Errors: a device not in the program, bad name, short buffer, not a program.
    let mut v = [0u8; 64];
    check_err!(
        clGetProgramBuildInfo(
            exe,
            t.dev[1],
            CL_PROGRAM_BUILD_STATUS,
            4,
            v.as_mut_ptr().cast(),
            null_mut()
        ),
        CL_INVALID_DEVICE
    );
    check_err!(
        clGetProgramBuildInfo(
            exe,
            t.ctx as cl_device_id,
            CL_PROGRAM_BUILD_STATUS,
            4,
            v.as_mut_ptr().cast(),
            null_mut()
        ),
        CL_INVALID_DEVICE
    );
    check_err!(
        clGetProgramBuildInfo(exe, d, 0x7777, 64, v.as_mut_ptr().cast(), null_mut()),
        CL_INVALID_VALUE
    );
    for q in [
        CL_PROGRAM_BUILD_STATUS,
        CL_PROGRAM_BINARY_TYPE,
        CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
    ] {
        check_err!(
            clGetProgramBuildInfo(exe, d, q, 1, v.as_mut_ptr().cast(), null_mut()),
            CL_INVALID_VALUE
        );
    }
    check_err!(
        clGetProgramBuildInfo(
            null_mut(),
            d,
            CL_PROGRAM_BUILD_STATUS,
            4,
            v.as_mut_ptr().cast(),
            null_mut()
        ),
        CL_INVALID_PROGRAM
    );
    unsafe {
        clReleaseProgram(exe);
        clReleaseProgram(lib);
        clReleaseProgram(p);
    }
}

#[test]
fn each_device_keeps_its_own_build_state() {
    let t = Two::new();
    let p = source(t.ctx, &[TWO_KERNELS.as_bytes()]);
    assert_eq!(build(p, &t.dev[1..], "-DVALUE=2"), CL_SUCCESS);
    assert_eq!(
        status(p, t.dev[0]),
        CL_BUILD_NONE,
        "building device 1 leaves device 0 alone"
    );
    assert_eq!(status(p, t.dev[1]), CL_BUILD_SUCCESS);
    // A kernel needs an executable for one device only; it runs on the device that has it.
    assert_eq!(run_one(t.ctx, t.queue[1], p, "first"), 2);
    // Each device with its own options: each runs its own executable.
    assert_eq!(build(p, &t.dev[..1], "-DVALUE=1"), CL_SUCCESS);
    assert_eq!(
        build_str(p, t.dev[0], CL_PROGRAM_BUILD_OPTIONS),
        "-DVALUE=1"
    );
    assert_eq!(
        build_str(p, t.dev[1], CL_PROGRAM_BUILD_OPTIONS),
        "-DVALUE=2"
    );
    assert_eq!(run_one(t.ctx, t.queue[0], p, "first"), 1);
    assert_eq!(run_one(t.ctx, t.queue[1], p, "first"), 2);
    // A failed build of device 0 only: device 1 keeps its executable.
    assert_eq!(
        build(p, &t.dev[..1], "-DVALUE=undefined_name"),
        CL_BUILD_PROGRAM_FAILURE
    );
    assert_eq!(
        (status(p, t.dev[0]), status(p, t.dev[1])),
        (CL_BUILD_ERROR, CL_BUILD_SUCCESS)
    );
    assert_eq!(binary_type(p, t.dev[0]), CL_PROGRAM_BINARY_TYPE_NONE);
    assert_eq!(run_one(t.ctx, t.queue[1], p, "second"), 4);
    // Binaries per device: none for device 0 (its build failed), one for device 1. Both
    // devices are the same GPU here, so device 1's binary serves either.
    let bins = binaries(p);
    assert!(bins[0].is_empty() && !bins[1].is_empty());
    let (q, st, err) = from_binaries(t.ctx, &t.dev, &[&bins[1], &bins[1]]);
    assert_eq!((st, err), (vec![CL_SUCCESS; 2], CL_SUCCESS));
    assert_eq!(run_one(t.ctx, t.queue[0], q, "first"), 2);
    // An invalid binary for one device: that device's status says so.
    let (q2, st, err) = from_binaries(t.ctx, &t.dev, &[&bins[1], b"garbage"]);
    assert!(q2.is_null());
    assert_eq!(
        (st, err),
        (vec![CL_SUCCESS, CL_INVALID_BINARY], CL_INVALID_BINARY)
    );
    unsafe {
        clReleaseProgram(q);
        clReleaseProgram(p);
    }
}

#[test]
fn objects_and_libraries_round_trip_as_binaries() {
    let t = Two::new();
    let d = t.dev[0];
    let helper = source(t.ctx, &[b"int helper(int x) { return x * 5; }\n"]);
    let main = source(
        t.ctx,
        &[b"int helper(int x);\nkernel void k(global int *o) { o[0] = helper(3); }\n"],
    );
    for p in [helper, main] {
        check!(clCompileProgram(
            p,
            1,
            &d,
            null(),
            0,
            null(),
            null(),
            None,
            null_mut()
        ));
    }
    let mut err = 0;
    let lib = unsafe {
        clLinkProgram(
            t.ctx,
            1,
            &d,
            c"-create-library".as_ptr(),
            1,
            &helper,
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    // The object and the library come back from their binaries with their types, and link.
    let obj_bin = binaries(main).swap_remove(0);
    let lib_bin = binaries(lib).swap_remove(0);
    let (obj2, st, err) = from_binaries(t.ctx, &[d], &[&obj_bin]);
    assert_eq!((st, err), (vec![CL_SUCCESS], CL_SUCCESS));
    assert_eq!(binary_type(obj2, d), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    let (lib2, st, mut err) = from_binaries(t.ctx, &[d], &[&lib_bin]);
    assert_eq!((st, err), (vec![CL_SUCCESS], CL_SUCCESS));
    assert_eq!(binary_type(lib2, d), CL_PROGRAM_BINARY_TYPE_LIBRARY);
    let inputs = [obj2, lib2];
    let exe = unsafe {
        clLinkProgram(
            t.ctx,
            1,
            &d,
            null(),
            2,
            inputs.as_ptr(),
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    assert_eq!(run_one(t.ctx, t.queue[0], exe, "k"), 15);
    // clBuildProgram of a program made from an object binary links it into an executable...
    // (it needs the helper: a lone object fails to link, and says so).
    assert_eq!(build(obj2, &[d], ""), CL_BUILD_PROGRAM_FAILURE);
    assert_eq!(status(obj2, d), CL_BUILD_ERROR);
    // ...and a library binary that holds everything builds and runs.
    let whole = source(t.ctx, &[b"kernel void k(global int *o) { o[0] = 77; }\n"]);
    check!(clCompileProgram(
        whole,
        1,
        &d,
        null(),
        0,
        null(),
        null(),
        None,
        null_mut()
    ));
    let (whole2, _, err) = from_binaries(t.ctx, &[d], &[&binaries(whole)[0]]);
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(build(whole2, &[d], ""), CL_SUCCESS);
    assert_eq!(binary_type(whole2, d), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    assert_eq!(run_one(t.ctx, t.queue[0], whole2, "k"), 77);
    // clCompileProgram of a binary program is an error.
    check_err!(
        clCompileProgram(whole2, 1, &d, null(), 0, null(), null(), None, null_mut()),
        CL_INVALID_OPERATION
    );
    unsafe {
        for p in [helper, main, lib, obj2, lib2, exe, whole, whole2] {
            clReleaseProgram(p);
        }
    }
}

#[test]
fn an_executable_binary_runs_in_a_new_process() {
    init();
    if let Ok(path) = std::env::var("VKCL_TEST_CHILD_BINARY") {
        // The child: no compiler at all (a helper that exits at once), only the binary.
        init();
        let e = Env::new();
        let bin = std::fs::read(path).unwrap();
        let (p, st, err) = from_binaries(e.ctx, &[e.dev], &[&bin]);
        assert_eq!((st, err), (vec![CL_SUCCESS], CL_SUCCESS));
        assert_eq!(build(p, &[e.dev], ""), CL_SUCCESS);
        assert_eq!(run_one(e.ctx, e.queue, p, "second"), 2 * 4242);
        unsafe { clReleaseProgram(p) };
        return;
    }
    init();
    let e = Env::new();
    let p = source(e.ctx, &[fresh(TWO_KERNELS).as_bytes()]);
    assert_eq!(build(p, &[e.dev], "-DVALUE=4242"), CL_SUCCESS);
    let path = std::env::temp_dir().join(format!("vkcl-test-binary-{}", std::process::id()));
    std::fs::write(&path, &binaries(p)[0]).unwrap();
    let ok = child(
        "an_executable_binary_runs_in_a_new_process",
        &[
            ("VKCL_TEST_CHILD", "1"),
            ("VKCL_TEST_CHILD_BINARY", path.to_str().unwrap()),
            ("VKCL_CLSPV_HELPER", "/bin/false"),
            // No clspv library either (a machine given only binaries: the H100 lacked the
            // build tree's .clspv/, and the binary was refused as another compiler's).
            ("VKCL_CLSPV_LIBRARY", "/nonexistent/libclspv.so"),
            ("VKCL_CACHE", "0"),
        ],
    );
    let _ = std::fs::remove_file(path);
    assert!(ok);
    unsafe { clReleaseProgram(p) };
}

/// What the disk-cache children build: `fresh` source written to a file by the parent.
fn cache_child() {
    init();
    let e = Env::new();
    let src = std::fs::read(std::env::var("VKCL_TEST_CHILD_SOURCE").unwrap()).unwrap();
    let p = source(e.ctx, &[&src]);
    let code = build(p, &[e.dev], "-DVALUE=31");
    let expected: cl_int = std::env::var("VKCL_TEST_CHILD_EXPECT")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(code, expected, "{}", err_name(code));
    if code == CL_SUCCESS {
        assert_eq!(run_one(e.ctx, e.queue, p, "first"), 31);
    }
    unsafe { clReleaseProgram(p) };
}

#[test]
fn the_disk_cache_serves_new_processes_and_survives_corruption() {
    init();
    if std::env::var_os("VKCL_TEST_CHILD_SOURCE").is_some() {
        return cache_child();
    }
    let src = fresh(TWO_KERNELS);
    let path = std::env::temp_dir().join(format!("vkcl-test-source-{}", std::process::id()));
    std::fs::write(&path, &src).unwrap();
    let name = "the_disk_cache_serves_new_processes_and_survives_corruption";
    // The clspv library the ICD finds: beside its helper (an installed or carried build), or
    // the build tree's .clspv/.
    let exe = std::env::current_exe().unwrap();
    let library = [
        exe.parent()
            .and_then(|d| d.parent())
            .map(|d| d.join("libclspv.so")),
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".clspv/libclspv.so")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_file())
    .expect("a clspv library")
    .to_string_lossy()
    .into_owned();
    let path_s = path.to_str().unwrap();
    let run = |helper: &str, expect: cl_int| {
        let mut env = vec![("VKCL_TEST_CHILD", "1"), ("VKCL_TEST_CHILD_SOURCE", path_s)];
        let expect = expect.to_string();
        env.push(("VKCL_TEST_CHILD_EXPECT", &expect));
        if !helper.is_empty() {
            // No compiler, but the same clspv library: the cache key names it.
            env.push(("VKCL_CLSPV_HELPER", helper));
            env.push(("VKCL_CLSPV_LIBRARY", &library));
        }
        assert!(
            child(name, &env),
            "child with helper {helper:?} expecting {expect}"
        );
    };
    // Without a compiler, a source never built cannot build.
    run("/bin/false", CL_COMPILER_NOT_AVAILABLE);
    // Built once (with the compiler), a new process builds it from the cache without one.
    run("", CL_SUCCESS);
    run("/bin/false", CL_SUCCESS);
    // Every cache entry corrupted: detected and not used (no compiler: the build fails), then
    // rebuilt by a process that has the compiler, and served again.
    let entries: Vec<_> = std::fs::read_dir(cache_dir().join("clspv"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!entries.is_empty());
    for entry in &entries {
        let mut bytes = std::fs::read(entry).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF;
        std::fs::write(entry, bytes).unwrap();
    }
    run("/bin/false", CL_COMPILER_NOT_AVAILABLE);
    run("", CL_SUCCESS);
    run("/bin/false", CL_SUCCESS);
    // And a truncated entry, likewise.
    for entry in std::fs::read_dir(cache_dir().join("clspv")).unwrap() {
        let entry = entry.unwrap().path();
        let bytes = std::fs::read(&entry).unwrap();
        std::fs::write(&entry, &bytes[..bytes.len() / 2]).unwrap();
    }
    run("/bin/false", CL_COMPILER_NOT_AVAILABLE);
    let _ = std::fs::remove_file(path);
}

fn il_program(ctx: cl_context, il: &[u8]) -> (cl_program, cl_int) {
    let mut err = 0;
    let p = unsafe { clCreateProgramWithIL(ctx, il.as_ptr().cast(), il.len(), &mut err) };
    (p, err)
}

/// Whether the SPIR-V translator IL programs need is installed (ci/setup.sh installs it).
/// Without it, the device must not claim IL support, and IL programs are refused.
fn translator_installed(e: &Env) -> bool {
    let found = std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p)
            .any(|d| d.join("llvm-spirv-15").is_file() || d.join("llvm-spirv").is_file())
    });
    if !found {
        assert!(!device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_il_program"));
        assert_eq!(device_str(e.dev, CL_DEVICE_IL_VERSION), "");
        let (p, err) = il_program(e.ctx, IL);
        assert!(p.is_null());
        assert_eq!(err, CL_INVALID_OPERATION);
    }
    found
}

#[test]
fn il_programs_build_compile_link_and_run() {
    init();
    let e = Env::new();
    if !translator_installed(&e) {
        return;
    }
    let versions = device_str(e.dev, CL_DEVICE_IL_VERSION);
    assert!(versions.split(' ').any(|v| v == "SPIR-V_1.0"), "{versions}");
    assert!(device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_il_program"));
    let khr = unsafe {
        clGetExtensionFunctionAddressForPlatform(platform(), c"clCreateProgramWithILKHR".as_ptr())
    };
    assert!(!khr.is_null());
    let (p, err) = il_program(e.ctx, IL);
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    assert_eq!(program_info(p, CL_PROGRAM_IL), IL);
    assert_eq!(program_str(p, CL_PROGRAM_SOURCE), "");
    assert_eq!(status(p, e.dev), CL_BUILD_NONE);
    assert_eq!(build(p, &[e.dev], ""), CL_SUCCESS);
    let mut names: Vec<String> = program_str(p, CL_PROGRAM_KERNEL_NAMES)
        .split(';')
        .map(String::from)
        .collect();
    names.sort();
    assert_eq!(names, ["block_sum", "saxpy"]);
    // saxpy: y = 2x + y.
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let (bx, by) = (e.buffer_from(&x), e.buffer_from(&vec![1.0f32; 64]));
    let k = kernel(p, "saxpy");
    arg(k, 0, &bx);
    arg(k, 1, &by);
    arg(k, 2, &2.0f32);
    e.run(k, None, &[64], None);
    let y = e.read::<f32>(by, 64);
    assert!(
        y.iter()
            .enumerate()
            .all(|(i, &v)| v == 2.0 * i as f32 + 1.0),
        "{y:?}"
    );
    // block_sum: sums of 16-element blocks through local memory and barriers.
    let data: Vec<i32> = (0..64).collect();
    let (bin, bout) = (e.buffer_from(&data), e.buffer_from(&[0i32; 4]));
    let k2 = kernel(p, "block_sum");
    arg(k2, 0, &bin);
    arg(k2, 1, &bout);
    arg_local(k2, 2, 16 * 4);
    e.run(k2, None, &[64], Some(&[16]));
    let expected: Vec<i32> = (0..4).map(|b| (b * 16..b * 16 + 16).sum()).collect();
    assert_eq!(e.read::<i32>(bout, 4), expected);
    // The IL program compiles to an object that links.
    let (p2, _) = il_program(e.ctx, IL);
    check!(clCompileProgram(
        p2,
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
        binary_type(p2, e.dev),
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    );
    let mut err = 0;
    let linked =
        unsafe { clLinkProgram(e.ctx, 1, &e.dev, null(), 1, &p2, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(program_val::<usize>(linked, CL_PROGRAM_NUM_KERNELS), 2);
    // Malformed IL: CL_INVALID_VALUE, and nothing else breaks.
    let mut flipped = IL.to_vec();
    flipped[0] ^= 0xFF;
    let mut garbage = IL[..20].to_vec();
    garbage.extend_from_slice(&[0xFF; 64]);
    for bad in [
        &flipped[..],
        &IL[..IL.len() - 3],
        &garbage[..],
        b"not spirv at all",
    ] {
        let (q, err) = il_program(e.ctx, bad);
        assert!(q.is_null());
        assert_eq!(err, CL_INVALID_VALUE, "{}", err_name(err));
    }
    let (q, err) = il_program(e.ctx, &[]);
    assert!(q.is_null() && err == CL_INVALID_VALUE);
    unsafe {
        for k in [k, k2] {
            clReleaseKernel(k);
        }
        for m in [bx, by, bin, bout] {
            clReleaseMemObject(m);
        }
        for p in [p, p2, linked] {
            clReleaseProgram(p);
        }
    }
}

unsafe extern "C" fn notify_channel(p: cl_program, user_data: *mut c_void) {
    let tx = unsafe { &*(user_data as *const mpsc::Sender<(cl_program, std::thread::ThreadId)>) };
    tx.send((p, std::thread::current().id())).unwrap();
}

#[test]
fn builds_with_a_callback_are_asynchronous() {
    init();
    let e = Env::new();
    let (tx, rx) = mpsc::channel::<(cl_program, std::thread::ThreadId)>();
    // The callbacks' sender is leaked, not borrowed from this frame: `send` still wakes the
    // receiver after the message is in the channel, so a callback may be inside it when this
    // test has its last message and returns (the CI run's SIGSEGV in `notify_channel`).
    let ud = Box::into_raw(Box::new(tx)) as *mut c_void;
    let me = std::thread::current().id();
    // clBuildProgram returns while the (real, uncached) compile runs.
    let p = source(
        e.ctx,
        &[fresh("kernel void first(global int *o) { o[0] = 9; }").as_bytes()],
    );
    check!(clBuildProgram(
        p,
        1,
        &e.dev,
        null(),
        Some(notify_channel),
        ud
    ));
    assert_eq!(status(p, e.dev), CL_BUILD_IN_PROGRESS);
    let mut err = 0;
    assert!(unsafe { clCreateKernel(p, c"first".as_ptr(), &mut err) }.is_null());
    assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE);
    check_err!(
        clBuildProgram(p, 1, &e.dev, null(), None, null_mut()),
        CL_INVALID_OPERATION
    );
    let (got, thread) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("callback");
    assert_eq!(got, p);
    assert_ne!(thread, me, "the callback runs on another thread");
    assert_eq!(status(p, e.dev), CL_BUILD_SUCCESS);
    assert_eq!(run_one(e.ctx, e.queue, p, "first"), 9);
    // A failing asynchronous build: clBuildProgram succeeds, the status and log tell.
    let bad = source(
        e.ctx,
        &[fresh("kernel void k(global int *o) { o[0] = nope; }").as_bytes()],
    );
    check!(clBuildProgram(
        bad,
        1,
        &e.dev,
        null(),
        Some(notify_channel),
        ud
    ));
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("callback");
    assert_eq!(status(bad, e.dev), CL_BUILD_ERROR);
    assert!(build_str(bad, e.dev, CL_PROGRAM_BUILD_LOG).contains("nope"));
    // Compile and link with callbacks; the link's callback gets the program it returned.
    let obj = source(
        e.ctx,
        &[fresh("kernel void first(global int *o) { o[0] = 10; }").as_bytes()],
    );
    check!(clCompileProgram(
        obj,
        1,
        &e.dev,
        null(),
        0,
        null(),
        null(),
        Some(notify_channel),
        ud
    ));
    assert_eq!(
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .expect("callback")
            .0,
        obj
    );
    assert_eq!(
        binary_type(obj, e.dev),
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    );
    let linked = unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            null(),
            1,
            &obj,
            Some(notify_channel),
            ud,
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert!(!linked.is_null());
    assert_eq!(
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .expect("callback")
            .0,
        linked
    );
    assert_eq!(run_one(e.ctx, e.queue, linked, "first"), 10);
    // user_data without a callback is invalid.
    check_err!(
        clBuildProgram(p, 1, &e.dev, null(), None, ud),
        CL_INVALID_VALUE
    );
    unsafe {
        for p in [p, bad, obj, linked] {
            clReleaseProgram(p);
        }
    }
}

#[test]
fn a_compile_that_crashes_clspv_fails_cleanly_and_the_next_build_works() {
    init();
    let e = Env::new();
    // clspv 0.0.1 crashes (a signal in the helper) on the work-group collectives of OpenCL C
    // 2.0: vkcl has its own (compiler::collectives), which the parenthesised name bypasses.
    // (It crashed on vector fdim too, which vkcl now compiles one component at a time.)
    let crash = fresh("kernel void k(global int *a) { a[0] = (work_group_reduce_add)(a[1]); }");
    let p = source(e.ctx, &[crash.as_bytes()]);
    assert_eq!(
        build(p, &[e.dev], "-cl-std=CL2.0"),
        CL_BUILD_PROGRAM_FAILURE
    );
    assert_eq!(status(p, e.dev), CL_BUILD_ERROR);
    let log = build_str(p, e.dev, CL_PROGRAM_BUILD_LOG);
    assert!(
        log.contains("clspv") && (log.contains("signal") || log.contains("exit")),
        "{log}"
    );
    let q = source(
        e.ctx,
        &[fresh("kernel void first(global int *o) { o[0] = 5; }").as_bytes()],
    );
    assert_eq!(build(q, &[e.dev], ""), CL_SUCCESS);
    assert_eq!(run_one(e.ctx, e.queue, q, "first"), 5);
    unsafe {
        clReleaseProgram(p);
        clReleaseProgram(q);
    }
}

#[test]
fn builtin_kernels_do_not_exist() {
    init();
    let e = Env::new();
    let mut err = 0;
    let p = unsafe {
        clCreateProgramWithBuiltInKernels(e.ctx, 1, &e.dev, c"anything".as_ptr(), &mut err)
    };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    check!(clUnloadPlatformCompiler(platform()));
    // The compiler comes back after unloading.
    let q = source(e.ctx, &[b"kernel void first(global int *o) { o[0] = 6; }"]);
    assert_eq!(build(q, &[e.dev], ""), CL_SUCCESS);
    assert_eq!(run_one(e.ctx, e.queue, q, "first"), 6);
    unsafe { clReleaseProgram(q) };
}

#[test]
fn specialization_constants_of_il_programs() {
    init();
    let e = Env::new();
    if !translator_installed(&e) {
        return;
    }
    // tests/data/spec_constants.spvasm: o[i] = o[i] * C7 + i + (B3 ? 1 : 0), C7 (SpecId 7, a
    // uint) defaults to 12345 and B3 (SpecId 3, a bool) to true.
    let il: &[u8] = include_bytes!("data/spec_constants.spv");
    let run = |p: cl_program| {
        let b = e.buffer_from(&[1i32, 2, 3, 4]);
        let k = kernel(p, "scale");
        arg(k, 0, &b);
        e.run(k, None, &[4], None);
        let v = e.read::<i32>(b, 4);
        unsafe {
            clReleaseKernel(k);
            clReleaseMemObject(b);
        }
        v
    };
    let (p, err) = il_program(e.ctx, il);
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(build(p, &[e.dev], ""), CL_SUCCESS);
    assert_eq!(run(p), [12346, 24692, 37038, 49384], "the defaults");
    let (c7, off) = (3u32, 0u8);
    check!(clSetProgramSpecializationConstant(
        p,
        7,
        4,
        (&c7 as *const u32).cast()
    ));
    check!(clSetProgramSpecializationConstant(
        p,
        3,
        1,
        (&off as *const u8).cast()
    ));
    assert_eq!(build(p, &[e.dev], ""), CL_SUCCESS);
    assert_eq!(run(p), [3, 7, 11, 15], "the values set");
    // Errors: unknown id, wrong size, NULL value, a program not made from IL.
    check_err!(
        clSetProgramSpecializationConstant(p, 99, 4, (&c7 as *const u32).cast()),
        CL_INVALID_SPEC_ID
    );
    check_err!(
        clSetProgramSpecializationConstant(p, 7, 8, (&c7 as *const u32).cast()),
        CL_INVALID_VALUE
    );
    check_err!(
        clSetProgramSpecializationConstant(p, 7, 4, null()),
        CL_INVALID_VALUE
    );
    let s = source(e.ctx, &[b"kernel void k(global int *o) {}"]);
    check_err!(
        clSetProgramSpecializationConstant(s, 7, 4, (&c7 as *const u32).cast()),
        CL_INVALID_PROGRAM
    );
    unsafe {
        clReleaseProgram(p);
        clReleaseProgram(s);
    }
}

/// Two compiled objects that both get vkcl's math library (each names `sin`: pyopencl's
/// test_compile_link has `value_sink` in both) link: the library's program-scope tables are
/// `static`, so they are not defined twice ("symbol multiply defined" before).
#[test]
fn objects_that_both_get_the_math_library_link() {
    let t = Two::new();
    let d = t.dev[0];
    let helper = source(
        t.ctx,
        &[b"int value_sink(int x) { return x + (int)sin(0.0f); }\n"],
    );
    let main = source(
        t.ctx,
        &[b"int value_sink(int x);\nkernel void k(global int *o) { o[0] = value_sink(3) * 5; }\n"],
    );
    for p in [helper, main] {
        check!(clCompileProgram(
            p,
            1,
            &d,
            null(),
            0,
            null(),
            null(),
            None,
            null_mut()
        ));
    }
    let inputs = [helper, main];
    let mut err = 0;
    let exe = unsafe {
        clLinkProgram(
            t.ctx,
            1,
            &d,
            null(),
            2,
            inputs.as_ptr(),
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    assert_eq!(run_one(t.ctx, t.queue[0], exe, "k"), 15);
}
