// Float sin, cos, tan (and sincos, half_sin, half_cos, half_tan): Payne-Hanek argument
// reduction in integers (exact, no fused multiply-add needed), then Cephes' minimax
// polynomials on [-pi/4, pi/4].
__VKCL_FN uint __vkcl_2opi(int i) {
  // The bits of 2/pi after the binary point, 32 a word.
  return i == 0 ? 0xa2f9836eu : i == 1 ? 0x4e441529u : i == 2 ? 0xfc2757d1u
       : i == 3 ? 0xf534ddc0u : i == 4 ? 0xdb629599u : i == 5 ? 0x3c439041u
       : i == 6 ? 0xfe5163abu : 0xdebbc561u;
}
// The 32 bits of (hi:lo) >> n, 0 <= n < 32.
__VKCL_FN uint __vkcl_shr2(uint lo, uint hi, uint n) {
  return n == 0u ? lo : (lo >> n) | (hi << (32u - n));
}
// |x| = k * pi/2 + r, |r| <= pi/4, for finite |x| >= pi/4 (ax = |x|): returns r, k in *q.
__VKCL_FN float __vkcl_rem_pio2(float ax, int *q) {
  uint ix = as_uint(ax);
  int s = (int)(ix >> 23) - 150;  // ax = m * 2^s
  uint m = (ix & 0x7fffffu) | 0x800000u;
  // Bits of 2/pi from word j on: those before weigh a multiple of 4 (k mod 4 is enough).
  int j = s >= 2 ? (s - 2) >> 5 : 0;
  int t = s - 32 * j;  // -24 <= t <= 33
  uint w0 = __vkcl_2opi(j + 3), w1 = __vkcl_2opi(j + 2), w2 = __vkcl_2opi(j + 1),
       w3 = __vkcl_2opi(j);
  // p = m * (w3:w2:w1:w0), 5 words; x * 2/pi = p * 2^(t - 128).
  uint p0 = m * w0, c = mul_hi(m, w0);
  uint l1 = m * w1, h1 = mul_hi(m, w1);
  uint p1 = c + l1; c = h1 + (p1 < l1);
  uint l2 = m * w2, h2 = mul_hi(m, w2);
  uint p2 = c + l2; c = h2 + (p2 < l2);
  uint l3 = m * w3, h3 = mul_hi(m, w3);
  uint p3 = c + l3;
  uint p4 = h3 + (p3 < l3);
  // 2 integer bits and 62 fraction bits: (p >> (66 - t)) mod 2^64.
  uint sh = (uint)(66 - t);
  uint b = sh & 31u;
  uint a0 = sh >= 64u ? p2 : p1, a1 = sh >= 64u ? p3 : p2, a2 = sh >= 64u ? p4 : p3;
  uint qlo = __vkcl_shr2(a0, a1, b), qhi = __vkcl_shr2(a1, a2, b);
  int k = (int)(qhi >> 30);
  // The fraction, 64 bits, as a signed value in [-1/2, 1/2).
  uint fhi = (qhi << 2) | (qlo >> 30), flo = qlo << 2;
  int neg = (int)(fhi >> 31);
  if (neg) {
    k += 1;
    flo = ~flo + 1u;
    fhi = ~fhi + (flo == 0u);
  }
  *q = k;
  int e = 0;
  if (fhi == 0u) {
    fhi = flo;
    flo = 0u;
    e = 32;
  }
  uint lz = clz(fhi);
  uint n = lz == 0u ? fhi : (fhi << lz) | (flo >> (32u - lz));
  // r = n * 2^(-32 - lz - e) * pi/2; pi/2 = 0xc90fdaa2 * 2^-31.
  uint rl = n * 0xc90fdaa2u, rh = mul_hi(n, 0xc90fdaa2u);
  float r = convert_float(rh | (uint)(rl != 0u));
  r *= as_float((uint)(127 - 31 - (int)lz - e) << 23);
  return neg ? -r : r;
}
__VKCL_FN float __vkcl_sin_poly(float x) {
  float z = x * x;
  return ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * x + x;
}
__VKCL_FN float __vkcl_cos_poly(float x) {
  float z = x * x;
  return ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z
         - 0.5f * z + 1.0f;
}
__VKCL_FN float __vkcl_tan_poly(float x) {
  float z = x * x;
  return (((((9.38540185543e-3f * z + 3.11992232697e-3f) * z + 2.44301354525e-2f) * z
            + 5.34112807005e-2f) * z + 1.33387994085e-1f) * z + 3.33331568548e-1f) * z * x + x;
}
// |x| reduced: r and the quadrant k (0 for |x| <= pi/4).
__VKCL_FN float __vkcl_reduce(float ax, int *k) {
  *k = 0;
  return ax <= 0x1.921fb4p-1f ? ax : __vkcl_rem_pio2(ax, k);
}
__VKCL_FN float __vkcl_sin(float x) {
  float ax = fabs(x);
  if (!isfinite(x)) return x - x;
  if (ax < 0x1p-12f) return x;
  int k;
  float r = __vkcl_reduce(ax, &k);
  float v = (k & 1) ? __vkcl_cos_poly(r) : __vkcl_sin_poly(r);
  v = (k & 2) ? -v : v;
  return x < 0.0f ? -v : v;
}
__VKCL_FN float __vkcl_cos(float x) {
  float ax = fabs(x);
  if (!isfinite(x)) return x - x;
  if (ax < 0x1p-12f) return 1.0f;
  int k;
  float r = __vkcl_reduce(ax, &k);
  float v = (k & 1) ? __vkcl_sin_poly(r) : __vkcl_cos_poly(r);
  return ((k + 1) & 2) ? -v : v;
}
__VKCL_FN float __vkcl_tan(float x) {
  float ax = fabs(x);
  if (!isfinite(x)) return x - x;
  if (ax < 0x1p-12f) return x;
  int k;
  float r = __vkcl_reduce(ax, &k);
  float v = __vkcl_tan_poly(r);
  v = (k & 1) ? -1.0f / v : v;
  return x < 0.0f ? -v : v;
}
