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
