//! Which pointer parameters of a kernel its source tests against null, or relates to one another
//! (issue 16; [`related_params`]).
//!
//! A NULL buffer argument must arrive as a null pointer (`p == 0` true). The first build
//! cannot give it one: clspv's logical addressing folds `p == 0` of a kernel's buffer to false
//! and vkcl binds a scratch buffer for NULL, which also absorbs a write through it. The
//! physical-addressing build passes NULL as address 0, where a test is right but a write
//! faults the process on lavapipe. So a launch with a NULL buffer argument takes the physical
//! build only when the kernel's own body tests that parameter: `p == e`, `e != p`, `!p`,
//! `if (p)`, `while (p)`, `p ? a : b`, `p && e`, `e || p`. A kernel that tests a parameter
//! and then writes through it unguarded anyway still faults; one that passes the parameter to
//! a function that tests it still sees a non-null pointer.

use super::pipes::{tokenize, Kind, Token};

/// The indices of the pointer parameters of kernel `name` that its body tests against null.
pub fn tested_params(src: &str, name: &str) -> Vec<usize> {
    let toks = tokenize(src);
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    let Some((open, close, body)) = kernel_at(src, &toks, name) else {
        return vec![];
    };
    let params = params(src, &toks, open, close);
    let end = matching(src, &toks, body).unwrap_or(toks.len() - 1);
    let mut tested = vec![];
    for (index, (param, pointer)) in params.iter().enumerate() {
        let uses = (body + 1..end).filter(|&k| *pointer && text(k) == param);
        if uses.into_iter().any(|k| is_test(src, &toks, k)) {
            tested.push(index);
        }
    }
    tested
}

/// The pairs of pointer parameters (i < j) of kernel `name` that one statement of its body
/// relates: both used as pointer values (not indexed, dereferenced or followed by `->`) in a
/// statement with `==`, `!=`, `<`, `>` or a subtraction, as in `a == b`, `b - a`, `a + n < b`.
/// clspv's logical addressing folds such relations of two parameters as if they pointed into
/// different objects; a launch that binds one buffer (or sub-buffers of one) to both needs
/// real addresses. Relations through local variables or called functions are not seen;
/// operators that only look alike (`<<`, `x - 1` next to the pointers) make it cautious.
pub fn related_params(src: &str, name: &str) -> Vec<(usize, usize)> {
    let toks = tokenize(src);
    let text = |i: usize| toks.get(i).map_or("", |t| &src[t.start..t.end]);
    let Some((open, close, body)) = kernel_at(src, &toks, name) else {
        return vec![];
    };
    let params = params(src, &toks, open, close);
    let index = |k: usize| {
        (params.iter()).position(|(p, pointer)| *pointer && text(k) == p && !p.is_empty())
    };
    let end = matching(src, &toks, body).unwrap_or(toks.len() - 1);
    let mut pairs = vec![];
    let (mut used, mut relates): (Vec<usize>, bool) = (vec![], false);
    for k in body + 1..=end {
        match text(k) {
            ";" | "{" | "}" => {
                if relates {
                    for (n, &i) in used.iter().enumerate() {
                        let others = used[n + 1..].iter().filter(|j| **j != i);
                        pairs.extend(others.map(|&j| (i.min(j), i.max(j))));
                    }
                }
                (used, relates) = (vec![], false);
            }
            "<" | ">" => relates |= text(k - 1) != "-",
            "-" => relates |= text(k + 1) != ">",
            "=" => relates |= matches!(text(k - 1), "=" | "!") && toks[k - 1].end == toks[k].start,
            _ => {
                let arrow = text(k + 1) == "-" && text(k + 2) == ">";
                let member = arrow || matches!(text(k + 1), "[" | ".");
                if let Some(i) = index(k).filter(|_| !member && text(k - 1) != "*") {
                    used.push(i);
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// The parameters between the parentheses at `open` and `close`, split at commas: (the name,
/// the last identifier; whether it is a pointer, with a `*`).
fn params(src: &str, toks: &[Token], open: usize, close: usize) -> Vec<(String, bool)> {
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    let mut params = vec![];
    let mut from = open + 1;
    for k in open + 1..=close {
        if k == close || text(k) == "," {
            let name = (from..k)
                .rev()
                .find(|&j| matches!(toks[j].kind, Kind::Ident));
            let pointer = (from..k).any(|j| text(j) == "*");
            params.push((name.map_or(String::new(), |j| text(j).to_string()), pointer));
            from = k + 1;
        }
    }
    params
}

/// (the parameter list's `(` and `)`, the body's `{`) of the kernel definition `name`.
fn kernel_at(src: &str, toks: &[Token], name: &str) -> Option<(usize, usize, usize)> {
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    (0..toks.len().saturating_sub(1)).find_map(|i| {
        let named = text(i) == name && text(i + 1) == "(";
        let kernel = (i.saturating_sub(12)..i).any(|j| matches!(text(j), "kernel" | "__kernel"));
        if !named || !kernel {
            return None;
        }
        let close = matching(src, toks, i + 1)?;
        (close + 1 < toks.len() && text(close + 1) == "{").then_some((i + 1, close, close + 1))
    })
}

/// The token that closes the bracket at `open`.
pub(crate) fn matching(src: &str, toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match &src[t.start..t.end] {
            "(" | "{" | "[" => depth += 1,
            ")" | "}" | "]" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the identifier at `k` is used as a truth value or compared.
fn is_test(src: &str, toks: &[Token], k: usize) -> bool {
    let text = |i: usize| toks.get(i).map_or("", |t| &src[t.start..t.end]);
    let joined = |i: usize| i + 1 < toks.len() && toks[i].end == toks[i + 1].start;
    let pair = |i: usize| {
        if joined(i) {
            format!("{}{}", text(i), text(i + 1))
        } else {
            String::new()
        }
    };
    let next = pair(k + 1);
    let before = if k >= 2 { pair(k - 2) } else { String::new() };
    let prev = if k >= 1 { text(k - 1) } else { "" };
    matches!(next.as_str(), "==" | "!=" | "&&" | "||")
        || matches!(before.as_str(), "==" | "!=" | "&&" | "||")
        || text(k + 1) == "?"
        || prev == "!"
        || (prev == "(" && k >= 2 && matches!(text(k - 2), "if" | "while") && text(k + 1) == ")")
}

#[cfg(test)]
mod tests {
    use super::{related_params, tested_params};

    #[test]
    fn relations_of_parameters() {
        let src = "kernel void k(global int *a, global int *b, global long *out, int n,\n\
                   global int *c) {\n\
                   out[0] = a == b; out[1] = b - a; out[2] = a[n] - b[n];\n\
                   if (a + n < c) out[3] = c[0]; out[4] = *a - *c; }";
        assert_eq!(related_params(src, "k"), vec![(0, 1), (0, 4)]);
        assert_eq!(
            related_params(
                "kernel void z(global int *p, global int *q) { p[0] = q[0] - 1; }",
                "z"
            ),
            Vec::<(usize, usize)>::new()
        );
    }

    #[test]
    fn tests_of_parameters() {
        let src = "int f(global int *a) { return a == 0; }\n\
                   kernel void k(global int *a, global int *b, int n, global int *c,\n\
                   global int *d, global int *e) {\n\
                   if (b) b[0] = !a; c[0] = n; if (d != NULL) *d = 1; e[0] = e[1] + n; }";
        assert_eq!(tested_params(src, "k"), vec![0, 1, 4]);
        assert_eq!(tested_params(src, "f"), Vec::<usize>::new());
        assert_eq!(
            tested_params("kernel void z(global int *p) { *p = 0; }", "z"),
            Vec::<usize>::new()
        );
        assert_eq!(
            tested_params(
                "kernel void y(global int *p, global int *r) { r[0] = p ? 1 : 2; }",
                "y"
            ),
            vec![0]
        );
    }
}
