//! The host's copies: large ones split over a few threads, and streaming loads out of
//! write-combined memory.

/// Copies `len` bytes from `src` to `dst`, large copies split over a few threads: one core's
/// `memcpy` reaches neither the host's memory bandwidth nor PCIe's (a part that cannot get a
/// thread is copied on this one).
///
/// The ranges may overlap: a `CL_MEM_USE_HOST_PTR` buffer whose memory is the application's
/// (imported host memory) read into or written from its own host pointer is one range, as the
/// spec allows; nothing is copied then.
///
/// # Safety
/// As `std::ptr::copy`.
pub(super) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    const PART: usize = 4 << 20;
    let (s, d) = (src as usize, dst as usize);
    if s == d {
        return;
    }
    if s < d + len && d < s + len {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy(src, dst, len) };
        return;
    }
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
pub(super) fn streaming_loads() -> bool {
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
pub(super) unsafe fn stream_read(src: *const u8, dst: *mut u8, len: usize) {
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

#[cfg(test)]
mod tests {
    use super::{stream_read, streaming_loads};

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
}
