/*
 * Unit tests for verify (the emulated exp and the threshold proofs). Expected values come from the
 * host's own binary32/binary64 encodings, spec §2, or mpmath 1.3 (mp.dps = 50-60) through a
 * different route: enumerate every value of the format as a fraction, compare exp(x) with the
 * dyadic boundaries (smallest subnormal, its half, smallest normal, largest finite, ...). Never from
 * the functions under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abl/kernel/verify.h"

static abl_format fmt(const char *name)
{
    abl_format f;
    if (abl_format_lookup(name, &f) != ABL_OK)
        fail_msg("format '%s' not found", name);
    return f;
}

/* The decoded value of an encoding as a double (every format here fits a double exactly). */
static double decoded(const abl_format *f, uint64_t bits, int *finite)
{
    mpfr_t x;
    mpfr_init2(x, 64);
    assert_int_equal(abl_verify_decode(f, bits, x, finite), ABL_OK);
    double d = *finite ? mpfr_get_d(x, MPFR_RNDN) : NAN;
    mpfr_clear(x);
    return d;
}

/* bf16 is the top half of binary32: every encoding against the host's float. */
static void test_decode_bf16_exhaustive(void **state)
{
    (void)state;
    abl_format f = fmt("bf16");
    for (uint32_t b = 0; b < 65536; b++) {
        uint32_t u = b << 16;
        float want;
        memcpy(&want, &u, sizeof want);
        int finite;
        double got = decoded(&f, b, &finite);
        if (finite != (isfinite(want) != 0))
            fail_msg("bf16 0x%04x: finite %d", (unsigned)b, finite);
        if (finite && (got != (double)want || !signbit(got) != !signbit(want)))
            fail_msg("bf16 0x%04x: %.17g want %.9g", (unsigned)b, got, (double)want);
    }
}

static void test_decode_fp32_fp64_samples(void **state)
{
    (void)state;
    abl_format f32 = fmt("fp32"), f64 = fmt("fp64");
    static const uint32_t b32[] = {0x00000001u, 0x007fffffu, 0x00800000u, 0x3f800000u, 0x7f7fffffu,
                                   0xc2cff1b5u, 0x80000000u, 0xff7fffffu};
    for (size_t i = 0; i < sizeof b32 / sizeof b32[0]; i++) {
        float want;
        memcpy(&want, &b32[i], sizeof want);
        int finite;
        double got = decoded(&f32, b32[i], &finite);
        assert_true(finite);
        assert_true(got == (double)want && !signbit(got) == !signbit(want));
    }
    static const uint64_t b64[] = {0x0000000000000001u, 0x000fffffffffffffu, 0x0010000000000000u,
                                   0x7fefffffffffffffu, 0xc0874910d52d3052u, 0x3ff0000000000001u};
    for (size_t i = 0; i < sizeof b64 / sizeof b64[0]; i++) {
        double want;
        memcpy(&want, &b64[i], sizeof want);
        int finite;
        double got = decoded(&f64, b64[i], &finite);
        assert_true(finite);
        assert_true(got == want);
    }
    int finite = 1;
    decoded(&f32, 0x7f800000u, &finite);   /* +Inf */
    assert_false(finite);
    decoded(&f64, 0xfff8000000000000u, &finite);   /* NaN */
    assert_false(finite);
}

/* spec §2 max finite column and the special encodings of the fn/fnuz/MX formats. */
static void test_decode_special_formats(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint64_t bits;
        int finite;
        double value;
    } cases[] = {
        {"fp16", 0x7bff, 1, 65504.0},        {"fp16", 0x7c00, 0, 0},        {"fp16", 0x0001, 1, 0x1p-24},
        {"bf16", 0x7f7f, 1, 0x1.FEp127},     {"fp8-e5m2", 0x7b, 1, 57344.0}, {"fp8-e5m2", 0x7c, 0, 0},
        {"fp8-e4m3fn", 0x7e, 1, 448.0},      {"fp8-e4m3fn", 0x7f, 0, 0},    {"fp8-e4m3fn", 0xff, 0, 0},
        {"fp8-e4m3fn", 0x78, 1, 256.0},      {"fp8-e4m3fn", 0x80, 1, -0.0}, {"fp8-e4m3fn", 0x01, 1, 0x1p-9},
        {"fp8-e4m3fnuz", 0x7f, 1, 240.0},    {"fp8-e4m3fnuz", 0x80, 0, 0},  {"fp8-e4m3fnuz", 0x01, 1, 0x1p-10},
        {"fp8-e5m2fnuz", 0x7f, 1, 57344.0},  {"fp8-e5m2fnuz", 0x80, 0, 0},  {"fp8-e5m2fnuz", 0x01, 1, 0x1p-17},
        {"fp6-e2m3fn", 0x1f, 1, 7.5},        {"fp6-e2m3fn", 0x3f, 1, -7.5}, {"fp6-e2m3fn", 0x01, 1, 0.125},
        {"fp6-e3m2fn", 0x1f, 1, 28.0},       {"fp6-e3m2fn", 0x01, 1, 0.0625},
        {"fp4-e2m1fn", 0x7, 1, 6.0},         {"fp4-e2m1fn", 0x1, 1, 0.5},   {"fp4-e2m1fn", 0xf, 1, -6.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        abl_format f = fmt(cases[i].name);
        int finite;
        double got = decoded(&f, cases[i].bits, &finite);
        if (finite != cases[i].finite || (finite && (got != cases[i].value || !signbit(got) != !signbit(cases[i].value))))
            fail_msg("%s 0x%llx: finite %d value %g", cases[i].name, (unsigned long long)cases[i].bits, finite, got);
    }
    abl_format f = fmt("fp4-e2m1fn");
    mpfr_t x;
    mpfr_init2(x, 8);
    int finite;
    assert_int_equal(abl_verify_decode(&f, 0x10, x, &finite), ABL_ERR_INVALID_ARGUMENT);  /* 5 bits */
    mpfr_clear(x);
}

/* y = abl_verify_exp(x) in format name with rounding rnd; checks class and value v * 2^e. */
static void check_exp(const char *name, const char *x_text, mpfr_rnd_t rnd, abl_exp_class want_cls, long v, long e)
{
    abl_format f = fmt(name);
    mpfr_t x, y;
    mpfr_init2(x, 64);
    mpfr_init2(y, f.precision);
    mpfr_set_str(x, x_text, 10, MPFR_RNDN);
    abl_exp_class c;
    assert_int_equal(abl_verify_exp(y, &f, x, rnd, &c), ABL_OK);
    if (c != want_cls)
        fail_msg("%s exp(%s) rnd %d: class %s want %s", name, x_text, (int)rnd, abl_exp_class_name(c),
                 abl_exp_class_name(want_cls));
    if (c == ABL_EXP_OVERFLOW) {
        assert_true(mpfr_inf_p(y));
    } else if (mpfr_cmp_si_2exp(y, v, e) != 0) {
        mpfr_fprintf(stderr, "got %Ra\n", y);
        fail_msg("%s exp(%s) rnd %d: want %ld*2^%ld", name, x_text, (int)rnd, v, e);
    }
    mpfr_clear(x);
    mpfr_clear(y);
}

static void test_emulated_exp(void **state)
{
    (void)state;
    /* e as binary32 is 0x402df854 = 11401300 * 2^-22. */
    check_exp("fp32", "1", MPFR_RNDN, ABL_EXP_NORMAL, 11401300, -22);
    /* mpmath: exp(-100) / 2^-149 = 26.547... */
    check_exp("fp32", "-100", MPFR_RNDN, ABL_EXP_SUBNORMAL, 27, -149);
    check_exp("fp32", "-100", MPFR_RNDZ, ABL_EXP_SUBNORMAL, 26, -149);
    check_exp("fp32", "-100", MPFR_RNDU, ABL_EXP_SUBNORMAL, 27, -149);
    /* exp(-92.5) / 2^-133 = 0.7324...: nearest is the smallest bf16 subnormal, toward zero 0. */
    check_exp("bf16", "-92.5", MPFR_RNDN, ABL_EXP_SUBNORMAL, 1, -133);
    check_exp("bf16", "-92.5", MPFR_RNDZ, ABL_EXP_ZERO, 0, 0);
    /* exp(88.6) / 2^127 = 1.76881...; bf16 spacing 2^-7 there: 226 * 2^-7. */
    check_exp("bf16", "88.6", MPFR_RNDN, ABL_EXP_NORMAL, 226, 120);
    /* exp(-10) / 2^-24 = 761.68... */
    check_exp("fp16", "-10", MPFR_RNDN, ABL_EXP_SUBNORMAL, 762, -24);
    /* e4m3fn: ln 464 = 6.13988455...; exp(6.1398) = 463.96 -> 448, exp(6.1399) = 464.007 -> past. */
    check_exp("fp8-e4m3fn", "6.1398", MPFR_RNDN, ABL_EXP_NORMAL, 448, 0);
    check_exp("fp8-e4m3fn", "6.1399", MPFR_RNDN, ABL_EXP_OVERFLOW, 0, 0);
    /* Toward zero saturates at 448 (not the NaN pattern 480); upward overflows just past 448. */
    check_exp("fp8-e4m3fn", "7", MPFR_RNDZ, ABL_EXP_NORMAL, 448, 0);
    check_exp("fp8-e4m3fn", "6.11", MPFR_RNDU, ABL_EXP_OVERFLOW, 0, 0);
    /* fp6-e2m3fn (max 7.5, ulp 0.5): exp(2.03) = 7.614 -> 7.5; exp(2.1) = 8.166 -> past 7.75. */
    check_exp("fp6-e2m3fn", "2.03", MPFR_RNDN, ABL_EXP_NORMAL, 15, -1);
    check_exp("fp6-e2m3fn", "2.1", MPFR_RNDN, ABL_EXP_OVERFLOW, 0, 0);
    /* Huge arguments, beyond even MPFR's widest range. */
    check_exp("bf16", "-3e38", MPFR_RNDN, ABL_EXP_ZERO, 0, 0);
    check_exp("bf16", "3e38", MPFR_RNDN, ABL_EXP_OVERFLOW, 0, 0);
    check_exp("fp32", "3e38", MPFR_RNDZ, ABL_EXP_NORMAL, 16777215, 104);
}

/* The caller's exponent range and flags survive. */
static void test_exp_keeps_caller_state(void **state)
{
    (void)state;
    abl_format f = fmt("fp16");
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(-100);
    mpfr_set_emax(100);
    mpfr_clear_flags();
    mpfr_t x, y;
    mpfr_init2(x, 11);
    mpfr_init2(y, 11);
    mpfr_set_si(x, -30, MPFR_RNDN);
    abl_exp_class c;
    assert_int_equal(abl_verify_exp(y, &f, x, MPFR_RNDN, &c), ABL_OK);
    assert_int_equal(c, ABL_EXP_ZERO);
    assert_int_equal(mpfr_get_emin(), -100);
    assert_int_equal(mpfr_get_emax(), 100);
    assert_int_equal(mpfr_flags_save(), 0);
    mpfr_set_prec(y, 12);   /* wrong precision */
    assert_int_equal(abl_verify_exp(y, &f, x, MPFR_RNDN, &c), ABL_ERR_INVALID_ARGUMENT);
    mpfr_clear(x);
    mpfr_clear(y);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
}

typedef struct expected_bracket {
    uint64_t below, above;
} expected_bracket;

static void check_brackets(const char *name, abl_verify_method method, const expected_bracket want[ABL_TAU_KIND_COUNT])
{
    abl_format f = fmt(name);
    abl_verify_result r;
    assert_int_equal(abl_verify_format(&f, &r), ABL_OK);
    assert_int_equal(r.method, method);
    assert_true(r.agrees);
    for (int k = 0; k < ABL_TAU_KIND_COUNT; k++) {
        const abl_verify_bound *b = &r.bound[k];
        if (!b->has_below || !b->has_above || b->below_bits != want[k].below || b->above_bits != want[k].above ||
            !b->agrees)
            fail_msg("%s %s: got 0x%llx | 0x%llx (agrees %d), want 0x%llx | 0x%llx", name,
                     abl_tau_kind_name((abl_tau_kind)k), (unsigned long long)b->below_bits,
                     (unsigned long long)b->above_bits, b->agrees, (unsigned long long)want[k].below,
                     (unsigned long long)want[k].above);
    }
}

/*
 * bf16 (p = 8): between 64 and 128 the spacing is 2^(6-7) = 0.5, so each boundary falls between
 * two halves. subnormal: -133 ln2 = -92.18857..., RZ gives 0 below: -92.5 (0xc2b9) | -92 (0xc2b8).
 * rn-zero: -134 ln2 = -92.88172...: -93 (0xc2ba) | -92.5. ftz: -126 ln2 = -87.33654...:
 * -87.5 (0xc2af) | -87 (0xc2ae). max: ln(0x1.FEp127) = 88.71892...; rn-overflow:
 * ln(0x1.FFp127) = 88.72088...: both 88.5 (0x42b1) | 89 (0x42b2). Bits = top half of the binary32
 * pattern (e.g. -93.0f = 0xc2ba0000). The mpmath enumeration of every bf16 gives the same.
 */
static void test_bf16_brackets(void **state)
{
    (void)state;
    static const expected_bracket want[ABL_TAU_KIND_COUNT] = {
        {0xc2b9, 0xc2b8}, {0xc2ba, 0xc2b9}, {0xc2af, 0xc2ae}, {0x42b1, 0x42b2}, {0x42b1, 0x42b2}};
    check_brackets("bf16", ABL_VERIFY_EXHAUSTIVE, want);
}

/*
 * fp16 (p = 11), from the mpmath enumeration: spacing 2^-6 in [16, 32), 2^-7 in [8, 16).
 * subnormal -24 ln2 = -16.63553: -16.640625 (0xcc29) | -16.625 (0xcc28); rn-zero -25 ln2 =
 * -17.32868: -17.34375 (0xcc56) | -17.328125 (0xcc55); ftz -14 ln2 = -9.70406: -9.7109375 (0xc8db)
 * | -9.703125 (0xc8da); max ln 65504 = 11.08987 and rn-overflow ln 65520 = 11.09011: 11.0859375
 * (0x498b) | 11.09375 (0x498c).
 */
static void test_fp16_brackets(void **state)
{
    (void)state;
    static const expected_bracket want[ABL_TAU_KIND_COUNT] = {
        {0xcc29, 0xcc28}, {0xcc56, 0xcc55}, {0xc8db, 0xc8da}, {0x498b, 0x498c}, {0x498b, 0x498c}};
    check_brackets("fp16", ABL_VERIFY_EXHAUSTIVE, want);
}

/*
 * fp32 (p = 24), bisection. mpmath: the binary32 neighbours of each tau, spacing 2^-17 in [64, 128):
 * subnormal -149 ln2 = -103.278929903: -103.2789306640625 (0xc2ce8ed0) | -103.27892303466796875
 * (0xc2ce8ecf); rn-zero -150 ln2 = -103.972077084: -103.97208404541015625 (0xc2cff1b5) |
 * -103.972076416015625 (0xc2cff1b4); ftz -126 ln2: -87.3365478515625 (0xc2aeac50) |
 * -87.33654022216796875 (0xc2aeac4f); max ln((2^24-1) 2^104) = 88.7228390521 and rn-overflow
 * ln((2^25-1) 2^103) = 88.7228390819: 88.72283172607421875 (0x42b17217) | 88.72283935546875
 * (0x42b17218), the familiar expf overflow bound.
 */
static void test_fp32_brackets(void **state)
{
    (void)state;
    static const expected_bracket want[ABL_TAU_KIND_COUNT] = {{0xc2ce8ed0, 0xc2ce8ecf},
                                                              {0xc2cff1b5, 0xc2cff1b4},
                                                              {0xc2aeac50, 0xc2aeac4f},
                                                              {0x42b17217, 0x42b17218},
                                                              {0x42b17217, 0x42b17218}};
    check_brackets("fp32", ABL_VERIFY_BISECTION, want);
}

/*
 * The 12 formats of spec §2 all verify; the exhaustive ones examine every finite encoding:
 * 2^16 - 2*128 (bf16: exponent 255 is Inf/NaN), 2^16 - 2*1024 (fp16), 256 - 8 (e5m2), 256 - 2
 * (e4m3fn: S.1111.111 is NaN), 256 - 1 (fnuz: 0x80 is NaN), 64, 64, 16.
 */
static void test_every_builtin_verifies(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        abl_verify_method method;
        uint64_t inputs;
    } want[] = {
        {"fp64", ABL_VERIFY_BISECTION, 0},        {"fp32", ABL_VERIFY_BISECTION, 0},
        {"tf32", ABL_VERIFY_BISECTION, 0},        {"bf16", ABL_VERIFY_EXHAUSTIVE, 65280},
        {"fp16", ABL_VERIFY_EXHAUSTIVE, 63488},   {"fp8-e5m2", ABL_VERIFY_EXHAUSTIVE, 248},
        {"fp8-e4m3fn", ABL_VERIFY_EXHAUSTIVE, 254}, {"fp8-e4m3fnuz", ABL_VERIFY_EXHAUSTIVE, 255},
        {"fp8-e5m2fnuz", ABL_VERIFY_EXHAUSTIVE, 255}, {"fp6-e2m3fn", ABL_VERIFY_EXHAUSTIVE, 64},
        {"fp6-e3m2fn", ABL_VERIFY_EXHAUSTIVE, 64}, {"fp4-e2m1fn", ABL_VERIFY_EXHAUSTIVE, 16},
        /* IEEE 8-bit: 256 minus the 2 * 2^m Inf/NaN encodings; fnuz: 0x80 is NaN. */
        {"float8_e4m3", ABL_VERIFY_EXHAUSTIVE, 240}, {"fp8-e3m4", ABL_VERIFY_EXHAUSTIVE, 224},
        {"fp8-e4m3b11fnuz", ABL_VERIFY_EXHAUSTIVE, 255},
    };
    assert_int_equal(abl_format_count(), sizeof want / sizeof want[0]);
    for (size_t i = 0; i < abl_format_count(); i++) {
        const abl_format *f = abl_format_at(i);
        abl_verify_result r;
        assert_string_equal(f->name, want[i].name);
        assert_int_equal(abl_verify_format(f, &r), ABL_OK);
        if (!r.agrees)
            fail_msg("%s does not verify", f->name);
        assert_int_equal(r.method, want[i].method);
        assert_int_equal(r.inputs, want[i].inputs);
        for (int k = 0; k < ABL_TAU_KIND_COUNT; k++)
            assert_true(r.bound[k].has_below && r.bound[k].has_above);
    }
}

/*
 * RN class counts over every input, from the mpmath enumeration (exp(x) <= 2^(emin-p) -> zero,
 * < 2^emin - 2^(emin-p) -> subnormal, < max + ulp/2 -> normal, else overflow).
 */
static void test_class_counts(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint64_t c[4];
    } want[] = {
        {"bf16", {15558, 11, 34145, 15566}},
        {"fp16", {12202, 891, 37479, 12916}},
        {"fp8-e4m3fn", {49, 5, 150, 50}},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        abl_format f = fmt(want[i].name);
        abl_verify_result r;
        assert_int_equal(abl_verify_format(&f, &r), ABL_OK);
        for (int c = 0; c < 4; c++)
            assert_int_equal(r.class_count[c], want[i].c[c]);
        assert_int_equal(r.ftz_zero_count, want[i].c[0] + want[i].c[1]);
    }
}

/*
 * FTZ applied after RN rounding: fp6-e3m2fn (p = 3, emin = -2) flushes iff
 * x < ln(2^-2 - 2^-5) = ln(0.21875) = -1.51983, so x = -1.5 < ftz tau = -2 ln2 = -1.38629 keeps
 * exp(-1.5) = 0.22313 -> 0.25: last flushed -1.75 (0x2f), first kept -1.5 (0x2e), where the ftz row
 * has -1.5 (0x2e) | -1.25 (0x2d). bf16 has no input in that window (same bracket as ftz).
 */
static void test_ftz_after_rounding(void **state)
{
    (void)state;
    abl_format f = fmt("fp6-e3m2fn");
    abl_verify_result r;
    assert_int_equal(abl_verify_format(&f, &r), ABL_OK);
    assert_false(r.ftz_after_rounding_same);
    assert_true(r.ftz_after_rounding.agrees);
    assert_int_equal(r.ftz_after_rounding.below_bits, 0x2f);
    assert_int_equal(r.ftz_after_rounding.above_bits, 0x2e);
    assert_int_equal(r.bound[ABL_TAU_FTZ].below_bits, 0x2e);
    assert_int_equal(r.bound[ABL_TAU_FTZ].above_bits, 0x2d);
    f = fmt("bf16");
    assert_int_equal(abl_verify_format(&f, &r), ABL_OK);
    assert_true(r.ftz_after_rounding_same);
}

static int holds_with(const abl_format *f, const abl_verify_bound *b, const char *tau_text)
{
    mpfr_t t;
    mpfr_init2(t, 200);
    mpfr_set_str(t, tau_text, 10, MPFR_RNDN);
    int h = abl_verify_bound_holds(f, b, t);
    mpfr_clear(t);
    return h;
}

/* A deliberately wrong tau is caught by the same check that accepts the closed form. */
static void test_wrong_tau_caught(void **state)
{
    (void)state;
    abl_format f = fmt("bf16");
    abl_verify_result r;
    assert_int_equal(abl_verify_format(&f, &r), ABL_OK);
    const abl_verify_bound *rn = &r.bound[ABL_TAU_RN_ZERO];
    /* -134 ln2 from MPFR's own constant, not from the threshold engine. */
    mpfr_t t;
    mpfr_init2(t, 200);
    mpfr_const_log2(t, MPFR_RNDN);
    mpfr_mul_si(t, t, -134, MPFR_RNDN);
    assert_true(abl_verify_bound_holds(&f, rn, t));
    mpfr_clear(t);
    /* rn-zero holds for any tau in [-93, -92.5): its x <= tau side is inclusive. */
    assert_true(holds_with(&f, rn, "-93"));
    assert_true(holds_with(&f, rn, "-92.51"));
    assert_false(holds_with(&f, rn, "-92.5"));
    assert_false(holds_with(&f, rn, "-93.01"));
    /* The paper's tau_u (-133 ln2 = -92.1886) used as the zero threshold of RN: caught. */
    assert_false(holds_with(&f, rn, "-92.1885750144727261524918721539374835540415"));
    /* And the ftz value -87.3365 in place of rn-zero, as the paper's distance tables do. */
    assert_false(holds_with(&f, rn, "-87.3365447505531089873712529156775648621843"));
    /* The strict subnormal claim excludes its lower input: tau = -92.5 fails, -92 holds. */
    const abl_verify_bound *sub = &r.bound[ABL_TAU_SUBNORMAL];
    assert_false(holds_with(&f, sub, "-92.5"));
    assert_true(holds_with(&f, sub, "-92"));
    /* max: 88.5 <= tau < 89. */
    const abl_verify_bound *mx = &r.bound[ABL_TAU_MAX];
    assert_true(holds_with(&f, mx, "88.5"));
    assert_false(holds_with(&f, mx, "89"));
    assert_false(holds_with(&f, mx, "88.4"));

    /* A bound whose bracket is shifted by one input is caught against the right tau. */
    abl_verify_bound shifted = *rn;
    shifted.below_bits = 0xc2b9;   /* -92.5 */
    shifted.above_bits = 0xc2b8;   /* -92 */
    assert_false(holds_with(&f, &shifted, "-92.8817221950"));
}

static void check_text(const char *name, uint64_t bits, const char *want)
{
    abl_format f = fmt(name);
    char *text = NULL;
    assert_int_equal(abl_verify_value_text(&f, bits, &text), ABL_OK);
    assert_string_equal(text, want);
    free(text);
}

/* Exact decimals: Python's decimal.Decimal(float) of the same binary32/binary64 values. */
static void test_value_text(void **state)
{
    (void)state;
    check_text("bf16", 0xc2ba, "-93");
    check_text("fp32", 0xc2cff1b5, "-103.97208404541015625");
    check_text("fp32", 0x42b17218, "88.72283935546875");
    check_text("fp16", 0x0001, "0.000000059604644775390625");
    check_text("fp6-e2m3fn", 0x21, "-0.125");
    check_text("fp4-e2m1fn", 0x0, "0");
    check_text("fp64", 0xc0874910d52d3052, "-745.133219101941222106688655912876129150390625");
    abl_format f = fmt("fp16");
    char *text = (char *)"untouched";
    assert_int_equal(abl_verify_value_text(&f, 0x7c00, &text), ABL_ERR_INVALID_ARGUMENT);
    assert_null(text);
}

/* Formats verify cannot encode, or whose fields contradict their encoding. */
static void test_unsupported_formats(void **state)
{
    (void)state;
    abl_verify_result r;
    abl_format f = fmt("e20m44");   /* 65 bits */
    assert_int_equal(abl_verify_format(&f, &r), ABL_ERR_UNSUPPORTED);
    f = fmt("bf16");
    f.emax = 128;   /* not what an 8-bit exponent field with Inf encodes */
    assert_int_equal(abl_verify_format(&f, &r), ABL_ERR_UNSUPPORTED);
    f = fmt("fp8-e4m3fn");
    f.max_deficit = 0;   /* 480 would be the NaN pattern */
    assert_int_equal(abl_verify_format(&f, &r), ABL_ERR_UNSUPPORTED);
    assert_int_equal(abl_verify_format(NULL, &r), ABL_ERR_INVALID_ARGUMENT);
}

/* Custom IEEE-like formats: exhaustive at 16 bits, bisection at 64. */
static void test_custom_formats(void **state)
{
    (void)state;
    abl_verify_result r;
    abl_format f = fmt("e6m9");
    assert_int_equal(abl_verify_format(&f, &r), ABL_OK);
    assert_int_equal(r.method, ABL_VERIFY_EXHAUSTIVE);
    /* 2^16 encodings minus 2 * 2^9 with the all-ones exponent. */
    assert_int_equal(r.inputs, 65536 - 1024);
    assert_true(r.agrees);
    f = fmt("e20m43");
    assert_int_equal(abl_verify_format(&f, &r), ABL_OK);
    assert_int_equal(r.method, ABL_VERIFY_BISECTION);
    assert_true(r.agrees);
}

/* RNE exp(x) in binary32 with gradual underflow, computed here with MPFR's own binary32 emulation
 * recipe (MPFR manual, "mpfr_subnormalize": exponent range -148..128, round, subnormalize). */
static float cr_expf(float v)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t x, y;
    mpfr_init2(x, 24);
    mpfr_init2(y, 24);
    mpfr_set_emin(-148);
    mpfr_set_emax(128);
    mpfr_set_flt(x, v, MPFR_RNDN);
    int inex = mpfr_exp(y, x, MPFR_RNDN);
    mpfr_subnormalize(y, inex, MPFR_RNDN);
    float r = mpfr_get_flt(y, MPFR_RNDN);   /* exact: y is a binary32 value, 0 or +Inf */
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_clear(x);
    mpfr_clear(y);
    return r;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The scan's counts recounted here: every float of [lo, hi] by its bit pattern, the host's expf and
 * exp2f(x * fp32(log2 e)) (verify.h's "kernels' form") against cr_expf above. The host functions are
 * the host's business; what is checked is that the scan counts, classifies and brackets them right. */
typedef struct libm_count {
    uint64_t inputs, expf_differs, exp2f_differs, expf_tiny, exp2f_tiny;
    float expf_first[4], exp2f_first[4];
    unsigned expf_nfirst, exp2f_nfirst;
    float last_zero[3], first_nonzero[3], last_finite[3], first_inf[3];
    int zero_seen[3], nonzero_seen[3], finite_seen[3], inf_seen[3];
} libm_count;

static void count_libm(float lo, float hi, libm_count *c)
{
    memset(c, 0, sizeof *c);
    volatile float log2e = (float)1.4426950408889634074;   /* RN32(log2 e) = 0x1.715476p+0 */
    assert_true(bits_of(log2e) == 0x3fb8aa3bu);
    for (float v = lo;; v = nextafterf(v, INFINITY)) {
        float r[3] = {cr_expf(v), expf(v), exp2f(v * log2e)};
        int tiny = fabsf(r[0]) < 0x1p-126f;   /* subnormal or zero */
        c->inputs++;
        if (bits_of(r[1]) != bits_of(r[0])) {
            if (c->expf_nfirst < 4)
                c->expf_first[c->expf_nfirst++] = v;
            c->expf_differs++;
            c->expf_tiny += tiny;
        }
        if (bits_of(r[2]) != bits_of(r[0])) {
            if (c->exp2f_nfirst < 4)
                c->exp2f_first[c->exp2f_nfirst++] = v;
            c->exp2f_differs++;
            c->exp2f_tiny += tiny;
        }
        for (int k = 0; k < 3; k++) {
            /* increasing scan: the last zero is the largest, the first non-zero the smallest */
            if (r[k] == 0.0f) {
                c->last_zero[k] = v;
                c->zero_seen[k] = 1;
            } else if (!c->nonzero_seen[k]) {
                c->first_nonzero[k] = v;
                c->nonzero_seen[k] = 1;
            }
            if (isinf(r[k])) {
                if (!c->inf_seen[k])
                    c->first_inf[k] = v;
                c->inf_seen[k] = 1;
            } else {
                c->last_finite[k] = v;
                c->finite_seen[k] = 1;
            }
        }
        if (v >= hi)
            break;
    }
}

static void check_scan(float lo, float hi, const abl_verify_libm *l)
{
    libm_count c;
    count_libm(lo, hi, &c);
    assert_int_equal(l->inputs, c.inputs);
    assert_int_equal(l->expf_differs, c.expf_differs);
    assert_int_equal(l->exp2f_differs, c.exp2f_differs);
    assert_int_equal(l->expf_differs_tiny, c.expf_tiny);
    assert_int_equal(l->exp2f_differs_tiny, c.exp2f_tiny);
    assert_int_equal(l->expf_nfirst, c.expf_nfirst);
    assert_int_equal(l->exp2f_nfirst, c.exp2f_nfirst);
    for (unsigned k = 0; k < c.expf_nfirst; k++)
        assert_int_equal(bits_of(l->expf_first[k]), bits_of(c.expf_first[k]));
    for (unsigned k = 0; k < c.exp2f_nfirst; k++)
        assert_int_equal(bits_of(l->exp2f_first[k]), bits_of(c.exp2f_first[k]));
    for (int k = 0; k < 3; k++) {
        assert_int_equal(l->have_zero_bracket[k], c.zero_seen[k] | c.nonzero_seen[k] << 1);
        assert_int_equal(l->have_inf_bracket[k], c.finite_seen[k] | c.inf_seen[k] << 1);
        if (c.zero_seen[k])
            assert_int_equal(bits_of(l->zero_last[k]), bits_of(c.last_zero[k]));
        if (c.nonzero_seen[k])
            assert_int_equal(bits_of(l->nonzero_first[k]), bits_of(c.first_nonzero[k]));
        if (c.finite_seen[k])
            assert_int_equal(bits_of(l->finite_last[k]), bits_of(c.last_finite[k]));
        if (c.inf_seen[k])
            assert_int_equal(bits_of(l->inf_first[k]), bits_of(c.first_inf[k]));
    }
}

/*
 * The libm scan. Its reference side: every float in [-103.98, -103.96] (bits 0xc2cff5c3 down to
 * 0xc2cfeb85, i.e. 0xa3f inputs) brackets the RN zero boundary at the fp32 rn-zero inputs above;
 * every float in [88.72, 88.73] brackets the overflow boundary (rn-overflow 88.7228390819, spec §3:
 * 0x42b17217 = 88.72283172607421875 is finite, 0x42b17218 = 88.72283935546875 overflows). Its host
 * side (how many expf/exp2f results differ, where, their brackets) against the recount above.
 */
static void test_libm_scan(void **state)
{
    (void)state;
    abl_verify_libm l;
    abl_verify_libm_init(&l);
    assert_int_equal(abl_verify_libm_scan(-103.98f, -103.96f, &l), ABL_OK);
    assert_int_equal(l.inputs, 0xc2cff5c3u - 0xc2cfeb85u + 1);
    assert_int_equal(l.have_zero_bracket[0], 3);
    assert_int_equal(bits_of(l.zero_last[0]), 0xc2cff1b5u);
    assert_int_equal(bits_of(l.nonzero_first[0]), 0xc2cff1b4u);
    check_scan(-103.98f, -103.96f, &l);

    abl_verify_libm_init(&l);
    assert_int_equal(abl_verify_libm_scan(88.72f, 88.73f, &l), ABL_OK);
    assert_int_equal(l.have_inf_bracket[0], 3);
    assert_int_equal(bits_of(l.finite_last[0]), 0x42b17217u);
    assert_int_equal(bits_of(l.inf_first[0]), 0x42b17218u);
    check_scan(88.72f, 88.73f, &l);

    assert_int_equal(abl_verify_libm_scan(1.0f, 0.0f, &l), ABL_ERR_INVALID_ARGUMENT);
}

static void test_report(void **state)
{
    (void)state;
    abl_format f[2] = {fmt("bf16"), fmt("fp6-e3m2fn")};
    abl_report *r = NULL;
    int agree = 0;
    assert_int_equal(abl_verify_report(f, 2, 0, &r, &agree), ABL_OK);
    assert_true(agree);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    assert_int_equal(abl_report_write(r, ABL_OUT_JSON, mem), ABL_OK);
    fclose(mem);
    assert_non_null(strstr(buf, "\"below\": {\"x\": -93.0, \"bits\": \"0xc2ba\"}"));
    assert_non_null(strstr(buf, "\"agrees\": true"));
    assert_null(strstr(buf, "false"));
    free(buf);
    abl_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_bf16_exhaustive),
        cmocka_unit_test(test_decode_fp32_fp64_samples),
        cmocka_unit_test(test_decode_special_formats),
        cmocka_unit_test(test_emulated_exp),
        cmocka_unit_test(test_exp_keeps_caller_state),
        cmocka_unit_test(test_bf16_brackets),
        cmocka_unit_test(test_fp16_brackets),
        cmocka_unit_test(test_fp32_brackets),
        cmocka_unit_test(test_every_builtin_verifies),
        cmocka_unit_test(test_class_counts),
        cmocka_unit_test(test_ftz_after_rounding),
        cmocka_unit_test(test_wrong_tau_caught),
        cmocka_unit_test(test_value_text),
        cmocka_unit_test(test_unsupported_formats),
        cmocka_unit_test(test_custom_formats),
        cmocka_unit_test(test_libm_scan),
        cmocka_unit_test(test_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
