//! Work-group collective functions (`work_group_all/any/broadcast/reduce_*/scan_*`, OpenCL C
//! 2.0 and `__opencl_c_work_group_collective_functions`) as a library of vkcl's own:
//! clspv 0.0.1 crashes (SIGSEGV) compiling any of them.
//!
//! The library (`collectives.cl`, in the prelude of programs that name them) defines the
//! functions on a `__local ulong` scratch array, and macros of the built-ins' names that pass
//! the array as a first argument. OpenCL C declares `__local` variables only at kernel scope,
//! so [`declare_scratch`] adds the array at the top of every kernel body of a program that
//! names a collective (clspv drops it from kernels that do not use it). A collective called
//! from a function that is not a kernel does not compile (the array is not in scope): the
//! same limit as the pipes' work-group reservations (`compiler::pipes`).

use std::borrow::Cow;

use super::pipes::{tokenize, Kind};

/// The OpenCL C 3.0 feature macro; vkcl defines it itself (clspv must not declare the
/// functions it cannot compile).
pub const FEATURE: &str = "__opencl_c_work_group_collective_functions";

/// Work-items whose values the scratch array holds at once (8 bytes each).
const SLOTS: u32 = 128;

const SCRATCH: &str = "__vkcl_wg";

/// The built-ins the library replaces.
const NAMES: &[&str] = &[
    "work_group_all",
    "work_group_any",
    "work_group_broadcast",
    "work_group_reduce_add",
    "work_group_reduce_min",
    "work_group_reduce_max",
    "work_group_scan_inclusive_add",
    "work_group_scan_inclusive_min",
    "work_group_scan_inclusive_max",
    "work_group_scan_exclusive_add",
    "work_group_scan_exclusive_min",
    "work_group_scan_exclusive_max",
];

/// Whether `source` names a collective function (also inside a macro definition).
pub fn names_any(source: &[u8]) -> bool {
    NAMES
        .iter()
        .any(|n| source.windows(n.len()).any(|w| w == n.as_bytes()))
}

/// The library, for the prelude: only where the language has the functions (OpenCL C 2.0,
/// or 3.0 with the feature macro, which vkcl defines where the device has 64-bit integers).
pub fn prelude() -> String {
    format!(
        "#if defined({FEATURE}) && __OPENCL_C_VERSION__ >= 200\n\
         #define __VKCL_WG_N {SLOTS}\n{}#endif\n",
        include_str!("collectives.cl")
    )
}

/// `source` with the scratch array declared at the top of each kernel body (on the line of
/// the kernel's `{`, so that line numbers stay), when it names a collective function.
pub fn declare_scratch(source: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    match std::str::from_utf8(&source) {
        Ok(text) if names_any(text.as_bytes()) => match with_scratch(text) {
            Some(out) => Cow::Owned(out.into_bytes()),
            None => source,
        },
        _ => source,
    }
}

/// `text` with the scratch array in its kernels; `None` without kernels.
fn with_scratch(text: &str) -> Option<String> {
    let toks = tokenize(text);
    let punct = |i: usize| match toks[i].kind {
        Kind::Punct(c) => Some(c),
        _ => None,
    };
    let mut out = String::new();
    let mut copied = 0;
    let mut depth = 0u32;
    // Whether the top-level declaration being read names `kernel`.
    let mut kernel = false;
    for i in 0..toks.len() {
        match punct(i) {
            Some(b'{') => {
                let body = depth == 0 && i > 0 && punct(i - 1) == Some(b')');
                if body && kernel {
                    out.push_str(&text[copied..toks[i].end]);
                    out.push_str(&format!(
                        " __local ulong {SCRATCH}[{SLOTS}]; (void){SCRATCH};"
                    ));
                    copied = toks[i].end;
                }
                depth += 1;
            }
            Some(b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    kernel = false;
                }
            }
            Some(b';') if depth == 0 => kernel = false,
            _ if depth == 0 && toks[i].kind == Kind::Ident => {
                let word = &text[toks[i].start..toks[i].end];
                kernel |= word == "kernel" || word == "__kernel";
            }
            _ => {}
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(src: &str) -> String {
        String::from_utf8(declare_scratch(Cow::Borrowed(src.as_bytes())).into_owned()).unwrap()
    }

    #[test]
    fn kernels_get_the_scratch_array() {
        let decl = format!("__local ulong {SCRATCH}[{SLOTS}]; (void){SCRATCH};");
        let src = "struct S { int a; };\nint f(int x) { return x; }\n\
                   __kernel __attribute__((reqd_work_group_size(8, 1, 1)))\n\
                   void k(global int *p) { if (1) { p[0] = work_group_reduce_add(p[0]); } }\n\
                   kernel void j(global int *p);\nkernel void j(global int *p) {}\n";
        let out = scratch(src);
        assert_eq!(out.matches(&decl).count(), 2, "{out}");
        assert!(out.contains(&format!("void k(global int *p) {{ {decl} if (1)")));
        assert!(out.contains(&format!("kernel void j(global int *p) {{ {decl}}}")));
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.contains("int f(int x) { return x; }"));
    }

    #[test]
    fn sources_without_collectives_are_unchanged() {
        let src = "kernel void k(global int *p) { work_group_barrier(CLK_LOCAL_MEM_FENCE); }";
        let same = |s: &[u8]| matches!(declare_scratch(Cow::Borrowed(s)), Cow::Borrowed(_));
        assert!(same(src.as_bytes()) && same(b"\xff work_group_all"));
    }
}
