/* vector_add: c[i] = a[i] + b[i] on the first OpenCL device (or the first whose name contains
 * $VKCL_EXAMPLE_DEVICE).  Build: cc -O2 vector_add.c -o vector_add -lOpenCL */
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

static const char *source =
    "kernel void vector_add(global const float *a, global const float *b,\n"
    "                       global float *c, uint n) {\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
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
