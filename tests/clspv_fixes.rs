//! Programs that clspv (the compiler vkcl loads) crashes on or compiles wrongly, and that vkcl's
//! compiler layer must get right anyway (issue 15; docs/DECISIONS.md "clspv fixes"). Every test
//! compares the kernel's output with a reference computed here on the host.
#[macro_use]
mod common;
use common::*;

/// The buffers' words after kernel `name` ran with them and the uint `scalars`.
fn run_words(
    src: &str,
    opts: &str,
    name: &str,
    bufs: &[Vec<u32>],
    scalars: &[u32],
    gws: usize,
) -> Vec<Vec<u32>> {
    run_with_buffers(src, opts, name, bufs, scalars, gws)
}

/// Words 0x100, 0x101, ...: each word says where it is.
fn numbered(n: usize) -> Vec<u32> {
    (0..n as u32).map(|w| 0x100 + w).collect()
}

/// A small deterministic generator (xorshift) for indices and data.
struct Rng(u32);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

// ---------------------------------------------------------------- arrays inside structs (item 4)

/// The issue's first form: `a[i].d[j]` from a `__global const one_t *` with `i` (and `j`)
/// known only at run time, read through the pointer and from a copy (`one_t s = a[i]`, which
/// read words 4i, 16i+4, 16i+8, 16i+12 under -rewrite-packed-structs: "100 104 108 10c").
#[test]
fn member_array_of_a_struct_array_indexed_at_run_time() {
    let src = r#"
typedef struct { uint d[4]; } one_t;
kernel void k(global const one_t *a, global const uint *idx, global uint *out) {
    uint g = get_global_id(0);
    uint i = idx[2 * g], j = idx[2 * g + 1];
    for (int n = 0; n < 4; n++) out[12 * g + n] = a[i].d[n];
    out[12 * g + 4] = a[i].d[j];
    out[12 * g + 5] = a[j].d[i % 4];
    out[12 * g + 6] = a[i + 1].d[(j + 1) % 4];
    one_t s = a[i];
    out[12 * g + 7] = s.d[j];
    for (int n = 0; n < 4; n++) out[12 * g + 8 + n] = s.d[n];
}
"#;
    let (n, items) = (16usize, 32usize);
    let a = numbered(n * 4);
    let mut r = Rng(7);
    let idx: Vec<u32> = (0..items)
        .flat_map(|_| [r.below(n as u32 - 1), r.below(4)])
        .collect();
    let bufs = [a.clone(), idx.clone(), vec![0; items * 12]];
    let out = run_words(src, "", "k", &bufs, &[], items);
    for g in 0..items {
        let (i, j) = (idx[2 * g] as usize, idx[2 * g + 1] as usize);
        let w = |s: usize, m: usize| a[s * 4 + m];
        let want = [
            w(i, 0),
            w(i, 1),
            w(i, 2),
            w(i, 3),
            w(i, j),
            w(j, i % 4),
            w(i + 1, (j + 1) % 4),
            w(i, j),
            w(i, 0),
            w(i, 1),
            w(i, 2),
            w(i, 3),
        ];
        assert_eq!(out[2][12 * g..12 * g + 12], want, "item {g}: i={i} j={j}");
    }
}

/// pyopencl's test_struct_with_array_fields: a 60-byte struct with a 2-word array, an int and
/// a 3×4 array, copied by value (`my_struct s = structs[i];`) and summed, and the same read
/// through the pointer.
#[test]
fn struct_with_array_fields_copied_by_value() {
    let src = r#"
typedef struct { uint x[2]; int y; uint z[3][4]; } my_struct;
kernel void by_value(global const my_struct *structs, global int *res) {
    int i = get_global_id(0);
    my_struct s = structs[i];
    res[i] = s.x[0] + s.x[1] + s.y;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            res[i] += s.z[r][c];
}
kernel void by_pointer(global const my_struct *structs, global int *res) {
    int i = get_global_id(0);
    res[i] = structs[i].x[0] + structs[i].x[1] + structs[i].y;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            res[i] += structs[i].z[r][c];
}
kernel void words(global const my_struct *structs, global uint *res) {
    int i = get_global_id(0);
    my_struct s = structs[i];
    res[15 * i] = s.x[0];
    res[15 * i + 1] = s.x[1];
    res[15 * i + 2] = s.y;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            res[15 * i + 3 + 4 * r + c] = s.z[r][c];
}
"#;
    let n = 9usize;
    let mut r = Rng(99);
    let data: Vec<u32> = (0..n * 15).map(|_| r.below(200)).collect();
    let want: Vec<u32> = data
        .chunks(15)
        .map(|s| s.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    for name in ["by_value", "by_pointer"] {
        let out = run_words(src, "", name, &[data.clone(), vec![0; n]], &[], n);
        assert_eq!(out[1], want, "{name}");
    }
    let out = run_words(src, "", "words", &[data.clone(), vec![0; n * 15]], &[], n);
    assert_eq!(out[1], data, "words");
}

const HELPER_SRC: &str = r#"
typedef struct { uint d[16]; uint len; } msg_t;
void rd(global const uint *w, uint pos, global uint *out) { *out = w[pos]; }
void wr(global uint *w, uint pos, uint v) { w[pos] = v; }
uint sum(const global uint *w, uint n) { uint s = 0; for (uint k = 0; k < n; k++) s += w[k]; return s; }
uint psum(const uint *w, uint n) { uint s = 0; for (uint k = 0; k < n; k++) s += w[k]; return s; }
kernel void read(global const msg_t *a, global const uint *idx, global uint *out) {
    uint g = get_global_id(0);
    uint i = idx[2 * g], j = idx[2 * g + 1];
    rd(a[i].d, j, &out[3 * g]);
    rd(&a[i].len, 0, &out[3 * g + 1]);
    out[3 * g + 2] = sum(a[i].d, a[i].len % 17);
}
kernel void offset_pointer(global const msg_t *a, global const uint *idx, global uint *out) {
    uint g = get_global_id(0);
    uint i = idx[2 * g];
    out[3 * g + 2] = sum(a[i].d + 1, a[i].len % 16);
}
kernel void private_copy(global const msg_t *a, global const uint *idx, global uint *out) {
    uint g = get_global_id(0);
    msg_t m = a[idx[2 * g]];
    out[3 * g + 2] = psum(m.d + 1, m.len % 16);
}
kernel void write(global msg_t *a, global const uint *idx) {
    uint g = get_global_id(0);
    uint i = idx[2 * g], j = idx[2 * g + 1];
    wr(a[i].d, j, 0xA000 + g);
}
"#;

/// The issue's second form: a pointer to a struct's member array passed to a helper that
/// indexes it (68-byte structs: not a multiple of 16), for reads and writes.
#[test]
fn member_array_passed_to_a_helper_function() {
    let src = HELPER_SRC;
    let n = 12usize;
    let mut a = numbered(n * 17);
    for i in 0..n {
        a[17 * i + 16] = (5 * i as u32 + 3) % 17;
    }
    let mut r = Rng(3);
    let items = 40usize;
    let idx: Vec<u32> = (0..items)
        .flat_map(|_| [r.below(n as u32), r.below(16)])
        .collect();
    let out = run_words(
        src,
        "",
        "read",
        &[a.clone(), idx.clone(), vec![0; 3 * items]],
        &[],
        items,
    );
    for g in 0..items {
        let (i, j) = (idx[2 * g] as usize, idx[2 * g + 1] as usize);
        let s = &a[17 * i..17 * i + 17];
        let len = (s[16] % 17) as usize;
        let sum = s[..len].iter().fold(0u32, |x, &y| x.wrapping_add(y));
        assert_eq!(
            out[2][3 * g..3 * g + 3],
            [s[j], s[16], sum],
            "item {g}: i={i} j={j}"
        );
    }
    // Distinct (i, j) pairs so that each word is written by one item at most.
    let mut seen = std::collections::HashSet::new();
    let idx: Vec<u32> = idx
        .chunks(2)
        .filter(|p| seen.insert((p[0], p[1])))
        .flatten()
        .copied()
        .collect();
    let items = idx.len() / 2;
    let out = run_words(src, "", "write", &[a.clone(), idx.clone()], &[], items);
    let mut want = a.clone();
    for g in 0..items {
        want[17 * idx[2 * g] as usize + idx[2 * g + 1] as usize] = 0xA000 + g as u32;
    }
    assert_eq!(out[0], want);
}

/// Nested member arrays (28-byte structs: not a multiple of 16) and 32-byte structs (a
/// multiple of 16), each read and written directly and through helpers, indices at run time.
#[test]
fn nested_member_arrays_and_strides_direct_and_through_helpers() {
    let (src, a, b, idx) = nested_member_source();
    let items = idx.len() / 4;
    let bufs = [a.clone(), b.clone(), idx.clone(), vec![0; 6 * items]];
    nested_member_arrays(&a, &b, &idx, run_words(src, "", "rd", &bufs, &[], items));
    let out = run_words(src, "", "wr", &bufs[..3], &[], items);
    nested_member_writes(&a, &b, &idx, out);
}

/// The nested-member program, its two struct arrays and its indices (one item per struct, so
/// that each word is written once).
fn nested_member_source() -> (&'static str, Vec<u32>, Vec<u32>, Vec<u32>) {
    let src = r#"
typedef struct { uint x[3]; } in_t;
typedef struct { in_t in[2]; uint n; } out_t;
typedef struct { uint w[7]; uint tag; } wide_t;
uint get(global const uint *p, uint k) { return p[k]; }
void put(global uint *p, uint k, uint v) { p[k] = v; }
kernel void rd(global const out_t *a, global const wide_t *b, global const uint *idx,
               global uint *out) {
    uint g = get_global_id(0);
    uint i = idx[4 * g], j = idx[4 * g + 1] % 2, k = idx[4 * g + 2] % 3, m = idx[4 * g + 3] % 7;
    out[6 * g] = a[i].in[j].x[k];
    out[6 * g + 1] = get(a[i].in[j].x, k);
    out[6 * g + 2] = a[i].n;
    out[6 * g + 3] = b[i].w[m];
    out[6 * g + 4] = get(b[i].w, m);
    out[6 * g + 5] = b[i].tag;
}
kernel void wr(global out_t *a, global wide_t *b, global const uint *idx) {
    uint g = get_global_id(0);
    uint i = idx[4 * g], j = idx[4 * g + 1] % 2, k = idx[4 * g + 2] % 3, m = idx[4 * g + 3] % 7;
    if (g % 2) { a[i].in[j].x[k] = 0xB000 + g; b[i].w[m] = 0xC000 + g; }
    else { put(a[i].in[j].x, k, 0xB000 + g); put(b[i].w, m, 0xC000 + g); }
}
"#;
    let n = 10usize;
    let a = numbered(n * 7);
    let b: Vec<u32> = (0..n * 8).map(|w| 0x5000 + w as u32).collect();
    let mut r = Rng(5);
    let items = 10usize;
    // One item per struct, so that each word is written once.
    let idx: Vec<u32> = (0..items as u32)
        .flat_map(|g| [g, r.below(2), r.below(3), r.below(7)])
        .collect();
    (src, a, b, idx)
}

/// [`nested_member_arrays_and_strides_direct_and_through_helpers`] with SVM pointers: the
/// physical-addressing build, where clspv writes the helper's pointer as an OpPtrAccessChain
/// on the struct pointer (`compiler::member_index` repairs both forms).
#[test]
fn nested_member_arrays_through_svm_pointers() {
    let (src, a, b, idx) = nested_member_source();
    let items = idx.len() / 4;
    let bufs = [a.clone(), b.clone(), idx.clone(), vec![0; 6 * items]];
    let Some(out) = run_with_svm(src, "", "rd", &bufs, &[] as &[u32], items) else {
        return;
    };
    nested_member_arrays(&a, &b, &idx, out);
    let out = run_with_svm(src, "", "wr", &bufs[..3], &[] as &[u32], items).unwrap();
    nested_member_writes(&a, &b, &idx, out);
}

fn nested_member_arrays(a: &[u32], b: &[u32], idx: &[u32], out: Vec<Vec<u32>>) {
    let items = idx.len() / 4;
    for g in 0..items {
        let q = &idx[4 * g..4 * g + 4];
        let (i, j, k, m) = (q[0] as usize, q[1] as usize, q[2] as usize, q[3] as usize);
        let x = a[7 * i + 3 * j + k];
        let want = [x, x, a[7 * i + 6], b[8 * i + m], b[8 * i + m], b[8 * i + 7]];
        assert_eq!(out[3][6 * g..6 * g + 6], want, "item {g}: {q:?}");
    }
}

fn nested_member_writes(a: &[u32], b: &[u32], idx: &[u32], out: Vec<Vec<u32>>) {
    let items = idx.len() / 4;
    let (mut wa, mut wb) = (a.to_vec(), b.to_vec());
    for g in 0..items {
        let q = &idx[4 * g..4 * g + 4];
        wa[7 * q[0] as usize + 3 * q[1] as usize + q[2] as usize] = 0xB000 + g as u32;
        wb[8 * q[0] as usize + q[3] as usize] = 0xC000 + g as u32;
    }
    assert_eq!(out[0], wa, "nested writes");
    assert_eq!(out[1], wb, "32-byte struct writes");
}

// ---------------------------------------------------------------- build options (item 5)

/// `-D` with function-like macros, values with spaces and quotes, `-U`, and `-I` with a
/// quoted path holding a space, as clang's driver takes them.
#[test]
fn build_options_as_compilers_take_them() {
    let dir = std::env::temp_dir().join(format!("vkcl inc {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("answer.h"), "#define FROM_HEADER 42\n").unwrap();
    let src = r#"
#include "answer.h"
kernel void k(global uint *o) {
    o[0] = TWICE(21);
    o[1] = sizeof(M2S(abcd));            /* "abcd" and its NUL */
    o[2] = sizeof(TEXT);                 /* "a b  c" and its NUL */
    o[3] = FROM_HEADER;
#ifdef GONE
    o[4] = 1;
#else
    o[4] = 2;
#endif
#ifdef BACK
    o[5] = BACK;
#endif
    o[6] = SUM(1, 2, 3);
}
"#;
    let opts = format!(
        "-D TWICE(x)=((x)*2) -D 'M2S(x)=#x' -DTEXT='\"a b  c\"' -DGONE -UGONE -UBACK -DBACK=9 \
         -D 'SUM(a, ...)=(a + sum2(__VA_ARGS__))' -D'sum2(b,c)=(b+c)' -I '{}'",
        dir.display()
    );
    let out = run_words(src, &opts, "k", &[vec![0; 7]], &[], 1);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out[0], [42, 5, 7, 42, 2, 9, 6]);
}

/// What the OpenCL C grammar makes invalid is still refused.
#[test]
fn invalid_macro_options_are_refused() {
    let e = Env::new();
    for bad in ["-D1X", "-DF(x=1", "-DF(1)=2", "-U", "-UX=1", "-D"] {
        match build_program(e.ctx, e.dev, "kernel void k() {}", bad) {
            Err((code, _)) => assert_eq!(code, CL_INVALID_BUILD_OPTIONS, "{bad}"),
            Ok(_) => panic!("{bad} accepted"),
        }
    }
}

// ---------------------------------------------------------------- __OPENCL_VERSION__ (item 9)

/// `__OPENCL_VERSION__` is the device's OpenCL version whatever -cl-std says, and
/// `__OPENCL_C_VERSION__` the language's (piglit check_predefined_preprocessor_macros).
#[test]
fn opencl_version_macro_is_the_devices() {
    let src =
        "kernel void k(global uint *o) { o[0] = __OPENCL_VERSION__; o[1] = __OPENCL_C_VERSION__; }\n";
    for (std, c) in [
        ("", 120),
        ("-cl-std=CL1.1", 110),
        ("-cl-std=CL1.2", 120),
        ("-cl-std=CL2.0", 200),
        ("-cl-std=CL3.0", 300),
    ] {
        let out = run_words(src, &format!("{std} -Werror"), "k", &[vec![0; 2]], &[], 1);
        assert_eq!(out[0], [300, c], "{std:?}");
    }
}

// ---------------------------------------------------------------- vector built-ins (item 8)

/// Vector `fdim`, `maxmag`, `minmag` and `fract` (each crashed clspv), every width, with
/// `fract`'s pointer into private, local and global memory, against the host's answers.
#[test]
fn vector_fdim_maxmag_minmag_fract() {
    let src = r#"
#define T(V, N) \
kernel void k##N(global const V *a, global const V *b, global V *o, global V *g) { \
    local V l[8]; \
    uint i = get_global_id(0); \
    V ip; \
    o[6 * i] = fdim(a[i], b[i]); \
    o[6 * i + 1] = maxmag(a[i], b[i]); \
    o[6 * i + 2] = minmag(a[i], b[i]); \
    o[6 * i + 3] = fract(a[i], &ip); \
    o[6 * i + 4] = ip; \
    o[6 * i + 5] = fract(b[i], &l[i]) + l[i] - fract(b[i], &g[i]); \
}
T(float, 1) T(float2, 2) T(float3, 3) T(float4, 4) T(float8, 8) T(float16, 16)
"#;
    let mut r = Rng(11);
    let items = 8usize;
    for n in [1usize, 2, 3, 4, 8, 16] {
        let slot = if n == 3 { 4 } else { n };
        let f = |r: &mut Rng| (r.below(4000) as f32 - 2000.0) / 64.0;
        let mut a: Vec<f32> = (0..items * slot).map(|_| f(&mut r)).collect();
        let b: Vec<f32> = (0..items * slot).map(|_| f(&mut r)).collect();
        a[0] = -b[0]; // equal magnitudes: maxmag and minmag fall back to fmax and fmin
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
        let out = run_words(
            src,
            "",
            &format!("k{n}"),
            &[
                bits(&a),
                bits(&b),
                vec![0; items * slot * 6],
                vec![0; items * slot],
            ],
            &[],
            items,
        );
        let o: Vec<f32> = out[2].iter().map(|&w| f32::from_bits(w)).collect();
        let g: Vec<f32> = out[3].iter().map(|&w| f32::from_bits(w)).collect();
        for i in 0..items {
            for c in 0..n {
                let (x, y) = (a[i * slot + c], b[i * slot + c]);
                let at = |k: usize| o[(6 * i + k) * slot + c];
                let maxmag = if x.abs() > y.abs() {
                    x
                } else if y.abs() > x.abs() {
                    y
                } else {
                    x.max(y)
                };
                let minmag = if x.abs() < y.abs() {
                    x
                } else if y.abs() < x.abs() {
                    y
                } else {
                    x.min(y)
                };
                let fr = |v: f32| (v - v.floor()).min(f32::from_bits(0x3f7f_ffff));
                let what = format!("width {n}, item {i}, component {c}: x={x} y={y}");
                assert_eq!(at(0), if x > y { x - y } else { 0.0 }, "fdim, {what}");
                assert_eq!(at(1), maxmag, "maxmag, {what}");
                assert_eq!(at(2), minmag, "minmag, {what}");
                assert_eq!(at(3), fr(x), "fract, {what}");
                assert_eq!(at(4), x.floor(), "fract's whole part, {what}");
                assert_eq!(g[i * slot + c], y.floor(), "fract into global, {what}");
                assert_eq!(at(5), y.floor(), "fract into local, {what}");
            }
        }
    }
}

/// The prelude holds the scalarised forms of only the built-ins a program may name (issue 16:
/// all four cost every build 45 ms): a program naming one of them alone, or naming it only
/// through a `-D` definition, still gets that one's vector form (which crashes clspv without
/// it) and the right values.
#[test]
fn vector_builtins_named_alone_or_through_a_define() {
    let a = [2.5f32, -1.25, 7.75, -3.5];
    let b = [-4.0f32, 1.5, 7.0, 3.25];
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    let maxmag = |x: f32, y: f32| if x.abs() >= y.abs() { x } else { y };
    let minmag = |x: f32, y: f32| if x.abs() <= y.abs() { x } else { y };
    let fdim = |x: f32, y: f32| if x > y { x - y } else { 0.0 };
    let fract = |x: f32, _: f32| x - x.floor();
    type Op = fn(f32, f32) -> f32;
    let cases: [(&str, &str, &str, Op); 6] = [
        ("fdim", "o[0] = fdim(a[0], b[0]);", "", fdim),
        ("maxmag", "o[0] = maxmag(a[0], b[0]);", "", maxmag),
        ("minmag", "o[0] = minmag(a[0], b[0]);", "", minmag),
        ("fract", "float4 ip; o[0] = fract(a[0], &ip);", "", fract),
        (
            "maxmag via -D",
            "o[0] = F(a[0], b[0]);",
            "-D F(x,y)=maxmag(x,y)",
            maxmag,
        ),
        (
            "fract via -D",
            "float4 ip; o[0] = G(a[0], &ip);",
            "-DG=fract",
            fract,
        ),
    ];
    for (what, body, opts, op) in cases {
        let src = format!(
            "kernel void k(global const float4 *a, global const float4 *b, global float4 *o) \
             {{ {body} }}"
        );
        let out = run_words(&src, opts, "k", &[bits(&a), bits(&b), vec![0; 4]], &[], 1);
        for c in 0..4 {
            assert_eq!(
                f32::from_bits(out[2][c]),
                op(a[c], b[c]),
                "{what}, component {c}"
            );
        }
    }
}

/// The helper's sum over `n` words of the member array from word 1 on, run as `kernel`,
/// checked against the host for each struct.
fn member_array_sums_from_word_one(kernel: &str) {
    let n = 12usize;
    let mut a = numbered(n * 17);
    for i in 0..n {
        a[17 * i + 16] = (5 * i as u32 + 3) % 17;
    }
    let idx: Vec<u32> = (0..n as u32).flat_map(|i| [i, 0]).collect();
    let bufs = [a.clone(), idx, vec![0; 3 * n]];
    let out = run_words(HELPER_SRC, "", kernel, &bufs, &[], n);
    for i in 0..n {
        let s = &a[17 * i..17 * i + 17];
        let len = (s[16] % 16) as usize;
        let sum = s[1..1 + len].iter().fold(0u32, |x, &y| x.wrapping_add(y));
        assert_eq!(out[2][3 * i + 2], sum, "{kernel}: struct {i}");
    }
}

/// The same helper given a pointer into the middle of the member array (`sum(a[i].d + 1, n)`):
/// clspv dropped the `+ 1` from the flat index that member_index repairs from, until
/// `compiler::member_offset` wrote the argument as a word pointer from the buffer.
#[test]
fn member_array_at_an_offset_passed_to_a_helper() {
    member_array_sums_from_word_one("offset_pointer");
}

/// The same helper reading a private copy of the struct (`msg_t m = a[i]; psum(m.d + 1, n)`):
/// clspv turned `w[k]` into `m.d[0]`, dropping `k` and the `+ 1` altogether, until
/// `compiler::flat_records` gave such records a flat array of words in the IR.
#[test]
fn member_array_of_a_private_copy_passed_to_a_helper() {
    member_array_sums_from_word_one("private_copy");
}

/// Pointers into the member arrays of private records, in every shape clspv 0.0.1 read as the
/// array's first word (`compiler::flat_records`): a whole copy or a member-wise one, the
/// pointer passed to a helper (`m.d + 1`, `&m.d[1]`, `m.d`), kept in a variable, or made from
/// the record's address (`(uint *)&m + 1`); and the record modified before (so no copy can be
/// folded away). Each sums `len % 16` words from the pointer, against the host.
#[test]
fn pointers_into_private_records() {
    const SRC: &str = r#"
typedef struct { uint d[16]; uint len; } msg_t;
uint psum(const uint *w, uint n) { uint s = 0; for (uint k = 0; k < n; k++) s += w[k]; return s; }
kernel void decayed(global const msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m = a[g]; out[g] = psum(m.d + 1, m.len % 16); }
kernel void address(global const msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m = a[g]; out[g] = psum(&m.d[1], m.len % 16); }
kernel void local_pointer(global const msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m = a[g]; const uint *w = m.d + 1; uint s = 0; uint n = m.len % 16; for (uint k = 0; k < n; k++) s += w[k]; out[g] = s; }
kernel void whole_array(global const msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m = a[g]; out[g] = psum(m.d, m.len % 16) - m.d[0] + m.d[m.len % 16]; }
kernel void record_address(global const msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m; m = a[g]; uint *p = (uint *)&m; out[g] = psum(p + 1, m.len % 16); }
kernel void member_wise(global const msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m; for (int i = 0; i < 16; i++) m.d[i] = a[g].d[i]; m.len = a[g].len; out[g] = psum(m.d + 1, m.len % 16); }
kernel void modified(global const msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m = a[g]; m.d[0] += out[g]; out[g] = psum(m.d + 1, m.len % 16); }
uint last(const msg_t *p) { return p->d[p->len % 16] - p->d[0]; }
kernel void record_pointer(global const msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m = a[g]; out[g] = psum(m.d + 1, m.len % 16) + last(&m) - (m.d[m.len % 16] - m.d[0]); }
kernel void written_back(global msg_t *a, global uint *out) { uint g = get_global_id(0); msg_t m = a[g]; uint *w = m.d + 1; for (uint k = 0; k < 15; k++) w[k] += k; a[g] = m; out[g] = psum(m.d + 1, m.len % 16); }
"#;
    let n = 12usize;
    let mut a = numbered(n * 17);
    for i in 0..n {
        a[17 * i + 16] = (5 * i as u32 + 3) % 17;
    }
    let sum = |s: &[u32]| s.iter().fold(0u32, |x, &y| x.wrapping_add(y));
    for kernel in [
        "decayed",
        "address",
        "local_pointer",
        "whole_array",
        "record_address",
        "member_wise",
        "modified",
        "record_pointer",
        "written_back",
    ] {
        let out = run_words(SRC, "", kernel, &[a.clone(), vec![0; n]], &[], n);
        for i in 0..n {
            let mut s = a[17 * i..17 * i + 17].to_vec();
            if kernel == "written_back" {
                (0..15).for_each(|k| s[1 + k] += k as u32);
                assert_eq!(
                    out[0][17 * i..17 * i + 17],
                    s[..],
                    "{kernel}: record {i} written back"
                );
            }
            let len = (s[16] % 16) as usize;
            assert_eq!(out[1][i], sum(&s[1..1 + len]), "{kernel}: record {i}");
        }
    }
}

/// The same for a record of floats (clspv read NaN there): `fmsg_t m = a[i]; fsum(m.d + 1, n)`.
#[test]
fn pointers_into_private_float_records() {
    const SRC: &str = r#"
typedef struct { float d[16]; float len; } fmsg_t;
float fsum(const float *w, uint n) { float s = 0; for (uint k = 0; k < n; k++) s += w[k]; return s; }
kernel void floats(global const fmsg_t *a, global float *out) { uint g = get_global_id(0); fmsg_t m = a[g]; out[g] = fsum(m.d + 1, (uint)m.len % 16); }
"#;
    let n = 12usize;
    let mut a: Vec<f32> = (0..n * 17).map(|w| w as f32).collect();
    for i in 0..n {
        a[17 * i + 16] = ((5 * i + 3) % 17) as f32;
    }
    let bits: Vec<u32> = a.iter().map(|f| f.to_bits()).collect();
    let out = run_words(SRC, "", "floats", &[bits, vec![0; n]], &[], n);
    for i in 0..n {
        let len = a[17 * i + 16] as usize % 16;
        let want: f32 = a[17 * i + 1..17 * i + 1 + len].iter().sum();
        assert_eq!(f32::from_bits(out[1][i]), want, "record {i}");
    }
}

// ------------------------------------------- private records mixing scalar types (item 4)

/// A host-side record's member at byte `off`: little-endian words, halves and bytes, as the C
/// layout puts them (the device is little-endian).
fn get32(r: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(r[off..off + 4].try_into().unwrap())
}
fn set32(r: &mut [u8], off: usize, v: u32) {
    r[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
fn get16(r: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(r[off..off + 2].try_into().unwrap())
}
fn set16(r: &mut [u8], off: usize, v: u16) {
    r[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
fn bytes_sum(b: &[u8]) -> u32 {
    b.iter().map(|&x| x as u32).sum()
}

/// What a kernel does to one record (its bytes) with work-item id `g`; returns `out[g]`.
type HostRecord<'a> = &'a dyn Fn(&mut [u8], u32) -> u32;

/// Runs each `(kernel, host)` of `src` over `n` random records of `size` bytes (`fix` makes
/// each one valid, e.g. sets small lengths) and one out word per record, and checks `out` and
/// the records after the kernel against `host` run on a copy, padding bytes (`padding`)
/// aside. Kernels are `k(global T *a, global uint *out)`.
fn check_records(
    src: &str,
    size: usize,
    padding: &[usize],
    fix: &dyn Fn(&mut [u8], u32),
    kernels: &[(&str, HostRecord)],
) {
    let n = 24usize;
    let mut r = Rng(0x2545_f491);
    let mut recs: Vec<u8> = (0..n * size).map(|_| r.next() as u8).collect();
    for (g, rec) in recs.chunks_mut(size).enumerate() {
        fix(rec, g as u32);
    }
    let words: Vec<u32> = recs
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut wrong = vec![];
    for (kernel, host) in kernels {
        let out = run_words(src, "", kernel, &[words.clone(), vec![0; n]], &[], n);
        let got: Vec<u8> = out[0].iter().flat_map(|w| w.to_le_bytes()).collect();
        for g in 0..n {
            let mut want = recs[g * size..(g + 1) * size].to_vec();
            let word = host(&mut want, g as u32);
            let rec = &got[g * size..(g + 1) * size];
            let bytes = (0..size).filter(|b| !padding.contains(b));
            if out[1][g] != word || bytes.clone().any(|b| rec[b] != want[b]) {
                let bytes: Vec<usize> = bytes.filter(|&b| rec[b] != want[b]).collect();
                wrong.push(format!(
                    "{kernel}: record {g}: out {:#x}, want {word:#x}; wrong bytes {bytes:?}: \
                     {rec:02x?}, want {want:02x?}, was {:02x?}",
                    out[1][g],
                    &recs[g * size..(g + 1) * size]
                ));
                break;
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The helpers the mixed-record kernels share.
const MIXED_HELPERS: &str = r#"
typedef struct { uchar d[16]; uint len; } blk_t;
uint bsum(const uchar *p, uint n) { uint s = 0; for (uint k = 0; k < n; k++) s += p[k]; return s; }
uint wsum(const uint *p, uint n) { uint s = 0; for (uint k = 0; k < n; k++) s += p[k]; return s; }
void upd(blk_t *b, uint k, uchar v) { b->d[k] ^= v; b->len += v; }
uint rd(const blk_t *b, uint k) { return ((const uint *)b->d)[k]; }
void wr(blk_t *b, uint off, uint n) { uchar *p = b->d + off; for (uint j = 0; j < n; j++) p[j] = (uchar)(p[j] * 3 + j); }
"#;

/// A byte buffer with a length (hashing kernels' message blocks), `{ uchar d[16]; uint len; }`
/// in a private copy: pointers into `d` (to a helper, in a variable), run-time indices,
/// `((uint *)m.d)[k]`, writes through `m.d + off`, the record's address given to helpers
/// that index `b->d[k]` and write through `b->d + off`, and whole copies back to global memory.
#[test]
fn private_byte_buffers_with_a_length() {
    let src = format!(
        "{MIXED_HELPERS}{}",
        r#"
kernel void decayed(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = a[g]; out[g] = bsum(m.d + 1, m.len % 16); }
kernel void local_pointer(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = a[g]; const uchar *p = m.d + 1; uint s = 0; for (uint k = 0; k < m.len % 16; k++) s += p[k]; out[g] = s; }
kernel void run_time_index(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = a[g]; uint k = m.len % 16; out[g] = m.d[k] | m.d[(k + 5) % 16] << 8 | m.d[3] << 16 | (m.len & 0xff) << 24; }
kernel void punned(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = a[g]; out[g] = ((uint *)m.d)[m.len % 4] + rd(&m, 3 - m.len % 4); }
kernel void written_back(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = a[g]; uchar *p = m.d + m.len % 8; for (uint k = 0; k < 8; k++) p[k] += k + 1; m.len += 7; a[g] = m; out[g] = bsum(m.d, 16); }
kernel void helpers(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = a[g]; uint k = m.len % 16; upd(&m, k, 0x5a); wr(&m, m.len % 8, 5); out[g] = rd(&m, k % 4); a[g] = m; }
kernel void built_here(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m; for (uint i = 0; i < 16; i++) m.d[i] = (uchar)(g * 7 + i * 13); m.len = g; upd(&m, g % 16, 3); out[g] = bsum(m.d + g % 4, 9) + m.len; a[g] = m; }
kernel void on_global(global blk_t *a, global uint *out) { uint g = get_global_id(0); uint k = a[g].len % 16; out[g] = a[g].d[k]; }
kernel void initialised(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = {{1, 2, 3, 4, 5}, 6}; m.d[g % 16] = g; out[g] = bsum(m.d + 1, 8) + m.len; }
kernel void zeroed(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = {0}; m.d[g % 16] = g; upd(&m, 3, 5); out[g] = bsum(m.d + 2, 14) + m.len; }
kernel void halves(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = a[g]; ushort *q = (ushort *)m.d; uint k = m.len % 8; out[g] = q[k] | (uint)((ushort *)m.d)[7 - k] << 16; }
void upd2(blk_t *b, uint k) { upd(b, k, 7); wr(b, 2, 3); }
kernel void helper_of_helper(global blk_t *a, global uint *out) { uint g = get_global_id(0); blk_t m = a[g]; upd2(&m, m.len % 16); a[g] = m; out[g] = bsum(m.d, 16); }
"#
    );
    let len = |r: &[u8]| get32(r, 16);
    let upd = |r: &mut [u8], k: usize, v: u8| {
        r[k] ^= v;
        set32(r, 16, len(r).wrapping_add(v as u32));
    };
    let rd = |r: &[u8], k: usize| get32(r, 4 * k);
    let wr = |r: &mut [u8], off: usize, n: usize| {
        (0..n).for_each(|j| r[off + j] = r[off + j].wrapping_mul(3).wrapping_add(j as u8))
    };
    check_records(
        &src,
        20,
        &[],
        &|r, g| set32(r, 16, get32(r, 16) % 64 + g % 3),
        &[
            ("decayed", &|r, _| {
                bytes_sum(&r[1..1 + len(r) as usize % 16])
            }),
            ("local_pointer", &|r, _| {
                bytes_sum(&r[1..1 + len(r) as usize % 16])
            }),
            ("run_time_index", &|r, _| {
                let k = len(r) as usize % 16;
                let d = |i: usize| r[i] as u32;
                d(k) | d((k + 5) % 16) << 8 | d(3) << 16 | (len(r) & 0xff) << 24
            }),
            ("punned", &|r, _| {
                let k = len(r) as usize % 4;
                rd(r, k).wrapping_add(rd(r, 3 - k))
            }),
            ("written_back", &|r, _| {
                let off = len(r) as usize % 8;
                (0..8).for_each(|k| r[off + k] = r[off + k].wrapping_add(k as u8 + 1));
                set32(r, 16, len(r) + 7);
                bytes_sum(&r[..16])
            }),
            ("helpers", &|r, _| {
                let k = len(r) as usize % 16;
                upd(r, k, 0x5a);
                wr(r, len(r) as usize % 8, 5);
                rd(r, k % 4)
            }),
            ("built_here", &|r, g| {
                (0..16).for_each(|i| r[i] = (g * 7 + i as u32 * 13) as u8);
                set32(r, 16, g);
                upd(r, g as usize % 16, 3);
                let o = g as usize % 4;
                bytes_sum(&r[o..o + 9]) + len(r)
            }),
            ("on_global", &|r, _| r[len(r) as usize % 16] as u32),
            ("initialised", &|_, g| {
                let mut d = [1u8, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
                d[g as usize % 16] = g as u8;
                bytes_sum(&d[1..9]) + 6
            }),
            ("zeroed", &|_, g| {
                let mut m = [0u8; 20];
                m[g as usize % 16] = g as u8;
                upd(&mut m, 3, 5);
                bytes_sum(&m[2..16]) + len(&m)
            }),
            ("halves", &|r, _| {
                let k = len(r) as usize % 8;
                get16(r, 2 * k) as u32 | (get16(r, 2 * (7 - k)) as u32) << 16
            }),
            ("helper_of_helper", &|r, _| {
                upd(r, len(r) as usize % 16, 7);
                wr(r, 2, 3);
                bytes_sum(&r[..16])
            }),
        ],
    );
}

/// A hash state with a count and padding bytes, `{ uint h[5]; ushort n; uchar pad[2]; }`:
/// word pointers into `h`, a pointer to the `ushort`, the record given to a helper by pointer.
#[test]
fn private_words_with_a_short_count() {
    let src = format!(
        "{MIXED_HELPERS}{}",
        r#"
typedef struct { uint h[5]; ushort n; uchar pad[2]; } st_t;
void bump(st_t *s, uint k) { s->h[k] += s->n; s->n += 1; s->pad[k % 2] ^= 0x33; }
kernel void st_read(global st_t *a, global uint *out) { uint g = get_global_id(0); st_t s = a[g]; out[g] = wsum(s.h + 1, s.n % 5) + s.pad[s.n % 2] * 65536 + s.n; }
kernel void st_write(global st_t *a, global uint *out) { uint g = get_global_id(0); st_t s = a[g]; uint k = s.n % 5; bump(&s, k); uint *p = s.h + k; p[0] ^= 0xffff0000; ushort *q = &s.n; *q += 2; out[g] = wsum(s.h, 5) ^ s.n; a[g] = s; }
"#
    );
    let n = |r: &[u8]| get16(r, 20);
    let h = |r: &[u8], k: usize| get32(r, 4 * k);
    let hsum = |r: &[u8], from: usize, m: usize| {
        (from..from + m).fold(0u32, |s, k| s.wrapping_add(h(r, k)))
    };
    check_records(
        &src,
        24,
        &[],
        &|_, _| {},
        &[
            ("st_read", &|r, _| {
                let m = n(r) as usize;
                hsum(r, 1, m % 5)
                    .wrapping_add(r[22 + m % 2] as u32 * 65536)
                    .wrapping_add(m as u32)
            }),
            ("st_write", &|r, _| {
                let k = n(r) as usize % 5;
                set32(r, 4 * k, h(r, k).wrapping_add(n(r) as u32));
                set16(r, 20, n(r).wrapping_add(1));
                r[22 + k % 2] ^= 0x33;
                set32(r, 4 * k, h(r, k) ^ 0xffff_0000);
                set16(r, 20, n(r).wrapping_add(2));
                hsum(r, 0, 5) ^ n(r) as u32
            }),
        ],
    );
}

/// Floats with an int count, `{ float v[4]; int count; }`: a float pointer into `v`, a
/// run-time index, a helper scaling `f->v[k]` through the record's address, written back.
#[test]
fn private_floats_with_an_int_count() {
    let src = r#"
typedef struct { float v[4]; int count; } fv_t;
float fsum(const float *p, uint n) { float s = 0; for (uint k = 0; k < n; k++) s += p[k]; return s; }
void scale(fv_t *f, uint k, float x) { f->v[k] *= x; f->count -= 1; }
kernel void fv_read(global fv_t *a, global uint *out) { uint g = get_global_id(0); fv_t f = a[g]; uint k = f.count & 3; out[g] = as_uint(fsum(f.v + 1, 3 - k) - f.v[k]); }
kernel void fv_write(global fv_t *a, global uint *out) { uint g = get_global_id(0); fv_t f = a[g]; uint k = f.count & 3; scale(&f, k, 2.0f); float *p = f.v + 1; p[k % 3] += 1.0f; out[g] = f.count; a[g] = f; }
kernel void vectors(global fv_t *a, global uint *out) { uint g = get_global_id(0); fv_t f = a[g]; out[g] = as_uint(vload4(0, f.v).w) ^ as_uint(vload2(1, f.v).x); vstore2((float2)(1.0f, 2.0f), f.count & 1, f.v); a[g] = f; }
"#;
    let v = |r: &[u8], k: usize| f32::from_bits(get32(r, 4 * k));
    let set_v = |r: &mut [u8], k: usize, x: f32| set32(r, 4 * k, x.to_bits());
    let count = |r: &[u8]| get32(r, 16);
    check_records(
        src,
        20,
        &[],
        &|r, g| {
            (0..4)
                .for_each(|k| set32(r, 4 * k, ((g * 4 + k as u32) as f32 * 0.37 - 5.0).to_bits()));
            set32(r, 16, get32(r, 16) % 1000);
        },
        &[
            ("fv_read", &|r, _| {
                let k = count(r) as usize & 3;
                let s = (1..4 - k).fold(0f32, |s, i| s + v(r, i));
                (s - v(r, k)).to_bits()
            }),
            ("vectors", &|r, _| {
                let out = get32(r, 12) ^ get32(r, 8);
                let at = 2 * (count(r) as usize & 1);
                set_v(r, at, 1.0);
                set_v(r, at + 1, 2.0);
                out
            }),
            ("fv_write", &|r, _| {
                let k = count(r) as usize & 3;
                set_v(r, k, v(r, k) * 2.0);
                set32(r, 16, count(r).wrapping_sub(1));
                set_v(r, 1 + k % 3, v(r, 1 + k % 3) + 1.0);
                count(r)
            }),
        ],
    );
}

/// A record with a nested record member and trailing padding, `{ uint id; blk_t b; ushort
/// tag[3]; }` (32 bytes: b at 4, tag at 24), and one with padding inside, `{ uchar c; uint
/// w[3]; uchar d[5]; }` (24 bytes: w at 4, d at 16): pointers to the nested record and into
/// the arrays, given to helpers and kept, run-time indices, written back.
#[test]
fn private_nested_and_padded_mixed_records() {
    let src = format!(
        "{MIXED_HELPERS}{}",
        r#"
typedef struct { uint id; blk_t b; ushort tag[3]; } nest_t;
typedef struct { uchar c; uint w[3]; uchar d[5]; } pad_t;
kernel void nested(global nest_t *a, global uint *out) { uint g = get_global_id(0); nest_t s = a[g]; uint k = s.id % 3; upd(&s.b, s.b.len % 16, (uchar)s.tag[k]); out[g] = bsum(s.b.d + 2, s.b.len % 14) + s.tag[k] + rd(&s.b, s.id % 4); ushort *t = s.tag + k; *t += 1; a[g] = s; }
kernel void copied_member(global nest_t *a, global uint *out) { uint g = get_global_id(0); nest_t s = a[g]; blk_t t = s.b; t.d[s.id % 16] += 1; uint o = bsum(t.d + 1, 4); s.b = t; uchar *p = s.b.d + s.id % 8; p[1] = 9; a[g] = s; out[g] = o; }
kernel void padded(global pad_t *a, global uint *out) { uint g = get_global_id(0); pad_t s = a[g]; uint *p = s.w + s.c % 3; *p += s.d[s.c % 5]; uchar *q = &s.d[1]; q[s.c % 4] = s.c; out[g] = wsum(s.w, 3) + bsum(s.d, 5) + s.c; a[g] = s; }
"#
    );
    check_records(
        &src,
        32,
        &[30, 31],
        &|_, _| {},
        &[
            ("nested", &|r, _| {
                let id = get32(r, 0) as usize;
                let k = id % 3;
                let tag = get16(r, 24 + 2 * k);
                let b = &mut r[4..24];
                let j = get32(b, 16) as usize % 16;
                b[j] ^= tag as u8;
                set32(b, 16, get32(b, 16).wrapping_add(tag as u8 as u32));
                let m = get32(b, 16) as usize % 14;
                let out = bytes_sum(&b[2..2 + m])
                    .wrapping_add(tag as u32)
                    .wrapping_add(get32(b, 4 * (id % 4)));
                set16(r, 24 + 2 * k, tag.wrapping_add(1));
                out
            }),
            ("copied_member", &|r, _| {
                let id = get32(r, 0) as usize;
                r[4 + id % 16] = r[4 + id % 16].wrapping_add(1);
                let out = bytes_sum(&r[5..9]);
                r[5 + id % 8] = 9;
                out
            }),
        ],
    );
    check_records(
        &src,
        24,
        &[1, 2, 3, 21, 22, 23],
        &|_, _| {},
        &[("padded", &|r, _| {
            let c = r[0] as usize;
            let w = 4 + 4 * (c % 3);
            set32(r, w, get32(r, w).wrapping_add(r[16 + c % 5] as u32));
            r[17 + c % 4] = c as u8;
            let ws = (0..3).fold(0u32, |s, k| s.wrapping_add(get32(r, 4 + 4 * k)));
            ws.wrapping_add(bytes_sum(&r[16..21]))
                .wrapping_add(c as u32)
        })],
    );
}

/// A SHA-256 context as hashing kernels keep it, `{ uchar data[64]; uint datalen; ulong
/// bitlen; uint state[8]; }` (112 bytes: padding before the ulong at 72), updated by a helper
/// through its address with run-time indices (`c->data[c->datalen]`, which clspv got right,
/// and a word of the block, `((const uint *)c->data)[k]`, which it read as 0), then written
/// back.
#[test]
fn private_hash_context_updated_by_a_helper() {
    let src = r#"
typedef struct { uchar data[64]; uint datalen; ulong bitlen; uint state[8]; } sha_t;
void sha_add(sha_t *c, const uchar *msg, uint n) { for (uint i = 0; i < n; i++) { c->data[c->datalen] = msg[i]; c->datalen++; if (c->datalen == 64) { c->state[c->bitlen % 8] += ((const uint *)c->data)[(c->bitlen / 512) % 16]; c->bitlen += 512; c->datalen = 0; } } }
kernel void sha(global sha_t *a, global uint *out) { uint g = get_global_id(0); sha_t c = a[g]; uchar msg[40]; for (uint i = 0; i < 40; i++) msg[i] = (uchar)(g + i * 7); c.datalen %= 64; sha_add(&c, msg, 40); out[g] = c.state[(c.bitlen / 512) % 8] ^ c.data[(c.datalen + 63) % 64]; a[g] = c; }
"#;
    let get64 = |r: &[u8]| u64::from_le_bytes(r[72..80].try_into().unwrap());
    check_records(
        src,
        112,
        &[68, 69, 70, 71],
        &|_, _| {},
        &[("sha", &|r, g| {
            let mut len = get32(r, 64) as usize % 64;
            let mut bits = get64(r);
            for i in 0..40u32 {
                r[len] = (g + i * 7) as u8;
                len += 1;
                if len == 64 {
                    let s = 80 + 4 * (bits % 8) as usize;
                    let w = get32(r, 4 * ((bits / 512) % 16) as usize);
                    set32(r, s, get32(r, s).wrapping_add(w));
                    bits = bits.wrapping_add(512);
                    len = 0;
                }
            }
            set32(r, 64, len as u32);
            r[72..80].copy_from_slice(&bits.to_le_bytes());
            get32(r, 80 + 4 * ((bits / 512) % 8) as usize) ^ r[(len + 63) % 64] as u32
        })],
    );
}

// ---------------------------------------------------------------- vload_half (item 8)

/// `vload_half`/`vloada_half` and their vector forms from `__global`, `__local` and
/// `__private` memory, at run-time offsets, against the host's half → float conversion.
/// (Issue 15 reports wrong elements from local and private memory; neither this shape nor the
/// next reproduces it with vkcl's options: regression guards, not fixes.)
#[test]
fn vload_half_from_every_address_space() {
    let src = r#"
kernel void k(global const ushort *h, global float *out, uint off) {
    local ushort l[64];
    ushort p[64];
    for (int n = 0; n < 64; n++) { l[n] = h[n]; p[n] = h[n]; }
    barrier(CLK_LOCAL_MEM_FENCE);
    const global half *gh = (const global half *)h;
    const local half *lh = (const local half *)l;
    const private half *ph = (const private half *)p;
    out[0] = vload_half(off, gh);
    out[1] = vload_half(off, lh);
    out[2] = vload_half(off, ph);
    vstore4(vload_half4(off, gh), 1, out);
    vstore4(vload_half4(off, lh), 2, out);
    vstore4(vload_half4(off, ph), 3, out);
    vstore4(vloada_half4(off, gh), 4, out);
    vstore4(vloada_half4(off, lh), 5, out);
    vstore4(vloada_half4(off, ph), 6, out);
}
"#;
    // Halves 1.0 + n/1024 (exact in f32).
    let h: Vec<u16> = (0..64u16).map(|n| 0x3c00 + n).collect();
    let half = |b: u16| 1.0 + (b - 0x3c00) as f32 / 1024.0;
    let words: Vec<u32> = h
        .chunks(2)
        .map(|c| c[0] as u32 | (c[1] as u32) << 16)
        .collect();
    for off in [0u32, 1, 3, 5] {
        let out = run_words(src, "", "k", &[words.clone(), vec![0; 28]], &[off], 1);
        let f: Vec<f32> = out[1].iter().map(|&w| f32::from_bits(w)).collect();
        let o = off as usize;
        let one = half(h[o]);
        assert_eq!(f[..3], [one, one, one], "scalar, offset {off}");
        let four: Vec<f32> = (0..4).map(|c| half(h[4 * o + c])).collect();
        for (row, what) in [(1, "global"), (2, "local"), (3, "private")] {
            assert_eq!(
                f[4 * row..4 * row + 4],
                four,
                "vload_half4 {what}, offset {off}"
            );
            assert_eq!(
                f[4 * row + 12..4 * row + 16],
                four,
                "vloada_half4 {what}, offset {off}"
            );
        }
    }
}

/// The piglit shape: the halves go through a `__local half *` kernel argument and a private
/// `half` array, copied element by element, then read back with vload_halfN at offsets.
#[test]
fn vload_half_through_local_argument_and_private_half_array() {
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global const half *in, global float *out, local half *l, uint off) {
    half p[32];
    for (int n = 0; n < 32; n++) { l[n] = in[n]; p[n] = in[n]; }
    barrier(CLK_LOCAL_MEM_FENCE);
    vstore2(vload_half2(off, l), 0, out);
    vstore2(vload_half2(off, p), 1, out);
    vstore8(vload_half8(off, l), 1, out);
    vstore8(vload_half8(off, p), 2, out);
    out[24] = vload_half(off + 1, l);
    out[25] = vload_half(off + 1, p);
}
"#;
    let h: Vec<u16> = (0..32u16).map(|n| 0x3c00 + 3 * n).collect();
    let half = |b: u16| 1.0 + (b - 0x3c00) as f32 / 1024.0;
    let e = Env::new();
    if !device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp16") {
        eprintln!("no cl_khr_fp16: a half array and half stores are not OpenCL C here");
        return;
    }
    let p = e.program(src, "");
    let k = kernel(p, "k");
    let input = e.buffer_from(&h);
    for off in [0u32, 1, 2] {
        let out = e.buffer_from(&[0f32; 26]);
        arg(k, 0, &input);
        arg(k, 1, &out);
        arg_local(k, 2, 64);
        arg(k, 3, &off);
        e.run(k, None, &[1], None);
        let f: Vec<f32> = e.read(out, 26);
        let o = off as usize;
        let two: Vec<f32> = (0..2).map(|c| half(h[2 * o + c])).collect();
        let eight: Vec<f32> = (0..8).map(|c| half(h[8 * o + c])).collect();
        assert_eq!(f[0..2], two, "vload_half2 local, offset {off}");
        assert_eq!(f[2..4], two, "vload_half2 private, offset {off}");
        assert_eq!(f[8..16], eight, "vload_half8 local, offset {off}");
        assert_eq!(f[16..24], eight, "vload_half8 private, offset {off}");
        assert_eq!(f[24..26], [half(h[o + 1]); 2], "vload_half, offset {off}");
        check!(clReleaseMemObject(out));
    }
    check!(clReleaseMemObject(input));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// The half nearest to `x` in `mode` (0 rte, 1 rtz, 2 rtp, 3 rtn), from the double's bits
/// (the reference for vstore_half of doubles: one rounding, straight from double).
fn half_of(x: f64, mode: u32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let neg = sign != 0;
    let a = bits & !(1 << 63);
    if a > 0x7ff0_0000_0000_0000 {
        return 0x7e00 | sign;
    }
    if a == 0x7ff0_0000_0000_0000 {
        return 0x7c00 | sign;
    }
    let away = |inexact: bool| inexact && ((mode == 2 && !neg) || (mode == 3 && neg));
    let biased = (a >> 52) as i64;
    let e = if biased == 0 { -1022 } else { biased - 1023 };
    let m = (a & ((1 << 52) - 1)) | if biased == 0 { 0 } else { 1 << 52 };
    if e > 15 {
        // Past the largest half: infinity, or the largest finite half towards zero.
        let inf = mode == 0 || away(true);
        return sign | if inf { 0x7c00 } else { 0x7bff };
    }
    // Bits of the 53-bit significand below the half's last one.
    let shift = 42 + (-14 - e).max(0) as u32;
    let (q, rem, half) = if shift >= 64 {
        (0, m, u64::MAX)
    } else {
        (m >> shift, m & ((1u64 << shift) - 1), 1u64 << (shift - 1))
    };
    let up = match mode {
        0 => rem > half || (rem == half && q & 1 == 1),
        1 => false,
        _ => away(rem != 0),
    };
    let q = q + u64::from(up);
    let h = if e >= -14 {
        (((e + 14) as u64) << 10) + q
    } else {
        q
    };
    // Rounding up past the largest half gives infinity's encoding: right for rte, rtp (+), rtn (-).
    sign | h.min(0x7c00) as u16
}

/// vstore_half and vstorea_half of doubles, every rounding mode and width (clspv crashed on
/// all of them): each value rounded once, straight from double, as the spec's conversion
/// rules say; ties, values between halves by less than a float's precision, overflow,
/// subnormal halves, NaN.
#[test]
fn vstore_half_of_doubles_rounds_once() {
    let e = Env::new();
    let values: Vec<f64> = [
        1.0,
        1.0 + 2f64.powi(-11),
        1.0 + 2f64.powi(-11) + 2f64.powi(-40),
        1.0 + 2f64.powi(-11) - 2f64.powi(-40),
        -(1.0 + 3.0 * 2f64.powi(-11)),
        65504.0,
        65519.0,
        65520.0,
        1e300,
        -1e300,
        2f64.powi(-24) * 0.75,
        -2f64.powi(-20) * 1.3,
        3.0e-6,
        0.1,
        -0.0,
        f64::INFINITY,
        f64::NAN,
    ]
    .to_vec();
    let n = values.len();
    let modes = ["_rte", "_rtz", "_rtp", "_rtn"];
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
               kernel void k(global half *o, global const double *a, local half *l) {\n\
               size_t i = get_global_id(0), n = get_global_size(0);\n\
               vstore_half_rte(a[i], i, o); vstore_half_rtz(a[i], n + i, o);\n\
               vstore_half_rtp(a[i], 2 * n + i, o); vstore_half_rtn(a[i], 3 * n + i, o);\n\
               vstore_half(a[i], 4 * n + i, l); barrier(CLK_LOCAL_MEM_FENCE);\n\
               vstore_half4_rtz((double4)(a[i]), i, o + 5 * n);\n\
               vstorea_half2_rtp((double2)(a[i], -a[i]), i, o + 9 * n);\n\
               ((global ushort *)o)[4 * n + i] = ((local ushort *)l)[4 * n + i]; }";
    let p = e.program(src, "");
    let k = kernel(p, "k");
    let a = e.buffer_from(&values);
    let o = e.buffer(CL_MEM_READ_WRITE, 2 * 11 * n, std::ptr::null_mut());
    arg(k, 0, &o);
    arg(k, 1, &a);
    arg_local(k, 2, 2 * 5 * n);
    e.run(k, None, &[n], None);
    let got: Vec<u16> = e.read(o, 11 * n);
    let nan = |h: u16| h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
    let same = |g: u16, w: u16| g == w || (nan(g) && nan(w));
    for (i, &x) in values.iter().enumerate() {
        for (m, name) in modes.iter().enumerate() {
            let (g, w) = (got[m * n + i], half_of(x, m as u32));
            assert!(
                same(g, w),
                "vstore_half{name}({x:e}): {g:#06x}, expected {w:#06x}"
            );
        }
        assert!(
            same(got[4 * n + i], half_of(x, 0)),
            "vstore_half to local ({x:e})"
        );
        for c in 0..4 {
            let g = got[5 * n + 4 * i + c];
            assert!(
                same(g, half_of(x, 1)),
                "vstore_half4_rtz({x:e})[{c}]: {g:#06x}"
            );
        }
        let (g0, g1) = (got[9 * n + 2 * i], got[9 * n + 2 * i + 1]);
        assert!(
            same(g0, half_of(x, 2)) && same(g1, half_of(-x, 2)),
            "vstorea_half2_rtp({x:e})"
        );
    }
}

/// vstorea_halfN of floats crashed clspv under OpenCL C 2.0 and 3.0 (piglit's vstorea_half
/// tests, which build for the device's version once it is 2.0): every width, to global and
/// local memory, at the aligned offsets (3 components take 4 halves), the same under every
/// version; a rounding-mode form too.
#[test]
fn vstorea_half_of_floats_in_every_version() {
    let e = Env::new();
    let mut src =
        String::from("kernel void k(global half *o, global const float *a, local half *l) {\n");
    // Each width stores its vector at offset 1 (aligned: 2n halves in, 4 for 3 components).
    let mut at = 0;
    let mut layout = vec![];
    for n in [2usize, 3, 4, 8, 16] {
        let stride = if n == 3 { 4 } else { n };
        let comps: Vec<String> = (0..n).map(|c| format!("a[{c}]")).collect();
        let v = format!("(float{n})({})", comps.join(", "));
        src += &format!(
            "vstorea_half{n}({v}, 1, o + {at});\n\
             vstorea_half{n}_rtz({v}, 1, l + {at}); barrier(CLK_LOCAL_MEM_FENCE);\n\
             for (int i = 0; i < {stride}; i++) ((global ushort *)o)[{at} + 128 + {stride} + i] = ((local ushort *)l)[{at} + {stride} + i];\n"
        );
        layout.push((n, stride, at));
        at += 2 * stride;
    }
    src += "}";
    let values: Vec<f32> = (0..16).map(|i| 0.5 + i as f32 * 1.25).collect();
    for std in ["", "-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let p = e.program(&src, std);
        let k = kernel(p, "k");
        let a = e.buffer_from(&values);
        let o = e.buffer_from(&vec![0u16; 2 * 128]);
        arg(k, 0, &o);
        arg(k, 1, &a);
        arg_local(k, 2, 2 * 128);
        e.run(k, None, &[1], None);
        let got: Vec<u16> = e.read(o, 2 * 128);
        for &(n, stride, at) in &layout {
            for region in 0..2 {
                for c in 0..n {
                    // 0.5 + 1.25 i is exact in half: every rounding mode gives it.
                    let want = half_of(values[c] as f64, 0);
                    let g = got[region * 128 + at + stride + c];
                    assert_eq!(
                        g, want,
                        "{std} vstorea_half{n} region {region} component {c}"
                    );
                }
            }
            assert_eq!(got[at], 0, "{std} vstorea_half{n} wrote before its offset");
        }
        check!(clReleaseMemObject(a));
        check!(clReleaseMemObject(o));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// convert_doubleN (and _rte) from integers and floats crashed clspv (pyopencl's random
/// number generators use them): exact where the value is a double, ties to even otherwise.
#[test]
fn convert_double_of_every_source_type() {
    let e = Env::new();
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
               kernel void k(global double4 *o, global const uint4 *u, global const long4 *l,\n\
               global const float4 *f, global const int4 *i) {\n\
               o[0] = convert_double4(u[0]); o[1] = convert_double4_rte(l[0]);\n\
               o[2] = convert_double4(f[0]); o[3] = (double4)(convert_double(i[0].x),\n\
               convert_double_rte(l[0].y), convert_double(f[0].z), convert_double(u[0].w));\n\
               o[4] = convert_double4(convert_char4(i[0])); }";
    let p = e.program(src, "");
    let k = kernel(p, "k");
    let u = [0u32, 1, u32::MAX, 123_456_789];
    let l = [
        (1i64 << 53) + 1,
        -((1i64 << 53) + 3),
        (1 << 62) + (1 << 9),
        -7,
    ];
    let f = [1.5f32, -0.0, 3e38, 1e-40];
    let i = [i32::MIN, 5, -1, 0];
    let o = e.buffer(CL_MEM_READ_WRITE, 5 * 32, std::ptr::null_mut());
    let (bu, bl, bf, bi) = (
        e.buffer_from(&u),
        e.buffer_from(&l),
        e.buffer_from(&f),
        e.buffer_from(&i),
    );
    for (n, m) in [o, bu, bl, bf, bi].iter().enumerate() {
        arg(k, n as u32, m);
    }
    e.run(k, None, &[1], None);
    let got: Vec<u64> = e.read(o, 20);
    let mut want: Vec<f64> = u.iter().map(|&x| x as f64).collect();
    want.extend(l.iter().map(|&x| x as f64));
    want.extend(f.iter().map(|&x| x as f64));
    want.extend([i[0] as f64, l[1] as f64, f[2] as f64, u[3] as f64]);
    want.extend(i.iter().map(|&x| x as i8 as f64));
    let want: Vec<u64> = want.iter().map(|x| x.to_bits()).collect();
    // f[3] is a float denormal: a device without CL_FP_DENORM for floats (NVIDIA's Vulkan
    // driver) may flush it to zero before the conversion.
    let denorm = device_val::<u64>(e.dev, 0x101B /* SINGLE_FP_CONFIG */) & 1 != 0;
    let mut got = got;
    if !denorm && got[11] == 0 {
        got[11] = want[11];
    }
    assert_eq!(got, want);
}

// ---------------------------------------------------------------- CLBlast's GEMM kernels (issue 15)

/// A `__local` array passed to a function that is not inlined by the source (OpenCL C 1.x,
/// no `inline`), the shape of CLBlast's direct GEMM (`XgemmDirect(..., alm, blm, ...)`):
/// clspv 0.0.1 lowered the constant-offset byte GEPs LLVM makes of `tile[(r + 2 * row) * 17 +
/// k]` (k unrolled) to `tile[k]`, dropping the row: ZGEMM's and SGEMM's direct kernels were
/// wrong at every k >= 16. Every function is now inlined first (`-inline-entry-points`).
#[test]
fn local_array_passed_to_a_function() {
    let src = r#"
void body(__global const uint *in, __global uint *out, __local uint *tile) {
  const int l = get_local_id(0);
  const int row = l / 8, col = l % 8;
  for (int i = 0; i < 2; i++) for (int j = 0; j < 2; j++)
    tile[(2 * row + i) * 17 + 2 * col + j] = in[(2 * row + i) * 16 + 2 * col + j];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint acc[2] = {0, 0};
  for (int k = 0; k < 16; k++)
    for (int r = 0; r < 2; r++) acc[r] += tile[(r + 2 * row) * 17 + k] * (uint)(k + 1);
  for (int r = 0; r < 2; r++) out[2 * l + r] = acc[r];
}
kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void k(__global const uint *in, __global uint *out) {
  __local uint tile[16 * 17];
  body(in, out, tile);
}
"#;
    let mut rng = Rng(0x1234_5678);
    let input: Vec<u32> = (0..256).map(|_| rng.below(1000)).collect();
    for opts in ["", "-cl-std=CL1.1", "-cl-std=CL3.0"] {
        let out = run_words(src, opts, "k", &[input.clone(), vec![0; 128]], &[], 64);
        let want: Vec<u32> = (0..64)
            .flat_map(|l| {
                let row = l / 8;
                let input = &input;
                (0..2).map(move |r| {
                    (0..16)
                        .map(|k| input[(r + 2 * row) * 16 + k] * (k as u32 + 1))
                        .sum::<u32>()
                })
            })
            .collect();
        assert_eq!(out[1], want, "options {opts:?}");
    }
}

/// A buffer read both as a struct of two 2-vectors and as one of its vector types, the struct
/// indexed by a sum of three run-time terms: CLBlast's `realND bvec = bgm[idk*(b_ld/2) + idn +
/// (b_offset/2)]` (struct cfloat2 {float2 x; float2 y;}) next to `((__global float2*)bgm)[...]`,
/// which makes every CGEMM wrong. clspv 0.0.1 types the buffer as an array of the vector and
/// then indexes it with the struct's index unscaled, reading member x twice (words 0 1 0 1 of
/// the buffer where 12 13 14 15 are right); a sum with a constant term, or of two terms, is
/// right. The index is gone before vkcl sees the SPIR-V: vkcl subscripts a pointer to an array
/// instead, before clspv (src/compiler/sum_index.rs).
#[test]
fn struct_of_vectors_from_a_buffer_read_as_the_vector_type() {
    let src = r#"
typedef struct { uint2 x; uint2 y; } pair;
kernel void k(global const pair *b, global uint2 *out, uint ld, uint off) {
  uint i = get_global_id(0);
  if (ld % 2 == 0) {
    pair v = b[(i / 8) * (ld / 2) + i % 8 + off / 2];
    out[2 * i] = v.x;
    out[2 * i + 1] = v.y;
  } else {
    out[i] = ((global const uint2 *)b)[i];
  }
}
"#;
    let (ld, off) = (32u32, 6u32);
    let out = run_words(
        src,
        "",
        "k",
        &[numbered(1024), vec![0; 256]],
        &[ld, off],
        64,
    );
    let want: Vec<u32> = (0..64u32)
        .flat_map(|i| {
            let s = (i / 8) * (ld / 2) + i % 8 + off / 2;
            (0..4).map(move |w| 0x100 + 4 * s + w)
        })
        .collect();
    assert_eq!(out[1], want);
}

/// One of two loads chosen by a condition, the two indices each other's transpose: CLBlast's
/// SymmLowerToSquared/SymmUpperToSquared (`if (id_two <= id_one) result = src[id_two*ld +
/// id_one]; else result = src[id_one*ld + id_two];`), in every SYMM program. clspv 0.0.1
/// crashes (SIGSEGV in SPIRVProducerPass) on it, also with -cl-opt-disable; choosing the index
/// instead of the load (`src[c ? i : j]`) compiles: vkcl rewrites the first form into the second
/// before clspv (src/compiler/chosen_load.rs).
#[test]
fn load_chosen_between_transposed_indices() {
    let src = r#"
kernel void k(global const uint *src, global uint *dest, uint a, uint ld) {
  uint i = get_global_id(0);
  uint r;
  if (a <= i) r = src[a * ld + i];
  else r = src[i * ld + a];
  dest[i] = r;
}
"#;
    let (a, ld) = (3u32, 16u32);
    let out = run_words(src, "", "k", &[numbered(256), vec![0; 16]], &[a, ld], 16);
    let want: Vec<u32> = (0..16u32)
        .map(|i| 0x100 + if a <= i { a * ld + i } else { i * ld + a })
        .collect();
    assert_eq!(out[1], want);
}

/// Double copysign was lowered with float masks (copysign(0.5, 1.4) gave 1.39999962), and
/// libclc's double sinh, which uses it, returned about its argument (sinh(1.4) = 1.39999995):
/// both against the host's libm, scalars and a vector.
#[test]
fn double_copysign_and_sinh() {
    let e = Env::new();
    if !device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64") {
        return;
    }
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
               kernel void k(global double *o, global const double *x) {\n\
               int i = get_global_id(0);\n\
               o[4 * i] = copysign(0.5, x[i]); o[4 * i + 1] = sinh(x[i]);\n\
               double2 v = copysign((double2)(x[i], 2.0), (double2)(-1.0, x[i]));\n\
               o[4 * i + 2] = v.x; o[4 * i + 3] = sinh((double2)(x[i], 0.0)).x; }";
    let p = e.program(src, "");
    let k = kernel(p, "k");
    let x = [1.4f64, -0.5, 2.0, -3.0, 1e-3, 30.0, -700.0, 0.0];
    let xb = e.buffer_from(&x);
    let o = e.buffer(CL_MEM_READ_WRITE, x.len() * 32, std::ptr::null_mut());
    arg(k, 0, &o);
    arg(k, 1, &xb);
    e.run(k, None, &[x.len()], None);
    let got: Vec<f64> = e.read(o, x.len() * 4);
    let close = |g: f64, w: f64| g == w || ((g - w) / w).abs() < 1e-13;
    for (i, &v) in x.iter().enumerate() {
        let want = [0.5f64.copysign(v), v.sinh(), -v.abs(), v.sinh()];
        for c in 0..4 {
            assert!(
                close(got[4 * i + c], want[c]),
                "x = {v}: output {c} is {}, want {}",
                got[4 * i + c],
                want[c]
            );
        }
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// The last of several `__local` values chosen by conditions (pyopencl's scan with
/// `scan_expr="b"`): clspv makes a chain of selects of `__local` pointers. Lavapipe runs it
/// right; on the H200 (NVIDIA 580) rows 1 to 15 of the array read as zeros everywhere in the
/// kernel, and neither selects of the row index, nor selects of the loaded values, nor
/// narrowing VariablePointers changed that (measured, issue 15): this test fails there.
#[test]
fn last_of_local_values_chosen_by_conditions() {
    let src = "__attribute__((reqd_work_group_size(256, 1, 1)))\n\
               kernel void t(global uint *out, uint n) {\n\
               local uint l[17][257];\n\
               uint lid = get_local_id(0);\n\
               for (int k = 0; k < 16; k++) l[k][lid] = lid * 100 + k;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               uint s = l[0][lid];\n\
               for (int k = 1; k < 16; k++) if (lid * 16 + k < n) s = l[k][lid];\n\
               l[16][lid] = s;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               out[lid] = l[16][lid];\n\
               out[256 + lid] = l[lid % 16][lid]; }";
    for n in [0u32, 10, 1000, 4096] {
        let got = run_words(src, "", "t", &[vec![0u32; 512]], &[n], 256);
        let want: Vec<u32> = (0..256u32)
            .map(|lid| lid * 100 + (1..16).filter(|k| lid * 16 + k < n).max().unwrap_or(0))
            .chain((0..256u32).map(|lid| lid * 100 + lid % 16))
            .collect();
        assert_eq!(got[0], want, "n = {n}");
    }
}

/// A `__local` array of three dimensions of a struct, written at run-time and constant indices
/// and read at run-time ones (compiler::workgroup_arrays makes it one array of the struct):
/// every element keeps its own value.
#[test]
fn local_arrays_of_three_dimensions_of_structs() {
    let src = "struct p { uint x; ushort y; uchar z; };\n\
               kernel void t(global uint *out, uint n) {\n\
               local struct p a[3][5][7];\n\
               uint i = get_local_id(0);\n\
               if (i < 105) { a[i / 35][i / 7 % 5][i % 7].x = i * 3; a[i / 35][i / 7 % 5][i % 7].y = i + n;\n\
                              a[i / 35][i / 7 % 5][i % 7].z = i; }\n\
               if (i == 104) a[2][4][6].z = 200;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               uint j = (i * 13 + n) % 105;\n\
               struct p q = a[j / 35][j / 7 % 5][j % 7];\n\
               out[i] = q.x + (q.y << 10) + ((uint)q.z << 24); }";
    for n in [0u32, 7] {
        let got = run_words(src, "", "t", &[vec![0u32; 128]], &[n], 128);
        let want: Vec<u32> = (0..128u32)
            .map(|i| {
                let j = (i * 13 + n) % 105;
                let z = if j == 104 { 200 } else { j };
                j * 3 + ((j + n) << 10) + (z << 24)
            })
            .collect();
        assert_eq!(got[0], want, "n = {n}");
    }
}

/// pyopencl's scan: `__local` packed structs of four ints (and a pad) in a 2D array, read back
/// through an `int *` at a word index (clspv: a pointer access chain past each struct's end,
/// which compiler::workgroup_words makes an array of words). Word w of the output is word w%4
/// of the struct thread w/4 stored: the input's word w.
#[test]
fn local_structs_read_through_int_pointers() {
    let input = numbered(256);
    let got = run_words(
        LOCAL_STRUCTS,
        "",
        "k",
        &[vec![0u32; 256], input.clone()],
        &[],
        64,
    );
    assert_eq!(got[0], input);
}

/// [`local_structs_read_through_int_pointers`] with SVM pointers (the physical-addressing
/// build): the view's offset (compiler::word_views), divided in 64 bits, made clspv take the
/// word within each struct as the byte offset modulo 5 (fixed by dividing in 32 bits).
#[test]
fn local_structs_read_through_int_pointers_with_svm() {
    let input = numbered(256);
    let bufs = [vec![0u32; 256], input.clone()];
    let Some(got) = run_with_svm(LOCAL_STRUCTS, "", "k", &bufs, &[] as &[u32], 64) else {
        return;
    };
    assert_eq!(got[0], input);
}

/// The physical-addressing module of [`local_structs_read_through_int_pointers_with_svm`] has
/// the shape of the logical one (issue 18): NVIDIA's driver mis-runs Workgroup arrays of
/// arrays, and Workgroup memory reached by pointer access chains or in modules declaring
/// `VariablePointers` (compiler::workgroup_arrays, workgroup_words, pointer_selects), so the
/// `__local` array must be one array of words, reached by plain access chains only, in a
/// module without `VariablePointers`. Those passes took 32-bit indices only, and clspv's
/// physical modules index with 64-bit `size_t`s: they left the module as clspv wrote it
/// (lavapipe runs both shapes right, so the values alone cannot tell). A child process (this
/// binary again) runs that test with VKCL_DUMP_DIR; this one reads its physical module.
#[test]
fn local_structs_read_through_int_pointers_with_svm_in_flat_words() {
    const OP_CAPABILITY: u32 = 17;
    const OP_TYPE_ARRAY: u32 = 28;
    const OP_TYPE_POINTER: u32 = 32;
    const OP_VARIABLE: u32 = 59;
    const OP_PTR_ACCESS_CHAIN: u32 = 67;
    const OP_IN_BOUNDS_PTR_ACCESS_CHAIN: u32 = 70;
    const VARIABLE_POINTERS: u32 = 4442;
    const WORKGROUP: u32 = 4;
    let e = Env::new();
    const CL_DEVICE_SVM_CAPABILITIES: cl_uint = 0x1053;
    if device_val::<cl_bitfield>(e.dev, CL_DEVICE_SVM_CAPABILITIES) == 0 {
        eprintln!("no SVM on this device");
        return;
    }
    let dir = std::env::temp_dir().join(format!("vkcl-flat-words-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "local_structs_read_through_int_pointers_with_svm",
            "--exact",
        ])
        .env("VKCL_DUMP_DIR", &dir)
        .env("VKCL_CACHE", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child failed:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let physical: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("-physical.spv"))
        .collect();
    assert_eq!(physical.len(), 1, "one physical module in {dir:?}");
    let bytes = std::fs::read(&physical[0]).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut insts = vec![];
    let mut at = 5;
    while at < words.len() {
        let n = (words[at] >> 16) as usize;
        assert!(n > 0);
        insts.push(&words[at..at + n]);
        at += n;
    }
    let op = |i: &[u32]| i[0] & 0xffff;
    let arrays: Vec<u32> = insts
        .iter()
        .filter(|i| op(i) == OP_TYPE_ARRAY)
        .map(|i| i[1])
        .collect();
    // Workgroup pointer types: (id, pointee).
    let workgroup: Vec<(u32, u32)> = insts
        .iter()
        .filter(|i| op(i) == OP_TYPE_POINTER && i[2] == WORKGROUP)
        .map(|i| (i[1], i[3]))
        .collect();
    let pointee = |ty: u32| workgroup.iter().find(|p| p.0 == ty).map(|p| p.1);
    let element = |ty: u32| {
        insts
            .iter()
            .find(|i| op(i) == OP_TYPE_ARRAY && i[1] == ty)
            .map(|i| i[2])
    };
    let mut found = false;
    for v in insts
        .iter()
        .filter(|i| op(i) == OP_VARIABLE && i[3] == WORKGROUP)
    {
        let array = pointee(v[1]).unwrap();
        let e = element(array).expect("an array");
        assert!(!arrays.contains(&e), "a Workgroup array of arrays is left");
        found = true;
    }
    assert!(found, "no Workgroup variable");
    assert!(
        !insts.iter().any(
            |i| matches!(op(i), OP_PTR_ACCESS_CHAIN | OP_IN_BOUNDS_PTR_ACCESS_CHAIN)
                && pointee(i[1]).is_some()
        ),
        "a pointer access chain into Workgroup memory is left"
    );
    assert!(
        !insts
            .iter()
            .any(|i| op(i) == OP_CAPABILITY && i[1] == VARIABLE_POINTERS),
        "VariablePointers is left"
    );
}

const LOCAL_STRUCTS: &str = "typedef struct { int a, b, c, d; } counts;\n\
               struct __attribute__((packed)) wrapped { counts v; int dummy; };\n\
               __attribute__((reqd_work_group_size(64, 1, 1)))\n\
               kernel void k(global int *o, global const int *in) {\n\
               local struct wrapped l[3][23];\n\
               int i = get_local_id(0);\n\
               counts c = { in[4 * i], in[4 * i + 1], in[4 * i + 2], in[4 * i + 3] };\n\
               l[i % 3][i / 3].v = c; l[i % 3][i / 3].dummy = -1;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               for (int k = 0; k < 4; k++) { int w = 64 * k + i, d = w / 4;\n\
               local int *src = (local int *) &l[d % 3][d / 3].v;\n\
               o[w] = src[w - 4 * d]; } }\n";

// ------------------------------------------- multiply-add chains (issue 21, multiply_adds)

/// clpeak's integer chain `x = y*x + y; y = x*y + x`, which LLVM factors into products of sums
/// and compiler::multiply_adds distributes back: int, int4 and long lanes against the host's
/// wrapping arithmetic, with other products of sums (`(a + 3) * b`, `(a + b) * a`) that
/// must stay as they are.
#[test]
fn integer_multiply_add_chains() {
    let src = r#"
#define MAD_4(x, y) x = (y*x) + y; y = (x*y) + x; x = (y*x) + y; y = (x*y) + x;
kernel void k(global uint *out, uint a) {
    uint g = get_global_id(0);
    int x = a + g, y = g + 1;
    int4 x4 = (int4)(a, a + 1, a + 2, a + 3) + (int)g, y4 = (int4)(g + 1);
    long xl = (long)a << 20 | g, yl = g + 7;
    for (int i = 0; i < 8; i++) { MAD_4(x, y); MAD_4(x4, y4); MAD_4(xl, yl); }
    uint p = (x + 3) * y, q = (x + y) * x;
    out[8 * g] = y; out[8 * g + 1] = y4.x; out[8 * g + 2] = y4.y; out[8 * g + 3] = y4.z;
    out[8 * g + 4] = y4.w; out[8 * g + 5] = (uint)yl ^ (uint)(yl >> 32);
    out[8 * g + 6] = p; out[8 * g + 7] = q;
}
"#;
    let items = 64usize;
    let a = 12345u32;
    let out = run_words(src, "", "k", &[vec![0; 8 * items]], &[a], items);
    fn chain<T: Copy>(mut x: T, mut y: T, mul: fn(T, T) -> T, add: fn(T, T) -> T) -> (T, T) {
        for _ in 0..16 {
            x = add(mul(y, x), y);
            y = add(mul(x, y), x);
        }
        (x, y)
    }
    let mul = u32::wrapping_mul;
    let add = u32::wrapping_add;
    for g in 0..items as u32 {
        let (x, y) = chain(a + g, g + 1, mul, add);
        let lanes: Vec<u32> = (0..4)
            .map(|l| chain(a + l + g, g + 1, mul, add).1)
            .collect();
        let (_, yl) = chain(
            (a as u64) << 20 | g as u64,
            g as u64 + 7,
            u64::wrapping_mul,
            u64::wrapping_add,
        );
        let want = [
            y,
            lanes[0],
            lanes[1],
            lanes[2],
            lanes[3],
            yl as u32 ^ (yl >> 32) as u32,
            mul(add(x, 3), y),
            mul(add(x, y), x),
        ];
        assert_eq!(out[0][8 * g as usize..][..8], want, "work-item {g}");
    }
}

/// A `__private` pointer a loop moves (`p += 13`, or `p -= 13` from the far end) read at
/// negative constant offsets (`p[j - 1]`, `p[j - 13]`): clspv lowers the pointer to an index
/// and divided each negative byte offset as unsigned, so `p[j - 1]` of a 4-byte element read
/// element `p + j + 0x3fffffff` (ffmpeg's deshake filter refined its features in the wrong
/// direction); compiler::private_offsets makes them negative again. Elements of 2, 4 and 8
/// bytes and of a vector type, against the host.
#[test]
fn negative_offsets_from_a_private_pointer_a_loop_moves() {
    let src = r#"
#define BODY(T, NAME)                                                                 \
kernel void NAME(global int *out, global const int *in) {                             \
    T buf[13 * 13];                                                                   \
    for (int i = 0; i < 169; i++) buf[i] = (T)in[i];                                  \
    T *p = buf;                                                                       \
    p += 13 + 1;                                                                      \
    T *q = buf + 13 * 12 + 1;                                                         \
    int k = 0;                                                                        \
    for (int i = 0; i < 11; i++, p += 13, q -= 13) {                                  \
        for (int j = 0; j < 11; j++, k++) {                                           \
            out[4 * k] = (int)(p[j + 1] - p[j - 1]);                                  \
            out[4 * k + 1] = (int)(p[j + 13] - p[j - 13]);                            \
            out[4 * k + 2] = (int)(q[j - 13] - q[j]);                                 \
            out[4 * k + 3] = (int)(q[j + 1] - q[j - 14]);                             \
        }                                                                             \
    }                                                                                 \
}
BODY(short, s)
BODY(int, i)
BODY(long, l)
kernel void v(global int *out, global const int *in) {
    int2 buf[13 * 13];
    for (int i = 0; i < 169; i++) buf[i] = (int2)(in[i], -in[i]);
    int2 *p = buf;
    p += 13 + 1;
    int k = 0;
    for (int i = 0; i < 11; i++, p += 13) {
        for (int j = 0; j < 11; j++, k++) {
            out[4 * k] = (p[j + 1] - p[j - 1]).x;
            out[4 * k + 1] = (p[j + 13] - p[j - 13]).y;
            out[4 * k + 2] = p[j - 1].x;
            out[4 * k + 3] = p[j - 13].y;
        }
    }
}
"#;
    let input: Vec<u32> = (0..169u32).map(|i| i * i + 7).collect();
    let x = |n: usize| input[n] as i32;
    let mut want = vec![];
    let mut want_v = vec![];
    for i in 0..11 {
        for j in 0..11 {
            let (p, q) = (14 + 13 * i + j, 13 * 12 + 1 - 13 * i + j);
            want.extend([
                x(p + 1) - x(p - 1),
                x(p + 13) - x(p - 13),
                x(q - 13) - x(q),
                x(q + 1) - x(q - 14),
            ]);
            want_v.extend([
                x(p + 1) - x(p - 1),
                -(x(p + 13) - x(p - 13)),
                x(p - 1),
                -x(p - 13),
            ]);
        }
    }
    for (name, want) in [("s", &want), ("i", &want), ("l", &want), ("v", &want_v)] {
        let out = run_words(
            src,
            "",
            name,
            &[vec![0; 4 * 121], input.clone()],
            &[] as &[u32],
            1,
        );
        let got: Vec<i32> = out[0].iter().map(|w| *w as i32).collect();
        assert_eq!(&got, want, "{name}");
    }
}
