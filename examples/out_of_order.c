/* Benchmark: do independent commands overlap on an out-of-order queue?
 *
 * K kernels, each one small work-group spinning on its own buffer (so one kernel cannot fill
 * the device), run on an in-order queue and on an out-of-order queue; then on the
 * out-of-order queue again with a barrier between every two kernels. Prints the times and the
 * speed-up; results are checked. On a device that runs several kernels at once the
 * out-of-order time approaches one kernel's; with barriers it is the in-order time. */
#include "common.h"
#include <time.h>

#define K 8

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double run(cl_command_queue q, cl_kernel *k, int barriers) {
    size_t global = 32, local = 32;
    double t0 = now_ms();
    for (int i = 0; i < K; i++) {
        CHECK(clEnqueueNDRangeKernel(q, k[i], 1, NULL, &global, &local, 0, NULL, NULL));
        if (barriers) CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
    }
    CHECK(clFinish(q));
    return now_ms() - t0;
}

int main(int argc, char **argv) {
    int iterations = argc > 1 ? atoi(argv[1]) : 200000;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue in_order;
    setup(&device, &ctx, &in_order);
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue ooo = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    CHECK_ERR(err);
    cl_program prog = build(ctx, device,
                            "kernel void spin(global float *b, int n) {\n"
                            "    float x = b[get_global_id(0)];\n"
                            "    for (int i = 0; i < n; i++) x = x * 0.999f + 1.0f;\n"
                            "    b[get_global_id(0)] = x;\n"
                            "}\n");
    if (!prog) return 1;
    cl_kernel k[K];
    cl_mem b[K];
    for (int i = 0; i < K; i++) {
        k[i] = clCreateKernel(prog, "spin", &err);
        CHECK_ERR(err);
        b[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 32 * sizeof(float), NULL, &err);
        CHECK_ERR(err);
        float zero = 0;
        CHECK(clEnqueueFillBuffer(in_order, b[i], &zero, sizeof zero, 0, 32 * sizeof(float), 0,
                                  NULL, NULL));
        CHECK(clSetKernelArg(k[i], 0, sizeof b[i], &b[i]));
        CHECK(clSetKernelArg(k[i], 1, sizeof iterations, &iterations));
    }
    CHECK(clFinish(in_order));
    run(in_order, k, 0); /* warm-up (pipelines) */
    double t_in = run(in_order, k, 0);
    double t_ooo = run(ooo, k, 0);
    double t_bar = run(ooo, k, 1);
    float x[32];
    CHECK(clEnqueueReadBuffer(in_order, b[K - 1], CL_TRUE, 0, sizeof x, x, 0, NULL, NULL));
    if (!(x[0] > 900.0f && x[0] <= 1000.0f)) {
        fprintf(stderr, "out_of_order: wrong result %f\n", x[0]);
        return 1;
    }
    printf("%d kernels: in-order %.2f ms, out-of-order %.2f ms (%.2fx), out-of-order with "
           "barriers %.2f ms\n",
           K, t_in, t_ooo, t_in / t_ooo, t_bar);
    printf("out_of_order: verified\n");
    for (int i = 0; i < K; i++) {
        clReleaseKernel(k[i]);
        clReleaseMemObject(b[i]);
    }
    clReleaseProgram(prog);
    clReleaseCommandQueue(ooo);
    clReleaseCommandQueue(in_order);
    clReleaseContext(ctx);
    return 0;
}
