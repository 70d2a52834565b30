//! cl_khr_command_buffer: commands recorded once into Vulkan secondary command buffers and
//! replayed as one command of a queue's batch (`vkCmdExecuteCommands`), which then orders,
//! waits, profiles and completes like any other command. A replay does no per-command host
//! work: kernel arguments, descriptor sets and push constants were captured at record time.
//!
//! cl_khr_command_buffer_mutable_dispatch: a launch recorded with a mutable handle gets a
//! secondary command buffer of its own, re-recorded alone when clUpdateMutableCommandsKHR
//! changes it (its push constants are in the command buffer, its descriptor sets may be
//! pending): the other commands are not touched.

use super::context::Context;
use super::error::{check, CLResult, ClError};
use super::event::Event;
use super::kernel::{self, ArgValue, Kernel, NdRange};
use super::object::{Base, ClObject, Kind};
use super::queue::{Keep, Queue, Recorded};
use super::residence::{self, Use};
use super::svm::ExecInfo;
use crate::cl::*;
use crate::vk::submit::{Prerecorded, Recorder};
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

#[repr(C)]
pub struct CommandBuffer {
    pub base: Base,
    /// The queue it was created for (its device, context and ordering).
    pub queue: Arc<Queue>,
    pub flags: cl_command_buffer_flags_khr,
    /// CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR.
    pub asserts: cl_bitfield,
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
    /// Commands are recorded until the buffer is finalized.
    recording: bool,
    /// The recording of the commands since the last mutable launch (or the start).
    rec: Option<Recorder>,
    /// The recorded parts, in order: runs of commands, and mutable launches.
    parts: Vec<Part>,
    /// What a replay executes: the parts' command buffers (once finalized).
    commands: Option<Arc<Vec<Arc<Prerecorded>>>>,
    /// The memory objects the runs' commands use.
    keep: Keep,
    /// Sync points handed out: 1..=`sync_points`.
    sync_points: cl_sync_point_khr,
    /// The last command was a barrier: the next one waits for everything before it.
    after_barrier: bool,
}

struct Part {
    commands: Arc<Prerecorded>,
    /// A mutable launch: its handle, whether it waits for the commands before it, and the
    /// memory objects it uses.
    launch: Option<(Arc<MutableCommand>, bool, Keep)>,
}

/// A launch recorded with a mutable handle (cl_khr_command_buffer_mutable_dispatch).
#[repr(C)]
pub struct MutableCommand {
    pub base: Base,
    pub buffer: Weak<CommandBuffer>,
    pub kernel: Arc<Kernel>,
    /// CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR.
    pub fields: cl_bitfield,
    /// CL_MUTABLE_DISPATCH_ASSERTS_KHR, with the buffer's.
    pub asserts: cl_bitfield,
    /// The work-groups of the launch as recorded (for the assertion of no more).
    pub groups: usize,
    /// The properties array as given (with its 0; empty for NULL).
    pub properties: Vec<cl_command_properties_khr>,
    /// Its arguments (None: not set yet, an update will), geometry and SVM exec info.
    launch: Mutex<MutableLaunch>,
}

/// What an update may change of a mutable launch: its arguments (None: not set yet), its
/// geometry, its SVM exec info (the kernel's when recorded).
pub type MutableLaunch = (Vec<Option<ArgValue>>, NdRange, ExecInfo);

impl ClObject for MutableCommand {
    const KIND: Kind = Kind::MutableCommand;
    const INVALID: i32 = CL_INVALID_MUTABLE_COMMAND_KHR;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl MutableCommand {
    pub fn new(
        buffer: &Arc<CommandBuffer>,
        kernel: &Arc<Kernel>,
        (fields, asserts): (cl_bitfield, cl_bitfield),
        properties: Vec<cl_command_properties_khr>,
        args: Vec<Option<ArgValue>>,
        nd: NdRange,
    ) -> Arc<MutableCommand> {
        Arc::new(MutableCommand {
            base: Base::new(Kind::MutableCommand),
            buffer: Arc::downgrade(buffer),
            kernel: kernel.clone(),
            fields,
            asserts: asserts | buffer.asserts,
            groups: work_groups(&nd, nd.local.as_ref()),
            properties,
            launch: Mutex::new((args, nd, kernel.exec_info.lock().clone())),
        })
    }

    /// The launch's arguments, geometry and exec info as they are now.
    pub fn launch(&self) -> MutableLaunch {
        self.launch.lock().clone()
    }

    /// Every argument is set: the launch can run.
    fn complete(&self) -> bool {
        self.launch.lock().0.iter().all(Option::is_some)
    }

    /// Prepares the launch with `launch` (None: arguments still to come, or no work-items).
    /// Called outside the buffer's lock: a first launch may build the kernel's program.
    fn prepare(
        &self,
        queue: &Arc<Queue>,
        (args, nd, info): MutableLaunch,
    ) -> CLResult<Option<kernel::Prepared>> {
        match args.into_iter().collect::<Option<Vec<_>>>() {
            Some(args) => kernel::prepare_with(queue, &self.kernel, args, &nd, &info),
            None => Ok(None),
        }
    }
}

/// Records a prepared mutable launch into a command buffer of its own (nothing for none: a
/// launch whose arguments are still to come is not executable until an update sets them).
fn record_launch(
    queue: &Arc<Queue>,
    ordered: bool,
    launch: Option<kernel::Prepared>,
) -> CLResult<(Prerecorded, Keep)> {
    let mut rec = Recorder::secondary(&queue.vk)?;
    let mut keep = vec![];
    if let Some(launch) = launch {
        rec.unordered = !ordered;
        keep = launch.record(&mut rec)?.keep;
        rec.unordered = false;
    }
    Ok((rec.finish()?, keep))
}

impl CommandBuffer {
    pub fn new(
        queue: &Arc<Queue>,
        (flags, asserts): (cl_command_buffer_flags_khr, cl_bitfield),
        properties: Vec<cl_command_buffer_properties_khr>,
    ) -> CLResult<Arc<CommandBuffer>> {
        Ok(Arc::new(CommandBuffer {
            base: Base::new(Kind::CommandBuffer),
            queue: queue.clone(),
            flags,
            asserts,
            properties,
            state: Mutex::new(State {
                recording: true,
                rec: None,
                parts: vec![],
                commands: None,
                keep: vec![],
                sync_points: 0,
                after_barrier: false,
            }),
        }))
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.queue.context
    }

    /// CL_INVALID_OPERATION unless still recording (commands are recorded only then).
    pub fn check_recording(&self) -> CLResult<()> {
        check(self.state.lock().recording, CL_INVALID_OPERATION)
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
        let ordered = self.ordered(state, wait)?;
        let rec = match &mut state.rec {
            Some(rec) => rec,
            None => state.rec.insert(Recorder::secondary(&self.queue.vk)?),
        };
        rec.unordered = !ordered;
        let keep = record(rec);
        rec.unordered = false;
        state.keep.extend(keep?);
        state.after_barrier = barrier;
        state.sync_points += 1;
        Ok(state.sync_points)
    }

    /// Whether the next command waits for those before it (its `wait` checked): commands of
    /// a buffer made for an in-order queue run in order; otherwise a command waits only for
    /// its sync points or a barrier. The first is ordered by the replay's own barrier.
    fn ordered(&self, state: &State, wait: &[cl_sync_point_khr]) -> CLResult<bool> {
        check(state.recording, CL_INVALID_OPERATION)?;
        check(
            wait.iter().all(|&s| s >= 1 && s <= state.sync_points),
            CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
        )?;
        check(state.sync_points < cl_uint::MAX, CL_OUT_OF_RESOURCES)?;
        let in_order = self.queue.properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0;
        Ok((in_order || !wait.is_empty() || state.after_barrier) && state.sync_points > 0)
    }

    /// Records a mutable launch, in a command buffer of its own. Returns its sync point.
    pub fn record_mutable(
        &self,
        wait: &[cl_sync_point_khr],
        command: &Arc<MutableCommand>,
    ) -> CLResult<cl_sync_point_khr> {
        let launch = command.prepare(&self.queue, command.launch())?;
        let mut state = self.state.lock();
        let state = &mut *state;
        let ordered = self.ordered(state, wait)?;
        let (commands, keep) = record_launch(&self.queue, ordered, launch)?;
        close_run(state)?;
        state.parts.push(Part {
            commands: Arc::new(commands),
            launch: Some((command.clone(), ordered, keep)),
        });
        state.after_barrier = false;
        state.sync_points += 1;
        Ok(state.sync_points)
    }

    /// clUpdateMutableCommandsKHR after its checks: each command's new arguments and
    /// geometry. Each command changed is re-recorded (all or none of them); the next
    /// enqueues replay the new commands, those pending the old ones. The launches are
    /// prepared before the buffer's lock is taken, and what they replace is dropped after it
    /// is let go: the last reference to a memory object runs its destructor callbacks.
    pub fn update(&self, changes: Vec<(Arc<MutableCommand>, MutableLaunch)>) -> CLResult<()> {
        let mut prepared = Vec::with_capacity(changes.len());
        for (command, new) in changes {
            let launch = command.prepare(&self.queue, new.clone())?;
            prepared.push((command, launch, new));
        }
        let mut state = self.state.lock();
        check(!state.recording, CL_INVALID_OPERATION)?;
        let mut recorded = Vec::with_capacity(prepared.len());
        for (command, launch, new) in prepared {
            let i = state
                .parts
                .iter()
                .position(|p| {
                    p.launch
                        .as_ref()
                        .is_some_and(|l| Arc::ptr_eq(&l.0, &command))
                })
                .ok_or(ClError(CL_INVALID_MUTABLE_COMMAND_KHR))?;
            let ordered = state.parts[i].launch.as_ref().is_some_and(|l| l.1);
            let (commands, keep) = record_launch(&self.queue, ordered, launch)?;
            recorded.push((i, commands, keep, new));
        }
        let mut replaced = Vec::with_capacity(recorded.len());
        for (i, commands, keep, new) in recorded {
            let part = &mut state.parts[i];
            let old = std::mem::replace(&mut part.commands, Arc::new(commands));
            if let Some(l) = &mut part.launch {
                let args = std::mem::replace(&mut *l.0.launch.lock(), new);
                replaced.push((old, std::mem::replace(&mut l.2, keep), args));
            }
        }
        state.commands = Some(Arc::new(
            state.parts.iter().map(|p| p.commands.clone()).collect(),
        ));
        drop(state);
        drop(replaced);
        Ok(())
    }

    /// clCommandBarrierWithWaitListKHR: the next command waits for every command before it
    /// (a superset of the barrier's own wait list).
    pub fn barrier(&self, wait: &[cl_sync_point_khr]) -> CLResult<cl_sync_point_khr> {
        self.record_as(wait, true, |_| Ok(vec![]))
    }

    /// clFinalizeCommandBufferKHR.
    pub fn finalize(&self) -> CLResult<()> {
        let mut state = self.state.lock();
        check(state.recording, CL_INVALID_OPERATION)?;
        close_run(&mut state)?;
        state.recording = false;
        state.commands = Some(Arc::new(
            state.parts.iter().map(|p| p.commands.clone()).collect(),
        ));
        Ok(())
    }

    /// CL_COMMAND_BUFFER_STATE_KHR. (Since version 0.9.8 a buffer has no Pending state: it
    /// may be enqueued again while earlier enqueues are pending.)
    /// With mutable dispatch, a finalized buffer whose mutable launches still lack
    /// arguments is Finalized, not Executable, until updates set them.
    pub fn state(&self) -> cl_command_buffer_state_khr {
        let state = self.state.lock();
        let deferred = || {
            state
                .parts
                .iter()
                .any(|p| p.launch.as_ref().is_some_and(|l| !l.0.complete()))
        };
        if state.recording {
            CL_COMMAND_BUFFER_STATE_RECORDING_KHR
        } else if deferred() {
            CL_COMMAND_BUFFER_STATE_FINALIZED_KHR
        } else {
            CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR
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
        // "CL_INVALID_OPERATION if command_buffer is not in the Executable state."
        check(
            self.state() == CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR,
            CL_INVALID_OPERATION,
        )?;
        let (commands, mems) = {
            let state = self.state.lock();
            let launches = state.parts.iter().filter_map(|p| p.launch.as_ref());
            let mems: Keep = (state.keep.iter())
                .chain(launches.flat_map(|l| &l.2))
                .cloned()
                .collect();
            (state.commands.clone(), mems)
        };
        let commands = commands.ok_or(ClError(CL_INVALID_OPERATION))?;
        let this = self.clone();
        let uses = Use::arguments(&mems);
        residence::around(queue, &uses, wait, |wait| {
            queue.enqueue(CL_COMMAND_COMMAND_BUFFER_KHR, wait, |rec| {
                rec.execute(&commands);
                Ok(Recorded {
                    host: Some(Box::new(move || {
                        drop(this);
                        Ok(())
                    })),
                    keep: vec![],
                })
            })
        })
    }
}

/// Ends the run of commands being recorded, if any, as a part.
fn close_run(state: &mut State) -> CLResult<()> {
    if let Some(rec) = state.rec.take() {
        state.parts.push(Part {
            commands: Arc::new(rec.finish()?),
            launch: None,
        });
    }
    Ok(())
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        // The mutable commands' handles live as long as their buffer.
        for part in &self.state.get_mut().parts {
            if let Some((command, ..)) = &part.launch {
                let _ = super::object::release::<MutableCommand>(super::object::handle(command));
            }
        }
    }
}

/// The work-groups of a launch of `nd`'s global size with `local` (1 without one).
pub fn work_groups(nd: &NdRange, local: Option<&[usize; 3]>) -> usize {
    let Some(local) = local else {
        return 1;
    };
    (0..nd.work_dim as usize)
        .map(|d| nd.global[d].div_ceil(local[d].max(1)))
        .product()
}
