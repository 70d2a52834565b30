//! Pointers stored in SVM structs (issue 18, `compiler::pointer_members`): a member pointer
//! moved with `++`, `--`, `+=` and `-=`, stores through a member (`s->p[i] = v`), and arrays of
//! pointers inside a struct, built on one side and followed and changed on the other. Every
//! result is compared with a model of the same steps computed here on the host.
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;

const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
const CL_MEM_SVM_FINE_GRAIN_BUFFER: cl_bitfield = 1 << 10;

extern "C" {
    fn clSVMAlloc(c: cl_context, flags: cl_bitfield, size: usize, align: cl_uint) -> *mut c_void;
    fn clSVMFree(c: cl_context, p: *mut c_void);
    fn clSetKernelArgSVMPointer(k: cl_kernel, i: cl_uint, p: *const c_void) -> cl_int;
}

fn alloc<T>(e: &Env, n: usize) -> *mut T {
    let size = n * std::mem::size_of::<T>();
    let p = unsafe { clSVMAlloc(e.ctx, CL_MEM_SVM_FINE_GRAIN_BUFFER, size, 0) };
    assert!(!p.is_null(), "clSVMAlloc returned NULL");
    unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, size) };
    p.cast()
}

fn svm_arg<T>(k: cl_kernel, i: u32, p: *const T) {
    check!(clSetKernelArgSVMPointer(k, i, p.cast()));
}

/// Whether the device reports SVM (tests/svm.rs checks that clSVMAlloc fails where not).
fn has_svm(e: &Env) -> bool {
    let caps: cl_bitfield = device_val(e.dev, CL_DEVICE_SVM_CAPABILITIES);
    if caps == 0 {
        eprintln!("no SVM on this device");
    }
    caps != 0
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Node {
    value: i32,
    pad: i32,
    next: *mut Node,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Table {
    ptrs: [*mut i32; 4],
    cursor: *mut i32,
    count: i32,
    pad: i32,
}

const SRC: &str = r#"
typedef struct Node { int value; int pad; global struct Node *next; } Node;
typedef struct Table { global int *ptrs[4]; global int *cursor; int count; int pad; } Table;

// Each node's next moves: one node on with ++, back with --, on by 2 with +=, back 1 with -=
// (net: two nodes on), and the value is the one the moved pointer's old target held.
kernel void move_next(global Node *nodes, global int *old) {
    size_t i = get_global_id(0);
    global Node *n = &nodes[i];
    global Node *was = n->next++;
    old[i] = was->value;
    --n->next;
    n->next += 2;
    n->next -= 1;
    global Node *now = ++n->next;
    n->value = now->value * 10 + (n->next - was);
}

// The host's table followed: sums through each pointer, written through the cursor (a store
// through a member), then the pointers and the cursor moved.
kernel void follow_table(global Table *t) {
    int sum = 0;
    for (int i = 0; i < 4; i++) {
        sum += t->ptrs[i][0] + *t->ptrs[i];
        t->ptrs[i][1] = 7 * i;
    }
    t->cursor[0] = sum;
    t->cursor[1] = t->count;
    t->cursor += 2;
    t->ptrs[3] = t->ptrs[0] + 1;
    t->ptrs[2]++;
}

// A table built in a kernel: pointers into `base`, values written through them.
kernel void build_table(global Table *t, global int *base) {
    for (int i = 0; i < 4; i++) {
        t->ptrs[i] = base + 3 * i;
        t->ptrs[i][0] = 100 + i;
        *(t->ptrs[i] + 1) = 200 + i;
    }
    t->cursor = &base[12];
    t->cursor[0] = 5;
    t->count = 4;
}
"#;

#[test]
fn member_pointers_moved_with_increments_and_compound_assignments() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let (n, extra) = (8usize, 4usize);
    let nodes: *mut Node = alloc(&e, n + extra);
    let old: *mut i32 = alloc(&e, n);
    let value = |k: usize| (k as i32) * 3 + 1;
    // Node i points at node 2i % n + 1 (a host-built table of links into the array).
    let target = |i: usize| (2 * i) % n + 1;
    for k in 0..n + extra {
        unsafe {
            *nodes.add(k) = Node {
                value: value(k),
                pad: 0,
                next: if k < n {
                    nodes.add(target(k))
                } else {
                    std::ptr::null_mut()
                },
            }
        };
    }
    let p = e.program(SRC, "");
    let k = kernel(p, "move_next");
    svm_arg(k, 0, nodes);
    svm_arg(k, 1, old);
    e.run(k, None, &[n], None);
    check!(clFinish(e.queue));
    for i in 0..n {
        let t = target(i);
        let now = t + 2;
        let node = unsafe { *nodes.add(i) };
        assert_eq!(
            unsafe { *old.add(i) },
            value(t),
            "node {i}: the old target's value"
        );
        assert_eq!(
            node.next,
            unsafe { nodes.add(now) },
            "node {i}: next moved two on"
        );
        // Other work-items change values of nodes < n concurrently: only targets >= n are fixed.
        if now >= n {
            assert_eq!(
                node.value,
                value(now) * 10 + 2,
                "node {i}: the new target's value"
            );
        }
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    for q in [nodes.cast::<c_void>(), old.cast()] {
        unsafe { clSVMFree(e.ctx, q) };
    }
}

#[test]
fn arrays_of_pointers_in_structs_both_ways() {
    let e = Env::new();
    if !has_svm(&e) {
        return;
    }
    let table: *mut Table = alloc(&e, 1);
    let data: *mut i32 = alloc(&e, 64);
    let p = e.program(SRC, "");
    // Host → device: the host points the table into `data` out of order.
    let slots = [40usize, 3, 17, 28];
    let mut model = vec![0i32; 64];
    for (k, v) in model.iter_mut().enumerate() {
        *v = k as i32 * 11 - 5;
    }
    unsafe {
        std::ptr::copy_nonoverlapping(model.as_ptr(), data, 64);
        *table = Table {
            ptrs: slots.map(|s| data.add(s)),
            cursor: data.add(50),
            count: 9,
            pad: 0,
        };
    }
    let follow = kernel(p, "follow_table");
    svm_arg(follow, 0, table);
    e.run(follow, None, &[1], None);
    check!(clFinish(e.queue));
    let sum: i32 = slots.iter().map(|&s| 2 * model[s]).sum();
    for (i, &s) in slots.iter().enumerate() {
        model[s + 1] = 7 * i as i32;
    }
    model[50] = sum;
    model[51] = 9;
    let got = unsafe { std::slice::from_raw_parts(data, 64) };
    assert_eq!(got, &model[..], "the data after follow_table");
    let t = unsafe { *table };
    assert_eq!(t.cursor, unsafe { data.add(52) }, "cursor += 2");
    let want_ptrs = unsafe { [data.add(40), data.add(3), data.add(18), data.add(41)] };
    assert_eq!(t.ptrs, want_ptrs, "the pointers after follow_table");
    // Device → host: a kernel builds a table; the host follows it.
    unsafe {
        std::ptr::write_bytes(table, 0, 1);
        std::ptr::write_bytes(data, 0, 64);
    }
    let build = kernel(p, "build_table");
    svm_arg(build, 0, table);
    svm_arg(build, 1, data);
    e.run(build, None, &[1], None);
    check!(clFinish(e.queue));
    let t = unsafe { *table };
    for i in 0..4 {
        assert_eq!(t.ptrs[i], unsafe { data.add(3 * i) }, "ptrs[{i}]");
        let v = unsafe { [*t.ptrs[i], *t.ptrs[i].add(1)] };
        assert_eq!(v, [100 + i as i32, 200 + i as i32], "through ptrs[{i}]");
    }
    assert_eq!(t.cursor, unsafe { data.add(12) }, "the cursor");
    assert_eq!(unsafe { *t.cursor }, 5, "through the cursor");
    assert_eq!(t.count, 4);
    for k in [follow, build] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
    for q in [table.cast::<c_void>(), data.cast()] {
        unsafe { clSVMFree(e.ctx, q) };
    }
}
