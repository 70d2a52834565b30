//! API robustness: Buffers, sub-buffers, memory-object queries, images, samplers, pipes and SVM.
//! The rules the expectations follow are in tests/robust/mod.rs.
#![allow(unused_imports, unused_macros)]
#[macro_use]
mod common;
#[macro_use]
mod robust;
use common::*;
use robust::*;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

#[test]
fn buffer_creation() {
    let f = Fix::new();
    let mut c = Check::default();
    let ctx = f.ctx();
    let mut host = [0u8; 64];
    let hp: *mut c_void = host.as_mut_ptr().cast();
    let mk = |flags: u64, size: usize, h: *mut c_void| {
        create(|e| unsafe { clCreateBuffer(ctx, flags, size, h, e) })
    };
    let rw = CL_MEM_READ_WRITE;
    c.eq(
        "buffer: unknown flag bit",
        mk(1 << 30, 64, null_mut()),
        CL_INVALID_VALUE,
    );
    c.eq(
        "buffer: READ_WRITE|READ_ONLY",
        mk(rw | CL_MEM_READ_ONLY, 64, null_mut()),
        CL_INVALID_VALUE,
    );
    c.eq(
        "buffer: WRITE_ONLY|READ_ONLY",
        mk(CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY, 64, null_mut()),
        CL_INVALID_VALUE,
    );
    c.eq(
        "buffer: HOST_READ_ONLY|HOST_WRITE_ONLY",
        mk(
            CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY,
            64,
            null_mut(),
        ),
        CL_INVALID_VALUE,
    );
    c.eq(
        "buffer: HOST_NO_ACCESS|HOST_READ_ONLY",
        mk(
            CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY,
            64,
            null_mut(),
        ),
        CL_INVALID_VALUE,
    );
    c.eq(
        "buffer: USE|ALLOC_HOST_PTR",
        mk(CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, 64, hp),
        CL_INVALID_VALUE,
    );
    c.eq(
        "buffer: USE|COPY_HOST_PTR",
        mk(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, 64, hp),
        CL_INVALID_VALUE,
    );
    c.eq(
        "buffer: size 0",
        mk(rw, 0, null_mut()),
        CL_INVALID_BUFFER_SIZE,
    );
    let max: u64 = device_val(f.dev(), CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    c.eq(
        "buffer: size > MAX_MEM_ALLOC_SIZE",
        mk(rw, max as usize + 1, null_mut()),
        CL_INVALID_BUFFER_SIZE,
    );
    c.eq(
        "buffer: size usize::MAX",
        mk(rw, usize::MAX, null_mut()),
        CL_INVALID_BUFFER_SIZE,
    );
    c.eq(
        "buffer: COPY_HOST_PTR with NULL",
        mk(rw | CL_MEM_COPY_HOST_PTR, 64, null_mut()),
        CL_INVALID_HOST_PTR,
    );
    c.eq(
        "buffer: USE_HOST_PTR with NULL",
        mk(rw | CL_MEM_USE_HOST_PTR, 64, null_mut()),
        CL_INVALID_HOST_PTR,
    );
    c.eq(
        "buffer: host_ptr without COPY/USE",
        mk(rw, 64, hp),
        CL_INVALID_HOST_PTR,
    );
    expect!(
        c,
        create(|e| clCreateBuffer(null_mut(), rw, 64, null_mut(), e)),
        CL_INVALID_CONTEXT
    );
    let h = unsafe { clCreateBuffer(ctx, rw, 0, null_mut(), null_mut()) };
    c.truth(
        "clCreateBuffer(errcode_ret NULL) returns NULL on error",
        h.is_null(),
    );

    // clCreateBufferWithProperties: CL_INVALID_PROPERTY for unknown names and duplicates
    let mkp = |props: &[u64]| {
        create(|e| unsafe {
            clCreateBufferWithProperties(ctx, props.as_ptr(), rw, 64, null_mut(), e)
        })
    };
    c.eq(
        "buffer props: unknown name",
        mkp(&[0x7777, 1, 0]),
        CL_INVALID_PROPERTY,
    );
    c.eq("buffer props: empty list", mkp(&[0]), CL_SUCCESS);
    expect!(
        c,
        create(|e| clCreateBufferWithProperties(ctx, null(), 1 << 30, 64, null_mut(), e)),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateBufferWithProperties(ctx, null(), rw, 0, null_mut(), e)),
        CL_INVALID_BUFFER_SIZE
    );
    expect!(
        c,
        create(|e| clCreateBufferWithProperties(null_mut(), null(), rw, 64, null_mut(), e)),
        CL_INVALID_CONTEXT
    );
    if wrong_types() {
        expect!(
            c,
            create(|e| clCreateBuffer(f.not_ctx(), rw, 64, null_mut(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateBufferWithProperties(f.not_ctx(), null(), rw, 64, null_mut(), e)),
            CL_INVALID_CONTEXT
        );
    }
    c.done();
}

#[test]
fn sub_buffers() {
    let f = Fix::new();
    let mut c = Check::default();
    let align_bits: u32 = device_val(f.dev(), CL_DEVICE_MEM_BASE_ADDR_ALIGN);
    let align = (align_bits / 8) as usize;
    let big = f.e.buffer(CL_MEM_READ_WRITE, 4 * align, null_mut());
    let ty = CL_BUFFER_CREATE_TYPE_REGION;
    let sub = |m: cl_mem, flags: u64, r: cl_buffer_region| {
        create(|e| unsafe {
            clCreateSubBuffer(m, flags, ty, (&r as *const cl_buffer_region).cast(), e)
        })
    };
    let reg = |origin, size| cl_buffer_region { origin, size };
    c.eq(
        "sub-buffer: region past the end",
        sub(big, 0, reg(0, 4 * align + 1)),
        CL_INVALID_VALUE,
    );
    // pocl 3.1 bug: origin + size wraps around.
    if !is_pocl() {
        c.eq(
            "sub-buffer: origin+size overflows",
            sub(big, 0, reg(align, usize::MAX)),
            CL_INVALID_VALUE,
        );
    }
    c.eq(
        "sub-buffer: size 0",
        sub(big, 0, reg(0, 0)),
        CL_INVALID_BUFFER_SIZE,
    );
    if align > 1 {
        c.eq(
            "sub-buffer: misaligned origin",
            sub(big, 0, reg(1, 4)),
            CL_MISALIGNED_SUB_BUFFER_OFFSET,
        );
    }
    // pocl 3.1 bug: does not validate sub-buffer flags.
    if !is_pocl() {
        c.eq(
            "sub-buffer: unknown flag bit",
            sub(big, 1 << 30, reg(0, 16)),
            CL_INVALID_VALUE,
        );
    }
    expect!(
        c,
        create(|e| clCreateSubBuffer(
            big,
            0,
            0x7777,
            (&reg(0, 16) as *const cl_buffer_region).cast(),
            e
        )),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        create(|e| clCreateSubBuffer(big, 0, ty, null(), e)),
        CL_INVALID_VALUE
    );
    // sub-buffer flags must not contradict the parent's
    let wo = f.e.buffer(CL_MEM_WRITE_ONLY, 4 * align, null_mut());
    c.eq(
        "sub-buffer: READ_ONLY of a WRITE_ONLY parent",
        sub(wo, CL_MEM_READ_ONLY, reg(0, 16)),
        CL_INVALID_VALUE,
    );
    c.eq(
        "sub-buffer: USE_HOST_PTR flag",
        sub(big, CL_MEM_USE_HOST_PTR, reg(0, 16)),
        CL_INVALID_VALUE,
    );
    let hna = f.e.buffer(
        CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS,
        4 * align,
        null_mut(),
    );
    c.eq(
        "sub-buffer: HOST_READ_ONLY of a HOST_NO_ACCESS parent",
        sub(hna, CL_MEM_HOST_READ_ONLY, reg(0, 16)),
        CL_INVALID_VALUE,
    );
    // a sub-buffer cannot be the parent of another one
    let mut e = 0;
    let s = unsafe {
        clCreateSubBuffer(
            big,
            0,
            ty,
            (&reg(0, 16) as *const cl_buffer_region).cast(),
            &mut e,
        )
    };
    c.eq("sub-buffer: valid region", e, CL_SUCCESS);
    if e == CL_SUCCESS {
        c.eq(
            "sub-buffer of a sub-buffer",
            sub(s, 0, reg(0, 4)),
            CL_INVALID_MEM_OBJECT,
        );
        check!(clReleaseMemObject(s));
    }
    expect!(
        c,
        create(|e| clCreateSubBuffer(
            null_mut(),
            0,
            ty,
            (&reg(0, 16) as *const cl_buffer_region).cast(),
            e
        )),
        CL_INVALID_MEM_OBJECT
    );
    if wrong_types() {
        c.eq(
            "sub-buffer: cl_kernel as buffer",
            sub(f.not_mem(), 0, reg(0, 16)),
            CL_INVALID_MEM_OBJECT,
        );
    }
    for m in [big, wo, hna] {
        check!(clReleaseMemObject(m));
    }
    c.done();
}

#[test]
fn mem_object_queries_and_callbacks() {
    let f = Fix::new();
    let mut c = Check::default();
    info_rules(
        &mut c,
        "clGetMemObjectInfo",
        CL_MEM_SIZE,
        |n, s, v, r| unsafe { clGetMemObjectInfo(f.m, n, s, v, r) },
    );
    expect!(
        c,
        clSetMemObjectDestructorCallback(f.m, None, null_mut()),
        CL_INVALID_VALUE
    );
    unsafe extern "C" fn cb(_: cl_mem, _: *mut c_void) {}
    expect!(
        c,
        clSetMemObjectDestructorCallback(null_mut(), Some(cb), null_mut()),
        CL_INVALID_MEM_OBJECT
    );
    if wrong_types() {
        let nm = f.not_mem();
        let mut sz = 0;
        expect!(
            c,
            clGetMemObjectInfo(nm, CL_MEM_SIZE, 0, null_mut(), &mut sz),
            CL_INVALID_MEM_OBJECT
        );
        expect!(c, clRetainMemObject(nm), CL_INVALID_MEM_OBJECT);
        expect!(c, clReleaseMemObject(nm), CL_INVALID_MEM_OBJECT);
        expect!(
            c,
            clSetMemObjectDestructorCallback(nm, Some(cb), null_mut()),
            CL_INVALID_MEM_OBJECT
        );
    }
    c.done();
}

/// Images, samplers and pipes: images and samplers are unsupported by vkcl's device
/// (CL_DEVICE_IMAGE_SUPPORT false), so valid handles may get CL_INVALID_OPERATION; invalid
/// handles never can. Pipes are supported: their errors are exact (more in tests/pipes.rs).
#[test]
fn image_sampler_pipe_entry_points() {
    let f = Fix::new();
    let mut c = Check::default();
    let ctx = f.ctx();
    let fmt = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNORM_INT8,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: 4,
        image_height: 4,
        image_depth: 1,
        image_array_size: 1,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        mem_object: null_mut(),
    };
    let rw = CL_MEM_READ_WRITE;
    expect!(
        c,
        create(|e| clCreateImage(null_mut(), rw, &fmt, &desc, null_mut(), e)),
        CL_INVALID_CONTEXT
    );
    expect!(
        c,
        create(|e| clCreateImage(ctx, rw, null(), &desc, null_mut(), e)),
        [CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        create(|e| clCreateImage(ctx, rw, &fmt, null(), null_mut(), e)),
        [CL_INVALID_IMAGE_DESCRIPTOR, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        create(|e| clCreateImage(ctx, 1 << 30, &fmt, &desc, null_mut(), e)),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    expect!(
        c,
        create(|e| clCreateImageWithProperties(ctx, null(), rw, &fmt, &desc, null_mut(), e)),
        [CL_SUCCESS, CL_INVALID_OPERATION]
    );
    // pocl 3.1 bugs: CL_INVALID_BUFFER_SIZE for a 0 image size, accepts an unknown addressing mode.
    if !is_pocl() {
        expect!(
            c,
            create(|e| clCreateImage2D(ctx, rw, &fmt, 0, 4, 0, null_mut(), e)),
            [CL_INVALID_IMAGE_SIZE, CL_INVALID_OPERATION]
        );
        expect!(
            c,
            create(|e| clCreateImage3D(ctx, rw, &fmt, 4, 4, 0, 0, 0, null_mut(), e)),
            [CL_INVALID_IMAGE_SIZE, CL_INVALID_OPERATION]
        );
        expect!(
            c,
            create(|e| clCreatePipe(ctx, rw, 0, 4, null(), e)),
            CL_INVALID_PIPE_SIZE
        );
        expect!(
            c,
            create(|e| clCreateSampler(ctx, CL_FALSE, 0x7777, CL_FILTER_NEAREST, e)),
            [CL_INVALID_VALUE, CL_INVALID_OPERATION]
        );
    }
    let sp = [0x7777u64, 1, 0];
    expect!(
        c,
        create(|e| clCreateSamplerWithProperties(ctx, sp.as_ptr(), e)),
        [CL_INVALID_VALUE, CL_INVALID_OPERATION]
    );
    let mut n = 0;
    let mut fmts = [cl_image_format::default(); 4];
    // CL_INVALID_VALUE: "flags or image_type are not valid, or num_entries is 0 and image_formats
    // is not NULL" (holds with or without image support)
    expect!(
        c,
        clGetSupportedImageFormats(ctx, rw, 0x7777, 4, fmts.as_mut_ptr(), &mut n),
        CL_INVALID_VALUE
    );
    expect!(
        c,
        clGetSupportedImageFormats(ctx, rw, CL_MEM_OBJECT_IMAGE2D, 0, fmts.as_mut_ptr(), &mut n),
        CL_INVALID_VALUE
    );
    // pocl 3.1 bug: does not validate flags.
    if !is_pocl() {
        expect!(
            c,
            clGetSupportedImageFormats(
                ctx,
                1 << 30,
                CL_MEM_OBJECT_IMAGE2D,
                4,
                fmts.as_mut_ptr(),
                &mut n
            ),
            CL_INVALID_VALUE
        );
    }
    expect!(
        c,
        clGetSupportedImageFormats(
            null_mut(),
            rw,
            CL_MEM_OBJECT_IMAGE2D,
            4,
            fmts.as_mut_ptr(),
            &mut n
        ),
        CL_INVALID_CONTEXT
    );
    // a buffer is not an image nor a pipe
    let mut sz = 0;
    // pocl 3.1 bug: answers image queries on a buffer.
    if !is_pocl() {
        expect!(
            c,
            clGetImageInfo(f.m, CL_IMAGE_FORMAT, 0, null_mut(), &mut sz),
            [CL_INVALID_MEM_OBJECT, CL_INVALID_OPERATION]
        );
    }
    expect!(
        c,
        clGetPipeInfo(f.m, CL_PIPE_PACKET_SIZE, 0, null_mut(), &mut sz),
        CL_INVALID_MEM_OBJECT
    );
    expect!(
        c,
        clGetImageInfo(null_mut(), CL_IMAGE_FORMAT, 0, null_mut(), &mut sz),
        CL_INVALID_MEM_OBJECT
    );
    expect!(
        c,
        clGetSamplerInfo(null_mut(), CL_SAMPLER_FILTER_MODE, 0, null_mut(), &mut sz),
        CL_INVALID_SAMPLER
    );
    expect!(c, clRetainSampler(null_mut()), CL_INVALID_SAMPLER);
    expect!(c, clReleaseSampler(null_mut()), CL_INVALID_SAMPLER);
    if wrong_types() {
        let nc = f.not_ctx();
        expect!(
            c,
            create(|e| clCreateImage(nc, rw, &fmt, &desc, null_mut(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateImageWithProperties(nc, null(), rw, &fmt, &desc, null_mut(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateImage2D(nc, rw, &fmt, 4, 4, 0, null_mut(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateImage3D(nc, rw, &fmt, 4, 4, 4, 0, 0, null_mut(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreatePipe(nc, rw, 4, 4, null(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateSampler(nc, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            create(|e| clCreateSamplerWithProperties(nc, null(), e)),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            clGetSupportedImageFormats(nc, rw, CL_MEM_OBJECT_IMAGE2D, 4, fmts.as_mut_ptr(), &mut n),
            CL_INVALID_CONTEXT
        );
        expect!(
            c,
            clGetImageInfo(f.not_mem(), CL_IMAGE_FORMAT, 0, null_mut(), &mut sz),
            CL_INVALID_MEM_OBJECT
        );
        expect!(
            c,
            clGetPipeInfo(f.not_mem(), CL_PIPE_PACKET_SIZE, 0, null_mut(), &mut sz),
            CL_INVALID_MEM_OBJECT
        );
        let ns = f.not_sampler();
        expect!(
            c,
            clGetSamplerInfo(ns, CL_SAMPLER_FILTER_MODE, 0, null_mut(), &mut sz),
            CL_INVALID_SAMPLER
        );
        expect!(c, clRetainSampler(ns), CL_INVALID_SAMPLER);
        expect!(c, clReleaseSampler(ns), CL_INVALID_SAMPLER);
    }
    c.done();
}

// ---------------------------------------------------------------- programs

/// SVM: vkcl's device has no SVM capabilities (clSVMAlloc answers NULL, the enqueue calls
/// CL_INVALID_OPERATION); handles are still checked first.
#[test]
fn svm_entry_points() {
    let f = Fix::new();
    let mut c = Check::default();
    let (ctx, q) = (f.ctx(), f.q());
    let svm: u64 = device_val(f.dev(), CL_DEVICE_SVM_CAPABILITIES);
    let p = unsafe { clSVMAlloc(ctx, CL_MEM_READ_WRITE, 0, 0) };
    c.truth("clSVMAlloc(size 0) is NULL", p.is_null());
    let p = unsafe { clSVMAlloc(ctx, CL_MEM_READ_WRITE, 64, 3) };
    c.truth("clSVMAlloc(alignment 3) is NULL", p.is_null());
    // pocl 3.1 bug: ignores unknown SVM flags.
    if !is_pocl() {
        let p = unsafe { clSVMAlloc(ctx, 1 << 30, 64, 0) };
        c.truth("clSVMAlloc(unknown flag) is NULL", p.is_null());
    }
    let p = unsafe { clSVMAlloc(null_mut(), CL_MEM_READ_WRITE, 64, 0) };
    c.truth("clSVMAlloc(NULL context) is NULL", p.is_null());
    if svm == 0 {
        let p = unsafe { clSVMAlloc(ctx, CL_MEM_READ_WRITE, 64, 0) };
        c.truth("clSVMAlloc without SVM support is NULL", p.is_null());
    }
    unsafe { clSVMFree(ctx, null_mut()) }; // a no-op
    let mut a = [0u8; 64];
    let mut b = [0u8; 64];
    let (ap, bp): (*mut c_void, *mut c_void) = (a.as_mut_ptr().cast(), b.as_mut_ptr().cast());
    let mut ptrs = [ap];
    let sizes = [64usize];
    let cptrs = [ap as *const c_void];
    let pat = [0u8; 4];
    let patp: *const c_void = pat.as_ptr().cast();
    let calls = |q: cl_command_queue| -> Vec<(&str, cl_int)> {
        let mut ptrs = ptrs;
        unsafe {
            vec![
                (
                    "clEnqueueSVMFree",
                    clEnqueueSVMFree(
                        q,
                        0,
                        ptrs.as_mut_ptr(),
                        None,
                        null_mut(),
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
                (
                    "clEnqueueSVMMemcpy",
                    clEnqueueSVMMemcpy(q, CL_TRUE, ap, bp, 0, 0, null(), null_mut()),
                ),
                (
                    "clEnqueueSVMMemFill",
                    clEnqueueSVMMemFill(q, ap, patp, 4, 0, 0, null(), null_mut()),
                ),
                (
                    "clEnqueueSVMMap",
                    clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, ap, 0, 0, null(), null_mut()),
                ),
                (
                    "clEnqueueSVMUnmap",
                    clEnqueueSVMUnmap(q, null_mut(), 0, null(), null_mut()),
                ),
                (
                    "clEnqueueSVMMigrateMem",
                    clEnqueueSVMMigrateMem(
                        q,
                        0,
                        cptrs.as_ptr(),
                        sizes.as_ptr(),
                        0,
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
            ]
        }
    };
    // every call above also has an invalid value (size 0, NULL pointer, count 0)
    let valid_queue = if svm == 0 {
        vec![CL_INVALID_OPERATION, CL_INVALID_VALUE]
    } else {
        vec![CL_INVALID_VALUE]
    };
    for (name, code) in calls(q) {
        c.any(&format!("{name}: bad values"), code, &valid_queue);
    }
    for (name, code) in calls(null_mut()) {
        c.eq(
            &format!("{name}: NULL queue"),
            code,
            CL_INVALID_COMMAND_QUEUE,
        );
    }
    if wrong_types() {
        for (name, code) in calls(f.not_queue()) {
            c.eq(
                &format!("{name}: cl_mem as queue"),
                code,
                CL_INVALID_COMMAND_QUEUE,
            );
        }
    }
    let _ = &mut ptrs;
    c.done();
}

// ---------------------------------------------------------------- errcode_ret NULL
