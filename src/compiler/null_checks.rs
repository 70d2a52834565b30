//! Null checks of pointers to variables, which clspv 0.0.1 leaves as pointer-to-integer
//! conversions.
//!
//! After inlining, clspv resolves `to_local(p)`, `to_global(p)` and `to_private(p)` of a
//! generic pointer to the pointer or to null, but a test of the result (`if (to_local(p))`,
//! `to_local(p) != 0`) becomes `OpConvertPtrToU` of the variable compared with zero, which
//! Vulkan's logical addressing does not have (invalid SPIR-V). A variable's address is never
//! null, so where a conversion's pointer is a variable (or an access chain into one) and its
//! only uses are `==` / `!=` against a zero constant, the conversion becomes the non-zero
//! constant 1 (an `OpCopyObject` of it). Any other use of a converted pointer is left alone.

use std::collections::HashSet;

use super::spirv::instructions;

const OP_TYPE_INT: u32 = 21;
const OP_CONSTANT: u32 = 43;
const OP_CONSTANT_NULL: u32 = 46;
const OP_FUNCTION: u32 = 54;
const OP_VARIABLE: u32 = 59;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_IN_BOUNDS_ACCESS_CHAIN: u32 = 66;
const OP_COPY_OBJECT: u32 = 83;
const OP_CONVERT_PTR_TO_U: u32 = 117;
const OP_I_EQUAL: u32 = 170;
const OP_I_NOT_EQUAL: u32 = 171;

/// `spirv` with the null checks of variables' addresses constant (unchanged without them).
pub fn fold(spirv: &[u32]) -> Vec<u32> {
    let mut never_null = HashSet::new();
    let mut zeros = HashSet::new();
    let mut int_widths = std::collections::HashMap::new();
    // (word offset, result type, result) of each conversion of a never-null pointer.
    let mut conversions = vec![];
    let mut first_function = None;
    for (at, i) in instructions(spirv) {
        match (i[0] & 0xffff, i.len()) {
            (OP_TYPE_INT, 4) => {
                int_widths.insert(i[1], i[2]);
            }
            (OP_CONSTANT, 4) if i[3] == 0 => {
                zeros.insert(i[2]);
            }
            (OP_CONSTANT, 5) if i[3] == 0 && i[4] == 0 => {
                zeros.insert(i[2]);
            }
            (OP_CONSTANT_NULL, 3) => {
                zeros.insert(i[2]);
            }
            (OP_VARIABLE, n) if n >= 4 => {
                never_null.insert(i[2]);
            }
            (OP_ACCESS_CHAIN | OP_IN_BOUNDS_ACCESS_CHAIN, n) if n >= 4 => {
                if never_null.contains(&i[3]) {
                    never_null.insert(i[2]);
                }
            }
            (OP_CONVERT_PTR_TO_U, 4) if never_null.contains(&i[3]) => {
                conversions.push((at, i[1], i[2]));
            }
            (OP_FUNCTION, _) => {
                first_function.get_or_insert(at);
            }
            _ => {}
        }
    }
    // Only conversions compared with zero and used nowhere else. A function's value is used
    // in functions only (types, constants and strings before them have literal words that
    // may equal its id: `OpTypeInt 64 0` kept conversion %64); there a literal word equal to
    // the id counts as a use (the check errs towards leaving the module alone).
    let body = first_function.unwrap_or(spirv.len());
    conversions.retain(|&(_, ty, r)| {
        int_widths.contains_key(&ty)
            && instructions(spirv)
                .skip_while(|&(at, _)| at < body)
                .all(|(_, i)| {
                    let op = i[0] & 0xffff;
                    if op == OP_CONVERT_PTR_TO_U || !i[1..].contains(&r) {
                        return true;
                    }
                    matches!(op, OP_I_EQUAL | OP_I_NOT_EQUAL)
                        && i.len() == 5
                        && ((i[3] == r && zeros.contains(&i[4]))
                            || (i[4] == r && zeros.contains(&i[3])))
                })
    });
    let Some(types_end) = first_function.filter(|_| !conversions.is_empty()) else {
        return spirv.to_vec();
    };
    let mut bound = spirv[3];
    let mut ones: Vec<(u32, u32)> = vec![];
    let mut constants = vec![];
    for &(_, ty, _) in &conversions {
        if !ones.iter().any(|&(t, _)| t == ty) {
            let one = bound;
            bound += 1;
            ones.push((ty, one));
            match int_widths[&ty] {
                64 => constants.extend([(5 << 16) | OP_CONSTANT, ty, one, 1, 0]),
                _ => constants.extend([(4 << 16) | OP_CONSTANT, ty, one, 1]),
            }
        }
    }
    let mut out = spirv[..types_end].to_vec();
    out[3] = bound;
    out.extend(constants);
    out.extend_from_slice(&spirv[types_end..]);
    let shift = out.len() - spirv.len();
    for &(at, ty, _) in &conversions {
        let one = ones
            .iter()
            .find(|&&(t, _)| t == ty)
            .map(|&(_, o)| o)
            .unwrap_or(0);
        out[at + shift] = (4 << 16) | OP_COPY_OBJECT;
        out[at + shift + 3] = one;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_without_conversions_are_unchanged() {
        let m = [
            0x0723_0203,
            0x0001_0000,
            0,
            10,
            0,
            (4 << 16) | OP_TYPE_INT,
            1,
            32,
            0,
        ];
        assert_eq!(fold(&m), m);
    }

    #[test]
    fn strings_are_not_uses() {
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 60, 0];
        // OpExtInstImport %1 "NonSemantic.ClspvReflection.5": its last word is 53.
        let name = b"NonSemantic.ClspvReflection.5\0\0\0";
        let words: Vec<u32> = name
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(words.last(), Some(&53));
        m.push(((2 + words.len() as u32) << 16) | 11);
        m.push(1);
        m.extend(&words);
        m.extend([(4 << 16) | OP_TYPE_INT, 2, 32, 0]);
        m.extend([(4 << 16) | OP_CONSTANT, 2, 3, 0]);
        m.extend([(4 << 16) | OP_VARIABLE, 4, 14, 4]);
        m.extend([(5 << 16) | OP_FUNCTION, 5, 6, 0, 7]);
        m.extend([(4 << 16) | OP_CONVERT_PTR_TO_U, 2, 53, 14]);
        m.extend([(5 << 16) | OP_I_EQUAL, 8, 54, 53, 3]);
        let folded = fold(&m);
        let at = folded.len() - 9;
        assert_eq!(folded[at..at + 4], [(4 << 16) | OP_COPY_OBJECT, 2, 53, 60]);
    }
}
