//! A device: one Vulkan physical device, its logical device (opened on first use) and the
//! OpenCL properties derived from its limits and features.

use super::error::CLResult;
use super::kernel::Kernel;
use super::object::{Base, ClObject, Kind};
use crate::cl::*;
use crate::compiler::options::{self, EnqueueLimits, StorageClasses, Target};
use crate::vk::device::Device as VkDevice;
use crate::vk::instance::Instance;
use crate::vk::probe::Caps;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

/// Vector widths by type: char, short, int, long, float, double, half (`Device::vector_widths`).
pub struct VectorWidths {
    pub preferred: [u32; 7],
    pub native: [u32; 7],
}

/// The bits of those types, and the indices of double and half.
const TYPE_BITS: [u32; 7] = [8, 16, 32, 64, 32, 64, 16];
const DOUBLE: usize = 5;
const HALF: usize = 6;

#[repr(C)]
pub struct Device {
    pub base: Base,
    pub caps: Arc<Caps>,
    /// CL_DEVICE_NAME: the Vulkan name, with " (copy N)" for the copies VKCL_DEVICE_COPIES
    /// makes.
    pub name: String,
    pub instance: Arc<Instance>,
    logical: Mutex<Option<Arc<VkDevice>>>,
    /// The internal copy kernel (`internal::copy16`), built on first use; None if it failed.
    pub internal_copy: OnceLock<Option<Arc<Kernel>>>,
    /// Kernel modules, layouts and pipelines shared by kernels of identical SPIR-V.
    pub kernel_objects: super::kernel_objects::Cache,
}

impl ClObject for Device {
    const KIND: Kind = Kind::Device;
    const INVALID: i32 = CL_INVALID_DEVICE;
    fn base(&self) -> &Base {
        &self.base
    }
}

/// CL_DEVICE_MAX_CONSTANT_ARGS.
pub const MAX_CONSTANT_ARGS: u32 = 8;

/// The OpenCL C versions vkcl claims on every device; 2.0 too where `Device::opencl_c_2_0`.
const OPENCL_C_VERSIONS: &[(u32, u32)] = &[(1, 0), (1, 1), (1, 2), (3, 0)];

/// The OpenCL C 3.0 features OpenCL C 2.0 requires (all of them, images aside: "OpenCL C 3.0
/// §6.2.1: under 2.0 the optional features are supported", images only where the device has
/// them).
const OPENCL_C_2_0_FEATURES: [&str; 10] = [
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_device_enqueue",
    "__opencl_c_generic_address_space",
    "__opencl_c_pipes",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_int64",
];

impl Device {
    /// The cl_device_id of a Vulkan device; `copy` > 0 for the extra copies of
    /// VKCL_DEVICE_COPIES (each one has its own VkDevice).
    pub fn new(instance: Arc<Instance>, caps: Arc<Caps>, copy: usize) -> Device {
        let name = match copy {
            0 => caps.name.clone(),
            n => format!("{} (copy {})", caps.name, n + 1),
        };
        Device {
            base: Base::new(Kind::Device),
            name,
            caps,
            instance,
            logical: Mutex::new(None),
            internal_copy: OnceLock::new(),
            kernel_objects: Default::default(),
        }
    }

    /// The logical device, opened on first use and kept for the life of the process.
    pub fn vk(&self) -> CLResult<Arc<VkDevice>> {
        let mut logical = self.logical.lock();
        if let Some(d) = &*logical {
            return Ok(d.clone());
        }
        let d = VkDevice::new(self.instance.clone(), self.caps.clone())?;
        *logical = Some(d.clone());
        Ok(d)
    }

    pub fn device_type(&self) -> cl_device_type {
        match crate::config::get().device_type.as_deref() {
            Some("cpu") => return CL_DEVICE_TYPE_CPU,
            Some("gpu") => return CL_DEVICE_TYPE_GPU,
            Some("accelerator") => return CL_DEVICE_TYPE_ACCELERATOR,
            _ => {}
        }
        if self.caps.is_cpu() {
            CL_DEVICE_TYPE_CPU
        } else if self.caps.is_gpu() {
            CL_DEVICE_TYPE_GPU
        } else {
            CL_DEVICE_TYPE_ACCELERATOR
        }
    }

    pub fn max_work_group_size(&self) -> usize {
        let l = &self.caps.limits;
        l.max_compute_work_group_invocations
            .min(l.max_compute_work_group_size[0]) as usize
    }

    pub fn max_work_item_sizes(&self) -> [usize; 3] {
        self.caps
            .limits
            .max_compute_work_group_size
            .map(|s| s as usize)
    }

    /// The largest buffer a kernel can address: one allocation, bound as one storage buffer,
    /// or where the device has buffer device addresses, reached by address (launches with a
    /// buffer larger than a binding use the physical-addressing build: core::svm).
    pub fn max_mem_alloc_size(&self) -> u64 {
        self.addressable_size(self.caps.global_mem_size())
    }

    fn addressable_size(&self, heap: u64) -> u64 {
        let c = &self.caps;
        let mut size = c.limits.max_storage_buffer_range as u64;
        if self.has_device_addresses() {
            size = u64::MAX;
        }
        if c.max_memory_allocation_size > 0 {
            size = size.min(c.max_memory_allocation_size);
        }
        // Descriptor ranges are padded to 16 bytes (vector loads at a buffer's end).
        (size & !15).min(heap)
    }

    /// The device's memory. OpenCL requires CL_DEVICE_MAX_MEM_ALLOC_SIZE ≥ min(1 GiB, global
    /// memory / 4): where the largest buffer is under 1 GiB (one storage-buffer binding on a
    /// device without buffer device addresses), the reported memory is capped at 4 × its size.
    pub fn global_mem_size(&self) -> u64 {
        let heap = self.caps.global_mem_size();
        let alloc = self.addressable_size(heap);
        if alloc >= 1 << 30 {
            heap
        } else {
            heap.min(4 * alloc)
        }
    }

    /// Alignment of sub-buffer origins and of buffers bound at an offset, in bytes.
    pub fn mem_base_addr_align(&self) -> u64 {
        self.caps
            .limits
            .min_storage_buffer_offset_alignment
            .max(128)
    }

    pub fn local_mem_size(&self) -> u64 {
        self.caps.limits.max_compute_shared_memory_size as u64
    }

    pub fn max_constant_buffer_size(&self) -> u64 {
        // `__constant` arguments are storage buffers (clspv's default), so the storage-buffer
        // range bounds them; the spec's minimum is 64 KiB.
        (self.caps.limits.max_storage_buffer_range as u64)
            .max(64 * 1024)
            .min(self.max_mem_alloc_size())
    }

    /// 64 where kernels may be built with device addresses (SVM, cl_ext_buffer_device_address):
    /// a pointer-sized type (`size_t`, `intptr_t`) is as wide in every build of a program as a
    /// pointer in its physical-addressing one (docs/DECISIONS.md, "Address bits").
    pub fn address_bits(&self) -> u32 {
        match self.has_device_addresses() && self.caps.features.int64 {
            true => 64,
            false => 32,
        }
    }

    pub fn has_fp16(&self) -> bool {
        self.caps.features.float16 && self.caps.features.storage_buffer16
    }

    /// seq_cst order and all-devices scope honoured (`Caps::seq_cst_atomics`): claimed in the
    /// atomic capabilities, the feature macros and, with fine-grained SVM, as SVM atomics.
    pub fn seq_cst_atomics(&self) -> bool {
        self.caps.seq_cst_atomics()
    }

    /// Doubles: shaderFloat64, and shaderInt64 for the built-ins that take them apart; on
    /// unless VKCL_FP64=0.
    pub fn has_fp64(&self) -> bool {
        crate::config::get().fp64 && self.caps.features.float64 && self.caps.features.int64
    }

    /// CL_DEVICE_PREFERRED_VECTOR_WIDTH_* and CL_DEVICE_NATIVE_VECTOR_WIDTH_*.
    ///
    /// A CPU device (lavapipe) runs one work-item per 32-bit lane of its SIMD registers
    /// (`subgroupSize` lanes): native widths are the register's in each type (capped at 16,
    /// the widest OpenCL vector); preferred widths are the lane count, which measured best
    /// there for every type (examples/vector_widths.c, docs/BENCHMARKS.md): an explicit vector
    /// gives each work-item independent operations to overlap; float8 ran an FMA chain 2.6
    /// times and a triad 2.1 times as fast as float. GPUs run one work-item per lane of scalar
    /// registers: 1. Double and half are 0 without cl_khr_fp64 and cl_khr_fp16.
    pub fn vector_widths(&self) -> VectorWidths {
        let (mut preferred, mut native) = if self.caps.is_cpu() {
            let lanes = self.caps.subgroup_size.clamp(1, 16);
            let bits = 32 * lanes;
            ([lanes; 7], TYPE_BITS.map(|t| (bits / t).clamp(1, 16)))
        } else {
            ([1; 7], [1; 7])
        };
        for w in [&mut preferred, &mut native] {
            if !self.has_fp64() {
                w[DOUBLE] = 0;
            }
            if !self.has_fp16() {
                w[HALF] = 0;
            }
        }
        VectorWidths { preferred, native }
    }

    /// Buffer device addresses (Vulkan bufferDeviceAddress): kernels built in physical
    /// addressing mode, cl_ext_buffer_device_address.
    pub fn has_device_addresses(&self) -> bool {
        self.caps.features.buffer_device_address
    }

    /// Device-side enqueue (core::device_enqueue): block kernels reach their captured values
    /// through device addresses, and their programs are compiled by clang
    /// (compiler::device_enqueue).
    pub fn has_device_enqueue(&self) -> bool {
        self.has_device_addresses() && crate::compiler::device_enqueue::available()
    }

    /// The extensions vkcl exposes on this device, with their versions.
    pub fn extensions(&self) -> Vec<(&'static str, cl_version)> {
        let v = |maj, min, pat| cl_make_version(maj, min, pat);
        let mut e = vec![
            ("cl_khr_byte_addressable_store", v(1, 0, 0)),
            ("cl_khr_global_int32_base_atomics", v(1, 0, 0)),
            ("cl_khr_global_int32_extended_atomics", v(1, 0, 0)),
            ("cl_khr_local_int32_base_atomics", v(1, 0, 0)),
            ("cl_khr_local_int32_extended_atomics", v(1, 0, 0)),
            ("cl_khr_icd", v(1, 0, 0)),
            ("cl_khr_device_uuid", v(1, 0, 0)),
            ("cl_khr_extended_versioning", v(1, 0, 0)),
            ("cl_khr_command_buffer", v(0, 9, 8)),
            ("cl_khr_command_buffer_mutable_dispatch", v(0, 9, 5)),
        ];
        if self.has_fp16() {
            e.push(("cl_khr_fp16", v(1, 0, 0)));
        }
        if self.has_fp64() {
            e.push(("cl_khr_fp64", v(1, 0, 0)));
        }
        // atom_* on 64-bit integers of global and local memory (clspv emits Int64Atomics).
        let f = &self.caps.features;
        if f.int64 && f.int64_atomics_buffer && f.int64_atomics_shared {
            e.push(("cl_khr_int64_base_atomics", v(1, 0, 0)));
            e.push(("cl_khr_int64_extended_atomics", v(1, 0, 0)));
        }
        if crate::compiler::il::available() {
            e.push(("cl_khr_il_program", v(1, 0, 0)));
        }
        // Not cl_khr_subgroups: it requires CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
        // which Vulkan does not promise (lavapipe runs a work-group's sub-groups on one thread,
        // and a sub-group waiting for another never returns). The OpenCL 3.0 feature
        // __opencl_c_subgroups, which asks no forward progress, is claimed instead.
        // The sub-group extensions: clspv's and compiler::subgroups' (on ballot and shuffle,
        // which has_subgroups requires, and on 8- and 16-bit types).
        if self.has_subgroups() && self.caps.features.subgroup_extended_types {
            let names = crate::compiler::subgroups::EXTENSIONS;
            e.extend(names.iter().map(|&n| (n, v(1, 0, 0))));
        }
        // With the one size of the device's sub-groups (`sub_group_sizes`).
        if self.has_subgroups() {
            e.push(("cl_intel_required_subgroup_size", v(1, 0, 0)));
        }
        if self.has_device_addresses() {
            e.push(("cl_ext_buffer_device_address", v(1, 0, 0)));
        }
        if self.has_images() {
            e.push(("cl_khr_3d_image_writes", v(1, 0, 0)));
            e.push(("cl_khr_image2d_from_buffer", v(1, 0, 0)));
        }
        e
    }

    /// Sub-groups (__opencl_c_subgroups, clGetKernelSubGroupInfo): Vulkan subgroups in compute
    /// shaders with the operations clspv uses, of one fixed size (so that the sizes the
    /// queries report are the sizes kernels see).
    pub fn has_subgroups(&self) -> bool {
        let ops = &self.caps.subgroup_ops;
        let needed = [
            ops.basic,
            ops.vote,
            ops.arithmetic,
            ops.ballot,
            ops.shuffle,
            ops.shuffle_relative,
        ];
        needed.iter().all(|&op| op)
            && self.caps.min_subgroup_size == self.caps.max_subgroup_size
            && self.caps.subgroup_size == self.caps.min_subgroup_size
            && self.caps.subgroup_size > 0
    }

    /// CL_DEVICE_SUB_GROUP_SIZES_INTEL: the sizes a kernel may require with
    /// `intel_reqd_sub_group_size` (cl_intel_required_subgroup_size). Devices with sub-groups
    /// have one size (`has_subgroups`), which every kernel runs with.
    pub fn sub_group_sizes(&self) -> Vec<usize> {
        if self.has_subgroups() {
            vec![self.caps.subgroup_size as usize]
        } else {
            vec![]
        }
    }

    /// The intermediate languages clCreateProgramWithIL takes: the SPIR-V versions the
    /// translator reads, when it is installed.
    pub fn ils(&self) -> Vec<(&'static str, cl_version)> {
        if !crate::compiler::il::available() {
            return vec![];
        }
        crate::compiler::il::SPIRV_VERSIONS
            .iter()
            .map(|&(major, minor)| ("SPIR-V", cl_make_version(major, minor, 0)))
            .collect()
    }

    pub fn extensions_string(&self) -> String {
        self.extensions()
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// CL_DEVICE_OPENCL_C_ALL_VERSIONS.
    pub fn opencl_c_versions(&self) -> Vec<(u32, u32)> {
        let mut v = OPENCL_C_VERSIONS.to_vec();
        if self.opencl_c_2_0() {
            v.insert(3, (2, 0));
        }
        v
    }

    /// Whether the device has everything OpenCL C 2.0 requires.
    pub fn opencl_c_2_0(&self) -> bool {
        let features = self.opencl_c_features();
        let has = |n: &str| features.iter().any(|(f, _)| *f == n);
        let images = [
            "__opencl_c_images",
            "__opencl_c_3d_image_writes",
            "__opencl_c_read_write_images",
        ];
        OPENCL_C_2_0_FEATURES.iter().all(|f| has(f))
            && (!self.has_images() || images.iter().all(|f| has(f)))
    }

    /// OpenCL C 3.0 optional features vkcl supports on this device (what clspv is told, and pipes).
    pub fn opencl_c_features(&self) -> Vec<(&'static str, cl_version)> {
        let v30 = cl_make_version(3, 0, 0);
        // Pipes and collectives are vkcl's own, so clspv is not told about them.
        let target = self.clspv_target();
        options::opencl_c_features(&target)
            .into_iter()
            .chain(options::own_features(&target))
            .map(|f| (f, v30))
            .collect()
    }

    /// What clspv may assume about this device.
    pub fn clspv_target(&self) -> Target {
        let f = &self.caps.features;
        let l = &self.caps.limits;
        Target {
            int8: f.int8,
            int64: f.int64,
            fp16: self.has_fp16(),
            fp64: self.has_fp64(),
            storage8: StorageClasses {
                ssbo: f.storage_buffer8,
                ubo: f.uniform8,
                push_constant: f.push_constant8,
            },
            storage16: StorageClasses {
                ssbo: f.storage_buffer16,
                ubo: f.uniform16 && !self.caps.workarounds.no_16bit_uniforms,
                push_constant: f.push_constant16,
            },
            max_push_constant_size: l.max_push_constants_size,
            max_ubo_size: l.max_uniform_buffer_range,
            ubo_std430: f.uniform_standard_layout,
            spirv_version: self.caps.spirv_version(),
            images: self.has_images(),
            read_write_images: self.has_read_write_images(),
            subgroups: self.has_subgroups(),
            integer_dot_product: false,
            seq_cst: self.seq_cst_atomics(),
            device_enqueue: self.has_device_enqueue().then(|| EnqueueLimits {
                work_group_size: self.max_work_group_size() as u32,
                work_item_sizes: self.max_work_item_sizes().map(|s| s as u32),
                preferred_multiple: match self.has_subgroups() {
                    true => self.caps.subgroup_size,
                    false => 1,
                },
            }),
            pointers64: self.address_bits() == 64,
        }
    }

    /// What a program binary for this device is stamped with.
    pub fn identity(&self) -> crate::compiler::binary::Identity {
        crate::compiler::binary::Identity {
            device_uuid: self.caps.device_uuid,
            driver_uuid: self.caps.driver_uuid,
            driver_version: self.caps.driver_version,
        }
    }

    pub fn version_string(&self) -> String {
        format!(
            "OpenCL 3.0 vkcl {} ({})",
            env!("CARGO_PKG_VERSION"),
            self.caps.driver_name
        )
    }

    pub fn driver_version_string(&self) -> String {
        let info = &self.caps.driver_info;
        if info.is_empty() {
            let [major, minor, patch] = self.caps.driver_version_parts();
            format!("{major}.{minor}.{patch}")
        } else {
            info.clone()
        }
    }
}
