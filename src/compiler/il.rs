//! SPIR-V intermediate language (clCreateProgramWithIL, cl_khr_il_program) → LLVM bitcode that
//! clspv compiles with `-x ir`. clspv reads no SPIR-V, so the Khronos translator does the
//! reverse translation: `llvm-spirv-15 -r` (Debian package llvm-spirv-15), run as a process.
//! Translations go through the disk cache like compiles.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Command;

/// The SPIR-V versions the translator reads, for CL_DEVICE_IL_VERSION and
/// CL_DEVICE_ILS_WITH_VERSION.
pub const SPIRV_VERSIONS: [(u32, u32); 5] = [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4)];

const TOOLS: [&str; 2] = ["llvm-spirv-15", "llvm-spirv"];

/// The translator: `VKCL_LLVM_SPIRV`, else the first of [`TOOLS`] on PATH.
fn translator() -> Option<PathBuf> {
    if let Some(p) = &crate::config::get().llvm_spirv {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    TOOLS.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// Whether IL programs can be built (the translator is installed).
pub fn available() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| translator().is_some())
}

/// True when `il` looks like a SPIR-V module (magic number in either byte order, whole words).
pub fn is_spirv(il: &[u8]) -> bool {
    il.len() >= 20
        && il.len() % 4 == 0
        && (il[..4] == [0x03, 0x02, 0x23, 0x07] || il[..4] == [0x07, 0x23, 0x02, 0x03])
}

/// A module as words, and whether it is big-endian (written back the same way).
fn words(il: &[u8]) -> (Vec<u32>, bool) {
    let big_endian = il.get(..4) == Some(&[0x07, 0x23, 0x02, 0x03]);
    let words = il
        .chunks_exact(4)
        .map(|c| {
            let b = [c[0], c[1], c[2], c[3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        })
        .collect();
    (words, big_endian)
}

/// The instructions of a module: (opcode, operands).
fn instructions(words: &[u32]) -> impl Iterator<Item = (usize, u32, &[u32])> {
    let mut i = 5;
    std::iter::from_fn(move || {
        let w = *words.get(i)?;
        let (count, op) = ((w >> 16) as usize, w & 0xffff);
        let operands = words.get(i + 1..i + count.max(1))?;
        let at = i;
        i += count.max(1);
        Some((at, op, operands))
    })
}

const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_SPEC_CONSTANT_TRUE: u32 = 48;
const OP_SPEC_CONSTANT_FALSE: u32 = 49;
const OP_SPEC_CONSTANT: u32 = 50;
const OP_DECORATE: u32 = 71;
const DECORATION_SPEC_ID: u32 = 1;

/// A scalar specialisation constant: its instruction's position, its type's width in bits
/// (1 for bool) and signedness.
struct SpecConstant {
    at: usize,
    bits: u32,
    signed: bool,
}

fn spec_constants_of(words: &[u32]) -> HashMap<u32, SpecConstant> {
    let mut ids = HashMap::new(); // result id → SpecId
    let mut types = HashMap::new(); // type id → (bits, signed)
    let mut out = HashMap::new();
    for (at, op, o) in instructions(words) {
        match (op, o) {
            (OP_DECORATE, [id, DECORATION_SPEC_ID, spec_id, ..]) => {
                ids.insert(*id, *spec_id);
            }
            (OP_TYPE_BOOL, [id, ..]) => {
                types.insert(*id, (1, false));
            }
            (OP_TYPE_INT, [id, width, sign, ..]) => {
                types.insert(*id, (*width, *sign != 0));
            }
            (OP_TYPE_FLOAT, [id, width, ..]) => {
                types.insert(*id, (*width, false));
            }
            (OP_SPEC_CONSTANT_TRUE | OP_SPEC_CONSTANT_FALSE | OP_SPEC_CONSTANT, [ty, id, ..]) => {
                if let (Some(&spec_id), Some(&(bits, signed))) = (ids.get(id), types.get(ty)) {
                    out.insert(spec_id, SpecConstant { at, bits, signed });
                }
            }
            _ => {}
        }
    }
    out
}

/// The module's scalar specialisation constants: SpecId → size in bytes (a bool is 1).
pub fn spec_constants(il: &[u8]) -> HashMap<u32, usize> {
    spec_constants_of(&words(il).0)
        .into_iter()
        .map(|(id, c)| (id, (c.bits as usize).div_ceil(8)))
        .collect()
}

/// The module with the given specialisation constants' values (SpecId, bytes of the size
/// [`spec_constants`] gives) made their defaults, which the translation keeps.
pub fn specialize(il: &[u8], values: &HashMap<u32, Vec<u8>>) -> Vec<u8> {
    let (mut words, big_endian) = words(il);
    for (id, c) in spec_constants_of(&words) {
        let Some(value) = values.get(&id) else {
            continue;
        };
        let mut bytes = [0u8; 8];
        let n = value.len().min(8);
        bytes[..n].copy_from_slice(&value[..n]);
        let mut v = u64::from_le_bytes(bytes);
        if c.signed && c.bits < 64 && v >> (c.bits - 1) & 1 == 1 {
            v |= u64::MAX << c.bits; // sign-extend, as SPIR-V wants narrow signed literals
        }
        let count = (words[c.at] >> 16) as usize;
        if c.bits == 1 {
            let op = if v & 1 == 1 {
                OP_SPEC_CONSTANT_TRUE
            } else {
                OP_SPEC_CONSTANT_FALSE
            };
            words[c.at] = (words[c.at] & 0xffff_0000) | op;
        } else if count >= 4 {
            words[c.at + 3] = v as u32;
            if c.bits > 32 && count >= 5 {
                words[c.at + 4] = (v >> 32) as u32;
            }
        }
    }
    to_bytes(&words, big_endian)
}

const OP_EXT_INST_IMPORT: u32 = 11;
const OP_EXT_INST: u32 = 12;
const OP_CONSTANT: u32 = 43;
const OP_CONSTANT_NULL: u32 = 46;
const OP_SPEC_CONSTANT_OP: u32 = 52;
const OP_FUNCTION: u32 = 54;
const OP_VARIABLE: u32 = 59;
/// OpAccessChain, OpInBoundsAccessChain, OpPtrAccessChain, OpInBoundsPtrAccessChain, OpBitcast.
const POINTER_OPS: [u32; 5] = [65, 66, 67, 70, 124];
/// The OpenCL.std printf instruction.
const PRINTF: u32 = 184;

const OP_SHIFT_RIGHT_ARITHMETIC: u32 = 195;

/// The module with its OpenCL.std printf calls made what clspv 0.0.1 compiles and what the spec
/// says they return. Each format that a function derives from a module-scope string (an
/// OpBitcast or access chain with constant indices of the variable, as the conformance tests'
/// modules have it) becomes an OpSpecConstantOp of the same operation at the end of the
/// global declarations: llvm-spirv then gives printf a constant expression, which LLVM folds
/// to the string itself as in clang's printf calls; from an instruction clspv crashes
/// (SIGSEGV) lowering the call. And each call's result goes through an arithmetic shift right
/// by 1: clspv's lowering returns 1 for a printf that fits its buffer, -1 otherwise, where
/// OpenCL C's printf returns 0 or -1 (what the source prelude's `__vkcl_printf_result` does
/// for OpenCL C). Modules without printf are returned as they are.
pub fn fix_printf(il: &[u8]) -> Cow<'_, [u8]> {
    let (words, big_endian) = words(il);
    let mut std_set = None;
    let (mut formats, mut calls) = (vec![], vec![]);
    let mut globals = std::collections::HashSet::new();
    let mut defs = HashMap::new();
    let mut first_function = None;
    for (at, op, o) in instructions(&words) {
        match (op, o) {
            (OP_EXT_INST_IMPORT, [id, name @ ..]) if string(name) == "OpenCL.std" => {
                std_set = Some(*id)
            }
            (OP_EXT_INST, [_, _, set, PRINTF, format, ..]) if Some(*set) == std_set => {
                formats.push(*format);
                calls.push(at);
            }
            (OP_FUNCTION, _) => {
                first_function.get_or_insert(at);
            }
            (OP_VARIABLE | OP_CONSTANT | OP_CONSTANT_NULL, [_, id, ..])
                if first_function.is_none() =>
            {
                globals.insert(*id);
            }
            (op, [_, id, _, ..]) if POINTER_OPS.contains(&op) && first_function.is_some() => {
                defs.insert(*id, at);
            }
            _ => {}
        }
    }
    let Some(first_function) = first_function.filter(|_| !calls.is_empty()) else {
        return Cow::Borrowed(il);
    };
    let moved: std::collections::BTreeSet<usize> = formats
        .iter()
        .filter_map(|f| defs.get(f).copied())
        .filter(|&at| {
            let count = (words[at] >> 16) as usize;
            words[at + 3..at + count]
                .iter()
                .all(|id| globals.contains(id))
        })
        .collect();
    let mut bound = words[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut out = words[..first_function].to_vec();
    for &at in &moved {
        let (count, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        out.push(((count as u32 + 1) << 16) | OP_SPEC_CONSTANT_OP);
        out.extend_from_slice(&words[at + 1..at + 3]);
        out.push(op);
        out.extend_from_slice(&words[at + 3..at + count]);
    }
    // A constant 1 of each printf result type.
    let mut ones = HashMap::new();
    for &at in &calls {
        ones.entry(words[at + 1]).or_insert_with(|| {
            let one = fresh();
            push_constant(&mut out, words[at + 1], one, 1, false);
            one
        });
    }
    for (at, _, o) in instructions(&words).filter(|&(at, _, _)| at >= first_function) {
        if moved.contains(&at) {
            continue;
        }
        let start = out.len();
        out.extend_from_slice(&words[at..at + o.len() + 1]);
        if calls.contains(&at) {
            let (ty, result, raw) = (words[at + 1], words[at + 2], fresh());
            out[start + 2] = raw;
            out.extend_from_slice(&[
                (5 << 16) | OP_SHIFT_RIGHT_ARITHMETIC,
                ty,
                result,
                raw,
                ones[&ty],
            ]);
        }
    }
    out[3] = bound;
    Cow::Owned(to_bytes(&out, big_endian))
}

const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONVERT_PTR_TO_U: u32 = 117;
const OP_I_SUB: u32 = 130;
const OP_S_DIV: u32 = 135;
const OP_I_EQUAL: u32 = 170;
const OP_I_NOT_EQUAL: u32 = 171;
const OP_PTR_EQUAL: u32 = 401;
const OP_PTR_NOT_EQUAL: u32 = 402;
const OP_PTR_DIFF: u32 = 403;
const OP_COPY_LOGICAL: u32 = 400;
const OP_DECORATE_STRING: u32 = 5632;
const OP_MEMBER_DECORATE_STRING: u32 = 5633;
const OP_TYPE_STRUCT: u32 = 30;
const OP_COPY_OBJECT: u32 = 83;
const OP_COMPOSITE_CONSTRUCT: u32 = 80;
/// Image instructions with image operands: (opcode, index of the operands mask).
const IMAGE_OPERANDS: [(u32, usize); 2] = [(98, 4), (99, 3)];
/// SignExtend and ZeroExtend (SPIR-V 1.4): they take no operands of their own.
const EXTEND_BITS: u32 = 0x1000 | 0x2000;

/// The module with what SPIR-V 1.4 added and llvm-spirv-15 does not read (it aborts on
/// them: "Not implemented") written in SPIR-V 1.0 terms: OpPtrEqual / OpPtrNotEqual compare
/// the pointers converted to integers (OpConvertPtrToU), OpPtrDiff divides their difference by
/// the element's size (scalars, vectors, arrays of them); OpCopyLogical is a copy member by
/// member (OpCompositeExtract, then OpCompositeConstruct of the result's type, through nested
/// structs and arrays; OpCopyObject where the types are one); OpDecorateString and
/// OpMemberDecorateString (UserSemantic and other hints) are dropped; the SignExtend and
/// ZeroExtend image operands of OpImageRead / OpImageWrite are cleared (OpenCL's integer image
/// reads already give the format's signedness). Unchanged where nothing of this appears, or
/// where the module lacks the integer type the pointer comparison needs.
pub fn lower_spirv_1_4(il: &[u8]) -> Cow<'_, [u8]> {
    let (words, big_endian) = words(il);
    let mut types: HashMap<u32, &[u32]> = HashMap::new(); // type id -> (opcode, operands)
    let mut type_of = HashMap::new(); // value id -> type id
    let mut constants = HashMap::new(); // OpConstant id -> value
    let (mut first_function, mut found, mut pointer_int) = (None, false, None);
    let physical64 = instructions(&words).any(|(_, op, o)| op == 14 && o.first() == Some(&2));
    for (at, op, o) in instructions(&words) {
        let all = &words[at..at + o.len() + 1];
        match (op, o) {
            (OP_FUNCTION, _) => {
                first_function.get_or_insert(at);
            }
            (OP_TYPE_INT, [id, width, 0]) if *width == if physical64 { 64 } else { 32 } => {
                pointer_int = Some(*id);
                types.insert(*id, all);
            }
            (20..=39, [id, ..]) if first_function.is_none() => {
                types.insert(*id, all);
            }
            (OP_CONSTANT, [_, id, value, ..]) => {
                constants.insert(*id, *value);
            }
            (OP_PTR_EQUAL | OP_PTR_NOT_EQUAL | OP_PTR_DIFF | OP_COPY_LOGICAL, _) => found = true,
            (OP_DECORATE_STRING | OP_MEMBER_DECORATE_STRING, _) => found = true,
            _ => {}
        }
        if let (true, [ty, id, ..]) = (super::spirv::typed_results().contains(&op), o) {
            type_of.insert(*id, *ty);
        }
        found |= IMAGE_OPERANDS
            .iter()
            .any(|&(i, m)| i == op && o.get(m).is_some_and(|w| w & EXTEND_BITS != 0));
    }
    let Some(first_function) = first_function.filter(|_| found) else {
        return Cow::Borrowed(il);
    };
    fn size(types: &HashMap<u32, &[u32]>, constants: &HashMap<u32, u32>, ty: u32) -> Option<u32> {
        let t = types.get(&ty)?;
        match (t[0] & 0xffff, &t[1..]) {
            (OP_TYPE_INT | OP_TYPE_FLOAT, [_, width, ..]) => Some(width / 8),
            // A 3-element vector takes the size of a 4-element one.
            (OP_TYPE_VECTOR, [_, elem, n]) => {
                Some(size(types, constants, *elem)? * if *n == 3 { 4 } else { *n })
            }
            (OP_TYPE_ARRAY, [_, elem, len]) => {
                Some(size(types, constants, *elem)? * constants.get(len)?)
            }
            _ => None,
        }
    }
    let pointee = |value: u32| -> Option<u32> {
        let t = types.get(type_of.get(&value)?)?;
        (t[0] & 0xffff == OP_TYPE_POINTER).then(|| t[3])
    };
    let mut bound = words[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut globals = vec![];
    let mut body = vec![];
    for (at, op, o) in instructions(&words).filter(|&(at, _, _)| at >= first_function) {
        let all = &words[at..at + o.len() + 1];
        match (op, o) {
            (OP_PTR_EQUAL | OP_PTR_NOT_EQUAL, [ty, id, a, b]) => {
                let Some(int) = pointer_int else {
                    return Cow::Borrowed(il);
                };
                let (x, y) = (fresh(), fresh());
                body.extend_from_slice(&[(4 << 16) | OP_CONVERT_PTR_TO_U, int, x, *a]);
                body.extend_from_slice(&[(4 << 16) | OP_CONVERT_PTR_TO_U, int, y, *b]);
                let cmp = if op == OP_PTR_EQUAL {
                    OP_I_EQUAL
                } else {
                    OP_I_NOT_EQUAL
                };
                body.extend_from_slice(&[(5 << 16) | cmp, *ty, *id, x, y]);
            }
            (OP_PTR_DIFF, [ty, id, a, b]) => {
                let Some(bytes) = pointee(*a).and_then(|p| size(&types, &constants, p)) else {
                    return Cow::Borrowed(il);
                };
                let (x, y) = (fresh(), fresh());
                body.extend_from_slice(&[(4 << 16) | OP_CONVERT_PTR_TO_U, *ty, x, *a]);
                body.extend_from_slice(&[(4 << 16) | OP_CONVERT_PTR_TO_U, *ty, y, *b]);
                if bytes == 1 {
                    body.extend_from_slice(&[(5 << 16) | OP_I_SUB, *ty, *id, x, y]);
                } else {
                    let (d, c) = (fresh(), fresh());
                    let wide = types.get(ty).is_some_and(|t| t.get(2) == Some(&64));
                    push_constant(&mut globals, *ty, c, bytes, wide);
                    body.extend_from_slice(&[(5 << 16) | OP_I_SUB, *ty, d, x, y]);
                    body.extend_from_slice(&[(5 << 16) | OP_S_DIV, *ty, *id, d, c]);
                }
            }
            (OP_COPY_LOGICAL, [ty, id, value]) => {
                let from = type_of.get(value).copied();
                let copy = from.and_then(|from| {
                    let mut out = vec![];
                    let r =
                        copy_logical(&types, &constants, &mut out, *ty, from, *value, &mut fresh);
                    Some((r?, out))
                });
                let Some((copied, out)) = copy else {
                    return Cow::Borrowed(il);
                };
                body.extend(out);
                body.extend_from_slice(&[(4 << 16) | OP_COPY_OBJECT, *ty, *id, copied]);
            }
            _ => {
                let start = body.len();
                body.extend_from_slice(all);
                if let Some(&(_, m)) = IMAGE_OPERANDS.iter().find(|&&(i, _)| i == op) {
                    if let Some(w) = body.get_mut(start + 1 + m) {
                        *w &= !EXTEND_BITS;
                    }
                }
            }
        }
    }
    let mut out: Vec<u32> = Vec::with_capacity(words.len() + globals.len());
    for (at, op, o) in instructions(&words).filter(|&(at, _, _)| at < first_function) {
        if op != OP_DECORATE_STRING && op != OP_MEMBER_DECORATE_STRING {
            out.extend_from_slice(&words[at..at + o.len() + 1]);
        }
    }
    out.splice(0..0, words[..5].iter().copied());
    out.extend(globals);
    out.extend(body);
    out[3] = bound;
    Cow::Owned(to_bytes(&out, big_endian))
}

/// `value` (of type `from`) as a value of type `to`, types that match logically (SPIR-V 1.4
/// OpCopyLogical): the same type as it is, structs and arrays rebuilt member by member.
/// `None` where the types do not match so.
fn copy_logical(
    types: &HashMap<u32, &[u32]>,
    constants: &HashMap<u32, u32>,
    out: &mut Vec<u32>,
    to: u32,
    from: u32,
    value: u32,
    fresh: &mut impl FnMut() -> u32,
) -> Option<u32> {
    if to == from {
        return Some(value);
    }
    let (t, f) = (types.get(&to)?, types.get(&from)?);
    let members: Vec<(u32, u32)> = match (t[0] & 0xffff, &t[2..], f[0] & 0xffff, &f[2..]) {
        (OP_TYPE_STRUCT, tm, OP_TYPE_STRUCT, fm) if tm.len() == fm.len() => {
            tm.iter().copied().zip(fm.iter().copied()).collect()
        }
        (OP_TYPE_ARRAY, [te, tn], OP_TYPE_ARRAY, [fe, fn_]) => {
            let n = *constants.get(tn)?;
            // (Arrays of more elements stay: the copy would be as many instructions.)
            (n == *constants.get(fn_)? && n <= 256).then(|| vec![(*te, *fe); n as usize])?
        }
        _ => return None,
    };
    let mut parts = vec![];
    for (i, (tm, fm)) in members.into_iter().enumerate() {
        let part = fresh();
        out.extend_from_slice(&[(5 << 16) | OP_COMPOSITE_EXTRACT, fm, part, value, i as u32]);
        parts.push(copy_logical(types, constants, out, tm, fm, part, fresh)?);
    }
    let id = fresh();
    out.extend_from_slice(&[
        ((3 + parts.len() as u32) << 16) | OP_COMPOSITE_CONSTRUCT,
        to,
        id,
    ]);
    out.extend(parts);
    Some(id)
}

const OP_COMPOSITE_INSERT: u32 = 82;
const OP_COMPOSITE_EXTRACT: u32 = 81;
const OP_VECTOR_INSERT_DYNAMIC: u32 = 78;
const OP_SELECT: u32 = 169;
/// Instructions `[result type, result, ...]` whose result may be a vector index.
const INDEX_RESULTS: [u32; 13] = [12, 43, 55, 57, 61, 81, 113, 114, 124, 128, 130, 132, 169];

/// The module with each OpVectorInsertDynamic into a vector of 8 or 16 components written
/// as a select and an OpCompositeInsert per component (an OpCompositeConstruct of the
/// selected components crashed llvm-spirv-15). clspv 0.0.1 lowers such an insert
/// (a long vector, an array under `-long-vector`) stored back to memory as a store of the new
/// component followed by stores of all the old ones, so that nothing is inserted
/// (conformance vector_half8_insert). Unchanged where there is none, or where the index's
/// type is not known.
pub fn long_vector_inserts(il: &[u8]) -> Cow<'_, [u8]> {
    let (words, big_endian) = words(il);
    let mut vectors = HashMap::new(); // vector type -> (component type, count)
    let mut ints = HashMap::new(); // int type -> width
    let mut type_of = HashMap::new();
    let (mut bool_ty, mut first_function, mut found) = (None, None, false);
    for (at, op, o) in instructions(&words) {
        match (op, o) {
            (OP_FUNCTION, _) => {
                first_function.get_or_insert(at);
            }
            (OP_TYPE_BOOL, [id]) => bool_ty = Some(*id),
            (OP_TYPE_INT, [id, width, _]) => {
                ints.insert(*id, *width);
            }
            (OP_TYPE_VECTOR, [id, elem, n]) if *n >= 8 => {
                vectors.insert(*id, (*elem, *n));
            }
            (OP_VECTOR_INSERT_DYNAMIC, [ty, ..]) if vectors.contains_key(ty) => found = true,
            (op, [ty, id, ..]) if INDEX_RESULTS.contains(&op) => {
                type_of.insert(*id, *ty);
            }
            _ => {}
        }
    }
    let Some(first_function) = first_function.filter(|_| found) else {
        return Cow::Borrowed(il);
    };
    let mut bound = words[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut globals = vec![];
    let bool_ty = bool_ty.unwrap_or_else(|| {
        let id = fresh();
        globals.extend_from_slice(&[(2 << 16) | OP_TYPE_BOOL, id]);
        id
    });
    let mut constants: HashMap<(u32, u32), u32> = HashMap::new(); // (type, value) -> id
    let mut body = vec![];
    for (at, op, o) in instructions(&words).filter(|&(at, _, _)| at >= first_function) {
        let index_ty = o
            .get(4)
            .and_then(|i| type_of.get(i))
            .filter(|t| ints.contains_key(t));
        match (op, o, index_ty) {
            (OP_VECTOR_INSERT_DYNAMIC, [ty, id, vec, comp, index], Some(&ity))
                if vectors.contains_key(ty) =>
            {
                let (elem, n) = vectors[ty];
                let mut prev = *vec;
                for j in 0..n {
                    let c = *constants.entry((ity, j)).or_insert_with(|| {
                        let c = fresh();
                        push_constant(&mut globals, ity, c, j, ints[&ity] == 64);
                        c
                    });
                    let (old, cond, part) = (fresh(), fresh(), fresh());
                    let next = if j + 1 == n { *id } else { fresh() };
                    body.extend_from_slice(&[(5 << 16) | OP_COMPOSITE_EXTRACT, elem, old, *vec, j]);
                    body.extend_from_slice(&[(5 << 16) | OP_I_EQUAL, bool_ty, cond, *index, c]);
                    body.extend_from_slice(&[(6 << 16) | OP_SELECT, elem, part, cond, *comp, old]);
                    body.extend_from_slice(&[
                        (6 << 16) | OP_COMPOSITE_INSERT,
                        *ty,
                        next,
                        part,
                        prev,
                        j,
                    ]);
                    prev = next;
                }
            }
            _ => body.extend_from_slice(&words[at..at + o.len() + 1]),
        }
    }
    let mut out = words[..first_function].to_vec();
    out.extend(globals);
    out.extend(body);
    out[3] = bound;
    Cow::Owned(to_bytes(&out, big_endian))
}

/// The module with each OpCompositeConstruct of a value not constant written as OpUndef and
/// an OpCompositeInsert per component (vector constituents taken apart by
/// OpCompositeExtract): llvm-spirv-15 translates the instruction as an LLVM constant and
/// crashed (SIGSEGV in ConstantVector::get) on any other, as SPIR-V from producers other
/// than itself has. Unchanged where there is none, or where a constituent's type is not
/// known.
pub fn composite_constructs(il: &[u8]) -> Cow<'_, [u8]> {
    let (words, big_endian) = words(il);
    let mut vectors = HashMap::new(); // vector type -> (component type, count)
    let mut type_of = HashMap::new();
    let mut constants = HashSet::new();
    let mut first_function = None;
    for (at, op, o) in instructions(&words) {
        match (op, o) {
            (OP_FUNCTION, _) => {
                first_function.get_or_insert(at);
            }
            (OP_TYPE_VECTOR, [id, elem, n]) => {
                vectors.insert(*id, (*elem, *n));
            }
            // Constants, specialisation constants and module-scope undefined values.
            (41..=52 | OP_UNDEF, [_, id, ..]) if first_function.is_none() => {
                constants.insert(*id);
            }
            _ => {}
        }
        if let (true, [ty, id, ..]) = (super::spirv::typed_results().contains(&op), o) {
            type_of.insert(*id, *ty);
        }
    }
    let runtime = |op: u32, o: &[u32]| {
        op == OP_COMPOSITE_CONSTRUCT && o[2..].iter().any(|c| !constants.contains(c))
    };
    let Some(first_function) = first_function
        .filter(|&f| instructions(&words).any(|(at, op, o)| at > f && runtime(op, o)))
    else {
        return Cow::Borrowed(il);
    };
    let mut bound = words[3];
    let mut body = vec![];
    for (at, op, o) in instructions(&words).filter(|&(at, _, _)| at >= first_function) {
        let all = &words[at..at + o.len() + 1];
        if !runtime(op, o) {
            body.extend_from_slice(all);
            continue;
        }
        let (ty, id) = (o[0], o[1]);
        // The values inserted: a vector's components one by one, else the constituents.
        let mut parts = vec![];
        let mut extracts = vec![];
        for &c in &o[2..] {
            match (
                vectors.get(&ty),
                type_of.get(&c).and_then(|t| vectors.get(t)),
            ) {
                (Some(_), Some(&(elem, n))) => {
                    for j in 0..n {
                        bound += 1;
                        extracts.extend_from_slice(&[
                            (5 << 16) | OP_COMPOSITE_EXTRACT,
                            elem,
                            bound - 1,
                            c,
                            j,
                        ]);
                        parts.push(bound - 1);
                    }
                }
                (Some(_), None) if !type_of.contains_key(&c) => return Cow::Borrowed(il),
                _ => parts.push(c),
            }
        }
        body.extend(extracts);
        bound += 1;
        let mut prev = bound - 1;
        body.extend_from_slice(&[(3 << 16) | OP_UNDEF, ty, prev]);
        for (j, &part) in parts.iter().enumerate() {
            let next = match j + 1 == parts.len() {
                true => id,
                false => {
                    bound += 1;
                    bound - 1
                }
            };
            body.extend_from_slice(&[
                (6 << 16) | OP_COMPOSITE_INSERT,
                ty,
                next,
                part,
                prev,
                j as u32,
            ]);
            prev = next;
        }
    }
    let mut out = words[..first_function].to_vec();
    out.extend(body);
    out[3] = bound;
    Cow::Owned(to_bytes(&out, big_endian))
}

const OP_UNDEF: u32 = 1;
const OP_LINE: u32 = 8;
const OP_NO_LINE: u32 = 317;
const OP_STORE: u32 = 62;
const STORAGE_FUNCTION: u32 = 7;

/// The module with each function-scope OpVariable's initialiser made an OpStore after the
/// variables at the top of its function. llvm-spirv-15 makes such a variable an `internal
/// global` of the private address space, which clspv 0.0.1 emits as a module-scope variable
/// of the Function storage class: invalid SPIR-V, on which lavapipe crashed creating the
/// pipeline (conformance spirv14_copymemory_memory_operands). Unchanged where there is none.
pub fn function_variable_initialisers(il: &[u8]) -> Cow<'_, [u8]> {
    let (words, big_endian) = words(il);
    let initialised =
        |op: u32, o: &[u32]| op == OP_VARIABLE && o.len() == 4 && o[2] == STORAGE_FUNCTION;
    if !instructions(&words).any(|(_, op, o)| initialised(op, o)) {
        return Cow::Borrowed(il);
    }
    let mut out = words[..5].to_vec();
    let mut stores = vec![];
    for (at, op, o) in instructions(&words) {
        if initialised(op, o) {
            out.extend_from_slice(&[(4 << 16) | OP_VARIABLE, o[0], o[1], o[2]]);
            stores.extend_from_slice(&[(3 << 16) | OP_STORE, o[1], o[3]]);
            continue;
        }
        if ![OP_VARIABLE, OP_LINE, OP_NO_LINE].contains(&op) {
            out.append(&mut stores);
        }
        out.extend_from_slice(&words[at..at + o.len() + 1]);
    }
    Cow::Owned(to_bytes(&out, big_endian))
}

/// `OpConstant ty id value` (two words of value for a 64-bit type).
fn push_constant(out: &mut Vec<u32>, ty: u32, id: u32, value: u32, wide: bool) {
    if wide {
        out.extend_from_slice(&[(5 << 16) | OP_CONSTANT, ty, id, value, 0]);
    } else {
        out.extend_from_slice(&[(4 << 16) | OP_CONSTANT, ty, id, value]);
    }
}

/// A literal string's words → the string (up to its NUL).
fn string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn to_bytes(words: &[u32], big_endian: bool) -> Vec<u8> {
    words
        .iter()
        .flat_map(|w| {
            if big_endian {
                w.to_be_bytes()
            } else {
                w.to_le_bytes()
            }
        })
        .collect()
}

/// Whether the module compares or subtracts pointers (OpPtrEqual, OpPtrNotEqual, OpPtrDiff):
/// a launch that binds one buffer to two of its pointer parameters then needs real addresses
/// (`core::svm::addressing`).
pub fn relates_pointers(il: &[u8]) -> bool {
    const OP_PTR_EQUAL: u32 = 401;
    const OP_PTR_DIFF: u32 = 403;
    let (words, _) = words(il);
    let relates = instructions(&words).any(|(_, op, _)| (OP_PTR_EQUAL..=OP_PTR_DIFF).contains(&op));
    relates
}

/// clspv arguments the module's translation needs: its pointer width (the Physical64 or
/// Physical32 addressing model), which wins over the device's (they come after its arguments).
pub fn arch_args(il: &[u8]) -> Vec<String> {
    const OP_MEMORY_MODEL: u32 = 14;
    const PHYSICAL64: u32 = 2;
    let (words, _) = words(il);
    let physical64 = instructions(&words)
        .find(|&(_, op, _)| op == OP_MEMORY_MODEL)
        .is_some_and(|(_, _, o)| o.first() == Some(&PHYSICAL64));
    match physical64 {
        true => vec!["-arch=spir64".into()],
        false => vec!["-arch=spir".into()],
    }
}

/// Translates an OpenCL SPIR-V module to LLVM bitcode; Err holds the translator's message (the
/// module is malformed or uses something the translator does not know).
pub fn to_bitcode(il: &[u8]) -> Result<Vec<u8>, String> {
    let tool = translator().ok_or_else(|| {
        "no SPIR-V translator found (install Debian's llvm-spirv-15 or set VKCL_LLVM_SPIRV)"
            .to_string()
    })?;
    let il = lower_spirv_1_4(il);
    let il = function_variable_initialisers(&il);
    let il = long_vector_inserts(&il);
    let il = composite_constructs(&il);
    let il = fix_printf(&il);
    let il = &il[..];
    let cache = crate::cache::get();
    let key = crate::cache::key(&[b"llvm-spirv-1", tool.as_os_str().as_encoded_bytes(), il]);
    if let Some(hit) = cache.and_then(|c| c.load("llvm-spirv", &key)) {
        return Ok(hit);
    }
    let dir =
        super::tempdir::PrivateDir::new("il").map_err(|e| format!("temporary directory: {e}"))?;
    let (input, output) = (dir.path().join("in.spv"), dir.path().join("out.bc"));
    std::fs::write(&input, il).map_err(|e| format!("{}: {e}", input.display()))?;
    let run = Command::new(&tool)
        .arg("-r")
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(|e| format!("{}: {e}", tool.display()))?;
    let bitcode = std::fs::read(&output).ok().filter(|_| run.status.success());
    match bitcode {
        Some(bc) if bc.starts_with(b"BC\xc0\xde") => {
            if let Some(c) = cache {
                c.store("llvm-spirv", &key, &bc);
            }
            Ok(bc)
        }
        _ => Err(format!(
            "{} could not translate the module ({}): {}",
            tool.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        )),
    }
}
