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
//! the application's memory, brought up to date at map and copied back at unmap.

use super::error::{check, CLResult};
use super::event::Event;
use super::internal;
use super::kernel::{self, ArgValue, NdRange};
use super::memory::Mem;
use super::queue::{HostPart, Queue, Recorded};
use crate::cl::*;
use crate::vk::memory::Placement;
use crate::vk::staging::{Lease, CHUNK};
use crate::vk::submit::CopyRegion;
use std::ffi::c_void;
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
) -> Vec<CopyRegion> {
    rows(src, dst, region)
        .map(|(s, d)| CopyRegion {
            src_offset: src_base + s as u64,
            dst_offset: dst_base + d as u64,
            size: region[0] as u64,
        })
        .collect()
}

/// One contiguous part of a host transfer: `len` bytes at `dev` in the buffer's storage and
/// at `host` from the application's pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    dev: u64,
    host: usize,
    len: usize,
}

/// The pieces of a transfer between `mem`'s rect `dev` and the host's rect `host`: one per
/// row, or one for the whole region where both sides are contiguous.
fn pieces(mem: &Mem, dev: Rect, host: Rect, region: [usize; 3]) -> Vec<Piece> {
    let base = mem.at(0);
    if dev.contiguous(region) && host.contiguous(region) {
        return vec![Piece {
            dev: base + dev.row(0, 0) as u64,
            host: host.row(0, 0),
            len: region.iter().product(),
        }];
    }
    rows(dev, host, region)
        .map(|(d, h)| Piece {
            dev: base + d as u64,
            host: h,
            len: region[0],
        })
        .collect()
}

/// The one piece of a contiguous transfer of `size` bytes at `offset` in `mem`, from host
/// offset 0.
fn linear(mem: &Mem, offset: usize, size: usize) -> Vec<Piece> {
    vec![Piece {
        dev: mem.at(offset),
        host: 0,
        len: size,
    }]
}

/// Groups pieces into chunks of at most `max` bytes, splitting longer pieces.
fn chunks(pieces: Vec<Piece>, max: usize) -> Vec<Vec<Piece>> {
    let mut out: Vec<Vec<Piece>> = vec![];
    let mut used = max;
    for mut p in pieces {
        while p.len > 0 {
            if used == max {
                out.push(vec![]);
                used = 0;
            }
            let len = p.len.min(max - used);
            out.last_mut()
                .expect("pushed above")
                .push(Piece { len, ..p });
            used += len;
            p.dev += len as u64;
            p.host += len;
            p.len -= len;
        }
    }
    out
}

/// Reads of device-local memory the host maps (write-combined) up to this size are streaming
/// loads on the calling thread (H200: 4 KiB in 4 µs, 16 KiB in 24 µs; a GPU copy and its round
/// trip take about 20 µs). (Writes of it stay staged: a staged write returns once its data is
/// in staging memory, which on the H200 was as fast as writing the buffer directly.)
const STREAM_READ: usize = 8 << 10;

/// The address of `mem`'s write-combined memory where a read of `len` bytes of it is streamed
/// on the calling thread (see `STREAM_READ`).
fn streamed(mem: &Mem, len: usize) -> Option<*mut u8> {
    let mapped = mem.storage.write_combined()?;
    (len <= STREAM_READ && streaming_loads()).then_some(mapped.as_ptr())
}

/// Runs `copy` with the buffer's host address `base` on this thread when nothing the command
/// must follow is pending (a blocking call first waits for the commands before it). The queue
/// stays locked during the copy, so no later command can overtake it. None: the command must
/// be recorded (staged).
fn direct(
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

/// A command with nothing to do but be ordered (zero-copy maps and unmaps): complete at once
/// when nothing it follows is pending, else a marker keeping `mem` (and `extra`) alive.
fn order_only(
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

/// Staging memory of the queue's pool; while the pool is exhausted, earlier commands are
/// submitted so that theirs comes back.
pub(super) fn stage(queue: &Arc<Queue>, placement: Placement, size: usize) -> CLResult<Arc<Lease>> {
    let flush = || {
        let _ = queue.flush();
    };
    Ok(Arc::new(queue.staging.acquire(
        placement,
        size,
        Some(&flush),
    )?))
}

/// Copies `len` bytes from `src` to `dst`, large copies split over a few threads: one core's
/// `memcpy` reaches neither the host's memory bandwidth nor PCIe's (a part that cannot get a
/// thread is copied on this one).
///
/// # Safety
/// As `std::ptr::copy_nonoverlapping`.
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    const PART: usize = 4 << 20;
    // available_parallelism reads cgroup files: once per process, and never for small copies.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let parts = if len < 2 * PART {
        1
    } else {
        let threads = *THREADS
            .get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(4)));
        (len / PART).clamp(1, threads)
    };
    if parts == 1 {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        return;
    }
    let step = len.div_ceil(parts);
    let (s, d) = (src as usize, dst as usize);
    let part = move |i: usize| {
        let at = i * step;
        let n = step.min(len - at);
        // SAFETY: the parts are disjoint pieces of the caller's ranges.
        unsafe { std::ptr::copy_nonoverlapping((s + at) as *const u8, (d + at) as *mut u8, n) };
    };
    std::thread::scope(|scope| {
        for i in 1..parts {
            let spawned = std::thread::Builder::new().spawn_scoped(scope, move || part(i));
            if spawned.is_err() {
                part(i);
            }
        }
        part(0);
    });
}

/// Whether `stream_read` can read write-combined memory fast (x86-64 with AVX2).
fn streaming_loads() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Copies `len` bytes from write-combined memory at `src` with streaming (non-temporal) loads
/// of the aligned 32-byte blocks holding them: plain loads of such memory are uncached, one
/// bus transaction each (H200's BAR: 0.03 GB/s by memcpy, 1 GB/s this way, 4 KiB pieces).
///
/// # Safety
/// As `std::ptr::copy_nonoverlapping`; the 32-byte blocks holding the source range must be
/// readable (a mapping is whole pages); `streaming_loads()` must be true.
unsafe fn stream_read(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m256i, _mm256_storeu_si256, _mm256_stream_load_si256};
        /// Copies the part of [s, e) in the aligned block at `block` to `dst + (part - s)`.
        #[target_feature(enable = "avx2")]
        unsafe fn partial(block: usize, s: usize, e: usize, dst: *mut u8) {
            let mut tmp = [0u8; 32];
            // SAFETY: an aligned block of the mapping (caller's contract); tmp is 32 bytes.
            unsafe {
                let v = _mm256_stream_load_si256(block as *const __m256i);
                _mm256_storeu_si256(tmp.as_mut_ptr().cast(), v);
            }
            let (from, to) = (s.max(block), e.min(block + 32));
            // SAFETY: [from, to) is in the source range, so its image in dst is in bounds.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    tmp.as_ptr().add(from - block),
                    dst.add(from - s),
                    to - from,
                )
            };
        }
        #[target_feature(enable = "avx2")]
        unsafe fn blocks(src: *const u8, dst: *mut u8, len: usize) {
            let (s, e) = (src as usize, src as usize + len);
            let load = |at: usize| {
                // SAFETY: an aligned block inside the source range.
                unsafe { _mm256_stream_load_si256(at as *const __m256i) }
            };
            // SAFETY (stores): each block lies inside the source range, so its image in dst does.
            let store = |at: usize, v| unsafe { _mm256_storeu_si256(dst.add(at - s).cast(), v) };
            let mut at = s & !31;
            if len > 0 && at != s {
                // SAFETY: the block holding the first byte.
                unsafe { partial(at, s, e, dst) };
                at += 32;
            }
            // Four loads in flight at a time: each is a bus transaction.
            while at + 128 <= e {
                let v = [load(at), load(at + 32), load(at + 64), load(at + 96)];
                for (i, v) in v.into_iter().enumerate() {
                    store(at + 32 * i, v);
                }
                at += 128;
            }
            while at + 32 <= e {
                store(at, load(at));
                at += 32;
            }
            if at < e {
                // SAFETY: the block holding the last byte.
                unsafe { partial(at, s, e, dst) };
            }
        }
        // The GPU's writes were made visible before the caller got here; streaming loads are
        // weakly ordered, so fence them after whatever told us so.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: the caller's contract (AVX2 checked by streaming_loads()).
        unsafe { blocks(src, dst, len) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// Which way a chunk goes; a download has a host part delivering the staged bytes.
enum Direction {
    Upload,
    Download(HostPart),
}

/// Records one chunk's copy between `mem` and staging memory; the first chunk waits for `wait`.
fn enqueue_chunk(
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
unsafe fn upload(
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
    if let Some(host) = mem.storage.host() {
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
fn download(
    queue: &Arc<Queue>,
    command: cl_command_type,
    mem: &Arc<Mem>,
    pieces: Vec<Piece>,
    dst: HostPtr,
    blocking: bool,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let total = pieces.iter().map(|p| p.len).sum();
    let (host, streaming) = match mem.storage.host() {
        Some(host) => (Some(host.as_ptr()), false),
        None => (streamed(mem, total), true),
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

/// The chunk size of a staged read of `total` bytes. Below 8 MiB, where the host copies out of
/// staging memory on one thread (`copy_bytes`), a quarter of it, at least 512 KiB: the host's
/// copy of one chunk overlaps the GPU's copy of the next (H200, a 4 MiB read: 9.6 GB/s in one
/// chunk, 10.2 in four). Larger reads go in `CHUNK`s copied out on several threads (16 MiB in
/// four chunks: 11.0 GB/s, in one: 17.5). Writes return once the data is staged, so smaller
/// chunks only add submissions to them.
fn read_chunk(total: usize) -> usize {
    if total < 8 << 20 {
        (total / 4).max(512 << 10)
    } else {
        CHUNK
    }
}

/// A transfer through staging memory, in chunks of at most `chunk` bytes (staging memory stays
/// bounded): `prepare`
/// gives each chunk (and its size in bytes) its staging buffer and direction; the first chunk
/// waits for `wait`, and with several chunks each is flushed as it goes. Returns the last
/// chunk's event (an ordering-only command when there is nothing to copy).
fn staged(
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
    // SAFETY: the pieces lie in the region at the host's pitches (caller's contract).
    unsafe { upload(queue, command, mem, pieces, src, blocking, wait) }
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
    download(queue, command, mem, pieces, dst, blocking, wait)
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
    download(
        queue,
        command,
        mem,
        linear(mem, offset, size),
        dst,
        blocking,
        wait,
    )
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
    // SAFETY: the one piece is `data`.
    unsafe { upload(queue, command, mem, pieces, data.as_ptr(), blocking, wait) }
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
    let (src_storage, dst_storage) = (src.storage_on(&queue.vk)?, dst.storage_on(&queue.vk)?);
    queue.enqueue(command, wait, |rec| {
        rec.copy_regions(
            src_storage,
            dst_storage,
            &copies(from, src.at(0), to, dst.at(0), region),
        );
        Ok(Recorded {
            host: None,
            keep: vec![src.clone(), dst.clone()],
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
    if let Some(event) = copy_by_kernel(queue, src, dst, src_offset, dst_offset, size, wait)? {
        return Ok(event);
    }
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

/// A large copy between device-local buffers as a kernel (`internal::copy16`): NVIDIA's
/// vkCmdCopyBuffer reaches a fifth of the memory bandwidth there (docs/MEMORY.md). Needs 16-byte
/// elements, a work-group size of at least 64 dividing the count, and both ranges at offsets
/// the device can bind; None otherwise (and where the kernel cannot be built).
fn copy_by_kernel(
    queue: &Arc<Queue>,
    src: &Arc<Mem>,
    dst: &Arc<Mem>,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    wait: &[Arc<Event>],
) -> CLResult<Option<Arc<Event>>> {
    const MIN_SIZE: usize = 1 << 20;
    let align = queue
        .device
        .caps
        .limits
        .min_storage_buffer_offset_alignment
        .max(16);
    let bindable =
        |m: &Arc<Mem>, offset: usize| m.storage.host().is_none() && m.at(offset) % align == 0;
    if size < MIN_SIZE
        || size % (16 * 64) != 0
        || !bindable(src, src_offset)
        || !bindable(dst, dst_offset)
    {
        return Ok(None);
    }
    let Some(shared) = internal::copy16(&queue.device) else {
        return Ok(None);
    };
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
    kernel::enqueue_as(queue, &shared, args, &nd, wait, CL_COMMAND_COPY_BUFFER).map(Some)
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
    mem.add_mapping(ptr as usize, offset, size, flags, shadow);
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
            rec.copy_buffer(&shadow, 0, storage, mem.at(m.offset), m.size as u64);
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
        let pieces = linear(mem, m.offset, m.size);
        // SAFETY: the mapped region is the application's memory of `size` bytes, which it has
        // finished writing when it unmaps.
        return unsafe { upload(queue, command, mem, pieces, ptr as *const u8, false, wait) };
    }
    order_only(queue, command, mem, wait, None)
}

#[cfg(test)]
mod tests {
    use super::{chunks, stream_read, streaming_loads, Piece};

    #[test]
    #[cfg_attr(not(target_arch = "x86_64"), ignore = "streaming loads are x86-64's")]
    fn streaming_reads_copy_unaligned_ranges_exactly() {
        assert!(streaming_loads(), "this test needs AVX2");
        // The source's aligned 32-byte blocks must be readable: ranges start 64 bytes in.
        let src: Vec<u8> = (0..1024u32).map(|i| (i * 7 + 3) as u8).collect();
        for start in [64, 65, 77, 95, 96, 127] {
            for len in [0, 1, 5, 31, 32, 33, 64, 100, 511] {
                let mut dst = vec![0xEEu8; len + 2];
                // SAFETY: [start, start + len) and its blocks are inside src; dst holds len + 2.
                unsafe { stream_read(src.as_ptr().add(start), dst.as_mut_ptr().add(1), len) };
                assert_eq!(&dst[1..=len], &src[start..start + len], "{start} {len}");
                assert_eq!((dst[0], dst[len + 1]), (0xEE, 0xEE), "{start} {len}");
            }
        }
    }

    #[test]
    fn chunks_split_and_group_pieces() {
        let p = |dev, host, len| Piece { dev, host, len };
        let got = chunks(vec![p(0, 0, 10), p(100, 50, 3), p(200, 60, 4)], 8);
        assert_eq!(
            got,
            vec![
                vec![p(0, 0, 8)],
                vec![p(8, 8, 2), p(100, 50, 3), p(200, 60, 3)],
                vec![p(203, 63, 1)],
            ]
        );
        assert!(chunks(vec![], 8).is_empty());
    }
}
