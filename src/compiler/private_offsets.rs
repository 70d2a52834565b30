//! Negative constant offsets from a private pointer that a loop moves, made negative again (a
//! SPIR-V pass, on words).
//!
//! clspv lowers a `__private` pointer carried by a loop (`float *p = buf; ... p += 13`, a
//! pointer-valued phi) to an index into the array (its LowerPrivatePointerPHI pass), turning
//! each constant byte offset into elements with an unsigned 32-bit division: `p[j - 1]` in a
//! `float` array becomes index `p + j + 0x3fffffff` (`(2^32 - 4) / 4`) instead of
//! `p + j + 0xffffffff`. So every read behind such a pointer (ffmpeg's deshake filter,
//! `subpix_ptr[j - 1]` and `subpix_ptr[j - REFINE_WIN_W - 2]` in its corner refinement) read
//! far out of the array, and lavapipe returned other values (tests/clspv_fixes.rs
//! `negative_offsets_from_a_private_pointer_a_loop_moves`).
//!
//! The index of an element of a private array is small; a constant `2^32 / e - k` (e the
//! element's size in bytes, k up to 2^20) added into one is such an offset divided wrongly,
//! and becomes `-k` (`2^32 - k`) here: in every addition on the way from an index operand of
//! an access chain into a function-local array back through additions, phis and shifts (an
//! array of vectors is indexed in components, `(p + ((j + C) << 1)) >> 1`). Arrays of
//! one-byte elements are not affected (a division by one), nor dynamic offsets (clspv
//! subtracts them).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::spirv::instructions;

const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_VARIABLE: u32 = 59;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_IN_BOUNDS_ACCESS_CHAIN: u32 = 66;
const OP_PHI: u32 = 245;
const OP_IADD: u32 = 128;
const OP_SHIFT_RIGHT_LOGICAL: u32 = 194;
const OP_SHIFT_LEFT_LOGICAL: u32 = 196;
const STORAGE_FUNCTION: u32 = 7;
/// The largest k of a wrongly divided offset `-k` that is repaired.
const MAX_OFFSET: u64 = 1 << 20;

/// `spirv` with such offsets repaired (the module as it is where there is none).
pub fn repair(spirv: &[u32]) -> Vec<u32> {
    // Sizes in bytes of scalar and vector types; arrays' element types; pointers; constants.
    let mut size: HashMap<u32, u64> = HashMap::new();
    let mut array_element: HashMap<u32, u32> = HashMap::new();
    let mut function_pointee: HashMap<u32, u32> = HashMap::new();
    let mut constants: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut variables: HashMap<u32, u32> = HashMap::new();
    let mut adds: HashMap<u32, [u32; 2]> = HashMap::new();
    let mut phis: HashMap<u32, Vec<u32>> = HashMap::new();
    // Shifts by a constant: result → the value shifted (a vector array's index is counted in
    // its components and shifted back).
    let mut shifts: HashMap<u32, u32> = HashMap::new();
    let mut indices: Vec<(u32, u32)> = vec![];
    for (_, inst) in instructions(spirv) {
        match (inst[0] & 0xffff, inst.len()) {
            (OP_TYPE_INT | OP_TYPE_FLOAT, 3..) => {
                size.insert(inst[1], u64::from(inst[2] / 8));
            }
            (OP_TYPE_VECTOR, 4) => {
                if let Some(&s) = size.get(&inst[2]) {
                    // A 3-vector takes 4 components' room.
                    size.insert(inst[1], s * u64::from(inst[3].max(2).next_power_of_two()));
                }
            }
            (OP_TYPE_ARRAY, 4) => {
                array_element.insert(inst[1], inst[2]);
            }
            (OP_TYPE_POINTER, 4) if inst[2] == STORAGE_FUNCTION => {
                function_pointee.insert(inst[1], inst[3]);
            }
            (OP_CONSTANT, 4) => {
                constants.insert(inst[2], (inst[1], inst[3]));
            }
            (OP_VARIABLE, 4..) if inst[3] == STORAGE_FUNCTION => {
                variables.insert(inst[2], inst[1]);
            }
            (OP_IADD, 5) => {
                adds.insert(inst[2], [inst[3], inst[4]]);
            }
            (OP_SHIFT_LEFT_LOGICAL | OP_SHIFT_RIGHT_LOGICAL, 5) => {
                shifts.insert(inst[2], inst[3]);
            }
            (OP_PHI, n) if n >= 5 => {
                phis.insert(inst[2], inst[3..].iter().step_by(2).copied().collect());
            }
            (OP_ACCESS_CHAIN | OP_IN_BOUNDS_ACCESS_CHAIN, n) if n >= 5 => {
                // The array's element size, where the base is a function-local array.
                let element = variables
                    .get(&inst[3])
                    .and_then(|ty| function_pointee.get(ty))
                    .and_then(|array| array_element.get(array))
                    .and_then(|e| size.get(e));
                if let Some(&e) = element.filter(|&&e| e > 1) {
                    indices.push((inst[4], (1u64 << 32).div_euclid(e) as u32));
                }
            }
            _ => {}
        }
    }
    // The additions to repair: (addition, operand position) → the right constant's value.
    let mut repairs: HashMap<(u32, usize), u32> = HashMap::new();
    let mut seen = HashSet::new();
    for (index, unit) in indices {
        let mut work = vec![index];
        while let Some(v) = work.pop() {
            if !seen.insert((v, unit)) {
                continue;
            }
            if let Some(incoming) = phis.get(&v) {
                work.extend(incoming);
            }
            if let Some(&shifted) = shifts.get(&v) {
                work.push(shifted);
            }
            let Some(operands) = adds.get(&v) else {
                continue;
            };
            for (k, &operand) in operands.iter().enumerate() {
                match constants.get(&operand) {
                    Some(&(_, c)) if c < unit && u64::from(unit - c) <= MAX_OFFSET => {
                        repairs.insert((v, k), c.wrapping_sub(unit));
                    }
                    Some(_) => {}
                    None => work.push(operand),
                }
            }
        }
    }
    if repairs.is_empty() {
        return spirv.to_vec();
    }
    // The right constants, each declared once after the 32-bit integer type's first constant.
    // (Ids in value order: the same module gives the same words.)
    let values: BTreeSet<u32> = repairs.values().copied().collect();
    let bound = spirv[3];
    let declared: BTreeMap<u32, u32> = values.into_iter().zip(bound..).collect();
    let int_type = repairs
        .keys()
        .find_map(|(add, k)| constants.get(&adds[add][*k]).map(|c| c.0))
        .unwrap_or_default();
    let mut out = Vec::with_capacity(spirv.len() + 4 * declared.len());
    out.extend_from_slice(&spirv[..5]);
    let mut pending = true;
    for (_, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        match (op, inst.len()) {
            (OP_IADD, 5) if repairs.keys().any(|r| r.0 == inst[2]) => {
                let mut inst = inst.to_vec();
                for k in 0..2 {
                    if let Some(value) = repairs.get(&(inst[2], k)) {
                        inst[3 + k] = declared[value];
                    }
                }
                out.extend(inst);
            }
            _ => out.extend_from_slice(inst),
        }
        if pending && op == OP_CONSTANT && inst[1] == int_type {
            for (&value, &id) in &declared {
                out.extend([4 << 16 | OP_CONSTANT, int_type, id, value]);
            }
            pending = false;
        }
    }
    out[3] = bound + declared.len() as u32;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module: 1 = uint, 2 = float, 3 = [169 x float], 4 = pointer (Function) to it,
    /// 5 = const 169, 6 = const 0x3fffffff (`-4` bytes divided as unsigned), 7 = const 13,
    /// 8 = the array, 9 = const 0x3ffffff3; then the function's words.
    fn module(body: &[&[u32]]) -> Vec<u32> {
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        m.extend([4 << 16 | OP_TYPE_INT, 1, 32, 0]);
        m.extend([3 << 16 | OP_TYPE_FLOAT, 2, 32]);
        m.extend([4 << 16 | OP_CONSTANT, 1, 5, 169]);
        m.extend([4 << 16 | OP_TYPE_ARRAY, 3, 2, 5]);
        m.extend([4 << 16 | OP_TYPE_POINTER, 4, STORAGE_FUNCTION, 3]);
        m.extend([4 << 16 | OP_CONSTANT, 1, 6, 0x3fff_ffff]);
        m.extend([4 << 16 | OP_CONSTANT, 1, 7, 13]);
        m.extend([4 << 16 | OP_CONSTANT, 1, 9, 0x3fff_fff3]);
        m.extend([4 << 16 | OP_VARIABLE, 4, 8, STORAGE_FUNCTION]);
        body.iter().for_each(|i| m.extend(*i));
        m
    }

    #[test]
    fn wrongly_divided_offsets_become_negative() {
        // %20 = phi [%7, ..], [%23, ..]; %21 = %22 + %6; %24 = %20 + %21; chain %8[%24];
        // %23 = %9 + %20 (the pointer moved back 13 elements).
        let m = module(&[
            &[7 << 16 | OP_PHI, 1, 20, 7, 50, 23, 51],
            &[5 << 16 | OP_IADD, 1, 21, 22, 6],
            &[5 << 16 | OP_IADD, 1, 24, 20, 21],
            &[5 << 16 | OP_ACCESS_CHAIN, 30, 25, 8, 24],
            &[5 << 16 | OP_IADD, 1, 23, 9, 20],
        ]);
        let r = repair(&m);
        let words: Vec<Vec<u32>> = instructions(&r).map(|(_, i)| i.to_vec()).collect();
        assert_eq!(r[3], 102);
        // The new constants follow the first uint constant, in value order.
        assert_eq!(words[3], [4 << 16 | OP_CONSTANT, 1, 100, (-13i32) as u32]);
        assert_eq!(words[4], [4 << 16 | OP_CONSTANT, 1, 101, u32::MAX]);
        assert!(words.contains(&vec![5 << 16 | OP_IADD, 1, 21, 22, 101]));
        assert!(words.contains(&vec![5 << 16 | OP_IADD, 1, 23, 100, 20]));
        // Nothing to repair: the module as it was.
        let plain = module(&[&[5 << 16 | OP_IADD, 1, 21, 22, 6]]);
        assert_eq!(repair(&plain), plain);
    }
}
