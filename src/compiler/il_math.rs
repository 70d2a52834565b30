//! The math built-ins of IL programs through vkcl's own forms, as source programs' are.
//!
//! A program from OpenCL C reaches vkcl's own math built-ins through its prelude's macros
//! (`prelude_math`, `double_sinh_copysign`: where libclc's, as clspv 0.0.1 builds them, miss
//! the accuracy table or crash clspv). An IL program calls the built-ins by their mangled
//! names, which clspv answers with libclc's. And llvm-spirv-15 writes OpFRem and OpFMod as
//! LLVM's `frem` (OpFMod with `llvm.copysign` after it), which clspv passes on as OpFRem:
//! lavapipe's is x - y * trunc(x / y), a few ULP off in one case of ten (conformance
//! spirv_new op_frem_float), where OpenCL's fmod is exact; and clspv lowers double copysign
//! with float masks, so op_fmod_double returned frem + y.
//!
//! So where an IL module calls a built-in the prelude overrides, or has `frem` or a double
//! `llvm.copysign`, its IR text (clspv's `-output-format=ll`, before clspv's passes) gets:
//! - each `frem` as a call of `fmod`, each double `llvm.copysign` as a call of `copysign`;
//! - each call of an overridden built-in renamed `__vkcl_il_NAME` (the same mangled
//!   parameters),
//!
//! and is linked with a library compiled from OpenCL C whose `__vkcl_il_NAME`, one for each
//! form of NAME the prelude defines, calls NAME: the prelude sends that to vkcl's own.
//! Anything that fails on the way leaves the module compiled as it was.

use super::{CompileError, CompileOutput};
use std::collections::BTreeSet;

const PREFIX: &str = "__vkcl_il_";

/// An IL program's `bitcode` compiled with `clspv_args` (`-x ir`), linked with the library of
/// the math built-ins it calls; None where it calls none the prelude overrides, or where a
/// step fails (the caller compiles the bitcode as it is).
pub fn compile(
    bitcode: &[u8],
    clspv_args: &[String],
) -> Option<Result<CompileOutput, CompileError>> {
    let ll_args = [clspv_args, &["-output-format=ll".to_string()]].concat();
    let (ll, _) = super::compile_bytes(&[bitcode], &ll_args).ok()?;
    let ll = String::from_utf8(ll).ok()?;
    let names = called(&ll);
    // The library is OpenCL C: the same arguments without `-x ir`.
    let mut source_args = vec![];
    let mut args = clspv_args.iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-x" => _ = args.next(),
            _ => source_args.push(a.clone()),
        }
    }
    let mention: Vec<&str> = names.iter().map(String::as_str).collect();
    let prelude = super::prelude(&[], &[mention.join(" ").as_bytes()], &source_args);
    let (library, wrapped) = library(&prelude, &names);
    if wrapped.is_empty() {
        return None;
    }
    let object = match super::compile_object(&[library.as_bytes()], &source_args) {
        Ok((object, _)) => object,
        Err(e) => {
            log::warn!(target: "compiler", "the IL math library did not build: {e}");
            return None;
        }
    };
    let text = rewrite(&ll, &wrapped);
    super::dump_file("-il-math.ll", text.as_bytes());
    match super::compile(&[text.as_bytes(), &object], clspv_args) {
        Ok(out) => Some(Ok(out)),
        Err(e) => {
            log::debug!(target: "compiler", "with vkcl's math built-ins: {e}");
            None
        }
    }
}

/// The built-ins the IR text calls (by the names of its `@_Z` functions), with `fmod` where it
/// has `frem` and `copysign` where it has a double `llvm.copysign`.
pub fn called(ll: &str) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = ll
        .match_indices("@_Z")
        .filter_map(|(at, _)| mangled_name(&ll[at + 1..]))
        .map(|(name, _)| name.to_string())
        .collect();
    if ll.contains(" = frem ") {
        names.insert("fmod".into());
    }
    if ll.contains("@llvm.copysign.f64") || ll.contains("@llvm.copysign.v") {
        names.insert("copysign".into());
    }
    names
}

/// The name of the mangled function `s` starts with (`_Z4fmoddd...` → "fmod"), and where its
/// name ends in `s`.
fn mangled_name(s: &str) -> Option<(&str, usize)> {
    let digits = s.strip_prefix("_Z")?;
    let len_end = digits.find(|c: char| !c.is_ascii_digit())?;
    let len: usize = digits[..len_end].parse().ok()?;
    let name = digits.get(len_end..len_end + len)?;
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then_some((name, 2 + len_end + len))
}

/// The OpenCL C library of `__vkcl_il_NAME` forms for the `names` that `prelude` (a prelude
/// for them) sends to `__vkcl_NAME`: each form `__VKCL_FN RET __vkcl_NAME(PARAMS)` of the
/// prelude gets `RET __vkcl_il_NAME(PARAMS) { return NAME(ARGS); }`, in the same extension's
/// guard. Forms with an unqualified (generic) pointer are left out. Returns the source and the
/// names it has forms of.
pub fn library(prelude: &str, names: &BTreeSet<String>) -> (String, BTreeSet<String>) {
    let overridden: BTreeSet<&str> = prelude
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("#define ")?.split_once('(')?;
            rest.contains(&format!(" __vkcl_{name}(")).then_some(name)
        })
        .filter(|n| names.contains(*n))
        .collect();
    let (mut plain, mut double, mut half) = (String::new(), String::new(), String::new());
    let mut seen = BTreeSet::new();
    let mut wrapped = BTreeSet::new();
    for line in prelude.lines() {
        let Some(head) = line.strip_prefix("__VKCL_FN ") else {
            continue;
        };
        let Some((ret, rest)) = head.split_once(" __vkcl_") else {
            continue;
        };
        let Some((name, rest)) = rest.split_once('(') else {
            continue;
        };
        let Some((params, _)) = rest.split_once(')') else {
            continue;
        };
        let generic = params.split(',').any(|p| {
            p.contains('*')
                && !["__global", "__local", "__private", "__constant"]
                    .iter()
                    .any(|q| p.contains(q))
        });
        if !overridden.contains(name) || generic || !seen.insert(format!("{ret} {name}({params})"))
        {
            continue;
        }
        let args: Vec<&str> = params
            .split(',')
            .filter_map(|p| p.trim().rsplit([' ', '*']).next())
            .collect();
        let form = format!(
            "__attribute__((overloadable)) {ret} {PREFIX}{name}({params}) {{ return {name}({}); }}\n",
            args.join(", ")
        );
        match (line.contains("double"), line.contains("half")) {
            (true, _) => double += &form,
            (false, true) => half += &form,
            _ => plain += &form,
        }
        wrapped.insert(name.to_string());
    }
    let mut source = plain;
    if !double.is_empty() {
        source += &format!(
            "#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n{double}#endif\n"
        );
    }
    if !half.is_empty() {
        source += &format!(
            "#ifdef cl_khr_fp16\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n{half}#endif\n"
        );
    }
    (source, wrapped)
}

/// The IR text with `frem` and double `llvm.copysign` as calls of `fmod` and `copysign`, and
/// every function of the built-ins in `wrapped` renamed `__vkcl_il_NAME`.
pub fn rewrite(ll: &str, wrapped: &BTreeSet<String>) -> String {
    let mut declared = BTreeSet::new();
    let mut lines = vec![];
    for line in ll.lines() {
        let call = frem_call(line, wrapped).or_else(|| copysign_call(line, wrapped));
        match call {
            Some((call, declaration)) => {
                lines.push(call);
                declared.insert(declaration);
            }
            None => lines.push(line.to_string()),
        }
    }
    let mut out = lines.join("\n");
    for name in wrapped {
        out = renamed(&out, name);
    }
    out.push('\n');
    for d in declared {
        // Unless the module declares (or defines) the function already.
        let function = &d[d.find('@').unwrap_or(0)..d.find('(').unwrap_or(d.len()) + 1];
        let known = out.lines().any(|l| {
            (l.starts_with("declare ") || l.starts_with("define ")) && l.contains(function)
        });
        if !known {
            out += &d;
            out.push('\n');
        }
    }
    out
}

/// `text` with every function `_Z<len><name>...` named `_Z<len + 10>__vkcl_il_<name>...`.
fn renamed(text: &str, name: &str) -> String {
    let from = format!("@_Z{}{name}", name.len());
    let to = format!("@_Z{}{PREFIX}{name}", name.len() + PREFIX.len());
    text.replace(&from, &to)
}

/// The mangled parameter type of an IR type (`double`, `<2 x float>`); None for others.
fn mangled(ty: &str) -> Option<String> {
    let scalar = |t: &str| match t {
        "half" => Some("Dh"),
        "float" => Some("f"),
        "double" => Some("d"),
        _ => None,
    };
    match ty.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        Some(v) => {
            let (n, t) = v.split_once(" x ")?;
            Some(format!("Dv{n}_{}", scalar(t)?))
        }
        None => scalar(ty).map(str::to_string),
    }
}

/// The two-argument built-in `name` called as `%r = call spir_func TY @...(TY a, TY b)`
/// for a line `%r = ... TY a, b`-shaped, and its declaration (renamed where `wrapped`).
fn two_argument_call(
    result: &str,
    name: &str,
    ty: &str,
    a: &str,
    b: &str,
    wrapped: &BTreeSet<String>,
) -> Option<(String, String)> {
    let m = mangled(ty)?;
    let second = if ty.starts_with('<') {
        "S_".to_string()
    } else {
        m.clone()
    };
    let function = match wrapped.contains(name) {
        true => format!("_Z{}{PREFIX}{name}{m}{second}", name.len() + PREFIX.len()),
        false => format!("_Z{}{name}{m}{second}", name.len()),
    };
    Some((
        format!("{result} = call spir_func {ty} @{function}({ty} {a}, {ty} {b})"),
        format!("declare spir_func {ty} @{function}({ty}, {ty})"),
    ))
}

/// `%r = frem [flags] TY a, b` as a call of fmod.
fn frem_call(line: &str, wrapped: &BTreeSet<String>) -> Option<(String, String)> {
    let (result, rest) = line.split_once(" = frem ")?;
    let words: Vec<&str> = rest.split(' ').collect();
    // The fast-math flags, then the type (`double` or `<N x T>`, three words).
    let at = words
        .iter()
        .position(|w| mangled(w).is_some() || w.starts_with('<'))?;
    let (ty, operands) = match words[at].starts_with('<') {
        true => (
            words.get(at..at + 3)?.join(" "),
            words.get(at + 3..)?.join(" "),
        ),
        false => (words[at].to_string(), words.get(at + 1..)?.join(" ")),
    };
    let (a, b) = operands.split_once(", ")?;
    // (Metadata may follow the second operand.)
    let b = b.split(',').next()?.trim();
    if a.contains(['<', '(', '[', ' ']) || b.contains(['<', '(', '[', ' ']) {
        return None;
    }
    two_argument_call(result, "fmod", &ty, a, b, wrapped)
}

/// `%r = [tail] call [flags] TY @llvm.copysign.*(TY a, TY b)` of doubles (or double vectors)
/// as a call of copysign; None where an argument is a constant.
fn copysign_call(line: &str, wrapped: &BTreeSet<String>) -> Option<(String, String)> {
    let (result, rest) = line.split_once(" = ")?;
    let (before, rest) = rest.split_once(" @llvm.copysign.")?;
    if !before.contains("call") {
        return None;
    }
    let ty = match before.rfind('<') {
        Some(at) if before.ends_with('>') => &before[at..],
        _ => before.rsplit(' ').next()?,
    };
    if !ty.contains("double") {
        return None;
    }
    let args = rest.split_once('(')?.1.rsplit_once(')')?.0;
    let (a, b) = args.split_once(", ")?;
    fn value(arg: &str) -> Option<&str> {
        arg.rsplit(' ').next().filter(|v| v.starts_with('%'))
    }
    two_argument_call(result, "copysign", ty, value(a)?, value(b)?, wrapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frem_and_copysign_become_calls_of_the_wrapped_built_ins() {
        let wrapped: BTreeSet<String> = ["fmod".to_string(), "copysign".to_string()].into();
        let ll = "  %r = frem double %8, %10\n  %s = frem fast <2 x float> %a, %b\n  \
                  %c = call double @llvm.copysign.f64(double %r, double %10)\n  \
                  %d = call spir_func double @_Z4fmoddd(double %1, double %2)\n\
                  declare spir_func double @_Z4fmoddd(double, double)";
        let out = rewrite(ll, &wrapped);
        assert!(
            out.contains("%r = call spir_func double @_Z14__vkcl_il_fmoddd(double %8, double %10)"),
            "{out}"
        );
        assert!(out.contains("%s = call spir_func <2 x float> @_Z14__vkcl_il_fmodDv2_fS_(<2 x float> %a, <2 x float> %b)"), "{out}");
        assert!(
            out.contains(
                "%c = call spir_func double @_Z18__vkcl_il_copysigndd(double %r, double %10)"
            ),
            "{out}"
        );
        assert!(
            out.contains("%d = call spir_func double @_Z14__vkcl_il_fmoddd(double %1, double %2)"),
            "{out}"
        );
        assert_eq!(
            out.matches("declare spir_func double @_Z14__vkcl_il_fmoddd")
                .count(),
            1,
            "{out}"
        );
        assert_eq!(
            out.matches("declare spir_func <2 x float> @_Z14__vkcl_il_fmodDv2_fS_")
                .count(),
            1,
            "{out}"
        );
        assert_eq!(
            called(ll),
            ["copysign".to_string(), "fmod".to_string()].into()
        );
    }

    #[test]
    fn the_library_forwards_each_form_the_prelude_defines() {
        let prelude = "__VKCL_FN double __vkcl_fmod(double x, double y) {\nreturn 1;}\n\
                       __VKCL_FN float2 __vkcl_fmod(float2 x, float2 y) { return x; }\n\
                       __VKCL_FN double __vkcl_fmod_d(double x) {\n\
                       __VKCL_FN float __vkcl_frexp(float x, __global int *p) { }\n\
                       __VKCL_FN float __vkcl_frexp(float x, int *p) { }\n\
                       #define fmod(x, y) __vkcl_fmod(x, y)\n#define frexp(x, p) __vkcl_frexp(x, p)\n";
        let names = ["fmod".to_string(), "frexp".to_string(), "sin".to_string()].into();
        let (source, wrapped) = library(prelude, &names);
        assert_eq!(wrapped, ["fmod".to_string(), "frexp".to_string()].into());
        assert!(
            source.contains("float2 __vkcl_il_fmod(float2 x, float2 y) { return fmod(x, y); }"),
            "{source}"
        );
        assert!(source.contains("#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n__attribute__((overloadable)) double __vkcl_il_fmod(double x, double y) { return fmod(x, y); }\n#endif"), "{source}");
        assert!(
            source.contains(
                "float __vkcl_il_frexp(float x, __global int *p) { return frexp(x, p); }"
            ),
            "{source}"
        );
        assert_eq!(source.matches("__vkcl_il_frexp").count(), 1, "{source}");
        assert!(!source.contains("fmod_d"), "{source}");
    }
}
