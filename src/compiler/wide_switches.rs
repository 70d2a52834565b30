//! Switches on a 64-bit selector made switches on 32 bits (a SPIR-V pass, before any other).
//!
//! rspirv 0.13 reads an `OpSwitch`'s case literals at the width of the type it finds under the
//! selector's id, but it tracks the ids of types only, not of values: a 64-bit selector's
//! literals (two words each) were read as one word each and the module as malformed
//! (`TypeUnsupported`), so a program that switches on `size_t` (`switch (get_global_id(0))`,
//! piglit's switch-case) failed to build in 64-bit builds (`-arch=spir64`). Where every case
//! fits in 32 bits (its high word is zero), the switch is on
//! `(sel >> 32) != 0 ? U : (uint)sel`, with U a 32-bit value that no case has, so a selector
//! above 2^32 - 1 still goes to the default. Other switches are left as they are.

use super::spirv::{instructions, typed_results};
use std::collections::HashMap;

const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_CONSTANT: u32 = 43;
const OP_FUNCTION: u32 = 54;
const OP_U_CONVERT: u32 = 113;
const OP_I_NOT_EQUAL: u32 = 171;
const OP_SELECT: u32 = 169;
const OP_SHIFT_RIGHT_LOGICAL: u32 = 194;
const OP_SELECTION_MERGE: u32 = 247;
const OP_SWITCH: u32 = 251;

/// `spirv` with its 64-bit switches on 32 bits (see the module comment); unchanged without.
pub fn narrow(spirv: &[u32]) -> Vec<u32> {
    let mut ints: HashMap<u32, u32> = HashMap::new();
    let (mut uint, mut bool_type, mut first_function) = (None, None, None);
    let mut value_types: HashMap<u32, u32> = HashMap::new();
    // (offset of the OpSwitch, offset of the instruction to insert before, selector type)
    let mut switches = vec![];
    let mut previous = None;
    for (at, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        match op {
            OP_TYPE_INT if inst.len() == 4 => {
                ints.insert(inst[1], inst[2]);
                if inst[2] == 32 && inst[3] == 0 {
                    uint = uint.or(Some(inst[1]));
                }
            }
            OP_TYPE_BOOL => bool_type = bool_type.or(inst.get(1).copied()),
            OP_FUNCTION => _ = first_function.get_or_insert(at),
            OP_SWITCH if inst.len() >= 3 => {
                let ty = value_types.get(&inst[1]).copied();
                if let Some(ty) = ty.filter(|t| ints.get(t) == Some(&64)) {
                    let before = match previous {
                        Some((p, OP_SELECTION_MERGE)) => p,
                        _ => at,
                    };
                    switches.push((at, before, ty));
                }
            }
            _ => {}
        }
        if typed_results().contains(&op) && inst.len() >= 3 {
            value_types.insert(inst[2], inst[1]);
        }
        previous = Some((at, op));
    }
    let (Some(uint), Some(bool_type), Some(types_end)) = (uint, bool_type, first_function) else {
        return spirv.to_vec();
    };
    let mut bound = spirv[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut constants = vec![];
    let mut zeros: HashMap<u32, u32> = HashMap::new();
    let c32 = fresh();
    constants.extend([(4 << 16) | OP_CONSTANT, uint, c32, 32]);
    // Offset of the instruction to insert before → words; offset of the switch → its new form.
    let mut inserts: HashMap<usize, Vec<u32>> = HashMap::new();
    let mut replaced: HashMap<usize, Vec<u32>> = HashMap::new();
    for (at, before, ty) in switches {
        let inst = &spirv[at..at + (spirv[at] >> 16) as usize];
        let cases = &inst[3..];
        if cases.len() % 3 != 0 || cases.chunks(3).any(|c| c[1] != 0) {
            continue;
        }
        let taken: Vec<u32> = cases.chunks(3).map(|c| c[0]).collect();
        let Some(unused) = (0..=u32::MAX).find(|v| !taken.contains(v)) else {
            continue;
        };
        let zero = *zeros.entry(ty).or_insert_with(|| {
            let z = fresh();
            constants.extend([(5 << 16) | OP_CONSTANT, ty, z, 0, 0]);
            z
        });
        let u = fresh();
        constants.extend([(4 << 16) | OP_CONSTANT, uint, u, unused]);
        let (hi, big, lo, sel) = (fresh(), fresh(), fresh(), fresh());
        inserts.entry(before).or_default().extend([
            (5 << 16) | OP_SHIFT_RIGHT_LOGICAL,
            ty,
            hi,
            inst[1],
            c32,
            (5 << 16) | OP_I_NOT_EQUAL,
            bool_type,
            big,
            hi,
            zero,
            (4 << 16) | OP_U_CONVERT,
            uint,
            lo,
            inst[1],
            (6 << 16) | OP_SELECT,
            uint,
            sel,
            big,
            u,
            lo,
        ]);
        let mut narrow = vec![0, sel, inst[2]];
        for c in cases.chunks(3) {
            narrow.extend([c[0], c[2]]);
        }
        narrow[0] = ((narrow.len() as u32) << 16) | OP_SWITCH;
        replaced.insert(at, narrow);
    }
    if replaced.is_empty() {
        return spirv.to_vec();
    }
    let mut out = spirv[..5].to_vec();
    out[3] = bound;
    for (at, inst) in instructions(spirv) {
        if at == types_end {
            out.extend(&constants);
        }
        if let Some(words) = inserts.get(&at) {
            out.extend(words);
        }
        match replaced.get(&at) {
            Some(words) => out.extend(words),
            None => out.extend(inst),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_on_64_bits_is_on_32() {
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 50, 0];
        m.extend([(4 << 16) | OP_TYPE_INT, 2, 32, 0]);
        m.extend([(4 << 16) | OP_TYPE_INT, 3, 64, 0]);
        m.extend([(2 << 16) | OP_TYPE_BOOL, 4]);
        m.extend([(5 << 16) | OP_FUNCTION, 1, 10, 0, 9]);
        m.extend([(2 << 16) | 248, 11]);
        m.extend([(4 << 16) | 61, 3, 12, 13]);
        m.extend([(3 << 16) | OP_SELECTION_MERGE, 20, 0]);
        m.extend([(9 << 16) | OP_SWITCH, 12, 20, 0, 0, 21, 1, 0, 22]);
        let out = narrow(&m);
        let ops: Vec<u32> = instructions(&out).map(|(_, i)| i[0] & 0xffff).collect();
        assert_eq!(
            ops,
            [
                OP_TYPE_INT,
                OP_TYPE_INT,
                OP_TYPE_BOOL,
                OP_CONSTANT,
                OP_CONSTANT,
                OP_CONSTANT,
                OP_FUNCTION,
                248,
                61,
                OP_SHIFT_RIGHT_LOGICAL,
                OP_I_NOT_EQUAL,
                OP_U_CONVERT,
                OP_SELECT,
                OP_SELECTION_MERGE,
                OP_SWITCH
            ]
        );
        let switch = instructions(&out).last().unwrap().1;
        let select = instructions(&out).nth(12).unwrap().1;
        assert_eq!(switch[1..], [select[2], 20, 0, 21, 1, 22]);
        // The value no case has (2) is the one chosen above 32 bits.
        let unused = instructions(&out).nth(5).unwrap().1;
        assert_eq!((unused[2], unused[3]), (select[4], 2));
        // A case above 32 bits: left.
        let mut wide = m.clone();
        let n = wide.len();
        wide[n - 2] = 1;
        assert_eq!(narrow(&wide), wide);
    }
}
