// Double tgamma: libclc's is 1261 ULP off near -158.8 (its reflection through exp, and 1 - x
// rounded). Stirling's series from 12 on, with y^(y - 1/2) from pow (split in two halves from
// 140 on, where it alone overflows); below 12 the recurrence up to 12 with the product and the
// shifted argument kept exact (double-double); below -12 the reflection through Γ(-x), whose
// argument is exact, and sinpi. Needs prelude_exp.cl (exp, expm1, the exact product).
#pragma OPENCL FP_CONTRACT OFF
// hi + lo = a + b exactly (Knuth's two-sum).
__VKCL_FN double __vkcl_two_sum(double a, double b, double *lo) {
  double s = a + b, bb = s - a;
  *lo = (a - (s - bb)) + (b - bb);
  return s;
}
// c with Γ(y + yl) = y^(y - 1/2) e^-y c for y >= 12 (or a little below), |yl| <= ulp(y):
// c = sqrt(2 pi) e^(S + yl ψ(y)), S Stirling's series to 8 terms (the 9th is below 1e-19 from
// 12 on), ψ(y) to a relative 1e-6 (yl ψ(y) is below 3e-15).
__VKCL_FN double __vkcl_gamma_c(double y, double yl) {
  double r = 1.0 / y, z = r * r;
  double s = r * (0x1.5555555555555p-4 + z * (-0x1.6c16c16c16c17p-9 + z * (0x1.a01a01a01a01ap-11
             + z * (-0x1.3813813813814p-11 + z * (0x1.b951e2b18ff23p-11
             + z * (-0x1.f6ab0d9993c7dp-10 + z * (0x1.a41a41a41a41ap-8
             + z * -0x1.e4286cb0f5398p-6)))))));
  double psi = log(y) - 0.5 * r - z * 0x1.5555555555555p-4;
  double m = __vkcl_expm1_d(s + yl * psi);
  // sqrt(2 pi) as a double pair: c rounded once.
  return 0x1.40d931ff62706p+1 + (-0x1.a6a0d6f814637p-53 + 0x1.40d931ff62706p+1 * m);
}
// Γ(y + yl) for 12 <= y <= 172 (inf where it overflows).
__VKCL_FN double __vkcl_gamma_big(double y, double yl) {
  double c = __vkcl_gamma_c(y, yl) * __vkcl_exp_d(-y);
  if (y < 140.0) return powr(y, y - 0.5) * c;
  double h = powr(y, 0.5 * y - 0.25);
  return (h * c) * h;
}
__VKCL_FN double __vkcl_tgamma_d(double x) {
  if (x != x) return x + x;
  if (!(x - x == 0.0)) return x > 0.0 ? x : NAN;  // +inf; -inf is NaN
  if (fabs(x) < 0x1p-54) return 1.0 / x;  // 1/x - γ + ...: the zeros' infinities too
  if (x < 0.0 && x == floor(x)) return NAN;
  if (x >= 12.0) return x > 172.0 ? INFINITY : __vkcl_gamma_big(x, 0.0);
  if (x <= -12.0) {
    // Γ(x) = -pi / (x sinpi(x) Γ(-x)); its sign is sinpi(x)'s. From 190 on it underflows.
    double y = -x, s = sinpi(x);
    if (y > 190.0) return s * 0x1p-1000 * 0x1p-1000 * 0x1p-1000;  // a zero of s's sign
    double r = -0x1.921fb54442d18p+1 / (x * s);
    double c = __vkcl_gamma_c(y, 0.0) * __vkcl_exp_d(-y);
    if (y < 140.0) return r / (powr(y, y - 0.5) * c);
    double h = powr(y, 0.5 * y - 0.25);
    return (r / h) / (h * c);
  }
  // Γ(x) = Γ(x + n) / (x (x + 1) ... (x + n - 1)), x + n >= 12 (as yh + yl), the product as
  // ph + pl: each factor exact (two-sum), each step's product exact (Dekker) to 2^-104.
  int n = (int)ceil(12.0 - x);
  double yl, yh = __vkcl_two_sum(x, (double)n, &yl);
  double ph = 1.0, pl = 0.0;
  for (int k = 0; k < n; k++) {
    double fl, fh = __vkcl_two_sum(x, (double)k, &fl);
    double el, p = __vkcl_mul_exact(ph, fh, &el);
    el += ph * fl + pl * fh;
    ph = p + el;
    pl = el - (ph - p);
  }
  double q = __vkcl_gamma_big(yh, yl) / ph;
  return q - q * (pl / ph);
}
// Double lgamma and lgamma_r: libclc's (fdlibm's reflection, log(pi / |x sinpi(x)|) minus
// lgamma(-x)) cancels near the zeros of lgamma below -2 (706 ULP near -2.7477, 58 at -pi).
// There, from -160 on (below, the zeros are closer to the poles than any double), |Γ(x)| is
// 1 / D, D = |x (x + 1) ... (x + n - 1)| / Γ(x + n) with x + n in [1, 2): the product in
// double-double (every factor is exact for x <= -2; Dekker's product, below 2^996), 1 / Γ on
// [1, 2) a Taylor series about 3/2 to 2^-100, also in double-double; lgamma = -log(D) =
// -(log(dh) + dl / dh), and log of a double near 1 is right to its own ULP. Elsewhere
// libclc's (3.2 ULP at most in a sweep).
// One Horner step of a double-double s = s * t + (h + l).
#define __VKCL_RG(h, l) { double pl, p = __vkcl_mul_exact(sh, t, &pl); pl += sl * t; \
  double e, s1 = __vkcl_two_sum(p, h, &e); e += pl + l; sh = s1 + e; sl = e - (sh - s1); }
// 1 / Γ(3/2 + t) for |t| <= 1/2 as hi + *lo (the 14 smallest terms in double).
__VKCL_FN double __vkcl_rgamma_dd(double t, double *lo) {
  double sh = 0x1.4ab9982fd1a94p-78, sl = 0.0;
  sh = sh * t + 0x1.ede4f022c20bep-76;
  sh = sh * t + -0x1.d4cb3833bf353p-71;
  sh = sh * t + 0x1.2c26f43d2f93bp-67;
  sh = sh * t + -0x1.3a33f9f37024dp-65;
  sh = sh * t + -0x1.321de0ead6e65p-62;
  sh = sh * t + 0x1.ae24f2b5b8155p-58;
  sh = sh * t + -0x1.c026ec092c55cp-55;
  sh = sh * t + 0x1.2ce6a55b0bacfp-53;
  sh = sh * t + 0x1.0d119939da229p-49;
  sh = sh * t + -0x1.f62a3cca228f5p-46;
  sh = sh * t + 0x1.7d99011781f7ep-43;
  sh = sh * t + -0x1.7981d5de4114fp-44;
  sh = sh * t + -0x1.19ecf32590d5ap-37;
  __VKCL_RG(0x1.480c1c6ed85cap-34, 0x1.8236936ee97dcp-89);
  __VKCL_RG(-0x1.26b8a37a11d9ep-32, -0x1.d3b206af15f35p-86);
  __VKCL_RG(-0x1.00033debf4313p-30, -0x1.5824f0546a36cp-85);
  __VKCL_RG(0x1.25d5da9f3fa35p-26, 0x1.1726e6ce24cd4p-83);
  __VKCL_RG(-0x1.7ed587ef32209p-24, -0x1.199d35f0e6a4dp-78);
  __VKCL_RG(0x1.f1b936cb1c16ap-25, -0x1.cd66c34dfcaf3p-81);
  __VKCL_RG(0x1.216694b7d8eacp-19, 0x1.a564e6e95c76ap-74);
  __VKCL_RG(-0x1.d24ca6f39ac53p-17, 0x1.0453168a0ade2p-72);
  __VKCL_RG(0x1.a963c6a36cac3p-16, 0x1.27d24e73572b6p-71);
  __VKCL_RG(0x1.3f845ff3a6edbp-13, -0x1.9c0965ba22071p-67);
  __VKCL_RG(-0x1.232bd878ffabep-10, -0x1.cc980684238d7p-64);
  __VKCL_RG(0x1.15f7f060ff8c2p-9, 0x1.4566d5b230f3bp-63);
  __VKCL_RG(0x1.b16203e5e344dp-8, 0x1.a5e111d653d7ap-62);
  __VKCL_RG(-0x1.5955cc39724a3p-5, 0x1.c9214fd029b30p-59);
  __VKCL_RG(0x1.a18540be32ca7p-5, 0x1.cd20ad6739d04p-59);
  __VKCL_RG(0x1.669be41a93895p-3, -0x1.8930f86069ecfp-57);
  __VKCL_RG(-0x1.0da5a671c048ap-1, -0x1.c2fd1a63503aep-58);
  __VKCL_RG(-0x1.514d3d90584b3p-5, -0x1.f217f14a98ef3p-59);
  __VKCL_RG(0x1.20dd750429b6dp+0, 0x1.1ae3a914fed80p-56);
  *lo = sl;
  return sh;
}
#undef __VKCL_RG
__VKCL_FN double __vkcl_lgamma_r_d(double x, int *s) {
  if (!(x > -160.0 && x < -2.0) || x == floor(x)) return lgamma_r(x, s);
  int n = (int)floor(2.0 - x);
  double ph = 1.0, pl = 0.0;
  for (int k = 0; k < n; k++) {
    double f = x + (double)k;  // exact: |f| <= |x| and f is a multiple of x's ULP
    double el, p = __vkcl_mul_exact(ph, f, &el);
    el += pl * f;
    ph = p + el;
    pl = el - (ph - p);
  }
  *s = ph < 0.0 ? -1 : 1;
  // D with the product's sign: lgamma = -log|D|, |dh + dl| = |dh| (1 + dl / dh).
  double rl, rh = __vkcl_rgamma_dd(x + (double)n - 1.5, &rl);
  double dl, dh = __vkcl_mul_exact(ph, rh, &dl);
  dl += ph * rl + pl * rh;
  double d = dh + dl;
  dl -= d - dh;
  return -(log(fabs(d)) + dl / d);
}
__VKCL_FN double __vkcl_lgamma_d(double x) {
  int s;
  return __vkcl_lgamma_r_d(x, &s);
}
#pragma OPENCL FP_CONTRACT ON
