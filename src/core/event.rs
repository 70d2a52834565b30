//! Events: the status of one command (or a user event). A command's event completes when its
//! batch has finished on the device and the command's host-side part has run, on the thread
//! that waited for it or on its queue's completion thread; a user event is waited on with a
//! condition variable.

use super::context::Context;
use super::error::{CLResult, ClError};
use super::object::{Base, ClObject, Kind};
use super::queue::Queue;
use crate::cl::*;
use parking_lot::{Condvar, Mutex};
use std::sync::{Arc, Weak};

#[repr(C)]
pub struct Event {
    pub base: Base,
    pub context: Arc<Context>,
    pub queue: Option<Arc<Queue>>,
    pub command_type: cl_command_type,
    /// The command's value on its queue's timeline.
    pub value: u64,
    status: Mutex<cl_int>,
    cond: Condvar,
    /// Callbacks waiting for a status (CL_SUBMITTED, CL_RUNNING or CL_COMPLETE).
    callbacks: Mutex<Vec<(cl_int, Callback)>>,
    /// CL_PROFILING_COMMAND_QUEUED, _SUBMIT, _START, _END, _COMPLETE, in host nanoseconds.
    pub times: Mutex<[u64; 5]>,
    /// Queues holding commands back until this event ends (it gates their open batch).
    waiters: Mutex<Vec<Weak<Queue>>>,
    /// The command's host part runs more device work (`Queue::enqueue_holding`): other
    /// queues wait for this event on the host, not for its timeline value.
    pub deferred: std::sync::atomic::AtomicBool,
}

/// Nanoseconds on the host's monotonic clock (the time base of profiling information):
/// CLOCK_MONOTONIC on Unix, the clock Vulkan's calibrated timestamps read with a device's.
#[cfg(unix)]
pub fn host_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Nanoseconds on the host's monotonic clock (the time base of profiling information).
#[cfg(not(unix))]
pub fn host_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    // Offset by one second so that no timestamp is 0.
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
        + 1_000_000_000
}

/// A CLOCK_MONOTONIC time in `host_ns`'s time base, where that is CLOCK_MONOTONIC.
pub fn from_monotonic(ns: u64) -> Option<u64> {
    cfg!(unix).then_some(ns)
}

/// An event callback, given the status that triggered it (negative on error).
pub type Callback = Box<dyn FnOnce(cl_int) + Send>;

/// A status change whose consequences have not run yet: the application's callbacks and the
/// flushes of the queues the event held back. Made under a lock (`Event::update`), run after
/// it is released (`run`), so no application code ever runs under a vkcl lock.
#[must_use]
pub struct Notice {
    event: Arc<Event>,
    status: cl_int,
}

impl Notice {
    pub fn run(self) {
        let Notice { event, status } = self;
        if status <= 0 {
            // Commands held back by this event may go now.
            let waiters = std::mem::take(&mut *event.waiters.lock());
            for q in waiters.iter().filter_map(Weak::upgrade) {
                if let Err(e) = q.flush() {
                    log::error!(target: "queue", "submitting commands released by an event failed: {e}");
                }
            }
        }
        event.run_callbacks(status);
    }
}

impl ClObject for Event {
    const KIND: Kind = Kind::Event;
    const INVALID: i32 = CL_INVALID_EVENT;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Event {
    pub fn new(queue: &Arc<Queue>, command_type: cl_command_type, value: u64) -> Arc<Event> {
        Self::make(
            queue.context.clone(),
            Some(queue.clone()),
            command_type,
            value,
            CL_QUEUED as cl_int,
        )
    }

    /// clCreateUserEvent: an event the application completes with clSetUserEventStatus.
    pub fn new_user(context: &Arc<Context>) -> Arc<Event> {
        Self::make(
            context.clone(),
            None,
            CL_COMMAND_USER,
            0,
            CL_SUBMITTED as cl_int,
        )
    }

    fn make(
        context: Arc<Context>,
        queue: Option<Arc<Queue>>,
        command_type: cl_command_type,
        value: u64,
        status: cl_int,
    ) -> Arc<Event> {
        Arc::new(Event {
            base: Base::new(Kind::Event),
            context,
            queue,
            command_type,
            value,
            status: Mutex::new(status),
            cond: Condvar::new(),
            callbacks: Mutex::new(vec![]),
            times: Mutex::new([host_ns(), 0, 0, 0, 0]),
            waiters: Mutex::new(vec![]),
            deferred: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub fn is_user(&self) -> bool {
        self.queue.is_none()
    }

    /// Asks for `queue` to be flushed when this event ends; false if it has already ended.
    pub fn add_waiter(&self, queue: &Arc<Queue>) -> bool {
        let mut waiters = self.waiters.lock();
        if self.status() <= 0 {
            return false;
        }
        waiters.push(Arc::downgrade(queue));
        true
    }

    pub fn status(&self) -> cl_int {
        *self.status.lock()
    }

    /// Moves the status forward (never back, never out of an error) and runs what that
    /// implies (callbacks, queues to flush). Call it with no vkcl lock held: application
    /// code runs inside.
    pub fn set_status(self: &Arc<Self>, status: cl_int) {
        if let Some(notice) = self.update(status) {
            notice.run();
        }
    }

    /// Moves the status forward (waking the threads waiting in `wait`), and returns what is
    /// left to do, to be run once every vkcl lock is released (None if nothing changed).
    #[must_use]
    pub fn update(self: &Arc<Self>, status: cl_int) -> Option<Notice> {
        let mut s = self.status.lock();
        // Ended (complete or failed) is final; otherwise only forward.
        if *s <= 0 || (status >= 0 && *s <= status) {
            return None;
        }
        *s = status;
        self.cond.notify_all();
        Some(Notice {
            event: self.clone(),
            status,
        })
    }

    /// Runs, outside every lock and in status order, the callbacks whose status was reached.
    fn run_callbacks(&self, status: cl_int) {
        let due: Vec<(cl_int, Callback)> = {
            let mut cbs = self.callbacks.lock();
            let (due, wait) = cbs
                .drain(..)
                .partition(|(on, _)| status < 0 || *on >= status);
            *cbs = wait;
            due
        };
        let mut due = due;
        // SUBMITTED (2) before RUNNING (1) before COMPLETE (0), each in registration order.
        due.sort_by_key(|(on, _)| -on);
        for (on, f) in due {
            f(if status < 0 { status } else { on });
        }
    }

    /// clSetEventCallback: `f` runs once the event reaches `on` (at once if it has).
    pub fn on_status(&self, on: cl_int, f: Callback) {
        self.callbacks.lock().push((on, f));
        let status = self.status();
        if status < 0 || status <= on {
            self.run_callbacks(status);
        }
    }

    /// Blocks until the event is complete; Err if it ended in error.
    pub fn wait(&self) -> CLResult<()> {
        if let Some(q) = &self.queue {
            if self.status() > 0 {
                // Waits on the queue's timeline and completes the command on this thread.
                q.wait_for(self.value)?;
            }
        }
        let mut s = self.status.lock();
        while *s > 0 {
            self.cond.wait(&mut s);
        }
        if *s < 0 {
            Err(ClError(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST))
        } else {
            Ok(())
        }
    }
}
