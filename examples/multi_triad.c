// Benchmark (issue 22): the triad a[i] = b[i] + s * c[i] in a context of every device the
// platform lists (run with VKCL_DEVICE_COPIES=2 to get one GPU twice, each its own VkDevice)
// against the same triad in a context of that device alone: GB/s of each launch on each
// device and the ratio. The buffers start on the first device; device 1's first launch brings
// them (timed apart as "first"); the steady figures are the best of 10 launches after it.
// Then launches alternating between the two devices (the written array moves each time
// where the devices keep copies).
// `multi_triad [MIB]` (default 256 MiB per array).
#include "common.h"
#include <stdlib.h>
#include <time.h>

static const char *SOURCE =
    "kernel void triad(global float *a, global const float *b, global const float *c, float s) {\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = b[i] + s * c[i];\n"
    "}\n";

static double launch(cl_command_queue q, cl_kernel k, size_t n) {
    double t0 = now();
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
    return now() - t0;
}

// GB/s of the first launch on each device (in `first`) and the best of 10 after it.
static void triads(cl_uint ndev, cl_device_id *devs, size_t n, float *host, double *first, double *best) {
    cl_int err;
    cl_context ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &SOURCE, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(p, ndev, devs, NULL, NULL, NULL));
    cl_mem m[3];
    for (int j = 0; j < 3; j++) {
        m[j] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), host, &err);
        CHECK_ERR(err);
    }
    float s = 3.0f;
    double bytes = 3.0 * n * sizeof(float) / 1e9;
    for (cl_uint d = 0; d < ndev; d++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[d], NULL, &err);
        CHECK_ERR(err);
        cl_kernel k = clCreateKernel(p, "triad", &err);
        CHECK_ERR(err);
        for (int j = 0; j < 3; j++) CHECK(clSetKernelArg(k, j, sizeof(cl_mem), &m[j]));
        CHECK(clSetKernelArg(k, 3, sizeof s, &s));
        first[d] = bytes / launch(q, k, n);
        double t = 1e30;
        for (int r = 0; r < 10; r++) {
            double x = launch(q, k, n);
            if (x < t) t = x;
        }
        best[d] = bytes / t;
        // Check one value: a = b + 3c after 11 launches is b + 3c (b, c unchanged).
        float a;
        CHECK(clEnqueueReadBuffer(q, m[0], CL_TRUE, 4 * 7, 4, &a, 0, NULL, NULL));
        if (a != host[7] + 3.0f * host[7]) {
            fprintf(stderr, "wrong result on device %u: %f\n", d, a);
            exit(1);
        }
        clReleaseKernel(k);
        clReleaseCommandQueue(q);
    }
    for (int j = 0; j < 3; j++) clReleaseMemObject(m[j]);
    clReleaseProgram(p);
    clReleaseContext(ctx);
}

// GB/s of 10 launches alternating between the two devices of one context (each after the
// other's end): what moving the written array between the devices costs.
static double alternating(cl_device_id *devs, size_t n, float *host) {
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 2, devs, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &SOURCE, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(p, 2, devs, NULL, NULL, NULL));
    cl_mem m[3];
    for (int j = 0; j < 3; j++) {
        m[j] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), host, &err);
        CHECK_ERR(err);
    }
    float s = 3.0f;
    cl_command_queue q[2];
    cl_kernel k[2];
    for (int d = 0; d < 2; d++) {
        q[d] = clCreateCommandQueueWithProperties(ctx, devs[d], NULL, &err);
        CHECK_ERR(err);
        k[d] = clCreateKernel(p, "triad", &err);
        CHECK_ERR(err);
        for (int j = 0; j < 3; j++) CHECK(clSetKernelArg(k[d], j, sizeof(cl_mem), &m[j]));
        CHECK(clSetKernelArg(k[d], 3, sizeof s, &s));
        launch(q[d], k[d], n); // each device has the arrays once before the timing
    }
    double t0 = now();
    for (int r = 0; r < 10; r++) launch(q[r % 2], k[r % 2], n);
    double t = now() - t0;
    for (int d = 0; d < 2; d++) {
        clReleaseKernel(k[d]);
        clReleaseCommandQueue(q[d]);
    }
    for (int j = 0; j < 3; j++) clReleaseMemObject(m[j]);
    clReleaseProgram(p);
    clReleaseContext(ctx);
    return 10 * 3.0 * n * sizeof(float) / 1e9 / t;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    size_t n = mib * 1024 * 1024 / sizeof(float);
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    cl_device_id devs[2];
    cl_uint ndev = 0;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 2, devs, &ndev));
    if (ndev > 2) ndev = 2;
    float *host = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) host[i] = (float)(i % 1000);
    double first[2], best[2], one_first[2], one_best[2];
    for (cl_uint d = 0; d < ndev; d++) triads(1, &devs[d], n, host, &one_first[d], &one_best[d]);
    triads(ndev, devs, n, host, first, best);
    printf("triad over %zu MiB arrays, GB/s (first launch / best of 10 after it)\n", mib);
    for (cl_uint d = 0; d < ndev; d++)
        printf("device %u: one-device context %.1f / %.1f, %u-device context %.1f / %.1f, ratio %.2f\n", d,
               one_first[d], one_best[d], ndev, first[d], best[d], best[d] / one_best[d]);
    if (ndev == 2)
        printf("alternating devices, each launch after the other's: %.1f GB/s\n", alternating(devs, n, host));
    free(host);
    return 0;
}
