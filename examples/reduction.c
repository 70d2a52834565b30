/* reduction: sums 1M integers with a work-group reduction in __local memory (one partial sum
 * per work-group), then the host adds the partial sums.  Runs on the first OpenCL device (or
 * the first whose name contains $VKCL_EXAMPLE_DEVICE).
 * Build: cc -O2 reduction.c -o reduction -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cl_int err_ = (call);                                                        \
        if (err_ != CL_SUCCESS) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, err_); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)
#define CHECK_ERR(err) CHECK(err)

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

/* Picks the first device of the first platform, or the first device (over all platforms)
 * whose name contains $VKCL_EXAMPLE_DEVICE. */
static void pick_device(cl_platform_id *platform, cl_device_id *device) {
    const char *want = getenv("VKCL_EXAMPLE_DEVICE");
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(0, NULL, &np));
    cl_platform_id platforms[16];
    if (np > 16) np = 16;
    CHECK(clGetPlatformIDs(np, platforms, NULL));
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        cl_device_id devices[16];
        if (nd > 16) nd = 16;
        CHECK(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd, devices, NULL));
        for (cl_uint d = 0; d < nd; d++) {
            char name[256];
            CHECK(clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof name, name, NULL));
            if (!want || !*want || strstr(name, want)) {
                *platform = platforms[p];
                *device = devices[d];
                return;
            }
        }
    }
    fprintf(stderr, "no OpenCL device found%s%s\n", want ? " matching " : "", want ? want : "");
    exit(1);
}

int main(void) {
    cl_platform_id platform;
    cl_device_id device;
    pick_device(&platform, &device);
    char pname[256], dname[256];
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL));
    CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof dname, dname, NULL));
    printf("platform: %s\ndevice:   %s\n", pname, dname);

    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK_ERR(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK_ERR(err);
    err = clBuildProgram(prog, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = malloc(len + 1);
        if (log && clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, len, log, NULL) == CL_SUCCESS) {
            log[len] = 0;
            fprintf(stderr, "build failed (%d), log:\n%s\n", err, log);
        }
        free(log);
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
