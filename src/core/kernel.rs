//! Kernels: arguments, the Vulkan layout and pipelines per device, and NDRange enqueue.

use super::aliasing::{shared_bindings, Bound};
use super::device::Device;
use super::error::{check, CLResult, ClError};
use super::event::Event;
use super::fxhash::FxHashMap;
use super::image::Store;
use super::kernel_objects::{KernelObjects, PipelineSlot};
use super::memory::Mem;
use super::object::{Base, ClObject, Kind};
use super::program::{Executable, Program};
use super::queue::{Keep, Queue, Recorded};
use super::residence::{self, Use};
use super::svm::Addressing;
use crate::cl::*;
use crate::compiler;
use crate::compiler::reflection::{
    ArgKind, ImageMetadataKind, KernelReflection, ModuleSpecConstants, PushRange,
};
use crate::vk::device::Device as VkDevice;
use crate::vk::image::{
    Image as VkImage, SAMPLER_ADDRESS_MASK, SAMPLER_FILTER_LINEAR, SAMPLER_NORMALIZED,
};
use crate::vk::memory::{padded, Buffer, Placement};
use crate::vk::pipeline::{Descriptor, KernelLayout, Pipeline, SetBindings, ShaderModule};
use crate::vk::submit::{Binding, BufferBinding, Recorder, WHOLE_SIZE};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

/// A kernel argument's value as set by clSetKernelArg.
#[derive(Clone)]
pub enum ArgValue {
    /// A buffer, or NULL.
    Mem(Option<Arc<Mem>>),
    /// The bytes of a by-value argument (shared by the launches that use them).
    Bytes(Arc<[u8]>),
    /// The size of a `__local` argument.
    Local(usize),
    Sampler(Arc<super::sampler::Sampler>),
    /// An SVM pointer (clSetKernelArgSVMPointer) or device address
    /// (clSetKernelArgDevicePointerEXT), for the physical-addressing build.
    Pointer(u64),
}

/// A kernel's module with some storage buffers declared `Aliased`, and its pipelines.
struct Variant {
    module: ShaderModule,
    pipelines: FxHashMap<Spec, Arc<Pipeline>>,
}

/// The kernel's module with several OpenCL work-groups per Vulkan work-group along one
/// dimension (`compiler::coalesce`).
struct CoalescedModule {
    module: ShaderModule,
    /// The specialisation constant of the Vulkan work-group size along the dimension.
    size_spec_id: u32,
}

/// Work-groups of fewer work-items than this are coalesced where the kernel allows.
const COALESCED_GROUP_SIZE: usize = 64;

/// The Vulkan objects of a kernel on one device (shared by the program's kernel objects of
/// that name: `prebuild::Table`).
pub struct KernelDevice {
    exe: Arc<Executable>,
    /// The kernel's reflection in this executable (its own in the physical-addressing build).
    refl: KernelReflection,
    /// The kernel in the program's physical-addressing build, made on first use.
    physical: Mutex<Option<Arc<KernelDevice>>>,
    /// The module, layout and pipelines (by specialisation), shared with the kernels of
    /// identical SPIR-V (`kernel_objects`).
    objects: Arc<KernelObjects>,
    layout: Arc<KernelLayout>,
    /// For launches that bind the same memory to several storage-buffer arguments: by the
    /// bindings concerned, the module with them `Aliased` and its pipelines.
    aliased: Mutex<HashMap<Vec<(u32, u32)>, Variant>>,
    /// Where launches that coalesce work-groups push a region's OpenCL group count; None
    /// where the kernel may observe its work-group, or the device does not coalesce
    /// (`Workarounds::coalesce_groups`).
    coalesce_at: Option<u32>,
    /// By dimension: the coalesced module, made on first use (`Some(None)`: refused).
    coalesced: Mutex<[Option<Option<Arc<CoalescedModule>>>; 3]>,
    /// The coalesced modules' pipelines, by (dimension, specialisation), as `pipelines`.
    coalesced_pipelines: Mutex<FxHashMap<(usize, Spec), PipelineSlot>>,
    /// Module-scope `__constant` data, filled once.
    constant_data: Option<Arc<Buffer>>,
    /// The program's program-scope variables (`Executable::globals`).
    globals: Option<Arc<Buffer>>,
    /// Bound where a kernel has a NULL buffer argument, and as the printf buffer.
    scratch: Arc<Buffer>,
}

#[repr(C)]
pub struct Kernel {
    pub base: Base,
    pub program: Arc<Program>,
    pub name: String,
    /// The reflection of the kernel (the same on every device: same source and options).
    pub reflection: KernelReflection,
    /// By device index of the program; None where the program is not built.
    devices: Vec<Option<Arc<KernelDevice>>>,
    /// The arguments set so far. Objects are held weakly: "implementations shall not allow
    /// cl_kernel objects to hold reference counts to cl_kernel arguments" (clSetKernelArg),
    /// so a buffer the application releases is deleted (and its destructor callbacks run)
    /// even while it is still set here; the commands enqueued with it keep it alive.
    args: Mutex<Vec<Option<HeldArg>>>,
    /// clSetKernelExecInfo's SVM settings.
    pub exec_info: Mutex<super::svm::ExecInfo>,
    /// The program's block kernels this kernel's launches enqueued, by name (device-side
    /// enqueue: super::device_enqueue).
    children: Mutex<HashMap<String, Arc<Kernel>>>,
    /// The pairs of pointer parameters the kernel compares or subtracts (found on first need:
    /// super::svm::addressing).
    pub related: std::sync::OnceLock<Vec<(usize, usize)>>,
}

/// An argument as a kernel holds it between clSetKernelArg and a launch.
#[derive(Clone)]
enum HeldArg {
    Mem(Option<Weak<Mem>>),
    Bytes(Arc<[u8]>),
    Local(usize),
    Sampler(Weak<super::sampler::Sampler>),
    Pointer(u64),
}

impl HeldArg {
    fn new(value: ArgValue) -> HeldArg {
        match value {
            ArgValue::Mem(m) => HeldArg::Mem(m.as_ref().map(Arc::downgrade)),
            ArgValue::Bytes(b) => HeldArg::Bytes(b),
            ArgValue::Local(size) => HeldArg::Local(size),
            ArgValue::Sampler(s) => HeldArg::Sampler(Arc::downgrade(&s)),
            ArgValue::Pointer(p) => HeldArg::Pointer(p),
        }
    }

    /// The value for a launch; None if the object it names has been deleted.
    fn get(&self) -> Option<ArgValue> {
        Some(match self {
            HeldArg::Mem(None) => ArgValue::Mem(None),
            HeldArg::Mem(Some(m)) => ArgValue::Mem(Some(m.upgrade()?)),
            HeldArg::Bytes(b) => ArgValue::Bytes(b.clone()),
            HeldArg::Local(size) => ArgValue::Local(*size),
            HeldArg::Sampler(s) => ArgValue::Sampler(s.upgrade()?),
            HeldArg::Pointer(p) => ArgValue::Pointer(*p),
        })
    }
}

impl ClObject for Kernel {
    const KIND: Kind = Kind::Kernel;
    const INVALID: i32 = CL_INVALID_KERNEL;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.program.kernels_attached.fetch_sub(1, Ordering::AcqRel);
    }
}

fn descriptor_type(kind: &ArgKind) -> CLResult<Option<(u32, u32, Descriptor)>> {
    Ok(match *kind {
        ArgKind::StorageBuffer { set, binding }
        | ArgKind::PodStorageBuffer { set, binding, .. } => {
            Some((set, binding, Descriptor::StorageBuffer))
        }
        ArgKind::UniformBuffer { set, binding }
        | ArgKind::PodUniform { set, binding, .. }
        | ArgKind::PointerUniform { set, binding, .. } => {
            Some((set, binding, Descriptor::UniformBuffer))
        }
        ArgKind::SampledImage { set, binding } => Some((set, binding, Descriptor::SampledImage)),
        ArgKind::StorageImage { set, binding } => Some((set, binding, Descriptor::StorageImage)),
        ArgKind::Sampler { set, binding } => Some((set, binding, Descriptor::Sampler)),
        ArgKind::UniformTexelBuffer { set, binding } => {
            Some((set, binding, Descriptor::UniformTexelBuffer))
        }
        ArgKind::StorageTexelBuffer { set, binding } => {
            Some((set, binding, Descriptor::StorageTexelBuffer))
        }
        ArgKind::Unused
        | ArgKind::Local { .. }
        | ArgKind::PodPushConstant { .. }
        | ArgKind::PointerPushConstant { .. } => None,
    })
}

impl KernelDevice {
    pub(super) fn new(
        device: &Arc<Device>,
        exe: &Arc<Executable>,
        refl: &KernelReflection,
    ) -> CLResult<KernelDevice> {
        let vkd = device.vk()?;
        let r = &exe.reflection;
        let mut sets: BTreeMap<u32, BTreeMap<u32, Descriptor>> = BTreeMap::new();
        for arg in &refl.args {
            if let Some((set, binding, ty)) = descriptor_type(&arg.kind)? {
                sets.entry(set).or_default().insert(binding, ty);
            }
        }
        for c in r.constant_data.iter().chain(&r.globals) {
            let ty = buffer_descriptor(c.is_uniform);
            sets.entry(c.set).or_default().insert(c.binding, ty);
        }
        if let Some((set, binding, _)) = r.printf.as_ref().and_then(|p| p.buffer) {
            sets.entry(set)
                .or_default()
                .insert(binding, Descriptor::StorageBuffer);
        }
        for s in &r.literal_samplers {
            sets.entry(s.set)
                .or_default()
                .insert(s.binding, Descriptor::Sampler);
        }
        let count = sets.keys().next_back().map_or(0, |&s| s + 1);
        let layout_sets: Vec<SetBindings> = (0..count)
            .map(|s| {
                sets.get(&s)
                    .map(|b| b.iter().map(|(&k, &v)| (k, v)).collect())
                    .unwrap_or_default()
            })
            .collect();
        let mut push_size = r.push_constant_size.next_multiple_of(4);
        // The kernel's own module: without the program's other kernels, and (launches that bind
        // no memory twice) its repeated loads of read-only buffers made copies.
        let own = compiler::kernel_module(&exe.spirv, &refl.name);
        let spirv = &compiler::repeated_loads::reuse(own.as_deref().unwrap_or(&exe.spirv));
        let limits = &device.caps.limits;
        let coalesce_at = (device.caps.workarounds.coalesce_groups
            && r.spec_constants.workgroup_size.is_some()
            && r.spec_constants.subgroup_max_size.is_none()
            && refl.reqd_work_group_size.is_none())
        .then(|| compiler::coalesce::push_offset(spirv, r.push_constant_size))
        .flatten()
        .filter(|at| at + 4 <= limits.max_push_constants_size);
        if let Some(at) = coalesce_at {
            push_size = push_size.max(at + 4);
        }
        let objects =
            (device.kernel_objects).get(&vkd, spirv, &refl.name, layout_sets, push_size)?;
        let constants = (r.constant_data.as_ref().map(|c| &c.data))
            .or(r.constant_data_pointer.as_ref().map(|c| &c.1));
        let constant_data = match constants {
            Some(data) => {
                let b = Buffer::new(&vkd, data.len() as u64, Placement::Upload, "constant data")?;
                // SAFETY: the buffer is new; no GPU work uses it yet.
                unsafe { b.write(0, data) };
                Some(Arc::new(b))
            }
            None => None,
        };
        let scratch_size = printf_buffer(r).map_or(256, |(_, size)| size.max(256));
        let scratch = Arc::new(Buffer::new(
            &vkd,
            scratch_size as u64,
            Placement::Upload,
            "scratch",
        )?);
        Ok(KernelDevice {
            exe: exe.clone(),
            refl: refl.clone(),
            physical: Mutex::new(None),
            layout: objects.layout.clone(),
            objects,
            aliased: Mutex::new(HashMap::new()),
            coalesce_at,
            coalesced: Mutex::new([None, None, None]),
            coalesced_pipelines: Mutex::new(FxHashMap::default()),
            constant_data,
            globals: exe.globals(&vkd)?,
            scratch,
        })
    }

    /// The kernel in the program's physical-addressing build on `device` (for launches with
    /// SVM or device pointers).
    fn physical(&self, kernel: &Kernel, device: &Arc<Device>) -> CLResult<Arc<KernelDevice>> {
        let mut physical = self.physical.lock();
        if let Some(kd) = &*physical {
            return Ok(kd.clone());
        }
        let index = kernel.program.device_index(device);
        let index = index.ok_or(ClError(CL_INVALID_PROGRAM_EXECUTABLE))?;
        let exe = kernel.program.physical(index)?;
        let refl = exe
            .reflection
            .kernels
            .iter()
            .find(|k| k.name == kernel.name);
        let refl = refl.ok_or(ClError(CL_INVALID_OPERATION))?;
        let table = &kernel.program.kernel_devices;
        let kd = table.kernel_device(index, device, &exe, refl)?;
        *physical = Some(kd.clone());
        Ok(kd)
    }

    pub fn reflection(&self) -> &KernelReflection {
        &self.refl
    }

    /// The pipeline of specialisation `spec`, made now if no launch or prebuild has made it
    /// (a launch that makes one records it: `prebuild::record`).
    fn pipeline(&self, spec: &[(u32, u32)]) -> CLResult<Arc<Pipeline>> {
        self.pipeline_made(spec, true)
    }

    /// Makes the pipeline of `spec` ahead of the launches that will use it.
    pub(super) fn prebuild(&self, spec: &[(u32, u32)]) -> CLResult<()> {
        self.pipeline_made(spec, false).map(drop)
    }

    fn pipeline_made(&self, spec: &[(u32, u32)], by_launch: bool) -> CLResult<Arc<Pipeline>> {
        let slot = {
            let mut pipelines = self.objects.pipelines.lock();
            match pipelines.get(spec) {
                Some(slot) => slot.clone(),
                None => {
                    let slot = PipelineSlot::default();
                    pipelines.insert(spec.to_vec(), slot.clone());
                    slot
                }
            }
        };
        // Waits here while another thread makes it.
        let mut slot = slot.lock();
        if let Some(p) = &*slot {
            return Ok(p.clone());
        }
        let t0 = std::time::Instant::now();
        let p = Arc::new(
            self.layout
                .pipeline(&self.objects.module, &self.refl.name, spec)?,
        );
        log::debug!(target: "launch", "{}: pipeline {spec:?} made in {:?}{}", self.refl.name, t0.elapsed(), if by_launch { " by a launch" } else { " ahead of launches" });
        *slot = Some(p.clone());
        drop(slot);
        if by_launch {
            super::prebuild::record(self.exe.launch_key(), &self.refl.name, spec);
        }
        Ok(p)
    }

    /// A pipeline for a launch that binds the same memory at `bindings`: of the kernel's module
    /// with those storage buffers `Aliased` (made on first use, kept with its pipelines).
    fn aliased_pipeline(
        &self,
        vk: &Arc<VkDevice>,
        name: &str,
        spec: &[(u32, u32)],
        bindings: &[(u32, u32)],
    ) -> CLResult<Arc<Pipeline>> {
        let mut variants = self.aliased.lock();
        let variant = match variants.entry(bindings.to_vec()) {
            Entry::Occupied(v) => v.into_mut(),
            Entry::Vacant(v) => {
                let own = compiler::kernel_module(&self.exe.spirv, name);
                let spirv = own.as_deref().unwrap_or(&self.exe.spirv);
                let spirv = compiler::aliased::declare_aliased(spirv, bindings);
                log::debug!(target: "launch", "{name}: bindings {bindings:?} declared Aliased");
                v.insert(Variant {
                    module: ShaderModule::new(vk, &spirv)?,
                    pipelines: FxHashMap::default(),
                })
            }
        };
        if let Some(p) = variant.pipelines.get(spec) {
            return Ok(p.clone());
        }
        let p = Arc::new(self.layout.pipeline(&variant.module, name, spec)?);
        variant.pipelines.insert(spec.to_vec(), p.clone());
        Ok(p)
    }

    /// The pipeline of specialisation `spec` (the OpenCL work-group size) in the module that
    /// runs several OpenCL work-groups per Vulkan work-group along `dim`, with a Vulkan
    /// work-group of `vulkan_size` work-items along it; None where the module was refused.
    fn coalesced_pipeline(
        &self,
        vk: &Arc<VkDevice>,
        dim: usize,
        spec: &[(u32, u32)],
        vulkan_size: u32,
    ) -> CLResult<Option<Arc<Pipeline>>> {
        let Some(module) = self.coalesced_module(vk, dim)? else {
            return Ok(None);
        };
        let mut spec = spec.to_vec();
        spec.push((module.size_spec_id, vulkan_size));
        let key = (dim, spec);
        let slot = self
            .coalesced_pipelines
            .lock()
            .entry(key.clone())
            .or_default()
            .clone();
        // Waits here while another thread makes it.
        let mut slot = slot.lock();
        if let Some(p) = &*slot {
            return Ok(Some(p.clone()));
        }
        let (name, spec) = (&self.refl.name, &key.1);
        let t0 = std::time::Instant::now();
        let p = Arc::new(self.layout.pipeline(&module.module, name, spec)?);
        log::debug!(target: "launch", "{name}: pipeline {spec:?} coalesced along {dim} made in {:?}", t0.elapsed());
        *slot = Some(p.clone());
        Ok(Some(p))
    }

    /// The module coalescing work-groups along `dim`, made on first use; None where
    /// `compiler::coalesce` refused it.
    fn coalesced_module(
        &self,
        vk: &Arc<VkDevice>,
        dim: usize,
    ) -> CLResult<Option<Arc<CoalescedModule>>> {
        let Some(at) = self.coalesce_at else {
            return Ok(None);
        };
        let mut modules = self.coalesced.lock();
        if let Some(m) = &modules[dim] {
            return Ok(m.clone());
        }
        let name = &self.refl.name;
        let own = compiler::kernel_module(&self.exe.spirv, name);
        let spirv = own.as_deref().unwrap_or(&self.exe.spirv);
        let module = match compiler::coalesce::coalesce(spirv, dim, at) {
            Some(c) => Some(Arc::new(CoalescedModule {
                module: ShaderModule::new(vk, &compiler::dump(c.spirv))?,
                size_spec_id: c.size_spec_id,
            })),
            None => {
                log::debug!(target: "launch", "{name}: work-groups not coalesced along {dim} (module not understood)");
                None
            }
        };
        modules[dim] = Some(module.clone());
        Ok(module)
    }
}

/// How a launch region of `groups` work-groups of `size` coalesces: along which dimension
/// and how many OpenCL work-groups per Vulkan work-group (a power of two, at least 2, so that
/// one local size has few pipelines); None where its work-groups are large enough, or too
/// few.
fn coalescing(groups: [usize; 3], size: [usize; 3], vk: &VkDevice) -> Option<(usize, usize)> {
    let items: usize = size.iter().product();
    if items >= COALESCED_GROUP_SIZE {
        return None;
    }
    // The dimension with the most work-groups (the first of equals).
    let d = (0..3).rev().max_by_key(|&d| groups[d])?;
    let l = &vk.caps.limits;
    let mut k = COALESCED_GROUP_SIZE.div_ceil(items).next_power_of_two();
    while k > 1
        && (k * items > l.max_compute_work_group_invocations as usize
            || k * size[d] > l.max_compute_work_group_size[d] as usize
            || k > groups[d])
    {
        k /= 2;
    }
    (k >= 2).then_some((d, k))
}

impl Kernel {
    pub fn new(program: &Arc<Program>, name: &str) -> CLResult<Arc<Kernel>> {
        let exes = program.executables();
        check(
            exes.iter().any(|e| e.is_some()),
            CL_INVALID_PROGRAM_EXECUTABLE,
        )?;
        let mut reflection = None;
        let mut devices = vec![];
        for (i, exe) in exes.iter().enumerate() {
            let Some(exe) = exe else {
                devices.push(None);
                continue;
            };
            let refl = exe
                .reflection
                .kernels
                .iter()
                .find(|k| k.name == name)
                .ok_or(ClError(CL_INVALID_KERNEL_NAME))?;
            let table = &program.kernel_devices;
            devices.push(Some(table.kernel_device(
                i,
                &program.devices[i],
                exe,
                refl,
            )?));
            reflection.get_or_insert_with(|| refl.clone());
        }
        let reflection = reflection.ok_or(ClError(CL_INVALID_KERNEL_NAME))?;
        program.kernels_attached.fetch_add(1, Ordering::AcqRel);
        Ok(Arc::new(Kernel {
            base: Base::new(Kind::Kernel),
            program: program.clone(),
            name: name.to_string(),
            args: Mutex::new(vec![None; reflection.num_args as usize]),
            reflection,
            devices,
            exec_info: Mutex::new(Default::default()),
            children: Mutex::new(HashMap::new()),
            related: Default::default(),
        }))
    }

    /// The program's kernel `name` (a block kernel of device-side enqueue), made once.
    pub fn child(&self, name: &str) -> CLResult<Arc<Kernel>> {
        if let Some(k) = self.children.lock().get(name) {
            return Ok(k.clone());
        }
        let k = Kernel::new(&self.program, name)?;
        self.children.lock().insert(name.to_string(), k.clone());
        Ok(k)
    }

    /// clCloneKernel: the same kernel with a copy of the arguments set so far.
    pub fn duplicate(&self) -> Arc<Kernel> {
        self.program.kernels_attached.fetch_add(1, Ordering::AcqRel);
        Arc::new(Kernel {
            base: Base::new(Kind::Kernel),
            program: self.program.clone(),
            name: self.name.clone(),
            reflection: self.reflection.clone(),
            devices: self.devices.clone(),
            args: Mutex::new(self.args.lock().clone()),
            exec_info: Mutex::new(self.exec_info.lock().clone()),
            children: Mutex::new(HashMap::new()),
            related: self.related.clone(),
        })
    }

    pub fn num_args(&self) -> u32 {
        self.reflection.num_args
    }

    pub fn set_arg(&self, index: usize, value: ArgValue) {
        self.args.lock()[index] = Some(HeldArg::new(value));
    }

    /// The arguments of a launch now (CL_INVALID_KERNEL_ARGS if one is not set, or names an
    /// object that has been deleted).
    ///
    /// Checked after the lock is let go: where an argument is missing, the references
    /// upgraded before it are dropped, and one may be the last (a buffer released meanwhile
    /// by another thread), whose destructor callbacks must not run under the lock.
    pub fn args(&self) -> CLResult<Vec<ArgValue>> {
        let set = self.args_set();
        check(set.iter().all(Option::is_some), CL_INVALID_KERNEL_ARGS)?;
        // (Collected in place: no second allocation per launch.)
        Ok(set.into_iter().map_while(|a| a).collect())
    }

    /// The arguments set now, None for those not set (or naming a deleted object).
    pub fn args_set(&self) -> Vec<Option<ArgValue>> {
        let args = self.args.lock();
        args.iter()
            .map(|a| a.as_ref().and_then(HeldArg::get))
            .collect()
    }

    /// The `__local` bytes a launch uses: static `__local` variables (in a flat kernel's
    /// scratch buffer, the program's, compiler::generic_flat) plus `__local` arguments.
    pub fn local_mem_size(&self) -> u64 {
        let dynamic: usize = self
            .args
            .lock()
            .iter()
            .flatten()
            .map(|a| if let HeldArg::Local(s) = a { *s } else { 0 })
            .sum();
        let flat = self.reflection.scratch.as_ref().map_or(0, |s| s.local);
        self.reflection.static_local_mem + flat + dynamic as u64
    }

    fn on(&self, device: &Arc<Device>) -> CLResult<Arc<KernelDevice>> {
        let i = self
            .program
            .device_index(device)
            .ok_or(ClError(CL_INVALID_PROGRAM_EXECUTABLE))?;
        self.devices[i]
            .clone()
            .ok_or(ClError(CL_INVALID_PROGRAM_EXECUTABLE))
    }
}

/// The specialisation of a launch region of work-group `size` (a module's spec constant ids
/// `ids`), with the `__local` argument sizes `local_spec` (by spec id, in elements).
pub(super) fn spec_into(
    spec: &mut SpecBuf,
    ids: &ModuleSpecConstants,
    local_spec: &[(u32, u32)],
    size: [usize; 3],
    work_dim: u32,
    offset: [usize; 3],
) {
    spec.clear();
    spec.extend_from_slice(local_spec);
    if let Some(ids) = ids.workgroup_size {
        spec.extend((0..3).map(|d| (ids[d], size[d] as u32)));
    }
    if let Some(id) = ids.work_dim {
        spec.push((id, work_dim));
    }
    if let Some(ids) = ids.global_offset {
        spec.extend((0..3).map(|d| (ids[d], offset[d] as u32)));
    }
}

/// A launch's geometry, validated by the API layer except for what needs the device.
#[derive(Clone)]
pub struct NdRange {
    pub work_dim: u32,
    pub offset: [usize; 3],
    pub global: [usize; 3],
    pub local: Option<[usize; 3]>,
}

/// A work-group size for a launch with a NULL local size: as large as the device allows,
/// dividing the global size (launches are uniform), filling dimension 0 first.
pub(super) fn choose_local(global: &[usize; 3], work_dim: u32, device: &Device) -> [usize; 3] {
    let max_items = device.max_work_item_sizes();
    let mut budget = device.max_work_group_size().min(256);
    let mut local = [1usize; 3];
    for d in 0..work_dim as usize {
        let mut l = budget.min(max_items[d]).min(global[d].max(1));
        while l > 1 && global[d] % l != 0 {
            l -= 1;
        }
        local[d] = l;
        budget /= l;
    }
    local
}

fn put(push: &mut [u8], range: Option<PushRange>, values: &[u32]) {
    if let Some(r) = range {
        let n = (r.size as usize).min(4 * values.len());
        let to = &mut push[r.offset as usize..r.offset as usize + n];
        for (to, v) in to.chunks_mut(4).zip(values) {
            to.copy_from_slice(&v.to_ne_bytes()[..to.len()]);
        }
    }
}

/// clEnqueueNDRangeKernel after argument validation.
pub fn enqueue(
    queue: &Arc<Queue>,
    kernel: &Arc<Kernel>,
    nd: &NdRange,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let args = kernel.args()?;
    enqueue_as(queue, kernel, args, nd, wait, CL_COMMAND_NDRANGE_KERNEL)
}

/// A launch of `kernel` with `args`, reported as `command_type` (internal kernels implement
/// other commands): prepared (`prepare`), then recorded into the queue's open batch.
pub fn enqueue_as(
    queue: &Arc<Queue>,
    kernel: &Arc<Kernel>,
    args: Vec<ArgValue>,
    nd: &NdRange,
    wait: &[Arc<Event>],
    command_type: cl_command_type,
) -> CLResult<Arc<Event>> {
    // Device-side enqueue: the launch's state is its hidden last argument, and its children
    // run in its host part (super::device_enqueue).
    let mut args = args;
    let state = match kernel.reflection.device_queue {
        true => {
            let state = super::device_enqueue::State::new(queue)?;
            args.truncate(kernel.reflection.num_args as usize);
            args.push(state.argument()?);
            Some(state)
        }
        false => None,
    };
    let Some(mut launch) = prepare(queue, kernel, args, nd)? else {
        return queue.enqueue_marker(command_type, wait, vec![]);
    };
    if let Some(state) = state {
        let (queue, kernel, printf) = (queue.clone(), kernel.clone(), launch.host.take());
        launch.host = Some(Box::new(move || {
            // The parent's printf output first: it ran first.
            let printed = printf.map_or(Ok(()), |p| p());
            super::device_enqueue::run_children(&queue, &kernel, &state).and(printed)
        }));
    }
    let holds = kernel.reflection.device_queue;
    // Recording runs under the queue's lock, and a launch that fails to record drops its
    // memory objects there: held here too, none of those references is the last one (the
    // arguments are weak: another thread may release a buffer meanwhile), so destructor
    // callbacks run here, after the lock is let go.
    let held = launch.memory();
    let uses = Use::arguments(&held);
    let event = residence::around(queue, &uses, wait, |wait| {
        queue.enqueue_holding(command_type, wait, holds, |rec| launch.record(rec))
    });
    drop(uses);
    drop(held);
    event
}

/// A launch ready to record: its pipelines, bindings and push constants.
pub struct Prepared {
    kd: Arc<KernelDevice>,
    set_bindings: Vec<Vec<(u32, Binding)>>,
    dispatches: Dispatches,
    backed: Vec<(Arc<Mem>, Arc<VkImage>, bool)>,
    /// Printf output (its host part).
    host: Option<super::queue::HostPart>,
    keep: Keep,
    /// Buffers of vkcl's own whose addresses are pushed (physical addressing).
    held: Vec<Arc<Buffer>>,
}

/// Prepares a launch of `kernel` with `args` on `queue`'s device, in steps: the build
/// (logical, or physical addressing where SVM or device pointers need it), the shape
/// (work-group size and count, checked), the arguments (descriptors, push constants,
/// `__local` sizes), the buffers of vkcl's own (by-value arguments, module constants,
/// printf), the regions. None for a launch without work-items.
pub fn prepare(
    queue: &Arc<Queue>,
    kernel: &Arc<Kernel>,
    args: Vec<ArgValue>,
    nd: &NdRange,
) -> CLResult<Option<Prepared>> {
    let exec_info = kernel.exec_info.lock().clone();
    prepare_with(queue, kernel, args, nd, &exec_info)
}

/// `prepare` with the SVM exec info given instead of the kernel's (a mutable launch keeps
/// its own, cl_khr_command_buffer_mutable_dispatch).
pub fn prepare_with(
    queue: &Arc<Queue>,
    kernel: &Arc<Kernel>,
    args: Vec<ArgValue>,
    nd: &NdRange,
    exec_info: &super::svm::ExecInfo,
) -> CLResult<Option<Prepared>> {
    let mut kd = kernel.on(&queue.device)?;
    match super::svm::addressing(kernel, &args, exec_info, queue) {
        Addressing::Logical => {}
        Addressing::Required => kd = kd.physical(kernel, &queue.device)?,
        Addressing::Preferred => match kd.physical(kernel, &queue.device) {
            Ok(p) => kd = p,
            Err(e) => {
                log::info!(target: "launch", "{}: no physical-addressing build ({e})", kernel.name)
            }
        },
    }
    let Some((local, groups)) = launch_shape(kernel, &kd, nd, &queue.device)? else {
        return Ok(None);
    };
    let mut launch = Launch::new(&kd, nd, local, groups);
    let mut args = args;
    if let Some(s) = &kd.refl.scratch {
        let hidden = launch.scratch(queue, s, &mut args, local, groups)?;
        args.extend(hidden);
    }
    launch.bind_arguments(queue, &kd, &args)?;
    launch.bind_image_metadata(&kd.refl, &args)?;
    let reached = super::svm::reached(&queue.context, &args, exec_info);
    launch.keep.extend(reached);
    launch.bind_own_buffers(queue, &kd)?;
    let dispatches = launch.dispatches(&queue.vk, kernel, &kd, nd)?;
    let Launch {
        bindings: set_bindings,
        keep,
        backed,
        host,
        held,
        ..
    } = launch;
    if log::log_enabled!(target: "launch", log::Level::Trace) {
        for (set, b) in set_bindings.iter().enumerate() {
            for (binding, b) in b {
                log::trace!(target: "launch", "  set {set} binding {binding}: {b:?}");
            }
        }
    }
    Ok(Some(Prepared {
        kd,
        set_bindings,
        dispatches,
        backed,
        host,
        keep,
        held,
    }))
}

impl Prepared {
    /// The memory objects the launch keeps alive (for a caller to hold across a lock).
    pub fn memory(&self) -> Keep {
        self.keep.clone()
    }

    /// Records the launch's dispatches (and the image syncs around them).
    pub fn record(mut self, rec: &mut Recorder) -> CLResult<Recorded> {
        for (m, image, _) in &self.backed {
            super::image::sync_in(rec, m, image);
        }
        for b in &self.held {
            rec.hold(b);
        }
        let mut dispatches = self.dispatches.into_iter().peekable();
        while let Some((pipeline, push, groups)) = dispatches.next() {
            let bindings = match dispatches.peek() {
                Some(_) => self.set_bindings.clone(),
                None => std::mem::take(&mut self.set_bindings),
            };
            rec.dispatch(&self.kd.layout, &pipeline, bindings, push, groups)?;
        }
        for (m, image, _) in self.backed.iter().filter(|b| b.2) {
            super::image::sync_out(rec, m, image);
        }
        Ok(Recorded {
            host: self.host,
            keep: self.keep,
        })
    }
}

/// The work-group size and count of a launch, checked against the kernel and the device;
/// None for a launch without work-items.
fn launch_shape(
    kernel: &Kernel,
    kd: &KernelDevice,
    nd: &NdRange,
    device: &Device,
) -> CLResult<Option<([usize; 3], [usize; 3])>> {
    let refl = &kernel.reflection;
    let dims = nd.work_dim as usize;
    let local = match (nd.local, refl.reqd_work_group_size) {
        (Some(l), Some(r)) => {
            check(
                (0..3).all(|d| l[d] == r[d] as usize),
                CL_INVALID_WORK_GROUP_SIZE,
            )?;
            l
        }
        (Some(l), None) => l,
        (None, Some(r)) => r.map(|x| x as usize),
        (None, None) => choose_local(&nd.global, nd.work_dim, device),
    };
    let max_items = device.max_work_item_sizes();
    check(
        (0..3).all(|d| local[d] >= 1 && local[d] <= max_items[d]),
        CL_INVALID_WORK_ITEM_SIZE,
    )?;
    check(
        local.iter().product::<usize>() <= device.max_work_group_size(),
        CL_INVALID_WORK_GROUP_SIZE,
    )?;
    // Non-uniform work-groups only for programs built for them (OpenCL C 2.0+).
    check(
        !kd.exe.uniform || (0..dims).all(|d| nd.global[d] % local[d] == 0),
        CL_INVALID_WORK_GROUP_SIZE,
    )?;
    check(
        kernel.local_mem_size() <= device.local_mem_size(),
        CL_OUT_OF_RESOURCES,
    )?;

    if nd.global[..dims].contains(&0) {
        return Ok(None);
    }
    let groups: [usize; 3] = std::array::from_fn(|d| {
        if d < dims {
            nd.global[d].div_ceil(local[d])
        } else {
            1
        }
    });
    log::debug!(
        target: "launch",
        "{}: global {:?} local {:?} offset {:?} groups {groups:?}",
        kernel.name,
        &nd.global[..dims],
        &local[..dims],
        &nd.offset[..dims]
    );
    Ok(Some((local, groups)))
}

/// Dispatch ready: a pipeline, its push constants and its work-group count.
type Dispatch = (Arc<Pipeline>, Vec<u8>, [u32; 3]);
/// A launch's dispatches: one per region (one for a uniform launch).
type Dispatches = SmallVec<[Dispatch; 1]>;
/// Specialisation constants: (id, value).
type Spec = Vec<(u32, u32)>;
/// A launch's specialisation constants, looked up without allocating.
pub(super) type SpecBuf = SmallVec<[(u32, u32); 16]>;

/// What a launch binds, pushes and keeps alive, gathered from its arguments.
struct Launch {
    local: [usize; 3],
    push: Vec<u8>,
    /// By set (every set of the layout), then (binding, what is bound).
    bindings: Vec<Vec<(u32, Binding)>>,
    /// The bytes of by-value arguments passed in buffers, by (set, binding, uniform).
    pod_buffers: BTreeMap<(u32, u32, bool), Vec<u8>>,
    /// The specialisation of `__local` argument sizes.
    local_spec: Vec<(u32, u32)>,
    keep: Keep,
    /// Buffer-backed images among the arguments (refreshed from their buffers before the
    /// launch, written back after it where the kernel may write them).
    backed: Vec<(Arc<Mem>, Arc<VkImage>, bool)>,
    /// The launch's host part (printf output).
    host: Option<super::queue::HostPart>,
    /// The storage-buffer arguments, to find those that share memory.
    buffers: SmallVec<[Bound; 4]>,
    /// Buffers of vkcl's own whose addresses are pushed (physical addressing).
    held: Vec<Arc<Buffer>>,
}

fn u32s(a: [usize; 3]) -> [u32; 3] {
    a.map(|x| x as u32)
}

impl Launch {
    /// The push constants every region shares (the region's own are set in `dispatches`).
    fn new(kd: &Arc<KernelDevice>, nd: &NdRange, local: [usize; 3], groups: [usize; 3]) -> Launch {
        let dims = nd.work_dim as usize;
        let mut push = vec![0u8; kd.layout.push_constant_size as usize];
        let pc = &kd.exe.reflection.push_constants;
        put(&mut push, pc.global_offset, &u32s(nd.offset));
        put(&mut push, pc.region_offset, &u32s(nd.offset));
        put(&mut push, pc.enqueued_local_size, &u32s(local));
        let global = std::array::from_fn(|d| if d < dims { nd.global[d] } else { 1 });
        put(&mut push, pc.global_size, &u32s(global));
        put(&mut push, pc.num_workgroups, &u32s(groups));
        let sets = &kd.layout.sets;
        Launch {
            local,
            push,
            bindings: sets.iter().map(|s| Vec::with_capacity(s.len())).collect(),
            pod_buffers: BTreeMap::new(),
            local_spec: vec![],
            keep: Vec::with_capacity(kd.refl.args.len()),
            backed: vec![],
            host: None,
            buffers: SmallVec::new(),
            held: vec![],
        }
    }

    /// A flat kernel's scratch buffer for this launch (`compiler::generic_flat`): per
    /// work-group its `local` bytes then its `__local` pointer arguments' (each at a multiple
    /// of generic_flat::ALIGN), per work-item `private` bytes, kept until the launch
    /// completes; the hidden arguments: its address, then with `__local` pointer arguments
    /// the work-group's bytes and each one's offset in them. Those arguments' own memory (a
    /// specialised workgroup array the kernel does not use) shrinks to one element.
    fn scratch(
        &mut self,
        queue: &Queue,
        s: &compiler::reflection::Scratch,
        args: &mut [ArgValue],
        local: [usize; 3],
        groups: [usize; 3],
    ) -> CLResult<Vec<ArgValue>> {
        let mut group_bytes = s.local;
        let mut offsets = vec![];
        for &i in &s.local_args {
            let Some(ArgValue::Local(size)) = args.get_mut(i as usize) else {
                return Err(ClError(CL_INVALID_KERNEL_ARGS));
            };
            offsets.push(ArgValue::Bytes(group_bytes.to_le_bytes().into()));
            group_bytes += (*size as u64).next_multiple_of(compiler::generic_flat::ALIGN);
            *size = 1;
        }
        let groups = groups.iter().product::<usize>() as u64;
        let items = groups * local.iter().product::<usize>() as u64;
        let size = groups * group_bytes + items * s.private;
        let b = Arc::new(Buffer::new(
            &queue.vk,
            size.max(16),
            Placement::Device,
            "scratch",
        )?);
        let address = b.device_address().ok_or(ClError(CL_INVALID_OPERATION))?;
        self.held.push(b);
        let mut hidden = vec![ArgValue::Bytes(address.to_le_bytes().into())];
        if !s.local_args.is_empty() {
            hidden.push(ArgValue::Bytes(group_bytes.to_le_bytes().into()));
            hidden.extend(offsets);
        }
        Ok(hidden)
    }

    fn bind(&mut self, set: u32, binding: u32, b: impl Into<Binding>) {
        let set = set as usize;
        if self.bindings.len() <= set {
            // (Every set reflection names is in the layout; kept total all the same.)
            self.bindings.resize_with(set + 1, Vec::new);
        }
        self.bindings[set].push((binding, b.into()));
    }

    /// Writes `bytes` at `offset` of the by-value buffer at (set, binding).
    fn pod(&mut self, at: (u32, u32, bool), offset: usize, size: usize, bytes: &[u8]) {
        let data = self.pod_buffers.entry(at).or_default();
        if data.len() < offset + size {
            data.resize(offset + size, 0);
        }
        let n = size.min(bytes.len());
        data[offset..offset + n].copy_from_slice(&bytes[..n]);
    }

    /// The arguments: buffers, images, samplers and texel buffers as descriptors, by-value
    /// arguments as push constants or buffer bytes, `__local` sizes as specialisation.
    fn bind_arguments(
        &mut self,
        queue: &Arc<Queue>,
        kd: &KernelDevice,
        args: &[ArgValue],
    ) -> CLResult<()> {
        let refl = &kd.refl;
        check_constant_arguments(refl, args, &queue.device)?;
        for (ordinal, (arg, value)) in refl.args.iter().zip(args).enumerate() {
            match (&arg.kind, value) {
                (
                    ArgKind::StorageBuffer { set, binding }
                    | ArgKind::UniformBuffer { set, binding },
                    ArgValue::Mem(m),
                ) => {
                    let ty = descriptor_type(&arg.kind)?
                        .map(|t| t.2)
                        .expect("buffer kinds have a descriptor");
                    let b = match m {
                        Some(m) => {
                            let storage = m.storage_on(&queue.vk)?;
                            m.check_sub_buffer_alignment(&queue.device)?;
                            self.keep.push(m.clone());
                            if ty == Descriptor::StorageBuffer {
                                self.buffers.push(Bound {
                                    at: (*set, *binding),
                                    buffer: storage.clone(),
                                    start: m.offset,
                                    end: m.offset + m.size as u64,
                                });
                            }
                            BufferBinding {
                                ty,
                                buffer: storage.clone(),
                                offset: m.offset,
                                // Padded like the allocation, so vector loads at the end work.
                                range: padded(m.size as u64).min(padded(storage.size) - m.offset),
                            }
                        }
                        None => BufferBinding {
                            ty,
                            buffer: kd.scratch.clone(),
                            offset: 0,
                            range: WHOLE_SIZE,
                        },
                    };
                    self.bind(*set, *binding, b);
                }
                (ArgKind::PodPushConstant { offset, size }, ArgValue::Bytes(bytes)) => {
                    let n = (*size as usize).min(bytes.len());
                    self.push[*offset as usize..*offset as usize + n].copy_from_slice(&bytes[..n]);
                }
                (
                    ArgKind::PodStorageBuffer {
                        set,
                        binding,
                        offset,
                        size,
                    }
                    | ArgKind::PodUniform {
                        set,
                        binding,
                        offset,
                        size,
                    },
                    ArgValue::Bytes(bytes),
                ) => {
                    let uniform = matches!(arg.kind, ArgKind::PodUniform { .. });
                    let at = (*set, *binding, uniform);
                    self.pod(at, *offset as usize, *size as usize, bytes);
                }
                (ArgKind::Local { spec_id, elem_size }, ArgValue::Local(size)) => {
                    self.local_spec
                        .push((*spec_id, (*size as u32).div_ceil((*elem_size).max(1))));
                }
                (
                    ArgKind::SampledImage { set, binding } | ArgKind::StorageImage { set, binding },
                    ArgValue::Mem(Some(m)),
                ) => {
                    let image = super::image::vk_image(m, &queue.vk)?;
                    if m.image().is_ok_and(|i| i.backed) {
                        let writes = matches!(arg.kind, ArgKind::StorageImage { .. });
                        self.backed.push((m.clone(), image.clone(), writes));
                    }
                    let ty = if let ArgKind::SampledImage { .. } = arg.kind {
                        Descriptor::SampledImage
                    } else {
                        Descriptor::StorageImage
                    };
                    let b = Binding::image(ty, &image).ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
                    self.keep.push(m.clone());
                    self.bind(*set, *binding, b);
                }
                (
                    ArgKind::UniformTexelBuffer { set, binding }
                    | ArgKind::StorageTexelBuffer { set, binding },
                    ArgValue::Mem(Some(m)),
                ) => {
                    let Ok(Store::Texels(views)) = m.image().map(|i| &i.store) else {
                        return Err(ClError(CL_INVALID_KERNEL_ARGS));
                    };
                    let view = views.on(&queue.vk)?;
                    let ty = descriptor_type(&arg.kind)?
                        .map(|t| t.2)
                        .expect("texel buffers have a descriptor");
                    self.keep.push(m.clone());
                    self.bind(*set, *binding, Binding::Texels(ty, view.clone()));
                }
                (ArgKind::Sampler { set, binding }, ArgValue::Sampler(s)) => {
                    let sampler = queue.vk.sampler(sampler_mask(refl, ordinal, s))?;
                    self.bind(*set, *binding, Binding::Sampler(sampler));
                }
                (ArgKind::PointerPushConstant { offset, size }, value) => {
                    let a = super::svm::address(value, queue)?;
                    let a = a.ok_or(ClError(CL_INVALID_KERNEL_ARGS))?.to_le_bytes();
                    let n = (*size as usize).min(8);
                    self.push[*offset as usize..*offset as usize + n].copy_from_slice(&a[..n]);
                    if let ArgValue::Mem(Some(m)) = value {
                        self.keep.push(m.clone());
                    }
                }
                (
                    ArgKind::PointerUniform {
                        set,
                        binding,
                        offset,
                        size,
                    },
                    value,
                ) => {
                    let a = super::svm::address(value, queue)?;
                    let a = a.ok_or(ClError(CL_INVALID_KERNEL_ARGS))?.to_le_bytes();
                    self.pod((*set, *binding, true), *offset as usize, *size as usize, &a);
                    if let ArgValue::Mem(Some(m)) = value {
                        self.keep.push(m.clone());
                    }
                }
                (ArgKind::Unused, _) => {}
                _ => return Err(ClError(CL_INVALID_KERNEL_ARGS)),
            }
        }
        Ok(())
    }

    /// What kernels ask about their images and samplers (get_image_channel_order,
    /// get_image_channel_data_type, the normalization clspv does for some samplers).
    fn bind_image_metadata(&mut self, refl: &KernelReflection, args: &[ArgValue]) -> CLResult<()> {
        for m in &refl.image_metadata {
            let value = match (m.kind, args.get(m.ordinal as usize)) {
                (ImageMetadataKind::ChannelOrder, Some(ArgValue::Mem(Some(mem)))) => {
                    mem.image()?.format.order
                }
                (ImageMetadataKind::ChannelDataType, Some(ArgValue::Mem(Some(mem)))) => {
                    mem.image()?.format.data_type
                }
                (
                    ImageMetadataKind::NormalizedSamplerMask
                    | ImageMetadataKind::SamplerMask
                    | ImageMetadataKind::SamplerMaskInside,
                    Some(ArgValue::Sampler(s)),
                ) => s.mask(),
                _ => return Err(ClError(CL_INVALID_KERNEL_ARGS)),
            };
            put(&mut self.push, m.push_constant, &[value]);
            if let Some(id) = m.spec_id {
                self.local_spec.push((id, value));
            }
            if let Some((set, binding, range)) = m.uniform {
                self.pod(
                    (set, binding, true),
                    range.offset as usize,
                    4,
                    &value.to_le_bytes(),
                );
            }
        }
        Ok(())
    }

    /// The buffers and samplers of vkcl's own: literal samplers, by-value argument buffers,
    /// module constants, and the printf buffer of a kernel that prints.
    fn bind_own_buffers(&mut self, queue: &Arc<Queue>, kd: &KernelDevice) -> CLResult<()> {
        let r = &kd.exe.reflection;
        let refl = &kd.refl;
        for s in &r.literal_samplers {
            let sampler = queue.vk.sampler(s.mask)?;
            self.bind(s.set, s.binding, Binding::Sampler(sampler));
        }
        for ((set, binding, uniform), mut data) in std::mem::take(&mut self.pod_buffers) {
            data.resize(data.len().next_multiple_of(16), 0);
            let b = queue.small_buffers.take(data.len() as u64)?;
            // SAFETY: no GPU work uses a buffer the pool hands out.
            unsafe { b.write(0, &data) };
            let ty = buffer_descriptor(uniform);
            self.bind(
                set,
                binding,
                BufferBinding {
                    ty,
                    buffer: b,
                    offset: 0,
                    range: data.len() as u64,
                },
            );
        }
        let data = [
            (&r.constant_data, &kd.constant_data),
            (&r.globals, &kd.globals),
        ];
        for (c, buf) in data
            .into_iter()
            .filter_map(|(c, b)| c.as_ref().zip(b.as_ref()))
        {
            let ty = buffer_descriptor(c.is_uniform);
            self.bind(
                c.set,
                c.binding,
                BufferBinding {
                    ty,
                    buffer: buf.clone(),
                    offset: 0,
                    range: WHOLE_SIZE,
                },
            );
        }
        if let (Some((range, _)), Some(buf)) = (&r.constant_data_pointer, &kd.constant_data) {
            let a = buf.device_address().ok_or(ClError(CL_INVALID_OPERATION))?;
            put(&mut self.push, Some(*range), &[a as u32, (a >> 32) as u32]);
            self.held.push(buf.clone());
        }
        // A kernel that prints gets a printf buffer of its own for this launch, decoded and
        // written to stdout when the launch completes (in the queue's order).
        if let Some((at, size)) = printf_buffer(r) {
            let mut buffer = kd.scratch.clone();
            if refl.may_use_printf {
                let b = Arc::new(Buffer::new(
                    &queue.vk,
                    size.max(8) as u64,
                    Placement::Readback,
                    "printf",
                )?);
                // SAFETY: the buffer is new; no GPU work uses it yet.
                unsafe { b.write(0, &[0; 4]) };
                buffer = b.clone();
                // The formats are read from the executable when the launch completes.
                let exe = kd.exe.clone();
                self.host = Some(Box::new(move || {
                    let formats = exe
                        .reflection
                        .printf
                        .as_ref()
                        .map_or(&[][..], |p| &p.formats);
                    let mut bytes = vec![0u8; size as usize];
                    // SAFETY: the launch that wrote the buffer has completed.
                    unsafe { b.read(0, &mut bytes) };
                    let text = super::printf::decode(&bytes, formats);
                    use std::io::Write;
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
                    Ok(())
                }));
            }
            match at {
                PrintfAt::Binding(set, binding) => {
                    let b = BufferBinding {
                        ty: Descriptor::StorageBuffer,
                        buffer,
                        offset: 0,
                        range: WHOLE_SIZE,
                    };
                    self.bind(set, binding, b);
                }
                PrintfAt::Push(range) => {
                    let a = buffer
                        .device_address()
                        .ok_or(ClError(CL_INVALID_OPERATION))?;
                    put(&mut self.push, Some(range), &[a as u32, (a >> 32) as u32]);
                    self.held.push(buffer);
                }
            }
        }
        Ok(())
    }

    /// One dispatch per region: its pipeline (work-group size), push constants (where the
    /// region starts) and work-group count.
    fn dispatches(
        &mut self,
        vk: &Arc<VkDevice>,
        kernel: &Kernel,
        kd: &KernelDevice,
        nd: &NdRange,
    ) -> CLResult<Dispatches> {
        let aliased = shared_bindings(&self.buffers);
        let r = &kd.exe.reflection;
        let pc = &r.push_constants;
        let local = self.local;
        let regions = regions(&nd.global, &local, nd.work_dim as usize);
        let mut dispatches = Dispatches::new();
        let mut spec = SpecBuf::new();
        let last = regions.len().saturating_sub(1);
        for (i, region) in regions.into_iter().enumerate() {
            let ids = &r.spec_constants;
            spec_into(
                &mut spec,
                ids,
                &self.local_spec,
                region.size,
                nd.work_dim,
                nd.offset,
            );
            let mut groups = region.groups.map(|g| g as u32);
            // Several OpenCL work-groups per Vulkan work-group, where the kernel allows.
            let plan = (kd.coalesce_at.is_some() && aliased.is_empty())
                .then(|| coalescing(region.groups, region.size, vk))
                .flatten();
            let coalesced = match plan {
                Some((d, k)) => {
                    let vulkan_size = (k * region.size[d]) as u32;
                    let p = kd.coalesced_pipeline(vk, d, &spec, vulkan_size)?;
                    p.map(|p| (p, d, k))
                }
                _ => None,
            };
            let pipeline = match &coalesced {
                Some((p, d, k)) => {
                    log::debug!(target: "launch", "{}: {k} work-groups of {:?} per Vulkan work-group along {d}", kernel.name, region.size);
                    groups[*d] = region.groups[*d].div_ceil(*k) as u32;
                    p.clone()
                }
                None if aliased.is_empty() => kd.pipeline(&spec)?,
                None => kd.aliased_pipeline(vk, &kernel.name, &spec, &aliased)?,
            };
            let max_groups = vk.caps.limits.max_compute_work_group_count;
            let coalesced_dim = coalesced.as_ref().map(|c| c.1);
            if (0..3).any(|d| groups[d] > max_groups[d] && coalesced_dim != Some(d))
                && kd.exe.num_workgroups_users.contains(&kernel.name)
            {
                // The region is split into several dispatches, and this kernel reads the group
                // count (get_num_groups / get_global_size) from NumWorkgroups, which each
                // dispatch would see as its own (the coalesced module reads the pushed count
                // along its dimension instead).
                log::warn!(target: "api", "{groups:?} work-groups exceed the device's limit {max_groups:?} and {} needs the group count", kernel.name);
                return Err(ClError(CL_OUT_OF_RESOURCES));
            }
            let mut push = if i == last {
                std::mem::take(&mut self.push)
            } else {
                self.push.clone()
            };
            let start = region.start;
            let offset = std::array::from_fn(|d| nd.offset[d] + start[d]);
            put(&mut push, pc.region_offset, &u32s(offset));
            let group_offset = std::array::from_fn(|d| start[d] / local[d]);
            put(&mut push, pc.region_group_offset, &u32s(group_offset));
            if let (Some((_, d, _)), Some(at)) = (&coalesced, kd.coalesce_at) {
                let count = PushRange {
                    offset: at,
                    size: 4,
                };
                put(&mut push, Some(count), &[region.groups[*d] as u32]);
            }
            dispatches.push((pipeline, push, groups));
        }
        Ok(dispatches)
    }
}

/// Where a kernel's printf buffer goes: a binding, or (physical addressing) its address pushed.
#[derive(Clone, Copy)]
enum PrintfAt {
    Binding(u32, u32),
    Push(PushRange),
}

/// The printf buffer of a module where a kernel prints: where it goes, and its size.
fn printf_buffer(r: &compiler::reflection::Reflection) -> Option<(PrintfAt, u32)> {
    let p = r.printf.as_ref()?;
    let bound = p.buffer.map(|(s, b, size)| (PrintfAt::Binding(s, b), size));
    bound.or(p.pointer.map(|(range, size)| (PrintfAt::Push(range), size)))
}

fn buffer_descriptor(uniform: bool) -> Descriptor {
    if uniform {
        Descriptor::UniformBuffer
    } else {
        Descriptor::StorageBuffer
    }
}

/// `__constant` arguments (Table 1 of the spec): at most CL_DEVICE_MAX_CONSTANT_ARGS of them,
/// CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE bytes in all.
fn check_constant_arguments(
    refl: &KernelReflection,
    args: &[ArgValue],
    device: &Device,
) -> CLResult<()> {
    let (count, bytes) = refl
        .args
        .iter()
        .zip(args)
        .filter(|(a, _)| {
            a.info
                .as_ref()
                .is_some_and(|i| i.address_qualifier == CL_KERNEL_ARG_ADDRESS_CONSTANT)
        })
        .fold((0u32, 0u64), |(n, total), (_, v)| match v {
            ArgValue::Mem(Some(m)) => (n + 1, total + m.size as u64),
            _ => (n, total),
        });
    check(
        count <= super::device::MAX_CONSTANT_ARGS && bytes <= device.max_constant_buffer_size(),
        CL_OUT_OF_RESOURCES,
    )
}

/// A part of a launch whose work-groups all have one size.
struct Region {
    /// First work-item (relative to the global offset).
    start: [usize; 3],
    groups: [usize; 3],
    size: [usize; 3],
}

/// The regions of a launch: the work-groups of the enqueued `local` size, and where `local`
/// does not divide `global`, the last work-group of that dimension with the remainder size
/// (up to 2^dims regions; one for a uniform launch).
fn regions(global: &[usize; 3], local: &[usize; 3], dims: usize) -> SmallVec<[Region; 8]> {
    // Per dimension: (start, groups, size) of the full part and of the remainder, and how
    // many of the two there are.
    let mut parts = [[(0, 1, 1); 2]; 3];
    let mut counts = [1usize; 3];
    for d in 0..dims {
        let (full, rest) = (global[d] / local[d], global[d] % local[d]);
        counts[d] = 0;
        if full > 0 {
            parts[d][0] = (0, full, local[d]);
            counts[d] = 1;
        }
        if rest > 0 {
            parts[d][counts[d]] = (full * local[d], 1, rest);
            counts[d] += 1;
        }
    }
    let mut out = SmallVec::new();
    for &z in &parts[2][..counts[2]] {
        for &y in &parts[1][..counts[1]] {
            for &x in &parts[0][..counts[0]] {
                out.push(Region {
                    start: [x.0, y.0, z.0],
                    groups: [x.1, y.1, z.1],
                    size: [x.2, y.2, z.2],
                });
            }
        }
    }
    out
}

/// The mask of the Vulkan sampler a sampler argument `s` at `ordinal` is bound as.
fn sampler_mask(refl: &KernelReflection, ordinal: usize, s: &super::sampler::Sampler) -> u32 {
    // Where clspv normalizes the coordinates itself (it is told the sampler's mask
    // in bind_image_metadata), the Vulkan sampler is a normalized one.
    let normalizes = refl.image_metadata.iter().any(|m| {
        m.kind == ImageMetadataKind::NormalizedSamplerMask && m.ordinal as usize == ordinal
    });
    let mut mask = s.mask() | if normalizes { SAMPLER_NORMALIZED } else { 0 };
    // compiler::sampler_wrap keeps the coordinates of the reads through a
    // sampler it pushes the mask of inside the image (or on CLAMP's border) for
    // nearest filtering (texel centres) and for linear filtering with
    // unnormalized CLAMP_TO_EDGE (`[0.5, w - 0.5]`): CLAMP's sampler reads the
    // same texels there, and lavapipe reads them in float (docs/IMAGES.md).
    let pushed = refl
        .image_metadata
        .iter()
        .any(|m| m.kind == ImageMetadataKind::SamplerMaskInside && m.ordinal as usize == ordinal);
    let nearest = mask & SAMPLER_FILTER_LINEAR == 0;
    let edge = mask & (SAMPLER_NORMALIZED | SAMPLER_ADDRESS_MASK) == 2;
    if pushed && (nearest || edge) && mask & SAMPLER_ADDRESS_MASK != 0 {
        mask = mask & !SAMPLER_ADDRESS_MASK | 4;
    }
    mask
}
