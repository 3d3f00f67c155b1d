/* alibi-blind: pipeline presets and their field overrides (docs/pipelines.md cites the code each
 * preset models). */
#include <errno.h>
#include <gmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "abl/core/decimal.h"
#include "abl/kernel/pipeline.h"
#include "abl_internal.h"
#include "kernel/abl_kernel_internal.h"

static const char *const k_forms[ABL_BIAS_FORM_COUNT] = {"relative", "absolute", "symmetric", "trailing"};
static const char *const k_softmax[ABL_SOFTMAX_KIND_COUNT] = {"eager", "flash", "sdpa-efficient", "sdpa-cudnn",
                                                              "ggml", "ggml-flash", "ggml-cuda-vec",
                                                              "vllm-paged", "trtllm-mmha", "flex", "ggml-cuda", "vllm-triton",
                                                              "triton-lse", "trtllm-fmha"};
static const char *const k_sums[] = {"exact", "sequential", "vec8", "vec16"};
static const char *const k_norms[] = {"reciprocal", "divide"};
static const char *const k_exps[ABL_EXP_MODEL_COUNT] = {"correct", "sleef", "ggml-avx2", "ggml-scalar"};
static const char *const k_adds[ABL_BIAS_ADD_COUNT] = {"scores", "mask", "both"};
static const char *const k_calcs[ABL_SLOPE_CALC_COUNT] = {"exact", "torch-pow", "mpt-pow", "ggml-powf",
                                                                  "flex-exp2"};
static const char *const k_fa_kernels[ABL_FA_KERNEL_COUNT] = {"auto", "tiled", "one-chunk", "split-kv"};

const char *abl_pipeline_preset_names(void)
{
    return "eager, flash2, sdpa-efficient, sdpa-cudnn, bloom-hf, falcon-hf-eager, falcon-hf-sdpa, falcon-rw-hf, "
           "mpt, mpt-hf, llamacpp-cpu, llamacpp-cpu-fa, llamacpp-cuda-fa, vllm-paged, trtllm-decode, flex-alibi, "
           "llamacpp-cuda, vllm-flash, vllm-triton, mosaicbert-triton, trtllm-context, refact-hf";
}

const char *abl_pipeline_preset_help(void)
{
    return "eager: relative bias in fp32 cast to the model dtype, torch softmax(dtype=float32) (= SDPA MATH)\n"
           "flash2: FlashAttention-2 with alibi_slopes (exp2 flushed below 2^-126, P in the model dtype)\n"
           "sdpa-efficient: the eager bias as a float mask through SDPA's memory-efficient kernel\n"
           "sdpa-cudnn: the eager bias as a float mask through SDPA's cuDNN kernel (closed source; model "
           "fitted to its H200 measurements)\n"
           "bloom-hf: transformers BloomModel (torch.pow slopes, m*j in fp32 cast to the model dtype)\n"
           "falcon-hf-eager: transformers FalconModel, eager: alibi/8 added twice (scores and mask): m/4\n"
           "falcon-hf-sdpa: transformers FalconModel, SDPA: alibi/8 in the float mask (m/8), efficient kernel\n"
           "falcon-rw-hf: alias of falcon-hf-sdpa\n"
           "mpt: llm-foundry MPT (trailing bias cast to the model dtype, softmax in the model dtype)\n"
           "mpt-hf: transformers MptModel (trailing bias kept in fp32, fp32 softmax, weights cast)\n"
           "llamacpp-cpu: llama.cpp/ggml CPU, flash attention off (ggml soft_max_f32: powf slopes, F32 mask, "
           "ggml_v_expf AVX2, binary64 sum; ggml@d99724f2, measured)\n"
           "llamacpp-cpu-fa: llama.cpp/ggml CPU, flash attention on (flash_attn_ext_f16: F16 mask, F16 K/V; "
           "fa-kernel=auto|tiled|one-chunk|split-kv, threads=T; weight = influence; ggml@d99724f2, measured)\n"
           "llamacpp-cuda-fa: llama.cpp CUDA, flash attention on, decode (flash_attn_ext_vec: F16 mask, "
           "KQ max offset, __expf, fp32 V accumulator; rows=1; weight = influence; modelled from source, not "
           "measured)\n"
           "vllm-paged: vLLM paged attention V1 decode (torch.pow slopes, __expf, __fdividef(1, sum + 1e-6), P in "
           "the model dtype; rows=1; modelled from source, not measured)\n"
           "trtllm-decode: TensorRT-LLM masked MHA decode (slopes in the model dtype, __expf, __fdividef, P in "
           "the model dtype; rows=1; modelled from source, not measured)\n"

           "flex-alibi: PyTorch FlexAttention with attention-gym's ALiBi score_mod (exp2 slopes in the kernel, "
           "diagonal block first, exp2 flushed below 2^-126, P in the model dtype; modelled from source, not "
           "measured)\n"
           "llamacpp-cuda: llama.cpp CUDA, flash attention off (soft_max_f32: F32 mask, __expf, xor-butterfly "
           "sums, 1/sum approximate; P in fp16 for cuBLAS's fp16 GEMM, fp16 compute; llama.cpp@07003f1f; modelled "
           "from source, not measured)\n"
           "vllm-flash: vLLM's FlashAttention-2 fork (the flash2 arithmetic: slope/scale * col, exp2 flushed below "
           "2^-126, P in the model dtype) with vLLM's torch.pow slopes; splits=auto|S: a decode row (rows=1) "
           "runs flash_attn_with_kvcache's split-KV kernel with num_splits_heuristic's count for 132 SMs, each "
           "split's O and lse in fp32 merged by __expf(lse_s - lse) (weight = influence); a prompt one split; "
           "flash-attention@617264c1; modelled from source, not measured)\n"
           "vllm-triton: vLLM's Triton unified attention (bias slope * (j - context_len), 2-D kernel: tiles of 32 "
           "from key 0, exp2 flushed below 2^-126, P in the model dtype rescaled in fp32; weight = influence; "
           "rows=R: a chunk of R queries; a decode step, rows=1, runs the 3-D kernel as vLLM does for <= 128 "
           "heads: splits=auto (16 segments of 16-key tiles, each with its own max and sum, merged by "
           "reduce_segments) | 1 (2-D) | S; vLLM@001ceb3e; modelled from source, not measured)\n"
           "mosaicbert-triton: MosaicBERT's Triton flash attention (fp32 alibi bias, 128-key blocks from key 0, "
           "P against the running log-sum-exp, P in the model dtype; modelled from source, not measured)\n"
           "trtllm-context: TensorRT-LLM context FMHA (fmha_v2 flash attention, Ampere/Ada: exp2f slopes, bias "
           "slope * j, 128-key tiles from key 0, __expf, P in the model dtype; fp16 accumulator for fp16, "
           "pv-accumulate=fp32 = context_fmha_fp32_acc; weight = influence; modelled from source, not measured)\n"
           "refact-hf: Refact-1.6B's transformers remote code (torch.pow slopes, the absolute bias m*(j+1) from "
           "mask.cumsum in fp32 cast to the model dtype: bias-offset=1; fp32 softmax, weights in the model dtype)\n";
}

const char *abl_pipeline_field_names(void)
{
    return "bias-form, slope-dtype, slope-calc, product-dtype, bias-dtype, bias-scale, bias-add, logit-dtype, "
           "softmax, sum, exp, normalise, output-dtype, head-dim, block, mask-dtype, fa-kernel, threads, rows, pv-dtype, "
           "pv-accumulate, version, splits, bias-offset";
}

const char *abl_bias_form_name(abl_bias_form f)
{
    return (unsigned)f < ABL_BIAS_FORM_COUNT ? k_forms[f] : "?";
}

const char *abl_softmax_kind_name(abl_softmax_kind k)
{
    return (unsigned)k < ABL_SOFTMAX_KIND_COUNT ? k_softmax[k] : "?";
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
    return (unsigned)e < ABL_EXP_MODEL_COUNT ? k_exps[e] : "?";
}

const char *abl_fa_kernel_name(abl_fa_kernel k)
{
    return (unsigned)k < ABL_FA_KERNEL_COUNT ? k_fa_kernels[k] : "?";
}

const char *abl_bias_add_name(abl_bias_add a)
{
    return (unsigned)a < ABL_BIAS_ADD_COUNT ? k_adds[a] : "?";
}

const char *abl_slope_calc_name(abl_slope_calc c)
{
    return (unsigned)c < ABL_SLOPE_CALC_COUNT ? k_calcs[c] : "?";
}

/* ---- exact ratios ---- */

abl_status abl_ratio_parse(const char *text, abl_ratio *out)
{
    if (text == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    mpq_t q;
    mpq_init(q);
    abl_status st = abl_decimal_to_mpq(text, q);
    if (st == ABL_OK && mpq_sgn(q) <= 0)
        st = ABL_ERR_BAD_NUMBER;
    if (st == ABL_OK && (mpz_sizeinbase(mpq_numref(q), 2) > 64 || mpz_sizeinbase(mpq_denref(q), 2) > 64))
        st = ABL_ERR_UNSUPPORTED;
    if (st == ABL_OK) {
        uint64_t v[2] = {0, 0};
        mpz_export(&v[0], NULL, -1, sizeof v[0], 0, 0, mpq_numref(q));
        mpz_export(&v[1], NULL, -1, sizeof v[1], 0, 0, mpq_denref(q));
        out->num = v[0];
        out->den = v[1];
    } else if (st != ABL_ERR_UNSUPPORTED) {
        st = ABL_ERR_BAD_NUMBER;
    }
    mpq_clear(q);
    return st;
}

char *abl_ratio_text(const abl_ratio *r)
{
    uint64_t den = r->den;
    int twos = 0, fives = 0;
    while (den % 2 == 0 && den > 1) {
        den /= 2;
        twos++;
    }
    while (den % 5 == 0 && den > 1) {
        den /= 5;
        fives++;
    }
    int digits = twos > fives ? twos : fives;
    if (den != 1 || digits > 40)
        return abl_strf("%llu/%llu", (unsigned long long)r->num, (unsigned long long)r->den);
    mpz_t z, d;
    mpz_init(z);
    mpz_init(d);
    mpz_import(z, 1, -1, sizeof r->num, 0, 0, &r->num);
    mpz_import(d, 1, -1, sizeof r->den, 0, 0, &r->den);
    mpz_ui_pow_ui(d, 10, (unsigned long)digits);
    mpz_mul(z, z, d);
    mpz_import(d, 1, -1, sizeof r->den, 0, 0, &r->den);
    mpz_divexact(z, z, d);                       /* value * 10^digits, an integer */
    char *t = mpz_get_str(NULL, 10, z);
    size_t n = strlen(t), dg = (size_t)digits;
    char *out;
    if (dg == 0)
        out = abl_strf("%s", t);
    else if (n > dg)
        out = abl_strf("%.*s.%s", (int)(n - dg), t, t + n - dg);
    else /* 0.000ddd: dg - n zeros, at most 40 */
        out = abl_strf("0.%.*s%s", (int)(dg - n), "0000000000000000000000000000000000000000", t);
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(t, n + 1);
    mpz_clear(z);
    mpz_clear(d);
    return out;
}

static abl_format named(const char *name)
{
    abl_format f;
    memset(&f, 0, sizeof f);
    (void)abl_format_lookup(name, &f);
    return f;
}

/* The dtypes a preset names: the model's, or a fixed format. */
enum { DT_MODEL, DT_FP32, DT_BF16, DT_FP16 };

/* One preset: every field that differs from eager's. docs/pipelines.md cites the code behind each row. */
typedef struct preset_def {
    const char *name;
    unsigned char form, product, bias, logit, output, mask; /* abl_bias_form; DT_* */
    unsigned char pv, pv_acc;                               /* DT_*: P rounded before P.V, its accumulator */
    unsigned char add, calc, softmax, exp;                  /* abl_bias_add, abl_slope_calc, abl_softmax_kind,
                                                             * abl_exp_model */
    unsigned char scale_den;                                /* bias-scale 1/den */
    short head_dim, block;
    unsigned char modelled;                                 /* modelled from source, not measured */
    int rows;                                               /* the query rows of one call (0: all) */
    unsigned char slope_model;                              /* slope-dtype: the model's (else fp32) */
} preset_def;

/* In the order the help lists them. Why each row is what it is:
 * eager: -m(i-j) built in fp32, cast to the model dtype, softmax(dtype=float32).to(model).
 * sdpa-*: the eager bias as a float attn_mask in the model dtype, added to the fp32 scores inside the
 *   kernel (kernel_forward.h: accum += bias); kKeysPerBlock 64 at head dim 64, cuDNN's tile 128.
 * flash2: FlashAttention-2, causal: +slope/scale * col in fp32; kBlockN = 64 for head dim 128 (A100).
 * bloom-hf: build_alibi_tensor: torch.pow slopes * positions in fp32, .to(dtype); baddbmm in the model dtype.
 * falcon-hf-eager: torch.pow slopes .bfloat16() * positions (bf16 product), .to(dtype); alibi/sqrt(64)
 *   in the mask and alibi added to the fp32 scores before the 1/sqrt(64) scale: the bias counts twice.
 * falcon-hf-sdpa (= falcon-rw-hf): only the mask alibi/sqrt(64) reaches the SDPA kernel: m/8.
 * mpt: build_alibi_bias (causal): slopes * (j - (N-1)) in fp32, .to(dtype); softmax in the model dtype.
 * mpt-hf: build_mpt_alibi_tensor, 1/torch.pow(2, k*8/H') slopes, bias kept in fp32, fp32 softmax.
 * llamacpp-cpu: ggml soft_max_f32 with llama.cpp's F32 mask -|i-j|, everything in fp32.
 * llamacpp-cpu-fa: ggml flash_attn_ext_f16; llama.cpp casts the mask to F16 when flash attention is on.
 * The GPU engines below are modelled from source, not measured (.modelled = 1; docs/pipelines.md §3c):
 * llamacpp-cuda-fa: fattn-vec.cuh flash_attn_ext_vec, the one-row (decode) kernel, F16 mask, fp32 weights.
 * vllm-paged: paged_attention_kernel (V1): BLOOM's torch.pow slopes (vLLM's _get_alibi_slopes), fp32 bias
 *   slope * (j - i), P converted to the model dtype.
 * trtllm-decode: decoderMaskedMultiheadAttentionTemplate.h: slopes held in the model dtype (T).
 * flex-alibi: attention-gym's alibi_mod, bias (kv_idx - q_idx) * exp2(-(h+1)*8/H): an int32 distance times the
 *   fp32 slope (fp32 product) added to the fp32 score; the Triton template's P in the query dtype
 *   (MATMUL_PRECISION); BLOCK_N 64
 *   (the H100/H200 default for bf16/fp16 at head dim 128).
 * P.V (pv, pv_acc; docs/pipelines.md "P.V"): PyTorch's eager paths cast the probabilities to the model dtype
 *   and matmul them with fp32 accumulation (cuBLAS/CPU GEMM); FlashAttention-2 converts P to the element type
 *   before its fp32-accumulating MMA; the SDPA kernels hold P in the model dtype; ggml's mul_mat converts the
 *   fp32 soft_max output to F16 (vec_dot_type of the F16 V cache) and ggml_vec_dot_f16 accumulates in fp32;
 *   ggml-flash, the GPU engines and flex emulate the P.V they do themselves (the fields are not read). */
static const preset_def k_preset_defs[] = {
    {"eager", ABL_BIAS_RELATIVE, DT_FP32, DT_MODEL, DT_MODEL, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_SCORES,
     ABL_SLOPE_CALC_EXACT, ABL_SOFTMAX_EAGER, ABL_EXP_CORRECT, 1, 128, 0, 0, 0, 0},
    {"flash2", ABL_BIAS_ABSOLUTE, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_SCORES,
     ABL_SLOPE_CALC_EXACT, ABL_SOFTMAX_FLASH, ABL_EXP_CORRECT, 1, 128, 64, 0, 0, 0},
    {"sdpa-efficient", ABL_BIAS_RELATIVE, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_MASK,
     ABL_SLOPE_CALC_EXACT, ABL_SOFTMAX_SDPA_EFFICIENT, ABL_EXP_CORRECT, 1, 64, 64, 0, 0, 0},
    {"sdpa-cudnn", ABL_BIAS_RELATIVE, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_MASK,
     ABL_SLOPE_CALC_EXACT, ABL_SOFTMAX_SDPA_CUDNN, ABL_EXP_CORRECT, 1, 64, 128, 0, 0, 0},
    {"bloom-hf", ABL_BIAS_ABSOLUTE, DT_FP32, DT_MODEL, DT_MODEL, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_SCORES,
     ABL_SLOPE_CALC_TORCH_POW, ABL_SOFTMAX_EAGER, ABL_EXP_CORRECT, 1, 128, 0, 0, 0, 0},
    {"falcon-hf-eager", ABL_BIAS_ABSOLUTE, DT_BF16, DT_MODEL, DT_MODEL, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_BOTH,
     ABL_SLOPE_CALC_TORCH_POW, ABL_SOFTMAX_EAGER, ABL_EXP_CORRECT, 8, 64, 0, 0, 0, 0},
    {"falcon-hf-sdpa", ABL_BIAS_ABSOLUTE, DT_BF16, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_MASK,
     ABL_SLOPE_CALC_TORCH_POW, ABL_SOFTMAX_SDPA_EFFICIENT, ABL_EXP_CORRECT, 8, 64, 64, 0, 0, 0},
    {"falcon-rw-hf", ABL_BIAS_ABSOLUTE, DT_BF16, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_MASK,
     ABL_SLOPE_CALC_TORCH_POW, ABL_SOFTMAX_SDPA_EFFICIENT, ABL_EXP_CORRECT, 8, 64, 64, 0, 0, 0},
    {"mpt", ABL_BIAS_TRAILING, DT_FP32, DT_MODEL, DT_MODEL, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_SCORES,
     ABL_SLOPE_CALC_EXACT, ABL_SOFTMAX_EAGER, ABL_EXP_CORRECT, 1, 128, 0, 0, 0, 0},
    {"mpt-hf", ABL_BIAS_TRAILING, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32, ABL_BIAS_ADD_SCORES,
     ABL_SLOPE_CALC_MPT_POW, ABL_SOFTMAX_EAGER, ABL_EXP_CORRECT, 1, 128, 0, 0, 0, 0},
    {"llamacpp-cpu", ABL_BIAS_RELATIVE, DT_FP32, DT_FP32, DT_FP32, DT_FP32, DT_FP32, DT_FP16, DT_FP32, ABL_BIAS_ADD_SCORES,
     ABL_SLOPE_CALC_GGML, ABL_SOFTMAX_GGML, ABL_EXP_GGML_AVX2, 1, 128, 0, 0, 0, 0},
    {"llamacpp-cpu-fa", ABL_BIAS_RELATIVE, DT_FP32, DT_FP32, DT_FP32, DT_FP32, DT_FP16, DT_FP32, DT_FP32, ABL_BIAS_ADD_SCORES,
     ABL_SLOPE_CALC_GGML, ABL_SOFTMAX_GGML_FLASH, ABL_EXP_GGML_AVX2, 1, 128, 0, 0, 0, 0},
    {"llamacpp-cuda-fa", ABL_BIAS_RELATIVE, DT_FP32, DT_FP32, DT_FP32, DT_FP32, DT_FP16, DT_FP32, DT_FP32,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_GGML, ABL_SOFTMAX_GGML_CUDA_VEC, ABL_EXP_CORRECT, 1, 128, 0, .modelled = 1, .rows = 1},
    {"vllm-paged", ABL_BIAS_RELATIVE, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_TORCH_POW, ABL_SOFTMAX_VLLM_PAGED, ABL_EXP_CORRECT, 1, 128, 0, .modelled = 1, .rows = 1},
    {"trtllm-decode", ABL_BIAS_RELATIVE, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_EXACT, ABL_SOFTMAX_TRTLLM_MMHA, ABL_EXP_CORRECT, 1, 128, 0, .modelled = 1, .rows = 1,
     .slope_model = 1},
    {"flex-alibi", ABL_BIAS_RELATIVE, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_FLEX, ABL_SOFTMAX_FLEX, ABL_EXP_CORRECT, 1, 128, 64, .modelled = 1},
    /* llamacpp-cuda: soft_max_f32 (softmax.cu) on llama.cpp's F32 mask, every query row (the prompt: the
     *   batched cuBLAS GEMM that takes P in fp16 with CUBLAS_COMPUTE_16F, GGML_PREC_DEFAULT).
     * vllm-flash: vLLM's flash-attention fork, whose alibi.h and softmax are FlashAttention-2's; vLLM's
     *   _get_alibi_slopes (torch.pow), paged KV (addresses only); splits auto: one for a prompt (vLLM's
     *   flash_attn_varlen_func never splits with ALiBi), num_splits_heuristic for a decode row (rows=1:
     *   flash_attn_with_kvcache), abl_flash_split.c. */
    {"llamacpp-cuda", ABL_BIAS_RELATIVE, DT_FP32, DT_FP32, DT_FP32, DT_FP32, DT_FP32, DT_FP16, DT_FP16,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_GGML, ABL_SOFTMAX_GGML_CUDA, ABL_EXP_CORRECT, 1, 128, 0, .modelled = 1},
    {"vllm-flash", ABL_BIAS_ABSOLUTE, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_TORCH_POW, ABL_SOFTMAX_FLASH, ABL_EXP_CORRECT, 1, 128, 64, .modelled = 1},
    /* vllm-triton: kernel_unified_attention_2d, TILE_SIZE_PREFILL 32; the whole prompt one chunk (rows=0:
     *   context_len 0, the bias slope * j); P.to(V.dtype) into an fp32 acc. splits auto: a decode step (rows=1)
     *   runs kernel_unified_attention_3d + reduce_segments (abl_engines_triton.c), as unified_attention does. */
    {"vllm-triton", ABL_BIAS_ABSOLUTE, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_TORCH_POW, ABL_SOFTMAX_VLLM_TRITON, ABL_EXP_CORRECT, 1, 128, 32, .modelled = 1},
    /* mosaicbert-triton: bert_layers.py's fp32 alibi (never cast) + the fp32 mask, loaded .to(tl.float32) and
     * added to the fp32 scores in flash_attn_triton.py's _fwd_kernel; BLOCK_N 128; P.to(v.dtype) */
    {"mosaicbert-triton", ABL_BIAS_SYMMETRIC, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_EXACT, ABL_SOFTMAX_TRITON_LSE, ABL_EXP_CORRECT, 1, 64, 128, .modelled = 1},
    /* trtllm-context: fmha_v2's flash attention (Ampere/Ada) for an ALiBi context call: the slopes
     *   exp2f((h+1) * 2 * (-4/h_pow_2)) (Press's set, interleaved past a power of two) computed in the kernel
     *   in fp32 (exact exponent: the slope rounded once), + m * col on the fp32 score, Cta_tile_p::N = 128 key
     *   tiles (the sm80 tiled kernels' step_kv); P packed into the model dtype; the accumulator fp16 for fp16
     *   (force_fp32_acc only for bf16/fp8 or context_fmha_fp32_acc), fp32 for bf16 (set in
     *   abl_pipeline_preset). The kernel emulates P.V (abl_engines_trtllm.c). */
    {"trtllm-context", ABL_BIAS_ABSOLUTE, DT_FP32, DT_FP32, DT_FP32, DT_MODEL, DT_FP32, DT_MODEL, DT_MODEL,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_EXACT, ABL_SOFTMAX_TRTLLM_FMHA, ABL_EXP_CORRECT, 1, 128, 128, .modelled = 1},
    /* refact-hf: Refact-1.6B's remote code (modeling_gpt_refact.py, docs/models.md): _get_slopes
     *   torch.pow(2^(-8/n), arange(1, 1 + n)) in fp32 (torch-pow); get_alibi_biases: distance = mask.cumsum(-1),
     *   1 at key 0 (bias-offset=1), int64 distance * fp32 slope (fp32 product), .to(dtype); alibi + the scaled
     *   scores in the model dtype; softmax with fp32 arithmetic, the weights in the model dtype; head dim 64. */
    {"refact-hf", ABL_BIAS_ABSOLUTE, DT_FP32, DT_MODEL, DT_MODEL, DT_MODEL, DT_FP32, DT_MODEL, DT_FP32,
     ABL_BIAS_ADD_SCORES, ABL_SLOPE_CALC_TORCH_POW, ABL_SOFTMAX_EAGER, ABL_EXP_CORRECT, 1, 64, 0, 0, 0, 0},
};

/* The preset's definition by name (any case), NULL when unknown. */
static const preset_def *preset_find(const char *name)
{
    for (size_t k = 0; k < sizeof k_preset_defs / sizeof k_preset_defs[0]; k++)
        if (strcasecmp(name, k_preset_defs[k].name) == 0)
            return &k_preset_defs[k];
    return NULL;
}


static abl_format preset_dtype(int sel, const abl_format *model)
{
    static const char *const names[] = {NULL, "fp32", "bf16", "fp16"};
    return sel == DT_MODEL ? *model : named(names[sel]);
}

abl_status abl_pipeline_preset(const char *name, const abl_format *model_dtype, abl_pipeline *out)
{
    const preset_def *d = name != NULL ? preset_find(name) : NULL;
    if (d == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_format model = model_dtype ? *model_dtype : named("bf16");
    abl_pipeline p;
    memset(&p, 0, sizeof p);
    p.preset = d->name;
    p.bias_form = (abl_bias_form)d->form;
    p.slope_dtype = d->slope_model ? model : named("fp32");
    p.product_dtype = preset_dtype(d->product, &model);
    p.bias_dtype = preset_dtype(d->bias, &model);
    p.logit_dtype = preset_dtype(d->logit, &model);
    p.output_dtype = preset_dtype(d->output, &model);
    p.mask_dtype = preset_dtype(d->mask, &model);
    p.pv_dtype = preset_dtype(d->pv, &model);
    p.pv_accumulate = preset_dtype(d->pv_acc, &model);
    p.bias_scale.num = 1;
    p.bias_scale.den = d->scale_den;
    p.bias_add = (abl_bias_add)d->add;
    p.slope_calc = (abl_slope_calc)d->calc;
    p.softmax = (abl_softmax_kind)d->softmax;
    p.exp = (abl_exp_model)d->exp;
    p.sum = ABL_SUM_EXACT;
    p.normalise = ABL_NORM_RECIPROCAL;
    p.head_dim = d->head_dim;
    p.block = d->block;
    p.fa_kernel = ABL_FA_AUTO;
    p.threads = 1;
    p.rows = d->rows;
    /* flash's num_splits: vllm-flash decides as vLLM's calls do (0: auto, abl_flash_split.c); every other
     * preset runs the one-split kernel (kept out of the table so its rows stay as they are) */
    p.splits = strcmp(d->name, "vllm-flash") == 0 || strcmp(d->name, "vllm-triton") == 0 ? 0 : 1;
    p.modelled = d->modelled;
    /* refact-hf's cumulative-count positions (bias-offset=1; kept out of the table so its rows stay as they are) */
    p.bias_offset = strcmp(d->name, "refact-hf") == 0;
    p.version = abl_version_default(d->name);
    if (p.softmax == ABL_SOFTMAX_TRTLLM_FMHA && strcmp(model.name, "fp16") != 0)
        p.pv_accumulate = named("fp32");   /* fmhaRunner: BF16 FMHA only accumulates on FP32 */
    *out = p;
    return ABL_OK;
}

static int lookup(const char *const *names, int n, const char *text)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(names[i], text) == 0)
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

/* A dtype field's override: the format named, or the model dtype ("model"). */
static abl_status override_dtype(const char *field, const char *value, abl_pipeline_override *o, char **msg)
{
    if (strcasecmp(value, "model") == 0) {
        o->model = 1;
        return ABL_OK;
    }
    if (abl_format_lookup(value, &o->dtype) != ABL_OK) {
        abl_error_dup(msg, "%s: unknown floating-point format '%s' (known: %s, eXmY, or model)", field, value,
                      abl_format_names());
        return ABL_ERR_UNKNOWN_DTYPE;
    }
    return ABL_OK;
}

/* An enumerated field's override: the value's index in names, or msg "FIELD: unknown WHAT ..." */
static abl_status override_enum(const char *const *names, int n, const char *field, const char *what,
                                const char *value, abl_pipeline_override *o, char **msg)
{
    int k = lookup(names, n, value);
    if (k < 0) {
        abl_text known = {0};
        for (int i = 0; i < n; i++)
            abl_text_add(&known, "%s%s", i > 0 ? ", " : "", names[i]);
        char *t = abl_text_take(&known);
        abl_error_dup(msg, "%s: unknown %s '%s' (known: %s)", field, what, value, t != NULL ? t : "?");
        free(t);
        return ABL_ERR_INVALID_ARGUMENT;
    }
    o->value = k;
    return ABL_OK;
}

static abl_status override_number(abl_pipeline_override *o, const char *value, char **msg)
{
    long v;
    if (o->field == ABL_PF_HEAD_DIM) {
        if (!parse_int(value, 1, ABL_MAX_HEAD_DIM, &v)) {
            abl_error_dup(msg, "head-dim: '%s' is not an integer from 1 to %d", value, ABL_MAX_HEAD_DIM);
            return ABL_ERR_BAD_NUMBER;
        }
    } else if (o->field == ABL_PF_ROWS) {
        if (!parse_int(value, 0, 1L << 24, &v)) {
            abl_error_dup(msg, "rows: '%s' is not an integer from 0 (all) to 16777216", value);
            return ABL_ERR_BAD_NUMBER;
        }
    } else if (o->field == ABL_PF_THREADS) {
        if (!parse_int(value, 1, 1024, &v)) {
            abl_error_dup(msg, "threads: '%s' is not an integer from 1 to 1024", value);
            return ABL_ERR_BAD_NUMBER;
        }
    } else if (o->field == ABL_PF_BIAS_OFFSET) {
        if (!parse_int(value, 0, 1, &v)) {
            abl_error_dup(msg, "bias-offset: '%s' is not 0 or 1", value);
            return ABL_ERR_BAD_NUMBER;
        }
    } else if (o->field == ABL_PF_SPLITS) {
        /* flash_api.cpp: STD_TORCH_CHECK(params.num_splits <= 128); 0 (auto): the heuristic */
        if (strcasecmp(value, "auto") == 0)
            v = 0;
        else if (!parse_int(value, 1, 128, &v)) {
            abl_error_dup(msg, "splits: '%s' is not auto or an integer from 1 to 128", value);
            return ABL_ERR_BAD_NUMBER;
        }
    } else if (!parse_int(value, 0, 1L << 24, &v)) {
        abl_error_dup(msg, "block: '%s' is not an integer from 0 to 16777216", value);
        return ABL_ERR_BAD_NUMBER;
    }
    o->value = (int)v;
    return ABL_OK;
}

static abl_status override_ratio(abl_pipeline_override *o, const char *value, char **msg)
{
    abl_status st = abl_ratio_parse(value, &o->ratio);
    if (st == ABL_ERR_UNSUPPORTED)
        abl_error_dup(msg, "bias-scale: '%s' needs a numerator or denominator above 2^64", value);
    else if (st != ABL_OK)
        abl_error_dup(msg, "bias-scale: '%s' is not a positive decimal number", value);
    return st == ABL_OK ? ABL_OK : ABL_ERR_BAD_NUMBER;
}

static const struct {
    const char *name;
    abl_pipeline_field field;
} k_fields[] = {
    {"bias-form", ABL_PF_BIAS_FORM},       {"slope-dtype", ABL_PF_SLOPE_DTYPE}, {"slope-calc", ABL_PF_SLOPE_CALC},
    {"product-dtype", ABL_PF_PRODUCT_DTYPE}, {"bias-dtype", ABL_PF_BIAS_DTYPE}, {"bias-scale", ABL_PF_BIAS_SCALE},
    {"bias-add", ABL_PF_BIAS_ADD},         {"logit-dtype", ABL_PF_LOGIT_DTYPE}, {"softmax", ABL_PF_SOFTMAX},
    {"sum", ABL_PF_SUM},                   {"exp", ABL_PF_EXP},                 {"normalise", ABL_PF_NORMALISE},
    {"normalize", ABL_PF_NORMALISE},       {"output-dtype", ABL_PF_OUTPUT_DTYPE}, {"head-dim", ABL_PF_HEAD_DIM},
    {"block", ABL_PF_BLOCK},               {"mask-dtype", ABL_PF_MASK_DTYPE},   {"fa-kernel", ABL_PF_FA_KERNEL},
    {"threads", ABL_PF_THREADS},           {"rows", ABL_PF_ROWS},               {"version", ABL_PF_VERSION},
    {"pv-dtype", ABL_PF_PV_DTYPE},         {"pv-accumulate", ABL_PF_PV_ACCUMULATE},
    {"splits", ABL_PF_SPLITS},
    {"bias-offset", ABL_PF_BIAS_OFFSET},
};

/* One FIELD=VALUE into a typed override (the only place a field's text is read). */
static abl_status override_parse(const char *field, const char *value, abl_pipeline_override *o, char **msg)
{
    memset(o, 0, sizeof *o);
    size_t i = 0;
    while (i < sizeof k_fields / sizeof k_fields[0] && strcasecmp(field, k_fields[i].name) != 0)
        i++;
    if (i == sizeof k_fields / sizeof k_fields[0]) {
        abl_error_dup(msg, "unknown pipeline field '%s' (known: %s)", field, abl_pipeline_field_names());
        return ABL_ERR_INVALID_ARGUMENT;
    }
    o->field = k_fields[i].field;
    switch (o->field) {
    case ABL_PF_SLOPE_DTYPE: case ABL_PF_PRODUCT_DTYPE: case ABL_PF_BIAS_DTYPE: case ABL_PF_LOGIT_DTYPE:
    case ABL_PF_OUTPUT_DTYPE: case ABL_PF_MASK_DTYPE: case ABL_PF_PV_DTYPE: case ABL_PF_PV_ACCUMULATE:
        return override_dtype(k_fields[i].name, value, o, msg);
    case ABL_PF_FA_KERNEL:
        return override_enum(k_fa_kernels, ABL_FA_KERNEL_COUNT, "fa-kernel", "kernel", value, o, msg);
    case ABL_PF_BIAS_FORM: return override_enum(k_forms, ABL_BIAS_FORM_COUNT, "bias-form", "form", value, o, msg);
    case ABL_PF_SOFTMAX: return override_enum(k_softmax, ABL_SOFTMAX_KIND_COUNT, "softmax", "kind", value, o, msg);
    case ABL_PF_SUM: return override_enum(k_sums, 4, "sum", "order", value, o, msg);
    case ABL_PF_EXP: return override_enum(k_exps, ABL_EXP_MODEL_COUNT, "exp", "model", value, o, msg);
    case ABL_PF_NORMALISE: return override_enum(k_norms, 2, "normalise", "mode", value, o, msg);
    case ABL_PF_BIAS_ADD: return override_enum(k_adds, ABL_BIAS_ADD_COUNT, "bias-add", "place", value, o, msg);
    case ABL_PF_SLOPE_CALC:
        return override_enum(k_calcs, ABL_SLOPE_CALC_COUNT, "slope-calc", "calculation", value, o, msg);
    case ABL_PF_BIAS_SCALE: return override_ratio(o, value, msg);
    case ABL_PF_VERSION:
        if ((o->value = abl_version_parse(value)) == ABL_VERSION_UNKNOWN) {
            abl_error_dup(msg, "version: unknown revision '%s' (falcon-hf-eager: 00dcc6dd, 44272086; every "
                          "preset: newest or its own, see simulate --help)", value);
            return ABL_ERR_INVALID_ARGUMENT;
        }
        return ABL_OK;
    default: return override_number(o, value, msg);
    }
}

/* A dtype field of p by its id (NULL: not a dtype field). */
static abl_format *field_dtype(abl_pipeline *p, abl_pipeline_field f)
{
    switch (f) {
    case ABL_PF_SLOPE_DTYPE: return &p->slope_dtype;
    case ABL_PF_PRODUCT_DTYPE: return &p->product_dtype;
    case ABL_PF_BIAS_DTYPE: return &p->bias_dtype;
    case ABL_PF_LOGIT_DTYPE: return &p->logit_dtype;
    case ABL_PF_OUTPUT_DTYPE: return &p->output_dtype;
    case ABL_PF_MASK_DTYPE: return &p->mask_dtype;
    case ABL_PF_PV_DTYPE: return &p->pv_dtype;
    case ABL_PF_PV_ACCUMULATE: return &p->pv_accumulate;
    default: return NULL;
    }
}

static void override_apply(abl_pipeline *p, const abl_pipeline_override *o, const abl_format *model)
{
    abl_format *dtype = field_dtype(p, o->field);
    if (dtype != NULL) {
        *dtype = o->model ? *model : o->dtype;
        return;
    }
    switch (o->field) {
    case ABL_PF_BIAS_FORM: p->bias_form = (abl_bias_form)o->value; break;
    case ABL_PF_SOFTMAX:
        p->softmax = (abl_softmax_kind)o->value;
        /* the kernel's own key block (an explicit block= after softmax= overrides it): the memory-efficient
         * kernel's kKeysPerBlock is 64 for head dims up to 64 (128 above), cuDNN's measured tile is 128 */
        if (p->softmax == ABL_SOFTMAX_SDPA_EFFICIENT)
            p->block = 64;
        else if (p->softmax == ABL_SOFTMAX_SDPA_CUDNN)
            p->block = 128;
        break;
    case ABL_PF_SUM: p->sum = (abl_sum_order)o->value; break;
    case ABL_PF_EXP: p->exp = (abl_exp_model)o->value; break;
    case ABL_PF_NORMALISE: p->normalise = (abl_normalise)o->value; break;
    case ABL_PF_BIAS_SCALE: p->bias_scale = o->ratio; break;
    case ABL_PF_BIAS_ADD: p->bias_add = (abl_bias_add)o->value; break;
    case ABL_PF_SLOPE_CALC: p->slope_calc = (abl_slope_calc)o->value; break;
    case ABL_PF_HEAD_DIM: p->head_dim = o->value; break;
    case ABL_PF_FA_KERNEL: p->fa_kernel = (abl_fa_kernel)o->value; break;
    case ABL_PF_THREADS: p->threads = o->value; break;
    case ABL_PF_ROWS: p->rows = o->value; break;
    case ABL_PF_SPLITS: p->splits = o->value; break;
    case ABL_PF_BIAS_OFFSET: p->bias_offset = o->value; break;
    case ABL_PF_VERSION: abl_version_apply(p, abl_version_of(p->preset, o->value)); break;
    default: p->block = o->value; break;
    }
}

/* A version= override names one of the preset's own versions (abl_pipeline_version.c). */
static abl_status version_check(const char *preset, const abl_pipeline_override *o, const char *text, char **msg)
{
    if (o->field != ABL_PF_VERSION || abl_version_of(preset, o->value) >= 0)
        return ABL_OK;
    const char *names = abl_pipeline_version_names(preset);
    abl_error_dup(msg, "version: preset %s has no revision '%s' (known: newest, %s)", preset, text,
                  names != NULL ? names : "?");
    return ABL_ERR_INVALID_ARGUMENT;
}

abl_status abl_pipeline_set_msg(abl_pipeline *p, const char *field, const char *value, const abl_format *model_dtype,
                                char **msg)
{
    if (p == NULL || field == NULL || value == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_format model = model_dtype ? *model_dtype : named("bf16");
    abl_pipeline_override o;
    abl_status st = override_parse(field, value, &o, msg);
    if (st == ABL_OK)
        st = version_check(p->preset, &o, value, msg);
    if (st == ABL_OK)
        override_apply(p, &o, &model);
    return st;
}

void abl_pipeline_spec_free(abl_pipeline_spec *s)
{
    if (s == NULL)
        return;
    free(s->text);
    free(s->overrides);
    memset(s, 0, sizeof *s);
}

/* The preset's canonical (static) name, NULL when unknown. */
static const char *preset_canonical(const char *name)
{
    const preset_def *d = preset_find(name);
    return d != NULL ? d->name : NULL;
}

/* The FIELD=VALUE tokens after the preset, each into the next override. */
static abl_status spec_overrides(abl_pipeline_spec *s, char *save, char **msg)
{
    char *tok;
    while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
        char *eq = strchr(tok, '=');
        if (eq == NULL || eq == tok) {
            abl_error_dup(msg, "'%s' is not FIELD=VALUE (fields: %s)", tok, abl_pipeline_field_names());
            return ABL_ERR_INVALID_ARGUMENT;
        }
        *eq = '\0';
        abl_pipeline_override *grown = realloc(s->overrides, (s->noverrides + 1) * sizeof *grown);
        if (grown == NULL)
            return ABL_ERR_NO_MEMORY;
        s->overrides = grown;
        abl_status st = override_parse(tok, eq + 1, &s->overrides[s->noverrides], msg);
        if (st == ABL_OK)
            st = version_check(s->preset, &s->overrides[s->noverrides], eq + 1, msg);
        if (st != ABL_OK)
            return st;
        s->noverrides++;
    }
    return ABL_OK;
}

abl_status abl_pipeline_spec_parse(const char *spec, abl_pipeline_spec *out, char **msg)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (spec == NULL || spec[0] == '\0')
        spec = "eager";
    size_t n = strlen(spec);
    out->text = malloc(n + 1);
    char *copy = malloc(n + 1);
    if (out->text == NULL || copy == NULL) {
        free(copy);
        return ABL_ERR_NO_MEMORY;
    }
    memcpy(out->text, spec, n + 1);
    memcpy(copy, spec, n + 1);
    abl_status st = ABL_OK;
    char *save = NULL;
    char *tok = strtok_r(copy, ",", &save);
    if (tok == NULL || spec[0] == ',' || spec[n - 1] == ',' || strstr(spec, ",,") != NULL) {
        abl_error_dup(msg, "'%s' is not PRESET[,FIELD=VALUE...]", spec);
        st = ABL_ERR_INVALID_ARGUMENT;
    } else if ((out->preset = preset_canonical(tok)) == NULL) {
        abl_error_dup(msg, "unknown pipeline preset '%s' (known: %s)", tok, abl_pipeline_preset_names());
        st = ABL_ERR_INVALID_ARGUMENT;
    } else {
        st = spec_overrides(out, save, msg);
    }
    free(copy);
    return st;
}

abl_status abl_pipeline_spec_copy(const abl_pipeline_spec *src, abl_pipeline_spec *out)
{
    if (src == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->preset = src->preset;
    out->text = abl_strf("%s", src->text != NULL ? src->text : "eager");
    if (src->noverrides > 0)
        out->overrides = malloc(src->noverrides * sizeof *out->overrides);
    if (out->text == NULL || (src->noverrides > 0 && out->overrides == NULL)) {
        abl_pipeline_spec_free(out);
        return ABL_ERR_NO_MEMORY;
    }
    if (src->noverrides > 0)
        memcpy(out->overrides, src->overrides, src->noverrides * sizeof *out->overrides);
    out->noverrides = src->noverrides;
    return ABL_OK;
}

abl_status abl_pipeline_build(const abl_pipeline_spec *s, const abl_format *model_dtype, abl_pipeline *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_format model = model_dtype ? *model_dtype : named("bf16");
    abl_pipeline p;
    abl_status st = abl_pipeline_preset(s != NULL && s->preset != NULL ? s->preset : "eager", &model, &p);
    for (size_t i = 0; st == ABL_OK && s != NULL && i < s->noverrides; i++)
        override_apply(&p, &s->overrides[i], &model);
    if (st == ABL_OK)
        *out = p;
    return st;
}

abl_status abl_pipeline_parse_msg(const char *spec, const abl_format *model_dtype, abl_pipeline *out, char **msg)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_pipeline_spec s;
    abl_status st = abl_pipeline_spec_parse(spec, &s, msg);
    if (st == ABL_OK)
        st = abl_pipeline_build(&s, model_dtype, out);
    abl_pipeline_spec_free(&s);
    return st;
}

static int fits_binary32(const abl_format *f)
{
    return f->precision >= 1 && f->precision <= 24 && f->emin >= -126 && f->emax <= 127;
}

const char *abl_pipeline_modelled_note(const abl_pipeline *p)
{
    if (p == NULL || !p->modelled)
        return NULL;
    if (p->softmax == ABL_SOFTMAX_TRITON_LSE)
        return "Modelled from source, not measured: this preset follows MosaicBERT's Triton flash attention "
               "(mosaicml/examples@daddaeff flash_attn_triton.py; docs/pipelines.md §3d); no GPU measurement backs it.";
    if (p->softmax == ABL_SOFTMAX_FLEX)
        return "Modelled from source, not measured: this preset follows FlexAttention's Triton template and "
               "attention-gym's ALiBi score_mod at the revisions cited (docs/pipelines.md §3f); no GPU measurement "
               "backs it.";
    if (p->softmax == ABL_SOFTMAX_TRTLLM_FMHA)
        return "Modelled from source, not measured: this preset follows TensorRT-LLM's fmha_v2 flash-attention "
               "kernel (Ampere/Ada) at the revisions cited and the documented semantics of its fast-math intrinsics "
               "(docs/pipelines.md §3c); no GPU measurement backs it.";
    if (p->softmax == ABL_SOFTMAX_VLLM_TRITON)
        return "Modelled from source, not measured: this preset follows vLLM's Triton kernel at the revision cited "
               "and the documented semantics of the PTX Triton emits for it (ex2.approx.ftz; IEEE fp32 products "
               "assumed) (docs/pipelines.md §3c); no GPU measurement backs it.";
    return "Modelled from source, not measured: this preset follows the engine's source code and the documented "
           "semantics of its CUDA intrinsics (docs/pipelines.md §3c); no GPU measurement backs it.";
}

static int is_engine(const abl_pipeline *p)
{
    return p->softmax == ABL_SOFTMAX_GGML_CUDA_VEC || p->softmax == ABL_SOFTMAX_VLLM_PAGED ||
           p->softmax == ABL_SOFTMAX_TRTLLM_MMHA || p->softmax == ABL_SOFTMAX_GGML_CUDA ||
           p->softmax == ABL_SOFTMAX_VLLM_TRITON || p->softmax == ABL_SOFTMAX_TRTLLM_FMHA;
}

/* TensorRT-LLM's context FMHA: the absolute column bias on the scores; fp16 or bf16 kernels (fp8 not
 * modelled), the fp16 accumulator only in the fp16 kernels (fmhaRunner.cpp: force_fp32_acc for bf16). */
static abl_status check_trtllm(const abl_pipeline *p, char **msg)
{
    if (p->bias_scale.num != p->bias_scale.den || p->bias_add != ABL_BIAS_ADD_SCORES ||
        p->bias_form != ABL_BIAS_ABSOLUTE || strcmp(p->slope_dtype.name, "fp32") != 0) {
        abl_error_dup(msg, "softmax=trtllm-fmha: the kernel adds its fp32 slope * j to the scores (bias-form=absolute, "
                      "bias-add=scores, bias-scale=1, slope-dtype=fp32)");
        return ABL_ERR_UNSUPPORTED;
    }
    int f16 = strcmp(p->output_dtype.name, "fp16") == 0;
    if (!f16 && strcmp(p->output_dtype.name, "bf16") != 0) {
        abl_error_dup(msg, "output-dtype=%s: TensorRT-LLM's context FMHA runs fp16 or bf16 (fp8 is not modelled)",
                      p->output_dtype.name);
        return ABL_ERR_UNSUPPORTED;
    }
    if (strcmp(p->pv_accumulate.name, "fp32") != 0 && !(f16 && strcmp(p->pv_accumulate.name, "fp16") == 0)) {
        abl_error_dup(msg, "pv-accumulate=%s: softmax=trtllm-fmha accumulates in fp32, or in fp16 with fp16 "
                      "(bf16 kernels accumulate in fp32)", p->pv_accumulate.name);
        return ABL_ERR_UNSUPPORTED;
    }
    return ABL_OK;
}

/* The GPU engines add slope * distance to the fp32 scores inside the kernel (ggml-cuda-vec: slope * its mask). */
static abl_status check_engine(const abl_pipeline *p, char **msg)
{
    const char *k = abl_softmax_kind_name(p->softmax);
    const abl_format *fs[] = {&p->product_dtype, &p->bias_dtype, &p->logit_dtype};
    const char *names[] = {"product-dtype", "bias-dtype", "logit-dtype"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(fs[i]->name, "fp32") != 0) {
            abl_error_dup(msg, "%s=%s: softmax=%s adds the bias to the fp32 scores inside the kernel (use fp32)",
                          names[i], fs[i]->name, k);
            return ABL_ERR_UNSUPPORTED;
        }
    }
    int ggml_cuda = p->softmax == ABL_SOFTMAX_GGML_CUDA_VEC || p->softmax == ABL_SOFTMAX_GGML_CUDA;
    if (ggml_cuda &&
        (strcmp(p->output_dtype.name, "fp32") != 0 || strcmp(p->slope_dtype.name, "fp32") != 0)) {
        abl_error_dup(msg, "softmax=%s: ggml's slopes and the kernel's fp32 output (slope-dtype=fp32, "
                      "output-dtype=fp32)", k);
        return ABL_ERR_UNSUPPORTED;
    }
    if (ggml_cuda && strcmp(p->mask_dtype.name, "fp16") != 0 &&
        strcmp(p->mask_dtype.name, "fp32") != 0) {
        abl_error_dup(msg, "mask-dtype=%s: softmax=%s reads an fp16 (or fp32) mask", p->mask_dtype.name, k);
        return ABL_ERR_UNSUPPORTED;
    }
    if (p->exp != ABL_EXP_CORRECT || p->sum != ABL_SUM_EXACT) {
        abl_error_dup(msg, "softmax=%s: the kernel's own __expf and sum order are modelled (exp and sum do not "
                      "apply)", k);
        return ABL_ERR_UNSUPPORTED;
    }
    if (p->softmax == ABL_SOFTMAX_TRTLLM_FMHA)
        return check_trtllm(p, msg);
    if (p->softmax == ABL_SOFTMAX_VLLM_TRITON) {
        if (p->bias_scale.num != p->bias_scale.den || p->bias_add != ABL_BIAS_ADD_SCORES ||
            p->bias_form != ABL_BIAS_ABSOLUTE) {
            abl_error_dup(msg, "softmax=%s: the bias is slope * (j - context_len) added to the scores "
                          "(bias-form=absolute, bias-add=scores, bias-scale=1; rows=R sets context_len = N - R)", k);
            return ABL_ERR_UNSUPPORTED;
        }
        return ABL_OK;
    }
    if (p->bias_scale.num != p->bias_scale.den || p->bias_add != ABL_BIAS_ADD_SCORES ||
        (p->bias_form != ABL_BIAS_RELATIVE && p->bias_form != ABL_BIAS_SYMMETRIC)) {
        abl_error_dup(msg, "softmax=%s: the bias is slope * (j - i) added to the scores (bias-form=relative, "
                      "bias-add=scores, bias-scale=1)", k);
        return ABL_ERR_UNSUPPORTED;
    }
    return ABL_OK;
}

static int is_ggml(const abl_pipeline *p)
{
    return p->softmax == ABL_SOFTMAX_GGML || p->softmax == ABL_SOFTMAX_GGML_FLASH;
}

/* The ggml kernels compute in fp32 from their own mask: the bias is slope * mask, nothing cast or scaled. */
static abl_status check_ggml(const abl_pipeline *p, char **msg)
{
    const struct {
        const char *field;
        const abl_format *f;
    } dts[] = {
        {"slope-dtype", &p->slope_dtype}, {"product-dtype", &p->product_dtype}, {"bias-dtype", &p->bias_dtype},
        {"logit-dtype", &p->logit_dtype}, {"output-dtype", &p->output_dtype},
    };
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        if (strcmp(dts[i].f->name, "fp32") != 0) {
            abl_error_dup(msg, "%s=%s: softmax=%s computes in fp32 (use fp32)", dts[i].field, dts[i].f->name,
                          abl_softmax_kind_name(p->softmax));
            return ABL_ERR_UNSUPPORTED;
        }
    }
    int f16 = strcmp(p->mask_dtype.name, "fp16") == 0;
    if ((!f16 && strcmp(p->mask_dtype.name, "fp32") != 0) || (!f16 && p->softmax == ABL_SOFTMAX_GGML_FLASH)) {
        abl_error_dup(msg, "mask-dtype=%s: softmax=%s reads %s", p->mask_dtype.name, abl_softmax_kind_name(p->softmax),
                      p->softmax == ABL_SOFTMAX_GGML ? "an fp32 or fp16 mask" : "an fp16 mask");
        return ABL_ERR_UNSUPPORTED;
    }
    if (p->exp != ABL_EXP_GGML_AVX2 && p->exp != ABL_EXP_GGML_SCALAR) {
        abl_error_dup(msg, "exp=%s: softmax=%s uses ggml's exp (ggml-avx2 or ggml-scalar)", abl_exp_model_name(p->exp),
                      abl_softmax_kind_name(p->softmax));
        return ABL_ERR_UNSUPPORTED;
    }
    if (p->bias_scale.num != p->bias_scale.den || p->bias_add != ABL_BIAS_ADD_SCORES ||
        (p->bias_form != ABL_BIAS_RELATIVE && p->bias_form != ABL_BIAS_SYMMETRIC)) {
        abl_error_dup(msg, "softmax=%s: the bias is slope * mask with the mask -|i-j| (bias-form=relative, "
                      "bias-add=scores, bias-scale=1)", abl_softmax_kind_name(p->softmax));
        return ABL_ERR_UNSUPPORTED;
    }
    return ABL_OK;
}

/* The kinds that emulate P.V themselves (their weight is the coefficient of V): the pv fields are not read. */
int abl_pipeline_owns_pv(const abl_pipeline *p)
{
    return p->softmax == ABL_SOFTMAX_GGML_FLASH || p->softmax == ABL_SOFTMAX_SDPA_EFFICIENT ||
           p->softmax == ABL_SOFTMAX_SDPA_CUDNN || p->softmax == ABL_SOFTMAX_GGML_CUDA_VEC ||
           p->softmax == ABL_SOFTMAX_VLLM_PAGED || p->softmax == ABL_SOFTMAX_TRTLLM_MMHA ||
           p->softmax == ABL_SOFTMAX_FLEX || p->softmax == ABL_SOFTMAX_VLLM_TRITON ||
           p->softmax == ABL_SOFTMAX_TRITON_LSE || p->softmax == ABL_SOFTMAX_TRTLLM_FMHA;
}

/* P.V: P rounded into a format the emulator holds in binary32, accumulated in fp32 or fp16 (the
 * accumulators kernels have). */
static abl_status check_pv(const abl_pipeline *p, char **msg)
{
    if (abl_pipeline_owns_pv(p))
        return ABL_OK;
    if (!fits_binary32(&p->pv_dtype)) {
        abl_error_dup(msg, "pv-dtype=%s: the emulator holds P in binary32 (precision <= 24, exponents inside "
                      "binary32's)", p->pv_dtype.name);
        return ABL_ERR_UNSUPPORTED;
    }
    if (strcmp(p->pv_accumulate.name, "fp32") != 0 && strcmp(p->pv_accumulate.name, "fp16") != 0) {
        abl_error_dup(msg, "pv-accumulate=%s: P.V accumulates in fp32 or fp16", p->pv_accumulate.name);
        return ABL_ERR_UNSUPPORTED;
    }
    return ABL_OK;
}

/* bias-offset: only the eager bias table (abl_emul_bias_mag) reads it; the kernels form their own bias. */
static abl_status check_offset(const abl_pipeline *p, char **msg)
{
    if (p->bias_offset != 0 && (p->bias_form != ABL_BIAS_ABSOLUTE || p->softmax != ABL_SOFTMAX_EAGER)) {
        abl_error_dup(msg, "bias-offset=%d: applies to bias-form=absolute with softmax=eager only", p->bias_offset);
        return ABL_ERR_UNSUPPORTED;
    }
    return ABL_OK;
}

abl_status abl_pipeline_check_msg(const abl_pipeline *p, char **msg)
{
    if (p == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_status pv = check_pv(p, msg);
    if (pv == ABL_OK)
        pv = check_offset(p, msg);
    if (pv != ABL_OK)
        return pv;
    if (is_ggml(p))
        return check_ggml(p, msg);
    if (is_engine(p) && check_engine(p, msg) != ABL_OK)
        return ABL_ERR_UNSUPPORTED;
    if (p->splits >= 2 && p->softmax != ABL_SOFTMAX_FLASH && p->softmax != ABL_SOFTMAX_VLLM_TRITON) {
        abl_error_dup(msg, "splits=%d: only softmax=flash (FlashAttention-2's split-KV kernel) and vllm-triton (the "
                      "3-D kernel's segments) split the keys", p->splits);
        return ABL_ERR_UNSUPPORTED;
    }
    if (p->splits >= 2 && p->softmax == ABL_SOFTMAX_VLLM_TRITON && p->rows != 1) {
        abl_error_dup(msg, "splits=%d: vLLM runs the 3-D kernel for a decode step only (max_seqlen_q = 1: rows=1)",
                      p->splits);
        return ABL_ERR_UNSUPPORTED;
    }
    if (p->exp == ABL_EXP_GGML_AVX2 || p->exp == ABL_EXP_GGML_SCALAR) {
        abl_error_dup(msg, "exp=%s: ggml's exp applies to softmax=ggml and ggml-flash", abl_exp_model_name(p->exp));
        return ABL_ERR_UNSUPPORTED;
    }
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
            abl_error_dup(msg, "%s=%s: the emulator holds every pipeline dtype in binary32 (precision <= 24, "
                    "exponents inside binary32's)", dts[i].field, dts[i].f->name);
            return ABL_ERR_UNSUPPORTED;
        }
    }
    if (p->bias_scale.num == 0 || p->bias_scale.den == 0) {
        abl_error_dup(msg, "bias-scale: must be positive");
        return ABL_ERR_UNSUPPORTED;
    }
    if (p->softmax != ABL_SOFTMAX_EAGER && p->softmax != ABL_SOFTMAX_FLASH && p->exp != ABL_EXP_CORRECT) {
        abl_error_dup(msg, "exp=%s: softmax=%s models exp2 (correctly rounded); exp applies to eager",
                      abl_exp_model_name(p->exp), abl_softmax_kind_name(p->softmax));
        return ABL_ERR_UNSUPPORTED;
    }
    if (p->softmax == ABL_SOFTMAX_FLASH) {
        const abl_format *fs[] = {&p->product_dtype, &p->bias_dtype, &p->logit_dtype};
        const char *names[] = {"product-dtype", "bias-dtype", "logit-dtype"};
        for (int i = 0; i < 3; i++) {
            if (strcmp(fs[i]->name, "fp32") != 0) {
                abl_error_dup(msg, "%s=%s: softmax=flash adds the bias to the fp32 scores inside the kernel "
                        "(use fp32)", names[i], fs[i]->name);
                return ABL_ERR_UNSUPPORTED;
            }
        }
        if (p->exp != ABL_EXP_CORRECT) {
            abl_error_dup(msg, "exp=%s: softmax=flash models exp2 (correctly rounded); exp applies to eager",
                    abl_exp_model_name(p->exp));
            return ABL_ERR_UNSUPPORTED;
        }
        if (p->bias_scale.num != p->bias_scale.den) {
            char *t = abl_ratio_text(&p->bias_scale);
            abl_error_dup(msg, "bias-scale=%s: softmax=flash applies the softmax scale itself (head-dim)", t ? t : "?");
            free(t);
            return ABL_ERR_UNSUPPORTED;
        }
        if (p->bias_add != ABL_BIAS_ADD_SCORES) {
            abl_error_dup(msg, "bias-add=%s: softmax=flash adds the bias inside the kernel (use scores)",
                          abl_bias_add_name(p->bias_add));
            return ABL_ERR_UNSUPPORTED;
        }
    }
    return ABL_OK;
}

void abl_pipeline_describe_text(const abl_pipeline *p, abl_text *t)
{
    char *scale = abl_ratio_text(&p->bias_scale);
    if (scale == NULL) {
        t->oom = 1;
        return;
    }
    abl_text_add(t,
                 "bias-form=%s,slope-dtype=%s,slope-calc=%s,product-dtype=%s,bias-dtype=%s,bias-scale=%s,"
                 "bias-add=%s,logit-dtype=%s,softmax=%s",
                 abl_bias_form_name(p->bias_form), p->slope_dtype.name, abl_slope_calc_name(p->slope_calc),
                 p->product_dtype.name, p->bias_dtype.name, scale, abl_bias_add_name(p->bias_add),
                 p->logit_dtype.name, abl_softmax_kind_name(p->softmax));
    if (p->softmax == ABL_SOFTMAX_EAGER)
        abl_text_add(t, ",sum=%s,exp=%s,normalise=%s", abl_sum_order_name(p->sum), abl_exp_model_name(p->exp),
                     abl_normalise_name(p->normalise));
    if (p->bias_offset != 0)
        abl_text_add(t, ",bias-offset=%d", p->bias_offset);
    if (is_ggml(p))
        abl_text_add(t, ",exp=%s,mask-dtype=%s,rows=%d", abl_exp_model_name(p->exp), p->mask_dtype.name, p->rows);
    abl_text_add(t, ",output-dtype=%s", p->output_dtype.name);
    if (p->softmax == ABL_SOFTMAX_GGML_FLASH)
        abl_text_add(t, ",fa-kernel=%s,threads=%d", abl_fa_kernel_name(p->fa_kernel), p->threads);
    else if (p->softmax == ABL_SOFTMAX_TRTLLM_FMHA)   /* it reads its own accumulator (fp16 or fp32) */
        abl_text_add(t, ",rows=%d,block=%d,pv-accumulate=%s", p->rows, p->block, p->pv_accumulate.name);
    else if (is_engine(p))
        abl_text_add(t, ",mask-dtype=%s,rows=%d", p->mask_dtype.name, p->rows);
    else if (p->softmax == ABL_SOFTMAX_FLEX)
        abl_text_add(t, ",block=%d", p->block);   /* the score arrives scaled: no head-dim */
    else if (p->softmax != ABL_SOFTMAX_EAGER && p->softmax != ABL_SOFTMAX_GGML)
        abl_text_add(t, ",head-dim=%d,block=%d", p->head_dim, p->block);
    if ((p->softmax == ABL_SOFTMAX_FLASH || p->softmax == ABL_SOFTMAX_VLLM_TRITON) && p->splits != 1) {
        /* split-KV (vllm-flash) or the 3-D kernel's segments (vllm-triton): the rows asked decide */
        if (p->splits == 0)
            abl_text_add(t, ",splits=auto");
        else
            abl_text_add(t, ",splits=%d", p->splits);
        if (p->softmax == ABL_SOFTMAX_FLASH)   /* the engines state rows already */
            abl_text_add(t, ",rows=%d", p->rows);
    }
    /* P.V only where it can lose more than the weight: P rounded other than the weights come out, or an
     * fp16 accumulator (the kinds that emulate P.V keep their own) */
    if (!abl_pipeline_owns_pv(p) &&
        (strcmp(p->pv_dtype.name, p->output_dtype.name) != 0 || strcmp(p->pv_accumulate.name, "fp32") != 0))
        abl_text_add(t, ",pv-dtype=%s,pv-accumulate=%s", p->pv_dtype.name, p->pv_accumulate.name);
    /* every output states the code revision it answers for (issue 18, "Versions") */
    abl_text_add(t, ",version=%s", p->version != NULL ? p->version : "?");
    free(scale);
}

char *abl_pipeline_describe(const abl_pipeline *p)
{
    abl_text t = {0};
    abl_pipeline_describe_text(p, &t);
    return abl_text_take(&t);
}
