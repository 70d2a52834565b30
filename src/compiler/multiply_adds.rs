//! Integer products that LLVM factored out of multiply-adds put back in multiply-add form (a
//! SPIR-V pass, on words).
//!
//! clspv's optimiser rewrites `y * x + y` as `(x + 1) * y`, and in a chain such as clpeak's
//! `x = y * x + y; y = x * y + x` the second product as `(x' + (x + 1)) * y`, reusing the
//! sum it made for the first: two instructions per multiply-add either way. A GPU with an
//! integer multiply-add (NVIDIA's IMAD) does the source's form in one, but its compiler does
//! not undo LLVM's factoring: clpeak's integer compute ran at 0.67 of NVIDIA's OpenCL on the
//! H100, which is three instructions for every two of native's. So every integer product of
//! a sum is distributed back where that gives a multiply-add:
//! - `(s + 1) * b` becomes `s * b + b`;
//! - `(m + t) * c`, where `m` is `t * c`, becomes `m * c + m` (`m * c + t * c`).
//!
//! Both are exact in wrapping integer arithmetic, and neither adds an instruction that is
//! not there already (the sum stays where it has other uses; a product of a sum and an add
//! is the multiply-add). Products with decorations (NoSignedWrap and the like) are left
//! alone.

use std::collections::{HashMap, HashSet};

use super::spirv::instructions;

const OP_CONSTANT: u32 = 43;
const OP_CONSTANT_COMPOSITE: u32 = 44;
const OP_DECORATE: u32 = 71;
const OP_IADD: u32 = 128;
const OP_IMUL: u32 = 132;

/// `spirv` with its products of sums distributed where that makes a multiply-add (the module
/// as it is where none does).
pub fn distribute(spirv: &[u32]) -> Vec<u32> {
    let mut ones = HashSet::new();
    let mut sums = HashMap::new();
    let mut products = HashMap::new();
    let mut decorated = HashSet::new();
    for (_, inst) in instructions(spirv) {
        match (inst[0] & 0xffff, inst.len()) {
            (OP_CONSTANT, 4) if inst[3] == 1 => {
                ones.insert(inst[2]);
            }
            (OP_CONSTANT, 5) if inst[3..] == [1, 0] => {
                ones.insert(inst[2]);
            }
            (OP_CONSTANT_COMPOSITE, n) if n > 3 && inst[3..].iter().all(|c| ones.contains(c)) => {
                ones.insert(inst[2]);
            }
            (OP_DECORATE, _) => {
                decorated.insert(inst[1]);
            }
            (OP_IADD, 5) => {
                sums.insert(inst[2], (inst[3], inst[4]));
            }
            (OP_IMUL, 5) => {
                products.insert(inst[2], (inst[3], inst[4]));
            }
            _ => {}
        }
    }
    // The operands of one product: the sum's ids, the factor, and the addend of the result.
    let rewrite = |sum: u32, factor: u32| -> Option<(u32, u32)> {
        let &(a, b) = sums.get(&sum)?;
        for (s, other) in [(a, b), (b, a)] {
            // (s + 1) * factor = s * factor + factor
            if ones.contains(&other) {
                return Some((s, factor));
            }
            // (m + t) * factor with m = t * factor: m * factor + m
            if let Some(&(p, q)) = products.get(&s) {
                if (p, q) == (other, factor) || (q, p) == (other, factor) {
                    return Some((s, s));
                }
            }
        }
        None
    };
    let mut bound = spirv[3];
    let mut out = Vec::with_capacity(spirv.len() + 64);
    out.extend_from_slice(&spirv[..5]);
    for (_, inst) in instructions(spirv) {
        let distributed = match (inst[0] & 0xffff, inst.len()) {
            (OP_IMUL, 5) if !decorated.contains(&inst[2]) => {
                let (x, y) = (inst[3], inst[4]);
                rewrite(x, y)
                    .map(|(s, addend)| (s, y, addend))
                    .or_else(|| rewrite(y, x).map(|(s, addend)| (s, x, addend)))
            }
            _ => None,
        };
        match distributed {
            Some((s, factor, addend)) => {
                let (ty, result) = (inst[1], inst[2]);
                out.extend([5 << 16 | OP_IMUL, ty, bound, s, factor]);
                out.extend([5 << 16 | OP_IADD, ty, result, bound, addend]);
                bound += 1;
            }
            None => out.extend_from_slice(inst),
        }
    }
    out[3] = bound;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module's function words with ids: 1 = uint, 2 = const 1, 3.. values.
    fn module(body: &[[u32; 5]]) -> Vec<u32> {
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        m.extend([4 << 16 | OP_CONSTANT, 1, 2, 1]);
        body.iter().for_each(|i| m.extend(i));
        m
    }

    fn op(code: u32, result: u32, a: u32, b: u32) -> [u32; 5] {
        [5 << 16 | code, 1, result, a, b]
    }

    #[test]
    fn products_of_sums_become_multiply_adds() {
        // %11 = %10 + 1; %12 = %11 * %9 ; %13 = %12 + %11 ; %14 = %13 * %9
        let m = module(&[
            op(OP_IADD, 11, 10, 2),
            op(OP_IMUL, 12, 11, 9),
            op(OP_IADD, 13, 12, 11),
            op(OP_IMUL, 14, 13, 9),
        ]);
        let d = distribute(&m);
        assert_eq!(d[3], 102);
        let body: Vec<_> = instructions(&d).skip(1).map(|(_, i)| i.to_vec()).collect();
        assert_eq!(
            body,
            [
                op(OP_IADD, 11, 10, 2).to_vec(),
                op(OP_IMUL, 100, 10, 9).to_vec(),
                op(OP_IADD, 12, 100, 9).to_vec(),
                op(OP_IADD, 13, 12, 11).to_vec(),
                op(OP_IMUL, 101, 12, 9).to_vec(),
                op(OP_IADD, 14, 101, 12).to_vec(),
            ]
        );
    }

    #[test]
    fn other_products_stay() {
        // (a + b) * c with no relation, a product of products, a decorated product.
        let mut m = module(&[
            op(OP_IADD, 11, 10, 8),
            op(OP_IMUL, 12, 11, 9),
            op(OP_IMUL, 13, 12, 12),
            op(OP_IADD, 14, 10, 2),
            op(OP_IMUL, 15, 14, 9),
        ]);
        m.splice(5..5, [3 << 16 | OP_DECORATE, 15, 4469]);
        assert_eq!(distribute(&m), m);
    }
}
