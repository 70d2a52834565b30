//! `ClError`: an OpenCL error code as a Rust error.

use crate::cl::*;
use std::fmt;

/// A negative OpenCL status code. `Display` prints its name (`CL_INVALID_VALUE`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ClError(pub cl_int);

pub type CLResult<T> = Result<T, ClError>;

macro_rules! error_names {
    ($($name:ident),* $(,)?) => {
        /// The name of an OpenCL status code, or None for an unknown one.
        pub fn error_name(code: cl_int) -> Option<&'static str> {
            match code {
                $($name => Some(stringify!($name)),)*
                _ => None,
            }
        }
    };
}

error_names!(
    CL_SUCCESS,
    CL_DEVICE_NOT_FOUND,
    CL_DEVICE_NOT_AVAILABLE,
    CL_COMPILER_NOT_AVAILABLE,
    CL_MEM_OBJECT_ALLOCATION_FAILURE,
    CL_OUT_OF_RESOURCES,
    CL_OUT_OF_HOST_MEMORY,
    CL_PROFILING_INFO_NOT_AVAILABLE,
    CL_MEM_COPY_OVERLAP,
    CL_IMAGE_FORMAT_MISMATCH,
    CL_IMAGE_FORMAT_NOT_SUPPORTED,
    CL_BUILD_PROGRAM_FAILURE,
    CL_MAP_FAILURE,
    CL_MISALIGNED_SUB_BUFFER_OFFSET,
    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
    CL_COMPILE_PROGRAM_FAILURE,
    CL_LINKER_NOT_AVAILABLE,
    CL_LINK_PROGRAM_FAILURE,
    CL_DEVICE_PARTITION_FAILED,
    CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
    CL_INVALID_VALUE,
    CL_INVALID_DEVICE_TYPE,
    CL_INVALID_PLATFORM,
    CL_INVALID_DEVICE,
    CL_INVALID_CONTEXT,
    CL_INVALID_QUEUE_PROPERTIES,
    CL_INVALID_COMMAND_QUEUE,
    CL_INVALID_HOST_PTR,
    CL_INVALID_MEM_OBJECT,
    CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
    CL_INVALID_IMAGE_SIZE,
    CL_INVALID_SAMPLER,
    CL_INVALID_BINARY,
    CL_INVALID_BUILD_OPTIONS,
    CL_INVALID_PROGRAM,
    CL_INVALID_PROGRAM_EXECUTABLE,
    CL_INVALID_KERNEL_NAME,
    CL_INVALID_KERNEL_DEFINITION,
    CL_INVALID_KERNEL,
    CL_INVALID_ARG_INDEX,
    CL_INVALID_ARG_VALUE,
    CL_INVALID_ARG_SIZE,
    CL_INVALID_KERNEL_ARGS,
    CL_INVALID_WORK_DIMENSION,
    CL_INVALID_WORK_GROUP_SIZE,
    CL_INVALID_WORK_ITEM_SIZE,
    CL_INVALID_GLOBAL_OFFSET,
    CL_INVALID_EVENT_WAIT_LIST,
    CL_INVALID_EVENT,
    CL_INVALID_OPERATION,
    CL_INVALID_GL_OBJECT,
    CL_INVALID_BUFFER_SIZE,
    CL_INVALID_MIP_LEVEL,
    CL_INVALID_GLOBAL_WORK_SIZE,
    CL_INVALID_PROPERTY,
    CL_INVALID_IMAGE_DESCRIPTOR,
    CL_INVALID_COMPILER_OPTIONS,
    CL_INVALID_LINKER_OPTIONS,
    CL_INVALID_DEVICE_PARTITION_COUNT,
    CL_INVALID_PIPE_SIZE,
    CL_INVALID_DEVICE_QUEUE,
    CL_INVALID_SPEC_ID,
    CL_MAX_SIZE_RESTRICTION_EXCEEDED,
    CL_PLATFORM_NOT_FOUND_KHR,
    CL_INVALID_COMMAND_BUFFER_KHR,
    CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
    CL_INCOMPATIBLE_COMMAND_QUEUE_KHR,
    CL_INVALID_MUTABLE_COMMAND_KHR,
);

impl fmt::Display for ClError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match error_name(self.0) {
            Some(name) => f.write_str(name),
            None => write!(f, "CL error {}", self.0),
        }
    }
}

impl fmt::Debug for ClError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for ClError {}

/// `Err(ClError(code))` unless `cond` holds: the shape of most spec validation rules.
#[inline]
pub fn check(cond: bool, code: cl_int) -> CLResult<()> {
    if cond {
        Ok(())
    } else {
        Err(ClError(code))
    }
}

impl From<crate::vk::Error> for ClError {
    /// The Vulkan layer's failures as the CL errors DESIGN.md assigns them, where the entry
    /// point does not say otherwise.
    fn from(e: crate::vk::Error) -> ClError {
        use crate::vk::Error;
        ClError(match e {
            Error::HostMemory => CL_OUT_OF_HOST_MEMORY,
            Error::DeviceMemory => CL_MEM_OBJECT_ALLOCATION_FAILURE,
            Error::DeviceLost | Error::Other(_) => CL_OUT_OF_RESOURCES,
        })
    }
}
