//! Shader modules, kernel layouts (descriptor-set and pipeline layouts) and compute pipelines.

use super::device::Device;
use super::submit::SetCache;
use super::vk;
use super::Result;
use std::ffi::CString;
use std::sync::Arc;

pub struct ShaderModule {
    device: Arc<Device>,
    pub(super) raw: vk::ShaderModule,
}

impl ShaderModule {
    pub fn new(device: &Arc<Device>, spirv: &[u32]) -> Result<ShaderModule> {
        let info = vk::ShaderModuleCreateInfo::default().code(spirv);
        // SAFETY: valid device; the code is clspv output (validated SPIR-V).
        let raw = unsafe { device.raw.create_shader_module(&info, None) }?;
        Ok(ShaderModule {
            device: device.clone(),
            raw,
        })
    }
}

impl Drop for ShaderModule {
    fn drop(&mut self) {
        // SAFETY: pipelines created from the module do not need it any more.
        unsafe { self.device.raw.destroy_shader_module(self.raw, None) };
    }
}

/// The kind of a kernel's descriptor (what clspv's reflection says an argument is bound as).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Descriptor {
    StorageBuffer,
    UniformBuffer,
    SampledImage,
    StorageImage,
    Sampler,
    UniformTexelBuffer,
    StorageTexelBuffer,
}

impl Descriptor {
    pub(super) fn vk(self) -> vk::DescriptorType {
        use vk::DescriptorType as T;
        match self {
            Descriptor::StorageBuffer => T::STORAGE_BUFFER,
            Descriptor::UniformBuffer => T::UNIFORM_BUFFER,
            Descriptor::SampledImage => T::SAMPLED_IMAGE,
            Descriptor::StorageImage => T::STORAGE_IMAGE,
            Descriptor::Sampler => T::SAMPLER,
            Descriptor::UniformTexelBuffer => T::UNIFORM_TEXEL_BUFFER,
            Descriptor::StorageTexelBuffer => T::STORAGE_TEXEL_BUFFER,
        }
    }
}

/// The descriptor kinds of one set, by binding.
pub type SetBindings = Vec<(u32, Descriptor)>;

/// Descriptor-set layouts (sets 0..n, empty where unused) and the pipeline layout of a kernel.
pub struct KernelLayout {
    device: Arc<Device>,
    pub sets: Vec<SetBindings>,
    pub(super) set_layouts: Vec<vk::DescriptorSetLayout>,
    pub(super) pipeline_layout: vk::PipelineLayout,
    pub push_constant_size: u32,
    /// Descriptor sets of these layouts, reused from launch to launch.
    pub(super) set_cache: Arc<SetCache>,
}

impl KernelLayout {
    pub fn new(
        device: &Arc<Device>,
        sets: Vec<SetBindings>,
        push_constant_size: u32,
    ) -> Result<KernelLayout> {
        let mut layout = KernelLayout {
            device: device.clone(),
            sets: vec![],
            set_layouts: vec![],
            pipeline_layout: vk::PipelineLayout::null(),
            push_constant_size,
            set_cache: SetCache::new(device, &sets),
        };
        for set in &sets {
            let bindings: Vec<_> = set
                .iter()
                .map(|&(binding, ty)| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(binding)
                        .descriptor_type(ty.vk())
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
            // SAFETY: valid device and create info; destroyed in Drop (also on error below).
            layout
                .set_layouts
                .push(unsafe { device.raw.create_descriptor_set_layout(&info, None) }?);
        }
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(push_constant_size)];
        let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&layout.set_layouts);
        if push_constant_size > 0 {
            info = info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid device, layouts created above.
        layout.pipeline_layout = unsafe { device.raw.create_pipeline_layout(&info, None) }?;
        layout.sets = sets;
        Ok(layout)
    }

    /// The number of descriptor sets (0..n).
    pub fn set_count(&self) -> usize {
        self.set_layouts.len()
    }

    /// A compute pipeline for `entry` with these specialisation constants (id, value).
    pub fn pipeline(
        &self,
        module: &ShaderModule,
        entry: &str,
        spec: &[(u32, u32)],
    ) -> Result<Pipeline> {
        let entries: Vec<_> = spec
            .iter()
            .enumerate()
            .map(|(i, &(id, _))| vk::SpecializationMapEntry {
                constant_id: id,
                offset: 4 * i as u32,
                size: 4,
            })
            .collect();
        let data: Vec<u8> = spec.iter().flat_map(|&(_, v)| v.to_ne_bytes()).collect();
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let name = CString::new(entry).unwrap_or_default();
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module.raw)
            .name(&name)
            .specialization_info(&spec_info);
        let mut flags = vk::PipelineCreateFlags::DISPATCH_BASE;
        if self.device.statistics.is_some() {
            flags |= vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR;
        }
        let info = vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(self.pipeline_layout);
        let start = std::time::Instant::now();
        // SAFETY: valid module, layout and cache of this device.
        let raw = unsafe {
            self.device
                .raw
                .create_compute_pipelines(self.device.pipeline_cache, &[info], None)
        }
        .map_err(|(_, e)| e)?;
        log::debug!(
            target: "pipeline",
            "{entry} {spec:?}: created in {:.2} ms",
            1e3 * start.elapsed().as_secs_f64()
        );
        if let Some(ext) = &self.device.statistics {
            log_statistics(ext, raw[0], entry, spec);
        }
        Device::pipelines_added(&self.device);
        Ok(Pipeline {
            device: self.device.clone(),
            raw: raw[0],
        })
    }
}

/// Logs the driver's statistics of each executable of `pipeline` (VKCL_PIPELINE_STATS; target
/// `pipeline`, level info), e.g. NVIDIA's register count, to compare the code of two kernels.
fn log_statistics(
    ext: &ash::khr::pipeline_executable_properties::Device,
    pipeline: vk::Pipeline,
    entry: &str,
    spec: &[(u32, u32)],
) {
    let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
    // SAFETY: the pipeline was created with CAPTURE_STATISTICS by this device.
    let count = unsafe { ext.get_pipeline_executable_properties(&info) }.map_or(0, |p| p.len());
    for index in 0..count as u32 {
        let info = vk::PipelineExecutableInfoKHR::default()
            .pipeline(pipeline)
            .executable_index(index);
        // SAFETY: as above; the index is one of the pipeline's executables.
        let Ok(stats) = (unsafe { ext.get_pipeline_executable_statistics(&info) }) else {
            continue;
        };
        let figures: Vec<String> = stats
            .iter()
            .map(|s| {
                let name = s
                    .name_as_c_str()
                    .map(|c| c.to_string_lossy())
                    .unwrap_or_default();
                // SAFETY: the union's member is the one `format` names.
                let value = unsafe {
                    match s.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => s.value.b32.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                        _ => s.value.f64.to_string(),
                    }
                };
                format!("{name} {value}")
            })
            .collect();
        log::info!(target: "pipeline", "{entry} {spec:?}: {}", figures.join(", "));
    }
}

impl Drop for KernelLayout {
    fn drop(&mut self) {
        // SAFETY: no pipeline or command using the layouts is still alive (they hold Arcs).
        unsafe {
            self.device
                .raw
                .destroy_pipeline_layout(self.pipeline_layout, None);
            for &l in &self.set_layouts {
                self.device.raw.destroy_descriptor_set_layout(l, None);
            }
        }
    }
}

pub struct Pipeline {
    device: Arc<Device>,
    pub(super) raw: vk::Pipeline,
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // SAFETY: commands using the pipeline hold an Arc to it until they complete.
        unsafe { self.device.raw.destroy_pipeline(self.raw, None) };
    }
}
