/* The weight level's matrix fraction (spec §10) against a brute force over every row and key.
 *
 * The reference below is written from the definitions alone and shares no code with the library: each
 * row r of an n-token context attends k = min(r, W) + 1 keys at distances d = 0..k-1 (zero logits), has
 * its own S_k = sum_d e^(-m g(d)) (g(d) = d or ln(d + 1)), and key d is blind when -m g(d) - ln S_k is
 * at or below tau (strictly below under ftz), tau = e ln 2 with e = emin (paper, ftz), emin - p (ieee)
 * or emin - p + 1 (subnormal) (spec §3, §4). Under paper, delta_r is the nearest integer of the crossing
 * point Q_r (halves up), at least 1 when Q_r > 0 and for a one-key row (spec §6), and the row loses
 * k - delta_r keys. Everything is summed with MPFR at 512 bits directly, term by term; a comparison
 * closer than 2^-400 would be reported as undecided rather than guessed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#include "abl_test_schedule.h"

#define REF_PREC 512

typedef struct {
    const char *name;
    int p;
    long emin;
} ref_format;

/* spec §2 */
static const ref_format ref_formats[] = {
    {"bf16", 8, -126}, {"fp16", 11, -14}, {"fp8-e4m3fn", 4, -6}, {"fp4-e2m1fn", 2, 0}, {"fp6-e2m3fn", 4, 0},
};

static const abl_convention conventions[] = {ABL_CONV_PAPER, ABL_CONV_FTZ, ABL_CONV_IEEE, ABL_CONV_SUBNORMAL};

static long tau_exponent(const ref_format *f, abl_convention c)
{
    switch (c) {
    case ABL_CONV_IEEE:
        return f->emin - f->p;
    case ABL_CONV_SUBNORMAL:
        return f->emin - f->p + 1;
    default:
        return f->emin;
    }
}

/* m from the slope text: a decimal, or "2^x" with a decimal exponent x. */
static void ref_slope(mpfr_t m, const char *text)
{
    if (strncmp(text, "2^", 2) == 0) {
        mpfr_set_str(m, text + 2, 10, MPFR_RNDN);
        mpfr_exp2(m, m, MPFR_RNDN);
    } else {
        mpfr_set_str(m, text, 10, MPFR_RNDN);
    }
}

/* Blind keys of the whole matrix and of the last row, for one head. Returns 0, or 1 when undecided. */
static int reference(const ref_format *f, abl_convention conv, int logd, const char *slope, uint64_t n,
                     uint64_t window, uint64_t *matrix, uint64_t *last_row)
{
    mpfr_t m, tau, *t, s, ln_s, thr, diff, q, eps;
    mpfr_inits2(REF_PREC, m, tau, s, ln_s, thr, diff, q, eps, (mpfr_ptr)0);
    ref_slope(m, slope);
    mpfr_const_log2(tau, MPFR_RNDN);
    mpfr_mul_si(tau, tau, tau_exponent(f, conv), MPFR_RNDN);
    mpfr_set_ui_2exp(eps, 1, -400, MPFR_RNDN);
    uint64_t keys_max = window > 0 && window + 1 < n ? window + 1 : n;
    /* t[d] = m g(d), increasing in d */
    t = malloc(keys_max * sizeof *t);
    assert_non_null(t);
    for (uint64_t d = 0; d < keys_max; d++) {
        mpfr_init2(t[d], REF_PREC);
        if (logd) {
            mpfr_set_ui(t[d], (unsigned long)d + 1, MPFR_RNDN);
            mpfr_log(t[d], t[d], MPFR_RNDN);
        } else {
            mpfr_set_ui(t[d], (unsigned long)d, MPFR_RNDN);
        }
        mpfr_mul(t[d], t[d], m, MPFR_RNDN);
    }
    int undecided = 0;
    *matrix = 0;
    *last_row = 0;
    mpfr_set_zero(s, 1);
    uint64_t have = 0; /* keys summed into s */
    for (uint64_t r = 0; r < n; r++) {
        uint64_t k = window > 0 && r > window ? window + 1 : r + 1;
        for (; have < k; have++) {
            mpfr_neg(diff, t[have], MPFR_RNDN);
            mpfr_exp(diff, diff, MPFR_RNDN);
            mpfr_add(s, s, diff, MPFR_RNDN);
        }
        mpfr_log(ln_s, s, MPFR_RNDN);
        mpfr_add(thr, tau, ln_s, MPFR_RNDN); /* blind: -t[d] <= thr, i.e. t[d] >= -thr */
        uint64_t blind = 0;
        int near_matters;
        if (conv == ABL_CONV_PAPER) {
            /* Q = -thr/m (linear) or expm1(-thr/m) (log); delta = floor(Q + 1/2), 1 when that is <= 0 < Q */
            mpfr_neg(q, thr, MPFR_RNDN);
            mpfr_div(q, q, m, MPFR_RNDN);
            if (logd)
                mpfr_expm1(q, q, MPFR_RNDN);
            mpfr_add_d(diff, q, 0.5, MPFR_RNDN);
            mpfr_floor(diff, diff);
            long delta = mpfr_cmp_ui(diff, (unsigned long)k) >= 0 ? (long)k : mpfr_get_si(diff, MPFR_RNDN);
            if (delta <= 0 && (mpfr_sgn(q) > 0 || k == 1))
                delta = 1;
            if (delta < 0)
                delta = 0;
            blind = k - (uint64_t)delta;
            /* how close Q + 1/2 sits to an integer, and Q to 0 (only where it can matter: Q <= k) */
            near_matters = mpfr_number_p(q) && mpfr_cmp_ui(q, (unsigned long)k) <= 0;
            mpfr_add_d(diff, q, 0.5, MPFR_RNDN);
            mpfr_frac(diff, diff, MPFR_RNDN);
            mpfr_abs(diff, diff, MPFR_RNDN);
            if (near_matters && k > 1 && (mpfr_cmp(diff, eps) < 0 || mpfr_cmpabs(q, eps) < 0))
                undecided = 1;
        } else {
            for (uint64_t d = 0; d < k; d++) {
                mpfr_add(diff, t[d], thr, MPFR_RNDN); /* t[d] + thr >= 0 (> 0 under ftz): blind */
                if (k > 1 && mpfr_cmpabs(diff, eps) < 0)
                    undecided = 1; /* (a one-key row compares tau + ln 1 with 0: exact) */
                if (conv == ABL_CONV_FTZ ? mpfr_sgn(diff) > 0 : mpfr_sgn(diff) >= 0)
                    blind++;
            }
        }
        *matrix += blind;
        if (r == n - 1)
            *last_row = blind;
    }
    for (uint64_t d = 0; d < keys_max; d++)
        mpfr_clear(t[d]);
    free(t);
    mpfr_clears(m, tau, s, ln_s, thr, diff, q, eps, (mpfr_ptr)0);
    return undecided;
}

/* One head through the library: its matrix and last-row counts. */
static void library(const ref_format *f, abl_convention conv, int logd, const char *slope, uint64_t n,
                    uint64_t window, uint64_t *matrix, uint64_t *last_row)
{
    abl_analysis_config c;
    memset(&c, 0, sizeof c);
    assert_int_equal(abl_format_lookup(f->name, &c.format), ABL_OK);
    c.convention = conv;
    c.distance = logd ? ABL_DISTANCE_LOG : ABL_DISTANCE_LINEAR;
    c.level = ABL_LEVEL_WEIGHT;
    c.context = n;
    c.window = window;
    char spec[64];
    snprintf(spec, sizeof spec, "slopes:%s", slope);
    c.slopes = abl_test_schedule(spec);
    abl_analysis a;
    abl_status st = abl_analysis_run(&c, &a);
    if (st != ABL_OK)
        fail_msg("%s %d %s %s n=%llu: status %d", f->name, (int)conv, logd ? "log" : "linear", slope,
                 (unsigned long long)n, (int)st);
    assert_int_equal(a.heads, 1);
    assert_true(mpz_sizeinbase(a.results[0].matrix_blind, 2) <= 64);
    *matrix = mpz_get_ui(a.results[0].matrix_blind);
    *last_row = mpz_get_ui(a.results[0].row_blind);
    abl_analysis_free(&a);
}

static void compare(const ref_format *f, abl_convention conv, int logd, const char *slope, uint64_t n, uint64_t window)
{
    uint64_t rm, rl, lm, ll;
    if (reference(f, conv, logd, slope, n, window, &rm, &rl) != 0)
        fail_msg("reference undecided: %s %d %s %s n=%llu", f->name, (int)conv, logd ? "log" : "linear", slope,
                 (unsigned long long)n);
    library(f, conv, logd, slope, n, window, &lm, &ll);
    if (rm != lm || rl != ll)
        fail_msg("%s convention %d %s slopes:%s n=%llu W=%llu: matrix %llu (reference %llu), last row %llu "
                 "(reference %llu)",
                 f->name, (int)conv, logd ? "log" : "linear", slope, (unsigned long long)n,
                 (unsigned long long)window, (unsigned long long)lm, (unsigned long long)rm,
                 (unsigned long long)ll, (unsigned long long)rl);
}

/* Flat slopes (the 1e-20 and 1e-15, whose deltas outgrow 2^62 in the first rows), moderate ones,
 * and steep ones (above 2|tau|), in every convention, linear distances. */
static void test_grid_linear(void **state)
{
    (void)state;
    static const char *slopes[] = {"1e-20", "1e-15", "1e-9", "0.001", "0.0625", "2^-0.5", "3", "200"};
    static const uint64_t ctx[] = {1, 2, 37, 65, 171};
    for (size_t f = 0; f < sizeof ref_formats / sizeof ref_formats[0]; f++)
        for (size_t c = 0; c < 4; c++)
            for (size_t s = 0; s < sizeof slopes / sizeof slopes[0]; s++)
                for (size_t n = 0; n < sizeof ctx / sizeof ctx[0]; n++)
                    compare(&ref_formats[f], conventions[c], 0, slopes[s], ctx[n], 0);
}

/* Log distances: S_k is a harmonic-type sum, the library's Euler-Maclaurin enclosure against direct terms. */
static void test_grid_log(void **state)
{
    (void)state;
    /* (much flatter slopes make delta's exponent itself too large: the library refuses them, status 14) */
    static const char *slopes[] = {"1e-6", "2^-8", "0.001", "2^-4", "2^-0.5", "3"};
    static const uint64_t ctx[] = {2, 65, 130};
    for (size_t f = 0; f < sizeof ref_formats / sizeof ref_formats[0]; f++)
        for (size_t c = 0; c < 4; c++)
            for (size_t s = 0; s < sizeof slopes / sizeof slopes[0]; s++)
                for (size_t n = 0; n < sizeof ctx / sizeof ctx[0]; n++)
                    compare(&ref_formats[f], conventions[c], 1, slopes[s], ctx[n], 0);
}

/* A window W: rows past it attend W + 1 keys, all with the same S. */
static void test_grid_window(void **state)
{
    (void)state;
    static const char *slopes[] = {"1e-20", "0.001", "2^-0.5"};
    static const char *log_slopes[] = {"1e-6", "0.001", "2^-0.5"};
    for (size_t f = 0; f < sizeof ref_formats / sizeof ref_formats[0]; f++)
        for (size_t c = 0; c < 4; c++)
            for (size_t s = 0; s < sizeof slopes / sizeof slopes[0]; s++) {
                compare(&ref_formats[f], conventions[c], 0, slopes[s], 150, 70);
                compare(&ref_formats[f], conventions[c], 1, log_slopes[s], 100, 40);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_linear),
        cmocka_unit_test(test_grid_log),
        cmocka_unit_test(test_grid_window),
    };
    return cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
}
