//! Reading and adjusting the SPIR-V modules clspv writes.
//!
//! - [`instructions`]: a module's instructions, as word slices;
//! - [`mark_read_only_buffers`]: `NonWritable` on the storage buffers a kernel only reads;
//! - [`entry_point_only`]: the module of one kernel, without the others' code.
//!
//! clspv leaves kernel arguments such as `global const float *a` undecorated, and it gives
//! arguments of different kernels at the same binding one variable, so a buffer one kernel writes
//! is writable in every kernel of the program. Drivers read a `NonWritable` buffer through their
//! read-only caches (NVIDIA's naive SGEMM: docs/BENCHMARKS.md), so each kernel gets its own
//! decorated variable for the buffers it only reads while another kernel writes them.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

const OP_NAME: u32 = 5;
const OP_EXT_INST_IMPORT: u32 = 11;
const OP_EXT_INST: u32 = 12;
const OP_ENTRY_POINT: u32 = 15;
const OP_EXECUTION_MODE: u32 = 16;
const OP_EXECUTION_MODE_ID: u32 = 331;
const OP_MEMBER_DECORATE: u32 = 72;
const OP_DECORATE_ID: u32 = 332;
const OP_DECORATE_STRING: u32 = 5632;
const OP_LABEL: u32 = 248;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_FUNCTION_CALL: u32 = 57;
const OP_VARIABLE: u32 = 59;
const OP_LOAD: u32 = 61;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_IN_BOUNDS_ACCESS_CHAIN: u32 = 66;
const OP_PTR_ACCESS_CHAIN: u32 = 67;
const OP_IN_BOUNDS_PTR_ACCESS_CHAIN: u32 = 70;
const OP_ARRAY_LENGTH: u32 = 68;
const OP_DECORATE: u32 = 71;
/// Decoration groups (never in clspv's output): modules with them are left whole.
const OP_GROUP_DECORATIONS: [u32; 4] = [73, 74, 75, 5633];
const OP_COPY_OBJECT: u32 = 83;
const STORAGE_CLASS_STORAGE_BUFFER: u32 = 12;
const DECORATION_NON_WRITABLE: u32 = 24;
const DECORATION_ALIASED: u32 = 20;

/// The module's instructions after its 5-word header: (word offset, words). Stops at a
/// malformed instruction (zero length or running past the end).
pub fn instructions(spirv: &[u32]) -> impl Iterator<Item = (usize, &[u32])> {
    let mut at = 5;
    std::iter::from_fn(move || {
        let count = (*spirv.get(at)? >> 16) as usize;
        let inst = spirv.get(at..at + count).filter(|_| count > 0)?;
        let item = (at, inst);
        at += count;
        Some(item)
    })
}

/// The module loaded with rspirv, and the word where clspv's reflection instructions after
/// the functions start: rspirv's loader refuses instructions outside functions after them, so
/// they are set aside, to be put back after the assembled module (`spirv[end..]`).
pub fn load_functions(spirv: &[u32]) -> Option<(rspirv::dr::Module, usize)> {
    let end = instructions(spirv)
        .filter(|(_, i)| i[0] & 0xffff == OP_FUNCTION_END)
        .map(|(at, i)| at + i.len())
        .last()
        .unwrap_or(spirv.len());
    Some((rspirv::dr::load_words(&spirv[..end]).ok()?, end))
}

/// An entry point's name (the literal string of an OpEntryPoint) and the word index where its
/// interface list starts.
pub fn entry_point_name(inst: &[u32]) -> Option<(String, usize)> {
    let bytes: Vec<u8> = inst
        .get(3..)?
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let len = bytes.iter().position(|&b| b == 0)?;
    let name = String::from_utf8(bytes[..len].to_vec()).ok()?;
    Some((name, 3 + len / 4 + 1))
}

/// How one function uses one storage buffer variable.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Use {
    Reads,
    /// Stores, atomics, or anything the analysis does not follow (calls, pointer selects).
    Other,
}

/// Where a variable is named in a function, in positions a clone may be substituted into: the
/// word offsets of the base operand of an access chain or copy, or the pointer of a load.
type Sites = Vec<usize>;

struct Function {
    calls: Vec<u32>,
    uses: HashMap<u32, (Use, Sites)>,
}

/// `spirv` with `NonWritable` on each storage buffer variable that no kernel writes, and, for a
/// variable some kernels write and others only read, a `NonWritable` copy of it (same set,
/// binding and type) for each kernel that only reads it. The module is returned unchanged where
/// anything is not understood.
pub fn mark_read_only_buffers(spirv: &[u32]) -> Vec<u32> {
    analyse(spirv)
        .and_then(|a| a.rewrite(spirv))
        .unwrap_or_else(|| spirv.to_vec())
}

struct Analysis {
    buffers: Vec<u32>,
    /// Entry point id → (OpEntryPoint offset, the functions it reaches).
    entries: Vec<(u32, usize, HashSet<u32>)>,
    functions: HashMap<u32, Function>,
    decorations: HashMap<u32, Vec<usize>>,
    variable_at: HashMap<u32, usize>,
}

fn analyse(spirv: &[u32]) -> Option<Analysis> {
    let mut buffers = vec![];
    let mut variable_at = HashMap::new();
    let mut decorations: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut non_writable = HashSet::new();
    let mut entry_points = vec![];
    let mut functions = HashMap::new();
    let mut body: Option<(u32, Vec<(usize, &[u32])>)> = None;
    for (at, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        if let Some((_, insts)) = body.as_mut() {
            if op == OP_FUNCTION_END {
                let (id, insts) = body.take()?;
                functions.insert(id, function_uses(&insts, &buffers));
            } else {
                insts.push((at, inst));
            }
            continue;
        }
        match op {
            OP_ENTRY_POINT => entry_points.push((*inst.get(2)?, at)),
            OP_DECORATE => {
                decorations.entry(*inst.get(1)?).or_default().push(at);
                // Aliased variables (member_index's views of a binding) stay writable: a
                // read-only cache would miss writes through the other view.
                if inst
                    .get(2)
                    .is_some_and(|d| [DECORATION_NON_WRITABLE, DECORATION_ALIASED].contains(d))
                {
                    non_writable.insert(inst[1]);
                }
            }
            OP_VARIABLE if inst.get(3) == Some(&STORAGE_CLASS_STORAGE_BUFFER) => {
                buffers.push(inst[2]);
                variable_at.insert(inst[2], at);
            }
            OP_FUNCTION => body = Some((*inst.get(2)?, vec![])),
            _ => {}
        }
    }
    if body.is_some() {
        return None;
    }
    buffers.retain(|b| !non_writable.contains(b));
    let entries = entry_points
        .into_iter()
        .map(|(id, at)| (id, at, reachable(id, callees(&functions))))
        .collect();
    Some(Analysis {
        buffers,
        entries,
        functions,
        decorations,
        variable_at,
    })
}

/// The functions `root` calls, directly or not, itself included; `calls` gives the functions
/// one calls.
pub(super) fn reachable<'a>(root: u32, calls: impl Fn(u32) -> &'a [u32]) -> HashSet<u32> {
    let (mut todo, mut seen) = (vec![root], HashSet::new());
    while let Some(f) = todo.pop() {
        if seen.insert(f) {
            todo.extend(calls(f));
        }
    }
    seen
}

/// `calls` of [`reachable`] for an analysis' functions.
fn callees<'a>(functions: &'a HashMap<u32, Function>) -> impl Fn(u32) -> &'a [u32] {
    |f| functions.get(&f).map_or(&[][..], |f| &f.calls)
}

/// How a function's instructions use each buffer variable: pointers derived from a variable by
/// access chains and copies are followed; a pointer loaded from is read; any other mention of a
/// variable or derived pointer (a store, an atomic, a call argument, a phi; also a literal operand
/// that happens to equal its id) counts as `Other`.
fn function_uses(insts: &[(usize, &[u32])], buffers: &[u32]) -> Function {
    let mut calls = vec![];
    let mut uses: HashMap<u32, (Use, Sites)> = HashMap::new();
    let mut derived: HashMap<u32, u32> = buffers.iter().map(|&b| (b, b)).collect();
    // Phis may name pointers defined further down: iterate until nothing new is derived.
    loop {
        let before = derived.len();
        uses.clear();
        calls.clear();
        for &(at, inst) in insts {
            let op = inst[0] & 0xffff;
            if op == OP_FUNCTION_CALL {
                calls.extend(inst.get(3));
            }
            let base = inst.get(3).and_then(|p| derived.get(p).copied());
            let follows = matches!(
                op,
                OP_ACCESS_CHAIN
                    | OP_IN_BOUNDS_ACCESS_CHAIN
                    | OP_PTR_ACCESS_CHAIN
                    | OP_IN_BOUNDS_PTR_ACCESS_CHAIN
                    | OP_COPY_OBJECT
            );
            match (base, op) {
                (Some(var), OP_LOAD | OP_ARRAY_LENGTH) => {
                    note(&mut uses, var, Use::Reads, at + 3, inst[3] == var)
                }
                (Some(var), _) if follows => {
                    derived.insert(inst[2], var);
                    note(&mut uses, var, Use::Reads, at + 3, inst[3] == var);
                    let others = inst[4..].iter().filter_map(|w| derived.get(w));
                    for &other in others.collect::<Vec<_>>() {
                        note(&mut uses, other, Use::Other, 0, false);
                    }
                }
                _ => {
                    for &other in inst[1..].iter().filter_map(|w| derived.get(w)) {
                        note(&mut uses, other, Use::Other, 0, false);
                    }
                }
            }
        }
        if derived.len() == before {
            return Function { calls, uses };
        }
    }
}

fn note(uses: &mut HashMap<u32, (Use, Sites)>, var: u32, how: Use, at: usize, site: bool) {
    let entry = uses.entry(var).or_insert((Use::Reads, vec![]));
    entry.0 = entry.0.max(how);
    if site {
        entry.1.push(at);
    }
}

impl Analysis {
    /// How entry point `entry` (by index) uses `var`: None where it does not.
    fn entry_use(&self, entry: usize, var: u32) -> Option<Use> {
        let fns = &self.entries[entry].2;
        fns.iter()
            .filter_map(|f| self.functions.get(f)?.uses.get(&var).map(|u| u.0))
            .max()
    }

    fn rewrite(&self, spirv: &[u32]) -> Option<Vec<u32>> {
        let mut out = spirv.to_vec();
        let mut bound = spirv[3];
        // Instructions to insert, by the offset they go after.
        let mut after: HashMap<usize, Vec<u32>> = HashMap::new();
        // Interface lists to extend: OpEntryPoint offset → ids.
        let mut interfaces: HashMap<usize, Vec<u32>> = HashMap::new();
        for &var in &self.buffers {
            let users: Vec<(usize, Use)> = (0..self.entries.len())
                .filter_map(|e| Some((e, self.entry_use(e, var)?)))
                .collect();
            let decorations = self.decorations.get(&var).map_or(&[][..], |d| d);
            // (Vulkan buffers always have a set and binding; one without is left alone.)
            let Some(&last_decoration) = decorations.iter().max() else {
                continue;
            };
            if users.iter().all(|&(_, u)| u == Use::Reads) {
                if !users.is_empty() {
                    let d = after.entry(last_decoration).or_default();
                    d.extend([(3 << 16) | OP_DECORATE, var, DECORATION_NON_WRITABLE]);
                }
                continue;
            }
            for &(e, how) in &users {
                let fns = &self.entries[e].2;
                let shared = |f: &u32| {
                    self.entries
                        .iter()
                        .enumerate()
                        .any(|(o, other)| o != e && other.2.contains(f))
                };
                if how != Use::Reads || fns.iter().any(|f| self.uses(*f, var) && shared(f)) {
                    continue;
                }
                let copy = bound;
                bound += 1;
                let var_at = self.variable_at[&var];
                let mut variable = spirv[var_at..var_at + (spirv[var_at] >> 16) as usize].to_vec();
                variable[2] = copy;
                after.entry(var_at).or_default().extend(variable);
                let d = after.entry(last_decoration).or_default();
                for &at in decorations {
                    let mut decoration = spirv[at..at + (spirv[at] >> 16) as usize].to_vec();
                    decoration[1] = copy;
                    d.extend(decoration);
                }
                d.extend([(3 << 16) | OP_DECORATE, copy, DECORATION_NON_WRITABLE]);
                for f in fns {
                    for &site in self.functions[f].uses.get(&var).map_or(&[][..], |u| &u.1) {
                        out[site] = copy;
                    }
                }
                interfaces.entry(self.entries[e].1).or_default().push(copy);
            }
        }
        if after.is_empty() {
            return None;
        }
        out[3] = bound;
        let mut result = out[..5].to_vec();
        for (at, inst) in instructions(&out) {
            let mut inst = inst.to_vec();
            if let Some(extra) = interfaces.get(&at) {
                inst.extend(extra);
                inst[0] = ((inst.len() as u32) << 16) | OP_ENTRY_POINT;
            }
            result.extend(inst);
            result.extend(after.get(&at).map_or(&[][..], |a| a));
        }
        Some(result)
    }

    fn uses(&self, f: u32, var: u32) -> bool {
        self.functions
            .get(&f)
            .is_some_and(|f| f.uses.contains_key(&var))
    }
}

/// The module with only entry point `entry` and the functions it reaches: the other entry
/// points, their execution modes and code, and the names, decorations and (NonSemantic)
/// reflection instructions of what goes with them are left out, so that a driver does not
/// parse and compile code the pipeline does not run. (The interface list stays whole: clspv
/// lists every module-scope variable in every entry point, and with only its own `__local`
/// arrays listed, lavapipe ran the bench's reduction 15 % slower.) None where there is nothing
/// to leave out or the module holds something this does not understand.
pub fn entry_point_only(spirv: &[u32], entry: &str) -> Option<Vec<u32>> {
    // Functions (id → the offsets of their instructions), calls, and the ids defined at
    // module scope.
    let mut functions: HashMap<u32, Function> = HashMap::new();
    let mut bodies: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut current: Option<u32> = None;
    let mut global: HashSet<u32> = HashSet::new();
    let mut types: HashSet<u32> = HashSet::new();
    let mut non_semantic: HashSet<u32> = HashSet::new();
    let mut chosen = None;
    for (at, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        if let Some(f) = current {
            bodies.entry(f).or_default().push(at);
            if op == OP_FUNCTION_CALL {
                functions
                    .entry(f)
                    .or_insert_with(Function::empty)
                    .calls
                    .extend(inst.get(3));
            }
            if op == OP_FUNCTION_END {
                current = None;
            }
            continue;
        }
        match op {
            OP_FUNCTION => {
                let f = *inst.get(2)?;
                functions.entry(f).or_insert_with(Function::empty);
                bodies.entry(f).or_default().push(at);
                current = Some(f);
            }
            OP_ENTRY_POINT if entry_point_name(inst)?.0 == entry => chosen = Some(inst[2]),
            OP_EXT_INST_IMPORT => {
                global.insert(*inst.get(1)?);
                let name: Vec<u8> = inst[2..].iter().flat_map(|w| w.to_le_bytes()).collect();
                if name.starts_with(b"NonSemantic.") {
                    non_semantic.insert(inst[1]);
                }
            }
            // Types (OpTypeVoid ... OpTypePipe, OpTypePipeStorage, OpTypeNamedBarrier).
            19..=38 | 322 | 327 => {
                global.insert(*inst.get(1)?);
                types.insert(inst[1]);
            }
            // Constants, spec constants, variables, undef, module-scope OpExtInst.
            1 | 12 | 41..=46 | 48..=52 | OP_VARIABLE => {
                global.insert(*inst.get(2)?);
            }
            7 => {
                global.insert(*inst.get(1)?);
            }
            op if OP_GROUP_DECORATIONS.contains(&op) => return None,
            _ => {}
        }
    }
    let chosen = chosen?;
    let kept = reachable(chosen, callees(&functions));
    if kept.len() == functions.len() {
        return None;
    }
    // Ids defined in the kept functions: labels, and results of instructions with a result
    // type.
    let mut defined = global.clone();
    for f in &kept {
        for &at in bodies.get(f)? {
            let inst = &spirv[at..at + (spirv[at] >> 16) as usize];
            match inst[0] & 0xffff {
                OP_LABEL => {
                    defined.insert(*inst.get(1)?);
                }
                _ if inst.len() > 2 && types.contains(&inst[1]) => {
                    defined.insert(inst[2]);
                }
                _ => {}
            }
        }
    }
    let mut out = spirv[..5].to_vec();
    let mut in_function: Option<bool> = None;
    for (_, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        if op == OP_FUNCTION {
            in_function = Some(kept.contains(inst.get(2)?));
        }
        if let Some(keep) = in_function {
            if keep {
                out.extend(inst);
            }
            if op == OP_FUNCTION_END {
                in_function = None;
            }
            continue;
        }
        let keep = match op {
            OP_ENTRY_POINT => inst[2] == chosen,
            OP_EXECUTION_MODE | OP_EXECUTION_MODE_ID => inst.get(1) == Some(&chosen),
            OP_NAME | OP_DECORATE | OP_DECORATE_STRING => defined.contains(inst.get(1)?),
            OP_DECORATE_ID => inst[1..].iter().all(|id| defined.contains(id)),
            OP_MEMBER_DECORATE => true,
            OP_EXT_INST => {
                // Module-scope extended instructions: NonSemantic ones (clspv's reflection)
                // go with what they name; others stay only if they name nothing left out.
                let names_all = inst.get(5..)?.iter().all(|id| defined.contains(id));
                if !names_all && !non_semantic.contains(inst.get(3)?) {
                    return None;
                }
                if !names_all {
                    defined.remove(&inst[2]);
                }
                names_all
            }
            _ => true,
        };
        if keep {
            out.extend(inst);
        }
    }
    Some(out)
}

impl Function {
    fn empty() -> Function {
        Function {
            calls: vec![],
            uses: HashMap::new(),
        }
    }
}

/// New ids and 32-bit unsigned arithmetic for the rspirv passes: the module's constants and the
/// constants and types made here (`globals`, to go before their first use).
pub struct UintBuilder {
    pub next_id: Word,
    pub uint: Word,
    constants: HashMap<u32, Word>,
    /// The module's constants by id (theirs and those made here).
    values: HashMap<Word, u32>,
    /// The constants made here, to go into the module's globals.
    pub globals: Vec<Instruction>,
    /// The module's 64-bit integer types, and its 64-bit integer constants by id (physical-
    /// addressing modules index with them: [`UintBuilder::narrow`]).
    wide_types: HashSet<Word>,
    wide_values: HashMap<Word, u64>,
}

impl UintBuilder {
    /// The builder of module `m`, whose ids from `next_id` are free; `None` without a 32-bit
    /// unsigned integer type.
    pub fn of(m: &dr::Module, next_id: Word) -> Option<UintBuilder> {
        let uint = m
            .types_global_values
            .iter()
            .find(|i| {
                i.class.opcode == Op::TypeInt
                    && i.operands == [Operand::LiteralBit32(32), Operand::LiteralBit32(0)]
            })?
            .result_id?;
        let constants: HashMap<u32, Word> = m
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::Constant && i.result_type == Some(uint))
            .filter_map(|i| match i.operands.as_slice() {
                [Operand::LiteralBit32(v)] => Some((*v, i.result_id?)),
                _ => None,
            })
            .collect();
        let values = constants.iter().map(|(v, id)| (*id, *v)).collect();
        let wide_types: HashSet<Word> = m
            .types_global_values
            .iter()
            .filter(|i| {
                i.class.opcode == Op::TypeInt
                    && i.operands.first() == Some(&Operand::LiteralBit32(64))
            })
            .filter_map(|i| i.result_id)
            .collect();
        let wide_values = m
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::Constant)
            .filter(|i| i.result_type.is_some_and(|t| wide_types.contains(&t)))
            .filter_map(|i| match i.operands.as_slice() {
                [Operand::LiteralBit64(v)] => Some((i.result_id?, *v)),
                _ => None,
            })
            .collect();
        Some(UintBuilder {
            next_id,
            uint,
            constants,
            values,
            globals: vec![],
            wide_types,
            wide_values,
        })
    }

    /// Whether `ty` is a 32-bit unsigned or a 64-bit integer type: the types of the indices
    /// [`UintBuilder::narrow`] takes.
    pub fn is_index_type(&self, ty: Option<Word>) -> bool {
        ty.is_some_and(|t| t == self.uint || self.wide_types.contains(&t))
    }

    /// Index `id` (of type `ty`) as a 32-bit unsigned index: itself where it is one, the low
    /// word of a 64-bit constant, else an `OpUConvert` of it appended to `out`. Physical-
    /// addressing modules index Workgroup arrays with 64-bit `size_t`s; the passes that
    /// rewrite such chains compute their indices in 32 bits, wrapping, and a Workgroup array
    /// has far fewer than 2^32 elements, so the low words give the same element (a negative
    /// step included).
    pub fn narrow(&mut self, id: Word, ty: Option<Word>, out: &mut Vec<Instruction>) -> Word {
        if let Some(&v) = self.wide_values.get(&id) {
            return self.constant(v as u32);
        }
        if !ty.is_some_and(|t| self.wide_types.contains(&t)) {
            return id;
        }
        let narrow = self.fresh();
        out.push(Instruction::new(
            Op::UConvert,
            Some(self.uint),
            Some(narrow),
            vec![Operand::IdRef(id)],
        ));
        narrow
    }

    pub fn fresh(&mut self) -> Word {
        self.next_id += 1;
        self.next_id - 1
    }

    /// A Workgroup pointer to an array of `len` `element`s (the array and pointer types made).
    pub fn workgroup_array(&mut self, element: Word, len: u32) -> Word {
        let total = self.constant(len);
        let (array, pointer) = (self.fresh(), self.fresh());
        let operands = vec![Operand::IdRef(element), Operand::IdRef(total)];
        self.globals
            .push(Instruction::new(Op::TypeArray, None, Some(array), operands));
        let operands = vec![
            Operand::StorageClass(StorageClass::Workgroup),
            Operand::IdRef(array),
        ];
        let pointer_type = Instruction::new(Op::TypePointer, None, Some(pointer), operands);
        self.globals.push(pointer_type);
        pointer
    }

    /// The id of constant `v`, made if the module has none.
    pub fn constant(&mut self, v: u32) -> Word {
        if let Some(&id) = self.constants.get(&v) {
            return id;
        }
        let id = self.fresh();
        let operands = vec![Operand::LiteralBit32(v)];
        self.globals.push(Instruction::new(
            Op::Constant,
            Some(self.uint),
            Some(id),
            operands,
        ));
        self.constants.insert(v, id);
        self.values.insert(id, v);
        id
    }

    /// `a op b` (32-bit unsigned) appended to `out`.
    pub fn op(&mut self, op: Op, a: Word, b: Word, out: &mut Vec<Instruction>) -> Word {
        let t = self.fresh();
        let operands = vec![Operand::IdRef(a), Operand::IdRef(b)];
        out.push(Instruction::new(op, Some(self.uint), Some(t), operands));
        t
    }

    /// `Σ indices[k] × strides[k]` before `out`'s end: the constant terms folded into one.
    pub fn linear(
        &mut self,
        indices: &[Word],
        strides: &[u32],
        out: &mut Vec<Instruction>,
    ) -> Word {
        let mut folded = 0u32;
        let mut sum: Option<Word> = None;
        for (&id, &s) in indices.iter().zip(strides) {
            if let Some(v) = self.values.get(&id) {
                folded = folded.wrapping_add(v.wrapping_mul(s));
                continue;
            }
            let term = match s {
                1 => id,
                _ => {
                    let s = self.constant(s);
                    self.op(Op::IMul, id, s, out)
                }
            };
            sum = Some(match sum {
                None => term,
                Some(acc) => self.op(Op::IAdd, acc, term, out),
            });
        }
        match (sum, folded) {
            (Some(sum), 0) => sum,
            (Some(sum), c) => {
                let c = self.constant(c);
                self.op(Op::IAdd, sum, c, out)
            }
            (None, c) => self.constant(c),
        }
    }
}

/// The opcodes whose instructions have a result type (their second word).
pub(super) fn typed_results() -> &'static HashSet<u32> {
    static SET: OnceLock<HashSet<u32>> = OnceLock::new();
    SET.get_or_init(|| {
        rspirv::grammar::INSTRUCTION_TABLE
            .iter()
            .filter(|g| {
                g.operands
                    .first()
                    .is_some_and(|o| o.kind == rspirv::grammar::OperandKind::IdResultType)
            })
            .map(|g| g.opcode as u32)
            .collect()
    })
}
