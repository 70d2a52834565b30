//! Kernels made ready before their first launch (issue 21): when a program is built, a
//! background thread creates each kernel's Vulkan objects (`KernelDevice`: its module, layout
//! and buffers) and the pipelines of the specialisations its launches will most likely use, so
//! that clCreateKernel and the first clEnqueueNDRangeKernel find them made. A launch that needs
//! a pipeline the thread is still creating waits for it instead of creating it again; one the
//! thread has not started is created by the launch, as before.
//!
//! Which specialisations (a pipeline is specialised on the work-group size and the `__local`
//! argument sizes, `KernelDevice::spec`): those that launches of the same SPIR-V created
//! before, in this process or, through the disk cache, in earlier ones (`History`); for a
//! kernel without such a record and without `__local` arguments, the work-group size it
//! declares (`reqd_work_group_size`, else `work_group_size_hint`) or else the one vkcl picks for
//! a NULL local size over a large 1-D range. A kernel with `__local` arguments and no record is
//! left to its first launch: their sizes cannot be guessed.

use super::device::Device;
use super::error::CLResult;
use super::fxhash::FxHashMap;
use super::kernel::KernelDevice;
use super::program::{Executable, Program};
use crate::compiler::reflection::{ArgKind, KernelReflection};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// Specialisation constants of a pipeline: (id, value).
pub type Spec = Vec<(u32, u32)>;

/// Programs with more kernels than this are not prebuilt (conformance-style programs of
/// hundreds of kernels, of which a launch uses one).
const MAX_KERNELS: usize = 64;
/// Specialisations remembered (and prebuilt) per kernel, the most recent first.
const MAX_SPECS: usize = 4;

/// A kernel's objects on one device, made once whichever of the prebuild thread and
/// clCreateKernel gets there first (the other waits on the slot's lock).
type Slot = Arc<Mutex<Option<Arc<KernelDevice>>>>;

/// The `KernelDevice`s of a program, by (device index, executable, kernel name): shared by
/// every kernel object of that name, so that a second clCreateKernel finds the pipelines of the
/// first.
#[derive(Default)]
pub struct Table {
    slots: Mutex<FxHashMap<(usize, usize, String), Slot>>,
}

impl Table {
    /// The objects of kernel `refl` of `exe` (device `index` of the program, `device`), made
    /// now unless made already. A failure is not kept: the next call tries again.
    pub fn kernel_device(
        &self,
        index: usize,
        device: &Arc<Device>,
        exe: &Arc<Executable>,
        refl: &KernelReflection,
    ) -> CLResult<Arc<KernelDevice>> {
        let key = (index, Arc::as_ptr(exe) as usize, refl.name.clone());
        let slot = self.slots.lock().entry(key).or_default().clone();
        let mut slot = slot.lock();
        if let Some(kd) = &*slot {
            return Ok(kd.clone());
        }
        let kd = Arc::new(KernelDevice::new(device, exe, refl)?);
        *slot = Some(kd.clone());
        Ok(kd)
    }

    /// Forgets the objects of device `index` (its program is being built again).
    pub fn clear(&self, index: usize) {
        self.slots.lock().retain(|k, _| k.0 != index);
    }
}

/// The specialisations launches created pipelines for, by the key of their executable's
/// SPIR-V (`Executable::launch_key`), then by kernel name: in memory for this process, and in
/// the disk cache (kind "launches") for the next.
struct History {
    entries: Mutex<FxHashMap<String, Arc<Mutex<Record>>>>,
}

/// By kernel name, the most recent specialisation first.
type Record = FxHashMap<String, Vec<Spec>>;

const KIND: &str = "launches";

fn history() -> &'static History {
    static HISTORY: OnceLock<History> = OnceLock::new();
    HISTORY.get_or_init(|| History {
        entries: Mutex::new(FxHashMap::default()),
    })
}

impl History {
    fn record_of(&self, key: &str) -> Arc<Mutex<Record>> {
        let mut entries = self.entries.lock();
        if let Some(r) = entries.get(key) {
            return r.clone();
        }
        let loaded = crate::cache::get()
            .and_then(|c| c.load(KIND, key))
            .map(|bytes| decode(&bytes))
            .unwrap_or_default();
        let r = Arc::new(Mutex::new(loaded));
        entries.insert(key.to_string(), r.clone());
        r
    }
}

/// Records that a launch of kernel `name` of the executable with `key` made a pipeline of
/// `spec` (kept in memory, and on disk when the cache is on).
pub fn record(key: &str, name: &str, spec: &[(u32, u32)]) {
    let r = history().record_of(key);
    let mut r = r.lock();
    let specs = r.entry(name.to_string()).or_default();
    if specs.first().is_some_and(|s| s == spec) {
        return;
    }
    specs.retain(|s| s != spec);
    specs.insert(0, spec.to_vec());
    specs.truncate(MAX_SPECS);
    if let Some(cache) = crate::cache::get() {
        cache.store(KIND, key, &encode(&r));
    }
}

/// One line per (kernel, specialisation): `name<TAB>id=value,id=value`.
fn encode(r: &Record) -> Vec<u8> {
    let mut out = String::new();
    let mut names: Vec<&String> = r.keys().collect();
    names.sort();
    for name in names {
        for spec in &r[name] {
            let pairs: Vec<String> = spec.iter().map(|(i, v)| format!("{i}={v}")).collect();
            out.push_str(&format!("{name}\t{}\n", pairs.join(",")));
        }
    }
    out.into_bytes()
}

/// The inverse of `encode`; lines that do not parse are skipped.
fn decode(bytes: &[u8]) -> Record {
    let mut r = Record::default();
    for line in String::from_utf8_lossy(bytes).lines() {
        let Some((name, pairs)) = line.split_once('\t') else {
            continue;
        };
        let spec: Option<Spec> = (pairs.split(',').filter(|p| !p.is_empty()))
            .map(|p| {
                let (i, v) = p.split_once('=')?;
                Some((i.parse().ok()?, v.parse().ok()?))
            })
            .collect();
        if let Some(spec) = spec {
            let specs = r.entry(name.to_string()).or_default();
            if specs.len() < MAX_SPECS && !specs.contains(&spec) {
                specs.push(spec);
            }
        }
    }
    r
}

/// How sure a prebuild is to be used: launches of this code used it, the kernel declares its
/// work-group size, or it is vkcl's choice for a NULL local size.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Evidence {
    Recorded,
    Declared,
    Guessed,
}

/// What to prebuild for `exe` on `device`, in order: every kernel's recorded specialisations
/// first (those of the latest launches first), then declared sizes, then guesses.
fn plan(exe: &Executable, device: &Device) -> Vec<(usize, Spec)> {
    let recorded = history().record_of(exe.launch_key());
    let recorded = recorded.lock();
    let mut plan: Vec<(Evidence, usize, usize, Spec)> = vec![];
    for (k, refl) in exe.reflection.kernels.iter().enumerate() {
        if let Some(specs) = recorded.get(&refl.name) {
            let specs = specs.iter().enumerate();
            plan.extend(specs.map(|(age, s)| (Evidence::Recorded, age, k, s.clone())));
            continue;
        }
        if refl
            .args
            .iter()
            .any(|a| matches!(a.kind, ArgKind::Local { .. }))
        {
            continue;
        }
        let declared = refl
            .reqd_work_group_size
            .or_else(|| size_hint(&refl.attributes));
        let (evidence, size, dims) = match declared {
            Some(s) => {
                let size = s.map(|x| x.max(1) as usize);
                let dims = if size[2] > 1 {
                    3
                } else if size[1] > 1 {
                    2
                } else {
                    1
                };
                (Evidence::Declared, size, dims)
            }
            None if cores() < GUESS_CORES => continue,
            None => {
                let size = super::kernel::choose_local(&[1 << 20, 1, 1], 1, device);
                (Evidence::Guessed, size, 1)
            }
        };
        let mut spec = super::kernel::SpecBuf::new();
        let ids = &exe.reflection.spec_constants;
        super::kernel::spec_into(&mut spec, ids, &[], size, dims, [0; 3]);
        plan.push((evidence, 0, k, spec.to_vec()));
    }
    plan.sort_by_key(|p| (p.0, p.1));
    plan.into_iter().map(|(_, _, k, s)| (k, s)).collect()
}

/// The `work_group_size_hint(x,y,z)` of a kernel's CL_KERNEL_ATTRIBUTES, if any.
fn size_hint(attributes: &str) -> Option<[u32; 3]> {
    let rest = attributes.split("work_group_size_hint(").nth(1)?;
    let inside = rest.split(')').next()?;
    let v: Vec<u32> = inside
        .split(',')
        .map(|s| s.trim().parse().ok())
        .collect::<Option<_>>()?;
    (v.len() == 3).then(|| [v[0], v[1], v[2]])
}

/// The host's cores (read once: `available_parallelism` reads cgroup files).
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Background threads for a prebuild of `items` pipelines: one on machines with few cores
/// (lavapipe's threads need them), up to 4 elsewhere.
fn threads(items: usize) -> usize {
    (cores() / 4).clamp(1, 4).min(items)
}

/// Guesses are prebuilt only with cores to spare: on 2 cores, four guessed pipelines made
/// while the application's first launch ran on lavapipe made that launch 2 ms slower
/// (docs/BENCHMARKS.md).
const GUESS_CORES: usize = 4;

/// Starts making the kernels of `exe`, just built for device `index` of `program`, ready.
pub fn start(program: &Arc<Program>, index: usize, exe: &Arc<Executable>) {
    let count = exe.reflection.kernels.len();
    if !crate::config::get().prebuild || count == 0 || count > MAX_KERNELS {
        return;
    }
    let plan = Arc::new(plan(exe, &program.devices[index]));
    let next = Arc::new(AtomicUsize::new(0));
    for _ in 0..threads(plan.len()) {
        let program = Arc::downgrade(program);
        let (exe, plan, next) = (exe.clone(), plan.clone(), next.clone());
        let spawned = std::thread::Builder::new()
            .name("vkcl-prebuild".into())
            .spawn(move || prebuild(program, index, exe, &plan, &next));
        if spawned.is_err() {
            return;
        }
    }
}

/// One prebuild thread: takes the next pipeline of the plan until none is left, the program is
/// gone or built again, or the process exits.
fn prebuild(
    program: Weak<Program>,
    index: usize,
    exe: Arc<Executable>,
    plan: &[(usize, Spec)],
    next: &AtomicUsize,
) {
    while let Some((k, spec)) = plan.get(next.fetch_add(1, Ordering::Relaxed)) {
        let refl = &exe.reflection.kernels[*k];
        let Some(_active) = crate::shutdown::enter() else {
            return;
        };
        let Some(program) = program.upgrade() else {
            return;
        };
        let current = program.executables().get(index).cloned().flatten();
        if !current.is_some_and(|e| Arc::ptr_eq(&e, &exe)) {
            return;
        }
        let device = program.devices[index].clone();
        let table = &program.kernel_devices;
        let Ok(kd) = table.kernel_device(index, &device, &exe, refl) else {
            continue;
        };
        // Not held while the pipeline is made: a program released meanwhile goes at once.
        drop(program);
        if let Err(e) = kd.prebuild(spec) {
            log::info!(target: "launch", "{}: prebuilding {spec:?} failed ({e})", refl.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_their_encoding() {
        let mut r = Record::default();
        r.insert("a".into(), vec![vec![(0, 64), (1, 1), (2, 1)], vec![]]);
        r.insert("b".into(), vec![vec![(3, 16)]]);
        assert_eq!(decode(&encode(&r)), r);
        assert_eq!(decode(b"garbage\nc\tx=1\nd\t1=2\n").len(), 1);
    }

    #[test]
    fn size_hints_parse() {
        assert_eq!(
            size_hint("work_group_size_hint(64,2,1) vec_type_hint(float4)"),
            Some([64, 2, 1])
        );
        assert_eq!(size_hint("reqd_work_group_size(8,8,1)"), None);
    }
}
