// Where clpeak's kernel launch latency (START - QUEUED of an empty kernel's event) goes:
// medians of SUBMIT - QUEUED, START - SUBMIT and END - START over 2000 launches, each followed
// by clFinish (as clpeak does), and of the host's enqueue and clFinish times.
// Usage: latency (first platform's first device; OCL_ICD_VENDORS chooses the ICD).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *SRC = "kernel void nop(global float *a) { if (get_global_id(0) == 1u << 30) a[0] = 1; }\n";

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp);
  return v[n / 2];
}

#define N 2000
int main(void) {
  cl_platform_id p; clGetPlatformIDs(1, &p, 0);
  cl_device_id d; clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, 0);
  cl_int e; cl_context ctx = clCreateContext(0, 1, &d, 0, 0, &e);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, props, &e);
  cl_program pr = clCreateProgramWithSource(ctx, 1, &SRC, 0, &e);
  if (clBuildProgram(pr, 1, &d, "", 0, 0)) { printf("build failed\n"); return 1; }
  cl_kernel k = clCreateKernel(pr, "nop", &e);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, 0, &e);
  clSetKernelArg(k, 0, sizeof a, &a);
  static double sq[N], ss[N], se[N], enq[N], fin[N];
  size_t g = 64 * 1024, l = 64;
  for (int i = -50; i < N; i++) {
    cl_event ev;
    double t0 = now_us();
    clEnqueueNDRangeKernel(q, k, 1, 0, &g, &l, 0, 0, &ev);
    double t1 = now_us();
    clFinish(q);
    double t2 = now_us();
    cl_ulong t[4];
    cl_profiling_info names[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                 CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    for (int j = 0; j < 4; j++) clGetEventProfilingInfo(ev, names[j], 8, &t[j], 0);
    clReleaseEvent(ev);
    if (i < 0) continue;
    sq[i] = (t[1] - t[0]) * 1e-3; ss[i] = (t[2] - t[1]) * 1e-3; se[i] = (t[3] - t[2]) * 1e-3;
    enq[i] = t1 - t0; fin[i] = t2 - t1;
  }
  char name[256]; clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, 0);
  printf("%s: median µs: submit-queued %.2f, start-submit %.2f, end-start %.2f; "
         "host enqueue %.2f, clFinish %.2f\n", name, median(sq, N), median(ss, N), median(se, N),
         median(enq, N), median(fin, N));
  return 0;
}
