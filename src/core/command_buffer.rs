//! cl_khr_command_buffer: commands recorded once into a Vulkan secondary command buffer and
//! replayed as one command of a queue's batch (`vkCmdExecuteCommands`), which then orders,
//! waits, profiles and completes like any other command. A replay does no per-command host
//! work: kernel arguments, descriptor sets and push constants were captured at record time.

use super::context::Context;
use super::error::{check, CLResult, ClError};
use super::event::Event;
use super::object::{Base, ClObject, Kind};
use super::queue::{Keep, Queue, Recorded};
use crate::cl::*;
use crate::vk::submit::{Prerecorded, Recorder};
use parking_lot::Mutex;
use std::sync::Arc;

#[repr(C)]
pub struct CommandBuffer {
    pub base: Base,
    /// The queue it was created for (its device, context and ordering).
    pub queue: Arc<Queue>,
    pub flags: cl_command_buffer_flags_khr,
    /// The properties array as given (with its 0; empty for NULL).
    pub properties: Vec<cl_command_buffer_properties_khr>,
    state: Mutex<State>,
}

impl ClObject for CommandBuffer {
    const KIND: Kind = Kind::CommandBuffer;
    const INVALID: i32 = CL_INVALID_COMMAND_BUFFER_KHR;
    fn base(&self) -> &Base {
        &self.base
    }
}

struct State {
    /// The recording, until finalized.
    rec: Option<Recorder>,
    /// The finalized commands.
    commands: Option<Arc<Prerecorded>>,
    /// The memory objects the commands use.
    keep: Keep,
    /// Sync points handed out: 1..=`sync_points`.
    sync_points: cl_sync_point_khr,
    /// The last command was a barrier: the next one waits for everything before it.
    after_barrier: bool,
    /// The events of enqueues not seen complete yet.
    enqueued: Vec<Arc<Event>>,
}

impl CommandBuffer {
    pub fn new(
        queue: &Arc<Queue>,
        flags: cl_command_buffer_flags_khr,
        properties: Vec<cl_command_buffer_properties_khr>,
    ) -> CLResult<Arc<CommandBuffer>> {
        let rec = Recorder::secondary(&queue.vk)?;
        Ok(Arc::new(CommandBuffer {
            base: Base::new(Kind::CommandBuffer),
            queue: queue.clone(),
            flags,
            properties,
            state: Mutex::new(State {
                rec: Some(rec),
                commands: None,
                keep: vec![],
                sync_points: 0,
                after_barrier: false,
                enqueued: vec![],
            }),
        }))
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.queue.context
    }

    fn simultaneous(&self) -> bool {
        self.flags & CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR != 0
    }

    /// CL_INVALID_OPERATION unless still recording (commands are recorded only then).
    pub fn check_recording(&self) -> CLResult<()> {
        check(self.state.lock().rec.is_some(), CL_INVALID_OPERATION)
    }

    /// Records one command with `record` (which returns the memory objects it uses), after
    /// the commands of `wait` (sync points of this buffer). Returns its sync point.
    ///
    /// Commands of a buffer made for an in-order queue run in order; otherwise a command
    /// waits only for its sync points or a barrier. Vulkan's barriers order everything before
    /// them with everything after: a command that waits gets one.
    pub fn record(
        &self,
        wait: &[cl_sync_point_khr],
        record: impl FnOnce(&mut Recorder) -> CLResult<Keep>,
    ) -> CLResult<cl_sync_point_khr> {
        self.record_as(wait, false, record)
    }

    /// `record`, of a barrier (the next command waits for every command before it) or not.
    fn record_as(
        &self,
        wait: &[cl_sync_point_khr],
        barrier: bool,
        record: impl FnOnce(&mut Recorder) -> CLResult<Keep>,
    ) -> CLResult<cl_sync_point_khr> {
        let mut state = self.state.lock();
        let state = &mut *state;
        let Some(rec) = state.rec.as_mut() else {
            return Err(ClError(CL_INVALID_OPERATION));
        };
        check(
            wait.iter().all(|&s| s >= 1 && s <= state.sync_points),
            CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
        )?;
        check(state.sync_points < cl_uint::MAX, CL_OUT_OF_RESOURCES)?;
        let in_order = self.queue.properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0;
        // The first command is ordered by the replay's own barrier (in the queue's batch).
        let ordered = (in_order || !wait.is_empty() || state.after_barrier) && rec.commands > 0;
        rec.unordered = !ordered;
        let keep = record(rec);
        rec.unordered = false;
        state.keep.extend(keep?);
        state.after_barrier = barrier;
        state.sync_points += 1;
        Ok(state.sync_points)
    }

    /// clCommandBarrierWithWaitListKHR: the next command waits for every command before it
    /// (a superset of the barrier's own wait list).
    pub fn barrier(&self, wait: &[cl_sync_point_khr]) -> CLResult<cl_sync_point_khr> {
        self.record_as(wait, true, |_| Ok(vec![]))
    }

    /// clFinalizeCommandBufferKHR.
    pub fn finalize(&self) -> CLResult<()> {
        let mut state = self.state.lock();
        let rec = state.rec.take().ok_or(ClError(CL_INVALID_OPERATION))?;
        state.commands = Some(Arc::new(rec.finish()?));
        Ok(())
    }

    /// Submits the batches holding its pending enqueues, so that polling its state makes
    /// progress (as polling an event's status does).
    pub fn flush(&self) -> CLResult<()> {
        // Taken out first: a flush may run callbacks, never under this buffer's lock.
        let pending = self.state.lock().enqueued.clone();
        for e in pending {
            if let Some(q) = &e.queue {
                q.flush_to(e.value)?;
            }
        }
        Ok(())
    }

    /// CL_COMMAND_BUFFER_STATE_KHR.
    pub fn state(&self) -> cl_command_buffer_state_khr {
        let mut state = self.state.lock();
        if state.rec.is_some() {
            return CL_COMMAND_BUFFER_STATE_RECORDING_KHR;
        }
        state
            .enqueued
            .retain(|e| e.status() > CL_COMPLETE as cl_int);
        if state.enqueued.is_empty() {
            CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR
        } else {
            CL_COMMAND_BUFFER_STATE_PENDING_KHR
        }
    }

    /// clEnqueueCommandBufferKHR on `queue` (this buffer's queue or a compatible one): one
    /// command executing the recorded ones. The buffer (and so the memory objects its
    /// commands use) lives until that command completes.
    pub fn enqueue(
        self: &Arc<Self>,
        queue: &Arc<Queue>,
        wait: &[Arc<Event>],
    ) -> CLResult<Arc<Event>> {
        check(
            self.state() != CL_COMMAND_BUFFER_STATE_RECORDING_KHR,
            CL_INVALID_OPERATION,
        )?;
        // "CL_INVALID_OPERATION if command_buffer was not created with the
        // CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR flag and is in the Pending state."
        check(
            self.simultaneous() || self.state() != CL_COMMAND_BUFFER_STATE_PENDING_KHR,
            CL_INVALID_OPERATION,
        )?;
        let commands = self.state.lock().commands.clone();
        let commands = commands.ok_or(ClError(CL_INVALID_OPERATION))?;
        let this = self.clone();
        let event = queue.enqueue(CL_COMMAND_COMMAND_BUFFER_KHR, wait, |rec| {
            rec.execute(&commands);
            Ok(Recorded {
                host: Some(Box::new(move || {
                    drop(this);
                    Ok(())
                })),
                keep: vec![],
            })
        })?;
        self.state.lock().enqueued.push(event.clone());
        Ok(event)
    }
}
