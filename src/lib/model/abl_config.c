/* alibi-blind: a model's settings from the catalogue or from a Hugging Face config.json. The JSON
 * is parsed by jansson; the mapping of each model_type's fields is documented in docs/models.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <mpfr.h>
#include "abl/core/slope.h"
#include "abl/model/config.h"
#include "abl_internal.h"
#include "model/abl_json_text.h"
#include "abl_config_internal.h"

const char *abl_origin_name(abl_origin o)
{
    switch (o) {
    case ABL_ORIGIN_DEFAULT: return "default";
    case ABL_ORIGIN_CATALOGUE: return "catalogue";
    case ABL_ORIGIN_CONFIG: return "config";
    case ABL_ORIGIN_OPTION: return "option";
    default: return "none";
    }
}

static void set_src(abl_source *s, abl_origin o, const char *field)
{
    s->origin = o;
    s->field = field != NULL ? field : "";
}

char *abl_source_text(const abl_source *s)
{
    const char *f = s->field != NULL ? s->field : "";
    switch (s->origin) {
    case ABL_ORIGIN_CONFIG: return abl_strf("config.json: %s", f);
    case ABL_ORIGIN_CATALOGUE: return abl_strf("catalogue: %s", f);
    case ABL_ORIGIN_OPTION: return abl_strf("option %s", f);
    case ABL_ORIGIN_DEFAULT: return abl_strf("default%s%s", f[0] ? ": " : "", f);
    default: return abl_strf("not set");
    }
}

static abl_format format_named(const char *name)
{
    abl_format f;
    memset(&f, 0, sizeof f);
    (void)abl_format_lookup(name, &f);
    return f;
}

/* c's 17 significant digits as an exact decimal num/den: the value "%.17g" prints (MPFR's correctly
 * rounded conversion, as glibc's printf), so the typed bias scale is the one its display text reads as. */
static abl_status decimal17_ratio(double c, abl_ratio *out)
{
    mpfr_t x;
    mpfr_init2(x, 53);
    mpfr_set_d(x, c, MPFR_RNDN);
    mpfr_exp_t e10 = 0;
    char *digits = mpfr_get_str(NULL, &e10, 10, 17, x, MPFR_RNDN); /* 0.d1...d17 x 10^e10 */
    mpfr_clear(x);
    if (digits == NULL)
        return ABL_ERR_NO_MEMORY;
    uint64_t num = strtoull(digits, NULL, 10), den = 1;
    mpfr_free_str(digits);
    /* c is 1/sqrt(head_dim) in (0, 1]: 17 - e10 is at most 19 for head_dim <= ABL_MAX_HEAD_DIM, in 64 bits */
    for (long k = 17 - (long)e10; k > 0; k--) {
        if (den > UINT64_MAX / 10)
            return ABL_ERR_UNSUPPORTED;
        den *= 10;
    }
    uint64_t a = num, b = den;
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    out->num = num / a;
    out->den = den / a;
    return ABL_OK;
}

/* Falcon's attention scales the alibi by inv_norm_factor = 1.0 / math.sqrt(head_dim), a binary64; the presets
 * are Falcon-RW's head_dim 64 (1/8). Another head dim: two typed overrides, the display name gets
 * ",head-dim=D,bias-scale=C" (C with 17 digits, which round back to the binary64). */
static abl_status falcon_head_dim(abl_pipeline_spec *p, int head_dim)
{
    double c = 1.0 / sqrt((double)head_dim);
    abl_pipeline_override ov[2] = {{.field = ABL_PF_HEAD_DIM, .value = head_dim}, {.field = ABL_PF_BIAS_SCALE}};
    abl_status st = decimal17_ratio(c, &ov[1].ratio);
    if (st != ABL_OK)
        return st;
    abl_pipeline_override *grown = realloc(p->overrides, (p->noverrides + 2) * sizeof *grown);
    char *text = abl_strf("%s,head-dim=%d,bias-scale=%.17g", p->text, head_dim, c);
    if (grown != NULL)
        p->overrides = grown;
    if (grown == NULL || text == NULL) {
        free(text);
        return ABL_ERR_NO_MEMORY;
    }
    memcpy(p->overrides + p->noverrides, ov, sizeof ov);
    p->noverrides += 2;
    free(p->text);
    p->text = text;
    return ABL_OK;
}

/* The family's default code path's pipeline (eager for a generic model), a copy of the catalogue's value. */
static abl_status default_pipeline(abl_model_spec *s, abl_origin o, const char *field)
{
    static const abl_code_path generic = {"eager", "eager", "eager", NULL, 0, ""};
    const abl_code_path *p = s->family ? abl_model_family_path(s->family, NULL) : NULL;
    s->path = p;
    set_src(&s->pipeline_src, o, field);
    abl_status st = abl_code_path_pipeline(p != NULL ? p : &generic, &s->pipeline);
    if (st == ABL_OK && s->family != NULL && strcmp(s->family->name, "falcon-rw") == 0 && s->head_dim > 0 &&
        s->head_dim != 64)
        st = falcon_head_dim(&s->pipeline, s->head_dim);
    return st;
}

void abl_model_spec_free(abl_model_spec *s)
{
    if (s == NULL)
        return;
    free(s->model_type);
    free(s->kernel_note);
    abl_pipeline_spec_free(&s->pipeline);
    memset(s, 0, sizeof *s);
}

abl_status abl_model_spec_from_catalogue(const abl_model *m, abl_model_spec *out)
{
    if (m == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (m->heads <= 0)
        return ABL_ERR_INVALID_ARGUMENT;
    out->model = m;
    out->family = m->family;
    out->heads = m->heads;
    set_src(&out->heads_src, ABL_ORIGIN_CATALOGUE, m->name);
    out->head_dim = m->head_dim;
    set_src(&out->head_dim_src, m->head_dim ? ABL_ORIGIN_CATALOGUE : ABL_ORIGIN_NONE, m->name);
    out->layers = m->layers;
    set_src(&out->layers_src, m->layers ? ABL_ORIGIN_CATALOGUE : ABL_ORIGIN_NONE, m->name);
    out->context = m->context;
    set_src(&out->context_src, m->context ? ABL_ORIGIN_CATALOGUE : ABL_ORIGIN_NONE, m->name);
    out->dtype = format_named(m->dtype);
    set_src(&out->dtype_src, ABL_ORIGIN_CATALOGUE, m->name);
    set_src(&out->slopes_src, ABL_ORIGIN_CATALOGUE, m->name);
    out->slopes_kind = m->slopes.kind;
    out->slopes_mpt_bias = m->slopes.kind == ABL_SCHEDULE_MPT ? m->slopes.mpt_bias : 8;
    abl_status st = default_pipeline(out, ABL_ORIGIN_CATALOGUE, m->name);
    if (st != ABL_OK)
        abl_model_spec_free(out);
    return st;
}

/* ------------------------------------------------------------------ config.json */

/* A field by dotted path ("attn_config.alibi"); NULL when absent. */
static json_t *get(json_t *root, const char *path)
{
    const char *dot = strchr(path, '.');
    if (dot == NULL)
        return json_object_get(root, path);
    char *key = strndup(path, (size_t)(dot - path)); /* NULL (out of memory): reads as absent */
    json_t *sub = key != NULL ? json_object_get(root, key) : NULL;
    free(key);
    return json_is_object(sub) ? get(sub, dot + 1) : NULL;
}

/* A list of alternative field names, the first present wins (NULL-terminated; static strings, so that a
 * source can name the field it read without a copy). */
typedef const char *const field_list[];

/* The first of the fields present; its (static) name in *used (NULL when none is present). */
static json_t *first_of(json_t *root, const char *const *fields, const char **used)
{
    *used = NULL;
    for (size_t i = 0; fields[i] != NULL; i++) {
        json_t *v = get(root, fields[i]);
        if (v != NULL && !json_is_null(v)) {
            *used = fields[i];
            return v;
        }
    }
    return NULL;
}

/* A positive integer field (one of `fields`) no larger than hi: 1 = found, 0 = absent, -1 = bad (*msg set). */
static int read_count(json_t *root, const char *const *fields, long long hi, long long *out, const char **used,
                      char **msg)
{
    json_t *v = first_of(root, fields, used);
    if (v == NULL)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > hi) {
        abl_set_error(msg, "%s is not a positive integer%s", *used,
                      json_is_integer(v) && json_integer_value(v) > hi ? " in range" : "");
        return -1;
    }
    *out = json_integer_value(v);
    return 1;
}

static int is_true(json_t *v)
{
    return v != NULL && json_is_true(v);
}

static int string_is(json_t *v, const char *s)
{
    return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* model_types whose position encoding is not ALiBi, and what they use. */
static const char *non_alibi_kind(const char *model_type)
{
    static const char *const rotary[] = {"llama", "mistral", "mixtral", "qwen", "qwen2", "qwen2_moe", "qwen3",
                                         "gemma", "gemma2", "gemma3", "phi", "phi3", "gpt_neox", "gptj",
                                         "stablelm", "starcoder2", "internlm", "internlm2", "chatglm", "yi",
                                         "cohere", "olmo", "olmo2", "persimmon", "deepseek", "deepseek_v2",
                                         "deepseek_v3", "codegen", "granite", "exaone", "nemotron"};
    static const char *const learned[] = {"gpt2", "opt", "gpt_bigcode", "gpt_neo", "bart", "roberta", "xlm-roberta",
                                          "distilbert", "electra"};
    for (size_t i = 0; i < sizeof rotary / sizeof rotary[0]; i++)
        if (strcmp(model_type, rotary[i]) == 0)
            return "rotary";
    for (size_t i = 0; i < sizeof learned / sizeof learned[0]; i++)
        if (strcmp(model_type, learned[i]) == 0)
            return "learned position embeddings";
    if (strcmp(model_type, "t5") == 0 || strcmp(model_type, "mt5") == 0)
        return "T5 relative position buckets";
    return NULL;
}

/* The family's fields: heads, hidden size, layers, context (alternatives, the first present wins). */
typedef struct field_map {
    const char *family;
    const char *const *heads, *const *hidden, *const *layers, *const *context;
} field_map;

#define FIELDS(...) ((field_list){__VA_ARGS__, NULL})

static const field_map maps[] = {
    {"bloom", FIELDS("n_head", "num_attention_heads"), FIELDS("hidden_size", "n_embed"),
     FIELDS("n_layer", "num_hidden_layers"), FIELDS("seq_length", "n_positions")},
    {"falcon-rw", FIELDS("num_attention_heads", "n_head"), FIELDS("hidden_size"),
     FIELDS("num_hidden_layers", "n_layer"), FIELDS("max_position_embeddings")},
    {"mpt", FIELDS("n_heads"), FIELDS("d_model"), FIELDS("n_layers"), FIELDS("max_seq_len")},
    {"baichuan", FIELDS("num_attention_heads"), FIELDS("hidden_size"), FIELDS("num_hidden_layers"),
     FIELDS("model_max_length")},
    {"jais", FIELDS("n_head"), FIELDS("n_embd"), FIELDS("n_layer"), FIELDS("n_positions")},
    {"btlm", FIELDS("n_head"), FIELDS("n_embd"), FIELDS("n_layer"), FIELDS("n_positions")},
    {"mosaic-bert", FIELDS("num_attention_heads"), FIELDS("hidden_size"), FIELDS("num_hidden_layers"),
     FIELDS("max_position_embeddings")},
    {"jina-bert", FIELDS("num_attention_heads"), FIELDS("hidden_size"), FIELDS("num_hidden_layers"),
     FIELDS("max_position_embeddings")},
    /* gpt_refact: llama.cpp's convert_hf_to_gguf.py RefactModel reads n_head, n_embd, n_layer, n_positions */
    {"refact", FIELDS("n_head", "num_attention_heads"), FIELDS("n_embd", "hidden_size"),
     FIELDS("n_layer", "num_hidden_layers"), FIELDS("n_positions", "max_position_embeddings")},
    {NULL, FIELDS("num_attention_heads", "n_head", "n_heads"), FIELDS("hidden_size", "d_model", "n_embd", "n_embed"),
     FIELDS("num_hidden_layers", "n_layer", "n_layers"),
     FIELDS("max_position_embeddings", "n_positions", "max_seq_len", "seq_length")},
};

/* The head dimension's source, "<hidden field> / heads", for each hidden-size field above (static). */
static const char *per_head(const char *hidden)
{
    static const char *const names[][2] = {{"hidden_size", "hidden_size / heads"}, {"n_embed", "n_embed / heads"},
                                           {"d_model", "d_model / heads"},         {"n_embd", "n_embd / heads"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(hidden, names[i][0]) == 0)
            return names[i][1];
    return "hidden size / heads"; /* not reached: every hidden field is listed */
}

/* The default pipeline's source for a model_type with a family (a known word: classify), static. */
static const char *model_type_field(const char *mt)
{
    static const char *const names[][2] = {
        {"bloom", "model_type bloom"}, {"falcon", "model_type falcon"}, {"RefinedWeb", "model_type RefinedWeb"},
        {"RefinedWebModel", "model_type RefinedWebModel"}, {"mpt", "model_type mpt"},
        {"baichuan", "model_type baichuan"}, {"jais", "model_type jais"}, {"btlm", "model_type btlm"},
        {"bert", "model_type bert"}, {"replit_lm", "model_type replit_lm"},
        {"gpt_refact", "model_type gpt_refact"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(mt, names[i][0]) == 0)
            return names[i][1];
    return "model_type"; /* not reached: classify gives a family to these only */
}

/* Decide the family (or generic), or explain why this is not an ALiBi model. Returns 0 on success. */
static int classify(json_t *root, const char *mt, const char **family, char **msg)
{
    *family = NULL;
    json_t *pet = json_object_get(root, "position_embedding_type");
    if (strcmp(mt, "bloom") == 0) {
        *family = "bloom";
    } else if (strcmp(mt, "falcon") == 0 || strcmp(mt, "RefinedWeb") == 0 || strcmp(mt, "RefinedWebModel") == 0) {
        if (!is_true(json_object_get(root, "alibi"))) {
            abl_set_error(msg, "this model does not use ALiBi (rotary: Falcon without \"alibi\": true)");
            return -1;
        }
        *family = "falcon-rw";
    } else if (strcmp(mt, "replit_lm") == 0) {
        /* replit-code-v1-3b: llm-foundry's MosaicGPT of its day, the attention fields at the top level */
        if (!is_true(json_object_get(root, "alibi"))) {
            abl_set_error(msg, "this model does not use ALiBi (replit_lm: \"alibi\" is not true)");
            return -1;
        }
        *family = "mpt";
    } else if (strcmp(mt, "mpt") == 0) {
        if (!is_true(get(root, "attn_config.alibi"))) {
            abl_set_error(msg, "this model does not use ALiBi (%s: attn_config.alibi is not true)",
                          is_true(get(root, "attn_config.rope")) ? "rotary" : "learned position embeddings");
            return -1;
        }
        *family = "mpt";
    } else if (strcmp(mt, "baichuan") == 0) {
        if (json_object_get(root, "max_position_embeddings") != NULL) {
            abl_set_error(msg, "this model does not use ALiBi (rotary: Baichuan 7B models, which have "
                                       "max_position_embeddings)");
            return -1;
        }
        *family = "baichuan";
    } else if (strcmp(mt, "jais") == 0 || strcmp(mt, "btlm") == 0) {
        if (!string_is(pet, "alibi")) {
            abl_set_error(msg, "this model does not use ALiBi (position_embedding_type is %s)",
                          json_is_string(pet) ? json_string_value(pet) : "not \"alibi\"");
            return -1;
        }
        *family = mt[0] == 'j' ? "jais" : "btlm";
    } else if (strcmp(mt, "gpt_refact") == 0) {
        *family = "refact"; /* its code always adds the ALiBi bias (get_alibi_biases): no field to check */
    } else if (strcmp(mt, "bert") == 0) {
        if (json_object_get(root, "alibi_starting_size") != NULL)
            *family = "mosaic-bert";
        else if (string_is(pet, "alibi"))
            *family = "jina-bert";
        else {
            abl_set_error(msg, "this model does not use ALiBi (absolute position embeddings)");
            return -1;
        }
    } else {
        const char *kind = non_alibi_kind(mt);
        int alibi = is_true(json_object_get(root, "alibi")) || is_true(get(root, "attn_config.alibi")) ||
                    string_is(pet, "alibi");
        if (kind != NULL && !alibi) {
            abl_set_error(msg, "this model does not use ALiBi (%s)", kind);
            return -1;
        }
        if (!alibi) {
            if (mt[0] == '\0')
                abl_set_error(msg, "no model_type and no ALiBi field (alibi, attn_config.alibi, "
                                           "position_embedding_type)");
            else {
                /* A message names at most 40 bytes of it: cut at a UTF-8 boundary, the cut marked. */
                size_t n = strlen(mt) > 40 ? 40 : strlen(mt);
                while (n > 0 && n < strlen(mt) && ((unsigned char)mt[n] & 0xC0) == 0x80) n--;
                abl_set_error(msg, "unknown model_type '%.*s%s' and no ALiBi field (alibi, "
                                           "attn_config.alibi, position_embedding_type)", (int)n, mt,
                              n < strlen(mt) ? "…" : "");
            }
            return -1;
        }
    }
    return 0;
}

static abl_status dtype_with(abl_model_spec *s, const char *used, json_t *v, char **msg);

static abl_status map_dtype(json_t *root, abl_model_spec *s, char **msg)
{
    const char *used = NULL;
    json_t *v = first_of(root, FIELDS("torch_dtype", "dtype"), &used);
    return dtype_with(s, used, v, msg);
}

/* v: the dtype field (NULL: none), named used. */
static abl_status dtype_with(abl_model_spec *s, const char *used, json_t *v, char **msg)
{
    if (v == NULL) {
        s->dtype = format_named("bf16");
        set_src(&s->dtype_src, ABL_ORIGIN_DEFAULT, "bf16, the config has no torch_dtype");
        return ABL_OK;
    }
    static const struct {
        const char *torch, *name;
    } names[] = {{"bfloat16", "bf16"}, {"float16", "fp16"}, {"float32", "fp32"}, {"half", "fp16"}, {"float", "fp32"}};
    const char *t = json_is_string(v) ? json_string_value(v) : NULL;
    const char *name = NULL;
    for (size_t i = 0; t != NULL && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(t, names[i].torch) == 0)
            name = names[i].name;
    if (t != NULL && name == NULL && strcmp(t, "auto") == 0) {
        s->dtype = format_named("bf16");
        set_src(&s->dtype_src, ABL_ORIGIN_DEFAULT, "bf16, torch_dtype is \"auto\"");
        return ABL_OK;
    }
    if (name == NULL) {
        abl_set_error(msg, "%s is not bfloat16, float16 or float32", used);
        return ABL_ERR_PARSE;
    }
    s->dtype = format_named(name);
    set_src(&s->dtype_src, ABL_ORIGIN_CONFIG, used);
    return ABL_OK;
}

/* The counts (heads, head dim, layers, context) of config.json; *used names the field last read. */
static abl_status counts_with(json_t *root, const field_map *fm, abl_model_spec *s, const char **used, char **msg)
{
    long long v = 0;
    int r = read_count(root, fm->heads, ABL_MAX_HEADS, &v, used, msg);
    if (r < 0)
        return ABL_ERR_PARSE;
    if (r == 0) {
        abl_set_error(msg, "no head count (%s)", fm->heads[0]);
        return ABL_ERR_PARSE;
    }
    s->heads = (int)v;
    set_src(&s->heads_src, ABL_ORIGIN_CONFIG, *used);
    if ((r = read_count(root, fm->hidden, INT32_MAX, &v, used, msg)) < 0)
        return ABL_ERR_PARSE;
    if (r > 0 && v % s->heads != 0) {
        /* transformers refuses it too (hidden_size must be divisible by num_heads); a default would be silent */
        abl_set_error(msg, "%s = %lld is not a multiple of %s = %d (no head dimension)", *used, (long long)v,
                      s->heads_src.field, s->heads);
        return ABL_ERR_PARSE;
    }
    if (r > 0 && v / s->heads > ABL_MAX_HEAD_DIM) {
        abl_set_error(msg, "%s / %s = %lld is not a head dimension from 1 to %d", *used, s->heads_src.field,
                      (long long)(v / s->heads), ABL_MAX_HEAD_DIM);
        return ABL_ERR_PARSE;
    }
    if (r > 0 && v % s->heads == 0) {
        s->head_dim = (int)(v / s->heads);
        set_src(&s->head_dim_src, ABL_ORIGIN_CONFIG, per_head(*used));
    }
    if ((r = read_count(root, fm->layers, INT32_MAX, &v, used, msg)) < 0)
        return ABL_ERR_PARSE;
    if (r > 0) {
        s->layers = (int)v;
        set_src(&s->layers_src, ABL_ORIGIN_CONFIG, *used);
    }
    /* Tokenizer-style "model_max_length" can be a huge sentinel; only a plausible context is kept. */
    if ((r = read_count(root, fm->context, INT64_C(1) << 40, &v, used, msg)) < 0)
        return ABL_ERR_PARSE;
    if (r > 0) {
        s->context = (uint64_t)v;
        set_src(&s->context_src, ABL_ORIGIN_CONFIG, *used);
    }
    return ABL_OK;
}

static abl_status map_counts(json_t *root, const field_map *fm, abl_model_spec *s, char **msg)
{
    const char *used = NULL;
    return counts_with(root, fm, s, &used, msg);
}

static abl_status map_config(json_t *root, abl_model_spec *s, char **msg)
{
    if (!json_is_object(root)) {
        abl_set_error(msg, "not a JSON object");
        return ABL_ERR_PARSE;
    }
    json_t *mtv = json_object_get(root, "model_type");
    if (mtv != NULL && !json_is_string(mtv)) {
        abl_set_error(msg, "model_type is not a string");
        return ABL_ERR_PARSE;
    }
    const char *mt = mtv ? json_string_value(mtv) : "";
    const char *family = NULL;
    if (classify(root, mt, &family, msg) != 0)
        return ABL_ERR_PARSE;
    /* Refused, never cut: a cut name would print as another (or as half a UTF-8 character). Real
     * model_types are a word ("mpt", "bloom", "RefinedWebModel"). */
    if (strlen(mt) > ABL_MODEL_TYPE_MAX) {
        abl_set_error(msg, "model_type is longer than %d bytes", ABL_MODEL_TYPE_MAX);
        return ABL_ERR_PARSE;
    }
    if ((s->model_type = strdup(mt)) == NULL)
        return ABL_ERR_NO_MEMORY;
    s->family = family ? abl_model_family_find(family) : NULL;
    const field_map *fm = &maps[sizeof maps / sizeof maps[0] - 1];
    for (size_t i = 0; family != NULL && i < sizeof maps / sizeof maps[0] - 1; i++)
        if (strcmp(maps[i].family, family) == 0)
            fm = &maps[i];

    abl_status st = map_counts(root, fm, s, msg);
    if (st != ABL_OK)
        return st;
    abl_config_catalogue_context(root, s); /* none in the config (BLOOM, Falcon): the catalogue's, said so */
    st = map_dtype(root, s, msg);
    if (st != ABL_OK)
        return st;
    if (family != NULL && strcmp(family, "mpt") == 0) {
        /* replit_lm keeps MPT's attn_config fields at the top level */
        const char *bias_field = strcmp(mt, "replit_lm") == 0 ? "alibi_bias_max" : "attn_config.alibi_bias_max";
        json_t *b = get(root, bias_field);
        long B = 8;
        if (b != NULL) {
            double d = json_is_integer(b) ? (double)json_integer_value(b) : json_is_real(b) ? json_real_value(b) : -1;
            if (!(d >= 1 && d <= ABL_MPT_BIAS_MAX && d == floor(d))) {
                abl_set_error(msg, "%s is not a whole number from 1 to %d (mpt:B)", bias_field, ABL_MPT_BIAS_MAX);
                return ABL_ERR_PARSE;
            }
            B = (long)d;
            set_src(&s->slopes_src, ABL_ORIGIN_CONFIG, bias_field);
        } else {
            set_src(&s->slopes_src, ABL_ORIGIN_DEFAULT, "llm-foundry's alibi_bias_max = 8");
        }
        s->slopes_kind = ABL_SCHEDULE_MPT;
        s->slopes_mpt_bias = B;
    } else {
        s->slopes_kind = ABL_SCHEDULE_PRESS;
        s->slopes_mpt_bias = 8;
        set_src(&s->slopes_src, ABL_ORIGIN_DEFAULT, family ? "the model code's get_slopes" : "Press et al.");
    }
    st = default_pipeline(s, family ? ABL_ORIGIN_CONFIG : ABL_ORIGIN_DEFAULT,
                          family ? model_type_field(s->model_type) : "generic ALiBi model");
    if (st == ABL_OK && family != NULL && strcmp(family, "mpt") == 0)
        st = abl_config_mpt_attn_impl(root, s, msg); /* the code path the config asks for */
    if (st == ABL_OK)
        st = abl_config_kernel_fields(root, s, msg); /* alibi_scaling, mup_*, clip_qkv */
    return st;
}

abl_status abl_model_spec_from_json(const char *text, size_t len, abl_model_spec *out, char **msg)
{
    if (text == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    json_t *root = abl_json_text_load(text, len, "not JSON", msg);
    if (root == NULL)
        return ABL_ERR_PARSE;
    abl_status st = map_config(root, out, msg);
    json_decref(root);
    if (st != ABL_OK)
        abl_model_spec_free(out);
    return st;
}

/* One bounded reader for a file and for standard input (the CLI's --config -): a stream that never ends
 * is refused at the same size as a file. */
abl_status abl_model_spec_from_stream(FILE *f, abl_model_spec *out, char **msg)
{
    if (f == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    abl_status st = buf ? ABL_OK : ABL_ERR_NO_MEMORY;
    while (st == ABL_OK) {
        if (len == cap) {
            if (cap >= ABL_CONFIG_MAX_BYTES) {
                abl_set_error(msg, "larger than %u bytes; not a config.json", ABL_CONFIG_MAX_BYTES);
                st = ABL_ERR_PARSE;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                st = ABL_ERR_NO_MEMORY;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                abl_set_error(msg, "cannot read: %s", strerror(errno));
                st = ABL_ERR_IO;
            }
            break;
        }
    }
    if (st == ABL_OK)
        st = abl_model_spec_from_json(buf, len, out, msg);
    free(buf);
    return st;
}

abl_status abl_model_spec_from_file(const char *path, abl_model_spec *out, char **msg)
{
    if (path == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        abl_set_error(msg, "cannot read: %s", strerror(errno));
        return ABL_ERR_IO;
    }
    abl_status st = abl_model_spec_from_stream(f, out, msg);
    fclose(f);
    return st;
}

abl_status abl_model_spec_schedule(const abl_model_spec *s, abl_schedule_spec *out)
{
    if (s == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (s->slope_divisor > 0)
        return abl_config_scaled_slopes(s, out); /* BTLM/jais alibi_scaling.factor */
    return abl_schedule_spec_pow2(s->slopes_kind, s->slopes_mpt_bias, out);
}

abl_status abl_model_spec_pipeline(const abl_model_spec *s, abl_pipeline_spec *out)
{
    if (s == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    return abl_pipeline_spec_copy(&s->pipeline, out);
}
