/* Unit tests of a whole-layer analysis. Expected values: the paper (Table 1, §3.3, §3.4), spec §4/§7,
 * hand-computed rationals and mpmath brute force (quoted), never the code under test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#include "abl_test_schedule.h"

/* The formatters return malloc'd text: copy it into the test's array and free it ("" when out of memory,
 * which the comparison that follows then reports). */
static void put_text(char *buf, size_t len, char *s)
{
    snprintf(buf, len, "%s", s ? s : "");
    free(s);
}

/* A malloc'd text equal to want (and freed). */
#define TEXT_EQ(expr, want)                                                                                   \
    do {                                                                                                      \
        char *text_ = (expr);                                                                                 \
        assert_non_null(text_);                                                                               \
        assert_string_equal(text_, want);                                                                     \
        free(text_);                                                                                          \
    } while (0)

static abl_analysis_config base(int heads, uint64_t n)
{
    abl_analysis_config c;
    memset(&c, 0, sizeof c);
    assert_int_equal(abl_format_lookup("bf16", &c.format), ABL_OK);
    c.convention = ABL_CONV_PAPER;
    c.heads = heads;
    c.context = n;
    return c;
}

static void expect_q(const mpq_t q, const char *want)
{
    char buf[128];
    gmp_snprintf(buf, sizeof buf, "%Qd", q);
    assert_string_equal(buf, want);
}

static void expect_text(const abl_delta *d, const char *want)
{
    char buf[64];
    put_text(buf, sizeof buf, abl_delta_text(d, 12));
    assert_string_equal(buf, want);
}

/* The paper's headline: 16 heads, 2048 tokens: delta_1 = 124, delta_16 = 22358 (Table 1), 36.6 % (§3.3). */
static void test_paper_layer(void **state)
{
    (void)state;
    abl_analysis_config c = base(16, 2048);
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    assert_int_equal(a.heads, 16);
    expect_text(&a.results[0].delta, "124");
    expect_text(&a.results[15].delta, "22358");
    assert_int_equal(a.results[0].slope.index, 1);
    assert_int_equal(a.blind_heads, 9);
    expect_q(a.row_fraction, "11983/32768");
    expect_q(a.matrix_fraction, "299053/1049088");
    abl_analysis_free(&a);
}

/* Unsorted schedules are reported steepest first with the model's own index: press(9) puts 2^-0.5 last. */
static void test_sorting_keeps_model_index(void **state)
{
    (void)state;
    abl_analysis_config c = base(9, 2048);
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    assert_int_equal(a.results[0].slope.index, 9);
    expect_text(&a.results[0].delta, "124");
    assert_int_equal(a.results[1].slope.index, 1);
    expect_text(&a.results[1].delta, "175");
    abl_analysis_free(&a);
}

/* Log distances (§3.4): delta_1 moves from 124 to 4.37e53. */
static void test_log(void **state)
{
    (void)state;
    abl_analysis_config c = base(16, 2048);
    c.mitigations = ABL_MITIGATE_LOG;
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    expect_text(&a.results[0].delta, "4.37e53");
    assert_int_equal(a.blind_heads, 0);
    expect_q(a.row_fraction, "0");
    abl_analysis_free(&a);
}

/* C: c = -87 keeps every head 0.3365 nats above tau_ftz: never blind. E: targets 32 * 2^(h-1). */
static void test_mitigations(void **state)
{
    (void)state;
    abl_analysis_config c = base(9, 2048);
    c.mitigations = ABL_MITIGATE_CLAMP;
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    for (int h = 0; h < 9; h++)
        assert_true(a.results[h].delta.never);
    expect_q(a.matrix_fraction, "0");
    abl_analysis_free(&a);

    c.mitigations = ABL_MITIGATE_EXPLICIT;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    const char *want[9] = {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"};
    for (int h = 0; h < 9; h++)
        expect_text(&a.results[h].delta, want[h]);
    /* blind in context: 32..1024 (delta < 2048), 6 heads */
    assert_int_equal(a.blind_heads, 6);
    abl_analysis_free(&a);

    c.mitigations = ABL_MITIGATE_EXPLICIT | ABL_MITIGATE_LOG;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    for (int h = 0; h < 9; h++)
        expect_text(&a.results[h].delta, want[h]);
    abl_analysis_free(&a);

    /* S: z = 50 brackets delta_1 between nint((126 ln2 - 50) sqrt2) = 53 and nint((126 ln2 + 50) sqrt2) = 194. */
    c.mitigations = ABL_MITIGATE_SOFTCAP;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    expect_text(&a.results[0].delta_lo, "53");
    expect_text(&a.results[0].delta_hi, "194");
    abl_analysis_free(&a);

    c.mitigations = ABL_MITIGATE_EXPLICIT;
    c.slopes = abl_test_schedule("press");
    assert_int_equal(abl_analysis_run(&c, &a), ABL_ERR_BAD_SLOPE_SPEC);
    abl_analysis_free(&a);
}

/* Weight level, one head m = 1/2, n = 300. mpmath brute force over rows r = 0..299 with
 * S_(r+1) = (1 - e^(-m(r+1)))/(1 - e^(-m)), delta_r = nint((126 ln2 - ln S)/m):
 * sum max(0, r - delta_r + 1) = 8128; last row delta = 173. */
static void test_weight_matrix(void **state)
{
    (void)state;
    abl_analysis_config c = base(0, 300);
    c.slopes = abl_test_schedule("slopes:0.5");
    c.level = ABL_LEVEL_WEIGHT;
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    expect_text(&a.results[0].delta, "173");
    expect_text(&a.results[0].delta_exponent, "175");
    assert_int_equal(mpz_get_ui(a.results[0].matrix_blind), 8128);
    assert_int_equal(mpz_get_ui(a.results[0].row_blind), 127); /* 300 - 173 */
    abl_analysis_free(&a);
    /* Log distances at weight level: delta = nint(exp((126 ln2 - ln H_300(1/2))/(1/2)) - 1) = 6.56e72
     * (mpmath, H_k(m) = zeta(m) - zeta(m, k+1)): nothing blind. */
    c.mitigations = ABL_MITIGATE_LOG;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    char t[32];
    put_text(t, sizeof t, abl_delta_text(&a.results[0].delta, 12));
    assert_string_equal(t, "6.56e72");
    assert_int_equal(mpz_get_ui(a.results[0].matrix_blind), 0);
    abl_analysis_free(&a);
}

/* Weight level with a clamp and a window: fp16, ieee, m = 1/2, c = -17, W = 200, n = 300. mpmath brute
 * force over rows r with k = min(r + 1, W + 1) keys, S_k = sum_d exp(max(-m d, c)), T = -25 ln2 + ln S_k,
 * delta_r = never if c > T else ceil(-T/m): row 0 is never blind (c > tau), the others from 33 or 34;
 * sum max(0, min(r, W) - delta_r + 1) = 30828, last delta 33; mass lost of the last row (keys 33..200 of
 * an exact softmax) = 2.7471766973656368e-6. */
static void test_weight_clamp_window(void **state)
{
    (void)state;
    abl_analysis_config c = base(0, 300);
    assert_int_equal(abl_format_lookup("fp16", &c.format), ABL_OK);
    c.convention = ABL_CONV_IEEE;
    c.slopes = abl_test_schedule("slopes:0.5");
    mpq_t clamp;
    mpq_init(clamp);
    mpq_set_si(clamp, -17, 1);
    c.clamp = clamp;
    c.window = 200;
    c.level = ABL_LEVEL_WEIGHT;
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    mpq_clear(clamp); /* the analysis keeps its own copy */
    expect_text(&a.results[0].delta, "33");
    assert_int_equal(mpz_get_ui(a.results[0].matrix_blind), 30828);
    char *t = NULL;
    assert_int_equal(abl_analysis_mass_lost_text(&a, 0, 17, &t), ABL_OK);
    assert_string_equal(t, "2.7471766973656368e-06");
    free(t);
    abl_analysis_free(&a);
}

/* The diagonal is never blind at the exponent level (issue 15, item 1; spec §6). fp4-e2m1fn has tau = 0:
 * every press head has delta = 1, so 63 of 64 last-row keys and T(63)/T(64) = 2016/2080 = 63/65 of the
 * matrix are blind; the mass lost is (S_64 - 1)/S_64 per head, S_64 = (1 - e^(-64 m))/(1 - e^(-m)):
 * mpmath gives 0.77880075817870954, 0.93828267049304946, 0.97547372446907484, 0.98237502562614849, mean
 * 0.91873304469174558. ftz gives the same deltas (floor(0) + 1). bf16 with m = 200 > 2|tau|: Q = 0.437
 * used to round to 0; the mass lost is sum_{d=1}^{63} e^(-200 d) / sum_{d=0}^{63} e^(-200 d)
 * = 1.3838965267367375e-87 (mpmath, 50 digits), not 1. */
static void test_diagonal_never_blind(void **state)
{
    (void)state;
    static const char *mass[4] = {"0.77880075817870954", "0.93828267049304946", "0.97547372446907484",
                                  "0.98237502562614849"};
    for (int conv = 0; conv < 2; conv++) {
        abl_analysis_config c = base(4, 64);
        assert_int_equal(abl_format_lookup("fp4-e2m1fn", &c.format), ABL_OK);
        c.convention = conv == 0 ? ABL_CONV_PAPER : ABL_CONV_FTZ;
        abl_analysis a;
        assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
        char *t = NULL;
        for (int h = 0; h < 4; h++) {
            expect_text(&a.results[h].delta, "1");
            assert_int_equal(mpz_get_ui(a.results[h].row_blind), 63);
            assert_int_equal(abl_analysis_mass_lost_text(&a, h, 17, &t), ABL_OK);
            assert_string_equal(t, mass[h]);
            free(t);
        }
        expect_q(a.row_fraction, "63/64");
        expect_q(a.matrix_fraction, "63/65");
        assert_int_equal(abl_analysis_mass_lost_text(&a, -1, 17, &t), ABL_OK);
        assert_string_equal(t, "0.91873304469174558");
        free(t);
        abl_analysis_free(&a);
    }
    abl_analysis_config c = base(0, 64);
    c.slopes = abl_test_schedule("slopes:200");
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    expect_text(&a.results[0].delta, "1");
    expect_q(a.row_fraction, "63/64");
    expect_q(a.matrix_fraction, "63/65");
    char *t = NULL;
    assert_int_equal(abl_analysis_mass_lost_text(&a, -1, 17, &t), ABL_OK);
    assert_string_equal(t, "1.3838965267367375e-87");
    free(t);
    abl_analysis_free(&a);
}

/* Weight-level matrix fractions of flat heads (issue 15, item 3). Expected values: a brute force over
 * every row with its own S (spec §10) in mpmath at 60 digits (each row k = 1..n: S_k = sum_{d<k}
 * e^(-m g(d)), key d blind iff -m g(d) - ln S_k < ln 2^emin), summed over rows:
 * - fp8-e4m3fn, ftz, n = 100, m = 1e-20 and 1e-15: rows of k >= 65 keys lose every key (1/S < 2^-6),
 *   k = 64 loses d >= 32: 2970 + 32 = 3002 of 5050 = 1501/2525;
 * - fp16, ftz, n = 40000, m = 1e-20: 665802272 of 800020000 = 20806321/25000625 (0.832232...);
 * - fp8-e4m3fn, ftz, log distances, 16 press heads, n = 171: per head (steepest first) 12294 12232 12328
 *   12459 12575 12623 12639 12647 12654 12655 12658 12653 12659 12663 12665 12666, last rows 161 165 168
 *   170 and 171 for the rest; layer 201070 of 16 * 14706 = 100535/117648 (0.8545...). */
static void test_weight_flat_heads(void **state)
{
    (void)state;
    static const char *flat[2] = {"slopes:1e-20", "slopes:1e-15"};
    for (int i = 0; i < 2; i++) {
        abl_analysis_config c = base(0, 100);
        assert_int_equal(abl_format_lookup("fp8-e4m3fn", &c.format), ABL_OK);
        c.convention = ABL_CONV_FTZ;
        c.level = ABL_LEVEL_WEIGHT;
        c.slopes = abl_test_schedule(flat[i]);
        abl_analysis a;
        assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
        expect_text(&a.results[0].delta, "0"); /* the diagonal's own weight 1/S_100 = 0.01 < 1/64 */
        assert_int_equal(mpz_get_ui(a.results[0].matrix_blind), 3002);
        expect_q(a.matrix_fraction, "1501/2525");
        abl_analysis_free(&a);
    }
    abl_analysis_config c = base(0, 40000);
    assert_int_equal(abl_format_lookup("fp16", &c.format), ABL_OK);
    c.convention = ABL_CONV_FTZ;
    c.level = ABL_LEVEL_WEIGHT;
    c.slopes = abl_test_schedule("slopes:1e-20");
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    expect_q(a.matrix_fraction, "20806321/25000625");
    abl_analysis_free(&a);

    c = base(16, 171);
    assert_int_equal(abl_format_lookup("fp8-e4m3fn", &c.format), ABL_OK);
    c.convention = ABL_CONV_FTZ;
    c.level = ABL_LEVEL_WEIGHT;
    c.distance = ABL_DISTANCE_LOG;
    static const unsigned long mat[16] = {12294, 12232, 12328, 12459, 12575, 12623, 12639, 12647,
                                          12654, 12655, 12658, 12653, 12659, 12663, 12665, 12666};
    static const unsigned long row[4] = {161, 165, 168, 170};
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    for (int h = 0; h < 16; h++) {
        assert_int_equal(mpz_get_ui(a.results[h].matrix_blind), mat[h]);
        assert_int_equal(mpz_get_ui(a.results[h].row_blind), h < 4 ? row[h] : 171);
    }
    expect_q(a.matrix_fraction, "100535/117648");
    abl_analysis_free(&a);
}

static void test_mitigation_names(void **state)
{
    (void)state;
    unsigned m;
    assert_int_equal(abl_mitigations_parse("C,E,L,S", &m), ABL_OK);
    assert_int_equal(m, 15u);
    TEXT_EQ(abl_mitigations_name(m), "C+E+L+S");
    assert_int_equal(abl_mitigations_parse("L,C", &m), ABL_OK);
    TEXT_EQ(abl_mitigations_name(m), "C+L");
    assert_int_equal(abl_mitigations_parse("none", &m), ABL_OK);
    assert_int_equal(m, 0u);
    assert_int_equal(abl_mitigations_parse("X", &m), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_mitigations_parse("C,", &m), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_mitigations_parse("", &m), ABL_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paper_layer),
        cmocka_unit_test(test_sorting_keeps_model_index),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_mitigations),
        cmocka_unit_test(test_weight_matrix),
        cmocka_unit_test(test_weight_clamp_window),
        cmocka_unit_test(test_diagonal_never_blind),
        cmocka_unit_test(test_weight_flat_heads),
        cmocka_unit_test(test_mitigation_names),
    };
    return cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
}
