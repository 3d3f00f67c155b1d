/* ggml's kernels (src/lib/kernel/abl_ggml.c) against independent sources:
 * - the emulated ggml_v_expf against the AVX2+FMA routine itself, run on this CPU's AVX2 units
 *   (the routine copied verbatim from ggml-org/ggml@d99724f2 src/ggml-cpu/vec.h, MIT licence), bit for bit
 *   over every binary32 input the soft_max can give it (x - max <= 0) on a dense grid, and the
 *   subnormal/underflow range; skipped where the CPU lacks AVX2 or FMA;
 * - the ggml-powf slopes against this machine's libm powf evaluated as ggml writes it (glibc powf is
 *   not correctly rounded everywhere: the model's correctly rounded powers must equal it for the head
 *   counts the catalogue uses, 1..128);
 * - the zero-logit predictor against the emulation it must equal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#include "kernel/abl_ggml.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86 1

__attribute__((target("avx2,fma"))) static __m256 ggml_v_expf(__m256 x)
{
    const __m256 r = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
    const __m256 n = _mm256_sub_ps(z, r);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1))));
    const __m256i c =
        _mm256_castps_si256(_mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.f), n), _mm256_set1_ps(126), _CMP_GT_OQ));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
    if (!_mm256_movemask_ps(_mm256_castsi256_ps(c)))
        return _mm256_fmadd_ps(j, k, k);
    const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                                       _mm256_set1_epi32((int)0x82000000u));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
    const __m256i d =
        _mm256_castps_si256(_mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.f), n), _mm256_set1_ps(192), _CMP_GT_OQ));
    return _mm256_or_ps(
        _mm256_and_ps(_mm256_castsi256_ps(d), _mm256_mul_ps(s1, s1)),
        _mm256_andnot_ps(_mm256_castsi256_ps(d),
                         _mm256_or_ps(_mm256_and_ps(_mm256_castsi256_ps(c), _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1)),
                                      _mm256_andnot_ps(_mm256_castsi256_ps(c), _mm256_fmadd_ps(k, j, k)))));
}

__attribute__((target("avx2,fma"))) static void native8(const float *x, float *y)
{
    _mm256_storeu_ps(y, ggml_v_expf(_mm256_loadu_ps(x)));
}
#endif

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void test_expf_avx2_native(void **state)
{
    (void)state;
#ifdef HAVE_X86
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        skip();
    /* every 97th binary32 from 0 down to -inf (x - max <= 0), 8 lanes at a time, plus the specials */
    float x[8], y[8];
    int n = 0;
    uint64_t checked = 0, bad = 0;
    for (uint64_t u = 0x80000000u; u <= 0xff800000u; u += 97) {
        uint32_t w = (uint32_t)u;
        memcpy(&x[n++], &w, sizeof x[0]);
        if (n == 8 || u + 97 > 0xff800000u) {
            native8(x, y);
            for (int k = 0; k < n; k++) {
                checked++;
                if (bits(abl_ggml_expf_avx2(x[k])) != bits(y[k]) && bad++ < 5)
                    print_message("x = %a: emulated %a, AVX2 %a\n", (double)x[k], (double)abl_ggml_expf_avx2(x[k]),
                                  (double)y[k]);
            }
            n = 0;
        }
    }
    float sp[8] = {-INFINITY, -0.0f, -87.3f, -103.97f, -104.0f, -126.5f * 0.6931472f, -150.0f, -1e-30f};
    native8(sp, y);
    for (int k = 0; k < 8; k++)
        bad += bits(abl_ggml_expf_avx2(sp[k])) != bits(y[k]);
    assert_true(checked > 20000000);
    assert_int_equal(bad, 0);
#else
    skip();
#endif
}

/* ggml: m0 = powf(2, -8/n), m1 = powf(2, -4/n), slopes powf(m0, h+1), powf(m1, 2(h-n)+1) */
static float libm_slope(int H, int h)
{
    unsigned n = 1u << (unsigned)floor(log2((double)H));
    const float max_bias = 8.0f;
    const float m0 = powf(2.0f, -(max_bias) / (float)n);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n);
    return (unsigned)h < n ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - (int)n) + 1));
}

static void test_powf_slopes(void **state)
{
    (void)state;
    int bad = 0;
    for (int H = 1; H <= 128; H++) {
        abl_schedule sched;
        assert_int_equal(abl_schedule_build(NULL, H, -133, &sched), ABL_OK);
        for (int h = 0; h < H; h++) {
            float v;
            assert_int_equal(abl_slope_code_value(ABL_SLOPE_CALC_GGML, &sched, h, &v), ABL_OK);
            float want = libm_slope(H, sched.slopes[h].index - 1);
            if (bits(v) != bits(want) && bad++ < 5)
                print_message("H %d head %d: model %a, libm %a\n", H, h + 1, (double)v, (double)want);
        }
        abl_schedule_free(&sched);
    }
    assert_int_equal(bad, 0);
}

/* The zero-logit predictor of softmax=ggml agrees with the emulation, row counts of every kind: N a
 * multiple of 8 or not (libm expf on the last N mod 8 keys), fp32 and fp16 masks, both exp variants,
 * head counts that are not powers of two (m1's slopes). */
static void test_predict_agrees(void **state)
{
    (void)state;
    const char *specs[] = {"llamacpp-cpu", "llamacpp-cpu,mask-dtype=fp16", "llamacpp-cpu,exp=ggml-scalar"};
    const int shapes[][2] = {{16, 2048}, {12, 1003}, {5, 333}, {3, 7}, {1, 1}, {24, 2600}};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++) {
            abl_simulate_config cfg;
            memset(&cfg, 0, sizeof cfg);
            assert_int_equal(abl_pipeline_parse_msg(specs[k], NULL, &cfg.pipeline, NULL), ABL_OK);
            cfg.heads = shapes[q][0];
            cfg.context = (uint64_t)shapes[q][1];
            abl_simulation sim;
            abl_prediction pred;
            assert_int_equal(abl_simulate_run(&cfg, &sim), ABL_OK);
            assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
            if (!abl_prediction_agrees(&sim, &pred))
                print_message("%s H %d N %d: the predictor disagrees\n", specs[k], shapes[q][0], shapes[q][1]);
            assert_true(abl_prediction_agrees(&sim, &pred));
            abl_simulation_free(&sim);
            abl_prediction_free(&pred);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expf_avx2_native),
        cmocka_unit_test(test_powf_slopes),
        cmocka_unit_test(test_predict_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
