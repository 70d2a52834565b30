//! Contexts.

use super::info::{array, v, write};
use super::util::{obj, property_list, slice};
use crate::cl::*;
use crate::core::context::{Context, ErrorCallback};
use crate::core::device::Device;
use crate::core::object::{handle, register, release, retain};
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

pub type ContextCallback = unsafe extern "C" fn(cl_context, *mut c_void);

/// Validates a context property list: only CL_CONTEXT_PLATFORM (our platform) and
/// CL_CONTEXT_INTEROP_USER_SYNC (CL_TRUE or CL_FALSE), each at most once.
fn check_properties(props: &[cl_context_properties]) -> CLResult<()> {
    let mut seen = vec![];
    for pair in props.chunks(2).filter(|c| c.len() == 2) {
        let (name, value) = (pair[0], pair[1]);
        check(!seen.contains(&name), CL_INVALID_PROPERTY)?;
        seen.push(name);
        match name as cl_uint {
            CL_CONTEXT_PLATFORM => {
                super::platform::platform_arg(value as cl_platform_id, false)
                    .map_err(|_| ClError(CL_INVALID_PLATFORM))?;
            }
            // "CL_INVALID_PROPERTY if ... the value specified for a supported property name
            // is not valid": this one is a cl_bool.
            CL_CONTEXT_INTEROP_USER_SYNC => check(
                value == CL_TRUE as cl_context_properties
                    || value == CL_FALSE as cl_context_properties,
                CL_INVALID_PROPERTY,
            )?,
            _ => return Err(ClError(CL_INVALID_PROPERTY)),
        }
    }
    check(props.last().is_none_or(|&l| l == 0), CL_INVALID_PROPERTY)
}

fn create(
    properties: *const cl_context_properties,
    devices: Vec<Arc<Device>>,
    pfn_notify: Option<ErrorCallback>,
    user_data: *mut c_void,
) -> CLResult<cl_context> {
    // SAFETY: properties is NULL or a 0-terminated list.
    let props = unsafe { property_list(properties) };
    check_properties(&props)?;
    check(
        pfn_notify.is_some() || user_data.is_null(),
        CL_INVALID_VALUE,
    )?;
    let ctx = Context::new(devices, props, pfn_notify.map(|f| (f, user_data)))?;
    Ok(register(ctx) as cl_context)
}

#[entry(clCreateContext)]
unsafe fn create_context(
    properties: *const cl_context_properties,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    pfn_notify: Option<ErrorCallback>,
    user_data: *mut c_void,
) -> CLResult<cl_context> {
    check(!devices.is_null() && num_devices > 0, CL_INVALID_VALUE)?;
    // SAFETY: the application passes num_devices handles.
    let handles = unsafe { slice(devices, num_devices as usize) };
    let mut list: Vec<Arc<Device>> = vec![];
    for &h in handles {
        let d = obj::<Device, _>(h)?;
        // A device listed twice is the same device (the spec leaves it open); keep one.
        if !list.iter().any(|x| Arc::ptr_eq(x, &d)) {
            list.push(d);
        }
    }
    create(properties, list, pfn_notify, user_data)
}

#[entry(clCreateContextFromType)]
unsafe fn create_context_from_type(
    properties: *const cl_context_properties,
    device_type: cl_device_type,
    pfn_notify: Option<ErrorCallback>,
    user_data: *mut c_void,
) -> CLResult<cl_context> {
    // Properties first: a bad platform is CL_INVALID_PLATFORM before any device lookup.
    // SAFETY: properties is NULL or a 0-terminated list.
    check_properties(&unsafe { property_list(properties) })?;
    let devices = super::device::devices_of_type(device_type)?;
    create(properties, devices, pfn_notify, user_data)
}

#[entry(clRetainContext, at_exit)]
fn retain_context(context: cl_context) -> CLResult<()> {
    super::platform::ensure_init();
    retain::<Context>(context as *const c_void)
}

#[entry(clReleaseContext, at_exit)]
fn release_context(context: cl_context) -> CLResult<()> {
    super::platform::ensure_init();
    release::<Context>(context as *const c_void).map(|_| ())
}

#[entry(clSetContextDestructorCallback)]
unsafe fn set_context_destructor_callback(
    context: cl_context,
    pfn_notify: Option<ContextCallback>,
    user_data: *mut c_void,
) -> CLResult<()> {
    let ctx: Arc<Context> = obj(context)?;
    let f = pfn_notify.ok_or(ClError(CL_INVALID_VALUE))?;
    let user = user_data as usize;
    // SAFETY: the application's callback with its user data, called once.
    ctx.on_destroy(Box::new(move |h| unsafe {
        f(h as cl_context, user as *mut c_void)
    }));
    Ok(())
}

#[entry(clGetContextInfo, at_exit)]
unsafe fn get_context_info(
    context: cl_context,
    param_name: cl_context_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let ctx: Arc<Context> = obj(context)?;
    let value = match param_name {
        CL_CONTEXT_REFERENCE_COUNT => v::<cl_uint>(ctx.base.api_refs()),
        CL_CONTEXT_NUM_DEVICES => v::<cl_uint>(ctx.devices.len() as cl_uint),
        CL_CONTEXT_DEVICES => array::<cl_device_id>(
            &ctx.devices
                .iter()
                .map(|d| handle(d) as cl_device_id)
                .collect::<Vec<_>>(),
        ),
        CL_CONTEXT_PROPERTIES => array::<cl_context_properties>(&ctx.properties),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}
