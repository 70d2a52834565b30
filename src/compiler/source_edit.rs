//! Helpers shared by the token-level source rewrites before clspv (returned_load,
//! packed_private, member_offset).

use super::pipes::{tokenize, Kind, Token};

/// Whether `s` is an identifier.
pub(super) fn is_ident(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `span` on one line, to be written into a replacement; `None` when it holds a comment (which
/// would swallow what follows it on the line).
pub(super) fn flat(span: &str) -> Option<String> {
    (!span.contains("//") && !span.contains("/*")).then(|| span.replace('\n', " "))
}

/// One replacement: bytes `start..end` of the text become `text` (one line).
pub(super) struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// `text` with `edits` (in order, not overlapping) made, each replacement followed by as many
/// line breaks as the span it replaced, so that clspv's diagnostics keep their lines.
pub(super) fn splice(text: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(text.len() + 128 * edits.len());
    let mut copied = 0;
    for e in edits {
        out += &text[copied..e.start];
        out += &e.text;
        out.extend(std::iter::repeat_n(
            '\n',
            text[e.start..e.end].matches('\n').count(),
        ));
        copied = e.end;
    }
    out + &text[copied..]
}

/// The tokens of `text` other than preprocessor directives, which the rewrites read through
/// (every branch of an `#if` as one stream), and the directives' byte ranges.
pub(super) fn code_tokens(text: &str) -> (Vec<Token>, Vec<(usize, usize)>) {
    let (directives, code): (Vec<Token>, Vec<Token>) = tokenize(text)
        .into_iter()
        .partition(|t| t.kind == Kind::Directive);
    (code, directives.iter().map(|d| (d.start, d.end)).collect())
}

/// Whether a directive lies inside bytes `start..end`.
pub(super) fn spans_directive(directives: &[(usize, usize)], start: usize, end: usize) -> bool {
    directives.iter().any(|&(a, b)| a >= start && b <= end)
}

/// `rewrite` applied to `s` (for the rewrites' unit tests).
#[cfg(test)]
pub(super) fn rewritten(
    rewrite: fn(std::borrow::Cow<'_, [u8]>) -> std::borrow::Cow<'_, [u8]>,
    s: &str,
) -> String {
    String::from_utf8(rewrite(std::borrow::Cow::Borrowed(s.as_bytes())).into_owned()).unwrap()
}
