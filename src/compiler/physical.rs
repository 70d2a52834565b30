//! A repair of clspv's physical-addressing modules (`-arch=spir64 -physical-storage-buffers`):
//! negative constant offsets in pointer arithmetic, and (for NVIDIA's driver) element
//! indexes that may be negative computed as integers ([`chains_as_integers`]).
//!
//! The pinned clspv emits a negative constant element index as its 32-bit two's complement:
//! `*(p - 2)` becomes `OpPtrAccessChain %p %uint_4294967294`, which drivers extend without
//! sign (lavapipe reads 16 GiB past `p` and faults), and `p + k - 1` becomes
//! `OpIAdd %ulong %k %ulong_4294967295`, a 64-bit constant that lost its upper half (clspv
//! issue 1617). This pass gives such constants their sign back where they compute an element
//! index: a 32-bit constant with its top bit set used as an `OpPtrAccessChain` element, and a
//! 64-bit constant in [2^31, 2^32) used as an element or in the additions, subtractions and
//! multiplications that compute one, become the 64-bit constant sign-extended. (An element
//! index of 2^31 or more meant as such, a constant offset of over 8 GiB of ints, is changed
//! too: no such kernel is known.) It also retypes the base of an `OpPtrAccessChain` that
//! clspv leaves typed as bytes (or words) while the result is a pointer to a struct (`&nodes[i - 1]` of a
//! struct array, whose -1 then moves one byte, not one struct, and which spirv-val refuses):
//! an `OpBitcast` of the base to the result's type goes before it. A module the pass does not
//! understand is left as it is.

use std::collections::{HashMap, HashSet};

const OP_TYPE_INT: u32 = 21;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_BITCAST: u32 = 124;
const STORAGE_PHYSICAL: u32 = 5349;
/// Instructions whose words are (opcode, result type, result id, ...): to know a base's type.
const TYPED_RESULTS: [u32; 10] = [55, 59, 61, 65, 67, 70, 83, 120, 124, 245];
const OP_CONSTANT: u32 = 43;
const OP_PTR_ACCESS_CHAIN: u32 = 67;
const OP_IN_BOUNDS_PTR_ACCESS_CHAIN: u32 = 70;
const OP_S_CONVERT: u32 = 114;
const OP_I_ADD: u32 = 128;
const OP_I_SUB: u32 = 130;
const OP_I_MUL: u32 = 132;
const OP_U_CONVERT: u32 = 113;
const OP_U_DIV: u32 = 134;
const OP_SHIFT_RIGHT_LOGICAL: u32 = 194;
const OP_SHIFT_LEFT_LOGICAL: u32 = 196;
/// The integer operations whose operands [`chains_as_integers`] follows.
const DEFINITIONS: [u32; 6] = [
    OP_U_CONVERT,
    OP_U_DIV,
    OP_SHIFT_RIGHT_LOGICAL,
    OP_I_ADD,
    OP_I_MUL,
    OP_SHIFT_LEFT_LOGICAL,
];

/// Whether `spirv` is a physical-addressing module (OpMemoryModel PhysicalStorageBuffer64).
pub fn is_physical(spirv: &[u32]) -> bool {
    const OP_MEMORY_MODEL: u32 = 14;
    const PHYSICAL_STORAGE_BUFFER_64: u32 = 5348;
    super::spirv::instructions(spirv).any(|(_, i)| {
        i[0] & 0xffff == OP_MEMORY_MODEL && i.get(1) == Some(&PHYSICAL_STORAGE_BUFFER_64)
    })
}

/// The module with negative constant element indices sign-extended, byte bases retyped and
/// chains that may go below their base computed as integers; None if nothing changed or the
/// module is not understood.
pub fn repair(spirv: &[u32]) -> Option<Vec<u32>> {
    if spirv.len() < 5 {
        return None;
    }
    let mut insts: Vec<Vec<u32>> = vec![];
    let mut i = 5;
    while i < spirv.len() {
        let count = (spirv[i] >> 16) as usize;
        if count == 0 || i + count > spirv.len() {
            return None;
        }
        insts.push(spirv[i..i + count].to_vec());
        i += count;
    }
    // Integer types (id → (width, signed)) and 32/64-bit constants (id → (type, value)).
    let mut ints: HashMap<u32, u32> = HashMap::new();
    let mut constants: HashMap<u32, (u32, u64)> = HashMap::new();
    // Result id → (opcode, operand ids) of the arithmetic that may compute an index.
    let mut arith: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut elements: Vec<u32> = vec![];
    for w in &insts {
        match w[0] & 0xffff {
            OP_TYPE_INT if w.len() == 4 => {
                ints.insert(w[1], w[2]);
            }
            OP_CONSTANT if w.len() >= 4 => match ints.get(&w[1]) {
                Some(32) => {
                    constants.insert(w[2], (w[1], u64::from(w[3])));
                }
                Some(64) if w.len() == 5 => {
                    constants.insert(w[2], (w[1], u64::from(w[3]) | u64::from(w[4]) << 32));
                }
                _ => {}
            },
            OP_PTR_ACCESS_CHAIN | OP_IN_BOUNDS_PTR_ACCESS_CHAIN if w.len() >= 5 => {
                elements.push(w[4]);
            }
            OP_I_ADD | OP_I_SUB | OP_I_MUL if w.len() == 5 => {
                arith.insert(w[2], vec![w[3], w[4]]);
            }
            OP_S_CONVERT if w.len() == 4 => {
                arith.insert(w[2], vec![w[3]]);
            }
            _ => {}
        }
    }
    let mut bound = spirv[3];
    let retyped = retype_byte_bases(&mut insts, &mut bound);
    let Some(long) = ints.iter().find(|(_, &w)| w == 64).map(|(&id, _)| id) else {
        return retyped.then(|| assemble(spirv, bound, insts));
    };
    // The ids that compute an element index: the elements and, backwards, their operands.
    let mut index_ids: HashSet<u32> = HashSet::new();
    let mut todo = elements.clone();
    while let Some(id) = todo.pop() {
        if index_ids.insert(id) {
            todo.extend(arith.get(&id).into_iter().flatten());
        }
    }
    let negative = |id: u32, direct: bool| -> Option<u64> {
        let &(ty, value) = constants.get(&id)?;
        let width = *ints.get(&ty)?;
        let lost_sign = (0x8000_0000..0x1_0000_0000).contains(&value);
        (lost_sign && (width == 64 || direct)).then_some(value | 0xffff_ffff_0000_0000)
    };
    // Replacements: (instruction index, operand word) → the sign-extended value.
    let mut fixes: Vec<(usize, usize, u64)> = vec![];
    for (n, w) in insts.iter().enumerate() {
        let op = w[0] & 0xffff;
        if (op == OP_PTR_ACCESS_CHAIN || op == OP_IN_BOUNDS_PTR_ACCESS_CHAIN) && w.len() >= 5 {
            if let Some(v) = negative(w[4], true) {
                fixes.push((n, 4, v));
            }
        } else if matches!(op, OP_I_ADD | OP_I_SUB | OP_I_MUL)
            && w.len() == 5
            && index_ids.contains(&w[2])
            && ints.get(&w[1]) == Some(&64)
        {
            for k in [3, 4] {
                if let Some(v) = negative(w[k], false) {
                    fixes.push((n, k, v));
                }
            }
        }
    }
    let mut longs = Longs::new(long, &insts);
    for &(n, k, v) in &fixes {
        insts[n][k] = longs.id(v, &mut bound);
    }
    let chained = chains_as_integers(&mut insts, &mut bound, &mut longs, &constants, &ints);
    if !(retyped || chained || !fixes.is_empty()) {
        return None;
    }
    longs.place(&mut insts)?;
    Some(assemble(spirv, bound, insts))
}

/// The 64-bit constants of a module, and the ones a pass adds (placed after the last constant).
struct Longs {
    long: u32,
    ids: HashMap<u64, u32>,
    made: Vec<Vec<u32>>,
}

impl Longs {
    fn new(long: u32, insts: &[Vec<u32>]) -> Longs {
        let ids = insts
            .iter()
            .filter(|w| w[0] & 0xffff == OP_CONSTANT && w.len() == 5 && w[1] == long)
            .map(|w| (u64::from(w[3]) | u64::from(w[4]) << 32, w[2]))
            .collect();
        Longs {
            long,
            ids,
            made: vec![],
        }
    }

    /// The value of a 64-bit constant of the module or of this pass.
    fn value(&self, id: u32) -> Option<u64> {
        self.ids.iter().find(|&(_, &i)| i == id).map(|(&v, _)| v)
    }

    fn id(&mut self, v: u64, bound: &mut u32) -> u32 {
        *self.ids.entry(v).or_insert_with(|| {
            let id = *bound;
            *bound += 1;
            let words = [v as u32, (v >> 32) as u32];
            self.made.push(vec![
                5 << 16 | OP_CONSTANT,
                self.long,
                id,
                words[0],
                words[1],
            ]);
            id
        })
    }

    /// Puts the added constants after the module's last constant (None: it has none).
    fn place(self, insts: &mut Vec<Vec<u32>>) -> Option<()> {
        if self.made.is_empty() {
            return Some(());
        }
        let last_constant = insts.iter().rposition(|w| w[0] & 0xffff == OP_CONSTANT)?;
        let tail = insts.split_off(last_constant + 1);
        insts.extend(self.made);
        insts.extend(tail);
        Some(())
    }
}

/// NVIDIA's driver (580) computes the byte offset of an `OpPtrAccessChain` on a physical
/// pointer in 32 bits and extends it without sign: `p[-1]` reads 4 GiB past `p` (the GPU
/// faults and the queue never finishes), and `&nodes[i - 1]` converted to an integer is 2^32
/// past the node (measured with tools/diag/svm_neg.c and tests/svm.rs on the H200). So every
/// such chain whose element may be negative (see [`non_negative`]) becomes integer arithmetic,
/// as GLSL's
/// `uint64_t(p) + 8 * k` is written: `OpConvertPtrToU` of the base, plus the element (as a
/// signed 64-bit value) times the base type's `ArrayStride`, `OpConvertUToPtr` to the base's
/// type, and the chain's further indexes (struct members, non-negative) as an `OpAccessChain`
/// of that; a member array's word that clspv lost is read where it is ([`member_word`]). A
/// chain whose base type has no stride is left as it is. True if any changed.
fn chains_as_integers(
    insts: &mut Vec<Vec<u32>>,
    bound: &mut u32,
    longs: &mut Longs,
    constants: &HashMap<u32, (u32, u64)>,
    ints: &HashMap<u32, u32>,
) -> bool {
    const OP_DECORATE: u32 = 71;
    const ARRAY_STRIDE: u32 = 6;
    // The instructions that may compute an element index: conversions, integer arithmetic
    // and bit operations, OpCompositeExtract, OpCopyObject, OpSelect, OpExtInst, OpFunctionCall.
    const INTEGER_RESULTS: [u32; 26] = [
        12, 57, 81, 83, 109, 110, 113, 114, 117, 126, 128, 130, 132, 134, 135, 137, 138, 139, 169,
        194, 195, 196, 197, 198, 199, 200,
    ];
    const OP_CONVERT_PTR_TO_U: u32 = 117;
    const OP_CONVERT_U_TO_PTR: u32 = 120;
    const OP_ACCESS_CHAIN: u32 = 65;
    let mut physical: HashSet<u32> = HashSet::new(); // physical pointer types
    let mut strides: HashMap<u32, u64> = HashMap::new(); // pointer type → ArrayStride
    let mut types: HashMap<u32, u32> = HashMap::new(); // result id → type
    let mut defs: HashMap<u32, (u32, Vec<u32>)> = HashMap::new(); // id → (opcode, operands)
    for w in insts.iter() {
        match w[0] & 0xffff {
            OP_TYPE_POINTER if w.len() == 4 && w[2] == STORAGE_PHYSICAL => {
                physical.insert(w[1]);
            }
            OP_DECORATE if w.len() == 4 && w[2] == ARRAY_STRIDE => {
                strides.insert(w[1], u64::from(w[3]));
            }
            op if (TYPED_RESULTS.contains(&op) || INTEGER_RESULTS.contains(&op))
                && w.len() >= 3 =>
            {
                types.insert(w[2], w[1]);
                if DEFINITIONS.contains(&op) {
                    defs.insert(w[2], (op, w[3..].to_vec()));
                }
            }
            _ => {}
        }
    }
    let harmless = |id: u32| non_negative(id, 0, &defs, constants, ints);
    let mut out = Vec::with_capacity(insts.len());
    let mut changed = false;
    for w in std::mem::take(insts) {
        let op = w[0] & 0xffff;
        let chain = (op == OP_PTR_ACCESS_CHAIN || op == OP_IN_BOUNDS_PTR_ACCESS_CHAIN)
            && w.len() >= 5
            && physical.contains(&w[1]);
        let base_type = chain.then(|| types.get(&w[3]).copied()).flatten();
        let stride = base_type.and_then(|t| strides.get(&t).copied());
        let (Some(base_type), Some(stride)) = (base_type, stride) else {
            out.push(w);
            continue;
        };
        if let Some((word, size)) = member_word(&w, stride, &defs, constants, ints, &strides) {
            // `a[(C*i + j) / C].d[0]...`: the word C*i + j of the array (see member_word).
            let (address, offset, sum) = (*bound, *bound + 1, *bound + 2);
            *bound += 3;
            let size = longs.id(size, bound);
            out.push(vec![
                4 << 16 | OP_CONVERT_PTR_TO_U,
                longs.long,
                address,
                w[3],
            ]);
            out.push(vec![5 << 16 | OP_I_MUL, longs.long, offset, word, size]);
            out.push(vec![5 << 16 | OP_I_ADD, longs.long, sum, address, offset]);
            out.push(vec![4 << 16 | OP_CONVERT_U_TO_PTR, w[1], w[2], sum]);
            changed = true;
            continue;
        }
        if harmless(w[4]) {
            out.push(w);
            continue;
        }
        // The element as a signed 64-bit value: a constant (clspv's, or one the sign fix
        // made) folds into the offset.
        let constant = match constants.get(&w[4]) {
            Some(&(ty, v)) if ints.get(&ty) == Some(&32) => Some(v as u32 as i32 as u64),
            Some(&(_, v)) => Some(v),
            None => longs.value(w[4]),
        };
        let element_width = types.get(&w[4]).and_then(|t| ints.get(t)).copied();
        if constant.is_none() && element_width.is_none() {
            out.push(w); // an element whose type this pass does not know
            continue;
        }
        let fresh = |bound: &mut u32| {
            *bound += 1;
            *bound - 1
        };
        let (address, sum) = (fresh(bound), fresh(bound));
        out.push(vec![
            4 << 16 | OP_CONVERT_PTR_TO_U,
            longs.long,
            address,
            w[3],
        ]);
        let offset = match constant {
            Some(v) => longs.id(v.wrapping_mul(stride), bound),
            None => {
                let mut element = w[4];
                if element_width != Some(64) {
                    element = fresh(bound);
                    out.push(vec![4 << 16 | OP_S_CONVERT, longs.long, element, w[4]]);
                }
                let (stride, offset) = (longs.id(stride, bound), fresh(bound));
                out.push(vec![
                    5 << 16 | OP_I_MUL,
                    longs.long,
                    offset,
                    element,
                    stride,
                ]);
                offset
            }
        };
        out.push(vec![5 << 16 | OP_I_ADD, longs.long, sum, address, offset]);
        if w.len() == 5 {
            out.push(vec![4 << 16 | OP_CONVERT_U_TO_PTR, w[1], w[2], sum]);
        } else {
            let moved = fresh(bound);
            out.push(vec![4 << 16 | OP_CONVERT_U_TO_PTR, base_type, moved, sum]);
            let mut rest = vec![0, w[1], w[2], moved];
            rest.extend_from_slice(&w[5..]);
            rest[0] = (rest.len() as u32) << 16 | OP_ACCESS_CHAIN;
            out.push(rest);
        }
        changed = true;
    }
    *insts = out;
    changed
}

/// Whether an element cannot be negative: non-negative constants, zero-extensions, unsigned
/// divisions and shifts right, and sums, products and shifts left of such (which could only
/// wrap past 2^63 bytes).
fn non_negative(
    id: u32,
    depth: u32,
    defs: &HashMap<u32, (u32, Vec<u32>)>,
    constants: &HashMap<u32, (u32, u64)>,
    ints: &HashMap<u32, u32>,
) -> bool {
    if let Some(&(ty, v)) = constants.get(&id) {
        return match ints.get(&ty) {
            Some(32) => v < 0x8000_0000,
            _ => v < 1 << 63,
        };
    }
    match defs.get(&id) {
        Some((OP_U_CONVERT | OP_U_DIV | OP_SHIFT_RIGHT_LOGICAL, _)) => true,
        Some((OP_I_ADD | OP_I_MUL | OP_SHIFT_LEFT_LOGICAL, operands)) if depth < 8 => operands
            .iter()
            .all(|&o| non_negative(o, depth + 1, defs, constants, ints)),
        _ => false,
    }
}

/// A chain that lost the index into a struct's member array, as `compiler::member_index`
/// repairs in logical modules: a pointer to a member array passed to a helper (`rd(a[i].d, j)`
/// with `struct { uint d[16]; uint len; }`) reaches the physical module as
/// `OpPtrAccessChain %uint* a ((17*i + j) / 17) 0 0`, the quotient kept and the remainder
/// dropped. For an element `OpUDiv X C` (C a 64-bit constant), X a sum with a product by C, further
/// indexes all zero and the result type's stride E with C * E the base's stride: (X, E), the
/// word X of the array in units of the result.
fn member_word(
    w: &[u32],
    stride: u64,
    defs: &HashMap<u32, (u32, Vec<u32>)>,
    constants: &HashMap<u32, (u32, u64)>,
    ints: &HashMap<u32, u32>,
    strides: &HashMap<u32, u64>,
) -> Option<(u32, u64)> {
    let constant = |id: u32| constants.get(&id).map(|&(_, v)| v);
    if w.len() < 6 || !w[5..].iter().all(|&i| constant(i) == Some(0)) {
        return None;
    }
    let (OP_U_DIV, operands) = defs.get(&w[4])? else {
        return None;
    };
    let &(ty, c) = constants.get(operands.get(1)?)?;
    let x = operands[0];
    if ints.get(&ty) != Some(&64) {
        return None;
    }
    let (OP_I_ADD, terms) = defs.get(&x)? else {
        return None;
    };
    let scaled = |t: u32| {
        defs.get(&t)
            .is_some_and(|(op, f)| *op == OP_I_MUL && f.iter().any(|&v| constant(v) == Some(c)))
    };
    let element = *strides.get(&w[1])?;
    (terms.iter().any(|&t| scaled(t)) && element * c == stride).then_some((x, element))
}

fn assemble(spirv: &[u32], bound: u32, insts: Vec<Vec<u32>>) -> Vec<u32> {
    let mut out = spirv[..5].to_vec();
    out[3] = bound;
    out.extend(insts.into_iter().flatten());
    out
}

/// Puts `OpBitcast`s before the `OpPtrAccessChain`s (without further indexes) whose result is
/// a physical pointer to a struct while their base points to an integer (a byte, or the word
/// clspv types a packed struct's pointer argument as: `&a[i]` of 12-byte structs moved 4 bytes
/// per element). True if any.
fn retype_byte_bases(insts: &mut Vec<Vec<u32>>, bound: &mut u32) -> bool {
    let mut pointers: HashMap<u32, u32> = HashMap::new(); // physical pointer type → pointee
    let mut bytes: HashSet<u32> = HashSet::new(); // integer types
    let mut structs: HashSet<u32> = HashSet::new();
    let mut types: HashMap<u32, u32> = HashMap::new(); // result id → type
    for w in insts.iter() {
        match w[0] & 0xffff {
            OP_TYPE_INT if w.len() == 4 => {
                bytes.insert(w[1]);
            }
            OP_TYPE_STRUCT if w.len() >= 2 => {
                structs.insert(w[1]);
            }
            OP_TYPE_POINTER if w.len() == 4 && w[2] == STORAGE_PHYSICAL => {
                pointers.insert(w[1], w[3]);
            }
            op if TYPED_RESULTS.contains(&op) && w.len() >= 3 => {
                types.insert(w[2], w[1]);
            }
            _ => {}
        }
    }
    let mistyped = |w: &[u32]| {
        let op = w[0] & 0xffff;
        let chain =
            (op == OP_PTR_ACCESS_CHAIN || op == OP_IN_BOUNDS_PTR_ACCESS_CHAIN) && w.len() == 5;
        chain
            && (types.get(&w[3]).and_then(|t| pointers.get(t))).is_some_and(|b| bytes.contains(b))
            && pointers.get(&w[1]).is_some_and(|r| structs.contains(r))
    };
    let mut out = Vec::with_capacity(insts.len());
    let mut changed = false;
    for mut w in std::mem::take(insts) {
        if mistyped(&w) {
            let id = *bound;
            *bound += 1;
            out.push(vec![4 << 16 | OP_BITCAST, w[1], id, w[3]]);
            w[3] = id;
            changed = true;
        }
        out.push(w);
    }
    *insts = out;
    changed
}
