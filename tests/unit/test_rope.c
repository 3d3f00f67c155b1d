/*
 * Unit tests for the rope stage (issue 22). Expected values are mpmath literals (mp.dps = 50), pasted with
 * how they were computed, or closed forms: never from the functions under test. The generator:
 *   theta_i = mpf(10000) ** (mpf(-2 i) / 128)
 *   hf fp32 d=8 pair 1: inv32 = float32(1)/float32(10); max over p < 4096 of |f32(p * inv32) - p/10| (numpy fp32
 *     products, mpmath differences)
 *   ggml: ts = f32(mpf(10000) ** f32(-2/128)); the angle of pair 63 at p = 1000: 63 numpy fp32 multiplications
 *   bf16, theta = 1 (d = 2), p < 8: max |(bf16(f32(cos p)), bf16(f32(sin p))) - (cos p, sin p)| (torch casts)
 *   yarn d=16 base 10000 factor 4 max_position 128: transformers 0044e3b3 _compute_yarn_parameters run in
 *     PyTorch 1.13 (ends low 0, high 3); inv_freq as float.hex; cos(inv_freq[3]) * (0.1 ln 4 + 1) in fp32
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

#include "abl/rope/rope.h"

static void setup(abl_rope_config *c, const char *path, const char *dtype, int d, unsigned base, uint64_t n)
{
    abl_rope_config_init(c);
    assert_int_equal(abl_rope_path_lookup(path, &c->path, NULL), ABL_OK);
    assert_int_equal(abl_format_lookup(dtype, &c->dtype), ABL_OK);
    c->head_dim = d;
    mpq_set_ui(c->base, base, 1);
    c->n = n;
}

/* The result of the configuration setup() makes (the caller frees it). */
static void run(abl_rope_result *r, const char *path, const char *dtype, int d, unsigned base, uint64_t n)
{
    abl_rope_config c;
    setup(&c, path, dtype, d, base, n);
    assert_int_equal(abl_rope_run(&c, NULL, NULL, r, NULL), ABL_OK);
    abl_rope_config_clear(&c);
}

/* The yarn configuration the literals were computed for (d = 16, base 10000, factor 4, 128 original
 * positions) on PATH at context N. */
static void setup_yarn(abl_rope_config *c, const char *path, uint64_t n)
{
    setup(c, path, "fp32", 16, 10000, n);
    c->scaling = ABL_ROPE_SCALING_YARN;
    mpq_set_ui(c->factor, 4, 1);
    c->max_position = 128;
}

/* The code's fp32 angles of pairs 0..COUNT-1, bit for bit. */
static void expect_angles(const float *angle, const double *want, int count)
{
    for (int i = 0; i < count; i++)
        if (!((double)angle[i] == want[i]))
            fail_msg("pair %d: angle %a, want %a", i, (double)angle[i], want[i]);
}

static void close_rel(double got, double want, double rel)
{
    if (fabs(got - want) > rel * fabs(want))
        fail_msg("got %.17g, want %.17g", got, want);
}

static void test_theta_exact(void **state)
{
    (void)state;
    abl_rope_result r;
    run(&r, "hf-llama", "bf16", 128, 10000, 64);
    close_rel(r.pair[1].theta, 0.8659643233600653523531692, 1e-16);
    close_rel(r.pair[63].theta, 0.0001154781984689458179666483, 1e-16);
    assert_true(r.pair[0].theta == 1.0);
    abl_rope_result_free(&r);
}

static void test_angle_error_fp32(void **state)
{
    (void)state;
    abl_rope_result r;
    run(&r, "hf-llama", "fp32", 8, 10000, 4096);
    assert_true(r.pair[1].inv_freq == 0.1f);
    close_rel(r.pair[1].angle_err, 0.000018310546875, 1e-15);
    assert_int_equal(r.pair[1].angle_err_at, 2563);
    /* pair 0: theta = 1, the fp32 angle p is exact below 2^24 */
    assert_true(r.pair[0].angle_err == 0.0);
    abl_rope_result_free(&r);
}

static void test_ggml_theta_loop(void **state)
{
    (void)state;
    abl_rope_config c;
    setup(&c, "ggml-cpu", "fp32", 128, 10000, 2);
    float a[64], cs[64], sn[64];
    assert_int_equal(abl_rope_values(&c, 1000, a, cs, sn), ABL_OK);
    assert_true(a[63] == 0x1.d8fff6p-4f);
    assert_int_equal(abl_rope_values(&c, 1, a, cs, sn), ABL_OK);
    assert_true(a[1] == 0x1.bb5faep-1f); /* ts itself: theta_scale = powf(10000, -2.0f/128) */
    abl_rope_config_clear(&c);
}

static void test_bf16_cos_sin_error(void **state)
{
    (void)state;
    abl_rope_result r;
    run(&r, "hf-llama", "bf16", 2, 10000, 8);
    close_rel(r.pair[0].cs_err, 0.0020457301167807202325, 1e-12);
    assert_int_equal(r.pair[0].cs_err_at, 1);
    /* the first token's row: z(0) = 1 exactly, so the rotation part is the largest cos/sin error */
    close_rel(r.rot_err_first, 0.0020457301167807202325, 1e-12);
    abl_rope_result_free(&r);
}

static void test_yarn_inv_freq(void **state)
{
    (void)state;
    static const double want[8] = {0x1.0000000000000p+0, 0x1.e5b9d00000000p-3, 0x1.9999980000000p-5,
                                   0x1.030dc60000000p-7, 0x1.47ae140000000p-9, 0x1.9e7c700000000p-11,
                                   0x1.0624de0000000p-12, 0x1.4b96c00000000p-14};
    abl_rope_config c;
    setup_yarn(&c, "hf-llama", 256);
    float angle[8], cs[8], sn[8];
    assert_int_equal(abl_rope_values(&c, 1, angle, cs, sn), ABL_OK);
    expect_angles(angle, want, 8);
    close_rel(cs[3], 0x1.237ae4p+0, 0x1p-22);   /* the attention factor in the fp32 cos (to 1 ulp: CR or SLEEF) */
    c.path = ABL_ROPE_FLASH_ROTARY;             /* flash_attn's RotaryEmbedding has no yarn */
    assert_int_equal(abl_rope_values(&c, 1, angle, cs, sn), ABL_ERR_UNSUPPORTED);
    abl_rope_config_clear(&c);
}

/* llama.cpp's own yarn on ggml-cpu (the same configuration): the numpy float32 rebuild of ggml.c
 * ggml_rope_yarn_corr_dims (ends 0 and 3), ops.cpp rope_yarn_ramp / rope_yarn / ggml_rope_cache_init and
 * llama_context's attention factor, logf/cosf correctly rounded (mpmath), at p = 1 and p = 1000. Pair 4 at
 * p = 1 is 0x1.47ae16p-9 (hf: 0x1.47ae14p-9): ggml's ts^4 is not transformers' 1 / base^(8/16). */
static void test_ggml_yarn(void **state)
{
    (void)state;
    static const double want1[8] = {0x1p+0,         0x1.e5b9d0p-3, 0x1.999998p-5, 0x1.030dc6p-7,
                                    0x1.47ae16p-9,  0x1.9e7c70p-11, 0x1.0624dep-12, 0x1.4b96c0p-14};
    static const double want1000[8] = {0x1.f4p+9,     0x1.da5774p+7, 0x1.8ffffcp+5, 0x1.f9f6e2p+2,
                                       0x1.3ffffep+1, 0x1.94c580p-1, 0x1.fffffcp-3, 0x1.43d134p-4};
    abl_rope_config c;
    setup_yarn(&c, "ggml-cpu", 1024);
    float angle[8], cs[8], sn[8];
    assert_int_equal(abl_rope_values(&c, 1, angle, cs, sn), ABL_OK);
    expect_angles(angle, want1, 8);
    assert_int_equal(abl_rope_values(&c, 1000, angle, cs, sn), ABL_OK);
    expect_angles(angle, want1000, 8);
    assert_true((double)cs[2] == 0x1.1946cap+0);   /* RN32(RN32(cos a) * mscale), mscale 0x1.237d38p+0 */
    c.mscale = 1;                                   /* llama.cpp reads mscale per architecture: refused */
    assert_int_equal(abl_rope_values(&c, 1, angle, cs, sn), ABL_ERR_UNSUPPORTED);
    abl_rope_config_clear(&c);
}

/* PyTorch CPU's fp32 cos/sin through SLEEF's AVX2 groups of 8 (docs/rope.md): literals printed by PyTorch
 * 1.13.1 (Debian, AVX2 capability) for transformers' emb.cos()/emb.sin(), d = 128, base 5e5, fp32; the correctly
 * rounded cos differs by one ulp in each (mpmath: 0x1.ff8502p-1 and 0x1.e8ebb6p-1). Where the CPU has no AVX2
 * and FMA, PyTorch runs libm and the tool correctly rounded values: skipped. */
static void test_torch_sleef_cos(void **state)
{
    (void)state;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        skip();
#else
    skip();
#endif
    abl_rope_config c;
    setup(&c, "hf-llama", "fp32", 128, 500000, 200000);
    float angle[64], cs[64], sn[64];
    assert_int_equal(abl_rope_values(&c, 1000, angle, cs, sn), ABL_OK);
    assert_true((double)angle[49] == 0x1.62e88p-5);
    assert_true((double)cs[49] == 0x1.ff8504p-1);
    assert_true((double)sn[49] == 0x1.62cc14p-5);
    assert_int_equal(abl_rope_values(&c, 100003, angle, cs, sn), ABL_OK);
    assert_true((double)angle[62] == 0x1.34a0dap-2);
    assert_true((double)cs[62] == 0x1.e8ebb8p-1);
    assert_true((double)sn[62] == 0x1.2ffa18p-2);
    abl_rope_config_clear(&c);
}

static void test_refusals(void **state)
{
    (void)state;
    abl_rope_config c;
    setup(&c, "hf-llama", "bf16", 7, 10000, 8);
    abl_rope_result r;
    char *msg = NULL;
    assert_int_equal(abl_rope_run(&c, NULL, NULL, &r, &msg), ABL_ERR_INVALID_ARGUMENT);
    assert_non_null(msg);
    free(msg);
    msg = NULL;
    c.head_dim = 8;
    c.n = (UINT64_C(1) << 24) + 1;
    assert_int_equal(abl_rope_run(&c, NULL, NULL, &r, &msg), ABL_ERR_INVALID_ARGUMENT);
    free(msg);
    msg = NULL;
    c.n = 16;
    c.path = ABL_ROPE_GGML_CPU;   /* ggml_rope on the CPU takes F32 or F16, not BF16 */
    assert_int_equal(abl_rope_run(&c, NULL, NULL, &r, &msg), ABL_ERR_UNSUPPORTED);
    free(msg);
    abl_rope_path path;
    assert_int_equal(abl_rope_path_lookup("hf", &path, NULL), ABL_ERR_UNSUPPORTED);
    abl_rope_config_clear(&c);
}

static void test_catalogue(void **state)
{
    (void)state;
    assert_true(abl_rope_model_count() >= 4);
    const abl_rope_model *m = abl_rope_model_find("meta-llama/Meta-Llama-3-8B");
    assert_non_null(m);
    assert_string_equal(m->rope_theta, "500000");
    assert_ptr_equal(abl_rope_model_find("meta-llama-3-8b"), m);
    assert_null(abl_rope_model_find("falcon-7b"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_theta_exact),      cmocka_unit_test(test_angle_error_fp32),
        cmocka_unit_test(test_ggml_theta_loop),  cmocka_unit_test(test_bf16_cos_sin_error),
        cmocka_unit_test(test_refusals),         cmocka_unit_test(test_catalogue),
        cmocka_unit_test(test_yarn_inv_freq),    cmocka_unit_test(test_torch_sleef_cos),
        cmocka_unit_test(test_ggml_yarn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
