"""A model of ffmpeg 5.1's tonemap_opencl kernel in double precision (used by ci/ffmpeg_check.py).

pocl 3.1 lists no CL_RG image format, so ffmpeg cannot make the P010 and NV12 frames that
tonemap_opencl reads and writes there (their chroma plane is a CL_RG image: "Failed to create
image for plane 1: -59"). vkcl's tonemap output is compared with this model instead: the
kernel's arithmetic (libavfilter/opencl/tonemap.cl and colorspace_common.cl, for a PQ input
and a BT.709 SDR output with desat=0) in double precision, with the constants of the OpenCL
header the filter generated (ffmpeg logs it at -v debug: 5-decimal matrices, the tone curve's
parameter), the frame-to-frame peak detection included.
"""
import math
import re

REFERENCE_WHITE = 100.0
DETECTION_FRAMES = 63
M1, M2 = 0.1593017578125, 78.84375
C1, C2, C3 = 0.8359375, 18.8515625, 18.6875


def header(log):
    """The constants of the generated header (the text after "Generated OpenCL header:")."""
    text = log[log.index("Generated OpenCL header:"):]
    consts = {}
    for name, body in re.findall(r"__constant float (\w+)\[9\] = \{([^}]*)\}", text):
        consts[name] = [float(v.rstrip("f")) for v in re.findall(r"-?[\d.]+f", body)]
    for name, value in re.findall(r"__constant const float (\w+) = (-?[\d.]+)f;", text):
        consts[name] = float(value)
    consts["tone"] = re.search(r"#define TONE_FUNC (\w+)", text)[1]
    consts["chroma_loc"] = int(re.search(r"#define chroma_loc (\d+)", text)[1])
    consts["luma_dst"] = [float(v) for v in re.search(
        r"constant float3 luma_dst = \{(\S+)f, (\S+)f, (\S+)f\}", text).groups()]
    for flag in ("FULL_RANGE_IN", "FULL_RANGE_OUT", "RGB2RGB_PASSTHROUGH", "ootf_impl"):
        consts[flag] = f"#define {flag}" in text
    return consts


def hable_f(x):
    a, b, c, d, e, f = 0.15, 0.50, 0.10, 0.20, 0.02, 0.30
    return (x * (x * a + b * c) + d * e) / (x * (x * a + b) + d * f) - e / f


def tone(name, param, s, peak):
    if name == "hable":
        return hable_f(s) / hable_f(peak)
    if name == "reinhard":
        return s / (s + param) * (peak + param) / peak
    if name == "linear":
        return s * param / peak
    if name == "mobius":
        j = param
        if s <= j:
            return s
        a = -j * j * (peak - 1.0) / (j * j - 2.0 * j + peak)
        b = (j * j - 2.0 * j * peak + peak) / max(peak - 1.0, 1e-6)
        return (b * b + 2.0 * b * j + j * j) / (b - a) * (s + a) / (s + b)
    raise ValueError(f"no model of tone curve {name}")


def eotf_st2084(x):
    p = x ** (1.0 / M2) if x > 0 else 0.0
    a = max(p - C1, 0.0)
    b = max(C2 - C3 * p, 1e-6)
    return (a / b) ** (1.0 / M1) * 10000.0 / REFERENCE_WHITE if x > 0 else 0.0


def mat(m, c):
    return [m[0] * c[0] + m[1] * c[1] + m[2] * c[2], m[3] * c[0] + m[4] * c[1] + m[5] * c[2],
            m[6] * c[0] + m[7] * c[1] + m[8] * c[2]]


def unorm8(v):
    return int(math.floor(min(max(v, 0.0), 1.0) * 255.0 + 0.5))


class Model:
    def __init__(self, k, width, height, peak):
        assert not (k["FULL_RANGE_IN"] or k["FULL_RANGE_OUT"] or k["ootf_impl"])
        assert k["desat_param"] == 0 and k["target_peak"] == 1.0
        self.k, self.w, self.h, self.peak = k, width, height, peak
        self.util = [0] * (2 * DETECTION_FRAMES + 7)  # the kernel's util buffer, zeroed
        self.avg_buf, self.peak_buf = 0, DETECTION_FRAMES + 1
        self.counter, self.max_total = 2 * DETECTION_FRAMES + 2, 2 * DETECTION_FRAMES + 3
        self.avg_total, self.frame_idx = 2 * DETECTION_FRAMES + 4, 2 * DETECTION_FRAMES + 5
        self.scene_frames = 2 * DETECTION_FRAMES + 6

    def to_light(self, y, u, v):
        """yuv2lrgb, then lrgb2lrgb (the PQ input has no OOTF)."""
        y, u, v = (y * 255.0 - 16.0) / 219.0, (u * 255.0 - 128.0) / 224.0, \
            (v * 255.0 - 128.0) / 224.0
        c = [eotf_st2084(x) for x in mat(self.k["rgb_matrix"], (y, u, v))]
        return c if self.k["RGB2RGB_PASSTHROUGH"] else mat(self.k["rgb2rgb"], c)

    def map_pixel(self, c, peak, average):
        sig = max(max(c), 1e-6)
        sig_old = sig
        slope = min(1.0, self.k["sdr_avg"] / average)
        sig, peak = sig * slope, peak * slope
        sig = min(tone(self.k["tone"], self.k["tone_param"], sig, peak), 1.0)
        return [x * (sig / sig_old) for x in c]

    def to_yuv(self, c):
        rgb = [0.0 if x < 0 else x ** (1.0 / 2.4) for x in c]
        y, u, v = mat(self.k["yuv_matrix"], rgb)
        return (219.0 * y + 16.0) / 255.0, (224.0 * u + 128.0) / 255.0, \
            (224.0 * v + 128.0) / 255.0

    def chroma(self, a, b, c, d):
        loc = self.k["chroma_loc"]
        pick = {1: lambda: [(p + r) * 0.5 for p, r in zip(a, c)], 3: lambda: a,
                4: lambda: [(p + q) * 0.5 for p, q in zip(a, b)], 5: lambda: c,
                6: lambda: [(r + s) * 0.5 for r, s in zip(c, d)]}
        if loc in pick:
            return pick[loc]()
        return [(p + q + r + s) * 0.25 for p, q, r, s in zip(a, b, c, d)]

    def item(self, colours, peak, average):
        """A work-item's output: its 2x2 luma samples and its chroma pair (unorm8)."""
        cs = [self.map_pixel(c, peak, average) for c in colours]
        _, u, v = self.to_yuv(self.chroma(*cs))
        return [unorm8(self.to_yuv(c)[0]) for c in cs] + [unorm8(u), unorm8(v)]

    def frame(self, p010):
        """One P010 frame (bytes) -> (the NV12 frame (bytes) the kernel writes when every
        work-item reads the detection totals before the frame's own update, the (peak,
        average) pairs a work-item may read (see check), the work-items' colours)."""
        w, h, util = self.w, self.h, self.util
        luma = [v / 65535.0 for v in memoryview(p010[:w * h * 2]).cast("H")]
        uv = [v / 65535.0 for v in memoryview(p010[w * h * 2:w * h * 3]).cast("H")]
        cw, ch = w // 2, h // 2
        gw, gh = -(-cw // 16) * 16, -(-ch // 16) * 16  # the global size: 16x16 groups
        groups = (gw // 16) * (gh // 16)
        # Each work-item's signal, and the colours of its 2x2 pixels.
        items = {}
        for yi in range(gh):
            for xi in range(gw):
                x, y = 2 * xi, 2 * yi
                cu, cv = uv[2 * (min(yi, ch - 1) * cw + min(xi, cw - 1)):][:2]
                cs = [self.to_light(luma[min(yy, h - 1) * w + min(xx, w - 1)], cu, cv)
                      for yy, xx in ((y, x), (y, x + 1), (y + 1, x), (y + 1, x + 1))]
                items[xi, yi] = (max(max(c) for c in cs), cs)
        # detect_peak_avg: this frame uses the totals of the frames before it (index and frame
        # count read before the barrier, the totals after it).
        idx, scene = util[self.frame_idx], util[self.scene_frames]

        def totals(max_total, avg_total):
            if scene == 0:
                return self.peak, self.k["sdr_avg"]
            return (max(1.0, max_total / (REFERENCE_WHITE * scene)),
                    max(0.25, avg_total / (REFERENCE_WHITE * scene)))
        seen_max, seen_avg = {util[self.max_total]}, {util[self.avg_total]}
        before = totals(util[self.max_total], util[self.avg_total])
        for gy in range(gh // 16):
            for gx in range(gw // 16):
                total = sum(int(items[gx * 16 + i, gy * 16 + j][0] * REFERENCE_WHITE)
                            for j in range(16) for i in range(16))
                group_avg = total // 256
                util[self.peak_buf + idx] = max(util[self.peak_buf + idx], group_avg)
                util[self.avg_buf + idx] += group_avg
        util[self.avg_buf + idx] //= groups
        threshold = self.k["scene_threshold"]
        if threshold > 0:
            cur_max, cur_avg = util[self.peak_buf + idx], util[self.avg_buf + idx]
            if abs(scene * cur_avg - util[self.avg_total]) > scene * threshold * REFERENCE_WHITE:
                for i in range(2 * DETECTION_FRAMES + 2):
                    util[i] = 0
                util[self.avg_total] = util[self.max_total] = util[self.scene_frames] = 0
                seen_max.add(0)  # a scene change: the totals are 0 for a moment
                seen_avg.add(0)
                util[self.avg_buf + idx], util[self.peak_buf + idx] = cur_avg, cur_max
        nxt = (idx + 1) % (DETECTION_FRAMES + 1)
        util[self.max_total] += util[self.peak_buf + idx] - util[self.peak_buf + nxt]
        util[self.avg_total] += util[self.avg_buf + idx] - util[self.avg_buf + nxt]
        util[self.peak_buf + nxt] = util[self.avg_buf + nxt] = 0
        seen_max.add(util[self.max_total])
        seen_avg.add(util[self.avg_total])
        util[self.frame_idx] = nxt
        util[self.scene_frames] = min(util[self.scene_frames] + 1, DETECTION_FRAMES)
        # The pixels.
        out = bytearray(w * h * 3 // 2)
        for (yi, xi), at in self.layout().items():
            for i, v in zip(at, self.item(items[xi, yi][1], *before)):
                out[i] = v
        variants = sorted({totals(m, a) for m in seen_max for a in seen_avg})
        return bytes(out), variants, items

    def layout(self):
        """{(yi, xi): the indices in an NV12 frame of the work-item's 4 luma samples and its
        chroma pair}, for the work-items that write."""
        w, h = self.w, self.h
        return {(yi, xi): [(2 * yi + dy) * w + 2 * xi + dx for dy, dx in
                           ((0, 0), (0, 1), (1, 0), (1, 1))] +
                [w * h + 2 * (yi * (w // 2) + xi), w * h + 2 * (yi * (w // 2) + xi) + 1]
                for yi in range(h // 2) for xi in range(w // 2)}


def check(got, p010, k, width, height, peak):
    """Compare the frames `got` of tonemap_opencl with the model's for the P010 frames `p010`.

    The kernel has a data race from its second frame on: the first work-item of the last
    work-group to finish updates the detection totals (peak and average over the frames so
    far) that every work-item reads after the group's barrier, with no synchronisation, so a
    work-item of a group still running then may read the totals before the update, after it,
    or, where the frame is a scene change, zeroed in between (peak and average separately;
    the frame count it divides them by was read before the barrier). On lavapipe, whose
    sub-groups run a barrier's section one after another, all but the first sub-group of the
    last group read them updated, and a sub-group of a group on another thread may read them
    at any of those moments. A work-item's output is compared with the model's for the totals
    before the update and, where it differs from that, with the model's for each other
    reading; the closest counts.

    Returns, per frame: (largest difference, PSNR in dB, work-items that read other totals)."""
    n = width * height * 3
    model = Model(k, width, height, peak)
    layout = model.layout()
    result = []
    for f, a in enumerate(got):
        want, variants, items = model.frame(p010[f * n:(f + 1) * n])
        se, largest, raced = 0, 0, 0
        for (yi, xi), at in layout.items():
            diffs = [abs(a[i] - want[i]) for i in at]
            if max(diffs) and len(variants) > 1:  # the closest of the readings it may have had
                other = min(([abs(a[i] - v) for i, v in zip(at, model.item(items[xi, yi][1], *t))]
                             for t in variants), key=lambda d: sum(x * x for x in d))
                if sum(x * x for x in other) < sum(x * x for x in diffs):
                    diffs, raced = other, raced + 1
            se += sum(d * d for d in diffs)
            largest = max(largest, max(diffs))
        psnr = math.inf if se == 0 else 10 * math.log10(255.0 * 255.0 * len(a) / se)
        result.append((largest, psnr, raced))
    return result
