//! clGetDeviceIDs, clGetDeviceInfo, sub-devices (none), retain/release of root devices.

use super::info::{array, name_versions, string, v, write};
use super::platform::platform_arg;
use crate::cl::*;
use crate::compiler::pipes;
use crate::core::device::Device;
use crate::core::object::handle;
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

const ALL_TYPES: cl_device_type = CL_DEVICE_TYPE_DEFAULT
    | CL_DEVICE_TYPE_CPU
    | CL_DEVICE_TYPE_GPU
    | CL_DEVICE_TYPE_ACCELERATOR
    | CL_DEVICE_TYPE_CUSTOM;

/// The devices of `device_type` (CL_DEVICE_TYPE_DEFAULT: the first device).
pub fn devices_of_type(device_type: cl_device_type) -> CLResult<Vec<Arc<Device>>> {
    check(
        device_type != 0 && (device_type == CL_DEVICE_TYPE_ALL || device_type & !ALL_TYPES == 0),
        CL_INVALID_DEVICE_TYPE,
    )?;
    let all = &super::platform::ensure_init().devices;
    let found: Vec<_> = if device_type == CL_DEVICE_TYPE_ALL {
        all.clone()
    } else {
        all.iter()
            .enumerate()
            .filter(|(i, d)| {
                d.device_type() & device_type != 0
                    || (device_type & CL_DEVICE_TYPE_DEFAULT != 0 && *i == 0)
            })
            .map(|(_, d)| d.clone())
            .collect()
    };
    check(!found.is_empty(), CL_DEVICE_NOT_FOUND)?;
    Ok(found)
}

#[entry(clGetDeviceIDs)]
unsafe fn get_device_ids(
    platform: cl_platform_id,
    device_type: cl_device_type,
    num_entries: cl_uint,
    devices: *mut cl_device_id,
    num_devices: *mut cl_uint,
) -> CLResult<()> {
    platform_arg(platform, true)?;
    check(
        device_type != 0 && (device_type == CL_DEVICE_TYPE_ALL || device_type & !ALL_TYPES == 0),
        CL_INVALID_DEVICE_TYPE,
    )?;
    // "CL_INVALID_VALUE if num_entries is equal to zero and devices is not NULL or if both
    // num_devices and devices are NULL."
    check(num_entries != 0 || devices.is_null(), CL_INVALID_VALUE)?;
    check(
        !(devices.is_null() && num_devices.is_null()),
        CL_INVALID_VALUE,
    )?;
    let found = devices_of_type(device_type)?;
    if !devices.is_null() {
        for (i, d) in found.iter().take(num_entries as usize).enumerate() {
            // SAFETY: the application gives room for num_entries handles.
            unsafe { *devices.add(i) = handle(d) as cl_device_id };
        }
    }
    if !num_devices.is_null() {
        // SAFETY: num_devices is NULL or points to a cl_uint.
        unsafe { *num_devices = found.len() as cl_uint };
    }
    Ok(())
}

#[entry(clGetDeviceInfo)]
unsafe fn get_device_info(
    device: cl_device_id,
    param_name: cl_device_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let d: Arc<Device> = super::obj(device)?;
    let value = device_info(&d, param_name)?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clRetainDevice, at_exit)]
fn retain_device(device: cl_device_id) -> CLResult<()> {
    super::obj::<Device, _>(device).map(|_| ())
}

#[entry(clReleaseDevice, at_exit)]
fn release_device(device: cl_device_id) -> CLResult<()> {
    super::obj::<Device, _>(device).map(|_| ())
}

#[entry(clCreateSubDevices)]
fn create_sub_devices(
    device: cl_device_id,
    _properties: *const cl_device_partition_property,
    _num_devices: cl_uint,
    _out_devices: *mut cl_device_id,
    _num_devices_ret: *mut cl_uint,
) -> CLResult<()> {
    super::obj::<Device, _>(device)?;
    // CL_DEVICE_PARTITION_MAX_SUB_DEVICES is 0: no partition type is supported.
    Err(ClError(CL_INVALID_VALUE))
}

/// No CL_FP_DENORM for float: clspv cannot ask for the DenormPreserve execution mode, and
/// without it lavapipe flushes float subnormals in fma, exp, exp2, fmod, ldexp and others
/// (tests/math_accuracy.rs; its shaderDenormPreserveFloat32 is false anyway).
fn fp_config(_d: &Device) -> cl_device_fp_config {
    CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA
}

fn device_info(d: &Arc<Device>, param: cl_device_info) -> CLResult<Vec<u8>> {
    work_info(d, param)
        .or_else(|| memory_info(d, param))
        .or_else(|| identity_info(d, param))
        .or_else(|| feature_info(d, param))
        .unwrap_or(Err(ClError(CL_INVALID_VALUE)))
}

/// Work-items, vector widths and images.
fn work_info(d: &Arc<Device>, param: cl_device_info) -> Option<CLResult<Vec<u8>>> {
    let caps = &d.caps;
    Some(match param {
        CL_DEVICE_TYPE => v::<cl_device_type>(d.device_type()),
        CL_DEVICE_VENDOR_ID => v::<cl_uint>(caps.vendor_id),
        CL_DEVICE_MAX_COMPUTE_UNITS => v::<cl_uint>(caps.compute_units),
        CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS => v::<cl_uint>(3u32),
        CL_DEVICE_MAX_WORK_ITEM_SIZES => array::<usize>(&d.max_work_item_sizes()),
        CL_DEVICE_MAX_WORK_GROUP_SIZE => v::<usize>(d.max_work_group_size()),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR => v::<cl_uint>(d.vector_widths().preferred[0]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT => v::<cl_uint>(d.vector_widths().preferred[1]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT => v::<cl_uint>(d.vector_widths().preferred[2]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG => v::<cl_uint>(d.vector_widths().preferred[3]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT => v::<cl_uint>(d.vector_widths().preferred[4]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE => v::<cl_uint>(d.vector_widths().preferred[5]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF => v::<cl_uint>(d.vector_widths().preferred[6]),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR => v::<cl_uint>(d.vector_widths().native[0]),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT => v::<cl_uint>(d.vector_widths().native[1]),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_INT => v::<cl_uint>(d.vector_widths().native[2]),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG => v::<cl_uint>(d.vector_widths().native[3]),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT => v::<cl_uint>(d.vector_widths().native[4]),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE => v::<cl_uint>(d.vector_widths().native[5]),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF => v::<cl_uint>(d.vector_widths().native[6]),
        CL_DEVICE_MAX_CLOCK_FREQUENCY => v::<cl_uint>(d.caps.max_clock_mhz()),
        CL_DEVICE_ADDRESS_BITS => v::<cl_uint>(d.address_bits()),
        CL_DEVICE_MAX_MEM_ALLOC_SIZE => v::<cl_ulong>(d.max_mem_alloc_size()),
        CL_DEVICE_IMAGE_SUPPORT => v::<cl_bool>(d.has_images() as cl_bool),
        CL_DEVICE_MAX_READ_IMAGE_ARGS => v::<cl_uint>(d.image_limits().read_args),
        CL_DEVICE_MAX_WRITE_IMAGE_ARGS => v::<cl_uint>(d.image_limits().write_args),
        CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS => v::<cl_uint>(d.image_limits().read_write_args),
        CL_DEVICE_MAX_SAMPLERS => v::<cl_uint>(d.image_limits().samplers),
        // cl_khr_image2d_from_buffer: any row pitch and base address of whole pixels (the
        // image copies from and to its buffer, docs/IMAGES.md).
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT | CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT => {
            v::<cl_uint>(d.has_images() as u32)
        }
        CL_DEVICE_IMAGE2D_MAX_WIDTH | CL_DEVICE_IMAGE2D_MAX_HEIGHT => {
            v::<usize>(d.image_limits().max_2d)
        }
        CL_DEVICE_IMAGE3D_MAX_WIDTH
        | CL_DEVICE_IMAGE3D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_DEPTH => v::<usize>(d.image_limits().max_3d),
        CL_DEVICE_IMAGE_MAX_BUFFER_SIZE => v::<usize>(d.image_limits().max_buffer),
        CL_DEVICE_IMAGE_MAX_ARRAY_SIZE => v::<usize>(d.image_limits().max_array),
        _ => return None,
    })
}

/// Memory, floating point, queues.
fn memory_info(d: &Arc<Device>, param: cl_device_info) -> Option<CLResult<Vec<u8>>> {
    let caps = &d.caps;
    let l = &caps.limits;
    let cl_true: cl_bool = CL_TRUE;
    let cl_false: cl_bool = CL_FALSE;
    let bool_ = |b: bool| if b { cl_true } else { cl_false };
    Some(match param {
        CL_DEVICE_MAX_PARAMETER_SIZE => v::<usize>(l.max_push_constants_size.max(1024) as usize),
        CL_DEVICE_MEM_BASE_ADDR_ALIGN => v::<cl_uint>((d.mem_base_addr_align() * 8) as u32),
        CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE => v::<cl_uint>(128u32),
        CL_DEVICE_SINGLE_FP_CONFIG => v::<cl_device_fp_config>(fp_config(d)),
        // The full profile's minimum for devices with doubles.
        CL_DEVICE_DOUBLE_FP_CONFIG => v::<cl_device_fp_config>(if d.has_fp64() {
            CL_FP_FMA
                | CL_FP_ROUND_TO_NEAREST
                | CL_FP_ROUND_TO_ZERO
                | CL_FP_ROUND_TO_INF
                | CL_FP_INF_NAN
                | CL_FP_DENORM
        } else {
            0
        }),
        CL_DEVICE_HALF_FP_CONFIG => v::<cl_device_fp_config>(if d.has_fp16() {
            CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST
        } else {
            0
        }),
        CL_DEVICE_GLOBAL_MEM_CACHE_TYPE => v::<cl_device_mem_cache_type>(CL_READ_WRITE_CACHE),
        CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE => v::<cl_uint>(64u32),
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE => v::<cl_ulong>(0u64),
        CL_DEVICE_GLOBAL_MEM_SIZE => v::<cl_ulong>(d.global_mem_size()),
        CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE => v::<cl_ulong>(d.max_constant_buffer_size()),
        CL_DEVICE_MAX_CONSTANT_ARGS => v::<cl_uint>(crate::core::device::MAX_CONSTANT_ARGS),
        // One storage buffer per program and device (compiler::globals).
        CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE | CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE => {
            v::<usize>(crate::compiler::globals::MAX_TOTAL_SIZE)
        }
        CL_DEVICE_LOCAL_MEM_TYPE => v::<cl_device_local_mem_type>(CL_LOCAL),
        CL_DEVICE_LOCAL_MEM_SIZE => v::<cl_ulong>(d.local_mem_size()),
        CL_DEVICE_ERROR_CORRECTION_SUPPORT => v::<cl_bool>(cl_false),
        CL_DEVICE_HOST_UNIFIED_MEMORY => v::<cl_bool>(bool_(caps.unified_memory())),
        CL_DEVICE_PROFILING_TIMER_RESOLUTION => {
            v::<usize>(caps.limits.timestamp_period.max(1.0) as usize)
        }
        CL_DEVICE_ENDIAN_LITTLE => v::<cl_bool>(cl_true),
        CL_DEVICE_AVAILABLE | CL_DEVICE_COMPILER_AVAILABLE | CL_DEVICE_LINKER_AVAILABLE => {
            v::<cl_bool>(cl_true)
        }
        CL_DEVICE_EXECUTION_CAPABILITIES => v::<cl_device_exec_capabilities>(CL_EXEC_KERNEL),
        CL_DEVICE_QUEUE_ON_HOST_PROPERTIES => v::<cl_command_queue_properties>(
            CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        ),
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES => {
            v::<cl_command_queue_properties>(match d.has_device_enqueue() {
                true => CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                false => 0,
            })
        }
        CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR => {
            v::<cl_device_command_buffer_capabilities_khr>(super::command_buffer::CAPABILITIES)
        }
        CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR => {
            v::<cl_command_queue_properties>(super::command_buffer::SUPPORTED_QUEUE_PROPERTIES)
        }
        CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR => {
            v::<cl_bitfield>(super::command_buffer::mutable_capabilities(d))
        }
        CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR => {
            v::<cl_command_queue_properties>(0u64)
        }
        CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE
        | CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE
        | CL_DEVICE_MAX_ON_DEVICE_QUEUES
        | CL_DEVICE_MAX_ON_DEVICE_EVENTS => {
            use crate::core::device_enqueue as de;
            let value = match param {
                CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE => de::PREFERRED_SIZE,
                CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE => de::MAX_SIZE,
                CL_DEVICE_MAX_ON_DEVICE_QUEUES => de::MAX_QUEUES,
                _ => de::MAX_EVENTS,
            };
            v::<cl_uint>(if d.has_device_enqueue() { value } else { 0 })
        }
        _ => return None,
    })
}

/// Names, versions, extensions, partitions, intermediate languages.
fn identity_info(d: &Arc<Device>, param: cl_device_info) -> Option<CLResult<Vec<u8>>> {
    let caps = &d.caps;
    let cl_true: cl_bool = CL_TRUE;
    let platform = handle(super::platform::ensure_init()) as cl_platform_id;
    let v30 = cl_make_version(3, 0, 0);
    Some(match param {
        CL_DEVICE_BUILT_IN_KERNELS => string(""),
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION => {
            array::<cl_name_version>(&Vec::<cl_name_version>::new())
        }
        CL_DEVICE_PLATFORM => v::<cl_platform_id>(platform),
        CL_DEVICE_NAME => string(&d.name),
        CL_DEVICE_VENDOR => string(&vendor_name(caps.vendor_id)),
        CL_DRIVER_VERSION => string(&d.driver_version_string()),
        CL_DEVICE_PROFILE => string("FULL_PROFILE"),
        CL_DEVICE_VERSION => string(&d.version_string()),
        CL_DEVICE_NUMERIC_VERSION => v::<cl_version>(v30),
        // The highest version fully backwards compatible with 1.2 (3.0 is not: its features
        // are optional).
        CL_DEVICE_OPENCL_C_VERSION => match d.opencl_c_2_0() {
            true => string("OpenCL C 2.0 "),
            false => string("OpenCL C 1.2 "),
        },
        CL_DEVICE_OPENCL_C_ALL_VERSIONS => array::<cl_name_version>(&name_versions(
            &d.opencl_c_versions()
                .iter()
                .map(|&(a, b)| ("OpenCL C", cl_make_version(a, b, 0)))
                .collect::<Vec<_>>(),
        )),
        CL_DEVICE_OPENCL_C_FEATURES => {
            array::<cl_name_version>(&name_versions(&d.opencl_c_features()))
        }
        CL_DEVICE_EXTENSIONS => string(&d.extensions_string()),
        CL_DEVICE_EXTENSIONS_WITH_VERSION => {
            array::<cl_name_version>(&name_versions(&d.extensions()))
        }
        CL_DEVICE_PRINTF_BUFFER_SIZE => v::<usize>(1usize << 20),
        CL_DEVICE_PREFERRED_INTEROP_USER_SYNC => v::<cl_bool>(cl_true),
        CL_DEVICE_PARENT_DEVICE => {
            v::<cl_device_id>(std::ptr::null_mut::<c_void>() as cl_device_id)
        }
        CL_DEVICE_PARTITION_MAX_SUB_DEVICES => v::<cl_uint>(0u32),
        CL_DEVICE_PARTITION_PROPERTIES => {
            array::<cl_device_partition_property>(&[0 as cl_device_partition_property])
        }
        CL_DEVICE_PARTITION_AFFINITY_DOMAIN => v::<cl_device_affinity_domain>(0u64),
        CL_DEVICE_PARTITION_TYPE => {
            array::<cl_device_partition_property>(&Vec::<cl_device_partition_property>::new())
        }
        CL_DEVICE_REFERENCE_COUNT => v::<cl_uint>(1u32),
        CL_DEVICE_IL_VERSION => string(
            &d.ils()
                .iter()
                .map(|&(name, ver)| format!("{name}_{}.{}", ver >> 22, (ver >> 12) & 0x3ff))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        CL_DEVICE_ILS_WITH_VERSION => array::<cl_name_version>(&name_versions(&d.ils())),
        _ => return None,
    })
}

/// Optional features: pipes, SVM, atomics, sub-groups, the identity of cl_khr_device_uuid.
fn feature_info(d: &Arc<Device>, param: cl_device_info) -> Option<CLResult<Vec<u8>>> {
    let caps = &d.caps;
    let cl_true: cl_bool = CL_TRUE;
    let cl_false: cl_bool = CL_FALSE;
    let bool_ = |b: bool| if b { cl_true } else { cl_false };
    Some(match param {
        // Pipes are lowered in the OpenCL C source before clspv (compiler::pipes).
        CL_DEVICE_MAX_PIPE_ARGS => v::<cl_uint>(pipes::MAX_PIPE_ARGS),
        CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS => v::<cl_uint>(pipes::MAX_ACTIVE_RESERVATIONS),
        CL_DEVICE_PIPE_MAX_PACKET_SIZE => v::<cl_uint>(pipes::MAX_PACKET_SIZE),
        CL_DEVICE_PIPE_SUPPORT => v::<cl_bool>(cl_true),
        CL_DEVICE_SVM_CAPABILITIES => {
            v::<cl_device_svm_capabilities>(crate::core::svm::capabilities(d))
        }
        CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT => v::<cl_uint>(0u32),
        CL_DEVICE_MAX_NUM_SUB_GROUPS => v::<cl_uint>(if d.has_subgroups() {
            d.max_work_group_size()
                .div_ceil(caps.subgroup_size as usize) as u32
        } else {
            0
        }),
        CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => v::<cl_bool>(cl_false),
        // cl_intel_required_subgroup_size, where the device lists it.
        CL_DEVICE_SUB_GROUP_SIZES_INTEL if d.has_subgroups() => {
            array::<usize>(&d.sub_group_sizes())
        }
        // What clspv implements (it weakens seq_cst to acq_rel and all-devices scope to
        // device), and seq_cst and all-devices scope where vkcl makes them hold; the OpenCL C
        // feature macros say the same.
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES | CL_DEVICE_ATOMIC_FENCE_CAPABILITIES => {
            let base = CL_DEVICE_ATOMIC_ORDER_RELAXED
                | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
                | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
                | CL_DEVICE_ATOMIC_SCOPE_DEVICE;
            let seq_cst = CL_DEVICE_ATOMIC_ORDER_SEQ_CST | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
            v::<cl_device_atomic_capabilities>(if d.seq_cst_atomics() {
                base | seq_cst
            } else {
                base
            })
        }
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT => v::<cl_bool>(cl_true),
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT => v::<cl_bool>(bool_(
            d.opencl_c_features()
                .iter()
                .any(|f| f.0 == crate::compiler::collectives::FEATURE),
        )),
        CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT => v::<cl_bool>(bool_(
            d.opencl_c_features()
                .iter()
                .any(|f| f.0 == "__opencl_c_generic_address_space"),
        )),
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES => {
            v::<cl_device_device_enqueue_capabilities>(match d.has_device_enqueue() {
                true => CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT,
                false => 0,
            })
        }
        CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => v::<usize>(caps.subgroup_size as usize),
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED => string("v0000-01-01-00"),
        CL_DEVICE_UUID_KHR => array::<cl_uchar>(&caps.device_uuid),
        CL_DRIVER_UUID_KHR => array::<cl_uchar>(&caps.driver_uuid),
        CL_DEVICE_LUID_VALID_KHR => v::<cl_bool>(bool_(caps.device_luid.is_some())),
        CL_DEVICE_LUID_KHR => array::<cl_uchar>(&caps.device_luid.unwrap_or_default()),
        CL_DEVICE_NODE_MASK_KHR => v::<cl_uint>(caps.device_node_mask),
        // CL_DEVICE_OPENCL_C_VERSION's, as a number.
        CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR => v::<cl_version>(match d.opencl_c_2_0() {
            true => cl_make_version(2, 0, 0),
            false => cl_make_version(1, 2, 0),
        }),
        _ => return None,
    })
}

fn vendor_name(id: u32) -> String {
    match id {
        0x10de => "NVIDIA Corporation".into(),
        0x1002 => "Advanced Micro Devices, Inc.".into(),
        0x8086 => "Intel Corporation".into(),
        0x13b5 => "ARM".into(),
        0x5143 => "Qualcomm".into(),
        0x10005 => "Mesa".into(),
        0x106b => "Apple".into(),
        other => format!("Vulkan vendor 0x{other:x}"),
    }
}

// Profiling timestamps are on the host's monotonic clock (device timestamps are mapped
// onto it, src/core/queue.rs), so the device timer and the host timer are that one clock,
// read once: exactly synchronised.
#[entry(clGetDeviceAndHostTimer)]
unsafe fn get_device_and_host_timer(
    device: cl_device_id,
    device_timestamp: *mut cl_ulong,
    host_timestamp: *mut cl_ulong,
) -> CLResult<()> {
    let _: Arc<Device> = super::util::obj(device)?;
    check(
        !device_timestamp.is_null() && !host_timestamp.is_null(),
        CL_INVALID_VALUE,
    )?;
    let now = crate::core::event::host_ns();
    // SAFETY: the application passes two writable cl_ulongs (checked non-NULL).
    unsafe {
        *device_timestamp = now;
        *host_timestamp = now;
    }
    Ok(())
}

#[entry(clGetHostTimer)]
unsafe fn get_host_timer(device: cl_device_id, host_timestamp: *mut cl_ulong) -> CLResult<()> {
    let _: Arc<Device> = super::util::obj(device)?;
    check(!host_timestamp.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes a writable cl_ulong (checked non-NULL).
    unsafe { *host_timestamp = crate::core::event::host_ns() };
    Ok(())
}
