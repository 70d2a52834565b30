/* Benchmark: clBuildProgram time of a mid-size program (six kernels, about 150 lines), and the
 * first enqueue of one of its kernels (pipeline creation).
 *
 *   cold       a new process, empty disk cache (VKCL_CACHE_DIR is a fresh directory);
 *   warm disk  a new process, the disk cache filled by the cold run;
 *   warm mem   the same process building the same source again.
 *
 * The program runs itself as the child processes (argv[1] = "child"). Other implementations
 * have their own cache switches (pocl: POCL_CACHE_DIR); the figures then mean what they do.
 *
 * With VKCL_BUILD_TIME_SETUP_MS=N, each measurement waits N ms between the build and the
 * kernel's creation: the application's own set-up (buffers, data), which an implementation
 * that compiles pipelines in the background can overlap. */
#include "common.h"
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "six_kernels.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Builds the source once and runs scan_block once; prints "<label> build <ms> first-enqueue <ms>". */
static void measure(const char *label, cl_context ctx, cl_device_id device, cl_command_queue q) {
    cl_int err;
    double t0 = now_ms();
    cl_program prog = clCreateProgramWithSource(ctx, 1, &six_kernels_source, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(prog, 1, &device, "", NULL, NULL));
    double t1 = now_ms();
    const char *setup = getenv("VKCL_BUILD_TIME_SETUP_MS");
    if (setup && atoi(setup) > 0) {
        struct timespec ts = {atoi(setup) / 1000, (atoi(setup) % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    cl_kernel k = clCreateKernel(prog, "scan_block", &err);
    CHECK_ERR(err);
    int data[64];
    for (int i = 0; i < 64; i++) data[i] = 1;
    cl_mem in = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
    CHECK_ERR(err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof data, NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(k, 0, sizeof in, &in));
    CHECK(clSetKernelArg(k, 1, sizeof out, &out));
    CHECK(clSetKernelArg(k, 2, 64 * sizeof(int), NULL));
    size_t global = 64, local = 64;
    double t2 = now_ms();
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clFinish(q));
    double t3 = now_ms();
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    if (data[63] != 64) {
        fprintf(stderr, "build_time: wrong scan result %d\n", data[63]);
        exit(1);
    }
    printf("%-10s build %8.2f ms   first enqueue %8.2f ms\n", label, t1 - t0, t3 - t2);
    fflush(stdout);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
}

static void child(const char *label, int also_in_memory) {
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;
    setup(&device, &ctx, &q);
    measure(label, ctx, device, q);
    if (also_in_memory) measure("warm mem", ctx, device, q);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}

static void run_child(const char *self, const char *label, const char *also) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "child", label, also, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "build_time: the %s run failed\n", label);
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        child(argv[2], strcmp(argv[3], "1") == 0);
        return 0;
    }
    char dir[] = "/tmp/vkcl-build-time-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("VKCL_CACHE_DIR", dir, 1);
    setenv("POCL_CACHE_DIR", dir, 1);
    run_child(argv[0], "cold", "0");
    run_child(argv[0], "warm disk", "1");
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "build_time: could not remove %s\n", dir);
    printf("build_time: done\n");
    return 0;
}
