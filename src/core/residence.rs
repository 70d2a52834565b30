//! Where the bytes of a buffer or image of a multi-device context are up to date (issue 22).
//!
//! In a context of several Vulkan devices, a buffer without host-pointer flags has a copy on
//! each device, in that device's own memory (`Copies`: the first device's made with the
//! buffer, the others at their first use); so has every image (its Vulkan images per device
//! are the image's own, `PerDevice`, and it is tracked as a whole). Per byte range it tracks which copies hold the
//! latest data (`Segment::valid`) and, per copy, the command after which it does
//! (`Segment::ready`). A command on a device first brings the ranges it reads there
//! (`before`): a copy on the device holding them into host memory both devices import, then
//! from there into this device's copy, ordered by the events that already order the
//! commands; afterwards (`after`), what it wrote is up to date on its device only.
//!
//! The state follows the order in which commands are enqueued: an application that orders
//! its commands on different devices with events (as the spec asks of commands sharing
//! memory across queues) enqueues a writer before the readers that wait for it. Ranges are
//! tracked apart, so that sub-buffers of one buffer written on different devices at once
//! each keep their own data.

use super::context::Context;
use super::error::{CLResult, ClError};
use super::event::Event;
use super::image;
use super::memory::Mem;
use super::queue::{Queue, Recorded};
use crate::cl::*;
use crate::vk::device::Device as VkDevice;
use crate::vk::image::{Image as VkImage, TexelCopy};
use crate::vk::memory::{Buffer, Placement};
use crate::vk::submit::{now, Recorder};
use parking_lot::Mutex;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// What a command does with the bytes it uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Writes some of them (so the rest must be up to date too).
    Write,
    /// Writes every one of them: nothing needs bringing first.
    Overwrite,
}

/// Bytes of a memory object a command uses.
pub struct Use<'a> {
    mem: &'a Arc<Mem>,
    /// In the buffer holding the object's bytes.
    range: Range<u64>,
    access: Access,
}

impl<'a> Use<'a> {
    /// The whole object.
    pub fn whole(mem: &'a Arc<Mem>, access: Access) -> Use<'a> {
        Use::bytes(mem, 0, mem.size, access)
    }

    /// `size` bytes of the object from `offset`.
    pub fn bytes(mem: &'a Arc<Mem>, offset: usize, size: usize, access: Access) -> Use<'a> {
        let start = mem.at(offset);
        Use {
            mem,
            range: start..start + size as u64,
            access,
        }
    }

    /// A launch's memory objects, those with copies per device: written unless read-only
    /// for kernels. (Empty, without allocating, in single-device contexts.)
    pub fn arguments(mems: &'a [Arc<Mem>]) -> Vec<Use<'a>> {
        let access = |m: &Mem| match m.flags & CL_MEM_READ_ONLY {
            0 => Access::Write,
            _ => Access::Read,
        };
        mems.iter()
            .filter(|m| m.copies().is_some())
            .map(|m| Use::whole(m, access(m)))
            .collect()
    }
}

/// The per-device copies of a buffer or image and where its bytes are up to date.
pub struct Copies {
    /// The context's Vulkan devices; the first one's copy is the buffer's `storage`.
    devices: Vec<Arc<VkDevice>>,
    /// A buffer's other devices' copies, made at their first use (an image's are its own).
    others: Vec<OnceLock<Arc<Buffer>>>,
    /// Per device, where a buffer's copy goes (empty for an image).
    placement: Vec<Placement>,
    size: u64,
    ranges: Mutex<BTreeMap<u64, Segment>>,
    /// The host memory the last migration went through, for the next (`transit`).
    transit: Mutex<Option<Arc<Mem>>>,
}

/// A range of bytes (from its key in `Copies::ranges` to `end`) alike on every copy.
#[derive(Clone)]
struct Segment {
    end: u64,
    /// A bit per device whose copy holds the latest data.
    valid: u64,
    /// Per device: the command after which its copy holds it (None: since the buffer was
    /// made).
    ready: Vec<Option<Arc<Event>>>,
}

/// A range to bring to a device: from the copy on device `from`, once `ready` is.
struct Missing {
    range: Range<u64>,
    from: usize,
    ready: Option<Arc<Event>>,
}

impl Copies {
    /// Copies of `size` bytes on `devices`, placed there as `placement` says; `initialised`:
    /// only the first device's copy holds the buffer's data (its initial contents), else
    /// every copy does (contents undefined).
    pub fn new(
        devices: Vec<Arc<VkDevice>>,
        placement: Vec<Placement>,
        size: u64,
        initialised: bool,
    ) -> Copies {
        let n = devices.len();
        let valid = if initialised { 1 } else { (1 << n) - 1 };
        let whole = Segment {
            end: size.max(1),
            valid,
            ready: vec![None; n],
        };
        Copies {
            others: (1..n).map(|_| OnceLock::new()).collect(),
            devices,
            placement,
            size,
            ranges: Mutex::new(BTreeMap::from([(0, whole)])),
            transit: Mutex::new(None),
        }
    }

    fn index(&self, device: &Arc<VkDevice>) -> CLResult<usize> {
        index(&self.devices, device)
    }

    pub fn devices(&self) -> &[Arc<VkDevice>] {
        &self.devices
    }

    /// The copy on `device` (`first`: the first device's), made now if it is the first use.
    pub fn on<'a>(
        &'a self,
        first: &'a Arc<Buffer>,
        device: &Arc<VkDevice>,
    ) -> CLResult<&'a Arc<Buffer>> {
        let i = self.index(device)?;
        let Some(slot) = i.checked_sub(1).map(|i| &self.others[i]) else {
            return Ok(first);
        };
        if let Some(b) = slot.get() {
            return Ok(b);
        }
        let b = Buffer::new(device, self.size.max(1), self.placement[i], "cl_mem copy")?;
        log::debug!(target: "memory", "a copy of {} bytes on device {i}", self.size);
        Ok(slot.get_or_init(|| Arc::new(b)))
    }

    /// Host memory of at least `len` bytes that every device imports, for a migration: the
    /// last one's where no migration still uses it (allocating and importing cost more than
    /// copying a few MiB), else a new one, kept for the next.
    fn transit(&self, context: &Arc<Context>, len: u64) -> CLResult<Arc<Mem>> {
        let mut kept = self.transit.lock();
        // Only this lock clones it: a count of one means no command holds it.
        let free = kept
            .as_ref()
            .filter(|t| Arc::strong_count(t) == 1 && t.size as u64 >= len);
        if let Some(t) = free {
            return Ok(t.clone());
        }
        let t = Mem::transit(context, len as usize)?;
        *kept = Some(t.clone());
        Ok(t)
    }

    /// The ranges of `range` whose latest data `d`'s copy lacks, with where to take it from
    /// (adjacent ranges from the same copy and command merged).
    fn missing(&self, range: &Range<u64>, d: usize) -> Vec<Missing> {
        let mut ranges = self.ranges.lock();
        let mut missing: Vec<Missing> = vec![];
        for (&start, s) in span(&mut ranges, range) {
            if s.valid & (1 << d) != 0 {
                continue;
            }
            let from = s.valid.trailing_zeros() as usize;
            let ready = s.ready[from].clone();
            match missing.last_mut() {
                Some(m) if m.range.end == start && m.from == from && same(&m.ready, &ready) => {
                    m.range.end = s.end
                }
                _ => missing.push(Missing {
                    range: start..s.end,
                    from,
                    ready,
                }),
            }
        }
        missing
    }

    /// `range` is up to date on `d` after `event` too.
    fn arrived(&self, range: &Range<u64>, d: usize, event: &Arc<Event>) {
        let mut ranges = self.ranges.lock();
        for (_, s) in span(&mut ranges, range) {
            s.valid |= 1 << d;
            s.ready[d] = Some(event.clone());
        }
        merge(&mut ranges);
    }

    /// `range` was written on `d` by `event`: up to date there only.
    fn written(&self, range: &Range<u64>, d: usize, event: &Arc<Event>) {
        let mut ranges = self.ranges.lock();
        let n = self.devices.len();
        for (_, s) in span(&mut ranges, range) {
            s.valid = 1 << d;
            s.ready = vec![None; n];
            s.ready[d] = Some(event.clone());
        }
        merge(&mut ranges);
    }
}

fn index(devices: &[Arc<VkDevice>], device: &Arc<VkDevice>) -> CLResult<usize> {
    devices
        .iter()
        .position(|d| Arc::ptr_eq(d, device))
        .ok_or_else(|| {
            log::warn!(target: "api", "a memory object of another device of the context");
            ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        })
}

/// A Vulkan object of a memory object (an image, a texel view) on each device that uses it:
/// the first device's made with the object, the others by `make` at their first use.
pub struct PerDevice<T> {
    devices: Vec<Arc<VkDevice>>,
    first: Arc<T>,
    others: Vec<OnceLock<Arc<T>>>,
    make: Make<T>,
}

/// What makes a `PerDevice` object on another device.
type Make<T> = Box<dyn Fn(&Arc<VkDevice>) -> CLResult<T> + Send + Sync>;

impl<T> PerDevice<T> {
    /// `first` on `devices[0]`; on the other `devices`, what `make` makes (elsewhere, none).
    pub fn new(
        devices: Vec<Arc<VkDevice>>,
        first: T,
        make: impl Fn(&Arc<VkDevice>) -> CLResult<T> + Send + Sync + 'static,
    ) -> PerDevice<T> {
        PerDevice {
            others: (1..devices.len()).map(|_| OnceLock::new()).collect(),
            devices,
            first: Arc::new(first),
            make: Box::new(make),
        }
    }

    pub fn first(&self) -> &Arc<T> {
        &self.first
    }

    pub fn devices(&self) -> &[Arc<VkDevice>] {
        &self.devices
    }

    /// The object on `device` (CL_MEM_OBJECT_ALLOCATION_FAILURE on a device it cannot be on).
    pub fn on(&self, device: &Arc<VkDevice>) -> CLResult<&Arc<T>> {
        let Some(slot) = index(&self.devices, device)?.checked_sub(1) else {
            return Ok(&self.first);
        };
        let slot = &self.others[slot];
        if let Some(x) = slot.get() {
            return Ok(x);
        }
        let x = (self.make)(device)?;
        Ok(slot.get_or_init(|| Arc::new(x)))
    }
}

fn same(a: &Option<Arc<Event>>, b: &Option<Arc<Event>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// The segments covering `range`, split at its ends.
fn span<'a>(
    ranges: &'a mut BTreeMap<u64, Segment>,
    range: &Range<u64>,
) -> std::collections::btree_map::RangeMut<'a, u64, Segment> {
    for at in [range.start, range.end] {
        let Some((_, s)) = ranges.range_mut(..at).next_back() else {
            continue;
        };
        if s.end > at {
            let tail = Segment {
                end: s.end,
                ..s.clone()
            };
            s.end = at;
            ranges.insert(at, tail);
        }
    }
    ranges.range_mut(range.start..range.end)
}

/// Joins neighbouring segments that are alike.
fn merge(ranges: &mut BTreeMap<u64, Segment>) {
    let alike = |a: &Segment, b: &Segment| {
        a.valid == b.valid && a.ready.iter().zip(&b.ready).all(|(x, y)| same(x, y))
    };
    let old = std::mem::take(ranges);
    for (start, s) in old {
        match ranges.last_entry() {
            Some(mut last) if alike(last.get(), &s) => last.get_mut().end = s.end,
            _ => {
                ranges.insert(start, s);
            }
        }
    }
}

/// The wait list of a command on `queue` using `uses`: `wait`, and the copies that bring the
/// bytes it reads to the queue's device (enqueued now).
pub fn before<'w>(
    queue: &Arc<Queue>,
    uses: &[Use],
    wait: &'w [Arc<Event>],
) -> CLResult<Cow<'w, [Arc<Event>]>> {
    if !uses.iter().any(|u| u.mem.copies().is_some()) {
        return Ok(Cow::Borrowed(wait));
    }
    let mut waits = wait.to_vec();
    for u in uses {
        let Some(copies) = u.mem.copies() else {
            continue;
        };
        if u.access == Access::Overwrite {
            continue;
        }
        let d = copies.index(&queue.vk)?;
        let range = clamp(&u.range, copies.size);
        for m in copies.missing(&range, d) {
            let event = bring(queue, u.mem, copies, &m)?;
            copies.arrived(&m.range, d, &event);
            waits.push(event);
        }
    }
    Ok(Cow::Owned(waits))
}

/// After the command (`event`) on `queue` using `uses` is enqueued: what it writes is up to
/// date on its device only.
pub fn after(queue: &Arc<Queue>, uses: &[Use], event: &Arc<Event>) {
    for u in uses.iter().filter(|u| u.access != Access::Read) {
        let Some(copies) = u.mem.copies() else {
            continue;
        };
        if let Ok(d) = copies.index(&queue.vk) {
            copies.written(&clamp(&u.range, copies.size), d, event);
        }
    }
}

/// `command`, given its wait list, on `queue` using `uses` (`before`, then `after`).
pub fn around(
    queue: &Arc<Queue>,
    uses: &[Use],
    wait: &[Arc<Event>],
    command: impl FnOnce(&[Arc<Event>]) -> CLResult<Arc<Event>>,
) -> CLResult<Arc<Event>> {
    let waits = before(queue, uses, wait)?;
    let event = command(&waits)?;
    after(queue, uses, &event);
    Ok(event)
}

/// clEnqueueMigrateMemObjects: buffers with copies per device are brought to the queue's
/// device (CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED: without their contents, which are then
/// undefined everywhere), or, with CL_MIGRATE_MEM_OBJECT_HOST, left where they are (the host
/// reaches them through maps and reads wherever they are). Other objects live in memory every
/// device of the context reaches: nothing moves; the command still orders like any other.
pub fn migrate(
    queue: &Arc<Queue>,
    mems: Vec<Arc<Mem>>,
    flags: cl_mem_migration_flags,
    wait: &[Arc<Event>],
) -> CLResult<Arc<Event>> {
    let access = match flags {
        _ if flags & CL_MIGRATE_MEM_OBJECT_HOST != 0 => None,
        _ if flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED != 0 => Some(Access::Overwrite),
        _ => Some(Access::Read),
    };
    let uses: Vec<Use> = match access {
        Some(access) => mems.iter().map(|m| Use::whole(m, access)).collect(),
        None => vec![],
    };
    around(queue, &uses, wait, |wait| {
        queue.enqueue_marker(CL_COMMAND_MIGRATE_MEM_OBJECTS, wait, mems.clone())
    })
}

fn clamp(range: &Range<u64>, size: u64) -> Range<u64> {
    range.start.min(size)..range.end.min(size)
}

/// The two ends of a copy between devices: a buffer's copies, or an image's Vulkan images
/// (whole).
#[derive(Clone)]
enum Ends {
    Bytes(Arc<Buffer>, Arc<Buffer>),
    Texels(Arc<VkImage>, Arc<VkImage>, TexelCopy),
}

impl Ends {
    fn new(mem: &Arc<Mem>, from: &Arc<VkDevice>, to: &Arc<VkDevice>) -> CLResult<Ends> {
        if let Some(image) = image::texel_owner(mem) {
            let (a, b) = (image::vk_image(image, from)?, image::vk_image(image, to)?);
            let whole = a.region([0; 3], a.cl_region()).at(0);
            return Ok(Ends::Texels(a, b, whole));
        }
        let (a, b) = (mem.storage_on(from)?, mem.storage_on(to)?);
        Ok(Ends::Bytes(a.clone(), b.clone()))
    }

    /// Records the copy of `range` from the source into `transit` (at 0).
    fn out(&self, rec: &mut Recorder, range: &Range<u64>, transit: &Arc<Buffer>) {
        match self {
            Ends::Bytes(from, _) => rec.copy_buffer(from, range.start, transit, 0, len(range)),
            Ends::Texels(from, _, whole) => rec.image_to_buffer(from, transit, &[*whole]),
        }
    }

    /// Records the copy of `range` from `transit` into the destination.
    fn back(&self, rec: &mut Recorder, range: &Range<u64>, transit: &Arc<Buffer>) {
        match self {
            Ends::Bytes(_, to) => rec.copy_buffer(transit, 0, to, range.start, len(range)),
            Ends::Texels(_, to, whole) => rec.buffer_to_image(transit, to, &[*whole]),
        }
    }
}

fn len(range: &Range<u64>) -> u64 {
    range.end - range.start
}

/// Enqueues the copies of `m.range` of `mem` (an image's: all of it) from device `m.from` to
/// `queue`'s, through host memory both import: the first done on the source device outside
/// any queue once the command after which the source is up to date has completed (now, or
/// from that command's completion), the second on `queue` after it. Returns the second's
/// event. (Enqueued on that command's queue instead, the first copy would wait for whatever
/// that queue holds after the command too: a command behind a user event the application
/// sets only after this one's end would never let it go.)
fn bring(queue: &Arc<Queue>, mem: &Arc<Mem>, copies: &Copies, m: &Missing) -> CLResult<Arc<Event>> {
    let source = copies.devices[m.from].clone();
    let transit = copies.transit(&queue.context, len(&m.range))?;
    let ends = Ends::new(mem, &source, &queue.vk)?;
    let (out, back) = (transit.storage_on(&source)?, transit.storage_on(&queue.vk)?);
    let pending = m
        .ready
        .as_ref()
        .filter(|e| e.status() != CL_COMPLETE as cl_int);
    let wait = match pending {
        Some(ready) => {
            let copied = Event::new_user(&queue.context);
            // The transit memory is held until the copy is done (no other migration takes it).
            let (done, transit, range) = (copied.clone(), transit.clone(), m.range.clone());
            let ends = ends.clone();
            ready.on_status(
                CL_COMPLETE as cl_int,
                Box::new(move |status| {
                    let copy = || {
                        let out = transit.storage_on(&source)?;
                        Ok::<_, ClError>(now(&source, |rec| ends.out(rec, &range, out))?)
                    };
                    let status = match status {
                        s if s < 0 => s,
                        _ => copy().map_or(CL_OUT_OF_RESOURCES, |()| CL_COMPLETE as cl_int),
                    };
                    done.set_status(status);
                }),
            );
            vec![copied]
        }
        None => {
            now(&source, |rec| ends.out(rec, &m.range, out))?;
            vec![]
        }
    };
    log::debug!(target: "memory", "bringing {:?} from device {}", m.range, m.from);
    queue.enqueue(CL_COMMAND_MIGRATE_MEM_OBJECTS, &wait, |rec| {
        ends.back(rec, &m.range, back);
        Ok(Recorded {
            host: None,
            keep: vec![mem.clone(), transit.clone()],
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(segments: &[(u64, u64, u64)]) -> BTreeMap<u64, Segment> {
        segments
            .iter()
            .map(|&(start, end, valid)| {
                let ready = vec![None; 2];
                (start, Segment { end, valid, ready })
            })
            .collect()
    }

    fn shape(r: &BTreeMap<u64, Segment>) -> Vec<(u64, u64, u64)> {
        r.iter().map(|(&s, seg)| (s, seg.end, seg.valid)).collect()
    }

    #[test]
    fn span_splits_at_both_ends_and_merge_joins_alike_neighbours() {
        let mut r = ranges(&[(0, 100, 3)]);
        for (_, s) in span(&mut r, &(10..20)) {
            s.valid = 1;
        }
        assert_eq!(shape(&r), [(0, 10, 3), (10, 20, 1), (20, 100, 3)]);
        for (_, s) in span(&mut r, &(5..30)) {
            s.valid = 2;
        }
        assert_eq!(
            shape(&r),
            [
                (0, 5, 3),
                (5, 10, 2),
                (10, 20, 2),
                (20, 30, 2),
                (30, 100, 3)
            ]
        );
        merge(&mut r);
        assert_eq!(shape(&r), [(0, 5, 3), (5, 30, 2), (30, 100, 3)]);
        for (_, s) in span(&mut r, &(0..100)) {
            s.valid = 1;
        }
        merge(&mut r);
        assert_eq!(shape(&r), [(0, 100, 1)]);
    }
}
