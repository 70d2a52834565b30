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
