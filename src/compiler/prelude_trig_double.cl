// Double sin, cos, tan (and sincos): Payne-Hanek argument reduction in integers for every
// |x| > pi/4 (exact to 2^-128 of the fraction: no fused multiply-add needed, and the closest
// a double comes to a multiple of pi/2 is 2^-61), then fdlibm's kernels on [-pi/4, pi/4]
// with the remainder as a double pair. No contraction: the kernels' error terms are written
// for separately rounded operations. Doubles are classified by arithmetic (x - x is 0 for
// finite x): clspv's double isfinite came out wrong beside integer views of the same value.
#pragma OPENCL FP_CONTRACT OFF
// The bits of 2/pi after the binary point, 32 a word: enough for DBL_MAX (word 36). Static
// where OpenCL C has `static` (1.2 on): two objects that both hold it then link.
#if __OPENCL_C_VERSION__ >= 120
static
#endif
__constant uint __vkcl_2opi_d[38] = {
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
    0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu,
    0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu,
    0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u,
    0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u,
    0x1f8d5d08u, 0x56033046u, 0xfc7b6babu};
// The 32 bits of the little-endian words p from bit b on.
__VKCL_FN uint __vkcl_bits32(const uint *p, int b) {
  int w = b >> 5;
  uint s = (uint)b & 31u;
  return s == 0u ? p[w] : (p[w] >> s) | (p[w + 1] << (32u - s));
}
// The high 64 bits of a * b.
__VKCL_FN ulong __vkcl_mulhi64(ulong a, ulong b) {
  ulong a0 = a & 0xffffffffUL, a1 = a >> 32, b0 = b & 0xffffffffUL, b1 = b >> 32;
  ulong lo = a0 * b0, m1 = a1 * b0, m2 = a0 * b1;
  ulong mid = (lo >> 32) + (m1 & 0xffffffffUL) + (m2 & 0xffffffffUL);
  return a1 * b1 + (m1 >> 32) + (m2 >> 32) + (mid >> 32);
}
// |x| = k * pi/2 + (*hi + *lo), |*hi + *lo| <= pi/4 (*lo within half an ULP of *hi), for
// finite |x| > pi/4 (ax = |x|): returns k.
__VKCL_FN int __vkcl_rem_pio2_d(double ax, double *hi, double *lo) {
  ulong u = as_ulong(ax);
  int s = (int)(u >> 52) - 1075;  // ax = m * 2^s
  ulong m = (u & 0xfffffffffffffUL) | 0x10000000000000UL;
  // Bits of 2/pi from word j on: those before weigh a multiple of 4 (k mod 4 is enough).
  int j = s >= 2 ? (s - 2) >> 5 : 0;
  int t = s - 32 * j;  // -53 <= t <= 33
  // p = m * (7 words of 2/pi from word j), little-endian; x * 2/pi = p * 2^(t - 224).
  uint m0 = (uint)m, m1 = (uint)(m >> 32);
  uint p[10];
  ulong c = 0;
  for (int i = 0; i < 7; i++) {
    c += (ulong)__vkcl_2opi_d[j + 6 - i] * m0;
    p[i] = (uint)c;
    c >>= 32;
  }
  p[7] = (uint)c;
  c = 0;
  for (int i = 0; i < 7; i++) {
    c += (ulong)__vkcl_2opi_d[j + 6 - i] * m1 + p[i + 1];
    p[i + 1] = (uint)c;
    c >>= 32;
  }
  p[8] = (uint)c;
  p[9] = 0u;
  // 2 integer bits and 128 fraction bits, from bit 96 - t (63 to 149) on.
  int b = 96 - t;
  int k = (int)(__vkcl_bits32(p, b + 128) & 3u);
  ulong fh = ((ulong)__vkcl_bits32(p, b + 96) << 32) | __vkcl_bits32(p, b + 64);
  ulong fl = ((ulong)__vkcl_bits32(p, b + 32) << 32) | __vkcl_bits32(p, b);
  // The fraction as a signed value in [-1/2, 1/2).
  int neg = (int)(fh >> 63);
  if (neg) {
    k += 1;
    fl = ~fl + 1UL;
    fh = ~fh + (ulong)(fl == 0UL);
  }
  int e = 0;
  if (fh == 0UL) {
    fh = fl;
    fl = 0UL;
    e = 64;
  }
  uint top = (uint)(fh >> 32);
  int lz = top != 0u ? (int)clz(top) : 32 + (int)clz((uint)fh);
  if (lz != 0) fh = (fh << lz) | (fl >> (64 - lz));
  e += lz;
  // r = fh * 2^(-64 - e) * pi/2, pi/2 = 0xc90fdaa22168c234 * 2^-63: r = q * 2^(-63 - e).
  ulong q = __vkcl_mulhi64(fh, 0xc90fdaa22168c234UL);
  double h = convert_double(q & ~0x7ffUL), l = convert_double(q & 0x7ffUL);
  double sum = h + l;
  l -= sum - h;
  double scale = as_double((ulong)(1023 - 63 - e) << 52);
  *hi = neg ? -sum * scale : sum * scale;
  *lo = neg ? -l * scale : l * scale;
  return k;
}
// fdlibm's __kernel_sin(x, y, 1) and __kernel_cos(x, y), |x + y| <= pi/4.
__VKCL_FN double __vkcl_ksin_d(double x, double y) {
  double z = x * x, v = z * x;
  double r = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04
             + z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08
             + z * 1.58969099521155010221e-10)));
  return x - ((z * (0.5 * y - v * r) - y) - v * -1.66666666666666324348e-01);
}
__VKCL_FN double __vkcl_kcos_d(double x, double y) {
  double z = x * x, w = z * z;
  double r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03
             + z * 2.48015872894767294178e-05)) + w * w * (-2.75573143513906633035e-07
             + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11));
  double hz = 0.5 * z;
  w = 1.0 - hz;
  return w + (((1.0 - w) - hz) + (z * r - x * y));
}
// fdlibm's __kernel_tan(x, y, iy): tan(x + y) for iy = 1, -1 / tan(x + y) for iy = -1.
__VKCL_FN double __vkcl_ktan_d(double x, double y, int iy) {
  int big = fabs(x) >= 0x1.59428p-1;  // 0.6743...
  int sgn = x < 0.0 ? -1 : 1;
  if (big) {
    if (x < 0.0) {
      x = -x;
      y = -y;
    }
    x = (0x1.921fb54442d18p-1 - x) + (0x1.1a62633145c07p-55 - y);
    y = 0.0;
  }
  double z = x * x, w = z * z;
  double r = 1.33333333333201242699e-01 + w * (2.18694882948595424599e-02
             + w * (3.59207910759131235356e-03 + w * (5.88041240820264096874e-04
             + w * (7.81794442939557092300e-05 + w * -1.85586374855275456654e-05))));
  double v = z * (5.39682539762260521377e-02 + w * (8.86323982359930005737e-03
             + w * (1.45620945432529025516e-03 + w * (2.46463134818469906812e-04
             + w * (7.14072491382608190305e-05 + w * 2.59073051863633712884e-05)))));
  double s = z * x;
  r = y + z * (s * (r + v) + y);
  r += 3.33333333333334091986e-01 * s;
  w = x + r;
  if (big) {
    v = (double)iy;
    return (double)sgn * (v - 2.0 * (x - (w * w / (w + v) - r)));
  }
  if (iy == 1) return w;
  // -1 / (x + r), accurately.
  double zh = as_double(as_ulong(w) & 0xffffffff00000000UL);
  v = r - (zh - x);
  double a = -1.0 / w;
  double th = as_double(as_ulong(a) & 0xffffffff00000000UL);
  s = 1.0 + th * zh;
  return th + a * (s + th * v);
}
// |x| reduced to *hi + *lo: the quadrant (0 for |x| <= pi/4).
__VKCL_FN int __vkcl_reduce_d(double ax, double *hi, double *lo) {
  *hi = ax;
  *lo = 0.0;
  return ax <= 0x1.921fb54442d18p-1 ? 0 : __vkcl_rem_pio2_d(ax, hi, lo);
}
__VKCL_FN double __vkcl_sin(double x) {
  double ax = fabs(x), h, l;
  if (!(x - x == 0.0)) return x - x;  // inf, NaN
  if (ax < 0x1p-27) return x;
  int k = __vkcl_reduce_d(ax, &h, &l);
  double v = (k & 1) ? __vkcl_kcos_d(h, l) : __vkcl_ksin_d(h, l);
  v = (k & 2) ? -v : v;
  return x < 0.0 ? -v : v;
}
__VKCL_FN double __vkcl_cos(double x) {
  double ax = fabs(x), h, l;
  if (!(x - x == 0.0)) return x - x;  // inf, NaN
  if (ax < 0x1p-27) return 1.0;
  int k = __vkcl_reduce_d(ax, &h, &l);
  double v = (k & 1) ? __vkcl_ksin_d(h, l) : __vkcl_kcos_d(h, l);
  return ((k + 1) & 2) ? -v : v;
}
__VKCL_FN double __vkcl_tan(double x) {
  double ax = fabs(x), h, l;
  if (!(x - x == 0.0)) return x - x;  // inf, NaN
  if (ax < 0x1p-27) return x;
  int k = __vkcl_reduce_d(ax, &h, &l);
  double v = __vkcl_ktan_d(h, l, 1 - ((k & 1) << 1));
  return x < 0.0 ? -v : v;
}
#pragma OPENCL FP_CONTRACT ON
