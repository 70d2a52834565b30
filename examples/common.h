/* Shared by the examples: error checking, device choice, and a build that prints the log. */
#ifndef VKCL_EXAMPLES_COMMON_H
#define VKCL_EXAMPLES_COMMON_H
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// Seconds on the monotonic clock.
static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(call)                                                                  \
    do {                                                                             \
        cl_int err_ = (call);                                                        \
        if (err_ != CL_SUCCESS) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, err_); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)
#define CHECK_ERR(err) CHECK(err)

/* Picks the first device of the first platform whose name contains `platform_name` (any
 * platform if NULL), or the first such device whose name contains $VKCL_EXAMPLE_DEVICE. */
static void pick_device_on(const char *platform_name, cl_platform_id *platform, cl_device_id *device) {
    const char *want = getenv("VKCL_EXAMPLE_DEVICE");
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(0, NULL, &np));
    cl_platform_id platforms[16];
    if (np > 16) np = 16;
    CHECK(clGetPlatformIDs(np, platforms, NULL));
    for (cl_uint p = 0; p < np; p++) {
        char pname[256];
        CHECK(clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL));
        if (platform_name && !strstr(pname, platform_name)) continue;
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
    fprintf(stderr, "no OpenCL device found%s%s%s%s\n", platform_name ? " on platform " : "",
            platform_name ? platform_name : "", want ? " matching " : "", want ? want : "");
    exit(1);
}

/* Picks the device (on the platform whose name contains `platform_name`, any if NULL),
 * prints the platform and device names, and creates a context and queue. */
static void setup_on(const char *platform_name, cl_device_id *device, cl_context *ctx,
                     cl_command_queue *queue) {
    cl_platform_id platform;
    pick_device_on(platform_name, &platform, device);
    char pname[256], dname[256];
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL));
    CHECK(clGetDeviceInfo(*device, CL_DEVICE_NAME, sizeof dname, dname, NULL));
    printf("platform: %s\ndevice:   %s\n", pname, dname);
    cl_int err;
    *ctx = clCreateContext(NULL, 1, device, NULL, NULL, &err);
    CHECK_ERR(err);
    *queue = clCreateCommandQueueWithProperties(*ctx, *device, NULL, &err);
    CHECK_ERR(err);
}

static inline void setup(cl_device_id *device, cl_context *ctx, cl_command_queue *queue) {
    setup_on(NULL, device, ctx, queue);
}

/* Builds `source`; on failure prints the build log and returns NULL. */
static inline cl_program build(cl_context ctx, cl_device_id device, const char *source) {
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK_ERR(err);
    err = clBuildProgram(prog, 1, &device, "", NULL, NULL);
    if (err == CL_SUCCESS) return prog;
    size_t len = 0;
    clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
    char *log = malloc(len + 1);
    if (log && clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, len, log, NULL) == CL_SUCCESS) {
        log[len] = 0;
        fprintf(stderr, "build failed (%d), log:\n%s\n", err, log);
    }
    free(log);
    clReleaseProgram(prog);
    return NULL;
}

#endif
