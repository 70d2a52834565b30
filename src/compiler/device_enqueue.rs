//! Device-side enqueue (OpenCL C 2.0 §6.13.17: blocks, `enqueue_kernel`, device events),
//! which clspv's front end refuses (it turns blocks off).
//!
//! A program that names device-side enqueue is compiled by clang (Debian's clang-15 or
//! clang-16, run as a process; `VKCL_CLANG`) to LLVM IR with typed pointers, where clang has already made each
//! block passed to `enqueue_kernel` a kernel of its own (`__k_block_invoke_kernel`, taking the
//! block literal: the block's captured values after a header). [`rewrite`] then makes that IR
//! something clspv builds in physical addressing mode:
//! - `queue_t` and `clk_event_t` become `i64` (numbers: the device queue 1, events 1, 2, ...);
//!   the literal's function pointer becomes an `i64` 0;
//! - every `enqueue_kernel` form becomes a call of `__vkcl_enqueue` (device_enqueue.cl, compiled
//!   with the program) with the block's kernel as a number: it appends a record of the launch
//!   (shape, events, `__local` sizes, the literal's bytes) to the launch's device queue state;
//! - each block kernel becomes `__vkcl_child_<n>(global uchar *literal, local void *..., ...)`,
//!   which the runtime launches with the recorded literal once the enqueuing kernel completes
//!   (core::device_enqueue);
//! - every kernel gets a trailing `ulong` parameter, [`PARAMETER`], the state's address, which
//!   it stores in a module variable that the library reads.
//!
//! The IR is assembled by the same clang at -O1 (blocks that are called are inlined, their
//! literals become values) and built by clspv (`-x ir`, which upgrades LLVM 15 bitcode). Not
//! supported: a block called through a pointer clang cannot resolve (an indirect call),
//! blocks that capture images or samplers.

use super::Compile;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

/// The hidden parameter every kernel of such a program has last.
pub const PARAMETER: &str = "__vkcl_device_queue";
/// The prefix of the block kernels' names (and of the library's kernels), hidden from the
/// program's kernel list.
pub const CHILD: &str = "__vkcl_child_";
/// The library's kernel that writes a profiling request's times.
pub const PROFILING: &str = "__vkcl_child_profiling";
/// The OpenCL C 3.0 feature.
pub const FEATURE: &str = "__opencl_c_device_enqueue";
/// The OpenCL C library, compiled after the program.
const LIBRARY: &str = include_str!("device_enqueue.cl");

/// The built-ins and types that make a program one for this module.
const NAMES: [&str; 10] = [
    "enqueue_kernel",
    "enqueue_marker",
    "get_default_queue",
    "queue_t",
    "clk_event_t",
    "ndrange_t",
    "create_user_event",
    "get_kernel_work_group_size",
    "get_kernel_preferred_work_group_size_multiple",
    "capture_event_profiling_info",
];

/// Whether `source`, compiled with clspv `options`, is built here: the options are for a
/// device with device-side enqueue (`options::Target::device_enqueue`) and the source names
/// a device-side enqueue built-in or type (a whole identifier). Elsewhere clspv's front end
/// refuses blocks as before.
pub fn uses(source: &[u8], options: &[String]) -> bool {
    options.iter().any(|o| o.starts_with(ENABLED))
        && (NAMES.iter().any(|n| has_identifier(source, n.as_bytes())) || has_block(source))
}

/// Whether `s` has a block: a block pointer declarator `(^`, or a literal `^{`,
/// `^(params) {` or `^type(params) {` (`^` is only binary in C, and an XOR's right operand is
/// never followed by a brace).
fn has_block(s: &[u8]) -> bool {
    let skip = |mut i: usize| {
        while s.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        i
    };
    (0..s.len()).filter(|&i| s[i] == b'^').any(|i| {
        let before = s[..i].iter().rev().find(|b| !b.is_ascii_whitespace());
        if before == Some(&b'(') {
            return true;
        }
        let mut j = skip(i + 1);
        // A return type: words and stars.
        while s
            .get(j)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'*')
        {
            j = skip(j + 1);
        }
        match s.get(j) {
            Some(b'{') => true,
            Some(b'(') => {
                let mut depth = 0;
                let close = (j..s.len()).find(|&k| {
                    match s[k] {
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                });
                close.is_some_and(|c| s.get(skip(c + 1)) == Some(&b'{'))
            }
            _ => false,
        }
    })
}

/// The option `options::clspv_args` gives a device with device-side enqueue.
pub const ENABLED: &str = "-D__VKCL_MAX_WORK_GROUP_SIZE=";

fn has_identifier(s: &[u8], name: &[u8]) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    s.windows(name.len()).enumerate().any(|(i, w)| {
        w == name && (i == 0 || !word(s[i - 1])) && s.get(i + name.len()).is_none_or(|&b| !word(b))
    })
}

/// The clang that compiles such programs, if there is one.
fn clang() -> Option<PathBuf> {
    if let Some(p) = &crate::config::get().clang {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    CLANGS.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// The clangs looked for on PATH, in this order: those that still write typed pointers
/// (`-no-opaque-pointers`, which the rewrite reads; clang 17 dropped it).
pub const CLANGS: [&str; 2] = ["clang-15", "clang-16"];

/// Whether programs using device-side enqueue can be built here (clang is installed).
pub fn available() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| clang().is_some())
}

/// Builds `sources` (with vkcl's prelude) for clspv `options`, which must be a
/// physical-addressing build, through clang and [`rewrite`] (see the module comment).
pub fn compile(
    sources: &[&[u8]],
    options: &str,
    compile: &Compile,
) -> Result<(Vec<u8>, String), super::CompileError> {
    let failed = |log: String| super::CompileError::Failed { log };
    if options.contains("-output-format") {
        return Err(failed(format!("{OBJECTS}\n")));
    }
    if !options.contains("-physical-storage-buffers") {
        return Err(failed(format!("{LOGICAL}\n")));
    }
    let clang = clang().ok_or_else(|| failed(format!("{UNAVAILABLE}\n")))?;
    log::debug!(target: "compiler", "blocks or device-side enqueue: built through {}", clang.display());
    let dir = super::tempdir::PrivateDir::new("enqueue")
        .map_err(|e| failed(format!("temporary directory: {e}")))?;
    let (source, ll, patched, bc) = (
        dir.path().join("in.cl"),
        dir.path().join("in.ll"),
        dir.path().join("patched.ll"),
        dir.path().join("patched.bc"),
    );
    // The macros after clang's header (as clspv has them: vkcl's own may name built-ins).
    // Lines numbered as clspv numbers them (the log is shifted past the prelude after).
    let mut text: Vec<u8> = (defines(options) + "#line 1 \"source\"\n").into_bytes();
    for s in sources {
        text.extend_from_slice(s);
        text.push(b'\n');
    }
    text.extend_from_slice(b"#line 1 \"device_enqueue.cl\"\n");
    text.extend_from_slice(LIBRARY.as_bytes());
    std::fs::write(&source, &text).map_err(|e| failed(format!("{}: {e}", source.display())))?;
    let run = |args: &[String]| {
        Command::new(&clang)
            .args(args)
            .output()
            .map_err(|e| failed(format!("{}: {e}", clang.display())))
    };
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let mut args = clang_args(options);
    args.extend(["-o".into(), path(&ll), path(&source)]);
    let front = run(&args)?;
    let front_log = String::from_utf8_lossy(&front.stderr).into_owned();
    if !front.status.success() {
        return Err(failed(front_log));
    }
    let ir = std::fs::read_to_string(&ll).map_err(|e| failed(format!("{}: {e}", ll.display())))?;
    let rewritten = rewrite(&ir).map_err(|why| failed(format!("{front_log}{why}\n")))?;
    super::dump_file("-enqueue.ll", rewritten.as_bytes());
    std::fs::write(&patched, &rewritten).map_err(|e| failed(format!("{e}")))?;
    // Assembled at -O1: the literals of blocks that are called become values (clang inlines
    // their invoke functions), so a captured pointer to private memory reaches clspv as a
    // pointer; through the literal in memory (and as an `i64`, above) clspv 0.0.1 made it a
    // tagged number loaded as a global address (the process died in lavapipe).
    let assemble = [
        "-cc1",
        "-triple",
        "spir64-unknown-unknown",
        "-emit-llvm-bc",
        "-O1",
        "-x",
        "ir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(["-o".into(), path(&bc), path(&patched)])
    .collect::<Vec<_>>();
    let assembled = run(&assemble)?;
    if !assembled.status.success() {
        return Err(failed(format!(
            "{front_log}the device-side enqueue rewrite made IR clang does not take: {}\n",
            String::from_utf8_lossy(&assembled.stderr)
        )));
    }
    let bitcode = std::fs::read(&bc).map_err(|e| failed(format!("{}: {e}", bc.display())))?;
    let (out, log) = compile(&[&bitcode], &ir_options(options))?;
    Ok((out, front_log + &log))
}

/// The log of a logical-addressing build of such a program (the runtime builds it again in
/// physical addressing where the device has buffer device addresses).
pub const LOGICAL: &str = "device-side enqueue is built only in physical addressing mode (the \
                           device needs buffer device addresses)";
/// The log of clCompileProgram of such a program.
pub const OBJECTS: &str = "programs using device-side enqueue are built only with \
                           clBuildProgram (not clCompileProgram and clLinkProgram)";
/// The log where no clang is installed.
pub const UNAVAILABLE: &str = "device-side enqueue needs clang-15 or clang-16 (Debian's \
                               packages, or VKCL_CLANG)";

/// clang's arguments for a build with clspv `options`: the language version, the macros,
/// include folders and math options as given, the extensions and features the device has.
fn clang_args(options: &str) -> Vec<String> {
    let words = super::options::tokenize(options).unwrap_or_default();
    let mut args: Vec<String> = [
        "-cc1",
        "-triple",
        "spir64-unknown-unknown",
        "-finclude-default-header",
        "-emit-llvm",
        "-no-opaque-pointers",
        "-O0",
        "-disable-O0-optnone",
        "-cl-kernel-arg-info",
        "-Wno-everything",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut std = "CL2.0".to_string();
    let mut features: Vec<String> = vec![];
    // vkcl never claims cl_khr_subgroups (core::device's extensions say why).
    let mut without: Vec<&str> = vec!["cl_khr_subgroups"];
    let mut words = words.iter().peekable();
    while let Some(w) = words.next() {
        if let Some(v) = w.strip_prefix("-cl-std=") {
            std = v.to_string();
        } else if w == "-I" {
            if let Some(v) = words.next() {
                args.push(format!("{w}{v}"));
            }
        } else if w == "-D" {
            words.next();
        } else if w.starts_with("-I") {
            args.push(w.to_string());
        } else if let Some(list) = w.strip_prefix("-enable-feature-macros=") {
            features.extend(list.split(',').map(str::to_string));
        } else if w == "-fp64=0" {
            without.extend(["cl_khr_fp64", "__opencl_c_fp64"]);
        } else if w == "-fp16=0" {
            without.push("cl_khr_fp16");
        } else if w == "-images=0" {
            without.extend(["__opencl_c_images", "__opencl_c_3d_image_writes"]);
        } else if MATH.contains(&w.as_str()) {
            args.push(w.to_string());
        }
    }
    // OpenCL C 3.0's optional features: those the device has (clang's target has them all),
    // with what device-side enqueue needs.
    if std == "CL3.0" {
        features.extend(
            [
                "__opencl_c_device_enqueue",
                "__opencl_c_generic_address_space",
                "__opencl_c_program_scope_global_variables",
                "__opencl_c_pipes",
                "__opencl_c_atomic_order_seq_cst",
                "__opencl_c_atomic_scope_all_devices",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        let ext: Vec<String> = super::globals::ALL_FEATURES
            .iter()
            .map(
                |f| match features.iter().any(|g| g == f) && !without.contains(f) {
                    true => format!("+{f}"),
                    false => format!("-{f}"),
                },
            )
            .collect();
        args.push(format!("-cl-ext={}", ext.join(",")));
    }
    if !without.is_empty() {
        let off: Vec<String> = without.iter().map(|w| format!("-{w}")).collect();
        args.push(format!("-cl-ext={}", off.join(",")));
    }
    args.push(format!("-cl-std={std}"));
    args
}

/// The `-D` macros of clspv `options` as `#define` lines.
fn defines(options: &str) -> String {
    let words = super::options::tokenize(options).unwrap_or_default();
    let mut out = String::new();
    let mut words = words.iter();
    while let Some(w) = words.next() {
        let d = match w.as_str() {
            "-D" => words.next().map(String::as_str),
            _ => w.strip_prefix("-D"),
        };
        let Some(d) = d else {
            continue;
        };
        let (name, value) = d.split_once('=').unwrap_or((d, "1"));
        out += &format!("#define {name} {value}\n");
    }
    out
}

/// The math options clang takes as clspv does.
const MATH: [&str; 8] = [
    "-cl-single-precision-constant",
    "-cl-denorms-are-zero",
    "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-opt-disable",
    "-cl-mad-enable",
    "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only",
];

/// clspv `options` for the rewritten module: the source-only ones (macros, include folders)
/// left out, the input IR.
fn ir_options(options: &str) -> String {
    let words = super::options::tokenize(options).unwrap_or_default();
    let mut kept: Vec<String> = vec![];
    let mut words = words.iter();
    while let Some(w) = words.next() {
        if w == "-D" || w == "-I" {
            words.next();
        } else if !(w.starts_with("-D")
            || w.starts_with("-I")
            || w.starts_with("-enable-feature-macros"))
        {
            kept.push(super::options::quote(w));
        }
    }
    kept.extend(["-x".into(), "ir".into()]);
    kept.join(" ")
}

/// A block kernel clang made: its name and the parameters after the literal (`__local`
/// pointers).
struct BlockKernel {
    name: String,
    locals: usize,
    invoke: String,
}

/// The IR of a device-side enqueue program (clang 15, typed pointers) made buildable by clspv
/// (see the module comment). Err: what it cannot handle.
pub fn rewrite(ll: &str) -> Result<String, String> {
    let ll = ll
        .replace("%opencl.queue_t*", "i64")
        .replace("%opencl.clk_event_t*", "i64")
        .replace("<{ i32, i32, i8 addrspace(4)*", "<{ i32, i32, i64")
        .replace("{ i32, i32, i8 addrspace(4)* }", "{ i32, i32, i64 }")
        .replace(
            "%struct.__opencl_block_literal_generic = type { i32, i32, i8 addrspace(4)* }",
            "%struct.__opencl_block_literal_generic = type { i32, i32, i64 }",
        );
    let ll = literal_pointers_as_integers(&ll);
    let lines: Vec<&str> = ll.lines().collect();
    // The block kernels, numbered in the order they are defined.
    let mut blocks: Vec<BlockKernel> = vec![];
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = kernel_name(line).filter(|n| is_block_kernel(n)) else {
            continue;
        };
        let invoke = lines[i + 1..]
            .iter()
            .take_while(|l| **l != "}")
            .find_map(|l| called(l))
            .ok_or_else(|| format!("block kernel {name}: no invoke function"))?;
        blocks.push(BlockKernel {
            name: name.to_string(),
            locals: parameters(line).len().saturating_sub(1),
            invoke: invoke.to_string(),
        });
    }
    let number: HashMap<&str, usize> = blocks
        .iter()
        .enumerate()
        .map(|(n, b)| (b.name.as_str(), n))
        .collect();
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if kernel_name(line).is_some_and(is_block_kernel) {
            // Left out (with its body): replaced by the child kernel below.
            while i < lines.len() && lines[i] != "}" {
                i += 1;
            }
            i += 1;
            continue;
        }
        if line.starts_with("declare ") {
            if DROPPED.iter().any(|d| line.contains(&format!("@{d}("))) {
                continue;
            }
            if let Some((_, def)) = IDENTITIES
                .iter()
                .find(|(n, _)| line.contains(&format!("@{n}(")))
            {
                out.extend(def.lines().map(str::to_string));
                continue;
            }
        }
        if line.starts_with("attributes #") {
            out.push(line.replace(" noinline", "").replace(" optnone", ""));
            continue;
        }
        if unused_block_variable(line, &ll) {
            continue;
        }
        out.push(rewrite_line(line, &number)?);
    }
    let mut metadata = super::generic_flat::Metadata::new(&out);
    for (n, b) in blocks.iter().enumerate() {
        out.extend(child_kernel(n, b, &mut metadata));
    }
    // The state's address, through every function: a parameter of each, an argument of each
    // call of one (clspv 0.0.1 has no module-scope private variables of several kernels).
    let defined: std::collections::HashSet<String> = out
        .iter()
        .filter(|l| l.starts_with("define "))
        .filter_map(|l| {
            let at = l.find(" @")? + 2;
            Some(l[at..at + l[at..].find('(')?].to_string())
        })
        .collect();
    for line in &mut out {
        if line.starts_with("define ") {
            *line = with_parameter(line);
            if kernel_name(line).is_some() {
                *line = metadata.extend(line, &[PARAMETER]);
            }
        } else if let Some(callee) = called(line).filter(|c| defined.contains(*c)) {
            let open = line.find(&format!("@{callee}(")).expect("found") + callee.len() + 1;
            if let Some(close) = closing(line, open) {
                let sep = if line[open + 1..close].trim().is_empty() {
                    ""
                } else {
                    ", "
                };
                line.insert_str(close, &format!("{sep}i64 %{PARAMETER}"));
            }
        }
    }
    out.extend(metadata.added.drain(..));
    let mut text = out.join("\n");
    text.push('\n');
    Ok(text)
}

/// `ll` with the pointers captured by blocks kept as `i64` in their literals (clspv 0.0.1
/// aborts on the literal's bytes copied where a field is a pointer: "Invalid bitcast"): the
/// literal types' pointer fields made `i64`, stores to them converted from the pointer, loads
/// converted back.
fn literal_pointers_as_integers(ll: &str) -> String {
    // Each literal type, by its text, with the pointer fields' indices.
    let mut types: Vec<(String, String, Vec<usize>)> = vec![];
    let mut at = 0;
    while let Some(i) = ll[at..].find("<{ i32, i32, i64") {
        let start = at + i;
        let Some(end) = ll[start..].find("}>").map(|e| start + e + 2) else {
            break;
        };
        at = end;
        let old = &ll[start..end];
        if types.iter().any(|(o, _, _)| o == old) {
            continue;
        }
        let fields = super::wrapped_copy::split_args(&old[2..old.len() - 2]);
        let pointers: Vec<usize> = (0..fields.len())
            .filter(|&f| fields[f].ends_with('*'))
            .collect();
        if pointers.is_empty() {
            continue;
        }
        let new: Vec<&str> = (0..fields.len())
            .map(|f| match pointers.contains(&f) {
                true => "i64",
                false => fields[f],
            })
            .collect();
        types.push((
            old.to_string(),
            format!("<{{ {} }}>", new.join(", ")),
            pointers,
        ));
    }
    if types.is_empty() {
        return ll.to_string();
    }
    // Longest first: one literal type's text may begin another's.
    types.sort_by_key(|(o, _, _)| std::cmp::Reverse(o.len()));
    let mut out = String::with_capacity(ll.len());
    // GEPs to a pointer field, by name (names are unique per function and clang's are
    // unique per module for these).
    let mut fields: std::collections::HashSet<String> = std::collections::HashSet::new();
    for line in ll.lines() {
        let mut line = line.to_string();
        for (old, new, pointers) in &types {
            if !line.contains(old.as_str()) {
                continue;
            }
            if let Some((name, rhs)) = line.trim_start().split_once(" = getelementptr ") {
                let field = rhs
                    .rsplit("i32 ")
                    .next()
                    .and_then(|f| f.trim().parse().ok());
                if rhs.contains(old.as_str()) && field.is_some_and(|f| pointers.contains(&f)) {
                    fields.insert(name.to_string());
                }
            }
            line = line.replace(old.as_str(), new);
        }
        out += &pointer_access(&line, &fields, out.len()).unwrap_or(line);
        out.push('\n');
    }
    out
}

/// A store of a pointer to, or a load of one from, a literal field that is an `i64` now: the
/// pointer converted.
/// `unique` makes the names of the integers it adds unique.
fn pointer_access(
    line: &str,
    fields: &std::collections::HashSet<String>,
    unique: usize,
) -> Option<String> {
    let t = line.trim_start();
    let int = format!("%__vkcl_int{unique}");
    if let Some(rest) = t.strip_prefix("store ") {
        let args = super::wrapped_copy::split_args(rest);
        let (value, ty) = args.first().map(|a| split_typed(a))?;
        let (to, to_ty) = args.get(1).map(|a| split_typed(a))?;
        if !fields.contains(to) || !ty.ends_with('*') {
            return None;
        }
        let space = to_ty.strip_prefix(ty).unwrap_or("*").trim_end_matches('*');
        let tail = args[2..]
            .iter()
            .map(|a| format!(", {a}"))
            .collect::<String>();
        return Some(format!(
            "  {int} = ptrtoint {ty} {value} to i64\n  store i64 {int}, i64{space}* {to}{tail}"
        ));
    }
    let (result, rhs) = t.split_once(" = load ")?;
    let args = super::wrapped_copy::split_args(rhs);
    let ty = args.first()?.trim();
    let (from, from_ty) = args.get(1).map(|a| split_typed(a))?;
    if !fields.contains(from) || !ty.ends_with('*') {
        return None;
    }
    let space = from_ty
        .strip_prefix(ty)
        .unwrap_or("*")
        .trim_end_matches('*');
    let tail = args[2..]
        .iter()
        .map(|a| format!(", {a}"))
        .collect::<String>();
    Some(format!(
        "  {int} = load i64, i64{space}* {from}{tail}\n  {result} = inttoptr i64 {int} to {ty}"
    ))
}

/// A typed operand `TYPE VALUE` as (value, type).
fn split_typed(a: &str) -> (&str, &str) {
    let a = a.trim();
    match a.rfind(' ') {
        Some(i) => (&a[i + 1..], a[..i].trim()),
        None => (a, ""),
    }
}

/// A program-scope block variable (`constant int (^b)(int) = ^...`) nothing reads: clang calls
/// its block directly, and clspv 0.0.1 crashed on the variable (a generic pointer in a
/// constant).
fn unused_block_variable(line: &str, ll: &str) -> bool {
    const BLOCK: &str = " %struct.__opencl_block_literal_generic addrspace(4)* ";
    let Some(name) = line
        .split_once(" = ")
        .map(|(n, _)| n)
        .filter(|n| n.starts_with('@'))
    else {
        return false;
    };
    let used = ll.match_indices(name).any(|(i, _)| {
        let next = ll[i + name.len()..].chars().next();
        !ll[..i].ends_with('\n')
            && next.is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '.')
    });
    line.contains(BLOCK) && !used
}

/// Declarations of clang's enqueue functions, whose calls are rewritten.
const DROPPED: [&str; 6] = [
    "__enqueue_kernel_basic",
    "__enqueue_kernel_basic_events",
    "__enqueue_kernel_varargs",
    "__enqueue_kernel_events_varargs",
    "__get_kernel_work_group_size_impl",
    "__get_kernel_preferred_work_group_size_multiple_impl",
];

/// The library's conversions between events or queues and numbers (the same `i64` now), and
/// the state's address (its functions' last parameter, added to these too).
const IDENTITIES: [(&str, &str); 5] = [
    ("__vkcl_event_id", "define internal spir_func i64 @__vkcl_event_id(i64 %x) {\n  ret i64 %x\n}"),
    ("__vkcl_event", "define internal spir_func i64 @__vkcl_event(i64 %x) {\n  ret i64 %x\n}"),
    ("__vkcl_queue_id", "define internal spir_func i64 @__vkcl_queue_id(i64 %x) {\n  ret i64 %x\n}"),
    ("__vkcl_queue", "define internal spir_func i64 @__vkcl_queue(i64 %x) {\n  ret i64 %x\n}"),
    (
        "__vkcl_device_queue_address",
        "define internal spir_func i64 @__vkcl_device_queue_address() {\n  ret i64 %__vkcl_device_queue\n}",
    ),
];

/// The name of the kernel `line` defines.
fn kernel_name(line: &str) -> Option<&str> {
    if !line.starts_with("define ") || !line.contains(" spir_kernel ") {
        return None;
    }
    let at = line.find(" @")? + 2;
    let end = at + line[at..].find('(')?;
    Some(&line[at..end])
}

/// clang's names of block kernels: `__<function>_block_invoke[_<n>]_kernel`.
fn is_block_kernel(name: &str) -> bool {
    name.starts_with("__")
        && name.ends_with("_kernel")
        && name.contains("_block_invoke")
        && !name.starts_with(CHILD)
}

/// The index of the parenthesis closing the one at `open`.
pub(super) fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return Some(open + i),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Where the parameter list of the function `header` names (by `@name`) opens: after the
/// name, not in a return type's `addrspace(N)`.
fn parameters_open(header: &str) -> Option<usize> {
    let at = header.find('@')?;
    Some(at + header[at..].find('(')?)
}

/// The parameters of the function `header` defines, as written.
fn parameters(header: &str) -> Vec<&str> {
    parameters_open(header).map_or(vec![], |open| list(header, open))
}

/// The comma-separated items in the parentheses of `s` opening at `open`.
fn list(s: &str, open: usize) -> Vec<&str> {
    let Some(close) = closing(s, open) else {
        return vec![];
    };
    let inner = s[open + 1..close].trim();
    match inner.is_empty() {
        true => vec![],
        false => super::wrapped_copy::split_args(inner),
    }
}

/// The function a `call` line calls directly.
fn called(line: &str) -> Option<&str> {
    let at = line.find("call ")?;
    let name = line[at..].find(" @")? + at + 2;
    let end = name + line[name..].find('(')?;
    Some(&line[name..end])
}

/// A kernel's header with the state's address as its last parameter.
fn with_parameter(header: &str) -> String {
    let open = parameters_open(header).expect("a define line has parameters");
    let close = closing(header, open).expect("a define line's parameters end");
    let sep = match header[open + 1..close].trim().is_empty() {
        true => "",
        false => ", ",
    };
    format!(
        "{}{sep}i64 %{PARAMETER}{}",
        &header[..close],
        &header[close..]
    )
}

/// One line of a function or of the module, with block literals' function pointers made 0,
/// the null values of `queue_t` and `clk_event_t` made 0, and calls of clang's enqueue
/// functions made calls of the library's.
fn rewrite_line(line: &str, number: &HashMap<&str, usize>) -> Result<String, String> {
    let t = line.trim_start();
    // The literal's function pointer: stored by the enqueuing code, or in a global literal.
    if t.starts_with("store i8 addrspace(4)* addrspacecast (i8* bitcast (") {
        if let Some(at) = t.rfind("i8 addrspace(4)** ") {
            let rest = &t[at + "i8 addrspace(4)** ".len()..];
            return Ok(format!("  store i64 0, i64* {rest}"));
        }
    }
    // A block that captures nothing: a global literal.
    const INVOKE: &str = "i8 addrspace(4)* addrspacecast (";
    if line.starts_with('@') && line.contains("{ i32, i32, i64 }") {
        if let Some(at) = line.find(INVOKE) {
            let open = at + INVOKE.len() - 1;
            if let Some(close) = closing(line, open) {
                return Ok(format!("{}i64 0{}", &line[..at], &line[close + 1..]));
            }
        }
    }
    let mut line = line
        .replace("i64 null", "i64 0")
        .replace("inttoptr (i64 -1 to i64)", "-1")
        .replace("inttoptr (i64 0 to i64)", "0");
    if let Some(at) = line.find("icmp ") {
        let operands = line[at + 5..].split_once(' ').map_or("", |(_, o)| o);
        if operands.starts_with("i64 %") && line.ends_with(", null") {
            line.truncate(line.len() - ", null".len());
            line.push_str(", 0");
        }
    }
    if line.contains("[ null, ") && line.contains(" phi i64 ") {
        line = line.replace("[ null, ", "[ 0, ");
    }
    let Some(callee) = called(&line).filter(|c| DROPPED.contains(c)) else {
        return Ok(line);
    };
    let callee = callee.to_string();
    let at = line.find(&format!("@{callee}(")).expect("found above") + callee.len() + 1;
    let args: Vec<String> = list(&line, at).iter().map(|a| a.to_string()).collect();
    let close = closing(&line, at).ok_or_else(|| format!("unterminated call: {line}"))?;
    let kernel = |a: &str| -> Result<usize, String> {
        let name = a
            .split('@')
            .nth(1)
            .and_then(|n| n.split([' ', ')']).next())
            .ok_or_else(|| format!("{callee}: no block kernel in {a}"))?;
        number
            .get(name)
            .copied()
            .ok_or_else(|| format!("{callee}: {name} is not a block kernel"))
    };
    let strip = |a: &str| strip_attributes(a);
    let none = ("i32 0", "i64 addrspace(4)* null", "i64 addrspace(4)* null");
    let no_locals = ("i32 0", "i64* null");
    let call = match (callee.as_str(), args.as_slice()) {
        ("__enqueue_kernel_basic", [q, f, nd, k, b]) => {
            enqueue(q, f, &strip(nd), kernel(k)?, b, none, no_locals)
        }
        ("__enqueue_kernel_basic_events", [q, f, nd, n, w, r, k, b]) => {
            enqueue(q, f, &strip(nd), kernel(k)?, b, (n, w, r), no_locals)
        }
        ("__enqueue_kernel_varargs", [q, f, nd, k, b, nl, s]) => {
            enqueue(q, f, &strip(nd), kernel(k)?, b, none, (nl, s))
        }
        ("__enqueue_kernel_events_varargs", [q, f, nd, n, w, r, k, b, nl, s]) => {
            enqueue(q, f, &strip(nd), kernel(k)?, b, (n, w, r), (nl, s))
        }
        ("__get_kernel_work_group_size_impl", [k, _]) => {
            kernel(k)?;
            "call spir_func i32 @__vkcl_kernel_work_group_size()".to_string()
        }
        ("__get_kernel_preferred_work_group_size_multiple_impl", [k, _]) => {
            kernel(k)?;
            "call spir_func i32 @__vkcl_kernel_preferred_multiple()".to_string()
        }
        _ => return Err(format!("unexpected call of {callee}: {line}")),
    };
    let start = line.find("call ").expect("a call");
    Ok(format!("{}{call}{}", &line[..start], &line[close + 1..]))
}

/// A call of the library's enqueue function.
fn enqueue(
    queue: &str,
    flags: &str,
    nd: &str,
    kernel: usize,
    block: &str,
    (nevents, wait, ret): (&str, &str, &str),
    (nlocal, sizes): (&str, &str),
) -> String {
    format!(
        "call spir_func i32 @__vkcl_enqueue({queue}, {flags}, {nd}, i32 {kernel}, {block}, \
         {nevents}, {wait}, {ret}, {nlocal}, {sizes})"
    )
}

/// An argument without its parameter attributes (`byval(...)`, `noundef`, `align N`).
fn strip_attributes(a: &str) -> String {
    let mut words: Vec<String> = vec![];
    let mut rest = a.trim();
    while !rest.is_empty() {
        let (w, r) = match rest.find(' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        if w.starts_with("byval(") || w.starts_with("sret(") {
            // Up to its closing parenthesis.
            let close = rest.find(')').map_or(rest.len(), |i| i + 1);
            rest = rest[close..].trim_start();
            continue;
        }
        if w == "noundef" {
            rest = r.trim_start();
            continue;
        }
        if w == "align" {
            rest = r.split_once(' ').map_or("", |(_, r)| r).trim_start();
            continue;
        }
        words.push(w.to_string());
        rest = r.trim_start();
    }
    words.join(" ")
}

/// The child kernel of block kernel `n`: the literal (a global pointer the runtime sets to
/// the recorded bytes) and the `__local` pointers (the state's address is added after, as to
/// every function).
fn child_kernel(
    n: usize,
    b: &BlockKernel,
    metadata: &mut super::generic_flat::Metadata,
) -> Vec<String> {
    let locals: Vec<String> = (0..b.locals)
        .map(|i| format!("i8 addrspace(3)* %local{i}"))
        .collect();
    let params = [
        vec!["i8 addrspace(1)* %literal".to_string()],
        locals.clone(),
    ]
    .concat();
    let each = |first: &str, local: &str| {
        let mut v = vec![first.to_string()];
        v.extend((0..b.locals).map(|_| local.to_string()));
        v.join(", ")
    };
    let names: Vec<String> = std::iter::once("!\"literal\"".to_string())
        .chain((0..b.locals).map(|i| format!("!\"local{i}\"")))
        .collect();
    let space = metadata.add(&each("i32 1", "i32 3"));
    let access = metadata.add(&each("!\"none\"", "!\"none\""));
    let ty = metadata.add(&each("!\"uchar*\"", "!\"void*\""));
    let qual = metadata.add(&each("!\"\"", "!\"\""));
    let name = metadata.add(&names.join(", "));
    let call_args = [vec!["i8 addrspace(4)* %generic".to_string()], locals].concat();
    vec![
        format!(
            "define spir_kernel void @{CHILD}{n}({}) !kernel_arg_addr_space !{space} \
             !kernel_arg_access_qual !{access} !kernel_arg_type !{ty} !kernel_arg_base_type !{ty} \
             !kernel_arg_type_qual !{qual} !kernel_arg_name !{name} {{",
            params.join(", ")
        ),
        "entry:".into(),
        "  %generic = addrspacecast i8 addrspace(1)* %literal to i8 addrspace(4)*".into(),
        format!(
            "  call spir_func void @{}({})",
            b.invoke,
            call_args.join(", ")
        ),
        "  ret void".into(),
        "}".into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_names_as_whole_identifiers() {
        let on = [format!("{ENABLED}256")];
        assert!(uses(b"int r = enqueue_kernel(q, 0, nd, ^{});", &on));
        assert!(uses(b"kernel void k(queue_t q) {}", &on));
        assert!(!uses(b"kernel void k(queue_t q) {}", &[]));
        assert!(!uses(b"int my_enqueue_kernel_count;", &on));
        assert!(!uses(b"kernel void k(global int *o) { o[0] = 1; }", &on));
        // Blocks without enqueue; XORs are not blocks.
        assert!(uses(b"int (^b)(int) = ^int(int n) { return n; };", &on));
        assert!(uses(b"int r = ^{ return 1; }();", &on));
        assert!(uses(b"int r = ^(int n) { return n; }(2);", &on));
        assert!(!uses(b"if (a ^ f(b)) { x = a ^(b); y = c^d; }", &on));
    }

    #[test]
    fn options_for_clang_keep_macros_and_language() {
        let a = clang_args("-cl-std=CL3.0 -DN=4 -I /x -cl-mad-enable -fp64=0 -enable-feature-macros=__opencl_c_int64,__opencl_c_fp64 -inline-entry-points");
        assert!(!a.iter().any(|x| x.starts_with("-D")));
        assert_eq!(
            defines("-DN=4 -D M -Dmad(a,b)=((a)*(b))"),
            "#define N 4\n#define M 1\n#define mad(a,b) ((a)*(b))\n"
        );
        assert!(a.contains(&"-I/x".to_string()));
        assert!(a.contains(&"-cl-mad-enable".to_string()));
        assert!(a.contains(&"-cl-std=CL3.0".to_string()));
        let ext = a
            .iter()
            .find(|x| x.starts_with("-cl-ext=") && x.contains("__opencl_c_pipes"))
            .unwrap();
        assert!(ext.contains("+__opencl_c_int64"));
        assert!(ext.contains("-__opencl_c_fp64"));
        assert!(ext.contains("+__opencl_c_device_enqueue"));
        assert_eq!(
            ir_options("-cl-std=CL3.0 -DN=4 -I /x -inline-entry-points"),
            "-cl-std=CL3.0 -inline-entry-points -x ir"
        );
    }

    /// clang 15's IR of `kernel void k(global int *o, queue_t q) { enqueue_kernel(q, 0,
    /// ndrange_1D(1), ^{ o[0] = 1; }); }` (trimmed), rewritten.
    #[test]
    fn rewrites_an_enqueue_and_its_block() {
        let ll = rewrite(include_str!("testdata/device_enqueue.ll")).unwrap();
        let has = |s: &str| assert!(ll.contains(s), "missing {s:?} in\n{ll}");
        // Queues are numbers; the call is the library's, with the block's kernel as 0 (and
        // without the state's address: the library, which defines the function, is not in
        // this module).
        assert!(!ll.contains("%opencl.queue_t*") && !ll.contains("@__enqueue_kernel_basic"));
        has(
            "%4 = call spir_func i32 @__vkcl_enqueue(i64 %0, i32 0, %struct.ndrange_t* %tmp, \
             i32 0, i8 addrspace(4)* %3, i32 0, i64 addrspace(4)* null, i64 addrspace(4)* null, \
             i32 0, i64* null)\n",
        );
        // The literal holds no function pointer, and its captured pointer as an integer.
        has("store i64 0, i64* %block.invoke, align 8");
        has("<{ i32, i32, i64, i64 }>");
        has("ptrtoint i32 addrspace(1)* %1 to i64");
        has("%0 = inttoptr i64 %__vkcl_int");
        // Every function takes the state's address; the kernel's argument info names it.
        has("@k(i32 addrspace(1)* noundef align 4 %o, i64 %q, i64 %__vkcl_device_queue)");
        has("@__k_block_invoke(i8 addrspace(4)* noundef %.block_descriptor, i64 %__vkcl_device_queue)");
        has("!{!\"o\", !\"q\", !\"__vkcl_device_queue\"}");
        // The block kernel is the runtime's child kernel 0, taking the literal.
        assert!(!ll.contains("@__k_block_invoke_kernel"));
        has("define spir_kernel void @__vkcl_child_0(i8 addrspace(1)* %literal, i64 %__vkcl_device_queue)");
        has("call spir_func void @__k_block_invoke(i8 addrspace(4)* %generic, i64 %__vkcl_device_queue)");
        has("!{!\"literal\", !\"__vkcl_device_queue\"}");
        // -O0's noinline goes (clspv inlines into kernels).
        has("attributes #2 = { convergent nounwind }");
    }

    #[test]
    fn kernels_get_the_state_parameter() {
        let h = "define dso_local spir_kernel void @k(i32 addrspace(1)* noundef align 4 %out, i32 noundef %n) #0 !kernel_arg_addr_space !3 {";
        assert_eq!(
            with_parameter(h),
            "define dso_local spir_kernel void @k(i32 addrspace(1)* noundef align 4 %out, i32 noundef %n, i64 %__vkcl_device_queue) #0 !kernel_arg_addr_space !3 {"
        );
        let e = "define dso_local spir_kernel void @e() #0 {";
        assert_eq!(
            with_parameter(e),
            "define dso_local spir_kernel void @e(i64 %__vkcl_device_queue) #0 {"
        );
    }
}
