//! The Vulkan objects of a kernel that depend only on its SPIR-V (the shader module, the
//! descriptor-set and pipeline layouts, the pipelines by specialisation), shared by every
//! kernel of identical SPIR-V on a device, across programs (issue 16).
//!
//! Conformance-style tests build hundreds of programs whose sources differ in ways clspv
//! erases (c11_atomics' fetch tests: 120 programs per type, 36 distinct modules, because the
//! memory orders all become the same SPIR-V), each built, launched and released before the
//! next. A pipeline is a pure function of (module, entry point, specialisation, layout), and a
//! driver like lavapipe compiles it at its first dispatch (35-75 ms each there): sharing it
//! lets the second program of the same SPIR-V find that compile done. The last `KEEP` sets of
//! objects stay alive after their programs go, since the next identical program is usually
//! created after the previous one is released.

use super::fxhash::{FxHashMap, FxHasher};
use super::prebuild::Spec;
use crate::vk::device::Device as VkDevice;
use crate::vk::pipeline::{KernelLayout, Pipeline, SetBindings, ShaderModule};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::hash::Hasher;
use std::sync::Arc;

/// A pipeline being made or made: locked while it is made (by a launch, or ahead of launches
/// by `prebuild`), None if that failed.
pub type PipelineSlot = Arc<Mutex<Option<Arc<Pipeline>>>>;

/// What makes two kernels' objects interchangeable: the module's words, the entry point and
/// the layout's definition (sets of bindings, push-constant size).
#[derive(PartialEq, Eq)]
struct Key {
    hash: u64,
    spirv: Vec<u32>,
    entry: String,
    sets: Vec<SetBindings>,
    push_size: u32,
}

/// The shared objects of one kernel.
pub struct KernelObjects {
    pub module: ShaderModule,
    pub layout: Arc<KernelLayout>,
    pub pipelines: Mutex<FxHashMap<Spec, PipelineSlot>>,
}

/// Objects kept after their kernels are gone, the most recently used first.
const KEEP: usize = 32;

/// A device's shared kernel objects.
#[derive(Default)]
pub struct Cache {
    recent: Mutex<VecDeque<(Key, Arc<KernelObjects>)>>,
}

impl Cache {
    /// The objects of a kernel `entry` of module `spirv` with this layout: those of an earlier
    /// kernel with the same, else new ones.
    pub fn get(
        &self,
        vk: &Arc<VkDevice>,
        spirv: &[u32],
        entry: &str,
        sets: Vec<SetBindings>,
        push_size: u32,
    ) -> crate::vk::Result<Arc<KernelObjects>> {
        let mut h = FxHasher::default();
        for &w in spirv {
            h.write_u32(w);
        }
        h.write(entry.as_bytes());
        let hash = h.finish();
        let found = |k: &Key| {
            k.hash == hash
                && k.push_size == push_size
                && k.entry == entry
                && k.sets == sets
                && k.spirv == spirv
        };
        let mut recent = self.recent.lock();
        if let Some(i) = recent.iter().position(|(k, _)| found(k)) {
            let e = recent.remove(i).expect("found above");
            let objects = e.1.clone();
            recent.push_front(e);
            log::debug!(target: "launch", "{entry}: module and pipelines shared with an earlier kernel of the same SPIR-V");
            return Ok(objects);
        }
        // Made under the lock: a module and two layouts, no pipeline (cheap), and a second
        // thread asking for the same must find these.
        let objects = Arc::new(KernelObjects {
            module: ShaderModule::new(vk, spirv)?,
            layout: Arc::new(KernelLayout::new(vk, sets.clone(), push_size)?),
            pipelines: Mutex::new(FxHashMap::default()),
        });
        let key = Key {
            hash,
            spirv: spirv.to_vec(),
            entry: entry.to_string(),
            sets,
            push_size,
        };
        recent.push_front((key, objects.clone()));
        let keep = recent.len().min(KEEP);
        let evicted = recent.split_off(keep);
        drop(recent);
        drop(evicted);
        Ok(objects)
    }
}
