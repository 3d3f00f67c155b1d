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
#include "abl_test_engines.h"

/* One encoder layer, emulation against predictor (abl_test_agree: every head's counts, the influence ones
 * included, and the middle rows' total); the emulation's matrix zeros and influence zeros added to *ZEROS and
 * *LOST. */
static void run_case(const char *spec, int heads, uint64_t n, uint64_t *zeros, uint64_t *lost)
{
    const abl_test_layer layer = {.spec = spec, .heads = heads, .n = n, .attention = ABL_ATTENTION_BIDIRECTIONAL};
    abl_test_totals sum = {0, 0};
    abl_test_agree(&layer, &sum);
    *zeros += sum.matrix_zeros;
    *lost += sum.influence_zeros;
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
