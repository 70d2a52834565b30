//! The raw-Vulkan baseline of vkcl-bench (docs/BENCHMARKS.md): dispatches the SPIR-V that vkcl
//! runs for two of vkcl-bench's kernels (memory/triad and compute/fma) through plain Vulkan
//! (ash), timed as vkcl-bench times them, so vkcl's own overhead can be told apart.
//!
//!     vkcl-bench --platform vkcl --write-overhead-kernels DIR [--quick]
//!     raw_vulkan DIR [--device SUBSTRING] [--json FILE]
//!     raw_vulkan --host-access [--device SUBSTRING]
//!
//! `--host-access` measures instead how fast the host writes and reads device-local memory it
//! maps (resizable BAR; docs/MEMORY.md): memcpy in and out, and reads with AVX2 streaming loads,
//! 4 KiB to 16 MiB.
//!
//! DIR holds vkcl program binaries (docs/BINARY.md) and params.txt (sizes, launches per sample,
//! seconds per sample, repetitions). The kernels' interfaces come from clspv's reflection
//! (vkcl's parser); descriptor sets, push constants and specialisation constants are set up
//! here by hand. Per sample: triad is one pre-recorded command buffer of `triad_launches`
//! dispatches with barriers between them, submitted and waited for; fma is one dispatch,
//! submitted and waited for; each repeated for at least `sample_s` seconds; cmdbuf is 1000
//! one-group triads in one pre-recorded command buffer, with or without barriers between them
//! (the floor under vkcl-bench's replayed command-buffers). Results are checked.
//! Buffers are device-local (host-visible too where the device has only such memory).

use ash::vk;
use std::collections::HashMap;
use std::ffi::CString;
use std::time::Instant;
use vkcl::compiler::reflection::{self, ArgKind, KernelReflection, PushRange, Reflection};

type Res<T> = Result<T, String>;

fn main() {
    if let Err(e) = run() {
        eprintln!("raw_vulkan: {e}");
        std::process::exit(1);
    }
}

struct Params(HashMap<String, String>);

impl Params {
    fn read(dir: &str) -> Res<Params> {
        let text =
            std::fs::read_to_string(format!("{dir}/params.txt")).map_err(|e| e.to_string())?;
        let map = text
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect();
        Ok(Params(map))
    }
    fn get<T: std::str::FromStr>(&self, key: &str) -> Res<T> {
        let v = self.0.get(key).ok_or(format!("params.txt has no {key}"))?;
        v.parse().map_err(|_| format!("params.txt: bad {key} {v}"))
    }
}

/// The SPIR-V section of a vkcl executable binary (docs/BINARY.md).
fn spirv_of_binary(path: &str) -> Res<Vec<u32>> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if !bytes.starts_with(b"VKCLPRG\0") || bytes.len() < 60 {
        return Err(format!("{path}: not a vkcl program binary"));
    }
    let u32_at = |at: usize| -> Res<u32> {
        let b = bytes.get(at..at + 4).ok_or(format!("{path}: truncated"))?;
        Ok(u32::from_le_bytes(b.try_into().unwrap()))
    };
    let mut at = 52;
    for _ in 0..3 {
        at += 4 + u32_at(at)? as usize; // options, compiler identity, clspv arguments
    }
    if u32_at(at)? < 1 {
        return Err(format!("{path}: no sections"));
    }
    let len = u32_at(at + 4)? as usize;
    let section = bytes
        .get(at + 8..at + 8 + len)
        .ok_or(format!("{path}: truncated"))?;
    vkcl::compiler::words(section).ok_or(format!("{path}: the section is not SPIR-V"))
}

struct Gpu {
    _entry: ash::Entry,
    _instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    name: String,
    /// Nanoseconds per timestamp tick.
    timestamp_period: f64,
    /// VK_EXT_calibrated_timestamps, where the device has it with CLOCK_MONOTONIC (--latency).
    calibration: Option<ash::ext::calibrated_timestamps::Device>,
}

fn vkr(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e:?}")
}

impl Gpu {
    fn new(want: Option<&str>) -> Res<Gpu> {
        // SAFETY: loads the system's Vulkan loader; nothing else touches it.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| e.to_string())?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: valid create info.
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(vkr("vkCreateInstance"))?;
        // SAFETY: valid instance.
        let physicals =
            unsafe { instance.enumerate_physical_devices() }.map_err(vkr("enumerate"))?;
        for pd in physicals {
            // SAFETY: pd comes from this instance.
            let props = unsafe { instance.get_physical_device_properties(pd) };
            let name = props
                .device_name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            if want.is_some_and(|w| !name.contains(w)) || props.api_version < vk::API_VERSION_1_2 {
                continue;
            }
            // SAFETY: as above.
            let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
            let Some(family) = families
                .iter()
                .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            else {
                continue;
            };
            // SAFETY: as above.
            let has_calibration = unsafe { instance.enumerate_device_extension_properties(pd) }
                .unwrap_or_default()
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::calibrated_timestamps::NAME));
            let monotonic = has_calibration && {
                let ext = ash::ext::calibrated_timestamps::Instance::new(&entry, &instance);
                // SAFETY: the device has the extension.
                unsafe { ext.get_physical_device_calibrateable_time_domains(pd) }
                    .unwrap_or_default()
                    .contains(&vk::TimeDomainEXT::CLOCK_MONOTONIC)
            };
            let device =
                Self::create_device(&instance, pd, family as u32, props.api_version, monotonic)?;
            let calibration =
                monotonic.then(|| ash::ext::calibrated_timestamps::Device::new(&instance, &device));
            // SAFETY: queue 0 of `family` was requested.
            let queue = unsafe { device.get_device_queue(family as u32, 0) };
            // SAFETY: as above.
            let memory = unsafe { instance.get_physical_device_memory_properties(pd) };
            return Ok(Gpu {
                _entry: entry,
                _instance: instance,
                device,
                queue,
                family: family as u32,
                memory,
                name,
                timestamp_period: props.limits.timestamp_period as f64,
                calibration,
            });
        }
        Err("no Vulkan 1.2 device with a compute queue".into())
    }

    /// A device with the features vkcl enables (src/vk/device.rs), where supported.
    fn create_device(
        instance: &ash::Instance,
        pd: vk::PhysicalDevice,
        family: u32,
        api: u32,
        calibration: bool,
    ) -> Res<ash::Device> {
        let mut s11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut s12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut s = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut s11)
            .push_next(&mut s12);
        // SAFETY: pd is valid; the chain is well-formed.
        unsafe { instance.get_physical_device_features2(pd, &mut s) };
        let fs = s.features;
        let features = vk::PhysicalDeviceFeatures {
            shader_int16: fs.shader_int16,
            shader_int64: fs.shader_int64,
            shader_float64: fs.shader_float64,
            ..Default::default()
        };
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(s11.storage_buffer16_bit_access != 0)
            .uniform_and_storage_buffer16_bit_access(
                s11.uniform_and_storage_buffer16_bit_access != 0,
            )
            .storage_push_constant16(s11.storage_push_constant16 != 0)
            .variable_pointers_storage_buffer(true)
            .variable_pointers(true);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .shader_int8(s12.shader_int8 != 0)
            .shader_float16(s12.shader_float16 != 0)
            .storage_buffer8_bit_access(s12.storage_buffer8_bit_access != 0)
            .uniform_and_storage_buffer8_bit_access(s12.uniform_and_storage_buffer8_bit_access != 0)
            .storage_push_constant8(s12.storage_push_constant8 != 0)
            .timeline_semaphore(true)
            .host_query_reset(s12.host_query_reset != 0);
        let mut exts = vec![];
        if calibration {
            exts.push(ash::ext::calibrated_timestamps::NAME.as_ptr());
        }
        if api < vk::API_VERSION_1_3 {
            exts.push(ash::khr::shader_non_semantic_info::NAME.as_ptr());
        }
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&exts)
            .enabled_features(&features)
            .push_next(&mut f11)
            .push_next(&mut f12);
        // SAFETY: the features enabled were queried as supported (variable pointers and
        // timeline semaphores are required by vkcl too).
        unsafe { instance.create_device(pd, &info, None) }.map_err(vkr("vkCreateDevice"))
    }

    fn memory_type(
        &self,
        bits: u32,
        want: vk::MemoryPropertyFlags,
        avoid: vk::MemoryPropertyFlags,
    ) -> Option<u32> {
        (0..self.memory.memory_type_count).find(|&i| {
            let flags = self.memory.memory_types[i as usize].property_flags;
            bits & (1 << i) != 0 && flags.contains(want) && !flags.intersects(avoid)
        })
    }

    fn buffer(&self, size: u64, host: bool) -> Res<Buffer> {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::UNIFORM_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        // SAFETY: valid device and create info.
        let raw =
            unsafe { self.device.create_buffer(&info, None) }.map_err(vkr("vkCreateBuffer"))?;
        // SAFETY: raw was created above.
        let req = unsafe { self.device.get_buffer_memory_requirements(raw) };
        let (dl, hv) = (
            vk::MemoryPropertyFlags::DEVICE_LOCAL,
            vk::MemoryPropertyFlags::HOST_VISIBLE,
        );
        let hc = hv | vk::MemoryPropertyFlags::HOST_COHERENT;
        let index = match host {
            true => self.memory_type(req.memory_type_bits, hc, vk::MemoryPropertyFlags::empty()),
            false => self.memory_type(req.memory_type_bits, dl, hv).or_else(|| {
                self.memory_type(req.memory_type_bits, dl, vk::MemoryPropertyFlags::empty())
            }),
        }
        .ok_or("no memory type")?;
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index);
        // SAFETY: valid allocate info.
        let memory = unsafe { self.device.allocate_memory(&alloc, None) }
            .map_err(vkr("vkAllocateMemory"))?;
        // SAFETY: the memory fits the buffer's requirements.
        unsafe { self.device.bind_buffer_memory(raw, memory, 0) }.map_err(vkr("bind"))?;
        Ok(Buffer { raw, memory, size })
    }

    /// Maps a host-visible buffer's memory.
    fn map(&self, b: &Buffer) -> Res<*mut u8> {
        // SAFETY: host-visible memory, not mapped elsewhere.
        let p = unsafe {
            self.device
                .map_memory(b.memory, 0, b.size, vk::MemoryMapFlags::empty())
        };
        p.map(|p| p as *mut u8).map_err(vkr("vkMapMemory"))
    }

    /// Records `record` into a one-time command buffer, submits it and waits.
    fn run_once(&self, pool: vk::CommandPool, record: impl FnOnce(vk::CommandBuffer)) -> Res<()> {
        let cb = self.command_buffer(pool)?;
        let begin = vk::CommandBufferBeginInfo::default();
        // SAFETY: cb is a fresh primary command buffer of this device.
        unsafe { self.device.begin_command_buffer(cb, &begin) }.map_err(vkr("begin"))?;
        record(cb);
        // SAFETY: recording.
        unsafe { self.device.end_command_buffer(cb) }.map_err(vkr("end"))?;
        let fence = self.fence()?;
        self.submit_wait(cb, fence)?;
        // SAFETY: the fence is signalled: nothing uses cb or the fence any more.
        unsafe {
            self.device.destroy_fence(fence, None);
            self.device.free_command_buffers(pool, &[cb]);
        }
        Ok(())
    }

    fn command_buffer(&self, pool: vk::CommandPool) -> Res<vk::CommandBuffer> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid pool.
        Ok(unsafe { self.device.allocate_command_buffers(&info) }.map_err(vkr("allocate"))?[0])
    }

    fn fence(&self) -> Res<vk::Fence> {
        // SAFETY: valid device.
        unsafe {
            self.device
                .create_fence(&vk::FenceCreateInfo::default(), None)
        }
        .map_err(vkr("fence"))
    }

    fn timeline(&self) -> Res<vk::Semaphore> {
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
        // SAFETY: valid device.
        unsafe { self.device.create_semaphore(&info, None) }.map_err(vkr("timeline"))
    }

    /// Submits `cb` signalling `timeline` to `value`, then polls the timeline until it gets there.
    /// `wait_previous`: the submission also waits (compute and transfer stages) for the
    /// timeline's previous value, already reached.
    fn submit_poll(
        &self,
        cb: vk::CommandBuffer,
        timeline: vk::Semaphore,
        value: u64,
        wait_previous: bool,
    ) -> Res<()> {
        let (cbs, sems, values, waits) = ([cb], [timeline], [value], [value - 1]);
        let stages = [vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER];
        let mut signal = vk::TimelineSemaphoreSubmitInfo::default()
            .signal_semaphore_values(&values)
            .wait_semaphore_values(if wait_previous { &waits } else { &[] });
        let submit = [vk::SubmitInfo::default()
            .command_buffers(&cbs)
            .signal_semaphores(&sems)
            .wait_semaphores(if wait_previous { &sems } else { &[] })
            .wait_dst_stage_mask(if wait_previous { &stages } else { &[] })
            .push_next(&mut signal)];
        // SAFETY: cb is executable and not pending (the previous submission was waited for).
        unsafe {
            self.device
                .queue_submit(self.queue, &submit, vk::Fence::null())
                .map_err(vkr("submit"))?;
            while self
                .device
                .get_semaphore_counter_value(timeline)
                .map_err(vkr("counter"))?
                < value
            {
                // Paced as vkcl's polls (src/core/queue.rs): back-to-back queries slow the
                // driver's own progress (NVIDIA: 48 µs round trips instead of 25).
                for _ in 0..64 {
                    std::hint::spin_loop();
                }
            }
        }
        Ok(())
    }

    fn submit_wait(&self, cb: vk::CommandBuffer, fence: vk::Fence) -> Res<()> {
        let cbs = [cb];
        let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
        // SAFETY: cb is executable, the fence unsignalled; waited for before returning.
        unsafe {
            self.device
                .queue_submit(self.queue, &submit, fence)
                .map_err(vkr("submit"))?;
            self.device
                .wait_for_fences(&[fence], true, u64::MAX)
                .map_err(vkr("wait"))?;
            self.device.reset_fences(&[fence]).map_err(vkr("reset"))
        }
    }
}

struct Buffer {
    raw: vk::Buffer,
    memory: vk::DeviceMemory,
    size: u64,
}

/// A kernel's pipeline and its one descriptor set, with its arguments bound.
struct Kernel {
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set: vk::DescriptorSet,
    push: Vec<u8>,
}

/// An argument value: a buffer, or the bytes of a by-value argument.
enum Arg<'a> {
    Buffer(&'a Buffer),
    Pod(&'a [u8]),
}

fn write_range(push: &mut Vec<u8>, range: Option<PushRange>, values: [u32; 3]) {
    if let Some(r) = range {
        for (i, v) in values.iter().take(r.size as usize / 4).enumerate() {
            put(push, r.offset as usize + 4 * i, &v.to_le_bytes());
        }
    }
}

fn put(dst: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    if dst.len() < at + bytes.len() {
        dst.resize(at + bytes.len(), 0);
    }
    dst[at..at + bytes.len()].copy_from_slice(bytes);
}

impl Kernel {
    /// `groups` work-groups of `local` work-items, one dimension.
    fn new(
        gpu: &Gpu,
        spirv: &[u32],
        refl: &Reflection,
        name: &str,
        args: &[Arg],
        local: u32,
        groups: u32,
    ) -> Res<Kernel> {
        let k: &KernelReflection = refl
            .kernels
            .iter()
            .find(|k| k.name == name)
            .ok_or(format!("no kernel {name}"))?;
        let d = &gpu.device;
        // Descriptors of set 0: buffer arguments, and the buffer clustering POD arguments.
        let mut bindings: Vec<(u32, vk::DescriptorType, vk::Buffer)> = vec![];
        let mut push = vec![0u8; refl.push_constant_size as usize];
        let mut pod_buffer: Option<(u32, vk::DescriptorType, Vec<u8>)> = None;
        for (arg, value) in k.args.iter().zip(args) {
            match (arg.kind, value) {
                (ArgKind::StorageBuffer { set: 0, binding }, Arg::Buffer(b)) => {
                    bindings.push((binding, vk::DescriptorType::STORAGE_BUFFER, b.raw))
                }
                (ArgKind::PodPushConstant { offset, .. }, Arg::Pod(v)) => {
                    put(&mut push, offset as usize, v)
                }
                (
                    ArgKind::PodStorageBuffer {
                        set: 0,
                        binding,
                        offset,
                        ..
                    },
                    Arg::Pod(v),
                )
                | (
                    ArgKind::PodUniform {
                        set: 0,
                        binding,
                        offset,
                        ..
                    },
                    Arg::Pod(v),
                ) => {
                    let ty = match arg.kind {
                        ArgKind::PodUniform { .. } => vk::DescriptorType::UNIFORM_BUFFER,
                        _ => vk::DescriptorType::STORAGE_BUFFER,
                    };
                    let pod = pod_buffer.get_or_insert((binding, ty, vec![]));
                    put(&mut pod.2, offset as usize, v);
                }
                (kind, _) => {
                    return Err(format!(
                        "{name}: argument kind {kind:?} is not handled here"
                    ))
                }
            }
        }
        let pc = &refl.push_constants;
        write_range(&mut push, pc.global_offset, [0; 3]);
        write_range(&mut push, pc.region_offset, [0; 3]);
        write_range(&mut push, pc.region_group_offset, [0; 3]);
        write_range(&mut push, pc.enqueued_local_size, [local, 1, 1]);
        write_range(&mut push, pc.global_size, [local * groups, 1, 1]);
        write_range(&mut push, pc.num_workgroups, [groups, 1, 1]);
        // Vulkan objects here are never destroyed: they live as long as the process.
        if let Some((binding, ty, bytes)) = pod_buffer {
            let b = gpu.buffer(bytes.len().max(16) as u64, true)?;
            let p = gpu.map(&b)?;
            // SAFETY: the mapping is at least bytes.len() long.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
            bindings.push((binding, ty, b.raw));
        }
        let layout_bindings: Vec<_> = bindings
            .iter()
            .map(|&(binding, ty, _)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(binding)
                    .descriptor_type(ty)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings);
        // SAFETY: valid device and create infos throughout; the objects live as long as the
        // process (a benchmark).
        unsafe {
            let set_layout = d
                .create_descriptor_set_layout(&info, None)
                .map_err(vkr("set layout"))?;
            let ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .size(push.len() as u32)];
            let set_layouts = [set_layout];
            let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
            if !push.is_empty() {
                info = info.push_constant_ranges(&ranges);
            }
            let layout = d
                .create_pipeline_layout(&info, None)
                .map_err(vkr("pipeline layout"))?;
            let module_info = vk::ShaderModuleCreateInfo::default().code(spirv);
            let module = d
                .create_shader_module(&module_info, None)
                .map_err(vkr("shader module"))?;
            let sc = &refl.spec_constants;
            let mut spec: Vec<(u32, u32)> = vec![];
            if let Some(ids) = sc.workgroup_size {
                spec.extend([(ids[0], local), (ids[1], 1), (ids[2], 1)]);
            }
            if let Some(id) = sc.work_dim {
                spec.push((id, 1));
            }
            if let Some(ids) = sc.global_offset {
                spec.extend(ids.iter().map(|&id| (id, 0)));
            }
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
            let entry = CString::new(name).unwrap();
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(&entry)
                .specialization_info(&spec_info);
            let info = [vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)];
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                .map_err(|(_, e)| format!("pipeline: {e:?}"))?[0];
            let sizes = [
                vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::STORAGE_BUFFER,
                    descriptor_count: 16,
                },
                vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::UNIFORM_BUFFER,
                    descriptor_count: 4,
                },
            ];
            let pool_info = vk::DescriptorPoolCreateInfo::default()
                .max_sets(1)
                .pool_sizes(&sizes);
            let pool = d
                .create_descriptor_pool(&pool_info, None)
                .map_err(vkr("descriptor pool"))?;
            let alloc = vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(pool)
                .set_layouts(&set_layouts);
            let set = d
                .allocate_descriptor_sets(&alloc)
                .map_err(vkr("descriptor set"))?[0];
            let infos: Vec<_> = bindings
                .iter()
                .map(|&(_, _, b)| {
                    [vk::DescriptorBufferInfo {
                        buffer: b,
                        offset: 0,
                        range: vk::WHOLE_SIZE,
                    }]
                })
                .collect();
            let writes: Vec<_> = bindings
                .iter()
                .zip(&infos)
                .map(|(&(binding, ty, _), info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(binding)
                        .descriptor_type(ty)
                        .buffer_info(info)
                })
                .collect();
            d.update_descriptor_sets(&writes, &[]);
            Ok(Kernel {
                pipeline,
                layout,
                set,
                push,
            })
        }
    }

    /// Records `count` dispatches of `groups` work-groups, with a barrier between each two.
    fn record(&self, d: &ash::Device, cb: vk::CommandBuffer, groups: u32, count: usize) {
        self.record_ordered(d, cb, groups, count, true)
    }

    /// Records `count` dispatches of `groups` work-groups, with a barrier between each two where
    /// `barriers`.
    fn record_ordered(
        &self,
        d: &ash::Device,
        cb: vk::CommandBuffer,
        groups: u32,
        count: usize,
        barriers: bool,
    ) {
        // SAFETY: cb is recording; the kernel's objects are alive.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &[self.set],
                &[],
            );
            if !self.push.is_empty() {
                d.cmd_push_constants(
                    cb,
                    self.layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    &self.push,
                );
            }
            for i in 0..count {
                if i > 0 && barriers {
                    compute_barrier(d, cb);
                }
                d.cmd_dispatch(cb, groups, 1, 1);
            }
        }
    }
}

fn compute_barrier(d: &ash::Device, cb: vk::CommandBuffer) {
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(
            vk::AccessFlags::SHADER_READ
                | vk::AccessFlags::SHADER_WRITE
                | vk::AccessFlags::TRANSFER_READ,
        )];
    let stages = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
    // SAFETY: cb is recording.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            stages,
            stages,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        )
    };
}

/// Makes the compute and transfer writes before it visible to the host.
fn host_barrier(d: &ash::Device, cb: vk::CommandBuffer) {
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)];
    // SAFETY: cb is recording.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        )
    };
}

/// Seconds per call of `f`, called until `min_s` seconds have passed (at least once).
fn time_per_call(min_s: f64, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    let t0 = Instant::now();
    let mut calls = 0;
    loop {
        f()?;
        calls += 1;
        let t = t0.elapsed().as_secs_f64();
        if t >= min_s {
            return Ok(t / calls as f64);
        }
    }
}

struct Figure {
    group: &'static str,
    name: &'static str,
    unit: &'static str,
    samples: Vec<f64>,
}

/// Linear interpolation between order statistics (as vkcl-bench).
fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let i = pos as usize;
    if i + 1 >= v.len() {
        return v[v.len() - 1];
    }
    v[i] + (pos - i as f64) * (v[i + 1] - v[i])
}

fn json(gpu: &Gpu, params: &Params, figures: &[Figure]) -> Res<String> {
    let mut out = format!(
        "{{\n  \"label\": \"raw Vulkan\",\n  \"platform\": \"Vulkan\",\n  \"device\": {:?},\n  \"reps\": {},\n  \"results\": [\n",
        gpu.name,
        params.get::<usize>("reps")?
    );
    for (i, f) in figures.iter().enumerate() {
        let mut v = f.samples.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        out += &format!(
            "    {{\"group\": \"{}\", \"name\": \"{}\", \"unit\": \"{}\", \"status\": \"ok\", \"higher_is_better\": {}, \"size\": 0, \"n\": {}, \"median\": {:.6}, \"q1\": {:.6}, \"q3\": {:.6}, \"min\": {:.6}, \"max\": {:.6}}}{}\n",
            f.group, f.name, f.unit, f.unit != "us", v.len(), quantile(&v, 0.5), quantile(&v, 0.25), quantile(&v, 0.75), v[0], v[v.len() - 1],
            if i + 1 < figures.len() { "," } else { "" }
        );
    }
    Ok(out + "  ]\n}\n")
}

/// An empty compute shader (LocalSize 1 1 1), assembled with spirv-as.
const NOP_SPIRV: [u32; 35] = [
    0x07230203, 0x00010500, 0x00070000, 0x00000005, 0x00000000, 0x00020011, 0x00000001, 0x0003000e,
    0x00000000, 0x00000001, 0x0005000f, 0x00000005, 0x00000001, 0x6e69616d, 0x00000000, 0x00060010,
    0x00000001, 0x00000011, 0x00000001, 0x00000001, 0x00000001, 0x00020013, 0x00000002, 0x00030021,
    0x00000003, 0x00000002, 0x00050036, 0x00000002, 0x00000001, 0x00000000, 0x00000003, 0x000200f8,
    0x00000004, 0x000100fd, 0x00010038,
];

/// CLOCK_MONOTONIC in nanoseconds (the clock vkcl's profiling times and
/// VK_TIME_DOMAIN_CLOCK_MONOTONIC use).
fn monotonic_ns() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: t is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
}

/// `--latency`: the floor under clpeak's kernel launch latency and tools/diag/latency.c
/// (docs/GPU.md): an empty dispatch between two timestamps, submitted and waited for 2000
/// times per shape, with medians of the submit call, START−SUBMIT (the TOP_OF_PIPE timestamp,
/// in host time through VK_EXT_calibrated_timestamps, after vkQueueSubmit returned),
/// END−START, the round trip, and END until the host saw completion. Shapes: a fence wait;
/// a timeline signal polled; vkcl's own shape (a barrier ahead, a host barrier behind, the
/// timeline polled, or waited for with vkWaitSemaphores).
fn latency(gpu: &Gpu) -> Res<()> {
    println!("raw_vulkan --latency: device {}", gpu.name);
    let d = &gpu.device;
    let module_info = vk::ShaderModuleCreateInfo::default().code(&NOP_SPIRV);
    // SAFETY: valid SPIR-V (spirv-val), valid device; everything made here is destroyed at the end.
    let module = unsafe { d.create_shader_module(&module_info, None) }.map_err(vkr("module"))?;
    let layout_info = vk::PipelineLayoutCreateInfo::default();
    // SAFETY: as above.
    let layout = unsafe { d.create_pipeline_layout(&layout_info, None) }.map_err(vkr("layout"))?;
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(c"main");
    let info = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(layout)];
    // SAFETY: as above.
    let pipeline = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &info, None) }
        .map_err(|(_, e)| format!("pipeline: {e:?}"))?[0];
    let query_info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(2);
    // SAFETY: as above.
    let queries = unsafe { d.create_query_pool(&query_info, None) }.map_err(vkr("queries"))?;
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(gpu.family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: as above.
    let pool = unsafe { d.create_command_pool(&pool_info, None) }.map_err(vkr("pool"))?;
    let cb = gpu.command_buffer(pool)?;
    let fence = gpu.fence()?;
    let timeline = gpu.timeline()?;
    let mut value = 0u64;
    println!(
        "{:<34} {:>9} {:>13} {:>10} {:>10} {:>10}   (medians, µs)",
        "shape", "submit", "START-SUBMIT", "END-START", "round trip", "END-seen"
    );
    for (shape, vkcl_shape, wait) in [
        ("fence wait", false, "fence"),
        ("timeline polled", false, "poll"),
        ("vkcl's barriers, timeline polled", true, "poll"),
        ("vkcl's barriers, vkWaitSemaphores", true, "wait"),
    ] {
        // SAFETY: cb is not pending (every submission below is waited for).
        unsafe {
            d.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                .map_err(vkr("reset"))?;
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .map_err(vkr("begin"))?;
            if vkcl_shape {
                compute_barrier(d, cb);
            }
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, queries, 0);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_dispatch(cb, 1, 1, 1);
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, queries, 1);
            if vkcl_shape {
                host_barrier(d, cb);
            }
            d.end_command_buffer(cb).map_err(vkr("end"))?;
        }
        let mut figures: [Vec<f64>; 5] = Default::default();
        for i in 0..2200 {
            // SAFETY: the queries are not in use (the last submission completed).
            unsafe { d.reset_query_pool(queries, 0, 2) };
            value += 1;
            let cbs = [cb];
            let (sems, values) = ([timeline], [value]);
            let mut signal =
                vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
            let submit = match wait {
                "fence" => vk::SubmitInfo::default().command_buffers(&cbs),
                _ => vk::SubmitInfo::default()
                    .command_buffers(&cbs)
                    .signal_semaphores(&sems)
                    .push_next(&mut signal),
            };
            let t0 = monotonic_ns();
            // SAFETY: cb is executable and not pending; waited for below.
            unsafe {
                let f = if wait == "fence" {
                    fence
                } else {
                    vk::Fence::null()
                };
                d.queue_submit(gpu.queue, &[submit], f)
                    .map_err(vkr("submit"))?;
            }
            let t1 = monotonic_ns();
            // SAFETY: waits for the submission just made.
            unsafe {
                match wait {
                    "fence" => {
                        d.wait_for_fences(&[fence], true, u64::MAX)
                            .map_err(vkr("wait"))?;
                        d.reset_fences(&[fence]).map_err(vkr("reset"))?;
                    }
                    "poll" => {
                        while d
                            .get_semaphore_counter_value(timeline)
                            .map_err(vkr("counter"))?
                            < value
                        {
                            for _ in 0..64 {
                                std::hint::spin_loop();
                            }
                        }
                    }
                    _ => {
                        let info = vk::SemaphoreWaitInfo::default()
                            .semaphores(&sems)
                            .values(&values);
                        d.wait_semaphores(&info, u64::MAX).map_err(vkr("wait"))?;
                    }
                }
            }
            let t2 = monotonic_ns();
            if i < 200 {
                continue; // warm-up
            }
            figures[0].push(t1 - t0);
            figures[3].push(t2 - t0);
            let Some(ext) = &gpu.calibration else {
                continue;
            };
            let mut stamps = [0u64; 2];
            // SAFETY: both queries were written by the completed submission.
            unsafe {
                d.get_query_pool_results(queries, 0, &mut stamps, vk::QueryResultFlags::TYPE_64)
                    .map_err(vkr("query results"))?;
            }
            let domains = [
                vk::TimeDomainEXT::DEVICE,
                vk::TimeDomainEXT::CLOCK_MONOTONIC,
            ]
            .map(|t| vk::CalibratedTimestampInfoEXT::default().time_domain(t));
            // SAFETY: the extension is enabled and both domains are supported.
            let (now, _) =
                unsafe { ext.get_calibrated_timestamps(&domains) }.map_err(vkr("calibration"))?;
            let host = |tick: u64| {
                now[1] as f64 - (now[0].wrapping_sub(tick) as i64) as f64 * gpu.timestamp_period
            };
            let (start, end) = (host(stamps[0]), host(stamps[1]));
            figures[1].push(start - t1);
            figures[2].push(end - start);
            figures[4].push(t2 - end);
        }
        let median = |v: &mut Vec<f64>| match v.is_empty() {
            true => "-".to_string(),
            false => {
                v.sort_by(|a, b| a.total_cmp(b));
                format!("{:.2}", quantile(v, 0.5) / 1e3)
            }
        };
        let [a, b, c, e, f] = &mut figures;
        println!(
            "{shape:<34} {:>9} {:>13} {:>10} {:>10} {:>10}",
            median(a),
            median(b),
            median(c),
            median(e),
            median(f)
        );
    }
    // SAFETY: nothing is pending any more.
    unsafe {
        d.destroy_semaphore(timeline, None);
        d.destroy_fence(fence, None);
        d.destroy_command_pool(pool, None);
        d.destroy_query_pool(queries, None);
        d.destroy_pipeline(pipeline, None);
        d.destroy_pipeline_layout(layout, None);
        d.destroy_shader_module(module, None);
    }
    Ok(())
}

/// `--host-access`: the memory types, then host writes and reads of a device-local,
/// host-visible buffer (GB/s and µs per copy).
fn host_access(gpu: &Gpu) -> Res<()> {
    let m = &gpu.memory;
    for (i, t) in m.memory_types[..m.memory_type_count as usize]
        .iter()
        .enumerate()
    {
        let heap = m.memory_heaps[t.heap_index as usize].size >> 20;
        println!(
            "memory type {i}: {:?}, heap {} ({heap} MiB)",
            t.property_flags, t.heap_index
        );
    }
    const SIZE: usize = 16 << 20;
    let info = vk::BufferCreateInfo::default()
        .size(SIZE as u64)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST);
    // SAFETY: valid device and create info.
    let raw = unsafe { gpu.device.create_buffer(&info, None) }.map_err(vkr("vkCreateBuffer"))?;
    // SAFETY: raw was created above.
    let req = unsafe { gpu.device.get_buffer_memory_requirements(raw) };
    let mapped = vk::MemoryPropertyFlags::DEVICE_LOCAL | vk::MemoryPropertyFlags::HOST_VISIBLE;
    let index = gpu
        .memory_type(
            req.memory_type_bits,
            mapped,
            vk::MemoryPropertyFlags::empty(),
        )
        .ok_or("no device-local, host-visible memory type")?;
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(req.size)
        .memory_type_index(index);
    // SAFETY: valid allocate info; the memory fits the buffer.
    let memory = unsafe {
        let memory = gpu
            .device
            .allocate_memory(&alloc, None)
            .map_err(vkr("alloc"))?;
        gpu.device
            .bind_buffer_memory(raw, memory, 0)
            .map_err(vkr("bind"))?;
        memory
    };
    let b = Buffer {
        raw,
        memory,
        size: SIZE as u64,
    };
    let p = gpu.map(&b)?;
    println!("memory type {index}, mapped at {p:p}");
    let (src, mut dst) = (vec![7u8; SIZE], vec![0u8; SIZE]);
    for n in [
        4 << 10,
        16 << 10,
        64 << 10,
        256 << 10,
        1 << 20,
        4 << 20,
        16 << 20,
    ] {
        let reps = ((64usize << 20) / n).clamp(3, 2000);
        let time = |f: &mut dyn FnMut()| {
            f();
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            t.elapsed().as_secs_f64() / reps as f64
        };
        // SAFETY (all three): n bytes fit the mapping and both vectors.
        let write = time(&mut || unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p, n) });
        // Plain reads are uncached: seconds for the larger sizes, so only up to 1 MiB.
        let read = (n <= 1 << 20).then(|| {
            time(&mut || unsafe { std::ptr::copy_nonoverlapping(p, dst.as_mut_ptr(), n) })
        });
        let stream = is_x86_feature_detected!("avx2")
            .then(|| time(&mut || unsafe { stream_copy(p, dst.as_mut_ptr(), n) }));
        let show = |t: Option<f64>| {
            t.map_or("-".into(), |t| {
                format!("{:.3} GB/s ({:.1} us)", n as f64 / t / 1e9, t * 1e6)
            })
        };
        println!(
            "{:>6} KiB: write {}, read {}, read with streaming loads {}",
            n >> 10,
            show(Some(write)),
            show(read),
            show(stream)
        );
    }
    // SAFETY: nothing uses the buffer any more.
    unsafe {
        gpu.device.destroy_buffer(b.raw, None);
        gpu.device.free_memory(b.memory, None);
    }
    Ok(())
}

/// Copies `n` bytes (a multiple of 128) from 32-byte aligned `src` with AVX2 streaming loads,
/// four in flight (as vkcl's `stream_read`).
#[target_feature(enable = "avx2")]
unsafe fn stream_copy(src: *const u8, dst: *mut u8, n: usize) {
    use std::arch::x86_64::{__m256i, _mm256_storeu_si256, _mm256_stream_load_si256};
    let (s, d) = (src as *const __m256i, dst as *mut __m256i);
    for i in (0..n / 32).step_by(4) {
        // SAFETY: in bounds (caller's contract).
        unsafe {
            let v = [0, 1, 2, 3].map(|j| _mm256_stream_load_si256(s.add(i + j)));
            for (j, v) in v.into_iter().enumerate() {
                _mm256_storeu_si256(d.add(i + j), v);
            }
        }
    }
}

fn run() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| args.windows(2).find(|w| w[0] == name).map(|w| w[1].clone());
    if args.iter().any(|a| a == "--host-access") {
        return host_access(&Gpu::new(opt("--device").as_deref())?);
    }
    if args.iter().any(|a| a == "--latency") {
        return latency(&Gpu::new(opt("--device").as_deref())?);
    }
    let dir = args
        .get(1)
        .filter(|a| !a.starts_with("--"))
        .ok_or("usage: raw_vulkan DIR [--device SUB] [--json FILE] | --host-access | --latency")?;
    let params = Params::read(dir)?;
    let gpu = Gpu::new(opt("--device").as_deref())?;
    println!("raw_vulkan: device {}", gpu.name);
    let (reps, sample_s): (usize, f64) = (params.get("reps")?, params.get("sample_s")?);
    // Each figure's warm-up, as vkcl-bench's (a GPU's clock rises from idle only after about
    // 0.2 s of work).
    let warm_up_s: f64 = params.get("warm_up_s")?;
    let local: u32 = params.get("local_size")?;
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(gpu.family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid device.
    let pool = unsafe { gpu.device.create_command_pool(&pool_info, None) }.map_err(vkr("pool"))?;
    let mut figures = vec![];

    // memory/triad: a = b + s * c on float4 arrays, b = 1, c = 2, s = 3.
    let spirv = spirv_of_binary(&format!("{dir}/memory.bin"))?;
    let refl = reflection::parse(&spirv).map_err(|e| format!("reflection: {e:?}"))?;
    let bytes: u64 = params.get("triad_bytes")?;
    let launches: usize = params.get("triad_launches")?;
    let (a, b, c) = (
        gpu.buffer(bytes, false)?,
        gpu.buffer(bytes, false)?,
        gpu.buffer(bytes, false)?,
    );
    let s = 3.0f32.to_le_bytes();
    let groups = (bytes / 16) as u32 / local;
    let triad = Kernel::new(
        &gpu,
        &spirv,
        &refl,
        "triad4",
        &[
            Arg::Buffer(&a),
            Arg::Buffer(&b),
            Arg::Buffer(&c),
            Arg::Pod(&s),
        ],
        local,
        groups,
    )?;
    gpu.run_once(pool, |cb| unsafe {
        // SAFETY: cb is recording; the buffers are alive.
        gpu.device
            .cmd_fill_buffer(cb, b.raw, 0, vk::WHOLE_SIZE, 1.0f32.to_bits());
        gpu.device
            .cmd_fill_buffer(cb, c.raw, 0, vk::WHOLE_SIZE, 2.0f32.to_bits());
    })?;
    let cb = gpu.command_buffer(pool)?;
    // SAFETY: cb is a fresh command buffer, recorded once and submitted many times.
    unsafe {
        gpu.device
            .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
    }
    .map_err(vkr("begin"))?;
    triad.record(&gpu.device, cb, groups, launches);
    // SAFETY: recording.
    unsafe { gpu.device.end_command_buffer(cb) }.map_err(vkr("end"))?;
    let fence = gpu.fence()?;
    time_per_call(warm_up_s, || gpu.submit_wait(cb, fence))?;
    let mut samples = vec![];
    for _ in 0..reps {
        let t = time_per_call(sample_s, || gpu.submit_wait(cb, fence))?;
        samples.push(3.0 * bytes as f64 * launches as f64 / t / 1e9);
    }
    figures.push(Figure {
        group: "memory",
        name: "triad",
        unit: "GB/s",
        samples,
    });
    check_floats(&gpu, pool, &a, |_| 7.0, "triad")?;

    // compute/fma: FMA_ITERS rounds of mad, as in bench/compute.c.
    let spirv = spirv_of_binary(&format!("{dir}/fma.bin"))?;
    let refl = reflection::parse(&spirv).map_err(|e| format!("reflection: {e:?}"))?;
    let items: u64 = params.get("fma_items")?;
    let iters: i32 = params.get("fma_iters")?;
    let out = gpu.buffer(items * 16, false)?;
    let (fa, fb) = (0.999f32, 0.001f32);
    let (it, fab, fbb) = (iters.to_le_bytes(), fa.to_le_bytes(), fb.to_le_bytes());
    let groups = items as u32 / local;
    let fma = Kernel::new(
        &gpu,
        &spirv,
        &refl,
        "fma_loop",
        &[
            Arg::Buffer(&out),
            Arg::Pod(&it),
            Arg::Pod(&fab),
            Arg::Pod(&fbb),
        ],
        local,
        groups,
    )?;
    let cb = gpu.command_buffer(pool)?;
    // SAFETY: as for triad.
    unsafe {
        gpu.device
            .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
    }
    .map_err(vkr("begin"))?;
    fma.record(&gpu.device, cb, groups, 1);
    // SAFETY: recording.
    unsafe { gpu.device.end_command_buffer(cb) }.map_err(vkr("end"))?;
    time_per_call(warm_up_s, || gpu.submit_wait(cb, fence))?;
    let mut samples = vec![];
    for _ in 0..reps {
        let t = time_per_call(sample_s, || gpu.submit_wait(cb, fence))?;
        samples.push(32.0 * iters as f64 * items as f64 / t / 1e9);
    }
    figures.push(Figure {
        group: "compute",
        name: "fma",
        unit: "GFLOP/s",
        samples,
    });
    let expected = |i: usize| {
        let (i, mut sum) = (i / 4, 0.0f64);
        for ch in 0..4 {
            let mut x = ((i % 16) as f32 * 0.01f32) as f64 + 0.1 * ch as f64;
            for _ in 0..iters {
                x = x * fa as f64 + fb as f64;
            }
            sum += x;
        }
        sum
    };
    check_floats(&gpu, pool, &out, expected, "fma")?;

    // Round trips, the floor under vkcl's: one small command submitted with a timeline signal
    // and polled for, as vkcl's waits do. launch: a one-group triad; read: 4 KiB copied from
    // device memory into host memory, then into the application's array.
    let timeline = gpu.timeline()?;
    let mut value = 0u64;
    let mut round_trip_waiting = |cb: vk::CommandBuffer, wait_previous: bool| -> Res<()> {
        value += 1;
        gpu.submit_poll(cb, timeline, value, wait_previous)
    };
    let cb = gpu.command_buffer(pool)?;
    // SAFETY: as for triad.
    unsafe {
        gpu.device
            .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
    }
    .map_err(vkr("begin"))?;
    triad.record(&gpu.device, cb, 1, 1);
    // SAFETY: recording.
    unsafe { gpu.device.end_command_buffer(cb) }.map_err(vkr("end"))?;
    // The same dispatch ordered as vkcl orders a batch's first command: a barrier before it
    // (compute and transfer stages) or a wait for the timeline's previous value; and a barrier
    // to the host after it.
    let cb_barriers = gpu.command_buffer(pool)?;
    let cb_wait = gpu.command_buffer(pool)?;
    for (cb, leading) in [(cb_barriers, true), (cb_wait, false)] {
        // SAFETY: as for triad.
        unsafe {
            gpu.device
                .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .map_err(vkr("begin"))?;
            if leading {
                compute_barrier(&gpu.device, cb);
            }
            triad.record(&gpu.device, cb, 1, 1);
            host_barrier(&gpu.device, cb);
            gpu.device.end_command_buffer(cb).map_err(vkr("end"))?;
        }
    }
    for (name, cb, wait) in [
        ("launch+finish per second", cb, false),
        ("launch+finish per second, barriers", cb_barriers, false),
        ("launch+finish per second, timeline wait", cb_wait, true),
    ] {
        time_per_call(warm_up_s, || round_trip_waiting(cb, wait))?;
        let mut samples = vec![];
        for _ in 0..reps {
            samples.push(1.0 / time_per_call(sample_s, || round_trip_waiting(cb, wait))?);
        }
        figures.push(Figure {
            group: "launch",
            name,
            unit: "1/s",
            samples,
        });
    }
    let mut round_trip = |cb: vk::CommandBuffer| round_trip_waiting(cb, false);
    // The same with the command buffer recorded for each launch, as vkcl records its batches
    // (a transient pool reset, begun for one submission).
    let info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(gpu.family)
        .flags(vk::CommandPoolCreateFlags::TRANSIENT);
    // SAFETY: valid device.
    let transient = unsafe { gpu.device.create_command_pool(&info, None) }.map_err(vkr("pool"))?;
    let cb = gpu.command_buffer(transient)?;
    let mut recorded = || -> Res<()> {
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the previous submission of cb has completed (round_trip waits).
        unsafe {
            gpu.device
                .reset_command_pool(transient, vk::CommandPoolResetFlags::empty())
                .map_err(vkr("reset"))?;
            gpu.device
                .begin_command_buffer(cb, &begin)
                .map_err(vkr("begin"))?;
            triad.record(&gpu.device, cb, 1, 1);
            gpu.device.end_command_buffer(cb).map_err(vkr("end"))?;
        }
        round_trip(cb)
    };
    time_per_call(warm_up_s, &mut recorded)?;
    let mut samples = vec![];
    for _ in 0..reps {
        samples.push(1.0 / time_per_call(sample_s, &mut recorded)?);
    }
    figures.push(Figure {
        group: "launch",
        name: "launch+finish per second, recorded each time",
        unit: "1/s",
        samples,
    });
    const READ: u64 = 4096;
    let host = gpu.buffer(READ, true)?;
    let mapped = gpu.map(&host)?;
    let cb = gpu.command_buffer(pool)?;
    // SAFETY: as for triad; both buffers are alive.
    unsafe {
        gpu.device
            .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
            .map_err(vkr("begin"))?;
        let region = vk::BufferCopy::default().size(READ);
        gpu.device.cmd_copy_buffer(cb, a.raw, host.raw, &[region]);
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ);
        gpu.device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[barrier],
            &[],
            &[],
        );
        gpu.device.end_command_buffer(cb).map_err(vkr("end"))?;
    }
    let mut dst = vec![0u8; READ as usize];
    let mut read = || -> Res<()> {
        round_trip(cb)?;
        // SAFETY: the copy into the mapped memory has completed.
        unsafe { std::ptr::copy_nonoverlapping(mapped, dst.as_mut_ptr(), READ as usize) };
        Ok(())
    };
    time_per_call(warm_up_s, &mut read)?;
    let mut samples = vec![];
    for _ in 0..reps {
        samples.push(READ as f64 / time_per_call(sample_s, &mut read)? / 1e9);
    }
    figures.push(Figure {
        group: "transfer",
        name: "read 4 KiB",
        unit: "GB/s",
        samples,
    });
    if dst[..4] != 7.0f32.to_le_bytes() {
        return Err("read 4 KiB: wrong data".into());
    }

    // cmdbuf: the floor under vkcl-bench's replayed command-buffers (bench/cmdbuf.c): 1000
    // one-group dispatches pre-recorded in one command buffer, with a barrier between each two
    // (dependent) or none (independent), submitted and waited for; per dispatch.
    const KERNELS: usize = 1000;
    for (name, barriers) in [
        ("dependent replayed per kernel", true),
        ("independent replayed per kernel", false),
    ] {
        let cb = gpu.command_buffer(pool)?;
        // SAFETY: as for triad.
        unsafe {
            gpu.device
                .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .map_err(vkr("begin"))?;
            triad.record_ordered(&gpu.device, cb, 1, KERNELS, barriers);
            host_barrier(&gpu.device, cb);
            gpu.device.end_command_buffer(cb).map_err(vkr("end"))?;
        }
        time_per_call(warm_up_s, || round_trip(cb))?;
        let mut samples = vec![];
        for _ in 0..reps {
            samples.push(time_per_call(sample_s, || round_trip(cb))? / KERNELS as f64 * 1e6);
        }
        figures.push(Figure {
            group: "cmdbuf",
            name,
            unit: "us",
            samples,
        });
    }

    for f in &figures {
        let mut v = f.samples.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        println!(
            "  {:<9} {:<28} {:>12.4} {}",
            f.group,
            f.name,
            quantile(&v, 0.5),
            f.unit
        );
    }
    if let Some(path) = opt("--json") {
        std::fs::write(&path, json(&gpu, &params, &figures)?)
            .map_err(|e| format!("{path}: {e}"))?;
    }
    println!("raw_vulkan: done, results verified");
    Ok(())
}

/// Reads `buf` back and compares sampled floats with `want(index)` (relative 1e-3).
fn check_floats(
    gpu: &Gpu,
    pool: vk::CommandPool,
    buf: &Buffer,
    want: impl Fn(usize) -> f64,
    what: &str,
) -> Res<()> {
    let host = gpu.buffer(buf.size, true)?;
    gpu.run_once(pool, |cb| {
        compute_barrier(&gpu.device, cb);
        let region = [vk::BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size: buf.size,
        }];
        // SAFETY: cb is recording; both buffers are alive and large enough.
        unsafe { gpu.device.cmd_copy_buffer(cb, buf.raw, host.raw, &region) };
    })?;
    let p = gpu.map(&host)? as *const f32;
    let n = (buf.size / 4) as usize;
    // SAFETY: the mapping holds n floats, written by the copy that completed.
    let v = unsafe { std::slice::from_raw_parts(p, n) };
    for i in (0..n).step_by(389) {
        let w = want(i);
        if (v[i] as f64 - w).abs() > 1e-3 * w.abs() {
            return Err(format!(
                "WRONG RESULT: {what}[{i}] = {}, expected {w}",
                v[i]
            ));
        }
    }
    Ok(())
}
