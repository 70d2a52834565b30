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
#endif\n";

/// Whether a source may atomic_load a program-scope variable. clspv 0.0.1 gives all the
/// atomic loads of program-scope variables one type, the first it meets: after a 32-bit
/// load, a load of an `atomic_long` reads its low word only, and a load of one initialized
/// variable crashes it (SIGSEGV; so do an `atomic_float` and an `atomic_double`).
/// Read-modify-writes are right.
pub fn loads_globals(source: &[u8]) -> bool {
    let n = b"atomic_load";
    source.windows(n.len()).any(|w| w == n) && super::globals::declares_writable_globals(source)
}

/// For [`loads_globals`]: every load but those of 32-bit integers is a fetch_or of 0 (the
/// value, atomically), of the integer of its size for floating-point types.
pub const LOAD_PRELUDE: &str = "\
#if __OPENCL_C_VERSION__ == 200 || (__OPENCL_C_VERSION__ >= 300 && defined(__opencl_c_generic_address_space))\n\
#define __VKCL_AL static inline __attribute__((overloadable))\n\
#define __VKCL_LOADS(T, A, LOAD) \\\n\
  __VKCL_AL T __vkcl_load(volatile A *p, memory_order o, memory_scope s) { return LOAD(p, o, s); } \\\n\
  __VKCL_AL T __vkcl_load(volatile A *p, memory_order o) { return LOAD(p, o, memory_scope_device); }\n\
#define __VKCL_PLAIN(p, o, s) atomic_load_explicit(p, o, s)\n\
#define __VKCL_RMW(p, o, s) atomic_fetch_or_explicit(p, 0, o, s)\n\
#define __VKCL_FLOAT(p, o, s) as_float(atomic_fetch_or_explicit((volatile atomic_int *)(p), 0, o, s))\n\
#define __VKCL_DOUBLE(p, o, s) as_double(atomic_fetch_or_explicit((volatile atomic_long *)(p), 0L, o, s))\n\
__VKCL_LOADS(int, atomic_int, __VKCL_PLAIN)\n\
__VKCL_LOADS(uint, atomic_uint, __VKCL_PLAIN)\n\
__VKCL_LOADS(float, atomic_float, __VKCL_FLOAT)\n\
#if defined(cl_khr_int64_base_atomics) && defined(cl_khr_int64_extended_atomics)\n\
__VKCL_LOADS(long, atomic_long, __VKCL_RMW)\n\
__VKCL_LOADS(ulong, atomic_ulong, __VKCL_RMW)\n\
#if defined(cl_khr_fp64)\n\
__VKCL_LOADS(double, atomic_double, __VKCL_DOUBLE)\n\
#endif\n\
#endif\n\
#undef __VKCL_AL\n\
#undef __VKCL_LOADS\n\
#undef __VKCL_PLAIN\n\
#undef __VKCL_RMW\n\
#undef __VKCL_FLOAT\n\
#undef __VKCL_DOUBLE\n\
#define atomic_load_explicit(...) __vkcl_load(__VA_ARGS__)\n\
#define atomic_load(p) __vkcl_load(p, memory_order_seq_cst)\n\
#endif\n";
