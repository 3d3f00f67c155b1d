/* Unit tests of the bidirectional (encoder) closed forms (include/abl/analysis/bidirectional.h) and of the
 * analysis that uses them. Expected counts come from an explicit loop over every key of every row (written
 * here, independent of the closed forms), and the paper layer's fractions from python3's fractions module
 * over the keys (the script is quoted at each value). */
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"

static void delta_of(abl_delta *d, long v)
{
    abl_delta_init(d);
    if (v < 0) {
        d->never = 1;
    } else {
        d->exact = 1;
        mpz_set_si(d->value, v);
    }
}

/* Blind keys of row i by enumeration: attended (|i - j| <= W, or every key), at distance >= delta. */
static uint64_t brute_row(uint64_t n, uint64_t w, long delta, uint64_t i, int attended_only)
{
    uint64_t c = 0;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t d = j > i ? j - i : i - j;
        if (w > 0 && d > w)
            continue;
        if (attended_only || (delta >= 0 && d >= (uint64_t)delta))
            c++;
    }
    return c;
}

static void expect_u64(const mpz_t z, uint64_t want, const char *what, uint64_t n, uint64_t w, long delta)
{
    if (mpz_cmp_ui(z, (unsigned long)want) != 0)
        fail_msg("%s: n=%llu W=%llu delta=%ld: got %lu, expected %llu", what, (unsigned long long)n,
                 (unsigned long long)w, delta, mpz_get_ui(z), (unsigned long long)want);
}

/* Every (n, W, delta) of a grid: end row, middle row, matrix and a few rows against the enumeration. */
static void test_counts_brute(void **state)
{
    (void)state;
    const uint64_t ns[] = {1, 2, 3, 4, 7, 10, 33, 64};
    const uint64_t ws[] = {0, 1, 2, 3, 5, 100};
    const long ds[] = {-1, 0, 1, 2, 3, 5, 9, 32, 63, 64, 70};
    mpz_t end, mid, mat, row;
    mpz_inits(end, mid, mat, row, (mpz_ptr)0);
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof ws / sizeof ws[0]; b++)
            for (size_t c = 0; c < sizeof ds / sizeof ds[0]; c++) {
                uint64_t n = ns[a], w = ws[b];
                long dv = ds[c];
                abl_delta d;
                delta_of(&d, dv);
                assert_int_equal(abl_bidir_head_counts(&d, n, w, end, mid, mat), ABL_OK);
                uint64_t m = 0;
                for (uint64_t i = 0; i < n; i++) {
                    uint64_t r = brute_row(n, w, dv, i, 0);
                    m += r;
                    assert_int_equal(abl_bidir_row_count(&d, n, w, i, row), ABL_OK);
                    expect_u64(row, r, "row", n, w, dv);
                }
                expect_u64(end, brute_row(n, w, dv, n - 1, 0), "end row", n, w, dv);
                expect_u64(mid, brute_row(n, w, dv, (n - 1) / 2, 0), "middle row", n, w, dv);
                expect_u64(mat, m, "matrix", n, w, dv);
                abl_delta_clear(&d);
            }
    /* attended entries */
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof ws / sizeof ws[0]; b++) {
            uint64_t n = ns[a], w = ws[b], m = 0;
            assert_int_equal(abl_bidir_attended(n, w, end, mid, mat), ABL_OK);
            for (uint64_t i = 0; i < n; i++)
                m += brute_row(n, w, 0, i, 1);
            expect_u64(end, brute_row(n, w, 0, n - 1, 1), "attended end", n, w, 0);
            expect_u64(mid, brute_row(n, w, 0, (n - 1) / 2, 1), "attended middle", n, w, 0);
            expect_u64(mat, m, "attended matrix", n, w, 0);
        }
    mpz_clears(end, mid, mat, row, (mpz_ptr)0);
}

/* The middle row and its symmetry: for even N the rows N/2 - 1 and N/2 have the same count. */
static void test_middle_row(void **state)
{
    (void)state;
    assert_int_equal(abl_bidir_middle_row(1), 0);
    assert_int_equal(abl_bidir_middle_row(2), 0);
    assert_int_equal(abl_bidir_middle_row(2048), 1023);
    assert_int_equal(abl_bidir_middle_row(2049), 1024);
    abl_delta d;
    delta_of(&d, 100);
    mpz_t a, b;
    mpz_inits(a, b, (mpz_ptr)0);
    assert_int_equal(abl_bidir_row_count(&d, 2048, 0, 1023, a), ABL_OK);
    assert_int_equal(abl_bidir_row_count(&d, 2048, 0, 1024, b), ABL_OK);
    assert_int_equal(mpz_cmp(a, b), 0);
    assert_int_equal(mpz_get_ui(a), (1023 - 100 + 1) + (1024 - 100 + 1)); /* two horizons, by hand */
    assert_int_equal(abl_bidir_row_count(&d, 2048, 0, 2048, a), ABL_ERR_CONTEXT_RANGE);
    assert_int_equal(abl_bidir_row_count(&d, 0, 0, 0, a), ABL_ERR_CONTEXT_RANGE);
    mpz_clears(a, b, (mpz_ptr)0);
    abl_delta_clear(&d);
}

/* Beyond 64 bits: N = 10^18, delta = 1: the matrix is N^2 - N (every off-diagonal entry), computed by hand. */
static void test_huge_context(void **state)
{
    (void)state;
    abl_delta d;
    delta_of(&d, 1);
    mpz_t end, mid, mat, want;
    mpz_inits(end, mid, mat, want, (mpz_ptr)0);
    uint64_t n = UINT64_C(1000000000000000000);
    assert_int_equal(abl_bidir_head_counts(&d, n, 0, end, mid, mat), ABL_OK);
    mpz_set_str(want, "999999999999999999000000000000000000", 10);
    assert_int_equal(mpz_cmp(mat, want), 0);
    mpz_set_str(want, "999999999999999999", 10);
    assert_int_equal(mpz_cmp(end, want), 0);
    assert_int_equal(mpz_cmp(mid, want), 0);
    mpz_clears(end, mid, mat, want, (mpz_ptr)0);
    abl_delta_clear(&d);
}

static void expect_q(mpq_srcptr q, const char *want)
{
    char *got = mpq_get_str(NULL, 10, q);
    if (strcmp(got, want) != 0)
        fail_msg("got %s, expected %s", got, want);
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(got, strlen(got) + 1);
}

/* The paper's 16-head bf16 layer (paper convention) at N = 2048, as an encoder. python3:
 *   D = [124,175,247,349,494,699,988,1397,1976,2795,3952,5590,7905,11179,15810,22358]; N = 2048
 *   row(i,d) = sum(1 for j in range(N) if abs(i-j) >= d)
 *   Fraction(sum(row(N-1,d) for d in D), 16*N)        -> 11983/32768 (the causal last row's, spec §7)
 *   Fraction(sum(row((N-1)//2,d) for d in D), 16*N)   -> 8191/32768
 *   Fraction(sum(2*(N-k) for d in D for k in range(d,N)), 16*N*N) -> 299053/1048576 */
static void test_paper_layer(void **state)
{
    (void)state;
    abl_analysis_config c;
    memset(&c, 0, sizeof c);
    assert_int_equal(abl_format_lookup("bf16", &c.format), ABL_OK);
    c.convention = ABL_CONV_PAPER;
    c.heads = 16;
    c.context = 2048;
    c.attention = ABL_ATTENTION_BIDIRECTIONAL;
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    expect_q(a.row_fraction, "11983/32768");
    expect_q(a.mid_fraction, "8191/32768");
    expect_q(a.matrix_fraction, "299053/1048576");
    assert_int_equal(a.blind_heads, 9);
    abl_analysis_free(&a);
    /* the weight level's S has two horizons: refused, never approximated */
    c.level = ABL_LEVEL_WEIGHT;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_ERR_INVALID_ARGUMENT);
    abl_analysis_free(&a);
}

/* The mass lost of the middle row of slopes:0.5 at N = 1001 (row 500: 500 keys each side). mpmath, 40 digits:
 *   m = mpf(1)/2; d = 175 (bf16 paper delta: round((87.3365...)/0.5) = 175, as the analysis gives)
 *   lost = 2*nsum(lambda k: exp(-m*k), [d, 500]); S = 1 + 2*nsum(lambda k: exp(-m*k), [1, 500])
 *   lost / S -> 1.2427214968128688768e-38; the end row, sum(k=175..1000) / sum(k=0..1000) of exp(-m k)
 *   -> 9.982350930569247556e-39 */
static void test_middle_mass(void **state)
{
    (void)state;
    abl_analysis_config c;
    memset(&c, 0, sizeof c);
    assert_int_equal(abl_format_lookup("bf16", &c.format), ABL_OK);
    c.convention = ABL_CONV_PAPER;
    abl_schedule_spec s;
    char *msg = NULL;
    assert_int_equal(abl_schedule_spec_parse("slopes:0.5", &s, &msg), ABL_OK);
    c.slopes = &s;
    c.context = 1001;
    c.attention = ABL_ATTENTION_BIDIRECTIONAL;
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    assert_int_equal(mpz_get_ui(a.results[0].delta.value), 175);
    char *t = NULL;
    assert_int_equal(abl_analysis_mass_lost_row_text(&a, 0, 500, 6, &t), ABL_OK);
    assert_string_equal(t, "1.24272e-38");
    free(t);
    /* the end row (one horizon of 1000 keys): e^(-87.5) (1 - e^(-0.5 * 826)) / (1 - e^(-0.5 * 1001)) */
    assert_int_equal(abl_analysis_mass_lost_text(&a, 0, 6, &t), ABL_OK);
    assert_string_equal(t, "9.98235e-39");
    free(t);
    abl_analysis_free(&a);
    abl_schedule_spec_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_brute),
        cmocka_unit_test(test_middle_row),
        cmocka_unit_test(test_huge_context),
        cmocka_unit_test(test_paper_layer),
        cmocka_unit_test(test_middle_mass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
