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
#pragma OPENCL FP_CONTRACT ON
