/* alibi-blind: design's report (abl_design_report): the designed or judged slopes, the clamp and the min logits
 * as one report model, built in the library so that the CLI and the flat entry points (Python's design())
 * print the same document. Every number in it was computed by the run (abl_design_run_plan); the only new
 * computation is the influence column, from the exact predictor, where the kernel's P.V loses more keys. */
#include <stdlib.h>
#include <string.h>
#include "abl/core/decimal.h"
#include "abl/design/design.h"
#include "abl/kernel/backward.h"
#include "abl/kernel/simulate.h"
#include "abl/report/report.h"
#include "abl_internal.h"

/* What one report reads: the job, its result, and how the caller names the model and the kernel. */
typedef struct design_view {
    const abl_design_job *job;
    const abl_design_result *res;
    const abl_design_shown *shown;
} design_view;

static const char *mode_name(const abl_design_job *job)
{
    switch (job->mode) {
    case ABL_DESIGN_TARGETS: return "targets";
    case ABL_DESIGN_JUDGE: return "slopes";
    case ABL_DESIGN_CLAMP_ONLY: return "clamp";
    default: return job->cfg.gradient ? "keep gradient" : "keep all";
    }
}

/* A cell whose text the caller made on the heap (freed here; NULL, out of memory, shows as ""): its JSON
 * the same text, or null. */
static void cell_owned(abl_report *r, char *t, int json_null)
{
    abl_report_cell(r, t ? t : "", json_null ? "null" : t, NULL);
    free(t);
}

/* One summary line whose text and JSON the caller built on the heap (freed here; NULL: out of memory). */
static abl_status summary_owned(abl_report *r, const char *key, const char *label, char *text, char *json)
{
    abl_status st = text != NULL && json != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        abl_report_summary(r, key, label, text, json);
    free(text);
    free(json);
    return st;
}

/* The clamp's lines: every claim in them was checked on the kernel (abl_design_clamp_find). */
static abl_status clamp_summary(abl_report *r, const design_view *d)
{
    const abl_design_clamp *c = &d->res->clamp;
    abl_status st;
    if (c->none_needed) {
        st = summary_owned(r, "clamp", "least restrictive clamp c",
                           abl_strf("none needed (%s keeps every weight unclamped on %s; any clamp keeps them)",
                                       d->shown->schedule, d->shown->kernel),
                           abl_strf("null"));
    } else {
        st = summary_owned(r, "clamp", "least restrictive clamp c",
                           abl_strf("%s (for %s on %s; the next clamp below, %s, leaves zero weights in %d of %d "
                                       "heads)", c->clamp_text, d->shown->schedule, d->shown->kernel, c->next_text,
                                       c->next_failing, d->res->clamp_heads),
                           abl_strf("%s", c->clamp_text));
        if (st == ABL_OK)
            st = summary_owned(r, "clamp_next", "next clamp below", abl_strf("%s", c->next_text),
                               abl_strf("%s", c->next_text));
        if (st == ABL_OK)
            st = summary_owned(r, "clamp_next_failing_heads", "heads the next clamp leaves blind",
                               abl_strf("%d", c->next_failing), abl_strf("%d", c->next_failing));
    }
    int none = strcmp(c->bound_text, "none") == 0;
    if (st == ABL_OK)
        st = summary_owned(r, "clamp_bound", "exact bound",
                           abl_strf("%s (weight level: the exact softmax of the unrounded logits)", c->bound_text),
                           abl_strf("%s", none ? "null" : c->bound_text));
    if (st == ABL_OK && !c->none_needed)
        st = summary_owned(r, "clamp_margin", "clamp margin", abl_strf("%s", c->margin_text),
                           abl_strf("%s", c->margin_text));
    if (st == ABL_OK)
        st = summary_owned(r, "paper_clamp_margin", "paper's clamp -87",
                           c->paper_failing > 0
                               ? abl_strf("leaves zero weights in %d of %d heads (weight-level margin %s nats)",
                                             c->paper_failing, d->res->clamp_heads, c->paper_margin_text)
                               : abl_strf("keeps every head (weight-level margin %s nats)", c->paper_margin_text),
                           abl_strf("%s", c->paper_margin_text));
    if (st == ABL_OK)
        st = summary_owned(r, "paper_clamp_failing_heads", "heads -87 leaves blind", abl_strf("%d", c->paper_failing),
                           abl_strf("%d", c->paper_failing));
    return st;
}

/* A bidirectional layer: its attention line, the criterion the slopes were decided on. */
static void design_bidir_meta(abl_report *r)
{
    abl_report_meta(r, "attention", "attention",
                    "bidirectional: d = |i - j| over the whole N × N matrix (encoder); criterion: no zero weight "
                    "in any row (the end rows hold the farthest key, d = N - 1; the middle row the largest sum)",
                    "\"bidirectional\"");
}

/* A bidirectional layer's note (judged: the --slopes mode's sees N). */
static void design_bidir_note(abl_report *r, int judged)
{
    abl_report_note(r, judged ? "bidirectional: sees N is the largest context whose whole N x N matrix (every row, "
                                "both horizons) has no zero weight, from the bidirectional predictor."
                              : "bidirectional: every slope keeps every weight of every row of the N x N matrix "
                                "(the end rows reach d = N - 1, the middle row has the largest sum), decided by the "
                                "bidirectional predictor over all N rows and, for N <= 4096, its full emulation; no "
                                "min logit or clamp (both are decided on a causal last row).");
}

/* --keep gradient: the upstream bound the slopes were designed for, and the backward kind (spec §15). */
static void design_gradient_meta(abl_report *r, const design_view *d)
{
    char *j = abl_strf("%ld", d->job->cfg.log2_upstream);
    char *t = abl_strf("2^%ld", d->job->cfg.log2_upstream);
    abl_report_meta(r, "gradient_log2_upstream", "|dP - D| x loss scale", t ? t : "", j ? j : "");
    free(j);
    free(t);
    abl_backward_kind k = abl_backward_kind_of(&d->job->cfg.pipeline);
    if (k == ABL_BACKWARD_MEMEFF)   /* a CUDA kernel read in the source: say so wherever it answers */
        abl_report_meta(r, "backward_kind", "backward kind", "memeff (modelled from source, not measured)",
                        "\"memeff\"");
    else if (k == ABL_BACKWARD_FLASH)
        abl_report_meta(r, "backward_kind", "backward kind", "flash (modelled from source, not measured)",
                        "\"flash\"");
    else
        abl_report_meta(r, "backward_kind", "backward kind", abl_backward_kind_name(k), NULL);
}

/* The report's header: the kernel, the context, the mode and the logit budget. */
static void report_meta(abl_report *r, const design_view *d)
{
    abl_report_meta(r, "pipeline", "pipeline", d->job->cfg.pipeline.preset, NULL);
    /* every output states the code revision it answers for (issue 18, "Versions") */
    abl_report_meta(r, "pipeline_version", "version", d->job->cfg.pipeline.version ? d->job->cfg.pipeline.version : "?",
                    NULL);
    abl_report_meta(r, "dtype", "output dtype", d->job->cfg.pipeline.output_dtype.name, NULL);
    char *n = abl_strf("%llu", (unsigned long long)d->job->cfg.context);
    abl_report_meta(r, "context", "context N", n ? n : "", n ? n : "");
    free(n);
    abl_report_meta(r, "mode", "mode", mode_name(d->job), NULL);
    if (d->job->cfg.attention == ABL_ATTENTION_BIDIRECTIONAL)
        design_bidir_meta(r);
    if (d->job->cfg.gradient)
        design_gradient_meta(r, d);
}

/* One row per head: its slope, its target or largest N, and its min logits (computed by the run). */
static void report_row(abl_report *r, const design_view *d, int h, const int64_t *lost)
{
    const abl_design_result *res = d->res;
    abl_report_row(r);
    cell_owned(r, abl_strf("%d", h + 1), 0);
    char *exact = abl_design_slopes_spec(&res->slopes[h], 1);
    char *t = abl_strf("%.9g", (double)res->slopes[h]);
    abl_report_cell(r, t ? t : "", exact ? exact + 7 : "null", NULL);
    free(t);
    free(exact);
    if (d->job->targets != NULL)
        cell_owned(r, abl_strf("%llu", (unsigned long long)d->job->targets[h]), 0);
    if (res->sees != NULL)
        cell_owned(r, abl_strf("%s%llu", res->sees[h] >= ABL_DESIGN_SEES_CAP ? ">=" : "",
                                     (unsigned long long)res->sees[h]),
                   res->sees[h] >= ABL_DESIGN_SEES_CAP);
    if (lost != NULL && lost[h] >= 0)
        cell_owned(r, abl_strf("%lld", (long long)lost[h]), 0);
    else if (lost != NULL)
        abl_report_cell(r, "none", "null", NULL);
    for (int k = 0; res->min_logits == NULL && d->job->cfg.gradient && k < 2; k++) /* a weight claim, not computed */
        abl_report_cell(r, "-", "null", NULL);
    for (int k = 0; res->min_logits != NULL && k < 2; k++) {
        const char *ml = res->min_logits[2 * h + k];
        abl_report_cell(r, ml, strcmp(ml, "none") == 0 ? "null" : ml, NULL);
    }
}

/* Where the kernel's P.V loses keys the weights keep (docs/method.md, "Influence"): each designed head's first
 * distance without influence at N, from the exact predictor; NULL when it equals the weight's (or no answer). */
static int64_t *design_influence(const design_view *d)
{
    const abl_design_result *res = d->res;
    if (res->slopes == NULL || res->n < 1)
        return NULL;
    mpq_t *m = malloc((size_t)res->n * sizeof *m);
    int64_t *lost = malloc((size_t)res->n * sizeof *lost);
    abl_schedule_spec spec;
    memset(&spec, 0, sizeof spec);
    abl_status st = m != NULL && lost != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    for (int h = 0; m != NULL && h < res->n; h++) {
        mpq_init(m[h]);
        mpq_set_d(m[h], (double)res->slopes[h]);   /* a binary32 value: exact */
    }
    if (st == ABL_OK)
        st = abl_schedule_spec_slopes((const mpq_t *)m, (size_t)res->n, &spec);
    abl_prediction pred;
    memset(&pred, 0, sizeof pred);
    if (st == ABL_OK) {
        abl_simulate_config sc;
        memset(&sc, 0, sizeof sc);
        sc.pipeline = d->job->cfg.pipeline;
        sc.slopes = &spec;
        sc.context = d->job->cfg.context;
        sc.threads = d->job->cfg.threads;
        sc.attention = d->job->cfg.attention;
        st = abl_predict_run(&sc, &pred);
    }
    if (st == ABL_OK && pred.influence_differs && pred.heads == res->n)
        for (int h = 0; h < res->n; h++)
            lost[h] = pred.results[h].first_influence_zero;
    else
        st = ABL_ERR_UNSUPPORTED;
    abl_prediction_free(&pred);
    abl_schedule_spec_free(&spec);
    for (int h = 0; m != NULL && h < res->n; h++)
        mpq_clear(m[h]);
    free(m);
    if (st != ABL_OK) {
        free(lost);
        return NULL;
    }
    return lost;
}

static void report_heads(abl_report *r, const design_view *d, const int64_t *lost)
{
    const abl_design_result *res = d->res;
    abl_report_column(r, "head", "head", ABL_ALIGN_RIGHT);
    abl_report_column(r, "slope", "slope (fp32)", ABL_ALIGN_RIGHT);
    if (d->job->targets != NULL)
        abl_report_column(r, "first_blind", "first blind", ABL_ALIGN_RIGHT);
    if (res->sees != NULL)
        abl_report_column(r, "sees", "sees N", ABL_ALIGN_RIGHT);
    if (lost != NULL)
        abl_report_column(r, "first_influence_zero", "first no-influence", ABL_ALIGN_RIGHT);
    if (res->min_logits != NULL || d->job->cfg.gradient) { /* gradient: shown as not computed (-, null) */
        abl_report_column(r, "min_logit_half", "min logit d=N/2", ABL_ALIGN_RIGHT);
        abl_report_column(r, "min_logit_last", "min logit d=N-1", ABL_ALIGN_RIGHT);
    }
    for (int h = 0; h < res->n; h++)
        report_row(r, d, h, lost);
    char *v = NULL;
    int grad = d->job->cfg.gradient;
    if (d->job->targets == NULL && res->sees == NULL)
        v = abl_strf("no zero %s in %llu x %llu%s on %s%s", grad ? "gradient dS" : "weight",
                     (unsigned long long)d->job->cfg.context, (unsigned long long)d->job->cfg.context,
                     d->job->cfg.attention == ABL_ATTENTION_BIDIRECTIONAL ? " (bidirectional)" : "", d->shown->kernel,
                     !res->simulated ? " (predictor)"
                                       : grad ? " (predictor and simulate --backward)" : " (predictor and simulate)");
    else if (d->job->targets != NULL)
        v = abl_strf("first blind distance = target for every head on %s%s", d->shown->kernel,
                           res->simulated ? " (predictor and simulate)" : " (predictor)");
    if (d->job->targets != NULL || res->sees == NULL)
        abl_report_summary(r, "verified", "verified", v ? v : "", "true");
    free(v);
}

static void report_notes(abl_report *r, const design_view *d)
{
    const abl_design_result *res = d->res;
    if (res->slopes != NULL)
        abl_report_note(r, "slopes are binary32 values; each is decided by the kernel's exact zero-logit predictor "
                           "(and the full emulation for N <= 4096).");
    if (res->sees != NULL)
        abl_report_note(r, "sees N: the largest context whose N x N matrix has no zero weight for that head.");
    if (d->job->cfg.attention == ABL_ATTENTION_BIDIRECTIONAL)
        design_bidir_note(r, res->sees != NULL);
    if (res->slopes != NULL && d->job->cfg.gradient)
        abl_report_note(r, "keep gradient: no key of the N x N causal matrix (zero logits) gets an exactly-zero "
                           "gradient dS = P (dP - D) rounded into the output dtype when |dP - D| x loss scale is "
                           "the stated power of two (spec §15; the steepest head checked one slope beyond). The "
                           "backward kind is the preset's (docs/pipelines.md §9). min logit: not computed (-, "
                           "null): a weight claim.");
    if (res->slopes != NULL && d->job->cfg.gradient &&
        abl_backward_kind_of(&d->job->cfg.pipeline) == ABL_BACKWARD_MEMEFF)
        abl_report_note(r, "backward kind memeff: the memory-efficient SDPA backward (P recomputed from the "
                           "forward's log-sum-exp and rounded into the dtype, dS x scale rounded): modelled from "
                           "source, not measured (docs/pipelines.md §9).");
    if (res->slopes != NULL && d->job->cfg.gradient &&
        abl_backward_kind_of(&d->job->cfg.pipeline) == ABL_BACKWARD_FLASH)
        abl_report_note(r, "backward kind flash: FlashAttention-2's backward (P recomputed with exp2 from the saved "
                           "log-sum-exp, flushed below 2^-126, dS rounded unscaled): modelled from source, not "
                           "measured (docs/pipelines.md §9).");
    if (res->min_logits != NULL)
        abl_report_note(r, "min logit: the smallest logit a key at that distance needs (nats, relative to the "
                           "zero-logit keys) to keep a non-zero weight in the last row on the kernel: its score "
                           "through the kernel's roundings (the logit dtype, the softmax), found by bisection over "
                           "binary32 scores and checked one step beyond, rounded up. A value <= 0 at d=N-1 means a "
                           "zero-logit key there keeps its weight.");
    if (res->have_clamp)
        abl_report_note(r, "clamp: bias = max(-m d, c), decided on the kernel: c as the kernel stores it (eager: the "
                           "bias dtype; flash: fp32), every head's last row through its softmax, checked one step "
                           "beyond (the next representable clamp below); margins and the exact bound at the weight "
                           "level (eager: e^c/S of the heads the clamp reaches, else their key at N-1, against the "
                           "output dtype; flash: exp2's flush threshold).");
    if (res->clamp_skipped)
        abl_report_note(r, "no clamp line: the clamp is checked on eager and one-split flash softmaxes only.");
    const char *modelled = abl_pipeline_modelled_note(&d->job->cfg.pipeline);
    if (modelled != NULL)
        abl_report_note(r, modelled);
}

abl_status abl_design_report(const abl_design_job *job, const abl_design_result *res, const abl_design_shown *shown,
                             abl_report **out)
{
    const design_view view = {job, res, shown}, *d = &view;
    abl_report *r = abl_report_new("ALiBi slope design", "heads");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = ABL_OK;
    if (d->shown->model != NULL)
        abl_report_meta(r, "model", "model", d->shown->model, NULL);
    if (d->shown->config != NULL) {
        char *q = abl_report_json_string(d->shown->config);
        if (q != NULL)
            abl_report_meta(r, "config", "config", d->shown->config, q);
        st = q != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
        free(q);
    }
    report_meta(r, d);
    char *b = d->job->cfg.budget ? abl_decimal_string(d->job->cfg.budget) : NULL;
    abl_report_meta(r, "logit_budget", "logit budget B", b ? b : "0", b ? b : "0");
    free(b);
    int64_t *lost = design_influence(d);   /* NULL unless the kernel's P.V loses more than its weights */
    if (d->res->slopes != NULL)
        report_heads(r, d, lost);
    if (st == ABL_OK && d->res->have_clamp)
        st = clamp_summary(r, d);
    report_notes(r, d);
    if (lost != NULL)
        abl_report_note(r, "first no-influence: the smallest distance of the last row at N whose key contributes "
                           "nothing to P.V for unit-scale values on this kernel (P rounded to its pv-dtype, added "
                           "in pv-accumulate; docs/method.md, Influence), whether or not its weight is 0.");
    free(lost);
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}

