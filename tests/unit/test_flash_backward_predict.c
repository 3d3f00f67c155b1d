/* Unit tests: the zero-logit predictor of FlashAttention-2's backward (backward kind flash, the flash2
 * preset; abl_backward_flash_predict.c; modelled from source, not measured) equals the emulation exactly:
 * (1) abl_backward_predict against abl_backward_run (simulate --backward: every row's lse as the forward
 * kernel stores it, then every key's dS; tests/flash_backward_check.py checks those formulas independently
 * with numpy and mpmath) on every head's first zero-dS distance and its last-row and matrix zero counts,
 * over head counts, contexts around the block edges and long ones, the three dtypes, loss scales 1, 2^16,
 * 2^-10 and others, head dims 64/128/96, bias forms, block sizes and output dtypes;
 * (2) the head predictor against every row through the emulation's own row function
 * (abl_flash_backward_row) on random ascending logit tables with ties, small steps and cliffs, where the
 * predictor's certified sum bounds leave rows open (their keys summed with the early stop): the test
 * checks that such rows occur, so both of its paths are compared. */
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
#include "alibi_blind.h"
#include "abl/kernel/backward.h"
#include "kernel/abl_backward_flash.h"
#include "abl_test_schedule.h"
#include "abl_test_engines.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ULL;

static unsigned rnd(unsigned n)
{
    return abl_test_rnd(&g_rng, n);
}

/* The predictor and the emulation of one layer at loss scale 2^j (abl_test_agree): both of kind flash, the
 * gradient's first zero and counts of every head, and the totals. */
static void agree(const char *spec, const char *dtype, const char *slopes, int heads, uint64_t n, long j)
{
    abl_backward_config b;
    memset(&b, 0, sizeof b);
    b.log2_upstream = j;
    const abl_test_layer layer = {.spec = spec, .dtype = dtype, .slopes = slopes, .heads = heads, .n = n,
                                  .backward = &b, .kind = ABL_BACKWARD_FLASH, .grad_only = 1};
    abl_test_agree(&layer, NULL);
}

static const char *const k_dtypes[] = {"fp16", "bf16", "fp32"};
static const int k_hdims[] = {64, 128, 96};

/* H {1, 5, 8, 12, 16}, N around the 64-key blocks and 600, every dtype, loss scale and head dim. */
static void test_grid_short(void **state)
{
    (void)state;
    static const uint64_t ctx[] = {1, 2, 63, 64, 65, 129, 600};
    abl_test_backward_grid("flash2", k_hdims, 3, ctx, sizeof ctx / sizeof ctx[0], ABL_BACKWARD_FLASH, 1);
}

/* N = 2048 and 3000 (every dtype and loss scale), and 32 and 64 heads, whose smallest slopes sum thousands
 * of keys a row: the rows the bounds leave open. */
static void test_grid_long(void **state)
{
    (void)state;
    abl_test_backward_grid_long("flash2", k_hdims, 3, ABL_BACKWARD_FLASH, 1);
#ifdef ABL_TEST_SANITIZED
    agree("flash2", "fp16", NULL, 64, 600, 0);   /* ASan+UBSan build (docs/ci.md): 64 heads at 600 */
#else
    agree("flash2", "bf16", NULL, 32, 3000, 0);
    agree("flash2", "fp16", NULL, 64, 1500, 0);
#endif
}

/* Explicit slope lists (tiny ones: every key summed; large: a few), other loss scales, and pipeline fields. */
static void test_pipelines(void **state)
{
    (void)state;
    static const char *const lists[] = {
        "slopes:0.00001,0.0001,0.001", "slopes:0.004,0.01,0.03", "slopes:1,2,4,8",    "slopes:16,64,100",
        "slopes:0.3,0.45,0.6,0.75",    "slopes:0.07,0.12,0.19",  "slopes:0.5,0.0625", "slopes:0.0001,0.002",
    };
    static const char *const extra[] = {"", ",output-dtype=fp32", ",output-dtype=fp16", ",output-dtype=bf16",
                                        ",output-dtype=fp8-e4m3fn", ",block=16", ",block=0", ",block=100",
                                        ",head-dim=80", ",block=1", ",block=128", ",output-dtype=fp8-e5m2"};
    static const long scales[] = {0, 16, -10, 3, -3, 1, -24, 40};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (size_t x = 0; x < 4; x++) {
            char spec[128];
            size_t k = (l * 4 + x) % (sizeof extra / sizeof extra[0]);
            snprintf(spec, sizeof spec, "flash2%s", extra[k]);
            agree(spec, k_dtypes[(l + x) % 3], lists[l], 0, (l + x) % 2 ? 700 : 1100, scales[(l + 3 * x) % 8]);
        }
}

/* Random slopes and loss scales through the whole path. */
static void test_random_pipelines(void **state)
{
    (void)state;
    static const char *const extra[] = {"", ",output-dtype=fp32", ",output-dtype=fp8-e5m2", ",block=1",
                                        ",block=7", ",block=32", ",block=0", ",head-dim=128", ",head-dim=72"};
    for (int k = 0; k < 40; k++) {
        char spec[160], slopes[160];
        snprintf(spec, sizeof spec, "flash2%s", extra[rnd(9)]);
        int heads = 1 + (int)rnd(3);
        int len = snprintf(slopes, sizeof slopes, "slopes:");
        for (int h = 0; h < heads; h++) {
            double m = ldexp(1.0 + rnd(1000) / 1000.0, (int)rnd(14) - 11);   /* [2^-11, 2^3) */
            len += snprintf(slopes + len, sizeof slopes - (size_t)len, "%s%.6g", h ? "," : "", m);
        }
        agree(spec, k_dtypes[rnd(3)], slopes, 0, 1 + rnd(k < 10 ? 70 : 900), (long)rnd(41) - 20);
    }
}

/* A random ascending table: steps of random size (ties, small steps, cliffs). */
static void random_table(float *X, uint64_t n)
{
    double v = 0.0, base = rnd(2) ? 0.01 : 0.3;
    int mode = (int)rnd(4);
    for (uint64_t k = n; k-- > 0;) {
        X[k] = (float)v;
        unsigned r = rnd(100);
        double step = mode == 0 ? base : mode == 1 ? 0.002 : mode == 2 ? 2.0 : 0.05;
        if (r < 25)
            step = 0.0;         /* ties (a rounded bias) */
        else if (r < 27)
            step *= 40.0;       /* a cliff */
        v -= step * (0.5 + rnd(1000) / 1000.0);
        v = (double)(float)v;
    }
}

/* The reference head: every row through the emulation's row function, counted as the emulation counts. */
static void rows_reference(const abl_emul *em, const float *X, uint64_t n, double up, abl_bwd_head *o)
{
    float *ds = malloc(n * sizeof *ds);
    assert_non_null(ds);
    int rel = em->form == ABL_BIAS_RELATIVE || em->form == ABL_BIAS_SYMMETRIC;
    memset(o, 0, sizeof *o);
    o->first_blind = o->fwd_first_blind = -1;
    for (uint64_t i = 0; i < n; i++) {
        abl_flash_backward_row(em, up, X + (rel ? n - 1 - i : 0), i + 1, ds);
        for (uint64_t j = 0; j <= i; j++) {
            if (ds[j] != 0.0f)
                continue;
            o->matrix_zeros++;
            if (i == n - 1) {
                o->row_zeros++;
                if (o->first_blind < 0 || (int64_t)(i - j) < o->first_blind)
                    o->first_blind = (int64_t)(i - j);
            }
        }
    }
    free(ds);
}

static uint64_t table_case(const char *spec, const char *dtype, uint64_t n, float *X, long j)
{
    abl_format f;
    assert_int_equal(abl_format_lookup(dtype, &f), ABL_OK);
    abl_pipeline p;
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, &f, &p, &err), ABL_OK);
    free(err);
    abl_emul em;
    assert_int_equal(abl_emul_init(&p, n, &em), ABL_OK);
    random_table(X, n);
    double up = ldexp(1.0, (int)j);
    abl_bwd_head fast, ref;
    uint64_t open = 0;
    assert_int_equal(abl_flash_backward_predict_table(&em, X, up, &fast, &open), ABL_OK);
    rows_reference(&em, X, n, up, &ref);
    if (!abl_test_bwd_same(&fast, &ref, 1)) {
        print_error("%s %s N=%llu 2^%ld:\n", spec, dtype, (unsigned long long)n, j);
        abl_test_bwd_head_say("rows", 0, &ref);
        abl_test_bwd_head_say("predictor", 0, &fast);
    }
    assert_true(abl_test_bwd_same(&fast, &ref, 1));
    return open;
}

/* The head predictor against the rows on random tables, both row layouts, block sizes, dtypes; some rows
 * must have been left open by the bounds, or the exact path went untested. */
static void test_random_tables(void **state)
{
    (void)state;
    static const char *const forms[] = {"absolute", "relative", "trailing", "symmetric"};
    static const char *const outs[] = {"bf16", "fp16", "fp32", "fp8-e4m3fn", "fp8-e5m2"};
    static const int blocks[] = {0, 1, 5, 8, 16, 64, 128};
    float *X = malloc(2500 * sizeof *X);
    assert_non_null(X);
    uint64_t open = 0;
#ifdef ABL_TEST_SANITIZED
    /* ASan+UBSan build (docs/ci.md): 100 tables (30 short), still every layout, block and dtype in turn at
     * random, and still some rows left open; the other builds run 300 (100 short). */
    const int tables = 100, short_tables = 30;
#else
    const int tables = 300, short_tables = 100;
#endif
    for (int k = 0; k < tables; k++) {
        char spec[160];
        snprintf(spec, sizeof spec, "flash2,bias-form=%s,block=%d", forms[rnd(4)], blocks[rnd(7)]);
        open += table_case(spec, outs[rnd(5)], 1 + rnd(k < short_tables ? 60 : 2500), X, (long)rnd(41) - 20);
    }
    free(X);
    print_message("rows left open by the bounds: %llu\n", (unsigned long long)open);
    assert_true(open > 0);
}

/* What the predictor does not answer: Gaussian logits, a bidirectional layer, split-KV. */
static void test_refusals(void **state)
{
    (void)state;
    abl_simulate_config cfg;
    abl_backward_config b;
    memset(&b, 0, sizeof b);
    abl_backward p;
    const abl_test_layer flash = {.spec = "flash2", .dtype = "fp16", .heads = 4, .n = 64};
    const abl_test_layer split = {.spec = "flash2,splits=4", .dtype = "fp16", .heads = 4, .n = 64};
    assert_int_equal(abl_test_layer_config(&cfg, &flash), ABL_OK);
    mpq_t one;
    mpq_init(one);
    mpq_set_ui(one, 1, 1);
    cfg.logit_std = one;
    assert_int_equal(abl_backward_predict(&cfg, &b, &p), ABL_ERR_UNSUPPORTED);
    abl_backward_free(&p);
    mpq_clear(one);
    assert_int_equal(abl_test_layer_config(&cfg, &flash), ABL_OK);
    cfg.attention = ABL_ATTENTION_BIDIRECTIONAL;
    assert_int_not_equal(abl_backward_predict(&cfg, &b, &p), ABL_OK);
    abl_backward_free(&p);
    assert_int_equal(abl_test_layer_config(&cfg, &split), ABL_OK);
    assert_int_not_equal(abl_backward_predict(&cfg, &b, &p), ABL_OK);
    abl_backward_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_short),   cmocka_unit_test(test_grid_long),
        cmocka_unit_test(test_pipelines),    cmocka_unit_test(test_random_pipelines),
        cmocka_unit_test(test_random_tables), cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
}
