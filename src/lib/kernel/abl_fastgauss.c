/* alibi-blind: Gaussian scores without libm calls (see abl_fastgauss.h).
 *
 * The reference draw (abl_simulate.c): u1 = ((h1 >> 11) + 1)·2^-53, u2 = (h2 >> 11)·2^-53, both exact;
 * r = sqrt(-2 log u1), t = RN(6.283185307179586·u2), z0 = RN(r·cos t), z1 = RN(r·sin t) with the host's
 * log, cos, sin; the score is RN32(RN64(S·z)). Here t is formed by the same binary64 operation, and
 * log, cos and sin by polynomials whose errors are bounded below; then
 *   |z' - z_true| <= r·2^-48 (ours) and |z_libm - z_true| <= r·2^-48 (the host's, allowing log, sin
 *   and cos up to 8 ulps off; glibc documents at most 1 ulp for each, glibc manual "Known Maximum
 *   Errors in Math Functions"), so |RN64(S·z') - RN64(S·z_libm)| <= S·r·2^-47 + 2^-52·|S·z| <=
 *   S·r·2^-46 (|z| <= r).
 * With delta = S·r'·2^-44 (r' our r, within 2^-49 of r), when RN32(v' - delta) == RN32(v' + delta)
 * (v' = RN64(S·z'), the two endpoints rounded in binary64 still bracket the interval because delta
 * >= 2^-44·|v'|), RN32 being monotone, every value within delta of v', the reference's included, has
 * that same binary32 rounding. Otherwise (about one draw in 2^20, and r' = 0) the pair is recomputed
 * by abl_sim_gauss_pair.
 *
 * Our errors (u = 2^-53): log u1 = e·ln 2 + log m, m in [sqrt(1/2), sqrt(2)), e·LN2_HI exact (46-bit
 * HI, |e| <= 53); log m = 2 atanh(s), s = (m - 1)/(m + 1) (m - 1 exact by Sterbenz, s within 2u
 * relative), |s| < 0.1716, the series to s^21 (truncation < 0.1716^23/23 < 2^-62), Horner roundings
 * < 4u relative: log m within 6u relative; the sum with e·ln 2 within 2^-50 relative (at worst a
 * cancellation of 2 when e = -1). -2x is exact, sqrt halves the relative error and adds u: r' within
 * 2^-50.5 relative. cos, sin: t - n·PIO2_HI is exact (50-bit HI, n <= 4, Sterbenz), minus n·PIO2_LO
 * (|r| <= pi/4 + 2^-50); Taylor series to r^17 / r^18 (truncation < 2^-62), Horner roundings < 2^-50
 * absolute. z' = RN(r'·c'): within r·(2^-50.5 + 2^-50 + 2^-53) < r·2^-48 of z_true. */
#include <math.h>
#include <string.h>
#include "kernel/abl_fastgauss.h"

static inline uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The computations on two lanes at once (GCC/Clang vector extensions, lane-by-lane IEEE operations:
 * each lane's result is the scalar expression's); two vectors are processed together so that their
 * dependency chains overlap. */
typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2i __attribute__((vector_size(16)));
typedef uint64_t v2u __attribute__((vector_size(16)));

#define VLOAD(v, p) memcpy(&(v), (p), sizeof(v))

/* log(u) lane by lane, u in (0, 1] binary64 normals */
static inline void log_unit2(const double *u, double *out)
{
    v2d x, one = {1.0, 1.0}, half = {0.5, 0.5};
    VLOAD(x, u);
    v2i b;
    memcpy(&b, &x, sizeof b);
    v2i e = (b >> 52) - 1023;
    v2i mb = (b & ((INT64_C(1) << 52) - 1)) | (INT64_C(1023) << 52);
    v2d m;
    memcpy(&m, &mb, sizeof m);
    v2i big = m > 0x1.6a09e667f3bcdp+0;        /* -1 where m > sqrt(2) */
    v2i hb, ob;
    memcpy(&hb, &half, sizeof hb);
    memcpy(&ob, &one, sizeof ob);
    v2i fb = (big & hb) | (~big & ob);
    v2d factor;
    memcpy(&factor, &fb, sizeof factor);
    m = m * factor;                              /* exact: m or m / 2 */
    e = e - big;
    v2d de = {(double)e[0], (double)e[1]};
    v2d f = m - 1.0;
    v2d sv = f / (m + 1.0);
    v2d s2 = sv * sv;
    v2d p = 0x1.5555555555555p-1 + s2 * (0x1.999999999999ap-2 + s2 * (0x1.2492492492492p-2 +
            s2 * (0x1.c71c71c71c71cp-3 + s2 * (0x1.745d1745d1746p-3 + s2 * (0x1.3b13b13b13b14p-3 +
            s2 * (0x1.1111111111111p-3 + s2 * (0x1.e1e1e1e1e1e1ep-4 + s2 * (0x1.af286bca1af28p-4 +
            s2 * 0x1.8618618618618p-4))))))));
    v2d logm = 2.0 * sv + (sv * s2) * p;
    v2d r = de * 0x1.62e42fefa3980p-1 + (de * 0x1.bcd5e4f1d9cc0p-47 + logm);
    memcpy(out, &r, sizeof r);
}

/* cos t, sin t lane by lane, t in [0, 2 pi) */
static inline void sincos_unit2(const double *t, double *c, double *s)
{
    v2d x;
    VLOAD(x, t);
    v2d q = x * 0x1.45f306dc9c883p-1 + 0.5;
    int64_t n[2] = {(int64_t)q[0], (int64_t)q[1]};
    v2d dn = {(double)n[0], (double)n[1]};
    v2d r = (x - dn * 0x1.921fb54442d18p+0) - dn * 0x1.1a62633145c07p-54;
    v2d r2 = r * r;
    v2d sp = -0x1.5555555555555p-3 + r2 * (0x1.1111111111111p-7 + r2 * (-0x1.a01a01a01a01ap-13 +
             r2 * (0x1.71de3a556c734p-19 + r2 * (-0x1.ae64567f544e4p-26 + r2 * (0x1.6124613a86d09p-33 +
             r2 * (-0x1.ae7f3e733b81fp-41 + r2 * 0x1.952c77030ad4ap-49))))));
    v2d cp = -0.5 + r2 * (0x1.5555555555555p-5 + r2 * (-0x1.6c16c16c16c17p-10 + r2 * (0x1.a01a01a01a01ap-16 +
             r2 * (-0x1.27e4fb7789f5cp-22 + r2 * (0x1.1eed8eff8d898p-29 + r2 * (-0x1.93974a8c07c9dp-37 +
             r2 * (0x1.ae7f3e733b81fp-45 + r2 * -0x1.6827863b97d97p-53)))))));
    v2d sr = r + (r * r2) * sp;
    v2d cr = 1.0 + r2 * cp;
    /* quadrant n mod 4, without branches: (c, s) = (cr, sr), (-sr, cr), (-cr, -sr), (sr, -cr) */
    v2u nv = {(uint64_t)n[0], (uint64_t)n[1]}, crb, srb;
    memcpy(&crb, &cr, sizeof crb);
    memcpy(&srb, &sr, sizeof srb);
    v2u sw = -(nv & 1);
    v2u cb = ((sw & srb) | (~sw & crb)) ^ (((nv + 1) & 2) << 62);
    v2u sb = ((sw & crb) | (~sw & srb)) ^ ((nv & 2) << 62);
    memcpy(c, &cb, sizeof cb);
    memcpy(s, &sb, sizeof sb);
}

/* RN32(v) when every value within delta of v rounds the same; else 0 with *ok cleared */
static inline float decide(double v, double delta, int *ok)
{
    float lo = (float)(v - delta), hi = (float)(v + delta);
    if (lo != hi)
        *ok = 0;
    return lo;
}

/* pairs k0..k0+count-1 (count <= 4) of a row: scores into z[2k], z[2k+1] relative to k0 */
static void pairs(uint64_t seed, uint64_t ms, uint64_t head, uint64_t i, uint64_t base, double std, uint64_t k0,
                  int count, float *out, uint64_t *slow)
{
    double u1[4] = {1.0, 1.0, 1.0, 1.0}, t[4] = {0.0, 0.0, 0.0, 0.0}, lg[4], c[4], sn[4];
    for (int q = 0; q < count; q++) {
        uint64_t h1 = mix64((base | (k0 + (uint64_t)q)) ^ ms);
        uint64_t h2 = mix64(h1 ^ UINT64_C(0xD1B54A32D192ED03));
        u1[q] = (double)((h1 >> 11) + 1) * 0x1p-53;
        t[q] = 6.283185307179586 * ((double)(h2 >> 11) * 0x1p-53);
    }
    log_unit2(u1, lg);
    log_unit2(u1 + 2, lg + 2);
    sincos_unit2(t, c, sn);
    sincos_unit2(t + 2, c + 2, sn + 2);
    for (int q = 0; q < count; q++) {
        double r = sqrt(-2.0 * lg[q]);
        double delta = std * r * 0x1p-44;
        int ok = r > 0.0;
        float f0 = decide(std * (r * c[q]), delta, &ok);
        float f1 = decide(std * (r * sn[q]), delta, &ok);
        if (!ok) {
            double z0, z1;
            abl_sim_gauss_pair(seed, head, i, k0 + (uint64_t)q, &z0, &z1);
            f0 = (float)(std * z0);
            f1 = (float)(std * z1);
            if (slow != NULL)
                (*slow)++;
        }
        out[2 * q] = f0;
        out[2 * q + 1] = f1;
    }
}

void abl_fastgauss_scores(uint64_t seed, uint64_t head, uint64_t i, double std, uint64_t from, uint64_t count,
                          float *score, uint64_t *slow)
{
    uint64_t ms = mix64(seed), base = (head - 1) << 48 | i << 24;
    uint64_t npairs = (count + 1) / 2, k = from / 2;
    for (; k + 4 <= npairs && 2 * k + 8 <= count; k += 4)
        pairs(seed, ms, head, i, base, std, k, 4, score + 2 * k, slow);
    if (k < npairs) {
        float tail[8];
        pairs(seed, ms, head, i, base, std, k, (int)(npairs - k), tail, slow);
        for (uint64_t j = 2 * k; j < count; j++)
            score[j] = tail[j - 2 * k];
    }
}
