/* Unit tests: the zero-logit predictor agrees exactly with `simulate` (same model, different
 * algorithm) on many configurations, and reproduces spec §4's weight-level shift at long context. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <mpfr.h>
#include "alibi_blind.h"
#include "abl_test_engines.h"

static uint64_t g_rng = 0x2545F4914F6CDD1DULL;

static unsigned rnd(unsigned n)
{
    return abl_test_rnd(&g_rng, n);
}

/* SPEC in DTYPE with SLOPES, HEADS heads at context N: the pipeline check's status. */
static abl_status setup(abl_simulate_config *cfg, const char *spec, const char *dtype, const char *slopes, int heads,
                        uint64_t n)
{
    const abl_test_layer layer = {.spec = spec, .dtype = dtype, .slopes = slopes, .heads = heads, .n = n, .lenient = 1};
    return abl_test_layer_config(cfg, &layer);
}

/* The predictor against simulate on one layer (abl_test_agree): 1 when they agree; random pipelines may be
 * refused, by the check (-1) or by both sides alike (0). */
static int agree(const char *spec, const char *dtype, const char *slopes, int heads, uint64_t n)
{
    const abl_test_layer layer = {.spec = spec, .dtype = dtype, .slopes = slopes, .heads = heads, .n = n, .lenient = 1};
    return abl_test_agree(&layer, NULL);
}

static void test_presets_agree(void **state)
{
    (void)state;
    const char *presets[] = {"eager", "bloom-hf", "falcon-hf-eager", "mpt", "flash2"};
    const char *dtypes[] = {"bf16", "fp16"};
    for (size_t p = 0; p < 5; p++)
        for (size_t d = 0; d < 2; d++)
            assert_int_equal(agree(presets[p], dtypes[d], "press", 16, 700), 1);
}

/* The transformers / llm-foundry presets whose eager path runs the absolute/trailing certified-bound
 * branch (mpt-hf keeps bias and logits in fp32, the case whose fp32 subtractions are inexact), over
 * every model dtype, head counts 1, 3, 12, 40, 71 and contexts 1 to 3000, against the row-by-row
 * simulation. MPT's code builds its slopes from mpt:8 for any head count (press only for powers of
 * two); BLOOM and Falcon take press. Heads x N^2 is kept small enough for the sanitizer build. */
static void test_hf_presets_agree(void **state)
{
    (void)state;
    const char *presets[] = {"mpt-hf", "mpt", "bloom-hf", "falcon-hf-eager"};
    const char *dtypes[] = {"bf16", "fp16", "fp32"};
    static const struct {
        int heads;
        uint64_t n;
    } grid[] = {{1, 1}, {3, 1}, {12, 1}, {40, 1}, {71, 1}, {1, 2}, {3, 2}, {12, 2}, {40, 2}, {71, 2},
                {1, 100}, {3, 100}, {12, 100}, {40, 100}, {71, 100}, {1, 1000}, {3, 1000}, {12, 1000},
                {1, 3000}, {3, 3000}};
    int ran = 0;
    for (size_t p = 0; p < 4; p++) {
        int mpt = strncmp(presets[p], "mpt", 3) == 0;
        for (size_t d = 0; d < 3; d++)
            for (size_t g = 0; g < sizeof grid / sizeof grid[0]; g++)
                ran += agree(presets[p], dtypes[d], mpt ? "mpt:8" : "press", grid[g].heads, grid[g].n) == 1;
        /* 40 heads at 1000 tokens once per preset (bf16) */
        ran += agree(presets[p], "bf16", mpt ? "mpt:8" : "press", 40, 1000) == 1;
    }
    assert_int_equal(ran, 4 * (3 * 20 + 1));
    /* The certified bound decides (nearly) every row of mpt-hf's fp32 logits: the exact O(i) sum, the
     * slow path, stays the exception (the bound that counted every inexact subtraction at its worst
     * term needed it on 516 of these 36,000 rows, 8.1 s at 64 heads x 32768). */
    for (size_t d = 0; d < 3; d++) {
        abl_simulate_config cfg;
        abl_prediction pred;
        assert_int_equal(setup(&cfg, "mpt-hf", dtypes[d], "mpt:8", 12, 3000), ABL_OK);
        assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
        assert_true(pred.exact_rows <= 36);
        abl_prediction_free(&pred);
    }
}

/* Explicit slope lists through the same presets: steep and shallow heads, non-dyadic slopes, and
 * slopes small enough that the fp32 logits of the last rows are far finer than those of the first
 * keys (the inexact-subtraction terms of the bound). */
static void test_hf_presets_slopes_agree(void **state)
{
    (void)state;
    const char *presets[] = {"mpt-hf", "mpt", "bloom-hf", "falcon-hf-eager"};
    const char *dtypes[] = {"bf16", "fp16", "fp32"};
    const char *lists[] = {"slopes:0.917004049,0.0039,0.001,2.5", "slopes:0.3,0.7,1.1,0.0625,0.03125",
                           "slopes:0.0173,0.00812,0.1234567"};
    const uint64_t ctx[] = {2, 100, 3000};
    int ran = 0, ok = 0;
    for (size_t p = 0; p < 4; p++)
        for (size_t d = 0; d < 3; d++)
            for (size_t l = 0; l < 3; l++) {
                int r = agree(presets[p], dtypes[d], lists[l], 0, ctx[(p + d + l) % 3]);
                ran++;
                ok += r == 1;
            }
    assert_int_equal(ok, ran);
}

/* Random pipelines, dtypes, slopes and contexts. */
static void test_random_agree(void **state)
{
    (void)state;
    const char *presets[] = {"eager", "bloom-hf", "falcon-hf-eager", "mpt", "flash2"};
    const char *forms[] = {"", ",bias-form=relative", ",bias-form=absolute", ",bias-form=trailing",
                           ",bias-form=symmetric"};
    const char *outs[] = {"", ",output-dtype=fp32", ",output-dtype=fp8-e4m3fn", ",output-dtype=fp8-e5m2",
                          ",output-dtype=fp16", ",output-dtype=bf16"};
    const char *eager_extra[] = {"", ",normalise=divide", ",bias-scale=0.37", ",logit-dtype=fp32,bias-dtype=fp32",
                                 ",product-dtype=bf16", ",bias-dtype=fp8-e4m3fn", ",logit-dtype=tf32"};
    const char *flash_extra[] = {"", ",block=0", ",block=16", ",head-dim=64", ",head-dim=80"};
    const char *dtypes[] = {"bf16", "fp16", "fp32"};
    int ran = 0;
    for (int k = 0; k < 160; k++) {
        const char *pre = presets[rnd(5)];
        int flash = strcmp(pre, "flash2") == 0;
        char spec[256], slopes[160];
        snprintf(spec, sizeof spec, "%s%s%s%s", pre, forms[rnd(5)], outs[rnd(6)],
                 flash ? flash_extra[rnd(5)] : eager_extra[rnd(7)]);
        int heads = 1 + (int)rnd(3);
        int len = snprintf(slopes, sizeof slopes, "slopes:");
        for (int h = 0; h < heads; h++) {
            /* m in [2^-9, 2^1], a short decimal */
            double m = ldexp(1.0 + rnd(1000) / 1000.0, (int)rnd(11) - 9);
            len += snprintf(slopes + len, sizeof slopes - (size_t)len, "%s%.6g", h ? "," : "", m);
        }
        uint64_t n = 1 + rnd(k < 20 ? 16 : 360);
        int r = agree(spec, dtypes[rnd(3)], slopes, 0, n);
        ran += r == 1;
    }
    assert_true(ran > 120);
}

/* spec §4: with fp32 logits (so only exp/sum/product roundings remain) and m = 2^-8, the weight is
 * zero iff exp(-m d) / S <= 2^-134 (bf16's rn-zero point), i.e. m d >= 134 ln 2 - ln S: the head goes
 * blind ln S / m ~ 5.5468 * 256 ~ 1420 tokens before the exponent-level delta ceil(134 ln 2 / m). */
static void test_weight_level_shift(void **state)
{
    (void)state;
    uint64_t N = 24000;
    double m = 1.0 / 256;
    mpfr_t a, b, s;
    mpfr_inits2(128, a, b, s, (mpfr_ptr)0);
    mpfr_const_log2(a, MPFR_RNDN);
    mpfr_mul_ui(a, a, 134, MPFR_RNDN);            /* 134 ln 2 */
    mpfr_mul_ui(b, a, 256, MPFR_RNDN);
    mpfr_ceil(b, b);
    long ieee = mpfr_get_si(b, MPFR_RNDN);
    /* S = (1 - e^-(mN)) / (1 - e^-m) */
    mpfr_set_d(s, -m * (double)N, MPFR_RNDN);
    mpfr_expm1(s, s, MPFR_RNDN);
    mpfr_set_d(b, -m, MPFR_RNDN);
    mpfr_expm1(b, b, MPFR_RNDN);
    mpfr_div(s, s, b, MPFR_RNDN);
    mpfr_log(s, s, MPFR_RNDN);
    double lnS = mpfr_get_d(s, MPFR_RNDN);
    mpfr_sub(b, a, s, MPFR_RNDN);
    mpfr_mul_ui(b, b, 256, MPFR_RNDN);
    mpfr_ceil(b, b);
    long weight = mpfr_get_si(b, MPFR_RNDN);
    mpfr_clears(a, b, s, (mpfr_ptr)0);
    assert_true(fabs(lnS - 5.55) < 0.005);
    assert_int_equal(ieee, 23778);
    assert_int_equal(ieee - weight, 1420);

    abl_simulate_config cfg;
    assert_int_equal(setup(&cfg, "eager,bias-dtype=fp32,logit-dtype=fp32", "bf16", "slopes:0.00390625", 0, N),
                     ABL_OK);
    abl_prediction pred;
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
    assert_int_equal(pred.results[0].first_blind, weight);
    assert_int_equal(pred.results[0].row_zeros, N - (uint64_t)weight);
    abl_prediction_free(&pred);
    /* the same through the absolute and trailing forms (certified-bound path) */
    assert_int_equal(setup(&cfg, "mpt,bias-dtype=fp32,logit-dtype=fp32", "bf16", "slopes:0.00390625", 0, N), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
    assert_int_equal(pred.results[0].first_blind, weight);
    abl_prediction_free(&pred);
}

/* The documented nominal cost (simulate.h, abl_predict_cost.c): H N query rows at the path's rate,
 * whole heads per thread, plus for the absolute SDPA form (N/B)^2 / 50 row equivalents per head and for
 * the relative SDPA form W^2 / B / 460, W = min(N, 104 / smallest slope). */
static void test_estimate(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        double rate;
    } paths[] = {{"eager", ABL_PREDICT_RATE_PREFIX},   {"eager,bias-form=symmetric", ABL_PREDICT_RATE_PREFIX},
                 {"mpt-hf", ABL_PREDICT_RATE_BOUND},   {"bloom-hf", ABL_PREDICT_RATE_BOUND},
                 {"flash2", ABL_PREDICT_RATE_FLASH},   {"sdpa-efficient", ABL_PREDICT_RATE_SDPA},
                 {"sdpa-cudnn", ABL_PREDICT_RATE_SDPA}, {"falcon-hf-sdpa", ABL_PREDICT_RATE_SDPA}};
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        abl_simulate_config cfg;
        assert_int_equal(setup(&cfg, paths[p].spec, "bf16", "press", 4, 1000), ABL_OK);
        cfg.threads = 1;
        abl_cost c;
        assert_int_equal(abl_predict_estimate(&cfg, &c), ABL_OK);
        /* falcon-hf-sdpa (absolute form, block 64, 16 blocks at N = 1000) adds 16^2 / 50 per head; the
         * relative SDPA presets (block 64 efficient, 128 cuDNN; press slopes >= 2^-8, so W = N = 1000) add
         * 1000^2 / B / 460 */
        double extra = strcmp(paths[p].spec, "falcon-hf-sdpa") == 0 ? 256.0 / 50.0
                       : strcmp(paths[p].spec, "sdpa-efficient") == 0 ? 1e6 / 64 / 460
                       : strcmp(paths[p].spec, "sdpa-cudnn") == 0     ? 1e6 / 128 / 460
                                                                      : 0.0;
        double units = 4.0 * (1000.0 + extra);
        assert_true(fabs(c.units - units) <= 1e-12 * units);
        assert_string_equal(c.unit_name, "rows");
        assert_int_equal(c.threads, 1);
        assert_true(fabs(c.seconds - units / paths[p].rate) <= 1e-12 * c.seconds);
    }
    /* very flat slopes make the relative SDPA path quadratic, and the estimate says so: one head of slope
     * 1e-5 at N = 131072 (it sees every key: 104 / 1e-5 > N) costs 131072^2 / 64 / 460 more rows; a
     * press layer at the same N sees at most 104 * 2^8 = 26624 keys */
    {
        abl_simulate_config flat;
        abl_cost fc;
        assert_int_equal(setup(&flat, "sdpa-efficient", "bf16", "slopes:0.00001", 0, 131072), ABL_OK);
        assert_int_equal(abl_predict_estimate(&flat, &fc), ABL_OK);
        double want = 131072.0 + 131072.0 * 131072.0 / 64 / 460;
        assert_true(fabs(fc.units - want) <= 1e-9 * want);
        assert_int_equal(setup(&flat, "sdpa-efficient", "bf16", "press", 8, 131072), ABL_OK);
        assert_int_equal(abl_predict_estimate(&flat, &fc), ABL_OK);
        want = 8 * (131072.0 + 26624.0 * 26624.0 / 64 / 460);
        assert_true(fabs(fc.units - want) <= 1e-9 * want);
    }
    /* a slopes: list gives H; N out of range is refused like abl_predict_run */
    abl_simulate_config cfg;
    assert_int_equal(setup(&cfg, "eager", "bf16", "slopes:0.5,0.25,0.125", 0, 10), ABL_OK);
    abl_cost c;
    assert_int_equal(abl_predict_estimate(&cfg, &c), ABL_OK);
    assert_true(c.units == 30.0);
    assert_true(c.threads >= 1 && c.threads <= 3);
    cfg.context = 0;
    assert_int_equal(abl_predict_estimate(&cfg, &c), ABL_ERR_CONTEXT_RANGE);
}

static void test_unsupported(void **state)
{
    (void)state;
    abl_simulate_config cfg;
    abl_prediction pred;
    assert_int_equal(setup(&cfg, "eager,sum=vec8", "bf16", "press", 4, 64), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_ERR_UNSUPPORTED);
    assert_int_equal(setup(&cfg, "eager,exp=sleef", "bf16", "press", 4, 64), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_ERR_UNSUPPORTED);
    assert_int_equal(setup(&cfg, "eager", "bf16", "press", 4, 64), ABL_OK);
    mpq_t one;
    mpq_init(one);
    mpq_set_ui(one, 1, 1);
    cfg.logit_std = one;
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_ERR_UNSUPPORTED);
    mpq_clear(one);
    /* flash does not depend on the sum order: supported */
    assert_int_equal(setup(&cfg, "flash2,sum=vec8", "bf16", "press", 4, 64), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
    abl_prediction_free(&pred);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_agree),
        cmocka_unit_test(test_random_agree),
        cmocka_unit_test(test_hf_presets_agree),
        cmocka_unit_test(test_hf_presets_slopes_agree),
        cmocka_unit_test(test_weight_level_shift),
        cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_unsupported),
    };
    int rc = cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
    mpfr_free_cache();
    return rc;
}
