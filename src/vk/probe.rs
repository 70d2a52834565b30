//! What a physical device can do, probed once into plain values.

use super::instance::Instance;
use super::vk;
use std::collections::HashSet;
use std::ffi::CStr;

/// The optional features vkcl uses, each "core in this API version or extension present".
#[derive(Clone, Debug, Default)]
pub struct Features {
    pub int8: bool,
    pub int16: bool,
    pub int64: bool,
    pub float16: bool,
    pub float64: bool,
    /// 64-bit integer atomics on storage buffers and on workgroup memory.
    pub int64_atomics_buffer: bool,
    pub int64_atomics_shared: bool,
    /// VK_EXT_shader_atomic_float's load, store and exchange of floating-point values
    /// (`atomic_float`, `atomic_double`), where the device has them.
    pub float_atomics: FloatAtomics,
    pub storage_buffer8: bool,
    pub uniform8: bool,
    pub push_constant8: bool,
    pub storage_buffer16: bool,
    pub uniform16: bool,
    pub push_constant16: bool,
    /// `uniformBufferStandardLayout`: uniform buffers may use std430 (scalar arrays at their
    /// own stride).
    pub uniform_standard_layout: bool,
    pub buffer_device_address: bool,
    pub storage_image_read_without_format: bool,
    pub storage_image_write_without_format: bool,
    pub subgroup_size_control: bool,
    /// `shaderSubgroupExtendedTypes`: subgroup operations on 8-, 16- and 64-bit types.
    pub subgroup_extended_types: bool,
    /// VK_EXT_external_memory_host, with storage buffers importable from host allocations.
    pub external_memory_host: bool,
    /// VK_KHR_external_memory_fd, with storage buffers exportable and importable as opaque fds
    /// (device memory shared by VkDevices of one physical device).
    pub external_memory_fd: bool,
    /// `hostQueryReset`: timestamp queries reset from the host (vkResetQueryPool), not by a
    /// command in the batch.
    pub host_query_reset: bool,
    /// VK_EXT_calibrated_timestamps with the device's own time domain.
    pub calibrated_timestamps: bool,
    /// ... and the host's CLOCK_MONOTONIC, read together with the device's clock.
    pub calibrated_monotonic: bool,
    /// VK_EXT_map_memory_placed (with VK_KHR_map_memory2) and its `memoryMapPlaced`: memory
    /// mapped at a host address of vkcl's choice (SVM at the memory's device address).
    pub map_memory_placed: bool,
    /// `memoryUnmapReserve`: an unmap can leave the host range reserved.
    pub memory_unmap_reserve: bool,
    /// VK_KHR_pipeline_executable_properties' `pipelineExecutableInfo`: the driver's statistics
    /// of a compiled pipeline (registers, code size), logged with VKCL_PIPELINE_STATS.
    pub pipeline_statistics: bool,
}

/// The subgroup operations compute shaders may use.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubgroupOps {
    pub basic: bool,
    pub vote: bool,
    pub arithmetic: bool,
    pub ballot: bool,
    pub shuffle: bool,
    pub shuffle_relative: bool,
}

impl SubgroupOps {
    fn of(flags: vk::SubgroupFeatureFlags) -> SubgroupOps {
        use vk::SubgroupFeatureFlags as F;
        SubgroupOps {
            basic: flags.contains(F::BASIC),
            vote: flags.contains(F::VOTE),
            arithmetic: flags.contains(F::ARITHMETIC),
            ballot: flags.contains(F::BALLOT),
            shuffle: flags.contains(F::SHUFFLE),
            shuffle_relative: flags.contains(F::SHUFFLE_RELATIVE),
        }
    }
}

/// The device limits vkcl uses (Vulkan's names, in nanoseconds per tick for the timestamp
/// period).
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub max_compute_work_group_invocations: u32,
    pub max_compute_work_group_size: [u32; 3],
    pub max_compute_work_group_count: [u32; 3],
    pub max_compute_shared_memory_size: u32,
    pub max_storage_buffer_range: u32,
    pub min_storage_buffer_offset_alignment: u64,
    pub max_uniform_buffer_range: u32,
    pub max_push_constants_size: u32,
    pub max_per_stage_descriptor_sampled_images: u32,
    pub max_per_stage_descriptor_storage_images: u32,
    pub max_per_stage_descriptor_samplers: u32,
    pub max_image_dimension2_d: u32,
    pub max_image_dimension3_d: u32,
    pub max_image_array_layers: u32,
    pub max_texel_buffer_elements: u32,
    pub timestamp_period: f32,
}

impl Limits {
    fn of(l: &vk::PhysicalDeviceLimits) -> Limits {
        Limits {
            max_compute_work_group_invocations: l.max_compute_work_group_invocations,
            max_compute_work_group_size: l.max_compute_work_group_size,
            max_compute_work_group_count: l.max_compute_work_group_count,
            max_compute_shared_memory_size: l.max_compute_shared_memory_size,
            max_storage_buffer_range: l.max_storage_buffer_range,
            min_storage_buffer_offset_alignment: l.min_storage_buffer_offset_alignment,
            max_uniform_buffer_range: l.max_uniform_buffer_range,
            max_push_constants_size: l.max_push_constants_size,
            max_per_stage_descriptor_sampled_images: l.max_per_stage_descriptor_sampled_images,
            max_per_stage_descriptor_storage_images: l.max_per_stage_descriptor_storage_images,
            max_per_stage_descriptor_samplers: l.max_per_stage_descriptor_samplers,
            max_image_dimension2_d: l.max_image_dimension2_d,
            max_image_dimension3_d: l.max_image_dimension3_d,
            max_image_array_layers: l.max_image_array_layers,
            max_texel_buffer_elements: l.max_texel_buffer_elements,
            timestamp_period: l.timestamp_period,
        }
    }
}

/// Everything vkcl needs to know about one physical device.
pub struct Caps {
    pub(super) physical: vk::PhysicalDevice,
    pub name: String,
    pub vendor_id: u32,
    pub device_id: u32,
    device_type: vk::PhysicalDeviceType,
    pub(super) api_version: u32,
    pub driver_version: u32,
    pub driver_name: String,
    pub driver_info: String,
    pub device_uuid: [u8; 16],
    pub driver_uuid: [u8; 16],
    pub pipeline_cache_uuid: [u8; 16],
    pub device_luid: Option<[u8; 8]>,
    pub device_node_mask: u32,
    pub limits: Limits,
    pub max_memory_allocation_size: u64,
    /// VK_EXT_external_memory_host: host pointers and sizes imported must be multiples of this.
    pub min_imported_host_pointer_alignment: u64,
    /// VK_EXT_map_memory_placed: placed host addresses must be multiples of this.
    pub min_placed_memory_map_alignment: u64,
    pub subgroup_size: u32,
    pub min_subgroup_size: u32,
    pub max_subgroup_size: u32,
    pub subgroup_ops: SubgroupOps,
    pub(super) memory: vk::PhysicalDeviceMemoryProperties,
    pub queue_family: u32,
    pub timestamp_valid_bits: u32,
    pub features: Features,
    /// Compute units: from a vendor extension where the driver tells, else an estimate.
    pub compute_units: u32,
    /// What vkcl does differently on this device's driver.
    pub workarounds: super::workarounds::Workarounds,
    /// CL_DEVICE_MAX_CLOCK_FREQUENCY (MHz; 0 where not known), found on first use (NVML's
    /// initialisation takes tens of milliseconds).
    max_clock: std::sync::OnceLock<u32>,
}

impl Caps {
    /// The maximum clock in MHz (CL_DEVICE_MAX_CLOCK_FREQUENCY), 0 where not known.
    pub fn max_clock_mhz(&self) -> u32 {
        *self.max_clock.get_or_init(|| {
            super::clock::max_clock_mhz(self.vendor_id, &self.device_uuid, self.is_cpu())
        })
    }

    /// Atomics are sequentially consistent, and coherent with the host's atomics on the same
    /// memory, once seq_cst loads and stores are read-modify-writes: llvmpipe (lavapipe)
    /// makes every atomic read-modify-write and compare-exchange an LLVM seq_cst atomic on
    /// the host's memory and every memory barrier a seq_cst fence (Mesa's gallivm), whatever
    /// the SPIR-V semantics. Other drivers follow Vulkan's memory model, which treats
    /// SequentiallyConsistent as AcquireRelease.
    pub fn seq_cst_atomics(&self) -> bool {
        self.driver_name == "llvmpipe"
    }

    /// A CPU implementation (lavapipe, SwiftShader).
    pub fn is_cpu(&self) -> bool {
        self.device_type == vk::PhysicalDeviceType::CPU
    }

    pub fn is_gpu(&self) -> bool {
        matches!(
            self.device_type,
            vk::PhysicalDeviceType::DISCRETE_GPU
                | vk::PhysicalDeviceType::INTEGRATED_GPU
                | vk::PhysicalDeviceType::VIRTUAL_GPU
        )
    }

    /// The newest SPIR-V version the device consumes (1.6 from Vulkan 1.3, else 1.5).
    pub fn spirv_version(&self) -> (u32, u32) {
        if self.api_version >= vk::API_VERSION_1_3 {
            (1, 6)
        } else {
            (1, 5)
        }
    }

    /// The Vulkan version the device supports, as "Vulkan 1.3.280".
    pub fn vulkan_version(&self) -> String {
        let v = self.api_version;
        format!(
            "Vulkan {}.{}.{}",
            vk::api_version_major(v),
            vk::api_version_minor(v),
            vk::api_version_patch(v)
        )
    }

    /// The driver version as (major, minor, patch) in Vulkan's encoding.
    pub fn driver_version_parts(&self) -> [u32; 3] {
        let v = self.driver_version;
        [
            vk::api_version_major(v),
            vk::api_version_minor(v),
            vk::api_version_patch(v),
        ]
    }

    /// The size of the largest device-local heap (the device's global memory).
    pub fn global_mem_size(&self) -> u64 {
        let heaps = &self.memory.memory_heaps[..self.memory.memory_heap_count as usize];
        heaps
            .iter()
            .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .map(|h| h.size)
            .max()
            .or_else(|| heaps.iter().map(|h| h.size).max())
            .unwrap_or(0)
    }

    /// True when the device's memory is the host's (lavapipe, integrated GPUs), or when it has
    /// no device-local memory the host cannot see: then buffers are host-visible, zero-copy.
    pub fn unified_memory(&self) -> bool {
        let types = &self.memory.memory_types[..self.memory.memory_type_count as usize];
        let device_only = types.iter().any(|t| {
            t.property_flags
                .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
                && !t
                    .property_flags
                    .contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
        });
        self.device_type == vk::PhysicalDeviceType::CPU
            || self.device_type == vk::PhysicalDeviceType::INTEGRATED_GPU
            || !device_only
    }

    /// True when the host can map all of the device-local memory (resizable BAR: a
    /// device-local, host-visible memory type on the largest device-local heap), on a device
    /// whose memory is not unified.
    pub fn mappable_device_memory(&self) -> bool {
        let m = &self.memory;
        let heaps = &m.memory_heaps[..m.memory_heap_count as usize];
        let Some(largest) = (0..heaps.len())
            .filter(|&h| heaps[h].flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .max_by_key(|&h| heaps[h].size)
        else {
            return false;
        };
        let mapped = vk::MemoryPropertyFlags::DEVICE_LOCAL | vk::MemoryPropertyFlags::HOST_VISIBLE;
        !self.unified_memory()
            && m.memory_types[..m.memory_type_count as usize]
                .iter()
                .any(|t| t.heap_index as usize == largest && t.property_flags.contains(mapped))
    }

    /// Probes `pd`; Err says why vkcl cannot use it.
    pub(super) fn probe(instance: &Instance, pd: vk::PhysicalDevice) -> Result<Caps, String> {
        let inst = &instance.raw;
        let extensions = device_extensions(inst, pd)?;
        let has = |n: &CStr| extensions.contains(n.to_str().unwrap_or(""));
        let p = Properties::of(inst, pd, &has)?;
        let features = features(instance, pd, &has, p.props.api_version)?;
        let (queue_family, family) = compute_queue(inst, pd)?;
        // SAFETY: pd comes from this instance.
        let memory = unsafe { inst.get_physical_device_memory_properties(pd) };
        let props = &p.props;
        Ok(Caps {
            physical: pd,
            name: c_string(props.device_name_as_c_str()),
            vendor_id: props.vendor_id,
            device_id: props.device_id,
            device_type: props.device_type,
            api_version: props.api_version,
            driver_version: props.driver_version,
            driver_name: p.driver_name.clone(),
            driver_info: p.driver_info,
            device_uuid: p.device_uuid,
            driver_uuid: p.driver_uuid,
            pipeline_cache_uuid: props.pipeline_cache_uuid,
            device_luid: p.device_luid,
            device_node_mask: p.device_node_mask,
            limits: Limits::of(&props.limits),
            max_memory_allocation_size: p.max_memory_allocation_size,
            min_imported_host_pointer_alignment: p.min_imported_host_pointer_alignment,
            min_placed_memory_map_alignment: p.min_placed_memory_map_alignment,
            subgroup_size: p.subgroup_size,
            min_subgroup_size: p.min_subgroup_size,
            max_subgroup_size: p.max_subgroup_size,
            subgroup_ops: p.subgroup_ops,
            memory,
            queue_family,
            timestamp_valid_bits: family.timestamp_valid_bits,
            features,
            compute_units: p.compute_units,
            max_clock: std::sync::OnceLock::new(),
            workarounds: super::workarounds::Workarounds::for_device(
                props.vendor_id,
                props.device_type == vk::PhysicalDeviceType::CPU,
                &p.driver_name,
            ),
        })
    }
}

fn c_string(s: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    s.map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The names of the device's extensions.
fn device_extensions(
    inst: &ash::Instance,
    pd: vk::PhysicalDevice,
) -> Result<HashSet<String>, String> {
    // SAFETY: pd comes from this instance.
    let exts = unsafe { inst.enumerate_device_extension_properties(pd) }
        .map_err(|e| format!("extensions: {e}"))?;
    Ok(exts
        .iter()
        .filter_map(|e| e.extension_name_as_c_str().ok())
        .map(|n| n.to_string_lossy().into_owned())
        .collect())
}

/// Whether subgroup size control is available (core in 1.3, else the extension).
fn has_subgroup_size_control(api_version: u32, has: &dyn Fn(&CStr) -> bool) -> bool {
    api_version >= vk::API_VERSION_1_3 || has(ash::ext::subgroup_size_control::NAME)
}

/// The device's properties vkcl uses, out of the property structures' chain.
struct Properties {
    props: vk::PhysicalDeviceProperties,
    driver_name: String,
    driver_info: String,
    device_uuid: [u8; 16],
    driver_uuid: [u8; 16],
    device_luid: Option<[u8; 8]>,
    device_node_mask: u32,
    max_memory_allocation_size: u64,
    min_imported_host_pointer_alignment: u64,
    min_placed_memory_map_alignment: u64,
    subgroup_size: u32,
    min_subgroup_size: u32,
    max_subgroup_size: u32,
    subgroup_ops: SubgroupOps,
    compute_units: u32,
}

impl Properties {
    /// Err for a device below Vulkan 1.2.
    fn of(
        inst: &ash::Instance,
        pd: vk::PhysicalDevice,
        has: &dyn Fn(&CStr) -> bool,
    ) -> Result<Properties, String> {
        // SAFETY: pd comes from this instance.
        let api_version = unsafe { inst.get_physical_device_properties(pd) }.api_version;
        if api_version < vk::API_VERSION_1_2 {
            return Err(format!(
                "Vulkan {}.{} (vkcl needs 1.2)",
                vk::api_version_major(api_version),
                vk::api_version_minor(api_version)
            ));
        }
        let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
        let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
        let mut p13 = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
        let mut m3 = vk::PhysicalDeviceMaintenance3Properties::default();
        let mut sm = vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV::default();
        let mut amd = vk::PhysicalDeviceShaderCorePropertiesAMD::default();
        let mut emh = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut placed = vk::PhysicalDeviceMapMemoryPlacedPropertiesEXT::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut p11)
            .push_next(&mut p12)
            .push_next(&mut m3);
        let sgsc = has_subgroup_size_control(api_version, has);
        if sgsc {
            props2 = props2.push_next(&mut p13);
        }
        let has_sm = has(ash::nv::shader_sm_builtins::NAME);
        if has_sm {
            props2 = props2.push_next(&mut sm);
        }
        let has_amd = has(ash::amd::shader_core_properties::NAME);
        if has_amd {
            props2 = props2.push_next(&mut amd);
        }
        if has(ash::ext::external_memory_host::NAME) {
            props2 = props2.push_next(&mut emh);
        }
        if has(ash::ext::map_memory_placed::NAME) {
            props2 = props2.push_next(&mut placed);
        }
        // SAFETY: every chained struct is valid for this device's version / extensions.
        unsafe { inst.get_physical_device_properties2(pd, &mut props2) };
        let props = props2.properties;
        let compute_units = if has_sm {
            sm.shader_sm_count
        } else if has_amd {
            amd.shader_engine_count
                * amd.shader_arrays_per_engine_count
                * amd.compute_units_per_shader_array
        } else if props.device_type == vk::PhysicalDeviceType::CPU {
            // lavapipe runs one thread per CPU.
            std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1)
        } else {
            // A sound floor: a GPU runs at least as many groups at once as it has
            // subgroups per maximal work-group.
            (props.limits.max_compute_work_group_invocations / p11.subgroup_size.max(1)).max(1)
        }
        .max(1);
        let (min_subgroup_size, max_subgroup_size) = if sgsc {
            (p13.min_subgroup_size, p13.max_subgroup_size)
        } else {
            (p11.subgroup_size, p11.subgroup_size)
        };
        Ok(Properties {
            props,
            driver_name: c_string(p12.driver_name_as_c_str()),
            driver_info: c_string(p12.driver_info_as_c_str()),
            device_uuid: p11.device_uuid,
            driver_uuid: p11.driver_uuid,
            device_luid: (p11.device_luid_valid != 0).then_some(p11.device_luid),
            device_node_mask: p11.device_node_mask,
            max_memory_allocation_size: m3.max_memory_allocation_size,
            min_imported_host_pointer_alignment: emh.min_imported_host_pointer_alignment.max(1),
            min_placed_memory_map_alignment: placed.min_placed_memory_map_alignment.max(1),
            subgroup_size: p11.subgroup_size,
            min_subgroup_size,
            max_subgroup_size,
            subgroup_ops: SubgroupOps::of(p11.subgroup_supported_operations),
            compute_units,
        })
    }
}

/// VK_EXT_shader_atomic_float's `shader{Buffer,Shared}Float{32,64}Atomics`: atomic load,
/// store and exchange of floats and doubles in storage buffers and workgroup memory (clspv
/// emits them for `atomic_float` and `atomic_double`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FloatAtomics {
    pub buffer32: bool,
    pub buffer64: bool,
    pub shared32: bool,
    pub shared64: bool,
}

impl FloatAtomics {
    /// Any of them: the extension is enabled.
    pub fn any(&self) -> bool {
        self.buffer32 || self.buffer64 || self.shared32 || self.shared64
    }
}

/// The optional features vkcl uses; Err where a feature vkcl needs is missing.
fn features(
    instance: &Instance,
    pd: vk::PhysicalDevice,
    has: &dyn Fn(&CStr) -> bool,
    api_version: u32,
) -> Result<Features, String> {
    let inst = &instance.raw;
    let sgsc = has_subgroup_size_control(api_version, has);
    let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut fsg = vk::PhysicalDeviceSubgroupSizeControlFeatures::default();
    let mut fplaced = vk::PhysicalDeviceMapMemoryPlacedFeaturesEXT::default();
    let mut feats2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut f11)
        .push_next(&mut f12);
    if sgsc {
        feats2 = feats2.push_next(&mut fsg);
    }
    let placed = has(ash::ext::map_memory_placed::NAME) && has(ash::khr::map_memory2::NAME);
    if placed {
        feats2 = feats2.push_next(&mut fplaced);
    }
    let mut fexec = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
    let executables = has(ash::khr::pipeline_executable_properties::NAME);
    if executables {
        feats2 = feats2.push_next(&mut fexec);
    }
    let mut ffloat = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
    let float_atomics = has(ash::ext::shader_atomic_float::NAME);
    if float_atomics {
        feats2 = feats2.push_next(&mut ffloat);
    }
    // SAFETY: pd comes from this instance; every chained struct is valid for its version.
    unsafe { inst.get_physical_device_features2(pd, &mut feats2) };
    let f = feats2.features;

    if f12.timeline_semaphore == 0 {
        return Err("no timelineSemaphore".into());
    }
    if f11.variable_pointers_storage_buffer == 0 {
        return Err("no variablePointersStorageBuffer (clspv needs it)".into());
    }
    let non_semantic =
        api_version >= vk::API_VERSION_1_3 || has(ash::khr::shader_non_semantic_info::NAME);
    if !non_semantic {
        return Err("no VK_KHR_shader_non_semantic_info".into());
    }
    let has_emh = has(ash::ext::external_memory_host::NAME);
    let domains = if has(ash::ext::calibrated_timestamps::NAME) {
        let ext = ash::ext::calibrated_timestamps::Instance::new(&instance.entry, inst);
        // SAFETY: pd comes from this instance; the extension is supported.
        unsafe { ext.get_physical_device_calibrateable_time_domains(pd) }.unwrap_or_default()
    } else {
        vec![]
    };
    Ok(Features {
        int8: f12.shader_int8 != 0,
        int16: f.shader_int16 != 0,
        int64: f.shader_int64 != 0,
        float16: f12.shader_float16 != 0,
        float64: f.shader_float64 != 0,
        int64_atomics_buffer: f12.shader_buffer_int64_atomics != 0,
        int64_atomics_shared: f12.shader_shared_int64_atomics != 0,
        float_atomics: FloatAtomics {
            buffer32: float_atomics && ffloat.shader_buffer_float32_atomics != 0,
            buffer64: float_atomics && ffloat.shader_buffer_float64_atomics != 0,
            shared32: float_atomics && ffloat.shader_shared_float32_atomics != 0,
            shared64: float_atomics && ffloat.shader_shared_float64_atomics != 0,
        },
        storage_buffer8: f12.storage_buffer8_bit_access != 0,
        uniform8: f12.uniform_and_storage_buffer8_bit_access != 0,
        push_constant8: f12.storage_push_constant8 != 0,
        storage_buffer16: f11.storage_buffer16_bit_access != 0,
        uniform16: f11.uniform_and_storage_buffer16_bit_access != 0,
        push_constant16: f11.storage_push_constant16 != 0,
        uniform_standard_layout: f12.uniform_buffer_standard_layout != 0,
        buffer_device_address: f12.buffer_device_address != 0,
        host_query_reset: f12.host_query_reset != 0,
        storage_image_read_without_format: f.shader_storage_image_read_without_format != 0,
        storage_image_write_without_format: f.shader_storage_image_write_without_format != 0,
        subgroup_size_control: sgsc && fsg.subgroup_size_control != 0,
        subgroup_extended_types: f12.shader_subgroup_extended_types != 0,
        external_memory_host: has_emh && host_import_supported(inst, pd),
        external_memory_fd: has(ash::khr::external_memory_fd::NAME)
            && fd_sharing_supported(inst, pd),
        map_memory_placed: placed && fplaced.memory_map_placed != 0,
        memory_unmap_reserve: placed && fplaced.memory_unmap_reserve != 0,
        pipeline_statistics: executables && fexec.pipeline_executable_info != 0,
        calibrated_timestamps: domains.contains(&vk::TimeDomainEXT::DEVICE),
        calibrated_monotonic: domains.contains(&vk::TimeDomainEXT::DEVICE)
            && domains.contains(&vk::TimeDomainEXT::CLOCK_MONOTONIC),
    })
}

/// The queue family vkcl uses: a compute queue, preferably of a family that also does
/// graphics (it is the main queue and supports timestamps everywhere).
fn compute_queue(
    inst: &ash::Instance,
    pd: vk::PhysicalDevice,
) -> Result<(u32, vk::QueueFamilyProperties), String> {
    // SAFETY: pd comes from this instance.
    let families = unsafe { inst.get_physical_device_queue_family_properties(pd) };
    let (index, family) = families
        .iter()
        .enumerate()
        .filter(|(_, q)| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .max_by_key(|(_, q)| q.queue_flags.contains(vk::QueueFlags::GRAPHICS) as u32)
        .ok_or("no compute queue")?;
    Ok((index as u32, *family))
}

/// Whether buffers with vkcl's usage can be bound to imported host allocations.
fn host_import_supported(inst: &ash::Instance, pd: vk::PhysicalDevice) -> bool {
    let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
    external_buffer_features(inst, pd, handle).contains(vk::ExternalMemoryFeatureFlags::IMPORTABLE)
}

fn fd_sharing_supported(inst: &ash::Instance, pd: vk::PhysicalDevice) -> bool {
    use vk::ExternalMemoryFeatureFlags as F;
    let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
    external_buffer_features(inst, pd, handle).contains(F::EXPORTABLE | F::IMPORTABLE)
}

/// What buffers of vkcl's usage can do with memory of `handle` type.
fn external_buffer_features(
    inst: &ash::Instance,
    pd: vk::PhysicalDevice,
    handle: vk::ExternalMemoryHandleTypeFlags,
) -> vk::ExternalMemoryFeatureFlags {
    let info = vk::PhysicalDeviceExternalBufferInfo::default()
        .usage(super::memory::BUFFER_USAGE)
        .handle_type(handle);
    let mut props = vk::ExternalBufferProperties::default();
    // SAFETY: pd comes from this instance; Vulkan 1.1+ core query.
    unsafe { inst.get_physical_device_external_buffer_properties(pd, &info, &mut props) };
    props.external_memory_properties.external_memory_features
}

// SAFETY: the probed values are plain data; the only pointers (p_next) are null.
unsafe impl Send for Caps {}
// SAFETY: as above.
unsafe impl Sync for Caps {}
