//! `__local` aggregates read as words made arrays of words (a SPIR-V pass, on every device).
//!
//! pyopencl's scan reads its `__local` array of packed structs through an `int *`
//! (`(__local int *) &ldata[i][j].value` and then `src[r]`), which clspv writes as an
//! `OpPtrAccessChain` from the address of the first struct's first word, a step of words past
//! the end of that struct and into the next ones. SPIR-V leaves the layout of Workgroup memory
//! to the implementation and `OpPtrAccessChain` there needs `VariablePointers`; NVIDIA's Vulkan
//! driver (580.x on the H200) reads it wrongly (pyopencl's radix sort came out zeros, its scan
//! of structs wrong from the first level: tools/diag/sort_trace.py).
//!
//! So each Workgroup variable that such a pointer chain reaches, when its type is made of
//! arrays and structs of one 32-bit scalar type, becomes one array of that scalar, as many as
//! its words, laid out as clspv lays it (each member after the one before, no padding between
//! 32-bit words), and every chain into it (access chains, pointer access chains, chains of
//! them) becomes one access chain at the word's index. A variable with another use of its
//! pointers (a select, a phi, a call, a whole-struct load) is left as it is. Where the module
//! then has no variable pointers left, `VariablePointers` goes
//! (`pointer_selects::drop_variable_pointers`). Indices may be 32-bit or, in physical-
//! addressing modules, 64-bit (`size_t`): the word index is computed in 32 bits.

use std::collections::{HashMap, HashSet};

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

use super::spirv::UintBuilder;

/// `spirv` with the Workgroup variables it reads through pointer access chains made arrays of
/// words; `None` when there are none (or none this pass can change).
pub fn flatten(spirv: &[u32]) -> Option<Vec<u32>> {
    const OP_PTR_ACCESS_CHAIN: u32 = 67;
    const OP_IN_BOUNDS_PTR_ACCESS_CHAIN: u32 = 70;
    let any = super::spirv::instructions(spirv).any(|(_, i)| {
        matches!(
            i[0] & 0xffff,
            OP_PTR_ACCESS_CHAIN | OP_IN_BOUNDS_PTR_ACCESS_CHAIN
        )
    });
    if !any {
        return None;
    }
    let (mut m, end) = super::spirv::load_functions(spirv)?;
    let mut b = UintBuilder::of(&m, m.header.as_ref()?.bound)?;
    let types = Types::of(&m);
    let vars: Vec<(Word, Word)> = m
        .types_global_values
        .iter()
        .filter(|v| {
            v.class.opcode == Op::Variable
                && v.operands.first() == Some(&Operand::StorageClass(StorageClass::Workgroup))
        })
        .filter_map(|v| Some((v.result_id?, *types.pointees.get(&v.result_type?)?)))
        .collect();
    let mut changed = false;
    for (var, pointee) in vars {
        let Some((scalar, words)) = types.words_of(pointee) else {
            continue;
        };
        let Some(plan) = plan(&m, &types, var, pointee, scalar) else {
            continue;
        };
        rewrite(&mut m, &mut b, &types, var, scalar, words, &plan)?;
        changed = true;
    }
    if !changed {
        return None;
    }
    super::pointer_selects::drop_variable_pointers(&mut m);
    m.header.as_mut()?.bound = b.next_id;
    let mut out = m.assemble();
    out.extend_from_slice(&spirv[end..]);
    Some(out)
}

/// Where a pointer into the variable points: the word index `Σ terms[k].0 × terms[k].1 +
/// offset`, at a value of type `ty`.
#[derive(Clone)]
struct Place {
    terms: Vec<(Word, u32)>,
    offset: u32,
    ty: Word,
}

/// The chains into `var` (by result id: where each points), when every pointer into it is only
/// chained further, loaded, stored to or used atomically at a word, and at least one chain is a
/// pointer access chain; `None` otherwise.
fn plan(
    m: &dr::Module,
    types: &Types,
    var: Word,
    pointee: Word,
    scalar: Word,
) -> Option<HashMap<Word, Place>> {
    let mut places: HashMap<Word, Place> = HashMap::new();
    let start = Place {
        terms: vec![],
        offset: 0,
        ty: pointee,
    };
    let mut pointer_chains = 0;
    let functions = m.functions.iter();
    for i in functions.flat_map(|f| f.blocks.iter().flat_map(|b| &b.instructions)) {
        let place_of = |id: &Word| {
            if *id == var {
                Some(&start)
            } else {
                places.get(id)
            }
        };
        let tracked = |o: &Operand| matches!(o, Operand::IdRef(id) if place_of(id).is_some());
        if !i.operands.iter().any(tracked) {
            continue;
        }
        let Some(Operand::IdRef(first)) = i.operands.first() else {
            return None;
        };
        let rest = &i.operands[1..];
        if rest.iter().any(tracked) {
            return None;
        }
        let base = place_of(first)?;
        match i.class.opcode {
            Op::AccessChain | Op::InBoundsAccessChain => {
                let place = types.step(base.clone(), rest, false)?;
                places.insert(i.result_id?, place);
            }
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                let place = types.step(base.clone(), rest, true)?;
                places.insert(i.result_id?, place);
                pointer_chains += 1;
            }
            Op::Load | Op::Store => {
                if base.ty != scalar {
                    return None;
                }
            }
            op if ATOMICS.contains(&op) => {
                if base.ty != scalar {
                    return None;
                }
            }
            _ => return None,
        }
    }
    (pointer_chains > 0).then_some(places)
}

/// The atomic instructions whose first operand is the pointer.
const ATOMICS: [Op; 14] = [
    Op::AtomicLoad,
    Op::AtomicStore,
    Op::AtomicExchange,
    Op::AtomicCompareExchange,
    Op::AtomicIIncrement,
    Op::AtomicIDecrement,
    Op::AtomicIAdd,
    Op::AtomicISub,
    Op::AtomicSMin,
    Op::AtomicUMin,
    Op::AtomicSMax,
    Op::AtomicUMax,
    Op::AtomicAnd,
    Op::AtomicOr,
];

/// Gives `var` the type of `words` values of `scalar` and turns each chain of `plan` that
/// reaches a word into one access chain at its index; the others (which only lead to those)
/// are dropped.
fn rewrite(
    m: &mut dr::Module,
    b: &mut UintBuilder,
    types: &Types,
    var: Word,
    scalar: Word,
    words: u32,
    plan: &HashMap<Word, Place>,
) -> Option<()> {
    let pointer = b.workgroup_array(scalar, words);
    let mut dropped = HashSet::new();
    for block in m.functions.iter_mut().flat_map(|f| &mut f.blocks) {
        let mut out = Vec::with_capacity(block.instructions.len());
        for i in std::mem::take(&mut block.instructions) {
            let Some(place) = i.result_id.and_then(|id| plan.get(&id)) else {
                out.push(i);
                continue;
            };
            if place.ty != scalar {
                dropped.extend(i.result_id);
                continue;
            }
            let (ids, strides): (Vec<Word>, Vec<u32>) = place.terms.iter().copied().unzip();
            let ids: Vec<Word> = ids
                .into_iter()
                .map(|id| b.narrow(id, types.of_value.get(&id).copied(), &mut out))
                .collect();
            let mut index = b.linear(&ids, &strides, &mut out);
            if place.offset != 0 {
                let offset = b.constant(place.offset);
                index = b.op(Op::IAdd, index, offset, &mut out);
            }
            let operands = vec![Operand::IdRef(var), Operand::IdRef(index)];
            out.push(Instruction::new(
                Op::AccessChain,
                i.result_type,
                i.result_id,
                operands,
            ));
        }
        block.instructions = out;
    }
    // Names and decorations of the dropped chains go with them.
    let named = |i: &Instruction| match i.operands.first() {
        Some(Operand::IdRef(id)) => !dropped.contains(id),
        _ => true,
    };
    m.debug_names.retain(named);
    m.annotations.retain(named);
    // The new types and constants go before the variable (operands are declared before use).
    let at = m
        .types_global_values
        .iter()
        .position(|i| i.result_id == Some(var))?;
    m.types_global_values[at].result_type = Some(pointer);
    let globals = std::mem::take(&mut b.globals);
    m.types_global_values.splice(at..at, globals);
    Some(())
}

/// The module's types and 32-bit constants.
#[derive(Default)]
struct Types {
    pointees: HashMap<Word, Word>,
    /// Arrays of constant length: (element, length).
    arrays: HashMap<Word, (Word, u32)>,
    structs: HashMap<Word, Vec<Word>>,
    /// The 32-bit integer and float types.
    scalars: HashSet<Word>,
    /// The 32-bit unsigned integer type, the one of indices in logical modules.
    uint: Option<Word>,
    /// The 64-bit integer types, those of indices in physical-addressing modules (`size_t`).
    wide: HashSet<Word>,
    of_value: HashMap<Word, Word>,
    constants: HashMap<Word, u32>,
}

impl Types {
    fn of(m: &dr::Module) -> Types {
        let mut t = Types::default();
        let id = |o: Option<&Operand>| match o {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        };
        for i in &m.types_global_values {
            let Some(result) = i.result_id else { continue };
            if let Some(ty) = i.result_type {
                t.of_value.insert(result, ty);
            }
            match (i.class.opcode, i.operands.as_slice()) {
                (Op::TypePointer, _) => {
                    t.pointees
                        .extend(id(i.operands.get(1)).map(|p| (result, p)));
                }
                (Op::TypeInt, [Operand::LiteralBit32(32), Operand::LiteralBit32(sign)]) => {
                    t.scalars.insert(result);
                    if *sign == 0 {
                        t.uint = Some(result);
                    }
                }
                (Op::TypeInt, [Operand::LiteralBit32(64), _]) => {
                    t.wide.insert(result);
                }
                (Op::TypeFloat, [Operand::LiteralBit32(32), ..]) => {
                    t.scalars.insert(result);
                }
                (Op::TypeArray, [Operand::IdRef(e), Operand::IdRef(len)]) => {
                    if let Some(&n) = t.constants.get(len) {
                        t.arrays.insert(result, (*e, n));
                    }
                }
                (Op::TypeStruct, members) => {
                    let members: Option<Vec<Word>> = members.iter().map(|o| id(Some(o))).collect();
                    t.structs.extend(members.map(|ms| (result, ms)));
                }
                (Op::Constant, [Operand::LiteralBit32(v)]) => {
                    t.constants.insert(result, *v);
                }
                // A 64-bit index's low word: the rewritten chains compute in 32 bits.
                (Op::Constant, [Operand::LiteralBit64(v)]) => {
                    t.constants.insert(result, *v as u32);
                }
                _ => {}
            }
        }
        let values = m
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter().flat_map(|b| &b.instructions));
        for i in values {
            if let (Some(result), Some(ty)) = (i.result_id, i.result_type) {
                t.of_value.insert(result, ty);
            }
        }
        t
    }

    /// `ty`'s scalar type and its number of words, when it is made of arrays and structs of
    /// one 32-bit scalar type.
    fn words_of(&self, ty: Word) -> Option<(Word, u32)> {
        if self.scalars.contains(&ty) {
            return Some((ty, 1));
        }
        if let Some(&(e, n)) = self.arrays.get(&ty) {
            let (scalar, words) = self.words_of(e)?;
            return Some((scalar, words.checked_mul(n)?));
        }
        let mut found: Option<(Word, u32)> = None;
        for &member in self.structs.get(&ty)? {
            let (scalar, words) = self.words_of(member)?;
            found = match found {
                Some((s, _)) if s != scalar => return None,
                Some((_, w)) => Some((scalar, w.checked_add(words)?)),
                None => Some((scalar, words)),
            };
        }
        found
    }

    /// `place` moved by the indices of a chain (the first one an element step of the pointee,
    /// for a pointer access chain).
    fn step(&self, mut place: Place, indices: &[Operand], element: bool) -> Option<Place> {
        for (k, index) in indices.iter().enumerate() {
            let Operand::IdRef(index) = index else {
                return None;
            };
            let ty = self.of_value.get(index);
            if ty != self.uint.as_ref() && !ty.is_some_and(|t| self.wide.contains(t)) {
                return None;
            }
            let (stride, next) = if element && k == 0 {
                (self.words_of(place.ty)?.1, place.ty)
            } else if let Some(&(e, _)) = self.arrays.get(&place.ty) {
                (self.words_of(e)?.1, e)
            } else {
                let members = self.structs.get(&place.ty)?;
                let n = *self.constants.get(index)? as usize;
                let before = members[..n.min(members.len())].iter();
                let skipped = before
                    .map(|&m| Some(self.words_of(m)?.1))
                    .sum::<Option<u32>>()?;
                place.offset = place.offset.wrapping_add(skipped);
                place.ty = *members.get(n)?;
                continue;
            };
            match self.constants.get(index) {
                Some(&v) => place.offset = place.offset.wrapping_add(v.wrapping_mul(stride)),
                None => place.terms.push((*index, stride)),
            }
            place.ty = next;
        }
        Some(place)
    }
}
