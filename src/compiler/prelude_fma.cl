// Double fma correctly rounded, in integers: lavapipe's SPIR-V Fma for doubles rounds twice
// (an OpMul then an OpAdd, which Vulkan allows), 16 ULP off the fused result. The product's
// 106 bits and c's 53 are put in 128-bit integers (ulong pairs) with their leading bits at bit
// 125, the smaller aligned to the larger (what is shifted out is kept as a sticky bit 0; a
// shift of 2 or more leaves at least 70 bits below the rounding point, and shorter ones lose
// nothing), added or subtracted exactly, and rounded once to nearest even, to a normal, a
// subnormal or infinity. Special values and zeros are decided first, from the bits.
#pragma OPENCL FP_CONTRACT OFF

// The leading zeros of a nonzero 64-bit value (two 32-bit clz: no 64-bit one is assumed).
__VKCL_FN int __vkcl_clz64(ulong x) {
  uint hi = (uint)(x >> 32);
  return hi != 0u ? (int)clz(hi) : 32 + (int)clz((uint)x);
}
// The leading zeros of a nonzero (hi, lo).
__VKCL_FN int __vkcl_clz128(ulong hi, ulong lo) {
  return hi != 0UL ? __vkcl_clz64(hi) : 64 + __vkcl_clz64(lo);
}
// (hi, lo) <<= n, 0 <= n < 128.
__VKCL_FN void __vkcl_shl128(ulong *hi, ulong *lo, int n) {
  if (n == 0) return;
  if (n >= 64) {
    *hi = *lo << (n - 64);
    *lo = 0UL;
  } else {
    *hi = (*hi << n) | (*lo >> (64 - n));
    *lo <<= n;
  }
}
// (hi, lo) >>= n, 0 <= n; the bits shifted out ORed into bit 0 (sticky).
__VKCL_FN void __vkcl_shr128_sticky(ulong *hi, ulong *lo, int n) {
  ulong h = *hi, l = *lo;
  if (n == 0) return;
  if (n >= 128) {
    *hi = 0UL;
    *lo = (h | l) != 0UL ? 1UL : 0UL;
  } else if (n >= 64) {
    ulong lost = l | (n > 64 ? h << (128 - n) : 0UL);
    *lo = (n > 64 ? h >> (n - 64) : h) | (lost != 0UL ? 1UL : 0UL);
    *hi = 0UL;
  } else {
    ulong lost = l << (64 - n);
    *lo = (l >> n) | (h << (64 - n)) | (lost != 0UL ? 1UL : 0UL);
    *hi = h >> n;
  }
}
// The 128-bit product of two 64-bit values, from 32-bit halves.
__VKCL_FN void __vkcl_mul64(ulong a, ulong b, ulong *hi, ulong *lo) {
  ulong a0 = a & 0xffffffffUL, a1 = a >> 32, b0 = b & 0xffffffffUL, b1 = b >> 32;
  ulong p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  ulong mid = (p00 >> 32) + (p01 & 0xffffffffUL) + (p10 & 0xffffffffUL);
  *lo = (mid << 32) | (p00 & 0xffffffffUL);
  *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
// A finite nonzero double's significand (below 2^53) and the exponent of its last bit.
__VKCL_FN ulong __vkcl_fma_mant(ulong u, int *e) {
  int be = (int)((u >> 52) & 0x7ffUL);
  ulong f = u & 0xfffffffffffffUL;
  *e = (be == 0 ? 1 : be) - 1075;
  return be == 0 ? f : f | 0x10000000000000UL;
}
// Bit k of (hi, lo), 0 <= k < 128.
__VKCL_FN int __vkcl_bit128(ulong hi, ulong lo, int k) {
  return (int)((k >= 64 ? hi >> (k - 64) : lo >> k) & 1UL);
}
// Whether a bit below k of (hi, lo) is set, 0 <= k <= 128.
__VKCL_FN int __vkcl_any_below128(ulong hi, ulong lo, int k) {
  if (k == 0) return 0;
  if (k >= 128) return (hi | lo) != 0UL;
  if (k >= 64) return lo != 0UL || (k > 64 && (hi << (128 - k)) != 0UL);
  return (lo << (64 - k)) != 0UL;
}
// (hi, lo) * 2^e with the sign `neg`, rounded once to nearest even; (hi, lo) nonzero and
// below 2^127.
__VKCL_FN double __vkcl_round128(ulong hi, ulong lo, int e, ulong neg) {
  int top = 127 - __vkcl_clz128(hi, lo);
  // The exponent of the result's last bit: 53 bits, or the subnormals' 2^-1074.
  int q = max(e + top - 52, -1074);
  int s = q - e;
  ulong m;
  if (s <= 0) {
    m = lo << -s;  // exact: below 2^53
  } else {
    int up = s <= 128 && __vkcl_bit128(hi, lo, s - 1)
             && (__vkcl_any_below128(hi, lo, s - 1) || (s < 128 && __vkcl_bit128(hi, lo, s)));
    ulong h = hi, l = lo;
    if (s >= 128) {
      l = 0UL;
    } else if (s >= 64) {
      l = h >> (s - 64);
    } else {
      l = (l >> s) | (h << (64 - s));
    }
    m = l + (up ? 1UL : 0UL);
  }
  // m < 2^52 only at q = -1074 (subnormal); m = 2^53 after a carry: the field arithmetic
  // below gives the next binade, and infinity at the top.
  ulong bits = q > 971 ? 0x7ff0000000000000UL : ((ulong)(q + 1074) << 52) + m;
  if (bits > 0x7ff0000000000000UL) bits = 0x7ff0000000000000UL;
  return as_double(bits | (neg << 63));
}
__VKCL_FN double __vkcl_fma_d(double a, double b, double c) {
  ulong ua = as_ulong(a), ub = as_ulong(b), uc = as_ulong(c);
  ulong inf = 0x7ff0000000000000UL, mag = 0x7fffffffffffffffUL;
  ulong pneg = (ua ^ ub) >> 63, cneg = uc >> 63;
  // An infinite or NaN factor: the product is exact (inf, or NaN for inf * 0).
  if ((ua & inf) == inf || (ub & inf) == inf) return a * b + c;
  // c infinite or NaN, the product finite.
  if ((uc & inf) == inf) return c;
  int pzero = (ua & mag) == 0UL || (ub & mag) == 0UL;
  if (pzero && (uc & mag) == 0UL) return as_double((pneg & cneg) << 63);  // -0 only if both
  if (pzero) return c;
  // A zero c: the product rounded once (one that underflows keeps its sign).
  if ((uc & mag) == 0UL) return a * b;
  int ea, eb, ec;
  ulong ma = __vkcl_fma_mant(ua, &ea), mb = __vkcl_fma_mant(ub, &eb);
  ulong ph, pl, ch = 0UL, cl = __vkcl_fma_mant(uc, &ec);
  __vkcl_mul64(ma, mb, &ph, &pl);
  // Both with their leading bit at bit 125.
  int sp = __vkcl_clz128(ph, pl) - 2, sc = __vkcl_clz128(ch, cl) - 2;
  __vkcl_shl128(&ph, &pl, sp);
  __vkcl_shl128(&ch, &cl, sc);
  int ep = ea + eb - sp;
  ec -= sc;
  // x: the one with the larger exponent; y aligned to it.
  int pbig = ep >= ec;
  ulong xh = pbig ? ph : ch, xl = pbig ? pl : cl, yh = pbig ? ch : ph, yl = pbig ? cl : pl;
  ulong xneg = pbig ? pneg : cneg, yneg = pbig ? cneg : pneg;
  int e = pbig ? ep : ec;
  __vkcl_shr128_sticky(&yh, &yl, pbig ? ep - ec : ec - ep);
  ulong rh, rl, neg = xneg;
  if (xneg == yneg) {
    rl = xl + yl;
    rh = xh + yh + (rl < xl ? 1UL : 0UL);
  } else {
    if (xh < yh || (xh == yh && xl < yl)) {
      ulong th = xh, tl = xl;
      xh = yh;
      xl = yl;
      yh = th;
      yl = tl;
      neg = yneg;
    }
    rl = xl - yl;
    rh = xh - yh - (xl < yl ? 1UL : 0UL);
    if ((rh | rl) == 0UL) return 0.0;  // exact cancellation: +0
  }
  return __vkcl_round128(rh, rl, e, neg);
}
#pragma OPENCL FP_CONTRACT ON
