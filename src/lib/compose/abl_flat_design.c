/* alibi-blind: design for bindings (abl_flat_design): the CLI's design command with the flat arguments, the
 * same resolution order (the model or config first; dtype, pipeline, ctx, heads over it) and the same report
 * (abl_design_report), so that Python's design() equals `design --format json`. The model here is a catalogue
 * name (the local Hugging Face cache is the CLI's alone, as for the other flat entry points). */
#include <stdlib.h>
#include <string.h>
#include "abl/core/decimal.h"
#include "abl/analysis/gradient.h"
#include "abl/core/format.h"
#include "abl/design/design.h"
#include "abl/kernel/simulate.h"
#include "abl/model/catalogue.h"
#include "abl_internal.h"
#include "compose/abl_flat_internal.h"

/* What the arguments resolve to; freed by design_free. */
typedef struct flat_design {
    const abl_model *cat;
    abl_model_spec spec;
    int have_config;
    char *config_path;          /* the config.json read (a folder's is made here) */
    abl_layer layer;            /* the kernel's format and pipeline as values */
    abl_design_job job;
    abl_design_result res;
    uint64_t *targets;
    float *held;
    abl_schedule_spec sched;
    const char *schedule;       /* the schedule the clamp is judged for (display) */
    mpq_t budget;
    long heads;
} flat_design;

static void design_free(flat_design *d)
{
    abl_design_result_free(&d->res);
    free(d->targets);
    free(d->held);
    abl_schedule_spec_free(&d->sched);
    abl_model_spec_free(&d->spec);
    free(d->config_path);
    abl_layer_free(&d->layer);
    mpq_clear(d->budget);
}

/* model= (a catalogue name) or config= (a config.json, or a folder holding one). */
static abl_flat_result *design_model(const abl_flat_model_args *a, flat_design *d)
{
    if (a->model != NULL && a->config != NULL)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "model and config exclude each other");
    if (a->model != NULL && (d->cat = abl_model_find(a->model)) == NULL)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "model: unknown model '%s' (models() lists them, or use config=)",
                             a->model);
    if (a->config != NULL) {
        abl_flat_result *e = abl_flat_config_read(a->config, &d->spec, &d->config_path);
        if (e != NULL)
            return e;
        d->have_config = 1;
    }
    /* an encoder's layer is bidirectional (its family's): designed over its whole N x N matrix, as the CLI */
    const abl_model_family *f = d->cat != NULL ? d->cat->family : d->have_config ? d->spec.family : NULL;
    if (f != NULL)
        d->job.cfg.attention = f->attention;
    return NULL;
}

/* dtype= and pipeline= (else the model's dtype and default code path; else bf16 and eager), as values. */
static abl_flat_result *design_kernel(const abl_flat_model_args *a, flat_design *d)
{
    abl_layer *l = &d->layer;
    const char *dt = a->dtype != NULL ? a->dtype : d->cat != NULL && d->cat->dtype != NULL ? d->cat->dtype : "bf16";
    if (a->dtype == NULL && d->have_config)
        l->format = d->spec.dtype;
    else if (abl_format_lookup(dt, &l->format) != ABL_OK)
        return abl_flat_fail(ABL_ERR_UNKNOWN_DTYPE, "dtype: unknown floating-point format '%s' (known: %s)", dt,
                             abl_format_names());
    char *msg = NULL;
    abl_status st = ABL_OK;
    l->has_pipeline = 1;   /* the CLI's abl_cli_layer_kernel: given, the model's code path, the config's */
    if (a->pipeline != NULL)
        st = abl_pipeline_spec_parse(a->pipeline, &l->pipeline, &msg);
    else if (d->cat != NULL && d->cat->family != NULL && d->cat->family->npaths > 0)
        st = abl_code_path_pipeline(&d->cat->family->paths[0], &l->pipeline);
    else if (d->have_config)
        st = abl_model_spec_pipeline(&d->spec, &l->pipeline);
    else
        l->has_pipeline = 0; /* eager */
    l->has_pipeline = l->has_pipeline && st == ABL_OK;
    abl_pipeline *pl = &d->job.cfg.pipeline;
    if (st == ABL_OK && (st = abl_layer_pipeline(l, pl)) == ABL_OK)
        st = abl_pipeline_check_msg(pl, &msg);
    abl_flat_result *e = st == ABL_OK ? NULL : abl_flat_fail(st, "pipeline: %s", msg ? msg : abl_status_message(st));
    free(msg);
    if (e == NULL && pl->softmax == ABL_SOFTMAX_EAGER && (pl->sum != ABL_SUM_EXACT || pl->exp != ABL_EXP_CORRECT))
        e = abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "pipeline: design decides with the exact predictor, which models "
                          "sum=exact and exp=correct (got sum=%s, exp=%s)", abl_sum_order_name(pl->sum),
                          abl_exp_model_name(pl->exp));
    return e;
}

/* ctx=, heads=, threads=, logit_budget= (the model's context and heads unless given). */
static abl_flat_result *design_sizes(const abl_flat_model_args *a, const abl_flat_design_args *g, flat_design *d)
{
    uint64_t ctx = a->ctx > 0 ? a->ctx : d->cat != NULL ? d->cat->context : d->have_config ? d->spec.context : 0;
    if (ctx == 0)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "design: ctx= is required");
    if (ctx > ABL_SIMULATE_MAX_CONTEXT)
        return abl_flat_fail(ABL_ERR_CONTEXT_RANGE, "ctx: %llu is out of range (1 to %llu)", (unsigned long long)ctx,
                             (unsigned long long)ABL_SIMULATE_MAX_CONTEXT);
    d->job.cfg.context = d->layer.context = ctx;
    d->heads = a->heads > 0 ? a->heads : d->cat != NULL ? d->cat->heads : d->have_config ? d->spec.heads : 0;
    if (a->heads < 0 || a->heads > ABL_MAX_HEADS)
        return abl_flat_fail(ABL_ERR_HEADS_RANGE, "heads: %d is out of range (1 to %d)", a->heads, ABL_MAX_HEADS);
    d->layer.heads = (int)d->heads;
    if (g->threads < 0 || g->threads > 256)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "threads: %d is out of range (1 to 256)", g->threads);
    d->job.cfg.threads = g->threads;
    if (g->logit_budget != NULL) {
        if (abl_decimal_to_mpq(g->logit_budget, d->budget) != ABL_OK)
            return abl_flat_fail(ABL_ERR_BAD_NUMBER, "logit_budget: '%s' is not a decimal number", g->logit_budget);
        if (mpq_sgn(d->budget) > 0)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "logit_budget: %s must be 0 or negative (a logit below the "
                                 "others)", g->logit_budget);
        d->job.cfg.budget = d->budget;
    }
    return NULL;
}

/* targets=: each inside the context, as many as heads= when both are given. */
static abl_flat_result *design_targets(const uint64_t *targets, size_t n, flat_design *d)
{
    if (n < 1 || n > ABL_MAX_HEADS)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "targets: 1 to %d targets", ABL_MAX_HEADS);
    if (d->heads != 0 && (size_t)d->heads != n)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "targets: %zu targets for heads=%ld", n, d->heads);
    if ((d->targets = malloc(n * sizeof *d->targets)) == NULL)
        return abl_flat_fail(ABL_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (targets[i] < 1 || targets[i] >= d->job.cfg.context)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "targets: target %llu is not inside the context (1 to "
                                 "ctx - 1 = %llu)", (unsigned long long)targets[i],
                                 (unsigned long long)d->job.cfg.context - 1);
        d->targets[i] = targets[i];
    }
    d->job.mode = ABL_DESIGN_TARGETS;
    d->job.targets = d->targets;
    d->job.heads = (int)n;
    return NULL;
}

/* slopes=: the schedule judged as the kernel holds it. */
static abl_flat_result *design_judge(const char *slopes, flat_design *d)
{
    char *msg = NULL;
    d->schedule = slopes;
    abl_status st = abl_schedule_spec_parse(slopes, &d->sched, &msg);
    if (st == ABL_OK)
        st = abl_design_held_slopes(&d->job.cfg, &d->sched, (int)d->heads, &d->held, &d->job.heads);
    abl_flat_result *e = st == ABL_OK ? NULL : abl_flat_fail(st, "slopes: '%s': %s", slopes,
                                                             msg ? msg : abl_status_message(st));
    free(msg);
    d->job.mode = ABL_DESIGN_JUDGE;
    d->job.held = d->held;
    return e;
}

/* keep all (or clamp only): the clamp judged for the model's schedule, else press. */
static abl_flat_result *design_keep_all(int clamp_only, flat_design *d)
{
    if (d->heads == 0)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "design: heads= is required (or targets=/slopes=)");
    d->job.mode = clamp_only ? ABL_DESIGN_CLAMP_ONLY : ABL_DESIGN_KEEP_ALL;
    d->job.heads = (int)d->heads;
    abl_status st = ABL_OK;
    if (d->cat != NULL)
        st = abl_model_schedule(d->cat, &d->sched);
    else if (d->have_config)
        st = abl_model_spec_schedule_keys(&d->spec, d->job.cfg.context, &d->sched); /* alibi_scaling.train_seq_len */
    if (st != ABL_OK)
        return abl_flat_fail(st, "design: press: %s", abl_status_message(st));
    d->schedule = d->sched.text != NULL ? d->sched.text : "press";
    d->job.schedule = d->sched.text != NULL ? &d->sched : NULL;
    return NULL;
}

/* One power of two (upstream=, loss_scale=; "dynamic": GradScaler's initial scale) added to *log2. */
static abl_flat_result *design_pow2(const char *key, const char *text, long *log2)
{
    long k = 0;
    if (text == NULL)
        return NULL;
    if (strcmp(key, "loss_scale") == 0 && strcmp(text, "dynamic") == 0)
        k = ABL_GRADIENT_DYNAMIC_LOG2;
    else if (abl_gradient_pow2_parse(text, &k) != ABL_OK)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "%s: '%s' is not a positive power of two (65536, 0.125, 2^16, "
                             "2^-3; |exponent| <= %d)", key, text, ABL_GRADIENT_LOG2_MAX);
    *log2 += k;
    return NULL;
}

/* keep="gradient" (the CLI's design_gradient): a backward with a zero-logit predictor
 * (abl_design_gradient_refusal), no weight-level claim. */
static abl_flat_result *design_gradient(const abl_flat_design_args *g, flat_design *d)
{
    abl_flat_result *e = design_pow2("upstream", g->upstream, &d->job.cfg.log2_upstream);
    if (e == NULL)
        e = design_pow2("loss_scale", g->loss_scale, &d->job.cfg.log2_upstream);
    if (e != NULL)
        return e;
    if (d->job.cfg.log2_upstream < -ABL_GRADIENT_LOG2_MAX || d->job.cfg.log2_upstream > ABL_GRADIENT_LOG2_MAX)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "upstream: |dP - D| x loss scale = 2^%ld is outside 2^-%d .. "
                             "2^%d", d->job.cfg.log2_upstream, ABL_GRADIENT_LOG2_MAX, ABL_GRADIENT_LOG2_MAX);
    const char *why = abl_design_gradient_refusal(&d->job.cfg.pipeline);
    if (why != NULL)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "keep: 'gradient': softmax=%s: %s",
                             abl_softmax_kind_name(d->job.cfg.pipeline.softmax), why);
    if (g->logit_budget != NULL || g->clamp_only)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "%s: a weight-level claim, not with keep='gradient'",
                             g->clamp_only ? "clamp" : "logit_budget");
    d->job.cfg.gradient = 1;
    return NULL;
}

static abl_flat_result *design_mode(const abl_flat_model_args *a, const abl_flat_design_args *g, flat_design *d)
{
    int gradient = g->keep != NULL && strcmp(g->keep, "gradient") == 0;
    if (g->keep != NULL && strcmp(g->keep, "all") != 0 && !gradient)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "keep: unknown value '%s' (known: all, gradient)", g->keep);
    if (!gradient && (g->upstream != NULL || g->loss_scale != NULL))
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "%s: applies with keep='gradient' only",
                             g->upstream != NULL ? "upstream" : "loss_scale");
    abl_flat_result *e = gradient ? design_gradient(g, d) : NULL;
    if (e != NULL)
        return e;
    if ((a->slopes != NULL) + (g->targets != NULL) + (g->keep != NULL) > 1)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "design: keep, slopes and targets exclude each other");
    d->job.checks = 1;
    if (d->job.cfg.attention == ABL_ATTENTION_BIDIRECTIONAL && (g->clamp_only || g->logit_budget != NULL))
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "%s: not decided for a bidirectional layer (it is checked on a "
                             "causal last row)", g->clamp_only ? "clamp" : "logit_budget");
    if (g->targets != NULL)
        return design_targets(g->targets, g->ntargets, d);
    if (a->slopes != NULL)
        return design_judge(a->slopes, d);
    return design_keep_all(g->clamp_only, d);
}

/* Plan, judge the budget, run; a failure names the step that failed. */
static abl_flat_result *design_execute(const abl_flat_work *w, flat_design *d)
{
    abl_design_plan plan;
    abl_status st = abl_design_plan_make(&d->job, &plan);
    if (st != ABL_OK)
        return abl_flat_fail(st, "design: plan: %s", abl_status_message(st));
    abl_flat_result *e = abl_flat_budget("design", w, &plan.plan.cost);
    abl_progress progress = abl_flat_progress(w);
    if (e == NULL)
        st = abl_design_run_plan(&plan, &progress, &d->res);
    abl_design_plan_free(&plan);
    if (e == NULL && st == ABL_ERR_DEGENERATE && d->res.stage != NULL && strcmp(d->res.stage, "design search") == 0)
        return abl_flat_fail(st, "design: no slope keeps every key at distance %llu on %s",
                             (unsigned long long)d->job.cfg.context - 1, d->job.cfg.pipeline.preset);
    if (e == NULL && st != ABL_OK)
        e = abl_flat_fail(st, "design: %s: %s", d->res.stage != NULL ? d->res.stage : "design", abl_status_message(st));
    return e;
}

abl_flat_result *abl_flat_design(const abl_flat_model_args *a, const abl_flat_design_args *g, const abl_flat_work *w)
{
    flat_design d;
    memset(&d, 0, sizeof d);
    abl_layer_init(&d.layer);
    mpq_init(d.budget);
    abl_flat_result *e = design_model(a, &d);
    if (e == NULL)
        e = design_kernel(a, &d);
    if (e == NULL)
        e = design_sizes(a, g, &d);
    if (e == NULL)
        e = design_mode(a, g, &d);
    if (e == NULL)
        e = design_execute(w, &d);
    if (e == NULL) {
        abl_report *rep = NULL;
        const abl_design_shown shown = {d.cat != NULL ? d.cat->name : NULL, d.config_path,
                                        d.layer.has_pipeline ? d.layer.pipeline.text : "eager", d.schedule};
        abl_status st = abl_design_report(&d.job, &d.res, &shown, &rep);
        e = st == ABL_OK ? abl_flat_render(rep, NULL) : abl_flat_fail(st, "design: report: %s", abl_status_message(st));
        abl_report_free(rep);
    }
    design_free(&d);
    return e;
}
