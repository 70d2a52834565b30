//! The sub-group extensions clspv 0.0.1 does not compile, as a library of vkcl's own on the
//! two sub-group operations it does compile right in any control flow: `sub_group_ballot`
//! (OpGroupNonUniformBallot) and `sub_group_shuffle` (OpGroupNonUniformShuffle, scalars).
//!
//! clspv declares cl_khr_subgroup_ballot and cl_khr_subgroup_non_uniform_vote but crashes
//! (SIGSEGV) on every function of them except `sub_group_ballot` and `sub_group_elect`, and
//! does not declare cl_khr_subgroup_shuffle_relative, cl_khr_subgroup_non_uniform_arithmetic
//! or cl_khr_subgroup_clustered_reduce. Macros send those names to the functions here:
//! bit arithmetic on a ballot and the sub-group local id; broadcasts as shuffles from one
//! lane; reductions and scans as a loop over the lanes of the sub-group, in which every
//! active work-item shuffles from each active lane in turn (a shuffle from an inactive lane
//! is undefined, so each takes its own value where the lane is inactive). The loop costs
//! one shuffle per lane of the sub-group: correct, not fast.

/// The extensions the library completes, with those clspv has. All of them have functions on
/// 8- and 16-bit types, which Vulkan allows only with shaderSubgroupExtendedTypes.
pub const EXTENSIONS: &[&str] = &[
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_clustered_reduce",
];

/// Whether a source may use a sub-group function or test a sub-group extension's macro.
pub fn names_any(source: &[u8]) -> bool {
    [&b"sub_group_"[..], b"cl_khr_subgroup"]
        .iter()
        .any(|n| source.windows(n.len()).any(|w| w == *n))
}

/// Scalar types: name, guard macro (None: always there), whether an integer.
const TYPES: &[(&str, Option<&str>, bool)] = &[
    ("char", None, true),
    ("uchar", None, true),
    ("short", None, true),
    ("ushort", None, true),
    ("int", None, true),
    ("uint", None, true),
    ("long", Some("__opencl_c_int64"), true),
    ("ulong", Some("__opencl_c_int64"), true),
    ("float", None, false),
    ("double", Some("cl_khr_fp64"), false),
    ("half", Some("cl_khr_fp16"), false),
];

/// The ballot helpers, the vote functions and the lane loop, independent of the type.
const COMMON: &str = r#"
#define __VKCL_SG static inline __attribute__((overloadable))
__VKCL_SG uint __vkcl_sg_lid(void) { return get_sub_group_local_id(); }
__VKCL_SG uint __vkcl_sg_bit(uint4 v, uint i) {
  uint w = i < 32u ? v.x : i < 64u ? v.y : i < 96u ? v.z : v.w;
  return i < 128u ? (w >> (i & 31u)) & 1u : 0u; }
/* Bits lo <= i < hi. */
__VKCL_SG uint4 __vkcl_sg_range(uint lo, uint hi) {
  uint4 r = (uint4)(0u);
  for (uint i = lo; i < hi && i < 128u; ++i) {
    uint b = 1u << (i & 31u);
    if (i < 32u) r.x |= b; else if (i < 64u) r.y |= b; else if (i < 96u) r.z |= b; else r.w |= b;
  }
  return r; }
__VKCL_SG uint __vkcl_sg_count(uint4 v) {
  return popcount(v.x) + popcount(v.y) + popcount(v.z) + popcount(v.w); }
__VKCL_SG uint4 __vkcl_sg_valid(uint4 v) { return v & __vkcl_sg_range(0u, get_max_sub_group_size()); }
__VKCL_SG int __vkcl_sg_inverse_ballot(uint4 v) { return (int)__vkcl_sg_bit(v, __vkcl_sg_lid()); }
__VKCL_SG int __vkcl_sg_ballot_bit_extract(uint4 v, uint i) { return (int)__vkcl_sg_bit(v, i); }
__VKCL_SG uint __vkcl_sg_ballot_bit_count(uint4 v) { return __vkcl_sg_count(__vkcl_sg_valid(v)); }
__VKCL_SG uint __vkcl_sg_ballot_inclusive_scan(uint4 v) {
  return __vkcl_sg_count(v & __vkcl_sg_range(0u, __vkcl_sg_lid() + 1u)); }
__VKCL_SG uint __vkcl_sg_ballot_exclusive_scan(uint4 v) {
  return __vkcl_sg_count(v & __vkcl_sg_range(0u, __vkcl_sg_lid())); }
/* ctz, which OpenCL C 1.2 lacks. */
__VKCL_SG uint __vkcl_sg_ctz(uint x) { return x == 0u ? 32u : 31u - clz(x & (0u - x)); }
__VKCL_SG uint __vkcl_sg_ballot_find_lsb(uint4 v) {
  v = __vkcl_sg_valid(v);
  return v.x ? __vkcl_sg_ctz(v.x) : v.y ? 32u + __vkcl_sg_ctz(v.y)
       : v.z ? 64u + __vkcl_sg_ctz(v.z) : 96u + __vkcl_sg_ctz(v.w); }
__VKCL_SG uint __vkcl_sg_ballot_find_msb(uint4 v) {
  v = __vkcl_sg_valid(v);
  return v.w ? 127u - clz(v.w) : v.z ? 95u - clz(v.z) : v.y ? 63u - clz(v.y) : 31u - clz(v.x); }
__VKCL_SG uint4 __vkcl_sg_eq_mask(void) { return __vkcl_sg_range(__vkcl_sg_lid(), __vkcl_sg_lid() + 1u); }
__VKCL_SG uint4 __vkcl_sg_ge_mask(void) { return __vkcl_sg_range(__vkcl_sg_lid(), get_max_sub_group_size()); }
__VKCL_SG uint4 __vkcl_sg_gt_mask(void) { return __vkcl_sg_range(__vkcl_sg_lid() + 1u, get_max_sub_group_size()); }
__VKCL_SG uint4 __vkcl_sg_le_mask(void) { return __vkcl_sg_range(0u, __vkcl_sg_lid() + 1u); }
__VKCL_SG uint4 __vkcl_sg_lt_mask(void) { return __vkcl_sg_range(0u, __vkcl_sg_lid()); }
__VKCL_SG uint __vkcl_sg_first(void) { return __vkcl_sg_ballot_find_lsb(sub_group_ballot(1)); }
__VKCL_SG int __vkcl_sg_all(int p) { return all(sub_group_ballot(p != 0) == sub_group_ballot(1)); }
__VKCL_SG int __vkcl_sg_any(int p) { return any(sub_group_ballot(p != 0) != (uint4)(0u)); }
#define __VKCL_SG_LOGICAL_AND(a, b) ((a) && (b))
#define __VKCL_SG_LOGICAL_OR(a, b) ((a) || (b))
#define __VKCL_SG_LOGICAL_XOR(a, b) (!(a) != !(b))
#define __VKCL_SG_ADD(a, b) ((a) + (b))
#define __VKCL_SG_MUL(a, b) ((a) * (b))
#define __VKCL_SG_MIN(a, b) ((b) < (a) ? (b) : (a))
#define __VKCL_SG_MAX(a, b) ((b) > (a) ? (b) : (a))
#define __VKCL_SG_AND(a, b) ((a) & (b))
#define __VKCL_SG_OR(a, b) ((a) | (b))
#define __VKCL_SG_XOR(a, b) ((a) ^ (b))
/* Folds OP over the active lanes lo <= i < hi with i < lid + INCL (scans) or all of them
   (reductions: INCL = 128), starting from ID. */
#define __VKCL_SG_FOLD(T, OP, ID, x, lo, hi, incl) ({ \
  uint4 act_ = sub_group_ballot(1); uint lid_ = __vkcl_sg_lid(); T acc_ = (ID); \
  for (uint i_ = (lo); i_ < (hi); ++i_) { \
    uint on_ = __vkcl_sg_bit(act_, i_); \
    T y_ = sub_group_shuffle((x), on_ ? i_ : lid_); \
    if (on_ && i_ < lid_ + (incl)) acc_ = OP(acc_, y_); } \
  acc_; })
"#;

/// The broadcasts, vote and relative shuffles of one scalar type.
fn broadcasts(t: &str) -> String {
    let f = "__VKCL_SG";
    let mut s = format!(
        "{f} {t} __vkcl_sg_non_uniform_broadcast({t} x, uint i) {{ return sub_group_shuffle(x, i); }}\n\
         {f} {t} __vkcl_sg_broadcast_first({t} x) {{ return sub_group_shuffle(x, __vkcl_sg_first()); }}\n\
         {f} int __vkcl_sg_all_equal({t} x) {{ return __vkcl_sg_all(x == __vkcl_sg_broadcast_first(x)); }}\n\
         {f} {t} __vkcl_sg_shuffle_up({t} x, uint d) {{ return sub_group_shuffle(x, __vkcl_sg_lid() - d); }}\n\
         {f} {t} __vkcl_sg_shuffle_down({t} x, uint d) {{ return sub_group_shuffle(x, __vkcl_sg_lid() + d); }}\n"
    );
    for w in [2, 3, 4, 8, 16] {
        let parts: String = (0..w)
            .map(|c| format!("r.s{c:x} = sub_group_shuffle(x.s{c:x}, i); "))
            .collect();
        s += &format!(
            "{f} {t}{w} __vkcl_sg_non_uniform_broadcast({t}{w} x, uint i) {{ {t}{w} r; {parts}return r; }}\n\
             {f} {t}{w} __vkcl_sg_broadcast_first({t}{w} x) {{ return __vkcl_sg_non_uniform_broadcast(x, __vkcl_sg_first()); }}\n"
        );
    }
    s
}

/// The non-uniform and clustered reductions and scans of one scalar type.
fn arithmetic(t: &str, integer: bool) -> String {
    let f = "__VKCL_SG";
    let n = "get_max_sub_group_size()";
    let mut s = String::new();
    let up = t.to_uppercase().replace("SHORT", "SHRT");
    let (min_id, max_id) = match (integer, t.starts_with('u')) {
        (false, _) => (format!("({t})INFINITY"), format!("({t})-INFINITY")),
        (true, true) => (format!("({t}){up}_MAX"), format!("({t})0")),
        (true, false) => (format!("({t}){up}_MAX"), format!("({t}){up}_MIN")),
    };
    let mut ops = vec![
        ("add", "ADD", format!("({t})0")),
        ("mul", "MUL", format!("({t})1")),
        ("min", "MIN", min_id),
        ("max", "MAX", max_id),
    ];
    if integer {
        ops.push(("and", "AND", format!("({t})~({t})0")));
        ops.push(("or", "OR", format!("({t})0")));
        ops.push(("xor", "XOR", format!("({t})0")));
    }
    if t == "int" {
        ops.push(("logical_and", "LOGICAL_AND", "1".into()));
        ops.push(("logical_or", "LOGICAL_OR", "0".into()));
        ops.push(("logical_xor", "LOGICAL_XOR", "0".into()));
    }
    for (name, op, id) in &ops {
        let fold = |lo: &str, hi: &str, incl: &str| {
            format!("__VKCL_SG_FOLD({t}, __VKCL_SG_{op}, {id}, x, {lo}, {hi}, {incl})")
        };
        let logical = name.starts_with("logical");
        let (ret, norm) = if logical { ("int", "!!") } else { (t, "") };
        s += &format!(
            "{f} {ret} __vkcl_sg_nu_reduce_{name}({t} x) {{ return {norm}{}; }}\n\
             {f} {ret} __vkcl_sg_nu_scan_inclusive_{name}({t} x) {{ return {norm}{}; }}\n\
             {f} {ret} __vkcl_sg_nu_scan_exclusive_{name}({t} x) {{ return {norm}{}; }}\n\
             {f} {ret} __vkcl_sg_clustered_reduce_{name}({t} x, uint c) {{\n\
               uint lo = __vkcl_sg_lid() & ~(c - 1u); return {norm}{}; }}\n",
            fold("0u", n, "128u"),
            fold("0u", n, "1u"),
            fold("0u", n, "0u"),
            fold("lo", &format!("min(lo + c, (uint){n})"), "128u"),
        );
    }
    s
}

/// Macros from the built-ins' names to the library's.
fn renames() -> String {
    let mut names: Vec<(String, String)> = [
        "inverse_ballot",
        "ballot_bit_extract",
        "ballot_bit_count",
        "ballot_inclusive_scan",
        "ballot_exclusive_scan",
        "ballot_find_lsb",
        "ballot_find_msb",
        "non_uniform_broadcast",
        "broadcast_first",
        "shuffle_up",
        "shuffle_down",
    ]
    .iter()
    .map(|n| (format!("sub_group_{n}"), format!("__vkcl_sg_{n}")))
    .collect();
    for m in ["eq", "ge", "gt", "le", "lt"] {
        names.push((
            format!("get_sub_group_{m}_mask"),
            format!("__vkcl_sg_{m}_mask"),
        ));
    }
    for vote in ["all", "any", "all_equal"] {
        names.push((
            format!("sub_group_non_uniform_{vote}"),
            format!("__vkcl_sg_{vote}"),
        ));
    }
    for op in [
        "add",
        "mul",
        "min",
        "max",
        "and",
        "or",
        "xor",
        "logical_and",
        "logical_or",
        "logical_xor",
    ] {
        for kind in ["reduce", "scan_inclusive", "scan_exclusive"] {
            names.push((
                format!("sub_group_non_uniform_{kind}_{op}"),
                format!("__vkcl_sg_nu_{kind}_{op}"),
            ));
        }
        names.push((
            format!("sub_group_clustered_reduce_{op}"),
            format!("__vkcl_sg_clustered_reduce_{op}"),
        ));
    }
    names
        .iter()
        .map(|(from, to)| format!("#define {from} {to}\n"))
        .collect()
}

/// The library, for the prelude of programs that may use it: only where the language has
/// sub-groups (3.0 with __opencl_c_subgroups, else where clspv defines its own sub-group
/// extensions' macros, in every version). The extensions' macros in every version (the
/// extension specifications: defined where the extension is supported; the device lists
/// them); the functions from OpenCL C 1.2 on, where clspv declares the sub-group built-ins.
/// The typed functions only where `names` finds a name of their family (the reductions of
/// every type cost a build some 60 ms on lavapipe's machine).
pub fn prelude(names: impl Fn(&[u8]) -> bool) -> String {
    let mut s = String::from(
        "#if defined(__opencl_c_subgroups) || defined(cl_khr_subgroups) || defined(cl_khr_subgroup_ballot)\n",
    );
    for name in EXTENSIONS {
        s += &format!("#ifndef {name}\n#define {name} 1\n#endif\n");
    }
    s += "#if __OPENCL_C_VERSION__ >= 120\n\
          #pragma clang diagnostic ignored \"-Wgnu-statement-expression\"\n\
          #pragma clang diagnostic ignored \"-Wgnu-statement-expression-from-macro-expansion\"\n";
    s += COMMON;
    let broadcast = [
        &b"non_uniform_broadcast"[..],
        b"broadcast_first",
        b"all_equal",
        b"shuffle_",
    ];
    let fold = [
        &b"non_uniform_reduce"[..],
        b"non_uniform_scan",
        b"clustered_reduce",
    ];
    let (broadcast, fold) = (
        broadcast.iter().any(|n| names(n)),
        fold.iter().any(|n| names(n)),
    );
    for &(t, guard, integer) in TYPES {
        let mut typed = String::new();
        if broadcast {
            typed += &broadcasts(t);
        }
        if fold {
            typed += &arithmetic(t, integer);
        }
        match guard {
            _ if typed.is_empty() => {}
            Some("cl_khr_fp16") => {
                s += &format!(
                    "#ifdef cl_khr_fp16\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n{typed}\
                     #pragma OPENCL EXTENSION cl_khr_fp16 : disable\n#endif\n"
                )
            }
            Some(g) => s += &format!("#ifdef {g}\n{typed}#endif\n"),
            None => s += &typed,
        }
    }
    s += &renames();
    s += "#undef __VKCL_SG\n#endif\n#endif\n";
    s
}
