/* Unit tests of the blindness engine. Expected values: the paper (Tables 1 and 8, §3.4), spec §6,
 * and mpmath at 80 digits (commands quoted beside each literal); never the code under test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
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

/* Exact numbers for queries and slopes, kept until the end of the run. */
static mpq_t pool[64];
static int npool;

static mpq_srcptr num(const char *text)
{
    assert_true(npool < 64);
    mpq_init(pool[npool]);
    assert_int_equal(abl_decimal_to_mpq(text, pool[npool]), ABL_OK);
    return pool[npool++];
}

static abl_slope pow2(long num, long den)
{
    abl_slope s;
    memset(&s, 0, sizeof s);
    s.form = ABL_SLOPE_POW2;
    s.index = 1;
    s.pow2_num = num;
    s.pow2_den = den;
    s.value = exp2((double)num / (double)den);
    return s;
}

static abl_slope target(const char *t, long tau_log2, int log_form)
{
    abl_slope s;
    memset(&s, 0, sizeof s);
    s.form = log_form ? ABL_SLOPE_LOG_TARGET : ABL_SLOPE_TARGET;
    s.index = 1;
    s.target_lo = s.target_hi = num(t);
    s.geo_den = 1;
    s.tau_log2 = tau_log2;
    s.value = log_form ? -tau_log2 * log(2.0) / log(atof(t) + 1) : -tau_log2 * log(2.0) / atof(t);
    return s;
}

static abl_blind_query query(abl_convention conv, abl_distance dist)
{
    abl_blind_query q;
    memset(&q, 0, sizeof q);
    assert_int_equal(abl_format_lookup("bf16", &q.format), ABL_OK);
    q.convention = conv;
    q.distance = dist;
    return q;
}

/* delta as decimal text (exact integers only). */
static void expect_delta(const abl_slope *s, const abl_blind_query *q, const char *want)
{
    abl_delta d;
    abl_delta_init(&d);
    assert_int_equal(abl_blindness(s, q, &d), ABL_OK);
    assert_false(d.never);
    if (!d.exact)
        fail_msg("delta not exact, expected %s (slope %g, %s, convention %d, distance %d, keys %llu)", want, s->value,
                 q->format.name, (int)q->convention, (int)q->distance, (unsigned long long)q->weight_keys);
    char *got = mpz_get_str(NULL, 10, d.value);
    if (strcmp(got, want) != 0)
        fail_msg("delta %s, expected %s (slope %g, %s, convention %d, distance %d, keys %llu)", got, want, s->value,
                 q->format.name, (int)q->convention, (int)q->distance, (unsigned long long)q->weight_keys);
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(got, strlen(got) + 1);
    abl_delta_clear(&d);
}

/* 16 press heads, m_h = 2^(-h/2). mpmath: nint(126*log(2)/m), ceil(134*log(2)/m), floor(126*log(2)/m)+1. */
static const char *paper16[16] = {"124", "175", "247", "349", "494", "699", "988", "1397",
                                  "1976", "2795", "3952", "5590", "7905", "11179", "15810", "22358"};
static const char *ieee16[16] = {"132", "186", "263", "372", "526", "744", "1051", "1487",
                                 "2102", "2973", "4204", "5945", "8407", "11889", "16814", "23778"};
static const char *ftz16[16] = {"124", "175", "248", "350", "495", "699", "989", "1398",
                                "1977", "2795", "3953", "5590", "7905", "11180", "15810", "22359"};

static void test_press16_three_conventions(void **state)
{
    (void)state;
    abl_blind_query qp = query(ABL_CONV_PAPER, ABL_DISTANCE_LINEAR);
    abl_blind_query qi = query(ABL_CONV_IEEE, ABL_DISTANCE_LINEAR);
    abl_blind_query qf = query(ABL_CONV_FTZ, ABL_DISTANCE_LINEAR);
    for (int h = 1; h <= 16; h++) {
        abl_slope s = pow2(-h, 2);
        if (h % 2 == 0)
            s = pow2(-h / 2, 1);
        expect_delta(&s, &qp, paper16[h - 1]);
        expect_delta(&s, &qi, ieee16[h - 1]);
        expect_delta(&s, &qf, ftz16[h - 1]);
    }
}

/* Paper Table 1 (BLOOM 124 / 22358) and Falcon-RW-7B delta_1 = 95 (2^-0.125). */
static void test_paper_table1(void **state)
{
    (void)state;
    abl_blind_query q = query(ABL_CONV_PAPER, ABL_DISTANCE_LINEAR);
    abl_slope s = pow2(-1, 2);
    expect_delta(&s, &q, "124");
    s = pow2(-8, 1);
    expect_delta(&s, &q, "22358");
    s = pow2(-1, 8);
    expect_delta(&s, &q, "95");
}

/* Subnormal convention (tau = -133 ln 2, <=): mpmath ceil(133*log(2)*sqrt(2)) = 131. */
static void test_subnormal_convention(void **state)
{
    (void)state;
    abl_blind_query q = query(ABL_CONV_SUBNORMAL, ABL_DISTANCE_LINEAR);
    abl_slope s = pow2(-1, 2);
    expect_delta(&s, &q, "131");
    s = pow2(-8, 1); /* ceil(133 ln2 * 256) = ceil(23600.27...) */
    expect_delta(&s, &q, "23601");
}

/* Slopes fitted to tau: the logarithms cancel exactly; the strict (ftz) comparison moves one token. */
static void test_targets_exact(void **state)
{
    (void)state;
    abl_slope s = target("32", -126, 0);
    abl_blind_query q = query(ABL_CONV_PAPER, ABL_DISTANCE_LINEAR);
    expect_delta(&s, &q, "32");
    q.convention = ABL_CONV_FTZ; /* exp(tau_ftz) is the smallest normal: not flushed at d = 32 */
    expect_delta(&s, &q, "33");
    q.convention = ABL_CONV_IEEE; /* ceil(32 * 134/126) = ceil(34.03) */
    expect_delta(&s, &q, "35");
    abl_slope t = target("8192", -126, 0);
    q.convention = ABL_CONV_PAPER;
    expect_delta(&t, &q, "8192");
}

/* E+L: slopes -tau/ln(t+1) with log distances land exactly on the targets (paper §4.3). */
static void test_log_targets_exact(void **state)
{
    (void)state;
    abl_blind_query q = query(ABL_CONV_PAPER, ABL_DISTANCE_LOG);
    const char *targets[] = {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"};
    for (int i = 0; i < 9; i++) {
        abl_slope s = target(targets[i], -126, 1);
        expect_delta(&s, &q, targets[i]);
    }
}

/* Log distances (paper §3.4): delta_1 = 4.37e53 for m = 2^-0.5.
 * mpmath: nint(exp(126*log(2)*sqrt(2)) - 1) with mp.dps = 80. */
static void test_log_distance(void **state)
{
    (void)state;
    abl_blind_query q = query(ABL_CONV_PAPER, ABL_DISTANCE_LOG);
    abl_slope s = pow2(-1, 2);
    expect_delta(&s, &q, "437329245818487130341580886098229473052520611859048707");
    abl_delta d;
    abl_delta_init(&d);
    assert_int_equal(abl_blindness(&s, &q, &d), ABL_OK);
    char buf[64];
    put_text(buf, sizeof buf, abl_delta_text(&d, 12));
    assert_string_equal(buf, "4.37e53");
    /* m = 2^-1: Q = 2^252 - 1 exactly, an integer: nearest and ceil give it, strict gives 2^252. */
    s = pow2(-1, 1);
    assert_int_equal(abl_blindness(&s, &q, &d), ABL_OK);
    assert_true(d.exact);
    mpz_t want;
    mpz_init(want);
    mpz_ui_pow_ui(want, 2, 252);
    mpz_sub_ui(want, want, 1);
    assert_int_equal(mpz_cmp(d.value, want), 0);
    q.convention = ABL_CONV_FTZ;
    assert_int_equal(abl_blindness(&s, &q, &d), ABL_OK);
    mpz_add_ui(want, want, 1);
    assert_int_equal(mpz_cmp(d.value, want), 0);
    /* m = 2^-8: 2^32256 - 1, about 1.06e9710 (spec §6: delta_9 ~ 10^9710). */
    q.convention = ABL_CONV_PAPER;
    s = pow2(-8, 1);
    assert_int_equal(abl_blindness(&s, &q, &d), ABL_OK);
    put_text(buf, sizeof buf, abl_delta_text(&d, 12));
    assert_string_equal(buf, "1.06e9710");
    put_text(buf, sizeof buf, abl_delta_table8_cell(&d));
    assert_string_equal(buf, "**");
    mpz_clear(want);
    abl_delta_clear(&d);
}

/* Table 8 cell rule at its boundaries: 10^9 prints, 10^9 + 1 is '*', 2^1024 - 1 is '*', 2^1024 is '**'. */
static void test_table8_rule(void **state)
{
    (void)state;
    abl_delta d;
    abl_delta_init(&d);
    d.exact = 1;
    char buf[32];
    mpz_set_ui(d.value, 1000000000UL);
    put_text(buf, sizeof buf, abl_delta_table8_cell(&d));
    assert_string_equal(buf, "1000000000");
    mpz_add_ui(d.value, d.value, 1);
    put_text(buf, sizeof buf, abl_delta_table8_cell(&d));
    assert_string_equal(buf, "*");
    mpz_ui_pow_ui(d.value, 2, 1024);
    mpz_sub_ui(d.value, d.value, 1);
    put_text(buf, sizeof buf, abl_delta_table8_cell(&d));
    assert_string_equal(buf, "*");
    mpz_add_ui(d.value, d.value, 1);
    put_text(buf, sizeof buf, abl_delta_table8_cell(&d));
    assert_string_equal(buf, "**");
    d.never = 1;
    put_text(buf, sizeof buf, abl_delta_table8_cell(&d));
    assert_string_equal(buf, "never");
    abl_delta_clear(&d);
}

/* Non-zero logits: mpmath nint((5 + 126*log(2))*sqrt(2)) = 131 (130.58), ceil((5 + 134 log 2) sqrt 2) = 139. */
static void test_logit(void **state)
{
    (void)state;
    abl_blind_query q = query(ABL_CONV_PAPER, ABL_DISTANCE_LINEAR);
    q.logit = num("5");
    abl_slope s = pow2(-1, 2);
    expect_delta(&s, &q, "131");
    q.convention = ABL_CONV_IEEE;
    expect_delta(&s, &q, "139");
    /* eps below tau: every d >= 1 is blind, so delta = 1, the smallest d of the definition (spec §6: d
     * counts from 1, the diagonal is never a blind key at the exponent level). */
    q.logit = num("-100");
    expect_delta(&s, &q, "1");
}

static const char *const all_formats[] = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8-e5m2", "fp8-e4m3fn",
                                          "fp8-e4m3fnuz", "fp8-e5m2fnuz", "fp6-e2m3fn", "fp6-e3m2fn", "fp4-e2m1fn",
                                          "float8_e4m3", "fp8-e3m4", "fp8-e4m3b11fnuz"};
static const abl_convention all_conventions[] = {ABL_CONV_PAPER, ABL_CONV_FTZ, ABL_CONV_IEEE, ABL_CONV_SUBNORMAL};

/* |tau| of a format and convention from spec §2/§3 directly: ln 2 times emin (ftz kind, paper and ftz),
 * emin - p (rn-zero, ieee) or emin - p + 1 (subnormal). */
static double abs_tau(const abl_format *f, abl_convention c)
{
    long e = c == ABL_CONV_IEEE ? f->emin - f->precision : c == ABL_CONV_SUBNORMAL ? f->emin - f->precision + 1 : f->emin;
    return fabs((double)e) * log(2.0);
}

/* A decimal slope held in the caller's m (initialised), so loops do not fill the pool. */
static abl_slope decimal_slope(const char *text, mpq_t m)
{
    abl_slope s;
    memset(&s, 0, sizeof s);
    assert_int_equal(abl_decimal_to_mpq(text, m), ABL_OK);
    s.form = ABL_SLOPE_RATIONAL;
    s.index = 1;
    s.rational = m;
    s.value = atof(text);
    return s;
}

/*
 * The diagonal band (issue 15, item 1; spec §6): delta is the smallest d >= 1 at the exponent level, in
 * every convention and distance kind. fp4-e2m1fn and fp6-e2m3fn have tau = 0 (emin = 0), where
 * "0 <= tau" held at d = 0; and a slope m > 2|tau| puts Q = |tau|/m below 1/2, where the paper's rounding
 * gave 0. By the definition alone: d = 1 is blind (m g(1) >= |tau|: m ln 2 >= |tau| for log distances)
 * and d = 0 is not counted, so delta = 1 for every format and convention.
 */
static void test_diagonal_band(void **state)
{
    (void)state;
    for (size_t f = 0; f < sizeof all_formats / sizeof all_formats[0]; f++) {
        for (size_t c = 0; c < 4; c++) {
            for (int dist = 0; dist < 2; dist++) {
                abl_blind_query q = query(all_conventions[c], dist ? ABL_DISTANCE_LOG : ABL_DISTANCE_LINEAR);
                assert_int_equal(abl_format_lookup(all_formats[f], &q.format), ABL_OK);
                /* just above 2|tau| (and m ln 2 >= |tau| then too), and far above it */
                char text[32];
                snprintf(text, sizeof text, "%ld", (long)(2.0 * abs_tau(&q.format, q.convention)) + 1);
                mpq_t m1, m2;
                mpq_inits(m1, m2, (mpq_ptr)0);
                abl_slope steep = decimal_slope(text, m1), steeper = decimal_slope("1000000", m2);
                expect_delta(&steep, &q, "1");
                expect_delta(&steeper, &q, "1");
                /* a one-key row at the weight level: its only key has the weight 1 (spec §10) */
                q.weight_keys = 1;
                expect_delta(&steep, &q, "1");
                /* two keys, m = 10^6: the diagonal keeps 1/(1 + e^-m), d = 1 gets e^-m/(1 + e^-m); with
                 * tau = 0 the diagonal's 1/(1 + e^-m) < 1 = e^tau is itself blind (test_weight_diagonal) */
                q.weight_keys = 2;
                if (abs_tau(&q.format, q.convention) > 0)
                    expect_delta(&steeper, &q, "1");
                mpq_clears(m1, m2, (mpq_ptr)0);
            }
        }
    }
    /* tau = 0 with the press slopes (the fp4 layer): paper and ftz give 1; ieee is the exact
     * ceil(2 ln2 / 2^-2) = ceil(5.545) = 6 (tau = ln 2^-2, fp4 rn-zero). */
    const char *tau0[] = {"fp4-e2m1fn", "fp6-e2m3fn"};
    for (int f = 0; f < 2; f++) {
        for (int h = 1; h <= 8; h++) {
            abl_slope s = pow2(-h, 1);
            for (int c = 0; c < 2; c++) {
                abl_blind_query q = query(all_conventions[c], ABL_DISTANCE_LINEAR);
                assert_int_equal(abl_format_lookup(tau0[f], &q.format), ABL_OK);
                expect_delta(&s, &q, "1");
                q.distance = ABL_DISTANCE_LOG;
                expect_delta(&s, &q, "1");
            }
        }
    }
    abl_blind_query qi = query(ABL_CONV_IEEE, ABL_DISTANCE_LINEAR);
    assert_int_equal(abl_format_lookup("fp4-e2m1fn", &qi.format), ABL_OK);
    abl_slope s = pow2(-2, 1);
    expect_delta(&s, &qi, "6");
}

/*
 * The weight level can lose the diagonal itself, and only when its own weight 1/S_k really vanishes
 * (spec §10): fp8-e4m3fn under ftz (tau = ln 2^-6, strict), m = 10^-20, so S_k = k to 20 digits. k = 100:
 * 1/S = 0.01 < 1/64, delta = 0; k = 65 likewise; k = 64: S_64 = 64 - 2016 m, the weight
 * e^(-m d)/S_64 < 2^-6 iff d > 31.5 (mpmath), delta = 32. tau = 0 (fp4-e2m1fn): with two keys
 * the diagonal keeps 1/(1 + e^-m) ~ 1/2 < 1, the smallest normal: delta = 0 in paper and ftz. bf16 paper,
 * two keys, m = 200: Q = (87.3365 - ln(1 + e^-200))/200 = 0.437 rounds to 0, but 0 < Q: delta = 1.
 */
static void test_weight_diagonal(void **state)
{
    (void)state;
    mpq_t m1, m2;
    mpq_inits(m1, m2, (mpq_ptr)0);
    abl_slope flat = decimal_slope("1e-20", m1), steep = decimal_slope("200", m2);
    abl_blind_query q = query(ABL_CONV_FTZ, ABL_DISTANCE_LINEAR);
    assert_int_equal(abl_format_lookup("fp8-e4m3fn", &q.format), ABL_OK);
    q.weight_keys = 100;
    expect_delta(&flat, &q, "0");
    q.weight_keys = 65;
    expect_delta(&flat, &q, "0");
    q.weight_keys = 64;
    expect_delta(&flat, &q, "32");
    for (int c = 0; c < 2; c++) {
        abl_blind_query q0 = query(all_conventions[c], ABL_DISTANCE_LINEAR);
        assert_int_equal(abl_format_lookup("fp4-e2m1fn", &q0.format), ABL_OK);
        q0.weight_keys = 2;
        expect_delta(&flat, &q0, "0");
        q0.distance = ABL_DISTANCE_LOG;
        expect_delta(&flat, &q0, "0");
    }
    abl_blind_query qp = query(ABL_CONV_PAPER, ABL_DISTANCE_LINEAR);
    qp.weight_keys = 2;
    expect_delta(&steep, &qp, "1");
    mpq_clears(m1, m2, (mpq_ptr)0);
}

/* Clamp: c = -87 sits 0.3365 nats above tau_ftz, so the head never goes blind; c = -88 cannot save it. */
static void test_clamp(void **state)
{
    (void)state;
    abl_blind_query q = query(ABL_CONV_PAPER, ABL_DISTANCE_LINEAR);
    q.clamp = num("-87");
    abl_slope s = pow2(-1, 2);
    abl_delta d;
    abl_delta_init(&d);
    assert_int_equal(abl_blindness(&s, &q, &d), ABL_OK);
    assert_true(d.never);
    char buf[32];
    put_text(buf, sizeof buf, abl_delta_text(&d, 12));
    assert_string_equal(buf, "never");
    assert_false(abl_delta_lt_u64(&d, UINT64_MAX));
    char *margin = NULL;
    assert_int_equal(abl_clamp_margin_string(&q, 4, &margin), ABL_OK);
    assert_string_equal(margin, "0.3365"); /* spec §6: only 0.34 nats */
    free(margin);
    /* A logit of -1 pushes eps + c below tau: blind again, at the unclamped distance
     * nint((126 ln2 - 1) sqrt 2) = nint(122.10) = 122. */
    q.logit = num("-1");
    expect_delta(&s, &q, "122");
    q.logit = NULL;
    q.clamp = num("-88");
    expect_delta(&s, &q, "124");
    abl_delta_clear(&d);
}

static void test_text_and_int64(void **state)
{
    (void)state;
    abl_delta d;
    abl_delta_init(&d);
    d.exact = 1;
    mpz_set_ui(d.value, 22358);
    char buf[32];
    put_text(buf, sizeof buf, abl_delta_text(&d, 12));
    assert_string_equal(buf, "22358");
    int64_t v = 0;
    assert_true(abl_delta_get_i64(&d, &v));
    assert_int_equal(v, 22358);
    assert_true(abl_delta_lt_u64(&d, 22359));
    assert_false(abl_delta_lt_u64(&d, 22358));
    mpz_ui_pow_ui(d.value, 2, 63);
    assert_false(abl_delta_get_i64(&d, &v));
    put_text(buf, sizeof buf, abl_delta_text(&d, 12));
    assert_string_equal(buf, "9.22e18"); /* 2^63 = 9223372036854775808 */
    abl_delta_clear(&d);
}

/* Weight level (spec §4): m = 2^-8, N = 2048, ln S ~ 5.55 nats, 1420 tokens earlier than 22358.
 * mpmath: S = (1-exp(-m*N))/(1-exp(-m)); nint((126*log(2) - log(S))/m) = 20938; ceil((134 log2 - log S)/m) = 22358;
 * m = 2^-0.5: 123 (paper) and 131 (ieee). */
static void test_weight_level(void **state)
{
    (void)state;
    abl_blind_query q = query(ABL_CONV_PAPER, ABL_DISTANCE_LINEAR);
    q.weight_keys = 2048;
    abl_slope s = pow2(-8, 1);
    expect_delta(&s, &q, "20938");
    q.convention = ABL_CONV_IEEE;
    expect_delta(&s, &q, "22358");
    s = pow2(-1, 2);
    expect_delta(&s, &q, "131");
    q.convention = ABL_CONV_PAPER;
    expect_delta(&s, &q, "123");
    /* One key: S_1 = 1, ln S = 0: the exponent-level delta. */
    q.weight_keys = 1;
    expect_delta(&s, &q, "124");
    /* Every combination is modelled (docs/method.md §5). A logit: the threshold is tau + ln S - log1p(e^tau
     * expm1(-eps)); mpmath: L = log(S) - log1p(exp(-126 log2)*expm1(-1)), nint((1 + 126 log2 - L)/2^-0.5)
     * = nint(123.966) = 124. */
    abl_delta d;
    abl_delta_init(&d);
    q.weight_keys = 2048;
    q.logit = num("1");
    expect_delta(&s, &q, "124");
    q.logit = NULL;
    /* A clamp (ieee, m = 2^-8, N = 2048): tau + ln S = -87.33493 (mpmath), so c = -87 keeps every weight
     * (never) although the exponent-level margin is positive; c = -88 does not, and blindness starts at the
     * unclamped 22358. Under paper the threshold is -81.79: c = -87 is blind from 20938. */
    s = pow2(-8, 1);
    q.convention = ABL_CONV_IEEE;
    q.clamp = num("-87");
    assert_int_equal(abl_blindness(&s, &q, &d), ABL_OK);
    assert_true(d.never);
    q.clamp = num("-88");
    expect_delta(&s, &q, "22358");
    q.clamp = num("-87");
    q.convention = ABL_CONV_PAPER;
    expect_delta(&s, &q, "20938");
    q.clamp = NULL;
    /* Log distance, S = sum_{j<=k} j^-m: mpmath zeta(m) - zeta(m, k+1). m = 8, ieee: k = 20 (direct sum)
     * and k = 50 both give ceil(110160.9287) = 110161; m = 4, k = 100 (Euler-Maclaurin from j = 65):
     * ceil(exp((134 log2 - log H)/4) - 1) = ceil(11910106427.54) = 11910106428. */
    q.convention = ABL_CONV_IEEE;
    q.distance = ABL_DISTANCE_LOG;
    s = pow2(3, 1);
    q.weight_keys = 20;
    expect_delta(&s, &q, "110161");
    q.weight_keys = 50;
    expect_delta(&s, &q, "110161");
    s = pow2(2, 1);
    q.weight_keys = 100;
    expect_delta(&s, &q, "11910106428");
    abl_delta_clear(&d);
}

static void test_errors(void **state)
{
    (void)state;
    abl_blind_query q = query(ABL_CONV_PAPER, ABL_DISTANCE_LINEAR);
    abl_slope s = pow2(-1, 2);
    abl_delta d;
    abl_delta_init(&d);
    assert_int_equal(abl_blindness(NULL, &q, &d), ABL_ERR_INVALID_ARGUMENT);
    s.value = -1.0;
    assert_int_equal(abl_blindness(&s, &q, &d), ABL_ERR_BAD_SLOPE);
    abl_delta_clear(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_press16_three_conventions),
        cmocka_unit_test(test_paper_table1),
        cmocka_unit_test(test_subnormal_convention),
        cmocka_unit_test(test_targets_exact),
        cmocka_unit_test(test_log_targets_exact),
        cmocka_unit_test(test_log_distance),
        cmocka_unit_test(test_table8_rule),
        cmocka_unit_test(test_logit),
        cmocka_unit_test(test_diagonal_band),
        cmocka_unit_test(test_weight_diagonal),
        cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_text_and_int64),
        cmocka_unit_test(test_weight_level),
        cmocka_unit_test(test_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (int i = 0; i < npool; i++)
        mpq_clear(pool[i]);
    return rc;
}
