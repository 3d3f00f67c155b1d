/* alibi-blind: the model catalogue. Every number below was read from a published config.json or
 * the model's code; docs/models.md gives the file and revision of each, and says where a value
 * could not be found (then the paper's Table 5 value is used and marked as such in `source`). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/model/catalogue.h"
#include "abl/report/report.h"
#include "abl_internal.h"
#include "model/abl_engines_served.h"
#include "report/abl_report_internal.h"

/* ------------------------------------------------------------------ code paths per family */

/* Each path's pipeline is typed data, a preset and its field overrides; the display name beside it is
 * what outputs show (test_catalogue reads every name back and compares it with the value). */
#define PATH(name, preset, code) {name, preset, preset, NULL, 0, code}
#define PATH_OV(name, display, preset, ov, code) {name, display, preset, ov, sizeof ov / sizeof ov[0], code}

static const abl_code_path bloom_paths[] = {
    PATH("transformers", "bloom-hf",
         "transformers models/bloom/modeling_bloom.py: build_alibi_tensor (torch.pow slopes), BloomAttention.forward (baddbmm)"),
};
static const abl_code_path falcon_paths[] = {
    PATH("transformers-sdpa", "falcon-hf-sdpa",
         "transformers models/falcon/modeling_falcon.py: FalconAttention.forward, SDPA: the mask alibi/sqrt(head_dim)"),
    PATH("transformers-eager", "falcon-hf-eager",
         "transformers models/falcon/modeling_falcon.py: FalconAttention.forward, eager: alibi in the scores and the mask"),
};
static const abl_code_path mpt_paths[] = {
    PATH("llm-foundry-torch", "mpt",
         "llm-foundry llmfoundry/models/layers/attention.py: gen_slopes, build_alibi_bias, scaled_multihead_dot_product_attention"),
    PATH("transformers", "mpt-hf", "transformers models/mpt/modeling_mpt.py: build_mpt_alibi_tensor, MptAttention.forward"),
    PATH("flash-attention", "flash2", "llm-foundry attention.py flash_attn_fn with alibi_slopes (FlashAttention-2)"),
};
static const abl_code_path relative_paths[] = {
    PATH("eager", "eager", "-m(i-j) built in fp32, cast to the model dtype, softmax in fp32 (spec §9 definition)"),
};
/* Baichuan-13B/Baichuan2-13B modeling_baichuan.py: _gen_alibi_mask builds slopes * arange(max_pos) (key
 * positions, the absolute form) in fp32 beside the -inf future mask; the buffer is cast to the model dtype,
 * added to the scores in that dtype, and softmax runs on the sum (docs/models.md cites the copies read). */
static const abl_pipeline_override absolute_form[] = {{.field = ABL_PF_BIAS_FORM, .value = ABL_BIAS_ABSOLUTE}};
static const abl_code_path baichuan_paths[] = {
    PATH_OV("eager", "eager,bias-form=absolute", "eager", absolute_form,
            "modeling_baichuan.py _gen_alibi_mask: m*j in fp32, cast to the model dtype, added to the scores, softmax"),
};
static const abl_pipeline_override symmetric_form[] = {{.field = ABL_PF_BIAS_FORM, .value = ABL_BIAS_SYMMETRIC}};
/* text-embeddings-inference's FlashJinaBertModel (backends/candle/src/models/flash_jina.rs at 05adc2f1):
 * flash_attn_varlen(q, k, v, alibi_slopes in F32, ..., softmax_scale = 1/sqrt(head_size), causal = false),
 * CUDA and DType::F16 only: FlashAttention-2's non-causal ALiBi, -m|i-j| (docs/pipelines.md §3d) */
static const abl_pipeline_override tei_flash[] = {{.field = ABL_PF_BIAS_FORM, .value = ABL_BIAS_SYMMETRIC},
                                                  {.field = ABL_PF_HEAD_DIM, .value = 64}};
/* MosaicBERT's torch path (mosaicml/examples@daddaeff examples/benchmarks/bert/src/bert_layers.py):
 * BertEncoder.rebuild_alibi_tensor keeps self.alibi an fp32 plain attribute (not a registered buffer: the
 * model's .to(dtype) leaves it fp32), slopes * -|j - i| in fp32; the padding mask, in the parameters' dtype,
 * is added to it; the bf16/fp16 scores + that fp32 bias promote to fp32 and softmax runs in fp32 (P cast to
 * the model dtype for P.V under autocast). An fp32 bias and fp32 logits; tests/torch/validate_encoders.py. */
#define FMT_FP32 {"fp32", 8, 23, 24, -126, 127, 0, ABL_FMT_HAS_INF | ABL_FMT_HAS_NAN | ABL_FMT_NEG_ZERO}
static const abl_pipeline_override mosaic_torch[] = {{.field = ABL_PF_BIAS_FORM, .value = ABL_BIAS_SYMMETRIC},
                                                     {.field = ABL_PF_BIAS_DTYPE, .dtype = FMT_FP32},
                                                     {.field = ABL_PF_LOGIT_DTYPE, .dtype = FMT_FP32}};
static const abl_code_path mosaic_paths[] = {
    PATH_OV("torch", "eager,bias-form=symmetric,bias-dtype=fp32,logit-dtype=fp32", "eager", mosaic_torch,
            "bert_layers.py BertUnpadSelfAttention (torch path): scores + the fp32 alibi (never cast), fp32 softmax "
            "(encoder, bidirectional)"),
    PATH("triton", "mosaicbert-triton",
         "flash_attn_triton.py _fwd_kernel (Triton path: no attention dropout): the fp32 alibi as the bias, 128-key "
         "blocks from key 0, P against the running log-sum-exp, P.to(v.dtype); modelled from source, not measured"),
};
/* Refact-1.6B (gpt_refact). llama.cpp's LLM_ARCH_REFACT (src/llama-model.cpp load_hparams: f_max_alibi_bias =
 * 8.0f; llama_model_rope_type: no RoPE) builds the usual -m|p0 - p1| kq mask with ggml's slopes: the ggml
 * presets, the default (exact for that engine). The Hub's remote code (modeling_gpt_refact.py, read in the copy
 * sycomix/refact @35834bab: get_alibi_biases m*(j + 1) from mask.cumsum in fp32, .to(dtype), alibi + q.k*scale in
 * the model dtype, fp32 softmax) is refact-hf; its layers past the first under scale_attention_softmax_in_fp32
 * are not modelled (docs/models.md). */
static const abl_code_path refact_paths[] = {
    PATH("llama.cpp", "llamacpp-cpu",
         "llama.cpp src/llama-model.cpp LLM_ARCH_REFACT: f_max_alibi_bias 8, ggml_soft_max_ext with the -|p0-p1| "
         "mask"),
    PATH("llama.cpp-fa", "llamacpp-cpu-fa", "llama.cpp LLM_ARCH_REFACT with flash attention on (ggml CPU)"),
    PATH("transformers", "refact-hf",
         "modeling_gpt_refact.py (trust_remote_code; public copy sycomix/refact hf/ @35834bab): _get_slopes "
         "torch.pow, get_alibi_biases m*(j+1) from mask.cumsum in fp32 cast to the model dtype, fp32 softmax; "
         "layer 0 of the upcast path (docs/models.md)"),
};
static const abl_code_path encoder_paths[] = {
    PATH_OV("eager", "eager,bias-form=symmetric", "eager", symmetric_form,
            "-m|i-j| added to the scores, softmax (encoder, bidirectional)"),
    PATH_OV("tei-flash", "flash2,bias-form=symmetric,head-dim=64", "flash2", tei_flash,
            "text-embeddings-inference flash_jina.rs: FlashAttention-2 varlen, causal=false, alibi slopes in fp32; "
            "F16 only (run with --dtype fp16)"),
};

abl_status abl_code_path_pipeline(const abl_code_path *p, abl_pipeline_spec *out)
{
    if (p == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    /* the static value viewed as a description (nothing written through it), then deep-copied */
    const abl_pipeline_spec view = {(char *)p->pipeline, p->preset, (abl_pipeline_override *)p->overrides,
                                    p->noverrides};
    return abl_pipeline_spec_copy(&view, out);
}

abl_status abl_pow2_schedule_spec(const abl_pow2_schedule *s, abl_schedule_spec *out)
{
    if (s == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    return abl_schedule_spec_pow2(s->kind, s->mpt_bias, out);
}

abl_status abl_model_schedule(const abl_model *m, abl_schedule_spec *out)
{
    if (m == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    return abl_pow2_schedule_spec(&m->slopes, out);
}

#define N(a) (sizeof a / sizeof a[0])

static const abl_model_family families[] = {
    {"bloom", "press, torch.pow(base, arange(1, 1 + c)) in fp32 (build_alibi_tensor)", ABL_BIAS_ABSOLUTE, bloom_paths,
     N(bloom_paths), ABL_ATTENTION_CAUSAL},
    {"falcon-rw", "press, torch.pow(base, arange(1, 1 + c)) in fp32, then .bfloat16() (build_alibi_tensor)",
     ABL_BIAS_ABSOLUTE, falcon_paths, N(falcon_paths), ABL_ATTENTION_CAUSAL},
    {"mpt", "mpt:B, 1 / torch.pow(2, m) in fp32 (gen_slopes, alibi_bias_max = B)", ABL_BIAS_TRAILING, mpt_paths,
     N(mpt_paths), ABL_ATTENTION_CAUSAL},
    {"baichuan", "press (the model's _get_interleave, Python floats rounded to fp32)", ABL_BIAS_ABSOLUTE,
     baichuan_paths, N(baichuan_paths), ABL_ATTENTION_CAUSAL},
    /* jais, BTLM: Cerebras's AlibiPositionEmbeddingLayer, -m|i-j| in fp32, type_as the scores, softmax
     * (docs/models.md cites the ports read): the relative eager path */
    {"jais", "press (the model's _get_alibi_slopes)", ABL_BIAS_RELATIVE, relative_paths, N(relative_paths),
     ABL_ATTENTION_CAUSAL},
    {"btlm", "press (the model's _get_alibi_slopes)", ABL_BIAS_RELATIVE, relative_paths, N(relative_paths),
     ABL_ATTENTION_CAUSAL},
    {"mosaic-bert", "press (bert_layers.py _get_alibi_head_slopes)", ABL_BIAS_SYMMETRIC, mosaic_paths,
     N(mosaic_paths), ABL_ATTENTION_BIDIRECTIONAL},
    {"jina-bert", "press (the model's get_alibi_head_slopes)", ABL_BIAS_SYMMETRIC, encoder_paths, N(encoder_paths),
     ABL_ATTENTION_BIDIRECTIONAL},
    {"refact", "press as powers of a rounded base (ggml: powf(m0, h+1); the remote code's _get_slopes: "
               "torch.pow(2^(-8/n), arange) in fp32)",
     ABL_BIAS_RELATIVE, refact_paths, N(refact_paths), ABL_ATTENTION_CAUSAL},
    {"unpublished", "press (not published; the paper assumes the default)", ABL_BIAS_RELATIVE, relative_paths,
     N(relative_paths), ABL_ATTENTION_CAUSAL},
};

#define F_BLOOM (&families[0])
#define F_FALCON (&families[1])
#define F_MPT (&families[2])
#define F_BAICHUAN (&families[3])
#define F_JAIS (&families[4])
#define F_BTLM (&families[5])
#define F_MBERT (&families[6])
#define F_JINA (&families[7])
#define F_REFACT (&families[8])
#define F_UNPUB (&families[9])

/* ------------------------------------------------------------------ the models */

#define BLOOM_SRC(id) id " config.json (n_head, hidden_size, n_layer); context: model card"
#define PRESS {ABL_SCHEDULE_PRESS, 8}
#define MPT(b) {ABL_SCHEDULE_MPT, b}
#define PAPER_ONLY "paper Table 5 (heads, window); no published config.json found"

static const abl_model models[] = {
    /* BLOOM (bigscience) */
    {"bloom-560m", "bigscience/bloom-560m", "", F_BLOOM, "bigscience/bloom-560m", 16, 64, 24, 2048, "bf16", PRESS,
     BLOOM_SRC("bigscience/bloom-560m")},
    {"bloom-1b1", "bigscience/bloom-1b1", "bloom-1.1b", F_BLOOM, "bigscience/bloom-1.1b", 16, 96, 24, 2048, "bf16",
     PRESS, BLOOM_SRC("bigscience/bloom-1b1")},
    {"bloom-1b7", "bigscience/bloom-1b7", "bloom-1.7b", F_BLOOM, "bigscience/bloom-1.7b", 16, 128, 24, 2048, "bf16",
     PRESS, BLOOM_SRC("bigscience/bloom-1b7")},
    {"bloom-3b", "bigscience/bloom-3b", "", F_BLOOM, "bigscience/bloom-3b", 32, 80, 30, 2048, "bf16", PRESS,
     BLOOM_SRC("bigscience/bloom-3b")},
    {"bloom-7b1", "bigscience/bloom-7b1", "bloom-7.1b", F_BLOOM, "bigscience/bloom-7.1b", 32, 128, 30, 2048, "bf16",
     PRESS, BLOOM_SRC("bigscience/bloom-7b1")},
    {"bloom", "bigscience/bloom", "bloom-176b", F_BLOOM, "bigscience/bloom", 112, 128, 70, 2048, "bf16", PRESS,
     BLOOM_SRC("bigscience/bloom")},
    {"bloomz-560m", "bigscience/bloomz-560m", "", F_BLOOM, NULL, 16, 64, 24, 2048, "bf16", PRESS,
     "architecture of bigscience/bloom-560m (bloomz is its multitask fine-tune)"},
    {"bloomz-1b1", "bigscience/bloomz-1b1", "", F_BLOOM, NULL, 16, 96, 24, 2048, "bf16", PRESS,
     "architecture of bigscience/bloom-1b1 (bloomz is its multitask fine-tune)"},
    {"bloomz-1b7", "bigscience/bloomz-1b7", "", F_BLOOM, NULL, 16, 128, 24, 2048, "bf16", PRESS,
     "architecture of bigscience/bloom-1b7 (bloomz is its multitask fine-tune)"},
    {"bloomz-3b", "bigscience/bloomz-3b", "", F_BLOOM, NULL, 32, 80, 30, 2048, "bf16", PRESS,
     "architecture of bigscience/bloom-3b (bloomz is its multitask fine-tune)"},
    {"bloomz-7b1", "bigscience/bloomz-7b1", "", F_BLOOM, NULL, 32, 128, 30, 2048, "bf16", PRESS,
     "architecture of bigscience/bloom-7b1 (bloomz is its multitask fine-tune)"},
    {"bloomz", "bigscience/bloomz", "bloomz-176b", F_BLOOM, NULL, 112, 128, 70, 2048, "bf16", PRESS,
     "architecture of bigscience/bloom (bloomz is its multitask fine-tune)"},
    {"poro-34b", "LumiOpen/Poro-34B", "", F_BLOOM, NULL, 56, 128, 54, 2048, "bf16", PRESS,
     "LumiOpen/Poro-34B model card (n_heads 56, d_model 7168, n_layers 54, sequence_length 2048, bfloat16); "
     "config.json not read"},
    /* Falcon-RW (tiiuae) */
    {"falcon-rw-1b", "tiiuae/falcon-rw-1b", "", F_FALCON, "Falcon-RW 1B", 32, 64, 24, 2048, "bf16", PRESS,
     "tiiuae/falcon-rw-1b config.json (alibi, num_attention_heads, hidden_size, num_hidden_layers); context: paper Table 5"},
    {"falcon-rw-7b", "tiiuae/falcon-rw-7b", "", F_FALCON, "Falcon-RW 7B", 64, 64, 36, 2048, "bf16", PRESS,
     "tiiuae/falcon-rw-7b config.json (alibi, n_head, hidden_size, n_layer); context: paper Table 5"},
    /* MPT (mosaicml) */
    {"mpt-7b", "mosaicml/mpt-7b", "", F_MPT, "MPT 7B", 32, 128, 32, 2048, "bf16", MPT(8),
     "mosaicml/mpt-7b(-instruct) config.json (attn_config.alibi, alibi_bias_max, n_heads, d_model, n_layers, max_seq_len, torch_dtype)"},
    {"mpt-7b-instruct", "mosaicml/mpt-7b-instruct", "", F_MPT, NULL, 32, 128, 32, 2048, "bf16", MPT(8),
     "mosaicml/mpt-7b-instruct config.json (attn_config.alibi, alibi_bias_max, n_heads, d_model, n_layers, max_seq_len, torch_dtype)"},
    {"mpt-7b-chat", "mosaicml/mpt-7b-chat", "", F_MPT, NULL, 32, 128, 32, 2048, "bf16", MPT(8),
     "architecture of mosaicml/mpt-7b (config.json not read)"},
    {"mpt-7b-storywriter", "mosaicml/mpt-7b-storywriter", "mpt-7b-65k", F_MPT, "MPT 7B StoryWriter", 32, 128, 32,
     65536, "bf16", MPT(8), "architecture of mosaicml/mpt-7b; context: paper Table 5 (65,536)"},
    {"mpt-7b-8k", "mosaicml/mpt-7b-8k", "", F_MPT, NULL, 32, 128, 32, 8192, "bf16", MPT(8),
     "architecture of mosaicml/mpt-7b (pretrained from it, sequence length updated to 8k: model card); config.json not read"},
    {"mpt-7b-8k-instruct", "mosaicml/mpt-7b-8k-instruct", "", F_MPT, NULL, 32, 128, 32, 8192, "bf16", MPT(8),
     "architecture of mosaicml/mpt-7b-8k (a fine-tune of it: model card); config.json not read"},
    {"mpt-30b", "mosaicml/mpt-30b", "", F_MPT, NULL, 64, 112, 48, 8192, "bf16", MPT(8),
     "mosaicml/mpt-30b model card (n_heads 64, d_model 7168, n_layers 48, sequence length 8192); config.json not read, "
     "alibi_bias_max: llm-foundry's default 8"},
    {"mpt-30b-instruct", "mosaicml/mpt-30b-instruct", "", F_MPT, NULL, 64, 112, 48, 8192, "bf16", MPT(8),
     "architecture of mosaicml/mpt-30b (a fine-tune of it); config.json not read"},
    {"mpt-30b-chat", "mosaicml/mpt-30b-chat", "", F_MPT, NULL, 64, 112, 48, 8192, "bf16", MPT(8),
     "architecture of mosaicml/mpt-30b (a fine-tune of it: model card); config.json not read"},
    {"replit-code-v1-3b", "replit/replit-code-v1-3b", "replit-code", F_MPT, NULL, 32, 80, 32, 2048, "fp32", MPT(8),
     "replit/ReplitLM replit-code-v1-3b/config.json @1a421995 (model_type replit_lm: n_heads 32, d_model 2560, n_layers "
     "32, max_seq_len 2048, alibi_bias_max 8, attn_impl torch, torch_dtype float32)"},
    {"replit-code-v1.5-3b", "replit/replit-code-v1_5-3b", "replit-code-v1_5-3b", F_MPT, NULL, 24, 128, 32, 4096,
     "bf16", MPT(8),
     "huggingface/candle candle-transformers/src/models/mpt.rs @8e357d71 Config::replit_code_v1_5_3b (d_model 3072, "
     "n_heads 24, kv_n_heads 8, n_layers 32, max_seq_len 4096, alibi_bias_max 8); dtype: model card (trained in "
     "bfloat16); config.json itself not read"},
    {"phogpt-4b", "vinai/PhoGPT-4B", "", F_MPT, NULL, 24, 128, 32, 8192, "bf16", MPT(8),
     "VinAIResearch/PhoGPT PhoGPT-4B_TechReport.pdf @ed1db35d (max_seq_len 8192, d_model 3072, n_heads 24, n_layers "
     "32; LLM-foundry with ALiBi); dtype: its README loads torch.bfloat16; alibi_bias_max: llm-foundry's default 8; "
     "config.json not found"},
    {"phogpt-4b-chat", "vinai/PhoGPT-4B-Chat", "", F_MPT, NULL, 24, 128, 32, 8192, "bf16", MPT(8),
     "architecture of vinai/PhoGPT-4B (the fine-tune of it: the technical report, VinAIResearch/PhoGPT @ed1db35d); "
     "config.json not found"},
    {"phogpt-7b5", "vinai/PhoGPT-7B5", "", F_MPT, NULL, 0, 0, 0, 2048, "bf16", MPT(8),
     "context: VinAIResearch/PhoGPT README @338d3dfe (PhoGPT-7B5: 7.5B, context length 2048; ALiBi and llm-foundry); "
     "config.json not found (no head count)"},
    {"phogpt-7b5-instruct", "vinai/PhoGPT-7B5-Instruct", "", F_MPT, NULL, 0, 0, 0, 2048, "bf16", MPT(8),
     "context: VinAIResearch/PhoGPT README @338d3dfe (context length 2048); config.json not found (no head count)"},
    /* Baichuan */
    {"baichuan-13b-base", "baichuan-inc/Baichuan-13B-Base", "", F_BAICHUAN, "Baichuan-13B-Base", 40, 128, 40, 4096,
     "fp16", PRESS, "architecture of baichuan-inc/Baichuan2-13B-Chat config.json; heads and window agree with paper Table 5"},
    {"baichuan-13b-chat", "baichuan-inc/Baichuan-13B-Chat", "", F_BAICHUAN, "Baichuan-13B-Chat", 40, 128, 40, 4096,
     "fp16", PRESS, "architecture of baichuan-inc/Baichuan2-13B-Chat config.json; heads and window agree with paper Table 5"},
    {"baichuan2-13b-chat", "baichuan-inc/Baichuan2-13B-Chat", "", F_BAICHUAN, NULL, 40, 128, 40, 4096, "fp16", PRESS,
     "baichuan-inc/Baichuan2-13B-Chat config.json (num_attention_heads, hidden_size, num_hidden_layers, model_max_length, torch_dtype)"},
    /* jais (inceptionai) */
    {"jais-family-256m", "inceptionai/jais-family-256m", "", F_JAIS, NULL, 0, 0, 0, 0, "bf16", PRESS,
     "config.json not found"},
    {"jais-family-590m", "inceptionai/jais-family-590m", "", F_JAIS, "jais-family-590m", 12, 0, 0, 2048, "bf16",
     PRESS, PAPER_ONLY},
    {"jais-family-1p3b", "inceptionai/jais-family-1p3b", "", F_JAIS, "jais-family-1p3b", 16, 0, 0, 2048, "bf16",
     PRESS, PAPER_ONLY},
    {"jais-family-2p7b", "inceptionai/jais-family-2p7b", "", F_JAIS, "jais-family-2p7b", 20, 0, 0, 2048, "bf16",
     PRESS, PAPER_ONLY},
    {"jais-family-6p7b", "inceptionai/jais-family-6p7b", "", F_JAIS, "jais-family-6p7b", 32, 0, 0, 2048, "bf16",
     PRESS, PAPER_ONLY},
    {"jais-family-13b", "inceptionai/jais-family-13b", "", F_JAIS, "jais-family-13b", 40, 0, 0, 2048, "bf16", PRESS,
     PAPER_ONLY},
    {"jais-family-30b-8k", "inceptionai/jais-family-30b-8k", "", F_JAIS, "jais-family-30b-8k", 56, 0, 0, 8192, "bf16",
     PRESS, PAPER_ONLY},
    {"jais-family-30b-16k", "inceptionai/jais-family-30b-16k", "", F_JAIS, "jais-family-30b-16k", 56, 0, 0, 16384,
     "bf16", PRESS, PAPER_ONLY},
    {"jais-13b", "inceptionai/jais-13b", "core42/jais-13b", F_JAIS, NULL, 40, 128, 40, 2048, "bf16", PRESS,
     "Cerebras/modelzoo models/nlp/jais/configs/params_jais_13b.yaml @b85d9fdc (num_heads 40, hidden_size 5120, "
     "num_hidden_layers 40, max_position_embeddings 2048, position_embedding_type alibi, bfloat16); config.json not read"},
    {"jais-13b-chat", "inceptionai/jais-13b-chat", "core42/jais-13b-chat", F_JAIS, NULL, 40, 128, 40, 2048, "bf16",
     PRESS,
     "Cerebras/modelzoo models/nlp/jais/configs/params_jais_13b_chat.yaml @5ecc0105 (num_heads 40, hidden_size 5120, "
     "num_hidden_layers 40, max_position_embeddings 2048, bfloat16); config.json not read"},
    {"jais-30b-v3", "inceptionai/jais-30b-v3", "core42/jais-30b-v3", F_JAIS, NULL, 0, 0, 0, 0, "bf16", PRESS,
     "config.json not found"},
    {"jais-30b-chat-v3", "inceptionai/jais-30b-chat-v3", "core42/jais-30b-chat-v3", F_JAIS, NULL, 0, 0, 0, 0, "bf16",
     PRESS, "config.json not found"},
    /* BTLM (cerebras) */
    {"btlm-3b-8k-base", "cerebras/btlm-3b-8k-base", "btlm", F_BTLM, "BTLM-3B-8k-base", 32, 80, 32, 8192, "bf16", PRESS,
     "Cerebras/modelzoo models/nlp/btlm/configs/params_btlm_2p7b_8k.yaml @62025389 (num_heads 32, hidden_size 2560, "
     "num_hidden_layers 32, max_position_embeddings 8192); heads and window agree with paper Table 5; config.json "
     "not read"},
    {"btlm-3b-8k-chat", "cerebras/btlm-3b-8k-chat", "", F_BTLM, "BTLM-3B-8k-chat", 32, 0, 0, 8192, "bf16", PRESS,
     PAPER_ONLY},
    /* Encoders */
    {"mosaic-bert-base", "mosaicml/mosaic-bert-base", "mosaicbert", F_MBERT, "MosaicBERT-base", 12, 64, 12, 128,
     "bf16", PRESS,
     "mosaicml/examples bert config (alibi_starting_size, num_attention_heads, hidden_size, num_hidden_layers); context: paper Table 5"},
    {"mosaic-bert-base-seqlen-256", "mosaicml/mosaic-bert-base-seqlen-256", "mosaicbert-256", F_MBERT, "MosaicBERT-256",
     12, 64, 12, 256, "bf16", PRESS, "architecture of mosaicml/mosaic-bert-base; context: paper Table 5"},
    {"mosaic-bert-base-seqlen-512", "mosaicml/mosaic-bert-base-seqlen-512", "mosaicbert-512", F_MBERT, "MosaicBERT-512",
     12, 64, 12, 512, "bf16", PRESS, "architecture of mosaicml/mosaic-bert-base; context: paper Table 5"},
    {"mosaic-bert-base-seqlen-1024", "mosaicml/mosaic-bert-base-seqlen-1024", "mosaicbert-1024", F_MBERT,
     "MosaicBERT-1024", 12, 64, 12, 1024, "bf16", PRESS,
     "architecture of mosaicml/mosaic-bert-base; context: paper Table 5"},
    {"mosaic-bert-base-seqlen-2048", "mosaicml/mosaic-bert-base-seqlen-2048", "mosaicbert-2048", F_MBERT,
     "MosaicBERT-2048", 12, 64, 12, 2048, "bf16", PRESS,
     "architecture of mosaicml/mosaic-bert-base; context: paper Table 5"},
    {"dnabert-2-117m", "zhihan1996/DNABERT-2-117M", "dnabert-2", F_MBERT, NULL, 12, 64, 12, 512, "bf16", PRESS,
     "DNABERT-2 config (num_attention_heads 12, hidden_size 768, num_hidden_layers 12, max_position_embeddings 512, "
     "alibi_starting_size 512) as a public port's test copies it; dtype not in the config"},
    {"jina-embeddings-v2-base-en", "jinaai/jina-embeddings-v2-base-en", "jina-v2-base", F_JINA,
     "jina-embeddings-v2-base-en", 12, 64, 12, 8192, "bf16", PRESS,
     "heads and window: paper Table 5; head dim and layers: a JinaBERT config.json in a public Rust test (code "
     "jinaai/jina-bert-implementation, model_type bert, position_embedding_type alibi, num_attention_heads 12, "
     "hidden_size 768, num_hidden_layers 12, max_position_embeddings 8192, vocab_size 30528: the English base "
     "model's; the test does not name it)"},
    {"jina-embeddings-v2-small-en", "jinaai/jina-embeddings-v2-small-en", "jina-v2-small", F_JINA, NULL, 0, 0, 0,
     8192, "bf16", PRESS, "context: xorbitsai/inference model docs (Max Tokens 8192); config.json not found"},
    {"jina-embeddings-v2-base-zh", "jinaai/jina-embeddings-v2-base-zh", "", F_JINA, NULL, 0, 0, 0, 8192, "bf16",
     PRESS, "context: xorbitsai/inference model docs (Max Tokens 8192); config.json not found"},
    {"jina-embeddings-v2-base-de", "jinaai/jina-embeddings-v2-base-de", "", F_JINA, NULL, 0, 0, 0, 0, "bf16", PRESS,
     "config.json not found"},
    {"jina-embeddings-v2-base-es", "jinaai/jina-embeddings-v2-base-es", "", F_JINA, NULL, 0, 0, 0, 0, "bf16", PRESS,
     "config.json not found"},
    {"jina-embeddings-v2-base-code", "jinaai/jina-embeddings-v2-base-code", "", F_JINA, NULL, 12, 64, 12, 8192, "bf16",
     PRESS,
     "the code model's config as a public Rust test copies it (_name_or_path jinaai/jina-bert-v2-qk-post-norm, "
     "num_attention_heads 12, hidden_size 768, num_hidden_layers 12, vocab_size 61056; its auto_map names that "
     "repository's modeling_bert.py: text-embeddings-inference); context: model card (8192); dtype not in the config"},
    {"jina-reranker-v1-turbo-en", "jinaai/jina-reranker-v1-turbo-en", "", F_JINA, NULL, 0, 0, 0, 0, "bf16", PRESS,
     "config.json not found"},
    {"jina-reranker-v1-tiny-en", "jinaai/jina-reranker-v1-tiny-en", "", F_JINA, NULL, 12, 32, 4, 8192, "bf16", PRESS,
     "its config.json as llama.cpp's CI converts it (ci/run.sh gg_run_rerank_tiny fetches "
     "jinaai/jina-reranker-v1-tiny-en config.json): jina-bert-v2.attention.head_count 12, embedding_length 384, "
     "block_count 4, context_length 8192, attention.causal false (ggml-org/ci log, llama.cpp 2a0877c5 "
     "rerank_tiny-rk-f16.log); dtype not known (bf16 assumed)"},
    {"jina-colbert-v1-en", "jinaai/jina-colbert-v1-en", "", F_JINA, NULL, 0, 0, 0, 0, "bf16", PRESS,
     "config.json not found"},
    /* Refact (smallcloudai) */
    {"refact-1.6b", "smallcloudai/Refact-1_6B-fim", "refact,smallcloudai/Refact-1_6-base", F_REFACT, NULL, 32, 64, 32,
     4096, "fp16", PRESS,
     "llama.cpp models/ggml-vocab-refact.gguf (converted from smallcloudai/Refact-1_6-base) as a ggml-org/ci log of "
     "llama.cpp @bc26eb75 prints it: refact.attention.head_count 32, head_count_kv 1, embedding_length 2048, "
     "block_count 32, context_length 4096; dtype: smallcloudai/refact known_models_db refact.py (torch_dtype fp16); "
     "config.json itself not read"},
    /* Not published */
    {"bloomberggpt", NULL, "", F_UNPUB, "BloombergGPT", 40, 0, 0, 2048, "bf16", PRESS,
     "paper Table 5 (weights and config not public)"},
    {"codellm", NULL, "", F_UNPUB, "CodeLLM", 32, 0, 0, 1024, "bf16", PRESS,
     "paper Table 5 (no Hugging Face id found)"},
};

size_t abl_model_count(void)
{
    return N(models);
}

const abl_model *abl_model_at(size_t i)
{
    return i < N(models) ? &models[i] : NULL;
}

static int same_ci(const char *a, const char *b, size_t blen)
{
    size_t i = 0;
    for (; i < blen && a[i] != '\0'; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return 0;
    return i == blen && a[i] == '\0';
}

/* name equals one item of a comma-separated list (case-insensitive). */
static int in_list(const char *name, const char *list)
{
    const char *p = list;
    while (p != NULL && *p != '\0') {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len > 0 && same_ci(name, p, len))
            return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

const abl_model *abl_model_find(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return NULL;
    for (size_t i = 0; i < N(models); i++) {
        const abl_model *m = &models[i];
        if (same_ci(name, m->name, strlen(m->name)) || (m->hf_id && same_ci(name, m->hf_id, strlen(m->hf_id))) ||
            in_list(name, m->aliases))
            return m;
    }
    return NULL;
}

/* Levenshtein distance, capped (names are short). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = prev + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

const abl_model *abl_model_suggest(const char *name)
{
    if (name == NULL)
        return NULL;
    const abl_model *best = NULL;
    size_t bestd = 7; /* at most 3 edits (doubled below) */
    size_t nlen = strlen(name);
    for (size_t i = 0; i < N(models); i++) {
        size_t d = edit_distance(name, models[i].name);
        if (models[i].hf_id != NULL) {
            size_t d2 = edit_distance(name, models[i].hf_id);
            if (d2 < d)
                d = d2;
        }
        if (d == (size_t)-1)
            continue;
        /* ties go to a name that extends what was typed ("bloom-7b" -> "bloom-7b1") */
        d = 2 * d - (d > 0 && same_ci(name, models[i].name, nlen < strlen(models[i].name) ? nlen : 0) ? 1 : 0);
        if (d < bestd) {
            bestd = d;
            best = &models[i];
        }
    }
    return best;
}

size_t abl_model_family_count(void)
{
    return N(families);
}

const abl_model_family *abl_model_family_at(size_t i)
{
    return i < N(families) ? &families[i] : NULL;
}

const abl_model_family *abl_model_family_find(const char *name)
{
    for (size_t i = 0; name != NULL && i < N(families); i++)
        if (strcmp(families[i].name, name) == 0)
            return &families[i];
    return NULL;
}

const abl_code_path *abl_model_family_path(const abl_model_family *f, const char *name)
{
    if (f == NULL || f->npaths == 0)
        return NULL;
    if (name == NULL)
        return &f->paths[0];
    for (size_t i = 0; i < f->npaths; i++)
        if (strcmp(f->paths[i].name, name) == 0)
            return &f->paths[i];
    return NULL;
}

/* ------------------------------------------------------------------ report */

static abl_status cell_text(abl_report *r, const char *text)
{
    if (text == NULL)
        return abl_report_cell(r, "", "null", NULL);
    return abl_report_cell(r, text, NULL, NULL); /* JSON: the report's own string of text */
}

static abl_status cell_count(abl_report *r, uint64_t v)
{
    if (v == 0)
        return abl_report_cell(r, "", "null", NULL);
    char *num = abl_strf("%llu", (unsigned long long)v);
    abl_status st = num != NULL ? abl_report_cell(r, num, num, NULL) : ABL_ERR_NO_MEMORY;
    free(num);
    return st;
}

/* A metadata line whose JSON is its text in quotes (a name without characters to escape). */
static abl_status meta_quoted(abl_report *r, const char *key, const char *label, const char *text)
{
    char *js = abl_strf("\"%s\"", text);
    abl_status st = js != NULL ? abl_report_meta(r, key, label, text, js) : ABL_ERR_NO_MEMORY;
    free(js);
    return st;
}

/* "name=pipeline;name=pipeline" (default first). */
static char *paths_text(const abl_model_family *f)
{
    size_t len = 1;
    for (size_t i = 0; i < f->npaths; i++)
        len += strlen(f->paths[i].name) + strlen(f->paths[i].pipeline) + 2;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < f->npaths; i++) {
        if (i)
            strcat(s, ";");
        strcat(s, f->paths[i].name);
        strcat(s, "=");
        strcat(s, f->paths[i].pipeline);
    }
    return s;
}

/*
 * The code paths as a JSON list of objects {"path", "pipeline", "code"}: the shape of `models NAME`'s
 * code_paths rows, so that the key has one type in every command.
 */
static char *paths_json(const abl_model_family *f)
{
    abl_text t = {0};
    abl_text_add(&t, "[");
    for (size_t i = 0; i < f->npaths; i++) {
        abl_text_add(&t, "%s{\"path\": ", i ? ", " : "");
        abl_text_json(&t, f->paths[i].name);
        abl_text_add(&t, ", \"pipeline\": ");
        abl_text_json(&t, f->paths[i].pipeline);
        abl_text_add(&t, ", \"code\": ");
        abl_text_json(&t, f->paths[i].code);
        abl_text_add(&t, "}");
    }
    abl_text_add(&t, "]");
    if (t.oom) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

/* The catalogue's comma-separated aliases as a JSON list of strings ([] when there is none). */
static char *aliases_json(const char *list)
{
    abl_text t = {0};
    abl_text_add(&t, "[");
    int n = 0;
    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *one = len > 0 ? abl_strf("%.*s", (int)len, p) : NULL;
        if (len > 0 && one == NULL)
            t.oom = 1;
        if (one != NULL) {
            abl_text_add(&t, "%s", n++ ? ", " : "");
            abl_text_json(&t, one);
        }
        free(one);
        p = comma ? comma + 1 : NULL;
    }
    abl_text_add(&t, "]");
    if (t.oom) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

/* A cell from heap text and heap JSON (either NULL: out of memory); both freed. */
static abl_status cell_json_take(abl_report *r, char *text, char *json)
{
    abl_status st = text != NULL && json != NULL ? abl_report_cell(r, text, json, NULL) : ABL_ERR_NO_MEMORY;
    free(text);
    free(json);
    return st;
}

typedef struct col {
    const char *key, *header;
    abl_align align;
    int full_only;
} col;

static const col catalogue_cols[] = {
    {"model", "model", ABL_ALIGN_LEFT, 0},          {"hf_id", "Hugging Face id", ABL_ALIGN_LEFT, 1},
    {"aliases", "aliases", ABL_ALIGN_LEFT, 1},      {"family", "family", ABL_ALIGN_LEFT, 1},
    {"head_count", "heads", ABL_ALIGN_RIGHT, 0},    {"head_dim", "head dim", ABL_ALIGN_RIGHT, 0},
    {"layers", "layers", ABL_ALIGN_RIGHT, 0},       {"context", "context", ABL_ALIGN_RIGHT, 0},
    {"dtype", "dtype", ABL_ALIGN_LEFT, 0},          {"slopes", "slopes", ABL_ALIGN_LEFT, 0},
    {"slope_code", "slopes in code", ABL_ALIGN_LEFT, 1}, {"bias_form", "bias form", ABL_ALIGN_LEFT, 1},
    {"pipeline", "default pipeline", ABL_ALIGN_LEFT, 1}, {"code_paths", "code paths", ABL_ALIGN_LEFT, 1},
    {"engines", "serving engines", ABL_ALIGN_LEFT, 1},
    {"table5", "paper Table 5 row", ABL_ALIGN_LEFT, 1}, {"source", "source", ABL_ALIGN_LEFT, 1},
};

/* The entry's schedule as its display text ("press", "mpt:8"), made from the value. */
static abl_status cell_schedule(abl_report *r, const abl_model *m)
{
    abl_schedule_spec sched;
    abl_status st = abl_model_schedule(m, &sched);
    if (st == ABL_OK)
        st = cell_text(r, sched.text);
    abl_schedule_spec_free(&sched);
    return st;
}

static abl_status model_row(abl_report *r, const abl_model *m, int full)
{
    abl_status st = abl_report_row(r);
    const abl_code_path *p = abl_model_family_path(m->family, NULL);
    for (size_t c = 0; c < N(catalogue_cols) && st == ABL_OK; c++) {
        const char *k = catalogue_cols[c].key;
        if (catalogue_cols[c].full_only && !full)
            continue;
        if (strcmp(k, "model") == 0)
            st = cell_text(r, m->name);
        else if (strcmp(k, "hf_id") == 0)
            st = cell_text(r, m->hf_id);
        else if (strcmp(k, "aliases") == 0)
            st = cell_json_take(r, abl_strf("%s", m->aliases != NULL ? m->aliases : ""), aliases_json(m->aliases));
        else if (strcmp(k, "family") == 0)
            st = cell_text(r, m->family->name);
        else if (strcmp(k, "head_count") == 0)
            st = cell_count(r, (uint64_t)m->heads);
        else if (strcmp(k, "head_dim") == 0)
            st = cell_count(r, (uint64_t)m->head_dim);
        else if (strcmp(k, "layers") == 0)
            st = cell_count(r, (uint64_t)m->layers);
        else if (strcmp(k, "context") == 0)
            st = cell_count(r, m->context);
        else if (strcmp(k, "dtype") == 0)
            st = cell_text(r, m->dtype);
        else if (strcmp(k, "slopes") == 0)
            st = cell_schedule(r, m);
        else if (strcmp(k, "slope_code") == 0)
            st = cell_text(r, m->family->slope_code);
        else if (strcmp(k, "bias_form") == 0)
            st = cell_text(r, abl_bias_form_name(m->family->bias_form));
        else if (strcmp(k, "pipeline") == 0)
            st = cell_text(r, p->pipeline);
        else if (strcmp(k, "code_paths") == 0) {
            st = cell_json_take(r, paths_text(m->family), paths_json(m->family));
        } else if (strcmp(k, "engines") == 0) {
            char *t = abl_engines_text(m->family, 0);   /* abl_engines_served.c */
            st = t ? cell_text(r, t) : ABL_ERR_NO_MEMORY;
            free(t);
        } else if (strcmp(k, "table5") == 0)
            st = cell_text(r, m->table5);
        else
            st = cell_text(r, m->source);
    }
    return st;
}

abl_status abl_model_catalogue_report(int full, abl_report **out)
{
    abl_report *r = abl_report_new("ALiBi models in the catalogue", "models");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = ABL_OK;
    for (size_t c = 0; c < N(catalogue_cols) && st == ABL_OK; c++)
        if (full || !catalogue_cols[c].full_only)
            st = abl_report_column(r, catalogue_cols[c].key, catalogue_cols[c].header, catalogue_cols[c].align);
    for (size_t i = 0; i < N(models) && st == ABL_OK; i++)
        st = model_row(r, &models[i], full);
    if (st == ABL_OK && !full)
        st = abl_report_note(r, "'alibi-blind models NAME' shows one model: its Hugging Face id, aliases, code "
                                "paths and pipelines, and the source of every value (docs/models.md).");
    if (st == ABL_OK && !full) {
        char *t = abl_engines_summary();   /* abl_engines_served.c */
        st = t ? abl_report_note(r, t) : ABL_ERR_NO_MEMORY;
        free(t);
    }
    if (st == ABL_OK)
        st = abl_report_note(r, "An empty cell: not found in a published configuration (docs/models.md).");
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}

/* The entry's schedule as a meta line, its display text made from the value. */
static abl_status meta_schedule(abl_report *r, const abl_model *m)
{
    abl_schedule_spec sched;
    abl_status st = abl_model_schedule(m, &sched);
    if (st == ABL_OK)
        st = meta_quoted(r, "slopes", "slopes", sched.text);
    abl_schedule_spec_free(&sched);
    return st;
}

/* The source line and the serving engines with the code read (abl_engines_served.c). */
static abl_status meta_source_engines(abl_report *r, const abl_model *m)
{
    abl_status st = abl_report_meta(r, "source", "source", m->source, NULL);
    char *t = st == ABL_OK ? abl_engines_text(m->family, 1) : NULL;
    if (st == ABL_OK)
        st = t ? abl_report_meta(r, "engines", "serving engines", t, NULL) : ABL_ERR_NO_MEMORY;
    free(t);
    return st;
}

abl_status abl_model_detail_report(const abl_model *m, abl_report **out)
{
    if (m == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("ALiBi model", "code_paths");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = ABL_OK;
    const struct {
        const char *key, *label, *text;
    } textmeta[] = {
        {"model", "model", m->name},
        {"hf_id", "Hugging Face id", m->hf_id},
        {"aliases", "aliases", m->aliases},
        {"family", "family", m->family->name},
        {"table5", "paper Table 5 row", m->table5},
    };
    for (size_t i = 0; i < N(textmeta) && st == ABL_OK; i++) {
        const char *t = textmeta[i].text;
        char *js2 = NULL;
        if (t != NULL)   /* aliases: a list, as in the models list */
            js2 = strcmp(textmeta[i].key, "aliases") == 0 ? aliases_json(t) : abl_report_json_string(t);
        if (t != NULL && js2 == NULL)
            st = ABL_ERR_NO_MEMORY;
        else
            st = abl_report_meta(r, textmeta[i].key, textmeta[i].label, t && t[0] ? t : "-", t ? js2 : "null");
        free(js2);
    }
    const struct {
        const char *key, *label;
        uint64_t v;
    } nums[] = {
        {"head_count", "heads", (uint64_t)m->heads},
        {"head_dim", "head dim", (uint64_t)m->head_dim},
        {"layers", "layers", (uint64_t)m->layers},
        {"context", "trained context", m->context},
    };
    for (size_t i = 0; i < N(nums) && st == ABL_OK; i++) {
        char *num = abl_strf("%llu", (unsigned long long)nums[i].v);
        st = num == NULL ? ABL_ERR_NO_MEMORY
                         : abl_report_meta(r, nums[i].key, nums[i].label, nums[i].v ? num : "not found",
                                           nums[i].v ? num : "null");
        free(num);
    }
    if (st == ABL_OK)
        st = meta_quoted(r, "dtype", "default dtype", m->dtype);
    if (st == ABL_OK)
        st = meta_schedule(r, m);
    if (st == ABL_OK)
        st = abl_report_meta(r, "slope_code", "slopes in the code", m->family->slope_code, NULL);
    if (st == ABL_OK)
        st = meta_quoted(r, "bias_form", "bias form", abl_bias_form_name(m->family->bias_form));
    if (st == ABL_OK)
        st = meta_source_engines(r, m);
    if (st == ABL_OK)
        st = abl_report_column(r, "path", "code path", ABL_ALIGN_LEFT);
    if (st == ABL_OK)
        st = abl_report_column(r, "pipeline", "pipeline", ABL_ALIGN_LEFT);
    if (st == ABL_OK)
        st = abl_report_column(r, "code", "code read", ABL_ALIGN_LEFT);
    for (size_t i = 0; i < m->family->npaths && st == ABL_OK; i++) {
        const abl_code_path *p = &m->family->paths[i];
        st = abl_report_row(r);
        if (st == ABL_OK)
            st = cell_text(r, p->name);
        if (st == ABL_OK)
            st = cell_text(r, p->pipeline);
        if (st == ABL_OK)
            st = cell_text(r, p->code);
    }
    if (st == ABL_OK)
        st = abl_report_note(r, "The first code path is the default of analyze/simulate/check --model; "
                                "docs/models.md cites the config file and code of every value.");
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}
