//! Exact float `Fma` after clspv, on devices with doubles.
//!
//! libclc's float built-ins (the argument reductions of sin, cos and tan above all) rely on a
//! fused multiply-add, and clspv emits them as GLSL.std.450 `Fma`. Vulkan does not require
//! `Fma` to be fused (its precision is that of an OpFMul followed by an OpFAdd) and lavapipe
//! rounds twice: sin(-6 pi) comes out as 9e-7 instead of -4.8e-8. Each scalar float `Fma` is
//! rewritten as `(float)((double)a * (double)b + (double)c)`: the product of two floats is
//! exact in double and the sum is rounded once there, which gives the reductions the bits they
//! need. Vector `Fma`s and double `Fma`s are left as they are (docs/DECISIONS.md).

use super::spirv::instructions;

const OP_CAPABILITY: u32 = 17;
const OP_EXT_INST_IMPORT: u32 = 11;
const OP_TYPE_FLOAT: u32 = 22;
const OP_EXT_INST: u32 = 12;
const OP_F_CONVERT: u32 = 115;
const OP_F_MUL: u32 = 133;
const OP_F_ADD: u32 = 129;
const CAPABILITY_FLOAT64: u32 = 10;
const GLSL_FMA: u32 = 50;

fn inst(op: u32, operands: &[u32]) -> Vec<u32> {
    let mut v = vec![((operands.len() as u32 + 1) << 16) | op];
    v.extend_from_slice(operands);
    v
}

/// The module with every scalar float GLSL `Fma` computed in double; unchanged when it has
/// none (or is not what this pass expects).
pub fn exact_float_fma(spirv: &[u32]) -> Vec<u32> {
    rewrite(spirv).unwrap_or_else(|| spirv.to_vec())
}

fn rewrite(spirv: &[u32]) -> Option<Vec<u32>> {
    let mut glsl = None;
    let mut float = None;
    let mut double = None;
    let mut has_f64_cap = false;
    let mut fmas = 0;
    for (_, i) in instructions(spirv) {
        match i[0] & 0xffff {
            OP_CAPABILITY if i.get(1) == Some(&CAPABILITY_FLOAT64) => has_f64_cap = true,
            OP_EXT_INST_IMPORT => {
                let name: Vec<u8> = i[2..].iter().flat_map(|w| w.to_le_bytes()).collect();
                if name.starts_with(b"GLSL.std.450\0") {
                    glsl = Some(i[1]);
                }
            }
            OP_TYPE_FLOAT if i.get(2) == Some(&32) => float = Some(i[1]),
            OP_TYPE_FLOAT if i.get(2) == Some(&64) => double = Some(i[1]),
            OP_EXT_INST if i.len() == 8 && i[4] == GLSL_FMA => fmas += 1,
            _ => {}
        }
    }
    let (glsl, float) = (glsl?, float?);
    if fmas == 0 {
        return None;
    }
    let mut bound = *spirv.get(3)?;
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let double_new = double.is_none();
    let double = double.unwrap_or_else(&mut fresh);
    let mut out = spirv[..5].to_vec();
    let mut cap_done = has_f64_cap;
    for (_, i) in instructions(spirv) {
        let op = i[0] & 0xffff;
        if op == OP_CAPABILITY && !cap_done {
            out.extend(inst(OP_CAPABILITY, &[CAPABILITY_FLOAT64]));
            cap_done = true;
        }
        if op == OP_EXT_INST && i.len() == 8 && i[1] == float && i[3] == glsl && i[4] == GLSL_FMA {
            let (a, b, c) = (fresh(), fresh(), fresh());
            let (m, s) = (fresh(), fresh());
            out.extend(inst(OP_F_CONVERT, &[double, a, i[5]]));
            out.extend(inst(OP_F_CONVERT, &[double, b, i[6]]));
            out.extend(inst(OP_F_CONVERT, &[double, c, i[7]]));
            out.extend(inst(OP_F_MUL, &[double, m, a, b]));
            out.extend(inst(OP_F_ADD, &[double, s, m, c]));
            out.extend(inst(OP_F_CONVERT, &[float, i[2], s]));
            continue;
        }
        out.extend_from_slice(i);
        if op == OP_TYPE_FLOAT && i[1] == float && double_new {
            out.extend(inst(OP_TYPE_FLOAT, &[double, 64]));
        }
    }
    if !cap_done {
        return None;
    }
    out[3] = bound;
    Some(out)
}
