//! Long vectors in read-only buffers are typed as 4-vectors, and four loads of consecutive
//! components become one load of a 4-vector (issue 21).
//!
//! clspv's `-long-vector` keeps a `float8` / `float16` (and the int and uint ones) in a buffer as
//! an array of 8 or 16 scalars, and loads it one component at a time. NVIDIA's compiler reads
//! sixteen such loads at half its bandwidth: clpeak's float16 figure was 0.45 of NVIDIA's OpenCL.
//! tools/diag/wide_loads.c on the H200: a float16 as 16 scalar loads 1715 GB/s; the same data
//! through a buffer clspv types as float4, four float4 loads, 3174 GB/s (NVIDIA's OpenCL 3621).
//! A second variable viewing the buffer as 4-vectors beside clspv's was slower still (1020
//! GB/s), so the buffer's own variable is retyped.
//!
//! A storage-buffer variable qualifies where its type is a Block struct of one runtime array
//! (offset 0) of `OpTypeArray T N` (T a 32-bit int or float, N a multiple of 4 from 8) with the
//! natural strides (4 and 4N), and where it is only read: every use is an
//! `OpAccessChain %var 0 %i K` (a 32-bit `%i`, a constant K) whose results are only loaded.
//! Its element becomes `OpTypeArray v4T N/4` (strides 16 and 4N: the same bytes), each chain
//! `%var 0 %i K/4 K%4`, and four loads of the components 4m..4m+3 of one `%i` in one block,
//! with no store, atomic, barrier, call or copy between the first and the last, one load of
//! `%var 0 %i m` at the place of the first, the four loads extracts of it. Modules where
//! nothing qualifies are returned unchanged.

use super::spirv::instructions;
use std::collections::{HashMap, HashSet};

const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_FUNCTION_CALL: u32 = 57;
const OP_VARIABLE: u32 = 59;
const OP_LOAD: u32 = 61;
const OP_STORE: u32 = 62;
const OP_COPY_MEMORY: u32 = 63;
const OP_COPY_MEMORY_SIZED: u32 = 64;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const OP_COMPOSITE_EXTRACT: u32 = 81;
const OP_IMAGE_WRITE: u32 = 99;
const OP_CONTROL_BARRIER: u32 = 224;
const OP_MEMORY_BARRIER: u32 = 225;
/// OpAtomicLoad .. OpAtomicXor, and OpAtomicFlagTestAndSet / OpAtomicFlagClear.
const ATOMICS: std::ops::RangeInclusive<u32> = 227..=242;
const OP_ATOMIC_FLAGS: [u32; 2] = [318, 319];
const OP_LABEL: u32 = 248;
const STORAGE_BUFFER: u32 = 12;
const DECORATION_BLOCK: u32 = 2;
const DECORATION_ARRAY_STRIDE: u32 = 6;
const DECORATION_OFFSET: u32 = 35;
const MEMORY_ALIGNED: u32 = 0x2;

/// `spirv` with the loads merged; unchanged where nothing qualifies or it is not understood.
pub fn merge(spirv: &[u32]) -> Vec<u32> {
    merged(spirv).unwrap_or_else(|| spirv.to_vec())
}

fn merged(spirv: &[u32]) -> Option<Vec<u32>> {
    let mut end = 5;
    let mut scalars: HashMap<u32, u32> = HashMap::new();
    let mut uint = None;
    let mut vectors: HashMap<(u32, u32), u32> = HashMap::new();
    let mut arrays: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut runtime_arrays: HashMap<u32, u32> = HashMap::new();
    let mut structs: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut pointers: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut constants: HashMap<u32, u32> = HashMap::new();
    let mut strides: HashMap<u32, u32> = HashMap::new();
    let mut blocks: HashSet<u32> = HashSet::new();
    let mut offsets: HashMap<(u32, u32), u32> = HashMap::new();
    // Storage-buffer variables: id → (word offset, pointer type).
    let mut variables: HashMap<u32, (usize, u32)> = HashMap::new();
    let (mut last_decoration, mut first_function) = (None, None);
    // Result types of the 32-bit unsigned values (for the indices).
    let mut uints: HashSet<u32> = HashSet::new();
    for (at, i) in instructions(spirv) {
        end = at + i.len();
        let w = |n: usize| i.get(n).copied();
        match i[0] & 0xffff {
            OP_TYPE_INT if i.len() == 4 => {
                scalars.insert(i[1], i[2]);
                if i[2] == 32 && i[3] == 0 {
                    uint = uint.or(Some(i[1]));
                }
            }
            OP_TYPE_FLOAT if i.len() >= 3 => _ = scalars.insert(i[1], i[2]),
            OP_TYPE_VECTOR if i.len() == 4 => _ = vectors.entry((i[2], i[3])).or_insert(i[1]),
            OP_TYPE_ARRAY if i.len() == 4 => _ = arrays.insert(i[1], (i[2], i[3])),
            OP_TYPE_RUNTIME_ARRAY if i.len() == 3 => _ = runtime_arrays.insert(i[1], i[2]),
            OP_TYPE_STRUCT => _ = structs.insert(i[1], i[2..].to_vec()),
            OP_TYPE_POINTER if i.len() == 4 => _ = pointers.insert(i[1], (i[2], i[3])),
            OP_CONSTANT if i.len() == 4 => {
                constants.insert(i[2], i[3]);
                if Some(i[1]) == uint {
                    uints.insert(i[2]);
                }
            }
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
            OP_VARIABLE if w(3) == Some(STORAGE_BUFFER) => _ = variables.insert(i[2], (at, i[1])),
            OP_FUNCTION => _ = first_function = first_function.or(Some(at)),
            _ => {}
        }
        if first_function.is_some() && i.len() >= 3 && Some(i[1]) == uint {
            // An instruction typed uint (a result type is the first operand of the
            // instructions that have one; ids are unique, so no other operand equals it).
            uints.insert(i[2]);
        }
    }
    if end != spirv.len() {
        return None;
    }
    let (uint, last_decoration) = (uint?, last_decoration?);
    // The candidates: variable → (its OpVariable's word offset, scalar type, components N).
    let mut candidates: HashMap<u32, (usize, u32, u32)> = HashMap::new();
    for (&var, &(at, ptr)) in &variables {
        let Some(&(STORAGE_BUFFER, block)) = pointers.get(&ptr) else {
            continue;
        };
        let Some([runtime]) = structs.get(&block).map(|m| m.as_slice()) else {
            continue;
        };
        let Some(&(scalar, length)) = runtime_arrays.get(runtime).and_then(|e| arrays.get(e))
        else {
            continue;
        };
        let element = runtime_arrays[runtime];
        let n = constants.get(&length).copied().unwrap_or(0);
        if blocks.contains(&block)
            && offsets.get(&(block, 0)) == Some(&0)
            && scalars.get(&scalar) == Some(&32)
            && matches!(n, 8 | 16)
            && strides.get(&element) == Some(&4)
            && strides.get(runtime) == Some(&(4 * n))
        {
            candidates.insert(var, (at, scalar, n));
        }
    }
    if candidates.is_empty() {
        return None;
    }
    // Access chains of the candidates: result → (variable, %i, K). A candidate used any other
    // way, or whose chains are used other than by loads, is dropped.
    let mut chains: HashMap<u32, (u32, u32, u32)> = HashMap::new();
    let mut in_function = false;
    for (_, i) in instructions(spirv) {
        let op = i[0] & 0xffff;
        match op {
            OP_FUNCTION => in_function = true,
            OP_FUNCTION_END => in_function = false,
            _ => {}
        }
        if !in_function || op == OP_FUNCTION {
            // Declarations (decorations, names, the entry points' interfaces) are not uses.
            continue;
        }
        if op == OP_ACCESS_CHAIN && candidates.contains_key(&i[3]) {
            let chain = match (i.len(), i.get(4).and_then(|z| constants.get(z))) {
                (7, Some(0)) if uints.contains(&i[5]) => {
                    constants.get(&i[6]).map(|&k| (i[3], i[5], k))
                }
                _ => None,
            };
            match chain {
                Some(chain) if chain.2 < candidates[&i[3]].2 => _ = chains.insert(i[2], chain),
                _ => _ = candidates.remove(&i[3]),
            }
            continue;
        }
        // The ids an instruction uses, other than loading through a chain: for stores, their
        // pointer and value (not the literals of their memory operands, such as `Aligned 64`,
        // which may equal a chain's id); for the rest every word (a literal equal to such an
        // id only makes this conservative).
        let used = match op {
            OP_LOAD => &[],
            OP_STORE => i.get(1..3).unwrap_or(&[]),
            _ => &i[1..],
        };
        for &word in used {
            if candidates.remove(&word).is_none() {
                if let Some(&(var, ..)) = chains.get(&word) {
                    candidates.remove(&var);
                }
            }
        }
    }
    chains.retain(|_, c| candidates.contains_key(&c.0));
    if chains.is_empty() {
        return None;
    }
    // Groups: four loads of one (variable, %i, m) in a run of instructions without a block
    // boundary or anything that writes or orders memory.
    let mut open: HashMap<(u32, u32, u32), Vec<(usize, u32, u32)>> = HashMap::new();
    let mut groups: Vec<(u32, u32, [(usize, u32, u32); 4])> = vec![];
    for (at, i) in instructions(spirv) {
        let op = i[0] & 0xffff;
        let ordering = matches!(
            op,
            OP_LABEL
                | OP_FUNCTION_END
                | OP_STORE
                | OP_COPY_MEMORY
                | OP_COPY_MEMORY_SIZED
                | OP_FUNCTION_CALL
                | OP_CONTROL_BARRIER
                | OP_MEMORY_BARRIER
                | OP_IMAGE_WRITE
        ) || ATOMICS.contains(&op)
            || OP_ATOMIC_FLAGS.contains(&op);
        if ordering {
            open.clear();
            continue;
        }
        if op != OP_LOAD || i.len() < 4 {
            continue;
        }
        let Some(&(var, index, k)) = chains.get(&i[3]) else {
            continue;
        };
        // (word offset, K, the load's result)
        let group = open.entry((var, index, k / 4)).or_default();
        if group.iter().any(|&(_, j, _)| j == k) {
            // The same component twice: start again from this one.
            group.clear();
        }
        group.push((at, k, i[2]));
        if group.len() == 4 {
            let mut four = std::mem::take(group);
            four.sort_by_key(|&(_, k, _)| k);
            groups.push((var, index, four.try_into().ok()?));
        }
    }
    // The new types, before the retyped variables: for each, its 4-vector, the array of N/4 of them, the
    // runtime array, the block, the pointer to the block and to the 4-vector.
    let mut bound = spirv[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut types_before: HashMap<usize, Vec<u32>> = HashMap::new();
    let mut decorations: Vec<u32> = vec![];
    let mut made_constants: HashMap<u32, u32> = HashMap::new();
    // A uint constant: an existing one, or one made before the variable at `at`.
    let mut constant = |before: &mut Vec<u32>, fresh: &mut dyn FnMut() -> u32, value: u32| {
        let existing = constants
            .iter()
            .filter(|&(id, &v)| v == value && uints.contains(id))
            .map(|(&id, _)| id)
            .min();
        existing.unwrap_or_else(|| {
            *made_constants.entry(value).or_insert_with(|| {
                let id = fresh();
                before.extend(inst(OP_CONSTANT, &[uint, id, value]));
                id
            })
        })
    };
    // All before the first of them (a 4-vector made for one may serve another).
    let first_variable = candidates.values().map(|c| c.0).min()?;
    // Variable → (its new pointer type, the pointer to its 4-vector, the 4-vector).
    let mut retyped: HashMap<u32, (u32, u32, u32)> = HashMap::new();
    let mut quarters: Vec<u32> = vec![];
    for (&var, &(_, scalar, n)) in &candidates {
        let mut code = vec![];
        let vector = match vectors.get(&(scalar, 4)) {
            Some(&v) => v,
            None => {
                let v = fresh();
                code.extend(inst(OP_TYPE_VECTOR, &[v, scalar, 4]));
                vectors.insert((scalar, 4), v);
                v
            }
        };
        let length = constant(&mut code, &mut fresh, n / 4);
        if quarters.is_empty() {
            quarters = (0..4).map(|q| constant(&mut code, &mut fresh, q)).collect();
        }
        let (array, runtime, block, block_ptr, vector_ptr) =
            (fresh(), fresh(), fresh(), fresh(), fresh());
        code.extend(inst(OP_TYPE_ARRAY, &[array, vector, length]));
        code.extend(inst(OP_TYPE_RUNTIME_ARRAY, &[runtime, array]));
        code.extend(inst(OP_TYPE_STRUCT, &[block, runtime]));
        code.extend(inst(OP_TYPE_POINTER, &[block_ptr, STORAGE_BUFFER, block]));
        code.extend(inst(OP_TYPE_POINTER, &[vector_ptr, STORAGE_BUFFER, vector]));
        decorations.extend(inst(OP_DECORATE, &[array, DECORATION_ARRAY_STRIDE, 16]));
        decorations.extend(inst(
            OP_DECORATE,
            &[runtime, DECORATION_ARRAY_STRIDE, 4 * n],
        ));
        decorations.extend(inst(OP_DECORATE, &[block, DECORATION_BLOCK]));
        decorations.extend(inst(OP_MEMBER_DECORATE, &[block, 0, DECORATION_OFFSET, 0]));
        types_before.entry(first_variable).or_default().extend(code);
        retyped.insert(var, (block_ptr, vector_ptr, vector));
    }
    // The code: the vector load before the first of each group, extracts for the four.
    let mut before: HashMap<usize, Vec<u32>> = HashMap::new();
    let mut extracts: HashMap<usize, Vec<u32>> = HashMap::new();
    for &(var, index, group) in &groups {
        let at = group.iter().map(|g| g.0).min().expect("four loads");
        let (_, vector_ptr, vector) = retyped[&var];
        let (scalar, zero, m) = (
            candidates[&var].1,
            quarters[0],
            quarters[group[0].1 as usize / 4],
        );
        let (ptr, value) = (fresh(), fresh());
        let code = before.entry(at).or_default();
        code.extend(inst(
            OP_ACCESS_CHAIN,
            &[vector_ptr, ptr, var, zero, index, m],
        ));
        code.extend(inst(OP_LOAD, &[vector, value, ptr, MEMORY_ALIGNED, 16]));
        for (j, &(load_at, _, result)) in group.iter().enumerate() {
            let words = inst(OP_COMPOSITE_EXTRACT, &[scalar, result, value, j as u32]);
            extracts.insert(load_at, words);
        }
    }
    let mut out = spirv[..5].to_vec();
    out[3] = bound;
    for (at, i) in instructions(spirv) {
        if at == last_decoration {
            out.extend(&decorations);
        }
        if let Some(code) = types_before.get(&at) {
            out.extend(code);
        }
        if let Some(code) = before.get(&at) {
            out.extend(code);
        }
        if let Some(words) = extracts.get(&at) {
            out.extend(words);
            continue;
        }
        let op = i[0] & 0xffff;
        match op {
            OP_VARIABLE if retyped.contains_key(&i[2]) => {
                out.extend(inst(OP_VARIABLE, &[retyped[&i[2]].0, i[2], STORAGE_BUFFER]));
            }
            OP_ACCESS_CHAIN if chains.contains_key(&i[2]) => {
                // (N is 8 or 16: K / 4 and K % 4 are both below 4.)
                let (_, _, k) = chains[&i[2]];
                let (q, r) = (quarters[k as usize / 4], quarters[k as usize % 4]);
                out.extend(inst(OP_ACCESS_CHAIN, &[i[1], i[2], i[3], i[4], i[5], q, r]));
            }
            _ => out.extend(i),
        }
    }
    Some(out)
}

fn inst(op: u32, operands: &[u32]) -> Vec<u32> {
    let mut v = vec![op | ((operands.len() as u32 + 1) << 16)];
    v.extend(operands);
    v
}

#[cfg(test)]
mod tests {
    use super::super::tests::{spirv_val, target};
    use super::super::{compile_bytes, options::clspv_args, words};
    use super::*;

    const SOURCE: &str = "kernel void sum16(global const float16 *a, global float *b) {\n\
        uint i = get_global_id(0);\n\
        float16 v = a[i] * 2;\n\
        b[i] = v.s0 + v.s1 + v.s2 + v.s3 + v.s4 + v.s5 + v.s6 + v.s7\n\
             + v.s8 + v.s9 + v.sa + v.sb + v.sc + v.sd + v.se + v.sf;\n\
    }\n\
    kernel void copy8(global const int8 *a, global int8 *b) { b[get_global_id(0)] = a[get_global_id(0)]; }\n\
    kernel void written(global float8 *a) { uint i = get_global_id(0); a[i] = a[i] * 2.0f; }\n";

    fn count(m: &[u32], op: u32, ty: Option<u32>) -> usize {
        instructions(m)
            .filter(|(_, i)| i[0] & 0xffff == op && ty.is_none_or(|t| i.get(1) == Some(&t)))
            .count()
    }

    #[test]
    fn loads_of_long_vectors_read_only_become_vector_loads() {
        let args = clspv_args("", &target()).unwrap();
        let (bytes, _) = compile_bytes(&[SOURCE.as_bytes()], &args).unwrap();
        let clspv = words(&bytes).unwrap();
        let merged = merge(&clspv);
        spirv_val(&merged);
        let vec4s: HashSet<u32> = instructions(&merged)
            .filter(|(_, i)| i[0] & 0xffff == OP_TYPE_VECTOR && i[3] == 4)
            .map(|(_, i)| i[1])
            .collect();
        let vector_loads = instructions(&merged)
            .filter(|(_, i)| i[0] & 0xffff == OP_LOAD && vec4s.contains(&i[1]))
            .count()
            - instructions(&clspv)
                .filter(|(_, i)| i[0] & 0xffff == OP_LOAD && vec4s.contains(&i[1]))
                .count();
        // sum16: 4 vector loads for its float16; copy8: 2 for its int8; `written` stores
        // into its buffer, which keeps its scalar loads.
        assert_eq!(vector_loads, 4 + 2);
        assert_eq!(
            count(&clspv, OP_LOAD, None) - count(&merged, OP_LOAD, None),
            (16 + 8) - (4 + 2)
        );
        assert_eq!(merge(&merged), merged);
    }

    #[test]
    fn modules_without_long_vector_loads_are_unchanged() {
        let args = clspv_args("", &target()).unwrap();
        let src = "kernel void f(global const float4 *a, global float4 *b) { b[0] = a[1]; }";
        let (bytes, _) = compile_bytes(&[src.as_bytes()], &args).unwrap();
        let spirv = words(&bytes).unwrap();
        assert_eq!(merge(&spirv), spirv);
    }
}
