//! Everything that touches Vulkan (ash): instance, device probing, memory, command recording,
//! pipelines. The rest of vkcl sees plain Rust types.

mod clock;
pub mod device;
pub mod format;
pub mod image;
pub mod instance;
pub mod memory;
pub mod pipeline;
pub mod probe;
pub mod staging;
pub mod submit;
pub mod workarounds;

pub use ash::vk;

/// What can go wrong in the Vulkan layer. Callers in core map it to the CL error of the entry
/// point concerned (`From` gives the default mapping, core/error.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Host memory ran out.
    HostMemory,
    /// Device memory (or another device object) ran out.
    DeviceMemory,
    /// The device is lost: nothing submitted will complete.
    DeviceLost,
    /// Any other failure of the driver (or of vkcl's use of it).
    Other(vk::Result),
}

pub type Result<T> = std::result::Result<T, Error>;

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::HostMemory => f.write_str("out of host memory"),
            Error::DeviceMemory => f.write_str("out of device memory"),
            Error::DeviceLost => f.write_str("device lost"),
            Error::Other(r) => write!(f, "{r}"),
        }
    }
}

impl From<vk::Result> for Error {
    fn from(r: vk::Result) -> Error {
        match r {
            vk::Result::ERROR_OUT_OF_HOST_MEMORY => Error::HostMemory,
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_TOO_MANY_OBJECTS => {
                Error::DeviceMemory
            }
            vk::Result::ERROR_DEVICE_LOST => Error::DeviceLost,
            r => Error::Other(r),
        }
    }
}

impl From<gpu_allocator::AllocationError> for Error {
    fn from(e: gpu_allocator::AllocationError) -> Error {
        log::warn!(target: "memory", "allocation failed: {e}");
        match e {
            gpu_allocator::AllocationError::OutOfMemory => Error::DeviceMemory,
            _ => Error::Other(vk::Result::ERROR_UNKNOWN),
        }
    }
}
