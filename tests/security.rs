//! What another user of the machine, or the application's environment, must not be able to
//! steer (issue 17, item 9): the folder of clCompileProgram's embedded headers, and which
//! compiler helper runs.
#[macro_use]
mod common;
use common::*;
use std::ffi::{c_char, CString};
use std::ptr::{null, null_mut};

const HEADER_USER: &str = r#"
#include "good.h"
#if __has_include("planted.h")
#include "planted.h"
#endif
kernel void value(global int *out) { out[0] = VALUE; }
"#;

/// The headers' folder is new and private: a folder planted in advance under the name vkcl
/// once used (`<tmp>/vkcl-headers-<pid>-<n>`) is neither used nor written.
#[test]
fn embedded_headers_go_to_a_new_private_folder() {
    setup();
    let e = Env::new();
    let tmp = std::env::temp_dir();
    let planted: Vec<_> = (0..8)
        .map(|n| tmp.join(format!("vkcl-headers-{}-{n}", std::process::id())))
        .collect();
    for dir in &planted {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("planted.h"), "#undef VALUE\n#define VALUE 666\n").unwrap();
    }
    let mut err = 0;
    let header_src = "#define VALUE 1\n";
    let (hp, hl) = (header_src.as_ptr() as *const c_char, header_src.len());
    let header = unsafe { clCreateProgramWithSource(e.ctx, 1, &hp, &hl, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let (sp, sl) = (HEADER_USER.as_ptr() as *const c_char, HEADER_USER.len());
    let p = unsafe { clCreateProgramWithSource(e.ctx, 1, &sp, &sl, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let name = CString::new("good.h").unwrap();
    let names = [name.as_ptr()];
    check!(clCompileProgram(
        p,
        1,
        &e.dev,
        null(),
        1,
        &header,
        names.as_ptr(),
        None,
        null_mut()
    ));
    let exe = unsafe { clLinkProgram(e.ctx, 1, &e.dev, null(), 1, &p, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    let k = kernel(exe, "value");
    let out = e.buffer(CL_MEM_READ_WRITE, 4, null_mut());
    arg(k, 0, &out);
    e.run(k, None, &[1], None);
    assert_eq!(
        e.read::<i32>(out, 1),
        vec![1],
        "a planted header was included"
    );
    for dir in &planted {
        let names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|f| f.unwrap().file_name())
            .collect();
        assert_eq!(names, ["planted.h"], "{} was written", dir.display());
        std::fs::remove_dir_all(dir).unwrap();
    }
    unsafe {
        clReleaseMemObject(out);
        clReleaseKernel(k);
        clReleaseProgram(exe);
        clReleaseProgram(p);
        clReleaseProgram(header);
    }
}

/// The compiler helper is never looked up on the application's PATH: with vkcl installed
/// where no helper is beside it, a `vkcl-clspv` on PATH does not run, and builds report
/// CL_COMPILER_NOT_AVAILABLE. (A child process loads a copy of the ICD from a folder of its
/// own.)
#[test]
fn the_compiler_helper_is_not_taken_from_path() {
    if std::env::var("VKCL_TEST_PATH_CHILD").is_ok() {
        let e = Env::new();
        let r = build_program(
            e.ctx,
            e.dev,
            "kernel void k(global int *p) { p[0] = 1; }",
            "",
        );
        let code = r.err().map(|(c, _)| c);
        assert_eq!(code, Some(CL_COMPILER_NOT_AVAILABLE));
        return;
    }
    setup();
    let lib = std::path::PathBuf::from(std::env::var_os("OCL_ICD_VENDORS").unwrap());
    let root = std::env::temp_dir().join(format!("vkcl-path-test-{}", std::process::id()));
    let (icd_dir, bin_dir) = (root.join("lib").join("icd"), root.join("bin"));
    std::fs::create_dir_all(&icd_dir).unwrap();
    std::fs::create_dir_all(&bin_dir).unwrap();
    let icd = icd_dir.join("libvkcl.so");
    std::fs::copy(&lib, &icd).unwrap();
    let marker = root.join("helper-ran");
    let fake = bin_dir.join("vkcl-clspv");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\ntouch {}\nexit 1\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["the_compiler_helper_is_not_taken_from_path", "--exact"])
        .env("VKCL_TEST_PATH_CHILD", "1")
        .env("OCL_ICD_VENDORS", &icd)
        .env("PATH", path)
        .env("VKCL_CACHE", "0")
        .env_remove("VKCL_CLSPV_HELPER")
        .output()
        .unwrap();
    let ran = marker.exists();
    std::fs::remove_dir_all(&root).unwrap();
    assert!(
        out.status.success(),
        "child failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!ran, "the vkcl-clspv found on PATH was run");
}
