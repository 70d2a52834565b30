//! Process exit while OpenCL calls or vkcl's own threads are inside the Vulkan driver.
//!
//! `exit()` runs the C++ static destructors of the driver and its LLVM (lavapipe) and of the
//! validation layer, while other threads may still be calling into them: a crash at exit,
//! seen with an application thread enqueueing while the main thread returns from `main`.
//! vkcl registers an exit handler once the driver is loaded (handlers run in reverse order of
//! registration, so it runs before the driver's destructors). It makes every later entry into
//! vkcl fail fast (CL_OUT_OF_RESOURCES, no Vulkan call), and waits, for at most two seconds,
//! for the calls and background work already inside to leave.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static EXITING: AtomicBool = AtomicBool::new(false);

/// The calls inside vkcl, counted in stripes (a thread uses one): every entry point counts
/// itself in and out, and one counter that every thread changes was a cache line all of them
/// fought over (issue 17's contention). The exit handler sums the stripes.
const STRIPES: usize = 16;

#[repr(align(128))]
struct Stripe {
    active: AtomicUsize,
    /// Entries through this stripe, for the re-registration of the handler.
    entries: AtomicU64,
}

static STRIPE: [Stripe; STRIPES] = [const {
    Stripe {
        active: AtomicUsize::new(0),
        entries: AtomicU64::new(0),
    }
}; STRIPES];

/// This thread's stripe.
fn stripe() -> &'static Stripe {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: Cell<Option<usize>> = const { Cell::new(None) };
    }
    let i = MINE.with(|m| {
        let i = m
            .get()
            .unwrap_or_else(|| NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES);
        m.set(Some(i));
        i
    });
    &STRIPE[i]
}

/// Proof that the current thread may use the driver; held for the length of the call.
pub struct Active(&'static Stripe);

impl Drop for Active {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Enters vkcl, unless the process is exiting (None).
pub fn enter() -> Option<Active> {
    let stripe = stripe();
    // SeqCst with the handler's store and loads: either the handler sees this count, or this
    // thread sees EXITING.
    stripe.active.fetch_add(1, Ordering::SeqCst);
    let active = Active(stripe);
    if EXITING.load(Ordering::SeqCst) {
        return None;
    }
    // The driver and the validation layer construct function-local statics on first use, and
    // register their destructors then: after the handler, so they would run before it. The
    // handler is registered again at the 1st, 2nd, 4th, 8th... entry through each stripe,
    // which covers a static constructed at entry n of a stripe from its entry 2n on, for about
    // 40 registrations a stripe in a process's life.
    if stripe
        .entries
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_add(1)
        .is_power_of_two()
    {
        install();
    }
    Some(active)
}

/// The process is exiting: a thread waiting in a loop of short waits should leave vkcl.
pub fn exiting() -> bool {
    EXITING.load(Ordering::SeqCst)
}

extern "C" fn exit_handler() {
    // The handler is registered many times; the first to run does the work.
    if EXITING.swap(true, Ordering::SeqCst) {
        return;
    }
    let t0 = Instant::now();
    let active = || {
        STRIPE
            .iter()
            .map(|s| s.active.load(Ordering::SeqCst))
            .sum::<usize>()
    };
    while active() > 0 && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(1));
    }
    // Work that was deferred to a later moment that will not come (a save of a cache).
    let hooks = std::mem::take(&mut *HOOKS.lock());
    for hook in hooks {
        hook();
    }
}

static HOOKS: parking_lot::Mutex<Vec<fn()>> = parking_lot::Mutex::new(Vec::new());

/// Runs `hook` once at exit, after the calls inside vkcl have left and before the driver's
/// destructors (registering the same function twice runs it once).
pub fn on_exit(hook: fn()) {
    let mut hooks = HOOKS.lock();
    if !hooks.iter().any(|&h| std::ptr::fn_addr_eq(h, hook)) {
        hooks.push(hook);
    }
}

/// Registers the exit handler (again: call it after loading more of the driver, so that the
/// handler runs before the destructors registered meanwhile; running it twice is harmless).
pub fn install() {
    extern "C" {
        fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
    }
    // SAFETY: registers a function with no captured state.
    unsafe { atexit(exit_handler) };
}
