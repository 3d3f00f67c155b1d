/* Unit tests: `simulate` against a brute-force emulation written here with MPFR for every operation
 * (a different, slow implementation of the documented model: docs/pipelines.md), weight by weight,
 * plus hand-derived cases from SPEC §9. */
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

#define NMAX 64

/* ---- reference roundings (SPEC §2 recipe) ---- */

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

/* ---- the reference pipeline ---- */

typedef struct ref {
    abl_pipeline p;
    int n;
    double L[NMAX][NMAX];   /* logits */
    double W[NMAX][NMAX];   /* weights as rounded into the output dtype (flash: P) */
    int zeros_matrix, zeros_row, first_blind;
} ref;

static uint64_t pos_of(const abl_pipeline *p, int n, int i, int j)
{
    switch (p->bias_form) {
    case ABL_BIAS_ABSOLUTE: return (uint64_t)j;
    case ABL_BIAS_TRAILING: return (uint64_t)(n - 1 - j);
    default: return (uint64_t)(i - j);
    }
}

/* logits for zero scores, or the given scores' logits (given[i][j] != NULL: take them as they are) */
static void ref_logits(ref *R, double slope_exact_hi, const double (*given)[NMAX])
{
    const abl_pipeline *p = &R->p;
    mpfr_t held, a, b, c, sm, cl, fac;
    mpfr_inits2(256, held, a, b, c, sm, cl, fac, (mpfr_ptr)0);
    mpfr_set_d(held, slope_exact_hi, MPFR_RNDN);
    rnd_fmt(held, &p->slope_dtype);
    /* flash: softmax scale as Python passes it (binary64 head_dim^-0.5, then float) */
    mpfr_set_ui(sm, (unsigned long)p->head_dim, MPFR_RNDN);
    mpfr_rec_sqrt(sm, sm, MPFR_RNDN);
    mpfr_prec_round(sm, 53, MPFR_RNDN);
    r32(sm);
    mpfr_div(fac, held, sm, MPFR_RNDN);
    r32(fac);
    int neg = p->bias_form != ABL_BIAS_ABSOLUTE;
    for (int i = 0; i < R->n; i++) {
        for (int j = 0; j <= i; j++) {
            if (given != NULL) {
                R->L[i][j] = given[i][j];
                continue;
            }
            double pos = (double)pos_of(p, R->n, i, j);
            if (p->softmax == ABL_SOFTMAX_FLASH) {
                mpfr_mul_d(a, fac, pos, MPFR_RNDN);   /* exact at 256 bits */
                r32(a);                                /* fma with a zero score: one rounding */
                if (neg)
                    mpfr_neg(a, a, MPFR_RNDN);
            } else {
                mpfr_set_d(b, pos, MPFR_RNDN);
                rnd_fmt(b, &p->product_dtype);
                mpfr_set(c, held, MPFR_RNDN);
                rnd_fmt(c, &p->product_dtype);
                mpfr_mul(a, b, c, MPFR_RNDN);
                rnd_fmt(a, &p->product_dtype);
                rnd_fmt(a, &p->bias_dtype);
                if (neg)
                    mpfr_neg(a, a, MPFR_RNDN);
                mpfr_set_str(b, p->bias_scale, 10, MPFR_RNDN);
                r32(b);
                mpfr_mul(a, a, b, MPFR_RNDN);
                r32(a);
                rnd_fmt(a, &p->logit_dtype);
            }
            R->L[i][j] = mpfr_get_d(a, MPFR_RNDN);
        }
    }
    mpfr_clears(held, a, b, c, sm, cl, fac, (mpfr_ptr)0);
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
    R->zeros_matrix = 0;
    for (int i = 0; i < n; i++) {
        int count = i + 1;
        double M = R->L[i][0];
        for (int j = 1; j < count; j++)
            if (R->L[i][j] > M)
                M = R->L[i][j];
        if (p->softmax == ABL_SOFTMAX_EAGER) {
            for (int j = 0; j < count; j++) {
                mpfr_set_d(y, R->L[i][j] - M, MPFR_RNDN);   /* exact in binary64 here */
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

/* Emulate `spec` with the given slopes (exact decimals) and compare every logit and weight and the
 * per-head statistics with the reference. */
static void check_case(const char *spec, const char *dtype, const char *slopes, int n, const char *std)
{
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char err[256];
    assert_int_equal(abl_pipeline_parse(spec, &model, &cfg.pipeline, err, sizeof err), ABL_OK);
    cfg.slopes = slopes;
    cfg.context = (uint64_t)n;
    cfg.logit_std = std;
    cfg.seed = 3;
    cfg.threads = 3;
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
    static ref R;
    for (int h = 0; h < sim.heads; h++) {
        for (int i = 0; i < n; i++)
            assert_int_equal(cap.seen[h][i], 1);
        memset(&R, 0, sizeof R);
        R.p = cfg.pipeline;
        R.n = n;
        /* the exact slope from its decimal text (the list entry) */
        char list[256];
        snprintf(list, sizeof list, "%s", slopes + 7);
        char *tok = strtok(list, ",");
        for (int k = 0; k < h; k++)
            tok = strtok(NULL, ",");
        mpfr_t m;
        mpfr_init2(m, 256);
        mpfr_set_str(m, tok, 10, MPFR_RNDN);
        double mhi = mpfr_get_d(m, MPFR_RNDN);   /* the lists use binary64-exact decimals */
        mpfr_clear(m);
        static double given[NMAX][NMAX];
        int gaussian = std != NULL;
        if (gaussian)
            for (int i = 0; i < n; i++)
                for (int j = 0; j <= i; j++)
                    given[i][j] = cap.L[h][i][j];
        ref_logits(&R, mhi, gaussian ? (const double (*)[NMAX])given : NULL);
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
        assert_true(a->tv_distance >= 0.0 && a->tv_distance < 1.0);
    }
    abl_simulation_free(&sim);
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
    check_case("falcon-rw-hf", "bf16", s3, 48, NULL);
    check_case("falcon-rw-hf,bias-scale=0.3", "fp16", s2, 40, NULL);
    check_case("mpt", "bf16", s3, 48, NULL);
    check_case("mpt,product-dtype=tf32,sum=sequential", "fp16", s2, 44, NULL);
    check_case("flash2", "bf16", s3, 48, NULL);
    check_case("flash2,block=5,head-dim=96", "fp16", s3, 47, NULL);
    check_case("flash2,block=0,bias-form=relative,output-dtype=fp8-e5m2", "bf16", s2, 39, NULL);
    check_case("flash2,bias-form=trailing,block=7", "bf16", s2, 31, NULL);
    /* Gaussian logits: the emulator's logits fed to the reference softmax */
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

static int run_one(const char *spec, const char *dtype, const char *slopes, uint64_t n, const char *std,
                   abl_simulation *sim)
{
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char err[256];
    assert_int_equal(abl_pipeline_parse(spec, &model, &cfg.pipeline, err, sizeof err), ABL_OK);
    cfg.slopes = slopes;
    cfg.context = n;
    cfg.logit_std = std;
    cfg.seed = 11;
    return abl_simulate_run(&cfg, sim);
}

/* SPEC §9: in bf16 the absolute form stores m*j; near j = 2047 with m = 2^-0.5 the bf16 spacing is 8:
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

/* SPEC §9: fp16 output. flash2 rounds the unnormalised weight e = 2^(-m d log2 e) into fp16: zero
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

static void test_gaussian_reproducible(void **state)
{
    (void)state;
    abl_simulation a, b, c;
    assert_int_equal(run_one("eager", "bf16", "slopes:0.5,0.25", 200, "5", &a), ABL_OK);
    assert_int_equal(run_one("eager", "bf16", "slopes:0.5,0.25", 200, "5", &b), ABL_OK);
    assert_int_equal(run_one("eager", "bf16", "slopes:0.5,0.25", 200, "0", &c), ABL_OK);
    for (int h = 0; h < 2; h++) {
        assert_int_equal(a.results[h].matrix_zeros, b.results[h].matrix_zeros);
        assert_true(a.results[h].tv_distance == b.results[h].tv_distance);
        assert_int_equal(a.results[h].distinct_logits, b.results[h].distinct_logits);
    }
    /* zero logits, m = 1/4: bf16(d/4) is exact for d < 256 (at most 8 significant bits), so all
     * 200 logits of the last row differ; the Gaussian run is a different matrix */
    assert_int_equal(c.results[1].distinct_logits, 200);
    assert_int_equal(c.results[1].longest_tie_run, 1);
    assert_true(a.results[1].tv_distance != c.results[1].tv_distance);
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
    assert_int_equal(run_one("eager", "bf16", "nonsense", 8, NULL, &sim), ABL_ERR_BAD_SLOPE_SPEC);
}

int main(void)
{
    assert_int_equal(abl_format_lookup("fp32", &g_fp32), ABL_OK);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_bf16_absolute_ties),
        cmocka_unit_test(test_fp16_rule),
        cmocka_unit_test(test_gaussian_reproducible),
        cmocka_unit_test(test_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mpfr_free_cache();
    return rc;
}
