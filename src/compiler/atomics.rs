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
