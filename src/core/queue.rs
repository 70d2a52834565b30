//! Command queues: commands are recorded into the open batch (one command buffer) and
//! submitted in batches that signal the queue's timeline semaphore. Completing a batch (running
//! its commands' host-side parts, such as copies into application memory, and completing their
//! events) is done by the thread that waits for it: an API thread in clFinish, clWaitForEvents
//! or a blocking call waits on the timeline semaphore itself and completes the batches up to
//! the one it needs; a completion thread per queue completes those nobody waits for.

use super::context::Context;
use super::device::Device;
use super::error::{CLResult, ClError};
use super::event::{Event, Notice};
use super::memory::Mem;
use super::object::{Base, ClObject, Kind};
use crate::cl::*;
use crate::vk::device::{Device as VkDevice, Timeline};
use crate::vk::staging::{SmallBuffers, StagingPool};
use crate::vk::submit::{Pools, Recorder, Retired};
use crate::vk::Error as VkError;
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Events waited for on the GPU (other queues of the device) and on the host (gates).
type Waits = Vec<Arc<Event>>;
type Gates = Vec<Arc<Event>>;

/// Host-side work run once the command's GPU part is done, by the thread that completes its
/// batch (a waiting API thread or the completion thread).
pub type HostPart = Box<dyn FnOnce() -> CLResult<()> + Send>;
/// The memory objects a command uses, kept until it completes (so that their destructor
/// callbacks run after their last command). The Vulkan objects it records, the recorder holds.
pub type Keep = Vec<Arc<Mem>>;

struct Item {
    event: Arc<Event>,
    host: Option<HostPart>,
    /// The command's index in its batch (for its timestamps).
    index: usize,
}

struct Batch {
    rec: Recorder,
    items: Vec<Item>,
    /// The host-resolved events the batch's first command waits for: if one fails, neither
    /// this batch nor (in order) any later one is executed.
    gated: Vec<Arc<Event>>,
    /// The events of other queues its commands wait for on the GPU (see `Pending::after`).
    after: Vec<Arc<Event>>,
    keep: Keep,
}

struct Pending {
    /// The values of its first and last commands.
    first: u64,
    value: u64,
    /// Host time of the submission, when the queue profiles.
    profiled_at: Option<u64>,
    retired: Option<Retired>,
    items: Vec<Item>,
    /// Events of other queues its commands waited for on the GPU: completed (on their own
    /// queues) before this batch's events, so that no command is seen complete before a
    /// command it waited for.
    after: Vec<Arc<Event>>,
    keep: Keep,
}

struct State {
    open: Option<Batch>,
    /// Batches closed while held back, in order: the first waits for its gates (those of its
    /// first command), the others for it. The open batch comes after them.
    held: VecDeque<Batch>,
    /// Value of the newest command enqueued / submitted.
    last: u64,
    submitted: u64,
    /// The last command was a barrier: the next one waits for everything before it (on an
    /// out-of-order queue; on an in-order queue every command does).
    after_barrier: bool,
    /// Status changes made under this lock whose callbacks and flushes run once it is
    /// released (`Locked`'s drop).
    notices: Vec<Notice>,
    /// Asynchronous errors for the context's error callback, reported the same way.
    reports: Vec<String>,
    /// The command whose host part enqueues more work (device-side enqueue's children): the
    /// next command is held back until it ends (`enqueue_holding`).
    hold: Option<Arc<Event>>,
    /// Batches given up under this lock (a submission that could not be prepared): dropped
    /// once it is released, since what they keep may be the last reference to a memory
    /// object with a destructor callback.
    dropped: Vec<Batch>,
}

/// The queue's `State`, locked. Dropping it releases the lock, then runs the notices the
/// holder collected: no application callback runs under the lock (a callback may flush or
/// enqueue on this queue).
struct Locked<'a> {
    state: Option<MutexGuard<'a, State>>,
    context: &'a Context,
}

impl std::ops::Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        self.state.as_ref().expect("locked until dropped")
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        self.state.as_mut().expect("locked until dropped")
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let Some(mut state) = self.state.take() else {
            return;
        };
        let notices = std::mem::take(&mut state.notices);
        let reports = std::mem::take(&mut state.reports);
        let dropped = std::mem::take(&mut state.dropped);
        drop(state);
        drop(dropped);
        for n in notices {
            n.run();
        }
        for r in reports {
            self.context.report(&r);
        }
    }
}

/// The submitted batches not yet completed, shared by the queue's API threads and its
/// completion thread. Batches are completed in order, by one thread at a time (the one that
/// holds the `completing` role), so events complete and callbacks run in queue order.
struct Inflight {
    state: Mutex<Flight>,
    /// For API threads: `completed` moved, or the `completing` role was given up.
    done: Condvar,
    /// For the completion thread: a batch that no API thread waits for, or the queue closed.
    work: Condvar,
    /// The device's clock and the host's read together, in ns (`calibration`).
    clocks: Mutex<Option<(u64, u64)>>,
}

struct Flight {
    pending: VecDeque<Pending>,
    /// Every command up to this value has completed (status set, host part run).
    completed: u64,
    /// A thread is completing batches taken off `pending`.
    completing: bool,
    /// The values API threads wait for on the timeline semaphore themselves: the completion
    /// thread leaves the batches up to the largest to them.
    waiting: Vec<u64>,
    /// The queue is gone: the completion thread ends once `pending` is empty.
    closed: bool,
}

impl Flight {
    /// The last value of the oldest batch that no API thread will complete.
    fn unattended(&self) -> Option<u64> {
        let covered = self.waiting.iter().copied().max().unwrap_or(0);
        self.pending
            .iter()
            .find(|p| p.first > covered)
            .map(|p| p.value)
    }
}

/// An API thread's registration as the waiter for `value` (see `Queue::wait_for`).
struct Waiting<'a> {
    inflight: &'a Inflight,
    value: u64,
}

impl<'a> Waiting<'a> {
    fn new(inflight: &'a Inflight, value: u64) -> Waiting<'a> {
        inflight.state.lock().waiting.push(value);
        Waiting { inflight, value }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut f = self.inflight.state.lock();
        if let Some(i) = f.waiting.iter().position(|&v| v == self.value) {
            f.waiting.swap_remove(i);
        }
        // Batches this thread did not complete (it failed or gave up) are the completion
        // thread's again.
        if f.unattended().is_some() {
            self.inflight.work.notify_one();
        }
    }
}

#[repr(C)]
pub struct Queue {
    pub base: Base,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    pub vk: Arc<VkDevice>,
    pub properties: cl_command_queue_properties,
    /// The properties array as given to clCreateCommandQueueWithProperties (with its 0).
    pub properties_array: Vec<cl_queue_properties>,
    /// Staging memory for host transfers of device-local buffers.
    pub staging: StagingPool,
    /// Buffers for launches' by-value arguments.
    pub small_buffers: SmallBuffers,
    timeline: Arc<Timeline>,
    /// Free lists of the Vulkan objects batches use.
    pools: Arc<Pools>,
    /// How long a waiting thread polls the timeline before it blocks (VKCL_WAIT_SPIN_US).
    spin: std::time::Duration,
    /// Whether that is chosen per wait from the recent waits instead (`spin_budget`).
    adaptive_spin: bool,
    /// The recent waits' length per command waited for, in nanoseconds (a moving average),
    /// for `spin_budget`.
    recent_wait_ns: AtomicU64,
    /// Waits whose budget was nothing (`spin_budget`'s probes).
    blocked_waits: AtomicU64,
    state: Mutex<State>,
    inflight: Arc<Inflight>,
}

impl ClObject for Queue {
    const KIND: Kind = Kind::Queue;
    const INVALID: i32 = CL_INVALID_COMMAND_QUEUE;
    fn base(&self) -> &Base {
        &self.base
    }
}

/// What recording a command produced.
pub struct Recorded {
    pub host: Option<HostPart>,
    pub keep: Keep,
}

impl Queue {
    pub fn new(
        context: &Arc<Context>,
        device: &Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
    ) -> CLResult<Arc<Queue>> {
        let vk = device.vk()?;
        // Values go on from where the timeline's last user left it.
        let (timeline, base) = vk.timeline()?;
        let timeline = Arc::new(timeline);
        let inflight = Arc::new(Inflight {
            state: Mutex::new(Flight {
                pending: VecDeque::new(),
                completed: base,
                completing: false,
                waiting: vec![],
                closed: false,
            }),
            done: Condvar::new(),
            work: Condvar::new(),
            clocks: Mutex::new(None),
        });
        let (vk2, timeline2, inflight2) = (vk.clone(), timeline.clone(), inflight.clone());
        let context2 = Arc::downgrade(context);
        let spawned = std::thread::Builder::new()
            .name("vkcl-completion".into())
            .spawn(move || complete_batches(vk2, timeline2, inflight2, context2));
        if spawned.is_err() {
            return Err(ClError(CL_OUT_OF_HOST_MEMORY));
        }
        Ok(Arc::new(Queue {
            base: Base::new(Kind::Queue),
            context: context.clone(),
            device: device.clone(),
            properties,
            properties_array,
            staging: StagingPool::new(&vk),
            small_buffers: SmallBuffers::new(&vk),
            pools: Pools::new(&vk),
            spin: std::time::Duration::from_micros(vk.caps.workarounds.wait_spin_us),
            adaptive_spin: vk.caps.workarounds.adaptive_spin,
            recent_wait_ns: AtomicU64::new(0),
            blocked_waits: AtomicU64::new(0),
            vk,
            timeline,
            state: Mutex::new(State {
                open: None,
                held: VecDeque::new(),
                after_barrier: false,
                last: base,
                submitted: base,
                notices: vec![],
                reports: vec![],
                hold: None,
                dropped: vec![],
            }),
            inflight,
        }))
    }

    fn lock(&self) -> Locked<'_> {
        Locked {
            state: Some(self.state.lock()),
            context: &self.context,
        }
    }

    /// Enqueues one command: `record` records its GPU part into the open batch and returns
    /// its host part and what it keeps alive. Returns the command's event.
    pub fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        record: impl FnOnce(&mut Recorder) -> CLResult<Recorded>,
    ) -> CLResult<Arc<Event>> {
        self.enqueue_holding(command_type, wait_list, false, record)
    }

    /// `enqueue`; with `holds`, a command whose host part runs more work on the device
    /// (device-side enqueue's children), which the timeline's value for it does not cover:
    /// the next command (and so every later one) is held back until its event ends, and
    /// other queues wait for the event on the host (`Event::deferred`).
    pub fn enqueue_holding(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        holds: bool,
        record: impl FnOnce(&mut Recorder) -> CLResult<Recorded>,
    ) -> CLResult<Arc<Event>> {
        let (waits, mut gates) = self.resolve_waits(wait_list)?;
        let mut state = self.lock();
        if let Some(h) = state.hold.take() {
            if h.status() > 0 {
                gates.push(h);
            }
        }
        if !gates.is_empty() {
            // A command with host-resolved dependencies starts a batch of its own, held back
            // with those after it: what comes before goes now (or, if itself held, waits in
            // order).
            if let Some(open) = state.open.take() {
                state.held.push_back(open);
            }
            self.submit(&mut state)?;
        }
        if state.open.is_none() {
            // Small to start with: while the device is idle, batches go at 4 or 8 commands,
            // and a large first allocation per batch showed in the launch profile.
            let n = crate::config::get().batch_commands.min(8);
            state.open = Some(Batch {
                rec: Recorder::new(&self.pools, self.profiled_commands())?,
                items: Vec::with_capacity(n),
                gated: gates.clone(),
                after: vec![],
                // The first command's list becomes the batch's.
                keep: vec![],
            });
        }
        // Out of order, a command waits only for what it must: events of this queue not yet
        // complete in its wait list (conservatively, everything before it), or a barrier.
        let ordered = self.properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0
            || state.after_barrier
            || wait_list.iter().any(|e| {
                e.queue
                    .as_ref()
                    .is_some_and(|q| std::ptr::eq(q.as_ref(), self.as_ref()))
                    && e.status() != CL_COMPLETE as cl_int
            });
        state.after_barrier = command_type == CL_COMMAND_BARRIER;
        let batch = state.open.as_mut().expect("opened above");
        // A batch's first command waits for the batches before it, so that they complete, and
        // signal the timeline, in order.
        let ordered = ordered || batch.rec.commands == 0;
        for e in waits {
            if let Some(q) = &e.queue {
                batch.rec.wait_for(&q.timeline, e.value);
            }
            batch.after.push(e);
        }
        batch.rec.unordered = !ordered;
        let recorded = record(&mut batch.rec);
        batch.rec.unordered = false;
        let recorded = recorded?;
        let value = state.last + 1;
        state.last = value;
        let event = Event::new(self, command_type, value);
        if holds {
            event.deferred.store(true, Ordering::Release);
            state.hold = Some(event.clone());
        }
        let batch = state.open.as_mut().expect("opened above");
        let index = batch.rec.commands.saturating_sub(1);
        batch.items.push(Item {
            event: event.clone(),
            host: recorded.host,
            index,
        });
        if batch.keep.is_empty() {
            batch.keep = recorded.keep;
        } else {
            batch.keep.extend(recorded.keep);
        }
        let commands = batch.rec.commands;
        // Full; or, while the device has nothing to do, a few commands already: they start now
        // rather than after the whole batch is recorded (checked at 4, 8, 16... commands). Not
        // out of order: a batch's first command waits for the batches before it, so smaller
        // batches would overlap less.
        let in_order = self.properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0;
        let full = commands >= crate::config::get().batch_commands
            || (in_order
                && commands >= 4
                && commands.is_power_of_two()
                && self.device_idle(state.submitted));
        for g in &gates {
            // (An event that ended meanwhile no longer holds the batch back.)
            g.add_waiter(self);
        }
        if full {
            self.submit(&mut state)?;
        }
        Ok(event)
    }

    /// A command with no GPU work (marker, barrier, empty launch): it orders like any other
    /// and keeps `keep` alive until it completes.
    pub fn enqueue_marker(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        keep: Keep,
    ) -> CLResult<Arc<Event>> {
        self.enqueue(command_type, wait_list, |rec| {
            rec.marker();
            Ok(Recorded { host: None, keep })
        })
    }

    /// A recorder for work run outside the queue's batches, from the pools of the queue's
    /// (submitted with `Recorder::submit_and_wait`).
    pub fn side_recorder(&self) -> CLResult<Recorder> {
        Ok(Recorder::new(&self.pools, 0)?)
    }

    /// How long a wait for `commands` commands polls before it blocks: `spin`; or (CPU
    /// devices) `adaptive_budget` of the recent waits, with a probe of
    /// `ADAPTIVE_SPIN_PER_COMMAND` every `ADAPTIVE_PROBE`-th wait where that is nothing: a
    /// blocking wait's own wake-up latency would otherwise keep the average long, and the
    /// waits blocking, after the long commands have gone.
    fn spin_budget(&self, commands: u64) -> Duration {
        if !self.adaptive_spin {
            return self.spin;
        }
        let recent = Duration::from_nanos(self.recent_wait_ns.load(Ordering::Relaxed));
        let budget = adaptive_budget(recent, commands);
        if !budget.is_zero() {
            return budget;
        }
        let blocked = self.blocked_waits.fetch_add(1, Ordering::Relaxed) + 1;
        match blocked % ADAPTIVE_PROBE {
            0 => ADAPTIVE_SPIN_PER_COMMAND,
            _ => Duration::ZERO,
        }
    }

    /// Adds a wait of `took` for `commands` commands to the recent waits' average per
    /// command; a shorter one counts for more, so that the waits after long work poll again
    /// soon.
    fn note_wait(&self, took: Duration, commands: u64) {
        let old = self.recent_wait_ns.load(Ordering::Relaxed);
        let per_command = took / commands.clamp(1, u32::MAX as u64) as u32;
        self.recent_wait_ns
            .store(averaged(old, per_command), Ordering::Relaxed);
    }

    /// Polls the timeline for `value` (`commands` commands ahead) for a short while
    /// (`spin_budget`): short commands then end the wait without the wake-up latency of a
    /// blocking wait. True if it was reached.
    fn spin_until(&self, value: u64, commands: u64) -> bool {
        let budget = self.spin_budget(commands);
        if budget.is_zero() {
            return false;
        }
        let t0 = std::time::Instant::now();
        loop {
            match self.timeline.value() {
                Ok(v) if v >= value => return true,
                Ok(_) if t0.elapsed() < budget => {
                    // Past the first microseconds, let other threads of the process run.
                    if t0.elapsed() > std::time::Duration::from_micros(50) {
                        std::thread::yield_now();
                    } else {
                        for _ in 0..64 {
                            std::hint::spin_loop();
                        }
                    }
                }
                _ => return false,
            }
        }
    }

    /// Waits in the driver until the timeline reaches `value`: Some(error) if the wait failed
    /// (device lost), Err if the process exits meanwhile.
    fn block_until(&self, value: u64) -> CLResult<Option<ClError>> {
        loop {
            // Short waits: a process exit waits for the calls inside vkcl to leave the driver.
            match self.timeline.wait(value, 100_000_000) {
                Ok(true) => return Ok(None),
                Ok(false) if crate::shutdown::exiting() => {
                    return Err(ClError(CL_OUT_OF_RESOURCES))
                }
                Ok(false) => {}
                Err(e) => {
                    return Ok(Some(wait_failed(&self.context, e)));
                }
            }
        }
    }

    /// Every batch submitted so far has finished on the device.
    fn device_idle(&self, submitted: u64) -> bool {
        self.timeline.value().is_ok_and(|v| v >= submitted)
    }

    fn profiled_commands(&self) -> u32 {
        if self.properties & CL_QUEUE_PROFILING_ENABLE != 0 {
            crate::config::get().batch_commands as u32 + 1
        } else {
            0
        }
    }

    /// Splits a wait list: events of other queues of this Vulkan device whose commands are
    /// submitted become GPU-side semaphore waits; user events, events of other devices and of
    /// commands still held back become gates, resolved on the host (the batch is held until
    /// they end), as do events that already failed. Events of this queue are already ordered.
    fn resolve_waits(&self, wait_list: &[Arc<Event>]) -> CLResult<(Waits, Gates)> {
        let (mut waits, mut gates) = (vec![], vec![]);
        for e in wait_list {
            let status = e.status();
            if status < 0 {
                // Already failed: the enqueue succeeds (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                // is for blocking calls, which wait for the command) and the command fails when
                // its batch is submitted, as behind any gate that failed.
                gates.push(e.clone());
                continue;
            }
            if status == CL_COMPLETE as cl_int {
                continue;
            }
            if e.deferred.load(Ordering::Acquire) {
                // Complete only after its host part: no GPU wait covers it.
                if let Some(q) = e.queue.as_ref().filter(|q| !std::ptr::eq(q.as_ref(), self)) {
                    q.flush_to(e.value)?;
                    gates.push(e.clone());
                }
                continue;
            }
            match &e.queue {
                Some(q) if std::ptr::eq(q.as_ref(), self) => {}
                Some(q) => {
                    q.flush_to(e.value)?;
                    if Arc::ptr_eq(&q.vk, &self.vk) && q.lock().submitted >= e.value {
                        waits.push(e.clone());
                    } else {
                        gates.push(e.clone());
                    }
                }
                None => gates.push(e.clone()),
            }
        }
        Ok((waits, gates))
    }

    /// Submits the held and open batches in order, up to the first whose gates are still
    /// pending (each gate flushes the queue when it ends: Event::set_status). Only a batch's
    /// own gates hold it back: a later batch's gate may be an event of another queue that
    /// waits for this one's earlier batches. A batch whose gate failed is not executed, nor
    /// are the batches held after it (the queue runs in order): their commands fail with
    /// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
    fn submit(&self, state: &mut State) -> CLResult<()> {
        let mut failed = false;
        let mut result = Ok(());
        while let Some(next) = state.held.front().or(state.open.as_ref()) {
            failed = failed || next.gated.iter().any(|g| g.status() < 0);
            if !failed && next.gated.iter().any(|g| g.status() > 0) {
                break;
            }
            let mut batch = match state.held.pop_front() {
                Some(b) => b,
                None => state.open.take().expect("the open batch, seen above"),
            };
            if failed {
                for item in &batch.items {
                    let failed = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
                    state.notices.extend(item.event.update(failed));
                }
                // Its commands are dropped; an empty submission still signals their timeline
                // values in queue order.
                match Recorder::new(&self.pools, 0) {
                    Ok(rec) => batch.rec = rec,
                    Err(e) => {
                        state.dropped.push(batch);
                        let rest: Vec<Batch> =
                            state.held.drain(..).chain(state.open.take()).collect();
                        state.dropped.extend(rest);
                        return Err(e.into());
                    }
                }
            }
            // (A batch without commands, left by a command that failed to record, is dropped.)
            let Some(value) = batch.items.last().map(|i| i.event.value) else {
                continue;
            };
            if let Err(e) = self.submit_batch(state, batch, value) {
                result = Err(e);
            }
        }
        result
    }

    fn submit_batch(&self, state: &mut State, batch: Batch, value: u64) -> CLResult<()> {
        let result = batch.rec.submit(&self.timeline, value);
        // clFlush (and every call that submits) may fail only with these two.
        let (retired, failed) = match result {
            Ok(r) => (Some(r), None),
            Err(VkError::HostMemory) => (None, Some(ClError(CL_OUT_OF_HOST_MEMORY))),
            Err(_) => (None, Some(ClError(CL_OUT_OF_RESOURCES))),
        };
        state.submitted = value;
        let now = super::event::host_ns();
        for item in &batch.items {
            item.event.times.lock()[1] = now;
            let status = failed.map_or(CL_SUBMITTED as cl_int, |e| e.0);
            state.notices.extend(item.event.update(status));
        }
        if let Some(e) = failed {
            state.reports.push(format!(
                "submitting a batch of commands failed ({e}): their events report it"
            ));
            // Nothing will signal the timeline: signal it from the host so later waits end
            // (the value is greater than any signalled before).
            let _ = self.timeline.signal(value);
        }
        let pending = Pending {
            first: batch.items.first().map_or(value, |i| i.event.value),
            value,
            profiled_at: (self.profiled_commands() > 0).then_some(now),
            retired,
            items: batch.items,
            after: batch.after,
            keep: batch.keep,
        };
        let mut f = self.inflight.state.lock();
        f.pending.push_back(pending);
        // A thread about to wait for it completes it; otherwise the completion thread does.
        if f.unattended().is_some() {
            self.inflight.work.notify_one();
        }
        drop(f);
        failed.map_or(Ok(()), Err)
    }

    /// Runs a command's work on the calling thread when every command enqueued before it has
    /// completed (None otherwise: the caller records it instead). The command takes the next
    /// timeline value, signalled from the host, and its event is complete when this returns.
    ///
    /// Only the queue's own lock is held during the work (it keeps this queue's later commands
    /// behind it): with nothing in flight and no submission possible meanwhile, `completed`
    /// stays at `last`, so the in-flight lock, which the completion thread and the threads
    /// waiting for this queue's events take, is not held during a copy of any size.
    pub fn run_on_host(
        self: &Arc<Self>,
        command_type: cl_command_type,
        work: impl FnOnce(),
    ) -> CLResult<Option<Arc<Event>>> {
        let mut state = self.lock();
        let idle = self.inflight.state.lock().completed >= state.last;
        if !idle || state.open.is_some() || !state.held.is_empty() {
            return Ok(None);
        }
        work();
        let value = state.last + 1;
        // Every earlier value has been reached and no submission signals it any more, so
        // `value` is the next one.
        self.timeline.signal(value)?;
        let mut flight = self.inflight.state.lock();
        (state.last, state.submitted, flight.completed) = (value, value, value);
        drop(flight);
        drop(state);
        self.inflight.done.notify_all();
        let event = Event::new(self, command_type, value);
        let now = super::event::host_ns();
        *event.times.lock() = [now; 5];
        event.set_status(CL_COMPLETE as cl_int);
        Ok(Some(event))
    }

    /// clFlush: submits the open batch.
    pub fn flush(&self) -> CLResult<()> {
        let mut state = self.lock();
        self.submit(&mut state)
    }

    /// Submits the open batch if it holds the command with `value`.
    pub fn flush_to(&self, value: u64) -> CLResult<()> {
        let mut state = self.lock();
        if state.submitted < value {
            self.submit(&mut state)?;
        }
        Ok(())
    }

    /// clFinish: submits and waits for every command enqueued so far.
    pub fn finish(&self) -> CLResult<()> {
        let last = self.lock().last;
        self.wait_for(last)
    }

    /// Submits the command with `value` (and those before it) and waits until it has
    /// completed. Where its batch is submitted, this thread waits on the timeline semaphore
    /// and completes the batches up to it itself (no hand-over through the completion thread);
    /// a batch held back by a gate is left to the completion thread.
    pub fn wait_for(&self, value: u64) -> CLResult<()> {
        if self.inflight.state.lock().completed >= value {
            return Ok(());
        }
        let waiting = {
            let mut state = self.lock();
            // Registered before the submission, so that the completion thread is not woken
            // for a batch this thread completes.
            let waiting = Waiting::new(&self.inflight, value);
            if state.submitted < value {
                self.submit(&mut state)?;
            }
            (state.submitted >= value).then_some(waiting)
        };
        let Some(waiting) = waiting else {
            let mut f = self.inflight.state.lock();
            while f.completed < value {
                self.inflight.done.wait(&mut f);
            }
            return Ok(());
        };
        // The timeline takes only the values of batch ends: wait for the end of each batch up
        // to the one holding `value` (the same point in time; the validation layer can tell
        // only so that the batch's signal has happened), completing each as it ends, so that
        // the host parts of the first (a chunked read's copies out of staging memory) run
        // while the GPU works on the next.
        loop {
            let (end, commands) = {
                let f = self.inflight.state.lock();
                if f.completed >= value {
                    break;
                }
                let end = f
                    .pending
                    .iter()
                    .find(|p| p.value > f.completed)
                    .map_or(value, |p| p.value);
                (end, end - f.completed)
            };
            let t0 = std::time::Instant::now();
            let failed = if self.spin_until(end, commands) {
                None
            } else {
                self.block_until(end)?
            };
            self.note_wait(t0.elapsed(), commands);
            complete_through(&self.vk, &self.inflight, end, failed);
        }
        drop(waiting);
        Ok(())
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let mut state = self.lock();
        let _ = self.submit(&mut state);
        // The completion thread ends after the last batch; it destroys the timeline semaphore.
        self.inflight.state.lock().closed = true;
        self.inflight.work.notify_one();
    }
}

/// On a CPU device (`Queue::spin_budget`): commands longer than this on average make waits
/// block at once (polling would take a core from them); the least and the most one wait
/// polls behind shorter ones; how often a wait probes by polling while they block.
const ADAPTIVE_SPIN_PER_COMMAND: Duration = Duration::from_micros(100);
const ADAPTIVE_SPIN_MIN: Duration = Duration::from_micros(20);
const ADAPTIVE_SPIN_MAX: Duration = Duration::from_millis(1);
const ADAPTIVE_PROBE: u64 = 16;

/// `Queue::spin_budget` on a CPU device whose recent waits took `recent` per command, for a
/// wait of `commands` commands: twice their expected time, or nothing behind long commands.
fn adaptive_budget(recent: Duration, commands: u64) -> Duration {
    if recent > ADAPTIVE_SPIN_PER_COMMAND {
        return Duration::ZERO;
    }
    let expected = recent.saturating_mul(commands.min(u32::MAX as u64) as u32);
    (2 * expected).clamp(ADAPTIVE_SPIN_MIN, ADAPTIVE_SPIN_MAX)
}

/// The recent waits' average (ns) `old` with a wait of `took` added.
fn averaged(old: u64, took: Duration) -> u64 {
    let took = took.as_nanos().min(u64::MAX as u128) as u64;
    if took < old {
        old / 2 + took / 2
    } else {
        old - old / 4 + took / 4
    }
}

/// Profiling: the command's device start/end mapped onto the host clock: through `clocks`
/// (the device's clock and the host's read together) where the device has calibrated
/// timestamps, else by placing the batch's first timestamp at its submission. Either way
/// QUEUED ≤ SUBMIT ≤ START ≤ END ≤ COMPLETE ≤ now holds and durations are the device's own.
fn record_times(
    event: &Event,
    submitted: u64,
    device: &[(u64, u64)],
    index: usize,
    clocks: Option<(u64, u64)>,
) {
    let Some(&(start, end)) = device.get(index) else {
        return;
    };
    let now = super::event::host_ns();
    let (start, end) = match clocks {
        Some((device_now, host_now)) => {
            // Device times before or after the calibration (which may be older than them).
            let host = |t: u64| (host_now as i128 + t as i128 - device_now as i128).max(0) as u64;
            (host(start), host(end))
        }
        None => {
            let t0 = device.iter().map(|t| t.0).min().unwrap_or(start);
            (
                submitted + start.saturating_sub(t0),
                submitted + end.saturating_sub(t0),
            )
        }
    };
    // Never past the present nor before the submission.
    let late = end.saturating_sub(now);
    let mut times = event.times.lock();
    times[2] = start.saturating_sub(late).max(submitted);
    times[3] = end.saturating_sub(late).max(times[2]);
    times[4] = times[3].max(now);
}

/// A wait for the GPU failed: the device is lost. Returns the error of the commands concerned.
fn wait_failed(context: &Context, e: VkError) -> ClError {
    log::error!(target: "queue", "waiting for a batch failed ({e}): device lost?");
    context.report(&format!(
        "waiting for the device failed ({e}): the device may be lost"
    ));
    ClError(CL_OUT_OF_RESOURCES)
}

/// At process exit: the batches left may still be running and the driver's destructors may be
/// running, so nothing is destroyed and the driver is not called.
fn abandon(vk: Arc<VkDevice>, inflight: Arc<Inflight>, timeline: Arc<Timeline>) {
    std::mem::forget(vk);
    std::mem::forget(inflight);
    std::mem::forget(timeline);
}

/// Completes, in order, the batches up to the one holding `value`, whose timeline value has
/// been reached (or whose wait failed with `failed`). Returns once every command up to `value`
/// has completed, here or on another thread.
fn complete_through(vk: &VkDevice, inflight: &Inflight, value: u64, failed: Option<ClError>) {
    let mut f = inflight.state.lock();
    while f.completed < value {
        if f.completing {
            inflight.done.wait(&mut f);
            continue;
        }
        let Some(p) = f.pending.pop_front() else {
            // Not submitted (cannot happen where the timeline reached `value`).
            return;
        };
        f.completing = true;
        drop(f);
        let last = p.value;
        complete_batch(vk, &inflight.clocks, p, failed);
        f = inflight.state.lock();
        f.completing = false;
        f.completed = f.completed.max(last);
        inflight.done.notify_all();
    }
}

/// Completes one batch: profiling times, host parts, event status (and so callbacks), then
/// gives its Vulkan objects back and lets go of what it kept alive.
fn complete_batch(
    vk: &VkDevice,
    clocks: &Mutex<Option<(u64, u64)>>,
    p: Pending,
    failed: Option<ClError>,
) {
    let times = p
        .profiled_at
        .zip(p.retired.as_ref().and_then(|r| r.command_times()));
    let clocks = times.as_ref().and_then(|_| calibration(vk, clocks));
    for item in &p.items {
        if let Some((submitted, t)) = &times {
            record_times(&item.event, *submitted, t, item.index, clocks);
        }
    }
    if failed.is_none() {
        for e in p.after.iter().filter(|e| e.status() > 0) {
            // Their timeline values have been reached: no waiting for the GPU. (Their batches
            // were submitted before this one, so they never wait for this queue's.)
            if let Some(q) = &e.queue {
                let _ = q.wait_for(e.value);
            }
        }
    }
    for item in p.items {
        let status = match (failed, item.host) {
            (Some(e), _) => e.0,
            // Failed before it ran (its wait list failed): no host part either.
            (None, Some(_)) if item.event.status() < 0 => continue,
            (None, None) => CL_COMPLETE as cl_int,
            (None, Some(host)) => {
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(host)) {
                    Ok(Ok(())) => CL_COMPLETE as cl_int,
                    Ok(Err(e)) => e.0,
                    Err(_) => CL_OUT_OF_RESOURCES,
                }
            }
        };
        item.event.set_status(status);
    }
    drop(p.retired);
    drop(p.keep);
}

/// How long a calibration (`calibration`) serves: the two clocks drift apart (NTP slews the
/// host's by up to 500 parts per million), at most half a microsecond in this time.
const CALIBRATION_AGE_NS: u64 = 1_000_000;

/// The device's clock and the host's read together (where the device can tell), so that
/// device times map onto the host clock: read again once `CALIBRATION_AGE_NS` old (the read
/// is a driver call of some 10 µs on NVIDIA, on the path of every profiled batch's
/// completion). Where the driver reads both clocks, exactly; else the host's clock around the
/// call, at its middle (not after it: the host's time would be late by up to the call).
fn calibration(vk: &VkDevice, cache: &Mutex<Option<(u64, u64)>>) -> Option<(u64, u64)> {
    let mut cached = cache.lock();
    let now = super::event::host_ns();
    if let Some((device, host)) = *cached {
        if now.saturating_sub(host) < CALIBRATION_AGE_NS {
            return Some((device, host));
        }
    }
    let (device, monotonic) = vk.clocks()?;
    let after = super::event::host_ns();
    let host = monotonic
        .and_then(super::event::from_monotonic)
        .unwrap_or(now + (after - now) / 2);
    *cached = Some((device, host));
    Some((device, host))
}

/// The completion thread: completes the batches no API thread waits for, in order.
fn complete_batches(
    vk: Arc<VkDevice>,
    timeline: Arc<Timeline>,
    inflight: Arc<Inflight>,
    context: Weak<Context>,
) {
    loop {
        let target = {
            let mut f = inflight.state.lock();
            loop {
                if let Some(v) = f.unattended() {
                    break v;
                }
                if f.closed && f.pending.is_empty() {
                    // The queue is gone and every batch signalling the timeline has completed,
                    // unless the device was lost: then the timeline is not reused. The last
                    // references to the device may go here too: all of it inside the driver.
                    let completed = f.completed;
                    drop(f);
                    let Some(_active) = crate::shutdown::enter() else {
                        return abandon(vk, inflight, timeline);
                    };
                    if !timeline.value().is_ok_and(|v| v >= completed) {
                        timeline.retire();
                    }
                    drop((timeline, inflight, vk));
                    return;
                }
                inflight.work.wait(&mut f);
            }
        };
        let mut failed = None;
        loop {
            // Short waits: a process exit waits for this thread to leave the driver. Then the
            // batch may still run: nothing of it is destroyed.
            let Some(_active) = crate::shutdown::enter() else {
                return abandon(vk, inflight, timeline);
            };
            match timeline.wait(target, 100_000_000) {
                Ok(true) => break,
                Ok(false) => continue,
                Err(e) => {
                    failed = Some(match context.upgrade() {
                        Some(context) => wait_failed(&context, e),
                        None => ClError(CL_OUT_OF_RESOURCES),
                    });
                    break;
                }
            }
        }
        let Some(_active) = crate::shutdown::enter() else {
            return abandon(vk, inflight, timeline);
        };
        complete_through(&vk, &inflight, target, failed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_waits_poll_after_short_waits_and_block_after_long_ones() {
        let us = Duration::from_micros;
        assert_eq!(adaptive_budget(Duration::ZERO, 1), ADAPTIVE_SPIN_MIN);
        assert_eq!(adaptive_budget(us(35), 1), us(70));
        assert_eq!(adaptive_budget(us(90), 1), us(180));
        assert_eq!(adaptive_budget(us(101), 1), Duration::ZERO);
        // A batch of short commands: polled for as long as they should take, at most 1 ms.
        assert_eq!(adaptive_budget(us(6), 64), us(768));
        assert_eq!(adaptive_budget(us(30), 64), ADAPTIVE_SPIN_MAX);
        // Behind 10 ms batches the waits block; a few short waits later they poll again.
        let mut recent = 0;
        for _ in 0..8 {
            recent = averaged(recent, Duration::from_millis(10));
        }
        assert_eq!(
            adaptive_budget(Duration::from_nanos(recent), 1),
            Duration::ZERO
        );
        let mut polls_after = None;
        for n in 1..20 {
            recent = averaged(recent, us(60));
            if adaptive_budget(Duration::from_nanos(recent), 1) > Duration::ZERO {
                polls_after = Some(n);
                break;
            }
        }
        assert!(polls_after.is_some_and(|n| n <= 8), "{polls_after:?}");
    }
}
