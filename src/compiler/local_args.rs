//! Whether an OpenCL C program passes a `__local` pointer to a function of its own (not a
//! kernel), so that clspv must inline every function before its own passes run.
//!
//! clspv 0.0.1 miscompiles a `__local` array that reaches a function it has not inlined yet:
//! LLVM turns constant index offsets (`tile[(r + 2 * row) * 17 + k]` with `k` unrolled) into
//! byte-offset GEPs on the pointer argument, and when clspv later inlines the function and
//! retypes the array it drops the base index (`tile[k]`). CLBlast's direct GEMM
//! (`XgemmDirect(..., alm, blm, ...)`) was wrong that way at every k >= 16. With
//! `-inline-entry-points` every function is inlined into its kernels first and the array is
//! only ever indexed from the kernel. That option is not given to every program: it makes
//! programs with many helpers (vkcl's own prelude overloads) compile for much longer, and it
//! changes which of clspv's other bugs a program meets; so only programs that may pass a
//! `__local` pointer to a function get it (tests/clspv_fixes.rs local_array_passed_to_a_function).
//!
//! The check reads the source text, without a preprocessor: a function definition at file
//! scope that is not a kernel and whose parameter list names `__local`, `local`, or an
//! object-like macro defined as one of them (CLBlast's `#define LOCAL_PTR __local`). It errs
//! towards true (a false positive costs compile time only).

/// Whether `sources` (one program) may define a non-kernel function with a `__local` parameter.
pub fn passes_local_pointer(sources: &[&[u8]]) -> bool {
    let text: Vec<String> = sources
        .iter()
        .map(|s| strip_comments(&String::from_utf8_lossy(s)))
        .collect();
    // Object-like macros whose whole body is a local qualifier (or another such macro).
    let mut local_words: Vec<String> = vec!["__local".into(), "local".into()];
    loop {
        let before = local_words.len();
        for t in &text {
            for line in t.lines() {
                let l = line.trim_start();
                let Some(rest) = l.strip_prefix('#') else {
                    continue;
                };
                let rest = rest.trim_start();
                let Some(def) = rest.strip_prefix("define") else {
                    continue;
                };
                if !def.starts_with([' ', '\t']) {
                    continue;
                }
                let mut words = def.split_whitespace();
                let (Some(name), Some(body), None) = (words.next(), words.next(), words.next())
                else {
                    continue;
                };
                if name.contains('(') || !is_ident(name) {
                    continue;
                }
                if local_words.iter().any(|w| w == body) && !local_words.iter().any(|w| w == name) {
                    local_words.push(name.to_string());
                }
            }
        }
        if local_words.len() == before {
            break;
        }
    }
    text.iter().any(|t| has_local_parameter(t, &local_words))
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The source with comments, string and character literals blanked (newlines kept).
fn strip_comments(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    out.push(b'\n');
                }
                i += 1;
            }
            i += 2;
            out.push(b' ');
        } else if b[i] == b'"' || b[i] == b'\'' {
            let q = b[i];
            i += 1;
            while i < b.len() && b[i] != q && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `text` has, at brace depth 0, `name(params) {` with a local word in `params` and no
/// `kernel`/`__kernel` in the declaration before it.
fn has_local_parameter(text: &str, local_words: &[String]) -> bool {
    let b = text.as_bytes();
    let mut depth = 0usize;
    // Where the current file-scope declaration starts (after the last `;`, `}` or directive).
    let mut decl_start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'#' if depth == 0 && line_start(b, i) => {
                // A directive: skip it (with its continuation lines).
                while i < b.len() && b[i] != b'\n' {
                    if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    i += 1;
                }
                decl_start = i;
            }
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    decl_start = i + 1;
                }
            }
            b';' if depth == 0 => decl_start = i + 1,
            b'(' if depth == 0 => {
                // The matching `)`, then is a `{` next (a definition)?
                let mut d = 0usize;
                let mut j = i;
                while j < b.len() {
                    match b[j] {
                        b'(' => d += 1,
                        b')' => {
                            d -= 1;
                            if d == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if j >= b.len() {
                    return false;
                }
                let params = &text[i + 1..j];
                let mut k = j + 1;
                while k < b.len() && b[k].is_ascii_whitespace() {
                    k += 1;
                }
                let definition = b.get(k) == Some(&b'{');
                let head = &text[decl_start..i];
                let is_kernel = words(head).any(|w| w == "kernel" || w == "__kernel");
                if definition
                    && !is_kernel
                    && words(params).any(|w| local_words.iter().any(|l| l == w))
                {
                    return true;
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

fn line_start(b: &[u8], i: usize) -> bool {
    b[..i]
        .iter()
        .rev()
        .take_while(|&&c| c != b'\n')
        .all(|c| c.is_ascii_whitespace())
}

fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::passes_local_pointer;

    fn check(src: &str) -> bool {
        passes_local_pointer(&[src.as_bytes()])
    }

    #[test]
    fn finds_local_parameters_of_functions_only() {
        assert!(check(
            "void f(__local float *t) { t[0] = 1; }\nkernel void k(__local float *t) { f(t); }"
        ));
        assert!(check("static inline void f(int n,\n local uint* t) {}"));
        // CLBlast: a macro for the qualifier, an attribute before the kernel.
        assert!(check(
            "#ifndef LOCAL_PTR\n  #define LOCAL_PTR __local\n#endif\n\
             INLINE_FUNC void g(LOCAL_PTR real* alm) { }\n\
             __kernel __attribute__((reqd_work_group_size(8, 8, 1)))\n\
             void k(__global real* a) { __local real alm[4]; g(alm); }"
        ));
        // Kernels' own local arguments, declarations without a body, local variables,
        // comments and strings do not count.
        assert!(!check(
            "__kernel void k(__local float *t, global float *o) { __local int x[4]; o[0] = t[0]; }"
        ));
        assert!(!check(
            "kernel\nvoid k(local int *t) {}\nvoid f(local int *t);"
        ));
        assert!(!check(
            "// void f(__local int *t) {}\n/* void g(local int *t) {} */ void h(int x) {}"
        ));
        assert!(!check(
            "void f(global int *p) { barrier(CLK_LOCAL_MEM_FENCE); }"
        ));
        assert!(!check("#define local_size 4\nvoid f(int local_size2) {}"));
    }
}
