//! Selects of pointers made selects of indices, and `VariablePointers` dropped where nothing
//! else needs it (a SPIR-V pass, on every device).
//!
//! clspv writes `s = l[0][i]; if (c) s = l[k][i];` as an `OpSelect` of two Workgroup pointers,
//! which needs the `VariablePointers` capability; NVIDIA's Vulkan driver (580.x on the H200)
//! runs Workgroup memory wrongly in modules that declare it. Measured there with
//! tools/diag/scan_variants.c and hand-edited modules (`VKCL_REPLACE_DIR`, docs/GPU.md): the
//! same module with the row index selected instead and the capability removed is right; index
//! selects with the capability kept are wrong, as is the pointer select; flattening the array
//! (compiler::workgroup_arrays) fixed one kernel but left pyopencl's second scan level wrong
//! (its first element lost). NVIDIA's own OpenCL runs every shape right.
//!
//! So each `OpSelect` of two access chains from the same base with the same number of indices
//! becomes one access chain at selected indices (the indices that differ selected, struct
//! member indices required equal), chains of such selects included. When the module then has
//! no variable pointer left (no pointer selects or phis, pointer access chains, pointer
//! parameters, pointer comparisons, stored or loaded pointers, null pointers), its
//! `VariablePointers` and `VariablePointersStorageBuffer` capabilities are removed.
//! PhysicalStorageBuffer pointers (physical-addressing modules) do not count: they are
//! addresses, and need no `VariablePointers` whatever is done with them.

use std::collections::{HashMap, HashSet};

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Capability, Op, StorageClass, Word};

use super::spirv::instructions;

const OP_CAPABILITY: u32 = 17;
const VARIABLE_POINTERS: u32 = 4442;
const VARIABLE_POINTERS_STORAGE_BUFFER: u32 = 4441;

/// `spirv` with its pointer selects made index selects and, where nothing else needs it,
/// without `VariablePointers`; `None` when that changes nothing.
pub fn to_indices(spirv: &[u32]) -> Option<Vec<u32>> {
    let variable = instructions(spirv).any(|(_, i)| {
        i[0] & 0xffff == OP_CAPABILITY
            && matches!(
                i.get(1),
                Some(&(VARIABLE_POINTERS | VARIABLE_POINTERS_STORAGE_BUFFER))
            )
    });
    if !variable {
        return None;
    }
    let (mut m, end) = super::spirv::load_functions(spirv)?;
    let mut next_id = m.header.as_ref()?.bound;
    let mut types = Types::of(&m);
    let mut selects = 0;
    for f in &mut m.functions {
        // Access chains by result: (base, indices).
        let mut chains: HashMap<Word, (Word, Vec<Word>)> = HashMap::new();
        for b in &mut f.blocks {
            let mut out = Vec::with_capacity(b.instructions.len());
            for mut i in std::mem::take(&mut b.instructions) {
                match i.class.opcode {
                    Op::AccessChain | Op::InBoundsAccessChain => {
                        if let (Some(id), Some((base, indices))) = (i.result_id, ids(&i.operands)) {
                            chains.insert(id, (base, indices.to_vec()));
                        }
                    }
                    Op::Select if types.is_pointer(i.result_type) => {
                        let made = ids(&i.operands)
                            .filter(|(_, rest)| rest.len() == 2)
                            .and_then(|(cond, rest)| {
                                let a = chains.get(&rest[0])?;
                                let b = chains.get(&rest[1])?;
                                types.select_indices(cond, a, b, &mut next_id, &mut out)
                            });
                        if let (Some((base, indices)), Some(id)) = (made, i.result_id) {
                            let mut operands = vec![Operand::IdRef(base)];
                            operands.extend(indices.iter().map(|&x| Operand::IdRef(x)));
                            i = Instruction::new(
                                Op::AccessChain,
                                i.result_type,
                                Some(id),
                                operands,
                            );
                            chains.insert(id, (base, indices));
                            selects += 1;
                        }
                    }
                    _ => {}
                }
                out.push(i);
            }
            b.instructions = out;
        }
    }
    if !drop_variable_pointers(&mut m) && selects == 0 {
        return None;
    }
    m.header.as_mut()?.bound = next_id;
    let mut out = m.assemble();
    out.extend_from_slice(&spirv[end..]);
    Some(out)
}

/// Removes `VariablePointers` and `VariablePointersStorageBuffer` from `m` where no
/// instruction needs them; whether it removed one.
pub fn drop_variable_pointers(m: &mut dr::Module) -> bool {
    let before = m.capabilities.len();
    if !needs_variable_pointers(m, &Types::of(m)) {
        m.capabilities.retain(|c| {
            !matches!(
                c.operands.first(),
                Some(Operand::Capability(
                    Capability::VariablePointers | Capability::VariablePointersStorageBuffer
                ))
            )
        });
    }
    m.capabilities.len() != before
}

/// Operands that are all ids: (the first, the rest).
fn ids(operands: &[Operand]) -> Option<(Word, Vec<Word>)> {
    let all: Option<Vec<Word>> = operands
        .iter()
        .map(|o| match o {
            Operand::IdRef(id) => Some(*id),
            _ => None,
        })
        .collect();
    let all = all?;
    Some((*all.first()?, all[1..].to_vec()))
}

/// Whether an instruction still makes a pointer variable: selects and phis of pointers,
/// pointer access chains, pointers as function parameters or compared, stored, loaded or null.
fn needs_variable_pointers(m: &dr::Module, types: &Types) -> bool {
    let null_pointer = m
        .types_global_values
        .iter()
        .any(|i| i.class.opcode == Op::ConstantNull && types.is_logical_pointer(i.result_type));
    null_pointer
        || m.functions.iter().any(|f| {
            f.def
                .as_ref()
                .is_some_and(|d| types.is_logical_pointer(d.result_type))
                || f.parameters
                    .iter()
                    .any(|p| types.is_logical_pointer(p.result_type))
                || f.blocks
                    .iter()
                    .flat_map(|b| &b.instructions)
                    .any(|i| match i.class.opcode {
                        Op::Select | Op::Phi | Op::Load | Op::CopyObject => {
                            types.is_logical_pointer(i.result_type)
                        }
                        Op::Store => match i.operands.get(1) {
                            Some(Operand::IdRef(v)) => {
                                types.is_logical_pointer(types.of_value.get(v).copied())
                            }
                            _ => true,
                        },
                        Op::PtrAccessChain
                        | Op::InBoundsPtrAccessChain
                        | Op::PtrEqual
                        | Op::PtrNotEqual
                        | Op::PtrDiff => !types.is_physical_operand(i.operands.first()),
                        _ => false,
                    })
        })
}

/// The module's types: pointers (to their pointee), composite element types, and the type of
/// each value.
#[derive(Default)]
struct Types {
    pointees: HashMap<Word, Word>,
    /// The PhysicalStorageBuffer pointer types (physical-addressing modules): their pointers
    /// are addresses, which need no `VariablePointers` whatever is done with them.
    physical: HashSet<Word>,
    /// Struct types (indices into them must be equal constants).
    structs: Vec<Word>,
    /// Array, runtime array, vector and matrix types to their element.
    elements: HashMap<Word, Word>,
    /// Struct types to their members' types.
    members: HashMap<Word, Vec<Word>>,
    of_value: HashMap<Word, Word>,
    constants: HashMap<Word, u32>,
}

impl Types {
    fn of(m: &dr::Module) -> Types {
        let mut t = Types::default();
        let id_at = |i: &Instruction, n: usize| match i.operands.get(n) {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        };
        for i in &m.types_global_values {
            let Some(id) = i.result_id else { continue };
            match i.class.opcode {
                Op::TypePointer => {
                    if let Some(p) = id_at(i, 1) {
                        t.pointees.insert(id, p);
                    }
                    if i.operands.first()
                        == Some(&Operand::StorageClass(StorageClass::PhysicalStorageBuffer))
                    {
                        t.physical.insert(id);
                    }
                }
                Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector | Op::TypeMatrix => {
                    if let Some(e) = id_at(i, 0) {
                        t.elements.insert(id, e);
                    }
                }
                Op::TypeStruct => {
                    t.structs.push(id);
                    let members = (0..i.operands.len()).filter_map(|n| id_at(i, n)).collect();
                    t.members.insert(id, members);
                }
                Op::Constant => {
                    if let Some(Operand::LiteralBit32(v)) = i.operands.first() {
                        t.constants.insert(id, *v);
                    }
                }
                _ => {}
            }
        }
        let values = m
            .types_global_values
            .iter()
            .chain(m.functions.iter().flat_map(|f| {
                f.parameters
                    .iter()
                    .chain(f.blocks.iter().flat_map(|b| &b.instructions))
            }));
        for i in values {
            if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
                t.of_value.insert(id, ty);
            }
        }
        t
    }

    fn is_pointer(&self, ty: Option<Word>) -> bool {
        ty.is_some_and(|t| self.pointees.contains_key(&t))
    }

    /// Whether `o` is a value of a PhysicalStorageBuffer pointer type.
    fn is_physical_operand(&self, o: Option<&Operand>) -> bool {
        match o {
            Some(Operand::IdRef(v)) => self
                .of_value
                .get(v)
                .is_some_and(|t| self.physical.contains(t)),
            _ => false,
        }
    }

    /// Whether `ty` is a pointer type other than a PhysicalStorageBuffer one: a logical
    /// pointer, which is variable where it is selected, stored, passed or chained by element.
    fn is_logical_pointer(&self, ty: Option<Word>) -> bool {
        self.is_pointer(ty) && !ty.is_some_and(|t| self.physical.contains(&t))
    }

    /// The chain `cond ? a : b` as (base, indices), the selects of the indices that differ
    /// appended to `out`; `None` where the bases differ, the lengths or the types of indices
    /// differ, or a struct member index differs.
    fn select_indices(
        &mut self,
        cond: Word,
        a: &(Word, Vec<Word>),
        b: &(Word, Vec<Word>),
        next_id: &mut Word,
        out: &mut Vec<Instruction>,
    ) -> Option<(Word, Vec<Word>)> {
        if a.0 != b.0 || a.1.len() != b.1.len() {
            return None;
        }
        // The type each index indexes into, from the base's pointee down.
        let mut ty = *self.pointees.get(self.of_value.get(&a.0)?)?;
        let mut plan = vec![];
        for (&x, &y) in a.1.iter().zip(&b.1) {
            let in_struct = self.structs.contains(&ty);
            if in_struct {
                if x != y {
                    return None;
                }
                let k = *self.constants.get(&x)? as usize;
                ty = *self.members.get(&ty)?.get(k)?;
            } else {
                ty = *self.elements.get(&ty)?;
            }
            let same_type = self
                .of_value
                .get(&x)
                .is_some_and(|t| self.of_value.get(&y) == Some(t));
            if x != y && !same_type {
                return None;
            }
            plan.push((x, y));
        }
        let indices = plan
            .into_iter()
            .map(|(x, y)| {
                if x == y {
                    return x;
                }
                let id = *next_id;
                *next_id += 1;
                let ty = self.of_value.get(&x).copied();
                let operands = vec![Operand::IdRef(cond), Operand::IdRef(x), Operand::IdRef(y)];
                out.push(Instruction::new(Op::Select, ty, Some(id), operands));
                if let Some(ty) = ty {
                    self.of_value.insert(id, ty);
                }
                id
            })
            .collect();
        Some((a.0, indices))
    }
}
