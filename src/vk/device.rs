//! The logical device: one per physical device, shared by every context on it.

use super::instance::Instance;
use super::probe::Caps;
use super::vk;
use super::{Error, Result};
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Device {
    /// Held: the instance outlives its devices.
    _instance: Arc<Instance>,
    pub caps: Arc<Caps>,
    pub(super) raw: ash::Device,
    /// vkQueueSubmit needs external synchronisation.
    pub(super) queue: Mutex<vk::Queue>,
    /// Dropped (Some → None) before the device is destroyed.
    pub(super) allocator: Mutex<Option<Allocator>>,
    pub(super) pipeline_cache: vk::PipelineCache,
    /// The pipeline cache's disk-cache key, and when it was last saved.
    pipeline_cache_key: String,
    pipeline_cache_saved: Mutex<SaveState>,
    /// VK_EXT_external_memory_host's functions, where the extension is enabled.
    pub(super) host_import: Option<ash::ext::external_memory_host::Device>,
    /// VK_KHR_external_memory_fd's functions, where the extension is enabled.
    pub(super) fd_memory: Option<ash::khr::external_memory_fd::Device>,
    /// VK_KHR_map_memory2's functions, where placed maps are enabled (VK_EXT_map_memory_placed).
    pub(super) map2: Option<ash::khr::map_memory2::Device>,
    /// VK_EXT_calibrated_timestamps' functions, where enabled (see `now_ns`).
    calibration: Option<ash::ext::calibrated_timestamps::Device>,
    /// VK_KHR_pipeline_executable_properties' functions, with VKCL_PIPELINE_STATS where the
    /// device has them: pipelines are created capturing their statistics, which are logged.
    pub(super) statistics: Option<ash::khr::pipeline_executable_properties::Device>,
    /// Samplers by OpenCL sampler bitmask (see `image::Device::sampler`).
    pub(super) samplers: Mutex<std::collections::HashMap<u32, vk::Sampler>>,
    /// Timeline semaphores given back (see `take_timeline`).
    timelines: Mutex<Vec<vk::Semaphore>>,
}

/// Devices whose pipeline cache has a save scheduled (saved at exit if still pending then).
static PENDING_SAVES: Mutex<Vec<std::sync::Weak<Device>>> = Mutex::new(Vec::new());

/// At exit: the saves still scheduled.
fn save_pending_pipeline_caches() {
    let devices = std::mem::take(&mut *PENDING_SAVES.lock());
    for device in devices.iter().filter_map(std::sync::Weak::upgrade) {
        device.save_if_pending();
    }
}

#[derive(Default)]
struct SaveState {
    last: Option<std::time::Instant>,
    /// A save is scheduled.
    pending: bool,
}

impl Device {
    pub fn new(instance: Arc<Instance>, caps: Arc<Caps>) -> Result<Arc<Device>> {
        let fs = &caps.features;
        let b = |x: bool| x as vk::Bool32;
        let features = vk::PhysicalDeviceFeatures {
            shader_int16: b(fs.int16),
            shader_int64: b(fs.int64),
            shader_float64: b(fs.float64),
            shader_storage_image_read_without_format: b(fs.storage_image_read_without_format),
            shader_storage_image_write_without_format: b(fs.storage_image_write_without_format),
            ..Default::default()
        };
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(fs.storage_buffer16)
            .uniform_and_storage_buffer16_bit_access(fs.uniform16)
            .storage_push_constant16(fs.push_constant16)
            .variable_pointers_storage_buffer(true)
            .variable_pointers(true);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .timeline_semaphore(true)
            .shader_int8(fs.int8)
            .shader_float16(fs.float16)
            .shader_buffer_int64_atomics(fs.int64_atomics_buffer)
            .shader_shared_int64_atomics(fs.int64_atomics_shared)
            .shader_subgroup_extended_types(fs.subgroup_extended_types)
            .storage_buffer8_bit_access(fs.storage_buffer8)
            .uniform_and_storage_buffer8_bit_access(fs.uniform8)
            .storage_push_constant8(fs.push_constant8)
            .uniform_buffer_standard_layout(fs.uniform_standard_layout)
            .buffer_device_address(fs.buffer_device_address)
            .host_query_reset(fs.host_query_reset);
        let mut fsg =
            vk::PhysicalDeviceSubgroupSizeControlFeatures::default().subgroup_size_control(true);
        let statistics = fs.pipeline_statistics && crate::config::get().pipeline_stats;
        let exts = extensions(&caps, statistics);
        let mut fexec = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
            .pipeline_executable_info(true);
        let mut fplaced = vk::PhysicalDeviceMapMemoryPlacedFeaturesEXT::default()
            .memory_map_placed(fs.map_memory_placed)
            .memory_unmap_reserve(fs.memory_unmap_reserve);
        let fa = fs.float_atomics;
        let mut ffloat = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
            .shader_buffer_float32_atomics(fa.buffer32)
            .shader_buffer_float64_atomics(fa.buffer64 && fs.float64)
            .shader_shared_float32_atomics(fa.shared32)
            .shader_shared_float64_atomics(fa.shared64 && fs.float64);
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(caps.queue_family)
            .queue_priorities(&priorities)];
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&exts)
            .enabled_features(&features)
            .push_next(&mut f11)
            .push_next(&mut f12);
        if fs.subgroup_size_control {
            info = info.push_next(&mut fsg);
        }
        if fs.map_memory_placed {
            info = info.push_next(&mut fplaced);
        }
        if statistics {
            info = info.push_next(&mut fexec);
        }
        if fa.any() {
            info = info.push_next(&mut ffloat);
        }
        // SAFETY: the features and extensions enabled were probed as supported.
        let raw = unsafe { instance.raw.create_device(caps.physical, &info, None) }?;
        // SAFETY: queue 0 of the family was requested above.
        let queue = unsafe { raw.get_device_queue(caps.queue_family, 0) };
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.raw.clone(),
            device: raw.clone(),
            physical_device: caps.physical,
            debug_settings: Default::default(),
            buffer_device_address: fs.buffer_device_address,
            allocation_sizes: Default::default(),
        })
        .map_err(|e| {
            log::error!(target: "vk", "allocator: {e}");
            // SAFETY: nothing was created from the device yet.
            unsafe { raw.destroy_device(None) };
            Error::Other(vk::Result::ERROR_INITIALIZATION_FAILED)
        })?;
        let pipeline_cache_key = crate::cache::key(&[
            b"vk-pipeline-cache-1",
            &caps.vendor_id.to_le_bytes(),
            &caps.device_id.to_le_bytes(),
            &caps.driver_version.to_le_bytes(),
            &caps.pipeline_cache_uuid,
            &caps.device_uuid,
        ]);
        let initial = crate::cache::get()
            .and_then(|c| c.load("pipelines", &pipeline_cache_key))
            .filter(|data| pipeline_cache_matches(data, &caps))
            .unwrap_or_default();
        let info = vk::PipelineCacheCreateInfo::default().initial_data(&initial);
        // SAFETY: valid device; the initial data has this device's header (checked above) and
        // passed the disk cache's checksum. Destroyed in Drop.
        let pipeline_cache =
            unsafe { raw.create_pipeline_cache(&info, None) }.unwrap_or(vk::PipelineCache::null());
        let host_import = fs
            .external_memory_host
            .then(|| ash::ext::external_memory_host::Device::new(&instance.raw, &raw));
        let fd_memory = fs
            .external_memory_fd
            .then(|| ash::khr::external_memory_fd::Device::new(&instance.raw, &raw));
        let map2 = fs
            .map_memory_placed
            .then(|| ash::khr::map_memory2::Device::new(&instance.raw, &raw));
        let calibration = fs
            .calibrated_timestamps
            .then(|| ash::ext::calibrated_timestamps::Device::new(&instance.raw, &raw));
        let statistics = statistics
            .then(|| ash::khr::pipeline_executable_properties::Device::new(&instance.raw, &raw));
        log::info!(
            target: "vk",
            "opened {} ({}){}",
            caps.name,
            caps.driver_info,
            if fs.calibrated_timestamps { ", calibrated timestamps" } else { "" }
        );
        crate::shutdown::install();
        Ok(Arc::new(Device {
            _instance: instance,
            caps,
            raw,
            queue: Mutex::new(queue),
            allocator: Mutex::new(Some(allocator)),
            pipeline_cache,
            pipeline_cache_key,
            pipeline_cache_saved: Mutex::new(SaveState::default()),
            host_import,
            fd_memory,
            map2,
            calibration,
            statistics,
            samplers: Mutex::new(Default::default()),
            timelines: Mutex::new(vec![]),
        }))
    }

    /// Called after pipelines were created: saves the pipeline cache to the disk cache, at once
    /// if the last save is a second old, else a second after it (on a thread), so that a burst
    /// of new pipelines is one save.
    pub fn pipelines_added(self: &Arc<Self>) {
        const EVERY: std::time::Duration = std::time::Duration::from_secs(1);
        let mut state = self.pipeline_cache_saved.lock();
        if state.pending {
            return;
        }
        match state.last.map(|t| t.elapsed()) {
            Some(age) if age < EVERY => {
                state.pending = true;
                // A process that exits within the second saves at exit (a short process's
                // first launches are what a second process most needs cached).
                PENDING_SAVES.lock().push(Arc::downgrade(self));
                crate::shutdown::on_exit(save_pending_pipeline_caches);
                let device = self.clone();
                let spawned = std::thread::Builder::new()
                    .name("vkcl-pipeline-cache".into())
                    .spawn(move || {
                        std::thread::sleep(EVERY - age);
                        let Some(_active) = crate::shutdown::enter() else {
                            return;
                        };
                        device.save_if_pending();
                    });
                state.pending = spawned.is_ok();
            }
            _ => {
                self.save_pipeline_cache();
                state.last = Some(std::time::Instant::now());
            }
        }
    }

    /// Saves the pipeline cache now if a save is scheduled.
    fn save_if_pending(&self) {
        let mut state = self.pipeline_cache_saved.lock();
        if state.pending {
            self.save_pipeline_cache();
            *state = SaveState {
                last: Some(std::time::Instant::now()),
                pending: false,
            };
        }
    }

    fn save_pipeline_cache(&self) {
        let Some(cache) = crate::cache::get() else {
            return;
        };
        // SAFETY: valid pipeline cache of this device (or null, which fails).
        if let Ok(data) = unsafe { self.raw.get_pipeline_cache_data(self.pipeline_cache) } {
            cache.store("pipelines", &self.pipeline_cache_key, &data);
            log::debug!(target: "cache", "pipeline cache saved ({} bytes)", data.len());
        }
    }

    /// Buffers can import host memory (VK_EXT_external_memory_host is enabled).
    pub fn imports_host_memory(&self) -> bool {
        self.host_import.is_some()
    }

    /// Buffers of this device and `other` can share device memory (`Buffer::exportable`,
    /// `Buffer::import_into`): two VkDevices of one physical device (the same device and
    /// driver UUIDs), both with VK_KHR_external_memory_fd.
    pub fn shares_memory_with(&self, other: &Device) -> bool {
        self.fd_memory.is_some()
            && other.fd_memory.is_some()
            && self.caps.device_uuid == other.caps.device_uuid
            && self.caps.driver_uuid == other.caps.driver_uuid
    }

    /// Memory can be mapped at a host address of vkcl's choice (VK_EXT_map_memory_placed
    /// is enabled), and buffers have device addresses: `Buffer::at_device_address`.
    pub fn places_maps(&self) -> bool {
        self.map2.is_some() && self.caps.features.buffer_device_address
    }

    /// A device timestamp (ticks) in nanoseconds, as the timestamp queries give them.
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        let bits = self.caps.timestamp_valid_bits;
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        ((ticks & mask) as f64 * self.caps.limits.timestamp_period as f64) as u64
    }

    /// The device's clock now, in nanoseconds (VK_EXT_calibrated_timestamps), if it can tell,
    /// and the host's CLOCK_MONOTONIC read with it by the driver where it can (None: the
    /// caller reads the host's clock around the call).
    pub fn clocks(&self) -> Option<(u64, Option<u64>)> {
        use vk::TimeDomainEXT as D;
        let ext = self.calibration.as_ref()?;
        let domains: &[D] = if self.caps.features.calibrated_monotonic {
            &[D::DEVICE, D::CLOCK_MONOTONIC]
        } else {
            &[D::DEVICE]
        };
        let info: Vec<_> = (domains.iter())
            .map(|&d| vk::CalibratedTimestampInfoEXT::default().time_domain(d))
            .collect();
        // SAFETY: the extension is enabled and the domains are supported (probed).
        let (ticks, _) = unsafe { ext.get_calibrated_timestamps(&info) }.ok()?;
        // CLOCK_MONOTONIC's values are nanoseconds.
        Some((self.ticks_to_ns(ticks[0]), ticks.get(1).copied()))
    }

    /// A timeline semaphore and the value it has reached: one given back earlier, or a new one
    /// at 0. Timelines live as long as the device: lavapipe's queue thread (Mesa's vk_queue)
    /// drops a submission's references to the timelines it waited for only after the host
    /// can see the submission's signal, so destroying another queue's timeline when that queue
    /// went away crashed it now and then (a use-after-free in vk_sync_timeline_point_release,
    /// caught with a debug build of lavapipe; docs/LAVAPIPE.md). Vulkan allows the destruction;
    /// reuse also spares creating one per queue.
    pub fn timeline(self: &Arc<Self>) -> Result<(Timeline, u64)> {
        let reused = self.timelines.lock().pop();
        let raw = match reused {
            Some(raw) => raw,
            None => {
                let mut t = vk::SemaphoreTypeCreateInfo::default()
                    .semaphore_type(vk::SemaphoreType::TIMELINE)
                    .initial_value(0);
                let info = vk::SemaphoreCreateInfo::default().push_next(&mut t);
                // SAFETY: valid device and create info; destroyed with the device.
                unsafe { self.raw.create_semaphore(&info, None) }?
            }
        };
        let timeline = Timeline {
            device: self.clone(),
            raw,
            reusable: AtomicBool::new(true),
        };
        let value = if reused.is_some() {
            timeline.value()?
        } else {
            0
        };
        Ok((timeline, value))
    }
}

/// A timeline semaphore of a device, whose values go on across its users: given back to the
/// device when dropped (see `Device::timeline`), for the next user to continue from the value
/// it reached; destroyed only with the device.
pub struct Timeline {
    device: Arc<Device>,
    pub(crate) raw: vk::Semaphore,
    reusable: AtomicBool,
}

impl Timeline {
    /// Waits until the timeline reaches `value`, or `timeout_ns` passes (Ok(false)). A timed-out
    /// wait also reads the counter, so that a lost device is an error where the driver's wait
    /// only times out after the loss but the counter reports it. (NVIDIA's, after a kernel's
    /// memory fault, reports neither within 60 s: tools/diag/fault.c.)
    pub fn wait(&self, value: u64, timeout_ns: u64) -> Result<bool> {
        let sems = [self.raw];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        // SAFETY: valid semaphore of this device.
        match unsafe { self.device.raw.wait_semaphores(&info, timeout_ns) } {
            Ok(()) => Ok(true),
            Err(vk::Result::TIMEOUT) => Ok(self.value()? >= value),
            Err(e) => Err(e.into()),
        }
    }

    pub fn value(&self) -> Result<u64> {
        // SAFETY: valid semaphore of this device.
        Ok(unsafe { self.device.raw.get_semaphore_counter_value(self.raw) }?)
    }

    /// Signals `value` from the host. The caller makes sure that it is greater than every value
    /// signalled so far and that no pending submission signals it.
    pub fn signal(&self, value: u64) -> Result<()> {
        let info = vk::SemaphoreSignalInfo::default()
            .semaphore(self.raw)
            .value(value);
        // SAFETY: valid semaphore of this device; the value rule is the caller's.
        Ok(unsafe { self.device.raw.signal_semaphore(&info) }?)
    }

    /// Submissions signalling it may never complete (the device was lost): it is not reused.
    pub fn retire(&self) {
        self.reusable.store(false, Ordering::Relaxed);
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        if self.reusable.load(Ordering::Relaxed) {
            self.device.timelines.lock().push(self.raw);
        }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: every object created from this device holds an Arc to it, so none is left;
        // the allocator goes before the device as gpu-allocator requires.
        unsafe {
            let _ = self.raw.device_wait_idle();
            for s in self.timelines.lock().drain(..) {
                self.raw.destroy_semaphore(s, None);
            }
            self.allocator.lock().take();
            for (_, s) in self.samplers.lock().drain() {
                self.raw.destroy_sampler(s, None);
            }
            self.raw.destroy_pipeline_cache(self.pipeline_cache, None);
            self.raw.destroy_device(None);
        }
    }
}

/// True when `data` starts with a pipeline-cache header (version one) of this device, so that it
/// may be given to vkCreatePipelineCache.
fn pipeline_cache_matches(data: &[u8], caps: &Caps) -> bool {
    let word = |i: usize| {
        data.get(4 * i..4 * i + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    word(0).is_some_and(|size| size >= 32 && size as usize <= data.len())
        && word(1) == Some(vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32)
        && word(2) == Some(caps.vendor_id)
        && word(3) == Some(caps.device_id)
        && data.get(16..32) == Some(&caps.pipeline_cache_uuid[..])
}

/// The device extensions vkcl enables on a device with `caps` (`statistics`: the pipeline
/// statistics VKCL_PIPELINE_STATS asks for).
fn extensions(caps: &Caps, statistics: bool) -> Vec<*const std::ffi::c_char> {
    let fs = &caps.features;
    let mut exts = vec![];
    if caps.api_version < vk::API_VERSION_1_3 {
        exts.push(ash::khr::shader_non_semantic_info::NAME.as_ptr());
        if fs.subgroup_size_control {
            exts.push(ash::ext::subgroup_size_control::NAME.as_ptr());
        }
    }
    let wanted = [
        (
            fs.external_memory_host,
            ash::ext::external_memory_host::NAME,
        ),
        (fs.external_memory_fd, ash::khr::external_memory_fd::NAME),
        (
            fs.calibrated_timestamps,
            ash::ext::calibrated_timestamps::NAME,
        ),
        (statistics, ash::khr::pipeline_executable_properties::NAME),
        (fs.map_memory_placed, ash::ext::map_memory_placed::NAME),
        (fs.map_memory_placed, ash::khr::map_memory2::NAME),
        (fs.float_atomics.any(), ash::ext::shader_atomic_float::NAME),
    ];
    exts.extend(wanted.iter().filter(|w| w.0).map(|w| w.1.as_ptr()));
    exts
}
