/* alibi-blind: the flat entry points for bindings (include/abl/compose/flat.h). A boundary like the CLI:
 * the user's text (dtype names, --slopes, --pipeline, decimal numbers) is parsed here, once, into the
 * typed values the library takes; the answer is the report rendered as JSON, the CLI's --format json.
 * The messages name the argument at fault by its keyword (the CLI's option name). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <gmp.h>
#include "abl/analysis/analysis.h"
#include "abl/compose/flat.h"
#include "abl/core/convention.h"
#include "abl/core/decimal.h"
#include "abl/core/format.h"
#include "abl/core/fraction.h"
#include "abl/core/threshold.h"
#include "abl/kernel/simulate.h"
#include "abl/model/catalogue.h"
#include "abl/model/layer.h"
#include "abl/paper/paper.h"
#include "abl/paper/published.h"
#include "abl/paper/reproduce.h"
#include "abl/paper/tables.h"
#include "abl/report/report.h"
#include "abl_internal.h"
#include "compose/abl_flat_internal.h"

#define FLAT_BUDGET_SECONDS 60.0
#define FLAT_MAX_DTYPES 64


int abl_flat_status(const abl_flat_result *r)
{
    return r != NULL ? (int)r->st : (int)ABL_ERR_NO_MEMORY;
}

const char *abl_flat_json(const abl_flat_result *r)
{
    return r != NULL ? r->json : NULL;
}

const char *abl_flat_message(const abl_flat_result *r)
{
    if (r == NULL)
        return abl_status_message(ABL_ERR_NO_MEMORY);
    if (r->st == ABL_OK)
        return NULL;
    return r->msg != NULL ? r->msg : abl_status_message(r->st);
}

void abl_flat_free(abl_flat_result *r)
{
    if (r == NULL)
        return;
    free(r->json);
    free(r->msg);
    free(r);
}

/* A failed result: st and one printf line (a NULL line falls back to the status's sentence). */
abl_flat_result *abl_flat_fail(abl_status st, const char *fmt, ...)
{
    abl_flat_result *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->st = st == ABL_OK ? ABL_ERR_INVALID_ARGUMENT : st;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0 && (r->msg = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(r->msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return r;
}

/* The report (or the set, when s is not NULL) as JSON: the CLI's --format json, byte for byte. */
abl_flat_result *abl_flat_render(const abl_report *rep, const abl_report_set *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem == NULL)
        return abl_flat_fail(ABL_ERR_NO_MEMORY, "%s", abl_status_message(ABL_ERR_NO_MEMORY));
    abl_status st = s != NULL ? abl_report_set_write(s, ABL_OUT_JSON, ABL_REPORT_WIDTH, mem)
                              : abl_report_write_width(rep, ABL_OUT_JSON, ABL_REPORT_WIDTH, mem);
    if (fclose(mem) != 0 && st == ABL_OK)
        st = ABL_ERR_IO;
    if (st != ABL_OK) {
        free(buf);
        return abl_flat_fail(st, "cannot render the report: %s", abl_status_message(st));
    }
    abl_flat_result *r = calloc(1, sizeof *r);
    if (r == NULL) {
        free(buf);
        return NULL;
    }
    r->json = buf;
    return r;
}

/* One format by name, as the CLI's --dtype: ABL_OK, or *err set. */
static abl_flat_result *flat_dtype(const char *key, const char *name, abl_format *out)
{
    const char *amb = abl_format_ambiguous(name);
    if (amb != NULL)
        return abl_flat_fail(ABL_ERR_UNKNOWN_DTYPE, "%s: '%s' is ambiguous: %s", key, name, amb);
    if (abl_format_lookup(name, out) != ABL_OK)
        return abl_flat_fail(ABL_ERR_UNKNOWN_DTYPE, "%s: unknown floating-point format '%s' (known: %s, torch.<dtype>, "
                         "ml_dtypes names, or eXmY)", key, name, abl_format_names());
    return NULL;
}

/* names[0..n-1] into fmts (n == 0: every format); *count. NULL, or the failure. */
static abl_flat_result *flat_dtypes(const char *const *names, size_t n, abl_format *fmts, size_t *count)
{
    *count = 0;
    if (n == 0) {
        for (size_t i = 0; i < abl_format_count() && *count < FLAT_MAX_DTYPES; i++)
            fmts[(*count)++] = *abl_format_at(i);
        return NULL;
    }
    if (n > FLAT_MAX_DTYPES)
        return abl_flat_fail(ABL_ERR_UNKNOWN_DTYPE, "dtype: at most %d formats", FLAT_MAX_DTYPES);
    for (size_t i = 0; i < n; i++) {
        abl_flat_result *e = flat_dtype("dtype", names[i] != NULL ? names[i] : "", &fmts[i]);
        if (e != NULL)
            return e;
    }
    *count = n;
    return NULL;
}

abl_flat_result *abl_flat_thresholds(const char *const *names, size_t n, int digits)
{
    abl_format fmts[FLAT_MAX_DTYPES];
    size_t count = 0;
    if (digits < 0 || digits > 1000)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "digits: %d is out of range (0 to 1000)", digits);
    abl_flat_result *e = flat_dtypes(names, n, fmts, &count);
    if (e != NULL)
        return e;
    abl_report *rep = NULL;
    abl_status st = abl_thresholds_report(fmts, count, digits, &rep);
    abl_flat_result *r = st == ABL_OK ? abl_flat_render(rep, NULL) : abl_flat_fail(st, "%s", abl_status_message(st));
    abl_report_free(rep);
    return r;
}

/* The work of a call against its budget (the CLI's refusal, naming force=True). NULL: within it. */
abl_flat_result *abl_flat_budget(const char *what, const abl_flat_work *w, const abl_cost *c)
{
    double budget = w != NULL && w->budget_seconds > 0 ? w->budget_seconds : FLAT_BUDGET_SECONDS;
    if ((w != NULL && w->force) || c->seconds <= budget)
        return NULL;
    return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "%s: %.3g seconds of work (%.3g %s on %d thread%s at the nominal rate), over the "
                     "budget of %.3g seconds: pass force=True to run it anyway", what, c->seconds, c->units,
                     c->unit_name ? c->unit_name : "units", c->threads, c->threads == 1 ? "" : "s", budget);
}

abl_progress abl_flat_progress(const abl_flat_work *w)
{
    abl_progress p = {NULL, NULL};
    if (w != NULL) {
        p.fn = w->progress;
        p.ctx = w->progress_ctx;
    }
    return p;
}

/* An exact decimal (key: the argument) into q. NULL, or the failure. */
static abl_flat_result *flat_decimal(const char *key, const char *text, mpq_t q)
{
    if (abl_decimal_to_mpq(text, q) != ABL_OK)
        return abl_flat_fail(ABL_ERR_BAD_NUMBER, "%s: '%s' is not a decimal number", key, text);
    return NULL;
}

/* --slopes into the layer's schedule. NULL, or the failure. */
static abl_flat_result *flat_slopes(const char *text, abl_schedule_spec *out)
{
    char *msg = NULL;
    abl_status st = abl_schedule_spec_parse(text, out, &msg);
    abl_flat_result *r = st == ABL_OK ? NULL : abl_flat_fail(st, "slopes: '%s': %s", text, msg ? msg : abl_status_message(st));
    free(msg);
    return r;
}

/* --logit, --logit-range, --clamp, --softcap into the layer's exact numbers (the CLI's checks). */
static abl_flat_result *analyze_numbers(const abl_flat_analyze_args *a, abl_layer *l)
{
    abl_flat_result *e = NULL;
    if (a->logit != NULL && (e = flat_decimal("logit", a->logit, l->logit)) == NULL)
        l->has_logit = 1;
    if (e == NULL && (a->logit_lo != NULL) != (a->logit_hi != NULL))
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "logit_range: give both LO and HI");
    if (e == NULL && a->logit_lo != NULL && (e = flat_decimal("logit_range", a->logit_lo, l->logit_lo)) == NULL &&
        (e = flat_decimal("logit_range", a->logit_hi, l->logit_hi)) == NULL) {
        if (mpq_cmp(l->logit_lo, l->logit_hi) > 0)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "logit_range: LO is above HI in '%s:%s'", a->logit_lo, a->logit_hi);
        l->has_logit_range = 1;
    }
    if (e == NULL && a->clamp != NULL && (e = flat_decimal("clamp", a->clamp, l->clamp)) == NULL) {
        /* The bias -m*d is never positive: a clamp c >= 0 flattens all of it. */
        if (mpq_sgn(l->clamp) >= 0)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "clamp: %s flattens every bias (the bias is never positive); "
                             "a clamp is negative, e.g. clamp='-87'", a->clamp);
        l->has_clamp = 1;
    }
    if (e == NULL && a->softcap != NULL && (e = flat_decimal("softcap", a->softcap, l->softcap)) == NULL) {
        if (mpq_sgn(l->softcap) <= 0)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "softcap: %s is not positive", a->softcap);
        l->has_softcap = 1;
    }
    return e;
}

/* --distance, --level, --mitigate, --convention. */
static abl_flat_result *analyze_kinds(const abl_flat_analyze_args *a, abl_layer *l)
{
    if (a->convention != NULL && abl_convention_parse(a->convention, &l->convention) != ABL_OK)
        return abl_flat_fail(ABL_ERR_UNKNOWN_CONVENTION, "convention: unknown convention '%s' (known: paper, ftz, ieee, "
                         "subnormal)", a->convention);
    if (a->distance != NULL && strcasecmp(a->distance, "linear") != 0 && strcasecmp(a->distance, "log") != 0)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "distance: unknown distance '%s' (known: linear, log)", a->distance);
    if (a->distance != NULL)
        l->distance = strcasecmp(a->distance, "log") == 0 ? ABL_DISTANCE_LOG : ABL_DISTANCE_LINEAR;
    if (a->mitigate != NULL && abl_mitigations_parse(a->mitigate, &l->mitigations) != ABL_OK)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "mitigate: '%s' is not a list of C, E, L, S (e.g. C,E or none)",
                         a->mitigate);
    if ((l->mitigations & ABL_MITIGATE_LOG) && a->distance != NULL && strcasecmp(a->distance, "log") != 0)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "distance: mitigation L uses log distances; drop distance='%s'",
                         a->distance);
    if (a->level != NULL && strcasecmp(a->level, "exponent") != 0 && strcasecmp(a->level, "weight") != 0)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "level: unknown level '%s' (known: exponent, weight)", a->level);
    if (a->level != NULL)
        l->level = strcasecmp(a->level, "weight") == 0 ? ABL_LEVEL_WEIGHT : ABL_LEVEL_EXPONENT;
    return NULL;
}

/* The layer of the paper's analysis from the arguments (the CLI's analyze_layer). */
static abl_flat_result *analyze_layer(const abl_flat_analyze_args *a, const abl_format *fmt, abl_layer *l)
{
    l->format = *fmt;
    if (a->heads < 0 || a->heads > ABL_MAX_HEADS)
        return abl_flat_fail(ABL_ERR_HEADS_RANGE, "heads: %d is out of range (1 to %d)", a->heads, ABL_MAX_HEADS);
    l->heads = a->heads;
    if (a->ctx < 1 || a->ctx > ABL_MAX_CONTEXT)
        return abl_flat_fail(ABL_ERR_CONTEXT_RANGE, "ctx: %llu is out of range (1 to %llu)", (unsigned long long)a->ctx,
                         (unsigned long long)ABL_MAX_CONTEXT);
    l->context = a->ctx;
    if (a->window > ABL_MAX_CONTEXT)
        return abl_flat_fail(ABL_ERR_CONTEXT_RANGE, "window: %llu is out of range", (unsigned long long)a->window);
    l->window = a->window;
    abl_flat_result *e = analyze_kinds(a, l);
    if (e == NULL)
        e = analyze_numbers(a, l);
    if (e != NULL)
        return e;
    if (a->slopes != NULL && (l->mitigations & ABL_MITIGATE_EXPLICIT))
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "slopes: mitigation E chooses the slopes itself; drop one of the two");
    if (a->slopes != NULL) {
        if ((e = flat_slopes(a->slopes, &l->schedule)) != NULL)
            return e;
        l->has_schedule = 1;
    }
    const abl_schedule_spec *sched = abl_layer_schedule(l);
    if (l->heads == 0 && (sched == NULL || (sched->kind != ABL_SCHEDULE_SLOPES && sched->kind != ABL_SCHEDULE_TARGETS)))
        return abl_flat_fail(ABL_ERR_HEADS_RANGE, "analyze: heads= is required (except with slopes:/targets: lists)");
    return NULL;
}

/* One format's analysis report into *out. NULL, or the failure. */
static abl_flat_result *analyze_one(const abl_flat_analyze_args *a, const abl_format *fmt, const abl_flat_work *w,
                                    double share, abl_report **out)
{
    abl_layer l;
    abl_layer_init(&l);
    abl_flat_result *e = analyze_layer(a, fmt, &l);
    abl_analysis_config cfg;
    abl_cost cost;
    abl_flat_work ws = w != NULL ? *w : (abl_flat_work){0, 0, NULL, NULL};
    ws.budget_seconds = (ws.budget_seconds > 0 ? ws.budget_seconds : FLAT_BUDGET_SECONDS) * share;
    if (e == NULL) {
        abl_layer_analysis_config(&l, &cfg);
        if (abl_analysis_estimate(&cfg, &cost) == ABL_OK)
            e = abl_flat_budget("analyze", &ws, &cost);
    }
    if (e == NULL) {
        cfg.progress = abl_flat_progress(w);
        abl_analysis an;
        abl_status st = abl_analysis_run(&cfg, &an);
        if (st == ABL_OK)
            st = abl_analysis_report(&an, out);
        if (st != ABL_OK)
            e = abl_flat_fail(st, "analyze: %s", abl_status_message(st));
        abl_analysis_free(&an);
    }
    abl_layer_free(&l);
    return e;
}

/* What the overview of a list of formats compares (the CLI's analyze --dtype LIST without a kernel). */
static const abl_report_compare flat_plain_compare[] = {
    {"tau", "τ"}, {"blind_heads", "blind heads"}, {"row_fraction", "row fraction"},
    {"matrix_fraction", "matrix fraction"}, {"mass_lost", "mass lost"},
};

abl_flat_result *abl_flat_analyze(const abl_flat_analyze_args *a, const abl_flat_work *w)
{
    abl_format fmts[FLAT_MAX_DTYPES];
    size_t n = 0;
    static const char *const bf16[] = {"bf16"};
    int list = a->dtype_list;
    abl_flat_result *e = a->ndtypes == 0 && !list ? flat_dtypes(bf16, 1, fmts, &n) : flat_dtypes(a->dtypes, a->ndtypes, fmts, &n);
    for (size_t i = 0; e == NULL && i < n; i++)
        for (size_t k = 0; e == NULL && k < i; k++)
            if (strcmp(fmts[i].name, fmts[k].name) == 0)
                e = abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "dtype: %s is named twice", fmts[i].name);
    abl_report *reps[FLAT_MAX_DTYPES] = {NULL};
    const char *labels[FLAT_MAX_DTYPES];
    for (size_t i = 0; e == NULL && i < n; i++) {
        labels[i] = fmts[i].name;
        e = analyze_one(a, &fmts[i], w, 1.0 / (double)n, &reps[i]);
    }
    if (e == NULL && !list)
        e = abl_flat_render(reps[0], NULL);
    else if (e == NULL) {
        abl_report_set set = {(const abl_report *const *)reps, labels, n, "ALiBi blindness by dtype", "dtype", "dtype",
                              "dtypes", "analyses", flat_plain_compare,
                              sizeof flat_plain_compare / sizeof flat_plain_compare[0]};
        e = abl_flat_render(NULL, &set);
    }
    for (size_t i = 0; i < n; i++)
        abl_report_free(reps[i]);
    return e;
}

/* The pipeline of simulate (--dtype, --pipeline), built for the model dtype and checked. */
static abl_flat_result *simulate_pipeline(const abl_flat_simulate_args *a, abl_pipeline *out)
{
    abl_format model;
    abl_flat_result *e = flat_dtype("dtype", a->dtype != NULL ? a->dtype : "bf16", &model);
    if (e != NULL)
        return e;
    if (a->pipeline != NULL && a->pipeline[0] == '\0')
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "pipeline: empty (presets: %s)", abl_pipeline_preset_names());
    abl_pipeline_spec spec;
    memset(&spec, 0, sizeof spec);
    char *msg = NULL;
    abl_status st = abl_pipeline_spec_parse(a->pipeline, &spec, &msg);
    if (st == ABL_OK)
        st = abl_pipeline_build(&spec, &model, out);
    if (st == ABL_OK)
        st = abl_pipeline_check_msg(out, &msg);
    abl_pipeline_spec_free(&spec);
    e = st == ABL_OK ? NULL : abl_flat_fail(st, "pipeline: %s", msg != NULL ? msg : abl_status_message(st));
    free(msg);
    return e;
}

/* The captured scores as the reader's value (in place) and their shape against heads and ctx. */
static abl_flat_result *simulate_scores(const abl_flat_simulate_args *a, int ctx_given, abl_npy *npy,
                                       abl_simulate_config *cfg)
{
    const abl_flat_scores *s = a->logits;
    if ((s->itemsize != 4 && s->itemsize != 2) || (s->ndim != 2 && s->ndim != 3) || s->data == NULL || s->n < 1 ||
        s->n > ABL_SIMULATE_MAX_CONTEXT || s->heads < 1 || s->heads > ABL_MAX_HEADS || (s->ndim == 2 && s->heads != 1))
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "logits: not float32/float16 [H, N, N] or [N, N] scores "
                         "(1 <= N <= %llu)", (unsigned long long)ABL_SIMULATE_MAX_CONTEXT);
    memset(npy, 0, sizeof *npy);
    /* the caller's memory stands for the mapped file (never unmapped: abl_npy_close is not called) */
    npy->map = npy->data = s->data;
    npy->map_len = (size_t)(s->heads * s->n * s->n * (uint64_t)s->itemsize);
    npy->itemsize = s->itemsize;
    npy->ndim = s->ndim;
    npy->heads = s->heads;
    npy->n = s->n;
    if (!ctx_given)
        cfg->context = npy->n;
    else if (cfg->context != npy->n)
        return abl_flat_fail(ABL_ERR_MISMATCH, "logits: the scores hold N = %llu per row, ctx is %llu",
                         (unsigned long long)npy->n, (unsigned long long)cfg->context);
    if (npy->ndim == 3) {
        if (cfg->heads == 0 && a->slopes == NULL)
            cfg->heads = (int)npy->heads;
        else if (cfg->heads != 0 && (uint64_t)cfg->heads != npy->heads)
            return abl_flat_fail(ABL_ERR_MISMATCH, "logits: the scores hold H = %llu heads, heads is %d",
                             (unsigned long long)npy->heads, cfg->heads);
    }
    cfg->logits = npy;
    return NULL;
}

/* Heads, context, logits dtype and the scores: the CLI's simulate_layer without a model. */
static abl_flat_result *simulate_layer(const abl_flat_simulate_args *a, const abl_flat_setup *setup, abl_npy *npy,
                                       abl_format *ldt, abl_simulate_config *cfg)
{
    abl_flat_result *e = NULL;
    if (setup != NULL) {    /* the model's layer, the arguments over it */
        cfg->pipeline = setup->pipeline;
        cfg->heads = setup->layer.heads;
    } else if ((e = simulate_pipeline(a, &cfg->pipeline)) != NULL) {
        return e;
    } else if (a->heads < 0 || a->heads > ABL_MAX_HEADS) {
        return abl_flat_fail(ABL_ERR_HEADS_RANGE, "heads: %d is out of range (1 to %d)", a->heads, ABL_MAX_HEADS);
    } else {
        cfg->heads = a->heads;
    }
    if (a->logits_dtype != NULL) {
        if (a->logits == NULL)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "logits_dtype: applies to logits= only");
        if ((e = flat_dtype("logits_dtype", a->logits_dtype, ldt)) != NULL)
            return e;
        if (ldt->precision > 24 || ldt->emin < -126 || ldt->emax > 127)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "logits_dtype: %s is wider than binary32 (the scores are "
                             "read as float32)", ldt->name);
        cfg->logits_dtype = ldt;
    }
    if (setup != NULL) {
        cfg->context = setup->layer.context;
        return a->logits != NULL ? simulate_scores(a, 1, npy, cfg) : NULL;
    }
    if (a->ctx == 0 && a->logits == NULL)
        return abl_flat_fail(ABL_ERR_CONTEXT_RANGE, "simulate: ctx= is required");
    if (a->ctx > ABL_SIMULATE_MAX_CONTEXT)
        return abl_flat_fail(ABL_ERR_CONTEXT_RANGE, "ctx: %llu is out of range (1 to %llu)", (unsigned long long)a->ctx,
                         (unsigned long long)ABL_SIMULATE_MAX_CONTEXT);
    cfg->context = a->ctx;
    return a->logits != NULL ? simulate_scores(a, a->ctx != 0, npy, cfg) : NULL;
}

/* --logit-std, --seed, --threads; *gaussian when the std is positive. */
static abl_flat_result *simulate_numbers(const abl_flat_simulate_args *a, mpq_t std, abl_simulate_config *cfg,
                                         int *gaussian)
{
    *gaussian = 0;
    if (a->logit_std != NULL) {
        abl_flat_result *e = flat_decimal("logit_std", a->logit_std, std);
        if (e != NULL)
            return e;
        if (mpq_sgn(std) < 0 || mpq_cmp_ui(std, ABL_SIMULATE_MAX_LOGIT_STD, 1) > 0)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "logit_std: %s is out of range (0 to %d)", a->logit_std,
                             ABL_SIMULATE_MAX_LOGIT_STD);
        cfg->logit_std = std;
        *gaussian = mpq_sgn(std) > 0;
    }
    if (a->seed > UINT64_C(9223372036854775807))
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "seed: out of range (0 to 2^63 - 1)");
    cfg->seed = a->seed;
    if (a->threads < 0 || a->threads > 256)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "threads: %d is out of range (1 to 256)", a->threads);
    cfg->threads = a->threads;
    return NULL;
}

/* What predict/compare and the scores exclude (the CLI's simulate_excludes). */
static abl_flat_result *simulate_excludes(const abl_flat_simulate_args *a, int gaussian, const abl_simulate_config *cfg)
{
    const char *p = a->predict ? "predict" : "compare";
    if (cfg->heads == 0 && (cfg->slopes == NULL || (cfg->slopes->kind != ABL_SCHEDULE_SLOPES &&
                                                    cfg->slopes->kind != ABL_SCHEDULE_TARGETS)))
        return abl_flat_fail(ABL_ERR_HEADS_RANGE, "simulate: heads= is required (except with slopes:/targets: lists)");
    if (a->logits != NULL && gaussian)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "logits: captured scores exclude logit_std");
    if (a->logits != NULL && (a->predict || a->compare))
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "%s: the predictor answers for zero logits (drop logits)", p);
    if (a->predict && a->compare)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "simulate: predict and compare exclude each other");
    if (!a->predict && !a->compare)
        return NULL;
    if (gaussian)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "%s: the predictor answers for zero logits (drop logit_std)", p);
    if (cfg->pipeline.softmax == ABL_SOFTMAX_EAGER &&
        (cfg->pipeline.sum != ABL_SUM_EXACT || cfg->pipeline.exp != ABL_EXP_CORRECT))
        return abl_flat_fail(ABL_ERR_UNSUPPORTED, "%s: the predictor models an eager pipeline with sum=exact and exp=correct "
                         "(got sum=%s, exp=%s)", p, abl_sum_order_name(cfg->pipeline.sum),
                         abl_exp_model_name(cfg->pipeline.exp));
    return NULL;
}

/* The cost (emulation and predictor calls) against the budget, then the scores' finiteness. */
static abl_flat_result *simulate_judge(const abl_flat_simulate_args *a, const abl_simulate_config *cfg,
                                       const abl_flat_work *w)
{
    abl_cost total, one;
    memset(&total, 0, sizeof total);
    if (!a->predict && abl_simulate_estimate(cfg, &one) == ABL_OK)
        abl_cost_add(&total, &one);
    if ((a->predict || a->compare) && abl_predict_estimate(cfg, &one) == ABL_OK)
        abl_cost_add(&total, &one);
    abl_flat_result *e = abl_flat_budget("simulate", w, &total);
    if (e == NULL && cfg->logits != NULL) {
        char *msg = NULL;
        abl_status st = abl_npy_check_scores(cfg->logits, &msg);
        if (st != ABL_OK)
            e = abl_flat_fail(st, "logits: %s", msg != NULL ? msg : abl_status_message(st));
        free(msg);
    }
    return e;
}

/* The runs and the report. */
static abl_flat_result *simulate_run(const abl_flat_simulate_args *a, const abl_flat_setup *setup, abl_simulate_config *cfg,
                                     const abl_flat_work *w)
{
    abl_simulation sim;
    abl_prediction pred;
    memset(&sim, 0, sizeof sim);
    memset(&pred, 0, sizeof pred);
    abl_status st = ABL_OK;
    if (!a->predict) {
        cfg->progress = abl_flat_progress(w);
        st = abl_simulate_run(cfg, &sim);
    }
    if (st == ABL_OK && (a->predict || a->compare))
        st = abl_predict_run(cfg, &pred);
    abl_report *rep = NULL;
    if (st == ABL_OK)
        st = abl_simulation_report(cfg, a->predict ? NULL : &sim, (a->predict || a->compare) ? &pred : NULL, &rep);
    for (size_t i = 0; st == ABL_OK && setup != NULL && i < setup->nmeta; i++)
        st = abl_report_meta(rep, setup->meta[i].key, setup->meta[i].label, setup->meta[i].text, setup->meta[i].json);
    abl_flat_result *r = NULL;
    if (st == ABL_OK)
        r = abl_flat_render(rep, NULL);
    else if (st == ABL_ERR_UNSUPPORTED)
        r = abl_flat_fail(st, "simulate: the bias or the logits overflow to Inf/NaN in this pipeline at N = %llu",
                      (unsigned long long)cfg->context);
    else
        r = abl_flat_fail(st, "simulate: %s", abl_status_message(st));
    if (r != NULL && r->st == ABL_OK && a->compare && !abl_prediction_agrees(&sim, &pred)) {
        /* the CLI's exit status 1: the document stands, the status says the two differ */
        r->st = ABL_ERR_MISMATCH;
        r->msg = abl_strf("simulate: the emulation and the predictor differ");
    }
    abl_report_free(rep);
    abl_simulation_free(&sim);
    abl_prediction_free(&pred);
    return r;
}

abl_flat_result *abl_flat_simulate(const abl_flat_simulate_args *a, const abl_flat_work *w)
{
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    abl_npy npy;
    abl_format ldt;
    abl_schedule_spec slopes;
    memset(&slopes, 0, sizeof slopes);
    mpq_t std;
    mpq_init(std);
    int gaussian = 0;
    abl_flat_setup setup;
    memset(&setup, 0, sizeof setup);
    int model = a->model != NULL || a->config != NULL;
    abl_flat_model_args m = {a->model, a->config, a->dtype, a->heads, a->slopes, a->ctx, a->pipeline};
    abl_flat_result *e = model ? abl_flat_setup_resolve(&m, "simulate", ABL_SIMULATE_MAX_CONTEXT, &setup) : NULL;
    if (e == NULL)
        e = simulate_layer(a, model ? &setup : NULL, &npy, &ldt, &cfg);
    if (e == NULL)
        e = simulate_numbers(a, std, &cfg, &gaussian);
    if (e == NULL && model && setup.slopes != NULL)
        cfg.slopes = abl_layer_schedule(&setup.layer);
    else if (e == NULL && a->slopes != NULL && (e = flat_slopes(a->slopes, &slopes)) == NULL)
        cfg.slopes = &slopes;
    if (e == NULL)
        e = simulate_excludes(a, gaussian, &cfg);
    if (e == NULL)
        e = simulate_judge(a, &cfg, w);
    if (e == NULL)
        e = simulate_run(a, model ? &setup : NULL, &cfg, w);
    abl_flat_setup_free(&setup);
    abl_schedule_spec_free(&slopes);
    mpq_clear(std);
    return e;
}

abl_flat_result *abl_flat_models(const char *name)
{
    const abl_model *m = NULL;
    if (name != NULL && (m = abl_model_find(name)) == NULL) {
        const abl_model *near = abl_model_suggest(name);
        if (near != NULL)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "unknown model '%s' (did you mean '%s'? models() lists them)",
                             name, near->name);
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "unknown model '%s' (models() lists them)", name);
    }
    abl_report *rep = NULL;
    abl_status st = m != NULL ? abl_model_detail_report(m, &rep) : abl_model_catalogue_report(1, &rep);
    abl_flat_result *r = st == ABL_OK ? abl_flat_render(rep, NULL) : abl_flat_fail(st, "%s", abl_status_message(st));
    abl_report_free(rep);
    return r;
}

/* The settings a table does not take (the CLI's only_for). NULL, or the failure. */
static abl_flat_result *table_settings(const abl_flat_table_args *a)
{
    int n = a->table;
    struct {
        int given;
        const char *key, *tables;
    } only[] = {
        {a->convention != NULL, "convention", "1, 5, 8"}, {a->digits >= 0, "digits", "4"},
        {a->exact != 0, "exact", "8"}, {a->ieee != 0, "ieee", "1, 5"}, {a->rn != 0, "rn", "4"},
    };
    if (n != 1 && n != 4 && n != 5 && n != 8)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "table: %d is not a table of the paper this tool computes "
                         "(1, 4, 5 or 8)", n);
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++) {
        if (only[i].given && strchr(only[i].tables, '0' + n) == NULL)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "%s applies to table %s only, not table %d", only[i].key,
                             only[i].tables, n);
    }
    if (n != 4 && (a->dtype_list || a->ndtypes > 1))
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "dtype: tables 1, 5 and 8 are computed for one format (run the "
                         "table once per dtype; table 4 and analyze take a list)");
    return NULL;
}

/* Tables 1, 5, 8: one format, the kernel columns of 1 and 5 judged against the budget. */
static abl_flat_result *table_paper(const abl_flat_table_args *a, const abl_flat_work *w, abl_report **rep)
{
    abl_paper_options o;
    abl_paper_options_default(&o);
    abl_flat_result *e = a->ndtypes == 1 ? flat_dtype("dtype", a->dtypes[0], &o.format) : NULL;
    if (e != NULL)
        return e;
    if (a->convention != NULL && abl_convention_parse(a->convention, &o.convention) != ABL_OK)
        return abl_flat_fail(ABL_ERR_UNKNOWN_CONVENTION, "convention: unknown convention '%s' (known: paper, ftz, ieee, "
                         "subnormal)", a->convention);
    o.exact = a->exact != 0;
    o.ieee = a->ieee != 0;
    abl_cost cost;
    if ((a->table == 1 || a->table == 5) && abl_table_kernel_estimate(a->table, NULL, &cost) == ABL_OK &&
        (e = abl_flat_budget("table", w, &cost)) != NULL)
        return e;
    abl_status st = a->table == 1 ? abl_table1_report(&o, rep)
                    : a->table == 5 ? abl_table5_report(NULL, &o, rep) : abl_table8_report(&o, rep);
    if (st == ABL_ERR_DEGENERATE || st == ABL_ERR_UNSUPPORTED)
        return abl_flat_fail(st, "table %d: %s for this format and convention", a->table, abl_status_message(st));
    return st == ABL_OK ? NULL : abl_flat_fail(st, "table %d: %s", a->table, abl_status_message(st));
}

abl_flat_result *abl_flat_table(const abl_flat_table_args *a, const abl_flat_work *w)
{
    abl_flat_result *e = table_settings(a);
    if (e != NULL)
        return e;
    abl_report *rep = NULL;
    if (a->table == 4) {
        if (a->digits > 1000)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "digits: %d is out of range (0 to 1000)", a->digits);
        abl_format fmts[FLAT_MAX_DTYPES];
        size_t n = 0;
        static const char *const two[] = {"bf16", "fp32"};
        e = a->ndtypes == 0 && !a->dtype_list ? flat_dtypes(two, 2, fmts, &n) : flat_dtypes(a->dtypes, a->ndtypes, fmts, &n);
        abl_status st = e == NULL ? abl_table4_report(fmts, n, a->digits >= 0 ? a->digits : 4, a->rn != 0, &rep) : ABL_OK;
        if (e == NULL && st != ABL_OK)
            e = abl_flat_fail(st, "table 4: %s", abl_status_message(st));
    } else {
        e = table_paper(a, w, &rep);
    }
    if (e == NULL)
        e = abl_flat_render(rep, NULL);
    abl_report_free(rep);
    return e;
}

abl_flat_result *abl_flat_reproduce(const char *published_dir, int differences)
{
    abl_published pub;
    char *err = NULL;
    abl_status st = published_dir != NULL ? abl_published_load_dir(published_dir, &pub, &err)
                                          : abl_published_builtin(&pub, &err);
    if (st != ABL_OK) {
        abl_flat_result *e = abl_flat_fail(st, "%s%s", published_dir != NULL ? "published: " : "built-in published values: ",
                                       err != NULL ? err : abl_status_message(st));
        free(err);
        return e;
    }
    free(err);
    abl_reproduction rep;
    st = abl_reproduce_run(&pub, &rep);
    abl_published_free(&pub);
    if (st != ABL_OK)
        return abl_flat_fail(st, "reproduce: %s", abl_status_message(st));
    abl_report *r = NULL;
    st = abl_reproduce_report(&rep, differences != 0, &r);
    abl_flat_result *res = st == ABL_OK ? abl_flat_render(r, NULL) : abl_flat_fail(st, "reproduce: %s", abl_status_message(st));
    if (res != NULL && res->st == ABL_OK && !abl_reproduction_ok(&rep)) {
        /* the CLI's exit 1: the document stands, the status says a difference is new or an erratum stale */
        res->st = ABL_ERR_MISMATCH;
        res->msg = abl_strf("reproduce: %zu unexplained difference(s), %zu stale erratum/errata", rep.unexplained,
                            rep.stale);
    }
    abl_reproduction_free(&rep);
    abl_report_free(r);
    return res;
}
