//! Shared virtual memory (issue 18): SVM allocations, the SVM commands, SVM pointers as kernel
//! arguments (at offsets too), pointers stored in SVM memory followed on both sides, buffers on
//! SVM pointers, and the error codes the spec lists. Every result is compared with a reference
//! computed here on the host.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
const CL_DEVICE_SVM_ATOMICS: cl_bitfield = 1 << 3;
const COARSE: cl_bitfield = 1;
const FINE: cl_bitfield = 2;
const CL_MEM_SVM_FINE_GRAIN_BUFFER: cl_bitfield = 1 << 10;
const CL_MEM_SVM_ATOMICS: cl_bitfield = 1 << 11;
const CL_MEM_USES_SVM_POINTER: cl_uint = 0x1109;
const CL_KERNEL_EXEC_INFO_SVM_PTRS: cl_uint = 0x11B6;
const CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM: cl_uint = 0x11B7;
const CL_INVALID_OPERATION: cl_int = -59;
const CL_INVALID_ARG_VALUE: cl_int = -50;
const CL_INVALID_ARG_INDEX: cl_int = -49;

type FreeFn = unsafe extern "C" fn(cl_command_queue, cl_uint, *mut *mut c_void, *mut c_void);

extern "C" {
    fn clSVMAlloc(c: cl_context, flags: cl_bitfield, size: usize, align: cl_uint) -> *mut c_void;
    fn clSVMFree(c: cl_context, p: *mut c_void);
    fn clEnqueueSVMFree(
        q: cl_command_queue,
        n: cl_uint,
        p: *mut *mut c_void,
        f: Option<FreeFn>,
        ud: *mut c_void,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueSVMMemcpy(
        q: cl_command_queue,
        b: cl_bool,
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueSVMMemFill(
        q: cl_command_queue,
        p: *mut c_void,
        pat: *const c_void,
        psz: usize,
        size: usize,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueSVMMap(
        q: cl_command_queue,
        b: cl_bool,
        flags: cl_bitfield,
        p: *mut c_void,
        size: usize,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueSVMUnmap(
        q: cl_command_queue,
        p: *mut c_void,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueSVMMigrateMem(
        q: cl_command_queue,
        n: cl_uint,
        p: *const *const c_void,
        sizes: *const usize,
        flags: cl_bitfield,
        nw: cl_uint,
        wl: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clSetKernelArgSVMPointer(k: cl_kernel, i: cl_uint, p: *const c_void) -> cl_int;
    fn clSetKernelExecInfo(k: cl_kernel, name: cl_uint, size: usize, v: *const c_void) -> cl_int;
}

fn alloc<T>(e: &Env, flags: cl_bitfield, n: usize) -> *mut T {
    let p = unsafe { clSVMAlloc(e.ctx, flags, n * std::mem::size_of::<T>(), 0) };
    assert!(!p.is_null(), "clSVMAlloc returned NULL");
    p.cast()
}

/// The `n` values at a coarse-grained allocation, read on the host between a map for reading
/// and its unmap (the spec's rule for host access to coarse-grained SVM).
fn mapped<T: Copy>(e: &Env, p: *const T, n: usize) -> Vec<T> {
    let bytes = n * std::mem::size_of::<T>();
    let at = p.cast_mut().cast();
    check!(clEnqueueSVMMap(
        e.queue,
        CL_TRUE,
        CL_MAP_READ,
        at,
        bytes,
        0,
        null(),
        null_mut()
    ));
    let got = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
    check!(clEnqueueSVMUnmap(e.queue, at, 0, null(), null_mut()));
    check!(clFinish(e.queue));
    got
}

fn svm_arg<T>(k: cl_kernel, i: u32, p: *const T) {
    check!(clSetKernelArgSVMPointer(k, i, p.cast()));
}

/// Whether the device reports buffer SVM. Where it reports none (the probe found imported host
/// memory at another device address, as on NVIDIA), clSVMAlloc must return NULL ("if ... no
/// devices in context support SVM"), which this checks.
fn has_svm(e: &Env) -> bool {
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
    if caps != 0 {
        return true;
    }
    assert!(unsafe { clSVMAlloc(e.ctx, CL_MEM_READ_WRITE, 64, 0) }.is_null());
    eprintln!("no SVM on this device: clSVMAlloc returns NULL, as the spec says");
    false
}

#[test]
fn device_reports_buffer_svm() {
    let e = Env::new();
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
    // lavapipe: imported host memory has its host address as device address (probed), and
    // its atomics are the host's own, seq_cst (so SVM atomics, with all-devices scope).
    if device_str(e.dev, CL_DEVICE_NAME).contains("llvmpipe") {
        assert_eq!(
            caps,
            COARSE | FINE | CL_DEVICE_SVM_ATOMICS,
            "CL_DEVICE_SVM_CAPABILITIES"
        );
    } else {
        assert!(
            caps == 0 || caps & COARSE != 0,
            "CL_DEVICE_SVM_CAPABILITIES {caps:#x}"
        );
    }
}

const SCALE: &str = r#"
kernel void scale(global int *a, global int *b, int f) {
    size_t i = get_global_id(0);
    b[i] = a[i] * f;
}
"#;

#[test]
fn coarse_grain_kernel_arguments_at_offsets() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let n = 1024;
    let a: *mut i32 = alloc(&e, CL_MEM_READ_WRITE, n);
    let b: *mut i32 = alloc(&e, CL_MEM_READ_WRITE, n);
    check!(clEnqueueSVMMap(
        e.queue,
        CL_TRUE,
        CL_MAP_WRITE,
        a.cast(),
        n * 4,
        0,
        null(),
        null_mut()
    ));
    for i in 0..n {
        unsafe { *a.add(i) = i as i32 * 3 - 7 };
    }
    check!(clEnqueueSVMUnmap(e.queue, a.cast(), 0, null(), null_mut()));
    let zero = 0i32;
    check!(clEnqueueSVMMemFill(
        e.queue,
        b.cast(),
        (&zero as *const i32).cast(),
        4,
        n * 4,
        0,
        null(),
        null_mut()
    ));
    let p = e.program(SCALE, "");
    let k = kernel(p, "scale");
    // Pointers inside the allocations, not at their start (and not 16-byte aligned).
    let (off_a, off_b) = (5, 3);
    svm_arg(k, 0, unsafe { a.add(off_a) });
    svm_arg(k, 1, unsafe { b.add(off_b) });
    arg(k, 2, &5i32);
    let m = n - 8;
    e.run(k, None, &[m], None);
    check!(clFinish(e.queue));
    check!(clEnqueueSVMMap(
        e.queue,
        CL_TRUE,
        CL_MAP_READ,
        b.cast(),
        n * 4,
        0,
        null(),
        null_mut()
    ));
    let got: Vec<i32> = (0..n).map(|i| unsafe { *b.add(i) }).collect();
    let want: Vec<i32> = (0..n)
        .map(|i| {
            if i >= off_b && i < off_b + m {
                ((i - off_b + off_a) as i32 * 3 - 7) * 5
            } else {
                0
            }
        })
        .collect();
    assert_eq!(got, want);
    check!(clEnqueueSVMUnmap(e.queue, b.cast(), 0, null(), null_mut()));
    // The same kernel with cl_mem arguments still works (the logical build).
    let x = e.buffer_from(&[1i32, 2, 3, 4]);
    let y = e.buffer_from(&[0i32; 4]);
    arg(k, 0, &x);
    arg(k, 1, &y);
    e.run(k, None, &[4], None);
    assert_eq!(e.read::<i32>(y, 4), vec![5, 10, 15, 20]);
    // A cl_mem and an SVM pointer in one launch.
    svm_arg(k, 1, b);
    e.run(k, None, &[4], None);
    assert_eq!(mapped(&e, b, 4), [5, 10, 15, 20]);
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    unsafe { clSVMFree(e.ctx, a.cast()) };
    unsafe { clSVMFree(e.ctx, b.cast()) };
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Node {
    value: i32,
    _pad: i32,
    next: *mut Node,
}

const LIST: &str = r#"
// The next pointer as an address: this clspv refuses recursive structures even in physical
// addressing mode ("recursive structures are not supported").
typedef struct node { int value; int pad; ulong next; } node;
// Sums the list from head (built on the host).
kernel void sum(global node *head, global long *out) {
    long s = 0;
    for (global node *p = head; p != 0; p = (global node *)p->next) s += p->value;
    *out = s;
}
// Links nodes[0..n) into a list in reverse order, values i * i (followed on the host): with
// `&nodes[i - 1]`, a negative constant index (compiler::physical repairs clspv's).
kernel void link(global node *nodes, int n, global ulong *head) {
    for (int i = 0; i < n; i++) {
        nodes[i].value = i * i;
        nodes[i].next = i == 0 ? 0 : (ulong)&nodes[i - 1];
    }
    *head = (ulong)&nodes[n - 1];
}
"#;

#[test]
fn linked_lists_cross_host_and_device() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let n = 100;
    let nodes: *mut Node = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, n);
    // Host → device: a list built on the host, in a shuffled order.
    let mut sum = 0i64;
    for i in 0..n {
        let next = if i + 1 < n {
            unsafe { nodes.add((i * 37 + 37) % n) }
        } else {
            null_mut()
        };
        let at = (i * 37) % n;
        unsafe {
            *nodes.add(at) = Node {
                value: i as i32 + 1,
                _pad: 0,
                next,
            }
        };
        sum += i as i64 + 1;
    }
    let out: *mut i64 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    let p = e.program(LIST, "");
    let k = kernel(p, "sum");
    svm_arg(k, 0, nodes);
    svm_arg(k, 1, out);
    e.run(k, None, &[1], None);
    check!(clFinish(e.queue));
    assert_eq!(unsafe { *out }, sum, "sum of the host's list in a kernel");
    // Device → host: a list linked by a kernel, followed on the host.
    let head: *mut *mut Node = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    let k2 = kernel(p, "link");
    svm_arg(k2, 0, nodes);
    arg(k2, 1, &(n as i32));
    svm_arg(k2, 2, head);
    e.run(k2, None, &[1], None);
    check!(clFinish(e.queue));
    let mut values = vec![];
    let mut at = unsafe { *head };
    let end = unsafe { nodes.add(n) };
    assert_eq!(at, unsafe { nodes.add(n - 1) }, "head");
    while !at.is_null() {
        assert!(
            at >= nodes && at < end,
            "a pointer into the nodes: {at:?} (nodes at {nodes:?})"
        );
        values.push(unsafe { (*at).value });
        at = unsafe { (*at).next };
    }
    let want: Vec<i32> = (0..n as i32).rev().map(|i| i * i).collect();
    assert_eq!(values, want, "the kernel's list followed on the host");
    for k in [k, k2] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    for q in [nodes.cast::<c_void>(), out.cast(), head.cast()] {
        unsafe { clSVMFree(e.ctx, q) };
    }
}

#[test]
fn memcpy_and_fill_every_pattern_size() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let n = 4096;
    let a: *mut u8 = alloc(&e, 0, n);
    let b: *mut u8 = alloc(&e, 0, n);
    for psz in [1usize, 2, 4, 8, 16, 32, 64, 128] {
        let pattern: Vec<u8> = (0..psz as u8)
            .map(|i| i.wrapping_mul(31).wrapping_add(psz as u8))
            .collect();
        let (off, size) = (psz * 3, psz * 20);
        check!(clEnqueueSVMMemFill(
            e.queue,
            a.cast(),
            [0u8; 1].as_ptr().cast(),
            1,
            n,
            0,
            null(),
            null_mut()
        ));
        check!(clEnqueueSVMMemFill(
            e.queue,
            unsafe { a.add(off) }.cast(),
            pattern.as_ptr().cast(),
            psz,
            size,
            0,
            null(),
            null_mut()
        ));
        for (i, &g) in mapped(&e, a, n).iter().enumerate() {
            let want = if i >= off && i < off + size {
                pattern[(i - off) % psz]
            } else {
                0
            };
            assert_eq!(g, want, "pattern size {psz}, byte {i}");
        }
    }
    // SVM → SVM at offsets, host → SVM, SVM → host.
    let host: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
    check!(clEnqueueSVMMemcpy(
        e.queue,
        CL_TRUE,
        a.cast(),
        host.as_ptr().cast(),
        n,
        0,
        null(),
        null_mut()
    ));
    check!(clEnqueueSVMMemcpy(
        e.queue,
        CL_FALSE,
        unsafe { b.add(1) }.cast(),
        unsafe { a.add(10) }.cast(),
        1000,
        0,
        null(),
        null_mut()
    ));
    let mut back = vec![0u8; 1000];
    check!(clEnqueueSVMMemcpy(
        e.queue,
        CL_TRUE,
        back.as_mut_ptr().cast(),
        unsafe { b.add(1) }.cast(),
        1000,
        0,
        null(),
        null_mut()
    ));
    assert_eq!(back, host[10..1010]);
    // Errors.
    check_err!(
        clEnqueueSVMMemcpy(
            e.queue,
            CL_TRUE,
            a.cast(),
            unsafe { a.add(10) }.cast(),
            100,
            0,
            null(),
            null_mut()
        ),
        CL_MEM_COPY_OVERLAP
    );
    check_err!(
        clEnqueueSVMMemcpy(
            e.queue,
            CL_TRUE,
            null_mut(),
            a.cast(),
            1,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    let pat = [0u8; 8];
    check_err!(
        clEnqueueSVMMemFill(
            e.queue,
            unsafe { a.add(4) }.cast(),
            pat.as_ptr().cast(),
            8,
            64,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueSVMMemFill(
            e.queue,
            a.cast(),
            pat.as_ptr().cast(),
            3,
            9,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueSVMMemFill(
            e.queue,
            a.cast(),
            pat.as_ptr().cast(),
            8,
            12,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueSVMMap(
            e.queue,
            CL_TRUE,
            CL_MAP_READ,
            a.cast(),
            0,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueSVMMap(
            e.queue,
            CL_TRUE,
            CL_MAP_READ | (1 << 2),
            a.cast(),
            4,
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clEnqueueSVMMigrateMem(e.queue, 0, null(), null(), 0, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    let list = [a as *const c_void];
    check_err!(
        clEnqueueSVMMigrateMem(e.queue, 1, list.as_ptr(), null(), 4, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    check!(clEnqueueSVMMigrateMem(
        e.queue,
        1,
        list.as_ptr(),
        null(),
        1,
        0,
        null(),
        null_mut()
    ));
    check!(clFinish(e.queue));
    unsafe { clSVMFree(e.ctx, a.cast()) };
    unsafe { clSVMFree(e.ctx, b.cast()) };
}

#[test]
fn alloc_errors_return_null() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let bad = |flags: cl_bitfield, size: usize, align: cl_uint| {
        unsafe { clSVMAlloc(e.ctx, flags, size, align) }.is_null()
    };
    assert!(bad(0, 0, 0), "size 0");
    assert!(
        bad(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, 0),
        "two access flags"
    );
    assert!(bad(CL_MEM_SVM_ATOMICS, 64, 0), "atomics without fine grain");
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
    let atomics = CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
    if caps & CL_DEVICE_SVM_ATOMICS == 0 {
        assert!(bad(atomics, 64, 0), "atomics are not reported");
    } else {
        let p = unsafe { clSVMAlloc(e.ctx, atomics, 64, 0) };
        assert!(!p.is_null(), "SVM atomics are reported");
        unsafe { clSVMFree(e.ctx, p) };
    }
    assert!(bad(0, 64, 3), "alignment not a power of two");
    assert!(bad(1 << 20, 64, 0), "unknown flag");
    let max: u64 = device_val(e.dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    assert!(
        bad(0, max as usize + 1, 0),
        "above CL_DEVICE_MAX_MEM_ALLOC_SIZE"
    );
    assert!(
        unsafe { clSVMAlloc(null_mut(), 0, 64, 0) }.is_null(),
        "no context"
    );
    let p = unsafe { clSVMAlloc(e.ctx, 0, 64, 256) };
    assert!(!p.is_null() && p as usize % 256 == 0, "aligned to 256");
    unsafe { clSVMFree(e.ctx, p) };
    unsafe { clSVMFree(e.ctx, null_mut()) };
}

static FREED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" fn on_free(
    _q: cl_command_queue,
    n: cl_uint,
    p: *mut *mut c_void,
    ud: *mut c_void,
) {
    let list = unsafe { std::slice::from_raw_parts(p, n as usize) };
    FREED
        .lock()
        .unwrap()
        .extend(list.iter().map(|&x| x as usize));
    for &x in list {
        unsafe { clSVMFree(ud as cl_context, x) };
    }
}

const SLOW: &str = r#"
kernel void slow(global int *a, int n) {
    size_t i = get_global_id(0);
    int x = a[i];
    for (int k = 0; k < n; k++) x = x * 1103515245 + 12345;
    a[i] = x;
}
"#;

#[test]
fn enqueue_free_with_callback_while_a_kernel_runs() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let n = 1 << 16;
    let a: *mut i32 = alloc(&e, 0, n);
    let host: Vec<i32> = (0..n as i32).collect();
    check!(clEnqueueSVMMemcpy(
        e.queue,
        CL_TRUE,
        a.cast(),
        host.as_ptr().cast(),
        n * 4,
        0,
        null(),
        null_mut()
    ));
    let p = e.program(SLOW, "");
    let k = kernel(p, "slow");
    svm_arg(k, 0, a);
    arg(k, 1, &2000i32);
    let mut kev: cl_event = null_mut();
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        1,
        null(),
        [n].as_ptr(),
        null(),
        0,
        null(),
        &mut kev
    ));
    let result: *mut i32 = alloc(&e, 0, n);
    check!(clEnqueueSVMMemcpy(
        e.queue,
        CL_FALSE,
        result.cast(),
        a.cast(),
        n * 4,
        0,
        null(),
        null_mut()
    ));
    let mut list = [a.cast::<c_void>()];
    let mut fev: cl_event = null_mut();
    check!(clEnqueueSVMFree(
        e.queue,
        1,
        list.as_mut_ptr(),
        Some(on_free),
        e.ctx,
        0,
        null(),
        &mut fev
    ));
    check!(clWaitForEvents(1, &fev));
    assert!(
        FREED.lock().unwrap().contains(&(a as usize)),
        "the callback ran"
    );
    let mut status: cl_int = 1;
    check!(clGetEventInfo(
        kev,
        CL_EVENT_COMMAND_EXECUTION_STATUS,
        4,
        (&mut status as *mut cl_int).cast(),
        null_mut()
    ));
    assert_eq!(status, CL_COMPLETE, "the kernel completed before the free");
    let want: Vec<i32> = host
        .iter()
        .map(|&v| (0..2000).fold(v, |x, _| x.wrapping_mul(1103515245).wrapping_add(12345)))
        .collect();
    assert_eq!(mapped(&e, result, n), want);
    // Without a callback vkcl frees the pointers.
    let mut list = [result.cast::<c_void>()];
    check!(clEnqueueSVMFree(
        e.queue,
        1,
        list.as_mut_ptr(),
        None,
        null_mut(),
        0,
        null(),
        null_mut()
    ));
    check!(clFinish(e.queue));
    check_err!(
        clEnqueueSVMFree(
            e.queue,
            1,
            null_mut(),
            None,
            null_mut(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    for ev in [kev, fev] {
        check!(clReleaseEvent(ev));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn buffer_on_an_svm_pointer_shares_its_memory() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    // Fine-grained and coarse-grained allocations (the latter device memory with a host
    // copy on discrete GPUs: host accesses between maps).
    for flags in [CL_MEM_SVM_FINE_GRAIN_BUFFER, CL_MEM_READ_WRITE] {
        buffer_on_svm(&e, flags);
    }
}

fn buffer_on_svm(e: &Env, flags: cl_bitfield) {
    let n = 256;
    let a: *mut i32 = alloc(e, flags, n);
    let bytes = n * 4;
    check!(clEnqueueSVMMap(
        e.queue,
        CL_TRUE,
        CL_MAP_WRITE,
        a.cast(),
        bytes,
        0,
        null(),
        null_mut()
    ));
    for i in 0..n {
        unsafe { *a.add(i) = i as i32 };
    }
    check!(clEnqueueSVMUnmap(e.queue, a.cast(), 0, null(), null_mut()));
    // At an offset of 12 bytes into the allocation.
    let mut err = 0;
    let m = unsafe {
        clCreateBuffer(
            e.ctx,
            CL_MEM_USE_HOST_PTR,
            100 * 4,
            a.add(3).cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let uses: cl_bool = mem_val(m, CL_MEM_USES_SVM_POINTER);
    assert_eq!(uses, CL_TRUE, "CL_MEM_USES_SVM_POINTER");
    let plain = e.buffer_from(&[0i32; 4]);
    let not: cl_bool = mem_val(plain, CL_MEM_USES_SVM_POINTER);
    assert_eq!(not, CL_FALSE);
    let p = e.program(SCALE, "");
    let k = kernel(p, "scale");
    arg(k, 0, &m);
    arg(k, 1, &m);
    arg(k, 2, &2i32);
    e.run(k, None, &[100], None);
    let want: Vec<i32> = (0..n as i32)
        .map(|i| if (3..103).contains(&i) { i * 2 } else { i })
        .collect();
    assert_eq!(
        mapped(e, a, n),
        want,
        "flags {flags:#x}: the kernel's writes through the cl_mem are in the SVM memory"
    );
    assert_eq!(e.read::<i32>(m, 2), vec![6, 8]);
    // A map of the buffer is the SVM memory at the buffer's offset ("host_ptr + offset").
    let at = unsafe {
        clEnqueueMapBuffer(
            e.queue,
            m,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE,
            8,
            8,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(
        at,
        unsafe { a.add(5) }.cast(),
        "flags {flags:#x}: the map's address"
    );
    assert_eq!(
        unsafe { std::slice::from_raw_parts(at as *const i32, 2) },
        [10, 12]
    );
    unsafe { *(at as *mut i32) = -1 };
    check!(clEnqueueUnmapMemObject(
        e.queue,
        m,
        at,
        0,
        null(),
        null_mut()
    ));
    assert_eq!(
        mapped(e, unsafe { a.add(5) }, 2),
        [-1, 12],
        "flags {flags:#x}: written back"
    );
    check!(clReleaseMemObject(m));
    check!(clReleaseMemObject(plain));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    unsafe { clSVMFree(e.ctx, a.cast()) };
}

const ATOMIC: &str = r#"
kernel void count(volatile global int *c) { atomic_add(c, 1); }
"#;

#[test]
fn fine_grain_host_and_device_atomics_on_one_location() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let c: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    unsafe { *c = 0 };
    let p = e.program(ATOMIC, "");
    let k = kernel(p, "count");
    svm_arg(k, 0, c);
    let n = 1 << 16;
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        1,
        null(),
        [n].as_ptr(),
        null(),
        0,
        null(),
        null_mut()
    ));
    // The host adds meanwhile, atomically, to the same int, where the device reports SVM
    // atomics; without them the spec leaves concurrent atomics of host and device undefined
    // (NVIDIA's over the bus lose the host's adds: measured on the H200), so the host adds
    // after the kernel.
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
    if caps & CL_DEVICE_SVM_ATOMICS == 0 {
        check!(clFinish(e.queue));
    } else {
        check!(clFlush(e.queue));
    }
    let atomic = unsafe { &*(c as *const std::sync::atomic::AtomicI32) };
    for _ in 0..1000 {
        atomic.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    check!(clFinish(e.queue));
    assert_eq!(
        atomic.load(std::sync::atomic::Ordering::SeqCst),
        n as i32 + 1000
    );
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    unsafe { clSVMFree(e.ctx, c.cast()) };
}

const MESSAGES: &str = r#"
/* With the host, through SVM atomics: the host writes data[0..n) and then sets flags[0] with a
   release; the kernel waits for it with an acquire (a bounded spin: -1 if it never came),
   sums the data, writes the sum to data[n] and sets flags[1] with a release, which the host
   waits for with an acquire before it reads data[n], while the kernel still runs (it then
   spins on flags[2], which the host sets last). */
kernel void messages(global long *data, global atomic_int *flags, int n) {
    long sum = -1;
    for (uint s = 0; s < (1u << 26); ++s) {
        if (atomic_load_explicit(&flags[0], memory_order_acquire, memory_scope_all_svm_devices)) {
            sum = 0;
            for (int i = 0; i < n; ++i)
                sum += data[i];
            break;
        }
    }
    data[n] = sum;
    atomic_store_explicit(&flags[1], 1, memory_order_release, memory_scope_all_svm_devices);
    for (uint s = 0; s < (1u << 26); ++s)
        if (atomic_load(&flags[2]))
            break;
}
"#;

/// Where SVM atomics are reported: release/acquire between the host and a running kernel, in
/// both directions, through fine-grained SVM allocated with CL_MEM_SVM_ATOMICS.
#[test]
fn svm_atomics_pass_messages_between_host_and_a_running_kernel() {
    use std::sync::atomic::{AtomicI32, Ordering};
    let e = Env::new();
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
    if caps & CL_DEVICE_SVM_ATOMICS == 0 {
        eprintln!("skipped: the device reports no SVM atomics");
        return;
    }
    let n = 1000usize;
    let svm = CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
    let data: *mut i64 = alloc(&e, svm, n + 1);
    let flags: *mut i32 = alloc(&e, svm, 3);
    unsafe {
        std::ptr::write_bytes(data, 0, n + 1);
        std::ptr::write_bytes(flags, 0, 3);
    }
    let flag = |i: usize| unsafe { &*(flags.add(i) as *const AtomicI32) };
    let p = e.program(MESSAGES, "-cl-std=CL3.0");
    let k = kernel(p, "messages");
    svm_arg(k, 0, data);
    svm_arg(k, 1, flags);
    arg(k, 2, &(n as i32));
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        1,
        null(),
        [1].as_ptr(),
        [1].as_ptr(),
        0,
        null(),
        null_mut()
    ));
    check!(clFlush(e.queue));
    for i in 0..n {
        unsafe { *data.add(i) = i as i64 * 3 + 1 };
    }
    flag(0).store(1, Ordering::Release);
    let mut answered = false;
    for _ in 0..2_000_000_000u64 {
        if flag(1).load(Ordering::Acquire) != 0 {
            answered = true;
            break;
        }
        std::hint::spin_loop();
    }
    let sum = unsafe { *data.add(n) };
    flag(2).store(1, Ordering::SeqCst);
    check!(clFinish(e.queue));
    assert!(answered, "the kernel never answered");
    assert_eq!(sum, (0..n as i64).map(|i| i * 3 + 1).sum::<i64>());
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    unsafe {
        clSVMFree(e.ctx, data.cast());
        clSVMFree(e.ctx, flags.cast());
    }
}

#[test]
fn kernel_arg_and_exec_info_errors() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let p = e.program(SCALE, "");
    let k = kernel(p, "scale");
    let a: *mut i32 = alloc(&e, 0, 16);
    check_err!(
        clSetKernelArgSVMPointer(k, 3, a.cast()),
        CL_INVALID_ARG_INDEX
    );
    check_err!(
        clSetKernelArgSVMPointer(k, 2, a.cast()),
        CL_INVALID_ARG_VALUE
    );
    check_err!(
        clSetKernelArgSVMPointer(null_mut(), 0, a.cast()),
        CL_INVALID_KERNEL
    );
    let ptrs = [a as *const c_void];
    check!(clSetKernelExecInfo(
        k,
        CL_KERNEL_EXEC_INFO_SVM_PTRS,
        8,
        ptrs.as_ptr().cast()
    ));
    check_err!(
        clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 5, ptrs.as_ptr().cast()),
        CL_INVALID_VALUE
    );
    let yes: cl_bool = CL_TRUE;
    check_err!(
        clSetKernelExecInfo(
            k,
            CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM,
            4,
            (&yes as *const cl_bool).cast()
        ),
        CL_INVALID_OPERATION
    );
    check_err!(
        clSetKernelExecInfo(k, 0x1234, 4, (&yes as *const cl_bool).cast()),
        CL_INVALID_VALUE
    );
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    unsafe { clSVMFree(e.ctx, a.cast()) };
}

const BACKWARDS: &str = r#"
kernel void back(global int *in, global int *out, int k) {
    out[0] = *(in - 2);
    out[1] = in[-1];
    out[2] = in[k];
    out[3] = *(in + k - 1);
}
"#;

/// Negative offsets from an SVM pointer at an offset (the data before the pointer).
#[test]
fn pointer_arithmetic_below_an_svm_pointer() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let a: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 64);
    for i in 0..64 {
        unsafe { *a.add(i) = 100 + i as i32 };
    }
    let out: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 4);
    let p = e.program(BACKWARDS, "");
    let k = kernel(p, "back");
    svm_arg(k, 0, unsafe { a.add(10) });
    svm_arg(k, 1, out);
    arg(k, 2, &-3i32);
    e.run(k, None, &[1], None);
    check!(clFinish(e.queue));
    assert_eq!(
        unsafe { std::slice::from_raw_parts(out, 4) },
        &[108, 109, 107, 106]
    );
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    unsafe { clSVMFree(e.ctx, a.cast()) };
    unsafe { clSVMFree(e.ctx, out.cast()) };
}

// cl_ext_buffer_device_address.
const CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT: cl_bitfield = 0x5000;
const CL_MEM_DEVICE_ADDRESS_EXT: cl_uint = 0x5001;
const CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT: cl_uint = 0x5002;
const CL_INVALID_PROPERTY: cl_int = -64;
type SetDevicePointer = unsafe extern "C" fn(cl_kernel, cl_uint, u64) -> cl_int;

extern "C" {
    fn clCreateBufferWithProperties(
        c: cl_context,
        props: *const cl_bitfield,
        flags: cl_bitfield,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clGetExtensionFunctionAddressForPlatform(
        p: cl_platform_id,
        name: *const std::ffi::c_char,
    ) -> *mut c_void;
    fn clCreateSubBuffer(
        m: cl_mem,
        flags: cl_bitfield,
        ty: cl_uint,
        info: *const c_void,
        err: *mut cl_int,
    ) -> cl_mem;
}

fn address_buffer(e: &Env, data: &[i32]) -> cl_mem {
    let props = [CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT, 1, 0];
    let mut err = 0;
    let m = unsafe {
        clCreateBufferWithProperties(
            e.ctx,
            props.as_ptr(),
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            data.len() * 4,
            data.as_ptr() as *mut c_void,
            &mut err,
        )
    };
    assert_eq!(
        err,
        CL_SUCCESS,
        "clCreateBufferWithProperties: {}",
        err_name(err)
    );
    m
}

fn address_of(m: cl_mem) -> u64 {
    let mut a = 0u64;
    let mut size = 0usize;
    check!(clGetMemObjectInfo(
        m,
        CL_MEM_DEVICE_ADDRESS_EXT,
        8,
        (&mut a as *mut u64).cast(),
        &mut size
    ));
    assert_eq!(size, 8, "one address (one device)");
    a
}

const ADDRESSES: &str = r#"
kernel void get_addr(global int *b, global ulong *addr) {
    for (int i = 0; i < 64; i++) b[i] += 1;
    *addr = (ulong)b;
}
// As the CTS extension test spells it: this clspv crashes on a pointer loaded as such
// ("Invalid bitcast <2 x i32> to ptr"); compiler::pointer_members loads it as a ulong.
kernel void indirect(__global long* in_addr, __global int* out) {
    *out = **(int __global* __global*)in_addr;
}
kernel void before(global int *p, global int *out) {
    *out = *(p - 2);
}
"#;

#[test]
fn buffer_device_addresses() {
    let e = Env::new();
    let exts = device_str(e.dev, CL_DEVICE_EXTENSIONS);
    assert!(exts.contains("cl_ext_buffer_device_address"), "{exts}");
    let data: Vec<i32> = (0..64).collect();
    let m = address_buffer(&e, &data);
    let addr = address_of(m);
    assert_ne!(addr, 0);
    let out = e.buffer_from(&[0u64]);
    let p = e.program(ADDRESSES, "");
    // A kernel sees the buffer at the address the query gives.
    let k = kernel(p, "get_addr");
    arg(k, 0, &m);
    arg(k, 1, &out);
    e.run(k, None, &[1], None);
    assert_eq!(
        e.read::<u64>(out, 1),
        vec![addr],
        "the kernel's address of the buffer"
    );
    assert_eq!(e.read::<i32>(m, 64), (1..65).collect::<Vec<i32>>());
    // A buffer reached through an address stored in another buffer (exec info).
    let k2 = kernel(p, "indirect");
    let holder = e.buffer_from(&[addr]);
    let result = e.buffer_from(&[0i32]);
    arg(k2, 0, &holder);
    arg(k2, 1, &result);
    check!(clSetKernelExecInfo(
        k2,
        CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT,
        8,
        (&addr as *const u64).cast()
    ));
    e.run(k2, None, &[1], None);
    assert_eq!(e.read::<i32>(result, 1), vec![1]);
    // clSetKernelArgDevicePointerEXT into the middle of the buffer, reading before it.
    let name = std::ffi::CString::new("clSetKernelArgDevicePointerEXT").unwrap();
    let f = unsafe { clGetExtensionFunctionAddressForPlatform(platform(), name.as_ptr()) };
    assert!(!f.is_null(), "clSetKernelArgDevicePointerEXT is found");
    let set: SetDevicePointer = unsafe { std::mem::transmute(f) };
    let k3 = kernel(p, "before");
    check!(set(k3, 0, addr + 10 * 4));
    arg(k3, 1, &result);
    e.run(k3, None, &[1], None);
    assert_eq!(e.read::<i32>(result, 1), vec![9]);
    check_err!(set(k3, 5, addr), CL_INVALID_ARG_INDEX);
    // A sub-buffer's address is its parent's plus its origin.
    let align: cl_uint = device_val(e.dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
    let origin = (align / 8) as usize;
    let region = [origin, 16usize];
    let mut err = 0;
    let sub = unsafe {
        clCreateSubBuffer(
            m,
            CL_MEM_READ_WRITE,
            0x1220,
            region.as_ptr().cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(address_of(sub), addr + origin as u64);
    // A buffer without the property has no address to query; unknown properties are refused.
    check_err!(
        clGetMemObjectInfo(out, CL_MEM_DEVICE_ADDRESS_EXT, 8, null_mut(), null_mut()),
        CL_INVALID_OPERATION
    );
    let bad = [0x5555u64, 1, 0];
    let none = unsafe {
        clCreateBufferWithProperties(
            e.ctx,
            bad.as_ptr(),
            CL_MEM_READ_WRITE,
            64,
            null_mut(),
            &mut err,
        )
    };
    assert!(none.is_null());
    assert_eq!(err, CL_INVALID_PROPERTY);
    // An SVM pointer's buffer has the SVM pointer as its address.
    let s: *mut i32 = alloc(&e, 0, 64);
    let props = [CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT, 1, 0];
    let on_svm = unsafe {
        clCreateBufferWithProperties(
            e.ctx,
            props.as_ptr(),
            CL_MEM_USE_HOST_PTR,
            256,
            s.cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(address_of(on_svm), s as u64);
    for mem in [sub, on_svm, m, out, holder, result] {
        check!(clReleaseMemObject(mem));
    }
    for k in [k, k2, k3] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    unsafe { clSVMFree(e.ctx, s.cast()) };
}

const CL_DEVICE_GLOBAL_MEM_SIZE: cl_uint = 0x101F;

/// Issue 18 item 5: buffers past one storage-buffer binding (lavapipe: 128 MiB), reached by
/// device address: CL_DEVICE_MAX_MEM_ALLOC_SIZE of at least 1 GiB, and a 2 GiB buffer that
/// kernels write and read at both ends.
#[test]
fn a_two_gib_buffer_in_kernels() {
    let e = Env::new();
    let max: u64 = device_val(e.dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    let global: u64 = device_val(e.dev, CL_DEVICE_GLOBAL_MEM_SIZE);
    assert!(max >= 1 << 30, "CL_DEVICE_MAX_MEM_ALLOC_SIZE {max}");
    assert!(max >= (global / 4).min(1 << 30) && max <= global);
    let size = 2usize << 30;
    assert!(max as usize >= size, "a 2 GiB buffer fits ({max})");
    let b = e.buffer(CL_MEM_READ_WRITE, size, null_mut());
    let n = (size / 4) as u64;
    // The host writes a word 1 GiB + 12 bytes in; kernels write the last 256 words and the
    // first, each reading that word.
    let probe = (1u64 << 30) / 4 + 3;
    let seed = [0x5A5A_1234u32];
    check!(clEnqueueWriteBuffer(
        e.queue,
        b,
        CL_TRUE,
        probe as usize * 4,
        4,
        seed.as_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let p = e.program(
        "kernel void k(global uint *b, ulong n, ulong probe) {\n\
         ulong g = get_global_id(0);\n\
         b[n - 1 - g] = (uint)(n - 1 - g) ^ b[probe];\n\
         if (g == 0) b[0] = b[probe] + 1;\n}\n",
        "",
    );
    let k = kernel(p, "k");
    arg(k, 0, &b);
    arg(k, 1, &n);
    arg(k, 2, &probe);
    e.run(k, None, &[256], None);
    let mut tail = vec![0u32; 256];
    check!(clEnqueueReadBuffer(
        e.queue,
        b,
        CL_TRUE,
        size - 1024,
        1024,
        tail.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let want: Vec<u32> = (0..256u64)
        .map(|j| (n - 256 + j) as u32 ^ seed[0])
        .collect();
    assert_eq!(tail, want, "the last 256 words");
    let mut first = [0u32];
    check!(clEnqueueReadBuffer(
        e.queue,
        b,
        CL_TRUE,
        0,
        4,
        first.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    assert_eq!(first[0], seed[0] + 1);
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    check!(clReleaseMemObject(b));
}

/// clSVMFree while a kernel using the memory is in flight: the spec leaves the application
/// responsible, but vkcl keeps the memory until the launch completes, so nothing faults.
#[test]
fn svm_free_while_a_kernel_runs_keeps_the_memory() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let n = 1 << 16;
    let a: *mut i32 = alloc(&e, 0, n);
    let p = e.program(SLOW, "");
    let k = kernel(p, "slow");
    svm_arg(k, 0, a);
    arg(k, 1, &2000i32);
    let mut ev: cl_event = null_mut();
    check!(clEnqueueNDRangeKernel(
        e.queue,
        k,
        1,
        null(),
        [n].as_ptr(),
        null(),
        0,
        null(),
        &mut ev
    ));
    check!(clFlush(e.queue));
    unsafe { clSVMFree(e.ctx, a.cast()) };
    check!(clWaitForEvents(1, &ev));
    let mut status: cl_int = 1;
    check!(clGetEventInfo(
        ev,
        CL_EVENT_COMMAND_EXECUTION_STATUS,
        4,
        (&mut status as *mut cl_int).cast(),
        null_mut()
    ));
    assert_eq!(status, CL_COMPLETE);
    check!(clReleaseEvent(ev));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// The CTS test_svm suite's node: a struct holding a pointer to its own type.
#[repr(C)]
#[derive(Clone, Copy)]
struct CtsNode {
    global_id: i32,
    position_in_list: i32,
    next: *mut CtsNode,
}

/// The CTS test_svm suite's linked-list kernels as it writes them: a recursive struct, pointer
/// parameters to it, a helper returning one, `pNode->pNext = pNew`, `pNode = pNode->pNext`, and
/// a loop whose pointer induction variable is dead on its `else break` path (on which this
/// clspv crashes unless the variable is an integer: `compiler::pointer_members`).
const CTS_LISTS: &str = r#"
typedef struct Node {
    int global_id;
    int position_in_list;
    __global struct Node* pNext;
} Node;
__global Node* allocate_node(__global Node* pNodes, volatile __global int* allocation_index, size_t i)
{
   return &pNodes[ atomic_inc(allocation_index) ];
}
__kernel void create_linked_lists(__global Node* pNodes, volatile __global int* allocation_index, int list_length)
{
    size_t i = get_global_id(0);
    __global Node *pNode = &pNodes[i];
    pNode->global_id = i;
    pNode->position_in_list = 0;
    __global Node *pNew;
    for(int j=1; j < list_length; j++)
    {
        pNew = allocate_node(pNodes, allocation_index, i);
        pNew->global_id = i;
        pNew->position_in_list = j;
        pNode->pNext = pNew;  // link new node onto end of list
        pNode = pNew;   // move to end of list
    }
}
__kernel void verify_linked_lists(__global Node* pNodes, volatile __global uint* num_correct, int list_length)
{
    size_t i = get_global_id(0);
    __global Node *pNode = &pNodes[i];
    for(int j=0; j < list_length; j++)
    {
        if( pNode->global_id == i && pNode->position_in_list == j)
        {
            atomic_inc(num_correct);
        }
        else {
            break;
        }
        pNode = pNode->pNext;
    }
}
"#;

#[test]
fn cts_linked_list_kernels_with_pointer_members() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let (lists, length) = (8usize, 16usize);
    let total = lists * length;
    let nodes: *mut CtsNode = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, total);
    let index: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    let correct: *mut u32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    let p = e.program(CTS_LISTS, "");
    let create = kernel(p, "create_linked_lists");
    let verify = kernel(p, "verify_linked_lists");
    let verify_on_device = || {
        unsafe { *correct = 0 };
        svm_arg(verify, 0, nodes);
        svm_arg(verify, 1, correct);
        arg(verify, 2, &(length as i32));
        e.run(verify, None, &[lists], None);
        check!(clFinish(e.queue));
        unsafe { *correct }
    };
    // Device → host: lists linked by a kernel, followed on the host and on the device.
    unsafe { *index = lists as i32 };
    svm_arg(create, 0, nodes);
    svm_arg(create, 1, index);
    arg(create, 2, &(length as i32));
    e.run(create, None, &[lists], None);
    check!(clFinish(e.queue));
    let end = unsafe { nodes.add(total) };
    for i in 0..lists {
        let mut at = unsafe { nodes.add(i) };
        for j in 0..length {
            assert!(
                at >= nodes && at < end,
                "list {i} node {j}: {at:?} outside the nodes"
            );
            let n = unsafe { *at };
            assert_eq!(
                (n.global_id, n.position_in_list),
                (i as i32, j as i32),
                "list {i} node {j}"
            );
            at = n.next;
        }
    }
    assert_eq!(
        verify_on_device(),
        total as u32,
        "the kernel's lists verified in a kernel"
    );
    // Host → device: lists linked on the host in another order, verified in a kernel.
    unsafe { std::ptr::write_bytes(nodes, 0, total) };
    for i in 0..lists {
        let mut at = unsafe { nodes.add(i) };
        for j in 0..length {
            let next_slot = lists + (j * lists + i) % (total - lists);
            let next = if j + 1 < length {
                unsafe { nodes.add(next_slot) }
            } else {
                null_mut()
            };
            unsafe {
                *at = CtsNode {
                    global_id: i as i32,
                    position_in_list: j as i32,
                    next,
                }
            };
            at = next;
        }
    }
    assert_eq!(
        verify_on_device(),
        total as u32,
        "the host's lists verified in a kernel"
    );
    // One node broken on the host: the kernel stops there.
    unsafe { (*(*nodes.add(3)).next).position_in_list = 99 };
    assert_eq!(
        verify_on_device(),
        total as u32 - (length as u32 - 1),
        "a broken list"
    );
    for k in [create, verify] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    for q in [nodes.cast::<c_void>(), index.cast(), correct.cast()] {
        unsafe { clSVMFree(e.ctx, q) };
    }
}

#[test]
fn struct_of_svm_pointers_and_a_pointer_loaded_through_a_pointer() {
    // The CTS set_kernel_exec_info test's kernel (a struct of three SVM pointers) and the
    // buffer-device-address extension test's indirect access (`**(int * global *)p`).
    let src = r#"
typedef struct {
    global int *pA;
    global int *pB;
    global int *pC;
} BufPtrs;
kernel void set_kernel_exec_info_test(__global BufPtrs* pBufs)
{
    size_t i = get_global_id(0);
    pBufs->pA[i]++;
    pBufs->pB[i]++;
    pBufs->pC[i]++;
}
kernel void indirect_access(global long *in_ptr, global int *out) {
    out[get_global_id(0)] = **(global int * global *)in_ptr + (int)get_global_id(0);
}
"#;
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let n = 64;
    let bufs: Vec<*mut i32> = (0..3).map(|_| alloc(&e, CL_MEM_READ_WRITE, n)).collect();
    let ptrs: *mut [*mut i32; 3] = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    for (b, buf) in bufs.iter().enumerate() {
        let host: Vec<i32> = (0..n as i32).map(|i| i * 10 + b as i32).collect();
        check!(clEnqueueSVMMemcpy(
            e.queue,
            1,
            buf.cast(),
            host.as_ptr().cast(),
            n * 4,
            0,
            null(),
            null_mut()
        ));
    }
    unsafe { *ptrs = [bufs[0], bufs[1], bufs[2]] };
    let p = e.program(src, "");
    let k = kernel(p, "set_kernel_exec_info_test");
    svm_arg(k, 0, ptrs);
    let list: Vec<*const c_void> = bufs.iter().map(|b| b.cast_const().cast()).collect();
    check!(clSetKernelExecInfo(
        k,
        CL_KERNEL_EXEC_INFO_SVM_PTRS,
        3 * 8,
        list.as_ptr().cast()
    ));
    e.run(k, None, &[n], None);
    check!(clFinish(e.queue));
    for (b, buf) in bufs.iter().enumerate() {
        let mut got = vec![0i32; n];
        check!(clEnqueueSVMMemcpy(
            e.queue,
            1,
            got.as_mut_ptr().cast(),
            buf.cast_const().cast(),
            n * 4,
            0,
            null(),
            null_mut()
        ));
        let want: Vec<i32> = (0..n as i32).map(|i| i * 10 + b as i32 + 1).collect();
        assert_eq!(got, want, "buffer {b} through the struct of pointers");
    }
    // A pointer stored in memory, loaded as a pointer, dereferenced.
    let k2 = kernel(p, "indirect_access");
    let target: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    let holder: *mut *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    let out: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 4);
    unsafe {
        *target = 4242;
        *holder = target;
    }
    svm_arg(k2, 0, holder);
    svm_arg(k2, 1, out);
    let extra: Vec<*const c_void> = vec![target.cast_const().cast()];
    check!(clSetKernelExecInfo(
        k2,
        CL_KERNEL_EXEC_INFO_SVM_PTRS,
        8,
        extra.as_ptr().cast()
    ));
    e.run(k2, None, &[4], None);
    check!(clFinish(e.queue));
    let got: Vec<i32> = (0..4).map(|i| unsafe { *out.add(i) }).collect();
    assert_eq!(got, vec![4242, 4243, 4244, 4245], "**(int * global *)p");
    for k in [k, k2] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    for q in bufs.iter().map(|b| b.cast::<c_void>()).chain([
        ptrs.cast(),
        target.cast(),
        holder.cast(),
        out.cast(),
    ]) {
        unsafe { clSVMFree(e.ctx, q) };
    }
}

#[test]
fn svm_commands_report_their_command_types() {
    const MEMCPY: u32 = 0x120A;
    const MEMFILL: u32 = 0x120B;
    const MAP: u32 = 0x120C;
    const UNMAP: u32 = 0x120D;
    const FREE: u32 = 0x1209;
    const MIGRATE: u32 = 0x120E;
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let n = 256;
    let ty = |ev: cl_event, what: &str, want: u32| {
        check!(clWaitForEvents(1, &ev));
        assert_eq!(event_val::<u32>(ev, CL_EVENT_COMMAND_TYPE), want, "{what}");
        check!(clReleaseEvent(ev));
    };
    let host = vec![0u8; n];
    let mut host2 = vec![0u8; n];
    for flags in [
        CL_MEM_READ_WRITE,
        CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
    ] {
        let a: *mut u8 = alloc(&e, flags, n);
        let b: *mut u8 = alloc(&e, flags, n);
        let copies: [(*mut u8, *const u8, &str); 4] = [
            (b, a, "svm to svm"),
            (a, host.as_ptr(), "host to svm"),
            (host2.as_mut_ptr(), b, "svm to host"),
            (host2.as_mut_ptr(), host.as_ptr(), "host to host"),
        ];
        for (dst, src, what) in copies {
            for blocking in [0, 1] {
                let mut ev = null_mut();
                check!(clEnqueueSVMMemcpy(
                    e.queue,
                    blocking,
                    dst.cast(),
                    src.cast(),
                    n,
                    0,
                    null(),
                    &mut ev
                ));
                ty(ev, &format!("memcpy {what}, blocking {blocking}"), MEMCPY);
            }
        }
        for size in [1usize, 2, 4, 8, 16, 32, 64, 128] {
            let pattern = vec![7u8; size];
            let mut ev = null_mut();
            check!(clEnqueueSVMMemFill(
                e.queue,
                a.cast(),
                pattern.as_ptr().cast(),
                size,
                n,
                0,
                null(),
                &mut ev
            ));
            ty(ev, &format!("fill, pattern of {size}"), MEMFILL);
        }
        let mut ev = null_mut();
        check!(clEnqueueSVMMap(
            e.queue,
            1,
            3,
            a.cast(),
            n,
            0,
            null(),
            &mut ev
        ));
        ty(ev, "map", MAP);
        check!(clEnqueueSVMUnmap(e.queue, a.cast(), 0, null(), &mut ev));
        ty(ev, "unmap", UNMAP);
        let ptrs = [a.cast_const().cast::<c_void>()];
        check!(clEnqueueSVMMigrateMem(
            e.queue,
            1,
            ptrs.as_ptr(),
            null(),
            0,
            0,
            null(),
            &mut ev
        ));
        ty(ev, "migrate", MIGRATE);
        let mut frees = [a.cast::<c_void>(), b.cast()];
        check!(clEnqueueSVMFree(
            e.queue,
            2,
            frees.as_mut_ptr(),
            None,
            null_mut(),
            0,
            null(),
            &mut ev
        ));
        ty(ev, "free", FREE);
    }
}

/// A program rebuilt from its binary: `src` built, its binary loaded into a new program.
fn from_own_binary(e: &Env, src: &str) -> cl_program {
    let p = e.program(src, "");
    let bins = binaries(p);
    check!(clReleaseProgram(p));
    let (q, status, err) = from_binaries(e.ctx, &[e.dev], &[&bins[0]]);
    assert_eq!((err, status[0]), (0, 0), "clCreateProgramWithBinary");
    check!(clBuildProgram(q, 1, &e.dev, null(), None, null_mut()));
    q
}

#[test]
fn programs_from_binaries_take_svm_arguments() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    // A program whose first build is logical: its physical build comes from the binary.
    let src = "kernel void add(global int *a, global int *b) { size_t i = get_global_id(0); b[i] = a[i] + 1; }";
    let n = 32;
    let a: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, n);
    let b: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, n);
    for i in 0..n {
        unsafe { *a.add(i) = i as i32 * 3 };
    }
    let p = from_own_binary(&e, src);
    let k = kernel(p, "add");
    svm_arg(k, 0, a);
    svm_arg(k, 1, b);
    e.run(k, None, &[n], None);
    check!(clFinish(e.queue));
    let got: Vec<i32> = (0..n).map(|i| unsafe { *b.add(i) }).collect();
    assert_eq!(
        got,
        (0..n as i32).map(|i| i * 3 + 1).collect::<Vec<_>>(),
        "add from a binary"
    );
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    // A program built only in physical mode (pointer members): its binary is physical.
    let p = from_own_binary(&e, CTS_LISTS);
    let (lists, length) = (4usize, 8usize);
    let nodes: *mut CtsNode = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, lists * length);
    let index: *mut i32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    let correct: *mut u32 = alloc(&e, CL_MEM_SVM_FINE_GRAIN_BUFFER, 1);
    unsafe {
        *index = lists as i32;
        *correct = 0;
    }
    let create = kernel(p, "create_linked_lists");
    svm_arg(create, 0, nodes);
    svm_arg(create, 1, index);
    arg(create, 2, &(length as i32));
    e.run(create, None, &[lists], None);
    let verify = kernel(p, "verify_linked_lists");
    svm_arg(verify, 0, nodes);
    svm_arg(verify, 1, correct);
    arg(verify, 2, &(length as i32));
    e.run(verify, None, &[lists], None);
    check!(clFinish(e.queue));
    assert_eq!(
        unsafe { *correct },
        (lists * length) as u32,
        "lists from a binary"
    );
    for k in [create, verify] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    for q in [
        a.cast::<c_void>(),
        b.cast(),
        nodes.cast(),
        index.cast(),
        correct.cast(),
    ] {
        unsafe { clSVMFree(e.ctx, q) };
    }
}

#[test]
fn a_pointer_induction_loop_with_a_break_builds() {
    // This clspv crashes on such a loop in either address mode (a poison pointer in a phi);
    // with device addresses the program is built physical with the pointer as an integer.
    let src = r#"
kernel void run_of_sevens(global uint *a, global uint *out, int n) {
    global uint *p = a;
    out[0] = 0;
    for (int j = 0; j < n; j++) {
        if (*p != 7) break;
        out[0] = j + 1;
        p++;
    }
}
"#;
    let e = Env::new();
    let data: Vec<u32> = [7, 7, 7, 7, 7, 3, 7, 7].to_vec();
    let a = e.buffer_from(&data);
    let out = e.buffer_from(&[99u32]);
    let p = e.program(src, "");
    let k = kernel(p, "run_of_sevens");
    arg(k, 0, &a);
    arg(k, 1, &out);
    arg(k, 2, &(data.len() as i32));
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<u32>(out, 1), vec![5], "the run of sevens");
    for m in [a, out] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// clEnqueueSVMUnmap of a coarse-grained pointer that was never mapped: the spec gives no
/// error for it (only a NULL pointer is CL_INVALID_VALUE), so it succeeds and changes nothing,
/// whether the allocation is host-coherent or device memory with a host copy
/// (`VKCL_SVM_COARSE=device`, which lavapipe allows too).
#[test]
fn unmap_of_a_pointer_never_mapped_only_orders() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let n = 64;
    let p: *mut u32 = alloc(&e, CL_MEM_READ_WRITE, n);
    let data: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
    check!(clEnqueueSVMMemcpy(
        e.queue,
        CL_TRUE,
        p.cast(),
        data.as_ptr().cast(),
        n * 4,
        0,
        null(),
        null_mut()
    ));
    for at in [p, unsafe { p.add(5) }] {
        check!(clEnqueueSVMUnmap(e.queue, at.cast(), 0, null(), null_mut()));
    }
    check!(clFinish(e.queue));
    assert_eq!(mapped(&e, p, n), data);
    assert_eq!(
        unsafe { clEnqueueSVMUnmap(e.queue, null_mut(), 0, null(), null_mut()) },
        CL_INVALID_VALUE
    );
    unsafe { clSVMFree(e.ctx, p.cast()) };
}

const CL_DEVICE_ADDRESS_BITS: cl_uint = 0x100D;

const POINTER_SIZED: &str = r#"
kernel void sizes(global size_t *s, global ptrdiff_t *d, global intptr_t *q) {
    size_t i = get_global_id(0);
    s[i] = sizeof(size_t) * 1000 + i;
    d[i] = &s[i] - &s[0] - 1;
    q[i] = -(intptr_t)i;
}
kernel void addresses(global uintptr_t *p) {
    size_t i = get_global_id(0);
    p[i] = (uintptr_t)&p[i];
}
kernel void count(volatile global atomic_size_t *c, volatile global atomic_intptr_t *m) {
    atomic_fetch_add_explicit(c, (size_t)1, memory_order_relaxed);
    atomic_fetch_sub_explicit(m, 2, memory_order_relaxed);
}
"#;

/// The elements of `n` integers `w` bytes wide (4 or 8), sign-extended.
fn words(bytes: &[u8], w: usize) -> Vec<i64> {
    bytes
        .chunks(w)
        .map(|c| match w {
            4 => i32::from_ne_bytes(c.try_into().unwrap()) as i64,
            _ => i64::from_ne_bytes(c.try_into().unwrap()),
        })
        .collect()
}

/// size_t, ptrdiff_t, intptr_t and uintptr_t are CL_DEVICE_ADDRESS_BITS wide in every launch of
/// a kernel: with cl_mem arguments and with SVM pointers (the physical-addressing build), in
/// plain stores and in atomics (the conformance c11_atomics svm_* tests store them in SVM
/// memory with the host's idea of their size, from CL_DEVICE_ADDRESS_BITS); and a uintptr_t of
/// an SVM pointer is the host's address of it.
#[test]
fn pointer_sized_types_are_address_bits_wide() {
    let e = Env::new();
    let bits: cl_uint = device_val(e.dev, CL_DEVICE_ADDRESS_BITS);
    assert!(bits == 32 || bits == 64, "CL_DEVICE_ADDRESS_BITS {bits}");
    let w = bits as usize / 8;
    let n = 64;
    let want_s: Vec<i64> = (0..n as i64).map(|i| w as i64 * 1000 + i).collect();
    let want_d: Vec<i64> = (0..n as i64).map(|i| i - 1).collect();
    let want_q: Vec<i64> = (0..n as i64).map(|i| -i).collect();
    let want = [want_s, want_d, want_q];
    let p = e.program(POINTER_SIZED, "-cl-std=CL2.0");
    let k = kernel(p, "sizes");
    let bufs: Vec<cl_mem> = (0..3).map(|_| e.buffer_from(&vec![0u8; n * w])).collect();
    for (i, b) in bufs.iter().enumerate() {
        arg(k, i as u32, b);
    }
    e.run(k, None, &[n], None);
    let got: Vec<Vec<i64>> = bufs
        .iter()
        .map(|&b| words(&e.read::<u8>(b, n * w), w))
        .collect();
    assert_eq!(got, want, "cl_mem arguments");
    if !has_svm(&e) {
        return;
    }
    let svm: Vec<*mut u8> = (0..4)
        .map(|_| alloc::<u8>(&e, CL_MEM_READ_WRITE, n * w))
        .collect();
    for (i, &s) in svm[..3].iter().enumerate() {
        svm_arg(k, i as u32, s);
    }
    e.run(k, None, &[n], None);
    let got: Vec<Vec<i64>> = svm[..3]
        .iter()
        .map(|&s| words(&mapped(&e, s, n * w), w))
        .collect();
    assert_eq!(got, want, "SVM pointers");
    let k2 = kernel(p, "addresses");
    svm_arg(k2, 0, svm[3]);
    e.run(k2, None, &[n], None);
    let want_p: Vec<i64> = (0..n).map(|i| svm[3] as i64 + (i * w) as i64).collect();
    assert_eq!(
        words(&mapped(&e, svm[3], n * w), w),
        want_p,
        "uintptr_t of &p[i]"
    );
    let k3 = kernel(p, "count");
    let start = [0u8; 16];
    check!(clEnqueueSVMMemcpy(
        e.queue,
        CL_TRUE,
        svm[0].cast(),
        start.as_ptr().cast(),
        2 * w,
        0,
        null(),
        null_mut()
    ));
    svm_arg(k3, 0, svm[0]);
    svm_arg(k3, 1, unsafe { svm[0].add(w) });
    e.run(k3, None, &[1000], None);
    assert_eq!(
        words(&mapped(&e, svm[0], 2 * w), w),
        [1000, -2000],
        "atomics"
    );
    for k in [k, k2, k3] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    for s in svm {
        unsafe { clSVMFree(e.ctx, s.cast()) };
    }
    for b in bufs {
        check!(clReleaseMemObject(b));
    }
}
