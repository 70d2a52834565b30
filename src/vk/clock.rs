//! CL_DEVICE_MAX_CLOCK_FREQUENCY, which Vulkan does not report: the CPU's maximum frequency
//! for CPU devices (lavapipe runs on the host's cores), NVML's maximum SM clock for NVIDIA
//! GPUs (the device found by its UUID, which NVIDIA's Vulkan driver reports as deviceUUID);
//! 0 where neither tells.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};

/// The device's maximum clock in MHz, or 0 where it is not known.
pub(super) fn max_clock_mhz(vendor_id: u32, uuid: &[u8; 16], cpu: bool) -> u32 {
    const NVIDIA: u32 = 0x10de;
    if cpu {
        cpu_max_mhz().unwrap_or(0)
    } else if vendor_id == NVIDIA {
        nvml_max_sm_clock(uuid).unwrap_or(0)
    } else {
        0
    }
}

/// cpufreq's maximum where the kernel exposes it, else the first "cpu MHz" of /proc/cpuinfo.
fn cpu_max_mhz() -> Option<u32> {
    let khz = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    if let Some(khz) = khz.ok().and_then(|s| s.trim().parse::<u64>().ok()) {
        return u32::try_from(khz / 1000).ok();
    }
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("cpu MHz"))?;
    let mhz: f64 = line.split(':').nth(1)?.trim().parse().ok()?;
    Some(mhz.round() as u32)
}

/// NVML's "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" form of a UUID.
fn nvml_uuid(u: &[u8; 16]) -> String {
    let hex =
        |r: std::ops::Range<usize>| u[r].iter().map(|b| format!("{b:02x}")).collect::<String>();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

type Device = *mut c_void;

fn nvml_max_sm_clock(uuid: &[u8; 16]) -> Option<u32> {
    const NVML_CLOCK_SM: c_int = 1;
    // SAFETY: loading NVIDIA's management library runs its initialisers only; the symbols are
    // NVML's documented C API with these signatures, called between nvmlInit_v2 and
    // nvmlShutdown, with a NUL-terminated UUID and valid out-pointers.
    unsafe {
        let lib = libloading::Library::new("libnvidia-ml.so.1").ok()?;
        let init = lib
            .get::<unsafe extern "C" fn() -> c_int>(b"nvmlInit_v2\0")
            .ok()?;
        let shutdown = lib
            .get::<unsafe extern "C" fn() -> c_int>(b"nvmlShutdown\0")
            .ok()?;
        let by_uuid = lib
            .get::<unsafe extern "C" fn(*const c_char, *mut Device) -> c_int>(
                b"nvmlDeviceGetHandleByUUID\0",
            )
            .ok()?;
        let max_clock = lib
            .get::<unsafe extern "C" fn(Device, c_int, *mut c_uint) -> c_int>(
                b"nvmlDeviceGetMaxClockInfo\0",
            )
            .ok()?;
        if init() != 0 {
            return None;
        }
        let name = CString::new(nvml_uuid(uuid)).ok()?;
        let mut device: Device = std::ptr::null_mut();
        let mut mhz: c_uint = 0;
        let found = by_uuid(name.as_ptr(), &mut device) == 0
            && max_clock(device, NVML_CLOCK_SM, &mut mhz) == 0;
        shutdown();
        found.then_some(mhz)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn nvml_uuid_form() {
        let u: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
        assert_eq!(
            super::nvml_uuid(&u),
            "GPU-00112233-4455-6677-8899-aabbccddeeff"
        );
    }
}
