/* vkcl-bench: what the benchmark groups share (timing, statistics, results, the device). */
#ifndef VKCL_BENCH_H
#define VKCL_BENCH_H
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stddef.h>

/* Every OpenCL call is checked; a failure ends the run with a non-zero status. */
#define CHECK(call)                                                                    \
    do {                                                                               \
        cl_int err_ = (call);                                                          \
        if (err_ != CL_SUCCESS) bench_fail(__FILE__, __LINE__, #call, err_);           \
    } while (0)

void bench_fail(const char *file, int line, const char *what, cl_int err);

/* Ends the run: a benchmark computed a wrong result. printf-style message. */
void bench_wrong(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

typedef struct {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;   /* in order, no profiling */
    int quick;                /* short settings for CI: seconds, not minutes */
    int reps;                 /* measured repetitions of each figure (after one warm-up) */
    int gpu;                  /* CL_DEVICE_TYPE_GPU: larger problem sizes */
    cl_ulong max_alloc;       /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    const char *platform_sub; /* the selection, passed on to child processes */
    const char *device_sub;
    const char *self;         /* this program, for child processes */
} Env;

double now_s(void);

/* One figure: `reps` samples, summarised by median, quartiles and range. `size` is the
 * transfer size in bytes for figures that have one (0 otherwise). */
void record(const char *group, const char *name, const char *unit, int higher_is_better,
            size_t size, const double *samples, int n);
/* A figure the device cannot produce (e.g. images without CL_DEVICE_IMAGE_SUPPORT). */
void record_unsupported(const char *group, const char *name, const char *unit, const char *why);

/* Builds `source` for the device; on failure prints the log and ends the run. */
cl_program build_or_die(const Env *e, const char *source, const char *options);
cl_kernel kernel_or_die(cl_program prog, const char *name);
cl_mem buffer_or_die(const Env *e, cl_mem_flags flags, size_t size, void *host);
void *xmalloc(size_t size);

/* Repeats `fn(arg)` until at least `min_s` seconds have passed (and at least once); returns
 * the seconds per call. */
double time_per_call(void (*fn)(void *), void *arg, double min_s);

/* Calls fn until the device runs at full speed (warm_up_s: 0.3 s; one call with --quick). */
void warm_up(void (*fn)(void *), void *arg, const Env *e);
double warm_up_s(const Env *e);

/* Seconds a timed sample should last (shorter with --quick). */
double sample_s(const Env *e);

void bench_launch(const Env *e);
void bench_transfer(const Env *e);
void bench_memory(const Env *e);
void bench_compute(const Env *e);
void bench_build(const Env *e);
void bench_build_child(const Env *e, int also_in_memory);
void bench_images(const Env *e);
void bench_threads(const Env *e);
void bench_cmdbuf(const Env *e);

/* The kernels that the raw-Vulkan baseline (examples/raw_vulkan.rs) dispatches too: their
 * program binaries and launch parameters written into `dir`. */
void write_overhead_kernels(const Env *e, const char *dir);

/* Shared by memory.c and the overhead kernels: the problem sizes and sources. */
extern const char *memory_source;
extern const char *fma_source;
size_t triad_bytes(const Env *e);  /* bytes of each of the three triad arrays */
size_t fma_items(const Env *e);
#define FMA_ITERS 4096
#define LOCAL_SIZE 128
int launches_per_sample(const Env *e);

#endif
