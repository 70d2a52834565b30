/* Benchmark: the cost of launching kernels.
 *
 *   enqueue     host time of clEnqueueNDRangeKernel per launch (N launches, then one clFinish)
 *   throughput  empty-kernel launches per second, N launches then clFinish
 *   sync        launches per second with a clFinish after each launch
 *   chain       time of 1000 dependent small kernels (each reads what the previous wrote;
 *               in-order queue), per kernel and in all
 *
 * Each figure is the median of 5 runs after a warm-up. Any ICD: pick the device with
 * VKCL_EXAMPLE_DEVICE (a substring of its name), the ICD with OCL_ICD_VENDORS. The first
 * argument, if any, is N (default 2000). */
#include "common.h"
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define RUNS 5
static double median(double *v) {
    qsort(v, RUNS, sizeof *v, cmp);
    return v[RUNS / 2];
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n < 1) n = 1;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;
    setup(&device, &ctx, &q);
    cl_program prog = build(ctx, device,
                            "kernel void empty(global int *p) {}\n"
                            "kernel void inc(global int *p) { p[get_global_id(0)] += 1; }\n");
    if (!prog) return 1;
    cl_int err;
    cl_kernel empty = clCreateKernel(prog, "empty", &err);
    CHECK_ERR(err);
    cl_kernel step = clCreateKernel(prog, "inc", &err);
    CHECK_ERR(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
    CHECK_ERR(err);
    int zero = 0;
    CHECK(clEnqueueFillBuffer(q, buf, &zero, sizeof zero, 0, 64 * sizeof(int), 0, NULL, NULL));
    CHECK(clSetKernelArg(empty, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(step, 0, sizeof buf, &buf));
    size_t one = 1, sixty_four = 64;

    double enqueue[RUNS], throughput[RUNS], sync[RUNS], chain[RUNS];
    for (int run = -1; run < RUNS; run++) { /* run -1: warm-up */
        double t0 = now_us(), enq = 0;
        for (int i = 0; i < n; i++) {
            double a = now_us();
            CHECK(clEnqueueNDRangeKernel(q, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
            enq += now_us() - a;
        }
        CHECK(clFinish(q));
        double t1 = now_us();
        int m = n / 10 > 0 ? n / 10 : 1;
        for (int i = 0; i < m; i++) {
            CHECK(clEnqueueNDRangeKernel(q, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
            CHECK(clFinish(q));
        }
        double t2 = now_us();
        for (int i = 0; i < 1000; i++)
            CHECK(clEnqueueNDRangeKernel(q, step, 1, NULL, &sixty_four, NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
        double t3 = now_us();
        if (run < 0) continue;
        enqueue[run] = enq / n;
        throughput[run] = n / ((t1 - t0) / 1e6);
        sync[run] = m / ((t2 - t1) / 1e6);
        chain[run] = t3 - t2;
    }
    int check[64];
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof check, check, 0, NULL, NULL));
    if (check[0] != 1000 * (RUNS + 1) || check[63] != check[0]) {
        fprintf(stderr, "launch_overhead: the chain computed %d, expected %d\n", check[0],
                1000 * (RUNS + 1));
        return 1;
    }
    double c = median(chain);
    printf("enqueue     %10.2f us per launch\n", median(enqueue));
    printf("throughput  %10.0f launches/s (clFinish after %d)\n", median(throughput), n);
    printf("sync        %10.0f launches/s (clFinish after each)\n", median(sync));
    printf("chain       %10.2f ms for 1000 dependent kernels (%.2f us each)\n", c / 1e3, c / 1e3);
    printf("launch_overhead: verified\n");
    clReleaseMemObject(buf);
    clReleaseKernel(empty);
    clReleaseKernel(step);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
