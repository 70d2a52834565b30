//! Loads repeated from read-only storage buffers, made copies of the first (a SPIR-V pass on
//! the module of launches that bind no memory twice).
//!
//! clspv gives a store through one global pointer and a later load through another the order
//! C gives them: the load is done again after each store, since the pointers might alias. The
//! conformance test basic vector_creation writes ~270 lines of
//! `result[k] = (char16)(src[0], vload2(0, src + 1), ...)` in one kernel: thousands of byte
//! loads of the same 16 addresses, which lavapipe's LLVM took 110-380 s to compile per kernel
//! (its coroutine frame building, with every load and its bounds check). In the module of a
//! launch that binds no memory twice (`core::kernel`; launches that do get
//! `aliased::declare_aliased`'s variant, made from the module without this pass), a buffer
//! that the module never writes (`NonWritable`, from `spirv::mark_read_only_buffers`, and no
//! writable or `Aliased` variable on its binding used in a function) holds the same values
//! for the whole launch. So within a block, a load through an access chain of such a buffer
//! with the same result type, base and index ids as an earlier one becomes an `OpCopyObject`
//! of that load's result. Volatile loads are left alone.

use super::spirv::instructions;
use std::collections::{HashMap, HashSet};

const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_VARIABLE: u32 = 59;
const OP_LOAD: u32 = 61;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_IN_BOUNDS_ACCESS_CHAIN: u32 = 66;
const OP_DECORATE: u32 = 71;
const OP_COPY_OBJECT: u32 = 83;
const OP_LABEL: u32 = 248;
const STORAGE_BUFFER: u32 = 12;
const DECORATION_ALIASED: u32 = 20;
const DECORATION_NON_WRITABLE: u32 = 24;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;
const MEMORY_VOLATILE: u32 = 1;

/// `spirv` with the repeated loads (see the module comment) made copies; unchanged where it
/// has none.
pub fn reuse(spirv: &[u32]) -> Vec<u32> {
    let read_only = read_only_buffers(spirv);
    if read_only.is_empty() {
        return spirv.to_vec();
    }
    // Access chain id → (base, indices), for chains on the read-only buffers.
    let mut chains: HashMap<u32, &[u32]> = HashMap::new();
    let mut first: HashMap<(u32, &[u32]), u32> = HashMap::new();
    let mut out = Vec::with_capacity(spirv.len());
    out.extend_from_slice(&spirv[..5.min(spirv.len())]);
    // Words the copies saved: the module is returned only if it was read to its end.
    let mut saved = 0;
    for (_, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        match op {
            OP_ACCESS_CHAIN | OP_IN_BOUNDS_ACCESS_CHAIN
                if inst.len() >= 4 && read_only.contains(&inst[3]) =>
            {
                chains.insert(inst[2], &inst[3..]);
            }
            OP_LABEL => first.clear(),
            OP_LOAD if inst.len() >= 4 => {
                let volatile = inst.get(4).is_some_and(|m| m & MEMORY_VOLATILE != 0);
                if let Some(&chain) = chains.get(&inst[3]).filter(|_| !volatile) {
                    let (ty, result) = (inst[1], inst[2]);
                    match first.get(&(ty, chain)) {
                        Some(&earlier) => {
                            out.extend([(4 << 16) | OP_COPY_OBJECT, ty, result, earlier]);
                            saved += inst.len() - 4;
                            continue;
                        }
                        None => _ = first.insert((ty, chain), result),
                    }
                }
            }
            _ => {}
        }
        out.extend_from_slice(inst);
    }
    match out.len() + saved == spirv.len() && out != spirv {
        true => out,
        false => spirv.to_vec(),
    }
}

/// The storage-buffer variables whose memory the module never writes: `NonWritable`, not
/// `Aliased`, and no other variable on their (set, binding) used in a function unless it is
/// `NonWritable` and not `Aliased` too.
fn read_only_buffers(spirv: &[u32]) -> HashSet<u32> {
    let mut buffers = vec![];
    let (mut non_writable, mut aliased) = (HashSet::new(), HashSet::new());
    let mut at: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut used = HashSet::new();
    let mut in_function = false;
    for (_, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        match op {
            OP_FUNCTION => in_function = true,
            OP_FUNCTION_END => in_function = false,
            _ if in_function => used.extend(inst[1..].iter().copied()),
            OP_VARIABLE if inst.get(3) == Some(&STORAGE_BUFFER) => buffers.push(inst[2]),
            OP_DECORATE if inst.len() >= 3 => {
                let (id, value) = (inst[1], inst.get(3).copied().unwrap_or(0));
                match inst[2] {
                    DECORATION_NON_WRITABLE => _ = non_writable.insert(id),
                    DECORATION_ALIASED => _ = aliased.insert(id),
                    DECORATION_DESCRIPTOR_SET => at.entry(id).or_default().0 = value,
                    DECORATION_BINDING => at.entry(id).or_default().1 = value,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let safe = |v: &u32| non_writable.contains(v) && !aliased.contains(v);
    let written: HashSet<(u32, u32)> = buffers
        .iter()
        .filter(|v| used.contains(v) && !safe(v))
        .filter_map(|v| at.get(v).copied())
        .collect();
    buffers
        .into_iter()
        .filter(|v| safe(v) && at.get(v).is_some_and(|b| !written.contains(b)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with two storage buffers (%10 at binding 0, NonWritable; %11 at binding 1) and
    /// one block that loads %10[0][%5] twice around a store to %11, then %10[0][%6].
    fn module(extra: &[u32]) -> Vec<u32> {
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        m.extend([(4 << 16) | OP_DECORATE, 10, DECORATION_DESCRIPTOR_SET, 0]);
        m.extend([(4 << 16) | OP_DECORATE, 10, DECORATION_BINDING, 0]);
        m.extend([(3 << 16) | OP_DECORATE, 10, DECORATION_NON_WRITABLE]);
        m.extend([(4 << 16) | OP_DECORATE, 11, DECORATION_DESCRIPTOR_SET, 0]);
        m.extend([(4 << 16) | OP_DECORATE, 11, DECORATION_BINDING, 1]);
        m.extend(extra);
        m.extend([(4 << 16) | OP_VARIABLE, 3, 10, STORAGE_BUFFER]);
        m.extend([(4 << 16) | OP_VARIABLE, 3, 11, STORAGE_BUFFER]);
        m.extend([(5 << 16) | OP_FUNCTION, 1, 20, 0, 2]);
        m.extend([(2 << 16) | OP_LABEL, 21]);
        m.extend([(6 << 16) | OP_ACCESS_CHAIN, 4, 30, 10, 7, 5]);
        m.extend([(5 << 16) | OP_LOAD, 8, 31, 30, 2]);
        m.extend([(6 << 16) | OP_ACCESS_CHAIN, 4, 32, 11, 7, 5]);
        m.extend([(3 << 16) | 62, 32, 31]);
        m.extend([(6 << 16) | OP_ACCESS_CHAIN, 4, 33, 10, 7, 5]);
        m.extend([(5 << 16) | OP_LOAD, 8, 34, 33, 2]);
        m.extend([(6 << 16) | OP_ACCESS_CHAIN, 4, 35, 10, 7, 6]);
        m.extend([(4 << 16) | OP_LOAD, 8, 36, 35]);
        m.extend([(1 << 16) | OP_FUNCTION_END]);
        m
    }

    #[test]
    fn a_repeated_load_of_a_read_only_buffer_is_a_copy() {
        let m = module(&[]);
        let out = reuse(&m);
        let copies: Vec<&[u32]> = instructions(&out)
            .map(|(_, i)| i)
            .filter(|i| i[0] & 0xffff == OP_COPY_OBJECT)
            .collect();
        assert_eq!(copies, [&[(4 << 16) | OP_COPY_OBJECT, 8, 34, 31][..]]);
        assert_eq!(out.len(), m.len() - 1);
        // A module that does not end where its last instruction does: left.
        let mut cut = m.clone();
        cut.push((9 << 16) | 1);
        assert_eq!(reuse(&cut), cut);
    }

    #[test]
    fn aliased_or_written_bindings_and_volatile_loads_are_left() {
        let aliased = [(3 << 16) | OP_DECORATE, 10, DECORATION_ALIASED];
        assert_eq!(reuse(&module(&aliased)), module(&aliased));
        // A writable variable on binding 0, used in the function.
        let mut m = module(&[
            (4 << 16) | OP_DECORATE,
            12,
            DECORATION_DESCRIPTOR_SET,
            0,
            (4 << 16) | OP_DECORATE,
            12,
            DECORATION_BINDING,
            0,
        ]);
        let f = instructions(&m)
            .find(|(_, i)| i[0] & 0xffff == OP_FUNCTION)
            .unwrap()
            .0;
        m.splice(f..f, [(4 << 16) | OP_VARIABLE, 3, 12, STORAGE_BUFFER]);
        let end = m.len() - 1;
        m.splice(end..end, [(6 << 16) | OP_ACCESS_CHAIN, 4, 40, 12, 7, 5]);
        assert_eq!(reuse(&m), m);
        // Volatile: memory operand 1.
        let mut v = module(&[]);
        let load = instructions(&v)
            .filter(|(_, i)| i[0] & 0xffff == OP_LOAD)
            .nth(1)
            .unwrap()
            .0;
        v[load + 4] = MEMORY_VOLATILE;
        assert_eq!(reuse(&v), v);
    }
}
