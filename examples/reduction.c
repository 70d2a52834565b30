/* reduction: sums 1M integers with a work-group reduction in __local memory (one partial sum
 * per work-group), then the host adds the partial sums.  Runs on the first OpenCL device (or
 * the first whose name contains $VKCL_EXAMPLE_DEVICE).
 * Build: cc -O2 reduction.c -o reduction -lOpenCL */
#include "common.h"

#define LOCAL_SIZE 64

static const char *source =
    "kernel void reduce(global const int *in, global int *partial, local int *tmp) {\n"
    "    uint l = get_local_id(0), n = get_local_size(0);\n"
    "    tmp[l] = in[get_global_id(0)];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint s = n / 2; s > 0; s >>= 1) {\n"
    "        if (l < s) tmp[l] += tmp[l + s];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (l == 0) partial[get_group_id(0)] = tmp[0];\n"
    "}\n";

int main(void) {
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    setup(&device, &ctx, &queue);
    cl_int err;
    cl_program prog = build(ctx, device, source);
    if (!prog) {
        printf("reduction: FAILED\n");
        return 1;
    }
    cl_kernel kernel = clCreateKernel(prog, "reduce", &err);
    CHECK_ERR(err);

    size_t local = LOCAL_SIZE, wg_max = 0;
    CHECK(clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg_max, &wg_max, NULL));
    while (local > wg_max) local /= 2; /* stays a power of two, as the tree reduction needs */

    const size_t n = 1 << 20, groups = n / local;
    cl_int *in = malloc(n * sizeof(cl_int)), *partial = malloc(groups * sizeof(cl_int));
    if (!in || !partial) return 1;
    long long expected = 0;
    for (size_t i = 0; i < n; i++) {
        in[i] = (cl_int)((i * 7919) % 2001) - 1000;
        expected += in[i];
    }
    cl_mem din = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int), in, &err);
    CHECK_ERR(err);
    cl_mem dpartial = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, groups * sizeof(cl_int), NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &din));
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &dpartial));
    CHECK(clSetKernelArg(kernel, 2, local * sizeof(cl_int), NULL));
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &n, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, dpartial, CL_TRUE, 0, groups * sizeof(cl_int), partial, 0, NULL, NULL));

    long long sum = 0;
    size_t bad = 0;
    for (size_t g = 0; g < groups; g++) {
        long long want = 0;
        for (size_t i = g * local; i < (g + 1) * local; i++) want += in[i];
        if (partial[g] != want && bad++ < 5)
            fprintf(stderr, "group %zu: partial %d != %lld\n", g, partial[g], want);
        sum += partial[g];
    }
    printf("%zu work-groups of %zu: sum = %lld (expected %lld)\n", groups, local, sum, expected);

    CHECK(clReleaseMemObject(din));
    CHECK(clReleaseMemObject(dpartial));
    CHECK(clReleaseKernel(kernel));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(queue));
    CHECK(clReleaseContext(ctx));
    free(in);
    free(partial);
    if (bad || sum != expected) {
        printf("reduction: FAILED\n");
        return 1;
    }
    printf("reduction: verified\n");
    return 0;
}
