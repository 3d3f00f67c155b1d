#!/usr/bin/env python3
"""Expected fp32 slopes of MPT's slope code (slope-calc=mpt-pow) for tests/unit/test_slope_code.c.

Writes tests/unit/mpt_slopes_expected.h (to stdout). Computed without the library and without MPFR:
integers and fractions only, then cross-checked against numpy float32.

The code modelled (transformers build_mpt_alibi_tensor at 43526201, llm-foundry gen_slopes at 00ef82a3):

    n = 2 ** math.ceil(math.log2(H))
    base = torch.arange(1, n + 1).float() * (alibi_bias_max / n)     # fp32 tensor * Python float
    slopes = 1.0 / torch.pow(2, base)                                  # fp32
    if n != H: slopes = torch.concat([slopes[1::2], slopes[::2]])[:H]

step by step, each fp32 result rounded once (round to nearest even):
    q    = alibi_bias_max / n       a binary64 quotient, then the fp32 scalar of the multiply
    m_k  = RN32(k * RN32(q))        k = 1..n
    p_k  = RN32(2 ** m_k)           the correctly rounded power (what an exact pow returns)
    s_k  = RN32(1 / p_k)            1.0 / t is t.reciprocal() * 1.0 in torch
and the head order is the same Python slice expression applied to a list.

2 ** m for a dyadic m = a / 2^j is floor(2^(m + P)) = j nested integer square roots of 2^(a + P 2^j)
(floor(sqrt(floor(y))) = floor(sqrt(y))); P = 96 extra bits decide the rounding (2^m is irrational
unless m is an integer, so it never lies on a rounding midpoint; the script checks that the bracket
[F, F + 1) / 2^P rounds one way).

Usage: /usr/bin/python3 tests/unit/mpt_slopes_expected.py > tests/unit/mpt_slopes_expected.h
       mpt_slopes_expected.py --check tests/unit/mpt_slopes_expected.h   (CTest: the committed header
       is what this script writes; exit 1 if not)
"""
import io
import math
import struct
import sys
from fractions import Fraction

# (H, alibi_bias_max): the head counts with MPT's B = 8, powers of two, other B.
CASES = [(3, 8), (5, 8), (6, 8), (12, 8), (24, 8), (48, 8), (100, 8),
         (1, 8), (2, 8), (16, 8), (256, 8), (12, 6), (24, 16), (200, 1), (7, 64)]
P = 96


def rn32(x):
    """Round a positive Fraction to binary32, nearest even (normal range)."""
    assert x > 0
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    assert -126 <= e <= 127, "outside binary32's normal range"
    scaled = x / Fraction(2) ** (e - 23)            # in [2^23, 2^24)
    q, r = divmod(scaled.numerator, scaled.denominator)
    if 2 * r > scaled.denominator or (2 * r == scaled.denominator and q % 2 == 1):
        q += 1
    return Fraction(q) * Fraction(2) ** (e - 23)


def exp2_rn32(m):
    """RN32(2^m) for a dyadic Fraction m > 0."""
    j = m.denominator.bit_length() - 1
    assert m.denominator == 1 << j, "m must be dyadic"
    a = m.numerator
    if j == 0:
        return rn32(Fraction(2) ** a)
    f = 1 << (a + P * (1 << j))
    for _ in range(j):
        f = math.isqrt(f)
    lo, hi = rn32(Fraction(f, 1 << P)), rn32(Fraction(f + 1, 1 << P))
    assert lo == hi, "bracket too wide to decide the rounding"
    return lo


def bits(x):
    return struct.unpack('<I', struct.pack('<f', float(x)))[0]


def slopes_exact(H, B):
    n = 2 ** math.ceil(math.log2(H))
    q = Fraction(B / n)                             # the binary64 quotient, exactly
    q32 = rn32(q)
    s = [rn32(1 / exp2_rn32(rn32(k * q32))) for k in range(1, n + 1)]
    if n != H:
        s = (s[1::2] + s[::2])[:H]
    return s


def slopes_numpy(H, B):
    """The same ops in numpy float32: (bits of 1 / p, p) per head. numpy's float32 power is not
    correctly rounded (1 ulp off for some m = k/32 and k/256), so the caller compares each step."""
    import numpy as np
    n = 2 ** math.ceil(math.log2(H))
    m = np.arange(1, n + 1, dtype=np.float32) * np.float32(B / n)
    p = np.power(np.float32(2.0), m)
    s = np.float32(1.0) / p
    assert s.dtype == np.float32 and p.dtype == np.float32
    pairs = [(int(s[i].view(np.uint32)), Fraction(float(p[i]))) for i in range(n)]
    if n != H:
        pairs = (pairs[1::2] + pairs[::2])[:H]
    return pairs


def cross_check(H, B, exact):
    """numpy float32 agrees with the exact sequence wherever its pow is the correctly rounded one;
    elsewhere its pow is one ulp away and its quotient is RN32(1 / its pow). Returns the count of
    slopes where numpy's pow was not correctly rounded."""
    n = 2 ** math.ceil(math.log2(H))
    cr = [exp2_rn32(rn32(k * rn32(Fraction(B / n)))) for k in range(1, n + 1)]
    if n != H:
        cr = (cr[1::2] + cr[::2])[:H]
    off = 0
    for h, (s_np, p_np) in enumerate(slopes_numpy(H, B)):
        assert s_np == bits(rn32(1 / p_np)), "numpy's 1 / p is not RN32"
        if p_np == cr[h]:
            assert s_np == exact[h], "H=%d B=%d head %d: numpy %08x, expected %08x" % (H, B, h + 1, s_np, exact[h])
        else:
            ulp = Fraction(2) ** (math.floor(math.log2(cr[h])) - 23)
            assert abs(p_np - cr[h]) == ulp, "numpy's pow more than one ulp off"
            off += 1
    return off


def generate(out):
    out.write("/* Generated by tests/unit/mpt_slopes_expected.py (integers and fractions, no MPFR, no library);\n"
              " * do not edit. The fp32 bit patterns of MPT's slopes, 1.0 / torch.pow(2, k * (B / H')) with\n"
              " * each step rounded once, in the head order concat(s[1::2], s[::2])[:H]. */\n")
    out.write("typedef struct mpt_slope_case {\n    int heads;\n    long bias_max;\n"
              "    const unsigned *bits;\n} mpt_slope_case;\n\n")
    np_off = 0
    names = []
    for H, B in CASES:
        exact = [bits(x) for x in slopes_exact(H, B)]
        try:
            off = cross_check(H, B, exact)
            np_off += off
            if off:
                sys.stderr.write("H=%d B=%d: numpy's float32 pow is one ulp from the correctly rounded one "
                                 "for %d heads\n" % (H, B, off))
        except ImportError:
            sys.stderr.write("numpy not installed: no cross-check\n")
        name = "mpt_h%d_b%d" % (H, B)
        names.append((name, H, B))
        out.write("static const unsigned %s[%d] = {" % (name, H))
        for i, b in enumerate(exact):
            out.write(("\n    " if i % 6 == 0 else " ") + "0x%08xu%s" % (b, "," if i + 1 < H else ""))
        out.write("};\n")
    out.write("\nstatic const mpt_slope_case mpt_slope_cases[] = {\n")
    for name, H, B in names:
        out.write("    {%d, %d, %s},\n" % (H, B, name))
    out.write("};\n")
    sys.stderr.write("numpy float32 cross-check passed (%d slopes with a pow one ulp off)\n" % np_off)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        buf = io.StringIO()
        generate(buf)
        with open(sys.argv[2], encoding="utf-8") as f:
            same = f.read() == buf.getvalue()
        sys.stderr.write("%s: %s\n" % (sys.argv[2], "as generated" if same else "DIFFERS from the generator"))
        return 0 if same else 1
    generate(sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
