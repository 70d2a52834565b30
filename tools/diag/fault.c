// What a kernel's memory fault does to the calls waiting for it: a kernel writes through an
// address 2^40 bytes past its SVM allocation, in a child process with a 60 s alarm.
// Prints how clFinish, clWaitForEvents and the event's status ended, and how long each took;
// a wait that never returns shows as "alarm". Usage: fault [write|ok]
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static const char *SRC =
    "kernel void poke(global int *a, ulong bad) {\n"
    "  a[get_global_id(0)] = 2;\n"
    "  if (bad) *(global int *)(bad + get_global_id(0) * 4) = 1;\n"
    "}\n";

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void on_alarm(int s) {
  (void)s;
  printf("alarm: a wait did not return in 60 s\n");
  fflush(stdout);
  _exit(3);
}

static int one(int bad) {
  cl_platform_id p; clGetPlatformIDs(1, &p, 0);
  cl_device_id d; clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, 0);
  cl_int e; cl_context ctx = clCreateContext(0, 1, &d, 0, 0, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, 0, &e);
  cl_program pr = clCreateProgramWithSource(ctx, 1, &SRC, 0, &e);
  if ((e = clBuildProgram(pr, 1, &d, "", 0, 0))) { printf("build %d\n", e); return 2; }
  cl_kernel kn = clCreateKernel(pr, "poke", &e);
  int *a = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 1 << 18, 0);
  if (!a) { printf("no SVM\n"); return 2; }
  clSetKernelArgSVMPointer(kn, 0, a);
  cl_ulong at = bad ? (cl_ulong)(size_t)a + (1ULL << 40) : 0;
  clSetKernelArg(kn, 1, sizeof at, &at);
  size_t n = 1 << 16;
  cl_event ev;
  double t = now();
  e = clEnqueueNDRangeKernel(q, kn, 1, 0, &n, 0, 0, 0, &ev);
  printf("enqueue %d\n", e);
  fflush(stdout);
  e = clFinish(q);
  printf("clFinish %d after %.2f s\n", e, now() - t);
  fflush(stdout);
  e = clWaitForEvents(1, &ev);
  cl_int st = 1;
  clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, 0);
  printf("clWaitForEvents %d, status %d after %.2f s\n", e, st, now() - t);
  // The next command on the queue after the fault.
  int zero = 0;
  e = clEnqueueSVMMemFill(q, a, &zero, 4, 64, 0, 0, 0);
  printf("next enqueue %d, clFinish %d after %.2f s\n", e, clFinish(q), now() - t);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  int bad = !(argc > 1 && !strcmp(argv[1], "ok"));
  fflush(stdout);
  pid_t c = fork();
  if (c == 0) {
    signal(SIGALRM, on_alarm);
    alarm(60);
    _exit(one(bad));
  }
  int st;
  waitpid(c, &st, 0);
  printf("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
  return 0;
}
