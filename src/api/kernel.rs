//! Kernels: creation, arguments, queries and NDRange enqueue.

use super::info::{array, string, v, write};
use super::util::{obj, return_event, slice, wait_list};
use crate::cl::*;
use crate::compiler::reflection::ArgKind;
use crate::core::device::Device;
use crate::core::device_enqueue::DeviceQueue;
use crate::core::kernel::{self, ArgValue, Kernel, NdRange};
use crate::core::memory::Mem;
use crate::core::object::{handle, register, release, retain};
use crate::core::program::Program;
use crate::core::queue::Queue;
use crate::core::sampler::Sampler;
use crate::core::{check, CLResult, ClError};
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;
use vkcl_macros::entry;

/// How an argument is passed, from the reflection (or, for arguments clspv dropped, from
/// the argument's address qualifier).
enum Slot {
    Buffer,
    Image,
    Sampler,
    Local,
    /// A `queue_t` (device-side enqueue): an on-device queue.
    DeviceQueue,
    Value(Option<usize>),
}

fn slot(k: &Kernel, index: usize) -> Slot {
    let arg = &k.reflection.args[index];
    let type_name = arg.info.as_ref().map_or("", |i| i.type_name.as_str());
    match arg.kind {
        ArgKind::StorageBuffer { .. } | ArgKind::UniformBuffer { .. } => Slot::Buffer,
        ArgKind::SampledImage { .. }
        | ArgKind::StorageImage { .. }
        | ArgKind::UniformTexelBuffer { .. }
        | ArgKind::StorageTexelBuffer { .. } => Slot::Image,
        ArgKind::Sampler { .. } => Slot::Sampler,
        _ if type_name.starts_with("image") => Slot::Image,
        _ if type_name == "sampler_t" => Slot::Sampler,
        _ if type_name == "queue_t" => Slot::DeviceQueue,
        ArgKind::Local { .. } => Slot::Local,
        ArgKind::PodPushConstant { size, .. }
        | ArgKind::PodStorageBuffer { size, .. }
        | ArgKind::PodUniform { size, .. } => Slot::Value(Some(c_size(size as usize, type_name))),
        _ => match arg.info.as_ref().map(|i| i.address_qualifier) {
            Some(CL_KERNEL_ARG_ADDRESS_LOCAL) => Slot::Local,
            Some(CL_KERNEL_ARG_ADDRESS_GLOBAL | CL_KERNEL_ARG_ADDRESS_CONSTANT) => Slot::Buffer,
            _ => Slot::Value(None),
        },
    }
}

/// Whether argument `index` is a `__global` or `__constant` pointer (not a pipe): what
/// clSetKernelArgSVMPointer accepts.
pub(super) fn is_pointer_arg(k: &Kernel, index: usize) -> bool {
    let pipe = k.reflection.args[index]
        .info
        .as_ref()
        .is_some_and(|i| u64::from(i.type_qualifier) & CL_KERNEL_ARG_TYPE_PIPE != 0);
    matches!(slot(k, index), Slot::Buffer) && !pipe
}

/// The size of a by-value argument in the OpenCL C sense: clspv reports a 3-component vector
/// (`int3`, `float3`, ...) as its three elements, but its size is that of four.
fn c_size(reflected: usize, type_name: &str) -> usize {
    let scalar = type_name.strip_suffix('3').unwrap_or("");
    let scalars = [
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float",
        "double",
    ];
    if scalars.contains(&scalar) {
        reflected / 3 * 4
    } else {
        reflected
    }
}

fn set_arg(k: &Kernel, index: cl_uint, size: usize, value: *const c_void) -> CLResult<()> {
    // SAFETY: the application passes `size` bytes at `value` (or NULL).
    let arg = unsafe { arg_value(k, index, size, value) }?;
    k.set_arg(index as usize, arg);
    Ok(())
}

/// An argument value as clSetKernelArg takes it, checked for argument `index` of `k` (also
/// for clUpdateMutableCommandsKHR).
///
/// # Safety
/// `value` is NULL or points to `size` bytes (a handle for memory objects and samplers).
pub(crate) unsafe fn arg_value(
    k: &Kernel,
    index: cl_uint,
    size: usize,
    value: *const c_void,
) -> CLResult<ArgValue> {
    let index = index as usize;
    check(index < k.num_args() as usize, CL_INVALID_ARG_INDEX)?;
    let arg = match slot(k, index) {
        Slot::Buffer => {
            check(size == std::mem::size_of::<cl_mem>(), CL_INVALID_ARG_SIZE)?;
            // SAFETY: value is NULL or points to a cl_mem.
            let h = if value.is_null() {
                std::ptr::null_mut()
            } else {
                unsafe { *(value as *const cl_mem) }
            };
            // A pipe argument takes a pipe, a pointer argument a buffer (or NULL).
            let pipe_arg = k.reflection.args[index]
                .info
                .as_ref()
                .is_some_and(|i| u64::from(i.type_qualifier) & CL_KERNEL_ARG_TYPE_PIPE != 0);
            if h.is_null() {
                check(!pipe_arg, CL_INVALID_MEM_OBJECT)?;
                ArgValue::Mem(None)
            } else {
                let m: Arc<Mem> = obj(h)?;
                check(
                    Arc::ptr_eq(&m.context, &k.program.context),
                    CL_INVALID_MEM_OBJECT,
                )?;
                check(pipe_arg == m.pipe().is_some(), CL_INVALID_MEM_OBJECT)?;
                check(!m.is_image(), CL_INVALID_MEM_OBJECT)?;
                ArgValue::Mem(Some(m))
            }
        }
        Slot::Image => {
            check(size == std::mem::size_of::<cl_mem>(), CL_INVALID_ARG_SIZE)?;
            check(!value.is_null(), CL_INVALID_ARG_VALUE)?;
            // SAFETY: not NULL; points to a cl_mem.
            let m: Arc<Mem> = obj(unsafe { *(value as *const cl_mem) })?;
            check(
                Arc::ptr_eq(&m.context, &k.program.context),
                CL_INVALID_MEM_OBJECT,
            )?;
            check_image_arg(k, index, &m)?;
            ArgValue::Mem(Some(m))
        }
        Slot::Sampler => {
            check(
                size == std::mem::size_of::<cl_sampler>(),
                CL_INVALID_ARG_SIZE,
            )?;
            check(!value.is_null(), CL_INVALID_ARG_VALUE)?;
            // SAFETY: not NULL; points to a cl_sampler.
            let s: Arc<Sampler> = obj(unsafe { *(value as *const cl_sampler) })?;
            check(
                Arc::ptr_eq(&s.context, &k.program.context),
                CL_INVALID_SAMPLER,
            )?;
            ArgValue::Sampler(s)
        }
        Slot::DeviceQueue => {
            check(
                size == std::mem::size_of::<cl_command_queue>(),
                CL_INVALID_ARG_SIZE,
            )?;
            check(!value.is_null(), CL_INVALID_ARG_VALUE)?;
            // SAFETY: not NULL; points to a cl_command_queue.
            let q = obj::<DeviceQueue, _>(unsafe { *(value as *const cl_command_queue) })
                .map_err(|_| ClError(CL_INVALID_DEVICE_QUEUE))?;
            check(
                Arc::ptr_eq(&q.context, &k.program.context),
                CL_INVALID_DEVICE_QUEUE,
            )?;
            // Every device queue takes a launch's children alike (core::device_enqueue):
            // the kernel sees a queue that is not CLK_NULL_QUEUE.
            ArgValue::Bytes(1u64.to_le_bytes().into())
        }
        Slot::Local => {
            check(value.is_null(), CL_INVALID_ARG_VALUE)?;
            check(size > 0, CL_INVALID_ARG_SIZE)?;
            ArgValue::Local(size)
        }
        Slot::Value(expected) => {
            check(!value.is_null(), CL_INVALID_ARG_VALUE)?;
            check(
                size > 0 && expected.is_none_or(|e| e == size),
                CL_INVALID_ARG_SIZE,
            )?;
            // SAFETY: the application passes `size` bytes at value.
            ArgValue::Bytes(unsafe { std::slice::from_raw_parts(value as *const u8, size) }.into())
        }
    };
    Ok(arg)
}

/// An image argument's value: an image of the type the kernel declares (CL_INVALID_MEM_OBJECT
/// otherwise), whose flags allow the kernel's access and whose format kernels can write where
/// the kernel writes (CL_INVALID_ARG_VALUE otherwise).
fn check_image_arg(k: &Kernel, index: usize, m: &Mem) -> CLResult<()> {
    let info = m.image()?;
    let arg = &k.reflection.args[index];
    let Some(ai) = &arg.info else {
        return Ok(());
    };
    let declared = match ai.type_name.trim_end_matches(['*', ' ']) {
        "image1d_t" => CL_MEM_OBJECT_IMAGE1D,
        "image1d_array_t" => CL_MEM_OBJECT_IMAGE1D_ARRAY,
        "image1d_buffer_t" => CL_MEM_OBJECT_IMAGE1D_BUFFER,
        "image2d_t" | "image2d_depth_t" => CL_MEM_OBJECT_IMAGE2D,
        "image2d_array_t" | "image2d_array_depth_t" => CL_MEM_OBJECT_IMAGE2D_ARRAY,
        "image3d_t" => CL_MEM_OBJECT_IMAGE3D,
        _ => info.desc.image_type,
    };
    check(declared == info.desc.image_type, CL_INVALID_MEM_OBJECT)?;
    let reads = ai.access_qualifier != CL_KERNEL_ARG_ACCESS_WRITE_ONLY;
    let writes = ai.access_qualifier != CL_KERNEL_ARG_ACCESS_READ_ONLY;
    check(
        !reads || m.flags & CL_MEM_WRITE_ONLY == 0,
        CL_INVALID_ARG_VALUE,
    )?;
    check(
        !writes || m.flags & CL_MEM_READ_ONLY == 0,
        CL_INVALID_ARG_VALUE,
    )?;
    if let crate::core::image::Store::Image(i) = &info.store {
        check(!writes || i.first().writable(), CL_INVALID_ARG_VALUE)?;
    }
    Ok(())
}

/// `CL_KERNEL_ATTRIBUTES`: clspv's attribute text without its leading `kernel` keyword.
///
/// The spec: attributes "are returned as they were declared inside __attribute__((...)), with
/// any surrounding whitespace and embedded newlines removed. When multiple attributes are
/// present, they are returned as a single, space delimited string."
fn attributes(k: &Kernel) -> String {
    let mut rest = k.reflection.attributes.as_str();
    let mut out = vec![];
    while let Some(start) = rest.find("__attribute__((") {
        let inner = &rest[start + "__attribute__((".len()..];
        // The matching "))": track parentheses inside the attribute.
        let mut depth = 0i32;
        let mut end = inner.len();
        for (i, c) in inner.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = i;
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        out.push(
            inner[..end]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>(),
        );
        rest = inner.get(end + 2..).unwrap_or("");
    }
    out.join(" ")
}

fn dims3(p: *const usize, n: usize, fill: usize) -> [usize; 3] {
    // SAFETY: the caller checked p points to n (≤ 3) values or is NULL.
    let s = unsafe { slice(p, n) };
    std::array::from_fn(|i| s.get(i).copied().unwrap_or(fill))
}

#[entry(clCreateKernel)]
unsafe fn create_kernel(program: cl_program, name: *const c_char) -> CLResult<cl_kernel> {
    let p: Arc<Program> = obj(program)?;
    check(!name.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name) }
        .to_str()
        .map_err(|_| ClError(CL_INVALID_KERNEL_NAME))?;
    // Device-side enqueue's block kernels are the runtime's.
    check(
        !name.starts_with(crate::compiler::device_enqueue::CHILD),
        CL_INVALID_KERNEL_NAME,
    )?;
    Ok(register(Kernel::new(&p, name)?) as cl_kernel)
}

#[entry(clCreateKernelsInProgram)]
unsafe fn create_kernels_in_program(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> CLResult<()> {
    let p: Arc<Program> = obj(program)?;
    let exe = p
        .any_executable()
        .ok_or(ClError(CL_INVALID_PROGRAM_EXECUTABLE))?;
    let names: Vec<_> = exe
        .reflection
        .user_kernels()
        .map(|k| k.name.clone())
        .collect();
    check(
        kernels.is_null() || num_kernels as usize >= names.len(),
        CL_INVALID_VALUE,
    )?;
    if !kernels.is_null() {
        let created = names
            .iter()
            .map(|n| Kernel::new(&p, n))
            .collect::<CLResult<Vec<_>>>()?;
        for (i, k) in created.into_iter().enumerate() {
            // SAFETY: the application gives room for num_kernels handles.
            unsafe { *kernels.add(i) = register(k) as cl_kernel };
        }
    }
    if !num_kernels_ret.is_null() {
        // SAFETY: NULL or a cl_uint.
        unsafe { *num_kernels_ret = names.len() as cl_uint };
    }
    Ok(())
}

#[entry(clCloneKernel)]
fn clone_kernel(source_kernel: cl_kernel) -> CLResult<cl_kernel> {
    let k: Arc<Kernel> = obj(source_kernel)?;
    Ok(register(k.duplicate()) as cl_kernel)
}

#[entry(clSetKernelExecInfo)]
unsafe fn set_kernel_exec_info(
    kernel: cl_kernel,
    param_name: cl_kernel_exec_info,
    param_value_size: usize,
    param_value: *const c_void,
) -> CLResult<()> {
    let k: Arc<Kernel> = obj(kernel)?;
    // SAFETY: `param_value_size` bytes at param_value (the spec's contract).
    unsafe { super::svm::set_exec_info(&k, param_name, param_value_size, param_value) }
}

#[entry(clRetainKernel, at_exit)]
fn retain_kernel(kernel: cl_kernel) -> CLResult<()> {
    super::platform::ensure_init();
    retain::<Kernel>(kernel as *const c_void)
}

#[entry(clReleaseKernel, at_exit)]
fn release_kernel(kernel: cl_kernel) -> CLResult<()> {
    super::platform::ensure_init();
    release::<Kernel>(kernel as *const c_void).map(|_| ())
}

#[entry(clSetKernelArg)]
unsafe fn set_kernel_arg(
    kernel: cl_kernel,
    index: cl_uint,
    size: usize,
    value: *const c_void,
) -> CLResult<()> {
    let k: Arc<Kernel> = obj(kernel)?;
    set_arg(&k, index, size, value)
}

#[entry(clGetKernelInfo, at_exit)]
unsafe fn get_kernel_info(
    kernel: cl_kernel,
    param_name: cl_kernel_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let k: Arc<Kernel> = obj(kernel)?;
    let value = match param_name {
        CL_KERNEL_FUNCTION_NAME => string(&k.name),
        CL_KERNEL_NUM_ARGS => v::<cl_uint>(k.num_args()),
        CL_KERNEL_REFERENCE_COUNT => v::<cl_uint>(k.base.api_refs()),
        CL_KERNEL_CONTEXT => v::<cl_context>(handle(&k.program.context) as cl_context),
        CL_KERNEL_PROGRAM => v::<cl_program>(handle(&k.program) as cl_program),
        CL_KERNEL_ATTRIBUTES => string(&attributes(&k)),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clGetKernelArgInfo)]
unsafe fn get_kernel_arg_info(
    kernel: cl_kernel,
    index: cl_uint,
    param_name: cl_kernel_arg_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let k: Arc<Kernel> = obj(kernel)?;
    check(
        (index as usize) < k.num_args() as usize,
        CL_INVALID_ARG_INDEX,
    )?;
    // Only for programs built with -cl-kernel-arg-info, as the spec says.
    let built_with_info = k.program.any_executable().is_some_and(|e| e.arg_info);
    let info = k.reflection.args[index as usize]
        .info
        .clone()
        .filter(|_| built_with_info)
        .ok_or(ClError(CL_KERNEL_ARG_INFO_NOT_AVAILABLE))?;
    let value = match param_name {
        CL_KERNEL_ARG_ADDRESS_QUALIFIER => {
            v::<cl_kernel_arg_address_qualifier>(info.address_qualifier)
        }
        CL_KERNEL_ARG_ACCESS_QUALIFIER => {
            v::<cl_kernel_arg_access_qualifier>(info.access_qualifier)
        }
        CL_KERNEL_ARG_TYPE_NAME => string(&info.type_name),
        CL_KERNEL_ARG_TYPE_QUALIFIER => {
            v::<cl_kernel_arg_type_qualifier>(info.type_qualifier as cl_kernel_arg_type_qualifier)
        }
        CL_KERNEL_ARG_NAME => string(&info.name),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clGetKernelWorkGroupInfo)]
unsafe fn get_kernel_work_group_info(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_work_group_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let k: Arc<Kernel> = obj(kernel)?;
    let d = kernel_device(&k, device)?;
    let value = match param_name {
        CL_KERNEL_WORK_GROUP_SIZE => v::<usize>(d.max_work_group_size()),
        CL_KERNEL_COMPILE_WORK_GROUP_SIZE => array::<usize>(
            &k.reflection
                .reqd_work_group_size
                .map_or([0usize; 3], |r| r.map(|x| x as usize)),
        ),
        CL_KERNEL_LOCAL_MEM_SIZE => v::<cl_ulong>(k.local_mem_size()),
        CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => v::<usize>(d.caps.subgroup_size as usize),
        CL_KERNEL_PRIVATE_MEM_SIZE => v::<cl_ulong>(0u64),
        // cl_intel_required_subgroup_size: Vulkan reports no register spills.
        CL_KERNEL_SPILL_MEM_SIZE_INTEL if d.has_subgroups() => v::<cl_ulong>(0u64),
        // Only for custom devices and built-in kernels.
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

/// A launch's geometry, checked as clEnqueueNDRangeKernel (and clCommandNDRangeKernelKHR)
/// must, for `kernel` on `q`'s device.
///
/// # Safety
/// Each size pointer is NULL or points to `work_dim` values (once `work_dim` is checked).
pub(crate) unsafe fn nd_range(
    q: &Queue,
    k: &Kernel,
    work_dim: cl_uint,
    global_offset: *const usize,
    global_size: *const usize,
    local_size: *const usize,
) -> CLResult<NdRange> {
    check(
        k.program
            .device_index(&q.device)
            .is_some_and(|i| k.program.has_executable(i)),
        CL_INVALID_PROGRAM_EXECUTABLE,
    )?;
    check(
        Arc::ptr_eq(&q.context, &k.program.context),
        CL_INVALID_CONTEXT,
    )?;
    check((1..=3).contains(&work_dim), CL_INVALID_WORK_DIMENSION)?;
    let n = work_dim as usize;
    // OpenCL 2.1+: a NULL global size (or a 0 in it) is allowed and launches nothing.
    let global = if global_size.is_null() {
        [0; 3]
    } else {
        dims3(global_size, n, 1)
    };
    let offset = dims3(global_offset, n, 0);
    check(
        (0..n).all(|d| {
            global[d]
                .checked_add(offset[d])
                .is_some_and(|e| e <= u32::MAX as usize + 1)
        }),
        CL_INVALID_GLOBAL_OFFSET,
    )?;
    check(
        global.iter().all(|&g| g <= u32::MAX as usize),
        CL_INVALID_GLOBAL_WORK_SIZE,
    )?;
    let local = (!local_size.is_null()).then(|| dims3(local_size, n, 1));
    if let Some(l) = local {
        check(l[..n].iter().all(|&x| x > 0), CL_INVALID_WORK_GROUP_SIZE)?;
    }
    Ok(NdRange {
        work_dim,
        offset,
        global,
        local,
    })
}

#[entry(clEnqueueNDRangeKernel)]
unsafe fn enqueue_nd_range_kernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_offset: *const usize,
    global_size: *const usize,
    local_size: *const usize,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let q: Arc<Queue> = obj(queue)?;
    let k: Arc<Kernel> = obj(kernel)?;
    // SAFETY: the application passes the sizes as the spec requires.
    let nd = unsafe { nd_range(&q, &k, work_dim, global_offset, global_size, local_size) }?;
    // SAFETY: the application passes its wait list as the spec requires.
    let wait = unsafe { wait_list(num_events, events, &q.context) }?;
    let e = kernel::enqueue(&q, &k, &nd, &wait)?;
    // SAFETY: `event` is the application's event out-parameter (NULL or a cl_event).
    unsafe { return_event(e, event) };
    Ok(())
}

#[entry(clEnqueueTask)]
unsafe fn enqueue_task(
    queue: cl_command_queue,
    kernel: cl_kernel,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let one = [1usize];
    // SAFETY: the same arguments, with 1-element sizes that live across the call.
    unsafe {
        enqueue_nd_range_kernel(
            queue,
            kernel,
            1,
            std::ptr::null(),
            one.as_ptr(),
            one.as_ptr(),
            num_events,
            events,
            event,
        )
    }
}

/// The device argument of the kernel queries: one of the program's devices, or NULL when the
/// program has a single device.
fn kernel_device(k: &Kernel, device: cl_device_id) -> CLResult<Arc<Device>> {
    let d: Arc<Device> = if device.is_null() {
        check(k.program.devices.len() == 1, CL_INVALID_DEVICE)?;
        k.program.devices[0].clone()
    } else {
        obj(device)?
    };
    check(k.program.device_index(&d).is_some(), CL_INVALID_DEVICE)?;
    Ok(d)
}

/// clGetKernelSubGroupInfo(KHR): what sub-groups a launch of the kernel would have. Sub-groups
/// have the device's one subgroup size; a work-group's items fill them in order.
#[allow(clippy::too_many_arguments)]
fn sub_group_info(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
    khr: bool,
) -> CLResult<()> {
    let k: Arc<Kernel> = obj(kernel)?;
    let d = kernel_device(&k, device)?;
    check(d.has_subgroups(), CL_INVALID_OPERATION)?;
    let sg = d.caps.subgroup_size as usize;
    let max_items = match k.reflection.reqd_work_group_size {
        Some(r) => r.iter().map(|&x| x as usize).product(),
        None => d.max_work_group_size(),
    };
    let size_t = std::mem::size_of::<usize>();
    // The local size given as input: 1 to 3 size_t values.
    let local_items = || -> CLResult<usize> {
        check(
            !input_value.is_null()
                && input_value_size % size_t == 0
                && (1..=3).contains(&(input_value_size / size_t)),
            CL_INVALID_VALUE,
        )?;
        // SAFETY: the application passes input_value_size bytes (whole size_t values).
        let local = unsafe { slice(input_value as *const usize, input_value_size / size_t) };
        Ok(local.iter().product())
    };
    let value = match param_name {
        CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE => v::<usize>(sg.min(local_items()?.max(1))),
        CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE => v::<usize>(local_items()?.div_ceil(sg)),
        CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT if !khr => {
            check(
                !input_value.is_null() && input_value_size == size_t,
                CL_INVALID_VALUE,
            )?;
            // SAFETY: checked: one size_t.
            let count = unsafe { *(input_value as *const usize) };
            let dims = (param_value_size / size_t).clamp(1, 3);
            let mut local = vec![0usize; dims];
            if count > 0 && count * sg <= max_items {
                local[0] = count * sg;
                local[1..].fill(1);
            }
            array::<usize>(&local)
        }
        CL_KERNEL_MAX_NUM_SUB_GROUPS if !khr => v::<usize>(max_items.div_ceil(sg)),
        CL_KERNEL_COMPILE_NUM_SUB_GROUPS if !khr => v::<usize>(0usize),
        // cl_intel_required_subgroup_size (in both entry points); 0 where not required.
        CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL => {
            v::<usize>(k.reflection.reqd_sub_group_size().unwrap_or(0) as usize)
        }
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clGetKernelSubGroupInfo)]
unsafe fn get_kernel_sub_group_info(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    sub_group_info(
        kernel,
        device,
        param_name,
        input_value_size,
        input_value,
        param_value_size,
        param_value,
        param_value_size_ret,
        false,
    )
}

#[entry(clGetKernelSubGroupInfoKHR)]
unsafe fn get_kernel_sub_group_info_khr(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    sub_group_info(
        kernel,
        device,
        param_name,
        input_value_size,
        input_value,
        param_value_size,
        param_value,
        param_value_size_ret,
        true,
    )
}
