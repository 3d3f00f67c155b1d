/* strdup, strndup are POSIX */
#define _POSIX_C_SOURCE 200809L
/* alibi-blind rope: RoPE as a code path computes it, against the exact rotation (issue 22, docs/rope.md).
 * The text is parsed here once: the code path, the numbers (exact decimals), the scaling, the model or
 * config.json; the library gets typed values (abl_rope_config). */
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include "abl_cli.h"

static const abl_cli_use rope_opts[] = {
    ABL_USE(ABL_OPT_BASE),
    ABL_USE(ABL_OPT_CONFIG),
    /* the positions: default the model's max_position_embeddings, else 4096 */
    {ABL_OPT_CTX, 0, NULL, "positions 0..N-1 (1 to 2^24; default: the model's max_position_embeddings, else 4096)"},
    /* the distance of the pairs (p, p + D) whose logits --q/--k evaluate, not a distance function */
    {ABL_OPT_DISTANCE, ABL_ARG_VALUE, "D", "with --q/--k: the distance D of the pairs (p, p+D) (default 1)"},
    /* the model dtype, one of bf16, fp16, fp32 */
    {ABL_OPT_DTYPE, 0, NULL, "the model dtype: bf16 (default, or the model's torch_dtype), fp16 or fp32"},
    ABL_USE(ABL_OPT_FORCE),
    ABL_USE(ABL_OPT_FORMAT),
    ABL_USE(ABL_OPT_HEAD_DIM),
    ABL_USE(ABL_OPT_K),
    /* a RoPE model of the small catalogue (docs/rope.md), not the ALiBi catalogue */
    {ABL_OPT_MODEL, 0, NULL, "a RoPE model: Llama-2-7b-hf, Meta-Llama-3-8B, Mistral-7B-v0.1, Qwen2-7B, "
                             "vicuna-7b-v1.5-16k (with or without the organisation)"},
    ABL_USE(ABL_OPT_OUTPUT),
    /* the RoPE code path instead of an attention pipeline */
    {ABL_OPT_PIPELINE, 0, "PATH", "the RoPE code path: hf-llama (default), flash-rotary, ggml-cpu (modelled from "
                                  "source, not measured)"},
    /* the rope picture instead of plot's panels */
    {ABL_OPT_PLOT, 0, NULL, "also draw the effective angle error of four pairs and the first-row shift sensitivity "
                            "against the position into FILE (.png, .svg, .pdf)"},
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_Q),
    ABL_USE(ABL_OPT_QUIET),
    ABL_USE(ABL_OPT_SCALING),
    ABL_USE(ABL_OPT_SHIFT),
    ABL_USE(ABL_OPT_TOLERANCE),
};

/* rope_scaling of a model or config.json, with its texts (the factor as written). */
static int rope_from_values(const char *what, int head_dim, const char *theta, const char *dtype, uint64_t maxpos,
                            abl_rope_scaling scaling, const char *factor, abl_rope_config *c)
{
    /* llama3's low/high factors and original length come with the config.json (rope_llama3_fields) */
    c->head_dim = head_dim;
    if (abl_cli_decimal(what, theta, 1, c->base))
        return ABL_EXIT_USAGE;
    if (dtype != NULL && abl_cli_dtype_one(what, dtype, "rope takes one model dtype", &c->dtype))
        return ABL_EXIT_USAGE;
    if (maxpos > 0) {
        c->n = maxpos < (UINT64_C(1) << 24) ? maxpos : (UINT64_C(1) << 24);
        c->max_position = maxpos;
    }
    c->scaling = scaling;
    if (scaling != ABL_ROPE_SCALING_NONE && factor != NULL && abl_cli_decimal(what, factor, 1, c->factor))
        return ABL_EXIT_USAGE;
    if (scaling == ABL_ROPE_SCALING_LINEAR && maxpos > 0) {
        /* a linear-scaled model is meant to run factor times its max_position_embeddings */
        double n = (double)maxpos * mpq_get_d(c->factor);
        c->n = n < (double)(UINT64_C(1) << 24) ? (uint64_t)n : (UINT64_C(1) << 24);
    }
    return 0;
}

/* longrope: the lists move into the config; the factor is expanded / original when the config has the
 * original length (Phi-3), with the original as the code's max_position_embeddings. */
static void rope_longrope_fields(abl_rope_file *f, abl_rope_config *c)
{
    c->long_factor = f->long_factor;
    c->short_factor = f->short_factor;
    f->long_factor = f->short_factor = NULL;
    c->ext_count = f->ext_count;
    c->has_attention_factor = f->has_attention_factor;
    c->attention_factor = f->attention_factor;
    if (f->has_original) {
        mpq_set_ui(c->factor, (unsigned long)f->max_position, (unsigned long)f->original_max_position);
        mpq_canonicalize(c->factor);
        c->max_position = f->original_max_position;
    }
}

static int rope_model(const abl_cli_cmd *cmd, const char **v, abl_rope_config *c)
{
    const char *name = abl_cli_arg(cmd, v, ABL_OPT_MODEL), *path = abl_cli_arg(cmd, v, ABL_OPT_CONFIG);
    if (name != NULL && path != NULL)
        return abl_cli_usage_error("rope: --model and --config exclude each other");
    if (name != NULL) {
        const abl_rope_model *m = abl_rope_model_find(name);
        if (m == NULL)
            return abl_cli_usage_error("--model: '%s' is not in the RoPE catalogue (Llama-2-7b-hf, Meta-Llama-3-8B, "
                                       "Mistral-7B-v0.1, Qwen2-7B, vicuna-7b-v1.5-16k); use --config FILE", name);
        return rope_from_values("model", m->head_dim, m->rope_theta, m->dtype, m->max_position, m->scaling, m->factor,
                                c);
    }
    if (path == NULL)
        return 0;
    abl_rope_file f;
    char *msg = NULL;
    abl_status st = abl_rope_file_read(path, &f, &msg);
    if (st != ABL_OK) {
        int rc = st == ABL_ERR_NO_MEMORY ? abl_cli_internal_error("%s", abl_cli_why(st, msg))
                                         : abl_cli_usage_error("--config: %s", abl_cli_why(st, msg));
        free(msg);
        return rc;
    }
    int rc = rope_from_values("config", f.head_dim, f.rope_theta, f.dtype, f.max_position, f.scaling, f.factor, c);
    if (rc == 0 && f.scaling == ABL_ROPE_SCALING_LLAMA3) {
        rc = abl_cli_decimal("config", f.low_freq, 1, c->low_freq);
        if (rc == 0)
            rc = abl_cli_decimal("config", f.high_freq, 1, c->high_freq);
        c->max_position = f.original_max_position;
        c->n = f.max_position < (UINT64_C(1) << 24) ? f.max_position : (UINT64_C(1) << 24);
    }
    if (rc == 0 && f.scaling == ABL_ROPE_SCALING_LONGROPE)
        rope_longrope_fields(&f, c);
    if (rc == 0 && f.scaling == ABL_ROPE_SCALING_YARN) {   /* the code's `get("beta_fast") or 32`, `or 1` */
        c->beta_fast = f.beta_fast != 0 ? f.beta_fast : 32;
        c->beta_slow = f.beta_slow != 0 ? f.beta_slow : 1;
        c->has_attention_factor = f.has_attention_factor;
        c->attention_factor = f.attention_factor;
        c->mscale = f.mscale;
        c->mscale_all_dim = f.mscale_all_dim;
        c->yarn_no_truncate = f.yarn_no_truncate;
        if (f.yarn_original > 0)   /* the ramp's ends from the original length; the factor stays the config's */
            c->max_position = f.yarn_original;
    }
    abl_rope_file_free(&f);
    return rc;
}

/* The fields of --scaling KIND:A:B..., each (malloc'd copy of the text) split at ':'; the count, or -1. */
static int scaling_fields(const char *s, char **copy, char *f[5])
{
    *copy = strdup(s);
    if (*copy == NULL)
        return -1;
    int n = 0;
    for (char *p = *copy; p != NULL && n < 5; n++) {
        f[n] = p;
        p = strchr(p, ':');
        if (p != NULL)
            *p++ = '\0';
    }
    return n;
}

/* --scaling yarn:F:MAXPOS[:BETA_FAST:BETA_SLOW] (binary64 betas, as the code's Python floats). */
static int rope_scaling_yarn(char *f[5], int n, abl_rope_config *c)
{
    c->scaling = ABL_ROPE_SCALING_YARN;
    int rc = abl_cli_decimal("scaling", f[1], 1, c->factor);
    if (rc == 0)
        rc = abl_cli_count("scaling", f[2], 2, UINT64_C(1) << 40, &c->max_position);
    if (rc == 0 && n == 5) {
        mpq_t b;
        mpfr_t x;   /* rounded to nearest, as Python reads a float (mpq_get_d would truncate) */
        mpq_init(b);
        mpfr_init2(x, 53);
        rc = abl_cli_decimal("scaling", f[3], 1, b);
        mpfr_set_q(x, b, MPFR_RNDN);
        c->beta_fast = mpfr_get_d(x, MPFR_RNDN);
        if (rc == 0)
            rc = abl_cli_decimal("scaling", f[4], 1, b);
        mpfr_set_q(x, b, MPFR_RNDN);
        c->beta_slow = mpfr_get_d(x, MPFR_RNDN);
        mpfr_clear(x);
        mpq_clear(b);
    }
    return rc;
}

/* One of --scaling longrope's lists: D0,D1,... positive decimals, each rounded to nearest binary64 as Python
 * reads the JSON's floats; malloc'd into *out, the count into *count. */
static int rope_factor_list(const char *text, double **out, int *count)
{
    int n = 1;
    for (const char *p = text; *p != '\0'; p++)
        n += *p == ',';
    double *v = calloc((size_t)n, sizeof *v);
    char *copy = strdup(text);
    if (v == NULL || copy == NULL) {
        free(v);
        free(copy);
        return abl_cli_internal_error("out of memory");
    }
    mpq_t q;
    mpfr_t x;
    mpq_init(q);
    mpfr_init2(x, 53);
    int rc = 0, i = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); rc == 0 && tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        rc = abl_cli_decimal("scaling", tok, 1, q);
        mpfr_set_q(x, q, MPFR_RNDN);
        v[i++] = mpfr_get_d(x, MPFR_RNDN);
    }
    if (rc == 0 && i != n)
        rc = abl_cli_usage_error("--scaling: longrope: '%s': a list of positive numbers separated by commas", text);
    mpfr_clear(x);
    mpq_clear(q);
    free(copy);
    if (rc != 0) {
        free(v);
        return rc;
    }
    *out = v;
    *count = n;
    return 0;
}

/* --scaling longrope:F:ORIGINAL:LONG:SHORT (F = max_position_embeddings / original_max_position_embeddings, as
 * Phi-3's config gives it; LONG, SHORT: head_dim / 2 factors each, comma-separated). */
static int rope_scaling_longrope(char *f[5], abl_rope_config *c)
{
    c->scaling = ABL_ROPE_SCALING_LONGROPE;
    int nl = 0, ns = 0;
    free(c->long_factor);
    free(c->short_factor);
    c->long_factor = c->short_factor = NULL;
    int rc = abl_cli_decimal("scaling", f[1], 1, c->factor);
    if (rc == 0)
        rc = abl_cli_count("scaling", f[2], 2, UINT64_C(1) << 40, &c->max_position);
    if (rc == 0)
        rc = rope_factor_list(f[3], &c->long_factor, &nl);
    if (rc == 0)
        rc = rope_factor_list(f[4], &c->short_factor, &ns);
    if (rc == 0 && nl != ns)
        rc = abl_cli_usage_error("--scaling: longrope: the long and short lists differ in length (%d, %d)", nl, ns);
    c->ext_count = nl;
    return rc;
}

/* --scaling none | linear:F | dynamic:F:MAXPOS | llama3:F:LOW:HIGH:ORIGINAL | yarn:F:MAXPOS[:BF:BS] */
static int rope_scaling(const char *s, abl_rope_config *c)
{
    char *copy, *f[5] = {NULL};
    int n = scaling_fields(s, &copy, f), rc = 0;
    if (n < 0)
        return abl_cli_internal_error("out of memory");
    if (n == 1 && strcmp(f[0], "none") == 0) {
        c->scaling = ABL_ROPE_SCALING_NONE;
    } else if (n == 2 && strcmp(f[0], "linear") == 0) {
        c->scaling = ABL_ROPE_SCALING_LINEAR;
        rc = abl_cli_decimal("scaling", f[1], 1, c->factor);
    } else if (n == 3 && strcmp(f[0], "dynamic") == 0) {
        c->scaling = ABL_ROPE_SCALING_DYNAMIC;
        rc = abl_cli_decimal("scaling", f[1], 1, c->factor);
        if (rc == 0)
            rc = abl_cli_count("scaling", f[2], 1, UINT64_C(1) << 40, &c->max_position);
    } else if ((n == 3 || n == 5) && strcmp(f[0], "yarn") == 0) {
        rc = rope_scaling_yarn(f, n, c);
    } else if (n == 5 && strcmp(f[0], "longrope") == 0) {
        rc = rope_scaling_longrope(f, c);
    } else if (n == 5 && strcmp(f[0], "llama3") == 0) {
        c->scaling = ABL_ROPE_SCALING_LLAMA3;
        rc = abl_cli_decimal("scaling", f[1], 1, c->factor);
        if (rc == 0)
            rc = abl_cli_decimal("scaling", f[2], 1, c->low_freq);
        if (rc == 0)
            rc = abl_cli_decimal("scaling", f[3], 1, c->high_freq);
        if (rc == 0)
            rc = abl_cli_count("scaling", f[4], 1, UINT64_C(1) << 40, &c->max_position);
    } else {
        rc = abl_cli_usage_error("--scaling: '%s': none, linear:F, dynamic:F:MAXPOS, llama3:F:LOW:HIGH:ORIGINAL, "
                                 "yarn:F:MAXPOS[:BETA_FAST:BETA_SLOW] or longrope:F:ORIGINAL:LONG:SHORT", s);
    }
    free(copy);
    return rc;
}

static int rope_shift(const char *s, abl_rope_config *c)
{
    const char *comma = strchr(s, ',');
    if (comma == NULL)
        return abl_cli_usage_error("--shift: '%s': two shifts D1,D2 with D1 < D2", s);
    char *a = strndup(s, (size_t)(comma - s));
    if (a == NULL)
        return abl_cli_internal_error("out of memory");
    int rc = abl_cli_count("shift", a, 0, UINT64_C(1) << 20, &c->delta1);
    free(a);
    if (rc == 0)
        rc = abl_cli_count("shift", comma + 1, 0, UINT64_C(1) << 20, &c->delta2);
    if (rc == 0 && c->delta1 >= c->delta2)
        rc = abl_cli_usage_error("--shift: '%s': D1 must be smaller than D2", s);
    return rc;
}

/* The options over the model's values. */
static int rope_options(const abl_cli_cmd *cmd, const char **v, abl_rope_config *c)
{
    const char *s;
    long hd;
    char *msg = NULL;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_PIPELINE)) != NULL && abl_rope_path_lookup(s, &c->path, &msg) != ABL_OK) {
        int rc = abl_cli_usage_error("--pipeline: %s", abl_cli_why(ABL_ERR_UNSUPPORTED, msg));
        free(msg);
        return rc;
    }
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEAD_DIM)) != NULL) {
        if (abl_cli_int("head-dim", s, 2, 1024, &hd))
            return ABL_EXIT_USAGE;
        if (hd % 2 != 0)
            return abl_cli_usage_error("--head-dim: %s is odd (RoPE rotates pairs)", s);
        c->head_dim = (int)hd;
    }
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_BASE)) != NULL && abl_cli_decimal("base", s, 1, c->base))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) != NULL &&
        abl_cli_dtype_one("dtype", s, "rope takes one model dtype", &c->dtype))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) != NULL && abl_cli_context("ctx", s, 1, UINT64_C(1) << 24, &c->n))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_SCALING)) != NULL && rope_scaling(s, c))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_SHIFT)) != NULL && rope_shift(s, c))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_TOLERANCE)) != NULL) {
        if (abl_cli_decimal("tolerance", s, 1, c->tolerance))
            return ABL_EXIT_USAGE;
        c->has_tolerance = 1;
    }
    return 0;
}

/* --q and --k: both or neither, each head_dim values. */
typedef struct rope_vectors {
    double *q, *k;
    uint64_t distance;
} rope_vectors;

static int rope_vector(const char *opt, const char *path, int d, double **out)
{
    int n = 0;
    char *msg = NULL;
    abl_status st = abl_rope_vector_read(path, out, &n, &msg);
    int rc = 0;
    if (st == ABL_ERR_NO_MEMORY)
        rc = abl_cli_internal_error("%s", abl_cli_why(st, msg));
    else if (st != ABL_OK)
        rc = abl_cli_usage_error("--%s: %s: %s", opt, path, abl_cli_why(st, msg));
    else if (n != d)
        rc = abl_cli_usage_error("--%s: %s holds %d values, the head dim is %d", opt, path, n, d);
    free(msg);
    return rc;
}

static int rope_qk_options(const abl_cli_cmd *cmd, const char **v, const abl_rope_config *c, rope_vectors *x)
{
    const char *q = abl_cli_arg(cmd, v, ABL_OPT_Q), *k = abl_cli_arg(cmd, v, ABL_OPT_K), *s;
    x->distance = 1;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_DISTANCE)) != NULL && abl_cli_count("distance", s, 0, c->n - 1, &x->distance))
        return ABL_EXIT_USAGE;
    if ((q == NULL) != (k == NULL))
        return abl_cli_usage_error("rope: --q and --k go together");
    if (q == NULL)
        return s != NULL ? abl_cli_usage_error("rope: --distance needs --q and --k") : 0;
    int rc = rope_vector("q", q, c->head_dim, &x->q);
    return rc ? rc : rope_vector("k", k, c->head_dim, &x->k);
}

static int rope_qk(const abl_rope_config *c, const rope_vectors *x, abl_report *r)
{
    abl_rope_qk res;
    char *msg = NULL;
    abl_status st = abl_rope_qk_run(c, x->q, x->k, x->distance, &res, &msg);
    if (st == ABL_OK)
        st = abl_rope_qk_report(&res, r);
    int rc = st == ABL_OK ? 0 : abl_cli_internal_error("%s", abl_cli_why(st, msg));
    free(msg);
    return rc;
}

/* --plot FILE: the picture, written only when it is whole. */
static int rope_picture(const abl_cli_ctx *ctx, const char *path, const abl_rope_result *res)
{
    if (path == NULL)
        return 0;
    abl_plot_render_options ro;
    if (abl_cli_plot_target(NULL, path, NULL, NULL, &ro))
        return ABL_EXIT_USAGE;
    abl_plot p;
    abl_status st = abl_rope_plot(res, &p);
    if (st != ABL_OK)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    int rc = abl_cli_plot_write(ctx, &p, &ro, "plot", path);
    abl_plot_free(&p);
    return rc;
}

static int rope_compute(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_rope_config *c,
                        const rope_vectors *x, abl_report **r)
{
    abl_cost cost;
    abl_rope_cost(c, &cost);
    if (x->q != NULL) {   /* six rotations of d/2 pairs per position */
        cost.units *= 7;
        cost.seconds *= 7;
    }
    if (abl_cli_budget_of("rope", v, &cost))
        return ABL_EXIT_USAGE;
    abl_cli_bar bar;
    abl_cli_bar_init(ctx, &bar, "rope", cmd, v);
    abl_rope_result res;
    char *msg = NULL;
    abl_status st = abl_rope_run(c, abl_cli_bar_update, &bar, &res, &msg);
    abl_cli_bar_finish(&bar);
    if (st != ABL_OK) {
        int rc = st == ABL_ERR_NO_MEMORY ? abl_cli_internal_error("%s", abl_cli_why(st, msg))
                                         : abl_cli_usage_error("rope: %s", abl_cli_why(st, msg));
        free(msg);
        return rc;
    }
    st = abl_rope_report(&res, r);
    int prc = st == ABL_OK ? rope_picture(ctx, abl_cli_arg(cmd, v, ABL_OPT_PLOT), &res) : 0;
    abl_rope_result_free(&res);
    if (prc != 0)
        return prc;
    if (st != ABL_OK)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    return x->q != NULL ? rope_qk(c, x, *r) : 0;
}

static int run_rope(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("rope: unexpected argument '%s'", pos[0]);
    const char *s;
    abl_output out = ABL_OUT_TEXT;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_FORMAT)) && abl_cli_output(s, &out))
        return ABL_EXIT_USAGE;
    abl_rope_config c;
    abl_rope_config_init(&c);
    abl_report *r = NULL;
    rope_vectors x = {NULL, NULL, 1};
    int rc = rope_model(cmd, v, &c);
    if (rc == 0)
        rc = rope_options(cmd, v, &c);
    if (rc == 0)
        rc = rope_qk_options(cmd, v, &c, &x);
    if (rc == 0)
        rc = rope_compute(ctx, cmd, v, &c, &x, &r);
    if (rc == 0)
        rc = abl_cli_emit(ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report_free(r);
    free(x.q);
    free(x.k);
    abl_rope_config_clear(&c);
    return rc;
}

const abl_cli_cmd abl_cli_rope_cmd = {
    "rope",
    "RoPE as a code path computes it, against the exact rotation: angle, cos/sin and logit errors",
    "[--model NAME | --config FILE] [--pipeline PATH] [--ctx N] [--q FILE.npy --k FILE.npy] [options]",
    "For every frequency pair i and position p < N: the angle the code applies (its fp32 arithmetic, operation\n"
    "by operation) against the exact p*theta_i (MPFR), the cos/sin it applies (after the cast into the model\n"
    "dtype) against the exact ones, the largest errors, and the first position where a pair's error passes the\n"
    "tolerance (default: theta_i, where neighbouring positions become indistinguishable). Then the logit error\n"
    "for unit q, k (the first token's row and keys 1 and N/2) and the shift sensitivity\n"
    "|s(p+D1, b+D1) - s(p+D2, b+D2)| of arXiv 2411.13476. Code paths (modelled from source, not measured):\n"
    "hf-llama (transformers LlamaRotaryEmbedding + apply_rotary_pos_emb), flash-rotary (flash_attn\n"
    "RotaryEmbedding + Triton rotary kernel), ggml-cpu (llama.cpp ggml_rope_ext on the CPU). With --q, --k:\n"
    "the logits of those vectors as the code computes them (first token's row, pairs (p, p+D), their shift\n"
    "sensitivity) against the exact relative logit. docs/rope.md.",
    rope_opts,
    sizeof rope_opts / sizeof rope_opts[0],
    run_rope,
    NULL,
};
