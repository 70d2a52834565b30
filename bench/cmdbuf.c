/* cmdbuf: cl_khr_command_buffer, recorded once and replayed, against the same work enqueued one
 * command at a time (the extension's entry points from clGetExtensionFunctionAddressForPlatform).
 *
 *   dependent enqueued   per kernel, 1000 dependent small kernels (each adds 1 to the 64 ints
 *                        the previous one wrote) enqueued on an in-order queue, then clFinish
 *   dependent replayed   per kernel, the same 1000 recorded in one command-buffer, one
 *                        clEnqueueCommandBufferKHR and clFinish
 *   independent enqueued per kernel, 1000 kernels each adding 1 to a slice of its own, on an
 *                        out-of-order queue (its argument set before each enqueue)
 *   independent replayed per kernel, the same recorded without sync points, replayed
 *   enqueue host time    per kernel, the host time of the dependent enqueues (clSetKernelArg and
 *                        clEnqueueNDRangeKernel), before the clFinish
 *   replay host time     per kernel, the host time of the one clEnqueueCommandBufferKHR of the
 *                        dependent buffer
 *
 * Every sum is checked. Devices without the extension report the figures unsupported. */
#include "bench.h"
#include <stdio.h>
#include <string.h>

/* cl_khr_command_buffer 0.9.7 (OpenCL-Headers' cl_ext.h; declared here, as older headers
 * have other signatures). */
typedef void *cmdbuf_t;
typedef cmdbuf_t (*create_fn)(cl_uint, const cl_command_queue *, const cl_ulong *, cl_int *);
typedef cl_int (*finalize_fn)(cmdbuf_t);
typedef cl_int (*release_fn)(cmdbuf_t);
typedef cl_int (*enqueue_fn)(cl_uint, cl_command_queue *, cmdbuf_t, cl_uint, const cl_event *,
                             cl_event *);
typedef cl_int (*nd_range_fn)(cmdbuf_t, cl_command_queue, const cl_ulong *, cl_kernel, cl_uint,
                              const size_t *, const size_t *, const size_t *, cl_uint,
                              const cl_uint *, cl_uint *, void **);

static const char *source =
    "kernel void inc(global int *p, int slice) { p[slice * 64 + get_global_id(0)] += 1; }\n";

#define KERNELS 1000
#define ITEMS 64

typedef struct {
    create_fn create;
    finalize_fn finalize;
    release_fn release;
    enqueue_fn enqueue;
    nd_range_fn nd_range;
} Ext;

static void *entry(const Env *e, const char *name) {
    return clGetExtensionFunctionAddressForPlatform(e->platform, name);
}

static int has_extension(const Env *e) {
    size_t size = 0;
    CHECK(clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, 0, NULL, &size));
    char *list = xmalloc(size);
    CHECK(clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, size, list, NULL));
    int found = 0;
    for (char *t = strtok(list, " "); t; t = strtok(NULL, " "))
        found |= !strcmp(t, "cl_khr_command_buffer");
    free(list);
    return found;
}

/* Records `n` launches of `k` (slice i for launch i when `independent`, else slice 0). */
static cmdbuf_t record_launches(const Ext *x, cl_command_queue q, cl_kernel k, int n,
                                int independent) {
    cl_int err;
    cmdbuf_t cb = x->create(1, &q, NULL, &err);
    CHECK(err);
    size_t items = ITEMS;
    for (int i = 0; i < n; i++) {
        int slice = independent ? i : 0;
        CHECK(clSetKernelArg(k, 1, sizeof slice, &slice));
        CHECK(x->nd_range(cb, NULL, NULL, k, 1, NULL, &items, NULL, 0, NULL, NULL, NULL));
    }
    CHECK(x->finalize(cb));
    return cb;
}

/* Enqueues `n` launches one at a time and waits; returns the host time of the enqueues. */
static double enqueue_launches(cl_command_queue q, cl_kernel k, int n, int independent) {
    size_t items = ITEMS;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        int slice = independent ? i : 0;
        CHECK(clSetKernelArg(k, 1, sizeof slice, &slice));
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &items, NULL, 0, NULL, NULL));
    }
    double host = now_s() - t0;
    CHECK(clFinish(q));
    return host;
}

static void check_sums(const Env *e, cl_mem buf, int n, int dependent_want, int independent_want) {
    int *got = xmalloc(n * ITEMS * sizeof(int));
    CHECK(clEnqueueReadBuffer(e->queue, buf, CL_TRUE, 0, n * ITEMS * sizeof(int), got, 0, NULL,
                              NULL));
    for (int i = 0; i < n * ITEMS; i++) {
        /* Slice 0 takes both the dependent chain and the independent launches' first. */
        int want = independent_want + (i < ITEMS ? dependent_want : 0);
        if (got[i] != want) bench_wrong("cmdbuf: element %d is %d, expected %d", i, got[i], want);
    }
    free(got);
}

void bench_cmdbuf(const Env *e) {
    const char *names[] = {"dependent enqueued per kernel", "dependent replayed per kernel",
                           "independent enqueued per kernel", "independent replayed per kernel",
                           "enqueue host time per kernel", "replay host time per kernel"};
    enum { FIGURES = sizeof names / sizeof *names };
    Ext x = {entry(e, "clCreateCommandBufferKHR"), entry(e, "clFinalizeCommandBufferKHR"),
             entry(e, "clReleaseCommandBufferKHR"), entry(e, "clEnqueueCommandBufferKHR"),
             entry(e, "clCommandNDRangeKernelKHR")};
    if (!has_extension(e) || !x.create || !x.finalize || !x.release || !x.enqueue || !x.nd_range) {
        for (int i = 0; i < FIGURES; i++)
            record_unsupported("cmdbuf", names[i], "us", "no cl_khr_command_buffer");
        return;
    }
    int n = e->quick ? 100 : KERNELS;
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue ooo = clCreateCommandQueueWithProperties(e->ctx, e->device, props, &err);
    CHECK(err);
    cl_program prog = build_or_die(e, source, "");
    cl_kernel k = kernel_or_die(prog, "inc");
    size_t bytes = (size_t)n * ITEMS * sizeof(int);
    cl_mem buf = buffer_or_die(e, CL_MEM_READ_WRITE, bytes, NULL);
    int zero = 0;
    CHECK(clEnqueueFillBuffer(e->queue, buf, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));
    CHECK(clFinish(e->queue));
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    cmdbuf_t chain = record_launches(&x, e->queue, k, n, 0);
    cmdbuf_t spread = record_launches(&x, ooo, k, n, 1);
    double *s[FIGURES];
    for (int i = 0; i < FIGURES; i++) s[i] = xmalloc(e->reps * sizeof(double));
    for (int run = -1; run < e->reps; run++) { /* run -1: the warm-up */
        double t0 = now_s();
        double host = enqueue_launches(e->queue, k, n, 0);
        double t1 = now_s();
        CHECK(x.enqueue(0, NULL, chain, 0, NULL, NULL));
        double t2 = now_s();
        CHECK(clFinish(e->queue));
        double t3 = now_s();
        enqueue_launches(ooo, k, n, 1);
        double t4 = now_s();
        CHECK(x.enqueue(0, NULL, spread, 0, NULL, NULL));
        CHECK(clFinish(ooo));
        double t5 = now_s();
        if (run < 0) continue;
        s[0][run] = (t1 - t0) / n * 1e6;
        s[1][run] = (t3 - t1) / n * 1e6;
        s[2][run] = (t4 - t3) / n * 1e6;
        s[3][run] = (t5 - t4) / n * 1e6;
        s[4][run] = host / n * 1e6;
        s[5][run] = (t2 - t1) / n * 1e6;
    }
    int rounds = e->reps + 1;
    check_sums(e, buf, n, 2 * n * rounds, 2 * rounds);
    for (int i = 0; i < FIGURES; i++) {
        record("cmdbuf", names[i], "us", 0, 0, s[i], e->reps);
        free(s[i]);
    }
    x.release(chain);
    x.release(spread);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(ooo);
}
