/* Global-memory read bandwidth of clpeak's shape (issue 21: clpeak's float16 figure is 0.45 of
 * NVIDIA's OpenCL on vkcl, float..float8 0.93-0.96), with the 16-wide loads written several
 * ways, to find which shape of SPIR-V NVIDIA's compiler reads at full width:
 *   cc -O2 tools/diag/wide_loads.c -o wide_loads -lOpenCL; ./wide_loads [platform substring]
 * Each kernel sums 16 loads per work-item of one 256 MiB buffer (clpeak's FETCH_PER_WI),
 * stride get_local_size(0) between loads; GB/s = bytes read / best of 5 launches. */
#include "../../examples/common.h"
#include <time.h>

static const char *source =
    "#define F 16\n"
    "#define BODY(T, load) \\\n"
    "    int id = get_group_id(0) * get_local_size(0) * F + get_local_id(0); T sum = 0; \\\n"
    "    for (int i = 0; i < F; i++) { sum += load; id += get_local_size(0); }\n"
    "kernel void v4(global const float4 *A, global float *B) {\n"
    "    BODY(float4, A[id]) B[get_global_id(0)] = sum.x + sum.y + sum.z + sum.w; }\n"
    "kernel void v8(global const float8 *A, global float *B) {\n"
    "    BODY(float8, A[id]) B[get_global_id(0)] = sum.s0 + sum.s1 + sum.s2 + sum.s3 + sum.s4 + sum.s5 + sum.s6 + sum.s7; }\n"
    "kernel void v16(global const float16 *A, global float *B) {\n"
    "    BODY(float16, A[id]) B[get_global_id(0)] = sum.s0 + sum.s1 + sum.s2 + sum.s3 + sum.s4 + sum.s5 + sum.s6 + sum.s7\n"
    "        + sum.s8 + sum.s9 + sum.sa + sum.sb + sum.sc + sum.sd + sum.se + sum.sf; }\n"
    "#define Q(p, k) (((global const float4 *)(p))[4 * id + k])\n"
    "kernel void v16_as4(global const float16 *A, global float *B) {\n"
    "    BODY(float4, Q(A, 0) + Q(A, 1) + Q(A, 2) + Q(A, 3)) B[get_global_id(0)] = sum.x + sum.y + sum.z + sum.w; }\n"
    "kernel void v16_vload(global const float *A, global float *B) {\n"
    "    BODY(float16, vload16(id, A)) B[get_global_id(0)] = sum.s0 + sum.s1 + sum.s2 + sum.s3 + sum.s4 + sum.s5 + sum.s6 + sum.s7\n"
    "        + sum.s8 + sum.s9 + sum.sa + sum.sb + sum.sc + sum.sd + sum.se + sum.sf; }\n"
    /* float16 loads into four float4 sums: clspv makes a float16 sum an array of 16 floats, and
     * the loop then carries an array-typed OpPhi, which NVIDIA's compiler may keep in memory. */
    "kernel void v16_acc4(global const float16 *A, global float *B) {\n"
    "    int id = get_group_id(0) * get_local_size(0) * F + get_local_id(0); float4 s0 = 0, s1 = 0, s2 = 0, s3 = 0;\n"
    "    for (int i = 0; i < F; i++) { float16 v = A[id]; s0 += v.s0123; s1 += v.s4567; s2 += v.s89ab; s3 += v.scdef;\n"
    "        id += get_local_size(0); }\n"
    "    float4 s = s0 + s1 + s2 + s3; B[get_global_id(0)] = s.x + s.y + s.z + s.w; }\n";

int main(int argc, char **argv) {
    cl_platform_id platform;
    cl_device_id device;
    pick_device_on(argc > 1 ? argv[1] : NULL, &platform, &device);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK_ERR(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(p, 1, &device, "", NULL, NULL));
    size_t bytes = 256u << 20, local = 256;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err);
    CHECK_ERR(err);
    float one = 1.0f;
    CHECK(clEnqueueFillBuffer(q, a, &one, sizeof one, 0, bytes, 0, NULL, NULL));
    const char *names[] = {"v4", "v8", "v16", "v16_as4", "v16_vload", "v16_acc4"};
    size_t widths[] = {16, 32, 64, 64, 64, 64};
    for (int k = 0; k < 6; k++) {
        size_t items = bytes / widths[k] / 16;
        cl_mem b = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, items * 4, NULL, &err);
        CHECK_ERR(err);
        cl_kernel kern = clCreateKernel(p, names[k], &err);
        CHECK_ERR(err);
        CHECK(clSetKernelArg(kern, 0, sizeof a, &a));
        CHECK(clSetKernelArg(kern, 1, sizeof b, &b));
        double best = 1e9;
        for (int r = 0; r < 6; r++) {
            double t0 = now();
            CHECK(clEnqueueNDRangeKernel(q, kern, 1, NULL, &items, &local, 0, NULL, NULL));
            CHECK(clFinish(q));
            double t = now() - t0;
            if (r > 0 && t < best) best = t;
        }
        float got;
        CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 4, &got, 0, NULL, NULL));
        float want = (float)(widths[k] / 4 * 16);
        printf("%-10s %8.1f GB/s%s\n", names[k], bytes / best / 1e9, got == want ? "" : " WRONG");
        clReleaseKernel(kern);
        clReleaseMemObject(b);
    }
    return 0;
}
