//! clinfo, a real client, prints every query of the vkcl platform and device with no error.

mod common;

#[test]
fn clinfo_lists_the_device_with_no_error_line() {
    common::setup();
    let out = std::process::Command::new("clinfo")
        .output()
        .expect("clinfo must be installed (ci/setup.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "clinfo failed: {}\n{text}",
        out.status
    );
    assert!(
        text.contains("Platform Name                                   vkcl"),
        "{text}"
    );
    assert!(
        text.contains("Number of devices                                 1"),
        "{text}"
    );
    let bad: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("error") || l.contains("Invalid") || l.contains("<print"))
        .collect();
    assert!(
        bad.is_empty(),
        "clinfo reported errors:\n{}",
        bad.join("\n")
    );
    // clinfo builds a kernel to query the kernel's preferred work-group size multiple.
    assert!(!text.contains("create program"), "{text}");
}

/// clinfo prints the image support and limits of the first device with no error (any
/// implementation: also run against pocl).
#[test]
fn clinfo_shows_image_support_and_limits() {
    common::setup();
    let out = std::process::Command::new("clinfo")
        .output()
        .expect("clinfo must be installed (ci/setup.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "clinfo failed: {}", out.status);
    let line = |key: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(key))
            .unwrap_or_else(|| panic!("no '{key}' line:\n{text}"))
            .to_string()
    };
    assert!(line("Image support").trim_end().ends_with("Yes"), "{text}");
    for key in [
        "Max number of samplers per kernel",
        "Max size for 1D images from buffer",
        "Max 1D or 2D image array size",
        "Max 2D image size",
        "Max 3D image size",
        "Max number of read image args",
        "Max number of write image args",
    ] {
        let l = line(key);
        assert!(
            l.chars().any(|c| c.is_ascii_digit()) && !l.contains("Invalid") && !l.contains("error"),
            "{l}"
        );
    }
    let l = line("Max 2D image size");
    let dims: Vec<u64> = l
        .split_whitespace()
        .rev()
        .nth(1)
        .map(|wh| wh.split('x').filter_map(|v| v.parse().ok()).collect())
        .unwrap_or_default();
    assert!(dims.len() == 2 && dims.iter().all(|&d| d >= 16384), "{l}");
    assert!(text.contains("__opencl_c_images"), "{text}");
}

/// `vkcl-info` (the helper run with --info): the report for bug reports names vkcl's version,
/// the compiler it found, every device the application sees, and why devices were left out;
/// `VKCL_LOG=info` logs the same when the platform is created (issue 23).
#[test]
fn vkcl_info_reports_the_devices_the_compiler_and_what_was_left_out() {
    common::setup();
    let name = common::device_str(common::device(), common::CL_DEVICE_NAME);
    let exe = std::env::current_exe().expect("current_exe");
    let helper = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("exe dir")
        .join("vkcl-clspv");
    let run = |devices: Option<&str>| {
        let mut cmd = std::process::Command::new(&helper);
        cmd.arg("--info");
        if let Some(d) = devices {
            cmd.env("VKCL_DEVICES", d);
        }
        let out = cmd.output().expect("run vkcl-clspv --info");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = run(None);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.starts_with(&format!("vkcl {}", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    let clspv = text
        .lines()
        .find_map(|l| l.strip_prefix("clspv: "))
        .expect("a clspv line");
    let path = clspv.split(" (").next().unwrap();
    assert!(std::path::Path::new(path).is_file(), "{text}");
    assert!(
        text.contains(&format!("  device 0: {name} (Vulkan ")),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("cache: ")), "{text}");

    let (code, text) = run(Some("no-such-device"));
    assert_eq!(code, Some(1), "no device: the exit status says so\n{text}");
    assert!(text.contains("devices: 0"), "{text}");
    assert!(
        text.contains(&format!("  left out: {name}: not named by VKCL_DEVICES")),
        "{text}"
    );
    assert!(text.contains("VKCL_DEVICES=no-such-device"), "{text}");

    let out = std::process::Command::new("clinfo")
        .arg("-l")
        .env("VKCL_LOG", "info")
        .output()
        .expect("clinfo");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains(&format!("[api]   device 0: {name} (Vulkan ")),
        "{log}"
    );
}
