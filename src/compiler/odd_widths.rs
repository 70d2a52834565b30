//! Integers of widths Vulkan does not have (`OpTypeInt 40 0`) made 32 or 64 bits wide (a SPIR-V
//! pass, before any other).
//!
//! LLVM's InstCombine, inside clspv 0.0.1, narrows a switch on a 64-bit value to the bits it
//! can have (clspv's data layout declares no native integer widths, so any width is "legal" to
//! it): in 64-bit builds (`-arch=spir64`) `switch (get_global_id(0))` became a switch, then
//! compares, on an `i40` (piglit's switch-case), a module Vulkan refuses and rspirv cannot
//! read. LLVM narrows a value only where its high bits are known to be zero, so the value is
//! the same at the next width that exists: each such type becomes the module's integer of 32
//! (widths below 32) or 64 bits of the same signedness, or is declared at that width where the
//! module has none; its constants keep their words (a width above 32 already takes two), and a
//! conversion between two types that are now one is made an `OpCopyObject`.

use super::spirv::{instructions, typed_results};
use std::collections::{HashMap, HashSet};

const OP_TYPE_INT: u32 = 21;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_TYPE_FUNCTION: u32 = 33;
const OP_COPY_OBJECT: u32 = 83;
const OP_U_CONVERT: u32 = 113;
const OP_S_CONVERT: u32 = 114;

/// `spirv` with its integers of odd widths made 32 or 64 bits wide; unchanged without them.
pub fn widen(spirv: &[u32]) -> Vec<u32> {
    let ints: Vec<(u32, u32, u32)> = instructions(spirv)
        .filter(|(_, i)| i[0] & 0xffff == OP_TYPE_INT && i.len() == 4)
        .map(|(_, i)| (i[1], i[2], i[3]))
        .collect();
    let wide = |w: u32| if w <= 32 { 32 } else { 64 };
    let odd: Vec<(u32, u32, u32)> = ints
        .iter()
        .copied()
        .filter(|&(_, w, _)| ![8, 16, 32, 64].contains(&w))
        .collect();
    if odd.is_empty() || odd.iter().any(|&(_, w, _)| w > 64) {
        return spirv.to_vec();
    }
    // (width, signedness) → the type declared so; odd type → the type it becomes, or its
    // declaration widened where there is none.
    let mut declared: HashMap<(u32, u32), u32> = ints
        .iter()
        .filter(|(_, w, _)| [8, 16, 32, 64].contains(w))
        .map(|&(id, w, s)| ((w, s), id))
        .collect();
    let (mut same, mut redeclared) = (HashMap::new(), HashSet::new());
    for &(id, w, s) in &odd {
        match declared.get(&(wide(w), s)) {
            Some(&existing) => _ = same.insert(id, existing),
            None => {
                declared.insert((wide(w), s), id);
                redeclared.insert(id);
            }
        }
    }
    let map = |id: u32| same.get(&id).copied().unwrap_or(id);
    let mut value_types: HashMap<u32, u32> = HashMap::new();
    let mut out = spirv[..5].to_vec();
    for (_, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        let mut inst = inst.to_vec();
        match op {
            OP_TYPE_INT if same.contains_key(&inst[1]) => continue,
            OP_TYPE_INT if redeclared.contains(&inst[1]) => inst[2] = wide(inst[2]),
            OP_TYPE_VECTOR | OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY if inst.len() >= 3 => {
                inst[2] = map(inst[2])
            }
            OP_TYPE_POINTER if inst.len() >= 4 => inst[3] = map(inst[3]),
            OP_TYPE_STRUCT | OP_TYPE_FUNCTION => {
                for w in &mut inst[2..] {
                    *w = map(*w);
                }
            }
            _ if typed_results().contains(&op) && inst.len() >= 3 => {
                inst[1] = map(inst[1]);
                let operand = inst.get(3).and_then(|v| value_types.get(v));
                if matches!(op, OP_U_CONVERT | OP_S_CONVERT) && operand == Some(&inst[1]) {
                    inst[0] = (4 << 16) | OP_COPY_OBJECT;
                }
                value_types.insert(inst[2], inst[1]);
            }
            _ => {}
        }
        out.extend(inst);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_i40_is_the_module_s_ulong() {
        const OP_CONSTANT: u32 = 43;
        const OP_IADD: u32 = 128;
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 50, 0];
        m.extend([(4 << 16) | OP_TYPE_INT, 2, 32, 0]);
        m.extend([(4 << 16) | OP_TYPE_INT, 3, 40, 0]);
        m.extend([(4 << 16) | OP_TYPE_INT, 4, 64, 0]);
        m.extend([(5 << 16) | OP_CONSTANT, 3, 5, 6, 0]);
        m.extend([(5 << 16) | OP_CONSTANT, 4, 6, 7, 0]);
        m.extend([(4 << 16) | OP_CONSTANT, 2, 7, 9]);
        // %8 = (u40)%6 (a truncation), %9 = (u40)%7 (an extension), %10 = %8 + %9.
        m.extend([(4 << 16) | OP_U_CONVERT, 3, 8, 6]);
        m.extend([(4 << 16) | OP_U_CONVERT, 3, 9, 7]);
        m.extend([(5 << 16) | OP_IADD, 3, 10, 8, 9]);
        let out = widen(&m);
        let insts: Vec<Vec<u32>> = instructions(&out).map(|(_, i)| i.to_vec()).collect();
        assert_eq!(insts.len(), 8, "the i40 declaration is gone");
        assert_eq!(insts[2], [(5 << 16) | OP_CONSTANT, 4, 5, 6, 0]);
        assert_eq!(insts[5], [(4 << 16) | OP_COPY_OBJECT, 4, 8, 6]);
        assert_eq!(insts[6], [(4 << 16) | OP_U_CONVERT, 4, 9, 7]);
        assert_eq!(insts[7], [(5 << 16) | OP_IADD, 4, 10, 8, 9]);
        // Without a ulong, the i40 is declared 64 bits wide.
        let no_ulong: Vec<u32> = [&m[..5], &m[9..13], &m[17..22]].concat();
        let out = widen(&no_ulong);
        let decl = instructions(&out).next().unwrap().1;
        assert_eq!(decl, [(4 << 16) | OP_TYPE_INT, 3, 64, 0]);
    }
}
