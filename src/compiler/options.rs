//! The application's OpenCL build options → clspv arguments for one device.
//!
//! An option the loaded clspv does not know makes it exit, so nothing from the application is
//! passed through unchecked: every option below was tried against the pinned clspv (pyclspv
//! 0.0.1, LLVM 22) and is either accepted by it, translated, or dropped.

/// Which storage classes a Vulkan 8- or 16-bit storage feature covers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StorageClasses {
    /// `storageBuffer{8,16}BitAccess`.
    pub ssbo: bool,
    /// `uniformAndStorageBuffer{8,16}BitAccess`.
    pub ubo: bool,
    /// `storagePushConstant{8,16}`.
    pub push_constant: bool,
}

/// What the device can run, as far as code generation cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `shaderInt8`: without it clspv must not use 8-bit integers (`-int8=0`).
    pub int8: bool,
    /// `shaderInt64`: claims `__opencl_c_int64` under OpenCL C 3.0. clspv has no switch for it.
    pub int64: bool,
    /// `shaderFloat16` (with 16-bit storage): `half` arithmetic (`cl_khr_fp16`).
    pub fp16: bool,
    /// `shaderFloat64` (with `shaderInt64`): `double` (`cl_khr_fp64`).
    pub fp64: bool,
    /// 8-bit storage features (`VK_KHR_8bit_storage`).
    pub storage8: StorageClasses,
    /// 16-bit storage features (`VK_KHR_16bit_storage`).
    pub storage16: StorageClasses,
    /// `maxPushConstantsSize`.
    pub max_push_constant_size: u32,
    /// `maxUniformBufferRange`.
    pub max_ubo_size: u32,
    /// `uniformBufferStandardLayout`: uniform buffers may use std430 (`-std430-ubo-layout`).
    pub ubo_std430: bool,
    /// Highest SPIR-V version the device accepts (1.0 for Vulkan 1.0, 1.3 for 1.1, 1.5 for 1.2,
    /// 1.6 for 1.3).
    pub spirv_version: (u32, u32),
    /// Image support (storage images without format for reads and writes).
    pub images: bool,
    /// `read_write` images (`shaderStorageImageReadWithoutFormat`).
    pub read_write_images: bool,
    /// Vulkan subgroup arithmetic in compute: `__opencl_c_subgroups`.
    pub subgroups: bool,
    /// `shaderIntegerDotProduct`: the 4×8-bit dot-product features.
    pub integer_dot_product: bool,
    /// Atomics are sequentially consistent across the device and the host once seq_cst
    /// loads and stores are read-modify-writes (`atomics::ACCESS_PRELUDE`): seq_cst order
    /// and all-devices scope are claimed, the loads and stores rewritten.
    pub seq_cst: bool,
    /// Device-side enqueue (compiler::device_enqueue); None: not on this device.
    pub device_enqueue: Option<EnqueueLimits>,
    /// 64-bit `size_t` and pointers (`-arch=spir64`, CL_DEVICE_ADDRESS_BITS 64): devices with
    /// device addresses, so that the physical-addressing build (SVM) agrees with the first.
    pub pointers64: bool,
}

/// The work-group limits of a block's kernel, which enqueue_kernel checks (CLK_INVALID_NDRANGE)
/// and get_kernel_work_group_size / get_kernel_preferred_work_group_size_multiple report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnqueueLimits {
    pub work_group_size: u32,
    pub work_item_sizes: [u32; 3],
    pub preferred_multiple: u32,
}

/// OpenCL C standards the application may ask for. C++ for OpenCL is not offered.
const STANDARDS: &[&str] = &["CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"];

/// Options passed to clspv as they are (all tested against the pinned clspv).
const PASS_THROUGH: &[&str] = &[
    "-cl-opt-disable",
    "-cl-mad-enable",
    "-cl-fast-relaxed-math",
    "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only",
    "-cl-denorms-are-zero",
    "-cl-fp32-correctly-rounded-divide-sqrt",
    "-w",
    "-Werror",
    "-g",
];

/// Accepted and dropped. `-cl-kernel-arg-info` is always on (below); `-cl-uniform-work-group-size` is implied by the always-on
/// `-uniform-workgroup-size` (clspv does not know the OpenCL spelling); `-cl-no-subgroup-ifp`
/// only relaxes a guarantee and clspv does not know it; `-cl-strict-aliasing` is deprecated
/// since OpenCL 1.1 and unknown to clspv.
const DROPPED: &[&str] = &[
    "-cl-kernel-arg-info",
    "-cl-uniform-work-group-size",
    "-cl-no-subgroup-ifp",
    "-cl-strict-aliasing",
];

/// clspv arguments for `user_options` (as given to clBuildProgram/clCompileProgram) on
/// `target`. `Err` says which option is invalid (CL_INVALID_BUILD_OPTIONS).
pub fn clspv_args(user_options: &str, target: &Target) -> Result<Vec<String>, String> {
    let words = tokenize(user_options)?;
    let mut args = Vec::new();
    let mut std = None;
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        if let Some(rest) = w.strip_prefix("-D") {
            let def = if rest.is_empty() {
                it.next().ok_or("-D needs a macro name")?
            } else {
                rest.to_string()
            };
            let name = check_define(&def)?;
            // A later -D wins over an earlier -U of the same name (clang's order).
            args.retain(|a: &String| a.strip_prefix("-U") != Some(name));
            args.push(format!("-D{def}"));
        } else if let Some(rest) = w.strip_prefix("-U") {
            let name = if rest.is_empty() {
                it.next().ok_or("-U needs a macro name")?
            } else {
                rest.to_string()
            };
            if check_define(&name)? != name {
                return Err(format!("-U{name}: not a macro name"));
            }
            // clspv exits on -U: earlier -D's of the name are dropped here, and the name is
            // #undef'd in the source (compiler::prelude), so predefined macros go too.
            args.retain(|a| a.strip_prefix("-D").map(define_name) != Some(name.as_str()));
            args.push(format!("-U{name}"));
        } else if let Some(rest) = w.strip_prefix("-I") {
            let dir = if rest.is_empty() {
                it.next().ok_or("-I needs a directory")?
            } else {
                rest.to_string()
            };
            args.push(format!("-I{dir}"));
        } else if let Some(v) = w.strip_prefix("-cl-std=") {
            std = Some(
                *STANDARDS
                    .iter()
                    .find(|s| **s == v)
                    .ok_or_else(|| format!("unsupported -cl-std={v}"))?,
            );
        } else if w == "-cl-single-precision-constant" {
            // Always on without fp64 (below); with fp64 it is the application's choice.
            if target.fp64 && !args.contains(&w) {
                args.push(w);
            }
        } else if PASS_THROUGH.contains(&w.as_str()) {
            if !args.contains(&w) {
                args.push(w);
            }
        } else if !DROPPED.contains(&w.as_str()) {
            return Err(format!("unknown build option {w:?}"));
        }
    }
    // OpenCL 3.0 §5.8.4.5: without -cl-std the compiler uses the highest OpenCL C 1.x version.
    let std = std.unwrap_or("CL1.2");
    args.push(format!("-cl-std={std}"));
    let uniform = uniform_work_groups(user_options);
    args.extend(fixed_args(std, uniform, target));
    Ok(args)
}

/// Whether a program built with `user_options` needs uniform work-groups: OpenCL C 1.x, or
/// -cl-uniform-work-group-size. Programs for OpenCL C 2.0 and 3.0 may be launched with a global
/// size that is not a multiple of the local size (the runtime splits the launch).
pub fn uniform_work_groups(user_options: &str) -> bool {
    let words = tokenize(user_options).unwrap_or_default();
    let std = words
        .iter()
        .rev()
        .find_map(|w| w.strip_prefix("-cl-std="))
        .unwrap_or("CL1.2");
    !(std == "CL2.0" || std == "CL3.0") || words.iter().any(|w| w == "-cl-uniform-work-group-size")
}

/// The definition of mad() given to every build (see `fixed_args`).
const MAD: &str = "-Dmad(a,b,c)=((a)*(b)+(c))";

/// The runtime's own choices, the same for every build on a target.
fn fixed_args(std: &str, uniform: bool, target: &Target) -> Vec<String> {
    let mut a: Vec<String> = [
        // Always emit ArgumentInfo so clGetKernelArgInfo works; it only adds strings.
        "-cl-kernel-arg-info",
        "-long-vector",
        // Module-scope __constant data in one storage buffer (ConstantDataStorageBuffer), not
        // in a UBO whose std140 layout and size limit would bite.
        "-module-constants-in-storage-buffer",
        // get_global_offset comes from a push constant (PushConstantGlobalOffset: no pipeline
        // per offset).
        "-global-offset-push-constant",
        // printf without this crashes clspv; with it, printf writes into a buffer described by
        // PrintfBufferStorageBuffer/PrintfInfo (the runtime may bind it or drop the output).
        "-enable-printf",
        // mad() as a contractible a * b + c: clspv lowers the built-in to a multiply and an
        // add marked NoContraction, which no driver fuses (half the FMA rate of native
        // OpenCL on NVIDIA). The spec allows either a fused multiply-add or the two
        // correctly rounded operations; clang contracts the expression (FP_CONTRACT is on by
        // default in OpenCL C) into one Fma, which Vulkan lets the driver fuse or not.
        MAD,
        // clspv 0.0.1 lowers libclc's fabs (llvm.fabs) on doubles to an AND with the float
        // mask 0x7fffffff zero-extended to 64 bits: it clears the exponent, so fabs(2.0) is a
        // subnormal and every double built-in that takes |x| (sin, acos, exp, ...) is wrong.
        // GLSL.std.450 FAbs is exact for every float width (docs/DECISIONS.md).
        "--use-native-builtins=fabs",
    ]
    .map(String::from)
    .to_vec();
    if uniform {
        // Launches are uniform: the simple interface. Without it (CL2.0/3.0) clspv adds
        // PushConstantRegionOffset and friends, and the runtime dispatches the remainders
        // of a non-uniform launch as regions of their own.
        a.push("-uniform-workgroup-size".into());
    }
    if std == "CL2.0" || std == "CL3.0" {
        // Required by clspv for the generic address space (it refuses CL2.0 otherwise).
        a.push("-inline-entry-points".into());
        if uniform {
            // clspv 0.0.1 crashes (SIGSEGV) on get_enqueued_local_size (2.0+) with
            // -uniform-workgroup-size; with uniform work-groups it equals get_local_size.
            a.push("-Dget_enqueued_local_size=get_local_size".into());
        }
    }
    if target.pointers64 {
        a.push("-arch=spir64".into());
    }
    if target.seq_cst {
        a.push("-D__VKCL_SEQ_CST=1".into());
    }
    if let Some(l) = target.device_enqueue {
        a.push(format!(
            "{}{}",
            super::device_enqueue::ENABLED,
            l.work_group_size
        ));
        for (d, size) in l.work_item_sizes.iter().enumerate() {
            a.push(format!("-D__VKCL_MAX_WORK_ITEM_SIZE_{d}={size}"));
        }
        a.push(format!(
            "-D__VKCL_PREFERRED_MULTIPLE={}",
            l.preferred_multiple
        ));
    }
    if target.subgroups {
        // cl_intel_required_subgroup_size's macro (clang knows the extension only by its
        // attribute, which it accepts in every OpenCL C version).
        a.push("-Dcl_intel_required_subgroup_size=1".into());
    }
    if std == "CL3.0" {
        a.push(format!(
            "-enable-feature-macros={}",
            opencl_c_features(target).join(",")
        ));
        // Features vkcl implements before clspv, which is not told about them.
        a.extend(own_features(target).iter().map(|f| format!("-D{f}=1")));
    }
    a.push(format!(
        "-max-pushconstant-size={}",
        target.max_push_constant_size
    ));
    a.push(format!("-max-ubo-size={}", target.max_ubo_size));
    if target.ubo_std430 {
        // By-value arguments beyond the push constants go to one uniform buffer per kernel
        // (clspv's AutoPodArgs); under std140, clspv 0.0.1 gives char8/16, short8/16, int8/16
        // ... (arrays under -long-vector) strides the layout rules refuse, or extracts the
        // wrong type (invalid SPIR-V). std430 takes their C layout (tests/byval_many.rs).
        a.push("-std430-ubo-layout".into());
    }
    a.push(format!(
        "-spv-version={}",
        spirv_version(target.spirv_version)
    ));
    if target.int8 {
        a.push("-rewrite-packed-structs".into());
    } else {
        a.push("-int8=0".into());
    }
    if !target.fp16 {
        a.push("-fp16=0".into());
    }
    if !target.fp64 {
        // Without fp64, double literals become float rather than errors (clvk does the same),
        // and `-fp64=0` removes cl_khr_fp64 / __opencl_c_fp64.
        a.push("-cl-single-precision-constant".into());
        a.push("-fp64=0".into());
    }
    if !target.images {
        a.push("-images=0".into());
    }
    a.extend(no_storage("-no-8bit-storage", target.storage8));
    a.extend(no_storage("-no-16bit-storage", target.storage16));
    a
}

/// The OpenCL C 3.0 optional features this target claims; the device's
/// CL_DEVICE_OPENCL_C_FEATURES must list the same. clspv accepts each of these macros;
/// it refuses pipes, device enqueue and program-scope globals, and crashes (0.0.1) on the
/// work-group collective functions, so those are never given to it (`own_features`);
/// seq_cst and all-devices scope are weakened by clspv (`own_features` claims them where
/// vkcl makes them hold).
pub fn opencl_c_features(target: &Target) -> Vec<&'static str> {
    let mut f = vec![
        "__opencl_c_atomic_order_acq_rel",
        "__opencl_c_atomic_scope_device",
        "__opencl_c_generic_address_space",
    ];
    if target.images {
        f.extend(["__opencl_c_images", "__opencl_c_3d_image_writes"]);
        if target.read_write_images {
            f.push("__opencl_c_read_write_images");
        }
    }
    if target.int64 {
        f.push("__opencl_c_int64");
    }
    if target.fp64 {
        f.push("__opencl_c_fp64");
    }
    if target.subgroups {
        f.push("__opencl_c_subgroups");
    }
    if target.integer_dot_product {
        f.extend([
            "__opencl_c_integer_dot_product_input_4x8bit",
            "__opencl_c_integer_dot_product_input_4x8bit_packed",
        ]);
    }
    f
}

/// The OpenCL C 3.0 optional features vkcl implements itself on this target, defined by vkcl
/// rather than clspv: pipes (lowered before clspv, which refuses their macro), program-scope
/// variables (built in clang's 2.0 mode, `compiler::globals`, gathered after clspv) and the
/// work-group collectives (a library of vkcl's own whose values travel as 64-bit words);
/// seq_cst order and all-devices scope on targets where vkcl's loads and stores make them
/// hold (clspv weakens both).
pub fn own_features(target: &Target) -> Vec<&'static str> {
    let mut f = vec![super::pipes::FEATURE, super::globals::FEATURE];
    if target.int64 {
        f.push(super::collectives::FEATURE);
    }
    if target.seq_cst {
        f.extend(SEQ_CST_FEATURES);
    }
    if target.device_enqueue.is_some() {
        f.push(super::device_enqueue::FEATURE);
    }
    f
}

/// The features `Target::seq_cst` claims.
pub const SEQ_CST_FEATURES: [&str; 2] = [
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_all_devices",
];

/// The highest SPIR-V version clspv can emit that the device accepts.
fn spirv_version((major, minor): (u32, u32)) -> &'static str {
    match (major, minor) {
        (1, m) if m >= 6 => "1.6",
        (1, 5) => "1.5",
        (1, 4) => "1.4",
        (1, 3) => "1.3",
        _ => "1.0",
    }
}

fn no_storage(flag: &str, s: StorageClasses) -> Option<String> {
    let missing: Vec<&str> = [
        (s.ssbo, "ssbo"),
        (s.ubo, "ubo"),
        (s.push_constant, "pushconstant"),
    ]
    .iter()
    .filter(|(have, _)| !have)
    .map(|(_, name)| *name)
    .collect();
    (!missing.is_empty()).then(|| format!("{flag}={}", missing.join(",")))
}

/// The macro name of a -D definition (`NAME`, `NAME=VALUE`, `NAME(x)=BODY`).
fn define_name(def: &str) -> &str {
    let end = def.find(['=', '(']).unwrap_or(def.len());
    &def[..end]
}

/// Checks `NAME`, `NAME=VALUE`, `NAME(params)` or `NAME(params)=BODY` (what clang's -D takes:
/// a C identifier, for a function-like macro its parameter list) and returns NAME.
fn check_define(def: &str) -> Result<&str, String> {
    let name = define_name(def);
    let ident = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let rest = &def[name.len()..];
    let params_ok = match rest.strip_prefix('(') {
        None => true,
        Some(r) => r.split_once(')').is_some_and(|(params, after)| {
            let params: Vec<&str> = params.split(',').map(str::trim).collect();
            let n = params.len();
            (after.is_empty() || after.starts_with('='))
                && (params == [""]
                    || params
                        .iter()
                        .enumerate()
                        .all(|(i, p)| ident(p) || (*p == "..." && i == n - 1)))
        }),
    };
    if ident(name) && params_ok {
        Ok(name)
    } else {
        Err(format!("-D{def}: not a macro name"))
    }
}

/// Splits an option string like a POSIX shell: white space separates words, single quotes
/// take everything literally, double quotes allow `\"` and `\\`, a backslash outside quotes
/// escapes the next character.
pub fn tokenize(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(cur.take()),
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("unterminated ' in build options".into()),
                    }
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => w.push(e),
                            Some(e) => w.extend(['\\', e]),
                            None => return Err("unterminated \" in build options".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("unterminated \" in build options".into()),
                    }
                }
            }
            '\\' => cur.get_or_insert_with(String::new).extend(chars.next()),
            c => cur.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(cur);
    Ok(words)
}

/// Quotes one argument for clspv's own option splitting (GNU command-line rules: it honours
/// quotes and backslashes, as tested), so values with spaces or quotes arrive intact.
pub fn quote(arg: &str) -> String {
    if !arg.is_empty() && !arg.contains(|c: char| c.is_whitespace() || "'\"\\".contains(c)) {
        return arg.to_string();
    }
    format!("'{}'", arg.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::compiler::tests::target;

    #[test]
    fn tokenizes_like_a_shell() {
        let w = tokenize(r#" -DA="x y"  -D 'B=c d' -DC=a\ b -I"/p q" "a\"b" '' "#).unwrap();
        assert_eq!(
            w,
            ["-DA=x y", "-D", "B=c d", "-DC=a b", "-I/p q", "a\"b", ""]
        );
        assert!(tokenize("-DA='x").is_err());
        assert!(tokenize("-DA=\"x").is_err());
    }

    #[test]
    fn maps_user_options() {
        let mut t = target();
        t.storage16.push_constant = false;
        let a = clspv_args(
            "-D X=1 -DY -I /inc -cl-mad-enable -cl-mad-enable -cl-strict-aliasing -w",
            &t,
        )
        .unwrap();
        assert_eq!(&a[..5], ["-DX=1", "-DY", "-I/inc", "-cl-mad-enable", "-w"]);
        assert!(a.contains(&"-cl-std=CL1.2".to_string()));
        assert!(!a
            .iter()
            .any(|s| s.starts_with("-inline") || s.starts_with("-enable-feature")));
        assert!(a.contains(&"-no-16bit-storage=pushconstant".to_string()));
        assert!(!a.iter().any(|s| s.starts_with("-no-8bit")));
    }

    #[test]
    fn cl3_adds_features() {
        let a = clspv_args("-cl-std=CL3.0", &target()).unwrap();
        assert!(a.contains(&"-inline-entry-points".to_string()));
        let f = a
            .iter()
            .find(|s| s.starts_with("-enable-feature-macros="))
            .unwrap();
        assert!(f.contains("__opencl_c_int64") && f.contains("__opencl_c_read_write_images"));
        assert!(!f.contains("pipes") && a.contains(&"-D__opencl_c_pipes=1".to_string()));
        let collectives = "-D__opencl_c_work_group_collective_functions=1".to_string();
        assert!(!f.contains("work_group") && a.contains(&collectives));
    }

    #[test]
    fn rejects_unknown_and_bad() {
        for bad in [
            "-bogus",
            "-cl-std=CLC++",
            "-D",
            "-D1X=2",
            "-DF(x=1",
            "-DF(1)=2",
            "-DF(x)y",
            "-U",
            "-UX=1",
            "-UF(x)",
            "-I",
            "-cl-ext=+all",
            "-x spir",
            "--help",
        ] {
            assert!(clspv_args(bad, &target()).is_err(), "{bad}");
        }
    }

    #[test]
    fn defines_and_undefines_like_clang() {
        let a = clspv_args(
            "-D 'M2S(x)=#x' -DF(a,b)=a+b -D G(...)=0 -DE() -DX=1 -UX -UY -DY=2 -I '/p q'",
            &target(),
        )
        .unwrap();
        assert_eq!(
            &a[..6],
            [
                "-DM2S(x)=#x",
                "-DF(a,b)=a+b",
                "-DG(...)=0",
                "-DE()",
                "-UX",
                "-DY=2"
            ]
        );
        assert_eq!(a[6], "-I/p q");
    }

    #[test]
    fn quotes_for_clspv() {
        assert_eq!(quote("-DA=1"), "-DA=1");
        assert_eq!(quote("-DA=x y"), "'-DA=x y'");
        assert_eq!(quote("-DA='c'"), r"'-DA='\''c'\'''");
    }
}
