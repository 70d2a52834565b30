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

/// For [`loads_globals`]: only 32-bit integer loads stay atomic loads; 64-bit integers are a
/// fetch_or of 0 (the value, atomically), and floating-point values a volatile load (one
/// aligned load of the whole value; an integer read-modify-write would not be valid SPIR-V on
/// a variable clspv types as floating point), followed by an acquire fence where the order
/// asks for one.
pub const LOAD_PRELUDE: &str = "\
#if __OPENCL_C_VERSION__ == 200 || (__OPENCL_C_VERSION__ >= 300 && defined(__opencl_c_generic_address_space))\n\
#define __VKCL_AL static inline __attribute__((overloadable))\n\
#define __VKCL_LOADS(T, LOAD) \\\n\
  __VKCL_AL T __vkcl_load(volatile atomic_##T *p, memory_order o, memory_scope s) { LOAD } \\\n\
  __VKCL_AL T __vkcl_load(volatile atomic_##T *p, memory_order o) { \\\n\
    memory_scope s = memory_scope_device; LOAD }\n\
#define __VKCL_PLAIN return atomic_load_explicit(p, o, s);\n\
#define __VKCL_RMW return atomic_fetch_or_explicit(p, 0, o, s);\n\
#define __VKCL_VOLATILE(T) T v = *(volatile T *)p; if (o != memory_order_relaxed) \\\n\
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_order_acquire, s); \\\n\
    return v;\n\
__VKCL_LOADS(int, __VKCL_PLAIN)\n\
__VKCL_LOADS(uint, __VKCL_PLAIN)\n\
__VKCL_LOADS(float, __VKCL_VOLATILE(float))\n\
#if defined(cl_khr_int64_base_atomics) && defined(cl_khr_int64_extended_atomics)\n\
__VKCL_LOADS(long, __VKCL_RMW)\n\
__VKCL_LOADS(ulong, __VKCL_RMW)\n\
#if defined(cl_khr_fp64)\n\
__VKCL_LOADS(double, __VKCL_VOLATILE(double))\n\
#endif\n\
#endif\n\
#undef __VKCL_AL\n\
#undef __VKCL_LOADS\n\
#undef __VKCL_PLAIN\n\
#undef __VKCL_RMW\n\
#undef __VKCL_VOLATILE\n\
#define atomic_load_explicit(...) __vkcl_load(__VA_ARGS__)\n\
#define atomic_load(p) __vkcl_load(p, memory_order_seq_cst)\n\
#endif\n";
