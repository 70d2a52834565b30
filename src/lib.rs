//! vkcl: OpenCL 3.0 on any Vulkan device.
//!
//! Layers: `api` (C ABI) → `core` (OpenCL objects) → `vk` (Vulkan) and `compiler` (clspv).

pub(crate) mod api;
pub(crate) mod cache;
#[rustfmt::skip]
pub(crate) mod cl;
pub mod compiler;
pub mod config;
pub(crate) mod core;
pub mod diagnostics;
mod logger;
pub(crate) mod shutdown;
pub(crate) mod vk;
