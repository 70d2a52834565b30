//! Four scalar stores into consecutive elements of a write-only storage buffer become one
//! store of a 4-vector (issue 16).
//!
//! clspv's `-long-vector` writes a vector of 8 or 16 components one component at a time: the
//! relationals shuffle tests' kernels (32 copies of an int16 in one work-item, behind
//! `if (get_global_id(0) != 0) return;`) are 512 scalar `OpStore`s in one block. lavapipe
//! compiles each store in divergent control flow as a loop over the SIMD lanes with a branch
//! per lane and per component, and LLVM then took seconds to a minute over such a kernel at
//! its first dispatch (docs/BENCHMARKS.md): its cost goes with the number of store
//! instructions, and vector stores divide it by four.
//!
//! A storage-buffer variable qualifies where its type is a Block struct of one runtime array
//! (offset 0) of an 8-, 16-, 32- or 64-bit scalar with its natural stride, and where every use
//! of it is an `OpAccessChain` with the constant indices 0 and K whose only uses are
//! `OpStore`s (plain, or `Aligned`), no K stored twice in one function: the kernel never reads
//! it, and no two stores of it overlap. Four stores of K = 4k..4k+3 with nothing between them
//! but such access chains and stores (in one block) become one store of their values as a
//! 4-vector at the place of the last, through a second variable at the same descriptor that
//! views the buffer as an array of 4-vectors (the same decorations; `aliased::declare_aliased`
//! decorates both where a launch binds the buffer twice). Other instructions keep their order
//! with respect to every store. Modules where nothing qualifies are returned unchanged.

use super::spirv::instructions;
use std::collections::{HashMap, HashSet};

const OP_ENTRY_POINT: u32 = 15;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_VARIABLE: u32 = 59;
const OP_STORE: u32 = 62;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const OP_COMPOSITE_CONSTRUCT: u32 = 80;
const STORAGE_BUFFER: u32 = 12;
const DECORATION_BLOCK: u32 = 2;
const DECORATION_ARRAY_STRIDE: u32 = 6;
const DECORATION_OFFSET: u32 = 35;
/// The memory-operand bit of `Aligned`.
const ALIGNED: u32 = 0x2;

/// One store through a qualifying variable: its word offset, element K and value id.
#[derive(Clone, Copy)]
struct Store {
    at: usize,
    k: u32,
    value: u32,
}

/// What the pass reads of the module's declarations.
#[derive(Default)]
struct Module {
    scalar_bits: HashMap<u32, u32>,
    /// (component type, count) → vector type.
    vectors: HashMap<(u32, u32), u32>,
    runtime_arrays: HashMap<u32, u32>,
    structs: HashMap<u32, Vec<u32>>,
    pointers: HashMap<u32, (u32, u32)>,
    /// 32-bit constants: id → value.
    constants: HashMap<u32, u32>,
    uint: Option<u32>,
    strides: HashMap<u32, u32>,
    blocks: HashSet<u32>,
    offsets: HashMap<(u32, u32), u32>,
    /// Storage-buffer variables → their pointer type.
    variables: HashMap<u32, u32>,
    /// The word after the last decoration.
    last_decoration: Option<usize>,
    first_function: Option<usize>,
}

/// A merged store: the variable, the index of the 4-vector and the four values.
type Merged = (u32, u32, [u32; 4]);

/// `spirv` with the stores merged; unchanged where nothing qualifies or the module is not
/// understood.
pub fn merge(spirv: &[u32]) -> Vec<u32> {
    merged(spirv).unwrap_or_else(|| spirv.to_vec())
}

fn merged(spirv: &[u32]) -> Option<Vec<u32>> {
    let mut m = Module::read(spirv)?;
    let mut candidates = m.candidates();
    let (chains, stores) = m.stores(spirv, &mut candidates);
    let (dropped, merged_at) = groups(spirv, &chains, &stores, &candidates);
    if merged_at.is_empty() {
        return None;
    }
    Some(m.assemble(spirv, &candidates, &dropped, &merged_at))
}

impl Module {
    fn read(spirv: &[u32]) -> Option<Module> {
        let mut m = Module::default();
        let mut end = 5;
        for (at, i) in instructions(spirv) {
            end = at + i.len();
            m.declaration(at, i);
        }
        let whole = end == spirv.len() && m.first_function.is_some();
        (whole && m.uint.is_some() && m.last_decoration.is_some()).then_some(m)
    }

    fn declaration(&mut self, at: usize, i: &[u32]) {
        let w = |n: usize| i.get(n).copied();
        match i[0] & 0xffff {
            OP_TYPE_INT if i.len() == 4 => {
                self.scalar_bits.insert(i[1], i[2]);
                if i[2] == 32 && i[3] == 0 {
                    self.uint = self.uint.or(Some(i[1]));
                }
            }
            OP_TYPE_FLOAT if i.len() >= 3 => _ = self.scalar_bits.insert(i[1], i[2]),
            OP_TYPE_VECTOR if i.len() == 4 => _ = self.vectors.entry((i[2], i[3])).or_insert(i[1]),
            OP_TYPE_RUNTIME_ARRAY if i.len() == 3 => _ = self.runtime_arrays.insert(i[1], i[2]),
            OP_TYPE_STRUCT => _ = self.structs.insert(i[1], i[2..].to_vec()),
            OP_TYPE_POINTER if i.len() == 4 => _ = self.pointers.insert(i[1], (i[2], i[3])),
            OP_CONSTANT if i.len() == 4 => _ = self.constants.insert(i[2], i[3]),
            op @ (OP_DECORATE | OP_MEMBER_DECORATE) => {
                self.last_decoration = Some(at + i.len());
                match (op, w(2), w(3), w(4)) {
                    (OP_DECORATE, Some(DECORATION_ARRAY_STRIDE), Some(s), _) => {
                        _ = self.strides.insert(i[1], s)
                    }
                    (OP_DECORATE, Some(DECORATION_BLOCK), ..) => _ = self.blocks.insert(i[1]),
                    (OP_MEMBER_DECORATE, Some(m), Some(DECORATION_OFFSET), Some(o)) => {
                        _ = self.offsets.insert((i[1], m), o)
                    }
                    _ => {}
                }
            }
            OP_VARIABLE if w(3) == Some(STORAGE_BUFFER) => _ = self.variables.insert(i[2], i[1]),
            OP_FUNCTION => self.first_function = self.first_function.or(Some(at)),
            _ => {}
        }
    }

    /// The storage-buffer variables of the right type: variable → its scalar element type.
    fn candidates(&self) -> HashMap<u32, u32> {
        let mut candidates = HashMap::new();
        for (&var, ptr) in &self.variables {
            let Some(&(STORAGE_BUFFER, block)) = self.pointers.get(ptr) else {
                continue;
            };
            let Some([array]) = self.structs.get(&block).map(|m| m.as_slice()) else {
                continue;
            };
            let Some(&scalar) = self.runtime_arrays.get(array) else {
                continue;
            };
            let Some(&bits) = self.scalar_bits.get(&scalar) else {
                continue;
            };
            if self.blocks.contains(&block)
                && self.offsets.get(&(block, 0)) == Some(&0)
                && matches!(bits, 8 | 16 | 32 | 64)
                && self.strides.get(array) == Some(&(bits / 8))
            {
                candidates.insert(var, scalar);
            }
        }
        candidates
    }

    /// The candidates' access chains (result → (variable, K)) and stores, removing from
    /// `candidates` every variable used otherwise.
    fn stores(
        &self,
        spirv: &[u32],
        candidates: &mut HashMap<u32, u32>,
    ) -> (HashMap<u32, (u32, u32)>, HashMap<u32, Vec<Store>>) {
        let mut chains: HashMap<u32, (u32, u32)> = HashMap::new();
        let mut stores: HashMap<u32, Vec<Store>> = HashMap::new();
        let mut seen: HashMap<u32, HashSet<u32>> = HashMap::new();
        let mut in_function = false;
        for (at, i) in instructions(spirv) {
            let op = i[0] & 0xffff;
            if op == OP_FUNCTION {
                (in_function, seen) = (true, HashMap::new());
            }
            if op == OP_FUNCTION_END {
                in_function = false;
            }
            // Declarations (decorations, names, the entry point's interface) are not uses.
            if !in_function || op == OP_FUNCTION {
                continue;
            }
            if op == OP_ACCESS_CHAIN && i.len() == 6 && candidates.contains_key(&i[3]) {
                match (self.constants.get(&i[4]), self.constants.get(&i[5])) {
                    (Some(0), Some(&k)) => _ = chains.insert(i[2], (i[3], k)),
                    _ => _ = candidates.remove(&i[3]),
                }
                continue;
            }
            if let Some(&(var, k)) = chains
                .get(i.get(1).unwrap_or(&0))
                .filter(|_| op == OP_STORE)
            {
                let plain = i.len() == 3 || (i.len() == 5 && i[3] == ALIGNED);
                if !plain || !seen.entry(var).or_default().insert(k) {
                    candidates.remove(&var);
                }
                let (k, value) = (k, *i.get(2).unwrap_or(&0));
                stores.entry(var).or_default().push(Store { at, k, value });
                continue;
            }
            // Any other mention of a candidate or of one of its chains disqualifies it (a
            // literal equal to such an id only makes this conservative).
            for word in &i[1..] {
                if candidates.remove(word).is_none() {
                    if let Some((var, _)) = chains.get(word) {
                        candidates.remove(var);
                    }
                }
            }
        }
        (chains, stores)
    }

    /// The module with the merged stores and the vector views they go through.
    fn assemble(
        &mut self,
        spirv: &[u32],
        candidates: &HashMap<u32, u32>,
        dropped: &HashSet<usize>,
        merged_at: &HashMap<usize, Merged>,
    ) -> Vec<u32> {
        let mut new = New {
            bound: spirv[3],
            globals: vec![],
            decorations: vec![],
            views: HashMap::new(),
        };
        let mut used: Vec<u32> = merged_at.values().map(|m| m.0).collect();
        used.sort_unstable();
        used.dedup();
        for var in used {
            self.view(spirv, &mut new, var, candidates[&var]);
        }
        let mut code: HashMap<usize, Vec<u32>> = HashMap::new();
        for (&at, &(var, k, values)) in merged_at {
            let (view, elem_ptr, zero) = new.views[&var];
            let vector = self.vectors[&(candidates[&var], 4)];
            let (index, value, ptr) = (new.id(), new.id(), new.id());
            let uint = self.uint.expect("read checks it");
            new.globals.extend(inst(OP_CONSTANT, &[uint, index, k]));
            let mut c = inst(
                OP_COMPOSITE_CONSTRUCT,
                &[&[vector, value], &values[..]].concat(),
            );
            c.extend(inst(OP_ACCESS_CHAIN, &[elem_ptr, ptr, view, zero, index]));
            c.extend(inst(OP_STORE, &[ptr, value]));
            code.insert(at, c);
        }
        let mut out = spirv[..5].to_vec();
        out[3] = new.bound;
        for (at, i) in instructions(spirv) {
            if Some(at) == self.last_decoration {
                out.extend(&new.decorations);
            }
            if Some(at) == self.first_function {
                out.extend(&new.globals);
            }
            if let Some(c) = code.get(&at) {
                out.extend(c);
            } else if !dropped.contains(&at) {
                new.entry_point(spirv, i, &mut out);
            }
        }
        out
    }

    /// Declares the vector view of `var` (element type `scalar`).
    fn view(&mut self, spirv: &[u32], new: &mut New, var: u32, scalar: u32) {
        let vector = match self.vectors.get(&(scalar, 4)) {
            Some(&v) => v,
            None => {
                let v = new.id();
                new.globals.extend(inst(OP_TYPE_VECTOR, &[v, scalar, 4]));
                self.vectors.insert((scalar, 4), v);
                v
            }
        };
        let (array, block, block_ptr) = (new.id(), new.id(), new.id());
        let (elem_ptr, view, zero) = (new.id(), new.id(), new.id());
        let uint = self.uint.expect("read checks it");
        new.globals
            .extend(inst(OP_TYPE_RUNTIME_ARRAY, &[array, vector]));
        new.globals.extend(inst(OP_TYPE_STRUCT, &[block, array]));
        new.globals
            .extend(inst(OP_TYPE_POINTER, &[block_ptr, STORAGE_BUFFER, block]));
        new.globals
            .extend(inst(OP_TYPE_POINTER, &[elem_ptr, STORAGE_BUFFER, vector]));
        new.globals
            .extend(inst(OP_VARIABLE, &[block_ptr, view, STORAGE_BUFFER]));
        new.globals.extend(inst(OP_CONSTANT, &[uint, zero, 0]));
        let stride = 4 * self.scalar_bits[&scalar] / 8;
        let d = &mut new.decorations;
        d.extend(inst(OP_DECORATE, &[array, DECORATION_ARRAY_STRIDE, stride]));
        d.extend(inst(OP_DECORATE, &[block, DECORATION_BLOCK]));
        d.extend(inst(OP_MEMBER_DECORATE, &[block, 0, DECORATION_OFFSET, 0]));
        for (_, i) in instructions(spirv) {
            if i[0] & 0xffff == OP_DECORATE && i.get(1) == Some(&var) {
                d.extend(inst(OP_DECORATE, &[&[view], &i[2..]].concat()));
            }
        }
        new.views.insert(var, (view, elem_ptr, zero));
    }
}

/// The groups: four stores of K = 4k..4k+3 of one variable in a run of the candidates'
/// chains and stores with nothing else between them. Returns the stores dropped, and at the
/// last of each group, what is stored there instead.
fn groups(
    spirv: &[u32],
    chains: &HashMap<u32, (u32, u32)>,
    stores: &HashMap<u32, Vec<Store>>,
    candidates: &HashMap<u32, u32>,
) -> (HashSet<usize>, HashMap<usize, Merged>) {
    let mut run_of: HashMap<usize, usize> = HashMap::new();
    let mut run = 0;
    for (at, i) in instructions(spirv) {
        let part = match i[0] & 0xffff {
            OP_ACCESS_CHAIN => i.len() == 6 && chains.contains_key(&i[2]),
            OP_STORE => chains.contains_key(&i[1]),
            _ => false,
        };
        if part {
            run_of.insert(at, run);
        } else {
            run += 1;
        }
    }
    let mut dropped = HashSet::new();
    let mut merged_at = HashMap::new();
    for (&var, list) in stores.iter().filter(|(v, _)| candidates.contains_key(v)) {
        let mut by_run: HashMap<usize, HashMap<u32, Store>> = HashMap::new();
        for s in list {
            by_run.entry(run_of[&s.at]).or_default().insert(s.k, *s);
        }
        for group in by_run.values() {
            for &k in group.keys().filter(|k| *k % 4 == 0) {
                let Some(four) = (0..4)
                    .map(|j| group.get(&(k + j)).copied())
                    .collect::<Option<Vec<Store>>>()
                else {
                    continue;
                };
                let last = four.iter().map(|s| s.at).max().expect("four stores");
                dropped.extend(four.iter().map(|s| s.at));
                let values = [four[0].value, four[1].value, four[2].value, four[3].value];
                merged_at.insert(last, (var, k / 4, values));
            }
        }
    }
    (dropped, merged_at)
}

/// The declarations the pass adds.
struct New {
    bound: u32,
    globals: Vec<u32>,
    decorations: Vec<u32>,
    /// Variable → (its vector view, the view's element pointer type, a constant 0).
    views: HashMap<u32, (u32, u32, u32)>,
}

impl New {
    fn id(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    /// Copies instruction `i`, with the views of the variables an entry point lists added to
    /// its interface (from SPIR-V 1.4 an entry point lists every global variable it uses).
    fn entry_point(&self, spirv: &[u32], i: &[u32], out: &mut Vec<u32>) {
        let listed: Vec<u32> = match i[0] & 0xffff {
            OP_ENTRY_POINT if spirv[1] >= 0x0001_0400 => self
                .views
                .iter()
                .filter(|(var, _)| i[3..].contains(var))
                .map(|(_, v)| v.0)
                .collect(),
            _ => vec![],
        };
        if listed.is_empty() {
            out.extend(i);
        } else {
            out.push(i[0] + ((listed.len() as u32) << 16));
            out.extend(&i[1..]);
            out.extend(listed);
        }
    }
}

fn inst(op: u32, operands: &[u32]) -> Vec<u32> {
    let mut v = vec![op | ((operands.len() as u32 + 1) << 16)];
    v.extend(operands);
    v
}
