/* images: read_imagef sampling throughput on a 2-D CL_RGBA / CL_UNORM_INT8 image. Each
 * work-item sums TAPS texels along its row (clamped at the edge), with integer coordinates and
 * a nearest sampler, then with float coordinates at texel centres and a linear sampler
 * (Gsample/s). Reported "not supported" where CL_DEVICE_IMAGE_SUPPORT is false. */
#include "bench.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TAPS 16

static const char *source =
    "#define TAPS 16\n"
    "constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |\n"
    "                             CLK_FILTER_NEAREST;\n"
    "constant sampler_t linear = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |\n"
    "                            CLK_FILTER_LINEAR;\n"
    "kernel void sample_nearest(read_only image2d_t img, global float4 *out) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    float4 acc = 0.0f;\n"
    "    for (int t = 0; t < TAPS; t++) acc += read_imagef(img, nearest, (int2)(x + t, y));\n"
    "    out[y * get_global_size(0) + x] = acc;\n"
    "}\n"
    "kernel void sample_linear(read_only image2d_t img, global float4 *out) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    float4 acc = 0.0f;\n"
    "    for (int t = 0; t < TAPS; t++)\n"
    "        acc += read_imagef(img, linear, (float2)(x + t + 0.5f, y + 0.5f));\n"
    "    out[y * get_global_size(0) + x] = acc;\n"
    "}\n";

typedef struct {
    const Env *e;
    cl_kernel k;
    size_t global[2];
} Sampling;

static void sample_once(void *arg) {
    Sampling *s = arg;
    size_t local[2] = {16, 16};
    CHECK(clEnqueueNDRangeKernel(s->e->queue, s->k, 2, NULL, s->global, local, 0, NULL, NULL));
    CHECK(clFinish(s->e->queue));
}

void bench_images(const Env *e) {
    cl_bool images = CL_FALSE;
    CHECK(clGetDeviceInfo(e->device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    if (!images) {
        record_unsupported("images", "read_imagef nearest", "Gsample/s", "not supported");
        record_unsupported("images", "read_imagef linear", "Gsample/s", "not supported");
        return;
    }
    size_t w = e->quick ? 128 : 1024;
    unsigned char *texels = xmalloc(w * w * 4);
    for (size_t i = 0; i < w * w * 4; i++) texels[i] = (unsigned char)(i * 13 % 251);
    cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = w, .image_height = w};
    cl_int err;
    cl_mem img = clCreateImage(e->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc,
                               texels, &err);
    CHECK(err);
    cl_mem out = buffer_or_die(e, CL_MEM_WRITE_ONLY, w * w * 4 * sizeof(float), NULL);
    float *back = xmalloc(w * w * 4 * sizeof(float));
    cl_program prog = build_or_die(e, source, "");
    const char *kernels[2] = {"sample_nearest", "sample_linear"};
    const char *names[2] = {"read_imagef nearest", "read_imagef linear"};
    for (int v = 0; v < 2; v++) {
        Sampling s = {e, kernel_or_die(prog, kernels[v]), {w, w}};
        CHECK(clSetKernelArg(s.k, 0, sizeof img, &img));
        CHECK(clSetKernelArg(s.k, 1, sizeof out, &out));
        warm_up(sample_once, &s, e);
        double *samples = xmalloc(e->reps * sizeof(double));
        for (int r = 0; r < e->reps; r++)
            samples[r] = (double)w * w * TAPS / time_per_call(sample_once, &s, sample_s(e)) / 1e9;
        record("images", names[v], "Gsample/s", 1, 0, samples, e->reps);
        free(samples);
        CHECK(clEnqueueReadBuffer(e->queue, out, CL_TRUE, 0, w * w * 4 * sizeof(float), back, 0, NULL, NULL));
        for (size_t p = 0; p < 512; p++) {
            size_t i = (p * 7919) % (w * w), x = i % w, y = i / w;
            for (int c = 0; c < 4; c++) {
                float want = 0;
                for (size_t t = 0; t < TAPS; t++) {
                    size_t xs = x + t < w ? x + t : w - 1;
                    want += texels[(y * w + xs) * 4 + c] / 255.0f;
                }
                if (fabsf(back[i * 4 + c] - want) > 2e-3f * TAPS)
                    bench_wrong("%s: texel sum at (%zu, %zu) channel %d is %g, expected %g",
                                kernels[v], x, y, c, back[i * 4 + c], want);
            }
        }
        clReleaseKernel(s.k);
    }
    free(back);
    free(texels);
    clReleaseProgram(prog);
    clReleaseMemObject(out);
    clReleaseMemObject(img);
}
