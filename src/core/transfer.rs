//! The commands on buffers: read, write, copy and fill (whole ranges and rects), map, unmap.
//!
//! Every transfer is a copy recorded on the queue, so it is ordered with kernels: uploads
//! copy the application's data into a new staging buffer at enqueue (so the application may
//! reuse it at once) and record a copy out of it; downloads record a copy into a staging
//! buffer and hand its bytes to the application on the completion thread.

use super::error::{check, CLResult};
use super::event::Event;
use super::memory::Mem;
use super::queue::{Keep, Queue, Recorded};
use crate::cl::*;
use crate::core::ClError;
use crate::vk::memory::{Buffer, Placement};
use crate::vk::vk;
use std::ffi::c_void;
use std::sync::Arc;

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

/// The geometry of one side of a rect transfer: origin (bytes, rows, slices) and pitches,
/// 0 pitches already replaced by the spec's defaults.
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

    /// A contiguous range from `offset`, as a one-row rect.
    fn linear(offset: usize, size: usize) -> Rect {
        Rect {
            origin: [offset, 0, 0],
            row_pitch: size,
            slice_pitch: size,
        }
    }

    /// The packed layout of a region (as in a staging buffer).
    fn packed(region: [usize; 3]) -> Rect {
        Rect {
            origin: [0; 3],
            row_pitch: region[0],
            slice_pitch: region[0] * region[1],
        }
    }

    /// Whether the region's rows follow each other with no gap.
    fn contiguous(&self, region: [usize; 3]) -> bool {
        (region[1] == 1 || self.row_pitch == region[0])
            && (region[2] == 1 || self.slice_pitch == region[0] * region[1])
    }

    /// Offset of the first byte of row `y` of slice `z` of the region.
    fn row(&self, y: usize, z: usize) -> usize {
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

/// One buffer copy per row of the region, between `src` (based at `src_base`) and `dst`.
fn copies(
    src: Rect,
    src_base: u64,
    dst: Rect,
    dst_base: u64,
    region: [usize; 3],
) -> Vec<vk::BufferCopy> {
    rows(src, dst, region)
        .map(|(s, d)| vk::BufferCopy {
            src_offset: src_base + s as u64,
            dst_offset: dst_base + d as u64,
            size: region[0] as u64,
        })
        .collect()
}

fn staging(queue: &Queue, size: usize, placement: Placement) -> CLResult<Arc<Buffer>> {
    Ok(Arc::new(Buffer::new(
        &queue.vk,
        size as u64,
        placement,
        "staging",
    )?))
}

fn keep(mems: &[&Arc<Mem>], extra: Option<Arc<Buffer>>) -> Keep {
    let mut k: Keep = mems
        .iter()
        .map(|&m| m.clone() as Arc<dyn std::any::Any + Send + Sync>)
        .collect();
    k.extend(extra.map(|b| b as Arc<dyn std::any::Any + Send + Sync>));
    k
}

/// Records a copy of `data` (packed as `region`) into `dst`'s rect `to`.
fn upload(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    to: Rect,
    region: [usize; 3],
    data: &[u8],
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let stage = staging(queue, data.len(), Placement::Upload)?;
    // SAFETY: the staging buffer is new and unused by the GPU.
    unsafe { stage.write(0, data) };
    queue.enqueue(command, wait, |rec| {
        rec.copy_regions(
            stage.raw,
            mem.storage.raw,
            &copies(Rect::packed(region), 0, to, mem.at(0), region),
        );
        Ok(Recorded {
            host: None,
            keep: keep(&[mem], Some(stage.clone())),
        })
    })
}

/// Records a copy of `mem`'s rect `from` into the application's memory at `dst` laid out as
/// `host`; the bytes land there on the completion thread.
fn download(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    from: Rect,
    host: Rect,
    region: [usize; 3],
    dst: HostPtr,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let size: usize = region.iter().product();
    let stage = staging(queue, size, Placement::Readback)?;
    queue.enqueue(command, wait, |rec| {
        let packed = Rect::packed(region);
        rec.copy_regions(
            mem.storage.raw,
            stage.raw,
            &copies(from, mem.at(0), packed, 0, region),
        );
        let s = stage.clone();
        let deliver = Box::new(move || {
            // SAFETY (both arms): the copy into the staging buffer has completed; the
            // application's memory at dst holds the region laid out as `host` (the spec's
            // contract for the pointer), and rows do not overlap.
            if host.contiguous(region) {
                unsafe {
                    s.read(
                        0,
                        std::slice::from_raw_parts_mut(dst.get().add(host.row(0, 0)), size),
                    )
                };
            } else {
                let mut data = vec![0u8; size];
                unsafe { s.read(0, &mut data) };
                for (p, h) in rows(packed, host, region) {
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            data.as_ptr().add(p),
                            dst.get().add(h),
                            region[0],
                        )
                    };
                }
            }
            Ok(())
        });
        Ok(Recorded {
            host: Some(deliver),
            keep: keep(&[mem], Some(stage.clone())),
        })
    })
}

/// clEnqueueWriteBufferRect: the data is read at enqueue.
///
/// # Safety
/// `src` must hold the region laid out as `host` (the spec's contract for the pointer).
pub unsafe fn write(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    to: Rect,
    host: Rect,
    region: [usize; 3],
    src: *const u8,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let size: usize = region.iter().product();
    let command = CL_COMMAND_WRITE_BUFFER_RECT;
    if host.contiguous(region) {
        // SAFETY: the application's memory holds `size` bytes from the region's start.
        let data = unsafe { std::slice::from_raw_parts(src.add(host.row(0, 0)), size) };
        return upload(queue, command, mem, to, region, data, wait);
    }
    let mut data = vec![0u8; size];
    for (p, h) in rows(Rect::packed(region), host, region) {
        // SAFETY: the application's memory holds the region at its pitches.
        unsafe { std::ptr::copy_nonoverlapping(src.add(h), data.as_mut_ptr().add(p), region[0]) };
    }
    upload(queue, command, mem, to, region, &data, wait)
}

/// clEnqueueWriteBuffer.
pub fn write_linear(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    offset: usize,
    data: &[u8],
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    upload(
        queue,
        CL_COMMAND_WRITE_BUFFER,
        mem,
        Rect::linear(offset, data.len()),
        [data.len(), 1, 1],
        data,
        wait,
    )
}

/// clEnqueueReadBufferRect.
pub fn read(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    from: Rect,
    host: Rect,
    region: [usize; 3],
    dst: HostPtr,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    download(
        queue,
        CL_COMMAND_READ_BUFFER_RECT,
        mem,
        from,
        host,
        region,
        dst,
        wait,
    )
}

/// clEnqueueReadBuffer.
pub fn read_linear(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    offset: usize,
    size: usize,
    dst: HostPtr,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    download(
        queue,
        CL_COMMAND_READ_BUFFER,
        mem,
        Rect::linear(offset, size),
        Rect::linear(0, size),
        [size, 1, 1],
        dst,
        wait,
    )
}

/// clEnqueueCopyBuffer / clEnqueueCopyBufferRect.
pub fn copy(
    queue: &Arc<Queue>,
    command: cl_command_type,
    src: &Arc<Mem>,
    dst: &Arc<Mem>,
    from: Rect,
    to: Rect,
    region: [usize; 3],
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    queue.enqueue(command, wait, |rec| {
        rec.copy_regions(
            src.storage.raw,
            dst.storage.raw,
            &copies(from, src.at(0), to, dst.at(0), region),
        );
        Ok(Recorded {
            host: None,
            keep: keep(&[src, dst], None),
        })
    })
}

/// clEnqueueCopyBuffer.
pub fn copy_linear(
    queue: &Arc<Queue>,
    src: &Arc<Mem>,
    dst: &Arc<Mem>,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    copy(
        queue,
        CL_COMMAND_COPY_BUFFER,
        src,
        dst,
        Rect::linear(src_offset, size),
        Rect::linear(dst_offset, size),
        [size, 1, 1],
        wait,
    )
}

/// Whether two rects of the same storage share a byte (the spec's CL_MEM_COPY_OVERLAP).
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
        return queue.enqueue(CL_COMMAND_FILL_BUFFER, wait, |rec| {
            rec.fill_buffer(mem.storage.raw, at, size as u64, word);
            Ok(Recorded {
                host: None,
                keep: keep(&[mem], None),
            })
        });
    }
    let data = pattern.repeat(size / pattern.len());
    upload(
        queue,
        CL_COMMAND_FILL_BUFFER,
        mem,
        Rect::linear(offset, size),
        [size, 1, 1],
        &data,
        wait,
    )
}

/// clEnqueueMapBuffer: the host address and the command's event.
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
        // contents must be current once the map completes (unless the region is invalidated).
        let ptr = (mem.host_ptr + offset) as *mut u8;
        let event = if flags & CL_MAP_WRITE_INVALIDATE_REGION != 0 {
            queue.enqueue_marker(CL_COMMAND_MAP_BUFFER, wait, keep(&[mem], None))?
        } else {
            let r = Rect::linear(offset, size);
            download(
                queue,
                CL_COMMAND_MAP_BUFFER,
                mem,
                r,
                Rect::linear(0, size),
                [size, 1, 1],
                HostPtr(ptr),
                wait,
            )?
        };
        (ptr, event)
    } else {
        let base = mem.storage.mapped().ok_or(ClError(CL_MAP_FAILURE))?;
        // SAFETY: offset is inside the object (checked by the caller), which is inside the
        // mapped allocation.
        let ptr = unsafe { base.as_ptr().add(mem.at(offset) as usize) };
        (
            ptr,
            queue.enqueue_marker(CL_COMMAND_MAP_BUFFER, wait, keep(&[mem], None))?,
        )
    };
    mem.add_mapping(ptr as usize, offset, size, flags);
    Ok((ptr as *mut c_void, event))
}

/// clEnqueueUnmapMemObject: a CL_MEM_USE_HOST_PTR buffer mapped for writing gets the
/// application's memory back.
pub fn unmap(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    ptr: *mut c_void,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let m = mem.remove_mapping(ptr as usize)?;
    let writes = m.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0;
    if mem.host_ptr != 0 && writes {
        // SAFETY: the mapped region is the application's memory of `size` bytes, which it has
        // finished writing when it unmaps.
        let data = unsafe { std::slice::from_raw_parts(ptr as *const u8, m.size) };
        return upload(
            queue,
            CL_COMMAND_UNMAP_MEM_OBJECT,
            mem,
            Rect::linear(m.offset, m.size),
            [m.size, 1, 1],
            data,
            wait,
        );
    }
    queue.enqueue_marker(CL_COMMAND_UNMAP_MEM_OBJECT, wait, keep(&[mem], None))
}
