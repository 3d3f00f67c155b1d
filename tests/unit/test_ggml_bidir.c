/* The bidirectional zero-logit predictor of ggml's soft_max (llamacpp-cpu on an encoder, abl_ggml_bidir.c)
 * against the emulation it must equal (abl_simulate_run, every row of the N x N matrix run key by key):
 * first blind distance of the end row, end/middle/matrix weight zeros and the influence counts (P to F16),
 * for N a multiple of 8 or not (the last N mod 8 keys through libm expf, and rows whose diagonal is among
 * them), N below one vector, fp32 and fp16 masks, both exp builds, head counts that are not powers of two.
 * The emulation's own exactness is checked against a real ggml build in tests/encoders_ggml.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"

static void run_case(const char *spec, int heads, uint64_t n, uint64_t *zeros, uint64_t *lost)
{
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(abl_pipeline_parse_msg(spec, NULL, &cfg.pipeline, NULL), ABL_OK);
    cfg.heads = heads;
    cfg.context = n;
    cfg.attention = ABL_ATTENTION_BIDIRECTIONAL;
    abl_simulation sim;
    abl_prediction pred;
    assert_int_equal(abl_simulate_run(&cfg, &sim), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
    int ok = abl_prediction_agrees(&sim, &pred) && sim.mid_row_zeros == pred.mid_row_zeros;
    if (!ok)
        for (int h = 0; h < sim.heads; h++)
            print_message("%s H %d N %llu head %d: sim fb %lld row %llu mid %llu mat %llu infl %llu; "
                          "pred fb %lld row %llu mid %llu mat %llu infl %llu\n", spec, heads,
                          (unsigned long long)n, h + 1, (long long)sim.results[h].first_blind,
                          (unsigned long long)sim.results[h].row_zeros, (unsigned long long)sim.results[h].mid_row_zeros,
                          (unsigned long long)sim.results[h].matrix_zeros,
                          (unsigned long long)sim.results[h].matrix_influence_zeros,
                          (long long)pred.results[h].first_blind, (unsigned long long)pred.results[h].row_zeros,
                          (unsigned long long)pred.results[h].mid_row_zeros,
                          (unsigned long long)pred.results[h].matrix_zeros,
                          (unsigned long long)pred.results[h].matrix_influence_zeros);
    assert_true(ok);
    *zeros += sim.matrix_zeros;
    *lost += sim.matrix_influence_zeros;
    abl_simulation_free(&sim);
    abl_prediction_free(&pred);
}

static void test_predict_agrees(void **state)
{
    (void)state;
    const char *specs[] = {"llamacpp-cpu", "llamacpp-cpu,mask-dtype=fp16", "llamacpp-cpu,exp=ggml-scalar"};
    const int shapes[][2] = {{16, 1024}, {12, 1003}, {5, 333}, {3, 7}, {1, 1}, {2, 9}, {24, 517}};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        uint64_t zeros = 0, lost = 0;
        for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++)
            run_case(specs[k], shapes[q][0], (uint64_t)shapes[q][1], &zeros, &lost);
        /* the shapes reach both kinds of zero, so equality is not equality of nothing */
        assert_true(zeros > 0);
        assert_true(lost > zeros);
    }
}

/* A steep head whose matrix past the fp16 mask's exact range (2048): the mask is rounded, e is a step
 * function of d, the monotone suffix rule must still hold on the vectors' table. */
static void test_fp16_mask_long(void **state)
{
    (void)state;
    uint64_t zeros = 0, lost = 0;
    run_case("llamacpp-cpu,mask-dtype=fp16", 3, 2600, &zeros, &lost);
    assert_true(zeros > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predict_agrees),
        cmocka_unit_test(test_fp16_mask_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
