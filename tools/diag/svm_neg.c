// Which SVM pointer reads finish on a device: each case in its own child process (a hang or a
// fault ends only that case). Usage: svm_neg [case...]; prints one line per case.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

static const char *SRC =
    "kernel void pos(global int *in, global int *out, int k) { out[0] = in[1]; }\n"
    "kernel void neg(global int *in, global int *out, int k) { out[0] = in[-1]; }\n"
    "kernel void run(global int *in, global int *out, int k) { out[0] = in[k]; }\n"
    "kernel void zero(global int *in, global int *out, int k) { out[0] = in[0]; }\n"
    "kernel void addr(global int *in, global ulong *out, int k) { out[0] = (ulong)in; out[1] = (ulong)(in + k); }\n";

struct c { const char *name, *kernel; cl_svm_mem_flags flags; int offset, k; };
static const struct c CASES[] = {
    {"fine zero a+0", "zero", CL_MEM_SVM_FINE_GRAIN_BUFFER, 0, 0},
    {"fine zero a+10", "zero", CL_MEM_SVM_FINE_GRAIN_BUFFER, 10, 0},
    {"fine pos a+10", "pos", CL_MEM_SVM_FINE_GRAIN_BUFFER, 10, 0},
    {"fine run a+10 k=3", "run", CL_MEM_SVM_FINE_GRAIN_BUFFER, 10, 3},
    {"fine addr a+10 k=-3", "addr", CL_MEM_SVM_FINE_GRAIN_BUFFER, 10, -3},
    {"fine neg a+10", "neg", CL_MEM_SVM_FINE_GRAIN_BUFFER, 10, 0},
    {"fine run a+10 k=-3", "run", CL_MEM_SVM_FINE_GRAIN_BUFFER, 10, -3},
    {"coarse zero a+10", "zero", 0, 10, 0},
    {"coarse neg a+10", "neg", 0, 10, 0},
    {"coarse run a+10 k=-3", "run", 0, 10, -3},
};

static int one(const struct c *c) {
  cl_platform_id p; clGetPlatformIDs(1, &p, 0);
  cl_device_id d; clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, 0);
  cl_int e; cl_context ctx = clCreateContext(0, 1, &d, 0, 0, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, 0, &e);
  cl_program pr = clCreateProgramWithSource(ctx, 1, &SRC, 0, &e);
  if ((e = clBuildProgram(pr, 1, &d, "", 0, 0))) { printf("build %d\n", e); return 2; }
  cl_kernel k = clCreateKernel(pr, c->kernel, &e);
  int fine = c->flags != 0;
  int *a = clSVMAlloc(ctx, CL_MEM_READ_WRITE | c->flags, 64 * 4, 0);
  cl_ulong *out = clSVMAlloc(ctx, CL_MEM_READ_WRITE | c->flags, 64, 0);
  if (!a || !out) { printf("no SVM\n"); return 2; }
  if (!fine) { clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE, a, 256, 0, 0, 0); clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE, out, 64, 0, 0, 0); }
  for (int i = 0; i < 64; i++) a[i] = 100 + i;
  memset(out, 0xee, 64);
  if (!fine) { clEnqueueSVMUnmap(q, a, 0, 0, 0); clEnqueueSVMUnmap(q, out, 0, 0, 0); }
  e = clSetKernelArgSVMPointer(k, 0, a + c->offset);
  e |= clSetKernelArgSVMPointer(k, 1, out);
  e |= clSetKernelArg(k, 2, sizeof(int), &c->k);
  size_t g = 1;
  cl_int r = clEnqueueNDRangeKernel(q, k, 1, 0, &g, 0, 0, 0, 0);
  cl_int f = clFinish(q);
  if (!fine) clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, out, 64, 0, 0, 0);
  printf("args %d enqueue %d finish %d: out %d (a at %p, out[0..2] %llx %llx)\n", e, r, f,
         *(int *)out, (void *)a, (unsigned long long)out[0], (unsigned long long)out[1]);
  return 0;
}

int main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
    if (argc > 1 && !strstr(CASES[i].name, argv[1])) continue;
    printf("%-24s ", CASES[i].name); fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) { alarm(10); exit(one(&CASES[i])); }
    int st; waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) printf("%s\n", WTERMSIG(st) == SIGALRM ? "HANG (10 s)" : strsignal(WTERMSIG(st)));
    fflush(stdout);
  }
  return 0;
}
