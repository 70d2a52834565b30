//! The Vulkan instance: loader, optional validation layer routed to `log`, physical devices.

use super::probe::Caps;
use super::vk;
use std::ffi::{c_void, CStr};

pub struct Instance {
    pub(super) entry: ash::Entry,
    pub(super) raw: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
}

const VALIDATION: &CStr = c"VK_LAYER_KHRONOS_validation";

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes a valid callback-data struct whose message is a C string.
    let msg = unsafe { data.as_ref().and_then(|d| d.message_as_c_str()) };
    let msg = msg.map(|m| m.to_string_lossy()).unwrap_or_default();
    // OpenCL image arguments have no numeric type, Vulkan images do: clspv types an image it
    // only queries (get_image_width, ...) as float, and the kernel may be given an integer
    // image. Only a read of the wrong kind (undefined in OpenCL too) would see the difference.
    let untyped_image_argument = msg.contains("-format-07753")
        || msg.contains("component type, but bound descriptor format is");
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) && !untyped_image_argument {
        log::error!(target: "vk", "validation: {msg}");
        if crate::config::get().validation_fatal {
            // Tests run with VKCL_VALIDATION=fatal: a validation error must fail them loudly.
            eprintln!("vkcl: Vulkan validation error (VKCL_VALIDATION=fatal): {msg}");
            std::process::abort();
        }
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
        log::warn!(target: "vk", "validation: {msg}");
    } else {
        log::debug!(target: "vk", "{msg}");
    }
    vk::FALSE
}

impl Instance {
    /// Loads Vulkan and creates an instance; None when there is no usable Vulkan.
    pub fn new(validation: bool) -> Option<Instance> {
        // SAFETY: loading the system Vulkan loader; its initialisation has no preconditions.
        let entry = match unsafe { ash::Entry::load() } {
            Ok(e) => e,
            Err(e) => {
                log::warn!(target: "vk", "no Vulkan loader: {e}");
                return None;
            }
        };
        // SAFETY: entry is a loaded Vulkan entry.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
        let have_validation = validation
            && layers
                .iter()
                .any(|l| l.layer_name_as_c_str() == Ok(VALIDATION));
        if validation && !have_validation {
            log::warn!(target: "vk", "VKCL_VALIDATION=1 but the validation layer is not installed");
        }
        let app = vk::ApplicationInfo::default()
            .application_name(c"vkcl")
            .engine_name(c"vkcl")
            .api_version(vk::API_VERSION_1_3);
        let layer_names = [VALIDATION.as_ptr()];
        let ext_names = [ash::ext::debug_utils::NAME.as_ptr()];
        let mut info = vk::InstanceCreateInfo::default().application_info(&app);
        if have_validation {
            info = info
                .enabled_layer_names(&layer_names)
                .enabled_extension_names(&ext_names);
        }
        // SAFETY: valid create info; the instance is destroyed in Drop.
        let raw = match unsafe { entry.create_instance(&info, None) } {
            Ok(i) => i,
            Err(e) => {
                log::warn!(target: "vk", "vkCreateInstance failed: {e}");
                return None;
            }
        };
        if have_validation {
            log::info!(target: "vk", "validation layer enabled");
        }
        let debug = have_validation.then(|| {
            let utils = ash::ext::debug_utils::Instance::new(&entry, &raw);
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                        | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
                )
                .pfn_user_callback(Some(debug_callback));
            // SAFETY: valid create info; destroyed in Drop.
            let messenger = unsafe { utils.create_debug_utils_messenger(&info, None) }
                .unwrap_or(vk::DebugUtilsMessengerEXT::null());
            (utils, messenger)
        });
        Some(Instance { entry, raw, debug })
    }

    /// Every physical device that can run vkcl, probed, and a line for each one left out
    /// ("NAME: why").
    pub fn devices(&self) -> (Vec<Caps>, Vec<String>) {
        // SAFETY: valid instance.
        let pds = unsafe { self.raw.enumerate_physical_devices() }.unwrap_or_default();
        let mut skipped = Vec::new();
        let caps = pds
            .into_iter()
            .filter_map(|pd| match Caps::probe(self, pd) {
                Ok(c) => Some(c),
                Err(why) => {
                    // SAFETY: pd comes from this instance.
                    let props = unsafe { self.raw.get_physical_device_properties(pd) };
                    let name = props.device_name_as_c_str().unwrap_or_default();
                    let line = format!("{}: {why}", name.to_string_lossy());
                    log::info!(target: "vk", "skipping a Vulkan device: {line}");
                    skipped.push(line);
                    None
                }
            })
            .collect();
        (caps, skipped)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: all devices created from this instance hold an Arc to it and are gone.
        unsafe {
            if let Some((utils, m)) = self.debug.take() {
                utils.destroy_debug_utils_messenger(m, None);
            }
            self.raw.destroy_instance(None);
        }
    }
}
