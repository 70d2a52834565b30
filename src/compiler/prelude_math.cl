__VKCL_FN double __vkcl_atan2_units(double y, double x, int halfturns) {
  // The answer in radians or, with halfturns, in half turns (atan2pi). C99 Annex F's special
  // values first; then fdlibm's atan2: atan of |y/x| (the quotient's rounding moves atan
  // by at most half an ULP), put in its quadrant with pi split in two parts.
  const double pi = halfturns ? 1.0 : 0x1.921fb54442d18p1;
  const double pi_lo = halfturns ? 0.0 : 0x1.1a62633145c07p-53;
  double r;
  if (isnan(x) || isnan(y)) return x + y;
  if (y == 0.0) {
    r = (x > 0.0 || (x == 0.0 && as_long(x) >= 0)) ? 0.0 : pi;
  } else if (isinf(y)) {
    r = isinf(x) ? (x > 0.0 ? 0.25 * pi : 0.75 * pi) : 0.5 * pi;
  } else if (x == 0.0) {
    r = 0.5 * pi;
  } else if (isinf(x)) {
    r = x > 0.0 ? 0.0 : pi;
  } else {
    double z = atan(fabs(y / x));
    if (halfturns) {
      double zh = z * 0x1.45f306dc9c883p-2;
      r = x < 0.0 ? 1.0 - zh : zh;
    } else {
      r = x < 0.0 ? pi - (z - pi_lo) : z;
    }
  }
  return as_long(y) < 0 ? -r : r;
}
__VKCL_FN double __vkcl_atan2(double y, double x) { return __vkcl_atan2_units(y, x, 0); }
__VKCL_FN double __vkcl_atan2pi(double y, double x) { return __vkcl_atan2_units(y, x, 1); }
