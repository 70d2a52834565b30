/* build: clBuildProgram of a six-kernel program (about 90 lines of OpenCL C), and the first
 * enqueue of one of its kernels (on vkcl: pipeline creation).
 *
 *   cold        a new process, empty caches (VKCL_CACHE_DIR, POCL_CACHE_DIR and
 *               CUDA_CACHE_PATH point at a fresh directory)
 *   warm disk   a new process, the caches filled by the cold run
 *   warm memory the warm-disk process building the same source again
 *
 * This program runs itself as the child processes (--build-child), one cold and one warm
 * process per repetition; each child prints its times on stdout. Other implementations'
 * figures mean what their caches make them mean. */
#define _GNU_SOURCE
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../examples/six_kernels.h"

/* Builds the source and runs scan_block once; prints "<build ms> <first enqueue ms>". */
static void measure(const Env *e) {
    cl_int err;
    double t0 = now_s();
    cl_program prog = clCreateProgramWithSource(e->ctx, 1, &six_kernels_source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &e->device, "", NULL, NULL));
    double t1 = now_s();
    cl_kernel k = kernel_or_die(prog, "scan_block");
    int data[64];
    for (int i = 0; i < 64; i++) data[i] = 1;
    cl_mem in = buffer_or_die(e, CL_MEM_COPY_HOST_PTR, sizeof data, data);
    cl_mem out = buffer_or_die(e, CL_MEM_WRITE_ONLY, sizeof data, NULL);
    CHECK(clSetKernelArg(k, 0, sizeof in, &in));
    CHECK(clSetKernelArg(k, 1, sizeof out, &out));
    CHECK(clSetKernelArg(k, 2, 64 * sizeof(int), NULL));
    size_t global = 64, local = 64;
    double t2 = now_s();
    CHECK(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clFinish(e->queue));
    double t3 = now_s();
    CHECK(clEnqueueReadBuffer(e->queue, out, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    for (int i = 0; i < 64; i++)
        if (data[i] != i + 1) bench_wrong("build: scan_block computed %d at %d", data[i], i);
    printf("%.6f %.6f\n", (t1 - t0) * 1e3, (t3 - t2) * 1e3);
    fflush(stdout);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
}

void bench_build_child(const Env *e, int also_in_memory) {
    measure(e);
    if (also_in_memory) measure(e);
}

/* Runs this program as a build child; reads `n` numbers from its stdout into `out`. */
static void run_child(const Env *e, int also_in_memory, double *out, int n) {
    int fds[2];
    if (pipe(fds) != 0) bench_wrong("pipe failed");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        char arg[8];
        snprintf(arg, sizeof arg, "%d", also_in_memory);
        const char *argv[9] = {e->self, "--build-child", arg};
        int a = 3;
        if (e->platform_sub) argv[a++] = "--platform", argv[a++] = e->platform_sub;
        if (e->device_sub) argv[a++] = "--device", argv[a++] = e->device_sub;
        argv[a] = NULL;
        execv(e->self, (char **)argv);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    int got = 0;
    while (got < n && fscanf(f, "%lf", &out[got]) == 1) got++;
    fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != n)
        bench_wrong("build: a child process failed (status %d, %d of %d figures)", status, got, n);
}

void bench_build(const Env *e) {
    int reps = e->reps;
    double *v[6];
    for (int i = 0; i < 6; i++) v[i] = xmalloc(reps * sizeof(double));
    for (int r = 0; r < reps; r++) {
        char dir[] = "/tmp/vkcl-bench-cache-XXXXXX";
        if (!mkdtemp(dir)) bench_wrong("mkdtemp failed");
        setenv("VKCL_CACHE_DIR", dir, 1);
        setenv("POCL_CACHE_DIR", dir, 1);
        setenv("CUDA_CACHE_PATH", dir, 1);
        double cold[2], warm[4];
        run_child(e, 0, cold, 2);
        run_child(e, 1, warm, 4);
        v[0][r] = cold[0], v[1][r] = warm[0], v[2][r] = warm[2];
        v[3][r] = cold[1], v[4][r] = warm[1], v[5][r] = warm[3];
        char cmd[sizeof dir + 16];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) fprintf(stderr, "vkcl-bench: could not remove %s\n", dir);
    }
    unsetenv("VKCL_CACHE_DIR");
    unsetenv("POCL_CACHE_DIR");
    unsetenv("CUDA_CACHE_PATH");
    const char *names[6] = {"build cold", "build warm disk (new process)", "build warm memory",
                            "first enqueue, cold", "first enqueue, warm disk", "first enqueue, warm memory"};
    for (int i = 0; i < 6; i++) {
        record("build", names[i], "ms", 0, 0, v[i], reps);
        free(v[i]);
    }
}
