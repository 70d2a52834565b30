// Where |x|^y overflows or underflows: +-inf or +-0 (the sign of x for x < 0 and an odd integer
// y, or an odd n for rootn), 2 where the caller is to compute it. `t` is y * log2 |x|; `kind`
// 0 pow, 1 powr, 2 pown, 3 rootn (y the root's n).
__VKCL_FN int __vkcl_pow_outside(double x, double y, double t, double over, double under,
                                 int kind, double *r) {
  int whole = floor(y) == y, odd = whole && fabs(y) < 0x1p53 && ((long)y & 1L) != 0L;
  if (!(x - x == 0.0) || !(y - y == 0.0) || x == 0.0 || (kind == 3 && y == 0.0)) return 0;
  if (!(t > over || t < under)) return 0;
  if (x < 0.0 && (kind == 1 || !whole || (kind == 3 && !odd))) return 0;
  *r = t > 0.0 ? INFINITY : 0.0;
  *r = x < 0.0 && odd ? -*r : *r;
  return 1;
}
// Float pow, powr, pown, rootn in double. libclc's double pow, powr and pown are wrong where
// the double result overflows (powr(4.6e-34f, -9.5f) gives 1.6) or |y * ln x| passes about
// 2^31 (pow(1.3e9f, 1.5e17f) gives 3.6e10): beyond 2^+-300 the float answer is decided here.
__VKCL_FN float __vkcl_pow_in_double(float x, double y, int kind) {
  double dx = (double)x, r, l = log2(fabs(dx));
  if (__vkcl_pow_outside(dx, y, kind == 3 ? l / y : y * l, 300.0, -300.0, kind, &r))
    return (float)r;
  return (float)(kind == 0 ? pow(dx, y) : kind == 1 ? powr(dx, y) : kind == 2 ? pown(dx, (int)y)
                 : rootn(dx, (int)y));
}
// Double pow, powr, pown, rootn: the same where the double answer overflows or underflows
// (pow(3, DBL_MAX) was NaN, pown(5e-324, -1) 1.6).
__VKCL_FN double __vkcl_pow_d(double x, double y, int kind) {
  double r, l = log2(fabs(x));
  if (__vkcl_pow_outside(x, y, kind == 3 ? l / y : y * l, 1024.01, -1075.01, kind, &r)) return r;
  return kind == 0 ? pow(x, y) : kind == 1 ? powr(x, y) : kind == 2 ? pown(x, (int)y)
         : rootn(x, (int)y);
}
