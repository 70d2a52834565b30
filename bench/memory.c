/* memory: global-memory bandwidth of two kernels on float4 arrays (STREAM's copy and triad):
 *
 *   copy    b[i] = a[i]                 (bytes read + written: 2 × array)
 *   triad   a[i] = b[i] + s * c[i]      (3 × array)
 *
 * Arrays of 256 MiB on GPUs, 64 MiB otherwise (4 MiB with --quick), capped at the allocation
 * limit. A sample is a batch of launches_per_sample() launches and one clFinish, repeated for
 * at least sample_s(); local size LOCAL_SIZE. The raw-Vulkan baseline runs triad the same way. */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>

const char *memory_source =
    "kernel void copy4(global const float4 *a, global float4 *b) {\n"
    "    size_t i = get_global_id(0);\n"
    "    b[i] = a[i];\n"
    "}\n"
    "kernel void triad4(global float4 *a, global const float4 *b, global const float4 *c, float s) {\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = b[i] + s * c[i];\n"
    "}\n";

size_t triad_bytes(const Env *e) {
    size_t size = e->quick ? (size_t)4 << 20 : e->gpu ? (size_t)256 << 20 : (size_t)64 << 20;
    while (size > e->max_alloc) size /= 2;
    return size;
}

int launches_per_sample(const Env *e) { return e->quick ? 2 : 10; }

typedef struct {
    const Env *e;
    cl_kernel k;
    size_t global;
} Batch;

static void batch(void *arg) {
    Batch *b = arg;
    size_t local = LOCAL_SIZE;
    for (int i = 0; i < launches_per_sample(b->e); i++)
        CHECK(clEnqueueNDRangeKernel(b->e->queue, b->k, 1, NULL, &b->global, &local, 0, NULL, NULL));
    CHECK(clFinish(b->e->queue));
}

static void measure(const Env *e, cl_kernel k, size_t global, double bytes, const char *name) {
    Batch b = {e, k, global};
    warm_up(batch, &b, e);
    double *samples = xmalloc(e->reps * sizeof(double));
    for (int r = 0; r < e->reps; r++)
        samples[r] = bytes * launches_per_sample(e) / time_per_call(batch, &b, sample_s(e)) / 1e9;
    record("memory", name, "GB/s", 1, 0, samples, e->reps);
    free(samples);
}

void bench_memory(const Env *e) {
    size_t size = triad_bytes(e), n = size / sizeof(float);
    float *h = xmalloc(size), *h2 = xmalloc(size);
    for (size_t i = 0; i < n; i++) h[i] = (float)(i % 1000);
    cl_mem a = buffer_or_die(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, h);
    for (size_t i = 0; i < n; i++) h2[i] = (float)(i % 7);
    cl_mem b = buffer_or_die(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, h2);
    cl_mem c = buffer_or_die(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, h);
    cl_program prog = build_or_die(e, memory_source, "");
    cl_kernel copy4 = kernel_or_die(prog, "copy4"), triad4 = kernel_or_die(prog, "triad4");
    float s = 3.0f;
    /* copy: c = a (c already holds a's values, so triad's inputs stay what they were) */
    CHECK(clSetKernelArg(copy4, 0, sizeof a, &a));
    CHECK(clSetKernelArg(copy4, 1, sizeof c, &c));
    CHECK(clSetKernelArg(triad4, 0, sizeof a, &a));
    CHECK(clSetKernelArg(triad4, 1, sizeof b, &b));
    CHECK(clSetKernelArg(triad4, 2, sizeof c, &c));
    CHECK(clSetKernelArg(triad4, 3, sizeof s, &s));
    measure(e, copy4, n / 4, 2.0 * size, "copy");
    measure(e, triad4, n / 4, 3.0 * size, "triad");
    CHECK(clEnqueueReadBuffer(e->queue, a, CL_TRUE, 0, size, h2, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++) {
        float want = (float)(i % 7) + s * (float)(i % 1000);
        if (h2[i] != want) bench_wrong("triad: a[%zu] = %g, expected %g", i, h2[i], want);
    }
    free(h);
    free(h2);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseKernel(copy4);
    clReleaseKernel(triad4);
    clReleaseProgram(prog);
}
