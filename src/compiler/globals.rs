//! Program-scope global variables (OpenCL C 2.0 `global` variables at program scope and
//! `static` locals) in one storage buffer per program and device.
//!
//! clspv 0.0.1 compiles each such variable to a module-scope `StorageBuffer` OpVariable of the
//! variable's own type, with the initializer, and no descriptor binding: Vulkan accepts none of
//! that (a storage buffer is a `Block` struct bound to a descriptor, without initializer). This
//! pass gathers the variables into one `Block` struct variable at a binding no kernel uses
//! (set 0, one past the highest binding of the module), replaces each use by an access chain
//! to its member at the top of each function, and records the initial bytes in a
//! `ProgramScopeVariablesStorageBuffer` reflection instruction (clspv's grammar has it, clspv
//! never emits it). The runtime makes one buffer of those bytes per program and device, bound
//! in every launch of the program's kernels, so values persist across launches and kernels.
//! Pointers stored in the variables (clspv's `ProgramScopeVariablePointerRelocation`) are not
//! handled: a module whose initializers hold pointers is left as it is.
//!
//! In physical addressing clspv makes them initialised `PhysicalStorageBuffer` variables
//! (equally invalid). They go into the same buffer, at the offsets a logical build gives them,
//! followed by a slot ([`address_slot`]) that the runtime fills with the buffer's own device
//! address; the bound block declares only that address, and each use becomes
//! `OpConvertUToPtr` of the address plus the variable's offset, of the variable's own pointer
//! type (every other instruction unchanged).

use std::collections::HashMap;

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::spirv::instructions;

/// `ProgramScopeVariablesStorageBuffer` in `NonSemantic.ClspvReflection`.
pub const REFLECTION_INSTRUCTION: u32 = 28;

/// Every member is placed at a multiple of this (std430's largest alignment but for
/// 64-bit 3- and 4-vectors, which get their own).
const MIN_ALIGN: u32 = 16;

/// The most bytes of program-scope variables in one program (CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE
/// and CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE; OpenCL's minimum for the former). The
/// initial bytes travel as hexadecimal in one OpString, whose instruction has at most 65535
/// words (some 131000 bytes of data): 64 KiB fits with room.
pub const MAX_TOTAL_SIZE: usize = 64 * 1024;

/// The build log's words when the variables take more than [`MAX_TOTAL_SIZE`] bytes.
pub const TOO_LARGE: &str = "program-scope variables too large";

/// `spirv` with its program-scope variables in one bound storage buffer (unchanged without
/// them, or when the pass does not understand the module). `Err` (a build log) when they
/// take more than [`MAX_TOTAL_SIZE`] bytes.
pub fn gather(spirv: &[u32]) -> Result<Vec<u32>, String> {
    if !has_unbound_buffer(spirv) {
        return Ok(spirv.to_vec());
    }
    match gather_checked(spirv) {
        Some(Err(size)) => Err(format!(
            "{TOO_LARGE}: {size} bytes, more than the {MAX_TOTAL_SIZE} bytes of \
             CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE"
        )),
        Some(Ok(out)) => Ok(out),
        None => Ok(spirv.to_vec()),
    }
}

/// Whether a module-scope storage-buffer variable has no descriptor set (a cheap look before
/// the module is loaded).
fn has_unbound_buffer(spirv: &[u32]) -> bool {
    const OP_DECORATE: u32 = 71;
    const OP_VARIABLE: u32 = 59;
    const OP_FUNCTION: u32 = 54;
    const DESCRIPTOR_SET: u32 = 34;
    const STORAGE_BUFFER: u32 = 12;
    const PHYSICAL_STORAGE_BUFFER: u32 = 5349;
    let mut bound = std::collections::HashSet::new();
    for (_, i) in instructions(spirv) {
        match i[0] & 0xffff {
            OP_DECORATE if i.len() >= 3 && i[2] == DESCRIPTOR_SET => {
                bound.insert(i[1]);
            }
            OP_VARIABLE if i.len() >= 4 && i[3] == STORAGE_BUFFER && !bound.contains(&i[2]) => {
                return true;
            }
            OP_VARIABLE if i.len() >= 4 && i[3] == PHYSICAL_STORAGE_BUFFER => return true,
            OP_FUNCTION => return false,
            _ => {}
        }
    }
    false
}

fn gather_checked(spirv: &[u32]) -> Option<Result<Vec<u32>, usize>> {
    let physical = super::physical::is_physical(spirv);
    let (mut m, end) = super::spirv::load_functions(spirv)?;
    // In physical addressing, clspv makes them PhysicalStorageBuffer variables (with
    // initializers: invalid SPIR-V); their uses stay pointers of that class, computed from the
    // buffer's own device address (its first 8 bytes, written by the runtime).
    let class = match physical {
        true => StorageClass::PhysicalStorageBuffer,
        false => StorageClass::StorageBuffer,
    };
    let decorated: Vec<Word> = m
        .annotations
        .iter()
        .filter(|a| {
            a.class.opcode == Op::Decorate && decoration(a) == Some(Decoration::DescriptorSet)
        })
        .filter_map(|a| id_operand(a, 0))
        .collect();
    let globals: Vec<(Word, Word, Option<Word>)> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .filter(|i| i.operands.first() == Some(&Operand::StorageClass(class)))
        .filter(|i| !decorated.contains(&i.result_id.unwrap_or(0)))
        .map(|i| {
            (
                i.result_id.unwrap_or(0),
                i.result_type.unwrap_or(0),
                id_operand(i, 1),
            )
        })
        .collect();
    if globals.is_empty() {
        return None;
    }
    let mut layout = Layout::of(&m);
    // clspv leaves the members of structs outside buffers without offsets (its structs carry
    // their padding as members): they get C's, which Vulkan's buffers need decorated.
    let mut laid_out = vec![];
    for &(_, ptr, _) in &globals {
        layout.lay_out(*layout.pointees.get(&ptr)?, &mut laid_out)?;
    }
    let mut ids = Ids(m.header.as_ref()?.bound);
    // Members: (old variable, pointer type, pointee type, offset).
    let mut members = vec![];
    let mut size = 0u32;
    for &(var, ptr, _) in &globals {
        let pointee = *layout.pointees.get(&ptr)?;
        let (s, a) = layout.size_align(pointee)?;
        let offset = size.next_multiple_of(a.max(MIN_ALIGN));
        members.push((var, ptr, pointee, offset));
        size = offset + s;
    }
    if size as usize > MAX_TOTAL_SIZE {
        return Some(Err(size as usize));
    }
    // Physical: the buffer's address after the variables (`address_slot`), which are where a
    // logical build of the same program puts them.
    let slot = address_slot(size as usize) as u32;
    if physical {
        size = slot + ADDRESS_SLOT_SIZE;
    }
    let mut data = vec![0u8; size as usize];
    for (&(_, _, init), &(_, _, pointee, offset)) in globals.iter().zip(&members) {
        if let Some(c) = init {
            layout.write(c, pointee, &mut data[offset as usize..])?;
        }
    }
    let binding = 1 + m
        .annotations
        .iter()
        .filter(|a| decoration(a) == Some(Decoration::Binding))
        .filter_map(|a| match a.operands.get(2) {
            Some(Operand::LiteralBit32(b)) => Some(*b),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let (uint, void) = (layout.uint?, layout.void?);
    // clang types a large array with a short initializer as a struct of the initialised
    // elements and an array of the rest, and clspv indexes that struct at run time (invalid
    // SPIR-V): such a member becomes one array when every use indexes it as one.
    let flat: Vec<Option<(Word, u32, u32)>> = members
        .iter()
        .map(|&(var, _, pointee, _)| {
            let (elem, n, size) = layout.flat_elements(pointee)?;
            let elem_ptr = |ty: Word| layout.pointees.get(&ty) == Some(&elem);
            indexed_as_array(&m, var, elem_ptr).then_some((elem, n, size))
        })
        .collect();
    drop(layout);
    let (block, block_ptr, var) = (ids.next(), ids.next(), ids.next());
    let mut tgv = std::mem::take(&mut m.types_global_values);
    tgv.retain(|i| !globals.iter().any(|g| i.result_id == Some(g.0)));
    let mut constant = |tgv: &mut Vec<Instruction>, v: u32| -> Word {
        let found = tgv.iter().find(|i| {
            i.class.opcode == Op::Constant
                && i.result_type == Some(uint)
                && i.operands == [Operand::LiteralBit32(v)]
        });
        match found.and_then(|i| i.result_id) {
            Some(id) => id,
            None => {
                let id = ids.next();
                tgv.push(inst(
                    Op::Constant,
                    Some(uint),
                    Some(id),
                    vec![Operand::LiteralBit32(v)],
                ));
                id
            }
        }
    };
    let indices: Vec<Word> = (0..members.len() as u32)
        .map(|k| constant(&mut tgv, k))
        .collect();
    let (set_id, binding_id) = (constant(&mut tgv, 0), constant(&mut tgv, binding));
    let lengths: Vec<Option<Word>> = flat
        .iter()
        .map(|f| f.map(|(_, n, _)| constant(&mut tgv, n)))
        .collect();
    let mut strides = vec![];
    for (k, f) in flat.iter().enumerate() {
        let (Some((elem, _, size)), Some(len)) = (f, lengths[k]) else {
            continue;
        };
        let (array, ptr) = (ids.next(), ids.next());
        let ops = vec![Operand::IdRef(*elem), Operand::IdRef(len)];
        tgv.push(inst(Op::TypeArray, None, Some(array), ops));
        let ops = vec![Operand::StorageClass(class), Operand::IdRef(array)];
        tgv.push(inst(Op::TypePointer, None, Some(ptr), ops));
        strides.push((array, *size));
        (members[k].1, members[k].2) = (ptr, array);
    }
    // Physical: the block is the buffer's address alone (the variables follow it, reached
    // through that address); the offsets of the variables as 64-bit constants.
    let ulong = match physical {
        true => Some(ulong_type(&mut tgv, &mut ids)),
        false => None,
    };
    let addressing = match ulong {
        Some(ulong) => {
            let mut offsets = vec![];
            for member in &members {
                offsets.push(ulong_constant(&mut tgv, &mut ids, ulong, member.3 as u64));
            }
            let ops = vec![
                Operand::StorageClass(StorageClass::StorageBuffer),
                Operand::IdRef(ulong),
            ];
            let ulong_ptr = ids.next();
            tgv.push(inst(Op::TypePointer, None, Some(ulong_ptr), ops));
            Some(Addresses {
                ulong,
                ulong_ptr,
                offsets,
            })
        }
        None => None,
    };
    let member_types = match &addressing {
        Some(a) => vec![Operand::IdRef(a.ulong)],
        None => members.iter().map(|m| Operand::IdRef(m.2)).collect(),
    };
    tgv.push(inst(Op::TypeStruct, None, Some(block), member_types));
    tgv.push(inst(
        Op::TypePointer,
        None,
        Some(block_ptr),
        vec![
            Operand::StorageClass(StorageClass::StorageBuffer),
            Operand::IdRef(block),
        ],
    ));
    tgv.push(inst(
        Op::Variable,
        Some(block_ptr),
        Some(var),
        vec![Operand::StorageClass(StorageClass::StorageBuffer)],
    ));
    m.types_global_values = tgv;
    let gone = |i: &Instruction| id_operand(i, 0).is_some_and(|t| globals.iter().any(|g| g.0 == t));
    m.annotations.retain(|a| !gone(a));
    m.debug_names.retain(|a| !gone(a));
    let deco = |target, d, lit: Vec<u32>| {
        let mut ops = vec![Operand::IdRef(target), Operand::Decoration(d)];
        ops.extend(lit.into_iter().map(Operand::LiteralBit32));
        inst(Op::Decorate, None, None, ops)
    };
    for (ty, k, offset) in laid_out {
        m.annotations.push(member_offset(ty, k, offset));
    }
    for (array, size) in strides {
        m.annotations
            .push(deco(array, Decoration::ArrayStride, vec![size]));
    }
    m.annotations.push(deco(block, Decoration::Block, vec![]));
    m.annotations
        .push(deco(var, Decoration::DescriptorSet, vec![0]));
    m.annotations
        .push(deco(var, Decoration::Binding, vec![binding]));
    match &addressing {
        Some(_) => m.annotations.push(member_offset(block, 0, slot)),
        None => {
            for (k, member) in members.iter().enumerate() {
                m.annotations.push(member_offset(block, k as u32, member.3));
            }
        }
    }
    let old: Vec<(Word, Word)> = members.iter().map(|m| (m.0, m.1)).collect();
    use_members(&mut m, &old, var, &indices, addressing.as_ref(), &mut ids)?;
    let refl = reflection(&mut m, &data, [set_id, binding_id], void, &mut ids)?;
    m.header.as_mut()?.bound = ids.0;
    let mut out = m.assemble();
    out.extend_from_slice(&spirv[end..]);
    out.extend(refl.assemble());
    Some(Ok(out))
}

/// How a physical-addressing module reaches its variables: the address in member 0 of the
/// block, plus each variable's offset.
struct Addresses {
    ulong: Word,
    /// A StorageBuffer pointer to `ulong`.
    ulong_ptr: Word,
    /// Each variable's offset in the buffer, a 64-bit constant.
    offsets: Vec<Word>,
}

/// The bytes after the variables that hold the buffer's own device address (8 bytes, which
/// the runtime writes there, and padding) in a physical-addressing module's buffer.
pub const ADDRESS_SLOT_SIZE: u32 = 16;

/// Where the address goes in a buffer of `variables` bytes of variables: after them, at a
/// multiple of 16. A physical module's initial data is `address_slot(v) + 16` bytes, a
/// logical module's `v` (the runtime gives both buffers the slot, so that a program's two
/// builds can share one buffer).
pub fn address_slot(variables: usize) -> usize {
    variables.next_multiple_of(16)
}

fn ulong_type(tgv: &mut Vec<Instruction>, ids: &mut Ids) -> Word {
    let found = tgv.iter().find(|i| {
        i.class.opcode == Op::TypeInt
            && i.operands == [Operand::LiteralBit32(64), Operand::LiteralBit32(0)]
    });
    if let Some(id) = found.and_then(|i| i.result_id) {
        return id;
    }
    let id = ids.next();
    let ops = vec![Operand::LiteralBit32(64), Operand::LiteralBit32(0)];
    // Before everything that could use it.
    tgv.insert(0, inst(Op::TypeInt, None, Some(id), ops));
    id
}

fn ulong_constant(tgv: &mut Vec<Instruction>, ids: &mut Ids, ulong: Word, v: u64) -> Word {
    let found = tgv.iter().find(|i| {
        i.class.opcode == Op::Constant
            && i.result_type == Some(ulong)
            && i.operands == [Operand::LiteralBit64(v)]
    });
    if let Some(id) = found.and_then(|i| i.result_id) {
        return id;
    }
    let id = ids.next();
    tgv.push(inst(
        Op::Constant,
        Some(ulong),
        Some(id),
        vec![Operand::LiteralBit64(v)],
    ));
    id
}

/// Replaces the uses of the `old` variables (variable, pointer type) by access chains to
/// member k of `var` (`indices[k]` its index constant) at the top of each function, and the
/// variables in the entry points' interfaces by `var`. With `addresses` (physical
/// addressing), by the pointer converted from the address in `var` plus the variable's
/// offset.
fn use_members(
    m: &mut dr::Module,
    old: &[(Word, Word)],
    var: Word,
    indices: &[Word],
    addresses: Option<&Addresses>,
    ids: &mut Ids,
) -> Option<()> {
    // Each function reaches the variables through access chains at its top.
    for f in &mut m.functions {
        let mut chains: HashMap<Word, Word> = HashMap::new();
        for inst in f.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()) {
            for op in inst.operands.iter_mut() {
                if let Operand::IdRef(id) = op {
                    if old.iter().any(|o| o.0 == *id) {
                        *id = *chains.entry(*id).or_insert_with(|| ids.next());
                    }
                }
            }
        }
        let Some(first) = f.blocks.first_mut() else {
            continue;
        };
        let at = first
            .instructions
            .iter()
            .take_while(|i| i.class.opcode == Op::Variable)
            .count();
        let mut top = vec![];
        let base = match addresses {
            Some(a) if !chains.is_empty() => {
                let (chain, base) = (ids.next(), ids.next());
                let ops = vec![Operand::IdRef(var), Operand::IdRef(*indices.first()?)];
                top.push(inst(Op::AccessChain, Some(a.ulong_ptr), Some(chain), ops));
                let ops = vec![Operand::IdRef(chain)];
                top.push(inst(Op::Load, Some(a.ulong), Some(base), ops));
                Some(base)
            }
            _ => None,
        };
        for (k, &(old_var, ptr)) in old.iter().enumerate() {
            let Some(&new) = chains.get(&old_var) else {
                continue;
            };
            match (addresses, base) {
                (Some(a), Some(base)) => {
                    let address = ids.next();
                    let ops = vec![Operand::IdRef(base), Operand::IdRef(a.offsets[k])];
                    top.push(inst(Op::IAdd, Some(a.ulong), Some(address), ops));
                    let ops = vec![Operand::IdRef(address)];
                    top.push(inst(Op::ConvertUToPtr, Some(ptr), Some(new), ops));
                }
                _ => {
                    let ops = vec![Operand::IdRef(var), Operand::IdRef(indices[k])];
                    top.push(inst(Op::AccessChain, Some(ptr), Some(new), ops));
                }
            }
        }
        first.instructions.splice(at..at, top);
    }
    // Interfaces list every global variable from SPIR-V 1.4 on (and only Input/Output before).
    let listed = m.header.as_ref()?.version() >= (1, 4);
    for e in &mut m.entry_points {
        e.operands
            .retain(|o| !matches!(o, Operand::IdRef(id) if old.iter().any(|o| o.0 == *id)));
        if listed {
            e.operands.push(Operand::IdRef(var));
        }
    }
    Some(())
}

/// The `ProgramScopeVariablesStorageBuffer` instruction (Set, Binding, Data as hexadecimal),
/// its string added to `m`.
fn reflection(
    m: &mut dr::Module,
    data: &[u8],
    [set_id, binding_id]: [Word; 2],
    void: Word,
    ids: &mut Ids,
) -> Option<Instruction> {
    // The reflection instruction (Set, Binding, Data), with the others after the functions.
    let import = m.ext_inst_imports.iter().find(|i| {
        matches!(i.operands.first(), Some(Operand::LiteralString(s)) if s.starts_with("NonSemantic.ClspvReflection"))
    })?;
    let import = import.result_id?;
    let string = ids.next();
    let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
    m.debug_string_source.push(inst(
        Op::String,
        None,
        Some(string),
        vec![Operand::LiteralString(hex)],
    ));
    Some(inst(
        Op::ExtInst,
        Some(void),
        Some(ids.next()),
        vec![
            Operand::IdRef(import),
            Operand::LiteralExtInstInteger(REFLECTION_INSTRUCTION),
            Operand::IdRef(set_id),
            Operand::IdRef(binding_id),
            Operand::IdRef(string),
        ],
    ))
}

fn inst(op: Op, ty: Option<Word>, id: Option<Word>, operands: Vec<Operand>) -> Instruction {
    Instruction::new(op, ty, id, operands)
}

fn member_offset(ty: Word, k: u32, offset: u32) -> Instruction {
    let ops = vec![
        Operand::IdRef(ty),
        Operand::LiteralBit32(k),
        Operand::Decoration(Decoration::Offset),
        Operand::LiteralBit32(offset),
    ];
    inst(Op::MemberDecorate, None, None, ops)
}

fn id_operand(i: &Instruction, n: usize) -> Option<Word> {
    match i.operands.get(n) {
        Some(Operand::IdRef(id)) => Some(*id),
        _ => None,
    }
}

fn decoration(i: &Instruction) -> Option<Decoration> {
    match i.operands.get(1) {
        Some(Operand::Decoration(d)) => Some(*d),
        _ => None,
    }
}

/// Whether every use of `var` in `m`'s functions is an access chain with one index whose
/// result points to an element (`elem_ptr` of its type).
fn indexed_as_array(m: &dr::Module, var: Word, elem_ptr: impl Fn(Word) -> bool) -> bool {
    let insts = m
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| &b.instructions);
    insts
        .filter(|i| i.operands.contains(&Operand::IdRef(var)))
        .all(|i| {
            matches!(i.class.opcode, Op::AccessChain | Op::InBoundsAccessChain)
                && i.operands.len() == 2
                && i.operands[0] == Operand::IdRef(var)
                && i.result_type.is_some_and(&elem_ptr)
        })
}

/// Fresh result ids, from the module's bound up.
struct Ids(Word);

impl Ids {
    fn next(&mut self) -> Word {
        self.0 += 1;
        self.0 - 1
    }
}

/// The module's types, constants and explicit layout decorations.
#[derive(Default)]
struct Layout<'a> {
    types: HashMap<Word, &'a Instruction>,
    constants: HashMap<Word, &'a Instruction>,
    pointees: HashMap<Word, Word>,
    strides: HashMap<Word, u32>,
    offsets: HashMap<(Word, u32), u32>,
    uint: Option<Word>,
    void: Option<Word>,
}

impl<'a> Layout<'a> {
    fn of(m: &'a dr::Module) -> Layout<'a> {
        let mut l = Layout::default();
        for i in &m.types_global_values {
            let Some(id) = i.result_id else { continue };
            match i.class.opcode {
                Op::TypePointer => {
                    if let Some(p) = id_operand(i, 1) {
                        l.pointees.insert(id, p);
                    }
                }
                Op::TypeInt
                    if i.operands == [Operand::LiteralBit32(32), Operand::LiteralBit32(0)] =>
                {
                    l.uint.get_or_insert(id);
                }
                Op::TypeVoid => l.void = Some(id),
                Op::Constant
                | Op::ConstantComposite
                | Op::ConstantNull
                | Op::ConstantTrue
                | Op::ConstantFalse
                | Op::Undef => {
                    l.constants.insert(id, i);
                }
                _ => {}
            }
            l.types.insert(id, i);
        }
        for a in &m.annotations {
            match (a.class.opcode, &a.operands[..]) {
                (
                    Op::Decorate,
                    [Operand::IdRef(t), Operand::Decoration(Decoration::ArrayStride), Operand::LiteralBit32(s)],
                ) => {
                    l.strides.insert(*t, *s);
                }
                (
                    Op::MemberDecorate,
                    [Operand::IdRef(t), Operand::LiteralBit32(k), Operand::Decoration(Decoration::Offset), Operand::LiteralBit32(o)],
                ) => {
                    l.offsets.insert((*t, *k), *o);
                }
                _ => {}
            }
        }
        l
    }

    /// Gives the structs within `ty` that have no member offsets C's (each member at the
    /// next multiple of its alignment), adding (struct, member, offset) to `added`.
    fn lay_out(&mut self, ty: Word, added: &mut Vec<(Word, u32, u32)>) -> Option<()> {
        let t = *self.types.get(&ty)?;
        match (t.class.opcode, &t.operands[..]) {
            (Op::TypeArray, [Operand::IdRef(e), _]) => self.lay_out(*e, added),
            (Op::TypeStruct, members) => {
                let mut end = 0u32;
                for (k, m) in members.iter().enumerate() {
                    let Operand::IdRef(m) = m else { return None };
                    self.lay_out(*m, added)?;
                    let (size, align) = self.size_align(*m)?;
                    let key = (ty, k as u32);
                    if !self.offsets.contains_key(&key) {
                        let offset = end.next_multiple_of(align);
                        self.offsets.insert(key, offset);
                        added.push((ty, k as u32, offset));
                    }
                    end = self.offsets[&key] + size;
                }
                Some(())
            }
            _ => Some(()),
        }
    }

    /// A struct of elements of one scalar type and arrays of them, packed (clang's type for
    /// a partly initialised array): (element type, element count, element size).
    fn flat_elements(&self, ty: Word) -> Option<(Word, u32, u32)> {
        let t = self.types.get(&ty)?;
        let (Op::TypeStruct, members) = (t.class.opcode, &t.operands[..]) else {
            return None;
        };
        let mut elem = None;
        let mut count = 0u32;
        for (k, m) in members.iter().enumerate() {
            let Operand::IdRef(m) = m else { return None };
            let mt = self.types.get(m)?;
            let (e, n) = match (mt.class.opcode, &mt.operands[..]) {
                (Op::TypeInt | Op::TypeFloat, _) => (*m, 1),
                (Op::TypeArray, [Operand::IdRef(e), Operand::IdRef(len)]) => (*e, self.lit(*len)?),
                _ => return None,
            };
            let et = self.types.get(&e)?.class.opcode;
            if !matches!(et, Op::TypeInt | Op::TypeFloat) || *elem.get_or_insert(e) != e {
                return None;
            }
            let (size, _) = self.size_align(e)?;
            let packed = mt.class.opcode != Op::TypeArray || self.strides.get(m) == Some(&size);
            if !packed || self.offsets.get(&(ty, k as u32)) != Some(&(count * size)) {
                return None;
            }
            count += n;
        }
        let elem = elem?;
        Some((elem, count, self.size_align(elem)?.0))
    }

    fn lit(&self, id: Word) -> Option<u32> {
        match self.constants.get(&id)?.operands.first()? {
            Operand::LiteralBit32(v) => Some(*v),
            _ => None,
        }
    }

    /// Bytes and alignment of a type with explicit layout.
    fn size_align(&self, ty: Word) -> Option<(u32, u32)> {
        let t = self.types.get(&ty)?;
        match (t.class.opcode, &t.operands[..]) {
            (Op::TypeInt | Op::TypeFloat, [Operand::LiteralBit32(w), ..]) => Some((w / 8, w / 8)),
            (Op::TypeVector, [Operand::IdRef(c), Operand::LiteralBit32(n)]) => {
                let (s, _) = self.size_align(*c)?;
                Some((s * n, s * if *n == 3 { 4 } else { *n }))
            }
            (Op::TypeArray, [Operand::IdRef(e), Operand::IdRef(len)]) => {
                let (_, a) = self.size_align(*e)?;
                Some((self.strides.get(&ty)? * self.lit(*len)?, a))
            }
            (Op::TypeStruct, members) => {
                let (mut end, mut align) = (0, 1);
                for (k, m) in members.iter().enumerate() {
                    let Operand::IdRef(m) = m else { return None };
                    let (s, a) = self.size_align(*m)?;
                    end = end.max(self.offsets.get(&(ty, k as u32))? + s);
                    align = align.max(a);
                }
                Some((end.next_multiple_of(align), align))
            }
            _ => None,
        }
    }

    /// Writes constant `c` laid out as type `ty` at the start of `out`.
    fn write(&self, c: Word, ty: Word, out: &mut [u8]) -> Option<()> {
        let k = self.constants.get(&c)?;
        let t = self.types.get(&ty)?;
        match k.class.opcode {
            Op::ConstantNull | Op::Undef => Some(()),
            Op::Constant => {
                let (size, _) = self.size_align(ty)?;
                let mut bytes = vec![];
                for o in &k.operands {
                    match o {
                        Operand::LiteralBit32(v) => bytes.extend(v.to_le_bytes()),
                        Operand::LiteralBit64(v) => bytes.extend(v.to_le_bytes()),
                        _ => return None,
                    }
                }
                let n = size as usize;
                out.get_mut(..n)?.copy_from_slice(bytes.get(..n)?);
                Some(())
            }
            Op::ConstantComposite => {
                for (i, part) in k.operands.iter().enumerate() {
                    let Operand::IdRef(part) = part else {
                        return None;
                    };
                    let (elem, at) = match (t.class.opcode, &t.operands[..]) {
                        (Op::TypeVector, [Operand::IdRef(e), _]) => {
                            (*e, self.size_align(*e)?.0 * i as u32)
                        }
                        (Op::TypeArray, [Operand::IdRef(e), _]) => {
                            (*e, self.strides.get(&ty)? * i as u32)
                        }
                        (Op::TypeStruct, members) => match members.get(i)? {
                            Operand::IdRef(e) => (*e, *self.offsets.get(&(ty, i as u32))?),
                            _ => return None,
                        },
                        _ => return None,
                    };
                    self.write(*part, elem, out.get_mut(at as usize..)?)?;
                }
                Some(())
            }
            _ => None,
        }
    }
}

/// `__opencl_c_program_scope_global_variables`: defined by vkcl (clspv refuses the macro).
pub const FEATURE: &str = "__opencl_c_program_scope_global_variables";

/// What clang says of a writable program-scope variable, `static` local or `extern`
/// declaration of one in a language mode without the feature (OpenCL C 1.x, or 3.0 without
/// the feature in the target).
pub(super) const REFUSED: [&str; 3] = [
    "program scope variable must reside in constant address space",
    "static local variable must reside in constant address space",
    "extern variable must reside in constant address space",
];

/// Whether `source` declares what an OpenCL C 3.0 build refuses (`REFUSED`): a `global` or
/// `__global` word outside every brace and parenthesis (a program-scope variable in the global
/// address space), or `static` inside braces (a static local). Such programs are built in 2.0
/// mode at once (`compiler::compile_bytes`): the refused 3.0 build cost each ~20 ms, a tenth
/// of c11_atomics' builds (issue 16). A program this misses is refused and built again as
/// before; one it names wrongly is built as 3.0 when the 2.0 build fails.
pub(super) fn declares_writable_globals(source: &[u8]) -> bool {
    let text = String::from_utf8_lossy(source);
    let (tokens, _) = super::source_edit::code_tokens(&text);
    let (mut braces, mut parens) = (0usize, 0usize);
    for t in tokens {
        match t.kind {
            super::pipes::Kind::Punct(b'{') => braces += 1,
            super::pipes::Kind::Punct(b'}') => braces = braces.saturating_sub(1),
            super::pipes::Kind::Punct(b'(') => parens += 1,
            super::pipes::Kind::Punct(b')') => parens = parens.saturating_sub(1),
            super::pipes::Kind::Ident => {
                let word = &text[t.start..t.end];
                let global = (word == "global" || word == "__global") && braces == 0 && parens == 0;
                if global || (word == "static" && braces > 0) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// What the build log adds when clspv crashed on a program that declares program-scope
/// variables of pointer type ([`declares_pointer_variables`]).
pub(super) const POINTER_VARIABLES: &str = "vkcl: this program declares program-scope variables \
(or static locals) of pointer type; clspv 0.0.1 crashes on them, with or without an \
initializer, in both addressing modes. vkcl's physical-addressing build (on devices with \
buffer device addresses) stores a scalar one declared alone at program scope as an address, \
where it is only read and assigned; not arrays of pointers, static locals, a name declared \
again, `p++`, `p += n` or `&p` (docs/DECISIONS.md): keep such pointers in a buffer or as \
offsets instead";

/// Whether `source` declares a program-scope variable or `static` local of pointer type (or
/// an array of pointers): a `*` then a name then `=`, `;`, `,` or `[`, outside parentheses,
/// at the top level or after `static` inside braces, in a declaration that is not a typedef.
pub(super) fn declares_pointer_variables(source: &[u8]) -> bool {
    use super::pipes::Kind;
    let text = String::from_utf8_lossy(source);
    let (tokens, _) = super::source_edit::code_tokens(&text);
    let one = |k: usize| {
        let t = tokens.get(k)?;
        match t.kind {
            Kind::Punct(c) => Some(c),
            Kind::Other if t.end == t.start + 1 => Some(text.as_bytes()[t.start]),
            _ => None,
        }
    };
    let word = |k: usize| {
        let t = tokens.get(k)?;
        (t.kind == Kind::Ident).then(|| &text[t.start..t.end])
    };
    let (mut braces, mut parens, mut start) = (0usize, 0usize, 0usize);
    // Inside an initializer (`= ...` up to the declarator's `,` or `;`): the brace depth of
    // its `=`; a `*` there multiplies.
    let mut init: Option<usize> = None;
    for k in 0..tokens.len() {
        match one(k) {
            Some(b'=') if parens == 0 && init.is_none() => init = Some(braces),
            Some(b',' | b';') if init == Some(braces) && parens == 0 => {
                init = None;
                if one(k) == Some(b';') {
                    start = k + 1;
                }
            }
            Some(b'{') if init.is_none() => (braces, start) = (braces + 1, k + 1),
            Some(b'{') => braces += 1,
            Some(b'}') if init.is_none() => (braces, start) = (braces.saturating_sub(1), k + 1),
            Some(b'}') => braces = braces.saturating_sub(1),
            Some(b';') => (start, init) = (k + 1, None),
            Some(b'(') => parens += 1,
            Some(b')') => parens = parens.saturating_sub(1),
            Some(b'*') if parens == 0 && init.is_none() => {
                let after_type =
                    k > 0 && (word(k - 1).is_some() || matches!(one(k - 1), Some(b'*' | b',')));
                // Qualifiers of the pointer itself (`int *constant p`), then the name.
                const QUALIFIERS: &[&str] = &[
                    "const",
                    "volatile",
                    "restrict",
                    "constant",
                    "__constant",
                    "global",
                    "__global",
                    "local",
                    "__local",
                    "private",
                    "__private",
                ];
                let mut name = k + 1;
                while word(name).is_some_and(|w| QUALIFIERS.contains(&w)) {
                    name += 1;
                }
                let declared = after_type
                    && word(name).is_some()
                    && matches!(one(name + 1), Some(b'=' | b';' | b',' | b'['));
                let words: Vec<&str> = (start..k).filter_map(word).collect();
                let place = braces == 0 || words.contains(&"static");
                if declared && place && !words.contains(&"typedef") {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Every OpenCL C 3.0 feature macro (clang's OpenCL C 2.0 header defines several of them).
pub(super) const ALL_FEATURES: &[&str] = &[
    "__opencl_c_3d_image_writes",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_device_enqueue",
    "__opencl_c_generic_address_space",
    "__opencl_c_fp64",
    "__opencl_c_images",
    "__opencl_c_int64",
    "__opencl_c_pipes",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_read_write_images",
    "__opencl_c_subgroups",
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
];

/// An OpenCL C 3.0 build that clang refused for its program-scope variables (`log`), as an
/// OpenCL C 2.0 build that reads as 3.0: clspv cannot give clang the 3.0 feature (its
/// `-enable-feature-macros` refuses it), and clang's 2.0 mode has it with the same meaning.
/// Returns the clspv options for the 2.0 build and the lines to put before each source:
/// `__OPENCL_C_VERSION__` is 300 again and the feature macros are those of the 3.0 build
/// (`-enable-feature-macros=` and vkcl's own `-D__opencl_c_*`), not the 2.0 header's. `None`
/// when the build was not 3.0 or failed for something else.
pub fn as_opencl_c_2_0(options: &str, log: &str) -> Option<(String, String)> {
    const CL30: &str = "-cl-std=CL3.0";
    if !REFUSED.iter().any(|r| log.contains(r)) {
        return None;
    }
    let words: Vec<&str> = options.split(' ').collect();
    if !words.contains(&CL30) {
        return None;
    }
    let mut claimed: Vec<&str> = vec![];
    for w in &words {
        if let Some(list) = w.strip_prefix("-enable-feature-macros=") {
            claimed.extend(list.split(','));
        } else if let Some(def) = w.strip_prefix("-D__opencl_c_") {
            let name = &w[2..2 + "__opencl_c_".len() + def.find('=').unwrap_or(def.len())];
            claimed.push(name);
        }
    }
    let options = words
        .iter()
        .map(|&w| if w == CL30 { "-cl-std=CL2.0" } else { w })
        .collect::<Vec<_>>()
        .join(" ");
    let mut lines = String::from(
        "#pragma clang diagnostic push\n\
         #pragma clang diagnostic ignored \"-Weverything\"\n\
         #undef __OPENCL_C_VERSION__\n\
         #define __OPENCL_C_VERSION__ 300\n",
    );
    for f in ALL_FEATURES {
        lines += &format!("#undef {f}\n");
    }
    for f in claimed.iter().filter(|f| ALL_FEATURES.contains(f)) {
        lines += &format!("#define {f} 1\n");
    }
    if claimed.contains(&"__opencl_c_atomic_scope_all_devices") {
        // OpenCL C 3.0's name for the scope; the 2.0 header has only the SVM one.
        lines += "#define memory_scope_all_devices memory_scope_all_svm_devices\n";
    }
    lines += "#pragma clang diagnostic pop\n";
    Some((options, lines))
}

#[cfg(test)]
mod pointer_variable_tests {
    use super::declares_pointer_variables as declares;

    #[test]
    fn finds_pointer_variables_only() {
        assert!(declares(b"global int x[4]; global int *p = &x[2];"));
        assert!(declares(
            b"constant int c[2] = {1, 2};\nconstant int *constant cp[2] = {&c[0], &c[1]};"
        ));
        assert!(declares(b"global int *q;"));
        assert!(declares(b"int y, *p = &y;"));
        assert!(declares(b"kernel void k() { static global int *s; }"));
        assert!(!declares(b"global int y = 2 * x;"));
        assert!(!declares(b"global int a = 1, b = 3 * a;"));
        assert!(!declares(
            b"kernel void k(global int *o) { int *p = o; o[0] = 2 * p[0]; }"
        ));
        assert!(!declares(b"typedef int *intp;"));
        assert!(!declares(b"global int *f(global int *a);"));
        assert!(!declares(b"struct s { global int *p; };"));
    }
}
