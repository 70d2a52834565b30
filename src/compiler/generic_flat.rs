//! The "flat" build of a program that chooses a generic pointer's address space at run time
//! ([`super::generic_spaces::find`]): clang's -O0 LLVM IR rewritten so that every pointer a
//! generic pointer may hold is a global pointer, for clspv's physical addressing mode
//! (`-arch=spir64 -physical-storage-buffers`), where global pointers are 64-bit addresses and
//! a `phi` or `select` of them is an ordinary value.
//!
//! - Every `__local` variable (a module-level `addrspace(3)` global in clang's IR) moves into a
//!   per-launch scratch buffer, at `scratch + group_linear_id * LOCAL + offset`; every private
//!   variable (`alloca`) whose address reaches a generic pointer, with the pointers derived
//!   from it, moves to `scratch + LOCAL * groups + work_item * PRIVATE + offset`, where
//!   `work_item` is the group's linear id times the enqueued work-group size plus the local
//!   linear id. Offsets are module-wide (no two variables share bytes). Locals stay
//!   uninitialised; a private's stores stay where they are.
//! - Then `addrspace(3)` and `addrspace(4)` become `addrspace(1)`: every generic pointer is a
//!   global pointer; address-space casts between them become no-ops.
//! - Each kernel gets a trailing `ulong` parameter, [`PARAMETER`]`L<LOCAL>_P<PRIVATE>`, that
//!   the runtime hides from the application and sets at each launch to the device address of
//!   the scratch buffer ([`sizes`] reads the sizes back from the name in clspv's argument
//!   reflection, so they survive program binaries). Functions reach it through a private
//!   module variable the kernel stores it in.
//! - `__local` pointer kernel parameters (sized by clSetKernelArg) stay the application's
//!   arguments but go unused: the runtime lays their memory out after each work-group's
//!   variables at each launch and passes, in more hidden `ulong` parameters, the work-group's
//!   bytes ([`GROUP_BYTES`]) and each one's offset in them ([`LOCAL_ARGUMENT`]`<ordinal>`).
//!   The work-group's bytes (LOCAL where a kernel has no such parameter) are the stride of
//!   the local regions, kept in another private module variable.
//! - Private pointers stored in memory other than a function's own pointer variables (a
//!   union in global memory), converted to integers or made from them are global: their
//!   variables move, and pointers loaded from such memory are global pointers. Physical
//!   builds that keep such addresses in global or local memory are made flat for that alone
//!   ([`takes_addresses`]), without a generic pointer chosen at run time.
//! - A fence on local memory must now order global memory too: `barrier`,
//!   `work_group_barrier`, `mem_fence` and the like get `CLK_GLOBAL_MEM_FENCE` with
//!   `CLK_LOCAL_MEM_FENCE`.
//! - `to_global`, `to_local`, `to_private` and `get_fence` decide by address: this work-group's
//!   local range, this work-item's private range, else global.
//!
//! - Generic pointer variables, `phi`s and `select`s are kept as 64-bit addresses in private
//!   variables accessed `volatile` ([`through_slots`]: a clspv bug).
//!
//! Refused (the build fails as before, with the reason): a moved private variable's pointer
//! passed to a function (whose parameter is a private pointer) or used in other ways than
//! loads, stores, GEPs, `phi`/`select`, comparisons and casts, variables whose type has no
//! known layout, variable-length private arrays.

use std::collections::{HashMap, HashSet};

use super::generic_spaces::{matching, value_at};
use super::wrapped_copy::{parse, split_args, Types};

/// The hidden scratch parameter's name, before its sizes.
pub const PARAMETER: &str = "__vkcl_flat_scratch_";

/// (LOCAL, PRIVATE) bytes from a hidden parameter's name; None for other names.
pub fn sizes(name: &str) -> Option<(u64, u64)> {
    let rest = name.strip_prefix(PARAMETER)?.strip_prefix('L')?;
    let (local, private) = rest.split_once("_P")?;
    Some((local.parse().ok()?, private.parse().ok()?))
}

/// The hidden parameter of a kernel with `__local` pointer parameters that holds its
/// work-group's bytes of scratch: the program's `__local` variables and those arguments.
pub const GROUP_BYTES: &str = "__vkcl_flat_group_bytes";

/// The hidden parameters' name, before the ordinal of the `__local` pointer parameter whose
/// offset in the work-group's bytes each holds.
pub const LOCAL_ARGUMENT: &str = "__vkcl_flat_local_";

/// The ordinal of the `__local` pointer argument a hidden parameter's name stands for.
pub fn local_argument(name: &str) -> Option<u32> {
    name.strip_prefix(LOCAL_ARGUMENT)?.parse().ok()
}

/// Scratch regions start at multiples of this (the largest OpenCL C alignment).
pub const ALIGN: u64 = 128;

/// The private module variable holding the scratch address.
const BASE: &str = "@__vkcl_flat_base";

/// The private module variable holding a work-group's bytes of scratch (the stride of the
/// `__local` regions).
const STRIDE: &str = "@__vkcl_flat_stride";

/// The kernels' stored stride where it is the program's `__local` bytes, until they are known.
const LOCAL_BYTES: &str = "__vkcl_flat_local_bytes";

/// The address space the `__local` pointer parameters keep (unused) until address spaces are
/// mapped: `addrspace(3)` after.
const KEPT_LOCAL: &str = "addrspace(7003)";

/// Calls whose first operand is a `cl_mem_fence_flags`.
const FENCES: [&str; 7] = [
    "@_Z7barrierj(",
    "@_Z18work_group_barrierj(",
    "@_Z18work_group_barrierj12memory_scope(",
    "@_Z9mem_fencej(",
    "@_Z14read_mem_fencej(",
    "@_Z15write_mem_fencej(",
    "@_Z22atomic_work_item_fencej12memory_order12memory_scope(",
];

/// clspv's address-space queries and get_fence, and the functions replacing them.
const QUERIES: [(&str, &str); 5] = [
    ("@__to_global(", "@__vkcl_flat_to_global("),
    ("@__to_local(", "@__vkcl_flat_to_local("),
    ("@__to_private(", "@__vkcl_flat_to_private("),
    ("@_Z9get_fencePU3AS4v(", "@__vkcl_flat_get_fence("),
    ("@_Z9get_fencePU3AS4Kv(", "@__vkcl_flat_get_fence("),
];

/// A byte layout being made: the next free offset and the largest alignment.
#[derive(Default)]
struct Layout {
    end: u64,
    align: u64,
}

impl Layout {
    fn place(&mut self, size: u64, align: u64) -> u64 {
        let at = self.end.next_multiple_of(align.max(1));
        self.end = at + size;
        self.align = self.align.max(align);
        at
    }

    /// The region's size: a multiple of its alignment and of [`ALIGN`].
    fn bytes(&self) -> u64 {
        self.end.next_multiple_of(ALIGN)
    }
}

/// `ll` (clang's -O0 IR of a spir64 build) as its flat build; Err: why it cannot be made.
pub fn rewrite(ll: &str) -> Result<String, String> {
    let types = pointer_types(ll);
    let mut locals: HashMap<&str, u64> = HashMap::new();
    let mut local_layout = Layout::default();
    for line in ll.lines() {
        if let Some((name, ty)) = local_variable(line) {
            let (size, align) = layout(&types, ty, line)
                .ok_or_else(|| format!("no layout for __local variable {name}"))?;
            locals.insert(name, local_layout.place(size, align));
        }
    }
    let mut privates = Layout::default();
    let mut out: Vec<String> = vec![];
    // Each kernel's header line and the names of its hidden parameters after the scratch's.
    let mut kernels: Vec<(usize, Vec<String>)> = vec![];
    let mut lines = ll.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("define ") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "}").collect();
            let f = Function::new(line, &body, &types, &locals, &mut privates)?;
            if f.kernel {
                kernels.push((out.len(), f.hidden()));
            }
            out.extend(f.rewrite()?);
            out.push("}".into());
            continue;
        }
        if local_variable(line).is_some() {
            continue;
        }
        let memory = ["@llvm.memcpy.", "@llvm.memmove.", "@llvm.memset."];
        let query = QUERIES.iter().any(|(from, _)| line.contains(from));
        if line.starts_with("declare ") && (query || memory.iter().any(|m| line.contains(m))) {
            continue;
        }
        out.push(line.to_string());
    }
    let (local_bytes, private_bytes) = (local_layout.bytes(), privates.bytes());
    let parameter = format!("{PARAMETER}L{local_bytes}_P{private_bytes}");
    let mut metadata = Metadata::new(&out);
    for &(k, ref hidden) in &kernels {
        let names: Vec<&str> = [&parameter[..]]
            .into_iter()
            .chain(hidden.iter().map(String::as_str))
            .collect();
        out[k] = metadata.extend(&out[k], &names);
    }
    out.extend(metadata.added);
    let out: Vec<String> = out.iter().map(|l| map_spaces(l)).collect();
    let mut text = out
        .join("\n")
        .replace(PLACEHOLDER, &format!("%{parameter}"))
        .replace(LOCAL_BYTES, &local_bytes.to_string())
        .replace(KEPT_LOCAL, "addrspace(3)");
    text.push('\n');
    // The memory intrinsics, declared again by the names their calls have now.
    let mut declared = HashSet::new();
    for l in &out {
        if let Some(d) = memory_declaration(l) {
            if declared.insert(d.clone()) {
                text.push_str(&d);
                text.push('\n');
            }
        }
    }
    text.push_str(&support(&text, private_bytes));
    Ok(text)
}

/// Whether a physical-addressing build of `ll` would keep a `__local` or private variable's
/// address in global or local memory: a pointer to one stored there, or its integer value
/// (the physical build's pointer members are `ulong`s, super::pointer_members). clspv 0.0.1
/// writes those as conversions of Workgroup and Function pointers, which have no address
/// (invalid SPIR-V that crashed lavapipe); the flat build gives them one. Likewise a private
/// variable's address as an integer kept in private memory (a struct's member) where the
/// module makes pointers of integers: clspv loads it back as a tagged number taken for a
/// global address. (Differences of such pointers, which clspv folds, are not numbers kept.)
pub fn takes_addresses(ll: &str) -> bool {
    let shared = |d: &str| d.starts_with("ptr addrspace(1) ") || d.starts_with("ptr addrspace(3) ");
    let made_pointers = ll.contains(" inttoptr ");
    // The function's integers made of private or `__local` addresses: whether private.
    let mut numbers: HashMap<&str, bool> = HashMap::new();
    for l in ll.lines() {
        if l.starts_with("define ") {
            numbers.clear();
        }
        let l = l.trim();
        if let Some((d, rhs)) = definition(l) {
            if rhs.starts_with("ptrtoint ptr %") {
                numbers.insert(d, true);
            } else if rhs.starts_with("ptrtoint ptr addrspace(3) ") {
                numbers.insert(d, false);
            }
            continue;
        }
        let Some(rest) = l.strip_prefix("store ") else {
            continue;
        };
        let rest = rest.strip_prefix("volatile ").unwrap_or(rest);
        let args = split_args(rest);
        let (Some(v), Some(to)) = (args.first(), args.get(1)) else {
            continue;
        };
        let pointer = v.starts_with("ptr %") || v.starts_with("ptr addrspace(3) ");
        let kept = v
            .strip_prefix("i64 ")
            .and_then(|n| numbers.get(value_at(n)));
        let number =
            kept.is_some() || v.starts_with("i64 ") && v.contains("ptrtoint (ptr addrspace(3) ");
        if (pointer || number) && shared(to) || kept == Some(&true) && made_pointers {
            return true;
        }
    }
    false
}

/// `@name` and type of a module-level `__local` variable's definition.
fn local_variable(line: &str) -> Option<(&str, &str)> {
    let (name, def) = line.split_once(" = ")?;
    if !name.starts_with('@') {
        return None;
    }
    let def = def.strip_prefix("internal ").unwrap_or(def);
    let ty = def.strip_prefix("addrspace(3) global ")?;
    Some((name, ty))
}

/// The named types of module `ll` with their pointers as `i64`: a flat build is spir64, where
/// a pointer of every address space is 8 bytes (a struct keeping a generic pointer).
fn pointer_types(ll: &str) -> Types {
    let definitions: String = ll
        .lines()
        .filter(|l| l.starts_with('%') && l.contains(" = type "))
        .map(|l| pointers_as_words(l) + "\n")
        .collect();
    Types::of_module(&definitions)
}

/// `ty` with each pointer type (`ptr`, `ptr addrspace(N)`) written `i64`.
fn pointers_as_words(ty: &str) -> String {
    let word = |c: char| c.is_ascii_alphanumeric() || "%@._$-".contains(c);
    let mut out = String::with_capacity(ty.len());
    let mut rest = ty;
    while let Some(at) = rest.find("ptr") {
        let after = &rest[at + 3..];
        let alone = !rest[..at].ends_with(word) && !after.starts_with(word);
        out.push_str(&rest[..at]);
        if !alone {
            out.push_str("ptr");
            rest = after;
            continue;
        }
        out.push_str("i64");
        rest = match after
            .strip_prefix(" addrspace(")
            .and_then(|a| a.split_once(')'))
        {
            Some((_, tail)) => tail,
            None => after,
        };
    }
    out + rest
}

/// (size, alignment) of the type at the start of `ty`, its alignment at least the `align N`
/// of `line`.
fn layout(types: &Types, ty: &str, line: &str) -> Option<(u64, u64)> {
    let ty = pointers_as_words(ty);
    let (t, _) = parse(&ty)?;
    let (size, align) = types.layout(&t)?;
    let stated = line
        .rsplit_once("align ")
        .and_then(|(_, a)| a.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .unwrap_or(1);
    Some((size, align.max(stated)))
}

const PLACEHOLDER: &str = "%__vkcl_flat_scratch_sizes";

/// One function of the module being rewritten.
struct Function<'a> {
    header: &'a str,
    body: &'a [&'a str],
    kernel: bool,
    locals: &'a HashMap<&'a str, u64>,
    /// Moved allocas and their offsets in the private region.
    moved: HashMap<&'a str, u64>,
    /// Private pointer values that become global pointers: the moved allocas, what is
    /// derived from them, and to_private's results.
    derived: HashSet<&'a str>,
    /// Private pointer variables that hold such pointers: they hold global pointers.
    slots: HashSet<&'a str>,
    /// A kernel's `__local` pointer parameters: (ordinal, value).
    local_params: Vec<(usize, &'a str)>,
}

/// A function header's parameters, as written.
fn parameters(header: &str) -> Vec<&str> {
    let open = header
        .find('@')
        .and_then(|at| header[at..].find('(').map(|o| at + o));
    let Some(close) = open.and_then(|o| matching(&header[o..]).map(|c| o + c)) else {
        return vec![];
    };
    let inside = &header[open.unwrap_or(0) + 1..close];
    match inside.trim().is_empty() {
        true => vec![],
        false => split_args(inside).into_iter().map(str::trim).collect(),
    }
}

/// (value, variable) of `store ptr %v, ptr %slot`.
fn stored_pointer(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim().strip_prefix("store ptr ")?;
    let args = split_args(rest);
    let v = value_at(args.first()?);
    let slot = args.get(1)?.strip_prefix("ptr ")?;
    v.starts_with('%').then_some((v, value_at(slot)))
}

/// The private pointer value a store writes to memory other than the private pointer
/// `variables`.
fn stored_elsewhere<'a, T>(line: &'a str, variables: &HashMap<&str, T>) -> Option<&'a str> {
    let rest = line.trim().strip_prefix("store ")?;
    let rest = rest.strip_prefix("volatile ").unwrap_or(rest);
    let args = split_args(rest.strip_prefix("ptr ")?);
    let v = value_at(args.first()?);
    let to = args.get(1)?;
    let variable = to
        .strip_prefix("ptr ")
        .filter(|t| t.starts_with('%'))
        .map(value_at);
    let own = variable.is_some_and(|x| variables.contains_key(x));
    (v.starts_with('%') && !own).then_some(v)
}

/// The value an instruction defines, and its right-hand side.
fn definition(line: &str) -> Option<(&str, &str)> {
    let (d, r) = line.trim().split_once(" = ")?;
    d.starts_with('%').then_some((d, r))
}

/// Whether `v` occurs in `s` as a whole value name.
fn mentions(s: &str, v: &str) -> bool {
    s.match_indices(v).any(|(i, _)| value_at(&s[i..]) == v)
}

/// Private (`ptr`, address space 0) operands' values of an instruction's right-hand side.
fn private_operands(rhs: &str) -> Vec<&str> {
    let mut out = vec![];
    let mut rest = rhs;
    while let Some(i) = rest.find('%') {
        let v = value_at(&rest[i..]);
        let before = &rest[..i];
        // The operand's own text back to the previous separator.
        let start = before.rfind([',', '(', '[']).map_or(0, |k| k + 1);
        let own = &before[start..];
        let typed = private_ptr_word(own).is_some();
        // A phi's values share the type written once after `phi`.
        let phi = rhs.starts_with("phi ptr ") && own.trim().is_empty() && before.ends_with("[ ");
        if typed || phi {
            out.push(v);
        }
        rest = &rest[i + v.len()..];
    }
    out
}

impl<'a> Function<'a> {
    fn new(
        header: &'a str,
        body: &'a [&'a str],
        types: &Types,
        locals: &'a HashMap<&'a str, u64>,
        privates: &mut Layout,
    ) -> Result<Function<'a>, String> {
        let kernel = header.contains("spir_kernel");
        let local_params = match kernel {
            true => parameters(header)
                .iter()
                .enumerate()
                .filter(|(_, p)| p.starts_with("ptr addrspace(3) "))
                .filter_map(|(i, p)| Some((i, p.split_whitespace().last()?)))
                .filter(|(_, v)| v.starts_with('%'))
                .collect(),
            false => vec![],
        };
        // Roots (allocas, to_private results) of every private pointer value.
        let mut roots: HashMap<&str, HashSet<&str>> = HashMap::new();
        let mut allocas: HashMap<&str, &str> = HashMap::new();
        for line in body {
            let Some((d, rhs)) = definition(line) else {
                continue;
            };
            if rhs.starts_with("alloca ") {
                allocas.insert(d, line);
                roots.insert(d, HashSet::from([d]));
            } else if private_result(rhs) {
                roots.insert(d, HashSet::from([d]));
            }
        }
        // Private pointers loaded from memory other than private pointer variables: every
        // private pointer stored there is moved (below), so they are global too.
        let from_memory: HashSet<&str> = body
            .iter()
            .filter_map(|l| definition(l))
            .filter(|(_, rhs)| {
                let loaded = rhs
                    .strip_prefix("load ptr, ")
                    .or_else(|| rhs.strip_prefix("load volatile ptr, "));
                loaded.is_some_and(|r| {
                    let variable = r.strip_prefix("ptr ").map(value_at);
                    !variable.is_some_and(|v| {
                        allocas
                            .get(v)
                            .is_some_and(|l| l.contains(" = alloca ptr, "))
                    })
                })
            })
            .map(|(d, _)| d)
            .collect();
        for d in &from_memory {
            roots.insert(d, HashSet::from([*d]));
        }
        let derives = |rhs: &str| {
            ["getelementptr ", "phi ptr ", "select "]
                .iter()
                .any(|op| rhs.starts_with(op))
        };
        // Private pointer variables (`int *p` declared `private`): the roots stored in each.
        let mut contents: HashMap<&str, HashSet<&str>> = allocas
            .iter()
            .filter(|(_, l)| l.contains(" = alloca ptr, "))
            .map(|(a, _)| (*a, HashSet::new()))
            .collect();
        // What each derived value comes from (phis may name later values: to a fixed point).
        loop {
            let mut grew = false;
            for line in body {
                // A pointer stored in a variable, and loaded from it.
                if let Some((v, slot)) = stored_pointer(line) {
                    let from = roots.get(v).cloned().unwrap_or_default();
                    if let Some(c) = contents.get_mut(slot) {
                        let n = c.len();
                        c.extend(from);
                        grew |= c.len() != n;
                    }
                }
                let Some((d, rhs)) = definition(line) else {
                    continue;
                };
                if let Some(c) = rhs
                    .strip_prefix("load ptr, ptr ")
                    .and_then(|r| contents.get(value_at(r)))
                {
                    let c = c.clone();
                    let e = roots.entry(d).or_default();
                    let n = e.len();
                    e.extend(c);
                    grew |= e.len() != n;
                    continue;
                }
                if !derives(rhs) || rhs.starts_with("getelementptr ") && rhs.contains("addrspace(")
                {
                    continue;
                }
                let from: HashSet<&str> = private_operands(rhs)
                    .iter()
                    .flat_map(|v| roots.get(v).cloned().unwrap_or_default())
                    .collect();
                let e = roots.entry(d).or_default();
                let n = e.len();
                e.extend(from);
                grew |= e.len() != n;
            }
            if !grew {
                break;
            }
        }
        // Allocas whose pointers become generic, numbers or stored in memory other than
        // private pointer variables, and every alloca a value mixes with them.
        let mut moved_roots: HashSet<&str> = HashSet::new();
        for line in body {
            if let Some(v) = stored_elsewhere(line, &contents) {
                // Pointers loaded from such memory are taken for global ones: a private
                // pointer of unknown origin (a parameter) cannot go there.
                match roots.get(v).filter(|r| !r.is_empty()) {
                    Some(r) => moved_roots.extend(r.iter().copied()),
                    None => {
                        return Err(format!(
                            "a private pointer of unknown origin stored in memory: `{}`",
                            line.trim()
                        ))
                    }
                }
            }
            let Some((d, rhs)) = definition(line) else {
                continue;
            };
            if private_result(rhs) || from_memory.contains(d) {
                moved_roots.insert(d);
            }
            if rhs.starts_with("addrspacecast ptr %") || rhs.starts_with("ptrtoint ptr %") {
                for v in private_operands(rhs) {
                    moved_roots.extend(roots.get(v).into_iter().flatten());
                }
            }
        }
        loop {
            let n = moved_roots.len();
            for r in roots.values().chain(contents.values()) {
                if r.iter().any(|x| moved_roots.contains(x)) {
                    moved_roots.extend(r.iter().copied());
                }
            }
            if moved_roots.len() == n {
                break;
            }
        }
        let mut moved = HashMap::new();
        let mut order: Vec<&str> = moved_roots
            .iter()
            .copied()
            .filter(|r| allocas.contains_key(r))
            .collect();
        order.sort_by_key(|a| {
            body.iter()
                .position(|l| definition(l).is_some_and(|(d, _)| d == *a))
        });
        for a in order {
            let line = allocas[a];
            let ty = line.split_once("alloca ").map_or("", |(_, t)| t);
            if split_args(ty)
                .get(1)
                .is_some_and(|x| !x.trim().starts_with("align"))
            {
                return Err(format!("a variable-length private array ({a})"));
            }
            let (size, align) = layout(types, ty, line)
                .ok_or_else(|| format!("no layout for the private variable {a}"))?;
            moved.insert(a, privates.place(size, align));
        }
        let derived = roots
            .iter()
            .filter(|(_, r)| r.iter().any(|x| moved_roots.contains(x)))
            .map(|(v, _)| *v)
            .collect();
        let slots = contents
            .iter()
            .filter(|(_, c)| c.iter().any(|x| moved_roots.contains(x)))
            .map(|(s, _)| *s)
            .collect();
        Ok(Function {
            header,
            body,
            kernel,
            locals,
            moved,
            derived,
            slots,
            local_params,
        })
    }

    /// A kernel's hidden parameters after the scratch's: with `__local` pointer parameters,
    /// its work-group's bytes and each one's offset in them.
    fn hidden(&self) -> Vec<String> {
        if self.local_params.is_empty() {
            return vec![];
        }
        let offsets = self
            .local_params
            .iter()
            .map(|(i, _)| format!("{LOCAL_ARGUMENT}{i}"));
        [GROUP_BYTES.to_string()]
            .into_iter()
            .chain(offsets)
            .collect()
    }

    /// The function's lines (without the closing brace).
    fn rewrite(&self) -> Result<Vec<String>, String> {
        let mut header = self.header.to_string();
        if self.kernel {
            let open = header
                .find('@')
                .and_then(|at| header[at..].find('(').map(|o| at + o));
            let open = open.ok_or("a kernel without parameters")?;
            let close = open + matching(&header[open..]).ok_or("a kernel header unparsed")?;
            let sep = if header[open + 1..close].trim().is_empty() {
                ""
            } else {
                ", "
            };
            let hidden: String = self
                .hidden()
                .iter()
                .map(|h| format!(", i64 %{h}"))
                .collect();
            header.insert_str(close, &format!("{sep}i64 {PLACEHOLDER}{hidden}"));
            // The `__local` pointer parameters stay the application's arguments, unused: the
            // runtime lays their memory out in the scratch buffer.
            let params = header[open + 1..close].to_string();
            let mut kept = String::new();
            for (n, p) in split_args(&params).iter().enumerate() {
                let p = match self.local_params.iter().find(|(i, _)| *i == n) {
                    Some((_, v)) => p
                        .replacen("ptr addrspace(3)", &format!("ptr {KEPT_LOCAL}"), 1)
                        .replace(v, &format!("%__vkcl.unused.{n}")),
                    None => p.to_string(),
                };
                kept.push_str(if n == 0 { "" } else { ", " });
                kept.push_str(&p);
            }
            header.replace_range(open + 1..close, &kept);
        }
        let mut entry: Vec<String> = vec![];
        if self.kernel {
            entry.push(format!("  store i64 {PLACEHOLDER}, ptr {BASE}, align 8"));
            let stride = match self.local_params.is_empty() {
                true => LOCAL_BYTES.to_string(),
                false => format!("%{GROUP_BYTES}"),
            };
            entry.push(format!("  store i64 {stride}, ptr {STRIDE}, align 8"));
        }
        let mut used: Vec<(&str, u64)> = self
            .locals
            .iter()
            .filter(|(l, _)| self.body.iter().any(|line| mentions(line, l)))
            .map(|(l, o)| (*l, *o))
            .collect();
        used.sort_by_key(|&(_, o)| o);
        let mut local_names: HashMap<&str, String> = HashMap::new();
        if !used.is_empty() || !self.local_params.is_empty() {
            entry.push(
                "  %__vkcl.locals = call spir_func ptr addrspace(1) @__vkcl_flat_locals()".into(),
            );
            for (i, (l, offset)) in used.iter().enumerate() {
                let name = format!("%__vkcl.local.{i}");
                entry.push(format!(
                    "  {name} = getelementptr inbounds i8, ptr addrspace(1) %__vkcl.locals, i64 {offset}"
                ));
                local_names.insert(l, name);
            }
            // As an address, not an `i8` GEP: clspv would type the pointer `uchar *` from it
            // (an atomic store of an `int` through it is then invalid SPIR-V).
            for (i, v) in &self.local_params {
                let a = format!("%__vkcl.larg.{i}");
                entry.extend([
                    format!("  {a} = ptrtoint ptr addrspace(1) %__vkcl.locals to i64"),
                    format!("  {a}.at = add i64 {a}, %{LOCAL_ARGUMENT}{i}"),
                    format!("  {v} = inttoptr i64 {a}.at to ptr addrspace(1)"),
                ]);
            }
        }
        if !self.moved.is_empty() {
            entry.push(
                "  %__vkcl.privates = call spir_func ptr addrspace(1) @__vkcl_flat_privates()"
                    .into(),
            );
            let mut moved: Vec<_> = self.moved.iter().collect();
            moved.sort_by_key(|(_, o)| **o);
            for (a, offset) in moved {
                entry.push(format!(
                    "  {a} = getelementptr inbounds i8, ptr addrspace(1) %__vkcl.privates, i64 {offset}"
                ));
            }
        }
        let mut body: Vec<String> = vec![];
        let mut hoisted = 0;
        for line in &through_slots(self.body, &mut entry) {
            if definition(line).is_some_and(|(d, _)| self.moved.contains_key(d)) {
                continue;
            }
            let mut line = self.retype(line)?;
            for (l, name) in &local_names {
                line = replace_value(&line, l, name);
            }
            if !local_names.is_empty() {
                line = hoist(&line, &mut entry, &mut hoisted);
            }
            for (from, to) in QUERIES {
                line = line.replace(from, to);
            }
            line = line.replace(
                "call spir_func ptr @__vkcl_flat_to_private(",
                "call spir_func ptr addrspace(1) @__vkcl_flat_to_private(",
            );
            if line.contains("@llvm.lifetime.") && self.derived.iter().any(|v| mentions(&line, v)) {
                continue;
            }
            let (pre, line) = widen_fence(&line, &mut hoisted);
            body.extend(pre);
            body.push(line);
        }
        // The entry block's label first, where the body has one.
        let at = match self.body.first() {
            Some(l) if !l.starts_with(char::is_whitespace) && l.trim_end().ends_with(':') => 1,
            _ => 0,
        };
        let mut out = vec![header];
        out.extend(body[..at].iter().cloned());
        out.extend(entry);
        out.extend(body[at..].iter().cloned());
        Ok(out)
    }

    /// `line` with the derived private pointers typed as global ones (checked: only uses
    /// that stay right with a global pointer).
    fn retype(&self, line: &str) -> Result<String, String> {
        let (def, rhs) = match definition(line) {
            Some((d, r)) => (Some(d), r),
            None => (None, line.trim()),
        };
        let ops: Vec<&str> = private_operands(rhs)
            .into_iter()
            .filter(|v| self.derived.contains(v))
            .collect();
        let defines = def.is_some_and(|d| self.derived.contains(d));
        if def.is_some_and(|d| self.slots.contains(d)) {
            return Ok(line.replacen(" = alloca ptr, ", " = alloca ptr addrspace(1), ", 1));
        }
        if ops.is_empty() && !defines {
            return Ok(line.to_string());
        }
        let op = rhs.split_whitespace().next().unwrap_or("");
        let allowed = match op {
            "load" | "getelementptr" | "phi" | "select" | "icmp" | "addrspacecast" | "ptrtoint" => {
                true
            }
            // As the address, or stored: in a pointer variable that becomes global, or in
            // other memory, which holds only such pointers.
            "store" => true,
            _ => {
                private_result(rhs)
                    || [
                        "@llvm.lifetime.",
                        "@llvm.memcpy.",
                        "@llvm.memmove.",
                        "@llvm.memset.",
                    ]
                    .iter()
                    .any(|i| line.contains(i))
            }
        };
        if !allowed {
            return Err(format!(
                "the address of a private variable that a generic pointer may hold is used in \
                 a way vkcl cannot move to global memory: `{}`",
                line.trim()
            ));
        }
        let mut out = line.to_string();
        if defines && rhs.starts_with("load ptr, ") {
            out = out.replacen(" = load ptr, ", " = load ptr addrspace(1), ", 1);
        }
        if defines && rhs.starts_with("phi ptr ") {
            out = out.replacen("phi ptr ", "phi ptr addrspace(1) ", 1);
        }
        if defines && rhs.starts_with("load volatile ptr, ") {
            out = out.replacen(
                " = load volatile ptr, ",
                " = load volatile ptr addrspace(1), ",
                1,
            );
        }
        let cast = rhs.starts_with("addrspacecast ") || rhs.starts_with("inttoptr ");
        if defines && cast && out.ends_with(" to ptr") {
            out.push_str(" addrspace(1)");
        }
        for v in ops {
            out = typed_global(&out, v);
        }
        Ok(out)
    }
}

/// A phi's incoming (value, block) pairs.
type Incoming<'a> = Vec<(&'a str, &'a str)>;

/// `body` with its generic pointer variables, `phi`s and `select`s kept as 64-bit addresses
/// in private variables accessed `volatile`: clspv 0.0.1 in physical addressing mode crashes
/// (SIGSEGV in its SPIR-V producer) or writes an invalid OpSelect when a `phi` or `select`
/// chooses between pointers it types differently (`c ? g + i : out + 16` in plain OpenCL C
/// does it), and LLVM would fold integer choices of `ptrtoint`s back into pointer ones;
/// volatile accesses are neither promoted nor folded. New variables go to `entry`.
fn through_slots(body: &[&str], entry: &mut Vec<String>) -> Vec<String> {
    const GENERIC: &str = "ptr addrspace(4)";
    let slots: Vec<&str> = body
        .iter()
        .filter_map(|l| definition(l))
        .filter(|(_, rhs)| rhs.starts_with("alloca ptr addrspace(4),"))
        .map(|(d, _)| d)
        .filter(|d| {
            body.iter()
                .all(|l| super::generic_spaces::only_loaded_or_stored(l.trim(), d))
        })
        .collect();
    // Each phi: its slot and incoming (value, block).
    let mut phis: HashMap<&str, (String, Incoming)> = HashMap::new();
    for l in body {
        let Some((d, rhs)) = definition(l) else {
            continue;
        };
        let Some(incoming) = rhs.strip_prefix("phi ptr addrspace(4) ") else {
            continue;
        };
        let mut pairs = vec![];
        for pair in split_args(incoming) {
            let inner = pair.trim().trim_start_matches('[').trim_end_matches(']');
            if let [v, b] = split_args(inner)[..] {
                pairs.push((v, b.trim_start_matches('%')));
            }
        }
        let slot = format!("%__vkcl.slot.{}", entry.len());
        entry.push(format!("  {slot} = alloca i64, align 8"));
        phis.insert(d, (slot, pairs));
    }
    let mut out = vec![];
    let mut n = 0;
    let mut fresh = || {
        n += 1;
        format!("%__vkcl.addr.{n}")
    };
    let mut block = "";
    // Loads of the phis' slots waiting for the end of the block's phis.
    let mut pending: Vec<String> = vec![];
    for &line in body {
        let trimmed = line.trim();
        let is_label = !line.starts_with(char::is_whitespace)
            && line
                .split(';')
                .next()
                .is_some_and(|l| l.trim_end().ends_with(':'));
        if is_label {
            block = line.split(':').next().unwrap_or("").trim();
            out.push(line.to_string());
            continue;
        }
        let def = definition(line);
        if def.is_some_and(|(d, _)| phis.contains_key(d)) {
            let (d, _) = def.unwrap_or_default();
            let i = fresh();
            pending.push(format!(
                "  {i} = load volatile i64, ptr {}, align 8",
                phis[d].0
            ));
            pending.push(format!("  {d} = inttoptr i64 {i} to {GENERIC}"));
            continue;
        }
        if !trimmed.starts_with("%") || !trimmed.contains(" = phi ") {
            out.append(&mut pending);
        }
        let terminator = ["br ", "switch ", "ret ", "ret", "unreachable"]
            .iter()
            .any(|t| trimmed.starts_with(t));
        if terminator {
            for (slot, pairs) in phis.values() {
                for (v, _) in pairs
                    .iter()
                    .filter(|(_, b)| b.trim_matches('"') == block.trim_matches('"'))
                {
                    let i = fresh();
                    out.push(format!("  {i} = ptrtoint {GENERIC} {v} to i64"));
                    out.push(format!("  store volatile i64 {i}, ptr {slot}, align 8"));
                }
            }
        }
        match def {
            Some((d, _)) if slots.contains(&d) => out.push(format!("  {d} = alloca i64, align 8")),
            Some((d, rhs)) if rhs.starts_with("load ptr addrspace(4), ") => {
                let addr = split_args(rhs)
                    .get(1)
                    .map_or("", |a| a.split_whitespace().last().unwrap_or(""));
                match slots.contains(&addr) {
                    true => {
                        let i = fresh();
                        out.push(format!("  {i} = load volatile i64, ptr {addr}, align 8"));
                        out.push(format!("  {d} = inttoptr i64 {i} to {GENERIC}"));
                    }
                    false => out.push(line.to_string()),
                }
            }
            Some((d, rhs)) if rhs.starts_with("select ") && rhs.contains(GENERIC) => {
                let args = split_args(rhs.trim_start_matches("select "));
                let ops: Vec<&str> = args
                    .iter()
                    .skip(1)
                    .filter_map(|a| a.strip_prefix(GENERIC))
                    .map(str::trim)
                    .collect();
                if ops.len() != 2 {
                    out.push(line.to_string());
                    continue;
                }
                let mut loaded = vec![];
                for v in ops {
                    let slot = format!("%__vkcl.slot.{}", entry.len());
                    entry.push(format!("  {slot} = alloca i64, align 8"));
                    let (i, l) = (fresh(), fresh());
                    out.push(format!("  {i} = ptrtoint {GENERIC} {v} to i64"));
                    out.push(format!("  store volatile i64 {i}, ptr {slot}, align 8"));
                    out.push(format!("  {l} = load volatile i64, ptr {slot}, align 8"));
                    loaded.push(l);
                }
                let (s, c) = (fresh(), args[0]);
                out.push(format!(
                    "  {s} = select {c}, i64 {}, i64 {}",
                    loaded[0], loaded[1]
                ));
                out.push(format!("  {d} = inttoptr i64 {s} to {GENERIC}"));
            }
            None if trimmed.starts_with("store ptr addrspace(4) ") => {
                let args = split_args(trimmed.trim_start_matches("store "));
                let addr = args
                    .get(1)
                    .map_or("", |a| a.split_whitespace().last().unwrap_or(""));
                match slots.contains(&addr) {
                    true => {
                        let v = args[0].trim_start_matches(GENERIC).trim();
                        let i = fresh();
                        out.push(format!("  {i} = ptrtoint {GENERIC} {v} to i64"));
                        out.push(format!("  store volatile i64 {i}, ptr {addr}, align 8"));
                    }
                    false => out.push(line.to_string()),
                }
            }
            _ => out.push(line.to_string()),
        }
    }
    out
}

/// Whether an instruction's result is a private pointer that is really global: to_private's,
/// or an explicit cast of a generic pointer to a private one.
fn private_result(rhs: &str) -> bool {
    rhs.contains(" ptr @__to_private(")
        || rhs.starts_with("addrspacecast ptr addrspace(4) ") && rhs.ends_with(" to ptr")
        || rhs.starts_with("inttoptr ") && rhs.ends_with(" to ptr")
}

/// The end of the last `ptr` word of an operand's text (`ptr noundef align 4 `) where it is a
/// private pointer type (no `addrspace(N)` after it).
fn private_ptr_word(own: &str) -> Option<usize> {
    let mut found = None;
    let mut at = 0;
    for w in own.split(' ') {
        let end = at + w.len();
        if w == "ptr" {
            found = (!own[end..].starts_with(" addrspace(")).then_some(end);
        }
        at = end + 1;
    }
    found
}

/// `line` with `ptr` (address space 0) before each operand `v` made `ptr addrspace(1)`.
fn typed_global(line: &str, v: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find(v) {
        let whole = value_at(&rest[i..]) == v;
        let before = &rest[..i];
        let start = before.rfind([',', '(', '[']).map_or(0, |k| k + 1);
        match private_ptr_word(&before[start..]).filter(|_| whole) {
            Some(p) => {
                out.push_str(&before[..start + p]);
                out.push_str(" addrspace(1)");
                out.push_str(&before[start + p..]);
            }
            None => out.push_str(before),
        }
        out.push_str(v);
        rest = &rest[i + v.len()..];
    }
    out.push_str(rest);
    out
}

/// `line` with every whole occurrence of value `v` replaced by `by`.
fn replace_value(line: &str, v: &str, by: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find(v) {
        out.push_str(&rest[..i]);
        out.push_str(match value_at(&rest[i..]) == v {
            true => by,
            false => v,
        });
        rest = &rest[i + v.len()..];
    }
    out.push_str(rest);
    out
}

/// `line` with its constant expressions over the moved locals (now values) made
/// instructions in the entry block: casts to their operand, GEPs to a new value.
fn hoist(line: &str, entry: &mut Vec<String>, n: &mut usize) -> String {
    let mut line = line.to_string();
    loop {
        // The last (innermost) constant expression whose operands hold a value.
        let found = ["addrspacecast (", "getelementptr ", "ptrtoint ("]
            .iter()
            .flat_map(|k| line.match_indices(k).map(|(i, _)| i).collect::<Vec<_>>())
            .filter_map(|i| {
                let open = i + line[i..].find('(')?;
                let between = &line[i..open];
                let flags = between
                    .split_whitespace()
                    .skip(1)
                    .all(|w| ["inbounds", "nuw", "nusw", "inrange"].contains(&w));
                let close = open + matching(&line[open..])?;
                let inside = &line[open + 1..close];
                (flags && inside.contains("%__vkcl.")).then_some((i, open, close))
            })
            .max();
        let Some((i, open, close)) = found else {
            return line;
        };
        let inside = line[open + 1..close].to_string();
        let by = match line[i..].starts_with("addrspacecast") {
            true => {
                let operand = inside.rsplit_once(" to ").map_or(&inside[..], |(o, _)| o);
                operand.split_whitespace().last().unwrap_or("").to_string()
            }
            false => {
                let name = format!("%__vkcl.cexpr.{n}");
                *n += 1;
                entry.push(format!("  {name} = {}{inside}", &line[i..open]));
                name
            }
        };
        line.replace_range(i..=close, &by);
    }
}

/// A fence call's flags with CLK_GLOBAL_MEM_FENCE added where CLK_LOCAL_MEM_FENCE is: the
/// instructions to put before the line, and the line.
fn widen_fence(line: &str, n: &mut usize) -> (Vec<String>, String) {
    let Some(at) = FENCES
        .iter()
        .find_map(|f| line.find(f).map(|i| i + f.len()))
    else {
        return (vec![], line.to_string());
    };
    let args = split_args(&line[at..line[at..].find(')').map_or(line.len(), |e| at + e)]);
    let Some(flags) = args.first().and_then(|a| a.strip_prefix("i32 ")) else {
        return (vec![], line.to_string());
    };
    let start = at + line[at..].find(flags).unwrap_or(0);
    let end = start + flags.len();
    if let Ok(f) = flags.trim().parse::<u32>() {
        let widened = if f & 1 != 0 { f | 2 } else { f };
        return (
            vec![],
            format!("{}{widened}{}", &line[..start], &line[end..]),
        );
    }
    let name = format!("%__vkcl.fence.{n}");
    *n += 1;
    let pre = vec![
        format!("  {name}.l = and i32 {flags}, 1"),
        format!("  {name}.g = shl i32 {name}.l, 1"),
        format!("  {name} = or i32 {flags}, {name}.g"),
    ];
    (pre, format!("{}{name}{}", &line[..start], &line[end..]))
}

/// `line` with address spaces 3 and 4 made 1, and casts that became no-ops removed.
fn map_spaces(line: &str) -> String {
    let mut line = line
        .replace("addrspace(3)", "addrspace(1)")
        .replace("addrspace(4)", "addrspace(1)");
    // Constant expressions.
    while let Some(i) = line.find("addrspacecast (ptr addrspace(1) ") {
        let open = i + "addrspacecast ".len();
        let Some(close) = matching(&line[open..]).map(|c| open + c) else {
            break;
        };
        let inside = &line[open + 1..close];
        let Some(operand) = inside
            .strip_suffix(" to ptr addrspace(1)")
            .and_then(|o| o.strip_prefix("ptr addrspace(1) "))
        else {
            break;
        };
        let operand = operand.to_string();
        line.replace_range(i..=close, &operand);
    }
    // Instructions.
    if let Some((d, rhs)) = definition(&line) {
        if let Some(rest) = rhs.strip_prefix("addrspacecast ptr addrspace(1) ") {
            if let Some(v) = rest.strip_suffix(" to ptr addrspace(1)") {
                let indent = &line[..line.len() - line.trim_start().len()];
                return format!("{indent}{d} = getelementptr i8, ptr addrspace(1) {v}, i64 0");
            }
        }
    }
    // Memory intrinsics are named by their pointers' address spaces.
    for intrinsic in ["@llvm.memcpy.", "@llvm.memmove.", "@llvm.memset."] {
        line = rename_intrinsic(&line, intrinsic);
    }
    small_memset(&line).unwrap_or(line)
}

/// A memset of 1, 2, 4 or 8 bytes of a constant in global memory as one store: clspv 0.0.1
/// aborts ("Invalid bitcast ... to <4 x i16>") on the 4 bytes of padding a brace initialiser
/// of `struct { int n; int *p; }` clears once the struct is moved there.
fn small_memset(line: &str) -> Option<String> {
    let at = line.find("call void @llvm.memset.p1.")?;
    let open = at + line[at..].find('(')?;
    let close = open + matching(&line[open..])?;
    let args = split_args(&line[open + 1..close]);
    let [ptr, value, bytes, _] = args.as_slice() else {
        return None;
    };
    let words: Vec<&str> = ptr.split_whitespace().collect();
    let (align, target) = match words.as_slice() {
        ["ptr", "addrspace(1)", "align", a, v] => (*a, *v),
        ["ptr", "addrspace(1)", v] => ("1", *v),
        _ => return None,
    };
    let byte: u8 = value
        .trim()
        .strip_prefix("i8 ")?
        .trim()
        .parse::<i16>()
        .ok()? as u8;
    let bytes: u32 = bytes.trim().split_once(' ')?.1.trim().parse().ok()?;
    if ![1, 2, 4, 8].contains(&bytes) {
        return None;
    }
    let pattern = u64::from_ne_bytes([byte; 8]) >> (64 - 8 * bytes);
    // Written as the signed value of its width (LLVM's form).
    let shift = 64 - 8 * bytes;
    let signed = ((pattern << shift) as i64) >> shift;
    let indent = &line[..line.len() - line.trim_start().len()];
    Some(format!(
        "{indent}store i{} {signed}, ptr addrspace(1) {target}, align {align}",
        8 * bytes
    ))
}

/// A memory intrinsic's call or declaration named after its operands' address spaces again.
fn rename_intrinsic(line: &str, intrinsic: &str) -> String {
    let Some(at) = line.find(intrinsic) else {
        return line.to_string();
    };
    let Some(open) = line[at..].find('(').map(|o| at + o) else {
        return line.to_string();
    };
    let Some(close) = matching(&line[open..]).map(|c| open + c) else {
        return line.to_string();
    };
    let name = &line[at..open];
    let width = name.rsplit('.').next().unwrap_or("i64");
    let spaces: Vec<String> = split_args(&line[open + 1..close])
        .iter()
        .filter_map(|a| a.strip_prefix("ptr"))
        .map(|a| match a.trim_start().strip_prefix("addrspace(") {
            Some(n) => format!("p{}", n.split(')').next().unwrap_or("0")),
            None => "p0".into(),
        })
        .collect();
    format!(
        "{}{intrinsic}{}.{width}{}",
        &line[..at],
        spaces.join("."),
        &line[open..]
    )
}

/// The declaration of the memory intrinsic a call on `line` calls, from its operands' types.
fn memory_declaration(line: &str) -> Option<String> {
    let at = ["@llvm.memcpy.", "@llvm.memmove.", "@llvm.memset."]
        .iter()
        .find_map(|i| line.find(i))?;
    if !line.trim_start().starts_with("call ") && !line.contains(" call ") {
        return None;
    }
    let open = at + line[at..].find('(')?;
    let close = open + matching(&line[open..])?;
    let types: Vec<String> = split_args(&line[open + 1..close])
        .iter()
        .map(|a| {
            let words: Vec<&str> = a.split_whitespace().collect();
            match words.first() {
                Some(&"ptr") if words.get(1).is_some_and(|w| w.starts_with("addrspace(")) => {
                    format!("ptr {}", words[1])
                }
                Some(&"i1") => "i1 immarg".to_string(),
                Some(t) => t.to_string(),
                None => String::new(),
            }
        })
        .collect();
    Some(format!(
        "declare void {}({})",
        &line[at..open],
        types.join(", ")
    ))
}

/// The kernel argument metadata lists, each kernel's extended by the hidden parameter.
pub(super) struct Metadata {
    /// Node number → its text (`!{...}`).
    nodes: HashMap<u64, String>,
    next: u64,
    pub(super) added: Vec<String>,
}

impl Metadata {
    pub(super) fn new(lines: &[String]) -> Metadata {
        let mut nodes = HashMap::new();
        for l in lines {
            if let Some((n, def)) = l.strip_prefix('!').and_then(|l| l.split_once(" = ")) {
                if let Ok(n) = n.parse::<u64>() {
                    nodes.insert(n, def.to_string());
                }
            }
        }
        let next = nodes.keys().max().map_or(0, |m| m + 1);
        Metadata {
            nodes,
            next,
            added: vec![],
        }
    }

    /// A new node holding `list`; its number.
    pub(super) fn add(&mut self, list: &str) -> u64 {
        let m = self.next;
        self.next += 1;
        let node = format!("!{{{list}}}");
        self.added.push(format!("!{m} = {node}"));
        self.nodes.insert(m, node);
        m
    }

    /// `header` with each `!kernel_arg_*` list given one more `ulong` entry per parameter.
    pub(super) fn extend(&mut self, header: &str, parameters: &[&str]) -> String {
        let mut out = header.to_string();
        let each = |e: &str| vec![e; parameters.len()].join(", ");
        let names: Vec<String> = parameters.iter().map(|p| format!("!\"{p}\"")).collect();
        for (kind, extra) in [
            ("!kernel_arg_addr_space", each("i32 0")),
            ("!kernel_arg_access_qual", each("!\"none\"")),
            ("!kernel_arg_type", each("!\"ulong\"")),
            ("!kernel_arg_base_type", each("!\"ulong\"")),
            ("!kernel_arg_type_qual", each("!\"\"")),
            ("!kernel_arg_name", names.join(", ")),
        ] {
            let tag = format!("{kind} !");
            let Some(at) = out.find(&tag).map(|i| i + tag.len()) else {
                continue;
            };
            let digits = out[at..].chars().take_while(char::is_ascii_digit).count();
            let Ok(n) = out[at..at + digits].parse::<u64>() else {
                continue;
            };
            let Some(node) = self.nodes.get(&n) else {
                continue;
            };
            let inner = node
                .trim()
                .trim_start_matches("!{")
                .trim_end_matches('}')
                .trim();
            let list = match inner.is_empty() {
                true => extra,
                false => format!("{inner}, {extra}"),
            };
            let m = self.add(&list);
            out.replace_range(at..at + digits, &m.to_string());
        }
        out
    }
}

/// The module's new definitions: the base variable, the region functions, the address
/// queries, and the declarations of the built-ins they call that `text` lacks.
fn support(text: &str, private: u64) -> String {
    let mut s = format!(
        "{BASE} = internal global i64 0, align 8\n\
         {STRIDE} = internal global i64 0, align 8\n\
         \n\
         define internal spir_func i32 @__vkcl_flat_group() {{\n\
         entry:\n\
         \x20 %x64 = call spir_func i64 @_Z12get_group_idj(i32 0)\n\
         \x20 %y64 = call spir_func i64 @_Z12get_group_idj(i32 1)\n\
         \x20 %z64 = call spir_func i64 @_Z12get_group_idj(i32 2)\n\
         \x20 %nx64 = call spir_func i64 @_Z14get_num_groupsj(i32 0)\n\
         \x20 %ny64 = call spir_func i64 @_Z14get_num_groupsj(i32 1)\n\
         \x20 %x = trunc i64 %x64 to i32\n\
         \x20 %y = trunc i64 %y64 to i32\n\
         \x20 %z = trunc i64 %z64 to i32\n\
         \x20 %nx = trunc i64 %nx64 to i32\n\
         \x20 %ny = trunc i64 %ny64 to i32\n\
         \x20 %zy = mul i32 %z, %ny\n\
         \x20 %zy1 = add i32 %zy, %y\n\
         \x20 %zyx = mul i32 %zy1, %nx\n\
         \x20 %g = add i32 %zyx, %x\n\
         \x20 ret i32 %g\n\
         }}\n\
         \n\
         define internal spir_func ptr addrspace(1) @__vkcl_flat_locals() {{\n\
         entry:\n\
         \x20 %b = load i64, ptr {BASE}, align 8\n\
         \x20 %g = call spir_func i32 @__vkcl_flat_group()\n\
         \x20 %g64 = zext i32 %g to i64\n\
         \x20 %s = load i64, ptr {STRIDE}, align 8\n\
         \x20 %o = mul i64 %g64, %s\n\
         \x20 %a = add i64 %b, %o\n\
         \x20 %p = inttoptr i64 %a to ptr addrspace(1)\n\
         \x20 ret ptr addrspace(1) %p\n\
         }}\n\
         \n\
         define internal spir_func ptr addrspace(1) @__vkcl_flat_privates() {{\n\
         entry:\n\
         \x20 %b = load i64, ptr {BASE}, align 8\n\
         \x20 %nx64 = call spir_func i64 @_Z14get_num_groupsj(i32 0)\n\
         \x20 %ny64 = call spir_func i64 @_Z14get_num_groupsj(i32 1)\n\
         \x20 %nz64 = call spir_func i64 @_Z14get_num_groupsj(i32 2)\n\
         \x20 %ex64 = call spir_func i64 @_Z23get_enqueued_local_sizej(i32 0)\n\
         \x20 %ey64 = call spir_func i64 @_Z23get_enqueued_local_sizej(i32 1)\n\
         \x20 %ez64 = call spir_func i64 @_Z23get_enqueued_local_sizej(i32 2)\n\
         \x20 %lx64 = call spir_func i64 @_Z12get_local_idj(i32 0)\n\
         \x20 %ly64 = call spir_func i64 @_Z12get_local_idj(i32 1)\n\
         \x20 %lz64 = call spir_func i64 @_Z12get_local_idj(i32 2)\n\
         \x20 %nx = trunc i64 %nx64 to i32\n\
         \x20 %ny = trunc i64 %ny64 to i32\n\
         \x20 %nz = trunc i64 %nz64 to i32\n\
         \x20 %ex = trunc i64 %ex64 to i32\n\
         \x20 %ey = trunc i64 %ey64 to i32\n\
         \x20 %ez = trunc i64 %ez64 to i32\n\
         \x20 %lx = trunc i64 %lx64 to i32\n\
         \x20 %ly = trunc i64 %ly64 to i32\n\
         \x20 %lz = trunc i64 %lz64 to i32\n\
         \x20 %nxy = mul i32 %nx, %ny\n\
         \x20 %n = mul i32 %nxy, %nz\n\
         \x20 %lzy = mul i32 %lz, %ey\n\
         \x20 %lzy1 = add i32 %lzy, %ly\n\
         \x20 %lzyx = mul i32 %lzy1, %ex\n\
         \x20 %l = add i32 %lzyx, %lx\n\
         \x20 %exy = mul i32 %ex, %ey\n\
         \x20 %size = mul i32 %exy, %ez\n\
         \x20 %g = call spir_func i32 @__vkcl_flat_group()\n\
         \x20 %gs = mul i32 %g, %size\n\
         \x20 %w = add i32 %gs, %l\n\
         \x20 %n64 = zext i32 %n to i64\n\
         \x20 %w64 = zext i32 %w to i64\n\
         \x20 %s = load i64, ptr {STRIDE}, align 8\n\
         \x20 %o = mul i64 %n64, %s\n\
         \x20 %wo = mul i64 %w64, {private}\n\
         \x20 %a = add i64 %b, %o\n\
         \x20 %aw = add i64 %a, %wo\n\
         \x20 %p = inttoptr i64 %aw to ptr addrspace(1)\n\
         \x20 ret ptr addrspace(1) %p\n\
         }}\n\
         \n\
         ; Whether %p is in [%start, %start + %size).\n\
         define internal spir_func i1 @__vkcl_flat_within(ptr addrspace(1) %p, ptr addrspace(1) %start, i64 %size) {{\n\
         entry:\n\
         \x20 %a = ptrtoint ptr addrspace(1) %p to i64\n\
         \x20 %s = ptrtoint ptr addrspace(1) %start to i64\n\
         \x20 %d = sub i64 %a, %s\n\
         \x20 %in = icmp ult i64 %d, %size\n\
         \x20 ret i1 %in\n\
         }}\n\
         \n\
         define internal spir_func i1 @__vkcl_flat_is_local(ptr addrspace(1) %p) {{\n\
         entry:\n\
         \x20 %s = call spir_func ptr addrspace(1) @__vkcl_flat_locals()\n\
         \x20 %n = load i64, ptr {STRIDE}, align 8\n\
         \x20 %in = call spir_func i1 @__vkcl_flat_within(ptr addrspace(1) %p, ptr addrspace(1) %s, i64 %n)\n\
         \x20 ret i1 %in\n\
         }}\n\
         \n\
         define internal spir_func i1 @__vkcl_flat_is_private(ptr addrspace(1) %p) {{\n\
         entry:\n\
         \x20 %s = call spir_func ptr addrspace(1) @__vkcl_flat_privates()\n\
         \x20 %in = call spir_func i1 @__vkcl_flat_within(ptr addrspace(1) %p, ptr addrspace(1) %s, i64 {private})\n\
         \x20 ret i1 %in\n\
         }}\n\
         \n\
         ; %p where %in, else NULL, through volatile 64-bit addresses (see through_slots).\n\
         define internal spir_func ptr addrspace(1) @__vkcl_flat_keep(ptr addrspace(1) %p, i1 %in) {{\n\
         entry:\n\
         \x20 %slot = alloca i64, align 8\n\
         \x20 %a = ptrtoint ptr addrspace(1) %p to i64\n\
         \x20 store volatile i64 %a, ptr %slot, align 8\n\
         \x20 %v = load volatile i64, ptr %slot, align 8\n\
         \x20 %m = select i1 %in, i64 %v, i64 0\n\
         \x20 store volatile i64 %m, ptr %slot, align 8\n\
         \x20 %r = load volatile i64, ptr %slot, align 8\n\
         \x20 %q = inttoptr i64 %r to ptr addrspace(1)\n\
         \x20 ret ptr addrspace(1) %q\n\
         }}\n\
         \n\
         define internal spir_func ptr addrspace(1) @__vkcl_flat_to_local(ptr addrspace(1) %p) {{\n\
         entry:\n\
         \x20 %in = call spir_func i1 @__vkcl_flat_is_local(ptr addrspace(1) %p)\n\
         \x20 %r = call spir_func ptr addrspace(1) @__vkcl_flat_keep(ptr addrspace(1) %p, i1 %in)\n\
         \x20 ret ptr addrspace(1) %r\n\
         }}\n\
         \n\
         define internal spir_func ptr addrspace(1) @__vkcl_flat_to_private(ptr addrspace(1) %p) {{\n\
         entry:\n\
         \x20 %in = call spir_func i1 @__vkcl_flat_is_private(ptr addrspace(1) %p)\n\
         \x20 %r = call spir_func ptr addrspace(1) @__vkcl_flat_keep(ptr addrspace(1) %p, i1 %in)\n\
         \x20 ret ptr addrspace(1) %r\n\
         }}\n\
         \n\
         define internal spir_func ptr addrspace(1) @__vkcl_flat_to_global(ptr addrspace(1) %p) {{\n\
         entry:\n\
         \x20 %l = call spir_func i1 @__vkcl_flat_is_local(ptr addrspace(1) %p)\n\
         \x20 %q = call spir_func i1 @__vkcl_flat_is_private(ptr addrspace(1) %p)\n\
         \x20 %no = or i1 %l, %q\n\
         \x20 %in = xor i1 %no, true\n\
         \x20 %r = call spir_func ptr addrspace(1) @__vkcl_flat_keep(ptr addrspace(1) %p, i1 %in)\n\
         \x20 ret ptr addrspace(1) %r\n\
         }}\n\
         \n\
         ; CLK_LOCAL_MEM_FENCE for local memory, else CLK_GLOBAL_MEM_FENCE.\n\
         define internal spir_func i32 @__vkcl_flat_get_fence(ptr addrspace(1) %p) {{\n\
         entry:\n\
         \x20 %l = call spir_func i1 @__vkcl_flat_is_local(ptr addrspace(1) %p)\n\
         \x20 %r = select i1 %l, i32 1, i32 2\n\
         \x20 ret i32 %r\n\
         }}\n"
    );
    for (name, decl) in [
        (
            "@_Z12get_group_idj(",
            "declare spir_func i64 @_Z12get_group_idj(i32)",
        ),
        (
            "@_Z14get_num_groupsj(",
            "declare spir_func i64 @_Z14get_num_groupsj(i32)",
        ),
        (
            "@_Z12get_local_idj(",
            "declare spir_func i64 @_Z12get_local_idj(i32)",
        ),
        (
            "@_Z23get_enqueued_local_sizej(",
            "declare spir_func i64 @_Z23get_enqueued_local_sizej(i32)",
        ),
    ] {
        let declared = text
            .lines()
            .any(|l| l.starts_with("declare ") && l.contains(name));
        if !declared {
            s.push('\n');
            s.push_str(decl);
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_memsets_are_stores() {
        let call = |a: &str| format!("  call void @llvm.memset.p1.i64({a}, i1 false)");
        assert_eq!(
            small_memset(&call("ptr addrspace(1) align 4 %25, i8 0, i64 4")).as_deref(),
            Some("  store i32 0, ptr addrspace(1) %25, align 4")
        );
        assert_eq!(
            small_memset(&call("ptr addrspace(1) %p, i8 -1, i64 2")).as_deref(),
            Some("  store i16 -1, ptr addrspace(1) %p, align 1")
        );
        assert_eq!(
            small_memset(&call("ptr addrspace(1) align 8 %p, i8 1, i64 8")).as_deref(),
            Some("  store i64 72340172838076673, ptr addrspace(1) %p, align 8")
        );
        assert_eq!(
            small_memset(&call("ptr addrspace(1) %p, i8 0, i64 12")),
            None
        );
        assert_eq!(
            small_memset(&call("ptr addrspace(1) %p, i8 %v, i64 4")),
            None
        );
    }

    #[test]
    fn pointers_are_laid_out_as_words() {
        let ll = "%struct.ref_t = type { i32, ptr addrspace(4) }\n%struct.ptrs = type { ptr, [2 x ptr addrspace(3)] }\n";
        assert_eq!(
            pointers_as_words("{ i32, ptr addrspace(4) }, %ptr, ptr"),
            "{ i32, i64 }, %ptr, i64"
        );
        let types = pointer_types(ll);
        assert_eq!(layout(&types, "%struct.ref_t, align 8", ""), Some((16, 8)));
        assert_eq!(layout(&types, "%struct.ptrs", ""), Some((24, 8)));
    }

    /// clang's -O0 IR of a kernel choosing between a global and a local variable (trimmed).
    const CHOICE: &str = "@k.l = internal addrspace(3) global [4 x i32] undef, align 4\n\
        define dso_local spir_kernel void @k(ptr addrspace(1) align 4 %g) #0 !kernel_arg_addr_space !4 !kernel_arg_type !5 {\n\
        entry:\n\
        \x20 %q = alloca ptr addrspace(4), align 8\n\
        \x20 %p = alloca i32, align 4\n\
        \x20 store i32 7, ptr %p, align 4\n\
        \x20 store i32 1, ptr addrspace(3) getelementptr inbounds ([4 x i32], ptr addrspace(3) @k.l, i64 0, i64 1), align 4\n\
        \x20 call spir_func void @_Z7barrierj(i32 1)\n\
        \x20 %c = icmp eq i32 0, 0\n\
        \x20 br i1 %c, label %a, label %b\n\
        a:\n\
        \x20 %g.ascast = addrspacecast ptr addrspace(1) %g to ptr addrspace(4)\n\
        \x20 br label %end\n\
        b:\n\
        \x20 %p.ascast = addrspacecast ptr %p to ptr addrspace(4)\n\
        \x20 br label %end\n\
        end:\n\
        \x20 %s = phi ptr addrspace(4) [ %g.ascast, %a ], [ %p.ascast, %b ]\n\
        \x20 %t = select i1 %c, ptr addrspace(4) %s, ptr addrspace(4) addrspacecast (ptr addrspace(3) @k.l to ptr addrspace(4))\n\
        \x20 store ptr addrspace(4) %t, ptr %q, align 8\n\
        \x20 %r = load ptr addrspace(4), ptr %q, align 8\n\
        \x20 %v = load i32, ptr addrspace(4) %r, align 4\n\
        \x20 ret void\n\
        }\n\
        declare spir_func void @_Z7barrierj(i32)\n\
        !4 = !{i32 1}\n\
        !5 = !{!\"int*\"}\n";

    #[test]
    fn scratch_parameter_names_carry_the_sizes() {
        assert_eq!(sizes("__vkcl_flat_scratch_L128_P256"), Some((128, 256)));
        assert_eq!(sizes("__vkcl_flat_scratch_L0_P0"), Some((0, 0)));
        assert_eq!(sizes("results"), None);
    }

    #[test]
    fn locals_and_escaping_privates_move_to_the_scratch_buffer() {
        let flat = rewrite(CHOICE).expect("rewritten");
        let has = |s: &str| assert!(flat.contains(s), "no {s:?} in\n{flat}");
        // The kernel's hidden parameter, its argument metadata, and the base it stores.
        has("@k(ptr addrspace(1) align 4 %g, i64 %__vkcl_flat_scratch_L128_P128)");
        has("!kernel_arg_addr_space !6 !kernel_arg_type !7");
        has("!6 = !{i32 1, i32 0}");
        has("!7 = !{!\"int*\", !\"ulong\"}");
        has("store i64 %__vkcl_flat_scratch_L128_P128, ptr @__vkcl_flat_base");
        // The local and the private variable, in the scratch buffer.
        has("%__vkcl.local.0 = getelementptr inbounds i8, ptr addrspace(1) %__vkcl.locals, i64 0");
        has("%p = getelementptr inbounds i8, ptr addrspace(1) %__vkcl.privates, i64 0");
        has("store i32 7, ptr addrspace(1) %p, align 4");
        has("= getelementptr inbounds [4 x i32], ptr addrspace(1) %__vkcl.local.0, i64 0, i64 1");
        // Fences widened; no address space 3 or 4 left.
        has("@_Z7barrierj(i32 3)");
        assert!(
            !flat.contains("addrspace(3)") && !flat.contains("addrspace(4)"),
            "{flat}"
        );
        assert!(!flat.contains("@k.l"), "{flat}");
        // The generic variable, phi and select as volatile addresses.
        has("%q = alloca i64, align 8");
        has("%s = inttoptr i64");
        has("%t = inttoptr i64");
        assert!(
            !flat.contains("= phi ptr") && !flat.contains("select i1 %c, ptr"),
            "{flat}"
        );
    }

    #[test]
    fn local_pointer_parameters_move_to_the_scratch_buffer() {
        let local_arg = CHOICE.replace(
            "@k(ptr addrspace(1) align 4 %g)",
            "@k(ptr addrspace(1) align 4 %g, ptr addrspace(3) noundef align 4 %l)",
        );
        let flat = rewrite(&local_arg).expect("rewritten");
        let has = |s: &str| assert!(flat.contains(s), "no {s:?} in\n{flat}");
        // The parameter stays (unused) for the application; hidden ones follow the scratch's.
        has(
            "@k(ptr addrspace(1) align 4 %g, ptr addrspace(3) noundef align 4 %__vkcl.unused.1, \
             i64 %__vkcl_flat_scratch_L128_P128, i64 %__vkcl_flat_group_bytes, \
             i64 %__vkcl_flat_local_1)",
        );
        has("!7 = !{!\"int*\", !\"ulong\", !\"ulong\", !\"ulong\"}");
        has("store i64 %__vkcl_flat_group_bytes, ptr @__vkcl_flat_stride");
        has("%__vkcl.larg.1.at = add i64 %__vkcl.larg.1, %__vkcl_flat_local_1");
        has("%l = inttoptr i64 %__vkcl.larg.1.at to ptr addrspace(1)");
        // Other kernels' stride is the program's `__local` bytes.
        let plain = rewrite(CHOICE).expect("rewritten");
        assert!(
            plain.contains("store i64 128, ptr @__vkcl_flat_stride"),
            "{plain}"
        );
    }

    #[test]
    fn addresses_kept_in_memory_need_the_flat_build() {
        let f = |body: &str| takes_addresses(&format!("define void @f() {{\n{body}\n}}\n"));
        assert!(f(
            "  %a = ptrtoint ptr %p to i64\n  store i64 %a, ptr addrspace(1) @u, align 8"
        ));
        assert!(f(
            "  store ptr addrspace(3) @l, ptr addrspace(3) @u, align 8"
        ));
        assert!(f(
            "  store i64 ptrtoint (ptr addrspace(3) @l to i64), ptr addrspace(1) @u"
        ));
        // Kept in a private variable, or a difference of pointers: clspv resolves those.
        assert!(!f("  store ptr %p, ptr %p.addr, align 8"));
        assert!(!f(
            "  %a = ptrtoint ptr addrspace(3) %x to i32\n  %d = sub i32 %a, 4"
        ));
        assert!(!f(
            "  store ptr addrspace(1) %g, ptr addrspace(1) @u, align 8"
        ));
    }

    #[test]
    fn refusals_say_why() {
        let passed = CHOICE.replace(
            "  store i32 7, ptr %p, align 4\n",
            "  store i32 7, ptr %p, align 4\n  call spir_func void @f(ptr %p)\n",
        );
        assert!(rewrite(&passed)
            .unwrap_err()
            .contains("call spir_func void @f(ptr %p)"));
        // A private pointer parameter stored in global memory, whence loads are global.
        let param = CHOICE
            .replace(
                "@k(ptr addrspace(1) align 4 %g)",
                "@k(ptr addrspace(1) align 4 %g, ptr %pp)",
            )
            .replace(
                "  store i32 7, ptr %p, align 4\n",
                "  store i32 7, ptr %p, align 4\n  store ptr %pp, ptr addrspace(1) %g, align 8\n",
            );
        assert!(rewrite(&param).unwrap_err().contains("unknown origin"));
    }

    #[test]
    fn fence_flags_gain_global_memory() {
        let mut n = 0;
        let (pre, line) = widen_fence("  call spir_func void @_Z9mem_fencej(i32 %f)", &mut n);
        assert_eq!(pre.len(), 3);
        assert_eq!(
            line,
            "  call spir_func void @_Z9mem_fencej(i32 %__vkcl.fence.0)"
        );
        let (_, line) = widen_fence("  call spir_func void @_Z7barrierj(i32 2)", &mut n);
        assert_eq!(line, "  call spir_func void @_Z7barrierj(i32 2)");
    }
}
