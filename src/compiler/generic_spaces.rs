//! Generic pointers whose address space is chosen at run time, found in clang's -O0 LLVM IR:
//! the logical build fails with a log that says so, and the physical-addressing build is made
//! flat instead ([`super::generic_flat`]; it fails with that log too where it cannot be made).
//!
//! clspv 0.0.1 resolves a generic pointer's address space only where it is known after
//! inlining. Where it is not, a `?:` between a global and a local pointer aborts it ("Invalid
//! operands for select instruction"), and the same choice made with `if`/`else` assignments
//! is silently miscompiled: the OpenCL conformance suite's kernel that points a generic
//! pointer at a global or a local variable by `tid % 2` was folded to `results[tid] = 0`.
//! A wrong result is worse than a build error, so 2.0/3.0 programs that may hold generic
//! pointers ([`may_choose`], a token test of the source) are first compiled to LLVM IR and
//! [`find`] follows each generic value back to the address spaces it came from:
//! `addrspacecast`s (instructions and constant expressions), GEPs, `phi`s, `select`s, calls
//! (each call site analysed with its own arguments, as clspv inlines them) and generic
//! pointer variables (allocas: where a variable's address never escapes, a reaching-stores
//! analysis over the control flow, so `p = &g; use(p); p = &l; use(p);` stays legal; other
//! allocas, flow-insensitively). A `phi`/`select`, or a load of a variable, that can see two
//! address spaces is the run-time choice. A generic pointer to private memory kept in memory
//! other than a pointer variable (a struct member, an array element; or, in the physical
//! build, made an integer where the module makes pointers of integers) is found too
//! ([`KEPT`]): clspv 0.0.1 loads it back as a tagged number taken for a global address, so
//! such programs are made flat as well. Not followed (missed, not refused): generic pointers
//! stored in memory other than the function's own allocas (global memory, through a pointer
//! to a pointer).

use std::collections::{BTreeSet, HashMap};

use super::wrapped_copy::split_args;

type Spaces = BTreeSet<u32>;

/// The build log's line for a run-time choice (tests look for it).
pub const UNSUPPORTED: &str = "a generic pointer whose address space is chosen at run time";

/// Whether a source (without vkcl's prelude) may hold a generic pointer: it names an
/// unqualified pointer type (`int *p`, `(float4 *)`, `const T *`), or `generic`.
pub fn may_choose(source: &[u8]) -> bool {
    let text = String::from_utf8_lossy(source);
    let tokens = tokens(&text);
    let mut types: Vec<&str> = vec![];
    // Typedef names: the last word of each `typedef ...;` (function pointer typedefs aside).
    for (i, t) in tokens.iter().enumerate() {
        if *t == "typedef" {
            let end = tokens[i..].iter().position(|t| *t == ";").map(|e| i + e);
            if let Some(name) = end.and_then(|e| tokens[..e].last()) {
                types.push(name);
            }
        }
    }
    let is_type = |w: &str| types.contains(&w) || builtin_type(w);
    for (i, t) in tokens.iter().enumerate() {
        if *t == "generic" || *t == "__generic" {
            return true;
        }
        if *t != "*" {
            continue;
        }
        // The words just before the `*` (`**` counts as one).
        let mut j = i;
        while j > 0 && tokens[j - 1] == "*" {
            j -= 1;
        }
        let start = tokens[..j]
            .iter()
            .rposition(|t| !is_word(t))
            .map_or(0, |k| k + 1);
        let words = &tokens[start..j];
        let before = start.checked_sub(1).map(|k| tokens[k]);
        if words.is_empty() || !matches!(before, None | Some("(" | "," | ";" | "{" | "}")) {
            continue;
        }
        if words.iter().any(|w| QUALIFIERS.contains(w)) {
            continue;
        }
        if ["return", "case", "sizeof", "else", "do", "goto"].contains(&words[0]) {
            continue;
        }
        // One word is a declaration only where it names a type (`(a * b)` is not).
        if words.len() >= 2 || is_type(words[0]) {
            return true;
        }
    }
    false
}

const QUALIFIERS: [&str; 8] = [
    "global",
    "__global",
    "local",
    "__local",
    "constant",
    "__constant",
    "private",
    "__private",
];

fn is_word(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

fn builtin_type(w: &str) -> bool {
    let base = w.trim_end_matches(|c: char| c.is_ascii_digit());
    [
        "void",
        "bool",
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "float",
        "double",
        "half",
        "size_t",
        "ptrdiff_t",
        "intptr_t",
        "uintptr_t",
        "unsigned",
        "signed",
    ]
    .contains(&base)
        || w.starts_with("atomic_")
        || w.ends_with("_t")
}

/// Words, numbers and punctuation, without comments and string literals.
fn tokens(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let (mut out, mut i) = (vec![], 0);
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            i += b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .unwrap_or(b.len() - i);
        } else if b[i..].starts_with(b"/*") {
            i += b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len() - i, |p| p + 4);
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(&s[start..i]);
        } else {
            // One character (ASCII here; other bytes are skipped whole).
            let len = s[i..].chars().next().map_or(1, char::len_utf8);
            if c.is_ascii() {
                out.push(&s[i..i + 1]);
            }
            i += len;
        }
    }
    out
}

/// The build log when `ll` (clang's IR of a program) chooses a generic pointer's address
/// space at run time in a function a kernel reaches; None otherwise.
pub fn find(ll: &str) -> Option<String> {
    let funcs = functions(ll);
    let mut a = Analysis {
        funcs: &funcs,
        memo: HashMap::new(),
        found: None,
        kept: None,
        numbered: None,
    };
    let mut kernels: Vec<&Func> = funcs.values().filter(|f| f.kernel).collect();
    kernels.sort_by_key(|f| f.name);
    for k in kernels {
        a.run(k.name, vec![]);
        if let Some((function, spaces)) = a.found.take() {
            let names: Vec<&str> = spaces.iter().map(|&s| space_name(s)).collect();
            let kernel = source_name(k.name);
            let function = source_name(function);
            let place = match function == kernel {
                true => format!("kernel {kernel}"),
                false => format!("function {function} (called from kernel {kernel})"),
            };
            return Some(format!(
                "error: {place}: {UNSUPPORTED} ({}) is not supported: vkcl's compiler (clspv) \
                 resolves the generic address space only where it is known at compile time\n",
                names.join(" or ")
            ));
        }
    }
    // An integer made of such a pointer matters where the module makes pointers of integers.
    let numbered = a.numbered.filter(|_| ll.contains(" inttoptr "));
    a.kept.or(numbered).map(|function| {
        format!(
            "error: function {}: {KEPT} is not supported: vkcl's compiler (clspv) resolves the \
             generic address space only where it is known at compile time\n",
            source_name(function)
        )
    })
}

/// The build log's words for a generic pointer to private memory kept in memory other than a
/// pointer variable: clspv 0.0.1 loads it back as a tagged number taken for a global address
/// (the process died in lavapipe). Such programs are made flat too. (`__local` addresses kept
/// so are right.)
pub const KEPT: &str = "a generic pointer to private memory kept in a struct member or an \
                        array element";

fn space_name(s: u32) -> &'static str {
    match s {
        0 => "private",
        1 => "global",
        2 => "constant",
        3 => "local",
        _ => "another address space",
    }
}

/// `_Z4pickPiS_i` → `pick`; kernels' bodies (`__clang_ocl_kern_imp_k`) → `k`.
fn source_name(name: &str) -> &str {
    let name = name.trim_matches('"');
    let name = name.strip_prefix("__clang_ocl_kern_imp_").unwrap_or(name);
    let Some(rest) = name.strip_prefix("_Z") else {
        return name;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    match rest[..digits].parse::<usize>() {
        Ok(n) if digits + n <= rest.len() => &rest[digits..digits + n],
        _ => name,
    }
}

struct Func<'a> {
    name: &'a str,
    kernel: bool,
    /// Parameter names, in order.
    params: Vec<&'a str>,
    blocks: Vec<Block<'a>>,
    /// Allocas of one generic pointer whose address is only loaded from and stored to.
    tracked: Vec<&'a str>,
    allocas: Vec<&'a str>,
}

struct Block<'a> {
    lines: Vec<&'a str>,
    preds: Vec<usize>,
}

fn functions(ll: &str) -> HashMap<&str, Func<'_>> {
    let mut out = HashMap::new();
    let mut lines = ll.lines();
    while let Some(line) = lines.next() {
        let Some(header) = line.strip_prefix("define ") else {
            continue;
        };
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "}").collect();
        if let Some(f) = function(header, &body) {
            out.insert(f.name, f);
        }
    }
    out
}

fn function<'a>(header: &'a str, body: &[&'a str]) -> Option<Func<'a>> {
    let at = header.find('@')?;
    let open = at + header[at..].find('(')?;
    let name = &header[at + 1..open];
    let close = open + matching(&header[open..])?;
    let params = split_args(&header[open + 1..close])
        .into_iter()
        .map(last_value)
        .collect();
    let (mut blocks, mut names, mut succs) = (vec![], vec![], vec![]);
    for line in body {
        let is_label = !line.starts_with(char::is_whitespace)
            && line
                .split(';')
                .next()
                .is_some_and(|l| l.trim_end().ends_with(':'));
        if is_label || blocks.is_empty() {
            let label = match is_label {
                true => line.split(':').next().unwrap_or("").trim(),
                false => "",
            };
            names.push(label);
            blocks.push(Block {
                lines: vec![],
                preds: vec![],
            });
            succs.push(vec![]);
            if is_label {
                continue;
            }
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        let targets = line
            .match_indices("label %")
            .map(|(i, _)| value_at(&line[i + 6..]));
        succs.last_mut()?.extend(targets);
        blocks.last_mut()?.lines.push(line);
    }
    for (from, targets) in succs.iter().enumerate() {
        for t in targets {
            let t = t.trim_start_matches('%');
            if let Some(to) = names
                .iter()
                .position(|n| n.trim_matches('"') == t.trim_matches('"'))
            {
                blocks[to].preds.push(from);
            }
        }
    }
    // (name, instruction) of each alloca; the generic pointer variables among them are tracked.
    let alloca_defs: Vec<(&str, &str)> = blocks
        .iter()
        .flat_map(|b| &b.lines)
        .filter_map(|l| l.split_once(" = "))
        .filter(|(_, rhs)| rhs.starts_with("alloca "))
        .collect();
    let allocas: Vec<&str> = alloca_defs.iter().map(|&(def, _)| def).collect();
    let mut tracked: Vec<&str> = alloca_defs
        .iter()
        .filter(|(_, rhs)| rhs.starts_with("alloca ptr addrspace(4),"))
        .map(|&(def, _)| def)
        .collect();
    for line in blocks.iter().flat_map(|b| &b.lines) {
        tracked.retain(|a| only_loaded_or_stored(line, a));
    }
    Some(Func {
        name,
        kernel: header.contains("spir_kernel"),
        params,
        blocks,
        tracked,
        allocas,
    })
}

/// Index of the bracket closing the one `s` starts with.
pub(super) fn matching(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The value name at the start of `s` (`%x.i, ...` → `%x.i`).
pub(super) fn value_at(s: &str) -> &str {
    let end = s
        .char_indices()
        .skip(1)
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || "-$._\"".contains(c)))
        .map_or(s.len(), |(i, _)| i);
    &s[..end]
}

/// An operand's value: its last word (`ptr addrspace(1) align 4 %r` → `%r`).
fn last_value(op: &str) -> &str {
    op.split_whitespace().last().unwrap_or("")
}

/// Whether every use of `a` on `line` is as the address of a load or a store.
pub(super) fn only_loaded_or_stored(line: &str, a: &str) -> bool {
    let uses = line
        .match_indices(a)
        .filter(|(i, _)| value_at(&line[*i..]) == a)
        .count();
    if uses == 0 {
        return true;
    }
    let rhs = line.split_once(" = ").map_or(line, |(d, r)| match d == a {
        true => "",
        false => r,
    });
    if rhs.is_empty() || rhs.starts_with("alloca ") {
        return uses == 1;
    }
    let (op, rest) = rhs.split_once(' ').unwrap_or((rhs, ""));
    let rest = rest.strip_prefix("volatile ").unwrap_or(rest);
    let args = split_args(rest);
    match op {
        "load" | "store" => uses == 1 && args.get(1).map(|x| last_value(x)) == Some(a),
        _ => false,
    }
}

/// Address spaces of a generic operand (`ptr addrspace(4) %x`, or a constant expression).
fn operand(op: &str, vals: &HashMap<&str, Spaces>) -> Option<Spaces> {
    let rest = op.trim().strip_prefix("ptr addrspace(4)")?;
    Some(value(rest, vals))
}

/// Address spaces of a generic value without its type.
fn value(v: &str, vals: &HashMap<&str, Spaces>) -> Spaces {
    if let Some(i) = v.find("addrspacecast (") {
        return source_space(&v[i + "addrspacecast (".len()..])
            .into_iter()
            .collect();
    }
    vals.get(last_value(v)).cloned().unwrap_or_default()
}

/// The address space of a pointer type at the start of `s` (`ptr addrspace(3) ...`, `ptr %x`).
fn source_space(s: &str) -> Option<u32> {
    let s = s.trim_start().strip_prefix("ptr")?;
    match s.trim_start().strip_prefix("addrspace(") {
        Some(n) => n.split(')').next()?.parse().ok(),
        None => Some(0),
    }
}

struct Analysis<'a> {
    funcs: &'a HashMap<&'a str, Func<'a>>,
    /// (function, arguments' spaces) → the spaces of what it returns.
    memo: HashMap<(&'a str, Vec<Spaces>), Spaces>,
    /// The function and the spaces of the first run-time choice found.
    found: Option<(&'a str, Spaces)>,
    /// The first function found keeping a generic pointer to private memory in memory other
    /// than a generic pointer variable (a struct member, an array element).
    kept: Option<&'a str>,
    /// The first function found making an integer of one (the physical build's pointer
    /// members are integers, super::pointer_members).
    numbered: Option<&'a str>,
}

/// One function's state during the analysis.
struct State<'a> {
    vals: HashMap<&'a str, Spaces>,
    /// Non-generic pointers into allocas (GEPs): value → alloca.
    bases: HashMap<&'a str, &'a str>,
    /// Flow-insensitive contents of the untracked allocas.
    mem: HashMap<&'a str, Spaces>,
    ret: Spaces,
    grew: bool,
}

fn grow<'a>(map: &mut HashMap<&'a str, Spaces>, k: &'a str, s: Spaces, grew: &mut bool) {
    let e = map.entry(k).or_default();
    let n = e.len();
    e.extend(s);
    *grew |= e.len() != n;
}

impl<'a> Analysis<'a> {
    /// Analyses `name` called with generic arguments from `args` (by parameter position);
    /// returns the spaces of its result.
    fn run(&mut self, name: &'a str, args: Vec<Spaces>) -> Spaces {
        let Some(f) = self.funcs.get(name) else {
            return Spaces::new();
        };
        let key = (f.name, args);
        if let Some(r) = self.memo.get(&key) {
            return r.clone();
        }
        // Recursion is not OpenCL C; this also stops it.
        self.memo.insert(key.clone(), Spaces::new());
        let mut st = State {
            vals: HashMap::new(),
            bases: HashMap::new(),
            mem: HashMap::new(),
            ret: Spaces::new(),
            grew: false,
        };
        for (p, s) in f.params.iter().zip(&key.1) {
            st.vals.insert(p, s.clone());
        }
        let mut outs: Vec<HashMap<&str, Spaces>> = vec![HashMap::new(); f.blocks.len()];
        for _ in 0..64 {
            st.grew = false;
            for (b, block) in f.blocks.iter().enumerate() {
                let mut cur: HashMap<&str, Spaces> = HashMap::new();
                for &p in &block.preds {
                    for (k, s) in &outs[p] {
                        cur.entry(k).or_default().extend(s.iter().copied());
                    }
                }
                for line in &block.lines {
                    self.step(f, &mut st, &mut cur, line);
                }
                if outs[b] != cur {
                    st.grew = true;
                    outs[b] = cur;
                }
            }
            if !st.grew {
                break;
            }
        }
        self.memo.insert(key, st.ret.clone());
        st.ret
    }

    fn choice(&mut self, f: &Func<'a>, s: &Spaces) {
        if s.len() < 2 {
            return;
        }
        // Every space chosen among in the first function found (a choice feeds another).
        match &mut self.found {
            None => self.found = Some((f.name, s.clone())),
            Some((name, spaces)) if *name == f.name => spaces.extend(s),
            Some(_) => {}
        }
    }

    fn step(
        &mut self,
        f: &Func<'a>,
        st: &mut State<'a>,
        cur: &mut HashMap<&'a str, Spaces>,
        line: &'a str,
    ) {
        let (def, rhs) = match line.split_once(" = ") {
            Some((d, r)) if d.starts_with('%') => (Some(d), r),
            _ => (None, line),
        };
        let rhs = rhs
            .trim_start_matches("tail ")
            .trim_start_matches("notail ");
        let (op, rest) = rhs.split_once(' ').unwrap_or((rhs, ""));
        let rest = rest.strip_prefix("volatile ").unwrap_or(rest);
        let result = match op {
            "store" => {
                let args = split_args(rest);
                if let (Some(s), Some(addr)) = (
                    args.first().and_then(|a| operand(a, &st.vals)),
                    args.get(1).map(|a| last_value(a)),
                ) {
                    if f.tracked.contains(&addr) {
                        cur.insert(addr, s);
                    } else {
                        if s.contains(&0) {
                            self.kept.get_or_insert(f.name);
                        }
                        if let Some(base) = self.base(f, st, addr) {
                            grow(&mut st.mem, base, s, &mut st.grew);
                        }
                    }
                }
                None
            }
            "ret" => {
                if let Some(s) = operand(rest, &st.vals) {
                    let n = st.ret.len();
                    st.ret.extend(s);
                    st.grew |= st.ret.len() != n;
                }
                None
            }
            "call" => self.call(st, rest),
            // The physical build's pointer members are integers (super::pointer_members).
            "ptrtoint" if rest.starts_with("ptr addrspace(4) ") => {
                let from = rest.split(" to ").next().unwrap_or(rest);
                let s = operand(from, &st.vals).unwrap_or_default();
                if s.contains(&0) {
                    self.numbered.get_or_insert(f.name);
                }
                None
            }
            "addrspacecast" if rest.ends_with("to ptr addrspace(4)") => {
                source_space(rest).map(|s| Spaces::from([s]))
            }
            "getelementptr" => {
                let mut r = rest;
                for flag in ["inbounds ", "nuw ", "nusw "] {
                    r = r.strip_prefix(flag).unwrap_or(r);
                }
                let args = split_args(r);
                let base = args.get(1).copied().unwrap_or("");
                match operand(base, &st.vals) {
                    Some(s) => Some(s),
                    None => {
                        if let (Some(d), Some(b)) = (def, self.base(f, st, last_value(base))) {
                            st.bases.insert(d, b);
                        }
                        None
                    }
                }
            }
            "load" if rest.starts_with("ptr addrspace(4),") => {
                let args = split_args(rest);
                let addr = args.get(1).map_or("", |a| last_value(a));
                let s = match f.tracked.contains(&addr) {
                    true => cur.get(addr).cloned().unwrap_or_default(),
                    false => self
                        .base(f, st, addr)
                        .and_then(|b| st.mem.get(b).cloned())
                        .unwrap_or_default(),
                };
                self.choice(f, &s);
                Some(s)
            }
            "phi" => rest.strip_prefix("ptr addrspace(4) ").map(|incoming| {
                let mut s = Spaces::new();
                for pair in split_args(incoming) {
                    let inner = pair.trim().trim_start_matches('[').trim_end_matches(']');
                    if let Some(v) = split_args(inner).first() {
                        s.extend(value(v, &st.vals));
                    }
                }
                self.choice(f, &s);
                s
            }),
            "select" => {
                let args = split_args(rest);
                let a = args.get(1).and_then(|a| operand(a, &st.vals));
                let b = args.get(2).and_then(|a| operand(a, &st.vals));
                a.zip(b).map(|(mut a, b)| {
                    a.extend(b);
                    self.choice(f, &a);
                    a
                })
            }
            _ => None,
        };
        if let (Some(d), Some(s)) = (def, result) {
            grow(&mut st.vals, d, s, &mut st.grew);
        }
    }

    /// The alloca a non-generic pointer value points into, if any.
    fn base(&self, f: &Func<'a>, st: &State<'a>, v: &'a str) -> Option<&'a str> {
        match f.allocas.contains(&v) {
            true => Some(v),
            false => st.bases.get(v).copied(),
        }
    }

    /// A call's generic result, where it returns one; the callee is analysed with the
    /// call's arguments.
    fn call(&mut self, st: &State<'a>, rest: &'a str) -> Option<Spaces> {
        let at = rest.find('@')?;
        let open = at + rest[at..].find('(')?;
        let callee = &rest[at + 1..open];
        let close = open + matching(&rest[open..])?;
        self.funcs.get(callee)?;
        let args: Vec<Spaces> = split_args(&rest[open + 1..close])
            .into_iter()
            .map(|a| operand(a, &st.vals).unwrap_or_default())
            .collect();
        let r = self.run(callee, args);
        rest[..at].contains("ptr addrspace(4)").then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IF_ELSE: &str = "@gint = addrspace(1) global i32 1, align 4\n\
        @k.lint = internal addrspace(3) global i32 undef, align 4\n\
        define dso_local spir_kernel void @k(ptr addrspace(1) align 4 %r) #0 !x !4 {\n\
        entry:\n\
        \x20 %ptr.i = alloca ptr addrspace(4), align 4\n\
        \x20 br i1 %c, label %if.then.i, label %if.else.i\n\
        \n\
        if.then.i:                                        ; preds = %entry\n\
        \x20 store ptr addrspace(4) addrspacecast (ptr addrspace(1) @gint to ptr addrspace(4)), ptr %ptr.i, align 4\n\
        \x20 br label %if.end.i\n\
        \n\
        if.else.i:                                        ; preds = %entry\n\
        \x20 store ptr addrspace(4) addrspacecast (ptr addrspace(3) @k.lint to ptr addrspace(4)), ptr %ptr.i, align 4\n\
        \x20 br label %if.end.i\n\
        \n\
        if.end.i:                                         ; preds = %if.else.i, %if.then.i\n\
        \x20 %3 = load ptr addrspace(4), ptr %ptr.i, align 4\n\
        \x20 %7 = load i32, ptr addrspace(4) %3, align 4\n\
        \x20 ret void\n\
        }\n";

    #[test]
    fn stores_in_two_branches() {
        let log = find(IF_ELSE).expect("found");
        assert!(log.contains("kernel k: a generic pointer whose address space is chosen at run time (global or local)"), "{log}");
    }

    /// A generic pointer to a private array kept in a private struct's member (the struct
    /// then read through a generic pointer): found, so that the build is made flat.
    #[test]
    fn a_private_address_kept_in_a_struct_member() {
        let ll = "define spir_kernel void @k(ptr addrspace(1) align 4 %res) {\n\
            entry:\n\
            \x20 %i = alloca [4 x i32], align 4\n\
            \x20 %temp = alloca ptr addrspace(4), align 8\n\
            \x20 %s = alloca %struct.L, align 8\n\
            \x20 %a = addrspacecast ptr %i to ptr addrspace(4)\n\
            \x20 store ptr addrspace(4) %a, ptr %temp, align 8\n\
            \x20 %1 = load ptr addrspace(4), ptr %temp, align 8\n\
            \x20 %p = getelementptr inbounds nuw %struct.L, ptr %s, i32 0, i32 3\n\
            \x20 store ptr addrspace(4) %1, ptr %p, align 8\n\
            \x20 ret void\n\
            }\n";
        let log = find(ll).expect("found");
        assert!(log.contains(KEPT), "{log}");
        // A global address kept there is no concern.
        let global = ll.replace("ptr %i to", "ptr addrspace(1) %res to");
        assert_eq!(find(&global), None);
        // The physical build's struct members are integers: a concern where the module makes
        // pointers of integers.
        let number = ll.replace(
            "store ptr addrspace(4) %1, ptr %p",
            "%2 = ptrtoint ptr addrspace(4) %1 to i64\n  store i64 %2, ptr %p",
        );
        assert_eq!(find(&number), None);
        let back = number.replace(
            "  ret void",
            "  %3 = load i64, ptr %p, align 8\n  %4 = inttoptr i64 %3 to ptr addrspace(4)\n  ret void",
        );
        assert!(find(&back).expect("found").contains(KEPT));
    }

    #[test]
    fn sequential_stores_are_static() {
        let ll = "define spir_kernel void @k() {\n\
            entry:\n\
            \x20 %p = alloca ptr addrspace(4), align 4\n\
            \x20 %x = alloca i32, align 4\n\
            \x20 store ptr addrspace(4) addrspacecast (ptr addrspace(1) @g to ptr addrspace(4)), ptr %p, align 4\n\
            \x20 %0 = load ptr addrspace(4), ptr %p, align 4\n\
            \x20 %x.ascast = addrspacecast ptr %x to ptr addrspace(4)\n\
            \x20 store ptr addrspace(4) %x.ascast, ptr %p, align 4\n\
            \x20 %1 = load ptr addrspace(4), ptr %p, align 4\n\
            \x20 ret void\n\
            }\n";
        assert_eq!(find(ll), None);
        // The same stores, the second one in a loop that the first load sees.
        let looped = ll
            .replace(
                "  %0 = load",
                "  br label %loop\n\nloop:   ; preds = %entry, %loop\n  %0 = load",
            )
            .replace(
                "  ret void",
                "  br i1 %c, label %loop, label %end\nend:\n  ret void",
            );
        let log = find(&looped).expect("found");
        assert!(log.contains("(private or global)"), "{log}");
    }

    #[test]
    fn phis_selects_and_calls() {
        let ll = "define spir_func ptr addrspace(4) @_Z4pickPU3AS4iS0_i(ptr addrspace(4) %a, ptr addrspace(4) %b, i32 %c) {\n\
            entry:\n\
            \x20 %s = select i1 %t, ptr addrspace(4) %a, ptr addrspace(4) %b\n\
            \x20 ret ptr addrspace(4) %s\n\
            }\n\
            define spir_kernel void @k(ptr addrspace(1) %g, ptr addrspace(3) %l) {\n\
            entry:\n\
            \x20 %gg = getelementptr inbounds i32, ptr addrspace(1) %g, i32 1\n\
            \x20 %a = addrspacecast ptr addrspace(1) %gg to ptr addrspace(4)\n\
            \x20 %b = addrspacecast ptr addrspace(1) %g to ptr addrspace(4)\n\
            \x20 %c = addrspacecast ptr addrspace(3) %l to ptr addrspace(4)\n\
            \x20 %r = call spir_func ptr addrspace(4) @_Z4pickPU3AS4iS0_i(ptr addrspace(4) %a, ptr addrspace(4) %b, i32 0)\n\
            \x20 %q = getelementptr inbounds i32, ptr addrspace(4) %r, i32 1\n\
            \x20 br label %next\n\
            next:\n\
            \x20 %p = phi ptr addrspace(4) [ %q, %entry ], [ null, %next ]\n\
            \x20 ret void\n\
            }\n";
        assert_eq!(find(ll), None);
        let mixed = ll.replace(
            "(ptr addrspace(4) %a, ptr addrspace(4) %b, i32 0)",
            "(ptr addrspace(4) %a, ptr addrspace(4) %c, i32 0)",
        );
        let log = find(&mixed).expect("found");
        assert!(
            log.contains("function pick (called from kernel k)"),
            "{log}"
        );
        let phi = ll.replace("[ null, %next ]", "[ %c, %next ]");
        assert!(find(&phi).expect("found").contains("kernel k:"));
    }

    #[test]
    fn token_test() {
        assert!(may_choose(b"void f(int *p) {}"));
        assert!(may_choose(b"kernel void k(global int *g) { int *p = g; }"));
        assert!(may_choose(b"typedef struct s S; void f(const S *p) {}"));
        assert!(may_choose(
            b"kernel void k(global int *g) { g[0] = *(int *)g; }"
        ));
        assert!(!may_choose(
            b"kernel void k(global int *g, local float4 *l, const int n) {\n\
              // int *p\n int x = n * g[0]; g[1] = (x * n); local int *q = (local int *)l;\n\
              for (int i = 0; i < n; i++) g[i] = g[i] * 2; }"
        ));
    }
}
