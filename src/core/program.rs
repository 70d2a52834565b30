//! Programs: OpenCL C source compiled by clspv, with build state kept per device.

use super::context::Context;
use super::device::Device;
use super::error::{check, CLResult, ClError};
use super::object::{Base, ClObject, Kind};
use super::prebuild;
use super::svm;
use crate::cl::*;
use crate::compiler::reflection::{self, Reflection};
use crate::compiler::tempdir::PrivateDir;
use crate::compiler::{self, binary, options, CompileError};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A build in physical addressing mode and the executable it was made beside.
type PhysicalBuild = (Arc<Executable>, Arc<Executable>);

/// What a successful build produced for one device.
#[derive(Clone)]
pub struct Executable {
    pub spirv: Vec<u32>,
    pub reflection: Reflection,
    /// Built with -cl-kernel-arg-info: clGetKernelArgInfo answers (clspv always emits it).
    pub arg_info: bool,
    /// Kernels that read the NumWorkgroups built-in (their launches cannot be split).
    pub num_workgroups_users: Vec<String>,
    /// Built for uniform work-groups only (OpenCL C 1.x or -cl-uniform-work-group-size).
    pub uniform: bool,
    /// Built in physical addressing mode (`Program::physical`, or a program that only
    /// compiles so): global pointers are device addresses.
    pub physical: bool,
    /// The program-scope variables' buffer on this device (`compiler::globals`), made when
    /// the first kernel is created: shared by every kernel, kept across launches.
    /// (An Arc so that copies of the executable share it, and a program's physical-addressing
    /// build shares its first build's where both lay the variables out alike: `share_globals`.)
    globals: Arc<Mutex<Option<Arc<crate::vk::memory::Buffer>>>>,
    /// `launch_key`, computed on first use.
    launch_key: std::sync::OnceLock<String>,
}

impl Executable {
    fn new(spirv: Vec<u32>, reflection: Reflection, options: &str) -> Executable {
        Executable {
            num_workgroups_users: num_workgroups_users(&spirv),
            uniform: options::uniform_work_groups(options),
            physical: false,
            spirv,
            reflection,
            arg_info: options
                .split_whitespace()
                .any(|o| o == "-cl-kernel-arg-info"),
            globals: Arc::new(Mutex::new(None)),
            launch_key: std::sync::OnceLock::new(),
        }
    }

    /// What names this code in the record of the specialisations its launches used
    /// (`prebuild::record`): a hash of its SPIR-V.
    pub fn launch_key(&self) -> &str {
        self.launch_key.get_or_init(|| {
            let words: Vec<u8> = self.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
            crate::cache::key(&[b"launches", &words])
        })
    }

    /// The program-scope variables' buffer, with their initial values when new; `None`
    /// without such variables.
    pub fn globals(
        &self,
        vkd: &Arc<crate::vk::device::Device>,
    ) -> CLResult<Option<Arc<crate::vk::memory::Buffer>>> {
        use crate::vk::memory::{Buffer, Placement};
        let Some(g) = &self.reflection.globals else {
            return Ok(None);
        };
        let mut slot = self.globals.lock();
        if slot.is_none() {
            // A physical-addressing module reaches its variables through the buffer's own
            // address, in a slot after them (`compiler::globals::address_slot`), which its
            // data holds; a logical module's buffer gets the slot too, so that the program's
            // physical build can share the buffer (`Program::physical`).
            let physical = compiler::physical::is_physical(&self.spirv);
            let at = match physical {
                true => g.data.len().saturating_sub(16),
                false => compiler::globals::address_slot(g.data.len()),
            };
            let size = (at + 16) as u64;
            let b = Buffer::new(vkd, size, Placement::Upload, "program-scope variables")?;
            // SAFETY: the buffer is new; no GPU work uses it yet.
            unsafe { b.write(0, &g.data) };
            match b.device_address() {
                // SAFETY: as above.
                Some(a) => unsafe { b.write(at as u64, &a.to_le_bytes()) },
                None if physical => return Err(ClError(CL_OUT_OF_RESOURCES)),
                None => {}
            }
            *slot = Some(Arc::new(b));
        }
        Ok(slot.clone())
    }
}

/// The entry points that read the NumWorkgroups built-in, directly or through the functions
/// they call. (clspv lists every built-in in every entry point's interface, so the interface
/// does not tell.)
fn num_workgroups_users(spirv: &[u32]) -> Vec<String> {
    const OP_ENTRY_POINT: u32 = 15;
    const OP_FUNCTION: u32 = 54;
    const OP_FUNCTION_CALL: u32 = 57;
    const OP_LOAD: u32 = 61;
    const OP_ACCESS_CHAINS: [u32; 3] = [65, 66, 67];
    const OP_DECORATE: u32 = 71;
    const DECORATION_BUILTIN: u32 = 11;
    const BUILTIN_NUM_WORKGROUPS: u32 = 24;
    let mut var = None;
    let mut entries: Vec<(String, u32)> = vec![];
    // Per function: does it read the variable, and which functions does it call.
    let mut functions: HashMap<u32, (bool, Vec<u32>)> = HashMap::new();
    let mut current = None;
    for (_, inst) in compiler::spirv::instructions(spirv) {
        let op = inst[0] & 0xffff;
        match op {
            OP_DECORATE
                if inst.get(2..4) == Some(&[DECORATION_BUILTIN, BUILTIN_NUM_WORKGROUPS]) =>
            {
                var = Some(inst[1])
            }
            OP_ENTRY_POINT => {
                if let Some((name, _)) = compiler::spirv::entry_point_name(inst) {
                    entries.push((name, inst[2]));
                }
            }
            OP_FUNCTION if inst.len() > 2 => {
                current = Some(inst[2]);
                functions.entry(inst[2]).or_default();
            }
            OP_FUNCTION_CALL if inst.len() > 3 => {
                if let Some(f) = current.and_then(|f| functions.get_mut(&f)) {
                    f.1.push(inst[3]);
                }
            }
            _ if (op == OP_LOAD || OP_ACCESS_CHAINS.contains(&op))
                && inst.get(3).is_some()
                && Some(inst[3]) == var =>
            {
                if let Some(f) = current.and_then(|f| functions.get_mut(&f)) {
                    f.0 = true;
                }
            }
            _ => {}
        }
    }
    let reads = |root: u32| {
        let (mut todo, mut seen) = (vec![root], vec![]);
        while let Some(f) = todo.pop() {
            if seen.contains(&f) {
                continue;
            }
            seen.push(f);
            match functions.get(&f) {
                Some((true, _)) => return true,
                Some((false, calls)) => todo.extend(calls),
                None => {}
            }
        }
        false
    };
    entries
        .into_iter()
        .filter(|(_, f)| reads(*f))
        .map(|(n, _)| n)
        .collect()
}

/// The build state of one device of the program (spec Table 44).
#[derive(Clone)]
pub struct DeviceBuild {
    pub status: cl_build_status,
    pub options: String,
    pub log: String,
    pub binary_type: cl_program_binary_type,
    pub exe: Option<Arc<Executable>>,
    /// LLVM bitcode modules: one for a compiled object, several for a library.
    pub objects: Vec<Arc<Vec<u8>>>,
    /// clspv arguments the objects need to be linked (`-arch=spir64` for 64-bit IL).
    pub bitcode_args: Vec<String>,
    /// Why the compiler failed, for a build it failed (the call's error code depends on it).
    pub failure: Option<BuildFailure>,
    /// A program from a binary: the OpenCL C source the binary carries for the
    /// physical-addressing build ([`Program::physical`]).
    pub physical_source: Option<Arc<str>>,
}

/// How the compiler failed a build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildFailure {
    /// The source (or IL) did not compile: CL_BUILD_PROGRAM_FAILURE or its kin.
    Failed,
    /// No compiler could be loaded or started: CL_COMPILER_NOT_AVAILABLE.
    CompilerUnavailable,
}

impl Default for DeviceBuild {
    fn default() -> Self {
        DeviceBuild {
            status: CL_BUILD_NONE,
            options: String::new(),
            log: String::new(),
            binary_type: CL_PROGRAM_BINARY_TYPE_NONE,
            exe: None,
            objects: vec![],
            bitcode_args: vec![],
            failure: None,
            physical_source: None,
        }
    }
}

/// Where a program's code comes from.
pub enum Input {
    /// OpenCL C (clCreateProgramWithSource).
    Source(String),
    /// SPIR-V (clCreateProgramWithIL), its translation to LLVM bitcode for clspv, and the
    /// values of its specialisation constants set so far (SpecId → bytes).
    Il {
        il: Vec<u8>,
        bitcode: Arc<Vec<u8>>,
        spec_values: Mutex<HashMap<u32, Vec<u8>>>,
    },
    /// clCreateProgramWithBinary: each device's binary is in its build state.
    Binaries,
    /// Made by clLinkProgram.
    Linked,
}

/// Called when an asynchronous build is over (the application's pfn_notify).
pub type Notify = Box<dyn FnOnce() + Send>;

#[repr(C)]
pub struct Program {
    pub base: Base,
    pub context: Arc<Context>,
    pub input: Input,
    /// The program's devices: those of its context, or those given with binaries.
    pub devices: Vec<Arc<Device>>,
    builds: Mutex<Vec<DeviceBuild>>,
    /// Kernel objects alive for this program: a rebuild is refused while there are any.
    pub kernels_attached: AtomicUsize,
    /// By device index: the build in physical addressing mode (see [`Program::physical`])
    /// and the executable it was made beside.
    physical: Mutex<HashMap<usize, PhysicalBuild>>,
    /// The kernels' Vulkan objects, made by clCreateKernel or ahead of it (`prebuild`).
    pub kernel_devices: prebuild::Table,
}

impl ClObject for Program {
    const KIND: Kind = Kind::Program;
    const INVALID: i32 = CL_INVALID_PROGRAM;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Program {
    fn new(
        context: &Arc<Context>,
        input: Input,
        devices: Vec<Arc<Device>>,
        builds: Vec<DeviceBuild>,
    ) -> Arc<Program> {
        Arc::new(Program {
            base: Base::new(Kind::Program),
            context: context.clone(),
            input,
            devices,
            builds: Mutex::new(builds),
            kernels_attached: AtomicUsize::new(0),
            physical: Mutex::new(HashMap::new()),
            kernel_devices: prebuild::Table::default(),
        })
    }

    pub fn from_source(context: &Arc<Context>, source: String) -> Arc<Program> {
        let builds = vec![DeviceBuild::default(); context.devices.len()];
        Program::new(
            context,
            Input::Source(source),
            context.devices.clone(),
            builds,
        )
    }

    /// clCreateProgramWithIL: the module is translated at once, so that a malformed one is
    /// CL_INVALID_VALUE here (and no device can take IL without the translator:
    /// CL_INVALID_OPERATION).
    pub fn from_il(context: &Arc<Context>, il: Vec<u8>) -> CLResult<Arc<Program>> {
        check(compiler::il::available(), CL_INVALID_OPERATION)?;
        check(compiler::il::is_spirv(&il), CL_INVALID_VALUE)?;
        let bitcode = compiler::il::to_bitcode(&il).map_err(|why| {
            log::info!(target: "compiler", "IL refused: {why}");
            ClError(CL_INVALID_VALUE)
        })?;
        let input = Input::Il {
            il,
            bitcode: Arc::new(bitcode),
            spec_values: Mutex::new(HashMap::new()),
        };
        let builds = vec![DeviceBuild::default(); context.devices.len()];
        Ok(Program::new(
            context,
            input,
            context.devices.clone(),
            builds,
        ))
    }

    /// clCreateProgramWithBinary, the binaries already decoded for their devices. The result
    /// per device is CL_SUCCESS or CL_INVALID_BINARY (an executable whose SPIR-V is not a clspv
    /// module, or an object that is not LLVM bitcode).
    pub fn from_binaries(
        context: &Arc<Context>,
        devices: Vec<Arc<Device>>,
        binaries: Vec<binary::Contents>,
    ) -> (Arc<Program>, Vec<cl_int>) {
        let mut status = vec![];
        let builds = binaries
            .into_iter()
            .map(|b| {
                let build = match b.kind {
                    binary::Kind::Executable => compiler::words(&b.sections[0])
                        .and_then(|spirv| {
                            let reflection = reflection::parse(&spirv).ok()?;
                            Some(Executable {
                                physical: compiler::physical::is_physical(&spirv),
                                ..Executable::new(spirv, reflection, &b.options)
                            })
                        })
                        .map(|exe| DeviceBuild {
                            exe: Some(Arc::new(exe)),
                            physical_source: (b.sections.get(1))
                                .and_then(|s| std::str::from_utf8(s).ok())
                                .map(Arc::from),
                            ..Default::default()
                        }),
                    binary::Kind::Object | binary::Kind::Library => b
                        .sections
                        .iter()
                        .all(|m| m.starts_with(b"BC\xc0\xde"))
                        .then(|| DeviceBuild {
                            objects: b.sections.into_iter().map(Arc::new).collect(),
                            bitcode_args: b
                                .bitcode_args
                                .split_whitespace()
                                .map(String::from)
                                .collect(),
                            ..Default::default()
                        }),
                };
                match build {
                    // A binary is ready to use (as on other implementations); clBuildProgram
                    // then only links objects and libraries.
                    Some(build) => {
                        status.push(CL_SUCCESS);
                        DeviceBuild {
                            status: CL_BUILD_SUCCESS,
                            options: b.options,
                            binary_type: b.kind.binary_type(),
                            ..build
                        }
                    }
                    None => {
                        status.push(CL_INVALID_BINARY);
                        DeviceBuild::default()
                    }
                }
            })
            .collect();
        (
            Program::new(context, Input::Binaries, devices, builds),
            status,
        )
    }

    /// CL_PROGRAM_SOURCE: the source, or empty.
    pub fn source(&self) -> &str {
        match &self.input {
            Input::Source(s) => s,
            _ => "",
        }
    }

    /// clSetProgramSpecializationConstant.
    pub fn set_spec_constant(&self, id: u32, value: &[u8]) -> CLResult<()> {
        let Input::Il {
            il, spec_values, ..
        } = &self.input
        else {
            return Err(ClError(CL_INVALID_PROGRAM));
        };
        let size = *compiler::il::spec_constants(il)
            .get(&id)
            .ok_or(ClError(CL_INVALID_SPEC_ID))?;
        check(value.len() == size, CL_INVALID_VALUE)?;
        spec_values.lock().insert(id, value.to_vec());
        Ok(())
    }

    /// An IL program's bitcode with the specialisation constants set so far (translated now
    /// if any is set: the translation is cached).
    fn il_bitcode(&self) -> Result<Arc<Vec<u8>>, CompileError> {
        let Input::Il {
            il,
            bitcode,
            spec_values,
        } = &self.input
        else {
            return Err(CompileError::Failed {
                log: "not an IL program".into(),
            });
        };
        let values = spec_values.lock().clone();
        if values.is_empty() {
            return Ok(bitcode.clone());
        }
        compiler::il::to_bitcode(&compiler::il::specialize(il, &values))
            .map(Arc::new)
            .map_err(|log| CompileError::Failed { log })
    }

    /// CL_PROGRAM_IL: the module, or empty.
    pub fn il(&self) -> &[u8] {
        match &self.input {
            Input::Il { il, .. } => il,
            _ => &[],
        }
    }

    /// CL_PROGRAM_BINARIES for device `index`: empty unless something is built.
    pub fn binary(&self, index: usize) -> Vec<u8> {
        let b = self.build_of(index);
        if b.status != CL_BUILD_SUCCESS {
            return vec![];
        }
        let id = self.devices[index].identity();
        let modules = || b.objects.iter().map(|m| m.to_vec()).collect();
        let (kind, sections) = match (&b.exe, b.binary_type) {
            (Some(exe), _) => {
                let mut sections = vec![exe.spirv.iter().flat_map(|w| w.to_le_bytes()).collect()];
                // What the physical-addressing build is made from, where it can be made.
                let source = match &self.input {
                    Input::Source(s) => Some(s.as_str()),
                    _ => b.physical_source.as_deref(),
                };
                if let Some(s) =
                    source.filter(|_| !exe.physical && self.devices[index].has_device_addresses())
                {
                    sections.push(s.as_bytes().to_vec());
                }
                (binary::Kind::Executable, sections)
            }
            (None, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT) => (binary::Kind::Object, modules()),
            (None, CL_PROGRAM_BINARY_TYPE_LIBRARY) => (binary::Kind::Library, modules()),
            _ => return vec![],
        };
        let contents = binary::Contents {
            kind,
            options: b.options,
            bitcode_args: b.bitcode_args.join(" "),
            sections,
        };
        binary::encode(&id, &compiler::binary_identity(), &contents)
    }

    pub fn device_index(&self, device: &Arc<Device>) -> Option<usize> {
        self.devices.iter().position(|d| Arc::ptr_eq(d, device))
    }

    pub fn build_of(&self, index: usize) -> DeviceBuild {
        self.builds.lock()[index].clone()
    }

    /// The executables of the devices where the program is built, by device index.
    /// Whether the build for device `index` succeeded (a launch's check, without collecting).
    pub fn has_executable(&self, index: usize) -> bool {
        self.builds
            .lock()
            .get(index)
            .is_some_and(|b| b.exe.is_some() && b.status == CL_BUILD_SUCCESS)
    }

    pub fn executables(&self) -> Vec<Option<Arc<Executable>>> {
        self.builds
            .lock()
            .iter()
            .map(|b| b.exe.clone().filter(|_| b.status == CL_BUILD_SUCCESS))
            .collect()
    }

    /// The program built again for device `index` in physical addressing mode (`-arch=spir64
    /// -physical-storage-buffers`: global pointers are 64-bit device addresses), made the first
    /// time a launch needs it (SVM pointers, device addresses) and kept beside the executable.
    /// Only programs from source or IL have one (binaries and links keep 32-bit bitcode):
    /// CL_INVALID_OPERATION otherwise, or where the build fails.
    pub fn physical(&self, index: usize) -> CLResult<Arc<Executable>> {
        let build = self.build_of(index);
        let exe = build
            .exe
            .clone()
            .ok_or(ClError(CL_INVALID_PROGRAM_EXECUTABLE))?;
        if exe.physical {
            return Ok(exe);
        }
        if let Some((of, p)) = self.physical.lock().get(&index) {
            if Arc::ptr_eq(of, &exe) {
                return Ok(p.clone());
            }
        }
        let mut args = self.clspv_args(index, &build.options, CL_INVALID_OPERATION)?;
        let out = match &self.input {
            Input::Source(_) => {
                args.extend(["-arch=spir64".into(), PHYSICAL.into()]);
                compiler::pointer_members::compile(self.source_text(), &args)
            }
            Input::Il { il, .. } => {
                // 64-bit IL only (clspv's physical mode needs spir64).
                let arch = compiler::il::arch_args(il);
                let args = ir_args([args, arch, vec![PHYSICAL.into()]].concat());
                self.il_bitcode()
                    .and_then(|bitcode| compiler::compile_il(&bitcode, &args))
            }
            _ => match &build.physical_source {
                // A binary that carries its source.
                Some(source) => {
                    args.extend(["-arch=spir64".into(), PHYSICAL.into()]);
                    compiler::pointer_members::compile(source.as_bytes(), &args)
                }
                None => {
                    log::warn!(target: "compiler", "no physical-addressing build of a program from links or IL binaries");
                    return Err(ClError(CL_INVALID_OPERATION));
                }
            },
        };
        let physical = physical_build(out, &build.options).exe.ok_or_else(|| {
            log::warn!(target: "compiler", "the physical-addressing build failed");
            ClError(CL_INVALID_OPERATION)
        })?;
        let physical = share_globals(&exe, physical);
        self.physical.lock().insert(index, (exe, physical.clone()));
        Ok(physical)
    }

    /// The first executable, for device-independent facts (kernel names).
    pub fn any_executable(&self) -> Option<Arc<Executable>> {
        self.executables().into_iter().flatten().next()
    }

    /// The indices of `devices` in the program (all of them when empty).
    fn indices(&self, devices: &[Arc<Device>]) -> CLResult<Vec<usize>> {
        if devices.is_empty() {
            return Ok((0..self.devices.len()).collect());
        }
        devices
            .iter()
            .map(|d| self.device_index(d).ok_or(ClError(CL_INVALID_DEVICE)))
            .collect()
    }

    /// The start of a build, compile or link of `devices`, with the spec's bookkeeping: no
    /// kernel may be attached, no build of these devices may be in progress; each device's
    /// state becomes CL_BUILD_IN_PROGRESS. Returns the jobs: (device index, clspv arguments
    /// from `key`).
    fn start(
        &self,
        devices: &[Arc<Device>],
        options: &str,
        key: impl Fn(usize) -> CLResult<Vec<String>>,
    ) -> CLResult<Vec<(usize, Vec<String>)>> {
        check(
            self.kernels_attached.load(Ordering::Acquire) == 0,
            CL_INVALID_OPERATION,
        )?;
        let jobs = self
            .indices(devices)?
            .into_iter()
            .map(|i| Ok((i, key(i)?)))
            .collect::<CLResult<Vec<_>>>()?;
        let mut builds = self.builds.lock();
        check(
            jobs.iter()
                .all(|&(i, _)| builds[i].status != CL_BUILD_IN_PROGRESS),
            CL_INVALID_OPERATION,
        )?;
        for &(i, _) in &jobs {
            self.kernel_devices.clear(i);
            builds[i] = DeviceBuild {
                status: CL_BUILD_IN_PROGRESS,
                options: options.to_string(),
                ..Default::default()
            };
        }
        Ok(jobs)
    }

    /// Runs the jobs from [`Program::start`]: `job(device index, arguments)` builds one
    /// device; devices with the same arguments share one job when `share` is true, and the
    /// distinct jobs run in parallel (a context of different devices). `failure` is the error
    /// when a job fails. With `notify`, this happens on a thread, the call returns at once and
    /// `notify` runs when every device is done; else it returns the result.
    fn finish(
        self: &Arc<Self>,
        jobs: Vec<(usize, Vec<String>)>,
        share: bool,
        failure: cl_int,
        notify: Option<Notify>,
        job: impl Fn(usize, &[String]) -> DeviceBuild + Send + Sync + 'static,
    ) -> CLResult<()> {
        let indices: Vec<usize> = jobs.iter().map(|j| j.0).collect();
        let thread_indices = indices.clone();
        let program = self.clone();
        let work = move || {
            // The devices of each distinct job, the first of them building.
            let mut groups: Vec<(Vec<String>, Vec<usize>)> = vec![];
            for (i, args) in jobs {
                match groups.iter_mut().find(|g| share && g.0 == args) {
                    Some(g) => g.1.push(i),
                    None => groups.push((args, vec![i])),
                }
            }
            let built = run_parallel(&groups, |(args, devices)| job(devices[0], args));
            let mut result = Ok(());
            for ((_, devices), build) in groups.iter().zip(built) {
                for &i in devices {
                    let build = with_sub_group_sizes(build.clone(), &program.devices[i]);
                    if build.status != CL_BUILD_SUCCESS {
                        let unavailable = build.failure == Some(BuildFailure::CompilerUnavailable);
                        result = Err(ClError(if unavailable {
                            CL_COMPILER_NOT_AVAILABLE
                        } else {
                            failure
                        }));
                    }
                    let exe = build
                        .exe
                        .clone()
                        .filter(|_| build.status == CL_BUILD_SUCCESS);
                    program.builds.lock()[i] = build;
                    if let Some(exe) = exe {
                        prebuild::start(&program, i, &exe);
                    }
                }
            }
            result
        };
        let Some(notify) = notify else {
            return work();
        };
        let program = self.clone();
        let thread = std::thread::Builder::new()
            .name("vkcl-build".into())
            .spawn(move || {
                // No other thread sees the result: a failure is reported through the
                // context's error callback too, before the build's own.
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => program.context.report(&format!(
                        "an asynchronous build failed ({e}): see the build log"
                    )),
                    Err(_) => {
                        program.abandon(&thread_indices, "the build thread panicked");
                        program
                            .context
                            .report("an asynchronous build failed: the build thread panicked");
                    }
                }
                notify();
            });
        if thread.is_err() {
            self.abandon(&indices, "could not start a build thread");
            return Err(ClError(CL_OUT_OF_HOST_MEMORY));
        }
        Ok(())
    }

    /// Marks the builds of `indices` that are still in progress as failed with `why`.
    fn abandon(&self, indices: &[usize], why: &str) {
        let mut builds = self.builds.lock();
        for &i in indices {
            if builds[i].status == CL_BUILD_IN_PROGRESS {
                builds[i].status = CL_BUILD_ERROR;
                builds[i].log = why.to_string();
            }
        }
    }

    /// clBuildProgram for `devices` (all of the program's when empty).
    pub fn build(
        self: &Arc<Self>,
        devices: &[Arc<Device>],
        user_options: &str,
        notify: Option<Notify>,
    ) -> CLResult<()> {
        let options = user_options.to_string();
        let key = |i: usize| self.clspv_args(i, user_options, CL_INVALID_BUILD_OPTIONS);
        let failure = CL_BUILD_PROGRAM_FAILURE;
        match &self.input {
            Input::Source(_) => {
                let jobs = self.start(devices, user_options, key)?;
                let p = self.clone();
                self.finish(jobs, true, failure, notify, move |i, args| {
                    let out = compiler::compile(&[p.source_text()], args);
                    let build = executable(out, &options);
                    let valid = build
                        .exe
                        .as_ref()
                        .is_some_and(|e| !svm::casts_pointers(&e.spirv));
                    // Too many bytes of program-scope variables: no other build has room.
                    let too_large = build.log.contains(compiler::globals::TOO_LARGE);
                    if valid || too_large || !p.devices[i].has_device_addresses() {
                        return build;
                    }
                    // Some programs compile only with 64-bit device addresses: pointers cast
                    // to and from integers (SVM data structures), which clspv's logical mode
                    // turns into conversions Vulkan's logical addressing does not have.
                    let args = [args, &["-arch=spir64".into(), PHYSICAL.into()]].concat();
                    let out = compiler::pointer_members::compile(p.source_text(), &args);
                    let physical = physical_build(out, &options);
                    log::debug!(target: "compiler", "physical-addressing build: {}", physical.log);
                    // A generic pointer chosen at run time is built only there (flat,
                    // compiler::generic_flat): its log says why where it fails.
                    let flat = build.log.contains(compiler::generic_spaces::UNSUPPORTED)
                        || build.log.contains(compiler::device_enqueue::LOGICAL);
                    if physical.status == CL_BUILD_SUCCESS || flat {
                        physical
                    } else {
                        build
                    }
                })
            }
            Input::Il { il, .. } => {
                let arch = compiler::il::arch_args(il);
                let jobs = self.start(devices, user_options, |i| {
                    Ok(ir_args([key(i)?, arch.clone()].concat()))
                })?;
                let p = self.clone();
                self.finish(jobs, true, failure, notify, move |_, args| {
                    let out = p
                        .il_bitcode()
                        .and_then(|bitcode| compiler::compile_il(&bitcode, args));
                    executable(out, &options)
                })
            }
            Input::Binaries => {
                // Executables are ready; objects and libraries are linked into one.
                let before = self.builds.lock().clone();
                let jobs = self.start(devices, user_options, |i| Ok(ir_args(key(i)?)))?;
                self.finish(jobs, false, failure, notify, move |i, args| {
                    let b = &before[i];
                    match &b.exe {
                        Some(_) => b.clone(),
                        None if b.objects.is_empty() => failed_build(
                            CompileError::Failed {
                                log: "no valid binary for this device".into(),
                            },
                            &options,
                        ),
                        None => {
                            let sources: Vec<&[u8]> =
                                b.objects.iter().map(|m| m.as_slice()).collect();
                            let args = [args, &b.bitcode_args].concat();
                            let out = compiler::compile(&sources, &args);
                            executable(out, &options)
                        }
                    }
                })
            }
            Input::Linked => Err(ClError(CL_INVALID_OPERATION)),
        }
    }

    /// clCompileProgram: the source (with `headers`, (include name, source), reachable by
    /// #include) compiled to an object per device. An IL program's object is its translation.
    pub fn compile(
        self: &Arc<Self>,
        devices: &[Arc<Device>],
        user_options: &str,
        headers: &[(String, String)],
        notify: Option<Notify>,
    ) -> CLResult<()> {
        let options = user_options.to_string();
        let failure = CL_COMPILE_PROGRAM_FAILURE;
        let invalid = CL_INVALID_COMPILER_OPTIONS;
        match &self.input {
            Input::Source(_) => {
                let dir = HeaderDir::new(headers).map_err(|_| ClError(CL_OUT_OF_HOST_MEMORY))?;
                let with_headers = match &dir {
                    Some(d) => format!(
                        "{user_options} -I {}",
                        options::quote(&d.0.path().to_string_lossy())
                    ),
                    None => user_options.to_string(),
                };
                let key = |i: usize| self.clspv_args(i, &with_headers, invalid);
                let jobs = self.start(devices, user_options, key)?;
                let p = self.clone();
                self.finish(jobs, true, failure, notify, move |_, args| {
                    let _headers = &dir;
                    match compiler::compile_object(&[p.source_text()], args) {
                        Ok((object, log)) => object_build(vec![Arc::new(object)], log, &options),
                        Err(e) => failed_build(e, &options),
                    }
                })
            }
            Input::Il { il, .. } => {
                let key = |i: usize| self.clspv_args(i, user_options, invalid);
                let jobs = self.start(devices, user_options, key)?;
                let (p, arch) = (self.clone(), compiler::il::arch_args(il));
                self.finish(jobs, true, failure, notify, move |_, _| {
                    match p.il_bitcode() {
                        Ok(bitcode) => DeviceBuild {
                            bitcode_args: arch.clone(),
                            ..object_build(vec![bitcode], String::new(), &options)
                        },
                        Err(e) => failed_build(e, &options),
                    }
                })
            }
            Input::Binaries | Input::Linked => Err(ClError(CL_INVALID_OPERATION)),
        }
    }

    /// clLinkProgram: a new program whose devices link the objects and libraries of `inputs`
    /// into an executable, or (`-create-library`) collect them into a library. The options and
    /// inputs are checked here; the returned [`Link`] does the work (so that the caller can
    /// make the program's handle first: the application's callback gets it).
    pub fn link(
        context: &Arc<Context>,
        devices: Vec<Arc<Device>>,
        link_options: &str,
        inputs: &[Arc<Program>],
    ) -> CLResult<(Arc<Program>, Link)> {
        let tokens: Vec<&str> = link_options.split_whitespace().collect();
        let library = tokens.contains(&"-create-library");
        const ALLOWED: [&str; 8] = [
            "-create-library",
            "-enable-link-options",
            "-cl-denorms-are-zero",
            "-cl-no-signed-zeros",
            "-cl-unsafe-math-optimizations",
            "-cl-finite-math-only",
            "-cl-fast-relaxed-math",
            "-cl-no-subgroup-ifp",
        ];
        check(
            tokens.iter().all(|t| ALLOWED.contains(t)),
            CL_INVALID_LINKER_OPTIONS,
        )?;
        let math: Vec<&str> = tokens
            .iter()
            .copied()
            .filter(|t| t.starts_with("-cl-"))
            .collect();
        // Every input must hold an object or a library for every device.
        let mut objects = vec![];
        let mut bitcode_args = vec![];
        for d in &devices {
            let mut modules = vec![];
            for p in inputs {
                let b = p
                    .device_index(d)
                    .map(|i| p.build_of(i))
                    .ok_or(ClError(CL_INVALID_OPERATION))?;
                let linkable = [
                    CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
                    CL_PROGRAM_BINARY_TYPE_LIBRARY,
                ];
                check(
                    b.status == CL_BUILD_SUCCESS && linkable.contains(&b.binary_type),
                    CL_INVALID_OPERATION,
                )?;
                modules.extend(b.objects);
                // Modules from 64-bit IL make the whole link 64-bit (clspv refuses a mix, with
                // a log saying so).
                if !b.bitcode_args.is_empty() {
                    bitcode_args = b.bitcode_args;
                }
            }
            objects.push(modules);
        }
        let builds = vec![DeviceBuild::default(); devices.len()];
        let program = Program::new(context, Input::Linked, devices, builds);
        let key = |i: usize| {
            options::clspv_args(&math.join(" "), &program.devices[i].clspv_target())
                .map(|args| ir_args([args, bitcode_args.clone()].concat()))
                .map_err(|_| ClError(CL_INVALID_LINKER_OPTIONS))
        };
        let jobs = program.start(&[], link_options, key)?;
        let options = link_options.to_string();
        let library_args = bitcode_args.clone();
        let job = move |i: usize, args: &[String]| {
            let modules: &Vec<Arc<Vec<u8>>> = &objects[i];
            if library {
                return DeviceBuild {
                    status: CL_BUILD_SUCCESS,
                    options: options.clone(),
                    binary_type: CL_PROGRAM_BINARY_TYPE_LIBRARY,
                    objects: modules.clone(),
                    bitcode_args: library_args.clone(),
                    ..Default::default()
                };
            }
            let sources: Vec<&[u8]> = modules.iter().map(|m| m.as_slice()).collect();
            let out = compiler::compile(&sources, args);
            executable(out, &options)
        };
        let link = Link {
            program: program.clone(),
            jobs,
            job: Box::new(job),
        };
        Ok((program, link))
    }

    fn clspv_args(
        &self,
        index: usize,
        user_options: &str,
        invalid: cl_int,
    ) -> CLResult<Vec<String>> {
        options::clspv_args(user_options, &self.devices[index].clspv_target()).map_err(|why| {
            log::info!(target: "compiler", "invalid options {user_options:?}: {why}");
            ClError(invalid)
        })
    }

    /// The source as clspv gets it: clspv crashes on an empty module, so a blank line.
    fn source_text(&self) -> &[u8] {
        if self.source().trim().is_empty() {
            b"\n"
        } else {
            self.source().as_bytes()
        }
    }
}

/// The linking of a program made by [`Program::link`].
pub struct Link {
    program: Arc<Program>,
    jobs: Vec<(usize, Vec<String>)>,
    job: Box<BuildJob>,
}

/// Builds one device (its index) with these clspv arguments.
type BuildJob = dyn Fn(usize, &[String]) -> DeviceBuild + Send + Sync;

impl Link {
    /// Links every device: now, or on a thread when there is a `notify` (called when done).
    pub fn run(self, notify: Option<Notify>) -> CLResult<()> {
        let failure = CL_LINK_PROGRAM_FAILURE;
        self.program
            .finish(self.jobs, false, failure, notify, self.job)
    }
}

/// clspv arguments for LLVM bitcode input.
fn ir_args(mut args: Vec<String>) -> Vec<String> {
    args.extend(["-x".to_string(), "ir".to_string()]);
    args
}

fn object_build(objects: Vec<Arc<Vec<u8>>>, log: String, options: &str) -> DeviceBuild {
    DeviceBuild {
        status: CL_BUILD_SUCCESS,
        options: options.to_string(),
        log,
        binary_type: CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
        objects,
        exe: None,
        bitcode_args: vec![],
        failure: None,
        physical_source: None,
    }
}

fn failed_build(e: CompileError, options: &str) -> DeviceBuild {
    let (log, failure) = match e {
        CompileError::Failed { log } => (log, BuildFailure::Failed),
        CompileError::Unavailable(why) => (
            format!("{UNAVAILABLE}: {why}"),
            BuildFailure::CompilerUnavailable,
        ),
    };
    DeviceBuild {
        status: CL_BUILD_ERROR,
        options: options.to_string(),
        log,
        failure: Some(failure),
        ..Default::default()
    }
}

/// `build`, failed where a kernel requires a sub-group size the device does not have
/// (`intel_reqd_sub_group_size`, cl_intel_required_subgroup_size): clspv takes any size.
fn with_sub_group_sizes(build: DeviceBuild, device: &Device) -> DeviceBuild {
    let Some(exe) = build
        .exe
        .as_ref()
        .filter(|_| build.status == CL_BUILD_SUCCESS)
    else {
        return build;
    };
    let sizes = device.sub_group_sizes();
    let wrong: Vec<String> = exe
        .reflection
        .kernels
        .iter()
        .filter_map(|k| {
            let n = k.reqd_sub_group_size()?;
            (!sizes.contains(&(n as usize))).then(|| {
                format!(
                    "error: kernel {}: intel_reqd_sub_group_size({n}) is not a sub-group size \
                     of this device (CL_DEVICE_SUB_GROUP_SIZES_INTEL: {sizes:?})",
                    k.name
                )
            })
        })
        .collect();
    if wrong.is_empty() {
        return build;
    }
    let mut log = build.log.trim_end().to_string();
    if !log.is_empty() {
        log.push('\n');
    }
    log += &wrong.join("\n");
    failed_build(CompileError::Failed { log }, &build.options)
}

/// The build of a device from clspv's output: an executable, or the failure with its log.
fn executable(out: Result<compiler::CompileOutput, CompileError>, options: &str) -> DeviceBuild {
    let compiler::CompileOutput { spirv, log } = match out {
        Ok(o) => o,
        Err(e) => return failed_build(e, options),
    };
    let spirv = compiler::dump(spirv);
    match reflection::parse(&spirv) {
        Ok(reflection) => DeviceBuild {
            status: CL_BUILD_SUCCESS,
            options: options.to_string(),
            log,
            binary_type: CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
            exe: Some(Arc::new(Executable::new(spirv, reflection, options))),
            ..Default::default()
        },
        Err(e) => failed_build(
            CompileError::Failed {
                log: format!("{log}\n{e}"),
            },
            options,
        ),
    }
}

/// `physical` with the program-scope variables' buffer of `first` (the program's first build)
/// where the two lay the variables out alike: the initial bytes of the physical build are
/// the first build's, then the address slot (`compiler::globals::address_slot`). Values
/// then persist across the program's launches whichever build runs them.
fn share_globals(first: &Arc<Executable>, physical: Arc<Executable>) -> Arc<Executable> {
    let (Some(l), Some(p)) = (&first.reflection.globals, &physical.reflection.globals) else {
        return physical;
    };
    let slot = compiler::globals::address_slot(l.data.len());
    if p.data.len() != slot + 16 || p.data[..l.data.len()] != l.data[..] {
        log::warn!(target: "compiler", "program-scope variables laid out differently in the physical-addressing build: not shared with the first build's");
        return physical;
    }
    Arc::new(Executable {
        globals: first.globals.clone(),
        ..Arc::unwrap_or_clone(physical)
    })
}

/// [`executable`] for a build in physical addressing mode.
fn physical_build(
    out: Result<compiler::CompileOutput, CompileError>,
    options: &str,
) -> DeviceBuild {
    let out = out.map(|mut o| {
        if let Some(fixed) = compiler::physical::repair(&o.spirv) {
            o.spirv = fixed;
        }
        o
    });
    let mut build = executable(out, options);
    build.exe = build.exe.map(|exe| {
        Arc::new(Executable {
            physical: true,
            ..Arc::unwrap_or_clone(exe)
        })
    });
    build
}

/// A private temporary folder holding clCompileProgram's embedded headers under their
/// include names.
struct HeaderDir(PrivateDir);

impl HeaderDir {
    fn new(headers: &[(String, String)]) -> std::io::Result<Option<HeaderDir>> {
        if headers.is_empty() {
            return Ok(None);
        }
        let dir = PrivateDir::new("headers")?;
        for (name, text) in headers {
            // Include names are relative paths; refuse anything that would leave the folder.
            let rel = std::path::Path::new(name);
            if rel.is_absolute()
                || rel
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
            {
                continue;
            }
            let path = dir.path().join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        Ok(Some(HeaderDir(dir)))
    }
}

const PHYSICAL: &str = "-physical-storage-buffers";

const UNAVAILABLE: &str = "the OpenCL C compiler is not available";

/// `f` of each item, the items after the first on threads of their own (on this thread where a
/// thread cannot start); a panic in one goes on on this thread once all are done.
fn run_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let Some((first, rest)) = items.split_first() else {
        return vec![];
    };
    std::thread::scope(|s| {
        let f = &f;
        let spawned: Vec<_> = rest
            .iter()
            .map(|item| {
                std::thread::Builder::new()
                    .name("vkcl-build".into())
                    .spawn_scoped(s, move || f(item))
                    .map_err(|_| item)
            })
            .collect();
        let mut out = vec![f(first)];
        for t in spawned {
            out.push(match t {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(item) => f(item),
            });
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::run_parallel;
    use std::sync::Barrier;

    #[test]
    fn distinct_builds_run_at_the_same_time_and_keep_their_order() {
        // Each item waits for all the others: done one after another, this would never end.
        let barrier = Barrier::new(3);
        let out = run_parallel(&[1, 2, 3], |&x| {
            barrier.wait();
            (x * 10, std::thread::current().id())
        });
        assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), [10, 20, 30]);
        assert_eq!(out[0].1, std::thread::current().id());
        assert!(out[1].1 != out[0].1 && out[2].1 != out[1].1);
        assert!(run_parallel(&[] as &[i32], |&x| x).is_empty());
    }
}
