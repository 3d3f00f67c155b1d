/*
 * Unit tests for the threshold engine. Expected values come from spec §3, the paper's Table 4,
 * mpmath literals (pasted, with how they were computed), or MPFR at much higher precision
 * through a different formula (k * const_log2, log1p) -- never from the functions under test.
 */
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "abl/core/threshold.h"

static const abl_format *fmt(const char *name)
{
    static abl_format slots[8];
    static unsigned next;
    abl_format *f = &slots[next++ % 8];
    if (abl_format_lookup(name, f) != ABL_OK)
        fail_msg("format '%s' not found", name);
    return f;
}

static void check_tau_text(const char *name, abl_tau_kind kind, int decimals, const char *want)
{
    char *buf = NULL;
    abl_status st = abl_threshold_string(fmt(name), kind, decimals, &buf);
    if (st != ABL_OK || strcmp(buf, want) != 0)
        fail_msg("%s %s %d: status %d got '%s' want '%s'", name, abl_tau_kind_name(kind), decimals,
                 (int)st, st == ABL_OK ? buf : "", want);
    free(buf);
}

/*
 * spec §3 table, 10 decimals. One cell deviates from SPEC: fp32 subnormal is printed there as
 * -103.2789299030, but -149*log(2) = -103.27892990343185... (mpmath, mp.dps = 40), so the
 * correctly rounded value is -103.2789299034 (the paper's 4-decimal -103.2789 agrees with both).
 */
static void test_spec_table(void **state)
{
    static const char *const names[] = {"bf16", "fp32", "fp16"};
    static const char *const want[3][ABL_TAU_KIND_COUNT] = {
        {"-92.1885750145", "-92.8817221950", "-87.3365447506", "88.7189252124", "88.7208840768"},
        {"-103.2789299034", "-103.9720770840", "-87.3365447506", "88.7228390521", "88.7228390819"},
        {"-16.6355323334", "-17.3286795140", "-9.7040605278", "11.0898664885", "11.0901107185"},
    };
    int i, k;
    (void)state;
    for (i = 0; i < 3; i++)
        for (k = 0; k < ABL_TAU_KIND_COUNT; k++)
            check_tau_text(names[i], (abl_tau_kind)k, 10, want[i][k]);
}

/* The paper's Table 4, 4 decimals. */
static void test_paper_table4(void **state)
{
    (void)state;
    check_tau_text("bf16", ABL_TAU_SUBNORMAL, 4, "-92.1886");
    check_tau_text("fp32", ABL_TAU_SUBNORMAL, 4, "-103.2789");
    check_tau_text("bf16", ABL_TAU_FTZ, 4, "-87.3365");
    check_tau_text("fp32", ABL_TAU_FTZ, 4, "-87.3365");
    check_tau_text("bf16", ABL_TAU_MAX, 4, "88.7189");
    check_tau_text("fp32", ABL_TAU_MAX, 4, "88.7228");
    /* From the SPEC's -92.1885750145: a width that needs a second Ziv round in the engine. */
    check_tau_text("bf16", ABL_TAU_SUBNORMAL, 5, "-92.18858");
}

/*
 * 40 decimals, from mpmath 1.3 (mp.dps = 1200): sign(x) * floor(|x| * 10^40 + 1/2) with
 * x = k*log(2) for the log kinds and log(<exact integer>) for the others.
 */
static void test_mpmath_40_digits(void **state)
{
    (void)state;
    /* -133*log(2) */
    check_tau_text("bf16", ABL_TAU_SUBNORMAL, 40, "-92.1885750144727261524918721539374835540415");
    /* -150*log(2) */
    check_tau_text("fp32", ABL_TAU_RN_ZERO, 40, "-103.9720770839917964125848182187264852113250");
    /* log(65520) */
    check_tau_text("fp16", ABL_TAU_RN_OVERFLOW, 40, "11.0901107185269510362190184779124436555649");
    /* -1074*log(2) */
    check_tau_text("fp64", ABL_TAU_SUBNORMAL, 40, "-744.4400719213812623141072984460816341130871");
    /* log((2**53-1) * 2**971) */
    check_tau_text("fp64", ABL_TAU_MAX, 40, "709.7827128933839967322233899106571455039731");
    /* log(2**128 - 2**103) */
    check_tau_text("fp32", ABL_TAU_RN_OVERFLOW, 40, "88.7228390818706767736211803733239200966851");
    /* log(448), log(464), log(6), log(7), 30 decimals */
    check_tau_text("e4m3fn", ABL_TAU_MAX, 30, "6.104793232414985161608745472192");
    check_tau_text("e4m3fn", ABL_TAU_RN_OVERFLOW, 30, "6.139884552226255264852200518195");
    check_tau_text("fp4", ABL_TAU_MAX, 30, "1.791759469228055000812477358381");
    check_tau_text("fp4", ABL_TAU_RN_OVERFLOW, 30, "1.945910149055313305105352743443");
}

/* 1000 decimals: head and tail of -149*log(2), same mpmath recipe as above. */
static void test_1000_decimals(void **state)
{
    char *buf = NULL;
    size_t n;
    (void)state;
    assert_int_equal(abl_threshold_string(fmt("fp32"), ABL_TAU_SUBNORMAL, 1000, &buf), ABL_OK);
    n = strlen(buf);
    assert_int_equal(n, 1005);
    assert_memory_equal(buf, "-103.2789299034318511031675860", 30);
    assert_string_equal(buf + n - 40, "8617593635956845739274039419569335766800");
    free(buf);
}

/* Zero threshold (ln 1) must be +0: "0.0000", never "-0.0000". */
static void test_zero_threshold(void **state)
{
    mpfr_t r;
    (void)state;
    check_tau_text("fp4-e2m1fn", ABL_TAU_FTZ, 4, "0.0000");
    check_tau_text("fp6-e2m3fn", ABL_TAU_FTZ, 4, "0.0000");
    check_tau_text("fp4-e2m1fn", ABL_TAU_FTZ, 0, "0");
    mpfr_init2(r, 53);
    assert_int_equal(abl_threshold_mpfr(r, fmt("fp4"), ABL_TAU_FTZ, MPFR_RNDD), ABL_OK);
    assert_true(mpfr_zero_p(r) && !mpfr_signbit(r));
    mpfr_clear(r);
    assert_true(abl_threshold_double(fmt("fp4"), ABL_TAU_FTZ) == 0.0);
    assert_false(signbit(abl_threshold_double(fmt("fp4"), ABL_TAU_FTZ)));
}

/* Independent reference at high precision: tau = E*ln2 + log1p(-c*2^-q), other formula than ln(x). */
static void reference(mpfr_t r, const abl_format *f, abl_tau_kind kind)
{
    mpfr_t l2, t;
    long p = f->precision;
    mpfr_init2(l2, mpfr_get_prec(r) + 64);
    mpfr_init2(t, mpfr_get_prec(r) + 64);
    mpfr_const_log2(l2, MPFR_RNDN);
    switch (kind) {
    case ABL_TAU_SUBNORMAL: mpfr_mul_si(r, l2, f->emin - p + 1, MPFR_RNDN); break;
    case ABL_TAU_RN_ZERO: mpfr_mul_si(r, l2, f->emin - p, MPFR_RNDN); break;
    case ABL_TAU_FTZ: mpfr_mul_si(r, l2, f->emin, MPFR_RNDN); break;
    default:
        /* max = 2^(emax+1) * (1 - (1+d) 2^-p); rn-overflow = 2^(emax+1) * (1 - (1+2d) 2^-(p+1)) */
        if (kind == ABL_TAU_MAX)
            mpfr_set_ui_2exp(t, 1 + f->max_deficit, -p, MPFR_RNDN);
        else
            mpfr_set_ui_2exp(t, 1 + 2 * f->max_deficit, -p - 1, MPFR_RNDN);
        mpfr_neg(t, t, MPFR_RNDN);
        mpfr_log1p(t, t, MPFR_RNDN);
        mpfr_mul_si(l2, l2, f->emax + 1, MPFR_RNDN);
        mpfr_add(r, l2, t, MPFR_RNDN);
        break;
    }
    mpfr_clear(l2);
    mpfr_clear(t);
}

static const char *const k_all[] = {
    "fp64", "fp32", "tf32", "bf16", "fp16", "fp8-e5m2", "fp8-e4m3fn", "fp8-e4m3fnuz",
    "fp8-e5m2fnuz", "fp6-e2m3fn", "fp6-e3m2fn", "fp4-e2m1fn", "e6m9", "e3m3", "e20m112",
};
#define N_ALL (sizeof k_all / sizeof k_all[0])

/*
 * Every format x kind x several widths against the 700-bit reference printed by MPFR.
 * e20m112's 19-bit integer part forces the engine's Ziv loop past its first precision.
 */
static void test_strings_vs_reference(void **state)
{
    static const int widths[] = {0, 1, 3, 4, 10, 17, 25, 60};
    size_t i;
    int k, w;
    mpfr_t ref;
    (void)state;
    mpfr_init2(ref, 700);
    for (i = 0; i < N_ALL; i++) {
        abl_format f;
        assert_int_equal(abl_format_lookup(k_all[i], &f), ABL_OK);
        for (k = 0; k < ABL_TAU_KIND_COUNT; k++) {
            reference(ref, &f, (abl_tau_kind)k);
            for (w = 0; w < (int)(sizeof widths / sizeof widths[0]); w++) {
                char want[200], *got = NULL;
                mpfr_snprintf(want, sizeof want, "%.*RNf", widths[w], ref);
                assert_int_equal(abl_threshold_string(&f, (abl_tau_kind)k, widths[w], &got), ABL_OK);
                if (strcmp(got, want) != 0)
                    fail_msg("%s %s %d: got %s want %s", f.name, abl_tau_kind_name((abl_tau_kind)k),
                             widths[w], got, want);
                free(got);
            }
        }
    }
    mpfr_clear(ref);
}

/* Directed roundings bracket tau one ulp apart; RNDN and the double pick the nearer one. */
static void test_rounding_direction(void **state)
{
    size_t i;
    int k;
    mpfr_t d, u, n, ref, dist_d, dist_u;
    (void)state;
    mpfr_inits2(53, d, u, n, (mpfr_ptr)0);
    mpfr_inits2(400, ref, dist_d, dist_u, (mpfr_ptr)0);
    for (i = 0; i < N_ALL; i++) {
        abl_format f;
        assert_int_equal(abl_format_lookup(k_all[i], &f), ABL_OK);
        for (k = 0; k < ABL_TAU_KIND_COUNT; k++) {
            abl_tau_kind kind = (abl_tau_kind)k;
            assert_int_equal(abl_threshold_mpfr(d, &f, kind, MPFR_RNDD), ABL_OK);
            assert_int_equal(abl_threshold_mpfr(u, &f, kind, MPFR_RNDU), ABL_OK);
            assert_int_equal(abl_threshold_mpfr(n, &f, kind, MPFR_RNDN), ABL_OK);
            reference(ref, &f, kind);
            if (mpfr_zero_p(ref)) {
                assert_true(mpfr_zero_p(d) && mpfr_zero_p(u) && mpfr_zero_p(n));
                continue;
            }
            assert_true(mpfr_less_p(d, u));
            assert_true(mpfr_lessequal_p(d, ref) && mpfr_lessequal_p(ref, u));
            mpfr_nextabove(d);
            assert_true(mpfr_equal_p(d, u));
            mpfr_nextbelow(d);
            mpfr_sub(dist_d, ref, d, MPFR_RNDN);
            mpfr_sub(dist_u, u, ref, MPFR_RNDN);
            assert_true(mpfr_equal_p(n, mpfr_less_p(dist_d, dist_u) ? d : u));
            assert_true(abl_threshold_double(&f, kind) == mpfr_get_d(n, MPFR_RNDN));
            /* and the binary64 nearest the 400-bit reference */
            assert_true(abl_threshold_double(&f, kind) == mpfr_get_d(ref, MPFR_RNDN));
        }
    }
    mpfr_clears(d, u, n, ref, dist_d, dist_u, (mpfr_ptr)0);
}

/* k literals: smallest subnormal 2^(emin-p+1) per the formats' specifications. */
static void test_log2_multiple(void **state)
{
    static const struct {
        const char *name;
        long sub, rnz, ftz;
    } table[] = {
        {"fp64", -1074, -1075, -1022}, {"fp32", -149, -150, -126}, {"tf32", -136, -137, -126},
        {"bf16", -133, -134, -126}, {"fp16", -24, -25, -14}, {"fp8-e5m2", -16, -17, -14},
        {"fp8-e4m3fn", -9, -10, -6}, {"fp8-e4m3fnuz", -10, -11, -7},
        {"fp8-e5m2fnuz", -17, -18, -15}, {"fp6-e2m3fn", -3, -4, 0}, {"fp6-e3m2fn", -4, -5, -2},
        {"fp4-e2m1fn", -1, -2, 0}, {"e6m9", -39, -40, -30},
    };
    size_t i;
    long k;
    (void)state;
    for (i = 0; i < sizeof table / sizeof table[0]; i++) {
        const abl_format *f = fmt(table[i].name);
        assert_int_equal(abl_threshold_log2_multiple(f, ABL_TAU_SUBNORMAL, &k), ABL_OK);
        assert_int_equal(k, table[i].sub);
        assert_int_equal(abl_threshold_log2_multiple(f, ABL_TAU_RN_ZERO, &k), ABL_OK);
        assert_int_equal(k, table[i].rnz);
        assert_int_equal(abl_threshold_log2_multiple(f, ABL_TAU_FTZ, &k), ABL_OK);
        assert_int_equal(k, table[i].ftz);
        assert_int_equal(abl_threshold_log2_multiple(f, ABL_TAU_MAX, &k), ABL_ERR_INVALID_ARGUMENT);
        assert_int_equal(abl_threshold_log2_multiple(f, ABL_TAU_RN_OVERFLOW, &k),
                         ABL_ERR_INVALID_ARGUMENT);
    }
    assert_int_equal(abl_threshold_log2_multiple(NULL, ABL_TAU_FTZ, &k), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_threshold_log2_multiple(fmt("bf16"), ABL_TAU_FTZ, NULL),
                     ABL_ERR_INVALID_ARGUMENT);
}

static void test_kind_names(void **state)
{
    static const char *const names[] = {"subnormal", "rn-zero", "ftz", "max", "rn-overflow"};
    int k;
    abl_tau_kind out;
    (void)state;
    for (k = 0; k < ABL_TAU_KIND_COUNT; k++) {
        assert_string_equal(abl_tau_kind_name((abl_tau_kind)k), names[k]);
        assert_int_equal(abl_tau_kind_parse(names[k], &out), ABL_OK);
        assert_int_equal(out, k);
    }
    assert_null(abl_tau_kind_name(ABL_TAU_KIND_COUNT));
    assert_string_equal(abl_tau_kind_paper_name(ABL_TAU_SUBNORMAL), "underflow");
    assert_string_equal(abl_tau_kind_paper_name(ABL_TAU_FTZ), "denorm");
    assert_string_equal(abl_tau_kind_paper_name(ABL_TAU_MAX), "overflow");
    assert_null(abl_tau_kind_paper_name(ABL_TAU_RN_ZERO));
    assert_null(abl_tau_kind_paper_name(ABL_TAU_RN_OVERFLOW));
    assert_string_equal(abl_tau_kind_paper_symbol(ABL_TAU_SUBNORMAL), "τu");
    assert_string_equal(abl_tau_kind_paper_symbol(ABL_TAU_FTZ), "τd");
    assert_string_equal(abl_tau_kind_paper_symbol(ABL_TAU_MAX), "τo");
    assert_null(abl_tau_kind_paper_symbol(ABL_TAU_RN_ZERO));
    assert_null(abl_tau_kind_paper_symbol(ABL_TAU_RN_OVERFLOW));
    assert_int_equal(abl_tau_kind_parse("RN-Zero", &out), ABL_OK);
    assert_int_equal(out, ABL_TAU_RN_ZERO);
    assert_int_equal(abl_tau_kind_parse("underflow", &out), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_tau_kind_parse("", &out), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_tau_kind_parse("ftz ", &out), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_tau_kind_parse(NULL, &out), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_tau_kind_parse("ftz", NULL), ABL_ERR_INVALID_ARGUMENT);
}

static void test_errors(void **state)
{
    char *buf = NULL;
    mpfr_t r;
    abl_format bad = *fmt("bf16");
    (void)state;
    mpfr_init2(r, 53);
    assert_int_equal(abl_threshold_string(NULL, ABL_TAU_FTZ, 4, &buf),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_threshold_string(fmt("bf16"), ABL_TAU_KIND_COUNT, 4, &buf),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_threshold_string(fmt("bf16"), (abl_tau_kind)-1, 4, &buf),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_threshold_string(fmt("bf16"), ABL_TAU_FTZ, -1, &buf),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_threshold_string(fmt("bf16"), ABL_TAU_FTZ, 1001, &buf),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_threshold_string(fmt("bf16"), ABL_TAU_FTZ, 4, NULL), ABL_ERR_INVALID_ARGUMENT);
    assert_null(buf); /* untouched by every refusal above */
    assert_int_equal(abl_threshold_string(fmt("bf16"), ABL_TAU_SUBNORMAL, 10, &buf), ABL_OK);
    assert_string_equal(buf, "-92.1885750145");
    free(buf);
    buf = NULL;
    assert_int_equal(abl_threshold_mpfr(r, NULL, ABL_TAU_FTZ, MPFR_RNDN), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_threshold_mpfr(r, fmt("bf16"), ABL_TAU_KIND_COUNT, MPFR_RNDN),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_true(isnan(abl_threshold_double(NULL, ABL_TAU_FTZ)));
    assert_true(isnan(abl_threshold_double(fmt("bf16"), ABL_TAU_KIND_COUNT)));
    /* Nonsense hand-built formats are refused rather than giving log(0) or log(negative). */
    bad.precision = 0;
    assert_int_equal(abl_threshold_mpfr(r, &bad, ABL_TAU_MAX, MPFR_RNDN), ABL_ERR_INVALID_ARGUMENT);
    bad = *fmt("fp4");
    bad.max_deficit = 3; /* 2^2 - 1 - 3 = 0 */
    assert_int_equal(abl_threshold_mpfr(r, &bad, ABL_TAU_MAX, MPFR_RNDN), ABL_ERR_INVALID_ARGUMENT);
    bad = *fmt("bf16");
    bad.emin = bad.emax + 1;
    assert_int_equal(abl_threshold_string(&bad, ABL_TAU_FTZ, 4, &buf),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_null(buf);
    mpfr_clear(r);
}

/* A caller that narrowed MPFR's exponent range (format emulation) gets correct digits and its range back. */
static void test_global_state_restored(void **state)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    char *buf = NULL;
    (void)state;
    mpfr_set_emin(-20);
    mpfr_set_emax(3); /* 92 would overflow here */
    mpfr_clear_flags();
    assert_int_equal(abl_threshold_string(fmt("bf16"), ABL_TAU_SUBNORMAL, 10, &buf), ABL_OK);
    assert_string_equal(buf, "-92.1885750145");
    free(buf);
    assert_true(abl_threshold_double(fmt("fp64"), ABL_TAU_SUBNORMAL) < -744.44);
    assert_int_equal(mpfr_get_emin(), -20);
    assert_int_equal(mpfr_get_emax(), 3);
    assert_int_equal(mpfr_flags_test(MPFR_FLAGS_ALL), 0);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_table),
        cmocka_unit_test(test_paper_table4),
        cmocka_unit_test(test_mpmath_40_digits),
        cmocka_unit_test(test_1000_decimals),
        cmocka_unit_test(test_zero_threshold),
        cmocka_unit_test(test_strings_vs_reference),
        cmocka_unit_test(test_rounding_direction),
        cmocka_unit_test(test_log2_multiple),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_global_state_restored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
