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
use crate::vk::vk;
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

/// The geometry of a rect transfer: origins in bytes/rows/slices, region in bytes × rows ×
/// slices, and pitches (0 already replaced by the spec's defaults).
#[derive(Clone, Copy, Debug)]
pub struct Rect {
    pub origin: [usize; 3],
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

impl Rect {
    /// With the spec's defaults for 0 pitches; CL_INVALID_VALUE for pitches too small or a
    /// slice pitch that is not a multiple of the row pitch.
    pub fn new(
        origin: [usize; 3],
        region: [usize; 3],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> CLResult<Rect> {
        let row_pitch = if row_pitch == 0 { region[0] } else { row_pitch };
        check(row_pitch >= region[0], CL_INVALID_VALUE)?;
        let slice_pitch = if slice_pitch == 0 {
            region[1] * row_pitch
        } else {
            slice_pitch
        };
        check(
            slice_pitch >= region[1] * row_pitch && slice_pitch % row_pitch == 0,
            CL_INVALID_VALUE,
        )?;
        Ok(Rect {
            origin,
            row_pitch,
            slice_pitch,
        })
    }

    /// Offset of the first byte of row `y` of slice `z` of the region.
    pub fn row(&self, y: usize, z: usize) -> usize {
        (self.origin[2] + z) * self.slice_pitch
            + (self.origin[1] + y) * self.row_pitch
            + self.origin[0]
    }

    /// One past the last byte the region touches.
    pub fn end(&self, region: [usize; 3]) -> Option<usize> {
        let last = (self.origin[2] + region[2] - 1)
            .checked_mul(self.slice_pitch)?
            .checked_add((self.origin[1] + region[1] - 1).checked_mul(self.row_pitch)?)?;
        last.checked_add(self.origin[0] + region[0])
    }
}

/// Every row of a region: (offset in `a`, offset in `b`).
fn rows(a: Rect, b: Rect, region: [usize; 3]) -> impl Iterator<Item = (usize, usize)> {
    (0..region[2]).flat_map(move |z| (0..region[1]).map(move |y| (a.row(y, z), b.row(y, z))))
}

/// The packed layout of a region in a staging buffer.
fn packed(region: [usize; 3]) -> Rect {
    Rect {
        origin: [0; 3],
        row_pitch: region[0],
        slice_pitch: region[0] * region[1],
    }
}

fn copies(
    src: &Rect,
    src_base: u64,
    dst: &Rect,
    dst_base: u64,
    region: [usize; 3],
) -> Vec<vk::BufferCopy> {
    rows(*src, *dst, region)
        .map(|(s, d)| vk::BufferCopy {
            src_offset: src_base + s as u64,
            dst_offset: dst_base + d as u64,
            size: region[0] as u64,
        })
        .collect()
}

/// clEnqueueReadBufferRect: rows are copied into a packed staging buffer on the GPU, then
/// scattered into the application's memory on the completion thread.
pub fn read_rect(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    buf: Rect,
    host: Rect,
    region: [usize; 3],
    dst: HostPtr,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let size = region.iter().product::<usize>();
    let stage = staging(queue, size, Placement::Readback)?;
    let pack = packed(region);
    queue.enqueue(CL_COMMAND_READ_BUFFER_RECT, wait, |rec| {
        rec.copy_regions(
            mem.storage.raw,
            stage.raw,
            &copies(&buf, mem.at(0), &pack, 0, region),
        );
        let s = stage.clone();
        let host_part = Box::new(move || {
            let mut data = vec![0u8; size];
            // SAFETY: the copy into the staging buffer has completed.
            unsafe { s.read(0, &mut data) };
            for (p, h) in rows(pack, host, region) {
                // SAFETY: the application's memory holds the region at its pitches (the
                // spec's contract for ptr); rows do not overlap.
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr().add(p), dst.get().add(h), region[0])
                };
            }
            Ok(())
        });
        Ok(Recorded {
            host: Some(host_part),
            keep: vec![stage.clone(), mem.keep()],
        })
    })
}

/// clEnqueueWriteBufferRect: rows are gathered from the application's memory at enqueue.
pub fn write_rect(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    buf: Rect,
    host: Rect,
    region: [usize; 3],
    src: *const u8,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let size = region.iter().product::<usize>();
    let pack = packed(region);
    let mut data = vec![0u8; size];
    for (p, h) in rows(pack, host, region) {
        // SAFETY: the application's memory holds the region at its pitches.
        unsafe { std::ptr::copy_nonoverlapping(src.add(h), data.as_mut_ptr().add(p), region[0]) };
    }
    let stage = staging(queue, size, Placement::Upload)?;
    // SAFETY: the staging buffer is new and unused by the GPU.
    unsafe { stage.write(0, &data) };
    queue.enqueue(CL_COMMAND_WRITE_BUFFER_RECT, wait, |rec| {
        rec.copy_regions(
            stage.raw,
            mem.storage.raw,
            &copies(&pack, 0, &buf, mem.at(0), region),
        );
        Ok(Recorded {
            host: None,
            keep: vec![stage.clone(), mem.keep()],
        })
    })
}

/// clEnqueueCopyBufferRect.
pub fn copy_rect(
    queue: &Arc<Queue>,
    src: &Arc<Mem>,
    dst: &Arc<Mem>,
    s: Rect,
    d: Rect,
    region: [usize; 3],
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    queue.enqueue(CL_COMMAND_COPY_BUFFER_RECT, wait, |rec| {
        rec.copy_regions(
            src.storage.raw,
            dst.storage.raw,
            &copies(&s, src.at(0), &d, dst.at(0), region),
        );
        Ok(Recorded {
            host: None,
            keep: vec![src.keep(), dst.keep()],
        })
    })
}

/// Whether two rect regions of the same storage share a byte (the spec's CL_MEM_COPY_OVERLAP).
pub fn rects_overlap(a: &Rect, a_base: usize, b: &Rect, b_base: usize, region: [usize; 3]) -> bool {
    let mut spans: Vec<(usize, usize, bool)> = rows(*a, *b, region)
        .flat_map(|(x, y)| {
            [
                (a_base + x, a_base + x + region[0], false),
                (b_base + y, b_base + y + region[0], true),
            ]
        })
        .collect();
    spans.sort_unstable();
    // Sweep: a span of one side starting before the furthest end of the other side overlaps.
    let (mut end_a, mut end_b) = (0usize, 0usize);
    for (start, end, is_b) in spans {
        if (is_b && start < end_a) || (!is_b && start < end_b) {
            return true;
        }
        if is_b {
            end_b = end_b.max(end);
        } else {
            end_a = end_a.max(end);
        }
    }
    false
}
