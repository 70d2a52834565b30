//! Several OpenCL work-groups in one Vulkan work-group, for kernels that cannot tell.
//!
//! vkcl dispatches one Vulkan work-group per OpenCL work-group. A launch of small work-groups
//! (thread_dimensions' local size [1,1,1] over 2^25 work-items) then costs lavapipe its
//! per-group overhead (~0.4 µs) and all but one SIMD lane per group (docs/BENCHMARKS.md). A
//! kernel that never observes its work-group as a whole (no barrier, no `__local` memory, no
//! work-group or sub-group function, no sub-group built-in) gives the same results when `k`
//! of its work-groups along one dimension `d` run as one Vulkan work-group of `k × L[d]`
//! invocations, provided every work-item built-in still says what OpenCL says.
//!
//! clspv reads those built-ins from `LocalInvocationId`, `WorkgroupId`, `NumWorkgroups`,
//! `GlobalInvocationId` and the `WorkgroupSize` specialisation constants (plus push constants
//! for offsets and, in OpenCL C 2.0+ modules, the region's group offset and the group count).
//! The coalesced module:
//!
//! - keeps the work-group size constants as the OpenCL size (what `get_local_size` and
//!   clspv's arithmetic read), and declares the Vulkan size through a new composite whose
//!   component `d` is a new specialisation constant (`Coalesced::size_spec_id`, set to
//!   `k × L[d]` by the launch);
//! - reads `LocalInvocationId`, `WorkgroupId` and `NumWorkgroups` through Private copies that
//!   the entry function fills first: along `d`, local id `lid % L`, group id
//!   `(WorkgroupId × k L + lid) / L` (the Vulkan global id over `L`; clspv adds the region's
//!   group offset itself), group count the region's OpenCL count, pushed by the launch at
//!   `push_offset`; `GlobalInvocationId` needs nothing (`WorkgroupId × kL + lid` is the
//!   OpenCL global id relative to the region);
//! - returns at once from the work-items of groups past the region's count (the last Vulkan
//!   group of a region whose count `k` does not divide).
//!
//! Modules the pass does not understand, or that may observe their work-group, are refused
//! (`push_offset` is None) and launched as before.

use std::collections::{HashMap, HashSet};

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{BuiltIn, Decoration, Op, SelectionControl, StorageClass, Word};

use super::spirv::{instructions, UintBuilder};

const OP_ENTRY_POINT: u32 = 15;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_VARIABLE: u32 = 59;
const OP_EXECUTION_MODE: u32 = 16;
const OP_TYPE_POINTER: u32 = 32;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const OP_CONTROL_BARRIER: u32 = 224;
const OP_SPEC_CONSTANT_COMPOSITE: u32 = 51;
const STORAGE_CLASS_WORKGROUP: u32 = 4;
const STORAGE_CLASS_PUSH_CONSTANT: u32 = 9;
const DECORATION_BUILTIN: u32 = 11;
const DECORATION_OFFSET: u32 = 35;
const EXECUTION_MODE_LOCAL_SIZE_ID: u32 = 38;
/// The built-ins the rewrite understands: NumWorkgroups, WorkgroupSize, WorkgroupId,
/// LocalInvocationId, GlobalInvocationId.
const UNDERSTOOD_BUILTINS: [u32; 5] = [24, 25, 26, 27, 28];
const BUILTIN_WORKGROUP_SIZE: u32 = 25;
/// Opcodes of group and sub-group operations: OpGroupAsyncCopy ... OpGroupSMax,
/// OpGroupNonUniform*, the KHR sub-group instructions, AMD's group instructions.
fn group_opcode(op: u32) -> bool {
    matches!(op, 259..=271 | 333..=366 | 4421..=4432 | 5000..=5007)
}

/// Where the launch pushes a region's OpenCL group count for the coalesced variants of
/// `spirv` (one kernel's module, `super::kernel_module`) whose push constants take
/// `reflected_size` bytes; None where the kernel may observe its work-group or the module is
/// not understood.
///
/// Only the kernel's code counts: a kernel module keeps the program's module-scope
/// declarations (capabilities, other kernels' `__local` variables and built-ins), so those
/// refuse the kernel only where its functions name them (a literal operand equal to such an
/// id counts too: the check errs towards refusing).
pub fn push_offset(spirv: &[u32], reflected_size: u32) -> Option<u32> {
    // The push-constant block: pointer types to PushConstant storage, by id, and the
    // variable's struct.
    let mut pc_pointers: HashMap<u32, u32> = HashMap::new();
    let mut pc_struct = None;
    let mut member_offsets: HashMap<u32, u32> = HashMap::new();
    let mut workgroup_size = None;
    let mut composites = HashSet::new();
    let mut entries = 0;
    // Variables the kernel must not name: Workgroup storage, built-ins not understood.
    let mut observers = HashSet::new();
    let mut in_function = false;
    for (_, i) in instructions(spirv) {
        let op = i[0] & 0xffff;
        if in_function {
            if op == OP_CONTROL_BARRIER
                || group_opcode(op)
                || i[1..].iter().any(|w| observers.contains(w))
            {
                return None;
            }
            in_function = op != OP_FUNCTION_END;
            continue;
        }
        match op {
            OP_FUNCTION => in_function = true,
            OP_ENTRY_POINT => entries += 1,
            OP_EXECUTION_MODE if i.get(2) == Some(&EXECUTION_MODE_LOCAL_SIZE_ID) => return None,
            OP_TYPE_POINTER if i.get(2) == Some(&STORAGE_CLASS_PUSH_CONSTANT) => {
                pc_pointers.insert(i[1], *i.get(3)?);
            }
            OP_VARIABLE if i.get(3) == Some(&STORAGE_CLASS_PUSH_CONSTANT) => {
                pc_struct = pc_pointers.get(&i[1]).copied();
            }
            OP_VARIABLE if i.get(3) == Some(&STORAGE_CLASS_WORKGROUP) => {
                observers.insert(i[2]);
            }
            OP_DECORATE if i.get(2) == Some(&DECORATION_BUILTIN) => {
                let b = *i.get(3)?;
                if !UNDERSTOOD_BUILTINS.contains(&b) {
                    observers.insert(i[1]);
                }
                if b == BUILTIN_WORKGROUP_SIZE {
                    workgroup_size = Some(i[1]);
                }
            }
            OP_MEMBER_DECORATE if i.get(3) == Some(&DECORATION_BUILTIN) => return None,
            OP_MEMBER_DECORATE if i.get(3) == Some(&DECORATION_OFFSET) => {
                let o = member_offsets.entry(i[1]).or_default();
                *o = (*o).max(*i.get(4)?);
            }
            OP_SPEC_CONSTANT_COMPOSITE => {
                composites.insert(*i.get(2)?);
            }
            _ => {}
        }
    }
    // One entry point, and a work-group size the launch specialises.
    if entries != 1 || !composites.contains(&workgroup_size?) {
        return None;
    }
    let last_member = pc_struct
        .and_then(|s| member_offsets.get(&s))
        .map_or(0, |o| o + 16);
    Some(reflected_size.max(last_member).next_multiple_of(16))
}

/// A kernel's module with several OpenCL work-groups per Vulkan work-group along one dimension.
pub struct Coalesced {
    pub spirv: Vec<u32>,
    /// The specialisation constant of the Vulkan work-group size along the dimension
    /// (k × the OpenCL size); the OpenCL sizes keep their constants.
    pub size_spec_id: u32,
}

/// The types and ids the rewrite needs, found in the module or made.
struct Builder {
    uint: UintBuilder,
    /// Types and values made here, after the constants of `uint`.
    globals: Vec<Instruction>,
    /// Pointer types by (storage class, pointee).
    pointers: HashMap<(StorageClass, Word), Word>,
}

impl Builder {
    fn pointer(&mut self, class: StorageClass, pointee: Word) -> Word {
        if let Some(&p) = self.pointers.get(&(class, pointee)) {
            return p;
        }
        let p = self.uint.fresh();
        let operands = vec![Operand::StorageClass(class), Operand::IdRef(pointee)];
        self.globals
            .push(Instruction::new(Op::TypePointer, None, Some(p), operands));
        self.pointers.insert((class, pointee), p);
        p
    }

    fn push(&mut self, op: Op, ty: Option<Word>, operands: Vec<Operand>) -> Word {
        let id = self.uint.fresh();
        self.globals
            .push(Instruction::new(op, ty, Some(id), operands));
        id
    }
}

fn inst(op: Op, ty: Option<Word>, id: Option<Word>, operands: Vec<Operand>) -> Instruction {
    Instruction::new(op, ty, id, operands)
}

/// `OpDecorate target decoration extra...`.
fn decorate(m: &mut dr::Module, target: Word, decoration: Decoration, extra: Vec<Operand>) {
    let operands = [
        vec![Operand::IdRef(target), Operand::Decoration(decoration)],
        extra,
    ]
    .concat();
    m.annotations.push(inst(Op::Decorate, None, None, operands));
}

/// `OpMemberDecorate block member Offset offset`.
fn member_offset(m: &mut dr::Module, block: Word, member: u32, offset: u32) {
    let operands = vec![
        Operand::IdRef(block),
        Operand::LiteralBit32(member),
        Operand::Decoration(Decoration::Offset),
        Operand::LiteralBit32(offset),
    ];
    m.annotations
        .push(inst(Op::MemberDecorate, None, None, operands));
}

fn id_of(o: Option<&Operand>) -> Option<Word> {
    match o {
        Some(Operand::IdRef(id)) => Some(*id),
        _ => None,
    }
}

/// `spirv` (accepted by [`push_offset`], which gave `push_offset`) with OpenCL work-groups
/// coalesced along `dim`; None where the module is not understood.
pub fn coalesce(spirv: &[u32], dim: usize, push_offset: u32) -> Option<Coalesced> {
    let (mut m, end) = super::spirv::load_functions(spirv)?;
    let version = m.header.as_ref()?.version;
    // SPIR-V 1.4 lists every global variable an entry point uses in its interface.
    let all_in_interface = version >= 0x0001_0400;
    let bound = m.header.as_ref()?.bound;
    let mut b = Builder {
        uint: UintBuilder::of(&m, bound)?,
        globals: vec![],
        pointers: HashMap::new(),
    };
    let uint = b.uint.uint;
    let mut v3uint = None;
    let mut bool_type = None;
    let mut pointees: HashMap<Word, (StorageClass, Word)> = HashMap::new();
    for i in &m.types_global_values {
        match (i.class.opcode, i.operands.as_slice()) {
            (Op::TypeVector, [Operand::IdRef(t), Operand::LiteralBit32(3)]) if *t == uint => {
                v3uint = i.result_id
            }
            (Op::TypeBool, _) => bool_type = i.result_id,
            (Op::TypePointer, [Operand::StorageClass(c), Operand::IdRef(t)]) => {
                b.pointers.insert((*c, *t), i.result_id?);
                pointees.insert(i.result_id?, (*c, *t));
            }
            _ => {}
        }
    }
    let v3uint = match v3uint {
        Some(v) => v,
        None => b.push(
            Op::TypeVector,
            None,
            vec![Operand::IdRef(uint), Operand::LiteralBit32(3)],
        ),
    };
    let bool_type = match bool_type {
        Some(t) => t,
        None => b.push(Op::TypeBool, None, vec![]),
    };

    // The built-in variables by built-in, and the work-group size composite.
    let mut builtins: HashMap<BuiltIn, Word> = HashMap::new();
    let mut size_decoration = None;
    for (at, i) in m.annotations.iter().enumerate() {
        if let (
            Op::Decorate,
            [Operand::IdRef(t), Operand::Decoration(Decoration::BuiltIn), Operand::BuiltIn(x)],
        ) = (i.class.opcode, i.operands.as_slice())
        {
            builtins.insert(*x, *t);
            if *x == BuiltIn::WorkgroupSize {
                size_decoration = Some(at);
            }
        }
    }
    let size_decoration = size_decoration?;
    let composite = builtins[&BuiltIn::WorkgroupSize];
    let sizes: Vec<Word> = m
        .types_global_values
        .iter()
        .find(|i| i.result_id == Some(composite) && i.class.opcode == Op::SpecConstantComposite)?
        .operands
        .iter()
        .map(|o| id_of(Some(o)))
        .collect::<Option<_>>()?;
    let opencl_size = *sizes.get(dim)?;
    let spec_ids: Vec<u32> = m
        .annotations
        .iter()
        .filter_map(|i| match i.operands.as_slice() {
            [Operand::IdRef(_), Operand::Decoration(Decoration::SpecId), Operand::LiteralBit32(s)] => {
                Some(*s)
            }
            _ => None,
        })
        .collect();
    let size_spec_id = spec_ids.iter().max().map_or(0, |s| s + 1);

    // The Vulkan work-group size: a new constant along `dim`.
    let vulkan_size = b.push(Op::SpecConstant, Some(uint), vec![Operand::LiteralBit32(1)]);
    let mut operands: Vec<Operand> = sizes.iter().map(|&s| Operand::IdRef(s)).collect();
    operands[dim] = Operand::IdRef(vulkan_size);
    let vulkan_sizes = b.push(Op::SpecConstantComposite, Some(v3uint), operands);
    m.annotations[size_decoration].operands[0] = Operand::IdRef(vulkan_sizes);
    decorate(
        &mut m,
        vulkan_size,
        Decoration::SpecId,
        vec![Operand::LiteralBit32(size_spec_id)],
    );

    let entry = m.entry_points.first()?;
    let entry_fn = id_of(entry.operands.get(1))?;
    let mut interface_new: Vec<Word> = vec![];

    // The built-in inputs the prologue reads (declared where the module has none), all of
    // them 3-component vectors of 32-bit integers here.
    let input_v3 = b.pointer(StorageClass::Input, v3uint);
    for x in [
        BuiltIn::LocalInvocationId,
        BuiltIn::WorkgroupId,
        BuiltIn::NumWorkgroups,
    ] {
        if let Some(v) = builtins.get(&x) {
            let var = m
                .types_global_values
                .iter()
                .find(|i| i.result_id == Some(*v))?;
            if var.class.opcode != Op::Variable || var.result_type != Some(input_v3) {
                return None;
            }
        }
    }
    let input = |b: &mut Builder, m: &mut dr::Module, x: BuiltIn, new: &mut Vec<Word>| {
        if let Some(&v) = builtins.get(&x) {
            return v;
        }
        let v = b.push(
            Op::Variable,
            Some(input_v3),
            vec![Operand::StorageClass(StorageClass::Input)],
        );
        decorate(m, v, Decoration::BuiltIn, vec![Operand::BuiltIn(x)]);
        new.push(v);
        v
    };
    let local_id_in = input(
        &mut b,
        &mut m,
        BuiltIn::LocalInvocationId,
        &mut interface_new,
    );
    let group_id_in = input(&mut b, &mut m, BuiltIn::WorkgroupId, &mut interface_new);

    // Private copies of the built-ins the kernel reads, by the built-in variable.
    let private_v3 = b.pointer(StorageClass::Private, v3uint);
    let mut copies: HashMap<Word, (BuiltIn, Word)> = HashMap::new();
    for x in [
        BuiltIn::LocalInvocationId,
        BuiltIn::WorkgroupId,
        BuiltIn::NumWorkgroups,
    ] {
        if let Some(&v) = builtins.get(&x) {
            let copy = b.push(
                Op::Variable,
                Some(private_v3),
                vec![Operand::StorageClass(StorageClass::Private)],
            );
            copies.insert(v, (x, copy));
            if all_in_interface {
                interface_new.push(copy);
            }
        }
    }

    // The pushed group count: a member after the module's push constants.
    let pc_var = m.types_global_values.iter().find(|i| {
        i.class.opcode == Op::Variable
            && i.operands.first() == Some(&Operand::StorageClass(StorageClass::PushConstant))
    });
    let (pc_var, member) = match pc_var {
        Some(v) => {
            let var = v.result_id?;
            let (_, block) = *pointees.get(&v.result_type?)?;
            let uint_at = m
                .types_global_values
                .iter()
                .position(|i| i.result_id == Some(uint))?;
            let s = m
                .types_global_values
                .iter()
                .position(|i| i.result_id == Some(block) && i.class.opcode == Op::TypeStruct)?;
            if uint_at > s {
                return None;
            }
            let member = m.types_global_values[s].operands.len() as u32;
            m.types_global_values[s].operands.push(Operand::IdRef(uint));
            member_offset(&mut m, block, member, push_offset);
            // The block is only ever reached through access chains (its type changed).
            let whole = m
                .functions
                .iter()
                .flat_map(|f| &f.blocks)
                .flat_map(|bl| &bl.instructions);
            let loaded_whole = whole.clone().any(|i| {
                i.operands.contains(&Operand::IdRef(var))
                    && !matches!(i.class.opcode, Op::AccessChain | Op::InBoundsAccessChain)
            });
            if loaded_whole {
                return None;
            }
            (var, member)
        }
        None => {
            let block = b.push(Op::TypeStruct, None, vec![Operand::IdRef(uint)]);
            decorate(&mut m, block, Decoration::Block, vec![]);
            member_offset(&mut m, block, 0, push_offset);
            let ptr = b.pointer(StorageClass::PushConstant, block);
            let var = b.push(
                Op::Variable,
                Some(ptr),
                vec![Operand::StorageClass(StorageClass::PushConstant)],
            );
            if all_in_interface {
                interface_new.push(var);
            }
            (var, 0)
        }
    };
    let pc_uint = b.pointer(StorageClass::PushConstant, uint);
    let member = b.uint.constant(member);
    let d = dim as u32;

    // Every read of a copied built-in goes to its copy: loads of the variable, and access
    // chains into it (retyped to Private pointers). Anything else refused.
    let mut chains: HashSet<Word> = HashSet::new();
    for f in &mut m.functions {
        for bl in &mut f.blocks {
            for i in &mut bl.instructions {
                let base = id_of(i.operands.first());
                let reads = matches!(
                    i.class.opcode,
                    Op::Load | Op::AccessChain | Op::InBoundsAccessChain
                );
                let copied = |x: Word| copies.contains_key(&x) || chains.contains(&x);
                let named_elsewhere =
                    i.operands.iter().enumerate().any(|(n, o)| {
                        id_of(Some(o)).is_some_and(|x| copied(x) && !(n == 0 && reads))
                    });
                if named_elsewhere {
                    return None;
                }
                if !base.is_some_and(copied) || !reads {
                    continue;
                }
                if let Some((_, copy)) = base.and_then(|x| copies.get(&x)) {
                    i.operands[0] = Operand::IdRef(*copy);
                }
                if i.class.opcode != Op::Load {
                    let (_, pointee) = *pointees.get(&i.result_type?)?;
                    i.result_type = Some(b.pointer(StorageClass::Private, pointee));
                    chains.insert(i.result_id?);
                }
            }
        }
    }

    // The prologue, in a new first block of the entry function.
    let f = m
        .functions
        .iter_mut()
        .find(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(entry_fn))?;
    let first = f.blocks.first_mut()?;
    let old_label = first.label.as_ref()?.result_id?;
    // The function's variables go first in the new first block (wherever debug lines put
    // them in the old one).
    let (mut code, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut first.instructions)
        .into_iter()
        .partition(|i| i.class.opcode == Op::Variable);
    first.instructions = rest;
    let fresh = |b: &mut Builder| b.uint.fresh();
    let (lid, wg) = (fresh(&mut b), fresh(&mut b));
    code.push(inst(
        Op::Load,
        Some(v3uint),
        Some(lid),
        vec![Operand::IdRef(local_id_in)],
    ));
    code.push(inst(
        Op::Load,
        Some(v3uint),
        Some(wg),
        vec![Operand::IdRef(group_id_in)],
    ));
    let extract = |b: &mut Builder, code: &mut Vec<Instruction>, v: Word| {
        let x = b.uint.fresh();
        let operands = vec![Operand::IdRef(v), Operand::LiteralBit32(d)];
        code.push(inst(Op::CompositeExtract, Some(uint), Some(x), operands));
        x
    };
    let lid_d = extract(&mut b, &mut code, lid);
    let wg_d = extract(&mut b, &mut code, wg);
    let first_item = b.uint.op(Op::IMul, wg_d, vulkan_size, &mut code);
    let item = b.uint.op(Op::IAdd, first_item, lid_d, &mut code);
    let group = b.uint.op(Op::UDiv, item, opencl_size, &mut code);
    let local = b.uint.op(Op::UMod, lid_d, opencl_size, &mut code);
    let count_ptr = fresh(&mut b);
    let operands = vec![Operand::IdRef(pc_var), Operand::IdRef(member)];
    code.push(inst(
        Op::AccessChain,
        Some(pc_uint),
        Some(count_ptr),
        operands,
    ));
    let count = fresh(&mut b);
    code.push(inst(
        Op::Load,
        Some(uint),
        Some(count),
        vec![Operand::IdRef(count_ptr)],
    ));
    let mut copied: Vec<(Word, BuiltIn, Word)> =
        copies.iter().map(|(&v, &(x, c))| (v, x, c)).collect();
    copied.sort_by_key(|&(v, _, _)| v);
    for (var, x, copy) in copied {
        let (value, original) = match x {
            BuiltIn::LocalInvocationId => (local, lid),
            BuiltIn::WorkgroupId => (group, wg),
            _ => {
                let n = fresh(&mut b);
                code.push(inst(
                    Op::Load,
                    Some(v3uint),
                    Some(n),
                    vec![Operand::IdRef(var)],
                ));
                (count, n)
            }
        };
        let v = fresh(&mut b);
        let operands = vec![
            Operand::IdRef(value),
            Operand::IdRef(original),
            Operand::LiteralBit32(d),
        ];
        code.push(inst(Op::CompositeInsert, Some(v3uint), Some(v), operands));
        code.push(inst(
            Op::Store,
            None,
            None,
            vec![Operand::IdRef(copy), Operand::IdRef(v)],
        ));
    }
    let past = fresh(&mut b);
    let operands = vec![Operand::IdRef(group), Operand::IdRef(count)];
    code.push(inst(
        Op::UGreaterThanEqual,
        Some(bool_type),
        Some(past),
        operands,
    ));
    let leave = fresh(&mut b);
    let operands = vec![
        Operand::IdRef(old_label),
        Operand::SelectionControl(SelectionControl::NONE),
    ];
    code.push(inst(Op::SelectionMerge, None, None, operands));
    let operands = vec![
        Operand::IdRef(past),
        Operand::IdRef(leave),
        Operand::IdRef(old_label),
    ];
    code.push(inst(Op::BranchConditional, None, None, operands));
    let start = fresh(&mut b);
    let prologue = dr::Block {
        label: Some(inst(Op::Label, None, Some(start), vec![])),
        instructions: code,
    };
    let exit = dr::Block {
        label: Some(inst(Op::Label, None, Some(leave), vec![])),
        instructions: vec![inst(Op::Return, None, None, vec![])],
    };
    f.blocks.splice(0..0, [prologue, exit]);

    let entry = m.entry_points.first_mut()?;
    entry
        .operands
        .extend(interface_new.into_iter().map(Operand::IdRef));
    let mut globals = std::mem::take(&mut b.uint.globals);
    globals.append(&mut b.globals);
    // Variables after the types and constants they name.
    let (vars, rest): (Vec<_>, Vec<_>) = globals
        .into_iter()
        .partition(|i| i.class.opcode == Op::Variable);
    m.types_global_values.extend(rest);
    m.types_global_values.extend(vars);
    m.header.as_mut()?.bound = b.uint.fresh();
    let mut out = m.assemble();
    out.extend_from_slice(&spirv[end..]);
    Some(Coalesced {
        spirv: out,
        size_spec_id,
    })
}
