/* alibi-blind: exp correctly rounded to binary32 through a table-driven binary64 approximation with
 * a certified error bound; arguments whose binary64 value lies too close to a binary32 rounding
 * boundary go to abl_exp_rn32 (binary64 libm + MPFR Ziv loop), so the result is always RN32(exp(y)).
 *
 * Method (Tang's table-driven exp): k = nearest integer to y·64/ln 2, r = y − k·(ln 2/64) with
 * ln 2/64 = HI + LO, HI of 39 significant bits (k·HI exact for |k| < 2^14: |y| < 104 gives
 * |k| <= 9603; y − k·HI exact by Sterbenz), |r| <= ln 2/128·(1 + 2^-40) < 0.00542;
 * exp(y) = 2^(k div 64) · T[k mod 64] · e^r, T[j] = RN64(2^(j/64)) (mpmath at 300 bits, checked to be
 * correctly rounded), e^r − 1 ≈ p(r) = r + r²(1/2 + r(1/6 + r(1/24 + r(1/120 + r/720)))).
 * Error, relative, u = 2^-53: T[j] ≤ u; truncation |r|^7/5040·e^|r| < 2^-64; LO and its product
 * (|k·LO| < 2^14·2^-45, rounded) and the rounding of r − k·LO: ≤ 2^-60 absolute in r, so ≤ 2^-60
 * relative in e^r; Horner's roundings in p (|p| < 0.0055): ≤ 6u·|p| < 2^-58; t·p and t + t·p: ≤ 2u
 * relative to the result; the scaling by 2^(k div 64) is exact (results >= 2^-151 are binary64
 * normals). Total < 3.2u < 2^-51.3 · exp(y).
 *
 * Decision: for a normal binary32 result the binary64 value d = 2^e·1.f has 29 bits below binary32's
 * last place; RN32 changes only where those 29 bits cross 2^28 (the midpoint). The error above is
 * < 2^-51.3·2^(e+1) = 2^-27.3 binary32 ulps = 2^1.7 units of the 29-bit field; we demand a distance
 * > 2^9 units (2^-20 ulps, as abl_exp_rn32 does for libm's exp), so RN32(d) = RN32(exp(y)). Below
 * 2^-126 the grid is 2^-149: d·2^149 must be further than 2^-20 from an odd multiple of 1/2. */
#include <math.h>
#include <string.h>
#include "kernel/abl_fastexp.h"
#include "kernel/abl_round.h"

static const double k_t64[64] = {
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0,
    0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0,
    0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0,
    0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0,
    0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0,
    0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0, 0x1.6623882552225p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0,
    0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0,
    0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0,
    0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0,
    0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0,
};

#define INV_LN2_64 0x1.71547652b82fep+6   /* RN64(64/ln 2): any nearby value only moves k */
#define LN2_64_HI 0x1.62e42fefa0000p-7     /* 39 significant bits */
#define LN2_64_LO 0x1.cf79abc9e3b3ap-46    /* RN64(ln 2/64 - HI) */
#define SHIFT 0x1.8p52                     /* (z + SHIFT) - SHIFT = nearest integer to z, |z| < 2^51 */

float abl_fastexp_rn32(float yf, uint64_t *slow)
{
    if (!(yf > -104.0f))
        return yf <= -104.0f ? 0.0f : abl_exp_rn32(yf);   /* exp(y) < 2^-150; NaN */
    if (yf >= 89.0f)
        return INFINITY;
    if (yf == 0.0f)
        return 1.0f;
    double y = (double)yf;
    double kd = (y * INV_LN2_64 + SHIFT) - SHIFT;
    int64_t k = (int64_t)kd;
    double r = (y - kd * LN2_64_HI) - kd * LN2_64_LO;
    double p = r + (r * r) * (0.5 + r * (0x1.5555555555555p-3 + r * (0x1.5555555555555p-5 +
                                                              r * (0x1.1111111111111p-7 + r * 0x1.6c16c16c16c17p-10))));
    int64_t j = k & 63;
    double t = k_t64[j];
    double d = t + t * p;
    uint64_t sb = (uint64_t)((k - j) / 64 + 1023) << 52;
    double sc;
    memcpy(&sc, &sb, sizeof sc);
    d *= sc;
    if (d >= 0x1p-126) {
        uint64_t b;
        memcpy(&b, &d, sizeof b);
        uint64_t low = b & ((UINT64_C(1) << 29) - 1);
        if (low - ((UINT64_C(1) << 28) - (UINT64_C(1) << 9)) > (UINT64_C(1) << 10))
            return (float)d;
    } else {
        double u = d * 0x1p149;
        double w = (u + 0x1p52) - 0x1p52;
        if (fabs(fabs(u - w) - 0.5) > 0x1p-20)
            return (float)d;
    }
    if (slow != NULL)
        (*slow)++;
    return abl_exp_rn32(yf);
}
