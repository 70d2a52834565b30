//! One of two loads of a buffer chosen by a condition, rewritten as one load at a chosen index
//! before clspv, which crashes on the first form (issue 15).
//!
//! `if (c) { r = p[i]; } else { r = p[j]; }` (braces optional) is CLBlast's
//! SymmLowerToSquared/SymmUpperToSquared, in every SYMM program. LLVM's InstCombine sinks the two
//! loads below the branch as one load of a phi of the two element pointers; clspv's CFG
//! structurizer then gives that phi a `poison` pointer operand and SPIRVProducerPass dies on it
//! (SIGSEGV, with -cl-opt-disable too). `r = p[(c) ? (i) : (j)];` reads the same element, with
//! `c` and then one of the indices evaluated as before, and compiles: the phi is of integers.
//! The replacement keeps the statement's newlines, so clspv's diagnostics keep their lines.

use super::pipes::{tokenize, Kind, Token};
use std::borrow::Cow;

/// `source` with every such statement rewritten (borrowed when there is none).
pub fn rewrite(source: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(&source) else {
        return source;
    };
    let toks = tokenize(text);
    let t = |k: usize| toks.get(k).map_or("", |t: &Token| &text[t.start..t.end]);
    let mut out = String::new();
    let mut copied = 0;
    let mut k = 0;
    while k < toks.len() {
        let Some((new, next)) = (t(k) == "if" && matches!(toks[k].kind, Kind::Ident))
            .then(|| statement(text, &toks, k))
            .flatten()
        else {
            k += 1;
            continue;
        };
        let (start, end) = (toks[k].start, toks[next - 1].end);
        out += &text[copied..start];
        out += &new;
        out.extend(std::iter::repeat_n(
            '\n',
            text[start..end].matches('\n').count(),
        ));
        copied = end;
        k = next;
    }
    if copied == 0 {
        return source;
    }
    out += &text[copied..];
    Cow::Owned(out.into_bytes())
}

/// The rewritten statement starting with the `if` at token `k`, and the token after it.
fn statement(text: &str, toks: &[Token], k: usize) -> Option<(String, usize)> {
    let t = |k: usize| toks.get(k).map_or("", |t| &text[t.start..t.end]);
    let span = |a: usize, b: usize| &text[toks[a].start..toks[b - 1].end];
    if t(k + 1) != "(" {
        return None;
    }
    let close = matching(toks, text, k + 1, "(", ")")?;
    let then = branch(text, toks, close + 1)?;
    if t(then.next) != "else" {
        return None;
    }
    let other = branch(text, toks, then.next + 1)?;
    if (then.target, then.pointer) != (other.target, other.pointer) {
        return None;
    }
    let cond = span(k + 2, close);
    let (i, j) = (
        span(then.index.0, then.index.1),
        span(other.index.0, other.index.1),
    );
    let new = format!(
        "{} = {}[({cond}) ? ({i}) : ({j})];",
        then.target, then.pointer
    );
    Some((new, other.next))
}

/// One branch, `r = p[index];` or `{ r = p[index]; }`.
struct Branch<'a> {
    target: &'a str,
    pointer: &'a str,
    /// The index's tokens.
    index: (usize, usize),
    /// The token after the branch.
    next: usize,
}

/// The branch starting at token `k`.
fn branch<'a>(text: &'a str, toks: &[Token], k: usize) -> Option<Branch<'a>> {
    let t = |k: usize| toks.get(k).map_or("", |t| &text[t.start..t.end]);
    let ident = |k: usize| toks.get(k).is_some_and(|t| matches!(t.kind, Kind::Ident));
    let braced = t(k) == "{";
    let s = k + usize::from(braced);
    if !(ident(s) && t(s + 1) == "=" && ident(s + 2) && t(s + 3) == "[") {
        return None;
    }
    let close = matching(toks, text, s + 3, "[", "]")?;
    if close == s + 4 || t(close + 1) != ";" {
        return None;
    }
    let mut next = close + 2;
    if braced {
        if t(next) != "}" {
            return None;
        }
        next += 1;
    }
    Some(Branch {
        target: t(s),
        pointer: t(s + 2),
        index: (s + 4, close),
        next,
    })
}

/// The token closing the `open` at token `k`, within the statement.
pub(super) fn matching(
    toks: &[Token],
    text: &str,
    k: usize,
    open: &str,
    close: &str,
) -> Option<usize> {
    let mut depth = 0usize;
    for (n, tok) in toks.iter().enumerate().skip(k) {
        match &text[tok.start..tok.end] {
            s if s == open => depth += 1,
            s if s == close => {
                depth -= 1;
                if depth == 0 {
                    return Some(n);
                }
            }
            ";" | "{" | "}" => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> String {
        String::from_utf8(rewrite(Cow::Borrowed(s.as_bytes())).into_owned()).unwrap()
    }

    #[test]
    fn clblast_symm_form() {
        let src = "if (id_two <= id_one) { result = src[id_two*src_ld + id_one + src_offset]; }\n\
                   else                  { result = src[id_one*src_ld + id_two + src_offset]; }";
        assert_eq!(
            rw(src),
            "result = src[(id_two <= id_one) ? (id_two*src_ld + id_one + src_offset) : \
             (id_one*src_ld + id_two + src_offset)];\n"
        );
        assert_eq!(
            rw("if (a(b)) r = s[f(i)]; else r = s[j];"),
            "r = s[(a(b)) ? (f(i)) : (j)];"
        );
    }

    #[test]
    fn other_statements_stay() {
        for src in [
            "if (c) r = s[i]; else q = s[j];",
            "if (c) r = s[i]; else r = t[j];",
            "if (c) { r = s[i]; x++; } else { r = s[j]; }",
            "if (c) r = s[i].x; else r = s[j];",
            "if (c) r == s[i]; else r = s[j];",
            "if (c) r = s[i];",
            "if (c) r = s[]; else r = s[j];",
            "// if (c) r = s[i]; else r = s[j];",
        ] {
            assert_eq!(rw(src), src);
        }
    }
}
