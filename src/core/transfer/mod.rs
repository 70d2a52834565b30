//! The commands on buffers: read, write, copy and fill (whole ranges and rects), map, unmap.
//!
//! A host transfer takes one of two paths (docs/MEMORY.md):
//! - direct: the buffer's memory is host-visible (unified memory, CL_MEM_ALLOC_HOST_PTR,
//!   imported host memory) and the command may run on the calling thread, because the call
//!   blocks or nothing it must follow is pending: a memcpy once the earlier commands are done.
//!   Device-local memory the host maps (resizable BAR) takes it for reads of up to
//!   `STREAM_READ` bytes (streaming loads: the host's reads of it are uncached).
//! - staged: copies recorded on the queue between the buffer and staging memory from the
//!   queue's pool, in chunks of at most `CHUNK` bytes, so they are ordered with kernels. Uploads
//!   fill the staging memory at enqueue (the application may reuse its memory at once);
//!   downloads copy out of it on the completion thread. A transfer of several chunks submits
//!   each as it is recorded, so the GPU's copy of one chunk overlaps the host's of another.
//!
//! Maps of host-visible memory return it (zero-copy); maps of device-local memory return a
//! host-visible shadow filled by a copy (none for CL_MAP_WRITE_INVALIDATE_REGION) and copied
//! back at unmap when mapped for writing. CL_MEM_USE_HOST_PTR buffers with a device copy map to
//! the application's memory, brought up to date at map and copied back at unmap. Images map
//! through the same engine (`map`), with an image region for the byte range.
//!
//! By job: `rect` (geometry), `chunk` (pieces and chunks), `memcpy` (the host's copies),
//! `staged` (the direct and staged paths), `map` (map and unmap of every memory object),
//! `fill`.

mod chunk;
mod fill;
mod map;
mod memcpy;
mod rect;
mod staged;

pub use fill::{fill, record_fill};
pub use map::{map, map_pitches, unmap};
pub use rect::{rects_overlap, Rect};
pub(crate) use staged::stage;

use super::error::CLResult;
use super::event::Event;
use super::internal;
use super::kernel::{self, ArgValue, NdRange};
use super::memory::Mem;
use super::queue::{Queue, Recorded};
use super::residence::{around, Access, Use};
use crate::cl::*;
use crate::vk::device::Device as VkDevice;
use crate::vk::memory::Buffer;
use crate::vk::submit::{CopyRegion, Recorder};
use chunk::{linear, pieces};
use rect::copies;
use staged::{download, upload};
use std::sync::Arc;

/// The application's memory a download writes, carried into the command's host part. Made
/// only under the contract of `new`, so the commands taking one can be safe functions.
#[derive(Clone, Copy)]
pub struct HostPtr(*mut u8);

impl HostPtr {
    /// # Safety
    /// `ptr` is valid for writes of every byte the command it is given to writes (its region
    /// at its pitches) from the call until the command completes, and nothing else touches
    /// those bytes meanwhile (the spec's rule for the host memory of non-blocking transfers).
    pub unsafe fn new(ptr: *mut u8) -> HostPtr {
        HostPtr(ptr)
    }

    /// Closures must capture the whole `HostPtr` (which is Send), not its field.
    pub fn get(self) -> *mut u8 {
        self.0
    }
}

// SAFETY: the memory stays valid and untouched until the command completes (`new`'s
// contract), whichever thread completes it.
unsafe impl Send for HostPtr {}

/// clEnqueueWriteBufferRect.
///
/// # Safety
/// `src` must hold the region laid out as `host` (the spec's contract for the pointer).
#[allow(clippy::too_many_arguments)]
pub unsafe fn write(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    to: Rect,
    host: Rect,
    region: [usize; 3],
    src: *const u8,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let pieces = pieces(mem, to, host, region);
    let command = CL_COMMAND_WRITE_BUFFER_RECT;
    let (start, len) = to.span(region);
    let uses = [Use::bytes(mem, start, len, Access::Write)];
    around(queue, &uses, wait, |wait| {
        // SAFETY: the pieces lie in the region at the host's pitches (caller's contract).
        unsafe { upload(queue, command, mem, pieces, src, blocking, wait) }
    })
}

/// clEnqueueReadBufferRect.
#[allow(clippy::too_many_arguments)]
pub fn read(
    queue: &Arc<Queue>,
    mem: &Arc<Mem>,
    from: Rect,
    host: Rect,
    region: [usize; 3],
    dst: HostPtr,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let pieces = pieces(mem, from, host, region);
    let command = CL_COMMAND_READ_BUFFER_RECT;
    let (start, len) = from.span(region);
    let uses = [Use::bytes(mem, start, len, Access::Read)];
    around(queue, &uses, wait, |wait| {
        download(queue, command, mem, pieces, dst, blocking, wait)
    })
}

/// clEnqueueReadBuffer (and a 1D buffer image's read), reported as `command`.
#[allow(clippy::too_many_arguments)]
pub fn download_linear(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    offset: usize,
    size: usize,
    dst: HostPtr,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let pieces = linear(mem, offset, size);
    let uses = [Use::bytes(mem, offset, size, Access::Read)];
    around(queue, &uses, wait, |wait| {
        download(queue, command, mem, pieces, dst, blocking, wait)
    })
}

/// clEnqueueWriteBuffer (and a 1D buffer image's write), reported as `command`.
pub fn upload_linear(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    offset: usize,
    data: &[u8],
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let pieces = linear(mem, offset, data.len());
    let uses = [Use::bytes(mem, offset, data.len(), Access::Overwrite)];
    around(queue, &uses, wait, |wait| {
        // SAFETY: the one piece is `data`.
        unsafe { upload(queue, command, mem, pieces, data.as_ptr(), blocking, wait) }
    })
}

/// clEnqueueCopyBuffer / clEnqueueCopyBufferRect.
#[allow(clippy::too_many_arguments)]
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
    let copy = Copy::new(&queue.vk, src, dst, from, to, region)?;
    let ((src_start, src_len), (dst_start, dst_len)) = (from.span(region), to.span(region));
    let uses = [
        Use::bytes(src, src_start, src_len, Access::Read),
        Use::bytes(dst, dst_start, dst_len, Access::Write),
    ];
    around(queue, &uses, wait, |wait| {
        queue.enqueue(command, wait, |rec| Ok(copy.record(rec)))
    })
}

/// A copy between buffers (a range or a rect), ready to record.
pub struct Copy<'a> {
    src: &'a Arc<Mem>,
    dst: &'a Arc<Mem>,
    storage: (&'a Arc<Buffer>, &'a Arc<Buffer>),
    regions: Vec<CopyRegion>,
}

impl<'a> Copy<'a> {
    pub fn new(
        vk: &Arc<VkDevice>,
        src: &'a Arc<Mem>,
        dst: &'a Arc<Mem>,
        from: Rect,
        to: Rect,
        region: [usize; 3],
    ) -> CLResult<Copy<'a>> {
        Ok(Copy {
            src,
            dst,
            storage: (src.storage_on(vk)?, dst.storage_on(vk)?),
            regions: copies(from, src.at(0), to, dst.at(0), region),
        })
    }

    /// A copy of `size` bytes between offsets.
    pub fn linear(
        vk: &Arc<VkDevice>,
        src: &'a Arc<Mem>,
        dst: &'a Arc<Mem>,
        src_offset: usize,
        dst_offset: usize,
        size: usize,
    ) -> CLResult<Copy<'a>> {
        let (from, to) = (
            Rect::linear(src_offset, size),
            Rect::linear(dst_offset, size),
        );
        Copy::new(vk, src, dst, from, to, [size, 1, 1])
    }

    pub fn record(self, rec: &mut Recorder) -> Recorded {
        rec.copy_regions(self.storage.0, self.storage.1, &self.regions);
        Recorded {
            host: None,
            keep: vec![self.src.clone(), self.dst.clone()],
        }
    }
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
    let copy = LinearCopy::new(queue, src, dst, src_offset, dst_offset, size)?;
    let uses = [
        Use::bytes(src, src_offset, size, Access::Read),
        Use::bytes(dst, dst_offset, size, Access::Overwrite),
    ];
    around(queue, &uses, wait, |wait| {
        queue.enqueue(CL_COMMAND_COPY_BUFFER, wait, |rec| copy.record(rec))
    })
}

/// A copy of `size` bytes between buffers, ready to record: by the copy kernel where the
/// device's workarounds say so (`copy_kernel`), else by transfer commands. clEnqueueCopyBuffer
/// and clCommandCopyBufferKHR both take it.
pub enum LinearCopy<'a> {
    /// The copy kernel's launch (None: nothing to launch).
    Kernel(Option<kernel::Prepared>),
    Regions(Copy<'a>),
}

impl<'a> LinearCopy<'a> {
    pub fn new(
        queue: &Arc<Queue>,
        src: &'a Arc<Mem>,
        dst: &'a Arc<Mem>,
        src_offset: usize,
        dst_offset: usize,
        size: usize,
    ) -> CLResult<LinearCopy<'a>> {
        match copy_kernel(queue, src, dst, src_offset, dst_offset, size) {
            Some((k, args, nd)) => Ok(LinearCopy::Kernel(kernel::prepare(queue, &k, args, &nd)?)),
            None => Ok(LinearCopy::Regions(Copy::linear(
                &queue.vk, src, dst, src_offset, dst_offset, size,
            )?)),
        }
    }

    pub fn record(self, rec: &mut Recorder) -> CLResult<Recorded> {
        match self {
            LinearCopy::Kernel(Some(launch)) => launch.record(rec),
            LinearCopy::Kernel(None) => {
                rec.marker();
                Ok(Recorded {
                    host: None,
                    keep: vec![],
                })
            }
            LinearCopy::Regions(copy) => Ok(copy.record(rec)),
        }
    }
}

/// The launch of the copy kernel (`internal::copy16`) doing a large copy between device-local
/// buffers, where the device's workarounds say so (NVIDIA: `Workarounds::copy_by_kernel`).
/// Needs 16-byte elements, a work-group size of at least 64 dividing the count, and both
/// ranges at offsets the device can bind; None otherwise (and where the kernel cannot be built).
fn copy_kernel(
    queue: &Arc<Queue>,
    src: &Arc<Mem>,
    dst: &Arc<Mem>,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
) -> Option<(Arc<kernel::Kernel>, Vec<ArgValue>, NdRange)> {
    const MIN_SIZE: usize = 1 << 20;
    let align = queue
        .device
        .caps
        .limits
        .min_storage_buffer_offset_alignment
        .max(16);
    let bindable = |m: &Arc<Mem>, offset: usize| {
        m.storage_on(&queue.vk).is_ok_and(|s| s.host().is_none()) && m.at(offset) % align == 0
    };
    if !queue.device.caps.workarounds.copy_by_kernel
        || size < MIN_SIZE
        || size % (16 * 64) != 0
        || !bindable(src, src_offset)
        || !bindable(dst, dst_offset)
    {
        return None;
    }
    let shared = internal::copy16(&queue.device)?;
    let view = |m: &Arc<Mem>, offset| {
        ArgValue::Mem(Some(Mem::new_sub_buffer(
            m,
            CL_MEM_READ_WRITE,
            offset,
            size,
        )))
    };
    let args = vec![view(dst, dst_offset), view(src, src_offset)];
    let nd = NdRange {
        work_dim: 1,
        offset: [0; 3],
        global: [size / 16, 1, 1],
        local: None,
    };
    Some((shared, args, nd))
}
