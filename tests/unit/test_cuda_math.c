/* Unit tests: the CUDA intrinsic models of src/lib/kernel/abl_cuda_math.c against their documented
 * semantics, with expected results computed independently by tests/unit/cuda_math_expected.py (exact
 * rationals, mpmath at 300 bits, numpy's float32 and float16 arithmetic; CTest unit.cuda_math_expected
 * checks that the committed header is what the script writes), plus the properties the documents state
 * directly: flush to zero of subnormal results, __fdividef's 0 for 2^126 < |y| < 2^128, fp16 subnormals
 * kept by the half conversions, and the fp16 fma rounded once (not through binary32). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/abl_cuda_math.h"
#include "cuda_math_expected.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static float fb(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void expect_bits(float got, uint32_t want, const char *what, uint32_t in)
{
    if (bf(got) != want)
        print_error("%s(0x%08x): got 0x%08x, expected 0x%08x\n", what, in, bf(got), want);
    assert_int_equal(bf(got), want);
}

static void test_ex2_expf_rcp(void **state)
{
    (void)state;
    for (size_t k = 0; k < COUNT(k_ex2); k += 2)
        expect_bits(abl_cuda_ex2_ftz(fb(k_ex2[k])), k_ex2[k + 1], "ex2", k_ex2[k]);
    for (size_t k = 0; k < COUNT(k_expf); k += 2)
        expect_bits(abl_cuda_expf(fb(k_expf[k])), k_expf[k + 1], "__expf", k_expf[k]);
    for (size_t k = 0; k < COUNT(k_rcp); k += 2)
        expect_bits(abl_cuda_rcp_ftz(fb(k_rcp[k])), k_rcp[k + 1], "rcp", k_rcp[k]);
    for (size_t k = 0; k < COUNT(k_fdividef); k += 3)
        expect_bits(abl_cuda_fdividef(fb(k_fdividef[k]), fb(k_fdividef[k + 1])), k_fdividef[k + 2], "__fdividef",
                    k_fdividef[k + 1]);
}

static void test_half(void **state)
{
    (void)state;
    for (size_t k = 0; k < COUNT(k_f2h); k += 2)
        expect_bits(abl_cuda_f2h(fb(k_f2h[k])), k_f2h[k + 1], "__float2half_rn", k_f2h[k]);
    for (size_t k = 0; k < COUNT(k_f2bf); k += 2)
        expect_bits(abl_cuda_f2bf(fb(k_f2bf[k])), k_f2bf[k + 1], "__float2bfloat16_rn", k_f2bf[k]);
    for (size_t k = 0; k < COUNT(k_hmul); k += 3)
        expect_bits(abl_cuda_hmul(fb(k_hmul[k]), fb(k_hmul[k + 1])), k_hmul[k + 2], "__hmul", k_hmul[k]);
    for (size_t k = 0; k < COUNT(k_hfma); k += 4)
        expect_bits(abl_cuda_hfma(fb(k_hfma[k]), fb(k_hfma[k + 1]), fb(k_hfma[k + 2])), k_hfma[k + 3], "__hfma",
                    k_hfma[k]);
}

/* What the documents state in words, checked directly. */
static void test_documented(void **state)
{
    (void)state;
    /* .ftz: a subnormal result is +0, and 2^-126 itself survives */
    assert_true(abl_cuda_ex2_ftz(-126.5f) == 0.0f);
    assert_true(abl_cuda_ex2_ftz(-126.0f) == 0x1p-126f);
    assert_true(abl_cuda_fmul(0x1p-100f, 0x1p-30f) == 0.0f);
    assert_true(abl_cuda_fadd(0x1.8p-126f, -0x1p-126f) == 0.0f);   /* 2^-127: subnormal, flushed */
    /* CUDA Programming Guide: for 2^126 < |y| < 2^128, __fdividef(x, y) delivers 0 */
    assert_true(abl_cuda_fdividef(1.0f, 0x1.8p126f) == 0.0f);
    assert_true(abl_cuda_fdividef(1.0e30f, 0x1p127f) == 0.0f);
    assert_true(abl_cuda_fdividef(1.0f, 0x1p126f) == 0x1p-126f);
    /* __expf(-inf) = 0, no NaN */
    assert_true(abl_cuda_expf(-INFINITY) == 0.0f);
    /* fp16 keeps subnormals: 2^-24 is the smallest, half of it ties to even (0), just above rounds up */
    assert_true(abl_cuda_f2h(0x1p-24f) == 0x1p-24f);
    assert_true(abl_cuda_f2h(0x1p-25f) == 0.0f);
    assert_true(abl_cuda_f2h(0x1.000002p-25f) == 0x1p-24f);
    assert_true(isinf(abl_cuda_f2h(65520.0f)));
    /* fma rounded once: -(1 + 2^-10) (4 - 2^-8) + 8200 = 8196 + 2^-18 goes up to 8200 (through binary32
     * it would be the tie 8196 and round to the even 8192) */
    assert_true(abl_cuda_hfma(-0x1.004p0f, 3.99609375f, 8200.0f) == 8200.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ex2_expf_rcp),
        cmocka_unit_test(test_half),
        cmocka_unit_test(test_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
