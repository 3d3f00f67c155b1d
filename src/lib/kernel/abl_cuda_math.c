/* alibi-blind: the CUDA intrinsics of the modelled GPU engines, from their documented semantics
 * (abl_cuda_math.h says which document each follows; docs/pipelines.md §3c). */
#include <math.h>
#include "kernel/abl_cuda_math.h"
#include "kernel/abl_round.h"

#define CUDA_MIN_NORMAL 0x1p-126f

float abl_cuda_ftz(float x)
{
    return fabsf(x) < CUDA_MIN_NORMAL ? copysignf(0.0f, x) : x;
}

float abl_cuda_ex2_ftz(float x)
{
    x = abl_cuda_ftz(x);
    if (isnan(x))
        return x;
    if (x == -INFINITY)
        return 0.0f;
    return abl_cuda_ftz(abl_exp2_rn32(x));
}

float abl_cuda_fmul(float a, float b)
{
    /* binary32 operands: the binary64 product is exact, one rounding to binary32 */
    return abl_cuda_ftz((float)((double)abl_cuda_ftz(a) * (double)abl_cuda_ftz(b)));
}

float abl_cuda_fadd(float a, float b)
{
    return abl_cuda_ftz((float)((double)abl_cuda_ftz(a) + (double)abl_cuda_ftz(b)));
}

float abl_cuda_fmaf(float a, float b, float c)
{
    return abl_cuda_ftz(fmaf(abl_cuda_ftz(a), abl_cuda_ftz(b), abl_cuda_ftz(c)));
}

float abl_cuda_expf(float x)
{
    return abl_cuda_ex2_ftz(abl_cuda_fmul(x, 0x1.715476p+0f));   /* fp32(log2 e) = 1.4426950f */
}

float abl_cuda_rcp_ftz(float y)
{
    y = abl_cuda_ftz(y);
    if (y == 0.0f)
        return copysignf(INFINITY, y);
    return abl_cuda_ftz((float)(1.0 / (double)y));   /* 53 >= 2*24 + 2: the binary32 quotient */
}

float abl_cuda_fdividef(float x, float y)
{
    float r = abl_cuda_rcp_ftz(y);   /* 2^126 < |y| < 2^128: 1/y is subnormal, flushed: the result is 0 */
    return abl_cuda_fmul(x, r);
}

/* x (binary64) rounded to nearest even into p bits of precision with minimum exponent emin (gradual
 * underflow), +-inf from the largest finite plus half an ulp on (ties to even go to inf there). */
static double round_p(double x, int p, int emin, double maxv)
{
    if (x == 0.0 || !isfinite(x))
        return x;
    int e;
    (void)frexp(x, &e);   /* |x| in [2^(e-1), 2^e) */
    int qe = e - p > emin - p + 1 ? e - p : emin - p + 1;
    double q = ldexp(1.0, qe);
    double t = x / q;     /* exact: a power-of-two scaling */
    double r = nearbyint(t) * q;   /* the default rounding mode: to nearest even */
    int em;
    (void)frexp(maxv, &em);
    double half_ulp_max = ldexp(1.0, em - 1 - p);   /* half the spacing of the top binade */
    if (fabs(x) >= maxv + half_ulp_max)
        return copysign(INFINITY, x);
    return r;
}

static double round_h(double x)
{
    return round_p(x, 11, -14, 65504.0);
}

float abl_cuda_f2h(float x)
{
    return (float)round_h((double)x);
}

float abl_cuda_f2bf(float x)
{
    return (float)round_p((double)x, 8, -126, 0x1.fep127);
}

float abl_cuda_hmul(float a, float b)
{
    return (float)round_h((double)a * (double)b);   /* 11 x 11 bits: exact in binary64 */
}

float abl_cuda_hfma(float a, float b, float c)
{
    double p = (double)a * (double)b;   /* exact */
    double s = p + (double)c;
    double bb = s - p, e = (p - (s - bb)) + ((double)c - bb);   /* TwoSum: s + e = p + c exactly */
    if (e == 0.0 || !isfinite(s))
        return (float)round_h(s);
    /* s + e rounds as s does unless s is a midpoint of the fp16 grid: then e decides */
    int ex;
    (void)frexp(s, &ex);
    int qe = ex - 11 > -24 ? ex - 11 : -24;
    double t = ldexp(s, -qe), f = floor(t);
    if (t - f != 0.5)
        return (float)round_h(s);
    double r = ldexp(e > 0.0 ? f + 1.0 : f, qe);   /* t = f + 1/2 exactly: e says which side */
    return (float)round_h(r);
}
