//! `Coherent` storage buffers in modules that order memory between work-groups.
//!
//! clspv 0.0.1 writes GLSL450-memory-model modules and decorates no storage buffer of a
//! kernel with atomics `Coherent`. Under Vulkan's rules for such modules a device-scope
//! release or acquire (an atomic or a barrier) makes only `Coherent` memory available and
//! visible: the plain stores before a device-scope `atomic_store_explicit(..., release)`
//! need not reach a work-group on another compute unit (GLSL's `coherent`; NVIDIA's L1 is
//! not coherent between SMs). Where a module has an atomic or barrier of device (or wider)
//! scope with acquire or release semantics on UniformMemory, every storage buffer variable
//! is decorated `Coherent`, which Vulkan defines as available and visible at device scope on
//! each access. Modules without such an ordering (relaxed atomics, work-group barriers) are
//! left alone: `Coherent` costs their loads the cache. clspv compiles the OpenCL 1.x atomics
//! (`atomic_inc`, `atom_add`, ...: relaxed, as OpenCL 2.0 defines them) to AcquireRelease
//! read-modify-writes, so a read-modify-write with just AcquireRelease does not count: a
//! C11 `acq_rel` read-modify-write looks the same, and is made coherent only where the
//! module also has an ordered load, store or fence of device scope (a lock released by
//! `atomic_store_explicit` or `atomic_flag_clear_explicit` has one). (clspv itself decorated
//! `Coherent` a buffer written and read around `barrier(CLK_GLOBAL_MEM_FENCE)`.)

use std::collections::HashMap;

use super::spirv::instructions;

const OP_CONSTANT: u32 = 43;
const OP_VARIABLE: u32 = 59;
const OP_DECORATE: u32 = 71;
const OP_CONTROL_BARRIER: u32 = 224;
const OP_MEMORY_BARRIER: u32 = 225;
const OP_ATOMIC_LOAD: u32 = 227;
const OP_ATOMIC_STORE: u32 = 228;
/// OpAtomicLoad … OpAtomicXor.
const OP_ATOMICS: std::ops::RangeInclusive<u32> = 227..=242;
const OP_ATOMIC_FLAG_TEST_AND_SET: u32 = 318;
const OP_ATOMIC_FLAG_CLEAR: u32 = 319;
const STORAGE_CLASS_STORAGE_BUFFER: u32 = 12;
const DECORATION_COHERENT: u32 = 23;
/// Scopes CrossDevice, Device and QueueFamily.
const WIDE_SCOPES: [u32; 3] = [0, 1, 5];
/// Acquire, Release, AcquireRelease, SequentiallyConsistent.
const ORDERED: u32 = 0x2 | 0x4 | 0x8 | 0x10;
const ACQUIRE_RELEASE: u32 = 0x8;
const UNIFORM_MEMORY: u32 = 0x40;

/// The (scope, semantics) ids of a memory-ordering instruction, and whether it is a
/// read-modify-write; None for other instructions.
fn scope_and_semantics(inst: &[u32]) -> Option<(u32, u32, bool)> {
    let op = inst[0] & 0xffff;
    let rmw = OP_ATOMICS.contains(&op) && op != OP_ATOMIC_LOAD && op != OP_ATOMIC_STORE;
    let at = match op {
        OP_CONTROL_BARRIER => 2,
        OP_MEMORY_BARRIER => 1,
        OP_ATOMIC_STORE | OP_ATOMIC_FLAG_CLEAR => 2,
        OP_ATOMIC_FLAG_TEST_AND_SET => 4,
        op if OP_ATOMICS.contains(&op) => 4,
        _ => return None,
    };
    Some((*inst.get(at)?, *inst.get(at + 1)?, rmw))
}

/// `spirv` with its storage buffer variables `Coherent` where it orders memory at device
/// scope (unchanged otherwise, and where a scope or semantics is not a constant).
pub fn decorate(spirv: &[u32]) -> Vec<u32> {
    let mut constants = HashMap::new();
    let mut buffers = vec![];
    let mut coherent = vec![];
    let mut first_decoration = None;
    let mut ordered = false;
    for (at, inst) in instructions(spirv) {
        match inst[0] & 0xffff {
            OP_CONSTANT if inst.len() == 4 => {
                constants.insert(inst[2], inst[3]);
            }
            OP_VARIABLE if inst.get(3) == Some(&STORAGE_CLASS_STORAGE_BUFFER) => {
                buffers.push(inst[2])
            }
            OP_DECORATE if inst.len() >= 3 => {
                first_decoration.get_or_insert(at);
                if inst[2] == DECORATION_COHERENT {
                    coherent.push(inst[1]);
                }
            }
            _ => {}
        }
        if let Some((scope, semantics, rmw)) = scope_and_semantics(inst) {
            match (constants.get(&scope), constants.get(&semantics)) {
                (Some(s), Some(m)) => {
                    let order = m & ORDERED;
                    // clspv gives the OpenCL 1.x atomics (relaxed in OpenCL 2.0's terms)
                    // AcquireRelease: read-modify-writes with just that do not count.
                    let legacy = rmw && order == ACQUIRE_RELEASE;
                    ordered |=
                        WIDE_SCOPES.contains(s) && order != 0 && !legacy && m & UNIFORM_MEMORY != 0
                }
                // Not a constant (a specialisation constant, say): assume the worst.
                _ => ordered = true,
            }
        }
    }
    buffers.retain(|b| !coherent.contains(b));
    let Some(at) = first_decoration.filter(|_| ordered && !buffers.is_empty()) else {
        return spirv.to_vec();
    };
    let mut out = spirv[..at].to_vec();
    for b in buffers {
        out.extend([(3 << 16) | OP_DECORATE, b, DECORATION_COHERENT]);
    }
    out.extend_from_slice(&spirv[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module's words: header, then instructions (opcode, operands).
    fn module(insts: &[&[u32]]) -> Vec<u32> {
        let mut m = vec![0x0723_0203, 0x0001_0300, 0, 100, 0];
        for i in insts {
            m.push(((i.len() as u32) << 16) | i[0]);
            m.extend_from_slice(&i[1..]);
        }
        m
    }

    fn coherent_targets(spirv: &[u32]) -> Vec<u32> {
        instructions(spirv)
            .filter(|(_, i)| i[0] & 0xffff == OP_DECORATE && i.get(2) == Some(&DECORATION_COHERENT))
            .map(|(_, i)| i[1])
            .collect()
    }

    /// %10 a storage buffer, %11 a workgroup variable; constants %1 = 1 (Device),
    /// %2 = 2 (Workgroup), %3 = 0x44 (Release|UniformMemory), %4 = 0x40 (UniformMemory),
    /// %8 = 0x48 (AcquireRelease|UniformMemory).
    fn with(body: &[u32]) -> Vec<u32> {
        module(&[
            &[OP_DECORATE, 10, 33, 0],
            &[OP_CONSTANT, 5, 1, 1],
            &[OP_CONSTANT, 5, 2, 2],
            &[OP_CONSTANT, 5, 3, 0x44],
            &[OP_CONSTANT, 5, 4, 0x40],
            &[OP_CONSTANT, 5, 8, 0x48],
            &[OP_VARIABLE, 6, 10, STORAGE_CLASS_STORAGE_BUFFER],
            &[OP_VARIABLE, 7, 11, 4],
            body,
        ])
    }

    #[test]
    fn device_release_makes_buffers_coherent() {
        let m = with(&[OP_ATOMIC_STORE, 20, 1, 3, 9]);
        assert_eq!(coherent_targets(&decorate(&m)), vec![10]);
        let m = with(&[OP_MEMORY_BARRIER, 1, 3]);
        assert_eq!(coherent_targets(&decorate(&m)), vec![10]);
    }

    #[test]
    fn relaxed_or_work_group_orderings_leave_the_module_alone() {
        for body in [
            &[OP_ATOMIC_STORE, 20, 1, 4, 9][..],
            // atomic_inc: OpAtomicIIncrement Device AcquireRelease|UniformMemory.
            &[232, 5, 21, 20, 1, 8],
            &[OP_ATOMIC_STORE, 20, 2, 3, 9],
            &[OP_CONTROL_BARRIER, 2, 2, 3],
        ] {
            let m = with(body);
            assert_eq!(decorate(&m), m);
        }
    }
}
