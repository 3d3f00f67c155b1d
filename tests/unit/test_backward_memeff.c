/* Unit tests: simulate --backward counts the memory-efficient backward's zero dS (softmax sdpa-efficient) by
 * thresholds (abl_memeff_ds_zero_e once per run, abl_memeff_row_zero_x once per row) instead of forming dS
 * key by key; the expectation is the row emulation itself (abl_memeff_backward_row, which
 * tests/torch/validate_gradient.py and the predictor tests check on their own), key for key. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/abl_backward_memeff.h"
#include "abl_test_rows.h"

/* Rows with a slope (1/8 to 8 per key: exp arguments down to about -2400), noise, ties and masked keys, in
 * three dtypes, two block sizes, head sizes 1 to 256 and loss scales 2^-30 to 2^20. */
static void test_thresholds_agree(void **state)
{
    (void)state;
    static const char *const dtypes[3] = {"bf16", "fp16", "fp32"};
    static const int ups[6] = {-30, -8, -1, 0, 16, 20};
    enum { N = 300 };
    float x[N], ds[N];
    uint64_t zeros = 0, nonzeros = 0, seed = 54321;
    for (int t = 0; t < 3; t++)
        for (int block = 16; block <= 64; block *= 4)
            for (int u = 0; u < 6; u++)
                for (int r = 0; r < 40; r++) {
                    abl_format f;
                    abl_fp out;
                    assert_int_equal(abl_format_lookup(dtypes[t], &f), ABL_OK);
                    assert_int_equal(abl_fp_init(&f, &out), ABL_OK);
                    float scale = abl_memeff_scale(1 << (r % 9));
                    double slope = ldexp(1.0, r % 7 - 3), std = (double)(r % 4) * 1.5;
                    uint64_t n = 1 + (uint64_t)(r * 7 % N);
                    abl_test_threshold_row(&seed, x, n, slope, std, r % 5 == 1);
                    double up = ldexp(1.0, ups[u]);
                    float xthr = abl_memeff_row_zero_x(block, x, n, abl_memeff_ds_zero_e(&out, up, scale));
                    abl_memeff_backward_row(&out, block, scale, up, x, n, ds);
                    abl_test_threshold_agrees(x, ds, n, xthr, &zeros, &nonzeros);
                }
    assert_true(zeros > 1000 && nonzeros > 1000);   /* both sides of the thresholds were met */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thresholds_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
