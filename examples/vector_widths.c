/* Benchmark: one kernel written with scalars and with vectors of 2, 4, 8 and 16 elements, for
 * each of char, short, int, long, float, double (where cl_khr_fp64) and half (where
 * cl_khr_fp16), the same scalar work whatever the width:
 *
 *   fma    compute-bound: two chains of 256 multiply-adds per element (GOP/s, 2 per step);
 *   triad  memory-bound: c = a + s * b over 16 MiB arrays (GB/s of a, b and c).
 *
 * Prints the device's CL_DEVICE_PREFERRED_VECTOR_WIDTH_* and NATIVE_VECTOR_WIDTH_* first.
 * Each figure is the median of REPS runs after a warm-up: `vector_widths [REPS]` (default 1,
 * a quick run; docs/BENCHMARKS.md used 5). Results are not checked (the fma chain saturates;
 * the triad of zeros stays zero); the figure is the time. */
#include "common.h"
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *source =
    "#ifdef IS_HALF\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#endif\n"
    "#ifdef IS_DOUBLE\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
    "#define VT_(t, w) t##w\n#define VT(t, w) VT_(t, w)\n"
    "#if W == 1\n#define V T\n#else\n#define V VT(T, W)\n#endif\n"
    "kernel void fma_chain(global V *out, T a, T b) {\n"
    "    V x = (V)(get_global_id(0) & 7), y = x + (V)1;\n"
    "    for (int i = 0; i < 256; i++) { x = x * (V)a + (V)b; y = y * (V)a + (V)b; }\n"
    "    out[get_global_id(0)] = x + y;\n"
    "}\n"
    "kernel void triad(global const V *a, global const V *b, global V *c, T s) {\n"
    "    size_t i = get_global_id(0);\n"
    "    c[i] = a[i] + (V)s * b[i];\n"
    "}\n";

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return v[n / 2];
}

static int has_extension(cl_device_id device, const char *name) {
    char ext[8192] = {0};
    CHECK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL));
    return strstr(ext, name) != NULL;
}

static void print_widths(cl_device_id device) {
    static const cl_device_info preferred[] = {
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,  CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,   CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF};
    static const cl_device_info native[] = {
        CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,  CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,   CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF};
    printf("widths (char short int long float double half): preferred");
    for (int i = 0; i < 7; i++) {
        cl_uint w;
        CHECK(clGetDeviceInfo(device, preferred[i], sizeof w, &w, NULL));
        printf(" %u", w);
    }
    printf(", native");
    for (int i = 0; i < 7; i++) {
        cl_uint w;
        CHECK(clGetDeviceInfo(device, native[i], sizeof w, &w, NULL));
        printf(" %u", w);
    }
    printf("\n");
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    if (reps < 1 || reps > 64) reps = 1;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;
    setup(&device, &ctx, &q);
    print_widths(device);
    const char *types[] = {"char", "short", "int", "long", "float", "double", "half"};
    const int size[] = {1, 2, 4, 8, 4, 8, 2};
    const size_t bytes = 16u << 20, lanes = 1u << 18;
    cl_int err;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_ERR(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_ERR(err);
    cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_ERR(err);
    int zero = 0;
    CHECK(clEnqueueFillBuffer(q, a, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(q, b, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));
    for (int t = 0; t < 7; t++) {
        int is_double = t == 5, is_half = t == 6;
        if ((is_double && !has_extension(device, "cl_khr_fp64")) ||
            (is_half && !has_extension(device, "cl_khr_fp16"))) {
            printf("%-6s  not supported\n", types[t]);
            continue;
        }
        for (int w = 1; w <= 16; w *= 2) {
            char opts[128];
            snprintf(opts, sizeof opts, "-DT=%s -DW=%d%s", types[t], w,
                     is_double ? " -DIS_DOUBLE" : is_half ? " -DIS_HALF" : "");
            cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
            CHECK_ERR(err);
            CHECK(clBuildProgram(prog, 1, &device, opts, NULL, NULL));
            cl_kernel kf = clCreateKernel(prog, "fma_chain", &err);
            CHECK_ERR(err);
            cl_kernel kt = clCreateKernel(prog, "triad", &err);
            CHECK_ERR(err);
            /* The scalar arguments' bytes: 0.999 and 0.001 as float, double and half; 3 and 1
             * as integers (little-endian, the first bytes). */
            unsigned char x[8] = {3}, y[8] = {1};
            if (t == 4) {
                float fx = 0.999f, fy = 0.001f;
                memcpy(x, &fx, 4);
                memcpy(y, &fy, 4);
            } else if (is_double) {
                double dx = 0.999, dy = 0.001;
                memcpy(x, &dx, 8);
                memcpy(y, &dy, 8);
            } else if (is_half) {
                unsigned short hx = 0x3bfe, hy = 0x1419;
                memcpy(x, &hx, 2);
                memcpy(y, &hy, 2);
            }
            CHECK(clSetKernelArg(kf, 0, sizeof c, &c));
            CHECK(clSetKernelArg(kf, 1, size[t], x));
            CHECK(clSetKernelArg(kf, 2, size[t], y));
            CHECK(clSetKernelArg(kt, 0, sizeof a, &a));
            CHECK(clSetKernelArg(kt, 1, sizeof b, &b));
            CHECK(clSetKernelArg(kt, 2, sizeof c, &c));
            CHECK(clSetKernelArg(kt, 3, size[t], x));
            size_t gf = lanes / w, gt = bytes / size[t] / w;
            double fma[64], triad[64];
            for (int r = -1; r < reps; r++) { /* r = -1: the warm-up */
                double t0 = now_s();
                CHECK(clEnqueueNDRangeKernel(q, kf, 1, NULL, &gf, NULL, 0, NULL, NULL));
                CHECK(clFinish(q));
                double t1 = now_s();
                CHECK(clEnqueueNDRangeKernel(q, kt, 1, NULL, &gt, NULL, 0, NULL, NULL));
                CHECK(clFinish(q));
                double t2 = now_s();
                if (r < 0) continue;
                fma[r] = (double)lanes * 256 * 2 * 2 / (t1 - t0) / 1e9;
                triad[r] = 3.0 * bytes / (t2 - t1) / 1e9;
            }
            printf("%-6s w=%-2d  fma %8.2f GOP/s   triad %7.2f GB/s\n", types[t], w,
                   median(fma, reps), median(triad, reps));
            fflush(stdout);
            clReleaseKernel(kf);
            clReleaseKernel(kt);
            clReleaseProgram(prog);
        }
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("vector_widths: done\n");
    return 0;
}
