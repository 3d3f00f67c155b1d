/* alibi-blind: bit-exact roundings into the pipeline dtypes, correctly rounded binary32 exp/exp2,
 * and an exact accumulator for sums of binary32 values (see abl_round.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gmp.h>
#include "abl/core/decimal.h"
#include "kernel/abl_round.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_ggml.h"
#include "kernel/abl_influence.h"

abl_status abl_fp_init(const abl_format *f, abl_fp *out)
{
    if (f == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (f->precision > 24 || f->emin < -126 || f->emax > 127 || f->precision < 1)
        return ABL_ERR_UNSUPPORTED;
    memset(out, 0, sizeof *out);
    out->p = f->precision;
    out->emin = (int)f->emin;
    out->emax = (int)f->emax;
    out->has_inf = (f->flags & ABL_FMT_HAS_INF) != 0;
    out->neg_zero = (f->flags & ABL_FMT_NEG_ZERO) != 0;
    out->identity = f->precision == 24 && f->emin == -126 && f->emax == 127 && out->has_inf;
    out->fp32_grid = f->emin == -126;
    double top = ldexp(1.0, f->precision) - 1.0 - (double)f->max_deficit;
    out->max = ldexp(top, (int)f->emax - f->precision + 1);
    out->min_normal = ldexp(1.0, (int)f->emin);
    out->min_sub = ldexp(1.0, (int)f->emin - f->precision + 1);
    out->zero_max = out->min_sub / 2;
    return ABL_OK;
}

static double finish(const abl_fp *f, double r, double x)
{
    if (r > f->max)
        r = f->has_inf ? INFINITY : f->max;
    if (r == 0.0 && !f->neg_zero)
        return 0.0;
    return copysign(r, x);
}

double abl_fp_round(const abl_fp *f, double x)
{
    if (isnan(x))
        return x;
    if (x == 0.0)
        return f->neg_zero ? x : 0.0;
    double ax = fabs(x);
    if (isinf(ax))
        return finish(f, f->has_inf ? ax : f->max, x);
    if (ax >= f->min_normal && f->p >= 2) {
        /* A normal value of the format (and of binary64): keep the top p - 1 stored bits of the binary64
         * pattern, rounded to nearest even at that position (a carry into the exponent is right). The same
         * value as the scaling below, without frexp and ldexp: this rounding runs once per key and bias.
         * (p = 1 keeps no stored bit: its even is the significand's, not the exponent's low bit.) */
        uint64_t u;
        memcpy(&u, &ax, sizeof u);
        unsigned k = (unsigned)(53 - f->p);
        u += ((UINT64_C(1) << (k - 1)) - 1) + ((u >> k) & 1u);
        u &= ~((UINT64_C(1) << k) - 1);
        double r;
        memcpy(&r, &u, sizeof r);
        return finish(f, r, x);
    }
    int e;
    (void)frexp(ax, &e);
    int E = e - 1;            /* ax in [2^E, 2^(E+1)) */
    if (E < f->emin)
        E = f->emin;          /* subnormal: the spacing stops shrinking */
    /* Scale so that the grid step is 1, round to the nearest integer (ties to even), scale back:
     * both scalings are exact, nearbyint is exact. */
    double k = nearbyint(ldexp(ax, f->p - 1 - E));
    return finish(f, ldexp(k, E - f->p + 1), x);
}

/* Binary32 numbers in their order as integers: k >= 0 is the bit pattern k, k < 0 the negative of pattern -k
 * (-inf .. +inf is -0x7f800000 .. 0x7f800000). */
static float float_at(int64_t k)
{
    uint32_t u = (uint32_t)(k < 0 ? -k : k);
    float f;
    memcpy(&f, &u, sizeof f);
    return k < 0 ? -f : f;
}

float abl_float_last_true(int (*zero)(const void *ctx, float v), const void *ctx)
{
    int64_t lo = -0x7f800000, hi = 0x7f800000;
    if (zero(ctx, INFINITY))
        return INFINITY;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (zero(ctx, float_at(mid)))
            lo = mid;
        else
            hi = mid;
    }
    return float_at(lo);
}

float abl_fp_round32(const abl_fp *f, float x)
{
    if (f->identity)
        return x;
    float ax = fabsf(x);
    if (isfinite(x) && (f->fp32_grid || ax >= (float)f->min_normal)) {
        /* On binary32's grid the format keeps the top p - 1 stored mantissa bits: round the bit
         * pattern to nearest even at that position (carries into the exponent are right). */
        uint32_t u;
        memcpy(&u, &ax, sizeof u);
        unsigned k = (unsigned)(24 - f->p);
        if (k > 0) {
            uint32_t half = 1u << (k - 1);
            u += (half - 1) + ((u >> k) & 1u);
            u &= ~((1u << k) - 1u);
        }
        float r;
        memcpy(&r, &u, sizeof r);
        return (float)finish(f, (double)r, (double)x);
    }
    return (float)abl_fp_round(f, (double)x);
}

abl_status abl_fp_round_slope(const abl_fp *f, const abl_slope *s, double *out)
{
    /* abl_slope_mpfr rounds correctly at any precision; in the normal range that is the format's
     * rounding, below it the precision shrinks to the subnormal grid. */
    mpfr_t t;
    mpfr_init2(t, f->p);
    abl_status st = abl_slope_mpfr(t, s, MPFR_RNDN);
    if (st == ABL_OK && mpfr_cmp_d(t, f->min_normal) < 0) {
        long E = (long)mpfr_get_exp(t) - 1;   /* value in [2^E, 2^(E+1)) */
        long peff = f->p - (f->emin - E);
        if (peff < 1) {
            st = ABL_ERR_DEGENERATE;
        } else {
            mpfr_set_prec(t, (mpfr_prec_t)peff);
            st = abl_slope_mpfr(t, s, MPFR_RNDN);
        }
    }
    if (st == ABL_OK) {
        double v = mpfr_get_d(t, MPFR_RNDN);
        if (v > f->max)
            v = f->has_inf ? INFINITY : f->max;
        if (v == 0.0 || !isfinite(v))
            st = ABL_ERR_DEGENERATE;
        *out = v;
    }
    mpfr_clear(t);
    return st;
}

/* 1 when the binary64 approximation d (relative error <= 2^-52) of a positive value may lie on the
 * other side of a binary32 rounding boundary than the value itself. */
static int near_boundary32(double d)
{
    if (d >= 0x1p-126 && d < 0x1p128) {
        /* binary32-normal range: the low 29 of binary64's 52 fraction bits are d's position inside
         * its binary32 spacing in units of 2^-29, the same test as below without frexp/ldexp */
        uint64_t b;
        memcpy(&b, &d, sizeof b);
        int64_t low = (int64_t)(b & ((UINT64_C(1) << 29) - 1)) - (INT64_C(1) << 28);
        return low >= -(INT64_C(1) << 9) && low <= (INT64_C(1) << 9);
    }
    int e;
    (void)frexp(d, &e);
    int q = e - 1 - 23;           /* binary32 spacing at d is 2^q ... */
    if (q < -149)
        q = -149;                 /* ... down to the subnormal spacing */
    double s = ldexp(d, -q);      /* d in units of that spacing (s < 2^24): exact */
    double frac = s - floor(s);
    return fabs(frac - 0.5) <= 0x1p-20;
}

/* Ziv's loop: the value is enclosed by its round-down and round-up evaluations; when both round
 * to the same binary32, so does the value. exp(y) for binary32 y != 0 is transcendental, so it is
 * never a midpoint and the loop ends; exact results (ternary 0) round directly. */
static float exp_mpfr(float y, int base2)
{
    mpfr_t x, lo, hi;
    mpfr_init2(x, 24);
    mpfr_set_flt(x, y, MPFR_RNDN);
    float r = 0.0f;
    for (mpfr_prec_t w = 64;; w *= 2) {
        mpfr_inits2(w, lo, hi, (mpfr_ptr)0);
        int il = base2 ? mpfr_exp2(lo, x, MPFR_RNDD) : mpfr_exp(lo, x, MPFR_RNDD);
        if (il == 0) {
            r = mpfr_get_flt(lo, MPFR_RNDN);
            mpfr_clears(lo, hi, (mpfr_ptr)0);
            break;
        }
        if (base2)
            mpfr_exp2(hi, x, MPFR_RNDU);
        else
            mpfr_exp(hi, x, MPFR_RNDU);
        float fl = mpfr_get_flt(lo, MPFR_RNDN), fh = mpfr_get_flt(hi, MPFR_RNDN);
        mpfr_clears(lo, hi, (mpfr_ptr)0);
        if (fl == fh || w >= (mpfr_prec_t)1 << 20) {
            r = fl;
            break;
        }
    }
    mpfr_clear(x);
    return r;
}

float abl_exp_rn32(float y)
{
    if (y <= -104.0f)
        return 0.0f;          /* exp(y) < 2^-150: rounds to 0 */
    if (y >= 89.0f)
        return INFINITY;      /* exp(y) > 2^128 */
    if (y == 0.0f)
        return 1.0f;
    double d = exp((double)y);
    if (near_boundary32(d))
        return exp_mpfr(y, 0);
    return (float)d;
}

float abl_exp2_rn32(float y)
{
    if (y <= -150.0f)
        return 0.0f;          /* 2^y <= 2^-150: rounds to 0 (the tie at -150 goes to the even 0) */
    if (y >= 128.0f)
        return INFINITY;
    double d = exp2((double)y);
    if (near_boundary32(d))
        return exp_mpfr(y, 1);
    return (float)d;
}

/* 2^e as a binary32 bit pattern (vpow2i_vf_vi2), e in -126..127 */
static float pow2i(int e)
{
    uint32_t u = (uint32_t)(e + 127) << 23;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float abl_exp_sleef_u10(float d)
{
    /* SLEEF 3.5 xexpf (sleefsimdsp.c) as compiled for AVX2/AVX-512 with FMA: vmla = fmaf, vrint =
     * round to nearest even, vldexp2 = two multiplications by powers of two. */
    if (d < -104.0f)
        return 0.0f;
    if (d > 100.0f)
        return INFINITY;
    float q = nearbyintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    int qi = (int)q;
    float s = fmaf(q, -0.693145751953125f, d);
    s = fmaf(q, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = 1.0f + fmaf(s * s, u, s);
    int e1 = qi >= 0 ? qi / 2 : -((1 - qi) / 2);   /* arithmetic shift right by 1 */
    u = u * pow2i(e1);
    return u * pow2i(qi - e1);
}

void abl_xacc_clear(abl_xacc *a)
{
    memset(a, 0, sizeof *a);
}

void abl_xacc_add(abl_xacc *a, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    uint32_t ef = (u >> 23) & 0xFFu, man = u & 0x7FFFFFu;
    if (v <= 0.0f)
        return;
    uint64_t m = ef == 0 ? man : (man | 0x800000u);
    unsigned sh = ef == 0 ? 0 : ef - 1;       /* value = m * 2^(sh - 149) */
    unsigned wi = sh / 64, off = sh % 64;
    uint64_t lo = m << off, hi = off ? m >> (64 - off) : 0;
    uint64_t old = a->w[wi];
    a->w[wi] = old + lo;
    uint64_t carry = hi + (a->w[wi] < old);
    for (unsigned k = wi + 1; k < 4 && carry; k++) {
        old = a->w[k];
        a->w[k] = old + carry;
        carry = a->w[k] < old;
    }
}

static int top_bit(uint64_t x)
{
    int n = 63;
    while (!(x >> n))
        n--;
    return n;
}

/* bit `pos` of the accumulator */
static unsigned xbit(const abl_xacc *a, int pos)
{
    return (unsigned)((a->w[pos / 64] >> (pos % 64)) & 1u);
}

float abl_xacc_round32(const abl_xacc *a)
{
    int k = 3;
    while (k >= 0 && a->w[k] == 0)
        k--;
    if (k < 0)
        return 0.0f;
    int P = 64 * k + top_bit(a->w[k]);        /* leading bit: 2^(P - 149) */
    if (P <= 23)
        return (float)ldexp((double)a->w[0], -149);   /* exact (subnormal or small normal) */
    uint64_t mant = 0;
    for (int b = P; b >= P - 23; b--)
        mant = (mant << 1) | xbit(a, b);
    unsigned round = xbit(a, P - 24);
    unsigned sticky = 0;
    int low = P - 25;                          /* bits 0..low */
    if (low >= 0) {
        int wl = low / 64;
        for (int w = 0; w < wl && !sticky; w++)
            sticky = a->w[w] != 0;
        int nb = low % 64 + 1;
        uint64_t mask = nb == 64 ? ~(uint64_t)0 : (((uint64_t)1 << nb) - 1);
        if (a->w[wl] & mask)
            sticky = 1;
    }
    if (round && (sticky || (mant & 1u)))
        mant++;
    return (float)ldexp((double)mant, P - 23 - 149);
}

abl_status abl_emul_init(const abl_pipeline *p, uint64_t n, abl_emul *out)
{
    if (p == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (abl_pipeline_check_msg(p, NULL) != ABL_OK)
        return ABL_ERR_UNSUPPORTED;
    memset(out, 0, sizeof *out);
    out->form = p->bias_form;
    out->offset = (uint64_t)p->bias_offset;
    out->softmax = p->softmax;
    out->sum = p->sum;
    out->normalise = p->normalise;
    out->exp = p->exp;
    out->block = p->block;
    out->n = n;
    abl_status st;
    if ((st = abl_fp_init(&p->slope_dtype, &out->slope)) != ABL_OK ||
        (st = abl_fp_init(&p->product_dtype, &out->prod)) != ABL_OK ||
        (st = abl_fp_init(&p->bias_dtype, &out->bias)) != ABL_OK ||
        (st = abl_fp_init(&p->logit_dtype, &out->logit)) != ABL_OK ||
        (st = abl_fp_init(&p->output_dtype, &out->out)) != ABL_OK)
        return st;
    out->bias_add = p->bias_add;
    out->slope_calc = p->slope_calc;
    if (abl_emul_ggml(out) && (st = abl_emul_ggml_init(p, out)) != ABL_OK)
        return st;
    if (abl_emul_engine(out) && (st = abl_emul_engine_init(p, out)) != ABL_OK)
        return st;
    if ((st = abl_influence_init(p, out)) != ABL_OK)   /* abl_influence.c */
        return st;
    if (p->bias_scale.num == 0 || p->bias_scale.den == 0)
        return ABL_ERR_BAD_NUMBER;
    out->has_scale = p->bias_scale.num != p->bias_scale.den;
    {
        mpq_t q;
        mpq_init(q);
        mpz_import(mpq_numref(q), 1, -1, sizeof p->bias_scale.num, 0, 0, &p->bias_scale.num);
        mpz_import(mpq_denref(q), 1, -1, sizeof p->bias_scale.den, 0, 0, &p->bias_scale.den);
        mpq_canonicalize(q);
        mpfr_t t;
        mpfr_init2(t, 24);
        mpfr_set_q(t, q, MPFR_RNDN);   /* the kernel multiplies by an fp32 scalar */
        out->scale = mpfr_get_flt(t, MPFR_RNDN);
        mpfr_clear(t);
        mpq_clear(q);
    }
    /* Python: softmax_scale = head_dim ** -0.5 (binary64), passed to the kernel as float;
     * params.scale_softmax_log2 = softmax_scale * M_LOG2E evaluated in binary64, stored as float. */
    out->sm_scale = (float)pow((double)p->head_dim, -0.5);
    out->c_log2 = (float)((double)out->sm_scale * 1.44269504088896340736);
    return ABL_OK;
}

abl_status abl_emul_head_init(const abl_emul *e, const abl_slope *s, abl_emul_head *out)
{
    double held;
    abl_status st = abl_fp_round_slope(&e->slope, s, &held);
    if (st != ABL_OK)
        return st;
    return abl_emul_head_init_value(e, held, out);
}

abl_status abl_emul_head_init_value(const abl_emul *e, double value, abl_emul_head *out)
{
    double held = abl_fp_round(&e->slope, value);
    if (!(held > 0.0) || !isfinite(held))
        return ABL_ERR_DEGENERATE;
    out->held = held;
    if (e->softmax == ABL_SOFTMAX_FLASH_SPLITKV)   /* the flash kernel's alibi_slope / params.scale_softmax */
        out->factor = (float)(held / (double)e->sm_scale);
    else if (abl_emul_ggml(e) || abl_emul_engine(e))
        out->factor = (float)held;                           /* ggml multiplies the fp32 slope itself */
    else if (e->softmax == ABL_SOFTMAX_FLASH)
        out->factor = (float)(held / (double)e->sm_scale);   /* alibi_slope / params.scale_softmax */
    else
        out->factor = (float)abl_fp_round(&e->prod, held);   /* slopes cast to the product dtype */
    if (!isfinite(out->factor) || out->factor <= 0.0f)
        return ABL_ERR_DEGENERATE;
    return ABL_OK;
}

float abl_emul_bias_mag(const abl_emul *e, const abl_emul_head *h, uint64_t pos)
{
    if (abl_emul_engine(e))
        return abl_engine_bias_mag(e, h, pos);
    if (abl_emul_ggml(e))   /* slope * |mask|: +inf where the fp16 mask is -inf */
        return (float)((double)h->factor * abl_fp_round(&e->mask, (double)pos));
    if (e->softmax == ABL_SOFTMAX_FLASH)
        return (float)((double)h->factor * (double)pos);
    /* the integer position, cast (Refact: the cumulative count j + 1, bias-offset) */
    double pp = abl_fp_round(&e->prod, (double)(pos + e->offset));
    double prod = abl_fp_round(&e->prod, (double)h->factor * pp); /* exact binary64 product, one rounding */
    return (float)abl_fp_round(&e->bias, prod);
}

/* The bias as the mask holds it: bias-dtype(fp32(b * fp32(c))) (b itself when c = 1). */
static float mask_bias(const abl_emul *e, float b)
{
    if (!e->has_scale)
        return b;
    return (float)abl_fp_round(&e->bias, (double)(float)((double)b * (double)e->scale));
}

float abl_emul_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos, float mag)
{
    int neg = e->form != ABL_BIAS_ABSOLUTE;
    if (abl_emul_ggml(e))
        return abl_ggml_logit(e, h, score, pos, mag);
    if (abl_emul_engine(e))
        return abl_engine_logit(e, h, score, pos, mag);
    if (e->softmax == ABL_SOFTMAX_FLASH)
        return fmaf(neg ? -h->factor : h->factor, (float)pos, score);
    float b = neg ? -mag : mag, t;
    switch (e->bias_add) {
    case ABL_BIAS_ADD_MASK:
        t = e->has_scale ? (float)((double)score * (double)e->scale) : score;
        t = (float)((double)t + (double)mask_bias(e, b));
        break;
    case ABL_BIAS_ADD_BOTH:
        t = (float)((double)score + (double)b);
        if (e->has_scale)
            t = (float)((double)t * (double)e->scale);
        t = (float)((double)t + (double)mask_bias(e, b));
        break;
    default:
        t = (float)((double)score + (double)b);
        if (e->has_scale)
            t = (float)((double)t * (double)e->scale);
        break;
    }
    return abl_fp_round32(&e->logit, t);
}

float abl_emul_sum(const abl_emul *e, const float *ex, uint64_t count, uint64_t n)
{
    unsigned lanes = e->sum == ABL_SUM_VEC8 ? 8 : e->sum == ABL_SUM_VEC16 ? 16 : 0;
    if (e->sum == ABL_SUM_EXACT) {
        abl_xacc a;
        abl_xacc_clear(&a);
        for (uint64_t j = 0; j < count; j++)
            abl_xacc_add(&a, ex[j]);
        return abl_xacc_round32(&a);
    }
    if (lanes == 0 || n < lanes) {
        /* reduce_all on a row shorter than a vector is sequential too */
        float s = 0.0f;
        for (uint64_t j = 0; j < count; j++)
            s = (float)((double)s + (double)ex[j]);
        return s;
    }
    /* Lane k accumulates keys k, k + L, k + 2L, ... in order; then the shuffle tree adds lane k
     * and lane k + L/2, halving until one lane is left (vec_reduce_all's permute/shuffle steps). */
    float acc[16] = {0};
    for (uint64_t j = 0; j < count; j++) {
        unsigned k = (unsigned)(j % lanes);
        acc[k] = j < lanes ? ex[j] : (float)((double)acc[k] + (double)ex[j]);
    }
    for (unsigned w = lanes / 2; w >= 1; w /= 2)
        for (unsigned k = 0; k < w; k++)
            acc[k] = (float)((double)acc[k] + (double)acc[k + w]);
    return acc[0];
}
