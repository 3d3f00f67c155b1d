/* alibi-blind: slopes as the models' code computes them in fp32 (pipeline field slope-calc).
 *
 * torch-pow (transformers' BLOOM and Falcon build_alibi_tensor):
 *     base = torch.tensor(2 ** (-(2 ** -(log2(c) - 3))), dtype=float32)   c = 2^floor(log2 H)
 *     slopes = torch.pow(base, arange(1, 1 + c))  [+ torch.pow(extra_base, arange(1, 1 + 2r, 2))]
 *   modelled as RN32(base32^k): the fp32 base raised exactly to the integer k, rounded once. The exact
 *   power of a 24-bit base is enclosed by MPFR's directed roundings (Ziv loop), so the value is the
 *   correctly rounded one, whatever k. torch's own pow is not correctly rounded (CPU: Sleef powf
 *   u10; CUDA: powf); docs/pipelines.md lists where the CPU value differs by one ulp.
 * mpt-pow (llm-foundry gen_slopes, transformers' build_mpt_alibi_tensor), H' = 2^ceil(log2 H):
 *     m = arange(1, H' + 1).float() * (B / H');  slopes = 1.0 / torch.pow(2, m)
 *     if H' != H: slopes = concat([slopes[1::2], slopes[::2]])[:H]
 *   modelled as RN32(1 / RN32(2^RN32(k * RN32(B / H')))) with B / H' a binary64 quotient, for any H
 *   (mpt:B schedules, and press, which is mpt:8). The pow is the correctly rounded one; torch's is
 *   not always (docs/pipelines.md: it can matter from H' = 128 on). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include "kernel/abl_round.h"

/* RN32 of base32^k, base32 > 0 a binary32 value, k >= 1 */
static float pow_rn32(float base32, unsigned long k)
{
    mpfr_t b, lo, hi;
    mpfr_init2(b, 24);
    mpfr_set_flt(b, base32, MPFR_RNDN);
    float r = 0.0f;
    for (mpfr_prec_t w = 64;; w *= 2) {
        mpfr_inits2(w, lo, hi, (mpfr_ptr)0);
        int il = mpfr_pow_ui(lo, b, k, MPFR_RNDD);
        mpfr_pow_ui(hi, b, k, MPFR_RNDU);
        float fl = mpfr_get_flt(lo, MPFR_RNDN), fh = mpfr_get_flt(hi, MPFR_RNDN);
        mpfr_clears(lo, hi, (mpfr_ptr)0);
        if (il == 0 || fl == fh || w >= (mpfr_prec_t)1 << 24) {
            r = fl;
            break;
        }
    }
    mpfr_clear(b);
    return r;
}

/* RN32(2^e) for a binary32 e (exp2 of a dyadic rational: exact when e is an integer) */
static float exp2_rn32_exact(float e)
{
    mpfr_t x, t;
    mpfr_init2(x, 24);
    mpfr_init2(t, 24);
    mpfr_set_flt(x, e, MPFR_RNDN);
    mpfr_exp2(t, x, MPFR_RNDN);   /* MPFR rounds correctly to the 24-bit precision */
    float r = mpfr_get_flt(t, MPFR_RNDN);
    mpfr_clear(x);
    mpfr_clear(t);
    return r;
}

static float torch_pow_slope(int H, int index)
{
    int c = 1;
    while (c * 2 <= H)
        c *= 2;
    /* base 2^(-8/c) for the first c heads, 2^(-4/c) (the base of 2c) for the interleaved rest */
    int first = index <= c;
    unsigned long k = first ? (unsigned long)index : (unsigned long)(2 * (index - c) - 1);
    mpfr_t e, t;
    mpfr_init2(e, 64);
    mpfr_init2(t, 24);
    mpfr_set_si(e, first ? -8 : -4, MPFR_RNDN);
    mpfr_div_si(e, e, c, MPFR_RNDN);       /* c is a power of two: exact; Python's 2 ** x is correctly
                                             * rounded binary64 here (an exact dyadic exponent), and the
                                             * fp32 tensor of it the binary32 rounding of that double */
    mpfr_t d;
    mpfr_init2(d, 53);
    mpfr_exp2(d, e, MPFR_RNDN);
    float base32 = mpfr_get_flt(d, MPFR_RNDN);
    mpfr_clear(d);
    mpfr_clear(e);
    mpfr_clear(t);
    return pow_rn32(base32, k);
}

static float mpt_pow_slope(int H, long B, int index)
{
    long Hp = 1;
    while (Hp < H)
        Hp *= 2;
    long k;                          /* 1-based position in arange(1, H' + 1) */
    if (Hp == H)
        k = index;
    else if (index <= Hp / 2)
        k = 2L * index;              /* slopes[1::2] */
    else
        k = 2L * (index - Hp / 2) - 1; /* slopes[::2] */
    double q = (double)B / (double)Hp;            /* Python: alibi_bias_max / num_heads_power_of_2 */
    float s = (float)q;
    float m = (float)((double)(float)k * (double)s);   /* fp32 product */
    float p = exp2_rn32_exact(m);
    return (float)(1.0 / (double)p);
}

/* ggml (ops.cpp, soft_max_f32 and flash_attn_ext): n = 1 << floor(log2 H), m0 = powf(2, -B / n),
 * m1 = powf(2, -(B / 2) / n), head h = index - 1: powf(m0, h + 1) for h < n, else powf(m1, 2 (h - n) + 1).
 * The exponents are exact in fp32 (n a power of two); each powf is modelled as correctly rounded. */
static float ggml_powf_slope(int H, long B, int index)
{
    long n = 1;
    while (n * 2 <= H)
        n *= 2;
    int h = index - 1;
    float m = exp2_rn32_exact(h < n ? -(float)B / (float)n : -((float)B / 2.0f) / (float)n);
    return pow_rn32(m, h < n ? (unsigned long)h + 1 : 2UL * (unsigned long)(h - n) + 1);
}

/* flex-exp2 (attention-gym alibi_mod): scale = torch.exp2(-((h + 1) * 8.0 / H)) on the int32 head index,
 * all in fp32: e = RN32(8(h+1) / H) (8(h+1) exact; one fp32 division), slope = RN32(2^-e) */
static float flex_exp2_slope(int H, int index)
{
    float e = (float)((double)(8.0f * (float)index) / (double)H);
    return exp2_rn32_exact(-e);
}

abl_status abl_slope_code_value(abl_slope_calc calc, const abl_schedule *sched, int h, float *out)
{
    if (sched == NULL || out == NULL || h < 0 || h >= sched->count)
        return ABL_ERR_INVALID_ARGUMENT;
    int H = sched->count, index = sched->slopes[h].index;
    if (calc == ABL_SLOPE_CALC_TORCH_POW) {
        if (sched->kind != ABL_SCHEDULE_PRESS)
            return ABL_ERR_SLOPE_CALC;
        *out = torch_pow_slope(H, index);
        return ABL_OK;
    }
    if (calc == ABL_SLOPE_CALC_MPT_POW) {
        /* B comes from the schedule's value (its one parser read mpt:B) */
        if (sched->kind != ABL_SCHEDULE_MPT && sched->kind != ABL_SCHEDULE_PRESS)
            return ABL_ERR_SLOPE_CALC;
        long B = sched->kind == ABL_SCHEDULE_MPT ? sched->mpt_bias : 8;
        /* press is mpt:8 for every H, order included: Press's get_slopes(H) = press(c) followed by
         * press(2c)[0::2][:H-c], c = 2^floor(log2 H); gen_slopes' concat(s[1::2], s[0::2])[:H] over
         * H' = 2c gives 2^(-8j/c) (j = 1..c), then 2^(-4(2j-1)/c) -- the same slopes, index for index */
        *out = mpt_pow_slope(H, B, index);
        return ABL_OK;
    }
    if (calc == ABL_SLOPE_CALC_GGML) {
        /* llama.cpp's max_bias: 8 (f_max_alibi_bias) for press models, the GGUF's alibi_bias_max for mpt:B */
        if (sched->kind != ABL_SCHEDULE_MPT && sched->kind != ABL_SCHEDULE_PRESS)
            return ABL_ERR_SLOPE_CALC;
        *out = ggml_powf_slope(H, sched->kind == ABL_SCHEDULE_MPT ? sched->mpt_bias : 8, index);
        return ABL_OK;
    }
    if (calc == ABL_SLOPE_CALC_FLEX) {
        /* the score_mod hard-codes 8 and the head order h = index - 1: Press's slopes for a power of two */
        if (sched->kind != ABL_SCHEDULE_PRESS)
            return ABL_ERR_SLOPE_CALC;
        *out = flex_exp2_slope(H, index);
        return ABL_OK;
    }
    return ABL_ERR_INVALID_ARGUMENT;
}
