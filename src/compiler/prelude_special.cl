// Double sinpi, cospi, tanpi with the zeros OpenCL C gives them (libclc's: sinpi(1) is -0,
// cospi(0.5) is -0, tanpi(1) is +0). A zero of x's sign comes from a product that underflows
// (clspv gives +0 for x * 0 with x < 0, and a sign test would become its wrong copysign).
__VKCL_FN double __vkcl_signed_zero(double x) { return x * 0x1p-1000 * 0x1p-1000 * 0x1p-1000; }
__VKCL_FN double __vkcl_sinpi_d(double x) {
  double r = sinpi(x);
  return r == 0.0 ? __vkcl_signed_zero(x) : r;
}
__VKCL_FN double __vkcl_cospi_d(double x) {
  double r = cospi(x);
  return r == 0.0 ? 0.0 : r;
}
__VKCL_FN double __vkcl_tanpi_d(double x) {
  double r = tanpi(x);
  // A zero only at integers n: n's sign for even n, the other for odd (from 2^53 on, even).
  int odd = fabs(x) < 0x1p53 && ((long)x & 1L) != 0L;
  return r == 0.0 ? __vkcl_signed_zero(odd ? -x : x) : r;
}
// Double cbrt: fdlibm's (libclc's gives NaN for cbrt(inf) and is wrong near 9e307): a first
// guess from the exponent, a polynomial to 23 bits, one Newton step (below 0.667 ULP).
__VKCL_FN double __vkcl_cbrt_d(double x) {
  ulong u = as_ulong(x);
  uint sign = (uint)(u >> 32) & 0x80000000u, hx = (uint)(u >> 32) & 0x7fffffffu;
  if (hx >= 0x7ff00000u) return x + x;
  if ((u << 1) == 0UL) return x;
  double t;
  if (hx < 0x00100000u) {  // subnormal: scaled by 2^54 first
    uint high = (uint)(as_ulong(x * 0x1p54) >> 32) & 0x7fffffffu;
    t = as_double((ulong)(sign | (high / 3u + 696219795u)) << 32);
  } else {
    t = as_double((ulong)(sign | (hx / 3u + 715094163u)) << 32);
  }
  double r = (t * t) * (t / x);
  t = t * ((1.87595182427177009643 + r * (-1.88497979543377169875 + r * 1.621429720105354466140))
           + ((r * r) * r) * (-0.758397934778766047437 + r * 0.145996192886612446982));
  t = as_double((as_ulong(t) + 0x80000000UL) & 0xffffffffc0000000UL);
  double s = t * t;
  r = x / s;
  double w = t + t;
  r = (r - t) / (w + r);
  return t + t * r;
}
