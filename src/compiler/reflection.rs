//! clspv's `NonSemantic.ClspvReflection.*` instructions → the interface of each kernel.
//!
//! clspv describes descriptor bindings, push constants, spec constants and module data with
//! non-semantic extended instructions whose operands are ids of `OpConstant`s and `OpString`s.
//! They sit at module scope, which rspirv's structured loader refuses, so this walks the
//! instruction stream with rspirv's binary parser instead.
//!
//! Unknown instruction numbers are skipped (newer clspv revisions add some); a known one with
//! too few or wrongly typed operands makes the module malformed. Of the instructions only
//! emitted with `-physical-storage-buffers` (SVM builds, `Program::physical`), the constant
//! data (36) and printf buffer (40) addresses are read; program-scope variables (28, 29, 37)
//! are skipped: clspv does not emit them.

use rspirv::binary::{parse_words, Consumer, ParseAction};
use rspirv::dr::{Instruction, ModuleHeader, Operand};
use rspirv::spirv::Op;
use std::collections::{HashMap, HashSet};

/// A byte range in the push-constant block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PushRange {
    pub offset: u32,
    pub size: u32,
}

/// Everything the runtime needs to know about a module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reflection {
    /// The revision N of `NonSemantic.ClspvReflection.N` (0 when the module has none).
    pub version: u32,
    pub kernels: Vec<KernelReflection>,
    pub push_constants: ModulePushConstants,
    pub spec_constants: ModuleSpecConstants,
    /// Module-scope `__constant` data the runtime must upload and bind.
    pub constant_data: Option<ConstantData>,
    /// Physical mode: module-scope `__constant` data whose address the runtime pushes.
    pub constant_data_pointer: Option<(PushRange, Vec<u8>)>,
    /// Program-scope global variables (`compiler::globals`): one buffer per program and
    /// device with this initial data, bound in every launch.
    pub globals: Option<ConstantData>,
    /// Samplers declared in the source; the runtime creates and binds them.
    pub literal_samplers: Vec<LiteralSampler>,
    pub printf: Option<PrintfReflection>,
    /// Bytes of push constants any kernel uses: the largest end of every push-constant range,
    /// module-wide and per kernel (POD arguments, image metadata).
    pub push_constant_size: u32,
}

impl Reflection {
    /// The kernels the application sees: not the block kernels of device-side enqueue
    /// (`compiler::device_enqueue::CHILD`), which only the runtime launches.
    pub fn user_kernels(&self) -> impl Iterator<Item = &KernelReflection> {
        let hidden = super::device_enqueue::CHILD;
        self.kernels
            .iter()
            .filter(move |k| !k.name.starts_with(hidden))
    }
}

/// Module-wide values the runtime pushes (each `None` when no kernel reads it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModulePushConstants {
    pub global_offset: Option<PushRange>,
    pub enqueued_local_size: Option<PushRange>,
    pub global_size: Option<PushRange>,
    pub region_offset: Option<PushRange>,
    pub num_workgroups: Option<PushRange>,
    pub region_group_offset: Option<PushRange>,
}

/// Spec-constant ids the runtime sets at pipeline creation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleSpecConstants {
    pub workgroup_size: Option<[u32; 3]>,
    pub global_offset: Option<[u32; 3]>,
    pub work_dim: Option<u32>,
    pub subgroup_max_size: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstantData {
    pub set: u32,
    pub binding: u32,
    pub data: Vec<u8>,
    /// Bound as a uniform buffer (`ConstantDataUniform`) rather than a storage buffer.
    pub is_uniform: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiteralSampler {
    pub set: u32,
    pub binding: u32,
    /// The OpenCL sampler bit mask (`CLK_NORMALIZED_COORDS_* | CLK_ADDRESS_* | CLK_FILTER_*`).
    pub mask: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrintfReflection {
    /// The printf buffer: (set, binding, size in bytes); `None` if no kernel prints.
    pub buffer: Option<(u32, u32, u32)>,
    /// Physical mode: where the printf buffer's address is pushed, and its size in bytes.
    pub pointer: Option<(PushRange, u32)>,
    pub formats: Vec<PrintfFormat>,
}

/// One printf call site or string argument, by the id the kernel writes into the buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintfFormat {
    pub id: u32,
    pub format: String,
    pub arg_sizes: Vec<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelReflection {
    pub name: String,
    pub num_args: u32,
    /// `CL_KERNEL_ATTRIBUTES`.
    pub attributes: String,
    /// Indexed by ordinal; arguments clspv removed as unused are `ArgKind::Unused`.
    pub args: Vec<ArgReflection>,
    pub reqd_work_group_size: Option<[u32; 3]>,
    /// Bytes of `__local` variables declared in the kernel (and functions it calls).
    pub static_local_mem: u64,
    pub may_use_printf: bool,
    /// Image properties the runtime must supply for `get_image_channel_*` and samplers.
    pub image_metadata: Vec<ImageMetadata>,
    /// A flat kernel's scratch buffer (`compiler::generic_flat`): its address is the argument
    /// after the `num_args` the application sets, at each launch.
    pub scratch: Option<Scratch>,
    /// The kernel's last parameter is the address of its launch's device queue state
    /// (`compiler::device_enqueue`), set at each launch; not counted in `num_args`.
    pub device_queue: bool,
}

impl KernelReflection {
    /// The sub-group size `__attribute__((intel_reqd_sub_group_size(N)))` requires
    /// (cl_intel_required_subgroup_size): clspv keeps the attribute only in the attributes
    /// string.
    pub fn reqd_sub_group_size(&self) -> Option<u32> {
        let rest = self.attributes.split("intel_reqd_sub_group_size(").nth(1)?;
        rest.split(')').next()?.trim().parse().ok()
    }
}

/// Bytes a flat kernel's scratch buffer holds per work-group (`__local` variables) and per
/// work-item (private variables a generic pointer may hold), in that order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scratch {
    pub local: u64,
    pub private: u64,
    /// The ordinals of the `__local` pointer arguments, laid out after each work-group's
    /// variables at each launch: their offsets (after the work-group's bytes) are the hidden
    /// arguments after the scratch address.
    pub local_args: Vec<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArgReflection {
    pub kind: ArgKind,
    pub info: Option<ArgInfo>,
}

/// `clGetKernelArgInfo` data; qualifiers are the CL enum values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgInfo {
    pub name: String,
    pub type_name: String,
    pub address_qualifier: u32,
    pub access_qualifier: u32,
    pub type_qualifier: u32,
}

const CL_KERNEL_ARG_ADDRESS_PRIVATE: u32 = 0x119E;
const CL_KERNEL_ARG_ACCESS_NONE: u32 = 0x11A3;

/// How one argument reaches the kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ArgKind {
    #[default]
    Unused,
    StorageBuffer {
        set: u32,
        binding: u32,
    },
    UniformBuffer {
        set: u32,
        binding: u32,
    },
    PodStorageBuffer {
        set: u32,
        binding: u32,
        offset: u32,
        size: u32,
    },
    PodUniform {
        set: u32,
        binding: u32,
        offset: u32,
        size: u32,
    },
    PodPushConstant {
        offset: u32,
        size: u32,
    },
    /// `__local` pointer: spec constant `spec_id` = argument size / `elem_size`.
    Local {
        spec_id: u32,
        elem_size: u32,
    },
    SampledImage {
        set: u32,
        binding: u32,
    },
    StorageImage {
        set: u32,
        binding: u32,
    },
    Sampler {
        set: u32,
        binding: u32,
    },
    StorageTexelBuffer {
        set: u32,
        binding: u32,
    },
    UniformTexelBuffer {
        set: u32,
        binding: u32,
    },
    PointerPushConstant {
        offset: u32,
        size: u32,
    },
    PointerUniform {
        set: u32,
        binding: u32,
        offset: u32,
        size: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageMetadataKind {
    ChannelOrder,
    ChannelDataType,
    /// Bit mask of which sampler arguments use normalized coordinates.
    NormalizedSamplerMask,
    /// The sampler argument's mask, for the REPEAT formulas of sampler_wrap.
    SamplerMask,
    /// The same, from a sampler_wrap that also keeps the reads through it inside the image
    /// where CLAMP's sampler reads the same (nearest, unnormalized CLAMP_TO_EDGE).
    SamplerMaskInside,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageMetadata {
    pub ordinal: u32,
    pub kind: ImageMetadataKind,
    /// Where the value goes: a push-constant range, or (set, binding) of a uniform buffer and
    /// the range in it.
    pub push_constant: Option<PushRange>,
    pub uniform: Option<(u32, u32, PushRange)>,
    /// Or a specialisation constant (its SpecId): a pipeline per value.
    pub spec_id: Option<u32>,
}

/// Why a module could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReflectionError(pub String);

impl std::fmt::Display for ReflectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed clspv module: {}", self.0)
    }
}

type Result<T> = std::result::Result<T, ReflectionError>;

fn err<T>(msg: impl Into<String>) -> Result<T> {
    Err(ReflectionError(msg.into()))
}

/// Arguments beyond this ordinal are garbage, not a kernel (CL_DEVICE_MAX_PARAMETER_SIZE
/// allows at most a few hundred).
const MAX_ARGS: u32 = 4096;
/// vkcl's own reflection instructions (sampler_wrap) by their number here.
const VKCL_REFLECTION: u32 = 1 << 16;
const VKCL_SAMPLER_MASK: u32 = VKCL_REFLECTION | super::sampler_wrap::SAMPLER_MASK_PUSH_CONSTANT;
const VKCL_SAMPLER_MASK_INSIDE: u32 =
    VKCL_REFLECTION | super::sampler_wrap::SAMPLER_MASK_PUSH_CONSTANT_INSIDE;
const VKCL_SAMPLER_MASK_SPEC: u32 =
    VKCL_REFLECTION | super::sampler_wrap::SAMPLER_MASK_SPEC_CONSTANT_INSIDE;

// ---------------------------------------------------------------------------------------------
// Collecting the instructions.

/// One reflection instruction: its result id, instruction number and operand ids.
struct ExtInst {
    id: u32,
    number: u32,
    args: Vec<u32>,
}

/// What the parse pass keeps from the module.
#[derive(Default)]
struct Collected {
    reflection_sets: HashMap<u32, u32>,
    /// Ids of vkcl's own reflection set (sampler_wrap); its instructions are numbered
    /// `VKCL_REFLECTION | n` here.
    vkcl_sets: Vec<u32>,
    strings: HashMap<u32, String>,
    constants: HashMap<u32, u64>,
    insts: Vec<ExtInst>,
    /// Per function: every id its body refers to (for static `__local` attribution).
    function_refs: HashMap<u32, HashSet<u32>>,
    current_function: Option<u32>,
    error: Option<String>,
}

impl Consumer for Collected {
    fn initialize(&mut self) -> ParseAction {
        ParseAction::Continue
    }
    fn finalize(&mut self) -> ParseAction {
        ParseAction::Continue
    }
    fn consume_header(&mut self, _: ModuleHeader) -> ParseAction {
        ParseAction::Continue
    }
    fn consume_instruction(&mut self, inst: Instruction) -> ParseAction {
        self.record(inst);
        ParseAction::Continue
    }
}

impl Collected {
    fn record(&mut self, inst: Instruction) {
        let result = inst.result_id.unwrap_or(0);
        match inst.class.opcode {
            Op::ExtInstImport => {
                if let Some(Operand::LiteralString(name)) = inst.operands.first() {
                    if let Some(v) = name.strip_prefix("NonSemantic.ClspvReflection.") {
                        self.reflection_sets.insert(result, v.parse().unwrap_or(0));
                    } else if name == super::sampler_wrap::SAMPLER_MASK_SET {
                        self.vkcl_sets.push(result);
                    }
                }
            }
            Op::String => {
                if let Some(Operand::LiteralString(s)) = inst.operands.first() {
                    self.strings.insert(result, s.clone());
                }
            }
            Op::Constant => match inst.operands.first() {
                Some(Operand::LiteralBit32(v)) => {
                    let _ = self.constants.insert(result, u64::from(*v));
                }
                Some(Operand::LiteralBit64(v)) => drop(self.constants.insert(result, *v)),
                _ => {}
            },
            Op::Function => {
                self.current_function = Some(result);
                self.function_refs.entry(result).or_default();
            }
            Op::FunctionEnd => self.current_function = None,
            Op::ExtInst => self.record_ext_inst(&inst, result),
            _ => {}
        }
        if let Some(f) = self.current_function {
            let refs = self.function_refs.entry(f).or_default();
            refs.extend(inst.operands.iter().filter_map(|o| match o {
                Operand::IdRef(id) => Some(*id),
                _ => None,
            }));
        }
    }

    fn record_ext_inst(&mut self, inst: &Instruction, result: u32) {
        let (Some(Operand::IdRef(set)), Some(Operand::LiteralExtInstInteger(number))) =
            (inst.operands.first(), inst.operands.get(1))
        else {
            return;
        };
        let number = match self.vkcl_sets.contains(set) {
            true => VKCL_REFLECTION | number,
            false if self.reflection_sets.contains_key(set) => *number,
            false => return,
        };
        let mut args = Vec::with_capacity(inst.operands.len().saturating_sub(2));
        for op in &inst.operands[2..] {
            match op {
                Operand::IdRef(id) => args.push(*id),
                _ => {
                    self.error.get_or_insert_with(|| {
                        format!("reflection instruction {number} has a non-id operand")
                    });
                    return;
                }
            }
        }
        self.insts.push(ExtInst {
            id: result,
            number,
            args,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Interpreting them.

/// Reads the reflection of a clspv module.
pub fn parse(spirv: &[u32]) -> Result<Reflection> {
    check_framing(spirv)?;
    let mut c = Collected::default();
    // rspirv's decoder can still index out of bounds on some malformed operands; a module the
    // application handed us (clCreateProgramWithBinary) must not take the process down.
    let parsed =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse_words(spirv, &mut c)));
    match parsed {
        Ok(r) => r.map_err(|e| ReflectionError(format!("{e:?}")))?,
        Err(_) => return err("the SPIR-V parser failed"),
    }
    if let Some(e) = c.error.take() {
        return err(e);
    }
    let mut b = Builder {
        c: &c,
        r: Reflection::default(),
        kernels: HashMap::new(),
        infos: HashMap::new(),
        wg_vars: Vec::new(),
    };
    b.r.version = c.reflection_sets.values().copied().max().unwrap_or(0);
    // Kernels and argument infos first: the other instructions refer to them.
    for inst in c.insts.iter().filter(|i| i.number <= 2) {
        b.declare(inst)?;
    }
    for inst in c.insts.iter().filter(|i| i.number > 2) {
        b.apply(inst)?;
    }
    b.attribute_local_memory();
    b.r.push_constant_size = push_constant_size(&b.r);
    for k in &mut b.r.kernels {
        hide_scratch(k);
        hide_device_queue(k);
    }
    Ok(b.r)
}

/// The device queue state's address (`compiler::device_enqueue`), the last parameter, taken
/// out of the arguments' count.
fn hide_device_queue(k: &mut KernelReflection) {
    let last = k.args.last().and_then(|a| a.info.as_ref());
    if k.num_args as usize == k.args.len()
        && last.is_some_and(|i| i.name == super::device_enqueue::PARAMETER)
    {
        k.num_args -= 1;
        k.device_queue = true;
    }
}

/// A flat kernel's hidden parameters (`compiler::generic_flat`: the scratch address, then
/// with `__local` pointer arguments the work-group's bytes and their offsets) taken out of
/// its arguments' count: the application sees the kernel's own; `args` keeps the entries.
fn hide_scratch(k: &mut KernelReflection) {
    use super::generic_flat::{local_argument, sizes, GROUP_BYTES};
    let name = |a: &ArgReflection| a.info.as_ref().map_or(String::new(), |i| i.name.clone());
    let Some(at) = k.args.iter().position(|a| sizes(&name(a)).is_some()) else {
        return;
    };
    let Some((local, private)) = sizes(&name(&k.args[at])) else {
        return;
    };
    let after: Vec<String> = k.args[at + 1..].iter().map(name).collect();
    let local_args: Vec<u32> = after.iter().filter_map(|n| local_argument(n)).collect();
    let shape = match after.split_first() {
        None => true,
        Some((first, rest)) => first == GROUP_BYTES && rest.len() == local_args.len(),
    };
    if k.num_args as usize == k.args.len() && shape {
        k.num_args = at as u32;
        k.scratch = Some(Scratch {
            local,
            private,
            local_args,
        });
    }
}

struct Builder<'a> {
    c: &'a Collected,
    r: Reflection,
    /// Kernel instruction id → (index in `r.kernels`, kernel function id).
    kernels: HashMap<u32, (usize, u32)>,
    infos: HashMap<u32, ArgInfo>,
    /// `WorkgroupVariableSize`: (variable, bytes).
    wg_vars: Vec<(u32, u64)>,
}

impl Builder<'_> {
    /// Operand `i` as a 32-bit constant.
    fn num(&self, inst: &ExtInst, i: usize) -> Result<u32> {
        let id = self.operand(inst, i)?;
        match self.c.constants.get(&id) {
            Some(&v) => u32::try_from(v).or_else(|_| err(format!("constant %{id} out of range"))),
            None => err(format!(
                "operand {i} of reflection instruction {} is not a constant",
                inst.number
            )),
        }
    }

    fn string(&self, inst: &ExtInst, i: usize) -> Result<String> {
        let id = self.operand(inst, i)?;
        match self.c.strings.get(&id) {
            Some(s) => Ok(s.clone()),
            None => err(format!(
                "operand {i} of reflection instruction {} is not a string",
                inst.number
            )),
        }
    }

    fn operand(&self, inst: &ExtInst, i: usize) -> Result<u32> {
        match inst.args.get(i) {
            Some(&id) => Ok(id),
            None => err(format!(
                "reflection instruction {} has too few operands",
                inst.number
            )),
        }
    }

    fn range(&self, inst: &ExtInst, i: usize) -> Result<PushRange> {
        Ok(PushRange {
            offset: self.num(inst, i)?,
            size: self.num(inst, i + 1)?,
        })
    }

    fn xyz(&self, inst: &ExtInst, i: usize) -> Result<[u32; 3]> {
        Ok([
            self.num(inst, i)?,
            self.num(inst, i + 1)?,
            self.num(inst, i + 2)?,
        ])
    }

    /// Kernel (1) and ArgumentInfo (2).
    fn declare(&mut self, inst: &ExtInst) -> Result<()> {
        if inst.number == 2 {
            let opt = |i| {
                if inst.args.len() > i {
                    self.num(inst, i).map(Some)
                } else {
                    Ok(None)
                }
            };
            let info = ArgInfo {
                name: self.string(inst, 0)?,
                type_name: if inst.args.len() > 1 {
                    self.string(inst, 1)?
                } else {
                    String::new()
                },
                address_qualifier: opt(2)?.unwrap_or(CL_KERNEL_ARG_ADDRESS_PRIVATE),
                access_qualifier: opt(3)?.unwrap_or(CL_KERNEL_ARG_ACCESS_NONE),
                type_qualifier: opt(4)?.unwrap_or(0),
            };
            self.infos.insert(
                inst.id,
                super::byval::arg_info(super::pipes::arg_info(info)),
            );
            return Ok(());
        }
        let num_args = if inst.args.len() > 2 {
            self.num(inst, 2)?
        } else {
            0
        };
        if num_args > MAX_ARGS {
            return err(format!("kernel with {num_args} arguments"));
        }
        let flags = if inst.args.len() > 3 {
            self.num(inst, 3)?
        } else {
            0
        };
        let kernel = KernelReflection {
            name: self.string(inst, 1)?,
            num_args,
            attributes: if inst.args.len() > 4 {
                self.string(inst, 4)?
            } else {
                String::new()
            },
            args: vec![ArgReflection::default(); num_args as usize],
            may_use_printf: flags & 1 != 0,
            ..KernelReflection::default()
        };
        self.kernels
            .insert(inst.id, (self.r.kernels.len(), self.operand(inst, 0)?));
        self.r.kernels.push(kernel);
        Ok(())
    }

    /// The kernel named by operand 0.
    fn kernel(&mut self, inst: &ExtInst) -> Result<&mut KernelReflection> {
        let id = self.operand(inst, 0)?;
        match self.kernels.get(&id) {
            Some(&(k, _)) => match self.r.kernels.get_mut(k) {
                Some(kernel) => Ok(kernel),
                None => err("kernel index out of range"),
            },
            None => err(format!(
                "reflection instruction {} names no kernel",
                inst.number
            )),
        }
    }
}

impl Builder<'_> {
    /// Every instruction but Kernel and ArgumentInfo.
    fn apply(&mut self, inst: &ExtInst) -> Result<()> {
        if let Some((kind, info_at)) = self.arg_kind(inst)? {
            return self.set_arg(inst, kind, info_at);
        }
        let is_pc = (15..=20).contains(&inst.number);
        let range = if is_pc {
            Some(self.range(inst, 0)?)
        } else {
            None
        };
        let pc = &mut self.r.push_constants;
        let slot = match inst.number {
            15 => Some(&mut pc.global_offset),
            16 => Some(&mut pc.enqueued_local_size),
            17 => Some(&mut pc.global_size),
            18 => Some(&mut pc.region_offset),
            19 => Some(&mut pc.num_workgroups),
            20 => Some(&mut pc.region_group_offset),
            _ => None,
        };
        if let Some(slot) = slot {
            *slot = range;
            return Ok(());
        }
        match inst.number {
            12 => self.r.spec_constants.workgroup_size = Some(self.xyz(inst, 0)?),
            13 => self.r.spec_constants.global_offset = Some(self.xyz(inst, 0)?),
            14 => self.r.spec_constants.work_dim = Some(self.num(inst, 0)?),
            25 => self.r.spec_constants.subgroup_max_size = Some(self.num(inst, 0)?),
            21 | 22 => {
                let data = decode_hex(&self.string(inst, 2)?)?;
                let (set, binding) = (self.num(inst, 0)?, self.num(inst, 1)?);
                self.r.constant_data = Some(ConstantData {
                    set,
                    binding,
                    data,
                    is_uniform: inst.number == 22,
                });
            }
            super::globals::REFLECTION_INSTRUCTION => {
                let data = decode_hex(&self.string(inst, 2)?)?;
                let (set, binding) = (self.num(inst, 0)?, self.num(inst, 1)?);
                let is_uniform = false;
                self.r.globals = Some(ConstantData {
                    set,
                    binding,
                    data,
                    is_uniform,
                });
            }
            23 => {
                let s = LiteralSampler {
                    set: self.num(inst, 0)?,
                    binding: self.num(inst, 1)?,
                    mask: self.num(inst, 2)?,
                };
                self.r.literal_samplers.push(s);
            }
            24 => {
                let size = self.xyz(inst, 1)?;
                self.kernel(inst)?.reqd_work_group_size = Some(size);
            }
            30..=33
            | 41
            | VKCL_SAMPLER_MASK
            | VKCL_SAMPLER_MASK_INSIDE
            | VKCL_SAMPLER_MASK_SPEC => self.image_metadata(inst)?,
            38 => {
                let (id, format) = (self.num(inst, 0)?, self.string(inst, 1)?);
                let arg_sizes = (2..inst.args.len())
                    .map(|i| self.num(inst, i))
                    .collect::<Result<_>>()?;
                let printf = self.r.printf.get_or_insert_with(PrintfReflection::default);
                printf.formats.push(PrintfFormat {
                    id,
                    format,
                    arg_sizes,
                });
            }
            39 => {
                let buffer = (self.num(inst, 0)?, self.num(inst, 1)?, self.num(inst, 2)?);
                self.r
                    .printf
                    .get_or_insert_with(PrintfReflection::default)
                    .buffer = Some(buffer);
            }
            36 => {
                let data = decode_hex(&self.string(inst, 2)?)?;
                self.r.constant_data_pointer = Some((self.range(inst, 0)?, data));
            }
            40 => {
                let pointer = (self.range(inst, 0)?, self.num(inst, 2)?);
                self.r
                    .printf
                    .get_or_insert_with(PrintfReflection::default)
                    .pointer = Some(pointer);
            }
            42 => {
                let (var, size) = (self.operand(inst, 0)?, self.num(inst, 1)?);
                self.wg_vars.push((var, u64::from(size)));
            }
            _ => {} // unknown, or physical-addressing module data (see the module comment)
        }
        Ok(())
    }

    /// For an argument instruction: its kind and where its optional ArgumentInfo operand is.
    fn arg_kind(&self, inst: &ExtInst) -> Result<Option<(ArgKind, usize)>> {
        let n = |i| self.num(inst, i);
        let kind = match inst.number {
            3 => (
                ArgKind::StorageBuffer {
                    set: n(2)?,
                    binding: n(3)?,
                },
                4,
            ),
            4 => (
                ArgKind::UniformBuffer {
                    set: n(2)?,
                    binding: n(3)?,
                },
                4,
            ),
            5 => (
                ArgKind::PodStorageBuffer {
                    set: n(2)?,
                    binding: n(3)?,
                    offset: n(4)?,
                    size: n(5)?,
                },
                6,
            ),
            6 => (
                ArgKind::PodUniform {
                    set: n(2)?,
                    binding: n(3)?,
                    offset: n(4)?,
                    size: n(5)?,
                },
                6,
            ),
            7 => (
                ArgKind::PodPushConstant {
                    offset: n(2)?,
                    size: n(3)?,
                },
                4,
            ),
            8 => (
                ArgKind::SampledImage {
                    set: n(2)?,
                    binding: n(3)?,
                },
                4,
            ),
            9 => (
                ArgKind::StorageImage {
                    set: n(2)?,
                    binding: n(3)?,
                },
                4,
            ),
            10 => (
                ArgKind::Sampler {
                    set: n(2)?,
                    binding: n(3)?,
                },
                4,
            ),
            11 => (
                ArgKind::Local {
                    spec_id: n(2)?,
                    elem_size: n(3)?,
                },
                4,
            ),
            26 => (
                ArgKind::PointerPushConstant {
                    offset: n(2)?,
                    size: n(3)?,
                },
                4,
            ),
            27 => (
                ArgKind::PointerUniform {
                    set: n(2)?,
                    binding: n(3)?,
                    offset: n(4)?,
                    size: n(5)?,
                },
                6,
            ),
            34 => (
                ArgKind::StorageTexelBuffer {
                    set: n(2)?,
                    binding: n(3)?,
                },
                4,
            ),
            35 => (
                ArgKind::UniformTexelBuffer {
                    set: n(2)?,
                    binding: n(3)?,
                },
                4,
            ),
            _ => return Ok(None),
        };
        Ok(Some(kind))
    }

    fn set_arg(&mut self, inst: &ExtInst, kind: ArgKind, info_at: usize) -> Result<()> {
        let ordinal = self.num(inst, 1)?;
        let info = match inst.args.get(info_at) {
            Some(id) => Some(
                self.infos
                    .get(id)
                    .cloned()
                    .ok_or_else(|| ReflectionError("bad ArgumentInfo operand".into()))?,
            ),
            None => None,
        };
        let kernel = self.kernel(inst)?;
        if ordinal >= kernel.num_args {
            // NumArguments is optional: grow, within reason.
            if ordinal >= MAX_ARGS {
                return err(format!("argument ordinal {ordinal}"));
            }
            kernel.num_args = ordinal + 1;
            kernel
                .args
                .resize(kernel.num_args as usize, ArgReflection::default());
        }
        if let Some(arg) = kernel.args.get_mut(ordinal as usize) {
            *arg = ArgReflection { kind, info };
        }
        Ok(())
    }

    fn image_metadata(&mut self, inst: &ExtInst) -> Result<()> {
        let kind = match inst.number {
            30 | 32 => ImageMetadataKind::ChannelOrder,
            31 | 33 => ImageMetadataKind::ChannelDataType,
            VKCL_SAMPLER_MASK => ImageMetadataKind::SamplerMask,
            VKCL_SAMPLER_MASK_INSIDE | VKCL_SAMPLER_MASK_SPEC => {
                ImageMetadataKind::SamplerMaskInside
            }
            _ => ImageMetadataKind::NormalizedSamplerMask,
        };
        let ordinal = self.num(inst, 1)?;
        let spec_id = match inst.number {
            VKCL_SAMPLER_MASK_SPEC => Some(self.num(inst, 2)?),
            _ => None,
        };
        let (push_constant, uniform) = if spec_id.is_some() {
            (None, None)
        } else if matches!(inst.number, 32 | 33) {
            (
                None,
                Some((self.num(inst, 2)?, self.num(inst, 3)?, self.range(inst, 4)?)),
            )
        } else {
            (Some(self.range(inst, 2)?), None)
        };
        let m = ImageMetadata {
            ordinal,
            kind,
            push_constant,
            uniform,
            spec_id,
        };
        self.kernel(inst)?.image_metadata.push(m);
        Ok(())
    }

    /// Adds each static `__local` variable to every kernel whose call tree refers to it.
    fn attribute_local_memory(&mut self) {
        if self.wg_vars.is_empty() {
            return;
        }
        let functions = &self.c.function_refs;
        for &(k, func) in self.kernels.values() {
            let (mut seen, mut todo) = (HashSet::from([func]), vec![func]);
            let mut used = HashSet::new();
            while let Some(f) = todo.pop() {
                for &id in functions.get(&f).into_iter().flatten() {
                    if functions.contains_key(&id) && seen.insert(id) {
                        todo.push(id);
                    }
                    used.insert(id);
                }
            }
            let bytes = self
                .wg_vars
                .iter()
                .filter(|(v, _)| used.contains(v))
                .map(|(_, s)| s)
                .sum();
            if let Some(kernel) = self.r.kernels.get_mut(k) {
                kernel.static_local_mem = bytes;
            }
        }
    }
}

/// The end of the furthest push-constant range any kernel uses.
fn push_constant_size(r: &Reflection) -> u32 {
    let pc = &r.push_constants;
    let module = [
        pc.global_offset,
        pc.enqueued_local_size,
        pc.global_size,
        pc.region_offset,
        pc.num_workgroups,
        pc.region_group_offset,
        r.constant_data_pointer.as_ref().map(|c| c.0),
        r.printf.as_ref().and_then(|p| p.pointer).map(|p| p.0),
    ];
    let args = r
        .kernels
        .iter()
        .flat_map(|k| k.args.iter())
        .filter_map(|a| match a.kind {
            ArgKind::PodPushConstant { offset, size }
            | ArgKind::PointerPushConstant { offset, size } => Some(PushRange { offset, size }),
            _ => None,
        });
    let images = r
        .kernels
        .iter()
        .flat_map(|k| k.image_metadata.iter())
        .filter_map(|m| m.push_constant);
    module
        .into_iter()
        .flatten()
        .chain(args)
        .chain(images)
        .map(|p| p.offset.saturating_add(p.size))
        .max()
        .unwrap_or(0)
}

/// Checks the header and that every instruction's word count stays inside the module (rspirv
/// panics on some that do not).
fn check_framing(w: &[u32]) -> Result<()> {
    if w.len() < 5 || w[0] != 0x0723_0203 {
        return err("not a SPIR-V module");
    }
    let mut i = 5;
    while i < w.len() {
        let count = (w[i] >> 16) as usize;
        if count == 0 || i + count > w.len() {
            return err(format!("bad instruction length at word {i}"));
        }
        i += count;
    }
    Ok(())
}

/// clspv writes constant data as a string of hex digit pairs.
fn decode_hex(s: &str) -> Result<Vec<u8>> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => err("constant data is not hexadecimal"),
    };
    if s.len() % 2 != 0 {
        return err("constant data has an odd number of digits");
    }
    s.as_bytes()
        .chunks_exact(2)
        .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}
