//! The one writer behind every clGet*Info: the size/value protocol of the spec.

use crate::cl::*;
use crate::core::{CLResult, ClError};
use std::ffi::c_void;

/// Writes `value` as the spec's info queries require: its size to `size_ret` (if not NULL);
/// the bytes to `out` (if not NULL), which must have room for them (CL_INVALID_VALUE
/// otherwise).
///
/// # Safety
/// `out` is NULL or points to `out_size` writable bytes; `size_ret` is NULL or points to a
/// writable `size_t`.
pub(crate) unsafe fn write(
    value: &[u8],
    out_size: usize,
    out: *mut c_void,
    size_ret: *mut usize,
) -> CLResult<()> {
    if !out.is_null() {
        if out_size < value.len() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: the application gives `out_size` writable bytes at `out`.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), out as *mut u8, value.len()) };
    }
    if !size_ret.is_null() {
        // SAFETY: size_ret is NULL or points to a size_t.
        unsafe { *size_ret = value.len() };
    }
    Ok(())
}

/// Values an info query returns, as their C bytes.
pub(crate) trait InfoValue {
    fn info_bytes(&self) -> Vec<u8>;
}

macro_rules! pod_info {
    ($($t:ty),*) => {$(
        impl InfoValue for $t {
            fn info_bytes(&self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
        }
    )*};
}
pod_info!(u8, u32, i32, u64, usize, isize);

impl InfoValue for cl_image_format {
    fn info_bytes(&self) -> Vec<u8> {
        [self.image_channel_order, self.image_channel_data_type].info_bytes()
    }
}

impl<T> InfoValue for *mut T {
    fn info_bytes(&self) -> Vec<u8> {
        (*self as usize).info_bytes()
    }
}

impl<T: InfoValue> InfoValue for [T] {
    fn info_bytes(&self) -> Vec<u8> {
        self.iter().flat_map(|v| v.info_bytes()).collect()
    }
}

impl<T: InfoValue, const N: usize> InfoValue for [T; N] {
    fn info_bytes(&self) -> Vec<u8> {
        self.as_slice().info_bytes()
    }
}

impl InfoValue for cl_name_version {
    fn info_bytes(&self) -> Vec<u8> {
        let mut v = self.version.info_bytes();
        v.extend_from_slice(&self.name);
        v
    }
}

/// `cl_name_version` entries for a list of (name, version).
pub(crate) fn name_versions(list: &[(&str, cl_version)]) -> Vec<cl_name_version> {
    list.iter()
        .map(|&(name, version)| {
            let mut nv = cl_name_version {
                version,
                name: [0; CL_NAME_VERSION_MAX_NAME_SIZE],
            };
            let n = name.len().min(CL_NAME_VERSION_MAX_NAME_SIZE - 1);
            nv.name[..n].copy_from_slice(&name.as_bytes()[..n]);
            nv
        })
        .collect()
}

// A query's value is built by one of the three functions below, each naming the C type the
// spec gives the parameter: `v::<cl_uint>(x)`, `array::<size_t>(&sizes)`, `string(name)`. The
// type of `v` and `array` cannot be inferred from the argument (anything that converts into
// it losslessly is accepted), so a Rust field's type never silently becomes the ABI.

/// One value of the C type `T`.
pub(crate) fn v<T: InfoValue>(x: impl Into<T>) -> CLResult<Vec<u8>> {
    Ok(x.into().info_bytes())
}

/// An array of the C type `T`.
pub(crate) fn array<T: InfoValue>(x: &[impl Copy + Into<T>]) -> CLResult<Vec<u8>> {
    Ok(x.iter().flat_map(|&e| e.into().info_bytes()).collect())
}

/// A `char[]`: the string and its terminating NUL.
pub(crate) fn string(x: &str) -> CLResult<Vec<u8>> {
    let mut v = Vec::with_capacity(x.len() + 1);
    v.extend_from_slice(x.as_bytes());
    v.push(0);
    Ok(v)
}
