#!/usr/bin/env python3
"""Dense sweep of double tgamma or lgamma on an OpenCL device against mpmath (a measurement,
beyond tests/data/math_ref_f64.txt's few hundred arguments; not a test).

  source ci/env.sh && cargo build
  python3 tools/gamma_sweep.py tgamma [COUNT] [OPTIONS]   # COUNT random arguments per region

Prints the largest error in ULPs and its argument for each region. Needs cc, the OpenCL
headers and ocl-icd (the environment's OCL_ICD_VENDORS picks the implementation).
"""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

import mpmath
from mpmath import mp, mpf

HELPER = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    static double buf[1 << 22];
    size_t n = fread(buf, 8, 1 << 22, stdin);
    cl_platform_id p; cl_device_id d; cl_int e;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
    char src[512];
    snprintf(src, sizeof src, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
             "kernel void k(global double *o, global const double *a) {"
             " size_t i = get_global_id(0); o[i] = %s(a[i]); }", argv[1]);
    const char *s = src;
    cl_program prog = clCreateProgramWithSource(c, 1, &s, NULL, &e);
    if (clBuildProgram(prog, 1, &d, argv[2], NULL, NULL)) {
        static char log[65536];
        clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "%s\n", log);
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, "k", &e);
    cl_mem a = clCreateBuffer(c, CL_MEM_COPY_HOST_PTR, n * 8, buf, &e);
    cl_mem o = clCreateBuffer(c, CL_MEM_READ_WRITE, n * 8, NULL, &e);
    clSetKernelArg(k, 0, sizeof o, &o);
    clSetKernelArg(k, 1, sizeof a, &a);
    if (clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL)) return 1;
    if (clEnqueueReadBuffer(q, o, CL_TRUE, 0, n * 8, buf, 0, NULL, NULL)) return 1;
    fwrite(buf, 8, n, stdout);
    return 0;
}
"""

REGIONS = {
    "tgamma": [(-190, -150), (-150, -12), (-12, 0), (0, 12), (12, 140), (140, 171.62)],
    "lgamma": [(-190, -12), (-12, -2), (-2, 0), (0, 3), (3, 12), (12, 1000)],
}


def ulp(v):
    v = abs(v)
    if v < 2.0**-1022:
        return 2.0**-1074
    return 2.0 ** (math.frexp(v)[1] - 53)


def main():
    func = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    options = sys.argv[3] if len(sys.argv) > 3 else ""
    mp.prec = 120
    exact = {"tgamma": mpmath.gamma, "lgamma": lambda x: mpmath.log(abs(mpmath.gamma(x)))}[func]
    rng = random.Random(7)
    xs, tags = [], []
    for r in REGIONS[func]:
        for _ in range(count):
            x = rng.uniform(*r)
            if x != math.floor(x):
                xs.append(x)
                tags.append(r)
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "run")
        subprocess.run(["cc", "-O2", "-x", "c", "-", "-o", exe, "-lOpenCL"], input=HELPER.encode(),
                       check=True)
        out = subprocess.run([exe, func, options], input=struct.pack("%dd" % len(xs), *xs),
                             capture_output=True, check=True).stdout
    ys = struct.unpack("%dd" % len(xs), out)
    worst = {}
    for x, y, t in zip(xs, ys, tags):
        e = exact(x)
        f = float(e)
        if math.isinf(f) or not math.isfinite(y):
            err = 0.0 if y == f else math.inf
        else:
            err = float(abs(mpf(y) - e) / ulp(f))
        if err > worst.get(t, (-1.0, 0.0))[0]:
            worst[t] = (err, x)
    for r in REGIONS[func]:
        err, x = worst.get(r, (0.0, 0.0))
        print("%s on [%g, %g]: max %.3f ULP at %r" % (func, r[0], r[1], err, x))


if __name__ == "__main__":
    main()
