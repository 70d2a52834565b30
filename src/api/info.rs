//! The one writer behind every clGet*Info: the size/value protocol of the spec.

use crate::cl::*;
use crate::core::{CLResult, ClError};
use std::ffi::c_void;

/// Writes `value` as the spec's info queries require: its size to `size_ret` (if not NULL);
/// the bytes to `out` (if not NULL), which must have room for them (CL_INVALID_VALUE
/// otherwise).
pub fn write(
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
pub trait InfoValue {
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

impl InfoValue for str {
    fn info_bytes(&self) -> Vec<u8> {
        let mut v = self.as_bytes().to_vec();
        v.push(0);
        v
    }
}

impl InfoValue for String {
    fn info_bytes(&self) -> Vec<u8> {
        self.as_str().info_bytes()
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

impl<T: InfoValue> InfoValue for Vec<T> {
    fn info_bytes(&self) -> Vec<u8> {
        self.as_slice().info_bytes()
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
pub fn name_versions(list: &[(&str, cl_version)]) -> Vec<cl_name_version> {
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

/// Shorthand for a query's value.
pub fn v<T: InfoValue + ?Sized>(x: &T) -> CLResult<Vec<u8>> {
    Ok(x.info_bytes())
}
