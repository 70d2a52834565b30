//! Programs.

use super::info::{array, string, v, write};
use super::util::{obj, slice};
use crate::cl::*;
use crate::compiler::binary;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::object::{handle, register, release, retain};
use crate::core::program::{Notify, Program};
use crate::core::{check, CLResult, ClError};
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;
use vkcl_macros::entry;

pub type BuildCallback = unsafe extern "C" fn(cl_program, *mut c_void);

/// A device list argument: NULL with 0 means "all"; the devices must be the program's.
fn device_list(
    program: &Program,
    num: cl_uint,
    list: *const cl_device_id,
) -> CLResult<Vec<Arc<Device>>> {
    check(list.is_null() == (num == 0), CL_INVALID_VALUE)?;
    // SAFETY: the application passes `num` handles.
    let handles = unsafe { slice(list, num as usize) };
    handles
        .iter()
        .map(|&h| {
            let d: Arc<Device> = obj(h)?;
            check(program.device_index(&d).is_some(), CL_INVALID_DEVICE)?;
            Ok(d)
        })
        .collect()
}

/// The application's build callback as a [`Notify`], if it gave one.
fn notify(
    pfn_notify: Option<BuildCallback>,
    program: cl_program,
    user_data: *mut c_void,
) -> Option<Notify> {
    /// The callback, holding an application reference to the program (as an event callback
    /// holds its event's), so that the handle it is given stays valid even where the
    /// application releases the program while it builds; given back once the callback ran, or
    /// when it is dropped without running (a build that did not start).
    struct Callback(BuildCallback, cl_program, *mut c_void);
    // SAFETY: the spec lets the implementation call pfn_notify from any thread; the program
    // handle and user data are the application's to share.
    unsafe impl Send for Callback {}
    impl Callback {
        fn call(self) {
            // SAFETY: the application's callback with its user data.
            unsafe { (self.0)(self.1, self.2) };
            // The reference goes with `self` (no vkcl lock is held here).
        }
    }
    impl Drop for Callback {
        fn drop(&mut self) {
            let _ = release::<Program>(self.1 as *const c_void);
        }
    }
    let f = pfn_notify?;
    retain::<Program>(program as *const c_void).ok()?;
    let callback = Callback(f, program, user_data);
    Some(Box::new(move || callback.call()))
}

/// A device list that must be of `ctx` (CL_INVALID_DEVICE otherwise).
fn context_devices(
    ctx: &Context,
    num: cl_uint,
    list: *const cl_device_id,
) -> CLResult<Vec<Arc<Device>>> {
    // SAFETY: the application passes `num` handles.
    let handles = unsafe { slice(list, num as usize) };
    handles
        .iter()
        .map(|&h| {
            let d: Arc<Device> = obj(h)?;
            check(ctx.has_device(&d), CL_INVALID_DEVICE)?;
            Ok(d)
        })
        .collect()
}

fn c_str<'a>(p: *const c_char) -> CLResult<&'a str> {
    if p.is_null() {
        return Ok("");
    }
    // SAFETY: the application passes a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| ClError(CL_INVALID_VALUE))
}

#[entry(clCreateProgramWithSource)]
unsafe fn create_program_with_source(
    context: cl_context,
    count: cl_uint,
    strings: *const *const c_char,
    lengths: *const usize,
) -> CLResult<cl_program> {
    let ctx: Arc<Context> = obj(context)?;
    check(count > 0 && !strings.is_null(), CL_INVALID_VALUE)?;
    let mut source = Vec::new();
    for i in 0..count as usize {
        // SAFETY: the application passes `count` string pointers (and lengths, if any).
        let (s, len) = unsafe {
            (
                *strings.add(i),
                if lengths.is_null() {
                    0
                } else {
                    *lengths.add(i)
                },
            )
        };
        check(!s.is_null(), CL_INVALID_VALUE)?;
        // A length of 0 means NUL-terminated.
        // SAFETY: either `len` bytes or a NUL-terminated string at s.
        let bytes = unsafe {
            if len == 0 {
                CStr::from_ptr(s).to_bytes()
            } else {
                std::slice::from_raw_parts(s as *const u8, len)
            }
        };
        // CL_PROGRAM_SOURCE is the concatenation with any NULs stripped.
        source.extend(bytes.iter().filter(|&&b| b != 0));
    }
    let source = String::from_utf8_lossy(&source).into_owned();
    Ok(register(Program::from_source(&ctx, source)) as cl_program)
}

#[entry(clRetainProgram, at_exit)]
fn retain_program(program: cl_program) -> CLResult<()> {
    super::platform::ensure_init();
    retain::<Program>(program as *const c_void)
}

#[entry(clReleaseProgram, at_exit)]
fn release_program(program: cl_program) -> CLResult<()> {
    super::platform::ensure_init();
    release::<Program>(program as *const c_void).map(|_| ())
}

#[entry(clBuildProgram)]
unsafe fn build_program(
    program: cl_program,
    num_devices: cl_uint,
    device_list_ptr: *const cl_device_id,
    options: *const c_char,
    pfn_notify: Option<BuildCallback>,
    user_data: *mut c_void,
) -> CLResult<()> {
    let p: Arc<Program> = obj(program)?;
    let devices = device_list(&p, num_devices, device_list_ptr)?;
    check(
        pfn_notify.is_some() || user_data.is_null(),
        CL_INVALID_VALUE,
    )?;
    p.build(
        &devices,
        c_str(options)?,
        notify(pfn_notify, program, user_data),
    )
}

#[entry(clCompileProgram)]
unsafe fn compile_program(
    program: cl_program,
    num_devices: cl_uint,
    device_list_ptr: *const cl_device_id,
    options: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *const *const c_char,
    pfn_notify: Option<BuildCallback>,
    user_data: *mut c_void,
) -> CLResult<()> {
    let p: Arc<Program> = obj(program)?;
    let devices = device_list(&p, num_devices, device_list_ptr)?;
    let n = num_input_headers as usize;
    check(
        (n == 0) == input_headers.is_null() && (n == 0) == header_include_names.is_null(),
        CL_INVALID_VALUE,
    )?;
    check(
        pfn_notify.is_some() || user_data.is_null(),
        CL_INVALID_VALUE,
    )?;
    // SAFETY: the application passes n header programs and n names.
    let (programs, names) = unsafe { (slice(input_headers, n), slice(header_include_names, n)) };
    let mut headers = vec![];
    for (&h, &name) in programs.iter().zip(names) {
        let header: Arc<Program> = obj(h)?;
        check(!name.is_null(), CL_INVALID_VALUE)?;
        headers.push((c_str(name)?.to_string(), header.source().to_string()));
    }
    p.compile(
        &devices,
        c_str(options)?,
        &headers,
        notify(pfn_notify, program, user_data),
    )
}

/// "If the linking operation can begin, clLinkProgram returns a valid non-zero program object.
/// If pfn_notify is NULL, the errcode_ret will be set to CL_SUCCESS if the link operation was
/// successful and CL_LINK_PROGRAM_FAILURE if there is a failure to link": a failed link returns
/// its program (build status CL_BUILD_ERROR, the log) with that error.
#[entry(clLinkProgram)]
unsafe fn link_program(
    context: cl_context,
    num_devices: cl_uint,
    device_list_ptr: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: Option<BuildCallback>,
    user_data: *mut c_void,
) -> CLResult<(cl_program, CLResult<()>)> {
    let ctx: Arc<Context> = obj(context)?;
    check(
        device_list_ptr.is_null() == (num_devices == 0),
        CL_INVALID_VALUE,
    )?;
    check(
        num_input_programs > 0 && !input_programs.is_null(),
        CL_INVALID_VALUE,
    )?;
    check(
        pfn_notify.is_some() || user_data.is_null(),
        CL_INVALID_VALUE,
    )?;
    let devices = context_devices(&ctx, num_devices, device_list_ptr)?;
    let devices = if devices.is_empty() {
        ctx.devices.clone()
    } else {
        devices
    };
    // SAFETY: the application passes num_input_programs handles.
    let inputs = unsafe { slice(input_programs, num_input_programs as usize) }
        .iter()
        .map(|&h| obj::<Program, _>(h))
        .collect::<CLResult<Vec<_>>>()?;
    check(
        inputs.iter().all(|p| Arc::ptr_eq(&p.context, &ctx)),
        CL_INVALID_CONTEXT,
    )?;
    let (program, link) = Program::link(&ctx, devices, c_str(options)?, &inputs)?;
    // The handle exists before the link runs: the callback (maybe on another thread) gets it.
    let handle = register(program) as cl_program;
    match link.run(notify(pfn_notify, handle, user_data)) {
        Ok(()) => Ok((handle, Ok(()))),
        Err(e) if e.0 == CL_LINK_PROGRAM_FAILURE => Ok((handle, Err(e))),
        Err(e) => {
            release::<Program>(handle as *const c_void)?;
            Err(e)
        }
    }
}

#[entry(clGetProgramInfo, at_exit)]
unsafe fn get_program_info(
    program: cl_program,
    param_name: cl_program_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let p: Arc<Program> = obj(program)?;
    let executable = || {
        p.any_executable()
            .ok_or(ClError(CL_INVALID_PROGRAM_EXECUTABLE))
    };
    let cl_false: cl_bool = CL_FALSE;
    let value = match param_name {
        CL_PROGRAM_REFERENCE_COUNT => v::<cl_uint>(p.base.api_refs()),
        CL_PROGRAM_CONTEXT => v::<cl_context>(handle(&p.context) as cl_context),
        CL_PROGRAM_NUM_DEVICES => v::<cl_uint>(p.devices.len() as cl_uint),
        CL_PROGRAM_DEVICES => array::<cl_device_id>(
            &p.devices
                .iter()
                .map(|d| handle(d) as cl_device_id)
                .collect::<Vec<_>>(),
        ),
        CL_PROGRAM_SOURCE => string(p.source()),
        CL_PROGRAM_IL => Ok(p.il().to_vec()),
        CL_PROGRAM_BINARY_SIZES => array::<usize>(
            &(0..p.devices.len())
                .map(|i| p.binary(i).len())
                .collect::<Vec<usize>>(),
        ),
        CL_PROGRAM_BINARIES => {
            // The application passes one pointer per device; write each device's binary
            // where its pointer is not NULL.
            let n = p.devices.len();
            let size = n * std::mem::size_of::<*mut u8>();
            if !param_value.is_null() {
                check(param_value_size >= size, CL_INVALID_VALUE)?;
                // SAFETY: the application passes an array of n pointers.
                let ptrs = unsafe { std::slice::from_raw_parts(param_value as *const *mut u8, n) };
                for (i, dst) in ptrs.iter().enumerate().filter(|(_, d)| !d.is_null()) {
                    let bin = p.binary(i);
                    // SAFETY: the application sized each buffer from CL_PROGRAM_BINARY_SIZES.
                    unsafe { std::ptr::copy_nonoverlapping(bin.as_ptr(), *dst, bin.len()) };
                }
            }
            if !param_value_size_ret.is_null() {
                // SAFETY: NULL or a size_t.
                unsafe { *param_value_size_ret = size };
            }
            return Ok(());
        }
        CL_PROGRAM_NUM_KERNELS => v::<usize>(executable()?.reflection.user_kernels().count()),
        CL_PROGRAM_KERNEL_NAMES => string(
            &executable()?
                .reflection
                .user_kernels()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(";"),
        ),
        // OpenCL C programs for vkcl have no program-scope constructors or destructors.
        CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT | CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT => {
            executable()?;
            v::<cl_bool>(cl_false)
        }
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clGetProgramBuildInfo)]
unsafe fn get_program_build_info(
    program: cl_program,
    device: cl_device_id,
    param_name: cl_program_build_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let p: Arc<Program> = obj(program)?;
    let d: Arc<Device> = obj(device)?;
    let build = p.build_of(p.device_index(&d).ok_or(ClError(CL_INVALID_DEVICE))?);
    let value = match param_name {
        CL_PROGRAM_BUILD_STATUS => v::<cl_build_status>(build.status),
        CL_PROGRAM_BUILD_OPTIONS => string(&build.options),
        CL_PROGRAM_BUILD_LOG => string(&build.log),
        CL_PROGRAM_BINARY_TYPE => v::<cl_program_binary_type>(build.binary_type),
        // The bytes of the program-scope variables' buffer (compiler::globals).
        CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => {
            v::<usize>(build.exe.as_ref().map_or(0, |e| {
                e.reflection.globals.as_ref().map_or(0, |g| g.data.len())
            }))
        }
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clCreateProgramWithBinary)]
unsafe fn create_program_with_binary(
    context: cl_context,
    num_devices: cl_uint,
    device_list_ptr: *const cl_device_id,
    lengths: *const usize,
    binaries: *const *const u8,
    binary_status: *mut cl_int,
) -> CLResult<cl_program> {
    let ctx: Arc<Context> = obj(context)?;
    check(
        !device_list_ptr.is_null() && num_devices > 0,
        CL_INVALID_VALUE,
    )?;
    let devices = context_devices(&ctx, num_devices, device_list_ptr)?;
    check(!lengths.is_null() && !binaries.is_null(), CL_INVALID_VALUE)?;
    let n = num_devices as usize;
    // SAFETY: the application passes num_devices lengths and binary pointers.
    let (lengths, binaries) = unsafe { (slice(lengths, n), slice(binaries, n)) };
    let mut status = vec![CL_SUCCESS; n];
    let mut decoded = vec![];
    let compiler = crate::compiler::binary_identity();
    for i in 0..n {
        if lengths[i] == 0 || binaries[i].is_null() {
            status[i] = CL_INVALID_VALUE;
            continue;
        }
        // SAFETY: lengths[i] bytes at binaries[i].
        let bytes = unsafe { std::slice::from_raw_parts(binaries[i], lengths[i]) };
        match binary::decode(bytes, &devices[i].identity(), &compiler) {
            Ok(c) => decoded.push(c),
            Err(why) => {
                log::info!(target: "api", "binary {i} refused: {why}");
                status[i] = CL_INVALID_BINARY;
            }
        }
    }
    let write_status = |st: &[cl_int]| {
        if !binary_status.is_null() {
            // SAFETY: the application gives room for num_devices statuses.
            unsafe { std::ptr::copy_nonoverlapping(st.as_ptr(), binary_status, n) };
        }
    };
    if let Some(&bad) = status.iter().find(|&&s| s != CL_SUCCESS) {
        write_status(&status);
        return Err(ClError(bad));
    }
    let (program, status) = Program::from_binaries(&ctx, devices, decoded);
    write_status(&status);
    check(status.iter().all(|&s| s == CL_SUCCESS), CL_INVALID_BINARY)?;
    Ok(register(program) as cl_program)
}

#[entry(clCreateProgramWithBuiltInKernels)]
unsafe fn create_program_with_built_in_kernels(
    context: cl_context,
    num_devices: cl_uint,
    device_list_ptr: *const cl_device_id,
    kernel_names: *const c_char,
) -> CLResult<cl_program> {
    let ctx: Arc<Context> = obj(context)?;
    check(
        !device_list_ptr.is_null() && num_devices > 0 && !kernel_names.is_null(),
        CL_INVALID_VALUE,
    )?;
    context_devices(&ctx, num_devices, device_list_ptr)?;
    // vkcl has no built-in kernels: every name is unknown.
    Err(ClError(CL_INVALID_VALUE))
}

#[entry(clCreateProgramWithIL)]
unsafe fn create_program_with_il(
    context: cl_context,
    il: *const c_void,
    length: usize,
) -> CLResult<cl_program> {
    let ctx: Arc<Context> = obj(context)?;
    check(!il.is_null() && length > 0, CL_INVALID_VALUE)?;
    // SAFETY: the application passes `length` bytes at `il`.
    let il = unsafe { std::slice::from_raw_parts(il as *const u8, length) }.to_vec();
    Ok(register(Program::from_il(&ctx, il)?) as cl_program)
}

#[entry(clSetProgramSpecializationConstant)]
unsafe fn set_program_specialization_constant(
    program: cl_program,
    spec_id: cl_uint,
    spec_size: usize,
    spec_value: *const c_void,
) -> CLResult<()> {
    let p: Arc<Program> = obj(program)?;
    check(!spec_value.is_null(), CL_INVALID_VALUE)?;
    // SAFETY: the application passes spec_size bytes at spec_value.
    let value = unsafe { std::slice::from_raw_parts(spec_value as *const u8, spec_size) };
    p.set_spec_constant(spec_id, value)
}
