/* Benchmark: clBuildProgram time of a mid-size program (six kernels, about 150 lines), and the
 * first enqueue of one of its kernels (pipeline creation).
 *
 *   cold       a new process, empty disk cache (VKCL_CACHE_DIR is a fresh directory);
 *   warm disk  a new process, the disk cache filled by the cold run;
 *   warm mem   the same process building the same source again.
 *
 * The program runs itself as the child processes (argv[1] = "child"). Other implementations
 * have their own cache switches (pocl: POCL_CACHE_DIR); the figures then mean what they do. */
#include "common.h"
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *source =
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

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Builds the source once and runs scan_block once; prints "<label> build <ms> first-enqueue <ms>". */
static void measure(const char *label, cl_context ctx, cl_device_id device, cl_command_queue q) {
    cl_int err;
    double t0 = now_ms();
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(prog, 1, &device, "", NULL, NULL));
    double t1 = now_ms();
    cl_kernel k = clCreateKernel(prog, "scan_block", &err);
    CHECK_ERR(err);
    int data[64];
    for (int i = 0; i < 64; i++) data[i] = 1;
    cl_mem in = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
    CHECK_ERR(err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof data, NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(k, 0, sizeof in, &in));
    CHECK(clSetKernelArg(k, 1, sizeof out, &out));
    CHECK(clSetKernelArg(k, 2, 64 * sizeof(int), NULL));
    size_t global = 64, local = 64;
    double t2 = now_ms();
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clFinish(q));
    double t3 = now_ms();
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    if (data[63] != 64) {
        fprintf(stderr, "build_time: wrong scan result %d\n", data[63]);
        exit(1);
    }
    printf("%-10s build %8.2f ms   first enqueue %8.2f ms\n", label, t1 - t0, t3 - t2);
    fflush(stdout);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
}

static void child(const char *label, int also_in_memory) {
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;
    setup(&device, &ctx, &q);
    measure(label, ctx, device, q);
    if (also_in_memory) measure("warm mem", ctx, device, q);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}

static void run_child(const char *self, const char *label, const char *also) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "child", label, also, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "build_time: the %s run failed\n", label);
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        child(argv[2], strcmp(argv[3], "1") == 0);
        return 0;
    }
    char dir[] = "/tmp/vkcl-build-time-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("VKCL_CACHE_DIR", dir, 1);
    setenv("POCL_CACHE_DIR", dir, 1);
    run_child(argv[0], "cold", "0");
    run_child(argv[0], "warm disk", "1");
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "build_time: could not remove %s\n", dir);
    printf("build_time: done\n");
    return 0;
}
