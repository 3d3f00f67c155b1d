/* alibi-blind: design, planned (issue 17 item 2). The design command's computation is listed as steps
 * priced by the parts' public estimates; the run executes exactly those steps and counts their calls,
 * so the budget check and the progress bar price what runs, not a second description of it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "abl/design/design.h"
#include "abl/kernel/simulate.h"
#include "abl/core/threshold.h"

static void sim_config(const abl_design_config *c, const abl_schedule_spec *slopes, int heads, uint64_t n,
                       abl_simulate_config *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->pipeline = c->pipeline;
    sc->slopes = slopes;
    sc->heads = heads;
    sc->context = n;
    sc->threads = c->threads;
    sc->attention = c->attention;
}

/* `times` one-head predictions at context n (one binary32 slope, as the searches try them). */
static abl_status predictions_cost(const abl_design_config *c, uint64_t n, double times, abl_cost *out)
{
    const float unit = 1.0f;
    abl_schedule_spec one;
    abl_status st = abl_design_slopes_schedule(&unit, 1, &one);
    if (st != ABL_OK)
        return st;
    abl_simulate_config sc;
    sim_config(c, &one, 1, n, &sc);
    st = abl_predict_estimate(&sc, out);
    abl_schedule_spec_free(&one);
    out->units *= times;
    out->seconds *= times;
    return st;
}

static abl_status min_logit_cost(const abl_design_config *c, double searches, abl_cost *out)
{
    memset(out, 0, sizeof *out);
    out->units = searches * ABL_DESIGN_MIN_LOGIT_ROWS * (double)c->context;
    out->seconds = out->units / ABL_DESIGN_ROW_RATE + searches * ABL_DESIGN_MIN_LOGIT_SECONDS;
    out->threads = 1;
    out->unit_name = "weights";
    return ABL_OK;
}

static abl_status clamp_cost(const abl_design_config *c, int heads, abl_cost *out)
{
    memset(out, 0, sizeof *out);
    out->units = (double)heads * ABL_DESIGN_CLAMP_ROWS * (double)c->context;
    out->seconds = out->units / ABL_DESIGN_ROW_RATE + (double)heads * ABL_DESIGN_CLAMP_HEAD_SECONDS;
    out->threads = 1;
    out->unit_name = "weights";
    return ABL_OK;
}

/* Append step `what` (calls, cost) and remember its index. */
static abl_status add_step(abl_plan *p, const char *what, const abl_cost *cost, uint64_t n, int heads,
                           unsigned long calls, long *index)
{
    abl_plan_step s;
    memset(&s, 0, sizeof s);
    s.what = what;
    s.cost = *cost;
    s.context = n;
    s.heads = heads;
    s.calls = calls;
    *index = (long)p->nsteps;
    return abl_plan_add(p, &s);
}

abl_status abl_design_checks_estimate(const abl_design_config *c, int heads, int min_logits, int clamp,
                                      abl_cost *out)
{
    if (c == NULL || out == NULL || heads < 0 || min_logits < 0)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_plan p;
    memset(&p, 0, sizeof p);
    abl_cost part;
    long k;
    abl_status st = ABL_OK;
    if (heads > 0 && min_logits > 0 && (st = min_logit_cost(c, (double)heads * min_logits, &part)) == ABL_OK)
        st = add_step(&p, "min logit", &part, c->context, 1, (unsigned long)heads * (unsigned long)min_logits, &k);
    if (st == ABL_OK && heads > 0 && clamp && (st = clamp_cost(c, heads, &part)) == ABL_OK)
        st = add_step(&p, "clamp", &part, c->context, heads, 1, &k);
    memset(out, 0, sizeof *out);
    if (st == ABL_OK)
        *out = p.cost;
    out->threads = 1;
    out->unit_name = "weights";
    abl_plan_free(&p);
    return st;
}

/* --slopes: per held slope, predictions at N = 2, 4, ... up to the first N with a zero weight, then a
 * bisection below it. That N is taken from the closed form (a weight is surely zero once
 * exp(-m (N - 1)) is below the output dtype's zero point 2^k), a nominal guess, not a bound. */
static abl_status largest_contexts_cost(const abl_design_job *j, abl_cost *acc)
{
    long k = 0;
    if (abl_threshold_log2_multiple(&j->cfg.pipeline.output_dtype, ABL_TAU_RN_ZERO, &k) != ABL_OK || k >= 0)
        k = -150;
    memset(acc, 0, sizeof *acc);
    for (int h = 0; h < j->heads; h++) {
        double dstar = (double)-k * 0.6931471805599453 / (double)j->held[h];
        uint64_t bad = 2;
        int steps = 1;
        while (bad < ABL_DESIGN_SEES_CAP && (double)bad < dstar + 2) {
            bad *= 2;
            steps++;
        }
        /* the doubling costs at most twice its last step; the bisection `steps` more at most */
        abl_cost one;
        abl_status st = predictions_cost(&j->cfg, bad, 2.0 + steps, &one);
        if (st != ABL_OK)
            return st;
        abl_cost_add(acc, &one);
    }
    return ABL_OK;
}

/* The search step of the job's mode (none for CLAMP_ONLY). */
static abl_status plan_search(abl_design_plan *p)
{
    const abl_design_job *j = &p->job;
    abl_cost c;
    abl_status st;
    switch (j->mode) {
    case ABL_DESIGN_KEEP_ALL: /* the search, and the next slope up checked not to be sighted */
        if ((st = predictions_cost(&j->cfg, j->cfg.context, ABL_DESIGN_SEARCH_PREDICTIONS + 1, &c)) != ABL_OK)
            return st;
        return add_step(&p->plan, "design search", &c, j->cfg.context, j->heads, 1, &p->step_search);
    case ABL_DESIGN_TARGETS:
        if ((st = predictions_cost(&j->cfg, j->cfg.context, (double)j->heads * ABL_DESIGN_SEARCH_PREDICTIONS, &c)) !=
            ABL_OK)
            return st;
        return add_step(&p->plan, "design targets", &c, j->cfg.context, j->heads, 1, &p->step_search);
    case ABL_DESIGN_JUDGE:
        if ((st = largest_contexts_cost(j, &c)) != ABL_OK)
            return st;
        return add_step(&p->plan, "largest context", &c, j->cfg.context, 1, (unsigned long)j->heads, &p->step_search);
    default:
        return ABL_OK;
    }
}

/* The check after the search: the predictor on every designed head at N and, up to
 * ABL_DESIGN_SIMULATE_MAX, the emulation (the targets: the emulation only). */
static abl_status plan_verify(abl_design_plan *p)
{
    const abl_design_job *j = &p->job;
    if (j->mode != ABL_DESIGN_KEEP_ALL && j->mode != ABL_DESIGN_TARGETS)
        return ABL_OK;
    int emulate = j->cfg.context <= ABL_DESIGN_SIMULATE_MAX;
    if (j->mode == ABL_DESIGN_TARGETS && !emulate)
        return ABL_OK;
    abl_simulate_config sc;
    sim_config(&j->cfg, NULL, j->heads, j->cfg.context, &sc);
    abl_cost acc, c;
    memset(&acc, 0, sizeof acc);
    abl_status st = ABL_OK;
    if (j->mode == ABL_DESIGN_KEEP_ALL && (st = abl_predict_estimate(&sc, &c)) == ABL_OK)
        abl_cost_add(&acc, &c);
    if (st == ABL_OK && emulate && (st = abl_simulate_estimate(&sc, &c)) == ABL_OK) {
        abl_cost_add(&acc, &c);
        if (j->cfg.gradient) /* the backward emulation of an upcast kind runs the forward twice */
            abl_cost_add(&acc, &c);
    }
    if (st != ABL_OK)
        return st;
    return add_step(&p->plan, j->mode == ABL_DESIGN_KEEP_ALL ? "verify" : "simulate", &acc, j->cfg.context, j->heads,
                    1, &p->step_verify);
}

/* The checks the report prints: two min logits per designed head and the clamp (not for targets). */
static abl_status plan_checks(abl_design_plan *p)
{
    const abl_design_job *j = &p->job;
    abl_cost c;
    abl_status st = ABL_OK;
    /* the clamp and min logits are weight claims on a causal last row (abl_design_min_logit,
     * abl_design_clamp_find): not the gradient's, not a bidirectional layer's */
    if (!j->checks || j->cfg.gradient || j->cfg.attention == ABL_ATTENTION_BIDIRECTIONAL)
        return ABL_OK;
    if (j->mode != ABL_DESIGN_CLAMP_ONLY && (st = min_logit_cost(&j->cfg, 2.0 * j->heads, &c)) == ABL_OK)
        st = add_step(&p->plan, "min logit", &c, j->cfg.context, 1, 2ul * (unsigned long)j->heads, &p->step_min_logit);
    if (st == ABL_OK && j->mode != ABL_DESIGN_TARGETS && (st = clamp_cost(&j->cfg, j->heads, &c)) == ABL_OK)
        st = add_step(&p->plan, "clamp", &c, j->cfg.context, j->heads, 1, &p->step_clamp);
    return st;
}

abl_status abl_design_plan_make(const abl_design_job *job, abl_design_plan *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->step_search = out->step_verify = out->step_clamp = out->step_min_logit = -1;
    if (job == NULL || job->heads < 1 || job->cfg.context < 1 || (job->mode == ABL_DESIGN_TARGETS && !job->targets) ||
        (job->mode == ABL_DESIGN_JUDGE && !job->held))
        return ABL_ERR_INVALID_ARGUMENT;
    out->job = *job;
    abl_status st = plan_search(out);
    if (st == ABL_OK)
        st = plan_verify(out);
    if (st == ABL_OK)
        st = plan_checks(out);
    if (st != ABL_OK)
        abl_design_plan_free(out);
    return st;
}

void abl_design_plan_free(abl_design_plan *p)
{
    if (p != NULL)
        abl_plan_free(&p->plan);
}

void abl_design_result_free(abl_design_result *r)
{
    if (r == NULL)
        return;
    free(r->slopes);
    free(r->sees);
    if (r->min_logits != NULL)
        for (int i = 0; i < 2 * r->n; i++)
            free(r->min_logits[i]);
    free(r->min_logits);
    if (r->have_clamp)
        abl_design_clamp_clear(&r->clamp);
    memset(r, 0, sizeof *r);
}

/* The run's position: the nominal seconds done, reported in milliseconds of the plan's. */
typedef struct design_exec {
    abl_design_plan *p;
    const abl_progress *progress;
    double done;
    abl_design_result *r;
} design_exec;

/* `calls` calls of step k are done: counted, and the bar moves by their share of the step's cost. */
static void step_done(design_exec *x, long k, unsigned long calls)
{
    abl_plan_step *s = &x->p->plan.steps[k];
    s->executed += calls;
    x->done += s->cost.seconds * (double)calls / (double)s->calls;
    double total = x->p->plan.cost.seconds;
    if (x->progress != NULL && x->progress->fn != NULL && total > 0)
        x->progress->fn(x->progress->ctx, (uint64_t)(1000 * fmin(x->done, total)), (uint64_t)(1000 * total));
}

static abl_status fail(design_exec *x, const char *stage, abl_status st)
{
    x->r->stage = stage;
    return st;
}

/* "As steep as the kernel allows", checked one step beyond: the next binary32 slope above the steepest
 * head must not be sighted (inside the searched range, up to 64). ABL_ERR_MISMATCH when it is. */
static abl_status check_steepest(const abl_design_config *c, float steepest)
{
    float steeper = nextafterf(steepest, INFINITY);
    if (!(steepest < 64.0f))
        return ABL_OK;
    int ok = 0;
    abl_status st = abl_design_sighted(c, steeper, &ok);
    return st != ABL_OK ? st : ok ? ABL_ERR_MISMATCH : ABL_OK;
}

static abl_status run_judge(design_exec *x)
{
    const abl_design_job *j = &x->p->job;
    abl_design_result *r = x->r;
    r->sees = calloc((size_t)j->heads, sizeof *r->sees);
    if (r->sees == NULL)
        return fail(x, "largest context", ABL_ERR_NO_MEMORY);
    memcpy(r->slopes, j->held, (size_t)j->heads * sizeof *r->slopes);
    for (int h = 0; h < j->heads; h++) {
        abl_status st = abl_design_largest_context(&j->cfg, j->held[h], ABL_DESIGN_SEES_CAP, &r->sees[h]);
        if (st != ABL_OK)
            return fail(x, "largest context", st);
        step_done(x, x->p->step_search, 1);
    }
    return ABL_OK;
}

static abl_status run_search(design_exec *x)
{
    const abl_design_job *j = &x->p->job;
    abl_design_result *r = x->r;
    abl_status st = ABL_OK;
    if (j->mode == ABL_DESIGN_CLAMP_ONLY)
        return ABL_OK;
    r->slopes = calloc((size_t)j->heads, sizeof *r->slopes);
    if (r->slopes == NULL)
        return fail(x, "design search", ABL_ERR_NO_MEMORY);
    if (j->mode == ABL_DESIGN_JUDGE)
        return run_judge(x);
    if (j->mode == ABL_DESIGN_TARGETS) {
        if ((st = abl_design_targets(&j->cfg, j->targets, j->heads, r->slopes, &r->failed)) != ABL_OK)
            return fail(x, "design targets", st);
    } else {
        if ((st = abl_design_keep_all(&j->cfg, j->heads, r->slopes)) != ABL_OK)
            return fail(x, "design search", st);
        if ((st = check_steepest(&j->cfg, r->slopes[0])) != ABL_OK)
            return fail(x, "steepest", st);
    }
    step_done(x, x->p->step_search, 1);
    return ABL_OK;
}

/* The targets, emulated: every head's first blind distance must be its target. */
static abl_status run_targets_check(design_exec *x)
{
    const abl_design_job *j = &x->p->job;
    abl_schedule_spec spec;
    abl_status st = abl_design_slopes_schedule(x->r->slopes, x->r->n, &spec);
    abl_simulate_config sc;
    sim_config(&j->cfg, &spec, 0, j->cfg.context, &sc);
    abl_simulation sim;
    if (st == ABL_OK)
        st = abl_simulate_run(&sc, &sim);
    abl_schedule_spec_free(&spec);
    if (st != ABL_OK)
        return fail(x, "simulate", st);
    for (int h = 0; h < x->r->n; h++)
        if (sim.results[h].first_blind != (int64_t)j->targets[h])
            st = ABL_ERR_MISMATCH;
    abl_simulation_free(&sim);
    if (st != ABL_OK)
        return fail(x, "targets check", st);
    x->r->simulated = 1;
    return ABL_OK;
}

static abl_status run_verify(design_exec *x)
{
    const abl_design_job *j = &x->p->job;
    if (x->p->step_verify < 0)
        return ABL_OK;
    abl_status st;
    if (j->mode == ABL_DESIGN_TARGETS)
        st = run_targets_check(x);
    else if ((st = abl_design_verify(&j->cfg, x->r->slopes, x->r->n, ABL_DESIGN_SIMULATE_MAX, &x->r->simulated)) !=
             ABL_OK)
        st = fail(x, "verify", st);
    if (st == ABL_OK)
        step_done(x, x->p->step_verify, 1);
    return st;
}

/* The clamp for the schedule a user has: the held slopes judged, else the job's schedule (press). A kernel
 * whose clamp cannot be checked (ABL_ERR_UNSUPPORTED) leaves no clamp, except when the clamp is all asked. */
static abl_status run_clamp(design_exec *x)
{
    const abl_design_job *j = &x->p->job;
    abl_design_result *r = x->r;
    if (x->p->step_clamp < 0)
        return ABL_OK;
    float *press = NULL;
    const float *sched = r->slopes;
    int nsched = r->n;
    abl_status st = ABL_OK;
    if (j->mode != ABL_DESIGN_JUDGE) {
        if ((st = abl_design_held_slopes(&j->cfg, j->schedule, j->heads, &press, &nsched)) != ABL_OK)
            return fail(x, "press", st);
        sched = press;
    }
    abl_design_clamp_init(&r->clamp);
    r->have_clamp = 1;
    r->clamp_heads = nsched;
    st = abl_design_clamp_find(&j->cfg, sched, nsched, 4, &r->clamp);
    free(press);
    if (st == ABL_ERR_UNSUPPORTED && j->mode != ABL_DESIGN_CLAMP_ONLY) {
        abl_design_clamp_clear(&r->clamp); /* no clamp line: it could not be checked on this kernel */
        r->have_clamp = 0;
        r->clamp_skipped = 1;
        st = ABL_OK;
    }
    if (st != ABL_OK)
        return fail(x, "clamp", st);
    step_done(x, x->p->step_clamp, 1);
    return ABL_OK;
}

/* Per head, the smallest logit a key needs at d = N/2 and d = N - 1. */
static abl_status run_min_logits(design_exec *x)
{
    const abl_design_job *j = &x->p->job;
    abl_design_result *r = x->r;
    if (x->p->step_min_logit < 0)
        return ABL_OK;
    r->min_logits = calloc(2 * (size_t)r->n, sizeof *r->min_logits);
    if (r->min_logits == NULL)
        return fail(x, "min logit", ABL_ERR_NO_MEMORY);
    uint64_t ds[2] = {j->cfg.context / 2, j->cfg.context - 1};
    for (int h = 0; h < r->n; h++)
        for (int k = 0; k < 2; k++) {
            abl_status st = abl_design_min_logit(&j->cfg, r->slopes[h], ds[k], 2, &r->min_logits[2 * h + k]);
            if (st != ABL_OK)
                return fail(x, "min logit", st);
            step_done(x, x->p->step_min_logit, 1);
        }
    return ABL_OK;
}

abl_status abl_design_run_plan(abl_design_plan *p, const abl_progress *progress, abl_design_result *out)
{
    if (p == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->n = p->job.heads;
    design_exec x = {p, progress, 0, out};
    abl_status st = run_search(&x);
    if (st == ABL_OK)
        st = run_verify(&x);
    if (st == ABL_OK)
        st = run_min_logits(&x);
    if (st == ABL_OK)
        st = run_clamp(&x);
    return st;
}
