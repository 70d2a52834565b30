// Source of il_kernels.spv (tests/program_objects.rs), made with Debian's clang-15 and
// llvm-spirv-15:
//   clang-15 -cc1 -triple spir64-unknown-unknown -cl-std=CL1.2 -finclude-default-header \
//       -emit-llvm-bc tests/data/il_kernels.cl -o /tmp/il.bc
//   llvm-spirv-15 /tmp/il.bc -o tests/data/il_kernels.spv
__kernel void saxpy(__global const float *x, __global float *y, float a) {
    size_t i = get_global_id(0);
    y[i] = fma(a, x[i], y[i]);
}

__kernel void block_sum(__global const int *in, __global int *out, __local int *tmp) {
    uint l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < s) tmp[l] += tmp[l + s];
    }
    if (l == 0) out[get_group_id(0)] = tmp[0];
}
