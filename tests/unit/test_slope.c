/* Unit tests for slope schedules (spec §5). Every expected number is independent of the code under
 * test: exponent lists written out by hand or re-derived here from the SPEC formulas, the paper's
 * Table 1/Table 8, or MPFR evaluations of closed forms that take a different route. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "abl/core/slope.h"
#include "abl/core/decimal.h"

/* A malloc'd text equal to want (and freed). */
#define TEXT_EQ(expr, want)                                                                                   \
    do {                                                                                                      \
        char *text_ = (expr);                                                                                 \
        assert_non_null(text_);                                                                               \
        assert_string_equal(text_, want);                                                                     \
        free(text_);                                                                                          \
    } while (0)

#define TAU_BF16 (-126L) /* ftz kind of bf16/fp32: ln(2^-126) = -87.3365 (spec §3) */

typedef struct {
    long num, den; /* exponent num/den, not necessarily reduced */
} frac;

/* An exact number of a slope against its decimal (both read exactly). */
static void expect_number(mpq_srcptr got, const char *want)
{
    assert_non_null(got);
    mpq_t w;
    mpq_init(w);
    assert_int_equal(abl_decimal_to_mpq(want, w), ABL_OK);
    assert_true(mpq_equal(got, w));
    mpq_clear(w);
}

static abl_schedule parse_ok(const char *spec, int heads, long tau)
{
    abl_schedule s;
    abl_status st = abl_schedule_parse(spec, heads, tau, &s);
    if (st != ABL_OK)
        fprintf(stderr, "parse(\"%s\", %d) -> %d\n", spec, heads, (int)st);
    assert_int_equal(st, ABL_OK);
    return s;
}

/* Each slope is POW2 with reduced exponent equal to exps[h] and value 2^exps[h] (1e-15 relative). */
static void check_pow2(const abl_schedule *s, const frac *exps, int n)
{
    assert_int_equal(s->count, n);
    for (int h = 0; h < n; h++) {
        const abl_slope *m = &s->slopes[h];
        assert_int_equal(m->form, ABL_SLOPE_POW2);
        assert_int_equal(m->index, h + 1);
        assert_true(m->pow2_den > 0);
        /* same rational: cross-multiplied */
        assert_true(m->pow2_num * exps[h].den == exps[h].num * m->pow2_den);
        /* reduced: gcd(num, den) == 1 */
        long a = labs(m->pow2_num), b = m->pow2_den;
        while (b) {
            long t = a % b;
            a = b;
            b = t;
        }
        assert_int_equal(a, 1);
        double want = exp2((double)exps[h].num / (double)exps[h].den);
        assert_true(fabs(m->value - want) <= 1e-15 * want);
    }
}

/* ----- press ----- */

static void test_press_h9(void **state)
{
    (void)state;
    /* spec §5: "H = 9: 2^-1 ... 2^-8, then 2^-0.5" */
    const frac e[9] = {{-1, 1}, {-2, 1}, {-3, 1}, {-4, 1}, {-5, 1}, {-6, 1}, {-7, 1}, {-8, 1}, {-1, 2}};
    abl_schedule s = parse_ok("press", 9, TAU_BF16);
    check_pow2(&s, e, 9);
    assert_string_equal(s.spec, "press");
    /* 2^-0.5 = sqrt(1/2): IEEE sqrt is correctly rounded, so the double must match exactly */
    assert_true(s.slopes[8].value == sqrt(0.5));
    assert_true(s.slopes[7].value == 1.0 / 256.0);
    abl_schedule_free(&s);
    assert_null(s.slopes);
    assert_int_equal(s.count, 0);
}

static void test_press_h12_h20(void **state)
{
    (void)state;
    /* H = 12: c = 8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (written out by hand) */
    const frac e12[12] = {{-1, 1}, {-2, 1}, {-3, 1}, {-4, 1}, {-5, 1}, {-6, 1},
                          {-7, 1}, {-8, 1}, {-1, 2}, {-3, 2}, {-5, 2}, {-7, 2}};
    abl_schedule s = parse_ok("press", 12, TAU_BF16);
    check_pow2(&s, e12, 12);
    abl_schedule_free(&s);

    /* H = 20: c = 16 gives 2^(-h/2), then 2^(-(2h-1)/4), h = 1..4 */
    frac e20[20];
    for (int h = 1; h <= 16; h++)
        e20[h - 1] = (frac){-h, 2};
    for (int h = 1; h <= 4; h++)
        e20[16 + h - 1] = (frac){-(2 * h - 1), 4};
    s = parse_ok("press", 20, TAU_BF16);
    check_pow2(&s, e20, 20);
    abl_schedule_free(&s);
}

static void test_press_h112(void **state)
{
    (void)state;
    /* Press et al.: get_slopes_power_of_2(64) + get_slopes(128)[0::2][:48], built here as lists */
    frac p64[64], p128[128], e[112];
    for (int i = 0; i < 64; i++)
        p64[i] = (frac){-8 * (i + 1), 64};
    for (int i = 0; i < 128; i++)
        p128[i] = (frac){-8 * (i + 1), 128};
    int n = 0;
    for (int i = 0; i < 64; i++)
        e[n++] = p64[i];
    for (int i = 0; i < 128 && n < 112; i += 2)
        e[n++] = p128[i];
    assert_int_equal(n, 112);
    abl_schedule s = parse_ok("press", 112, TAU_BF16);
    check_pow2(&s, e, 112);
    abl_schedule_free(&s);
}

static void test_press_powers_of_two(void **state)
{
    (void)state;
    /* Paper Table 1: BLOOM 16 heads 2^-0.5 .. 2^-8; MPT 32 heads 2^-0.25 ..; Falcon-RW 64 heads 2^-0.125 .. */
    const int hs[3] = {16, 32, 64};
    const long step_den[3] = {2, 4, 8};
    for (int k = 0; k < 3; k++) {
        frac e[64];
        for (int h = 1; h <= hs[k]; h++)
            e[h - 1] = (frac){-h, step_den[k]};
        abl_schedule s = parse_ok("press", hs[k], TAU_BF16);
        check_pow2(&s, e, hs[k]);
        abl_schedule_free(&s);
    }
    /* H = 1 and 2: 2^-8; 2^-4, 2^-8 */
    abl_schedule s = parse_ok("press", 1, TAU_BF16);
    check_pow2(&s, (const frac[]){{-8, 1}}, 1);
    abl_schedule_free(&s);
    s = parse_ok("press", 2, TAU_BF16);
    check_pow2(&s, (const frac[]){{-4, 1}, {-8, 1}}, 2);
    abl_schedule_free(&s);
}

/* ----- mpt, pow2only ----- */

static void test_mpt_equals_press_for_powers_of_two(void **state)
{
    (void)state;
    for (int H = 1; H <= 256; H *= 2) {
        abl_schedule a = parse_ok("mpt:8", H, TAU_BF16), b = parse_ok("press", H, TAU_BF16);
        assert_int_equal(a.count, b.count);
        for (int h = 0; h < H; h++) {
            assert_int_equal(a.slopes[h].pow2_num, b.slopes[h].pow2_num);
            assert_int_equal(a.slopes[h].pow2_den, b.slopes[h].pow2_den);
        }
        assert_string_equal(a.spec, "mpt:8");
        abl_schedule_free(&a);
        abl_schedule_free(&b);
    }
    /* bare "mpt" is llm-foundry's default alibi_bias_max = 8 */
    abl_schedule s = parse_ok("mpt", 4, TAU_BF16);
    assert_string_equal(s.spec, "mpt:8");
    abl_schedule_free(&s);
}

static void test_mpt_reorder(void **state)
{
    (void)state;
    /* H = 12, B = 8: H' = 16, s[i] = 2^(-(i+1)/2); s[1::2] = 2^-1..2^-8, s[0::2] = 2^-0.5, 2^-1.5, ...;
     * concat(...)[:12] by hand: */
    const frac e8[12] = {{-1, 1}, {-2, 1}, {-3, 1}, {-4, 1}, {-5, 1}, {-6, 1},
                         {-7, 1}, {-8, 1}, {-1, 2}, {-3, 2}, {-5, 2}, {-7, 2}};
    abl_schedule s = parse_ok("mpt:8", 12, TAU_BF16);
    check_pow2(&s, e8, 12);
    abl_schedule_free(&s);
    /* B = 16: s[i] = 2^-(i+1): odd positions -2, -4, ..., -16, then -1, -3, -5, -7 */
    const frac e16[12] = {{-2, 1},  {-4, 1},  {-6, 1}, {-8, 1}, {-10, 1}, {-12, 1},
                          {-14, 1}, {-16, 1}, {-1, 1}, {-3, 1}, {-5, 1},  {-7, 1}};
    s = parse_ok("mpt:16", 12, TAU_BF16);
    check_pow2(&s, e16, 12);
    assert_string_equal(s.spec, "mpt:16");
    abl_schedule_free(&s);
    /* H = 3, B = 8: H' = 4, s = [-2, -4, -6, -8] -> [-4, -8, -2] */
    s = parse_ok("mpt:8", 3, TAU_BF16);
    check_pow2(&s, (const frac[]){{-4, 1}, {-8, 1}, {-2, 1}}, 3);
    abl_schedule_free(&s);
}

static void test_pow2only(void **state)
{
    (void)state;
    frac e[9];
    for (int h = 1; h <= 9; h++)
        e[h - 1] = (frac){-8 * h, 9};
    abl_schedule s = parse_ok("pow2only", 9, TAU_BF16);
    check_pow2(&s, e, 9);
    assert_string_equal(s.spec, "pow2only");
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "2^(-8/9)");
    TEXT_EQ(abl_slope_exact_text(&s.slopes[8]), "2^-8");
    abl_schedule_free(&s);
}

/* ----- fitted schedules ----- */

static void test_geometric_steep(void **state)
{
    (void)state;
    /* Paper Table 8, Steep row (geometric 128 -> 512, H = 9, tau = -87.3365 = -126 ln 2, delta rounded) */
    const int table8[9] = {128, 152, 181, 215, 256, 304, 362, 431, 512};
    abl_schedule s = parse_ok("geometric:128:512", 9, TAU_BF16);
    assert_int_equal(s.count, 9);
    assert_string_equal(s.spec, "geometric:128:512");
    for (int h = 1; h <= 9; h++) {
        const abl_slope *m = &s.slopes[h - 1];
        assert_int_equal(m->form, ABL_SLOPE_TARGET);
        assert_int_equal(m->index, h);
        assert_int_equal(m->tau_log2, TAU_BF16);
        assert_int_equal(m->geo_num, h - 1);
        assert_int_equal(m->geo_den, 8);
        expect_number(m->target_lo, "128");
        expect_number(m->target_hi, "512");
        double delta = 126.0 * log(2.0) / m->value;
        assert_int_equal((int)lround(delta), table8[h - 1]);
        /* closed form t = 128 * 4^((h-1)/8) */
        double t = 128.0 * pow(4.0, (h - 1) / 8.0);
        assert_true(fabs(delta - t) <= 1e-12 * t);
    }
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "\xe2\x88\x92\xcf\x84/128");
    /* 128 * 2^(1/4) = 152.21851... */
    TEXT_EQ(abl_slope_exact_text(&s.slopes[1]), "\xe2\x88\x92\xcf\x84/152.219");
    /* h = 5: 128 * 4^(1/2) = 256 exactly */
    TEXT_EQ(abl_slope_exact_text(&s.slopes[4]), "\xe2\x88\x92\xcf\x84/256");
    TEXT_EQ(abl_slope_exact_text(&s.slopes[8]), "\xe2\x88\x92\xcf\x84/512");
    abl_schedule_free(&s);

    /* H = 1: just D1 */
    s = parse_ok("geometric:128:512", 1, TAU_BF16);
    assert_int_equal(s.count, 1);
    assert_true(fabs(s.slopes[0].value - 126.0 * log(2.0) / 128.0) <= 1e-15);
    abl_schedule_free(&s);
}

static void test_robust(void **state)
{
    (void)state;
    /* Paper Table 8 Explicit row / spec §5: targets 32 * 2^(h-1) = 32 ... 8192 */
    const char *want[9] = {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"};
    abl_schedule s = parse_ok("robust:32", 9, TAU_BF16);
    assert_string_equal(s.spec, "robust:32");
    for (int h = 0; h < 9; h++) {
        assert_int_equal(s.slopes[h].form, ABL_SLOPE_TARGET);
        expect_number(s.slopes[h].target_lo, want[h]);
        assert_int_equal(s.slopes[h].geo_num, 0);
        double t = 32.0 * (double)(1 << h);
        assert_true(fabs(s.slopes[h].value - 126.0 * log(2.0) / t) <= 1e-15 * s.slopes[h].value);
    }
    TEXT_EQ(abl_slope_exact_text(&s.slopes[8]), "\xe2\x88\x92\xcf\x84/8192");
    abl_schedule_free(&s);

    /* decimal starts stay exact decimals: 0.001 * 2^(h-1) */
    s = parse_ok("robust:1e-3", 4, TAU_BF16);
    expect_number(s.slopes[0].target_lo, "0.001");
    expect_number(s.slopes[3].target_lo, "0.008");
    abl_schedule_free(&s);

    /* very small starts are written in exponent form rather than with 30 zeros */
    s = parse_ok("robust:1e-30", 10, TAU_BF16);
    expect_number(s.slopes[0].target_lo, "1e-30");
    expect_number(s.slopes[9].target_lo, "5.12e-28");
    abl_schedule_free(&s);

    /* log-scaled: m = -tau / ln(t + 1) */
    s = parse_ok("robust-log:32", 9, TAU_BF16);
    assert_string_equal(s.spec, "robust-log:32");
    assert_int_equal(s.slopes[0].form, ABL_SLOPE_LOG_TARGET);
    expect_number(s.slopes[2].target_lo, "128");
    assert_true(fabs(s.slopes[0].value - 126.0 * log(2.0) / log(33.0)) <= 1e-15 * s.slopes[0].value);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "\xe2\x88\x92\xcf\x84/ln(33)");
    TEXT_EQ(abl_slope_exact_text(&s.slopes[8]), "\xe2\x88\x92\xcf\x84/ln(8193)");
    abl_schedule_free(&s);

    /* No length limit on the exact targets (issue 7 item 7: H >= 206 used to overflow a 64-byte decimal):
     * 32 * 2^299 = 2^304 exactly (Python: 32 * 2**299 == 2**304). */
    s = parse_ok("robust:32", 300, TAU_BF16);
    assert_int_equal(s.count, 300);
    assert_int_equal(mpz_cmp_ui(mpq_denref(s.slopes[299].target_lo), 1), 0);
    assert_int_equal(mpz_scan1(mpq_numref(s.slopes[299].target_lo), 0), 304);
    assert_int_equal(mpz_popcount(mpq_numref(s.slopes[299].target_lo)), 1);
    abl_schedule_free(&s);
}

static void test_lists(void **state)
{
    (void)state;
    abl_schedule s = parse_ok("targets:32,64", 0, TAU_BF16);
    assert_int_equal(s.count, 2);
    assert_string_equal(s.spec, "targets:32,64");
    expect_number(s.slopes[1].target_lo, "64");
    assert_int_equal(s.slopes[1].geo_num, 0);
    assert_int_equal(s.slopes[1].geo_den, 1);
    assert_int_equal(s.slopes[1].tau_log2, TAU_BF16);
    abl_schedule_free(&s);

    s = parse_ok("slopes:0.5,0.25", 2, TAU_BF16);
    assert_string_equal(s.spec, "slopes:0.5,0.25");
    assert_int_equal(s.slopes[0].form, ABL_SLOPE_RATIONAL);
    expect_number(s.slopes[0].rational, "0.5");
    assert_true(s.slopes[1].value == 0.25);
    abl_schedule_free(&s);

    /* the accepted decimal spellings */
    s = parse_ok("slopes:1e-3,.25,2E-2,0.0625", 0, TAU_BF16);
    assert_int_equal(s.count, 4);
    assert_true(s.slopes[0].value == 1e-3);
    assert_true(s.slopes[1].value == 0.25);
    assert_true(s.slopes[2].value == 2e-2);
    expect_number(s.slopes[1].rational, ".25");
    abl_schedule_free(&s);

    /* a long list is kept whole: the spec text and every item (nothing is cut) */
    char spec[1200] = "slopes:";
    for (int i = 0; i < 100; i++)
        strcat(spec, i ? ",0.001" : "0.001");
    s = parse_ok(spec, 0, TAU_BF16);
    assert_int_equal(s.count, 100);
    assert_string_equal(s.spec, spec);
    abl_schedule_free(&s);

    /* one 10,000-character item: 0.5 written with 9,996 trailing zeros is exactly 1/2 */
    char *big = malloc(10000 + 8);
    assert_non_null(big);
    strcpy(big, "slopes:0.5");
    memset(big + 10, '0', 9997);
    big[10007] = '\0';
    s = parse_ok(big, 0, TAU_BF16);
    assert_int_equal(s.count, 1);
    expect_number(s.slopes[0].rational, "0.5");
    assert_string_equal(s.spec, big);
    abl_schedule_free(&s);
    free(big);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        int heads;
        abl_status want;
    } cases[] = {
        {"slopes:-1", 0, ABL_ERR_BAD_SLOPE},       {"slopes:nan", 0, ABL_ERR_BAD_SLOPE},
        {"slopes:0", 0, ABL_ERR_BAD_SLOPE},        {"slopes:inf", 0, ABL_ERR_BAD_SLOPE},
        {"slopes:-0.0", 0, ABL_ERR_BAD_SLOPE},     {"slopes:Infinity", 0, ABL_ERR_BAD_SLOPE},
        {"slopes:", 0, ABL_ERR_BAD_SLOPE_SPEC},    {"slopes", 0, ABL_ERR_BAD_SLOPE_SPEC},
        {"slopes:0x1p-3", 0, ABL_ERR_BAD_SLOPE_SPEC}, {"slopes:1,,2", 0, ABL_ERR_BAD_SLOPE_SPEC},
        {"slopes:abc", 0, ABL_ERR_BAD_SLOPE_SPEC}, {"slopes:0.5x", 0, ABL_ERR_BAD_SLOPE_SPEC},
        {"slopes:1,", 0, ABL_ERR_BAD_SLOPE_SPEC},  {"targets:abc", 0, ABL_ERR_BAD_SLOPE_SPEC},
        {"geometric:0:5", 9, ABL_ERR_BAD_SLOPE},   {"geometric:128", 9, ABL_ERR_BAD_SLOPE_SPEC},
        {"geometric:1:2:3", 9, ABL_ERR_BAD_SLOPE_SPEC}, {"mpt:0", 8, ABL_ERR_BAD_SLOPE_SPEC},
        {"mpt:65", 8, ABL_ERR_BAD_SLOPE_SPEC},     {"mpt:x", 8, ABL_ERR_BAD_SLOPE_SPEC},
        {"foo", 8, ABL_ERR_BAD_SLOPE_SPEC},        {"", 8, ABL_ERR_BAD_SLOPE_SPEC},
        {"press:3", 8, ABL_ERR_BAD_SLOPE_SPEC},    {"robust:-32", 9, ABL_ERR_BAD_SLOPE},
        {"press", 0, ABL_ERR_HEADS_RANGE},         {"press", 65537, ABL_ERR_HEADS_RANGE},
        {"press", -1, ABL_ERR_HEADS_RANGE},        {"slopes:0.5,0.25", 3, ABL_ERR_HEADS_RANGE},
        {"targets:32,64", 1, ABL_ERR_HEADS_RANGE}, {"geometric:128:512", 0, ABL_ERR_HEADS_RANGE},
        /* a slope beyond binary64 (the engine needs a positive finite double) */
        {"slopes:1e-400", 0, ABL_ERR_BAD_SLOPE},   {"slopes:1e400", 0, ABL_ERR_BAD_SLOPE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        abl_schedule s;
        memset(&s, 0x5a, sizeof s);
        abl_status st = abl_schedule_parse(cases[i].spec, cases[i].heads, TAU_BF16, &s);
        if (st != cases[i].want)
            fprintf(stderr, "case \"%s\" heads %d: got %d want %d\n", cases[i].spec, cases[i].heads, (int)st,
                    (int)cases[i].want);
        assert_int_equal(st, cases[i].want);
        assert_null(s.slopes);
        assert_int_equal(s.count, 0);
        abl_schedule_free(&s);
    }
    /* fitting to tau >= 0 is degenerate; POW2 schedules do not use tau */
    abl_schedule s;
    assert_int_equal(abl_schedule_parse("geometric:128:512", 9, 0, &s), ABL_ERR_DEGENERATE);
    assert_int_equal(abl_schedule_parse("targets:32", 0, 5, &s), ABL_ERR_DEGENERATE);
    assert_int_equal(abl_schedule_parse("robust-log:32", 9, 0, &s), ABL_ERR_DEGENERATE);
    s = parse_ok("press", 8, 0);
    abl_schedule_free(&s);
    assert_int_equal(abl_schedule_parse(NULL, 8, TAU_BF16, &s), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_schedule_parse("press", 8, TAU_BF16, NULL), ABL_ERR_INVALID_ARGUMENT);
    abl_schedule_free(NULL);
}

/* ----- text forms ----- */

static void test_exact_text(void **state)
{
    (void)state;
    abl_schedule s = parse_ok("press", 32, TAU_BF16);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "2^-0.25");
    TEXT_EQ(abl_slope_exact_text(&s.slopes[1]), "2^-0.5");
    TEXT_EQ(abl_slope_exact_text(&s.slopes[31]), "2^-8");
    abl_schedule_free(&s);
    s = parse_ok("press", 64, TAU_BF16);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "2^-0.125");
    abl_schedule_free(&s);
    s = parse_ok("pow2only", 12, TAU_BF16);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "2^(-2/3)"); /* -8/12 = -2/3 does not terminate */
    TEXT_EQ(abl_slope_exact_text(&s.slopes[2]), "2^-2"); /* -24/12 */
    abl_schedule_free(&s);
    s = parse_ok("pow2only", 5, TAU_BF16);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "2^-1.6"); /* -8/5 terminates */
    abl_schedule_free(&s);

    abl_slope one;
    memset(&one, 0, sizeof one);
    one.form = ABL_SLOPE_POW2;
    one.pow2_num = 0;
    one.pow2_den = 1;
    TEXT_EQ(abl_slope_exact_text(&one), "2^0");

    s = parse_ok("slopes:2E-2", 0, TAU_BF16);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "2E-2");
    char *whole = abl_slope_exact_text(&s.slopes[0]);
    assert_string_equal(whole, "2E-2");
    free(whole);
    abl_schedule_free(&s);

    s = parse_ok("targets:1e-3", 0, TAU_BF16);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "\xe2\x88\x92\xcf\x84/1e-3");
    abl_schedule_free(&s);
}

static void test_decimal_text(void **state)
{
    (void)state;
    abl_schedule s = parse_ok("press", 16, TAU_BF16);
    /* sqrt(1/2) = 0.70710678118654752440... */
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[0], 5), "0.70711");
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[0], 20), "0.7071067811865475244"); /* %g style: trailing zero dropped */
    /* 2^-8 = 0.00390625 exactly; at 5 digits a tie, to even */
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[15], 8), "0.00390625");
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[15], 3), "0.00391");
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[15], 5), "0.0039062");
    abl_schedule_free(&s);

    /* 2^-16 = 1.52587890625e-05: fixed notation down to 1e-5; 2^-20 = 9.5367431640625e-07 below */
    s = parse_ok("pow2only", 1, TAU_BF16);
    abl_slope m = s.slopes[0];
    m.pow2_num = -16;
    TEXT_EQ(abl_slope_decimal_text(&m, 6), "0.0000152588");
    m.pow2_num = -20;
    TEXT_EQ(abl_slope_decimal_text(&m, 3), "9.54e-07");
    abl_schedule_free(&s);

    /* exact decimal midpoints of rational slopes round half to even */
    s = parse_ok("slopes:0.123455,0.123445,1e-9", 0, TAU_BF16);
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[0], 5), "0.12346");
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[1], 5), "0.12344");
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[2], 4), "1e-09");
    abl_schedule_free(&s);

    /* large values: %g style, no invented digits */
    s = parse_ok("slopes:1234567,1e50", 0, TAU_BF16);
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[0], 3), "1.23e+06");
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[0], 7), "1234567");
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[1], 6), "1e+50");
    abl_schedule_free(&s);

    /* targets: 126 ln2 / 32 = 2.7292...; ln 2 = 0.693147180559945309417 */
    s = parse_ok("targets:32", 0, TAU_BF16);
    char want[64];
    snprintf(want, sizeof want, "%.6g", 126.0 * 0.693147180559945309417 / 32.0);
    TEXT_EQ(abl_slope_decimal_text(&s.slopes[0], 6), want);
    abl_schedule_free(&s);
}

/* ----- correct rounding into MPFR ----- */

static void test_mpfr_rounding(void **state)
{
    (void)state;
    abl_schedule s = parse_ok("pow2only", 9, TAU_BF16);
    mpfr_t d, u, n, x, y;
    mpfr_inits2(200, d, u, n, (mpfr_ptr)0);
    mpfr_inits2(2000, x, y, (mpfr_ptr)0);
    /* m = 2^(-8/9): check d^9 <= 2^-8 < u^9 with u = next above d (powers exact at 2000 bits) */
    assert_int_equal(abl_slope_mpfr(d, &s.slopes[0], MPFR_RNDD), ABL_OK);
    assert_int_equal(abl_slope_mpfr(u, &s.slopes[0], MPFR_RNDU), ABL_OK);
    assert_int_equal(abl_slope_mpfr(n, &s.slopes[0], MPFR_RNDN), ABL_OK);
    mpfr_nextabove(d);
    assert_true(mpfr_equal_p(d, u));
    mpfr_nextbelow(d);
    mpfr_set_ui_2exp(x, 1, -8, MPFR_RNDN);
    mpfr_pow_ui(y, d, 9, MPFR_RNDN);
    assert_true(mpfr_lessequal_p(y, x));
    mpfr_pow_ui(y, u, 9, MPFR_RNDN);
    assert_true(mpfr_greater_p(y, x));
    assert_true(mpfr_equal_p(n, d) || mpfr_equal_p(n, u));
    /* exact values are exact in every direction */
    assert_int_equal(abl_slope_mpfr(d, &s.slopes[8], MPFR_RNDD), ABL_OK);
    assert_int_equal(abl_slope_mpfr(u, &s.slopes[8], MPFR_RNDU), ABL_OK);
    assert_true(mpfr_equal_p(d, u));
    assert_true(mpfr_cmp_d(d, 1.0 / 256.0) == 0);
    abl_schedule_free(&s);

    /* 2^-0.5 against MPFR's correctly rounded sqrt(1/2), another route */
    s = parse_ok("press", 16, TAU_BF16);
    mpfr_set_d(y, 0.5, MPFR_RNDN);
    mpfr_rnd_t modes[3] = {MPFR_RNDN, MPFR_RNDD, MPFR_RNDU};
    for (int i = 0; i < 3; i++) {
        mpfr_sqrt(u, y, modes[i]);
        assert_int_equal(abl_slope_mpfr(d, &s.slopes[0], modes[i]), ABL_OK);
        assert_true(mpfr_equal_p(d, u));
    }
    abl_schedule_free(&s);

    /* geometric 128->512, h = 2: m = 126 ln2 / (128 * 2^(1/4)) via exp2 at 2000 bits */
    s = parse_ok("geometric:128:512", 9, TAU_BF16);
    mpfr_const_log2(x, MPFR_RNDN);
    mpfr_mul_ui(x, x, 126, MPFR_RNDN);
    mpfr_set_d(y, 0.25, MPFR_RNDN);
    mpfr_exp2(y, y, MPFR_RNDN);
    mpfr_mul_ui(y, y, 128, MPFR_RNDN);
    mpfr_div(x, x, y, MPFR_RNDN);
    mpfr_set(u, x, MPFR_RNDN);
    assert_int_equal(abl_slope_mpfr(d, &s.slopes[1], MPFR_RNDN), ABL_OK);
    assert_true(mpfr_equal_p(d, u));
    abl_schedule_free(&s);

    /* robust-log:1 with tau = -126 ln2: ln(1 + 1) = ln 2, so m = 126 exactly */
    s = parse_ok("robust-log:1", 1, TAU_BF16);
    assert_int_equal(abl_slope_mpfr(d, &s.slopes[0], MPFR_RNDD), ABL_OK);
    assert_true(mpfr_cmp_ui(d, 126) == 0);
    assert_int_equal(abl_slope_mpfr(u, &s.slopes[0], MPFR_RNDU), ABL_OK);
    assert_true(mpfr_cmp_ui(u, 126) == 0);
    abl_schedule_free(&s);

    /* a caller's narrowed exponent range (format emulation) does not disturb the result */
    s = parse_ok("press", 8, TAU_BF16);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(-20);
    mpfr_set_emax(20);
    mpfr_t b;
    mpfr_init2(b, 8);
    assert_int_equal(abl_slope_mpfr(b, &s.slopes[7], MPFR_RNDN), ABL_OK);
    assert_int_equal(mpfr_get_emin(), -20);
    assert_int_equal(mpfr_get_emax(), 20);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    assert_true(mpfr_cmp_d(b, 1.0 / 256.0) == 0);
    mpfr_clear(b);
    abl_schedule_free(&s);
    mpfr_clears(d, u, n, x, y, (mpfr_ptr)0);
}

/* ----- comparison and sorting ----- */

static void test_compare(void **state)
{
    (void)state;
    abl_schedule p = parse_ok("press", 9, TAU_BF16);
    abl_schedule r = parse_ok("slopes:0.5,0.50000000000000000001,0.7071067811865476,0.7071067811865475", 0, TAU_BF16);
    assert_int_equal(abl_slope_compare(&p.slopes[0], &r.slopes[0]), 0);  /* 2^-1 == 0.5 */
    assert_int_equal(abl_slope_compare(&p.slopes[0], &r.slopes[1]), -1);
    assert_int_equal(abl_slope_compare(&r.slopes[1], &p.slopes[0]), 1);
    /* sqrt(1/2) = 0.70710678118654752440... lies between the two decimals */
    assert_int_equal(abl_slope_compare(&p.slopes[8], &r.slopes[2]), -1);
    assert_int_equal(abl_slope_compare(&p.slopes[8], &r.slopes[3]), 1);
    assert_int_equal(abl_slope_compare(&p.slopes[8], &p.slopes[8]), 0);
    assert_int_equal(abl_slope_compare(&p.slopes[8], &p.slopes[0]), 1);
    abl_schedule_free(&r);

    /* the same real in different fitted forms */
    abl_schedule g9 = parse_ok("geometric:128:512", 9, TAU_BF16);
    abl_schedule t = parse_ok("targets:256,128", 0, TAU_BF16);
    abl_schedule half = parse_ok("targets:64", 0, -63);
    assert_int_equal(abl_slope_compare(&g9.slopes[4], &t.slopes[0]), 0); /* 128 * 4^(1/2) = 256 */
    assert_int_equal(abl_slope_compare(&g9.slopes[0], &t.slopes[1]), 0);
    assert_int_equal(abl_slope_compare(&t.slopes[1], &half.slopes[0]), 0); /* 126/128 == 63/64 */
    assert_int_equal(abl_slope_compare(&g9.slopes[1], &t.slopes[0]), 1);  /* t = 152.2 < 256 */
    abl_schedule a4 = parse_ok("geometric:128:512", 4, TAU_BF16), b4 = parse_ok("geometric:64:2048", 4, TAU_BF16);
    /* 128 * 4^(1/3) = 2^(23/3) = 64 * 32^(1/3) */
    assert_int_equal(abl_slope_compare(&a4.slopes[1], &b4.slopes[1]), 0);
    assert_int_equal(abl_slope_compare(&a4.slopes[2], &b4.slopes[1]), -1);
    /* ln2 / ln 4 = 2 ln2 / ln 16 = 1/2 */
    abl_schedule l3 = parse_ok("robust-log:3", 1, -1), l15 = parse_ok("robust-log:15", 1, -2);
    assert_int_equal(abl_slope_compare(&l3.slopes[0], &l15.slopes[0]), 0);
    assert_int_equal(abl_slope_compare(&l3.slopes[0], &p.slopes[0]), 0); /* == 2^-1 */
    /* fitted vs power of two: 126 ln2 / 128 = 0.6823 lies between 2^-1 and 2^-0.5 */
    assert_int_equal(abl_slope_compare(&t.slopes[1], &p.slopes[0]), 1);
    assert_int_equal(abl_slope_compare(&t.slopes[1], &p.slopes[8]), -1);
    abl_schedule_free(&l3);
    abl_schedule_free(&l15);
    abl_schedule_free(&a4);
    abl_schedule_free(&b4);
    abl_schedule_free(&g9);
    abl_schedule_free(&t);
    abl_schedule_free(&half);
    abl_schedule_free(&p);
}

static void test_sorted(void **state)
{
    (void)state;
    abl_schedule s = parse_ok("press", 9, TAU_BF16);
    abl_slope *o = NULL;
    assert_int_equal(abl_schedule_sorted(&s, &o), ABL_OK);
    /* 2^-0.5 first (model index 9), then 2^-1 .. 2^-8 */
    const int idx[9] = {9, 1, 2, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < 9; i++)
        assert_int_equal(o[i].index, idx[i]);
    assert_true(o[0].value == sqrt(0.5));
    free(o);
    abl_schedule_free(&s);

    /* stable on ties */
    s = parse_ok("slopes:0.5,0.25,0.5,1,0.25", 0, TAU_BF16);
    assert_int_equal(abl_schedule_sorted(&s, &o), ABL_OK);
    const int idx2[5] = {4, 1, 3, 2, 5};
    for (int i = 0; i < 5; i++)
        assert_int_equal(o[i].index, idx2[i]);
    free(o);
    abl_schedule_free(&s);

    /* descending targets: the smallest target is the steepest */
    s = parse_ok("geometric:512:128", 5, TAU_BF16);
    assert_int_equal(abl_schedule_sorted(&s, &o), ABL_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(o[i].index, 5 - i);
    free(o);
    abl_schedule_free(&s);

    /* mpt reorder sorts back to 2^-0.5, 2^-1, ..., 2^-3.5, 2^-4, ... */
    s = parse_ok("mpt:8", 12, TAU_BF16);
    assert_int_equal(abl_schedule_sorted(&s, &o), ABL_OK);
    for (int i = 1; i < 12; i++)
        assert_true(o[i - 1].value > o[i].value);
    free(o);
    abl_schedule_free(&s);

    assert_int_equal(abl_schedule_sorted(NULL, &o), ABL_ERR_INVALID_ARGUMENT);
}

/* Large H works and is exact for every head (spec §5 formulas re-derived here); its speed is a
 * bench/ matter, not a test's. */
static void test_large_h(void **state)
{
    (void)state;
    /* H = 4096 is a power of two: m_h = 2^(-8h/4096) = 2^(-h/512), h = 1..4096 */
    abl_schedule s = parse_ok("press", 4096, TAU_BF16);
    assert_int_equal(s.count, 4096);
    for (int h = 1; h <= 4096; h++) {
        const abl_slope *m = &s.slopes[h - 1];
        assert_int_equal(m->form, ABL_SLOPE_POW2);
        assert_int_equal(m->index, h);
        assert_true(m->pow2_den > 0);
        assert_true(m->pow2_num * 512 == -(long)h * m->pow2_den);
    }
    assert_int_equal(s.slopes[0].pow2_num, -1);
    assert_int_equal(s.slopes[0].pow2_den, 512);
    assert_int_equal(s.slopes[4095].pow2_num, -8);
    assert_int_equal(s.slopes[4095].pow2_den, 1);
    abl_slope *o = NULL;
    assert_int_equal(abl_schedule_sorted(&s, &o), ABL_OK);
    for (int i = 0; i < 4096; i++)
        assert_int_equal(o[i].index, i + 1);
    free(o);
    abl_schedule_free(&s);

    /* H = 3000: c = 2048: 2^(-8h/2048) = 2^(-h/256) for h = 1..2048, then 2^(-4(2h-1)/2048) =
     * 2^(-(2h-1)/512) for h = 1..952 */
    s = parse_ok("press", 3000, TAU_BF16);
    assert_int_equal(s.count, 3000);
    for (int h = 1; h <= 3000; h++) {
        const abl_slope *m = &s.slopes[h - 1];
        assert_int_equal(m->form, ABL_SLOPE_POW2);
        assert_int_equal(m->index, h);
        assert_true(m->pow2_den > 0);
        if (h <= 2048)
            assert_true(m->pow2_num * 256 == -(long)h * m->pow2_den);
        else
            assert_true(m->pow2_num * 512 == -(long)(2 * (h - 2048) - 1) * m->pow2_den);
    }
    abl_schedule_free(&s);

    /* geometric targets 16 -> 4096 over 4096 heads: t_h = 16 * 256^((h-1)/4095), m_h = -tau/t_h */
    s = parse_ok("geometric:16:4096", 4096, TAU_BF16);
    assert_int_equal(s.count, 4096);
    for (int h = 1; h <= 4096; h++) {
        const abl_slope *m = &s.slopes[h - 1];
        assert_int_equal(m->index, h);
        assert_int_equal(m->form, ABL_SLOPE_TARGET);
        assert_true(m->geo_num * 4095 == (long)(h - 1) * m->geo_den);
        /* a handful of binary64 roundings on either side: 1e-14 relative is ~50 ulps of slack */
        double t = 16.0 * pow(256.0, (double)(h - 1) / 4095.0);
        double want = 126.0 * log(2.0) / t;
        assert_true(fabs(m->value - want) <= 1e-14 * want);
    }
    assert_int_equal(abl_schedule_sorted(&s, &o), ABL_OK);
    for (int i = 0; i < 4096; i++)
        assert_int_equal(o[i].index, i + 1);
    free(o);
    abl_schedule_free(&s);
}

/* The exact text is whole at any length (issue 17: no fixed buffer cuts it): a 2,000-digit slope of a
 * slopes: list comes back as written, and a target's "−τ/t" keeps every digit of t. */
static void test_exact_text_long(void **state)
{
    (void)state;
    char spec[2100] = "slopes:0.";
    for (int i = 0; i < 2000; i++)
        spec[9 + i] = (char)('1' + i % 9);
    spec[2009] = '\0';
    abl_schedule s = parse_ok(spec, 0, TAU_BF16);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), spec + 7);
    abl_schedule_free(&s);
    memset(&s, 0, sizeof s);
    assert_int_equal(abl_schedule_parse("targets:123456789", 1, -126, &s), ABL_OK);
    TEXT_EQ(abl_slope_exact_text(&s.slopes[0]), "\xE2\x88\x92\xCF\x84/123456789");
    abl_schedule_free(&s);
}

/* The typed description (issue 17): the text is read once into a kind and exact parameters; the
 * schedule is built from the value alone. Expected values are the grammar's (spec §5) and closed forms. */
static void test_spec_parse(void **state)
{
    (void)state;
    abl_schedule_spec s;
    assert_int_equal(abl_schedule_spec_parse(" MPT : 16 ", &s, NULL), ABL_OK);
    assert_int_equal(s.kind, ABL_SCHEDULE_MPT);
    assert_int_equal(s.mpt_bias, 16);
    assert_string_equal(s.text, "mpt:16");
    abl_schedule_spec_free(&s);
    assert_int_equal(abl_schedule_spec_parse("mpt", &s, NULL), ABL_OK); /* llm-foundry's default alibi_bias_max */
    assert_int_equal(s.mpt_bias, 8);
    assert_string_equal(s.text, "mpt:8");
    abl_schedule_spec_free(&s);
    assert_int_equal(abl_schedule_spec_parse("geometric:+128:512", &s, NULL), ABL_OK);
    assert_int_equal(s.kind, ABL_SCHEDULE_GEOMETRIC);
    assert_int_equal(s.count, 2);
    assert_int_equal(mpq_cmp_ui(s.numbers[0].value, 128, 1), 0);
    assert_int_equal(mpq_cmp_ui(s.numbers[1].value, 512, 1), 0);
    assert_string_equal(s.text, "geometric:128:512");
    abl_schedule_spec_free(&s);
    assert_int_equal(abl_schedule_spec_parse("slopes:0.5, 2^(-8/9),1e-3", &s, NULL), ABL_OK);
    assert_int_equal(s.kind, ABL_SCHEDULE_SLOPES);
    assert_int_equal(s.count, 3);
    assert_int_equal(mpq_cmp_ui(s.numbers[0].value, 1, 2), 0);
    assert_true(s.numbers[1].pow2);
    assert_int_equal(s.numbers[1].pow2_num, -8);
    assert_int_equal(s.numbers[1].pow2_den, 9);
    assert_int_equal(mpq_cmp_ui(s.numbers[2].value, 1, 1000), 0);
    assert_string_equal(s.text, "slopes:0.5,2^(-8/9),1e-3");
    abl_schedule_spec_free(&s);
    assert_int_equal(abl_schedule_spec_parse("robust-log:32", &s, NULL), ABL_OK);
    assert_int_equal(s.kind, ABL_SCHEDULE_ROBUST_LOG);
    abl_schedule_spec_free(&s);
    /* errors: malformed, non-positive, mpt:B out of 1..64, a list over the head limit (counted first) */
    assert_int_equal(abl_schedule_spec_parse("nonsense", &s, NULL), ABL_ERR_BAD_SLOPE_SPEC);
    assert_null(s.text);
    assert_int_equal(abl_schedule_spec_parse("slopes:0.5,-1", &s, NULL), ABL_ERR_BAD_SLOPE);
    assert_int_equal(abl_schedule_spec_parse("targets:2^-1", &s, NULL), ABL_ERR_BAD_SLOPE_SPEC);
    assert_int_equal(abl_schedule_spec_parse("mpt:65", &s, NULL), ABL_ERR_BAD_SLOPE_SPEC);
    assert_int_equal(abl_schedule_spec_parse("press:1", &s, NULL), ABL_ERR_BAD_SLOPE_SPEC);
    size_t n = ABL_MAX_HEADS + 1;
    char *big = malloc(2 * n + 8);
    assert_non_null(big);
    char *w = big + sprintf(big, "slopes:x");
    for (size_t i = 1; i < n; i++)
        w += sprintf(w, ",x");
    assert_int_equal(abl_schedule_spec_parse(big, &s, NULL), ABL_ERR_HEADS_RANGE);
    free(big);
}

/* A refused text comes with the library's reason, naming the part at fault (issue 17: the caller does not
 * guess it from the status); the expectations are the grammar of docs/spec.md §5. */
static void test_spec_parse_messages(void **state)
{
    (void)state;
    static const struct {
        const char *text, *part;
        abl_status st;
    } bad[] = {
        {"nonsense", "unknown schedule 'nonsense'", ABL_ERR_BAD_SLOPE_SPEC},
        {"geometric:2", "geometric:D1:DH", ABL_ERR_BAD_SLOPE_SPEC},
        {"mpt:65", "from 1 to 64", ABL_ERR_BAD_SLOPE_SPEC},
        {"press:1", "press takes no parameter", ABL_ERR_BAD_SLOPE_SPEC},
        {"slopes:0.5,-1", "must be positive and finite", ABL_ERR_BAD_SLOPE},
        {"robust:", "robust:D1", ABL_ERR_BAD_SLOPE_SPEC},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        abl_schedule_spec s;
        char *msg = NULL;
        assert_int_equal(abl_schedule_spec_parse(bad[i].text, &s, &msg), bad[i].st);
        assert_non_null(msg);
        assert_non_null(strstr(msg, bad[i].part));
        assert_null(strchr(msg, '\n'));
        free(msg);
    }
    abl_schedule_spec s;
    char *msg = NULL;
    assert_int_equal(abl_schedule_spec_parse("mpt:16", &s, &msg), ABL_OK);
    assert_null(msg); /* no message on success */
    abl_schedule_spec_free(&s);
}

static void test_spec_build(void **state)
{
    (void)state;
    abl_schedule sched;
    /* NULL is press: H = 8 gives 2^(-8h/8) = 2^-h */
    assert_int_equal(abl_schedule_build(NULL, 8, -126, &sched), ABL_OK);
    assert_int_equal(sched.kind, ABL_SCHEDULE_PRESS);
    assert_string_equal(sched.spec, "press");
    for (int h = 0; h < 8; h++)
        assert_true(sched.slopes[h].value == ldexp(1.0, -(h + 1)));
    abl_schedule_free(&sched);
    /* mpt:B from the value: B = 4, H = 4 gives 2^(-4h/4) = 2^-h, and the schedule keeps B */
    abl_schedule_spec s;
    assert_int_equal(abl_schedule_spec_pow2(ABL_SCHEDULE_MPT, 4, &s), ABL_OK);
    assert_string_equal(s.text, "mpt:4");
    assert_int_equal(abl_schedule_build(&s, 4, -126, &sched), ABL_OK);
    assert_int_equal(sched.kind, ABL_SCHEDULE_MPT);
    assert_int_equal(sched.mpt_bias, 4);
    for (int h = 0; h < 4; h++)
        assert_true(sched.slopes[h].value == ldexp(1.0, -(h + 1)));
    abl_schedule_free(&sched);
    assert_int_equal(abl_schedule_build(&s, 0, -126, &sched), ABL_ERR_HEADS_RANGE); /* not a list: H needed */
    abl_schedule_spec_free(&s);
    assert_int_equal(abl_schedule_spec_pow2(ABL_SCHEDULE_MPT, 0, &s), ABL_ERR_BAD_SLOPE_SPEC);
    /* a list's length against H, and a fitted schedule without a tau */
    assert_int_equal(abl_schedule_spec_parse("slopes:1,2", &s, NULL), ABL_OK);
    assert_int_equal(abl_schedule_build(&s, 3, -126, &sched), ABL_ERR_HEADS_RANGE);
    assert_int_equal(abl_schedule_build(&s, 0, -126, &sched), ABL_OK);
    assert_int_equal(sched.count, 2);
    abl_schedule_free(&sched);
    abl_schedule_spec_free(&s);
    assert_int_equal(abl_schedule_spec_parse("geometric:128:512", &s, NULL), ABL_OK);
    assert_int_equal(abl_schedule_build(&s, 4, 0, &sched), ABL_ERR_DEGENERATE);
    abl_schedule_spec_free(&s);
    /* geometric:128:512 from the values: at H = 5 the middle head's target is 128 (512/128)^(2/4) = 256 */
    assert_int_equal(abl_schedule_spec_geometric(128, 512, &s), ABL_OK);
    assert_string_equal(s.text, "geometric:128:512");
    assert_int_equal(abl_schedule_build(&s, 5, -126, &sched), ABL_OK);
    mpfr_t t;
    mpfr_init2(t, 53);
    assert_int_equal(abl_slope_mpfr(t, &sched.slopes[2], MPFR_RNDN), ABL_OK);
    mpfr_mul_ui(t, t, 256, MPFR_RNDN); /* m t = 126 ln 2 */
    assert_true(fabs(mpfr_get_d(t, MPFR_RNDN) - 126 * 0.6931471805599453) < 1e-12);
    mpfr_clear(t);
    abl_schedule_free(&sched);
    abl_schedule_spec_free(&s);
    /* robust:32 from the value: targets 32 * 2^(h-1) */
    assert_int_equal(abl_schedule_spec_robust(ABL_SCHEDULE_ROBUST, 32, &s), ABL_OK);
    assert_string_equal(s.text, "robust:32");
    assert_int_equal(abl_schedule_build(&s, 3, -126, &sched), ABL_OK);
    assert_int_equal(mpq_cmp_ui(sched.slopes[2].target_lo, 128, 1), 0);
    abl_schedule_free(&sched);
    abl_schedule_spec_free(&s);
}

/* slopes: from exact values, as design builds it: binary32 0.1 is 13421773 * 2^-27 exactly
 * (0x3dcccccd), whose decimal is 0.100000001490116119384765625; no text round trip. */
static void test_spec_from_values(void **state)
{
    (void)state;
    mpq_t m[2];
    mpq_inits(m[0], m[1], (mpq_ptr)0);
    mpq_set_ui(m[0], 13421773, 1);
    mpq_div_2exp(m[0], m[0], 27);
    mpq_set_ui(m[1], 1, 1);
    abl_schedule_spec s, c;
    assert_int_equal(abl_schedule_spec_slopes((const mpq_t *)m, 2, &s), ABL_OK);
    assert_int_equal(s.kind, ABL_SCHEDULE_SLOPES);
    assert_string_equal(s.text, "slopes:0.100000001490116119384765625,1");
    assert_int_equal(abl_schedule_spec_copy(&s, &c), ABL_OK);
    abl_schedule_spec_free(&s);
    abl_schedule sched;
    assert_int_equal(abl_schedule_build(&c, 0, -126, &sched), ABL_OK);
    abl_schedule_spec_free(&c); /* the schedule owns its numbers */
    assert_int_equal(sched.count, 2);
    assert_int_equal(sched.slopes[0].form, ABL_SLOPE_RATIONAL);
    assert_int_equal(mpq_cmp(sched.slopes[0].rational, m[0]), 0);
    assert_string_equal(sched.slopes[0].text, "0.100000001490116119384765625");
    abl_schedule_free(&sched);
    mpq_set_si(m[1], -1, 1);
    assert_int_equal(abl_schedule_spec_slopes((const mpq_t *)m, 2, &s), ABL_ERR_BAD_SLOPE);
    mpq_clears(m[0], m[1], (mpq_ptr)0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_press_h9),
        cmocka_unit_test(test_exact_text_long),
        cmocka_unit_test(test_press_h12_h20),
        cmocka_unit_test(test_press_h112),
        cmocka_unit_test(test_press_powers_of_two),
        cmocka_unit_test(test_mpt_equals_press_for_powers_of_two),
        cmocka_unit_test(test_mpt_reorder),
        cmocka_unit_test(test_pow2only),
        cmocka_unit_test(test_geometric_steep),
        cmocka_unit_test(test_robust),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_exact_text),
        cmocka_unit_test(test_decimal_text),
        cmocka_unit_test(test_mpfr_rounding),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_sorted),
        cmocka_unit_test(test_large_h),
        cmocka_unit_test(test_spec_parse),
        cmocka_unit_test(test_spec_parse_messages),
        cmocka_unit_test(test_spec_build),
        cmocka_unit_test(test_spec_from_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
