//! clEnqueueFillBuffer.

use super::chunk::linear;
use super::staged::upload;
use crate::cl::*;
use crate::core::error::CLResult;
use crate::core::event::Event;
use crate::core::memory::Mem;
use crate::core::queue::{Queue, Recorded};
use crate::core::residence::{around, Access, Use};
use crate::vk::device::Device as VkDevice;
use crate::vk::memory::{Buffer, Placement};
use crate::vk::submit::Recorder;
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

/// clEnqueueFillBuffer (and clEnqueueSVMMemFill), reported as `command`: vkCmdFillBuffer where
/// the pattern is a repeated word, else an upload of the repeated pattern.
pub fn fill(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    pattern: &[u8],
    offset: usize,
    size: usize,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let uses = [Use::bytes(mem, offset, size, Access::Overwrite)];
    around(queue, &uses, wait, |wait| {
        if fill_word(mem, pattern, offset, size).is_some() {
            return queue.enqueue(command, wait, |rec| {
                record_fill(rec, &queue.vk, mem, pattern, offset, size)?;
                Ok(Recorded {
                    host: None,
                    keep: vec![mem.clone()],
                })
            });
        }
        let data = pattern.repeat(size / pattern.len());
        let pieces = linear(mem, offset, size);
        // SAFETY: the one piece is `data`.
        unsafe { upload(queue, command, mem, pieces, data.as_ptr(), false, wait) }
    })
}

/// The word vkCmdFillBuffer fills the range with, if it can.
fn fill_word(mem: &Mem, pattern: &[u8], offset: usize, size: usize) -> Option<u32> {
    pattern_word(pattern).filter(|_| mem.at(offset) % 4 == 0 && size % 4 == 0)
}

/// Records a fill: vkCmdFillBuffer where the pattern is a repeated word, else a copy from a
/// buffer of its own holding the repeated pattern (kept with the recording: a recorded
/// command is replayed long after its enqueue, cl_khr_command_buffer).
pub fn record_fill(
    rec: &mut Recorder,
    vk: &Arc<VkDevice>,
    mem: &Mem,
    pattern: &[u8],
    offset: usize,
    size: usize,
) -> CLResult<()> {
    let storage = mem.storage_on(vk)?;
    let at = mem.at(offset);
    match fill_word(mem, pattern, offset, size) {
        Some(word) => rec.fill_buffer(storage, at, size as u64, word),
        None if size == 0 => rec.marker(),
        None => {
            let data = pattern.repeat(size / pattern.len());
            let src = Arc::new(Buffer::new(
                vk,
                size as u64,
                Placement::Upload,
                "fill pattern",
            )?);
            // SAFETY: the buffer is new; no GPU work uses it yet.
            unsafe { src.write(0, &data) };
            rec.copy_buffer(&src, 0, storage, at, size as u64);
        }
    }
    Ok(())
}
