//! The one vkcl platform: a Vulkan instance and the devices vkcl can use.

use super::device::Device;
use super::object::{register_static, Base, ClObject, Kind};
use crate::cl::*;
use crate::vk::instance::Instance;
use std::sync::{Arc, OnceLock};

#[repr(C)]
pub struct Platform {
    pub base: Base,
    pub devices: Vec<Arc<Device>>,
    /// A line for each Vulkan device left out ("NAME: why"), for diagnostics.
    pub left_out: Vec<String>,
}

impl ClObject for Platform {
    const KIND: Kind = Kind::Platform;
    const INVALID: i32 = CL_INVALID_PLATFORM;
    fn base(&self) -> &Base {
        &self.base
    }
}

pub const NAME: &str = "vkcl";
pub const VENDOR: &str = "vkcl";
pub const VERSION: &str = concat!("OpenCL 3.0 vkcl ", env!("CARGO_PKG_VERSION"));
pub const ICD_SUFFIX: &str = "vkcl";

/// The platform, created on first use. The dispatch table must be set before.
pub fn get() -> &'static Arc<Platform> {
    static PLATFORM: OnceLock<Arc<Platform>> = OnceLock::new();
    PLATFORM.get_or_init(|| {
        let config = crate::config::get();
        let instance = Instance::new(config.validation).map(Arc::new);
        let (caps, mut left_out) = instance.as_ref().map(|i| i.devices()).unwrap_or_default();
        if instance.is_none() {
            left_out.push("no Vulkan instance (no loader or vkCreateInstance failed)".into());
        }
        let (caps, filtered): (Vec<_>, Vec<_>) = caps.into_iter().partition(|c| {
            config.devices.is_empty() || config.devices.iter().any(|f| c.name.contains(f.as_str()))
        });
        left_out.extend(
            filtered
                .iter()
                .map(|c| format!("{}: not named by VKCL_DEVICES", c.name)),
        );
        let devices: Vec<Arc<Device>> = caps
            .into_iter()
            .flat_map(|c| {
                let caps = Arc::new(c);
                let instance = instance.clone().expect("devices imply an instance");
                (0..config.device_copies)
                    .map(move |n| Arc::new(Device::new(instance.clone(), caps.clone(), n)))
            })
            .collect();
        log::info!(target: "api", "platform with {} device(s)", devices.len());
        crate::shutdown::install();
        for d in &devices {
            register_static(d);
        }
        let p = Arc::new(Platform {
            base: Base::new(Kind::Platform),
            devices,
            left_out,
        });
        register_static(&p);
        p
    })
}
