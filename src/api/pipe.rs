//! Pipes: creation and queries. The kernel side is lowered by `compiler::pipes`.

use super::info::{array, v, write};
use super::util::{obj, property_list};
use crate::cl::*;
use crate::compiler::pipes;
use crate::core::context::Context;
use crate::core::memory::{Mem, PipeShape};
use crate::core::object::register;
use crate::core::{check, CLResult, ClError};
use std::ffi::c_void;
use std::sync::Arc;
use vkcl_macros::entry;

fn new_pipe(
    context: cl_context,
    flags: cl_mem_flags,
    packet_size: cl_uint,
    max_packets: cl_uint,
    properties: *const cl_pipe_properties,
) -> CLResult<cl_mem> {
    let ctx: Arc<Context> = obj(context)?;
    // "Only CL_MEM_READ_WRITE and CL_MEM_HOST_NO_ACCESS can be specified when creating a pipe
    // object. If the value specified for flags is 0, the default is used which is
    // CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS."
    check(
        flags & !(CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS) == 0,
        CL_INVALID_VALUE,
    )?;
    let flags = if flags == 0 {
        CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS
    } else {
        flags
    };
    // "properties must be NULL": an empty list (only the terminator) is taken as NULL.
    // SAFETY: properties is NULL or a 0-terminated list.
    let props = unsafe { property_list(properties) };
    check(props.len() <= 1, CL_INVALID_VALUE)?;
    check(
        packet_size > 0 && packet_size <= pipes::MAX_PACKET_SIZE && max_packets > 0,
        CL_INVALID_PIPE_SIZE,
    )?;
    // The spec names no size error for pipes: one that no device can allocate fails as an
    // allocation would.
    let size = pipes::buffer_size(packet_size, max_packets);
    let max = ctx
        .devices
        .iter()
        .map(|d| d.max_mem_alloc_size())
        .min()
        .unwrap_or(0);
    check(
        size <= max && max_packets <= pipes::MAX_CAPACITY,
        CL_MEM_OBJECT_ALLOCATION_FAILURE,
    )?;
    let shape = PipeShape {
        packet_size,
        max_packets,
    };
    // A pipe's properties are intptr_t, a memory object's cl_properties (both only the
    // terminator here).
    let props = props.iter().map(|&p| p as cl_mem_properties).collect();
    let mem = Mem::new_pipe(&ctx, flags, shape, props)?;
    Ok(register(mem) as cl_mem)
}

#[entry(clCreatePipe)]
unsafe fn create_pipe(
    context: cl_context,
    flags: cl_mem_flags,
    pipe_packet_size: cl_uint,
    pipe_max_packets: cl_uint,
    properties: *const cl_pipe_properties,
) -> CLResult<cl_mem> {
    new_pipe(
        context,
        flags,
        pipe_packet_size,
        pipe_max_packets,
        properties,
    )
}

#[entry(clGetPipeInfo, at_exit)]
unsafe fn get_pipe_info(
    pipe: cl_mem,
    param_name: cl_pipe_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let m: Arc<Mem> = obj(pipe)?;
    let shape = m.pipe().ok_or(ClError(CL_INVALID_MEM_OBJECT))?;
    let value = match param_name {
        CL_PIPE_PACKET_SIZE => v::<cl_uint>(shape.packet_size),
        CL_PIPE_MAX_PACKETS => v::<cl_uint>(shape.max_packets),
        CL_PIPE_PROPERTIES => array::<cl_pipe_properties>(
            &m.properties
                .iter()
                .map(|&p| p as cl_pipe_properties)
                .collect::<Vec<_>>(),
        ),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }?;
    // SAFETY: param_value and param_value_size_ret as the application passed them.
    unsafe { write(&value, param_value_size, param_value, param_value_size_ret) }
}
