/* alibi-blind: RoPE models: a small catalogue (docs/rope.md cites each value to the model's config.json) and
 * a Hugging Face config.json read into the values `rope` takes (jansson). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>
#include "abl_internal.h"
#include "model/abl_json_text.h"
#include "abl/rope/rope.h"

#define HF "https://huggingface.co/"
static const abl_rope_model models[] = {
    {"meta-llama/Llama-2-7b-hf", 128, "10000", "float16", 4096, ABL_ROPE_SCALING_NONE, NULL,
     HF "meta-llama/Llama-2-7b-hf/blob/main/config.json (no rope_theta: LlamaConfig's default 10000.0)"},
    {"meta-llama/Meta-Llama-3-8B", 128, "500000", "bfloat16", 8192, ABL_ROPE_SCALING_NONE, NULL,
     HF "meta-llama/Meta-Llama-3-8B/blob/main/config.json"},
    {"mistralai/Mistral-7B-v0.1", 128, "10000", "bfloat16", 32768, ABL_ROPE_SCALING_NONE, NULL,
     HF "mistralai/Mistral-7B-v0.1/blob/main/config.json"},
    {"Qwen/Qwen2-7B", 128, "1000000", "bfloat16", 131072, ABL_ROPE_SCALING_NONE, NULL,
     HF "Qwen/Qwen2-7B/blob/main/config.json"},
    {"lmsys/vicuna-7b-v1.5-16k", 128, "10000", "float16", 4096, ABL_ROPE_SCALING_LINEAR, "4",
     HF "lmsys/vicuna-7b-v1.5-16k/blob/main/config.json (rope_scaling linear, factor 4.0)"},
};

size_t abl_rope_model_count(void)
{
    return sizeof models / sizeof models[0];
}

const abl_rope_model *abl_rope_model_at(size_t i)
{
    return i < abl_rope_model_count() ? &models[i] : NULL;
}

/* The full name, or the part after the organisation, ASCII case-insensitive. */
const abl_rope_model *abl_rope_model_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < abl_rope_model_count(); i++) {
        const char *short_name = strchr(models[i].name, '/');
        if (strcasecmp(name, models[i].name) == 0 || (short_name && strcasecmp(name, short_name + 1) == 0))
            return &models[i];
    }
    return NULL;
}

/* A JSON number as decimal text (integers exactly; reals as the shortest text that reads back). */
static char *number_text(const json_t *v)
{
    if (json_is_integer(v))
        return abl_strf("%lld", (long long)json_integer_value(v));
    return abl_strf("%.17g", json_real_value(v));
}

static int positive_int(const json_t *o, const char *key, long long *out)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) <= 0)
        return -1;
    *out = json_integer_value(v);
    return 1;
}

static abl_status file_head_dim(const json_t *root, abl_rope_file *f, char **msg)
{
    long long hd = 0, hidden = 0, heads = 0;
    int a = positive_int(root, "head_dim", &hd);
    if (a < 0 || positive_int(root, "hidden_size", &hidden) < 0 || positive_int(root, "num_attention_heads", &heads) < 0) {
        abl_set_error(msg, "head_dim, hidden_size and num_attention_heads must be positive integers");
        return ABL_ERR_PARSE;
    }
    if (a == 0 && (hidden == 0 || heads == 0 || hidden % heads != 0)) {
        abl_set_error(msg, "no head_dim, and no hidden_size divisible by num_attention_heads");
        return ABL_ERR_PARSE;
    }
    long long d = a ? hd : hidden / heads;
    if (d > 1024 || d % 2 != 0) {
        abl_set_error(msg, "head dim %lld: an even number up to 1024", d);
        return ABL_ERR_UNSUPPORTED;
    }
    f->head_dim = (int)d;
    return ABL_OK;
}

/* rope_scaling llama3: low_freq_factor < high_freq_factor, original_max_position_embeddings. */
static abl_status file_llama3(const json_t *s, const json_t *factor, abl_rope_file *f, char **msg)
{
    const json_t *lo = json_object_get(s, "low_freq_factor"), *hi = json_object_get(s, "high_freq_factor");
    long long omp = 0;
    if (!json_is_number(lo) || !json_is_number(hi) || json_number_value(lo) <= 0 ||
        json_number_value(lo) >= json_number_value(hi) || positive_int(s, "original_max_position_embeddings", &omp) != 1) {
        abl_set_error(msg, "rope_scaling llama3: low_freq_factor > 0, high_freq_factor above it, and a positive "
                           "original_max_position_embeddings");
        return ABL_ERR_PARSE;
    }
    f->scaling = ABL_ROPE_SCALING_LLAMA3;
    f->original_max_position = (uint64_t)omp;
    f->factor = number_text(factor);
    f->low_freq = number_text(lo);
    f->high_freq = number_text(hi);
    return f->factor && f->low_freq && f->high_freq ? ABL_OK : ABL_ERR_NO_MEMORY;
}

/* yarn's keys of later transformers revisions (docs/rope.md): mscale, mscale_all_dim (numbers or null),
 * truncate (a boolean), original_max_position_embeddings (the length the ramp's ends are computed from). */
static abl_status file_yarn_later(const json_t *s, abl_rope_file *f, char **msg)
{
    const json_t *ms = json_object_get(s, "mscale"), *ma = json_object_get(s, "mscale_all_dim");
    const json_t *tr = json_object_get(s, "truncate");
    long long omp = 0;
    int orig = positive_int(s, "original_max_position_embeddings", &omp);
    if ((ms != NULL && !json_is_null(ms) && (!json_is_number(ms) || fabs(json_number_value(ms)) > 1e6)) ||
        (ma != NULL && !json_is_null(ma) && (!json_is_number(ma) || fabs(json_number_value(ma)) > 1e6)) ||
        (tr != NULL && !json_is_boolean(tr)) || orig < 0) {
        abl_set_error(msg, "rope_scaling yarn: mscale and mscale_all_dim numbers (|x| <= 1e6), truncate a boolean, "
                           "original_max_position_embeddings a positive integer");
        return ABL_ERR_PARSE;
    }
    f->mscale = json_is_number(ms) ? json_number_value(ms) : 0;
    f->mscale_all_dim = json_is_number(ma) ? json_number_value(ma) : 0;
    f->yarn_no_truncate = json_is_false(tr);
    f->yarn_original = orig == 1 ? (uint64_t)omp : 0;
    return ABL_OK;
}

/* rope_scaling yarn (_compute_yarn_parameters, docs/rope.md): factor, optional beta_fast, beta_slow,
 * attention_factor, and the later keys above. */
static abl_status file_yarn(const json_t *s, const json_t *factor, abl_rope_file *f, char **msg)
{
    abl_status later = file_yarn_later(s, f, msg);
    if (later != ABL_OK)
        return later;
    const json_t *bf = json_object_get(s, "beta_fast"), *bs = json_object_get(s, "beta_slow");
    const json_t *af = json_object_get(s, "attention_factor");
    if ((bf != NULL && !json_is_null(bf) && !json_is_number(bf)) ||
        (bs != NULL && !json_is_null(bs) && !json_is_number(bs)) ||
        (af != NULL && !json_is_null(af) && (!json_is_number(af) || json_number_value(af) <= 0))) {
        abl_set_error(msg, "rope_scaling yarn: beta_fast, beta_slow numbers, attention_factor a positive number");
        return ABL_ERR_PARSE;
    }
    f->scaling = ABL_ROPE_SCALING_YARN;
    f->beta_fast = json_is_number(bf) ? json_number_value(bf) : 0;
    f->beta_slow = json_is_number(bs) ? json_number_value(bs) : 0;
    f->has_attention_factor = json_is_number(af);
    f->attention_factor = f->has_attention_factor ? json_number_value(af) : 0;
    f->factor = number_text(factor);
    return f->factor ? ABL_OK : ABL_ERR_NO_MEMORY;
}

/* One of longrope's lists: positive finite numbers, one per pair (checked against head_dim by the caller). */
static double *factor_list(const json_t *a, int *count)
{
    if (!json_is_array(a) || json_array_size(a) < 1 || json_array_size(a) > 512)
        return NULL;
    double *v = calloc(json_array_size(a), sizeof *v);
    for (size_t j = 0; v != NULL && j < json_array_size(a); j++) {
        const json_t *x = json_array_get(a, j);
        v[j] = json_is_number(x) ? json_number_value(x) : 0;
        if (!(v[j] > 0 && v[j] < 1e300)) {
            free(v);
            return NULL;
        }
    }
    *count = (int)json_array_size(a);
    return v;
}

/* rope_scaling longrope (_compute_longrope_parameters at the revision modelled): short_factor, long_factor,
 * attention_factor; the factor is the top-level original_max_position_embeddings' ratio when present, else
 * rope_scaling's factor. */
static abl_status file_longrope(const json_t *root, const json_t *s, abl_rope_file *f, char **msg)
{
    int ns = 0, nl = 0;
    long long omp = 0;
    const json_t *factor = json_object_get(s, "factor"), *af = json_object_get(s, "attention_factor");
    f->short_factor = factor_list(json_object_get(s, "short_factor"), &ns);
    f->long_factor = factor_list(json_object_get(s, "long_factor"), &nl);
    int orig = positive_int(root, "original_max_position_embeddings", &omp);
    if (f->short_factor == NULL || f->long_factor == NULL || ns != nl || orig < 0 ||
        (orig == 0 && (!json_is_number(factor) || json_number_value(factor) < 1)) ||
        (af != NULL && !json_is_null(af) && (!json_is_number(af) || json_number_value(af) <= 0))) {
        abl_set_error(msg, "rope_scaling longrope: short_factor and long_factor, lists of positive numbers of one "
                           "length; a factor >= 1 or a top-level original_max_position_embeddings; attention_factor > 0");
        return ABL_ERR_PARSE;
    }
    f->scaling = ABL_ROPE_SCALING_LONGROPE;
    f->ext_count = ns;
    f->has_original = orig == 1;
    f->original_max_position = (uint64_t)omp;
    f->has_attention_factor = json_is_number(af);
    f->attention_factor = f->has_attention_factor ? json_number_value(af) : 0;
    f->factor = orig == 1 ? NULL : number_text(factor);
    return orig == 1 || f->factor ? ABL_OK : ABL_ERR_NO_MEMORY;
}

static abl_status file_scaling(const json_t *root, abl_rope_file *f, char **msg)
{
    const json_t *s = json_object_get(root, "rope_scaling");
    if (s == NULL || json_is_null(s))
        return ABL_OK;
    const json_t *type = json_object_get(s, "rope_type");
    if (type == NULL)
        type = json_object_get(s, "type");
    const json_t *factor = json_object_get(s, "factor");
    if (json_is_object(s) && json_is_string(type) && strcmp(json_string_value(type), "longrope") == 0)
        return file_longrope(root, s, f, msg);   /* its factor is optional */
    if (!json_is_object(s) || !json_is_string(type) || !json_is_number(factor) || json_number_value(factor) < 1) {
        abl_set_error(msg, "rope_scaling: an object with a type (rope_type) and a factor >= 1");
        return ABL_ERR_PARSE;
    }
    const char *t = json_string_value(type);
    if (strcmp(t, "linear") == 0)
        f->scaling = ABL_ROPE_SCALING_LINEAR;
    else if (strcmp(t, "dynamic") == 0)
        f->scaling = ABL_ROPE_SCALING_DYNAMIC;
    else if (strcmp(t, "llama3") == 0)
        return file_llama3(s, factor, f, msg);
    else if (strcmp(t, "yarn") == 0)
        return file_yarn(s, factor, f, msg);
    else if (strcmp(t, "default") == 0)
        return ABL_OK;
    else {
        abl_set_error(msg, "rope_scaling type '%s' is not modelled (linear, dynamic, llama3, yarn; longrope is not)", t);
        return ABL_ERR_UNSUPPORTED;
    }
    f->factor = number_text(factor);
    return f->factor ? ABL_OK : ABL_ERR_NO_MEMORY;
}

static abl_status file_fields(const json_t *root, abl_rope_file *f, char **msg)
{
    abl_status st = file_head_dim(root, f, msg);
    if (st != ABL_OK)
        return st;
    const json_t *theta = json_object_get(root, "rope_theta");
    if (theta != NULL && (!json_is_number(theta) || json_number_value(theta) <= 1 || !isfinite(json_number_value(theta)))) {
        abl_set_error(msg, "rope_theta must be a number greater than 1");
        return ABL_ERR_PARSE;
    }
    f->rope_theta = theta ? number_text(theta) : abl_strf("10000");   /* LlamaConfig's default */
    const json_t *dt = json_object_get(root, "torch_dtype");
    if (dt != NULL && !json_is_string(dt)) {
        abl_set_error(msg, "torch_dtype must be a string");
        return ABL_ERR_PARSE;
    }
    f->dtype = dt ? abl_strf("%s", json_string_value(dt)) : NULL;
    long long mp = 0;
    if (positive_int(root, "max_position_embeddings", &mp) < 0) {
        abl_set_error(msg, "max_position_embeddings must be a positive integer");
        return ABL_ERR_PARSE;
    }
    f->max_position = (uint64_t)mp;
    if (f->rope_theta == NULL || (dt && f->dtype == NULL))
        return ABL_ERR_NO_MEMORY;
    return file_scaling(root, f, msg);
}

static abl_status file_root(json_t *root, const char *what, abl_rope_file *out, char **msg)
{
    abl_status st = json_is_object(root) ? file_fields(root, out, msg) : ABL_ERR_PARSE;
    if (st == ABL_ERR_PARSE && !json_is_object(root))
        abl_set_error(msg, "%s: not a JSON object", what);
    json_decref(root);
    if (st != ABL_OK)
        abl_rope_file_free(out);
    return st;
}

abl_status abl_rope_file_parse(const char *buf, size_t len, abl_rope_file *out, char **msg)
{
    if (buf == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    json_t *root = abl_json_text_load(buf, len, "config.json", msg);
    if (root == NULL)
        return ABL_ERR_PARSE;
    return file_root(root, "config.json", out, msg);
}

abl_status abl_rope_file_read(const char *path, abl_rope_file *out, char **msg)
{
    if (path == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    json_error_t err;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL) {
        abl_set_error(msg, "%s: line %d: %s", path, err.line, err.text);
        return err.line <= 0 && err.position == 0 ? ABL_ERR_IO : ABL_ERR_PARSE;
    }
    return file_root(root, path, out, msg);
}

void abl_rope_file_free(abl_rope_file *f)
{
    if (f == NULL)
        return;
    free(f->rope_theta);
    free(f->dtype);
    free(f->factor);
    free(f->low_freq);
    free(f->high_freq);
    free(f->short_factor);
    free(f->long_factor);
    memset(f, 0, sizeof *f);
}
