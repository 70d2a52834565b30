//! Rewrites casts of pointer arithmetic to a narrower element type before clspv.
//!
//! clspv 0.0.1 miscompiles `(__global int *)(p + e)` and `(__global int *)&p[e]` where `p`
//! points to elements wider than the view (ulong, double, long2, int, ... viewed as int,
//! float, short or char): the pointer `p + e` is kept in units of `p`'s element, and an index
//! into the view taken from it drops the view's words within that element (a store to word
//! `2e + l` of a ulong buffer goes to `(2e + l) & ~1`). The cast taken first,
//! `(__global int *)p + e * 2`, is compiled right. pyopencl's GPU scan writes exactly the
//! first form (`(__global int *) (psc_partial_scan_buffer + psc_unit_base)`).
//!
//! Each `(T *)(p + e)`, `(T *)(p - e)` and `(T *)&p[e]` whose `p` is an identifier that the
//! source declares only as a pointer or an array (never as anything else, never of `void`)
//! becomes
//!
//! ```c
//! (sizeof(*(p)) <= sizeof(*(T *)0) || sizeof(*(p)) % sizeof(*(T *)0) ? (T *)(p + e)
//!                                 : (T *)(p) + (e) * (int)(sizeof(*(p)) / sizeof(*(T *)0)))
//! ```
//!
//! The condition is a constant, so clang emits only one arm: the original where the view's
//! element is as wide as `p`'s or does not divide it, the cast-first form otherwise. `e` is still
//! evaluated once. In `__local` views the scaled offset gets `LOCAL_ZERO` (a constant offset
//! made clspv loop for ever). `(T *)&root[i].m` (`member_edit`) and `(T *)m` of a pointer
//! declared once from such a chain (`earlier_edit`) become `(T *)root` plus a byte offset.
//! Casts inside preprocessor lines, and ones whose operand has a lower precedence operator than
//! `+` at its top level, a comment, or a postfix operator after it, are left alone. The rewrite keeps every line where it was (clspv's diagnostics name lines).

use std::borrow::Cow;
use std::collections::HashMap;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Ident,
    Number,
    Punct,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// Tokens of `src` outside comments, string and character literals and preprocessor lines.
fn tokens(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if line_start && c == b'#' {
            // The directive and its continuation lines.
            while i < b.len() && !(b[i] == b'\n' && b[i - 1] != b'\\') {
                i += 1;
            }
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i = src[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            line_start = false;
            let start = i;
            let kind = if c.is_ascii_alphabetic() || c == b'_' {
                Kind::Ident
            } else if c.is_ascii_digit() {
                Kind::Number
            } else {
                Kind::Punct
            };
            i += 1;
            if kind != Kind::Punct {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
                {
                    if kind == Kind::Ident && b[i] == b'.' {
                        break;
                    }
                    i += 1;
                }
            }
            out.push(Token {
                kind,
                start,
                end: i.min(b.len()),
            });
        }
    }
    out
}

const SCALARS: &[&str] = &[
    "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half",
];
const OTHER_TYPES: &[&str] = &[
    "bool",
    "unsigned",
    "signed",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "void",
];
/// Words after which an identifier names a type: the tags, and the qualifiers (so that a type
/// from a macro, `__global T *p`, is seen too).
const TYPE_PREFIXES: &[&str] = &[
    "struct",
    "union",
    "enum",
    "const",
    "volatile",
    "__global",
    "global",
    "__local",
    "local",
    "__constant",
    "constant",
    "__private",
    "private",
    "__generic",
    "generic",
];
const QUALIFIERS: &[&str] = &["const", "restrict", "volatile", "__restrict"];

fn is_builtin_type(w: &str) -> bool {
    OTHER_TYPES.contains(&w)
        || SCALARS.iter().any(|s| {
            w.strip_prefix(s)
                .is_some_and(|n| ["", "2", "3", "4", "8", "16"].contains(&n))
        })
}

struct Source<'a> {
    src: &'a str,
    toks: Vec<Token>,
}

impl<'a> Source<'a> {
    fn text(&self, i: usize) -> &'a str {
        self.toks.get(i).map_or("", |t| &self.src[t.start..t.end])
    }

    fn is(&self, i: usize, s: &str) -> bool {
        self.text(i) == s
    }

    /// Names given by `typedef ... NAME;`.
    fn typedefs(&self) -> Vec<&'a str> {
        let mut names = vec![];
        for i in 0..self.toks.len() {
            if self.is(i, "typedef") {
                let mut depth = 0;
                let mut j = i + 1;
                while j < self.toks.len() && !(depth == 0 && self.is(j, ";")) {
                    match self.text(j) {
                        "{" | "(" | "[" => depth += 1,
                        "}" | ")" | "]" => depth -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                if j > 0 && self.toks[j - 1].kind == Kind::Ident {
                    names.push(self.text(j - 1));
                }
            }
        }
        names
    }

    /// For each declared identifier: whether every declaration of it is a pointer or an
    /// array of a non-void element.
    fn pointers(&self) -> HashMap<&'a str, bool> {
        let mut seen: HashMap<&str, bool> = HashMap::new();
        for (j, ok) in self.declarations() {
            let entry = seen.entry(self.text(j)).or_insert(ok);
            *entry &= ok;
        }
        seen
    }

    /// The token of each declared identifier, and whether that declaration is of a pointer
    /// or an array of a non-void element.
    fn declarations(&self) -> Vec<(usize, bool)> {
        let typedefs = self.typedefs();
        let is_type = |i: usize| {
            let w = self.text(i);
            self.toks.get(i).is_some_and(|t| t.kind == Kind::Ident)
                && (is_builtin_type(w)
                    || typedefs.contains(&w)
                    || (i > 0 && TYPE_PREFIXES.contains(&self.text(i - 1))))
        };
        let mut decls = vec![];
        for i in 0..self.toks.len() {
            if !is_type(i) {
                continue;
            }
            let void = self.is(i, "void");
            let mut j = i + 1;
            let mut stars = 0;
            while QUALIFIERS.contains(&self.text(j)) || self.is(j, "*") {
                stars += self.is(j, "*") as usize;
                j += 1;
            }
            if self.toks.get(j).is_none_or(|t| t.kind != Kind::Ident) || is_type(j) {
                continue;
            }
            let after = self.text(j + 1);
            let pointer = match after {
                "[" => true,
                "," | ")" | "=" | ";" => stars > 0,
                _ => continue,
            };
            decls.push((j, pointer && !void && stars <= 1));
        }
        decls
    }

    /// Index of the token closing the bracket opened at `open`.
    fn closing(&self, open: usize) -> Option<usize> {
        let mut depth = 0;
        for j in open..self.toks.len() {
            match self.text(j) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Whether tokens `from..to` are an operand of `+` that needs no parentheses beyond its
    /// own: no operator of lower precedence than the additive ones at its top level.
    fn is_additive_operand(&self, from: usize, to: usize) -> bool {
        let mut depth = 0;
        for j in from..to {
            match self.text(j) {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                "," | "?" | ":" | "=" | "<" | ">" | "|" | "&" | "^" | "!" | ";" | "{" | "}"
                    if depth == 0 =>
                {
                    return false
                }
                _ => {}
            }
        }
        from < to
    }

    /// Whether token `i` follows an expression with a postfix operator (which would bind
    /// tighter than the cast in front of it).
    fn postfix_at(&self, i: usize) -> bool {
        let next = self.text(i + 1);
        matches!(self.text(i), "[" | "(" | ".")
            || (self.is(i, "-") && [">", "-"].contains(&next))
            || (self.is(i, "+") && next == "+")
    }
}

/// A cast `( words * )` starting at token `i`: the index of its `)`.
fn cast_at(s: &Source, i: usize) -> Option<usize> {
    if !s.is(i, "(") {
        return None;
    }
    let mut j = i + 1;
    while s.toks.get(j)?.kind == Kind::Ident {
        j += 1;
    }
    (j > i + 1 && s.is(j, "*") && s.is(j + 1, ")")).then_some(j + 1)
}

struct Edit {
    start: usize,
    end: usize,
    text: String,
}

/// The edit for the cast whose `(` is token `i`, if it is one of the rewritten forms.
fn edit_at(s: &Source, names: &Names, i: usize) -> Option<Edit> {
    let close = cast_at(s, i)?;
    let src = s.src;
    let cast = &src[s.toks[i].start..s.toks[close].end];
    let (p, sign, e_from, e_to, last) = if s.is(close + 1, "(") {
        let end = s.closing(close + 1)?;
        let sign = s.text(close + 3);
        if !(sign == "+" || sign == "-") || s.is(close + 4, sign) {
            return None;
        }
        // p - a + b is p + (-a + b): only a single subtraction.
        if sign == "-" && !s.is_additive_operand_without_sign(close + 4, end) {
            return None;
        }
        (close + 2, sign, close + 4, end, end)
    } else if s.is(close + 1, "&")
        && s.is(close + 3, "[")
        && !s.postfix_at(s.closing(close + 3)? + 1)
    {
        let end = s.closing(close + 3)?;
        (close + 2, "+", close + 4, end, end)
    } else if s.is(close + 1, "&") {
        return member_edit(s, names, i, close);
    } else if s.toks.get(close + 1)?.kind == Kind::Ident {
        return earlier_edit(s, names, i, close);
    } else {
        return None;
    };
    // clspv 0.0.1 never finishes compiling a constant offset into a __local word view,
    // `(__local int *)lds + 6`, which the rewrite would make of `(__local int *)(lds + 3)`:
    // the offset gets LOCAL_ZERO.
    let local = s.toks[i + 1..close]
        .iter()
        .any(|t| ["__local", "local"].contains(&&src[t.start..t.end]));
    let zero = if local { LOCAL_ZERO } else { "" };
    if s.toks[p].kind != Kind::Ident
        || names.pointers.get(s.text(p)) != Some(&true)
        || !s.is_additive_operand(e_from, e_to)
        || s.postfix_at(last + 1)
    {
        return None;
    }
    let start = s.toks[i].start;
    let end = s.toks[last].end;
    let span = &src[start..end];
    if has_comment_or_directive(span) {
        return None;
    }
    let p = s.text(p);
    let e = &src[s.toks[e_from].start..s.toks[e_to - 1].end];
    let e = if sign == "-" {
        format!("-({e})")
    } else {
        format!("({e})")
    };
    let view = format!("sizeof(*{cast}0)");
    let text = format!(
        "(sizeof(*({p})) <= {view} || sizeof(*({p})) % {view} ? {cast}(({p}) + {e}) \
         : {cast}({p}) + ({e} * (int)(sizeof(*({p})) / {view}){zero}))"
    );
    // Same lines as before: the span's line breaks after the rewritten text.
    let lines = span.matches('\n').count();
    let text = text.replace('\n', " ") + &"\n".repeat(lines);
    Some(Edit { start, end, text })
}

/// The address space word of the cast whose tokens are `open..close`.
fn address_space<'a>(s: &Source<'a>, open: usize, close: usize) -> Option<&'a str> {
    const SPACES: [&str; 6] = [
        "__global",
        "global",
        "__local",
        "local",
        "__constant",
        "constant",
    ];
    (open + 1..close)
        .map(|j| s.text(j))
        .find(|w| SPACES.contains(w))
}

/// Whether a span holds a comment or a preprocessor line (left as written).
fn has_comment_or_directive(span: &str) -> bool {
    span.contains("//") || span.contains("/*") || span.contains('#')
}

/// Added to the index of a `__local` view taken from its array: a zero that LLVM cannot fold.
/// clspv 0.0.1 never finishes compiling a view at a constant offset into a `__local` array
/// (`(__local int *)lds + 6`, `((__local uint *)ld)[21]`: SimplifyPointerBitcast loops on the
/// constant expression `getelementptr (i32, @lds, 6)`), and compiles the same view right at an
/// offset computed at run time.
const LOCAL_ZERO: &str = " + (int)(get_local_id(0) >> 31)";

/// The zero added to a view's index in address space `space` (without underscores).
fn opaque_zero(space: &str) -> &'static str {
    if space == "local" {
        LOCAL_ZERO
    } else {
        ""
    }
}

/// `&root[i][j].m` (or `&(...)`) from its `&`, token `amp`: the root's token and the chain's
/// last token, where the root is declared only as a pointer or an array and the chain has no
/// assignment, increment or call.
fn member_chain(s: &Source, names: &Names, amp: usize) -> Option<(usize, usize)> {
    if !s.is(amp, "&") {
        return None;
    }
    let paren = s.is(amp + 1, "(");
    let root = amp + 1 + paren as usize;
    if s.toks.get(root)?.kind != Kind::Ident || names.pointers.get(s.text(root)) != Some(&true) {
        return None;
    }
    let mut j = root + 1;
    loop {
        if s.is(j, "[") {
            j = s.closing(j)? + 1;
        } else if s.is(j, ".") && s.toks.get(j + 1)?.kind == Kind::Ident {
            j += 2;
        } else {
            break;
        }
    }
    let last = if paren { j } else { j - 1 };
    if j == root + 1 || (paren && !s.is(j, ")")) || s.postfix_at(last + 1) {
        return None;
    }
    let pure = (root..last).all(|k| {
        let (w, next) = (s.text(k), s.text(k + 1));
        let assigns = w == "=" && !["=", "!", "<", ">"].contains(&s.text(k - 1)) && next != "=";
        !assigns
            && !((w == "+" || w == "-") && next == w)
            && !(s.toks[k].kind == Kind::Ident && next == "(")
    });
    pure.then_some((root, last))
}

/// `(T *)&root[i][j].m` (or `&(...)`): the address of a part of an element, viewed as T,
/// becomes `(T *)root` plus the part's byte offset from `root` in units of T. clspv drops the
/// view's words within the part (pyopencl's scan: `(__local int *)&(ldata[i][j].value)` of a
/// packed struct's ulong member) and folds the offset `(char *)&part - (char *)root` into
/// index arithmetic. A misaligned view is undefined in OpenCL C (6.3.5), so the division is
/// exact. It divides in 32 bits (`uint`): in physical-addressing builds (64-bit `ptrdiff_t`
/// and `size_t`) a 64-bit division made clspv take the word within each struct of a
/// `__local` array as the byte offset modulo the struct's words. The chain is written twice:
/// it must have no side effects. In `__local` memory the offset gets [`LOCAL_ZERO`] (constant
/// indices, `&ld[1][2].v`, made clspv loop).
fn member_edit(s: &Source, names: &Names, i: usize, close: usize) -> Option<Edit> {
    let (root, last) = member_chain(s, names, close + 1)?;
    let space = address_space(s, i, close)?.trim_start_matches('_');
    let src = s.src;
    let (start, end) = (s.toks[i].start, s.toks[last].end);
    let span = &src[start..end];
    if has_comment_or_directive(span) {
        return None;
    }
    let cast = &src[start..s.toks[close].end];
    let part = &src[s.toks[close + 1].start..end];
    let r = s.text(root);
    let zero = opaque_zero(space);
    // Views as wide as the member (an int of an int member) stay as written.
    let text = format!(
        "(sizeof(*({part})) <= sizeof(*{cast}0) ? {span} \
         : ({cast}{r} + ((int)((uint)((__{space} char *){part} - (__{space} char *){r}) \
         / (uint)sizeof(*{cast}0)){zero})))"
    );
    let lines = span.matches('\n').count();
    Some(Edit {
        start,
        end,
        text: text.replace('\n', " ") + &"\n".repeat(lines),
    })
}

/// `(T *)m` where `m` was declared once, `S *m = &root[i][j].m;` (a chain as in
/// [`member_edit`]), and is never assigned, incremented or has its address taken: clspv drops
/// the view's words within `*m` as it does for the chain written in place (every view of a
/// packed struct's ulong member read its low word). It becomes `(T *)root` plus `m`'s byte
/// offset from `root` in units of T, under the same condition on the sizes.
fn earlier_edit(s: &Source, names: &Names, i: usize, close: usize) -> Option<Edit> {
    let m = close + 1;
    let name = s.text(m);
    if s.postfix_at(m + 1) || (i + 1..close).any(|k| s.is(k, "void")) {
        return None;
    }
    let [decl] = names.declared.get(name)?.as_slice() else {
        return None;
    };
    let decl = *decl;
    if !s.is(decl + 1, "=") || s.is(decl + 2, "=") {
        return None;
    }
    let (root, last) = member_chain(s, names, decl + 2)?;
    if !(s.is(last + 1, ";") || s.is(last + 1, ",")) || written(s, name, decl) {
        return None;
    }
    let space = address_space(s, i, close)?.trim_start_matches('_');
    let src = s.src;
    let cast = &src[s.toks[i].start..s.toks[close].end];
    let r = s.text(root);
    let zero = opaque_zero(space);
    let text = format!(
        "(sizeof(*({name})) <= sizeof(*{cast}0) ? {cast}{name} \
         : ({cast}{r} + ((int)((uint)((__{space} char *){name} - (__{space} char *){r}) \
         / (uint)sizeof(*{cast}0)){zero})))"
    );
    Some(Edit {
        start: s.toks[i].start,
        end: s.toks[m].end,
        text,
    })
}

/// Whether identifier `name` is written anywhere but in its declaration at token `decl`:
/// assigned (`=`, `+=`, `<<=`, ...), incremented, decremented, or its address taken (a
/// conservative reading: every occurrence of the name counts, whatever its scope).
fn written(s: &Source, name: &str, decl: usize) -> bool {
    const ASSIGNMENTS: &[&str] = &[
        "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
    ];
    let spells = |from: usize, op: &str| {
        op.chars()
            .enumerate()
            .all(|(n, c)| s.text(from + n).len() == 1 && s.text(from + n).starts_with(c))
    };
    (0..s.toks.len()).any(|k| {
        k != decl
            && s.toks[k].kind == Kind::Ident
            && s.text(k) == name
            && (ASSIGNMENTS
                .iter()
                .any(|op| spells(k + 1, op) && !s.is(k + 1 + op.len(), "="))
                || spells(k + 1, "++")
                || spells(k + 1, "--")
                || (k >= 2 && (spells(k - 2, "++") || spells(k - 2, "--")))
                || (k >= 1 && s.is(k - 1, "&") && !(k >= 2 && s.is(k - 2, "&"))))
    })
}

/// What the source declares: identifiers declared only as pointers or arrays, and each
/// identifier's declarations (their tokens).
struct Names<'a> {
    pointers: HashMap<&'a str, bool>,
    declared: HashMap<&'a str, Vec<usize>>,
}

impl Source<'_> {
    fn is_additive_operand_without_sign(&self, from: usize, to: usize) -> bool {
        let mut depth = 0;
        for j in from..to {
            match self.text(j) {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                "+" | "-" if depth == 0 && j > from => return false,
                _ => {}
            }
        }
        true
    }
}

/// `src` with every cast of the forms above rewritten; `None` when there is none.
pub fn rewrite(src: &str) -> Option<String> {
    if !src.contains('*') {
        return None;
    }
    let s = Source {
        src,
        toks: tokens(src),
    };
    let mut declared: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, _) in s.declarations() {
        declared.entry(s.text(j)).or_default().push(j);
    }
    let names = Names {
        pointers: s.pointers(),
        declared,
    };
    let mut edits = vec![];
    let mut i = 0;
    while i < s.toks.len() {
        match edit_at(&s, &names, i) {
            Some(edit) => {
                let end = edit.end;
                edits.push(edit);
                while i < s.toks.len() && s.toks[i].start < end {
                    i += 1;
                }
            }
            None => i += 1,
        }
    }
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(src.len() + edits.len() * 128);
    let mut at = 0;
    for e in edits {
        out.push_str(&src[at..e.start]);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&src[at..]);
    Some(out)
}

/// [`rewrite`] over OpenCL C sources (not LLVM IR ones).
pub fn rewrite_all<'a>(sources: Vec<Cow<'a, [u8]>>, is_ir: bool) -> Vec<Cow<'a, [u8]>> {
    if is_ir {
        return sources;
    }
    sources
        .into_iter()
        .map(|s| match std::str::from_utf8(&s).ok().and_then(rewrite) {
            Some(r) => Cow::Owned(r.into_bytes()),
            None => s,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn rewrites_the_two_forms_on_declared_pointers() {
        let src = "typedef ulong T;\nvoid f(__global T *restrict o, int b) {\n\
                   __global int *d = (__global int *) (o + b);\n\
                   __global int *e = (__global int *)&o[b + 1];\n}";
        let out = rewrite(src).unwrap();
        assert_eq!(out.matches('\n').count(), src.matches('\n').count());
        assert!(
            out.contains("(__global int *)(o) + ((b) * (int)(sizeof(*(o))"),
            "{out}"
        );
        assert!(
            out.contains("(__global int *)(o) + ((b + 1) * (int)"),
            "{out}"
        );
        let src =
            "void f() { __local S d[2][3]; __local int *s = (__local int *) &(\n d[i][j].v);}";
        let out = rewrite(src).unwrap();
        assert_eq!(out.matches('\n').count(), 1);
        let want = "((__local int *)d + ((int)((uint)((__local char *)&(  d[i][j].v) - \
                    (__local char *)d) / (uint)sizeof(*(__local int *)0)) + (int)(get_local_id(0) >> 31)))";
        assert!(out.contains(want), "{out}");
    }

    #[test]
    fn rewrites_views_of_a_pointer_taken_earlier() {
        let src = "void f(__global S *a, int i) {\n\
                   __global ulong *m = &a[i].v;\n\
                   __global uint *s = (__global uint *)m;\n}";
        let out = rewrite(src).unwrap();
        let want = "(sizeof(*(m)) <= sizeof(*(__global uint *)0) ? (__global uint *)m : \
                    ((__global uint *)a + ((int)((uint)((__global char *)m - (__global char *)a) \
                    / (uint)sizeof(*(__global uint *)0)))))";
        assert!(out.contains(want), "{out}");
        for src in [
            // assigned again, incremented, address taken
            "void f(__global S *a) { __global ulong *m = &a[0].v; m = 0; int *s = (__global int *)m; }",
            "void f(__global S *a) { __global ulong *m = &a[0].v; m += 1; int *s = (__global int *)m; }",
            "void f(__global S *a) { __global ulong *m = &a[0].v; m++; int *s = (__global int *)m; }",
            "void f(__global S *a) { __global ulong *m = &a[0].v; g(&m); int *s = (__global int *)m; }",
            // declared twice
            "void f(__global S *a) { __global ulong *m = &a[0].v; int *s = (__global int *)m; }\n\
             void g(__global S *a) { __global ulong *m = &a[1].v; }",
            // not from a member chain, a postfix after it, a void view
            "void f(__global ulong *a) { __global ulong *m = a; int *s = (__global int *)m; }",
            "void f(__global S *a) { __global ulong *m = &a[0].v; int s = (__global int *)m[1]; }",
            "void f(__global S *a) { __global ulong *m = &a[0].v; void *s = (__global void *)m; }",
        ] {
            assert_eq!(rewrite(src), None, "{src}");
        }
        // Still read: a comparison, a logical and.
        let src = "void f(__global S *a) { __global ulong *m = &a[0].v; \
                   if (m == a && m <= a) { int *s = (__global int *)m; } }";
        assert!(rewrite(src).is_some());
    }

    #[test]
    fn leaves_other_shapes_alone() {
        for src in [
            // not a pointer by its declaration
            "void f(int o, int b) { __global int *d = (__global int *)(o + b); }",
            // declared both ways
            "void f(__global long *o) {} void g(int o) { int *d = (int *)(o + 1); }",
            // postfix binds tighter than the cast
            "void f(__global long *o) { int d = (__global int *)(o + 1)[2]; }",
            // a comparison inside
            "void f(__global long *o, int a) { int *d = (__global int *)(o + a < 3); }",
            // void pointer
            "void f(__global void *o) { __global int *d = (__global int *)(o + 4); }",
            // p - a + b
            "void f(__global long *o, int a) { __global int *d = (__global int *)(o - a + 1); }",
            // in a macro
            "#define V(o, b) (__global int *)(o + b)\nvoid f(__global long *o) {}",
        ] {
            assert_eq!(rewrite(src), None, "{src}");
        }
    }
}
