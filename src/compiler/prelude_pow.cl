// Float pow, powr (x < 0 is NaN) and pown in double (kind 0, 1, 2; y holds pown's n exactly).
// libclc's double pow, powr and pown are wrong where the double result overflows
// (powr(4.6e-34f, -9.5f) gives 1.6) or |y * ln x| passes about 2^31 (pow(1.3e9f, 1.5e17f)
// gives 3.6e10). Where |y * log2 |x|| > 300 the float answer is an infinity or a zero, of x's
// sign for x < 0 and an odd integer y (for a non-integer y pow's NaN comes from the double pow).
__VKCL_FN float __vkcl_pow_in_double(float x, double y, int kind) {
  double t = y * log2(fabs((double)x));
  if (isfinite(t) && fabs(t) > 300.0 && (x > 0.0f || (kind != 1 && rint(y) == y))) {
    float r = t > 0.0 ? INFINITY : 0.0f;
    return x < 0.0f && fmod(y, 2.0) != 0.0 ? -r : r;
  }
  double dx = (double)x;
  return (float)(kind == 0 ? pow(dx, y) : kind == 1 ? powr(dx, y) : pown(dx, (int)y));
}
