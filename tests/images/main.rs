//! Images and samplers (issue 7), written against the OpenCL 3.0 API and OpenCL C specifications
//! and checked against values computed on the host by the spec's rules (format conversion,
//! rounding, addressing, filtering), not only against each other:
//!
//! - `queries`: image device limits, clGetSupportedImageFormats and the minimum format lists;
//! - `create`: clCreateImage* errors, clGetImageInfo and clGetMemObjectInfo on every type;
//! - `transfers`: write/read/copy/fill/map of images and image ↔ buffer copies, and their errors;
//! - `kernels`: read_image*/write_image* without a sampler on every type, image queries in
//!   kernels, read_write images;
//! - `samplers`: sampler objects, and sampled reads with every addressing and filter mode,
//!   compared with a host model of section 8.2 "Image addressing and filtering" (`model`).
//!
//! Images are small and oddly sized so the suite stays fast on a CPU Vulkan driver.
#[path = "../common/mod.rs"]
#[macro_use]
mod common;

mod create;
mod format;
mod from_buffer;
mod from_image;
mod kernels;
mod model;
mod packed;
mod queries;
mod samplers;
mod transfers;
mod util;
