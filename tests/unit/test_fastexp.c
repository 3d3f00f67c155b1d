/* Unit tests: abl_fastexp_rn32 (the table-driven binary64 exp with a certified bound) equals the
 * MPFR-backed abl_exp_rn32 (binary64 libm + Ziv loop in MPFR, itself checked against MPFR in
 * test_round.c) bit for bit: exhaustively on every bf16 and fp16 argument, on every binary32 in
 * windows of 2^17 around the points where the result changes regime (0, the subnormal and zero
 * thresholds, overflow), and on 2^22 random binary32 arguments in (-104, 89). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/abl_fastexp.h"
#include "kernel/abl_round.h"

static uint64_t g_slow;

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void check(float y)
{
    float a = abl_fastexp_rn32(y, &g_slow), b = abl_exp_rn32(y);
    uint32_t ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    if (ua != ub && !(isnan(a) && isnan(b)))
        fail_msg("exp(%a): fast %a, reference %a", (double)y, (double)a, (double)b);
}

static void test_bf16_all(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x10000u; h++)
        check(from_bits(h << 16));
}

static void test_fp16_all(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        uint32_t e = (h >> 10) & 31u, m = h & 1023u;
        double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp((double)(m | 1024u), (int)e - 25);
        check((float)((h & 0x8000u) ? -v : v));
    }
}

static void test_windows(void **state)
{
    (void)state;
    /* around 0, the 2^-126 threshold (-87.336...), the zero threshold (-103.972...), -104, 88.72, 89 */
    const float centres[] = {0.0f, -0.0f, -87.33654f, -103.97208f, -104.0f, 88.72284f, 89.0f, -1.0f, 1.0f};
    for (size_t c = 0; c < sizeof centres / sizeof *centres; c++) {
        uint32_t u;
        memcpy(&u, &centres[c], sizeof u);
        for (uint32_t d = 0; d < (1u << 17); d++) {
            check(from_bits(u + d));
            check(from_bits(u - d));
        }
    }
}

static void test_random(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int k = 0; k < (1 << 22); k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        float y = from_bits((uint32_t)x);
        if (!(y > -104.0f && y < 89.0f))
            y = fmodf(y, 96.0f) - 7.0f;   /* fold into range (NaN stays NaN) */
        check(y);
    }
    printf("arguments sent to the MPFR-backed path: %llu\n", (unsigned long long)g_slow);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_all),
        cmocka_unit_test(test_fp16_all),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
