/*
 * Unit tests for conventions (include/abl/convention.h) against spec §4's table:
 *   paper     | ftz kind     | nearest integer of -tau/m
 *   ftz       | ftz kind     | exact; flush-to-zero: exp(x) is 0 iff x < tau (spec §3), so strict
 *   ieee      | rn-zero kind | exact; exp(x) rounds to 0 iff x <= tau (spec §3)
 *   subnormal | subnormal    | exact; spec §1's "x <= tau gives 0"
 * The paper convention's comparison (<=, not strict) is the header's; spec §4 gives it only its
 * rounding to nearest, which makes the comparison irrelevant there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "abl/core/convention.h"

static const struct {
    abl_convention conv;
    const char *name;
    abl_tau_kind kind;
    int strict, nearest;
} spec_table[] = {
    {ABL_CONV_PAPER, "paper", ABL_TAU_FTZ, 0, 1},
    {ABL_CONV_FTZ, "ftz", ABL_TAU_FTZ, 1, 0},
    {ABL_CONV_IEEE, "ieee", ABL_TAU_RN_ZERO, 0, 0},
    {ABL_CONV_SUBNORMAL, "subnormal", ABL_TAU_SUBNORMAL, 0, 0},
};

#define NCONV (sizeof spec_table / sizeof spec_table[0])

static void test_table(void **state)
{
    (void)state;
    assert_int_equal(ABL_CONV_COUNT, NCONV);
    for (size_t i = 0; i < NCONV; i++) {
        abl_convention c = spec_table[i].conv;
        assert_string_equal(abl_convention_name(c), spec_table[i].name);
        assert_int_equal(abl_convention_tau_kind(c), spec_table[i].kind);
        assert_int_equal(abl_convention_strict(c), spec_table[i].strict);
        assert_int_equal(abl_convention_nearest(c), spec_table[i].nearest);
    }
}

static void test_parse(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCONV; i++) {
        abl_convention c = ABL_CONV_COUNT;
        assert_int_equal(abl_convention_parse(spec_table[i].name, &c), ABL_OK);
        assert_int_equal(c, spec_table[i].conv);
    }
    static const struct {
        const char *text;
        abl_convention conv;
    } mixed[] = {
        {"PAPER", ABL_CONV_PAPER}, {"Paper", ABL_CONV_PAPER}, {"FTZ", ABL_CONV_FTZ},
        {"fTz", ABL_CONV_FTZ},     {"IEEE", ABL_CONV_IEEE},   {"Ieee", ABL_CONV_IEEE},
        {"SubNormal", ABL_CONV_SUBNORMAL}, {"SUBNORMAL", ABL_CONV_SUBNORMAL},
    };
    for (size_t i = 0; i < sizeof mixed / sizeof mixed[0]; i++) {
        abl_convention c = ABL_CONV_COUNT;
        assert_int_equal(abl_convention_parse(mixed[i].text, &c), ABL_OK);
        assert_int_equal(c, mixed[i].conv);
    }
}

static void test_parse_rejects(void **state)
{
    (void)state;
    static const char *bad[] = {
        "", "pap", "papers", " paper", "paper ", "ieee754", "rn-zero", "subnormal-", "nearest", "exact",
        "ftz,ieee", "paper\n", "0",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        abl_convention c;
        abl_status st = abl_convention_parse(bad[i], &c);
        if (st != ABL_ERR_UNKNOWN_CONVENTION)
            fail_msg("\"%s\": status %d", bad[i], (int)st);
    }
    abl_convention c;
    assert_int_equal(abl_convention_parse(NULL, &c), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_convention_parse("paper", NULL), ABL_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
