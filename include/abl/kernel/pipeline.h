/* alibi-blind: real attention pipelines (spec §9). A pipeline fixes how a kernel builds the ALiBi
 * bias, in which dtypes it rounds the bias and the logits, how it computes the softmax and in which
 * dtype the weights come out, so that `simulate` can emulate every rounding step. docs/pipelines.md
 * gives each preset's public source (file and line). */
#ifndef ABL_PIPELINE_H
#define ABL_PIPELINE_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
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
    ABL_SOFTMAX_FLASH = 1,
    /* torch SDPA, memory-efficient (CUTLASS) kernel: y = fp32(x * fp32(log2 e)), keys in blocks of `block`
     * from key 0 upwards, running max mi; P = output-dtype(exp2(fp32(y - mi))) (the kernel's internal P
     * in the model dtype), accumulated in fp32 and rescaled by exp2(mi_old - mi_new) whenever the max
     * grows; the weight is output-dtype(fp32(acc * fp32(1 / s))), s the fp32 running row sum. */
    ABL_SOFTMAX_SDPA_EFFICIENT = 2,
    /* torch SDPA, cuDNN fused attention (closed source): the memory-efficient model with key tiles of 128, the
     * normalised fp32 output flushed to zero below 2^-126 (docs/pipelines.md: the model that explains
     * the H200 measurements). */
    ABL_SOFTMAX_SDPA_CUDNN = 3,
    /* ggml's CPU soft_max (llama.cpp, flash attention off; ggml_compute_forward_soft_max_f32):
     * x = fma(slope, mask, score), e = ggml's exp (field exp) of fp32(x - max), S the sum of per-vector
     * fp32 lane sums in binary64, p = fp32(e * fp32(1 / S)) (docs/pipelines.md) */
    ABL_SOFTMAX_GGML = 4,
    /* ggml's CPU flash attention (ggml_compute_forward_flash_attn_ext_f16, F16 K/V cache): the weight is
     * the coefficient of a unit value vector in the output (the key's influence), through the kernel
     * the field fa-kernel names (docs/pipelines.md) */
    ABL_SOFTMAX_GGML_FLASH = 5,
    /* Modelled from source, not measured (docs/pipelines.md §3c; CUDA intrinsics as documented, flush to
     * zero under -use_fast_math). ggml-cuda-vec: llama.cpp's CUDA flash-attention vector kernel (one query
     * row; F16 mask, FATTN_KQ_MAX_OFFSET, __expf, per-warp running max, fp32 V accumulator on NVIDIA);
     * vllm-paged: vLLM's paged-attention V1 kernel (__expf, __fdividef(1, sum + 1e-6), P in the model
     * dtype); trtllm-mmha: TensorRT-LLM's masked multi-head attention decode kernel (the same softmax,
     * 64/128/256 threads). The weight is the coefficient of a unit value vector in the output. */
    ABL_SOFTMAX_GGML_CUDA_VEC = 6,
    ABL_SOFTMAX_VLLM_PAGED = 7,
    ABL_SOFTMAX_TRTLLM_MMHA = 8,
    /* PyTorch FlexAttention (Triton template, causal block mask): y = fp32(x * fp32(1/ln 2)); the
     * partially masked (diagonal) KV block first, then the full blocks from key 0, in sub-blocks of
     * `block` keys, running max m; P = exp2(fp32(y - m)) flushed to zero below 2^-126 (ex2.approx.ftz),
     * rounded into the output dtype before P.V; the weight is that P (docs/pipelines.md §3f) */
    ABL_SOFTMAX_FLEX = 9,
    /* Modelled from source, not measured (docs/pipelines.md §3c): llama.cpp's CUDA soft_max_f32 (flash
     * attention off): x = fma(slope, mask, score), e = __expf(x - max), S the per-thread sums of a block of
     * min(1024, pow2 >= N) threads reduced by xor butterflies, p = fp32(e * rcp(S)); P.V is cuBLAS's (the
     * fields pv-dtype, pv-accumulate: fp16 for llama.cpp's F16 GEMM) */
    ABL_SOFTMAX_GGML_CUDA = 10,
    /* Modelled from source, not measured (docs/pipelines.md §3c): vLLM's Triton unified attention (2-D
     * kernel): x = fma(slope, j - context_len, score), tiles of `block` keys from key 0 with a running max,
     * P = ex2.approx.ftz of (x - max) log2 e in the model dtype, rescaled in fp32 by every later tile and
     * divided by L: the weight is that coefficient of a unit value vector (weight = influence) */
    ABL_SOFTMAX_VLLM_TRITON = 11,
    /* MosaicBERT's Triton flash attention (flash_attn_triton.py _fwd_kernel; modelled from source, not
     * measured): key blocks of `block` ascending from key 0, P = exp(x - m) with m the larger of the block's
     * max and the running log-sum-exp, rounded into the output dtype before P.V; the weight is that P
     * (docs/pipelines.md §3d) */
    ABL_SOFTMAX_TRITON_LSE = 12,
    /* Modelled from source, not measured (docs/pipelines.md §3c): TensorRT-LLM's context FMHA (fmha_v2 flash
     * attention, Ampere/Ada): x = fma(slope, j, score) (the absolute column bias), key tiles of `block` from
     * key 0 with a running max, P = __expf(x - max) in the model dtype, the accumulator (pv-accumulate: fp16
     * or fp32) rescaled by every later tile and by 1/sum at the end: the weight is that coefficient of a unit
     * value vector (weight = influence) */
    ABL_SOFTMAX_TRTLLM_FMHA = 13,
    ABL_SOFTMAX_KIND_COUNT = 14,
    /* Internal (no name; numbered 64, beyond every named kind present or to come, so that it is never
     * taken for one below ABL_SOFTMAX_KIND_COUNT): softmax=flash with splits resolved to S >= 2, as the
     * emulation runs it: FlashAttention-2's split-KV kernel and its combine (vLLM's fork; modelled from
     * source, not measured, docs/pipelines.md §3c): each split's O_s = acc * rcp(sum_s) and lse_s in fp32,
     * merged by expf(lse_s - lse_total); the weight is the coefficient of a unit value vector. */
    ABL_SOFTMAX_FLASH_SPLITKV = 64
} abl_softmax_kind;

/* Where the bias meets the scores, with c = bias-scale:
 *   scores: x = logit-dtype(fp32(fp32(s + b) * fp32(c)))                       (BLOOM, Falcon SDPA mask-free)
 *   mask:   x = logit-dtype(fp32(fp32(s * fp32(c)) + bias-dtype(fp32(b * fp32(c)))))   (a pre-scaled float mask)
 *   both:   x = logit-dtype(fp32(fp32(fp32(s + b) * fp32(c)) + bias-dtype(fp32(b * fp32(c)))))
 *           (transformers' Falcon eager path: alibi added to the scores and again inside the causal mask) */
typedef enum abl_bias_add {
    ABL_BIAS_ADD_SCORES = 0,
    ABL_BIAS_ADD_MASK = 1,
    ABL_BIAS_ADD_BOTH = 2,
    ABL_BIAS_ADD_COUNT = 3
} abl_bias_add;

/* How the code computes its slopes (held in slope-dtype):
 *   exact:     the exact slope of the schedule rounded once;
 *   torch-pow: torch.pow(fp32 base, k) of build_alibi_tensor (BLOOM, Falcon), modelled as the fp32 base
 *              raised exactly to k and rounded once (press schedule only);
 *   mpt-pow:   1.0 / torch.pow(2, fp32(k * fp32(B / H'))) (llm-foundry gen_slopes, transformers'
 *              build_mpt_alibi_tensor), each step rounded once to fp32, in the code's head order for any H
 *              (mpt:B schedules, or press, which is mpt:8). */
typedef enum abl_slope_calc {
    ABL_SLOPE_CALC_EXACT = 0,
    ABL_SLOPE_CALC_TORCH_POW = 1,
    ABL_SLOPE_CALC_MPT_POW = 2,
    /* ggml-powf: ggml's m0 = powf(2, -B/n), m1 = powf(2, -(B/2)/n), n = 2^floor(log2 H), slope of head h
     * (0-based) powf(m0, h + 1) for h < n, else powf(m1, 2(h - n) + 1); B = 8 for press, B for mpt:B;
     * each powf modelled as correctly rounded */
    ABL_SLOPE_CALC_GGML = 3,
    /* flex-exp2: the attention-gym ALiBi score_mod, exp2(-((h + 1) * 8.0 / H)) in fp32 inside the kernel
     * (h 0-based): RN32(2^-RN32(8(h+1)/H)), exp2 modelled as correctly rounded; press schedule only (for H
     * not a power of two these are not Press's slopes) */
    ABL_SLOPE_CALC_FLEX = 4,
    ABL_SLOPE_CALC_COUNT = 5
} abl_slope_calc;

/* An exact positive rational num/den (reduced), e.g. a bias scale. */
typedef struct abl_ratio {
    uint64_t num, den;
} abl_ratio;

typedef enum abl_sum_order {
    ABL_SUM_EXACT = 0,       /* the exact sum of the fp32 exponentials, rounded once to fp32 */
    ABL_SUM_SEQUENTIAL = 1,  /* fp32 additions in key order */
    ABL_SUM_VEC8 = 2,        /* PyTorch's vectorised reduce_all with 8 fp32 lanes (AVX2) */
    ABL_SUM_VEC16 = 3        /* the same with 16 lanes (AVX-512) */
} abl_sum_order;

typedef enum abl_exp_model {
    ABL_EXP_CORRECT = 0,     /* fp32(exp(y)) correctly rounded (the reference model) */
    ABL_EXP_SLEEF = 1,       /* Sleef_expf8_u10 as PyTorch's CPU kernels call it (<= 1 ulp, bit-exact emulation) */
    /* ggml_v_expf of an AVX2+FMA build (the same operations as the NEON and SSE+FMA variants), emulated
     * operation by operation; the soft_max sums 8 keys per vector (ggml_vec_soft_max_f32) */
    ABL_EXP_GGML_AVX2 = 2,
    /* a ggml build without SIMD: libm expf (modelled as correctly rounded), every key added in binary64 */
    ABL_EXP_GGML_SCALAR = 3,
    ABL_EXP_MODEL_COUNT = 4
} abl_exp_model;

/* ggml's flash-attention CPU kernels (ggml_compute_forward_flash_attn_ext_f16 picks one from the shape):
 * tiled (>= 64 query rows: prefill), one-chunk (the one-row kernel: F16 Q, libm expf, F16 accumulator),
 * split-kv (one query row with >= 512 keys: decode; the keys split into one chunk per thread, merged).
 * auto: what ggml picks for the query rows computed in one call (field rows, R; 0 = all N): tiled for
 * R >= 64, split-kv for R = 1 with N >= 512, one-chunk otherwise. */
typedef enum abl_fa_kernel {
    ABL_FA_AUTO = 0,
    ABL_FA_TILED = 1,
    ABL_FA_ONE_CHUNK = 2,
    ABL_FA_SPLIT_KV = 3,
    ABL_FA_KERNEL_COUNT = 4
} abl_fa_kernel;

typedef enum abl_normalise {
    ABL_NORM_RECIPROCAL = 0, /* p = fp32(e * fp32(1 / S))  (PyTorch CPU) */
    ABL_NORM_DIVIDE = 1      /* p = fp32(e / S)            (PyTorch CUDA epilogue) */
} abl_normalise;

typedef struct abl_pipeline {
    const char *preset;         /* the preset it started from (a static name; never user text) */
    abl_bias_form bias_form;
    abl_format slope_dtype;     /* the slopes as the code holds them: the exact slope rounded once */
    abl_format product_dtype;   /* slope and position are cast to it and multiplied in it */
    abl_format bias_dtype;      /* the stored bias (cast from the product) */
    abl_ratio bias_scale;       /* exact c (see abl_bias_add); 1/1 = none */
    abl_bias_add bias_add;      /* where the bias meets the scores */
    abl_slope_calc slope_calc;  /* how the code computes the slopes */
    abl_format logit_dtype;     /* the logits the softmax reads */
    abl_softmax_kind softmax;
    abl_sum_order sum;
    abl_exp_model exp;          /* eager only; flash uses a correctly rounded exp2 */
    abl_normalise normalise;
    abl_format output_dtype;    /* eager: the probabilities; flash: P, the weights multiplied into V */
    int head_dim;               /* flash: softmax scale 1/sqrt(head_dim) */
    int block;                  /* flash, sdpa-*: keys per block of the running max (0: the whole row) */
    abl_format mask_dtype;      /* ggml kinds: the mask -|i-j| as the kernel reads it (fp32, or fp16: exact to
                                 * 2048, rounded above, -inf from 65520) */
    abl_fa_kernel fa_kernel;    /* ggml-flash: the kernel */
    int threads;                /* ggml-flash, split-kv: ggml's thread count (one key chunk each) */
    int splits;                 /* flash: FlashAttention-2's num_splits (split-KV: splits merged by their lse);
                                 * 0: auto (vLLM's flash_attn_with_kvcache: the heuristic for 132 SMs at rows=1,
                                 * else 1); 1: the one-split kernel (flash2's model) */
    int rows;                   /* ggml kinds and the GPU engines: the query rows of one call, the last R of the
                                 * context (a decode step: 1); only those are emulated; 0: all N */
    int modelled;               /* 1: a preset modelled from the engine's source, not measured (every output
                                 * that uses it says so: abl_pipeline_modelled_note) */
    const char *version;        /* the code revision the pipeline answers for (field version; a static name,
                                 * see abl_pipeline_version_range) */
    /* P.V (docs/method.md, "influence"): the weight (output-dtype) is rounded into pv_dtype before it
     * multiplies V, and the products are added in pv_accumulate (fp32 or fp16). A key whose term
     * pv_accumulate(pv_dtype(w) * 1) is 0 has lost its influence on the output (unit-scale V) even
     * where its weight w is not 0. softmax=sdpa-efficient, sdpa-cudnn and ggml-flash emulate P.V
     * themselves (their weight is already the influence): the fields are not read there. */
    abl_format pv_dtype;
    abl_format pv_accumulate;
    /* bias-form=absolute, softmax=eager: the integer added to the key position before the product, so
     * that key j gets m * (j + bias_offset). 1 for Refact's remote code (get_alibi_biases: mask.cumsum,
     * 1 at key 0); 0 for every other preset. */
    int bias_offset;
} abl_pipeline;

/* "Pipeline <preset>: modelled from source, not measured ..." for a modelled preset, else NULL (static text). */
ABL_API const char *abl_pipeline_modelled_note(const abl_pipeline *p);

/* "eager, flash2, sdpa-efficient, ..." */
ABL_API const char *abl_pipeline_preset_names(void);
/* "bias-form, slope-dtype, ..." */
ABL_API const char *abl_pipeline_field_names(void);

ABL_API const char *abl_bias_form_name(abl_bias_form f);
ABL_API const char *abl_softmax_kind_name(abl_softmax_kind k);
ABL_API const char *abl_sum_order_name(abl_sum_order s);
ABL_API const char *abl_normalise_name(abl_normalise n);
ABL_API const char *abl_exp_model_name(abl_exp_model e);
ABL_API const char *abl_bias_add_name(abl_bias_add a);
ABL_API const char *abl_slope_calc_name(abl_slope_calc c);
ABL_API const char *abl_fa_kernel_name(abl_fa_kernel k);

/* One line per preset: name and what it models (for help texts), "name: text\n..." */
ABL_API const char *abl_pipeline_preset_help(void);

/* Exact rational from a positive decimal text ("0.125", "1e-3", "1/8" not accepted); ABL_ERR_BAD_NUMBER
 * when it is not a positive decimal, ABL_ERR_UNSUPPORTED when its reduced numerator or denominator
 * does not fit in 64 bits. */
ABL_API abl_status abl_ratio_parse(const char *text, abl_ratio *out);
/* "0.125" when the decimal expansion terminates (at most 40 digits after the point), else "1/3": a
 * malloc'd string, the caller's to free (NULL: out of memory). */
ABL_API char *abl_ratio_text(const abl_ratio *r);

/*
 * A preset; the dtypes a model runs in (the bias cast, the logits, the output) follow model_dtype
 * (NULL = bf16). ABL_ERR_INVALID_ARGUMENT for an unknown name.
 */
ABL_API abl_status abl_pipeline_preset(const char *name, const abl_format *model_dtype, abl_pipeline *out);

/*
 * Override one field: bias-form, slope-dtype, slope-calc, product-dtype, bias-dtype, bias-scale,
 * bias-add, logit-dtype, softmax, sum, exp, normalise, output-dtype, head-dim, block, mask-dtype,
 * fa-kernel, threads, rows, pv-dtype, pv-accumulate. A dtype value is a
 * format name or "model". abl_pipeline_parse_msg reads "preset[,field=value...]" (NULL or "" = eager).
 * abl_pipeline_check_msg: whether the emulator can run the pipeline (every dtype fits in binary32,
 * precision <= 24 and binary32's exponent range; the bias scale is positive; a flash pipeline keeps its
 * bias in fp32; pv-accumulate is fp32 or fp16), ABL_ERR_UNSUPPORTED otherwise.
 * On failure *msg (msg not NULL) gets one line naming the problem: malloc'd, whole however long the
 * user's text it quotes (control characters become '?'); the caller frees it. *msg stays NULL on
 * success, when msg is NULL, or when even the message could not be allocated.
 */
ABL_API abl_status abl_pipeline_set_msg(abl_pipeline *p, const char *field, const char *value, const abl_format *model_dtype,
                                char **msg);
ABL_API abl_status abl_pipeline_parse_msg(const char *spec, const abl_format *model_dtype, abl_pipeline *out, char **msg);
ABL_API abl_status abl_pipeline_check_msg(const abl_pipeline *p, char **msg);

/* A pipeline as a value independent of the model dtype (issue 17: parsed once, at the boundary): the
 * preset and its field overrides, typed. abl_pipeline_build instantiates it for one model dtype without
 * reading text (the fraction plot draws several dtypes from one description). */
typedef enum abl_pipeline_field {
    ABL_PF_BIAS_FORM = 0,
    ABL_PF_SLOPE_DTYPE,
    ABL_PF_SLOPE_CALC,
    ABL_PF_PRODUCT_DTYPE,
    ABL_PF_BIAS_DTYPE,
    ABL_PF_BIAS_SCALE,
    ABL_PF_BIAS_ADD,
    ABL_PF_LOGIT_DTYPE,
    ABL_PF_SOFTMAX,
    ABL_PF_SUM,
    ABL_PF_EXP,
    ABL_PF_NORMALISE,
    ABL_PF_OUTPUT_DTYPE,
    ABL_PF_HEAD_DIM,
    ABL_PF_BLOCK,
    ABL_PF_MASK_DTYPE,
    ABL_PF_FA_KERNEL,
    ABL_PF_THREADS,
    ABL_PF_ROWS,
    ABL_PF_VERSION,
    ABL_PF_PV_DTYPE,
    ABL_PF_PV_ACCUMULATE,
    ABL_PF_SPLITS,
    ABL_PF_BIAS_OFFSET
} abl_pipeline_field;

typedef struct abl_pipeline_override {
    abl_pipeline_field field;
    int model;            /* a dtype field set to "model": the dtype the description is built for */
    abl_format dtype;     /* a dtype field's format (model == 0) */
    int value;            /* an enum field's value, head-dim, block */
    abl_ratio ratio;      /* bias-scale */
} abl_pipeline_override;

typedef struct abl_pipeline_spec {
    char *text;                        /* its name as shown in outputs: the text given ("eager" for none) */
    const char *preset;                /* the preset's canonical name (static) */
    abl_pipeline_override *overrides;  /* applied in order after the preset */
    size_t noverrides;
} abl_pipeline_spec;

/* "preset[,field=value...]" (NULL or "" = eager) into a description; errors as abl_pipeline_parse_msg's.
 * The caller frees it with abl_pipeline_spec_free (also after a failure). */
ABL_API abl_status abl_pipeline_spec_parse(const char *text, abl_pipeline_spec *out, char **msg);
/* A deep copy (ABL_ERR_NO_MEMORY). */
ABL_API abl_status abl_pipeline_spec_copy(const abl_pipeline_spec *src, abl_pipeline_spec *out);
ABL_API void abl_pipeline_spec_free(abl_pipeline_spec *s);
/* The pipeline for one model dtype (NULL = bf16); s NULL: eager. No text is read. */
ABL_API abl_status abl_pipeline_build(const abl_pipeline_spec *s, const abl_format *model_dtype, abl_pipeline *out);

/* The revision range a preset's version models ("transformers 00dcc6dd .. 5.17.0: ..."), for help texts and
 * outputs; version NULL: the preset's newest (the default). NULL when the preset or version is unknown. */
ABL_API const char *abl_pipeline_version_range(const char *preset, const char *version);
/* The versions of a preset, newest first: "00dcc6dd, 44272086" (static; NULL for an unknown preset). */
ABL_API const char *abl_pipeline_version_names(const char *preset);

/* Canonical text of every field: "bias-form=relative,slope-dtype=fp32,...", whole: a malloc'd string,
 * the caller's to free (NULL: out of memory). */
ABL_API char *abl_pipeline_describe(const abl_pipeline *p);

#ifdef __cplusplus
}
#endif
#endif
