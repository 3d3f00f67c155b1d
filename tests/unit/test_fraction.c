/* Unit tests of the underflow fractions. Expected rationals are computed by hand (shown) or by
 * python3's fractions module over an explicit loop on the keys, never by the closed form under test. */
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"

/* The formatters return malloc'd text: copy it into the test's array and free it ("" when out of memory,
 * which the comparison that follows then reports). */
static void put_text(char *buf, size_t len, char *s)
{
    snprintf(buf, len, "%s", s ? s : "");
    free(s);
}

static abl_delta *make_deltas(const long *v, int n)
{
    abl_delta *d = calloc((size_t)n, sizeof *d);
    assert_non_null(d);
    for (int i = 0; i < n; i++) {
        abl_delta_init(&d[i]);
        if (v[i] < 0) {
            d[i].never = 1;
        } else {
            d[i].exact = 1;
            mpz_set_si(d[i].value, v[i]);
        }
    }
    return d;
}

static void free_deltas(abl_delta *d, int n)
{
    for (int i = 0; i < n; i++)
        abl_delta_clear(&d[i]);
    free(d);
}

static void expect_q(const mpq_t q, const char *want)
{
    char *got = mpq_get_str(NULL, 10, q);
    if (strcmp(got, want) != 0)
        fail_msg("got %s, expected %s", got, want);
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(got, strlen(got) + 1);
}

/* The paper's 16-head bf16 layer (deltas of Table 1's convention): row fraction 36.6 % (§3.3),
 * spec §7: 0.365692...; sum of (2048 - delta) over the 9 blind heads = 11983, over 16 * 2048 keys.
 * Matrix: python3: sum(max(0,i+1-d) for i in range(2048) for d in D) / (16*2048*2049/2) = 299053/1049088. */
static void test_paper_layer(void **state)
{
    (void)state;
    const long v[16] = {124, 175, 247, 349, 494, 699, 988, 1397, 1976, 2795, 3952, 5590, 7905, 11179, 15810, 22358};
    abl_delta *d = make_deltas(v, 16);
    mpq_t q;
    mpq_init(q);
    assert_int_equal(abl_fraction_row(d, 16, 2048, 0, q), ABL_OK);
    expect_q(q, "11983/32768");
    char buf[64];
    put_text(buf, sizeof buf, abl_fraction_percent_text(q, 2));
    assert_string_equal(buf, "36.57");
    put_text(buf, sizeof buf, abl_fraction_percent_text(q, 1));
    assert_string_equal(buf, "36.6");
    assert_int_equal(abl_fraction_matrix(d, 16, 2048, 0, q), ABL_OK);
    expect_q(q, "299053/1049088");
    put_text(buf, sizeof buf, abl_fraction_percent_text(q, 2));
    assert_string_equal(buf, "28.51");
    put_text(buf, sizeof buf, abl_fraction_decimal_text(q, 6));
    assert_string_equal(buf, "0.28506"); /* spec §7: 0.285060... */
    mpq_clear(q);
    free_deltas(d, 16);
}

/* Paper §5.2: one head with delta = 124 in a 2048 context: 88.3 % of the entries are out of window.
 * 1924*1925 / (2048*2049) = 3703700/4196352 = 925925/1049088. */
static void test_single_head_883(void **state)
{
    (void)state;
    const long v[1] = {124};
    abl_delta *d = make_deltas(v, 1);
    mpq_t q;
    mpq_init(q);
    assert_int_equal(abl_fraction_matrix(d, 1, 2048, 0, q), ABL_OK);
    expect_q(q, "925925/1049088");
    char buf[32];
    put_text(buf, sizeof buf, abl_fraction_percent_text(q, 1));
    assert_string_equal(buf, "88.3");
    mpz_t row, mat;
    mpz_inits(row, mat, (mpz_ptr)0);
    assert_int_equal(abl_fraction_head_counts(&d[0], 2048, 0, row, mat), ABL_OK);
    assert_int_equal(mpz_get_ui(row), 1924);
    assert_int_equal(mpz_get_ui(mat), 1851850); /* 1924*1925/2 */
    mpz_clears(row, mat, (mpz_ptr)0);
    mpq_clear(q);
    free_deltas(d, 1);
}

/* Window W = 4, n = 10, delta = 2 (by hand): last row attends d = 0..4, blind 2..4 -> 3/5.
 * Rows i = 0..9 attend 1,2,3,4,5,5,5,5,5,5 = 40 entries; blind 0,0,1,2,3,3,3,3,3,3 = 21 -> 21/40. */
static void test_window(void **state)
{
    (void)state;
    const long v[1] = {2};
    abl_delta *d = make_deltas(v, 1);
    mpq_t q;
    mpq_init(q);
    assert_int_equal(abl_fraction_row(d, 1, 10, 4, q), ABL_OK);
    expect_q(q, "3/5");
    assert_int_equal(abl_fraction_matrix(d, 1, 10, 4, q), ABL_OK);
    expect_q(q, "21/40");
    /* A window wider than the context changes nothing: (10-2)/10 and T(8)/T(10) = 36/55. */
    assert_int_equal(abl_fraction_row(d, 1, 10, 100, q), ABL_OK);
    expect_q(q, "4/5");
    assert_int_equal(abl_fraction_matrix(d, 1, 10, 100, q), ABL_OK);
    expect_q(q, "36/55");
    mpq_clear(q);
    free_deltas(d, 1);
}

/* Never-blind heads and heads beyond the context contribute nothing; huge n stays exact. */
static void test_never_and_huge(void **state)
{
    (void)state;
    const long v[3] = {-1, 5000, 1000};
    abl_delta *d = make_deltas(v, 3);
    mpq_t q;
    mpq_init(q);
    assert_int_equal(abl_fraction_row(d, 3, 2048, 0, q), ABL_OK);
    expect_q(q, "131/768"); /* (2048-1000)/(3*2048) = 1048/6144 = 131/768 */
    /* n = 10^12: row = (10^12-5000 + 10^12-1000)/(3 * 10^12) = (2*10^12 - 6000)/(3*10^12). */
    assert_int_equal(abl_fraction_row(d, 3, UINT64_C(1000000000000), 0, q), ABL_OK);
    expect_q(q, "999999997/1500000000");
    assert_int_equal(abl_fraction_row(d, 3, 0, 0, q), ABL_ERR_CONTEXT_RANGE);
    assert_int_equal(abl_fraction_row(NULL, 3, 10, 0, q), ABL_ERR_INVALID_ARGUMENT);
    mpq_clear(q);
    free_deltas(d, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paper_layer),
        cmocka_unit_test(test_single_head_883),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_never_and_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
