/* alibi-blind analyze: per-head blindness distances and underflow fractions of one layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "abl_cli.h"

static const abl_cli_use analyze_opts[] = {
    ABL_USE(ABL_OPT_ATTENTION),
    ABL_USE(ABL_OPT_CLAMP),
    ABL_USE(ABL_OPT_CONFIG),
    ABL_USE(ABL_OPT_CONVENTION),
    ABL_USE(ABL_OPT_CTX),
    ABL_USE(ABL_OPT_DISTANCE),
    /* analyze takes a list */
    {ABL_OPT_DTYPE, 0, "LIST",
     "format of the exponential (default bf16; eXmY for custom), or a list (bf16,fp16 or all): compared, then one section each"},
    ABL_USE(ABL_OPT_FORCE),
    ABL_USE(ABL_OPT_FORMAT),
    ABL_USE(ABL_OPT_GRADIENT),
    ABL_USE(ABL_OPT_HEADS),
    ABL_USE(ABL_OPT_LEVEL),
    ABL_USE(ABL_OPT_LOGIT),
    ABL_USE(ABL_OPT_LOGIT_RANGE),
    ABL_USE(ABL_OPT_LOSS_SCALE),
    ABL_USE(ABL_OPT_MITIGATE),
    ABL_USE(ABL_OPT_MODEL),
    ABL_USE(ABL_OPT_OUTPUT),
    ABL_USE(ABL_OPT_PIPELINE),
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_QUIET),
    ABL_USE(ABL_OPT_SLOPES),
    ABL_USE(ABL_OPT_SOFTCAP),
    ABL_USE(ABL_OPT_UPSTREAM),
    ABL_USE(ABL_OPT_WINDOW),
};

/* With a kernel: the paper's delta and the pipeline's exact first blind distance, head by head. */
static int run_kernel(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_cli_work *work, abl_report **r)
{
    static const abl_opt refused[] = {ABL_OPT_CLAMP, ABL_OPT_DISTANCE, ABL_OPT_LEVEL, ABL_OPT_LOGIT, ABL_OPT_MITIGATE,
                                      ABL_OPT_SOFTCAP, ABL_OPT_WINDOW};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (v[refused[i]] != NULL)
            return abl_cli_usage_error("--%s: not with --model/--config/--pipeline (the kernel's answer is for zero "
                                       "logits and linear distances; drop --%s)", abl_cli_options[refused[i]].name,
                                       abl_cli_options[refused[i]].name);
    abl_cli_setup s;
    int rc = abl_cli_setup_resolve(cmd, v, ABL_SIMULATE_MAX_CONTEXT, &s);
    if (rc != 0) {
        abl_cli_setup_free(&s);
        return rc;
    }
    /* --convention (analyze's alone) completes the layer before the comparison is projected from it */
    const char *conv = abl_cli_arg(cmd, v, ABL_OPT_CONVENTION);
    abl_compare_config cc;
    if (conv != NULL && abl_cli_convention(conv, &s.layer.convention))
        rc = ABL_EXIT_USAGE;
    else
        rc = abl_cli_compare_config(&s, &cc);
    if (rc == 0)
        rc = abl_cli_compare(ctx, cmd->name, &cc, &s, ABL_OUT_TEXT, NULL, NULL, r, work);
    abl_cli_setup_free(&s);
    return rc;
}

static int analyze_with(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_cli_work *work, abl_layer *l,
                        abl_report **r);
static int unsupported_distance(const abl_cli_cmd *cmd, const char **v, const abl_analysis_config *cfg,
                                const char *slopes_text);

/* The report of one dtype (--dtype holds one format, or is absent). */
static int analyze_report(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_cli_work *work, abl_report **r)
{
    int kernel = abl_cli_arg(cmd, v, ABL_OPT_MODEL) || abl_cli_arg(cmd, v, ABL_OPT_CONFIG) ||
                 abl_cli_arg(cmd, v, ABL_OPT_PIPELINE);
    if (abl_cli_arg(cmd, v, ABL_OPT_GRADIENT) == NULL && abl_cli_gradient_refuse_without(cmd, v, "--gradient"))
        return ABL_EXIT_USAGE;
    if (kernel && abl_cli_arg(cmd, v, ABL_OPT_GRADIENT) != NULL)
        return abl_cli_usage_error("--gradient: the closed form answers the layer of the options (--heads, --slopes, "
                                   "--dtype ...); a kernel's backward pass is simulate --backward");
    if (kernel)
        return run_kernel(ctx, cmd, v, work, r);
    /* the layer of the paper's analysis, built from the options alone */
    abl_layer l;
    abl_layer_init(&l);
    int rc = analyze_with(ctx, cmd, v, work, &l, r);
    abl_layer_free(&l);
    return rc;
}

/* What the overview of analyze --dtype LIST compares, dtype by dtype (meta and summary keys). */
static const abl_report_compare plain_compare[] = {
    {"tau", "τ"}, {"blind_heads", "blind heads"}, {"row_fraction", "row fraction"},
    {"matrix_fraction", "matrix fraction"}, {"mass_lost", "mass lost"},
};
static const abl_report_compare kernel_compare[] = {
    {"paper_blind_heads", "paper: blind"}, {"blind_heads", "kernel: blind"},
    {"paper_row_fraction", "paper: row"}, {"row_fraction", "kernel: row"},
    {"matrix_fraction", "kernel: matrix"},
};

#define ANALYZE_MAX_DTYPES 64

/* analyze --dtype bf16,fp16: the same layer once per format, one document (abl_report_set). */
static int analyze_dtypes(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const char *list, abl_output out)
{
    abl_format fmts[ANALYZE_MAX_DTYPES];
    size_t n = 0;
    if (abl_cli_dtype_list("dtype", list, fmts, ANALYZE_MAX_DTYPES, &n))
        return ABL_EXIT_USAGE;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < i; k++)
            if (strcmp(fmts[i].name, fmts[k].name) == 0)
                return abl_cli_usage_error("--dtype: %s is named twice in '%s'", fmts[i].name, list);
    const char **w = malloc(ABL_OPT_COUNT * sizeof *w);
    if (w == NULL)
        return abl_cli_internal_error("out of memory");
    memcpy(w, v, ABL_OPT_COUNT * sizeof *w);
    const size_t slot = ABL_OPT_DTYPE;
    abl_report *reps[ANALYZE_MAX_DTYPES] = {NULL};
    const char *labels[ANALYZE_MAX_DTYPES];
    /* n formats are n times the work: each run gets 1/n of the budget, so the whole stays within it
     * (and the refusal says so). */
    abl_cli_work work = abl_cli_work_of("analyze", v);
    char *what = abl_cli_printf("analyze (1/%zu of the budget for each of %zu formats)", n, n);
    int rc = what != NULL ? ABL_EXIT_OK : abl_cli_internal_error("out of memory");
    work.what = what;
    work.seconds /= (double)n;
    for (size_t i = 0; rc == ABL_EXIT_OK && i < n; i++) {
        w[slot] = labels[i] = fmts[i].name;
        rc = analyze_report(ctx, cmd, w, &work, &reps[i]);
    }
    free(what);
    if (rc == ABL_EXIT_OK) {
        int kernel = abl_cli_arg(cmd, v, ABL_OPT_MODEL) || abl_cli_arg(cmd, v, ABL_OPT_CONFIG) ||
                     abl_cli_arg(cmd, v, ABL_OPT_PIPELINE);
        abl_report_set set = {
            (const abl_report *const *)reps, labels, n,
            kernel ? "ALiBi blindness by dtype: the paper's model and the real kernel" : "ALiBi blindness by dtype",
            "dtype", "dtype", "dtypes", "analyses",
            kernel ? kernel_compare : plain_compare,
            kernel ? sizeof kernel_compare / sizeof kernel_compare[0] : sizeof plain_compare / sizeof plain_compare[0],
        };
        rc = abl_cli_emit_set(ctx, &set, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    }
    for (size_t i = 0; i < n; i++)
        abl_report_free(reps[i]);
    free(w);
    return rc;
}

static int run_analyze(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("analyze: unexpected argument '%s'", pos[0]);
    abl_output out = ABL_OUT_TEXT;
    const char *s = abl_cli_arg(cmd, v, ABL_OPT_FORMAT);
    if (s != NULL && abl_cli_output(s, &out))
        return ABL_EXIT_USAGE;
    const char *mlist = abl_cli_arg(cmd, v, ABL_OPT_MODEL);
    if (mlist != NULL && strchr(mlist, ',') != NULL) /* --model a,b,c: one table, a row per model */
        return abl_cli_model_list(ctx, cmd, v, out, analyze_report);
    const char *dt = abl_cli_arg(cmd, v, ABL_OPT_DTYPE);
    if (dt != NULL && (strchr(dt, ',') != NULL || strcasecmp(dt, "all") == 0))
        return analyze_dtypes(ctx, cmd, v, dt, out);
    abl_report *r = NULL;
    abl_cli_work work = abl_cli_work_of("analyze", v);
    int rc = analyze_report(ctx, cmd, v, &work, &r);
    if (rc == ABL_EXIT_OK)
        rc = abl_cli_emit(ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report_free(r);
    return rc;
}

/* A blindness distance beyond MPFR's exponent range: name the input that put it there (a logit given, a
 * log distance, else the slopes), never an option the user did not give. */
static int unsupported_distance(const abl_cli_cmd *cmd, const char **v, const abl_analysis_config *cfg,
                                const char *slopes_text)
{
    const char *range = abl_cli_arg(cmd, v, ABL_OPT_LOGIT_RANGE), *logit = abl_cli_arg(cmd, v, ABL_OPT_LOGIT);
    const char *g = cfg->distance == ABL_DISTANCE_LOG ? "exp((eps - tau)/m) - 1" : "(eps - tau)/m";
    if (range != NULL)
        return abl_cli_usage_error("--logit-range: '%s': the blindness distance %s at these logits is beyond "
                                   "MPFR's exponent range (about 2^(2^62))", range, g);
    if (logit != NULL)
        return abl_cli_usage_error("--logit: '%s': the blindness distance %s at this logit is beyond MPFR's "
                                   "exponent range (about 2^(2^62))", logit, g);
    if (cfg->distance == ABL_DISTANCE_LOG)
        return abl_cli_usage_error("analyze: with log distances a blindness distance exp((eps - tau)/m) - 1 is "
                                   "beyond MPFR's exponent range ((eps - tau)/m above about 3e18 nats)");
    return abl_cli_usage_error("--slopes: '%s': a blindness distance (eps - tau)/m is beyond MPFR's exponent range",
                               slopes_text != NULL ? slopes_text : "press");
}

/* A schedule error, from the parse at the boundary or from the run (the list's length against --heads). */
/* msg: the library's reason, when it gave one (NULL: the status says it). */
static int slopes_error(abl_status st, const abl_analysis_config *cfg, const char *slopes_text, const char *msg)
{
    if (st == ABL_ERR_HEADS_RANGE && cfg->heads > 0 && slopes_text != NULL && msg == NULL)
        return abl_cli_usage_error("--slopes: the list '%s' does not have --heads %d entries", slopes_text, cfg->heads);
    return abl_cli_usage_error("--slopes: '%s': %s", slopes_text ? slopes_text : "press", abl_cli_why(st, msg));
}

/* The numbers (--logit, --logit-range, --clamp, --softcap) are read here, once, into the layer's exact
 * rationals. 0, or the exit status after the one-line error. */
static int read_numbers(const abl_cli_cmd *cmd, const char **v, abl_layer *l)
{
    const char *s;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_LOGIT)) != NULL) {
        if (abl_cli_decimal("logit", s, 0, l->logit))
            return ABL_EXIT_USAGE;
        l->has_logit = 1;
    }
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_LOGIT_RANGE)) != NULL) {
        const char *colon = strchr(s, ':');
        if (colon == NULL || strchr(colon + 1, ':') != NULL)
            return abl_cli_usage_error("--logit-range: '%s' is not LO:HI (e.g. -10:5)", s);
        char *lo = strdup(s);
        if (lo == NULL)
            return abl_cli_internal_error("out of memory");
        lo[colon - s] = '\0';
        int bad = abl_cli_decimal("logit-range", lo, 0, l->logit_lo) ||
                  abl_cli_decimal("logit-range", colon + 1, 0, l->logit_hi);
        free(lo);
        if (bad)
            return ABL_EXIT_USAGE;
        if (mpq_cmp(l->logit_lo, l->logit_hi) > 0)
            return abl_cli_usage_error("--logit-range: LO is above HI in '%s'", s);
        l->has_logit_range = 1;
    }
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CLAMP)) != NULL) {
        if (abl_cli_decimal("clamp", s, 0, l->clamp))
            return ABL_EXIT_USAGE;
        /* The bias -m*d is never positive: a clamp c >= 0 flattens all of it, almost surely a sign error. */
        if (mpq_sgn(l->clamp) > 0)
            return abl_cli_usage_error("--clamp: %s is positive, so max(-m*d, c) = c flattens every bias "
                                       "(the bias is never positive); did you mean --clamp -%s?", s, s);
        if (mpq_sgn(l->clamp) == 0)
            return abl_cli_usage_error("--clamp: 0 flattens every bias to 0 (the bias is never positive); "
                                       "a clamp is negative, e.g. --clamp -87");
        l->has_clamp = 1;
    }
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_SOFTCAP)) != NULL) {
        if (abl_cli_decimal("softcap", s, 1, l->softcap))
            return ABL_EXIT_USAGE;
        l->has_softcap = 1;
    }
    return 0;
}

/* Run the analysis of cfg with the progress bar, and make its report (*r); the exit status. */
static int run_analysis(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, abl_analysis_config *cfg,
                        const char *slopes_text, abl_report **r)
{
    abl_cli_bar bar;
    abl_cli_bar_init(ctx, &bar, "analyze", cmd, v);
    cfg->progress.fn = abl_cli_bar_update;
    cfg->progress.ctx = &bar;
    abl_analysis a;
    abl_status st = abl_analysis_run(cfg, &a);
    int rc = ABL_EXIT_OK;
    if (st != ABL_OK) /* cleared before any message, so an error stays one line */
        abl_cli_bar_finish(&bar);
    if (st == ABL_ERR_HEADS_RANGE && cfg->heads > 0 && cfg->slopes != NULL) {
        rc = slopes_error(st, cfg, slopes_text, NULL);
    } else if (st == ABL_ERR_BAD_SLOPE && cfg->slopes == NULL && (cfg->mitigations & ABL_MITIGATE_EXPLICIT)) {
        /* E's slopes, not a --slopes the user gave: -tau/(32*2^(h-1)) leaves the doubles (the smallest
         * positive is 2^-1074) for the last heads of a layer this wide. */
        rc = abl_cli_usage_error("--mitigate: E's slope -tau/(32*2^(h-1)) of the last of --heads %d is below the "
                                 "smallest positive double (2^-1074): give fewer heads",
                                 cfg->heads);
    } else if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE ||
               st == ABL_ERR_DEGENERATE) {
        rc = slopes_error(st, cfg, slopes_text, NULL);
    } else if (st == ABL_ERR_UNSUPPORTED) {
        rc = unsupported_distance(cmd, v, cfg, slopes_text);
    } else if (st == ABL_ERR_NO_MEMORY) {
        rc = abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    } else if (st != ABL_OK) {
        rc = abl_cli_usage_error("analyze: %s", abl_cli_why(st, NULL));
    } else {
        st = abl_analysis_report(&a, r);
    }
    abl_cli_bar_finish(&bar);
    if (rc == ABL_EXIT_OK && st != ABL_OK)
        rc = abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    abl_analysis_free(&a);
    return rc;
}

/* --distance into the layer; read_level --level. 0, or the exit status after the one-line error. */
static int read_kinds(const abl_cli_cmd *cmd, const char **v, abl_layer *l)
{
    const char *s;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_DISTANCE)) != NULL) {
        if (strcasecmp(s, "linear") == 0)
            l->distance = ABL_DISTANCE_LINEAR;
        else if (strcasecmp(s, "log") == 0)
            l->distance = ABL_DISTANCE_LOG;
        else
            return abl_cli_usage_error("--distance: unknown distance '%s' (known: linear, log)", s);
    }
    return 0;
}

static int read_level(const abl_cli_cmd *cmd, const char **v, abl_layer *l)
{
    const char *s;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_LEVEL)) != NULL) {
        if (strcasecmp(s, "exponent") == 0)
            l->level = ABL_LEVEL_EXPONENT;
        else if (strcasecmp(s, "weight") == 0)
            l->level = ABL_LEVEL_WEIGHT;
        else
            return abl_cli_usage_error("--level: unknown level '%s' (known: exponent, weight)", s);
    }
    return 0;
}

/* The layer of the paper's analysis from the options (analyze without a model or a kernel), in the order
 * the errors have always been reported. 0, or the exit status after the one-line error. */
static int analyze_layer(const abl_cli_cmd *cmd, const char **v, abl_layer *l)
{
    const char *s;
    if (abl_cli_dtype("dtype", (s = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) ? s : "bf16", &l->format))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CONVENTION)) && abl_cli_convention(s, &l->convention))
        return ABL_EXIT_USAGE;
    long heads = 0;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) && abl_cli_int("heads", s, 1, ABL_MAX_HEADS, &heads))
        return ABL_EXIT_USAGE;
    l->heads = (int)heads;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) == NULL)
        return abl_cli_usage_error("analyze: --ctx N is required");
    if (abl_cli_context("ctx", s, 1, ABL_MAX_CONTEXT, &l->context))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_WINDOW)) && abl_cli_count("window", s, 1, ABL_MAX_CONTEXT, &l->window))
        return ABL_EXIT_USAGE;
    if (read_kinds(cmd, v, l) || read_numbers(cmd, v, l))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_MITIGATE)) && abl_mitigations_parse(s, &l->mitigations) != ABL_OK)
        return abl_cli_usage_error("--mitigate: '%s' is not a list of C, E, L, S (e.g. C,E or none)", s);
    if ((l->mitigations & ABL_MITIGATE_LOG) && (s = abl_cli_arg(cmd, v, ABL_OPT_DISTANCE)) && strcasecmp(s, "log") != 0)
        return abl_cli_usage_error("--distance: mitigation L uses log distances; drop --distance %s", s);
    if (read_level(cmd, v, l))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_ATTENTION)) != NULL && abl_cli_attention(s, &l->attention))
        return ABL_EXIT_USAGE;
    if (l->attention == ABL_ATTENTION_BIDIRECTIONAL && l->level == ABL_LEVEL_WEIGHT)
        return abl_cli_usage_error("--level: weight is not modelled for a bidirectional layer (each row's S has "
                                   "two horizons); drop --level weight or --attention bidirectional");
    const char *slopes_text = abl_cli_arg(cmd, v, ABL_OPT_SLOPES);
    if (slopes_text != NULL && (l->mitigations & ABL_MITIGATE_EXPLICIT))
        return abl_cli_usage_error("--slopes: mitigation E chooses the slopes itself; drop one of the two");
    /* The schedule text is parsed here, once, into the layer; the library takes the value. */
    if (slopes_text != NULL) {
        char *msg = NULL;
        abl_status pst = abl_schedule_spec_parse(slopes_text, &l->schedule, &msg);
        if (pst == ABL_ERR_NO_MEMORY)
            return abl_cli_internal_error("%s", abl_cli_why(pst, NULL));
        abl_analysis_config cfg;
        abl_layer_analysis_config(l, &cfg);
        int rc = pst != ABL_OK ? slopes_error(pst, &cfg, slopes_text, msg) : 0;
        free(msg);
        if (rc != 0)
            return rc;
        l->has_schedule = 1;
    }
    const abl_schedule_spec *sched = abl_layer_schedule(l);
    if (l->heads == 0 && (sched == NULL || (sched->kind != ABL_SCHEDULE_SLOPES && sched->kind != ABL_SCHEDULE_TARGETS)))
        return abl_cli_usage_error("analyze: --heads H is required (except with slopes:/targets: lists)");
    return 0;
}

static int analyze_with(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_cli_work *work, abl_layer *l,
                        abl_report **r)
{
    int rc = analyze_layer(cmd, v, l);
    if (rc != 0)
        return rc;
    abl_analysis_config cfg;
    abl_layer_analysis_config(l, &cfg);
    /* Known before any work starts: refuse a layer over the budget unless forced. */
    abl_cost cost;
    if (abl_analysis_estimate(&cfg, &cost) == ABL_OK &&
        abl_cli_budget(work, &cost) != 0)
        return ABL_EXIT_USAGE;
    if (abl_cli_arg(cmd, v, ABL_OPT_GRADIENT) == NULL)
        return run_analysis(ctx, cmd, v, &cfg, abl_cli_arg(cmd, v, ABL_OPT_SLOPES), r);
    const char *conv = abl_cli_arg(cmd, v, ABL_OPT_CONVENTION);
    if (conv != NULL && strcasecmp(conv, "ieee") != 0)
        return abl_cli_usage_error("--convention: --gradient rounds dS once to nearest (ieee); drop --convention %s",
                                   conv);
    cfg.convention = ABL_CONV_IEEE;
    /* the forward analysis first: its refusals are the layer's, with their messages */
    rc = run_analysis(ctx, cmd, v, &cfg, abl_cli_arg(cmd, v, ABL_OPT_SLOPES), r);
    if (rc != 0)
        return rc;
    abl_report_free(*r);
    *r = NULL;
    return abl_cli_analyze_gradient(cmd, v, &cfg, r);
}

const abl_cli_cmd abl_cli_analyze_cmd = {
    "analyze",
    "per-head blindness distances and underflow fractions of one ALiBi layer",
    "--heads H --ctx N [options] | --model NAME | --config FILE [--pipeline P] [options]",
    "For each head: its slope m, the blindness distance delta (the first token distance at which\n"
    "exp(eps - m*g(d)) underflows to zero) under the chosen convention and under ieee, whether the\n"
    "head goes blind inside the context, and its share of blind entries; then the layer's row and\n"
    "matrix underflow fractions. All decisions are exact (MPFR/GMP).\n\n"
    "With --pipeline, --model or --config: each head's paper delta beside the exact first blind distance\n"
    "and zero weights of a real kernel (the zero-logit predictor of simulate). --model/--config give the\n"
    "heads, slopes, dtype, context and the model's default code path; --heads, --slopes, --dtype, --ctx\n"
    "and --pipeline override them, and the output says where each value came from.\n\n"
    "With --dtype bf16,fp16 (or all): the same layer once per format; first a comparison (one row per\n"
    "format: the blind heads and fractions), then one section each. csv adds a first column dtype;\n"
    "json is {\"dtypes\": [...], \"analyses\": [one object per format]}. The formats share the work\n"
    "budget (each run gets its share).\n\n"
    "Example: alibi-blind analyze --heads 16 --ctx 2048 (the paper's BLOOM layer: delta1 = 124).\n"
    "Example: alibi-blind analyze --model falcon-rw-7b (the real Falcon code: bias scaled by 1/8).",
    analyze_opts,
    sizeof analyze_opts / sizeof analyze_opts[0],
    run_analyze,
    NULL,
};
