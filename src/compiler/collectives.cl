/* vkcl's work-group collective functions (OpenCL C 2.0 / __opencl_c_work_group_collective_functions;
   clspv 0.0.1 crashes on its own). compiler::collectives declares the scratch array
   vkcl_wg_scratch_[__VKCL_WG_N] in every kernel of a program that names them, and the built-ins' names
   are macros passing it. Each value travels through the scratch as a ulong of its bits; chunks
   of __VKCL_WG_N work-items write theirs, work-item 0 combines them in local-id order (so float
   results are those of a sequential loop), and everyone reads the result back. */
#define __VKCL_WG_FN static inline __attribute__((overloadable))
static inline uint __vkcl_wg_size(void) {
    return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
}
static inline uint __vkcl_wg_lid(void) {
    return (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
}
#define __VKCL_WG_ADD(a, b) ((a) + (b))
#define __VKCL_WG_MIN(a, b) min(a, b)
#define __VKCL_WG_MAX(a, b) max(a, b)
/* reduce, scan_inclusive and scan_exclusive of one operation on T. */
#define __VKCL_WG_OP(T, TO, FROM, NAME, F, ID) \
__VKCL_WG_FN T __vkcl_wg_scan_##NAME(__local ulong *s, T x, int inclusive, int reduce) { \
    uint n = __vkcl_wg_size(), lid = __vkcl_wg_lid(); \
    T carry = ID, r = x; \
    for (uint base = 0; base < n; base += __VKCL_WG_N) { \
        uint m = min(n - base, (uint)__VKCL_WG_N); \
        int mine = lid >= base && lid - base < m; \
        if (mine) s[lid - base] = TO(x); \
        barrier(CLK_LOCAL_MEM_FENCE); \
        if (lid == 0) \
            for (uint j = 0; j < m; j++) { \
                T v = FROM(s[j]); \
                T next = base == 0 && j == 0 ? v : F(carry, v); \
                s[j] = TO(inclusive ? next : carry); \
                carry = next; \
            } \
        barrier(CLK_LOCAL_MEM_FENCE); \
        /* A reduction reads nothing back per chunk: the next chunk may overwrite. */ \
        if (!reduce) { \
            if (mine) r = FROM(s[lid - base]); \
            barrier(CLK_LOCAL_MEM_FENCE); \
        } \
    } \
    if (!reduce) return r; \
    if (lid == 0) s[0] = TO(carry); \
    barrier(CLK_LOCAL_MEM_FENCE); \
    r = FROM(s[0]); \
    barrier(CLK_LOCAL_MEM_FENCE); \
    return r; \
} \
__VKCL_WG_FN T __vkcl_wg_reduce_##NAME(__local ulong *s, T x) { return __vkcl_wg_scan_##NAME(s, x, 1, 1); } \
__VKCL_WG_FN T __vkcl_wg_scan_inclusive_##NAME(__local ulong *s, T x) { return __vkcl_wg_scan_##NAME(s, x, 1, 0); } \
__VKCL_WG_FN T __vkcl_wg_scan_exclusive_##NAME(__local ulong *s, T x) { return __vkcl_wg_scan_##NAME(s, x, 0, 0); }
/* Every function on T: broadcast and the three operations. */
#define __VKCL_WG_TYPE(T, TO, FROM, LO, HI) \
__VKCL_WG_FN T __vkcl_wg_bcast(__local ulong *s, T x, int mine) { \
    if (mine) s[0] = TO(x); \
    barrier(CLK_LOCAL_MEM_FENCE); \
    T r = FROM(s[0]); \
    barrier(CLK_LOCAL_MEM_FENCE); \
    return r; \
} \
__VKCL_WG_FN T __vkcl_wg_broadcast(__local ulong *s, T x, size_t i) { \
    return __vkcl_wg_bcast(s, x, __vkcl_wg_lid() == i); \
} \
__VKCL_WG_FN T __vkcl_wg_broadcast(__local ulong *s, T x, size_t i, size_t j) { \
    return __vkcl_wg_bcast(s, x, get_local_id(0) == i && get_local_id(1) == j); \
} \
__VKCL_WG_FN T __vkcl_wg_broadcast(__local ulong *s, T x, size_t i, size_t j, size_t k) { \
    return __vkcl_wg_bcast(s, x, get_local_id(0) == i && get_local_id(1) == j && get_local_id(2) == k); \
} \
__VKCL_WG_OP(T, TO, FROM, add, __VKCL_WG_ADD, (T)0) \
__VKCL_WG_OP(T, TO, FROM, min, __VKCL_WG_MIN, HI) \
__VKCL_WG_OP(T, TO, FROM, max, __VKCL_WG_MAX, LO)
#define __VKCL_WG_I2U(x) ((ulong)(long)(x))
#define __VKCL_WG_U2U(x) ((ulong)(x))
#define __VKCL_WG_F2U(x) ((ulong)as_uint(x))
#define __VKCL_WG_U2F(u) as_float((uint)(u))
__VKCL_WG_TYPE(int, __VKCL_WG_I2U, (int), INT_MIN, INT_MAX)
__VKCL_WG_TYPE(uint, __VKCL_WG_U2U, (uint), 0u, UINT_MAX)
__VKCL_WG_TYPE(long, __VKCL_WG_U2U, (long), LONG_MIN, LONG_MAX)
__VKCL_WG_TYPE(ulong, __VKCL_WG_U2U, (ulong), 0ul, ULONG_MAX)
__VKCL_WG_TYPE(float, __VKCL_WG_F2U, __VKCL_WG_U2F, -INFINITY, INFINITY)
#ifdef cl_khr_fp64
#define __VKCL_WG_D2U(x) as_ulong(x)
#define __VKCL_WG_U2D(u) as_double(u)
__VKCL_WG_TYPE(double, __VKCL_WG_D2U, __VKCL_WG_U2D, -(double)INFINITY, (double)INFINITY)
#endif
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define __VKCL_WG_H2U(x) ((ulong)as_ushort(x))
#define __VKCL_WG_U2H(u) as_half((ushort)(u))
__VKCL_WG_TYPE(half, __VKCL_WG_H2U, __VKCL_WG_U2H, -(half)INFINITY, (half)INFINITY)
#pragma OPENCL EXTENSION cl_khr_fp16 : disable
#endif
__VKCL_WG_FN int __vkcl_wg_all(__local ulong *s, int p) { return __vkcl_wg_reduce_min(s, p ? 1 : 0); }
__VKCL_WG_FN int __vkcl_wg_any(__local ulong *s, int p) { return __vkcl_wg_reduce_max(s, p ? 1 : 0); }
#undef __VKCL_WG_FN
#define work_group_all(p) __vkcl_wg_all(vkcl_wg_scratch_, (p))
#define work_group_any(p) __vkcl_wg_any(vkcl_wg_scratch_, (p))
#define work_group_broadcast(...) __vkcl_wg_broadcast(vkcl_wg_scratch_, __VA_ARGS__)
#define work_group_reduce_add(x) __vkcl_wg_reduce_add(vkcl_wg_scratch_, (x))
#define work_group_reduce_min(x) __vkcl_wg_reduce_min(vkcl_wg_scratch_, (x))
#define work_group_reduce_max(x) __vkcl_wg_reduce_max(vkcl_wg_scratch_, (x))
#define work_group_scan_inclusive_add(x) __vkcl_wg_scan_inclusive_add(vkcl_wg_scratch_, (x))
#define work_group_scan_inclusive_min(x) __vkcl_wg_scan_inclusive_min(vkcl_wg_scratch_, (x))
#define work_group_scan_inclusive_max(x) __vkcl_wg_scan_inclusive_max(vkcl_wg_scratch_, (x))
#define work_group_scan_exclusive_add(x) __vkcl_wg_scan_exclusive_add(vkcl_wg_scratch_, (x))
#define work_group_scan_exclusive_min(x) __vkcl_wg_scan_exclusive_min(vkcl_wg_scratch_, (x))
#define work_group_scan_exclusive_max(x) __vkcl_wg_scan_exclusive_max(vkcl_wg_scratch_, (x))
