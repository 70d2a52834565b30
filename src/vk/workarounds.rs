//! Driver workarounds: one record per device, each entry chosen from what the device is (its
//! vendor and kind), with the measurement behind it; where a `VKCL_*` variable is named, it
//! overrides the entry.

/// PCI vendor id of NVIDIA.
const NVIDIA: u32 = 0x10de;

/// What vkcl does differently on one device, and why.
#[derive(Clone, Debug)]
pub struct Workarounds {
    /// Copies of 1 MiB or more between device-local buffers run as a kernel: NVIDIA's
    /// vkCmdCopyBuffer reaches a fifth of the memory bandwidth (docs/MEMORY.md). Elsewhere the
    /// transfer command is used (`VKCL_COPY_BY_KERNEL` overrides).
    pub copy_by_kernel: bool,
    /// Microseconds a waiting thread polls the timeline before it blocks in the driver. NVIDIA's
    /// blocking vkWaitSemaphores wakes about 100 µs after the signal (it halved the rate of
    /// waited-for 0.2 ms kernels on the H200): polling for 2 ms catches the commands worth
    /// waiting for that way; other GPUs take the same until measured. CPU devices (lavapipe)
    /// need the cores a spinning waiter would take: 0 (`VKCL_WAIT_SPIN_US` overrides).
    pub wait_spin_us: u64,
    /// CPU devices without `VKCL_WAIT_SPIN_US`: a waiting thread polls only while the recent
    /// waits of its queue were short (lavapipe's launch round trips, 30-40 µs, which a
    /// blocking wait made twice as long), and blocks at once behind long work, whose threads
    /// need the cores (`core::queue::Queue::spin_budget`).
    pub adaptive_spin: bool,
    /// 16-bit values are kept out of uniform buffers (clspv's `-no-16bit-storage=ubo`, so
    /// by-value arguments beyond the push constants holding `half` go to a storage buffer):
    /// NVIDIA's driver (580.159.04, H200) misreads `half` members of a uniform block once the
    /// block is large: 64 `half3` arguments had 6 halves wrong, 64 `half4` 115, 24 or more
    /// `half8` (and 32 `half16`) nearly all, while the same modules with the block in a
    /// storage buffer, and `ushort` vectors in the uniform block, were right
    /// (tests/byval_many.rs; docs/GPU.md).
    pub no_16bit_uniforms: bool,
    /// Normalized linear samplers get minFilter NEAREST (reads are at lod 0, so magFilter
    /// filters): lavapipe samples formats of 8-bit unorm channels on an 8-bit fixed-point path
    /// when both filters are equal (linear reads up to 0.955/255 off, 5-bit channels at 8-bit
    /// precision), in float otherwise (examples/raw_sample.rs; docs/IMAGES.md). On lavapipe,
    /// unless `VKCL_LAVAPIPE_AOS` asks for that path.
    pub unequal_sampler_filters: bool,
    /// Launches of small work-groups run several OpenCL work-groups per Vulkan work-group
    /// where the kernel cannot tell (`compiler::coalesce`): lavapipe pays ~0.4 µs per
    /// work-group and runs each on its own SIMD lanes, so thread_dimensions' [1,1,1] groups
    /// took 12.8 s per launch (docs/BENCHMARKS.md). On CPU devices; GPUs keep one Vulkan
    /// group per OpenCL group until measured there (docs/DECISIONS.md; `VKCL_COALESCE`
    /// overrides).
    pub coalesce_groups: bool,
}

impl Workarounds {
    pub(super) fn for_device(vendor_id: u32, cpu: bool, driver_name: &str) -> Workarounds {
        let config = crate::config::get();
        let nvidia = vendor_id == NVIDIA;
        Workarounds {
            copy_by_kernel: config.copy_by_kernel.unwrap_or(nvidia),
            wait_spin_us: config.wait_spin_us.unwrap_or(if cpu { 0 } else { 2000 }),
            adaptive_spin: cpu && config.wait_spin_us.is_none(),
            no_16bit_uniforms: nvidia,
            unequal_sampler_filters: driver_name == "llvmpipe" && !config.lavapipe_aos,
            coalesce_groups: config.coalesce.unwrap_or(cpu),
        }
    }
}
