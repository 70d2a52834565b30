// Benchmark (issue 22): work split over the two devices of one context against one device.
// 1. Migration bandwidth: a buffer written by a kernel on one device, then
//    clEnqueueMigrateMemObjects to the other (timed to its end), both ways, after a first
//    round (each device's copy made). Where the devices share the buffer's memory
//    (VKCL_MULTI_DEVICE=auto on one GPU, shared) nothing moves: the figure is only the
//    command's round trip, far above any memory's bandwidth.
// 2. A sum over N floats: each device reduces its half (a sub-buffer) into partial sums, the
//    host adds them; against the whole sum on device 0 of a one-device context. Checked
//    against the host's sum. Best of 5 after a first run each.
// `multi_split [MIB]` (default 256 MiB of floats). On one GPU run with VKCL_DEVICE_COPIES=2
// (the split cannot be faster there: one GPU's bandwidth); on two GPUs it should be.
#include "common.h"
#include <math.h>

static const char *SOURCE =
    "kernel void fill(global float *a) {\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = (float)(i % 1000) * 0.001f;\n"
    "}\n"
    "kernel void sum(global const float4 *in, global float *partial, local float *scratch,\n"
    "                uint per_item) {\n"
    "    size_t g = get_global_id(0), l = get_local_id(0), n = get_local_size(0);\n"
    "    float s = 0.0f;\n"
    "    for (uint j = 0; j < per_item; j++) {\n"
    "        float4 v = in[g * per_item + j];\n"
    "        s += v.x + v.y + v.z + v.w;\n"
    "    }\n"
    "    scratch[l] = s;\n"
    "    for (size_t k = n / 2; k > 0; k /= 2) {\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        if (l < k) scratch[l] += scratch[l + k];\n"
    "    }\n"
    "    if (l == 0) partial[get_group_id(0)] = scratch[0];\n"
    "}\n";

enum { LOCAL = 256, PER_ITEM = 16 };

struct setup {
    cl_context ctx;
    cl_program p;
    cl_command_queue q[2];
    cl_mem data;
};

static struct setup make(cl_uint ndev, cl_device_id *devs, size_t n) {
    struct setup s;
    cl_int err;
    s.ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &err);
    CHECK_ERR(err);
    s.p = clCreateProgramWithSource(s.ctx, 1, &SOURCE, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(s.p, ndev, devs, NULL, NULL, NULL));
    for (cl_uint d = 0; d < ndev; d++) {
        s.q[d] = clCreateCommandQueueWithProperties(s.ctx, devs[d], NULL, &err);
        CHECK_ERR(err);
    }
    s.data = clCreateBuffer(s.ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    CHECK_ERR(err);
    cl_kernel fill = clCreateKernel(s.p, "fill", &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(fill, 0, sizeof(cl_mem), &s.data));
    CHECK(clEnqueueNDRangeKernel(s.q[0], fill, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(s.q[0]));
    clReleaseKernel(fill);
    return s;
}

static void release(struct setup *s, cl_uint ndev) {
    clReleaseMemObject(s->data);
    for (cl_uint d = 0; d < ndev; d++) clReleaseCommandQueue(s->q[d]);
    clReleaseProgram(s->p);
    clReleaseContext(s->ctx);
}

// GB/s of moving the whole buffer to device `to` (after a kernel wrote it on the other).
static double migrate(struct setup *s, int to, size_t n) {
    cl_int err;
    cl_kernel fill = clCreateKernel(s->p, "fill", &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(fill, 0, sizeof(cl_mem), &s->data));
    CHECK(clEnqueueNDRangeKernel(s->q[1 - to], fill, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(s->q[1 - to]));
    clReleaseKernel(fill);
    double t0 = now();
    CHECK(clEnqueueMigrateMemObjects(s->q[to], 1, &s->data, 0, 0, NULL, NULL));
    CHECK(clFinish(s->q[to]));
    return n * sizeof(float) / 1e9 / (now() - t0);
}

// Seconds of one sum of the buffer split over `ndev` devices; the sum in `total`.
static double split_sum(struct setup *s, cl_uint ndev, size_t n, double *total) {
    cl_int err;
    size_t part = n / ndev, items = part / 4 / PER_ITEM, groups = items / LOCAL;
    cl_mem in[2], partial[2];
    cl_kernel k[2];
    float *sums = malloc(groups * sizeof(float));
    double t0 = now();
    for (cl_uint d = 0; d < ndev; d++) {
        cl_buffer_region r = {d * part * sizeof(float), part * sizeof(float)};
        in[d] = clCreateSubBuffer(s->data, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
        CHECK_ERR(err);
        partial[d] = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, groups * sizeof(float), NULL, &err);
        CHECK_ERR(err);
        k[d] = clCreateKernel(s->p, "sum", &err);
        CHECK_ERR(err);
        cl_uint per = PER_ITEM;
        CHECK(clSetKernelArg(k[d], 0, sizeof(cl_mem), &in[d]));
        CHECK(clSetKernelArg(k[d], 1, sizeof(cl_mem), &partial[d]));
        CHECK(clSetKernelArg(k[d], 2, LOCAL * sizeof(float), NULL));
        CHECK(clSetKernelArg(k[d], 3, sizeof per, &per));
        size_t local = LOCAL;
        CHECK(clEnqueueNDRangeKernel(s->q[d], k[d], 1, NULL, &items, &local, 0, NULL, NULL));
        CHECK(clFlush(s->q[d]));
    }
    *total = 0;
    for (cl_uint d = 0; d < ndev; d++) {
        CHECK(clEnqueueReadBuffer(s->q[d], partial[d], CL_TRUE, 0, groups * sizeof(float), sums, 0, NULL, NULL));
        for (size_t g = 0; g < groups; g++) *total += sums[g];
    }
    double t = now() - t0;
    for (cl_uint d = 0; d < ndev; d++) {
        clReleaseKernel(k[d]);
        clReleaseMemObject(partial[d]);
        clReleaseMemObject(in[d]);
    }
    free(sums);
    return t;
}

static double best_sum(struct setup *s, cl_uint ndev, size_t n, double want) {
    double best = 1e30, total;
    for (int r = 0; r < 6; r++) {
        double t = split_sum(s, ndev, n, &total);
        if (fabs(total - want) > 1e-3 * want) {
            fprintf(stderr, "wrong sum on %u device(s): %f, want %f\n", ndev, total, want);
            exit(1);
        }
        if (r > 0 && t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    size_t unit = 2 * 4 * PER_ITEM * LOCAL;  // each half a whole number of groups
    size_t n = (mib * 1024 * 1024 / sizeof(float)) / unit * unit;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    cl_device_id devs[2];
    cl_uint ndev = 0;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 2, devs, &ndev));
    if (ndev < 2) {
        fprintf(stderr, "multi_split needs two devices (VKCL_DEVICE_COPIES=2 on one GPU)\n");
        return 1;
    }
    double want = 0;
    for (size_t i = 0; i < n; i++) want += (double)(float)((float)(i % 1000) * 0.001f);
    struct setup two = make(2, devs, n);
    // A first round makes each device's copy and the transit memory; the second is timed.
    migrate(&two, 1, n);
    migrate(&two, 0, n);
    double to1 = migrate(&two, 1, n), to0 = migrate(&two, 0, n);
    printf("migration of %zu MiB: device 0 -> 1 %.2f GB/s, 1 -> 0 %.2f GB/s\n", mib, to1, to0);
    double split = best_sum(&two, 2, n, want);
    release(&two, 2);
    struct setup one = make(1, devs, n);
    double whole = best_sum(&one, 1, n, want);
    release(&one, 1);
    double bytes = n * sizeof(float) / 1e9;
    printf("sum of %zu MiB: one device %.2f ms (%.1f GB/s), split over two %.2f ms (%.1f GB/s), speed-up %.2f\n",
           mib, whole * 1e3, bytes / whole, split * 1e3, bytes / split, whole / split);
    return 0;
}
