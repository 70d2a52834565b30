//! Work-group collective functions (`work_group_all/any/broadcast/reduce_*/scan_*`, OpenCL C
//! 2.0 and `__opencl_c_work_group_collective_functions`) as a library of vkcl's own:
//! clspv 0.0.1 crashes (SIGSEGV) compiling any of them.
//!
//! The library (`collectives.cl`, in the prelude of programs that name them) defines the
//! functions on a `__local ulong` scratch array, and macros of the built-ins' names that pass
//! the array as a first argument. OpenCL C declares `__local` variables only at kernel scope,
//! so [`declare_scratch`] adds the array at the top of every kernel body of a program that
//! names a collective (clspv drops it from kernels that do not use it), and functions that
//! call a collective, directly or through each other, get it as a first parameter, added to
//! their declarations and calls. Calls hidden in macros are not seen (they do not compile).

use std::borrow::Cow;

use super::pipes::{tokenize, Kind, Token};

/// The OpenCL C 3.0 feature macro; vkcl defines it itself (clspv must not declare the
/// functions it cannot compile).
pub const FEATURE: &str = "__opencl_c_work_group_collective_functions";

/// Work-items whose values the scratch array holds at once (8 bytes each).
const SLOTS: u32 = 128;

const SCRATCH: &str = "vkcl_wg_scratch_";

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
         #pragma clang diagnostic ignored \"-Wdeclaration-after-statement\"\n\
         #pragma clang diagnostic ignored \"-Wvariadic-macros\"\n\
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

/// A top-level function declaration or definition.
struct Function<'a> {
    name: &'a str,
    kernel: bool,
    /// Token of the parameter list's `(`.
    params: usize,
    /// Tokens of the body's `{` and `}`.
    body: Option<(usize, usize)>,
}

/// The top-level functions of `text` (a function's name is the identifier before the first
/// parenthesis of its declaration that does not follow `__attribute__`).
fn functions<'a>(text: &'a str, toks: &[Token]) -> Vec<Function<'a>> {
    let word = |i: usize| &text[toks[i].start..toks[i].end];
    let punct = |i: usize| match toks[i].kind {
        Kind::Punct(c) => Some(c),
        _ => None,
    };
    let mut out = vec![];
    let (mut depth, mut parens) = (0u32, 0u32);
    let mut kernel = false;
    let mut current: Option<Function> = None;
    for i in 0..toks.len() {
        match punct(i) {
            Some(b'(') => {
                let named = i > 0 && toks[i - 1].kind == Kind::Ident;
                let attribute = named && word(i - 1).starts_with("__attribute");
                if depth == 0 && parens == 0 && named && !attribute && current.is_none() {
                    current = Some(Function {
                        name: word(i - 1),
                        kernel,
                        params: i,
                        body: None,
                    });
                }
                parens += 1;
            }
            Some(b')') => parens = parens.saturating_sub(1),
            Some(b'{') => {
                if depth == 0 && i > 0 && punct(i - 1) == Some(b')') {
                    if let Some(f) = current.as_mut() {
                        f.body = Some((i, i));
                    }
                }
                depth += 1;
            }
            Some(b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some(mut f) = current.take().filter(|f| f.body.is_some()) {
                        f.body = f.body.map(|(open, _)| (open, i));
                        out.push(f);
                    }
                    kernel = false;
                }
            }
            Some(b';') if depth == 0 => {
                out.extend(current.take());
                kernel = false;
            }
            _ if depth == 0 && toks[i].kind == Kind::Ident => {
                kernel |= word(i) == "kernel" || word(i) == "__kernel";
                if let Some(f) = current.as_mut() {
                    f.kernel |= kernel;
                }
            }
            _ => {}
        }
    }
    out
}

/// `text` with the scratch array declared in its kernels and passed, as a first parameter,
/// to the other functions that call a collective (directly or through each other); `None`
/// without kernels.
fn with_scratch(text: &str) -> Option<String> {
    let toks = tokenize(text);
    let word = |i: usize| &text[toks[i].start..toks[i].end];
    let is_call = |i: usize| {
        toks[i].kind == Kind::Ident && toks.get(i + 1).is_some_and(|t| t.kind == Kind::Punct(b'('))
    };
    let fns = functions(text, &toks);
    let calls = |f: &Function, names: &[&str]| {
        f.body.is_some_and(|(open, close)| {
            (open..close).any(|i| is_call(i) && names.contains(&word(i)))
        })
    };
    // Helpers needing the scratch array, to a fixed point.
    let mut needing: Vec<&str> = vec![];
    loop {
        let before = needing.len();
        for f in fns.iter().filter(|f| !f.kernel) {
            if !needing.contains(&f.name) && (calls(f, NAMES) || calls(f, &needing)) {
                needing.push(f.name);
            }
        }
        if needing.len() == before {
            break;
        }
    }
    // Insertions: (byte offset, text), in order.
    let mut edits: Vec<(usize, String)> = vec![];
    let param = |i: usize| {
        let empty = matches!(toks.get(i + 1).map(|t| t.kind), Some(Kind::Punct(b')')))
            || (toks.get(i + 1).is_some_and(|_| word(i + 1) == "void")
                && toks.get(i + 2).is_some_and(|t| t.kind == Kind::Punct(b')')));
        (empty, toks[i].end)
    };
    for f in &fns {
        if f.kernel {
            if let Some((open, _)) = f.body {
                let decl = format!(" __local ulong {SCRATCH}[{SLOTS}]; (void){SCRATCH};");
                edits.push((toks[open].end, decl));
            }
        } else if needing.contains(&f.name) {
            let (empty, at) = param(f.params);
            let p = format!("__local ulong *{SCRATCH}{}", if empty { "" } else { ", " });
            if empty && word(f.params + 1) == "void" {
                edits.push((at, format!("{p} /*")));
                edits.push((toks[f.params + 1].end, "*/".into()));
            } else {
                edits.push((at, p));
            }
        }
        for i in f.body.map_or(0..0, |(open, close)| open..close) {
            if is_call(i) && needing.contains(&word(i)) {
                let (empty, at) = param(i + 1);
                edits.push((at, format!("{SCRATCH}{}", if empty { "" } else { ", " })));
            }
        }
    }
    if !fns.iter().any(|f| f.kernel && f.body.is_some()) {
        return None;
    }
    edits.sort_by_key(|e| e.0);
    let mut out = String::new();
    let mut copied = 0;
    for (at, insert) in edits {
        out.push_str(&text[copied..at]);
        out.push_str(&insert);
        copied = at;
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
    fn helpers_get_the_array_as_a_parameter() {
        let src = "int inner(int x);\n\
                   int inner(int x) { return work_group_reduce_add(x); }\n\
                   int outer(void) { return inner(1) + other(2); }\n\
                   int other(int y) { return y; }\n\
                   kernel void k(global int *p) { p[0] = outer() + inner(p[1]); }\n";
        let out = scratch(src);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            format!("int inner(__local ulong *{SCRATCH}, int x);")
        );
        assert!(lines[1].starts_with(&format!("int inner(__local ulong *{SCRATCH}, int x) {{")));
        assert_eq!(
            lines[2],
            format!("int outer(__local ulong *{SCRATCH} /*void*/) {{ return inner({SCRATCH}, 1) + other(2); }}")
        );
        assert_eq!(lines[3], "int other(int y) { return y; }");
        assert!(lines[4].ends_with(&format!(
            "p[0] = outer({SCRATCH}) + inner({SCRATCH}, p[1]); }}"
        )));
    }

    #[test]
    fn sources_without_collectives_are_unchanged() {
        let src = "kernel void k(global int *p) { work_group_barrier(CLK_LOCAL_MEM_FENCE); }";
        let same = |s: &[u8]| matches!(declare_scratch(Cow::Borrowed(s)), Cow::Borrowed(_));
        assert!(same(src.as_bytes()) && same(b"\xff work_group_all"));
    }
}
