//! `vload_halfN` / `vloada_halfN` from `__local` and `__private` memory, one component at a
//! time.
//!
//! clspv 0.0.1 reads the wrong halves for some vector widths outside global memory: from
//! `__local`, `vload_half16(0, p + 1)` repeats elements 0-7 in 8-15 and `vloada_half16(0, p +
//! 16)` is wrong too; from `__private`, `vload_half3` and `vload_half16` return the wrong
//! elements (piglit's vload tests). The scalar `vload_half` is right in every address space,
//! given the vector's start: `vload_half(c, q)` with `q = p + o * S` (S = N, or 4 for
//! `vloada_half3`). Not `vload_half(o * S + c, p)`, which 64-bit builds read wrong where `p`
//! itself was the array plus an `int` (`(local half *)loc + b` read at `loc` for N = 8 and 16,
//! tests/vload_half.rs). These overloads read component c that way from `__local`, `__private`
//! and (OpenCL C 2.0 on) generic pointers, and forward `__global` and `__constant` pointers to
//! the built-ins; macros send the built-ins' names to them. Only programs that name a `vload` get them.

use super::OVERLOADABLE_FN;

/// The prelude text (see the module comment).
pub fn prelude() -> String {
    const O: &str = "__VKCL_FN";
    let mut p = String::from(OVERLOADABLE_FN);
    let mut names = vec![];
    for (base, stride3) in [("vload_half", 3), ("vloada_half", 4)] {
        for n in [2usize, 3, 4, 8, 16] {
            let name = format!("{base}{n}");
            let stride = if n == 3 { stride3 } else { n };
            let parts: Vec<String> = (0..n).map(|i| format!("vload_half({i}, q)")).collect();
            for space in ["__global", "__constant", "__local", "__private", ""] {
                let body = match space {
                    "__global" | "__constant" => format!("return {name}(o, p);"),
                    _ => format!(
                        "const {space} half *q = p + o * {stride}; return (float{n})({});",
                        parts.join(", ")
                    ),
                };
                let generic = space.is_empty();
                if generic {
                    p += "#if __OPENCL_C_VERSION__ >= 200\n";
                }
                p += &format!(
                    "{O} float{n} __vkcl_{name}(size_t o, const {space} half *p) {{ {body} }}\n"
                );
                if generic {
                    p += "#endif\n";
                }
            }
            names.push(name);
        }
    }
    p += "#undef __VKCL_FN\n";
    for name in names {
        p += &format!("#define {name}(o, p) __vkcl_{name}(o, p)\n");
    }
    p
}
