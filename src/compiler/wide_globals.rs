//! `size_t`-wide program-scope variables stored in 64 bits by the first (32-bit) build, so
//! that a program's two builds share them as one variable (issue 18; an LLVM IR patch).
//!
//! A program's first build is 32-bit (`spir`: `size_t`, `ptrdiff_t`, `intptr_t` and
//! `uintptr_t` are 32-bit) and its physical-addressing build 64-bit; both keep their
//! program-scope variables in one buffer (compiler::globals, `Program::physical`'s
//! `share_globals`). Such a variable is 4 bytes in the first build and 8 in the physical one,
//! at the same offset: the first build read and wrote the low half only, so the physical build
//! read back the high half it had left there, and a negative initializer (low half
//! `fffffffd`, whole `fffffffffffffffd`) kept the two buffers apart.
//!
//! So in first builds each scalar program-scope variable (or `static` local) declared with one
//! of those types becomes an `i64` in clang's IR, its initializer extended (zero for the
//! unsigned types, sign for the signed ones), and each store to it stores the stored value
//! extended the same way; loads stay 32-bit loads of its low half (little-endian). The 32-bit
//! build sees the same values as before (the high half is never read by it), and the physical
//! build reads, whole, what it wrote. A variable used otherwise than by direct loads and stores
//! (its address taken, an atomic, a constant expression) is left 32-bit; so are arrays and
//! struct members of those types.

/// The types whose width differs between the builds: (name, signed).
const WIDE_TYPES: &[(&str, bool)] = &[
    ("size_t", false),
    ("uintptr_t", false),
    ("ptrdiff_t", true),
    ("intptr_t", true),
];

/// The scalar program-scope variables and `static` locals of `source` declared with a type of
/// [`WIDE_TYPES`]: (name, signed). A declaration with `constant`, or of an array (`[` after
/// the name) or a function (`(`), is not one.
pub fn variables(source: &[u8]) -> Vec<(String, bool)> {
    use super::pipes::Kind;
    let text = String::from_utf8_lossy(source);
    let (tokens, _) = super::source_edit::code_tokens(&text);
    let word = |k: usize| -> Option<&str> {
        let t = tokens.get(k)?;
        (t.kind == Kind::Ident).then(|| &text[t.start..t.end])
    };
    // One-character punctuation (the tokenizer names `(),;{}` only; `=` and `[` are `Other`).
    let punct = |k: usize| {
        let t = tokens.get(k)?;
        match t.kind {
            Kind::Punct(c) => Some(c),
            Kind::Other if t.end == t.start + 1 => Some(text.as_bytes()[t.start]),
            _ => None,
        }
    };
    let mut found = vec![];
    let (mut braces, mut parens) = (0usize, 0usize);
    // Where the current declaration (statement) began: after the last `;`, `{` or `}`.
    let mut start = 0;
    for k in 0..tokens.len() {
        match punct(k) {
            Some(b'{') => {
                braces += 1;
                start = k + 1;
            }
            Some(b'}') => {
                braces = braces.saturating_sub(1);
                start = k + 1;
            }
            Some(b'(') => parens += 1,
            Some(b')') => parens = parens.saturating_sub(1),
            Some(b';') => start = k + 1,
            _ => {}
        }
        if parens > 0 {
            continue;
        }
        let Some(&(_, signed)) = word(k).and_then(|w| WIDE_TYPES.iter().find(|t| t.0 == w)) else {
            continue;
        };
        let before: Vec<&str> = (start..k).filter_map(word).collect();
        if before.len() != k - start {
            continue;
        }
        let constant = before
            .iter()
            .any(|w| *w == "constant" || *w == "__constant");
        let statics = before.contains(&"static");
        if constant || (braces > 0 && !statics) || before.contains(&"typedef") {
            continue;
        }
        // Each declarator: `name` followed by `=`, `;` or `,` (an initializer's own commas
        // are inside braces or parentheses: only scalars are taken).
        let mut at = k + 1;
        while let Some(name) = word(at) {
            match punct(at + 1) {
                Some(b'=' | b';' | b',') => found.push((name.to_string(), signed)),
                _ => break,
            }
            // The next declarator, after this one's initializer.
            let mut j = at + 1;
            let mut depth = 0usize;
            while let Some(c) = match tokens.get(j) {
                Some(_) => Some(punct(j)),
                None => None,
            } {
                match c {
                    Some(b'(' | b'{' | b'[') => depth += 1,
                    Some(b')' | b'}' | b']') => depth = depth.saturating_sub(1),
                    Some(b',') if depth == 0 => break,
                    Some(b';') if depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            if punct(j) != Some(b',') {
                break;
            }
            at = j + 1;
        }
    }
    found
}

/// `ll` (clang's IR of a 32-bit build) with the `variables` that are `i32` globals in the
/// global address space widened as the module comment says; `None` when none is.
pub fn patch(ll: &str, variables: &[(String, bool)]) -> Option<String> {
    let mut lines: Vec<String> = ll.lines().map(str::to_string).collect();
    let mut changed = false;
    let mut fresh = 0;
    for (name, signed) in variables {
        // The global itself: `@name` or a static local's `@function.name`.
        let defs: Vec<(usize, String)> = lines
            .iter()
            .enumerate()
            .filter_map(|(n, l)| {
                let g = l.strip_prefix('@')?;
                let (id, rest) = g.split_once(" = ")?;
                let matches = id == name || id.ends_with(&format!(".{name}"));
                (matches && rest.contains("addrspace(1) global i32 ")).then(|| (n, id.to_string()))
            })
            .collect();
        for (def, id) in defs {
            let global = format!("@{id}");
            let uses = |l: &str| {
                l.match_indices(&global).any(|(at, _)| {
                    let next = l[at + global.len()..].chars().next();
                    !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$')
                })
            };
            // Every use a plain load or store of the whole i32 (metadata may follow).
            let load = format!("= load i32, ptr addrspace(1) {global}, align 4");
            let store_to = format!(", ptr addrspace(1) {global}, align 4");
            let is_load = |t: &str| t.starts_with('%') && ends_with_then_metadata(t, &load);
            let is_store =
                |t: &str| t.starts_with("store i32 ") && store_value(t, &store_to).is_some();
            let all_plain = lines.iter().enumerate().all(|(n, l)| {
                let t = l.trim();
                n == def || !uses(t) || is_load(t) || is_store(t)
            });
            if !all_plain {
                continue;
            }
            let Some(new_def) = widen_definition(&lines[def], *signed) else {
                continue;
            };
            lines[def] = new_def;
            let ext = if *signed { "sext" } else { "zext" };
            for l in lines.iter_mut() {
                let t = l.trim();
                if !(uses(t) && t.starts_with("store i32 ")) {
                    continue;
                }
                let Some((value, metadata)) = store_value(t, &store_to) else {
                    continue;
                };
                let indent = &l[..l.len() - l.trim_start().len()];
                let wide = format!("%vkcl.wide.{fresh}");
                fresh += 1;
                *l = format!(
                    "{indent}{wide} = {ext} i32 {value} to i64\n\
                     {indent}store i64 {wide}, ptr addrspace(1) {global}, align 8{metadata}"
                );
            }
            changed = true;
        }
    }
    changed.then(|| {
        let mut out = lines.join("\n");
        out.push('\n');
        out
    })
}

/// Whether `t` ends with `tail`, or has it followed by metadata (`, !tbaa !7`).
fn ends_with_then_metadata(t: &str, tail: &str) -> bool {
    t.match_indices(tail).any(|(at, _)| {
        let rest = &t[at + tail.len()..];
        rest.is_empty() || rest.starts_with(", !")
    })
}

/// The stored value and the metadata after the store (`, !tbaa !7`, or empty) of `t`, a
/// `store i32 VALUE` + `store_to` line.
fn store_value<'a>(t: &'a str, store_to: &str) -> Option<(&'a str, &'a str)> {
    let body = t.strip_prefix("store i32 ")?;
    let (at, _) = body.match_indices(store_to).find(|(at, _)| {
        let rest = &body[at + store_to.len()..];
        rest.is_empty() || rest.starts_with(", !")
    })?;
    Some((&body[..at], &body[at + store_to.len()..]))
}

/// A global's definition line `... global i32 INIT, align 4...` as an `i64` of the extended
/// initializer, aligned to 8.
fn widen_definition(line: &str, signed: bool) -> Option<String> {
    let (head, tail) = line.split_once(" global i32 ")?;
    let (init, rest) = tail.split_once(", align 4")?;
    let wide = match init.trim() {
        "0" | "zeroinitializer" | "undef" | "poison" => init.trim().to_string(),
        v => {
            let v: i64 = v.parse().ok()?;
            match signed {
                true => (v as i32 as i64).to_string(),
                false => (v as i32 as u32 as i64).to_string(),
            }
        }
    };
    Some(format!("{head} global i64 {wide}, align 8{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_scalar_size_t_variables() {
        let src = b"global size_t a = 1, b;\n\
            ptrdiff_t c = -3;\n\
            constant size_t k = 4;\n\
            global size_t arr[4];\n\
            size_t f(size_t x) { size_t local_one = x; static global intptr_t s = 2; return x; }\n\
            typedef size_t my_size;\n\
            kernel void k(global uintptr_t *p) { static uintptr_t u; }\n";
        assert_eq!(
            variables(src),
            [
                ("a".to_string(), false),
                ("b".to_string(), false),
                ("c".to_string(), true),
                ("s".to_string(), true),
                ("u".to_string(), false),
            ]
        );
    }

    #[test]
    fn widens_definitions_and_stores() {
        let ll = "@a = addrspace(1) global i32 -3, align 4\n\
            @f.s = internal addrspace(1) global i32 7, align 4\n\
            @t = addrspace(1) global i32 1, align 4\n\
            define spir_kernel void @k(ptr addrspace(1) %o) {\n\
            entry:\n  %0 = load i32, ptr addrspace(1) @a, align 4\n\
            \x20 store i32 %0, ptr addrspace(1) @f.s, align 4\n\
            \x20 store i32 -9, ptr addrspace(1) @a, align 4\n\
            \x20 %1 = atomicrmw add ptr addrspace(1) @t, i32 1 seq_cst, align 4\n\
            \x20 ret void\n}\n";
        let vars = [
            ("a".to_string(), true),
            ("s".to_string(), false),
            ("t".to_string(), false),
        ];
        let out = patch(ll, &vars).unwrap();
        assert!(out.contains("@a = addrspace(1) global i64 -3, align 8\n"));
        assert!(out.contains("@f.s = internal addrspace(1) global i64 7, align 8\n"));
        // An atomic on it: left 32-bit.
        assert!(out.contains("@t = addrspace(1) global i32 1, align 4\n"));
        assert!(out.contains("  %vkcl.wide.0 = sext i32 -9 to i64\n  store i64 %vkcl.wide.0, ptr addrspace(1) @a, align 8\n"));
        assert!(out.contains(
            "zext i32 %0 to i64\n  store i64 %vkcl.wide.1, ptr addrspace(1) @f.s, align 8\n"
        ));
        assert!(out.contains("%0 = load i32, ptr addrspace(1) @a, align 4"));
        assert_eq!(patch(ll, &[]), None);
    }
}
