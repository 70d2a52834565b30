//! Members of elements of private arrays of packed structs, addressed in bytes before clspv.
//!
//! With `struct __attribute__((packed)) w { ulong value; int dummy; }` (12 bytes) and a private
//! `struct w p[4]`, clspv 0.0.1 reads `p[s].value` at words 2s and 2s + 1 of the array instead
//! of 3s and 3s + 1: LLVM leaves `getelementptr [4 x %w], ptr %p, 0, s, 0` and clspv's
//! SimplifyPointerBitcast, retyping the array as 12 words, scales `s` by the member's size, not
//! the struct's (the member at index 1 is read right). A byte address, `(char *)p + s * 12`, is
//! compiled right. So each `p[e].m` of such an array becomes
//!
//! ```c
//! (*(__typeof__(&p[0].m))((__private char *)p + (e) * sizeof(p[0])
//!                         + __builtin_offsetof(__typeof__(p[0]), m)))
//! ```
//!
//! the same lvalue, `e` evaluated once. Only identifiers declared, inside a function and with no
//! address space, as an array of a struct the source declares packed (its tag or a typedef
//! name), and never declared as anything else, are rewritten. Lines are kept.

use super::chosen_load::matching;
use super::pipes::{Kind, Token};
use super::source_edit::{code_tokens, flat, is_ident, spans_directive, splice, Edit};
use std::borrow::Cow;

/// `source` with every such member access rewritten (borrowed when there is none).
pub fn rewrite(source: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(&source) else {
        return source;
    };
    if !text.contains("packed") {
        return source;
    }
    let (toks, directives) = code_tokens(text);
    let t = |k: usize| toks.get(k).map_or("", |t: &Token| &text[t.start..t.end]);
    let arrays = private_arrays(text, &toks);
    let mut edits = vec![];
    let mut k = 0;
    while k < toks.len() {
        let a = t(k);
        let access =
            arrays.contains(&a) && t(k + 1) == "[" && !matches!(t(k.wrapping_sub(1)), "." | "->");
        let close = access
            .then(|| matching(&toks, text, k + 1, "[", "]"))
            .flatten();
        let member = close.filter(|&c| {
            c > k + 2
                && t(c + 1) == "."
                && toks.get(c + 2).is_some_and(|t| t.kind == Kind::Ident)
                && !spans_directive(&directives, toks[k].start, toks[c + 2].end)
        });
        let Some((close, e)) =
            member.and_then(|c| Some((c, flat(&text[toks[k + 2].start..toks[c - 1].end])?)))
        else {
            k += 1;
            continue;
        };
        let m = t(close + 2);
        edits.push(Edit {
            start: toks[k].start,
            end: toks[close + 2].end,
            text: format!(
                "(*(__typeof__(&{a}[0].{m}))((__private char *){a} + ({e}) * sizeof({a}[0]) \
                 + __builtin_offsetof(__typeof__({a}[0]), {m})))"
            ),
        });
        k = close + 3;
    }
    if edits.is_empty() {
        return source;
    }
    Cow::Owned(splice(text, &edits).into_bytes())
}

/// The names of packed structs: `struct TAG` tags and typedef names.
fn packed_types<'a>(text: &'a str, toks: &[Token]) -> (Vec<&'a str>, Vec<&'a str>) {
    let t = |k: usize| toks.get(k).map_or("", |t| &text[t.start..t.end]);
    let (mut tags, mut typedefs) = (vec![], vec![]);
    for k in (0..toks.len()).filter(|&k| t(k) == "struct") {
        // The declaration: to the `;` after the body.
        let Some(open) = (k..toks.len()).find(|&j| matches!(t(j), "{" | ";")) else {
            continue;
        };
        if t(open) != "{" {
            continue;
        }
        let mut depth = 0usize;
        let Some(body_end) = (open..toks.len()).find(|&j| {
            match t(j) {
                "{" => depth += 1,
                "}" => depth -= 1,
                _ => {}
            }
            depth == 0
        }) else {
            continue;
        };
        let Some(semi) = (body_end..toks.len()).find(|&j| t(j) == ";") else {
            continue;
        };
        let outside = (k..open).chain(body_end..semi);
        if !outside.map(t).any(|w| w == "packed" || w == "__packed__") {
            continue;
        }
        if is_ident(t(open - 1)) && open > k + 1 {
            tags.push(t(open - 1));
        }
        if t(k.wrapping_sub(1)) == "typedef" && is_ident(t(semi - 1)) {
            typedefs.push(t(semi - 1));
        }
    }
    (tags, typedefs)
}

/// Identifiers declared only as private arrays of packed structs, inside functions.
fn private_arrays<'a>(text: &'a str, toks: &[Token]) -> Vec<&'a str> {
    // What may come before the type in such a declaration (an address space from a macro,
    // `LOCAL_MEM struct w d[4]`, must not pass).
    const QUALIFIERS: [&str; 4] = ["const", "volatile", "__private", "private"];
    let t = |k: usize| toks.get(k).map_or("", |t| &text[t.start..t.end]);
    let (tags, typedefs) = packed_types(text, toks);
    let mut depth = 0usize;
    let mut arrays = vec![];
    for k in 0..toks.len() {
        match t(k) {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            _ => {}
        }
        let name = match t(k) {
            "struct" if tags.contains(&t(k + 1)) => k + 2,
            w if typedefs.contains(&w) => k + 1,
            _ => continue,
        };
        let mut start = k;
        while start > 0 && QUALIFIERS.contains(&t(start - 1)) {
            start -= 1;
        }
        let statement_start = start > 0 && matches!(t(start - 1), "{" | ";" | "}");
        if depth > 0 && statement_start && is_ident(t(name)) && t(name + 1) == "[" {
            arrays.push(t(name));
        }
    }
    // Declared as anything else too: an identifier (not one of these types) or a `*` before it.
    arrays.retain(|&a| {
        (0..toks.len()).filter(|&k| t(k) == a).all(|k| {
            let prev = t(k.wrapping_sub(1));
            (!is_ident(prev) && prev != "*")
                || ["return", "sizeof"].contains(&prev)
                || tags.contains(&prev)
                || typedefs.contains(&prev)
        })
    });
    arrays
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> String {
        super::super::source_edit::rewritten(rewrite, s)
    }

    #[test]
    fn members_of_private_packed_arrays_are_addressed_in_bytes() {
        let src = "struct __attribute__((packed)) w { ulong v; int d; };\n\
                   void f() { struct w p[4]; p[i + 1].v = p[j].d; }";
        let at = |e: &str, m: &str| {
            format!(
                "(*(__typeof__(&p[0].{m}))((__private char *)p + ({e}) * sizeof(p[0]) \
                 + __builtin_offsetof(__typeof__(p[0]), {m})))"
            )
        };
        let want = format!(
            "struct __attribute__((packed)) w {{ ulong v; int d; }};\n\
             void f() {{ struct w p[4]; {} = {}; }}",
            at("i + 1", "v"),
            at("j", "d")
        );
        assert_eq!(rw(src), want);
        let typedef = "typedef struct { long v; int d; } __attribute__((packed)) t;\n\
                       void f() { t q[2]; x = q[k].v; }";
        assert!(rw(typedef).contains("((__private char *)q + (k) * sizeof(q[0])"));
    }

    #[test]
    fn other_arrays_stay() {
        for src in [
            // not packed
            "struct w { ulong v; int d; }; void f() { struct w p[4]; x = p[i].v; }",
            // __local, also from a macro
            "struct __attribute__((packed)) w { ulong v; }; \
             void f() { __local struct w p[4]; x = p[i].v; }",
            "struct __attribute__((packed)) w { ulong v; }; \
             void f() { LOCAL_MEM struct w p[4]; x = p[i].v; }",
            // at file scope
            "struct __attribute__((packed)) w { ulong v; }; __constant struct w p[4]; \
             void f() { x = p[i].v; }",
            // declared as something else too
            "struct __attribute__((packed)) w { ulong v; }; void f() { struct w p[4]; } \
             void g(__global struct w *p) { x = p[i].v; }",
        ] {
            assert_eq!(rw(src), src);
        }
    }
}
