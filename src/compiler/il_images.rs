//! Images and samplers in IL programs given their types back before clspv's passes.
//!
//! llvm-spirv-15 writes an image as a pointer to an opaque struct (`%opencl.image2d_ro_t
//! addrspace(1)*`) and a sampler as `%opencl.sampler_t addrspace(2)*`; clspv's LLVM reads
//! that bitcode with opaque pointers, where both are plain `ptr addrspace(1|2)`, while its own
//! front end and passes know images and samplers by their target types
//! (`target("spirv.Image", ...)`, `target("spirv.Sampler")`): every IL module that read,
//! wrote or queried an image crashed clspv (SIGSEGV; conformance spirv14_image_operand_*).
//! So such a module is first taken to LLVM IR text (`-output-format=ll`, before clspv's
//! passes), and the values that are images or samplers get their target types back:
//! - kernel parameters, by the kernel's `kernel_arg_type` and `kernel_arg_access_qual`
//!   metadata (image dimensionality and access, `sampler_t`);
//! - literal samplers, the results of `__translate_sampler_initializer`;
//! - the parameters of the functions they are passed to (built-ins and the module's own
//!   functions, whose parameters then carry them further), by position.
//!
//! Anything else stays as it is (an image kept in memory, selected or merged); a module
//! whose IR names no image or sampler is compiled as before.

use super::Compile;
use std::collections::HashMap;

const SAMPLER: &str = "target(\"spirv.Sampler\")";
const SAMPLER_INIT: &str = "@__translate_sampler_initializer(";

/// Whether the (bitcode) IR may use images or samplers: the names of the built-ins that take
/// them, in the bitcode's string table (type names are not kept byte-aligned there).
fn may_hold(ir: &[u8]) -> bool {
    [
        &b"ocl_image"[..],
        b"ocl_sampler",
        b"__translate_sampler_initializer",
    ]
    .iter()
    .any(|w| ir.windows(w.len()).any(|x| x == *w))
}

/// Compiles the IR `sources` with `options` through `compile`, by way of the retyped IR text
/// where images or samplers appear (see the module comment).
pub fn compile(
    sources: &[&[u8]],
    options: &str,
    compile: &Compile,
) -> Result<(Vec<u8>, String), super::CompileError> {
    if !sources.iter().any(|s| may_hold(s)) || options.contains("-output-format") {
        return compile(sources, options);
    }
    let Ok((ll, _)) = compile(sources, &format!("{options} -output-format=ll")) else {
        return compile(sources, options);
    };
    match retype(&String::from_utf8_lossy(&ll)) {
        Some(typed) => {
            super::dump_file("-images.ll", typed.as_bytes());
            compile(&[typed.as_bytes()], options)
        }
        None => compile(sources, options),
    }
}

/// The target type of an OpenCL image type name with an access qualifier (clang's, as
/// clspv's front end writes it: Dim, Depth, Arrayed, MS, Sampled, Format, Access).
fn image_type(name: &str, access: &str) -> Option<String> {
    let (dim, arrayed) = match name.trim_end_matches("_t") {
        "image1d" => (0, 0),
        "image1d_array" => (0, 1),
        "image1d_buffer" => (5, 0),
        "image2d" => (1, 0),
        "image2d_array" => (1, 1),
        "image3d" => (2, 0),
        _ => return None,
    };
    let access = match access {
        "write_only" => 1,
        "read_write" => 2,
        _ => 0,
    };
    Some(format!(
        "target(\"spirv.Image\", void, {dim}, 0, {arrayed}, 0, 0, 0, {access})"
    ))
}

/// The items of a metadata node line `!N = !{!"a", !"b"}`: (N, [a, b]).
fn string_node(line: &str) -> Option<(&str, Vec<&str>)> {
    let (id, rest) = line.split_once(" = !{")?;
    let items = rest.strip_suffix('}')?;
    let items = items
        .split(", ")
        .map(|i| i.strip_prefix("!\"")?.strip_suffix('"'))
        .collect::<Option<Vec<_>>>()?;
    Some((id.strip_prefix('!')?, items))
}

/// The items of the list whose `(` is at `open` in `line`, and the position of its `)`.
fn items(line: &str, open: usize) -> Option<(Vec<&str>, usize)> {
    let close = super::device_enqueue::closing(line, open)?;
    let list = super::wrapped_copy::split_args(&line[open + 1..close]);
    Some((list.into_iter().filter(|i| !i.is_empty()).collect(), close))
}

/// The value an argument or parameter names (its last word, `%x`), if any.
fn value_of(item: &str) -> Option<&str> {
    item.rsplit(' ').next().filter(|v| v.starts_with('%'))
}

/// `line` with the items of the list opening at `open` retyped where `ty` gives a type: each
/// becomes `TYPE VALUE` (the pointer's attributes dropped: they do not apply to the target
/// types), or `TYPE` alone in a declaration.
fn retype_items(
    line: &str,
    open: usize,
    ty: impl Fn(usize, &str) -> Option<String>,
) -> Option<String> {
    let (list, close) = items(line, open)?;
    let typed: Vec<String> = list
        .iter()
        .enumerate()
        .map(|(i, item)| match (ty(i, item), value_of(item)) {
            (Some(t), Some(v)) => format!("{t} {v}"),
            (Some(t), None) => t,
            (None, _) => item.to_string(),
        })
        .collect();
    Some(format!(
        "{}{}{}",
        &line[..=open],
        typed.join(", "),
        &line[close..]
    ))
}

/// The retyped IR (see the module comment), or `None` where nothing was retyped.
fn retype(ll: &str) -> Option<String> {
    let nodes: HashMap<&str, Vec<&str>> = ll.lines().filter_map(string_node).collect();
    let node = |line: &str, key: &str| -> Option<&Vec<&str>> {
        let at = line.find(key)? + key.len();
        let id = line[at..].strip_prefix('!')?;
        let id = id.split(|c: char| !c.is_ascii_alphanumeric()).next()?;
        nodes.get(id)
    };
    // Parameter types of functions, by name and position, found at their calls; the passes
    // are repeated until the module's own functions pass on no new ones.
    let mut params: HashMap<String, HashMap<usize, String>> = HashMap::new();
    for _ in 0..8 {
        let before = params.values().map(HashMap::len).sum::<usize>();
        let (out, changed) = retype_pass(ll, &node, &mut params);
        if params.values().map(HashMap::len).sum::<usize>() == before {
            return changed.then_some(out);
        }
    }
    None
}

/// One pass over `ll`: the text retyped with what `params` knows, and whether anything was.
fn retype_pass<'a>(
    ll: &str,
    node: &dyn Fn(&str, &str) -> Option<&'a Vec<&'a str>>,
    params: &mut HashMap<String, HashMap<usize, String>>,
) -> (String, bool) {
    let mut out = String::with_capacity(ll.len() + 1024);
    let mut values: HashMap<String, String> = HashMap::new(); // the function's: value -> type
    let mut changed = false;
    for original in ll.lines() {
        let mut line = original.to_string();
        let head = line.starts_with("define ") || line.starts_with("declare ");
        let callee = line.find(" @").and_then(|at| {
            let open = at + line[at..].find('(')?;
            Some((line[at + 2..open].to_string(), open))
        });
        if let (true, Some((name, open))) = (head, &callee) {
            values.clear();
            let kernel = line.contains("spir_kernel");
            let types = node(&line, "!kernel_arg_type ").filter(|_| kernel);
            let access = node(&line, "!kernel_arg_access_qual ");
            let known = params.get(name);
            let ty = |i: usize, item: &str| -> Option<String> {
                let by_metadata = types.and_then(|t| match t.get(i)? {
                    &"sampler_t" => Some(SAMPLER.to_string()),
                    n => image_type(n, access.and_then(|a| a.get(i)).unwrap_or(&"")),
                });
                let ty = by_metadata.or_else(|| known?.get(&i).cloned())?;
                item.trim_start().starts_with("ptr").then_some(ty)
            };
            let list = items(&line, *open).map(|l| l.0).unwrap_or_default();
            for (i, item) in list.iter().enumerate() {
                if let (Some(t), Some(v)) = (ty(i, item), value_of(item)) {
                    values.insert(v.to_string(), t);
                }
            }
            let typed = retype_items(&line, *open, &ty).unwrap_or_else(|| line.clone());
            line = typed.replacen(
                "ptr addrspace(2) @__translate",
                "target(\"spirv.Sampler\") @__translate",
                1,
            );
        } else if let Some((name, open)) = callee.filter(|_| line.contains("call ")) {
            if line.contains(SAMPLER_INIT) {
                line = line.replacen("ptr addrspace(2)", SAMPLER, 1);
                if let Some((v, _)) = line.trim_start().split_once(" = ") {
                    values.insert(v.to_string(), SAMPLER.to_string());
                }
            }
            let list = items(&line, open).map(|l| l.0).unwrap_or_default();
            for (i, item) in list.iter().enumerate() {
                if let Some(t) = value_of(item).and_then(|v| values.get(v)) {
                    params.entry(name.clone()).or_default().insert(i, t.clone());
                }
            }
            let ty = |_: usize, item: &str| values.get(value_of(item)?).cloned();
            line = retype_items(&line, open, ty).unwrap_or(line);
        }
        changed |= line != original;
        out.push_str(&line);
        out.push('\n');
    }
    (out, changed)
}

#[cfg(test)]
mod tests {
    /// llvm-spirv-15's kernel reading an image through a sampler argument, as clspv's LLVM
    /// reads it.
    const KERNEL: &str = r#"define spir_kernel void @k(ptr addrspace(1) %0, ptr addrspace(1) nocapture readonly %1, ptr addrspace(2) %2) #0 !kernel_arg_addr_space !5 !kernel_arg_access_qual !6 !kernel_arg_type !7 !kernel_arg_type_qual !8 !kernel_arg_base_type !7 {
  %s = call ptr addrspace(2) @__translate_sampler_initializer(i32 16)
  %4 = call spir_func <4 x i32> @_Z11read_imagei14ocl_image2d_ro11ocl_samplerDv2_i(ptr addrspace(1) %1, ptr addrspace(2) %2, <2 x i32> zeroinitializer) #0
  %5 = call spir_func i32 @helper(ptr addrspace(1) %1, ptr addrspace(2) %s)
  ret void
}

define spir_func i32 @helper(ptr addrspace(1) %i, ptr addrspace(2) %t) {
  %w = call spir_func i32 @_Z15get_image_width14ocl_image2d_ro(ptr addrspace(1) %i)
  ret i32 %w
}

declare spir_func <4 x i32> @_Z11read_imagei14ocl_image2d_ro11ocl_samplerDv2_i(ptr addrspace(1), ptr addrspace(2), <2 x i32>) #0
declare spir_func i32 @_Z15get_image_width14ocl_image2d_ro(ptr addrspace(1))
declare ptr addrspace(2) @__translate_sampler_initializer(i32)

!6 = !{!"none", !"read_only", !"none"}
!7 = !{!"int4*", !"image2d_t", !"sampler_t"}
"#;

    #[test]
    fn images_and_samplers_get_their_target_types() {
        let out = super::retype(KERNEL).expect("retyped");
        let image = r#"target("spirv.Image", void, 1, 0, 0, 0, 0, 0, 0)"#;
        let sampler = r#"target("spirv.Sampler")"#;
        for want in [
            format!("@k(ptr addrspace(1) %0, {image} %1, {sampler} %2)"),
            format!("%s = call {sampler} @__translate_sampler_initializer(i32 16)"),
            format!("Dv2_i({image} %1, {sampler} %2, <2 x i32> zeroinitializer)"),
            format!("@helper({image} %1, {sampler} %s)"),
            format!("@helper({image} %i, {sampler} %t)"),
            format!("ocl_image2d_ro({image} %i)"),
            format!("Dv2_i({image}, {sampler}, <2 x i32>)"),
            format!("ocl_image2d_ro({image})"),
            format!("declare {sampler} @__translate_sampler_initializer(i32)"),
        ] {
            assert!(out.contains(&want), "{want}\n{out}");
        }
    }
}
