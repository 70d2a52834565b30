//! A value returned from each arm of an if/else, the else arm's kept in that arm by a fence,
//! before clspv, which crashes on the merged form (issue 15).
//!
//! `if (c) { ...; return p[i]; } else { ...; return p[j]; }` is OpenCV's imgproc/boxFilter
//! `readSrcPixel` (the in-image pixel, else the border-extrapolated one; there the returned
//! expression is a macro around the load). When the else index is not speculated (min/max
//! calls, a reflect loop), LLVM's InstCombine and SimplifyCFG sink the two loads below the
//! branch as one load of a phi of the two element pointers, StructurizeCFG gives that phi a
//! `poison` input and clspv's SPIR-V producer dies on it (SIGSEGV, clspv issue 1563: the same
//! crash as the assignment form that `chosen_load` rewrites). Neither pass moves a load past a
//! later write to memory in its block, so the else arm's `return e;` becomes
//! `{ __typeof_unqual__(e) r = e; mem_fence(CLK_GLOBAL_MEM_FENCE); return r; }`: the same value
//! (`return` converts `r` to the function's type as it converted `e`), a fence (which only
//! orders memory, and only on the else path: the border, in OpenCV) after the load, and one load
//! left in each arm. `__typeof_unqual__` drops the address space a load's type carries.
//!
//! Only if/else statements whose two braced arms each end with a `return` of the same
//! expression, or of an element of the same pointer (`p[i]`, `p[j]`), are rewritten. The
//! tokens of every preprocessor branch are read as one stream (OpenCV's arms hold `#ifdef`s);
//! an expression holding a directive is left alone. Newlines are kept, so clspv's diagnostics
//! keep their lines.

use super::chosen_load::matching;
use super::pipes::{Kind, Token};
use super::source_edit::{code_tokens, flat, is_ident, spans_directive, splice, Edit};
use std::borrow::Cow;

/// The fence after the else arm's load.
const FENCE: &str = "mem_fence(CLK_GLOBAL_MEM_FENCE);";

/// `source` with every such else arm rewritten (borrowed when there is none).
pub fn rewrite(source: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(&source) else {
        return source;
    };
    let (toks, directives) = code_tokens(text);
    // In source order: an if nested in a then arm ends its else arm before the outer one.
    let mut arms: Vec<(usize, usize)> = (0..toks.len())
        .filter_map(|k| else_return(text, &toks, k))
        .collect();
    arms.sort_unstable();
    let edits: Vec<Edit> = arms
        .into_iter()
        .filter_map(|(ret, semi)| {
            let (start, end) = (toks[ret + 1].start, toks[semi - 1].end);
            let e =
                flat(&text[start..end]).filter(|_| !spans_directive(&directives, start, end))?;
            Some(Edit {
                start: toks[ret].start,
                end: toks[semi].end,
                text: format!(
                    "{{ __typeof_unqual__({e}) __vkcl_ret = {e}; {FENCE} return __vkcl_ret; }}"
                ),
            })
        })
        .collect();
    if edits.is_empty() {
        return source;
    }
    Cow::Owned(splice(text, &edits).into_bytes())
}

/// For an `if` at token `k` that this rewrites: the else arm's last `return` and its `;`.
fn else_return(text: &str, toks: &[Token], k: usize) -> Option<(usize, usize)> {
    let t = |k: usize| toks.get(k).map_or("", |t| &text[t.start..t.end]);
    if t(k) != "if" || toks[k].kind != Kind::Ident || t(k + 1) != "(" {
        return None;
    }
    let close = matching(toks, text, k + 1, "(", ")")?;
    let then_end = block_end(text, toks, close + 1)?;
    if t(then_end + 1) != "else" {
        return None;
    }
    let else_end = block_end(text, toks, then_end + 2)?;
    let (a, _) = last_return(text, toks, then_end)?;
    let (b, semi) = last_return(text, toks, else_end)?;
    let span = |r: usize, s: usize| &text[toks[r + 1].start..toks[s - 1].end];
    let then_semi = then_end - 1;
    let (x, y) = (span(a, then_semi), span(b, semi));
    let same_pointer = |x: &str, y: &str| {
        let base = |s: &str| s.split_once('[').map(|(p, _)| p.trim().to_string());
        x.ends_with(']')
            && y.ends_with(']')
            && base(x).is_some_and(|p| is_ident(&p) && base(y) == Some(p))
    };
    (x == y || same_pointer(x, y)).then_some((b, semi))
}

/// The token closing the block that opens at token `k` (`{`), counting nested braces.
fn block_end(text: &str, toks: &[Token], k: usize) -> Option<usize> {
    if toks.get(k).map(|t| &text[t.start..t.end]) != Some("{") {
        return None;
    }
    let mut depth = 0usize;
    for (n, tok) in toks.iter().enumerate().skip(k) {
        match &text[tok.start..tok.end] {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(n);
                }
            }
            _ => {}
        }
    }
    None
}

/// When the block closed at token `close` ends with `return e;` (`e` not empty): the `return`
/// token and the `;`.
fn last_return(text: &str, toks: &[Token], close: usize) -> Option<(usize, usize)> {
    let t = |k: usize| &text[toks[k].start..toks[k].end];
    let semi = close.checked_sub(1).filter(|&s| t(s) == ";")?;
    let mut k = semi;
    while k > 0 && !matches!(t(k - 1), ";" | "{" | "}") {
        k -= 1;
    }
    (t(k) == "return" && k + 1 < semi).then_some((k, semi))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> String {
        super::super::source_edit::rewritten(rewrite, s)
    }

    #[test]
    fn else_arm_keeps_its_load() {
        let kept = "{ __typeof_unqual__(p[i]) __vkcl_ret = p[i]; \
                    mem_fence(CLK_GLOBAL_MEM_FENCE); return __vkcl_ret; }";
        assert_eq!(
            rw("if (c) { int i = a; return p[i]; } else { int i = b; return p[i]; }"),
            format!("if (c) {{ int i = a; return p[i]; }} else {{ int i = b; {kept} }}")
        );
        assert_eq!(
            rw("if (c) { return p[a]; } else { return p[b]; }"),
            "if (c) { return p[a]; } else { { __typeof_unqual__(p[b]) __vkcl_ret = p[b]; \
             mem_fence(CLK_GLOBAL_MEM_FENCE); return __vkcl_ret; } }"
        );
    }

    #[test]
    fn directives_in_the_arms_are_read_through() {
        let src = "#ifdef I\nif (a)\n#else\nif (b)\n#endif\n{ return F(v); }\nelse\n{\n\
                   #ifdef C\nreturn 0;\n#else\nint v = g();\nreturn F(v);\n#endif\n}";
        let want = "#ifdef I\nif (a)\n#else\nif (b)\n#endif\n{ return F(v); }\nelse\n{\n\
                    #ifdef C\nreturn 0;\n#else\nint v = g();\n{ __typeof_unqual__(F(v)) \
                    __vkcl_ret = F(v); mem_fence(CLK_GLOBAL_MEM_FENCE); return __vkcl_ret; }\n\
                    #endif\n}";
        assert_eq!(rw(src), want);
    }

    #[test]
    fn other_statements_stay() {
        for src in [
            "if (c) { return p[i]; } else { return q[j]; }",
            "if (c) { return f(i); } else { return g(i); }",
            "if (c) { return; } else { return; }",
            "if (c) return p[i]; else return p[j];",
            "if (c) { return p[i]; } else { x = p[j]; }",
            "if (c) { return p[i]; } else if (d) { return p[j]; }",
            "if (c) { return p[i]; } else { return p[\n#if A\nj\n#else\nk\n#endif\n]; }",
            "// if (c) { return p[i]; } else { return p[j]; }",
        ] {
            assert_eq!(rw(src), src);
        }
    }
}
