/* alibi-blind: the config.json fields, beyond heads, slopes and code path, that a model's attention depends
 * on (issue 19): BTLM's and jais' alibi_scaling and mup_scale_qk_dot_by_d, MPT's attn_config.clip_qkv. Each
 * is read, checked, and either used (alibi_scaling.factor scales the slopes) or shown in the pipeline's
 * source with why the zero-logit answer does not change (docs/models.md lists them per model_type). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include <mpfr.h>
#include "abl/core/slope.h"
#include "abl_internal.h"
#include "abl_config_internal.h"

/* One more note, "; "-separated, into *notes (heap). */
static abl_status add_note(char **notes, char *part)
{
    if (part == NULL)
        return ABL_ERR_NO_MEMORY;
    char *joined = *notes ? abl_strf("%s; %s", *notes, part) : abl_strf("%s", part);
    free(part);
    if (joined == NULL)
        return ABL_ERR_NO_MEMORY;
    free(*notes);
    *notes = joined;
    return ABL_OK;
}

/* llm-foundry's attention clamps q, k and v to [-clip_qkv, clip_qkv] (attention.py, MultiheadAttention.forward:
 * qkv.clamp_). The bias is not clamped, so the zero-logit answer does not change; what changes is the range
 * of the scores q.k^T * softmax_scale: at most clip^2 * head_dim * softmax_scale in magnitude. */
static abl_status mpt_clip_qkv(json_t *root, abl_model_spec *s, char **notes, char **msg)
{
    /* replit_lm (replit-code-v1-3b) keeps them at the top level: attn_clip_qkv, softmax_scale */
    int replit = s->model_type != NULL && strcmp(s->model_type, "replit_lm") == 0;
    json_t *ac = replit ? root : json_object_get(root, "attn_config");
    const char *name = replit ? "attn_clip_qkv" : "attn_config.clip_qkv";
    json_t *v = json_is_object(ac) ? json_object_get(ac, replit ? "attn_clip_qkv" : "clip_qkv") : NULL;
    if (v == NULL || json_is_null(v))
        return ABL_OK;
    double c = json_is_number(v) ? json_number_value(v) : -1;
    if (!(c > 0 && isfinite(c) && c < 1e30)) {
        abl_set_error(msg, "%s is not a positive number or null", name);
        return ABL_ERR_PARSE;
    }
    if (s->head_dim <= 0)
        return add_note(notes, abl_strf("%s %.17g: q, k, v clamped to [-%.17g, %.17g] (not the bias: the "
                                        "zero-logit answer is unchanged)", name, c, c, c));
    json_t *sv = json_object_get(ac, "softmax_scale");
    double scale = 1.0 / sqrt((double)s->head_dim); /* llm-foundry's default softmax_scale */
    if (json_is_number(sv) && json_number_value(sv) > 0)
        scale = json_number_value(sv);
    double bound = c * c * (double)s->head_dim * scale;
    return add_note(notes, abl_strf("%s %.17g: q, k, v clamped, so |q.k^T * scale| <= clip^2 * head_dim * "
                                    "scale = %.6g (not the bias: the zero-logit answer is unchanged; --logit-range "
                                    "-%.6g:%.6g for that range)", name, c, bound, bound, bound));
}

/* Cerebras's AlibiPositionEmbeddingLayer.forward: scale = alibi_scaling["factor"] when given, else
 * key_length / train_seq_len beyond train_seq_len, else 1; alibi = (slopes / -scale) * |i - j| (docs/models.md). */
static abl_status alibi_scaling(json_t *root, abl_model_spec *s, char **notes, char **msg)
{
    json_t *a = json_object_get(root, "alibi_scaling");
    if (a == NULL || json_is_null(a))
        return ABL_OK;
    json_t *type = json_is_object(a) ? json_object_get(a, "type") : NULL;
    if (!json_is_object(a) || (type != NULL && !(json_is_string(type) && strcmp(json_string_value(type), "linear") == 0))) {
        abl_set_error(msg, "alibi_scaling is not null or {\"type\": \"linear\", \"factor\" or \"train_seq_len\"}");
        return ABL_ERR_PARSE;
    }
    json_t *f = json_object_get(a, "factor"), *t = json_object_get(a, "train_seq_len");
    if (f != NULL && !json_is_null(f)) {
        double factor = json_is_number(f) ? json_number_value(f) : -1;
        /* the model's config class refuses a factor that is not > 1 */
        if (!(factor > 1 && isfinite(factor) && factor < 1e30)) {
            abl_set_error(msg, "alibi_scaling.factor is not a number > 1");
            return ABL_ERR_PARSE;
        }
        s->slope_divisor = factor;
        s->slopes_src.origin = ABL_ORIGIN_CONFIG;
        s->slopes_src.field = "alibi_scaling.factor (each fp32 slope / fp32(factor), rounded to fp32)";
        return ABL_OK;
    }
    if (t == NULL || json_is_null(t) || !json_is_integer(t) || json_integer_value(t) <= 1) {
        abl_set_error(msg, "alibi_scaling has no factor > 1 and no integer train_seq_len > 1");
        return ABL_ERR_PARSE;
    }
    /* the scale depends on the run's keys: the schedule is made for the context (abl_model_spec_schedule_keys) */
    s->alibi_train_seq_len = (uint64_t)json_integer_value(t);
    return add_note(notes, abl_strf("alibi_scaling.train_seq_len %lld: beyond %lld keys the slopes are divided by "
                                    "keys / %lld (fp32), as the model's code does", (long long)json_integer_value(t),
                                    (long long)json_integer_value(t), (long long)json_integer_value(t)));
}

/* mup_scale_qk_dot_by_d (vLLM also reads scale_qk_dot_by_d): the scores are q.k^T / head_dim instead of
 * / sqrt(head_dim) (attn_scale_power 1.0). It scales the scores, not the bias. */
static abl_status mup_qk(json_t *root, char **notes, char **msg)
{
    const char *name = "mup_scale_qk_dot_by_d";
    json_t *v = json_object_get(root, name);
    if (json_object_get(root, "scale_qk_dot_by_d") != NULL) {
        name = "scale_qk_dot_by_d";
        v = json_object_get(root, name);
    }
    if (v == NULL || json_is_null(v))
        return ABL_OK;
    if (!json_is_boolean(v)) {
        abl_set_error(msg, "%s is not true or false", name);
        return ABL_ERR_PARSE;
    }
    if (!json_is_true(v))
        return ABL_OK;
    return add_note(notes, abl_strf("%s: scores q.k^T / head_dim, not / sqrt(head_dim) (not the bias: the "
                                    "zero-logit answer is unchanged)", name));
}

abl_status abl_config_kernel_fields(json_t *root, abl_model_spec *s, char **msg)
{
    if (s->family == NULL)
        return ABL_OK;
    const char *fam = s->family->name;
    char *notes = NULL;
    abl_status st = ABL_OK;
    if (strcmp(fam, "mpt") == 0)
        st = mpt_clip_qkv(root, s, &notes, msg);
    if (strcmp(fam, "jais") == 0 || strcmp(fam, "btlm") == 0) {
        st = alibi_scaling(root, s, &notes, msg);
        if (st == ABL_OK)
            st = mup_qk(root, &notes, msg);
    }
    if (st == ABL_OK && notes != NULL) {
        /* the spec owns the text its pipeline source points into */
        char *field = abl_strf("%s; %s", s->pipeline_src.field ? s->pipeline_src.field : "", notes);
        if (field == NULL)
            st = ABL_ERR_NO_MEMORY;
        else {
            free(s->kernel_note);
            s->kernel_note = field;
            s->pipeline_src.field = field;
        }
    }
    free(notes);
    return st;
}

static abl_status scaled_slopes(const abl_model_spec *s, double divisor, const char *why, abl_schedule_spec *out);

abl_status abl_config_scaled_slopes(const abl_model_spec *s, abl_schedule_spec *out)
{
    return scaled_slopes(s, s->slope_divisor, "alibi_scaling.factor", out);
}

abl_status abl_model_spec_schedule_keys(const abl_model_spec *s, uint64_t keys, abl_schedule_spec *out)
{
    if (s == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (s->slope_divisor > 0 || s->alibi_train_seq_len == 0 || keys <= s->alibi_train_seq_len)
        return abl_model_spec_schedule(s, out);
    /* AlibiPositionEmbeddingLayer.forward: scale = key_length / train_seq_len, a Python true division of two
     * ints (the double nearest the quotient), then slopes / -scale on the fp32 tensor */
    char *why = abl_strf("alibi_scaling.train_seq_len %llu at %llu keys: %llu/%llu",
                         (unsigned long long)s->alibi_train_seq_len, (unsigned long long)keys,
                         (unsigned long long)keys, (unsigned long long)s->alibi_train_seq_len);
    if (why == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = scaled_slopes(s, (double)keys / (double)s->alibi_train_seq_len, why, out);
    free(why);
    return st;
}

static abl_status scaled_slopes(const abl_model_spec *s, double divisor, const char *why, abl_schedule_spec *out)
{
    abl_schedule_spec base;
    abl_schedule sched;
    memset(&sched, 0, sizeof sched);
    abl_status st = abl_schedule_spec_pow2(s->slopes_kind, s->slopes_mpt_bias, &base);
    if (st != ABL_OK)
        return st;
    st = abl_schedule_build(&base, s->heads, -1, &sched);
    abl_schedule_spec_free(&base);
    if (st != ABL_OK)
        return st;
    mpq_t *q = calloc((size_t)s->heads, sizeof *q);
    if (q == NULL) {
        abl_schedule_free(&sched);
        return ABL_ERR_NO_MEMORY;
    }
    mpfr_t m, f;
    mpfr_init2(m, 24); /* binary32: the slopes tensor, the divisor and the quotient are fp32 */
    mpfr_init2(f, 24);
    mpfr_set_d(f, divisor, MPFR_RNDN); /* torch casts the Python float to the tensor's fp32 */
    for (int h = 0; h < s->heads; h++)
        mpq_init(q[h]);
    for (int h = 0; h < s->heads && st == ABL_OK; h++) {
        st = abl_slope_mpfr(m, &sched.slopes[h], MPFR_RNDN); /* torch.tensor(_get_alibi_slopes(n)): RN32(m) */
        mpfr_div(m, m, f, MPFR_RNDN);                         /* slopes / scale, fp32 division */
        mpfr_get_q(q[h], m);
    }
    if (st == ABL_OK)
        st = abl_schedule_spec_slopes((const mpq_t *)q, (size_t)s->heads, out);
    /* The text is display only: the list of exact values is one line of hundreds of characters, so the
     * schedule is named by what it is made of (the values are in every head row, exact). */
    char *text = st == ABL_OK ? abl_strf("%s/%.17g (%s, fp32)", sched.spec, divisor, why) : NULL;
    if (st == ABL_OK && text == NULL) {
        abl_schedule_spec_free(out);
        st = ABL_ERR_NO_MEMORY;
    }
    if (text != NULL) {
        free(out->text);
        out->text = text;
    }
    for (int h = 0; h < s->heads; h++)
        mpq_clear(q[h]);
    free(q);
    mpfr_clear(m);
    mpfr_clear(f);
    abl_schedule_free(&sched);
    return st;
}
