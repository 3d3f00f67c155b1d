/* Unit tests: pipeline presets (the fields docs/pipelines.md derives from the cited code), overrides,
 * errors, and the emulability check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <mpfr.h>
#include "alibi_blind.h"

/* The message pointer for one more call: the previous call's message freed (the library sets *msg
 * afresh on every call and the caller owns what it gets). */
static char **fresh(char **msg)
{
    free(*msg);
    *msg = NULL;
    return msg;
}

/* A malloc'd text equal to want (and freed). */
#define TEXT_EQ(expr, want)                                                                                   \
    do {                                                                                                      \
        char *text_ = (expr);                                                                                 \
        assert_non_null(text_);                                                                               \
        assert_string_equal(text_, want);                                                                     \
        free(text_);                                                                                          \
    } while (0)

static abl_format fmt(const char *name)
{
    abl_format f;
    assert_int_equal(abl_format_lookup(name, &f), ABL_OK);
    return f;
}

/* Versions (issue 18): transformers' Falcon eager path adds the bias twice from _update_causal_mask on
 * (read at 00dcc6dd, measured with 5.17.0 on the H200) and once at 44272086 (the eager mask carries no
 * alibi there); the default is the newest; every description names the version. */
static void test_versions(void **state)
{
    (void)state;
    abl_format bf16 = fmt("bf16");
    abl_pipeline p;
    char *msg = NULL;
    assert_int_equal(abl_pipeline_parse_msg("falcon-hf-eager", &bf16, &p, fresh(&msg)), ABL_OK);
    assert_int_equal(p.bias_add, ABL_BIAS_ADD_BOTH);
    assert_string_equal(p.version, "00dcc6dd");
    assert_int_equal(abl_pipeline_parse_msg("falcon-hf-eager,version=44272086", &bf16, &p, fresh(&msg)), ABL_OK);
    assert_int_equal(p.bias_add, ABL_BIAS_ADD_SCORES);
    assert_string_equal(p.version, "44272086");
    char *d = abl_pipeline_describe(&p);
    assert_non_null(d);
    assert_non_null(strstr(d, ",version=44272086"));
    free(d);
    /* newest names the default; a later field override still applies after the version */
    assert_int_equal(abl_pipeline_parse_msg("falcon-hf-eager,version=44272086,version=newest", &bf16, &p,
                                            fresh(&msg)), ABL_OK);
    assert_int_equal(p.bias_add, ABL_BIAS_ADD_BOTH);
    assert_int_equal(abl_pipeline_parse_msg("falcon-hf-eager,version=44272086,bias-add=both", &bf16, &p,
                                            fresh(&msg)), ABL_OK);
    assert_int_equal(p.bias_add, ABL_BIAS_ADD_BOTH);
    /* the SDPA path counts the bias once at both revisions: no second version */
    assert_int_equal(abl_pipeline_parse_msg("falcon-hf-sdpa,version=44272086", &bf16, &p, fresh(&msg)),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "falcon-hf-sdpa"));
    assert_int_equal(abl_pipeline_parse_msg("eager,version=2.0", &bf16, &p, fresh(&msg)), ABL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "'2.0'"));
    /* set_msg checks the version against the pipeline's own preset */
    assert_int_equal(abl_pipeline_parse_msg("falcon-hf-eager", &bf16, &p, fresh(&msg)), ABL_OK);
    assert_int_equal(abl_pipeline_set_msg(&p, "version", "44272086", &bf16, fresh(&msg)), ABL_OK);
    assert_int_equal(p.bias_add, ABL_BIAS_ADD_SCORES);
    assert_int_equal(abl_pipeline_parse_msg("mpt", &bf16, &p, fresh(&msg)), ABL_OK);
    assert_int_equal(abl_pipeline_set_msg(&p, "version", "44272086", &bf16, fresh(&msg)), ABL_ERR_INVALID_ARGUMENT);
    /* every preset names the revision range it models */
    const char *names = abl_pipeline_preset_names();
    char *copy = malloc(strlen(names) + 1);
    assert_non_null(copy);
    strcpy(copy, names);
    for (char *save = NULL, *t = strtok_r(copy, ", ", &save); t != NULL; t = strtok_r(NULL, ", ", &save)) {
        assert_non_null(abl_pipeline_version_range(t, NULL));
        assert_non_null(abl_pipeline_version_names(t));
        assert_int_equal(abl_pipeline_parse_msg(t, &bf16, &p, fresh(&msg)), ABL_OK);
        assert_non_null(p.version);
        assert_non_null(abl_pipeline_version_range(t, p.version));
    }
    free(copy);
    assert_non_null(strstr(abl_pipeline_version_range("falcon-hf-eager", "44272086"), "once"));
    assert_non_null(strstr(abl_pipeline_version_range("falcon-hf-eager", NULL), "5.17.0"));
    assert_null(abl_pipeline_version_range("nope", NULL));
    free(msg);
}

/* flex-alibi (attention-gym's alibi_mod through FlexAttention): the fields the template implies. */
static void test_flex_preset(void **state)
{
    (void)state;
    abl_format fp16 = fmt("fp16");
    abl_pipeline p;
    assert_int_equal(abl_pipeline_preset("flex-alibi", &fp16, &p), ABL_OK);
    assert_int_equal(p.softmax, ABL_SOFTMAX_FLEX);
    assert_int_equal(p.slope_calc, ABL_SLOPE_CALC_FLEX);
    assert_int_equal(p.bias_form, ABL_BIAS_RELATIVE);
    assert_string_equal(p.bias_dtype.name, "fp32");
    assert_string_equal(p.logit_dtype.name, "fp32");
    assert_string_equal(p.output_dtype.name, "fp16");   /* P cast to V's dtype */
    assert_int_equal(p.block, 64);
    assert_int_equal(abl_pipeline_check_msg(&p, NULL), ABL_OK);
    TEXT_EQ(abl_pipeline_describe(&p),
            "bias-form=relative,slope-dtype=fp32,slope-calc=flex-exp2,product-dtype=fp32,bias-dtype=fp32,"
            "bias-scale=1,bias-add=scores,logit-dtype=fp32,softmax=flex,output-dtype=fp16,block=64,version=9be7b3d9");
    /* flex uses exp2 (ex2.approx.ftz): no other exp model */
    p.exp = ABL_EXP_SLEEF;
    assert_int_equal(abl_pipeline_check_msg(&p, NULL), ABL_ERR_UNSUPPORTED);
}

static void test_presets(void **state)
{
    (void)state;
    abl_pipeline p;
    abl_format bf16 = fmt("bf16"), fp16 = fmt("fp16");

    /* eager: relative bias built in fp32, cast to the model dtype, softmax(dtype=float32).to(model) */
    assert_int_equal(abl_pipeline_preset("eager", &bf16, &p), ABL_OK);
    TEXT_EQ(abl_pipeline_describe(&p), "bias-form=relative,slope-dtype=fp32,slope-calc=exact,product-dtype=fp32,"
                             "bias-dtype=bf16,bias-scale=1,bias-add=scores,logit-dtype=bf16,softmax=eager,sum=exact,"
                             "exp=correct,normalise=reciprocal,output-dtype=bf16,version=029586da");
    /* bloom-hf: absolute form (build_alibi_tensor), fp32 product, .to(dtype), baddbmm in dtype */
    assert_int_equal(abl_pipeline_preset("bloom-hf", &fp16, &p), ABL_OK);
    TEXT_EQ(abl_pipeline_describe(&p), "bias-form=absolute,slope-dtype=fp32,slope-calc=torch-pow,product-dtype=fp32,"
                             "bias-dtype=fp16,bias-scale=1,bias-add=scores,logit-dtype=fp16,softmax=eager,sum=exact,"
                             "exp=correct,normalise=reciprocal,output-dtype=fp16,version=9d97831a");
    /* falcon-hf-eager: slopes.bfloat16() * positions (bf16 whatever the model dtype), scaled by 1/sqrt(64),
     * added to the scores and again inside the mask */
    assert_int_equal(abl_pipeline_preset("falcon-hf-eager", &fp16, &p), ABL_OK);
    assert_int_equal(p.bias_form, ABL_BIAS_ABSOLUTE);
    assert_string_equal(p.product_dtype.name, "bf16");
    assert_string_equal(p.bias_dtype.name, "fp16");
    assert_int_equal(p.bias_add, ABL_BIAS_ADD_BOTH);
    assert_int_equal(p.slope_calc, ABL_SLOPE_CALC_TORCH_POW);
    assert_true(p.bias_scale.num == 1 && p.bias_scale.den == 8);
    /* falcon-rw-hf is falcon-hf-sdpa: the mask alone (m/8) through the memory-efficient kernel */
    abl_pipeline q;
    assert_int_equal(abl_pipeline_preset("falcon-rw-hf", &fp16, &p), ABL_OK);
    assert_int_equal(abl_pipeline_preset("falcon-hf-sdpa", &fp16, &q), ABL_OK);
    char *d1 = abl_pipeline_describe(&p), *d2 = abl_pipeline_describe(&q);
    assert_non_null(d1);
    assert_non_null(d2);
    assert_string_equal(d1, d2);
    free(d1);
    free(d2);
    assert_int_equal(p.bias_add, ABL_BIAS_ADD_MASK);
    assert_int_equal(p.softmax, ABL_SOFTMAX_SDPA_EFFICIENT);
    /* sdpa-efficient / sdpa-cudnn: the eager bias as a float mask (model dtype), added in fp32 */
    assert_int_equal(abl_pipeline_preset("sdpa-cudnn", &bf16, &p), ABL_OK);
    TEXT_EQ(abl_pipeline_describe(&p), "bias-form=relative,slope-dtype=fp32,slope-calc=exact,product-dtype=fp32,"
                             "bias-dtype=bf16,bias-scale=1,bias-add=mask,logit-dtype=fp32,softmax=sdpa-cudnn,"
                             "output-dtype=bf16,head-dim=64,block=128,version=torch-2.11");
    /* mpt-hf: the fp32 bias of build_mpt_alibi_tensor, fp32 softmax */
    assert_int_equal(abl_pipeline_preset("mpt-hf", &bf16, &p), ABL_OK);
    assert_int_equal(p.bias_form, ABL_BIAS_TRAILING);
    assert_string_equal(p.bias_dtype.name, "fp32");
    assert_string_equal(p.logit_dtype.name, "fp32");
    assert_int_equal(p.slope_calc, ABL_SLOPE_CALC_MPT_POW);
    assert_int_equal(abl_pipeline_parse_msg("falcon-hf-sdpa,softmax=sdpa-cudnn", &bf16, &p, NULL), ABL_OK);
    assert_int_equal(p.softmax, ABL_SOFTMAX_SDPA_CUDNN);
    assert_int_equal(p.block, 128);   /* the kernel's tile comes with softmax= */
    assert_int_equal(abl_pipeline_parse_msg("falcon-hf-sdpa,softmax=sdpa-cudnn,block=32", &bf16, &p, NULL),
                     ABL_OK);
    assert_int_equal(p.block, 32);
    assert_true(p.bias_scale.num == 1 && p.bias_scale.den == 8);
    /* mpt: one bias row -m (N - 1 - j) (build_alibi_bias, causal) */
    assert_int_equal(abl_pipeline_preset("mpt", NULL, &p), ABL_OK);
    assert_int_equal(p.bias_form, ABL_BIAS_TRAILING);
    assert_string_equal(p.output_dtype.name, "bf16");   /* NULL model dtype = bf16 */
    /* flash2: fp32 bias inside the kernel, flash softmax, kBlockN 64 at head dim 128 */
    assert_int_equal(abl_pipeline_preset("flash2", &bf16, &p), ABL_OK);
    TEXT_EQ(abl_pipeline_describe(&p), "bias-form=absolute,slope-dtype=fp32,slope-calc=exact,product-dtype=fp32,"
                             "bias-dtype=fp32,bias-scale=1,bias-add=scores,logit-dtype=fp32,softmax=flash,"
                             "output-dtype=bf16,head-dim=128,block=64,version=c1f0be2f");
    assert_int_equal(abl_pipeline_check_msg(&p, NULL), ABL_OK);
    assert_int_equal(abl_pipeline_preset("sdpa", &bf16, &p), ABL_ERR_INVALID_ARGUMENT);
}

static void test_parse_overrides(void **state)
{
    (void)state;
    abl_pipeline p;
    abl_format fp16 = fmt("fp16");
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg("bloom-hf,output-dtype=fp32,sum=vec8,exp=sleef,normalise=divide,"
                                        "bias-form=symmetric,bias-scale=0.5,logit-dtype=model",
                                        &fp16, &p, fresh(&err)), ABL_OK);
    assert_string_equal(p.preset, "bloom-hf");
    assert_string_equal(p.output_dtype.name, "fp32");
    assert_string_equal(p.logit_dtype.name, "fp16");
    assert_int_equal(p.sum, ABL_SUM_VEC8);
    assert_int_equal(p.exp, ABL_EXP_SLEEF);
    assert_int_equal(p.normalise, ABL_NORM_DIVIDE);
    assert_int_equal(p.bias_form, ABL_BIAS_SYMMETRIC);
    assert_true(p.bias_scale.num == 1 && p.bias_scale.den == 2);
    assert_int_equal(abl_pipeline_parse_msg("flash2,head-dim=64,block=0,bias-form=trailing", NULL, &p, fresh(&err)),
                     ABL_OK);
    assert_int_equal(p.head_dim, 64);
    assert_int_equal(p.block, 0);
    assert_int_equal(abl_pipeline_parse_msg(NULL, NULL, &p, fresh(&err)), ABL_OK);
    assert_string_equal(p.preset, "eager");
    free(err);
}

static void test_parse_errors(void **state)
{
    (void)state;
    abl_pipeline p;
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg("nope", NULL, &p, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "unknown pipeline preset 'nope'"));
    assert_int_equal(abl_pipeline_parse_msg("eager,color=red", NULL, &p, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "unknown pipeline field 'color'"));
    assert_int_equal(abl_pipeline_parse_msg("eager,output-dtype=fp7", NULL, &p, fresh(&err)), ABL_ERR_UNKNOWN_DTYPE);
    assert_int_equal(abl_pipeline_parse_msg("eager,sum", NULL, &p, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_pipeline_parse_msg("eager,,sum=exact", NULL, &p, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_pipeline_parse_msg("eager,", NULL, &p, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_pipeline_parse_msg("eager,bias-scale=-1", NULL, &p, fresh(&err)), ABL_ERR_BAD_NUMBER);
    assert_int_equal(abl_pipeline_parse_msg("eager,bias-scale=0", NULL, &p, fresh(&err)), ABL_ERR_BAD_NUMBER);
    assert_int_equal(abl_pipeline_parse_msg("flash2,head-dim=0", NULL, &p, fresh(&err)), ABL_ERR_BAD_NUMBER);
    assert_int_equal(abl_pipeline_parse_msg("eager,sum=kahan", NULL, &p, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_pipeline_parse_msg("eager,exp=fast", NULL, &p, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    /* 2^64 + 1 does not fit the exact 64-bit ratio: refused, not truncated */
    assert_int_equal(abl_pipeline_parse_msg("eager,bias-scale=18446744073709551617", NULL, &p, fresh(&err)),
                     ABL_ERR_BAD_NUMBER);
    assert_non_null(strstr(err, "2^64"));
    free(err);
}

/* bias-scale is held as an exact ratio, whatever the length of its text (no fixed-size buffer) */
static void test_ratio(void **state)
{
    (void)state;
    abl_ratio r;
    assert_int_equal(abl_ratio_parse("0.125", &r), ABL_OK);
    assert_true(r.num == 1 && r.den == 8);
    TEXT_EQ(abl_ratio_text(&r), "0.125");
    assert_int_equal(abl_ratio_parse("1e-3", &r), ABL_OK);
    TEXT_EQ(abl_ratio_text(&r), "0.001");
    assert_int_equal(abl_ratio_parse("12.5", &r), ABL_OK);
    TEXT_EQ(abl_ratio_text(&r), "12.5");
    /* a long decimal (more than the old 32-byte field): 0.1250000...0 with 200 zeros is 1/8 */
    char longtext[256];
    memset(longtext, '0', sizeof longtext);
    memcpy(longtext, "0.125", 5);
    longtext[255] = '\0';
    assert_int_equal(abl_ratio_parse(longtext, &r), ABL_OK);
    assert_true(r.num == 1 && r.den == 8);
    abl_pipeline p;
    char spec[300];
    char *err = NULL;
    snprintf(spec, sizeof spec, "eager,bias-scale=%s", longtext);
    assert_int_equal(abl_pipeline_parse_msg(spec, NULL, &p, fresh(&err)), ABL_OK);
    assert_true(p.bias_scale.num == 1 && p.bias_scale.den == 8);
    assert_int_equal(abl_ratio_parse("0", &r), ABL_ERR_BAD_NUMBER);
    assert_int_equal(abl_ratio_parse("x", &r), ABL_ERR_BAD_NUMBER);
    r.num = 1;
    r.den = 3;
    TEXT_EQ(abl_ratio_text(&r), "1/3");
    free(err);
}

static void test_check(void **state)
{
    (void)state;
    abl_pipeline p;
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg("eager,output-dtype=fp64", NULL, &p, fresh(&err)), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, fresh(&err)), ABL_ERR_UNSUPPORTED);
    assert_non_null(strstr(err, "output-dtype=fp64"));
    assert_int_equal(abl_pipeline_parse_msg("eager,bias-dtype=fp8-e4m3fn,output-dtype=fp4-e2m1fn", NULL, &p, fresh(&err)), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, fresh(&err)), ABL_OK);
    assert_int_equal(abl_pipeline_parse_msg("flash2,logit-dtype=bf16", NULL, &p, fresh(&err)), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, fresh(&err)), ABL_ERR_UNSUPPORTED);
    assert_int_equal(abl_pipeline_parse_msg("flash2,bias-scale=0.5", NULL, &p, fresh(&err)), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, fresh(&err)), ABL_ERR_UNSUPPORTED);
    assert_int_equal(abl_pipeline_parse_msg("flash2,bias-scale=1.00", NULL, &p, fresh(&err)), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, fresh(&err)), ABL_OK);
    assert_int_equal(abl_pipeline_parse_msg("flash2,exp=sleef", NULL, &p, fresh(&err)), ABL_OK);
    assert_int_equal(abl_pipeline_check_msg(&p, fresh(&err)), ABL_ERR_UNSUPPORTED);
    free(err);
}

/* No fixed-size buffer holds user text: a 10,000-character spec comes back whole in the _msg forms
 * (each message is built here from the spec, not read from the library), and the buffer forms cut it. */
static void test_long_spec(void **state)
{
    (void)state;
    enum { LONG = 10000 };
    char *value = malloc(LONG + 1);
    assert_non_null(value);
    memset(value, 'x', LONG);
    memcpy(value + LONG - 3, "END", 4);
    const char *prefix[] = {"eager,bias-form=", "eager,", "", "eager,softmax=flash,exp="};
    const char *want_fmt[] = {"bias-form: unknown form '%s' (known: relative, absolute, symmetric, trailing)",
                              "'%s' is not FIELD=VALUE (fields: ", "unknown pipeline preset '%s' (known: ",
                              "exp: unknown model '%s' (known: correct, sleef, ggml-avx2, ggml-scalar)"};
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++) {
        size_t n = strlen(prefix[i]) + LONG + 1;
        char *spec = malloc(n), *want = malloc(LONG + 200);
        assert_non_null(spec);
        assert_non_null(want);
        snprintf(spec, n, "%s%s", prefix[i], value);
        snprintf(want, LONG + 200, want_fmt[i], value);
        abl_pipeline p;
        char *msg = NULL;
        assert_int_equal(abl_pipeline_parse_msg(spec, NULL, &p, &msg), ABL_ERR_INVALID_ARGUMENT);
        assert_non_null(msg);
        assert_true(strlen(msg) > LONG);
        assert_memory_equal(msg, want, strlen(want));
        free(msg);
        /* No message wanted. */
        assert_int_equal(abl_pipeline_parse_msg(spec, NULL, &p, NULL), ABL_ERR_INVALID_ARGUMENT);
        free(spec);
        free(want);
    }
    /* Success leaves *msg NULL; a check failure comes back through _check_msg. */
    abl_pipeline p;
    char *msg = NULL;
    assert_int_equal(abl_pipeline_parse_msg("eager,output-dtype=fp64", NULL, &p, &msg), ABL_OK);
    assert_null(msg);
    assert_int_equal(abl_pipeline_check_msg(&p, &msg), ABL_ERR_UNSUPPORTED);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "output-dtype=fp64: the emulator holds every pipeline dtype in binary32"));
    free(msg);
    free(value);
}

/* One description, parsed once, built for two model dtypes (issue 17): the 'model' fields and the
 * preset's model-dtype fields follow the dtype it is built for, the fixed ones do not (the fields as
 * docs/pipelines.md defines the eager preset: bias, logits and output in the model dtype). */
static void test_spec_per_dtype(void **state)
{
    (void)state;
    abl_pipeline_spec s;
    char *err = NULL;
    assert_int_equal(abl_pipeline_spec_parse("eager,logit-dtype=fp32,output-dtype=model,softmax=sdpa-efficient,"
                                             "block=32,bias-scale=0.125", &s, &err), ABL_OK);
    assert_null(err);
    assert_string_equal(s.text, "eager,logit-dtype=fp32,output-dtype=model,softmax=sdpa-efficient,block=32,"
                                "bias-scale=0.125");
    assert_int_equal(s.noverrides, 5);
    abl_format bf16 = fmt("bf16"), fp16 = fmt("fp16");
    abl_pipeline a, b;
    assert_int_equal(abl_pipeline_build(&s, &fp16, &a), ABL_OK);
    assert_int_equal(abl_pipeline_build(&s, &bf16, &b), ABL_OK);
    assert_string_equal(a.output_dtype.name, "fp16");
    assert_string_equal(b.output_dtype.name, "bf16");
    assert_string_equal(a.bias_dtype.name, "fp16");
    assert_string_equal(b.bias_dtype.name, "bf16");
    assert_string_equal(a.logit_dtype.name, "fp32");
    assert_string_equal(b.logit_dtype.name, "fp32");
    assert_int_equal(a.softmax, ABL_SOFTMAX_SDPA_EFFICIENT);
    assert_int_equal(a.block, 32); /* block= after softmax= overrides the kernel's 64 */
    assert_true(a.bias_scale.num == 1 && a.bias_scale.den == 8);
    abl_pipeline_spec c;
    assert_int_equal(abl_pipeline_spec_copy(&s, &c), ABL_OK);
    abl_pipeline_spec_free(&s);
    assert_int_equal(abl_pipeline_build(&c, &fp16, &b), ABL_OK);
    char *da = abl_pipeline_describe(&a), *db = abl_pipeline_describe(&b);
    assert_non_null(da);
    assert_non_null(db);
    assert_string_equal(da, db);
    free(da);
    free(db);
    abl_pipeline_spec_free(&c);
    /* none: eager under its own name */
    assert_int_equal(abl_pipeline_spec_parse(NULL, &s, NULL), ABL_OK);
    assert_string_equal(s.text, "eager");
    abl_pipeline_spec_free(&s);
    assert_int_equal(abl_pipeline_spec_parse("eager,block=x", &s, &err), ABL_ERR_BAD_NUMBER);
    assert_non_null(err);
    free(err);
    abl_pipeline_spec_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_parse_overrides),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_ratio),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_long_spec),
        cmocka_unit_test(test_spec_per_dtype),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_flex_preset),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mpfr_free_cache();
    return rc;
}
