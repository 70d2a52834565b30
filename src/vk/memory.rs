//! Buffers: a VkBuffer with its gpu-allocator sub-allocation, freed on Drop.

use super::device::Device;
use super::vk;
use crate::core::{CLResult, ClError};
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::ptr::NonNull;
use std::sync::Arc;

/// Where a buffer's memory should live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Host-visible memory the GPU reads well: buffers (for now) and uploads.
    Upload,
    /// Host-visible, cached memory for reading back.
    Readback,
}

pub struct Buffer {
    pub device: Arc<Device>,
    pub raw: vk::Buffer,
    /// The size asked for (the allocation is `padded(size)`).
    pub size: u64,
    allocation: Option<Allocation>,
}

// SAFETY: the mapped pointer inside the allocation is only used through `mapped`, whose users
// synchronise through the queue; Vulkan handles are plain ids.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

pub const BUFFER_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::UNIFORM_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

/// Allocation sizes are padded to 16 bytes: clspv loads vectors whole (a `half3` is read as
/// 8 bytes), and robust buffer access would zero a load that crosses the bound range's end.
pub fn padded(size: u64) -> u64 {
    size.max(16).next_multiple_of(16)
}

impl Buffer {
    pub fn new(
        device: &Arc<Device>,
        size: u64,
        placement: Placement,
        name: &str,
    ) -> CLResult<Buffer> {
        let info = vk::BufferCreateInfo::default()
            .size(padded(size))
            .usage(BUFFER_USAGE)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let raw = unsafe { device.raw.create_buffer(&info, None) }?;
        // SAFETY: raw was just created on this device.
        let requirements = unsafe { device.raw.get_buffer_memory_requirements(raw) };
        let location = match placement {
            Placement::Upload => MemoryLocation::CpuToGpu,
            Placement::Readback => MemoryLocation::GpuToCpu,
        };
        let alloc = {
            let mut guard = device.allocator.lock();
            let allocator = guard
                .as_mut()
                .ok_or(ClError(crate::cl::CL_OUT_OF_RESOURCES))?;
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
        Ok(Buffer {
            device: device.clone(),
            raw,
            size,
            allocation: Some(alloc),
        })
    }

    /// The host address of byte 0, for host-visible buffers.
    pub fn mapped(&self) -> Option<NonNull<u8>> {
        self.allocation.as_ref()?.mapped_ptr().map(|p| p.cast())
    }

    /// Copies `data` into the buffer at `offset` from the host.
    ///
    /// # Safety
    /// No GPU work may access the range concurrently.
    pub unsafe fn write(&self, offset: u64, data: &[u8]) {
        assert!(offset + data.len() as u64 <= self.size);
        let dst = self
            .mapped()
            .expect("write to a buffer that is not host-visible");
        // SAFETY: in bounds (checked above); the caller guarantees no concurrent GPU access.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                dst.as_ptr().add(offset as usize),
                data.len(),
            )
        };
    }

    /// Copies from the buffer at `offset` into `out`.
    ///
    /// # Safety
    /// No GPU work may write the range concurrently.
    pub unsafe fn read(&self, offset: u64, out: &mut [u8]) {
        assert!(offset + out.len() as u64 <= self.size);
        let src = self
            .mapped()
            .expect("read from a buffer that is not host-visible");
        // SAFETY: in bounds; the caller guarantees no concurrent GPU writes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.as_ptr().add(offset as usize),
                out.as_mut_ptr(),
                out.len(),
            )
        };
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the last user of the buffer is gone (commands hold an Arc until complete).
        unsafe { self.device.raw.destroy_buffer(self.raw, None) };
        if let (Some(a), Some(alloc)) = (
            self.device.allocator.lock().as_mut(),
            self.allocation.take(),
        ) {
            let _ = a.free(alloc);
        }
    }
}
