/* Unit tests: the fast zero-logit predictor of the SDPA kernels (abl_predict_sdpa.c) equals the
 * row-by-row kernel model exactly: (1) the whole --predict path against `simulate` (every row through
 * abl_sdpa_row from its own logits; kernels.calibration checks that model against the H200
 * measurements) for the three SDPA presets, three model dtypes, head counts and slope lists, contexts
 * around the block edges; (2) abl_predict_sdpa_head against abl_predict_sdpa_head_rows (the same
 * kernel model, every row) on random non-increasing logit tables with ties, steps and cliffs, every
 * bias form, many block sizes and output dtypes. */
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
#include "kernel/abl_predict_sdpa.h"
#include "abl_test_engines.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ULL;

static unsigned rnd(unsigned n)
{
    return abl_test_rnd(&g_rng, n);
}

/* Every head's first blind distance, zero counts and influence counts from --predict equal simulate's
 * (abl_test_agree). */
static void agree(const char *spec, const char *dtype, const char *slopes, int heads, uint64_t n)
{
    const abl_test_layer layer = {.spec = spec, .dtype = dtype, .slopes = slopes, .heads = heads, .n = n};
    abl_test_agree(&layer, NULL);
}

static const char *const k_presets[] = {"sdpa-efficient", "sdpa-cudnn", "falcon-hf-sdpa"};
static const char *const k_dtypes[] = {"bf16", "fp16", "fp32"};

/* Contexts at and around the block edges (64: efficient, 128: cuDNN), head counts that are not
 * powers of two, press slopes. */
static void test_presets_block_edges(void **state)
{
    (void)state;
    static const uint64_t ctx[] = {1, 2, 63, 64, 65, 127, 128, 129, 200};
    static const int heads[] = {1, 3, 12, 16, 40, 71};
    for (size_t p = 0; p < 3; p++)
        for (size_t d = 0; d < 3; d++)
            for (size_t c = 0; c < sizeof ctx / sizeof ctx[0]; c++)
                agree(k_presets[p], k_dtypes[d], "press", heads[(p + d + c) % 6], ctx[c]);
}

/* Longer contexts: the first heads of a 64-head layer go blind well inside them. */
static void test_presets_long(void **state)
{
    (void)state;
    for (size_t p = 0; p < 3; p++)
        for (size_t d = 0; d < 3; d++)
            agree(k_presets[p], k_dtypes[d], "press", 12, 1000);
    agree("sdpa-efficient", "bf16", "slopes:0.917,0.5,0.0625", 0, 2048);
    agree("sdpa-cudnn", "fp16", "slopes:0.917,0.0625,0.01", 0, 2048);
    agree("falcon-hf-sdpa", "bf16", "slopes:2,0.917,0.25", 0, 2048);
    agree("sdpa-cudnn", "bf16", "slopes:0.917,0.3", 0, 3000);
    agree("falcon-hf-sdpa", "fp16", "slopes:0.917,0.1", 0, 3000);
}

/* Explicit slope lists: tiny (no zero inside the context, or only far ones), large (blind within
 * the first block, P underflowing inside a block), and between; other fields of the pipeline. */
static void test_slope_lists(void **state)
{
    (void)state;
    static const char *const lists[] = {
        "slopes:0.00001,0.0001,0.001",   "slopes:0.004,0.01,0.03",     "slopes:1,2,4,8",
        "slopes:16,64,100",              "slopes:0.3,0.45,0.6,0.75",   "slopes:0.07,0.12,0.19",
    };
    static const char *const extra[] = {"", ",output-dtype=fp32", ",output-dtype=fp16", ",output-dtype=bf16",
                                        ",output-dtype=fp8-e4m3fn", ",bias-form=symmetric", ",bias-form=trailing",
                                        ",block=16", ",block=0", ",block=100", ",bias-form=absolute"};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (size_t p = 0; p < 3; p++) {
            char spec[128];
            snprintf(spec, sizeof spec, "%s%s", k_presets[p], extra[(l * 3 + p) % 11]);
            agree(spec, k_dtypes[(l + p) % 3], lists[l], 0, l % 2 ? 300 : 450);
        }
}

/* Random pipelines through the whole path. */
static void test_random_pipelines(void **state)
{
    (void)state;
    static const char *const extra[] = {"", ",output-dtype=fp32", ",output-dtype=fp8-e5m2", ",bias-form=symmetric",
                                        ",bias-form=trailing", ",bias-form=absolute", ",bias-form=relative",
                                        ",block=1", ",block=7", ",block=32", ",block=0", ",softmax=sdpa-cudnn",
                                        ",logit-dtype=bf16", ",bias-dtype=fp32"};
    for (int k = 0; k < 60; k++) {
        char spec[160], slopes[160];
        snprintf(spec, sizeof spec, "%s%s%s", k_presets[rnd(3)], extra[rnd(14)], extra[rnd(14)]);
        int heads = 1 + (int)rnd(3);
        int len = snprintf(slopes, sizeof slopes, "slopes:");
        for (int h = 0; h < heads; h++) {
            double m = ldexp(1.0 + rnd(1000) / 1000.0, (int)rnd(14) - 11);   /* [2^-11, 2^3) */
            len += snprintf(slopes + len, sizeof slopes - (size_t)len, "%s%.6g", h ? "," : "", m);
        }
        agree(spec, k_dtypes[rnd(3)], slopes, 0, 1 + rnd(k < 10 ? 70 : 400));
    }
}

static void table_case(const char *spec, uint64_t n, float *T)
{
    abl_format bf16;
    assert_int_equal(abl_format_lookup("bf16", &bf16), ABL_OK);
    abl_pipeline p;
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, &bf16, &p, &err), ABL_OK);
    abl_emul em;
    assert_int_equal(abl_emul_init(&p, n, &em), ABL_OK);
    abl_test_logit_table(&g_rng, T, n, 0);
    if (em.form == ABL_BIAS_ABSOLUTE)   /* pos = j: the logit grows with the position */
        for (uint64_t k = 0; k < n / 2; k++) {
            float t = T[k];
            T[k] = T[n - 1 - k];
            T[n - 1 - k] = t;
        }
    abl_pred_head fast, ref;
    assert_int_equal(abl_predict_sdpa_head(&em, T, n, &fast), ABL_OK);
    assert_int_equal(abl_predict_sdpa_head_rows(&em, T, n, &ref), ABL_OK);
    if (fast.first_blind != ref.first_blind || fast.row_zeros != ref.row_zeros ||
        fast.matrix_zeros != ref.matrix_zeros)
        print_error("%s N=%llu: rows (%lld, %llu, %llu) fast (%lld, %llu, %llu)\n", spec, (unsigned long long)n,
                    (long long)ref.first_blind, (unsigned long long)ref.row_zeros,
                    (unsigned long long)ref.matrix_zeros, (long long)fast.first_blind,
                    (unsigned long long)fast.row_zeros, (unsigned long long)fast.matrix_zeros);
    assert_int_equal(fast.first_blind, ref.first_blind);
    assert_int_equal(fast.row_zeros, ref.row_zeros);
    assert_int_equal(fast.matrix_zeros, ref.matrix_zeros);
    free(err);
}

/* The head predictor against the row-by-row one on random tables. */
static void test_random_tables(void **state)
{
    (void)state;
    static const char *const soft[] = {"sdpa-efficient", "sdpa-cudnn"};
    static const char *const forms[] = {"relative", "absolute", "symmetric", "trailing"};
    static const char *const outs[] = {"bf16", "fp16", "fp32", "fp8-e4m3fn", "fp8-e5m2"};
    static const int blocks[] = {0, 1, 2, 5, 16, 64, 128};
    float *T = malloc(600 * sizeof *T);
    assert_non_null(T);
    for (int k = 0; k < 400; k++) {
        char spec[160];
        snprintf(spec, sizeof spec, "%s,bias-form=%s,output-dtype=%s,block=%d", soft[rnd(2)], forms[rnd(4)],
                 outs[rnd(5)], blocks[rnd(7)]);
        table_case(spec, 1 + rnd(k < 100 ? 40 : 600), T);
    }
    free(T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_tables),
        cmocka_unit_test(test_presets_block_edges),
        cmocka_unit_test(test_slope_lists),
        cmocka_unit_test(test_random_pipelines),
        cmocka_unit_test(test_presets_long),
    };
    int rc = cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
    mpfr_free_cache();
    return rc;
}
