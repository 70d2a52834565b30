//! Four loads of consecutive components of one long vector in a storage buffer become one load
//! of a 4-vector (issue 21).
//!
//! clspv's `-long-vector` keeps a `float8` / `float16` (and the int and uint ones) in a buffer as
//! an array of 8 or 16 scalars, and loads it one component at a time. NVIDIA's compiler joins 8
//! such loads into wide ones but not 16: clpeak's float16 bandwidth was 0.45 of NVIDIA's OpenCL,
//! and a kernel reading each float16 as four float4s ran 1.85 times the plain one on the H200
//! (tools/diag/wide_loads.c: 1715 against 3174 GB/s; NVIDIA's OpenCL 3621).
//!
//! A storage-buffer variable qualifies where it is only read (every use is an `OpAccessChain`
//! whose results are only loaded) and its type is a Block struct of one runtime array (offset
//! 0), with the natural strides, of either
//! - `OpTypeArray T N` (T a 32-bit int or float, N a multiple of 4 from 8): four loads through
//!   `OpAccessChain %var 0 %i K` with one 32-bit `%i` and the constants K = 4m..4m+3 are a
//!   group; or
//! - T itself (clspv's choice where a kernel indexes the long vectors in more than one way):
//!   four loads through `OpAccessChain %var 0 %x` where the %x are `b + 4m .. b + 4m + 3`
//!   (`b` itself for 0, else `OpIAdd b c`) are a group where clspv marked the first load
//!   `Aligned` to 16 bytes or more (it does for the components 0, 4, 8... of a long vector).
//!
//! A group's four loads, in one block with no store, atomic, barrier, call or copy between the
//! first and the last, become one load of a 4-vector at the place of the first, through a
//! second variable at the same descriptor that views the buffer as an array of 4-vectors (with
//! the first's decorations), and the four loads become extracts of it. Modules where nothing
//! qualifies are returned unchanged.

use super::spirv::instructions;
use std::collections::{HashMap, HashSet};

const OP_ENTRY_POINT: u32 = 15;
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
const OP_IADD: u32 = 128;
const OP_IMUL: u32 = 132;
const OP_SHIFT_RIGHT_LOGICAL: u32 = 194;
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

/// A load through a qualifying variable: the variable, what its group shares (%i, or the
/// scalar index's base), the component K (or offset from that base), the index of the access
/// chain, the load's result id and the alignment it states.
#[derive(Clone, Copy)]
struct Load {
    var: u32,
    base: u32,
    k: u32,
    index: u32,
    result: u32,
    aligned: u32,
}

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
    let mut variables: HashMap<u32, u32> = HashMap::new();
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
            OP_VARIABLE if w(3) == Some(STORAGE_BUFFER) => _ = variables.insert(i[2], i[1]),
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
    let (uint, first_function, last_decoration) = (uint?, first_function?, last_decoration?);
    // The candidates: variable → (scalar type, components N; 0 for an array of scalars).
    let mut candidates: HashMap<u32, (u32, u32)> = HashMap::new();
    for (&var, &ptr) in &variables {
        let Some(&(STORAGE_BUFFER, block)) = pointers.get(&ptr) else {
            continue;
        };
        let Some([runtime]) = structs.get(&block).map(|m| m.as_slice()) else {
            continue;
        };
        let Some(&element) = runtime_arrays.get(runtime) else {
            continue;
        };
        let (scalar, n) = match arrays.get(&element) {
            Some(&(scalar, length)) => (scalar, constants.get(&length).copied().unwrap_or(0)),
            None => (element, 0),
        };
        let long = n % 4 == 0 && n >= 8 && strides.get(&element) == Some(&4);
        if blocks.contains(&block)
            && offsets.get(&(block, 0)) == Some(&0)
            && scalars.get(&scalar) == Some(&32)
            && (long || n == 0)
            && strides.get(runtime) == Some(&(4 * n.max(1)))
        {
            candidates.insert(var, (scalar, n));
        }
    }
    if candidates.is_empty() {
        return None;
    }
    // Access chains of the candidates: result → (variable, base, K, index). A candidate used
    // any other way, or whose chains are used other than by loads, is dropped.
    let mut chains: HashMap<u32, (u32, u32, u32, u32)> = HashMap::new();
    // `OpIAdd b c` of 32-bit values with a constant c: result → (b, c).
    let mut sums: HashMap<u32, (u32, u32)> = HashMap::new();
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
        if op == OP_IADD && i.len() == 5 && uints.contains(&i[2]) {
            match (constants.get(&i[3]), constants.get(&i[4])) {
                (None, Some(&c)) => _ = sums.insert(i[2], (i[3], c)),
                (Some(&c), None) => _ = sums.insert(i[2], (i[4], c)),
                _ => {}
            }
        }
        if op == OP_ACCESS_CHAIN && candidates.contains_key(&i[3]) {
            let long = candidates[&i[3]].1 > 0;
            let zero = i.len() >= 5 && constants.get(&i[4]) == Some(&0);
            let chain = match (long, i.len()) {
                (true, 7) if zero && uints.contains(&i[5]) => {
                    constants.get(&i[6]).map(|&k| (i[3], i[5], k, i[5]))
                }
                (false, 6) if zero && uints.contains(&i[5]) => {
                    let (base, k) = sums.get(&i[5]).copied().unwrap_or((i[5], 0));
                    Some((i[3], base, k, i[5]))
                }
                _ => None,
            };
            match chain {
                Some(chain) => _ = chains.insert(i[2], chain),
                None => _ = candidates.remove(&i[3]),
            }
            continue;
        }
        if op == OP_LOAD && i.len() >= 4 && chains.contains_key(&i[3]) {
            continue;
        }
        // The ids an instruction uses: for loads and stores, those before their memory
        // operands (whose literals, such as `Aligned 64`, may equal a chain's id); for the
        // rest every word (a literal equal to such an id only makes this conservative).
        let used = match op {
            OP_LOAD => i.get(3..4).unwrap_or(&[]),
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
    // Groups: four loads of one (variable, %i, m) in a run of instructions without a block
    // boundary or anything that writes or orders memory.
    let mut open: HashMap<(u32, u32, u32), Vec<(usize, Load)>> = HashMap::new();
    // (Keyed by the base and K / 4: the four of a group share both.)
    let mut groups: Vec<[(usize, Load); 4]> = vec![];
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
        let Some(&(var, base, k, index)) = chains.get(&i[3]) else {
            continue;
        };
        if !candidates.contains_key(&var) {
            continue;
        }
        let aligned = match i.get(4) {
            Some(&mask) if mask & MEMORY_ALIGNED != 0 => i.get(5).copied().unwrap_or(0),
            _ => 0,
        };
        let load = Load {
            var,
            base,
            k,
            index,
            result: i[2],
            aligned,
        };
        let group = open.entry((var, base, k / 4)).or_default();
        if group.iter().any(|(_, l)| l.k == k) {
            // The same component twice: start again from this one.
            group.clear();
        }
        group.push((at, load));
        if group.len() == 4 {
            let mut four: Vec<(usize, Load)> = std::mem::take(group);
            four.sort_by_key(|(_, l)| l.k);
            // A scalar array's group starts 16-byte aligned.
            if candidates[&var].1 > 0 || four[0].1.aligned >= 16 {
                groups.push(four.try_into().ok()?);
            }
        }
    }
    if groups.is_empty() {
        return None;
    }
    // The new declarations: per variable, a view of its buffer as an array of 4-vectors.
    let mut bound = spirv[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut globals: Vec<u32> = vec![];
    let mut decorations: Vec<u32> = vec![];
    let mut made_constants: HashMap<u32, u32> = HashMap::new();
    let mut constant = |globals: &mut Vec<u32>, fresh: &mut dyn FnMut() -> u32, value: u32| {
        if let Some((&id, _)) = constants
            .iter()
            .find(|&(id, &v)| v == value && uints.contains(id))
        {
            return id;
        }
        *made_constants.entry(value).or_insert_with(|| {
            let id = fresh();
            globals.extend(inst(OP_CONSTANT, &[uint, id, value]));
            id
        })
    };
    // Variable → (view, pointer to its vector, the vector type).
    let mut views: HashMap<u32, (u32, u32, u32)> = HashMap::new();
    let mut used: Vec<u32> = groups.iter().map(|g| g[0].1.var).collect();
    used.sort_unstable();
    used.dedup();
    for var in used {
        let (scalar, _) = candidates[&var];
        let vector = match vectors.get(&(scalar, 4)) {
            Some(&v) => v,
            None => {
                let v = fresh();
                globals.extend(inst(OP_TYPE_VECTOR, &[v, scalar, 4]));
                vectors.insert((scalar, 4), v);
                v
            }
        };
        let (runtime, block, block_ptr, elem_ptr, view) =
            (fresh(), fresh(), fresh(), fresh(), fresh());
        globals.extend(inst(OP_TYPE_RUNTIME_ARRAY, &[runtime, vector]));
        globals.extend(inst(OP_TYPE_STRUCT, &[block, runtime]));
        globals.extend(inst(OP_TYPE_POINTER, &[block_ptr, STORAGE_BUFFER, block]));
        globals.extend(inst(OP_TYPE_POINTER, &[elem_ptr, STORAGE_BUFFER, vector]));
        globals.extend(inst(OP_VARIABLE, &[block_ptr, view, STORAGE_BUFFER]));
        decorations.extend(inst(OP_DECORATE, &[runtime, DECORATION_ARRAY_STRIDE, 16]));
        decorations.extend(inst(OP_DECORATE, &[block, DECORATION_BLOCK]));
        decorations.extend(inst(OP_MEMBER_DECORATE, &[block, 0, DECORATION_OFFSET, 0]));
        for (_, i) in instructions(spirv) {
            if i[0] & 0xffff == OP_DECORATE && i.get(1) == Some(&var) {
                decorations.extend(inst(OP_DECORATE, &[&[view], &i[2..]].concat()));
            }
        }
        views.insert(var, (view, elem_ptr, vector));
    }
    // The code: the vector load before the first of each group, extracts for the four.
    let mut before: HashMap<usize, Vec<u32>> = HashMap::new();
    let mut extracts: HashMap<usize, Vec<u32>> = HashMap::new();
    let zero = constant(&mut globals, &mut fresh, 0);
    for group in &groups {
        let first = group.iter().map(|(at, _)| *at).min().expect("four loads");
        let Load {
            var,
            base,
            k,
            index,
            ..
        } = group[0].1;
        let (view, elem_ptr, vector) = views[&var];
        let (_, n) = candidates[&var];
        let mut code = vec![];
        let at = fresh();
        if n > 0 {
            // Element %i of N components, its components k..k+3: vector i * N / 4 + k / 4.
            let per_element = constant(&mut globals, &mut fresh, n / 4);
            let quarter = constant(&mut globals, &mut fresh, k / 4);
            let scaled = fresh();
            code.extend(inst(OP_IMUL, &[uint, scaled, base, per_element]));
            code.extend(inst(OP_IADD, &[uint, at, scaled, quarter]));
        } else {
            // Scalar `index`, 16-byte aligned: vector index / 4.
            let two = constant(&mut globals, &mut fresh, 2);
            code.extend(inst(OP_SHIFT_RIGHT_LOGICAL, &[uint, at, index, two]));
        }
        let (ptr, value) = (fresh(), fresh());
        code.extend(inst(OP_ACCESS_CHAIN, &[elem_ptr, ptr, view, zero, at]));
        code.extend(inst(OP_LOAD, &[vector, value, ptr, MEMORY_ALIGNED, 16]));
        before.entry(first).or_default().extend(code);
        let (scalar, _) = candidates[&var];
        for (j, (at, load)) in group.iter().enumerate() {
            let words = inst(
                OP_COMPOSITE_EXTRACT,
                &[scalar, load.result, value, j as u32],
            );
            extracts.insert(*at, words);
        }
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
        if let Some(code) = before.get(&at) {
            out.extend(code);
        }
        if let Some(words) = extracts.get(&at) {
            out.extend(words);
            continue;
        }
        let listed: Vec<u32> = match i[0] & 0xffff {
            // From SPIR-V 1.4 an entry point lists every global variable it uses.
            OP_ENTRY_POINT if spirv[1] >= 0x0001_0400 => views
                .iter()
                .filter(|(var, _)| i[3..].contains(var))
                .map(|(_, v)| v.0)
                .collect(),
            _ => vec![],
        };
        out.push(i[0] + ((listed.len() as u32) << 16));
        out.extend(&i[1..]);
        out.extend(listed);
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
        float16 v = a[2 * i] + a[2 * i + 1];\n\
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
        // sum16: two float16s, 4 vector loads each; copy8: 2 for its int8; `written` stores
        // into its buffer, which keeps its scalar loads.
        assert_eq!(vector_loads, 2 * 4 + 2);
        assert_eq!(
            count(&clspv, OP_LOAD, None) - count(&merged, OP_LOAD, None),
            (2 * 16 + 8) - (2 * 4 + 2)
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
