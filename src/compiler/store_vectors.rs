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

/// `spirv` with the stores merged; unchanged where nothing qualifies or the module is not
/// understood.
pub fn merge(spirv: &[u32]) -> Vec<u32> {
    merged(spirv).unwrap_or_else(|| spirv.to_vec())
}

fn merged(spirv: &[u32]) -> Option<Vec<u32>> {
    let mut end = 5;
    let mut scalar_bits: HashMap<u32, u32> = HashMap::new();
    let mut vectors: HashMap<(u32, u32), u32> = HashMap::new();
    let mut runtime_arrays: HashMap<u32, u32> = HashMap::new();
    let mut structs: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut pointers: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut constants: HashMap<u32, u32> = HashMap::new();
    let mut uint: Option<u32> = None;
    let mut strides: HashMap<u32, u32> = HashMap::new();
    let mut blocks: HashSet<u32> = HashSet::new();
    let mut offsets: HashMap<(u32, u32), u32> = HashMap::new();
    let mut variables: HashMap<u32, u32> = HashMap::new();
    let mut last_decoration = None;
    let mut first_function = None;
    for (at, i) in instructions(spirv) {
        end = at + i.len();
        let w = |n: usize| i.get(n).copied();
        match i[0] & 0xffff {
            OP_TYPE_INT if i.len() == 4 => {
                scalar_bits.insert(i[1], i[2]);
                if i[2] == 32 && i[3] == 0 {
                    uint = uint.or(Some(i[1]));
                }
            }
            OP_TYPE_FLOAT if i.len() >= 3 => _ = scalar_bits.insert(i[1], i[2]),
            OP_TYPE_VECTOR if i.len() == 4 => _ = vectors.entry((i[2], i[3])).or_insert(i[1]),
            OP_TYPE_RUNTIME_ARRAY if i.len() == 3 => _ = runtime_arrays.insert(i[1], i[2]),
            OP_TYPE_STRUCT => _ = structs.insert(i[1], i[2..].to_vec()),
            OP_TYPE_POINTER if i.len() == 4 => _ = pointers.insert(i[1], (i[2], i[3])),
            OP_CONSTANT if i.len() == 4 => _ = constants.insert(i[2], i[3]),
            OP_DECORATE | OP_MEMBER_DECORATE => {
                last_decoration = Some(at + i.len());
                match (i[0] & 0xffff, w(2), w(3), w(4)) {
                    (OP_DECORATE, Some(DECORATION_ARRAY_STRIDE), Some(s), _) => {
                        _ = strides.insert(i[1], s)
                    }
                    (OP_DECORATE, Some(DECORATION_BLOCK), ..) => _ = blocks.insert(i[1]),
                    (OP_MEMBER_DECORATE, Some(m), Some(DECORATION_OFFSET), Some(o)) => {
                        _ = offsets.insert((i[1], m), o)
                    }
                    _ => {}
                }
            }
            OP_VARIABLE if w(3) == Some(STORAGE_BUFFER) => _ = variables.insert(i[2], i[1]),
            OP_FUNCTION => _ = first_function = first_function.or(Some(at)),
            _ => {}
        }
    }
    if end != spirv.len() {
        return None;
    }
    let (uint, first_function, last_decoration) = (uint?, first_function?, last_decoration?);
    // The candidates: variable → its scalar element type.
    let mut candidates: HashMap<u32, u32> = HashMap::new();
    for (&var, &ptr) in &variables {
        let Some(&(STORAGE_BUFFER, block)) = pointers.get(&ptr) else {
            continue;
        };
        let Some([array]) = structs.get(&block).map(|m| m.as_slice()) else {
            continue;
        };
        let Some(&scalar) = runtime_arrays.get(array) else {
            continue;
        };
        let Some(&bits) = scalar_bits.get(&scalar) else {
            continue;
        };
        if blocks.contains(&block)
            && offsets.get(&(block, 0)) == Some(&0)
            && matches!(bits, 8 | 16 | 32 | 64)
            && strides.get(array) == Some(&(bits / 8))
        {
            candidates.insert(var, scalar);
        }
    }
    if candidates.is_empty() {
        return None;
    }
    // Access chains of the candidates: result → (variable, K); stores through them.
    let mut chains: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut stores: HashMap<u32, Vec<Store>> = HashMap::new();
    let mut seen: HashMap<u32, HashSet<u32>> = HashMap::new();
    let mut out_of_functions = true;
    for (at, i) in instructions(spirv) {
        let op = i[0] & 0xffff;
        match op {
            OP_FUNCTION => {
                out_of_functions = false;
                seen.clear();
            }
            OP_FUNCTION_END => out_of_functions = true,
            _ => {}
        }
        if out_of_functions || op == OP_FUNCTION {
            // Declarations (decorations, names, the entry point's interface) are not uses.
            continue;
        }
        if op == OP_ACCESS_CHAIN && i.len() == 6 && candidates.contains_key(&i[3]) {
            match (constants.get(&i[4]), constants.get(&i[5])) {
                (Some(0), Some(&k)) => _ = chains.insert(i[2], (i[3], k)),
                _ => _ = candidates.remove(&i[3]),
            }
            continue;
        }
        if op == OP_STORE && i.len() >= 3 {
            if let Some(&(var, k)) = chains.get(&i[1]) {
                let plain = i.len() == 3 || (i.len() == 5 && i[3] == ALIGNED);
                if !plain || !seen.entry(var).or_default().insert(k) || i[2] == i[1] {
                    candidates.remove(&var);
                }
                let value = i[2];
                stores.entry(var).or_default().push(Store { at, k, value });
                continue;
            }
        }
        // Any other mention of a candidate or of one of its chains disqualifies it (a literal
        // equal to such an id only makes this conservative).
        for &word in &i[1..] {
            if candidates.remove(&word).is_none() {
                if let Some(&(var, _)) = chains.get(&word) {
                    candidates.remove(&var);
                }
            }
        }
    }
    // Groups: runs of the candidates' chains and stores with nothing else between them.
    let mut run_of: HashMap<usize, usize> = HashMap::new();
    let mut run = 0;
    for (at, i) in instructions(spirv) {
        let op = i[0] & 0xffff;
        let part = match op {
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
    // Merged: the stores dropped, and at the last of each group, (variable, k, values).
    let mut dropped: HashSet<usize> = HashSet::new();
    let mut merged_at: HashMap<usize, (u32, u32, [u32; 4])> = HashMap::new();
    for (&var, list) in &stores {
        if !candidates.contains_key(&var) {
            continue;
        }
        let mut by_run: HashMap<usize, HashMap<u32, Store>> = HashMap::new();
        for s in list {
            by_run.entry(run_of[&s.at]).or_default().insert(s.k, *s);
        }
        for group in by_run.values() {
            for (&k, _) in group.iter().filter(|(k, _)| *k % 4 == 0) {
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
    if merged_at.is_empty() {
        return None;
    }
    // The new declarations: per variable, a vector view.
    let mut bound = spirv[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut globals: Vec<u32> = vec![];
    let mut decorations: Vec<u32> = vec![];
    let mut views: HashMap<u32, (u32, u32, u32)> = HashMap::new();
    let mut used: Vec<u32> = merged_at.values().map(|m| m.0).collect();
    used.sort_unstable();
    used.dedup();
    for var in used {
        let scalar = candidates[&var];
        let vector = match vectors.get(&(scalar, 4)) {
            Some(&v) => v,
            None => {
                let v = fresh();
                globals.extend(inst(OP_TYPE_VECTOR, &[v, scalar, 4]));
                vectors.insert((scalar, 4), v);
                v
            }
        };
        let (array, block, block_ptr, elem_ptr, view) =
            (fresh(), fresh(), fresh(), fresh(), fresh());
        globals.extend(inst(OP_TYPE_RUNTIME_ARRAY, &[array, vector]));
        globals.extend(inst(OP_TYPE_STRUCT, &[block, array]));
        globals.extend(inst(OP_TYPE_POINTER, &[block_ptr, STORAGE_BUFFER, block]));
        globals.extend(inst(OP_TYPE_POINTER, &[elem_ptr, STORAGE_BUFFER, vector]));
        globals.extend(inst(OP_VARIABLE, &[block_ptr, view, STORAGE_BUFFER]));
        let stride = 4 * scalar_bits[&scalar] / 8;
        decorations.extend(inst(OP_DECORATE, &[array, DECORATION_ARRAY_STRIDE, stride]));
        decorations.extend(inst(OP_DECORATE, &[block, DECORATION_BLOCK]));
        decorations.extend(inst(OP_MEMBER_DECORATE, &[block, 0, DECORATION_OFFSET, 0]));
        for (_, i) in instructions(spirv) {
            if i[0] & 0xffff == OP_DECORATE && i.get(1) == Some(&var) {
                decorations.extend(inst(OP_DECORATE, &[&[view], &i[2..]].concat()));
            }
        }
        let zero = fresh();
        globals.extend(inst(OP_CONSTANT, &[uint, zero, 0]));
        views.insert(var, (view, elem_ptr, zero));
    }
    let mut code: HashMap<usize, Vec<u32>> = HashMap::new();
    for (&at, &(var, k, values)) in &merged_at {
        let (view, elem_ptr, zero) = views[&var];
        let vector = vectors[&(candidates[&var], 4)];
        let (index, value, ptr) = (fresh(), fresh(), fresh());
        globals.extend(inst(OP_CONSTANT, &[uint, index, k]));
        let mut c = inst(
            OP_COMPOSITE_CONSTRUCT,
            &[&[vector, value], &values[..]].concat(),
        );
        c.extend(inst(OP_ACCESS_CHAIN, &[elem_ptr, ptr, view, zero, index]));
        c.extend(inst(OP_STORE, &[ptr, value]));
        code.insert(at, c);
    }
    let mut out = spirv[..5].to_vec();
    out[3] = bound;
    for (at, i) in instructions(spirv) {
        if at == last_decoration {
            out.extend(&decorations);
        }
        if at == first_function {
            out.extend(&globals);
        }
        if let Some(c) = code.get(&at) {
            out.extend(c);
            continue;
        }
        if dropped.contains(&at) {
            continue;
        }
        let op = i[0] & 0xffff;
        let listed: Vec<u32> = match op {
            // From SPIR-V 1.4 an entry point lists every global variable it uses.
            OP_ENTRY_POINT if spirv[1] >= 0x0001_0400 => views
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
    Some(out)
}

fn inst(op: u32, operands: &[u32]) -> Vec<u32> {
    let mut v = vec![op | ((operands.len() as u32 + 1) << 16)];
    v.extend(operands);
    v
}
