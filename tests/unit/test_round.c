/* Unit tests: the bit-exact roundings of abl_round.c against an independent MPFR emulation of each
 * format (spec §2 recipe, written out here), on every rounding boundary of every emulable format. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <gmp.h>
#include <mpfr.h>
#include "alibi_blind.h"
#include "kernel/abl_round.h"

/* The reference: round x at precision p in the wide range, narrow the range to the format's
 * (MPFR emin = emin - p + 2, emax = emax + 1), check_range, subnormalize; past the largest finite
 * the format gives Inf or (no Inf: saturating conversion) its largest finite. */
static double ref_round(const abl_format *f, double x)
{
    if (x == 0.0)
        return (f->flags & ABL_FMT_NEG_ZERO) ? x : 0.0;
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t t;
    mpfr_init2(t, f->precision);
    int inex = mpfr_set_d(t, x, MPFR_RNDN);
    mpfr_set_emin(f->emin - f->precision + 2);
    mpfr_set_emax(f->emax + 1);
    inex = mpfr_check_range(t, inex, MPFR_RNDN);
    mpfr_subnormalize(t, inex, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    double r = mpfr_get_d(t, MPFR_RNDN);
    mpfr_clear(t);
    double maxv = ldexp(ldexp(1.0, f->precision) - 1.0 - f->max_deficit, (int)f->emax - f->precision + 1);
    if (fabs(r) > maxv)
        r = (f->flags & ABL_FMT_HAS_INF) ? copysign(INFINITY, x) : copysign(maxv, x);
    if (r == 0.0 && !(f->flags & ABL_FMT_NEG_ZERO))
        r = 0.0;
    return r;
}

static int same(double a, double b)
{
    return (a == b && signbit(a) == signbit(b)) || (isnan(a) && isnan(b));
}

static long g_checked;

static void probe(const abl_format *f, const abl_fp *fp, float x)
{
    if (isnan(x))
        return;
    double want = ref_round(f, (double)x);
    double got64 = abl_fp_round(fp, (double)x);
    float got32 = abl_fp_round32(fp, x);
    if (!same(want, got64) || !same(want, (double)got32)) {
        print_error("%s: x = %a: want %a, abl_fp_round %a, abl_fp_round32 %a\n", f->name, (double)x, want, got64,
                    (double)got32);
        fail();
    }
    g_checked++;
}

/* Every representable value v >= 0 of the format, the midpoint to the next and one binary32 step
 * either side of it, both signs; then past the largest finite; then a sweep over all binary32
 * bit patterns with a prime stride. */
static void check_format(const char *name)
{
    abl_format f;
    assert_int_equal(abl_format_lookup(name, &f), ABL_OK);
    abl_fp fp;
    assert_int_equal(abl_fp_init(&f, &fp), ABL_OK);
    int p = f.precision;
    double maxv = ldexp(ldexp(1.0, p) - 1.0 - f.max_deficit, (int)f.emax - p + 1);
    double prev = 0.0;
    long nvals = 0;
    for (long e = f.emin; e <= f.emax; e++) {
        long mlo = e == f.emin ? 0 : (1L << (p - 1));   /* subnormals share the lowest exponent */
        for (long m = mlo; m < (1L << p); m++) {
            double v = ldexp((double)m, (int)e - p + 1);
            if (v > maxv)
                break;
            if (v == prev && nvals > 0)
                continue;
            if (nvals > 0) {
                double mid = (prev + v) / 2;
                float fm = (float)mid;
                assert_true((double)fm == mid);   /* p <= 23: the midpoint is a binary32 value */
                for (int s = 0; s < 2; s++) {
                    float sg = s ? -1.0f : 1.0f;
                    probe(&f, &fp, sg * fm);
                    probe(&f, &fp, sg * nextafterf(fm, 0.0f));
                    probe(&f, &fp, sg * nextafterf(fm, INFINITY));
                }
            }
            probe(&f, &fp, (float)v);
            probe(&f, &fp, -(float)v);
            prev = v;
            nvals++;
        }
    }
    double ulp = ldexp(1.0, (int)f.emax - p + 1);
    float beyond[] = {(float)(maxv + ulp / 2), nextafterf((float)(maxv + ulp / 2), 0.0f),
                      nextafterf((float)(maxv + ulp / 2), INFINITY), (float)(maxv * 4), 3.0e38f, INFINITY};
    for (size_t k = 0; k < sizeof beyond / sizeof beyond[0]; k++) {
        probe(&f, &fp, beyond[k]);
        probe(&f, &fp, -beyond[k]);
    }
    for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 65521) {
        uint32_t b = (uint32_t)u;
        float x;
        memcpy(&x, &b, sizeof x);
        probe(&f, &fp, x);
    }
}

static void test_round_formats(void **state)
{
    (void)state;
    const char *names[] = {"bf16", "fp16", "tf32", "fp8-e5m2", "fp8-e4m3fn", "fp8-e4m3fnuz", "fp8-e5m2fnuz",
                           "fp6-e2m3fn", "fp6-e3m2fn", "fp4-e2m1fn", "e6m9", "e8m3", "e3m4"};
    g_checked = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        check_format(names[i]);
    assert_true(g_checked > 500000);
}

/* binary64 inputs (a bias product is one): the midpoints between consecutive values of the format and one
 * binary64 step either side of them, and random 53-bit significands over the whole exponent range, against
 * MPFR (abl_fp_round's bit-pattern path for normal values and its scaling path below). */
static void test_round_binary64_inputs(void **state)
{
    (void)state;
    const char *names[] = {"bf16", "fp16", "tf32", "fp8-e5m2", "fp8-e4m3fn", "fp8-e4m3fnuz", "fp6-e2m3fn",
                           "fp4-e2m1fn", "e6m9"};
    uint64_t seed = 0x9E3779B97F4A7C15u;
    long checked = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        abl_format f;
        assert_int_equal(abl_format_lookup(names[i], &f), ABL_OK);
        abl_fp fp;
        assert_int_equal(abl_fp_init(&f, &fp), ABL_OK);
        for (int k = 0; k < 200000; k++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;   /* Knuth's MMIX LCG */
            int e = (int)(f.emin - f.precision - 2) + (int)((seed >> 11) % (uint64_t)(f.emax - f.emin + f.precision + 6));
            double m = 1.0 + (double)(seed >> 12) * 0x1p-52;
            if (k % 3 == 0)   /* a midpoint of the format's grid at this exponent, then a step off it */
                m = 1.0 + (double)((seed >> 40) % (1u << (f.precision - 1)) * 2 + 1) * ldexp(1.0, -f.precision);
            if (k % 3 == 1)
                m = nextafter(m, 2.0);
            double x = ldexp((k & 1) ? -m : m, e);
            double want = ref_round(&f, x), got = abl_fp_round(&fp, x);
            if (!same(want, got)) {
                print_error("%s: x = %a: want %a, abl_fp_round %a\n", f.name, x, want, got);
                fail();
            }
            checked++;
        }
    }
    assert_true(checked > 1000000);
}

static void test_round_fp32_identity(void **state)
{
    (void)state;
    abl_format f;
    abl_fp fp;
    assert_int_equal(abl_format_lookup("fp32", &f), ABL_OK);
    assert_int_equal(abl_fp_init(&f, &fp), ABL_OK);
    /* binary64 inputs: one correct rounding, including subnormal results and ties */
    assert_true(abl_fp_round(&fp, 0x1p-150) == 0.0);                    /* tie to even 0 */
    assert_true(abl_fp_round(&fp, 0x1.0000000000001p-150) == 0x1p-149);
    assert_true(abl_fp_round(&fp, 1.0 + 0x1p-24) == 1.0);                /* tie to even */
    assert_true(abl_fp_round(&fp, 1.0 + 0x1.8p-23) == 1.0 + 0x1p-22);
    float x = 1.2345f;
    assert_true(abl_fp_round32(&fp, x) == x);
}

static void test_round_saturation(void **state)
{
    (void)state;
    /* e4m3fn: 448 is the largest finite (S.1111.111 is NaN); past it the conversion saturates */
    abl_format f;
    abl_fp fp;
    assert_int_equal(abl_format_lookup("e4m3fn", &f), ABL_OK);
    assert_int_equal(abl_fp_init(&f, &fp), ABL_OK);
    assert_true(fp.max == 448.0);
    assert_true(abl_fp_round32(&fp, 464.0f) == 448.0f);   /* tie between 448 and 480: even 448 */
    assert_true(abl_fp_round32(&fp, 470.0f) == 448.0f);
    assert_true(abl_fp_round32(&fp, 1e6f) == 448.0f);
    assert_true(abl_fp_round32(&fp, -1e6f) == -448.0f);
    assert_true(abl_fp_round32(&fp, 0x1p-10f) == 0.0f);   /* half the smallest subnormal 2^-9 */
    assert_true(fp.zero_max == 0x1p-10);
    /* bf16: the hand values of spec §9, spacing 8 in [1024, 2048) */
    assert_int_equal(abl_format_lookup("bf16", &f), ABL_OK);
    assert_int_equal(abl_fp_init(&f, &fp), ABL_OK);
    assert_true(abl_fp_round32(&fp, 1447.4475f) == 1448.0f);
    assert_true(abl_fp_round32(&fp, 1444.0f) == 1440.0f);    /* tie: 1440 = 180 * 8 is even */
    assert_true(abl_fp_round32(&fp, 1452.0f) == 1456.0f);
    assert_true(abl_fp_round32(&fp, 2047.0f) == 2048.0f);
    /* formats that do not fit in binary32 are refused */
    assert_int_equal(abl_format_lookup("fp64", &f), ABL_OK);
    assert_int_equal(abl_fp_init(&f, &fp), ABL_ERR_UNSUPPORTED);
    assert_int_equal(abl_format_lookup("e9m6", &f), ABL_OK);
    assert_int_equal(abl_fp_init(&f, &fp), ABL_ERR_UNSUPPORTED);
}

/* The reference exp: MPFR at 24 bits in binary32's exponent range with subnormals. */
static float ref_exp(float y, int base2)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t x, t;
    mpfr_init2(x, 24);
    mpfr_init2(t, 24);
    mpfr_set_flt(x, y, MPFR_RNDN);
    mpfr_set_emin(-148);
    mpfr_set_emax(128);
    int inex = base2 ? mpfr_exp2(t, x, MPFR_RNDN) : mpfr_exp(t, x, MPFR_RNDN);
    inex = mpfr_check_range(t, inex, MPFR_RNDN);
    mpfr_subnormalize(t, inex, MPFR_RNDN);
    float r = mpfr_get_flt(t, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_clears(x, t, (mpfr_ptr)0);
    return r;
}

static long check_exp_range(float lo, float hi, uint32_t stride, int base2)
{
    long n = 0;
    for (float y = lo; y <= hi;) {
        float want = ref_exp(y, base2), got = base2 ? abl_exp2_rn32(y) : abl_exp_rn32(y);
        if (memcmp(&want, &got, sizeof got) != 0) {
            print_error("%s(%a): want %a got %a\n", base2 ? "exp2" : "exp", (double)y, (double)want, (double)got);
            fail();
        }
        n++;
        uint32_t b;
        memcpy(&b, &y, sizeof b);
        /* negative floats: a smaller bit pattern is a larger value */
        if (y < 0.0f) {
            if (b <= 0x80000000u + stride)
                break;
            b -= stride;
        } else {
            b += stride;
        }
        memcpy(&y, &b, sizeof y);
    }
    return n;
}

static void test_exp_correctly_rounded(void **state)
{
    (void)state;
    long n = 0;
    n += check_exp_range(-110.0f, -0.0f, 4099, 0);          /* a sweep of [-110, 0] */
    n += check_exp_range(-103.98f, -103.96f, 1, 0);         /* every float where exp rounds to 0 or 2^-149 */
    n += check_exp_range(-87.35f, -87.32f, 1, 0);           /* every float where exp leaves the normal range */
    n += check_exp_range(-1e-3f, -0.0f, 997, 0);
    n += check_exp_range(-155.0f, -0.0f, 4099, 1);          /* exp2 */
    n += check_exp_range(-150.01f, -149.99f, 1, 1);         /* 2^-150 is the tie to 0 */
    n += check_exp_range(-126.01f, -125.99f, 1, 1);
    assert_true(n > 600000);
    assert_true(abl_exp_rn32(0.0f) == 1.0f);
    assert_true(abl_exp2_rn32(-150.0f) == 0.0f);
    assert_true(abl_exp2_rn32(-149.0f) == 0x1p-149f);
    assert_true(abl_exp2_rn32(-3.0f) == 0.125f);
}

/* Inputs whose binary64 exp lies within 2^-20 binary32 spacings of a rounding boundary: the ones
 * abl_exp_rn32 hands to its MPFR path (the criterion is restated here to find them). */
static void test_exp_hard_cases(void **state)
{
    (void)state;
    int found = 0;
    for (uint32_t b = 0x80000001u; b < 0xC2D00000u; b += 131) {   /* (-104, 0) */
        float y;
        memcpy(&y, &b, sizeof y);
        double d = exp((double)y);
        int e;
        (void)frexp(d, &e);
        int q = e - 1 - 23 < -149 ? -149 : e - 1 - 23;
        double sc = ldexp(d, -q), frac = sc - floor(sc);
        if (fabs(frac - 0.5) > 0x1p-20)
            continue;
        found++;
        float want = ref_exp(y, 0), got = abl_exp_rn32(y);
        if (memcmp(&want, &got, sizeof got) != 0) {
            print_error("hard exp(%a): want %a got %a\n", (double)y, (double)want, (double)got);
            fail();
        }
    }
    assert_true(found >= 5);
}

/* Sleef_expf8_u10 as PyTorch 1.13 (Debian, AVX2) returns it: torch.exp(x) on these inputs, chosen
 * where it differs from the correctly rounded value (recorded with validate_torch's data). */
static const uint32_t k_torch_exp[][2] = {
    {0xc2b159ddu, 0x00218d02u}, {0xc2b101c7u, 0x0027d968u}, {0xc2b00197u, 0x0041b970u},
    {0xc2b11c48u, 0x0025d6c4u}, {0xc2b003f3u, 0x00416c16u}, {0xc2b126e3u, 0x0025102eu},
    {0xc2afb513u, 0x004c5184u}, {0xc2afcd02u, 0x0048d540u}, {0xc2b655deu, 0x0002c68eu},
    {0xc2af64e5u, 0x005941b0u}, {0xc2b05d61u, 0x0036effau}, {0xc2afc12cu, 0x004a894au},
    {0xc20ed343u, 0x25b35b2cu}, {0xc2a6d42cu, 0x034a08f6u}, {0xc171b9a0u, 0x349371b6u},
    {0xc2ab58e3u, 0x01a8cb0au}, {0xbfa588f4u, 0x3e8c7b82u}, {0xc1320fdeu, 0x377653a0u},
    {0xc293e401u, 0x0a1fb9ccu}, {0xc2279db5u, 0x213acad6u}, {0xc2454e8bu, 0x1be496c2u},
    {0xc26d2d0du, 0x14afaf60u}, {0xc1d76acau, 0x2c0e4180u}, {0xc295d8f7u, 0x09702975u},
};

static void test_exp_sleef(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof k_torch_exp / sizeof k_torch_exp[0]; k++) {
        float x, want;
        memcpy(&x, &k_torch_exp[k][0], sizeof x);
        memcpy(&want, &k_torch_exp[k][1], sizeof want);
        float got = abl_exp_sleef_u10(x);
        if (memcmp(&got, &want, sizeof got) != 0) {
            print_error("sleef exp(%a): torch %a, emulation %a\n", (double)x, (double)want, (double)got);
            fail();
        }
        assert_true(abl_exp_rn32(x) != want);   /* these are the cases where the models differ */
    }
    assert_true(abl_exp_sleef_u10(-104.5f) == 0.0f);   /* vlt(d, -104) masks to 0 */
    assert_true(abl_exp_sleef_u10(0.0f) == 1.0f);
}

static void test_xacc(void **state)
{
    (void)state;
    /* exact sums against MPFR sums at 400 bits (exact for these terms) rounded once */
    unsigned long seed = 12345;
    for (int rep = 0; rep < 200; rep++) {
        abl_xacc a;
        abl_xacc_clear(&a);
        mpfr_t s;
        mpfr_init2(s, 400);
        mpfr_set_zero(s, 1);
        int n = 1 + rep * 7;
        for (int k = 0; k < n; k++) {
            seed = seed * 6364136223846793005UL + 1442695040888963407UL;
            uint32_t b = (uint32_t)(seed >> 33) % 0x3F800001u;   /* [0, 1] as bit patterns */
            float v;
            memcpy(&v, &b, sizeof v);
            abl_xacc_add(&a, v);
            mpfr_add_d(s, s, (double)v, MPFR_RNDN);
        }
        float want = mpfr_get_flt(s, MPFR_RNDN);
        float got = abl_xacc_round32(&a);
        assert_true(memcmp(&want, &got, sizeof got) == 0);
        mpfr_clear(s);
    }
    /* a tie: 1 + 2^-24 rounds to even 1, 1 + 2^-24 + 2^-149 rounds up */
    abl_xacc a;
    abl_xacc_clear(&a);
    abl_xacc_add(&a, 1.0f);
    abl_xacc_add(&a, 0x1p-24f);
    assert_true(abl_xacc_round32(&a) == 1.0f);
    abl_xacc_add(&a, 0x1p-149f);
    assert_true(abl_xacc_round32(&a) == 1.0f + 0x1p-23f);
    abl_xacc_clear(&a);
    abl_xacc_add(&a, 0x1p-149f);
    abl_xacc_add(&a, 0x1p-149f);
    assert_true(abl_xacc_round32(&a) == 0x1p-148f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_formats),
        cmocka_unit_test(test_round_binary64_inputs),
        cmocka_unit_test(test_round_fp32_identity),
        cmocka_unit_test(test_round_saturation),
        cmocka_unit_test(test_exp_correctly_rounded),
        cmocka_unit_test(test_exp_hard_cases),
        cmocka_unit_test(test_exp_sleef),
        cmocka_unit_test(test_xacc),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mpfr_free_cache();
    return rc;
}
