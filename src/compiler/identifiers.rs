//! The identifiers a program's text may name, for choosing the prelude's parts: a built-in of
//! vkcl's own is put before a program only where its name is one of them.
//!
//! The sources, the bodies of the build options' `-D` definitions (`-DF(x)=sin(x)` names
//! `sin`) and the headers they include are tokenised once, as clang's translation phases 1-3
//! see them: lines spliced at a backslash, comments, string and character literals and
//! preprocessing numbers (`0x1p-3f`) skipped. A name split by token pasting (`s ## in`) is not
//! seen; where a text pastes (`##`), a name counts that is part of any identifier
//! (`half_ ## sin` from `half_` and `sin` is seen, and so is `CAT(native_, sin)`).
//!
//! An include the tokeniser cannot follow (a header in none of the `-I` folders, `#include
//! MACRO`, `#include_next`, `#import`, more than [`MAX_HEADERS`] headers) makes every name
//! count: the header may name anything.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Most headers read for one program; beyond them every name counts.
const MAX_HEADERS: usize = 256;
/// Largest header read (bytes); a larger one makes every name count.
const MAX_HEADER_BYTES: u64 = 16 << 20;

/// The identifiers of a program (see the module's comment).
#[derive(Debug, Default)]
pub struct Identifiers {
    set: HashSet<Vec<u8>>,
    /// Some text pastes tokens (`##`).
    pasted: bool,
    /// An include could not be followed: every name counts.
    everything: bool,
}

impl Identifiers {
    /// The identifiers of `sources`, of the `-D` definitions in `clspv_args` and of the
    /// headers they include (searched in the `-I` folders of `clspv_args`, and for a quoted
    /// include from a header in that header's folder first, as clang does).
    pub fn of(sources: &[&[u8]], clspv_args: &[String]) -> Identifiers {
        let mut ids = Identifiers::default();
        let dirs = super::include_dirs(clspv_args);
        let mut pending: Vec<(Include, Option<PathBuf>)> = vec![];
        for s in sources {
            pending.extend(ids.add(s).into_iter().map(|i| (i, None)));
        }
        for def in defines(clspv_args) {
            pending.extend(ids.add(def.as_bytes()).into_iter().map(|i| (i, None)));
        }
        let mut read: HashSet<PathBuf> = HashSet::new();
        while let Some((include, from)) = pending.pop() {
            let Some(path) = resolve(&include, from.as_deref(), &dirs) else {
                ids.everything = true;
                break;
            };
            if !read.insert(path.clone()) {
                continue;
            }
            let text = match std::fs::metadata(&path) {
                Ok(m) if m.len() <= MAX_HEADER_BYTES && read.len() <= MAX_HEADERS => {
                    std::fs::read(&path).ok()
                }
                _ => None,
            };
            let Some(text) = text else {
                ids.everything = true;
                break;
            };
            let folder = path.parent().map(Path::to_path_buf);
            pending.extend(ids.add(&text).into_iter().map(|i| (i, folder.clone())));
        }
        ids
    }

    /// Whether the program may name `name` (an identifier).
    pub fn has(&self, name: &[u8]) -> bool {
        if self.everything || self.set.contains(name) {
            return true;
        }
        self.pasted
            && self
                .set
                .iter()
                .any(|id| id.len() > name.len() && id.windows(name.len()).any(|w| w == name))
    }

    /// Adds the identifiers of `text`; returns its includes.
    fn add(&mut self, text: &[u8]) -> Vec<Include> {
        let spliced;
        let text = if text.contains(&b'\\') {
            spliced = splice(text);
            &spliced
        } else {
            text
        };
        let t = tokenise(text);
        self.pasted |= t.pasted;
        self.everything |= t.unfollowable;
        self.set
            .extend(t.identifiers.into_iter().map(<[u8]>::to_vec));
        t.includes
    }
}

/// An `#include` directive's header name.
#[derive(Debug, PartialEq, Eq)]
enum Include {
    /// `#include "name"`.
    Quoted(String),
    /// `#include <name>`.
    Angled(String),
}

/// The header an include names: for a quoted one from a header, in that header's folder
/// first; then in the `-I` folders in order. An absolute name is itself.
fn resolve(include: &Include, from: Option<&Path>, dirs: &[PathBuf]) -> Option<PathBuf> {
    let (name, here) = match include {
        Include::Quoted(n) => (n, from),
        Include::Angled(n) => (n, None),
    };
    let name = Path::new(name);
    if name.is_absolute() {
        return name.is_file().then(|| name.to_path_buf());
    }
    here.into_iter()
        .chain(dirs.iter().map(PathBuf::as_path))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The texts of the `-D` definitions (`NAME(params)=BODY` whole: the body is what names
/// things).
fn defines(clspv_args: &[String]) -> Vec<&str> {
    let mut out = vec![];
    let mut it = clspv_args.iter();
    while let Some(a) = it.next() {
        match a.strip_prefix("-D") {
            Some("") => out.extend(it.next().map(String::as_str)),
            Some(d) => out.push(d),
            None => {}
        }
    }
    out
}

/// `text` with each backslash-newline removed (translation phase 2).
fn splice(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\\' {
            let rest = &text[i + 1..];
            let skip = match rest {
                [b'\n', ..] => 1,
                [b'\r', b'\n', ..] => 2,
                _ => 0,
            };
            if skip > 0 {
                i += 1 + skip;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// What one text holds.
#[derive(Default)]
struct Tokens<'a> {
    identifiers: Vec<&'a [u8]>,
    includes: Vec<Include>,
    pasted: bool,
    /// An include the tokeniser cannot follow.
    unfollowable: bool,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_ident(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

/// The identifiers, includes and pastes of a spliced text.
fn tokenise(text: &[u8]) -> Tokens<'_> {
    let mut t = Tokens::default();
    let n = text.len();
    let mut i = 0;
    // Only white space (or comments) since the last newline: a `#` there starts a directive.
    let mut line_start = true;
    while i < n {
        let c = text[i];
        match c {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => {
                i += 1;
                continue;
            }
            b'/' if text.get(i + 1) == Some(&b'*') => {
                i = find(text, i + 2, b"*/").map_or(n, |e| e + 2);
                continue;
            }
            b'/' if text.get(i + 1) == Some(&b'/') => {
                i = find(text, i + 2, b"\n").unwrap_or(n);
                continue;
            }
            _ => {}
        }
        let at_line_start = std::mem::replace(&mut line_start, false);
        match c {
            b'"' | b'\'' => i = literal_end(text, i),
            b'#' if text.get(i + 1) == Some(&b'#') => {
                t.pasted = true;
                i += 2;
            }
            b'#' if at_line_start => i = directive(text, i + 1, &mut t),
            b'0'..=b'9' => i = number_end(text, i),
            b'.' if text.get(i + 1).is_some_and(u8::is_ascii_digit) => i = number_end(text, i),
            c if is_ident_start(c) => {
                let e = ident_end(text, i);
                t.identifiers.push(&text[i..e]);
                i = e;
            }
            _ => i += 1,
        }
    }
    t
}

fn find(text: &[u8], from: usize, what: &[u8]) -> Option<usize> {
    text.get(from..)?
        .windows(what.len())
        .position(|w| w == what)
        .map(|p| p + from)
}

fn ident_end(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && is_ident(text[i]) {
        i += 1;
    }
    i
}

/// The end of a preprocessing number starting at `i`: digits, identifier characters, `.`,
/// and a sign after an exponent letter.
fn number_end(text: &[u8], mut i: usize) -> usize {
    while i < text.len() {
        let c = text[i];
        let sign = matches!(c, b'+' | b'-') && matches!(text[i - 1], b'e' | b'E' | b'p' | b'P');
        if !(sign || is_ident(c) || c == b'.') {
            break;
        }
        i += 1;
    }
    i
}

/// The end of the string or character literal opening at `i` (at its closing quote, or at the
/// end of the line where it has none).
fn literal_end(text: &[u8], i: usize) -> usize {
    let quote = text[i];
    let mut j = i + 1;
    while j < text.len() {
        match text[j] {
            b'\\' => j += 2,
            b'\n' => return j,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    text.len()
}

/// A directive after its `#` at `i`: an include is recorded (its name is not an identifier);
/// another directive's words are tokenised as usual. Returns where tokenising goes on.
fn directive<'a>(text: &'a [u8], mut i: usize, t: &mut Tokens<'a>) -> usize {
    while i < text.len() && matches!(text[i], b' ' | b'\t') {
        i += 1;
    }
    let e = ident_end(text, i);
    match &text[i..e] {
        b"include" => {}
        b"include_next" | b"import" => {
            t.unfollowable = true;
            return e;
        }
        _ => return i,
    }
    let mut j = e;
    while j < text.len() && matches!(text[j], b' ' | b'\t') {
        j += 1;
    }
    let close = match text.get(j) {
        Some(b'"') => b'"',
        Some(b'<') => b'>',
        // `#include MACRO`: the header is the macro's expansion.
        _ => {
            t.unfollowable = true;
            return e;
        }
    };
    let end = text[j + 1..]
        .iter()
        .position(|&c| c == close || c == b'\n')
        .map(|p| p + j + 1);
    match end {
        Some(end) if text[end] == close => {
            let name = String::from_utf8_lossy(&text[j + 1..end]).into_owned();
            t.includes.push(match close {
                b'"' => Include::Quoted(name),
                _ => Include::Angled(name),
            });
            end + 1
        }
        _ => {
            t.unfollowable = true;
            e
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(src: &str) -> Identifiers {
        Identifiers::of(&[src.as_bytes()], &[])
    }

    #[test]
    fn whole_identifiers_only() {
        let i = ids("kernel void k(constant float *c, global float *o) {\n\
                     // sin(x) in a comment\n/* cos */ o[0] = asin(c[0]) + 1e5f + 0x1p-3f;\n\
                     printf(\"tan %f\", o[0]); char q = 's'; }");
        for n in ["asin", "kernel", "constant", "o", "printf", "q"] {
            assert!(i.has(n.as_bytes()), "{n}");
        }
        // "constant" holds "tan", "using" "sin"; comments, strings and numbers are not read.
        for n in ["sin", "cos", "tan", "f", "p", "e5f", "s"] {
            assert!(!i.has(n.as_bytes()), "{n}");
        }
    }

    #[test]
    fn splices_defines_and_pastes() {
        let i = ids("float f(float x) { return si\\\nn(x); }");
        assert!(i.has(b"sin"));
        let d = Identifiers::of(
            &[b"kernel void k(global float *o) { o[0] = F(o[1]); }"],
            &["-DF(x)=sin(x)".into(), "-D".into(), "G=tgamma".into()],
        );
        assert!(d.has(b"sin") && d.has(b"tgamma") && !d.has(b"cos"));
        let p = ids("#define H(f) half_ ## f\nfloat g(float x) { return H(cos)(x); }");
        assert!(p.has(b"half_") && p.has(b"cos"));
        assert!(!ids("#define H(f) half_cos\n").has(b"cos"));
        // With pasting, a name inside an identifier counts.
        assert!(ids("#define C(a, b) a##b\nC(x, y) half_tan").has(b"tan"));
    }

    #[test]
    fn includes_are_followed_or_count_everything() {
        // No -I folder: the header cannot be found, so anything may be named.
        assert!(ids("#include \"m.h\"\nkernel void k() {}").has(b"sin"));
        assert!(ids("#define H <m.h>\n#include H\n").has(b"sin"));
        assert!(ids("  #  include_next <m.h>\n").has(b"sin"));
        // A #include in a comment or string includes nothing.
        assert!(!ids("// #include \"m.h\"\nconst char *s = \"#include <x>\";").has(b"sin"));
        let dir = super::super::tempdir::PrivateDir::new("identifiers-test").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("m.h"),
            "#include \"sub/n.h\"\nfloat f(float x) { return cos(x); }",
        )
        .unwrap();
        std::fs::write(dir.path().join("sub/n.h"), "#include \"o.h\"\n").unwrap();
        std::fs::write(
            dir.path().join("sub/o.h"),
            "double g(double x) { return atan2(x, 1.0); }",
        )
        .unwrap();
        let args = vec![format!("-I{}", dir.path().display())];
        let i = Identifiers::of(&[b"#include <m.h>\nkernel void k() {}"], &args);
        assert!(i.has(b"cos") && i.has(b"atan2") && i.has(b"k"));
        assert!(!i.has(b"sin"));
        // A header that is not there: everything.
        let missing = Identifiers::of(&[b"#include \"gone.h\"\n"], &args);
        assert!(missing.has(b"sin"));
    }
}
