// Benchmark: the triad a[i] = b[i] + s * c[i] over cl_mem buffers (the logical build) and over
// coarse-grained SVM allocations (the physical-addressing build), GB/s of each and their ratio
// (issue 18 asks for SVM >= 0.9 of cl_mem on the H200). Also the cl_mem triad on the physical
// build when run with VKCL_ADDRESSING=physical. `svm_triad [MIB]` (default 256 MiB per array).
#include "common.h"
#include <stdlib.h>
#include <time.h>

static const char *SOURCE =
    "kernel void triad(global float *a, global const float *b, global const float *c, float s) {\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = b[i] + s * c[i];\n"
    "}\n";

// Best of `reps` launches, in GB/s (three arrays of n floats).
static double run(cl_command_queue q, cl_kernel k, size_t n, int reps) {
    double best = 1e30;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
        double t = now() - t0;
        if (t < best) best = t;
    }
    return 3.0 * n * sizeof(float) / best / 1e9;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    size_t n = mib * 1024 * 1024 / sizeof(float);
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;
    setup(&device, &ctx, &q);
    cl_device_svm_capabilities caps = 0;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL));
    cl_program p = build(ctx, device, SOURCE);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "triad", &err);
    CHECK_ERR(err);
    float s = 3.0f;
    float *host = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) host[i] = (float)(i % 1000);

    cl_mem m[3];
    for (int j = 0; j < 3; j++) {
        m[j] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), host, &err);
        CHECK_ERR(err);
        CHECK(clSetKernelArg(k, j, sizeof(cl_mem), &m[j]));
    }
    CHECK(clSetKernelArg(k, 3, sizeof s, &s));
    double buffers = run(q, k, n, 10);
    printf("triad over cl_mem: %.1f GB/s (%zu MiB per array)\n", buffers, mib);

    if (!(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
        printf("svm_triad: no SVM on this device (CL_DEVICE_SVM_CAPABILITIES = 0)\n");
        return 0;
    }
    float *v[3];
    for (int j = 0; j < 3; j++) {
        v[j] = clSVMAlloc(ctx, CL_MEM_READ_WRITE, n * sizeof(float), 0);
        if (!v[j]) {
            printf("svm_triad: clSVMAlloc of %zu MiB failed\n", mib);
            return 1;
        }
        CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, v[j], host, n * sizeof(float), 0, NULL, NULL));
        CHECK(clSetKernelArgSVMPointer(k, j, v[j]));
    }
    double svm = run(q, k, n, 10);
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, v[0], n * sizeof(float), 0, NULL, NULL));
    for (size_t i = 0; i < n; i += 4099) {
        float want = host[i] + s * host[i];
        if (v[0][i] != want) {
            printf("svm_triad: FAILED at %zu: %f, want %f\n", i, v[0][i], want);
            return 1;
        }
    }
    CHECK(clEnqueueSVMUnmap(q, v[0], 0, NULL, NULL));
    printf("triad over SVM: %.1f GB/s; SVM / cl_mem = %.2f\n", svm, svm / buffers);
    printf("svm_triad: verified\n");
    return 0;
}
