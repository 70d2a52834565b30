//! Programs: OpenCL C source compiled by clspv, with build state kept per device.

use super::context::Context;
use super::device::Device;
use super::error::{check, CLResult, ClError};
use super::object::{Base, ClObject, Kind};
use crate::cl::*;
use crate::compiler::reflection::{self, Reflection};
use crate::compiler::{self, binary, options, CompileError};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a successful build produced for one device.
pub struct Executable {
    pub spirv: Vec<u32>,
    pub reflection: Reflection,
    /// Built with -cl-kernel-arg-info: clGetKernelArgInfo answers (clspv always emits it).
    pub arg_info: bool,
    /// Kernels that read the NumWorkgroups built-in (their launches cannot be split).
    pub num_workgroups_users: Vec<String>,
}

impl Executable {
    fn new(spirv: Vec<u32>, reflection: Reflection, options: &str) -> Executable {
        Executable {
            num_workgroups_users: num_workgroups_users(&spirv),
            spirv,
            reflection,
            arg_info: options
                .split_whitespace()
                .any(|o| o == "-cl-kernel-arg-info"),
        }
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
    let mut i = 5;
    while i < spirv.len() {
        let (count, op) = ((spirv[i] >> 16) as usize, spirv[i] & 0xffff);
        let Some(inst) = spirv.get(i..i + count.max(1)) else {
            break;
        };
        match op {
            OP_DECORATE
                if inst.get(2..4) == Some(&[DECORATION_BUILTIN, BUILTIN_NUM_WORKGROUPS]) =>
            {
                var = Some(inst[1])
            }
            OP_ENTRY_POINT if inst.len() > 3 => {
                let bytes: Vec<u8> = inst[3..].iter().flat_map(|w| w.to_le_bytes()).collect();
                let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                entries.push((String::from_utf8_lossy(&bytes[..len]).into_owned(), inst[2]));
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
        i += count.max(1);
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
        }
    }
}

#[repr(C)]
pub struct Program {
    pub base: Base,
    pub context: Arc<Context>,
    /// The source (empty for a program created from binaries).
    pub source: String,
    /// Created by clCreateProgramWithBinary: clBuildProgram has nothing to compile.
    pub from_binary: bool,
    /// The program's devices: those of its context, or those given with binaries.
    pub devices: Vec<Arc<Device>>,
    builds: Mutex<Vec<DeviceBuild>>,
    /// Kernel objects alive for this program: a rebuild is refused while there are any.
    pub kernels_attached: AtomicUsize,
}

impl ClObject for Program {
    const KIND: Kind = Kind::Program;
    const INVALID: i32 = CL_INVALID_PROGRAM;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Program {
    pub fn from_source(context: &Arc<Context>, source: String) -> Arc<Program> {
        let devices = context.devices.clone();
        Arc::new(Program {
            base: Base::new(Kind::Program),
            context: context.clone(),
            source,
            from_binary: false,
            builds: Mutex::new(vec![DeviceBuild::default(); devices.len()]),
            devices,
            kernels_attached: AtomicUsize::new(0),
        })
    }

    /// clCreateProgramWithBinary, the binaries already decoded for their devices. The result
    /// per device is CL_SUCCESS or CL_INVALID_BINARY (its SPIR-V is not a clspv module).
    pub fn from_binaries(
        context: &Arc<Context>,
        devices: Vec<Arc<Device>>,
        binaries: Vec<binary::Contents>,
    ) -> (Arc<Program>, Vec<cl_int>) {
        let mut status = vec![];
        let builds = binaries
            .into_iter()
            .map(|b| match reflection::parse(&b.spirv) {
                Ok(reflection) => {
                    status.push(CL_SUCCESS);
                    let exe = Executable::new(b.spirv, reflection, &b.options);
                    DeviceBuild {
                        // An executable binary is ready to use (as on other implementations);
                        // clBuildProgram then has nothing to do.
                        status: CL_BUILD_SUCCESS,
                        options: b.options,
                        binary_type: CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
                        exe: Some(Arc::new(exe)),
                        ..Default::default()
                    }
                }
                Err(_) => {
                    status.push(CL_INVALID_BINARY);
                    DeviceBuild::default()
                }
            })
            .collect();
        let program = Arc::new(Program {
            base: Base::new(Kind::Program),
            context: context.clone(),
            source: String::new(),
            from_binary: true,
            builds: Mutex::new(builds),
            devices,
            kernels_attached: AtomicUsize::new(0),
        });
        (program, status)
    }

    /// CL_PROGRAM_BINARIES for device `index`: empty unless built.
    pub fn binary(&self, index: usize) -> Vec<u8> {
        let b = self.build_of(index);
        match (&b.exe, b.status == CL_BUILD_SUCCESS) {
            (Some(exe), true) => {
                binary::encode(&self.devices[index].identity(), &b.options, &exe.spirv)
            }
            _ => vec![],
        }
    }

    pub fn device_index(&self, device: &Arc<Device>) -> Option<usize> {
        self.devices.iter().position(|d| Arc::ptr_eq(d, device))
    }

    pub fn build_of(&self, index: usize) -> DeviceBuild {
        self.builds.lock()[index].clone()
    }

    /// The executables of the devices where the program is built, by device index.
    pub fn executables(&self) -> Vec<Option<Arc<Executable>>> {
        self.builds
            .lock()
            .iter()
            .map(|b| b.exe.clone().filter(|_| b.status == CL_BUILD_SUCCESS))
            .collect()
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

    /// Runs `job` (which compiles) for each device index, with the spec's bookkeeping: no
    /// kernel may be attached, no build of these devices may be in progress, each device is
    /// CL_BUILD_IN_PROGRESS meanwhile. Devices whose jobs have the same key (same clspv
    /// arguments) share one compile. `failure` is the error when a job fails.
    fn run_builds(
        &self,
        devices: &[Arc<Device>],
        options: &str,
        key: impl Fn(usize) -> CLResult<Vec<String>>,
        job: impl Fn(&[String]) -> DeviceBuild,
        failure: cl_int,
    ) -> CLResult<()> {
        check(
            self.kernels_attached.load(Ordering::Acquire) == 0,
            CL_INVALID_OPERATION,
        )?;
        let indices = self.indices(devices)?;
        let jobs = indices
            .iter()
            .map(|&i| Ok((i, key(i)?)))
            .collect::<CLResult<Vec<_>>>()?;
        {
            let mut builds = self.builds.lock();
            check(
                indices
                    .iter()
                    .all(|&i| builds[i].status != CL_BUILD_IN_PROGRESS),
                CL_INVALID_OPERATION,
            )?;
            for &i in &indices {
                builds[i] = DeviceBuild {
                    status: CL_BUILD_IN_PROGRESS,
                    options: options.to_string(),
                    ..Default::default()
                };
            }
        }
        let mut done: HashMap<Vec<String>, DeviceBuild> = HashMap::new();
        let mut result = Ok(());
        for (i, args) in jobs {
            let build = done
                .entry(args.clone())
                .or_insert_with(|| job(&args))
                .clone();
            if build.status != CL_BUILD_SUCCESS {
                let unavailable = build.log.starts_with(UNAVAILABLE);
                result = Err(ClError(if unavailable {
                    CL_COMPILER_NOT_AVAILABLE
                } else {
                    failure
                }));
            }
            self.builds.lock()[i] = build;
        }
        result
    }

    /// clBuildProgram for `devices` (all of the program's when empty).
    pub fn build(&self, devices: &[Arc<Device>], user_options: &str) -> CLResult<()> {
        if self.from_binary {
            // Nothing to compile: the binaries are executables.
            let indices = self.indices(devices)?;
            let mut builds = self.builds.lock();
            for &i in &indices {
                builds[i].status = if builds[i].exe.is_some() {
                    CL_BUILD_SUCCESS
                } else {
                    CL_BUILD_ERROR
                };
            }
            return check(
                indices.iter().all(|&i| builds[i].exe.is_some()),
                CL_BUILD_PROGRAM_FAILURE,
            );
        }
        let key = |i: usize| self.clspv_args(i, user_options, CL_INVALID_BUILD_OPTIONS);
        let job = |args: &[String]| {
            let out = compiler::compile(&[self.source_text()], args);
            executable(out.map(|o| (o.spirv, o.log)), user_options)
        };
        self.run_builds(devices, user_options, key, job, CL_BUILD_PROGRAM_FAILURE)
    }

    /// clCompileProgram: the source (with `headers`, (include name, source), reachable by
    /// #include) compiled to an object per device.
    pub fn compile(
        &self,
        devices: &[Arc<Device>],
        user_options: &str,
        headers: &[(String, String)],
    ) -> CLResult<()> {
        check(!self.from_binary, CL_INVALID_OPERATION)?;
        let dir = HeaderDir::new(headers).map_err(|_| ClError(CL_OUT_OF_HOST_MEMORY))?;
        let with_headers = match &dir {
            Some(d) => format!(
                "{user_options} -I {}",
                options::quote(&d.0.to_string_lossy())
            ),
            None => user_options.to_string(),
        };
        let key = |i: usize| self.clspv_args(i, &with_headers, CL_INVALID_COMPILER_OPTIONS);
        let job = |args: &[String]| match compiler::compile_object(&[self.source_text()], args) {
            Ok((object, log)) => DeviceBuild {
                status: CL_BUILD_SUCCESS,
                options: user_options.to_string(),
                log,
                binary_type: CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
                objects: vec![Arc::new(object)],
                exe: None,
            },
            Err(e) => failed_build(e, user_options),
        };
        self.run_builds(devices, user_options, key, job, CL_COMPILE_PROGRAM_FAILURE)
    }

    /// clLinkProgram: a new program whose devices link the objects and libraries of `inputs`
    /// into an executable, or (`-create-library`) collect them into a library.
    pub fn link(
        context: &Arc<Context>,
        devices: Vec<Arc<Device>>,
        link_options: &str,
        inputs: &[Arc<Program>],
    ) -> CLResult<Arc<Program>> {
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
            }
            objects.push(modules);
        }
        let program = Arc::new(Program {
            base: Base::new(Kind::Program),
            context: context.clone(),
            source: String::new(),
            from_binary: false,
            builds: Mutex::new(vec![DeviceBuild::default(); devices.len()]),
            devices,
            kernels_attached: AtomicUsize::new(0),
        });
        let mut result = Ok(());
        for (i, modules) in objects.into_iter().enumerate() {
            let build = if library {
                DeviceBuild {
                    status: CL_BUILD_SUCCESS,
                    options: link_options.to_string(),
                    binary_type: CL_PROGRAM_BINARY_TYPE_LIBRARY,
                    objects: modules,
                    ..Default::default()
                }
            } else {
                let mut args =
                    options::clspv_args(&math.join(" "), &program.devices[i].clspv_target())
                        .map_err(|_| ClError(CL_INVALID_LINKER_OPTIONS))?;
                args.extend(["-x".to_string(), "ir".to_string()]);
                let sources: Vec<&[u8]> = modules.iter().map(|m| m.as_slice()).collect();
                let out = compiler::compile(&sources, &args);
                executable(out.map(|o| (o.spirv, o.log)), link_options)
            };
            if build.status != CL_BUILD_SUCCESS {
                result = Err(ClError(CL_LINK_PROGRAM_FAILURE));
            }
            program.builds.lock()[i] = build;
        }
        result.map(|()| program)
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
        if self.source.trim().is_empty() {
            b"\n"
        } else {
            self.source.as_bytes()
        }
    }
}

fn failed_build(e: CompileError, options: &str) -> DeviceBuild {
    let log = match e {
        CompileError::Failed { log } => log,
        CompileError::Unavailable(why) => format!("{UNAVAILABLE}: {why}"),
    };
    DeviceBuild {
        status: CL_BUILD_ERROR,
        options: options.to_string(),
        log,
        ..Default::default()
    }
}

/// The build of a device from clspv's output: an executable, or the failure with its log.
fn executable(out: Result<(Vec<u32>, String), CompileError>, options: &str) -> DeviceBuild {
    let (spirv, log) = match out {
        Ok(o) => o,
        Err(e) => return failed_build(e, options),
    };
    match reflection::parse(&spirv) {
        Ok(reflection) => DeviceBuild {
            status: CL_BUILD_SUCCESS,
            options: options.to_string(),
            log,
            binary_type: CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
            exe: Some(Arc::new(Executable::new(spirv, reflection, options))),
            objects: vec![],
        },
        Err(e) => failed_build(
            CompileError::Failed {
                log: format!("{log}\n{e}"),
            },
            options,
        ),
    }
}

/// A temporary folder holding clCompileProgram's embedded headers under their include names.
struct HeaderDir(std::path::PathBuf);

impl HeaderDir {
    fn new(headers: &[(String, String)]) -> std::io::Result<Option<HeaderDir>> {
        if headers.is_empty() {
            return Ok(None);
        }
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("vkcl-headers-{}-{n}", std::process::id()));
        let made = HeaderDir(dir.clone());
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
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        std::fs::create_dir_all(&dir)?;
        Ok(Some(made))
    }
}

impl Drop for HeaderDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const UNAVAILABLE: &str = "the OpenCL C compiler is not available";
