//! Programs whose 3D images are read through sampler arguments with different result kinds
//! (read_imagef in one place, read_imagei or read_imageui in another), which clspv 0.0.1
//! crashes on (SIGSEGV in `SPIRVProducerPass`).
//!
//! The cause: for a read of a 3D image through a sampler that is not a literal, clspv's
//! `SetImageMetadataPass` turns unnormalized coordinates into normalized ones (Vulkan has no
//! unnormalized 3D sampling), dividing by the image's size from a call of
//! `_Z13get_image_dim11ocl_image3d` that it declares with `getOrInsertFunction`, typed by the
//! first image it meets. clspv's image types carry the sampled type (float, int, uint), so the
//! call for an image of another kind gets the existing declaration with a mismatched type;
//! `getCalledFunction()` of such a call is null and `SPIRVProducerPass` dereferences it. Two
//! kernels of one program, or two images of one kernel, suffice; 2D array images and literal
//! samplers take other paths and never crash.
//!
//! The rewrite: after such a crash, each integer read of a 3D image parameter
//! (`read_imagei(img, ...)` → `as_int4(read_imagef(img, ...))`, and `read_imageui` with
//! `as_uint4`) is made a float read in the source, so that every 3D image clspv sees is
//! float, and the program is compiled again; [`retype`] then gives each kernel parameter read
//! so (in the kernel, or in the functions it gives the parameter to) its integer image type
//! back in the SPIR-V (a variable of its own for that kernel, the reads typed as integers and
//! bitcast to the float vectors the code expects: the same bits). Where this cannot place a
//! read (a function read as integers that a macro calls or that is given something else than
//! a parameter, one parameter read as both int and uint) the program fails as before.

use super::pipes::{Kind, Token};
use super::source_edit::{code_tokens, splice, Edit};
use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, Dim, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// A kernel parameter whose integer reads were made float reads: its image type goes back to
/// signed (`read_imagei`) or unsigned (`read_imageui`) integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retype {
    pub kernel: String,
    pub ordinal: u32,
    pub signed: bool,
}

/// A function definition: its name, whether it is a kernel, its 3D image parameters (name →
/// ordinal) and its body's tokens (indices, braces excluded).
struct Function<'t> {
    name: &'t str,
    kernel: bool,
    images: HashMap<&'t str, u32>,
    body: std::ops::Range<usize>,
}

/// `text` with the integer reads of its kernels' 3D image parameters made float reads, and
/// the parameters to retype; `None` where there is nothing to do or a read cannot be placed.
/// A read in a function that is not a kernel counts for the kernels that give it their
/// parameter (through calls with the parameter's name as the argument).
pub fn rewrite(text: &str) -> Option<(String, Vec<Retype>)> {
    let (toks, directives) = code_tokens(text);
    let s = |t: &Token| &text[t.start..t.end];
    let punct = |i: usize, c: u8| toks.get(i).is_some_and(|t| t.kind == Kind::Punct(c));
    // The index of the token closing the bracket opened at `open`.
    let close = |open: usize, o: u8, c: u8| {
        let mut depth = 0usize;
        for (i, t) in toks.iter().enumerate().skip(open) {
            if t.kind == Kind::Punct(o) {
                depth += 1;
            } else if t.kind == Kind::Punct(c) {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
        None
    };
    // The top-level comma-separated parts of the bracket opened at `open` (token ranges).
    let parts = |open: usize, end: usize| {
        let mut out = vec![];
        let mut from = open + 1;
        let mut nest = 0usize;
        for (k, t) in toks.iter().enumerate().take(end + 1).skip(open + 1) {
            match t.kind {
                Kind::Punct(b'(') | Kind::Punct(b'[') | Kind::Punct(b'{') => nest += 1,
                Kind::Punct(b')') | Kind::Punct(b']') | Kind::Punct(b'}') if nest > 0 => nest -= 1,
                Kind::Punct(b',') | Kind::Punct(b')') if nest == 0 => {
                    out.push(from..k);
                    from = k + 1;
                }
                _ => {}
            }
        }
        out
    };
    let mut functions: Vec<Function> = vec![];
    let mut depth = 0usize;
    // Where the current declaration started (after the last `;` or `}` at file scope).
    let mut decl_start = 0;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        match t.kind {
            Kind::Punct(b'{') => depth += 1,
            Kind::Punct(b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    decl_start = i + 1;
                }
            }
            Kind::Punct(b';') if depth == 0 => decl_start = i + 1,
            _ => {}
        }
        // A function definition at file scope: NAME ( params ) [attributes] { body }.
        let definition =
            depth == 0 && t.kind == Kind::Ident && s(&t) != "__attribute__" && punct(i + 1, b'(');
        if !definition {
            i += 1;
            continue;
        }
        let params_end = close(i + 1, b'(', b')')?;
        let mut body = params_end + 1;
        while toks.get(body).is_some_and(|t| s(t) == "__attribute__") {
            body = close(body + 1, b'(', b')')? + 1;
        }
        if !punct(body, b'{') {
            i = params_end + 1;
            continue;
        }
        let body_end = close(body, b'{', b'}')?;
        let mut images = HashMap::new();
        for (ordinal, p) in parts(i + 1, params_end).into_iter().enumerate() {
            let p = &toks[p];
            // (Read-write images are storage images, never sampled: clspv types them apart.)
            let read_write = p
                .iter()
                .any(|t| matches!(s(t), "read_write" | "__read_write"));
            if p.iter().any(|t| s(t) == "image3d_t") && !read_write {
                let last = p.iter().rev().find(|t| t.kind == Kind::Ident)?;
                images.insert(s(last), ordinal as u32);
            }
        }
        functions.push(Function {
            name: s(&t),
            kernel: toks[decl_start..i]
                .iter()
                .any(|t| matches!(s(t), "kernel" | "__kernel")),
            images,
            body: body + 1..body_end,
        });
        i = body_end + 1;
        depth = 0;
        decl_start = i;
    }
    let by_name: HashMap<&str, usize> = functions
        .iter()
        .enumerate()
        .map(|(n, f)| (f.name, n))
        .collect();
    // The integer kind of each (function, ordinal) read as integers; the reads to edit (the
    // function, the name's token, the call's closing parenthesis, signed); calls passing a 3D image
    // parameter on: (caller, its ordinal, callee, the callee's ordinal).
    let mut kinds: HashMap<(usize, u32), bool> = HashMap::new();
    let mut reads = vec![];
    let mut passes = vec![];
    let mut called: HashSet<usize> = HashSet::new();
    for (n, f) in functions.iter().enumerate() {
        for j in f.body.clone() {
            if toks[j].kind != Kind::Ident || !punct(j + 1, b'(') {
                continue;
            }
            let call_end = close(j + 1, b'(', b')')?;
            let args = parts(j + 1, call_end);
            let signed = match s(&toks[j]) {
                "read_imagei" => true,
                "read_imageui" => false,
                name => {
                    let Some(&g) = by_name.get(name) else {
                        continue;
                    };
                    called.insert(g);
                    for (k, a) in args.iter().enumerate() {
                        let ordinal = match &toks[a.clone()] {
                            [t] => f.images.get(s(t)),
                            _ => None,
                        };
                        passes.push((n, ordinal.copied(), g, k as u32));
                    }
                    continue;
                }
            };
            let ordinal = match args.first().map(|a| &toks[a.clone()]) {
                Some([t]) => f.images.get(s(t)),
                _ => None,
            };
            let Some(&ordinal) = ordinal else {
                continue;
            };
            if *kinds.entry((n, ordinal)).or_insert(signed) != signed {
                return None;
            }
            reads.push((n, j, call_end, signed));
        }
    }
    // Kinds flow from callees to the parameters their callers give them, until none changes.
    loop {
        let mut changed = false;
        for &(f, ordinal, g, k) in &passes {
            let Some(&signed) = kinds.get(&(g, k)) else {
                continue;
            };
            // Something else than a 3D image parameter given to one read as integers.
            let ordinal = ordinal?;
            match kinds.insert((f, ordinal), signed) {
                Some(had) if had != signed => return None,
                Some(_) => {}
                None => changed = true,
            }
        }
        if !changed {
            break;
        }
    }
    // A function read as integers that a directive names (a macro calling it): its callers
    // are not all known.
    for &(f, _) in kinds.keys() {
        let name = functions[f].name;
        let in_directive = directives.iter().any(|&(a, b)| {
            text[a..b]
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == name)
        });
        if in_directive {
            return None;
        }
    }
    let mut retypes: Vec<Retype> = kinds
        .iter()
        .filter(|((f, _), _)| functions[*f].kernel)
        .map(|(&(f, ordinal), &signed)| Retype {
            kernel: functions[f].name.to_string(),
            ordinal,
            signed,
        })
        .collect();
    if retypes.is_empty() {
        return None;
    }
    retypes.sort_by(|a, b| (&a.kernel, a.ordinal).cmp(&(&b.kernel, b.ordinal)));
    let mut edits = vec![];
    // (Functions no kernel calls keep their reads: nothing of them reaches clspv's pass.)
    let reached = |f: usize| functions[f].kernel || called.contains(&f);
    for (_, j, call_end, signed) in reads.into_iter().filter(|r| reached(r.0)) {
        let cast = if signed { "as_int4" } else { "as_uint4" };
        edits.push(Edit {
            start: toks[j].start,
            end: toks[j].end,
            text: format!("{cast}(read_imagef"),
        });
        edits.push(Edit {
            start: toks[call_end].start,
            end: toks[call_end].end,
            text: "))".into(),
        });
    }
    edits.sort_by_key(|e| e.start);
    Some((splice(text, &edits), retypes))
}

const OP_EXT_INST: u32 = 12;
/// clspv's reflection instructions: Kernel(function, name, ...) and
/// ArgumentSampledImage(kernel, ordinal, set, binding, ...).
const REFLECTION_KERNEL: u32 = 1;
const REFLECTION_ARGUMENT_SAMPLED_IMAGE: u32 = 8;

/// `spirv` with each parameter of `retypes` given its integer image type back; `None` where
/// anything is not understood.
pub fn retype(spirv: &[u32], retypes: &[Retype]) -> Option<Vec<u32>> {
    let (mut m, end) = super::spirv::load_functions(spirv)?;
    let mut next_id = m.header.as_ref()?.bound;
    let reflection = m
        .ext_inst_imports
        .iter()
        .find(|i| {
            matches!(i.operands.first(), Some(Operand::LiteralString(n))
                if n.starts_with("NonSemantic.ClspvReflection"))
        })?
        .result_id?;
    let constants: HashMap<Word, u32> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Constant)
        .filter_map(|i| match i.operands.as_slice() {
            [Operand::LiteralBit32(v)] => Some((i.result_id?, *v)),
            _ => None,
        })
        .collect();
    // Reflection: kernel declaration → function; (function, ordinal) → (set, binding).
    let mut kernels: HashMap<Word, Word> = HashMap::new();
    let mut bindings: HashMap<(Word, u32), (u32, u32)> = HashMap::new();
    for (_, inst) in super::spirv::instructions(&spirv[end - 5..]) {
        if inst[0] & 0xffff != OP_EXT_INST || inst.get(3) != Some(&reflection) {
            continue;
        }
        match inst.get(4) {
            Some(&REFLECTION_KERNEL) => {
                kernels.insert(inst[2], *inst.get(5)?);
            }
            Some(&REFLECTION_ARGUMENT_SAMPLED_IMAGE) => {
                let f = *kernels.get(inst.get(5)?)?;
                let value = |k: usize| constants.get(inst.get(k)?).copied();
                bindings.insert((f, value(6)?), (value(7)?, value(8)?));
            }
            _ => {}
        }
    }
    let entries: HashMap<String, Word> = m
        .entry_points
        .iter()
        .filter_map(|e| match e.operands.as_slice() {
            [_, Operand::IdRef(f), Operand::LiteralString(name), ..] => Some((name.clone(), *f)),
            _ => None,
        })
        .collect();
    // Calls: function → callees; and which entry points reach each function.
    let index: HashMap<Word, usize> = m
        .functions
        .iter()
        .enumerate()
        .filter_map(|(n, f)| Some((f.def.as_ref()?.result_id?, n)))
        .collect();
    let callees = |f: Word| -> Vec<Word> {
        m.functions[index[&f]]
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter(|i| i.class.opcode == Op::FunctionCall)
            .filter_map(|i| match i.operands.first() {
                Some(Operand::IdRef(c)) => Some(*c),
                _ => None,
            })
            .collect()
    };
    let reach = |root: Word| -> HashSet<Word> {
        let mut seen = HashSet::from([root]);
        let mut work = vec![root];
        while let Some(f) = work.pop() {
            for c in callees(f) {
                if index.contains_key(&c) && seen.insert(c) {
                    work.push(c);
                }
            }
        }
        seen
    };
    let reached: HashMap<Word, HashSet<Word>> = entries.values().map(|&f| (f, reach(f))).collect();
    let mut fresh = || {
        next_id += 1;
        next_id - 1
    };
    for r in retypes {
        let f = *entries.get(&r.kernel)?;
        let (set, binding) = *bindings.get(&(f, r.ordinal))?;
        let fns = &reached[&f];
        let decorated = |var: Word, d: Decoration, v: u32| {
            m.annotations.iter().any(|a| {
                a.class.opcode == Op::Decorate
                    && a.operands.first() == Some(&Operand::IdRef(var))
                    && a.operands.get(1) == Some(&Operand::Decoration(d))
                    && a.operands.get(2) == Some(&Operand::LiteralBit32(v))
            })
        };
        // The variable the kernel loads the image from.
        let loaded: HashSet<Word> = fns
            .iter()
            .flat_map(|g| m.functions[index[g]].blocks.iter())
            .flat_map(|b| &b.instructions)
            .filter(|i| i.class.opcode == Op::Load)
            .filter_map(|i| match i.operands.first() {
                Some(Operand::IdRef(p)) => Some(*p),
                _ => None,
            })
            .collect();
        let var = m
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::Variable)
            .filter_map(|i| i.result_id)
            .find(|&v| {
                loaded.contains(&v)
                    && decorated(v, Decoration::DescriptorSet, set)
                    && decorated(v, Decoration::Binding, binding)
            })?;
        // No function of this kernel that loads it may belong to another kernel.
        let shared = |g: &Word| reached.iter().any(|(e, fs)| *e != f && fs.contains(g));
        let loads_var = |g: &Word| {
            m.functions[index[g]]
                .blocks
                .iter()
                .flat_map(|b| &b.instructions)
                .any(|i| {
                    i.class.opcode == Op::Load && i.operands.first() == Some(&Operand::IdRef(var))
                })
        };
        if fns.iter().any(|g| loads_var(g) && shared(g)) {
            return None;
        }
        let def = |id: Word| {
            m.types_global_values
                .iter()
                .find(|i| i.result_id == Some(id))
                .cloned()
        };
        let var_def = def(var)?;
        let pointer = def(var_def.result_type?)?;
        let image = match pointer.operands.as_slice() {
            [Operand::StorageClass(StorageClass::UniformConstant), Operand::IdRef(t)] => def(*t)?,
            _ => return None,
        };
        if image.class.opcode != Op::TypeImage
            || image.operands.get(1) != Some(&Operand::Dim(Dim::Dim3D))
        {
            return None;
        }
        // The types: found where the module has them (SPIR-V allows one of each), else made.
        let mut ty = |op: Op, operands: Vec<Operand>, m: &mut rspirv::dr::Module| -> Word {
            if let Some(id) = m
                .types_global_values
                .iter()
                .find(|i| i.class.opcode == op && i.operands == operands)
                .and_then(|i| i.result_id)
            {
                return id;
            }
            let id = fresh();
            m.types_global_values
                .push(Instruction::new(op, None, Some(id), operands));
            id
        };
        let int = ty(
            Op::TypeInt,
            vec![
                Operand::LiteralBit32(32),
                Operand::LiteralBit32(r.signed as u32),
            ],
            &mut m,
        );
        let int4 = ty(
            Op::TypeVector,
            vec![Operand::IdRef(int), Operand::LiteralBit32(4)],
            &mut m,
        );
        let mut image_operands = image.operands.clone();
        image_operands[0] = Operand::IdRef(int);
        let int_image = ty(Op::TypeImage, image_operands, &mut m);
        let int_pointer = ty(
            Op::TypePointer,
            vec![
                Operand::StorageClass(StorageClass::UniformConstant),
                Operand::IdRef(int_image),
            ],
            &mut m,
        );
        let int_sampled = ty(
            Op::TypeSampledImage,
            vec![Operand::IdRef(int_image)],
            &mut m,
        );
        let copy = fresh();
        m.types_global_values.push(Instruction::new(
            Op::Variable,
            Some(int_pointer),
            Some(copy),
            vec![Operand::StorageClass(StorageClass::UniformConstant)],
        ));
        let decorations: Vec<Instruction> = m
            .annotations
            .iter()
            .filter(|a| {
                a.class.opcode == Op::Decorate && a.operands.first() == Some(&Operand::IdRef(var))
            })
            .map(|a| {
                let mut a = a.clone();
                a.operands[0] = Operand::IdRef(copy);
                a
            })
            .collect();
        m.annotations.extend(decorations);
        let entry = m
            .entry_points
            .iter_mut()
            .find(|e| e.operands.get(1) == Some(&Operand::IdRef(f)))?;
        entry.operands.push(Operand::IdRef(copy));
        for g in fns {
            let func = &mut m.functions[index[g]];
            // The loaded images and the sampled images made of them.
            let mut images: HashSet<Word> = HashSet::new();
            for b in &mut func.blocks {
                let mut out = Vec::with_capacity(b.instructions.len());
                for mut i in std::mem::take(&mut b.instructions) {
                    let uses: Vec<Word> = i
                        .operands
                        .iter()
                        .filter_map(|o| match o {
                            Operand::IdRef(id) if images.contains(id) => Some(*id),
                            _ => None,
                        })
                        .collect();
                    match i.class.opcode {
                        Op::Load if i.operands.first() == Some(&Operand::IdRef(var)) => {
                            i.operands[0] = Operand::IdRef(copy);
                            i.result_type = Some(int_image);
                            images.insert(i.result_id?);
                        }
                        _ if uses.is_empty() => {}
                        Op::SampledImage
                            if i.operands.first() == Some(&Operand::IdRef(uses[0])) =>
                        {
                            i.result_type = Some(int_sampled);
                            images.insert(i.result_id?);
                        }
                        Op::ImageSampleExplicitLod
                        | Op::ImageSampleImplicitLod
                        | Op::ImageFetch
                        | Op::ImageRead
                        | Op::ImageGather
                            if uses.len() == 1
                                && i.operands.first() == Some(&Operand::IdRef(uses[0])) =>
                        {
                            // The read as integers, bitcast to the type the code expects.
                            let float = i.result_type?;
                            let result = i.result_id?;
                            let read = fresh();
                            i.result_type = Some(int4);
                            i.result_id = Some(read);
                            out.push(i);
                            i = Instruction::new(
                                Op::Bitcast,
                                Some(float),
                                Some(result),
                                vec![Operand::IdRef(read)],
                            );
                        }
                        Op::ImageQuerySizeLod
                        | Op::ImageQuerySize
                        | Op::ImageQueryLevels
                        | Op::ImageQuerySamples => {}
                        _ => return None,
                    }
                    out.push(i);
                }
                b.instructions = out;
            }
        }
    }
    m.header.as_mut()?.bound = next_id;
    let mut out = m.assemble();
    out.extend_from_slice(&spirv[end..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::options::clspv_args;
    use super::super::spirv::instructions;
    use super::super::tests::{spirv_val, target};
    use super::super::{compile, compile_bytes, CompileError};
    use super::*;

    /// Two kernels reading 3D images with different result kinds through sampler arguments,
    /// and one kernel reading two 3D images with two kinds (and one samplerless): each alone
    /// or together, what clspv 0.0.1 crashes on.
    const SOURCE: &str = "
        kernel void f(read_only image3d_t img, sampler_t s, global const float4 *c,
                      global float4 *out) {
            out[get_global_id(0)] = read_imagef(img, s, c[get_global_id(0)]);
        }
        kernel __attribute__((reqd_work_group_size(1, 1, 1)))
        void i(read_only image3d_t img, sampler_t s, global const float4 *c, global int4 *out) {
            out[get_global_id(0)] = read_imagei(img, s, c[get_global_id(0)]);
        }
        kernel void two(global const float4 *c, read_only image3d_t a, read_only image3d_t b,
                        sampler_t s, global float4 *fout, global uint4 *uout) {
            size_t i = get_global_id(0);
            fout[i] = read_imagef(a, s, c[i]);
            uout[i] = read_imageui(b, s, c[i]) + read_imageui(b, (int4)(0));
        }
        int4 texel(read_only image3d_t v, sampler_t s, float4 c) { return read_imagei(v, s, c); }
        kernel void h(read_only image3d_t img, sampler_t s, global int4 *out) {
            *out = texel(img, s, (float4)(1.0f));
        }";

    #[test]
    fn integer_reads_of_kernel_3d_images_become_float_reads() {
        let (text, retypes) = rewrite(SOURCE).unwrap();
        let retype = |kernel: &str, ordinal, signed| Retype {
            kernel: kernel.into(),
            ordinal,
            signed,
        };
        let want = [
            retype("h", 0, true),
            retype("i", 0, true),
            retype("two", 2, false),
        ];
        assert_eq!(retypes, want);
        assert!(text.contains("= as_int4(read_imagef(img, s, c[get_global_id(0)]));"));
        assert!(text.contains(
            "uout[i] = as_uint4(read_imagef(b, s, c[i])) + as_uint4(read_imagef(b, (int4)(0)));"
        ));
        assert_eq!(text.lines().count(), SOURCE.lines().count());
        // Nothing to do: float reads only, 2D images.
        let plain = "kernel void k(read_only image3d_t a, read_only image2d_t b, sampler_t s,
                                   global int4 *o) { *o = read_imagei(b, s, (float2)(0)); }";
        assert_eq!(rewrite(plain), None);
        // Reads in helpers count for the kernels' parameters they are given (through two
        // calls here); a helper no kernel calls keeps its reads.
        let helper = "
            int4 h(sampler_t s, read_only image3d_t v) { return read_imagei(v, s, (float4)(0)); }
            int4 g(read_only image3d_t u, sampler_t s) { return h(s, u); }
            uint4 unused(read_only image3d_t a, sampler_t s) { return read_imageui(a, s, (float4)(0)); }
            kernel void k(global int4 *o, read_only image3d_t a, sampler_t s) {
                *o = g(a, s) + read_imagei(a, s, (float4)(1));
            }";
        let (text, retypes) = rewrite(helper).unwrap();
        assert_eq!(retypes, [retype("k", 1, true)]);
        assert_eq!(text.matches("as_int4(read_imagef(").count(), 2);
        assert!(text.contains("return read_imageui(a, s, (float4)(0));"));
        // A helper a macro calls, something else than a parameter given to a helper that
        // reads as integers, a parameter read as int and uint: not placed.
        let macro_call = format!("#define G(a, s) h(s, a)\n{helper}");
        assert_eq!(rewrite(&macro_call), None);
        let other = "
            int4 h(read_only image3d_t v, sampler_t s) { return read_imagei(v, s, (float4)(0)); }
            #define IMG a
            kernel void k(read_only image3d_t a, sampler_t s, global int4 *o) { *o = h(IMG, s); }";
        assert_eq!(rewrite(other), None);
        let rw = "kernel void k(read_write image3d_t a, global int4 *o) { *o = read_imagei(a, (int4)(0)); }";
        assert_eq!(rewrite(rw), None);
        let both = "kernel void k(read_only image3d_t a, sampler_t s, global int4 *o) {
                        *o = read_imagei(a, s, (float4)(0)) + as_int4(read_imageui(a, s, (float4)(0)));
                    }";
        assert_eq!(rewrite(both), None);
    }

    /// The image type (sampled type id, signedness) of the variable at `binding` that entry
    /// point `entry` lists.
    fn image_kind(spirv: &[u32], entry: &str, binding: u32) -> (&'static str, u32) {
        let insts: Vec<&[u32]> = instructions(spirv).map(|(_, i)| i).collect();
        let def = |id: u32| {
            *insts
                .iter()
                .find(|i| {
                    let op = i[0] & 0xffff;
                    (op == 59 && i[2] == id) || ((19..=39).contains(&op) && i[1] == id)
                })
                .unwrap()
        };
        let listed: Vec<u32> = insts
            .iter()
            .find(|i| {
                i[0] & 0xffff == 15 && super::super::spirv::entry_point_name(i).unwrap().0 == entry
            })
            .map(|i| {
                let (_, at) = super::super::spirv::entry_point_name(i).unwrap();
                i[at..].to_vec()
            })
            .unwrap();
        let bound = |v: u32| {
            insts
                .iter()
                .any(|i| i[0] & 0xffff == 71 && i[1] == v && i[2] == 33 && i[3] == binding)
        };
        let loaded = |v: u32| insts.iter().any(|i| i[0] & 0xffff == 61 && i[3] == v);
        // The entry point lists every variable: the one of this kernel is the one it loads
        // (the last listed of those at the binding, a retyped copy being appended).
        let var = *listed
            .iter()
            .rfind(|&&v| def(v)[0] & 0xffff == 59 && bound(v) && loaded(v))
            .unwrap();
        let image = def(def(def(var)[1])[3]);
        assert_eq!(image[0] & 0xffff, 25, "an image");
        assert_eq!(image[3], 2, "3D");
        let sampled = def(image[2]);
        match sampled[0] & 0xffff {
            22 => ("float", 0),
            21 => ("int", sampled[3]),
            op => panic!("sampled type {op}"),
        }
    }

    #[test]
    fn programs_clspv_crashes_on_build_with_their_image_types() {
        for options in ["", "-cl-std=CL3.0"] {
            let args = clspv_args(options, &target()).unwrap();
            // What clspv does with the source as it is.
            match compile_bytes(&[SOURCE.as_bytes()], &args) {
                Err(CompileError::Failed { log }) => assert!(log.contains(super::super::CRASHED)),
                other => panic!("clspv 0.0.1 crashes on this program: {other:?}"),
            }
            let spirv = compile(&[SOURCE.as_bytes()], &args).unwrap().spirv;
            spirv_val(&spirv);
            assert_eq!(image_kind(&spirv, "f", 0), ("float", 0));
            assert_eq!(image_kind(&spirv, "i", 0), ("int", 1));
            assert_eq!(image_kind(&spirv, "two", 1), ("float", 0));
            assert_eq!(image_kind(&spirv, "two", 2), ("int", 0));
            assert_eq!(image_kind(&spirv, "h", 0), ("int", 1));
            // Each kernel's own module too.
            for k in ["f", "i", "two", "h"] {
                spirv_val(&super::super::kernel_module(&spirv, k).unwrap_or(spirv.clone()));
            }
        }
    }
}
