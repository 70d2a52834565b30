//! Private records whose member arrays are reached through pointers, flattened in the LLVM IR
//! before clspv's own passes see them.
//!
//! clspv 0.0.1 loses the indices of a pointer into a member array of a private record: with
//! `typedef struct { uint d[16]; uint len; } msg_t;`, `msg_t m = a[i]; uint *w = m.d + 1;`
//! reads `w[k]` as `m.d[0]` (with `psum(m.d + 1, n)` as well, and `(uint *)&m + 1`), whether
//! the record is copied whole or member by member; SHA-1 and MD5 kernels keep their message
//! blocks in exactly such records (issue 15 item 4, piglit's pyrit-wpa-psk); a record of
//! floats reads NaN; `{ uchar d[16]; uint len; }` read 0 for `((uint *)m.d)[k]`, and a helper
//! given `&m` lost `b->d + off` altogether. A private array reached the same way is right.
//! So such a record (an `alloca` of a named record of scalar leaves with an array among them,
//! and a pointer into it that is indexed, passed to a call or stored) becomes an array
//! ([`super::flat_layout`]): `[N x T]` where every leaf is of type T, else an integer array of
//! its smallest leaf's size (`[20 x i8]` for `blk_t`, `[5 x i32]` for `{ float v[4]; int n; }`),
//! the C layout (offsets, padding) unchanged. Every GEP on it, or on a pointer derived from it
//! by GEPs or kept in a variable stored once, becomes a GEP of the element at the flat offset;
//! loads and stores of the leaves stay as they are (clspv splits a word load from bytes
//! right). Each whole-record copy to or from it, or to or from a record inside it, becomes one
//! load and store per leaf ([`super::flat_copies`]). A helper given a pointer at such a record
//! (`upd(&m, k)`, `upd(&s.b, k)`) is called as a clone whose GEPs from that parameter are
//! flattened the same way (the original stays for other callers), so after clspv inlines it no
//! GEP of the record type is left on the array. A record used any other way (a load or store
//! of the whole value, a vector, or a scalar narrower than the element; a partial copy, a copy
//! whose other side's type is unknown, an argument passed `byval` or returned through `sret`;
//! a GEP whose offset is not a whole number of elements) is left as it is ([`super::flat_uses`]),
//! and so is a helper whose clone would be.

use super::flat_copies::copy_leaves;
use super::flat_layout::{flat, gep_offset, leaves, Flat};
use super::flat_uses::{gep, Uses};
use super::wrapped_copy::{split_args, Ty, Types};
use std::collections::{HashMap, HashSet};

/// `ll` with the private records described in the module comment flattened; None where there
/// is none.
pub fn patch(ll: &str) -> Option<String> {
    let types = Types::of_module(ll);
    let mut module = Module {
        types,
        functions: HashMap::new(),
        clones: HashMap::new(),
        texts: vec![],
    };
    let mut function: Vec<&str> = vec![];
    let mut functions: Vec<Vec<&str>> = vec![];
    for line in ll.lines() {
        if line.starts_with("define ") || !function.is_empty() {
            function.push(line);
        }
        if line.starts_with('}') && !function.is_empty() {
            if let Some(name) = defined_name(function[0]) {
                module.functions.insert(name, function.clone());
            }
            functions.push(std::mem::take(&mut function));
        }
    }
    let mut out = String::with_capacity(ll.len() + 4096);
    let mut changed = false;
    let mut next = functions.iter();
    let mut lines = ll.lines();
    while let Some(line) = lines.next() {
        if !line.starts_with("define ") {
            out += line;
            out.push('\n');
            continue;
        }
        let f = next.next()?;
        if f.len() > 1 {
            lines.nth(f.len() - 2);
        }
        match module.flatten(f, &HashMap::new()) {
            Some(text) => {
                out += &text;
                changed = true;
            }
            None => f.iter().for_each(|l| {
                out += l;
                out.push('\n');
            }),
        }
        // Clones made for this function's calls, after it.
        module.texts.drain(..).for_each(|t| out += &t);
    }
    changed.then_some(out)
}

/// The name (`@f`) a `define` line defines, where it is plain.
fn defined_name(define: &str) -> Option<String> {
    let at = define.find(" @")? + 1;
    let name = &define[at..at + define[at..].find('(')?];
    (!name.contains('"')).then(|| name.to_string())
}

/// The module's named types and functions, and the helpers cloned so far.
struct Module<'a> {
    types: Types,
    /// Each function's lines (its `define` to its closing brace), by name.
    functions: HashMap<String, Vec<&'a str>>,
    /// Clones by what they were made for (see [`Module::clone_for`]): the clone's name, or
    /// None where the helper could not be flattened (its calls are left as they are).
    clones: HashMap<String, Option<String>>,
    /// The text of clones not yet written out.
    texts: Vec<String>,
}

/// The private records of one function (lines up to its closing brace) that could be
/// flattened, by name.
fn candidates(types: &Types, lines: &[&str]) -> HashMap<String, Flat> {
    let mut found = HashMap::new();
    for line in lines {
        let Some((name, def)) = line.trim_start().split_once(" = alloca ") else {
            continue;
        };
        let tname = def.split([',', ' ']).next().unwrap_or("");
        if !tname.starts_with('%') {
            continue;
        }
        let ty = Ty::Named(tname.to_string());
        let Some((leaves, true)) = leaves(types, &ty) else {
            continue;
        };
        if let Some(flat) = flat(types, &ty, &leaves) {
            found.insert(name.to_string(), flat);
        }
    }
    found
}

impl Module<'_> {
    /// The function of `lines` with its escaping records flattened and, where `roots` names
    /// parameters pointing into flattened records of a caller, every GEP from them made a GEP
    /// of the flat element; None where nothing changes or a root cannot be taken.
    fn flatten(&mut self, lines: &[&str], roots: &HashMap<String, Flat>) -> Option<String> {
        let allocas = candidates(&self.types, lines);
        if allocas.is_empty() && roots.is_empty() {
            return None;
        }
        let mut records = allocas.clone();
        records.extend(roots.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut uses = Uses::of(&self.types, &records, lines);
        if roots.keys().any(|r| uses.refused.contains(r)) {
            return None;
        }
        let mut chosen: HashSet<String> = records
            .keys()
            .filter(|r| roots.contains_key(*r) || uses.escapes.contains(*r))
            .filter(|r| !uses.refused.contains(*r))
            .cloned()
            .collect();
        // A record given to a helper that cannot be cloned stays as it is (the helper's
        // record GEPs would reach the array).
        loop {
            if chosen.is_empty() {
                return None;
            }
            uses.into.retain(|_, r| chosen.contains(r));
            let refused: Vec<String> = lines
                .iter()
                .filter_map(|l| self.call_target(&uses, l))
                .filter(|c| c.clone.is_err())
                .flat_map(|c| c.records)
                .collect();
            if refused.is_empty() {
                break;
            }
            if refused.iter().any(|r| roots.contains_key(r)) {
                return None;
            }
            for r in &refused {
                chosen.remove(r);
            }
        }
        let mut out = String::new();
        let mut n = 0;
        for line in lines {
            let indent = &line[..line.len() - line.trim_start().len()];
            if let Some((name, def)) = line.trim_start().split_once(" = alloca ") {
                if let Some(f) = allocas.get(name).filter(|_| chosen.contains(name)) {
                    let align = def.split_once(", align").map(|(_, a)| a).unwrap_or(" 4");
                    let Flat { count, elem, .. } = f;
                    out += &format!("{indent}{name} = alloca [{count} x {elem}], align{align}\n");
                    continue;
                }
            }
            if let Some(g) = gep(line).filter(|g| uses.into.contains_key(g.base)) {
                let flat = uses.flat(g.base);
                let off = gep_offset(&self.types, &g.ty, &g.indices, flat.unit)?;
                // In the GEP's widest index type (i64 in a module of 64-bit pointers).
                let wide = g.indices.iter().any(|i| i.trim_start().starts_with("i64 "));
                let ity = if wide { "i64" } else { "i32" };
                let mut sum = off.constant.to_string();
                for (v, scale) in &off.terms {
                    n += 1;
                    let (vty, mut v) = v.split_once(' ')?;
                    let widened;
                    if vty != ity {
                        widened = format!("%__vkcl_flat.{n}x");
                        out += &format!("{indent}{widened} = sext {vty} {v} to {ity}\n");
                        v = &widened;
                    }
                    out += &format!("{indent}%__vkcl_flat.{n} = mul {ity} {v}, {scale}\n");
                    out +=
                        &format!("{indent}%__vkcl_flat.{n}s = add {ity} %__vkcl_flat.{n}, {sum}\n");
                    sum = format!("%__vkcl_flat.{n}s");
                }
                out += &format!(
                    "{indent}{} = getelementptr {}, {} {}, {ity} {sum}\n",
                    g.result, flat.elem, g.base_ty, g.base
                );
                continue;
            }
            if line.contains("@llvm.memcpy.") {
                n += 1;
                if let Some(copy) = copy_leaves(&self.types, &uses, line, n) {
                    out += &copy;
                    continue;
                }
            }
            out += &self.call(&uses, line);
            out.push('\n');
        }
        Some(out)
    }

    /// `line`, calling a clone of its callee instead where it passes a pointer at a flattened
    /// record (not at one of its scalars, which the callee indexes as it is).
    fn call(&mut self, uses: &Uses, line: &str) -> String {
        match self.call_target(uses, line) {
            Some(Call {
                at,
                open,
                clone: Ok(Some(clone)),
                ..
            }) => format!("{}{clone}{}", &line[..at], &line[open..]),
            _ => line.to_string(),
        }
    }

    /// The call on `line` where it passes pointers at flattened records, with the clone it
    /// is to call instead.
    fn call_target(&mut self, uses: &Uses, line: &str) -> Option<Call> {
        let c = line.find("call ")?;
        let at = c + line[c..].find(" @")? + 1;
        let open = at + line[at..].find('(')?;
        let callee = &line[at..open];
        let close = line.rfind(')')?;
        let (mut roots, mut records) = (vec![], vec![]);
        for (i, a) in split_args(&line[open + 1..close]).iter().enumerate() {
            let v = a.rsplit(' ').next().unwrap_or("");
            let scalar = matches!(
                uses.defs.get(v).and_then(|t| self.types.resolve(t)),
                Some(Ty::Scalar(..) | Ty::Array(..))
            );
            if uses.into.contains_key(v) && !scalar && !a.contains("byval(") {
                roots.push((i, uses.flat(v).clone()));
                records.push(uses.into[v].clone());
            }
        }
        if roots.is_empty() {
            return None;
        }
        let clone = self.clone_for(callee, &roots);
        Some(Call {
            at,
            open,
            clone,
            records,
        })
    }

    /// The name of a clone of `callee` whose parameters `roots` (index, flat array) are
    /// flattened (made once for each such set, and written after the function that needed
    /// it); None where `callee` is not defined here (a built-in), Err where it cannot be
    /// flattened.
    fn clone_for(&mut self, callee: &str, roots: &[(usize, Flat)]) -> Result<Option<String>, ()> {
        let Some(lines) = self.functions.get(callee).cloned() else {
            return Ok(None);
        };
        let key: Vec<String> = roots
            .iter()
            .map(|(i, f)| format!("{i}:{}:{}", f.elem, f.unit))
            .collect();
        let key = format!("{callee}({})", key.join(","));
        if let Some(made) = self.clones.get(&key) {
            return made.clone().map(Some).ok_or(());
        }
        // None while it is being made: a helper calling itself is left alone.
        self.clones.insert(key.clone(), None);
        let define = lines[0];
        let params = define
            .find(&format!("{callee}("))
            .map(|o| o + callee.len() + 1)
            .zip(define.rfind(')'))
            .map(|(open, close)| split_args(&define[open..close]))
            .ok_or(())?;
        let mut named = HashMap::new();
        for (i, f) in roots {
            let p = params
                .get(*i)
                .and_then(|p| p.rsplit(' ').next())
                .ok_or(())?;
            named.insert(p.to_string(), f.clone());
        }
        let text = self.flatten(&lines, &named).ok_or(())?;
        let name = format!("{callee}.__vkcl_flat.{}", self.clones.len());
        let text = text.replacen(&format!("{callee}("), &format!("{name}("), 1);
        self.texts.push(text);
        self.clones.insert(key, Some(name.clone()));
        Ok(Some(name))
    }
}

/// A call passing pointers at flattened records: where its callee's name starts and ends, the
/// clone to call (see [`Module::clone_for`]), and the records passed.
struct Call {
    at: usize,
    open: usize,
    clone: Result<Option<String>, ()>,
    records: Vec<String>,
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
        // floats and an int: an array of i32.
        assert!(out.contains("  %f = alloca [3 x i32], align 4\n"), "{out}");
        assert!(
            out.contains("  %q = getelementptr i32, ptr %f, i32 1\n"),
            "{out}"
        );
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

    /// clang's IR for `blk_t m = a[i]; wr(&m, m.len % 8); ... ((uint *)m.d)[k]` with
    /// `void wr(blk_t *b, uint off) { uchar *p = b->d + off; p[1] = 7; }` (trimmed).
    const MIXED: &str = "%struct.blk_t = type { [16 x i8], i32 }\n\
        define spir_func void @wr(ptr %b, i32 %off) {\n\
        entry:\n\
        \x20 %b.addr = alloca ptr, align 4\n\
        \x20 store ptr %b, ptr %b.addr, align 4\n\
        \x20 %0 = load ptr, ptr %b.addr, align 4\n\
        \x20 %d = getelementptr inbounds nuw %struct.blk_t, ptr %0, i32 0, i32 0\n\
        \x20 %arraydecay = getelementptr inbounds [16 x i8], ptr %d, i32 0, i32 0\n\
        \x20 %add.ptr = getelementptr inbounds nuw i8, ptr %arraydecay, i32 %off\n\
        \x20 %p1 = getelementptr inbounds i8, ptr %add.ptr, i32 1\n\
        \x20 store i8 7, ptr %p1, align 1\n\
        \x20 ret void\n}\n\
        define void @k(ptr addrspace(1) %a, i32 %i, i32 %k) {\n\
        entry:\n\
        \x20 %m = alloca %struct.blk_t, align 4\n\
        \x20 %src = getelementptr inbounds nuw %struct.blk_t, ptr addrspace(1) %a, i32 %i\n\
        \x20 call void @llvm.memcpy.p0.p1.i32(ptr align 4 %m, ptr addrspace(1) align 4 %src, i32 20, i1 false)\n\
        \x20 %len = getelementptr inbounds nuw %struct.blk_t, ptr %m, i32 0, i32 1\n\
        \x20 %l = load i32, ptr %len, align 4\n\
        \x20 call spir_func void @wr(ptr %m, i32 %l)\n\
        \x20 %w = getelementptr inbounds nuw i32, ptr %m, i32 %k\n\
        \x20 %v = load i32, ptr %w, align 4\n\
        \x20 call void @llvm.memcpy.p1.p0.i32(ptr addrspace(1) align 4 %src, ptr align 4 %m, i32 20, i1 false)\n\
        \x20 ret void\n}\n";

    #[test]
    fn mixed_records_become_byte_arrays() {
        let out = patch(MIXED).expect("patched");
        assert!(out.contains("  %m = alloca [20 x i8], align 4\n"), "{out}");
        assert!(
            out.contains("  %len = getelementptr i8, ptr %m, i32 16\n"),
            "{out}"
        );
        assert!(out.contains("  %__vkcl_flat.2 = mul i32 %k, 4\n"), "{out}");
        assert!(out.contains("  %w = getelementptr i8, ptr %m, i32 %__vkcl_flat.2s\n"));
        // Copied leaf by leaf, each leaf as its own type.
        assert!(!out.contains("@llvm.memcpy"), "{out}");
        assert!(out.contains(
            "  %__vkcl_w.1.3s = getelementptr inbounds %struct.blk_t, ptr addrspace(1) %src, \
             i32 0, i32 0, i32 3\n  \
             %__vkcl_w.1.3 = load i8, ptr addrspace(1) %__vkcl_w.1.3s, align 1\n  \
             %__vkcl_w.1.3d = getelementptr i8, ptr %m, i32 3\n"
        ));
        assert!(out.contains("  %__vkcl_w.1.16d = getelementptr i8, ptr %m, i32 16\n"));
        assert!(out
            .contains("  %__vkcl_w.1.16 = load i32, ptr addrspace(1) %__vkcl_w.1.16s, align 4\n"));
        assert!(
            out.contains("  %__vkcl_w.3.16s = getelementptr i8, ptr %m, i32 16\n"),
            "{out}"
        );
    }

    #[test]
    fn helpers_given_a_flattened_record_are_cloned() {
        let out = patch(MIXED).expect("patched");
        // The original stays for other callers; the clone's GEPs from the parameter (through
        // clang's spill of it) are byte GEPs.
        assert!(
            out.contains("define spir_func void @wr(ptr %b, i32 %off) {\n"),
            "{out}"
        );
        assert!(
            out.contains("  %d = getelementptr inbounds nuw %struct.blk_t, ptr %0, i32 0, i32 0\n")
        );
        let clone = out
            .find("define spir_func void @wr.__vkcl_flat.")
            .expect("clone");
        let clone = &out[clone..];
        let name = &clone["define spir_func void ".len()..clone.find('(').unwrap()];
        assert!(
            out.contains(&format!("  call spir_func void {name}(ptr %m, i32 %l)\n")),
            "{out}"
        );
        assert!(
            clone.contains("  %d = getelementptr i8, ptr %0, i32 0\n"),
            "{clone}"
        );
        assert!(clone.contains("  %arraydecay = getelementptr i8, ptr %d, i32 0\n"));
        assert!(
            clone.contains("  %add.ptr = getelementptr i8, ptr %arraydecay, i32 %__vkcl_flat.1s\n")
        );
        assert!(clone.contains("  %p1 = getelementptr i8, ptr %add.ptr, i32 1\n"));
    }

    #[test]
    fn mixed_records_refused_stay_as_they_are() {
        // A whole-value load; a byte offset known at run time into an array of words; a
        // vector load.
        let fv = "%struct.fv = type { [4 x float], i32 }\n\
            define void @k(i32 %k) {\n\
            entry:\n\
            \x20 %f = alloca %struct.fv, align 4\n\
            \x20 %p = getelementptr inbounds float, ptr %f, i32 1\n\
            \x20 USE\n\
            \x20 ret void\n}\n";
        for (use_, refused) in [
            ("%v = load %struct.fv, ptr %f, align 4", true),
            ("%b = getelementptr inbounds i8, ptr %f, i32 %k", true),
            ("%v = load <2 x float>, ptr %p, align 4", true),
            ("%v = load float, ptr %p, align 4", false),
        ] {
            let out = patch(&fv.replace("USE", use_)).unwrap_or_default();
            assert_eq!(!out.contains("alloca [5 x i32]"), refused, "{use_}: {out}");
        }
    }

    #[test]
    fn records_given_to_helpers_that_cannot_be_cloned_stay_as_they_are() {
        // The helper loads the whole record through its parameter.
        let ll = MIXED.replace(
            "  store i8 7, ptr %p1, align 1\n",
            "  store i8 7, ptr %p1, align 1\n  %all = load %struct.blk_t, ptr %0, align 4\n",
        );
        let out = patch(&ll).unwrap_or_default();
        assert!(!out.contains("alloca [20 x i8]"), "{out}");
        assert!(!out.contains("__vkcl_flat"), "{out}");
    }
}
