//! The objects an application holds handles to.
//!
//! Every such object is `#[repr(C)]` with a [`Base`] first, so that its address is a valid
//! ICD handle (the loader reads the dispatch pointer at offset 0). Objects live in `Arc`s; the
//! registry below owns one strong reference per live handle, dropped when the application's
//! reference count reaches zero. Internal users (queued commands, children) hold their own
//! `Arc`s, so an object released by the application lives on while something still uses it.

use super::error::{CLResult, ClError};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Platform,
    Device,
    Context,
    Queue,
    Mem,
    Program,
    Kernel,
    Event,
    Sampler,
    CommandBuffer,
    MutableCommand,
    DeviceQueue,
}

/// The first field of every object with a handle.
#[repr(C)]
pub struct Base {
    dispatch: *const c_void,
    kind: Kind,
    api_refs: AtomicU32,
}

// SAFETY: `dispatch` points to an immutable, 'static table.
unsafe impl Send for Base {}
// SAFETY: as above; the counter is atomic.
unsafe impl Sync for Base {}

static DISPATCH: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Set by the API layer before any object is created: the ICD dispatch table.
pub fn set_dispatch_table(table: *const c_void) {
    DISPATCH.store(table as *mut c_void, Ordering::Release);
}

impl Base {
    pub fn new(kind: Kind) -> Base {
        Base {
            dispatch: DISPATCH.load(Ordering::Acquire),
            kind,
            api_refs: AtomicU32::new(1),
        }
    }

    /// The application's reference count (`CL_*_REFERENCE_COUNT`).
    pub fn api_refs(&self) -> u32 {
        self.api_refs.load(Ordering::Acquire)
    }
}

/// An object type with a handle.
pub trait ClObject: Send + Sync + 'static {
    const KIND: Kind;
    /// The error a bad handle of this type gets.
    const INVALID: i32;
    fn base(&self) -> &Base;
}

/// The live handles and their kinds; the value keeps the handle's strong reference.
struct Entry {
    kind: Kind,
    drop_ref: unsafe fn(usize),
}

/// The registry in shards chosen by address, each behind a reader-writer lock: every entry
/// point looks its handles up (a read), only creation and the last release write, so threads
/// using different handles, or only looking the same one up, do not wait for each other
/// (one global mutex serialised every entry point of every thread).
const SHARDS: usize = 32;

type Shard = RwLock<HashMap<usize, Entry, BuildHasherDefault<AddrHasher>>>;

/// A shard on a cache line of its own.
#[repr(align(128))]
struct Padded(Shard);

static LIVE: LazyLock<[Padded; SHARDS]> =
    LazyLock::new(|| std::array::from_fn(|_| Padded(RwLock::default())));

fn shard(addr: usize) -> &'static Shard {
    // The top bits of the mixed address: the map inside a shard indexes by the low bits.
    &LIVE[(mix(addr) >> (64 - SHARDS.trailing_zeros())) as usize].0
}

/// An address mixed (Fibonacci hashing): objects are heap blocks at least 16 bytes apart.
fn mix(addr: usize) -> u64 {
    (addr as u64 >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Handles are addresses, distinct and not chosen by an adversary: the address, mixed, is
/// its own hash (SipHash showed in the profile of every entry point).
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        // The map takes the bucket from the low bits and a tag from the top 7: both from
        // the middle of the product, away from the top bits that chose the shard.
        self.0.rotate_left(20)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = mix(n);
    }
}

unsafe fn drop_arc<T: ClObject>(addr: usize) {
    // SAFETY: `addr` came from `Arc::into_raw` in `register` and its reference is given up once.
    drop(unsafe { Arc::from_raw(addr as *const T) });
}

/// Gives `obj` a handle with application reference count 1.
pub fn register<T: ClObject>(obj: Arc<T>) -> *mut c_void {
    let ptr = Arc::into_raw(obj) as *mut c_void;
    shard(ptr as usize).write().insert(
        ptr as usize,
        Entry {
            kind: T::KIND,
            drop_ref: drop_arc::<T>,
        },
    );
    ptr
}

/// The object behind a handle, if it is a live handle of type `T`.
pub fn lookup<T: ClObject>(handle: *const c_void) -> CLResult<Arc<T>> {
    let live = shard(handle as usize).read();
    match live.get(&(handle as usize)) {
        Some(e) if e.kind == T::KIND => {
            // SAFETY: the registry holds a strong reference to this Arc<T> while the entry
            // exists, and we hold the shard's lock, so the count is > 0 here.
            unsafe {
                Arc::increment_strong_count(handle as *const T);
                Ok(Arc::from_raw(handle as *const T))
            }
        }
        _ => Err(ClError(T::INVALID)),
    }
}

/// The handle of an object that has one (its address).
pub fn handle<T: ClObject>(obj: &Arc<T>) -> *mut c_void {
    Arc::as_ptr(obj) as *mut c_void
}

/// clRetain*: one more application reference.
pub fn retain<T: ClObject>(handle: *const c_void) -> CLResult<()> {
    let obj = lookup::<T>(handle)?;
    obj.base().api_refs.fetch_add(1, Ordering::AcqRel);
    Ok(())
}

/// clRelease*: one less; at zero the handle dies and its reference is dropped. Returns the
/// object when this was the last application reference, so the caller can act on it
/// (e.g. flush a queue) before it goes.
pub fn release<T: ClObject>(handle: *const c_void) -> CLResult<Option<Arc<T>>> {
    let obj = lookup::<T>(handle)?;
    if obj.base().api_refs.fetch_sub(1, Ordering::AcqRel) != 1 {
        return Ok(None);
    }
    // Only the release that took the count to zero gets here; `obj` keeps the object alive
    // meanwhile, and a lookup until the removal still finds a live object.
    let entry = shard(handle as usize).write().remove(&(handle as usize));
    // After vkcl's exit handler (src/shutdown.rs) the driver may be half torn down: the handle
    // dies, but the object is leaked rather than destroyed (no Vulkan call, no callback).
    if let Some(e) = entry.filter(|_| !crate::shutdown::exiting()) {
        // SAFETY: the entry was registered for this address and is now removed, so its
        // reference is dropped exactly once.
        unsafe { (e.drop_ref)(handle as usize) };
    }
    Ok(Some(obj))
}

/// Objects that are never freed (platform, root devices) are registered once and never
/// released; their reference count stays 1.
pub fn register_static<T: ClObject>(obj: &Arc<T>) -> *mut c_void {
    register(obj.clone())
}
