// Double exp, exp10, expm1 and cosh: fdlibm's (libclc's reductions assume a fused fma:
// exp was 671 ULP off for large negative arguments, expm1 561 near 656, exp10 497, cosh 565).
// The reductions subtract k * ln2 split in a high part of 32 bits (k * ln2_hi is exact) and a
// low part; no fused multiply-add is needed. No contraction: the error terms are written
// for separately rounded operations.
#pragma OPENCL FP_CONTRACT OFF
// 2^k * exp(hi - lo), |hi - lo| <= ln2 / 2 (fdlibm's exp kernel).
__VKCL_FN double __vkcl_exp_kernel(double hi, double lo, int k) {
  double x = hi - lo, t = x * x;
  double c = x - t * (1.66666666666666019037e-01 + t * (-2.77777777770155933842e-03
             + t * (6.61375632143793436117e-05 + t * (-1.65339022054652515390e-06
             + t * 4.13813679705723846039e-08))));
  double y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi);
  if (k > 1023) return y * 2.0 * 0x1p1023;
  if (k >= -1021) return y * as_double((ulong)(k + 1023) << 52);
  return y * as_double((ulong)(k + 2023) << 52) * 0x1p-1000;
}
__VKCL_FN double __vkcl_exp_d(double x) {
  if (x != x) return x + x;
  if (x > 7.09782712893383973096e+02) return INFINITY;
  if (x < -7.45133219101941108420e+02) return 0.0;
  if (fabs(x) < 0x1p-28) return 1.0 + x;
  int k = (int)(1.44269504088896338700e+00 * x + (x < 0.0 ? -0.5 : 0.5));
  double t = (double)k;
  return __vkcl_exp_kernel(x - t * 6.93147180369123816490e-01, t * 1.90821492927058770002e-10, k);
}
// hi + lo = a * b exactly (Dekker's product; |a|, |b| far from overflow).
__VKCL_FN double __vkcl_mul_exact(double a, double b, double *lo) {
  double p = a * b;
  double ca = 134217729.0 * a, cb = 134217729.0 * b;
  double ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh;
  *lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return p;
}
__VKCL_FN double __vkcl_exp10_d(double x) {
  if (x != x) return x + x;
  if (x > 308.25471555991675) return INFINITY;
  if (x < -323.60724533877976) return 0.0;
  if (fabs(x) < 0x1p-60) return 1.0 + x * 2.302585092994046;
  // x = k * log10(2) + y, y = yh + yl; 10^x = 2^k * exp(y * ln10).
  int k = (int)(3.321928094887362 * x + (x < 0.0 ? -0.5 : 0.5));
  double t = (double)k;
  double yh = x - t * 0x1.34413508p-2;  // log10(2)'s high 32 bits: an exact product
  double yl = -t * 0x1.f79fef311f12bp-34;
  double s = yh + yl;
  yl -= s - yh;
  yh = s;
  // z = (yh + yl) * ln10 as zh + zl.
  double zl, zh = __vkcl_mul_exact(yh, 0x1.26bb1bbb55516p1, &zl);
  zl += yh * -0x1.f48ad494ea3e9p-53 + yl * 0x1.26bb1bbb55516p1;
  s = zh + zl;
  zl -= s - zh;
  return __vkcl_exp_kernel(s, -zl, k);
}
__VKCL_FN double __vkcl_expm1_d(double x) {
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  double ax = fabs(x), hi, lo, c = 0.0, t, e, y;
  int k = 0;
  if (x != x) return x + x;
  if (ax >= 38.816242111356935) {  // 56 ln2
    if (x > 7.09782712893383973096e+02) return INFINITY;
    if (x < 0.0) return -1.0;
  }
  if (ax > 0.34657359027997264) {  // ln2 / 2
    if (ax < 1.0397207708399179) {  // 1.5 ln2
      hi = x < 0.0 ? x + ln2_hi : x - ln2_hi;
      lo = x < 0.0 ? -ln2_lo : ln2_lo;
      k = x < 0.0 ? -1 : 1;
    } else {
      k = (int)(1.44269504088896338700e+00 * x + (x < 0.0 ? -0.5 : 0.5));
      t = (double)k;
      hi = x - t * ln2_hi;
      lo = t * ln2_lo;
    }
    x = hi - lo;
    c = (hi - x) - lo;
  } else if (ax < 0x1p-54) {
    return x;
  }
  double hfx = 0.5 * x, hxs = x * hfx;
  double r1 = 1.0 + hxs * (-3.33333333333331316428e-02 + hxs * (1.58730158725481460165e-03
              + hxs * (-7.93650757867487942473e-05 + hxs * (4.00821782732936239552e-06
              + hxs * -2.01099218183624371326e-07))));
  t = 3.0 - r1 * hfx;
  e = hxs * ((r1 - t) / (6.0 - x * t));
  if (k == 0) return x - (x * e - hxs);
  e = (x * (e - c) - c);
  e -= hxs;
  if (k == -1) return 0.5 * (x - e) - 0.5;
  if (k == 1) return x < -0.25 ? -2.0 * (e - (x + 0.5)) : 1.0 + 2.0 * (x - e);
  if (k <= -2 || k > 56) {
    y = 1.0 - (e - x);
    y = k == 1024 ? y * 2.0 * 0x1p1023 : y * as_double((ulong)(k + 1023) << 52);
    return y - 1.0;
  }
  double twopk = as_double((ulong)(k + 1023) << 52);
  if (k < 20) {
    t = as_double((ulong)(0x3ff00000u - (0x200000u >> k)) << 32);  // 1 - 2^-k
    y = t - (e - x);
  } else {
    t = as_double((ulong)(0x3ff - k) << 52);  // 2^-k
    y = x - (e + t);
    y += 1.0;
  }
  return y * twopk;
}
__VKCL_FN double __vkcl_cosh_d(double x) {
  double ax = fabs(x);
  if (x != x) return x * x;
  if (ax < 0.34657359027997264) {
    double t = __vkcl_expm1_d(ax), w = 1.0 + t;
    return ax < 0x1p-55 ? w : 1.0 + (t * t) / (w + w);
  }
  if (ax < 22.0) {
    double t = __vkcl_exp_d(ax);
    return 0.5 * t + 0.5 / t;
  }
  if (ax < 7.09782712893383973096e+02) return 0.5 * __vkcl_exp_d(ax);
  if (ax <= 710.4758600739439) {
    double w = __vkcl_exp_d(0.5 * ax);
    return (0.5 * w) * w;
  }
  return INFINITY;
}
// Double erfc for x >= 1/0.35 (fdlibm's rational approximation over exp; libclc's was 591
// ULP off near 23, its exp's error); below, libclc's (within its bound).
__VKCL_FN double __vkcl_erfc_d(double x) {
  if (!(x >= 2.857142857142857)) return erfc(x);
  if (x >= 28.0) return 0.0;
  double s = 1.0 / (x * x);
  double r = -9.86494292470009928597e-03 + s * (-7.99283237680523006574e-01
             + s * (-1.77579549177547519889e+01 + s * (-1.60636384855821916062e+02
             + s * (-6.37566443368389627722e+02 + s * (-1.02509513161107724954e+03
             + s * -4.83519191608651397019e+02)))));
  double q = 1.0 + s * (3.03380607434824582924e+01 + s * (3.25792512996573918826e+02
             + s * (1.53672958608443695994e+03 + s * (3.19985821950859553908e+03
             + s * (2.55305040643316442583e+03 + s * (4.74528541206955367215e+02
             + s * -2.24409524465858183362e+01))))));
  double z = as_double(as_ulong(x) & 0xffffffff00000000UL);
  return __vkcl_exp_d(-z * z - 0.5625) * __vkcl_exp_d((z - x) * (z + x) + r / q) / x;
}
#pragma OPENCL FP_CONTRACT ON
