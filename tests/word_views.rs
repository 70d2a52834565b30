//! Narrower views of pointer arithmetic: `(__global int *)(p + e)` and `(__global int *)&p[e]`
//! with `p` pointing to wider elements (issue 15: pyopencl's GPU scan writes the low words of
//! its 64-bit partial sums through such a view). clspv 0.0.1 keeps `p + e` in units of `p`'s
//! element and drops the view's words within it; vkcl rewrites the cast before clspv
//! (compiler::word_views). Each kernel copies bytes through the view; the reference is the
//! same byte copy on the host.
#[macro_use]
mod common;
use common::*;

/// Elements of T each work-group copies; the buffers hold N + 4.
const N: usize = 16;
/// The offset (in elements of T) of the constant and run-time cases.
const BASE: usize = 3;

/// (T, V, sizeof T, sizeof V): element and view types.
const PAIRS: &[(&str, &str, usize, usize)] = &[
    ("long", "int", 8, 4),
    ("ulong", "uint", 8, 4),
    ("ulong", "short", 8, 2),
    ("long", "char", 8, 1),
    ("long2", "int", 16, 4),
    ("long2", "long", 16, 8),
    ("int", "short", 4, 2),
    ("uint", "uchar", 4, 1),
    ("float", "ushort", 4, 2),
];

/// The view of `p + e` in each form; `helper` takes it in a function of its own.
fn view(form: &str, p: &str, e: &str, v: &str) -> String {
    match form {
        "paren" => format!("(__global {v} *)({p} + {e})"),
        "addr" => format!("(__global {v} *)&{p}[{e}]"),
        "helper" => format!("view({p}, {e})"),
        "local" => format!("(__local {v} *)({p} + {e})"),
        _ => unreachable!(),
    }
}

/// One kernel per (form, read or write, constant or run-time offset), named `form_rw_off`.
fn source(t: &str, v: &str, r: usize) -> String {
    let mut s = format!(
        "__global {v} *view(__global {t} *p, int e) {{ return (__global {v} *)(p + e); }}\n"
    );
    for form in ["paren", "addr", "helper", "local"] {
        for off in ["const", "rt"] {
            // A constant offset into a __local view made clspv 0.0.1 loop forever (in the
            // cast-first form too): compiler::word_views adds a zero LLVM cannot fold.
            let e = if off == "const" { "3" } else { "base" };
            let (rd, wr) = if form == "local" {
                (view(form, "lds", e, v), view(form, "lds", e, v))
            } else {
                (view(form, "in", e, v), view(form, "o", e, v))
            };
            let (copy_in, copy_out) = match form {
                "local" => (
                    format!(
                        "for (int i = l; i < {n}; i += {g}) lds[i] = in[i];
                         barrier(CLK_LOCAL_MEM_FENCE);",
                        n = N + 4,
                        g = N * r
                    ),
                    format!(
                        "barrier(CLK_LOCAL_MEM_FENCE);
                         for (int i = l; i < {n}; i += {g}) o[i] = lds[i];",
                        n = N + 4,
                        g = N * r
                    ),
                ),
                _ => (String::new(), String::new()),
            };
            let zero = match form {
                "local" => format!(
                    "for (int i = l; i < {n}; i += {g}) lds[i] = ({t})0;
                     barrier(CLK_LOCAL_MEM_FENCE);",
                    n = N + 4,
                    g = N * r
                ),
                _ => String::new(),
            };
            s += &format!(
                "__kernel void {form}_r_{off}(__global {t} *in, __global {t} *o, int base) {{
                    __local {t} lds[{n}]; int l = get_global_id(0); {copy_in}
                    ((__global {v} *)o)[{r} * {e} + l] = ({rd})[l];
                }}
                __kernel void {form}_w_{off}(__global {t} *in, __global {t} *o, int base) {{
                    __local {t} lds[{n}]; int l = get_global_id(0); {zero}
                    ({wr})[l] = ((__global {v} *)in)[{r} * {e} + l]; {copy_out}
                }}\n",
                n = N + 4
            );
        }
    }
    s
}

/// The kernels of one (T, V) pair that give bytes other than the reference's.
fn wrong_kernels(e: &Env, t: &str, v: &str, size_t: usize, size_v: usize) -> Vec<String> {
    let r = size_t / size_v;
    let p = e.program(&source(t, v, r), "");
    let bytes = (N + 4) * size_t;
    let input: Vec<u8> = (0..bytes).map(|i| (i * 37 % 251 + 1) as u8).collect();
    let inp = e.buffer_from(&input);
    let out = e.buffer(CL_MEM_READ_WRITE, bytes, std::ptr::null_mut());
    let mut wrong = vec![];
    for form in ["paren", "addr", "helper", "local"] {
        for rw in ["r", "w"] {
            for (off, base) in [("const", BASE), ("rt", BASE), ("rt", 0)] {
                let name = format!("{form}_{rw}_{off}");
                let k = kernel(p, &name);
                e.write(out, &vec![0u8; bytes]);
                arg(k, 0, &inp);
                arg(k, 1, &out);
                arg(k, 2, &(base as cl_int));
                let local = (form == "local").then_some([N * r]);
                e.run(k, None, &[N * r], local.as_ref().map(|l| &l[..]));
                let mut want = vec![0u8; bytes];
                let span = base * size_t..(base + N) * size_t;
                want[span.clone()].copy_from_slice(&input[span]);
                if e.read::<u8>(out, bytes) != want {
                    wrong.push(format!("{t}->{v} {name} base={base}"));
                }
                unsafe { clReleaseKernel(k) };
            }
        }
    }
    unsafe {
        clReleaseMemObject(inp);
        clReleaseMemObject(out);
        clReleaseProgram(p);
    }
    wrong
}

#[test]
fn narrower_views_of_pointer_arithmetic() {
    let e = Env::new();
    let wrong: Vec<String> = PAIRS
        .iter()
        .flat_map(|&(t, v, st, sv)| wrong_kernels(&e, t, v, st, sv))
        .collect();
    assert!(wrong.is_empty(), "wrong bytes: {wrong:#?}");
}

#[test]
fn narrower_views_of_double_pointer_arithmetic() {
    let e = Env::new();
    if !device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64") {
        eprintln!("no cl_khr_fp64: no double case");
        return;
    }
    let wrong = wrong_kernels(&e, "double", "float", 8, 4);
    assert!(wrong.is_empty(), "wrong bytes: {wrong:#?}");
}

/// pyopencl's GPU scan shape: the words of a packed struct's member in a 2D `__local` array read through
/// `(__local V *)&(ldata[i][j].value)`, and the same from a `__global` array of the struct.
const MEMBER_SOURCE: &str = r#"
struct __attribute__((packed)) w { M v; int d; };
__kernel void local_member(__global const M *in, __global V *o) {
    __local struct w ld[4][5];
    int l = get_local_id(0);
    if (l < 16) { ld[l % 4][l / 4].v = in[l]; ld[l % 4][l / 4].d = -l; }
    barrier(CLK_LOCAL_MEM_FENCE);
    int idx = l / R, rem = l - idx * R;
    if (idx < 16) {
        __local V *s = (__local V *) &(
            ld[idx % 4][idx / 4].v);
        o[l] = s[rem];
    }
}
__kernel void global_member(__global const struct w *a, __global V *o) {
    int l = get_global_id(0);
    int idx = l / R, rem = l - idx * R;
    __global const V *s = (__global const V *)&a[idx].v;
    o[l] = s[rem];
}
"#;

/// The `__local` member at constant indices (clspv 0.0.1 looped on the rewritten form's
/// constant offset, and dropped the word index of the form as written), and through a pointer
/// to the member taken in an earlier statement (every view read the member's first word or
/// half-word).
const LEFT_MEMBER_SOURCE: &str = r#"
struct __attribute__((packed)) w { M v; int d; };
__kernel void constant_local_member(__global const M *in, __global V *o) {
    __local struct w ld[4][5];
    int l = get_local_id(0);
    if (l < 16) { ld[l % 4][l / 4].v = in[l]; ld[l % 4][l / 4].d = -l; }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Element 9 of `in`, R views of it.
    if (l < R) {
        __local V *s = (__local V *) &(ld[1][2].v);
        o[l] = s[l];
    }
}
__kernel void earlier_local_member(__global const M *in, __global V *o) {
    __local struct w ld[4][5];
    int l = get_local_id(0);
    if (l < 16) { ld[l % 4][l / 4].v = in[l]; ld[l % 4][l / 4].d = -l; }
    barrier(CLK_LOCAL_MEM_FENCE);
    int idx = l / R, rem = l - idx * R;
    if (idx < 16) {
        __local M *m = &ld[idx % 4][idx / 4].v;
        __local V *s = (__local V *)m;
        o[l] = s[rem];
    }
}
"#;

#[repr(C, packed)]
#[derive(Clone, Copy)]
struct Wrapped {
    v: u64,
    d: i32,
}

/// The 8-byte member's values (as bits); `double` ones are normal numbers.
fn member_values(m: &str) -> Vec<u64> {
    let sign_exponent = if m == "double" { 0x3ff0 << 48 } else { 0 };
    (0..16u64)
        .map(|i| ((i + 1) * 0x1_0000_0001 + (i << 40)) | sign_exponent)
        .collect()
}

/// Runs the member kernels `names` of `src` for a member of type M and V of `size` bytes; returns the
/// kernels whose output differs from the member's bytes.
fn member_views(e: &Env, src: &str, names: &[&str], m: &str, v: &str, size: usize) -> Vec<String> {
    let r = 8 / size;
    let p = e.program(src, &format!("-DM={m} -DV={v} -DR={r}"));
    let values = member_values(m);
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let inp = e.buffer_from(&values);
    let structs: Vec<Wrapped> = values.iter().map(|&v| Wrapped { v, d: -1 }).collect();
    let structs = e.buffer_from(&structs);
    let mut wrong = vec![];
    let kernels = [
        ("local_member", inp, &bytes[..]),
        ("global_member", structs, &bytes[..]),
        ("constant_local_member", inp, &bytes[9 * 8..10 * 8]),
        ("earlier_local_member", inp, &bytes[..]),
    ];
    for (name, input, want) in kernels.into_iter().filter(|k| names.contains(&k.0)) {
        let out = e.buffer_from(&[0u8; 16 * 8]);
        let k = kernel(p, name);
        arg(k, 0, &input);
        arg(k, 1, &out);
        e.run(k, None, &[16 * r], Some(&[16 * r]));
        let got = e.read::<u8>(out, want.len());
        if got != want {
            wrong.push(format!(
                "{name}: {v} of {m}: {:02x?}, want {:02x?}",
                &got[..16.min(got.len())],
                &want[..16.min(want.len())]
            ));
        }
        unsafe {
            clReleaseKernel(k);
            clReleaseMemObject(out);
        }
    }
    unsafe {
        clReleaseMemObject(inp);
        clReleaseMemObject(structs);
        clReleaseProgram(p);
    }
    wrong
}

const MEMBER_KERNELS: &[&str] = &["local_member", "global_member"];

#[test]
fn narrower_views_of_struct_members() {
    member_views_of(&Env::new(), MEMBER_SOURCE, MEMBER_KERNELS, "ulong");
}

/// pyopencl's GPU scan of doubles (cumsum of float64, test_dtype_conversions,
/// test_scan_with_vectorargs_with_offsets): clspv 0.0.1 loaded the struct's words as a vector
/// and rebuilt the double's bits through a one-element vector, `OpCompositeConstruct %ulong` of
/// one `%ulong` and an `OpCompositeExtract` from that scalar, which spirv-val rejects and
/// NVIDIA's driver crashed on (compiler::scalar_composites).
#[test]
fn narrower_views_of_double_struct_members() {
    let e = Env::new();
    if !device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64") {
        eprintln!("no cl_khr_fp64: no double case");
        return;
    }
    member_views_of(&e, MEMBER_SOURCE, MEMBER_KERNELS, "double");
}

/// The `__local` member at constant indices (rewritten with a constant offset, clspv never
/// finished: the build failed after 180 s; compiler::word_views now adds a zero LLVM cannot
/// fold) and a pointer to the member taken in an earlier statement (every view read the
/// member's first word or half-word; now rewritten from the pointer's declaration).
#[test]
fn narrower_views_of_struct_members_at_constant_or_earlier_pointers() {
    let e = Env::new();
    let names = &["constant_local_member", "earlier_local_member"];
    member_views_of(&e, LEFT_MEMBER_SOURCE, names, "ulong");
    if device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64") {
        member_views_of(&e, LEFT_MEMBER_SOURCE, names, "double");
    }
}

/// The `__local` member kernels on a struct without `packed` (16 bytes, 4 of them tail
/// padding): clspv 0.0.1 crashed (SIGSEGV) on each, with or without compiler::word_views'
/// rewrite (compiler::padded_locals).
#[test]
fn narrower_views_of_unpacked_local_struct_members() {
    let e = Env::new();
    let fp64 = device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64");
    let unpacked = |s: &str| s.replace("__attribute__((packed)) ", "");
    for m in ["ulong", "double"]
        .into_iter()
        .filter(|&m| fp64 || m != "double")
    {
        member_views_of(&e, &unpacked(MEMBER_SOURCE), &["local_member"], m);
        let names = &["constant_local_member", "earlier_local_member"];
        member_views_of(&e, &unpacked(LEFT_MEMBER_SOURCE), names, m);
    }
}

/// The member kernels `names` of `src` with an 8-byte member of type `m`.
fn member_views_of(e: &Env, src: &str, names: &[&str], m: &str) {
    // A char view of the __local member read bytes 0..3 of the member only (clspv's 4-byte
    // vector, compiler::struct_extracts).
    let wrong: Vec<String> = [("int", 4), ("uint", 4), ("short", 2), ("char", 1)]
        .iter()
        .flat_map(|&(v, size)| member_views(e, src, names, m, v, size))
        .collect();
    assert!(wrong.is_empty(), "wrong bytes: {wrong:#?}");
}

/// Every element of a `__local` packed struct, its `int` member after the 8-byte one included,
/// read through a view of the whole struct: clspv 0.0.1 rebuilt the element from a vector of
/// the struct's first 4 elements only (compiler::struct_extracts), so bytes 4..11 and halves
/// 4..5 read out of range.
const WHOLE_SOURCE: &str = r#"
struct __attribute__((packed)) w { M v; int d; };
__kernel void whole_local_struct(__global const M *in, __global V *o) {
    __local struct w ld[4][5];
    int l = get_local_id(0);
    if (l < 16) { ld[l % 4][l / 4].v = in[l]; ld[l % 4][l / 4].d = 0x7f6f5f4f - l; }
    barrier(CLK_LOCAL_MEM_FENCE);
    int idx = l / R, rem = l - idx * R;
    if (idx < 16) {
        __local V *s = (__local V *)&ld[idx % 4][idx / 4];
        o[l] = s[rem];
    }
}
"#;

#[test]
fn narrower_views_of_whole_local_structs() {
    let e = Env::new();
    let fp64 = device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64");
    let mut wrong = vec![];
    for m in ["ulong", "double"]
        .into_iter()
        .filter(|&m| fp64 || m != "double")
    {
        let values = member_values(m);
        let want: Vec<u8> = values
            .iter()
            .enumerate()
            .flat_map(|(i, v)| {
                let d = 0x7f6f_5f4f - i as i32;
                [&v.to_le_bytes()[..], &d.to_le_bytes()[..]].concat()
            })
            .collect();
        for (v, size) in [("uint", 4), ("ushort", 2), ("uchar", 1)] {
            let r = 12 / size;
            let p = e.program(WHOLE_SOURCE, &format!("-DM={m} -DV={v} -DR={r}"));
            let inp = e.buffer_from(&values);
            let out = e.buffer_from(&vec![0u8; want.len()]);
            let k = kernel(p, "whole_local_struct");
            arg(k, 0, &inp);
            arg(k, 1, &out);
            e.run(k, None, &[16 * r], Some(&[16 * r]));
            let got = e.read::<u8>(out, want.len());
            if got != want {
                wrong.push(format!(
                    "{v} of {m}: {:02x?}, want {:02x?}",
                    &got[..24],
                    &want[..24]
                ));
            }
            unsafe {
                clReleaseKernel(k);
                clReleaseMemObject(inp);
                clReleaseMemObject(out);
                clReleaseProgram(p);
            }
        }
    }
    assert!(wrong.is_empty(), "wrong bytes: {wrong:#?}");
}

/// Views of a private array: `(V *)(pa + base)` and `(V *)&pa[base]` read and written.
const PRIVATE_SOURCE: &str = r#"
__kernel void k(__global const T *in, __global T *o, int base) {
    int g = get_global_id(0);
    ELEM pa[8];
    ELEM pb[8];
    for (int i = 0; i < 8; i++) { pa[i] = in[g * 8 + i]; pb[i] = 0; }
    V *src = VIEW_A;
    V *dst = VIEW_B;
    for (int k = 0; k < (8 - base) * R; k++)
        dst[k] = src[k];
    for (int i = 0; i < 8; i++)
        o[g * 8 + i] = pb[i];
}
"#;

#[test]
fn narrower_views_of_private_arrays() {
    let e = Env::new();
    let input: Vec<u8> = (0..4 * 8 * 8).map(|i| (i * 37 % 251 + 1) as u8).collect();
    let mut wrong = vec![];
    for (t, v, r) in [
        ("long", "int", 2),
        ("ulong", "short", 4),
        ("int", "short", 2),
    ] {
        let size = 8 * 4 * r * if v == "int" { 4 } else { 2 };
        for view in ["(V *)(p + base)", "(V *)&p[base]"] {
            // In the source itself: the rewrite sees the text before preprocessing, and
            // decides that `pa` is an array from its declaration.
            let src = PRIVATE_SOURCE
                .replace("ELEM", t)
                .replace("VIEW_A", &view.replace('p', "pa"))
                .replace("VIEW_B", &view.replace('p', "pb"));
            let p = e.program(&src, &format!("-DT={t} -DV={v} -DR={r}"));
            let inp = e.buffer_from(&input[..size]);
            let out = e.buffer_from(&vec![0u8; size]);
            let k = kernel(p, "k");
            arg(k, 0, &inp);
            arg(k, 1, &out);
            arg(k, 2, &(BASE as cl_int));
            e.run(k, None, &[4], None);
            let elem = size / 32;
            let want: Vec<u8> = (0..size)
                .map(|b| if b / elem % 8 < BASE { 0 } else { input[b] })
                .collect();
            if e.read::<u8>(out, size) != want {
                wrong.push(format!("{t} as {v}: {view}"));
            }
            unsafe {
                clReleaseKernel(k);
                clReleaseMemObject(inp);
                clReleaseMemObject(out);
                clReleaseProgram(p);
            }
        }
    }
    assert!(wrong.is_empty(), "wrong bytes: {wrong:#?}");
}

/// The `__global` member view with SVM pointers (the physical-addressing build): clspv types
/// the packed struct's pointer as words there, and `&a[idx]` moved 4 bytes per struct, not 12,
/// until compiler::physical retyped the chain's base.
#[test]
fn narrower_views_of_struct_members_through_svm_pointers() {
    for m in ["ulong", "double"] {
        let values = member_values(m);
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let structs: Vec<u8> = values
            .iter()
            .flat_map(|&v| {
                let mut s = v.to_le_bytes().to_vec();
                s.extend((-1i32).to_le_bytes());
                s
            })
            .collect();
        for (v, size) in [("int", 4), ("uint", 4), ("short", 2)] {
            let r = 8 / size;
            let opts = format!("-DM={m} -DV={v} -DR={r}");
            let bufs = [structs.clone(), vec![0u8; 16 * 8]];
            let name = "global_member";
            let Some(out) = run_with_svm(MEMBER_SOURCE, &opts, name, &bufs, &[] as &[u32], 16 * r)
            else {
                return;
            };
            assert_eq!(out[1], bytes, "{v} of {m}");
        }
    }
}

/// The `__local` member views (at run-time and constant indices, through an earlier pointer)
/// and whole-struct views with SVM pointers, so the physical-addressing build runs them in
/// every test run: there clspv computes the element's index within the struct as a 64-bit
/// `size_t`, and compiler::struct_extracts took only 32-bit indices, so every char and short
/// view read bytes 0..3 of the struct only (`VKCL_ADDRESSING=physical` failed the four tests
/// above).
#[test]
fn narrower_views_of_local_struct_members_through_svm_pointers() {
    let e = Env::new();
    let fp64 = device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64");
    let mut wrong = vec![];
    for m in ["ulong", "double"]
        .into_iter()
        .filter(|&m| fp64 || m != "double")
    {
        let values = member_values(m);
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let kernels = [
            (MEMBER_SOURCE, "local_member", &bytes[..]),
            (
                LEFT_MEMBER_SOURCE,
                "constant_local_member",
                &bytes[9 * 8..10 * 8],
            ),
            (LEFT_MEMBER_SOURCE, "earlier_local_member", &bytes[..]),
        ];
        for (src, name, want) in kernels {
            for (v, size) in [("int", 4), ("uint", 4), ("short", 2), ("char", 1)] {
                let r = 8 / size;
                let opts = format!("-DM={m} -DV={v} -DR={r}");
                let bufs = [bytes.clone(), vec![0u8; 16 * 8]];
                let none: &[u32] = &[];
                let Some(out) =
                    run_with_svm_in_groups(src, &opts, name, &bufs, none, 16 * r, Some(16 * r))
                else {
                    return;
                };
                if out[1][..want.len()] != *want {
                    wrong.push(format!(
                        "{name}: {v} of {m}: {:02x?}, want {:02x?}",
                        &out[1][..16.min(want.len())],
                        &want[..16.min(want.len())]
                    ));
                }
            }
        }
        let structs: Vec<u8> = values
            .iter()
            .enumerate()
            .flat_map(|(i, v)| {
                let d = 0x7f6f_5f4f - i as i32;
                [&v.to_le_bytes()[..], &d.to_le_bytes()[..]].concat()
            })
            .collect();
        for (v, size) in [("uint", 4), ("ushort", 2), ("uchar", 1)] {
            let r = 12 / size;
            let opts = format!("-DM={m} -DV={v} -DR={r}");
            let bufs = [bytes.clone(), vec![0u8; structs.len()]];
            let none: &[u32] = &[];
            let name = "whole_local_struct";
            let out = run_with_svm_in_groups(
                WHOLE_SOURCE,
                &opts,
                name,
                &bufs,
                none,
                16 * r,
                Some(16 * r),
            )
            .unwrap();
            if out[1] != structs {
                wrong.push(format!(
                    "{name}: {v} of {m}: {:02x?}, want {:02x?}",
                    &out[1][..24],
                    &structs[..24]
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "wrong bytes: {wrong:#?}");
}
