//! The two paths of a host transfer (see the module above): direct, on the calling thread, and
//! staged, in chunks through the queue's staging memory.

use super::chunk::{chunks, read_chunk, Piece};
use super::map::order_only;
use super::memcpy::{copy_bytes, stream_read, streaming_loads};
use super::HostPtr;
use crate::cl::*;
use crate::core::error::CLResult;
use crate::core::event::Event;
use crate::core::memory::Mem;
use crate::core::queue::{HostPart, Queue, Recorded};
use crate::vk::memory::Placement;
use crate::vk::staging::{Lease, CHUNK};
use crate::vk::submit::CopyRegion;
use std::sync::Arc;

/// Reads of device-local memory the host maps (write-combined) up to this size are streaming
/// loads on the calling thread (H200: 4 KiB in 4 µs, 16 KiB in 24 µs; a GPU copy and its round
/// trip take about 20 µs). (Writes of it stay staged: a staged write returns once its data is
/// in staging memory, which on the H200 was as fast as writing the buffer directly.)
pub(super) const STREAM_READ: usize = 8 << 10;

/// The address of `mem`'s write-combined memory where a read of `len` bytes of it is streamed
/// on the calling thread (see `STREAM_READ`).
pub(super) fn streamed(queue: &Queue, mem: &Mem, len: usize) -> Option<*mut u8> {
    let mapped = mem.storage_on(&queue.vk).ok()?.write_combined()?;
    (len <= STREAM_READ && streaming_loads()).then_some(mapped.as_ptr())
}

/// Runs `copy` with the buffer's host address `base` on this thread when nothing the command
/// must follow is pending (a blocking call first waits for the commands before it). The queue
/// stays locked during the copy, so no later command can overtake it. None: the command must
/// be recorded (staged).
pub(super) fn direct(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    base: *mut u8,
    blocking: bool,
    wait: &[Arc<Event>],
    copy: impl Fn(*mut u8),
) -> CLResult<Option<Arc<Event>>> {
    let complete = |wait: &[Arc<Event>]| wait.iter().all(|e| e.status() == CL_COMPLETE as cl_int);
    if complete(wait) {
        if let Some(event) = queue.run_on_host(command, || copy(base))? {
            return Ok(Some(event));
        }
    }
    if !blocking {
        return Ok(None);
    }
    // Drain what the command follows, then copy unless another thread enqueued meanwhile.
    queue
        .enqueue_marker(CL_COMMAND_MARKER, wait, vec![mem.clone()])?
        .wait()?;
    queue.run_on_host(command, || copy(base))
}

/// Staging memory of the queue's pool; while the pool is exhausted, earlier commands are
/// submitted so that theirs comes back.
pub(crate) fn stage(queue: &Arc<Queue>, placement: Placement, size: usize) -> CLResult<Arc<Lease>> {
    let flush = || {
        let _ = queue.flush();
    };
    Ok(Arc::new(queue.staging.acquire(
        placement,
        size,
        Some(&flush),
    )?))
}

/// Which way a chunk goes; a download has a host part delivering the staged bytes.
pub(super) enum Direction {
    Upload,
    Download(HostPart),
}

/// Records one chunk's copy between `mem` and staging memory; the first chunk waits for `wait`.
pub(super) fn enqueue_chunk(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    stage: &Arc<Lease>,
    chunk: &[Piece],
    direction: Direction,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let upload = matches!(direction, Direction::Upload);
    let mut offset = 0;
    let regions: Vec<CopyRegion> = chunk
        .iter()
        .map(|p| {
            let (src_offset, dst_offset) = if upload {
                (offset, p.dev)
            } else {
                (p.dev, offset)
            };
            offset += p.len as u64;
            CopyRegion {
                src_offset,
                dst_offset,
                size: p.len as u64,
            }
        })
        .collect();
    let storage = mem.storage_on(&queue.vk)?;
    queue.enqueue(command, wait, |rec| {
        let host = match direction {
            Direction::Upload => {
                rec.copy_regions(stage, storage, &regions);
                None
            }
            Direction::Download(deliver) => {
                rec.copy_regions(storage, stage, &regions);
                Some(deliver)
            }
        };
        Ok(Recorded {
            host,
            keep: vec![mem.clone()],
        })
    })
}

/// Copies the host's memory at `src` (each piece from `src + piece.host`) into `mem`.
///
/// # Safety
/// The pieces must lie inside the application's memory at `src`.
pub(super) unsafe fn upload(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    pieces: Vec<Piece>,
    src: *const u8,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let copy = |base: *mut u8| {
        for p in &pieces {
            // SAFETY: both ranges are in bounds; the commands before this one are done.
            unsafe { copy_bytes(src.add(p.host), base.add(p.dev as usize), p.len) };
        }
    };
    if let Some(host) = mem.storage_on(&queue.vk)?.host() {
        if let Some(event) = direct(queue, command, mem, host.as_ptr(), blocking, wait, copy)? {
            return Ok(event);
        }
    }
    staged(queue, command, mem, pieces, CHUNK, wait, |chunk, size| {
        let stage = stage(queue, Placement::Upload, size)?;
        let at = stage
            .host()
            .expect("staging memory is host-visible")
            .as_ptr();
        let mut offset = 0;
        for p in chunk {
            // SAFETY: the staging buffer holds `size` bytes and no command uses it yet.
            unsafe { copy_bytes(src.add(p.host), at.add(offset), p.len) };
            offset += p.len;
        }
        Ok((stage, Direction::Upload))
    })
}

/// Copies `mem` into the application's memory at `dst` (each piece to `dst + piece.host`).
pub(super) fn download(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    pieces: Vec<Piece>,
    dst: HostPtr,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let total = pieces.iter().map(|p| p.len).sum();
    let (host, streaming) = match mem.storage_on(&queue.vk)?.host() {
        Some(host) => (Some(host.as_ptr()), false),
        None => (streamed(queue, mem, total), true),
    };
    let copy = |base: *mut u8| {
        for p in &pieces {
            let (src, to) = (
                base.wrapping_add(p.dev as usize),
                dst.get().wrapping_add(p.host),
            );
            // SAFETY: both ranges are in bounds (the spec's contract for dst); the commands
            // before this one are done.
            unsafe {
                match streaming {
                    true => stream_read(src, to, p.len),
                    false => copy_bytes(src, to, p.len),
                }
            }
        }
    };
    if let Some(base) = host {
        if let Some(event) = direct(queue, command, mem, base, blocking, wait, copy)? {
            return Ok(event);
        }
    }
    let chunk = read_chunk(total);
    staged(queue, command, mem, pieces, chunk, wait, |chunk, size| {
        let stage = stage(queue, Placement::Readback, size)?;
        let (s, pieces) = (stage.clone(), chunk.to_vec());
        let deliver: HostPart = Box::new(move || {
            let at = s.host().expect("staging memory is host-visible").as_ptr();
            let mut offset = 0;
            for p in &pieces {
                // SAFETY: the copy into the staging buffer has completed; the application's
                // memory holds the piece (the spec's contract for dst).
                unsafe { copy_bytes(at.add(offset), dst.get().add(p.host), p.len) };
                offset += p.len;
            }
            Ok(())
        });
        Ok((stage, Direction::Download(deliver)))
    })
}

/// A transfer through staging memory, in chunks of at most `chunk` bytes (staging memory stays
/// bounded): `prepare`
/// gives each chunk (and its size in bytes) its staging buffer and direction; the first chunk
/// waits for `wait`, and with several chunks each is flushed as it goes. Returns the last
/// chunk's event (an ordering-only command when there is nothing to copy).
pub(super) fn staged(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    pieces: Vec<Piece>,
    chunk: usize,
    wait: &[Arc<Event>],
    mut prepare: impl FnMut(&[Piece], usize) -> CLResult<(Arc<Lease>, Direction)>,
) -> CLResult<Arc<Event>> {
    let chunks = chunks(pieces, chunk);
    let several = chunks.len() > 1;
    let mut last = None;
    for (i, chunk) in chunks.iter().enumerate() {
        let (stage, direction) = prepare(chunk, chunk.iter().map(|p| p.len).sum())?;
        let wait = if i == 0 { wait } else { &[] };
        last = Some(enqueue_chunk(
            queue, command, mem, &stage, chunk, direction, wait,
        )?);
        if several {
            queue.flush()?;
        }
    }
    match last {
        Some(e) => Ok(e),
        None => order_only(queue, command, mem, wait, None),
    }
}
