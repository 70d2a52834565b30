//! `__local` arrays of arrays made one-dimensional (a SPIR-V pass, on every device).
//!
//! NVIDIA's Vulkan driver (580.x on the H200) loses what a kernel stores to the rows after the
//! first of a Workgroup array of arrays when the module declares `VariablePointers`: pyopencl's
//! scan (`__local scan_t ldata[K + 1][WG_SIZE + 1]`, a row chosen by conditions, which clspv
//! writes as selects of pointers and so with that capability) read rows 1.. as zeros.
//! tools/diag/scan_variants.c measured it there (docs/GPU.md): with the capability, a 2D array
//! is wrong whether its row is chosen by a select of pointers or of indices; without it (the
//! same module with index selects and the capability removed) it is right, and a flat array of
//! the same words is right with the capability and pointer selects. NVIDIA's own OpenCL runs
//! every shape right.
//!
//! So each Workgroup variable whose type is an array of arrays (of any element: a scalar, a
//! vector, a struct) becomes one array of the innermost element, and each access chain that
//! names it, which must index every array level, indexes it at the row-major linear index
//! (computed in the function, or a constant where the indices are). A variable used otherwise
//! (a chain that stops at a row, a copy of the whole) is left as it is. The words and their
//! offsets do not change, so the reflection's sizes hold. Indices may be 32-bit or, in
//! physical-addressing modules, 64-bit (`size_t`): the linear index is computed in 32 bits.

use std::collections::HashMap;

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

use super::spirv::{instructions, UintBuilder};

const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_POINTER: u32 = 32;
const OP_VARIABLE: u32 = 59;
const OP_FUNCTION: u32 = 54;
const WORKGROUP: u32 = 4;

/// `spirv` with its Workgroup arrays of arrays flattened; `None` when it has none (or none
/// this pass can flatten).
pub fn flatten(spirv: &[u32]) -> Option<Vec<u32>> {
    if !has_nested_workgroup_array(spirv) {
        return None;
    }
    let (mut m, end) = super::spirv::load_functions(spirv)?;
    let mut next_id = m.header.as_ref()?.bound;
    let mut changed = false;
    for (var, dims, element) in candidates(&m) {
        if !only_full_chains(&m, var, dims.len()) {
            continue;
        }
        flatten_one(&mut m, var, &dims, element, &mut next_id)?;
        changed = true;
    }
    if !changed {
        return None;
    }
    m.header.as_mut()?.bound = next_id;
    let mut out = m.assemble();
    out.extend_from_slice(&spirv[end..]);
    Some(out)
}

/// Whether a Workgroup variable points to an array of arrays (a look at the words before the
/// module is loaded).
fn has_nested_workgroup_array(spirv: &[u32]) -> bool {
    let mut arrays = HashMap::new();
    let mut pointees = HashMap::new();
    for (_, i) in instructions(spirv) {
        match (i[0] & 0xffff, i) {
            (OP_TYPE_ARRAY, &[_, id, element, _]) => {
                arrays.insert(id, element);
            }
            (OP_TYPE_POINTER, &[_, id, WORKGROUP, pointee]) => {
                pointees.insert(id, pointee);
            }
            (OP_VARIABLE, &[_, ty, _, WORKGROUP, ..]) => {
                let nested = pointees
                    .get(&ty)
                    .and_then(|p| arrays.get(p))
                    .is_some_and(|e| arrays.contains_key(e));
                if nested {
                    return true;
                }
            }
            (OP_FUNCTION, _) => return false,
            _ => {}
        }
    }
    false
}

/// The Workgroup variables of nested array type: (variable, lengths outermost first, the
/// innermost element type). Lengths must be 32-bit constants.
fn candidates(m: &dr::Module) -> Vec<(Word, Vec<u32>, Word)> {
    let by_id: HashMap<Word, &Instruction> = m
        .types_global_values
        .iter()
        .filter_map(|i| Some((i.result_id?, i)))
        .collect();
    let constant = |id: Word| match by_id.get(&id)? {
        i if i.class.opcode == Op::Constant => match i.operands.first() {
            Some(Operand::LiteralBit32(v)) => Some(*v),
            _ => None,
        },
        _ => None,
    };
    let array = |id: Word| {
        let i = by_id.get(&id)?;
        match (i.class.opcode, i.operands.as_slice()) {
            (Op::TypeArray, [Operand::IdRef(e), Operand::IdRef(len)]) => {
                Some((*e, constant(*len)?))
            }
            _ => None,
        }
    };
    let mut found = vec![];
    for v in &m.types_global_values {
        let (Op::Variable, Some(var), Some(ptr)) = (v.class.opcode, v.result_id, v.result_type)
        else {
            continue;
        };
        if v.operands.first() != Some(&Operand::StorageClass(StorageClass::Workgroup)) {
            continue;
        }
        let Some(p) = by_id.get(&ptr) else { continue };
        let Some(Operand::IdRef(mut ty)) = p.operands.get(1) else {
            continue;
        };
        let mut dims = vec![];
        // A failed length (a specialization constant) leaves the variable alone.
        while by_id
            .get(&ty)
            .is_some_and(|i| i.class.opcode == Op::TypeArray)
        {
            let Some((element, len)) = array(ty) else {
                dims.clear();
                break;
            };
            dims.push(len);
            ty = element;
        }
        if dims.len() >= 2 {
            found.push((var, dims, ty));
        }
    }
    found
}

/// Whether every use of `var` in the functions is the base of an access chain with at least
/// `levels` indices, all 32-bit integers or 64-bit ones (physical-addressing modules index
/// with `size_t`), no other instruction naming it.
fn only_full_chains(m: &dr::Module, var: Word, levels: usize) -> bool {
    let ints: Vec<Word> = m
        .types_global_values
        .iter()
        .filter(|i| {
            i.class.opcode == Op::TypeInt
                && matches!(i.operands.first(), Some(&Operand::LiteralBit32(32 | 64)))
        })
        .filter_map(|i| i.result_id)
        .collect();
    let types = value_types(m);
    let index_ok = |o: &Operand| match o {
        Operand::IdRef(id) => types.get(id).is_some_and(|t| ints.contains(t)),
        _ => false,
    };
    let names = |i: &Instruction| i.operands.contains(&Operand::IdRef(var));
    m.functions
        .iter()
        .flat_map(|f| {
            f.def
                .iter()
                .chain(&f.parameters)
                .chain(f.blocks.iter().flat_map(|b| &b.instructions))
        })
        .filter(|i| names(i))
        .all(|i| {
            matches!(i.class.opcode, Op::AccessChain | Op::InBoundsAccessChain)
                && i.operands.first() == Some(&Operand::IdRef(var))
                && !i.operands[1..].contains(&Operand::IdRef(var))
                && i.operands.len() > levels
                && i.operands[1..=levels].iter().all(index_ok)
        })
}

/// Gives `var` the type of one array of `element` (the product of `dims` long) and indexes it
/// in each chain at the linear index of the chain's first `dims.len()` indices.
fn flatten_one(
    m: &mut dr::Module,
    var: Word,
    dims: &[u32],
    element: Word,
    next_id: &mut Word,
) -> Option<()> {
    let mut b = UintBuilder::of(m, *next_id)?;
    let total = dims.iter().try_fold(1u32, |a, d| a.checked_mul(*d))?;
    let pointer = b.workgroup_array(element, total);
    let types = value_types(m);
    let levels = dims.len();
    // Row-major strides: the elements one step of each level spans.
    let strides: Vec<u32> = (0..levels)
        .map(|k| dims[k + 1..].iter().product())
        .collect();
    for block in m.functions.iter_mut().flat_map(|f| &mut f.blocks) {
        let mut out = Vec::with_capacity(block.instructions.len());
        for mut i in std::mem::take(&mut block.instructions) {
            let chain = matches!(i.class.opcode, Op::AccessChain | Op::InBoundsAccessChain)
                && i.operands.first() == Some(&Operand::IdRef(var));
            if chain {
                let indices: Vec<Word> = i.operands[1..=levels]
                    .iter()
                    .filter_map(|o| match o {
                        Operand::IdRef(id) => Some(b.narrow(*id, types.get(id).copied(), &mut out)),
                        _ => None,
                    })
                    .collect();
                let linear = b.linear(&indices, &strides, &mut out);
                i.operands.splice(1..=levels, [Operand::IdRef(linear)]);
            }
            out.push(i);
        }
        block.instructions = out;
    }
    // The new types and constants go before the variable (operands are declared before use).
    let at = m
        .types_global_values
        .iter()
        .position(|i| i.result_id == Some(var))?;
    m.types_global_values[at].result_type = Some(pointer);
    m.types_global_values.splice(at..at, b.globals);
    *next_id = b.next_id;
    Some(())
}

/// The type of each value defined outside functions or in their blocks.
fn value_types(m: &dr::Module) -> HashMap<Word, Word> {
    m.types_global_values
        .iter()
        .chain(
            m.functions
                .iter()
                .flat_map(|f| f.blocks.iter().flat_map(|b| &b.instructions)),
        )
        .filter_map(|i| Some((i.result_id?, i.result_type?)))
        .collect()
}
