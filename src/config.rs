//! Run-time configuration: one table of `VKCL_*` environment variables, read once.
//!
//! The README's configuration section lists the same table; `tests` check they agree.

use std::sync::OnceLock;

/// One configuration option: its environment variable, default and meaning, and how its value
/// sets the [`Config`] (one row, so that the documentation and the parser cannot drift apart).
pub struct OptionDoc {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
    /// Sets the option's fields from the variable's value (None: unset or empty).
    set: fn(&mut Config, Option<String>),
}

/// Every option vkcl reads. The README lists the same table (a test checks it).
pub const OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        name: "VKCL_LOG",
        default: "off",
        doc: "log level (off, error, warn, info, debug, trace), optionally per target: `warn,api=trace`; targets: api, queue, memory, compiler, cache, vk, launch (each kernel launch: sizes at debug, bindings at trace)",
        set: |c, v| c.log = v.unwrap_or_else(|| "off".into()),
    },
    OptionDoc {
        name: "VKCL_DEVICES",
        default: "",
        doc: "comma-separated substrings; only Vulkan devices whose name contains one are exposed",
        set: |c, v| {
            c.devices = v
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default()
        },
    },
    OptionDoc {
        name: "VKCL_DEVICE_COPIES",
        default: "1",
        doc: "expose each Vulkan device this many times (each copy its own VkDevice): multi-device contexts on a one-GPU machine, for tests",
        set: |c, v| {
            c.device_copies = v
                .and_then(|v| v.parse().ok())
                .filter(|&n| (1..=16).contains(&n))
                .unwrap_or(1)
        },
    },
    OptionDoc {
        name: "VKCL_DEVICE_TYPE",
        default: "",
        doc: "override the reported CL_DEVICE_TYPE of every device: cpu, gpu or accelerator",
        set: |c, v| c.device_type = v.map(|s| s.to_ascii_lowercase()),
    },
    OptionDoc {
        name: "VKCL_CLSPV_LIBRARY",
        default: "",
        doc: "path of the clspv shared object (default: beside the ICD, then $XDG_DATA_HOME/vkcl, then the build tree's .clspv/)",
        set: |c, v| c.clspv_library = v,
    },
    OptionDoc {
        name: "VKCL_CLSPV_HELPER",
        default: "",
        doc: "path of the vkcl-clspv compiler helper executable (default: beside the ICD)",
        set: |c, v| c.clspv_helper = v,
    },
    OptionDoc {
        name: "VKCL_LLVM_SPIRV",
        default: "",
        doc: "path of the SPIR-V → LLVM translator used for clCreateProgramWithIL (default: llvm-spirv-15, then llvm-spirv, on PATH)",
        set: |c, v| c.llvm_spirv = v,
    },
    OptionDoc {
        name: "VKCL_CLANG",
        default: "",
        doc: "path of the clang that compiles programs using device-side enqueue (blocks; default: clang-15, then clang-16, on PATH); without one, devices report no device-side enqueue",
        set: |c, v| c.clang = v,
    },
    OptionDoc {
        name: "VKCL_BATCH_COMMANDS",
        default: "64",
        doc: "commands recorded into one command buffer before it is submitted (fewer while the device is idle)",
        set: |c, v| {
            c.batch_commands = v
                .and_then(|v| v.parse().ok())
                .filter(|&n| n > 0)
                .unwrap_or(64)
        },
    },
    OptionDoc {
        name: "VKCL_WAIT_SPIN_US",
        default: "",
        doc: "microseconds a waiting call polls the queue's timeline before it sleeps in the driver (default: 2000 on GPUs; on CPU devices twice the queue's recent waits where they were under 100 µs, else 0)",
        set: |c, v| c.wait_spin_us = v.and_then(|v| v.parse().ok()),
    },
    OptionDoc {
        name: "VKCL_PIPELINE_STATS",
        default: "0",
        doc: "1: pipelines are created capturing the driver's statistics of their code (VK_KHR_pipeline_executable_properties, e.g. NVIDIA's register count), logged at level info with target `pipeline` (VKCL_LOG=pipeline=info)",
        set: |c, v| c.pipeline_stats = v.is_some_and(|v| v == "1"),
    },
    OptionDoc {
        name: "VKCL_PREBUILD",
        default: "1",
        doc: "0: kernels' pipelines are made at their first launch only; else a background thread makes them when their program is built, for the work-group sizes their launches most likely use (docs/BENCHMARKS.md)",
        set: |c, v| c.prebuild = v.is_none_or(|v| v != "0"),
    },
    OptionDoc {
        name: "VKCL_COPY_BY_KERNEL",
        default: "",
        doc: "1 or 0: copies of 1 MiB or more between device-local buffers run as a kernel, not vkCmdCopyBuffer (default: on NVIDIA, whose copy command reaches a fifth of the memory bandwidth; off elsewhere)",
        set: |c, v| c.copy_by_kernel = v.map(|v| v == "1"),
    },
    OptionDoc {
        name: "VKCL_COALESCE",
        default: "",
        doc: "1 or 0: launches of small work-groups (fewer than 64 work-items) run several OpenCL work-groups in one Vulkan work-group, for kernels that cannot observe it (no barrier, `__local` memory, work-group or sub-group function) (default: on CPU devices such as lavapipe, whose cost is per work-group; off on GPUs, docs/DECISIONS.md)",
        set: |c, v| c.coalesce = v.map(|v| v != "0"),
    },
    OptionDoc {
        name: "VKCL_LAVAPIPE_AOS",
        default: "",
        doc: "1: lavapipe's normalized linear samplers keep equal filters, so the driver samples 8-bit unorm formats on its 8-bit AoS path (to measure that path; vkcl otherwise gives them minFilter NEAREST and lists CL_UNORM_SHORT_565/555 there, docs/IMAGES.md)",
        set: |c, v| c.lavapipe_aos = v.is_some_and(|v| !v.is_empty() && v != "0"),
    },
    OptionDoc {
        name: "VKCL_PLACEMENT",
        default: "auto",
        doc: "where buffers live: auto (device-local on discrete GPUs, mapped by the host where all of the device's memory can be, else reached through staging copies; host-visible zero-copy on unified memory), device (device-local with staging everywhere: tests the discrete-GPU paths on lavapipe), mapped (device-local and mapped where the device allows: tests the resizable-BAR paths on lavapipe), host (host-visible everywhere)",
        set: |c, v| c.placement = PlacementMode::parse(v),
    },
    OptionDoc {
        name: "VKCL_SVM_COARSE",
        default: "auto",
        doc: "where coarse-grained SVM allocations live on devices that map memory at its device address: auto (device-local on discrete GPUs, with a host copy at the same address that clEnqueueSVMMap and clEnqueueSVMUnmap bring up to date; host-coherent memory elsewhere), device (so everywhere it can be), host (host-coherent memory, as fine-grained allocations)",
        set: |c, v| c.svm_coarse = SvmCoarse::parse(v),
    },
    OptionDoc {
        name: "VKCL_MULTI_DEVICE",
        default: "auto",
        doc: "how buffers of a context of several devices live: auto (devices of one GPU share one device-local allocation, exported and imported as an opaque fd; other devices, copies), copies (a copy in each device's own memory, brought up to date on the device that uses it, through host memory both import), shared (one host allocation every device imports: no copies, every device reads it across the bus)",
        set: |c, v| c.multi_device = MultiDevice::parse(v),
    },
    OptionDoc {
        name: "VKCL_ADDRESSING",
        default: "auto",
        doc: "auto (kernels use their program's physical-addressing build only for launches that need device addresses: SVM, cl_ext_buffer_device_address), physical (every launch on a device with buffer device addresses uses it: to measure and test that mode)",
        set: |c, v| c.physical = v.is_some_and(|v| v.eq_ignore_ascii_case("physical")),
    },
    OptionDoc {
        name: "VKCL_FP64",
        default: "1",
        doc: "0: no cl_khr_fp64 (doubles are otherwise on wherever the device has shaderFloat64 and shaderInt64)",
        set: |c, v| c.fp64 = v.is_none_or(|v| v != "0"),
    },
    OptionDoc {
        name: "VKCL_CACHE",
        default: "1",
        doc: "0: no persistent cache (compiled programs and Vulkan pipeline caches are then not kept on disk)",
        set: |c, v| c.cache = v.is_none_or(|v| v != "0"),
    },
    OptionDoc {
        name: "VKCL_CACHE_DIR",
        default: "",
        doc: "directory of the persistent cache (default: $XDG_CACHE_HOME/vkcl, else ~/.cache/vkcl)",
        set: |c, v| c.cache_dir = v,
    },
    OptionDoc {
        name: "VKCL_DUMP_DIR",
        default: "",
        doc: "directory into which every SPIR-V module a build produces is written, as it is given to Vulkan (`<pid>-<n>.spv`, `-physical` for the physical-addressing build): for bug reports and spirv-dis; where vkcl rewrote clang's LLVM IR, the IR before and after it too (`<pid>-<n>.ll`, `-patched.ll`)",
        set: |c, v| c.dump_dir = v,
    },
    OptionDoc {
        name: "VKCL_REPLACE_DIR",
        default: "",
        doc: "with VKCL_DUMP_DIR: a module whose dump is `<pid>-<n>.spv` is replaced by `<n>.spv` of this directory where that file exists (a hand-edited module run in the place of clspv's, to find what a driver gets wrong)",
        set: |c, v| c.replace_dir = v,
    },
    OptionDoc {
        name: "VKCL_PANIC",
        default: "error",
        doc: "what a panic caught at the C boundary does: error (the call returns CL_OUT_OF_HOST_MEMORY, logged), abort (the process aborts: the tests set this, so that no panic goes unseen)",
        set: |c, v| c.panic_abort = v.is_some_and(|v| v.eq_ignore_ascii_case("abort")),
    },
    OptionDoc {
        name: "VKCL_VALIDATION",
        default: "0",
        doc: "1: enable VK_LAYER_KHRONOS_validation and log its messages (errors at level error); fatal: also abort the process on a validation error (the tests use this)",
        set: |c, v| {
            c.validation = v.as_ref().is_some_and(|v| v != "0");
            c.validation_fatal = v.is_some_and(|v| v == "fatal");
        },
    },
];

/// The parsed configuration.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub log: String,
    pub devices: Vec<String>,
    pub device_type: Option<String>,
    pub device_copies: usize,
    pub clspv_library: Option<String>,
    pub clspv_helper: Option<String>,
    pub llvm_spirv: Option<String>,
    pub clang: Option<String>,
    pub batch_commands: usize,
    /// VKCL_WAIT_SPIN_US; None: the device's default.
    pub wait_spin_us: Option<u64>,
    /// VKCL_COPY_BY_KERNEL; None: the device's default.
    pub copy_by_kernel: Option<bool>,
    /// VKCL_COALESCE; None: the device's default.
    pub coalesce: Option<bool>,
    /// VKCL_PREBUILD.
    pub prebuild: bool,
    /// VKCL_PIPELINE_STATS.
    pub pipeline_stats: bool,
    /// VKCL_LAVAPIPE_AOS.
    pub lavapipe_aos: bool,
    pub validation: bool,
    pub validation_fatal: bool,
    pub fp64: bool,
    pub cache: bool,
    pub cache_dir: Option<String>,
    /// VKCL_DUMP_DIR.
    pub dump_dir: Option<String>,
    /// VKCL_REPLACE_DIR.
    pub replace_dir: Option<String>,
    pub placement: PlacementMode,
    /// VKCL_ADDRESSING=physical.
    pub physical: bool,
    /// VKCL_SVM_COARSE.
    pub svm_coarse: SvmCoarse,
    /// VKCL_MULTI_DEVICE.
    pub multi_device: MultiDevice,
    /// VKCL_PANIC=abort.
    pub panic_abort: bool,
}

/// VKCL_PLACEMENT: where buffers without host-pointer flags live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlacementMode {
    /// Device-local on discrete GPUs (mapped by the host where all of it can be), host-visible
    /// on unified memory.
    #[default]
    Auto,
    /// Device-local with staging copies, whatever the device.
    Device,
    /// Device-local and mapped by the host where the device allows (else as `Device`),
    /// whatever the device: lavapipe then runs the resizable-BAR paths.
    Mapped,
    /// Host-visible, whatever the device.
    Host,
}

impl PlacementMode {
    fn parse(v: Option<String>) -> PlacementMode {
        match v.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("device") => PlacementMode::Device,
            Some("mapped") => PlacementMode::Mapped,
            Some("host") => PlacementMode::Host,
            None | Some("auto") => PlacementMode::Auto,
            Some(other) => {
                log::warn!(
                    "VKCL_PLACEMENT={other} is not auto, device, mapped or host: using auto"
                );
                PlacementMode::Auto
            }
        }
    }
}

/// VKCL_MULTI_DEVICE: how the buffers of a context of several Vulkan devices live
/// (`core::memory`, `core::residence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MultiDevice {
    /// Devices of one GPU share one device-local allocation (opaque fd); others, `Copies`.
    #[default]
    Auto,
    /// A copy per device, moved between them through host memory.
    Copies,
    /// One host allocation all devices import.
    Shared,
}

impl MultiDevice {
    fn parse(v: Option<String>) -> MultiDevice {
        match v.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("copies") => MultiDevice::Copies,
            Some("shared") => MultiDevice::Shared,
            _ => MultiDevice::Auto,
        }
    }
}

/// VKCL_SVM_COARSE: where coarse-grained SVM allocations live (`core::svm::mirrors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SvmCoarse {
    /// Device-local with a host copy on discrete GPUs.
    #[default]
    Auto,
    /// Device-local with a host copy wherever the device maps memory at its device address.
    Device,
    /// Host-coherent memory, as fine-grained allocations.
    Host,
}

impl SvmCoarse {
    fn parse(v: Option<String>) -> SvmCoarse {
        match v.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("device") => SvmCoarse::Device,
            Some("host") => SvmCoarse::Host,
            None | Some("auto") => SvmCoarse::Auto,
            Some(other) => {
                log::warn!("VKCL_SVM_COARSE={other} is not auto, device or host: using auto");
                SvmCoarse::Auto
            }
        }
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Config {
    fn from_env() -> Config {
        let mut c = Config::default();
        for o in OPTIONS {
            (o.set)(&mut c, var(o.name));
        }
        c
    }
}

/// The configuration of this process, read from the environment on first use.
pub fn get() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(Config::from_env)
}

#[cfg(test)]
mod tests {
    #[test]
    fn placement_modes_parse() {
        use super::PlacementMode as P;
        assert_eq!(P::parse(None), P::Auto);
        assert_eq!(P::parse(Some("Device".into())), P::Device);
        assert_eq!(P::parse(Some("host".into())), P::Host);
        assert_eq!(P::parse(Some("mapped".into())), P::Mapped);
        assert_eq!(P::parse(Some("auto".into())), P::Auto);
    }

    /// Unset, every option takes the default its row documents.
    #[test]
    fn unset_options_take_their_documented_defaults() {
        let mut c = super::Config::default();
        for o in super::OPTIONS {
            (o.set)(&mut c, None);
        }
        let doc = |name: &str| {
            super::OPTIONS
                .iter()
                .find(|o| o.name == name)
                .unwrap()
                .default
        };
        assert_eq!(c.log, doc("VKCL_LOG"));
        assert_eq!(c.device_copies.to_string(), doc("VKCL_DEVICE_COPIES"));
        assert_eq!(c.batch_commands.to_string(), doc("VKCL_BATCH_COMMANDS"));
        assert_eq!(c.placement, super::PlacementMode::Auto);
        assert_eq!(doc("VKCL_PLACEMENT"), "auto");
        assert!(c.cache && doc("VKCL_CACHE") == "1");
        assert!(c.fp64 && doc("VKCL_FP64") == "1");
        assert!(c.prebuild && doc("VKCL_PREBUILD") == "1");
        assert!(!c.validation && !c.validation_fatal && doc("VKCL_VALIDATION") == "0");
        assert!(!c.panic_abort && doc("VKCL_PANIC") == "error");
        assert!(c.devices.is_empty() && c.device_type.is_none() && c.wait_spin_us.is_none());
        let names: std::collections::HashSet<_> = super::OPTIONS.iter().map(|o| o.name).collect();
        assert_eq!(names.len(), super::OPTIONS.len(), "an option listed twice");
    }

    #[test]
    fn readme_lists_every_option() {
        let readme = include_str!("../README.md");
        for o in super::OPTIONS {
            assert!(
                readme.contains(&format!("`{}`", o.name)),
                "README.md does not document {}",
                o.name
            );
        }
    }
}
