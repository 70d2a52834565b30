//! Doubles (cl_khr_fp64): the device query, and every double built-in's error in ULPs against
//! an exact reference (tests/math, tests/data/math_ref_f64.txt), with the bounds of the
//! OpenCL C spec's double-precision table (§7.4, "ULP values for double precision built-in
//! math functions").
#[macro_use]
mod common;
mod math;
use common::*;
use math::{check, Fmt, Kind};

const CL_DEVICE_DOUBLE_FP_CONFIG: cl_uint = 0x1032;
const CL_FP_DENORM: u64 = 1 << 0;
const CL_FP_INF_NAN: u64 = 1 << 1;
const CL_FP_ROUND_TO_NEAREST: u64 = 1 << 2;
const CL_FP_FMA: u64 = 1 << 5;

fn has_fp64() -> bool {
    device_str(device(), CL_DEVICE_EXTENSIONS)
        .split_whitespace()
        .any(|e| e == "cl_khr_fp64")
}

/// Devices whose Vulkan driver has shaderFloat64 and shaderInt64: doubles must be on.
#[test]
fn fp64_is_reported_consistently() {
    let cfg: u64 = device_val(device(), CL_DEVICE_DOUBLE_FP_CONFIG);
    let features =
        bytes_to_vec::<cl_name_version>(&device_info(device(), CL_DEVICE_OPENCL_C_FEATURES));
    let feature = features.iter().any(|f| f.name() == "__opencl_c_fp64");
    let name = device_str(device(), CL_DEVICE_NAME);
    if name.contains("llvmpipe") || name.contains("NVIDIA") {
        assert!(
            has_fp64(),
            "{name} has shaderFloat64 + shaderInt64: cl_khr_fp64 expected"
        );
    }
    if has_fp64() {
        // §4.2: the minimum for devices with doubles.
        let min = CL_FP_FMA | CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN | CL_FP_DENORM;
        assert_eq!(cfg & min, min, "CL_DEVICE_DOUBLE_FP_CONFIG {cfg:#x}");
        assert!(
            feature,
            "__opencl_c_fp64 missing from CL_DEVICE_OPENCL_C_FEATURES"
        );
        let pref: cl_uint = device_val(device(), CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE);
        assert!(pref >= 1);
    } else {
        assert_eq!(cfg, 0);
        assert!(!feature);
    }
}

const CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE: cl_uint = 0x100B;

/// A kernel using doubles builds under OpenCL C 1.2 and 3.0 and computes in double (not in
/// float: 1 + 2^-40 is not 1).
#[test]
fn double_arithmetic_is_double() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
               kernel void k(global double *o, global const double *a) {\n\
               size_t i = get_global_id(0);\n\
               o[i] = a[i] + 0x1p-40 + 1.0 / 3.0; }";
    for opts in ["", "-cl-std=CL3.0"] {
        let e = Env::new();
        let p = e.program(src, opts);
        let k = kernel(p, "k");
        let a = e.buffer_from(&[1.0f64, 2.0]);
        let o = e.buffer(CL_MEM_READ_WRITE, 16, std::ptr::null_mut());
        arg(k, 0, &o);
        arg(k, 1, &a);
        e.run(k, None, &[2], None);
        let r: Vec<f64> = e.read(o, 2);
        assert_eq!(
            r,
            vec![
                1.0 + 2f64.powi(-40) + 1.0 / 3.0,
                2.0 + 2f64.powi(-40) + 1.0 / 3.0
            ]
        );
    }
}

/// `nan(nancode)` returns a quiet NaN (OpenCL C §6.15.2), the code in its significand, for a
/// constant and a run-time code, scalar and vector: libclc's double form set no quiet bit, so
/// nan(0UL) was +inf (the conformance suite's printf double_limits). Float as well.
#[test]
fn nan_is_a_quiet_nan() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
               kernel void k(global ulong *o, global uint *f, global const ulong *c) {\n\
               o[0] = as_ulong(nan(0UL)); o[1] = as_ulong(nan(c[0])); o[2] = isnan(nan(0UL));\n\
               ulong2 v = as_ulong2(nan((ulong2)(c[0], 5UL))); o[3] = v.x; o[4] = v.y;\n\
               ulong3 w = as_ulong3(nan((ulong3)(0UL))); o[5] = w.z;\n\
               f[0] = as_uint(nan(0u)); f[1] = as_uint(nan((uint)c[0])); }";
    for opts in ["", "-cl-std=CL3.0"] {
        let e = Env::new();
        let p = e.program(src, opts);
        let k = kernel(p, "k");
        let o = e.buffer_from(&[0u64; 6]);
        let f = e.buffer_from(&[0u32; 2]);
        let c = e.buffer_from(&[3u64]);
        arg(k, 0, &o);
        arg(k, 1, &f);
        arg(k, 2, &c);
        e.run(k, None, &[1], None);
        let quiet = 0x7ff8_0000_0000_0000u64;
        assert_eq!(
            e.read::<u64>(o, 6),
            [quiet, quiet | 3, 1, quiet | 3, quiet | 5, quiet],
            "{opts}"
        );
        assert_eq!(e.read::<u32>(f, 2), [0x7fc0_0000, 0x7fc0_0003], "{opts}");
        for m in [o, f, c] {
            check!(clReleaseMemObject(m));
        }
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}

/// Double trunc, rint and round are exact, zeros keeping their signs, and so are the
/// vector forms: lavapipe (Mesa 25.0.7 on an AMD EPYC with AVX2) returned trunc(2^31 + 0.5)
/// and round(3.5) unchanged and rint(3.5) = 3 (its GLSL.std.450 Trunc and RoundEven), and
/// pow, which asks rint whether y is an integer, gave -0 for pow(-2e-305, 5.4e9) (NaN).
#[test]
fn double_rounding_is_exact() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
               kernel void k(global double *o, global const double *a) {\n\
               size_t i = get_global_id(0); double x = a[i];\n\
               double2 v = (double2)(x, x * -1.0);\n\
               o[6 * i] = trunc(x); o[6 * i + 1] = rint(x); o[6 * i + 2] = round(x);\n\
               o[6 * i + 3] = trunc(v).y; o[6 * i + 4] = rint(v).y; o[6 * i + 5] = round(v).y; }";
    let mut a = vec![
        0.0,
        -0.0,
        0.3,
        -0.3,
        0.5,
        -0.5,
        0.7,
        1.5,
        2.5,
        -2.5,
        3.5,
        4.5,
        2147483648.5,
        4294967296.5,
        8589934592.5,
        5431374593.82304,
        1e15 + 0.5,
        4503599627370495.5,
        4503599627370497.0,
        1e300,
        f64::INFINITY,
        f64::NAN,
    ];
    a.extend(a.clone().iter().map(|x| -x));
    let e = Env::new();
    let p = e.program(src, "");
    let k = kernel(p, "k");
    let input = e.buffer_from(&a);
    let o = e.buffer_from(&vec![0f64; 6 * a.len()]);
    arg(k, 0, &o);
    arg(k, 1, &input);
    e.run(k, None, &[a.len()], None);
    let got = e.read::<f64>(o, 6 * a.len());
    for (i, &x) in a.iter().enumerate() {
        let want = [
            x.trunc(),
            x.round_ties_even(),
            x.round(),
            (-x).trunc(),
            (-x).round_ties_even(),
            (-x).round(),
        ];
        for (j, w) in want.iter().enumerate() {
            let g = got[6 * i + j];
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{} of {x:e}: {g:e} for {w:e}",
                ["trunc", "rint", "round", "trunc2", "rint2", "round2"][j]
            );
        }
    }
    for m in [o, input] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

fn d(func: &str, kind: Kind, bound: f64) {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    check(Fmt { double: true }, func, func, kind, bound, "", |_| true);
}

macro_rules! ulp {
    ($($name:ident: $kind:ident $bound:expr;)*) => {
        $(#[test] fn $name() { d(stringify!($name), Kind::$kind, $bound as f64); })*
    };
}

ulp! {
    sin: F 4; cos: F 4; tan: F 5; asin: F 4; acos: F 4; atan: F 5;
    sinh: F 4; cosh: F 4; tanh: F 5; asinh: F 4; acosh: F 4; atanh: F 5;
    asinpi: F 5; acospi: F 5; atanpi: F 5; sinpi: F 4; cospi: F 4; tanpi: F 6;
    exp: F 3; exp2: F 3; exp10: F 3; expm1: F 3;
    log: F 3; log2: F 3; log10: F 3; log1p: F 2;
    sqrt: F 0; rsqrt: F 2; cbrt: F 2; erf: F 16; erfc: F 16; tgamma: F 16;
    pow: FF 16; powr: FF 16; atan2: FF 6; atan2pi: FF 6; hypot: FF 4;
    fmod: FF 0; remainder: FF 0; fdim: FF 0; fma: FFF 0;
    pown: FI 16; rootn: FI 16; ldexp: FI 0; ilogb: I 0; logb: F 0;
    frexp: Frexp 0; modf: Modf 0; sincos: Sincos 4; remquo: Remquo 0;
}

/// lgamma has no ULP bound in the spec's table; held to what a good libm does (glibc: 4).
#[test]
fn lgamma() {
    d("lgamma", Kind::F, 16.0);
}

/// A program that reaches double sinh, copysign and atan2 through a header gets vkcl's own
/// (the prelude once looked for their names in the source only, and pyopencl's complex cosh,
/// tan and tanh, in pyopencl-complex.h, got libclc's sinh: about its argument).
#[test]
fn double_math_named_in_a_header() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let dir = std::env::temp_dir().join(format!("vkcl-fp64-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("m.h"),
        "double f(double x, int j) {\n\
         return j == 0 ? sinh(x) : j == 1 ? copysign(x, -1.4) : atan2(x, -2.0); }\n",
    )
    .unwrap();
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#include \"m.h\"\n\
               kernel void k(global double *o, global const double *a) {\n\
               size_t i = get_global_id(0); o[i] = f(a[i], (int)(i % 3)); }";
    let e = Env::new();
    let p = e.program(src, &format!("-I {}", dir.display()));
    let k = kernel(p, "k");
    let x = [0.5f64, 0.5, 0.5, -2.0, -2.0, -2.0];
    let a = e.buffer_from(&x);
    let o = e.buffer(CL_MEM_READ_WRITE, 48, std::ptr::null_mut());
    arg(k, 0, &o);
    arg(k, 1, &a);
    e.run(k, None, &[6], None);
    let r: Vec<f64> = e.read(o, 6);
    std::fs::remove_dir_all(&dir).ok();
    for (i, (&x, &r)) in x.iter().zip(&r).enumerate() {
        let want = match i % 3 {
            0 => x.sinh(),
            1 => -x.abs(),
            _ => x.atan2(-2.0),
        };
        assert!(
            (r - want).abs() <= 4.0 * f64::EPSILON * want.abs(),
            "case {i}: f({x}) = {r}, expected {want}"
        );
    }
}

/// The double built-ins over every exponent (random mantissas, both signs; pairs for the
/// binary ones) against the host's libm (glibc: within an ULP), beyond the reference
/// tables' few hundred arguments each: a wrong value anywhere in the range shows (the way
/// libclc's double sinh, broken by clspv's double copysign, returned about its argument).
/// Held to the spec's bound plus the reference's ULP; functions listed in
/// ci/expectations/math.txt are reported only.
#[test]
fn double_sweep() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    type F1 = fn(f64) -> f64;
    type F2 = fn(f64, f64) -> f64;
    let unary: [(&str, f64, F1); 19] = [
        ("sin", 4.0, f64::sin),
        ("cos", 4.0, f64::cos),
        ("tan", 5.0, f64::tan),
        ("asin", 4.0, f64::asin),
        ("acos", 4.0, f64::acos),
        ("atan", 5.0, f64::atan),
        ("sinh", 4.0, f64::sinh),
        ("cosh", 4.0, f64::cosh),
        ("tanh", 5.0, f64::tanh),
        ("exp", 3.0, f64::exp),
        ("exp2", 3.0, f64::exp2),
        ("exp10", 3.0, |x| 10f64.powf(x)),
        ("expm1", 3.0, f64::exp_m1),
        ("log", 3.0, f64::ln),
        ("log2", 3.0, f64::log2),
        ("log10", 3.0, f64::log10),
        ("log1p", 2.0, f64::ln_1p),
        ("sqrt", 0.0, f64::sqrt),
        ("cbrt", 2.0, f64::cbrt),
    ];
    let binary: [(&str, f64, F2); 4] = [
        ("fmod", 0.0, |x, y| x % y),
        ("pow", 16.0, f64::powf),
        ("atan2", 6.0, f64::atan2),
        ("hypot", 4.0, f64::hypot),
    ];
    let mut next = math::xorshift(0x2545_f491_4f6c_dd1d);
    let mut a = vec![];
    let mut b = vec![];
    for e in 0..2047u64 {
        for _ in 0..24 {
            let r = next();
            a.push(f64::from_bits(
                (r & (1 << 63)) | e << 52 | (r & ((1 << 52) - 1)),
            ));
            // The second argument: an exponent near the first's half the time.
            let r2 = next();
            let e2 = match r2 & 1 {
                0 => (e as i64 + (r2 >> 1) as i64 % 64 - 32).clamp(0, 2046) as u64,
                _ => (r2 >> 8) % 2047,
            };
            b.push(f64::from_bits((r2 & (1 << 63)) | e2 << 52 | (next() >> 12)));
        }
    }
    let names: Vec<&str> = unary
        .iter()
        .map(|u| u.0)
        .chain(binary.iter().map(|u| u.0))
        .collect();
    let n = names.len();
    let mut body = String::new();
    for (j, u) in unary.iter().enumerate() {
        body += &format!("o[{n} * i + {j}] = {}(x);\n", u.0);
    }
    for (j, u) in binary.iter().enumerate() {
        body += &format!("o[{n} * i + {}] = {}(x, y);\n", unary.len() + j, u.0);
    }
    let src = format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
         kernel void k(global double *o, global const double *a, global const double *b) {{\n\
         size_t i = get_global_id(0); double x = a[i], y = b[i];\n{body}}}"
    );
    let e = Env::new();
    let p = e.program(&src, "");
    let k = kernel(p, "k");
    let (ba, bb) = (e.buffer_from(&a), e.buffer_from(&b));
    let o = e.buffer(CL_MEM_READ_WRITE, a.len() * n * 8, std::ptr::null_mut());
    arg(k, 0, &o);
    arg(k, 1, &ba);
    arg(k, 2, &bb);
    e.run(k, None, &[a.len()], None);
    let r: Vec<f64> = e.read(o, a.len() * n);
    let fmt = Fmt { double: true };
    let mut over = vec![];
    for (j, name) in names.iter().enumerate() {
        let (bound, mut worst) = (
            if j < unary.len() {
                unary[j].1
            } else {
                binary[j - unary.len()].1
            },
            (0.0, 0.0, 0.0),
        );
        for i in 0..a.len() {
            let want = match j < unary.len() {
                true => (unary[j].2)(a[i]),
                false => (binary[j - unary.len()].2)(a[i], b[i]),
            };
            let err = math::ulp_error(fmt, r[n * i + j], want, 0.0);
            if err > worst.0 || (err.is_nan() && !worst.0.is_nan()) {
                worst = (err, a[i], b[i]);
            }
        }
        let known = math::known_failure(fmt, name);
        println!(
            "{name}: max {:.3} ULP at ({:e}, {:e}){}",
            worst.0,
            worst.1,
            worst.2,
            if known.is_some() {
                " (listed in ci/expectations/math.txt)"
            } else {
                ""
            }
        );
        let within = worst.0 <= bound.max(0.5) + 1.0;
        if known.is_none() && !within {
            over.push(format!(
                "{name}({:e}, {:e}): {:.3} ULP > {bound}",
                worst.1, worst.2, worst.0
            ));
        }
    }
    assert!(over.is_empty(), "over their bounds:\n{}", over.join("\n"));
}

/// Double sin, cos, tan and sincos at the arguments argument reduction finds hardest
/// (tests/data/trig_ref_f64.txt, tools/trig_ref.py: the doubles closest to a multiple of pi/2
/// in every binade up to DBL_MAX, k * pi/2, one argument per binade, subnormals, the kernels'
/// boundaries, signed zeros, infinities, NaN), against mpmath, at the spec's bounds. libclc's
/// reduction (a fused fma assumed, lavapipe's is not) was 1.3e19 ULP off at large arguments.
#[test]
fn double_trig_reference() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let table = include_str!("data/trig_ref_f64.txt");
    let fmt = Fmt { double: true };
    let with_aux = |name, aux| {
        math::cases_in(table, name)
            .into_iter()
            .map(move |c| math::Case { aux, ..c })
    };
    let sincos: Vec<math::Case> = with_aux("sin", 0).chain(with_aux("cos", 1)).collect();
    for (func, kind, cases, bound) in [
        ("sin", Kind::F, math::cases_in(table, "sin"), 4.0),
        ("cos", Kind::F, math::cases_in(table, "cos"), 4.0),
        ("tan", Kind::F, math::cases_in(table, "tan"), 5.0),
        ("sincos", Kind::Sincos, sincos, 4.0),
    ] {
        let (w, wrong) = math::run(fmt, func, kind, &cases, "", false);
        println!(
            "{func}: max {:.3} ULP over {} cases; worst {}",
            w.err,
            cases.len(),
            w.what
        );
        assert!(
            w.err <= bound,
            "double {func}: {:.3} ULP > {bound}: {}\n{}",
            w.err,
            w.what,
            wrong.join("\n")
        );
    }
}

/// The vector forms of the built-ins vkcl replaces (one component at a time in its prelude)
/// give, component by component, the scalar form's bits, for each argument shape (an int
/// vector, a scalar int for ldexp, the pointers of remquo, frexp and modf). clspv crashed (SIGSEGV) on
/// libclc's vector double ldexp under -cl-std=CL2.0.
#[test]
fn vector_forms_match_scalars() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    // (type, vector expression, the same for component c)
    let forms = [
        ("double", "ldexp(x, n)", "ldexp(x[c], n[c])"),
        ("double", "ldexp(x, n.s1)", "ldexp(x[c], n.s1)"),
        ("double", "ldexp(x, (int4)(3))", "ldexp(x[c], 3)"),
        ("double", "fmod(x, y)", "fmod(x[c], y[c])"),
        ("double", "remquo(x, y, &q)", "remquo(x[c], y[c], &qs)"),
        (
            "double",
            "(remquo(x, y, &q), convert_double4(q))",
            "(remquo(x[c], y[c], &qs), (double)qs)",
        ),
        ("double", "pown(x, n)", "pown(x[c], n[c])"),
        (
            "double",
            "(frexp(x, &q), convert_double4(q))",
            "(frexp(x[c], &qs), (double)qs)",
        ),
        ("double", "frexp(x, &q)", "frexp(x[c], &qs)"),
        ("double", "(modf(x, &ip), ip)", "(modf(x[c], &ips), ips)"),
        ("double", "modf(x, &ip)", "modf(x[c], &ips)"),
        ("double", "sin(x)", "sin(x[c])"),
        ("double", "expm1(x)", "expm1(x[c])"),
        ("double", "tgamma(x)", "tgamma(x[c])"),
        ("double", "lgamma(x)", "lgamma(x[c])"),
        ("double", "lgamma_r(x, &q)", "lgamma_r(x[c], &qs)"),
        (
            "double",
            "(lgamma_r(x, &q), convert_double4(q))",
            "(lgamma_r(x[c], &qs), (double)qs)",
        ),
        ("double", "fma(x, y, -x)", "fma(x[c], y[c], -x[c])"),
        ("float", "pow(x, y)", "pow(x[c], y[c])"),
        ("float", "rootn(x, n)", "rootn(x[c], n[c])"),
        ("float", "exp10(x)", "exp10(x[c])"),
    ];
    let mut next = math::xorshift(0x5851_f42d_4c95_7f2d);
    let count = 256;
    let (mut xs, mut ys, mut ns) = (vec![], vec![], vec![]);
    for i in 0..4 * count {
        let r = next();
        let mag = 2f64.powi((r % 80) as i32 - 40) * (1.0 + (r >> 40) as f64 / 2f64.powi(24));
        let specials = [0.0, -0.0, f64::INFINITY, f64::NAN, 1e300, -3.0];
        xs.push(match i % 16 {
            0..=9 => [mag, -mag][(r >> 8) as usize & 1],
            j => specials[j - 10],
        });
        ys.push(2f64.powi((next() % 20) as i32 - 10) * 1.7);
        ns.push((next() % 11) as i32 - 5);
    }
    let e = Env::new();
    let mut bad = vec![];
    // OpenCL C 2.0 (where clspv crashed on vector double ldexp) and the default 1.2.
    let builds = forms.iter().map(|f| (f, "-cl-std=CL2.0")).chain(
        forms
            .iter()
            .filter(|f| f.1.starts_with("ldexp"))
            .map(|f| (f, "")),
    );
    for (&(ty, vector, scalar), opts) in builds {
        let src = format!(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
             kernel void k(global int *o, global const {ty} *a, global const {ty} *b,\n\
             global const int *m) {{\n size_t i = get_global_id(0);\n\
             {ty}4 x = vload4(i, a), y = vload4(i, b); int4 n = vload4(i, m), q; int qs; {ty}4 ip; {ty} ips;\n\
             {ty}4 r = {vector};\n\
             for (int c = 0; c < 4; c++) {{ {ty} s = {scalar};\n\
             o[i * 4 + c] = r[c] == s || (r[c] != r[c] && s != s); }} }}"
        );
        let p = e.program(&src, opts);
        let k = kernel(p, "k");
        let (a, b) = match ty {
            "double" => (e.buffer_from(&xs), e.buffer_from(&ys)),
            _ => {
                let f: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
                let g: Vec<f32> = ys.iter().map(|&x| x as f32).collect();
                (e.buffer_from(&f), e.buffer_from(&g))
            }
        };
        let mb = e.buffer_from(&ns);
        let o = e.buffer(CL_MEM_READ_WRITE, count * 16, std::ptr::null_mut());
        arg(k, 0, &o);
        arg(k, 1, &a);
        arg(k, 2, &b);
        arg(k, 3, &mb);
        e.run(k, None, &[count], None);
        let r: Vec<i32> = e.read(o, count * 4);
        let wrong = r.iter().filter(|&&v| v != 1).count();
        if wrong > 0 {
            bad.push(format!(
                "{ty} {vector} ({opts}): {wrong} components differ from {scalar}"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A program of two sources that both name double sin builds and runs (each source gets the
/// math library: nothing in it may be defined twice across sources).
#[test]
fn two_sources_with_the_math_library() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let a = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
             double f(double x) { return sin(x) + pow(x, 2.0); }\n";
    let b = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\ndouble f(double x);\n\
             kernel void k(global double *o) { o[0] = f(o[0]) + sin(o[1]) + remquo(o[1], 3.0, \
             (global int *)&o[2]); }\n";
    let e = Env::new();
    let ptrs = [
        a.as_ptr() as *const std::ffi::c_char,
        b.as_ptr() as *const std::ffi::c_char,
    ];
    let lens = [a.len(), b.len()];
    let mut err = 0;
    let p = unsafe { clCreateProgramWithSource(e.ctx, 2, ptrs.as_ptr(), lens.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let code =
        unsafe { clBuildProgram(p, 1, &e.dev, std::ptr::null(), None, std::ptr::null_mut()) };
    assert_eq!(
        code,
        CL_SUCCESS,
        "{}",
        build_str(p, e.dev, CL_PROGRAM_BUILD_LOG)
    );
    unsafe { clReleaseProgram(p) };
}

/// Double fma at the hard cases, scalar and every vector width, bit for bit against the host's
/// fused multiply-add (`f64::mul_add`: correctly rounded, as OpenCL's fma must be): exact
/// products that tie halfway after the add (broken either way by a tiny c), the product's own
/// rounding error (x * y - x * y), subnormal and underflowing results, products that overflow
/// while the sum does not, overflow to infinity, huge exponent differences, signed zeros,
/// infinities and NaN, and random triples over every exponent, many of them cancelling.
/// lavapipe's SPIR-V Fma rounds twice (16 ULP off).
#[test]
fn fma_hard_cases() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let mut t = fma_cases();
    while t.len() % 16 != 0 {
        t.push([1.0, 1.0, 1.0]);
    }
    let n = t.len();
    let col = |j: usize| -> Vec<f64> { t.iter().map(|c| c[j]).collect() };
    let e = Env::new();
    let (a, b, c) = (
        e.buffer_from(&col(0)),
        e.buffer_from(&col(1)),
        e.buffer_from(&col(2)),
    );
    let mut bad = vec![];
    for w in [1, 2, 3, 4, 8, 16] {
        let (ty, ld, st) = match w {
            1 => (
                "double".to_string(),
                "a[i], b[i], c[i]".to_string(),
                "o[i] = r;".to_string(),
            ),
            _ => (
                format!("double{w}"),
                format!("vload{w}(i, a), vload{w}(i, b), vload{w}(i, c)"),
                format!("vstore{w}(r, i, o);"),
            ),
        };
        let src = format!(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
             kernel void k(global double *o, global const double *a, global const double *b,\n\
             global const double *c) {{ size_t i = get_global_id(0);\n\
             {ty} r = fma({ld}); {st} }}"
        );
        let p = e.program(&src, "");
        let k = kernel(p, "k");
        let o = e.buffer(CL_MEM_READ_WRITE, n * 8, std::ptr::null_mut());
        arg(k, 0, &o);
        arg(k, 1, &a);
        arg(k, 2, &b);
        arg(k, 3, &c);
        e.run(k, None, &[n / w], None);
        let r: Vec<f64> = e.read(o, n / w * w);
        for (i, (&[x, y, z], &r)) in t.iter().zip(&r).enumerate() {
            let want = x.mul_add(y, z);
            let same = want.to_bits() == r.to_bits() || (want.is_nan() && r.is_nan());
            if !same && bad.len() < 40 {
                bad.push(format!(
                    "width {w}, case {i}: fma({x:e}, {y:e}, {z:e}) = {r:e} ({:#x}), expected {want:e} ({:#x})",
                    r.to_bits(),
                    want.to_bits()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{} wrong:\n{}", bad.len(), bad.join("\n"));
}

/// fma_hard_cases' triples (see there).
fn fma_cases() -> Vec<[f64; 3]> {
    let (inf, max, tiny) = (f64::INFINITY, f64::MAX, f64::from_bits(1));
    let p = |e: i32| 2f64.powi(e);
    let mut t: Vec<[f64; 3]> = vec![
        [inf, 0.0, 1.0],
        [0.0, -inf, 1.0],
        [inf, 1.0, -inf],
        [inf, -2.0, -inf],
        [1e300, 1e300, -inf],
        [-1e300, 1e300, inf],
        [3.0, 5.0, -inf],
        [3.0, 5.0, f64::NAN],
        [f64::NAN, 0.0, 1.0],
        [0.0, 5.0, -0.0],
        [-0.0, 5.0, -0.0],
        [-1.0, 0.0, -0.0],
        [1.0, -0.0, 0.0],
        [-0.0, -0.0, -0.0],
        [-1.0, 1.0, 1.0],
        [1.0, -1.0, 1.0],
        [tiny, -tiny, 0.0],
        [tiny, tiny, -0.0],
        [-tiny, tiny, -0.0],
        [p(-600), -p(-600), 0.0],
        [max, 2.0, -max],
        [max, -2.0, max],
        [max, 1.0, max * p(-53)],
        [max, 1.0, max * p(-54)],
        [max, 1.0 + f64::EPSILON, 0.0],
        [1e308, 10.0, -1e308],
        [1e200, 1e200, -max],
        [1.0, 1.0, tiny],
        [1.0, 1.0, -tiny],
        [tiny, tiny, 1.0],
        [tiny, -tiny, 1.0],
        [tiny, tiny, tiny],
        [tiny, 0.5, 0.0],
        [tiny, 0.75, 0.0],
        [3.0 * tiny, 0.5, 0.0],
        [3.0 * tiny, 0.5, -0.0],
        [5.0 * tiny, -0.5, 0.0],
        [p(-1022), 1.0 - f64::EPSILON / 2.0, 0.0],
        [p(-1022), 0.5, p(-1074)],
        [p(-537), p(-537), -p(-1074)],
        [1.0 + f64::EPSILON, 1.0 - f64::EPSILON / 2.0, -1.0],
        [1.0 + f64::EPSILON, 1.0 + f64::EPSILON, -1.0],
        [0.1, 10.0, -1.0],
        [1.0 / 3.0, 3.0, -1.0],
        [p(1023), p(-1074), p(-1074)],
    ];
    let mut next = math::xorshift(0x9e37_79b9_7f4a_7c15);
    // A random double of either sign with an exponent in lo..=hi.
    fn rand_in(next: &mut impl FnMut() -> u64, lo: i64, hi: i64) -> f64 {
        let r = next();
        let e = lo + (r >> 11) as i64 % (hi - lo + 1);
        let sign = r & (1 << 63);
        f64::from_bits(sign | (((e + 1023) as u64) << 52) | (next() >> 12))
    }
    for _ in 0..400 {
        // Products of 27-bit significands are exact in 54 bits: the 54th is a tie to break.
        let m = |x: f64| f64::from_bits(x.to_bits() & !((1u64 << 26) - 1));
        let (a, b) = (
            m(rand_in(&mut next, -30, 30)),
            m(rand_in(&mut next, -30, 30)),
        );
        let r = next();
        let c = match r % 4 {
            0 => (a * b) * p(-120),
            1 => -(a * b) * p(-120),
            2 => m(rand_in(&mut next, -30, 30)),
            _ => -(a * b),
        };
        t.push([a, b, c]);
    }
    for _ in 0..3000 {
        let (a, b) = (
            rand_in(&mut next, -1022, 1023),
            rand_in(&mut next, -1022, 1023),
        );
        let r = next();
        let c = match r % 5 {
            // Cancelling: c near -a * b, a few ULPs away.
            0 | 1 => f64::from_bits(
                (-(a * b))
                    .to_bits()
                    .wrapping_add((r >> 8) % 7)
                    .wrapping_sub(3),
            ),
            2 => rand_in(&mut next, -1074 + 52, 1023),
            3 => f64::from_bits(next() >> 12) * if r & 256 != 0 { -1.0 } else { 1.0 },
            _ => (a * b) * p(-(((r >> 8) % 120) as i32)),
        };
        t.push([a, b, c]);
    }
    for _ in 0..600 {
        // Results near and below the subnormal range.
        let (a, b) = (
            rand_in(&mut next, -560, -500),
            rand_in(&mut next, -560, -500),
        );
        t.push([a, b, -(a * b) * (1.0 + f64::EPSILON * (next() % 5) as f64)]);
        t.push([a, b, rand_in(&mut next, -1074 + 52, -1000)]);
    }
    t
}

/// Double lgamma_r gives lgamma's value (vkcl's own from -160 to -2, near lgamma's zeros) and
/// the sign of Γ(x): negative on (-1, 0), (-3, -2), ... (an odd floor), positive elsewhere.
#[test]
fn lgamma_r_value_and_sign() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let mut next = math::xorshift(0x0123_4567_89ab_cdef);
    let mut x: Vec<f64> = (0..2000)
        .map(|i| {
            let u = (next() >> 11) as f64 / 2f64.powi(53);
            match i % 4 {
                0 => -2.0 - 158.0 * u,
                1 => -2.0 * u,
                2 => -1000.0 * u,
                _ => 200.0 * u,
            }
        })
        .collect();
    x.extend([-2.4570247382208006, -3.14358088834998, -0.5, 0.5, 3.0]);
    let e = Env::new();
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
               kernel void k(global double *o, global int *s, global const double *a) {\n\
               size_t i = get_global_id(0); int q; o[2 * i] = lgamma_r(a[i], &q); s[i] = q;\n\
               o[2 * i + 1] = lgamma(a[i]); }";
    let p = e.program(src, "");
    let k = kernel(p, "k");
    let a = e.buffer_from(&x);
    let o = e.buffer(CL_MEM_READ_WRITE, x.len() * 16, std::ptr::null_mut());
    let sb = e.buffer(CL_MEM_READ_WRITE, x.len() * 4, std::ptr::null_mut());
    arg(k, 0, &o);
    arg(k, 1, &sb);
    arg(k, 2, &a);
    e.run(k, None, &[x.len()], None);
    let r: Vec<f64> = e.read(o, x.len() * 2);
    let sign: Vec<i32> = e.read(sb, x.len());
    let mut bad = vec![];
    for (i, &v) in x.iter().enumerate() {
        if v == v.floor() {
            continue;
        }
        let want = if v < 0.0 && (v.floor() as i64) % 2 != 0 {
            -1
        } else {
            1
        };
        let (value, lg) = (r[2 * i], r[2 * i + 1]);
        if sign[i] != want || value.to_bits() != lg.to_bits() {
            bad.push(format!(
                "lgamma_r({v:e}) = ({value:e}, {}), lgamma {lg:e}, sign expected {want}",
                sign[i]
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// vkcl's own double fma, tgamma, lgamma and lgamma_r build under -Werror in every language
/// version (their code's warnings would be the application's errors).
#[test]
fn double_math_library_builds_under_werror() {
    if !has_fp64() {
        println!("no cl_khr_fp64 on this device");
        return;
    }
    let e = Env::new();
    let src =
        "#if __OPENCL_C_VERSION__ < 120\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n\
               kernel void k(global double *o, global int *q) {\n  int s;\n\
               double4 v = vload4(0, o);\n\
               o[0] = fma(o[1], o[2], o[3]) + tgamma(o[4]) + lgamma(o[5]) + lgamma_r(o[6], &s);\n\
               q[0] = s;\n  vstore4(fma(v, v, v) + tgamma(v) + lgamma(v), 1, o); }\n";
    for opts in ["-Werror", "-Werror -cl-std=CL1.1", "-Werror -cl-std=CL3.0"] {
        if let Err((c, log)) = build_program(e.ctx, e.dev, src, opts) {
            panic!("{opts}: {}\n{log}", err_name(c));
        }
    }
}
