//! The generic address space (OpenCL C 3.0 `__opencl_c_generic_address_space`, 2.0) as far as
//! clspv resolves it after inlining: unqualified pointer parameters of functions called with
//! global, local and private pointers, a null generic pointer, get_fence. What clspv cannot do
//! is in the ignored tests (docs/DECISIONS.md).
#[macro_use]
mod common;
use common::*;

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
/// ("Invalid operands for select instruction"); logical addressing cannot represent it, and
/// the build fails with a log that says so (the last test).
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

/// A generic pointer whose address space is chosen at run time: clspv 0.0.1 aborts on a `?:`
/// and silently miscompiled `if`/`else` assignments (the conformance suite's kernel became
/// `results[tid] = 0`); the build fails instead, with a log that says why.
#[test]
fn pointers_chosen_at_run_time_fail_to_build_with_a_log_that_says_why() {
    let cases = [
        (
            "if/else",
            "global int gint = 1;\n\
             kernel void k(global uint *results) {\n\
             uint tid = get_global_id(0);\n\
             int *ptr; local int lint; lint = 2;\n\
             if (tid % 2) ptr = &gint; else ptr = &lint;\n\
             barrier(CLK_GLOBAL_MEM_FENCE);\n\
             results[tid] = *ptr == (tid % 2 ? 1 : 2) && to_global(ptr); }",
            "kernel k",
            "(global or local)",
        ),
        (
            "?:",
            "kernel void k(global int *g, global int *o) {\n\
             local int l[4]; l[0] = 1; barrier(CLK_LOCAL_MEM_FENCE);\n\
             int *q = get_global_id(0) ? (int *)l : (int *)g; o[0] = *q; }",
            "kernel k",
            "(global or local)",
        ),
        (
            "three-way",
            "global int gint = 1;\n\
             int f4(int val, int *ptr) { return (get_fence(ptr) && val == *ptr) ? 0 : 1; }\n\
             int f3(int val, int *ptr) { return f4(val, ptr); }\n\
             kernel void k(global uint *results) {\n\
             uint tid = get_global_id(0);\n\
             local int lint; lint = 2; int pint = 3;\n\
             int *p = tid % 2 ? (int *)&gint : (tid % 3 ? (int *)&pint : (int *)&lint);\n\
             results[tid] = f3(*p, p) + f3(1, &gint); }",
            "kernel k",
            "(private or global or local)",
        ),
        (
            "helper",
            "int *pick(int *a, int *b, int c) { return c ? a : b; }\n\
             kernel void k(global int *o) {\n\
             local int l[2]; l[0] = 5; barrier(CLK_LOCAL_MEM_FENCE);\n\
             o[0] = *pick(l, o + 1, get_global_id(0) % 2); }",
            "function pick (called from kernel k)",
            "(global or local)",
        ),
    ];
    let e = Env::new();
    for (name, src, place, spaces) in cases {
        for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
            match build_program(e.ctx, e.dev, src, std) {
                Ok(p) => {
                    unsafe { clReleaseProgram(p) };
                    panic!("{name} {std}: built");
                }
                Err((code, log)) => {
                    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE, "{name} {std}\n{log}");
                    let want = format!(
                        "{place}: a generic pointer whose address space is chosen at run time \
                         {spaces} is not supported"
                    );
                    assert!(log.contains(&want), "{name} {std}: no {want:?} in\n{log}");
                }
            }
        }
    }
}
