/*
 * Unit tests for exact decimals (include/abl/decimal.h). Every expected rational is written out by
 * hand as a reduced num/den (or, for the exponent limits, built here as a power of ten with GMP);
 * the grammar is the header's: [+-]digits[.digits][(e|E)[+-]digits], ".5" and "5." included,
 * exponents within +-100000, nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <gmp.h>

#include "abl/core/decimal.h"

/* text must parse to exactly num/den (den > 0, gcd 1: GMP's canonical form, which every mpq
 * function other than mpq_canonicalize assumes). */
static void check_value(const char *text, const char *num, const char *den)
{
    mpq_t q;
    mpz_t n, d;
    mpq_init(q);
    mpz_init_set_str(n, num, 10);
    mpz_init_set_str(d, den, 10);
    abl_status st = abl_decimal_to_mpq(text, q);
    if (st != ABL_OK)
        fail_msg("\"%s\": status %d", text, (int)st);
    if (mpz_cmp(mpq_numref(q), n) != 0 || mpz_cmp(mpq_denref(q), d) != 0)
        fail_msg("\"%s\": got %s/%s, want %s/%s", text, mpz_get_str(NULL, 10, mpq_numref(q)),
                 mpz_get_str(NULL, 10, mpq_denref(q)), num, den);
    mpz_clear(n);
    mpz_clear(d);
    mpq_clear(q);
}

static void check_rejected(const char *text)
{
    mpq_t q;
    mpq_init(q);
    abl_status st = abl_decimal_to_mpq(text, q);
    if (st != ABL_ERR_BAD_NUMBER)
        fail_msg("\"%s\": status %d, want ABL_ERR_BAD_NUMBER", text, (int)st);
    mpq_clear(q);
}

static void test_accepted_forms(void **state)
{
    (void)state;
    check_value("0.5", "1", "2");
    check_value(".5", "1", "2");
    check_value("5.", "5", "1");
    check_value("5", "5", "1");
    check_value("1e-3", "1", "1000");
    check_value("1E-3", "1", "1000");
    check_value("2E+2", "200", "1");
    check_value("2e2", "200", "1");
    check_value("-0.0625", "-1", "16");
    check_value("+3", "3", "1");
    check_value("-3", "-3", "1");
    check_value("+.25", "1", "4");
    check_value("-5.e1", "-50", "1");
    check_value(".5e-1", "1", "20");
    check_value("007.50", "15", "2");
    check_value("1e00003", "1000", "1");
    check_value("12.5e-2", "1", "8");
    check_value("0.70703125", "181", "256");
    check_value("1.375", "11", "8");
    check_value("123456789012345678901234567890", "123456789012345678901234567890", "1");
    check_value("0.1", "1", "10");
    check_value("0.3", "3", "10");
    check_value("2.5e-1", "1", "4");
    check_value("33.3", "333", "10");
    /* zeros of every spelling are the one rational 0/1 */
    check_value("0", "0", "1");
    check_value("0.0", "0", "1");
    check_value("-0.0", "0", "1");
    check_value("+0e5", "0", "1");
    check_value("0e-100000", "0", "1");
}

/* The exponent limit is +-100000 inclusive. */
static void test_exponent_limits(void **state)
{
    (void)state;
    mpq_t q, want;
    mpq_init(q);
    mpq_init(want);
    mpz_ui_pow_ui(mpq_numref(want), 10, 100000);
    mpz_set_ui(mpq_denref(want), 1);
    assert_int_equal(abl_decimal_to_mpq("1e100000", q), ABL_OK);
    assert_true(mpq_equal(q, want));
    assert_int_equal(abl_decimal_to_mpq("1e+100000", q), ABL_OK);
    assert_true(mpq_equal(q, want));
    mpq_inv(want, want);
    assert_int_equal(abl_decimal_to_mpq("1e-100000", q), ABL_OK);
    assert_true(mpq_equal(q, want));
    /* 25e-100001 = 2.5e-100000: the exponent text itself is beyond the limit */
    check_rejected("25e-100001");
    check_rejected("1e100001");
    check_rejected("1e-100001");
    check_rejected("1e+100001");
    check_rejected("1e99999999999999999999999");
    mpq_clear(q);
    mpq_clear(want);
}

static void test_rejections(void **state)
{
    (void)state;
    static const char *bad[] = {
        "", "nan", "NaN", "inf", "-inf", "Infinity", "0x1p-3", "0x10", "1e", "1e+", "1E-", "e5", ".", "+",
        "-", "+.", ".e1", "1.2.3", "1,5", " 1", "1 ", "\t1", "1\n", "--1", "+-1", "1e3.5", "1e1e1", "1_000",
        "1/2", "one", "1e 3", "1.5f",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check_rejected(bad[i]);
    mpq_t q;
    mpq_init(q);
    assert_int_equal(abl_decimal_to_mpq(NULL, q), ABL_ERR_BAD_NUMBER);
    mpq_clear(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted_forms),
        cmocka_unit_test(test_exponent_limits),
        cmocka_unit_test(test_rejections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
