//! Command queues: commands are recorded into the open batch (one command buffer) and
//! submitted in batches that signal the queue's timeline semaphore. A completion thread per
//! queue waits for each batch, runs the commands' host-side parts (copies into application
//! memory) and completes their events.

use super::context::Context;
use super::device::Device;
use super::error::{CLResult, ClError};
use super::event::Event;
use super::object::{Base, ClObject, Kind};
use crate::cl::*;
use crate::vk::device::Device as VkDevice;
use crate::vk::staging::StagingPool;
use crate::vk::submit::{Recorder, Retired};
use crate::vk::vk;
use parking_lot::{Condvar, Mutex};
use std::any::Any;
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

/// Host-side work run on the completion thread once the command's GPU part is done.
pub type HostPart = Box<dyn FnOnce() -> CLResult<()> + Send>;
/// Objects a command needs alive until it completes.
pub type Keep = Vec<Arc<dyn Any + Send + Sync>>;

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
    keep: Keep,
}

struct Pending {
    value: u64,
    /// Host time of the submission, when the queue profiles.
    profiled_at: Option<u64>,
    retired: Option<Retired>,
    items: Vec<Item>,
    keep: Keep,
}

struct State {
    open: Option<Batch>,
    /// Batches closed while held back, in order (each starts at a command with gates).
    held: Vec<Batch>,
    /// Value of the newest command enqueued / submitted.
    last: u64,
    submitted: u64,
    /// Events the open batch must not be submitted before (see `resolve_waits`).
    gates: Vec<Arc<Event>>,
    /// The last command was a barrier: the next one waits for everything before it (on an
    /// out-of-order queue; on an in-order queue every command does).
    after_barrier: bool,
}

/// What the completion thread shares with API threads.
struct Progress {
    completed: Mutex<u64>,
    cond: Condvar,
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
    timeline: vk::Semaphore,
    state: Mutex<State>,
    progress: Arc<Progress>,
    completion: Mutex<Option<Sender<Pending>>>,
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
        let timeline = vk.create_timeline(0)?;
        let progress = Arc::new(Progress {
            completed: Mutex::new(0),
            cond: Condvar::new(),
        });
        let (tx, rx) = channel::<Pending>();
        let (vk2, progress2) = (vk.clone(), progress.clone());
        let spawned = std::thread::Builder::new()
            .name("vkcl-completion".into())
            .spawn(move || complete_batches(vk2, timeline, progress2, rx));
        if spawned.is_err() {
            // SAFETY: the semaphore is unused.
            unsafe { vk.raw.destroy_semaphore(timeline, None) };
            return Err(ClError(CL_OUT_OF_HOST_MEMORY));
        }
        Ok(Arc::new(Queue {
            base: Base::new(Kind::Queue),
            context: context.clone(),
            device: device.clone(),
            properties,
            properties_array,
            staging: StagingPool::new(&vk),
            vk,
            timeline,
            state: Mutex::new(State {
                open: None,
                held: vec![],
                after_barrier: false,
                last: 0,
                submitted: 0,
                gates: vec![],
            }),
            progress,
            completion: Mutex::new(Some(tx)),
        }))
    }

    /// Enqueues one command: `record` records its GPU part into the open batch and returns
    /// its host part and what it keeps alive. Returns the command's event.
    pub fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        record: impl FnOnce(&mut Recorder) -> CLResult<Recorded>,
    ) -> CLResult<Arc<Event>> {
        let (waits, gates) = self.resolve_waits(wait_list)?;
        let mut state = self.state.lock();
        if !gates.is_empty() {
            // A command with host-resolved dependencies starts a batch of its own, held back
            // with those after it: what comes before goes now (or, if already held, waits in
            // order).
            if state.gates.is_empty() {
                self.submit(&mut state)?;
            } else if let Some(open) = state.open.take() {
                state.held.push(open);
            }
        }
        if state.open.is_none() {
            state.open = Some(Batch {
                rec: Recorder::new(&self.vk, self.profiled_commands())?,
                items: vec![],
                gated: gates.clone(),
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
        for (sem, value) in waits {
            batch.rec.wait_for(sem, value);
        }
        batch.rec.unordered = !ordered;
        let recorded = record(&mut batch.rec);
        batch.rec.unordered = false;
        let recorded = recorded?;
        let value = state.last + 1;
        state.last = value;
        let event = Event::new(self, command_type, value);
        let batch = state.open.as_mut().expect("opened above");
        let index = batch.rec.commands.saturating_sub(1);
        batch.items.push(Item {
            event: event.clone(),
            host: recorded.host,
            index,
        });
        batch.keep.extend(recorded.keep);
        let full = batch.rec.commands >= crate::config::get().batch_commands;
        for g in &gates {
            g.add_waiter(self);
        }
        state.gates.extend(gates);
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

    fn profiled_commands(&self) -> u32 {
        if self.properties & CL_QUEUE_PROFILING_ENABLE != 0 {
            crate::config::get().batch_commands as u32 + 1
        } else {
            0
        }
    }

    /// GPU-side waits for events of other queues; events of this queue are already ordered.
    /// Splits a wait list: events of other queues of this Vulkan device whose commands are
    /// submitted become GPU-side semaphore waits; user events, events of other devices and of
    /// commands still held back become gates, resolved on the host (the batch is held until
    /// they end). Events of this queue are already ordered.
    fn resolve_waits(
        &self,
        wait_list: &[Arc<Event>],
    ) -> CLResult<(Vec<(vk::Semaphore, u64)>, Vec<Arc<Event>>)> {
        let (mut waits, mut gates) = (vec![], vec![]);
        for e in wait_list {
            let status = e.status();
            if status < 0 {
                return Err(ClError(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST));
            }
            if status == CL_COMPLETE as cl_int {
                continue;
            }
            match &e.queue {
                Some(q) if std::ptr::eq(q.as_ref(), self) => {}
                Some(q) => {
                    q.flush_to(e.value)?;
                    if Arc::ptr_eq(&q.vk, &self.vk) && q.state.lock().submitted >= e.value {
                        waits.push((q.timeline, e.value));
                    } else {
                        gates.push(e.clone());
                    }
                }
                None => gates.push(e.clone()),
            }
        }
        Ok((waits, gates))
    }

    /// Submits the held and open batches, unless a gate is still pending. A batch whose gate
    /// failed is not executed, nor is any batch after it (the queue runs in order): their
    /// commands fail with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
    fn submit(&self, state: &mut State) -> CLResult<()> {
        if state.gates.iter().any(|g| g.status() > 0) {
            // Held back: the last gate to end flushes the queue (Event::set_status).
            return Ok(());
        }
        state.gates.clear();
        let batches: Vec<Batch> = state.held.drain(..).chain(state.open.take()).collect();
        let mut failed = false;
        let mut result = Ok(());
        for mut batch in batches {
            failed = failed || batch.gated.iter().any(|g| g.status() < 0);
            if failed {
                for item in &batch.items {
                    item.event
                        .set_status(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
                }
                // Its commands are dropped; an empty submission still signals their timeline
                // values in queue order.
                batch.rec = Recorder::new(&self.vk, 0)?;
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
        let events: Vec<_> = batch.items.iter().map(|i| i.event.clone()).collect();
        let sender = self.completion.lock().clone();
        let result = batch.rec.submit(self.timeline, value);
        let (retired, failed) = match result {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e)),
        };
        state.submitted = value;
        let now = super::event::host_ns();
        for e in &events {
            e.times.lock()[1] = now;
            e.set_status(failed.map_or(CL_SUBMITTED as cl_int, |e| e.0));
        }
        let pending = Pending {
            value,
            profiled_at: (self.profiled_commands() > 0).then_some(now),
            retired,
            items: batch.items,
            keep: batch.keep,
        };
        if let Some(tx) = sender {
            if failed.is_some() {
                // Nothing will signal the timeline: signal it from the host so later waits end.
                let info = vk::SemaphoreSignalInfo::default()
                    .semaphore(self.timeline)
                    .value(value);
                // SAFETY: valid semaphore; value is greater than any signalled before.
                let _ = unsafe { self.vk.raw.signal_semaphore(&info) };
            }
            let _ = tx.send(pending);
        }
        failed.map_or(Ok(()), Err)
    }

    /// Runs a command's work on the calling thread when every command enqueued before it has
    /// completed (None otherwise: the caller records it instead). The command takes the next
    /// timeline value, signalled from the host, and its event is complete when this returns.
    pub fn run_on_host(
        self: &Arc<Self>,
        command_type: cl_command_type,
        work: impl FnOnce(),
    ) -> CLResult<Option<Arc<Event>>> {
        let mut state = self.state.lock();
        let mut completed = self.progress.completed.lock();
        if *completed < state.last || state.open.is_some() || !state.gates.is_empty() {
            return Ok(None);
        }
        work();
        let value = state.last + 1;
        let info = vk::SemaphoreSignalInfo::default()
            .semaphore(self.timeline)
            .value(value);
        // SAFETY: valid semaphore; every earlier value has been reached and no submission
        // signals it any more, so `value` is the next one.
        unsafe { self.vk.raw.signal_semaphore(&info) }?;
        (state.last, state.submitted, *completed) = (value, value, value);
        drop(completed);
        drop(state);
        self.progress.cond.notify_all();
        let event = Event::new(self, command_type, value);
        let now = super::event::host_ns();
        *event.times.lock() = [now; 5];
        event.set_status(CL_COMPLETE as cl_int);
        Ok(Some(event))
    }

    /// clFlush: submits the open batch.
    pub fn flush(&self) -> CLResult<()> {
        let mut state = self.state.lock();
        self.submit(&mut state)
    }

    /// Submits the open batch if it holds the command with `value`.
    pub fn flush_to(&self, value: u64) -> CLResult<()> {
        let mut state = self.state.lock();
        if state.submitted < value {
            self.submit(&mut state)?;
        }
        Ok(())
    }

    /// clFinish: submits and waits for every command enqueued so far.
    pub fn finish(&self) -> CLResult<()> {
        let last = {
            let mut state = self.state.lock();
            self.submit(&mut state)?;
            state.last
        };
        let mut done = self.progress.completed.lock();
        while *done < last {
            self.progress.cond.wait(&mut done);
        }
        Ok(())
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let mut state = self.state.lock();
        let _ = self.submit(&mut state);
        // Closing the channel ends the completion thread after the last batch; it destroys
        // the timeline semaphore.
        self.completion.lock().take();
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
            let host = |t: u64| host_now.saturating_sub(device_now.saturating_sub(t));
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

/// At process exit: the batches left may still be running, so nothing of them (nor of the
/// batches still in the channel) is destroyed.
fn abandon(p: Pending, rx: std::sync::mpsc::Receiver<Pending>) {
    std::mem::forget(p);
    std::mem::forget(rx);
}

fn complete_batches(
    vk: Arc<VkDevice>,
    timeline: vk::Semaphore,
    progress: Arc<Progress>,
    rx: std::sync::mpsc::Receiver<Pending>,
) {
    while let Ok(p) = rx.recv() {
        let mut failed = None;
        loop {
            // Short waits: a process exit waits for this thread to leave the driver. Then the
            // batch may still run: nothing of it is destroyed.
            let Some(_active) = crate::shutdown::enter() else {
                return abandon(p, rx);
            };
            match vk.wait_timeline(timeline, p.value, 100_000_000) {
                Ok(true) => break,
                Ok(false) => continue,
                Err(e) => {
                    log::error!(target: "queue", "waiting for a batch failed ({e}): device lost?");
                    failed = Some(e);
                    break;
                }
            }
        }
        let times = p
            .profiled_at
            .zip(p.retired.as_ref().and_then(|r| r.command_times()));
        // The device's clock and the host's read together (where the device can tell): device
        // times then map onto the host clock exactly.
        let clocks = times
            .as_ref()
            .and_then(|_| vk.now_ns())
            .map(|device| (device, super::event::host_ns()));
        for item in &p.items {
            if let Some((submitted, t)) = &times {
                record_times(&item.event, *submitted, t, item.index, clocks);
            }
        }
        let Some(_active) = crate::shutdown::enter() else {
            return abandon(p, rx);
        };
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
        *progress.completed.lock() = p.value;
        progress.cond.notify_all();
    }
    // SAFETY: the queue is gone and every batch signalling this semaphore has completed.
    unsafe { vk.raw.destroy_semaphore(timeline, None) };
}
