//! Repairs clspv's access chains that lost the index into a struct's member array.
//!
//! A pointer to a member array passed to a helper (`rd(a[i].d, j)` with
//! `struct { uint d[16]; uint len; }`) reaches clspv as `gep i32, (gep %msg_t, a, i), j`.
//! clspv rebuilds it as the access chain `a[0][(17*i + j) / 17][0][0]`: a dynamic index into a
//! multi-member struct has no typed form, so it keeps the quotient and drops the remainder
//! (docs/DECISIONS.md). The word it meant is the dividend, `17*i + j`, in units of the element
//! loaded. This pass recognises that shape and reads the word through a second variable on the
//! same binding, typed as an array of that element; both variables are decorated `Aliased`
//! (and left writable by `mark_read_only_buffers`).
//!
//! The shape, all of it required: an access chain on a storage buffer variable whose block
//! holds a runtime array of a struct of two or more members, with indices `0`, then an
//! `OpUDiv X C` (or `OpShiftRightLogical X log2 C`) with C the struct's size in elements, then
//! constant zeros down to a scalar or vector element E with `C * size(E)` the array's stride;
//! and X a sum that holds a product by C (the struct index scaled back). A program writing
//! `a[(17*i + j) / 17].d[0]` itself would be read the same way; nothing else is touched.

use super::spirv::instructions;
use std::collections::HashMap;

const OP_ENTRY_POINT: u32 = 15;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_FUNCTION: u32 = 54;
const OP_VARIABLE: u32 = 59;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_PTR_ACCESS_CHAIN: u32 = 67;
const OP_CONVERT_U_TO_PTR: u32 = 120;
const OP_BITCAST: u32 = 124;
const OP_FUNCTION_PARAMETER: u32 = 55;
const OP_LOAD: u32 = 61;
const OP_COPY_OBJECT: u32 = 83;
const OP_SELECT: u32 = 169;
const OP_PHI: u32 = 245;
const PHYSICAL_STORAGE_BUFFER: u32 = 5349;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const OP_IADD: u32 = 128;
const OP_IMUL: u32 = 132;
const OP_UDIV: u32 = 134;
const OP_SHIFT_RIGHT_LOGICAL: u32 = 194;
const OP_SHIFT_LEFT_LOGICAL: u32 = 196;
const STORAGE_BUFFER: u32 = 12;
const DECORATION_BLOCK: u32 = 2;
const DECORATION_ARRAY_STRIDE: u32 = 6;
const DECORATION_ALIASED: u32 = 20;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;
const DECORATION_OFFSET: u32 = 35;

struct Module<'a> {
    defs: HashMap<u32, &'a [u32]>,
    constants: HashMap<u32, u32>,
    stride: HashMap<u32, u32>,
    set_binding: HashMap<u32, (u32, u32)>,
    /// The result types of the instructions that may give a physical chain its base.
    value_types: HashMap<u32, u32>,
}

impl Module<'_> {
    /// Size in bytes of a scalar or vector type.
    fn element_size(&self, ty: u32) -> Option<u32> {
        let d = self.defs.get(&ty)?;
        match d[0] & 0xffff {
            OP_TYPE_INT | OP_TYPE_FLOAT => Some(d[2] / 8),
            OP_TYPE_VECTOR => Some(self.element_size(d[2])? * if d[3] == 3 { 4 } else { d[3] }),
            _ => None,
        }
    }

    /// The type reached from `ty` by constant zero indices `idx`.
    fn walk_zeros(&self, mut ty: u32, idx: &[u32]) -> Option<u32> {
        for i in idx {
            if self.constants.get(i) != Some(&0) {
                return None;
            }
            let d = self.defs.get(&ty)?;
            ty = match d[0] & 0xffff {
                OP_TYPE_STRUCT | OP_TYPE_ARRAY | OP_TYPE_VECTOR => d[2],
                _ => return None,
            };
        }
        Some(ty)
    }

    /// Whether `x` is a sum (or the product itself) holding a product by `c`.
    fn scaled_sum(&self, x: u32, c: u32, depth: u32) -> bool {
        let Some(d) = self.defs.get(&x) else {
            return false;
        };
        let konst = |id: &u32| self.constants.get(id).copied();
        match d[0] & 0xffff {
            OP_IMUL => konst(&d[3]) == Some(c) || konst(&d[4]) == Some(c),
            OP_SHIFT_LEFT_LOGICAL => konst(&d[4]).is_some_and(|k| k < 32 && 1 << k == c),
            OP_IADD if depth < 8 => {
                self.scaled_sum(d[3], c, depth + 1) || self.scaled_sum(d[4], c, depth + 1)
            }
            _ => false,
        }
    }
}

/// `spirv` with the access chains described in the module comment repaired, or None when there
/// are none (or the module is not understood).
pub fn repair(spirv: &[u32]) -> Option<Vec<u32>> {
    let mut m = Module {
        defs: HashMap::new(),
        constants: HashMap::new(),
        stride: HashMap::new(),
        set_binding: HashMap::new(),
        value_types: HashMap::new(),
    };
    let mut ptr_chains = vec![];
    let physical = super::physical::is_physical(spirv);
    let mut last_annotation = None;
    let mut first_function = None;
    let mut chains = vec![];
    for (at, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        let id_at = match op {
            OP_TYPE_INT..=OP_TYPE_POINTER => Some(1),
            OP_CONSTANT
            | OP_VARIABLE
            | OP_IADD
            | OP_IMUL
            | OP_UDIV
            | OP_SHIFT_RIGHT_LOGICAL
            | OP_SHIFT_LEFT_LOGICAL
            | OP_ACCESS_CHAIN => Some(2),
            _ => None,
        };
        if let Some(&id) = id_at.and_then(|i| inst.get(i)) {
            m.defs.insert(id, inst);
        }
        match op {
            OP_CONSTANT if inst.len() == 4 => {
                m.constants.insert(inst[2], inst[3]);
            }
            // 64-bit constants (the indices of 64-bit builds) that fit in 32 bits.
            OP_CONSTANT if inst.len() == 5 && inst[4] == 0 => {
                m.constants.insert(inst[2], inst[3]);
            }
            OP_DECORATE | OP_MEMBER_DECORATE => {
                last_annotation = Some(at + inst.len());
                if op == OP_DECORATE && inst.len() == 4 {
                    match inst[2] {
                        DECORATION_ARRAY_STRIDE => {
                            m.stride.insert(inst[1], inst[3]);
                        }
                        DECORATION_DESCRIPTOR_SET => {
                            m.set_binding.entry(inst[1]).or_default().0 = inst[3];
                        }
                        DECORATION_BINDING => {
                            m.set_binding.entry(inst[1]).or_default().1 = inst[3];
                        }
                        _ => {}
                    }
                }
            }
            OP_FUNCTION if first_function.is_none() => first_function = Some(at),
            OP_ACCESS_CHAIN if inst.len() >= 7 => chains.push((at, inst)),
            OP_PTR_ACCESS_CHAIN if inst.len() >= 6 => ptr_chains.push((at, inst)),
            _ => {}
        }
        if let (
            OP_FUNCTION_PARAMETER
            | OP_LOAD
            | OP_ACCESS_CHAIN
            | OP_PTR_ACCESS_CHAIN
            | OP_COPY_OBJECT
            | OP_CONVERT_U_TO_PTR
            | OP_BITCAST
            | OP_SELECT
            | OP_PHI,
            Some(&ty),
            Some(&id),
        ) = (op, inst.get(1), inst.get(2))
        {
            m.value_types.insert(id, ty);
        }
    }
    let (last_annotation, first_function) = (last_annotation?, first_function?);
    if physical {
        return repair_physical(spirv, &m, &ptr_chains, last_annotation);
    }
    // (access chain offset, variable, element pointer type, element type, stride, X)
    let mut fixes = vec![];
    for (at, inst) in chains {
        let (result_ty, var, idx) = (inst[1], inst[3], &inst[4..]);
        let Some(v) = m.defs.get(&var).filter(|v| v[0] & 0xffff == OP_VARIABLE) else {
            continue;
        };
        let Some(block) = m
            .defs
            .get(&v[1])
            .filter(|p| p[2] == STORAGE_BUFFER)
            .map(|p| p[3])
        else {
            continue;
        };
        let found = (|| {
            let b = m.defs.get(&block)?;
            let rt = *b.get(2).filter(|_| b[0] & 0xffff == OP_TYPE_STRUCT)?;
            let r = m
                .defs
                .get(&rt)
                .filter(|r| r[0] & 0xffff == OP_TYPE_RUNTIME_ARRAY)?;
            let s = m
                .defs
                .get(&r[2])
                .filter(|s| s[0] & 0xffff == OP_TYPE_STRUCT)?;
            if s.len() < 4 || m.constants.get(&idx[0]) != Some(&0) {
                return None;
            }
            let q = m.defs.get(&idx[1])?;
            let divisor = m.constants.get(q.get(4)?).copied()?;
            let c = match q[0] & 0xffff {
                OP_UDIV => divisor,
                OP_SHIFT_RIGHT_LOGICAL if divisor < 32 => 1 << divisor,
                _ => return None,
            };
            let elem = m.walk_zeros(r[2], &idx[2..])?;
            let size = m.element_size(elem)?;
            let stride = *m.stride.get(&rt)?;
            let ptr = m.defs.get(&result_ty)?;
            let x = q[3];
            (ptr[3] == elem && c > 1 && c * size == stride && m.scaled_sum(x, c, 0))
                .then_some((elem, size, x))
        })();
        if let Some((elem, size, x)) = found {
            fixes.push((at, var, result_ty, elem, size, x, idx[0]));
        }
    }
    if fixes.is_empty() {
        return None;
    }
    let mut bound = spirv[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    // One alias per (variable, element type).
    let mut aliases: HashMap<(u32, u32), u32> = HashMap::new();
    let mut annotations: Vec<u32> = vec![];
    let mut types: Vec<u32> = vec![];
    let mut replace: HashMap<usize, Vec<u32>> = HashMap::new();
    let mut aliased = vec![];
    for &(at, var, result_ty, elem, size, x, zero) in &fixes {
        let alias = *aliases.entry((var, elem)).or_insert_with(|| {
            let (rt, block, ptr, alias) = (fresh(), fresh(), fresh(), fresh());
            let (set, binding) = m.set_binding.get(&var).copied().unwrap_or_default();
            annotations.extend([(4 << 16) | OP_DECORATE, rt, DECORATION_ARRAY_STRIDE, size]);
            annotations.extend([(3 << 16) | OP_DECORATE, block, DECORATION_BLOCK]);
            annotations.extend([
                (5 << 16) | OP_MEMBER_DECORATE,
                block,
                0,
                DECORATION_OFFSET,
                0,
            ]);
            annotations.extend([
                (4 << 16) | OP_DECORATE,
                alias,
                DECORATION_DESCRIPTOR_SET,
                set,
            ]);
            annotations.extend([(4 << 16) | OP_DECORATE, alias, DECORATION_BINDING, binding]);
            annotations.extend([(3 << 16) | OP_DECORATE, alias, DECORATION_ALIASED]);
            types.extend([(3 << 16) | OP_TYPE_RUNTIME_ARRAY, rt, elem]);
            types.extend([(3 << 16) | OP_TYPE_STRUCT, block, rt]);
            types.extend([(4 << 16) | OP_TYPE_POINTER, ptr, STORAGE_BUFFER, block]);
            types.extend([(4 << 16) | OP_VARIABLE, ptr, alias, STORAGE_BUFFER]);
            aliased.push((var, alias));
            alias
        });
        let id = spirv[at + 2];
        replace.insert(
            at,
            vec![(6 << 16) | OP_ACCESS_CHAIN, result_ty, id, alias, zero, x],
        );
    }
    for &(var, _) in &aliased {
        if !m.set_binding.contains_key(&var) {
            return None;
        }
    }
    let mut vars: Vec<u32> = aliased.iter().map(|a| a.0).collect();
    vars.sort_unstable();
    vars.dedup();
    for v in vars {
        annotations.extend([(3 << 16) | OP_DECORATE, v, DECORATION_ALIASED]);
    }
    let mut out = spirv[..5].to_vec();
    out[3] = bound;
    for (at, inst) in instructions(spirv) {
        if at == first_function {
            out.extend(&types);
        }
        if let Some(r) = replace.get(&at) {
            out.extend(r);
        } else if inst[0] & 0xffff == OP_ENTRY_POINT {
            let extra: Vec<u32> = aliased
                .iter()
                .filter(|(v, _)| inst[3..].contains(v))
                .map(|&(_, a)| a)
                .collect();
            out.push(inst[0] + ((extra.len() as u32) << 16));
            out.extend(&inst[1..]);
            out.extend(extra);
        } else {
            out.extend(inst);
        }
        if at + inst.len() == last_annotation {
            out.extend(&annotations);
        }
    }
    Some(out)
}

/// [`repair`] in physical addressing, where clspv writes the shape as
/// `OpPtrAccessChain base (X / C) 0 ... 0` on a PhysicalStorageBuffer pointer to the struct:
/// the chain becomes `OpPtrAccessChain (OpBitcast base) X`, X elements from the base (the
/// element pointer type given its ArrayStride where clspv did not).
fn repair_physical(
    spirv: &[u32],
    m: &Module,
    ptr_chains: &[(usize, &[u32])],
    last_annotation: usize,
) -> Option<Vec<u32>> {
    // (chain offset, result type, base, X)
    let mut fixes = vec![];
    let mut strides: Vec<(u32, u32)> = vec![];
    for &(at, inst) in ptr_chains {
        let (result_ty, base, idx) = (inst[1], inst[3], &inst[4..]);
        let found = (|| {
            let base_ty = *m.value_types.get(&base)?;
            let p = m.defs.get(&base_ty)?;
            if p[0] & 0xffff != OP_TYPE_POINTER || p[2] != PHYSICAL_STORAGE_BUFFER {
                return None;
            }
            let s = m
                .defs
                .get(&p[3])
                .filter(|s| s[0] & 0xffff == OP_TYPE_STRUCT)?;
            if s.len() < 4 {
                return None;
            }
            let q = m.defs.get(&idx[0])?;
            let divisor = m.constants.get(q.get(4)?).copied()?;
            let c = match q[0] & 0xffff {
                OP_UDIV => divisor,
                OP_SHIFT_RIGHT_LOGICAL if divisor < 64 => 1u32.checked_shl(divisor)?,
                _ => return None,
            };
            let elem = m.walk_zeros(p[3], &idx[1..])?;
            let size = m.element_size(elem)?;
            let stride = *m.stride.get(&base_ty)?;
            let ptr = m.defs.get(&result_ty)?;
            let x = q[3];
            let fits = ptr[0] & 0xffff == OP_TYPE_POINTER && ptr[2] == PHYSICAL_STORAGE_BUFFER;
            (fits && ptr[3] == elem && c > 1 && c * size == stride && m.scaled_sum(x, c, 0))
                .then_some((size, x))
        })();
        let Some((size, x)) = found else {
            continue;
        };
        match m.stride.get(&result_ty) {
            Some(&s) if s != size => continue,
            Some(_) => {}
            None => {
                if strides.iter().any(|&(t, s)| t == result_ty && s != size) {
                    continue;
                }
                if !strides.contains(&(result_ty, size)) {
                    strides.push((result_ty, size));
                }
            }
        }
        fixes.push((at, result_ty, base, x));
    }
    if fixes.is_empty() {
        return None;
    }
    let mut bound = spirv[3];
    let mut replace: HashMap<usize, Vec<u32>> = HashMap::new();
    for &(at, result_ty, base, x) in &fixes {
        let cast = bound;
        bound += 1;
        let id = spirv[at + 2];
        replace.insert(
            at,
            vec![
                (4 << 16) | OP_BITCAST,
                result_ty,
                cast,
                base,
                (5 << 16) | OP_PTR_ACCESS_CHAIN,
                result_ty,
                id,
                cast,
                x,
            ],
        );
    }
    let annotations: Vec<u32> = strides
        .iter()
        .flat_map(|&(t, s)| [(4 << 16) | OP_DECORATE, t, DECORATION_ARRAY_STRIDE, s])
        .collect();
    let mut out = spirv[..5].to_vec();
    out[3] = bound;
    for (at, inst) in instructions(spirv) {
        match replace.get(&at) {
            Some(r) => out.extend(r),
            None => out.extend(inst),
        }
        if at + inst.len() == last_annotation {
            out.extend(&annotations);
        }
    }
    Some(out)
}
