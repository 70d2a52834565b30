/* compute: kernels bound by arithmetic or by local memory, each checked on the host.
 *
 *   fma          FMA_ITERS rounds of mad on four float4 chains per work-item (GFLOP/s; a
 *                work-item does 32 × FMA_ITERS flops)
 *   sgemm naive  C = A·B, n×n floats, one work-item per element reading A and B from global
 *   sgemm tiled  the same with 16×16 tiles in __local memory (GFLOP/s = 2n³ / time)
 *   reduction    work-group sums of floats in __local memory (GB/s of input)
 *   stencil      a 5-point 2-D Jacobi step on a w×w grid (Gpoints/s)
 *
 * A sample is one launch and clFinish, repeated for at least sample_s(). */
#include "bench.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const char *fma_source =
    "kernel void fma_loop(global float4 *out, int iters, float a, float b) {\n"
    "    size_t i = get_global_id(0);\n"
    "    float4 x0 = (float4)((float)(i % 16) * 0.01f), x1 = x0 + 0.1f, x2 = x0 + 0.2f, x3 = x0 + 0.3f;\n"
    "    for (int k = 0; k < iters; k++) {\n"
    "        x0 = mad(x0, a, b); x1 = mad(x1, a, b); x2 = mad(x2, a, b); x3 = mad(x3, a, b);\n"
    "    }\n"
    "    out[i] = x0 + x1 + x2 + x3;\n"
    "}\n";

static const char *source =
    "kernel void sgemm_naive(int n, global const float *a, global const float *b, global float *c) {\n"
    "    int col = get_global_id(0), row = get_global_id(1);\n"
    "    float acc = 0.0f;\n"
    "    for (int k = 0; k < n; k++) acc = mad(a[row * n + k], b[k * n + col], acc);\n"
    "    c[row * n + col] = acc;\n"
    "}\n"
    "#define TILE 16\n"
    "kernel void sgemm_tiled(int n, global const float *a, global const float *b, global float *c) {\n"
    "    local float ta[TILE][TILE], tb[TILE][TILE];\n"
    "    int r = get_local_id(1), col = get_local_id(0);\n"
    "    int gr = get_group_id(1) * TILE + r, gc = get_group_id(0) * TILE + col;\n"
    "    float acc = 0.0f;\n"
    "    for (int t = 0; t < n; t += TILE) {\n"
    "        ta[r][col] = a[gr * n + t + col];\n"
    "        tb[r][col] = b[(t + r) * n + gc];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < TILE; k++) acc = mad(ta[r][k], tb[k][col], acc);\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    c[gr * n + gc] = acc;\n"
    "}\n"
    "kernel void reduce(global const float *in, global float *out, local float *tmp) {\n"
    "    uint l = get_local_id(0);\n"
    "    tmp[l] = in[get_global_id(0)];\n"
    "    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        if (l < s) tmp[l] += tmp[l + s];\n"
    "    }\n"
    "    if (l == 0) out[get_group_id(0)] = tmp[0];\n"
    "}\n"
    "kernel void stencil(global const float *in, global float *out, int w) {\n"
    "    int x = get_global_id(0), y = get_global_id(1), i = y * w + x;\n"
    "    if (x == 0 || y == 0 || x == w - 1 || y == w - 1) { out[i] = in[i]; return; }\n"
    "    out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);\n"
    "}\n";

typedef struct {
    const Env *e;
    cl_kernel k;
    cl_uint dims;
    size_t global[2], local[2];
} Launch;

static void launch_once(void *arg) {
    Launch *l = arg;
    CHECK(clEnqueueNDRangeKernel(l->e->queue, l->k, l->dims, NULL, l->global, l->local, 0, NULL, NULL));
    CHECK(clFinish(l->e->queue));
}

/* Records `work` / (seconds per launch) / 1e9 in `unit`. */
static void measure(const Env *e, Launch *l, double work, const char *name, const char *unit) {
    warm_up(launch_once, l, e);
    double *samples = xmalloc(e->reps * sizeof(double));
    for (int r = 0; r < e->reps; r++)
        samples[r] = work / time_per_call(launch_once, l, sample_s(e)) / 1e9;
    record("compute", name, unit, 1, 0, samples, e->reps);
    free(samples);
}

size_t fma_items(const Env *e) { return e->quick ? 1 << 12 : e->gpu ? 1 << 20 : 1 << 14; }

/* The value a work-item's four chains reach, as the kernel computes it (in double). */
static double fma_expected(size_t i, int iters, float a, float b) {
    double sum = 0;
    for (int c = 0; c < 4; c++) {
        double x = (double)(float)((float)(i % 16) * 0.01f) + 0.1 * c;
        for (int k = 0; k < iters; k++) x = x * a + b;
        sum += x;
    }
    return sum;
}

static void bench_fma(const Env *e) {
    cl_program prog = build_or_die(e, fma_source, "");
    Launch l = {e, kernel_or_die(prog, "fma_loop"), 1, {fma_items(e), 0}, {LOCAL_SIZE, 0}};
    cl_mem out = buffer_or_die(e, CL_MEM_WRITE_ONLY, l.global[0] * 4 * sizeof(float), NULL);
    int iters = FMA_ITERS;
    float a = 0.999f, b = 0.001f;
    CHECK(clSetKernelArg(l.k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(l.k, 1, sizeof iters, &iters));
    CHECK(clSetKernelArg(l.k, 2, sizeof a, &a));
    CHECK(clSetKernelArg(l.k, 3, sizeof b, &b));
    measure(e, &l, 32.0 * iters * l.global[0], "fma", "GFLOP/s");
    float *h = xmalloc(l.global[0] * 4 * sizeof(float));
    CHECK(clEnqueueReadBuffer(e->queue, out, CL_TRUE, 0, l.global[0] * 4 * sizeof(float), h, 0, NULL, NULL));
    for (size_t i = 0; i < l.global[0]; i += 97) {
        double want = fma_expected(i, iters, a, b);
        if (fabs(h[4 * i] - want) > 1e-3 * fabs(want))
            bench_wrong("fma: item %zu computed %g, expected %g", i, h[4 * i], want);
    }
    free(h);
    clReleaseMemObject(out);
    clReleaseKernel(l.k);
    clReleaseProgram(prog);
}

static void bench_sgemm(const Env *e, cl_program prog) {
    int n = e->quick ? 128 : e->gpu ? 2048 : 512;
    size_t bytes = (size_t)n * n * sizeof(float);
    float *a = xmalloc(bytes), *b = xmalloc(bytes), *c = xmalloc(bytes);
    for (size_t i = 0; i < (size_t)n * n; i++) {
        a[i] = (float)((int)(i % 7) - 3); /* small integers: every sum is exact */
        b[i] = (float)((int)(i % 5) - 2);
    }
    cl_mem da = buffer_or_die(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a);
    cl_mem db = buffer_or_die(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b);
    cl_mem dc = buffer_or_die(e, CL_MEM_WRITE_ONLY, bytes, NULL);
    const char *names[2] = {"sgemm_naive", "sgemm_tiled"};
    for (int v = 0; v < 2; v++) {
        Launch l = {e, kernel_or_die(prog, names[v]), 2, {n, n}, {16, 16}};
        CHECK(clSetKernelArg(l.k, 0, sizeof n, &n));
        CHECK(clSetKernelArg(l.k, 1, sizeof da, &da));
        CHECK(clSetKernelArg(l.k, 2, sizeof db, &db));
        CHECK(clSetKernelArg(l.k, 3, sizeof dc, &dc));
        char name[64];
        snprintf(name, sizeof name, "sgemm %s n=%d", v ? "tiled" : "naive", n);
        measure(e, &l, 2.0 * n * n * n, name, "GFLOP/s");
        CHECK(clEnqueueReadBuffer(e->queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
        for (size_t s = 0; s < 256; s++) {
            size_t row = (s * 131) % n, col = (s * 71 + 5) % n;
            float want = 0;
            for (int k = 0; k < n; k++) want += a[row * n + k] * b[(size_t)k * n + col];
            if (c[row * n + col] != want)
                bench_wrong("%s: c[%zu][%zu] = %g, expected %g", names[v], row, col, c[row * n + col], want);
        }
        clReleaseKernel(l.k);
    }
    free(a);
    free(b);
    free(c);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
}

static void bench_reduction(const Env *e, cl_program prog) {
    size_t n = triad_bytes(e) / sizeof(float), local = 256, groups = n / local;
    float *h = xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) h[i] = 1.0f;
    cl_mem in = buffer_or_die(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), h);
    cl_mem out = buffer_or_die(e, CL_MEM_WRITE_ONLY, groups * sizeof(float), NULL);
    Launch l = {e, kernel_or_die(prog, "reduce"), 1, {n, 0}, {local, 0}};
    CHECK(clSetKernelArg(l.k, 0, sizeof in, &in));
    CHECK(clSetKernelArg(l.k, 1, sizeof out, &out));
    CHECK(clSetKernelArg(l.k, 2, local * sizeof(float), NULL));
    measure(e, &l, (double)n * sizeof(float), "reduction", "GB/s");
    CHECK(clEnqueueReadBuffer(e->queue, out, CL_TRUE, 0, groups * sizeof(float), h, 0, NULL, NULL));
    for (size_t g = 0; g < groups; g++)
        if (h[g] != (float)local) bench_wrong("reduce: group %zu summed %g, expected %zu", g, h[g], local);
    free(h);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseKernel(l.k);
}

static void bench_stencil(const Env *e, cl_program prog) {
    int w = e->quick ? 256 : e->gpu ? 4096 : 2048;
    size_t cells = (size_t)w * w;
    float *h = xmalloc(cells * sizeof(float)), *back = xmalloc(cells * sizeof(float));
    for (size_t i = 0; i < cells; i++) h[i] = (float)((i % w) * 3 + (i / w) * 5 % 17);
    cl_mem in = buffer_or_die(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, cells * sizeof(float), h);
    cl_mem out = buffer_or_die(e, CL_MEM_WRITE_ONLY, cells * sizeof(float), NULL);
    Launch l = {e, kernel_or_die(prog, "stencil"), 2, {w, w}, {16, 16}};
    CHECK(clSetKernelArg(l.k, 0, sizeof in, &in));
    CHECK(clSetKernelArg(l.k, 1, sizeof out, &out));
    CHECK(clSetKernelArg(l.k, 2, sizeof w, &w));
    char name[64];
    snprintf(name, sizeof name, "stencil %dx%d", w, w);
    measure(e, &l, (double)cells, name, "Gpoint/s");
    CHECK(clEnqueueReadBuffer(e->queue, out, CL_TRUE, 0, cells * sizeof(float), back, 0, NULL, NULL));
    for (size_t s = 0; s < 1024; s++) {
        size_t i = (s * 7919) % cells, x = i % w, y = i / w;
        float want = x == 0 || y == 0 || x == (size_t)w - 1 || y == (size_t)w - 1
                         ? h[i]
                         : 0.2f * (h[i] + h[i - 1] + h[i + 1] + h[i - w] + h[i + w]);
        if (fabsf(back[i] - want) > 1e-5f * fabsf(want) + 1e-6f)
            bench_wrong("stencil: cell (%zu, %zu) = %g, expected %g", x, y, back[i], want);
    }
    free(h);
    free(back);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseKernel(l.k);
}

void bench_compute(const Env *e) {
    bench_fma(e);
    cl_program prog = build_or_die(e, source, "");
    bench_sgemm(e, prog);
    bench_reduction(e, prog);
    bench_stencil(e, prog);
    clReleaseProgram(prog);
}
