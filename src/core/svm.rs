//! Shared virtual memory (coarse- and fine-grained buffers) and device addresses.
//!
//! An SVM allocation is memory that the host and the devices see at one address: the pointer
//! the application holds is then the one kernels dereference, and pointers stored in SVM memory
//! mean the same memory on both sides. Two ways give it:
//! - host memory of vkcl's own imported into every device of the context
//!   (VK_EXT_external_memory_host), where each device gives the import a device address equal
//!   to its host address (lavapipe does);
//! - host-visible, host-coherent memory of one device mapped on the host at its own device
//!   address (VK_EXT_map_memory_placed; NVIDIA, whose imports get other addresses), for
//!   contexts of that one Vulkan device (`vk::memory::Buffer::at_device_address`);
//! - there, for coarse-grained allocations on discrete GPUs, device-local memory with host
//!   memory of vkcl's own at the same address (`vk::memory::Buffer::mirrored`, [`mirrors`]),
//!   synchronised by clEnqueueSVMMap and clEnqueueSVMUnmap.
//!
//! The allocation is a `Mem` of no handle, so commands and launches keep it alive
//! as they keep buffers (`Keep`). Kernels reach it through a second build of their program in
//! physical addressing mode (`Program::physical`), used only by launches that need it
//! (docs/DECISIONS.md).

use super::context::Context;
use super::device::Device;
use super::error::{check, CLResult, ClError};
use super::event::Event;
use super::kernel::{ArgValue, Kernel};
use super::memory::Mem;
use super::queue::{Keep, Queue, Recorded};
use crate::cl::*;
use crate::compiler;
use crate::vk::memory::{padded, Buffer};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Live SVM allocations of every context, by their start address (host and device).
static ALLOCATIONS: Mutex<BTreeMap<usize, Arc<Mem>>> = Mutex::new(BTreeMap::new());

/// The SVM capabilities probed per Vulkan device (by the address of its `Caps`).
static PROBED: Mutex<Option<HashMap<usize, bool>>> = Mutex::new(None);

/// CL_DEVICE_SVM_CAPABILITIES: coarse- and fine-grained buffers where host memory imported
/// into the device has the same address on both sides, or memory can be mapped at its device
/// address (either memory is host-coherent, so the host sees the device's writes without a
/// map); none elsewhere. CL_DEVICE_SVM_ATOMICS with them where the device's atomics are
/// seq_cst and coherent with the host's (`Device::seq_cst_atomics`: lavapipe, whose atomics
/// are the host's own on the same memory; clspv otherwise weakens
/// `memory_scope_all_svm_devices` to device scope). Not FINE_GRAIN_SYSTEM: kernels can only
/// reach memory imported beforehand.
pub fn capabilities(device: &Device) -> cl_device_svm_capabilities {
    if !(same_addresses(device) || places_maps(device)) {
        return 0;
    }
    let buffers = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
    if device.seq_cst_atomics() {
        buffers | CL_DEVICE_SVM_ATOMICS
    } else {
        buffers
    }
}

/// Whether host memory imported into the device has its host address as device address
/// (checked once per device on one page; needs buffer device addresses and host import).
fn same_addresses(device: &Device) -> bool {
    let Ok(vk) = device.vk() else {
        return false;
    };
    let key = Arc::as_ptr(&vk.caps) as usize;
    if let Some(&known) = PROBED.lock().get_or_insert_with(HashMap::new).get(&key) {
        return known;
    }
    let align = vk.caps.min_imported_host_pointer_alignment.max(4096) as usize;
    let same = (|| {
        let layout = std::alloc::Layout::from_size_align(align, align).ok()?;
        // SAFETY: the layout's size is not zero.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return None;
        }
        // SAFETY: the page stays allocated until after the buffer is dropped (below).
        let buffer = unsafe { Buffer::import(&vk, ptr, align as u64) };
        let address = buffer.as_ref().and_then(Buffer::device_address);
        drop(buffer);
        // SAFETY: allocated above with this layout; the buffer importing it is gone.
        unsafe { std::alloc::dealloc(ptr, layout) };
        log::info!(target: "memory", "SVM probe on {}: host address {ptr:?}, device address {address:#x?}", vk.caps.name);
        Some(address == Some(ptr as u64))
    })()
    .unwrap_or(false);
    PROBED
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(key, same);
    same
}

/// Whether the device maps memory at its device address (VK_EXT_map_memory_placed).
fn places_maps(device: &Device) -> bool {
    device.vk().is_ok_and(|vk| vk.places_maps())
}

/// Whether every device of the context has SVM buffers.
pub fn supported(context: &Context) -> bool {
    context.devices.iter().all(|d| same_addresses(d)) || placed(context)
}

/// Whether the context's SVM allocations are placed maps (`vk::memory::Buffer::
/// at_device_address`): its devices are one Vulkan device, which places maps but does not
/// give imported host memory its host address.
pub fn placed(context: &Context) -> bool {
    let Some(first) = context.devices.first() else {
        return false;
    };
    let Ok(vk) = first.vk() else {
        return false;
    };
    let one = context
        .devices
        .iter()
        .all(|d| d.vk().is_ok_and(|v| Arc::ptr_eq(&v, &vk)));
    one && vk.places_maps() && !same_addresses(first)
}

/// Whether a coarse-grained allocation (`flags` without CL_MEM_SVM_FINE_GRAIN_BUFFER) of a
/// context of placed maps is device-local memory with a host copy at its address
/// (`vk::memory::Buffer::mirrored`), brought up to date at clEnqueueSVMMap and written back at
/// clEnqueueSVMUnmap: on discrete GPUs, where kernels would reach host memory over the bus
/// (VKCL_SVM_COARSE).
pub fn mirrors(context: &Context, flags: cl_svm_mem_flags) -> bool {
    let discrete = (context.devices.first())
        .and_then(|d| d.vk().ok())
        .is_some_and(|vk| !vk.caps.unified_memory());
    let wanted = match crate::config::get().svm_coarse {
        crate::config::SvmCoarse::Auto => discrete,
        crate::config::SvmCoarse::Device => true,
        crate::config::SvmCoarse::Host => false,
    };
    wanted && flags & CL_MEM_SVM_FINE_GRAIN_BUFFER == 0 && placed(context)
}

/// Whether the host's accesses to `mem` (an SVM allocation, or a buffer on one) go through
/// a copy of its own (`mirrors`), which maps bring up to date.
pub fn mirrored(mem: &Mem) -> bool {
    mem.storage().is_ok_and(|s| s.mirror().is_some())
}

/// The alignment of an allocation's start and size: the devices' import alignment or placed
/// maps' (a page).
pub fn alignment(context: &Context) -> Option<usize> {
    if placed(context) {
        let vk = context.devices.first()?.vk().ok()?;
        let a = vk.caps.min_placed_memory_map_alignment.max(4096) as usize;
        return Some(a.next_power_of_two());
    }
    let mut align = 4096usize;
    for d in &context.devices {
        let a = d.vk().ok()?.caps.min_imported_host_pointer_alignment as usize;
        align = align.max(a.next_power_of_two());
    }
    Some(align)
}

/// clSVMAlloc: None where the allocation fails or the context's devices have no SVM (the
/// entry point returns NULL; the spec gives it no error code).
pub fn alloc(
    context: &Arc<Context>,
    flags: cl_svm_mem_flags,
    size: usize,
    align: usize,
) -> Option<usize> {
    if !supported(context) || align > alignment(context)? {
        return None;
    }
    let mem = Mem::new_svm(context, flags, size)?;
    let ptr = mem.host_ptr;
    ALLOCATIONS.lock().insert(ptr, mem);
    log::debug!(target: "memory", "SVM allocation of {size} bytes at {ptr:#x}");
    Some(ptr)
}

/// clSVMFree: forgets the allocation starting at `ptr` (its memory goes when the commands
/// using it are done). Anything else is ignored, as the spec allows.
pub fn free(context: &Context, ptr: usize) {
    let mut all = ALLOCATIONS.lock();
    if all
        .get(&ptr)
        .is_some_and(|m| std::ptr::eq(m.context.as_ref(), context))
    {
        let gone = all.remove(&ptr);
        drop(all);
        drop(gone);
    }
}

/// The SVM allocation of `context` holding the byte at `ptr`, and `ptr`'s offset in it.
pub fn find(context: &Context, ptr: usize) -> Option<(Arc<Mem>, usize)> {
    let all = ALLOCATIONS.lock();
    let (&start, mem) = all.range(..=ptr).next_back()?;
    let inside = ptr < start + mem.size.max(1);
    (inside && std::ptr::eq(mem.context.as_ref(), context)).then(|| (mem.clone(), ptr - start))
}

/// The allocation holding `[ptr, ptr + size)` (CL_INVALID_VALUE where it starts in one and
/// leaves it), or None for memory outside every allocation.
pub fn find_range(
    context: &Context,
    ptr: usize,
    size: usize,
) -> CLResult<Option<(Arc<Mem>, usize)>> {
    match find(context, ptr) {
        Some((mem, offset)) => {
            check(
                offset.checked_add(size).is_some_and(|end| end <= mem.size),
                CL_INVALID_VALUE,
            )?;
            Ok(Some((mem, offset)))
        }
        None => Ok(None),
    }
}

/// Whether a module converts between pointers and integers (OpConvertPtrToU, OpConvertUToPtr):
/// clspv emits them in logical mode too, where Vulkan does not accept them.
pub fn casts_pointers(spirv: &[u32]) -> bool {
    const OP_CONVERT_PTR_TO_U: u32 = 117;
    const OP_CONVERT_U_TO_PTR: u32 = 120;
    let mut i = 5;
    while i < spirv.len() {
        let (count, op) = ((spirv[i] >> 16) as usize, spirv[i] & 0xffff);
        if op == OP_CONVERT_PTR_TO_U || op == OP_CONVERT_U_TO_PTR {
            return true;
        }
        i += count.max(1);
    }
    false
}

/// clSetKernelExecInfo's SVM state of a kernel.
#[derive(Clone, Default)]
pub struct ExecInfo {
    /// CL_KERNEL_EXEC_INFO_SVM_PTRS: memory the kernel reaches through pointers it reads.
    pub pointers: Vec<usize>,
    /// CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM.
    pub fine_grain_system: bool,
    /// CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT: buffers the kernel reaches by device address.
    pub device_pointers: Vec<u64>,
}

/// Which build of its kernel a launch uses.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Addressing {
    /// The program's first build.
    Logical,
    /// The physical-addressing build where it can be made, else the first build
    /// (VKCL_ADDRESSING=physical, a NULL buffer argument that the kernel tests against null,
    /// and two arguments on one buffer whose parameters the kernel compares or subtracts:
    /// [`compiler::null_tests`]). A NULL argument is address 0 there, so `p == 0`
    /// holds; in the first build it is a scratch buffer, which absorbs a write through it
    /// (undefined behaviour, which tests/fuzz.rs does) that address 0 would not.
    Preferred,
    /// The physical-addressing build: an argument is an SVM or device pointer, a buffer on SVM
    /// memory (which may start anywhere in a page) or one larger than a storage-buffer binding
    /// (maxStorageBufferRange), or the kernel was told it reaches memory by address.
    Required,
}

pub fn addressing(
    kernel: &Kernel,
    args: &[ArgValue],
    info: &ExecInfo,
    queue: &Queue,
) -> Addressing {
    let binding_range = u64::from(queue.vk.caps.limits.max_storage_buffer_range);
    let required = !info.pointers.is_empty()
        || !info.device_pointers.is_empty()
        || info.fine_grain_system
        || args.iter().any(|a| match a {
            ArgValue::Pointer(_) => true,
            ArgValue::Mem(Some(m)) => m.uses_svm() || padded(m.size as u64) > binding_range,
            _ => false,
        });
    let addresses = queue.vk.caps.features.buffer_device_address;
    // A NULL buffer argument its kernel tests: only then is the lexing worth it.
    let tested_null = || {
        let nulls: Vec<usize> = (args.iter().enumerate())
            .filter(|(_, a)| matches!(a, ArgValue::Mem(None)))
            .map(|(i, _)| i)
            .collect();
        !nulls.is_empty()
            && compiler::null_tests::tested_params(kernel.program.source(), &kernel.name)
                .iter()
                .any(|i| nulls.contains(i))
    };
    // Two pointer parameters the kernel compares or subtracts, bound to one buffer: the
    // first build folds their relation as if they pointed into different objects.
    let related = || {
        let root_of = |i: usize| match args.get(i) {
            Some(ArgValue::Mem(Some(m))) => Some(root(m)),
            _ => None,
        };
        let same = |i: usize, j: usize| match (root_of(i), root_of(j)) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        let shared = (0..args.len()).any(|i| (i + 1..args.len()).any(|j| same(i, j)));
        let source = || match kernel.program.il() {
            il if !il.is_empty() && compiler::il::relates_pointers(il) => {
                let n = kernel.reflection.num_args as usize;
                (0..n)
                    .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                    .collect()
            }
            _ => compiler::null_tests::related_params(kernel.program.source(), &kernel.name),
        };
        shared && (kernel.related.get_or_init(source).iter()).any(|&(i, j)| same(i, j))
    };
    if required {
        Addressing::Required
    } else if addresses && (crate::config::get().physical || tested_null() || related()) {
        Addressing::Preferred
    } else {
        Addressing::Logical
    }
}

/// The buffer `m` is, or is a sub-buffer of.
fn root(m: &Arc<Mem>) -> &Arc<Mem> {
    match &m.kind {
        super::memory::MemKind::SubBuffer { parent, .. } => root(parent),
        _ => m,
    }
}

/// The SVM allocations a launch reaches (its pointer arguments' and the exec info's), kept
/// alive until it completes.
pub fn reached(context: &Context, args: &[ArgValue], info: &ExecInfo) -> Keep {
    let pointers = args.iter().filter_map(|a| match a {
        ArgValue::Pointer(p) => Some(*p as usize),
        _ => None,
    });
    pointers
        .chain(info.pointers.iter().copied())
        .filter_map(|p| find(context, p).map(|(m, _)| m))
        .collect()
}

/// The device address a physical-addressing kernel gets for a pointer argument: a buffer's
/// (plus its offset in its storage), 0 for NULL, an SVM or device pointer as it is.
pub fn address(value: &ArgValue, queue: &Queue) -> CLResult<Option<u64>> {
    Ok(match value {
        ArgValue::Mem(None) => Some(0),
        ArgValue::Mem(Some(m)) => {
            let storage = m.storage_on(&queue.vk)?;
            let base = storage
                .device_address()
                .ok_or(ClError(CL_INVALID_OPERATION))?;
            Some(base + m.offset)
        }
        ArgValue::Pointer(p) => Some(*p),
        _ => None,
    })
}

/// A command on SVM memory that the host does: `work` runs once the commands before it (and
/// its wait list) are complete, on the completion thread, or at once when the queue is idle.
/// The memory is host-coherent, so nothing is copied for the device.
pub fn host_command(
    queue: &Arc<Queue>,
    command: cl_command_type,
    wait: &[Arc<Event>],
    keep: Keep,
    work: impl FnOnce() + Send + 'static,
) -> CLResult<Arc<Event>> {
    queue.enqueue(command, wait, move |rec| {
        rec.marker();
        Ok(Recorded {
            host: Some(Box::new(move || {
                work();
                Ok(())
            })),
            keep,
        })
    })
}
