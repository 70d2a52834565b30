//! Whole-record copies rewritten in the LLVM IR before clspv's own passes see them.
//!
//! clang copies a struct with `llvm.memcpy`, and clspv 0.0.1 lowers those copies wrongly or
//! never:
//! - it never finishes one whose two sides it types differently while one is the other's first
//!   member at offset 0: with `struct w { scan_t v; }`, `t = x[i].v` is a 16-byte memcpy from a
//!   `%struct.w` pointer (clang emits no GEP for a member at offset 0) to a `%struct.scan_t`
//!   one, and clspv loops on it for ever, printing the call to stderr at each turn (pyopencl's
//!   scan kernels copy `psc_ldata[k][i].psc_value`, a `__local` array of such wrappers);
//! - in pyopencl's scan it stored every `out[base + off] = l[off % 128][off / 128]` (both
//!   sides `scan_t`) to `out[0]`.
//!
//! So programs that name a record are first compiled to LLVM IR (`-output-format=ll`, which
//! stops before clspv's passes); every memcpy whose two sides reach, through first members and
//! array elements (all at offset 0), one record type of the copy's size becomes a load and a
//! store of that type ([`patch`]), which clspv lowers right, and the IR is compiled (`-x ir`).
//! Copies this cannot type are left as they are; programs with none are compiled from the
//! source as before.

use super::flat_copies::leaf_align;
use super::Compile;
use std::collections::HashMap;

/// Compiles OpenCL C `sources` with `options` through `compile`, by way of the patched IR when
/// [`patch`] changes it (see the module comment).
/// `generic`: the program may choose a generic pointer's address space at run time, which
/// the IR is checked for first (super::generic_spaces).
pub fn compile(
    sources: &[&[u8]],
    options: &str,
    generic: bool,
    compile: &Compile,
) -> Result<(Vec<u8>, String), super::CompileError> {
    let records = |s: &&[u8]| {
        [&b"struct"[..], b"union"]
            .iter()
            .any(|w| s.windows(w.len()).any(|x| x == *w))
    };
    // Volatile pointer variables, which crash clspv (super::volatile_pointers), too.
    let volatile = sources
        .iter()
        .any(|s| super::volatile_pointers::declares(s));
    // Objects (clCompileProgram's bitcode) are compiled as they are.
    // Module-scope variables of 8- and 16-component vectors (super::long_vector_globals).
    let long_vectors = sources
        .iter()
        .any(|s| super::long_vector_globals::may_declare(s));
    let patches = sources.iter().any(records) || volatile || long_vectors;
    if !(patches || generic) || options.contains("-output-format") {
        return compile(sources, options);
    }
    let start = std::time::Instant::now();
    let Ok((ll, front_log)) = compile(sources, &format!("{options} -output-format=ll")) else {
        return compile(sources, options);
    };
    let ll = String::from_utf8_lossy(&ll);
    let physical = options.contains("-physical-storage-buffers");
    // A physical build that needs a `__local` or private variable's address is made flat too;
    // checked where the IR is made anyway.
    let addresses = physical && super::generic_flat::takes_addresses(&ll);
    if generic || addresses {
        let ir = start.elapsed();
        let found = match generic {
            true => super::generic_spaces::find(&ll),
            false => None,
        };
        let found = found.or_else(|| addresses.then(|| ADDRESSES.to_string()));
        log::debug!(
            target: "compiler",
            "generic address spaces checked in {:.1} ms ({:.1} ms of IR, {} bytes)",
            1e3 * start.elapsed().as_secs_f64(),
            1e3 * ir.as_secs_f64(),
            ll.len()
        );
        if let Some(log) = found {
            // Physical-addressing builds are made flat (super::generic_flat); logical ones
            // fail, and the runtime tries the physical build next where the device can.
            let failed = |why: String| super::CompileError::Failed {
                log: format!("{front_log}{log}{why}"),
            };
            if !physical {
                return Err(failed(String::new()));
            }
            // The IR before and after, for bug reports (VKCL_DUMP_DIR).
            super::dump_file(".ll", ll.as_bytes());
            let flat =
                super::generic_flat::rewrite(&patched_ir(&ll).unwrap_or_else(|| ll.to_string()))
                    .map_err(|why| failed(format!("note: {why}\n")))?;
            super::dump_file("-flat.ll", flat.as_bytes());
            return match compile(&[flat.as_bytes()], &format!("{options} -x ir")) {
                Ok((out, log)) => Ok((out, front_log + &log)),
                Err(e) => {
                    log::debug!(target: "compiler", "the flat build failed: {e}");
                    Err(failed(String::new()))
                }
            };
        }
    }
    if !patches {
        return compile(sources, options);
    }
    let Some(patched) = patched_ir(&ll) else {
        return compile(sources, options);
    };
    // The IR before and after, for bug reports (VKCL_DUMP_DIR).
    super::dump_file(".ll", ll.as_bytes());
    super::dump_file("-patched.ll", patched.as_bytes());
    match compile(&[patched.as_bytes()], &format!("{options} -x ir")) {
        Ok((out, log)) => Ok((out, front_log + &log)),
        // What clspv refuses from the IR is built from the source, as before.
        Err(_) => compile(sources, options),
    }
}

/// The log of a physical build needing a `__local` or private variable's address that could
/// not be made flat.
const ADDRESSES: &str = "the address of a __local or private variable kept as a number or in \
                         memory (a physical-addressing build) is supported only where the \
                         build can lay those variables out in global memory\n";

/// `ll` with this module's patches (None: none applies): volatile pointer variables made
/// ordinary (super::volatile_pointers), private records reached through pointers
/// (super::flat_records), `__local` structs' tail padding as members (super::padded_locals),
/// the copies, then globals of 8- and 16-component
/// vectors given their lowered types (super::long_vector_globals).
fn patched_ir(ll: &str) -> Option<String> {
    let ordinary = super::volatile_pointers::patch(ll);
    let patched = patched_records(ordinary.as_deref().unwrap_or(ll)).or(ordinary);
    let lowered = super::long_vector_globals::patch(patched.as_deref().unwrap_or(ll));
    lowered.or(patched)
}

fn patched_records(ll: &str) -> Option<String> {
    let flat = super::flat_records::patch(ll);
    let flat = super::padded_locals::patch(flat.as_deref().unwrap_or(ll)).or(flat);
    patch(flat.as_deref().unwrap_or(ll)).or(flat)
}

/// A type as LLVM writes it, parsed.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Ty {
    /// Size in bytes and LLVM name (`float` and `i32` are different types).
    Scalar(u64, &'static str),
    Named(String),
    Array(u64, Box<Ty>),
    Vector(u64, Box<Ty>),
    Record {
        packed: bool,
        members: Vec<Ty>,
    },
}

/// Parses one type at the start of `s`; returns it and the rest.
pub(super) fn parse(s: &str) -> Option<(Ty, &str)> {
    let s = s.trim_start();
    let (close, packed) = match s {
        _ if s.starts_with("<{") => (Some("}>"), true),
        _ if s.starts_with('{') => (Some("}"), false),
        _ => (None, false),
    };
    if let Some(close) = close {
        let mut rest = s[if packed { 2 } else { 1 }..].trim_start();
        let mut members = vec![];
        while !rest.starts_with(close) {
            let (t, r) = parse(rest)?;
            members.push(t);
            rest = r.trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        }
        return Some((Ty::Record { packed, members }, &rest[close.len()..]));
    }
    if let Some(inner) = s.strip_prefix('[').or_else(|| s.strip_prefix('<')) {
        let (n, rest) = inner.split_once(" x ")?;
        let (t, rest) = parse(rest)?;
        let rest = rest.trim_start();
        let rest = rest.strip_prefix(']').or_else(|| rest.strip_prefix('>'))?;
        let n = n.trim().parse().ok()?;
        let t = Box::new(t);
        return Some((
            match s.starts_with('[') {
                true => Ty::Array(n, t),
                false => Ty::Vector(n, t),
            },
            rest,
        ));
    }
    let end = s
        .find(|c: char| c.is_whitespace() || ",)]}>".contains(c))
        .unwrap_or(s.len());
    let (word, rest) = s.split_at(end);
    const SCALARS: [(&str, u64); 9] = [
        ("half", 2),
        ("i16", 2),
        ("bfloat", 2),
        ("float", 4),
        ("i32", 4),
        ("double", 8),
        ("i64", 8),
        ("i8", 1),
        ("i1", 1),
    ];
    if word.starts_with('%') {
        return Some((Ty::Named(word.to_string()), rest));
    }
    let &(name, bytes) = SCALARS.iter().find(|(name, _)| *name == word)?;
    Some((Ty::Scalar(bytes, name), rest))
}

pub(super) struct Types {
    pub(super) named: HashMap<String, Ty>,
}

impl Types {
    /// The named types (`%name = type ...`) of module `ll`.
    pub(super) fn of_module(ll: &str) -> Types {
        let mut named = HashMap::new();
        for line in ll.lines() {
            if let Some((name, def)) = line.split_once(" = type ") {
                if let Some((t, _)) = parse(def) {
                    named.insert(name.trim().to_string(), t);
                }
            }
        }
        Types { named }
    }

    pub(super) fn resolve<'a>(&'a self, t: &'a Ty) -> Option<&'a Ty> {
        match t {
            Ty::Named(n) => self.named.get(n),
            t => Some(t),
        }
    }

    /// (size, alignment) in bytes, as LLVM lays the type out (pointers are not handled).
    pub(super) fn layout(&self, t: &Ty) -> Option<(u64, u64)> {
        Some(match self.resolve(t)? {
            Ty::Scalar(n, _) => (*n, *n),
            Ty::Named(_) => return None,
            Ty::Array(n, e) => {
                let (s, a) = self.layout(e)?;
                (n * s.next_multiple_of(a), a)
            }
            Ty::Vector(n, e) => {
                let (s, _) = self.layout(e)?;
                let total = s * if *n == 3 { 4 } else { *n };
                (total, total)
            }
            Ty::Record { packed, members } => {
                let (mut size, mut align) = (0u64, 1u64);
                for m in members {
                    let (s, a) = self.layout(m)?;
                    let a = if *packed { 1 } else { a };
                    size = size.next_multiple_of(a) + s;
                    align = align.max(a);
                }
                (size.next_multiple_of(align), align)
            }
        })
    }

    /// The type at offset 0 one level down: an array's element, a record's first member.
    fn first(&self, t: &Ty) -> Option<Ty> {
        match self.resolve(t)? {
            Ty::Array(_, e) => Some((**e).clone()),
            Ty::Record { members, .. } => members.first().cloned(),
            _ => None,
        }
    }

    /// The element type a GEP with source type `t` and `indices` (after the first) points to.
    fn gep(&self, mut t: Ty, indices: &[&str]) -> Option<Ty> {
        for i in indices {
            t = match self.resolve(&t)? {
                Ty::Array(_, e) | Ty::Vector(_, e) => (**e).clone(),
                Ty::Record { members, .. } => {
                    let k: usize = i.trim().strip_prefix("i32 ")?.trim().parse().ok()?;
                    members.get(k)?.clone()
                }
                _ => return None,
            };
        }
        Some(t)
    }

    /// `t`, its first member or element, that one's, and so on.
    pub(super) fn chain(&self, t: Ty) -> Vec<Ty> {
        let mut v = vec![t];
        while let Some(next) = v.last().and_then(|t| self.first(t)) {
            if v.len() > 32 {
                break;
            }
            v.push(next);
        }
        v
    }
}

/// `s` split at its commas outside brackets, parentheses and string literals.
pub(super) fn split_args(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start, mut quoted) = (vec![], 0i32, 0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            _ if quoted => {}
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// A GEP's text after `getelementptr` (flags, then `TYPE, ptr BASE, indices`): the element
/// type it points to.
pub(super) fn gep_type(types: &Types, text: &str) -> Option<Ty> {
    let mut rest = text.trim_start();
    for flag in ["inbounds", "nuw", "nusw"] {
        rest = rest.strip_prefix(flag).unwrap_or(rest).trim_start();
    }
    let rest = rest.strip_prefix('(').unwrap_or(rest);
    let (t, rest) = parse(rest)?;
    let args = split_args(rest.trim_start().strip_prefix(',')?);
    types.gep(t, args.get(2..)?)
}

/// The type a pointer operand (`ptr addrspace(3) align 4 %x`) points to, where its definition
/// says: an alloca, a GEP (instruction or constant expression) or a global.
pub(super) fn pointee(types: &Types, defs: &HashMap<&str, Ty>, arg: &str) -> Option<Ty> {
    let at = arg
        .find(['%', '@'])
        .into_iter()
        .chain(arg.find("getelementptr"));
    let at = at.min()?;
    let value = arg[at..].trim();
    match value.strip_prefix("getelementptr") {
        Some(expr) => gep_type(types, expr.trim_end().strip_suffix(')')?),
        None => defs.get(value).cloned(),
    }
}

/// `ll` with every memcpy of a record (the same on both sides, or one side's first member at
/// any depth) replaced by a load and store of that record; None when there is none.
pub fn patch(ll: &str) -> Option<String> {
    let types = Types::of_module(ll);
    let mut globals: HashMap<&str, Ty> = HashMap::new();
    for line in ll.lines().filter(|l| l.starts_with('@')) {
        let Some((name, def)) = line.split_once(" = ") else {
            continue;
        };
        let t = [" global ", " constant "]
            .iter()
            .find_map(|k| def.find(k).map(|i| &def[i + k.len()..]))
            .and_then(parse);
        if let Some((t, _)) = t {
            globals.insert(name, t);
        }
    }
    let mut out = String::with_capacity(ll.len() + 1024);
    let mut defs = globals.clone();
    let mut count = 0;
    // The copies of a function's `byval` records, put after its first label. (Parameters
    // without a name, `%0`, cannot be renamed: then no `byval` is left out anywhere.)
    let mut prologue = None;
    let byval_named = ll
        .lines()
        .filter(|l| l.starts_with("define "))
        .flat_map(|l| byval_parameters(&types, l))
        .all(|(v, ..)| !v[1..].starts_with(|c: char| c.is_ascii_digit()));
    for line in ll.lines() {
        if line.starts_with("define ") {
            defs = globals.clone();
            let byval = match byval_named {
                true => byval_parameters(&types, line),
                false => vec![],
            };
            if !byval.is_empty() {
                let copies = byval.iter().enumerate().map(|(k, (v, name, align))| {
                    let from = ("ptr", *align, format!("{v}.byval"));
                    let copy = leaf_copies(
                        &types,
                        name,
                        &from,
                        &("ptr", *align, v.to_string()),
                        "  ",
                        &format!("b{k}"),
                    );
                    format!("  {v} = alloca {name}, align {align}\n{copy}\n")
                });
                prologue = Some(copies.collect::<String>());
                out += &without_byval(&types, line, true);
                out.push('\n');
                count += 1;
            }
            defs.extend(byval.into_iter().map(|(v, t, _)| (v, Ty::Named(t))));
            if prologue.is_some() {
                continue;
            }
        }
        if let Some(copies) = prologue.take() {
            // After the entry block's label (where it has one), so the copies open it.
            let label = line.ends_with(':') && !line.starts_with(' ');
            if label {
                out += line;
                out.push('\n');
            }
            out += &copies;
            if label {
                continue;
            }
        }
        let call = line.contains("call ") || line.starts_with("declare ");
        if byval_named && call && line.contains("byval(") {
            let stripped = without_byval(&types, line, false);
            if stripped != line {
                out += &stripped;
                out.push('\n');
                count += 1;
                continue;
            }
        }
        if let Some((name, def)) = line.trim_start().split_once(" = ") {
            let t = match def.split_once(' ') {
                Some(("alloca", rest)) => parse(rest).map(|(t, _)| t),
                Some(("getelementptr", rest)) => gep_type(&types, rest),
                _ => None,
            };
            if let Some(t) = t {
                defs.insert(name, t);
            }
        }
        match copy(&types, &defs, line, count) {
            Some(replacement) => {
                out += &replacement;
                count += 1;
            }
            None => out += line,
        }
        out.push('\n');
    }
    (count > 0).then_some(out)
}

/// The load and store for the memcpy on `line`, if it copies a record (see [`patch`]).
fn copy(types: &Types, defs: &HashMap<&str, Ty>, line: &str, n: usize) -> Option<String> {
    let at = line.find("call void @llvm.memcpy.p")?;
    let args = &line[at..];
    let args = &args[args.find('(')? + 1..];
    let end = args.rfind(')')?;
    let args = split_args(&args[..end]);
    let [dst, src, size, volatile] = args.as_slice() else {
        return None;
    };
    let size: u64 = super::flat_layout::index_value(size)?.parse().ok()?;
    if *volatile != "i1 false" {
        return None;
    }
    let (d, s) = (pointee(types, defs, dst)?, pointee(types, defs, src)?);
    let (dc, sc) = (types.chain(d), types.chain(s));
    let sized = |t: &&Ty| {
        matches!(types.resolve(t), Some(Ty::Record { .. }))
            && types.layout(t).map(|l| l.0) == Some(size)
    };
    let common = dc.iter().filter(sized).find(|t| sc.contains(t)).cloned();
    // A constant's literal type: the record with its padding as bytes (clang's
    // `{ %struct.pair, i32, [4 x i8] }` for a `%struct.vector` initializer).
    let padded = |chain: &[Ty], other: &[Ty]| {
        let t = chain.iter().find(sized)?;
        padded_literal(types, t, other.first()?).then(|| t.clone())
    };
    let common = common
        .or_else(|| padded(&dc, &sc))
        .or_else(|| padded(&sc, &dc))?;
    let Ty::Named(name) = &common else {
        return None;
    };
    let operand = |arg: &str| -> Option<(String, String, String)> {
        let at = arg
            .find(['%', '@'])
            .into_iter()
            .chain(arg.find("getelementptr"));
        let at = at.min()?;
        let head = &arg[..at];
        let ptr = head.split(" align").next()?.trim().to_string();
        let align = head
            .split_once("align ")
            .and_then(|(_, a)| a.split_whitespace().next())
            .unwrap_or("1")
            .to_string();
        Some((ptr, align, arg[at..].trim().to_string()))
    };
    let (dp, da, dv) = operand(dst)?;
    let (sp, sa, sv) = operand(src)?;
    let indent = &line[..line.len() - line.trim_start().len()];
    let align = |a: String| a.parse().unwrap_or(1);
    Some(leaf_copies(
        types,
        name,
        &(&sp, align(sa), sv),
        &(&dp, align(da), dv),
        indent,
        &n.to_string(),
    ))
}

/// A side of a copy: the pointer's type, its alignment and its value.
type Side<'a> = (&'a str, u64, String);

/// The copy of a record `name` from `src` to `dst`, its values named after `n`: one load and
/// one store of the record; leaf by leaf where the record has padding (and few leaves), as
/// clspv never finishes some whole-record loads and stores of such records (of
/// `{ <2 x float>, <2 x float>, i32 }`, ffmpeg's deshake filter's MotionVector). (Leaf by leaf
/// everywhere would meet clspv's packed-struct rewrite, which misreads unions' members:
/// tests/structs_by_value.rs `complex_scalar_times_array`.)
fn leaf_copies(types: &Types, name: &str, src: &Side, dst: &Side, indent: &str, n: &str) -> String {
    let ((sp, sa, sv), (dp, da, dv)) = (src, dst);
    let leaves = padded_leaves(types, name).filter(|l| l.len() <= MAX_COPY_LEAVES);
    let Some(leaves) = leaves else {
        return format!(
            "{indent}%__vkcl_copy.{n} = load {name}, {sp} {sv}, align {sa}\n\
             {indent}store {name} %__vkcl_copy.{n}, {dp} {dv}, align {da}"
        );
    };
    let copies: Vec<String> = leaves
        .iter()
        .enumerate()
        .map(|(w, leaf)| {
            let at: String = leaf.path.iter().map(|i| format!(", i32 {i}")).collect();
            let v = format!("%__vkcl_copy.{n}.{w}");
            format!(
                "{indent}{v}s = getelementptr inbounds {name}, {sp} {sv}, i32 0{at}\n\
                 {indent}{v} = load {t}, {sp} {v}s, align {a}\n\
                 {indent}{v}d = getelementptr inbounds {name}, {dp} {dv}, i32 0{at}\n\
                 {indent}store {t} {v}, {dp} {v}d, align {b}",
                t = leaf.ty(),
                a = leaf_align(leaf).min(*sa),
                b = leaf_align(leaf).min(*da),
            )
        })
        .collect();
    copies.join("\n")
}

/// The leaves (vectors whole) of record `name` where it has padding: bytes that no leaf covers.
fn padded_leaves(types: &Types, name: &str) -> Option<Vec<super::flat_layout::Leaf>> {
    let t = Ty::Named(name.to_string());
    let leaves = super::flat_layout::leaves_and_vectors(types, &t)?;
    let covered: u64 = leaves.iter().map(|l| l.size).sum();
    (!leaves.is_empty() && covered < types.layout(&t)?.0).then_some(leaves)
}

/// Whether `literal` is the literal record type clang gives a constant of `record`: the same
/// leaves at the same offsets, and bytes (`i8`) where `record` has padding.
fn padded_literal(types: &Types, record: &Ty, literal: &Ty) -> bool {
    let leaves = |t| super::flat_layout::leaves_and_vectors(types, t);
    let (Ty::Record { .. }, Some(want), Some(have)) = (literal, leaves(record), leaves(literal))
    else {
        return false;
    };
    let leaf = |l: &super::flat_layout::Leaf| (l.offset, l.size, l.ty());
    let want: Vec<_> = want.iter().map(leaf).collect();
    let (kept, extra): (Vec<_>, Vec<_>) = have.iter().partition(|l| want.contains(&leaf(l)));
    kept.len() == want.len()
        && extra.iter().all(|l| l.name == "i8")
        && types.layout(record).map(|l| l.0) == types.layout(literal).map(|l| l.0)
}

/// The `byval` record parameters of the function a `define` line starts: (name, the record
/// type's name, the alignment).
fn byval_parameters<'a>(types: &Types, line: &'a str) -> Vec<(&'a str, String, u64)> {
    let Some(params) = line.split_once('(').and_then(|(_, p)| p.rsplit_once(')')) else {
        return vec![];
    };
    split_args(params.0)
        .into_iter()
        .filter_map(|p| {
            let (_, rest) = p.split_once("byval(")?;
            let (Ty::Named(t), rest) = parse(rest)? else {
                return None;
            };
            padded_leaves(types, &t)?;
            let align = rest
                .split_once("align ")
                .and_then(|(_, a)| a.split(' ').next());
            let name = p.rsplit(' ').next().filter(|n| n.starts_with('%'))?;
            Some((name, t, align.and_then(|a| a.parse().ok()).unwrap_or(1)))
        })
        .collect()
}

/// `line` with its `byval(TYPE) [align N]` attributes left out: clspv never finishes some
/// records passed so (the deshake filter's MotionVector). A function's own parameters
/// (`params`) are renamed `NAME.byval`: the function copies them into locals of their old
/// names first (see [`patch`]), as `byval` made the call do.
fn without_byval(types: &Types, line: &str, params: bool) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    // Only padded records' (those byval_parameters gives a copy).
    while let Some(at) = rest.find(" byval(%") {
        let after = &rest[at + " byval(".len()..];
        let Some((Ty::Named(t), tail)) = parse(after) else {
            return line.to_string();
        };
        let Some(tail) = tail.strip_prefix(')') else {
            return line.to_string();
        };
        if padded_leaves(types, &t).is_none() {
            out += &rest[..rest.len() - tail.len()];
            rest = tail;
            continue;
        }
        out += &rest[..at];
        let tail = match tail.strip_prefix(" align ") {
            Some(a) => a.trim_start_matches(|c: char| c.is_ascii_digit()),
            None => tail,
        };
        rest = tail;
        if params {
            // The parameter's name follows: `... %v,` or `... %v)`.
            let end = rest.find([',', ')']).unwrap_or(rest.len());
            let (head, tail) = rest.split_at(end);
            out += head;
            out += ".byval";
            rest = tail;
        }
    }
    out + rest
}

/// More leaves than this and a record is copied by one load and store of the whole record.
const MAX_COPY_LEAVES: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    const LL: &str = "%struct.scan_t = type { i32, i32, i32, i32 }\n\
        %struct.w = type { %struct.scan_t }\n\
        @k.l = internal addrspace(3) global [129 x [9 x %struct.w]] undef, align 4\n\
        define void @k(ptr addrspace(1) %o, i32 %i) {\n\
        entry:\n\
        \x20 %t = alloca %struct.scan_t, align 4\n\
        \x20 %a = getelementptr inbounds [129 x [9 x %struct.w]], ptr addrspace(3) @k.l, i32 0, i32 %i\n\
        \x20 %b = getelementptr inbounds [9 x %struct.w], ptr addrspace(3) %a, i32 0, i32 %i\n\
        \x20 call void @llvm.memcpy.p0.p3.i32(ptr align 4 %t, ptr addrspace(3) align 4 %b, i32 16, i1 false), !noalias !15\n\
        \x20 call void @llvm.memcpy.p0.p3.i32(ptr align 4 %t, ptr addrspace(3) align 4 @k.l, i32 16, i1 false)\n\
        \x20 call void @llvm.memcpy.p0.p3.i32(ptr align 4 %t, ptr addrspace(3) align 4 getelementptr inbounds ([9 x %struct.w], ptr addrspace(3) @k.l, i32 0, i32 7), i32 16, i1 false)\n\
        \x20 call void @llvm.memcpy.p3.p0.i32(ptr addrspace(3) align 4 %b, ptr align 4 %t, i32 16, i1 false)\n\
        \x20 call void @llvm.memcpy.p0.p0.i32(ptr align 4 %t, ptr align 4 %t, i32 16, i1 false)\n\
        \x20 call void @llvm.memcpy.p0.p3.i32(ptr align 4 %t, ptr addrspace(3) align 4 %b, i32 32, i1 false)\n\
        \x20 ret void\n}\n";

    #[test]
    fn record_copies_become_load_and_store() {
        let out = patch(LL).expect("patched");
        assert_eq!(out.matches("call void @llvm.memcpy").count(), 1, "{out}");
        assert!(out.contains(
            "  %__vkcl_copy.0 = load %struct.scan_t, ptr addrspace(3) %b, align 4\n  \
             store %struct.scan_t %__vkcl_copy.0, ptr %t, align 4\n"
        ));
        assert!(out.contains("load %struct.scan_t, ptr addrspace(3) @k.l, align 4"));
        assert!(out.contains(
            "load %struct.scan_t, ptr addrspace(3) getelementptr inbounds ([9 x %struct.w], \
             ptr addrspace(3) @k.l, i32 0, i32 7), align 4"
        ));
        assert!(out.contains("store %struct.scan_t %__vkcl_copy.3, ptr addrspace(3) %b, align 4"));
        assert!(out.contains("store %struct.scan_t %__vkcl_copy.4, ptr %t, align 4"));
        // A size that is not the common type's: left alone.
        assert!(out.contains("%b, i32 32, i1 false)"));
    }

    #[test]
    fn padded_records_by_value_become_pointers_copied_by_the_callee() {
        let ll = "%struct.pair = type { <2 x float>, <2 x float> }\n\
            %struct.mv = type { %struct.pair, i32 }\n\
            define internal void @w(ptr addrspace(1) %buf, ptr byval(%struct.mv) align 8 %val) {\n\
            entry:\n\
            \x20 %d = getelementptr inbounds %struct.mv, ptr addrspace(1) %buf, i32 1\n\
            \x20 call void @llvm.memcpy.p1.p0.i32(ptr addrspace(1) align 8 %d, ptr align 8 %val, i32 24, i1 false)\n\
            \x20 ret void\n}\n\
            define void @k(ptr addrspace(1) %o) {\n\
            entry:\n\
            \x20 %m = alloca %struct.mv, align 8\n\
            \x20 call void @w(ptr addrspace(1) %o, ptr byval(%struct.mv) align 8 %m)\n\
            \x20 ret void\n}\n";
        let out = patch(ll).expect("patched");
        assert!(out.contains("define internal void @w(ptr addrspace(1) %buf, ptr %val.byval) {\nentry:\n  %val = alloca %struct.mv, align 8\n"), "{out}");
        // The callee's copy and the store into the buffer, member by member (3 members).
        assert!(out.contains("getelementptr inbounds %struct.mv, ptr %val.byval, i32 0, i32 1"));
        assert_eq!(out.matches("load <2 x float>").count(), 4, "{out}");
        assert!(out.contains("call void @w(ptr addrspace(1) %o, ptr %m)"));
        assert!(
            !out.contains("byval(") && !out.contains("llvm.memcpy"),
            "{out}"
        );
        // A parameter without a name cannot be renamed: byval stays everywhere.
        let unnamed = ll.replace("%val", "%0");
        // (Nor is its copy typed: the module is left as it is.)
        assert_eq!(patch(&unnamed), None);
        // An unpadded record keeps its byval (and the copy from it, as before).
        let whole = ll.replace("%struct.pair, i32 }", "%struct.pair, <2 x float> }");
        assert_eq!(patch(&whole), None);
    }

    #[test]
    fn layouts() {
        let t = Types {
            named: HashMap::new(),
        };
        let ty = |s: &str| parse(s).unwrap().0;
        assert_eq!(t.layout(&ty("{ i8, i32, <3 x float> }")), Some((32, 16)));
        assert_eq!(t.layout(&ty("<{ i8, i32 }>")), Some((5, 1)));
        assert_eq!(t.layout(&ty("[3 x { i32, i8 }]")), Some((24, 4)));
        assert_eq!(patch("define void @f() {\n  ret void\n}\n"), None);
    }
}
