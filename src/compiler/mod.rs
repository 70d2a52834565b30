//! OpenCL C → Vulkan SPIR-V through clspv, run in the `vkcl-clspv` helper process.
//!
//! - [`compile`]: sources + clspv arguments → SPIR-V and log (serialised, crash-proof);
//! - [`options`]: the application's build options → clspv arguments for a device;
//! - [`reflection`]: clspv's `NonSemantic.ClspvReflection` instructions → kernel interfaces;
//! - [`pipes`]: OpenCL C 2.0 pipes lowered in the source before clspv sees it.

pub mod aliased;
mod async_copies;
pub mod atomics;
pub mod binary;
pub mod bool_masks;
pub mod byval;
mod capabilities;
pub mod chosen_load;
pub mod coalesce;
pub mod coherent;
pub mod collectives;
pub mod device_enqueue;
mod flat_copies;
mod flat_layout;
mod flat_records;
mod flat_uses;
pub mod generic_flat;
pub mod generic_spaces;
pub mod globals;
pub mod helper;
mod identifiers;
pub mod il;
mod il_images;
mod il_math;
pub mod local_args;
mod long_vector_globals;
pub mod loop_checks;
pub mod member_index;
pub mod member_offset;
mod multiply_adds;
pub mod null_checks;
pub mod null_tests;
pub mod odd_widths;
pub mod options;
pub mod packed_private;
mod padded_locals;
pub mod physical;
pub mod pipes;
mod pointer_compares;
pub mod pointer_members;
mod pointer_selects;
mod prelude_math;
mod private_offsets;
pub mod pystubs;
pub mod reflection;
pub mod repeated_loads;
pub mod returned_load;
pub mod sampled_3d;
pub mod sampler_wrap;
pub mod scalar_composites;
pub mod source_edit;
pub mod spirv;
mod store_vectors;
pub mod struct_extracts;
pub mod subgroups;
pub mod sum_index;
pub mod tempdir;
#[cfg(test)]
mod tests;
mod unnormalized;
pub mod vload_half;
pub mod volatile_pointers;
pub mod wide_switches;
pub mod word_views;
mod workgroup_arrays;
mod workgroup_words;
pub mod wrapped_copy;

use std::path::{Path, PathBuf};

/// A successful compilation.
#[derive(Debug, Clone)]
pub struct CompileOutput {
    /// The module, as SPIR-V words.
    pub spirv: Vec<u32>,
    /// clspv's log (warnings); may be empty.
    pub log: String,
}

/// Why a compilation produced no module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// The source or options are bad, or clspv crashed on them: CL_BUILD_PROGRAM_FAILURE with
    /// this build log.
    Failed { log: String },
    /// No usable compiler: CL_COMPILER_NOT_AVAILABLE. The text names what was searched or tried.
    Unavailable(String),
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::Failed { log } => write!(f, "build failed:\n{log}"),
            CompileError::Unavailable(why) => write!(f, "compiler not available: {why}"),
        }
    }
}

/// Compiles OpenCL C `sources` (one program) with `clspv_args` (from [`options::clspv_args`]).
///
/// One compile at a time per process (clspv is not thread-safe, and there is one helper). The
/// helper is started on first use, kept for later builds, and restarted after it dies; a crash
/// during this compile is `Failed` with a log saying how it died.
pub fn compile(sources: &[&[u8]], clspv_args: &[String]) -> Result<CompileOutput, CompileError> {
    let (bytes, log) = match compile_bytes(sources, clspv_args) {
        // clspv's crash on 3D images read with several result kinds (sampled_3d).
        Err(CompileError::Failed { log }) if log.contains(CRASHED) => {
            match compile_sampled_3d(sources, clspv_args) {
                Some(built) => built,
                None => return Err(CompileError::Failed { log }),
            }
        }
        result => result?,
    };
    match words(&bytes) {
        Some(spirv) => {
            let spirv = odd_widths::widen(&spirv);
            let spirv = wide_switches::narrow(&spirv);
            let spirv = member_index::repair(&spirv).unwrap_or(spirv);
            let spirv = private_offsets::repair(&spirv);
            let spirv = scalar_composites::repair(&spirv).unwrap_or(spirv);
            let spirv = bool_masks::repair(&spirv).unwrap_or(spirv);
            let spirv = struct_extracts::repair(&spirv).unwrap_or(spirv);
            let spirv = workgroup_arrays::flatten(&spirv).unwrap_or(spirv);
            let spirv = pointer_selects::to_indices(&spirv).unwrap_or(spirv);
            let spirv = workgroup_words::flatten(&spirv).unwrap_or(spirv);
            let spirv = capabilities::add_int64_atomics(&spirv);
            let spirv = sampler_wrap::wrap_repeat_coordinates(&spirv);
            let spirv = unnormalized::round_up(&spirv);
            let spirv = match globals::gather(&spirv) {
                Ok(spirv) => spirv,
                Err(why) => {
                    return Err(CompileError::Failed {
                        log: format!("{log}\n{why}"),
                    })
                }
            };
            let spirv = null_checks::fold(&spirv);
            let spirv = coherent::decorate(&spirv);
            // A 64-bit build is made only for devices with 64-bit integers (`Target::pointers64`).
            let int64 = clspv_args.iter().any(|a| a == "-arch=spir64");
            let spirv = store_vectors::merge(&spirv, int64);
            let spirv = multiply_adds::distribute(&spirv);
            Ok(CompileOutput {
                spirv: spirv::mark_read_only_buffers(&spirv),
                log,
            })
        }
        None => Err(CompileError::Failed {
            log: format!("{log}\nclspv produced no valid SPIR-V"),
        }),
    }
}

/// Compiles an IL program's `bitcode` (llvm-spirv's) with `clspv_args`: the math built-ins it
/// calls through vkcl's own, as a source program's are ([`il_math`]).
pub fn compile_il(bitcode: &[u8], clspv_args: &[String]) -> Result<CompileOutput, CompileError> {
    il_math::compile(bitcode, clspv_args).unwrap_or_else(|| compile(&[bitcode], clspv_args))
}

/// What the helper's log says when clspv crashed (`helper::Client::died`).
const CRASHED: &str = "clspv crashed";

/// `sources` compiled again with the integer reads of their kernels' 3D image parameters made
/// float reads, and those parameters given their integer image types back in the SPIR-V
/// ([`sampled_3d`]); `None` where that does not apply or does not build.
fn compile_sampled_3d(sources: &[&[u8]], clspv_args: &[String]) -> Option<(Vec<u8>, String)> {
    if clspv_args.windows(2).any(|w| w[0] == "-x" && w[1] == "ir") {
        return None;
    }
    let mut rewritten = vec![];
    let mut retypes = vec![];
    for s in sources {
        let text = std::str::from_utf8(s).ok()?;
        match sampled_3d::rewrite(text) {
            Some((text, r)) => {
                rewritten.push(text.into_bytes());
                retypes.extend(r);
            }
            None => rewritten.push(s.to_vec()),
        }
    }
    if retypes.is_empty() {
        return None;
    }
    let slices: Vec<&[u8]> = rewritten.iter().map(Vec::as_slice).collect();
    let (bytes, log) = compile_bytes(&slices, clspv_args).ok()?;
    let spirv = sampled_3d::retype(&words(&bytes)?, &retypes)?;
    log::debug!(target: "compiler", "built again with 3D image reads retyped: {retypes:?}");
    Some((spirv.iter().flat_map(|w| w.to_le_bytes()).collect(), log))
}

/// The module a kernel's pipeline is made from: `spirv` without the program's other kernels
/// ([`spirv::entry_point_only`]), and without `VariablePointers` where only those kernels
/// needed it. NVIDIA's driver (580.159.04, H200) crashed (SIGSEGV) making the pipeline of a
/// kernel whose module declared the capability for another kernel's select between a
/// program-scope variable and an argument buffer (docs/GPU.md). None: `spirv` as it is.
pub fn kernel_module(spirv: &[u32], entry: &str) -> Option<Vec<u32>> {
    let own = spirv::entry_point_only(spirv, entry)?;
    Some(pointer_selects::to_indices(&own).unwrap_or(own))
}

/// Compiles `sources` to an LLVM bitcode object (clCompileProgram): `-output-format=bc`.
/// Objects are linked by giving their bitcode back to [`compile`] with `-x ir`.
pub fn compile_object(
    sources: &[&[u8]],
    clspv_args: &[String],
) -> Result<(Vec<u8>, String), CompileError> {
    let mut args = clspv_args.to_vec();
    args.push("-output-format=bc".into());
    let (bytes, log) = compile_bytes(sources, &args)?;
    if !bytes.starts_with(b"BC\xc0\xde") {
        return Err(CompileError::Failed {
            log: format!("{log}\nclspv produced no LLVM bitcode"),
        });
    }
    Ok((bytes, log))
}

fn compile_bytes(
    sources: &[&[u8]],
    clspv_args: &[String],
) -> Result<(Vec<u8>, String), CompileError> {
    if let Some(bad) = clspv_args.iter().find(|a| a.contains('\0')) {
        return Err(CompileError::Failed {
            log: format!("invalid compiler argument {bad:?}"),
        });
    }
    let is_ir = clspv_args.windows(2).any(|w| w[0] == "-x" && w[1] == "ir");
    let with_rewrite = clspv_args.iter().any(|a| a == PACKED_REWRITE);
    let clspv_args = &without_needless_packed_rewrite(clspv_args, sources, is_ir);
    let rewrite_dropped = with_rewrite && !clspv_args.iter().any(|a| a == PACKED_REWRITE);
    // -U is ours (clspv exits on it): it becomes an #undef in the prelude.
    let undefs: Vec<&str> = clspv_args
        .iter()
        .filter_map(|a| a.strip_prefix("-U"))
        .collect();
    let mut clspv_args: Vec<String> = clspv_args
        .iter()
        .filter(|a| !a.starts_with("-U"))
        .cloned()
        .collect();
    // A `__local` pointer passed to a function: every function inlined first (local_args).
    const INLINE: &str = "-inline-entry-points";
    if !is_ir
        && !clspv_args.iter().any(|a| a == INLINE)
        && local_args::passes_local_pointer(sources)
    {
        clspv_args.push(INLINE.into());
    }
    clspv_args.extend(loop_checks::ARGS.iter().map(|a| a.to_string()));
    let clspv_args = &clspv_args;
    // clspv takes one string and splits it itself, honouring quotes.
    let options: Vec<String> = clspv_args.iter().map(|a| options::quote(a)).collect();
    let options = options.join(" ");
    // Pipes exist from OpenCL C 2.0 on (before, their built-ins' names are ordinary
    // identifiers); LLVM IR inputs were lowered when they were compiled. The cache sees the
    // lowered sources.
    let lower_pipes = clspv_args
        .iter()
        .any(|a| a == "-cl-std=CL2.0" || a == "-cl-std=CL3.0")
        && !is_ir;
    let lowered: Vec<_> = match lower_pipes {
        // The work-group collectives' scratch array in each kernel (compiler::collectives).
        true => sources
            .iter()
            .map(|s| collectives::declare_scratch(pipes::lower_bytes(s)))
            .collect(),
        false => sources
            .iter()
            .map(|&s| std::borrow::Cow::Borrowed(s))
            .collect(),
    };
    let lowered: Vec<_> = match is_ir {
        true => lowered,
        false => lowered
            .into_iter()
            .map(chosen_load::rewrite)
            .map(returned_load::rewrite)
            .map(packed_private::rewrite)
            .map(member_offset::rewrite)
            .map(sum_index::rewrite)
            .collect(),
    };
    let lowered = word_views::rewrite_all(lowered, is_ir);
    let with_prelude: Vec<Vec<u8>>;
    // The prelude's lines, counted once (computed again from the sources with the prelude
    // in them, it would have the parts its own text names).
    let mut prelude_lines = 0;
    let sources: Vec<&[u8]> = if is_ir {
        lowered.iter().map(|s| s.as_ref()).collect()
    } else {
        let p = prelude(&undefs, sources, clspv_args);
        prelude_lines = p.matches('\n').count();
        with_prelude = lowered.iter().map(|s| [p.as_bytes(), s].concat()).collect();
        with_prelude.iter().map(Vec::as_slice).collect()
    };
    let sources = sources.as_slice();
    log::trace!(target: "compiler", "clspv {}", clspv_args.join(" "));
    let cache = crate::cache::get().zip(cache_key(sources, clspv_args, &options));
    if let Some((cache, key)) = &cache {
        let entry = cache.load("clspv", key).and_then(|e| {
            let mut parts = helper::read_frame(&mut e.as_slice()).ok()?;
            let log = String::from_utf8(parts.pop()?).ok()?;
            Some((parts.pop()?, log))
        });
        if let Some(hit) = entry {
            log::debug!(target: "cache", "clspv output {key} from the disk cache");
            return Ok(hit);
        }
    }
    // Record copies clspv never finishes are rewritten in the IR first (wrapped_copy).
    // Generic pointers whose space is chosen at run time are refused there too
    // (generic_spaces), in 2.0/3.0 programs that may hold generic pointers.
    let generic = lower_pipes && lowered.iter().any(|s| generic_spaces::may_choose(s));
    // Device-side enqueue: compiled by clang first (device_enqueue).
    let enqueue = lower_pipes && lowered.iter().any(|s| device_enqueue::uses(s, clspv_args));
    let build = |s: &[&[u8]], o: &str| match (is_ir, enqueue) {
        (true, _) => il_images::compile(s, o, &compile_in_helper),
        (false, true) => device_enqueue::compile(s, o, &compile_in_helper),
        (false, false) => wrapped_copy::compile(s, o, generic, &compile_in_helper),
    };
    // OpenCL C 3.0 program-scope variables: built again in clang's 2.0 mode, reading as 3.0;
    // at once for sources that declare them (`globals::declares_writable_globals`): their 3.0
    // build stands refused without running.
    let early = !is_ir
        && !enqueue
        && lowered
            .iter()
            .any(|s| globals::declares_writable_globals(s))
        && globals::as_opencl_c_2_0(&options, globals::REFUSED[0]).is_some();
    let mut result = match early {
        true => Err(CompileError::Failed {
            log: globals::REFUSED[0].to_string(),
        }),
        false => build(sources, &options),
    };
    let (plain_sources, plain_options, plain_lines) = (sources, options.clone(), prelude_lines);
    let mut options = options;
    let as_2_0: Vec<Vec<u8>>;
    let as_2_0_slices: Vec<&[u8]>;
    let mut sources = sources;
    if let (false, Err(CompileError::Failed { log })) = (is_ir, &result) {
        if let Some((o, lines)) = globals::as_opencl_c_2_0(&options, log) {
            as_2_0 = sources
                .iter()
                .map(|s| [lines.as_bytes(), s].concat())
                .collect();
            as_2_0_slices = as_2_0.iter().map(Vec::as_slice).collect();
            result = build(&as_2_0_slices, &o);
            options = o;
            prelude_lines += lines.matches('\n').count();
            sources = &as_2_0_slices;
        }
    }
    // A 2.0 build chosen early that failed: the 3.0 build decides, unless it refuses the
    // program-scope variables too (then the 2.0 build's log is the one to give).
    if early && result.is_err() {
        let plain = build(plain_sources, &plain_options);
        if !matches!(&plain, Err(CompileError::Failed { log }) if globals::REFUSED.iter().any(|r| log.contains(r)))
        {
            result = plain;
            options = plain_options;
            sources = plain_sources;
            prelude_lines = plain_lines;
        }
    }
    let shift = |log: String| match is_ir {
        true => log,
        false => shift_source_lines(&log, prelude_lines),
    };
    // clspv's front end refuses by-value arguments of some types holding unions (pyopencl's
    // complex numbers; `byval`) and, without the rewrite, pointers to them: the program is
    // built again with the by-value parameters of each refused type passed through stand-ins,
    // and with the rewrite where the refused parameter is a pointer (or one `byval` cannot
    // find: from a macro).
    let mut wrapped: Vec<String> = vec![];
    let mut retried: Vec<Vec<u8>>;
    let mut current: Vec<&[u8]> = sources.to_vec();
    for _ in 0..MAX_REFUSALS {
        let Err(CompileError::Failed { log }) = &result else {
            break;
        };
        if !log.contains(byval::REFUSED) {
            break;
        }
        let refused = match (is_ir, current.as_slice()) {
            (false, [src]) => std::str::from_utf8(src)
                .ok()
                .and_then(|src| byval::refused_type(src, log)),
            _ => None,
        };
        match refused {
            Some(ty) if !wrapped.contains(&ty) => {
                wrapped.push(ty);
                let text = String::from_utf8_lossy(sources[0]);
                retried = vec![byval::wrap(&text, &wrapped).into_bytes()];
                current = retried.iter().map(Vec::as_slice).collect();
            }
            _ if rewrite_dropped && !options.ends_with(PACKED_REWRITE) => {
                options = format!("{options} {PACKED_REWRITE}");
            }
            _ => break,
        }
        result = build(&current, &options);
    }
    let (output, log) = match result {
        Ok((output, log)) => (output, shift(log)),
        Err(CompileError::Failed { log }) => {
            let mut log = shift(log);
            let pointers = !is_ir
                && lowered
                    .iter()
                    .any(|s| globals::declares_pointer_variables(s));
            if pointers && log.contains("clspv crashed") {
                log = format!("{log}\n{}", globals::POINTER_VARIABLES);
            }
            return Err(CompileError::Failed { log });
        }
        Err(e) => return Err(e),
    };
    if let Some((cache, key)) = &cache {
        let mut entry = vec![];
        if helper::write_frame(&mut entry, &[&output, log.as_bytes()]).is_ok() {
            cache.store("clspv", key, &entry);
        }
    }
    Ok((output, log))
}

/// The lines put before every OpenCL C source. clspv's diagnostics name physical lines (they
/// ignore `#line`), so the log's line numbers are shifted back (`shift_source_lines`).
///
/// - `__OPENCL_VERSION__` is the device's OpenCL version (OpenCL C 3.0 §6.12: "an integer
///   reflecting the version number of the OpenCL supported by the OpenCL device"), 300 on
///   every vkcl device, whatever -cl-std says; clang defines it as the language version.
///   A -D would be a redefinition (a warning, an error under -Werror) and comes before
///   clspv's own definition; an #undef in the source does neither.
/// - the application's -U names (clspv has no -U).
/// - vkcl's own math built-ins the program may name: whole identifiers of the sources, their
///   headers and the -D bodies (`identifiers`).
pub(crate) fn prelude(undefs: &[&str], sources: &[&[u8]], clspv_args: &[String]) -> String {
    let mut p = String::from(
        "#pragma clang diagnostic push\n\
         #pragma clang diagnostic ignored \"-Wreserved-macro-identifier\"\n\
         #pragma clang diagnostic ignored \"-Wunused-macros\"\n\
         #pragma clang diagnostic ignored \"-Wunused-function\"\n\
         #pragma clang diagnostic ignored \"-Wreserved-identifier\"\n\
         #pragma clang diagnostic ignored \"-Wfloat-equal\"\n\
         #pragma clang diagnostic ignored \"-Weverything\"\n\
         #undef __OPENCL_VERSION__\n\
         #define __OPENCL_VERSION__ 300\n",
    );
    let names = |n: &[u8]| sources.iter().any(|s| s.windows(n.len()).any(|w| w == n));
    // Whole identifiers, of the headers (pyopencl's complex numbers) and the -D bodies too.
    let ids = identifiers::Identifiers::of(sources, clspv_args);
    let may_name = |n: &[u8]| ids.has(n);
    p += &scalarised_builtins(&may_name);
    p += DOUBLE_CONVERSIONS;
    p += &prelude_math::math_prelude(may_name);
    if may_name(b"sinh") || may_name(b"copysign") {
        p += &double_sinh_copysign();
    }
    if may_name(b"async_work_group_copy") || may_name(b"async_work_group_strided_copy") {
        p += &async_copies::prelude();
    }
    if names(b"vstore") {
        p += &vstore_half_wrappers();
    }
    if names(b"vload") {
        p += &vload_half::prelude();
    }
    // The sub-group library uses get_sub_group_size().
    let sub_groups = sources.iter().any(|s| subgroups::names_any(s));
    if sub_groups || names(b"get_num_sub_groups") {
        p += SUB_GROUP_SIZES;
    }
    if sub_groups {
        p += &subgroups::prelude(names);
    }
    // Loads and stores first: the atomic_flag functions store through them.
    if sources.iter().any(|s| atomics::accesses(s)) {
        p += atomics::ACCESS_PRELUDE;
    }
    if sources.iter().any(|s| atomics::names_any(s)) {
        p += atomics::PRELUDE;
    }
    if sources.iter().any(|s| collectives::names_any(s)) {
        p += &collectives::prelude();
    }
    if names(b"printf") {
        p += PRINTF_RESULT;
    }
    for name in undefs.iter().chain(NOT_OFFERED) {
        p += &format!("#undef {name}\n");
    }
    p += "#pragma clang diagnostic pop\n";
    if clspv_args.iter().any(|a| a == "-Werror") {
        p += WERROR_WARNINGS;
    }
    p
}

/// Extension macros clspv's front end defines that no vkcl device reports in
/// CL_DEVICE_EXTENSIONS (cles_khr_int64 is the embedded profile's; cl_khr_subgroups needs
/// independent forward progress, `Device::extensions`): a macro is defined exactly where the
/// extension is supported (the extension specification; the conformance suite's
/// compiler_defines_for_extensions compares the two under each -cl-std).
const NOT_OFFERED: &[&str] = &[
    "cles_khr_int64",
    "cl_khr_depth_images",
    "cl_khr_gl_msaa_sharing",
    "cl_khr_integer_dot_product",
    "cl_khr_mipmap_image",
    "cl_khr_mipmap_image_writes",
    "cl_khr_srgb_image_writes",
    "cl_khr_subgroup_rotate",
    "cl_khr_subgroups",
];

/// After the prelude under -Werror: clspv's front end enables every warning clang has
/// (`-Weverything`), so that `-Werror` failed kernels on warnings no compiler gives by default
/// (an implicit float-to-int conversion in the conformance suite's options test). The
/// application's source gets, as errors, `-Wall` (an unused variable: piglit's
/// warnings-as-errors test) and the warnings clang gives without options that matter in
/// OpenCL C (an unknown extension's pragma, conversions between incompatible types, constant
/// overflows); no others. (`error`, not `warning`: a pragma's `warning` is exempt from
/// -Werror.)
const WERROR_WARNINGS: &str = "#pragma clang diagnostic ignored \"-Weverything\"\n\
     #pragma clang diagnostic error \"-Wall\"\n\
     #pragma clang diagnostic error \"-Wignored-pragmas\"\n\
     #pragma clang diagnostic error \"-Wint-conversion\"\n\
     #pragma clang diagnostic error \"-Wincompatible-pointer-types\"\n\
     #pragma clang diagnostic error \"-Wincompatible-pointer-types-discards-qualifiers\"\n\
     #pragma clang diagnostic error \"-Wreturn-type\"\n\
     #pragma clang diagnostic error \"-Wconstant-conversion\"\n\
     #pragma clang diagnostic error \"-Wshift-count-overflow\"\n\
     #pragma clang diagnostic error \"-Wshift-count-negative\"\n\
     #pragma clang diagnostic error \"-Wdivision-by-zero\"\n\
     #pragma clang diagnostic error \"-Warray-bounds\"\n";

/// The sub-group sizes as OpenCL C defines them. clspv 0.0.1 returns 1 from
/// `get_max_sub_group_size()` and Vulkan's SubgroupSize (the full size, also for a partial
/// last sub-group) from `get_sub_group_size()`, and lavapipe's NumSubgroups leaves out a
/// partial last sub-group. Sub-groups are consecutive runs of the linear local id (what
/// clGetKernelSubGroupInfo reports), so the sizes follow from the full size and the local size.
/// Only in programs that name one of them (the built-ins exist only where the device has
/// sub-groups; clspv declares them from OpenCL C 1.2 on, not in 1.0 and 1.1, where CLBlast's
/// kernels name them in code they leave out).
const SUB_GROUP_SIZES: &str = "#if __OPENCL_C_VERSION__ >= 120\n\
     #define __VKCL_FN static inline\n\
     __VKCL_FN uint __vkcl_local_linear_size(void) {\n\
       return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2)); }\n\
     __VKCL_FN uint __vkcl_max_sub_group_size(void) { return get_sub_group_size(); }\n\
     __VKCL_FN uint __vkcl_num_sub_groups(void) {\n\
       uint m = get_sub_group_size(); return (__vkcl_local_linear_size() + m - 1u) / m; }\n\
     __VKCL_FN uint __vkcl_sub_group_size(void) {\n\
       uint m = get_sub_group_size();\n\
       return min(m, __vkcl_local_linear_size() - get_sub_group_id() * m); }\n\
     #undef __VKCL_FN\n\
     #define get_max_sub_group_size() __vkcl_max_sub_group_size()\n\
     #define get_num_sub_groups() __vkcl_num_sub_groups()\n\
     #define get_sub_group_size() __vkcl_sub_group_size()\n#endif\n";

/// The components of a 16-element vector, as .sN suffixes.
const C: [&str; 16] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f",
];

/// `__VKCL_FN`: an overloadable helper, static inline (OpenCL C 1.0 and 1.1 have no `static`:
/// an inline definition there, always inlined). Each user #undefs it after its helpers.
const OVERLOADABLE_FN: &str = "#if __OPENCL_C_VERSION__ >= 120\n\
     #define __VKCL_FN static inline __attribute__((overloadable))\n#else\n\
     #define __VKCL_FN inline __attribute__((overloadable, always_inline))\n#endif\n";

/// Vector `fdim`, `maxmag`, `minmag` and `fract` crash clspv 0.0.1 (SIGSEGV lowering
/// llvm.maxnum/minimumnum of vectors); their scalar forms compile right. These overloads do
/// the vector forms one component at a time, and macros send the built-ins' names to them.
/// Only for the built-ins the program may name (`may_name`): the whole set, some 90 overloads,
/// doubled the front end's time on every small program (issue 16: 45 of clspv's 90 ms on a
/// c11_atomics kernel, docs/BENCHMARKS.md).
fn scalarised_builtins(may_name: &dyn Fn(&[u8]) -> bool) -> String {
    let named: Vec<&str> = ["fdim", "maxmag", "minmag", "fract"]
        .into_iter()
        .filter(|f| may_name(f.as_bytes()))
        .collect();
    if named.is_empty() {
        return String::new();
    }
    // OpenCL C 1.0 and 1.1 have no `static`; an inline definition there, always inlined.
    const O: &str = "__VKCL_FN";
    let mut p = String::from(OVERLOADABLE_FN);
    for (s, guard) in [("float", None), ("double", Some("cl_khr_fp64"))] {
        // Before OpenCL C 1.2, double needs the extension enabled; put back as it was after.
        const FP64_ON: &str = "#if __OPENCL_C_VERSION__ < 120\n\
                               #pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n";
        if let Some(g) = guard {
            p += &format!("#ifdef {g}\n{FP64_ON}");
        }
        for f in ["fdim", "maxmag", "minmag"] {
            if !named.contains(&f) {
                continue;
            }
            p += &format!("{O} {s} __vkcl_{f}({s} a, {s} b) {{ return {f}(a, b); }}\n");
            for n in [2, 3, 4, 8, 16] {
                let parts: Vec<String> = C[..n]
                    .iter()
                    .map(|c| format!("{f}(a.s{c}, b.s{c})"))
                    .collect();
                p += &format!(
                    "{O} {s}{n} __vkcl_{f}({s}{n} a, {s}{n} b) {{ return ({s}{n})({}); }}\n",
                    parts.join(", ")
                );
            }
        }
        // The last, unqualified, is the generic address space (OpenCL C 2.0 and later).
        let spaces: &[&str] = match named.contains(&"fract") {
            true => &["__global", "__local", "__private", ""],
            false => &[],
        };
        for &space in spaces {
            let body = |n: usize| -> String {
                if n == 1 {
                    return format!("{s} i; {s} r = fract(x, &i); *ip = i; return r;");
                }
                let mut b = format!("{s}{n} i, r; {s} t;");
                for c in &C[..n] {
                    b += &format!(" r.s{c} = fract(x.s{c}, &t); i.s{c} = t;");
                }
                b + " *ip = i; return r;"
            };
            let guard = space.is_empty();
            if guard {
                p += "#if __OPENCL_C_VERSION__ >= 200\n";
            }
            for n in [1, 2, 3, 4, 8, 16] {
                let t = if n == 1 {
                    s.to_string()
                } else {
                    format!("{s}{n}")
                };
                p += &format!(
                    "{O} {t} __vkcl_fract({t} x, {space} {t} *ip) {{ {} }}\n",
                    body(n)
                );
            }
            if guard {
                p += "#endif\n";
            }
        }
        if guard.is_some() {
            p += &FP64_ON.replace("enable", "disable");
            p += "#endif\n";
        }
    }
    p += "#undef __VKCL_FN\n";
    for f in named {
        p += &format!("#define {f}(a, b) __vkcl_{f}(a, b)\n");
    }
    p
}

/// clspv 0.0.1 lowers double `copysign` with the float masks (as it did `fabs`): copysign(0.5,
/// 1.4) is 1.39999962, and libclc's double `sinh`, which uses it, returns about its argument.
/// These are copysign from the sign bit and fabs (the masks written out are folded back into
/// llvm.copysign, lowered the same wrong way) and fdlibm's sinh over expm1 and exp (right on
/// doubles). The
/// float (and half) forms forward to the built-ins; vectors go one component at a time.
fn double_sinh_copysign() -> String {
    let mut p = String::from(OVERLOADABLE_FN);
    p.push_str(
        "#ifdef cl_khr_fp64\n#if __OPENCL_C_VERSION__ < 120\n\
         #pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n\
         __VKCL_FN double __vkcl_sinh(double x) {\n\
           double ax = fabs(x), h = x < 0.0 ? -0.5 : 0.5;\n\
           if (ax < 22.0) {\n\
             if (ax < 0x1p-28) return x;\n\
             double t = expm1(ax);\n\
             return ax < 1.0 ? h * (2.0 * t - t * t / (t + 1.0)) : h * (t + t / (t + 1.0)); }\n\
           if (ax < 709.78) return h * exp(ax);\n\
           if (ax <= 710.4758600739439) { double w = exp(0.5 * ax); return (h * w) * w; }\n\
           return x * 0x1p1023 * 2.0; }\n\
         __VKCL_FN double __vkcl_copysign(double a, double b) {\n\
           return as_long(b) < 0 ? -fabs(a) : fabs(a); }\n",
    );
    let mut forms = vec![("double", None), ("float", None)];
    forms.push(("half", Some("cl_khr_fp16")));
    for (s, guard) in forms {
        if let Some(g) = guard {
            p += &format!("#ifdef {g}\n#pragma OPENCL EXTENSION {g} : enable\n");
        }
        if s != "double" {
            p += &format!("__VKCL_FN {s} __vkcl_sinh({s} x) {{ return sinh(x); }}\n");
            p += &format!(
                "__VKCL_FN {s} __vkcl_copysign({s} a, {s} b) {{ return copysign(a, b); }}\n"
            );
        }
        for n in [2, 3, 4, 8, 16] {
            let sinh: Vec<String> = C[..n]
                .iter()
                .map(|c| format!("__vkcl_sinh(x.s{c})"))
                .collect();
            let copysign: Vec<String> = C[..n]
                .iter()
                .map(|c| format!("__vkcl_copysign(a.s{c}, b.s{c})"))
                .collect();
            p += &format!(
                "__VKCL_FN {s}{n} __vkcl_sinh({s}{n} x) {{ return ({s}{n})({}); }}\n\
                 __VKCL_FN {s}{n} __vkcl_copysign({s}{n} a, {s}{n} b) {{ return ({s}{n})({}); }}\n",
                sinh.join(", "),
                copysign.join(", ")
            );
        }
        if let Some(g) = guard {
            p += &format!("#pragma OPENCL EXTENSION {g} : disable\n#endif\n");
        }
    }
    p += "#if __OPENCL_C_VERSION__ < 120\n#pragma OPENCL EXTENSION cl_khr_fp64 : disable\n#endif\n\
          #define sinh(x) __vkcl_sinh(x)\n#define copysign(a, b) __vkcl_copysign(a, b)\n\
          #endif\n#undef __VKCL_FN\n";
    p
}

/// OpenCL C 3.0 §6.15.14.3: "printf returns 0 if it was executed successfully and -1
/// otherwise", but clspv's lowering returns 1 on success (and -1 when the buffer is full).
/// The macro maps every printf call's result (the macro's own `printf` is not expanded again).
const PRINTF_RESULT: &str = "#if __OPENCL_C_VERSION__ >= 120\n\
    static inline int __vkcl_printf_result(int r) { return r < 0 ? -1 : 0; }\n\
    #else\n\
    inline __attribute__((always_inline)) int __vkcl_printf_result(int r) \
    { return r < 0 ? -1 : 0; }\n\
    #endif\n\
    #define printf(...) __vkcl_printf_result(printf(__VA_ARGS__))\n";

/// `convert_doubleN` and `convert_doubleN_rte` crash clspv 0.0.1 (SIGSEGV) whatever the
/// source type, while the conversion itself (a cast, `__builtin_convertvector`) compiles right.
/// Round to nearest even is the conversions' default rounding, so the macros are exact (the
/// other rounding modes compile, and keep the built-ins).
const DOUBLE_CONVERSIONS: &str = "#ifdef cl_khr_fp64\n\
    #define convert_double(x) ((double)(x))\n\
    #define convert_double_rte(x) ((double)(x))\n\
    #define convert_double2(x) __builtin_convertvector((x), double2)\n\
    #define convert_double2_rte(x) __builtin_convertvector((x), double2)\n\
    #define convert_double3(x) __builtin_convertvector((x), double3)\n\
    #define convert_double3_rte(x) __builtin_convertvector((x), double3)\n\
    #define convert_double4(x) __builtin_convertvector((x), double4)\n\
    #define convert_double4_rte(x) __builtin_convertvector((x), double4)\n\
    #define convert_double8(x) __builtin_convertvector((x), double8)\n\
    #define convert_double8_rte(x) __builtin_convertvector((x), double8)\n\
    #define convert_double16(x) __builtin_convertvector((x), double16)\n\
    #define convert_double16_rte(x) __builtin_convertvector((x), double16)\n\
    #endif\n";

/// `vstore_half`/`vstorea_half` of doubles (every width and rounding mode) crash clspv 0.0.1
/// (SIGSEGV). The double is first rounded to float by round-to-odd (towards zero, the lowest
/// mantissa bit set where that was inexact), which keeps the final rounding to half exact in
/// every mode (float has more than the 11 + 2 bits that needs), then stored by the float
/// built-in. `vstorea_halfN` of floats crashes clspv too under OpenCL C 2.0 and 3.0 (piglit's
/// vstorea_half tests, which build for the device's OpenCL C version): every `vstorea_halfN`
/// is the `vstore_halfN` at its aligned address (`p + o * N`, `p + o * 4` for 3 components).
/// The float `vstore_half` forms forward to the built-ins. Only programs that name a vstore
/// get these overloads.
fn vstore_half_wrappers() -> String {
    const O: &str = "__VKCL_FN";
    let mut p = String::from(
        "#if __OPENCL_C_VERSION__ >= 120
         #define __VKCL_FN static inline __attribute__((overloadable))
#else
         #define __VKCL_FN inline __attribute__((overloadable, always_inline))
#endif
#ifdef cl_khr_fp64
#if __OPENCL_C_VERSION__ < 120
         #pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
",
    );
    p += &format!(
        "{O} float __vkcl_odd(double x) {{ float f = convert_float_rtz(x); \
         return as_float(as_uint(f) | (uint)((double)f != x)); }}\n"
    );
    // Vectors one component at a time (clspv crashes on some vector forms of this).
    for n in [2, 3, 4, 8, 16] {
        let parts: Vec<String> = C[..n]
            .iter()
            .map(|c| format!("__vkcl_odd(x.s{c})"))
            .collect();
        p += &format!(
            "{O} float{n} __vkcl_odd(double{n} x) {{ return (float{n})({}); }}\n",
            parts.join(", ")
        );
    }
    p += "#endif\n";
    let mut names = vec![];
    for (base, widths) in [
        ("vstore_half", &["", "2", "3", "4", "8", "16"][..]),
        ("vstorea_half", &["2", "3", "4", "8", "16"][..]),
    ] {
        for n in widths {
            for mode in ["", "_rte", "_rtz", "_rtp", "_rtn"] {
                let name = format!("{base}{n}{mode}");
                // What stores: the built-in, or for vstorea the vstore at the aligned address.
                let store = match base {
                    "vstorea_half" => {
                        let stride = if *n == "3" { "4" } else { n };
                        format!("vstore_half{n}{mode}(VALUE, 0, p + o * {stride})")
                    }
                    _ => format!("{name}(VALUE, o, p)"),
                };
                for space in ["__global", "__local", "__private", ""] {
                    let generic = space.is_empty();
                    if generic {
                        p += "#if __OPENCL_C_VERSION__ >= 200\n";
                    }
                    for ty in ["float", "double"] {
                        let value = if ty == "double" { "__vkcl_odd(d)" } else { "d" };
                        if ty == "double" {
                            p += "#ifdef cl_khr_fp64\n";
                        }
                        p += &format!(
                            "{O} void __vkcl_{name}({ty}{n} d, size_t o, {space} half *p) {{ {}; }}\n",
                            store.replace("VALUE", value)
                        );
                        if ty == "double" {
                            p += "#endif\n";
                        }
                    }
                    if generic {
                        p += "#endif\n";
                    }
                }
                names.push(name);
            }
        }
    }
    p += "#undef __VKCL_FN\n";
    for name in names {
        p += &format!("#define {name}(d, o, p) __vkcl_{name}(d, o, p)\n");
    }
    p + "#if defined(cl_khr_fp64) && __OPENCL_C_VERSION__ < 120\n#pragma OPENCL EXTENSION cl_khr_fp64 : disable\n#endif\n"
}

/// Rewrites clang's `source:LINE:` locations in `log` to count from the application's first
/// line, `lines` being the prelude's length.
pub(crate) fn shift_source_lines(log: &str, lines: usize) -> String {
    const AT: &str = "source:";
    let mut out = String::with_capacity(log.len());
    let mut rest = log;
    while let Some(i) = rest.find(AT) {
        let (before, after) = rest.split_at(i + AT.len());
        out.push_str(before);
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match after[..digits].parse::<usize>() {
            Ok(n) if n > lines && after[digits..].starts_with(':') => {
                out.push_str(&(n - lines).to_string())
            }
            _ => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    // The quoted source lines' gutters ("  120 | text") count physical lines too.
    out.split_inclusive('\n')
        .map(|line| {
            let digits = line.trim_start_matches(' ');
            let n = digits.len()
                - digits
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .len();
            match digits[..n].parse::<usize>() {
                Ok(v) if v > lines && digits[n..].starts_with(" |") => {
                    let width = line.len() - digits.len() + n;
                    format!("{:>width$}{}", v - lines, &digits[n..])
                }
                _ => line.to_string(),
            }
        })
        .collect()
}

/// `clspv_args` without `-rewrite-packed-structs` when the sources cannot declare a packed
/// struct. clspv's rewrite of struct accesses into byte arrays, which that option turns on for
/// every function whose pointer types it finds mixed, not only for packed structs, indexes
/// the resulting word buffer with byte offsets (`s = structs[i]` of a 60-byte struct reads
/// words 60*i+4, 60*i+8, ...; docs/DECISIONS.md). Sources that may pack a struct (`packed`,
/// `#pragma pack`), include files the check cannot see, and LLVM IR inputs keep
/// the option: clspv needs it for packed structs.
fn without_needless_packed_rewrite(
    clspv_args: &[String],
    sources: &[&[u8]],
    is_ir: bool,
) -> Vec<String> {
    const FLAG: &str = PACKED_REWRITE;
    let may_pack = |s: &&[u8]| {
        [&b"packed"[..], b"pack(", b"pragma pack"]
            .iter()
            .any(|w| s.windows(w.len()).any(|x| x == *w))
    };
    // Headers come from the -I folders (pyopencl always passes one): they are read too. An
    // #include with no -I folder (relative to a directory vkcl cannot know) keeps the flag.
    let dirs = include_dirs(clspv_args);
    let includes = sources
        .iter()
        .any(|s| s.windows(8).any(|w| w == b"#include"));
    let keep = is_ir
        || sources.iter().any(may_pack)
        || (includes && dirs.is_empty())
        || dirs.iter().any(|d| folder_may_pack(d, &may_pack));
    clspv_args
        .iter()
        .filter(|a| keep || a.as_str() != FLAG)
        .cloned()
        .collect()
}

const PACKED_REWRITE: &str = "-rewrite-packed-structs";

/// Most rebuilds after clspv refuses a record layout (one per refused type, one with the rewrite).
const MAX_REFUSALS: usize = 8;

/// The folders of `-I DIR` / `-IDIR` arguments.
fn include_dirs(args: &[String]) -> Vec<PathBuf> {
    let mut dirs = vec![];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.strip_prefix("-I") {
            Some("") => dirs.extend(it.next().map(PathBuf::from)),
            Some(d) => dirs.push(PathBuf::from(d)),
            None => {}
        }
    }
    dirs
}

/// Whether a header in `dir` (or a folder below it, two levels deep) may declare a packed
/// struct; true where the folder cannot be read whole (more than 256 files, or a file over
/// 4 MiB), so that the answer errs towards keeping the rewrite.
fn folder_may_pack(dir: &Path, may_pack: &dyn Fn(&&[u8]) -> bool) -> bool {
    let mut pending = vec![(dir.to_path_buf(), 0)];
    let mut files = 0;
    while let Some((d, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            return true;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(meta) = e.metadata() else { return true };
            if meta.is_dir() {
                if depth < 2 {
                    pending.push((path, depth + 1));
                }
                continue;
            }
            files += 1;
            if files > 256 || meta.len() > 4 << 20 {
                return true;
            }
            match std::fs::read(&path) {
                Ok(text) if !may_pack(&text.as_slice()) => {}
                _ => return true,
            }
        }
    }
    false
}

/// The disk-cache key of a compile: clspv's identity, its options and the sources. None (not
/// cacheable) when the output may depend on files the key cannot see: include directories or
/// #include lines.
fn cache_key(sources: &[&[u8]], clspv_args: &[String], options: &str) -> Option<String> {
    const INCLUDE: &[u8] = b"#include";
    let includes = sources
        .iter()
        .any(|s| s.windows(INCLUDE.len()).any(|w| w == INCLUDE));
    if includes || clspv_args.iter().any(|a| a.starts_with("-I")) {
        return None;
    }
    let id = clspv_identity()?;
    let ours = vkcl_identity();
    let mut parts: Vec<&[u8]> = vec![
        b"clspv-output-1",
        id.as_bytes(),
        ours.as_bytes(),
        options.as_bytes(),
    ];
    parts.extend_from_slice(sources);
    Some(crate::cache::key(&parts))
}

/// What identifies the compiler in program binaries: the clspv library's size (which differs
/// between clspv builds; "none" without clspv), vkcl's version and a hash of its compiler
/// layer's source (build.rs). A binary written by another is refused: LLVM reads only its own
/// bitcode, and an executable that an older vkcl compiled keeps that vkcl's SPIR-V (and its
/// bugs) where a rebuild from source would get this one's.
pub fn binary_identity() -> String {
    format!(
        "{}; vkcl {} compiler {}",
        clspv_size(),
        env!("CARGO_PKG_VERSION"),
        env!("VKCL_COMPILER_SOURCE")
    )
}

fn clspv_size() -> String {
    let size = locate()
        .ok()
        .and_then(|(_, lib)| std::fs::metadata(lib).ok())
        .map(|m| m.len());
    match size {
        Some(n) => format!("clspv library of {n} bytes"),
        None => "none".into(),
    }
}

/// What identifies vkcl's own build for the cache (its source rewrites and IR passes shape
/// clspv's output): the version, and this binary's size and modification time where found.
fn vkcl_identity() -> String {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let meta = our_binary().and_then(|b| std::fs::metadata(b).ok());
        let stamp = meta.and_then(|m| {
            let t = m
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            Some(format!("{}:{}", m.len(), t.as_nanos()))
        });
        format!(
            "{} {}",
            env!("CARGO_PKG_VERSION"),
            stamp.unwrap_or_default()
        )
    })
    .clone()
}

/// What identifies the clspv in use for the cache: its library's path, size and modification
/// time (hashing 110 MiB on every start would cost more than most compiles).
fn clspv_identity() -> Option<String> {
    static ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let (_, lib) = locate().ok()?;
        let meta = std::fs::metadata(&lib).ok()?;
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(format!(
            "{}:{}:{}",
            lib.display(),
            meta.len(),
            mtime.as_nanos()
        ))
    })
    .clone()
}

/// A compile: (sources, options) → (output, log); the helper's, or a rewrite around it.
type Compile<'a> = dyn Fn(&[&[u8]], &str) -> Result<(Vec<u8>, String), CompileError> + 'a;

#[cfg(unix)]
fn compile_in_helper(sources: &[&[u8]], options: &str) -> Result<(Vec<u8>, String), CompileError> {
    use helper::{Client, Lost};
    static HELPER: parking_lot::Mutex<Option<Client>> = parking_lot::const_mutex(None);
    let mut slot = HELPER.lock();
    // Two tries: a helper that died between builds is only noticed when the request bounces.
    for _ in 0..2 {
        if slot.as_mut().is_none_or(Client::exited) {
            *slot = None;
            let (helper, lib) = locate().map_err(CompileError::Unavailable)?;
            log::info!(target: "compiler", "starting {} with {}", helper.display(), lib.display());
            *slot = Some(Client::spawn(&helper, &lib).map_err(CompileError::Unavailable)?);
        }
        let Some(client) = slot.as_mut() else { break };
        log::debug!(target: "compiler", "clspv {options}");
        let start = std::time::Instant::now();
        match client.compile(options, sources) {
            Ok((status, log, spirv)) => {
                log::debug!(
                    target: "compiler",
                    "clspv answered in {:.1} ms (status {status}, {} source bytes)",
                    1e3 * start.elapsed().as_secs_f64(),
                    sources.iter().map(|s| s.len()).sum::<usize>()
                );
                return finish(status, log, spirv);
            }
            Err(Lost::BeforeRequest) => *slot = None,
            Err(Lost::During(why)) => {
                *slot = None;
                log::warn!(target: "compiler", "{why}");
                return Err(CompileError::Failed { log: why });
            }
        }
    }
    Err(CompileError::Unavailable(
        "vkcl-clspv helper keeps exiting".into(),
    ))
}

#[cfg(not(unix))]
fn compile_in_helper(_: &[&[u8]], _: &str) -> Result<(Vec<u8>, String), CompileError> {
    Err(CompileError::Unavailable(
        "the clspv helper is only implemented for Unix".into(),
    ))
}

/// Turns clspv's answer into the result.
fn finish(status: i32, log: Vec<u8>, output: Vec<u8>) -> Result<(Vec<u8>, String), CompileError> {
    let log = String::from_utf8_lossy(&log).into_owned();
    if status != 0 {
        return Err(CompileError::Failed { log });
    }
    Ok((output, log))
}

/// Bytes → SPIR-V words (little-endian, as clspv writes them), checking the magic number.
pub fn words(bytes: &[u8]) -> Option<Vec<u32>> {
    if bytes.len() < 20 || bytes.len() % 4 != 0 {
        return None;
    }
    let w: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (w[0] == 0x0723_0203).then_some(w)
}

/// Writes `spirv` into VKCL_DUMP_DIR, when it is set, as `<pid>-<n>.spv` (`-physical` for a
/// physical-addressing module): the modules exactly as Vulkan gets them, for bug reports. Where
/// VKCL_REPLACE_DIR holds `<n>.spv`, that module is returned in place of `spirv` (a hand-edited
/// module run in the place of the one clspv wrote, to find what a driver gets wrong).
pub fn dump(spirv: Vec<u32>) -> Vec<u32> {
    let kind = if physical::is_physical(&spirv) {
        "-physical.spv"
    } else {
        ".spv"
    };
    let bytes: Vec<u8> = spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
    let Some(n) = dump_file(kind, &bytes) else {
        return spirv;
    };
    let Some(dir) = crate::config::get().replace_dir.as_deref() else {
        return spirv;
    };
    let path = std::path::Path::new(dir).join(format!("{n}.spv"));
    match std::fs::read(&path).ok().and_then(|b| words(&b)) {
        Some(replacement) => {
            log::warn!(target: "compiler", "module {n} replaced by {}", path.display());
            replacement
        }
        None => spirv,
    }
}

/// Writes `bytes` into VKCL_DUMP_DIR, when it is set, as `<pid>-<n><suffix>`; returns `n`.
pub(crate) fn dump_file(suffix: &str, bytes: &[u8]) -> Option<usize> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = crate::config::get().dump_dir.as_deref()?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = std::path::Path::new(dir).join(format!("{}-{n}{suffix}", std::process::id()));
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, bytes));
    match written {
        Ok(()) => log::info!(target: "compiler", "module written to {}", path.display()),
        Err(e) => log::warn!(target: "compiler", "cannot write {}: {e}", path.display()),
    }
    Some(n)
}

// ---------------------------------------------------------------------------------------------
// Finding the helper and the library.

const HELPER_NAME: &str = if cfg!(windows) {
    "vkcl-clspv.exe"
} else {
    "vkcl-clspv"
};
const LIBRARY_NAME: &str = if cfg!(windows) {
    "clspv.dll"
} else {
    "libclspv.so"
};

/// The helper executable and the clspv library to give it, or a message naming what was
/// searched.
pub fn locate() -> Result<(PathBuf, PathBuf), String> {
    let helpers = helper_candidates();
    let helper = helpers.iter().find(|p| p.is_file()).cloned();
    let libraries = library_candidates(helper.as_deref());
    let library = libraries.iter().find(|p| p.is_file()).cloned();
    match (helper, library) {
        (Some(h), Some(l)) => Ok((h, l)),
        (h, l) => {
            let list = |v: &[PathBuf]| {
                v.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut msg = String::new();
            if h.is_none() {
                msg += &format!("no {HELPER_NAME} found (searched {})", list(&helpers));
            }
            if l.is_none() {
                msg += &format!(
                    "{}no clspv library found (searched {})",
                    if msg.is_empty() { "" } else { "; " },
                    list(&libraries)
                );
            }
            Err(msg)
        }
    }
}

/// Where the helper may be: the configured path only, if one is set; else beside the binary
/// holding this code (the ICD, or an executable linking vkcl), or in its parent directory
/// (cargo test binaries live in target/*/deps, the helper in target/*). Never on the
/// application's PATH: the helper runs the compiler for every build, so only the
/// installation's own copy (or the one the configuration names) is trusted.
fn helper_candidates() -> Vec<PathBuf> {
    if let Some(p) = &crate::config::get().clspv_helper {
        return vec![PathBuf::from(p)];
    }
    let mut v = Vec::new();
    if let Some(dir) = our_binary().as_deref().and_then(Path::parent) {
        v.push(dir.join(HELPER_NAME));
        if let Some(up) = dir.parent() {
            v.push(up.join(HELPER_NAME));
        }
    }
    v
}

/// Where clspv may be: the configured path only, if set; else beside the helper, the per-user
/// data directory, then the build tree's `.clspv/` (filled by the setup script).
fn library_candidates(helper: Option<&Path>) -> Vec<PathBuf> {
    if let Some(p) = &crate::config::get().clspv_library {
        return vec![PathBuf::from(p)];
    }
    let mut v = Vec::new();
    if let Some(dir) = helper.and_then(Path::parent) {
        v.push(dir.join(LIBRARY_NAME));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    if let Some(data) = data {
        v.push(data.join("vkcl").join(LIBRARY_NAME));
    }
    v.push(PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.clspv/libclspv.so"
    )));
    v
}

/// The file of the shared object or executable that contains this code.
#[cfg(unix)]
pub(crate) fn our_binary() -> Option<PathBuf> {
    use std::ffi::{c_char, c_int, c_void, CStr};
    use std::os::unix::ffi::OsStrExt;
    #[repr(C)]
    struct DlInfo {
        fname: *const c_char,
        fbase: *mut c_void,
        sname: *const c_char,
        saddr: *mut c_void,
    }
    extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    }
    let mut info = DlInfo {
        fname: std::ptr::null(),
        fbase: std::ptr::null_mut(),
        sname: std::ptr::null(),
        saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address (a function of ours) and fills `info`.
    let found = unsafe { dladdr(our_binary as *const c_void, &mut info) };
    if found == 0 || info.fname.is_null() {
        return std::env::current_exe().ok();
    }
    // SAFETY: dladdr set `fname` to a NUL-terminated path owned by the loader, valid while the
    // object stays loaded (it contains this code, so it does); we copy it at once.
    let name = unsafe { CStr::from_ptr(info.fname) };
    let path = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
    // For the main executable glibc may report argv[0], which can be relative or bare.
    if path.is_absolute() {
        Some(path)
    } else {
        std::env::current_exe().ok()
    }
}

#[cfg(not(unix))]
pub(crate) fn our_binary() -> Option<PathBuf> {
    std::env::current_exe().ok()
}
