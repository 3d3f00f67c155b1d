/* The influence rule (src/lib/kernel/abl_influence.c) against closed forms, and the influence counts of
 * simulate and --predict against a recount of the emulated weights with that closed form.
 * - fp16 keeps subnormals down to 2^-24; round to nearest even sends exactly 2^-25 (the tie) to the even
 *   0 and anything above it to 2^-24: the largest fp32 weight that vanishes in fp16 is 2^-25. bf16: 2^-134.
 * - P in bf16, then an fp16 accumulator: bf16(w) <= 2^-25 is needed; bf16's spacing just above 2^-25 is
 *   2^-32, so w <= 2^-25 + 2^-33 rounds down to 2^-25 (the tie goes to 2^-25's even mantissa) and vanishes.
 * - fp32 P and an fp32 accumulator lose nothing an fp32 weight keeps: the rule is the weight's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#include "kernel/abl_round.h"
#include "kernel/abl_influence.h"
#include "abl_test_schedule.h"

static void pipeline(const char *spec, const char *dtype, abl_pipeline *p)
{
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    char *err = NULL;
    abl_status st = abl_pipeline_parse_msg(spec, &model, p, &err);
    if (st == ABL_OK)
        st = abl_pipeline_check_msg(p, &err);
    if (st != ABL_OK)
        print_error("%s: %s\n", spec, err != NULL ? err : "?");
    free(err);
    assert_int_equal(st, ABL_OK);
}

static void expect_threshold(const char *spec, const char *dtype, int active, float max)
{
    abl_pipeline p;
    pipeline(spec, dtype, &p);
    abl_emul em;
    assert_int_equal(abl_emul_init(&p, 16, &em), ABL_OK);
    if (em.infl_active != active || em.infl_max != max)
        print_error("%s --dtype %s: active %d max %a, want %d %a\n", spec, dtype, em.infl_active, (double)em.infl_max,
                    active, (double)max);
    assert_int_equal(em.infl_active, active);
    assert_true(em.infl_max == max);
    /* the rule is monotone: the threshold vanishes, the next float up does not */
    assert_true(abl_influence_zero(&em, max));
    assert_false(abl_influence_zero(&em, nextafterf(max, 1.0f)));
}

static void test_thresholds(void **state)
{
    (void)state;
    expect_threshold("eager,output-dtype=fp32,pv-dtype=fp16", "bf16", 1, 0x1p-25f);
    expect_threshold("llamacpp-cpu", "bf16", 1, 0x1p-25f);
    expect_threshold("eager,output-dtype=fp32,pv-dtype=bf16", "bf16", 1, 0x1p-134f);
    expect_threshold("eager,output-dtype=fp32,pv-dtype=fp32,pv-accumulate=fp16", "bf16", 1, 0x1p-25f);
    expect_threshold("eager,output-dtype=fp32,pv-dtype=bf16,pv-accumulate=fp16", "bf16", 1, 0x1p-25f + 0x1p-33f);
    expect_threshold("eager,pv-dtype=fp16", "bf16", 1, 0x1p-25f + 0x1p-33f);   /* bf16 weights, fp16 P */
    expect_threshold("eager,output-dtype=fp32,pv-dtype=fp32", "bf16", 0, 0.0f);
    /* P in the model dtype, as the weights come out: nothing more is lost */
    expect_threshold("eager", "bf16", 0, 0x1p-134f);
    expect_threshold("eager", "fp16", 0, 0x1p-25f);
    expect_threshold("flash2", "fp16", 0, 0x1p-25f);
    /* fp16 weights through bf16 P: bf16 holds 2^-24 */
    expect_threshold("eager,output-dtype=fp16", "bf16", 0, 0x1p-25f);
    /* kernels that emulate P.V themselves keep the weight rule whatever the fields say */
    expect_threshold("sdpa-efficient,output-dtype=fp32,pv-dtype=fp16", "bf16", 0, 0.0f);
    expect_threshold("llamacpp-cpu-fa,pv-dtype=fp16", "bf16", 0, 0.0f);
}

static void test_bad_fields(void **state)
{
    (void)state;
    abl_format model;
    assert_int_equal(abl_format_lookup("bf16", &model), ABL_OK);
    abl_pipeline p;
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg("eager,pv-accumulate=bf16", &model, &p, &err), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, &err), ABL_ERR_UNSUPPORTED);
    assert_non_null(strstr(err, "pv-accumulate"));
    free(err);
    err = NULL;
    assert_int_equal(abl_pipeline_parse_msg("eager,pv-dtype=fp64", &model, &p, &err), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, &err), ABL_ERR_UNSUPPORTED);
    assert_non_null(strstr(err, "pv-dtype"));
    free(err);
    err = NULL;
    assert_int_not_equal(abl_pipeline_parse_msg("eager,pv-dtype=fp17", &model, &p, &err), ABL_OK);
    free(err);
}

/* The row hook's weights recounted with the closed-form threshold: fp16 P loses w <= 2^-25. */
typedef struct recount {
    uint64_t n;
    uint64_t matrix[64], row[64];
    int64_t first[64];
} recount;

static void hook(void *ctx, int head, uint64_t row, const float *logits, const float *weights)
{
    (void)logits;
    recount *r = ctx;
    int h = head - 1;
    for (uint64_t j = 0; j <= row; j++) {
        if (weights[j] <= 0x1p-25f) {
            r->matrix[h]++;
            r->row[h] += row == r->n - 1;
        }
    }
    if (row == r->n - 1)   /* the smallest distance, from the diagonal */
        for (uint64_t d = 0; d <= row; d++)
            if (weights[row - d] <= 0x1p-25f) {
                r->first[h] = (int64_t)d;
                break;
            }
}

static void recount_case(const char *spec, const char *dtype, int heads, uint64_t n)
{
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    pipeline(spec, dtype, &cfg.pipeline);
    cfg.heads = heads;
    cfg.context = n;
    cfg.threads = 2;
    recount rc;
    memset(&rc, 0, sizeof rc);
    rc.n = n;
    for (int h = 0; h < 64; h++)
        rc.first[h] = -1;
    cfg.row_hook = hook;
    cfg.row_hook_ctx = &rc;
    abl_simulation sim;
    assert_int_equal(abl_simulate_run(&cfg, &sim), ABL_OK);
    cfg.row_hook = NULL;
    abl_prediction pred;
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
    assert_true(sim.influence_differs);
    assert_true(pred.influence_differs);
    uint64_t lost = 0;
    for (int h = 0; h < heads; h++) {
        const abl_sim_head *a = &sim.results[h];
        if (a->matrix_influence_zeros != rc.matrix[h] || a->row_influence_zeros != rc.row[h] ||
            a->first_influence_zero != rc.first[h])
            print_error("%s head %d: sim (%lld, %llu, %llu) recount (%lld, %llu, %llu)\n", spec, h + 1,
                        (long long)a->first_influence_zero, (unsigned long long)a->row_influence_zeros,
                        (unsigned long long)a->matrix_influence_zeros, (long long)rc.first[h],
                        (unsigned long long)rc.row[h], (unsigned long long)rc.matrix[h]);
        assert_int_equal(a->matrix_influence_zeros, rc.matrix[h]);
        assert_int_equal(a->row_influence_zeros, rc.row[h]);
        assert_int_equal(a->first_influence_zero, rc.first[h]);
        /* a zero weight has no influence: the influence-zero keys include them */
        assert_true(a->matrix_influence_zeros >= a->matrix_zeros);
        lost += a->matrix_influence_zeros - a->matrix_zeros;
    }
    assert_true(lost > 0);   /* the case is one where fp16 P loses keys fp32 weights keep */
    assert_int_equal(abl_prediction_agrees(&sim, &pred), 1);
    assert_int_equal(sim.matrix_influence_zeros, pred.matrix_influence_zeros);
    abl_prediction_free(&pred);
    abl_simulation_free(&sim);
}

static void test_recount(void **state)
{
    (void)state;
    recount_case("llamacpp-cpu", "bf16", 8, 700);                                        /* ggml predictor */
    recount_case("eager,output-dtype=fp32,pv-dtype=fp16", "bf16", 8, 900);               /* relative */
    recount_case("bloom-hf,output-dtype=fp32,pv-dtype=fp16", "bf16", 8, 900);            /* absolute */
    recount_case("flash2,output-dtype=fp32,pv-dtype=fp16", "bf16", 8, 900);              /* flash */
    recount_case("eager,output-dtype=fp32,pv-dtype=fp32,pv-accumulate=fp16", "bf16", 4, 600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_bad_fields),
        cmocka_unit_test(test_recount),
    };
    return cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
}
