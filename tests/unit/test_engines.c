/* Unit tests: the GPU engine presets modelled from source (llamacpp-cuda-fa, vllm-paged, trtllm-decode;
 * src/lib/kernel/abl_engines.c): the zero-logit predictor agrees with `simulate` on every preset, dtype,
 * head count, context and row count tried (around the kernels' 32-key warps and 128-key steps, TensorRT-LLM's
 * thread-count switches at 32 and 2048 steps, the F16 mask's 2048 and 65520), each preset says it is
 * modelled, and the fields the kernels do not model are refused. The intrinsics themselves are checked
 * against independent computations in test_cuda_math.c. */
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

static const char *const k_presets[] = {"llamacpp-cuda-fa", "vllm-paged", "trtllm-decode"};

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

static void test_predictor_agrees(void **state)
{
    (void)state;
    static const uint64_t ns[] = {1, 2, 31, 33, 127, 128, 129, 300, 2049, 2100};
    static const int hs[] = {1, 3, 8, 12};
    static const char *const dts[] = {"bf16", "fp16", "fp32"};
    static const char *const rows[] = {"", ",rows=3", ",rows=0"};
    char spec[96];
    for (size_t p = 0; p < 3; p++)
        for (size_t d = 0; d < 3; d++)
            for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
                for (size_t r = 0; r < 3; r++) {
                    if (r == 2 && ns[k] > 300)   /* every row: quadratic, kept short */
                        continue;
                    snprintf(spec, sizeof spec, "%s%s", k_presets[p], rows[r]);
                    agree(spec, dts[d], hs[(k + r) % 4], ns[k]);
                }
    /* the F16 mask's -inf from d = 65520 on, and the rounded distances above 2048 */
    agree("llamacpp-cuda-fa", "fp16", 16, 70000);
}

static void test_modelled_note(void **state)
{
    (void)state;
    abl_pipeline p;
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(abl_pipeline_preset(k_presets[k], NULL, &p), ABL_OK);
        assert_non_null(abl_pipeline_modelled_note(&p));
        assert_non_null(strstr(abl_pipeline_modelled_note(&p), "not measured"));
        assert_non_null(strstr(abl_pipeline_preset_help(), k_presets[k]));
    }
    assert_int_equal(abl_pipeline_preset("eager", NULL, &p), ABL_OK);
    assert_null(abl_pipeline_modelled_note(&p));
}

static void test_refused_fields(void **state)
{
    (void)state;
    static const char *const bad[] = {"vllm-paged,bias-form=absolute", "trtllm-decode,bias-scale=0.5",
                                      "vllm-paged,logit-dtype=bf16", "llamacpp-cuda-fa,output-dtype=fp16",
                                      "trtllm-decode,sum=vec8", "llamacpp-cuda-fa,mask-dtype=bf16"};
    abl_test_engine_refuses(bad, sizeof bad / sizeof bad[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predictor_agrees),
        cmocka_unit_test(test_modelled_note),
        cmocka_unit_test(test_refused_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
