//! The generic address space (OpenCL C 3.0 `__opencl_c_generic_address_space`, 2.0) as far as
//! clspv resolves it after inlining: unqualified pointer parameters of functions called with
//! global, local and private pointers, a null generic pointer, get_fence; and pointers whose
//! space is chosen at run time, which build flat (compiler::generic_flat, docs/DECISIONS.md),
//! `__local` pointer arguments included. The tests named for the conformance suite's
//! generic_address_space tests port their kernels' shapes, checked against values computed
//! here.
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

const HELPERS: &str = r#"
int sum(int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += p[i]; return s; }
void put(int *p, int v) { if (p) *p = v; }
"#;

fn run(body: &str, opts: &str) -> Vec<i32> {
    let src = format!(
        "{HELPERS}\nkernel void k(global int *g, global int *o) {{\n\
         local int l[4]; int pr[4];\n\
         for (int i = 0; i < 4; i++) {{ l[i] = i; pr[i] = 10 * i; }}\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n{body}\n}}"
    );
    let e = Env::new();
    let p = e.program(&src, opts);
    let k = kernel(p, "k");
    let g = e.buffer_from(&[100i32, 200, 300, 400]);
    let o = e.buffer_from(&[-1i32; 8]);
    arg(k, 0, &g);
    arg(k, 1, &o);
    e.run(k, None, &[1], None);
    let out = e.read::<i32>(o, 8);
    for m in [g, o] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    out
}

#[test]
fn one_function_called_with_pointers_to_every_address_space() {
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let o = run(
            "o[0] = sum(g, 4); o[1] = sum(l, 4); o[2] = sum(pr, 4);\n\
             put(0, 1); put(o + 3, 7); put(&l[1], 5); put(pr + 2, 9);\n\
             o[4] = l[1]; o[5] = pr[2];",
            std,
        );
        assert_eq!(o[..6], [1000, 6, 60, 7, 5, 9], "{std}");
    }
}

#[test]
fn get_fence_of_generic_pointers() {
    let o = run(
        "int *a = g, *b = l, *c = pr;\n\
         o[0] = get_fence(a); o[1] = get_fence(b); o[2] = get_fence(c);",
        "-cl-std=CL3.0",
    );
    // CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE, none.
    assert_eq!(o[..3], [2, 1, 0]);
}

/// to_global/to_local/to_private, and tests of their results: clspv 0.0.1 tests a pointer
/// to a variable through a pointer-to-integer conversion that Vulkan's logical addressing
/// does not have (invalid SPIR-V before compiler::null_checks).
#[test]
fn address_space_casts() {
    let o = run(
        "int *q = l; o[0] = to_global(q) != 0; o[1] = to_local(q) != 0;\n\
         o[2] = to_private(q) != 0;\n\
         int *r = pr; o[3] = to_private(r) != 0; o[4] = to_local(r) == 0;\n\
         int *s = g; global int *gs = to_global(s); if (gs) o[5] = gs[1];\n\
         local int *ls = to_local(q); if (ls) o[6] = ls[3];\n\
         private int *ps = to_private(r); if (ps) o[7] = ps[2];",
        "-cl-std=CL3.0",
    );
    assert_eq!(o, [0, 1, 0, 1, 1, 200, 3, 20]);
}

/// A generic pointer whose address space is chosen at run time: clspv 0.0.1 aborts
/// ("Invalid operands for select instruction"); the build is flat (compiler::generic_flat).
#[test]
fn pointer_chosen_at_run_time() {
    let o = run(
        "int *q = get_global_id(0) ? (int *)l : (int *)g; o[0] = *q;",
        "-cl-std=CL3.0",
    );
    assert_eq!(o[0], 100);
}

/// One generic variable pointed at each address space in turn, in straight-line code: each
/// use sees one space (compiler::generic_spaces must not refuse it).
#[test]
fn one_variable_pointed_at_each_space_in_turn() {
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let o = run(
            "int *p = g; o[0] = *p; o[1] = get_fence(p);\n\
             p = l; o[2] = p[1]; o[3] = get_fence(p);\n\
             p = pr; o[4] = p[2]; o[5] = to_private(p) != 0;",
            std,
        );
        assert_eq!(o[..6], [100, 2, 1, 1, 20, 1], "{std}");
    }
}

/// Generic pointers to private and local memory kept in struct members and array elements,
/// read and written back through them, the struct reached through a pointer (clspv made a
/// private address kept there a tagged number it loaded as a global address: lavapipe ran
/// away with the host's memory; such programs are built flat now).
#[test]
fn private_and_local_addresses_kept_in_structs_and_arrays() {
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let o = run(
            "typedef struct { int n; int *p; } ref_t;
             ref_t r; r.n = 3; r.p = pr;
             ref_t *rp = &r;
             o[0] = rp->p[rp->n];
             rp->p[1] = 11; o[1] = pr[1];
             int *ptrs[2]; ptrs[0] = pr + 2; ptrs[1] = pr;
             o[2] = *ptrs[0] + sum(ptrs[1], 4);
             ref_t q; q.n = 1; q.p = l;
             ref_t *qp = &q;
             o[3] = qp->p[qp->n];",
            std,
        );
        assert_eq!(o[..4], [30, 11, 20 + (0 + 11 + 20 + 30), 1], "{std}");
    }
}

/// The same kept in structs initialised by braces (`ref_t r = {3, pr}`): the physical build
/// declares pointer members `ulong` (compiler::pointer_members), which refused the pointer in
/// the initialiser, and clspv aborted on the padding the initialiser clears once the struct is
/// in global memory (compiler::generic_flat); the build failed.
#[test]
fn brace_initialised_structs_keeping_private_and_local_addresses() {
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let o = run(
            "typedef struct { int n; int *p; } ref_t;
             ref_t r = {3, pr};
             ref_t *rp = &r;
             o[0] = rp->p[rp->n];
             rp->p[1] = 11; o[1] = pr[1];
             ref_t q = {1, l}, s = {.p = pr + 2, .n = 1};
             ref_t *qp = &q;
             o[2] = qp->p[qp->n] + s.p[s.n];",
            std,
        );
        assert_eq!(o[..3], [30, 11, 1 + 30], "{std}");
    }
}

/// A helper that chooses between two pointers at run time, called with pointers of one space.
#[test]
fn a_choice_between_pointers_of_one_space() {
    let src = "int *pick(int *a, int *b, int c) { return c ? a : b; }\n\
               kernel void k(global int *o) {\n\
               local int l[2]; l[0] = 5; l[1] = 6; int pr[2] = {7, 8};\n\
               int t = get_global_id(0) % 2;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               o[0] = *pick(l, l + 1, t); o[1] = *pick(pr, pr + 1, t);\n\
               o[2] = *pick(o + 4, o + 5, t); }";
    let e = Env::new();
    let p = e.program(src, "-cl-std=CL3.0");
    let k = kernel(p, "k");
    let o = e.buffer_from(&[-1i32, -1, -1, -1, 40, 50]);
    arg(k, 0, &o);
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<i32>(o, 3), [6, 8, 50]);
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// Runs kernel `k(global int *out, global int *g)` of `src` over `global` work-items in
/// groups of `local`, `g` holding 10 * i; returns (out, g), `n` of each.
fn run_chosen(src: &str, std: &str, global: usize, local: usize, n: usize) -> (Vec<i32>, Vec<i32>) {
    let e = Env::new();
    let p = e.program(src, std);
    let k = kernel(p, "k");
    let out = e.buffer_from(&vec![-1i32; n]);
    let g = e.buffer_from(&(0..n as i32).map(|i| 10 * i).collect::<Vec<_>>());
    arg(k, 0, &out);
    arg(k, 1, &g);
    e.run(k, None, &[global], Some(&[local]));
    let r = (e.read::<i32>(out, n), e.read::<i32>(g, n));
    for m in [out, g] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    r
}

const CLK_LOCAL_MEM_FENCE: u32 = 1;
const CLK_GLOBAL_MEM_FENCE: u32 = 2;
const STDS: [&str; 2] = ["-cl-std=CL2.0", "-cl-std=CL3.0"];

/// Each work-item's pointer: t % 3 == 0 global (g[t]), 1 local (l[lid]), 2 private (p).
fn three_way_model(t: usize, lid: usize) -> (i32, i32) {
    let t32 = t as i32;
    let out = match t % 3 {
        0 => 10 * t32 + t32,
        1 => 100 + lid as i32 + t32,
        _ => 1000 + t32,
    };
    let g = if t % 3 == 0 { 11 * t32 } else { 10 * t32 };
    (out, g)
}

fn check_three_way(name: &str, std: &str, out: &[i32], g: &[i32], global: usize, local: usize) {
    for t in 0..global {
        let (o, gv) = three_way_model(t, t % local);
        assert_eq!((out[t], g[t]), (o, gv), "{name} {std}: work-item {t}");
    }
}

/// A generic pointer chosen with `?:` among a global, a local and a private variable, per
/// work-item (the build is flat: compiler::generic_flat), over several work-groups.
#[test]
fn conditional_choice_of_three_address_spaces() {
    let src = "kernel void k(global int *out, global int *g) {\n\
               local int l[8]; int p = 1000;\n\
               int t = get_global_id(0), lid = get_local_id(0);\n\
               l[lid] = 100 + lid;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               int *q = t % 3 == 0 ? (int *)&g[t] : (t % 3 == 1 ? (int *)&l[lid] : (int *)&p);\n\
               *q += t;\n\
               out[t] = *q; }";
    for std in STDS {
        let (out, g) = run_chosen(src, std, 24, 8, 24);
        check_three_way("?:", std, &out, &g, 24, 8);
    }
}

/// The same choice made with if/else assignments (clspv alone miscompiled it), read back
/// through a helper function.
#[test]
fn if_else_choice_of_three_address_spaces() {
    let src = "int get(int *p) { return *p; }\n\
               void add(int *p, int v) { *p += v; }\n\
               kernel void k(global int *out, global int *g) {\n\
               local int l[8]; int p[2] = {1000, 2000};\n\
               int t = get_global_id(0), lid = get_local_id(0);\n\
               l[lid] = 100 + lid;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               int *q;\n\
               if (t % 3 == 0) q = &g[t]; else if (t % 3 == 1) q = &l[lid]; else q = &p[0];\n\
               add(q, t);\n\
               out[t] = get(q); }";
    for std in STDS {
        let (out, g) = run_chosen(src, std, 24, 8, 24);
        check_three_way("if/else", std, &out, &g, 24, 8);
    }
}

/// The same with work-groups of different sizes (30 work-items in groups of 8): each
/// work-item's private variables and each group's locals stay its own.
#[test]
fn choice_of_three_address_spaces_in_non_uniform_work_groups() {
    let src = "kernel void k(global int *out, global int *g) {\n\
               local int l[8]; int p = 1000;\n\
               int t = get_global_id(0), lid = get_local_id(0);\n\
               l[lid] = 100 + lid;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               int *q = t % 3 == 0 ? (int *)&g[t] : (t % 3 == 1 ? (int *)&l[lid] : (int *)&p);\n\
               *q += t;\n\
               out[t] = *q; }";
    let (out, g) = run_chosen(src, "-cl-std=CL3.0", 30, 8, 30);
    check_three_way("non-uniform", "-cl-std=CL3.0", &out, &g, 30, 8);
}

/// to_global, to_local, to_private and get_fence of a pointer chosen at run time: the
/// pointer itself in its own space, NULL in the others (OpenCL C 6.15.4); get_fence is
/// CLK_GLOBAL_MEM_FENCE for global memory, CLK_LOCAL_MEM_FENCE for local memory, and a valid
/// fence value for private memory.
#[test]
fn address_space_queries_of_a_chosen_pointer() {
    let src = "kernel void k(global int *out, global int *g) {\n\
               local int l[8]; int p = 5;\n\
               int t = get_global_id(0), lid = get_local_id(0);\n\
               int *q = t % 3 == 0 ? (int *)&g[t] : (t % 3 == 1 ? (int *)&l[lid] : (int *)&p);\n\
               out[5 * t] = to_global(q) == (global int *)q;\n\
               out[5 * t + 1] = (to_global(q) != 0) + 2 * (to_local(q) != 0) + 4 * (to_private(q) != 0);\n\
               out[5 * t + 2] = to_local(q) == (local int *)q;\n\
               out[5 * t + 3] = get_fence(q);\n\
               private int *pp = to_private(q); if (pp) *pp = 7;\n\
               out[5 * t + 4] = *q; }";
    for std in STDS {
        let (out, _) = run_chosen(src, std, 12, 4, 60);
        for t in 0..12 {
            let o = &out[5 * t..5 * t + 5];
            let what = format!("{std}: work-item {t}: {o:?}");
            match t % 3 {
                0 => assert_eq!(
                    o,
                    [1, 1, 0, CLK_GLOBAL_MEM_FENCE as i32, 10 * t as i32],
                    "{what}"
                ),
                1 => {
                    assert_eq!(o[1..4], [2, 1, CLK_LOCAL_MEM_FENCE as i32], "{what}");
                    assert_eq!(o[0], 0, "{what}");
                }
                _ => {
                    assert_eq!((o[0], o[1], o[2], o[4]), (0, 4, 0, 7), "{what}");
                    let valid = CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE;
                    assert!(o[3] != 0 && o[3] as u32 & !valid == 0, "{what}");
                }
            }
        }
    }
}

/// Work-items write the work-group's `__local` array through pointers chosen at run time,
/// wait at barrier(CLK_LOCAL_MEM_FENCE) and read their neighbours' values through such
/// pointers: each of several work-groups sees its own array (the locals are laid out per
/// group in global memory, and the fence covers them).
#[test]
fn local_memory_shared_through_chosen_pointers_in_each_work_group() {
    let src = "kernel void k(global int *out, global int *g) {\n\
               local int l[8];\n\
               int t = get_global_id(0), lid = get_local_id(0), grp = get_group_id(0);\n\
               int *q = g[t] >= 0 ? (int *)&l[lid] : (int *)&out[t];\n\
               *q = 100 * grp + lid;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               int *r = g[t] >= 0 ? (int *)l : (int *)out;\n\
               out[t] = r[(lid + 1) % 8]; }";
    for std in STDS {
        let (out, _) = run_chosen(src, std, 64, 8, 64);
        let want: Vec<i32> = (0..64).map(|t| 100 * (t / 8) + (t % 8 + 1) % 8).collect();
        assert_eq!(out, want, "{std}");
    }
}

/// An atomic increment of a `__local` counter through a pointer chosen at run time, by every
/// work-item of several work-groups.
#[test]
fn atomic_increment_of_a_local_variable_through_a_chosen_pointer() {
    let src = "kernel void k(global int *out, global int *g) {\n\
               local int cnt; int lid = get_local_id(0), grp = get_group_id(0);\n\
               if (lid == 0) cnt = 10 * grp;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               int *q = g[get_global_id(0)] >= 0 ? (int *)&cnt : (int *)&out[63];\n\
               atomic_fetch_add_explicit((volatile atomic_int *)q, 1, memory_order_relaxed, memory_scope_work_group);\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               if (lid == 0) out[grp] = cnt; }";
    for std in STDS {
        let (out, _) = run_chosen(src, std, 64, 16, 4);
        assert_eq!(out, [16, 26, 36, 46], "{std}");
    }
}

/// A flat program through its binary (clGetProgramInfo BINARIES, clCreateProgramWithBinary)
/// runs as built from source; the hidden scratch argument is not among the kernel's
/// arguments (CL_KERNEL_NUM_ARGS, clSetKernelArg).
#[test]
fn chosen_pointers_from_a_program_binary() {
    let src = "kernel void k(global int *out, global int *g) {\n\
               local int l[8]; int p = 1000;\n\
               int t = get_global_id(0), lid = get_local_id(0);\n\
               l[lid] = 100 + lid;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               int *q = t % 3 == 0 ? (int *)&g[t] : (t % 3 == 1 ? (int *)&l[lid] : (int *)&p);\n\
               *q += t;\n\
               out[t] = *q; }";
    let e = Env::new();
    let built = e.program(src, "-cl-std=CL3.0");
    let bin = binaries(built).swap_remove(0);
    let (p, status, err) = from_binaries(e.ctx, &[e.dev], &[&bin]);
    assert_eq!((status[0], err), (CL_SUCCESS, CL_SUCCESS));
    check!(clBuildProgram(p, 1, &e.dev, null(), None, null_mut()));
    for program in [built, p] {
        let k = kernel(program, "k");
        assert_eq!(kernel_val::<cl_uint>(k, CL_KERNEL_NUM_ARGS), 2);
        // The `__local` array, laid out in the scratch buffer, still counts.
        assert!(wg_val::<u64>(k, e.dev, CL_KERNEL_LOCAL_MEM_SIZE) >= 32);
        let x = 0i32;
        assert_eq!(
            unsafe { clSetKernelArg(k, 2, 4, (&x as *const i32).cast()) },
            CL_INVALID_ARG_INDEX
        );
        let out = e.buffer_from(&[-1i32; 24]);
        let g = e.buffer_from(&(0..24).map(|i| 10 * i).collect::<Vec<i32>>());
        arg(k, 0, &out);
        arg(k, 1, &g);
        e.run(k, None, &[24], Some(&[8]));
        check_three_way(
            "binary",
            "",
            &e.read::<i32>(out, 24),
            &e.read::<i32>(g, 24),
            24,
            8,
        );
        for m in [out, g] {
            check!(clReleaseMemObject(m));
        }
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(program));
    }
}

/// `__local` pointer arguments (sized by clSetKernelArg) in a program that chooses a pointer's
/// space at run time: each work-group's memory of both arguments and of a `__local` variable
/// is its own and apart from the others' (the runtime lays the arguments out in the flat
/// build's scratch buffer at each launch), also from a program binary.
#[test]
fn chosen_pointers_with_local_arguments() {
    let src = "kernel void k(global int *out, local int *a, local short *b) {\n\
               local int v[2];\n\
               int t = get_global_id(0), lid = get_local_id(0), grp = get_group_id(0);\n\
               a[lid] = 1000 * grp + lid; b[lid] = (short)(10 * lid + grp);\n\
               if (lid < 2) v[lid] = -grp - lid;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               int *q = t % 3 == 0 ? (int *)&out[64 + t] : (t % 3 == 1 ? (int *)&a[(lid + 1) % 8] : (int *)&v[lid % 2]);\n\
               out[t] = *q + b[(lid + 7) % 8]; }";
    // Work-item t's value: its pointer's target plus its neighbour's short.
    let want: Vec<i32> = (0..64)
        .map(|t| {
            let (lid, grp) = (t % 8, t / 8);
            let target = match t % 3 {
                0 => 7 * t,
                1 => 1000 * grp + (lid + 1) % 8,
                _ => -grp - lid % 2,
            };
            target + 10 * ((lid + 7) % 8) + grp
        })
        .collect();
    let e = Env::new();
    for std in STDS {
        let built = e.program(src, std);
        let bin = binaries(built).swap_remove(0);
        let (from_binary, status, err) = from_binaries(e.ctx, &[e.dev], &[&bin]);
        assert_eq!((status[0], err), (CL_SUCCESS, CL_SUCCESS));
        check!(clBuildProgram(
            from_binary,
            1,
            &e.dev,
            null(),
            None,
            null_mut()
        ));
        for p in [built, from_binary] {
            let k = kernel(p, "k");
            assert_eq!(kernel_val::<cl_uint>(k, CL_KERNEL_NUM_ARGS), 3);
            let init: Vec<i32> = (0..128)
                .map(|i| if i < 64 { -1 } else { 7 * (i - 64) })
                .collect();
            let out = e.buffer_from(&init);
            arg(k, 0, &out);
            arg_local(k, 1, 8 * 4);
            arg_local(k, 2, 8 * 2);
            e.run(k, None, &[64], Some(&[8]));
            assert_eq!(e.read::<i32>(out, 64), want, "{std}");
            check!(clReleaseMemObject(out));
            check!(clReleaseKernel(k));
            check!(clReleaseProgram(p));
        }
    }
}

/// The conformance suite's generic_atomics_invariant and generic_atomics_variant shapes: a
/// generic `atomic_int *` pointed at a global counter or at a `__local` argument, chosen per
/// work-group or per work-item, incremented by every work-item of two work-groups.
#[test]
fn atomics_on_a_local_argument_or_a_global_through_a_chosen_pointer() {
    let invariant = "kernel void k(global atomic_int *g, local atomic_int *l) {\n\
                     int lid = get_local_id(0), grp = get_group_id(0), n = get_local_size(0);\n\
                     if (lid == 0) atomic_store(l, 0);\n\
                     barrier(CLK_LOCAL_MEM_FENCE);\n\
                     atomic_int *p = g + grp;\n\
                     if (grp % 2 == 0) p = l;\n\
                     int old = atomic_fetch_add(p, 1);\n\
                     if (grp % 2 == 0 && old == n - 1) atomic_store(&g[grp], old); }";
    let variant = "kernel void k(global atomic_int *g, local atomic_int *l) {\n\
                   int lid = get_local_id(0), grp = get_group_id(0);\n\
                   if (lid == 0) atomic_store(l, 0);\n\
                   barrier(CLK_LOCAL_MEM_FENCE);\n\
                   atomic_int *p = g + 2 * grp;\n\
                   if (lid % 2 == 0) p = l;\n\
                   atomic_fetch_add(p, 1);\n\
                   barrier(CLK_LOCAL_MEM_FENCE);\n\
                   if (lid == 0) atomic_store(&g[2 * grp + 1], atomic_load(l)); }";
    let e = Env::new();
    // Implicit (seq_cst, device scope) atomics are OpenCL C 2.0's; 3.0 makes them optional.
    for (src, want) in [(invariant, [15, 16, 0, 0]), (variant, [8, 8, 8, 8])] {
        let p = e.program(src, "-cl-std=CL2.0");
        let k = kernel(p, "k");
        let g = e.buffer_from(&[0i32; 4]);
        arg(k, 0, &g);
        arg_local(k, 1, 4);
        e.run(k, None, &[32], Some(&[16]));
        assert_eq!(e.read::<i32>(g, 4), want, "{src}");
        check!(clReleaseMemObject(g));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// The conformance suite's shapes that the build used to refuse: a program-scope variable
/// or a local one chosen by if/else, and a three-way `?:` passed down two helpers.
#[test]
fn conformance_shapes_of_chosen_pointers() {
    let cases = [
        (
            "if/else",
            "global int gint = 1;\n\
             kernel void k(global int *results, global int *g) {\n\
             uint tid = get_global_id(0);\n\
             int *ptr; local int lint; lint = 2;\n\
             if (tid % 2) ptr = &gint; else ptr = &lint;\n\
             barrier(CLK_GLOBAL_MEM_FENCE);\n\
             results[tid] = *ptr == (tid % 2 ? 1 : 2) && (tid % 2 ? to_global(ptr) != 0 : to_local(ptr) != 0); }",
        ),
        (
            "three-way",
            "global int gint = 1;\n\
             int f4(int val, int *ptr) { return (get_fence(ptr) && val == *ptr) ? 1 : 0; }\n\
             int f3(int val, int *ptr) { return f4(val, ptr); }\n\
             kernel void k(global int *results, global int *g) {\n\
             uint tid = get_global_id(0);\n\
             local int lint; lint = 2; int pint = 3;\n\
             int *p = tid % 2 ? (int *)&gint : (tid % 3 ? (int *)&pint : (int *)&lint);\n\
             results[tid] = f3(*p, p) + f3(1, &gint); }",
        ),
        (
            "helper",
            "int *pick(int *a, int *b, int c) { return c ? a : b; }\n\
             kernel void k(global int *results, global int *g) {\n\
             local int l[2]; l[0] = 5; barrier(CLK_LOCAL_MEM_FENCE);\n\
             int t = get_global_id(0);\n\
             results[t] = *pick(l, g + t + 1, t % 2); }",
        ),
    ];
    for (name, src) in cases {
        for std in STDS {
            let (out, _) = run_chosen(src, std, 12, 4, 12);
            let want = match name {
                "if/else" => vec![1; 12],
                "helper" => (0..12)
                    .map(|t| if t % 2 == 1 { 5 } else { 10 * t + 10 })
                    .collect(),
                _ => vec![2; 12],
            };
            assert_eq!(out, want, "{name} {std}");
        }
    }
}

/// The conformance suite's language_union and language_struct shapes: pointers to a global,
/// a `__local` and a private variable kept in a union or a struct in private, `__local` or
/// global memory, read back through the generic address space. clspv 0.0.1's physical build
/// converted the `__local` and private ones to integers invalidly (lavapipe crashed); such
/// programs build flat.
#[test]
fn pointers_to_every_space_kept_in_unions_and_structs() {
    // Each case declares `u` (a union or struct with members g, l, p); work-item t of the
    // group writes its reads at out[3 * t..].
    let body = "int t = get_global_id(0), lid = get_local_id(0), grp = get_group_id(0);\n\
                l = 100 + grp; int p = 1000 + t;\n\
                barrier(CLK_LOCAL_MEM_FENCE);\n\
                if (SOLO) {\n\
                U_G = &gv[grp]; out[3 * t] = *U_G + 2 * (to_global(U_G) != 0);\n\
                U_L = &l; out[3 * t + 1] = *U_L + 2 * (to_local(U_L) != 0);\n\
                U_P = &p; out[3 * t + 2] = *U_P + 2 * (to_private(U_P) != 0) + 4 * (to_local(U_P) != 0);\n\
                }";
    let cases = [
        (
            "private union",
            "",
            "local int l; union { global int *g; local int *l; private int *p; } u;",
            "1",
            "u.g",
            "u.l",
            "u.p",
        ),
        (
            "local union",
            "",
            "local int l; local union { global int *g; local int *l; private int *p; } u[8];",
            "1",
            "u[lid].g",
            "u[lid].l",
            "u[lid].p",
        ),
        (
            "global union",
            "typedef union { global int *g; local int *l; private int *p; } U;\nglobal U u[64];",
            "local int l;",
            "1",
            "u[t].g",
            "u[t].l",
            "u[t].p",
        ),
        (
            "global struct",
            "typedef struct { global int *g; local int *l; private int *p; } S;\nglobal S s;",
            "local int l;",
            "t == 0",
            "s.g",
            "s.l",
            "s.p",
        ),
    ];
    let e = Env::new();
    for (name, globals, decl, solo, g, l, p) in cases {
        let b = body
            .replace("SOLO", solo)
            .replace("U_G", g)
            .replace("U_L", l)
            .replace("U_P", p);
        let src =
            format!("{globals}\nkernel void k(global int *out, global int *gv) {{\n{decl}\n{b} }}");
        for std in STDS {
            let prog = e.program(&src, std);
            let k = kernel(prog, "k");
            let out = e.buffer_from(&[-1i32; 3 * 32]);
            let gv = e.buffer_from(&[10i32, 20, 30, 40]);
            arg(k, 0, &out);
            arg(k, 1, &gv);
            e.run(k, None, &[32], Some(&[8]));
            let got = e.read::<i32>(out, 3 * 32);
            for t in 0..32 {
                let grp = (t / 8) as i32;
                let want = match solo == "1" || t == 0 {
                    true => [10 * (grp + 1) + 2, 100 + grp + 2, 1000 + t as i32 + 2],
                    false => [-1; 3],
                };
                assert_eq!(got[3 * t..3 * t + 3], want, "{name} {std}: work-item {t}");
            }
            for m in [out, gv] {
                check!(clReleaseMemObject(m));
            }
            check!(clReleaseKernel(k));
            check!(clReleaseProgram(prog));
        }
    }
}

/// The conformance suite's generic_advanced_casting and generic_variable_volatile shapes: a
/// volatile pointer variable (generic or global) holding a program-scope array's address,
/// cast to another element type; clspv 0.0.1 crashed on it (compiler::volatile_pointers).
/// And a `__local` int reached through a generic `short *`, cast back.
#[test]
fn volatile_pointer_variables_and_casts_between_element_types() {
    let src = "global uchar bytes[16] = { 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3 };\n\
               global int words[2] = { 5, 6 };\n\
               kernel void k(global int *out, global int *g) {\n\
               int t = get_global_id(0);\n\
               const int * volatile p = (const int *)bytes;\n\
               global int * volatile q = &words[t % 2];\n\
               local int l; l = 0x11112222 + get_group_id(0);\n\
               short *s = (short *)&l; local int *back = (local int *)s;\n\
               out[4 * t] = p[t % 4]; out[4 * t + 1] = *q;\n\
               out[4 * t + 2] = back == &l; out[4 * t + 3] = *back; }";
    for std in STDS {
        let (out, _) = run_chosen(src, std, 16, 8, 64);
        for t in 0..16 {
            let byte = (t % 4) as i32;
            let want = [
                byte * 0x01010101,
                5 + (t % 2) as i32,
                1,
                0x11112222 + (t / 8) as i32,
            ];
            assert_eq!(out[4 * t..4 * t + 4], want, "{std}: work-item {t}");
        }
    }
}

/// The conformance suite's builtin_functions vstore shapes for 8- and 16-bit types: vstoreN
/// through a generic pointer into a program-scope, `__local` or private array, then a loop
/// comparing it with a reference array. LLVM vectorizes that loop into a mask of booleans
/// that clspv 0.0.1 wrote as an invalid bitcast (compiler::bool_masks); the launch failed.
#[test]
fn vstore_through_generic_pointers_into_small_integer_arrays() {
    for ty in ["char", "ushort"] {
        for n in [3usize, 16] {
            for space in ["global", "local", "private"] {
                let init = "for (int i = 0; i < 100; i++) { d[i] = i; r[i] = i; }";
                let (globals, decl, fill) = match space {
                    "global" => (format!("global {ty} d[100], r[100];"), String::new(), init),
                    "local" => (String::new(), format!("local {ty} d[100], r[100];"), init),
                    _ => (String::new(), format!("{ty} d[100], r[100];"), init),
                };
                let src = format!(
                    "{globals}\nkernel void k(global int *out, global int *g) {{\n\
                     int t = get_global_id(0); {decl}\n\
                     if (t == 0 || {private}) {{ {fill} }}\n\
                     barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n\
                     {ty} *p = d;\n\
                     if (t == 0 || {private}) {{ vstore{n}(({ty}{n})(1), 2, p); vstore{n}(({ty}{n})(1), 2, r); }}\n\
                     barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n\
                     bool same = true;\n\
                     for (int i = 0; i < 100; i++) if (d[i] != r[i]) same = false;\n\
                     out[3 * t] = same; out[3 * t + 1] = d[2 * {n}]; out[3 * t + 2] = d[2 * {n} - 1]; }}",
                    private = (space == "private") as i32,
                );
                let (out, _) = run_chosen(&src, "-cl-std=CL3.0", 4, 4, 12);
                for t in 0..4 {
                    let want = [1, 1, 2 * n as i32 - 1];
                    assert_eq!(
                        out[3 * t..3 * t + 3],
                        want,
                        "{ty}{n} {space}: work-item {t}"
                    );
                }
            }
        }
    }
}

/// The conformance suite's library_function shape: a helper on a generic pointer compiled
/// into a library (clLinkProgram -create-library) and linked with a kernel that calls it
/// with pointers to a program-scope, a `__local` and a private variable.
#[test]
fn a_library_function_on_generic_pointers() {
    let library = "bool check(float *p, float v) { uint f = get_fence(p);\n\
                   return (f == 0 || f == CLK_GLOBAL_MEM_FENCE || f == CLK_LOCAL_MEM_FENCE) && *p == v; }";
    let src = "extern bool check(float *p, float v);\n\
               global float gf = 1.0f;\n\
               kernel void k(global int *out, global int *g) {\n\
               local float lf; lf = 2.0f; float pf = 3.0f;\n\
               int t = get_global_id(0);\n\
               out[3 * t] = check(&gf, gf); out[3 * t + 1] = check(&lf, lf);\n\
               out[3 * t + 2] = check(&pf, pf) + check(&pf, 4.0f); }";
    let e = Env::new();
    for std in [c"-cl-std=CL2.0", c"-cl-std=CL3.0"] {
        let lib_obj = e.compiled(library, std);
        let obj = e.compiled(src, std);
        let (lib, err) = e.linked(Some(c"-create-library"), &[lib_obj]);
        assert_eq!(err, CL_SUCCESS, "{std:?}: {}", err_name(err));
        let (p, err) = e.linked(None, &[obj, lib]);
        assert_eq!(
            err,
            CL_SUCCESS,
            "{std:?}: {}",
            build_str(p, e.dev, CL_PROGRAM_BUILD_LOG)
        );
        let k = kernel(p, "k");
        let out = e.buffer_from(&[-1i32; 24]);
        arg(k, 0, &out);
        arg(k, 1, &out);
        e.run(k, None, &[8], Some(&[4]));
        assert_eq!(e.read::<i32>(out, 24), [1; 24], "{std:?}");
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
        for q in [p, lib, obj, lib_obj] {
            check!(clReleaseProgram(q));
        }
    }
}

/// The conformance suite's generic_ptr_to_host_mem(_svm) shapes: a helper on a generic
/// pointer to the work-item's element of a buffer over host memory (CL_MEM_USE_HOST_PTR, of
/// an ordinary and of a fine-grained SVM allocation where the device has SVM) and of a
/// `__local` argument the size of the whole range.
#[test]
fn generic_pointers_to_host_memory_and_local_arguments() {
    extern "C" {
        fn clSVMAlloc(
            c: cl_context,
            flags: cl_bitfield,
            size: usize,
            align: cl_uint,
        ) -> *mut std::ffi::c_void;
        fn clSVMFree(c: cl_context, p: *mut std::ffi::c_void);
    }
    const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
    const FINE_GRAIN: cl_bitfield = 1 << 10;
    let helper = "bool check(uint *p, uint t) { uint f = get_fence(p);\n\
                  return (f == 0 || f == CLK_GLOBAL_MEM_FENCE || f == CLK_LOCAL_MEM_FENCE) && *p == t; }\n";
    let global = format!(
        "{helper}kernel void k(global uint *out, global uint *buf) {{\n\
         uint t = get_global_id(0); out[t] = check(&buf[t], t) + 2 * check(&buf[t], t + 1); }}"
    );
    let local = format!(
        "{helper}kernel void k(global uint *out, local uint *buf) {{\n\
         uint t = get_global_id(0), n = get_local_size(0);\n\
         if (get_local_id(0) == 0) for (uint i = 0; i < n; i++) buf[n * get_group_id(0) + i] = n * get_group_id(0) + i;\n\
         work_group_barrier(CLK_LOCAL_MEM_FENCE);\n\
         out[t] = check(&buf[t], t); }}"
    );
    let e = Env::new();
    let svm = device_val::<cl_bitfield>(e.dev, CL_DEVICE_SVM_CAPABILITIES) != 0;
    let n = 64usize;
    let mut host: Vec<u32> = (0..n as u32).collect();
    let svm_ptr = match svm {
        true => unsafe { clSVMAlloc(e.ctx, FINE_GRAIN | CL_MEM_READ_WRITE, 4 * n, 0) },
        false => null_mut(),
    };
    if svm {
        assert!(!svm_ptr.is_null());
        unsafe { std::ptr::copy_nonoverlapping(host.as_ptr(), svm_ptr.cast(), n) };
    }
    for std in STDS {
        let mut memories = vec![host.as_mut_ptr().cast()];
        memories.extend(svm.then_some(svm_ptr));
        for memory in memories {
            let p = e.program(&global, std);
            let k = kernel(p, "k");
            let out = e.buffer_from(&vec![-1i32; n]);
            let buf = e.buffer(CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, 4 * n, memory);
            arg(k, 0, &out);
            arg(k, 1, &buf);
            e.run(k, None, &[n], Some(&[16]));
            assert_eq!(e.read::<i32>(out, n), vec![1; n], "{std} global");
            for m in [out, buf] {
                check!(clReleaseMemObject(m));
            }
            check!(clReleaseKernel(k));
            check!(clReleaseProgram(p));
        }
        let p = e.program(&local, std);
        let k = kernel(p, "k");
        let out = e.buffer_from(&vec![-1i32; n]);
        arg(k, 0, &out);
        arg_local(k, 1, 4 * n);
        e.run(k, None, &[n], Some(&[16]));
        assert_eq!(e.read::<i32>(out, n), vec![1; n], "{std} local");
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
    if svm {
        unsafe { clSVMFree(e.ctx, svm_ptr) };
    }
}

/// The conformance suite's max_number_of_params shape: a helper with as many generic pointer
/// parameters as CL_DEVICE_MAX_PARAMETER_SIZE holds pointers, called with pointers to a
/// global, a `__local` and a private variable mixed.
#[test]
fn a_helper_with_the_most_generic_pointer_parameters() {
    let e = Env::new();
    const CL_DEVICE_MAX_PARAMETER_SIZE: cl_uint = 0x1017;
    let n = device_val::<usize>(e.dev, CL_DEVICE_MAX_PARAMETER_SIZE) / 8;
    let params: String = (1..n).map(|i| format!(", int *p{i}")).collect();
    let names = ["gp", "lp", "pp"];
    let call = |c: usize| -> String {
        let args: String = (1..n)
            .map(|i| format!(", {}", names[(i * 7 + c) % 3]))
            .collect();
        format!("out[{c}] = f({}{args});\n", names[c % 3])
    };
    let src = format!(
        "int f(int *p0{params}) {{ return *p0 + 10 * *p{last} + 100 * (get_fence(p{last}) == CLK_LOCAL_MEM_FENCE); }}\n\
         kernel void k(global int *out, global int *g) {{\n\
         local int l; l = 2; int p = 3;\n\
         global int *gp = g; local int *lp = &l; private int *pp = &p;\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n\
         {} }}",
        (0..6).map(call).collect::<String>(),
        last = n - 1
    );
    let value = [1, 2, 3];
    let want: Vec<i32> = (0..6)
        .map(|c| {
            let last = ((n - 1) * 7 + c) % 3;
            value[c % 3] + 10 * value[last] + 100 * (last == 1) as i32
        })
        .collect();
    for std in STDS {
        let p = e.program(&src, std);
        let k = kernel(p, "k");
        let out = e.buffer_from(&[-1i32; 6]);
        let g = e.buffer_from(&[1i32]);
        arg(k, 0, &out);
        arg(k, 1, &g);
        e.run(k, None, &[1], None);
        assert_eq!(e.read::<i32>(out, 6), want, "{std}: {n} parameters");
        for m in [out, g] {
            check!(clReleaseMemObject(m));
        }
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// The conformance suite's compare_pointers and multiple_calls_same_function shapes:
/// generic pointers compared with NULL and with named-space pointers, ordered within one
/// array, and one helper called in loops with a `__local` variable's address.
#[test]
fn generic_pointer_comparisons_and_repeated_calls() {
    let src = "global int arr[5] = { 0, 1, 2, 3, 4 };\n\
               int shift(const int *p, int by) { return *p << by; }\n\
               kernel void k(global int *out, global int *g) {\n\
               int t = get_global_id(0); int v = 7; local int lv; lv = get_group_id(0) + 1;\n\
               int *n = NULL; global int *gn = NULL; local int *ln = NULL; private int *pn = NULL;\n\
               int *q = ln;\n\
               out[8 * t] = (n == NULL) + 2 * (n == gn) + 4 * (n == ln) + 8 * (n == pn);\n\
               out[8 * t + 1] = ((int *)gn == q) && ((int *)ln == q);\n\
               out[8 * t + 2] = (n != &v) + 2 * (n != &lv) + 4 * (n != &arr[0]);\n\
               int *a = &arr[1]; global int *b = &arr[3];\n\
               out[8 * t + 3] = (b >= a) + 2 * (a < b) + 4 * (b - a);\n\
               int fails = 0;\n\
               for (int i = 0; i < 5; i++) fails += shift(&lv, i) != lv << i;\n\
               for (int i = 10; i > 5; i--) fails += shift(&lv, i) != lv << i;\n\
               out[8 * t + 4] = fails; out[8 * t + 5] = shift(&lv, 3); }";
    for std in STDS {
        let (out, _) = run_chosen(src, std, 8, 4, 64);
        for t in 0..8 {
            let grp = (t / 4) as i32;
            let want = [15, 1, 7, 11, 0, (grp + 1) << 3];
            assert_eq!(out[8 * t..8 * t + 6], want, "{std}: work-item {t}");
        }
    }
}

/// The conformance suite's generic_variable_gentype and builtin_functions (math) shapes: a
/// `const T *` helper reading a program-scope or private variable of scalar and vector types,
/// and the math built-ins with a pointer result (fract, frexp, modf, sincos, remquo) given a
/// generic pointer to a private variable.
#[test]
fn generic_pointers_to_every_type_and_math_results() {
    for ty in [
        "char", "uchar16", "short3", "int4", "long2", "ulong8", "float", "float3", "size_t", "bool",
    ] {
        for space in ["static global", "private"] {
            let cmp = if ty.ends_with(char::is_numeric) {
                "all"
            } else {
                ""
            };
            let src = format!(
                "bool same(const {ty} *p, {ty} v) {{ return {cmp}(*p == v); }}\n\
                 kernel void k(global int *out, global int *g) {{\n\
                 {space} {ty} val = ({ty})1; {ty} *ptr = &val;\n\
                 out[get_global_id(0)] = same(ptr, val) + 2 * same(ptr, ({ty})0); }}"
            );
            let (out, _) = run_chosen(&src, "-cl-std=CL3.0", 4, 4, 4);
            assert_eq!(out, [1; 4], "{space} {ty}");
        }
    }
    let src = "kernel void k(global int *out, global int *g) {\n\
               float x = 133.55f, gv, rv; float *p = &gv;\n\
               out[0] = fract(x, p) == fract(x, &rv) && gv == rv;\n\
               int2 ge, re; int2 *q = &ge; float2 y = (float2)(24.12f, 99999.7f);\n\
               out[1] = all(frexp(y, q) == frexp(y, &re)) && all(ge == re);\n\
               out[2] = modf(1234.56789f, p) == modf(1234.56789f, &rv) && gv == rv;\n\
               out[3] = sincos(3.141592f, p) == sincos(3.141592f, &rv) && gv == rv;\n\
               int gi, ri; int *r = &gi;\n\
               out[4] = remquo(1234.56789f, 123.456789f, r) == remquo(1234.56789f, 123.456789f, &ri) && gi == ri;\n\
               out[5] = (int)(*p * 1000); }";
    for std in STDS {
        let (out, _) = run_chosen(src, std, 1, 1, 6);
        assert_eq!(out[..5], [1; 5], "{std}");
        // sincos's cosine through the generic pointer: cos(3.141592f) is -1.0f.
        assert_eq!(out[5], -1000, "{std}");
    }
}

/// The conformance suite's function_to_address_space and function_get_fence shapes: one
/// helper given generic pointers to program-scope, `__local` and private variables of five
/// types, testing to_global/to_local/to_private against NULL. One of those tests was left as
/// a conversion of a `__local` variable's pointer to an integer (compiler::null_checks took
/// a word of the module's "NonSemantic.ClspvReflection.5" for a use of it): invalid in the
/// logical build, whose physical fallback compared with a null PhysicalStorageBuffer pointer
/// (invalid too).
#[test]
fn address_space_tests_of_five_pointer_types_in_one_helper() {
    let src = "global int gi = 1; global uchar gu = 3;\n\
               bool h(int *gp, float *lp, uchar *up, ushort *sp, long *pp) {\n\
               if (to_global(gp) == NULL) return false;\n\
               if (to_local(lp) == NULL) return false;\n\
               if (to_global(up) == NULL) return false;\n\
               if (to_local(sp) == NULL) return false;\n\
               if (to_private(pp) == NULL) return false;\n\
               return *gp == 1 && *lp == 2.0f && *up == 3 && *sp == 4 && *pp == 5; }\n\
               kernel void k(global uint *out) {\n\
               uint t = get_global_id(0);\n\
               local float lf; lf = 2.0f; local ushort ls; ls = 4; long pl = 5;\n\
               global int *gp = &gi; local float *lp = &lf; global uchar *up = &gu;\n\
               local ushort *sp = &ls; private long *pp = &pl;\n\
               out[t] = h(gp, lp, up, sp, pp); }";
    let e = Env::new();
    for std in STDS {
        let p = e.program(src, std);
        let k = kernel(p, "k");
        let out = e.buffer_from(&[7u32; 8]);
        arg(k, 0, &out);
        e.run(k, None, &[8], Some(&[4]));
        assert_eq!(e.read::<u32>(out, 8), [1; 8], "{std}");
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}
