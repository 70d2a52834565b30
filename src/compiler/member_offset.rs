//! A pointer into the middle of a struct's member array passed to a function, made a word
//! pointer from the buffer before clspv (issue 15 item 4).
//!
//! `sum(a[i].d + 1, n)`, with `struct { uint d[16]; uint len; }` in a `__global` buffer and a
//! helper indexing its pointer: clspv 0.0.1 folds the pointer to `a[(17i + k) / 17].d[0]`,
//! dropping the `+ 1` (`compiler::member_index` repairs the division, not a term that is gone).
//! Written from the buffer in units of the element, `(uint *)a + i * 17 + 0 + 1`, it keeps the
//! offset in the flat index that member_index repairs from. So each such argument
//! `r[i].m + e` becomes
//!
//! ```c
//! (COND ? (r[i].m + e)
//!       : (__typeof__(&r[0].m[0]))(r) + (i) * (int)(sizeof(r[0]) / sizeof(r[0].m[0]))
//!         + (int)(__builtin_offsetof(__typeof__(r[0]), m) / sizeof(r[0].m[0])) + (e))
//! ```
//!
//! where the constant `COND` keeps the original where `m` is a pointer, not an array, or where
//! the struct's size or the member's offset is not a multiple of the element's. Only arguments
//! of a call (between `(` or `,` and `,` or `)`), with `r` an identifier declared only as a
//! `__global` pointer, are rewritten: a `__local` view at a constant offset hangs clspv
//! (`compiler::word_views`). Lines are kept.

use super::chosen_load::matching;
use super::pipes::{tokenize, Kind, Token};
use super::source_edit::{flat, is_ident, splice, Edit};
use std::borrow::Cow;

/// `source` with every such argument rewritten (borrowed when there is none).
pub fn rewrite(source: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(&source) else {
        return source;
    };
    if !text.contains("global") {
        return source;
    }
    let toks = tokenize(text);
    let t = |k: usize| toks.get(k).map_or("", |t: &Token| &text[t.start..t.end]);
    let mut edits = vec![];
    let mut k = 1;
    while k < toks.len() {
        match matches!(t(k - 1), "(" | ",")
            .then(|| argument(text, &toks, k))
            .flatten()
        {
            Some((text, next)) => {
                let (start, end) = (toks[k].start, toks[next - 1].end);
                edits.push(Edit { start, end, text });
                k = next;
            }
            None => k += 1,
        }
    }
    if edits.is_empty() {
        return source;
    }
    Cow::Owned(splice(text, &edits).into_bytes())
}

/// The rewritten argument `r[i].m + e` starting at token `k`, and the token after it.
fn argument(text: &str, toks: &[Token], k: usize) -> Option<(String, usize)> {
    let t = |k: usize| toks.get(k).map_or("", |t| &text[t.start..t.end]);
    let ident = |k: usize| toks.get(k).is_some_and(|t| t.kind == Kind::Ident);
    if !ident(k) || t(k + 1) != "[" || !global_pointer(text, toks, t(k)) {
        return None;
    }
    let close = matching(toks, text, k + 1, "[", "]")?;
    if close == k + 2 || t(close + 1) != "." || !ident(close + 2) || t(close + 3) != "+" {
        return None;
    }
    // `e`: to the `,` or `)` ending the argument, with no operator binding looser than `+`.
    let mut depth = 0usize;
    let mut end = close + 4;
    while end < toks.len() {
        match t(end) {
            "(" | "[" => depth += 1,
            ")" | "]" if depth > 0 => depth -= 1,
            ")" | "," if depth == 0 => break,
            "?" | ":" | "=" | "<" | ">" | "|" | "&" | "^" | ";" | "{" | "}" | "+" | "-"
                if depth == 0 =>
            {
                return None
            }
            _ => {}
        }
        if toks[end].kind == Kind::Directive {
            return None;
        }
        end += 1;
    }
    if end == close + 4 || end == toks.len() {
        return None;
    }
    let span = |a: usize, b: usize| flat(&text[toks[a].start..toks[b - 1].end]);
    let (r, m) = (t(k), t(close + 2));
    let (i, e, orig) = (span(k + 2, close)?, span(close + 4, end)?, span(k, end)?);
    let elem = format!("sizeof({r}[0].{m}[0])");
    let offset = format!("__builtin_offsetof(__typeof__({r}[0]), {m})");
    let new = format!(
        "(__builtin_types_compatible_p(__typeof__({r}[0].{m}), __typeof__(&{r}[0].{m}[0])) \
         || sizeof({r}[0]) % {elem} || {offset} % {elem} ? ({orig}) \
         : (__typeof__(&{r}[0].{m}[0]))({r}) + ({i}) * (int)(sizeof({r}[0]) / {elem}) \
         + (int)({offset} / {elem}) + ({e}))"
    );
    Some((new, end))
}

/// Whether every declaration of `name` is a `__global` pointer (`global T *name`).
fn global_pointer(text: &str, toks: &[Token], name: &str) -> bool {
    let t = |k: usize| toks.get(k).map_or("", |t| &text[t.start..t.end]);
    let mut declared = false;
    for k in (1..toks.len()).filter(|&k| t(k) == name) {
        let prev = t(k - 1);
        let is_declaration =
            prev == "*" || (is_ident(prev) && !["return", "sizeof"].contains(&prev));
        if !is_declaration {
            continue;
        }
        let global =
            prev == "*" && (k.saturating_sub(6)..k).any(|j| matches!(t(j), "global" | "__global"));
        if !global {
            return false;
        }
        declared = true;
    }
    declared
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> String {
        super::super::source_edit::rewritten(rewrite, s)
    }

    #[test]
    fn offset_member_pointer_arguments_become_word_pointers() {
        let src = "kernel void k(global const msg_t *a) { x = sum(a[i].d + 1, n); }";
        let out = rw(src);
        assert!(
            out.contains(
                ": (__typeof__(&a[0].d[0]))(a) + (i) * (int)(sizeof(a[0]) / sizeof(a[0].d[0])) \
                 + (int)(__builtin_offsetof(__typeof__(a[0]), d) / sizeof(a[0].d[0])) + (1))"
            ),
            "{out}"
        );
        assert!(out.contains("? (a[i].d + 1) :"), "{out}");
        assert!(out.ends_with(", n); }"), "{out}");
    }

    #[test]
    fn other_arguments_stay() {
        for src in [
            // no offset
            "kernel void k(global const msg_t *a) { x = sum(a[i].d, n); }",
            // a __local array
            "kernel void k(local msg_t *a) { x = sum(a[i].d + 1, n); }",
            // declared otherwise too
            "kernel void k(global msg_t *a) { } void g(msg_t a) { x = sum(a[i].d + 1, n); }",
            // not an argument
            "kernel void k(global msg_t *a) { p = a[i].d + 1; }",
            // more terms
            "kernel void k(global msg_t *a) { x = sum(a[i].d + 1 - j, n); }",
        ] {
            assert_eq!(rw(src), src);
        }
    }
}
