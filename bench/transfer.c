/* transfer: host↔device bandwidth, 4 KiB to 256 MiB by factors of 4 (capped at the device's
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE; 1 MiB with --quick), pageable host memory:
 *
 *   write, read   blocking clEnqueueWriteBuffer / clEnqueueReadBuffer
 *   map read      clEnqueueMapBuffer(CL_MAP_READ), memcpy out, unmap, clFinish
 *   map write     clEnqueueMapBuffer(CL_MAP_WRITE_INVALIDATE_REGION), memcpy in, unmap, clFinish
 *
 * GB/s = 1e9 bytes/s. Each sample is the mean over calls lasting at least sample_s(); the data
 * is checked after each kind of transfer. */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const Env *e;
    cl_mem buf;
    unsigned char *host;
    size_t size;
    int op;
} Transfer;

enum { WRITE, READ, MAP_READ, MAP_WRITE, NOPS };
static const char *NAMES[NOPS] = {"write", "read", "map read", "map write"};

static void transfer_once(void *arg) {
    Transfer *t = arg;
    cl_command_queue q = t->e->queue;
    cl_int err;
    switch (t->op) {
    case WRITE:
        CHECK(clEnqueueWriteBuffer(q, t->buf, CL_TRUE, 0, t->size, t->host, 0, NULL, NULL));
        break;
    case READ:
        CHECK(clEnqueueReadBuffer(q, t->buf, CL_TRUE, 0, t->size, t->host, 0, NULL, NULL));
        break;
    default: {
        cl_map_flags flags = t->op == MAP_READ ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION;
        void *p = clEnqueueMapBuffer(q, t->buf, CL_TRUE, flags, 0, t->size, 0, NULL, NULL, &err);
        CHECK(err);
        if (t->op == MAP_READ)
            memcpy(t->host, p, t->size);
        else
            memcpy(p, t->host, t->size);
        CHECK(clEnqueueUnmapMemObject(q, t->buf, p, 0, NULL, NULL));
        CHECK(clFinish(q));
    }
    }
}

static void fill(unsigned char *p, size_t size, unsigned seed) {
    for (size_t i = 0; i < size; i++) p[i] = (unsigned char)(i * 31 + seed);
}

static void check(const unsigned char *p, size_t size, unsigned seed, const char *what) {
    for (size_t i = 0; i < size; i++)
        if (p[i] != (unsigned char)(i * 31 + seed))
            bench_wrong("transfer %s of %zu bytes: byte %zu is %u", what, size, i, p[i]);
}

/* What the buffer holds after `op` wrote seed's pattern, read back with a plain read. */
static void verify_buffer(Transfer *t, unsigned seed, const char *what) {
    unsigned char *back = xmalloc(t->size);
    CHECK(clEnqueueReadBuffer(t->e->queue, t->buf, CL_TRUE, 0, t->size, back, 0, NULL, NULL));
    check(back, t->size, seed, what);
    free(back);
}

static void one_size(const Env *e, size_t size) {
    Transfer t = {e, buffer_or_die(e, CL_MEM_READ_WRITE, size, NULL), xmalloc(size), size, 0};
    double *samples = xmalloc(e->reps * sizeof(double));
    for (int op = 0; op < NOPS; op++) {
        unsigned seed = 7 + op;
        /* Writes carry the pattern in; reads find the one the previous op left. */
        if (op == WRITE || op == MAP_WRITE) fill(t.host, size, seed);
        if (op == MAP_READ) seed = 7 + READ;
        t.op = op;
        warm_up(transfer_once, &t, e);
        for (int r = 0; r < e->reps; r++)
            samples[r] = size / time_per_call(transfer_once, &t, sample_s(e)) / 1e9;
        char name[64];
        if (size >= 1 << 20)
            snprintf(name, sizeof name, "%s %zu MiB", NAMES[op], size >> 20);
        else
            snprintf(name, sizeof name, "%s %zu KiB", NAMES[op], size >> 10);
        record("transfer", name, "GB/s", 1, size, samples, e->reps);
        if (op == WRITE || op == MAP_WRITE) verify_buffer(&t, seed, NAMES[op]);
        if (op == READ || op == MAP_READ) check(t.host, size, seed, NAMES[op]);
        if (op == WRITE) { /* the pattern the reads should find */
            fill(t.host, size, 7 + READ);
            CHECK(clEnqueueWriteBuffer(e->queue, t.buf, CL_TRUE, 0, size, t.host, 0, NULL, NULL));
            memset(t.host, 0, size);
        }
        if (op == READ) memset(t.host, 0, size);
    }
    free(samples);
    free(t.host);
    clReleaseMemObject(t.buf);
}

void bench_transfer(const Env *e) {
    size_t max = e->quick ? (size_t)1 << 20 : (size_t)256 << 20;
    while (max > e->max_alloc) max /= 4;
    for (size_t size = 4096; size <= max; size *= 4) one_size(e, size);
}
