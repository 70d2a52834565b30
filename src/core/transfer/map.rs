//! clEnqueueMapBuffer, clEnqueueMapImage and clEnqueueUnmapMemObject: one engine for every
//! memory object, with what is mapped (`Mapped`: a byte range of a buffer or of a 1D buffer
//! image's buffer, or a region of an image) as its parameter. A map returns one of three
//! addresses:
//! - the application's memory of a CL_MEM_USE_HOST_PTR object with a device copy (the spec:
//!   host_ptr plus the region's offset), brought up to date at map and written back at unmap;
//! - the memory itself, where the host sees a buffer's memory (zero-copy);
//! - a shadow of the region in staging memory, filled at map and written back at unmap.
//!
//! CL_MAP_WRITE_INVALIDATE_REGION skips the filling, and an unmap of what was mapped only for
//! reading writes nothing: those commands are only ordered (`order_only`: complete on the
//! calling thread when nothing they follow is pending).

use super::chunk::linear;
use super::memcpy::stream_read;
use super::staged::{direct, streamed};
use super::HostPtr;
use crate::cl::*;
use crate::core::error::CLResult;
use crate::core::event::Event;
use crate::core::image::{self, Pitches};
use crate::core::memory::{Mapped, Mapping, Mem};
use crate::core::queue::{Queue, Recorded};
use crate::core::residence::{self, Access, Use};
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

/// The map of `region` of `mem` (clEnqueueMapBuffer, clEnqueueMapImage as `command`): the
/// host address and the command's event.
pub fn map(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    flags: cl_map_flags,
    region: Mapped,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<(*mut c_void, Arc<Event>)> {
    let invalidate = flags & CL_MAP_WRITE_INVALIDATE_REGION != 0;
    // A buffer with a copy per device: the map reads this device's (a write map's bytes go
    // to the unmapping queue's device).
    let uses = match region {
        Mapped::Bytes { offset, size } if !invalidate => {
            vec![Use::bytes(mem, offset, size, Access::Read)]
        }
        _ => vec![],
    };
    let wait = &*residence::before(queue, &uses, wait)?;
    let (ptr, shadow, event) = if let Some(ptr) = host_copy(mem, region)? {
        let event = if invalidate {
            order_only(queue, command, mem, wait, None)?
        } else {
            // SAFETY: the CL_MEM_USE_HOST_PTR memory holds the object for its life.
            let dst = unsafe { HostPtr::new(ptr) };
            download(queue, command, mem, region, dst, blocking, wait)?
        };
        (ptr, None, event)
    } else if let Some(ptr) = in_place(mem, region, flags)? {
        (ptr, None, order_only(queue, command, mem, wait, None)?)
    } else {
        let placement = if flags & CL_MAP_READ != 0 {
            Placement::Readback
        } else {
            Placement::Upload
        };
        let size = region_bytes(mem, region)?;
        let shadow = Arc::new(queue.staging.acquire(placement, size, None)?);
        let event = if invalidate {
            // Nothing to copy: only ordering (on the host when the queue is idle).
            order_only(queue, command, mem, wait, Some(shadow.clone()))?
        } else {
            fill_shadow(queue, command, mem, region, &shadow, blocking, wait)?
        };
        let at = shadow.host().expect("staging memory is host-visible");
        (at.as_ptr(), Some(shadow), event)
    };
    mem.add_mapping(ptr as usize, region, flags, shadow);
    mem.complete_map(ptr as usize, &event, blocking)?;
    Ok((ptr as *mut c_void, event))
}

/// clEnqueueUnmapMemObject (clEnqueueSVMUnmap as `command`): what was mapped for writing
/// goes back to the object (from a shadow, or from the application's memory of a
/// CL_MEM_USE_HOST_PTR object with a device copy).
pub fn unmap(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    ptr: *mut c_void,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let m = mem.remove_mapping(ptr as usize)?;
    let writes = m.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0;
    let uses = match m.region {
        Mapped::Bytes { offset, size } if writes => {
            vec![Use::bytes(mem, offset, size, Access::Overwrite)]
        }
        _ => vec![],
    };
    residence::around(queue, &uses, wait, |wait| {
        unmap_now(queue, command, mem, ptr, m, wait)
    })
}

fn unmap_now(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    ptr: *mut c_void,
    m: Mapping,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let writes = m.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0;
    match m.shadow {
        // A read-only mapping has nothing to copy back: only ordering (on the host when the
        // queue is idle, so that the map's copy is complete and the shadow free).
        Some(shadow) if !writes => order_only(queue, command, mem, wait, Some(shadow)),
        Some(shadow) => {
            let shadow = onto(queue, shadow)?;
            drain_shadow(queue, command, mem, m.region, shadow, wait)
        }
        None if writes && host_copy(mem, m.region)?.is_some() => {
            // SAFETY: the mapped region is the application's memory, which it has finished
            // writing when it unmaps.
            unsafe { upload(queue, command, mem, m.region, ptr as *const u8, wait) }
        }
        None => {
            if writes && mem.storage().is_ok_and(|s| s.write_combined().is_some()) {
                // The application's stores into write-combined memory are weakly ordered.
                std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            }
            order_only(queue, command, mem, wait, None)
        }
    }
}

/// A map's shadow, for an unmap on `queue`: itself, or where the map was on another device of
/// the context (a buffer with a copy per device), its bytes in staging memory of this one.
fn onto(queue: &Arc<Queue>, shadow: Arc<Lease>) -> CLResult<Arc<Lease>> {
    if Arc::ptr_eq(&shadow.device, &queue.vk) {
        return Ok(shadow);
    }
    let size = shadow.size as usize;
    let here = super::staged::stage(queue, Placement::Upload, size)?;
    let (from, to) = (shadow.host(), here.host());
    let (from, to) = from.zip(to).expect("staging memory is host-visible");
    // SAFETY: both hold `size` bytes; the map's copy into the shadow has completed (the
    // application waited for the map before writing) and no command uses `here` yet.
    unsafe { super::memcpy::copy_bytes(from.as_ptr(), to.as_ptr(), size) };
    Ok(here)
}

/// Where a map of a CL_MEM_USE_HOST_PTR object with a device copy points: the application's
/// memory at the region (the spec: "host_ptr + offset" for buffers; for images, at the
/// image's pitches). None for other objects.
fn host_copy(mem: &Mem, region: Mapped) -> CLResult<Option<*mut u8>> {
    if mem.host_ptr == 0 {
        return Ok(None);
    }
    let offset = match region {
        // Imported host memory is the memory itself (`in_place`).
        Mapped::Bytes { .. } if mem.storage()?.imported() => return Ok(None),
        Mapped::Bytes { offset, .. } => offset,
        Mapped::Texels { origin, .. } => image::host_offset(mem.image()?, origin),
    };
    Ok(Some((mem.host_ptr + offset) as *mut u8))
}

/// Where a map of bytes in memory the host sees points: host-visible memory (imported memory
/// included), or device-local memory the host maps when mapped only for writing (reads of it
/// are uncached). None where a shadow is needed.
fn in_place(mem: &Mem, region: Mapped, flags: cl_map_flags) -> CLResult<Option<*mut u8>> {
    let Mapped::Bytes { offset, .. } = region else {
        return Ok(None);
    };
    if mem.copies().is_some() {
        // Which device's copy an unmap writes is known only then.
        return Ok(None);
    }
    let storage = mem.storage()?;
    let base = storage.host().or_else(|| {
        storage
            .write_combined()
            .filter(|_| flags & CL_MAP_READ == 0)
    });
    // SAFETY: offset is inside the object (checked by the caller), which is inside the
    // buffer's memory.
    Ok(base.map(|b| unsafe { b.as_ptr().add(mem.at(offset) as usize) }))
}

fn region_bytes(mem: &Mem, region: Mapped) -> CLResult<usize> {
    Ok(match region {
        Mapped::Bytes { size, .. } => size,
        Mapped::Texels { region, .. } => image::region_bytes(mem.image()?, region),
    })
}

/// The host layout of a map of `region` of an image: the row and slice pitches
/// clEnqueueMapImage returns.
pub fn map_pitches(mem: &Mem, region: Mapped) -> CLResult<Pitches> {
    let info = mem.image()?;
    match region {
        Mapped::Bytes { size, .. } => Ok(Pitches {
            row: size,
            slice: 0,
        }),
        Mapped::Texels { .. } if mem.host_ptr != 0 => Ok(image::host_pitches(info)),
        Mapped::Texels { region, .. } => {
            let element = info.format.element_size();
            Pitches::new(info.desc.image_type, element, region, 0, 0)
        }
    }
}

/// Brings the application's memory at `dst` up to date with the object's region.
fn download(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    region: Mapped,
    dst: HostPtr,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    match region {
        Mapped::Bytes { offset, size } => {
            let pieces = linear(mem, offset, size);
            super::staged::download(queue, command, mem, pieces, dst, blocking, wait)
        }
        Mapped::Texels { origin, region } => {
            let pitches = image::host_pitches(mem.image()?);
            image::read(
                queue, command, mem, origin, region, pitches, dst, blocking, wait,
            )
        }
    }
}

/// Writes the application's memory at `src` back to the object's region.
///
/// # Safety
/// `src` holds the region (bytes, or texels at the image's pitches).
unsafe fn upload(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    region: Mapped,
    src: *const u8,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    match region {
        Mapped::Bytes { offset, size } => {
            let pieces = linear(mem, offset, size);
            // SAFETY: src holds `size` bytes (the caller's contract).
            unsafe { super::staged::upload(queue, command, mem, pieces, src, false, wait) }
        }
        Mapped::Texels { origin, region } => {
            let pitches = image::host_pitches(mem.image()?);
            // SAFETY: src holds the region at these pitches (the caller's contract).
            unsafe {
                image::write(
                    queue, command, mem, origin, region, pitches, src, false, wait,
                )
            }
        }
    }
}

/// Fills a map's shadow with the region: a small region of device-local memory the host maps
/// is read on this thread; others are copied on the queue.
fn fill_shadow(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    region: Mapped,
    shadow: &Arc<Lease>,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let (offset, size) = match region {
        Mapped::Bytes { offset, size } => (offset, size),
        Mapped::Texels { origin, region } => {
            return image::read_into(queue, command, mem, origin, region, shadow, wait)
        }
    };
    let at = shadow
        .host()
        .expect("staging memory is host-visible")
        .as_ptr();
    let read = |base: *mut u8| {
        // SAFETY: the region is inside the buffer; the shadow holds `size` bytes.
        unsafe { stream_read(base.add(mem.at(offset) as usize), at, size) }
    };
    if let Some(base) = streamed(queue, mem, size) {
        if let Some(event) = direct(queue, command, mem, base, blocking, wait, read)? {
            return Ok(event);
        }
    }
    let storage = mem.storage_on(&queue.vk)?;
    queue.enqueue(command, wait, |rec| {
        rec.copy_buffer(storage, mem.at(offset), shadow, 0, size as u64);
        Ok(Recorded {
            host: None,
            keep: vec![mem.clone()],
        })
    })
}

/// Writes a map's shadow back to the region.
fn drain_shadow(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    region: Mapped,
    shadow: Arc<Lease>,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    match region {
        Mapped::Bytes { offset, size } => {
            let storage = mem.storage_on(&queue.vk)?;
            queue.enqueue(command, wait, |rec| {
                rec.copy_buffer(&shadow, 0, storage, mem.at(offset), size as u64);
                Ok(Recorded {
                    host: None,
                    keep: vec![mem.clone()],
                })
            })
        }
        Mapped::Texels { origin, region } => {
            image::upload_staged(queue, command, mem, origin, region, shadow, wait)
        }
    }
}
