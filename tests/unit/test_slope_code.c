/* Unit tests for the slopes as the models' code computes them (slope-calc, abl_slope_code.c).
 * mpt-pow: the expected fp32 bit patterns come from tests/unit/mpt_slopes_expected.py, which follows
 * transformers' build_mpt_alibi_tensor / llm-foundry's gen_slopes op by op with integers and fractions
 * (no MPFR, no library code) and is cross-checked there against numpy float32. */
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
#include "mpt_slopes_expected.h"

#define TAU_BF16 (-126L)

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Every head of `spec` with H heads against the expected bit patterns. */
static void expect_mpt_slopes(const char *spec, int H, const unsigned *want)
{
    abl_schedule s;
    assert_int_equal(abl_schedule_parse(spec, H, TAU_BF16, &s), ABL_OK);
    assert_int_equal(s.count, H);
    for (int h = 0; h < H; h++) {
        float v = 0.0f;
        abl_status st = abl_slope_code_value(ABL_SLOPE_CALC_MPT_POW, &s, h, &v);
        if (st != ABL_OK || float_bits(v) != want[h])
            fprintf(stderr, "%s, H = %d, head %d: status %d, %08x, expected %08x\n", spec, H, h + 1, (int)st,
                    (unsigned)float_bits(v), want[h]);
        assert_int_equal(st, ABL_OK);
        assert_int_equal(float_bits(v), want[h]);
    }
    abl_schedule_free(&s);
}

/* The head counts (3, 5, 6, 12, 24, 48, 100), powers of two, other alibi_bias_max: mpt:B
 * with B given, and press -- MPT's default schedule, what mpt-hf gets without --slopes -- for B = 8. */
static void test_mpt_pow_any_head_count(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof mpt_slope_cases / sizeof mpt_slope_cases[0]; i++) {
        const mpt_slope_case *c = &mpt_slope_cases[i];
        char spec[32];
        snprintf(spec, sizeof spec, "mpt:%ld", c->bias_max);
        expect_mpt_slopes(spec, c->heads, c->bits);
        if (c->bias_max == 8)
            expect_mpt_slopes("press", c->heads, c->bits);
    }
}

/* PhoGPT-4B: 24 heads, H' = 32, m = k/4: heads 1..16 are slopes[1::2] (k = 2, 4, .., 32), heads 17..24
 * slopes[::2] (k = 1, 3, .., 15). Hand check of head 17: RN32(2^0.25) = 1.18920707702636718750 (2^0.25
 * = 1.1892071150...), 1 / that = 0.84089644..., nearest fp32 0x3f5744fd = 0.840896427631378173828125
 * (neighbours 0.84089636802 and 0.84089648724). Written out so that a wrong order cannot hide behind
 * a stale generated header. */
static void test_mpt_pow_phogpt_order(void **state)
{
    (void)state;
    abl_schedule s;
    assert_int_equal(abl_schedule_parse("press", 24, TAU_BF16, &s), ABL_OK);
    float v;
    assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_MPT_POW, &s, 0, &v), ABL_OK);
    assert_true(v == 0x1.6a09e6p-1f);   /* slopes[1] of H' = 32: 1 / RN32(2^0.5) */
    assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_MPT_POW, &s, 1, &v), ABL_OK);
    assert_true(v == 0.5f);             /* slopes[3]: 2^-1 */
    assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_MPT_POW, &s, 15, &v), ABL_OK);
    assert_true(v == 0x1p-8f);          /* slopes[31]: 2^-8 */
    assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_MPT_POW, &s, 16, &v), ABL_OK);
    assert_int_equal(float_bits(v), 0x3f5744fdu); /* slopes[0] */
    assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_MPT_POW, &s, 23, &v), ABL_OK);
    assert_int_equal(float_bits(v), 0x3d9837f0u); /* slopes[14]: 1 / RN32(2^3.75) */
    abl_schedule_free(&s);
}

/* Every head count 1..256 with the default schedule (the regression: non-powers of two were refused),
 * and every slope in (0, 1): a well-formed value. */
static void test_mpt_pow_every_head_count(void **state)
{
    (void)state;
    for (int H = 1; H <= 256; H++) {
        abl_schedule s;
        assert_int_equal(abl_schedule_parse("press", H, TAU_BF16, &s), ABL_OK);
        for (int h = 0; h < H; h++) {
            float v = -1.0f;
            assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_MPT_POW, &s, h, &v), ABL_OK);
            assert_true(v > 0.0f && v < 1.0f);
        }
        abl_schedule_free(&s);
    }
}

/* Schedules MPT's code does not build stay refused. */
static void test_mpt_pow_refuses_other_schedules(void **state)
{
    (void)state;
    const char *specs[] = {"pow2only", "geometric:128:4096", "robust:64"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        abl_schedule s;
        assert_int_equal(abl_schedule_parse(specs[i], 12, TAU_BF16, &s), ABL_OK);
        float v;
        assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_MPT_POW, &s, 0, &v), ABL_ERR_SLOPE_CALC);
        abl_schedule_free(&s);
    }
}

/* flex-exp2 (attention-gym's alibi_mod: torch.exp2(-((h + 1) * 8.0 / H)) in fp32). Expected bit patterns
 * from /usr/bin/python3: e = np.float32(np.float32(8.0 * (h + 1)) / np.float32(H)), 2^-e by mpmath at 60
 * digits, rounded once with np.float32 (no library code). For H = 12 and 24 these are not Press's slopes
 * (Press interleaves 2^(-8k/8) and 2^(-8k/16)), and the fp32 exponent's rounding shows (0x3f214518 against
 * 0x3e214517 a factor 4 lower). torch 1.13's CPU exp2 gives the same fp32 value for 8255 of the 8256
 * slopes of H = 1..128 (checked with /usr/bin/python3, docs/pipelines.md section 3f). */
static void expect_flex_slopes(int H, const unsigned *want)
{
    abl_schedule s;
    assert_int_equal(abl_schedule_parse("press", H, TAU_BF16, &s), ABL_OK);
    for (int h = 0; h < H; h++) {
        float v = 0.0f;
        assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_FLEX, &s, h, &v), ABL_OK);
        if (float_bits(v) != want[h])
            fail_msg("H=%d head %d: 0x%08x, want 0x%08x", H, h + 1, (unsigned)float_bits(v), want[h]);
    }
    abl_schedule_free(&s);
}

static void test_flex_exp2(void **state)
{
    (void)state;
    static const unsigned h12[] = {0x3f214518, 0x3ecb2ff5, 0x3e800000, 0x3e214517, 0x3dcb2ff6, 0x3d800000,
                                   0x3d214519, 0x3ccb2ff4, 0x3c800000, 0x3c214519, 0x3bcb2ff4, 0x3b800000};
    static const unsigned h16[] = {0x3f3504f3, 0x3f000000, 0x3eb504f3, 0x3e800000, 0x3e3504f3, 0x3e000000,
                                   0x3db504f3, 0x3d800000, 0x3d3504f3, 0x3d000000, 0x3cb504f3, 0x3c800000,
                                   0x3c3504f3, 0x3c000000, 0x3bb504f3, 0x3b800000};
    static const unsigned h24[] = {0x3f4b2ff5, 0x3f214518, 0x3f000000, 0x3ecb2ff5, 0x3ea14518, 0x3e800000,
                                   0x3e4b2ff6, 0x3e214517, 0x3e000000, 0x3dcb2ff6, 0x3da14517, 0x3d800000,
                                   0x3d4b2ff4, 0x3d214519, 0x3d000000, 0x3ccb2ff4, 0x3ca14519, 0x3c800000,
                                   0x3c4b2ff4, 0x3c214519, 0x3c000000, 0x3bcb2ff4, 0x3ba14519, 0x3b800000};
    expect_flex_slopes(12, h12);
    expect_flex_slopes(16, h16);
    expect_flex_slopes(24, h24);
    /* the score_mod hard-codes 8 and Press's order: other schedules are refused */
    abl_schedule s;
    float v;
    assert_int_equal(abl_schedule_parse("mpt:8", 16, TAU_BF16, &s), ABL_OK);
    assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_FLEX, &s, 0, &v), ABL_ERR_SLOPE_CALC);
    abl_schedule_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mpt_pow_any_head_count),
        cmocka_unit_test(test_mpt_pow_phogpt_order),
        cmocka_unit_test(test_mpt_pow_every_head_count),
        cmocka_unit_test(test_mpt_pow_refuses_other_schedules),
        cmocka_unit_test(test_flex_exp2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
