//! What vkcl is and what it found, for bug reports: `vkcl-info` (the helper run as
//! `vkcl-clspv --info`) prints it, and `VKCL_LOG=info` logs it when the platform is created.

use crate::core::platform::{self, Platform};
use std::io::Write;
use std::path::Path;

/// The file beside the clspv library that names its version (written by ci/setup.sh and
/// ci/package.sh: the clspv build has no version string of its own).
const CLSPV_VERSION_FILE: &str = "clspv.version";

/// The report's lines: version and files, the Vulkan devices used and those left out (with
/// why), the cache, and the VKCL_* variables set.
pub fn report(platform: &Platform) -> Vec<String> {
    let mut lines = vec![format!(
        "vkcl {}: {}",
        env!("CARGO_PKG_VERSION"),
        platform::VERSION
    )];
    let binary = crate::compiler::our_binary();
    lines.push(format!(
        "this binary: {}",
        binary
            .as_deref()
            .map_or("unknown".into(), |p| p.display().to_string())
    ));
    match crate::compiler::locate() {
        Ok((helper, library)) => {
            lines.push(format!("compiler helper: {}", helper.display()));
            lines.push(format!(
                "clspv: {} ({})",
                library.display(),
                clspv_version(&library)
            ));
        }
        Err(why) => lines.push(format!("compiler: unavailable: {why}")),
    }
    lines.push(format!("devices: {}", platform.devices.len()));
    for (i, d) in platform.devices.iter().enumerate() {
        let [major, minor, patch] = d.caps.driver_version_parts();
        lines.push(format!(
            "  device {i}: {} ({}, driver {} {major}.{minor}.{patch}, {})",
            d.name,
            d.caps.vulkan_version(),
            d.caps.driver_name,
            d.caps.driver_info
        ));
        let w = &d.caps.workarounds;
        lines.push(format!(
            "    workarounds: copy_by_kernel={}, wait_spin_us={}, adaptive_spin={}, coalesce_groups={}",
            w.copy_by_kernel, w.wait_spin_us, w.adaptive_spin, w.coalesce_groups
        ));
    }
    for why in &platform.left_out {
        lines.push(format!("  left out: {why}"));
    }
    let cache = crate::cache::configured_dir();
    lines.push(match (crate::config::get().cache, cache) {
        (true, Some(dir)) => format!("cache: {}", dir.display()),
        (true, None) => "cache: off (no HOME, XDG_CACHE_HOME or VKCL_CACHE_DIR)".into(),
        (false, _) => "cache: off (VKCL_CACHE=0)".into(),
    });
    for o in crate::config::OPTIONS {
        if let Some(v) = std::env::var_os(o.name) {
            lines.push(format!("{}={}", o.name, v.to_string_lossy()));
        }
    }
    lines
}

/// The version named beside the library, else what is known of the file.
fn clspv_version(library: &Path) -> String {
    let named = library
        .parent()
        .map(|d| d.join(CLSPV_VERSION_FILE))
        .and_then(|f| std::fs::read_to_string(f).ok());
    match named {
        Some(v) => v.trim().to_string(),
        None => match std::fs::metadata(library) {
            Ok(m) => format!("version unknown, {} bytes", m.len()),
            Err(e) => format!("unreadable: {e}"),
        },
    }
}

/// `vkcl-info`: prints the report of this process's platform. Returns the exit status: 0 when
/// a device and the compiler are there, 1 otherwise.
pub fn print() -> i32 {
    let p = crate::api::platform::ensure_init();
    let lines = report(p);
    // Written without println!, which panics where the reader has gone (`vkcl-info | grep
    // -q ...` closes the pipe at its first match); the status tells of the devices only.
    let mut out = std::io::stdout().lock();
    for l in &lines {
        if writeln!(out, "{l}").is_err() {
            break;
        }
    }
    let compiler = crate::compiler::locate().is_ok();
    i32::from(p.devices.is_empty() || !compiler)
}
