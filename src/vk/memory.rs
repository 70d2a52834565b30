//! Buffers: a VkBuffer with its memory (a gpu-allocator sub-allocation, or imported host
//! memory), freed on Drop.

use super::device::Device;
use super::vk;
use super::{Error, Result};
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::ptr::NonNull;
use std::sync::Arc;

/// Where a buffer's memory should live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Device-local memory the host does not access: kernels at full speed; the host reaches
    /// it through staging copies.
    Device,
    /// Host-visible memory the GPU reads well (device-local where the driver offers it,
    /// write-combined on discrete GPUs): buffers on unified memory, and uploads.
    Upload,
    /// Host-visible, cached memory: readback, and CL_MEM_ALLOC_HOST_PTR on discrete GPUs.
    Readback,
    /// Device-local memory the host also maps, where the whole device-local heap is
    /// host-visible (resizable BAR; `Caps::mappable_device_memory`): kernels at full speed,
    /// the host writes it directly; it reads it (write-combined, uncached) only in small
    /// pieces, with streaming loads. Device-local where the driver gives no such memory.
    Mapped,
}

enum Memory {
    Allocated(Allocation),
    /// Imported host memory (VK_EXT_external_memory_host).
    Imported(vk::DeviceMemory),
    /// Device memory of its own that other VkDevices of the same physical device import
    /// (`Buffer::exportable`), of this memory type and allocation size; or such memory
    /// imported (`Buffer::import_into`).
    Shared(vk::DeviceMemory, u32, u64),
    /// Host-visible memory mapped at its own device address (`Buffer::at_device_address`),
    /// of this many bytes.
    Placed(vk::DeviceMemory, usize),
    /// Device-local memory with host memory of this many bytes at its device address
    /// (`Buffer::mirrored`).
    Mirrored(vk::DeviceMemory, NonNull<u8>, usize),
}

pub struct Buffer {
    pub device: Arc<Device>,
    pub(super) raw: vk::Buffer,
    /// The size asked for (the allocation is `padded(size)`).
    pub size: u64,
    memory: Option<Memory>,
    /// The host address of byte 0, for placements the host accesses.
    host: Option<NonNull<u8>>,
    /// The host address of byte 0 of `Placement::Mapped` memory (write-combined).
    write_combined: Option<NonNull<u8>>,
}

// SAFETY: the host pointer is only used through `host`, whose users synchronise through the
// queue; Vulkan handles are plain ids.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

pub const BUFFER_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::UNIFORM_BUFFER.as_raw()
        | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER.as_raw()
        | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

/// The granularity of `Buffer::mirrored`'s host ranges: a multiple of the host's page size
/// on every Linux host (4 or 64 KiB).
const PAGE: u64 = 64 << 10;

/// Allocation sizes are padded to 16 bytes: clspv loads vectors whole (a `half3` is read as
/// 8 bytes), and robust buffer access would zero a load that crosses the bound range's end.
pub fn padded(size: u64) -> u64 {
    size.max(16).next_multiple_of(16)
}

/// The usage of every buffer: with device addresses where the device has them (kernels built
/// for physical addressing reach buffers by address: SVM, cl_ext_buffer_device_address).
fn usage(device: &Device) -> vk::BufferUsageFlags {
    if device.caps.features.buffer_device_address {
        BUFFER_USAGE | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
    } else {
        BUFFER_USAGE
    }
}

/// A buffer of `size` bytes without memory; `external`: for memory of that handle type.
fn create_raw(
    device: &Device,
    size: u64,
    external: Option<vk::ExternalMemoryHandleTypeFlags>,
) -> Result<vk::Buffer> {
    let mut ext =
        vk::ExternalMemoryBufferCreateInfo::default().handle_types(external.unwrap_or_default());
    let mut info = vk::BufferCreateInfo::default()
        .size(size)
        .usage(usage(device))
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    if external.is_some() {
        info = info.push_next(&mut ext);
    }
    // SAFETY: valid device and create info.
    Ok(unsafe { device.raw.create_buffer(&info, None) }?)
}

impl Buffer {
    pub fn new(
        device: &Arc<Device>,
        size: u64,
        placement: Placement,
        name: &str,
    ) -> Result<Buffer> {
        let raw = create_raw(device, padded(size), None)?;
        // SAFETY: raw was just created on this device.
        let requirements = unsafe { device.raw.get_buffer_memory_requirements(raw) };
        let location = match placement {
            Placement::Device => MemoryLocation::GpuOnly,
            Placement::Upload | Placement::Mapped => MemoryLocation::CpuToGpu,
            Placement::Readback => MemoryLocation::GpuToCpu,
        };
        let alloc = {
            let mut guard = device.allocator.lock();
            let allocator = guard
                .as_mut()
                .ok_or(Error::Other(vk::Result::ERROR_INITIALIZATION_FAILED))?;
            allocator.allocate(&AllocationCreateDesc {
                name,
                requirements,
                location,
                linear: true,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })
        };
        let alloc = match alloc {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: raw is unused.
                unsafe { device.raw.destroy_buffer(raw, None) };
                return Err(e.into());
            }
        };
        // SAFETY: the allocation satisfies raw's requirements and is not bound elsewhere.
        if let Err(e) = unsafe {
            device
                .raw
                .bind_buffer_memory(raw, alloc.memory(), alloc.offset())
        } {
            // SAFETY: raw is unused.
            unsafe { device.raw.destroy_buffer(raw, None) };
            if let Some(a) = device.allocator.lock().as_mut() {
                let _ = a.free(alloc);
            }
            return Err(e.into());
        }
        log::debug!(
            target: "memory",
            "{name}: {size} bytes, {:?}, {} at {:#x} of {:?}",
            alloc.memory_properties(),
            if alloc.is_dedicated() { "dedicated" } else { "suballocated" },
            alloc.offset(),
            // SAFETY: only the handle's value is printed.
            unsafe { alloc.memory() },
        );
        let mapped = alloc.mapped_ptr().map(|p| p.cast());
        let device_local =
            vk::MemoryPropertyFlags::DEVICE_LOCAL | vk::MemoryPropertyFlags::HOST_VISIBLE;
        let mut buffer = Buffer {
            device: device.clone(),
            raw,
            size,
            memory: Some(Memory::Allocated(alloc)),
            host: None,
            write_combined: None,
        };
        match placement {
            Placement::Device => {}
            Placement::Mapped => {
                let props = match &buffer.memory {
                    Some(Memory::Allocated(a)) => a.memory_properties(),
                    _ => vk::MemoryPropertyFlags::empty(),
                };
                if mapped.is_none() || !props.contains(device_local) {
                    // Not device-local after all: a device-local buffer instead.
                    drop(buffer);
                    return Buffer::new(device, size, Placement::Device, name);
                }
                buffer.write_combined = mapped;
            }
            Placement::Upload | Placement::Readback => {
                if mapped.is_none() {
                    log::error!(target: "memory", "{name}: host-visible memory came back unmapped");
                    return Err(Error::DeviceMemory);
                }
                buffer.host = mapped;
            }
        }
        Ok(buffer)
    }

    /// A buffer on the application's memory at `ptr` (VK_EXT_external_memory_host), zero-copy.
    /// None where the device cannot import it: no extension, `ptr` or `size` not a multiple of
    /// minImportedHostPointerAlignment, or the driver refuses this memory.
    ///
    /// # Safety
    /// `size` bytes at `ptr` must stay allocated for the buffer's lifetime.
    pub unsafe fn import(device: &Arc<Device>, ptr: *mut u8, size: u64) -> Option<Buffer> {
        let ext = device.host_import.as_ref()?;
        let align = device.caps.min_imported_host_pointer_alignment;
        if ptr as u64 % align != 0 || size % align != 0 || size == 0 {
            return None;
        }
        let handle_type = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
        let mut host_props = vk::MemoryHostPointerPropertiesEXT::default();
        // SAFETY: valid device and loaded function; ptr is the application's allocation
        // (caller's contract).
        let r = unsafe {
            (ext.fp().get_memory_host_pointer_properties_ext)(
                ext.device(),
                handle_type,
                ptr.cast(),
                &mut host_props,
            )
        };
        if r != vk::Result::SUCCESS {
            return None;
        }
        let raw = create_raw(device, size, Some(handle_type)).ok()?;
        let destroy = || {
            // SAFETY: raw is unused.
            unsafe { device.raw.destroy_buffer(raw, None) }
        };
        // SAFETY: raw was just created on this device.
        let req = unsafe { device.raw.get_buffer_memory_requirements(raw) };
        let mem = &device.caps.memory;
        let coherent =
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(type_index) = (0..mem.memory_type_count).find(|&i| {
            req.memory_type_bits & host_props.memory_type_bits & (1 << i) != 0
                && mem.memory_types[i as usize]
                    .property_flags
                    .contains(coherent)
        }) else {
            destroy();
            return None;
        };
        if req.size > size {
            destroy();
            return None;
        }
        let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
            .handle_type(handle_type)
            .host_pointer(ptr.cast());
        let mut flags =
            vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut info = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(type_index)
            .push_next(&mut import);
        if device.caps.features.buffer_device_address {
            info = info.push_next(&mut flags);
        }
        // SAFETY: the memory type accepts this host pointer; size and pointer are aligned.
        let memory = match unsafe { device.raw.allocate_memory(&info, None) } {
            Ok(m) => m,
            Err(e) => {
                log::info!(target: "memory", "importing host memory failed ({e}): copying instead");
                destroy();
                return None;
            }
        };
        // SAFETY: memory is new and large enough for raw.
        if unsafe { device.raw.bind_buffer_memory(raw, memory, 0) }.is_err() {
            destroy();
            // SAFETY: memory is unused.
            unsafe { device.raw.free_memory(memory, None) };
            return None;
        }
        let host = NonNull::new(ptr)?;
        Some(Buffer {
            device: device.clone(),
            raw,
            size,
            memory: Some(Memory::Imported(memory)),
            host: Some(host),
            write_combined: None,
        })
    }

    /// A device-local buffer whose memory other VkDevices of the same physical device can
    /// import (`import_into`; `Device::shares_memory_with`): a dedicated allocation exportable
    /// as an opaque fd.
    pub fn exportable(device: &Arc<Device>, size: u64) -> Result<Buffer> {
        let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
        let raw = create_raw(device, padded(size), Some(handle))?;
        // SAFETY: raw was just created on this device.
        let req = unsafe { device.raw.get_buffer_memory_requirements(raw) };
        let mem = &device.caps.memory;
        let local = vk::MemoryPropertyFlags::DEVICE_LOCAL;
        let type_index = (0..mem.memory_type_count).find(|&i| {
            req.memory_type_bits & (1 << i) != 0
                && mem.memory_types[i as usize].property_flags.contains(local)
        });
        let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(handle);
        let memory = type_index.ok_or(Error::DeviceMemory).and_then(|t| {
            let info = vk::MemoryAllocateInfo::default().push_next(&mut export);
            allocate_dedicated(device, raw, info, t, req.size)
        });
        let memory = match memory {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: raw is unused.
                unsafe { device.raw.destroy_buffer(raw, None) };
                return Err(e);
            }
        };
        let type_index = type_index.expect("allocated above");
        log::debug!(target: "memory", "{size} bytes of device memory to share (opaque fd)");
        Ok(Buffer {
            device: device.clone(),
            raw,
            size,
            memory: Some(Memory::Shared(memory, type_index, req.size)),
            host: None,
            write_combined: None,
        })
    }

    /// The memory of an `exportable` buffer imported into `device` (a VkDevice of the same
    /// physical device): the same bytes, seen by both.
    pub fn import_into(&self, device: &Arc<Device>) -> Result<Buffer> {
        let Some(Memory::Shared(memory, type_index, alloc_size)) = self.memory else {
            return Err(Error::Other(vk::Result::ERROR_INVALID_EXTERNAL_HANDLE));
        };
        let (Some(export), Some(_)) = (&self.device.fd_memory, &device.fd_memory) else {
            return Err(Error::Other(vk::Result::ERROR_EXTENSION_NOT_PRESENT));
        };
        let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
        let info = vk::MemoryGetFdInfoKHR::default()
            .memory(memory)
            .handle_type(handle);
        // SAFETY: the memory was allocated exportable as an opaque fd.
        let fd = unsafe { export.get_memory_fd(&info) }?;
        let raw = match create_raw(device, padded(self.size), Some(handle)) {
            Ok(raw) => raw,
            Err(e) => {
                // SAFETY: the fd is ours (not given to Vulkan).
                unsafe { libc::close(fd) };
                return Err(e);
            }
        };
        let mut import = vk::ImportMemoryFdInfoKHR::default()
            .handle_type(handle)
            .fd(fd);
        let info = vk::MemoryAllocateInfo::default().push_next(&mut import);
        match allocate_dedicated(device, raw, info, type_index, alloc_size) {
            Ok(imported) => Ok(Buffer {
                device: device.clone(),
                raw,
                size: self.size,
                memory: Some(Memory::Shared(imported, type_index, alloc_size)),
                host: None,
                write_combined: None,
            }),
            Err(e) => {
                // SAFETY: raw is unused; a failed import leaves the fd ours.
                unsafe {
                    device.raw.destroy_buffer(raw, None);
                    libc::close(fd);
                }
                Err(e)
            }
        }
    }

    /// A buffer of host-visible, host-coherent memory that the host sees at the buffer's device
    /// address (VK_EXT_map_memory_placed): one pointer for kernels and host, as SVM needs
    /// where imported host memory gets another device address (NVIDIA). None where the device
    /// places no maps, or the host range at the device address is taken.
    pub fn at_device_address(device: &Arc<Device>, size: u64) -> Option<Buffer> {
        let map2 = device.map2.as_ref()?;
        let align = device.caps.min_placed_memory_map_alignment.max(4096);
        let raw = create_raw(device, padded(size).next_multiple_of(align), None).ok()?;
        let (memory, len) = match place_memory(device, map2, raw, align) {
            Some(placed) => placed,
            None => {
                // SAFETY: raw is unused.
                unsafe { device.raw.destroy_buffer(raw, None) };
                return None;
            }
        };
        let host = NonNull::new(host_map::address(raw, device)? as *mut u8);
        Some(Buffer {
            device: device.clone(),
            raw,
            size,
            memory: Some(Memory::Placed(memory, len)),
            host,
            write_combined: None,
        })
    }

    /// A device-local buffer, and host memory of its own at the buffer's device address
    /// (`mirror`): one pointer for kernels and host, the host's copy brought up to date by
    /// copies (coarse-grained SVM on discrete GPUs: kernels at device-memory speed). None
    /// where the device places no maps (the sign that its device addresses can be host
    /// addresses), or the host range at the device address is taken.
    pub fn mirrored(device: &Arc<Device>, size: u64) -> Option<Buffer> {
        use vk::MemoryPropertyFlags as M;
        if !device.places_maps() {
            return None;
        }
        let raw = create_raw(device, padded(size).next_multiple_of(PAGE), None).ok()?;
        let types = [
            (M::DEVICE_LOCAL, M::HOST_VISIBLE),
            (M::DEVICE_LOCAL, M::empty()),
        ];
        let Some((memory, host, len)) = bound_at_device_address(device, raw, &types, PAGE, true)
        else {
            // SAFETY: raw is unused.
            unsafe { device.raw.destroy_buffer(raw, None) };
            return None;
        };
        log::debug!(target: "memory", "SVM: {len} bytes of device memory mirrored at {host:?}");
        Some(Buffer {
            device: device.clone(),
            raw,
            size,
            memory: Some(Memory::Mirrored(memory, host, len)),
            host: None,
            write_combined: None,
        })
    }

    /// The host memory at the device address of a `mirrored` buffer.
    pub fn mirror(&self) -> Option<NonNull<u8>> {
        match self.memory {
            Some(Memory::Mirrored(_, at, _)) => Some(at),
            _ => None,
        }
    }

    /// The host address of byte 0, for buffers the host accesses directly (host-visible
    /// placements and imported memory); None for device-local buffers.
    pub fn host(&self) -> Option<NonNull<u8>> {
        self.host
    }

    /// The host address of byte 0 of a `Placement::Mapped` buffer: written directly, read only
    /// with streaming loads (uncached, write-combined memory).
    pub fn write_combined(&self) -> Option<NonNull<u8>> {
        self.write_combined
    }

    /// The buffer's device address (byte 0), where the device has buffer device addresses.
    pub fn device_address(&self) -> Option<u64> {
        if !self.device.caps.features.buffer_device_address {
            return None;
        }
        let info = vk::BufferDeviceAddressInfo::default().buffer(self.raw);
        // SAFETY: the buffer was created with SHADER_DEVICE_ADDRESS usage (`usage`) and is
        // bound to memory allocated with the DEVICE_ADDRESS flag.
        Some(unsafe { self.device.raw.get_buffer_device_address(&info) })
    }

    /// Whether the buffer is the application's memory itself (imported).
    pub fn imported(&self) -> bool {
        matches!(self.memory, Some(Memory::Imported(..)))
    }

    fn host_range(&self, offset: u64, len: usize) -> *mut u8 {
        assert!(offset + len as u64 <= self.size);
        let base = self
            .host
            .or(self.write_combined)
            .expect("host access to a device-local buffer");
        // SAFETY: in bounds of the buffer's host mapping (checked above).
        unsafe { base.as_ptr().add(offset as usize) }
    }

    /// Copies `data` into the buffer at `offset` from the host.
    ///
    /// # Safety
    /// No GPU work may access the range concurrently.
    pub unsafe fn write(&self, offset: u64, data: &[u8]) {
        let dst = self.host_range(offset, data.len());
        // SAFETY: in bounds; the caller guarantees no concurrent GPU access.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
    }

    /// Copies from the buffer at `offset` into `out`.
    ///
    /// # Safety
    /// No GPU work may write the range concurrently.
    pub unsafe fn read(&self, offset: u64, out: &mut [u8]) {
        let src = self.host_range(offset, out.len());
        // SAFETY: in bounds; the caller guarantees no concurrent GPU writes.
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the last user of the buffer is gone (commands hold an Arc until complete).
        unsafe { self.device.raw.destroy_buffer(self.raw, None) };
        match self.memory.take() {
            Some(Memory::Allocated(alloc)) => {
                log::debug!(target: "memory", "freed: {} bytes", self.size);
                if let Some(a) = self.device.allocator.lock().as_mut() {
                    let _ = a.free(alloc);
                }
            }
            Some(Memory::Imported(m)) => {
                // SAFETY: the buffer bound to it is destroyed.
                unsafe { self.device.raw.free_memory(m, None) };
                log::debug!(target: "memory", "released imported host memory: {} bytes", self.size);
            }
            Some(Memory::Shared(m, ..)) => {
                // SAFETY: the buffer bound to it is destroyed (the other devices' imports
                // hold the memory itself until they are freed too).
                unsafe { self.device.raw.free_memory(m, None) };
            }
            Some(Memory::Placed(m, len)) => {
                let at = self.host.map_or(std::ptr::null_mut(), NonNull::as_ptr);
                // SAFETY: the buffer bound to it is destroyed; the map at `at` is ours.
                unsafe { unplace_memory(&self.device, m, at, len) };
            }
            Some(Memory::Mirrored(m, at, len)) => {
                // SAFETY: the buffer bound to it is destroyed; the host range is ours.
                unsafe {
                    self.device.raw.free_memory(m, None);
                    host_map::release(at.as_ptr(), len);
                }
            }
            None => {}
        }
    }
}

/// Allocates `size` bytes of memory type `type_index` dedicated to `raw` (with `info`'s
/// chain: an export or import), with device addresses where the device has them, and binds
/// it.
fn allocate_dedicated(
    device: &Device,
    raw: vk::Buffer,
    info: vk::MemoryAllocateInfo,
    type_index: u32,
    size: u64,
) -> Result<vk::DeviceMemory> {
    let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(raw);
    let mut flags =
        vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
    let mut info = info
        .allocation_size(size)
        .memory_type_index(type_index)
        .push_next(&mut dedicated);
    if device.caps.features.buffer_device_address {
        info = info.push_next(&mut flags);
    }
    // SAFETY: a valid chain for a buffer of this device.
    let memory = unsafe { device.raw.allocate_memory(&info, None) }?;
    // SAFETY: memory is new, of a type raw accepts and large enough.
    if let Err(e) = unsafe { device.raw.bind_buffer_memory(raw, memory, 0) } {
        // SAFETY: memory is unused.
        unsafe { device.raw.free_memory(memory, None) };
        return Err(e.into());
    }
    Ok(memory)
}

/// Memory for `raw` of the first memory type of `types` (property flags wanted, flags refused)
/// that it accepts, allocated with device addresses and bound, and `len` bytes of host address
/// space reserved at the buffer's device address (zeroed memory if `usable`, else address
/// space only; nothing of the process is replaced): the memory, the host range and `len`.
/// None, with nothing left allocated, where any step fails.
fn bound_at_device_address(
    device: &Device,
    raw: vk::Buffer,
    types: &[(vk::MemoryPropertyFlags, vk::MemoryPropertyFlags)],
    align: u64,
    usable: bool,
) -> Option<(vk::DeviceMemory, NonNull<u8>, usize)> {
    // SAFETY: raw was created on this device.
    let req = unsafe { device.raw.get_buffer_memory_requirements(raw) };
    let len = req.size.next_multiple_of(align);
    let mem = &device.caps.memory;
    let type_index = types.iter().find_map(|&(want, not)| {
        (0..mem.memory_type_count).find(|&i| {
            let f = mem.memory_types[i as usize].property_flags;
            req.memory_type_bits & (1 << i) != 0 && f.contains(want) && !f.intersects(not)
        })
    })?;
    let mut flags =
        vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
    let info = vk::MemoryAllocateInfo::default()
        .allocation_size(len)
        .memory_type_index(type_index)
        .push_next(&mut flags);
    // SAFETY: valid device and allocate info.
    let memory = unsafe { device.raw.allocate_memory(&info, None) }.ok()?;
    let free = || {
        // SAFETY: nothing is bound to the memory any more, nor maps it.
        unsafe { device.raw.free_memory(memory, None) };
        None
    };
    // SAFETY: memory is new, of a type raw accepts, and large enough.
    if unsafe { device.raw.bind_buffer_memory(raw, memory, 0) }.is_err() {
        return free();
    }
    let Some(at) = host_map::address(raw, device).filter(|a| a % align == 0) else {
        return free();
    };
    // SAFETY: a fresh anonymous mapping, failing where anything is mapped there.
    match unsafe { host_map::reserve(at, len as usize, usable) }.and_then(NonNull::new) {
        Some(host) => Some((memory, host, len as usize)),
        None => {
            log::info!(target: "memory", "SVM: the host range at device address {at:#x} is taken");
            free()
        }
    }
}

/// Allocates host-visible, host-coherent memory for `raw` (system memory where the device
/// has it, cached where it can be), binds it and maps it at the buffer's device address, in a
/// host range first reserved there (so that nothing of the process is replaced). The memory
/// and the mapped length.
fn place_memory(
    device: &Device,
    map2: &ash::khr::map_memory2::Device,
    raw: vk::Buffer,
    align: u64,
) -> Option<(vk::DeviceMemory, usize)> {
    use vk::MemoryPropertyFlags as M;
    let coherent = M::HOST_VISIBLE | M::HOST_COHERENT;
    let types = [
        (coherent | M::HOST_CACHED, M::DEVICE_LOCAL),
        (coherent, M::DEVICE_LOCAL),
        (coherent, M::empty()),
    ];
    let (memory, reserved, len) = bound_at_device_address(device, raw, &types, align, false)?;
    let reserved = reserved.as_ptr();
    let free = || {
        // SAFETY: the memory is not mapped, and no buffer is bound to it any more.
        unsafe { device.raw.free_memory(memory, None) };
    };
    let mut place = vk::MemoryMapPlacedInfoEXT::default().placed_address(reserved.cast());
    let info = vk::MemoryMapInfoKHR::default()
        .memory(memory)
        .offset(0)
        .size(vk::WHOLE_SIZE)
        .flags(vk::MemoryMapFlags::PLACED_EXT)
        .push_next(&mut place);
    let mut ptr = std::ptr::null_mut();
    // SAFETY: host-visible memory, not mapped; the placed address is aligned and is our own
    // reservation of the whole length, which the map replaces.
    let r = unsafe { (map2.fp().map_memory2_khr)(device.raw.handle(), &info, &mut ptr) };
    if r != vk::Result::SUCCESS || ptr != reserved.cast() {
        log::info!(target: "memory", "SVM: placed map at {reserved:?}: {r:?}, {ptr:?}");
        // SAFETY: our reservation (or the failed map's range), of len bytes.
        unsafe { host_map::release(reserved, len) };
        free();
        return None;
    }
    Some((memory, len))
}

/// Unmaps placed memory (keeping the host range reserved where the device can, then releasing
/// it ourselves) and frees it.
///
/// # Safety
/// `memory` is mapped at `at`, `len` bytes, by `place_memory`, and no buffer uses it.
unsafe fn unplace_memory(device: &Device, memory: vk::DeviceMemory, at: *mut u8, len: usize) {
    if let Some(map2) = &device.map2 {
        let reserve = device.caps.features.memory_unmap_reserve;
        let flags = if reserve {
            vk::MemoryUnmapFlagsKHR::RESERVE_EXT
        } else {
            vk::MemoryUnmapFlagsKHR::empty()
        };
        let info = vk::MemoryUnmapInfoKHR::default()
            .memory(memory)
            .flags(flags);
        // SAFETY: the memory is mapped (caller's contract).
        let r = unsafe { (map2.fp().unmap_memory2_khr)(device.raw.handle(), &info) };
        if reserve && r == vk::Result::SUCCESS {
            // SAFETY: the range stays reserved after the unmap: ours to release.
            unsafe { host_map::release(at, len) };
        }
    }
    // SAFETY: unmapped above; nothing is bound to it (caller's contract).
    unsafe { device.raw.free_memory(memory, None) };
    log::debug!(target: "memory", "released placed memory: {len} bytes");
}

/// Host address-space reservations for placed maps (Linux; none elsewhere).
mod host_map {
    use super::{vk, Device};

    /// The device address of `raw` (bound to memory allocated with DEVICE_ADDRESS).
    pub(super) fn address(raw: vk::Buffer, device: &Device) -> Option<u64> {
        let info = vk::BufferDeviceAddressInfo::default().buffer(raw);
        // SAFETY: raw is bound to memory allocated with the DEVICE_ADDRESS flag, created with
        // SHADER_DEVICE_ADDRESS usage (the device has buffer device addresses: `places_maps`).
        Some(unsafe { device.raw.get_buffer_device_address(&info) }).filter(|&a| a != 0)
    }

    #[cfg(target_os = "linux")]
    mod sys {
        use std::ffi::c_void;
        pub const PROT_NONE: i32 = 0;
        pub const PROT_READ_WRITE: i32 = 3;
        pub const MAP_PRIVATE: i32 = 0x02;
        pub const MAP_ANONYMOUS: i32 = 0x20;
        pub const MAP_NORESERVE: i32 = 0x4000;
        pub const MAP_FIXED_NOREPLACE: i32 = 0x10_0000;
        extern "C" {
            pub fn mmap(a: *mut c_void, l: usize, p: i32, f: i32, fd: i32, o: i64) -> *mut c_void;
            pub fn munmap(a: *mut c_void, l: usize) -> i32;
        }
    }

    /// Reserves `len` bytes of address space at `at` exactly (zeroed memory if `usable`, else
    /// address space only); None where any of it is taken.
    ///
    /// # Safety
    /// The caller releases it with `release`.
    #[cfg(target_os = "linux")]
    pub(super) unsafe fn reserve(at: u64, len: usize, usable: bool) -> Option<*mut u8> {
        use sys::*;
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE;
        let prot = if usable { PROT_READ_WRITE } else { PROT_NONE };
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
        let p = unsafe { mmap(at as *mut _, len, prot, flags, -1, 0) };
        if p as isize == -1 {
            return None;
        }
        if p as u64 != at {
            // A kernel before Linux 4.17 takes the address as a hint only.
            // SAFETY: the mapping just made, elsewhere.
            unsafe { munmap(p, len) };
            return None;
        }
        Some(p.cast())
    }

    /// Releases a range `reserve` took (or a map placed over it).
    ///
    /// # Safety
    /// `len` bytes at `at` are a reservation of ours that nothing uses.
    #[cfg(target_os = "linux")]
    pub(super) unsafe fn release(at: *mut u8, len: usize) {
        // SAFETY: the caller's contract.
        unsafe { sys::munmap(at.cast(), len) };
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) unsafe fn reserve(_: u64, _: usize, _: bool) -> Option<*mut u8> {
        None
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) unsafe fn release(_: *mut u8, _: usize) {}
}
