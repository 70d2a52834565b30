/* GEMM through CLBlast's C API (libclblast 1.5.3) on the first device of the first platform,
 * checked against a CPU reference: C = alpha*A*B + beta*C, column-major, m = n = k = N, for
 * SGEMM, DGEMM, CGEMM and HGEMM at each N given (issue 15's acceptance list). Built and run by
 * ci/clblast.sh. Writes one line per (precision, N) to RESULTS, in ci/conformance.py's format:
 *   pass|fail|skip api/<PRECISION>GEMM/n=<N>
 * skip: the device lacks cl_khr_fp64 (DGEMM) or cl_khr_fp16 (HGEMM, iHAMAX).
 * Also iHAMAX (api/iHAMAX/n=<N>, unit stride): CLBlast's own test of it cannot pass on any device
 * (its reference writes the index as one half, CLBlast's kernel as a 32-bit uint), so the
 * index is checked here instead.
 *
 * Inputs are multiples of 1/8 in [-1, 1] (exact in half precision); alpha = 1, beta = 0.5.
 * An element passes when |got - ref| <= tol * (sum_k |a_ik b_kj| + |beta c_ij|) with tol
 * 2^-17 (single, complex single), 2^-40 (double), 2^-8 (half, which CLBlast accumulates in
 * half: 2^-9.2 measured at N = 1024): a wrong element (a wrong index, a lost term) is off by about |ref|, far over that.
 *
 *   clblast_api RESULTS N...
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum prec { S, D, C, H };
static const char *const NAMES[] = {"SGEMM", "DGEMM", "CGEMM", "HGEMM"};
static const size_t ELEM[] = {4, 8, 8, 2};
static const double TOL[] = {0x1p-17, 0x1p-40, 0x1p-17, 0x1p-8};

static uint16_t to_half(float f) {
  /* Exact for the inputs used here (normal halves, or zero). */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  if ((x & 0x7fffffff) == 0) return sign;
  int e = (int)((x >> 23) & 0xff) - 127 + 15;
  return (uint16_t)(sign | (e << 10) | ((x >> 13) & 0x3ff));
}

static double from_half(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Deterministic inputs: multiples of 1/8 in [-1, 1]. */
static double next_value(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return (double)((int)(*s % 17) - 8) / 8.0;
}

static void store(enum prec p, void *buf, size_t i, double v) {
  switch (p) {
    case S: case C: ((float *)buf)[i] = (float)v; break;
    case D: ((double *)buf)[i] = v; break;
    case H: ((uint16_t *)buf)[i] = to_half((float)v); break;
  }
}

static double load(enum prec p, const void *buf, size_t i) {
  switch (p) {
    case S: case C: return ((const float *)buf)[i];
    case D: return ((const double *)buf)[i];
    default: return from_half(((const uint16_t *)buf)[i]);
  }
}

static CLBlastStatusCode gemm(enum prec p, size_t n, cl_mem a, cl_mem b, cl_mem c,
                              cl_command_queue *q) {
  const CLBlastLayout l = CLBlastLayoutColMajor;
  const CLBlastTranspose t = CLBlastTransposeNo;
  switch (p) {
    case S: return CLBlastSgemm(l, t, t, n, n, n, 1.0f, a, 0, n, b, 0, n, 0.5f, c, 0, n, q, NULL);
    case D: return CLBlastDgemm(l, t, t, n, n, n, 1.0, a, 0, n, b, 0, n, 0.5, c, 0, n, q, NULL);
    case C: {
      cl_float2 alpha = {{1.0f, 0.0f}}, beta = {{0.5f, 0.0f}};
      return CLBlastCgemm(l, t, t, n, n, n, alpha, a, 0, n, b, 0, n, beta, c, 0, n, q, NULL);
    }
    default:
      return CLBlastHgemm(l, t, t, n, n, n, to_half(1.0f), a, 0, n, b, 0, n, to_half(0.5f), c,
                          0, n, q, NULL);
  }
}

/* Elements of C that are off the reference (or -1 on an OpenCL or CLBlast error). */
static long run(enum prec p, size_t n, cl_context ctx, cl_command_queue q) {
  const int cplx = p == C;
  const size_t count = n * n * (cplx ? 2 : 1), bytes = n * n * ELEM[p];
  double *ha = malloc(count * sizeof(double)), *hb = malloc(count * sizeof(double));
  double *hc = malloc(count * sizeof(double));
  void *raw = malloc(bytes);
  uint32_t seed = 0x2545f491u + (uint32_t)n;
  cl_mem mem[3];
  double *host[3] = {ha, hb, hc};
  long wrong = -1;
  cl_int err = CL_SUCCESS;
  for (int m = 0; m < 3; m++) {
    for (size_t i = 0; i < count; i++) {
      host[m][i] = next_value(&seed);
      store(p, raw, i, host[m][i]);
    }
    mem[m] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, raw, &err);
    if (err != CL_SUCCESS) {
      fprintf(stderr, "clCreateBuffer: %d\n", err);
      return -1;
    }
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CLBlastStatusCode st = gemm(p, n, mem[0], mem[1], mem[2], &q);
  if (st == CLBlastSuccess) err = clEnqueueReadBuffer(q, mem[2], CL_TRUE, 0, bytes, raw, 0, NULL, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (st != CLBlastSuccess) {
    fprintf(stderr, "%s n=%zu: CLBlast status %d\n", NAMES[p], n, (int)st);
  } else if (err != CL_SUCCESS) {
    fprintf(stderr, "clEnqueueReadBuffer: %d\n", err);
  } else {
    wrong = 0;
    double worst = 0;
    /* Column-major, A(i,k) at i + k*n; complex elements are (re, im) pairs. One column of the
     * reference at a time, k outside i (contiguous in A). */
    double *ref = calloc(2 * n, sizeof(double)), *mag = calloc(n, sizeof(double));
    for (size_t j = 0; j < n; j++) {
      memset(ref, 0, 2 * n * sizeof(double));
      memset(mag, 0, n * sizeof(double));
      for (size_t k = 0; k < n; k++) {
        size_t ib = k + j * n;
        double br = cplx ? hb[2 * ib] : hb[ib], bi = cplx ? hb[2 * ib + 1] : 0;
        double babs = hypot(br, bi);
        for (size_t i = 0; i < n; i++) {
          size_t ia = i + k * n;
          double ar = cplx ? ha[2 * ia] : ha[ia], ai = cplx ? ha[2 * ia + 1] : 0;
          ref[2 * i] += ar * br - ai * bi;
          ref[2 * i + 1] += ar * bi + ai * br;
          mag[i] += (cplx ? hypot(ar, ai) : fabs(ar)) * babs;
        }
      }
      for (size_t i = 0; i < n; i++) {
        size_t ic = i + j * n;
        for (int part = 0; part <= cplx; part++) {
          size_t e = cplx ? 2 * ic + part : ic;
          double want = ref[2 * i + part] + 0.5 * hc[e];
          double off = fabs(load(p, raw, e) - want) / (mag[i] + fabs(0.5 * hc[e]) + 1e-30);
          if (!(off <= TOL[p])) wrong++;
          if (!(off <= worst)) worst = off;
        }
      }
    }
    free(ref), free(mag);
    printf("%s n=%zu: %ld of %zu values off the reference (worst relative error %.3g, "
           "tolerance %.3g); GEMM and read %.1f s\n", NAMES[p], n, wrong, count, worst, TOL[p],
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  }
  for (int m = 0; m < 3; m++) clReleaseMemObject(mem[m]);
  free(ha), free(hb), free(hc), free(raw);
  return wrong;
}

/* iHAMAX over N halves with one largest magnitude: 1 when the index is wrong, -1 on an error. */
static long amax(size_t n, cl_context ctx, cl_command_queue q) {
  uint16_t *x = malloc(n * 2);
  uint32_t seed = 0x9e3779b9u + (uint32_t)n, imax[2] = {0xdeadbeef, 0xdeadbeef};
  for (size_t i = 0; i < n; i++) x[i] = to_half((float)next_value(&seed) * 0.875f);
  size_t want = (seed * 2654435761u) % n;
  x[want] = to_half(seed & 1 ? 1.0f : -1.0f);
  cl_int err;
  cl_mem xb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 2, x, &err);
  cl_mem ib = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 8, imax, &err);
  CLBlastStatusCode st = CLBlastiHamax(n, ib, 0, xb, 0, 1, &q, NULL);
  if (st == CLBlastSuccess) err = clEnqueueReadBuffer(q, ib, CL_TRUE, 0, 8, imax, 0, NULL, NULL);
  clReleaseMemObject(xb);
  clReleaseMemObject(ib);
  free(x);
  if (st != CLBlastSuccess || err != CL_SUCCESS) {
    fprintf(stderr, "iHAMAX n=%zu: CLBlast status %d, OpenCL %d\n", n, (int)st, err);
    return -1;
  }
  printf("iHAMAX n=%zu: index %u, want %zu\n", n, imax[0], want);
  return imax[0] != want;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s RESULTS N...\n", argv[0]);
    return 2;
  }
  cl_platform_id plat;
  cl_device_id dev;
  cl_int err = clGetPlatformIDs(1, &plat, NULL);
  if (!err) err = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
  cl_context ctx = err ? NULL : clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_command_queue q = err ? NULL : clCreateCommandQueue(ctx, dev, 0, &err);
  if (err) {
    fprintf(stderr, "no OpenCL device: %d\n", err);
    return 2;
  }
  char ext[8192] = "";
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
  FILE *out = fopen(argv[1], "w");
  if (!out) {
    perror(argv[1]);
    return 2;
  }
  int failed = 0;
  for (int p = S; p <= H; p++) {
    int have = p == D ? strstr(ext, "cl_khr_fp64") != NULL
             : p == H ? strstr(ext, "cl_khr_fp16") != NULL : 1;
    for (int a = 2; a < argc; a++) {
      size_t n = strtoul(argv[a], NULL, 10);
      const char *status = "skip";
      if (have) {
        long wrong = run((enum prec)p, n, ctx, q);
        status = wrong == 0 ? "pass" : "fail";
        failed |= wrong != 0;
      }
      fprintf(out, "%s api/%s/n=%zu\n", status, NAMES[p], n);
      fflush(stdout);
    }
  }
  for (int a = 2; a < argc; a++) {
    size_t n = strtoul(argv[a], NULL, 10);
    long wrong = strstr(ext, "cl_khr_fp16") ? amax(n, ctx, q) : 0;
    fprintf(out, "%s api/iHAMAX/n=%zu\n",
            strstr(ext, "cl_khr_fp16") ? (wrong ? "fail" : "pass") : "skip", n);
    failed |= wrong != 0;
  }
  fclose(out);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return failed;
}
