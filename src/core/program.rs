//! Programs: OpenCL C source compiled by clspv, with build state kept per device.

use super::context::Context;
use super::device::Device;
use super::error::{check, CLResult, ClError};
use super::object::{Base, ClObject, Kind};
use crate::cl::*;
use crate::compiler::reflection::{self, Reflection};
use crate::compiler::{self, options, CompileError};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a successful build produced for one device.
pub struct Executable {
    pub spirv: Vec<u32>,
    pub reflection: Reflection,
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
    pub source: String,
    /// The program's devices: those of its context.
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
            builds: Mutex::new(vec![DeviceBuild::default(); devices.len()]),
            devices,
            kernels_attached: AtomicUsize::new(0),
        })
    }

    pub fn device_index(&self, device: &Arc<Device>) -> Option<usize> {
        self.devices.iter().position(|d| Arc::ptr_eq(d, device))
    }

    pub fn build_of(&self, index: usize) -> DeviceBuild {
        self.builds.lock()[index].clone()
    }

    /// The executables of the devices where the program is built, by device index.
    pub fn executables(&self) -> Vec<Option<Arc<Executable>>> {
        self.builds.lock().iter().map(|b| b.exe.clone()).collect()
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
        let out = match compiler::compile(&[self.source.as_bytes()], args) {
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
                    spirv: out.spirv,
                    reflection,
                })),
            },
            Err(e) => failed(format!("{}\n{e}", out.log)),
        }
    }
}

const UNAVAILABLE: &str = "the OpenCL C compiler is not available";
