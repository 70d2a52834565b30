//! Buffers of 8- and 16-component vectors typed as arrays of 4-vectors (issue 21; off by
//! default, `VKCL_VEC4_ARRAYS=1`).
//!
//! clspv's `-long-vector` types a `global float16 *` buffer as a runtime array (stride 64) of
//! `OpTypeArray %float 16`, and reads or writes an element as 16 scalar access chains
//! `%var 0 %i K` (K = 0..15) and 16 scalar loads or stores; `float8`, `int16`, `uint8`... are
//! the same with 8 or 16 and the other 32-bit type. NVIDIA's driver (H200) reads clpeak's
//! float16 buffer at two thirds of its bandwidth that way, while the same data in a buffer
//! clspv types as float4 (`OpTypeRuntimeArray %v4float`, stride 16, indexed 4i + k) runs near
//! its own OpenCL's figure (tools/diag/wide_loads.c, docs/GPU.md). A second variable viewing
//! the buffer as 4-vectors, and an element retyped as an array of 4-vectors, measured no
//! better; this pass makes exactly clspv's float4 shape.
//!
//! A storage-buffer variable qualifies where its type is a Block struct of one runtime array
//! (offset 0, stride 4N) of `OpTypeArray T N` (N 8 or 16, T a 32-bit int or float), and where
//! every use of it in a function is an `OpAccessChain %var %0 %i %K` (K a constant below N,
//! `%i` a 32-bit unsigned int) whose result is only the pointer of `OpLoad`s and `OpStore`s.
//! Any other use (a chain to a whole element, `OpArrayLength`, a copy, an atomic, a select or
//! phi of pointers, a call) leaves the variable as it is; a module where none qualifies is
//! returned unchanged. The variable is retyped to a Block struct of a runtime array of
//! `v4T` (stride 16: the same bytes), each chain becomes `%var %0 (%i * N/4 + K/4) (K % 4)`,
//! and:
//! - loads of two or more components 4m..4m+3 of one `%i` in one block, with nothing that may
//!   write memory between them, become one 4-vector load at the place of the first
//!   (`Aligned 16`) and extracts of it;
//! - stores of all four components 4m..4m+3 of one `%i` in one block, each once, with nothing
//!   between them that touches memory (no load, image read, other store, atomic, barrier or
//!   call) but stores of the same variable at the same `%i`, become one 4-vector store at the
//!   place of the last.
//!
//! Other loads and stores stay scalar, through the retyped chain; chains no access goes
//! through any more are dropped. `%i * N/4` is computed in 32 bits: it wraps only past 2^32
//! 4-vectors (64 GiB), beyond any storage buffer's range (maxStorageBufferRange).

use std::collections::{HashMap, HashSet};

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Decoration, MemoryAccess, Op, StorageClass, Word};

/// `spirv` with its qualifying long-vector buffers retyped; `None` where nothing qualifies or
/// the module is not understood.
pub fn retype(spirv: &[u32]) -> Option<Vec<u32>> {
    let (mut m, end) = super::spirv::load_functions(spirv)?;
    let types = Types::of(&m);
    let mut candidates = types.candidates();
    if candidates.is_empty() {
        return None;
    }
    let chains = chains(&m, &types, &mut candidates);
    // Variables no function uses stay as they are.
    candidates.retain(|var, _| chains.values().any(|c| c.var == *var));
    if candidates.is_empty() {
        return None;
    }
    let chains: HashMap<Word, Chain> = chains
        .into_iter()
        .filter(|(_, c)| candidates.contains_key(&c.var))
        .collect();
    let mut next = m.header.as_ref()?.bound;
    let mut new = New::default();
    let decl = declare(&mut m, &types, &candidates, &mut next, &mut new)?;
    let plans: Vec<Vec<Plan>> = m
        .functions
        .iter()
        .map(|f| {
            f.blocks
                .iter()
                .map(|b| plan(&b.instructions, &chains, &types))
                .collect()
        })
        .collect();
    // The chains some load or store still goes through (the others are dropped).
    let mut used = HashSet::new();
    for (f, plans) in m.functions.iter().zip(&plans) {
        for (b, plan) in f.blocks.iter().zip(plans) {
            for (at, i) in b.instructions.iter().enumerate() {
                let grouped = match i.class.opcode {
                    Op::Load => i.result_id.is_some_and(|r| plan.loads.contains_key(&r)),
                    Op::Store => plan.stores.contains_key(&at),
                    _ => true,
                };
                if let (false, Some(Operand::IdRef(p))) = (grouped, i.operands.first()) {
                    used.insert(*p);
                }
            }
        }
    }
    // Names and decorations of the dropped chains go with them.
    let kept = |i: &Instruction| match i.operands.first() {
        Some(Operand::IdRef(id)) => !chains.contains_key(id) || used.contains(id),
        _ => true,
    };
    m.debug_names.retain(kept);
    m.annotations.retain(kept);
    let mut retyped = 0;
    for (f, plans) in m.functions.iter_mut().zip(&plans) {
        for (b, plan) in f.blocks.iter_mut().zip(plans) {
            b.instructions = rewrite(
                std::mem::take(&mut b.instructions),
                &Rewrite {
                    chains: &chains,
                    used: &used,
                    candidates: &candidates,
                    d: &decl,
                    plan,
                },
                &mut next,
            );
            retyped += plan.loads.len() + plan.stores.len();
        }
    }
    let buffers = candidates.len();
    log::debug!(target: "compiler", "vec4_arrays: {buffers} buffers, {retyped} accesses grouped");
    m.header.as_mut()?.bound = next;
    let mut out = m.assemble();
    out.extend_from_slice(&spirv[end..]);
    Some(out)
}

/// A qualifying variable: its scalar type and component count.
#[derive(Clone, Copy)]
struct Candidate {
    scalar: Word,
    n: u32,
}

/// A scalar access chain of a candidate: `%var %0 %i %K`.
#[derive(Clone, Copy)]
struct Chain {
    var: Word,
    index: Word,
    k: u32,
}

/// What the pass reads of the module's declarations.
#[derive(Default)]
struct Types {
    /// 32-bit int and float types.
    scalars32: HashSet<Word>,
    uint: Option<Word>,
    /// (component, count) → vector type.
    vectors: HashMap<(Word, u32), Word>,
    /// (storage class, pointee) → pointer type.
    pointer_of: HashMap<(StorageClass, Word), Word>,
    pointers: HashMap<Word, (StorageClass, Word)>,
    arrays: HashMap<Word, (Word, Word)>,
    runtime_arrays: HashMap<Word, Word>,
    structs: HashMap<Word, Vec<Word>>,
    /// 32-bit unsigned constants: id → value, and value → id.
    constants: HashMap<Word, u32>,
    constant_of: HashMap<u32, Word>,
    strides: HashMap<Word, u32>,
    blocks: HashSet<Word>,
    offsets: HashMap<(Word, u32), u32>,
    /// Storage-buffer variables → their pointer type.
    variables: HashMap<Word, Word>,
    /// Every value's type (global and in functions).
    of_value: HashMap<Word, Word>,
}

impl Types {
    fn of(m: &dr::Module) -> Types {
        let mut t = Types::default();
        for i in &m.types_global_values {
            let Some(r) = i.result_id else { continue };
            if let Some(ty) = i.result_type {
                t.of_value.insert(r, ty);
            }
            match (i.class.opcode, i.operands.as_slice()) {
                (Op::TypeInt, [Operand::LiteralBit32(32), Operand::LiteralBit32(s)]) => {
                    t.scalars32.insert(r);
                    if *s == 0 {
                        t.uint = t.uint.or(Some(r));
                    }
                }
                (Op::TypeFloat, [Operand::LiteralBit32(32), ..]) => _ = t.scalars32.insert(r),
                (Op::TypeVector, [Operand::IdRef(c), Operand::LiteralBit32(n)]) => {
                    _ = t.vectors.entry((*c, *n)).or_insert(r)
                }
                (Op::TypePointer, [Operand::StorageClass(sc), Operand::IdRef(p)]) => {
                    t.pointers.insert(r, (*sc, *p));
                    t.pointer_of.entry((*sc, *p)).or_insert(r);
                }
                (Op::TypeArray, [Operand::IdRef(e), Operand::IdRef(n)]) => {
                    _ = t.arrays.insert(r, (*e, *n))
                }
                (Op::TypeRuntimeArray, [Operand::IdRef(e)]) => _ = t.runtime_arrays.insert(r, *e),
                (Op::TypeStruct, ms) => {
                    let ids = ms.iter().map(|o| match o {
                        Operand::IdRef(id) => Some(*id),
                        _ => None,
                    });
                    if let Some(ids) = ids.collect::<Option<Vec<_>>>() {
                        t.structs.insert(r, ids);
                    }
                }
                (Op::Variable, [Operand::StorageClass(StorageClass::StorageBuffer), ..]) => {
                    if let Some(ty) = i.result_type {
                        t.variables.insert(r, ty);
                    }
                }
                _ => {}
            }
        }
        // Constants once the uint type is known (it is declared before them).
        for i in &m.types_global_values {
            if let (Op::Constant, Some(ty), Some(r), [Operand::LiteralBit32(v)]) = (
                i.class.opcode,
                i.result_type,
                i.result_id,
                i.operands.as_slice(),
            ) {
                if Some(ty) == t.uint {
                    t.constants.insert(r, *v);
                    t.constant_of.entry(*v).or_insert(r);
                }
            }
        }
        for i in &m.annotations {
            match (i.class.opcode, i.operands.as_slice()) {
                (
                    Op::Decorate,
                    [Operand::IdRef(id), Operand::Decoration(Decoration::ArrayStride), Operand::LiteralBit32(s)],
                ) => _ = t.strides.insert(*id, *s),
                (Op::Decorate, [Operand::IdRef(id), Operand::Decoration(Decoration::Block)]) => {
                    _ = t.blocks.insert(*id)
                }
                (
                    Op::MemberDecorate,
                    [Operand::IdRef(id), Operand::LiteralBit32(mb), Operand::Decoration(Decoration::Offset), Operand::LiteralBit32(o)],
                ) => _ = t.offsets.insert((*id, *mb), *o),
                _ => {}
            }
        }
        for f in &m.functions {
            let insts = f
                .parameters
                .iter()
                .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()));
            for i in insts {
                if let (Some(r), Some(ty)) = (i.result_id, i.result_type) {
                    t.of_value.insert(r, ty);
                }
            }
        }
        t
    }

    /// The storage-buffer variables of the right type.
    fn candidates(&self) -> HashMap<Word, Candidate> {
        let mut out = HashMap::new();
        for (&var, ptr) in &self.variables {
            let Some(&(StorageClass::StorageBuffer, block)) = self.pointers.get(ptr) else {
                continue;
            };
            let Some([runtime]) = self.structs.get(&block).map(Vec::as_slice) else {
                continue;
            };
            let Some(&(scalar, len)) = self
                .runtime_arrays
                .get(runtime)
                .and_then(|e| self.arrays.get(e))
            else {
                continue;
            };
            let Some(&n) = self.constants.get(&len) else {
                continue;
            };
            let element = self.runtime_arrays[runtime];
            if self.blocks.contains(&block)
                && self.offsets.get(&(block, 0)) == Some(&0)
                && matches!(n, 8 | 16)
                && self.scalars32.contains(&scalar)
                && self.strides.get(runtime) == Some(&(4 * n))
                && self.strides.get(&element).is_none_or(|&s| s == 4)
            {
                out.insert(var, Candidate { scalar, n });
            }
        }
        out
    }

    fn constant(&self, id: Word) -> Option<u32> {
        self.constants.get(&id).copied()
    }

    fn is_pointer(&self, id: Word) -> bool {
        self.of_value
            .get(&id)
            .is_some_and(|ty| self.pointers.contains_key(ty))
    }
}

fn ids(operands: &[Operand]) -> impl Iterator<Item = Word> + '_ {
    operands.iter().filter_map(|o| match o {
        Operand::IdRef(id) => Some(*id),
        _ => None,
    })
}

/// The candidates' scalar chains, removing from `candidates` every variable used otherwise
/// (or one of whose chains is used otherwise).
fn chains(
    m: &dr::Module,
    types: &Types,
    candidates: &mut HashMap<Word, Candidate>,
) -> HashMap<Word, Chain> {
    let mut chains = HashMap::new();
    let all = || {
        m.functions.iter().flat_map(|f| {
            f.parameters
                .iter()
                .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
        })
    };
    for i in all() {
        let ops = i.operands.as_slice();
        let Some(Operand::IdRef(base)) = ops.first() else {
            continue;
        };
        let Some(c) = candidates.get(base).copied() else {
            continue;
        };
        let chain = match (i.class.opcode, ops, i.result_id, i.result_type) {
            (
                Op::AccessChain | Op::InBoundsAccessChain,
                [_, Operand::IdRef(zero), Operand::IdRef(index), Operand::IdRef(k)],
                Some(r),
                Some(ty),
            ) => {
                let k = types.constant(*k).filter(|&k| k < c.n);
                let uint_index = types.of_value.get(index) == types.uint.as_ref();
                let to_scalar =
                    types.pointers.get(&ty) == Some(&(StorageClass::StorageBuffer, c.scalar));
                match (types.constant(*zero), k) {
                    (Some(0), Some(k)) if uint_index && to_scalar => Some((r, k, *index)),
                    _ => None,
                }
            }
            _ => None,
        };
        match chain {
            Some((r, k, index)) => {
                _ = chains.insert(
                    r,
                    Chain {
                        var: *base,
                        index,
                        k,
                    },
                )
            }
            None => _ = candidates.remove(base),
        }
    }
    // Every other mention of a candidate or of a chain: only loads' and stores' pointers.
    for i in all() {
        let ops = i.operands.as_slice();
        let skip = match (i.class.opcode, ops.first()) {
            (Op::AccessChain | Op::InBoundsAccessChain, Some(Operand::IdRef(b)))
                if candidates.contains_key(b)
                    && i.result_id.is_some_and(|r| chains.contains_key(&r)) =>
            {
                1
            }
            (Op::Load | Op::Store, Some(Operand::IdRef(p))) if chains.contains_key(p) => 1,
            _ => 0,
        };
        for id in ids(&ops[skip.min(ops.len())..]) {
            if candidates.remove(&id).is_none() {
                if let Some(c) = chains.get(&id) {
                    candidates.remove(&c.var);
                }
            }
        }
    }
    chains
}

/// The declarations the rewrite uses.
struct Declared {
    /// Scalar type → (its 4-vector type, the storage-buffer pointer to that vector).
    vectors: HashMap<Word, (Word, Word)>,
    uint: Word,
    /// Constants 0..=4.
    small: [Word; 5],
}

#[derive(Default)]
struct New {
    globals: Vec<Instruction>,
}

fn declare(
    m: &mut dr::Module,
    types: &Types,
    candidates: &HashMap<Word, Candidate>,
    next: &mut Word,
    new: &mut New,
) -> Option<Declared> {
    let uint = types.uint?;
    let mut id = || {
        *next += 1;
        *next - 1
    };
    let mut small = [0; 5];
    for (v, s) in small.iter_mut().enumerate() {
        *s = match types.constant_of.get(&(v as u32)) {
            Some(&c) => c,
            None => {
                let c = id();
                new.globals.push(Instruction::new(
                    Op::Constant,
                    Some(uint),
                    Some(c),
                    vec![Operand::LiteralBit32(v as u32)],
                ));
                c
            }
        };
    }
    let mut vectors = HashMap::new();
    let mut scalars: Vec<Word> = candidates.values().map(|c| c.scalar).collect();
    scalars.sort_unstable();
    scalars.dedup();
    for scalar in scalars {
        let vector = match types.vectors.get(&(scalar, 4)) {
            Some(&v) => v,
            None => {
                let v = id();
                new.globals.push(Instruction::new(
                    Op::TypeVector,
                    None,
                    Some(v),
                    vec![Operand::IdRef(scalar), Operand::LiteralBit32(4)],
                ));
                v
            }
        };
        let pointer = match types.pointer_of.get(&(StorageClass::StorageBuffer, vector)) {
            Some(&p) => p,
            None => {
                let p = id();
                new.globals.push(Instruction::new(
                    Op::TypePointer,
                    None,
                    Some(p),
                    vec![
                        Operand::StorageClass(StorageClass::StorageBuffer),
                        Operand::IdRef(vector),
                    ],
                ));
                p
            }
        };
        vectors.insert(scalar, (vector, pointer));
    }
    // Each variable its own runtime array, block and pointer (clspv shares them between
    // variables of one type; a variable left alone keeps the old ones).
    let mut vars: Vec<Word> = candidates.keys().copied().collect();
    vars.sort_unstable();
    let mut retype = HashMap::new();
    for &var in &vars {
        let (vector, _) = vectors[&candidates[&var].scalar];
        let (array, block, pointer) = (id(), id(), id());
        new.globals.push(Instruction::new(
            Op::TypeRuntimeArray,
            None,
            Some(array),
            vec![Operand::IdRef(vector)],
        ));
        new.globals.push(Instruction::new(
            Op::TypeStruct,
            None,
            Some(block),
            vec![Operand::IdRef(array)],
        ));
        new.globals.push(Instruction::new(
            Op::TypePointer,
            None,
            Some(pointer),
            vec![
                Operand::StorageClass(StorageClass::StorageBuffer),
                Operand::IdRef(block),
            ],
        ));
        let decorate = |target, d: Decoration, extra: Vec<Operand>| {
            let mut ops = vec![Operand::IdRef(target), Operand::Decoration(d)];
            ops.extend(extra);
            Instruction::new(Op::Decorate, None, None, ops)
        };
        m.annotations.push(decorate(
            array,
            Decoration::ArrayStride,
            vec![Operand::LiteralBit32(16)],
        ));
        m.annotations
            .push(decorate(block, Decoration::Block, vec![]));
        m.annotations.push(Instruction::new(
            Op::MemberDecorate,
            None,
            None,
            vec![
                Operand::IdRef(block),
                Operand::LiteralBit32(0),
                Operand::Decoration(Decoration::Offset),
                Operand::LiteralBit32(0),
            ],
        ));
        retype.insert(var, pointer);
    }
    // The new declarations go before the first retyped variable: everything they name
    // (the scalar types, the uint type) is declared before it, as its own type names them.
    let at = m
        .types_global_values
        .iter()
        .position(|i| i.result_id.is_some_and(|r| retype.contains_key(&r)))?;
    for i in &mut m.types_global_values {
        if let Some(&p) = i.result_id.and_then(|r| retype.get(&r)) {
            i.result_type = Some(p);
        }
    }
    let globals = std::mem::take(&mut new.globals);
    m.types_global_values.splice(at..at, globals);
    Some(Declared {
        vectors,
        uint,
        small,
    })
}

/// The grouped accesses of one block.
#[derive(Default)]
struct Plan {
    /// Load result → (group number, is the group's first load).
    loads: HashMap<Word, (usize, bool)>,
    /// Instruction position of a store → (group number, values of components 0..3 where it
    /// is the last store of its group).
    stores: HashMap<usize, (usize, Option<[Word; 4]>)>,
}

/// May instruction `i` write memory (or order memory accesses)?
fn may_write(i: &Instruction, types: &Types) -> bool {
    match i.class.opcode {
        Op::Store
        | Op::CopyMemory
        | Op::CopyMemorySized
        | Op::FunctionCall
        | Op::ImageWrite
        | Op::ControlBarrier
        | Op::MemoryBarrier
        | Op::AtomicFlagTestAndSet
        | Op::AtomicFlagClear => true,
        // GLSL's modf and frexp write through a pointer operand.
        Op::ExtInst => ids(&i.operands).any(|id| types.is_pointer(id)),
        op => {
            let code = op as u32;
            (227..=242).contains(&code) || code >= 4000
        }
    }
}

/// Does `op` read an image (OpImageSampleImplicitLod .. OpImageRead, the sparse ones)?
fn reads_image(op: Op) -> bool {
    let code = op as u32;
    (87..=98).contains(&code) || (305..=320).contains(&code)
}

/// A store through a candidate's chain, in a block.
struct Store {
    /// Its position.
    at: usize,
    component: u32,
    value: Word,
    /// Without memory operands but `Aligned`.
    plain: bool,
}

/// Plans the groups of `insts` (one block).
fn plan(insts: &[Instruction], chains: &HashMap<Word, Chain>, types: &Types) -> Plan {
    let mut plan = Plan::default();
    let mut groups = 0;
    // Loads: (epoch, var, index, m) → the loads' results in order.
    let mut epoch = 0;
    let mut loads: HashMap<(usize, Word, Word, u32), Vec<Word>> = HashMap::new();
    let mut order = vec![];
    // Stores: (epoch, m) → (position, component, value); the epoch's (var, index).
    let mut store_epoch = 0;
    let mut current: Option<(Word, Word)> = None;
    let mut stores: HashMap<(usize, u32), Vec<Store>> = HashMap::new();
    let mut store_order = vec![];
    for (at, i) in insts.iter().enumerate() {
        let pointer = match i.operands.first() {
            Some(Operand::IdRef(p)) => chains.get(p),
            _ => None,
        };
        match (i.class.opcode, pointer) {
            (Op::Load, Some(c)) => {
                let plain = matches!(
                    i.operands.as_slice(),
                    [_] | [_, Operand::MemoryAccess(MemoryAccess::ALIGNED), _]
                );
                if let (true, Some(r)) = (plain, i.result_id) {
                    let key = (epoch, c.var, c.index, c.k / 4);
                    if !loads.contains_key(&key) {
                        order.push(key);
                    }
                    loads.entry(key).or_default().push(r);
                }
                store_epoch += 1;
                current = None;
            }
            (Op::Store, Some(c)) => {
                epoch += 1;
                if current != Some((c.var, c.index)) {
                    store_epoch += 1;
                    current = Some((c.var, c.index));
                }
                let plain = matches!(
                    i.operands.as_slice(),
                    [_, _] | [_, _, Operand::MemoryAccess(MemoryAccess::ALIGNED), _]
                );
                if let Some(Operand::IdRef(value)) = i.operands.get(1) {
                    let key = (store_epoch, c.k / 4);
                    if !stores.contains_key(&key) {
                        store_order.push(key);
                    }
                    stores.entry(key).or_default().push(Store {
                        at,
                        component: c.k % 4,
                        value: *value,
                        plain,
                    });
                }
            }
            // Loads, and reads of images (which may view a buffer), see stores in order.
            (Op::Load, None) => {
                store_epoch += 1;
                current = None;
            }
            (op, _) if reads_image(op) => {
                store_epoch += 1;
                current = None;
            }
            _ if may_write(i, types) => {
                epoch += 1;
                store_epoch += 1;
                current = None;
            }
            _ => {}
        }
    }
    for key in order {
        let results = &loads[&key];
        if results.len() < 2 {
            continue;
        }
        for (n, r) in results.iter().enumerate() {
            plan.loads.insert(*r, (groups, n == 0));
        }
        groups += 1;
    }
    for key in store_order {
        let list = &stores[&key];
        let mut values = [None; 4];
        for s in list {
            if !s.plain || values[s.component as usize].is_some() {
                values = [None; 4];
                break;
            }
            values[s.component as usize] = Some(s.value);
        }
        let (Some(a), Some(b), Some(c), Some(d)) = (values[0], values[1], values[2], values[3])
        else {
            continue;
        };
        let last = list.iter().map(|s| s.at).max().expect("four stores");
        for s in list {
            let v = (s.at == last).then_some([a, b, c, d]);
            plan.stores.insert(s.at, (groups, v));
        }
        groups += 1;
    }
    plan
}

/// What the rewrite of a block reads.
struct Rewrite<'a> {
    chains: &'a HashMap<Word, Chain>,
    /// The chains still used.
    used: &'a HashSet<Word>,
    candidates: &'a HashMap<Word, Candidate>,
    d: &'a Declared,
    plan: &'a Plan,
}

/// The block's instructions rewritten.
fn rewrite(insts: Vec<Instruction>, r: &Rewrite, next: &mut Word) -> Vec<Instruction> {
    let (chains, candidates, d, plan) = (r.chains, r.candidates, r.d, r.plan);
    let mut id = || {
        *next += 1;
        *next - 1
    };
    let mut out = Vec::with_capacity(insts.len());
    // Group → its 4-vector load.
    let mut loaded: HashMap<usize, Word> = HashMap::new();
    // (%i, N/4, m) → `%i * N/4 + m`, computed once in the block (before its first use).
    let mut sums: HashMap<(Word, u32, u32), Word> = HashMap::new();
    let mut scaled: HashMap<(Word, u32), Word> = HashMap::new();
    let mut index = |c: &Chain, out: &mut Vec<Instruction>, id: &mut dyn FnMut() -> Word| {
        let (quarter, m) = (candidates[&c.var].n / 4, c.k / 4);
        if let Some(&s) = sums.get(&(c.index, quarter, m)) {
            return s;
        }
        let times = *scaled.entry((c.index, quarter)).or_insert_with(|| {
            let t = id();
            out.push(Instruction::new(
                Op::IMul,
                Some(d.uint),
                Some(t),
                vec![
                    Operand::IdRef(c.index),
                    Operand::IdRef(d.small[quarter as usize]),
                ],
            ));
            t
        });
        let sum = match m {
            0 => times,
            _ => {
                let s = id();
                out.push(Instruction::new(
                    Op::IAdd,
                    Some(d.uint),
                    Some(s),
                    vec![Operand::IdRef(times), Operand::IdRef(d.small[m as usize])],
                ));
                s
            }
        };
        sums.insert((c.index, quarter, m), sum);
        sum
    };
    let aligned = |pointer| {
        vec![
            Operand::IdRef(pointer),
            Operand::MemoryAccess(MemoryAccess::ALIGNED),
            Operand::LiteralBit32(16),
        ]
    };
    for (at, i) in insts.into_iter().enumerate() {
        let chain = match i.operands.first() {
            Some(Operand::IdRef(p)) => chains.get(p).copied(),
            _ => None,
        };
        match (i.class.opcode, i.result_id) {
            (Op::AccessChain | Op::InBoundsAccessChain, Some(res)) if chains.contains_key(&res) => {
                if !r.used.contains(&res) {
                    continue;
                }
                let c = chains[&res];
                let sum = index(&c, &mut out, &mut id);
                out.push(Instruction::new(
                    i.class.opcode,
                    i.result_type,
                    Some(res),
                    vec![
                        Operand::IdRef(c.var),
                        Operand::IdRef(d.small[0]),
                        Operand::IdRef(sum),
                        Operand::IdRef(d.small[(c.k % 4) as usize]),
                    ],
                ));
            }
            (Op::Load, Some(res)) if plan.loads.contains_key(&res) => {
                let c = chain.expect("planned loads go through chains");
                let (group, first) = plan.loads[&res];
                let (vector, pointer) = d.vectors[&candidates[&c.var].scalar];
                if first {
                    let sum = index(&c, &mut out, &mut id);
                    let (p, v) = (id(), id());
                    out.push(Instruction::new(
                        Op::AccessChain,
                        Some(pointer),
                        Some(p),
                        vec![
                            Operand::IdRef(c.var),
                            Operand::IdRef(d.small[0]),
                            Operand::IdRef(sum),
                        ],
                    ));
                    out.push(Instruction::new(
                        Op::Load,
                        Some(vector),
                        Some(v),
                        aligned(p),
                    ));
                    loaded.insert(group, v);
                }
                out.push(Instruction::new(
                    Op::CompositeExtract,
                    i.result_type,
                    Some(res),
                    vec![
                        Operand::IdRef(loaded[&group]),
                        Operand::LiteralBit32(c.k % 4),
                    ],
                ));
            }
            (Op::Store, _) if plan.stores.contains_key(&at) => {
                let c = chain.expect("planned stores go through chains");
                let Some(values) = plan.stores[&at].1 else {
                    continue;
                };
                let (vector, pointer) = d.vectors[&candidates[&c.var].scalar];
                let sum = index(&c, &mut out, &mut id);
                let (p, v) = (id(), id());
                out.push(Instruction::new(
                    Op::CompositeConstruct,
                    Some(vector),
                    Some(v),
                    values.iter().map(|&x| Operand::IdRef(x)).collect(),
                ));
                out.push(Instruction::new(
                    Op::AccessChain,
                    Some(pointer),
                    Some(p),
                    vec![
                        Operand::IdRef(c.var),
                        Operand::IdRef(d.small[0]),
                        Operand::IdRef(sum),
                    ],
                ));
                let mut ops = aligned(p);
                ops.insert(1, Operand::IdRef(v));
                out.push(Instruction::new(Op::Store, None, None, ops));
            }
            _ => out.push(i),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::options::clspv_args;
    use super::super::spirv::instructions;
    use super::super::tests::{spirv_val, target};
    use super::super::{compile, store_vectors};
    use super::retype;
    use std::collections::HashSet;

    const OP_TYPE_VECTOR: u32 = 23;
    const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
    const OP_LOAD: u32 = 61;
    const OP_STORE: u32 = 62;
    const OP_COMPOSITE_CONSTRUCT: u32 = 80;

    /// clspv's module for `source`, as `compile` makes it without this pass.
    fn clspv(source: &str) -> Vec<u32> {
        let args = clspv_args("", &target()).unwrap();
        compile(&[source.as_bytes()], &args).unwrap().spirv
    }

    /// (4-vector runtime arrays, 4-vector loads, 4-vector stores) of `spirv`.
    fn shape(spirv: &[u32]) -> (usize, usize, usize) {
        let mut vec4 = HashSet::new();
        let mut values = HashSet::new();
        let (mut arrays, mut loads, mut stores) = (0, 0, 0);
        for (_, i) in instructions(spirv) {
            match i[0] & 0xffff {
                OP_TYPE_VECTOR if i[3] == 4 => _ = vec4.insert(i[1]),
                OP_TYPE_RUNTIME_ARRAY if vec4.contains(&i[2]) => arrays += 1,
                OP_LOAD if vec4.contains(&i[1]) => loads += 1,
                OP_COMPOSITE_CONSTRUCT if vec4.contains(&i[1]) => _ = values.insert(i[2]),
                OP_STORE if values.contains(&i[2]) => stores += 1,
                _ => {}
            }
        }
        (arrays, loads, stores)
    }

    #[test]
    fn clpeak_float16_buffer_becomes_an_array_of_4_vectors() {
        let spirv = clspv(
            "kernel void v16(global float16 *A, global float *B) {
                int id = get_group_id(0) * get_local_size(0) * 16 + get_local_id(0);
                float16 sum = 0;
                for (int j = 0; j < 4; j++) { sum += A[id]; id += get_local_size(0); }
                B[get_global_id(0)] = sum.s0 + sum.s5 + sum.sa + sum.sf;
            }",
        );
        assert_eq!(shape(&spirv), (0, 0, 0));
        let out = retype(&spirv).expect("the float16 buffer qualifies");
        spirv_val(&out);
        // One array; the four components each fetch reads are in 4 different 4-vectors.
        let (arrays, loads, stores) = shape(&out);
        assert_eq!((arrays, stores), (1, 0));
        assert!(loads >= 4, "{loads} 4-vector loads");
    }

    #[test]
    fn whole_elements_are_read_and_written_as_4_vectors() {
        for t in ["float16", "int16", "uint8", "float8"] {
            let spirv = clspv(&format!(
                "kernel void copy(global const {t} *a, global {t} *b) {{
                    int i = get_global_id(0);
                    b[i] = a[(i * 7) % 64] + a[i];
                }}"
            ));
            let out = retype(&spirv).expect("both buffers qualify");
            spirv_val(&out);
            let quarters = if t.ends_with("16") { 4 } else { 2 };
            assert_eq!(shape(&out), (2, 2 * quarters, quarters), "{t}");
            // The store_vectors pass before it changes nothing here.
            assert_eq!(store_vectors::merge(&spirv), spirv);
        }
    }

    #[test]
    fn partial_writes_stay_scalar_and_full_groups_merge() {
        let spirv = clspv(
            "kernel void part(global float16 *a) {
                int i = get_global_id(0);
                a[i].s3 = 1.0f;
                a[i].lo.hi = (float4)(2.0f);
            }",
        );
        let out = retype(&spirv).expect("the buffer qualifies");
        spirv_val(&out);
        assert_eq!(shape(&out), (1, 0, 1));
    }

    #[test]
    fn other_buffers_and_uses_are_left_alone() {
        // 8-bit components; 64-bit components; a select between two buffers.
        for source in [
            "kernel void k(global uchar16 *a) { a[get_global_id(0)] += (uchar16)(1); }",
            "kernel void k(global long16 *a) { a[get_global_id(0)] += (long16)(1); }",
            "kernel void k(global float16 *a, global float16 *b, global float *o) {
                int i = get_global_id(0);
                global float16 *p = (i & 1) ? a : b;
                o[i] = p[i].s0 + p[i].s5;
            }",
        ] {
            let spirv = clspv(source);
            assert_eq!(retype(&spirv), None, "{source}");
        }
    }
}
