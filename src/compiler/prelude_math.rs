//! Math built-ins of vkcl's own, put in the prelude of the programs that name them, where
//! libclc's, as clspv 0.0.1 builds them, crash clspv or miss the OpenCL C accuracy table.
//!
//! - double `atan2` and `atan2pi` crash clspv (SIGSEGV): fdlibm's atan2 over libclc's double
//!   `atan` (right), with C99 Annex F's special values (prelude_math.cl).
//!
//! Each function is a scalar double `__vkcl_NAME` in prelude_math.cl; here come the float and
//! half forms (forwarding to the built-ins), the double vectors (one component at a time) and
//! the macro that sends the built-in's name to them.

use super::{C, OVERLOADABLE_FN};

/// The double helpers, scalar.
const DOUBLE_HELPERS: &str = include_str!("prelude_math.cl");

/// Binary built-ins replaced for doubles.
const BINARY: [&str; 2] = ["atan2", "atan2pi"];

/// The math prelude for a program; `names` says whether the program may name a built-in.
pub(super) fn math_prelude(names: impl Fn(&[u8]) -> bool) -> String {
    let used: Vec<&str> = BINARY.into_iter().filter(|f| names(f.as_bytes())).collect();
    if used.is_empty() {
        return String::new();
    }
    let mut p = format!(
        "{OVERLOADABLE_FN}#ifdef cl_khr_fp64\n#if __OPENCL_C_VERSION__ < 120\n\
         #pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n{DOUBLE_HELPERS}"
    );
    for (s, guard) in [
        ("double", None),
        ("float", None),
        ("half", Some("cl_khr_fp16")),
    ] {
        if let Some(g) = guard {
            p += &format!("#ifdef {g}\n#pragma OPENCL EXTENSION {g} : enable\n");
        }
        for f in &used {
            if s != "double" {
                p += &format!("__VKCL_FN {s} __vkcl_{f}({s} a, {s} b) {{ return {f}(a, b); }}\n");
            }
            for n in [2, 3, 4, 8, 16] {
                let parts: Vec<String> = C[..n]
                    .iter()
                    .map(|c| format!("__vkcl_{f}(a.s{c}, b.s{c})"))
                    .collect();
                p += &format!(
                    "__VKCL_FN {s}{n} __vkcl_{f}({s}{n} a, {s}{n} b) {{ return ({s}{n})({}); }}\n",
                    parts.join(", ")
                );
            }
        }
        if let Some(g) = guard {
            p += &format!("#pragma OPENCL EXTENSION {g} : disable\n#endif\n");
        }
    }
    p += "#if __OPENCL_C_VERSION__ < 120\n#pragma OPENCL EXTENSION cl_khr_fp64 : disable\n#endif\n";
    for f in &used {
        p += &format!("#define {f}(a, b) __vkcl_{f}(a, b)\n");
    }
    p + "#endif\n#undef __VKCL_FN\n"
}
