//! Shared helpers for the integration tests.
//!
//! The tests talk to the ICD exactly like an application would: through the
//! system ocl-icd loader (`libOpenCL.so.1`), with the hand-written minimal
//! bindings below (types and constants copied from `/usr/include/CL/cl.h`).
//!
//! ICD selection (`setup()`): if `OCL_ICD_VENDORS` is unset it is pointed at
//! `<dir of test exe>/../libvkcl.so` (test exes live in `target/<profile>/deps/`),
//! otherwise it is used as is (e.g. `/etc/OpenCL/vendors/pocl.icd` to validate
//! the tests against another implementation).
#![allow(
    dead_code,
    non_camel_case_types,
    non_upper_case_globals,
    clippy::missing_safety_doc
)]

use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::{Once, OnceLock};

// ---------------------------------------------------------------- types
pub type cl_int = i32;
pub type cl_uint = u32;
pub type cl_ulong = u64;
pub type cl_bool = u32;
pub type cl_bitfield = u64;
pub type cl_platform_id = *mut c_void;
pub type cl_device_id = *mut c_void;
pub type cl_context = *mut c_void;
pub type cl_command_queue = *mut c_void;
pub type cl_mem = *mut c_void;
pub type cl_program = *mut c_void;
pub type cl_kernel = *mut c_void;
pub type cl_event = *mut c_void;
pub type cl_context_properties = isize;
pub type cl_queue_properties = u64;
pub type Notify = Option<unsafe extern "C" fn(*const c_char, *const c_void, usize, *mut c_void)>;
pub type BuildNotify = Option<unsafe extern "C" fn(cl_program, *mut c_void)>;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cl_name_version {
    pub version: cl_uint,
    pub name: [c_char; 64],
}
impl cl_name_version {
    pub fn name(&self) -> String {
        unsafe { CStr::from_ptr(self.name.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }
}

#[rustfmt::skip]
#[link(name = "OpenCL")]
extern "C" {
    pub fn clGetPlatformIDs(n: cl_uint, p: *mut cl_platform_id, num: *mut cl_uint) -> cl_int;
    pub fn clGetPlatformInfo(p: cl_platform_id, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clGetDeviceIDs(p: cl_platform_id, ty: cl_bitfield, n: cl_uint, d: *mut cl_device_id, num: *mut cl_uint) -> cl_int;
    pub fn clGetDeviceInfo(d: cl_device_id, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clCreateContext(props: *const cl_context_properties, n: cl_uint, d: *const cl_device_id, f: Notify, ud: *mut c_void, err: *mut cl_int) -> cl_context;
    pub fn clCreateContextFromType(props: *const cl_context_properties, ty: cl_bitfield, f: Notify, ud: *mut c_void, err: *mut cl_int) -> cl_context;
    pub fn clRetainContext(c: cl_context) -> cl_int;
    pub fn clReleaseContext(c: cl_context) -> cl_int;
    pub fn clGetContextInfo(c: cl_context, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clCreateCommandQueueWithProperties(c: cl_context, d: cl_device_id, props: *const cl_queue_properties, err: *mut cl_int) -> cl_command_queue;
    pub fn clCreateCommandQueue(c: cl_context, d: cl_device_id, props: cl_bitfield, err: *mut cl_int) -> cl_command_queue;
    pub fn clRetainCommandQueue(q: cl_command_queue) -> cl_int;
    pub fn clReleaseCommandQueue(q: cl_command_queue) -> cl_int;
    pub fn clGetCommandQueueInfo(q: cl_command_queue, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clFlush(q: cl_command_queue) -> cl_int;
    pub fn clFinish(q: cl_command_queue) -> cl_int;
    pub fn clCreateBuffer(c: cl_context, flags: cl_bitfield, size: usize, host: *mut c_void, err: *mut cl_int) -> cl_mem;
    pub fn clRetainMemObject(m: cl_mem) -> cl_int;
    pub fn clReleaseMemObject(m: cl_mem) -> cl_int;
    pub fn clGetMemObjectInfo(m: cl_mem, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clEnqueueReadBuffer(q: cl_command_queue, m: cl_mem, blocking: cl_bool, off: usize, size: usize, ptr: *mut c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueWriteBuffer(q: cl_command_queue, m: cl_mem, blocking: cl_bool, off: usize, size: usize, ptr: *const c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueCopyBuffer(q: cl_command_queue, src: cl_mem, dst: cl_mem, so: usize, dof: usize, size: usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueFillBuffer(q: cl_command_queue, m: cl_mem, pat: *const c_void, psz: usize, off: usize, size: usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueMapBuffer(q: cl_command_queue, m: cl_mem, blocking: cl_bool, flags: cl_bitfield, off: usize, size: usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event, err: *mut cl_int) -> *mut c_void;
    pub fn clEnqueueUnmapMemObject(q: cl_command_queue, m: cl_mem, ptr: *mut c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clWaitForEvents(n: cl_uint, l: *const cl_event) -> cl_int;
    pub fn clGetEventInfo(e: cl_event, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clRetainEvent(e: cl_event) -> cl_int;
    pub fn clReleaseEvent(e: cl_event) -> cl_int;
    pub fn clCreateProgramWithSource(c: cl_context, n: cl_uint, s: *const *const c_char, lens: *const usize, err: *mut cl_int) -> cl_program;
    pub fn clBuildProgram(p: cl_program, n: cl_uint, d: *const cl_device_id, opts: *const c_char, f: BuildNotify, ud: *mut c_void) -> cl_int;
    pub fn clRetainProgram(p: cl_program) -> cl_int;
    pub fn clReleaseProgram(p: cl_program) -> cl_int;
    pub fn clGetProgramInfo(p: cl_program, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clGetProgramBuildInfo(p: cl_program, d: cl_device_id, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clCreateKernel(p: cl_program, name: *const c_char, err: *mut cl_int) -> cl_kernel;
    pub fn clCreateKernelsInProgram(p: cl_program, n: cl_uint, k: *mut cl_kernel, num: *mut cl_uint) -> cl_int;
    pub fn clRetainKernel(k: cl_kernel) -> cl_int;
    pub fn clReleaseKernel(k: cl_kernel) -> cl_int;
    pub fn clSetKernelArg(k: cl_kernel, i: cl_uint, sz: usize, v: *const c_void) -> cl_int;
    pub fn clGetKernelInfo(k: cl_kernel, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clGetKernelWorkGroupInfo(k: cl_kernel, d: cl_device_id, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clEnqueueNDRangeKernel(q: cl_command_queue, k: cl_kernel, dim: cl_uint, off: *const usize, gws: *const usize, lws: *const usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
}

// ---------------------------------------------------------------- constants (cl.h / cl_ext.h)
pub const CL_FALSE: cl_bool = 0;
pub const CL_TRUE: cl_bool = 1;

macro_rules! errors {
    ($($name:ident = $v:expr),* $(,)?) => {
        $(pub const $name: cl_int = $v;)*
        /// Symbolic name of an OpenCL error code.
        pub fn err_name(code: cl_int) -> String {
            match code { $($v => stringify!($name).to_string(),)* _ => format!("<unknown error {code}>") }
        }
    };
}
errors! {
    CL_SUCCESS = 0, CL_DEVICE_NOT_FOUND = -1, CL_DEVICE_NOT_AVAILABLE = -2, CL_COMPILER_NOT_AVAILABLE = -3,
    CL_MEM_OBJECT_ALLOCATION_FAILURE = -4, CL_OUT_OF_RESOURCES = -5, CL_OUT_OF_HOST_MEMORY = -6,
    CL_PROFILING_INFO_NOT_AVAILABLE = -7, CL_MEM_COPY_OVERLAP = -8, CL_IMAGE_FORMAT_MISMATCH = -9,
    CL_IMAGE_FORMAT_NOT_SUPPORTED = -10, CL_BUILD_PROGRAM_FAILURE = -11, CL_MAP_FAILURE = -12,
    CL_MISALIGNED_SUB_BUFFER_OFFSET = -13, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST = -14,
    CL_COMPILE_PROGRAM_FAILURE = -15, CL_LINKER_NOT_AVAILABLE = -16, CL_LINK_PROGRAM_FAILURE = -17,
    CL_DEVICE_PARTITION_FAILED = -18, CL_KERNEL_ARG_INFO_NOT_AVAILABLE = -19,
    CL_INVALID_VALUE = -30, CL_INVALID_DEVICE_TYPE = -31, CL_INVALID_PLATFORM = -32, CL_INVALID_DEVICE = -33,
    CL_INVALID_CONTEXT = -34, CL_INVALID_QUEUE_PROPERTIES = -35, CL_INVALID_COMMAND_QUEUE = -36,
    CL_INVALID_HOST_PTR = -37, CL_INVALID_MEM_OBJECT = -38, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR = -39,
    CL_INVALID_IMAGE_SIZE = -40, CL_INVALID_SAMPLER = -41, CL_INVALID_BINARY = -42, CL_INVALID_BUILD_OPTIONS = -43,
    CL_INVALID_PROGRAM = -44, CL_INVALID_PROGRAM_EXECUTABLE = -45, CL_INVALID_KERNEL_NAME = -46,
    CL_INVALID_KERNEL_DEFINITION = -47, CL_INVALID_KERNEL = -48, CL_INVALID_ARG_INDEX = -49,
    CL_INVALID_ARG_VALUE = -50, CL_INVALID_ARG_SIZE = -51, CL_INVALID_KERNEL_ARGS = -52,
    CL_INVALID_WORK_DIMENSION = -53, CL_INVALID_WORK_GROUP_SIZE = -54, CL_INVALID_WORK_ITEM_SIZE = -55,
    CL_INVALID_GLOBAL_OFFSET = -56, CL_INVALID_EVENT_WAIT_LIST = -57, CL_INVALID_EVENT = -58,
    CL_INVALID_OPERATION = -59, CL_INVALID_GL_OBJECT = -60, CL_INVALID_BUFFER_SIZE = -61,
    CL_INVALID_MIP_LEVEL = -62, CL_INVALID_GLOBAL_WORK_SIZE = -63, CL_INVALID_PROPERTY = -64,
    CL_INVALID_IMAGE_DESCRIPTOR = -65, CL_INVALID_COMPILER_OPTIONS = -66, CL_INVALID_LINKER_OPTIONS = -67,
    CL_INVALID_DEVICE_PARTITION_COUNT = -68, CL_INVALID_PIPE_SIZE = -69, CL_INVALID_DEVICE_QUEUE = -70,
    CL_INVALID_SPEC_ID = -71, CL_MAX_SIZE_RESTRICTION_EXCEEDED = -72,
}

// platform info
pub const CL_PLATFORM_PROFILE: cl_uint = 0x0900;
pub const CL_PLATFORM_VERSION: cl_uint = 0x0901;
pub const CL_PLATFORM_NAME: cl_uint = 0x0902;
pub const CL_PLATFORM_VENDOR: cl_uint = 0x0903;
pub const CL_PLATFORM_EXTENSIONS: cl_uint = 0x0904;
pub const CL_PLATFORM_HOST_TIMER_RESOLUTION: cl_uint = 0x0905;
pub const CL_PLATFORM_NUMERIC_VERSION: cl_uint = 0x0906;
pub const CL_PLATFORM_EXTENSIONS_WITH_VERSION: cl_uint = 0x0907;
pub const CL_PLATFORM_ICD_SUFFIX_KHR: cl_uint = 0x0920;
// device types
pub const CL_DEVICE_TYPE_DEFAULT: cl_bitfield = 1 << 0;
pub const CL_DEVICE_TYPE_CPU: cl_bitfield = 1 << 1;
pub const CL_DEVICE_TYPE_GPU: cl_bitfield = 1 << 2;
pub const CL_DEVICE_TYPE_ACCELERATOR: cl_bitfield = 1 << 3;
pub const CL_DEVICE_TYPE_CUSTOM: cl_bitfield = 1 << 4;
pub const CL_DEVICE_TYPE_ALL: cl_bitfield = 0xFFFF_FFFF;
// device info (values only needed by name in tests; the full table is in platform_device.rs)
pub const CL_DEVICE_TYPE: cl_uint = 0x1000;
pub const CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS: cl_uint = 0x1003;
pub const CL_DEVICE_MAX_WORK_GROUP_SIZE: cl_uint = 0x1004;
pub const CL_DEVICE_MAX_WORK_ITEM_SIZES: cl_uint = 0x1005;
pub const CL_DEVICE_MAX_MEM_ALLOC_SIZE: cl_uint = 0x1010;
pub const CL_DEVICE_MEM_BASE_ADDR_ALIGN: cl_uint = 0x1019;
pub const CL_DEVICE_GLOBAL_MEM_SIZE: cl_uint = 0x101F;
pub const CL_DEVICE_LOCAL_MEM_SIZE: cl_uint = 0x1023;
pub const CL_DEVICE_QUEUE_ON_HOST_PROPERTIES: cl_uint = 0x102A;
pub const CL_DEVICE_NAME: cl_uint = 0x102B;
pub const CL_DEVICE_PROFILE: cl_uint = 0x102E;
pub const CL_DEVICE_VERSION: cl_uint = 0x102F;
pub const CL_DEVICE_EXTENSIONS: cl_uint = 0x1030;
pub const CL_DEVICE_OPENCL_C_VERSION: cl_uint = 0x103D;

/// The sub-group extensions of OpenCL C (cl_khr_subgroup_*) that Vulkan's subgroup operations
/// carry.
pub const SUBGROUP_EXTENSIONS: [&str; 7] = [
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_clustered_reduce",
];
pub const CL_DEVICE_PLATFORM: cl_uint = 0x1031;
pub const CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES: cl_uint = 0x104E;
pub const CL_DEVICE_EXTENSIONS_WITH_VERSION: cl_uint = 0x1060;
pub const CL_DEVICE_OPENCL_C_ALL_VERSIONS: cl_uint = 0x1066;
// context
pub const CL_CONTEXT_REFERENCE_COUNT: cl_uint = 0x1080;
pub const CL_CONTEXT_DEVICES: cl_uint = 0x1081;
pub const CL_CONTEXT_PROPERTIES: cl_uint = 0x1082;
pub const CL_CONTEXT_NUM_DEVICES: cl_uint = 0x1083;
pub const CL_CONTEXT_PLATFORM: cl_context_properties = 0x1084;
// queue
pub const CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE: cl_bitfield = 1 << 0;
pub const CL_QUEUE_PROFILING_ENABLE: cl_bitfield = 1 << 1;
pub const CL_QUEUE_ON_DEVICE: cl_bitfield = 1 << 2;
pub const CL_QUEUE_CONTEXT: cl_uint = 0x1090;
pub const CL_QUEUE_DEVICE: cl_uint = 0x1091;
pub const CL_QUEUE_REFERENCE_COUNT: cl_uint = 0x1092;
pub const CL_QUEUE_PROPERTIES: cl_uint = 0x1093;
pub const CL_QUEUE_PROPERTIES_ARRAY: cl_uint = 0x1098;
// mem
pub const CL_MEM_READ_WRITE: cl_bitfield = 1 << 0;
pub const CL_MEM_WRITE_ONLY: cl_bitfield = 1 << 1;
pub const CL_MEM_READ_ONLY: cl_bitfield = 1 << 2;
pub const CL_MEM_USE_HOST_PTR: cl_bitfield = 1 << 3;
pub const CL_MEM_ALLOC_HOST_PTR: cl_bitfield = 1 << 4;
pub const CL_MEM_COPY_HOST_PTR: cl_bitfield = 1 << 5;
pub const CL_MEM_OBJECT_BUFFER: cl_uint = 0x10F0;
pub const CL_MEM_TYPE: cl_uint = 0x1100;
pub const CL_MEM_FLAGS: cl_uint = 0x1101;
pub const CL_MEM_SIZE: cl_uint = 0x1102;
pub const CL_MEM_HOST_PTR: cl_uint = 0x1103;
pub const CL_MEM_MAP_COUNT: cl_uint = 0x1104;
pub const CL_MEM_REFERENCE_COUNT: cl_uint = 0x1105;
pub const CL_MEM_CONTEXT: cl_uint = 0x1106;
pub const CL_MEM_ASSOCIATED_MEMOBJECT: cl_uint = 0x1107;
pub const CL_MEM_OFFSET: cl_uint = 0x1108;
pub const CL_MEM_USES_SVM_POINTER: cl_uint = 0x1109;
pub const CL_MEM_PROPERTIES: cl_uint = 0x110A;
pub const CL_MAP_READ: cl_bitfield = 1 << 0;
pub const CL_MAP_WRITE: cl_bitfield = 1 << 1;
pub const CL_MAP_WRITE_INVALIDATE_REGION: cl_bitfield = 1 << 2;
// program
pub const CL_PROGRAM_REFERENCE_COUNT: cl_uint = 0x1160;
pub const CL_PROGRAM_CONTEXT: cl_uint = 0x1161;
pub const CL_PROGRAM_NUM_DEVICES: cl_uint = 0x1162;
pub const CL_PROGRAM_DEVICES: cl_uint = 0x1163;
pub const CL_PROGRAM_SOURCE: cl_uint = 0x1164;
pub const CL_PROGRAM_NUM_KERNELS: cl_uint = 0x1167;
pub const CL_PROGRAM_KERNEL_NAMES: cl_uint = 0x1168;
pub const CL_PROGRAM_BUILD_STATUS: cl_uint = 0x1181;
pub const CL_PROGRAM_BUILD_OPTIONS: cl_uint = 0x1182;
pub const CL_PROGRAM_BUILD_LOG: cl_uint = 0x1183;
pub const CL_PROGRAM_BINARY_TYPE: cl_uint = 0x1184;
pub const CL_PROGRAM_BINARY_TYPE_NONE: cl_uint = 0x0;
pub const CL_PROGRAM_BINARY_TYPE_EXECUTABLE: cl_uint = 0x4;
pub const CL_BUILD_SUCCESS: cl_int = 0;
pub const CL_BUILD_NONE: cl_int = -1;
pub const CL_BUILD_ERROR: cl_int = -2;
// kernel
pub const CL_KERNEL_FUNCTION_NAME: cl_uint = 0x1190;
pub const CL_KERNEL_NUM_ARGS: cl_uint = 0x1191;
pub const CL_KERNEL_REFERENCE_COUNT: cl_uint = 0x1192;
pub const CL_KERNEL_CONTEXT: cl_uint = 0x1193;
pub const CL_KERNEL_PROGRAM: cl_uint = 0x1194;
pub const CL_KERNEL_ATTRIBUTES: cl_uint = 0x1195;
pub const CL_KERNEL_WORK_GROUP_SIZE: cl_uint = 0x11B0;
pub const CL_KERNEL_COMPILE_WORK_GROUP_SIZE: cl_uint = 0x11B1;
pub const CL_KERNEL_LOCAL_MEM_SIZE: cl_uint = 0x11B2;
pub const CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: cl_uint = 0x11B3;
pub const CL_KERNEL_PRIVATE_MEM_SIZE: cl_uint = 0x11B4;
// event
pub const CL_EVENT_COMMAND_QUEUE: cl_uint = 0x11D0;
pub const CL_EVENT_COMMAND_TYPE: cl_uint = 0x11D1;
pub const CL_EVENT_REFERENCE_COUNT: cl_uint = 0x11D2;
pub const CL_EVENT_COMMAND_EXECUTION_STATUS: cl_uint = 0x11D3;
pub const CL_EVENT_CONTEXT: cl_uint = 0x11D4;
pub const CL_COMMAND_NDRANGE_KERNEL: cl_uint = 0x11F0;
pub const CL_COMMAND_READ_BUFFER: cl_uint = 0x11F3;
pub const CL_COMMAND_WRITE_BUFFER: cl_uint = 0x11F4;
pub const CL_COMMAND_COPY_BUFFER: cl_uint = 0x11F5;
pub const CL_COMMAND_MAP_BUFFER: cl_uint = 0x11FB;
pub const CL_COMMAND_UNMAP_MEM_OBJECT: cl_uint = 0x11FD;
pub const CL_COMMAND_FILL_BUFFER: cl_uint = 0x1207;
pub const CL_COMPLETE: cl_int = 0;

// ---------------------------------------------------------------- setup / platform / device

/// Asserts that an OpenCL call returned CL_SUCCESS, naming the error otherwise.
/// (Test files use `#[macro_use] mod common;`.)
macro_rules! check {
    ($call:expr) => {{
        #[allow(unused_unsafe)]
        let code: i32 = unsafe { $call };
        assert!(
            code == $crate::common::CL_SUCCESS,
            "{} failed: {} ({})",
            stringify!($call),
            $crate::common::err_name(code),
            code
        );
    }};
}

/// Asserts that an OpenCL call (or an error code) equals the expected error.
#[allow(unused_macros)]
macro_rules! check_err {
    ($call:expr, $expected:expr) => {{
        #[allow(unused_unsafe)]
        let code: i32 = unsafe { $call };
        assert!(
            code == $expected,
            "{}: expected {} but got {} ({})",
            stringify!($call),
            $crate::common::err_name($expected),
            $crate::common::err_name(code),
            code
        );
    }};
}

static SETUP: Once = Once::new();

/// Selects the ICD (see module doc). Called first by every test.
pub fn setup() {
    SETUP.call_once(|| {
        // A panic that vkcl catches at the C boundary aborts the test process (instead of
        // hiding behind CL_OUT_OF_HOST_MEMORY, which the fuzzer accepts from every call): every
        // test through the loader asserts that no call panicked. Set before the first CL call,
        // while no other test thread can be inside one (they wait on SETUP).
        if std::env::var_os("VKCL_PANIC").is_none() {
            std::env::set_var("VKCL_PANIC", "abort");
        }
        if std::env::var_os("OCL_ICD_VENDORS").is_none() {
            let exe = std::env::current_exe().expect("current_exe");
            let lib = exe
                .parent()
                .and_then(|d| d.parent())
                .expect("exe dir")
                .join("libvkcl.so");
            assert!(
                lib.exists(),
                "vkcl ICD not found at {} (build the cdylib first)",
                lib.display()
            );
            std::env::set_var("OCL_ICD_VENDORS", &lib);
        }
    });
}

struct Ids(usize, usize);
static IDS: OnceLock<Ids> = OnceLock::new();

fn ids() -> &'static Ids {
    setup();
    IDS.get_or_init(|| unsafe {
        let mut n = 0;
        let code = clGetPlatformIDs(0, null_mut(), &mut n);
        assert!(
            code == CL_SUCCESS && n >= 1,
            "no OpenCL platform found through the ICD loader (OCL_ICD_VENDORS={:?}): {} n={n}",
            std::env::var_os("OCL_ICD_VENDORS"),
            err_name(code)
        );
        let mut p = vec![null_mut(); n as usize];
        check!(clGetPlatformIDs(n, p.as_mut_ptr(), null_mut()));
        let mut nd = 0;
        let code = clGetDeviceIDs(p[0], CL_DEVICE_TYPE_ALL, 0, null_mut(), &mut nd);
        assert!(
            code == CL_SUCCESS && nd >= 1,
            "no device on the first platform: {}",
            err_name(code)
        );
        let mut d = vec![null_mut(); nd as usize];
        check!(clGetDeviceIDs(
            p[0],
            CL_DEVICE_TYPE_ALL,
            nd,
            d.as_mut_ptr(),
            null_mut()
        ));
        Ids(p[0] as usize, d[0] as usize)
    })
}

/// A file of the repository, by its path from the root: under `VKCL_REPO_DIR` where that is
/// set (ci/h200.sh runs the test executables away from their build tree), else the build tree's.
pub fn repo_file(path: &str) -> std::path::PathBuf {
    let root = std::env::var_os("VKCL_REPO_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    root.join(path)
}

/// The first platform.
pub fn platform() -> cl_platform_id {
    ids().0 as cl_platform_id
}

/// True when the tests run against pocl (used only to tolerate known pocl bugs,
/// each one documented at its use; vkcl is always held to the spec).
pub fn is_pocl() -> bool {
    platform_str(platform(), CL_PLATFORM_NAME) == "Portable Computing Language"
}

/// The first device (CL_DEVICE_TYPE_ALL) of the first platform.
pub fn device() -> cl_device_id {
    ids().1 as cl_device_id
}

// ---------------------------------------------------------------- info queries

/// The size/value protocol: asks for the size, then for the value with exactly that size.
pub fn info_bytes(f: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> Vec<u8> {
    let mut size = 0usize;
    let code = f(0, null_mut(), &mut size);
    assert_eq!(code, CL_SUCCESS, "size query failed: {}", err_name(code));
    let mut v = vec![0u8; size];
    let mut size2 = 0usize;
    let code = f(size, v.as_mut_ptr().cast(), &mut size2);
    assert_eq!(code, CL_SUCCESS, "value query failed: {}", err_name(code));
    assert_eq!(
        size, size2,
        "size returned by the value query differs from the size query"
    );
    v
}

pub fn bytes_to_string(v: &[u8]) -> String {
    assert_eq!(
        v.last(),
        Some(&0),
        "string info is not NUL-terminated: {v:?}"
    );
    String::from_utf8(v[..v.len() - 1].to_vec()).expect("info string is not UTF-8")
}

/// Reinterprets info bytes as a Vec<T> (size must be a multiple of size_of::<T>()).
pub fn bytes_to_vec<T: Copy>(v: &[u8]) -> Vec<T> {
    let n = std::mem::size_of::<T>();
    assert_eq!(
        v.len() % n,
        0,
        "info size {} is not a multiple of {}",
        v.len(),
        n
    );
    (0..v.len() / n)
        .map(|i| unsafe { std::ptr::read_unaligned(v.as_ptr().add(i * n).cast::<T>()) })
        .collect()
}

/// Reads a scalar info value, asserting the returned size is exactly size_of::<T>().
pub fn bytes_to<T: Copy>(v: &[u8]) -> T {
    assert_eq!(v.len(), std::mem::size_of::<T>(), "unexpected info size");
    bytes_to_vec::<T>(v)[0]
}

macro_rules! info_fn {
    ($bytes:ident, $str:ident, $val:ident, $f:ident, $h:ty $(, $extra:ident : $et:ty)*) => {
        pub fn $bytes(h: $h $(, $extra: $et)*, p: cl_uint) -> Vec<u8> {
            info_bytes(|s, v, r| unsafe { $f(h $(, $extra)*, p, s, v, r) })
        }
        pub fn $str(h: $h $(, $extra: $et)*, p: cl_uint) -> String { bytes_to_string(&$bytes(h $(, $extra)*, p)) }
        pub fn $val<T: Copy>(h: $h $(, $extra: $et)*, p: cl_uint) -> T { bytes_to(&$bytes(h $(, $extra)*, p)) }
    };
}
info_fn!(
    platform_info,
    platform_str,
    platform_val,
    clGetPlatformInfo,
    cl_platform_id
);
info_fn!(
    device_info,
    device_str,
    device_val,
    clGetDeviceInfo,
    cl_device_id
);
info_fn!(
    context_info,
    context_str,
    context_val,
    clGetContextInfo,
    cl_context
);
info_fn!(
    queue_info,
    queue_str,
    queue_val,
    clGetCommandQueueInfo,
    cl_command_queue
);
info_fn!(mem_info, mem_str, mem_val, clGetMemObjectInfo, cl_mem);
info_fn!(
    program_info,
    program_str,
    program_val,
    clGetProgramInfo,
    cl_program
);
info_fn!(
    kernel_info,
    kernel_str,
    kernel_val,
    clGetKernelInfo,
    cl_kernel
);
info_fn!(event_info, event_str, event_val, clGetEventInfo, cl_event);
info_fn!(build_info, build_str, build_val, clGetProgramBuildInfo, cl_program, d: cl_device_id);
info_fn!(wg_info, wg_str, wg_val, clGetKernelWorkGroupInfo, cl_kernel, d: cl_device_id);

// ---------------------------------------------------------------- context + queue fixture

/// A context on `device()` with one in-order queue; released on drop.
pub struct Env {
    pub ctx: cl_context,
    pub queue: cl_command_queue,
    pub dev: cl_device_id,
}

impl Env {
    pub fn new() -> Env {
        let dev = device();
        let mut err = 0;
        let ctx = unsafe { clCreateContext(null(), 1, &dev, None, null_mut(), &mut err) };
        assert_eq!(err, CL_SUCCESS, "clCreateContext: {}", err_name(err));
        let queue = unsafe { clCreateCommandQueueWithProperties(ctx, dev, null(), &mut err) };
        assert_eq!(
            err,
            CL_SUCCESS,
            "clCreateCommandQueueWithProperties: {}",
            err_name(err)
        );
        Env { ctx, queue, dev }
    }

    /// clCreateBuffer, asserting success.
    pub fn buffer(&self, flags: cl_bitfield, size: usize, host: *mut c_void) -> cl_mem {
        let mut err = 0;
        let m = unsafe { clCreateBuffer(self.ctx, flags, size, host, &mut err) };
        assert_eq!(
            err,
            CL_SUCCESS,
            "clCreateBuffer(flags={flags:#x}, size={size}): {}",
            err_name(err)
        );
        assert!(!m.is_null());
        m
    }

    /// A READ_WRITE buffer initialised with `data`.
    pub fn buffer_from<T: Copy>(&self, data: &[T]) -> cl_mem {
        self.buffer(
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            std::mem::size_of_val(data).max(1),
            data.as_ptr() as *mut c_void,
        )
    }

    /// Blocking read of `n` elements from offset 0.
    pub fn read<T: Copy + Default>(&self, m: cl_mem, n: usize) -> Vec<T> {
        let mut v = vec![T::default(); n];
        check!(clEnqueueReadBuffer(
            self.queue,
            m,
            CL_TRUE,
            0,
            n * std::mem::size_of::<T>(),
            v.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ));
        v
    }

    /// Blocking write of `data` at offset 0.
    pub fn write<T: Copy>(&self, m: cl_mem, data: &[T]) {
        check!(clEnqueueWriteBuffer(
            self.queue,
            m,
            CL_TRUE,
            0,
            std::mem::size_of_val(data),
            data.as_ptr().cast(),
            0,
            null(),
            null_mut()
        ));
    }

    /// Builds `src` with `opts`, panicking with the build log on failure.
    pub fn program(&self, src: &str, opts: &str) -> cl_program {
        build_program(self.ctx, self.dev, src, opts)
            .unwrap_or_else(|(c, log)| panic!("build failed: {}\n{log}", err_name(c)))
    }

    /// clCreateProgramWithSource + clCompileProgram of `src` with `opts`, panicking with the
    /// log on failure: an object for [`Env::linked`].
    pub fn compiled(&self, src: &str, opts: &std::ffi::CStr) -> cl_program {
        let mut err = 0;
        let (ptr, len) = (src.as_ptr() as *const c_char, src.len());
        let p = unsafe { clCreateProgramWithSource(self.ctx, 1, &ptr, &len, &mut err) };
        assert_eq!(err, CL_SUCCESS);
        let dev = self.dev;
        let code = unsafe {
            clCompileProgram(
                p,
                1,
                &dev,
                opts.as_ptr(),
                0,
                null(),
                null(),
                None,
                null_mut(),
            )
        };
        assert_eq!(
            code,
            CL_SUCCESS,
            "{}",
            build_str(p, dev, CL_PROGRAM_BUILD_LOG)
        );
        p
    }

    /// clLinkProgram of `objects` with `opts` (none: NULL) for the device: (program, error).
    pub fn linked(
        &self,
        opts: Option<&std::ffi::CStr>,
        objects: &[cl_program],
    ) -> (cl_program, cl_int) {
        let mut err = 0;
        let opts = opts.map_or(null(), |o| o.as_ptr());
        let n = objects.len() as cl_uint;
        let p = unsafe {
            clLinkProgram(
                self.ctx,
                1,
                &self.dev,
                opts,
                n,
                objects.as_ptr(),
                None,
                null_mut(),
                &mut err,
            )
        };
        (p, err)
    }

    /// Enqueues `k` over `gws` (with optional offset/local size) and waits.
    pub fn run(&self, k: cl_kernel, off: Option<&[usize]>, gws: &[usize], lws: Option<&[usize]>) {
        let opt = |o: Option<&[usize]>| o.map_or(null(), |s| s.as_ptr());
        check!(clEnqueueNDRangeKernel(
            self.queue,
            k,
            gws.len() as u32,
            opt(off),
            gws.as_ptr(),
            opt(lws),
            0,
            null(),
            null_mut()
        ));
        check!(clFinish(self.queue));
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        unsafe {
            clFinish(self.queue);
            clReleaseCommandQueue(self.queue);
            clReleaseContext(self.ctx);
        }
    }
}

/// clCreateProgramWithSource + clBuildProgram; Err((code, build log)) on failure.
pub fn build_program(
    ctx: cl_context,
    dev: cl_device_id,
    src: &str,
    opts: &str,
) -> Result<cl_program, (cl_int, String)> {
    let mut err = 0;
    let ptr = src.as_ptr() as *const c_char;
    let len = src.len();
    let p = unsafe { clCreateProgramWithSource(ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(
        err,
        CL_SUCCESS,
        "clCreateProgramWithSource: {}",
        err_name(err)
    );
    let copts = std::ffi::CString::new(opts).unwrap();
    let code = unsafe { clBuildProgram(p, 1, &dev, copts.as_ptr(), None, null_mut()) };
    if code == CL_SUCCESS {
        return Ok(p);
    }
    let log = build_str(p, dev, CL_PROGRAM_BUILD_LOG);
    unsafe { clReleaseProgram(p) };
    Err((code, log))
}

/// clCreateKernel, asserting success.
pub fn kernel(p: cl_program, name: &str) -> cl_kernel {
    let mut err = 0;
    let n = std::ffi::CString::new(name).unwrap();
    let k = unsafe { clCreateKernel(p, n.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "clCreateKernel({name}): {}", err_name(err));
    k
}

/// clGetKernelSubGroupInfo of a size_t value for a 1D local size, asserting success.
pub fn sub_group_info(k: cl_kernel, dev: cl_device_id, name: cl_uint, local: usize) -> usize {
    let mut v = 0usize;
    check!(clGetKernelSubGroupInfo(
        k,
        dev,
        name,
        8,
        (&local as *const usize).cast(),
        8,
        (&mut v as *mut usize).cast(),
        std::ptr::null_mut()
    ));
    v
}

/// clSetKernelArg with a value (POD or cl_mem), asserting success.
pub fn arg<T>(k: cl_kernel, i: u32, v: &T) {
    check!(clSetKernelArg(
        k,
        i,
        std::mem::size_of::<T>(),
        (v as *const T).cast()
    ));
}

/// Builds `src` with `opts`, runs kernel `name` over `gws` work-items with the buffers `bufs`
/// (arguments 0..) then the `scalars` (arguments after them), and returns every buffer's
/// contents afterwards.
#[allow(dead_code)]
pub fn run_with_buffers<T: Copy + Default, S>(
    src: &str,
    opts: &str,
    name: &str,
    bufs: &[Vec<T>],
    scalars: &[S],
    gws: usize,
) -> Vec<Vec<T>> {
    let e = Env::new();
    let p = e.program(src, opts);
    let k = kernel(p, name);
    let mems: Vec<cl_mem> = bufs.iter().map(|b| e.buffer_from(b)).collect();
    for (i, m) in mems.iter().enumerate() {
        arg(k, i as u32, m);
    }
    for (i, s) in scalars.iter().enumerate() {
        arg(k, (mems.len() + i) as u32, s);
    }
    e.run(k, None, &[gws], None);
    let out = mems
        .iter()
        .zip(bufs)
        .map(|(&m, b)| e.read::<T>(m, b.len()))
        .collect();
    for m in mems {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    out
}

/// [`run_with_buffers`] with every buffer in fine-grained SVM, given to the kernel with
/// clSetKernelArgSVMPointer: the launch runs the program's physical-addressing build. `None`
/// (and a note) where the device has no SVM.
#[allow(dead_code)]
pub fn run_with_svm<T: Copy + Default, S>(
    src: &str,
    opts: &str,
    name: &str,
    bufs: &[Vec<T>],
    scalars: &[S],
    gws: usize,
) -> Option<Vec<Vec<T>>> {
    run_with_svm_in_groups(src, opts, name, bufs, scalars, gws, None)
}

/// [`run_with_svm`] with work-groups of `lws` work-items (`None`: vkcl picks).
#[allow(dead_code)]
pub fn run_with_svm_in_groups<T: Copy + Default, S>(
    src: &str,
    opts: &str,
    name: &str,
    bufs: &[Vec<T>],
    scalars: &[S],
    gws: usize,
    lws: Option<usize>,
) -> Option<Vec<Vec<T>>> {
    extern "C" {
        fn clSVMAlloc(
            c: cl_context,
            flags: cl_bitfield,
            size: usize,
            align: cl_uint,
        ) -> *mut c_void;
        fn clSVMFree(c: cl_context, p: *mut c_void);
        fn clSetKernelArgSVMPointer(k: cl_kernel, i: cl_uint, p: *const c_void) -> cl_int;
    }
    const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
    const FINE_GRAIN: cl_bitfield = 1 << 10;
    let e = Env::new();
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
    if caps == 0 {
        eprintln!("no SVM on this device");
        return None;
    }
    let p = e.program(src, opts);
    let k = kernel(p, name);
    let ptrs: Vec<*mut T> = bufs
        .iter()
        .map(|b| {
            let bytes = std::mem::size_of_val(&b[..]).max(4);
            let p = unsafe { clSVMAlloc(e.ctx, FINE_GRAIN, bytes, 0) }.cast::<T>();
            assert!(!p.is_null(), "clSVMAlloc returned NULL");
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len()) };
            p
        })
        .collect();
    for (i, &m) in ptrs.iter().enumerate() {
        check!(clSetKernelArgSVMPointer(k, i as u32, m.cast()));
    }
    for (i, s) in scalars.iter().enumerate() {
        arg(k, (ptrs.len() + i) as u32, s);
    }
    let lws = lws.map(|l| [l]);
    e.run(k, None, &[gws], lws.as_ref().map(|l| &l[..]));
    let out = ptrs
        .iter()
        .zip(bufs)
        .map(|(&m, b)| unsafe { std::slice::from_raw_parts(m, b.len()) }.to_vec())
        .collect();
    for m in ptrs {
        unsafe { clSVMFree(e.ctx, m.cast()) };
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    Some(out)
}

/// clSetKernelArg for a `__local` argument of `bytes` bytes.
pub fn arg_local(k: cl_kernel, i: u32, bytes: usize) {
    check!(clSetKernelArg(k, i, bytes, null()));
}

/// Host memory aligned to 4096 bytes (for CL_MEM_USE_HOST_PTR).
pub struct Aligned {
    pub ptr: *mut u8,
    pub len: usize,
}
impl Aligned {
    pub fn new(len: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(len, 4096).unwrap();
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        Aligned { ptr, len }
    }
    pub fn bytes(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}
impl Drop for Aligned {
    fn drop(&mut self) {
        unsafe {
            std::alloc::dealloc(
                self.ptr,
                std::alloc::Layout::from_size_align(self.len, 4096).unwrap(),
            )
        }
    }
}

// ---------------------------------------------------------------- the rest of the OpenCL 3.0 API
// (added for tests/robustness.rs and tests/fuzz.rs: every core entry point, implemented or not)
pub type cl_sampler = *mut c_void;
pub type cl_mem_properties = u64;
pub type cl_sampler_properties = u64;
pub type cl_device_partition_property = isize;
pub type cl_pipe_properties = isize;
pub type MemNotify = Option<unsafe extern "C" fn(cl_mem, *mut c_void)>;
pub type ContextNotify = Option<unsafe extern "C" fn(cl_context, *mut c_void)>;
pub type ProgramNotify = Option<unsafe extern "C" fn(cl_program, *mut c_void)>;
pub type EventNotify = Option<unsafe extern "C" fn(cl_event, cl_int, *mut c_void)>;
pub type SvmFreeNotify =
    Option<unsafe extern "C" fn(cl_command_queue, cl_uint, *mut *mut c_void, *mut c_void)>;
pub type NativeFn = Option<unsafe extern "C" fn(*mut c_void)>;

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct cl_image_format {
    pub image_channel_order: cl_uint,
    pub image_channel_data_type: cl_uint,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cl_image_desc {
    pub image_type: cl_uint,
    pub image_width: usize,
    pub image_height: usize,
    pub image_depth: usize,
    pub image_array_size: usize,
    pub image_row_pitch: usize,
    pub image_slice_pitch: usize,
    pub num_mip_levels: cl_uint,
    pub num_samples: cl_uint,
    pub mem_object: cl_mem,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cl_buffer_region {
    pub origin: usize,
    pub size: usize,
}

#[rustfmt::skip]
#[link(name = "OpenCL")]
extern "C" {
    pub fn clCreateSubDevices(d: cl_device_id, props: *const cl_device_partition_property, n: cl_uint, out: *mut cl_device_id, num: *mut cl_uint) -> cl_int;
    pub fn clRetainDevice(d: cl_device_id) -> cl_int;
    pub fn clReleaseDevice(d: cl_device_id) -> cl_int;
    pub fn clSetDefaultDeviceCommandQueue(c: cl_context, d: cl_device_id, q: cl_command_queue) -> cl_int;
    pub fn clGetDeviceAndHostTimer(d: cl_device_id, dev_ts: *mut cl_ulong, host_ts: *mut cl_ulong) -> cl_int;
    pub fn clGetHostTimer(d: cl_device_id, host_ts: *mut cl_ulong) -> cl_int;
    pub fn clSetContextDestructorCallback(c: cl_context, f: ContextNotify, ud: *mut c_void) -> cl_int;
    pub fn clSetCommandQueueProperty(q: cl_command_queue, props: cl_bitfield, enable: cl_bool, old: *mut cl_bitfield) -> cl_int;
    pub fn clCreateBufferWithProperties(c: cl_context, props: *const cl_mem_properties, flags: cl_bitfield, size: usize, host: *mut c_void, err: *mut cl_int) -> cl_mem;
    pub fn clCreateSubBuffer(m: cl_mem, flags: cl_bitfield, ty: cl_uint, info: *const c_void, err: *mut cl_int) -> cl_mem;
    pub fn clCreateImage(c: cl_context, flags: cl_bitfield, fmt: *const cl_image_format, desc: *const cl_image_desc, host: *mut c_void, err: *mut cl_int) -> cl_mem;
    pub fn clCreateImageWithProperties(c: cl_context, props: *const cl_mem_properties, flags: cl_bitfield, fmt: *const cl_image_format, desc: *const cl_image_desc, host: *mut c_void, err: *mut cl_int) -> cl_mem;
    pub fn clCreateImage2D(c: cl_context, flags: cl_bitfield, fmt: *const cl_image_format, w: usize, h: usize, pitch: usize, host: *mut c_void, err: *mut cl_int) -> cl_mem;
    pub fn clCreateImage3D(c: cl_context, flags: cl_bitfield, fmt: *const cl_image_format, w: usize, h: usize, d: usize, rp: usize, sp: usize, host: *mut c_void, err: *mut cl_int) -> cl_mem;
    pub fn clCreatePipe(c: cl_context, flags: cl_bitfield, packet: cl_uint, max: cl_uint, props: *const cl_pipe_properties, err: *mut cl_int) -> cl_mem;
    pub fn clGetSupportedImageFormats(c: cl_context, flags: cl_bitfield, ty: cl_uint, n: cl_uint, fmts: *mut cl_image_format, num: *mut cl_uint) -> cl_int;
    pub fn clGetImageInfo(m: cl_mem, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clGetPipeInfo(m: cl_mem, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clSetMemObjectDestructorCallback(m: cl_mem, f: MemNotify, ud: *mut c_void) -> cl_int;
    pub fn clSVMAlloc(c: cl_context, flags: cl_bitfield, size: usize, align: cl_uint) -> *mut c_void;
    pub fn clSVMFree(c: cl_context, p: *mut c_void);
    pub fn clCreateSamplerWithProperties(c: cl_context, props: *const cl_sampler_properties, err: *mut cl_int) -> cl_sampler;
    pub fn clCreateSampler(c: cl_context, norm: cl_bool, addr: cl_uint, filter: cl_uint, err: *mut cl_int) -> cl_sampler;
    pub fn clRetainSampler(s: cl_sampler) -> cl_int;
    pub fn clReleaseSampler(s: cl_sampler) -> cl_int;
    pub fn clGetSamplerInfo(s: cl_sampler, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clCreateProgramWithBinary(c: cl_context, n: cl_uint, d: *const cl_device_id, lens: *const usize, bins: *const *const u8, status: *mut cl_int, err: *mut cl_int) -> cl_program;
    pub fn clCreateProgramWithBuiltInKernels(c: cl_context, n: cl_uint, d: *const cl_device_id, names: *const c_char, err: *mut cl_int) -> cl_program;
    pub fn clCreateProgramWithIL(c: cl_context, il: *const c_void, len: usize, err: *mut cl_int) -> cl_program;
    pub fn clSetProgramReleaseCallback(p: cl_program, f: ProgramNotify, ud: *mut c_void) -> cl_int;
    pub fn clSetProgramSpecializationConstant(p: cl_program, id: cl_uint, sz: usize, v: *const c_void) -> cl_int;
    pub fn clCompileProgram(p: cl_program, n: cl_uint, d: *const cl_device_id, opts: *const c_char, nh: cl_uint, headers: *const cl_program, names: *const *const c_char, f: BuildNotify, ud: *mut c_void) -> cl_int;
    pub fn clLinkProgram(c: cl_context, n: cl_uint, d: *const cl_device_id, opts: *const c_char, np: cl_uint, progs: *const cl_program, f: BuildNotify, ud: *mut c_void, err: *mut cl_int) -> cl_program;
    pub fn clUnloadPlatformCompiler(p: cl_platform_id) -> cl_int;
    pub fn clUnloadCompiler() -> cl_int;
    pub fn clCloneKernel(k: cl_kernel, err: *mut cl_int) -> cl_kernel;
    pub fn clSetKernelArgSVMPointer(k: cl_kernel, i: cl_uint, v: *const c_void) -> cl_int;
    pub fn clSetKernelExecInfo(k: cl_kernel, name: cl_uint, sz: usize, v: *const c_void) -> cl_int;
    pub fn clGetKernelArgInfo(k: cl_kernel, i: cl_uint, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clGetKernelSubGroupInfo(k: cl_kernel, d: cl_device_id, name: cl_uint, isz: usize, iv: *const c_void, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clCreateUserEvent(c: cl_context, err: *mut cl_int) -> cl_event;
    pub fn clSetUserEventStatus(e: cl_event, status: cl_int) -> cl_int;
    pub fn clSetEventCallback(e: cl_event, ty: cl_int, f: EventNotify, ud: *mut c_void) -> cl_int;
    pub fn clGetEventProfilingInfo(e: cl_event, name: cl_uint, sz: usize, v: *mut c_void, ret: *mut usize) -> cl_int;
    pub fn clEnqueueReadBufferRect(q: cl_command_queue, m: cl_mem, blocking: cl_bool, bo: *const usize, ho: *const usize, region: *const usize, brp: usize, bsp: usize, hrp: usize, hsp: usize, ptr: *mut c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueWriteBufferRect(q: cl_command_queue, m: cl_mem, blocking: cl_bool, bo: *const usize, ho: *const usize, region: *const usize, brp: usize, bsp: usize, hrp: usize, hsp: usize, ptr: *const c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueCopyBufferRect(q: cl_command_queue, src: cl_mem, dst: cl_mem, so: *const usize, dof: *const usize, region: *const usize, srp: usize, ssp: usize, drp: usize, dsp: usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueReadImage(q: cl_command_queue, m: cl_mem, blocking: cl_bool, origin: *const usize, region: *const usize, rp: usize, sp: usize, ptr: *mut c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueWriteImage(q: cl_command_queue, m: cl_mem, blocking: cl_bool, origin: *const usize, region: *const usize, rp: usize, sp: usize, ptr: *const c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueFillImage(q: cl_command_queue, m: cl_mem, color: *const c_void, origin: *const usize, region: *const usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueCopyImage(q: cl_command_queue, src: cl_mem, dst: cl_mem, so: *const usize, dof: *const usize, region: *const usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueCopyImageToBuffer(q: cl_command_queue, src: cl_mem, dst: cl_mem, so: *const usize, region: *const usize, dof: usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueCopyBufferToImage(q: cl_command_queue, src: cl_mem, dst: cl_mem, so: usize, dof: *const usize, region: *const usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueMapImage(q: cl_command_queue, m: cl_mem, blocking: cl_bool, flags: cl_bitfield, origin: *const usize, region: *const usize, rp: *mut usize, sp: *mut usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event, err: *mut cl_int) -> *mut c_void;
    pub fn clEnqueueMigrateMemObjects(q: cl_command_queue, n: cl_uint, mems: *const cl_mem, flags: cl_bitfield, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueTask(q: cl_command_queue, k: cl_kernel, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueNativeKernel(q: cl_command_queue, f: NativeFn, args: *mut c_void, cb: usize, nm: cl_uint, mems: *const cl_mem, locs: *const *const c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueMarkerWithWaitList(q: cl_command_queue, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueBarrierWithWaitList(q: cl_command_queue, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueSVMFree(q: cl_command_queue, n: cl_uint, ptrs: *mut *mut c_void, f: SvmFreeNotify, ud: *mut c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueSVMMemcpy(q: cl_command_queue, blocking: cl_bool, dst: *mut c_void, src: *const c_void, size: usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueSVMMemFill(q: cl_command_queue, p: *mut c_void, pat: *const c_void, psz: usize, size: usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueSVMMap(q: cl_command_queue, blocking: cl_bool, flags: cl_bitfield, p: *mut c_void, size: usize, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueSVMUnmap(q: cl_command_queue, p: *mut c_void, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueSVMMigrateMem(q: cl_command_queue, n: cl_uint, ptrs: *const *const c_void, sizes: *const usize, flags: cl_bitfield, nw: cl_uint, wl: *const cl_event, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueMarker(q: cl_command_queue, ev: *mut cl_event) -> cl_int;
    pub fn clEnqueueWaitForEvents(q: cl_command_queue, n: cl_uint, l: *const cl_event) -> cl_int;
    pub fn clEnqueueBarrier(q: cl_command_queue) -> cl_int;
    pub fn clGetExtensionFunctionAddressForPlatform(p: cl_platform_id, name: *const c_char) -> *mut c_void;
    pub fn clGetExtensionFunctionAddress(name: *const c_char) -> *mut c_void;
}

// image / sampler / pipe / SVM / misc constants
pub const CL_MEM_OBJECT_IMAGE2D: cl_uint = 0x10F1;
pub const CL_MEM_OBJECT_IMAGE3D: cl_uint = 0x10F2;
pub const CL_MEM_OBJECT_IMAGE1D: cl_uint = 0x10F4;
pub const CL_MEM_OBJECT_PIPE: cl_uint = 0x10F7;
pub const CL_RGBA: cl_uint = 0x10B5;
pub const CL_UNORM_INT8: cl_uint = 0x10D2;
pub const CL_FLOAT: cl_uint = 0x10DE;
pub const CL_IMAGE_FORMAT: cl_uint = 0x1110;
pub const CL_IMAGE_WIDTH: cl_uint = 0x1114;
pub const CL_PIPE_PACKET_SIZE: cl_uint = 0x1120;
pub const CL_MEM_HOST_WRITE_ONLY: cl_bitfield = 1 << 7;
pub const CL_MEM_HOST_READ_ONLY: cl_bitfield = 1 << 8;
pub const CL_MEM_HOST_NO_ACCESS: cl_bitfield = 1 << 9;
pub const CL_MEM_SVM_FINE_GRAIN_BUFFER: cl_bitfield = 1 << 10;
pub const CL_MEM_KERNEL_READ_AND_WRITE: cl_bitfield = 1 << 12;
pub const CL_MIGRATE_MEM_OBJECT_HOST: cl_bitfield = 1 << 0;
pub const CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED: cl_bitfield = 1 << 1;
pub const CL_BUFFER_CREATE_TYPE_REGION: cl_uint = 0x1220;
pub const CL_ADDRESS_NONE: cl_uint = 0x1130;
pub const CL_ADDRESS_CLAMP_TO_EDGE: cl_uint = 0x1131;
pub const CL_FILTER_NEAREST: cl_uint = 0x1140;
pub const CL_SAMPLER_REFERENCE_COUNT: cl_uint = 0x1150;
pub const CL_SAMPLER_NORMALIZED_COORDS: cl_uint = 0x1152;
pub const CL_SAMPLER_ADDRESSING_MODE: cl_uint = 0x1153;
pub const CL_SAMPLER_FILTER_MODE: cl_uint = 0x1154;
pub const CL_DEVICE_PARTITION_EQUALLY: isize = 0x1086;
pub const CL_DEVICE_PARTITION_BY_COUNTS: isize = 0x1087;
pub const CL_DEVICE_PARTITION_BY_COUNTS_LIST_END: isize = 0;
pub const CL_DEVICE_PARTITION_MAX_SUB_DEVICES: cl_uint = 0x1043;
pub const CL_DEVICE_PARTITION_PROPERTIES: cl_uint = 0x1044;
pub const CL_DEVICE_IMAGE_SUPPORT: cl_uint = 0x1016;
pub const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
pub const CL_DEVICE_MAX_NUM_SUB_GROUPS: cl_uint = 0x105C;
pub const CL_DEVICE_IL_VERSION: cl_uint = 0x105B;
pub const CL_DEVICE_PIPE_SUPPORT: cl_uint = 0x1071;
pub const CL_DEVICE_BUILT_IN_KERNELS: cl_uint = 0x103F;
pub const CL_DEVICE_REFERENCE_COUNT: cl_uint = 0x1047;
pub const CL_DEVICE_EXECUTION_CAPABILITIES: cl_uint = 0x1029;
pub const CL_EXEC_NATIVE_KERNEL: cl_bitfield = 1 << 1;
pub const CL_PROGRAM_BINARY_SIZES: cl_uint = 0x1165;
pub const CL_PROGRAM_BINARIES: cl_uint = 0x1166;
pub const CL_PROGRAM_IL: cl_uint = 0x1169;
pub const CL_KERNEL_ARG_ADDRESS_QUALIFIER: cl_uint = 0x1196;
pub const CL_KERNEL_ARG_NAME: cl_uint = 0x119A;
pub const CL_KERNEL_GLOBAL_WORK_SIZE: cl_uint = 0x11B5;
pub const CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE: cl_uint = 0x2033;
pub const CL_KERNEL_MAX_NUM_SUB_GROUPS: cl_uint = 0x11B9;
pub const CL_KERNEL_EXEC_INFO_SVM_PTRS: cl_uint = 0x11B6;
pub const CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM: cl_uint = 0x11B7;
pub const CL_PROFILING_COMMAND_QUEUED: cl_uint = 0x1280;
pub const CL_PROFILING_COMMAND_START: cl_uint = 0x1282;
pub const CL_PROFILING_COMMAND_END: cl_uint = 0x1283;
pub const CL_SUBMITTED: cl_int = 2;
pub const CL_RUNNING: cl_int = 1;
pub const CL_QUEUED: cl_int = 3;
pub const CL_COMMAND_USER: cl_uint = 0x1204;
pub const CL_QUEUE_SIZE: cl_uint = 0x1094;
pub const CL_QUEUE_PRIORITY_KHR: cl_uint = 0x1096;
pub const CL_CONTEXT_INTEROP_USER_SYNC: cl_context_properties = 0x1085;
pub const CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE: cl_uint = 0x1185;

// ---------------------------------------------------------------- program binaries

/// CL_PROGRAM_BINARIES through both calls: sizes, then the binaries into one buffer per
/// device (left empty where the size is 0).
pub fn binaries(p: cl_program) -> Vec<Vec<u8>> {
    let sizes: Vec<usize> = bytes_to_vec(&program_info(p, CL_PROGRAM_BINARY_SIZES));
    let mut bins: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0xAA; n]).collect();
    let mut ptrs: Vec<*mut u8> = bins
        .iter_mut()
        .map(|b| {
            if b.is_empty() {
                null_mut()
            } else {
                b.as_mut_ptr()
            }
        })
        .collect();
    let mut ret = 0;
    check!(clGetProgramInfo(
        p,
        CL_PROGRAM_BINARIES,
        ptrs.len() * 8,
        ptrs.as_mut_ptr().cast(),
        &mut ret
    ));
    assert_eq!(ret, ptrs.len() * std::mem::size_of::<*mut u8>());
    bins
}

/// clCreateProgramWithBinary: (program, per-device status, error).
pub fn from_binaries(
    ctx: cl_context,
    devs: &[cl_device_id],
    bins: &[&[u8]],
) -> (cl_program, Vec<cl_int>, cl_int) {
    let ptrs: Vec<*const u8> = bins.iter().map(|b| b.as_ptr()).collect();
    let lens: Vec<usize> = bins.iter().map(|b| b.len()).collect();
    let mut status = vec![1; bins.len()];
    let mut err = 1;
    let p = unsafe {
        clCreateProgramWithBinary(
            ctx,
            devs.len() as u32,
            devs.as_ptr(),
            lens.as_ptr(),
            ptrs.as_ptr(),
            status.as_mut_ptr(),
            &mut err,
        )
    };
    (p, status, err)
}

// ---------------------------------------------------------------- images and samplers
// (added for tests/images/: the remaining image types, channel orders and data types, image and
// sampler queries, image device limits and image command types)
pub const CL_MEM_OBJECT_IMAGE2D_ARRAY: cl_uint = 0x10F3;
pub const CL_MEM_OBJECT_IMAGE1D_ARRAY: cl_uint = 0x10F5;
pub const CL_MEM_OBJECT_IMAGE1D_BUFFER: cl_uint = 0x10F6;
pub const CL_R: cl_uint = 0x10B0;
pub const CL_A: cl_uint = 0x10B1;
pub const CL_RG: cl_uint = 0x10B2;
pub const CL_RA: cl_uint = 0x10B3;
pub const CL_RGB: cl_uint = 0x10B4;
pub const CL_BGRA: cl_uint = 0x10B6;
pub const CL_ARGB: cl_uint = 0x10B7;
pub const CL_INTENSITY: cl_uint = 0x10B8;
pub const CL_LUMINANCE: cl_uint = 0x10B9;
pub const CL_Rx: cl_uint = 0x10BA;
pub const CL_RGx: cl_uint = 0x10BB;
pub const CL_RGBx: cl_uint = 0x10BC;
pub const CL_DEPTH: cl_uint = 0x10BD;
pub const CL_sRGBA: cl_uint = 0x10C1;
pub const CL_sBGRA: cl_uint = 0x10C2;
pub const CL_ABGR: cl_uint = 0x10C3;
pub const CL_SNORM_INT8: cl_uint = 0x10D0;
pub const CL_SNORM_INT16: cl_uint = 0x10D1;
pub const CL_UNORM_INT16: cl_uint = 0x10D3;
pub const CL_UNORM_SHORT_565: cl_uint = 0x10D4;
pub const CL_UNORM_SHORT_555: cl_uint = 0x10D5;
pub const CL_UNORM_INT_101010: cl_uint = 0x10D6;
pub const CL_SIGNED_INT8: cl_uint = 0x10D7;
pub const CL_SIGNED_INT16: cl_uint = 0x10D8;
pub const CL_SIGNED_INT32: cl_uint = 0x10D9;
pub const CL_UNSIGNED_INT8: cl_uint = 0x10DA;
pub const CL_UNSIGNED_INT16: cl_uint = 0x10DB;
pub const CL_UNSIGNED_INT32: cl_uint = 0x10DC;
pub const CL_HALF_FLOAT: cl_uint = 0x10DD;
pub const CL_UNORM_INT24: cl_uint = 0x10DF;
pub const CL_UNORM_INT_101010_2: cl_uint = 0x10E0;
pub const CL_IMAGE_ELEMENT_SIZE: cl_uint = 0x1111;
pub const CL_IMAGE_ROW_PITCH: cl_uint = 0x1112;
pub const CL_IMAGE_SLICE_PITCH: cl_uint = 0x1113;
pub const CL_IMAGE_HEIGHT: cl_uint = 0x1115;
pub const CL_IMAGE_DEPTH: cl_uint = 0x1116;
pub const CL_IMAGE_ARRAY_SIZE: cl_uint = 0x1117;
pub const CL_IMAGE_BUFFER: cl_uint = 0x1118;
pub const CL_IMAGE_NUM_MIP_LEVELS: cl_uint = 0x1119;
pub const CL_IMAGE_NUM_SAMPLES: cl_uint = 0x111A;
pub const CL_ADDRESS_CLAMP: cl_uint = 0x1132;
pub const CL_ADDRESS_REPEAT: cl_uint = 0x1133;
pub const CL_ADDRESS_MIRRORED_REPEAT: cl_uint = 0x1134;
pub const CL_FILTER_LINEAR: cl_uint = 0x1141;
pub const CL_SAMPLER_CONTEXT: cl_uint = 0x1151;
pub const CL_SAMPLER_PROPERTIES: cl_uint = 0x1158;
pub const CL_DEVICE_MAX_READ_IMAGE_ARGS: cl_uint = 0x100E;
pub const CL_DEVICE_MAX_WRITE_IMAGE_ARGS: cl_uint = 0x100F;
pub const CL_DEVICE_IMAGE2D_MAX_WIDTH: cl_uint = 0x1011;
pub const CL_DEVICE_IMAGE2D_MAX_HEIGHT: cl_uint = 0x1012;
pub const CL_DEVICE_IMAGE3D_MAX_WIDTH: cl_uint = 0x1013;
pub const CL_DEVICE_IMAGE3D_MAX_HEIGHT: cl_uint = 0x1014;
pub const CL_DEVICE_IMAGE3D_MAX_DEPTH: cl_uint = 0x1015;
pub const CL_DEVICE_MAX_SAMPLERS: cl_uint = 0x1018;
pub const CL_DEVICE_IMAGE_MAX_BUFFER_SIZE: cl_uint = 0x1040;
pub const CL_DEVICE_IMAGE_MAX_ARRAY_SIZE: cl_uint = 0x1041;
pub const CL_DEVICE_IMAGE_PITCH_ALIGNMENT: cl_uint = 0x104A;
pub const CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT: cl_uint = 0x104B;
pub const CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS: cl_uint = 0x104C;
pub const CL_DEVICE_OPENCL_C_FEATURES: cl_uint = 0x106F;
pub const CL_COMMAND_READ_IMAGE: cl_uint = 0x11F6;
pub const CL_COMMAND_WRITE_IMAGE: cl_uint = 0x11F7;
pub const CL_COMMAND_COPY_IMAGE: cl_uint = 0x11F8;
pub const CL_COMMAND_COPY_IMAGE_TO_BUFFER: cl_uint = 0x11F9;
pub const CL_COMMAND_COPY_BUFFER_TO_IMAGE: cl_uint = 0x11FA;
pub const CL_COMMAND_MAP_IMAGE: cl_uint = 0x11FC;
pub const CL_COMMAND_FILL_IMAGE: cl_uint = 0x1208;

/// The stdout of this test executable run again for test `name` alone, with environment
/// variable `var` set (the test runs its kernels when it sees it): for output a kernel prints.
/// Asserts that the run succeeded.
pub fn stdout_of_test_run(name: &str, var: &str) -> String {
    stdout_of_test_run_with(name, &[(var, "1")])
}

/// `stdout_of_test_run` with the environment variables `vars` set.
pub fn stdout_of_test_run_with(name: &str, vars: &[(&str, &str)]) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

// ---------------------------------------------------------------- long vectors

/// Every integer and floating-point component type, at widths 8 and 16 (double where the
/// device has cl_khr_fp64).
pub fn long_vector_types(fp64: bool) -> Vec<(&'static str, usize)> {
    let mut types = vec![];
    for ty in [
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double",
    ] {
        if ty == "double" && !fp64 {
            continue;
        }
        types.push((ty, 8));
        types.push((ty, 16));
    }
    types
}

/// The bytes of component value `x` as an OpenCL `ty`.
pub fn component(ty: &str, x: i64) -> Vec<u8> {
    match ty {
        "char" | "uchar" => vec![x as u8],
        "short" | "ushort" => (x as i16).to_le_bytes().to_vec(),
        "int" | "uint" => (x as i32).to_le_bytes().to_vec(),
        "long" | "ulong" => x.to_le_bytes().to_vec(),
        "float" => (x as f32).to_le_bytes().to_vec(),
        "double" => (x as f64).to_le_bytes().to_vec(),
        _ => panic!("{ty}"),
    }
}

/// The bytes of a `ty`-vector whose component c is `f(c)`.
pub fn vector(ty: &str, w: usize, f: impl Fn(i64) -> i64) -> Vec<u8> {
    (0..w as i64).flat_map(|c| component(ty, f(c))).collect()
}

/// `(tyW)(f(0), f(1), ...)` in OpenCL C.
pub fn literal(ty: &str, w: usize, f: impl Fn(i64) -> i64) -> String {
    let parts: Vec<String> = (0..w as i64).map(|c| f(c).to_string()).collect();
    format!("(({ty}{w})({}))", parts.join(", "))
}
