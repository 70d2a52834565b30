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
}

impl Default for DeviceBuild {
    fn default() -> Self {
        DeviceBuild {
            status: CL_BUILD_NONE,
            options: String::new(),
            log: String::new(),
            binary_type: CL_PROGRAM_BINARY_TYPE_NONE,
            exe: None,
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

    /// clBuildProgram for `devices` (all of the program's when empty).
    pub fn build(&self, devices: &[Arc<Device>], user_options: &str) -> CLResult<()> {
        check(
            self.kernels_attached.load(Ordering::Acquire) == 0,
            CL_INVALID_OPERATION,
        )?;
        let indices: Vec<usize> = if devices.is_empty() {
            (0..self.devices.len()).collect()
        } else {
            devices
                .iter()
                .map(|d| self.device_index(d).ok_or(ClError(CL_INVALID_DEVICE)))
                .collect::<CLResult<_>>()?
        };
        if self.from_binary {
            // Nothing to compile: the binaries are executables.
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
        let mut jobs = vec![];
        {
            let mut builds = self.builds.lock();
            check(
                indices
                    .iter()
                    .all(|&i| builds[i].status != CL_BUILD_IN_PROGRESS),
                CL_INVALID_OPERATION,
            )?;
            for &i in &indices {
                let args = options::clspv_args(user_options, &self.devices[i].clspv_target()).map_err(|why| {
                    log::info!(target: "compiler", "invalid build options {user_options:?}: {why}");
                    ClError(CL_INVALID_BUILD_OPTIONS)
                })?;
                jobs.push((i, args));
            }
            for &(i, _) in &jobs {
                builds[i] = DeviceBuild {
                    status: CL_BUILD_IN_PROGRESS,
                    options: user_options.to_string(),
                    ..Default::default()
                };
            }
        }
        // Devices with the same target get the same clspv arguments: compile once for them.
        let mut done: HashMap<Vec<String>, DeviceBuild> = HashMap::new();
        let mut result = Ok(());
        for (i, args) in jobs {
            let build = match done.get(&args) {
                Some(b) => b.clone(),
                None => {
                    let b = self.compile(&args, user_options);
                    done.insert(args, b.clone());
                    b
                }
            };
            if build.status != CL_BUILD_SUCCESS {
                let unavailable = build.log.starts_with(UNAVAILABLE);
                result = Err(ClError(if unavailable {
                    CL_COMPILER_NOT_AVAILABLE
                } else {
                    CL_BUILD_PROGRAM_FAILURE
                }));
            }
            self.builds.lock()[i] = build;
        }
        result
    }

    fn compile(&self, args: &[String], user_options: &str) -> DeviceBuild {
        let failed = |log: String| DeviceBuild {
            status: CL_BUILD_ERROR,
            options: user_options.to_string(),
            log,
            ..Default::default()
        };
        // clspv crashes on an empty module; a blank line compiles to a program with no kernel.
        let source = if self.source.trim().is_empty() {
            "\n"
        } else {
            self.source.as_str()
        };
        let out = match compiler::compile(&[source.as_bytes()], args) {
            Ok(out) => out,
            Err(CompileError::Failed { log }) => return failed(log),
            Err(CompileError::Unavailable(why)) => return failed(format!("{UNAVAILABLE}: {why}")),
        };
        match reflection::parse(&out.spirv) {
            Ok(reflection) => DeviceBuild {
                status: CL_BUILD_SUCCESS,
                options: user_options.to_string(),
                log: out.log,
                binary_type: CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
                exe: Some(Arc::new(Executable {
                    num_workgroups_users: num_workgroups_users(&out.spirv),
                    spirv: out.spirv,
                    reflection,
                    arg_info: user_options
                        .split_whitespace()
                        .any(|o| o == "-cl-kernel-arg-info"),
                })),
            },
            Err(e) => failed(format!("{}\n{e}", out.log)),
        }
    }
}

const UNAVAILABLE: &str = "the OpenCL C compiler is not available";
