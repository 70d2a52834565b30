//! Math built-ins of vkcl's own, put in the prelude of the programs that may name them, where
//! libclc's, as clspv 0.0.1 builds them, crash clspv or miss the OpenCL C accuracy table.
//!
//! - double `atan2` and `atan2pi` crash clspv (SIGSEGV): fdlibm's atan2 over libclc's double
//!   `atan` (right), with C99 Annex F's special values (prelude_math.cl).
//! - float `sin`, `cos`, `tan`, `sincos` and their `half_` forms: libclc's argument reduction
//!   needs a fused fma (lavapipe's is not: 2.7e8 ULP near multiples of pi/2). Ours reduces in
//!   integers, exactly (prelude_trig.cl). The double forms too (1.3e19 ULP off at large
//!   arguments), with fdlibm's kernels (prelude_trig_double.cl).
//! - float `exp10`, `expm1`, `pow`, `powr`, `pown`, `rootn` (over their bounds, the same
//!   unfused fma): computed in double where the device has doubles (`OVERRIDES`).
//! - signs of zeros and special values of several others (`OVERRIDES`).
//!
//! The scalar helpers are OpenCL C (the .cl files); here come the other types' forms, the
//! vectors (one component at a time) and the macros that send the built-ins' names to them.

use super::{C, OVERLOADABLE_FN};

/// Before OpenCL C 1.2 double needs the extension enabled (put back after).
const FP64_ON: &str = "#if __OPENCL_C_VERSION__ < 120\n\
                       #pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n";
const FP64_OFF: &str = "#if __OPENCL_C_VERSION__ < 120\n\
                        #pragma OPENCL EXTENSION cl_khr_fp64 : disable\n#endif\n";

/// The math prelude for a program; `names` says whether the program may name a built-in (an
/// identifier).
pub(super) fn math_prelude(names: impl Fn(&[u8]) -> bool) -> String {
    let mut p = String::new();
    let atan2: Vec<&str> = ["atan2", "atan2pi"]
        .into_iter()
        .filter(|f| names(f.as_bytes()))
        .collect();
    if !atan2.is_empty() {
        p += &double_atan2(&atan2);
    }
    let trig = [
        "sin", "cos", "tan", "sincos", "half_sin", "half_cos", "half_tan",
    ];
    if trig.iter().any(|f| names(f.as_bytes())) {
        p += &float_trig();
    }
    if names(b"normalize") {
        p += &normalize();
    }
    if names(b"nan") {
        p += &nan();
    }
    let used: Vec<&Override> = OVERRIDES
        .iter()
        .filter(|o| names(o.name.as_bytes()) || (o.name.starts_with("exp") && names(b"sinh")))
        .collect();
    let pointers: Vec<&Pointer> = POINTERS.iter().filter(|f| names(f.0.as_bytes())).collect();
    if !used.is_empty() || !pointers.is_empty() {
        p += &overrides(&used, &pointers);
    }
    p
}

/// How a built-in's scalar form is computed for one type.
enum Body {
    /// The built-in's own (libclc's).
    Builtin,
    /// Float only: `(float)(expr)`, `expr` in double, where the device has doubles and the
    /// program is not built with -cl-fast-relaxed-math; else the built-in.
    InDouble(&'static str),
    /// `expr`, of the argument names.
    Own(&'static str),
}

/// A built-in of vkcl's own (scalars and vectors of every type; the types whose body is
/// `Builtin` forward to the built-in): its name, its arguments (type and name; `T` the
/// floating-point type), and its float and double bodies.
struct Override {
    name: &'static str,
    args: &'static [(&'static str, &'static str)],
    float: Body,
    double: Body,
}

const X: &[(&str, &str)] = &[("T", "x")];
const XY: &[(&str, &str)] = &[("T", "x"), ("T", "y")];
const XN: &[(&str, &str)] = &[("T", "x"), ("int", "n")];
const XYZ: &[(&str, &str)] = &[("T", "x"), ("T", "y"), ("T", "z")];

/// Own forms, where libclc's (as clspv builds it) misses the spec:
/// - float exp10, expm1, pow, pown, powr, rootn: 34 to 75 ULP (rootn flushes FLT_MIN):
///   libclc's float code splits products with an fma it assumes fused (lavapipe's is not).
///   Computed in double and rounded once, the error is that of the rounding (half an ULP)
///   plus the double's, far below a float ULP; pow, powr and pown decide overflow and
///   underflow first (prelude_pow.cl: libclc's double forms fail there).
/// - double exp, exp10, expm1, cosh, and erfc from 2.857 on (prelude_exp.cl: fdlibm's;
///   libclc's were 497 to 671 ULP off, the same unfused fma), also where only sinh is named
///   (the prelude's sinh calls exp and expm1).
/// - double cbrt (prelude_special.cl: fdlibm's; libclc's cbrt(inf) is NaN, and it is wrong
///   near 9e307).
/// - double fmod and remainder (prelude_special.cl: exact, in integers; libclc's were up to
///   1.4e17 ULP off where the arguments' magnitudes differ greatly).
/// - double ldexp (libclc's ldexp(inf, n) is finite; clspv crashes on its vector forms: ours
///   go one component at a time), with the forms of a scalar n for vectors too.
/// - double tgamma (prelude_gamma.cl: Stirling's series, the recurrence in double-double below
///   12, the reflection through Γ(-x) below -12; libclc's was 1261 ULP off near -158.8), and
///   float tgamma through it in double (libclc's float tgamma(-34.2f) was inf).
/// - double lgamma and lgamma_r from -160 to -2 (prelude_gamma.cl: in double-double; libclc's
///   cancels near lgamma's zeros there, 706 ULP near -2.7477).
/// - the signs of zero results and the special values (prelude_special.cl): double asin, asinpi, atan, atanpi, erf, expm1 keep -0 (libclc's give +0); double
///   sinpi(n) is a zero of n's sign, cospi(n + 1/2) is +0, tanpi(n) is a zero of n's sign for
///   even n and of the other sign for odd n.
/// - double trunc, rint and round (prelude_special.cl: from floor and ceil; lavapipe's
///   GLSL.std.450 Trunc and RoundEven of doubles were wrong on an AMD EPYC: Trunc(2^31 + 0.5)
///   kept its half, RoundEven(3.5) was 3).
/// - double fma (prelude_fma.cl: correctly rounded, in integers; lavapipe's SPIR-V Fma rounds
///   twice, 16 ULP off), under every option (docs/DECISIONS.md).
const OVERRIDES: [Override; 27] = [
    Override {
        name: "exp",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_exp_d(x)"),
    },
    Override {
        name: "exp10",
        args: X,
        float: Body::InDouble("exp10((double)x)"),
        double: Body::Own("__vkcl_exp10_d(x)"),
    },
    Override {
        name: "expm1",
        args: X,
        float: Body::InDouble("x == 0.0f ? x : expm1((double)x)"),
        double: Body::Own("__vkcl_expm1_d(x)"),
    },
    Override {
        name: "cosh",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_cosh_d(x)"),
    },
    Override {
        name: "pow",
        args: XY,
        float: Body::InDouble("__vkcl_pow_in_double(x, (double)y, 0)"),
        double: Body::Own("__vkcl_pow_d(x, (double)y, 0)"),
    },
    Override {
        name: "powr",
        args: XY,
        float: Body::InDouble("__vkcl_pow_in_double(x, (double)y, 1)"),
        double: Body::Own("__vkcl_pow_d(x, (double)y, 1)"),
    },
    Override {
        name: "pown",
        args: XN,
        float: Body::InDouble("__vkcl_pow_in_double(x, (double)n, 2)"),
        double: Body::Own("__vkcl_pow_d(x, (double)n, 2)"),
    },
    Override {
        name: "rootn",
        args: XN,
        float: Body::InDouble("__vkcl_pow_in_double(x, (double)n, 3)"),
        double: Body::Own("__vkcl_pow_d(x, (double)n, 3)"),
    },
    Override {
        name: "cbrt",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_cbrt_d(x)"),
    },
    Override {
        name: "fmod",
        args: XY,
        float: Body::Builtin,
        double: Body::Own("__vkcl_fmod2_d(x, y, 0)"),
    },
    Override {
        name: "remainder",
        args: XY,
        float: Body::Builtin,
        double: Body::Own("__vkcl_fmod2_d(x, y, 1)"),
    },
    Override {
        name: "ldexp",
        args: XN,
        float: Body::Builtin,
        double: Body::Own("__vkcl_ldexp_d(x, n)"),
    },
    Override {
        name: "erfc",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_erfc_d(x)"),
    },
    Override {
        name: "tgamma",
        args: X,
        float: Body::InDouble("__vkcl_tgamma_d((double)x)"),
        double: Body::Own("__vkcl_tgamma_d(x)"),
    },
    Override {
        name: "lgamma",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_lgamma_d(x)"),
    },
    Override {
        name: "asin",
        args: X,
        float: Body::Builtin,
        double: Body::Own("x == 0.0 ? x : asin(x)"),
    },
    Override {
        name: "asinpi",
        args: X,
        float: Body::Builtin,
        double: Body::Own("x == 0.0 ? x : asinpi(x)"),
    },
    Override {
        name: "atan",
        args: X,
        float: Body::Builtin,
        double: Body::Own("x == 0.0 ? x : atan(x)"),
    },
    Override {
        name: "atanpi",
        args: X,
        float: Body::Builtin,
        double: Body::Own("x == 0.0 ? x : atanpi(x)"),
    },
    Override {
        name: "erf",
        args: X,
        float: Body::Builtin,
        double: Body::Own("x == 0.0 ? x : erf(x)"),
    },
    Override {
        name: "sinpi",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_sinpi_d(x)"),
    },
    Override {
        name: "cospi",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_cospi_d(x)"),
    },
    Override {
        name: "fma",
        args: XYZ,
        float: Body::Builtin,
        double: Body::Own("__vkcl_fma_d(x, y, z)"),
    },
    Override {
        name: "trunc",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_trunc_d(x)"),
    },
    Override {
        name: "rint",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_rint_d(x)"),
    },
    Override {
        name: "round",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_round_d(x)"),
    },
    Override {
        name: "tanpi",
        args: X,
        float: Body::Builtin,
        double: Body::Own("__vkcl_tanpi_d(x)"),
    },
];

/// The `__vkcl_` forms of `used` (every type and width) and the macros naming them; with
/// the built-ins with a pointer argument in `pointers`, their double forms too.
fn overrides(used: &[&Override], pointers: &[&Pointer]) -> String {
    let mut p = String::from(OVERLOADABLE_FN);
    for (s, guard) in TYPES {
        let mut body = String::new();
        if s == "double" {
            body += include_str!("prelude_special.cl");
            body += include_str!("prelude_pow.cl");
            let gamma = used.iter().any(|o| ["tgamma", "lgamma"].contains(&o.name))
                || pointers.iter().any(|f| f.0 == "lgamma_r");
            if gamma
                || used
                    .iter()
                    .any(|o| o.name.starts_with("exp") || ["cosh", "erfc"].contains(&o.name))
            {
                body += include_str!("prelude_exp.cl");
            }
            if gamma {
                body += include_str!("prelude_gamma.cl");
            }
            if used.iter().any(|o| o.name == "fma") {
                body += include_str!("prelude_fma.cl");
            }
        }
        for o in used {
            let (f, args) = (o.name, o.args);
            let params: Vec<String> = args
                .iter()
                .map(|(t, a)| format!("{} {a}", if *t == "T" { s } else { t }))
                .collect();
            let names: Vec<&str> = args.iter().map(|a| a.1).collect();
            let call = format!("{f}({})", names.join(", "));
            let how = match s {
                "float" => &o.float,
                "double" => &o.double,
                _ => &Body::Builtin,
            };
            let scalar = match how {
                Body::Builtin => format!("return {call};"),
                Body::Own(e) => format!("return {e};"),
                Body::InDouble(e) => format!(
                    "#if defined(cl_khr_fp64) && !defined(__FAST_RELAXED_MATH__)\n\
                     return (float)({e});\n#else\nreturn {call};\n#endif\n"
                ),
            };
            body += &format!(
                "__VKCL_FN {s} __vkcl_{f}({}) {{\n{scalar}}}\n",
                params.join(", ")
            );
            body += &vectors(s, f, &format!("__vkcl_{f}"), args);
            if f == "ldexp" {
                body += &vectors(s, f, &format!("__vkcl_{f}"), &[("T", "x"), ("1int", "n")]);
            }
        }
        for f in pointers {
            body += &with_pointer(s, f);
        }
        p += &match s {
            // The float forms name double (after the double helpers).
            "float" => format!(
                "#ifdef cl_khr_fp64\n{FP64_ON}#endif\n{body}#ifdef cl_khr_fp64\n{FP64_OFF}#endif\n"
            ),
            _ => guarded(guard, body),
        };
    }
    for o in used {
        let names: Vec<&str> = o.args.iter().map(|a| a.1).collect();
        let names = names.join(", ");
        p += &format!("#define {f}({names}) __vkcl_{f}({names})\n", f = o.name);
    }
    for (f, args, ..) in pointers {
        let a = format!("{}, p", args.join(", "));
        p += &format!("#define {f}({a}) __vkcl_{f}({a})\n");
    }
    p + "#undef __VKCL_FN\n"
}

/// `{s}{n} __vkcl_{f}(...)` for vectors of `s`, calling the scalar `call` (`__vkcl_{f}` or
/// the built-in) on each component; `args` names the arguments, with their scalar types
/// (`s` for the ones written `T`; `1int` an int that stays scalar).
fn vectors(s: &str, f: &str, call: &str, args: &[(&str, &str)]) -> String {
    let mut p = String::new();
    for n in [2, 3, 4, 8, 16] {
        let params: Vec<String> = args
            .iter()
            .map(|(t, a)| match *t {
                "T" => format!("{s}{n} {a}"),
                "1int" => format!("int {a}"),
                _ => format!("{t}{n} {a}"),
            })
            .collect();
        let parts: Vec<String> = C[..n]
            .iter()
            .map(|c| {
                let a: Vec<String> = args
                    .iter()
                    .map(|(t, a)| match *t {
                        "1int" => a.to_string(),
                        _ => format!("{a}.s{c}"),
                    })
                    .collect();
                format!("{call}({})", a.join(", "))
            })
            .collect();
        p += &format!(
            "__VKCL_FN {s}{n} __vkcl_{f}({}) {{ return ({s}{n})({}); }}\n",
            params.join(", "),
            parts.join(", ")
        );
    }
    p
}

/// The types a helper exists for, with the extension each needs.
const TYPES: [(&str, Option<&str>); 3] = [
    ("double", Some("cl_khr_fp64")),
    ("float", None),
    ("half", Some("cl_khr_fp16")),
];

fn guarded(guard: Option<&str>, body: String) -> String {
    match guard {
        None => body,
        Some("cl_khr_fp64") => format!("#ifdef cl_khr_fp64\n{FP64_ON}{body}{FP64_OFF}#endif\n"),
        Some(g) => format!(
            "#ifdef {g}\n#pragma OPENCL EXTENSION {g} : enable\n{body}\
             #pragma OPENCL EXTENSION {g} : disable\n#endif\n"
        ),
    }
}

/// Double `atan2`/`atan2pi` (the names in `used`) of our own; float and half forward.
fn double_atan2(used: &[&str]) -> String {
    let mut p = format!(
        "{OVERLOADABLE_FN}#ifdef cl_khr_fp64\n{FP64_ON}{}{FP64_OFF}#endif\n",
        include_str!("prelude_math.cl")
    );
    for (s, guard) in TYPES {
        let mut body = String::new();
        for f in used {
            if s != "double" {
                body +=
                    &format!("__VKCL_FN {s} __vkcl_{f}({s} a, {s} b) {{ return {f}(a, b); }}\n");
            }
            body += &vectors(s, f, &format!("__vkcl_{f}"), &[("T", "a"), ("T", "b")]);
        }
        p += &guarded(guard, body);
    }
    for f in used {
        p += &format!("#define {f}(a, b) __vkcl_{f}(a, b)\n");
    }
    p + "#undef __VKCL_FN\n"
}

/// Float `sin`, `cos`, `tan`, `sincos` and `half_sin`, `half_cos`, `half_tan` of our own
/// (every width); double and half forward to the built-ins.
fn float_trig() -> String {
    let mut p = format!("{OVERLOADABLE_FN}{}", include_str!("prelude_trig.cl"));
    for (s, guard) in TYPES {
        let mut body = String::new();
        for f in ["sin", "cos", "tan"] {
            if s == "half" {
                body += &format!("__VKCL_FN {s} __vkcl_{f}({s} x) {{ return {f}(x); }}\n");
            }
            body += &vectors(s, f, &format!("__vkcl_{f}"), &[("T", "x")]);
        }
        body += &sincos(s);
        if s == "double" {
            body = format!("{}{body}", include_str!("prelude_trig_double.cl"));
        }
        p += &guarded(guard, body);
    }
    p += "#undef __VKCL_FN\n";
    for f in ["sin", "cos", "tan"] {
        p += &format!("#define {f}(x) __vkcl_{f}(x)\n#define half_{f}(x) __vkcl_{f}(x)\n");
    }
    p + "#define sincos(x, c) __vkcl_sincos(x, c)\n"
}

/// `each(space)` for each address space a pointer argument may have; the last, unqualified, is
/// the generic address space (OpenCL C 2.0 and later).
fn address_spaces(each: impl Fn(&str) -> String) -> String {
    let mut p = String::new();
    for space in ["__global", "__local", "__private"] {
        p += &each(space);
    }
    p + "#if __OPENCL_C_VERSION__ >= 200\n" + &each("") + "#endif\n"
}

/// The type `s` with `n` components.
fn ty(s: &str, n: usize) -> String {
    match n {
        1 => s.to_string(),
        _ => format!("{s}{n}"),
    }
}

/// `sincos` of type `s` (scalar and vectors) for each address space of the cosine's pointer:
/// the sine and cosine helpers.
fn sincos(s: &str) -> String {
    address_spaces(|space| {
        let mut p = String::new();
        for n in [1, 2, 3, 4, 8, 16] {
            let t = ty(s, n);
            let body = match (s, n) {
                ("half", 1) => "half v, r = sincos(x, &v); *c = v; return r;",
                _ => "*c = __vkcl_cos(x); return __vkcl_sin(x);",
            };
            p += &format!("__VKCL_FN {t} __vkcl_sincos({t} x, {space} {t} *c) {{ {body} }}\n");
        }
        p
    })
}

/// A built-in whose last argument is a pointer: its name, the value arguments, the pointer's
/// scalar type (`T`: the floating-point type) and the double helper taking a private one
/// (prelude_special.cl).
type Pointer = (
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
);

/// Double remquo exact (as fmod); double frexp and modf of infinities and NaN (libclc's
/// frexp(inf) is 0.5, modf(inf) is not (0, inf)); double lgamma_r as lgamma (prelude_gamma.cl).
const POINTERS: [Pointer; 4] = [
    ("remquo", &["x", "y"], "int", "__vkcl_remquo_d"),
    ("frexp", &["x"], "int", "__vkcl_frexp_d"),
    ("modf", &["x"], "T", "__vkcl_modf_d"),
    ("lgamma_r", &["x"], "int", "__vkcl_lgamma_r_d"),
];

/// `f` of type `s` (scalar and vectors) for each address space of its pointer: double's from
/// the double helper (one component at a time), the others forward to the built-in.
fn with_pointer(s: &str, (f, args, ptr, helper): &Pointer) -> String {
    address_spaces(|space| {
        let mut p = String::new();
        for n in [1, 2, 3, 4, 8, 16] {
            let t = ty(s, n);
            let pt = ty(if *ptr == "T" { s } else { ptr }, n);
            let call = |c: &str| {
                let a: Vec<String> = args.iter().map(|a| format!("{a}{c}")).collect();
                format!("{helper}({}, &w)", a.join(", "))
            };
            let body = match (s, n) {
                ("double", 1) => format!("{pt} w; {t} r = {}; *p = w; return r;", call("")),
                ("double", _) => {
                    let w = ty(if *ptr == "T" { s } else { ptr }, 1);
                    let c: Vec<String> = C[..n]
                        .iter()
                        .map(|c| format!("r.s{c} = {}; v.s{c} = w;", call(&format!(".s{c}"))))
                        .collect();
                    format!("{t} r; {pt} v; {w} w;\n{}\n*p = v; return r;", c.join("\n"))
                }
                _ => format!("return {f}({}, p);", args.join(", ")),
            };
            let params: Vec<String> = args.iter().map(|a| format!("{t} {a}")).collect();
            p += &format!(
                "__VKCL_FN {t} __vkcl_{f}({}, {space} {pt} *p) {{\n{body} }}\n",
                params.join(", ")
            );
        }
        p
    })
}

/// `nan(nancode)`, "a quiet NaN": libclc's double form sets no quiet bit, so `nan(0UL)` was
/// +inf and `nan(1UL)` a signalling NaN (the conformance suite's printf double_limits). The
/// float and half forms are right and are forwarded.
fn nan() -> String {
    let mut p = String::from(OVERLOADABLE_FN);
    for (s, guard) in TYPES {
        let code = match s {
            "double" => "ulong",
            "float" => "uint",
            _ => "ushort",
        };
        let mut body = String::new();
        for n in [1, 2, 3, 4, 8, 16] {
            let (t, c) = match n {
                1 => (s.to_string(), code.to_string()),
                _ => (format!("{s}{n}"), format!("{code}{n}")),
            };
            let e = match s {
                "double" => format!("as_{t}(c | 0x7ff8000000000000UL)"),
                _ => "nan(c)".to_string(),
            };
            body += &format!("__VKCL_FN {t} __vkcl_nan({c} c) {{ return {e}; }}\n");
        }
        p += &guarded(guard, body);
    }
    p + "#undef __VKCL_FN\n#define nan(c) __vkcl_nan(c)\n"
}

/// Geometric `normalize` of our own (float and double, 1 to 4 components). libclc's, as clspv
/// builds it, scales nothing: 0 for a vector whose squares overflow (normalize(-3e38f) is -0),
/// infinity where they underflow, NaN for a zero vector. Ours scales by a power of two of the
/// largest component first and has OpenCL C's special values (§6.15.5: v for a zero vector,
/// NaN where a component is NaN; infinite components as +-1 and the others as 0).
fn normalize() -> String {
    let mut p = String::from(OVERLOADABLE_FN);
    for (s, guard) in TYPES {
        let mut body = String::new();
        for n in 1..=4 {
            let t = match n {
                1 => s.to_string(),
                _ => format!("{s}{n}"),
            };
            if s == "half" {
                body +=
                    &format!("__VKCL_FN {t} __vkcl_normalize({t} v) {{ return normalize(v); }}\n");
                continue;
            }
            if n == 1 {
                // An infinity as +-1, a finite value as a zero of its sign.
                // x * 0 comes back +0 for x < 0 from clspv; a product that underflows keeps
                // the sign.
                let tiny = if s == "float" {
                    "0x1p-100f"
                } else {
                    "0x1p-1000"
                };
                body += &format!(
                    "__VKCL_FN {s} __vkcl_unit({s} x) {{\n\
                     return isinf(x) ? clamp(x, -({s})1, ({s})1) : x * {tiny} * {tiny} * {tiny}; }}\n"
                );
            }
            let parts: Vec<String> = match n {
                1 => vec!["a".to_string()],
                _ => C[..n].iter().map(|c| format!("a.s{c}")).collect(),
            };
            let m = parts[1..]
                .iter()
                .fold(parts[0].clone(), |m, c| format!("fmax({m}, {c})"));
            let nan: Vec<String> = parts.iter().map(|c| format!("isnan({c})")).collect();
            let nan = nan.join(" || ");
            let (min, big) = match s {
                "float" => ("FLT_MIN", "0x1p64f"),
                _ => ("DBL_MIN", "0x1p128"),
            };
            // One component at a time, without a sign test: LLVM makes copysign of those,
            // which clspv lowers wrongly for double.
            let inf = match n {
                1 => "__vkcl_unit(v)".to_string(),
                _ => {
                    let c: Vec<String> = C[..n]
                        .iter()
                        .map(|c| format!("__vkcl_unit(v.s{c})"))
                        .collect();
                    format!("({t})({})", c.join(", "))
                }
            };
            body += &format!(
                "__VKCL_FN {t} __vkcl_normalize({t} v) {{\n\
                 {t} a = fabs(v);\n\
                 {s} m = {m};\n\
                 if ({nan}) return v + ({s})NAN;\n\
                 if (m == ({s})0) return v;\n\
                 if (isinf(m)) v = {inf};\n\
                 else {{\n\
                 // Subnormal: into the normal range first (a flushed vector is a zero one).\n\
                 {t} w = m < {min} ? v * {big} : v;\n\
                 a = fabs(w);\n\
                 m = {m};\n\
                 if (m == ({s})0) return v;\n\
                 v = ldexp(w, -ilogb(m));\n\
                 }}\n\
                 return v * rsqrt(dot(v, v));\n}}\n",
            );
        }
        p += &guarded(guard, body);
    }
    p + "#undef __VKCL_FN\n#define normalize(v) __vkcl_normalize(v)\n"
}
