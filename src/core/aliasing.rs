//! Which buffer arguments of a launch share memory (issue 15 item 6): the same cl_mem twice, a
//! sub-buffer and its parent, overlapping sub-buffers. Their storage-buffer variables are then
//! declared `Aliased` in a variant of the kernel's module (`compiler::aliased`).

use crate::vk::memory::Buffer;
use std::sync::Arc;

/// A storage-buffer argument as bound: its (set, binding) and the bytes of `buffer` it names.
pub struct Bound {
    pub at: (u32, u32),
    pub buffer: Arc<Buffer>,
    pub start: u64,
    pub end: u64,
}

/// The (set, binding) of each argument whose bytes overlap another's, sorted; empty where no
/// two overlap (most launches).
pub fn shared_bindings(bound: &[Bound]) -> Vec<(u32, u32)> {
    let mut shared = vec![];
    for (i, a) in bound.iter().enumerate() {
        for b in &bound[..i] {
            if Arc::ptr_eq(&a.buffer, &b.buffer) && a.start < b.end && b.start < a.end {
                shared.extend([a.at, b.at]);
            }
        }
    }
    shared.sort_unstable();
    shared.dedup();
    shared
}
