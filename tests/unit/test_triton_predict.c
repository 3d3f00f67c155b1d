/* The zero-logit predictor of MosaicBERT's Triton kernel (mosaicbert-triton, abl_triton_predict.c) against
 * the emulation it must equal (abl_simulate_run runs every row through abl_triton_row): first blind, end-row,
 * middle-row and matrix zeros, causal and bidirectional, N below, at and off the 128-key block (the partial
 * last block, rows inside it), three model dtypes, a block size given in the pipeline, head counts that are
 * not powers of two. The kernel model itself is checked against a float32 rewrite of the Triton source in
 * tests/torch/validate_encoders.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"

static uint64_t run_case(const char *spec, const char *dtype, abl_attention at, int heads, uint64_t n)
{
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    assert_int_equal(abl_pipeline_parse_msg(spec, &model, &cfg.pipeline, NULL), ABL_OK);
    cfg.heads = heads;
    cfg.context = n;
    cfg.attention = at;
    abl_simulation sim;
    abl_prediction pred;
    assert_int_equal(abl_simulate_run(&cfg, &sim), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
    int ok = abl_prediction_agrees(&sim, &pred);
    for (int h = 0; !ok && h < sim.heads; h++)
        print_message("%s %s %s H %d N %llu head %d: sim %lld/%llu/%llu/%llu pred %lld/%llu/%llu/%llu\n", spec, dtype,
                      at == ABL_ATTENTION_BIDIRECTIONAL ? "bidir" : "causal", heads, (unsigned long long)n, h + 1,
                      (long long)sim.results[h].first_blind, (unsigned long long)sim.results[h].row_zeros,
                      (unsigned long long)sim.results[h].mid_row_zeros, (unsigned long long)sim.results[h].matrix_zeros,
                      (long long)pred.results[h].first_blind, (unsigned long long)pred.results[h].row_zeros,
                      (unsigned long long)pred.results[h].mid_row_zeros,
                      (unsigned long long)pred.results[h].matrix_zeros);
    assert_true(ok);
    uint64_t z = sim.matrix_zeros;
    abl_simulation_free(&sim);
    abl_prediction_free(&pred);
    return z;
}

static void test_predict_agrees(void **state)
{
    (void)state;
    const char *dtypes[] = {"bf16", "fp16", "fp32"};
    const int shapes[][2] = {{12, 1000}, {12, 128}, {5, 129}, {3, 7}, {1, 1}, {16, 1537}, {24, 300}};
    for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++) {
        uint64_t zeros[2] = {0, 0};
        for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++)
            for (int b = 0; b < 2; b++)
                zeros[b] += run_case("mosaicbert-triton", dtypes[k], b ? ABL_ATTENTION_BIDIRECTIONAL : ABL_ATTENTION_CAUSAL,
                                     shapes[q][0], (uint64_t)shapes[q][1]);
        /* both directions reach zeros, so equality is not equality of nothing */
        assert_true(zeros[0] > 0 && zeros[1] > zeros[0]);
    }
}

/* Other block sizes: more kept chains per residue, partial blocks of other lengths. */
static void test_block_sizes(void **state)
{
    (void)state;
    uint64_t z = run_case("mosaicbert-triton,block=16", "bf16", ABL_ATTENTION_BIDIRECTIONAL, 8, 700);
    z += run_case("mosaicbert-triton,block=64", "fp16", ABL_ATTENTION_CAUSAL, 8, 1001);
    assert_true(z > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predict_agrees),
        cmocka_unit_test(test_block_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
