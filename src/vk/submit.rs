//! Recording one batch of commands into a command buffer and submitting it with a timeline
//! semaphore signal. Every command is separated from the previous by a full memory barrier
//! (in-order queue semantics); the batch starts with one, which also orders it after earlier
//! submissions on the same VkQueue.

use super::device::{Device, Timeline};
use super::image::{Image, Sampler, TexelView};
use super::memory::{Buffer, Placement};
use super::pipeline::{Descriptor, KernelLayout, Pipeline, SetBindings};
use super::staging::{Lease, CHUNK};
use super::vk;
use super::Result;
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::sync::Arc;

/// A buffer binding's range reaching to the end of the buffer.
pub const WHOLE_SIZE: u64 = vk::WHOLE_SIZE;

/// A Vulkan object of vkcl's that commands use. The recorder holds each one it records until
/// its batch has completed (or is dropped unsubmitted), so no caller keeps a list of them.
pub trait Resource: Send + Sync + 'static {}

impl Resource for Buffer {}
impl Resource for Lease {}
impl Resource for Image {}
impl Resource for TexelView {}
impl Resource for Pipeline {}
impl Resource for KernelLayout {}

/// A buffer commands copy from, into or fill: vkcl's buffers and staging leases.
pub trait AsBuffer: Resource {
    fn raw_buffer(&self) -> vk::Buffer;
}

impl AsBuffer for Buffer {
    fn raw_buffer(&self) -> vk::Buffer {
        self.raw
    }
}

impl AsBuffer for Lease {
    fn raw_buffer(&self) -> vk::Buffer {
        self.raw
    }
}

/// A buffer range bound to a descriptor.
#[derive(Clone)]
pub struct BufferBinding {
    pub ty: Descriptor,
    pub buffer: Arc<Buffer>,
    pub offset: u64,
    pub range: u64,
}

/// Anything bound to a descriptor of a kernel.
#[derive(Clone)]
pub enum Binding {
    Buffer(BufferBinding),
    /// An image bound as `ty` (its sampled view, or its storage view), in the GENERAL layout.
    Image(Descriptor, Arc<Image>),
    Sampler(Sampler),
    /// A texel-buffer view bound as `ty` (uniform or storage texel buffer).
    Texels(Descriptor, Arc<TexelView>),
}

impl From<BufferBinding> for Binding {
    fn from(b: BufferBinding) -> Binding {
        Binding::Buffer(b)
    }
}

/// Bindings are equal when they bind the same objects the same way.
impl PartialEq for Binding {
    fn eq(&self, other: &Binding) -> bool {
        match (self, other) {
            (Binding::Buffer(a), Binding::Buffer(b)) => {
                a.ty == b.ty
                    && Arc::ptr_eq(&a.buffer, &b.buffer)
                    && a.offset == b.offset
                    && a.range == b.range
            }
            (Binding::Image(t, a), Binding::Image(u, b)) => t == u && Arc::ptr_eq(a, b),
            (Binding::Sampler(a), Binding::Sampler(b)) => a == b,
            (Binding::Texels(t, a), Binding::Texels(u, b)) => t == u && Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl std::fmt::Debug for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Binding::Buffer(b) => write!(
                f,
                "{:?} {:?} at {} ({} bytes)",
                b.ty, b.buffer.raw, b.offset, b.range
            ),
            Binding::Image(ty, i) => write!(f, "{ty:?} {:?}", self.image_view(i)),
            Binding::Sampler(s) => write!(f, "Sampler {s:?}"),
            Binding::Texels(ty, v) => write!(f, "{ty:?} {:?}", v.raw),
        }
    }
}

impl Binding {
    /// An image bound as `ty`; None for a storage binding of an image without a storage view
    /// (a format kernels cannot write).
    pub fn image(ty: Descriptor, image: &Arc<Image>) -> Option<Binding> {
        let storage = ty == Descriptor::StorageImage;
        (!storage || image.storage.is_some()).then(|| Binding::Image(ty, image.clone()))
    }

    fn ty(&self) -> Descriptor {
        match *self {
            Binding::Buffer(ref b) => b.ty,
            Binding::Image(ty, _) | Binding::Texels(ty, _) => ty,
            Binding::Sampler(_) => Descriptor::Sampler,
        }
    }

    /// The view an image binding writes into its descriptor.
    fn image_view(&self, image: &Image) -> vk::ImageView {
        match self.ty() {
            Descriptor::StorageImage => image.storage.unwrap_or_default(),
            _ => image.sampled,
        }
    }

    /// Holds what the binding names until the batch completes.
    fn hold_in(&self, rec: &mut Recorder) {
        match self {
            Binding::Buffer(b) => rec.hold(&b.buffer),
            Binding::Image(_, i) => rec.hold(i),
            // Samplers live as long as their device.
            Binding::Sampler(_) => {}
            Binding::Texels(_, v) => rec.hold(v),
        }
    }
}

pub struct Recorder {
    device: Arc<Device>,
    pools: Arc<Pools>,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    /// Descriptor sets taken from kernel layouts' caches, given back at completion.
    sets: Vec<(Arc<SetCache>, usize, TakenSet)>,
    waits: Vec<(vk::Semaphore, u64)>,
    pub commands: usize,
    /// The next command need not wait for those before it (out-of-order queues): its first
    /// GPU operation gets no barrier. Reset by that operation.
    pub unordered: bool,
    /// With profiling: timestamps before and after each command (2 per command).
    timestamps: Option<(vk::QueryPool, u32)>,
    /// The compute state the command buffer has bound, so that a launch like the one before
    /// it (same kernel, same arguments) records only its barrier and dispatch.
    bound: Bound,
    /// What the recorded commands use, held until the batch completes.
    held: Vec<Arc<dyn Resource>>,
    /// Recording a secondary command buffer of its own pool (`Recorder::secondary`).
    secondary: bool,
}

/// Compute state bound in a command buffer. Everything it names is kept alive by the commands
/// recorded before (until the batch completes), so equal handles are the same objects.
#[derive(Default)]
struct Bound {
    pipeline: vk::Pipeline,
    /// The layout the sets and push constants were bound with.
    layout: vk::PipelineLayout,
    /// What is written in the bound sets.
    bindings: Vec<Vec<(u32, Binding)>>,
    push: Vec<u8>,
}

const SETS_PER_POOL: u32 = 64;

/// The pipeline stages vkcl's commands run in: dispatches, and transfers (buffer and image
/// copies, fills). Barriers name these and the accesses below rather than ALL_COMMANDS and
/// MEMORY_READ/WRITE: the broad form costs NVIDIA 6 µs of GPU time per barrier (raw Vulkan,
/// a launch and wait: 42,500 round trips per second with it, 52,300 with this one).
const STAGES: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::COMPUTE_SHADER.as_raw() | vk::PipelineStageFlags::TRANSFER.as_raw(),
);
/// The writes those commands make.
const WRITES: vk::AccessFlags = vk::AccessFlags::from_raw(
    vk::AccessFlags::SHADER_WRITE.as_raw() | vk::AccessFlags::TRANSFER_WRITE.as_raw(),
);
/// Every access of those commands (uniform reads: clspv may put constant data in UBOs).
const ACCESSES: vk::AccessFlags = vk::AccessFlags::from_raw(
    WRITES.as_raw()
        | vk::AccessFlags::SHADER_READ.as_raw()
        | vk::AccessFlags::UNIFORM_READ.as_raw()
        | vk::AccessFlags::TRANSFER_READ.as_raw(),
);

/// Free lists of the Vulkan objects batches use (one per queue): a batch takes those of a
/// batch completed before it, reset, instead of creating its own and destroying them at
/// completion (creation and destruction cost allocations). At most `KEEP` of each kind are
/// kept; the rest are destroyed. (Descriptor sets are reused per kernel layout: `SetCache`.)
pub struct Pools {
    device: Arc<Device>,
    free: Mutex<Free>,
}

#[derive(Default)]
struct Free {
    /// Oldest first: a pool is reset only after `SETTLE` batches given back after it (see
    /// `command_buffer`).
    commands: std::collections::VecDeque<(vk::CommandPool, vk::CommandBuffer)>,
    queries: Vec<(vk::QueryPool, u32)>,
}

const KEEP: usize = 16;
/// Command pools given back since a pool before it is reset and reused: a margin, so that a
/// pool is not reset the moment its batch's signal is seen. (Added against an intermittent
/// lavapipe crash whose cause turned out to be elsewhere, see `Device::timeline`; kept as
/// it costs a few idle pools.)
const SETTLE: usize = 4;

impl Pools {
    pub fn new(device: &Arc<Device>) -> Arc<Pools> {
        Arc::new(Pools {
            device: device.clone(),
            free: Mutex::new(Free::default()),
        })
    }

    /// A command pool with its one command buffer, both reset.
    fn command_buffer(&self) -> Result<(vk::CommandPool, vk::CommandBuffer)> {
        let d = &self.device.raw;
        let settled = {
            let mut free = self.free.lock();
            if free.commands.len() > SETTLE {
                free.commands.pop_front()
            } else {
                None
            }
        };
        if let Some((pool, cmd)) = settled {
            // SAFETY: the pool's batch has completed (or was never submitted): nothing uses
            // its command buffer.
            match unsafe { d.reset_command_pool(pool, vk::CommandPoolResetFlags::empty()) } {
                Ok(()) => return Ok((pool, cmd)),
                // SAFETY: as above; the pool is not used any more.
                Err(_) => unsafe { d.destroy_command_pool(pool, None) },
            }
        }
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(self.device.caps.queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid device; destroyed by Drop of Pools (or when not kept).
        let pool = unsafe { d.create_command_pool(&info, None) }?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid pool.
        match unsafe { d.allocate_command_buffers(&alloc) } {
            Ok(cmds) => Ok((pool, cmds[0])),
            Err(e) => {
                // SAFETY: the pool was just created and holds nothing.
                unsafe { d.destroy_command_pool(pool, None) };
                Err(e.into())
            }
        }
    }

    /// A timestamp query pool of `count` queries (reset by the recorder on the GPU).
    fn query_pool(&self, count: u32) -> Result<(vk::QueryPool, u32)> {
        let mut free = self.free.lock();
        if let Some(i) = free.queries.iter().position(|q| q.1 == count) {
            return Ok(free.queries.swap_remove(i));
        }
        drop(free);
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(count);
        // SAFETY: valid device; destroyed by Drop of Pools (or when not kept).
        Ok((
            unsafe { self.device.raw.create_query_pool(&info, None) }?,
            count,
        ))
    }

    /// Takes back the objects of a batch that has completed or was never submitted.
    fn give_back(
        &self,
        command: Option<(vk::CommandPool, vk::CommandBuffer)>,
        queries: Option<(vk::QueryPool, u32)>,
    ) {
        let mut free = self.free.lock();
        let (mut drop_cmd, mut drop_query) = (None, None);
        if let Some(c) = command {
            free.commands.push_back(c);
            if free.commands.len() > KEEP {
                drop_cmd = free.commands.pop_front().map(|c| c.0);
            }
        }
        if let Some(q) = queries {
            if free.queries.len() < KEEP {
                free.queries.push(q);
            } else {
                drop_query = Some(q.0);
            }
        }
        drop(free);
        let d = &self.device.raw;
        // SAFETY: the batch has completed (or was never submitted): nothing uses these.
        unsafe {
            if let Some(p) = drop_cmd {
                d.destroy_command_pool(p, None);
            }
            if let Some(q) = drop_query {
                d.destroy_query_pool(q, None);
            }
        }
    }
}

impl Drop for Pools {
    fn drop(&mut self) {
        let free = std::mem::take(self.free.get_mut());
        let d = &self.device.raw;
        // SAFETY: every batch that used these has completed and given them back (Recorder and
        // Retired hold the Pools alive until then).
        unsafe {
            for (p, _) in free.commands {
                d.destroy_command_pool(p, None);
            }
            for (q, _) in free.queries {
                d.destroy_query_pool(q, None);
            }
        }
    }
}

/// The descriptor sets of one kernel layout, reused from launch to launch: a launch takes one
/// set per descriptor-set layout, writes its descriptors, and gives it back when its batch
/// completes. (Allocating a set costs allocations; on lavapipe a mapping of memory per set.)
/// Sets are never freed one by one: a cache holds as many as its kernel had in flight at once,
/// until the kernel goes.
pub struct SetCache {
    device: Arc<Device>,
    /// Per set: the pool sizes of one set.
    sizes: Vec<Vec<vk::DescriptorPoolSize>>,
    state: Mutex<SetState>,
}

#[derive(Default)]
struct SetState {
    /// Per set: the pools sets are allocated from (the last has room, or is full).
    pools: Vec<Vec<vk::DescriptorPool>>,
    /// Per set: free sets.
    free: Vec<Vec<TakenSet>>,
}

/// A descriptor set of the cache, and what was last written into it.
struct TakenSet {
    set: vk::DescriptorSet,
    written: Vec<(u32, Written)>,
}

/// One descriptor as written, naming its object weakly: a weak reference keeps the object's
/// allocation (not the object), so no other object can have its address while the set
/// remembers it, and an equal address is the same object.
enum Written {
    Buffer(Descriptor, std::sync::Weak<Buffer>, u64, u64),
    Image(Descriptor, std::sync::Weak<Image>),
    Sampler(vk::Sampler),
    Texels(Descriptor, std::sync::Weak<TexelView>),
}

impl Written {
    fn of(b: &Binding) -> Written {
        match b {
            Binding::Buffer(b) => {
                Written::Buffer(b.ty, Arc::downgrade(&b.buffer), b.offset, b.range)
            }
            Binding::Image(ty, i) => Written::Image(*ty, Arc::downgrade(i)),
            Binding::Sampler(s) => Written::Sampler(s.0),
            Binding::Texels(ty, v) => Written::Texels(*ty, Arc::downgrade(v)),
        }
    }

    fn is(&self, b: &Binding) -> bool {
        match (self, b) {
            (Written::Buffer(ty, w, offset, range), Binding::Buffer(b)) => {
                *ty == b.ty
                    && std::ptr::eq(w.as_ptr(), Arc::as_ptr(&b.buffer))
                    && *offset == b.offset
                    && *range == b.range
            }
            (Written::Image(ty, w), Binding::Image(u, i)) => {
                ty == u && std::ptr::eq(w.as_ptr(), Arc::as_ptr(i))
            }
            (Written::Sampler(a), Binding::Sampler(b)) => *a == b.0,
            (Written::Texels(ty, w), Binding::Texels(u, v)) => {
                ty == u && std::ptr::eq(w.as_ptr(), Arc::as_ptr(v))
            }
            _ => false,
        }
    }
}

impl TakenSet {
    fn new(set: vk::DescriptorSet) -> TakenSet {
        TakenSet {
            set,
            written: vec![],
        }
    }

    /// Whether the set holds exactly `slots`.
    fn holds(&self, slots: &[(u32, Binding)]) -> bool {
        self.written.len() == slots.len()
            && (self.written.iter().zip(slots)).all(|((a, w), (b, s))| a == b && w.is(s))
    }
}

impl SetCache {
    /// A cache for sets with these descriptor types, by set and binding.
    pub fn new(device: &Arc<Device>, sets: &[SetBindings]) -> Arc<SetCache> {
        let sizes = sets
            .iter()
            .map(|bindings| {
                let mut sizes: Vec<vk::DescriptorPoolSize> = vec![];
                for &(_, ty) in bindings {
                    let ty = ty.vk();
                    match sizes.iter_mut().find(|s| s.ty == ty) {
                        Some(s) => s.descriptor_count += SETS_PER_POOL,
                        None => sizes.push(vk::DescriptorPoolSize {
                            ty,
                            descriptor_count: SETS_PER_POOL,
                        }),
                    }
                }
                if sizes.is_empty() {
                    // A pool needs one size at least.
                    sizes.push(vk::DescriptorPoolSize {
                        ty: vk::DescriptorType::STORAGE_BUFFER,
                        descriptor_count: 1,
                    });
                }
                sizes
            })
            .collect::<Vec<_>>();
        let n = sizes.len();
        Arc::new(SetCache {
            device: device.clone(),
            sizes,
            state: Mutex::new(SetState {
                pools: vec![vec![]; n],
                free: (0..n).map(|_| vec![]).collect(),
            }),
        })
    }

    /// A set of set `index` (layout `layout`) for `slots`: one that holds them already if a
    /// free set does (true: nothing to write; a kernel launched again with the same
    /// arguments), else one whose descriptors are to be written.
    fn take(
        &self,
        index: usize,
        layout: vk::DescriptorSetLayout,
        slots: &[(u32, Binding)],
    ) -> Result<(TakenSet, bool)> {
        let mut state = self.state.lock();
        let free = &mut state.free[index];
        if let Some(i) = free.iter().rposition(|t| t.holds(slots)) {
            return Ok((free.swap_remove(i), true));
        }
        if let Some(set) = free.pop() {
            return Ok((set, false));
        }
        let d = &self.device.raw;
        let layouts = [layout];
        if let Some(&pool) = state.pools[index].last() {
            let info = vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(pool)
                .set_layouts(&layouts);
            // SAFETY: valid pool and layout; the pool is externally synchronised by the lock.
            match unsafe { d.allocate_descriptor_sets(&info) } {
                Ok(sets) => return Ok((TakenSet::new(sets[0]), false)),
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY)
                | Err(vk::Result::ERROR_FRAGMENTED_POOL) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(SETS_PER_POOL)
            .pool_sizes(&self.sizes[index]);
        // SAFETY: valid device; destroyed by Drop of SetCache.
        let pool = unsafe { d.create_descriptor_pool(&info, None) }?;
        state.pools[index].push(pool);
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        // SAFETY: an empty pool sized for sets of this layout.
        let set = unsafe { d.allocate_descriptor_sets(&info) }?[0];
        Ok((TakenSet::new(set), false))
    }

    /// Takes back a set whose batch has completed (or was never submitted).
    fn give_back(&self, index: usize, set: TakenSet) {
        self.state.lock().free[index].push(set);
    }
}

impl Drop for SetCache {
    fn drop(&mut self) {
        let state = std::mem::take(self.state.get_mut());
        // SAFETY: the layout is gone and every batch that used a set has given it back
        // (Recorder and Retired hold the cache alive until then).
        unsafe {
            for p in state.pools.into_iter().flatten() {
                self.device.raw.destroy_descriptor_pool(p, None);
            }
        }
    }
}

/// One region of a buffer-to-buffer copy, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyRegion {
    pub src_offset: u64,
    pub dst_offset: u64,
    pub size: u64,
}

impl Recorder {
    /// A recorder taking its objects from `pools`; with `profiled_commands > 0`, room for that
    /// many commands' timestamps.
    pub fn new(pools: &Arc<Pools>, profiled_commands: u32) -> Result<Recorder> {
        let (pool, cmd) = pools.command_buffer()?;
        let mut rec = Recorder::of(pools, pool, cmd, false);
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        let device = &pools.device;
        // SAFETY: a command buffer in the initial state (new or its pool reset).
        unsafe { device.raw.begin_command_buffer(rec.cmd, &begin) }?;
        if profiled_commands > 0 {
            let (qp, count) = pools.query_pool(2 * profiled_commands)?;
            // SAFETY: the pool is not used by any batch in flight; cmd is recording. A reset
            // from the host spares the batch a command ahead of its first.
            unsafe {
                if device.caps.features.host_query_reset {
                    device.raw.reset_query_pool(qp, 0, count);
                } else {
                    device.raw.cmd_reset_query_pool(rec.cmd, qp, 0, count);
                }
            }
            rec.timestamps = Some((qp, count));
        }
        Ok(rec)
    }

    /// A recorder of `cmd` (of `pool`), not begun yet.
    fn of(
        pools: &Arc<Pools>,
        pool: vk::CommandPool,
        cmd: vk::CommandBuffer,
        secondary: bool,
    ) -> Recorder {
        Recorder {
            device: pools.device.clone(),
            pools: pools.clone(),
            pool,
            cmd,
            sets: vec![],
            waits: vec![],
            commands: 0,
            unordered: false,
            timestamps: None,
            bound: Bound::default(),
            held: vec![],
            secondary,
        }
    }

    /// A recorder of its own, for work outside any queue (initial contents at creation).
    pub fn one_off(device: &Arc<Device>) -> Result<Recorder> {
        Recorder::new(&Pools::new(device), 0)
    }

    /// Makes the writes of the commands before it visible to `dst_access` in `dst_stage`.
    fn memory_barrier(&self, dst_stage: vk::PipelineStageFlags, dst_access: vk::AccessFlags) {
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(WRITES)
            .dst_access_mask(dst_access);
        // SAFETY: cmd is recording.
        unsafe {
            self.device.raw.cmd_pipeline_barrier(
                self.cmd,
                STAGES,
                dst_stage,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            )
        };
    }

    /// Orders the next command after everything recorded or submitted before it (and stamps
    /// its start when profiling).
    fn begin_command(&mut self) {
        if !std::mem::take(&mut self.unordered) {
            self.memory_barrier(STAGES, ACCESSES);
        }
        self.stamp(2 * self.commands, vk::PipelineStageFlags::TOP_OF_PIPE);
        self.commands += 1;
    }

    /// Records one command with `f` (ordered after the previous ones, stamped when profiling).
    pub(super) fn command(&mut self, f: impl FnOnce(&ash::Device, vk::CommandBuffer)) {
        self.begin_command();
        f(&self.device.raw, self.cmd);
        self.end_command();
    }

    pub(super) fn device(&self) -> &Arc<Device> {
        &self.device
    }

    pub(super) fn cmd(&self) -> vk::CommandBuffer {
        self.cmd
    }

    /// Stamps the end of the command begun last.
    fn end_command(&mut self) {
        self.stamp(
            2 * self.commands - 1,
            vk::PipelineStageFlags::BOTTOM_OF_PIPE,
        );
    }

    fn stamp(&mut self, slot: usize, stage: vk::PipelineStageFlags) {
        if let Some((qp, count)) = self.timestamps {
            if (slot as u32) < count {
                // SAFETY: cmd is recording; the slot is in the pool and was reset.
                unsafe {
                    self.device
                        .raw
                        .cmd_write_timestamp(self.cmd, stage, qp, slot as u32)
                };
            }
        }
    }

    /// Holds `resource` until the batch completes (or is dropped unsubmitted): for what a
    /// command uses besides what it records (a map shadow the unmap of a read-only mapping
    /// gives back).
    pub fn hold<T: Resource>(&mut self, resource: &Arc<T>) {
        let last = self.held.last();
        if !last.is_some_and(|h| std::ptr::addr_eq(Arc::as_ptr(h), Arc::as_ptr(resource))) {
            self.held.push(resource.clone());
        }
    }

    pub fn copy_buffer(
        &mut self,
        src: &Arc<impl AsBuffer>,
        src_offset: u64,
        dst: &Arc<impl AsBuffer>,
        dst_offset: u64,
        size: u64,
    ) {
        let region = CopyRegion {
            src_offset,
            dst_offset,
            size,
        };
        self.copy_regions(src, dst, &[region]);
    }

    /// One command copying several regions (rows of a rect transfer); empty regions skipped.
    pub fn copy_regions(
        &mut self,
        src: &Arc<impl AsBuffer>,
        dst: &Arc<impl AsBuffer>,
        regions: &[CopyRegion],
    ) {
        self.hold(src);
        self.hold(dst);
        self.copy_raw(src.raw_buffer(), dst.raw_buffer(), regions);
    }

    /// `copy_regions` of buffers the caller keeps alive until the batch completes.
    fn copy_raw(&mut self, src: vk::Buffer, dst: vk::Buffer, regions: &[CopyRegion]) {
        let regions: Vec<vk::BufferCopy> = regions
            .iter()
            .filter(|r| r.size > 0)
            .map(|r| vk::BufferCopy {
                src_offset: r.src_offset,
                dst_offset: r.dst_offset,
                size: r.size,
            })
            .collect();
        if regions.is_empty() {
            return self.marker();
        }
        self.begin_command();
        // SAFETY: cmd is recording; both buffers are alive until completion (held, or the
        // caller's contract).
        unsafe {
            self.device
                .raw
                .cmd_copy_buffer(self.cmd, src, dst, &regions)
        };
        self.end_command();
    }

    /// Fills with a 32-bit pattern; offset and size must be multiples of 4.
    pub fn fill_buffer(&mut self, dst: &Arc<impl AsBuffer>, offset: u64, size: u64, data: u32) {
        if size == 0 {
            return self.marker();
        }
        self.hold(dst);
        self.begin_command();
        // SAFETY: cmd is recording; dst is held until completion.
        unsafe {
            self.device
                .raw
                .cmd_fill_buffer(self.cmd, dst.raw_buffer(), offset, size, data)
        };
        self.end_command();
    }

    /// An empty command (marker, barrier): ordering only.
    pub fn marker(&mut self) {
        self.stamp(2 * self.commands, vk::PipelineStageFlags::BOTTOM_OF_PIPE);
        self.commands += 1;
        self.end_command();
    }

    /// Records a dispatch: binds `bindings[set]` for every set of the layout, pushes
    /// `push` and dispatches `groups`. Both are kept as what is bound (compared with the next
    /// dispatch's rather than copied).
    pub fn dispatch(
        &mut self,
        layout: &Arc<KernelLayout>,
        pipeline: &Arc<Pipeline>,
        bindings: Vec<Vec<(u32, Binding)>>,
        push: Vec<u8>,
        groups: [u32; 3],
    ) -> Result<()> {
        self.hold(layout);
        self.hold(pipeline);
        for (_, b) in bindings.iter().flatten() {
            b.hold_in(self);
        }
        let same_layout = self.bound.layout == layout.pipeline_layout;
        let rebind = !same_layout || self.bound.bindings != bindings;
        let mut sets = SmallVec::<[vk::DescriptorSet; 4]>::new();
        for (i, &set_layout) in layout.set_layouts.iter().enumerate().filter(|_| rebind) {
            let slots = bindings.get(i).map_or(&[][..], |b| b.as_slice());
            let (mut taken, written) = layout.set_cache.take(i, set_layout, slots)?;
            let set = taken.set;
            if !written {
                write_set(&self.device, set, slots);
                taken.written.clear();
                taken
                    .written
                    .extend(slots.iter().map(|(n, b)| (*n, Written::of(b))));
            }
            // Given back when the batch completes (or is dropped).
            self.sets.push((layout.set_cache.clone(), i, taken));
            sets.push(set);
        }
        self.begin_command();
        let d = &self.device.raw;
        // SAFETY: cmd is recording; pipeline, layout and what the sets name are held until
        // the batch completes, the sets given back then.
        unsafe {
            if self.bound.pipeline != pipeline.raw {
                d.cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, pipeline.raw);
                self.bound.pipeline = pipeline.raw;
            }
            if !sets.is_empty() {
                d.cmd_bind_descriptor_sets(
                    self.cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    layout.pipeline_layout,
                    0,
                    &sets,
                    &[],
                );
            }
            if rebind {
                self.bound.bindings = bindings;
            }
            if !push.is_empty() && (!same_layout || self.bound.push != push) {
                d.cmd_push_constants(
                    self.cmd,
                    layout.pipeline_layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    &push,
                );
                self.bound.push = push;
            }
            self.bound.layout = layout.pipeline_layout;
            // More groups than the device dispatches at once: several dispatches with a base
            // group (the pipeline is created with DISPATCH_BASE; WorkgroupId includes the base).
            let max = self.device.caps.limits.max_compute_work_group_count;
            for z in (0..groups[2]).step_by(max[2] as usize) {
                for y in (0..groups[1]).step_by(max[1] as usize) {
                    for x in (0..groups[0]).step_by(max[0] as usize) {
                        let n = [
                            (groups[0] - x).min(max[0]),
                            (groups[1] - y).min(max[1]),
                            (groups[2] - z).min(max[2]),
                        ];
                        d.cmd_dispatch_base(self.cmd, x, y, z, n[0], n[1], n[2]);
                    }
                }
            }
        }
        self.end_command();
        Ok(())
    }

    /// The batch will not start before `sem` reaches `value`.
    /// The submission waits (on the GPU) until `timeline` reaches `value`. The timeline must
    /// live until the submission has completed.
    pub fn wait_for(&mut self, timeline: &Timeline, value: u64) {
        let sem = timeline.raw;
        match self.waits.iter_mut().find(|(s, _)| *s == sem) {
            Some(w) => w.1 = w.1.max(value),
            None => self.waits.push((sem, value)),
        }
    }

    /// Ends the command buffer and submits it; `timeline` reaches `value` when it completes.
    /// The returned Retired must live until then.
    pub fn submit(mut self, timeline: &Timeline, value: u64) -> Result<Retired> {
        // Make every write visible to the host reads that follow completion.
        self.memory_barrier(vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ);
        // SAFETY: cmd is recording.
        unsafe { self.device.raw.end_command_buffer(self.cmd) }?;
        let wait_sems: Vec<_> = self.waits.iter().map(|w| w.0).collect();
        let wait_values: Vec<_> = self.waits.iter().map(|w| w.1).collect();
        let wait_stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; wait_sems.len()];
        let signal = [timeline.raw];
        let signal_values = [value];
        let mut timeline_info = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&wait_values)
            .signal_semaphore_values(&signal_values);
        let cmds = [self.cmd];
        let submit = vk::SubmitInfo::default()
            .wait_semaphores(&wait_sems)
            .wait_dst_stage_mask(&wait_stages)
            .command_buffers(&cmds)
            .signal_semaphores(&signal)
            .push_next(&mut timeline_info);
        {
            let queue = self.device.queue.lock();
            // SAFETY: the queue is externally synchronised by its mutex; everything the
            // command buffer references is kept alive by the batch until completion.
            unsafe {
                self.device
                    .raw
                    .queue_submit(*queue, &[submit], vk::Fence::null())
            }?;
        }
        Ok(Retired {
            pools: self.pools.clone(),
            command: Some((
                std::mem::replace(&mut self.pool, vk::CommandPool::null()),
                self.cmd,
            )),
            sets: std::mem::take(&mut self.sets),
            timestamps: self.timestamps.take(),
            commands: self.commands,
            held: std::mem::take(&mut self.held),
        })
    }

    /// Submits the commands and waits until they have completed: work outside any queue
    /// (initial contents at creation), on a timeline of the device's.
    pub fn submit_and_wait(self) -> Result<()> {
        let device = self.device.clone();
        let (timeline, base) = device.timeline()?;
        let result = self.submit(&timeline, base + 1).and_then(|retired| {
            while !timeline.wait(base + 1, u64::MAX)? {}
            drop(retired);
            Ok(())
        });
        if result.is_err() {
            // Whether the submission signalling it will complete is unknown.
            timeline.retire();
        }
        result
    }
}

/// Writes `slots` (binding, what is bound) into `set`.
fn write_set(device: &Device, set: vk::DescriptorSet, slots: &[(u32, Binding)]) {
    // The info structures first (one per slot), then the writes pointing at them.
    let buffers: Vec<[vk::DescriptorBufferInfo; 1]> = slots
        .iter()
        .map(|(_, b)| match b {
            Binding::Buffer(b) => [vk::DescriptorBufferInfo {
                buffer: b.buffer.raw,
                offset: b.offset,
                range: b.range,
            }],
            _ => Default::default(),
        })
        .collect();
    let images: Vec<[vk::DescriptorImageInfo; 1]> = slots
        .iter()
        .map(|(_, b)| match b {
            Binding::Image(_, image) => [vk::DescriptorImageInfo {
                sampler: vk::Sampler::null(),
                image_view: b.image_view(image),
                image_layout: vk::ImageLayout::GENERAL,
            }],
            Binding::Sampler(sampler) => [vk::DescriptorImageInfo {
                sampler: sampler.0,
                ..Default::default()
            }],
            _ => Default::default(),
        })
        .collect();
    let texels: Vec<[vk::BufferView; 1]> = slots
        .iter()
        .map(|(_, b)| match b {
            Binding::Texels(_, view) => [view.raw],
            _ => [vk::BufferView::null()],
        })
        .collect();
    let writes: Vec<_> = slots
        .iter()
        .enumerate()
        .map(|(j, (binding, b))| {
            let w = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(*binding)
                .descriptor_type(b.ty().vk());
            match b {
                Binding::Buffer(_) => w.buffer_info(&buffers[j]),
                Binding::Image(..) | Binding::Sampler(_) => w.image_info(&images[j]),
                Binding::Texels(..) => w.texel_buffer_view(&texels[j]),
            }
        })
        .collect();
    // SAFETY: the set was allocated with a layout that has these bindings.
    unsafe { device.raw.update_descriptor_sets(&writes, &[]) };
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // Submitted: the objects went to Retired. Otherwise nothing of it reached the GPU.
        if self.secondary && self.pool != vk::CommandPool::null() {
            // SAFETY: never executed (finish moves the pool out); frees its command buffer.
            unsafe { self.device.raw.destroy_command_pool(self.pool, None) };
        } else if self.pool != vk::CommandPool::null() {
            self.pools
                .give_back(Some((self.pool, self.cmd)), self.timestamps.take());
        }
        for (cache, i, set) in self.sets.drain(..) {
            cache.give_back(i, set);
        }
    }
}

/// The Vulkan objects of a submitted batch, given back to the queue's pools once the batch has
/// completed.
pub struct Retired {
    pools: Arc<Pools>,
    command: Option<(vk::CommandPool, vk::CommandBuffer)>,
    sets: Vec<(Arc<SetCache>, usize, TakenSet)>,
    timestamps: Option<(vk::QueryPool, u32)>,
    commands: usize,
    /// What the batch's commands used (dropped after the objects above are given back).
    held: Vec<Arc<dyn Resource>>,
}

impl Retired {
    /// After completion: (start, end) of each command in nanoseconds of the device's clock.
    pub fn command_times(&self) -> Option<Vec<(u64, u64)>> {
        let (qp, count) = self.timestamps?;
        let n = (2 * self.commands).min(count as usize);
        let mut ticks = vec![0u64; n];
        let device = &self.pools.device;
        // SAFETY: the batch has completed, so every written query is available.
        unsafe {
            device
                .raw
                .get_query_pool_results(qp, 0, &mut ticks, vk::QueryResultFlags::TYPE_64)
        }
        .ok()?;
        let ns = |t: u64| device.ticks_to_ns(t);
        Some(
            ticks
                .chunks(2)
                .map(|c| (ns(c[0]), ns(c[1]).max(ns(c[0]))))
                .collect(),
        )
    }
}

impl Drop for Retired {
    fn drop(&mut self) {
        // The batch has completed: its objects may be reused, and what it used may go.
        self.pools
            .give_back(self.command.take(), self.timestamps.take());
        for (cache, i, set) in self.sets.drain(..) {
            cache.give_back(i, set);
        }
        drop(std::mem::take(&mut self.held));
    }
}

/// Copies `data` into `dst` at `offset` through a staging buffer and waits for the GPU: the
/// initial contents of a device-local buffer, at creation, where no queue exists yet. The
/// staging buffer holds at most one chunk and is reused chunk by chunk.
pub fn upload_now(device: &Arc<Device>, dst: &Buffer, offset: u64, data: &[u8]) -> Result<()> {
    let chunk = CHUNK.min(data.len());
    let stage = Buffer::new(device, chunk as u64, Placement::Upload, "initial data")?;
    let pools = Pools::new(device);
    for (i, part) in data.chunks(CHUNK).enumerate() {
        // SAFETY: the previous copy out of the staging buffer has completed (waited below).
        unsafe { stage.write(0, part) };
        let mut rec = Recorder::new(&pools, 0)?;
        let region = CopyRegion {
            src_offset: 0,
            dst_offset: offset + (i * CHUNK) as u64,
            size: part.len() as u64,
        };
        // Both buffers outlive the wait below.
        rec.copy_raw(stage.raw, dst.raw, &[region]);
        rec.submit_and_wait()?;
    }
    Ok(())
}

/// Records commands with `record` and executes them on `device` now, waiting for them: work
/// outside any queue, on memory no pending command uses.
pub fn now(device: &Arc<Device>, record: impl FnOnce(&mut Recorder)) -> Result<()> {
    let pools = Pools::new(device);
    let mut rec = Recorder::new(&pools, 0)?;
    record(&mut rec);
    rec.submit_and_wait()
}

/// Commands recorded once and executed by many batches (cl_khr_command_buffer): a secondary
/// command buffer, with the descriptor sets it binds and what its commands use, kept until
/// the last batch executing it has completed (batches hold it as a `Resource`).
pub struct Prerecorded {
    device: Arc<Device>,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    sets: Vec<(Arc<SetCache>, usize, TakenSet)>,
    /// Dropped after the command buffer is destroyed.
    held: Vec<Arc<dyn Resource>>,
}

impl Resource for Prerecorded {}

impl Drop for Prerecorded {
    fn drop(&mut self) {
        // SAFETY: no batch executing the command buffer is pending (they hold this object);
        // destroying the pool frees it.
        unsafe { self.device.raw.destroy_command_pool(self.pool, None) };
        for (cache, i, set) in self.sets.drain(..) {
            cache.give_back(i, set);
        }
        drop(std::mem::take(&mut self.held));
    }
}

impl Recorder {
    /// A recorder of a secondary command buffer, of a pool of its own, to be executed by
    /// several batches, also at once (SIMULTANEOUS_USE): see `finish` and `execute`.
    pub fn secondary(device: &Arc<Device>) -> Result<Recorder> {
        let d = &device.raw;
        let info =
            vk::CommandPoolCreateInfo::default().queue_family_index(device.caps.queue_family);
        // SAFETY: valid device; destroyed by the Recorder or by Prerecorded.
        let pool = unsafe { d.create_command_pool(&info, None) }?;
        let mut rec = Recorder::of(&Pools::new(device), pool, vk::CommandBuffer::null(), true);
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::SECONDARY)
            .command_buffer_count(1);
        // SAFETY: valid pool (destroyed with the recorder if this fails).
        rec.cmd = unsafe { d.allocate_command_buffers(&alloc) }?[0];
        let inheritance = vk::CommandBufferInheritanceInfo::default();
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)
            .inheritance_info(&inheritance);
        // SAFETY: a new command buffer, in the initial state.
        unsafe { d.begin_command_buffer(rec.cmd, &begin) }?;
        Ok(rec)
    }

    /// Ends a `secondary` recording: the commands, ready for `execute`.
    pub fn finish(mut self) -> Result<Prerecorded> {
        assert!(self.secondary, "only a secondary recording is finished");
        // SAFETY: cmd is recording.
        unsafe { self.device.raw.end_command_buffer(self.cmd) }?;
        Ok(Prerecorded {
            device: self.device.clone(),
            pool: std::mem::replace(&mut self.pool, vk::CommandPool::null()),
            cmd: self.cmd,
            sets: std::mem::take(&mut self.sets),
            held: std::mem::take(&mut self.held),
        })
    }

    /// One command executing prerecorded commands, in order (ordered like any other
    /// command).
    pub fn execute(&mut self, commands: &[Arc<Prerecorded>]) {
        if commands.is_empty() {
            return self.marker();
        }
        for c in commands {
            self.hold(c);
        }
        let raw: Vec<vk::CommandBuffer> = commands.iter().map(|c| c.cmd).collect();
        self.begin_command();
        // SAFETY: cmd is a recording primary; the secondaries are executable, begun with
        // SIMULTANEOUS_USE, and held until the batch completes.
        unsafe { self.device.raw.cmd_execute_commands(self.cmd, &raw) };
        self.end_command();
        // The state the secondary bound is undefined in the primary after it.
        self.bound = Bound::default();
    }
}
