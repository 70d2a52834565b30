/* bandwidth: memory bandwidth through the standard OpenCL API, on any ICD.
 *
 *   bandwidth [PLATFORM [MAX_MIB [device]]]
 *
 * PLATFORM: a substring of the platform name (e.g. "vkcl", "NVIDIA CUDA"; default: the first
 * platform); MAX_MIB: the largest transfer in MiB (default 256, capped at the device's
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE); "device": only the device-side figures. Prints, for sizes from
 * 4 KiB up by factors of 4:
 *   write, read      clEnqueueWriteBuffer / clEnqueueReadBuffer, blocking, pageable host memory
 *   map-r, map-w     clEnqueueMapBuffer (CL_MAP_READ, then memcpy out; CL_MAP_WRITE_INVALIDATE_REGION,
 *                    then memcpy in) and clEnqueueUnmapMemObject, up to clFinish
 * then, at MAX_MIB, clEnqueueCopyBuffer and two kernels (float4 copy b = a and triad
 * a = b + s * c) as global-memory bandwidth: bytes read plus bytes written per second, from
 * the wall clock (each command enqueued and waited for with clFinish, so launch and completion
 * overheads count) and from the commands' profiling times (the device's own time).
 * GB/s are 1e9 bytes per second, the mean over repetitions of at least 0.2 s after a warm-up.
 * Build: cc -O2 bandwidth.c -o bandwidth -lOpenCL */
#include "common.h"
#include <time.h>

static const char *source =
    "kernel void copy4(global const float4 *a, global float4 *b) {\n"
    "    size_t i = get_global_id(0);\n"
    "    b[i] = a[i];\n"
    "}\n"
    "kernel void triad4(global float4 *a, global const float4 *b, global const float4 *c, float s) {\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = b[i] + s * c[i];\n"
    "}\n";

typedef struct {
    cl_command_queue queue;
    cl_mem buf, buf2, buf3;
    char *host;
    size_t size;
    cl_kernel copy4, triad4;
    double device_s; /* profiled device time of the device-side commands measured */
    double bytes;    /* bytes moved by the last measurement */
} Bench;

enum { WRITE, READ, MAP_READ, MAP_WRITE, COPY, KERNEL_COPY, KERNEL_TRIAD };

/* Waits for the queue and adds the profiled time of `ev` to b->device_s. */
static void finish_timed(Bench *b, cl_event ev) {
    CHECK(clFinish(b->queue));
    cl_ulong start, end;
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    b->device_s += (end - start) * 1e-9;
    CHECK(clReleaseEvent(ev));
}

/* One repetition of operation `op` on `b->size` bytes; returns the bytes it moved. */
static double run_once(Bench *b, int op) {
    cl_int err;
    cl_event ev;
    size_t n4 = b->size / 16;
    switch (op) {
    case WRITE:
        CHECK(clEnqueueWriteBuffer(b->queue, b->buf, CL_TRUE, 0, b->size, b->host, 0, NULL, NULL));
        return b->size;
    case READ:
        CHECK(clEnqueueReadBuffer(b->queue, b->buf, CL_TRUE, 0, b->size, b->host, 0, NULL, NULL));
        return b->size;
    case MAP_READ:
    case MAP_WRITE: {
        cl_map_flags flags = op == MAP_READ ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION;
        void *p = clEnqueueMapBuffer(b->queue, b->buf, CL_TRUE, flags, 0, b->size, 0, NULL, NULL, &err);
        CHECK_ERR(err);
        if (op == MAP_READ)
            memcpy(b->host, p, b->size);
        else
            memcpy(p, b->host, b->size);
        CHECK(clEnqueueUnmapMemObject(b->queue, b->buf, p, 0, NULL, NULL));
        CHECK(clFinish(b->queue));
        return b->size;
    }
    case COPY:
        CHECK(clEnqueueCopyBuffer(b->queue, b->buf, b->buf2, 0, 0, b->size, 0, NULL, &ev));
        finish_timed(b, ev);
        return 2.0 * b->size;
    case KERNEL_COPY:
        CHECK(clEnqueueNDRangeKernel(b->queue, b->copy4, 1, NULL, &n4, NULL, 0, NULL, &ev));
        finish_timed(b, ev);
        return 2.0 * b->size;
    default:
        CHECK(clEnqueueNDRangeKernel(b->queue, b->triad4, 1, NULL, &n4, NULL, 0, NULL, &ev));
        finish_timed(b, ev);
        return 3.0 * b->size;
    }
}

/* GB/s of `op` by the wall clock: one warm-up, then repetitions for at least 0.2 s (at least
 * 3); b->device_s holds the profiled time of those repetitions. */
static double measure(Bench *b, int op) {
    run_once(b, op);
    b->device_s = 0;
    double bytes = 0, t0 = now(), t = t0;
    int reps = 0;
    while (reps < 3 || t - t0 < 0.2) {
        bytes += run_once(b, op);
        reps++;
        t = now();
    }
    b->bytes = bytes;
    return bytes / (t - t0) / 1e9;
}

/* One line of the device table: wall-clock and profiled GB/s. */
static void measure_device(Bench *b, const char *name, int op) {
    double wall = measure(b, op);
    printf("  %-13s %8.1f %8.1f\n", name, wall, b->bytes / b->device_s / 1e9);
    fflush(stdout);
}

static void print_size(size_t size) {
    if (size >= 1 << 20)
        printf("%7zu MiB", size >> 20);
    else
        printf("%7zu KiB", size >> 10);
}

int main(int argc, char **argv) {
    const char *platform = argc > 1 && *argv[1] ? argv[1] : NULL;
    size_t max = (argc > 2 ? (size_t)atol(argv[2]) : 256) << 20;
    cl_device_id device;
    cl_context ctx;
    cl_int err;
    Bench b = {0};
    setup_on(platform, &device, &ctx, &b.queue);
    /* A second queue on the same device, with profiling, for the device-side figures. */
    cl_command_queue plain_queue = b.queue;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue timed_queue = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    CHECK_ERR(err);
    cl_ulong max_alloc = 0;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL));
    while (max > max_alloc) max /= 2;
    if (max < 4096) {
        fprintf(stderr, "bandwidth: sizes below 4 KiB are not measured\n");
        return 1;
    }
    cl_program prog = build(ctx, device, source);
    if (!prog) return 1;
    b.copy4 = clCreateKernel(prog, "copy4", &err);
    CHECK_ERR(err);
    b.triad4 = clCreateKernel(prog, "triad4", &err);
    CHECK_ERR(err);
    b.host = malloc(max);
    if (!b.host) return 1;
    memset(b.host, 1, max);
    b.buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, max, NULL, &err);
    CHECK_ERR(err);
    b.buf2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, max, NULL, &err);
    CHECK_ERR(err);
    b.buf3 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, max, NULL, &err);
    CHECK_ERR(err);
    float zero = 0, s = 3;
    CHECK(clEnqueueFillBuffer(b.queue, b.buf, &zero, sizeof zero, 0, max, 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(b.queue, b.buf2, &zero, sizeof zero, 0, max, 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(b.queue, b.buf3, &zero, sizeof zero, 0, max, 0, NULL, NULL));
    CHECK(clSetKernelArg(b.copy4, 0, sizeof(cl_mem), &b.buf));
    CHECK(clSetKernelArg(b.copy4, 1, sizeof(cl_mem), &b.buf2));
    CHECK(clSetKernelArg(b.triad4, 0, sizeof(cl_mem), &b.buf));
    CHECK(clSetKernelArg(b.triad4, 1, sizeof(cl_mem), &b.buf2));
    CHECK(clSetKernelArg(b.triad4, 2, sizeof(cl_mem), &b.buf3));
    CHECK(clSetKernelArg(b.triad4, 3, sizeof s, &s));
    CHECK(clFinish(b.queue));

    int host_part = !(argc > 3 && !strcmp(argv[3], "device"));
    if (host_part) printf("host <-> device (GB/s)\n       size    write     read    map-r    map-w\n");
    for (b.size = 4096; host_part && b.size <= max; b.size *= 4) {
        print_size(b.size);
        for (int op = WRITE; op <= MAP_WRITE; op++) printf(" %8.2f", measure(&b, op));
        printf("\n");
        fflush(stdout);
    }
    b.size = max;
    b.queue = timed_queue;
    printf("device (GB/s, bytes read + written, ");
    print_size(b.size);
    printf(")\n                    wall  profiled\n");
    measure_device(&b, "copyBuffer", COPY);
    measure_device(&b, "kernel copy", KERNEL_COPY);
    measure_device(&b, "kernel triad", KERNEL_TRIAD);

    clReleaseMemObject(b.buf);
    clReleaseMemObject(b.buf2);
    clReleaseMemObject(b.buf3);
    clReleaseKernel(b.copy4);
    clReleaseKernel(b.triad4);
    clReleaseProgram(prog);
    clReleaseCommandQueue(plain_queue);
    clReleaseCommandQueue(timed_queue);
    clReleaseContext(ctx);
    free(b.host);
    printf("bandwidth: done\n");
    return 0;
}
