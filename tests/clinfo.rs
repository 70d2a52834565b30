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
