/* build: clBuildProgram of a six-kernel program (about 90 lines of OpenCL C), and the first
 * enqueue of one of its kernels (on vkcl: pipeline creation).
 *
 *   cold        a new process, empty caches (VKCL_CACHE_DIR, POCL_CACHE_DIR and
 *               CUDA_CACHE_PATH point at a fresh directory)
 *   warm disk   a new process, the caches filled by the cold run
 *   warm memory the warm-disk process building the same source again
 *
 * This program runs itself as the child processes (--build-child), one cold and one warm
 * process per repetition; each child prints its times on stdout. Other implementations'
 * figures mean what their caches make them mean. */
#define _GNU_SOURCE
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *build_source =
    "#define TILE 16\n"
    "__kernel void sgemm_tiled(int n, __global const float *a, __global const float *b,\n"
    "                          __global float *c) {\n"
    "    __local float ta[TILE][TILE], tb[TILE][TILE];\n"
    "    int r = get_local_id(1), col = get_local_id(0);\n"
    "    int gr = get_group_id(1) * TILE + r, gc = get_group_id(0) * TILE + col;\n"
    "    float acc = 0.0f;\n"
    "    for (int t = 0; t < n; t += TILE) {\n"
    "        ta[r][col] = (gr < n && t + col < n) ? a[gr * n + t + col] : 0.0f;\n"
    "        tb[r][col] = (t + r < n && gc < n) ? b[(t + r) * n + gc] : 0.0f;\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < TILE; k++) acc = mad(ta[r][k], tb[k][col], acc);\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (gr < n && gc < n) c[gr * n + gc] = acc;\n"
    "}\n"
    "__kernel void reduce_sum(__global const float *in, __global float *out, __local float *tmp,\n"
    "                         uint n) {\n"
    "    uint l = get_local_id(0), g = get_global_id(0);\n"
    "    tmp[l] = g < n ? in[g] : 0.0f;\n"
    "    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        if (l < s) tmp[l] += tmp[l + s];\n"
    "    }\n"
    "    if (l == 0) out[get_group_id(0)] = tmp[0];\n"
    "}\n"
    "__kernel void sobel(__global const uchar *in, __global uchar *out, int w, int h) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;\n"
    "    int gx = -in[(y-1)*w+x-1] - 2*in[y*w+x-1] - in[(y+1)*w+x-1]\n"
    "             + in[(y-1)*w+x+1] + 2*in[y*w+x+1] + in[(y+1)*w+x+1];\n"
    "    int gy = -in[(y-1)*w+x-1] - 2*in[(y-1)*w+x] - in[(y-1)*w+x+1]\n"
    "             + in[(y+1)*w+x-1] + 2*in[(y+1)*w+x] + in[(y+1)*w+x+1];\n"
    "    out[y * w + x] = convert_uchar_sat(sqrt((float)(gx * gx + gy * gy)));\n"
    "}\n"
    "typedef struct { float4 pos; float4 vel; } body;\n"
    "__kernel void nbody(__global const body *in, __global body *out, int n, float dt) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    float4 p = in[i].pos, a = (float4)(0.0f);\n"
    "    for (int j = 0; j < n; j++) {\n"
    "        float4 d = in[j].pos - p;\n"
    "        d.w = 0.0f;\n"
    "        float r2 = dot(d, d) + 1e-4f;\n"
    "        a += d * (in[j].pos.w * native_rsqrt(r2 * r2 * r2));\n"
    "    }\n"
    "    body b = { p + in[i].vel * dt, in[i].vel + a * dt };\n"
    "    out[i] = b;\n"
    "}\n"
    "uint hash(uint x) { x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU;\n"
    "    return x ^ (x >> 16); }\n"
    "__kernel void histogram(__global const uint *in, uint n, __global uint *bins) {\n"
    "    __local uint local_bins[256];\n"
    "    for (uint i = get_local_id(0); i < 256; i += get_local_size(0)) local_bins[i] = 0;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint i = get_global_id(0); i < n; i += get_global_size(0))\n"
    "        atomic_inc(&local_bins[hash(in[i]) & 255]);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint i = get_local_id(0); i < 256; i += get_local_size(0))\n"
    "        atomic_add(&bins[i], local_bins[i]);\n"
    "}\n"
    "__kernel void scan_block(__global const int *in, __global int *out, __local int *t) {\n"
    "    uint l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);\n"
    "    t[l] = in[g];\n"
    "    for (uint o = 1; o < n; o <<= 1) {\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        int v = l >= o ? t[l - o] : 0;\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        t[l] += v;\n"
    "    }\n"
    "    out[g] = t[l];\n"
    "}\n";

/* Builds the source and runs scan_block once; prints "<build ms> <first enqueue ms>". */
static void measure(const Env *e) {
    cl_int err;
    double t0 = now_s();
    cl_program prog = clCreateProgramWithSource(e->ctx, 1, &build_source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &e->device, "", NULL, NULL));
    double t1 = now_s();
    cl_kernel k = kernel_or_die(prog, "scan_block");
    int data[64];
    for (int i = 0; i < 64; i++) data[i] = 1;
    cl_mem in = buffer_or_die(e, CL_MEM_COPY_HOST_PTR, sizeof data, data);
    cl_mem out = buffer_or_die(e, CL_MEM_WRITE_ONLY, sizeof data, NULL);
    CHECK(clSetKernelArg(k, 0, sizeof in, &in));
    CHECK(clSetKernelArg(k, 1, sizeof out, &out));
    CHECK(clSetKernelArg(k, 2, 64 * sizeof(int), NULL));
    size_t global = 64, local = 64;
    double t2 = now_s();
    CHECK(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clFinish(e->queue));
    double t3 = now_s();
    CHECK(clEnqueueReadBuffer(e->queue, out, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    for (int i = 0; i < 64; i++)
        if (data[i] != i + 1) bench_wrong("build: scan_block computed %d at %d", data[i], i);
    printf("%.6f %.6f\n", (t1 - t0) * 1e3, (t3 - t2) * 1e3);
    fflush(stdout);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
}

void bench_build_child(const Env *e, int also_in_memory) {
    measure(e);
    if (also_in_memory) measure(e);
}

/* Runs this program as a build child; reads `n` numbers from its stdout into `out`. */
static void run_child(const Env *e, int also_in_memory, double *out, int n) {
    int fds[2];
    if (pipe(fds) != 0) bench_wrong("pipe failed");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        char arg[8];
        snprintf(arg, sizeof arg, "%d", also_in_memory);
        const char *argv[9] = {e->self, "--build-child", arg};
        int a = 3;
        if (e->platform_sub) argv[a++] = "--platform", argv[a++] = e->platform_sub;
        if (e->device_sub) argv[a++] = "--device", argv[a++] = e->device_sub;
        argv[a] = NULL;
        execv(e->self, (char **)argv);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    int got = 0;
    while (got < n && fscanf(f, "%lf", &out[got]) == 1) got++;
    fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != n)
        bench_wrong("build: a child process failed (status %d, %d of %d figures)", status, got, n);
}

void bench_build(const Env *e) {
    int reps = e->reps;
    double *v[6];
    for (int i = 0; i < 6; i++) v[i] = xmalloc(reps * sizeof(double));
    for (int r = 0; r < reps; r++) {
        char dir[] = "/tmp/vkcl-bench-cache-XXXXXX";
        if (!mkdtemp(dir)) bench_wrong("mkdtemp failed");
        setenv("VKCL_CACHE_DIR", dir, 1);
        setenv("POCL_CACHE_DIR", dir, 1);
        setenv("CUDA_CACHE_PATH", dir, 1);
        double cold[2], warm[4];
        run_child(e, 0, cold, 2);
        run_child(e, 1, warm, 4);
        v[0][r] = cold[0], v[1][r] = warm[0], v[2][r] = warm[2];
        v[3][r] = cold[1], v[4][r] = warm[1], v[5][r] = warm[3];
        char cmd[sizeof dir + 16];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) fprintf(stderr, "vkcl-bench: could not remove %s\n", dir);
    }
    unsetenv("VKCL_CACHE_DIR");
    unsetenv("POCL_CACHE_DIR");
    unsetenv("CUDA_CACHE_PATH");
    const char *names[6] = {"build cold", "build warm disk (new process)", "build warm memory",
                            "first enqueue, cold", "first enqueue, warm disk", "first enqueue, warm memory"};
    for (int i = 0; i < 6; i++) {
        record("build", names[i], "ms", 0, 0, v[i], reps);
        free(v[i]);
    }
}
