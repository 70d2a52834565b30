#!/usr/bin/env python3
"""OpenCV's OpenCL path (cv2.UMat, OpenCL on) against its CPU path, on the selected OpenCL device.

  ci/opencv_check.py RESULTS [OP]    (run by ci/opencv.sh, which sets up the environment)

OP: only the cases of that operation (ids opencv/OP/...).

Each case runs an operation on cv2.UMat inputs with OpenCL on and the same operation on numpy
arrays with OpenCL off, and compares the two with the tolerance OpenCV's own OpenCL tests use for
that operation (modules/*/test/ocl: exact where the OpenCL kernel is meant to be bit-exact, a
difference of 1 for 8-bit results that round, a small relative error for float).

OpenCV never raises when an OpenCL kernel fails to build: it runs its CPU code instead, and the
results then match trivially. So a case passes only if, while it ran,
  - no program build failed (OpenCV logs "OpenCL program build log" at OPENCV_LOG_LEVEL=DEBUG or
    lower, and "clBuildProgram" errors), and
  - vkcl launched every OpenCL kernel the case names (vkcl's VKCL_LOG=launch=debug prints
    "vkcl debug [launch] <kernel>: global ..." for each launch): the case's OpenCL path ran.
Output of both is captured per case by redirecting file descriptors 1 and 2 to a file.

Writes `<status> opencv/<op>/<case>` lines to RESULTS (status pass or fail); the reason of each
failure is printed.
"""
import os, re, sys, tempfile
import numpy as np
import cv2

BUILD_FAILURE = re.compile(r"OpenCL program build log|CL_BUILD_PROGRAM_FAILURE|clspv crashed|"
                           r"clBuildProgram.*(fail|error)|OpenCL error", re.I)
LAUNCH = re.compile(r"^vkcl debug \[launch\] (\S+): global", re.M)

rng = np.random.RandomState(12345)


def image(h, w, cn, dtype=np.uint8):
    shape = (h, w) if cn == 1 else (h, w, cn)
    if dtype == np.uint8:
        return rng.randint(0, 256, shape).astype(np.uint8)
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


def scene(h, w):
    """A smooth picture with edges (Canny, matchTemplate and threshold need structure)."""
    y, x = np.mgrid[0:h, 0:w]
    img = 128 + 60 * np.sin(x / 9.0) * np.cos(y / 13.0)
    img[h // 4: h // 2, w // 5: w // 2] = 230
    img[h // 2: 3 * h // 4, w // 2: 4 * w // 5] = 20
    img += rng.normal(0, 4, (h, w))
    return np.clip(img, 0, 255).astype(np.uint8)


GRAY = scene(240, 320)
BGR = np.dstack([GRAY, np.roll(GRAY, 17, axis=1), 255 - GRAY]).copy()
NOISE = image(240, 320, 1)
NOISE3 = image(240, 320, 3)
F32 = image(240, 320, 1, np.float32)
F32B = image(240, 320, 1, np.float32)
# matchTemplate on noise, as OpenCV's own test does: on a smooth picture the normed methods
# divide by the variance of low-contrast windows, which OpenCV's OpenCL kernels compute in float
# from integral images (the CPU in double); the cancellation there exceeds the test's 1.5e-4.
TEMPLATE = NOISE[60:92, 80:128].copy()  # 48x32: the DFT path (core/fft)
SMALL_TEMPLATE = NOISE[30:40, 50:62].copy()  # 12x10: the naive kernels
ROT = cv2.getRotationMatrix2D((160, 120), 17.0, 0.9)


class Capture:
    """Everything written to fds 1 and 2 (OpenCV's log, vkcl's log) while the block runs."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile(mode="w+b")
        self.saved = [os.dup(1), os.dup(2)]
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.file.seek(0)
        self.text = self.file.read().decode("utf-8", "replace")
        self.file.close()
        return False


def as_umat(a):
    return cv2.UMat(a) if isinstance(a, np.ndarray) else a


def run_ocl(fn, inputs):
    cv2.ocl.setUseOpenCL(True)
    out = fn(*[as_umat(a) for a in inputs])
    outs = out if isinstance(out, tuple) else (out,)
    res = tuple(o.get() if isinstance(o, cv2.UMat) else o for o in outs)
    cv2.ocl.finish()
    return res


def run_cpu(fn, inputs):
    cv2.ocl.setUseOpenCL(False)
    out = fn(*inputs)
    cv2.ocl.setUseOpenCL(True)
    return out if isinstance(out, tuple) else (out,)


def compare(got, want, tol, rel):
    """None if every output is within tolerance, else a description of the worst element."""
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"shape/type {g.shape} {g.dtype}, CPU {w.shape} {w.dtype}"
        d = np.abs(g.astype(np.float64) - w.astype(np.float64))
        if rel:  # OpenCV's checkNormRelative: over the larger of the two infinity norms
            d = d / max(np.abs(w).max(), np.abs(g).max(), 1e-30)
        if np.isnan(d).any() or (d.size and d.max() > tol):
            i = np.unravel_index(np.nanargmax(np.where(np.isnan(d), np.inf, d)), d.shape)
            return (f"max {'relative ' if rel else ''}difference {d[i]:.3g} > {tol} at {i}: "
                    f"OpenCL {g[i]}, CPU {w[i]}; {np.count_nonzero(d > tol)} of {d.size} elements")
    return None


def similar_compare(got, want, tol, rel):
    """OpenCV's EXPECT_MAT_SIMILAR (its ocl Canny test, eps 0.03): 1 - the normalised
    cross-correlation of the two images at most `tol`."""
    g, w = got[0].astype(np.float64), want[0].astype(np.float64)
    if g.shape != w.shape:
        return f"shape {g.shape}, CPU {w.shape}"
    norm = np.sqrt((g * g).sum() * (w * w).sum())
    dissimilarity = abs((g * w).sum() / norm - 1) if norm else float(np.any(g != w))
    if dissimilarity > tol:
        return (f"dissimilarity {dissimilarity:.3g} > {tol}; "
                f"{np.count_nonzero(g != w)} of {w.size} pixels differ")
    return None


def ndiff_compare(got, want, tol, rel):
    """At most a fraction `tol` of the elements may differ (OpenCV's EXPECT_MAT_N_DIFF)."""
    g, w = got[0], want[0]
    if g.shape != w.shape or g.dtype != w.dtype:
        return f"shape/type {g.shape} {g.dtype}, CPU {w.shape} {w.dtype}"
    differ = np.count_nonzero(g != w)
    if differ > tol * w.size:
        return f"{differ} of {w.size} elements differ (at most {tol:.0%} may)"
    return None


# (op, case, function, inputs, kernels that must be launched, tolerance, relative, comparer)
CASES = []


def case(op, name, fn, inputs, kernels, tol=0, rel=False, cmp=compare):
    CASES.append((op, name, fn, inputs, kernels, tol, rel, cmp))


def cases():
    k3 = np.ones((3, 3), np.uint8)
    CANNY = ["stage1_with_sobel", "stage2_hysteresis", "getEdges"]
    k5 = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    case("blur", "3x3_8UC1", lambda a: cv2.blur(a, (3, 3)), [NOISE], ["boxFilter"], 1)
    case("blur", "11x11_8UC1", lambda a: cv2.blur(a, (11, 11)), [NOISE], ["boxFilter"], 1)
    case("blur", "3x3_8UC1_border_replicate",
         lambda a: cv2.blur(a, (3, 3), borderType=cv2.BORDER_REPLICATE), [NOISE], ["boxFilter"], 1)
    case("blur", "3x3_8UC1_border_constant",
         lambda a: cv2.blur(a, (3, 3), borderType=cv2.BORDER_CONSTANT), [NOISE], ["boxFilter"], 1)
    case("blur", "5x5_8UC3", lambda a: cv2.blur(a, (5, 5)), [NOISE3], ["boxFilter"], 1)
    case("blur", "7x7_32FC1", lambda a: cv2.blur(a, (7, 7)), [F32], ["boxFilter"], 1e-4)
    case("GaussianBlur", "5x5_8UC1", lambda a: cv2.GaussianBlur(a, (5, 5), 1.5), [NOISE], ["col_filter"], 1)
    case("GaussianBlur", "7x7_8UC3", lambda a: cv2.GaussianBlur(a, (7, 7), 2.0), [NOISE3], ["col_filter"], 1)
    case("GaussianBlur", "5x5_32FC1", lambda a: cv2.GaussianBlur(a, (5, 5), 1.2), [F32], ["col_filter"], 1e-4)
    # OpenCV's OpenCL resize has nearest, linear and (downscaling) area; cubic and upscaling
    # area run on the CPU by design, so they are not cases here.
    for interp, iname, kernel, tol in ((cv2.INTER_NEAREST, "nearest", "resizeNN", 0),
                                       (cv2.INTER_LINEAR, "linear", "resizeSampler", 1)):
        case("resize", f"up_{iname}_8UC1",
             lambda a, i=interp: cv2.resize(a, (480, 360), interpolation=i), [GRAY], [kernel],
             tol)
    for interp, iname, kernel, tol in ((cv2.INTER_NEAREST, "nearest", "resizeNN", 0),
                                       (cv2.INTER_LINEAR, "linear", "resizeLN", 1),
                                       (cv2.INTER_AREA, "area", "resizeAREA_FAST", 1)):
        case("resize", f"down_{iname}_8UC3",
             lambda a, i=interp: cv2.resize(a, (160, 120), interpolation=i), [BGR], [kernel],
             tol)
    case("resize", "linear_32FC1", lambda a: cv2.resize(a, (200, 150)), [F32], ["resizeLN"],
         1e-4)
    for code, cname, kernel in ((cv2.COLOR_BGR2GRAY, "BGR2GRAY", "RGB2Gray"),
                                (cv2.COLOR_BGR2HSV, "BGR2HSV", "RGB2HSV"),
                                (cv2.COLOR_BGR2YUV, "BGR2YUV", "RGB2YUV"),
                                (cv2.COLOR_BGR2Lab, "BGR2Lab", "BGR2Lab"),
                                (cv2.COLOR_BGR2RGBA, "BGR2RGBA", "RGB"),
                                (cv2.COLOR_GRAY2BGR, "GRAY2BGR", "Gray2RGB")):
        src = GRAY if code == cv2.COLOR_GRAY2BGR else BGR
        case("cvtColor", cname, lambda a, c=code: cv2.cvtColor(a, c), [src], [kernel], 1)
    case("Canny", "50_150_aperture3", lambda a: cv2.Canny(a, 50, 150), [GRAY], CANNY, 0.03,
         cmp=similar_compare)
    case("Canny", "30_90_L2", lambda a: cv2.Canny(a, 30, 90, L2gradient=True), [GRAY], CANNY,
         0.03,
         cmp=similar_compare)
    for method, mname in ((cv2.TM_SQDIFF, "SQDIFF"), (cv2.TM_CCORR_NORMED, "CCORR_NORMED"),
                          (cv2.TM_CCOEFF_NORMED, "CCOEFF_NORMED")):
        case("matchTemplate", f"{mname}_8UC1_dft",
             lambda a, t, m=method: cv2.matchTemplate(a, t, m), [NOISE, TEMPLATE],
             ["fft_multi_radix_rows"], 1.5e-4, rel=True)
        case("matchTemplate", f"{mname}_8UC1_naive",
             lambda a, t, m=method: cv2.matchTemplate(a, t, m), [NOISE, SMALL_TEMPLATE],
             [f"matchTemplate_Naive_{'SQDIFF' if method == cv2.TM_SQDIFF else 'CCORR'}"],
             1.5e-4, rel=True)
    # OpenCV's ocl WarpAffine test: at most 4 % of the 8-bit pixels may differ (the CPU path
    # rounds coordinates to 1/32 pixel in fixed point, the kernel in float), float results
    # within a relative 0.06.
    case("warpAffine", "rotate_linear_8UC1", lambda a: cv2.warpAffine(a, ROT, (320, 240)),
         [GRAY], ["warpAffine"], 0.04, cmp=ndiff_compare)
    case("warpAffine", "rotate_nearest_8UC3",
         lambda a: cv2.warpAffine(a, ROT, (320, 240), flags=cv2.INTER_NEAREST), [BGR],
         ["warpAffine"], 0.04, cmp=ndiff_compare)
    case("warpAffine", "rotate_linear_32FC1", lambda a: cv2.warpAffine(a, ROT, (320, 240)),
         [F32], ["warpAffine"], 0.06, rel=True)
    case("dft", "real_forward_complex_out",
         lambda a: cv2.dft(a, flags=cv2.DFT_COMPLEX_OUTPUT), [F32[:128, :256].copy()], ["fft_multi_radix_rows"],
         1e-4, rel=True)
    case("dft", "real_rows_forward_complex_out",
         lambda a: cv2.dft(a, flags=cv2.DFT_COMPLEX_OUTPUT | cv2.DFT_ROWS),
         [F32[:64, :240].copy()], ["fft_multi_radix_rows"], 1e-4, rel=True)
    cplx = np.dstack([F32[:64, :128], F32B[:64, :128]]).copy()
    case("dft", "complex_forward", lambda a: cv2.dft(a), [cplx], ["fft_multi_radix_rows"], 1e-4, rel=True)
    case("dft", "complex_inverse_scale",
         lambda a: cv2.dft(a, flags=cv2.DFT_INVERSE | cv2.DFT_SCALE), [cplx],
         ["ifft_multi_radix_rows"], 1e-4, rel=True)
    case("erode", "3x3_8UC1", lambda a: cv2.erode(a, k3), [NOISE], ["morph"], 0)
    case("erode", "ellipse5_8UC3_2iter", lambda a: cv2.erode(a, k5, iterations=2), [NOISE3], ["morph"], 0)
    case("dilate", "3x3_8UC1", lambda a: cv2.dilate(a, k3), [NOISE], ["morph"], 0)
    case("dilate", "ellipse5_32FC1", lambda a: cv2.dilate(a, k5), [F32], ["morph"], 0)
    for mop, mname in ((cv2.MORPH_OPEN, "open"), (cv2.MORPH_CLOSE, "close"),
                       (cv2.MORPH_GRADIENT, "gradient"), (cv2.MORPH_TOPHAT, "tophat")):
        case("morphologyEx", f"{mname}_8UC1", lambda a, m=mop: cv2.morphologyEx(a, m, k5),
             [GRAY], ["morph"], 0)
    for tt, tname in ((cv2.THRESH_BINARY, "binary"), (cv2.THRESH_BINARY_INV, "binary_inv"),
                      (cv2.THRESH_TRUNC, "trunc"), (cv2.THRESH_TOZERO, "tozero"),
                      (cv2.THRESH_TOZERO_INV, "tozero_inv")):
        case("threshold", f"{tname}_8UC1", lambda a, t=tt: cv2.threshold(a, 127, 200, t)[1],
             [GRAY], ["threshold"], 0)
    case("threshold", "binary_32FC1", lambda a: cv2.threshold(a, 0.25, 1.0, cv2.THRESH_BINARY)[1],
         [F32], ["threshold"], 0)
    a8, b8 = NOISE3, BGR
    case("add", "8UC3", lambda a, b: cv2.add(a, b), [a8, b8], ["KF"], 0)
    case("add", "32FC1", lambda a, b: cv2.add(a, b), [F32, F32B], ["KF"], 1e-6)
    case("subtract", "8UC3", lambda a, b: cv2.subtract(a, b), [a8, b8], ["KF"], 0)
    case("multiply", "8UC3_scale", lambda a, b: cv2.multiply(a, b, scale=1 / 255.0), [a8, b8], ["KF"], 1)
    case("multiply", "32FC1", lambda a, b: cv2.multiply(a, b), [F32, F32B], ["KF"], 1e-6)
    case("divide", "32FC1", lambda a, b: cv2.divide(a, b), [F32, F32B + 2], ["KF"], 1e-5, rel=True)
    case("absdiff", "8UC3", lambda a, b: cv2.absdiff(a, b), [a8, b8], ["KF"], 0)
    case("addWeighted", "8UC3", lambda a, b: cv2.addWeighted(a, 0.3, b, 0.7, 5), [a8, b8], ["KF"], 1)
    case("addWeighted", "32FC1", lambda a, b: cv2.addWeighted(a, 0.3, b, 0.7, 5), [F32, F32B],
         ["KF"], 1e-5)
    case("bitwise_and", "8UC3", lambda a, b: cv2.bitwise_and(a, b), [a8, b8], ["KF"], 0)
    case("min", "8UC3", lambda a, b: cv2.min(a, b), [a8, b8], ["KF"], 0)


def main():
    out_path = sys.argv[1]
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    if not cv2.ocl.haveOpenCL():
        sys.exit("opencv_check: OpenCV finds no OpenCL")
    cv2.ocl.setUseOpenCL(True)
    dev = cv2.ocl.Device.getDefault()
    print(f"opencv_check: OpenCV {cv2.__version__}, device {dev.name()!r} ({dev.vendorName()}, "
          f"{dev.version()})", flush=True)
    if "vkcl" not in dev.version():
        sys.exit("opencv_check: the OpenCL device is not vkcl's")
    cases()
    lines, failed = [], 0
    for op, name, fn, inputs, kernels, tol, rel, cmp in CASES:
        test = f"opencv/{op}/{name}"
        if only and op != only:
            continue
        why = None
        try:
            with Capture() as cap:
                got = run_ocl(fn, inputs)
            want = run_cpu(fn, inputs)
            launched = LAUNCH.findall(cap.text)
            build = BUILD_FAILURE.search(cap.text)
            missing = [k for k in kernels if k not in launched]
            if build:
                line = cap.text[build.start():].splitlines()
                why = "build failure: " + " | ".join(line[:6])
            elif not launched:
                why = "no OpenCL kernel launched (OpenCV ran its CPU path)"
            elif missing:
                why = f"kernels {missing} not launched (launched: {sorted(set(launched))})"
            else:
                why = cmp(got, want, tol, rel)
        except Exception as e:  # an OpenCV error is a failure of this case, not of the run
            why = f"{type(e).__name__}: {e}"
            launched = []
        status = "pass" if why is None else "fail"
        failed += why is not None
        print(f"{status} {test}" + (f": {why}" if why else f" ({', '.join(sorted(set(launched)))})"),
              flush=True)
        lines.append(f"{status} {test}\n")
    with open(out_path, "w") as f:
        f.writelines(lines)
    print(f"opencv_check: {len(lines) - failed} passed, {failed} failed")


if __name__ == "__main__":
    main()
