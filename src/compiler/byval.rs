//! By-value kernel arguments of a type holding a union, rewritten in the source so that clspv's
//! front end takes them.
//!
//! clspv checks every by-value kernel parameter against the Vulkan block-layout rules, walking a
//! record's members as if they were laid out one after the other. In a union they all start at
//! offset 0, so a union with a struct or array member before its last one (pyopencl's `cfloat_t`,
//! `union { struct { float x, y; }; struct { float real, imag; }; }`) is refused: "a structure
//! member must not be placed between the end of a structure or array and the next multiple of
//! the base alignment" ([`REFUSED`]), whatever the POD options (`-cluster-pod-kernel-args=0`,
//! `-pod-ubo`, `-pod-pushconstant`, `-std430-ubo-layout`; `-scalar-block-layout` is unimplemented
//! in clspv 0.0.1). Nothing is wrong with the layout itself: each argument is set on its own and
//! the runtime copies its bytes at the offset the reflection gives, and inside the kernel the
//! union is an ordinary private value.
//!
//! So every by-value parameter of a refused type `T` ([`refused_type`], from the diagnostic's
//! location) is declared with a stand-in of the same size, `typedef struct { unsigned int
//! w[sizeof(T) / 4]; } __vkcl_byval_<T encoded>` (shorts or chars where `T`'s size or alignment
//! needs them), defined before the kernel, and renamed `__vkcl_byval_<name>`; the body starts by
//! declaring the parameter again under its own name and type, from the stand-in's bytes
//! ([`wrap`]). The host's bytes reach the kernel unchanged. The argument info reports `T` and the
//! name ([`arg_info`]). Insertions stay on their lines, so diagnostics keep their line numbers.
//! Only programs clspv refuses are rewritten: the others reach clspv as before. Pointers to `T`
//! are left to `-rewrite-packed-structs`, which turns that check off (compiler::compile): cast
//! from stand-in pointers, clspv hung on some of pyopencl's kernels copying such records from
//! `__local` memory.

use super::pipes::{decode_type, encode_type, tokenize, Kind, Token};
use super::reflection::ArgInfo;

/// clspv's message for a record layout it refuses.
pub const REFUSED: &str = "must not be placed between the end of a structure";

/// The stand-in typedefs' prefix.
const PREFIX: &str = "__vkcl_byval_";

/// Type qualifiers a by-value parameter may carry (kept in place; not part of the type name).
const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "private",
    "__private",
];

/// Address spaces a pointer parameter may name.
const SPACES: &[&str] = &[
    "global",
    "__global",
    "constant",
    "__constant",
    "local",
    "__local",
    "generic",
    "__generic",
];

/// A kernel parameter of a named type, by value or through a pointer.
struct Param {
    /// Its tokens' indices: the type (without qualifiers) `ty.0..ty.1`, the name if any.
    first: usize,
    ty: (usize, usize),
    name: Option<usize>,
    last: usize,
    /// Passed through a pointer (`__global T *p`).
    pointer: bool,
}

/// A kernel declaration or definition.
struct KernelDecl {
    /// Where the declaration starts (byte offset): the stand-in typedefs go there.
    start: usize,
    params: Vec<Param>,
    /// The body's `{` and `}` token indices (none for a prototype).
    body: Option<(usize, usize)>,
}

struct Source<'a> {
    src: &'a str,
    toks: Vec<Token>,
}

impl<'a> Source<'a> {
    fn new(src: &'a str) -> Self {
        Source {
            src,
            toks: tokenize(src),
        }
    }

    fn text(&self, t: usize) -> &'a str {
        &self.src[self.toks[t].start..self.toks[t].end]
    }

    fn punct(&self, t: usize, c: u8) -> bool {
        self.toks.get(t).map(|t| t.kind) == Some(Kind::Punct(c))
    }

    /// The token after the group that opens at `open` (a `(` or `{`), and the closing token.
    fn close(&self, open: usize) -> Option<usize> {
        let (o, c) = match self.toks[open].kind {
            Kind::Punct(b'(') => (b'(', b')'),
            Kind::Punct(b'{') => (b'{', b'}'),
            _ => return None,
        };
        let mut depth = 0usize;
        for t in open..self.toks.len() {
            if self.punct(t, o) {
                depth += 1;
            } else if self.punct(t, c) {
                depth -= 1;
                if depth == 0 {
                    return Some(t);
                }
            }
        }
        None
    }

    /// Every kernel declared at file scope.
    fn kernels(&self) -> Vec<KernelDecl> {
        let mut out = vec![];
        let mut depth = 0usize;
        // The first token of the current file-scope declaration.
        let mut decl = 0;
        let mut t = 0;
        while t < self.toks.len() {
            let tok = self.toks[t];
            match tok.kind {
                Kind::Punct(b'{') | Kind::Punct(b'(') => depth += 1,
                Kind::Punct(b'}') | Kind::Punct(b')') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && tok.kind == Kind::Punct(b'}') {
                        decl = t + 1;
                    }
                }
                Kind::Punct(b';') if depth == 0 => decl = t + 1,
                Kind::Directive if depth == 0 => decl = t + 1,
                Kind::Ident if depth == 0 && matches!(self.text(t), "kernel" | "__kernel") => {
                    if let Some((k, next)) = self.kernel(decl, t) {
                        out.push(k);
                        decl = next;
                        t = next;
                        continue;
                    }
                }
                _ => {}
            }
            t += 1;
        }
        out
    }

    /// The kernel whose `kernel` keyword is token `kw`, in the declaration starting at token
    /// `decl`; and the token after it.
    fn kernel(&self, decl: usize, kw: usize) -> Option<(KernelDecl, usize)> {
        let mut t = kw + 1;
        // Up to the parameter list: attributes' parentheses are skipped.
        let open = loop {
            let tok = self.toks.get(t)?;
            match tok.kind {
                Kind::Ident if self.text(t).starts_with("__attribute") => {
                    t = self.close(t + 1)? + 1;
                    continue;
                }
                Kind::Punct(b'(') if t > kw + 1 && self.toks[t - 1].kind == Kind::Ident => break t,
                Kind::Punct(_) => return None,
                _ => t += 1,
            }
        };
        let close = self.close(open)?;
        let mut params = vec![];
        let mut first = open + 1;
        let mut depth = 0usize;
        for p in open + 1..=close {
            match self.toks[p].kind {
                Kind::Punct(b'(') => depth += 1,
                Kind::Punct(b')') if p < close => depth -= 1,
                Kind::Punct(b',') | Kind::Punct(b')') if depth == 0 => {
                    if let Some(param) = self.param(first, p) {
                        params.push(param);
                    }
                    first = p + 1;
                }
                _ => {}
            }
        }
        // After the list: attributes, then the body or the end of a prototype.
        let mut t = close + 1;
        while self
            .toks
            .get(t)
            .is_some_and(|_| self.text(t).starts_with("__attribute"))
        {
            t = self.close(t + 1)? + 1;
        }
        let body = if self.punct(t, b'{') {
            let end = self.close(t)?;
            Some((t, end))
        } else {
            None
        };
        let next = body.map_or(t, |(_, end)| end + 1);
        let start = self.toks[decl.min(kw)].start;
        Some((
            KernelDecl {
                start,
                params,
                body,
            },
            next,
        ))
    }

    /// The parameter of tokens `first..end`, if it is of a named type, by value or through one
    /// pointer.
    fn param(&self, first: usize, end: usize) -> Option<Param> {
        if first >= end {
            return None;
        }
        let mut names = vec![];
        let mut star = None;
        for t in first..end {
            match self.toks[t].kind {
                Kind::Ident if QUALIFIERS.contains(&self.text(t)) => {}
                Kind::Ident if SPACES.contains(&self.text(t)) => {}
                Kind::Ident => names.push(t),
                Kind::Other if self.text(t) == "*" && star.is_none() => star = Some(t),
                // Arrays, function types, attributes, pointers to pointers.
                _ => return None,
            }
        }
        let tagged = names
            .first()
            .is_some_and(|&t| matches!(self.text(t), "struct" | "union" | "enum"));
        let (ty, name) = match (tagged, names.as_slice()) {
            (false, [ty]) => ((*ty, *ty + 1), None),
            (false, [ty, name]) => ((*ty, *ty + 1), Some(*name)),
            (true, [kw, tag]) if *tag == *kw + 1 => ((*kw, *tag + 1), None),
            (true, [kw, tag, name]) if *tag == *kw + 1 => ((*kw, *tag + 1), Some(*name)),
            _ => return None,
        };
        if let Some(star) = star {
            if ty.1 > star || name.is_some_and(|n| n < star) {
                return None;
            }
        }
        Some(Param {
            first,
            ty,
            name,
            last: end - 1,
            pointer: star.is_some(),
        })
    }

    /// Tokens `a..=b` joined by single spaces.
    fn joined(&self, a: usize, b: usize) -> String {
        (a..=b).map(|t| self.text(t)).collect::<Vec<_>>().join(" ")
    }

    fn type_of(&self, p: &Param) -> String {
        self.joined(p.ty.0, p.ty.1 - 1)
    }
}

/// From clspv's log: the type (as written, tokens joined by single spaces) of the by-value
/// kernel parameter of `src` that clspv refused first, if the refusal names one.
pub fn refused_type(src: &str, log: &str) -> Option<String> {
    // "source:LINE:COL: error: a structure member must not be placed between the end ..."
    let line = log
        .lines()
        .find(|l| l.contains(REFUSED) && l.contains("error:"))?;
    let at = line.find("source:")? + "source:".len();
    let mut nums = line[at..].splitn(3, ':');
    let row: usize = nums.next()?.parse().ok()?;
    let col: usize = nums.next()?.parse().ok()?;
    let line_start = match row {
        0 => return None,
        1 => 0,
        _ => src.match_indices('\n').nth(row - 2)?.0 + 1,
    };
    let offset = line_start + col.checked_sub(1)?;
    let s = Source::new(src);
    s.kernels()
        .iter()
        .flat_map(|k| &k.params)
        .find(|p| p.name.is_some() && !p.pointer && s.toks[p.first].start == offset)
        .map(|p| s.type_of(p))
}

/// `src` with every by-value kernel parameter of a type in `types` passed through a stand-in
/// (see the module comment).
pub fn wrap(src: &str, types: &[String]) -> String {
    let s = Source::new(src);
    // (byte offset, bytes replaced, text): applied from the end.
    let mut edits: Vec<(usize, usize, String)> = vec![];
    let mut defined: Vec<String> = vec![];
    const PUSH: &str = "_Pragma(\"clang diagnostic push\") \
                        _Pragma(\"clang diagnostic ignored \\\"-Wreserved-identifier\\\"\") \
                        _Pragma(\"clang diagnostic ignored \\\"-Wgnu-statement-expression\\\"\") ";
    const POP: &str = "_Pragma(\"clang diagnostic pop\") ";
    for k in s.kernels() {
        let mut typedefs = String::new();
        let mut locals = String::new();
        for p in k.params.iter().filter(|p| !p.pointer) {
            let ty = s.type_of(p);
            if !types.contains(&ty) {
                continue;
            }
            let stand_in = format!("{PREFIX}{}", encode_type(&ty));
            if !defined.contains(&ty) {
                typedefs += &typedef(&ty, &stand_in);
                defined.push(ty.clone());
            }
            let (a, b) = (s.toks[p.ty.0].start, s.toks[p.ty.1 - 1].end);
            edits.push((a, b - a, stand_in.clone()));
            if let (Some(name), Some(_)) = (p.name, k.body) {
                // The parameter is renamed and declared again under its name at the top of the
                // body (the outermost block, where `__local` declarations must stay), from the
                // stand-in's bytes: a union of the two, or a load of one type from the other's
                // memory, leaves LLVM a mixed-type memcpy that clspv crashes on for some records.
                let n = s.text(name);
                let t = s.toks[name];
                edits.push((t.start, t.end - t.start, format!("{PREFIX}{n}")));
                locals += &format!(
                    "{} = ({{ {ty} __vkcl_v; __builtin_memcpy(&__vkcl_v, &{PREFIX}{n}, \
                     sizeof(__vkcl_v)); __vkcl_v; }}); ",
                    s.joined(p.first, p.last)
                );
            }
        }
        if !typedefs.is_empty() {
            edits.push((k.start, 0, format!("{PUSH}{typedefs}{POP}")));
        }
        if let (false, Some((open, _))) = (locals.is_empty(), k.body) {
            edits.push((s.toks[open].end, 0, format!(" {PUSH}{locals}{POP}")));
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = src.to_string();
    for (at, len, text) in edits {
        out.replace_range(at..at + len, &text);
    }
    out
}

/// The stand-in for `ty`: as many of the widest of unsigned int, short and char as make up its
/// size where its size and alignment allow that width.
fn typedef(ty: &str, name: &str) -> String {
    let word = format!(
        "__typeof__(__builtin_choose_expr(sizeof({ty}) % 4 == 0 && __alignof__({ty}) >= 4, \
         (unsigned int)0, __builtin_choose_expr(sizeof({ty}) % 2 == 0 && \
         __alignof__({ty}) >= 2, (unsigned short)0, (unsigned char)0)))"
    );
    format!("typedef struct {{ {word} w[sizeof({ty}) / sizeof({word})]; }} {name}; ")
}

/// A kernel argument's info as clspv reports it, with a stand-in's type name replaced by the
/// type it stands for.
pub fn arg_info(mut info: ArgInfo) -> ArgInfo {
    if let Some(ty) = info.type_name.strip_prefix(PREFIX).and_then(decode_type) {
        info.type_name = ty;
        if let Some(name) = info.name.strip_prefix(PREFIX) {
            info.name = name.to_string();
        }
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "typedef union { struct { float x, y; } s; float2 v; } cfloat_t;\n\
        __kernel void k(__global cfloat_t *o, const cfloat_t a,\n    float b, union u c) { o[0].s.x = a.s.x + b; }\n\
        kernel void p(cfloat_t, float *);\n";

    #[test]
    fn finds_the_refused_parameter() {
        let log = "source:2:39: error: a structure member must not be placed between the end \
                   of a structure or array and the next multiple of the base alignment\n";
        assert_eq!(refused_type(SRC, log).as_deref(), Some("cfloat_t"));
        let log = log.replace("2:39", "3:14");
        assert_eq!(refused_type(SRC, &log).as_deref(), Some("union u"));
        let log = log.replace("3:14", "2:17");
        assert_eq!(
            refused_type(SRC, &log),
            None,
            "a pointer: left to the rewrite"
        );
        let log = log.replace("2:17", "2:20");
        assert_eq!(refused_type(SRC, &log), None);
    }

    #[test]
    fn wraps_parameters_and_keeps_lines() {
        let out = wrap(SRC, &["cfloat_t".into()]);
        assert_eq!(out.lines().count(), SRC.lines().count());
        assert_eq!(out.matches("typedef struct").count(), 1);
        assert!(
            out.contains("k(__global cfloat_t *o, const __vkcl_byval_cfloat_5ft __vkcl_byval_a,"),
            "{out}"
        );
        assert!(
            out.contains(
                "const cfloat_t a = ({ cfloat_t __vkcl_v; __builtin_memcpy(&__vkcl_v, \
                 &__vkcl_byval_a, sizeof(__vkcl_v)); __vkcl_v; }); "
            ),
            "{out}"
        );
        assert!(
            out.contains("void p(__vkcl_byval_cfloat_5ft, float *)"),
            "{out}"
        );
        assert!(out.contains("union u c)"), "{out}");
        assert!(
            out.ends_with(
                "o[0].s.x = a.s.x + b; }\nkernel void p(__vkcl_byval_cfloat_5ft, float *);\n"
            ),
            "{out}"
        );
        assert_eq!(wrap(SRC, &[]), SRC);
    }
}
