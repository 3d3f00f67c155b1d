/* alibi-blind: pipeline presets and their field overrides (docs/pipelines.md cites the code each
 * preset models). */
#include <errno.h>
#include <gmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/core/decimal.h"
#include "abl/kernel/pipeline.h"
#include "abl_internal.h"

static const char *const k_forms[ABL_BIAS_FORM_COUNT] = {"relative", "absolute", "symmetric", "trailing"};
static const char *const k_softmax[] = {"eager", "flash"};
static const char *const k_sums[] = {"exact", "sequential", "vec8", "vec16"};
static const char *const k_norms[] = {"reciprocal", "divide"};
static const char *const k_exps[] = {"correct", "sleef"};

const char *abl_pipeline_preset_names(void)
{
    return "eager, flash2, bloom-hf, falcon-rw-hf, mpt";
}

const char *abl_pipeline_field_names(void)
{
    return "bias-form, slope-dtype, product-dtype, bias-dtype, bias-scale, logit-dtype, softmax, sum, exp, "
           "normalise, output-dtype, head-dim, block";
}

const char *abl_bias_form_name(abl_bias_form f)
{
    return (unsigned)f < ABL_BIAS_FORM_COUNT ? k_forms[f] : "?";
}

const char *abl_softmax_kind_name(abl_softmax_kind k)
{
    return (unsigned)k < 2 ? k_softmax[k] : "?";
}

const char *abl_sum_order_name(abl_sum_order s)
{
    return (unsigned)s < 4 ? k_sums[s] : "?";
}

const char *abl_normalise_name(abl_normalise n)
{
    return (unsigned)n < 2 ? k_norms[n] : "?";
}

const char *abl_exp_model_name(abl_exp_model e)
{
    return (unsigned)e < 2 ? k_exps[e] : "?";
}


static abl_format named(const char *name)
{
    abl_format f;
    memset(&f, 0, sizeof f);
    (void)abl_format_lookup(name, &f);
    return f;
}

abl_status abl_pipeline_preset(const char *name, const abl_format *model_dtype, abl_pipeline *out)
{
    if (name == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_format model = model_dtype ? *model_dtype : named("bf16");
    abl_format fp32 = named("fp32");
    abl_pipeline p;
    memset(&p, 0, sizeof p);
    snprintf(p.preset, sizeof p.preset, "%s", name);
    p.slope_dtype = fp32;
    p.product_dtype = fp32;
    p.bias_dtype = model;
    snprintf(p.bias_scale, sizeof p.bias_scale, "1");
    p.logit_dtype = model;
    p.softmax = ABL_SOFTMAX_EAGER;
    p.sum = ABL_SUM_EXACT;
    p.normalise = ABL_NORM_RECIPROCAL;
    p.output_dtype = model;
    p.head_dim = 128;
    p.block = 0;
    if (strcmp(name, "eager") == 0) {
        /* -m(i-j) built in fp32, cast to the model dtype, softmax(dtype=float32).to(model) */
        p.bias_form = ABL_BIAS_RELATIVE;
    } else if (strcmp(name, "bloom-hf") == 0) {
        /* build_alibi_tensor: fp32 slopes * positions, .to(dtype); baddbmm in the model dtype */
        p.bias_form = ABL_BIAS_ABSOLUTE;
    } else if (strcmp(name, "falcon-rw-hf") == 0) {
        /* slopes.bfloat16() * positions (bf16 product), .to(dtype); (scores + alibi) * 1/sqrt(64) in
         * fp32, cast to the model dtype by softmax(dtype=hidden_states.dtype) */
        p.bias_form = ABL_BIAS_ABSOLUTE;
        p.product_dtype = named("bf16");
        snprintf(p.bias_scale, sizeof p.bias_scale, "0.125");
    } else if (strcmp(name, "mpt") == 0) {
        /* build_alibi_bias (causal): slopes * (j - (N-1)) in fp32, .to(dtype); q.k*scale + bias and
         * torch.softmax in the model dtype */
        p.bias_form = ABL_BIAS_TRAILING;
    } else if (strcmp(name, "flash2") == 0) {
        /* FlashAttention-2, causal: +slope/scale * col in fp32; kBlockN = 64 for head dim 128 (A100) */
        p.bias_form = ABL_BIAS_ABSOLUTE;
        p.bias_dtype = fp32;
        p.logit_dtype = fp32;
        p.softmax = ABL_SOFTMAX_FLASH;
        p.block = 64;
    } else {
        return ABL_ERR_INVALID_ARGUMENT;
    }
    *out = p;
    return ABL_OK;
}

static int lookup(const char *const *names, int n, const char *text)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], text) == 0)
            return i;
    return -1;
}

static int parse_int(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (text[0] == '\0' || *end != '\0' || errno != 0 || text[0] == ' ' || text[0] == '+' || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

abl_status abl_pipeline_set(abl_pipeline *p, const char *field, const char *value, const abl_format *model_dtype,
                            char *err, size_t errlen)
{
    if (p == NULL || field == NULL || value == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_format model = model_dtype ? *model_dtype : named("bf16");
    abl_format *dtype = NULL;
    if (strcmp(field, "slope-dtype") == 0)
        dtype = &p->slope_dtype;
    else if (strcmp(field, "product-dtype") == 0)
        dtype = &p->product_dtype;
    else if (strcmp(field, "bias-dtype") == 0)
        dtype = &p->bias_dtype;
    else if (strcmp(field, "logit-dtype") == 0)
        dtype = &p->logit_dtype;
    else if (strcmp(field, "output-dtype") == 0)
        dtype = &p->output_dtype;
    if (dtype != NULL) {
        if (strcmp(value, "model") == 0) {
            *dtype = model;
        } else if (abl_format_lookup(value, dtype) != ABL_OK) {
            abl_set_error(err, errlen, "%s: unknown floating-point format '%s' (known: %s, eXmY, or model)", field, value,
                    abl_format_names());
            return ABL_ERR_UNKNOWN_DTYPE;
        }
        return ABL_OK;
    }
    int k;
    long v;
    if (strcmp(field, "bias-form") == 0) {
        if ((k = lookup(k_forms, ABL_BIAS_FORM_COUNT, value)) < 0) {
            abl_set_error(err, errlen, "bias-form: unknown form '%s' (known: relative, absolute, symmetric, trailing)",
                    value);
            return ABL_ERR_INVALID_ARGUMENT;
        }
        p->bias_form = (abl_bias_form)k;
    } else if (strcmp(field, "softmax") == 0) {
        if ((k = lookup(k_softmax, 2, value)) < 0) {
            abl_set_error(err, errlen, "softmax: unknown kind '%s' (known: eager, flash)", value);
            return ABL_ERR_INVALID_ARGUMENT;
        }
        p->softmax = (abl_softmax_kind)k;
    } else if (strcmp(field, "sum") == 0) {
        if ((k = lookup(k_sums, 4, value)) < 0) {
            abl_set_error(err, errlen, "sum: unknown order '%s' (known: exact, sequential, vec8, vec16)", value);
            return ABL_ERR_INVALID_ARGUMENT;
        }
        p->sum = (abl_sum_order)k;
    } else if (strcmp(field, "exp") == 0) {
        if ((k = lookup(k_exps, 2, value)) < 0) {
            abl_set_error(err, errlen, "exp: unknown model '%s' (known: correct, sleef)", value);
            return ABL_ERR_INVALID_ARGUMENT;
        }
        p->exp = (abl_exp_model)k;
    } else if (strcmp(field, "normalise") == 0 || strcmp(field, "normalize") == 0) {
        if ((k = lookup(k_norms, 2, value)) < 0) {
            abl_set_error(err, errlen, "normalise: unknown mode '%s' (known: reciprocal, divide)", value);
            return ABL_ERR_INVALID_ARGUMENT;
        }
        p->normalise = (abl_normalise)k;
    } else if (strcmp(field, "bias-scale") == 0) {
        mpq_t q;
        mpq_init(q);
        abl_status st = abl_decimal_to_mpq(value, q);
        int pos = st == ABL_OK && mpq_sgn(q) > 0;
        mpq_clear(q);
        if (!pos || strlen(value) >= sizeof p->bias_scale) {
            abl_set_error(err, errlen, "bias-scale: '%s' is not a positive decimal number", value);
            return ABL_ERR_BAD_NUMBER;
        }
        snprintf(p->bias_scale, sizeof p->bias_scale, "%s", value);
    } else if (strcmp(field, "head-dim") == 0) {
        if (!parse_int(value, 1, 65536, &v)) {
            abl_set_error(err, errlen, "head-dim: '%s' is not an integer from 1 to 65536", value);
            return ABL_ERR_BAD_NUMBER;
        }
        p->head_dim = (int)v;
    } else if (strcmp(field, "block") == 0) {
        if (!parse_int(value, 0, 1L << 24, &v)) {
            abl_set_error(err, errlen, "block: '%s' is not an integer from 0 to 16777216", value);
            return ABL_ERR_BAD_NUMBER;
        }
        p->block = (int)v;
    } else {
        abl_set_error(err, errlen, "unknown pipeline field '%s' (known: %s)", field, abl_pipeline_field_names());
        return ABL_ERR_INVALID_ARGUMENT;
    }
    return ABL_OK;
}

abl_status abl_pipeline_parse(const char *spec, const abl_format *model_dtype, abl_pipeline *out, char *err,
                              size_t errlen)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (spec == NULL || spec[0] == '\0')
        spec = "eager";
    size_t n = strlen(spec);
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return ABL_ERR_NO_MEMORY;
    memcpy(copy, spec, n + 1);
    abl_status st = ABL_OK;
    char *save = NULL;
    char *tok = strtok_r(copy, ",", &save);
    abl_pipeline p;
    if (tok == NULL || spec[0] == ',' || spec[n - 1] == ',' || strstr(spec, ",,") != NULL) {
        abl_set_error(err, errlen, "'%s' is not PRESET[,FIELD=VALUE...]", spec);
        st = ABL_ERR_INVALID_ARGUMENT;
    } else if (abl_pipeline_preset(tok, model_dtype, &p) != ABL_OK) {
        abl_set_error(err, errlen, "unknown pipeline preset '%s' (known: %s)", tok, abl_pipeline_preset_names());
        st = ABL_ERR_INVALID_ARGUMENT;
    }
    while (st == ABL_OK && (tok = strtok_r(NULL, ",", &save)) != NULL) {
        char *eq = strchr(tok, '=');
        if (eq == NULL || eq == tok) {
            abl_set_error(err, errlen, "'%s' is not FIELD=VALUE (fields: %s)", tok, abl_pipeline_field_names());
            st = ABL_ERR_INVALID_ARGUMENT;
            break;
        }
        *eq = '\0';
        st = abl_pipeline_set(&p, tok, eq + 1, model_dtype, err, errlen);
    }
    free(copy);
    if (st == ABL_OK)
        *out = p;
    return st;
}

static int fits_binary32(const abl_format *f)
{
    return f->precision >= 1 && f->precision <= 24 && f->emin >= -126 && f->emax <= 127;
}

abl_status abl_pipeline_check(const abl_pipeline *p, char *err, size_t errlen)
{
    if (p == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    const struct {
        const char *field;
        const abl_format *f;
    } dts[] = {
        {"slope-dtype", &p->slope_dtype},   {"product-dtype", &p->product_dtype},
        {"bias-dtype", &p->bias_dtype},     {"logit-dtype", &p->logit_dtype},
        {"output-dtype", &p->output_dtype},
    };
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        if (!fits_binary32(dts[i].f)) {
            abl_set_error(err, errlen, "%s=%s: the emulator holds every pipeline dtype in binary32 (precision <= 24, "
                    "exponents inside binary32's)", dts[i].field, dts[i].f->name);
            return ABL_ERR_UNSUPPORTED;
        }
    }
    if (p->softmax == ABL_SOFTMAX_FLASH) {
        const abl_format *fs[] = {&p->product_dtype, &p->bias_dtype, &p->logit_dtype};
        const char *names[] = {"product-dtype", "bias-dtype", "logit-dtype"};
        for (int i = 0; i < 3; i++) {
            if (strcmp(fs[i]->name, "fp32") != 0) {
                abl_set_error(err, errlen, "%s=%s: softmax=flash adds the bias to the fp32 scores inside the kernel "
                        "(use fp32)", names[i], fs[i]->name);
                return ABL_ERR_UNSUPPORTED;
            }
        }
        if (p->exp != ABL_EXP_CORRECT) {
            abl_set_error(err, errlen, "exp=%s: softmax=flash models exp2 (correctly rounded); exp applies to eager",
                    abl_exp_model_name(p->exp));
            return ABL_ERR_UNSUPPORTED;
        }
        mpq_t q;
        mpq_init(q);
        int one = abl_decimal_to_mpq(p->bias_scale, q) == ABL_OK && mpq_cmp_ui(q, 1, 1) == 0;
        mpq_clear(q);
        if (!one) {
            abl_set_error(err, errlen, "bias-scale=%s: softmax=flash applies the softmax scale itself (head-dim)",
                    p->bias_scale);
            return ABL_ERR_UNSUPPORTED;
        }
    }
    return ABL_OK;
}

void abl_pipeline_describe(const abl_pipeline *p, char *buf, size_t buflen)
{
    if (buf == NULL || buflen == 0)
        return;
    int n = snprintf(buf, buflen,
                     "bias-form=%s,slope-dtype=%s,product-dtype=%s,bias-dtype=%s,bias-scale=%s,logit-dtype=%s,"
                     "softmax=%s,sum=%s,exp=%s,normalise=%s,output-dtype=%s",
                     abl_bias_form_name(p->bias_form), p->slope_dtype.name, p->product_dtype.name,
                     p->bias_dtype.name, p->bias_scale, p->logit_dtype.name, abl_softmax_kind_name(p->softmax),
                     abl_sum_order_name(p->sum), abl_exp_model_name(p->exp), abl_normalise_name(p->normalise), p->output_dtype.name);
    if (n > 0 && (size_t)n < buflen && p->softmax == ABL_SOFTMAX_FLASH)
        snprintf(buf + n, buflen - (size_t)n, ",head-dim=%d,block=%d", p->head_dim, p->block);
}
