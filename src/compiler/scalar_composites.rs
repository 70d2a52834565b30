//! Composite instructions clspv writes on scalars, made copies (a SPIR-V pass).
//!
//! clspv 0.0.1 lowers a load of words that spans a `double` (pyopencl's GPU scan reads a packed
//! `struct { double value; int dummy; }` in `__local` memory as ints through
//! `(__local int *)&ldata[i][j].value`) by rebuilding the double's bits through a one-element
//! vector, which it writes as a scalar: `%c = OpCompositeConstruct %ulong %x` then
//! `%e = OpCompositeExtract %ulong %c 0`. spirv-val rejects both ("Expected Result Type to be a
//! composite type"), NVIDIA's driver crashed on them and Vulkan's validation layer reports them
//! (tests/word_views.rs). A one-element vector is its element, so each becomes
//! `OpCopyObject`: a construct of a scalar type from one value of it, and an extract (or an
//! insert) at index 0 from a value that one of these gave. Nothing else is touched.

use super::spirv::instructions;

const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_COMPOSITE_CONSTRUCT: u32 = 80;
const OP_COMPOSITE_EXTRACT: u32 = 81;
const OP_COMPOSITE_INSERT: u32 = 82;
const OP_COPY_OBJECT: u32 = 83;

/// `spirv` with those instructions made copies; `None` when there is none.
pub fn repair(spirv: &[u32]) -> Option<Vec<u32>> {
    let mut scalar_types = vec![];
    // Results of the copies made here: values of a scalar type that clspv treats as composites.
    let mut scalars = vec![];
    let mut out = spirv.get(..5)?.to_vec();
    let mut changed = false;
    for (_, inst) in instructions(spirv) {
        let copy =
            |ty: u32, result: u32, value: u32| vec![(4 << 16) | OP_COPY_OBJECT, ty, result, value];
        let replaced = match (inst[0] & 0xffff, inst) {
            (OP_TYPE_BOOL | OP_TYPE_INT | OP_TYPE_FLOAT, [_, id, ..]) => {
                scalar_types.push(*id);
                None
            }
            (OP_COMPOSITE_CONSTRUCT, &[_, ty, result, value]) if scalar_types.contains(&ty) => {
                Some((result, copy(ty, result, value)))
            }
            (OP_COMPOSITE_EXTRACT, &[_, ty, result, composite, 0])
                if scalars.contains(&composite) =>
            {
                Some((result, copy(ty, result, composite)))
            }
            (OP_COMPOSITE_INSERT, &[_, ty, result, object, composite, 0])
                if scalars.contains(&composite) =>
            {
                Some((result, copy(ty, result, object)))
            }
            _ => None,
        };
        match replaced {
            Some((result, copy)) => {
                scalars.push(result);
                out.extend(copy);
                changed = true;
            }
            None => out.extend_from_slice(inst),
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(body: &[&[u32]]) -> Vec<u32> {
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        for inst in body {
            m.push(((inst.len() as u32) << 16) | inst[0]);
            m.extend_from_slice(&inst[1..]);
        }
        m
    }

    #[test]
    fn scalar_composites_become_copies() {
        let int64 = [OP_TYPE_INT, 1, 64, 0];
        let vec2 = [23, 2, 1, 2]; // OpTypeVector %2 = 2 x %1
        let spirv = module(&[
            &int64,
            &vec2,
            &[OP_COMPOSITE_CONSTRUCT, 1, 10, 9],
            &[OP_COMPOSITE_EXTRACT, 1, 11, 10, 0],
            &[OP_COMPOSITE_CONSTRUCT, 2, 12, 9, 9],
            &[OP_COMPOSITE_EXTRACT, 1, 13, 12, 0],
        ]);
        let want = module(&[
            &int64,
            &vec2,
            &[OP_COPY_OBJECT, 1, 10, 9],
            &[OP_COPY_OBJECT, 1, 11, 10],
            &[OP_COMPOSITE_CONSTRUCT, 2, 12, 9, 9],
            &[OP_COMPOSITE_EXTRACT, 1, 13, 12, 0],
        ]);
        assert_eq!(repair(&spirv), Some(want));
        assert_eq!(repair(&module(&[&int64, &vec2])), None);
    }
}
