//! Buffers: creation flags, clGetMemObjectInfo, read/write/copy/fill/map transfers, events.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn create_err(e: &Env, flags: u64, size: usize, host: *mut c_void) -> cl_int {
    let mut err = 0;
    let m = unsafe { clCreateBuffer(e.ctx, flags, size, host, &mut err) };
    if err == CL_SUCCESS {
        unsafe { clReleaseMemObject(m) };
    } else {
        assert!(
            m.is_null(),
            "clCreateBuffer failed ({}) but returned a handle",
            err_name(err)
        );
    }
    err
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn create_buffer_host_ptr_flags() {
    let e = Env::new();
    let n = 4096;
    let data = pattern(n, 7);
    // COPY_HOST_PTR
    let m = e.buffer(
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        n,
        data.as_ptr() as *mut _,
    );
    assert_eq!(e.read::<u8>(m, n), data);
    check!(clReleaseMemObject(m));
    // ALLOC_HOST_PTR
    let m = e.buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, null_mut());
    e.write(m, &data);
    assert_eq!(e.read::<u8>(m, n), data);
    check!(clReleaseMemObject(m));
    // ALLOC | COPY
    let m = e.buffer(
        CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR,
        n,
        data.as_ptr() as *mut _,
    );
    assert_eq!(e.read::<u8>(m, n), data);
    check!(clReleaseMemObject(m));
    // USE_HOST_PTR: initial contents come from host memory
    let mut host = Aligned::new(n);
    host.bytes().copy_from_slice(&data);
    let m = e.buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n, host.ptr.cast());
    assert_eq!(e.read::<u8>(m, n), data);
    assert_eq!(mem_val::<usize>(m, CL_MEM_HOST_PTR), host.ptr as usize);
    check!(clReleaseMemObject(m));
    // plain, each access flag
    for f in [CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, 0] {
        let m = e.buffer(f, 64, null_mut());
        check!(clReleaseMemObject(m));
    }
}

#[test]
fn create_buffer_invalid_combinations() {
    let e = Env::new();
    let mut host = Aligned::new(4096);
    let h: *mut c_void = host.ptr.cast();
    assert_eq!(
        create_err(&e, CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, 64, h),
        CL_INVALID_VALUE
    );
    assert_eq!(
        create_err(&e, CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, 64, h),
        CL_INVALID_VALUE
    );
    assert_eq!(
        create_err(&e, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(
        create_err(&e, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, 64, null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(
        create_err(&e, 1 << 40, 64, null_mut()),
        CL_INVALID_VALUE,
        "unknown flag bit"
    );
    assert_eq!(
        create_err(&e, CL_MEM_READ_WRITE, 0, null_mut()),
        CL_INVALID_BUFFER_SIZE
    );
    assert_eq!(
        create_err(&e, CL_MEM_READ_WRITE, 64, h),
        CL_INVALID_HOST_PTR,
        "host_ptr without a host-ptr flag"
    );
    assert_eq!(
        create_err(&e, CL_MEM_USE_HOST_PTR, 64, null_mut()),
        CL_INVALID_HOST_PTR
    );
    assert_eq!(
        create_err(&e, CL_MEM_COPY_HOST_PTR, 64, null_mut()),
        CL_INVALID_HOST_PTR
    );
    let max = device_val::<u64>(e.dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    assert_eq!(
        create_err(&e, CL_MEM_READ_WRITE, max as usize + 1, null_mut()),
        CL_INVALID_BUFFER_SIZE
    );
    let mut err = 0;
    let m = unsafe { clCreateBuffer(null_mut(), CL_MEM_READ_WRITE, 64, null_mut(), &mut err) };
    assert!(m.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    host.bytes()[0] = 0;
}

#[test]
fn mem_object_info_every_param() {
    let e = Env::new();
    let host = Aligned::new(8192);
    let flags = CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR;
    let m = e.buffer(flags, 8192, host.ptr.cast());
    assert_eq!(mem_val::<u32>(m, CL_MEM_TYPE), CL_MEM_OBJECT_BUFFER);
    assert_eq!(mem_val::<u64>(m, CL_MEM_FLAGS), flags);
    assert_eq!(mem_val::<usize>(m, CL_MEM_SIZE), 8192);
    assert_eq!(mem_val::<usize>(m, CL_MEM_HOST_PTR), host.ptr as usize);
    assert_eq!(mem_val::<u32>(m, CL_MEM_MAP_COUNT), 0);
    assert_eq!(mem_val::<u32>(m, CL_MEM_REFERENCE_COUNT), 1);
    assert_eq!(mem_val::<usize>(m, CL_MEM_CONTEXT), e.ctx as usize);
    assert_eq!(mem_val::<usize>(m, CL_MEM_ASSOCIATED_MEMOBJECT), 0);
    assert_eq!(mem_val::<usize>(m, CL_MEM_OFFSET), 0);
    assert_eq!(mem_val::<u32>(m, CL_MEM_USES_SVM_POINTER), CL_FALSE);
    // created with clCreateBuffer (no properties) => CL_MEM_PROPERTIES has size 0
    let mut size = 99;
    check!(clGetMemObjectInfo(
        m,
        CL_MEM_PROPERTIES,
        0,
        null_mut(),
        &mut size
    ));
    assert_eq!(size, 0);
    // reference count tracks retain/release
    check!(clRetainMemObject(m));
    assert_eq!(mem_val::<u32>(m, CL_MEM_REFERENCE_COUNT), 2);
    check!(clReleaseMemObject(m));
    assert_eq!(mem_val::<u32>(m, CL_MEM_REFERENCE_COUNT), 1);
    // errors
    let mut sz = 0;
    check_err!(
        clGetMemObjectInfo(m, 0xDEAD, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    let mut v = 0u32;
    check_err!(
        clGetMemObjectInfo(m, CL_MEM_SIZE, 4, (&mut v as *mut u32).cast(), null_mut()),
        CL_INVALID_VALUE
    );
    check!(clReleaseMemObject(m));

    // without USE_HOST_PTR, CL_MEM_HOST_PTR is NULL (also for COPY_HOST_PTR)
    let data = [1u8; 64];
    let m = e.buffer(CL_MEM_COPY_HOST_PTR, 64, data.as_ptr() as *mut _);
    assert_eq!(mem_val::<usize>(m, CL_MEM_HOST_PTR), 0);
    assert_eq!(
        mem_val::<u64>(m, CL_MEM_FLAGS) & CL_MEM_COPY_HOST_PTR,
        CL_MEM_COPY_HOST_PTR
    );
    check!(clReleaseMemObject(m));
}

#[test]
fn write_read_blocking_with_offsets() {
    let e = Env::new();
    let n = 1 << 16;
    let m = e.buffer(CL_MEM_READ_WRITE, n, null_mut());
    let a = pattern(n, 1);
    e.write(m, &a);
    assert_eq!(e.read::<u8>(m, n), a);
    // overwrite a middle region at an odd offset
    let b = pattern(1001, 99);
    check!(clEnqueueWriteBuffer(
        e.queue,
        m,
        CL_TRUE,
        333,
        b.len(),
        b.as_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let mut expect = a.clone();
    expect[333..333 + b.len()].copy_from_slice(&b);
    assert_eq!(e.read::<u8>(m, n), expect);
    // partial read at an offset
    let mut part = vec![0u8; 517];
    check!(clEnqueueReadBuffer(
        e.queue,
        m,
        CL_TRUE,
        300,
        part.len(),
        part.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    assert_eq!(&part[..], &expect[300..817]);
    // last byte
    let mut last = [0u8];
    check!(clEnqueueReadBuffer(
        e.queue,
        m,
        CL_TRUE,
        n - 1,
        1,
        last.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    assert_eq!(last[0], expect[n - 1]);
    check!(clReleaseMemObject(m));
}

#[test]
fn write_read_non_blocking_with_events() {
    let e = Env::new();
    let n = 100_000usize;
    let m = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let a: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let mut out = vec![0u32; n];
    let mut ew = null_mut();
    let mut er = null_mut();
    check!(clEnqueueWriteBuffer(
        e.queue,
        m,
        CL_FALSE,
        0,
        n * 4,
        a.as_ptr().cast(),
        0,
        null(),
        &mut ew
    ));
    check!(clEnqueueReadBuffer(
        e.queue,
        m,
        CL_FALSE,
        0,
        n * 4,
        out.as_mut_ptr().cast(),
        1,
        &ew,
        &mut er
    ));
    check!(clWaitForEvents(1, &er));
    assert_eq!(out, a);
    for (ev, ty) in [(ew, CL_COMMAND_WRITE_BUFFER), (er, CL_COMMAND_READ_BUFFER)] {
        assert_eq!(event_val::<u32>(ev, CL_EVENT_COMMAND_TYPE), ty);
        assert_eq!(
            event_val::<i32>(ev, CL_EVENT_COMMAND_EXECUTION_STATUS),
            CL_COMPLETE
        );
        check!(clReleaseEvent(ev));
    }
    check!(clReleaseMemObject(m));
}

#[test]
fn read_write_out_of_range() {
    let e = Env::new();
    let m = e.buffer(CL_MEM_READ_WRITE, 256, null_mut());
    let mut buf = [0u8; 512];
    check_err!(
        clEnqueueReadBuffer(
            e.queue,
            m,
            CL_TRUE,
            0,
            257,
            buf.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueReadBuffer(
            e.queue,
            m,
            CL_TRUE,
            200,
            57,
            buf.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueReadBuffer(
            e.queue,
            m,
            CL_TRUE,
            256,
            1,
            buf.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueWriteBuffer(
            e.queue,
            m,
            CL_TRUE,
            255,
            2,
            buf.as_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueWriteBuffer(
            e.queue,
            m,
            CL_TRUE,
            usize::MAX,
            2,
            buf.as_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueReadBuffer(
            e.queue,
            m,
            CL_TRUE,
            0,
            16,
            null_mut(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueWriteBuffer(e.queue, m, CL_TRUE, 0, 16, null(), 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueReadBuffer(
            e.queue,
            null_mut(),
            CL_TRUE,
            0,
            16,
            buf.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_MEM_OBJECT
    );
    // wait list inconsistencies
    check_err!(
        clEnqueueReadBuffer(
            e.queue,
            m,
            CL_TRUE,
            0,
            16,
            buf.as_mut_ptr().cast(),
            1,
            null(),
            null_mut()
        ),
        CL_INVALID_EVENT_WAIT_LIST
    );
    let ev: cl_event = null_mut();
    check_err!(
        clEnqueueReadBuffer(
            e.queue,
            m,
            CL_TRUE,
            0,
            16,
            buf.as_mut_ptr().cast(),
            0,
            &ev,
            null_mut()
        ),
        CL_INVALID_EVENT_WAIT_LIST
    );
    check!(clReleaseMemObject(m));
}

#[test]
fn copy_buffer_with_offsets() {
    let e = Env::new();
    let n = 8192;
    let a = pattern(n, 3);
    let src = e.buffer_from(&a);
    let dst = e.buffer_from(&vec![0u8; n]);
    check!(clEnqueueCopyBuffer(
        e.queue,
        src,
        dst,
        0,
        0,
        n,
        0,
        null(),
        null_mut()
    ));
    assert_eq!(e.read::<u8>(dst, n), a);
    e.write(dst, &vec![0u8; n]);
    let mut ev = null_mut();
    check!(clEnqueueCopyBuffer(
        e.queue,
        src,
        dst,
        100,
        1001,
        3000,
        0,
        null(),
        &mut ev
    ));
    check!(clWaitForEvents(1, &ev));
    assert_eq!(
        event_val::<u32>(ev, CL_EVENT_COMMAND_TYPE),
        CL_COMMAND_COPY_BUFFER
    );
    check!(clReleaseEvent(ev));
    let mut expect = vec![0u8; n];
    expect[1001..4001].copy_from_slice(&a[100..3100]);
    assert_eq!(e.read::<u8>(dst, n), expect);
    // same buffer, non-overlapping regions
    check!(clEnqueueCopyBuffer(
        e.queue,
        src,
        src,
        0,
        4096,
        4096,
        0,
        null(),
        null_mut()
    ));
    let mut expect = a.clone();
    expect.copy_within(0..4096, 4096);
    assert_eq!(e.read::<u8>(src, n), expect);
    // errors
    check_err!(
        clEnqueueCopyBuffer(e.queue, src, src, 0, 100, 200, 0, null(), null_mut()),
        CL_MEM_COPY_OVERLAP
    );
    check_err!(
        clEnqueueCopyBuffer(e.queue, src, src, 100, 0, 200, 0, null(), null_mut()),
        CL_MEM_COPY_OVERLAP
    );
    check_err!(
        clEnqueueCopyBuffer(e.queue, src, dst, n - 10, 0, 11, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueCopyBuffer(e.queue, src, dst, 0, n - 10, 11, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueCopyBuffer(e.queue, src, null_mut(), 0, 0, 16, 0, null(), null_mut()),
        CL_INVALID_MEM_OBJECT
    );
    check!(clReleaseMemObject(src));
    check!(clReleaseMemObject(dst));
}

#[test]
fn fill_buffer_every_pattern_size() {
    let e = Env::new();
    let n = 2048;
    let m = e.buffer(CL_MEM_READ_WRITE, n, null_mut());
    for psz in [1usize, 2, 4, 8, 16, 32, 64, 128] {
        e.write(m, &vec![0xAAu8; n]);
        let pat = pattern(psz, psz as u8);
        let off = 3 * psz;
        let size = psz * (if psz >= 64 { 5 } else { 17 });
        let mut ev = null_mut();
        check!(clEnqueueFillBuffer(
            e.queue,
            m,
            pat.as_ptr().cast(),
            psz,
            off,
            size,
            0,
            null(),
            &mut ev
        ));
        check!(clWaitForEvents(1, &ev));
        assert_eq!(
            event_val::<u32>(ev, CL_EVENT_COMMAND_TYPE),
            CL_COMMAND_FILL_BUFFER
        );
        check!(clReleaseEvent(ev));
        let got = e.read::<u8>(m, n);
        for (i, &b) in got.iter().enumerate() {
            let want = if i >= off && i < off + size {
                pat[(i - off) % psz]
            } else {
                0xAA
            };
            assert_eq!(b, want, "pattern size {psz}, byte {i}");
        }
    }
    check!(clReleaseMemObject(m));
}

#[test]
fn fill_buffer_errors() {
    let e = Env::new();
    let m = e.buffer(CL_MEM_READ_WRITE, 1024, null_mut());
    let pat = [0u8; 256];
    let p = pat.as_ptr().cast();
    check_err!(
        clEnqueueFillBuffer(e.queue, m, p, 3, 0, 12, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueFillBuffer(e.queue, m, p, 0, 0, 12, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueFillBuffer(e.queue, m, p, 256, 0, 256, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueFillBuffer(e.queue, m, null(), 4, 0, 16, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueFillBuffer(e.queue, m, p, 4, 2, 16, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueFillBuffer(e.queue, m, p, 4, 0, 18, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueFillBuffer(e.queue, m, p, 4, 1020, 8, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check!(clReleaseMemObject(m));
}

#[test]
fn map_read_and_write() {
    let e = Env::new();
    let n = 4096;
    let a = pattern(n, 5);
    let m = e.buffer_from(&a);
    let mut err = 0;
    // read map of a sub-range
    let p = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            CL_MAP_READ,
            128,
            1024,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    assert!(!p.is_null());
    assert_eq!(mem_val::<u32>(m, CL_MEM_MAP_COUNT), 1);
    assert_eq!(
        unsafe { std::slice::from_raw_parts(p as *const u8, 1024) },
        &a[128..1152]
    );
    let mut ev = null_mut();
    check!(clEnqueueUnmapMemObject(e.queue, m, p, 0, null(), &mut ev));
    check!(clWaitForEvents(1, &ev));
    assert_eq!(
        event_val::<u32>(ev, CL_EVENT_COMMAND_TYPE),
        CL_COMMAND_UNMAP_MEM_OBJECT
    );
    check!(clReleaseEvent(ev));
    assert_eq!(mem_val::<u32>(m, CL_MEM_MAP_COUNT), 0);
    // write map: modifications are visible after unmap
    let mut ev = null_mut();
    let p = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_FALSE,
            CL_MAP_WRITE,
            1000,
            100,
            0,
            null(),
            &mut ev,
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    check!(clWaitForEvents(1, &ev));
    assert_eq!(
        event_val::<u32>(ev, CL_EVENT_COMMAND_TYPE),
        CL_COMMAND_MAP_BUFFER
    );
    check!(clReleaseEvent(ev));
    unsafe { std::ptr::write_bytes(p as *mut u8, 0x5C, 100) };
    check!(clEnqueueUnmapMemObject(
        e.queue,
        m,
        p,
        0,
        null(),
        null_mut()
    ));
    let mut expect = a.clone();
    expect[1000..1100].fill(0x5C);
    assert_eq!(e.read::<u8>(m, n), expect);
    // two maps at once
    let p1 = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            CL_MAP_READ,
            0,
            16,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let p2 = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            CL_MAP_READ,
            2048,
            16,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(mem_val::<u32>(m, CL_MEM_MAP_COUNT), 2);
    check!(clEnqueueUnmapMemObject(
        e.queue,
        m,
        p1,
        0,
        null(),
        null_mut()
    ));
    check!(clEnqueueUnmapMemObject(
        e.queue,
        m,
        p2,
        0,
        null(),
        null_mut()
    ));
    check!(clFinish(e.queue));
    assert_eq!(mem_val::<u32>(m, CL_MEM_MAP_COUNT), 0);
    check!(clReleaseMemObject(m));
}

#[test]
fn map_write_invalidate_region() {
    let e = Env::new();
    let n = 1024;
    let a = pattern(n, 9);
    let m = e.buffer_from(&a);
    let mut err = 0;
    let p = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            CL_MAP_WRITE_INVALIDATE_REGION,
            256,
            512,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    let new = pattern(512, 200);
    unsafe { std::ptr::copy_nonoverlapping(new.as_ptr(), p as *mut u8, 512) };
    check!(clEnqueueUnmapMemObject(
        e.queue,
        m,
        p,
        0,
        null(),
        null_mut()
    ));
    let mut expect = a.clone();
    expect[256..768].copy_from_slice(&new);
    assert_eq!(
        e.read::<u8>(m, n),
        expect,
        "bytes outside the invalidated region must be preserved"
    );
    check!(clReleaseMemObject(m));
}

#[test]
fn map_use_host_ptr_returns_host_ptr_plus_offset() {
    let e = Env::new();
    let n = 8192;
    let mut host = Aligned::new(n);
    host.bytes().copy_from_slice(&pattern(n, 11));
    let m = e.buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n, host.ptr.cast());
    let data = pattern(n, 42);
    e.write(m, &data);
    let mut err = 0;
    let p = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE,
            4096,
            100,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    assert_eq!(
        p as usize,
        host.ptr as usize + 4096,
        "map of a USE_HOST_PTR buffer must return host_ptr + offset"
    );
    assert_eq!(
        unsafe { std::slice::from_raw_parts(p as *const u8, 100) },
        &data[4096..4196]
    );
    unsafe { *(p as *mut u8) = 0xEE };
    check!(clEnqueueUnmapMemObject(
        e.queue,
        m,
        p,
        0,
        null(),
        null_mut()
    ));
    let got = e.read::<u8>(m, n);
    assert_eq!(got[4096], 0xEE);
    assert_eq!(&got[..4096], &data[..4096]);
    check!(clReleaseMemObject(m));
}

/// A `CL_MEM_USE_HOST_PTR` buffer read into and written from its own host pointer (`ptr` is
/// `host_ptr + offset`, which the spec allows while no command uses the buffer): with a
/// page-aligned pointer the buffer's memory is the application's, and vkcl's host copy had
/// both ends at one address (a debug build aborted in `copy_nonoverlapping`; CTS pipes).
#[test]
fn use_host_ptr_read_and_written_through_its_own_pointer() {
    let e = Env::new();
    let n = 65536;
    let mut host = Aligned::new(n);
    let data = pattern(n, 5);
    host.bytes().copy_from_slice(&data);
    let m = e.buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n, host.ptr.cast());
    for (offset, len) in [(0, n), (4096, 1000), (17, 300)] {
        let at = unsafe { host.ptr.add(offset) }.cast::<c_void>();
        check!(clEnqueueWriteBuffer(
            e.queue,
            m,
            CL_TRUE,
            offset,
            len,
            at,
            0,
            null(),
            null_mut()
        ));
        check!(clEnqueueReadBuffer(
            e.queue,
            m,
            CL_TRUE,
            offset,
            len,
            at,
            0,
            null(),
            null_mut()
        ));
        assert_eq!(host.bytes(), &data[..], "offset {offset}, {len} bytes");
    }
    // The buffer holds what the host memory does, through a copy of it too.
    assert_eq!(e.read::<u8>(m, n), data);
    check!(clReleaseMemObject(m));
}

#[test]
fn map_errors() {
    let e = Env::new();
    let m = e.buffer(CL_MEM_READ_WRITE, 256, null_mut());
    let mut err = 0;
    let p = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            CL_MAP_READ,
            200,
            57,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "{}", err_name(err));
    let p = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION,
            0,
            16,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    if is_pocl() && err == CL_SUCCESS {
        // pocl 3.1 bug: accepts CL_MAP_READ together with CL_MAP_WRITE_INVALIDATE_REGION.
        check!(clEnqueueUnmapMemObject(
            e.queue,
            m,
            p,
            0,
            null(),
            null_mut()
        ));
    } else {
        assert!(p.is_null());
        assert_eq!(
            err,
            CL_INVALID_VALUE,
            "READ with WRITE_INVALIDATE_REGION: {}",
            err_name(err)
        );
    }
    // unmapping a pointer that was never mapped
    let mut x = 0u8;
    check_err!(
        clEnqueueUnmapMemObject(
            e.queue,
            m,
            (&mut x as *mut u8).cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check!(clReleaseMemObject(m));
}

#[test]
fn event_info_and_reference_count() {
    let e = Env::new();
    let m = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let data = [7u8; 64];
    let mut ev = null_mut();
    check!(clEnqueueWriteBuffer(
        e.queue,
        m,
        CL_FALSE,
        0,
        64,
        data.as_ptr().cast(),
        0,
        null(),
        &mut ev
    ));
    check!(clWaitForEvents(1, &ev));
    assert_eq!(
        event_val::<u32>(ev, CL_EVENT_COMMAND_TYPE),
        CL_COMMAND_WRITE_BUFFER
    );
    assert_eq!(
        event_val::<usize>(ev, CL_EVENT_COMMAND_QUEUE),
        e.queue as usize
    );
    assert_eq!(event_val::<usize>(ev, CL_EVENT_CONTEXT), e.ctx as usize);
    assert_eq!(
        event_val::<i32>(ev, CL_EVENT_COMMAND_EXECUTION_STATUS),
        CL_COMPLETE
    );
    let rc = event_val::<u32>(ev, CL_EVENT_REFERENCE_COUNT);
    assert!(rc >= 1);
    check!(clRetainEvent(ev));
    assert_eq!(event_val::<u32>(ev, CL_EVENT_REFERENCE_COUNT), rc + 1);
    check!(clReleaseEvent(ev));
    assert_eq!(event_val::<u32>(ev, CL_EVENT_REFERENCE_COUNT), rc);
    let mut sz = 0;
    check_err!(
        clGetEventInfo(ev, 0xDEAD, 0, null_mut(), &mut sz),
        CL_INVALID_VALUE
    );
    let mut v = 0u16;
    check_err!(
        clGetEventInfo(
            ev,
            CL_EVENT_COMMAND_TYPE,
            2,
            (&mut v as *mut u16).cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check!(clReleaseEvent(ev));
    check!(clReleaseMemObject(m));
}

#[test]
fn wait_for_events_errors() {
    setup();
    check_err!(clWaitForEvents(0, null()), CL_INVALID_VALUE);
    check_err!(clWaitForEvents(1, null()), CL_INVALID_VALUE);
    let e = Env::new();
    let m = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let data = [7u8; 64];
    let mut ev = null_mut();
    check!(clEnqueueWriteBuffer(
        e.queue,
        m,
        CL_FALSE,
        0,
        64,
        data.as_ptr().cast(),
        0,
        null(),
        &mut ev
    ));
    check_err!(clWaitForEvents(0, &ev), CL_INVALID_VALUE);
    let bad: [cl_event; 1] = [null_mut()];
    check_err!(clWaitForEvents(1, bad.as_ptr()), CL_INVALID_EVENT);
    let mixed = [ev, null_mut()];
    check_err!(clWaitForEvents(2, mixed.as_ptr()), CL_INVALID_EVENT);
    check!(clWaitForEvents(1, &ev));
    check!(clReleaseEvent(ev));
    check!(clReleaseMemObject(m));
}

#[test]
fn many_events_and_flush_finish() {
    let e = Env::new();
    let m = e.buffer(CL_MEM_READ_WRITE, 4 * 64, null_mut());
    let mut evs = Vec::new();
    let vals: Vec<u32> = (0..64).collect();
    for i in 0..64 {
        let mut ev = null_mut();
        check!(clEnqueueWriteBuffer(
            e.queue,
            m,
            CL_FALSE,
            i * 4,
            4,
            vals[i..].as_ptr().cast(),
            0,
            null(),
            &mut ev
        ));
        evs.push(ev);
    }
    check!(clFlush(e.queue));
    check!(clWaitForEvents(evs.len() as u32, evs.as_ptr()));
    for ev in evs {
        assert_eq!(
            event_val::<i32>(ev, CL_EVENT_COMMAND_EXECUTION_STATUS),
            CL_COMPLETE
        );
        check!(clReleaseEvent(ev));
    }
    check!(clFinish(e.queue));
    assert_eq!(e.read::<u32>(m, 64), vals);
    check!(clReleaseMemObject(m));
}

/// Issue 17, item 6: a blocking map whose wait list fails while it waits returns NULL with
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST and leaves nothing mapped (CL_MEM_MAP_COUNT
/// back to 0, the buffer unmappable at that address).
#[test]
fn a_blocking_map_whose_wait_list_fails_maps_nothing() {
    setup();
    let e = Env::new();
    let b = e.buffer_from(&[1u32; 256]);
    for flags in [CL_MAP_READ, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION] {
        let mut err = 0;
        let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
        assert_eq!(err, CL_SUCCESS);
        let g = gate as usize;
        let failer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            unsafe { clSetUserEventStatus(g as cl_event, -1) }
        });
        let ptr = unsafe {
            clEnqueueMapBuffer(
                e.queue,
                b,
                CL_TRUE,
                flags,
                0,
                1024,
                1,
                &gate,
                null_mut(),
                &mut err,
            )
        };
        assert_eq!(failer.join().unwrap(), CL_SUCCESS);
        assert!(ptr.is_null(), "flags {flags:#x}");
        assert_eq!(
            err,
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
            "{}",
            err_name(err)
        );
        let count: cl_uint = mem_val(b, CL_MEM_MAP_COUNT);
        assert_eq!(count, 0, "flags {flags:#x}");
        unsafe { clReleaseEvent(gate) };
    }
    // The buffer still works and was not changed.
    assert_eq!(e.read::<u32>(b, 256), vec![1; 256]);
    unsafe { clReleaseMemObject(b) };
}
