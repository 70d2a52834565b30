//! `Aliased` on the storage buffers that one launch binds to the same memory.
//!
//! OpenCL C pointers without `restrict` may point into the same buffer (pyopencl's scans pass
//! one array as input and output; sub-buffers of one parent may overlap). clspv gives every
//! buffer argument a storage-buffer variable of its own and decorates none `Aliased`, and in
//! SPIR-V variables without `Aliased` do not alias: a driver may keep a value loaded through
//! one across a store through the other, and `NonWritable` (`spirv::mark_read_only_buffers`)
//! lets it read through a cache that does not see the other's stores. A launch that binds the
//! same memory twice gets a variant of its kernel's module made here (`core::kernel` chooses
//! it), and other launches keep the module as it was compiled.

use super::spirv::instructions;
use std::collections::{HashMap, HashSet};

const OP_VARIABLE: u32 = 59;
const OP_DECORATE: u32 = 71;
const STORAGE_BUFFER: u32 = 12;
const DECORATION_ALIASED: u32 = 20;
const DECORATION_NON_WRITABLE: u32 = 24;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;

/// `spirv` with every storage-buffer variable at one of `bindings` (set, binding) decorated
/// `Aliased` and without `NonWritable`; unchanged where it holds none or is malformed.
pub fn declare_aliased(spirv: &[u32], bindings: &[(u32, u32)]) -> Vec<u32> {
    let (mut sets, mut numbers) = (HashMap::new(), HashMap::new());
    let (mut buffers, mut aliased) = (HashSet::new(), HashSet::new());
    let (mut last_decoration, mut end) = (None, 5);
    for (at, inst) in instructions(spirv) {
        end = at + inst.len();
        match (inst[0] & 0xffff, inst.get(2), inst.get(3)) {
            (OP_DECORATE, Some(&d), value) => {
                last_decoration = Some(at);
                match (d, value) {
                    (DECORATION_DESCRIPTOR_SET, Some(&s)) => _ = sets.insert(inst[1], s),
                    (DECORATION_BINDING, Some(&b)) => _ = numbers.insert(inst[1], b),
                    (DECORATION_ALIASED, _) => _ = aliased.insert(inst[1]),
                    _ => {}
                }
            }
            (OP_VARIABLE, Some(&id), Some(&STORAGE_BUFFER)) => _ = buffers.insert(id),
            _ => {}
        }
    }
    let targets: HashSet<u32> = buffers
        .into_iter()
        .filter(|v| {
            let at = sets.get(v).zip(numbers.get(v));
            at.is_some_and(|(&s, &b)| bindings.contains(&(s, b)))
        })
        .collect();
    let whole = end == spirv.len();
    let Some(last_decoration) = last_decoration.filter(|_| whole && !targets.is_empty()) else {
        return spirv.to_vec();
    };
    let mut added: Vec<u32> = targets.difference(&aliased).copied().collect();
    added.sort_unstable();
    let mut out = spirv[..5].to_vec();
    for (at, inst) in instructions(spirv) {
        let op = inst[0] & 0xffff;
        let non_writable = op == OP_DECORATE && inst.get(2) == Some(&DECORATION_NON_WRITABLE);
        if !(non_writable && targets.contains(&inst[1])) {
            out.extend(inst);
        }
        if at == last_decoration {
            for &v in &added {
                out.extend([(3 << 16) | OP_DECORATE, v, DECORATION_ALIASED]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::options::clspv_args;
    use super::super::tests::{spirv_val, target};
    use super::super::{compile, spirv};
    use super::*;

    /// Per storage-buffer variable the kernel names: (binding, Aliased, NonWritable).
    fn buffers(spirv: &[u32]) -> Vec<(u32, bool, bool)> {
        let (mut vars, mut binding, mut decorations) = (vec![], HashMap::new(), vec![]);
        for (_, inst) in instructions(spirv) {
            match (inst[0] & 0xffff, inst.get(2), inst.get(3)) {
                (OP_VARIABLE, Some(&id), Some(&STORAGE_BUFFER)) => vars.push(id),
                (OP_DECORATE, Some(&DECORATION_BINDING), Some(&b)) => {
                    _ = binding.insert(inst[1], b)
                }
                (OP_DECORATE, Some(&d), _) => decorations.push((inst[1], d)),
                _ => {}
            }
        }
        let has = |v: u32, d: u32| decorations.contains(&(v, d));
        let mut out: Vec<_> = vars
            .iter()
            .map(|&v| {
                (
                    binding[&v],
                    has(v, DECORATION_ALIASED),
                    has(v, DECORATION_NON_WRITABLE),
                )
            })
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn the_bindings_named_are_aliased_and_writable() {
        // scale writes binding 0, which add only reads: add reads it through a NonWritable
        // copy of the variable (spirv::mark_read_only_buffers), which must lose it too.
        let src = b"kernel void add(global const float *a, global const float *b,\n\
            global float *c) { size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n\
            kernel void scale(global float *x) { x[get_global_id(0)] *= 2.0f; }\n";
        let args = clspv_args("", &target()).unwrap();
        let compiled = compile(&[src], &args).unwrap().spirv;
        let own = spirv::entry_point_only(&compiled, "add").unwrap();
        assert_eq!(
            buffers(&own),
            [
                (0, false, false),
                (0, false, true),
                (1, false, true),
                (2, false, false)
            ]
        );
        // a and c bound to the same memory; b elsewhere.
        let out = declare_aliased(&own, &[(0, 0), (0, 2)]);
        spirv_val(&out);
        assert_eq!(
            buffers(&out),
            [
                (0, true, false),
                (0, true, false),
                (1, false, true),
                (2, true, false)
            ]
        );
        assert_eq!(declare_aliased(&out, &[(0, 0), (0, 2)]), out, "idempotent");
        assert_eq!(declare_aliased(&own, &[(1, 0)]), own, "no such binding");
        let cut = &own[..own.len() - 3];
        assert_eq!(declare_aliased(cut, &[(0, 0), (0, 2)]), cut, "malformed");
    }
}
