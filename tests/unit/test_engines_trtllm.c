/* Unit tests: trtllm-context, TensorRT-LLM's context FMHA (fmha_v2 flash attention, Ampere/Ada) modelled from
 * source, not measured (docs/pipelines.md §3c; src/lib/kernel/abl_engines_trtllm.c). The zero-logit predictor
 * (the tile walk) agrees with `simulate` (weight and influence, matrix and last row) around the key-tile
 * boundaries, for the fp16 accumulator (fp16 kernels) and the fp32 one (bf16, context_fmha_fp32_acc), several
 * tile sizes (the non-tiled kernels' step_kv) and the last R rows; the preset says it is modelled, names its
 * revision and picks the accumulator fmhaRunner picks; the fields the kernel does not model are refused. The
 * numbers themselves are checked independently by tests/engines_check.py (check_trtllm_context). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#include "abl_test_engines.h"

/* simulate and predict for one case (abl_test_engines.h runs both) */
static void agree(const char *spec, const char *dtype, int heads, uint64_t n)
{
    abl_simulation sim;
    abl_prediction pred;
    abl_test_engine_runs(spec, dtype, heads, n, &sim, &pred);
    const abl_test_layer layer = {.spec = spec, .dtype = dtype, .heads = heads, .n = n};
    abl_test_forward_agree(&layer, &sim, &pred);
    abl_simulation_free(&sim);
    abl_prediction_free(&pred);
}

static void test_trtllm_context_agrees(void **state)
{
    (void)state;
    static const uint64_t ns[] = {1, 2, 127, 128, 129, 256, 300, 700};
    static const char *const specs[] = {"trtllm-context", "trtllm-context,pv-accumulate=fp32",
                                        "trtllm-context,rows=1", "trtllm-context,rows=40",
                                        "trtllm-context,block=32", "trtllm-context,block=16,rows=100"};
    static const char *const dts[] = {"fp16", "bf16"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
            agree(specs[s], dts[(s + k) % 2], (int)(1 + (s + k) % 12), ns[k]);
    /* prompts long enough for whole row groups to be settled at once, and 64 heads (slopes to 2^-8) */
    agree("trtllm-context", "fp16", 16, 2000);
    agree("trtllm-context", "bf16", 12, 1500);
    agree("trtllm-context,block=64,rows=900", "fp16", 8, 1300);
    agree("trtllm-context", "fp16", 64, 1100);
}

/* fmhaRunner.cpp setupLaunchParams: force_fp32_acc for bf16 (and fp8), so only the fp16 kernels accumulate in
 * fp16 unless context_fmha_fp32_acc asks for fp32. */
static void test_accumulator_default(void **state)
{
    (void)state;
    abl_format f16, bf16;
    assert_int_equal(abl_format_lookup("fp16", &f16), ABL_OK);
    assert_int_equal(abl_format_lookup("bf16", &bf16), ABL_OK);
    abl_pipeline p;
    assert_int_equal(abl_pipeline_preset("trtllm-context", &f16, &p), ABL_OK);
    assert_string_equal(p.pv_accumulate.name, "fp16");
    assert_int_equal(p.block, 128);
    assert_int_equal(p.softmax, 13);
    assert_string_equal(abl_softmax_kind_name(p.softmax), "trtllm-fmha");
    assert_int_equal(abl_pipeline_preset("trtllm-context", &bf16, &p), ABL_OK);
    assert_string_equal(p.pv_accumulate.name, "fp32");
    assert_int_equal(abl_pipeline_check_msg(&p, NULL), ABL_OK);
}

static void test_modelled_and_versioned(void **state)
{
    (void)state;
    abl_pipeline p;
    assert_int_equal(abl_pipeline_preset("trtllm-context", NULL, &p), ABL_OK);
    assert_non_null(abl_pipeline_modelled_note(&p));
    assert_non_null(strstr(abl_pipeline_modelled_note(&p), "not measured"));
    assert_non_null(strstr(abl_pipeline_preset_help(), "trtllm-context"));
    assert_non_null(strstr(abl_pipeline_preset_names(), "trtllm-context"));
    char *d = abl_pipeline_describe(&p);
    assert_non_null(strstr(d, "22200e4b"));
    free(d);
    assert_non_null(abl_pipeline_version_range("trtllm-context", NULL));
    assert_non_null(strstr(abl_pipeline_version_range("trtllm-context", NULL), "not measured"));
}

static void test_refused_fields(void **state)
{
    (void)state;
    static const char *const bad[] = {"trtllm-context,bias-form=relative", "trtllm-context,bias-scale=0.5",
                                      "trtllm-context,logit-dtype=bf16", "trtllm-context,output-dtype=fp32",
                                      "trtllm-context,slope-dtype=bf16", "trtllm-context,exp=sleef",
                                      "trtllm-context,bias-add=mask"};
    abl_test_engine_refuses(bad, sizeof bad / sizeof bad[0]);
    /* an fp16 accumulator exists only in the fp16 kernels */
    abl_format bf16;
    assert_int_equal(abl_format_lookup("bf16", &bf16), ABL_OK);
    abl_pipeline p;
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg("trtllm-context,pv-accumulate=fp16", &bf16, &p, &err), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, &err), ABL_ERR_UNSUPPORTED);
    assert_non_null(err);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trtllm_context_agrees), cmocka_unit_test(test_accumulator_default),
        cmocka_unit_test(test_modelled_and_versioned), cmocka_unit_test(test_refused_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
