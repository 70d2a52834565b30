//! Shader modules, kernel layouts (descriptor-set and pipeline layouts) and compute pipelines.

use super::device::Device;
use super::submit::SetCache;
use super::vk;
use crate::core::CLResult;
use std::ffi::CString;
use std::sync::Arc;

pub struct ShaderModule {
    device: Arc<Device>,
    pub raw: vk::ShaderModule,
}

impl ShaderModule {
    pub fn new(device: &Arc<Device>, spirv: &[u32]) -> CLResult<ShaderModule> {
        let info = vk::ShaderModuleCreateInfo::default().code(spirv);
        // SAFETY: valid device; the code is clspv output (validated SPIR-V).
        let raw = unsafe { device.raw.create_shader_module(&info, None) }?;
        Ok(ShaderModule {
            device: device.clone(),
            raw,
        })
    }
}

/// The module with `entry` as its only entry point: the other kernels' OpEntryPoint and
/// OpExecutionMode(Id) instructions and their clspv reflection removed (their functions stay,
/// uncalled). NVIDIA's driver (580.159.04) crashed compiling one kernel of a module whose other
/// kernel tripped it (docs/PIPES.md); each pipeline now sees its own kernel only. The module is
/// returned as it is if it cannot be read or has no such entry point.
pub fn only_entry_point(spirv: &[u32], entry: &str) -> Vec<u32> {
    const OP_EXT_INST_IMPORT: u32 = 11;
    const OP_EXT_INST: u32 = 12;
    const OP_ENTRY_POINT: u32 = 15;
    const OP_EXECUTION_MODE: u32 = 16;
    const OP_EXECUTION_MODE_ID: u32 = 331;
    const REFLECTION_KERNEL: u32 = 1;
    const HEADER: usize = 5;
    let string = |operands: &[u32]| -> Vec<u8> {
        operands
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .take_while(|&b| b != 0)
            .collect()
    };
    // The instructions, or None if the stream is malformed.
    let mut insts = vec![];
    let mut at = HEADER;
    while at < spirv.len() {
        let count = (spirv[at] >> 16) as usize;
        if count == 0 || at + count > spirv.len() {
            return spirv.to_vec();
        }
        insts.push(&spirv[at..at + count]);
        at += count;
    }
    let op = |i: &[u32]| i[0] & 0xffff;
    let mut functions = vec![]; // the other kernels' functions
    let mut reflection = None; // the ClspvReflection import
    let mut found = false;
    for i in &insts {
        match op(i) {
            OP_ENTRY_POINT if i.len() >= 4 => {
                if string(&i[3..]) == entry.as_bytes() {
                    found = true;
                } else {
                    functions.push(i[2]);
                }
            }
            OP_EXT_INST_IMPORT if i.len() >= 3 => {
                if string(&i[2..]).starts_with(b"NonSemantic.ClspvReflection") {
                    reflection = Some(i[1]);
                }
            }
            _ => {}
        }
    }
    if !found || spirv.len() < HEADER {
        return spirv.to_vec();
    }
    // The reflection's Kernel declarations of those functions: what the rest refers to.
    let is_reflection =
        |i: &[u32]| op(i) == OP_EXT_INST && i.len() >= 6 && Some(i[3]) == reflection;
    let decls: Vec<u32> = insts
        .iter()
        .filter(|i| is_reflection(i) && i[4] == REFLECTION_KERNEL && functions.contains(&i[5]))
        .map(|i| i[2])
        .collect();
    let mut out = spirv[..HEADER].to_vec();
    for i in insts {
        let drop = match op(i) {
            OP_ENTRY_POINT => functions.contains(&i[2]),
            OP_EXECUTION_MODE | OP_EXECUTION_MODE_ID => functions.contains(&i[1]),
            _ if is_reflection(i) => decls.contains(&i[2]) || decls.contains(&i[5]),
            _ => false,
        };
        if !drop {
            out.extend_from_slice(i);
        }
    }
    out
}

impl Drop for ShaderModule {
    fn drop(&mut self) {
        // SAFETY: pipelines created from the module do not need it any more.
        unsafe { self.device.raw.destroy_shader_module(self.raw, None) };
    }
}

/// The descriptor types of one set, by binding.
pub type SetBindings = Vec<(u32, vk::DescriptorType)>;

/// Descriptor-set layouts (sets 0..n, empty where unused) and the pipeline layout of a kernel.
pub struct KernelLayout {
    device: Arc<Device>,
    pub sets: Vec<SetBindings>,
    pub set_layouts: Vec<vk::DescriptorSetLayout>,
    pub pipeline_layout: vk::PipelineLayout,
    pub push_constant_size: u32,
    /// Descriptor sets of these layouts, reused from launch to launch.
    pub set_cache: Arc<SetCache>,
}

impl KernelLayout {
    pub fn new(
        device: &Arc<Device>,
        sets: Vec<SetBindings>,
        push_constant_size: u32,
    ) -> CLResult<KernelLayout> {
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
                        .descriptor_type(ty)
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

    /// A compute pipeline for `entry` with these specialisation constants (id, value).
    pub fn pipeline(
        &self,
        module: &ShaderModule,
        entry: &str,
        spec: &[(u32, u32)],
    ) -> CLResult<Pipeline> {
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
        let info = vk::ComputePipelineCreateInfo::default()
            .flags(vk::PipelineCreateFlags::DISPATCH_BASE)
            .stage(stage)
            .layout(self.pipeline_layout);
        // SAFETY: valid module, layout and cache of this device.
        let raw = unsafe {
            self.device
                .raw
                .create_compute_pipelines(self.device.pipeline_cache, &[info], None)
        }
        .map_err(|(_, e)| e)?;
        Device::pipelines_added(&self.device);
        Ok(Pipeline {
            device: self.device.clone(),
            raw: raw[0],
        })
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
    pub raw: vk::Pipeline,
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // SAFETY: commands using the pipeline hold an Arc to it until they complete.
        unsafe { self.device.raw.destroy_pipeline(self.raw, None) };
    }
}
