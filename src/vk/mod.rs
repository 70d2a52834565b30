//! Everything that touches Vulkan (ash): instance, device probing, memory, command recording,
//! pipelines. The rest of vkcl sees plain Rust types.

pub mod device;
pub mod image;
pub mod instance;
pub mod memory;
pub mod pipeline;
pub mod probe;
pub mod staging;
pub mod submit;

pub use ash::vk;

use crate::cl::*;
use crate::core::ClError;

impl From<vk::Result> for ClError {
    /// Vulkan failures as the CL errors DESIGN.md assigns them.
    fn from(r: vk::Result) -> ClError {
        match r {
            vk::Result::ERROR_OUT_OF_HOST_MEMORY => ClError(CL_OUT_OF_HOST_MEMORY),
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_TOO_MANY_OBJECTS => {
                ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE)
            }
            _ => ClError(CL_OUT_OF_RESOURCES),
        }
    }
}

impl From<gpu_allocator::AllocationError> for ClError {
    fn from(e: gpu_allocator::AllocationError) -> ClError {
        log::warn!(target: "memory", "allocation failed: {e}");
        match e {
            gpu_allocator::AllocationError::OutOfMemory => {
                ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE)
            }
            _ => ClError(CL_OUT_OF_RESOURCES),
        }
    }
}
