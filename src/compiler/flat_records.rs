//! Private records of 32-bit words whose member arrays are reached through pointers, flattened
//! in the LLVM IR before clspv's own passes see them.
//!
//! clspv 0.0.1 loses the indices of a pointer into a member array of a private record: with
//! `typedef struct { uint d[16]; uint len; } msg_t;`, `msg_t m = a[i]; uint *w = m.d + 1;`
//! reads `w[k]` as `m.d[0]` (with `psum(m.d + 1, n)` as well, and `(uint *)&m + 1`), whether
//! the record is copied whole or member by member; SHA-1 and MD5 kernels keep their message
//! blocks in exactly such records (issue 15 item 4, piglit's pyrit-wpa-psk); a record of
//! floats reads NaN. A private array reached the same way is right. So such a record (an
//! `alloca` of a named record whose leaves are all of one scalar type T, with an array among
//! them, and a pointer into it that is indexed as T, passed to a call or stored) becomes an
//! `alloca [N x T]`: every GEP on it, or on a pointer derived from it by GEPs, becomes a GEP of
//! T at the flat offset, and each whole-record copy to or from it (`llvm.memcpy`) becomes one
//! load and store per element, the other side reached through GEPs of its own record type
//! (which clspv lowers right). A record used any other way (a load or store of the whole value
//! or of another type, a partial copy, a copy whose other side's type is unknown, an argument
//! passed `byval` or returned through `sret`) is left as
//! it is, and so are records mixing scalar types (`{ uchar d[16]; uint len; }` is still read
//! wrongly). The layout is unchanged: leaves of one type have no padding between them.

use super::wrapped_copy::{gep_type, parse, pointee, split_args, Ty, Types};
use std::collections::{HashMap, HashSet};

/// A flat word offset: a constant and (value, scale) terms.
#[derive(Default)]
struct Offset {
    constant: i64,
    terms: Vec<(String, i64)>,
}

/// The scalar type of every leaf of `t`, where they are all one (`raw` holds the named types'
/// definitions as written, since `parse` does not tell `float` from `i32`), and whether an
/// array is among them.
fn leaf_type(raw: &HashMap<String, String>, t: &str, depth: u32) -> Option<(String, bool)> {
    const SCALARS: [&str; 7] = ["i8", "i16", "i32", "i64", "half", "float", "double"];
    if depth > 16 || t.contains('<') {
        return None;
    }
    let mut leaves: Vec<String> = vec![];
    let mut has_array = t.contains('[');
    let mut rest = t;
    while let Some(at) = rest.find('%') {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !",]}>".contains(*c))
            .collect();
        let (leaf, array) = leaf_type(raw, raw.get(&name)?, depth + 1)?;
        leaves.push(leaf);
        has_array |= array;
        rest = &rest[at + name.len()..];
    }
    for w in rest_without_names(t).split(|c: char| !c.is_alphanumeric()) {
        match w {
            "" | "x" => {}
            _ if w.chars().all(|c| c.is_ascii_digit()) => {}
            _ if SCALARS.contains(&w) => leaves.push(w.to_string()),
            _ => return None,
        }
    }
    let first = leaves.first()?.clone();
    leaves
        .iter()
        .all(|l| *l == first)
        .then_some((first, has_array))
}

/// A flattened record's element: its scalar type and size in bytes.
#[derive(Clone)]
struct Leaf {
    name: String,
    size: u64,
}

/// `t` without its `%names`.
fn rest_without_names(t: &str) -> String {
    let mut out = String::new();
    let mut skip = false;
    for c in t.chars() {
        if c == '%' {
            skip = true;
        } else if skip && (c.is_whitespace() || ",]}>".contains(c)) {
            skip = false;
        }
        if !skip {
            out.push(c);
        }
    }
    out
}

/// The elements of `t` (a type of leaves of `size` bytes).
fn units(types: &Types, t: &Ty, size: u64) -> Option<i64> {
    Some((types.layout(t)?.0 / size) as i64)
}

/// The flat word offset of a GEP over `t` with `indices` (the first one included).
fn flat_offset(types: &Types, t: &Ty, indices: &[&str], size: u64) -> Option<Offset> {
    let words = |t: &Ty| units(types, t, size);
    let mut off = Offset::default();
    let mut add = |index: &str, scale: i64| -> Option<()> {
        let v = index.strip_prefix("i32 ")?.trim();
        match v.parse::<i64>() {
            Ok(c) => off.constant += c * scale,
            Err(_) if v.starts_with('%') => off.terms.push((v.to_string(), scale)),
            Err(_) => return None,
        }
        Some(())
    };
    add(indices.first()?, words(t)?)?;
    let mut t = t.clone();
    for i in &indices[1..] {
        t = match types.resolve(&t)?.clone() {
            Ty::Array(_, e) => {
                add(i, words(&e)?)?;
                *e
            }
            Ty::Record { members, .. } => {
                let k: usize = i.strip_prefix("i32 ")?.trim().parse().ok()?;
                let before: i64 = members[..k].iter().map(words).sum::<Option<i64>>()?;
                add("i32 1", before)?;
                members.get(k)?.clone()
            }
            _ => return None,
        };
    }
    Some(off)
}

/// The GEP indices (as `i32 N`) of word `w` of `t`.
fn word_path(types: &Types, t: &Ty, mut w: i64, size: u64) -> Option<Vec<i64>> {
    let words = |t: &Ty| units(types, t, size);
    let mut path = vec![];
    let mut t = t.clone();
    loop {
        t = match types.resolve(&t)?.clone() {
            Ty::Scalar(s) if s == size => return (w == 0).then_some(path),
            Ty::Array(_, e) => {
                let n = words(&e)?;
                path.push(w / n);
                w %= n;
                *e
            }
            Ty::Record { members, .. } => {
                let mut k = 0;
                while w >= words(members.get(k)?)? {
                    w -= words(&members[k])?;
                    k += 1;
                }
                path.push(k as i64);
                members[k].clone()
            }
            _ => return None,
        };
    }
}

/// One parsed GEP line: result, flags text, source type, base operand (type and value), and
/// the indices.
struct Gep<'a> {
    result: &'a str,
    ty: Ty,
    base_ty: &'a str,
    base: &'a str,
    indices: Vec<&'a str>,
}

fn gep(line: &str) -> Option<Gep<'_>> {
    let (result, def) = line.trim_start().split_once(" = getelementptr ")?;
    let mut rest = def.trim_start();
    for flag in ["inbounds", "nuw", "nusw"] {
        rest = rest.strip_prefix(flag).unwrap_or(rest).trim_start();
    }
    let (ty, rest) = parse(rest)?;
    let args = split_args(rest.trim_start().strip_prefix(',')?);
    let (base_ty, base) = args.first()?.rsplit_once(' ')?;
    Some(Gep {
        result,
        ty,
        base_ty,
        base,
        indices: args[1..].to_vec(),
    })
}

/// `ll` with the private records described in the module comment flattened; None where there
/// is none.
pub fn patch(ll: &str) -> Option<String> {
    let mut types = Types {
        named: HashMap::new(),
    };
    let mut raw = HashMap::new();
    for line in ll.lines() {
        if let Some((name, def)) = line.split_once(" = type ") {
            if let Some((t, _)) = parse(def) {
                types.named.insert(name.trim().to_string(), t);
                raw.insert(name.trim().to_string(), def.trim().to_string());
            }
        }
    }
    let mut out = String::with_capacity(ll.len() + 4096);
    let mut changed = false;
    let mut function: Vec<&str> = vec![];
    for line in ll.lines() {
        function.push(line);
        if line.starts_with('}') {
            match flatten_function(&types, &raw, &function) {
                Some(f) => {
                    out += &f;
                    changed = true;
                }
                None => function.iter().for_each(|l| {
                    out += l;
                    out.push('\n');
                }),
            }
            function.clear();
        }
    }
    function.iter().for_each(|l| {
        out += l;
        out.push('\n');
    });
    changed.then_some(out)
}

/// The private records of one function (lines up to its closing brace) to flatten, by name,
/// with their types.
fn candidates(raw: &HashMap<String, String>, lines: &[&str]) -> HashMap<String, (Ty, Leaf)> {
    let mut found = HashMap::new();
    for line in lines {
        let Some((name, def)) = line.trim_start().split_once(" = alloca ") else {
            continue;
        };
        let tname = def.split([',', ' ']).next().unwrap_or("");
        if !tname.starts_with('%') {
            continue;
        }
        let Some(text) = raw.get(tname) else {
            continue;
        };
        if let Some((leaf, true)) = leaf_type(raw, text, 0) {
            let size = match leaf.as_str() {
                "i8" => 1,
                "i16" | "half" => 2,
                "i64" | "double" => 8,
                _ => 4,
            };
            let leaf = Leaf { name: leaf, size };
            found.insert(name.to_string(), (Ty::Named(tname.to_string()), leaf));
        }
    }
    found
}

fn flatten_function(
    types: &Types,
    raw: &HashMap<String, String>,
    lines: &[&str],
) -> Option<String> {
    let records = candidates(raw, lines);
    if records.is_empty() {
        return None;
    }
    // Pointers into each record (the alloca, and GEPs from such pointers), by value name.
    let mut into: HashMap<String, String> =
        records.keys().map(|r| (r.clone(), r.clone())).collect();
    let mut escapes: HashSet<String> = HashSet::new();
    let mut refused: HashSet<String> = HashSet::new();
    let mut defs: HashMap<&str, Ty> = HashMap::new();
    for line in lines {
        if let Some((name, def)) = line.trim_start().split_once(" = ") {
            let t = match def.split_once(' ') {
                Some(("alloca", rest)) => parse(rest).map(|(t, _)| t),
                Some(("getelementptr", rest)) => gep_type(types, rest),
                _ => None,
            };
            if let Some(t) = t {
                defs.insert(name, t);
            }
        }
        if let Some(g) = gep(line) {
            if let Some(r) = into.get(g.base).cloned() {
                into.insert(g.result.to_string(), r.clone());
                if !matches!(types.resolve(&g.ty), Some(Ty::Record { .. })) {
                    escapes.insert(r);
                }
            }
            continue;
        }
        let uses: Vec<&String> = into
            .keys()
            .filter(|v| {
                line.split(|c: char| c == ',' || c == '(' || c == ')' || c.is_whitespace())
                    .any(|w| w == v.as_str())
            })
            .collect();
        if uses.is_empty() {
            continue;
        }
        let t = line.trim_start();
        let record_of = |v: &String| into[v].clone();
        if t.contains("@llvm.memcpy.") {
            if copy_words(types, &records, &into, &defs, line, 0).is_none() {
                uses.iter().for_each(|v| {
                    refused.insert(record_of(v));
                });
            }
        } else if ["byval(", "sret(", "byref("].iter().any(|a| t.contains(a)) {
            // A record passed or returned by value keeps its type (clspv never finished
            // building a word array passed `byval`: piglit's calls-large-struct).
            uses.iter().for_each(|v| {
                refused.insert(record_of(v));
            });
        } else if t.starts_with("store ptr ") || t.contains("call ") {
            uses.iter().for_each(|v| {
                escapes.insert(record_of(v));
            });
        } else if (t.starts_with("store ") || t.contains(" = load "))
            && uses.iter().any(|v| !t.contains(&records[&into[*v]].1.name))
        {
            uses.iter().for_each(|v| {
                refused.insert(record_of(v));
            });
        }
    }
    let chosen: HashSet<&String> = records
        .keys()
        .filter(|r| escapes.contains(*r) && !refused.contains(*r))
        .collect();
    if chosen.is_empty() {
        return None;
    }
    let into: HashMap<String, String> = into
        .into_iter()
        .filter(|(_, r)| chosen.contains(r))
        .collect();
    let mut out = String::new();
    let mut n = 0;
    for line in lines {
        let indent = &line[..line.len() - line.trim_start().len()];
        if let Some((name, def)) = line.trim_start().split_once(" = alloca ") {
            if chosen.contains(&name.to_string()) {
                let (t, leaf) = &records[name];
                let n = units(types, t, leaf.size)?;
                let align = def.split_once(", align").map(|(_, a)| a).unwrap_or(" 4");
                out += &format!(
                    "{indent}{name} = alloca [{n} x {}], align{align}\n",
                    leaf.name
                );
                continue;
            }
        }
        if let Some(g) = gep(line).filter(|g| into.contains_key(g.base)) {
            let leaf = &records[&into[g.base]].1;
            let off = flat_offset(types, &g.ty, &g.indices, leaf.size)?;
            let mut sum = off.constant.to_string();
            for (v, scale) in &off.terms {
                n += 1;
                out += &format!("{indent}%__vkcl_flat.{n} = mul i32 {v}, {scale}\n");
                out += &format!("{indent}%__vkcl_flat.{n}s = add i32 %__vkcl_flat.{n}, {sum}\n");
                sum = format!("%__vkcl_flat.{n}s");
            }
            out += &format!(
                "{indent}{} = getelementptr {}, {} {}, i32 {sum}\n",
                g.result, leaf.name, g.base_ty, g.base
            );
            continue;
        }
        if line.contains("@llvm.memcpy.") {
            n += 1;
            if let Some(words) = copy_words(types, &records, &into, &defs, line, n) {
                out += &words;
                continue;
            }
        }
        out += line;
        out.push('\n');
    }
    Some(out)
}

/// The word-by-word copy replacing the memcpy on `line` when one side is a pointer into a
/// flattened record (at its start) and the copy is the whole record; the other side a record
/// of the same words (by its own GEPs) or another flattened record.
fn copy_words(
    types: &Types,
    records: &HashMap<String, (Ty, Leaf)>,
    into: &HashMap<String, String>,
    defs: &HashMap<&str, Ty>,
    line: &str,
    n: usize,
) -> Option<String> {
    let at = line.find("call void @llvm.memcpy.p")?;
    let args = &line[at..];
    let args = &args[args.find('(')? + 1..args.rfind(')')?];
    let args = split_args(args);
    let [dst, src, size, _] = args.as_slice() else {
        return None;
    };
    let size: i64 = size.strip_prefix("i32 ")?.trim().parse().ok()?;
    let value = |a: &str| a.rsplit(' ').next().unwrap_or("").to_string();
    let ptr = |a: &str| a.split(" align").next().unwrap_or("").trim().to_string();
    let flat = |a: &str| {
        let v = value(a);
        records
            .contains_key(&v)
            .then_some(v)
            .filter(|v| into.contains_key(v))
    };
    let (fd, fs) = (flat(dst), flat(src));
    let (record, leaf) = records.get(fd.as_ref().or(fs.as_ref())?)?;
    let words = units(types, record, leaf.size)?;
    if size != words * leaf.size as i64 {
        return None;
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    // The GEP text of word `w` on one side.
    let side = |a: &str, is_flat: bool| -> Option<Vec<String>> {
        let (p, v) = (ptr(a), value(a));
        if is_flat {
            return Some(
                (0..words)
                    .map(|w| format!("getelementptr {}, {p} {v}, i32 {w}", leaf.name))
                    .collect(),
            );
        }
        let t = pointee(types, defs, a)?;
        let tname = match &t {
            Ty::Named(name) => name.clone(),
            _ => return None,
        };
        if types.layout(&t)?.0 != words as u64 * leaf.size {
            return None;
        }
        (0..words)
            .map(|w| {
                let path = word_path(types, &t, w, leaf.size)?;
                let idx: String = path.iter().map(|i| format!(", i32 {i}")).collect();
                Some(format!(
                    "getelementptr inbounds {tname}, {p} {v}, i32 0{idx}"
                ))
            })
            .collect()
    };
    let d = side(dst, fd.is_some())?;
    let s = side(src, fs.is_some())?;
    let mut out = String::new();
    for w in 0..words as usize {
        out += &format!(
            "{indent}%__vkcl_w.{n}.{w}s = {}\n\
             {indent}%__vkcl_w.{n}.{w} = load {t}, ptr{} %__vkcl_w.{n}.{w}s, align {a}\n\
             {indent}%__vkcl_w.{n}.{w}d = {}\n\
             {indent}store {t} %__vkcl_w.{n}.{w}, ptr{} %__vkcl_w.{n}.{w}d, align {a}\n",
            s[w],
            addrspace(&ptr(src)),
            d[w],
            addrspace(&ptr(dst)),
            t = leaf.name,
            a = leaf.size,
        );
    }
    Some(out)
}

/// ` addrspace(N)` of a pointer type `ptr addrspace(N)`, or nothing.
fn addrspace(p: &str) -> String {
    p.strip_prefix("ptr").unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clang's IR for `msg_t m = a[i]; uint *w = m.d + 1; ... w[k] ... m.len` (trimmed).
    const LL: &str = "%struct.msg_t = type { [16 x i32], i32 }\n\
        %struct.f = type { [2 x float], i32 }\n\
        define void @k(ptr addrspace(1) %a, i32 %i, i32 %k) {\n\
        entry:\n\
        \x20 %m = alloca %struct.msg_t, align 4\n\
        \x20 %f = alloca %struct.f, align 4\n\
        \x20 %w = alloca ptr, align 4\n\
        \x20 %src = getelementptr inbounds nuw %struct.msg_t, ptr addrspace(1) %a, i32 %i\n\
        \x20 call void @llvm.memcpy.p0.p1.i32(ptr align 4 %m, ptr addrspace(1) align 4 %src, i32 68, i1 false)\n\
        \x20 %p = getelementptr inbounds i32, ptr %m, i32 1\n\
        \x20 store ptr %p, ptr %w, align 4\n\
        \x20 %len = getelementptr inbounds nuw %struct.msg_t, ptr %m, i32 0, i32 1\n\
        \x20 %d = getelementptr inbounds nuw %struct.msg_t, ptr %m, i32 0, i32 0\n\
        \x20 %e = getelementptr inbounds [16 x i32], ptr %d, i32 0, i32 %k\n\
        \x20 %q = getelementptr inbounds i32, ptr %f, i32 1\n\
        \x20 store ptr %q, ptr %w, align 4\n\
        \x20 ret void\n}\n";

    #[test]
    fn records_of_words_reached_by_pointers_become_word_arrays() {
        let out = patch(LL).expect("patched");
        assert!(out.contains("  %m = alloca [17 x i32], align 4\n"), "{out}");
        // float leaves: left alone.
        assert!(out.contains("  %f = alloca %struct.f, align 4\n"), "{out}");
        assert!(!out.contains("@llvm.memcpy"), "{out}");
        assert!(out.contains(
            "  %__vkcl_w.1.16s = getelementptr inbounds %struct.msg_t, ptr addrspace(1) %src, \
             i32 0, i32 1\n"
        ));
        assert!(out.contains(
            "  %__vkcl_w.1.3s = getelementptr inbounds %struct.msg_t, ptr addrspace(1) %src, \
             i32 0, i32 0, i32 3\n"
        ));
        assert!(out.contains("  %__vkcl_w.1.16d = getelementptr i32, ptr %m, i32 16\n"));
        assert!(out.contains("  %p = getelementptr i32, ptr %m, i32 1\n"));
        assert!(out.contains("  %len = getelementptr i32, ptr %m, i32 16\n"));
        assert!(out.contains("  %d = getelementptr i32, ptr %m, i32 0\n"));
        assert!(out.contains("  %__vkcl_flat.2 = mul i32 %k, 1\n"), "{out}");
        assert!(out.contains("  %e = getelementptr i32, ptr %d, i32 %__vkcl_flat.2s\n"));
    }

    #[test]
    fn records_passed_by_value_are_left_alone() {
        let ll = LL.replace(
            "  ret void",
            "  call void @f(ptr byval(%struct.msg_t) align 4 %m)\n  ret void",
        );
        let out = patch(&ll).unwrap_or_default();
        assert!(!out.contains("alloca [17 x i32]"), "{out}");
    }

    #[test]
    fn records_used_whole_are_left_alone() {
        let ll = LL.replace(
            "  ret void",
            "  %v = load %struct.msg_t, ptr %m, align 4\n  ret void",
        );
        let out = patch(&ll).unwrap_or_default();
        assert!(!out.contains("alloca [17 x i32]"), "{out}");
    }
}
