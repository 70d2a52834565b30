//! Internal kernels: OpenCL C that vkcl builds for itself with the same clspv, once per device,
//! on first use.

use super::context::Context;
use super::device::Device;
use super::kernel::Kernel;
use super::program::Program;
use super::CLResult;
use std::sync::Arc;

/// `dst[i] = src[i]` over 16-byte elements: large buffer copies (see `transfer::copy_linear`).
const COPY16: &str = "kernel void vkcl_copy16(global uint4 *dst, global const uint4 *src) {
    size_t i = get_global_id(0);
    dst[i] = src[i];
}
";

/// The 16-byte copy kernel on `device`; None where it cannot be built (the caller falls back).
/// Callers pass their arguments to `kernel::enqueue_as`; the shared kernel holds none.
pub fn copy16(device: &Arc<Device>) -> Option<Arc<Kernel>> {
    device
        .internal_copy
        .get_or_init(|| match build(device, COPY16, "vkcl_copy16") {
            Ok(k) => Some(k),
            Err(e) => {
                log::warn!(target: "compiler", "internal copy kernel: {e}; using vkCmdCopyBuffer");
                None
            }
        })
        .clone()
}

/// Builds `source` for `device` alone, in a context of its own, and returns kernel `name`.
fn build(device: &Arc<Device>, source: &str, name: &str) -> CLResult<Arc<Kernel>> {
    let context = Context::new(vec![device.clone()], vec![], None)?;
    let program = Program::from_source(&context, source.into());
    program.build(&[], "", None)?;
    Kernel::new(&program, name)
}
