//! Device-side enqueue at run time (the compiler's side: `compiler::device_enqueue`).
//!
//! Vulkan has no way for a shader to start a dispatch, so a kernel's `enqueue_kernel` only
//! records the launch: each launch of a kernel of such a program gets a [`State`], a
//! host-visible buffer whose address is the kernel's hidden last argument, where
//! `device_enqueue.cl` appends a record per enqueue (the block's kernel, the ND-range, the
//! events it waits for and returns, the `__local` sizes, the block literal's bytes). When the
//! kernel has completed, its command's host part ([`run_children`]) launches the recorded
//! kernels in rounds: every record whose events have completed, at once, then those they
//! recorded, until none is left; only then is the parent's event complete, as the spec has it
//! ("a parent kernel's execution status is complete when it and all its child kernels have
//! finished"). The queue holds its later commands back until then (`Queue::enqueue_holding`).
//!
//! Children run after their parent has finished, whatever the flags ask (CLK_ENQUEUE_FLAGS_
//! NO_WAIT allows that too), and in the order of their dependencies. Device queues
//! (CL_QUEUE_ON_DEVICE) are [`DeviceQueue`] objects: the application creates them and passes
//! them as `queue_t` arguments, but every child of a launch goes through that launch's state.

use super::context::Context;
use super::device::Device;
use super::error::{CLResult, ClError};
use super::kernel::{ArgValue, Kernel, NdRange};
use super::object::{Base, ClObject, Kind};
use super::queue::Queue;
use crate::cl::*;
use crate::vk::memory::{Buffer, Placement};
use std::collections::HashMap;
use std::sync::Arc;

/// CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE (the spec's minimum, 16 KiB).
pub const PREFERRED_SIZE: u32 = 16 * 1024;
/// CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE (the full profile's minimum, 256 KiB).
pub const MAX_SIZE: u32 = 256 * 1024;
/// CL_DEVICE_MAX_ON_DEVICE_QUEUES.
pub const MAX_QUEUES: u32 = 4;
/// CL_DEVICE_MAX_ON_DEVICE_EVENTS: the events one launch (with its children) may create.
pub const MAX_EVENTS: u32 = 1024;

/// An on-device command queue (clCreateCommandQueueWithProperties with CL_QUEUE_ON_DEVICE):
/// host commands cannot be enqueued to it (its handle is not a `Queue`'s).
#[repr(C)]
pub struct DeviceQueue {
    pub base: Base,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    pub properties: cl_command_queue_properties,
    pub properties_array: Vec<cl_queue_properties>,
    /// CL_QUEUE_SIZE: the bytes of records a launch's children may take.
    pub size: u32,
}

impl ClObject for DeviceQueue {
    const KIND: Kind = Kind::DeviceQueue;
    const INVALID: i32 = CL_INVALID_COMMAND_QUEUE;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl DeviceQueue {
    pub fn new(
        context: &Arc<Context>,
        device: &Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
        size: u32,
    ) -> Arc<DeviceQueue> {
        Arc::new(DeviceQueue {
            base: Base::new(Kind::DeviceQueue),
            context: context.clone(),
            device: device.clone(),
            properties,
            properties_array,
            size,
        })
    }
}

/// The state's header, in 32-bit words (device_enqueue.cl's `__VKCL_*`).
const USED: usize = 0;
const CAPACITY: usize = 1;
const EVENTS: usize = 2;
const MAX_EVENTS_AT: usize = 3;
const RECORDS: usize = 4;
const STATUS: usize = 5;
const DEFAULT_QUEUE: usize = 6;
const HEADER_BYTES: usize = 32;
/// A record's fixed part in bytes (`__VKCL_RECORD_HEAD`).
const RECORD_HEAD: usize = 104;
/// The child numbers of a marker and of a profiling request.
const MARKER: u32 = 0xffff_ffff;
const PROFILING: u32 = 0xffff_fffe;
/// The records' room per byte of CL_QUEUE_SIZE. A record (104 bytes, the wait list, the
/// `__local` sizes, the literal) is larger than a GPU's own command packet, and the room is
/// for one round's records: the conformance suite's nested launches write 4,096 records of
/// ~140 bytes in one round into a queue of CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE.
const RECORDS_PER_QUEUE_BYTE: usize = 4;
/// The bytes of an event's entry (device_enqueue.cl's `__VKCL_EVENT_BYTES`).
const EVENT_BYTES: usize = 16;
/// A status word of an event that is not a user event.
const NOT_USER: u32 = 0x7fff_ffff;

/// One launch's device queue state (see the module comment).
pub struct State {
    buffer: Arc<Buffer>,
    capacity: usize,
}

/// A recorded enqueue.
struct Record {
    child: u32,
    dims: u32,
    shape: [[u64; 3]; 3],
    waits: Vec<u32>,
    event: u32,
    locals: Vec<u32>,
    literal: Vec<u8>,
}

impl State {
    /// A state for a launch on `queue`'s device, sized by the context's default device queue
    /// for it (which `get_default_queue` returns; without one, it returns CLK_NULL_QUEUE).
    pub fn new(queue: &Queue) -> CLResult<State> {
        let default = queue.context.default_device_queue(&queue.device);
        let size = default.as_ref().map_or(PREFERRED_SIZE, |q| q.size) as usize;
        let capacity = RECORDS_PER_QUEUE_BYTE * size;
        let status = EVENT_BYTES * MAX_EVENTS as usize;
        let size = HEADER_BYTES + status + capacity;
        let buffer = Buffer::new(&queue.vk, size as u64, Placement::Readback, "device queue")?;
        let state = State {
            buffer: Arc::new(buffer),
            capacity,
        };
        for (word, value) in [
            (USED, 0),
            (CAPACITY, capacity as u32),
            (EVENTS, 0),
            (MAX_EVENTS_AT, MAX_EVENTS),
            (RECORDS, (HEADER_BYTES + status) as u32),
            (STATUS, HEADER_BYTES as u32),
            (DEFAULT_QUEUE, default.is_some() as u32),
        ] {
            state.write(word, value);
        }
        for e in 1..=MAX_EVENTS {
            let at = state.event_word(e);
            for (i, w) in [NOT_USER, 0, 0, 0].into_iter().enumerate() {
                state.write(at + i, w);
            }
        }
        Ok(state)
    }

    /// The hidden argument of the launch: the state's device address.
    pub fn argument(&self) -> CLResult<ArgValue> {
        let address = self
            .buffer
            .device_address()
            .ok_or(ClError(CL_INVALID_OPERATION))?;
        Ok(ArgValue::Bytes(address.to_le_bytes().into()))
    }

    fn base(&self) -> *mut u8 {
        self.buffer
            .host()
            .expect("a Readback buffer is mapped")
            .as_ptr()
    }

    fn read(&self, word: usize) -> u32 {
        // SAFETY: within the mapped buffer; no command writing it is running (the host reads
        // it between rounds).
        unsafe { std::ptr::read_volatile(self.base().cast::<u32>().add(word)) }
    }

    fn write(&self, word: usize, value: u32) {
        // SAFETY: as `read`.
        unsafe { std::ptr::write_volatile(self.base().cast::<u32>().add(word), value) }
    }

    fn bytes(&self, at: usize, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        // SAFETY: as `read`; `at + len` is within the records (checked by the caller).
        unsafe { std::ptr::copy_nonoverlapping(self.base().add(at), v.as_mut_ptr(), len) };
        v
    }

    /// The records appended since the last call, which empties the list.
    fn take_records(&self) -> Vec<Record> {
        let used = (self.read(USED) as usize).min(self.capacity);
        let start = self.read(RECORDS) as usize;
        let mut records = vec![];
        let mut at = 0;
        while at + RECORD_HEAD <= used {
            let word = |i: usize| self.read((start + at) / 4 + i);
            let size = word(0) as usize;
            if size < RECORD_HEAD || at + size > used {
                break;
            }
            let (nevents, nlocal, literal) = (word(4) as usize, word(6) as usize, word(7) as usize);
            let tail = (start + at + RECORD_HEAD) / 4;
            let long = |i: usize| {
                let w = (start + at) / 4 + 8 + 2 * i;
                self.read(w) as u64 | (self.read(w + 1) as u64) << 32
            };
            let head = (RECORD_HEAD + 4 * (nevents + nlocal)).next_multiple_of(8);
            records.push(Record {
                child: word(1),
                dims: word(3),
                shape: [0, 1, 2].map(|k| [0, 1, 2].map(|d| long(3 * k + d))),
                waits: (0..nevents).map(|i| self.read(tail + i)).collect(),
                event: word(5),
                locals: (0..nlocal).map(|i| self.read(tail + nevents + i)).collect(),
                literal: self.bytes(start + at + head, literal.min(size - head)),
            });
            at += size;
        }
        self.write(USED, 0);
        records
    }

    /// The first word of event `event`'s entry: its status (a user event's as its kernels
    /// set it, a command's once it has ended), then its command's execution time in ns.
    fn event_word(&self, event: u32) -> usize {
        (HEADER_BYTES + EVENT_BYTES * (event as usize - 1)) / 4
    }

    /// Records that event `event`'s command ended with `status` after `ns`, for
    /// capture_event_profiling_info of an event that has ended.
    fn ended(&self, event: u32, status: cl_int, ns: u64) {
        let at = self.event_word(event);
        self.write(at + 2, ns as u32);
        self.write(at + 3, (ns >> 32) as u32);
        self.write(at, status as u32);
    }

    /// The status a user event (create_user_event) was given: None while it has none.
    fn user_status(&self, event: u32) -> Option<cl_int> {
        let word = self.read(self.event_word(event));
        match word {
            NOT_USER => None,
            w if w as cl_int == CL_SUBMITTED as cl_int => None,
            w => Some(w as cl_int),
        }
    }
}

/// Where an event of the launch stands: its status once known, its command's times.
#[derive(Default)]
struct Events {
    done: HashMap<u32, (cl_int, u64, u64)>,
}

impl Events {
    /// The status of event `e`: that of its command once it has run, else of the user event.
    fn status(&self, state: &State, e: u32) -> Option<cl_int> {
        match self.done.get(&e) {
            Some(&(s, _, _)) => Some(s),
            None if e == 0 || e > MAX_EVENTS => Some(CL_INVALID_EVENT),
            None => state.user_status(e),
        }
    }
}

/// Launches the children `parent`'s launch recorded in `state`, and theirs, round by round,
/// on `queue` (see the module comment). Err: a child could not be launched, or children wait
/// for events that never complete.
pub fn run_children(queue: &Arc<Queue>, parent: &Arc<Kernel>, state: &State) -> CLResult<()> {
    let mut pending = state.take_records();
    let mut events = Events::default();
    let mut failed = None;
    while !pending.is_empty() {
        let (ready, waiting): (Vec<Record>, Vec<Record>) = pending
            .into_iter()
            .partition(|r| r.waits.iter().all(|&w| events.status(state, w).is_some()));
        if ready.is_empty() {
            // Events that will never complete: user events no kernel set.
            let (name, n) = (&parent.name, waiting.len());
            log::warn!(target: "launch", "{name}: {n} enqueues wait for events that never end");
            return Err(ClError(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST));
        }
        let start = super::event::host_ns();
        let ran = launch_round(queue, parent, state, &ready, &events);
        let end = super::event::host_ns();
        for (r, status) in ready.iter().zip(&ran) {
            if *status < 0 {
                failed.get_or_insert(*status);
            }
            if r.event != 0 {
                events.done.insert(r.event, (*status, start, end));
                state.ended(r.event, *status, end - start);
            }
        }
        pending = waiting;
        pending.extend(state.take_records());
    }
    match failed {
        Some(s) => Err(ClError(s)),
        None => Ok(()),
    }
}

/// Launches `ready` (records whose events have all ended) as one submission; the status of
/// each (CL_COMPLETE, or why it failed).
fn launch_round(
    queue: &Arc<Queue>,
    parent: &Arc<Kernel>,
    state: &State,
    ready: &[Record],
    events: &Events,
) -> Vec<cl_int> {
    // The literals (with a profiling request's two times after it), 8-byte aligned.
    let mut literals: Vec<u8> = vec![];
    let mut at = vec![];
    for r in ready {
        at.push(literals.len());
        literals.extend_from_slice(&r.literal);
        if r.child == PROFILING {
            let (_, start, end) = events
                .done
                .get(r.waits.first().unwrap_or(&0))
                .copied()
                .unwrap_or_default();
            literals.resize(at[at.len() - 1] + 16, 0);
            literals.extend_from_slice(&(end - start).to_le_bytes());
            literals.extend_from_slice(&(end - start).to_le_bytes());
        }
        literals.resize(literals.len().next_multiple_of(8), 0);
    }
    let run = || -> CLResult<Vec<cl_int>> {
        let mut status = vec![CL_COMPLETE as cl_int; ready.len()];
        let buffer = Buffer::new(
            &queue.vk,
            literals.len().max(8) as u64,
            Placement::Upload,
            "block literals",
        )?;
        let host = buffer.host().ok_or(ClError(CL_OUT_OF_RESOURCES))?;
        // SAFETY: a new mapped buffer of at least this length.
        unsafe { std::ptr::copy_nonoverlapping(literals.as_ptr(), host.as_ptr(), literals.len()) };
        let address = buffer
            .device_address()
            .ok_or(ClError(CL_INVALID_OPERATION))?;
        let dq = state.argument()?;
        let mut rec = queue.side_recorder()?;
        let mut kept = vec![];
        let mut hosts = vec![];
        for (i, r) in ready.iter().enumerate() {
            // A wait that failed fails the command, which does not run.
            if r.waits
                .iter()
                .any(|&w| events.status(state, w).is_some_and(|s| s < 0))
            {
                status[i] = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
                continue;
            }
            let (kernel, nd) = match r.child {
                MARKER => continue,
                PROFILING => (
                    parent.child(crate::compiler::device_enqueue::PROFILING)?,
                    one(),
                ),
                n => (
                    parent.child(&format!("{}{n}", crate::compiler::device_enqueue::CHILD))?,
                    shape(r),
                ),
            };
            let mut args = vec![ArgValue::Pointer(address + at[i] as u64)];
            args.extend(r.locals.iter().map(|&l| ArgValue::Local(l as usize)));
            args.push(dq.clone());
            match super::kernel::prepare(queue, &kernel, args, &nd) {
                Ok(Some(p)) => {
                    kept.extend(p.memory());
                    let recorded = p.record(&mut rec)?;
                    kept.extend(recorded.keep);
                    hosts.extend(recorded.host);
                }
                Ok(None) => {}
                Err(e) => status[i] = e.0,
            }
        }
        rec.hold(&Arc::new(buffer));
        rec.submit_and_wait()?;
        for h in hosts {
            h()?;
        }
        drop(kept);
        Ok(status)
    };
    run().unwrap_or_else(|e| vec![e.0; ready.len()])
}

/// A record's ND-range (a local size of 0 leaves the work-group size to the runtime).
fn shape(r: &Record) -> NdRange {
    let [offset, global, local] = r.shape.map(|v| v.map(|x| x as usize));
    NdRange {
        work_dim: r.dims,
        offset,
        global,
        local: local
            .iter()
            .take(r.dims as usize)
            .all(|&l| l != 0)
            .then_some(local.map(|l| l.max(1))),
    }
}

/// One work-item.
fn one() -> NdRange {
    NdRange {
        work_dim: 1,
        offset: [0; 3],
        global: [1, 1, 1],
        local: Some([1, 1, 1]),
    }
}
