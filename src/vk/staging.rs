//! Staging memory for the host's transfers to and from device-local buffers: host-visible
//! buffers reused across commands (write-combined for uploads, cached for readback), in
//! power-of-two sizes. At most `CAP` bytes of each kind are pooled per queue; transfers are
//! split into chunks of `CHUNK` bytes and hold at most `TRANSFER_CAP` bytes at once, so staging
//! memory stays bounded whatever their size; map
//! shadows up to `CAP` bytes come from the pool too, larger ones are allocated for the map.

use super::device::Device;
use super::memory::{Buffer, Placement};
use super::Result;
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest staging buffer the pool hands out: the chunk size of big transfers.
pub const CHUNK: usize = 16 << 20;
const MIN_SIZE: u64 = 64 << 10;
/// Pooled bytes per kind (upload, readback).
const CAP: u64 = 256 << 20;
/// Pooled bytes per kind that chunked transfers may hold at once: a few chunks in flight keep
/// the copies pipelined, and a small working set keeps the host's copies fast.
const TRANSFER_CAP: u64 = 4 * CHUNK as u64;
/// How long `acquire` waits for a lease to come back before it allocates outside the pool.
const PATIENCE: Duration = Duration::from_millis(250);

#[derive(Default)]
struct Kind {
    free: Vec<Buffer>,
    /// Bytes of the pool's buffers of this kind, free and leased.
    pooled: u64,
}

struct Inner {
    device: Arc<Device>,
    kinds: Mutex<[Kind; 2]>,
    released: Condvar,
}

pub struct StagingPool {
    inner: Arc<Inner>,
}

/// A staging buffer lent by the pool; it goes back when the lease is dropped (after the last
/// command using it has completed).
pub struct Lease {
    buffer: Option<Buffer>,
    /// The pool and kind it goes back to; None for buffers allocated outside the pool.
    home: Option<(Arc<Inner>, usize)>,
}

impl std::ops::Deref for Lease {
    type Target = Buffer;
    fn deref(&self) -> &Buffer {
        self.buffer.as_ref().expect("present until drop")
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let (Some((inner, kind)), Some(b)) = (self.home.take(), self.buffer.take()) {
            inner.kinds.lock()[kind].free.push(b);
            inner.released.notify_all();
        }
    }
}

fn kind_index(placement: Placement) -> usize {
    match placement {
        Placement::Readback => 1,
        _ => 0,
    }
}

impl StagingPool {
    pub fn new(device: &Arc<Device>) -> StagingPool {
        StagingPool {
            inner: Arc::new(Inner {
                device: device.clone(),
                kinds: Mutex::new(Default::default()),
                released: Condvar::new(),
            }),
        }
    }

    /// A host-visible buffer of at least `size` bytes (`placement`: Upload or Readback).
    /// Sizes above `CAP` get a buffer of their own. When all the pool's memory is leased
    /// and `flush` is given, it is called once (so that the commands holding leases can
    /// complete) and the pool waits for a lease to come back; it allocates outside the pool
    /// rather than wait longer (a lease may belong to a command held back by a user event).
    /// Without `flush` (leases held for long, as map shadows), it does not wait.
    pub fn acquire(
        &self,
        placement: Placement,
        size: usize,
        flush: Option<&dyn Fn()>,
    ) -> Result<Lease> {
        let inner = &self.inner;
        let own = |size: u64| -> Result<Lease> {
            Ok(Lease {
                buffer: Some(Buffer::new(&inner.device, size, placement, "staging")?),
                home: None,
            })
        };
        if size as u64 > CAP {
            return own(size as u64);
        }
        let size = (size as u64).next_power_of_two().max(MIN_SIZE);
        let cap = if flush.is_some() { TRANSFER_CAP } else { CAP };
        let k = kind_index(placement);
        let deadline = Instant::now() + PATIENCE;
        let mut flushed = false;
        let mut kinds = inner.kinds.lock();
        loop {
            let kind = &mut kinds[k];
            let best = (kind.free.iter().enumerate())
                .filter(|(_, b)| b.size >= size)
                .min_by_key(|(_, b)| b.size)
                .map(|(i, _)| i);
            if let Some(i) = best {
                return Ok(Lease {
                    buffer: Some(kind.free.swap_remove(i)),
                    home: Some((inner.clone(), k)),
                });
            }
            // Make room by freeing idle buffers too small for this request.
            while kind.pooled + size > cap && !kind.free.is_empty() {
                let b = kind.free.swap_remove(0);
                kind.pooled -= b.size;
            }
            if kind.pooled + size <= cap {
                kind.pooled += size;
                log::debug!(target: "memory", "staging pool: a new buffer of {size} bytes");
                drop(kinds);
                return match Buffer::new(&inner.device, size, placement, "staging") {
                    Ok(b) => Ok(Lease {
                        buffer: Some(b),
                        home: Some((inner.clone(), k)),
                    }),
                    Err(e) => {
                        inner.kinds.lock()[k].pooled -= size;
                        Err(e)
                    }
                };
            }
            let Some(flush) = flush else {
                drop(kinds);
                return own(size);
            };
            if !flushed {
                flushed = true;
                drop(kinds);
                flush();
                kinds = inner.kinds.lock();
                continue;
            }
            if inner.released.wait_until(&mut kinds, deadline).timed_out() {
                drop(kinds);
                log::debug!(target: "memory", "staging pool exhausted: a buffer of its own");
                return own(size);
            }
        }
    }
}

/// Small host-visible buffers for the by-value arguments of launches (`Placement::Upload`),
/// reused once nothing but the pool holds them (the recorder keeps a batch's buffers until the
/// batch completes, a command buffer for its life): once warm, a launch allocates nothing and
/// takes no allocator lock for its arguments.
pub struct SmallBuffers {
    device: Arc<Device>,
    pool: Mutex<Vec<Arc<Buffer>>>,
}

/// The size of the pooled buffers; larger requests get a buffer of their own.
const SMALL: u64 = 4 << 10;
/// Buffers the pool keeps: launches in flight beyond this allocate their own.
const KEPT: usize = 256;

impl SmallBuffers {
    pub fn new(device: &Arc<Device>) -> SmallBuffers {
        SmallBuffers {
            device: device.clone(),
            pool: Mutex::new(Vec::new()),
        }
    }

    /// A host-visible buffer of at least `size` bytes that no GPU work uses.
    pub fn take(&self, size: u64) -> Result<Arc<Buffer>> {
        let new =
            |size| Buffer::new(&self.device, size, Placement::Upload, "pod args").map(Arc::new);
        if size > SMALL {
            return new(size);
        }
        let mut pool = self.pool.lock();
        // Only the pool holds an idle buffer, and only the pool (under its lock) clones one.
        if let Some(b) = pool.iter().find(|b| Arc::strong_count(b) == 1) {
            return Ok(b.clone());
        }
        let b = new(SMALL)?;
        if pool.len() < KEPT {
            pool.push(b.clone());
        }
        Ok(b)
    }
}
