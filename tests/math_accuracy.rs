//! Single precision: every float built-in's error in ULPs against an exact reference
//! (tests/math, tests/data/math_ref_f32.txt), with the bounds of the OpenCL C spec's full-profile
//! table (§7.4, "ULP values for single precision built-in math functions"), over huge and tiny
//! arguments, subnormals, signed zeros, infinities and NaN. The half_ forms are held to 8192 ULP
//! on their domain. A result flushed to zero where the exact one is subnormal fails where the
//! device reports CL_FP_DENORM (and is allowed where it does not, §7.5.3).
#[macro_use]
mod common;
mod math;
use math::{check, Case, Fmt, Kind};

fn f(func: &str, table: &str, kind: Kind, bound: f64, keep: impl Fn(&Case) -> bool) {
    check(Fmt { double: false }, func, table, kind, bound, "", keep);
}

macro_rules! ulp {
    ($($name:ident: $kind:ident $bound:expr;)*) => {
        $(#[test] fn $name() { f(stringify!($name), stringify!($name), Kind::$kind, $bound as f64, |_| true); })*
    };
}

ulp! {
    sin: F 4; cos: F 4; tan: F 5; asin: F 4; acos: F 4; atan: F 5;
    sinh: F 4; cosh: F 4; tanh: F 5; asinh: F 4; acosh: F 4; atanh: F 5;
    asinpi: F 5; acospi: F 5; atanpi: F 5; sinpi: F 4; cospi: F 4; tanpi: F 6;
    exp: F 3; exp2: F 3; exp10: F 3; expm1: F 3;
    log: F 3; log2: F 3; log10: F 3; log1p: F 2;
    sqrt: F 3; rsqrt: F 2; cbrt: F 2; erf: F 16; erfc: F 16; tgamma: F 16;
    pow: FF 16; powr: FF 16; atan2: FF 6; atan2pi: FF 6; hypot: FF 4;
    fmod: FF 0; remainder: FF 0; fdim: FF 0; fma: FFF 0;
    pown: FI 16; rootn: FI 16; ldexp: FI 0; ilogb: I 0; logb: F 0;
    frexp: Frexp 0; modf: Modf 0; sincos: Sincos 4; remquo: Remquo 0;
}

/// §7.4: half_cos, half_sin and half_tan are defined for |x| <= 2^16, with 8192 ULP.
fn half(func: &str, table: &str) {
    f(func, table, Kind::F, 8192.0, |c| {
        let x = f64::from_bits(c.args[0]);
        x.is_finite() && x.abs() <= 65536.0
    });
}

#[test]
fn half_sin() {
    half("half_sin", "sin");
}
#[test]
fn half_cos() {
    half("half_cos", "cos");
}
#[test]
fn half_tan() {
    half("half_tan", "tan");
}

/// float sin, cos, tan, sincos (and the half_ forms, on their domain) over every exponent
/// (random mantissas) and the floats nearest to multiples of pi/2 (the hardest arguments to
/// reduce: libclc's reduction, which needs a fused fma, was 2.7e8 ULP off there on lavapipe),
/// against the host's double libm (its error is far below a float ULP).
#[test]
fn trig_sweep() {
    let mut x: Vec<f32> = vec![];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for e in 1..255u32 {
        for _ in 0..512 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let sign = (seed >> 40) as u32 & 0x8000_0000;
            x.push(f32::from_bits(sign | e << 23 | (seed as u32 & 0x7f_ffff)));
        }
    }
    for k in 1..40_000u32 {
        let c = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
        x.extend([
            c,
            f32::from_bits(c.to_bits() - 1),
            f32::from_bits(c.to_bits() + 1),
        ]);
    }
    let e = common::Env::new();
    for funcs in [["sin", "cos", "tan"], ["half_sin", "half_cos", "half_tan"]] {
        let src = format!(
            "kernel void k(global float *o, global const float *a) {{\n\
             size_t i = get_global_id(0); float x = a[i], c;\n\
             o[5 * i] = {}(x); o[5 * i + 1] = {}(x); o[5 * i + 2] = {}(x);\n\
             o[5 * i + 3] = sincos(x, &c); o[5 * i + 4] = c; }}",
            funcs[0], funcs[1], funcs[2]
        );
        let p = e.program(&src, "");
        let k = common::kernel(p, "k");
        let a = e.buffer_from(&x);
        let o = e.buffer(
            common::CL_MEM_READ_WRITE,
            x.len() * 20,
            std::ptr::null_mut(),
        );
        common::arg(k, 0, &o);
        common::arg(k, 1, &a);
        e.run(k, None, &[x.len()], None);
        let r: Vec<f32> = e.read(o, x.len() * 5);
        let fmt = Fmt { double: false };
        let half = funcs[0].starts_with("half");
        for (j, name) in [funcs[0], funcs[1], funcs[2], "sincos (sin)", "sincos (cos)"]
            .iter()
            .enumerate()
        {
            let bound = if half {
                8192.0
            } else {
                [4.0, 4.0, 5.0, 4.0, 4.0][j]
            };
            let mut worst = (0.0, 0.0f32);
            for (i, &v) in x.iter().enumerate() {
                if half && v.abs() > 65536.0 {
                    continue;
                }
                let v = v as f64;
                let want = [v.sin(), v.cos(), v.tan(), v.sin(), v.cos()][j];
                let err = math::ulp_error(fmt, r[5 * i + j] as f64, want, 0.0);
                if err > worst.0 {
                    worst = (err, v as f32);
                }
            }
            println!("{name}: max {:.3} ULP at {:e}", worst.0, worst.1);
            assert!(
                worst.0 <= bound,
                "{name}({:e}): {:.3} ULP > {bound}",
                worst.1,
                worst.0
            );
        }
    }
}

/// float exp10, expm1, pow, powr, pown and rootn over every exponent (random mantissas; for
/// the binary ones, second arguments that take the result across the whole float range and
/// integers), against the host's double libm (its error is far below a float ULP), at the
/// spec's bounds. libclc's (an fma assumed fused) were up to 75 ULP off on lavapipe, and its
/// double pow, which vkcl's float pow uses, is wrong where the double result overflows.
/// expm1's argument is the device's own `x / 2e36f` (written out beside the results): float
/// division may be 2.5 ULP off (NVIDIA's is), which expm1 near 63 magnifies 63 times.
#[test]
fn pow_exp_sweep() {
    let mut next = math::xorshift(0x2545_f491_4f6c_dd1d);
    let (mut x, mut y, mut n) = (vec![], vec![], vec![]);
    for e in 1..255u64 {
        for _ in 0..64 {
            let r = next();
            let v = f32::from_bits((r as u32 & 0x8000_0000) | (e as u32) << 23 | (r >> 40) as u32);
            // y takes |x|^y over about 2^-170 .. 2^170; n a small integer.
            let u = (next() >> 11) as f64 / (1u64 << 53) as f64 * 340.0 - 170.0;
            let w = match next() % 3 {
                0 => (u / (v.abs() as f64).log2()) as f32,
                1 => (next() % 61) as f32 - 30.0,
                _ => u as f32 / 8.0,
            };
            x.push(v);
            y.push(if w.is_finite() { w } else { 1.5 });
            n.push((next() % 41) as i32 - 20);
        }
    }
    let src = "kernel void k(global float *o, global const float *a, global const float *b,\n\
               global const int *c) {\n\
               size_t i = get_global_id(0); float x = a[i], y = b[i]; int n = c[i];\n\
               float t = x / 2e36f;\n\
               o[7 * i] = exp10(x / 8.0f); o[7 * i + 1] = expm1(t);\n\
               o[7 * i + 2] = pow(x, y); o[7 * i + 3] = powr(fabs(x), y);\n\
               o[7 * i + 4] = pown(x, n); o[7 * i + 5] = rootn(x, n); o[7 * i + 6] = t; }";
    let e = common::Env::new();
    let p = e.program(src, "");
    let k = common::kernel(p, "k");
    let bufs = [e.buffer_from(&x), e.buffer_from(&y), e.buffer_from(&n)];
    let o = e.buffer(
        common::CL_MEM_READ_WRITE,
        x.len() * 28,
        std::ptr::null_mut(),
    );
    common::arg(k, 0, &o);
    for (i, b) in bufs.iter().enumerate() {
        common::arg(k, i as u32 + 1, b);
    }
    e.run(k, None, &[x.len()], None);
    let r: Vec<f32> = e.read(o, x.len() * 7);
    let fmt = Fmt { double: false };
    let rootn = |x: f64, n: i32| match n {
        0 => f64::NAN,
        _ if x < 0.0 && n % 2 == 0 => f64::NAN,
        _ => x.signum() * x.abs().powf(1.0 / n as f64),
    };
    // The division itself within the spec's 2.5 ULP.
    for i in 0..x.len() {
        let (t, want) = (r[7 * i + 6] as f64, x[i] as f64 / 2e36f32 as f64);
        let err = math::ulp_error(fmt, t, want, 0.0);
        assert!(
            err <= 2.5 || t == 0.0 && want.abs() < f32::MIN_POSITIVE as f64,
            "{} / 2e36 = {t:e}: {err} ULP",
            x[i]
        );
    }
    let names = ["exp10", "expm1", "pow", "powr", "pown", "rootn"];
    let bounds = [3.0, 3.0, 16.0, 16.0, 16.0, 16.0];
    let mut over = vec![];
    for (j, name) in names.iter().enumerate() {
        let mut worst = (0.0, 0.0, 0.0);
        for i in 0..x.len() {
            // The arguments as the kernel made them (exact in double).
            let (a, b, m) = (x[i] as f64, y[i] as f64, n[i]);
            let (arg, want) = match j {
                0 => ((x[i] / 8.0) as f64, 10f64.powf((x[i] / 8.0) as f64)),
                1 => (r[7 * i + 6] as f64, (r[7 * i + 6] as f64).exp_m1()),
                2 => (a, a.powf(b)),
                3 => (a.abs(), a.abs().powf(b)),
                4 => (a, a.powi(m)),
                _ => (a, rootn(a, m)),
            };
            // Beyond the float range the answer is the infinity the rounding gives.
            let want = match want as f32 {
                w if w.is_infinite() => w as f64,
                _ => want,
            };
            // Results too small for a float (subnormal or less) may be flushed: the device
            // reports no CL_FP_DENORM for float on lavapipe (the ULP table's §7.5.3).
            let got = r[7 * i + j] as f64;
            let err = if got == 0.0 && want.abs() < f32::MIN_POSITIVE as f64 {
                0.0
            } else {
                math::ulp_error(fmt, got, want, 0.0)
            };
            if err > worst.0 || (err.is_nan() && !worst.0.is_nan()) {
                worst = (
                    err,
                    arg,
                    if j < 2 {
                        0.0
                    } else if j < 4 {
                        b
                    } else {
                        m as f64
                    },
                );
            }
        }
        println!(
            "{name}: max {:.3} ULP at ({:e}, {:e})",
            worst.0, worst.1, worst.2
        );
        if !(worst.0 <= bounds[j]) {
            over.push(format!(
                "{name}({:e}, {:e}): {:.3} ULP > {}",
                worst.1, worst.2, worst.0, bounds[j]
            ));
        }
    }
    assert!(over.is_empty(), "over their bounds:\n{}", over.join("\n"));
}

/// Geometric `normalize` of float and (where the device has doubles) double vectors of 1 to 4
/// components: random vectors at every exponent (components of nearby and of very different
/// magnitudes, so that the squares overflow or underflow), against the vector scaled and
/// normalized in double (f64 for float; for double, scaled by a power of two, the error of
/// the host's sqrt and division stays below a double ULP: 1 ULP added to the bound), held to
/// 2 + n ULP per component, and OpenCL C's special cases: a zero vector is returned as it
/// is, NaN anywhere gives NaN everywhere, infinite components count as +-1 and the others
/// as 0. libclc's returned -0 for normalize(-3e38f), infinity for tiny vectors and NaN for
/// a zero vector.
#[test]
fn normalize() {
    let double = common::device_str(common::device(), common::CL_DEVICE_EXTENSIONS)
        .split_whitespace()
        .any(|e| e == "cl_khr_fp64");
    let mut next = math::xorshift(0x9e37_79b9_7f4a_7c15);
    for (ty, fmt) in [
        ("float", Fmt { double: false }),
        ("double", Fmt { double: true }),
    ] {
        if ty == "double" && !double {
            println!("no cl_khr_fp64: double normalize not tested");
            continue;
        }
        let (emin, emax) = if fmt.double {
            (-1070, 1023)
        } else {
            (-145, 127)
        };
        // Four components per vector; the n-component kernels read the first n.
        let mut v: Vec<[f64; 4]> = vec![
            [0.0; 4],
            [-0.0, 0.0, -0.0, 0.0],
            [f64::NAN, 1.0, 2.0, 3.0],
            [1.0, f64::INFINITY, 2.0, f64::NEG_INFINITY],
            [f64::NEG_INFINITY, -3.0, f64::INFINITY, 0.0],
            [-3e38, 0.0, 0.0, 0.0],
        ];
        for _ in 0..4000 {
            let e = emin + (next() % (emax - emin + 1) as u64) as i32;
            let spread = [0, 2, 30, 200][(next() % 4) as usize];
            let mut c = [0.0; 4];
            for x in c.iter_mut() {
                let ex = (e - (next() % (spread + 1)) as i32).max(emin - 4);
                let m = 1.0 + (next() >> 12) as f64 / (1u64 << 52) as f64;
                let s = if next() & 1 == 0 { 1.0 } else { -1.0 };
                *x = s * m * 2f64.powi(ex / 2) * 2f64.powi(ex - ex / 2);
                if !fmt.double {
                    *x = *x as f32 as f64;
                }
            }
            v.push(c);
        }
        let flat: Vec<f64> = v.iter().flatten().copied().collect();
        let ext = if fmt.double {
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        } else {
            ""
        };
        let src = format!(
            "{ext}kernel void k(global {ty} *o, global const {ty} *a) {{\n\
             size_t i = get_global_id(0); global const {ty} *p = a + 4 * i; global {ty} *q = o + 16 * i;\n\
             q[0] = normalize(p[0]);\n\
             {ty}2 v2 = normalize(vload2(0, p)); vstore2(v2, 0, q + 4);\n\
             {ty}3 v3 = normalize(vload3(0, p)); vstore3(v3, 0, q + 8);\n\
             {ty}4 v4 = normalize(vload4(0, p)); vstore4(v4, 0, q + 12); }}"
        );
        let e = common::Env::new();
        let p = e.program(&src, "");
        let k = common::kernel(p, "k");
        let input: Vec<u8> = match fmt.double {
            true => flat.iter().flat_map(|x| x.to_le_bytes()).collect(),
            false => flat
                .iter()
                .flat_map(|&x| (x as f32).to_le_bytes())
                .collect(),
        };
        let a = e.buffer_from(&input);
        let size = if fmt.double { 8 } else { 4 };
        let o = e.buffer(
            common::CL_MEM_READ_WRITE,
            v.len() * 16 * size,
            std::ptr::null_mut(),
        );
        common::arg(k, 0, &o);
        common::arg(k, 1, &a);
        e.run(k, None, &[v.len()], None);
        let out: Vec<u8> = e.read(o, v.len() * 16 * size);
        let got = |i: usize| match fmt.double {
            true => f64::from_le_bytes(out[i * 8..i * 8 + 8].try_into().unwrap()),
            false => f32::from_le_bytes(out[i * 4..i * 4 + 4].try_into().unwrap()) as f64,
        };
        let ftz = !math::denormals(fmt);
        let (mut max, mut worst) = (0.0f64, (0.0, String::new()));
        for (i, c) in v.iter().enumerate() {
            let sub = |x: f64| x.abs() < fmt.min_normal();
            let flushed: Vec<f64> = c
                .iter()
                .map(|&x| if sub(x) { 0.0 * x } else { x })
                .collect();
            for n in 1..=4usize {
                let want = reference(&c[..n]);
                for j in 0..n {
                    let g = got(16 * i + 4 * (n - 1) + j);
                    let mut err = math::ulp_error(fmt, g, want[j], 0.0);
                    // Without CL_FP_DENORM subnormal components (arguments or results) may
                    // be flushed to zero (§7.5.3).
                    if ftz {
                        let f = reference(&flushed[..n])[j];
                        err = err.min(math::ulp_error(fmt, g, f, 0.0));
                        // A subnormal result is its flushed zero.
                        if (g == 0.0 || sub(g)) && (sub(f) || sub(want[j]) || f == 0.0) {
                            err = 0.0;
                        }
                    }
                    max = max.max(err);
                    let bound = 2.0 + n as f64 + if fmt.double { 1.0 } else { 0.0 };
                    if err > bound && err > worst.0 || err.is_nan() {
                        worst = (
                            err,
                            format!(
                                "normalize({:?})[{j}] = {g:e}, expected {:e}",
                                &c[..n],
                                want[j]
                            ),
                        );
                    }
                }
            }
        }
        println!(
            "{ty} normalize: max {max:.3} ULP; over the bound: {:.3} ULP {}",
            worst.0, worst.1
        );
        assert!(worst.1.is_empty(), "{ty}: {}", worst.1);
    }
}

/// normalize(v) computed in f64 (OpenCL C's special cases first).
fn reference(v: &[f64]) -> Vec<f64> {
    if v.iter().any(|x| x.is_nan()) {
        return vec![f64::NAN; v.len()];
    }
    let v: Vec<f64> = match v.iter().any(|x| x.is_infinite()) {
        true => v
            .iter()
            .map(|&x| if x.is_infinite() { x.signum() } else { 0.0 * x })
            .collect(),
        false => v.to_vec(),
    };
    let m = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if m == 0.0 {
        return v;
    }
    // Scaled by a power of two (exact) so that the squares neither overflow nor underflow.
    let e = m.log2().floor() as i32;
    let s: Vec<f64> = v
        .iter()
        .map(|x| x * 2f64.powi(-e / 2) * 2f64.powi(-e + e / 2))
        .collect();
    let len = s.iter().map(|x| x * x).sum::<f64>().sqrt();
    s.iter().map(|x| x / len).collect()
}

/// A build log names the application's lines for a program that gets the math library (the
/// prelude's length was once counted again from the sources with the prelude in them, which
/// name more of the library: the line was off by the difference).
#[test]
fn build_log_lines_with_the_math_library() {
    let e = common::Env::new();
    for call in [
        "sin(o[1])",
        "pow(o[1], 2.0f)",
        "normalize(o[1])",
        "remquo(o[1], 2.0f, &q)",
    ] {
        let src = format!(
            "kernel void k(global float *o) {{\n  int q;\n  o[0] = {call};\n  nope();\n}}\n"
        );
        let (code, log) = match common::build_program(e.ctx, e.dev, &src, "") {
            Ok(_) => panic!("{call}: a program calling nope() built"),
            Err(r) => r,
        };
        assert_eq!(code, common::CL_BUILD_PROGRAM_FAILURE, "{call}");
        assert!(
            log.contains("source:4:3:"),
            "{call}: the error is on line 4:\n{log}"
        );
    }
}

/// The math library builds under -Werror (its own code's warnings, such as C89's mixing of
/// declarations and code, were the application's errors), while the application's own
/// warnings still are.
#[test]
fn math_library_builds_under_werror() {
    let e = common::Env::new();
    let src = "kernel void k(global float *o) {\n  int q;\n  float4 v = vload4(0, o);\n\
               o[0] = sin(o[1]) + pow(o[2], o[3]) + exp10(o[4]) + remquo(o[5], o[6], &q) + (float)q;\n\
               vstore4(normalize(v) + tgamma(v), 1, o); }\n";
    for opts in ["-Werror", "-Werror -cl-std=CL1.1", "-Werror -cl-std=CL3.0"] {
        if let Err((c, log)) = common::build_program(e.ctx, e.dev, src, opts) {
            panic!("{opts}: {}\n{log}", common::err_name(c));
        }
    }
    let unused = "kernel void k(global float *o) {\n  int unused;\n  o[0] = sin(o[1]); }\n";
    let (_, log) = common::build_program(e.ctx, e.dev, unused, "-Werror").expect_err("unused");
    assert!(log.contains("source:2:7:"), "{log}");
}

/// A built-in named only in a build option's macro body (`-D F(x)=sin(x)`, the source calling
/// F) gets vkcl's own form, as one named in the source does: float sin at the floats nearest
/// to multiples of pi/2 (libclc's reduction, as clspv builds it, is 2.7e8 ULP off there on
/// lavapipe) within the spec's 4 ULP. A source naming asin (not sin) gets an accurate asin.
#[test]
fn builtin_named_in_a_define() {
    let mut x: Vec<f32> = vec![];
    for k in 1..4000u32 {
        let c = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
        x.extend([c, f32::from_bits(c.to_bits() + 1)]);
    }
    let e = common::Env::new();
    let fmt = Fmt { double: false };
    for (call, opts, bound) in [
        ("F(a[i])", "-D F(x)=sin(x)", 4.0),
        ("asin(a[i] / 8e4f)", "", 4.0),
    ] {
        let src = format!(
            "kernel void k(global float *o, global const float *a) {{\n\
             size_t i = get_global_id(0); o[i] = {call}; }}"
        );
        let p = e.program(&src, opts);
        let k = common::kernel(p, "k");
        let a = e.buffer_from(&x);
        let o = e.buffer(common::CL_MEM_READ_WRITE, x.len() * 4, std::ptr::null_mut());
        common::arg(k, 0, &o);
        common::arg(k, 1, &a);
        e.run(k, None, &[x.len()], None);
        let r: Vec<f32> = e.read(o, x.len());
        let mut worst = (0.0, 0.0f32);
        for (i, &v) in x.iter().enumerate() {
            let want = match opts {
                "" => ((v / 8e4f32) as f64).asin(),
                _ => (v as f64).sin(),
            };
            let err = math::ulp_error(fmt, r[i] as f64, want, 0.0);
            if err > worst.0 {
                worst = (err, v);
            }
        }
        println!("{call} {opts}: max {:.3} ULP at {:e}", worst.0, worst.1);
        assert!(
            worst.0 <= bound,
            "{call} {opts} ({:e}): {:.3} ULP > {bound}",
            worst.1,
            worst.0
        );
    }
}
