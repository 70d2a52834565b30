//! vkcl: OpenCL 3.0 on any Vulkan device.
//!
//! Layers: `api` (C ABI) → `core` (OpenCL objects) → `vk` (Vulkan) and `compiler` (clspv).

pub(crate) mod api;
pub mod cache;
#[rustfmt::skip]
pub mod cl;
pub mod compiler;
pub mod config;
pub mod core;
mod logger;
pub mod shutdown;
pub mod vk;
