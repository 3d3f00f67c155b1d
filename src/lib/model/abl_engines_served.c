/* alibi-blind: which serving engines run each catalogue family with its ALiBi bias (issue 18: `models`
 * shows them). A typed table keyed by family name; docs/models.md ("Serving engines") cites each row.
 *   llama.cpp: src/llama-model.cpp, load_hparams: the architectures that set f_max_alibi_bias (BLOOM,
 *     Refact, Jina-BERT-v2 and Baichuan-13B to 8.0f, MPT and Jais from the GGUF key
 *     LLM_KV_ATTENTION_MAX_ALIBI_BIAS); llama_model_rope_type lists LLM_ARCH_FALCON among the RoPE
 *     architectures (the Falcon-RW ALiBi variant is not served with its bias).
 *   vLLM: vllm/model_executor/models/{bloom,falcon,mpt,baichuan,jais}.py (the stored copies), each computing
 *     ALiBi slopes for its attention layer (falcon.py when config.alibi). */
#include <stddef.h>
#include <string.h>
#include "abl/model/catalogue.h"
#include "abl_internal.h"
#include "model/abl_engines_served.h"

typedef struct family_engines {
    const char *family;
    abl_engine_served e[2];   /* llama.cpp, vLLM */
} family_engines;

#define LCPP "llama.cpp"
#define VLLM "vLLM"

static const family_engines k_table[] = {
    {"bloom", {{LCPP, ABL_SERVED_YES, "llamacpp-cpu, llamacpp-cpu-fa",
                "src/llama-model.cpp load_hparams LLM_ARCH_BLOOM: f_max_alibi_bias = 8.0f"},
               {VLLM, ABL_SERVED_YES, "", "vllm/model_executor/models/bloom.py @4c2a75a9"}}},
    {"falcon-rw", {{LCPP, ABL_SERVED_NO, "",
                    "LLM_ARCH_FALCON is a RoPE architecture (llama_model_rope_type): no ALiBi"},
                   {VLLM, ABL_SERVED_YES, "", "vllm/model_executor/models/falcon.py @7477b4f8 (config.alibi)"}}},
    {"mpt", {{LCPP, ABL_SERVED_YES, "llamacpp-cpu, llamacpp-cpu-fa",
              "src/llama-model.cpp load_hparams LLM_ARCH_MPT: f_max_alibi_bias from the GGUF"},
             {VLLM, ABL_SERVED_YES, "", "vllm/model_executor/models/mpt.py @ce35e1d5"}}},
    {"baichuan", {{LCPP, ABL_SERVED_YES, "llamacpp-cpu, llamacpp-cpu-fa",
                   "src/llama-model.cpp load_hparams LLM_ARCH_BAICHUAN, 40 layers (13B): f_max_alibi_bias = 8.0f"},
                  {VLLM, ABL_SERVED_YES, "", "vllm/model_executor/models/baichuan.py @6b065994"}}},
    {"jais", {{LCPP, ABL_SERVED_YES, "llamacpp-cpu, llamacpp-cpu-fa",
               "src/llama-model.cpp load_hparams LLM_ARCH_JAIS: f_max_alibi_bias from the GGUF"},
              {VLLM, ABL_SERVED_YES, "", "vllm/model_executor/models/jais.py @77f4dbd1"}}},
    {"btlm", {{LCPP, ABL_SERVED_NOT_FOUND, "", "no BTLM architecture found in llama-model.cpp"},
              {VLLM, ABL_SERVED_NOT_FOUND, "", "no BTLM model file found"}}},
    {"mosaic-bert", {{LCPP, ABL_SERVED_NOT_FOUND, "", "no MosaicBERT architecture found"},
                     {VLLM, ABL_SERVED_NOT_FOUND, "", "no MosaicBERT model file found"}}},
    {"jina-bert", {{LCPP, ABL_SERVED_YES, "",
                    "src/llama-model.cpp load_hparams LLM_ARCH_JINA_BERT_V2: f_max_alibi_bias = 8.0f "
                    "(an encoder: the causal presets do not apply)"},
                   {VLLM, ABL_SERVED_NOT_FOUND, "", "no Jina-BERT-v2 (ALiBi) model file found"}}},
    {"refact", {{LCPP, ABL_SERVED_YES, "llamacpp-cpu, llamacpp-cpu-fa",
                 "src/llama-model.cpp load_hparams LLM_ARCH_REFACT: f_max_alibi_bias = 8.0f"},
                {VLLM, ABL_SERVED_YES, "", "vllm/model_executor/models/refact.py @0f8684ca (an early vLLM: "
                 "PagedAttentionWithALiBi, bloom's _get_alibi_slopes)"}}},
    {"unpublished", {{LCPP, ABL_SERVED_NOT_FOUND, "", "weights not published"},
                     {VLLM, ABL_SERVED_NOT_FOUND, "", "weights not published"}}},
};

const abl_engine_served *abl_model_engines(const abl_model_family *f, size_t *count)
{
    for (size_t i = 0; f != NULL && i < sizeof k_table / sizeof k_table[0]; i++) {
        if (strcmp(k_table[i].family, f->name) == 0) {
            if (count != NULL)
                *count = 2;
            return k_table[i].e;
        }
    }
    if (count != NULL)
        *count = 0;
    return NULL;
}

const char *abl_served_name(abl_served s)
{
    return s == ABL_SERVED_YES ? "yes" : s == ABL_SERVED_NO ? "no" : "not found";
}

char *abl_engines_text(const abl_model_family *f, int detail)
{
    size_t n = 0;
    const abl_engine_served *e = abl_model_engines(f, &n);
    abl_text t = {0};
    for (size_t i = 0; i < n; i++) {
        abl_text_add(&t, "%s%s: %s", i > 0 ? "; " : "", e[i].engine, abl_served_name(e[i].served));
        if (e[i].presets[0] != '\0')
            abl_text_add(&t, " (presets %s)", e[i].presets);
        if (detail)
            abl_text_add(&t, " [%s]", e[i].source);
    }
    if (n == 0)
        abl_text_add(&t, "-");
    return abl_text_take(&t);
}

char *abl_engines_summary(void)
{
    abl_text t = {0};
    abl_text_add(&t, "Serving engines that run the family with its ALiBi bias:");
    for (size_t i = 0; i < abl_model_family_count(); i++) {
        const abl_model_family *f = abl_model_family_at(i);
        size_t n = 0;
        const abl_engine_served *e = abl_model_engines(f, &n);
        int any = 0;
        abl_text_add(&t, "%s %s: ", i > 0 ? ";" : "", f->name);
        for (size_t k = 0; k < n; k++) {
            if (e[k].served == ABL_SERVED_YES) {
                abl_text_add(&t, "%s%s", any ? ", " : "", e[k].engine);
                any = 1;
            }
        }
        if (!any)
            abl_text_add(&t, "none found");
    }
    abl_text_add(&t, " ('alibi-blind models NAME' cites the code; docs/models.md).");
    return abl_text_take(&t);
}
