// A launch + clFinish loop for instruction counts of vkcl's host path (issue 21): an empty-ish
// kernel with a buffer and an int argument (the int set before each launch), N rounds after
// 20 warm-up rounds; prints the time per round. Build: cc -O2 -o launch_finish
// tools/diag/launch_finish.c -lOpenCL. Profile (docs/BENCHMARKS.md):
//   VKCL_WAIT_SPIN_US=0 valgrind --tool=callgrind
//     --toggle-collect='vkcl::api::kernel::enqueue_nd_range_kernel*' ./launch_finish 1000
// (and --toggle-collect='vkcl::api::queue::finish*' for the wait).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static const char *src = "kernel void k(global int *a, int v) { if (get_global_id(0) == 0) a[0] = v; }";
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  cl_platform_id p; clGetPlatformIDs(1, &p, NULL);
  cl_device_id d; clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  cl_int e; cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  clBuildProgram(pr, 1, &d, "", NULL, NULL);
  cl_kernel k = clCreateKernel(pr, "k", &e);
  cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, 4096, NULL, &e);
  clSetKernelArg(k, 0, sizeof b, &b);
  size_t g = 64;
  for (int i = 0; i < 20; i++) { clSetKernelArg(k, 1, 4, &i); clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL); clFinish(q); }
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++) {
    clSetKernelArg(k, 1, 4, &i);
    clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
    clFinish(q);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%d launch+finish: %.2f us each, %.0f per second\n", n, 1e6 * s / n, n / s);
  return 0;
}
