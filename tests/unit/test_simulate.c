/* Unit tests: `simulate` against a brute-force emulation written here with MPFR for every operation
 * (a different, slow implementation of the documented model: docs/pipelines.md), weight by weight,
 * Gaussian logits regenerated here from their definition, the TV distance recomputed at 256 bits,
 * plus hand-derived cases from spec §9. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <gmp.h>
#include <mpfr.h>
#include "alibi_blind.h"
#include "abl_test_schedule.h"

/* The message pointer for one more call: the previous call's message freed (the library sets *msg
 * afresh on every call and the caller owns what it gets). */
static char **fresh(char **msg)
{
    free(*msg);
    *msg = NULL;
    return msg;
}

#define NMAX 200

/* ---- reference roundings (spec §2 recipe) ---- */

static void rnd_fmt(mpfr_t x, const abl_format *f)
{
    if (mpfr_zero_p(x) || !mpfr_number_p(x))
        return;
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t t;
    mpfr_init2(t, f->precision);
    int inex = mpfr_set(t, x, MPFR_RNDN);
    mpfr_set_emin(f->emin - f->precision + 2);
    mpfr_set_emax(f->emax + 1);
    inex = mpfr_check_range(t, inex, MPFR_RNDN);
    mpfr_subnormalize(t, inex, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_set(x, t, MPFR_RNDN);
    mpfr_clear(t);
    double maxv = ldexp(ldexp(1.0, f->precision) - 1.0 - f->max_deficit, (int)f->emax - f->precision + 1);
    if (mpfr_cmpabs_ui(x, 0) > 0 && fabs(mpfr_get_d(x, MPFR_RNDN)) > maxv) {
        int neg = mpfr_sgn(x) < 0;
        if (f->flags & ABL_FMT_HAS_INF)
            mpfr_set_inf(x, neg ? -1 : 1);
        else
            mpfr_set_d(x, neg ? -maxv : maxv, MPFR_RNDN);
    }
}

static abl_format g_fp32;

static void r32(mpfr_t x)
{
    rnd_fmt(x, &g_fp32);
}

/* ---- Gaussian logits, regenerated from their definition ----
 *
 * docs/pipelines.md "Gaussian logits": a counter-based generator, splitmix64 of the packed indices,
 * Box-Muller with log, cos, sin; the score is fp32(eps). The packing and the uniforms are written
 * down only in src/lib/abl_simulate.c's comment and code: (head - 1, i, k = j/2) in 16 + 24 + 24
 * bits, xor splitmix64(seed); a second word splitmix64(h1 ^ 0xD1B54A32D192ED03); u1 =
 * ((h1 >> 11) + 1)·2^-53 in (0, 1], u2 = (h2 >> 11)·2^-53 in [0, 1); r = sqrt(-2 ln u1),
 * t = RN(2π)·u2; eps = S·r·cos t for even j, S·r·sin t for odd j (keys 2k, 2k + 1 share a draw),
 * every operation in binary64.
 *
 * ln, cos and sin are evaluated here with MPFR, correctly rounded to binary64. The emulator calls
 * the host's log, cos and sin, and glibc does not aim for correct rounding (glibc manual, "Known
 * Maximum Errors in Math Functions"): they can differ. Measured on glibc 2.36 over 400,000 draws of
 * this generator, 315 log, 582 cos and 512 sin results differ from the correctly rounded value, each
 * by one ulp. So for every draw the fp32 score is also formed from each combination of neighbours
 * (±1 ulp) of the correctly rounded ln and cos/sin; when those scores all agree (the usual case: an
 * ulp of binary64 rarely crosses an fp32 rounding boundary; none of this test's draws does on that
 * host) the logit is compared exactly, otherwise the emulator's logit must be the logit of one of
 * them. sqrt, the products and -2x are IEEE operations, correctly rounded on every host. A libm
 * more than 1 ulp off could fail here near an fp32 boundary: that would be a real host difference. */

static uint64_t splitmix64(uint64_t x)
{
    /* Steele, Lea, Flood (2014); the constants of Vigna's reference splitmix64.c */
    uint64_t z = x + 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double g_two_pi;   /* RN53(2π), from MPFR */
static int g_libm_ambiguous, g_draws;

#define MAX_SCORES 9

typedef struct draw {
    double eps;                  /* S·z with correctly rounded ln and cos/sin (binary64) */
    int nscores;
    double score[MAX_SCORES];    /* fp32 scores the host's libm may give; [0] from the correct ones */
} draw;

static double mpfr_fn53(int (*fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), double x)
{
    mpfr_t a, r;
    mpfr_init2(a, 53);
    mpfr_init2(r, 53);
    mpfr_set_d(a, x, MPFR_RNDN);
    fn(r, a, MPFR_RNDN);   /* emin/emax are MPFR's defaults here: no subnormal binary64 results arise */
    double v = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clear(a);
    mpfr_clear(r);
    return v;
}

/* The exact logit std a test asks for (parsed here, as the CLI would). */
static mpq_t std_value;
static mpq_srcptr std_q(const char *text)
{
    if (text == NULL)
        return NULL;
    assert_int_equal(abl_decimal_to_mpq(text, std_value), ABL_OK);
    return std_value;
}

static void gauss_ref(uint64_t seed, int head, int i, int j, double std, draw *d)
{
    uint64_t key = (uint64_t)(head - 1) << 48 | (uint64_t)i << 24 | (uint64_t)(j / 2);
    uint64_t h1 = splitmix64(key ^ splitmix64(seed));
    uint64_t h2 = splitmix64(h1 ^ 0xd1b54a32d192ed03u);
    double u1 = ldexp((double)((h1 >> 11) + 1), -53);   /* exact: at most 53 significant bits */
    double u2 = ldexp((double)(h2 >> 11), -53);
    double t = g_two_pi * u2;
    double L = mpfr_fn53(mpfr_log, u1);
    double C = mpfr_fn53(j % 2 ? mpfr_sin : mpfr_cos, t);
    double Ls[3] = {L, nextafter(L, -INFINITY), nextafter(L, INFINITY)};
    double Cs[3] = {C, nextafter(C, -INFINITY), nextafter(C, INFINITY)};
    mpfr_t e;
    mpfr_init2(e, 53);
    d->nscores = 0;
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            double eps = std * (sqrt(-2.0 * Ls[a]) * Cs[b]);
            if (a == 0 && b == 0)
                d->eps = eps;
            mpfr_set_d(e, eps, MPFR_RNDN);
            r32(e);
            double sc = mpfr_get_d(e, MPFR_RNDN);
            int seen = 0;
            for (int k = 0; k < d->nscores; k++)
                seen |= d->score[k] == sc && signbit(d->score[k]) == signbit(sc);
            if (!seen)
                d->score[d->nscores++] = sc;
        }
    }
    mpfr_clear(e);
    g_draws++;
    g_libm_ambiguous += d->nscores > 1;
}

/* ---- the reference pipeline ---- */

typedef struct ref {
    abl_pipeline p;
    int n;
    double L[NMAX][NMAX];   /* logits */
    double W[NMAX][NMAX];   /* weights as rounded into the output dtype (flash: P) */
    int zeros_matrix, zeros_row, first_blind;
    /* last row, for the TV distance */
    double eps[NMAX];       /* the scores before the fp32 rounding (0: zero logits) */
    double E[NMAX];         /* flash: e before the output rounding */
    double run[NMAX];       /* flash: the running max when key j was processed */
    double c_log2;          /* flash: fp32(σ·log2 e) */
} ref;

static uint64_t pos_of(const abl_pipeline *p, int n, int i, int j)
{
    switch (p->bias_form) {
    case ABL_BIAS_ABSOLUTE: return (uint64_t)j;
    case ABL_BIAS_TRAILING: return (uint64_t)(n - 1 - j);
    default: return (uint64_t)(i - j);
    }
}

/* Per-head constants of the logit: the held slope in the product dtype (eager) or fp32(held/σ)
 * (flash), and fp32(bias-scale). All are binary32 values, held exactly in binary64. */
typedef struct ref_head {
    double prod_slope, flash_factor, scale;
} ref_head;

static void ref_head_init(const abl_pipeline *p, mpfr_srcptr slope_exact, ref_head *rh)
{
    mpfr_t held, sm, t;
    mpfr_inits2(256, held, sm, t, (mpfr_ptr)0);
    mpfr_set(held, slope_exact, MPFR_RNDN);
    rnd_fmt(held, &p->slope_dtype);   /* one rounding of the exact slope */
    /* flash: softmax scale as Python passes it (binary64 head_dim^-0.5, then float) */
    mpfr_set_ui(sm, (unsigned long)p->head_dim, MPFR_RNDN);
    mpfr_rec_sqrt(sm, sm, MPFR_RNDN);
    mpfr_prec_round(sm, 53, MPFR_RNDN);
    r32(sm);
    mpfr_div(t, held, sm, MPFR_RNDN);
    r32(t);
    rh->flash_factor = mpfr_get_d(t, MPFR_RNDN);
    mpfr_set(t, held, MPFR_RNDN);
    rnd_fmt(t, &p->product_dtype);
    rh->prod_slope = mpfr_get_d(t, MPFR_RNDN);
    mpfr_set_ui(t, (unsigned long)p->bias_scale.num, MPFR_RNDN);
    mpfr_div_ui(t, t, (unsigned long)p->bias_scale.den, MPFR_RNDN);
    r32(t);
    rh->scale = mpfr_get_d(t, MPFR_RNDN);
    mpfr_clears(held, sm, t, (mpfr_ptr)0);
}

/* The logit of key j in row i for an fp32 score (docs/pipelines.md §1 steps 2, 3 and 5). Sums and
 * products of these binary32-sized operands are exact at 256 bits, so each rN() is the one rounding
 * the model prescribes. */
static double ref_logit(const ref *R, const ref_head *rh, int i, int j, double score)
{
    const abl_pipeline *p = &R->p;
    int neg = p->bias_form != ABL_BIAS_ABSOLUTE;
    double pos = (double)pos_of(p, R->n, i, j);
    mpfr_t a, b;
    mpfr_inits2(256, a, b, (mpfr_ptr)0);
    if (p->softmax == ABL_SOFTMAX_FLASH) {
        mpfr_set_d(a, rh->flash_factor, MPFR_RNDN);
        mpfr_mul_d(a, a, neg ? -pos : pos, MPFR_RNDN);
        assert_int_equal(mpfr_add_d(a, a, score, MPFR_RNDN), 0);   /* exact: the fma rounds once, next */
        r32(a);
    } else {
        mpfr_set_d(b, pos, MPFR_RNDN);
        rnd_fmt(b, &p->product_dtype);
        mpfr_mul_d(a, b, rh->prod_slope, MPFR_RNDN);
        rnd_fmt(a, &p->product_dtype);
        rnd_fmt(a, &p->bias_dtype);
        if (neg)
            mpfr_neg(a, a, MPFR_RNDN);
        assert_int_equal(mpfr_add_d(a, a, score, MPFR_RNDN), 0);
        r32(a);                                                    /* fp32(s + b) */
        mpfr_mul_d(a, a, rh->scale, MPFR_RNDN);
        r32(a);                                                    /* fp32(· c) (c = 1: exact) */
        rnd_fmt(a, &p->logit_dtype);
    }
    double v = mpfr_get_d(a, MPFR_RNDN);
    mpfr_clears(a, b, (mpfr_ptr)0);
    return v;
}

static void ref_sum(const abl_pipeline *p, mpfr_t *e, int count, int n, mpfr_t s)
{
    mpfr_set_zero(s, 1);
    if (p->sum == ABL_SUM_EXACT) {
        for (int j = 0; j < count; j++)
            mpfr_add(s, s, e[j], MPFR_RNDN);   /* 256 bits hold these sums exactly */
        r32(s);
        return;
    }
    int lanes = p->sum == ABL_SUM_VEC8 ? 8 : p->sum == ABL_SUM_VEC16 ? 16 : 1;
    if (lanes == 1 || n < lanes) {
        for (int j = 0; j < count; j++) {
            mpfr_add(s, s, e[j], MPFR_RNDN);
            r32(s);
        }
        return;
    }
    mpfr_t acc[16];
    for (int k = 0; k < lanes; k++) {
        mpfr_init2(acc[k], 256);
        mpfr_set_zero(acc[k], 1);
    }
    for (int j = 0; j < count; j++) {
        mpfr_add(acc[j % lanes], acc[j % lanes], e[j], MPFR_RNDN);
        r32(acc[j % lanes]);
    }
    /* torch's vec_reduce_all: lane k += lane k + L/2, halving */
    for (int w = lanes / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) {
            mpfr_add(acc[k], acc[k], acc[k + w], MPFR_RNDN);
            r32(acc[k]);
        }
    mpfr_set(s, acc[0], MPFR_RNDN);
    for (int k = 0; k < lanes; k++)
        mpfr_clear(acc[k]);
}

static void ref_weights(ref *R)
{
    const abl_pipeline *p = &R->p;
    int n = R->n;
    mpfr_t e[NMAX], x, m, y, s, r, c, ms, t;
    for (int j = 0; j < NMAX; j++)
        mpfr_init2(e[j], 256);
    mpfr_inits2(256, x, m, y, s, r, c, ms, t, (mpfr_ptr)0);
    /* flash constants */
    mpfr_set_ui(c, (unsigned long)p->head_dim, MPFR_RNDN);
    mpfr_rec_sqrt(c, c, MPFR_RNDN);
    mpfr_prec_round(c, 53, MPFR_RNDN);
    r32(c);
    mpfr_set_prec(t, 53);
    mpfr_const_log2(t, MPFR_RNDN);
    mpfr_set_prec(y, 256);
    mpfr_ui_div(y, 1, t, MPFR_RNDN);
    mpfr_prec_round(y, 53, MPFR_RNDN);   /* M_LOG2E */
    mpfr_set_prec(t, 256);
    mpfr_mul(c, c, y, MPFR_RNDN);
    mpfr_prec_round(c, 53, MPFR_RNDN);   /* float * double in binary64 */
    r32(c);
    R->c_log2 = mpfr_get_d(c, MPFR_RNDN);
    mpfr_set_prec(y, 256);               /* y held M_LOG2E at 53 bits; the fma below needs it wide */
    R->zeros_matrix = 0;
    for (int i = 0; i < n; i++) {
        int count = i + 1;
        double M = R->L[i][0];
        for (int j = 1; j < count; j++)
            if (R->L[i][j] > M)
                M = R->L[i][j];
        if (p->softmax == ABL_SOFTMAX_EAGER) {
            for (int j = 0; j < count; j++) {
                mpfr_set_d(y, R->L[i][j], MPFR_RNDN);
                mpfr_sub_d(y, y, M, MPFR_RNDN);              /* exact at 256 bits */
                r32(y);
                mpfr_exp(e[j], y, MPFR_RNDN);
                r32(e[j]);
            }
            ref_sum(p, e, count, n, s);
            mpfr_ui_div(r, 1, s, MPFR_RNDN);
            r32(r);
            for (int j = 0; j < count; j++) {
                if (p->normalise == ABL_NORM_DIVIDE)
                    mpfr_div(x, e[j], s, MPFR_RNDN);
                else
                    mpfr_mul(x, e[j], r, MPFR_RNDN);
                r32(x);
                rnd_fmt(x, &p->output_dtype);
                R->W[i][j] = mpfr_get_d(x, MPFR_RNDN);
            }
        } else {
            int B = p->block > 0 ? p->block : count;
            double run = -INFINITY;
            for (int top = i / B; top >= 0; top--) {
                int lo = top * B, hi = lo + B - 1 < i ? lo + B - 1 : i;
                for (int j = lo; j <= hi; j++)
                    if (R->L[i][j] > run)
                        run = R->L[i][j];
                mpfr_set_d(ms, run, MPFR_RNDN);
                mpfr_mul(ms, ms, c, MPFR_RNDN);
                r32(ms);
                for (int j = lo; j <= hi; j++) {
                    mpfr_set_d(x, R->L[i][j], MPFR_RNDN);
                    mpfr_mul(y, x, c, MPFR_RNDN);
                    mpfr_sub(y, y, ms, MPFR_RNDN);   /* exact at 256 bits: the fma's one rounding next */
                    r32(y);
                    if (mpfr_cmp_si(y, -126) < 0) {
                        mpfr_set_zero(x, 1);         /* ex2.approx.ftz flushes */
                    } else {
                        mpfr_exp2(x, y, MPFR_RNDN);
                        r32(x);
                    }
                    if (i == n - 1) {
                        R->E[j] = mpfr_get_d(x, MPFR_RNDN);
                        R->run[j] = run;
                    }
                    rnd_fmt(x, &p->output_dtype);
                    R->W[i][j] = mpfr_get_d(x, MPFR_RNDN);
                }
            }
        }
        for (int j = 0; j < count; j++)
            R->zeros_matrix += R->W[i][j] == 0.0;
    }
    R->zeros_row = 0;
    R->first_blind = -1;
    for (int j = 0; j < n; j++)
        R->zeros_row += R->W[n - 1][j] == 0.0;
    for (int d = 0; d < n; d++)
        if (R->W[n - 1][n - 1 - d] == 0.0) {
            R->first_blind = d;
            break;
        }
    for (int j = 0; j < NMAX; j++)
        mpfr_clear(e[j]);
    mpfr_clears(x, m, y, s, r, c, ms, t, (mpfr_ptr)0);
}

/* ---- capture of the emulator's rows ---- */

typedef struct capture {
    int n;
    float L[4][NMAX][NMAX];
    float W[4][NMAX][NMAX];
    int seen[4][NMAX];
} capture;

static void hook(void *ctx, int head, uint64_t row, const float *logits, const float *weights)
{
    capture *c = ctx;
    for (uint64_t j = 0; j <= row; j++) {
        c->L[head - 1][row][j] = logits[j];
        c->W[head - 1][row][j] = weights[j];
    }
    c->seen[head - 1][row]++;
}

/*
 * The TV distance of the last row (docs/pipelines.md, "Reported per head"): 0.5·Σ|p − p_exact| with
 * p the weight as it acts on V (eager: the output-dtype weight; flash: P·2^(c·(M_run − M))/l with
 * l = Σ e·2^(c·(M_run − M)), e the binary32 exp2 before the output rounding) and p_exact the
 * softmax of eps − m·d with the exact slope m. Here everything is evaluated at 256 bits, so the
 * result is the exact TV distance of the reference's weights to within 2^-200.
 *
 * The emulator evaluates the same expressions in binary64 (that is its documented definition), so
 * it differs from this value by its rounding errors, bounded as follows with u = 2^-53 and Z the
 * largest of |eps| + m·d + |z − max z| (and, for flash, |c·(M_run − M)|) over the row:
 * m in binary64 (u relative), m·d and eps − m·d and z − max (3 roundings, each ≤ Z·u absolute),
 * eps itself if the host's log/cos/sin miss the correct rounding (≤ 4 ulps of eps ≤ 4Z·u), so each
 * exp argument is within 8Z·u and exp(·) (glibc: < 1 ulp) within (8Z + 2)·u relative; the sum of
 * n terms and the division add (n + 2)·u relative; flash's factors and l the same again. |p − q|
 * and the final sum of n terms add n·u relative to a total ≤ 2. With Σp = Σp_exact = 1 that gives
 * |tv_emulated − tv_exact| ≤ (16Z + 4n + 16)·u; the tolerance below takes (16Z + 4n + 64)·u, 2e-14
 * to 7e-13 for these cases (the differences seen are ≤ 2e-16), while the TV distances themselves
 * are 6e-9 to 0.997 and, e.g., using the fp32 score instead of eps in p_exact moves them by ~4e-9.
 */
static double ref_tv(const ref *R, mpfr_srcptr m_exact, double *tol)
{
    int n = R->n, i = n - 1;
    mpfr_t z[NMAX], zmax, t, sum, l, p, acc;
    for (int j = 0; j < n; j++)
        mpfr_init2(z[j], 256);
    mpfr_inits2(256, zmax, t, sum, l, p, acc, (mpfr_ptr)0);
    mpfr_set_inf(zmax, -1);
    for (int j = 0; j <= i; j++) {
        mpfr_mul_ui(t, m_exact, (unsigned long)(i - j), MPFR_RNDN);
        mpfr_set_d(z[j], R->eps[j], MPFR_RNDN);
        mpfr_sub(z[j], z[j], t, MPFR_RNDN);
        if (mpfr_cmp(z[j], zmax) > 0)
            mpfr_set(zmax, z[j], MPFR_RNDN);
    }
    double Z = 0.0;
    mpfr_set_zero(sum, 1);
    for (int j = 0; j <= i; j++) {
        double zs = fabs(R->eps[j]) + mpfr_get_d(m_exact, MPFR_RNDN) * (double)(i - j);
        mpfr_sub(z[j], z[j], zmax, MPFR_RNDN);
        zs += fabs(mpfr_get_d(z[j], MPFR_RNDN));
        if (zs > Z)
            Z = zs;
        mpfr_exp(z[j], z[j], MPFR_RNDN);
        mpfr_add(sum, sum, z[j], MPFR_RNDN);
    }
    int flash = R->p.softmax == ABL_SOFTMAX_FLASH;
    double M = R->L[i][0];
    for (int j = 1; j <= i; j++)
        if (R->L[i][j] > M)
            M = R->L[i][j];
    mpfr_set_zero(l, 1);
    if (flash) {
        for (int j = 0; j <= i; j++) {
            double arg = R->c_log2 * (R->run[j] - M);   /* for the bound only */
            if (fabs(arg) > Z)
                Z = fabs(arg);
            mpfr_set_d(t, R->run[j], MPFR_RNDN);
            mpfr_sub_d(t, t, M, MPFR_RNDN);
            mpfr_mul_d(t, t, R->c_log2, MPFR_RNDN);
            mpfr_exp2(t, t, MPFR_RNDN);
            mpfr_mul_d(t, t, R->E[j], MPFR_RNDN);
            mpfr_add(l, l, t, MPFR_RNDN);
        }
    }
    mpfr_set_zero(acc, 1);
    for (int j = 0; j <= i; j++) {
        if (flash) {
            mpfr_set_d(p, R->run[j], MPFR_RNDN);
            mpfr_sub_d(p, p, M, MPFR_RNDN);
            mpfr_mul_d(p, p, R->c_log2, MPFR_RNDN);
            mpfr_exp2(p, p, MPFR_RNDN);
            mpfr_mul_d(p, p, R->W[i][j], MPFR_RNDN);
            mpfr_div(p, p, l, MPFR_RNDN);
        } else {
            mpfr_set_d(p, R->W[i][j], MPFR_RNDN);
        }
        mpfr_div(t, z[j], sum, MPFR_RNDN);
        mpfr_sub(t, p, t, MPFR_RNDN);
        mpfr_abs(t, t, MPFR_RNDN);
        mpfr_add(acc, acc, t, MPFR_RNDN);
    }
    mpfr_div_2ui(acc, acc, 1, MPFR_RNDN);
    double tv = mpfr_get_d(acc, MPFR_RNDN);
    *tol = ldexp(16.0 * Z + 4.0 * n + 64.0, -53);
    for (int j = 0; j < n; j++)
        mpfr_clear(z[j]);
    mpfr_clears(zmax, t, sum, l, p, acc, (mpfr_ptr)0);
    return tv;
}

/* Emulate `spec` with the given slopes (exact binary64 decimals), seed and thread count, and compare
 * every logit and weight, the per-head statistics and the TV distance with the reference. */
static void check_case_seeded(const char *spec, const char *dtype, const char *slopes, int n, const char *std,
                              uint64_t seed, int threads)
{
    assert_true(n <= NMAX);
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, &model, &cfg.pipeline, fresh(&err)), ABL_OK);
    cfg.slopes = abl_test_schedule(slopes);
    cfg.context = (uint64_t)n;
    cfg.logit_std = std_q(std);
    cfg.seed = seed;
    cfg.threads = threads;
    static capture cap;
    memset(&cap, 0, sizeof cap);
    cfg.row_hook = hook;
    cfg.row_hook_ctx = &cap;
    abl_simulation sim;
    abl_status st = abl_simulate_run(&cfg, &sim);
    if (st != ABL_OK)
        print_error("%s %s: status %d\n", spec, dtype, (int)st);
    assert_int_equal(st, ABL_OK);
    assert_true(sim.heads <= 4);
    /* the standard deviation: the test's values are binary64-exact decimals, so reading them needs
     * no rounding rule; "0" means zero logits (simulate.h) */
    double stdv = 0.0;
    if (std != NULL) {
        mpfr_t v;
        mpfr_init2(v, 256);
        assert_int_equal(mpfr_set_str(v, std, 10, MPFR_RNDN), 0);
        stdv = mpfr_get_d(v, MPFR_RNDN);
        assert_int_equal(mpfr_cmp_d(v, stdv), 0);
        mpfr_clear(v);
    }
    int gaussian = stdv != 0.0;
    static ref R;
    for (int h = 0; h < sim.heads; h++) {
        for (int i = 0; i < n; i++)
            assert_int_equal(cap.seen[h][i], 1);
        memset(&R, 0, sizeof R);
        R.p = cfg.pipeline;
        R.n = n;
        /* the exact slope from its decimal text (the list entry; exact at 256 bits) */
        char list[256];
        snprintf(list, sizeof list, "%s", slopes + 7);
        char *tok = strtok(list, ",");
        for (int k = 0; k < h; k++)
            tok = strtok(NULL, ",");
        mpfr_t m;
        mpfr_init2(m, 256);
        mpfr_set_str(m, tok, 10, MPFR_RNDN);
        ref_head rh;
        ref_head_init(&R.p, m, &rh);
        /* a slopes: list gives head h its list position as model index, which keys the generator */
        assert_int_equal(sim.results[h].slope.index, h + 1);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j <= i; j++) {
                draw d = {0.0, 1, {0.0}};
                if (gaussian)
                    gauss_ref(seed, h + 1, i, j, stdv, &d);
                if (i == n - 1)
                    R.eps[j] = d.eps;
                double L = ref_logit(&R, &rh, i, j, d.score[0]);
                /* a last-bit difference of the host's log/cos/sin could only show here */
                for (int k = 1; k < d.nscores && (double)cap.L[h][i][j] != L; k++) {
                    double alt = ref_logit(&R, &rh, i, j, d.score[k]);
                    if ((double)cap.L[h][i][j] == alt)
                        L = alt;
                }
                R.L[i][j] = L;
            }
        }
        ref_weights(&R);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j <= i; j++) {
                if ((double)cap.L[h][i][j] != R.L[i][j] || (double)cap.W[h][i][j] != R.W[i][j]) {
                    print_error("%s %s head %d (%d,%d): logit %a want %a, weight %a want %a\n", spec, dtype, h + 1,
                                i, j, (double)cap.L[h][i][j], R.L[i][j], (double)cap.W[h][i][j], R.W[i][j]);
                    fail();
                }
            }
        }
        const abl_sim_head *a = &sim.results[h];
        assert_int_equal(a->matrix_zeros, R.zeros_matrix);
        assert_int_equal(a->row_zeros, R.zeros_row);
        assert_int_equal(a->first_blind, R.first_blind);
        /* last-row ties, counted here from the reference logits */
        double *last = R.L[n - 1];
        int distinct = 0, longest = 1, run = 1, tied = 0;
        for (int j = 0; j < n; j++) {
            int first = 1;
            for (int k = 0; k < j; k++)
                if (last[k] == last[j])
                    first = 0;
            distinct += first;
            if (j > 0) {
                run = last[j] == last[j - 1] ? run + 1 : 1;
                if (run > longest)
                    longest = run;
            }
            if (j < n - 1 && last[j] == last[n - 1])
                tied++;
        }
        assert_int_equal(a->distinct_logits, distinct);
        assert_int_equal(a->longest_tie_run, longest);
        assert_int_equal(a->tied_with_diagonal, tied);
        double tol, tv = ref_tv(&R, m, &tol);
        if (!(fabs(a->tv_distance - tv) <= tol)) {
            print_error("%s %s head %d: TV distance %.17g want %.17g (tolerance %.3g)\n", spec, dtype, h + 1,
                        a->tv_distance, tv, tol);
            fail();
        }
        mpfr_clear(m);
    }
    abl_simulation_free(&sim);
    free(err);
}

static void check_case(const char *spec, const char *dtype, const char *slopes, int n, const char *std)
{
    check_case_seeded(spec, dtype, slopes, n, std, 3, 3);
}

static void test_against_reference(void **state)
{
    (void)state;
    const char *s3 = "slopes:0.5,0.0625,1.375";
    const char *s2 = "slopes:0.70703125,3.5";
    check_case("eager", "bf16", s3, 48, NULL);
    check_case("eager,sum=sequential", "bf16", s2, 40, NULL);
    check_case("eager,sum=vec8,normalise=divide", "fp16", s3, 37, NULL);
    check_case("eager,sum=vec16", "bf16", s2, 45, NULL);
    check_case("eager,sum=vec8", "bf16", s2, 6, NULL);         /* a row shorter than the lanes */
    check_case("eager,output-dtype=fp8-e4m3fn", "bf16", s3, 40, NULL);
    check_case("eager,output-dtype=fp8-e5m2,logit-dtype=fp8-e4m3fn", "fp16", s3, 33, NULL);
    check_case("eager,bias-form=symmetric,output-dtype=fp32", "fp32", s2, 30, NULL);
    check_case("bloom-hf", "bf16", s3, 48, NULL);
    check_case("bloom-hf", "fp16", s2, 41, NULL);
    check_case("bloom-hf,bias-dtype=fp8-e4m3fnuz,output-dtype=fp6-e3m2fn", "bf16", s3, 36, NULL);
    check_case("falcon-hf-eager,bias-add=scores", "bf16", s3, 48, NULL);
    check_case("falcon-hf-eager,bias-add=scores,bias-scale=0.3", "fp16", s2, 40, NULL);
    check_case("mpt", "bf16", s3, 48, NULL);
    check_case("mpt,product-dtype=tf32,sum=sequential", "fp16", s2, 44, NULL);
    check_case("flash2", "bf16", s3, 48, NULL);
    check_case("flash2,block=5,head-dim=96", "fp16", s3, 47, NULL);
    check_case("flash2,block=0,bias-form=relative,output-dtype=fp8-e5m2", "bf16", s2, 39, NULL);
    check_case("flash2,bias-form=trailing,block=7", "bf16", s2, 31, NULL);
    /* Gaussian logits, generated by the reference too */
    check_case("eager", "bf16", s3, 40, "4");
    check_case("eager,sum=vec8", "fp16", s2, 44, "2.5");
    check_case("mpt", "bf16", s3, 35, "30");
    check_case("flash2,block=4", "bf16", s3, 41, "6");
    check_case("flash2,block=3,output-dtype=fp16", "fp16", s2, 29, "20");
    /* fp32 outputs show the sum order at the last bit */
    check_case("eager,sum=vec8,output-dtype=fp32", "fp32", s3, 64, "3");
    check_case("eager,sum=vec16,output-dtype=fp32", "fp32", s3, 64, "3");
    check_case("eager,sum=sequential,output-dtype=fp32", "fp32", s3, 64, "3");
    check_case("eager,output-dtype=fp32", "fp32", s3, 64, "3");
}

static int run_threads(const char *spec, const char *dtype, const char *slopes, uint64_t n, const char *std,
                       int threads, abl_simulation *sim)
{
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, &model, &cfg.pipeline, fresh(&err)), ABL_OK);
    cfg.slopes = abl_test_schedule(slopes);
    cfg.context = n;
    cfg.logit_std = std_q(std);
    cfg.seed = 11;
    cfg.threads = threads;
    free(err);
    return abl_simulate_run(&cfg, sim);
}

static int run_one(const char *spec, const char *dtype, const char *slopes, uint64_t n, const char *std,
                   abl_simulation *sim)
{
    return run_threads(spec, dtype, slopes, n, std, 0, sim);
}

/* spec §9: in bf16 the absolute form stores m*j; near j = 2047 with m = 2^-0.5 the bf16 spacing is 8:
 * fp32(m)*j for j = 2043..2047 lies in (1444, 1452) and rounds to 1448 (the ties 1444 and 1452 go to
 * the even 1440 and 1456), j = 2042 gives 1443.91 -> 1440: four keys tie with the diagonal. */
static void test_bf16_absolute_ties(void **state)
{
    (void)state;
    abl_simulation sim;
    assert_int_equal(run_one("bloom-hf", "bf16", "slopes:0.70710678118654752440", 2048, NULL, &sim), ABL_OK);
    assert_int_equal(sim.results[0].tied_with_diagonal, 4);
    /* the relative form has no such ties: the diagonal logit 0 is unique */
    abl_simulation rel;
    assert_int_equal(run_one("eager", "bf16", "slopes:0.70710678118654752440", 2048, NULL, &rel), ABL_OK);
    assert_int_equal(rel.results[0].tied_with_diagonal, 0);
    abl_simulation_free(&sim);
    abl_simulation_free(&rel);
}

/* spec §9: fp16 output. flash2 rounds the unnormalised weight e = 2^(-m d log2 e) into fp16: zero
 * iff e <= 2^-25, i.e. m d >= 25 ln 2 = 17.3287: d = ceil(17.3287 / 0.0625) = 278. The eager
 * pipeline normalises first: zero iff e/S <= 2^-25, m d >= 25 ln 2 - ln S with
 * S = (1 - e^-(mN)) / (1 - e^-m): d = ceil((17.3287 - 2.8027) / 0.0625) = 233. */
static void test_fp16_rule(void **state)
{
    (void)state;
    mpfr_t a, b;
    mpfr_inits2(128, a, b, (mpfr_ptr)0);
    mpfr_const_log2(a, MPFR_RNDN);
    mpfr_mul_ui(a, a, 25, MPFR_RNDN);
    mpfr_div_d(b, a, 0.0625, MPFR_RNDN);
    mpfr_ceil(b, b);
    long want_flash = mpfr_get_si(b, MPFR_RNDN);
    double m = 0.0625, N = 512;
    double lnS = log((1 - exp(-m * N)) / (1 - exp(-m)));
    mpfr_sub_d(b, a, lnS, MPFR_RNDN);
    mpfr_div_d(b, b, m, MPFR_RNDN);
    mpfr_ceil(b, b);
    long want_eager = mpfr_get_si(b, MPFR_RNDN);
    mpfr_clears(a, b, (mpfr_ptr)0);
    assert_int_equal(want_flash, 278);
    assert_int_equal(want_eager, 233);
    abl_simulation sim;
    assert_int_equal(run_one("flash2,output-dtype=fp16,block=0", "fp16", "slopes:0.0625", 512, NULL, &sim), ABL_OK);
    assert_int_equal(sim.results[0].first_blind, want_flash);
    abl_simulation_free(&sim);
    assert_int_equal(run_one("eager", "fp16", "slopes:0.0625", 512, NULL, &sim), ABL_OK);
    assert_int_equal(sim.results[0].first_blind, want_eager);
    /* bf16 flash: flush-to-zero at 2^-126, d = ceil(126 ln 2 / m) = ceil(1397.4) */
    abl_simulation_free(&sim);
    assert_int_equal(run_one("flash2", "bf16", "slopes:0.0625", 1500, NULL, &sim), ABL_OK);
    assert_int_equal(sim.results[0].first_blind, 1398);
    abl_simulation_free(&sim);
}

/* docs/pipelines.md: "a seed gives the same matrix whatever the thread count"; and that matrix, its
 * zeros and its TV distance are the reference's. */
static void test_gaussian_reproducible(void **state)
{
    (void)state;
    abl_simulation a, b, c;
    assert_int_equal(run_threads("eager", "bf16", "slopes:0.5,0.25", 200, "5", 1, &a), ABL_OK);
    assert_int_equal(run_threads("eager", "bf16", "slopes:0.5,0.25", 200, "5", 3, &b), ABL_OK);
    assert_int_equal(a.threads_used, 1);
    for (int h = 0; h < 2; h++) {
        const abl_sim_head *x = &a.results[h], *y = &b.results[h];
        assert_int_equal(x->first_blind, y->first_blind);
        assert_int_equal(x->row_zeros, y->row_zeros);
        assert_int_equal(x->matrix_zeros, y->matrix_zeros);
        assert_int_equal(x->distinct_logits, y->distinct_logits);
        assert_int_equal(x->longest_tie_run, y->longest_tie_run);
        assert_int_equal(x->tied_with_diagonal, y->tied_with_diagonal);
        assert_memory_equal(&x->tv_distance, &y->tv_distance, sizeof x->tv_distance);
    }
    check_case_seeded("eager", "bf16", "slopes:0.5,0.25", 200, "5", 11, 1);
    check_case_seeded("eager", "bf16", "slopes:0.5,0.25", 200, "5", 11, 3);
    check_case_seeded("eager", "bf16", "slopes:0.5,0.25", 200, "0", 11, 2);
    /* zero logits, m = 1/4: bf16(d/4) is exact for d < 256 (at most 8 significant bits), so all
     * 200 logits of the last row differ */
    assert_int_equal(run_one("eager", "bf16", "slopes:0.5,0.25", 200, "0", &c), ABL_OK);
    assert_int_equal(c.results[1].distinct_logits, 200);
    assert_int_equal(c.results[1].longest_tie_run, 1);
    abl_simulation_free(&a);
    abl_simulation_free(&b);
    abl_simulation_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    abl_simulation sim;
    assert_int_equal(run_one("eager", "bf16", "slopes:0.5", 0, NULL, &sim), ABL_ERR_CONTEXT_RANGE);
    assert_int_equal(run_one("eager", "bf16", "slopes:0.5", ABL_SIMULATE_MAX_CONTEXT + 1, NULL, &sim),
                     ABL_ERR_CONTEXT_RANGE);
    assert_int_equal(run_one("eager,output-dtype=fp64", "bf16", "slopes:0.5", 8, NULL, &sim), ABL_ERR_UNSUPPORTED);
    /* fp16 bias overflows: 100 * 1000 > 65504 */
    assert_int_equal(run_one("bloom-hf", "fp16", "slopes:100", 1000, NULL, &sim), ABL_ERR_UNSUPPORTED);
    assert_int_equal(run_one("eager", "bf16", "slopes:0.5", 8, "2000", &sim), ABL_ERR_BAD_NUMBER);
    /* a schedule text is refused where it is parsed, at the boundary: the run only takes values */
    abl_schedule_spec bad;
    assert_int_equal(abl_schedule_spec_parse("nonsense", &bad, NULL), ABL_ERR_BAD_SLOPE_SPEC);
}

int main(void)
{
    assert_int_equal(abl_format_lookup("fp32", &g_fp32), ABL_OK);
    mpfr_t tp;
    mpfr_init2(tp, 53);
    mpfr_const_pi(tp, MPFR_RNDN);
    mpfr_mul_2ui(tp, tp, 1, MPFR_RNDN);   /* exact: RN53(2π) = 2·RN53(π) */
    g_two_pi = mpfr_get_d(tp, MPFR_RNDN);
    mpfr_clear(tp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_bf16_absolute_ties),
        cmocka_unit_test(test_fp16_rule),
        cmocka_unit_test(test_gaussian_reproducible),
        cmocka_unit_test(test_errors),
    };
    mpq_init(std_value);
    int rc = cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
    mpq_clear(std_value);
    /* draws whose fp32 score a last-bit libm difference could change (compared with that latitude) */
    printf("Gaussian draws regenerated: %d, libm-sensitive: %d\n", g_draws, g_libm_ambiguous);
    mpfr_free_cache();
    return rc;
}
