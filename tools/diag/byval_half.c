// By-value half vectors beyond the push constants (issue 16, NVIDIA): N parameters of type
// halfW (argv: N TYPE, e.g. 64 half3) stored back with vstoreW, each half compared with what
// was set. vkcl puts them in one uniform block (or, where Workarounds::no_16bit_uniforms holds,
// a storage buffer). With VKCL_DUMP_DIR and VKCL_REPLACE_DIR, hand-edited modules run in its
// place (docs/GPU.md, fifteenth session). Build: cc tools/diag/byval_half.c -lOpenCL
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64;
  const char *ty = argc > 2 ? argv[2] : "half3";
  char *src = malloc(1 << 16), *p = src;
  p += sprintf(p, "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\nkernel void k(global half *out");
  for (int i = 0; i < n; i++) p += sprintf(p, ", %s p%d", ty, i);
  p += sprintf(p, ") {\n");
  int w = atoi(ty + 4); if (w == 0) w = 1;
  for (int i = 0; i < n; i++) {
    if (w == 1) p += sprintf(p, "  out[%d] = p%d;\n", i, i);
    else p += sprintf(p, "  vstore%d(p%d, %d, out);\n", w, i, i);
  }
  p += sprintf(p, "}\n");
  cl_platform_id pl; cl_device_id d; cl_int e;
  clGetPlatformIDs(1, &pl, NULL); clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
  cl_program pr = clCreateProgramWithSource(c, 1, (const char **)&src, NULL, &e);
  e = clBuildProgram(pr, 1, &d, "", NULL, NULL);
  if (e) { char log[10000]; clGetProgramBuildInfo(pr, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL); printf("build %d %s\n", e, log); return 1; }
  cl_kernel k = clCreateKernel(pr, "k", &e);
  int sz = w == 3 ? 8 : w * 2;
  cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE, n * w * 2, NULL, &e);
  clSetKernelArg(k, 0, sizeof out, &out);
  for (int i = 0; i < n; i++) { unsigned short v[16]; for (int j = 0; j < 16; j++) v[j] = j < w ? i * w + j + 1 : 0xA5A5; clSetKernelArg(k, i + 1, sz, v); }
  size_t g = 1; e = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
  unsigned short *r = malloc(n * w * 2); clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * w * 2, r, 0, NULL, NULL);
  int bad = 0;
  for (int i = 0; i < n * w; i++) if (r[i] != i + 1) { if (bad < 10) printf("elem %d (param %d): %u want %u\n", i, i / w, r[i], i + 1); bad++; }
  printf("%s x%d: %d wrong\n", ty, n, bad);
  return bad != 0;
}
