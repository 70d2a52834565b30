//! Narrow elements of a `__local` struct read at a run-time index, rebuilt from all of the
//! struct's members (a SPIR-V pass).
//!
//! clspv 0.0.1 lowers a `uchar` (or `ushort`) read at a run-time index into a `__local` struct,
//! `((__local uchar *)&ld[i][j].v)[r]` of a packed `struct { ulong v; int d; }`, as a load of
//! the struct's first member, a vector of its first 4 elements (`OpCompositeConstruct` or
//! `OpCompositeInsert` of `OpUConvert (OpShiftRightLogical %v k)`) and an
//! `OpVectorExtractDynamic` at the element's index within the whole struct (0..11 for bytes):
//! a vector holds at most 4 components, so bytes 4..11 read out of range (0 on lavapipe; every
//! byte view of the member read byte 0..3 only, tests/word_views.rs). Each such extract whose
//! vector's components are, in order, the struct's first elements (checked against the
//! members' widths), where the struct has more elements than the vector and is made of
//! integers only, becomes a select over all the struct's elements: each member loaded through
//! the chain's indices with the member's, shifted and converted, chosen by `index == k`. The
//! load clspv made must be in the extract's block with no write, barrier or call between, so
//! the members' loads read what it read. Indices 0..3 still give the components they gave;
//! only the ones past the vector, undefined before, change. Only Workgroup structs (whose
//! layout is the members one after the other, as clspv indexes them); nothing else is touched.
//! The index is 32-bit in logical modules and 64-bit (`size_t`) in physical-addressing ones;
//! the comparisons use constants of its type.

use std::collections::HashMap;

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

use super::spirv::UintBuilder;

/// `spirv` with those extracts made selects over the whole struct; `None` when there is none.
pub fn repair(spirv: &[u32]) -> Option<Vec<u32>> {
    const OP_VECTOR_EXTRACT_DYNAMIC: u32 = 77;
    if !super::spirv::instructions(spirv).any(|(_, i)| i[0] & 0xffff == OP_VECTOR_EXTRACT_DYNAMIC) {
        return None;
    }
    let (mut m, end) = super::spirv::load_functions(spirv)?;
    let mut b = UintBuilder::of(&m, m.header.as_ref()?.bound)?;
    let mut t = Types::of(&m)?;
    let mut changed = false;
    for f in &mut m.functions {
        let defs: HashMap<Word, Instruction> = f
            .parameters
            .iter()
            .chain(f.blocks.iter().flat_map(|b| &b.instructions))
            .filter_map(|i| Some((i.result_id?, i.clone())))
            .collect();
        for block in &mut f.blocks {
            let mut out = Vec::with_capacity(block.instructions.len());
            // Loads of this block by result id (their place in `out`), and the place of the
            // last instruction that may write memory.
            let mut loads: HashMap<Word, usize> = HashMap::new();
            let mut last_write: Option<usize> = None;
            for i in std::mem::take(&mut block.instructions) {
                let op = i.class.opcode;
                if op == Op::VectorExtractDynamic {
                    let fresh = |ld: &Word| loads.get(ld).is_some_and(|&at| last_write < Some(at));
                    if let Some(new) = rebuild(&i, &defs, &fresh, &mut t, &mut b) {
                        out.extend(new);
                        changed = true;
                        continue;
                    }
                }
                if op == Op::Load {
                    loads.extend(i.result_id.map(|id| (id, out.len())));
                } else if writes(op) {
                    last_write = Some(out.len());
                }
                out.push(i);
            }
            block.instructions = out;
        }
    }
    if !changed {
        return None;
    }
    // New constants after the types, before the first variable.
    let at = m
        .types_global_values
        .iter()
        .position(|i| i.class.opcode == Op::Variable)
        .unwrap_or(m.types_global_values.len());
    let globals = std::mem::take(&mut b.globals);
    m.types_global_values.splice(at..at, globals);
    m.header.as_mut()?.bound = b.next_id;
    let mut out = m.assemble();
    out.extend_from_slice(&spirv[end..]);
    Some(out)
}

/// Whether an instruction may write memory or order it (the members are loaded after it).
fn writes(op: Op) -> bool {
    matches!(
        op,
        Op::Store
            | Op::CopyMemory
            | Op::CopyMemorySized
            | Op::FunctionCall
            | Op::ControlBarrier
            | Op::MemoryBarrier
    ) || format!("{op:?}").starts_with("Atomic")
}

/// The module's types and integer constants.
struct Types {
    /// Integer types: width in bits.
    ints: HashMap<Word, u32>,
    /// Unsigned integer types by width.
    uints: HashMap<u32, Word>,
    floats: HashMap<Word, u32>,
    vectors: HashMap<Word, (Word, u32)>,
    arrays: HashMap<Word, Word>,
    structs: HashMap<Word, Vec<Word>>,
    /// Pointer types: (storage class, pointee).
    pointers: HashMap<Word, (StorageClass, Word)>,
    /// Integer constants: (type, value).
    constants: HashMap<Word, (Word, u64)>,
    /// The module's type of each value defined outside functions and of each parameter.
    of_value: HashMap<Word, Word>,
    bool_type: Word,
}

impl Types {
    fn of(m: &dr::Module) -> Option<Types> {
        let mut t = Types {
            ints: HashMap::new(),
            uints: HashMap::new(),
            floats: HashMap::new(),
            vectors: HashMap::new(),
            arrays: HashMap::new(),
            structs: HashMap::new(),
            pointers: HashMap::new(),
            constants: HashMap::new(),
            of_value: HashMap::new(),
            bool_type: 0,
        };
        for i in &m.types_global_values {
            let Some(id) = i.result_id else { continue };
            if let Some(ty) = i.result_type {
                t.of_value.insert(id, ty);
            }
            match (i.class.opcode, i.operands.as_slice()) {
                (Op::TypeBool, _) => t.bool_type = id,
                (Op::TypeInt, [Operand::LiteralBit32(w), Operand::LiteralBit32(sign)]) => {
                    t.ints.insert(id, *w);
                    if *sign == 0 {
                        t.uints.entry(*w).or_insert(id);
                    }
                }
                (Op::TypeFloat, [Operand::LiteralBit32(w), ..]) => {
                    t.floats.insert(id, *w);
                }
                (Op::TypeVector, [Operand::IdRef(e), Operand::LiteralBit32(n)]) => {
                    t.vectors.insert(id, (*e, *n));
                }
                (Op::TypeArray, [Operand::IdRef(e), _]) => {
                    t.arrays.insert(id, *e);
                }
                (Op::TypeStruct, members) => {
                    let ms: Option<Vec<Word>> = members
                        .iter()
                        .map(|o| match o {
                            Operand::IdRef(id) => Some(*id),
                            _ => None,
                        })
                        .collect();
                    t.structs.extend(ms.map(|ms| (id, ms)));
                }
                (Op::TypePointer, [Operand::StorageClass(c), Operand::IdRef(p)]) => {
                    t.pointers.insert(id, (*c, *p));
                }
                (Op::Constant, [Operand::LiteralBit32(v)]) => {
                    t.constants
                        .extend(i.result_type.map(|ty| (id, (ty, *v as u64))));
                }
                (Op::Constant, [Operand::LiteralBit64(v)]) => {
                    t.constants.extend(i.result_type.map(|ty| (id, (ty, *v))));
                }
                _ => {}
            }
        }
        (t.bool_type != 0).then_some(t)
    }

    /// The id of integer constant `v` of type `ty`, made (into `b.globals`) if the module has
    /// none.
    fn constant(&mut self, b: &mut UintBuilder, ty: Word, v: u64) -> Word {
        if let Some((&id, _)) = self.constants.iter().find(|(_, &c)| c == (ty, v)) {
            return id;
        }
        let id = b.fresh();
        let value = match self.ints.get(&ty) {
            Some(64) => Operand::LiteralBit64(v),
            _ => Operand::LiteralBit32(v as u32),
        };
        b.globals.push(Instruction::new(
            Op::Constant,
            Some(ty),
            Some(id),
            vec![value],
        ));
        self.constants.insert(id, (ty, v));
        id
    }

    /// The unsigned integer type of `width` bits.
    fn uint_of(&self, width: u32) -> Option<Word> {
        self.uints.get(&width).copied()
    }

    /// A pointer type of class `c` to `pointee`.
    fn pointer(&self, c: StorageClass, pointee: Word) -> Option<Word> {
        self.pointers
            .iter()
            .find(|(_, &p)| p == (c, pointee))
            .map(|(&id, _)| id)
    }
}

fn id_of(o: &Operand) -> Option<Word> {
    match o {
        Operand::IdRef(id) => Some(*id),
        _ => None,
    }
}

/// The instructions that replace extract `x`, when it is the shape described above.
fn rebuild(
    x: &Instruction,
    defs: &HashMap<Word, Instruction>,
    fresh: &dyn Fn(&Word) -> bool,
    t: &mut Types,
    b: &mut UintBuilder,
) -> Option<Vec<Instruction>> {
    let (elem, result) = (x.result_type?, x.result_id?);
    let [vector, index] = x.operands.as_slice() else {
        return None;
    };
    let (vector, index) = (id_of(vector)?, id_of(index)?);
    let w = *t.ints.get(&elem)?;
    let vector_def = defs.get(&vector)?;
    let (_, count) = *t.vectors.get(&vector_def.result_type?)?;
    // The vector's components.
    let comps: Vec<Word> = match vector_def.class.opcode {
        Op::CompositeConstruct => vector_def
            .operands
            .iter()
            .map(id_of)
            .collect::<Option<_>>()?,
        Op::CompositeInsert => {
            let mut comps = vec![None; count as usize];
            let mut at = vector_def;
            while at.class.opcode == Op::CompositeInsert {
                let [Operand::IdRef(object), Operand::IdRef(composite), Operand::LiteralBit32(k)] =
                    at.operands.as_slice()
                else {
                    return None;
                };
                let slot = comps.get_mut(*k as usize)?;
                slot.get_or_insert(*object);
                match defs.get(composite) {
                    Some(d) => at = d,
                    None => break,
                }
            }
            comps.into_iter().collect::<Option<_>>()?
        }
        _ => return None,
    };
    if comps.len() != count as usize {
        return None;
    }
    let parts: Vec<Part> = comps
        .into_iter()
        .map(|c| part(c, defs, t))
        .collect::<Option<_>>()?;
    let (base, prefix) = (parts[0].base, parts[0].prefix.clone());
    let (class, mut ty) = *t.pointers.get(t.of_value.get(&base)?)?;
    if class != StorageClass::Workgroup {
        return None;
    }
    for index in &prefix {
        ty = match t.arrays.get(&ty) {
            Some(&e) => e,
            None => *t
                .structs
                .get(&ty)?
                .get(t.constants.get(index)?.1 as usize)?,
        };
    }
    let (strukt, members) = (ty, t.structs.get(&ty)?.clone());
    // Each member's width, and the unsigned integer type of its bits.
    let widths: Vec<(u32, Word)> = members
        .iter()
        .map(|m| {
            let mw = t.ints.get(m).or(t.floats.get(m)).copied()?;
            (mw >= w && mw % w == 0).then_some((mw, t.uint_of(mw)?))
        })
        .collect::<Option<_>>()?;
    let bits: u32 = widths.iter().map(|&(mw, _)| mw).sum();
    let total = bits / w;
    if total <= count || bits % w != 0 {
        return None;
    }
    // Element k: (member, shift within it).
    let element = |k: u32| -> (usize, u64) {
        let mut off = 0;
        for (m, &(mw, _)) in widths.iter().enumerate() {
            if k * w < off + mw {
                return (m, (k * w - off) as u64);
            }
            off += mw;
        }
        unreachable!("element {k} within the struct's {total}")
    };
    // The components must be the struct's first elements, read by loads this block made after
    // its last write.
    for (k, p) in parts.iter().enumerate() {
        if p.base != base
            || p.prefix != prefix
            || (p.member, p.shift) != element(k as u32)
            || !fresh(&p.load)
        {
            return None;
        }
    }
    // A 32-bit index in logical modules, a 64-bit one in physical-addressing modules (where
    // clspv computes the byte offset as a `size_t`).
    let index_type = defs.get(&index).and_then(|d| d.result_type);
    let index_type = index_type.or_else(|| t.of_value.get(&index).copied())?;
    if !t.ints.contains_key(&index_type) {
        return None;
    }
    let mut out = vec![];
    let new = |op: Op, ty: Word, id: Word, ops: Vec<Word>| {
        Instruction::new(
            op,
            Some(ty),
            Some(id),
            ops.into_iter().map(Operand::IdRef).collect(),
        )
    };
    let mut chain = vec![base];
    chain.extend(&prefix);
    // Each member's bits: from one load of the struct where the module has the pointer type,
    // else from a load of each member.
    let mut loaded = vec![];
    let whole = t.pointer(class, strukt);
    let (chain_id, load_id) = (b.fresh(), b.fresh());
    if let Some(pointer) = whole {
        out.push(new(Op::AccessChain, pointer, chain_id, chain.clone()));
        out.push(new(Op::Load, strukt, load_id, vec![chain_id]));
    }
    for (m, &member) in members.iter().enumerate() {
        let value = match whole {
            Some(_) => {
                let id = b.fresh();
                let ops = vec![Operand::IdRef(load_id), Operand::LiteralBit32(m as u32)];
                out.push(Instruction::new(
                    Op::CompositeExtract,
                    Some(member),
                    Some(id),
                    ops,
                ));
                id
            }
            None => {
                let pointer = t.pointer(class, member)?;
                let mut ops = chain.clone();
                ops.push(b.constant(m as u32));
                let (c, l) = (b.fresh(), b.fresh());
                out.push(new(Op::AccessChain, pointer, c, ops));
                out.push(new(Op::Load, member, l, vec![c]));
                l
            }
        };
        let uint = widths[m].1;
        loaded.push(match uint == member {
            true => value,
            false => {
                let id = b.fresh();
                out.push(new(Op::Bitcast, uint, id, vec![value]));
                id
            }
        });
    }
    let mut acc = None;
    for k in 0..total {
        let (m, s) = element(k);
        let (mw, uint) = widths[m];
        let mut v = loaded[m];
        if s != 0 {
            let shift = t.constant(b, uint, s);
            let id = b.fresh();
            out.push(new(Op::ShiftRightLogical, uint, id, vec![v, shift]));
            v = id;
        }
        if mw != w || uint != elem {
            let id = b.fresh();
            let op = if mw != w { Op::UConvert } else { Op::Bitcast };
            out.push(new(op, elem, id, vec![v]));
            v = id;
        }
        acc = Some(match acc {
            None => v,
            Some(prev) => {
                let last = k + 1 == total;
                let k = match index_type == b.uint {
                    true => b.constant(k),
                    false => t.constant(b, index_type, k.into()),
                };
                let (cond, id) = (b.fresh(), if last { result } else { b.fresh() });
                out.push(new(Op::IEqual, t.bool_type, cond, vec![index, k]));
                out.push(new(Op::Select, elem, id, vec![cond, v, prev]));
                id
            }
        });
    }
    Some(out)
}

/// Where a component of clspv's vector comes from: element bits `shift..` of member `member`
/// of the struct at `base` indexed by `prefix`, read by load `load`.
struct Part {
    base: Word,
    prefix: Vec<Word>,
    member: usize,
    shift: u64,
    load: Word,
}

/// The [`Part`] component `c` reads: `OpUConvert` of `OpShiftRightLogical` by a constant (or
/// not shifted) of a member's value, itself a load of the member through an access chain or a
/// member of a load of the struct, through copies, bitcasts and one-element composites.
fn part(c: Word, defs: &HashMap<Word, Instruction>, t: &Types) -> Option<Part> {
    let mut v = c;
    let mut shift = 0;
    if let Some(d) = defs.get(&v).filter(|d| d.class.opcode == Op::UConvert) {
        v = id_of(d.operands.first()?)?;
        if let Some(sd) = defs
            .get(&v)
            .filter(|d| d.class.opcode == Op::ShiftRightLogical)
        {
            v = id_of(sd.operands.first()?)?;
            shift = t.constants.get(&id_of(sd.operands.get(1)?)?)?.1;
        }
    }
    // The chain of a load: (base, indices).
    let chain = |load: &Instruction| -> Option<(Word, Vec<Word>)> {
        let c = defs.get(&id_of(load.operands.first()?)?)?;
        if !matches!(c.class.opcode, Op::AccessChain | Op::InBoundsAccessChain) {
            return None;
        }
        let ids: Vec<Word> = c.operands.iter().map(id_of).collect::<Option<_>>()?;
        Some((ids[0], ids[1..].to_vec()))
    };
    loop {
        let d = defs.get(&v)?;
        match (d.class.opcode, d.operands.as_slice()) {
            (Op::CopyObject | Op::Bitcast, [Operand::IdRef(x)]) => v = *x,
            (Op::CompositeExtract, [Operand::IdRef(x), Operand::LiteralBit32(k)]) => {
                let xd = defs.get(x)?;
                match xd.class.opcode {
                    Op::CompositeConstruct => v = id_of(xd.operands.get(*k as usize)?)?,
                    Op::Load => {
                        let (base, prefix) = chain(xd)?;
                        let load = xd.result_id?;
                        let member = *k as usize;
                        return Some(Part {
                            base,
                            prefix,
                            member,
                            shift,
                            load,
                        });
                    }
                    _ => return None,
                }
            }
            (Op::Load, _) => {
                let (base, mut prefix) = chain(d)?;
                let member = t.constants.get(&prefix.pop()?)?.1 as usize;
                return Some(Part {
                    base,
                    prefix,
                    member,
                    shift,
                    load: v,
                });
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rspirv::spirv::{AddressingModel, Capability, FunctionControl, MemoryModel};

    /// clspv's shape: bytes 0..3 of member 0 of `struct { ulong; uint; }` in a Workgroup array
    /// gathered into a vector and extracted at a run-time byte index; with a store between the
    /// load and the extract where `store_between`; the index is a `ulong` where `wide` (as
    /// physical-addressing builds compute it).
    fn module(store_between: bool, wide: bool) -> Vec<u32> {
        let mut b = dr::Builder::new();
        b.capability(Capability::Shader);
        b.capability(Capability::Int64);
        b.capability(Capability::Int8);
        b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
        let void = b.type_void();
        // The pass compares indices: the module has a bool type.
        b.type_bool();
        let uint = b.type_int(32, 0);
        let ulong = b.type_int(64, 0);
        let uchar = b.type_int(8, 0);
        let v4 = b.type_vector(uchar, 4);
        let s = b.type_struct([ulong, uint]);
        let four = b.constant_bit32(uint, 4);
        let array = b.type_array(s, four);
        let p_array = b.type_pointer(None, StorageClass::Workgroup, array);
        let p_ulong = b.type_pointer(None, StorageClass::Workgroup, ulong);
        let _p_uint = b.type_pointer(None, StorageClass::Workgroup, uint);
        let zero = b.constant_bit32(uint, 0);
        let shifts: Vec<Word> = [8, 16, 24].map(|k| b.constant_bit64(ulong, k)).to_vec();
        let var = b.variable(p_array, None, StorageClass::Workgroup, None);
        let index_type = if wide { ulong } else { uint };
        let fn_type = b.type_function(void, [uint, index_type]);
        b.begin_function(void, None, FunctionControl::NONE, fn_type)
            .unwrap();
        let i = b.function_parameter(uint).unwrap();
        let index = b.function_parameter(index_type).unwrap();
        b.begin_block(None).unwrap();
        let chain = b.access_chain(p_ulong, None, var, [i, zero]).unwrap();
        let load = b.load(ulong, None, chain, None, []).unwrap();
        let mut comps = vec![b.u_convert(uchar, None, load).unwrap()];
        for &k in &shifts {
            let shifted = b.shift_right_logical(ulong, None, load, k).unwrap();
            comps.push(b.u_convert(uchar, None, shifted).unwrap());
        }
        if store_between {
            let other = b.constant_bit64(ulong, 1);
            b.store(chain, other, None, []).unwrap();
        }
        let vector = b.composite_construct(v4, None, comps).unwrap();
        b.vector_extract_dynamic(uchar, None, vector, index)
            .unwrap();
        b.ret().unwrap();
        b.end_function().unwrap();
        b.module().assemble()
    }

    #[test]
    fn extracts_past_the_vector_select_from_every_member() {
        for wide in [false, true] {
            let out = repair(&module(false, wide)).expect("repaired");
            let m = dr::load_words(&out).unwrap();
            let instructions = &m.functions[0].blocks[0].instructions;
            let ops: Vec<Op> = instructions.iter().map(|i| i.class.opcode).collect();
            // 12 bytes: 11 selects, none of the extract left.
            assert_eq!(ops.iter().filter(|&&o| o == Op::Select).count(), 11);
            assert!(!ops.contains(&Op::VectorExtractDynamic));
            // Each comparison's constant has the index's type.
            let index = m.functions[0].parameters[1].result_id.unwrap();
            let index_type = m.functions[0].parameters[1].result_type;
            let types: HashMap<Word, Option<Word>> = m
                .types_global_values
                .iter()
                .filter_map(|i| Some((i.result_id?, i.result_type)))
                .collect();
            for i in instructions.iter().filter(|i| i.class.opcode == Op::IEqual) {
                assert_eq!(i.operands[0], Operand::IdRef(index));
                let Operand::IdRef(k) = i.operands[1] else {
                    panic!()
                };
                assert_eq!(types[&k], index_type, "wide: {wide}");
            }
            assert_eq!(repair(&module(true, wide)), None);
        }
    }
}
