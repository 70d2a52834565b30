//! clEnqueueMapBuffer and clEnqueueUnmapMemObject on buffers (and 1D buffer images).

use super::chunk::linear;
use super::memcpy::stream_read;
use super::staged::{direct, download, streamed, upload};
use super::HostPtr;
use crate::cl::*;
use crate::core::error::{CLResult, ClError};
use crate::core::event::Event;
use crate::core::memory::{Mapped, Mem};
use crate::core::queue::{Queue, Recorded};
use crate::vk::memory::Placement;
use crate::vk::staging::Lease;
use std::ffi::c_void;
use std::sync::Arc;

/// A command with nothing to do but be ordered (zero-copy maps and unmaps): complete at once
/// when nothing it follows is pending, else a marker keeping `mem` (and `extra`) alive.
pub(super) fn order_only(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    wait: &[Arc<Event>],
    extra: Option<Arc<Lease>>,
) -> CLResult<Arc<Event>> {
    if wait.iter().all(|e| e.status() == CL_COMPLETE as cl_int) {
        if let Some(event) = queue.run_on_host(command, || {})? {
            return Ok(event);
        }
    }
    queue.enqueue(command, wait, |rec| {
        rec.marker();
        if let Some(lease) = &extra {
            rec.hold(lease);
        }
        Ok(Recorded {
            host: None,
            keep: vec![mem.clone()],
        })
    })
}

/// clEnqueueMapBuffer (and the map of a 1D buffer image, as `command`): the host address and
/// the command's event.
#[allow(clippy::too_many_arguments)]
pub fn map(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<(*mut c_void, Arc<Event>)> {
    let invalidate = flags & CL_MAP_WRITE_INVALIDATE_REGION != 0;
    let (ptr, shadow, event) = if mem.host_ptr != 0 && !mem.storage.imported() {
        // CL_MEM_USE_HOST_PTR with a device copy: the spec says the map returns host_ptr +
        // offset, whose contents must be current once the map completes (unless the region
        // is invalidated).
        let ptr = (mem.host_ptr + offset) as *mut u8;
        let event = if invalidate {
            order_only(queue, command, mem, wait, None)?
        } else {
            let pieces = linear(mem, offset, size);
            // SAFETY: the CL_MEM_USE_HOST_PTR memory holds the buffer for its life.
            let dst = unsafe { HostPtr::new(ptr) };
            download(queue, command, mem, pieces, dst, blocking, wait)?
        };
        (ptr, None, event)
    } else if let Some(base) = mem.storage.host().or_else(|| {
        // Device-local memory the host maps: the memory itself when mapped only for writing.
        mem.storage
            .write_combined()
            .filter(|_| flags & CL_MAP_READ == 0)
    }) {
        // Host-visible memory (imported memory included): the memory itself.
        // SAFETY: offset is inside the object (checked by the caller), which is inside the
        // buffer's memory.
        let ptr = unsafe { base.as_ptr().add(mem.at(offset) as usize) };
        let event = order_only(queue, command, mem, wait, None)?;
        (ptr, None, event)
    } else {
        // Device-local memory: a host-visible shadow, held until the unmap.
        let placement = if flags & CL_MAP_READ != 0 {
            Placement::Readback
        } else {
            Placement::Upload
        };
        let shadow = Arc::new(queue.staging.acquire(placement, size, None)?);
        let at = shadow
            .host()
            .expect("staging memory is host-visible")
            .as_ptr();
        // A small region of device-local memory the host maps: read on this thread.
        let read = |base: *mut u8| {
            // SAFETY: the region is inside the buffer; the shadow holds `size` bytes.
            unsafe { stream_read(base.add(mem.at(offset) as usize), at, size) }
        };
        let streamed = match streamed(mem, size).filter(|_| !invalidate) {
            Some(base) => direct(queue, command, mem, base, blocking, wait, read)?,
            None => None,
        };
        let event = if let Some(event) = streamed {
            event
        } else if invalidate {
            // Nothing to copy: only ordering (on the host when the queue is idle).
            order_only(queue, command, mem, wait, Some(shadow.clone()))?
        } else {
            let storage = mem.storage_on(&queue.vk)?;
            queue.enqueue(command, wait, |rec| {
                rec.copy_buffer(storage, mem.at(offset), &shadow, 0, size as u64);
                Ok(Recorded {
                    host: None,
                    keep: vec![mem.clone()],
                })
            })?
        };
        (at, Some(shadow), event)
    };
    mem.add_mapping(ptr as usize, Mapped::Bytes { offset, size }, flags, shadow);
    mem.complete_map(ptr as usize, &event, blocking)?;
    Ok((ptr as *mut c_void, event))
}

/// clEnqueueUnmapMemObject: what was mapped for writing goes back to the buffer (from a
/// shadow, or from the application's memory of a CL_MEM_USE_HOST_PTR buffer with a device
/// copy).
pub fn unmap(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    ptr: *mut c_void,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let m = mem.remove_mapping(ptr as usize)?;
    let Mapped::Bytes { offset, size } = m.region else {
        return Err(ClError(CL_INVALID_VALUE));
    };
    let writes = m.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0;
    let command = CL_COMMAND_UNMAP_MEM_OBJECT;
    if let Some(shadow) = m.shadow {
        if !writes {
            // A read-only mapping has nothing to copy back: only ordering (on the host when
            // the queue is idle, so that the map's copy is complete and the shadow free).
            return order_only(queue, command, mem, wait, Some(shadow));
        }
        let storage = mem.storage_on(&queue.vk)?;
        return queue.enqueue(command, wait, |rec| {
            rec.copy_buffer(&shadow, 0, storage, mem.at(offset), size as u64);
            Ok(Recorded {
                host: None,
                keep: vec![mem.clone()],
            })
        });
    }
    if writes && mem.storage.write_combined().is_some() {
        // The application's stores into write-combined memory are weakly ordered.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
    if mem.host_ptr != 0 && !mem.storage.imported() && writes {
        let pieces = linear(mem, offset, size);
        // SAFETY: the mapped region is the application's memory of `size` bytes, which it has
        // finished writing when it unmaps.
        return unsafe { upload(queue, command, mem, pieces, ptr as *const u8, false, wait) };
    }
    order_only(queue, command, mem, wait, None)
}
