/* Unit tests: FlashAttention-2's backward row (src/lib/kernel/abl_backward_flash.c) against closed forms
 * that do not go through its code: the lse of a row of equal logits (n = 2^k keys: every exp2 is 1, the
 * four lane sums are exact integers, so sum = n and lse = fp32(k fp32(ln 2)), __logf's lg2 being exact),
 * a row whose other keys are masked (lse = fp32(M scale_softmax), __logf(1) = 0), and the flush of the
 * fp32 product P 2^j below 2^-126 that bf16's own subnormals would keep. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/abl_backward_flash.h"
#include "abl_test_rows.h"

static void flash_emul(const char *dtype, int block, int head_dim, abl_emul *e)
{
    memset(e, 0, sizeof *e);
    abl_format f;
    assert_int_equal(abl_format_lookup(dtype, &f), ABL_OK);
    assert_int_equal(abl_fp_init(&f, &e->out), ABL_OK);
    e->block = block;
    e->sm_scale = (float)pow((double)head_dim, -0.5);                 /* Python's float, as fp32 */
    e->c_log2 = (float)((double)e->sm_scale * 1.4426950408889634074); /* scale_softmax_log2 */
}

static void test_lse_uniform(void **state)
{
    (void)state;
    abl_emul e;
    float x[256];
    for (int k = 0; k <= 8; k++) {
        uint64_t n = (uint64_t)1 << k;
        for (uint64_t j = 0; j < n; j++)
            x[j] = 0.0f;
        for (int block = 16; block <= 64; block *= 2) {
            flash_emul("fp16", block, 128, &e);
            float want = (float)((double)k * (double)0x1.62e430p-1f);   /* fp32(k fp32(ln 2)) */
            assert_true(abl_flash_forward_lse(&e, x, n) == want);
        }
    }
}

static void test_lse_masked(void **state)
{
    (void)state;
    abl_emul e;
    flash_emul("bf16", 16, 64, &e);   /* scale 1/8: M scale exact */
    float x[40];
    for (int j = 0; j < 39; j++)
        x[j] = -INFINITY;
    x[39] = 5.0f;
    assert_true(abl_flash_forward_lse(&e, x, 40) == 0.625f);
    float ds[40];
    abl_flash_backward_row(&e, 1.0, x, 40, ds);
    for (int j = 0; j < 39; j++)
        assert_true(ds[j] == 0.0f);
    assert_true(fabs((double)ds[39] - 1.0) < 1e-2);   /* P of the only key is 1 within ex2's rounding */
}

/* Two keys, the far one with P near 2^-120 (x0 = -120 ln 2 at scale 1): times 2^-10 it is about 2^-130,
 * a bf16 subnormal (bf16 keeps down to 2^-133) but an fp32 subnormal, which mul.ftz flushes; times 2^-2
 * it stays normal. */
static void test_ftz(void **state)
{
    (void)state;
    abl_emul e;
    flash_emul("bf16", 64, 1, &e);
    float x[2] = {(float)(-120.0 * log(2.0)), 0.0f}, ds[2];
    abl_flash_backward_row(&e, ldexp(1.0, -10), x, 2, ds);
    assert_true(ds[0] == 0.0f);
    assert_true(ds[1] != 0.0f);
    abl_flash_backward_row(&e, ldexp(1.0, -2), x, 2, ds);
    assert_true(ds[0] > 0x1p-124f && ds[0] < 0x1p-120f);
    /* fp16 at 2^0: P near 2^-120 is below half its smallest subnormal (2^-25): 0 with or without the flush */
    flash_emul("fp16", 64, 1, &e);
    abl_flash_backward_row(&e, 1.0, x, 2, ds);
    assert_true(ds[0] == 0.0f && ds[1] == 1.0f);
}

/* The forward's fp32 P of a row as abl_simulate.c's flash row forms it (blocks from the diagonal down, each
 * key's exp2 against the running max that includes its block): what abl_flash_row_zero_x sums. */
static void forward_p(const abl_emul *e, const float *x, uint64_t n, float *p)
{
    uint64_t i = n - 1, B = (uint64_t)e->block;
    float run = -INFINITY;
    for (uint64_t top = i / B + 1; top-- > 0;) {
        uint64_t lo = top * B, hi = lo + B - 1 < i ? lo + B - 1 : i;
        for (uint64_t j = lo; j <= hi; j++)
            run = x[j] > run ? x[j] : run;
        float ms = abl_emul_max_scaled(e, run);
        for (uint64_t j = lo; j <= hi; j++)
            p[j] = abl_emul_flash_exp(e, x[j], ms);
    }
}

/* simulate --backward counts flash's zero dS by two thresholds (abl_flash_ds_zero_y once, abl_flash_row_zero_x
 * per row) instead of forming dS: on rows with a slope, noise, ties and masked keys, in three dtypes, two
 * block sizes and loss scales from 2^-30 to 2^20, its zero set is the row emulation's, key for key. */
static void test_thresholds_agree(void **state)
{
    (void)state;
    static const char *const dtypes[3] = {"bf16", "fp16", "fp32"};
    static const int ups[6] = {-30, -8, -1, 0, 16, 20};
    enum { N = 300 };
    float x[N], p[N], ds[N];
    uint64_t zeros = 0, nonzeros = 0, seed = 12345;
    for (int t = 0; t < 3; t++)
        for (int block = 16; block <= 64; block *= 4)
            for (int u = 0; u < 6; u++)
                for (int r = 0; r < 40; r++) {
                    abl_emul e;
                    flash_emul(dtypes[t], block, 1 + r % 4, &e);   /* exp2 arguments down to about -3000 */
                    double slope = ldexp(1.0, r % 7 - 3), std = (double)(r % 4) * 1.5;
                    uint64_t n = 1 + (uint64_t)(r * 7 % N);
                    abl_test_threshold_row(&seed, x, n, slope, std, r % 5 == 1);
                    double up = ldexp(1.0, ups[u]);
                    forward_p(&e, x, n, p);
                    float xthr = abl_flash_row_zero_x(&e, x, p, n, abl_flash_ds_zero_y(&e, up));
                    abl_flash_backward_row(&e, up, x, n, ds);
                    abl_test_threshold_agrees(x, ds, n, xthr, &zeros, &nonzeros);
                }
    assert_true(zeros > 1000 && nonzeros > 1000);   /* both sides of the thresholds were met */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lse_uniform),
        cmocka_unit_test(test_lse_masked),
        cmocka_unit_test(test_ftz),
        cmocka_unit_test(test_thresholds_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
