//! Buffer placement (docs/MEMORY.md): every flag combination, every transfer command at
//! unaligned offsets and odd sizes on every kind of buffer, CL_MEM_USE_HOST_PTR coherence at
//! each synchronisation point, CL_MEM_ALLOC_HOST_PTR maps, several maps outstanding, transfers
//! larger than the staging chunk, and the largest buffer. CI runs this file twice: as is
//! (host-visible zero-copy buffers on lavapipe) and with VKCL_PLACEMENT=device (device-local
//! buffers with staging copies, the discrete-GPU paths).
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

/// The buffer's contents, read through a copy into a plain buffer (so that buffers the host
/// may not read can be checked too).
fn contents(e: &Env, m: cl_mem, n: usize) -> Vec<u8> {
    let plain = e.buffer(CL_MEM_READ_WRITE, n, null_mut());
    check!(clEnqueueCopyBuffer(
        e.queue,
        m,
        plain,
        0,
        0,
        n,
        0,
        null(),
        null_mut()
    ));
    let v = e.read::<u8>(plain, n);
    check!(clReleaseMemObject(plain));
    v
}

/// The error clCreateBuffer must give for `flags` with or without a host pointer.
fn expected(flags: cl_bitfield, with_ptr: bool) -> cl_int {
    let access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
    let host = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    if (flags & access).count_ones() > 1
        || (flags & host).count_ones() > 1
        || (flags & CL_MEM_USE_HOST_PTR != 0
            && flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0)
    {
        CL_INVALID_VALUE
    } else if wants_ptr != with_ptr {
        CL_INVALID_HOST_PTR
    } else {
        CL_SUCCESS
    }
}

#[test]
fn every_flag_combination_is_accepted_or_gets_its_error() {
    let e = Env::new();
    let bits = [
        CL_MEM_READ_WRITE,
        CL_MEM_WRITE_ONLY,
        CL_MEM_READ_ONLY,
        CL_MEM_USE_HOST_PTR,
        CL_MEM_ALLOC_HOST_PTR,
        CL_MEM_COPY_HOST_PTR,
        CL_MEM_HOST_WRITE_ONLY,
        CL_MEM_HOST_READ_ONLY,
        CL_MEM_HOST_NO_ACCESS,
    ];
    let n = 4096 + 40;
    let data = pattern(n, 3);
    let mut host = Aligned::new(8192);
    let mut accepted = 0;
    for combo in 0u32..1 << bits.len() {
        let flags = (0..bits.len())
            .filter(|i| combo & (1 << i) != 0)
            .fold(0, |f, i| f | bits[i]);
        for with_ptr in [false, true] {
            // Odd offsets into aligned memory: CL_MEM_USE_HOST_PTR then needs a device copy.
            let ptr = if with_ptr {
                host.bytes()[8..8 + n].copy_from_slice(&data);
                unsafe { host.ptr.add(8) }
            } else {
                null_mut()
            };
            let mut err = 0;
            let m = unsafe { clCreateBuffer(e.ctx, flags, n, ptr.cast(), &mut err) };
            let want = expected(flags, with_ptr);
            assert_eq!(
                err,
                want,
                "flags {flags:#x}, host pointer {with_ptr}: {} instead of {}",
                err_name(err),
                err_name(want)
            );
            if err != CL_SUCCESS {
                assert!(m.is_null());
                continue;
            }
            accepted += 1;
            let got: cl_bitfield = mem_val(m, CL_MEM_FLAGS);
            assert_eq!(got & flags, flags, "CL_MEM_FLAGS keeps the flags given");
            if with_ptr {
                assert_eq!(contents(&e, m, n), data, "flags {flags:#x}");
            }
            check!(clReleaseMemObject(m));
        }
    }
    // 4 access choices x 4 host-access choices x (plain, ALLOC, USE, COPY, ALLOC|COPY).
    assert_eq!(accepted, 4 * 4 * 5);
}

/// The kinds of buffer whose transfers are checked: flags, and a host pointer's offset into
/// 4096-aligned memory (None: no host pointer). USE_HOST_PTR at offset 0 is imported where the
/// driver can; at offset 24 it has a device copy.
const KINDS: &[(&str, cl_bitfield, Option<usize>)] = &[
    ("plain", CL_MEM_READ_WRITE, None),
    ("ALLOC_HOST_PTR", CL_MEM_ALLOC_HOST_PTR, None),
    ("COPY_HOST_PTR", CL_MEM_COPY_HOST_PTR, Some(24)),
    ("USE_HOST_PTR aligned", CL_MEM_USE_HOST_PTR, Some(0)),
    ("USE_HOST_PTR unaligned", CL_MEM_USE_HOST_PTR, Some(24)),
];

struct Kind {
    mem: cl_mem,
    _host: Option<Aligned>,
}

fn make(e: &Env, flags: cl_bitfield, at: Option<usize>, init: &[u8]) -> Kind {
    let n = init.len();
    let mut host = at.map(|_| Aligned::new((n + 4096).next_multiple_of(4096)));
    let ptr = match (&mut host, at) {
        (Some(h), Some(at)) => {
            h.bytes()[at..at + n].copy_from_slice(init);
            unsafe { h.ptr.add(at) }
        }
        _ => null_mut(),
    };
    let mem = e.buffer(flags, n, ptr.cast());
    if at.is_none() {
        e.write(mem, init);
    }
    Kind { mem, _host: host }
}

fn write(e: &Env, m: cl_mem, blocking: bool, offset: usize, data: &[u8]) {
    let mut ev = null_mut();
    check!(clEnqueueWriteBuffer(
        e.queue,
        m,
        blocking as cl_bool,
        offset,
        data.len(),
        data.as_ptr().cast(),
        0,
        null(),
        &mut ev
    ));
    check!(clWaitForEvents(1, &ev));
    check!(clReleaseEvent(ev));
}

fn read(e: &Env, m: cl_mem, blocking: bool, offset: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let mut ev = null_mut();
    check!(clEnqueueReadBuffer(
        e.queue,
        m,
        blocking as cl_bool,
        offset,
        len,
        out.as_mut_ptr().cast(),
        0,
        null(),
        &mut ev
    ));
    check!(clWaitForEvents(1, &ev));
    check!(clReleaseEvent(ev));
    out
}

fn map(e: &Env, m: cl_mem, flags: cl_bitfield, offset: usize, len: usize) -> *mut u8 {
    let mut err = 0;
    let p = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            flags,
            offset,
            len,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "map: {}", err_name(err));
    p.cast()
}

fn unmap(e: &Env, m: cl_mem, p: *mut u8) {
    check!(clEnqueueUnmapMemObject(
        e.queue,
        m,
        p.cast(),
        0,
        null(),
        null_mut()
    ));
}

/// Every host transfer command on one buffer, checked against a model of its contents.
fn transfers_on(e: &Env, name: &str, flags: cl_bitfield, at: Option<usize>) {
    let n = 5003;
    let mut model = pattern(n, 1);
    let k = make(e, flags, at, &model);
    let m = k.mem;
    let check = |model: &[u8], what: &str| {
        assert_eq!(contents(e, m, n), model, "{name}: after {what}");
    };
    check(&model, "creation");

    // write / read, blocking and not, at odd offsets and sizes
    for (i, (blocking, offset, len)) in [(true, 3, 1001), (false, 1500, 7), (false, 0, n)]
        .into_iter()
        .enumerate()
    {
        let data = pattern(len, 50 + i as u8);
        write(e, m, blocking, offset, &data);
        model[offset..offset + len].copy_from_slice(&data);
        check(&model, "write");
    }
    for (blocking, offset, len) in [(true, 1, 4097), (false, 4999, 4), (false, 333, 1)] {
        assert_eq!(
            read(e, m, blocking, offset, len),
            model[offset..offset + len],
            "{name}: read {offset}+{len}"
        );
    }

    // copy from another buffer, and within the buffer
    let src = pattern(700, 90);
    let other = e.buffer(
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        700,
        src.as_ptr() as *mut _,
    );
    check!(clEnqueueCopyBuffer(
        e.queue,
        other,
        m,
        17,
        5,
        333,
        0,
        null(),
        null_mut()
    ));
    model[5..338].copy_from_slice(&src[17..350]);
    check!(clEnqueueCopyBuffer(
        e.queue,
        m,
        m,
        5,
        2001,
        333,
        0,
        null(),
        null_mut()
    ));
    model.copy_within(5..338, 2001);
    check(&model, "copy");
    check!(clReleaseMemObject(other));

    // fill, every pattern size, odd offsets in pattern units
    for (size, offset, len) in [
        (1, 7, 13),
        (2, 6, 10),
        (4, 12, 36),
        (8, 24, 8),
        (16, 48, 96),
    ] {
        let pat = pattern(size, 200 + size as u8);
        check!(clEnqueueFillBuffer(
            e.queue,
            m,
            pat.as_ptr().cast(),
            size,
            offset,
            len,
            0,
            null(),
            null_mut()
        ));
        for (j, b) in model[offset..offset + len].iter_mut().enumerate() {
            *b = pat[j % size];
        }
    }
    check(&model, "fill");

    // rect write / read / copy: 3 slices of 5 rows of 7 bytes, odd pitches
    let region = [7usize, 5, 3];
    let (brow, bslice) = (11usize, 66usize);
    let (hrow, hslice) = (9usize, 54usize);
    let host = pattern(hslice * 3 + 20, 120);
    let bo = [2usize, 1, 1];
    let ho = [1usize, 2, 0];
    check!(clEnqueueWriteBufferRect(
        e.queue,
        m,
        CL_TRUE,
        bo.as_ptr(),
        ho.as_ptr(),
        region.as_ptr(),
        brow,
        bslice,
        hrow,
        hslice,
        host.as_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let at = |o: [usize; 3], y: usize, z: usize, row: usize, slice: usize| {
        (o[2] + z) * slice + (o[1] + y) * row + o[0]
    };
    for z in 0..3 {
        for y in 0..5 {
            let b = at(bo, y, z, brow, bslice);
            let h = at(ho, y, z, hrow, hslice);
            model[b..b + 7].copy_from_slice(&host[h..h + 7]);
        }
    }
    check(&model, "write rect");
    let mut back = vec![0u8; hslice * 3 + 20];
    check!(clEnqueueReadBufferRect(
        e.queue,
        m,
        CL_FALSE,
        bo.as_ptr(),
        ho.as_ptr(),
        region.as_ptr(),
        brow,
        bslice,
        hrow,
        hslice,
        back.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    check!(clFinish(e.queue));
    for z in 0..3 {
        for y in 0..5 {
            let b = at(bo, y, z, brow, bslice);
            let h = at(ho, y, z, hrow, hslice);
            assert_eq!(back[h..h + 7], model[b..b + 7], "{name}: read rect");
        }
    }
    check!(clEnqueueCopyBufferRect(
        e.queue,
        m,
        m,
        bo.as_ptr(),
        [3000usize, 0, 0].as_ptr().cast(),
        region.as_ptr(),
        brow,
        bslice,
        brow, // the same buffer: one of the pitches must match
        brow * 7,
        0,
        null(),
        null_mut()
    ));
    for z in 0..3 {
        for y in 0..5 {
            let s = at(bo, y, z, brow, bslice);
            let d = at([3000, 0, 0], y, z, brow, brow * 7);
            let row = model[s..s + 7].to_vec();
            model[d..d + 7].copy_from_slice(&row);
        }
    }
    check(&model, "copy rect");

    // maps: read, write, write-invalidate, at odd offsets
    let p = map(e, m, CL_MAP_READ, 13, 100);
    assert_eq!(
        unsafe { std::slice::from_raw_parts(p, 100) },
        &model[13..113],
        "{name}: map read"
    );
    unmap(e, m, p);
    let p = map(e, m, CL_MAP_WRITE, 29, 50);
    assert_eq!(
        unsafe { std::slice::from_raw_parts(p, 50) },
        &model[29..79],
        "{name}: map write shows the contents"
    );
    for i in (0..50).step_by(3) {
        unsafe { *p.add(i) = 0xa5 };
        model[29 + i] = 0xa5;
    }
    unmap(e, m, p);
    check(&model, "map write");
    let p = map(e, m, CL_MAP_WRITE_INVALIDATE_REGION, 4001, 31);
    let fresh = pattern(31, 77);
    unsafe { std::ptr::copy_nonoverlapping(fresh.as_ptr(), p, 31) };
    model[4001..4032].copy_from_slice(&fresh);
    unmap(e, m, p);
    check(&model, "map write-invalidate");
    check!(clReleaseMemObject(m));
}

#[test]
fn every_transfer_command_on_every_kind_of_buffer() {
    let e = Env::new();
    for &(name, flags, at) in KINDS {
        transfers_on(&e, name, flags | CL_MEM_READ_WRITE, at);
    }
}

#[test]
fn non_blocking_transfers_complete_with_their_event() {
    let e = Env::new();
    let n = 3001;
    for &(name, flags, at) in KINDS {
        let k = make(&e, flags | CL_MEM_READ_WRITE, at, &pattern(n, 4));
        let mut err = 0;
        let gate = unsafe { clCreateUserEvent(e.ctx, &mut err) };
        assert_eq!(err, CL_SUCCESS);
        // A write held back by a user event (its memory is the application's until the event
        // completes), then a read behind it.
        let data = pattern(n - 2, 9);
        let mut wev = null_mut();
        check!(clEnqueueWriteBuffer(
            e.queue,
            k.mem,
            CL_FALSE,
            1,
            n - 2,
            data.as_ptr().cast(),
            1,
            &gate,
            &mut wev
        ));
        // The read's memory stays untouched until the write has run.
        let mut out = vec![0u8; n];
        let mut rev = null_mut();
        check!(clEnqueueReadBuffer(
            e.queue,
            k.mem,
            CL_FALSE,
            0,
            n,
            out.as_mut_ptr().cast(),
            0,
            null(),
            &mut rev
        ));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            out.iter().all(|&b| b == 0),
            "{name}: read ran before its write"
        );
        check!(clSetUserEventStatus(gate, CL_COMPLETE));
        check!(clWaitForEvents(1, &rev));
        assert_eq!(out[1..n - 1], data[..], "{name}");
        for ev in [gate, wev, rev] {
            check!(clReleaseEvent(ev));
        }
        check!(clReleaseMemObject(k.mem));
    }
}

const INC: &str = "kernel void inc(global uint *a) { a[get_global_id(0)] += 1; }";

fn launch(e: &Env, k: cl_kernel, m: cl_mem, n: usize) {
    arg(k, 0, &m);
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        1,
        null(),
        &n,
        null(),
        0,
        null(),
        null_mut()
    ));
}

fn words(p: *const u8, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| unsafe { std::ptr::read_unaligned(p.cast::<u32>().add(i)) })
        .collect()
}

#[test]
fn use_host_ptr_is_coherent_at_each_sync_point() {
    let e = Env::new();
    let prog = e.program(INC, "");
    let k = kernel(prog, "inc");
    let n = 1024; // words: 4096 bytes, a multiple of the usual import alignment
    for at in [0usize, 24] {
        let host = Aligned::new(n * 4 + 4096);
        let base = unsafe { host.ptr.add(at) };
        for i in 0..n {
            unsafe { base.cast::<u32>().add(i).write_unaligned(i as u32) };
        }
        let m = e.buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n * 4, base.cast());
        let what = format!("host pointer at offset {at}");
        // kernel, then map: the map returns host_ptr + offset holding the kernel's result
        launch(&e, k, m, n);
        let p = map(&e, m, CL_MAP_READ, 64, 256);
        assert_eq!(
            p,
            unsafe { base.add(64) },
            "{what}: map returns host_ptr + offset"
        );
        let want: Vec<u32> = (16..80).map(|i| i + 1).collect();
        assert_eq!(words(p, 64), want, "{what}: map after kernel");
        unmap(&e, m, p);
        // writes through a write map reach the kernel after unmap
        let p = map(&e, m, CL_MAP_WRITE, 0, n * 4);
        assert_eq!(p, base, "{what}");
        for i in 0..n {
            unsafe { p.cast::<u32>().add(i).write_unaligned(1000 + i as u32) };
        }
        unmap(&e, m, p);
        launch(&e, k, m, n);
        let want: Vec<u32> = (0..n as u32).map(|i| 1001 + i).collect();
        assert_eq!(
            e.read::<u32>(m, n),
            want,
            "{what}: read after unmap and kernel"
        );
        // write-invalidate map: host_ptr + offset, and the device sees what was written
        let p = map(&e, m, CL_MAP_WRITE_INVALIDATE_REGION, 8, 8);
        assert_eq!(p, unsafe { base.add(8) }, "{what}");
        unsafe { p.cast::<u32>().write_unaligned(7) };
        unsafe { p.cast::<u32>().add(1).write_unaligned(9) };
        unmap(&e, m, p);
        launch(&e, k, m, n);
        assert_eq!(read(&e, m, true, 8, 8), [8u8, 0, 0, 0, 10, 0, 0, 0]);
        // clEnqueueWriteBuffer, then a map: the map shows the written data
        write(&e, m, false, 12, &[1, 2, 3, 4]);
        let p = map(&e, m, CL_MAP_READ, 12, 4);
        assert_eq!(unsafe { std::slice::from_raw_parts(p, 4) }, [1, 2, 3, 4]);
        unmap(&e, m, p);
        check!(clFinish(e.queue));
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(prog));
}

#[test]
fn alloc_host_ptr_maps_are_shared_with_kernels() {
    let e = Env::new();
    let prog = e.program(INC, "");
    let k = kernel(prog, "inc");
    let n = 777;
    let m = e.buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n * 4, null_mut());
    assert_eq!(mem_val::<usize>(m, CL_MEM_HOST_PTR), 0);
    let p = map(&e, m, CL_MAP_WRITE_INVALIDATE_REGION, 0, n * 4);
    for i in 0..n {
        unsafe { p.cast::<u32>().add(i).write_unaligned(3 * i as u32) };
    }
    unmap(&e, m, p);
    launch(&e, k, m, n);
    let p = map(&e, m, CL_MAP_READ | CL_MAP_WRITE, 0, n * 4);
    let want: Vec<u32> = (0..n as u32).map(|i| 3 * i + 1).collect();
    assert_eq!(words(p, n), want);
    // A second map of the same region while the first is outstanding.
    let q = map(&e, m, CL_MAP_READ, 4, 8);
    assert_eq!(words(q, 2), [4, 7]);
    unsafe { p.cast::<u32>().write_unaligned(42) };
    unmap(&e, m, q);
    unmap(&e, m, p);
    assert_eq!(e.read::<u32>(m, 1), [42]);
    check!(clReleaseMemObject(m));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(prog));
}

#[test]
fn several_maps_outstanding() {
    let e = Env::new();
    let n = 1000;
    let mut model = pattern(n, 11);
    let m = e.buffer(
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        n,
        model.as_mut_ptr().cast(),
    );
    let r1 = map(&e, m, CL_MAP_READ, 0, 100);
    let w1 = map(&e, m, CL_MAP_WRITE, 200, 100);
    let r2 = map(&e, m, CL_MAP_READ, 50, 100);
    let w2 = map(&e, m, CL_MAP_WRITE_INVALIDATE_REGION, 401, 99);
    let r3 = map(&e, m, CL_MAP_READ, 0, 100);
    assert_eq!(mem_val::<cl_uint>(m, CL_MEM_MAP_COUNT), 5);
    let slice = |p: *mut u8, len| unsafe { std::slice::from_raw_parts(p, len) };
    assert_eq!(slice(r1, 100), &model[..100]);
    assert_eq!(slice(r2, 100), &model[50..150]);
    assert_eq!(slice(r3, 100), &model[..100]);
    assert_eq!(slice(w1, 100), &model[200..300]);
    unsafe { std::ptr::write_bytes(w1.add(10), 0x11, 20) };
    model[210..230].fill(0x11);
    unsafe { std::ptr::write_bytes(w2, 0x22, 99) };
    model[401..500].fill(0x22);
    // Unmapped in another order than mapped.
    for p in [r2, w2, r1, w1, r3] {
        unmap(&e, m, p);
    }
    check!(clFinish(e.queue));
    assert_eq!(mem_val::<cl_uint>(m, CL_MEM_MAP_COUNT), 0);
    assert_eq!(e.read::<u8>(m, n), model);
    check_err!(
        clEnqueueUnmapMemObject(e.queue, m, r1.cast(), 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check!(clReleaseMemObject(m));
}

#[test]
fn transfers_larger_than_the_staging_chunk() {
    let e = Env::new();
    let max: cl_ulong = device_val(e.dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    // Above the 16 MiB chunk and the 64 MiB the staging pool keeps, where the device allows.
    let n = (100usize << 20).min(max as usize & !4095);
    let data = pattern(n, 5);
    let m = e.buffer(CL_MEM_READ_WRITE, n, null_mut());
    write(&e, m, false, 3, &data[3..]);
    write(&e, m, true, 0, &data[..3]);
    assert!(read(&e, m, false, 0, n) == data, "whole-buffer read");
    // A rect whose rows straddle chunk boundaries: 3 slices of 1500 rows of 9999 bytes.
    let region = [9999usize, 1500, 3];
    let (row, slice) = (10007usize, 10007 * 1501);
    assert!(slice * 3 <= n);
    let mut back = vec![0u8; region.iter().product()];
    check!(clEnqueueReadBufferRect(
        e.queue,
        m,
        CL_TRUE,
        [5usize, 0, 0].as_ptr(),
        [0usize, 0, 0].as_ptr(),
        region.as_ptr(),
        row,
        slice,
        0,
        0,
        back.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    for z in 0..3 {
        for y in 0..1500 {
            let b = z * slice + y * row + 5;
            let h = (z * 1500 + y) * 9999;
            assert!(
                back[h..h + 9999] == data[b..b + 9999],
                "rect row {y} of slice {z}"
            );
        }
    }
    // A map of the whole buffer.
    let p = map(&e, m, CL_MAP_READ, 0, n);
    assert!(unsafe { std::slice::from_raw_parts(p, n) } == data, "map");
    unmap(&e, m, p);
    check!(clFinish(e.queue));
    check!(clReleaseMemObject(m));
}

#[test]
fn transfers_of_a_few_mib_arrive_whole() {
    // Staged transfers of 1 to 16 MiB go in four chunks (at least 512 KiB each) whose copies
    // overlap: sizes around the chunk boundaries, odd offsets, blocking and not.
    let e = Env::new();
    let n = 9 << 20;
    let data = pattern(n, 11);
    let m = e.buffer(CL_MEM_READ_WRITE, n, null_mut());
    write(&e, m, true, 0, &data);
    for (offset, len) in [
        (7, (1 << 20) + 5),
        (0, 2 << 20),
        (3, (3 << 20) + 1),
        (1, n - 1),
    ] {
        for blocking in [true, false] {
            let got = read(&e, m, blocking, offset, len);
            assert!(got == data[offset..offset + len], "read {len} at {offset}");
        }
    }
    let other = pattern(n, 12);
    write(&e, m, false, 5, &other[5..(5 << 20) + 9]);
    let got = read(&e, m, true, 0, n);
    assert!(got[..5] == data[..5], "before the write");
    assert!(
        got[5..(5 << 20) + 9] == other[5..(5 << 20) + 9],
        "the write"
    );
    assert!(
        got[(5 << 20) + 9..] == data[(5 << 20) + 9..],
        "after the write"
    );
    check!(clReleaseMemObject(m));
}

#[test]
fn small_reads_and_write_maps_at_every_alignment() {
    // With VKCL_PLACEMENT=mapped (or on a GPU whose memory the host maps), reads up to 8 KiB
    // are streaming loads of 32-byte blocks and write-only maps return the buffer's memory:
    // ranges starting and ending inside blocks, after a kernel wrote the buffer.
    let e = Env::new();
    let n = 64 << 10;
    let data = pattern(n, 21);
    let m = e.buffer(CL_MEM_READ_WRITE, n, null_mut());
    write(&e, m, true, 0, &data);
    let p = e.program(
        "kernel void flip(global uchar* b) { b[get_global_id(0)] ^= 0x5a; }",
        "",
    );
    let k = kernel(p, "flip");
    arg(k, 0, &m);
    e.run(k, None, &[n], None);
    let mut model: Vec<u8> = data.iter().map(|b| b ^ 0x5a).collect();
    for (offset, len) in [
        (0, 1),
        (1, 31),
        (31, 2),
        (32, 32),
        (33, 95),
        (100, 4096),
        (5, 8191),
        (64, 8192),
    ] {
        for blocking in [true, false] {
            let got = read(&e, m, blocking, offset, len);
            assert!(got == model[offset..offset + len], "read {len} at {offset}");
        }
        let w = map(&e, m, CL_MAP_WRITE_INVALIDATE_REGION, offset + 1000, len);
        let new = pattern(len, (offset % 251) as u8);
        // SAFETY: the map holds len bytes.
        unsafe { std::ptr::copy_nonoverlapping(new.as_ptr(), w, len) };
        unmap(&e, m, w);
        model[offset + 1000..offset + 1000 + len].copy_from_slice(&new);
        let r = map(&e, m, CL_MAP_READ, offset + 999, len + 2);
        // SAFETY: the map holds len + 2 bytes.
        let got = unsafe { std::slice::from_raw_parts(r, len + 2) }.to_vec();
        unmap(&e, m, r);
        assert!(
            got == model[offset + 999..offset + 1001 + len],
            "map {len} at {offset}"
        );
    }
    e.run(k, None, &[n], None);
    for b in &mut model {
        *b ^= 0x5a;
    }
    assert!(contents(&e, m, n) == model, "after a kernel");
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseMemObject(m));
}

#[test]
fn the_largest_buffer_works_and_larger_is_rejected() {
    let e = Env::new();
    let max: cl_ulong = device_val(e.dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    let global: cl_ulong = device_val(e.dev, CL_DEVICE_GLOBAL_MEM_SIZE);
    assert!(max <= global);
    // The full profile's minimum.
    assert!(
        max >= (global / 4).min(1 << 30),
        "max {max}, global {global}"
    );
    let mut err = 0;
    let m = unsafe { clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, max as usize, null_mut(), &mut err) };
    match err {
        CL_SUCCESS => {
            let tail = pattern(4096, 8);
            let last = max as usize - tail.len();
            write(&e, m, true, last, &tail);
            write(&e, m, false, 0, &tail[..7]);
            assert_eq!(read(&e, m, true, last, tail.len()), tail);
            assert_eq!(read(&e, m, false, 0, 7), tail[..7]);
            check!(clReleaseMemObject(m));
        }
        CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_RESOURCES => assert!(m.is_null()),
        _ => panic!(
            "a buffer of CL_DEVICE_MAX_MEM_ALLOC_SIZE: {}",
            err_name(err)
        ),
    }
    let m = unsafe {
        clCreateBuffer(
            e.ctx,
            CL_MEM_READ_WRITE,
            max as usize + 1,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_INVALID_BUFFER_SIZE);
    assert!(m.is_null());
    let m = unsafe { clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, usize::MAX, null_mut(), &mut err) };
    assert_eq!(err, CL_INVALID_BUFFER_SIZE);
    assert!(m.is_null());
}

#[test]
fn sub_buffers_of_every_kind_of_buffer() {
    let e = Env::new();
    let align: cl_uint = device_val(e.dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
    let origin = (align / 8) as usize;
    let n = origin * 3;
    for &(name, flags, at) in KINDS {
        let mut model = pattern(n, 2);
        let k = make(&e, flags | CL_MEM_READ_WRITE, at, &model);
        let region = [origin, origin];
        let mut err = 0;
        let sub = unsafe {
            clCreateSubBuffer(
                k.mem,
                CL_MEM_READ_WRITE,
                0x1220, /* CL_BUFFER_CREATE_TYPE_REGION */
                region.as_ptr().cast::<c_void>(),
                &mut err,
            )
        };
        assert_eq!(err, CL_SUCCESS, "{name}: {}", err_name(err));
        let data = pattern(origin - 2, 66);
        write(&e, sub, false, 1, &data);
        model[origin + 1..2 * origin - 1].copy_from_slice(&data);
        assert_eq!(
            read(&e, sub, true, 0, origin),
            model[origin..2 * origin],
            "{name}"
        );
        let p = map(&e, sub, CL_MAP_WRITE, 3, 5);
        if at == Some(24) && flags & CL_MEM_USE_HOST_PTR != 0 {
            let host: usize = mem_val(k.mem, CL_MEM_HOST_PTR);
            assert_eq!(
                p as usize,
                host + origin + 3,
                "{name}: sub-buffer map address"
            );
        }
        unsafe { std::ptr::write_bytes(p, 0xee, 5) };
        model[origin + 3..origin + 8].fill(0xee);
        unmap(&e, sub, p);
        assert_eq!(
            contents(&e, k.mem, n),
            model,
            "{name}: parent after sub-buffer map"
        );
        check!(clReleaseMemObject(sub));
        check!(clReleaseMemObject(k.mem));
    }
}

#[test]
fn large_copies_between_buffers() {
    // Device-local buffers copy large aligned ranges with an internal kernel (VKCL_PLACEMENT=
    // device runs it on lavapipe), other ranges with vkCmdCopyBuffer: both give the same bytes.
    let e = Env::new();
    let n = 24 << 20;
    let data = pattern(n, 12);
    let a = e.buffer(
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        n,
        data.as_ptr() as *mut _,
    );
    let b = e.buffer(CL_MEM_READ_WRITE, n, null_mut());
    let mut model = vec![0u8; n];
    check!(clEnqueueFillBuffer(
        e.queue,
        b,
        [0u8].as_ptr().cast(),
        1,
        0,
        n,
        0,
        null(),
        null_mut()
    ));
    // (src offset, dst offset, size): aligned and large; unaligned; large but not a multiple
    // of 1 KiB; within one buffer.
    for (so, d, size) in [
        (0, 1 << 20, 8 << 20),
        (4099, 10 << 20, 3 << 20),
        (256, 16 << 20, (1 << 20) + 16),
    ] {
        let mut ev = null_mut();
        check!(clEnqueueCopyBuffer(
            e.queue,
            a,
            b,
            so,
            d,
            size,
            0,
            null(),
            &mut ev
        ));
        assert_eq!(
            event_val::<cl_uint>(ev, CL_EVENT_COMMAND_TYPE),
            CL_COMMAND_COPY_BUFFER
        );
        check!(clReleaseEvent(ev));
        model[d..d + size].copy_from_slice(&data[so..so + size]);
    }
    assert!(e.read::<u8>(b, n) == model, "copies between buffers");
    check!(clEnqueueCopyBuffer(
        e.queue,
        b,
        b,
        1 << 20,
        18 << 20,
        4 << 20,
        0,
        null(),
        null_mut()
    ));
    model.copy_within(1 << 20..5 << 20, 18 << 20);
    assert!(e.read::<u8>(b, n) == model, "copy within a buffer");
    check!(clReleaseMemObject(a));
    check!(clReleaseMemObject(b));
}

/// "If blocking_write is CL_TRUE ... the memory pointed to by ptr can be reused by the
/// application after the call returns": the source is overwritten at once, behind a kernel
/// that keeps the queue busy, and the buffer still gets what was written (on every kind of
/// buffer, so through staging memory too).
#[test]
fn a_blocking_write_source_is_reusable_at_once() {
    let e = Env::new();
    let prog = e.program(
        "kernel void spin(global uint *p) { uint x = p[0]; for (int i = 0; i < 100000; i++) x = x * 1664525u + 1013904223u; p[1] = x; }",
        "",
    );
    let k = kernel(prog, "spin");
    let scratch = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    arg(k, 0, &scratch);
    for flags in [CL_MEM_READ_WRITE, CL_MEM_ALLOC_HOST_PTR] {
        let n = 1 << 16;
        let m = e.buffer(flags, n, null_mut());
        for round in 0..4u8 {
            check!(clEnqueueTask(e.queue, k, 0, null(), null_mut()));
            let mut data = pattern(n, round);
            let want = data.clone();
            check!(clEnqueueWriteBuffer(
                e.queue,
                m,
                CL_TRUE,
                0,
                n,
                data.as_ptr().cast(),
                0,
                null(),
                null_mut()
            ));
            data.fill(0xee);
            assert_eq!(
                read(&e, m, true, 0, n),
                want,
                "flags {flags:#x} round {round}"
            );
        }
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(prog));
}
