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
