//! CL_ADDRESS_REPEAT and CL_ADDRESS_MIRRORED_REPEAT with normalized coordinates, computed as the
//! OpenCL C specification writes them (section 8.2.1, "Addressing and filtering with normalized
//! coordinates"):
//!
//! - REPEAT: `u = (s - floor(s)) * w`, and a texel index `i > w - 1` becomes `i - w`;
//! - MIRRORED_REPEAT: `s' = fabs(s - 2 * rint(0.5 * s))`, `u = s' * w`, `i = min(i, w - 1)`.
//!
//! Vulkan's REPEAT wraps the texel index instead (`floor(s * w) mod w`). The two agree except
//! where `s - floor(s)` rounds: at a tiny negative `s` (-7.7e-9) it is 1.0 in single precision,
//! so OpenCL reads the first texel where Vulkan reads the last. This pass applies the spec's
//! formula to the coordinate of every `OpImageSampleExplicitLod` whose sampler may be REPEAT or
//! MIRRORED_REPEAT with normalized coordinates, and leaves the rest to the Vulkan sampler: on a
//! coordinate in [0, 1] Vulkan's wrapping then gives the spec's texels, for nearest and linear
//! filtering (the spec's `i > w - 1` and `min(i, w - 1)` are Vulkan's wraps of `i = w`).
//!
//! Where the sampler comes from decides how its mode is known:
//! - a literal sampler (`LiteralSampler` reflection): its mask, at compile time;
//! - a sampler argument: at enqueue only, so the pass adds a 32-bit member to the push-constant
//!   block per such sampler variable, the kernel selects the formula by the mask found there,
//!   and a reflection instruction of vkcl's own, [`SAMPLER_MASK_SET`] instruction
//!   [`SAMPLER_MASK_PUSH_CONSTANT`] (Kernel, Ordinal, Offset, Size), asks the runtime to push
//!   the argument's sampler mask there.
//!
//! Only the spatial components are wrapped (not an array's layer). A module is returned
//! unchanged where anything is not understood (a read whose sampler cannot be traced to its
//! variable among them). A sampler argument whose push constant would take the block past
//! Vulkan's guaranteed 128 bytes gets its mask as a specialisation constant instead
//! ([`SAMPLER_MASK_SPEC_CONSTANT_INSIDE`]): the runtime makes a pipeline per mask for such a
//! kernel (before, its reads kept Vulkan's wrap whatever the sampler).
//!
//! The same rewriting keeps reads inside the image where the addressing mode would not matter
//! there, so that the runtime may sample with CLAMP (a CLAMP_TO_BORDER Vulkan sampler) instead:
//! nearest reads are snapped to texel centres inside the image (CLAMP_TO_EDGE clamps the index
//! to `[0, w - 1]`), and linear reads with unnormalized CLAMP_TO_EDGE are clamped to
//! `[0.5, w - 0.5]`. Literal samplers all of whose reads are such get CLAMP's mask in their
//! reflection; for sampler arguments the runtime swaps the sampler where it pushes the mask
//! (core::kernel). lavapipe filters formats whose channels fit 8-bit unorm in 8-bit fixed
//! point with CLAMP_TO_EDGE and REPEAT (5- and 6-bit channels widened), in float with CLAMP
//! (docs/IMAGES.md, issue 16).

use super::spirv::instructions;
use std::collections::HashMap;

/// The extended instruction set of vkcl's own reflection instructions.
pub const SAMPLER_MASK_SET: &str = "NonSemantic.vkcl.1";
/// SamplerMaskPushConstant(Kernel, Ordinal, Offset, Size): push the sampler mask of argument
/// `Ordinal` (the `CLK_*` bits) at `Offset`.
pub const SAMPLER_MASK_PUSH_CONSTANT: u32 = 1;
/// SamplerMaskPushConstantInside(Kernel, Ordinal, Offset, Size): the same, and every read
/// through that argument's sampler is kept inside the image (nearest filtering, or linear with
/// unnormalized CLAMP_TO_EDGE), so that the runtime may bind CLAMP's sampler for those modes.
/// What this pass emits now; modules of older builds (in program binaries) have the former.
pub const SAMPLER_MASK_PUSH_CONSTANT_INSIDE: u32 = 2;
/// SamplerMaskSpecConstantInside(Kernel, Ordinal, SpecId): as the former, the mask given as
/// specialisation constant `SpecId`, for a sampler argument the push-constant block had no room
/// for.
pub const SAMPLER_MASK_SPEC_CONSTANT_INSIDE: u32 = 3;
/// The first SpecId of those (far above clspv's, which count from 0).
const SAMPLER_SPEC_ID_BASE: u32 = 1 << 20;

const OP_CAPABILITY: u32 = 17;
const OP_EXT_INST_IMPORT: u32 = 11;
const OP_EXT_INST: u32 = 12;
const OP_ENTRY_POINT: u32 = 15;
const OP_TYPE_VOID: u32 = 19;
const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_IMAGE: u32 = 25;
const OP_TYPE_SAMPLER: u32 = 26;
const OP_TYPE_SAMPLED_IMAGE: u32 = 27;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_FUNCTION_CALL: u32 = 57;
const OP_VARIABLE: u32 = 59;
const OP_LOAD: u32 = 61;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_DECORATE: u32 = 71;
const OP_SPEC_CONSTANT: u32 = 50;
const OP_MEMBER_DECORATE: u32 = 72;
const OP_VECTOR_SHUFFLE: u32 = 79;
const OP_COMPOSITE_CONSTRUCT: u32 = 80;
const OP_COMPOSITE_EXTRACT: u32 = 81;
const OP_SAMPLED_IMAGE: u32 = 86;
const OP_IMAGE_SAMPLE_EXPLICIT_LOD: u32 = 88;
const OP_IMAGE: u32 = 100;
const OP_IMAGE_QUERY_SIZE_LOD: u32 = 103;
const OP_CONVERT_U_TO_F: u32 = 112;
const OP_FADD: u32 = 129;
const OP_FSUB: u32 = 131;
const OP_FMUL: u32 = 133;
const OP_FDIV: u32 = 136;
const OP_VECTOR_TIMES_SCALAR: u32 = 142;
const OP_SELECT: u32 = 169;
const OP_IEQUAL: u32 = 170;
const OP_INOT_EQUAL: u32 = 171;
const OP_FORD_GREATER_THAN_EQUAL: u32 = 190;
const OP_BITWISE_AND: u32 = 199;
const GLSL_ROUND_EVEN: u32 = 2;
const GLSL_FABS: u32 = 4;
const GLSL_FLOOR: u32 = 8;
const GLSL_FMIN: u32 = 37;
const GLSL_FMAX: u32 = 40;
const CAPABILITY_IMAGE_QUERY: u32 = 50;
const STORAGE_PUSH_CONSTANT: u32 = 9;
const DECORATION_SPEC_ID: u32 = 1;
const DECORATION_BLOCK: u32 = 2;
const DECORATION_ARRAY_STRIDE: u32 = 6;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;
const DECORATION_OFFSET: u32 = 35;
const REFLECTION_KERNEL: u32 = 1;
const REFLECTION_KERNEL_ARGUMENT_SAMPLER: u32 = 10;
const REFLECTION_LITERAL_SAMPLER: u32 = 23;
const REFLECTION_NORMALIZED_SAMPLER_MASK: u32 = 41;
/// The sampler mask bits that decide: CLK_NORMALIZED_COORDS_TRUE and the addressing mode.
const MODE_BITS: u32 = 0xf;
const NORMALIZED_REPEAT: u32 = 0x1 | 0x6;
const NORMALIZED_MIRRORED_REPEAT: u32 = 0x1 | 0x8;
const NORMALIZED: u32 = 0x1;
const FILTER_LINEAR: u32 = 0x20;
/// The addressing bits, CLK_ADDRESS_CLAMP_TO_EDGE and CLK_ADDRESS_CLAMP among them.
const ADDRESS_BITS: u32 = 0xe;
const CLAMP_TO_EDGE: u32 = 0x2;
const CLAMP: u32 = 0x4;
/// Vulkan's guaranteed maxPushConstantsSize.
const MAX_PUSH_CONSTANTS: u32 = 128;

/// `spirv` with the spec's REPEAT and MIRRORED_REPEAT coordinates (unchanged where no sampled
/// read may use them, or where the module is not understood).
pub fn wrap_repeat_coordinates(spirv: &[u32]) -> Vec<u32> {
    let mut end = 5;
    let mut samples = false;
    for (at, i) in instructions(spirv) {
        end = at + i.len();
        samples |= i[0] & 0xffff == OP_IMAGE_SAMPLE_EXPLICIT_LOD;
    }
    // Nothing to do, or a module cut short (instructions stop at a malformed one).
    if !samples || end != spirv.len() {
        return spirv.to_vec();
    }
    Module::read(spirv)
        .and_then(|m| m.rewrite(spirv))
        .unwrap_or_else(|| spirv.to_vec())
}

/// Where a sampled read's addressing mode comes from.
#[derive(Clone, Copy)]
enum Mode {
    /// A literal sampler's mask, and its (set, binding).
    Literal(u32, (u32, u32)),
    /// The push-constant member (index in the block) holding a sampler argument's mask, and
    /// whether clspv normalizes that argument's coordinates itself (its Vulkan sampler is then
    /// a normalized one whatever the mask says).
    Pushed(u32, bool),
    /// The specialisation constant (its id) holding a sampler argument's mask (no room in the
    /// push-constant block), and whether clspv normalizes that argument's coordinates.
    Spec(u32, bool),
}

#[derive(Default)]
struct Module<'a> {
    defs: HashMap<u32, &'a [u32]>,
    /// Result id → result type.
    type_of: HashMap<u32, u32>,
    /// (set, binding) of decorated variables.
    set_binding: HashMap<u32, (u32, u32)>,
    uint_constants: HashMap<u32, u32>,
    member_offsets: HashMap<(u32, u32), u32>,
    array_strides: HashMap<u32, u32>,
    glsl: Option<u32>,
    /// Word offset of the last OpExtInstImport.
    last_import: usize,
    /// Word offset of the last OpDecorate / OpMemberDecorate.
    last_decoration: usize,
    first_function: usize,
    /// OpLoad of a sampler → the variable.
    sampler_loads: HashMap<u32, u32>,
    /// OpSampledImage → its sampler (a loaded id).
    sampled_images: HashMap<u32, u32>,
    /// OpSampledImage → its image.
    sampled_image_images: HashMap<u32, u32>,
    /// OpLoad of an image → the word offset of that load.
    image_loads: HashMap<u32, usize>,
    /// ArgumentSampler: (kernel, ordinal id, set, binding).
    sampler_args: Vec<(u32, u32, u32, u32)>,
    /// LiteralSampler: (set, binding) → mask.
    literals: HashMap<(u32, u32), u32>,
    /// LiteralSampler: (set, binding) → the word offset of its reflection instruction.
    literal_at: HashMap<(u32, u32), usize>,
    /// NormalizedSamplerMaskPushConstant: (kernel, ordinal) of the sampler arguments whose
    /// coordinates clspv normalizes.
    normalizing: Vec<(u32, u32)>,
    /// Kernel (reflection) → its function.
    kernel_functions: HashMap<u32, u32>,
    /// Function → the functions it calls.
    calls: HashMap<u32, Vec<u32>>,
    /// OpImageSampleExplicitLod (word offset) → the function it is in.
    read_functions: HashMap<usize, u32>,
    /// Whether the module declares the ImageQuery capability.
    image_query: bool,
    /// The push-constant variable and its block type.
    push_constants: Option<(u32, u32)>,
    void: Option<u32>,
    uint: Option<u32>,
    /// Word offsets of the OpEntryPoints.
    entry_points: Vec<usize>,
}

impl<'a> Module<'a> {
    fn read(spirv: &'a [u32]) -> Option<Module<'a>> {
        let mut m = Module::default();
        let mut in_function = false;
        let mut function = 0;
        let mut reflection_set = None;
        let mut ext_insts = vec![];
        for (at, inst) in instructions(spirv) {
            let op = inst[0] & 0xffff;
            match op {
                OP_EXT_INST_IMPORT => {
                    let name = literal_string(&inst[2..]);
                    if name == "GLSL.std.450" {
                        m.glsl = Some(inst[1]);
                    } else if name.starts_with("NonSemantic.ClspvReflection.") {
                        reflection_set = Some(inst[1]);
                    }
                    m.last_import = at;
                }
                OP_DECORATE | OP_MEMBER_DECORATE => {
                    m.last_decoration = at;
                    m.decoration(inst);
                }
                OP_FUNCTION if !in_function => {
                    in_function = true;
                    function = *inst.get(2)?;
                    if m.first_function == 0 {
                        m.first_function = at;
                    }
                }
                OP_EXT_INST if !in_function => ext_insts.push((at, inst)),
                OP_FUNCTION_CALL if in_function => {
                    m.calls.entry(function).or_default().push(*inst.get(3)?);
                }
                OP_IMAGE_SAMPLE_EXPLICIT_LOD if in_function => {
                    m.read_functions.insert(at, function);
                }
                OP_ENTRY_POINT => m.entry_points.push(at),
                OP_CAPABILITY if inst.get(1) == Some(&CAPABILITY_IMAGE_QUERY) => {
                    m.image_query = true;
                }
                _ => {}
            }
            if op == OP_FUNCTION_END {
                in_function = false;
            }
            if super::spirv::typed_results().contains(&op) && inst.len() >= 3 {
                m.type_of.insert(inst[2], inst[1]);
            }
            if in_function {
                m.function_inst(at, op, inst);
            } else {
                m.global(op, inst);
            }
        }
        let reflection_set = reflection_set?;
        for &(at, inst) in ext_insts
            .iter()
            .filter(|(_, i)| i.len() >= 5 && i[3] == reflection_set)
        {
            let num = |i: usize| inst.get(5 + i).and_then(|id| m.uint_constants.get(id));
            match inst[4] {
                REFLECTION_KERNEL => {
                    m.kernel_functions.insert(inst[2], *inst.get(5)?);
                }
                REFLECTION_KERNEL_ARGUMENT_SAMPLER => {
                    m.sampler_args
                        .push((*inst.get(5)?, *inst.get(6)?, *num(2)?, *num(3)?))
                }
                REFLECTION_LITERAL_SAMPLER if inst.len() >= 8 => {
                    m.literals.insert((*num(0)?, *num(1)?), *num(2)?);
                    m.literal_at.insert((*num(0)?, *num(1)?), at);
                }
                REFLECTION_NORMALIZED_SAMPLER_MASK => {
                    m.normalizing.push((*inst.get(5)?, *num(1)?));
                }
                _ => {}
            }
        }
        // The block's new members are uints, declared before it.
        (m.first_function > 0 && m.last_decoration > 0 && m.uint.is_some()).then_some(m)
    }

    fn decoration(&mut self, inst: &[u32]) {
        match (inst[0] & 0xffff, inst.get(2), inst.get(3), inst.get(4)) {
            (OP_DECORATE, Some(&DECORATION_DESCRIPTOR_SET), Some(&set), _) => {
                self.set_binding.entry(inst[1]).or_default().0 = set;
            }
            (OP_DECORATE, Some(&DECORATION_BINDING), Some(&binding), _) => {
                self.set_binding.entry(inst[1]).or_default().1 = binding;
            }
            (OP_DECORATE, Some(&DECORATION_ARRAY_STRIDE), Some(&stride), _) => {
                self.array_strides.insert(inst[1], stride);
            }
            (OP_MEMBER_DECORATE, Some(&member), Some(&DECORATION_OFFSET), Some(&offset)) => {
                self.member_offsets.insert((inst[1], member), offset);
            }
            _ => {}
        }
    }

    fn global(&mut self, op: u32, inst: &'a [u32]) {
        match op {
            OP_TYPE_VOID..=OP_TYPE_POINTER if inst.len() > 1 => {
                self.defs.insert(inst[1], inst);
                if op == OP_TYPE_VOID {
                    self.void = Some(inst[1]);
                }
                if op == OP_TYPE_INT && inst.get(2..4) == Some(&[32, 0]) {
                    self.uint = Some(inst[1]);
                }
            }
            OP_CONSTANT if inst.len() == 4 => {
                self.defs.insert(inst[2], inst);
                if self.is_uint(inst[1]) {
                    self.uint_constants.insert(inst[2], inst[3]);
                }
            }
            OP_VARIABLE if inst.len() >= 4 => {
                self.defs.insert(inst[2], inst);
                if inst[3] == STORAGE_PUSH_CONSTANT {
                    let block = self.defs.get(&inst[1]).and_then(|p| p.get(3)).copied();
                    self.push_constants = block.map(|b| (inst[2], b));
                }
            }
            _ => {}
        }
    }

    fn function_inst(&mut self, at: usize, op: u32, inst: &[u32]) {
        match op {
            OP_LOAD if inst.len() >= 4 && self.op_of(inst[1]) == Some(OP_TYPE_SAMPLER) => {
                self.sampler_loads.insert(inst[2], inst[3]);
            }
            OP_LOAD if inst.len() >= 4 && self.op_of(inst[1]) == Some(OP_TYPE_IMAGE) => {
                self.image_loads.insert(inst[2], at);
            }
            OP_SAMPLED_IMAGE if inst.len() == 5 => {
                self.sampled_images.insert(inst[2], inst[4]);
                self.sampled_image_images.insert(inst[2], inst[3]);
            }
            _ => {}
        }
    }

    fn op_of(&self, id: u32) -> Option<u32> {
        self.defs.get(&id).map(|d| d[0] & 0xffff)
    }

    fn is_uint(&self, ty: u32) -> bool {
        self.defs
            .get(&ty)
            .is_some_and(|d| d[0] & 0xffff == OP_TYPE_INT && d.get(2..4) == Some(&[32, 0]))
    }

    /// Bytes of a type in an explicitly laid out block.
    fn size_of(&self, ty: u32) -> Option<u32> {
        let d = self.defs.get(&ty)?;
        match d[0] & 0xffff {
            OP_TYPE_INT | OP_TYPE_FLOAT => Some(d[2] / 8),
            OP_TYPE_VECTOR => Some(self.size_of(d[2])? * d[3]),
            OP_TYPE_ARRAY => Some(self.array_strides.get(&ty)? * self.uint_constants.get(&d[3])?),
            OP_TYPE_STRUCT => (2..d.len())
                .map(|i| {
                    let offset = self.member_offsets.get(&(ty, i as u32 - 2))?;
                    Some(offset + self.size_of(d[i])?)
                })
                .try_fold(0, |end, m| Some(end.max(m?))),
            _ => None,
        }
    }

    /// The number of spatial coordinates of a sampled image type and whether it is an array,
    /// or None for one this pass does not touch.
    fn spatial_axes(&self, sampled_image_ty: u32) -> Option<(u32, bool)> {
        let si = self.defs.get(&sampled_image_ty)?;
        let image = self.defs.get(si.get(2)?)?;
        match (si[0] & 0xffff, image[0] & 0xffff, image.get(3)) {
            (OP_TYPE_SAMPLED_IMAGE, OP_TYPE_IMAGE, Some(&dim)) if dim <= 2 => {
                Some((dim + 1, *image.get(5)? != 0))
            }
            _ => None,
        }
    }

    /// Whether clspv normalizes the coordinates of the sampler argument bound at `sb` of the
    /// kernels that run the read at word offset `at`. Kernels of one program share their
    /// sampler arguments' bindings: a 1D kernel's sampler is not normalized because a 3D
    /// kernel's at the same binding is. None where those kernels differ.
    fn normalizes(&self, at: usize, sb: (u32, u32)) -> Option<bool> {
        let function = *self.read_functions.get(&at)?;
        let mut normalizes = self
            .sampler_args
            .iter()
            .filter(|a| (a.2, a.3) == sb)
            .filter(|a| {
                self.kernel_functions
                    .get(&a.0)
                    .is_some_and(|&k| self.reaches(k, function))
            })
            .map(|a| {
                self.normalizing
                    .iter()
                    .any(|&(k, o)| k == a.0 && self.uint_constants.get(&a.1) == Some(&o))
            });
        let first = normalizes.next().unwrap_or(false);
        normalizes.all(|n| n == first).then_some(first)
    }

    /// Whether function `from` is `to` or calls it, directly or not.
    fn reaches(&self, from: u32, to: u32) -> bool {
        super::spirv::reachable(from, |f| self.calls.get(&f).map_or(&[][..], Vec::as_slice))
            .contains(&to)
    }

    fn rewrite(self, spirv: &[u32]) -> Option<Vec<u32>> {
        let mut r = Rewriter::new(&self, spirv[3]);
        for (at, inst) in instructions(spirv) {
            let op = inst[0] & 0xffff;
            if op == OP_IMAGE_SAMPLE_EXPLICIT_LOD && at > self.first_function && inst.len() >= 5 {
                r.sample(at, inst)?;
            }
        }
        r.reflect()?;
        r.clamp_literals();
        r.assemble(spirv)
    }
}

fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..len]).into_owned()
}

fn string_words(s: &str) -> Vec<u32> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.resize(s.len() / 4 * 4 + 4, 0);
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn inst(op: u32, operands: &[u32]) -> Vec<u32> {
    let mut v = vec![((operands.len() as u32 + 1) << 16) | op];
    v.extend_from_slice(operands);
    v
}

/// The new instructions, by where they go.
struct Rewriter<'m> {
    m: &'m Module<'m>,
    bound: u32,
    /// Before the first instruction: capabilities.
    capabilities: Vec<u32>,
    /// After the last OpExtInstImport.
    imports: Vec<u32>,
    /// After the last decoration.
    decorations: Vec<u32>,
    /// Before the first function: types and constants.
    globals: Vec<u32>,
    /// Code before sampled reads: (word offset of the read, code, the new coordinate).
    before: Vec<(usize, Vec<u32>, u32)>,
    /// Code after image loads (their size queries), by the word offset of the load.
    after: HashMap<usize, Vec<u32>>,
    /// The size query of each loaded image that has one after its load.
    sizes: HashMap<u32, u32>,
    /// At the end of the module: reflection.
    tail: Vec<u32>,
    /// The code being emitted.
    code: Vec<u32>,
    /// Sampler argument variables given a push-constant member, in member order.
    pushed: Vec<u32>,
    /// Sampler argument variables given a specialisation constant instead: (variable,
    /// constant id), the SpecId `SAMPLER_SPEC_ID_BASE` + index.
    specs: Vec<(u32, u32)>,
    /// The push-constant block: (variable, struct type, members it had), and for a module
    /// without one, the pointer type of the block made here.
    block: Option<(u32, u32, u32)>,
    new_block: Option<u32>,
    /// Where the block's first new member goes.
    block_end: u32,
    uint: u32,
    glsl: u32,
    /// New types and constants by their opcode and operands.
    made: HashMap<Vec<u32>, u32>,
    /// Literal samplers: whether every read through them has been given a coordinate inside
    /// the image or on CLAMP's border (then their mask becomes CLAMP's).
    inside: HashMap<(u32, u32), bool>,
    /// LiteralSampler reflection instructions (word offset) given another mask (constant id).
    literal_masks: HashMap<usize, u32>,
}

impl<'m> Rewriter<'m> {
    fn new(m: &'m Module<'m>, bound: u32) -> Rewriter<'m> {
        let mut r = Rewriter {
            m,
            bound,
            capabilities: vec![],
            imports: vec![],
            decorations: vec![],
            globals: vec![],
            before: vec![],
            after: HashMap::new(),
            sizes: HashMap::new(),
            tail: vec![],
            code: vec![],
            pushed: vec![],
            specs: vec![],
            block: None,
            new_block: None,
            block_end: 0,
            uint: m.uint.unwrap_or(0),
            glsl: 0,
            made: HashMap::new(),
            inside: HashMap::new(),
            literal_masks: HashMap::new(),
        };
        r.glsl = match m.glsl {
            Some(id) => id,
            None => {
                let id = r.id();
                let name = [&[id], string_words("GLSL.std.450").as_slice()].concat();
                r.imports.extend(inst(OP_EXT_INST_IMPORT, &name));
                id
            }
        };
        r
    }

    fn id(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    /// A type or constant: an existing one with these operands (after the result id; for a
    /// constant, the type then the value), or a new one.
    fn global(&mut self, op: u32, operands: &[u32]) -> u32 {
        let existing = self.m.defs.iter().filter(|(_, d)| {
            let after = if op == OP_CONSTANT {
                d.len() == 4 && d[1..2] == operands[..1] && d[3..] == operands[1..]
            } else {
                d.len() == operands.len() + 2 && d[2..] == *operands
            };
            d[0] & 0xffff == op && after
        });
        // The first of equal pointer types or constants, so that the output is deterministic.
        if let Some(id) = existing.map(|(&id, _)| id).min() {
            return id;
        }
        let key = [&[op], operands].concat();
        if let Some(&id) = self.made.get(&key) {
            return id;
        }
        let id = self.id();
        let words = match op {
            OP_CONSTANT => vec![operands[0], id, operands[1]],
            _ => [&[id], operands].concat(),
        };
        self.globals.extend(inst(op, &words));
        self.made.insert(key, id);
        id
    }

    fn uint_constant(&mut self, v: u32) -> u32 {
        self.global(OP_CONSTANT, &[self.uint, v])
    }

    /// One instruction with a result of type `ty` into `code`.
    fn emit(&mut self, op: u32, ty: u32, operands: &[u32]) -> u32 {
        let id = self.id();
        self.code.extend(inst(op, &[&[ty, id], operands].concat()));
        id
    }

    /// The addressing mode of a sampled image's sampler where it may wrap; None for the module
    /// not understood.
    fn mode(&mut self, at: usize, sampled_image: u32) -> Option<Option<Mode>> {
        let var = self
            .m
            .sampled_images
            .get(&sampled_image)
            .and_then(|s| self.m.sampler_loads.get(s));
        // A sampler this pass cannot trace: the module is left as it is (the runtime binds
        // CLAMP samplers for CLAMP_TO_EDGE and REPEAT ones only where every read through them
        // was rewritten).
        let Some(&var) = var else {
            return None;
        };
        let sb = *self.m.set_binding.get(&var)?;
        if let Some(&mask) = self.m.literals.get(&sb) {
            return Some(Some(Mode::Literal(mask, sb)));
        }
        if !self.m.sampler_args.iter().any(|a| (a.2, a.3) == sb) {
            return Some(None);
        }
        let (_, block, members) = self.block()?;
        let normalizes = self.m.normalizes(at, sb)?;
        if let Some(i) = self.pushed.iter().position(|&v| v == var) {
            return Some(Some(Mode::Pushed(members + i as u32, normalizes)));
        }
        let offset = self.block_end + 4 * self.pushed.len() as u32;
        if offset + 4 > MAX_PUSH_CONSTANTS {
            // No room: a specialisation constant.
            if let Some(&(_, id)) = self.specs.iter().find(|s| s.0 == var) {
                return Some(Some(Mode::Spec(id, normalizes)));
            }
            let id = self.id();
            let spec_id = SAMPLER_SPEC_ID_BASE + self.specs.len() as u32;
            self.globals
                .extend(inst(OP_SPEC_CONSTANT, &[self.uint, id, 0]));
            self.decorations
                .extend(inst(OP_DECORATE, &[id, DECORATION_SPEC_ID, spec_id]));
            self.specs.push((var, id));
            return Some(Some(Mode::Spec(id, normalizes)));
        }
        let member = members + self.pushed.len() as u32;
        self.decorations.extend(inst(
            OP_MEMBER_DECORATE,
            &[block, member, DECORATION_OFFSET, offset],
        ));
        self.pushed.push(var);
        Some(Some(Mode::Pushed(member, normalizes)))
    }

    /// The push-constant block, made where the module has none.
    fn block(&mut self) -> Option<(u32, u32, u32)> {
        if self.block.is_none() {
            self.block = Some(match self.m.push_constants {
                Some((var, block)) => {
                    self.block_end = self.m.size_of(block)?.next_multiple_of(4);
                    (var, block, self.m.defs.get(&block)?.len() as u32 - 2)
                }
                None => {
                    let (var, block, ptr) = (self.id(), self.id(), self.id());
                    self.new_block = Some(ptr);
                    (var, block, 0)
                }
            });
        }
        self.block
    }

    /// Emits the code before one OpImageSampleExplicitLod that replaces its coordinate.
    fn sample(&mut self, at: usize, s: &[u32]) -> Option<()> {
        let (sampled_image, coord) = (s[3], s[4]);
        let Some(mode) = self.mode(at, sampled_image)? else {
            return Some(());
        };
        let (axes, arrayed) = self.m.spatial_axes(*self.m.type_of.get(&sampled_image)?)?;
        let ty = *self.m.type_of.get(&coord)?;
        let c = Coord {
            ty,
            id: coord,
            lanes: match self.m.defs.get(&ty)? {
                d if d[0] & 0xffff == OP_TYPE_FLOAT => 1,
                d if d[0] & 0xffff == OP_TYPE_VECTOR => d[3],
                _ => return None,
            },
            float: match self.m.defs.get(&ty)? {
                d if d[0] & 0xffff == OP_TYPE_VECTOR => d[2],
                _ => ty,
            },
        };
        if self.m.op_of(c.float) != Some(OP_TYPE_FLOAT) {
            return None;
        }
        let image = Image {
            sampled: sampled_image,
            ty: *self
                .m
                .defs
                .get(self.m.type_of.get(&sampled_image)?)?
                .get(2)?,
            axes,
            arrayed,
        };
        if self.m.defs.get(&c.float)?.get(2) != Some(&32) {
            return None;
        }
        if let Mode::Literal(mask, sb) = mode {
            // Nearest reads are snapped inside the image (or to CLAMP's border); linear ones with
            // unnormalized CLAMP_TO_EDGE clamped inside, for 1D and 2D images (clspv normalizes
            // a 3D image's coordinates itself).
            let nearest = mask & FILTER_LINEAR == 0;
            *self.inside.entry(sb).or_insert(true) &=
                nearest || (mask & MODE_BITS == CLAMP_TO_EDGE && axes < 3);
        }
        let out = match mode {
            Mode::Literal(mask, _) if mask & FILTER_LINEAR == 0 => {
                // clspv normalizes a 3D image's unnormalized coordinates itself (Vulkan's
                // unnormalized samplers take 1D and 2D images only), at texel centres for
                // nearest filtering, and sets the mask's bit.
                let n = mask & NORMALIZED != 0 || axes == 3;
                let a = match mask & MODE_BITS {
                    NORMALIZED_REPEAT => Addr::Repeat,
                    NORMALIZED_MIRRORED_REPEAT => Addr::Mirrored,
                    _ => Addr::Clamp(Bit::Known(mask & ADDRESS_BITS == CLAMP_TO_EDGE)),
                };
                self.snap(c, image, a, Bit::Known(n))?
            }
            Mode::Literal(mask, _) => {
                let wrapped = match mask & MODE_BITS {
                    NORMALIZED_REPEAT => self.repeat(c),
                    NORMALIZED_MIRRORED_REPEAT => self.mirrored_repeat(c),
                    CLAMP_TO_EDGE if axes < 3 => {
                        let inside = self.inside(c, image)?;
                        return self.finish(at, inside);
                    }
                    // Linear filtering without wrapping is left to Vulkan.
                    _ => return Some(()),
                };
                self.keep_layer(c, axes, wrapped)
            }
            Mode::Pushed(member, normalizes) => self.pushed(c, image, member, normalizes)?,
            Mode::Spec(mask, normalizes) => self.by_mask(c, image, mask, normalizes)?,
        };
        self.finish(at, out)
    }

    /// The code emitted for the read at `at`, whose new coordinate is `out`.
    fn finish(&mut self, at: usize, out: u32) -> Option<()> {
        let code = std::mem::take(&mut self.code);
        self.before.push((at, code, out));
        Some(())
    }

    /// The image's size (OpImageQuerySizeLod), declaring the ImageQuery capability. Queried
    /// once, right after the image's load, where the read's image is a load in its function
    /// (so that a loop of reads does not query the size each time: NVIDIA's compiler keeps a
    /// query inside the loop, and each takes the texture unit as a read does); else before the
    /// read.
    fn size(&mut self, image: Image) -> u32 {
        if !self.m.image_query && self.capabilities.is_empty() {
            self.capabilities
                .extend(inst(OP_CAPABILITY, &[CAPABILITY_IMAGE_QUERY]));
        }
        let dims = image.axes + image.arrayed as u32;
        let size_ty = match dims {
            1 => self.uint,
            d => self.global(OP_TYPE_VECTOR, &[self.uint, d]),
        };
        let zero = self.uint_constant(0);
        let loaded = self.m.sampled_image_images.get(&image.sampled).copied();
        let Some((load, at)) = loaded.and_then(|l| Some((l, *self.m.image_loads.get(&l)?))) else {
            let img = self.emit(OP_IMAGE, image.ty, &[image.sampled]);
            return self.emit(OP_IMAGE_QUERY_SIZE_LOD, size_ty, &[img, zero]);
        };
        if let Some(&size) = self.sizes.get(&load) {
            return size;
        }
        let size = self.id();
        self.after
            .entry(at)
            .or_default()
            .extend(inst(OP_IMAGE_QUERY_SIZE_LOD, &[size_ty, size, load, zero]));
        self.sizes.insert(load, size);
        size
    }

    /// Component `k` of the coordinate `c`.
    fn lane(&mut self, c: Coord, k: u32) -> u32 {
        match c.lanes {
            1 => c.id,
            _ => self.emit(OP_COMPOSITE_EXTRACT, c.float, &[c.id, k]),
        }
    }

    /// Axis `k` of an image's `size` (of `dims` components) as a value of type `float`.
    fn axis_size(&mut self, size: u32, dims: u32, k: u32, float: u32) -> u32 {
        let wk = match dims {
            1 => size,
            _ => self.emit(OP_COMPOSITE_EXTRACT, self.uint, &[size, k]),
        };
        self.emit(OP_CONVERT_U_TO_F, float, &[wk])
    }

    /// For linear filtering with unnormalized CLAMP_TO_EDGE addressing: the spatial coordinates
    /// clamped to `[0.5, w - 0.5]`, where CLAMP_TO_EDGE's texels and weights are those of the
    /// spec (below 0.5 both taps are the first texel, whatever the weights; at `w - 0.5` the
    /// second tap, outside, weighs exactly 0), so that any addressing mode reads the same: the
    /// runtime may then sample with CLAMP's (lavapipe filters 8-bit and narrower unorm formats in
    /// float only without CLAMP_TO_EDGE, docs/IMAGES.md).
    fn inside(&mut self, c: Coord, image: Image) -> Option<u32> {
        let size = self.size(image);
        let dims = image.axes + image.arrayed as u32;
        let half = self.global(OP_CONSTANT, &[c.float, 0.5f32.to_bits()]);
        let mut lanes = vec![];
        for k in 0..c.lanes {
            let x = self.lane(c, k);
            lanes.push(if k < image.axes {
                let w = self.axis_size(size, dims, k, c.float);
                let hi = self.emit(OP_FSUB, c.float, &[w, half]);
                let lo = self.emit(OP_EXT_INST, c.float, &[self.glsl, GLSL_FMAX, x, half]);
                self.emit(OP_EXT_INST, c.float, &[self.glsl, GLSL_FMIN, lo, hi])
            } else {
                x
            });
        }
        Some(match c.lanes {
            1 => lanes[0],
            _ => self.emit(OP_COMPOSITE_CONSTRUCT, c.ty, &lanes),
        })
    }

    /// `wrapped` in the spatial lanes, the layer of an array (the lanes after them) as `c`.
    fn keep_layer(&mut self, c: Coord, axes: u32, wrapped: u32) -> u32 {
        if c.lanes <= axes {
            return wrapped;
        }
        let lanes = (0..c.lanes).map(|i| if i < axes { i } else { c.lanes + i });
        let operands: Vec<u32> = [wrapped, c.id].into_iter().chain(lanes).collect();
        self.emit(OP_VECTOR_SHUFFLE, c.ty, &operands)
    }

    /// The coordinate of a sampler argument's read, by the mask pushed in `member`: the texel
    /// centre ([`Self::snap`]) for nearest filtering, else wrapped for REPEAT or
    /// MIRRORED_REPEAT with normalized coordinates, else as it was.
    fn pushed(&mut self, c: Coord, image: Image, member: u32, normalizes: bool) -> Option<u32> {
        let (var, ..) = self.block?;
        let ptr = self.global(OP_TYPE_POINTER, &[STORAGE_PUSH_CONSTANT, self.uint]);
        let index = self.uint_constant(member);
        let p = self.emit(OP_ACCESS_CHAIN, ptr, &[var, index]);
        let mask = self.emit(OP_LOAD, self.uint, &[p]);
        self.by_mask(c, image, mask, normalizes)
    }

    /// The coordinate of a sampler argument's read by its mask (the id of a uint), as
    /// [`Self::pushed`] says.
    fn by_mask(&mut self, c: Coord, image: Image, mask: u32, normalizes: bool) -> Option<u32> {
        let bool_ty = self.global(OP_TYPE_BOOL, &[]);
        let bits = |r: &mut Self, bits: u32, value: u32, op: u32| {
            let k = r.uint_constant(bits);
            let v = r.uint_constant(value);
            let and = r.emit(OP_BITWISE_AND, r.uint, &[mask, k]);
            r.emit(op, bool_ty, &[and, v])
        };
        let n = match normalizes || image.axes == 3 {
            true => Bit::Known(true),
            false => Bit::Runtime(bits(self, NORMALIZED, 0, OP_INOT_EQUAL)),
        };
        let repeat = bits(self, MODE_BITS, NORMALIZED_REPEAT, OP_IEQUAL);
        let mirrored = bits(self, MODE_BITS, NORMALIZED_MIRRORED_REPEAT, OP_IEQUAL);
        let edge = bits(self, ADDRESS_BITS, CLAMP_TO_EDGE, OP_IEQUAL);
        let nearest = bits(self, FILTER_LINEAR, 0, OP_IEQUAL);
        let snapped = self.snap(c, image, Addr::Runtime(repeat, mirrored, edge), n)?;
        let linear = self.either(c, mask)?;
        let mut linear = self.keep_layer(c, image.axes, linear);
        if !normalizes && image.axes < 3 {
            // Unnormalized CLAMP_TO_EDGE: inside the image (the runtime binds CLAMP's sampler).
            let unnormalized_edge = bits(self, MODE_BITS, CLAMP_TO_EDGE, OP_IEQUAL);
            let inside = self.inside(c, image)?;
            let cond = match c.lanes {
                1 => unnormalized_edge,
                lanes => {
                    let bvec = self.global(OP_TYPE_VECTOR, &[bool_ty, lanes]);
                    let v = vec![unnormalized_edge; lanes as usize];
                    self.emit(OP_COMPOSITE_CONSTRUCT, bvec, &v)
                }
            };
            linear = self.emit(OP_SELECT, c.ty, &[cond, inside, linear]);
        }
        let nearest = match c.lanes {
            1 => nearest,
            lanes => {
                let bvec = self.global(OP_TYPE_VECTOR, &[bool_ty, lanes]);
                self.emit(OP_COMPOSITE_CONSTRUCT, bvec, &vec![nearest; lanes as usize])
            }
        };
        Some(self.emit(OP_SELECT, c.ty, &[nearest, snapped, linear]))
    }

    /// For nearest filtering: the coordinate of the centre of the texel the OpenCL C
    /// specification's formulas select (section 8.2), so that a sampler that quantises
    /// coordinates (NVIDIA's, to 8 fractional bits) still reads that texel at texel edges.
    /// Per spatial axis of `w` texels, with `u` the coordinate in texels (`s * w` where the
    /// sampler is normalized, `n`):
    /// - REPEAT: `i = floor((s - floor(s)) * w)`, `i - w` where `i > w - 1`;
    /// - MIRRORED_REPEAT: `i = min(floor(fabs(s - 2 * rint(0.5 * s)) * w), w - 1)`;
    /// - CLAMP_TO_EDGE: `i = clamp(floor(u), 0, w - 1)` (inside the image, so that the runtime
    ///   may sample it with CLAMP's sampler);
    /// - the others: `i = clamp(floor(u), -1, w)` (-1 and `w` are outside the image: CLAMP's
    ///   border, as the hardware addresses it);
    ///
    /// then `(i + 0.5) / w` for a normalized sampler, `i + 0.5` otherwise. An array's layer
    /// becomes `rint(layer)` (the hardware clamps it).
    fn snap(&mut self, c: Coord, image: Image, addr: Addr, n: Bit) -> Option<u32> {
        let size = self.size(image);
        let dims = image.axes + image.arrayed as u32;
        let mut lanes = vec![];
        for k in 0..c.lanes {
            let x = self.lane(c, k);
            lanes.push(if k < image.axes {
                let w = self.axis_size(size, dims, k, c.float);
                self.snap_axis(c.float, x, w, addr, n)
            } else if image.arrayed && k == image.axes {
                self.emit(OP_EXT_INST, c.float, &[self.glsl, GLSL_ROUND_EVEN, x])
            } else {
                x
            });
        }
        Some(match c.lanes {
            1 => lanes[0],
            _ => self.emit(OP_COMPOSITE_CONSTRUCT, c.ty, &lanes),
        })
    }

    /// [`Self::snap`] along one axis: `x` the coordinate, `w` the size (floats of type `f`).
    fn snap_axis(&mut self, f: u32, x: u32, w: u32, addr: Addr, n: Bit) -> u32 {
        let edge = match addr {
            Addr::Clamp(edge) => edge,
            Addr::Runtime(_, _, edge) => Bit::Runtime(edge),
            _ => Bit::Known(false),
        };
        let k = |r: &mut Self, v: f32| r.global(OP_CONSTANT, &[f, v.to_bits()]);
        let (half, one, two, minus_one) = (k(self, 0.5), k(self, 1.0), k(self, 2.0), k(self, -1.0));
        let glsl = |r: &mut Self, op: u32, args: &[u32]| {
            r.emit(OP_EXT_INST, f, &[&[r.glsl, op], args].concat())
        };
        let repeat = |r: &mut Self| {
            let fl = glsl(r, GLSL_FLOOR, &[x]);
            let t = r.emit(OP_FSUB, f, &[x, fl]);
            let u = r.emit(OP_FMUL, f, &[t, w]);
            let i = glsl(r, GLSL_FLOOR, &[u]);
            let bool_ty = r.global(OP_TYPE_BOOL, &[]);
            let over = r.emit(OP_FORD_GREATER_THAN_EQUAL, bool_ty, &[i, w]);
            let back = r.emit(OP_FSUB, f, &[i, w]);
            r.emit(OP_SELECT, f, &[over, back, i])
        };
        let mirrored = |r: &mut Self| {
            let h = r.emit(OP_FMUL, f, &[x, half]);
            let rn = glsl(r, GLSL_ROUND_EVEN, &[h]);
            let t = r.emit(OP_FMUL, f, &[rn, two]);
            let d = r.emit(OP_FSUB, f, &[x, t]);
            let a = glsl(r, GLSL_FABS, &[d]);
            let u = r.emit(OP_FMUL, f, &[a, w]);
            let i = glsl(r, GLSL_FLOOR, &[u]);
            let last = r.emit(OP_FSUB, f, &[w, one]);
            glsl(r, GLSL_FMIN, &[i, last])
        };
        let clamp = |r: &mut Self| {
            let u = match n {
                Bit::Known(false) => x,
                Bit::Known(true) => r.emit(OP_FMUL, f, &[x, w]),
                Bit::Runtime(b) => {
                    let u = r.emit(OP_FMUL, f, &[x, w]);
                    r.emit(OP_SELECT, f, &[b, u, x])
                }
            };
            let i = glsl(r, GLSL_FLOOR, &[u]);
            let zero = k(r, 0.0);
            let last = r.emit(OP_FSUB, f, &[w, one]);
            let (min, max) = match edge {
                Bit::Known(true) => (zero, last),
                Bit::Known(false) => (minus_one, w),
                Bit::Runtime(b) => (
                    r.emit(OP_SELECT, f, &[b, zero, minus_one]),
                    r.emit(OP_SELECT, f, &[b, last, w]),
                ),
            };
            let lo = glsl(r, GLSL_FMAX, &[i, min]);
            glsl(r, GLSL_FMIN, &[lo, max])
        };
        let i = match addr {
            Addr::Repeat => repeat(self),
            Addr::Mirrored => mirrored(self),
            Addr::Clamp(_) => clamp(self),
            Addr::Runtime(is_repeat, is_mirrored, _) => {
                let (r, m, c) = (repeat(self), mirrored(self), clamp(self));
                let s = self.emit(OP_SELECT, f, &[is_mirrored, m, c]);
                self.emit(OP_SELECT, f, &[is_repeat, r, s])
            }
        };
        let centre = self.emit(OP_FADD, f, &[i, half]);
        match n {
            Bit::Known(false) => centre,
            Bit::Known(true) => self.emit(OP_FDIV, f, &[centre, w]),
            Bit::Runtime(b) => {
                let d = self.emit(OP_FDIV, f, &[centre, w]);
                self.emit(OP_SELECT, f, &[b, d, centre])
            }
        }
    }

    /// `s - floor(s)`.
    fn repeat(&mut self, c: Coord) -> u32 {
        let fl = self.emit(OP_EXT_INST, c.ty, &[self.glsl, GLSL_FLOOR, c.id]);
        self.emit(OP_FSUB, c.ty, &[c.id, fl])
    }

    /// `fabs(s - 2 * rint(0.5 * s))`.
    fn mirrored_repeat(&mut self, c: Coord) -> u32 {
        let half = self.global(OP_CONSTANT, &[c.float, 0.5f32.to_bits()]);
        let two = self.global(OP_CONSTANT, &[c.float, 2.0f32.to_bits()]);
        let scale = if c.lanes == 1 {
            OP_FMUL
        } else {
            OP_VECTOR_TIMES_SCALAR
        };
        let h = self.emit(scale, c.ty, &[c.id, half]);
        let rn = self.emit(OP_EXT_INST, c.ty, &[self.glsl, GLSL_ROUND_EVEN, h]);
        let t = self.emit(scale, c.ty, &[rn, two]);
        let d = self.emit(OP_FSUB, c.ty, &[c.id, t]);
        self.emit(OP_EXT_INST, c.ty, &[self.glsl, GLSL_FABS, d])
    }

    /// The coordinate a sampler argument's `mask` selects for linear filtering: wrapped for
    /// REPEAT or MIRRORED_REPEAT with normalized coordinates, else as it was.
    fn either(&mut self, c: Coord, mask: u32) -> Option<u32> {
        let bits = self.uint_constant(MODE_BITS);
        let mode = self.emit(OP_BITWISE_AND, self.uint, &[mask, bits]);
        let bool_ty = self.global(OP_TYPE_BOOL, &[]);
        let bvec = (c.lanes > 1).then(|| self.global(OP_TYPE_VECTOR, &[bool_ty, c.lanes]));
        let is = |r: &mut Self, v: u32| {
            let k = r.uint_constant(v);
            let b = r.emit(OP_IEQUAL, bool_ty, &[mode, k]);
            // Before SPIR-V 1.4 a vector OpSelect needs a vector condition.
            match bvec {
                Some(bvec) => r.emit(OP_COMPOSITE_CONSTRUCT, bvec, &vec![b; c.lanes as usize]),
                None => b,
            }
        };
        let is_repeat = is(self, NORMALIZED_REPEAT);
        let is_mirrored = is(self, NORMALIZED_MIRRORED_REPEAT);
        let repeated = self.repeat(c);
        let mirrored = self.mirrored_repeat(c);
        let s = self.emit(OP_SELECT, c.ty, &[is_mirrored, mirrored, c.id]);
        Some(self.emit(OP_SELECT, c.ty, &[is_repeat, repeated, s]))
    }

    /// The reflection asking for the masks of the sampler arguments given push constants: one
    /// SamplerMaskPushConstant per kernel argument bound to each such variable.
    fn reflect(&mut self) -> Option<()> {
        if self.pushed.is_empty() && self.specs.is_empty() {
            return Some(());
        }
        let set = self.id();
        let name = [&[set], string_words(SAMPLER_MASK_SET).as_slice()].concat();
        self.imports.extend(inst(OP_EXT_INST_IMPORT, &name));
        let void = self.m.void?;
        let size = self.uint_constant(4);
        for (i, var) in self.pushed.clone().into_iter().enumerate() {
            let sb = *self.m.set_binding.get(&var)?;
            let offset = self.uint_constant(self.block_end + 4 * i as u32);
            for a in self.m.sampler_args.iter().filter(|a| (a.2, a.3) == sb) {
                let id = self.id();
                let operands = [
                    void,
                    id,
                    set,
                    SAMPLER_MASK_PUSH_CONSTANT_INSIDE,
                    a.0,
                    a.1,
                    offset,
                    size,
                ];
                self.tail.extend(inst(OP_EXT_INST, &operands));
            }
        }
        for (i, (var, _)) in self.specs.clone().into_iter().enumerate() {
            let sb = *self.m.set_binding.get(&var)?;
            let spec_id = self.uint_constant(SAMPLER_SPEC_ID_BASE + i as u32);
            for a in self.m.sampler_args.iter().filter(|a| (a.2, a.3) == sb) {
                let id = self.id();
                let operands = [
                    void,
                    id,
                    set,
                    SAMPLER_MASK_SPEC_CONSTANT_INSIDE,
                    a.0,
                    a.1,
                    spec_id,
                ];
                self.tail.extend(inst(OP_EXT_INST, &operands));
            }
        }
        Some(())
    }

    /// Literal samplers all of whose reads now stay inside the image (or on CLAMP's border)
    /// become CLAMP samplers: the same texels and weights there, and lavapipe samples with
    /// CLAMP_TO_EDGE and REPEAT on an 8-bit path (docs/IMAGES.md).
    fn clamp_literals(&mut self) {
        let inside: Vec<(u32, u32)> = self
            .inside
            .iter()
            .filter(|(_, &inside)| inside)
            .map(|(&sb, _)| sb)
            .collect();
        for sb in inside {
            let (Some(&mask), Some(&at)) = (self.m.literals.get(&sb), self.m.literal_at.get(&sb))
            else {
                continue;
            };
            if matches!(mask & ADDRESS_BITS, 0 | CLAMP) {
                continue;
            }
            let k = self.uint_constant(mask & !ADDRESS_BITS | CLAMP);
            self.literal_masks.insert(at, k);
        }
    }

    /// A push-constant block of the new members, for a module that had none.
    fn make_block(&mut self) {
        let (Some((var, block, _)), Some(ptr)) = (self.block, self.new_block) else {
            return;
        };
        let members = vec![self.uint; self.pushed.len()];
        self.globals.extend(inst(
            OP_TYPE_STRUCT,
            &[[block].as_slice(), &members].concat(),
        ));
        self.globals
            .extend(inst(OP_TYPE_POINTER, &[ptr, STORAGE_PUSH_CONSTANT, block]));
        self.globals
            .extend(inst(OP_VARIABLE, &[ptr, var, STORAGE_PUSH_CONSTANT]));
        self.decorations
            .extend(inst(OP_DECORATE, &[block, DECORATION_BLOCK]));
    }

    /// The module with the new code; None where nothing changed.
    fn assemble(mut self, spirv: &[u32]) -> Option<Vec<u32>> {
        if self.before.is_empty() {
            return None;
        }
        self.make_block();
        // From SPIR-V 1.4 an entry point lists every global variable it uses.
        let new_var = self.new_block.and(self.block).map(|b| b.0);
        let listed = new_var.filter(|_| spirv[1] >= 0x0001_0400);
        let block = self.m.push_constants.map(|p| p.1);
        let mut out = spirv[..5].to_vec();
        out[3] = self.bound;
        out.extend(&self.capabilities);
        let mut before = self.before.iter().peekable();
        for (at, i) in instructions(spirv) {
            if at == self.m.first_function {
                out.extend(&self.globals);
            }
            match before.peek() {
                Some((read, code, coord)) if *read == at => {
                    out.extend(code);
                    out.extend(&i[..4]);
                    out.push(*coord);
                    out.extend(&i[5..]);
                    before.next();
                }
                _ if i[0] & 0xffff == OP_TYPE_STRUCT && Some(i[1]) == block => {
                    let members = self.pushed.len() as u32;
                    out.push(i[0] + (members << 16));
                    out.extend(&i[1..]);
                    out.extend((0..members).map(|_| self.uint));
                }
                _ if self.literal_masks.contains_key(&at) => {
                    out.extend(&i[..7]);
                    out.push(self.literal_masks[&at]);
                    out.extend(&i[8..]);
                }
                _ if self.m.entry_points.contains(&at) && listed.is_some() => {
                    out.push(i[0] + (1 << 16));
                    out.extend(&i[1..]);
                    out.extend(listed);
                }
                _ => out.extend(i),
            }
            if let Some(code) = self.after.get(&at) {
                out.extend(code);
            }
            if at == self.m.last_import {
                out.extend(&self.imports);
            }
            if at == self.m.last_decoration {
                out.extend(&self.decorations);
            }
        }
        out.extend(&self.tail);
        Some(out)
    }
}

/// A sampled read's image: the OpSampledImage, its image type, spatial axes, and whether it is
/// an array.
#[derive(Clone, Copy)]
struct Image {
    sampled: u32,
    ty: u32,
    axes: u32,
    arrayed: bool,
}

/// A condition known when compiling, or the id of a bool computed in the kernel.
#[derive(Clone, Copy)]
enum Bit {
    Known(bool),
    Runtime(u32),
}

/// The addressing formula of [`Rewriter::snap`]: one known (for the clamping ones, whether it
/// is CLAMP_TO_EDGE), or REPEAT, MIRRORED_REPEAT and CLAMP_TO_EDGE selected by three bools
/// (CLAMP's formula where none holds).
#[derive(Clone, Copy)]
enum Addr {
    Repeat,
    Mirrored,
    Clamp(Bit),
    Runtime(u32, u32, u32),
}

#[derive(Clone, Copy)]
struct Coord {
    ty: u32,
    id: u32,
    lanes: u32,
    float: u32,
}

#[cfg(test)]
mod tests {
    use super::super::reflection::{parse, ImageMetadataKind};
    use super::super::tests::{spirv_val, target};
    use super::super::{compile, options::clspv_args};
    use super::*;

    /// A 2D-array read through a sampler argument, a 1D kernel with two sampler arguments
    /// and a literal REPEAT sampler, and no push constants of its own.
    const SOURCE: &str = "
        constant sampler_t lit = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST;
        kernel void arr(read_only image2d_array_t img, sampler_t s, global const float4 *c,
                        global float4 *out) {
            size_t i = get_global_id(0);
            out[i] = read_imagef(img, s, c[i]);
        }
        kernel void two(read_only image1d_t img, sampler_t a, sampler_t b, global float4 *out) {
            *out = read_imagef(img, a, 0.5f) + read_imagef(img, b, -0.25f)
                 + read_imagef(img, lit, 0.1f);
        }";

    #[test]
    fn sampler_arguments_get_their_masks_and_the_module_stays_valid() {
        let args = clspv_args("", &target()).unwrap();
        let spirv = compile(&[SOURCE.as_bytes()], &args).unwrap().spirv;
        spirv_val(&spirv);
        let r = parse(&spirv).unwrap();
        let masks = |name: &str| -> Vec<(u32, u32)> {
            let k = r.kernels.iter().find(|k| k.name == name).unwrap();
            k.image_metadata
                .iter()
                .filter(|m| m.kind == ImageMetadataKind::SamplerMaskInside)
                .map(|m| (m.ordinal, m.push_constant.unwrap().offset))
                .collect()
        };
        let arr = masks("arr");
        let mut two = masks("two");
        two.sort();
        assert_eq!(arr.iter().map(|m| m.0).collect::<Vec<_>>(), [1]);
        assert_eq!(two.iter().map(|m| m.0).collect::<Vec<_>>(), [1, 2]);
        assert_ne!(two[0].1, two[1].1);
        for (_, offset) in arr.iter().chain(&two) {
            assert!(offset % 4 == 0 && offset + 4 <= r.push_constant_size);
        }
        // Floors and RoundEvens added to what clspv wrote. A sampler argument's read along
        // each spatial axis: 4 Floors and 1 RoundEven for the texel centre of nearest
        // filtering (REPEAT 2, MIRRORED_REPEAT 1 of each, the others 1 Floor), and once per
        // read 1 Floor and 1 RoundEven of the linear wrap; an array's layer 1 RoundEven. The
        // literal REPEAT nearest read: 2 Floors. `two`: 2 * 5 + 2 Floors, 2 * 2 RoundEvens;
        // `arr` (2 axes and a layer): 2 * 4 + 1 Floors, 2 + 1 + 1 RoundEvens.
        let (clspv, _) = super::super::compile_bytes(&[SOURCE.as_bytes()], &args).unwrap();
        let clspv = super::super::words(&clspv).unwrap();
        let glsl = |m: &[u32], n: u32| {
            let set = instructions(m)
                .find(|(_, i)| {
                    i[0] & 0xffff == OP_EXT_INST_IMPORT && literal_string(&i[2..]) == "GLSL.std.450"
                })
                .map(|(_, i)| i[1]);
            instructions(m)
                .filter(|(_, i)| {
                    i[0] & 0xffff == OP_EXT_INST && i.get(3) == set.as_ref() && i.get(4) == Some(&n)
                })
                .count()
        };
        let added = |n| glsl(&spirv, n) - glsl(&clspv, n);
        assert_eq!((added(GLSL_FLOOR), added(GLSL_ROUND_EVEN)), (21, 8));
    }

    /// Nearest reads of every sampler-readable image type, through a literal sampler and a
    /// sampler argument: each is given a texel centre computed from the image's size (one
    /// OpImageQuerySizeLod per read), an array's layer is rounded, the module stays valid
    /// (the ImageQuery capability declared); the literal linear read that does not wrap
    /// is left alone.
    #[test]
    fn literal_samplers_read_inside_the_image_become_clamp_samplers() {
        // Nearest (any addressing), linear with unnormalized CLAMP_TO_EDGE (2D), linear with
        // normalized CLAMP_TO_EDGE, and unnormalized CLAMP_TO_EDGE also read from a 3D image.
        let src = "constant sampler_t a = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST;\n\
             constant sampler_t b = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;\n\
             constant sampler_t c = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;\n\
             constant sampler_t d = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;\n\
             kernel void k(read_only image2d_t img, read_only image3d_t vol, global float4 *out) {\n\
             \x20   out[0] = read_imagef(img, a, (float2)(0.3f)) + read_imagef(img, b, (float2)(0.3f))\n\
             \x20          + read_imagef(img, c, (float2)(0.3f)) + read_imagef(img, d, (float2)(0.3f))\n\
             \x20          + read_imagef(vol, d, (float4)(0.3f));\n}\n";
        let args = clspv_args("", &target()).unwrap();
        let spirv = compile(&[src.as_bytes()], &args).unwrap().spirv;
        spirv_val(&spirv);
        let mut masks: Vec<u32> = parse(&spirv)
            .unwrap()
            .literal_samplers
            .iter()
            .map(|l| l.mask)
            .collect();
        masks.sort();
        // b and d are one literal sampler, read from the 2D image only: clspv reads the 3D
        // image through a normalized one, c's. a: REPEAT -> CLAMP; b, d: CLAMP_TO_EDGE -> CLAMP;
        // c unchanged (normalized linear filtering keeps its addressing).
        assert_eq!(masks, [0x1 | 0x4 | 0x10, 0x1 | 0x2 | 0x20, 0x4 | 0x20]);
    }

    #[test]
    fn nearest_reads_get_texel_centres() {
        let mut src = String::from(
            "constant sampler_t near = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;\n\
             constant sampler_t lin = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR;\n",
        );
        let types = [
            ("image1d_t", "c.x"),
            ("image1d_array_t", "c.xy"),
            ("image2d_t", "c.xy"),
            ("image2d_array_t", "c"),
            ("image3d_t", "c"),
        ];
        for (i, (t, c)) in types.iter().enumerate() {
            src += &format!(
                "kernel void k{i}(read_only {t} img, sampler_t s, global const float4 *cp,\n\
                 \x20                global float4 *out) {{\n\
                 \x20   float4 c = *cp;\n\
                 \x20   out[0] = read_imagef(img, near, {c}) + read_imagef(img, s, {c})\n\
                 \x20          + read_imagef(img, lin, {c});\n}}\n"
            );
        }
        let args = clspv_args("", &target()).unwrap();
        let spirv = compile(&[src.as_bytes()], &args).unwrap().spirv;
        spirv_val(&spirv);
        let count =
            |m: &[u32], op: u32| instructions(m).filter(|(_, i)| i[0] & 0xffff == op).count();
        let (clspv, _) = super::super::compile_bytes(&[src.as_bytes()], &args).unwrap();
        let clspv = super::super::words(&clspv).unwrap();
        // One query per kernel, after its image's load, shared by its reads (clspv queries
        // the 3D image's size for each of its three reads itself: it normalizes).
        assert_eq!(
            count(&spirv, OP_IMAGE_QUERY_SIZE_LOD) - count(&clspv, OP_IMAGE_QUERY_SIZE_LOD),
            5
        );
        assert_eq!(
            count(&spirv, OP_FDIV) - count(&clspv, OP_FDIV),
            2 * (1 + 1 + 2 + 2 + 3)
        );
        assert!(instructions(&spirv)
            .any(|(_, i)| i == [(2 << 16) | OP_CAPABILITY, CAPABILITY_IMAGE_QUERY]));
    }

    #[test]
    fn modules_without_sampled_reads_or_not_understood_are_unchanged() {
        let args = clspv_args("", &target()).unwrap();
        let plain = "kernel void f(global int *a) { a[get_global_id(0)] = 1; }";
        let spirv = compile(&[plain.as_bytes()], &args).unwrap().spirv;
        assert_eq!(wrap_repeat_coordinates(&spirv), spirv);
        let sampled = compile(&[SOURCE.as_bytes()], &args).unwrap().spirv;
        let cut = &sampled[..sampled.len() - 3];
        assert_eq!(wrap_repeat_coordinates(cut), cut);
    }
}
