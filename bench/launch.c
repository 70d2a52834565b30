/* launch: what launching a kernel costs.
 *
 *   enqueue       host time of one clEnqueueNDRangeKernel (an empty kernel, one work-item),
 *                 N launches then one clFinish
 *   empty rate    empty-kernel launches per second, N launches then one clFinish
 *   sync rate     launches per second with a clFinish after each (the round trip)
 *   chain         per kernel, 1000 dependent small kernels on an in-order queue (each adds 1
 *                 to what the previous one wrote; the sum is checked) */
#include "bench.h"
#include <stdio.h>

static const char *source =
    "kernel void empty(global int *p) {}\n"
    "kernel void inc(global int *p) { p[get_global_id(0)] += 1; }\n";

#define CHAIN 1000

typedef struct {
    const Env *e;
    cl_kernel k;
} Empty;

/* An empty launch and clFinish: the warm-up (the first group runs on an idle, slow GPU). */
static void launch_finish(void *arg) {
    Empty *x = arg;
    size_t one = 1;
    CHECK(clEnqueueNDRangeKernel(x->e->queue, x->k, 1, NULL, &one, NULL, 0, NULL, NULL));
    CHECK(clFinish(x->e->queue));
}

void bench_launch(const Env *e) {
    cl_program prog = build_or_die(e, source, "");
    cl_kernel empty = kernel_or_die(prog, "empty"), inc = kernel_or_die(prog, "inc");
    cl_mem buf = buffer_or_die(e, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL);
    int zero = 0;
    CHECK(clEnqueueFillBuffer(e->queue, buf, &zero, sizeof zero, 0, 64 * sizeof(int), 0, NULL, NULL));
    CHECK(clSetKernelArg(empty, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(inc, 0, sizeof buf, &buf));
    int n = e->quick ? 200 : 2000, m = n / 10, chain = e->quick ? 100 : CHAIN;
    size_t one = 1, sixty_four = 64;
    double *enqueue = xmalloc(e->reps * sizeof(double)), *rate = xmalloc(e->reps * sizeof(double));
    double *sync = xmalloc(e->reps * sizeof(double)), *dep = xmalloc(e->reps * sizeof(double));
    Empty warm = {e, empty};
    warm_up(launch_finish, &warm, e);
    for (int run = -1; run < e->reps; run++) { /* run -1: the warm-up */
        double t0 = now_s(), enq = 0;
        for (int i = 0; i < n; i++) {
            double a = now_s();
            CHECK(clEnqueueNDRangeKernel(e->queue, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
            enq += now_s() - a;
        }
        CHECK(clFinish(e->queue));
        double t1 = now_s();
        for (int i = 0; i < m; i++) {
            CHECK(clEnqueueNDRangeKernel(e->queue, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
            CHECK(clFinish(e->queue));
        }
        double t2 = now_s();
        for (int i = 0; i < chain; i++)
            CHECK(clEnqueueNDRangeKernel(e->queue, inc, 1, NULL, &sixty_four, NULL, 0, NULL, NULL));
        CHECK(clFinish(e->queue));
        double t3 = now_s();
        if (run < 0) continue;
        enqueue[run] = enq / n * 1e6;
        rate[run] = n / (t1 - t0);
        sync[run] = m / (t2 - t1);
        dep[run] = (t3 - t2) / chain * 1e6;
    }
    int check[64];
    CHECK(clEnqueueReadBuffer(e->queue, buf, CL_TRUE, 0, sizeof check, check, 0, NULL, NULL));
    int want = chain * (e->reps + 1);
    for (int i = 0; i < 64; i++)
        if (check[i] != want) bench_wrong("launch chain: element %d is %d, expected %d", i, check[i], want);
    record("launch", "enqueue cost", "us", 0, 0, enqueue, e->reps);
    record("launch", "empty kernels per second", "1/s", 1, 0, rate, e->reps);
    record("launch", "launch+finish per second", "1/s", 1, 0, sync, e->reps);
    record("launch", "dependent chain per kernel", "us", 0, 0, dep, e->reps);
    free(enqueue);
    free(rate);
    free(sync);
    free(dep);
    clReleaseMemObject(buf);
    clReleaseKernel(empty);
    clReleaseKernel(inc);
    clReleaseProgram(prog);
}
