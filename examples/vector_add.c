/* vector_add: c[i] = a[i] + b[i] on the first OpenCL device (or the first whose name contains
 * $VKCL_EXAMPLE_DEVICE).  Build: cc -O2 vector_add.c -o vector_add -lOpenCL */
#include "common.h"

static const char *source =
    "kernel void vector_add(global const float *a, global const float *b,\n"
    "                       global float *c, uint n) {\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

int main(void) {
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    setup(&device, &ctx, &queue);
    cl_int err;
    cl_program prog = build(ctx, device, source);
    if (!prog) {
        printf("vector_add: FAILED\n");
        return 1;
    }
    cl_kernel kernel = clCreateKernel(prog, "vector_add", &err);
    CHECK_ERR(err);

    const cl_uint n = 1 << 20;
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)), *c = malloc(n * sizeof(float));
    if (!a || !b || !c) return 1;
    for (cl_uint i = 0; i < n; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = (float)(n - i) * 0.25f;
        c[i] = -1.0f;
    }
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), a, &err);
    CHECK_ERR(err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), b, &err);
    CHECK_ERR(err);
    cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof(float), NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &da));
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &db));
    CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &dc));
    CHECK(clSetKernelArg(kernel, 3, sizeof(cl_uint), &n));
    size_t global = n;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, n * sizeof(float), c, 0, NULL, NULL));

    cl_uint bad = 0;
    for (cl_uint i = 0; i < n; i++) {
        if (c[i] != a[i] + b[i]) {
            if (bad < 5) fprintf(stderr, "mismatch at %u: %f != %f\n", i, c[i], a[i] + b[i]);
            bad++;
        }
    }
    printf("c[0] = %g, c[%u] = %g\n", c[0], n - 1, c[n - 1]);

    CHECK(clReleaseMemObject(da));
    CHECK(clReleaseMemObject(db));
    CHECK(clReleaseMemObject(dc));
    CHECK(clReleaseKernel(kernel));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(queue));
    CHECK(clReleaseContext(ctx));
    free(a);
    free(b);
    free(c);
    if (bad) {
        printf("vector_add: FAILED (%u of %u elements wrong)\n", bad, n);
        return 1;
    }
    printf("vector_add: verified (%u elements)\n", n);
    return 0;
}
