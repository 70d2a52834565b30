//! `async_work_group_copy` and `async_work_group_strided_copy` of `double` and `doublen`
//! elements, in the prelude of programs that name them: clspv 0.0.1 lowers these built-ins
//! over 32-bit float elements, so a double copy moved half the bytes to the wrong places (each
//! element its low word twice; `double2` and wider only the first half of the range: the
//! conformance suite's basic async_copy tests). vkcl's copy is the work-group's work-items
//! moving one element at a time in a loop; `wait_group_events`, the built-in, is the barrier
//! that makes it visible. Other element types keep the built-ins: the macros choose at compile
//! time by the element type (`__builtin_choose_expr`). Both branches are type-checked, so the
//! copy is a statement expression that is valid for every element type, and the direction of
//! a strided copy (which side the stride applies to) is whether the destination is `__local`.

/// The double element types (a 3-element vector is copied as the 4-element one it is in
/// memory, as the spec says).
const TYPES: [&str; 6] = [
    "double", "double2", "double3", "double4", "double8", "double16",
];

/// The prelude's macros.
pub(super) fn prelude() -> String {
    let double: Vec<String> = TYPES
        .iter()
        .map(|t| format!("__builtin_types_compatible_p(__typeof__(+(d)[0]), {t})"))
        .collect();
    // A statement expression: `d` and `s` once each, the element index of each side (`step`
    // of the destination's and the source's), `e` as the result.
    let copy = |dst_step: &str, src_step: &str| {
        format!(
            "({{ __typeof__(&(d)[0]) __vkcl_d = (d); __typeof__(&(s)[0]) __vkcl_s = (s); \
             size_t __vkcl_n = (n); \
             size_t __vkcl_i = (get_local_id(2) * get_local_size(1) + get_local_id(1)) * \
             get_local_size(0) + get_local_id(0); \
             size_t __vkcl_all = get_local_size(0) * get_local_size(1) * get_local_size(2); \
             for (; __vkcl_i < __vkcl_n; __vkcl_i += __vkcl_all) \
             __vkcl_d[__vkcl_i * {dst_step}] = __vkcl_s[__vkcl_i * {src_step}]; (event_t)(e); }})"
        )
    };
    // For a strided copy, the stride applies to the global side.
    let local = "__builtin_types_compatible_p(__typeof__(&(d)[0]), __local __typeof__(+(d)[0]) *)";
    format!(
        "#define __VKCL_DOUBLE_ELEMENTS(d) ({})\n\
         #define async_work_group_copy(d, s, n, e) \
         __builtin_choose_expr(__VKCL_DOUBLE_ELEMENTS(d), {}, (async_work_group_copy)(d, s, n, e))\n\
         #define async_work_group_strided_copy(d, s, n, k, e) \
         __builtin_choose_expr(__VKCL_DOUBLE_ELEMENTS(d), {}, \
         (async_work_group_strided_copy)(d, s, n, k, e))\n",
        double.join(" || "),
        copy("1", "1"),
        copy(
            &format!("({local} ? (size_t)1 : (size_t)(k))"),
            &format!("({local} ? (size_t)(k) : (size_t)1)")
        ),
    )
}
