#!/usr/bin/env python3
"""ffmpeg's OpenCL filters on vkcl, each compared frame by frame with the same run on pocl.

  ci/ffmpeg_check.py RESULTS [FILTER]    (run by ci/ffmpeg.sh, which sets up the environment)

FILTER: only the cases of that filter (ids ffmpeg/FILTER/...), e.g. avgblur_opencl.
Environment: VKCL_ICD and POCL_ICD, the ICD libraries ocl-icd loads (OCL_ICD_VENDORS) for the
two runs of a case; FFMPEG_WORK, the folder for inputs, outputs and logs.

Each case is one ffmpeg command: synthetic input from ffmpeg's own sources (testsrc2, mandelbrot,
smptehdbars, nullsrc + geq: 5 frames of 176x144, 16 of 256x192 for deshake), `hwupload` to the
OpenCL device that `-init_hw_device opencl=ocl:0.0` opened, the filter, `hwdownload`, raw frames
to a file. It runs once on vkcl and once on pocl, and the two outputs are compared frame by
frame: byte-identical where the kernel moves, compares or counts samples, else every sample
within 1 and a PSNR bound the case states with the reason (float rounding that legitimately
differs between two implementations). tonemap_opencl, which pocl cannot run, is compared with
a model of its kernel (ci/ffmpeg_tonemap.py); deshake_opencl by the camera path it logs.

ffmpeg's OpenCL filters have no CPU fallback, but a case only passes if it really ran on vkcl:
ffmpeg exited with 0, its log (a report file, FFREPORT) names the device it opened ("0.0: vkcl /
llvmpipe ...") and vkcl's VKCL_LOG=launch=debug lines show every kernel the case names
launched. The pocl run must have opened pocl's platform ("Portable Computing Language") and
launched nothing on vkcl.

Writes `<status> ffmpeg/<filter>/<case>` lines to RESULTS (pass or fail); the reason of each
failure and the measure of each pass are printed.
"""
import math, os, re, subprocess, sys, time

sys.dont_write_bytecode = True  # no ci/__pycache__ from the import below
import ffmpeg_tonemap  # noqa: E402 (ci/ffmpeg_tonemap.py, beside this file)

WORK = os.environ.get("FFMPEG_WORK", "target/ffmpeg")
ICDS = {"vkcl": os.environ.get("VKCL_ICD", ""), "pocl": os.environ.get("POCL_ICD", "")}
PLATFORMS = {"vkcl": "vkcl", "pocl": "Portable Computing Language"}
LAUNCH = re.compile(r"\[launch\] (\S+): global")
DEVICE = re.compile(r"\] 0\.0: (.+?) / (.+)$", re.M)
# Bytes per pixel (all planes together) of the output formats used, all of 8-bit samples.
FORMATS = {"yuv420p": 1.5, "nv12": 1.5, "rgba": 4, "gray": 1, "yuv444p": 3}

# Inputs: lavfi sources, each a few frames (rate 10, 0.5 s) of a small picture.
W, H = 176, 144
MAIN = f"testsrc2=s={W}x{H}:r=10:d=0.5"
# Fractal detail (every pixel differs from its neighbours: blurs, edges and denoisers see
# structure everywhere, not testsrc2's flat areas).
FRACTAL = f"mandelbrot=s={W}x{H}:r=10:start_scale=1.5:end_scale=1.2:end_pts=5,trim=end_frame=5"
BARS = f"smptehdbars=s={W}x{H}:r=10:d=0.5"
# deshake's input: one still mandelbrot frame, looped 16 times, and cropped at a per-frame
# offset (a camera shaking by up to 12 whole pixels).
SHAKY = ("mandelbrot=s=384x288:r=10:start_scale=1.5:end_scale=1.5:end_pts=0,trim=end_frame=1,"
         "loop=loop=15:size=1,setpts=N/FRAME_RATE/TB,"
         "crop=256:192:x='64+trunc(12*sin(n*1.7))':y='48+trunc(9*cos(n*2.3))'")

# OpenCL C for program_opencl, openclsrc and xfade's custom transition (written to WORK).
KERNELS = r"""
const sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |
                          CLK_FILTER_NEAREST;

// program_opencl, one input: the plane inverted and moved left by the frame index (exact).
__kernel void invert_shift(__write_only image2d_t dst, unsigned int index,
                           __read_only image2d_t src)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    int w = get_image_width(dst);
    float4 v = read_imagef(src, nearest, (int2)((p.x + (int)index) % w, p.y));
    write_imagef(dst, p, (float4)(1.0f) - v);
}

// program_opencl, two inputs: a quarter of the second over the first (float rounding).
__kernel void blend(__write_only image2d_t dst, unsigned int index,
                    __read_only image2d_t a, __read_only image2d_t b)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(dst, p, mix(read_imagef(a, nearest, p), read_imagef(b, nearest, p), 0.25f));
}

// openclsrc: an integer pattern of the position and the frame index (exact).
__kernel void pattern(__write_only image2d_t dst, unsigned int index)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    uint4 c = (uint4)((p.x ^ p.y) + index, p.x * 3 + index * 7, p.y * 5, 255) & 255u;
    write_imagef(dst, p, convert_float4(c) / 255.0f);
}

// xfade custom transition: vertical blinds that close as progress goes from 1 to 0.
__kernel void blinds(__write_only image2d_t dst, __read_only image2d_t a,
                     __read_only image2d_t b, float progress)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    int open = (int)(progress * 16.0f);
    write_imagef(dst, p, (p.x % 16) < open ? read_imagef(a, nearest, p)
                                            : read_imagef(b, nearest, p));
}
"""

CASES = []


def case(filt, name, inputs, graph, kernels, check, pocl=True):
    """inputs: lavfi sources ([0:v], [1:v], ...); graph: the -filter_complex text, whose output
    is [out]; kernels: the kernel names vkcl must have launched; check: IDENTICAL, close(dB),
    or a function (vkcl Run, pocl Run or None) -> a reason, or (None, a description);
    pocl: False where pocl cannot run the case (the check then has its own reference)."""
    CASES.append((filt, name, inputs, graph, kernels, check, pocl))


def simple(filt, name, opts, kernels, check, src=MAIN, fmt="yuv420p"):
    """One input through hwupload -> FILT=OPTS -> hwdownload."""
    f = f"{filt}={opts}" if opts else filt
    case(filt, name, [src], f"[0:v]format={fmt},hwupload,{f},hwdownload,format={fmt}[out]",
         kernels, check)


# Every output byte equal to pocl's: kernels that move samples, compare them, or compute with
# integers. An 8-bit sample read as a float and written back unchanged is exact on any
# conforming device (the spec's conversions are far inside half a step).
IDENTICAL = ("identical",)


def close(bound):
    """Every 8-bit sample within 1 of pocl's and each frame's PSNR against pocl's at least
    `bound` dB. For kernels that compute in float: OpenCL lets devices differ in the last bits
    (contraction of a*b+c to fma, built-ins such as hypot, exp, pow and mix within their ulp
    bounds, unorm8 <-> float conversions within 1.5 ulp, linear filtering's precision), and
    write_imagef rounds to 8 bits, so a result within an ulp of k + 1/2 can round either way:
    a difference of 1, never 2. A wrong kernel (a wrong weight, a sample from the wrong place)
    moves samples by more than 1 or moves many: the PSNR bound limits how many may differ by 1
    (PSNR = 48.13 dB - 10 log10(fraction of samples off by 1): 70 dB is 0.65 %, 55 dB 20 %)."""
    return ("close", bound)


# Float arithmetic whose results rarely land near k + 1/2 (sums with irrational-looking
# weights, square roots, exponentials): at most 0.65 % of the samples may differ by 1.
RARE_TIES = close(70)
# Float arithmetic whose exact results are often exactly k + 1/2 (averages of two or four
# samples, a quarter of one sample plus three quarters of another: a quarter of such results
# are ties), where any last-bit difference decides the rounding: at most 20 % may differ by 1.
TIES = close(55)


def cases():
    k = os.path.join(WORK, "kernels.cl")
    blur = ["avgblur_horiz", "avgblur_vert"]
    # avgblur and boxblur: a horizontal then a vertical box sum of samples read as floats,
    # divided by the box's size (single-precision division: 2.5 ulp).
    simple("avgblur_opencl", "3x5", "sizeX=3:sizeY=5", blur, RARE_TIES)
    simple("avgblur_opencl", "9_luma", "sizeX=9:planes=1", blur, RARE_TIES, src=FRACTAL)
    simple("boxblur_opencl", "default", "", blur, RARE_TIES)
    simple("boxblur_opencl", "r4_p3_chroma1", "lr=4:lp=3:cr=1:cp=1", blur, RARE_TIES,
           src=FRACTAL)
    # unsharp: sum(w_i * x_i) over the mask in float, with Gaussian-like weights the host
    # computes (contractible to fma), then x + amount * (x - blurred). Identical here (a
    # previous session measured 109.5 dB against pocl for other options).
    simple("unsharp_opencl", "5x5_local", "lx=5:ly=5:la=1.5:cx=3:cy=3:ca=0.5",
           ["unsharp_local"], RARE_TIES, src=FRACTAL)
    simple("unsharp_opencl", "21x21_global", "lx=21:ly=21:la=-0.8", ["unsharp_global"],
           RARE_TIES, src=FRACTAL)
    # convolution: sum(coefficient * sample) in float (contractible), times rdiv plus bias.
    simple("convolution_opencl", "sharpen3x3", "0m='0 -1 0 -1 5 -1 0 -1 0'",
           ["convolution_global"], RARE_TIES)
    simple("convolution_opencl", "blur5x5_rdiv",
           "0m='1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1':0rdiv=0.04:"
           "1m='1 2 1 2 4 2 1 2 1':1rdiv=0.0625:2m='-1 -1 -1 -1 8 -1 -1 -1 -1':2bias=128",
           ["convolution_global"], RARE_TIES, src=FRACTAL)
    # dilation, erosion: the largest / smallest neighbour, limited to the sample +- threshold:
    # comparisons of samples, identical.
    simple("dilation_opencl", "default", "", ["dilation_global"], IDENTICAL, src=FRACTAL)
    simple("dilation_opencl", "threshold_coords", "threshold0=20:threshold1=5:coordinates=90",
           ["dilation_global"], IDENTICAL, src=FRACTAL)
    simple("erosion_opencl", "default", "", ["erosion_global"], IDENTICAL, src=FRACTAL)
    simple("erosion_opencl", "threshold_coords", "threshold0=20:threshold2=5:coordinates=165",
           ["erosion_global"], IDENTICAL, src=FRACTAL)
    # sobel, prewitt, roberts: hypot(gx, gy) * scale + delta (hypot: 4 ulp).
    for op in ("sobel", "prewitt", "roberts"):
        simple(f"{op}_opencl", "default", "", [f"{op}_global"], RARE_TIES, src=FRACTAL)
    simple("sobel_opencl", "scale_delta", "planes=7:scale=2:delta=10", ["sobel_global"],
           RARE_TIES)
    simple("prewitt_opencl", "scale_delta", "planes=3:scale=0.5:delta=-5", ["prewitt_global"],
           RARE_TIES)
    simple("roberts_opencl", "scale_delta", "planes=1:scale=3:delta=20", ["roberts_global"],
           RARE_TIES)
    # nlmeans: patch distances summed in float, weights exp(-d / h^2) (exp: 3 ulp) summed over
    # the search window, then the weighted average (measured 93.9 dB: one sample off by 1;
    # a previous session measured 100.0 dB).
    simple("nlmeans_opencl", "s4_p5_r9", "s=4:p=5:r=9",
           ["horiz_sum", "vert_sum", "weight_accum", "average"], RARE_TIES, src=FRACTAL)
    # pad, transpose: copies of samples and of a constant colour.
    simple("pad_opencl", "border", "w=iw+40:h=ih+24:x=24:y=8:color=violet", ["pad"], IDENTICAL)
    simple("pad_opencl", "aspect", "aspect=16/9:x=-1:y=-1:color=0x20c040", ["pad"], IDENTICAL,
           src=BARS)
    for d in ("cclock_flip", "clock", "cclock", "clock_flip"):
        simple("transpose_opencl", d, f"dir={d}", ["transpose"], IDENTICAL)
    # colorkey on RGBA: distance() of each pixel's colour to the key (a square root, within
    # ulps) compared with the similarity (blend 0: alpha 0 or 1; a distance within an ulp of
    # the similarity could flip it, which these inputs do not have), or
    # clamp((distance - similarity) / blend) into alpha (float, rounded).
    simple("colorkey_opencl", "hard", "color=0x00ff00:similarity=0.4", ["colorkey"], RARE_TIES,
           src=BARS, fmt="rgba")
    simple("colorkey_opencl", "blend", "color=0xff0000:similarity=0.3:blend=0.2",
           ["colorkey_blend"], RARE_TIES, fmt="rgba")
    # overlay: a copy where the overlay has no alpha; else mix(main, overlay, alpha), whose
    # exact value is often k + 1/2 (alpha = 128/255 and the like).
    small_bars = BARS.replace(f"{W}x{H}", "96x64")
    with_alpha = "geq=lum='p(X,Y)':cb='p(X,Y)':cr='p(X,Y)':a='X*255/W'"
    case("overlay_opencl", "no_alpha", [MAIN, small_bars],
         "[0:v]format=yuv420p,hwupload[m];[1:v]format=yuv420p,hwupload[o];"
         "[m][o]overlay_opencl=x=40:y=30,hwdownload,format=yuv420p[out]",
         ["overlay_no_alpha"], IDENTICAL)
    case("overlay_opencl", "external_alpha", [MAIN, small_bars],
         f"[0:v]format=yuv420p,hwupload[m];[1:v]format=yuva420p,{with_alpha},hwupload[o];"
         "[m][o]overlay_opencl=x=60:y=50,hwdownload,format=yuv420p[out]",
         ["overlay_external_alpha"], TIES)
    # Alpha in the overlay's only plane: the kernel for a main picture of as many planes (of
    # the formats ffmpeg's OpenCL frames have, one-plane grey under one-plane RGBA; the grey
    # takes the overlay's first channel).
    case("overlay_opencl", "internal_alpha", [MAIN, small_bars],
         "[0:v]format=gray,hwupload[m];[1:v]format=gbrap,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':"
         "a='Y*255/H',format=rgba,hwupload[o];"
         "[m][o]overlay_opencl=x=30:y=20,hwdownload,format=gray[out]",
         ["overlay_internal_alpha"], TIES)
    # xfade: the wipes and slides compare positions with progress * size and copy samples;
    # fade mixes the two frames by the progress (float).
    for t in ("wipeleft", "wipeup", "slideright", "slidedown"):
        case("xfade_opencl", t, [MAIN, FRACTAL],
             "[0:v]format=yuv420p,hwupload[a];[1:v]format=yuv420p,hwupload[b];"
             f"[a][b]xfade_opencl=transition={t}:duration=0.3:offset=0.1,hwdownload,"
             "format=yuv420p[out]", [t], IDENTICAL)
    case("xfade_opencl", "fade", [MAIN, FRACTAL],
         "[0:v]format=yuv420p,hwupload[a];[1:v]format=yuv420p,hwupload[b];"
         "[a][b]xfade_opencl=transition=fade:duration=0.3:offset=0.1,hwdownload,"
         "format=yuv420p[out]", ["fade"], RARE_TIES)
    case("xfade_opencl", "custom", [MAIN, FRACTAL],
         "[0:v]format=yuv420p,hwupload[a];[1:v]format=yuv420p,hwupload[b];"
         f"[a][b]xfade_opencl=transition=custom:source={k}:kernel=blinds:duration=0.3:"
         "offset=0.1,hwdownload,format=yuv420p[out]", ["blinds"], IDENTICAL)
    # tonemap: 10-bit PQ (SMPTE 2084) BT.2020 input to 8-bit BT.709: the PQ EOTF (powr), the
    # tone curve, a 3x3 primaries matrix and the BT.1886 inverse EOTF (powr), all float; ties
    # are rare. pocl cannot run it (it has no CL_RG images, which P010's and NV12's chroma
    # planes are): the reference is ci/ffmpeg_tonemap.py's model of the kernel, in double.
    # desat=0: the desaturation uses native_powr, whose precision is the device's own choice.
    for curve, src in (("hable", BARS), ("reinhard", BARS), ("mobius", MAIN), ("linear", MAIN)):
        case("tonemap_opencl", curve, [src],
             "[0:v]format=p010le,setparams=color_trc=smpte2084:color_primaries=bt2020:"
             f"colorspace=bt2020nc:range=tv,hwupload,tonemap_opencl=tonemap={curve}:peak=12:"
             "format=nv12:t=bt709:m=bt709:p=bt709:r=tv:desat=0,hwdownload,format=nv12[out]",
             ["tonemap"], tonemap_model(src, 12, RARE_TIES), pocl=False)
    # program_opencl, openclsrc: the kernels of KERNELS above (exact, and mix at 1/4: ties).
    simple("program_opencl", "invert_shift", f"source={k}:kernel=invert_shift",
           ["invert_shift"], IDENTICAL)
    case("program_opencl", "blend_two_inputs", [MAIN, FRACTAL],
         "[0:v]format=yuv420p,hwupload[a];[1:v]format=yuv420p,hwupload[b];"
         f"[a][b]program_opencl=source={k}:kernel=blend:inputs=2,hwdownload,"
         "format=yuv420p[out]", ["blend"], TIES)
    case("openclsrc", "pattern", [],
         f"openclsrc=source={k}:kernel=pattern:size=160x120:format=rgba:rate=10,"
         "trim=end_frame=5,hwdownload,format=rgba[out]", ["pattern"], IDENTICAL)
    # remap: maps of whole pixel coordinates (gray16, which the kernel scales by 65535), read
    # with a nearest sampler (a copy) or a linear one, which at whole coordinates averages 2x2
    # samples (ties).
    xmap = f"nullsrc=s={W}x{H}:r=10:d=0.5,format=gray16le,geq=lum='W-1-X+8*sin(Y/9)'"
    ymap = f"nullsrc=s={W}x{H}:r=10:d=0.5,format=gray16le,geq=lum='Y*0.9+6'"
    for interp, check in (("near", IDENTICAL), ("linear", TIES)):
        case("remap_opencl", interp, [FRACTAL, xmap, ymap],
             "[0:v]format=yuv444p,hwupload[s];[1:v]hwupload[x];[2:v]hwupload[y];"
             f"[s][x][y]remap_opencl=interp={interp}:fill=orange,hwdownload,"
             "format=yuv444p[out]", [f"remap_{interp}"], check)
    deshake_cases()


def deshake_cases():
    """deshake_opencl: Harris corner responses (harris_response), the strongest corner of each
    32x32 block, refined to sub-pixel (refine_features), BRIEF descriptors and their matching
    on the device, RANSAC on the host, then a transform of each frame (transform,
    crop_upscale) that smooths the camera path it estimated. RGB input is first made grey
    (grayscale), and with debug=1 the matches are drawn onto RGB frames (draw_debug_info)."""
    find = ["harris_response", "refine_features", "brief_descriptors", "match_descriptors"]
    warp = ["transform", "crop_upscale"]
    graph = "[0:v]format={0},hwupload,deshake_opencl={1}smooth_window_multiplier=0.5," \
            "hwdownload,format={0}[out]"
    # Without sub-pixel refinement each feature point is the whole pixel whose Harris response
    # is its 32x32 block's largest, the descriptors are bit tests of samples, the matches
    # integer: the camera path must be pocl's to the 6 decimals the filter logs. The output is
    # then the same transform of each frame, sampled through a linear sampler at fractional
    # positions, whose precision is the device's: on this fractal's steep edges a weight's last
    # bits move a sample across a rounding boundary now and then (measured: 8 of 16 frames
    # identical, every sample within 1, lowest PSNR 65.5 dB, 1.8 % of a frame's samples off by
    # one). 60 dB: at most 6 % of the samples off by one.
    case("deshake_opencl", "unrefined_path", [SHAKY], graph.format(
        "yuv420p", "refine_features=0:debug=1:"), find + warp, deshake_path(0))
    case("deshake_opencl", "unrefined_frames", [SHAKY], graph.format(
        "yuv420p", "refine_features=0:"), find + warp, close(60))
    # With refinement (the default) each corner is moved by an iterative fit (OpenCV's
    # cornerSubPix: up to 40 rounds, until a round moves it by less than 0.001 px) to the
    # picture read through a linear sampler at fractional positions, so by the device's
    # filtering precision; RANSAC then keeps as inliers the matches within a distance of its
    # model, and a point near that distance flips with the last bits of its position, which
    # moves the least-squares fit over the inliers by a fraction of a pixel. vkcl's path is
    # off pocl's by a few hundredths of a pixel in most steps (measured: at most 0.131 px in x
    # in one step, rotation and scale to 1e-4). A wrong kernel is pixels off (clspv's
    # private-offset bug, docs/DECISIONS.md, moved refined corners by 2.7 px): each step of the
    # path must be within 0.25 px of pocl's (rotation 0.1 degree, scale 0.2 %). The frames then
    # differ by sub-pixel shifts of a fractal picture, where no bound would be tight: the
    # unrefined cases check the frames.
    case("deshake_opencl", "refined_path", [SHAKY], graph.format("yuv420p", "debug=1:"),
         find + warp, deshake_path(0.25))
    # RGB: grayscale (a float weighted sum of R, G, B) feeds the corners, and debug=1 draws.
    case("deshake_opencl", "rgb_refined_path", [SHAKY], graph.format("rgba", "debug=1:"),
         ["grayscale"] + find + warp + ["draw_debug_info"], deshake_path(0.25))


def tonemap_model(src, peak, bound):
    """Compare vkcl's tonemap_opencl frames with ci/ffmpeg_tonemap.py's model of the kernel,
    fed the P010 frames ffmpeg makes of SRC on the CPU: every sample within 1, each frame's
    PSNR at least `bound` (a close()). The model allows for the kernel's own data race (see
    ffmpeg_tonemap.check)."""
    def check(vk, po):
        p = subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", src, "-vf",
                            "format=p010le", "-f", "rawvideo", "-"], stdout=subprocess.PIPE,
                           check=True)
        if len(p.stdout) != len(vk.frames) * W * H * 3:
            return f"{len(vk.frames)} frames, {len(p.stdout) / (W * H * 3):g} input frames"
        k = ffmpeg_tonemap.header(vk.log)
        stats = ffmpeg_tonemap.check(vk.frames, p.stdout, k, W, H, peak)
        largest, worst = max(s[0] for s in stats), min(s[1] for s in stats)
        same = sum(s[0] == 0 for s in stats)
        text = (f"{same} of {len(stats)} frames of nv12 {W}x{H} identical to the model, "
                f"largest difference {largest}, lowest PSNR {worst:.1f} dB, work-items closer to "
                f"the totals being updated (frames 0..{len(stats) - 1}): "
                + "/".join(str(s[2]) for s in stats))
        if largest > 1:
            return text + " (more than 1 apart)", text
        if worst < bound[1]:
            return text + f" (under {bound[1]} dB)", text
        return None, text + f" (bound {bound[1]} dB)"
    return check


FRAME_LOG = re.compile(
    r"Frame (\d+):\s+frame moved from: (\S+) x, (\S+) y\s+to: \S+ x, \S+ y\s+"
    r"rotated from: (\S+) degrees\s+to: \S+ degrees\s+scaled from: (\S+) x, (\S+) y")


def camera_path(log):
    """deshake's estimated absolute camera position per frame (logged with debug=1):
    {frame: (x, y, rotation in degrees, scale x, scale y)}."""
    return {int(m[0]): tuple(float(v) for v in m[1:]) for m in FRAME_LOG.findall(log)}


def deshake_path(tol):
    """A check of the camera path deshake estimated on vkcl against pocl's: as many frames,
    and each frame-to-frame step in x and y within tol pixels of pocl's (rotation within
    tol * 0.4 degrees, scale within tol * 0.008; tol 0: equal to the 6 decimals logged)."""
    names = ("x", "y", "rotation", "scale x", "scale y")
    limits = (tol, tol, tol * 0.4, tol * 0.008, tol * 0.008)

    def check(vk, po):
        a, b = camera_path(vk.log), camera_path(po.log)
        if not b or sorted(a) != sorted(b):
            return f"camera path of frames {sorted(a)}, pocl {sorted(b)}"
        worst = [0.0] * 5
        frames = sorted(a)
        for f0, f1 in zip(frames, frames[1:]):
            for i in range(5):
                step_vk, step_po = a[f1][i] - a[f0][i], b[f1][i] - b[f0][i]
                worst[i] = max(worst[i], abs(step_vk - step_po))
                if abs(step_vk - step_po) > limits[i] + 1e-6:
                    return (f"frame {f0}->{f1}: step in {names[i]} {step_vk:.6f}, pocl "
                            f"{step_po:.6f} (more than {limits[i]:g} apart)")
        return None, (f"camera path of {len(frames)} frames, steps off pocl's by at most: x "
                      f"{worst[0]:.4f} px, y {worst[1]:.4f} px, rotation {worst[2]:.4f} deg, "
                      f"scale {max(worst[3:]):.5f}")
    return check


class Run:
    def __init__(self, name, rc, log, stderr, data, fmt, size, seconds):
        self.name, self.rc, self.log, self.stderr, self.data = name, rc, log, stderr, data
        self.fmt, self.size, self.seconds = fmt, size, seconds
        self.frames = []
        if fmt in FORMATS and size:
            n = int(size[0] * size[1] * FORMATS[fmt])
            if n and len(data) % n == 0:
                self.frames = [data[i:i + n] for i in range(0, len(data), n)]


# The output's format and size, from ffmpeg's description of its output stream.
OUTPUT_STREAM = re.compile(r"^Output #0.*?\n(?:.*\n)*?\s+Stream #0:0.*?Video: rawvideo.*?, "
                           r"([a-z0-9_]+)(?:\([^)]*\))?, (\d+)x(\d+)", re.M)


def run(impl, filt, name, inputs, graph):
    """One ffmpeg command on one ICD. ffmpeg's own log (debug level) goes to a report file
    (FFREPORT), apart from stderr, where vkcl's log lines and ffmpeg's errors go: vkcl logs
    from its own threads too, and its lines would otherwise break into ffmpeg's."""
    base = os.path.join(WORK, f"{filt}.{name}.{impl}")
    cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error",
           "-init_hw_device", "opencl=ocl:0.0", "-filter_hw_device", "ocl"]
    for src in inputs:
        cmd += ["-f", "lavfi", "-i", src]
    cmd += ["-filter_complex", graph, "-map", "[out]", "-fps_mode", "passthrough",
            "-f", "rawvideo", "-y", base + ".raw"]
    # Level 48 (debug): tonemap_opencl logs the OpenCL header it generated.
    env = dict(os.environ, OCL_ICD_VENDORS=ICDS[impl], FFREPORT=f"file={base}.log:level=48")
    if impl == "vkcl":
        env["VKCL_LOG"] = "launch=debug"
    else:
        env.pop("VKCL_LOG", None)
    for f in (base + ".raw", base + ".log"):
        if os.path.exists(f):
            os.remove(f)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=300)
        rc, stderr = p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, stderr = "timeout", (e.stdout or b"").decode("utf-8", "replace")
    seconds = time.time() - t0
    with open(base + ".stderr", "w") as f:
        f.write(stderr)
    log = open(base + ".log", errors="replace").read() if os.path.exists(base + ".log") else ""
    m = OUTPUT_STREAM.search(log)
    fmt, size = (m[1], (int(m[2]), int(m[3]))) if m else (None, None)
    data = b""
    if os.path.exists(base + ".raw"):
        with open(base + ".raw", "rb") as f:
            data = f.read()
        os.remove(base + ".raw")
    return Run(impl, rc, log, stderr, data, fmt, size, seconds)


def difference(a, b):
    """The largest difference of two 8-bit frames and the PSNR in dB of a against b."""
    se = largest = 0
    for p, q in zip(a, b):
        if p != q:
            d = abs(p - q)
            se += d * d
            largest = max(largest, d)
    return largest, (math.inf if se == 0 else 10 * math.log10(255.0 * 255.0 * len(a) / se))


def compare_frames(got, want, check, what):
    """got, want: lists of frames; check: IDENTICAL or close(dB). (None, a description of the
    measure), or (a reason, the description)."""
    n = len(got)
    identical = sum(a == b for a, b in zip(got, want))
    if identical == n:
        return None, f"identical, {what}"
    stats = [difference(a, b) for a, b in zip(got, want)]
    largest, worst = max(s[0] for s in stats), min(s[1] for s in stats)
    text = (f"{identical} of {what} identical, largest difference {largest}, lowest PSNR "
            f"{worst:.1f} dB")
    if check == IDENTICAL:
        return text + " (expected identical)", text
    if largest > 1:
        return text + " (more than 1 apart)", text
    if worst < check[1]:
        return text + f" (under {check[1]} dB)", text
    return None, text + f" (bound {check[1]} dB)"


def compare(vk, po, check):
    """(None, a description of the measure), or (a reason, ...)."""
    if callable(check):
        r = check(vk, po)
        return r if isinstance(r, tuple) else (r, "")
    what = f"{len(vk.frames)} frames of {vk.fmt} {vk.size[0]}x{vk.size[1]}"
    return compare_frames(vk.frames, po.frames, check, what)


def verify(vk, po, kernels):
    """None, or why the two runs cannot be compared (a failed run, a wrong device, a kernel not
    launched on vkcl)."""
    for r in (vk, po) if po else (vk,):
        if r.rc != 0:
            errors = [l for l in r.stderr.splitlines() if not l.startswith("vkcl ")]
            return f"ffmpeg on {r.name} exited with {r.rc}: " + " | ".join(errors[-4:])[:400]
        dev = DEVICE.search(r.log)
        if not dev or dev[1] != PLATFORMS[r.name]:
            return (f"the {r.name} run opened " + (f"{dev[1]!r} / {dev[2]!r}" if dev else
                                                    "no OpenCL device it logged"))
        if not r.frames:
            return f"no frames from {r.name} ({len(r.data)} bytes of {r.fmt} {r.size})"
    launched = set(LAUNCH.findall(vk.stderr))
    missing = [k for k in kernels if k not in launched]
    if missing:
        return f"kernels {missing} not launched on vkcl (launched: {sorted(launched)})"
    if po is None:
        return None
    if LAUNCH.search(po.stderr):
        return "the pocl run launched kernels on vkcl"
    if (vk.fmt, vk.size, len(vk.frames)) != (po.fmt, po.size, len(po.frames)):
        return (f"{len(vk.frames)} frames of {vk.fmt} {vk.size}, pocl {len(po.frames)} of "
                f"{po.fmt} {po.size}")
    return None


def main():
    out_path = sys.argv[1]
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "kernels.cl"), "w") as f:
        f.write(KERNELS)
    for impl, path in ICDS.items():
        if not os.path.exists(path):
            sys.exit(f"ffmpeg_check: no {impl} ICD at {path!r}")
    cases()
    lines, failed = [], 0
    for filt, name, inputs, graph, kernels, check, pocl in CASES:
        if only and filt != only:
            continue
        test = f"ffmpeg/{filt}/{name}"
        vk = run("vkcl", filt, name, inputs, graph)
        po = run("pocl", filt, name, inputs, graph) if pocl else None
        why, text = verify(vk, po, kernels), ""
        if why is None:
            try:
                why, text = compare(vk, po, check)
            except Exception as e:  # a checker error is this case's failure, not the run's
                why = f"{type(e).__name__}: {e}"
        status = "pass" if why is None else "fail"
        failed += why is not None
        times = f"vkcl {vk.seconds:.1f} s" + (f", pocl {po.seconds:.1f} s" if po else "")
        print(f"{status} {test}: " + (why or text) + f" [{times}]", flush=True)
        lines.append(f"{status} {test}\n")
    with open(out_path, "w") as f:
        f.writelines(lines)
    print(f"ffmpeg_check: {len(lines) - failed} passed, {failed} failed")


if __name__ == "__main__":
    main()
