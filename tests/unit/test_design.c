/* design (issue 10): every designed property checked against an independent MPFR model of the kernel,
 * written here from the kernels' definitions (docs/pipelines.md), not from the library's emulator:
 *  - eager (relative bias, bf16 logits and output): x_d = bf16(-fp32(m d)), e = fp32(exp(x)) with
 *    subnormals, S = fp32(exact sum), r = fp32(1/S), p = fp32(e r); zero iff p <= 2^-134;
 *  - flash2 (absolute bias, fp32 logits, head_dim 128): sm = fp32(128^-0.5), c = fp32(sm log2 e),
 *    k = fp32(m / sm), x_j = fp32(k j), ms = fp32(x_i c); key 0 of row i is zero iff fp32(-ms) < -126. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>
#include <mpfr.h>
#include "alibi_blind.h"

#define WP 1200

/* Round x (>= 0) to a binary format with precision p and smallest normal 2^emin, ties to even. */
static void round_fmt(mpfr_t x, int p, long emin)
{
    if (mpfr_zero_p(x))
        return;
    mpfr_t t;
    if (mpfr_cmp_ui_2exp(x, 1, emin) < 0) {
        mpfr_init2(t, WP);
        mpfr_mul_2si(t, x, -(emin - p + 1), MPFR_RNDN); /* exact scaling */
        mpfr_rint(t, t, MPFR_RNDN);
        mpfr_mul_2si(x, t, emin - p + 1, MPFR_RNDN);
    } else {
        mpfr_init2(t, p);
        mpfr_set(t, x, MPFR_RNDN);
        mpfr_set(x, t, MPFR_RNDN);
    }
    mpfr_clear(t);
}

static void fp32(mpfr_t x) { round_fmt(x, 24, -126); }
static void bf16(mpfr_t x) { round_fmt(x, 8, -126); }

/* eager: is the weight of key distance d in row i (keys 0..i) zero? */
static int eager_zero(float m, uint64_t i, uint64_t d)
{
    mpfr_t x, e, S, ed, r;
    mpfr_inits2(WP, x, e, S, ed, r, (mpfr_ptr)0);
    mpfr_set_zero(S, 1);
    for (uint64_t k = 0; k <= i; k++) {
        mpfr_set_flt(x, m, MPFR_RNDN);
        mpfr_mul_ui(x, x, (unsigned long)k, MPFR_RNDN); /* exact at WP */
        fp32(x);
        bf16(x);
        mpfr_neg(x, x, MPFR_RNDN);
        mpfr_exp(e, x, MPFR_RNDN);
        fp32(e);
        mpfr_add(S, S, e, MPFR_RNDN); /* exact: WP bits hold the whole sum */
        if (k == d)
            mpfr_set(ed, e, MPFR_RNDN);
    }
    fp32(S);
    mpfr_ui_div(r, 1, S, MPFR_RNDN);
    fp32(r);
    mpfr_mul(x, ed, r, MPFR_RNDN);
    fp32(x);
    int zero = mpfr_cmp_ui_2exp(x, 1, -134) <= 0;
    mpfr_clears(x, e, S, ed, r, (mpfr_ptr)0);
    return zero;
}

/* flash2: is key j of row i zero? y = fp32(x_j c - ms) exactly (fmaf), ms = fp32(x_i c); zero iff y < -126. */
static int flash_zero_key(float m, uint64_t i, uint64_t j)
{
    mpfr_t sm, c, k, x, ms, l2e;
    mpfr_inits2(WP, sm, c, k, x, ms, l2e, (mpfr_ptr)0);
    mpfr_set_ui(sm, 128, MPFR_RNDN);
    mpfr_rec_sqrt(sm, sm, MPFR_RNDN);
    round_fmt(sm, 53, -1022);
    fp32(sm);
    mpfr_const_log2(l2e, MPFR_RNDN);
    mpfr_ui_div(l2e, 1, l2e, MPFR_RNDN);
    round_fmt(l2e, 53, -1022); /* M_LOG2E */
    mpfr_mul(c, sm, l2e, MPFR_RNDN);
    round_fmt(c, 53, -1022);
    fp32(c);
    mpfr_set_flt(k, m, MPFR_RNDN);
    mpfr_div(k, k, sm, MPFR_RNDN);
    round_fmt(k, 53, -1022);
    fp32(k);
    mpfr_mul_ui(ms, k, (unsigned long)i, MPFR_RNDN);
    fp32(ms);
    mpfr_mul(ms, ms, c, MPFR_RNDN);
    fp32(ms);
    mpfr_mul_ui(x, k, (unsigned long)j, MPFR_RNDN);
    fp32(x);
    mpfr_mul(x, x, c, MPFR_RNDN);
    mpfr_sub(x, x, ms, MPFR_RNDN); /* exact at WP */
    if (mpfr_sgn(x) < 0) {
        mpfr_neg(x, x, MPFR_RNDN);
        fp32(x);
        mpfr_neg(x, x, MPFR_RNDN);
    } else {
        fp32(x);
    }
    int zero = mpfr_cmp_si(x, -126) < 0;
    mpfr_clears(sm, c, k, x, ms, l2e, (mpfr_ptr)0);
    return zero;
}

static int flash_zero(float m, uint64_t i)
{
    return flash_zero_key(m, i, 0);
}

static abl_design_config config(const char *pipe, uint64_t n)
{
    abl_design_config c;
    memset(&c, 0, sizeof c);
    abl_format bf;
    assert_int_equal(abl_format_lookup("bf16", &bf), ABL_OK);
    assert_int_equal(abl_pipeline_parse(pipe, &bf, &c.pipeline, NULL, 0), ABL_OK);
    c.context = n;
    c.threads = 1;
    return c;
}

/* --keep all on eager: the steepest head keeps the last key of the last row (distance N-1) and, one token
 * later, loses the key at distance N; the spread is 2^(-8/H) per head; all heads verified. */
static void test_keep_all_eager(void **state)
{
    (void)state;
    abl_design_config c = config("eager", 512);
    float s[4];
    assert_int_equal(abl_design_keep_all(&c, 4, s), ABL_OK);
    assert_false(eager_zero(s[0], 511, 511));
    assert_true(eager_zero(s[0], 512, 512));
    /* the next binary32 slope up is not sighted at N (it is the steepest) */
    float up = nextafterf(s[0], INFINITY);
    int ok = 1;
    assert_int_equal(abl_design_sighted(&c, up, &ok), ABL_OK);
    assert_false(ok);
    for (int h = 1; h < 4; h++) {
        double ratio = (double)s[h] / (double)s[0], want = exp2(-8.0 * h / 4);
        assert_true(fabs(ratio / want - 1.0) < 1e-6);
        assert_false(eager_zero(s[h], 511, 511));
    }
    int simulated = 0;
    assert_int_equal(abl_design_verify(&c, s, 4, 4096, &simulated), ABL_OK);
    assert_true(simulated);
}

static void test_keep_all_flash(void **state)
{
    (void)state;
    abl_design_config c = config("flash2", 512);
    float s[2];
    assert_int_equal(abl_design_keep_all(&c, 2, s), ABL_OK);
    assert_false(flash_zero(s[0], 511));
    assert_true(flash_zero(s[0], 512));
    assert_true(flash_zero(nextafterf(s[0], INFINITY), 511));
}

/* --targets: the first blind distance of the last row is each target exactly (eager and flash2). */
static void test_targets(void **state)
{
    (void)state;
    abl_design_config c = config("eager", 512);
    uint64_t t[2] = {100, 300};
    float s[2];
    int failed = -1;
    assert_int_equal(abl_design_targets(&c, t, 2, s, &failed), ABL_OK);
    for (int h = 0; h < 2; h++) {
        assert_true(eager_zero(s[h], 511, t[h]));
        assert_false(eager_zero(s[h], 511, t[h] - 1));
    }
    c = config("flash2", 512);
    uint64_t tf[1] = {200};
    assert_int_equal(abl_design_targets(&c, tf, 1, s, &failed), ABL_OK);
    /* row 511: key 311 (distance 200) is zero, key 312 (distance 199) is not */
    assert_true(flash_zero_key(s[0], 511, 311));
    assert_false(flash_zero_key(s[0], 511, 312));
    /* a target at or beyond the context is impossible */
    c = config("eager", 512);
    uint64_t bad[1] = {512};
    assert_int_equal(abl_design_targets(&c, bad, 1, s, &failed), ABL_ERR_DEGENERATE);
    assert_int_equal(failed, 0);
}

/* An existing slope: 2^-0.5 on eager bf16 sees 131 tokens (the key at distance 130 of row 130 is kept,
 * distance 131 of row 131 is not). */
static void test_largest_context(void **state)
{
    (void)state;
    abl_design_config c = config("eager", 2048);
    float m = (float)0.70710678118654752;
    uint64_t n = 0;
    assert_int_equal(abl_design_largest_context(&c, m, 1u << 20, &n), ABL_OK);
    assert_int_equal(n, 131);
    assert_false(eager_zero(m, 130, 130));
    assert_true(eager_zero(m, 131, 131));
}

/* A budget no slope can meet: a key at logit -200 is below tau + ln N for every slope. */
static void test_impossible_budget(void **state)
{
    (void)state;
    abl_design_config c = config("eager", 512);
    mpq_t b;
    mpq_init(b);
    mpq_set_si(b, -200, 1);
    c.budget = b;
    float s[1];
    assert_int_equal(abl_design_keep_all(&c, 1, s), ABL_ERR_DEGENERATE);
    /* -50 is possible, and steeper than 0 would allow is never chosen */
    mpq_set_si(b, -50, 1);
    assert_int_equal(abl_design_keep_all(&c, 1, s), ABL_OK);
    abl_design_config c0 = config("eager", 512);
    float s0[1];
    assert_int_equal(abl_design_keep_all(&c0, 1, s0), ABL_OK);
    assert_true(s[0] < s0[0]);
    mpq_clear(b);
}

/* The clamp for press(16) at N = 2048 on eager bf16: the binding head is m = 2^-8 (the clamp engages
 * beyond N for it), so c > tau + ln S_2048(2^-8) = -134 ln2 + ln((1-e^-8)/(1-e^-1/256)) = -87.334934...
 * (mpmath): the least 4-decimal bound is -87.3349; -87 has margin 0.3349 and keeps every head. */
static void test_clamp(void **state)
{
    (void)state;
    abl_design_config c = config("eager", 2048);
    float *held = NULL;
    int n = 0;
    assert_int_equal(abl_design_held_slopes(&c, "press", 16, &held, &n), ABL_OK);
    assert_int_equal(n, 16);
    abl_design_clamp r;
    abl_design_clamp_init(&r);
    assert_int_equal(abl_design_clamp_find(&c, held, n, 4, &r), ABL_OK);
    assert_string_equal(r.bound_text, "-87.3349");
    /* the clamped bias is a bf16 logit: -87.3349 rounds up to -87 (bf16 spacing 0.5 there) */
    assert_string_equal(r.clamp_text, "-87");
    assert_int_equal(r.paper_failing, 0);
    assert_string_equal(r.paper_margin_text, "0.3349");
    abl_design_clamp_clear(&r);
    free(held);
}

/* simulate's measured mass_lost: one head m = 1/2 at N = 512 on eager bf16 loses the keys d >= fb of the
 * last row, whose share of the exact softmax is e^(-m fb) (1 - e^(-m (N - fb))) / (1 - e^(-m N)) (closed
 * form, MPFR here); the binary64 measurement agrees to 1e-12. */
static void test_simulate_mass_lost(void **state)
{
    (void)state;
    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    abl_format bf;
    assert_int_equal(abl_format_lookup("bf16", &bf), ABL_OK);
    assert_int_equal(abl_pipeline_parse("eager", &bf, &sc.pipeline, NULL, 0), ABL_OK);
    sc.slopes = "slopes:0.5";
    sc.context = 512;
    sc.threads = 1;
    abl_simulation sim;
    assert_int_equal(abl_simulate_run(&sc, &sim), ABL_OK);
    int64_t fb = sim.results[0].first_blind;
    assert_true(fb > 0 && fb < 512);
    mpfr_t a, b;
    mpfr_inits2(200, a, b, (mpfr_ptr)0);
    mpfr_set_d(a, -0.5 * (double)fb, MPFR_RNDN);
    mpfr_exp(a, a, MPFR_RNDN);
    mpfr_set_d(b, -0.5 * (double)(512 - fb), MPFR_RNDN);
    mpfr_expm1(b, b, MPFR_RNDN);
    mpfr_mul(a, a, b, MPFR_RNDN);
    mpfr_set_d(b, -0.5 * 512.0, MPFR_RNDN);
    mpfr_expm1(b, b, MPFR_RNDN);
    mpfr_div(a, a, b, MPFR_RNDN);
    double want = mpfr_get_d(a, MPFR_RNDN);
    assert_true(want > 0.0);
    assert_true(fabs(sim.results[0].mass_lost / want - 1.0) < 1e-12);
    mpfr_clears(a, b, (mpfr_ptr)0);
    abl_simulation_free(&sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep_all_eager),
        cmocka_unit_test(test_keep_all_flash),
        cmocka_unit_test(test_targets),
        cmocka_unit_test(test_largest_context),
        cmocka_unit_test(test_impossible_budget),
        cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_simulate_mass_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
