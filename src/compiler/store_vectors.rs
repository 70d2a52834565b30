//! Scalar stores into consecutive elements of a write-only storage buffer become one store of
//! a vector (issue 16): up to 16 bytes of 8-, 16- and 32-bit scalars as 64-bit words (on
//! devices with 64-bit integers; else 32-bit ones), four 64-bit scalars as a 4-vector.
//!
//! clspv's `-long-vector` writes a vector of 8 or 16 components one component at a time: the
//! relationals shuffle tests' kernels (32 copies of an int16 in one work-item, behind
//! `if (get_global_id(0) != 0) return;`) are 512 scalar `OpStore`s in one block, and basic
//! vector_creation's (~270 lines of `result[k] = (char16)(src[0], vload2(0, src + 1), ...)`
//! in one kernel) thousands. lavapipe stores a vector one component at a time, each behind a
//! bounds check and a branch (in divergent control flow, a loop over the SIMD lanes), and
//! LLVM's coroutine splitting at the first dispatch grows faster than the number of blocks:
//! seconds to a minute per such kernel (docs/BENCHMARKS.md). Fewer, wider components divide
//! it: a `char16` line is two 64-bit components instead of 16 bytes (vector_creation's
//! `char16` kernels 8-50 s → ~1 s each, `int16` 30-60 s → 4-9 s).
//!
//! A storage-buffer variable qualifies where its type is a Block struct of one runtime array
//! (offset 0) of an 8-, 16-, 32- or 64-bit scalar with its natural stride, and where every use
//! of it is an `OpAccessChain` with the constant indices 0 and K whose only uses are
//! `OpStore`s (plain, or `Aligned`), no K stored twice in one function: the kernel never reads
//! it, and no two stores of it overlap. The N stores of K = Nk..Nk+N-1 (N scalars filling 16
//! bytes, else 8, else (8- and 16-bit scalars) 4; four 64-bit scalars) with nothing between
//! them but such access chains and stores (in one block) become one store of their values at
//! the place of the last (bytes and halves packed into 32-bit words, words into 64-bit ones,
//! by `OpBitcast`: the lowest component in the lowest bits, as memory holds them), through a
//! second variable at the same descriptor that views the buffer as an array of what is
//! stored (the same decorations; `aliased::declare_aliased` decorates both where a launch
//! binds the buffer twice). Other instructions keep their order with respect to every store.
//! Modules where nothing qualifies are returned unchanged; the output depends on the input
//! only.

use super::spirv::instructions;
use std::collections::{BTreeMap, HashMap, HashSet};

const OP_ENTRY_POINT: u32 = 15;
const OP_CAPABILITY: u32 = 17;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_VARIABLE: u32 = 59;
const OP_STORE: u32 = 62;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const OP_COMPOSITE_CONSTRUCT: u32 = 80;
const OP_BITCAST: u32 = 124;
const STORAGE_BUFFER: u32 = 12;
const CAPABILITY_INT64: u32 = 11;
const DECORATION_BLOCK: u32 = 2;
const DECORATION_ARRAY_STRIDE: u32 = 6;
const DECORATION_OFFSET: u32 = 35;
/// The memory-operand bit of `Aligned`.
const ALIGNED: u32 = 0x2;

/// One store through a qualifying variable: its word offset, element K and value id.
#[derive(Clone, Copy)]
struct Store {
    at: usize,
    k: u32,
    value: u32,
}

/// What the pass reads of the module's declarations.
#[derive(Default)]
struct Module {
    scalar_bits: HashMap<u32, u32>,
    /// (component type, count) → vector type.
    vectors: HashMap<(u32, u32), u32>,
    runtime_arrays: HashMap<u32, u32>,
    structs: HashMap<u32, Vec<u32>>,
    pointers: HashMap<u32, (u32, u32)>,
    /// 32-bit constants: id → value.
    constants: HashMap<u32, u32>,
    /// The `uint` constants: value → the first id.
    uint_constants: BTreeMap<u32, u32>,
    uint: Option<u32>,
    /// `OpTypeInt 64 0`.
    ulong: Option<u32>,
    /// The module declares the Int64 capability.
    int64: bool,
    /// 64-bit words may be stored.
    wide: bool,
    strides: HashMap<u32, u32>,
    blocks: HashSet<u32>,
    offsets: HashMap<(u32, u32), u32>,
    /// Storage-buffer variables → their pointer type.
    variables: HashMap<u32, u32>,
    /// The word after the last decoration.
    last_decoration: Option<usize>,
    first_function: Option<usize>,
}

/// What a merged store stores: four 64-bit scalars as a 4-vector of their type, or `bytes`
/// (4, 8 or 16) of 8-, 16- or 32-bit scalars, packed into 32-bit words (`uint`, or a vector
/// of them; 32-bit scalars stay a vector of their type) or, where the module has 64-bit
/// integers (`wide`), 64-bit ones (`ulong` or `ulong2`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
enum Shape {
    Vector4,
    Bytes { bytes: u32, wide: bool },
}

impl Shape {
    /// The shapes tried for a scalar of `bits` bits, widest first (lavapipe's cost goes with
    /// the number of components stored).
    fn for_bits(bits: u32, int64: bool) -> Vec<Shape> {
        let bytes = |bytes, wide| Shape::Bytes { bytes, wide };
        match (bits, int64) {
            (64, _) => vec![Shape::Vector4],
            (32, true) => vec![bytes(16, true), bytes(8, true)],
            (32, false) => vec![bytes(16, false)],
            (_, true) => vec![bytes(16, true), bytes(8, true), bytes(4, false)],
            (_, false) => vec![bytes(16, false), bytes(8, false), bytes(4, false)],
        }
    }

    /// How many scalars of `bits` bits one store of this shape holds.
    fn scalars(self, bits: u32) -> u32 {
        match self {
            Shape::Vector4 => 4,
            Shape::Bytes { bytes, .. } => bytes * 8 / bits,
        }
    }
}

/// A merged store: the variable, the shape and index of the vector, and the values in order.
struct Merged {
    var: u32,
    shape: Shape,
    index: u32,
    values: Vec<u32>,
}

/// `spirv` with the stores merged; unchanged where nothing qualifies or the module is not
/// understood. `int64`: the device has 64-bit integers (the module may then store 64-bit
/// words, with `OpCapability Int64` added where it has none).
pub fn merge(spirv: &[u32], int64: bool) -> Vec<u32> {
    merged(spirv, int64).unwrap_or_else(|| spirv.to_vec())
}

fn merged(spirv: &[u32], int64: bool) -> Option<Vec<u32>> {
    let mut m = Module::read(spirv)?;
    m.wide = int64 || m.int64;
    let mut candidates = m.candidates();
    let (chains, stores) = m.stores(spirv, &mut candidates);
    let (dropped, merged_at) = m.groups(spirv, &chains, &stores, &candidates);
    if merged_at.is_empty() {
        return None;
    }
    Some(m.assemble(spirv, &candidates, &dropped, &merged_at))
}

impl Module {
    fn read(spirv: &[u32]) -> Option<Module> {
        let mut m = Module::default();
        let mut end = 5;
        for (at, i) in instructions(spirv) {
            end = at + i.len();
            m.declaration(at, i);
        }
        let whole = end == spirv.len() && m.first_function.is_some();
        (whole && m.uint.is_some() && m.last_decoration.is_some()).then_some(m)
    }

    fn declaration(&mut self, at: usize, i: &[u32]) {
        let w = |n: usize| i.get(n).copied();
        match i[0] & 0xffff {
            OP_CAPABILITY if w(1) == Some(CAPABILITY_INT64) => self.int64 = true,
            OP_TYPE_INT if i.len() == 4 => {
                self.scalar_bits.insert(i[1], i[2]);
                match (i[2], i[3]) {
                    (32, 0) => self.uint = self.uint.or(Some(i[1])),
                    (64, 0) => self.ulong = self.ulong.or(Some(i[1])),
                    _ => {}
                }
            }
            OP_TYPE_FLOAT if i.len() >= 3 => _ = self.scalar_bits.insert(i[1], i[2]),
            OP_TYPE_VECTOR if i.len() == 4 => _ = self.vectors.entry((i[2], i[3])).or_insert(i[1]),
            OP_TYPE_RUNTIME_ARRAY if i.len() == 3 => _ = self.runtime_arrays.insert(i[1], i[2]),
            OP_TYPE_STRUCT => _ = self.structs.insert(i[1], i[2..].to_vec()),
            OP_TYPE_POINTER if i.len() == 4 => _ = self.pointers.insert(i[1], (i[2], i[3])),
            OP_CONSTANT if i.len() == 4 => {
                self.constants.insert(i[2], i[3]);
                if self.uint == Some(i[1]) {
                    self.uint_constants.entry(i[3]).or_insert(i[2]);
                }
            }
            op @ (OP_DECORATE | OP_MEMBER_DECORATE) => {
                self.last_decoration = Some(at + i.len());
                match (op, w(2), w(3), w(4)) {
                    (OP_DECORATE, Some(DECORATION_ARRAY_STRIDE), Some(s), _) => {
                        _ = self.strides.insert(i[1], s)
                    }
                    (OP_DECORATE, Some(DECORATION_BLOCK), ..) => _ = self.blocks.insert(i[1]),
                    (OP_MEMBER_DECORATE, Some(m), Some(DECORATION_OFFSET), Some(o)) => {
                        _ = self.offsets.insert((i[1], m), o)
                    }
                    _ => {}
                }
            }
            OP_VARIABLE if w(3) == Some(STORAGE_BUFFER) => _ = self.variables.insert(i[2], i[1]),
            OP_FUNCTION => self.first_function = self.first_function.or(Some(at)),
            _ => {}
        }
    }

    /// The storage-buffer variables of the right type: variable → its scalar element type.
    fn candidates(&self) -> HashMap<u32, u32> {
        let mut candidates = HashMap::new();
        for (&var, ptr) in &self.variables {
            let Some(&(STORAGE_BUFFER, block)) = self.pointers.get(ptr) else {
                continue;
            };
            let Some([array]) = self.structs.get(&block).map(|m| m.as_slice()) else {
                continue;
            };
            let Some(&scalar) = self.runtime_arrays.get(array) else {
                continue;
            };
            let Some(&bits) = self.scalar_bits.get(&scalar) else {
                continue;
            };
            if self.blocks.contains(&block)
                && self.offsets.get(&(block, 0)) == Some(&0)
                && matches!(bits, 8 | 16 | 32 | 64)
                && self.strides.get(array) == Some(&(bits / 8))
            {
                candidates.insert(var, scalar);
            }
        }
        candidates
    }

    /// The candidates' access chains (result → (variable, K)) and stores, removing from
    /// `candidates` every variable used otherwise.
    fn stores(
        &self,
        spirv: &[u32],
        candidates: &mut HashMap<u32, u32>,
    ) -> (HashMap<u32, (u32, u32)>, HashMap<u32, Vec<Store>>) {
        let mut chains: HashMap<u32, (u32, u32)> = HashMap::new();
        let mut stores: HashMap<u32, Vec<Store>> = HashMap::new();
        let mut seen: HashMap<u32, HashSet<u32>> = HashMap::new();
        let mut in_function = false;
        for (at, i) in instructions(spirv) {
            let op = i[0] & 0xffff;
            if op == OP_FUNCTION {
                (in_function, seen) = (true, HashMap::new());
            }
            if op == OP_FUNCTION_END {
                in_function = false;
            }
            // Declarations (decorations, names, the entry point's interface) are not uses.
            if !in_function || op == OP_FUNCTION {
                continue;
            }
            if op == OP_ACCESS_CHAIN && i.len() == 6 && candidates.contains_key(&i[3]) {
                match (self.constants.get(&i[4]), self.constants.get(&i[5])) {
                    (Some(0), Some(&k)) => _ = chains.insert(i[2], (i[3], k)),
                    _ => _ = candidates.remove(&i[3]),
                }
                continue;
            }
            if let Some(&(var, k)) = chains
                .get(i.get(1).unwrap_or(&0))
                .filter(|_| op == OP_STORE)
            {
                let plain = i.len() == 3 || (i.len() == 5 && i[3] == ALIGNED);
                if !plain || !seen.entry(var).or_default().insert(k) {
                    candidates.remove(&var);
                }
                let (k, value) = (k, *i.get(2).unwrap_or(&0));
                stores.entry(var).or_default().push(Store { at, k, value });
                continue;
            }
            // Any other mention of a candidate or of one of its chains disqualifies it (a
            // literal equal to such an id only makes this conservative).
            for word in &i[1..] {
                if candidates.remove(word).is_none() {
                    if let Some((var, _)) = chains.get(word) {
                        candidates.remove(var);
                    }
                }
            }
        }
        (chains, stores)
    }

    /// The module with the merged stores and the vector views they go through.
    fn assemble(
        &mut self,
        spirv: &[u32],
        candidates: &HashMap<u32, u32>,
        dropped: &HashSet<usize>,
        merged_at: &BTreeMap<usize, Merged>,
    ) -> Vec<u32> {
        let mut new = New {
            bound: spirv[3],
            globals: vec![],
            decorations: vec![],
            views: BTreeMap::new(),
            indices: self.uint_constants.clone(),
        };
        let uint = self.uint.expect("read checks it");
        let mut code: HashMap<usize, Vec<u32>> = HashMap::new();
        for (&at, m) in merged_at {
            let scalar = candidates[&m.var];
            let (view, elem_ptr, zero) = self.view(spirv, &mut new, m.var, scalar, m.shape);
            let index = new.index(uint, m.index);
            let mut c = vec![];
            let value = self.value(&mut new, &mut c, scalar, m);
            let ptr = new.id();
            c.extend(inst(OP_ACCESS_CHAIN, &[elem_ptr, ptr, view, zero, index]));
            c.extend(inst(OP_STORE, &[ptr, value]));
            code.insert(at, c);
        }
        let mut out = spirv[..5].to_vec();
        out[3] = new.bound;
        let wide = |m: &Merged| matches!(m.shape, Shape::Bytes { wide: true, .. });
        if !self.int64 && merged_at.values().any(wide) {
            out.extend(inst(OP_CAPABILITY, &[CAPABILITY_INT64]));
        }
        for (at, i) in instructions(spirv) {
            if Some(at) == self.last_decoration {
                out.extend(&new.decorations);
            }
            if Some(at) == self.first_function {
                out.extend(&new.globals);
            }
            if let Some(c) = code.get(&at) {
                out.extend(c);
            } else if !dropped.contains(&at) {
                new.entry_point(spirv, i, &mut out);
            }
        }
        out
    }

    /// Appends to `c` the instructions that make `m`'s value (of the scalar type `scalar`);
    /// returns its id.
    fn value(&mut self, new: &mut New, c: &mut Vec<u32>, scalar: u32, m: &Merged) -> u32 {
        let ty = self.stored_type(new, scalar, m.shape);
        let Shape::Bytes { bytes, wide } = m.shape else {
            return construct(new, c, ty, &m.values);
        };
        let uint = self.uint.expect("read checks it");
        let bits = self.scalar_bits[&scalar];
        // The 32-bit words: 8- and 16-bit scalars packed by a bitcast of their vector.
        let mut words = vec![];
        if bits == 32 {
            words.clone_from(&m.values);
        } else {
            let packed_ty = self.vector(new, scalar, 32 / bits);
            for w in m.values.chunks((32 / bits) as usize) {
                let (packed, word) = (construct(new, c, packed_ty, w), new.id());
                c.extend(inst(OP_BITCAST, &[uint, word, packed]));
                words.push(word);
            }
        }
        if let [word] = words[..] {
            return word;
        }
        let narrow = self.stored_type(new, scalar, Shape::Bytes { bytes, wide: false });
        let value = construct(new, c, narrow, &words);
        if !wide {
            return value;
        }
        let long = new.id();
        c.extend(inst(OP_BITCAST, &[ty, long, value]));
        long
    }

    /// The type a store of `shape` stores, for scalars of type `scalar`.
    fn stored_type(&mut self, new: &mut New, scalar: u32, shape: Shape) -> u32 {
        match shape {
            Shape::Vector4 => self.vector(new, scalar, 4),
            Shape::Bytes { bytes, wide: true } => {
                let ulong = *self.ulong.get_or_insert_with(|| {
                    let ulong = new.id();
                    new.globals.extend(inst(OP_TYPE_INT, &[ulong, 64, 0]));
                    ulong
                });
                match bytes {
                    8 => ulong,
                    _ => self.vector(new, ulong, bytes / 8),
                }
            }
            Shape::Bytes { bytes, wide: false } => {
                let word = match self.scalar_bits[&scalar] {
                    32 => scalar,
                    _ => self.uint.expect("read checks it"),
                };
                match bytes {
                    4 => word,
                    _ => self.vector(new, word, bytes / 4),
                }
            }
        }
    }

    /// The vector type of `n` `component`s, declared where the module has none.
    fn vector(&mut self, new: &mut New, component: u32, n: u32) -> u32 {
        *self.vectors.entry((component, n)).or_insert_with(|| {
            let v = new.id();
            new.globals.extend(inst(OP_TYPE_VECTOR, &[v, component, n]));
            v
        })
    }

    /// The view of `var` (element type `scalar`) for stores of `shape`, declared on first
    /// use: (the view, its element pointer type, a constant 0).
    fn view(
        &mut self,
        spirv: &[u32],
        new: &mut New,
        var: u32,
        scalar: u32,
        shape: Shape,
    ) -> (u32, u32, u32) {
        if let Some(&v) = new.views.get(&(var, shape)) {
            return v;
        }
        let uint = self.uint.expect("read checks it");
        let element = self.stored_type(new, scalar, shape);
        let stride = match shape {
            Shape::Vector4 => self.scalar_bits[&scalar] / 2,
            Shape::Bytes { bytes, .. } => bytes,
        };
        let zero = new.index(uint, 0);
        let (array, block, block_ptr) = (new.id(), new.id(), new.id());
        let (elem_ptr, view) = (new.id(), new.id());
        let g = &mut new.globals;
        g.extend(inst(OP_TYPE_RUNTIME_ARRAY, &[array, element]));
        g.extend(inst(OP_TYPE_STRUCT, &[block, array]));
        g.extend(inst(OP_TYPE_POINTER, &[block_ptr, STORAGE_BUFFER, block]));
        g.extend(inst(OP_TYPE_POINTER, &[elem_ptr, STORAGE_BUFFER, element]));
        g.extend(inst(OP_VARIABLE, &[block_ptr, view, STORAGE_BUFFER]));
        let d = &mut new.decorations;
        d.extend(inst(OP_DECORATE, &[array, DECORATION_ARRAY_STRIDE, stride]));
        d.extend(inst(OP_DECORATE, &[block, DECORATION_BLOCK]));
        d.extend(inst(OP_MEMBER_DECORATE, &[block, 0, DECORATION_OFFSET, 0]));
        for (_, i) in instructions(spirv) {
            if i[0] & 0xffff == OP_DECORATE && i.get(1) == Some(&var) {
                d.extend(inst(OP_DECORATE, &[&[view], &i[2..]].concat()));
            }
        }
        new.views.insert((var, shape), (view, elem_ptr, zero));
        (view, elem_ptr, zero)
    }

    /// The groups: the stores of K = Nk..Nk+N-1 of one variable (N from the widest shape of
    /// its scalar that they fill) in a run of the candidates' chains and stores with nothing
    /// else between them. Returns the stores dropped, and at the last of each group, what is
    /// stored there instead.
    fn groups(
        &self,
        spirv: &[u32],
        chains: &HashMap<u32, (u32, u32)>,
        stores: &HashMap<u32, Vec<Store>>,
        candidates: &HashMap<u32, u32>,
    ) -> (HashSet<usize>, BTreeMap<usize, Merged>) {
        let mut run_of: HashMap<usize, usize> = HashMap::new();
        let mut run = 0;
        for (at, i) in instructions(spirv) {
            let part = match i[0] & 0xffff {
                OP_ACCESS_CHAIN => i.len() == 6 && chains.contains_key(&i[2]),
                OP_STORE => chains.contains_key(&i[1]),
                _ => false,
            };
            if part {
                run_of.insert(at, run);
            } else {
                run += 1;
            }
        }
        let mut dropped = HashSet::new();
        let mut merged_at = BTreeMap::new();
        for (&var, list) in stores.iter().filter(|(v, _)| candidates.contains_key(v)) {
            let bits = self.scalar_bits[&candidates[&var]];
            let shapes = Shape::for_bits(bits, self.wide);
            let mut by_run: HashMap<usize, BTreeMap<u32, Store>> = HashMap::new();
            for s in list {
                by_run.entry(run_of[&s.at]).or_default().insert(s.k, *s);
            }
            for mut group in by_run.into_values() {
                for &shape in &shapes {
                    let n = shape.scalars(bits);
                    let starts: Vec<u32> = group.keys().copied().filter(|k| k % n == 0).collect();
                    for k in starts {
                        if !(0..n).all(|j| group.contains_key(&(k + j))) {
                            continue;
                        }
                        let parts: Vec<Store> =
                            (0..n).filter_map(|j| group.remove(&(k + j))).collect();
                        let last = parts.iter().map(|s| s.at).max().expect("n > 0");
                        dropped.extend(parts.iter().map(|s| s.at));
                        let values = parts.iter().map(|s| s.value).collect();
                        let index = k / n;
                        merged_at.insert(
                            last,
                            Merged {
                                var,
                                shape,
                                index,
                                values,
                            },
                        );
                    }
                }
            }
        }
        (dropped, merged_at)
    }
}

/// The declarations the pass adds.
struct New {
    bound: u32,
    globals: Vec<u32>,
    decorations: Vec<u32>,
    /// (variable, shape) → (its view, the view's element pointer type, a constant 0).
    views: BTreeMap<(u32, Shape), (u32, u32, u32)>,
    /// The module's `uint` constants and those added: value → id.
    indices: BTreeMap<u32, u32>,
}

impl New {
    fn id(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    /// The id of a `uint` constant of `value` (declared where the module has none).
    fn index(&mut self, uint: u32, value: u32) -> u32 {
        if let Some(&id) = self.indices.get(&value) {
            return id;
        }
        let id = self.id();
        self.globals.extend(inst(OP_CONSTANT, &[uint, id, value]));
        self.indices.insert(value, id);
        id
    }

    /// Copies instruction `i`, with the views of the variables an entry point lists added to
    /// its interface (from SPIR-V 1.4 an entry point lists every global variable it uses).
    fn entry_point(&self, spirv: &[u32], i: &[u32], out: &mut Vec<u32>) {
        let listed: Vec<u32> = match i[0] & 0xffff {
            OP_ENTRY_POINT if spirv[1] >= 0x0001_0400 => self
                .views
                .iter()
                .filter(|((var, _), _)| i[3..].contains(var))
                .map(|(_, v)| v.0)
                .collect(),
            _ => vec![],
        };
        if listed.is_empty() {
            out.extend(i);
        } else {
            out.push(i[0] + ((listed.len() as u32) << 16));
            out.extend(&i[1..]);
            out.extend(listed);
        }
    }
}

/// Appends to `c` an `OpCompositeConstruct` of type `ty` from `parts`; returns its id.
fn construct(new: &mut New, c: &mut Vec<u32>, ty: u32, parts: &[u32]) -> u32 {
    let value = new.id();
    c.extend(inst(
        OP_COMPOSITE_CONSTRUCT,
        &[&[ty, value], parts].concat(),
    ));
    value
}

fn inst(op: u32, operands: &[u32]) -> Vec<u32> {
    let mut v = vec![op | ((operands.len() as u32 + 1) << 16)];
    v.extend(operands);
    v
}
