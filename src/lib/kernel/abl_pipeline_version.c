/* alibi-blind: the code revisions each pipeline preset models (pipeline field version; issue 18
 * "Versions"). A preset answers for one revision range; where the code's behaviour changed between
 * releases, each behaviour is a version of its own, the newest the default. docs/pipelines.md §3
 * ("Versions") cites the sources. */
#include <string.h>
#include <strings.h>
#include "abl/kernel/pipeline.h"
#include "kernel/abl_kernel_internal.h"

/* What a version changes in its preset's fields (-1: nothing). */
typedef struct version_def {
    const char *preset;  /* canonical preset name */
    const char *name;    /* the value of version= */
    const char *range;   /* the revision range it models, for help texts and outputs */
    int bias_add;        /* abl_bias_add, or -1 */
} version_def;

/* Newest first within a preset: the first row of a preset is its default. */
static const version_def k_versions[] = {
    {"eager", "029586da",
     "PyTorch softmax: CPU SoftMaxKernel.cpp @029586da (torch 1.13 headers) to CUDA PyTorch 2.11 (H200, measured)", -1},
    {"flash2", "c1f0be2f", "flash-attention flash_fwd_kernel.h @c1f0be2f (FlashAttention-2; PyTorch's copy @069f0986)",
     -1},
    {"sdpa-efficient", "01b4eaef", "PyTorch mem_eff_attention kernel_forward.h @01b4eaef; PyTorch 2.11 (H200, measured)",
     -1},
    {"sdpa-cudnn", "torch-2.11", "cuDNN as PyTorch 2.11.0+cu130 ships it (closed source; H200, measured)", -1},
    {"bloom-hf", "9d97831a", "transformers modeling_bloom.py @9d97831a to 5.17.0 (H200, measured)", -1},
    {"falcon-hf-eager", "00dcc6dd",
     "transformers modeling_falcon.py @00dcc6dd to 5.17.0 (H200, measured): FalconModel._update_causal_mask "
     "puts alibi/sqrt(head_dim) in the mask and the eager path adds alibi to the scores too (twice)",
     ABL_BIAS_ADD_BOTH},
    {"falcon-hf-eager", "44272086",
     "transformers modeling_falcon.py @44272086 (the v4.36 line, before _update_causal_mask): the eager mask "
     "from _prepare_4d_causal_attention_mask, alibi added to the scores only (once)",
     ABL_BIAS_ADD_SCORES},
    {"falcon-hf-sdpa", "00dcc6dd",
     "transformers modeling_falcon.py @44272086 to @00dcc6dd and 5.17.0: alibi/sqrt(head_dim) in SDPA's mask (once)",
     -1},
    {"falcon-rw-hf", "00dcc6dd",
     "transformers modeling_falcon.py @44272086 to @00dcc6dd and 5.17.0: alibi/sqrt(head_dim) in SDPA's mask (once)",
     -1},
    {"mpt", "00ef82a3", "llm-foundry llmfoundry/models/layers/attention.py @00ef82a3", -1},
    {"mpt-hf", "43526201", "transformers modeling_mpt.py @43526201 to 5.17.0 (H200, measured)", -1},
    {"llamacpp-cpu", "d99724f2", "llama.cpp/ggml @d99724f2 (CPU backend, measured)", -1},
    {"llamacpp-cpu-fa", "d99724f2", "llama.cpp/ggml @d99724f2 (CPU backend, measured)", -1},
    {"llamacpp-cuda-fa", "026f95b1",
     "llama.cpp ggml-cuda fattn-vec.cuh @026f95b1 with fattn-common.cuh @033efaf9 (modelled from source, not measured)",
     -1},
    {"vllm-paged", "04d1abd3",
     "vLLM csrc/attention/attention_kernels.cuh @04d1abd3, paged attention V1 (modelled from source, not measured)", -1},
    {"trtllm-decode", "02519b0c",
     "TensorRT-LLM decoderMaskedMultiheadAttentionTemplate.h @02519b0c (modelled from source, not measured)", -1},
    {"flex-alibi", "9be7b3d9",
     "PyTorch FlexAttention Triton template flex_attention.py.jinja @9be7b3d9 with attention-gym "
     "attn_gym/mods/alibi.py @290c1e74 (modelled from source, not measured)",
     -1},
    {"llamacpp-cuda", "07003f1f",
     "llama.cpp ggml-cuda softmax.cu soft_max_f32 @07003f1f with ggml-cuda.cu ggml_cuda_mul_mat_cublas @00108827 "
     "(modelled from source, not measured)",
     -1},
    {"vllm-flash", "617264c1",
     "vllm-project/flash-attention csrc/flash_attn/src/flash_fwd_kernel.h and alibi.h @617264c1; splits=S: "
     "flash_fwd_splitkv_kernel + combine_attn_seqk_parallel, num_splits_heuristic (flash_api.cpp) @617264c1; "
     "vLLM vllm/attention/backends/flash_attn.py flash_attn_with_kvcache @6c8a9786 (modelled from source, not "
     "measured)",
     -1},
    {"vllm-triton", "001ceb3e",
     "vLLM vllm/attention/ops/triton_unified_attention.py kernel_unified_attention_2d, and for a decode step "
     "kernel_unified_attention_3d + reduce_segments, @001ceb3e (modelled from source, not measured)",
     -1},
    {"trtllm-context", "22200e4b",
     "TensorRT-LLM fmha_v2 flash attention kernel_noloop.h, fragment.h @22200e4b, softmax.h @161ddf34, "
     "alibi_params.h @2a9abd95 (modelled from source, not measured)",
     -1},
    {"mosaicbert-triton", "daddaeff",
     "mosaicml/examples examples/benchmarks/bert/src/flash_attn_triton.py and bert_layers.py @daddaeff "
     "(modelled from source, not measured)",
     -1},
    {"refact-hf", "35834bab",
     "Refact-1_6B-fim modeling_gpt_refact.py as the public copy sycomix/refact hf/modeling_gpt_refact.py "
     "@35834bab has it (the Hub's own revision not read); PyTorch 1.13 CPU, validated",
     -1},
};

#define NVERSIONS (sizeof k_versions / sizeof k_versions[0])

static int newest_of(const char *preset)
{
    for (size_t i = 0; preset != NULL && i < NVERSIONS; i++)
        if (strcmp(k_versions[i].preset, preset) == 0)
            return (int)i;
    return -1;
}

int abl_version_parse(const char *text)
{
    if (strcasecmp(text, "newest") == 0)
        return ABL_VERSION_NEWEST;
    for (size_t i = 0; i < NVERSIONS; i++)
        if (strcasecmp(k_versions[i].name, text) == 0)
            return (int)i;
    return ABL_VERSION_UNKNOWN;
}

int abl_version_of(const char *preset, int version)
{
    if (version == ABL_VERSION_NEWEST)
        return newest_of(preset);
    if (version < 0 || (size_t)version >= NVERSIONS || preset == NULL)
        return -1;
    /* a name several presets share (llama.cpp's revision) stands for this preset's row */
    for (size_t i = 0; i < NVERSIONS; i++)
        if (strcmp(k_versions[i].preset, preset) == 0 && strcmp(k_versions[i].name, k_versions[version].name) == 0)
            return (int)i;
    return -1;
}

void abl_version_apply(abl_pipeline *p, int row)
{
    if (row < 0 || (size_t)row >= NVERSIONS)
        return;
    p->version = k_versions[row].name;
    if (k_versions[row].bias_add >= 0)
        p->bias_add = (abl_bias_add)k_versions[row].bias_add;
}

const char *abl_version_default(const char *preset)
{
    int row = newest_of(preset);
    return row >= 0 ? k_versions[row].name : "?";
}

const char *abl_pipeline_version_range(const char *preset, const char *version)
{
    int row = version == NULL ? newest_of(preset) : abl_version_of(preset, abl_version_parse(version));
    return row >= 0 ? k_versions[row].range : NULL;
}

const char *abl_pipeline_version_names(const char *preset)
{
    /* static lists: a preset with one version names it; falcon-hf-eager has two */
    if (preset != NULL && strcmp(preset, "falcon-hf-eager") == 0)
        return "00dcc6dd, 44272086";
    int row = newest_of(preset);
    return row >= 0 ? k_versions[row].name : NULL;
}
