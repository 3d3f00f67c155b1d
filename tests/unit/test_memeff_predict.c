/* Unit tests: the zero-logit predictor of the memory-efficient SDPA backward (backward kind memeff,
 * abl_backward_memeff_predict.c; modelled from source, not measured) equals the emulation exactly:
 * (1) abl_backward_predict against abl_backward_run (simulate --backward: every row of the forward
 * emulation, then every key's dS from the row's logits; tests/memeff_backward_check.py checks those
 * formulas independently with mpmath) on every head's first zero-dS distance, last-row and matrix zero
 * counts, gradient-only counts and the forward's first zero weight, over head counts, contexts around the
 * block edges and long ones, the three dtypes, loss scales 1, 2^16, 2^-10 and others, head dims 64/128/96
 * (an odd log2: the scale is not a power of 2), every bias form, block sizes and output dtypes;
 * (2) the head predictor against every row through the emulation's own row functions (abl_sdpa_row for
 * the forward weight, abl_memeff_backward_row for dS) on random monotone logit tables with ties, steps
 * and cliffs, and on non-monotone ones (the predictor's fallback). */
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
#include "abl/kernel/backward.h"
#include "kernel/abl_backward_memeff.h"
#include "abl_test_engines.h"

static uint64_t g_rng = 0x2545F4914F6CDD1DULL;

static unsigned rnd(unsigned n)
{
    return abl_test_rnd(&g_rng, n);
}

static void setup(abl_simulate_config *cfg, const char *spec, const char *dtype, const char *slopes, int heads,
                  uint64_t n)
{
    const abl_test_layer layer = {.spec = spec, .dtype = dtype, .slopes = slopes, .heads = heads, .n = n};
    abl_test_layer_config(cfg, &layer);
}

/* The predictor and the emulation of one layer at loss scale 2^J (abl_test_agree): both of kind memeff, every
 * field of every head, and the totals. */
static void agree(const char *spec, const char *dtype, const char *slopes, int heads, uint64_t n, long j)
{
    abl_backward_config b;
    memset(&b, 0, sizeof b);
    b.log2_upstream = j;
    const abl_test_layer layer = {.spec = spec, .dtype = dtype, .slopes = slopes, .heads = heads, .n = n,
                                  .backward = &b, .kind = ABL_BACKWARD_MEMEFF};
    abl_test_agree(&layer, NULL);
}

static const char *const k_dtypes[] = {"fp16", "bf16", "fp32"};
static const int k_hdims[] = {64, 128};

/* The grid: H {1, 5, 8, 12, 16}, N {1, 64, 65, 600}, every dtype, loss scale and head dim. */
static void test_grid_short(void **state)
{
    (void)state;
    static const uint64_t ctx[] = {1, 64, 65, 600};
    abl_test_backward_grid("sdpa-efficient", k_hdims, 2, ctx, sizeof ctx / sizeof ctx[0], ABL_BACKWARD_MEMEFF, 0);
}

/* N = 2048 and 3000: every dtype and loss scale, the head dims and head counts in turn (the emulation is
 * the cost here: H N^2 / 2 weights each). */
static void test_grid_long(void **state)
{
    (void)state;
    abl_test_backward_grid_long("sdpa-efficient", k_hdims, 2, ABL_BACKWARD_MEMEFF, 0);
#ifdef ABL_TEST_SANITIZED
    /* ASan+UBSan build: falcon's absolute form on one head each */
    agree("falcon-hf-sdpa", "bf16", NULL, 1, 2048, 0);
    agree("falcon-hf-sdpa", "fp16", NULL, 1, 3000, 16);
#else
    agree("falcon-hf-sdpa", "bf16", NULL, 8, 2048, 0);   /* the absolute form, the bias scaled by 1/8 */
    agree("falcon-hf-sdpa", "fp16", NULL, 5, 3000, 16);
#endif
}

/* Explicit slope lists, other loss scales and head dims, and other pipeline fields. */
static void test_pipelines(void **state)
{
    (void)state;
    static const char *const lists[] = {
        "slopes:0.00001,0.0001,0.001", "slopes:0.004,0.01,0.03", "slopes:1,2,4,8",    "slopes:16,64,100",
        "slopes:0.3,0.45,0.6,0.75",    "slopes:0.07,0.12,0.19",  "slopes:0.5,0.0625",
    };
    static const char *const extra[] = {"", ",output-dtype=fp32", ",output-dtype=fp16", ",output-dtype=bf16",
                                        ",output-dtype=fp8-e4m3fn", ",bias-form=symmetric", ",bias-form=trailing",
                                        ",block=16", ",block=0", ",block=100", ",bias-form=absolute",
                                        ",head-dim=96", ",head-dim=80", ",block=1"};
    static const long scales[] = {0, 16, -10, 3, -3, 1, -24, 40};
    static const char *const presets[] = {"sdpa-efficient", "falcon-hf-sdpa"};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (size_t x = 0; x < 4; x++) {
            char spec[128];
            size_t k = (l * 4 + x) % (sizeof extra / sizeof extra[0]);
            snprintf(spec, sizeof spec, "%s%s", presets[(l + x) % 2], extra[k]);
            agree(spec, k_dtypes[(l + x) % 3], lists[l], 0, (l + x) % 2 ? 300 : 450, scales[(l + 3 * x) % 8]);
        }
}

/* Random pipelines, slopes and loss scales through the whole path. */
static void test_random_pipelines(void **state)
{
    (void)state;
    static const char *const extra[] = {"", ",output-dtype=fp32", ",output-dtype=fp8-e5m2", ",bias-form=symmetric",
                                        ",bias-form=trailing", ",bias-form=absolute", ",block=1", ",block=7",
                                        ",block=32", ",block=0", ",head-dim=128", ",head-dim=72",
                                        ",logit-dtype=bf16", ",bias-dtype=fp32"};
    for (int k = 0; k < 60; k++) {
        char spec[160], slopes[160];
        snprintf(spec, sizeof spec, "sdpa-efficient%s%s", extra[rnd(14)], extra[rnd(14)]);
        int heads = 1 + (int)rnd(3);
        int len = snprintf(slopes, sizeof slopes, "slopes:");
        for (int h = 0; h < heads; h++) {
            double m = ldexp(1.0 + rnd(1000) / 1000.0, (int)rnd(14) - 11);   /* [2^-11, 2^3) */
            len += snprintf(slopes + len, sizeof slopes - (size_t)len, "%s%.6g", h ? "," : "", m);
        }
        agree(spec, k_dtypes[rnd(3)], slopes, 0, 1 + rnd(k < 10 ? 70 : 400), (long)rnd(41) - 20);
    }
}

/* The reference head: every row through the emulation's row functions, counted as the emulation counts. */
static void rows_reference(const abl_emul *em, const float *T, uint64_t n, double up, float scale,
                           abl_bwd_head *o)
{
    float *x = malloc(n * sizeof *x), *acc = malloc(n * sizeof *acc), *w = malloc(n * sizeof *w);
    float *ds = malloc(n * sizeof *ds);
    assert_true(x && acc && w && ds);
    memset(o, 0, sizeof *o);
    o->first_blind = o->fwd_first_blind = -1;
    for (uint64_t i = 0; i < n; i++) {
        for (uint64_t j = 0; j <= i; j++)
            x[j] = T[abl_emul_pos(em, i, j)];
        (void)abl_sdpa_row(em, x, i + 1, acc, w, NULL);
        abl_memeff_backward_row(&em->out, em->block, scale, up, x, i + 1, ds);
        int last = i == n - 1;
        for (uint64_t j = 0; j <= i; j++) {
            int64_t d = (int64_t)(i - j);
            if (last && w[j] == 0.0f && (o->fwd_first_blind < 0 || d < o->fwd_first_blind))
                o->fwd_first_blind = d;
            if (ds[j] != 0.0f)
                continue;
            o->matrix_zeros++;
            o->only_matrix += w[j] != 0.0f;
            if (last) {
                o->row_zeros++;
                o->only_row += w[j] != 0.0f;
                if (o->first_blind < 0 || d < o->first_blind)
                    o->first_blind = d;
            }
        }
    }
    free(x);
    free(acc);
    free(w);
    free(ds);
}

static void table_case(const char *spec, uint64_t n, float *T, int wild, long j, float scale)
{
    abl_format bf16;
    assert_int_equal(abl_format_lookup("bf16", &bf16), ABL_OK);
    abl_pipeline p;
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, &bf16, &p, &err), ABL_OK);
    free(err);
    abl_emul em;
    assert_int_equal(abl_emul_init(&p, n, &em), ABL_OK);
    abl_test_logit_table(&g_rng, T, n, wild);
    if (em.form == ABL_BIAS_ABSOLUTE)   /* pos = j: the logit grows with the position */
        for (uint64_t k = 0; k < n / 2; k++) {
            float t = T[k];
            T[k] = T[n - 1 - k];
            T[n - 1 - k] = t;
        }
    double up = ldexp(1.0, (int)j);
    abl_bwd_head fast, ref;
    assert_int_equal(abl_memeff_predict_head(&em, T, n, up, scale, &fast), ABL_OK);
    rows_reference(&em, T, n, up, scale, &ref);
    if (!abl_test_bwd_same(&fast, &ref, 0)) {
        print_error("%s N=%llu 2^%ld scale %a%s:\n", spec, (unsigned long long)n, j, (double)scale,
                    wild ? " (not monotone)" : "");
        abl_test_bwd_head_say("rows", 0, &ref);
        abl_test_bwd_head_say("predictor", 0, &fast);
    }
    assert_true(abl_test_bwd_same(&fast, &ref, 0));
}

/* The head predictor against the rows on random tables, every bias form, block sizes and dtypes. */
static void test_random_tables(void **state)
{
    (void)state;
    static const char *const forms[] = {"relative", "absolute", "symmetric", "trailing"};
    static const char *const outs[] = {"bf16", "fp16", "fp32", "fp8-e4m3fn", "fp8-e5m2"};
    static const int blocks[] = {0, 1, 2, 5, 16, 64, 128};
    float *T = malloc(600 * sizeof *T);
    assert_non_null(T);
#ifdef ABL_TEST_SANITIZED
    /* ASan+UBSan build (docs/ci.md): 100 tables (25 short), still every form, output dtype and block in
     * turn at random; the other builds run 400 (100 short). */
    const int tables = 100, short_tables = 25;
#else
    const int tables = 400, short_tables = 100;
#endif
    for (int k = 0; k < tables; k++) {
        char spec[160];
        snprintf(spec, sizeof spec, "sdpa-efficient,bias-form=%s,output-dtype=%s,block=%d", forms[rnd(4)],
                 outs[rnd(5)], blocks[rnd(7)]);
        float scale = (float)(1.0 / sqrt((double)(16 + rnd(240))));
        table_case(spec, 1 + rnd(k < short_tables ? 40 : 600), T, k % 10 == 9, (long)rnd(61) - 30, scale);
    }
    free(T);
}

/* What the predictor does not answer: a captured dP (its D is rowsum(dO O)), Gaussian logits, another
 * softmax's backward through this entry. */
static void test_refusals(void **state)
{
    (void)state;
    abl_simulate_config cfg;
    setup(&cfg, "sdpa-efficient", "fp16", NULL, 4, 64);
    abl_backward_config b;
    memset(&b, 0, sizeof b);
    abl_backward p;
    mpq_t one;
    mpq_init(one);
    mpq_set_ui(one, 1, 1);
    cfg.logit_std = one;
    assert_int_equal(abl_backward_predict(&cfg, &b, &p), ABL_ERR_UNSUPPORTED);
    abl_backward_free(&p);
    mpq_clear(one);
    abl_bwd_head *res = NULL;
    int heads = -1;
    setup(&cfg, "eager", "fp16", NULL, 4, 64);
    assert_int_equal(abl_memeff_predict(&cfg, 0, &res, &heads), ABL_ERR_UNSUPPORTED);
    assert_null(res);
    assert_int_equal(heads, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_tables),
        cmocka_unit_test(test_grid_short),
        cmocka_unit_test(test_pipelines),
        cmocka_unit_test(test_random_pipelines),
        cmocka_unit_test(test_grid_long),
        cmocka_unit_test(test_refusals),
    };
    int rc = cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
    mpfr_free_cache();
    return rc;
}
