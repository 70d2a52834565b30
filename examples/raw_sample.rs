//! Issue 16: sampled reads through plain Vulkan (ash), no vkcl, to tell a driver's sampling
//! precision from vkcl's coordinate math. A 2x1 image (texels lo, hi), an unnormalized sampler,
//! one `textureLod` per coordinate (examples/raw_sample.comp, compiled at run time with
//! `glslangValidator`), compared on the host with the exact weighted sum of the OpenCL C
//! specification's linear filter (`u - 0.5`, `a = frac(u - 0.5)`, `(1 - a) * T0 + a * T1`) or
//! the nearest texel's `field / (2^n - 1)`. Prints the largest error of each case:
//!
//! - R8G8B8A8_UNORM texels 0/255 and 51/153, LINEAR, CLAMP_TO_EDGE and CLAMP_TO_BORDER, 1,000
//!   coordinates between the two texel centres;
//! - R5G6B5_UNORM_PACK16 texels (1, 1, 1) and (13, 45, 30), NEAREST at the centres, the same two
//!   addressing modes.
//!
//!     glslangValidator must be on PATH; cargo run --example raw_sample [DEVICE SUBSTRING]
//!
//! Also each case through a normalized sampler whose minification filter differs from its
//! magnification one (reads at lod 0 use the latter): lavapipe then leaves its AoS path too.
//! Run under `GALLIVM_PERF=no_aos_sampling` as well, to see lavapipe's AoS sampling path off.

use ash::vk;
use std::ffi::CString;

type Res<T> = Result<T, String>;

fn vkr(what: &'static str) -> impl Fn(vk::Result) -> String {
    move |e| format!("{what}: {e}")
}

fn main() {
    if let Err(e) = run() {
        eprintln!("raw_sample: {e}");
        std::process::exit(1);
    }
}

struct Gpu {
    instance: ash::Instance,
    pd: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
    _entry: ash::Entry,
}

impl Gpu {
    fn new(want: Option<&str>) -> Res<Gpu> {
        let entry = unsafe { ash::Entry::load() }.map_err(|e| e.to_string())?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(vkr("vkCreateInstance"))?;
        let pds = unsafe { instance.enumerate_physical_devices() }.map_err(vkr("enumerate"))?;
        for pd in pds {
            let props = unsafe { instance.get_physical_device_properties(pd) };
            let name = props
                .device_name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            if want.is_some_and(|w| !name.contains(w)) {
                continue;
            }
            let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
            let Some(family) = families
                .iter()
                .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            else {
                continue;
            };
            let prio = [1.0];
            let q = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family as u32)
                .queue_priorities(&prio)];
            let info = vk::DeviceCreateInfo::default().queue_create_infos(&q);
            let device = unsafe { instance.create_device(pd, &info, None) }
                .map_err(vkr("vkCreateDevice"))?;
            let queue = unsafe { device.get_device_queue(family as u32, 0) };
            println!("device: {name}");
            return Ok(Gpu {
                instance,
                pd,
                device,
                queue,
                family: family as u32,
                _entry: entry,
            });
        }
        Err("no Vulkan device with a compute queue".into())
    }

    fn memory(&self, req: vk::MemoryRequirements, host: bool) -> Res<vk::DeviceMemory> {
        let props = unsafe { self.instance.get_physical_device_memory_properties(self.pd) };
        let want = if host {
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT
        } else {
            vk::MemoryPropertyFlags::empty()
        };
        let index = (0..props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize].property_flags.contains(want)
            })
            .ok_or("no memory type")?;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index);
        unsafe { self.device.allocate_memory(&info, None) }.map_err(vkr("vkAllocateMemory"))
    }

    /// A host-visible buffer holding `bytes` (or `bytes.len()` zeroes), and its mapping.
    fn buffer(&self, bytes: &[u8], usage: vk::BufferUsageFlags) -> Res<(vk::Buffer, *mut u8)> {
        let info = vk::BufferCreateInfo::default()
            .size(bytes.len() as u64)
            .usage(usage);
        let d = &self.device;
        let b = unsafe { d.create_buffer(&info, None) }.map_err(vkr("vkCreateBuffer"))?;
        let mem = self.memory(unsafe { d.get_buffer_memory_requirements(b) }, true)?;
        unsafe { d.bind_buffer_memory(b, mem, 0) }.map_err(vkr("bind"))?;
        let p = unsafe { d.map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
            .map_err(vkr("vkMapMemory"))? as *mut u8;
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok((b, p))
    }

    /// Records `f` into a one-time command buffer, submits it and waits.
    fn submit(&self, f: impl FnOnce(vk::CommandBuffer)) -> Res<()> {
        let d = &self.device;
        let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(self.family);
        let pool = unsafe { d.create_command_pool(&pool_info, None) }.map_err(vkr("pool"))?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .command_buffer_count(1);
        let cmd = unsafe { d.allocate_command_buffers(&alloc) }.map_err(vkr("cmd"))?[0];
        unsafe {
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .map_err(vkr("begin"))?;
            f(cmd);
            d.end_command_buffer(cmd).map_err(vkr("end"))?;
            let cmds = [cmd];
            let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
            d.queue_submit(self.queue, &submit, vk::Fence::null())
                .map_err(vkr("submit"))?;
            d.queue_wait_idle(self.queue).map_err(vkr("wait"))?;
            d.destroy_command_pool(pool, None);
        }
        Ok(())
    }

    /// A 2x1 sampled image of `format` holding `texels` (bytes), in SHADER_READ_ONLY_OPTIMAL.
    fn image(&self, format: vk::Format, texels: &[u8]) -> Res<vk::ImageView> {
        let d = &self.device;
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width: 2,
                height: 1,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST);
        let image = unsafe { d.create_image(&info, None) }.map_err(vkr("vkCreateImage"))?;
        let mem = self.memory(unsafe { d.get_image_memory_requirements(image) }, false)?;
        unsafe { d.bind_image_memory(image, mem, 0) }.map_err(vkr("bind"))?;
        let (staging, _) = self.buffer(texels, vk::BufferUsageFlags::TRANSFER_SRC)?;
        let range = vk::ImageSubresourceRange::default()
            .aspect_mask(vk::ImageAspectFlags::COLOR)
            .level_count(1)
            .layer_count(1);
        let barrier = |old, new, src, dst| {
            vk::ImageMemoryBarrier::default()
                .old_layout(old)
                .new_layout(new)
                .src_access_mask(src)
                .dst_access_mask(dst)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image)
                .subresource_range(range)
        };
        self.submit(|cmd| unsafe {
            let to_dst = barrier(
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::AccessFlags::empty(),
                vk::AccessFlags::TRANSFER_WRITE,
            );
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_dst],
            );
            let region = vk::BufferImageCopy::default()
                .image_subresource(
                    vk::ImageSubresourceLayers::default()
                        .aspect_mask(vk::ImageAspectFlags::COLOR)
                        .layer_count(1),
                )
                .image_extent(vk::Extent3D {
                    width: 2,
                    height: 1,
                    depth: 1,
                });
            d.cmd_copy_buffer_to_image(
                cmd,
                staging,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
            );
            let to_read = barrier(
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                vk::AccessFlags::TRANSFER_WRITE,
                vk::AccessFlags::SHADER_READ,
            );
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_read],
            );
        })?;
        let view = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(range);
        unsafe { d.create_image_view(&view, None) }.map_err(vkr("vkCreateImageView"))
    }

    /// `textureLod` of `view` through `sampler` at each of `coords`.
    fn sample(
        &self,
        spirv: &[u32],
        view: vk::ImageView,
        sampler: vk::Sampler,
        coords: &[[f32; 2]],
    ) -> Res<Vec<[f32; 4]>> {
        let d = &self.device;
        let n = coords.len();
        let cbytes: Vec<u8> = coords
            .iter()
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let (cbuf, _) = self.buffer(&cbytes, vk::BufferUsageFlags::STORAGE_BUFFER)?;
        let (obuf, out) = self.buffer(&vec![0; n * 16], vk::BufferUsageFlags::STORAGE_BUFFER)?;
        let bindings = [
            vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
            vk::DescriptorSetLayoutBinding::default()
                .binding(1)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
            vk::DescriptorSetLayoutBinding::default()
                .binding(2)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
        ];
        let dsl_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        let dsl = unsafe { d.create_descriptor_set_layout(&dsl_info, None) }.map_err(vkr("dsl"))?;
        let push = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(4)];
        let dsls = [dsl];
        let pl_info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&dsls)
            .push_constant_ranges(&push);
        let layout = unsafe { d.create_pipeline_layout(&pl_info, None) }.map_err(vkr("layout"))?;
        let module_info = vk::ShaderModuleCreateInfo::default().code(spirv);
        let module =
            unsafe { d.create_shader_module(&module_info, None) }.map_err(vkr("module"))?;
        let main = CString::new("main").unwrap();
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&main);
        let cp = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)];
        let pipeline = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &cp, None) }
            .map_err(|(_, e)| format!("pipeline: {e}"))?[0];
        let sizes = [
            vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .descriptor_count(1),
            vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(2),
        ];
        let pool_info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(1)
            .pool_sizes(&sizes);
        let pool = unsafe { d.create_descriptor_pool(&pool_info, None) }.map_err(vkr("dpool"))?;
        let alloc = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&dsls);
        let set = unsafe { d.allocate_descriptor_sets(&alloc) }.map_err(vkr("set"))?[0];
        let image_info = [vk::DescriptorImageInfo::default()
            .sampler(sampler)
            .image_view(view)
            .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)];
        let c_info = [vk::DescriptorBufferInfo::default()
            .buffer(cbuf)
            .range(vk::WHOLE_SIZE)];
        let o_info = [vk::DescriptorBufferInfo::default()
            .buffer(obuf)
            .range(vk::WHOLE_SIZE)];
        let writes = [
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .image_info(&image_info),
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(1)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&c_info),
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(2)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&o_info),
        ];
        unsafe { d.update_descriptor_sets(&writes, &[]) };
        self.submit(|cmd| unsafe {
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_push_constants(
                cmd,
                layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &(n as u32).to_le_bytes(),
            );
            d.cmd_dispatch(cmd, (n as u32).div_ceil(64), 1, 1);
        })?;
        let mut v = vec![[0f32; 4]; n];
        unsafe { std::ptr::copy_nonoverlapping(out, v.as_mut_ptr().cast(), n * 16) };
        Ok(v)
    }

    /// An unnormalized sampler, or with `min` a normalized one whose minification filter is
    /// `min` (reads at lod 0 are magnified, so `filter` is the one they use).
    fn sampler(
        &self,
        filter: vk::Filter,
        address: vk::SamplerAddressMode,
        min: Option<vk::Filter>,
    ) -> Res<vk::Sampler> {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(min.unwrap_or(filter))
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(address)
            .address_mode_v(address)
            .address_mode_w(address)
            .max_lod(0.0)
            .border_color(vk::BorderColor::FLOAT_TRANSPARENT_BLACK)
            .unnormalized_coordinates(min.is_none());
        unsafe { self.device.create_sampler(&info, None) }.map_err(vkr("vkCreateSampler"))
    }
}

fn spirv() -> Res<Vec<u32>> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/raw_sample.comp");
    let out = std::env::temp_dir().join(format!("raw_sample_{}.spv", std::process::id()));
    let status = std::process::Command::new("glslangValidator")
        .args(["-V", src, "-o"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("glslangValidator: {e}"))?;
    if !status.success() {
        return Err("glslangValidator failed".into());
    }
    let bytes = std::fs::read(&out).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&out);
    Ok(bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn run() -> Res<()> {
    let want = std::env::args().nth(1);
    let gpu = Gpu::new(want.as_deref())?;
    let spirv = spirv()?;
    let modes = [
        ("CLAMP_TO_EDGE", vk::SamplerAddressMode::CLAMP_TO_EDGE),
        ("CLAMP_TO_BORDER", vk::SamplerAddressMode::CLAMP_TO_BORDER),
    ];
    // Linear filtering of 8-bit unorm between the two texel centres.
    let coords: Vec<[f32; 2]> = (0..1000).map(|i| [0.5 + i as f32 / 1000.0, 0.5]).collect();
    let normalized: Vec<[f32; 2]> = coords.iter().map(|c| [c[0] / 2.0, c[1]]).collect();
    let variants = [
        ("", None),
        (
            ", normalized, min filter NEAREST",
            Some(vk::Filter::NEAREST),
        ),
    ];
    for (lo, hi) in [(0u8, 255u8), (51, 153)] {
        let view = gpu.image(
            vk::Format::R8G8B8A8_UNORM,
            &[lo, lo, lo, lo, hi, hi, hi, hi],
        )?;
        for ((name, mode), (variant, min)) in modes
            .into_iter()
            .flat_map(|m| variants.into_iter().map(move |v| (m, v)))
        {
            let s = gpu.sampler(vk::Filter::LINEAR, mode, min)?;
            let at = if min.is_some() { &normalized } else { &coords };
            let got = gpu.sample(&spirv, view, s, at)?;
            let (t0, t1) = (lo as f64 / 255.0, hi as f64 / 255.0);
            let worst = coords
                .iter()
                .zip(&got)
                .map(|(c, g)| {
                    let x = c[0] - 0.5;
                    let a = (x - x.floor()) as f64;
                    ((1.0 - a) * t0 + a * t1 - g[0] as f64).abs()
                })
                .fold(0.0, f64::max);
            println!(
                "R8G8B8A8_UNORM texels {lo}/{hi} LINEAR {name}{variant}: largest error {worst:.3e} ({:.3}/255)",
                worst * 255.0
            );
        }
    }
    // Nearest reads of 5- and 6-bit channels at the texel centres.
    let fields = [[1u16, 1, 1], [13, 45, 30]];
    let texels: Vec<u8> = fields
        .iter()
        .flat_map(|f| (f[0] << 11 | f[1] << 5 | f[2]).to_le_bytes())
        .collect();
    let view = gpu.image(vk::Format::R5G6B5_UNORM_PACK16, &texels)?;
    let variants = [
        ("", None),
        (", normalized, min filter LINEAR", Some(vk::Filter::LINEAR)),
    ];
    for ((name, mode), (variant, min)) in modes
        .into_iter()
        .flat_map(|m| variants.into_iter().map(move |v| (m, v)))
    {
        let s = gpu.sampler(vk::Filter::NEAREST, mode, min)?;
        let at = match min {
            Some(_) => [[0.25, 0.5], [0.75, 0.5]],
            None => [[0.5, 0.5], [1.5, 0.5]],
        };
        let got = gpu.sample(&spirv, view, s, &at)?;
        let mut worst: f64 = 0.0;
        for (f, g) in fields.iter().zip(&got) {
            for (c, bits) in [5, 6, 5].into_iter().enumerate() {
                let want = f[c] as f64 / ((1 << bits) - 1) as f64;
                worst = worst.max((g[c] as f64 - want).abs());
            }
        }
        println!(
            "R5G6B5_UNORM_PACK16 NEAREST {name}{variant}: {:?} / {:?}, largest error {worst:.3e}",
            &got[0][..3],
            &got[1][..3]
        );
    }
    Ok(())
}
