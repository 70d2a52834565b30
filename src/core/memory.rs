//! Memory objects (buffers for now) and the buffer commands.
//!
//! Placement today: every buffer lives in host-visible memory of the context's first device
//! (zero-copy on lavapipe and integrated GPUs). Transfers go through staging copies recorded
//! on the queue, so they are ordered with kernels; maps of ordinary buffers return the mapped
//! memory itself.

use super::context::Context;
use super::error::{check, CLResult, ClError};
use super::event::Event;
use super::object::{Base, ClObject, Kind};
use super::queue::{Queue, Recorded};
use crate::cl::*;
use crate::vk::memory::{Buffer, Placement};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

#[repr(C)]
pub struct Mem {
    pub base: Base,
    pub context: Arc<Context>,
    pub mem_type: cl_mem_object_type,
    pub flags: cl_mem_flags,
    pub size: usize,
    /// The application's pointer with CL_MEM_USE_HOST_PTR (else null), as an address.
    pub host_ptr: usize,
    pub properties: Vec<cl_mem_properties>,
    pub storage: Arc<Buffer>,
    /// Offset of byte 0 of this object in `storage`.
    pub offset: u64,
    /// A sub-buffer's parent, and its origin in the parent.
    pub parent: Option<(Arc<Mem>, usize)>,
    maps: Mutex<HashMap<usize, Mapping>>,
    destructors: Mutex<Vec<Destructor>>,
}

/// A clSetMemObjectDestructorCallback callback, given the object's handle.
pub type Destructor = Box<dyn FnOnce(*mut c_void) + Send>;

impl Drop for Mem {
    /// The destructor callbacks run when the object is deleted, after its last use, in
    /// reverse order of registration.
    fn drop(&mut self) {
        let handle = self as *mut Mem as *mut c_void;
        for f in std::mem::take(&mut *self.destructors.lock())
            .into_iter()
            .rev()
        {
            f(handle);
        }
    }
}

impl ClObject for Mem {
    const KIND: Kind = Kind::Mem;
    const INVALID: i32 = CL_INVALID_MEM_OBJECT;
    fn base(&self) -> &Base {
        &self.base
    }
}

#[derive(Clone, Copy)]
struct Mapping {
    offset: usize,
    size: usize,
    flags: cl_map_flags,
    /// Outstanding maps of this address (the same region may be mapped more than once).
    count: u32,
}

/// A raw application pointer carried into a command's host part.
#[derive(Clone, Copy)]
pub struct HostPtr(pub *mut u8);

impl HostPtr {
    /// Closures must capture the whole `HostPtr` (which is Send), not its field.
    fn get(self) -> *mut u8 {
        self.0
    }
}
// SAFETY: the application guarantees the memory stays valid and untouched until the command
// completes (the spec's rule for non-blocking transfers).
unsafe impl Send for HostPtr {}

impl Mem {
    pub fn new_buffer(
        context: &Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: *mut c_void,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        let device = context.devices[0].vk()?;
        let storage = Buffer::new(&device, size as u64, Placement::Upload, "cl_mem")?;
        if flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR) != 0 {
            // SAFETY: the application passed `size` readable bytes at host_ptr; the buffer is
            // new, so no GPU work touches it.
            unsafe {
                let src = std::slice::from_raw_parts(host_ptr as *const u8, size);
                storage.write(0, src);
            }
        }
        let use_host = flags & CL_MEM_USE_HOST_PTR != 0;
        Ok(Arc::new(Mem {
            base: Base::new(Kind::Mem),
            context: context.clone(),
            mem_type: CL_MEM_OBJECT_BUFFER,
            flags,
            size,
            host_ptr: if use_host { host_ptr as usize } else { 0 },
            properties,
            storage: Arc::new(storage),
            offset: 0,
            parent: None,
            maps: Mutex::new(HashMap::new()),
            destructors: Mutex::new(vec![]),
        }))
    }

    /// clCreateSubBuffer: `size` bytes of `parent` from `origin` (checked by the caller).
    pub fn new_sub_buffer(
        parent: &Arc<Mem>,
        flags: cl_mem_flags,
        origin: usize,
        size: usize,
    ) -> Arc<Mem> {
        Arc::new(Mem {
            base: Base::new(Kind::Mem),
            context: parent.context.clone(),
            mem_type: CL_MEM_OBJECT_BUFFER,
            flags,
            size,
            host_ptr: if parent.host_ptr != 0 {
                parent.host_ptr + origin
            } else {
                0
            },
            properties: vec![],
            storage: parent.storage.clone(),
            offset: parent.offset + origin as u64,
            parent: Some((parent.clone(), origin)),
            maps: Mutex::new(HashMap::new()),
            destructors: Mutex::new(vec![]),
        })
    }

    pub fn on_destroy(&self, f: Destructor) {
        self.destructors.lock().push(f);
    }

    pub fn map_count(&self) -> u32 {
        self.maps.lock().values().map(|m| m.count).sum()
    }

    /// `[offset, offset + size)` lies inside the buffer.
    pub fn check_range(&self, offset: usize, size: usize) -> CLResult<()> {
        check(
            offset.checked_add(size).is_some_and(|end| end <= self.size),
            CL_INVALID_VALUE,
        )
    }

    fn at(&self, offset: usize) -> u64 {
        self.offset + offset as u64
    }

    fn keep(self: &Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self.clone()
    }
}

fn staging(queue: &Queue, size: usize, placement: Placement) -> CLResult<Arc<Buffer>> {
    Ok(Arc::new(Buffer::new(
        &queue.vk,
        size as u64,
        placement,
        "staging",
    )?))
}

/// clEnqueueWriteBuffer: the data is copied at enqueue, so `data` may be reused at once.
pub fn write(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    offset: usize,
    data: &[u8],
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let stage = staging(queue, data.len(), Placement::Upload)?;
    // SAFETY: the staging buffer is new and unused by the GPU.
    unsafe { stage.write(0, data) };
    queue.enqueue(CL_COMMAND_WRITE_BUFFER, wait, |rec| {
        rec.copy_buffer(
            stage.raw,
            0,
            mem.storage.raw,
            mem.at(offset),
            data.len() as u64,
        );
        Ok(Recorded {
            host: None,
            keep: vec![stage.clone(), mem.keep()],
        })
    })
}

/// clEnqueueReadBuffer: `dst` is written on the completion thread.
pub fn read(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    offset: usize,
    size: usize,
    dst: HostPtr,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let stage = staging(queue, size, Placement::Readback)?;
    queue.enqueue(CL_COMMAND_READ_BUFFER, wait, |rec| {
        rec.copy_buffer(mem.storage.raw, mem.at(offset), stage.raw, 0, size as u64);
        let s = stage.clone();
        let host = Box::new(move || {
            // SAFETY: the copy into the staging buffer has completed; the application keeps
            // `size` writable bytes at dst until the command completes.
            unsafe { s.read(0, std::slice::from_raw_parts_mut(dst.get(), size)) };
            Ok(())
        });
        Ok(Recorded {
            host: Some(host),
            keep: vec![stage.clone(), mem.keep()],
        })
    })
}

pub fn copy(
    queue: &Arc<Queue>,
    src: &Arc<Mem>,
    dst: &Arc<Mem>,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    queue.enqueue(CL_COMMAND_COPY_BUFFER, wait, |rec| {
        rec.copy_buffer(
            src.storage.raw,
            src.at(src_offset),
            dst.storage.raw,
            dst.at(dst_offset),
            size as u64,
        );
        Ok(Recorded {
            host: None,
            keep: vec![src.keep(), dst.keep()],
        })
    })
}

/// The pattern as one 32-bit word, when repeating it fills 4-byte words identically.
fn pattern_word(pattern: &[u8]) -> Option<u32> {
    let word: Vec<u8> = match pattern.len() {
        1 => vec![pattern[0]; 4],
        2 => pattern.repeat(2),
        _ if pattern.chunks(4).all(|c| c == &pattern[..4]) => pattern[..4].to_vec(),
        _ => return None,
    };
    Some(u32::from_ne_bytes(word.try_into().ok()?))
}

pub fn fill(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    pattern: &[u8],
    offset: usize,
    size: usize,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let at = mem.at(offset);
    if size == 0 {
        return queue.enqueue(CL_COMMAND_FILL_BUFFER, wait, |rec| {
            rec.marker();
            Ok(Recorded {
                host: None,
                keep: vec![],
            })
        });
    }
    if let Some(word) = pattern_word(pattern).filter(|_| at % 4 == 0 && size % 4 == 0) {
        return queue.enqueue(CL_COMMAND_FILL_BUFFER, wait, |rec| {
            rec.fill_buffer(mem.storage.raw, at, size as u64, word);
            Ok(Recorded {
                host: None,
                keep: vec![mem.keep()],
            })
        });
    }
    let data = pattern.repeat(size / pattern.len());
    let stage = staging(queue, size, Placement::Upload)?;
    // SAFETY: the staging buffer is new and unused by the GPU.
    unsafe { stage.write(0, &data) };
    queue.enqueue(CL_COMMAND_FILL_BUFFER, wait, |rec| {
        rec.copy_buffer(stage.raw, 0, mem.storage.raw, at, size as u64);
        Ok(Recorded {
            host: None,
            keep: vec![stage.clone(), mem.keep()],
        })
    })
}

/// clEnqueueMapBuffer: returns the host address and the command's event.
pub fn map(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    wait: &[Arc<Event>],
) -> CLResult<(*mut c_void, Arc<Event>)> {
    let (ptr, event) = if mem.host_ptr != 0 {
        // CL_MEM_USE_HOST_PTR: the spec says the map returns host_ptr + offset, whose
        // contents must be current once the map completes.
        let ptr = (mem.host_ptr + offset) as *mut u8;
        let refresh = flags & CL_MAP_WRITE_INVALIDATE_REGION == 0 && size > 0;
        let stage = if refresh {
            Some(staging(queue, size, Placement::Readback)?)
        } else {
            None
        };
        let event = queue.enqueue(CL_COMMAND_MAP_BUFFER, wait, |rec| {
            let Some(stage) = stage else {
                rec.marker();
                return Ok(Recorded {
                    host: None,
                    keep: vec![mem.keep()],
                });
            };
            rec.copy_buffer(mem.storage.raw, mem.at(offset), stage.raw, 0, size as u64);
            let (s, dst) = (stage.clone(), HostPtr(ptr));
            let host = Box::new(move || {
                // SAFETY: the copy has completed; host_ptr + offset has `size` bytes (the
                // application's buffer of the object's size).
                unsafe { s.read(0, std::slice::from_raw_parts_mut(dst.get(), size)) };
                Ok(())
            });
            Ok(Recorded {
                host: Some(host),
                keep: vec![stage, mem.keep()],
            })
        })?;
        (ptr as *mut c_void, event)
    } else {
        let base = mem.storage.mapped().ok_or(ClError(CL_MAP_FAILURE))?;
        // SAFETY: offset is inside the object (checked by the caller), which is inside the
        // mapped allocation.
        let ptr = unsafe { base.as_ptr().add(mem.at(offset) as usize) };
        let event = queue.enqueue(CL_COMMAND_MAP_BUFFER, wait, |rec| {
            rec.marker();
            Ok(Recorded {
                host: None,
                keep: vec![mem.keep()],
            })
        })?;
        (ptr as *mut c_void, event)
    };
    let mut maps = mem.maps.lock();
    let m = maps.entry(ptr as usize).or_insert(Mapping {
        offset,
        size,
        flags,
        count: 0,
    });
    m.count += 1;
    m.flags |= flags;
    m.size = m.size.max(size);
    Ok((ptr, event))
}

/// clEnqueueUnmapMemObject.
pub fn unmap(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    ptr: *mut c_void,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let mapping = {
        let mut maps = mem.maps.lock();
        let m = maps
            .get_mut(&(ptr as usize))
            .ok_or(ClError(CL_INVALID_VALUE))?;
        m.count -= 1;
        let m = *m;
        if m.count == 0 {
            maps.remove(&(ptr as usize));
        }
        m
    };
    let writes = mapping.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0;
    if mem.host_ptr != 0 && writes && mapping.size > 0 {
        // Write the application's memory back into the buffer.
        let stage = staging(queue, mapping.size, Placement::Upload)?;
        // SAFETY: the mapped region is the application's memory of `size` bytes, finished
        // with by the time it unmaps; the staging buffer is new.
        unsafe {
            stage.write(
                0,
                std::slice::from_raw_parts(ptr as *const u8, mapping.size),
            )
        };
        return queue.enqueue(CL_COMMAND_UNMAP_MEM_OBJECT, wait, |rec| {
            rec.copy_buffer(
                stage.raw,
                0,
                mem.storage.raw,
                mem.at(mapping.offset),
                mapping.size as u64,
            );
            Ok(Recorded {
                host: None,
                keep: vec![stage.clone(), mem.keep()],
            })
        });
    }
    queue.enqueue(CL_COMMAND_UNMAP_MEM_OBJECT, wait, |rec| {
        rec.marker();
        Ok(Recorded {
            host: None,
            keep: vec![mem.keep()],
        })
    })
}
