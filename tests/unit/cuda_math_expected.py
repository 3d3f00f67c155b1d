#!/usr/bin/env python3
"""Expected results of the CUDA intrinsic models (src/lib/kernel/abl_cuda_math.c) for
tests/unit/test_cuda_math.c, computed without the library: exact rationals (fractions, mpmath at 300
bits for 2^x) rounded by the integer rounder below, and numpy's own float32/float16 arithmetic where
numpy has the operation (np.float32 products, np.float16 conversion and products).

The semantics modelled (NVIDIA's documentation; abl_cuda_math.h):
  ftz(v)        |v| < 2^-126 -> 0 (same sign)                       PTX .ftz
  ex2(x)        ftz(RN32(2^ftz(x)))                                 ex2.approx.ftz.f32, taken as correctly rounded
  expf(x)       ex2(ftz(RN32(x * RN32(log2 e))))                    __expf (expf under -use_fast_math)
  rcp(y)        ftz(RN32(1 / ftz(y)))                               rcp.approx.ftz.f32
  fdividef(x,y) ftz(RN32(x * rcp(y)))                               __fdividef: 0 for 2^126 < |y| < 2^128
  f2h, f2bf     RN into fp16 / bf16, subnormals kept                __float2half_rn, __float2bfloat16_rn
  hmul, hfma    RN16(a b), RN16(a b + c) exactly, subnormals kept   __hmul, __hfma (mul.rn.f16, fma.rn.f16)

Usage: python3 tests/unit/cuda_math_expected.py > tests/unit/cuda_math_expected.h
       cuda_math_expected.py --check tests/unit/cuda_math_expected.h   (CTest: the committed header is
       what this script writes; exit 1 if not)
"""
import io
import struct
import sys
from fractions import Fraction

import mpmath
import numpy as np

mpmath.mp.prec = 300


def rn(x, p, emin, maxv):
    """Round a Fraction to nearest even with p bits, minimum exponent emin (gradual underflow)."""
    if x == 0:
        return Fraction(0)
    s = -1 if x < 0 else 1
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    qe = max(e - p + 1, emin - p + 1)
    scaled = a / Fraction(2) ** qe
    q, r = divmod(scaled.numerator, scaled.denominator)
    if 2 * r > scaled.denominator or (2 * r == scaled.denominator and q % 2 == 1):
        q += 1
    v = Fraction(q) * Fraction(2) ** qe
    if v > maxv:
        return None   # overflow (not used by the cases)
    return s * v


FMAX = Fraction(2) ** 127 * (2 - Fraction(2) ** -23)


def rn32(x):
    return rn(x, 24, -126, FMAX)


def ftz(x):
    return Fraction(0) if abs(x) < Fraction(2) ** -126 else x


def f32(v):
    return Fraction(float(np.float32(v)))


def bits(x):
    return struct.unpack('<I', struct.pack('<f', float(x)))[0]


def exact(f):
    return Fraction(float(f))


def ex2(x):
    x = ftz(x)
    m = mpmath.power(2, mpmath.mpf(x.numerator) / x.denominator)
    man, exp = mpmath.mpf(m).man_exp
    lo = rn32(Fraction(int(man)) * Fraction(2) ** int(exp))
    m2 = mpmath.power(2, mpmath.mpf(x.numerator) / x.denominator) * (1 + mpmath.mpf(2) ** -250)
    man2, exp2 = mpmath.mpf(m2).man_exp
    assert rn32(Fraction(int(man2)) * Fraction(2) ** int(exp2)) == lo, "rounding undecided"
    return ftz(lo)


L2E = np.float32(1.4426950408889634)


def expf(x):
    y = np.float32(x) * L2E   # numpy: the IEEE binary32 product (gradual underflow), then the flush
    return ex2(ftz(exact(y)))


def rcp(y):
    y = ftz(y)
    return ftz(rn32(1 / y))


def fdividef(x, y):
    return ftz(rn32(x * rcp(y)))


H16MAX = Fraction(65504)


def rn16(x):
    return rn(x, 11, -14, H16MAX)


def rnbf(x):
    return rn(x, 8, -126, Fraction(2) ** 127 * (2 - Fraction(2) ** -7))


EX2_IN = [0.0, 1.0, -1.0, 0.5, -0.5, -126.0, -126.5, -125.99999, -127.0, -149.0, -10.3, 3.7, -86.3,
          -125.25, float.fromhex('0x1.0p-130')]
EXPF_IN = [0.0, -1.0, -2.0794, -10.0, -87.0, -87.33, -87.3365, -87.34, -88.0, -103.0, -0.6931,
           -17.328679, -15.249, 1.5]
RCP_IN = [1.0, 3.0, -7.0, 2.0 ** 125, 1.5 * 2.0 ** 125, 2.0 ** 126, 1.5 * 2.0 ** 126, 2.0 ** 127,
          1.25 * 2.0 ** -120]
DIV_IN = [(1.0, 3.0), (1.0, 1.000001), (2.0, 1.5 * 2.0 ** 126), (1.0e30, 2.0 ** 127), (5.0, 2.0 ** 126),
          (1.0, 1.0 + 1e-6), (float.fromhex('0x1.0p-100'), float.fromhex('0x1.0p30')), (7.0, 0.1)]
H_IN = [1.0, float.fromhex('0x1.0p-25'), float.fromhex('0x1.8p-25'), float.fromhex('0x1.0p-24'), float.fromhex('0x1.0p-26'), 3.0e-8, 65504.0, 65519.0, 1.0 / 3.0,
        float.fromhex('0x1.002p0'), float.fromhex('0x1.006p0'), -float.fromhex('0x1.0p-20'), 6.1e-5, float.fromhex('0x1.ffcp-15')]
BF_IN = [1.0, 1.0 / 3.0, float.fromhex('0x1.0p-130'), float.fromhex('0x1.01p0'), float.fromhex('0x1.03p0'), float.fromhex('0x1.0p-133'), float.fromhex('0x1.0p-134'), float.fromhex('0x1.8p-134'), 3.0e38]
HMUL_IN = [(1.0, 1.0), (float.fromhex('0x1.0p-12'), float.fromhex('0x1.0p-13')), (float.fromhex('0x1.0p-12'), float.fromhex('0x1.8p-13')), (float.fromhex('0x1.004p0'), float.fromhex('0x1.004p0')),
           (0.0999755859375, 0.0999755859375), (200.0, 300.0), (float.fromhex('0x1.0p-14'), 0.5)]
HFMA_IN = [(1.0, 1.0, 1.0), (-float.fromhex('0x1.004p0'), 3.99609375, 8200.0), (float.fromhex('0x1.004p0'), 3.99609375, -8200.0),
           (float.fromhex('0x1.0p-24'), 1.0, float.fromhex('0x1.0p-24')), (float.fromhex('0x1.0p-12'), float.fromhex('0x1.0p-13'), 0.0), (0.5, float.fromhex('0x1.0p-24'), 0.0),
           (float.fromhex('0x1.004p0'), float.fromhex('0x1.004p0'), float.fromhex('0x1.0p-11'))]


def out(w, name, rows, fmt):
    w.write('static const %s %s[] = {\n' % ('uint32_t' if fmt == 1 else 'uint32_t', name))
    for r in rows:
        w.write('    ' + ', '.join('0x%08xu' % v for v in r) + ',\n')
    w.write('};\n')


def header():
    w = io.StringIO()
    w.write('/* Generated by tests/unit/cuda_math_expected.py: binary32 bit patterns, inputs then the '
            'expected result. */\n')
    out(w, 'k_ex2', [(bits(np.float32(x)), bits(ex2(f32(x)))) for x in EX2_IN], 1)
    out(w, 'k_expf', [(bits(np.float32(x)), bits(expf(x))) for x in EXPF_IN], 1)
    out(w, 'k_rcp', [(bits(np.float32(y)), bits(rcp(f32(y)))) for y in RCP_IN], 1)
    out(w, 'k_fdividef', [(bits(np.float32(x)), bits(np.float32(y)), bits(fdividef(f32(x), f32(y))))
                          for x, y in DIV_IN], 1)
    # numpy's float16 conversion (round to nearest even, subnormals kept) against the rounder
    hrows = []
    for x in H_IN:
        v = np.float16(np.float32(x))
        assert Fraction(float(v)) == (rn16(f32(x)) if abs(f32(x)) < 65520 else None) or abs(x) >= 65520
        hrows.append((bits(np.float32(x)), bits(float(v))))
    out(w, 'k_f2h', hrows, 1)
    out(w, 'k_f2bf', [(bits(np.float32(x)), bits(rnbf(f32(x)))) for x in BF_IN], 1)
    mrows = []
    for a, b in HMUL_IN:
        v = np.float16(a) * np.float16(b)
        assert Fraction(float(v)) == rn16(exact(np.float16(a)) * exact(np.float16(b)))
        mrows.append((bits(float(np.float16(a))), bits(float(np.float16(b))), bits(float(v))))
    out(w, 'k_hmul', mrows, 1)
    frows = []
    for a, b, c in HFMA_IN:
        ha, hb, hc = (exact(np.float16(t)) for t in (a, b, c))
        frows.append((bits(ha), bits(hb), bits(hc), bits(rn16(ha * hb + hc))))
    out(w, 'k_hfma', frows, 1)
    return w.getvalue()


if __name__ == '__main__':
    text = header()
    if len(sys.argv) == 3 and sys.argv[1] == '--check':
        with open(sys.argv[2]) as f:
            sys.exit(0 if f.read() == text else 1)
    sys.stdout.write(text)
