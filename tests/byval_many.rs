//! Kernels with many by-value parameters (issue 16): every scalar and vector type (char ...
//! double16, half where the device has cl_khr_fp16), as many parameters as fit in
//! CL_DEVICE_MAX_PARAMETER_SIZE, far beyond the push-constant limit. Each kernel stores every
//! parameter's components into an output buffer; the host compares them with the bytes it set.
//! Such kernels failed at launch with CL_OUT_OF_RESOURCES.
#[macro_use]
mod common;
use common::*;

const CL_DEVICE_MAX_PARAMETER_SIZE: cl_uint = 0x1017;

/// A scalar type: its OpenCL C name and size in bytes.
const SCALARS: &[(&str, usize)] = &[
    ("char", 1),
    ("uchar", 1),
    ("short", 2),
    ("ushort", 2),
    ("int", 4),
    ("uint", 4),
    ("long", 8),
    ("ulong", 8),
    ("float", 4),
    ("double", 8),
    ("half", 2),
];
const WIDTHS: &[usize] = &[1, 2, 3, 4, 8, 16];

/// A parameter type: scalar, its size, width.
#[derive(Clone, Copy)]
struct Ty {
    scalar: &'static str,
    size: usize,
    width: usize,
}

impl Ty {
    fn name(&self) -> String {
        match self.width {
            1 => self.scalar.to_string(),
            w => format!("{}{w}", self.scalar),
        }
    }
    /// The argument's size (a 3-vector takes 4 elements).
    fn bytes(&self) -> usize {
        self.size * if self.width == 3 { 4 } else { self.width }
    }
}

/// A deterministic element value's bytes: finite, normal values for the float types (so that
/// no load or store can canonicalise them), any bits for the integers.
fn element(scalar: &str, size: usize, seed: u64) -> Vec<u8> {
    let h = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
        .wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let bits: u64 = match scalar {
        "half" => (h >> 63 << 15) | ((1 + (h >> 20) % 29) << 10) | (h & 0x3ff),
        "float" => (h >> 63 << 31) | ((1 + (h >> 30) % 253) << 23) | (h & 0x7f_ffff),
        "double" => (h >> 63 << 63) | ((1 + (h >> 52) % 2045) << 52) | (h & 0xf_ffff_ffff_ffff),
        _ => h,
    };
    bits.to_le_bytes()[..size].to_vec()
}

fn has_fp(ext: &str, t: &Ty) -> bool {
    match t.scalar {
        "half" => ext.contains("cl_khr_fp16"),
        "double" => ext.contains("cl_khr_fp64"),
        _ => true,
    }
}

/// Builds a kernel `k(global uchar *out, T0 p0, T1 p1, ...)` that stores each parameter's
/// elements at its own offset of `out`, runs it with host values and checks every element.
/// The parameters of `params` that did not arrive whole, each described.
fn check_params(e: &Env, params: &[Ty]) -> Vec<String> {
    let mut pragmas = String::from("");
    if params.iter().any(|t| t.scalar == "half") {
        pragmas += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
    }
    if params.iter().any(|t| t.scalar == "double") {
        pragmas += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    }
    let decls: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{} p{i}", t.name()))
        .collect();
    // Each parameter's elements go to out at its offset (in elements of its scalar type).
    let mut offset = 0;
    let mut body = String::new();
    let mut offsets = Vec::new();
    for (i, t) in params.iter().enumerate() {
        offsets.push(offset);
        let at = format!("(global {} *)(out + {offset})", t.scalar);
        body += &match t.width {
            1 => format!("    *{at} = p{i};\n"),
            w => format!("    vstore{w}(p{i}, 0, {at});\n"),
        };
        offset += t.size * t.width;
        offset = offset.next_multiple_of(8);
    }
    let src = format!(
        "{pragmas}kernel void k(global uchar *out, {}) {{\n{body}}}\n",
        decls.join(", ")
    );
    let p = e.program(&src, "");
    let k = kernel(p, "k");
    let out = e.buffer_from(&vec![0u8; offset.max(8)]);
    arg(k, 0, &out);
    let mut expected = vec![0u8; offset.max(8)];
    for (i, t) in params.iter().enumerate() {
        let mut value = vec![0xA5u8; t.bytes()];
        for c in 0..t.width {
            let el = element(
                t.scalar,
                t.size,
                (i * 16 + c) as u64 + t.bytes() as u64 * 977,
            );
            value[c * t.size..(c + 1) * t.size].copy_from_slice(&el);
            expected[offsets[i] + c * t.size..offsets[i] + (c + 1) * t.size].copy_from_slice(&el);
        }
        check!(clSetKernelArg(
            k,
            i as u32 + 1,
            value.len(),
            value.as_ptr().cast()
        ));
    }
    e.run(k, None, &[1], None);
    let got = e.read::<u8>(out, expected.len());
    let wrong: Vec<String> = params
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let r = offsets[i]..offsets[i] + t.size * t.width;
            (got[r.clone()] != expected[r.clone()]).then(|| {
                format!(
                    "parameter {i} ({}) of {}: got {:?}, want {:?}",
                    t.name(),
                    params.len(),
                    &got[r.clone()],
                    &expected[r]
                )
            })
        })
        .collect();
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    wrong
}

/// Asserts that every list of parameters `check_params` was given arrived whole.
fn assert_all_right(wrong: Vec<String>) {
    assert!(wrong.is_empty(), "{} wrong: {wrong:#?}", wrong.len());
}

fn max_parameter_size(e: &Env) -> usize {
    device_val::<usize>(e.dev, CL_DEVICE_MAX_PARAMETER_SIZE)
}

/// For every type, as many parameters of it as fit in CL_DEVICE_MAX_PARAMETER_SIZE beside the
/// output pointer (at most 64, so that each kernel stays small; 64 chars are still over the
/// 256 bytes of push constants only for the wider types, hence the mixed test below).
#[test]
fn many_parameters_of_each_type() {
    let e = Env::new();
    let ext = device_str(e.dev, CL_DEVICE_EXTENSIONS);
    let max = max_parameter_size(&e);
    let mut wrong = Vec::new();
    for &(scalar, size) in SCALARS {
        for &width in WIDTHS {
            let t = Ty {
                scalar,
                size,
                width,
            };
            if !has_fp(&ext, &t) {
                continue;
            }
            let n = ((max - 8) / t.bytes()).min(64);
            wrong.extend(check_params(&e, &vec![t; n]));
        }
    }
    assert_all_right(wrong);
}

/// One kernel with a parameter of every type of widths 1 to 4 (484 bytes with half and double),
/// then one with every 8- and 16-wide type that fits in the parameter size.
#[test]
fn one_parameter_of_every_type() {
    let e = Env::new();
    let ext = device_str(e.dev, CL_DEVICE_EXTENSIONS);
    let max = max_parameter_size(&e);
    let all = |widths: &[usize]| -> Vec<Ty> {
        let mut v = Vec::new();
        for &(scalar, size) in SCALARS {
            for &width in widths {
                let t = Ty {
                    scalar,
                    size,
                    width,
                };
                if has_fp(&ext, &t) {
                    v.push(t);
                }
            }
        }
        v
    };
    let mut wrong = check_params(&e, &all(&[1, 2, 3, 4]));
    let mut wide = Vec::new();
    let mut total = 8;
    for t in all(&[8, 16]) {
        if total + t.bytes() <= max {
            total += t.bytes();
            wide.push(t);
        }
    }
    wrong.extend(check_params(&e, &wide));
    assert_all_right(wrong);
}

/// Scalars filling the whole parameter size (the conformance test's min_max_parameter_size
/// shape: 1,016 chars beside the output pointer when the size is 1,024).
#[test]
fn scalars_filling_the_parameter_size() {
    let e = Env::new();
    let max = max_parameter_size(&e);
    let mut wrong = Vec::new();
    for (scalar, size) in [("char", 1), ("short", 2), ("int", 4), ("long", 8)] {
        let t = Ty {
            scalar,
            size,
            width: 1,
        };
        wrong.extend(check_params(&e, &vec![t; (max - 8) / size]));
    }
    assert_all_right(wrong);
}
