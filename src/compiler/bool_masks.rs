//! Masks of boolean vectors compared with zero, made `OpAny`/`OpAll` (a SPIR-V pass).
//!
//! LLVM's loop vectorizer, inside clspv 0.0.1, turns a search loop (`for (i...) if (a[i] !=
//! b[i]) r = false;` over `char` or `short` arrays: the conformance suite's vstore kernels
//! for those types) into a `<N x i1>` reduction whose end is `bitcast <N x i1> to iN` then a
//! compare with zero; clspv writes the bitcast as `OpBitcast` of a boolean vector to an
//! integer, which SPIR-V does not have ("Expected input to be a pointer or int or float vector
//! or scalar"): Vulkan's validation layer rejects it and the launch failed. Where every use of
//! such a bitcast compares it with zero (any lane set) or with all N bits set (every lane),
//! the bitcast becomes `OpAny` or `OpAll` of the vector and each compare its copy or
//! `OpLogicalNot`. Other bitcasts of boolean vectors stay as they are.

use std::collections::HashMap;

use super::spirv::instructions;

const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_VECTOR: u32 = 23;
const OP_CONSTANT: u32 = 43;
const OP_CONSTANT_NULL: u32 = 46;
const OP_COPY_OBJECT: u32 = 83;
const OP_BITCAST: u32 = 124;
const OP_ANY: u32 = 154;
const OP_ALL: u32 = 155;
const OP_LOGICAL_NOT: u32 = 168;
const OP_I_EQUAL: u32 = 170;
const OP_I_NOT_EQUAL: u32 = 171;

/// What a mask is compared with.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Against {
    Zero,
    AllSet,
}

/// `spirv` with those bitcasts and compares rewritten; `None` when there is none.
pub fn repair(spirv: &[u32]) -> Option<Vec<u32>> {
    let mut bool_type = None;
    // Boolean vector types and their lane counts, values of those types.
    let mut vectors: HashMap<u32, u32> = HashMap::new();
    let mut lanes_of: HashMap<u32, u32> = HashMap::new();
    // Integer constants of one word (OpConstantNull: zero).
    let mut constants: HashMap<u32, u64> = HashMap::new();
    // Bitcast results → their lane count.
    let mut masks: HashMap<u32, u32> = HashMap::new();
    for (_, inst) in instructions(spirv) {
        match (inst[0] & 0xffff, inst) {
            (OP_TYPE_BOOL, &[_, id]) => bool_type = Some(id),
            (OP_TYPE_VECTOR, &[_, id, component, n]) if Some(component) == bool_type => {
                vectors.insert(id, n);
            }
            (OP_CONSTANT, &[_, _, id, value]) => {
                constants.insert(id, value as u64);
            }
            (OP_CONSTANT_NULL, &[_, _, id]) => {
                constants.insert(id, 0);
            }
            (OP_BITCAST, &[_, _, result, value]) if lanes_of.contains_key(&value) => {
                masks.insert(result, lanes_of[&value]);
            }
            (_, &[_, ty, result, ..]) if vectors.contains_key(&ty) => {
                lanes_of.insert(result, vectors[&ty]);
            }
            _ => {}
        }
    }
    let bool_type = bool_type?;
    if masks.is_empty() {
        return None;
    }
    // Each mask's comparisons: the same kind for all of them, and no other use.
    let mut against: HashMap<u32, Option<Against>> = HashMap::new();
    for (_, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        let compare = match (op, inst) {
            (OP_I_EQUAL | OP_I_NOT_EQUAL, &[_, _, _, a, b]) => Some((a, b)),
            _ => None,
        };
        for (i, word) in inst.iter().enumerate().skip(1) {
            let Some(&lanes) = masks.get(word) else {
                continue;
            };
            if op == OP_BITCAST && i == 2 {
                continue;
            }
            let kind = compare.and_then(|(a, b)| {
                let other = if a == *word { b } else { a };
                match constants.get(&other) {
                    Some(0) => Some(Against::Zero),
                    Some(&c) if c == (1u64 << lanes) - 1 => Some(Against::AllSet),
                    _ => None,
                }
            });
            let e = against.entry(*word).or_insert(kind);
            if *e != kind {
                *e = None;
            }
        }
    }
    let mut out = spirv.get(..5)?.to_vec();
    let mut changed = false;
    for (_, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        let kind_of = |v: &u32| against.get(v).copied().flatten();
        let replaced = match (op, inst) {
            (OP_BITCAST, &[_, _, result, value]) => kind_of(&result).map(|k| {
                let test = if k == Against::Zero { OP_ANY } else { OP_ALL };
                vec![(4 << 16) | test, bool_type, result, value]
            }),
            (OP_I_EQUAL | OP_I_NOT_EQUAL, &[_, ty, result, a, b]) => {
                let mask = [a, b].into_iter().find(|v| kind_of(v).is_some());
                mask.map(|m| {
                    // `any == 0` and `all != all-set` are negations; the others copies.
                    let negated = (kind_of(&m) == Some(Against::Zero)) == (op == OP_I_EQUAL);
                    let op = if negated {
                        OP_LOGICAL_NOT
                    } else {
                        OP_COPY_OBJECT
                    };
                    vec![(4 << 16) | op, ty, result, m]
                })
            }
            _ => None,
        };
        match replaced {
            Some(r) => {
                out.extend(r);
                changed = true;
            }
            None => out.extend_from_slice(inst),
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(body: &[&[u32]]) -> Vec<u32> {
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        for inst in body {
            m.push(((inst.len() as u32) << 16) | inst[0]);
            m.extend_from_slice(&inst[1..]);
        }
        m
    }

    #[test]
    fn masks_compared_with_zero_or_all_set_become_any_and_all() {
        const OP_TYPE_INT: u32 = 21;
        let types: [&[u32]; 5] = [
            &[OP_TYPE_BOOL, 1],
            &[OP_TYPE_VECTOR, 2, 1, 4],
            &[OP_TYPE_INT, 3, 8, 0],
            &[OP_CONSTANT, 3, 4, 0],
            &[OP_CONSTANT, 3, 5, 15],
        ];
        let body: [&[u32]; 5] = [
            &[OP_I_EQUAL, 2, 10, 8, 9],
            &[OP_BITCAST, 3, 11, 10],
            &[OP_I_EQUAL, 1, 12, 11, 4],
            &[OP_BITCAST, 3, 13, 10],
            &[OP_I_NOT_EQUAL, 1, 14, 5, 13],
        ];
        let want: [&[u32]; 5] = [
            &[OP_I_EQUAL, 2, 10, 8, 9],
            &[OP_ANY, 1, 11, 10],
            &[OP_LOGICAL_NOT, 1, 12, 11],
            &[OP_ALL, 1, 13, 10],
            &[OP_LOGICAL_NOT, 1, 14, 13],
        ];
        let all = |b: &[&[u32]]| module(&[&types[..], b].concat());
        assert_eq!(repair(&all(&body)), Some(all(&want)));
        // A mask used otherwise stays.
        let other: [&[u32]; 3] = [
            &[OP_I_EQUAL, 2, 10, 8, 9],
            &[OP_BITCAST, 3, 11, 10],
            &[OP_I_EQUAL, 1, 12, 11, 11],
        ];
        assert_eq!(repair(&all(&other)), None);
    }
}
