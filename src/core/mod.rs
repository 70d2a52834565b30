//! The OpenCL objects as Rust types and their behaviour. No C ABI here; Vulkan through `vk`.

pub mod aliasing;
pub mod command_buffer;
pub mod context;
pub mod device;
pub mod device_enqueue;
pub mod error;
pub mod event;
pub mod format;
pub mod fxhash;
pub mod image;
pub mod internal;
pub mod kernel;
pub mod kernel_objects;
pub mod memory;
pub mod object;
pub mod platform;
pub mod prebuild;
pub mod printf;
pub mod program;
pub mod queue;
pub mod residence;
pub mod sampler;
pub mod svm;
pub mod transfer;

pub use error::{check, CLResult, ClError};
