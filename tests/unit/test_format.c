/* Unit tests for abl_format: every expectation is a spec §2 literal or an IEEE closed form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "abl/core/format.h"

#define F_IEEE (ABL_FMT_HAS_INF | ABL_FMT_HAS_NAN | ABL_FMT_NEG_ZERO)

/* spec §2 table, transcribed; max finite as the decimal/hex literal the SPEC gives (or its closed form). */
static const struct {
    const char *name;
    int exp_bits, man_bits, p;
    long emin, emax;
    double max_finite;
    unsigned flags;
} k_spec[] = {
    {"fp64", 11, 52, 53, -1022, 1023, 0x1.fffffffffffffp1023, F_IEEE},
    {"fp32", 8, 23, 24, -126, 127, 0x1.fffffep127, F_IEEE},
    {"tf32", 8, 10, 11, -126, 127, 0x1.ffcp127, F_IEEE},
    {"bf16", 8, 7, 8, -126, 127, 0x1.FEp127, F_IEEE},
    {"fp16", 5, 10, 11, -14, 15, 65504.0, F_IEEE},
    {"fp8-e5m2", 5, 2, 3, -14, 15, 57344.0, F_IEEE},
    {"fp8-e4m3fn", 4, 3, 4, -6, 8, 448.0, ABL_FMT_HAS_NAN | ABL_FMT_NEG_ZERO},
    {"fp8-e4m3fnuz", 4, 3, 4, -7, 7, 240.0, ABL_FMT_HAS_NAN},
    {"fp8-e5m2fnuz", 5, 2, 3, -15, 15, 57344.0, ABL_FMT_HAS_NAN},
    {"fp6-e2m3fn", 2, 3, 4, 0, 2, 7.5, ABL_FMT_NEG_ZERO},
    {"fp6-e3m2fn", 3, 2, 3, -2, 4, 28.0, ABL_FMT_NEG_ZERO},
    {"fp4-e2m1fn", 2, 1, 2, 0, 2, 6.0, ABL_FMT_NEG_ZERO},
    /* ml_dtypes README (jax-ml/ml_dtypes): float8_e4m3 "IEEE 754, with NaN and inf", bias 7 (max
     * 1.875 * 2^7); float8_e3m4 the same with bias 3 (1.9375 * 2^3); float8_e4m3b11fnuz bias 11, NaN 0x80. */
    {"float8_e4m3", 4, 3, 4, -6, 7, 240.0, F_IEEE},
    {"fp8-e3m4", 3, 4, 5, -2, 3, 15.5, F_IEEE},
    {"fp8-e4m3b11fnuz", 4, 3, 4, -10, 4, 30.0, ABL_FMT_HAS_NAN},
};
#define N_SPEC (sizeof k_spec / sizeof k_spec[0])

/* Largest finite from the struct's own fields: (2^p - 1 - deficit) * 2^(emax - p + 1). */
static double max_from_struct(const abl_format *f)
{
    double sig = ldexp(1.0, f->precision) - 1.0 - (double)f->max_deficit;
    return ldexp(sig, (int)(f->emax - f->precision + 1));
}

static void test_count_and_order(void **state)
{
    size_t i;
    (void)state;
    assert_int_equal(abl_format_count(), N_SPEC);
    for (i = 0; i < N_SPEC; i++) {
        const abl_format *f = abl_format_at(i);
        assert_non_null(f);
        assert_string_equal(f->name, k_spec[i].name);
    }
    assert_null(abl_format_at(N_SPEC));
    assert_null(abl_format_at((size_t)-1));
}

static void test_builtin_fields(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < N_SPEC; i++) {
        const abl_format *f = abl_format_at(i);
        assert_int_equal(f->exp_bits, k_spec[i].exp_bits);
        assert_int_equal(f->man_bits, k_spec[i].man_bits);
        assert_int_equal(f->precision, k_spec[i].p);
        assert_int_equal(f->precision, f->man_bits + 1);
        assert_int_equal(f->emin, k_spec[i].emin);
        assert_int_equal(f->emax, k_spec[i].emax);
        assert_int_equal(f->flags, k_spec[i].flags);
        /* Only e4m3fn loses a significand to NaN. */
        assert_int_equal(f->max_deficit, strcmp(f->name, "fp8-e4m3fn") == 0 ? 1u : 0u);
        assert_true(max_from_struct(f) == k_spec[i].max_finite);
    }
}

/* Cross-check the IEEE formats against the C library's own constants. */
static void test_against_float_h(void **state)
{
    abl_format f;
    (void)state;
    assert_int_equal(abl_format_lookup("fp64", &f), ABL_OK);
    assert_true(max_from_struct(&f) == 1.7976931348623157e308);
    assert_true(ldexp(1.0, (int)(f.emin - f.precision + 1)) == 4.9406564584124654e-324);
    assert_int_equal(abl_format_lookup("fp32", &f), ABL_OK);
    assert_true((float)max_from_struct(&f) == 3.40282347e38f);
    assert_true(ldexp(1.0, (int)f.emin) == (double)1.17549435e-38f);
    /* SPEC's 4-digit max finite values for tf32 and bf16. */
    assert_int_equal(abl_format_lookup("tf32", &f), ABL_OK);
    assert_true(fabs(max_from_struct(&f) / 3.4012e38 - 1.0) < 1e-4);
    assert_int_equal(abl_format_lookup("bf16", &f), ABL_OK);
    assert_true(fabs(max_from_struct(&f) / 3.3895e38 - 1.0) < 1e-4);
}

static void expect_alias(const char *alias, const char *canonical)
{
    abl_format f;
    abl_status st = abl_format_lookup(alias, &f);
    if (st != ABL_OK || strcmp(f.name, canonical) != 0)
        fail_msg("alias '%s' -> status %d name '%s', want '%s'", alias, (int)st,
                 st == ABL_OK ? f.name : "", canonical);
    assert_int_equal(f.flags & ABL_FMT_CUSTOM, 0);
}

/* The name array's bound (tests/fixed_buffers.baseline): every built-in name and the longest eXmY name
 * the lookup accepts (x <= 20, y <= 112) are whole, and one beyond the bounds is refused. */
static void test_names_fit(void **state)
{
    (void)state;
    abl_format f;
    for (size_t i = 0; i < abl_format_count(); i++)
        assert_true(strlen(abl_format_at(i)->name) < sizeof f.name);
    assert_int_equal(abl_format_lookup("e20m112", &f), ABL_OK);
    assert_string_equal(f.name, "e20m112");
    assert_int_equal(abl_format_lookup("e2m1", &f), ABL_OK); /* an alias: fp4-e2m1fn */
    assert_true(strlen(f.name) < sizeof f.name);
    assert_int_not_equal(abl_format_lookup("e21m112", &f), ABL_OK);
    assert_int_not_equal(abl_format_lookup("e20m113", &f), ABL_OK);
}

static void test_canonical_names(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < N_SPEC; i++)
        expect_alias(k_spec[i].name, k_spec[i].name);
    expect_alias("BF16", "bf16");
    expect_alias("FP8-E4M3FN", "fp8-e4m3fn");
}

static void test_aliases(void **state)
{
    static const char *const table[][2] = {
        {"double", "fp64"}, {"float64", "fp64"}, {"f64", "fp64"}, {"e11m52", "fp64"},
        {"float", "fp32"}, {"float32", "fp32"}, {"f32", "fp32"}, {"single", "fp32"},
        {"e8m23", "fp32"},
        {"tensorfloat32", "tf32"}, {"TF32", "tf32"}, {"e8m10", "tf32"},
        {"bfloat16", "bf16"}, {"BFloat16", "bf16"}, {"e8m7", "bf16"},
        {"half", "fp16"}, {"float16", "fp16"}, {"f16", "fp16"}, {"e5m10", "fp16"},
        {"HALF", "fp16"},
        {"e5m2", "fp8-e5m2"}, {"float8_e5m2", "fp8-e5m2"}, {"fp8e5m2", "fp8-e5m2"},
        {"fp8_e5m2", "fp8-e5m2"}, {"E5M2", "fp8-e5m2"},
        {"e4m3fn", "fp8-e4m3fn"}, {"float8_e4m3fn", "fp8-e4m3fn"}, {"fp8_e4m3fn", "fp8-e4m3fn"},
        {"torch.float8_e4m3fn", "fp8-e4m3fn"}, {"ml_dtypes.float8_e4m3fn", "fp8-e4m3fn"},
        {"float8_e4m3", "float8_e4m3"}, {"ml_dtypes.float8_e4m3", "float8_e4m3"},
        {"float8_e3m4", "fp8-e3m4"}, {"e3m4", "fp8-e3m4"}, {"float8_e4m3b11fnuz", "fp8-e4m3b11fnuz"},
        {"torch.bfloat16", "bf16"}, {"TORCH.BFLOAT16", "bf16"}, {"torch.half", "fp16"}, {"torch.float", "fp32"},
        {"torch.double", "fp64"}, {"torch.float8_e5m2", "fp8-e5m2"}, {"np.float16", "fp16"},
        {"Float8_E4M3FN", "fp8-e4m3fn"},
        {"float8_e4m3fnuz", "fp8-e4m3fnuz"}, {"e4m3fnuz", "fp8-e4m3fnuz"},
        {"float8_e5m2fnuz", "fp8-e5m2fnuz"}, {"e5m2fnuz", "fp8-e5m2fnuz"},
        {"e2m3", "fp6-e2m3fn"}, {"fp6_e2m3", "fp6-e2m3fn"}, {"float6_e2m3fn", "fp6-e2m3fn"},
        {"e3m2", "fp6-e3m2fn"}, {"fp6_e3m2", "fp6-e3m2fn"}, {"float6_e3m2fn", "fp6-e3m2fn"},
        {"e2m1", "fp4-e2m1fn"}, {"fp4", "fp4-e2m1fn"}, {"float4_e2m1fn", "fp4-e2m1fn"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        expect_alias(table[i][0], table[i][1]);
}

/* Names meaning different formats in torch and ml_dtypes are refused, with the candidates. */
static void test_ambiguous(void **state)
{
    static const char *const names[] = {"e4m3", "E4M3", "fp8-e4m3", "fp8_e4m3", "fp8e4m3", "fp8", "torch.float8"};
    abl_format f;
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        assert_non_null(abl_format_ambiguous(names[i]));
        assert_int_equal(abl_format_lookup(names[i], &f), ABL_ERR_UNKNOWN_DTYPE);
    }
    assert_non_null(strstr(abl_format_ambiguous("e4m3"), "max 448"));
    assert_non_null(strstr(abl_format_ambiguous("e4m3"), "max 240"));
    assert_null(abl_format_ambiguous("e4m3fn"));
    /* torch has no tf32 dtype. */
    assert_int_equal(abl_format_lookup("torch.tf32", &f), ABL_ERR_UNKNOWN_DTYPE);
}

static void expect_custom(const char *text, const char *name, int x, int y)
{
    abl_format f;
    long bias = (1L << (x - 1)) - 1;
    assert_int_equal(abl_format_lookup(text, &f), ABL_OK);
    assert_string_equal(f.name, name);
    assert_int_equal(f.exp_bits, x);
    assert_int_equal(f.man_bits, y);
    assert_int_equal(f.precision, y + 1);
    assert_int_equal(f.emin, 1 - bias);
    assert_int_equal(f.emax, bias);
    assert_int_equal(f.max_deficit, 0);
    assert_int_equal(f.flags, F_IEEE | ABL_FMT_CUSTOM);
}

static void test_custom(void **state)
{
    abl_format f;
    (void)state;
    expect_custom("e6m9", "e6m9", 6, 9);
    expect_custom("E6M9", "e6m9", 6, 9);
    expect_custom("e3m3", "e3m3", 3, 3);
    expect_custom("e2m2", "e2m2", 2, 2);       /* smallest exponent width */
    expect_custom("e20m112", "e20m112", 20, 112);
    expect_custom("e15m112", "e15m112", 15, 112); /* binary128's shape, not an alias */
    expect_custom("e8m1", "e8m1", 8, 1);
    /* A custom with the shape of fp32 minus one bit behaves like IEEE: fp16-like e5m9. */
    assert_int_equal(abl_format_lookup("e5m9", &f), ABL_OK);
    assert_int_equal(f.emin, -14);
    assert_int_equal(f.emax, 15);
    /* IEEE closed form: e5m9 max = (2 - 2^-9) * 2^15 = 65472. */
    assert_true(max_from_struct(&f) == 65472.0);
}

static void test_rejections(void **state)
{
    static const char *const bad[] = {
        "fp7", "", "e1m3", "e4m0", "e21m2", "e4m3x", "e", "em", "e4m", "em3", "e4", "m3",
        "e-4m3", "e+4m3", "e04m3", "e4m03", " e4m3", "e4m3 ", "e4m113", "e0m3", "e4m3e",
        "e99999999999999999999m3", "fp8", "fp6", "bf-16", "float8", "e4m3fnuzz", "bfloat",
    };
    size_t i;
    abl_format f;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (abl_format_lookup(bad[i], &f) != ABL_ERR_UNKNOWN_DTYPE)
            fail_msg("'%s' should be rejected", bad[i]);
    }
    assert_int_equal(abl_format_lookup(NULL, &f), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_format_lookup("bf16", NULL), ABL_ERR_INVALID_ARGUMENT);
}

static void test_names_list(void **state)
{
    const char *names = abl_format_names();
    size_t i;
    (void)state;
    assert_non_null(names);
    assert_string_equal(names, "fp64, fp32, tf32, bf16, fp16, fp8-e5m2, fp8-e4m3fn, fp8-e4m3fnuz, "
                               "fp8-e5m2fnuz, fp6-e2m3fn, fp6-e3m2fn, fp4-e2m1fn, float8_e4m3, fp8-e3m4, "
                               "fp8-e4m3b11fnuz");
    for (i = 0; i < N_SPEC; i++)
        assert_non_null(strstr(names, k_spec[i].name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_and_order),
        cmocka_unit_test(test_builtin_fields),
        cmocka_unit_test(test_against_float_h),
        cmocka_unit_test(test_names_fit),
        cmocka_unit_test(test_canonical_names),
        cmocka_unit_test(test_aliases), cmocka_unit_test(test_ambiguous),
        cmocka_unit_test(test_custom),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_names_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
