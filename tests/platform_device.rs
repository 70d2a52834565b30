//! Loader plumbing, clGetPlatformIDs/Info, clGetDeviceIDs/Info.
#[macro_use]
mod common;
use common::*;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::{null, null_mut};

/// Shape of an info value, used to check the returned size.
#[derive(Clone, Copy, Debug, PartialEq)]
enum K {
    Uint,
    Ulong,
    Size,
    Bool,
    Bits,
    Ptr,
    Str,
    SizeArr,
    PropArr,
    /// array of cl_name_version; may legally be empty (size 0)
    NvArr,
    /// array that may legally be empty (CL_DEVICE_PARTITION_TYPE of a root device)
    PropArrOrEmpty,
}

const PLATFORM_PARAMS: &[(&str, u32, K)] = &[
    ("CL_PLATFORM_PROFILE", 0x0900, K::Str),
    ("CL_PLATFORM_VERSION", 0x0901, K::Str),
    ("CL_PLATFORM_NAME", 0x0902, K::Str),
    ("CL_PLATFORM_VENDOR", 0x0903, K::Str),
    ("CL_PLATFORM_EXTENSIONS", 0x0904, K::Str),
    ("CL_PLATFORM_HOST_TIMER_RESOLUTION", 0x0905, K::Ulong),
    ("CL_PLATFORM_NUMERIC_VERSION", 0x0906, K::Uint),
    ("CL_PLATFORM_EXTENSIONS_WITH_VERSION", 0x0907, K::NvArr),
    ("CL_PLATFORM_ICD_SUFFIX_KHR", 0x0920, K::Str),
];

/// Every core OpenCL 3.0 clGetDeviceInfo query (cl.h, CL_VERSION_3_0).
const DEVICE_PARAMS: &[(&str, u32, K)] = &[
    ("CL_DEVICE_TYPE", 0x1000, K::Bits),
    ("CL_DEVICE_VENDOR_ID", 0x1001, K::Uint),
    ("CL_DEVICE_MAX_COMPUTE_UNITS", 0x1002, K::Uint),
    ("CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS", 0x1003, K::Uint),
    ("CL_DEVICE_MAX_WORK_GROUP_SIZE", 0x1004, K::Size),
    ("CL_DEVICE_MAX_WORK_ITEM_SIZES", 0x1005, K::SizeArr),
    ("CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR", 0x1006, K::Uint),
    ("CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT", 0x1007, K::Uint),
    ("CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT", 0x1008, K::Uint),
    ("CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG", 0x1009, K::Uint),
    ("CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT", 0x100A, K::Uint),
    ("CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE", 0x100B, K::Uint),
    ("CL_DEVICE_MAX_CLOCK_FREQUENCY", 0x100C, K::Uint),
    ("CL_DEVICE_ADDRESS_BITS", 0x100D, K::Uint),
    ("CL_DEVICE_MAX_READ_IMAGE_ARGS", 0x100E, K::Uint),
    ("CL_DEVICE_MAX_WRITE_IMAGE_ARGS", 0x100F, K::Uint),
    ("CL_DEVICE_MAX_MEM_ALLOC_SIZE", 0x1010, K::Ulong),
    ("CL_DEVICE_IMAGE2D_MAX_WIDTH", 0x1011, K::Size),
    ("CL_DEVICE_IMAGE2D_MAX_HEIGHT", 0x1012, K::Size),
    ("CL_DEVICE_IMAGE3D_MAX_WIDTH", 0x1013, K::Size),
    ("CL_DEVICE_IMAGE3D_MAX_HEIGHT", 0x1014, K::Size),
    ("CL_DEVICE_IMAGE3D_MAX_DEPTH", 0x1015, K::Size),
    ("CL_DEVICE_IMAGE_SUPPORT", 0x1016, K::Bool),
    ("CL_DEVICE_MAX_PARAMETER_SIZE", 0x1017, K::Size),
    ("CL_DEVICE_MAX_SAMPLERS", 0x1018, K::Uint),
    ("CL_DEVICE_MEM_BASE_ADDR_ALIGN", 0x1019, K::Uint),
    ("CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE", 0x101A, K::Uint),
    ("CL_DEVICE_SINGLE_FP_CONFIG", 0x101B, K::Bits),
    ("CL_DEVICE_GLOBAL_MEM_CACHE_TYPE", 0x101C, K::Uint),
    ("CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE", 0x101D, K::Uint),
    ("CL_DEVICE_GLOBAL_MEM_CACHE_SIZE", 0x101E, K::Ulong),
    ("CL_DEVICE_GLOBAL_MEM_SIZE", 0x101F, K::Ulong),
    ("CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE", 0x1020, K::Ulong),
    ("CL_DEVICE_MAX_CONSTANT_ARGS", 0x1021, K::Uint),
    ("CL_DEVICE_LOCAL_MEM_TYPE", 0x1022, K::Uint),
    ("CL_DEVICE_LOCAL_MEM_SIZE", 0x1023, K::Ulong),
    ("CL_DEVICE_ERROR_CORRECTION_SUPPORT", 0x1024, K::Bool),
    ("CL_DEVICE_PROFILING_TIMER_RESOLUTION", 0x1025, K::Size),
    ("CL_DEVICE_ENDIAN_LITTLE", 0x1026, K::Bool),
    ("CL_DEVICE_AVAILABLE", 0x1027, K::Bool),
    ("CL_DEVICE_COMPILER_AVAILABLE", 0x1028, K::Bool),
    ("CL_DEVICE_EXECUTION_CAPABILITIES", 0x1029, K::Bits),
    ("CL_DEVICE_QUEUE_ON_HOST_PROPERTIES", 0x102A, K::Bits),
    ("CL_DEVICE_NAME", 0x102B, K::Str),
    ("CL_DEVICE_VENDOR", 0x102C, K::Str),
    ("CL_DRIVER_VERSION", 0x102D, K::Str),
    ("CL_DEVICE_PROFILE", 0x102E, K::Str),
    ("CL_DEVICE_VERSION", 0x102F, K::Str),
    ("CL_DEVICE_EXTENSIONS", 0x1030, K::Str),
    ("CL_DEVICE_PLATFORM", 0x1031, K::Ptr),
    ("CL_DEVICE_DOUBLE_FP_CONFIG", 0x1032, K::Bits),
    ("CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF", 0x1034, K::Uint),
    ("CL_DEVICE_HOST_UNIFIED_MEMORY", 0x1035, K::Bool),
    ("CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR", 0x1036, K::Uint),
    ("CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT", 0x1037, K::Uint),
    ("CL_DEVICE_NATIVE_VECTOR_WIDTH_INT", 0x1038, K::Uint),
    ("CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG", 0x1039, K::Uint),
    ("CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT", 0x103A, K::Uint),
    ("CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE", 0x103B, K::Uint),
    ("CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF", 0x103C, K::Uint),
    ("CL_DEVICE_OPENCL_C_VERSION", 0x103D, K::Str),
    ("CL_DEVICE_LINKER_AVAILABLE", 0x103E, K::Bool),
    ("CL_DEVICE_BUILT_IN_KERNELS", 0x103F, K::Str),
    ("CL_DEVICE_IMAGE_MAX_BUFFER_SIZE", 0x1040, K::Size),
    ("CL_DEVICE_IMAGE_MAX_ARRAY_SIZE", 0x1041, K::Size),
    ("CL_DEVICE_PARENT_DEVICE", 0x1042, K::Ptr),
    ("CL_DEVICE_PARTITION_MAX_SUB_DEVICES", 0x1043, K::Uint),
    ("CL_DEVICE_PARTITION_PROPERTIES", 0x1044, K::PropArr),
    ("CL_DEVICE_PARTITION_AFFINITY_DOMAIN", 0x1045, K::Bits),
    ("CL_DEVICE_PARTITION_TYPE", 0x1046, K::PropArrOrEmpty),
    ("CL_DEVICE_REFERENCE_COUNT", 0x1047, K::Uint),
    ("CL_DEVICE_PREFERRED_INTEROP_USER_SYNC", 0x1048, K::Bool),
    ("CL_DEVICE_PRINTF_BUFFER_SIZE", 0x1049, K::Size),
    ("CL_DEVICE_IMAGE_PITCH_ALIGNMENT", 0x104A, K::Uint),
    ("CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT", 0x104B, K::Uint),
    ("CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS", 0x104C, K::Uint),
    ("CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE", 0x104D, K::Size),
    ("CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES", 0x104E, K::Bits),
    ("CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE", 0x104F, K::Uint),
    ("CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE", 0x1050, K::Uint),
    ("CL_DEVICE_MAX_ON_DEVICE_QUEUES", 0x1051, K::Uint),
    ("CL_DEVICE_MAX_ON_DEVICE_EVENTS", 0x1052, K::Uint),
    ("CL_DEVICE_SVM_CAPABILITIES", 0x1053, K::Bits),
    (
        "CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE",
        0x1054,
        K::Size,
    ),
    ("CL_DEVICE_MAX_PIPE_ARGS", 0x1055, K::Uint),
    ("CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS", 0x1056, K::Uint),
    ("CL_DEVICE_PIPE_MAX_PACKET_SIZE", 0x1057, K::Uint),
    (
        "CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT",
        0x1058,
        K::Uint,
    ),
    (
        "CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT",
        0x1059,
        K::Uint,
    ),
    (
        "CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT",
        0x105A,
        K::Uint,
    ),
    ("CL_DEVICE_IL_VERSION", 0x105B, K::Str),
    ("CL_DEVICE_MAX_NUM_SUB_GROUPS", 0x105C, K::Uint),
    (
        "CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS",
        0x105D,
        K::Bool,
    ),
    ("CL_DEVICE_NUMERIC_VERSION", 0x105E, K::Uint),
    ("CL_DEVICE_EXTENSIONS_WITH_VERSION", 0x1060, K::NvArr),
    ("CL_DEVICE_ILS_WITH_VERSION", 0x1061, K::NvArr),
    ("CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION", 0x1062, K::NvArr),
    ("CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES", 0x1063, K::Bits),
    ("CL_DEVICE_ATOMIC_FENCE_CAPABILITIES", 0x1064, K::Bits),
    ("CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT", 0x1065, K::Bool),
    ("CL_DEVICE_OPENCL_C_ALL_VERSIONS", 0x1066, K::NvArr),
    (
        "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE",
        0x1067,
        K::Size,
    ),
    (
        "CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT",
        0x1068,
        K::Bool,
    ),
    ("CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT", 0x1069, K::Bool),
    ("CL_DEVICE_OPENCL_C_FEATURES", 0x106F, K::NvArr),
    ("CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES", 0x1070, K::Bits),
    ("CL_DEVICE_PIPE_SUPPORT", 0x1071, K::Bool),
    (
        "CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED",
        0x1072,
        K::Str,
    ),
];

/// Runs the size/value protocol on one query and checks the size against its shape.
fn check_protocol(what: &str, kind: K, f: &dyn Fn(usize, *mut c_void, *mut usize) -> cl_int) {
    let mut size = usize::MAX;
    let code = f(0, null_mut(), &mut size);
    assert_eq!(
        code,
        CL_SUCCESS,
        "{what}: size query returned {}",
        err_name(code)
    );
    let elem = match kind {
        K::Uint | K::Bool => 4,
        K::Ulong | K::Bits | K::Size | K::Ptr | K::SizeArr | K::PropArr | K::PropArrOrEmpty => 8,
        K::Str => 1,
        K::NvArr => std::mem::size_of::<cl_name_version>(),
    };
    match kind {
        // pocl 3.1 bug: returns CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES (a cl_bitfield) as 4 bytes.
        K::Bits if size == 4 && what == "CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES" && is_pocl() => {}
        K::Uint | K::Bool | K::Ulong | K::Bits | K::Size | K::Ptr => {
            assert_eq!(size, elem, "{what}: size")
        }
        K::NvArr | K::PropArrOrEmpty => assert_eq!(size % elem, 0, "{what}: size {size}"),
        _ => assert!(size > 0 && size % elem == 0, "{what}: size {size}"),
    }
    let mut buf = vec![0u8; size + 16];
    let mut ret = 0usize;
    let code = f(size, buf.as_mut_ptr().cast(), &mut ret);
    assert_eq!(
        code,
        CL_SUCCESS,
        "{what}: value query with exact size returned {}",
        err_name(code)
    );
    assert_eq!(ret, size, "{what}: value query size_ret");
    // the value query with NULL size_ret must work too
    let code = f(size, buf.as_mut_ptr().cast(), null_mut());
    assert_eq!(
        code,
        CL_SUCCESS,
        "{what}: value query without size_ret returned {}",
        err_name(code)
    );
    if kind == K::Str {
        assert_eq!(buf[size - 1], 0, "{what}: not NUL-terminated");
        assert!(!buf[..size - 1].contains(&0), "{what}: embedded NUL");
    }
    if size > 0 {
        let code = f(size - 1, buf.as_mut_ptr().cast(), null_mut());
        assert_eq!(
            code,
            CL_INVALID_VALUE,
            "{what}: too-small param_value_size returned {}",
            err_name(code)
        );
    }
}

#[test]
fn loader_is_ocl_icd_libopencl() {
    setup();
    #[repr(C)]
    struct DlInfo {
        fname: *const c_char,
        fbase: *mut c_void,
        sname: *const c_char,
        saddr: *mut c_void,
    }
    extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    }
    let mut info = DlInfo {
        fname: null(),
        fbase: null_mut(),
        sname: null(),
        saddr: null_mut(),
    };
    let addr = clGetPlatformIDs as *const c_void;
    assert_ne!(unsafe { dladdr(addr, &mut info) }, 0, "dladdr failed");
    let fname = unsafe { CStr::from_ptr(info.fname) }
        .to_string_lossy()
        .into_owned();
    assert!(
        fname.contains("libOpenCL.so"),
        "clGetPlatformIDs resolves into {fname}, not the ICD loader"
    );
    // and the loader really finds a platform
    assert!(!platform().is_null());
}

#[test]
fn exactly_one_platform_with_a_device() {
    setup();
    let mut n = 0;
    check!(clGetPlatformIDs(0, null_mut(), &mut n));
    assert_eq!(n, 1, "expected exactly one platform");
    let mut p = null_mut();
    check!(clGetPlatformIDs(1, &mut p, null_mut()));
    assert_eq!(p, platform());
    let mut nd = 0;
    check!(clGetDeviceIDs(
        p,
        CL_DEVICE_TYPE_ALL,
        0,
        null_mut(),
        &mut nd
    ));
    assert!(nd >= 1);
}

#[test]
fn get_platform_ids_errors() {
    setup();
    check_err!(
        clGetPlatformIDs(0, null_mut(), null_mut()),
        CL_INVALID_VALUE
    );
    let mut p = null_mut();
    check_err!(clGetPlatformIDs(0, &mut p, null_mut()), CL_INVALID_VALUE);
}

#[test]
fn platform_info_every_param() {
    let p = platform();
    for &(name, param, kind) in PLATFORM_PARAMS {
        check_protocol(name, kind, &|s, v, r| unsafe {
            clGetPlatformInfo(p, param, s, v, r)
        });
    }
    check_err!(
        clGetPlatformInfo(p, 0xDEAD, 0, null_mut(), &mut 0),
        CL_INVALID_VALUE
    );
}

#[test]
fn platform_info_values() {
    let p = platform();
    assert_eq!(platform_str(p, CL_PLATFORM_PROFILE), "FULL_PROFILE");
    let ver = platform_str(p, CL_PLATFORM_VERSION);
    assert!(ver.starts_with("OpenCL 3.0 "), "platform version {ver:?}");
    assert_eq!(
        platform_val::<u32>(p, CL_PLATFORM_NUMERIC_VERSION),
        3 << 22,
        "CL_MAKE_VERSION(3,0,0)"
    );
    assert!(!platform_str(p, CL_PLATFORM_NAME).is_empty());
    assert!(!platform_str(p, CL_PLATFORM_VENDOR).is_empty());
    assert!(!platform_str(p, CL_PLATFORM_ICD_SUFFIX_KHR).is_empty());
    let ext = platform_str(p, CL_PLATFORM_EXTENSIONS);
    assert!(
        ext.split_whitespace().any(|e| e == "cl_khr_icd"),
        "platform extensions {ext:?}"
    );
    let nv: Vec<cl_name_version> =
        bytes_to_vec(&platform_info(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION));
    let mut a: Vec<String> = nv.iter().map(|n| n.name()).collect();
    let mut b: Vec<String> = ext.split_whitespace().map(String::from).collect();
    a.sort();
    b.sort();
    assert_eq!(
        a, b,
        "CL_PLATFORM_EXTENSIONS vs CL_PLATFORM_EXTENSIONS_WITH_VERSION"
    );
}

#[test]
fn device_info_every_param() {
    let d = device();
    for &(name, param, kind) in DEVICE_PARAMS {
        check_protocol(name, kind, &|s, v, r| unsafe {
            clGetDeviceInfo(d, param, s, v, r)
        });
    }
}

#[test]
fn device_info_errors() {
    let d = device();
    let mut sz = 0;
    check_err!(
        clGetDeviceInfo(d, 0xDEAD, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    check_err!(
        clGetDeviceInfo(d, 0x1000 - 1, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    check_err!(
        clGetDeviceInfo(null_mut(), CL_DEVICE_NAME, 0, null_mut(), &mut sz),
        CL_INVALID_DEVICE
    );
    let mut v = 0u64;
    check_err!(
        clGetDeviceInfo(
            d,
            CL_DEVICE_TYPE,
            4,
            (&mut v as *mut u64).cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
}

#[test]
fn device_info_consistency() {
    let d = device();
    let ver = device_str(d, CL_DEVICE_VERSION);
    assert!(ver.starts_with("OpenCL 3.0 "), "CL_DEVICE_VERSION {ver:?}");
    assert_eq!(
        device_val::<u32>(d, 0x105E),
        3 << 22,
        "CL_DEVICE_NUMERIC_VERSION"
    );
    let cver = device_str(d, 0x103D);
    assert!(
        cver.starts_with("OpenCL C "),
        "CL_DEVICE_OPENCL_C_VERSION {cver:?}"
    );
    assert_eq!(device_str(d, CL_DEVICE_PROFILE), "FULL_PROFILE");
    assert!(!device_str(d, CL_DEVICE_NAME).is_empty());
    assert!(!device_str(d, 0x102C).is_empty(), "CL_DEVICE_VENDOR");
    assert!(!device_str(d, 0x102D).is_empty(), "CL_DRIVER_VERSION");
    assert_eq!(
        device_val::<usize>(d, CL_DEVICE_PLATFORM),
        platform() as usize
    );
    assert_eq!(
        device_val::<usize>(d, 0x1042),
        0,
        "root device has no parent"
    );
    assert_eq!(
        device_val::<u32>(d, 0x1047),
        1,
        "root device reference count"
    );

    let dims = device_val::<u32>(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    assert!(
        dims >= 3,
        "full profile requires >= 3 dimensions, got {dims}"
    );
    let sizes: Vec<usize> = bytes_to_vec(&device_info(d, CL_DEVICE_MAX_WORK_ITEM_SIZES));
    assert_eq!(sizes.len(), dims as usize);
    assert!(sizes.iter().all(|&s| s >= 1), "{sizes:?}");
    let wg = device_val::<usize>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    assert!(wg >= 1);
    assert!(sizes[0] <= wg || sizes[0] >= 1);

    let global = device_val::<u64>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    let alloc = device_val::<u64>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    assert!(
        alloc >= 1 && global >= alloc,
        "global {global} alloc {alloc}"
    );
    // full profile minimums
    assert!(
        alloc >= (global / 4).min(128 << 20),
        "max alloc {alloc} below full-profile minimum"
    );
    assert!(device_val::<u64>(d, CL_DEVICE_LOCAL_MEM_SIZE) >= 32 * 1024);
    assert!(
        device_val::<u64>(d, 0x1020) >= 64 * 1024,
        "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE"
    );
    assert!(
        device_val::<usize>(d, 0x1017) >= 1024,
        "CL_DEVICE_MAX_PARAMETER_SIZE"
    );
    assert!(
        device_val::<u32>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN) >= 8 * 16,
        "MEM_BASE_ADDR_ALIGN (bits)"
    );
    assert!(
        matches!(device_val::<u32>(d, 0x100D), 32 | 64),
        "ADDRESS_BITS"
    );
    assert_eq!(device_val::<u32>(d, 0x1027), CL_TRUE, "AVAILABLE");
    assert_eq!(device_val::<u32>(d, 0x1028), CL_TRUE, "COMPILER_AVAILABLE");
    assert_eq!(device_val::<u32>(d, 0x1026), CL_TRUE, "ENDIAN_LITTLE");
    assert_ne!(
        device_val::<u64>(d, 0x1029) & 1,
        0,
        "EXECUTION_CAPABILITIES has CL_EXEC_KERNEL"
    );
    assert_ne!(
        device_val::<u64>(d, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES) & CL_QUEUE_PROFILING_ENABLE,
        0
    );
    let fp = device_val::<u64>(d, 0x101B);
    assert_eq!(
        fp & 0b110,
        0b110,
        "SINGLE_FP_CONFIG must have INF_NAN | ROUND_TO_NEAREST: {fp:#x}"
    );
    let ty = device_val::<u64>(d, CL_DEVICE_TYPE);
    assert!(ty != 0 && ty & !0x1F == 0, "device type {ty:#x}");

    // extensions string and CL_DEVICE_EXTENSIONS_WITH_VERSION agree
    let ext = device_str(d, CL_DEVICE_EXTENSIONS);
    let nv: Vec<cl_name_version> = bytes_to_vec(&device_info(d, CL_DEVICE_EXTENSIONS_WITH_VERSION));
    let mut a: Vec<String> = nv.iter().map(|n| n.name()).collect();
    let mut b: Vec<String> = ext.split_whitespace().map(String::from).collect();
    a.sort();
    b.sort();
    assert_eq!(
        a, b,
        "CL_DEVICE_EXTENSIONS vs CL_DEVICE_EXTENSIONS_WITH_VERSION"
    );

    let cv: Vec<cl_name_version> = bytes_to_vec(&device_info(d, CL_DEVICE_OPENCL_C_ALL_VERSIONS));
    assert!(!cv.is_empty(), "CL_DEVICE_OPENCL_C_ALL_VERSIONS is empty");
    assert!(
        cv.iter().all(|v| v.name() == "OpenCL C"),
        "names: {:?}",
        cv.iter().map(|v| v.name()).collect::<Vec<_>>()
    );
    assert!(
        cv.iter().any(|v| v.version == (1 << 22 | 2 << 12)),
        "OpenCL C 1.2 must be listed"
    );

    let conf = device_str(d, 0x1072);
    assert!(
        !conf.is_empty(),
        "CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED"
    );
}

#[test]
fn get_device_ids_counts_and_types() {
    let p = platform();
    let mut n = 0;
    check!(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, null_mut(), &mut n));
    let mut all = vec![null_mut(); n as usize];
    check!(clGetDeviceIDs(
        p,
        CL_DEVICE_TYPE_ALL,
        n,
        all.as_mut_ptr(),
        null_mut()
    ));
    assert_eq!(all[0], device());
    // asking for the device's own type finds it
    let ty = device_val::<u64>(device(), CL_DEVICE_TYPE) & !CL_DEVICE_TYPE_DEFAULT;
    let mut d = null_mut();
    check!(clGetDeviceIDs(p, ty, 1, &mut d, null_mut()));
    // exactly one device is CL_DEVICE_TYPE_DEFAULT
    let mut nd = 0;
    check!(clGetDeviceIDs(
        p,
        CL_DEVICE_TYPE_DEFAULT,
        0,
        null_mut(),
        &mut nd
    ));
    assert_eq!(nd, 1);
    // ACCELERATOR: CL_DEVICE_NOT_FOUND unless some device is an accelerator
    let any_acc = all
        .iter()
        .any(|&d| device_val::<u64>(d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_ACCELERATOR != 0);
    let code = unsafe { clGetDeviceIDs(p, CL_DEVICE_TYPE_ACCELERATOR, 0, null_mut(), &mut nd) };
    if any_acc {
        assert_eq!(code, CL_SUCCESS);
    } else {
        assert_eq!(code, CL_DEVICE_NOT_FOUND, "{}", err_name(code));
    }
}

#[test]
fn get_device_ids_errors() {
    let p = platform();
    let mut d = null_mut();
    check_err!(
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, &mut d, null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, null_mut(), null_mut()),
        CL_INVALID_VALUE
    );
    // pocl 3.1 bug: answers CL_DEVICE_NOT_FOUND for an invalid device_type.
    let expected = if is_pocl() {
        CL_DEVICE_NOT_FOUND
    } else {
        CL_INVALID_DEVICE_TYPE
    };
    check_err!(clGetDeviceIDs(p, 1 << 20, 1, &mut d, null_mut()), expected);
}

/// CL_DEVICE_MAX_CLOCK_FREQUENCY is real where the device's clock can be known (issue 21): the
/// host's CPU frequency for a CPU device (lavapipe), NVML's maximum SM clock on NVIDIA; clpeak
/// and applications that size work by it read 0 otherwise.
#[test]
fn max_clock_frequency_is_known_on_cpu_devices_and_nvidia() {
    let d = device();
    let mhz: u32 = device_val(d, 0x100C);
    let ty: cl_bitfield = device_val(d, CL_DEVICE_TYPE);
    let vendor: u32 = device_val(d, 0x1001); // CL_DEVICE_VENDOR_ID
    if ty & CL_DEVICE_TYPE_CPU != 0 || vendor == 0x10de {
        // A CPU device, or NVIDIA: between 100 MHz and 10 GHz.
        assert!(
            (100..10_000).contains(&mhz),
            "CL_DEVICE_MAX_CLOCK_FREQUENCY = {mhz}"
        );
    }
}

/// CL_DEVICE_PREFERRED_VECTOR_WIDTH_* and NATIVE_VECTOR_WIDTH_* (char, short, int, long, float,
/// double, half) follow the device: on llvmpipe, whose name gives its SIMD width (LLVM's
/// vectors of N bits, one work-item per 32-bit lane), the native widths are the register's
/// (capped at 16, the widest OpenCL vector) and the preferred ones the lane count, which
/// measured best on it (docs/BENCHMARKS.md, vector widths); GPUs (NVIDIA: one
/// work-item per lane, scalar registers) report 1. Double and half are 0 without cl_khr_fp64
/// and cl_khr_fp16.
#[test]
fn vector_widths_follow_the_device() {
    let d = device();
    let name = device_str(d, CL_DEVICE_NAME);
    let extensions = device_str(d, 0x1030); // CL_DEVICE_EXTENSIONS
    let fp64 = extensions.split(' ').any(|e| e == "cl_khr_fp64");
    let fp16 = extensions.split(' ').any(|e| e == "cl_khr_fp16");
    let preferred: Vec<u32> = (0x1006..=0x100B)
        .chain([0x1034])
        .map(|p| device_val(d, p))
        .collect();
    let native: Vec<u32> = (0x1036..=0x103C).map(|p| device_val(d, p)).collect();
    let (mut want_preferred, mut want_native) = if name.starts_with("llvmpipe") {
        let bits: u32 = name
            .split(", ")
            .nth(1)
            .and_then(|s| s.strip_suffix(" bits)"))
            .and_then(|s| s.parse().ok())
            .expect("llvmpipe's name gives its SIMD width");
        let lanes = bits / 32;
        let native = [8, 16, 32, 64, 32, 64, 16].map(|t| (bits / t).min(16));
        (vec![lanes; 7], native.to_vec())
    } else if name.contains("NVIDIA") {
        (vec![1; 7], vec![1; 7])
    } else {
        println!("{name}: no reference widths; only the zeros are checked");
        (preferred.clone(), native.clone())
    };
    for w in [&mut want_preferred, &mut want_native] {
        if !fp64 {
            w[5] = 0;
        }
        if !fp16 {
            w[6] = 0;
        }
    }
    assert_eq!(preferred, want_preferred, "{name}: preferred widths");
    assert_eq!(native, want_native, "{name}: native widths");
    assert!(preferred[..5].iter().chain(&native[..5]).all(|&w| w >= 1));
}
