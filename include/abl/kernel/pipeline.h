/* alibi-blind: real attention pipelines (spec §9). A pipeline fixes how a kernel builds the ALiBi
 * bias, in which dtypes it rounds the bias and the logits, how it computes the softmax and in which
 * dtype the weights come out, so that `simulate` can emulate every rounding step. docs/pipelines.md
 * gives each preset's public source (file and line). */
#ifndef ABL_PIPELINE_H
#define ABL_PIPELINE_H

#include <stddef.h>
#include "abl/core/status.h"
#include "abl/core/format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum abl_bias_form {
    ABL_BIAS_RELATIVE = 0,   /* -m (i - j) */
    ABL_BIAS_ABSOLUTE = 1,   /* +m j: one bias row for every query, relying on softmax shift invariance */
    ABL_BIAS_SYMMETRIC = 2,  /* -m |i - j| (encoders); the same values as relative under a causal mask */
    ABL_BIAS_TRAILING = 3,   /* -m (N - 1 - j): one bias row anchored at the last key (llm-foundry, causal) */
    ABL_BIAS_FORM_COUNT = 4
} abl_bias_form;

typedef enum abl_softmax_kind {
    /* e = fp32(exp(fp32(x - max))), S = sum of e (see abl_sum_order), r = fp32(1 / S),
     * p = fp32(e * r), then one round-to-nearest-even into the output dtype; subnormals kept. */
    ABL_SOFTMAX_EAGER = 0,
    /* FlashAttention-2: the bias is added in fp32 (fused multiply-add) with the slope divided by the
     * softmax scale, e = exp2(fma(x, scale*log2(e), -max*scale*log2(e))) flushed to zero below
     * 2^-126, P = e rounded into the output dtype before P.V; max is the running max over key
     * blocks processed from the diagonal block backwards. */
    ABL_SOFTMAX_FLASH = 1
} abl_softmax_kind;

typedef enum abl_sum_order {
    ABL_SUM_EXACT = 0,       /* the exact sum of the fp32 exponentials, rounded once to fp32 */
    ABL_SUM_SEQUENTIAL = 1,  /* fp32 additions in key order */
    ABL_SUM_VEC8 = 2,        /* PyTorch's vectorised reduce_all with 8 fp32 lanes (AVX2) */
    ABL_SUM_VEC16 = 3        /* the same with 16 lanes (AVX-512) */
} abl_sum_order;

typedef enum abl_exp_model {
    ABL_EXP_CORRECT = 0,     /* fp32(exp(y)) correctly rounded (the reference model) */
    ABL_EXP_SLEEF = 1        /* Sleef_expf8_u10 as PyTorch's CPU kernels call it (<= 1 ulp, bit-exact emulation) */
} abl_exp_model;

typedef enum abl_normalise {
    ABL_NORM_RECIPROCAL = 0, /* p = fp32(e * fp32(1 / S))  (PyTorch CPU) */
    ABL_NORM_DIVIDE = 1      /* p = fp32(e / S)            (PyTorch CUDA epilogue) */
} abl_normalise;

typedef struct abl_pipeline {
    char preset[24];            /* the preset it started from */
    abl_bias_form bias_form;
    abl_format slope_dtype;     /* the slopes as the code holds them: the exact slope rounded once */
    abl_format product_dtype;   /* slope and position are cast to it and multiplied in it */
    abl_format bias_dtype;      /* the stored bias (cast from the product) */
    char bias_scale[32];        /* exact decimal c: logit = dtype((score + bias) * fp32(c)); "1" = none */
    abl_format logit_dtype;     /* the logits the softmax reads */
    abl_softmax_kind softmax;
    abl_sum_order sum;
    abl_exp_model exp;          /* eager only; flash uses a correctly rounded exp2 */
    abl_normalise normalise;
    abl_format output_dtype;    /* eager: the probabilities; flash: P, the weights multiplied into V */
    int head_dim;               /* flash: softmax scale 1/sqrt(head_dim) */
    int block;                  /* flash: keys per block of the running max (0: the whole row) */
} abl_pipeline;

/* "eager, flash2, bloom-hf, falcon-rw-hf, mpt" */
const char *abl_pipeline_preset_names(void);
/* "bias-form, slope-dtype, ..." */
const char *abl_pipeline_field_names(void);

const char *abl_bias_form_name(abl_bias_form f);
const char *abl_softmax_kind_name(abl_softmax_kind k);
const char *abl_sum_order_name(abl_sum_order s);
const char *abl_normalise_name(abl_normalise n);
const char *abl_exp_model_name(abl_exp_model e);

/*
 * A preset; the dtypes a model runs in (the bias cast, the logits, the output) follow model_dtype
 * (NULL = bf16). ABL_ERR_INVALID_ARGUMENT for an unknown name.
 */
abl_status abl_pipeline_preset(const char *name, const abl_format *model_dtype, abl_pipeline *out);

/*
 * Override one field: bias-form, slope-dtype, product-dtype, bias-dtype, bias-scale, logit-dtype,
 * softmax, sum, exp, normalise, output-dtype, head-dim, block. A dtype value is a format name or "model".
 * On failure, err (if not NULL) gets one line naming the problem.
 */
abl_status abl_pipeline_set(abl_pipeline *p, const char *field, const char *value, const abl_format *model_dtype,
                            char *err, size_t errlen);

/* "preset[,field=value...]" (NULL or "" = eager). */
abl_status abl_pipeline_parse(const char *spec, const abl_format *model_dtype, abl_pipeline *out, char *err,
                              size_t errlen);

/*
 * Whether the emulator can run the pipeline: every dtype fits in binary32 (precision <= 24, exponent
 * range inside binary32's), the bias scale is positive, a flash pipeline keeps its bias in fp32.
 * ABL_ERR_UNSUPPORTED with a reason in err otherwise.
 */
abl_status abl_pipeline_check(const abl_pipeline *p, char *err, size_t errlen);

/* Canonical text of every field: "bias-form=relative,slope-dtype=fp32,...". */
void abl_pipeline_describe(const abl_pipeline *p, char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif
#endif
