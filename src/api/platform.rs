//! clGetPlatformIDs, clGetPlatformInfo and the host timer.

use super::info::{array, name_versions, string, v, write};
use crate::cl::*;
use crate::core::object::handle;
use crate::core::platform::{self, Platform};
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::{Arc, Once};
use vkcl_macros::entry;

/// Sets the dispatch table, then creates the platform (once; with `VKCL_LOG=info`, logging
/// what `vkcl-info` prints).
pub fn ensure_init() -> &'static Arc<Platform> {
    static INIT: Once = Once::new();
    static REPORTED: Once = Once::new();
    INIT.call_once(|| {
        crate::core::object::set_dispatch_table(
            &super::dispatch::DISPATCH as *const _ as *const c_void,
        )
    });
    let p = platform::get();
    REPORTED.call_once(|| {
        if log::log_enabled!(target: "api", log::Level::Info) {
            for line in crate::diagnostics::report(p) {
                log::info!(target: "api", "{line}");
            }
        }
    });
    p
}

/// The platform handle, checked: NULL means "the" platform where the spec allows it.
pub fn platform_arg(p: cl_platform_id, null_ok: bool) -> CLResult<&'static Arc<Platform>> {
    let plat = ensure_init();
    if p.is_null() && null_ok || p == handle(plat) as cl_platform_id {
        Ok(plat)
    } else {
        Err(ClError(CL_INVALID_PLATFORM))
    }
}

#[entry(clGetPlatformIDs)]
pub(super) unsafe fn get_platform_ids(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> CLResult<()> {
    // "CL_INVALID_VALUE if num_entries is equal to zero and platforms is not NULL or if both
    // num_platforms and platforms are NULL."
    check(num_entries != 0 || platforms.is_null(), CL_INVALID_VALUE)?;
    check(
        !(platforms.is_null() && num_platforms.is_null()),
        CL_INVALID_VALUE,
    )?;
    let plat = ensure_init();
    if !platforms.is_null() {
        // SAFETY: the application gives room for num_entries (≥ 1) handles.
        unsafe { *platforms = handle(plat) as cl_platform_id };
    }
    if !num_platforms.is_null() {
        // SAFETY: num_platforms is NULL or points to a cl_uint.
        unsafe { *num_platforms = 1 };
    }
    Ok(())
}

#[entry(clGetPlatformInfo)]
unsafe fn get_platform_info(
    p: cl_platform_id,
    param_name: cl_platform_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    platform_arg(p, true)?;
    let value = match param_name {
        CL_PLATFORM_PROFILE => string("FULL_PROFILE"),
        CL_PLATFORM_VERSION => string(platform::VERSION),
        CL_PLATFORM_NUMERIC_VERSION => v::<cl_version>(cl_make_version(3, 0, 0)),
        CL_PLATFORM_NAME => string(platform::NAME),
        CL_PLATFORM_VENDOR => string(platform::VENDOR),
        CL_PLATFORM_EXTENSIONS => string(
            &platform_extensions()
                .iter()
                .map(|e| e.0)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        CL_PLATFORM_EXTENSIONS_WITH_VERSION => {
            array::<cl_name_version>(&name_versions(&platform_extensions()))
        }
        CL_PLATFORM_HOST_TIMER_RESOLUTION => v::<cl_ulong>(1u64),
        CL_PLATFORM_ICD_SUFFIX_KHR => string(platform::ICD_SUFFIX),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}

#[entry(clUnloadCompiler)]
fn unload_compiler() -> CLResult<()> {
    Ok(())
}

#[entry(clUnloadPlatformCompiler)]
fn unload_platform_compiler(p: cl_platform_id) -> CLResult<()> {
    platform_arg(p, false)?;
    Ok(())
}

fn platform_extensions() -> Vec<(&'static str, cl_version)> {
    vec![
        ("cl_khr_icd", cl_make_version(1, 0, 0)),
        ("cl_khr_extended_versioning", cl_make_version(1, 0, 0)),
    ]
}
