//! Rect transfers: clEnqueueRead/Write/CopyBufferRect with pitches and 3-D regions, checked
//! against the same copies done on the host, and their argument errors.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

#[link(name = "OpenCL")]
extern "C" {
    fn clEnqueueReadBufferRect(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        bo: *const usize,
        ho: *const usize,
        region: *const usize,
        brp: usize,
        bsp: usize,
        hrp: usize,
        hsp: usize,
        ptr: *mut c_void,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueWriteBufferRect(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        bo: *const usize,
        ho: *const usize,
        region: *const usize,
        brp: usize,
        bsp: usize,
        hrp: usize,
        hsp: usize,
        ptr: *const c_void,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyBufferRect(
        q: cl_command_queue,
        s: cl_mem,
        d: cl_mem,
        so: *const usize,
        dof: *const usize,
        region: *const usize,
        srp: usize,
        ssp: usize,
        drp: usize,
        dsp: usize,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
}

/// Host model of a rect copy between two byte arrays.
fn copy_rect(
    src: &[u8],
    so: [usize; 3],
    srp: usize,
    ssp: usize,
    dst: &mut [u8],
    dof: [usize; 3],
    drp: usize,
    dsp: usize,
    region: [usize; 3],
) {
    for z in 0..region[2] {
        for y in 0..region[1] {
            let s = (so[2] + z) * ssp + (so[1] + y) * srp + so[0];
            let d = (dof[2] + z) * dsp + (dof[1] + y) * drp + dof[0];
            dst[d..d + region[0]].copy_from_slice(&src[s..s + region[0]]);
        }
    }
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed))
        .collect()
}

#[test]
fn rect_transfers_match_the_host_model() {
    let e = Env::new();
    // A 3-D buffer of 16 × 8 × 4 bytes (row pitch 16, slice pitch 128).
    let (brp, bsp, size) = (16usize, 128usize, 512usize);
    let init = bytes(size, 1);
    let m = e.buffer_from(&init);
    let region = [5usize, 3, 2];
    let bo = [2usize, 1, 1];

    // Read into a host array with its own pitches (row 8, slice 40) at origin (1, 1, 0).
    let (hrp, hsp) = (8usize, 40usize);
    let ho = [1usize, 1, 0];
    let mut host = vec![0xEEu8; 100];
    check!(clEnqueueReadBufferRect(
        e.queue,
        m,
        CL_TRUE,
        bo.as_ptr(),
        ho.as_ptr(),
        region.as_ptr(),
        brp,
        bsp,
        hrp,
        hsp,
        host.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let mut want = vec![0xEEu8; 100];
    copy_rect(&init, bo, brp, bsp, &mut want, ho, hrp, hsp, region);
    assert_eq!(host, want);

    // Write from a host array; pitches 0 mean tightly packed.
    let src = bytes(region.iter().product(), 100);
    let zero = [0usize; 3];
    check!(clEnqueueWriteBufferRect(
        e.queue,
        m,
        CL_TRUE,
        bo.as_ptr(),
        zero.as_ptr(),
        region.as_ptr(),
        brp,
        bsp,
        0,
        0,
        src.as_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let mut model = init.clone();
    copy_rect(
        &src,
        zero,
        region[0],
        region[0] * region[1],
        &mut model,
        bo,
        brp,
        bsp,
        region,
    );
    assert_eq!(e.read::<u8>(m, size), model);

    // Copy between buffers with different pitches, and within one buffer (no overlap).
    let other = e.buffer(
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        300,
        bytes(300, 7).as_ptr() as *mut c_void,
    );
    let dof = [3usize, 2, 1];
    check!(clEnqueueCopyBufferRect(
        e.queue,
        m,
        other,
        bo.as_ptr(),
        dof.as_ptr(),
        region.as_ptr(),
        brp,
        bsp,
        10,
        100,
        0,
        null(),
        null_mut()
    ));
    let mut other_model = bytes(300, 7);
    copy_rect(&model, bo, brp, bsp, &mut other_model, dof, 10, 100, region);
    assert_eq!(e.read::<u8>(other, 300), other_model);
    let far = [8usize, 4, 2];
    check!(clEnqueueCopyBufferRect(
        e.queue,
        m,
        m,
        bo.as_ptr(),
        far.as_ptr(),
        region.as_ptr(),
        brp,
        bsp,
        brp,
        bsp,
        0,
        null(),
        null_mut()
    ));
    let before = model.clone();
    copy_rect(&before, bo, brp, bsp, &mut model, far, brp, bsp, region);
    assert_eq!(e.read::<u8>(m, size), model);

    // Errors.
    let near = [3usize, 1, 1];
    check_err!(
        clEnqueueCopyBufferRect(
            e.queue,
            m,
            m,
            bo.as_ptr(),
            near.as_ptr(),
            region.as_ptr(),
            brp,
            bsp,
            brp,
            bsp,
            0,
            null(),
            null_mut()
        ),
        CL_MEM_COPY_OVERLAP
    );
    let empty = [0usize, 1, 1];
    check_err!(
        clEnqueueReadBufferRect(
            e.queue,
            m,
            CL_TRUE,
            bo.as_ptr(),
            zero.as_ptr(),
            empty.as_ptr(),
            0,
            0,
            0,
            0,
            host.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    let outside = [16usize, 8, 4];
    check_err!(
        clEnqueueReadBufferRect(
            e.queue,
            m,
            CL_TRUE,
            bo.as_ptr(),
            zero.as_ptr(),
            outside.as_ptr(),
            0,
            0,
            0,
            0,
            host.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueReadBufferRect(
            e.queue,
            m,
            CL_TRUE,
            bo.as_ptr(),
            zero.as_ptr(),
            region.as_ptr(),
            4,
            0,
            0,
            0,
            host.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueReadBufferRect(
            e.queue,
            m,
            CL_TRUE,
            bo.as_ptr(),
            zero.as_ptr(),
            region.as_ptr(),
            brp,
            20,
            0,
            0,
            host.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueReadBufferRect(
            e.queue,
            m,
            CL_TRUE,
            bo.as_ptr(),
            zero.as_ptr(),
            region.as_ptr(),
            brp,
            bsp,
            0,
            0,
            null_mut(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    unsafe {
        clReleaseMemObject(other);
        clReleaseMemObject(m);
    }
}
