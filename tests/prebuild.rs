//! Kernels made ready at build time (issue 21, src/core/prebuild.rs): launches record the
//! specialisations they made pipelines for in the disk cache, a new process building the same
//! source makes those pipelines ahead of its first launch (and kernels that declare their
//! work-group size, without any record), kernel objects of one name share them, and programs
//! released, rebuilt or left behind at exit while that runs in the background are safe.
//!
//! This file's process has its own disk cache directory; child processes (this test binary
//! again, with VKCL_TEST_CHILD naming what to do) show what a new process does, through
//! vkcl's `launch` log (VKCL_LOG=launch=debug: each pipeline made, by a launch or ahead of
//! launches).
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

/// A private cache directory for this process; call first in every test.
fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("VKCL_TEST_CHILD").is_none() {
            let dir = std::env::temp_dir().join(format!("vkcl-prebuild-{}", std::process::id()));
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

/// A source no earlier run has compiled (so that no record of an earlier run applies).
fn fresh(body: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("// {} {nanos}\n{body}", std::process::id())
}

/// Runs this binary's test `name` in a child process with `env` and the `launch` log on;
/// returns what it wrote (asserting that it passed).
fn child(name: &str, env: &[(&str, &str)]) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .envs(env.iter().copied())
        .env("VKCL_TEST_CHILD", "1")
        .env("VKCL_CACHE_DIR", cache_dir())
        .env("VKCL_LOG", "launch=debug,cache=debug")
        .output()
        .expect("run the test binary");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "child {name} failed:\n{text}"
    );
    text
}

/// The log lines of pipelines made for kernel `name`.
fn made<'a>(log: &'a str, name: &str) -> Vec<&'a str> {
    let prefix = format!("[launch] {name}: pipeline ");
    log.lines().filter(|l| l.contains(&prefix)).collect()
}

const SCAN: &str = "kernel void scan(global const int *in, global int *out, local int *tmp) {\n\
    uint l = get_local_id(0);\n\
    tmp[l] = in[get_global_id(0)];\n\
    barrier(CLK_LOCAL_MEM_FENCE);\n\
    int s = 0;\n\
    for (uint i = 0; i <= l; i++) s += tmp[i];\n\
    out[get_global_id(0)] = s;\n\
}\n\
kernel void other(global int *out) { out[get_global_id(0)] = 7; }\n";

/// Builds the source in VKCL_TEST_SOURCE, waits (so that a prebuild has time to finish), then
/// runs `scan` with work-groups of 32 over 64 items, twice through two kernel objects, and
/// checks the inclusive sums per group.
fn scan_child() {
    let e = Env::new();
    let src = std::fs::read_to_string(std::env::var("VKCL_TEST_SOURCE").unwrap()).unwrap();
    let p = e.program(&src, "");
    std::thread::sleep(std::time::Duration::from_millis(
        std::env::var("VKCL_TEST_WAIT_MS").map_or(0, |v| v.parse().unwrap()),
    ));
    let input: Vec<i32> = (0..64).collect();
    let expected: Vec<i32> = (0..64)
        .map(|i: i32| (i - i % 32..=i).sum::<i32>())
        .collect();
    for _ in 0..2 {
        let k = kernel(p, "scan");
        let a = e.buffer_from(&input);
        let b = e.buffer_from(&[0i32; 64]);
        arg(k, 0, &a);
        arg(k, 1, &b);
        arg_local(k, 2, 32 * 4);
        e.run(k, None, &[64], Some(&[32]));
        assert_eq!(e.read::<i32>(b, 64), expected);
        unsafe {
            clReleaseMemObject(a);
            clReleaseMemObject(b);
            clReleaseKernel(k);
        }
    }
    unsafe { clReleaseProgram(p) };
}

#[test]
fn a_new_process_makes_the_pipelines_earlier_launches_used_before_its_first_launch() {
    init();
    if std::env::var_os("VKCL_TEST_SOURCE").is_some() {
        return scan_child();
    }
    let path = std::env::temp_dir().join(format!("vkcl-prebuild-src-{}", std::process::id()));
    std::fs::write(&path, fresh(SCAN)).unwrap();
    let name = "a_new_process_makes_the_pipelines_earlier_launches_used_before_its_first_launch";
    let source = [("VKCL_TEST_SOURCE", path.to_str().unwrap())];
    // The first process: no record, and `scan` has a __local argument, so its first launch
    // makes the pipeline (one: the second kernel object shares the first's) and records it.
    let first = child(name, &source);
    let lines = made(&first, "scan");
    assert_eq!(lines.len(), 1, "{first}");
    assert!(lines[0].contains("by a launch"), "{first}");
    // The specialisation: the __local array's 32 elements and the work-group size 32.
    assert!(
        lines[0].contains("32)") && lines[0].contains(", 1), "),
        "{first}"
    );
    let records = std::fs::read_dir(cache_dir().join("launches"))
        .unwrap()
        .count();
    assert!(records >= 1, "no record of the launches in the disk cache");
    // A new process: the same pipeline is made ahead of the launches, which then make none.
    let wait = [source[0], ("VKCL_TEST_WAIT_MS", "1000")];
    let second = child(name, &wait);
    let lines = made(&second, "scan");
    assert_eq!(lines.len(), 1, "{second}");
    assert!(lines[0].contains("ahead of launches"), "{second}");
    // Without prebuilding, the launch makes it as before.
    let off = [source[0], ("VKCL_PREBUILD", "0")];
    let third = child(name, &off);
    let lines = made(&third, "scan");
    assert!(
        lines.len() == 1 && lines[0].contains("by a launch"),
        "{third}"
    );
    let _ = std::fs::remove_file(path);
}

const DECLARED: &str = "kernel __attribute__((reqd_work_group_size(8, 2, 1)))\n\
void ids(global uint *out) {\n\
    uint i = get_global_id(1) * get_global_size(0) + get_global_id(0);\n\
    out[i] = get_local_id(1) * 100 + get_local_id(0) + 1000 * get_group_id(0);\n\
}\n";

fn declared_child() {
    let e = Env::new();
    let src = std::fs::read_to_string(std::env::var("VKCL_TEST_SOURCE").unwrap()).unwrap();
    let p = e.program(&src, "");
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let k = kernel(p, "ids");
    let b = e.buffer_from(&[0u32; 64]);
    arg(k, 0, &b);
    // NULL local size: the required one.
    e.run(k, None, &[16, 4], None);
    let expected: Vec<u32> = (0..64)
        .map(|i| {
            let (x, y) = (i % 16, i / 16);
            (y % 2) * 100 + x % 8 + 1000 * (x / 8)
        })
        .collect();
    assert_eq!(e.read::<u32>(b, 64), expected);
    unsafe {
        clReleaseMemObject(b);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

#[test]
fn a_kernel_that_declares_its_work_group_size_is_made_ready_without_a_record() {
    init();
    if std::env::var_os("VKCL_TEST_SOURCE").is_some() {
        return declared_child();
    }
    let path = std::env::temp_dir().join(format!("vkcl-prebuild-decl-{}", std::process::id()));
    std::fs::write(&path, fresh(DECLARED)).unwrap();
    let name = "a_kernel_that_declares_its_work_group_size_is_made_ready_without_a_record";
    let log = child(name, &[("VKCL_TEST_SOURCE", path.to_str().unwrap())]);
    let lines = made(&log, "ids");
    assert_eq!(lines.len(), 1, "{log}");
    // (clspv writes a required size into the module: the pipeline has no specialisation.)
    assert!(lines[0].contains("ahead of launches"), "{log}");
    let _ = std::fs::remove_file(path);
}

/// Programs whose kernels are being made in the background: released at once, released
/// after creating a kernel, rebuilt, and their kernels launched at once (the launch waits for
/// the pipeline or makes it); every result checked.
#[test]
fn programs_released_rebuilt_or_launched_while_their_kernels_are_made() {
    init();
    let e = Env::new();
    for round in 0..6 {
        let src = fresh(&DECLARED.replace("1000", &format!("{}", 1000 + round)));
        // Released right after the build.
        let p = e.program(&src, "");
        unsafe { clReleaseProgram(p) };
        // Rebuilt (no kernel attached) while the first build's prebuild may run.
        let p = e.program(&src, "");
        check!(clBuildProgram(
            p,
            1,
            &e.dev,
            c"-DUNUSED=1".as_ptr(),
            None,
            null_mut()
        ));
        // Launched at once, through a kernel that outlives the program's handle.
        let k = kernel(p, "ids");
        unsafe { clReleaseProgram(p) };
        let b = e.buffer_from(&[0u32; 64]);
        arg(k, 0, &b);
        let global = [16usize, 4];
        check!(clEnqueueNDRangeKernel(
            e.queue,
            k,
            2,
            null(),
            global.as_ptr(),
            null(),
            0,
            null(),
            null_mut()
        ));
        let out = e.read::<u32>(b, 64);
        assert_eq!(out[9], 1 + 1000 + round as u32, "round {round}");
        assert_eq!(out[16 + 8], 100 + 1000 + round as u32, "round {round}");
        unsafe {
            clReleaseMemObject(b);
            clReleaseKernel(k);
        }
    }
}

fn exit_child() {
    let e = Env::new();
    let src = std::fs::read_to_string(std::env::var("VKCL_TEST_SOURCE").unwrap()).unwrap();
    // Not released: the test returns, and the process exits, while the prebuild may still be
    // inside the driver.
    let _program = e.program(&src, "");
    std::mem::forget(e);
}

#[test]
fn a_process_that_exits_while_its_kernels_are_made_exits_cleanly() {
    init();
    if std::env::var_os("VKCL_TEST_SOURCE").is_some() {
        return exit_child();
    }
    let path = std::env::temp_dir().join(format!("vkcl-prebuild-exit-{}", std::process::id()));
    let many: String = (0..8)
        .map(|i| DECLARED.replace("void ids", &format!("void ids{i}")))
        .collect();
    std::fs::write(&path, fresh(&many)).unwrap();
    let name = "a_process_that_exits_while_its_kernels_are_made_exits_cleanly";
    child(name, &[("VKCL_TEST_SOURCE", path.to_str().unwrap())]);
    let _ = std::fs::remove_file(path);
}

/// Launches `other`, then `scan`, each making its pipeline, and exits at once.
fn two_launches_child() {
    let e = Env::new();
    let src = std::fs::read_to_string(std::env::var("VKCL_TEST_SOURCE").unwrap()).unwrap();
    let p = e.program(&src, "");
    let b = e.buffer_from(&[0i32; 64]);
    let other = kernel(p, "other");
    arg(other, 0, &b);
    e.run(other, None, &[64], None);
    let out = e.buffer_from(&[0i32; 32]);
    let scan = kernel(p, "scan");
    arg(scan, 0, &b);
    arg(scan, 1, &out);
    arg_local(scan, 2, 32 * 4);
    e.run(scan, None, &[32], Some(&[32]));
    assert_eq!(e.read::<i32>(b, 1), vec![7]);
}

#[test]
fn a_short_process_leaves_every_pipeline_it_made_in_the_disk_cache() {
    init();
    if std::env::var_os("VKCL_TEST_SOURCE").is_some() {
        return two_launches_child();
    }
    let path = std::env::temp_dir().join(format!("vkcl-prebuild-two-{}", std::process::id()));
    std::fs::write(&path, fresh(SCAN)).unwrap();
    let name = "a_short_process_leaves_every_pipeline_it_made_in_the_disk_cache";
    let env = [
        ("VKCL_TEST_SOURCE", path.to_str().unwrap()),
        ("VKCL_PREBUILD", "0"),
    ];
    // The first pipeline's save is at once; the second comes within a second of it, so its
    // save is put off, and the process exits before then: it is saved at exit.
    let log = child(name, &env);
    let last_made = made(&log, "scan");
    assert_eq!(last_made.len(), 1, "{log}");
    let made_at = log.find(last_made[0]).unwrap();
    let saved_at = log.rfind("pipeline cache saved");
    assert!(saved_at.is_some_and(|at| at > made_at), "{log}");
    let _ = std::fs::remove_file(path);
}

/// Runs `scan` of program `p` over 64 items in groups of 32 on `input`; returns the sums.
fn scan_once(e: &Env, p: cl_program, input: &[i32]) -> Vec<i32> {
    let k = kernel(p, "scan");
    let a = e.buffer_from(input);
    let b = e.buffer_from(&[0i32; 64]);
    arg(k, 0, &a);
    arg(k, 1, &b);
    arg_local(k, 2, 32 * 4);
    e.run(k, None, &[64], Some(&[32]));
    let out = e.read::<i32>(b, 64);
    unsafe {
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseKernel(k);
    }
    out
}

/// The inclusive sums per group of 32 of `input`, each term times `factor`.
fn scan_expected(input: &[i32], factor: i32) -> Vec<i32> {
    (0..64)
        .map(|i| input[i - i % 32..=i].iter().map(|v| v * factor).sum())
        .collect()
}

/// Programs of different sources that clspv makes into the same module (here: differing in a
/// comment), one after another and both alive at once, then one of different code; every
/// result checked.
fn shared_child() {
    let e = Env::new();
    let input: Vec<i32> = (0..64).map(|i| i * 3 - 50).collect();
    let other: Vec<i32> = (0..64).map(|i| 7 - i).collect();
    let a = e.program(&format!("// first\n{SCAN}"), "");
    assert_eq!(scan_once(&e, a, &input), scan_expected(&input, 1));
    unsafe { clReleaseProgram(a) };
    let b = e.program(&format!("// second\n{SCAN}"), "");
    assert_eq!(scan_once(&e, b, &other), scan_expected(&other, 1));
    let c = e.program(&format!("// third\n{SCAN}"), "");
    for _ in 0..2 {
        assert_eq!(scan_once(&e, c, &input), scan_expected(&input, 1));
        assert_eq!(scan_once(&e, b, &input), scan_expected(&input, 1));
    }
    let d = e.program(&SCAN.replace("s += tmp[i]", "s += 2 * tmp[i]"), "");
    assert_eq!(scan_once(&e, d, &other), scan_expected(&other, 2));
    assert_eq!(scan_once(&e, b, &other), scan_expected(&other, 1));
    unsafe {
        clReleaseProgram(b);
        clReleaseProgram(c);
        clReleaseProgram(d);
    }
}

/// Issue 16: c11_atomics' fetch tests build 120 programs per type that clspv makes into 36
/// distinct modules; kernels of identical SPIR-V share their pipelines, so lavapipe compiles
/// each once (at its first dispatch) instead of once per program.
#[test]
fn programs_of_identical_spirv_share_their_pipelines() {
    init();
    if std::env::var_os("VKCL_TEST_SHARE").is_some() {
        return shared_child();
    }
    let name = "programs_of_identical_spirv_share_their_pipelines";
    let log = child(name, &[("VKCL_TEST_SHARE", "1")]);
    // One pipeline for the three programs of one module, one for the fourth.
    let lines = made(&log, "scan");
    assert_eq!(lines.len(), 2, "{log}");
    assert!(
        log.contains("scan: module and pipelines shared with an earlier kernel"),
        "{log}"
    );
}
