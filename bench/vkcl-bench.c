/* vkcl-bench: OpenCL benchmarks through the standard API and the ICD loader, so the same binary
 * runs on vkcl and on any other implementation (docs/BENCHMARKS.md).
 *
 *   vkcl-bench [--platform SUB] [--device SUB] [--quick] [--reps N] [--only GROUP,...]
 *              [--label NAME] [--json FILE] [--write-overhead-kernels DIR]
 *
 * Groups: launch transfer memory compute build images threads cmdbuf. Each figure is measured after a
 * warm-up, `reps` times (default 7, 3 with --quick); the median, quartiles and range go to the
 * JSON file and a summary to stdout. Every benchmark checks its results: a wrong result or a
 * failing OpenCL call ends the run with status 1. bench/compare.py runs this once per
 * implementation and writes the side-by-side table and plots.
 *
 * Build: bench/build.sh (cc -O2 of the .c files here, into target/bench/vkcl-bench). */
#include "bench.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *GROUPS[] = {"launch", "transfer", "memory", "compute",
                               "build",  "images",   "threads", "cmdbuf"};
#define NGROUPS (sizeof GROUPS / sizeof *GROUPS)

void bench_fail(const char *file, int line, const char *what, cl_int err) {
    fprintf(stderr, "vkcl-bench: %s:%d: %s failed: %d\n", file, line, what, err);
    exit(1);
}

void bench_wrong(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vkcl-bench: WRONG RESULT: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

void *xmalloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "vkcl-bench: out of host memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

double sample_s(const Env *e) { return e->quick ? 0.005 : 0.05; }

/* A GPU whose shader cores sat idle (during transfers, builds) runs at its idle clock and
 * takes about 0.2 s of work to reach full speed (H200: 345 MHz, then 1980 MHz after 0.1-0.2 s;
 * nvidia-smi, docs/BENCHMARKS.md): a warm-up of one call measured the clock ramp. */
double warm_up_s(const Env *e) { return e->quick ? 0 : 0.3; }

void warm_up(void (*fn)(void *), void *arg, const Env *e) {
    time_per_call(fn, arg, warm_up_s(e));
}

double time_per_call(void (*fn)(void *), void *arg, double min_s) {
    int calls = 0;
    double t0 = now_s(), t;
    do {
        fn(arg);
        calls++;
        t = now_s();
    } while (t - t0 < min_s);
    return (t - t0) / calls;
}

/* ---- results: kept in memory, printed as they come, written as JSON at the end ---- */

typedef struct {
    char group[16], name[64], unit[16], status[96];
    int higher, n;
    size_t size;
    double median, q1, q3, min, max;
} Result;

static Result *results;
static int nresults, capresults;

static Result *new_result(const char *group, const char *name, const char *unit) {
    if (nresults == capresults) {
        capresults = capresults ? 2 * capresults : 64;
        results = realloc(results, capresults * sizeof *results);
        if (!results) bench_wrong("out of memory");
    }
    Result *r = &results[nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->group, sizeof r->group, "%s", group);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    snprintf(r->status, sizeof r->status, "ok");
    return r;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics of sorted v[0..n). */
static double quantile(const double *v, int n, double q) {
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1) return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

void record(const char *group, const char *name, const char *unit, int higher_is_better,
            size_t size, const double *samples, int n) {
    Result *r = new_result(group, name, unit);
    double *v = xmalloc(n * sizeof *v);
    memcpy(v, samples, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    r->higher = higher_is_better;
    r->size = size;
    r->n = n;
    r->median = quantile(v, n, 0.5);
    r->q1 = quantile(v, n, 0.25);
    r->q3 = quantile(v, n, 0.75);
    r->min = v[0];
    r->max = v[n - 1];
    free(v);
    printf("  %-9s %-28s %12.4g %-8s (%.4g – %.4g, n=%d)\n", group, name, r->median, unit, r->min,
           r->max, n);
    fflush(stdout);
}

void record_unsupported(const char *group, const char *name, const char *unit, const char *why) {
    Result *r = new_result(group, name, unit);
    snprintf(r->status, sizeof r->status, "%s", why);
    printf("  %-9s %-28s %s\n", group, name, why);
    fflush(stdout);
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s < 0x20) continue;
        fputc(*s, f);
    }
    fputc('"', f);
}

static void info_string(const Env *e, cl_device_info what, char *out, size_t len) {
    if (clGetDeviceInfo(e->device, what, len, out, NULL) != CL_SUCCESS) snprintf(out, len, "?");
}

static void write_json(const Env *e, const char *path, const char *label) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    char pname[256], dname[256], dversion[256], driver[256];
    CHECK(clGetPlatformInfo(e->platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL));
    info_string(e, CL_DEVICE_NAME, dname, sizeof dname);
    info_string(e, CL_DEVICE_VERSION, dversion, sizeof dversion);
    info_string(e, CL_DRIVER_VERSION, driver, sizeof driver);
    fprintf(f, "{\n  \"label\": ");
    json_string(f, label ? label : pname);
    fprintf(f, ",\n  \"platform\": ");
    json_string(f, pname);
    fprintf(f, ",\n  \"device\": ");
    json_string(f, dname);
    fprintf(f, ",\n  \"device_version\": ");
    json_string(f, dversion);
    fprintf(f, ",\n  \"driver_version\": ");
    json_string(f, driver);
    fprintf(f, ",\n  \"quick\": %s,\n  \"reps\": %d,\n  \"results\": [\n", e->quick ? "true" : "false",
            e->reps);
    for (int i = 0; i < nresults; i++) {
        Result *r = &results[i];
        fprintf(f, "    {\"group\": \"%s\", \"name\": ", r->group);
        json_string(f, r->name);
        fprintf(f, ", \"unit\": \"%s\", \"status\": ", r->unit);
        json_string(f, r->status);
        if (strcmp(r->status, "ok") == 0)
            fprintf(f,
                    ", \"higher_is_better\": %s, \"size\": %zu, \"n\": %d, \"median\": %.6g, "
                    "\"q1\": %.6g, \"q3\": %.6g, \"min\": %.6g, \"max\": %.6g",
                    r->higher ? "true" : "false", r->size, r->n, r->median, r->q1, r->q3, r->min,
                    r->max);
        fprintf(f, "}%s\n", i + 1 < nresults ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
}

/* ---- the device ---- */

static int pick(Env *e) {
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(0, NULL, &np));
    cl_platform_id platforms[16];
    if (np > 16) np = 16;
    CHECK(clGetPlatformIDs(np, platforms, NULL));
    for (cl_uint p = 0; p < np; p++) {
        char pname[256];
        CHECK(clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL));
        if (e->platform_sub && !strstr(pname, e->platform_sub)) continue;
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS) continue;
        cl_device_id devices[16];
        if (nd > 16) nd = 16;
        CHECK(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd, devices, NULL));
        for (cl_uint d = 0; d < nd; d++) {
            char dname[256];
            CHECK(clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof dname, dname, NULL));
            if (e->device_sub && !strstr(dname, e->device_sub)) continue;
            e->platform = platforms[p];
            e->device = devices[d];
            return 1;
        }
    }
    return 0;
}

static void open_device(Env *e) {
    if (!pick(e)) {
        fprintf(stderr, "vkcl-bench: no device%s%s%s%s\n", e->platform_sub ? " on platform " : "",
                e->platform_sub ? e->platform_sub : "", e->device_sub ? " named " : "",
                e->device_sub ? e->device_sub : "");
        exit(1);
    }
    cl_int err;
    e->ctx = clCreateContext(NULL, 1, &e->device, NULL, NULL, &err);
    CHECK(err);
    e->queue = clCreateCommandQueueWithProperties(e->ctx, e->device, NULL, &err);
    CHECK(err);
    cl_device_type type;
    CHECK(clGetDeviceInfo(e->device, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    e->gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    CHECK(clGetDeviceInfo(e->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof e->max_alloc,
                          &e->max_alloc, NULL));
}

cl_program build_or_die(const Env *e, const char *source, const char *options) {
    cl_int err;
    cl_program prog = clCreateProgramWithSource(e->ctx, 1, &source, NULL, &err);
    CHECK(err);
    err = clBuildProgram(prog, 1, &e->device, options, NULL, NULL);
    if (err == CL_SUCCESS) return prog;
    size_t len = 0;
    clGetProgramBuildInfo(prog, e->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
    char *log = xmalloc(len + 1);
    log[0] = 0;
    clGetProgramBuildInfo(prog, e->device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
    log[len] = 0;
    fprintf(stderr, "vkcl-bench: build failed (%d), log:\n%s\n", err, log);
    exit(1);
}

cl_kernel kernel_or_die(cl_program prog, const char *name) {
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    CHECK(err);
    return k;
}

cl_mem buffer_or_die(const Env *e, cl_mem_flags flags, size_t size, void *host) {
    cl_int err;
    cl_mem m = clCreateBuffer(e->ctx, flags, size, host, &err);
    CHECK(err);
    return m;
}

static void usage(void) {
    fprintf(stderr,
            "usage: vkcl-bench [--platform SUB] [--device SUB] [--quick] [--reps N]\n"
            "                  [--only GROUP,...] [--label NAME] [--json FILE]\n"
            "                  [--write-overhead-kernels DIR]\n"
            "groups: launch transfer memory compute build images threads cmdbuf\n");
    exit(2);
}

int main(int argc, char **argv) {
    Env e = {0};
    e.self = "/proc/self/exe";
    const char *only = NULL, *json = NULL, *label = NULL, *overhead_dir = NULL;
    int child = -1, reps = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) e.quick = 1;
        else if (!strcmp(a, "--platform") && v) e.platform_sub = argv[++i];
        else if (!strcmp(a, "--device") && v) e.device_sub = argv[++i];
        else if (!strcmp(a, "--reps") && v) reps = atoi(argv[++i]);
        else if (!strcmp(a, "--only") && v) only = argv[++i];
        else if (!strcmp(a, "--label") && v) label = argv[++i];
        else if (!strcmp(a, "--json") && v) json = argv[++i];
        else if (!strcmp(a, "--write-overhead-kernels") && v) overhead_dir = argv[++i];
        else if (!strcmp(a, "--build-child") && v) child = atoi(argv[++i]); /* internal */
        else usage();
    }
    e.reps = reps > 0 ? reps : e.quick ? 3 : 7;
    open_device(&e);
    if (child >= 0) {
        bench_build_child(&e, child);
        return 0;
    }
    char pname[256], dname[256];
    CHECK(clGetPlatformInfo(e.platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL));
    CHECK(clGetDeviceInfo(e.device, CL_DEVICE_NAME, sizeof dname, dname, NULL));
    printf("vkcl-bench: platform %s, device %s%s\n", pname, dname, e.quick ? " (quick)" : "");
    if (overhead_dir) {
        write_overhead_kernels(&e, overhead_dir);
        return 0;
    }
    void (*run[NGROUPS])(const Env *) = {bench_launch,  bench_transfer, bench_memory,
                                         bench_compute, bench_build,    bench_images,
                                         bench_threads, bench_cmdbuf};
    for (size_t g = 0; g < NGROUPS; g++) {
        if (only) {
            const char *p = strstr(only, GROUPS[g]);
            size_t len = strlen(GROUPS[g]);
            if (!p || (p != only && p[-1] != ',') || (p[len] && p[len] != ',')) continue;
        }
        printf("== %s\n", GROUPS[g]);
        fflush(stdout);
        run[g](&e);
    }
    if (json) write_json(&e, json, label);
    printf("vkcl-bench: done, every result verified\n");
    clReleaseCommandQueue(e.queue);
    clReleaseContext(e.ctx);
    return 0;
}
