//! Module-scope variables of 8- and 16-component vector types given their lowered types in
//! clang's IR, before clspv's passes (an LLVM IR patch, through compiler::wrapped_copy's IR
//! route).
//!
//! clspv's `-long-vector` lowering (LongVectorLoweringPass) makes each global whose type holds
//! such a vector (`__local` and program-scope arrays, `__constant` tables, the constants clang
//! copies initialised private arrays from) a new global of the lowered type (vectors become
//! arrays: `[2 x <8 x i32>]` is `[2 x [8 x i32]]`), and lowers the instructions that use it.
//! Two faults follow in clspv 0.0.1:
//! - a use it does not lower keeps the old global, which stays a variable of its own: a
//!   constant-offset GEP (`a[1]`, which LLVM folds to `getelementptr (i8, @a, i32 32)`), or a
//!   scalar load at offset 0. With `*p = v` for `p = a + idx`, the later read of `a[1]`
//!   read the other variable, and LLVM folded it to the value stored there before;
//! - an initialiser that is an array or struct of such vectors is not lowered: clspv crashed
//!   (SIGSEGV, an `llvm_unreachable` of a release build).
//!
//! So each such global is given here the type clspv's lowering would give it (padding
//! members where a vector's alignment placed it, as clspv adds them) and its initialiser the
//! same shape (a vector constant becomes an array constant, `splat` written out). clspv then
//! leaves the global alone and lowers the instructions as before, all of them on the one
//! variable. A global this cannot lay out (a pointer in it) is left as it was.

use super::flat_layout::member_offsets;
use super::wrapped_copy::{parse, Ty, Types};

/// Whether a vector of `n` components is one clspv lowers to an array (8 and 16 in OpenCL C).
fn long(n: u64) -> bool {
    (8..=16).contains(&n)
}

/// Deepest type nesting followed (named types could refer to each other).
const MAX_DEPTH: usize = 32;

/// Whether `t` holds a long vector anywhere.
fn holds_long(types: &Types, t: &Ty, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match types.resolve(t) {
        Some(Ty::Vector(n, _)) => long(*n),
        Some(Ty::Array(_, e)) => holds_long(types, e, depth + 1),
        Some(Ty::Record { members, .. }) => members.iter().any(|m| holds_long(types, m, depth + 1)),
        _ => false,
    }
}

/// One member of a lowered record: a member of the original (its index) or padding.
#[derive(Debug, PartialEq)]
enum Slot {
    Member(usize, Ty),
    Padding(Ty),
}

/// clspv's padding of `bytes`: words where they divide it, else halves, else bytes.
fn padding(bytes: u64) -> Ty {
    match bytes {
        _ if bytes % 4 == 0 => Ty::Array(bytes / 4, Box::new(Ty::Scalar(4, "i32"))),
        _ if bytes % 2 == 0 => Ty::Array(bytes / 2, Box::new(Ty::Scalar(2, "i16"))),
        _ => Ty::Array(bytes, Box::new(Ty::Scalar(1, "i8"))),
    }
}

/// The type clspv's lowering gives `t` (itself where it holds no long vector); None where the
/// layout is not known or the lowered record would not keep the members' offsets.
fn lowered(types: &Types, t: &Ty, depth: usize) -> Option<Ty> {
    if !holds_long(types, t, 0) {
        return Some(t.clone());
    }
    if depth > MAX_DEPTH {
        return None;
    }
    Some(match types.resolve(t)? {
        Ty::Vector(n, e) => Ty::Array(*n, e.clone()),
        Ty::Array(n, e) => Ty::Array(*n, Box::new(lowered(types, e, depth + 1)?)),
        Ty::Record { packed, members } => Ty::Record {
            packed: *packed,
            members: slots(types, members, *packed, depth)?
                .into_iter()
                .map(|s| match s {
                    Slot::Member(_, t) | Slot::Padding(t) => t,
                })
                .collect(),
        },
        _ => return None,
    })
}

/// A lowered record's members (clspv's LongVectorLoweringPass::getEquivalentTypeImpl): each
/// member lowered, with padding before a lowered one that would otherwise move nearer (an
/// array is less aligned than the vector it replaces) and after the last where the record
/// would shrink. Checked: every member at its offset, the same size.
fn slots(types: &Types, members: &[Ty], packed: bool, depth: usize) -> Option<Vec<Slot>> {
    let offsets = member_offsets(types, members, packed)?;
    let mut out: Vec<Slot> = vec![];
    let tys = |out: &[Slot]| -> Vec<Ty> {
        out.iter()
            .map(|s| match s {
                Slot::Member(_, t) | Slot::Padding(t) => t.clone(),
            })
            .collect()
    };
    for (k, m) in members.iter().enumerate() {
        let low = lowered(types, m, depth + 1)?;
        let changed = low != *m;
        out.push(Slot::Member(k, low));
        if changed {
            let now = *member_offsets(types, &tys(&out), packed)?.last()?;
            if now != offsets[k] {
                let member = out.pop()?;
                out.push(Slot::Padding(padding(offsets[k].checked_sub(now)?)));
                out.push(member);
            }
        }
    }
    let record = |members| Ty::Record { packed, members };
    let (size, _) = types.layout(&record(members.to_vec()))?;
    let (new_size, _) = types.layout(&record(tys(&out)))?;
    if new_size != size {
        out.push(Slot::Padding(padding(size.checked_sub(new_size)?)));
    }
    // The members where they were, the record as large.
    let new_offsets = member_offsets(types, &tys(&out), packed)?;
    let kept = out.iter().zip(&new_offsets).all(|(s, o)| match s {
        Slot::Member(k, _) => offsets[*k] == *o,
        Slot::Padding(_) => true,
    });
    let same = types.layout(&record(tys(&out)))?.0 == size;
    (kept && same).then_some(out)
}

/// `t` as LLVM writes it.
fn show(t: &Ty) -> String {
    match t {
        Ty::Scalar(_, name) => name.to_string(),
        Ty::Named(name) => name.clone(),
        Ty::Array(n, e) => format!("[{n} x {}]", show(e)),
        Ty::Vector(n, e) => format!("<{n} x {}>", show(e)),
        Ty::Record { packed, members } => {
            let inner: Vec<String> = members.iter().map(show).collect();
            match packed {
                true => format!("<{{ {} }}>", inner.join(", ")),
                false => format!("{{ {} }}", inner.join(", ")),
            }
        }
    }
}

/// The elements of an aggregate constant written between `open` and `close`, each as its type
/// and its constant.
fn elements<'a>(c: &'a str, open: &str, close: &str) -> Option<Vec<(Ty, &'a str)>> {
    let inner = c.strip_prefix(open)?.strip_suffix(close)?.trim();
    if inner.is_empty() {
        return Some(vec![]);
    }
    super::wrapped_copy::split_args(inner)
        .into_iter()
        .map(|e| parse(e).map(|(t, rest)| (t, rest.trim())))
        .collect()
}

/// Constant `c` of type `t` written for the lowered type.
fn lowered_constant(types: &Types, t: &Ty, c: &str, depth: usize) -> Option<String> {
    let c = c.trim();
    if !holds_long(types, t, 0) || ["zeroinitializer", "undef", "poison"].contains(&c) {
        return Some(c.to_string());
    }
    if depth > MAX_DEPTH {
        return None;
    }
    // One element lowered, with its (lowered) type.
    let element = |t: &Ty, c: &str| -> Option<String> {
        Some(format!(
            "{} {}",
            show(&lowered(types, t, depth + 1)?),
            lowered_constant(types, t, c, depth + 1)?
        ))
    };
    match types.resolve(t)? {
        Ty::Vector(n, _) => {
            if let Some(inner) = c.strip_prefix("splat").map(str::trim) {
                let one = inner.strip_prefix('(')?.strip_suffix(')')?.trim();
                return Some(format!("[{}]", vec![one; *n as usize].join(", ")));
            }
            let inner = c.strip_prefix('<')?.strip_suffix('>')?;
            Some(format!("[{inner}]"))
        }
        Ty::Array(_, _) => {
            let parts: Option<Vec<String>> = elements(c, "[", "]")?
                .iter()
                .map(|(t, c)| element(t, c))
                .collect();
            Some(format!("[{}]", parts?.join(", ")))
        }
        Ty::Record { packed, members } => {
            let (open, close) = match packed {
                true => ("<{", "}>"),
                false => ("{", "}"),
            };
            let values = elements(c, open, close)?;
            if values.len() != members.len() {
                return None;
            }
            let mut parts = vec![];
            for s in slots(types, members, *packed, depth)? {
                parts.push(match s {
                    Slot::Member(k, _) => element(&values[k].0, values[k].1)?,
                    Slot::Padding(p) => format!("{} zeroinitializer", show(&p)),
                });
            }
            Some(format!("{open} {} {close}", parts.join(", ")))
        }
        _ => None,
    }
}

/// A global's definition line with its type (and initialiser) lowered; None where it holds no
/// long vector or this cannot lower it.
fn lowered_global(types: &Types, line: &str) -> Option<String> {
    let (name, def) = line.split_once(" = ")?;
    // Linkage and other words, then `global` or `constant`, then the type.
    let mut at = 0;
    let keyword_end = loop {
        let word_end = def[at..].find(' ').map(|i| at + i)?;
        let word = &def[at..word_end];
        if word == "global" || word == "constant" {
            break word_end + 1;
        }
        at = word_end + 1;
    };
    let (t, rest) = parse(&def[keyword_end..])?;
    if !holds_long(types, &t, 0) {
        return None;
    }
    let low = lowered(types, &t, 0)?;
    let rest = rest.trim_start();
    let (init, tail) = match rest.is_empty() || rest.starts_with(',') {
        true => (None, rest),
        false => {
            let first = super::wrapped_copy::split_args(rest)[0];
            let after = &rest[rest.find(first)? + first.len()..];
            (Some(lowered_constant(types, &t, first, 0)?), after)
        }
    };
    let init = init.map(|c| format!(" {c}")).unwrap_or_default();
    Some(format!(
        "{name} = {}{}{init}{tail}",
        &def[..keyword_end],
        show(&low)
    ))
}

/// `ll` with every global that holds an 8- or 16-component vector given its lowered type and
/// initialiser (see the module comment); None when there is none. Where a `__constant` one
/// changed, the `__constant` globals are ordered by alignment too ([`by_alignment`]).
pub(super) fn patch(ll: &str) -> Option<String> {
    if !ll.contains(" x ") {
        return None;
    }
    let types = Types::of_module(ll);
    let mut lines: Vec<String> = vec![];
    let (mut changed, mut constants) = (false, false);
    for line in ll.lines() {
        match line
            .starts_with('@')
            .then(|| lowered_global(&types, line))
            .flatten()
        {
            Some(new) => {
                constants |= alignment(&new).is_some();
                lines.push(new);
                changed = true;
            }
            None => lines.push(line.to_string()),
        }
    }
    if constants {
        by_alignment(&mut lines);
    }
    changed.then(|| lines.join("\n") + "\n")
}

/// The alignment of an initialised `__constant` global's definition line (None for any other
/// line, or one without an alignment).
fn alignment(line: &str) -> Option<u64> {
    let (_, def) = line.strip_prefix('@')?.split_once(" = ")?;
    if !def.contains("addrspace(2) constant ") || def.contains("section \"llvm.metadata\"") {
        return None;
    }
    let (_, align) = def.rsplit_once(", align ")?;
    align.split(',').next()?.trim().parse().ok()
}

/// The initialised `__constant` globals' definitions reordered, in the places they had, from
/// the most aligned to the least (stably). clspv gathers them into one struct in module order
/// (ClusterModuleScopeConstantVars, `-module-constants-in-storage-buffer`) and adds a padding
/// member before one whose alignment its offset misses, which a lowered vector's alignment
/// (the global's, above its array type's) can; from the second padding member on it uses
/// wrong member indices (it counts padding members in a set, so only the first), and a
/// private array copied from a constant read another constant's data. Each one's size is a
/// multiple of its alignment, so in this order none needs padding. Left as they are where a
/// definition gives no alignment.
fn by_alignment(lines: &mut [String]) {
    let at: Vec<usize> = (0..lines.len())
        .filter(|&k| lines[k].starts_with('@') && lines[k].contains(" addrspace(2) constant "))
        .filter(|&k| !lines[k].contains("section \"llvm.metadata\""))
        .collect();
    let Some(mut defs) = at
        .iter()
        .map(|&k| Some((alignment(&lines[k])?, lines[k].clone())))
        .collect::<Option<Vec<(u64, String)>>>()
    else {
        return;
    };
    defs.sort_by(|a, b| b.0.cmp(&a.0));
    for (&k, (_, line)) in at.iter().zip(defs) {
        lines[k] = line;
    }
}

/// Whether `source` may declare a module-scope variable holding an 8- or 16-component vector:
/// it names such a vector type (`int8`, `float16`, ...) and `__local`, `__constant` or
/// `static` outside parentheses (not a parameter's address space), an initialiser in braces (a private array or struct copied from a constant) or
/// a program-scope `global` variable; names in macro definitions count (`#define AS local`),
/// and there `global` too. Only those programs go through the IR.
pub(super) fn may_declare(source: &[u8]) -> bool {
    use super::pipes::Kind;
    let text = String::from_utf8_lossy(source);
    let (tokens, directives) = super::source_edit::code_tokens(&text);
    let storage_word = |w: &str| {
        matches!(
            w,
            "local" | "__local" | "constant" | "__constant" | "static"
        )
    };
    let mut vector = false;
    let mut storage = super::globals::declares_writable_globals(source)
        || declares_program_scope_variable(&text, &tokens);
    for &(start, end) in &directives {
        for w in text[start..end].split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            vector |= is_long_vector_type(w);
            storage |= storage_word(w) || w == "global" || w == "__global";
        }
    }
    let (mut last_equals, mut parens) = (false, 0usize);
    for t in &tokens {
        let word = &text[t.start..t.end];
        match t.kind {
            Kind::Ident => {
                vector |= is_long_vector_type(word);
                // Not a parameter's or a cast's address space.
                storage |= parens == 0 && storage_word(word);
            }
            Kind::Punct(b'(') => parens += 1,
            Kind::Punct(b')') => parens = parens.saturating_sub(1),
            Kind::Punct(b'{') if last_equals => storage = true,
            _ => {}
        }
        last_equals = word == "=";
        if vector && storage {
            return true;
        }
    }
    vector && storage
}

/// Whether `tokens` (of `text`) hold a declaration at program scope that is not a typedef nor
/// a function: a statement ended by `;` outside braces with no `(` before its first `=`
/// (`int8 a[2];`, a program-scope variable in the global address space without the word;
/// `struct S { ... } s;` counts from after its `}`).
fn declares_program_scope_variable(text: &str, tokens: &[super::pipes::Token]) -> bool {
    use super::pipes::Kind;
    let (mut braces, mut parens) = (0usize, 0usize);
    let mut statement: Vec<&str> = vec![];
    for t in tokens {
        let word = &text[t.start..t.end];
        match t.kind {
            Kind::Punct(b'{') => braces += 1,
            Kind::Punct(b'}') => {
                braces = braces.saturating_sub(1);
                if braces == 0 {
                    statement.clear();
                }
                continue;
            }
            Kind::Punct(b'(') => parens += 1,
            Kind::Punct(b')') => parens = parens.saturating_sub(1),
            Kind::Punct(b';') if braces == 0 && parens == 0 => {
                let before_init = statement.iter().take_while(|w| **w != "=");
                let function = before_init.clone().any(|w| *w == "(");
                if !statement.is_empty() && statement[0] != "typedef" && !function {
                    return true;
                }
                statement.clear();
                continue;
            }
            _ => {}
        }
        if braces == 0 {
            statement.push(word);
        }
    }
    false
}

/// `int8`, `uchar16`, `double8`, ...: an OpenCL C vector type of 8 or 16 components.
fn is_long_vector_type(word: &str) -> bool {
    const SCALARS: [&str; 11] = [
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float",
        "double",
    ];
    let Some(scalar) = word.strip_suffix("16").or_else(|| word.strip_suffix('8')) else {
        return false;
    };
    SCALARS.contains(&scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(ll: &str) -> String {
        patch(ll).unwrap_or_else(|| ll.to_string())
    }

    #[test]
    fn arrays_of_long_vectors_become_arrays_of_arrays() {
        let ll = "@k.a = internal addrspace(3) global [2 x <8 x i32>] undef, align 32\n";
        assert_eq!(
            lower(ll),
            "@k.a = internal addrspace(3) global [2 x [8 x i32]] undef, align 32\n"
        );
    }

    #[test]
    fn initialisers_are_written_out() {
        let ll = "@a = addrspace(1) global [2 x <8 x i32>] [<8 x i32> splat (i32 1), \
                  <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>], align 32\n";
        assert_eq!(
            lower(ll),
            "@a = addrspace(1) global [2 x [8 x i32]] [[8 x i32] [i32 1, i32 1, i32 1, i32 1, \
             i32 1, i32 1, i32 1, i32 1], [8 x i32] [i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, \
             i32 6, i32 7]], align 32\n"
        );
    }

    #[test]
    fn records_keep_their_layout() {
        // clang's explicit padding: nothing to add.
        let ll = "@s = addrspace(1) global { i8, [63 x i8], <16 x i32> } { i8 1, [63 x i8] \
                  zeroinitializer, <16 x i32> splat (i32 3) }, align 64\n";
        let want = format!(
            "@s = addrspace(1) global {{ i8, [63 x i8], [16 x i32] }} {{ i8 1, [63 x i8] \
             zeroinitializer, [16 x i32] [{}] }}, align 64\n",
            vec!["i32 3"; 16].join(", ")
        );
        assert_eq!(lower(ll), want);
        // A named record: padding before the vector's array and none after (as clspv).
        let ll = "%struct.S = type { i8, <16 x i32> }\n\
                  @v = addrspace(1) global %struct.S zeroinitializer, align 64\n\
                  @w = addrspace(1) global [2 x %struct.S] [%struct.S { i8 2, <16 x i32> \
                  zeroinitializer }, %struct.S zeroinitializer], align 64\n";
        assert_eq!(
            lower(ll),
            "%struct.S = type { i8, <16 x i32> }\n\
             @v = addrspace(1) global { i8, [15 x i32], [16 x i32] } zeroinitializer, align 64\n\
             @w = addrspace(1) global [2 x { i8, [15 x i32], [16 x i32] }] [{ i8, [15 x i32], \
             [16 x i32] } { i8 2, [15 x i32] zeroinitializer, [16 x i32] zeroinitializer }, \
             { i8, [15 x i32], [16 x i32] } zeroinitializer], align 64\n"
        );
    }

    #[test]
    fn constants_are_ordered_by_alignment() {
        let ll = "@a = addrspace(2) constant [2 x <8 x i8>] zeroinitializer, align 8\n\
                  @b = addrspace(2) constant [2 x <8 x i64>] zeroinitializer, align 64\n\
                  define void @k() {\n\
                  @.str = private unnamed_addr addrspace(2) constant [7 x i8] c\"kernel\\00\", \
                  section \"llvm.metadata\"\n\
                  @c = private addrspace(2) constant [3 x i32] [i32 1, i32 2, i32 3], align 4\n\
                  @d = private addrspace(2) constant [1 x <16 x i64>] zeroinitializer, align 128\n";
        assert_eq!(
            lower(ll),
            "@d = private addrspace(2) constant [1 x [16 x i64]] zeroinitializer, align 128\n\
             @b = addrspace(2) constant [2 x [8 x i64]] zeroinitializer, align 64\n\
             define void @k() {\n\
             @.str = private unnamed_addr addrspace(2) constant [7 x i8] c\"kernel\\00\", \
             section \"llvm.metadata\"\n\
             @a = addrspace(2) constant [2 x [8 x i8]] zeroinitializer, align 8\n\
             @c = private addrspace(2) constant [3 x i32] [i32 1, i32 2, i32 3], align 4\n"
        );
    }

    #[test]
    fn other_globals_are_left_alone() {
        let ll = "@a = addrspace(1) global [2 x <4 x i32>] zeroinitializer, align 16\n\
                  @s = private unnamed_addr addrspace(2) constant [7 x i8] c\"k, <8\\00\"\n\
                  @p = addrspace(1) global { ptr addrspace(1), <8 x i32> } zeroinitializer\n";
        assert_eq!(patch(ll), None);
    }

    #[test]
    fn programs_that_may_declare_them() {
        assert!(may_declare(
            b"kernel void k(global int8 *d) { local int8 a[2]; }"
        ));
        assert!(may_declare(b"global float16 g[2]; kernel void k() {}"));
        assert!(may_declare(
            b"kernel void k(global int *d) { int8 a[2] = {1}; }"
        ));
        assert!(!may_declare(
            b"kernel void k(global int8 *d) { d[0] = d[1]; }"
        ));
        assert!(!may_declare(
            b"kernel void k(global int *d) { local int4 a[2]; }"
        ));
        assert!(may_declare(
            b"#define AS local\nkernel void k(global int8 *d) { AS int8 a[2]; }"
        ));
        assert!(may_declare(
            b"#define T int16\nglobal T g[2]; kernel void k() {}"
        ));
    }
}
