// Which shapes of "a __local row chosen by conditions" each platform runs right (the H200 scan
// bug of tests/clspv_fixes.rs last_of_local_values_chosen_by_conditions). Every variant writes
// out[lid] = the last row k in 1..15 with lid * 16 + k < n (row 0 if none), read from a
// __local uint array where l[k][lid] = lid * 100 + k, and out[256 + lid] = l[lid % 16][lid].
// Usage: scan_variants [platform-name-part]; one line per variant and platform.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

#define HEAD "__attribute__((reqd_work_group_size(256, 1, 1)))\n" \
             "kernel void t(global uint *out, uint n) {\n  uint lid = get_local_id(0);\n"
#define FILL(rows) "  for (int k = 0; k < " #rows "; k++) l[k][lid] = lid * 100 + k;\n" \
                   "  barrier(CLK_LOCAL_MEM_FENCE);\n"
#define PICK "  uint s = l[0][lid];\n" \
             "  for (int k = 1; k < 16; k++) if (lid * 16 + k < n) s = l[k][lid];\n"
#define TAIL "  l[16][lid] = s;\n  barrier(CLK_LOCAL_MEM_FENCE);\n" \
             "  out[lid] = l[16][lid];\n  out[256 + lid] = l[lid % 16][lid];\n}\n"

static const struct { const char *name, *src; } V[] = {
    {"base (the test)", HEAD "  local uint l[17][257];\n" FILL(16) PICK TAIL},
    {"fill 17 rows", HEAD "  local uint l[17][257];\n" FILL(17) PICK TAIL},
    {"s not stored back", HEAD "  local uint l[17][257];\n" FILL(16) PICK
                          "  out[lid] = s;\n  out[256 + lid] = l[lid % 16][lid];\n}\n"},
    {"volatile array", HEAD "  volatile local uint l[17][257];\n" FILL(16) PICK TAIL},
    {"row index chosen", HEAD "  local uint l[17][257];\n" FILL(16)
                         "  uint r = 0;\n  for (int k = 1; k < 16; k++) if (lid * 16 + k < n) r = k;\n"
                         "  uint s = l[r][lid];\n" TAIL},
    {"ternary", HEAD "  local uint l[17][257];\n" FILL(16)
                "  uint s = l[0][lid];\n"
                "  for (int k = 1; k < 16; k++) s = lid * 16 + k < n ? l[k][lid] : s;\n" TAIL},
    {"loop not unrolled", HEAD "  local uint l[17][257];\n" FILL(16)
                          "  uint s = l[0][lid];\n#pragma unroll 1\n"
                          "  for (int k = 1; k < 16; k++) if (lid * 16 + k < n) s = l[k][lid];\n" TAIL},
    {"result in a second array", HEAD "  local uint l[17][257];\n  local uint m[257];\n" FILL(16) PICK
                                 "  m[lid] = s;\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
                                 "  out[lid] = m[lid];\n  out[256 + lid] = l[lid % 16][lid];\n}\n"},
    {"17x256", HEAD "  local uint l[17][256];\n" FILL(16) PICK TAIL},
    {"neighbour's column", HEAD "  local uint l[17][257];\n" FILL(16)
                           "  uint o = (lid + 1) & 255;\n  uint s = l[0][o] - 100 * o + 100 * lid;\n"
                           "  for (int k = 1; k < 16; k++) if (lid * 16 + k < n) s = l[k][o] - 100 * o + 100 * lid;\n"
                           TAIL},
    {"flat array", HEAD "  local uint f[17 * 257];\n#define l(r, c) f[(r) * 257 + (c)]\n"
                   "  for (int k = 0; k < 16; k++) l(k, lid) = lid * 100 + k;\n"
                   "  barrier(CLK_LOCAL_MEM_FENCE);\n  uint s = l(0, lid);\n"
                   "  for (int k = 1; k < 16; k++) if (lid * 16 + k < n) s = l(k, lid);\n"
                   "  l(16, lid) = s;\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
                   "  out[lid] = l(16, lid);\n  out[256 + lid] = l(lid % 16, lid);\n}\n"},
    {"no dynamic row read", HEAD "  local uint l[17][257];\n" FILL(16) PICK
                            "  l[16][lid] = s;\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
                            "  out[lid] = l[16][lid];\n  out[256 + lid] = lid * 100 + lid % 16;\n}\n"},
    {"mem_fence after fill", HEAD "  local uint l[17][257];\n"
                             "  for (int k = 0; k < 16; k++) l[k][lid] = lid * 100 + k;\n"
                             "  mem_fence(CLK_LOCAL_MEM_FENCE);\n  barrier(CLK_LOCAL_MEM_FENCE);\n" PICK TAIL},
};

static int check(const cl_uint *h, cl_uint n) {
  int bad = 0;
  for (cl_uint lid = 0; lid < 256; lid++) {
    cl_uint k = 0;
    for (cl_uint j = 1; j < 16; j++)
      if (lid * 16 + j < n) k = j;
    bad += h[lid] != lid * 100 + k;
    bad += h[256 + lid] != lid * 100 + lid % 16;
  }
  return bad;
}

int main(int argc, char **argv) {
  cl_platform_id ps[8]; cl_uint np = 0;
  clGetPlatformIDs(8, ps, &np);
  for (cl_uint pi = 0; pi < np; pi++) {
    char pname[256]; clGetPlatformInfo(ps[pi], CL_PLATFORM_NAME, sizeof pname, pname, 0);
    if (argc > 1 && !strstr(pname, argv[1])) continue;
    cl_device_id d; clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 1, &d, 0);
    cl_int e; cl_context ctx = clCreateContext(0, 1, &d, 0, 0, &e);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, 0, &e);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 512 * 4, 0, &e);
    for (size_t v = 0; v < sizeof V / sizeof V[0]; v++) {
      cl_program pr = clCreateProgramWithSource(ctx, 1, (const char **)&V[v].src, 0, &e);
      if ((e = clBuildProgram(pr, 1, &d, "", 0, 0))) {
        char log[4096] = ""; clGetProgramBuildInfo(pr, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, 0);
        printf("%-12.12s %-26s build %d: %s\n", pname, V[v].name, e, log);
        continue;
      }
      cl_kernel k = clCreateKernel(pr, "t", &e);
      printf("%-12.12s %-26s", pname, V[v].name);
      cl_uint ns[] = {0, 10, 1000, 4096};
      for (int i = 0; i < 4; i++) {
        cl_uint h[512], pat = 7;
        clEnqueueFillBuffer(q, out, &pat, 4, 0, sizeof h, 0, 0, 0);
        clSetKernelArg(k, 0, sizeof out, &out); clSetKernelArg(k, 1, 4, &ns[i]);
        size_t g = 256;
        e = clEnqueueNDRangeKernel(q, k, 1, 0, &g, &g, 0, 0, 0);
        clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof h, h, 0, 0, 0);
        int bad = check(h, ns[i]);
        if (e) printf(" n=%u: enqueue %d", ns[i], e);
        else if (bad) printf(" n=%u: %d wrong (out[17]=%u out[273]=%u)", ns[i], bad, h[17], h[273]);
        else printf(" n=%u: ok", ns[i]);
      }
      printf("\n");
      clReleaseKernel(k); clReleaseProgram(pr);
    }
  }
  return 0;
}
