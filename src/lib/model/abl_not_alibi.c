/* alibi-blind: well-known models that do NOT use ALiBi, so that `--model tiiuae/falcon-7b` says why it is
 * refused (RoPE) instead of suggesting the nearest ALiBi name (falcon-rw-7b). docs/models.md ("Not ALiBi")
 * cites the configuration or modeling file behind each line. */
#include <ctype.h>
#include <string.h>
#include "abl/model/catalogue.h"

typedef struct not_alibi {
    const char *pattern; /* a name, or a prefix ending in '*' (ASCII case-insensitive) */
    const char *why;
} not_alibi;

#define FALCON_WHY "Falcon-7B/40B/180B use rotary position embeddings (RoPE), not ALiBi (config.json \"alibi\": false); " \
                   "the ALiBi Falcons are falcon-rw-1b and falcon-rw-7b"
#define LLAMA_WHY "Llama models use rotary position embeddings (RoPE), not ALiBi"
#define MISTRAL_WHY "Mistral and Mixtral models use rotary position embeddings (RoPE), not ALiBi"
#define QWEN_WHY "Qwen models use rotary position embeddings (RoPE), not ALiBi"
#define JAIS_ADAPTED_WHY "jais-adapted models are Llama-2 based and use rotary position embeddings (RoPE), not ALiBi; " \
                         "the ALiBi jais models are jais-family-* and jais-13b/jais-30b"
#define BAICHUAN7_WHY "Baichuan 7B models use rotary position embeddings (RoPE); the ALiBi ones are the 13B models"
#define GEMMA_WHY "Gemma models use rotary position embeddings (RoPE), not ALiBi"
#define NEOX_WHY "GPT-NeoX and Pythia models use rotary position embeddings (RoPE), not ALiBi"
#define SEALION_WHY "SEA-LION v1 (sealion3b, sealion7b, MPT) uses learned position embeddings: its config.json has " \
                    "attn_config.alibi false; later SEA-LION versions are Llama and Gemma based (RoPE)"

static const not_alibi table[] = {
    {"tiiuae/falcon-7b*", FALCON_WHY},      {"falcon-7b*", FALCON_WHY},
    {"tiiuae/falcon-40b*", FALCON_WHY},     {"falcon-40b*", FALCON_WHY},
    {"tiiuae/falcon-180b*", FALCON_WHY},    {"falcon-180b*", FALCON_WHY},
    {"meta-llama/*", LLAMA_WHY},            {"llama*", LLAMA_WHY},
    {"codellama/*", LLAMA_WHY},             {"huggyllama/*", LLAMA_WHY},
    {"mistralai/*", MISTRAL_WHY},           {"mistral*", MISTRAL_WHY},
    {"mixtral*", MISTRAL_WHY},              {"qwen/*", QWEN_WHY},
    {"qwen*", QWEN_WHY},                    {"inceptionai/jais-adapted-*", JAIS_ADAPTED_WHY},
    {"jais-adapted-*", JAIS_ADAPTED_WHY},   {"baichuan-inc/baichuan-7b*", BAICHUAN7_WHY},
    {"baichuan-inc/baichuan2-7b*", BAICHUAN7_WHY}, {"google/gemma*", GEMMA_WHY},
    {"gemma*", GEMMA_WHY},                  {"eleutherai/gpt-neox*", NEOX_WHY},
    {"eleutherai/pythia*", NEOX_WHY},
    {"aisingapore/sealion*", SEALION_WHY},  {"aisingapore/sea-lion*", SEALION_WHY},
    {"sealion*", SEALION_WHY},              {"sea-lion*", SEALION_WHY},
};

/* name matches pattern: equal, or (pattern ending in '*') starts with the part before it. */
static int matches(const char *pattern, const char *name)
{
    size_t plen = strlen(pattern);
    int prefix = plen > 0 && pattern[plen - 1] == '*';
    if (prefix)
        plen--;
    size_t i = 0;
    for (; i < plen; i++)
        if (name[i] == '\0' || tolower((unsigned char)name[i]) != tolower((unsigned char)pattern[i]))
            return 0;
    return prefix || name[i] == '\0';
}

const char *abl_model_not_alibi(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (matches(table[i].pattern, name))
            return table[i].why;
    return NULL;
}
