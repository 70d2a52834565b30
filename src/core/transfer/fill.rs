//! clEnqueueFillBuffer.

use super::chunk::linear;
use super::staged::upload;
use crate::cl::*;
use crate::core::error::CLResult;
use crate::core::event::Event;
use crate::core::memory::Mem;
use crate::core::queue::{Queue, Recorded};
use std::sync::Arc;

/// The pattern as one 32-bit word, when repeating it fills 4-byte words identically.
pub(super) fn pattern_word(pattern: &[u8]) -> Option<u32> {
    let word: Vec<u8> = match pattern.len() {
        1 => vec![pattern[0]; 4],
        2 => pattern.repeat(2),
        _ if pattern.chunks(4).all(|c| c == &pattern[..4]) => pattern[..4].to_vec(),
        _ => return None,
    };
    Some(u32::from_ne_bytes(word.try_into().ok()?))
}

/// clEnqueueFillBuffer: vkCmdFillBuffer where the pattern is a repeated word, else an upload
/// of the repeated pattern.
pub fn fill(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    pattern: &[u8],
    offset: usize,
    size: usize,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let at = mem.at(offset);
    if let Some(word) = pattern_word(pattern).filter(|_| at % 4 == 0 && size % 4 == 0) {
        let storage = mem.storage_on(&queue.vk)?;
        return queue.enqueue(CL_COMMAND_FILL_BUFFER, wait, |rec| {
            rec.fill_buffer(storage, at, size as u64, word);
            Ok(Recorded {
                host: None,
                keep: vec![mem.clone()],
            })
        });
    }
    let data = pattern.repeat(size / pattern.len());
    let pieces = linear(mem, offset, size);
    // SAFETY: the one piece is `data`.
    unsafe {
        upload(
            queue,
            CL_COMMAND_FILL_BUFFER,
            mem,
            pieces,
            data.as_ptr(),
            false,
            wait,
        )
    }
}
