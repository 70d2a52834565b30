//! Capabilities clspv leaves out of its modules.
//!
//! clspv 0.0.1 compiles `atom_*` on `long`/`ulong` (cl_khr_int64_base_atomics) to 64-bit
//! `OpAtomic*` instructions but declares only `Int64`, not `Int64Atomics`, which SPIR-V requires
//! for them (Vulkan's validation: "64-bit atomics require the Int64Atomics capability").

use super::spirv::instructions;

const OP_CAPABILITY: u32 = 17;
const OP_TYPE_INT: u32 = 21;
/// OpAtomicLoad … OpAtomicXor (OpAtomicStore, 228, has no result type and is not counted).
const OP_ATOMICS: std::ops::RangeInclusive<u32> = 227..=242;
const CAPABILITY_INT64_ATOMICS: u32 = 12;

/// `spirv` with `OpCapability Int64Atomics` where an atomic instruction gives a 64-bit integer
/// and the module does not declare it (unchanged otherwise).
pub fn add_int64_atomics(spirv: &[u32]) -> Vec<u32> {
    let mut int64 = vec![];
    let mut declared = false;
    let mut needed = false;
    let mut first_capability = None;
    for (at, inst) in instructions(spirv) {
        match inst[0] & 0xffff {
            OP_CAPABILITY if inst.len() == 2 => {
                first_capability.get_or_insert(at);
                declared |= inst[1] == CAPABILITY_INT64_ATOMICS;
            }
            OP_TYPE_INT if inst.len() == 4 && inst[2] == 64 => int64.push(inst[1]),
            op if OP_ATOMICS.contains(&op) && inst.len() > 2 && op != 228 => {
                needed |= int64.contains(&inst[1]);
            }
            _ => {}
        }
    }
    match first_capability {
        Some(at) if needed && !declared => {
            let mut out = spirv[..at].to_vec();
            out.extend([(2 << 16) | OP_CAPABILITY, CAPABILITY_INT64_ATOMICS]);
            out.extend_from_slice(&spirv[at..]);
            out
        }
        _ => spirv.to_vec(),
    }
}
