//! Unnormalized image coordinates that clspv normalizes, rounded so that the driver's
//! unnormalization does not land below them (a SPIR-V pass, on words).
//!
//! Vulkan has unnormalized samplers for 1D and 2D images only, so clspv reads a 3D image (and
//! an array) through a sampler with unnormalized coordinates by dividing the coordinate by the
//! image's size (`x / (size * k) * k`, `k` a power of two that keeps the division in range)
//! and sampling with a normalized sampler, where the driver multiplies by the size again. In
//! single precision `x / size * size` is not always `x`: `6.5 / 22 * 22` is 6.4999995, so a
//! linear read at a texel centre (weight 0 in the spec's formula, section 8.3 of the OpenCL C
//! specification) took a weight of 5e-7 from the texel below, one the spec's eight texels do
//! not include (the conformance suite's 3D linear reads of float images with large values
//! failed). Each such normalized coordinate `n` (the rounded quotient) is now the least of
//! `n` and its neighbouring floats whose product with the size is not below `x`: exact where
//! a float gives `x` back (the neighbour below where `n` overshoots), else just above, which
//! only moves weight towards a texel the spec's eight include (the conformance bound is 2^-7
//! of the largest of them). The product is checked as the driver makes it on lavapipe, one
//! rounded multiplication. Nearest reads (clspv's `(floor(x) + 0.5) / size`) keep their texel.
//! Modules without the pattern, or without the vector types the rewrite needs, are returned
//! as they are. Application code of the same shape (a quotient by an integer converted to
//! float, times the factor it was divided by) may move by one ulp, within the 2.5 ulp the
//! OpenCL C specification allows a single-precision division.

use std::collections::HashMap;

use super::spirv::instructions;

const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_CONSTANT: u32 = 43;
const OP_CONSTANT_COMPOSITE: u32 = 44;
const OP_FUNCTION: u32 = 54;
const OP_CONVERT_U_TO_F: u32 = 112;
const OP_CONVERT_S_TO_F: u32 = 111;
const OP_BITCAST: u32 = 124;
const OP_IADD: u32 = 128;
const OP_FMUL: u32 = 133;
const OP_FDIV: u32 = 136;
const OP_SELECT: u32 = 169;
const OP_FORD_LESS_THAN: u32 = 184;
const OP_FORD_GREATER_THAN_EQUAL: u32 = 190;

fn inst(op: u32, operands: &[u32]) -> Vec<u32> {
    let mut v = vec![((operands.len() as u32 + 1) << 16) | op];
    v.extend_from_slice(operands);
    v
}

/// `spirv` with every normalized coordinate `x / (size * k) * k` (size converted from an
/// integer) rounded up where its product with the size falls below `x`.
pub fn round_up(spirv: &[u32]) -> Vec<u32> {
    // Scalar types: float 32 / uint 32 / bool ids; vectors by (component, count).
    let (mut float, mut uint, mut boolean) = (None, None, None);
    let mut vectors: HashMap<(u32, u32), u32> = HashMap::new();
    let mut float_types: HashMap<u32, u32> = HashMap::new(); // float (vector) type -> count
    let mut converted = std::collections::HashSet::new(); // floats converted from integers
    let mut products = HashMap::new(); // FMul result -> (a, b)
    let mut quotients = HashMap::new(); // FDiv result -> (x, m)
    let mut first_function = None;
    for (at, i) in instructions(spirv) {
        match (i[0] & 0xffff, i) {
            (OP_TYPE_FLOAT, [_, id, 32]) => float = Some(*id),
            (OP_TYPE_INT, [_, id, 32, _]) => uint = Some(*id),
            (OP_TYPE_BOOL, [_, id]) => boolean = Some(*id),
            (OP_TYPE_VECTOR, [_, id, c, n]) => {
                vectors.insert((*c, *n), *id);
            }
            (OP_FUNCTION, _) => {
                first_function.get_or_insert(at);
            }
            (OP_CONVERT_S_TO_F | OP_CONVERT_U_TO_F, [_, _, id, _]) => {
                converted.insert(*id);
            }
            (OP_FMUL, [_, _, id, a, b]) => {
                products.insert(*id, (*a, *b));
            }
            (OP_FDIV, [_, _, id, x, m]) => {
                quotients.insert(*id, (*x, *m));
            }
            _ => {}
        }
    }
    let (Some(float), Some(uint), Some(boolean), Some(first_function)) =
        (float, uint, boolean, first_function)
    else {
        return spirv.to_vec();
    };
    float_types.insert(float, 1);
    for (&(c, n), &id) in &vectors {
        if c == float {
            float_types.insert(id, n);
        }
    }
    // `r = d * k` with `d = x / m`, `m = size * k` (either order), size converted: (x, size).
    let normalized = |d: u32, k: u32| -> Option<(u32, u32)> {
        let &(x, m) = quotients.get(&d)?;
        let &(a, b) = products.get(&m)?;
        let size = if b == k {
            a
        } else if a == k {
            b
        } else {
            return None;
        };
        converted.contains(&size).then_some((x, size))
    };
    let mut bound = spirv[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut constants: Vec<u32> = vec![];
    let mut steps: HashMap<u32, (u32, u32, u32)> = HashMap::new(); // float type -> (0, 1, -1)
    let mut body = vec![];
    let mut changed = false;
    for (_, i) in instructions(spirv).filter(|&(at, _)| at >= first_function) {
        let found = match (i[0] & 0xffff, i) {
            (OP_FMUL, [_, ty, r, d, k]) => normalized(*d, *k).map(|xs| (*ty, *r, *d, *k, xs)),
            _ => None,
        };
        let Some((ty, r, d, k, (x, size))) = found else {
            body.extend_from_slice(i);
            continue;
        };
        let Some(&n) = float_types.get(&ty) else {
            body.extend_from_slice(i);
            continue;
        };
        let (bools, uints) = match n {
            1 => (Some(boolean), Some(uint)),
            _ => (
                vectors.get(&(boolean, n)).copied(),
                vectors.get(&(uint, n)).copied(),
            ),
        };
        let (Some(bools), Some(uints)) = (bools, uints) else {
            body.extend_from_slice(i);
            continue;
        };
        let (zero, one, minus_one) = *steps.entry(ty).or_insert_with(|| {
            let mut scalar = |t: u32, v: u32| {
                let id = fresh();
                constants.extend(inst(OP_CONSTANT, &[t, id, v]));
                id
            };
            let (z, o, m) = (scalar(float, 0), scalar(uint, 1), scalar(uint, u32::MAX));
            if n == 1 {
                return (z, o, m);
            }
            let mut splat = |t: u32, c: u32| {
                let id = fresh();
                let mut ops = vec![t, id];
                ops.extend(std::iter::repeat_n(c, n as usize));
                constants.extend(inst(OP_CONSTANT_COMPOSITE, &ops));
                id
            };
            (splat(ty, z), splat(uints, o), splat(uints, m))
        });
        let [r0, p, below, bits, negative, step_up, step_down] = [(); 7].map(|_| fresh());
        let [next_up, up, next_down, down, p_down, down_ok, kept] = [(); 7].map(|_| fresh());
        body.extend(inst(OP_FMUL, &[ty, r0, d, k]));
        body.extend(inst(OP_FMUL, &[ty, p, r0, size]));
        body.extend(inst(OP_FORD_LESS_THAN, &[bools, below, p, x]));
        body.extend(inst(OP_BITCAST, &[uints, bits, r0]));
        body.extend(inst(OP_FORD_LESS_THAN, &[bools, negative, r0, zero]));
        body.extend(inst(OP_SELECT, &[uints, step_up, negative, minus_one, one]));
        body.extend(inst(
            OP_SELECT,
            &[uints, step_down, negative, one, minus_one],
        ));
        body.extend(inst(OP_IADD, &[uints, next_up, bits, step_up]));
        body.extend(inst(OP_BITCAST, &[ty, up, next_up]));
        body.extend(inst(OP_IADD, &[uints, next_down, bits, step_down]));
        body.extend(inst(OP_BITCAST, &[ty, down, next_down]));
        body.extend(inst(OP_FMUL, &[ty, p_down, down, size]));
        body.extend(inst(
            OP_FORD_GREATER_THAN_EQUAL,
            &[bools, down_ok, p_down, x],
        ));
        body.extend(inst(OP_SELECT, &[ty, kept, down_ok, down, r0]));
        body.extend(inst(OP_SELECT, &[ty, r, below, up, kept]));
        changed = true;
    }
    if !changed {
        return spirv.to_vec();
    }
    let mut out = spirv[..first_function].to_vec();
    out.extend(constants);
    out.extend(body);
    out[3] = bound;
    out
}
