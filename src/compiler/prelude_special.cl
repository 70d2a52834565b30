// Doubles are classified by arithmetic (x - x is 0 for finite x, x != x for NaN): clspv's
// double isfinite came out wrong beside integer views of the same value (ldexp(inf, n)).
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
// |x| = m * 2^e, m < 2^53 with bit 52 set (finite nonzero x).
__VKCL_FN ulong __vkcl_mant_d(double x, int *e) {
  ulong u = as_ulong(x) & 0x7fffffffffffffffUL;
  int be = (int)(u >> 52);
  ulong m = u & 0xfffffffffffffUL;
  if (be == 0) {
    uint hi = (uint)(m >> 32);
    int lz = (hi != 0u ? (int)clz(hi) : 32 + (int)clz((uint)m)) - 11;
    *e = -1074 - lz;
    return m << lz;
  }
  *e = be - 1075;
  return m | 0x10000000000000UL;
}
// m * 2^e for m < 2^53 and a representable answer.
__VKCL_FN double __vkcl_scale_d(ulong m, int e) {
  int e1 = e / 2;
  return (double)m * as_double((ulong)(e1 + 1023) << 52) * as_double((ulong)(e - e1 + 1023) << 52);
}
// Double fmod (remainder = 0) and remainder (remainder = 1), exactly, in integers: libclc's
// are up to 1.4e17 ULP off when the arguments' magnitudes differ greatly. *q: the low 31 bits
// of the quotient's magnitude (remainder: of the rounded quotient).
__VKCL_FN double __vkcl_fmod_d(double x, double y, int remainder, uint *q) {
  double ax = fabs(x), ay = fabs(y), r;
  *q = 0u;
  if (!(x - x == 0.0) || y != y || y == 0.0) return NAN;  // x inf or NaN, y NaN or 0
  if (!(y - y == 0.0) || x == 0.0) return x;
  int neg = x < 0.0;
  if (ax < ay) {
    if (!remainder || !(ax > ay - ax)) return x;
    *q = 1u;
    r = ay - ax;
    neg = !neg;
  } else {
    int ex, ey;
    ulong mx = __vkcl_mant_d(ax, &ex), my = __vkcl_mant_d(ay, &ey);
    uint n = (uint)(mx / my);
    mx -= (ulong)n * my;
    for (int d = ex - ey; d > 0;) {
      int s = d < 11 ? d : 11;
      mx <<= s;
      ulong k = mx / my;
      mx -= k * my;
      n = (n << s) + (uint)k;
      d -= s;
    }
    if (remainder && (2UL * mx > my || (2UL * mx == my && (n & 1u)))) {
      mx = my - mx;
      n += 1u;
      neg = !neg;
    }
    *q = n & 0x7fffffffu;
    r = __vkcl_scale_d(mx, ey);
    if (r == 0.0) return x * 0x1p-1000 * 0x1p-1000 * 0x1p-1000;  // a zero of x's sign
  }
  return neg ? -r : r;
}
__VKCL_FN double __vkcl_fmod2_d(double x, double y, int remainder) {
  uint q;
  return __vkcl_fmod_d(x, y, remainder, &q);
}
// Double remquo with a private quotient (quo has the sign of x / y).
__VKCL_FN double __vkcl_remquo_d(double x, double y, int *q) {
  uint m;
  double r = __vkcl_fmod_d(x, y, 1, &m);
  *q = (x < 0.0) != (y < 0.0) ? -(int)m : (int)m;
  return r;
}
// Double ldexp: libclc's ldexp(inf, n) and ldexp(NaN, n) are finite, and clspv crashes on its
// vector forms. m * 2^(e + n), rounded once (the first factor keeps it normal).
__VKCL_FN double __vkcl_ldexp_d(double x, int n) {
  if (!(x - x == 0.0) || x == 0.0) return x + x;  // inf, NaN, zeros
  int e;
  long m = (long)__vkcl_mant_d(x, &e);
  e += clamp(n, -2400, 2400);
  e = clamp(e, -1200, 1100);
  int e1 = e / 2;
  return (double)(x < 0.0 ? -m : m) * as_double((ulong)(e1 + 1023) << 52)
         * as_double((ulong)(e - e1 + 1023) << 52);
}
// Double frexp: libclc's frexp(inf) is 0.5.
__VKCL_FN double __vkcl_frexp_d(double x, int *e) {
  if (!(x - x == 0.0)) {
    *e = 0;
    return x + x;
  }
  return frexp(x, e);
}
// modf of our own for finite x too: libclc's (through clspv's double copysign) gave
// modf(1.0) = 1 once beside this one. Zeros of x's sign from an underflowing product.
__VKCL_FN double __vkcl_modf_d(double x, double *ip) {
  *ip = x;
  if (x != x) return x;
  if (!(x - x == 0.0)) return 1.0 / x;
  double z = x * 0x1p-1000 * 0x1p-1000 * 0x1p-1000;
  if (!(fabs(x) < 0x1p52)) return z;
  double i = (double)(long)x, f = x - i;
  *ip = i == 0.0 ? z : i;
  return f == 0.0 ? z : f;
}
// Double trunc, rint and round from floor and ceil: lavapipe (Mesa 25.0.7 on an AMD EPYC with
// AVX2) gave Trunc(2^31 + 0.5) = 2^31 + 0.5 and RoundEven(3.5) = 3 (GLSL.std.450's, which
// clspv makes of them). Zeros keep x's sign through floor and ceil, or as a constant (lavapipe
// folds x * 0.0 to +0).
__VKCL_FN double __vkcl_trunc_d(double x) { return x < 0.0 ? ceil(x) : floor(x); }
__VKCL_FN double __vkcl_rint_d(double x) {
  double f = floor(x), d = x - f;
  double r = d > 0.5 || (d == 0.5 && floor(f * 0.5) * 2.0 != f) ? f + 1.0 : f;
  return r == 0.0 && x < 0.0 ? -0.0 : r;
}
__VKCL_FN double __vkcl_round_d(double x) {
  double t = __vkcl_trunc_d(x);
  return fabs(x - t) >= 0.5 ? t + (x < 0.0 ? -1.0 : 1.0) : t;
}
