//! cl_khr_icd: how the ICD loader finds the platform, and extension function lookup.

use super::platform::platform_arg;
use crate::cl::*;
use crate::core::CLResult;
use std::ffi::{c_char, c_void, CStr};
use vkcl_macros::entry;

/// Functions clGetExtensionFunctionAddress* returns: the ICD and extension entry points.
fn extension_function(name: &str) -> *mut c_void {
    match name {
        "clIcdGetPlatformIDsKHR" => clIcdGetPlatformIDsKHR as *mut c_void,
        // cl_khr_il_program's entry point is the core one.
        "clCreateProgramWithILKHR" => super::program::clCreateProgramWithIL as *mut c_void,
        "clSetKernelArgDevicePointerEXT" => {
            super::svm::clSetKernelArgDevicePointerEXT as *mut c_void
        }
        _ => super::command_buffer::entry_point(name),
    }
}

fn lookup(name: *const c_char) -> *mut c_void {
    if name.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the application passes a NUL-terminated function name.
    let Ok(name) = unsafe { CStr::from_ptr(name) }.to_str() else {
        return std::ptr::null_mut();
    };
    let f = extension_function(name);
    if !f.is_null() {
        return f;
    }
    std::ptr::null_mut()
}

/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddress(name: *const c_char) -> *mut c_void {
    std::panic::catch_unwind(|| lookup(name)).unwrap_or_else(|_| {
        super::util::panicked("clGetExtensionFunctionAddress");
        std::ptr::null_mut()
    })
}

/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddressForPlatform(
    platform: cl_platform_id,
    name: *const c_char,
) -> *mut c_void {
    std::panic::catch_unwind(|| match platform_arg(platform, false) {
        Ok(_) => lookup(name),
        Err(_) => std::ptr::null_mut(),
    })
    .unwrap_or_else(|_| {
        super::util::panicked("clGetExtensionFunctionAddressForPlatform");
        std::ptr::null_mut()
    })
}

#[entry(clIcdGetPlatformIDsKHR)]
unsafe fn icd_get_platform_ids_khr(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> CLResult<()> {
    // SAFETY: the same arguments, under the same contract.
    unsafe { super::platform::get_platform_ids(num_entries, platforms, num_platforms) }
}
