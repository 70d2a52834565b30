//! A load at an index that is a sum of three or more terms, `v = p[a + b + c];`, rewritten as a
//! subscript of a pointer to an array, `v = (*(__typeof__(*(p)) (*)[1])(p))[a + b + c];`,
//! before clspv (issue 15).
//!
//! LLVM's InstCombine turns a one-index GEP at an `add` into a chain of GEPs, one per term.
//! Where the buffer is also read as another type (CLBlast's complex GEMMs: `struct cfloat2
//! {float2 x; float2 y;}` loads next to `float2` loads of the same buffer), clspv retypes the
//! chain for the buffer's inferred element type and, with three links, loses terms: CGEMM's
//! direct kernel read `agm[idk*(a_ld/2) + idm + (a_offset/2)]` with the last term dropped and
//! the middle one taken as a component (tests/clspv_fixes.rs
//! struct_of_vectors_from_a_buffer_read_as_the_vector_type). A two-index GEP (array, element)
//! is not split, and clspv indexes it right. The element read is the same one: `p[e]` is
//! `(*(T (*)[1])p)[e]` for any pointer or array `p` of element type `T`. The statement's
//! newlines stay where they were (the replacement is on one line, the index text unchanged).
//! Only names declared as pointers somewhere in the source (after a `*`) are rewritten.

use super::chosen_load::matching;
use super::pipes::{tokenize, Kind, Token};
use std::borrow::Cow;

/// `source` with every such load rewritten (borrowed when there is none).
pub fn rewrite(source: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(&source) else {
        return source;
    };
    let toks = tokenize(text);
    let t = |k: usize| toks.get(k).map_or("", |t: &Token| &text[t.start..t.end]);
    let ident = |k: usize| toks.get(k).is_some_and(|t| matches!(t.kind, Kind::Ident));
    // Names written after a `*` (and its qualifiers): pointers, so that a vector (which clang
    // lets one subscript, but not dereference) is never rewritten.
    let mut pointers = std::collections::HashSet::new();
    for k in 0..toks.len() {
        let mut n = k + 1;
        while matches!(t(n), "const" | "volatile" | "restrict" | "__restrict") {
            n += 1;
        }
        if t(k) == "*" && ident(n) {
            pointers.insert(t(n));
        }
    }
    let mut out = String::new();
    let mut copied = 0;
    for k in 1..toks.len() {
        // `= p[` with `=` an assignment (not `==`, `<=`, `+=`, ...).
        let compound = matches!(
            t(k - 1),
            "=" | "<" | ">" | "!" | "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^"
        );
        if compound || !(t(k) == "=" && ident(k + 1) && t(k + 2) == "[") {
            continue;
        }
        let Some(close) = matching(&toks, text, k + 2, "[", "]") else {
            continue;
        };
        if t(close + 1) != ";" || binary_sums(text, &toks, k + 3, close) < 2 {
            continue;
        }
        let p = t(k + 1);
        if !pointers.contains(p) {
            continue;
        }
        out += &text[copied..toks[k + 1].start];
        out += &format!("(*(__typeof__(*({p})) (*)[1])({p}))");
        copied = toks[k + 1].end;
    }
    if copied == 0 {
        return source;
    }
    out += &text[copied..];
    Cow::Owned(out.into_bytes())
}

/// The binary `+` and `-` in tokens `from..to`, parentheses included (LLVM sees one sum in
/// `(a + b) + c`), a nested subscript's or a call's arguments not.
fn binary_sums(text: &str, toks: &[Token], from: usize, to: usize) -> usize {
    // The open parentheses and brackets, each marked whether its sums are the index's.
    let mut open: Vec<bool> = vec![];
    let mut sums = 0;
    let mut after_operand = false;
    for tok in &toks[from..to] {
        let s = &text[tok.start..tok.end];
        let counted = open.iter().all(|&c| c);
        match s {
            "(" => open.push(!after_operand),
            "[" => open.push(false),
            ")" | "]" => {
                open.pop();
            }
            "+" | "-" if counted && after_operand => sums += 1,
            _ => {}
        }
        after_operand = matches!(tok.kind, Kind::Ident)
            || matches!(s, ")" | "]")
            || s.as_bytes()[0].is_ascii_digit();
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> String {
        String::from_utf8(rewrite(Cow::Borrowed(s.as_bytes())).into_owned()).unwrap()
    }

    #[test]
    fn clblast_direct_gemm_load() {
        let decl = "void f(const __global realMD* restrict agm) {\n";
        assert_eq!(
            rw(&format!(
                "{decl}const realMD avec = agm[idk*(a_ld/VWMD) + idm + (a_offset/VWMD)];"
            )),
            format!(
                "{decl}const realMD avec = (*(__typeof__(*(agm)) (*)[1])(agm))\
                 [idk*(a_ld/VWMD) + idm + (a_offset/VWMD)];"
            )
        );
        assert_eq!(
            rw("int *b;\nx = b[i - 1 + j];\ny = b[f(a + b + c)];"),
            "int *b;\nx = (*(__typeof__(*(b)) (*)[1])(b))[i - 1 + j];\ny = b[f(a + b + c)];"
        );
        assert_eq!(
            rw("int *b; x = b[((i)) + ((j) + (k))];"),
            "int *b; x = (*(__typeof__(*(b)) (*)[1])(b))[((i)) + ((j) + (k))];"
        );
    }

    #[test]
    fn other_subscripts_stay() {
        let vector = "float4 b; x = b[i + j + k];";
        assert_eq!(rw(vector), vector);
        for src in [
            "x = b[i + j];",
            "x = b[-i + j];",
            "x == b[i + j + k];",
            "x += b[i + j + k];",
            "x = b[i + j + k].x;",
            "b[i + j + k] = x;",
            "x = b[i + j + k][0];",
            "x = b[f(i + j + k)];",
            "x = b[c[i + j + k]];",
        ] {
            assert_eq!(rw(src), src);
            let src = format!("int *b; {src}");
            assert_eq!(rw(&src), src);
        }
    }
}
