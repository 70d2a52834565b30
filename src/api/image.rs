//! Images: not supported yet (CL_DEVICE_IMAGE_SUPPORT is false); the queries still answer.

use super::util::obj;
use crate::cl::*;
use crate::core::check;
use crate::core::context::Context;
use std::sync::Arc;

const IMAGE_TYPES: [cl_mem_object_type; 6] = [
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
];

entry! {
    fn clGetSupportedImageFormats(
        context: cl_context,
        flags: cl_mem_flags,
        image_type: cl_mem_object_type,
        num_entries: cl_uint,
        image_formats: *mut cl_image_format,
        num_image_formats: *mut cl_uint,
    ) {
        let _ctx: Arc<Context> = obj(context)?;
        let known = CL_MEM_READ_WRITE
            | CL_MEM_READ_ONLY
            | CL_MEM_WRITE_ONLY
            | CL_MEM_USE_HOST_PTR
            | CL_MEM_ALLOC_HOST_PTR
            | CL_MEM_COPY_HOST_PTR
            | CL_MEM_HOST_WRITE_ONLY
            | CL_MEM_HOST_READ_ONLY
            | CL_MEM_HOST_NO_ACCESS
            | CL_MEM_KERNEL_READ_AND_WRITE;
        check(flags & !known == 0, CL_INVALID_VALUE)?;
        check(IMAGE_TYPES.contains(&image_type), CL_INVALID_VALUE)?;
        check(num_entries > 0 || image_formats.is_null(), CL_INVALID_VALUE)?;
        // No device of vkcl supports images yet: the list is empty.
        if !num_image_formats.is_null() {
            // SAFETY: NULL or a cl_uint.
            unsafe { *num_image_formats = 0 };
        }
        Ok(())
    }
}
