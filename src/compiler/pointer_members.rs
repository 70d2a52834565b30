//! A source rewrite for physical-addressing builds: pointers stored in memory become `ulong`.
//!
//! The pinned clspv refuses a struct that holds a pointer when a kernel parameter points to it
//! ("structures may not contain pointers") and any function or variable whose type reaches a
//! recursive struct ("recursive structures are not supported"): checks of its front end, made
//! on the declarations whatever the addressing mode. Where they let a pointer through, loading
//! a pointer from memory crashes it ("Invalid bitcast <2 x i32> to ptr"). SVM data structures
//! (linked lists, structs of buffer pointers) are made of exactly these. With 64-bit device
//! addresses a pointer and a `ulong` have the same size, alignment and bits, so this rewrite
//! declares every pointer member of a struct or union as `ulong` and casts at each use:
//! `s->next` read becomes `((struct Node *)s->next)`, `s->next = e` becomes
//! `s->next = (ulong)(e)`, and a load through a pointer to a pointer, `*(T * Q *)e`, becomes
//! `((T *)*(Q ulong *)e)`. `s->next++`, `--`, `+=`, `-=` step the integer by the pointee's
//! size; an array of pointers `T *p[N]` becomes `ulong p[N]`. Members are found by name; a name
//! declared both as a pointer and otherwise, or uses the rewrite cannot express (`&s->next`,
//! an array of pointers used whole), leave the source as it is. Program-scope variables of
//! pointer type, which this clspv crashes on, become `ulong` too ([`pointer_globals`]).
//! [`compile`] builds the rewritten source and falls back to the original.

use super::null_tests::matching;
use super::pipes::{tokenize, Kind, Token};
use std::collections::HashMap;

/// Compiles `source` with `args` (a physical-addressing build): the source with pointer
/// members rewritten (or as it is, where the rewrite changes nothing); where that fails, with
/// global-pointer local variables as `ulong` too ([`rewrite_locals`]); then through its IR
/// with pointer comparisons made integer ones (`pointer_compares`); then the original.
pub fn compile(
    source: &[u8],
    args: &[String],
) -> Result<super::CompileOutput, super::CompileError> {
    let text = std::str::from_utf8(source).ok();
    let members = text.and_then(rewrite);
    let first = super::compile(&[members.as_deref().map_or(source, str::as_bytes)], args);
    let Err(e) = first else {
        return first;
    };
    log::debug!(target: "compiler", "physical build failed, trying pointer locals as ulong: {e:?}");
    if let Some(locals) = text.and_then(rewrite_locals) {
        if let Ok(out) = super::compile(&[locals.as_bytes()], args) {
            return Ok(out);
        }
    }
    let first_text = members.as_deref().map_or(source, str::as_bytes);
    if let Some(Ok(out)) = super::pointer_compares::compile(&[first_text], args) {
        return Ok(out);
    }
    if members.is_some() {
        return super::compile(&[source], args);
    }
    Err(e)
}

/// The source with pointer members as `ulong`; None where nothing changes or the rewrite gives up.
pub fn rewrite(src: &str) -> Option<String> {
    rewrite_with(src, false)
}

/// [`rewrite`], and every local variable declared as a `global` pointer becomes a `ulong` cast
/// back at each use. This clspv crashes (SIGSEGV in its SPIR-V producer, in both address modes)
/// on a loop whose pointer induction variable is dead on a `break` path: StructurizeCFG gives
/// a phi of the pointer a `poison` input the producer cannot type. As an integer the phi is
/// fine. A second attempt only: it hides pointers from the optimiser.
pub fn rewrite_locals(src: &str) -> Option<String> {
    rewrite_with(src, true)
}

fn rewrite_with(src: &str, locals: bool) -> Option<String> {
    let toks = tokenize(src);
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    let mut edits: Vec<Edit> = vec![];
    let members = pointer_members(src, &toks, &mut edits)?;
    pointer_globals(src, &toks, &mut edits);
    if locals {
        pointer_locals(src, &toks, &mut edits);
    }
    let mut n = 0;
    for i in 0..toks.len() {
        let t = text(i);
        if t == "*" && i + 1 < toks.len() && text(i + 1) == "(" {
            pointer_load(src, &toks, i, &mut edits);
            continue;
        }
        let access =
            t == "." || (t == ">" && i > 0 && text(i - 1) == "-" && adjacent(&toks, i - 1));
        if !access || i + 1 >= toks.len() {
            continue;
        }
        let Some((ty, array)) = members.get(text(i + 1)) else {
            continue;
        };
        if in_edit(&edits, toks[i].start) {
            continue; // inside a rewritten member declaration
        }
        // The member expression's last token: the name, or an array member's `]`.
        let mut last = i + 1;
        if *array {
            if toks.get(i + 2).is_none_or(|_| text(i + 2) != "[") {
                return None; // an array of pointers used whole (decayed, `sizeof`)
            }
            last = matching(src, &toks, i + 2)?;
        }
        let first = chain_start(src, &toks, if t == "." { i - 1 } else { i - 2 });
        n += 1;
        member_use(src, &toks, (first, last), ty, n, &mut edits)?;
    }
    if edits.is_empty() {
        return None;
    }
    Some(format!("{INITIALISERS}{}", apply(src, edits)))
}

/// A brace initialiser gives a `ulong` member a pointer as written (`ref_t r = {1, p}`): the
/// implicit conversion, an error by default, is the rewrite's. The logical build, made from
/// the source as written, has reported the application's own.
const INITIALISERS: &str = "#pragma clang diagnostic ignored \"-Wint-conversion\"\n#line 1\n";

/// The edits for one use of a pointer member, tokens `first..=last` (`s->next`, `t.ptrs[i]`),
/// stored as a `ulong`: a read becomes `((T)e)`, `e = v` stores `(ulong)(v)`, and `e++`,
/// `e--`, `++e`, `--e`, `e += v`, `e -= v` step the integer by the pointee's size, the result
/// cast back to `T`. None for uses that cannot be written so (`&e`, `e *= v`).
fn member_use(
    src: &str,
    toks: &[Token],
    (first, last): (usize, usize),
    ty: &str,
    n: i64,
    edits: &mut Vec<Edit>,
) -> Option<()> {
    let text = |k: usize| toks.get(k).map_or("", |t| &src[t.start..t.end]);
    let joined = |k: usize| k + 1 < toks.len() && adjacent(toks, k);
    let (next, next2) = (text(last + 1), text(last + 2));
    let step = format!("sizeof(*(({ty})0))");
    let before = |k: usize| first >= k;
    let prefix_op = before(2)
        && matches!(text(first - 1), "+" | "-")
        && text(first - 2) == text(first - 1)
        && joined(first - 2)
        && !(before(3)
            && (matches!(toks[first - 3].kind, Kind::Ident) && !is_keyword(text(first - 3))
                || matches!(text(first - 3), ")" | "]" | "+" | "-")));
    let address = before(1) && text(first - 1) == "&" && !(before(2) && text(first - 2) == "&");
    let open = |edits: &mut Vec<Edit>, s: &str| {
        edits.push(Edit::at(toks[first].start, 2_000_000 - n, s));
    };
    let close = |edits: &mut Vec<Edit>, s: &str| {
        edits.push(Edit::at(toks[last].end, n, s));
    };
    if address {
        return None;
    }
    if prefix_op {
        let op = if text(first - 1) == "+" { "+=" } else { "-=" };
        edits.push(Edit::replace(toks, first - 2, first - 1, String::new()));
        open(edits, &format!("(({ty})("));
        close(edits, &format!(" {op} {step}))"));
    } else if next == "=" && !(next2 == "=" && joined(last + 1)) {
        store_as_ulong(src, toks, last + 1, edits);
    } else if matches!(next, "+" | "-") && next2 == next && joined(last + 1) {
        let (op, undo) = if next == "+" {
            ("+=", "-")
        } else {
            ("-=", "+")
        };
        edits.push(Edit::replace(toks, last + 1, last + 2, String::new()));
        open(edits, &format!("(({ty})(("));
        close(edits, &format!(" {op} {step}) {undo} {step}))"));
    } else if matches!(next, "+" | "-") && next2 == "=" && joined(last + 1) {
        open(edits, &format!("(({ty})("));
        edits.push(Edit::at(toks[last + 2].end, 600_000, " ("));
        let end = expression_end(src, toks, last + 3);
        edits.push(Edit::at(end, 500_000, &format!(") * {step}))")));
    } else if matches!(next, "*" | "/" | "|" | "&" | "^" | "%") && next2 == "=" && joined(last + 1)
    {
        return None; // compound assignments a pointer does not have
    } else {
        open(edits, &format!("(({ty})"));
        close(edits, ")");
    }
    Some(())
}

/// Text to put at a byte offset (`len` bytes replaced); `rank` orders insertions at one offset.
struct Edit {
    at: usize,
    len: usize,
    rank: i64,
    text: String,
}

impl Edit {
    /// `text` in place of tokens `a..=b`.
    fn replace(toks: &[Token], a: usize, b: usize, text: String) -> Edit {
        Edit {
            at: toks[a].start,
            len: toks[b].end - toks[a].start,
            rank: 0,
            text,
        }
    }

    fn at(at: usize, rank: i64, text: &str) -> Edit {
        Edit {
            at,
            len: 0,
            rank,
            text: text.to_string(),
        }
    }
}

/// `(ulong)(` after the `=` at token `eq` and `)` where the assigned expression ends.
fn store_as_ulong(src: &str, toks: &[Token], eq: usize, edits: &mut Vec<Edit>) {
    edits.push(Edit::at(toks[eq].end, 600_000, "(ulong)("));
    edits.push(Edit::at(expression_end(src, toks, eq + 1), 500_000, ")"));
}

fn in_edit(edits: &[Edit], at: usize) -> bool {
    edits
        .iter()
        .any(|e| e.len > 0 && (e.at..e.at + e.len).contains(&at))
}

fn apply(src: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.at, e.rank));
    let mut out = String::with_capacity(src.len() + edits.len() * 16);
    let mut from = 0;
    for e in edits {
        out.push_str(&src[from..e.at.max(from)]);
        out.push_str(&e.text);
        from = from.max(e.at + e.len);
    }
    out.push_str(&src[from..]);
    out
}

fn adjacent(toks: &[Token], i: usize) -> bool {
    toks[i].end == toks[i + 1].start
}

/// The pointer members of every struct and union body (name → pointer type as written), with
/// edits that declare them `ulong`. None where a name is a pointer of two types, or a pointer
/// in one struct and not in another.
fn pointer_members(
    src: &str,
    toks: &[Token],
    edits: &mut Vec<Edit>,
) -> Option<HashMap<String, (String, bool)>> {
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    let mut members: HashMap<String, (String, bool)> = HashMap::new();
    let mut plain: Vec<String> = vec![];
    let mut i = 0;
    while i + 2 < toks.len() {
        let tagged = matches!(text(i), "struct" | "union");
        let open = if text(i + 1) == "{" { i + 1 } else { i + 2 };
        if !tagged || text(open) != "{" {
            i += 1;
            continue;
        }
        // Member declarations at depth 1 of the body, split at ';'.
        let mut start = open + 1;
        let mut j = open + 1;
        let mut depth = 0;
        while j < toks.len() {
            match text(j) {
                "{" | "(" | "[" => depth += 1,
                "}" | ")" | "]" if depth > 0 => depth -= 1,
                "}" => break,
                ";" if depth == 0 => {
                    member(src, toks, start, j, &mut members, &mut plain, edits)?;
                    start = j + 1;
                }
                _ => {}
            }
            j += 1;
        }
        i = open + 1;
    }
    if plain.iter().any(|p| members.contains_key(p)) {
        return None;
    }
    Some(members)
}

/// One member declaration, tokens `a..semi`: records its declarators, and where one is a plain
/// pointer, replaces the declaration with one declaration per declarator.
fn member(
    src: &str,
    toks: &[Token],
    a: usize,
    semi: usize,
    members: &mut HashMap<String, (String, bool)>,
    plain: &mut Vec<String>,
    edits: &mut Vec<Edit>,
) -> Option<()> {
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    let span = |x: usize, y: usize| {
        if x < y {
            &src[toks[x].start..toks[y - 1].end]
        } else {
            ""
        }
    };
    let simple =
        (a..semi).all(|k| matches!(toks[k].kind, Kind::Ident) || matches!(text(k), "*" | ","));
    if !simple && pointer_array(src, toks, a, semi, members, edits)? {
        return Some(());
    }
    if !simple || a >= semi {
        // Arrays, bit-fields, nested bodies, attributes: recorded as plain names only.
        plain.extend(
            (a..semi)
                .filter(|&k| matches!(toks[k].kind, Kind::Ident))
                .map(|k| text(k).to_string()),
        );
        return Some(());
    }
    let first_star = (a..semi).find(|&k| text(k) == "*" || text(k) == ",");
    let mut base_end = first_star.unwrap_or(semi);
    let mut parts = vec![];
    let mut from = a;
    for k in a..=semi {
        if k == semi || text(k) == "," {
            parts.push((from, k));
            from = k + 1;
        }
    }
    // Without a star the first declarator's name ends the base type.
    if first_star.is_none_or(|s| text(s) == ",") {
        base_end = parts[0].1 - 1;
    }
    let base = span(a, base_end);
    let mut replacement = String::new();
    let mut any = false;
    for (n, &(x, y)) in parts.iter().enumerate() {
        if x >= y || !matches!(toks[y - 1].kind, Kind::Ident) {
            return None;
        }
        let name = text(y - 1).to_string();
        let ty = if n == 0 {
            span(a, y - 1).to_string()
        } else {
            format!("{base} {}", span(x, y - 1))
        };
        if ty.contains('*') {
            if members.get(&name).is_some_and(|t| t.0 != ty || t.1) {
                return None;
            }
            members.insert(name.clone(), (ty, false));
            replacement.push_str(&format!("ulong {name}; "));
            any = true;
        } else {
            plain.push(name.clone());
            replacement.push_str(&format!("{base} {name}; "));
        }
    }
    if any {
        edits.push(Edit::replace(toks, a, semi, replacement));
    }
    Some(())
}

/// A member declaration `T *name[N];` (tokens `a..semi`, one declarator): recorded as an array
/// of pointers, declared `ulong name[N];`. Some(false) where the declaration is not one.
fn pointer_array(
    src: &str,
    toks: &[Token],
    a: usize,
    semi: usize,
    members: &mut HashMap<String, (String, bool)>,
    edits: &mut Vec<Edit>,
) -> Option<bool> {
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    let Some(open) = (a..semi).find(|&k| text(k) == "[") else {
        return Some(false);
    };
    let words = |k: usize| matches!(toks[k].kind, Kind::Ident) || text(k) == "*";
    let shaped = open > a + 1
        && (a..open).all(words)
        && (a..open - 1).any(|k| text(k) == "*")
        && matches!(toks[open - 1].kind, Kind::Ident)
        && matching(src, toks, open) == Some(semi - 1);
    if !shaped {
        return Some(false);
    }
    let name = text(open - 1).to_string();
    let ty = src[toks[a].start..toks[open - 2].end].to_string();
    if members.get(&name).is_some_and(|t| t.0 != ty || !t.1) {
        return None;
    }
    let dims = &src[toks[open].start..toks[semi - 1].end];
    members.insert(name.clone(), (ty, true));
    edits.push(Edit::replace(
        toks,
        a,
        semi,
        format!("ulong {name}{dims}; "),
    ));
    Some(true)
}

/// Edits that make each local variable declared as `[qualifiers] T *name = e;` (or without an
/// initializer), with `global` among its type words, a `ulong`: reads become `((T *)name)`,
/// stores `name = (ulong)(e)`. A variable used in a way that cannot be written so (`name++`,
/// `+=`, `&name`, a second declaration of the name in its block) is left alone.
fn pointer_locals(src: &str, toks: &[Token], edits: &mut Vec<Edit>) {
    let text = |i: usize| toks.get(i).map_or("", |t| &src[t.start..t.end]);
    let ident = |i: usize| toks.get(i).is_some_and(|t| matches!(t.kind, Kind::Ident));
    let joined = |i: usize| i + 1 < toks.len() && toks[i].end == toks[i + 1].start;
    let mut n = 0;
    for d in 1..toks.len() {
        let starts = matches!(text(d - 1), "{" | ";" | "}")
            || (text(d - 1) == "(" && d >= 2 && text(d - 2) == "for");
        if !starts || !ident(d) || in_edit(edits, toks[d].start) {
            continue;
        }
        let mut k = d;
        while ident(k) && !is_keyword(text(k)) {
            k += 1;
        }
        let words = d..k;
        let global = words
            .clone()
            .any(|w| matches!(text(w), "global" | "__global"));
        if !global || text(k) != "*" || !ident(k + 1) || text(k + 2) == "*" {
            continue;
        }
        let name = k + 1;
        let assigned = text(name + 1) == "=" && text(name + 2) != "=";
        if !(assigned || text(name + 1) == ";") {
            continue;
        }
        // The block the declaration is in: its innermost '{' must open a function or a
        // statement body (after ')', '{', ';', '}', `else` or `do`), not a struct or an
        // initializer.
        let Some(open) = enclosing_brace(src, toks, d) else {
            continue;
        };
        let body = open > 0 && (matches!(text(open - 1), ")" | "{" | ";" | "}" | "else" | "do"));
        let Some(end) = matching(src, toks, open).filter(|_| body) else {
            continue;
        };
        let ty = format!("{} *", &src[toks[d].start..toks[k - 1].end]);
        let var = text(name);
        let mut uses = vec![];
        let mut expressible = true;
        for u in name + 1..end {
            let member = text(u - 1) == "." || (text(u - 1) == ">" && text(u - 2) == "-");
            if text(u) != var || member {
                continue;
            }
            let pair_after = joined(u + 1).then(|| format!("{}{}", text(u + 1), text(u + 2)));
            let pair_before =
                (u >= 2 && joined(u - 2)).then(|| format!("{}{}", text(u - 2), text(u - 1)));
            // Steps written as statements: `p++;`, `--p;`, `p += e;` (in a for header too).
            let statement =
                |first: usize| first > 0 && matches!(text(first - 1), ";" | "{" | "}" | ")" | ",");
            let ends = |i: usize| matches!(text(i), ";" | ")" | ",");
            let step = |op: &str| if op.starts_with('+') { "+" } else { "-" };
            match (pair_before.as_deref(), pair_after.as_deref()) {
                (_, Some(op @ ("++" | "--"))) if statement(u) && ends(u + 3) => {
                    uses.push(Use::Step(u, u + 2, step(op), false));
                    continue;
                }
                (Some(op @ ("++" | "--")), _) if statement(u - 2) && ends(u + 1) => {
                    uses.push(Use::Step(u - 2, u, step(op), false));
                    continue;
                }
                (_, Some(op @ ("+=" | "-="))) if statement(u) => {
                    uses.push(Use::Step(u, u + 2, step(op), true));
                    continue;
                }
                _ => {}
            }
            let increments = matches!(pair_after.as_deref(), Some("++" | "--" | "+=" | "-="))
                || matches!(pair_before.as_deref(), Some("++" | "--"));
            let address = text(u - 1) == "&" && pair_before.as_deref() != Some("&&");
            let redeclared =
                text(u - 1) == "*" && u >= 2 && ident(u - 2) && !is_keyword(text(u - 2));
            if increments || address || redeclared || text(u + 1) == "(" {
                expressible = false;
                break;
            }
            let store = text(u + 1) == "=" && !(text(u + 2) == "=" && joined(u + 1));
            uses.push(if store { Use::Store(u) } else { Use::Read(u) });
        }
        if !expressible {
            continue;
        }
        edits.push(Edit::replace(toks, d, name, format!("ulong {var}")));
        if assigned {
            store_as_ulong(src, toks, name + 1, edits);
        }
        for u in uses {
            match u {
                Use::Store(u) => {
                    store_as_ulong(src, toks, u + 1, edits);
                }
                Use::Read(u) => {
                    n += 1;
                    edits.push(Edit::at(toks[u].start, 3_000_000 + n, &format!("(({ty})")));
                    edits.push(Edit::at(toks[u].end, 100, ")"));
                }
                Use::Step(a, b, sign, compound) => {
                    // In integers: as a pointer again, LLVM folds the step back into a
                    // pointer phi.
                    let by = if compound { " * (" } else { "" };
                    let step = format!("{var} {sign}= sizeof(*(({ty}){var})){by}");
                    edits.push(Edit::replace(toks, a, b, step));
                    if compound {
                        edits.push(Edit::at(expression_end(src, toks, b + 1), 500_000, ")"));
                    }
                }
            }
        }
    }
}

/// The value a program-scope pointer variable rewritten by [`pointer_globals`] holds until it
/// is first stored to: no device address (nothing aligned ends in 0xf1).
const UNSET: &str = "0xfffffffffffffff1UL";

/// Program-scope variables of pointer type, `global int *p = &x[2];` or `global int *p;` (each
/// alone in its declaration), which this clspv crashes on in both addressing modes: declared
/// `ulong` instead, holding the address. One with an initializer starts as [`UNSET`] and each
/// read gives the initializer's address while it is (`((T *)(p == UNSET ? (ulong)(&x[2]) :
/// p))`: what a relocation would have put there, computed where it is read, with no store
/// before the program's first launch); a store writes `(ulong)(e)`. Left as it is (and the
/// build fails as before) where the name is declared again (a parameter or local of the same
/// name), stepped (`p++`, `p += n`), its address taken, or used as an array of pointers.
fn pointer_globals(src: &str, toks: &[Token], edits: &mut Vec<Edit>) {
    let text = |i: usize| toks.get(i).map_or("", |t| &src[t.start..t.end]);
    let ident = |i: usize| toks.get(i).is_some_and(|t| matches!(t.kind, Kind::Ident));
    let joined = |i: usize| i + 1 < toks.len() && toks[i].end == toks[i + 1].start;
    const OWN: &[&str] = &[
        "global",
        "__global",
        "constant",
        "__constant",
        "const",
        "volatile",
        "restrict",
    ];
    let mut depth = 0i32;
    let mut d = 0;
    while d < toks.len() {
        match text(d) {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" => depth -= 1,
            _ => {}
        }
        let starts = d == 0
            || matches!(text(d - 1), ";" | "}")
            || matches!(toks[d - 1].kind, Kind::Directive);
        if depth != 0 || !starts || !ident(d) {
            d += 1;
            continue;
        }
        // `words * own-qualifiers name [= init] ;`
        let mut k = d;
        while ident(k) && !is_keyword(text(k)) {
            k += 1;
        }
        if k == d || text(k) != "*" || matches!(text(d), "typedef" | "extern" | "struct" | "union")
        {
            d += 1;
            continue;
        }
        let mut name = k + 1;
        while OWN.contains(&text(name)) {
            name += 1;
        }
        if !ident(name) || !matches!(text(name + 1), "=" | ";") {
            d += 1;
            continue;
        }
        let end = expression_end(src, toks, name + 1);
        let Some(semi) = (name + 1..toks.len()).find(|&i| toks[i].start >= end) else {
            break;
        };
        if text(semi) != ";" {
            d += 1;
            continue; // several declarators
        }
        let words: Vec<&str> = (d..k).map(text).filter(|w| *w != "static").collect();
        let ty = format!("{} *", words.join(" "));
        let own: Vec<&str> = (k + 1..name).map(text).collect();
        let space = if own
            .iter()
            .any(|w| matches!(*w, "global" | "__global" | "constant" | "__constant"))
        {
            own.join(" ")
        } else {
            ["global"]
                .iter()
                .chain(&own)
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let var = text(name);
        let init = (text(name + 1) == "=").then(|| src[toks[name + 2].start..end].trim());
        let init = init.filter(|i| !matches!(*i, "0" | "NULL" | "(void *)0" | "((void *)0)"));
        // Every later use: a read or a store (no other declaration of the name).
        let mut uses = vec![];
        let mut expressible = true;
        for u in semi + 1..toks.len() {
            let member = text(u - 1) == "." || (text(u - 1) == ">" && text(u - 2) == "-");
            if text(u) != var || member {
                continue;
            }
            let pair_after = joined(u + 1).then(|| format!("{}{}", text(u + 1), text(u + 2)));
            let pair_before =
                (u >= 2 && joined(u - 2)).then(|| format!("{}{}", text(u - 2), text(u - 1)));
            // `*p += e` assigns to what `p` points to: a read of `p`; `*p++` steps `p`.
            let deref = text(u - 1) == "*";
            let compound = matches!(
                pair_after.as_deref(),
                Some("+=" | "-=" | "*=" | "/=" | "|=" | "&=" | "^=" | "%=")
            );
            let steps = matches!(pair_after.as_deref(), Some("++" | "--"))
                || (compound && !deref)
                || matches!(pair_before.as_deref(), Some("++" | "--"));
            let address = text(u - 1) == "&" && pair_before.as_deref() != Some("&&");
            // A declaration of the name: after a type word or a declarator's `*`.
            let declared = (ident(u - 1) && !is_keyword(text(u - 1)))
                || (text(u - 1) == "*"
                    && (ident(u - 2) && !is_keyword(text(u - 2)) || text(u - 2) == "*"));
            if steps || address || declared || text(u + 1) == "(" {
                expressible = false;
                break;
            }
            let store = !deref && text(u + 1) == "=" && !(text(u + 2) == "=" && joined(u + 1));
            uses.push((u, store));
        }
        if !expressible {
            d = semi + 1;
            continue;
        }
        let declaration = match init {
            Some(_) => format!("{space} ulong {var} = {UNSET};"),
            None => format!("{space} ulong {var};"),
        };
        edits.push(Edit::replace(toks, d, semi, declaration));
        for (n, (u, store)) in uses.into_iter().enumerate() {
            if store {
                store_as_ulong(src, toks, u + 1, edits);
                continue;
            }
            let open = match init {
                Some(i) => format!("(({ty})({var} == {UNSET} ? (ulong)({i}) : "),
                None => format!("(({ty})"),
            };
            let close = if init.is_some() { "))" } else { ")" };
            edits.push(Edit::at(toks[u].start, 3_000_000 + n as i64, &open));
            edits.push(Edit::at(toks[u].end, 100, close));
        }
        d = semi + 1;
    }
}

/// A use of a pointer local: read, stored to, or stepped (tokens `a..=b`, `+`/`-`, and whether
/// by an expression that follows, `+=`, or by one).
enum Use {
    Read(usize),
    Store(usize),
    Step(usize, usize, &'static str, bool),
}

/// The innermost `{` whose block holds token `at`.
fn enclosing_brace(src: &str, toks: &[Token], at: usize) -> Option<usize> {
    let mut depth = 0;
    for k in (0..at).rev() {
        match &src[toks[k].start..toks[k].end] {
            "}" => depth += 1,
            "{" if depth == 0 => return Some(k),
            "{" => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The first token of the postfix expression whose last token is `i` (`a->b[i].c` from `c`'s
/// `.`'s left neighbour back to `a`).
fn chain_start(src: &str, toks: &[Token], mut i: usize) -> usize {
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    loop {
        let t = text(i);
        if t == ")" || t == "]" {
            let Some(open) = opener(src, toks, i) else {
                return i;
            };
            i = open;
            let prev_continues = i > 0
                && (t == "]"
                    || matches!(text(i - 1), ")" | "]")
                    || (matches!(toks[i - 1].kind, Kind::Ident) && !is_keyword(text(i - 1))));
            if !prev_continues {
                return i;
            }
            i -= 1;
            continue;
        }
        // An identifier (or literal): the chain goes on only behind a member access.
        if i >= 2 && text(i - 1) == "." {
            i -= 2;
        } else if i >= 3 && text(i - 1) == ">" && text(i - 2) == "-" && adjacent(toks, i - 2) {
            i -= 3;
        } else {
            return i;
        }
    }
}

fn is_keyword(t: &str) -> bool {
    matches!(
        t,
        "return" | "if" | "while" | "for" | "switch" | "case" | "sizeof" | "else" | "do"
    )
}

/// The `(` or `[` that `close` closes.
fn opener(src: &str, toks: &[Token], close: usize) -> Option<usize> {
    let mut depth = 0;
    for k in (0..=close).rev() {
        match &src[toks[k].start..toks[k].end] {
            ")" | "]" => depth += 1,
            "(" | "[" => {
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

/// The byte offset where the assignment expression starting at token `i` ends: the first `;`,
/// `,` or unmatched closer at depth 0.
fn expression_end(src: &str, toks: &[Token], i: usize) -> usize {
    let mut depth = 0;
    for (k, tok) in toks.iter().enumerate().skip(i) {
        match &src[tok.start..tok.end] {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" if depth == 0 => return toks[k].start,
            ")" | "]" | "}" => depth -= 1,
            ";" | "," if depth == 0 => return toks[k].start,
            _ => {}
        }
    }
    src.len()
}

/// `*(T * Q *)e` at `star` (a load of a pointer from memory) → `((T *)*(Q ulong *)e)`.
fn pointer_load(src: &str, toks: &[Token], star: usize, edits: &mut Vec<Edit>) {
    let text = |i: usize| &src[toks[i].start..toks[i].end];
    let open = star + 1;
    let Some(close) =
        (open + 1..toks.len()).find(|&k| !matches!(toks[k].kind, Kind::Ident) && text(k) != "*")
    else {
        return;
    };
    if text(close) != ")" || close + 1 >= toks.len() {
        return;
    }
    let stars: Vec<usize> = (open + 1..close).filter(|&k| text(k) == "*").collect();
    if stars.len() < 2 || stars[stars.len() - 1] != close - 1 {
        return;
    }
    let inner_star = stars[stars.len() - 2];
    // A unary operand: an identifier or parenthesized group with its postfix operators.
    let mut end = close + 1;
    if text(end) == "(" {
        let Some(m) = matching(src, toks, end) else {
            return;
        };
        end = m;
    } else if !matches!(toks[end].kind, Kind::Ident) {
        return;
    }
    // Postfix operators: indexes, calls, member accesses.
    while end + 1 < toks.len() {
        match text(end + 1) {
            "[" | "(" => match matching(src, toks, end + 1) {
                Some(m) => end = m,
                None => return,
            },
            "." if end + 2 < toks.len() => end += 2,
            "-" if end + 3 < toks.len() && text(end + 2) == ">" => end += 3,
            _ => break,
        }
    }
    let end = end.min(toks.len() - 1);
    let span = |x: usize, y: usize| {
        if x <= y {
            &src[toks[x].start..toks[y].end]
        } else {
            ""
        }
    };
    let pointee = span(open + 1, inner_star);
    let storage = span(inner_star + 1, close - 2);
    let load = format!("(({pointee})*({storage} ulong *)");
    edits.push(Edit::replace(toks, star, close, load));
    edits.push(Edit::at(toks[end].end, 0, ")"));
}

#[cfg(test)]
mod pointer_global_tests {
    use super::rewrite;

    #[test]
    fn program_scope_pointers_become_addresses() {
        let src = "global int x[4] = {1, 2, 3, 4};\nglobal int *p = &x[2];\n\
                   kernel void k(global int *o) { o[0] = *p; o[1] = p[1]; *p += 5; *p = 1; p = &x[0]; }";
        let out = rewrite(src).unwrap();
        assert!(
            out.contains("global ulong p = 0xfffffffffffffff1UL;"),
            "{out}"
        );
        assert!(
            out.contains(
                "o[0] = *((global int *)(p == 0xfffffffffffffff1UL ? (ulong)(&x[2]) : p));"
            ),
            "{out}"
        );
        assert!(out.contains("p =(ulong)( &x[0]);"), "{out}");
        assert!(
            out.contains(
                " *((global int *)(p == 0xfffffffffffffff1UL ? (ulong)(&x[2]) : p)) += 5;"
            ),
            "{out}"
        );
        assert!(
            out.contains(" *((global int *)(p == 0xfffffffffffffff1UL ? (ulong)(&x[2]) : p)) = 1;"),
            "{out}"
        );
        let none = "global int *q;\nkernel void k(global int *o) { if (!q) q = o; q[0] = 1; }";
        let out = rewrite(none).unwrap();
        assert!(out.contains("global ulong q;"), "{out}");
        assert!(
            out.contains("if (!((global int *)q)) q =(ulong)( o);"),
            "{out}"
        );
        // A parameter of the same name: left as it is.
        let shadowed = "global int x[4];\nglobal int *p = &x[1];\n\
                        kernel void k(global int *p) { p[0] = 1; }";
        assert_eq!(rewrite(shadowed), None);
        // Stepped: left as it is.
        let stepped = "global int x[4];\nglobal int *p = &x[1];\nkernel void k() { p++; }";
        assert_eq!(rewrite(stepped), None);
        // After a directive.
        let pragma = "global int x[4];\n#pragma unroll\nglobal int *p = &x[1];\nkernel void k(global int *o) { o[0] = *p; }";
        assert!(rewrite(pragma).unwrap().contains("global ulong p = "));
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn brace_initialisers_convert_implicitly() {
        let src = "typedef struct { int n; int *p; } ref_t;\n\
                   void f(int *a) { ref_t r = {1, a}, s = {.p = a + 1, .n = 2}; r.p[0] = s.p[0]; }";
        let out = rewrite(src).unwrap();
        assert!(out.starts_with(super::INITIALISERS), "{out}");
        // A designated member is written like a store.
        assert!(
            out.contains("ref_t r = {1, a}, s = {.p =(ulong)( a + 1), .n = 2};"),
            "{out}"
        );
        assert!(out.contains("((int *)r.p)[0] = ((int *)s.p)[0];"), "{out}");
    }

    #[test]
    fn members_and_loads() {
        let src = "typedef struct Node { int id; __global struct Node* pNext; } Node;\n\
                   void f(__global Node* p, __global Node* q) { p->pNext = q; q = p->pNext->pNext; }";
        let out = rewrite(src).unwrap();
        assert!(out.contains("ulong pNext;"), "{out}");
        assert!(out.contains("p->pNext =(ulong)( q);"), "{out}");
        assert!(
            out.contains("q = ((__global struct Node*)((__global struct Node*)p->pNext)->pNext);"),
            "{out}"
        );
        let out =
            rewrite("void g(global long *p, global int *o) { o[0] = **(global int * global *)p; }")
                .unwrap();
        assert!(out.contains("*((global int *)*(global ulong *)p)"), "{out}");
        assert_eq!(rewrite("kernel void k(global int *p) { *p = 1; }"), None);
        let loop_src = "kernel void k(global uint *a, int n) {\n\
                        global uint *p = a; for (int j = 0; j < n; j++) { if (*p != 7) break; a[0] = 1; p++; p += 2; } }";
        let out = super::rewrite_locals(loop_src).unwrap();
        assert!(out.contains("ulong p =(ulong)( a);"), "{out}");
        assert!(out.contains("if (*((global uint *)p) != 7)"), "{out}");
        assert!(out.contains("p += sizeof(*((global uint *)p));"), "{out}");
        assert!(
            out.contains("p += sizeof(*((global uint *)p)) * ( 2);"),
            "{out}"
        );
        // Steps, stores through a member, arrays of pointers.
        let src = "struct N { int v; global struct N *next; };\n\
                   struct T { global int *p[4]; };\n\
                   void s(global struct N *n, global struct T *t, int i) {\n\
                   n->next++; --n->next; n->next += i + 1; t->p[i][0] = 3; t->p[i] = 0; t->p[2]--; }";
        let out = rewrite(src).unwrap();
        let step = "sizeof(*((global struct N *)0))";
        assert!(out.contains("ulong p[4];"), "{out}");
        assert!(
            out.contains(&format!(
                "((global struct N *)((n->next += {step}) - {step}));"
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!("((global struct N *)(n->next -= {step}));")),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "((global struct N *)(n->next += ( i + 1) * {step}));"
            )),
            "{out}"
        );
        assert!(out.contains("((global int *)t->p[i])[0] = 3;"), "{out}");
        assert!(out.contains("t->p[i] =(ulong)( 0);"), "{out}");
        assert_eq!(
            rewrite("struct S { global int *p; }; void h(struct S *s) { global int **q = &s->p; }"),
            None
        );
        // The CTS buffer-device-address test's spelling.
        let cts = "kernel void i(__global long* in_addr, __global int* out) {\n\
                   *out = **(int __global* __global*)in_addr; }";
        let out = rewrite(cts).unwrap();
        assert!(
            out.contains("*out = *((int __global*)*(__global ulong *)in_addr);"),
            "{out}"
        );
    }
}
