/* threads: what entry points cost when several threads call them at once (issue 17's
 * contention). Each of T threads (1, then 8) works on its own in-order queue of the shared
 * context, all starting together; the figure is the calls per second of all threads together
 * (from the common start to the end of the last thread), so a lock that serialises them shows
 * as an 8-thread rate no higher than the 1-thread one (on a machine with more than one core).
 *
 *   launch      clEnqueueNDRangeKernel of an empty kernel (each thread its own kernel object),
 *               then one clFinish per thread
 *   write 64 B  blocking clEnqueueWriteBuffer of 64 bytes into the thread's own buffer
 *   retain+info clRetainMemObject, clGetMemObjectInfo(CL_MEM_SIZE), clReleaseMemObject on one
 *               buffer that every thread shares (three calls per iteration, counted as three) */
#include "bench.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MAX_THREADS 8

static const char *source = "kernel void empty(global int *p) {}\n";

typedef struct {
    const Env *e;
    int kind; /* 0 launch, 1 write, 2 retain+info */
    int iters;
    cl_command_queue queue;
    cl_kernel kernel;
    cl_mem own, shared;
    pthread_barrier_t *start;
    double end; /* now_s() when the thread finished */
} Worker;

static void *work(void *arg) {
    Worker *w = arg;
    size_t one = 1;
    char data[64];
    memset(data, w->iters & 0xff, sizeof data);
    pthread_barrier_wait(w->start);
    for (int i = 0; i < w->iters; i++) {
        if (w->kind == 0) {
            CHECK(clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &one, NULL, 0, NULL, NULL));
        } else if (w->kind == 1) {
            CHECK(clEnqueueWriteBuffer(w->queue, w->own, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
        } else {
            size_t size = 0;
            CHECK(clRetainMemObject(w->shared));
            CHECK(clGetMemObjectInfo(w->shared, CL_MEM_SIZE, sizeof size, &size, NULL));
            CHECK(clReleaseMemObject(w->shared));
            if (size != 4096) bench_wrong("threads: CL_MEM_SIZE %zu, expected 4096", size);
        }
    }
    CHECK(clFinish(w->queue));
    w->end = now_s();
    return NULL;
}

/* Calls per second of `threads` threads running `kind` together. */
static double run(Worker *ws, int threads, int kind, int iters) {
    pthread_t t[MAX_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, threads + 1); /* the workers and this thread */
    for (int i = 0; i < threads; i++) {
        ws[i].kind = kind;
        ws[i].iters = iters;
        ws[i].start = &start;
        if (pthread_create(&t[i], NULL, work, &ws[i])) bench_wrong("threads: pthread_create failed");
    }
    /* Timed from before the release: a worker may finish before this thread wakes. */
    double t0 = now_s(), last = t0;
    pthread_barrier_wait(&start);
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        if (ws[i].end > last) last = ws[i].end;
    }
    pthread_barrier_destroy(&start);
    double calls = (double)threads * iters * (kind == 2 ? 3 : 1);
    return calls / (last - t0);
}

void bench_threads(const Env *e) {
    cl_program prog = build_or_die(e, source, "");
    cl_mem shared = buffer_or_die(e, CL_MEM_READ_WRITE, 4096, NULL);
    Worker ws[MAX_THREADS];
    for (int i = 0; i < MAX_THREADS; i++) {
        cl_int err;
        memset(&ws[i], 0, sizeof ws[i]);
        ws[i].e = e;
        ws[i].queue = clCreateCommandQueueWithProperties(e->ctx, e->device, NULL, &err);
        CHECK(err);
        ws[i].kernel = kernel_or_die(prog, "empty");
        ws[i].own = buffer_or_die(e, CL_MEM_READ_WRITE, 64, NULL);
        ws[i].shared = shared;
        CHECK(clSetKernelArg(ws[i].kernel, 0, sizeof ws[i].own, &ws[i].own));
    }
    static const char *names[] = {"launch", "write 64 B", "retain+info"};
    int iters[] = {e->quick ? 200 : 4000, e->quick ? 1000 : 40000, e->quick ? 20000 : 400000};
    double *samples = xmalloc(e->reps * sizeof(double));
    for (int kind = 0; kind < 3; kind++) {
        for (int threads = 1; threads <= MAX_THREADS; threads += MAX_THREADS - 1) {
            run(ws, threads, kind, iters[kind] / 10); /* warm-up */
            for (int r = 0; r < e->reps; r++) samples[r] = run(ws, threads, kind, iters[kind]);
            char name[64];
            snprintf(name, sizeof name, "%s, %d thread%s", names[kind], threads, threads > 1 ? "s" : "");
            record("threads", name, "1/s", 1, 0, samples, e->reps);
        }
    }
    for (int i = 0; i < MAX_THREADS; i++) {
        char got[64];
        CHECK(clEnqueueReadBuffer(ws[i].queue, ws[i].own, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
        for (size_t b = 0; b < sizeof got; b++)
            if (got[b] != (char)(iters[1] & 0xff))
                bench_wrong("threads: thread %d's buffer byte %zu is %d", i, b, got[b]);
        clReleaseMemObject(ws[i].own);
        clReleaseKernel(ws[i].kernel);
        clReleaseCommandQueue(ws[i].queue);
    }
    free(samples);
    clReleaseMemObject(shared);
    clReleaseProgram(prog);
}
