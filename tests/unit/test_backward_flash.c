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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lse_uniform),
        cmocka_unit_test(test_lse_masked),
        cmocka_unit_test(test_ftz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
