//! C11 atomics clspv gets wrong, rewritten in the OpenCL C prelude: atomic loads of every
//! type and seq_cst loads and stores ([`ACCESS_PRELUDE`]), and the atomic_flag functions.
//!
//! `atomic_flag_test_and_set_explicit` / `atomic_flag_clear_explicit` as the int atomics
//! they are. clspv 0.0.1 gives both the memory semantics of workgroup memory whatever the
//! flag's address space (OpAtomicExchange … AcquireRelease|WorkgroupMemory on a flag in a
//! global buffer), so an acquire or release on a global flag would not order the global
//! memory around it. `atomic_exchange_explicit` and `atomic_store_explicit` through a generic
//! pointer get the semantics of the address space clspv infers for it (UniformMemory for
//! global, WorkgroupMemory for local).

/// Whether a source may use the functions.
pub fn names_any(source: &[u8]) -> bool {
    let n = b"atomic_flag_";
    source.windows(n.len()).any(|w| w == n)
}

/// The functions and the macros that send the built-ins' names to them; only where the
/// language has the generic address space.
pub const PRELUDE: &str = "\
#if __OPENCL_C_VERSION__ == 200 || (__OPENCL_C_VERSION__ >= 300 && defined(__opencl_c_generic_address_space))\n\
#define __VKCL_AF static inline __attribute__((overloadable))\n\
__VKCL_AF bool __vkcl_flag_test_and_set(volatile atomic_int *p, memory_order o, memory_scope s) {\n\
  return atomic_exchange_explicit(p, 1, o, s) != 0; }\n\
__VKCL_AF bool __vkcl_flag_test_and_set(volatile atomic_int *p, memory_order o) {\n\
  return atomic_exchange_explicit(p, 1, o, memory_scope_device) != 0; }\n\
__VKCL_AF void __vkcl_flag_clear(volatile atomic_int *p, memory_order o, memory_scope s) {\n\
  atomic_store_explicit(p, 0, o, s); }\n\
__VKCL_AF void __vkcl_flag_clear(volatile atomic_int *p, memory_order o) {\n\
  atomic_store_explicit(p, 0, o, memory_scope_device); }\n\
#undef __VKCL_AF\n\
#define atomic_flag_test_and_set_explicit(p, ...) __vkcl_flag_test_and_set((volatile atomic_int *)(p), __VA_ARGS__)\n\
#define atomic_flag_clear_explicit(p, ...) __vkcl_flag_clear((volatile atomic_int *)(p), __VA_ARGS__)\n\
#if __OPENCL_C_VERSION__ == 200 || defined(__opencl_c_atomic_order_seq_cst)\n\
#define atomic_flag_test_and_set(p) __vkcl_flag_test_and_set((volatile atomic_int *)(p), (memory_order)__ATOMIC_SEQ_CST)\n\
#define atomic_flag_clear(p) __vkcl_flag_clear((volatile atomic_int *)(p), (memory_order)__ATOMIC_SEQ_CST)\n\
#endif\n\
#endif\n";

/// Whether a source may load or store atomics: the loads and stores [`ACCESS_PRELUDE`]
/// rewrites.
pub fn accesses(source: &[u8]) -> bool {
    [
        &b"atomic_load"[..],
        b"atomic_store",
        b"atomic_flag_",
        b"atomic_exchange",
        b"atomic_compare_exchange",
    ]
    .iter()
    .any(|n| source.windows(n.len()).any(|w| w == *n))
}

/// Atomic loads, stores, exchanges and compare-exchanges of every type, as overloads that
/// macros send the built-ins to (OpenCL C 2.0, or 3.0 with the generic address space; the
/// forms without `_explicit` where the language has them).
///
/// - clspv 0.0.1 gives every atomic load of a module the type of the first it meets: after an
///   int load, a long load read the low word only and a float load crashed clspv; with
///   program-scope variables also where they are initialized, or for `atomic_float` with
///   `atomic_double` (tests/c11_atomics.rs, tests/globals.rs). So the only atomic loads left
///   are 32-bit integer ones: 64-bit integers are a fetch_or of 0 (the value, atomically).
/// - Floats and doubles are loaded and stored with volatile accesses (one aligned access of
///   the whole value), with an acquire fence after a load and a release fence before a store
///   where the order asks for them: an atomic float store needs VK_EXT_shader_atomic_float
///   (lavapipe has no 64-bit one). Their exchanges and compare-exchanges are those of their
///   bits as int and long: clspv crashed on a float compare-exchange ("Invalid operand types
///   for ICmp"), and a double exchange needs 64-bit float atomics. (Compare-exchange compares
///   the bits, as C11's does; weak is strong, as clspv makes it anyway.)
/// - `__VKCL_SEQ_CST` (`Target::seq_cst`: lavapipe, whose atomics are sequentially consistent
///   once seq_cst loads and stores are read-modify-writes): clspv weakens seq_cst to a release
///   store and an acquire load, which lets two work-items each miss the other's store (the
///   store-buffering outcome, seen on lavapipe). A seq_cst integer store becomes an exchange
///   and a seq_cst integer load a fetch_or of 0; a seq_cst float load follows a seq_cst fence
///   and a seq_cst float store is followed by one (llvmpipe makes every fence a full barrier
///   and every read-modify-write a seq_cst one). `__ATOMIC_SEQ_CST` is memory_order_seq_cst's
///   value: clspv warns wherever the name appears.
pub const ACCESS_PRELUDE: &str = "\
#if __OPENCL_C_VERSION__ == 200 || (__OPENCL_C_VERSION__ >= 300 && defined(__opencl_c_generic_address_space))\n\
#define __VKCL_AA static inline __attribute__((overloadable))\n\
#ifdef __VKCL_SEQ_CST\n\
#define __VKCL_SC(o) ((o) == __ATOMIC_SEQ_CST)\n\
#else\n\
#define __VKCL_SC(o) 0\n\
#endif\n\
#define __VKCL_INT if (__VKCL_SC(o)) return atomic_fetch_or_explicit(p, 0, o, s); \\\n\
    return atomic_load_explicit(p, o, s);\n\
#define __VKCL_WIDE return atomic_fetch_or_explicit(p, 0, o, s);\n\
#define __VKCL_FENCE(o) atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, o, s);\n\
#define __VKCL_FLOAT_LOAD(T) if (__VKCL_SC(o)) __VKCL_FENCE((memory_order)__ATOMIC_SEQ_CST) \\\n\
  T v = *(volatile T *)p; if (o != memory_order_relaxed) __VKCL_FENCE(memory_order_acquire) \\\n\
  return v;\n\
#define __VKCL_STORE if (__VKCL_SC(o)) (void)atomic_exchange_explicit(p, v, o, s); \\\n\
    else atomic_store_explicit(p, v, o, s);\n\
#define __VKCL_FLOAT_STORE(T) if (o != memory_order_relaxed) __VKCL_FENCE(memory_order_release) \\\n\
  *(volatile T *)p = v; if (__VKCL_SC(o)) __VKCL_FENCE((memory_order)__ATOMIC_SEQ_CST)\n\
#define __VKCL_ACCESSES(T, LOAD, STORE) \\\n\
  __VKCL_AA T __vkcl_load(volatile atomic_##T *p, memory_order o, memory_scope s) { LOAD } \\\n\
  __VKCL_AA T __vkcl_load(volatile atomic_##T *p, memory_order o) { \\\n\
    return __vkcl_load(p, o, memory_scope_device); } \\\n\
  __VKCL_AA void __vkcl_store(volatile atomic_##T *p, T v, memory_order o, memory_scope s) { \\\n\
    STORE } \\\n\
  __VKCL_AA void __vkcl_store(volatile atomic_##T *p, T v, memory_order o) { \\\n\
    __vkcl_store(p, v, o, memory_scope_device); }\n\
__VKCL_ACCESSES(int, __VKCL_INT, __VKCL_STORE)\n\
__VKCL_ACCESSES(uint, __VKCL_INT, __VKCL_STORE)\n\
__VKCL_ACCESSES(float, __VKCL_FLOAT_LOAD(float), __VKCL_FLOAT_STORE(float))\n\
#if defined(cl_khr_int64_base_atomics) && defined(cl_khr_int64_extended_atomics)\n\
__VKCL_ACCESSES(long, __VKCL_WIDE, __VKCL_STORE)\n\
__VKCL_ACCESSES(ulong, __VKCL_WIDE, __VKCL_STORE)\n\
#if defined(cl_khr_fp64)\n\
__VKCL_ACCESSES(double, __VKCL_FLOAT_LOAD(double), __VKCL_FLOAT_STORE(double))\n\
#endif\n\
#endif\n\
#define __VKCL_INT_RMWS(T) \\\n\
  __VKCL_AA T __vkcl_xchg(volatile atomic_##T *p, T v, memory_order o, memory_scope s) { \\\n\
    return atomic_exchange_explicit(p, v, o, s); } \\\n\
  __VKCL_AA bool __vkcl_cas(volatile atomic_##T *p, T *e, T d, memory_order os, \\\n\
      memory_order of, memory_scope s) { \\\n\
    return atomic_compare_exchange_strong_explicit(p, e, d, os, of, s); }\n\
#define __VKCL_FLOAT_RMWS(T, I) \\\n\
  __VKCL_AA T __vkcl_xchg(volatile atomic_##T *p, T v, memory_order o, memory_scope s) { \\\n\
    return as_##T(atomic_exchange_explicit((volatile atomic_##I *)p, as_##I(v), o, s)); } \\\n\
  __VKCL_AA bool __vkcl_cas(volatile atomic_##T *p, T *e, T d, memory_order os, \\\n\
      memory_order of, memory_scope s) { \\\n\
    I ei = as_##I(*e); \\\n\
    bool r = atomic_compare_exchange_strong_explicit((volatile atomic_##I *)p, &ei, as_##I(d), \\\n\
        os, of, s); \\\n\
    *e = as_##T(ei); return r; }\n\
#define __VKCL_RMW_DEFAULTS(T) \\\n\
  __VKCL_AA T __vkcl_xchg(volatile atomic_##T *p, T v, memory_order o) { \\\n\
    return __vkcl_xchg(p, v, o, memory_scope_device); } \\\n\
  __VKCL_AA bool __vkcl_cas(volatile atomic_##T *p, T *e, T d, memory_order os, \\\n\
      memory_order of) { return __vkcl_cas(p, e, d, os, of, memory_scope_device); }\n\
__VKCL_INT_RMWS(int) __VKCL_RMW_DEFAULTS(int)\n\
__VKCL_INT_RMWS(uint) __VKCL_RMW_DEFAULTS(uint)\n\
__VKCL_FLOAT_RMWS(float, int) __VKCL_RMW_DEFAULTS(float)\n\
#if defined(cl_khr_int64_base_atomics) && defined(cl_khr_int64_extended_atomics)\n\
__VKCL_INT_RMWS(long) __VKCL_RMW_DEFAULTS(long)\n\
__VKCL_INT_RMWS(ulong) __VKCL_RMW_DEFAULTS(ulong)\n\
#if defined(cl_khr_fp64)\n\
__VKCL_FLOAT_RMWS(double, long) __VKCL_RMW_DEFAULTS(double)\n\
#endif\n\
#endif\n\
#undef __VKCL_INT_RMWS\n\
#undef __VKCL_FLOAT_RMWS\n\
#undef __VKCL_RMW_DEFAULTS\n\
#undef __VKCL_AA\n\
#undef __VKCL_SC\n\
#undef __VKCL_INT\n\
#undef __VKCL_WIDE\n\
#undef __VKCL_FENCE\n\
#undef __VKCL_FLOAT_LOAD\n\
#undef __VKCL_STORE\n\
#undef __VKCL_FLOAT_STORE\n\
#undef __VKCL_ACCESSES\n\
#define atomic_load_explicit(...) __vkcl_load(__VA_ARGS__)\n\
#define atomic_store_explicit(...) __vkcl_store(__VA_ARGS__)\n\
#define atomic_exchange_explicit(...) __vkcl_xchg(__VA_ARGS__)\n\
#define atomic_compare_exchange_strong_explicit(...) __vkcl_cas(__VA_ARGS__)\n\
#define atomic_compare_exchange_weak_explicit(...) __vkcl_cas(__VA_ARGS__)\n\
#if __OPENCL_C_VERSION__ == 200 || defined(__opencl_c_atomic_order_seq_cst)\n\
#define __VKCL_SEQ (memory_order)__ATOMIC_SEQ_CST\n\
#define atomic_load(p) __vkcl_load(p, __VKCL_SEQ)\n\
#define atomic_store(p, v) __vkcl_store(p, v, __VKCL_SEQ)\n\
#define atomic_exchange(p, v) __vkcl_xchg(p, v, __VKCL_SEQ)\n\
#define atomic_compare_exchange_strong(p, e, d) __vkcl_cas(p, e, d, __VKCL_SEQ, __VKCL_SEQ)\n\
#define atomic_compare_exchange_weak(p, e, d) __vkcl_cas(p, e, d, __VKCL_SEQ, __VKCL_SEQ)\n\
#endif\n\
#endif\n";
