//! Kernels that store long vectors component by component (issue 16: compiler::store_vectors
//! merges four scalar stores of consecutive elements into one 4-vector store, which lavapipe
//! compiles four times faster in divergent control flow): the relationals shuffle tests'
//! shape (one work-item of a launch writes every copy, the others return), 8-, 16-, 32- and
//! 64-bit integers, float and double at widths 3, 8 and 16, with the input and output in
//! separate buffers and in one buffer (the launch then binds it twice: the Aliased variant),
//! a kernel that also reads its output (left alone) and vstore3's partial groups; and basic
//! vector_creation's shape (lines of `result[k] = (T n)(src[0], vload2(0, src + 1), ...)`,
//! whose byte and half stores the pass packs into 16-, 8- and 4-byte words). Every byte is
//! compared with the host's copy.
#[macro_use]
mod common;
use common::*;

const COPIES: usize = 8;

/// The component order of copy `i` of a `w`-component vector: reversed, rotated by `i`.
fn order(w: usize, i: usize) -> Vec<usize> {
    (0..w).map(|c| (w - 1 - c + i) % w).collect()
}

fn swizzle(order: &[usize]) -> String {
    let digits = b"0123456789abcdef";
    order.iter().map(|&o| digits[o] as char).collect()
}

/// The kernel: `COPIES` guarded copies `dst[i] = src[i].s<order>` (vload3 / vstore3 for 3).
fn source(ty: &str, w: usize, in_place_read: bool) -> String {
    let mut s = String::new();
    if ty == "double" {
        s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    }
    let tn = if w == 3 {
        ty.to_string()
    } else {
        format!("{ty}{w}")
    };
    let src = if in_place_read { "dst" } else { "src" };
    s += &format!("kernel void copy(global const {tn} *src, global {tn} *dst) {{\n");
    s += "    if (get_global_id(0) != 0) return;\n";
    for i in 0..COPIES {
        let sw = swizzle(&order(w, i));
        if w == 3 {
            s += &format!("    vstore3(vload3({i}, src).s{sw}, {i}, dst);\n");
        } else {
            s += &format!("    {{ {ty}{w} t = {src}[{i}]; dst[{i}] = t.s{sw}; }}\n");
        }
    }
    s + "}\n"
}

/// The host's result: `input` copied, each copy's components in `order`.
fn expected(input: &[u8], size: usize, w: usize) -> Vec<u8> {
    let stride = if w == 3 { 3 } else { w } * size;
    let mut out = input.to_vec();
    for i in 0..COPIES {
        for (c, &o) in order(w, i).iter().enumerate() {
            let (to, from) = (i * stride + c * size, i * stride + o * size);
            out[to..to + size].copy_from_slice(&input[from..from + size]);
        }
    }
    out
}

fn has_fp64(e: &Env) -> bool {
    let mut buf = vec![0u8; 8192];
    let mut len = 0usize;
    check!(clGetDeviceInfo(
        e.dev,
        CL_DEVICE_EXTENSIONS,
        buf.len(),
        buf.as_mut_ptr().cast(),
        &mut len
    ));
    String::from_utf8_lossy(&buf[..len]).contains("cl_khr_fp64")
}

#[test]
fn guarded_long_vector_copies_of_every_type() {
    let e = Env::new();
    let mut types = vec![
        ("char", 1),
        ("short", 2),
        ("int", 4),
        ("long", 8),
        ("float", 4),
    ];
    if has_fp64(&e) {
        types.push(("double", 8));
    }
    for (ty, size) in types {
        for w in [3usize, 4, 8, 16] {
            let bytes = COPIES * if w == 3 { 3 } else { w } * size;
            // Small values: every type's bit patterns are ordinary numbers (no NaN).
            let input: Vec<u8> = (0..bytes)
                .map(|b| {
                    if b % size == 0 {
                        (b / size % 61) as u8 + 1
                    } else {
                        0
                    }
                })
                .collect();
            let want = expected(&input, size, w);
            for (in_place, in_place_read) in [(false, false), (true, false), (false, true)] {
                let p = e.program(&source(ty, w, in_place_read), "");
                let k = kernel(p, "copy");
                let a = e.buffer_from(&input);
                let b = if in_place || in_place_read {
                    a
                } else {
                    e.buffer_from(&vec![0xeeu8; bytes])
                };
                arg(k, 0, &a);
                arg(k, 1, &b);
                e.run(k, None, &[32], None);
                assert_eq!(
                    e.read::<u8>(b, bytes),
                    want,
                    "{ty}{w}, one buffer: {in_place}, reading the output: {in_place_read}"
                );
                unsafe {
                    clReleaseMemObject(a);
                    if !(in_place || in_place_read) {
                        clReleaseMemObject(b);
                    }
                    clReleaseKernel(k);
                    clReleaseProgram(p);
                }
            }
        }
    }
}

/// basic vector_creation's kernels (the conformance test that timed out: lavapipe compiled
/// each `char16` kernel's 4,000 byte stores for 10-50 s): `LINES` lines that each build a
/// `T n` from parts of 1, 2, 3 and 4 components of `src`, one work-item, for 8-, 16- and
/// 32-bit types and n = 4, 8, 16; every line must hold src[0..n].
#[test]
fn vector_creation_lines() {
    const LINES: usize = 40;
    let e = Env::new();
    for (ty, size) in [("char", 1usize), ("ushort", 2), ("int", 4)] {
        let input: Vec<u8> = (0..16 * size)
            .map(|b| {
                if b % size == 0 {
                    (b / size) as u8 + 1
                } else {
                    0
                }
            })
            .collect();
        for n in [4usize, 8, 16] {
            let mut src =
                format!("kernel void create(global {ty} *src, global {ty}{n} *result) {{\n");
            for line in 0..LINES {
                // A different split of n into parts on each line.
                let (mut at, mut parts) = (0, vec![]);
                while at < n {
                    let p = (1 + (line + at) % 4).min(n - at);
                    parts.push(match p {
                        1 => format!("src[{at}]"),
                        p => format!("vload{p}(0, src + {at})"),
                    });
                    at += p;
                }
                src += &format!("    result[{line}] = ({ty}{n})({});\n", parts.join(", "));
            }
            let p = e.program(&(src + "}\n"), "");
            let k = kernel(p, "create");
            let a = e.buffer_from(&input);
            let b = e.buffer_from(&vec![0xeeu8; LINES * n * size]);
            arg(k, 0, &a);
            arg(k, 1, &b);
            e.run(k, None, &[1], None);
            let got = e.read::<u8>(b, LINES * n * size);
            for (line, got) in got.chunks(n * size).enumerate() {
                assert_eq!(got, &input[..n * size], "{ty}{n}, line {line}");
            }
            unsafe {
                clReleaseMemObject(a);
                clReleaseMemObject(b);
                clReleaseKernel(k);
                clReleaseProgram(p);
            }
        }
    }
}
