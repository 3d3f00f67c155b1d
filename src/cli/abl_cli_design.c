/* alibi-blind design: slopes, a clamp and logit budgets that keep every head of a layer seeing on a kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use design_opts[] = {
    /* a flag here: the least restrictive clamp is searched, not given */
    {ABL_OPT_CLAMP, ABL_ARG_FLAG, NULL,
     "only the least restrictive clamp (per kernel and dtype) and the paper's -87 judged"},
    ABL_USE(ABL_OPT_CONFIG),
    /* the design target, not a context to analyse */
    {ABL_OPT_CTX, 0, NULL,
     "context N: no zero weight anywhere in the N x N causal matrix [required]"},
    /* the model dtype of the pipeline */
    {ABL_OPT_DTYPE, 0, NULL,
     "the model dtype the pipeline's 'model' fields follow (default bf16)"},
    ABL_USE(ABL_OPT_FORCE),
    /* design has two more formats */
    {ABL_OPT_FORMAT, 0, NULL,
     "text (default), markdown, csv, json, latex, python (a list literal), slopes (slopes: spec)"},
    {ABL_OPT_HEADS, 0, NULL, "number of heads to design (1 to 65536)"}, /* the heads to design */
    ABL_USE(ABL_OPT_KEEP),
    ABL_USE(ABL_OPT_LOGIT_BUDGET),
    ABL_USE(ABL_OPT_MODEL),
    ABL_USE(ABL_OPT_OUTPUT),
    /* the kernel designed for */
    {ABL_OPT_PIPELINE, 0, NULL,
     "the kernel: preset[,field=value...] (default eager; see simulate --help)"},
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_QUIET),
    /* judged, not analysed */
    {ABL_OPT_SLOPES, 0, NULL,
     "judge an existing schedule instead: the largest N each head keeps every key"},
    ABL_USE(ABL_OPT_TARGETS),
    ABL_USE(ABL_OPT_THREADS),
};

#define DESIGN_SIMULATE_MAX 4096
#define DESIGN_SEES_CAP (UINT64_C(1) << 24)

typedef struct design_run {
    const abl_cli_ctx *ctx;     /* the abl_cli_main call (its streams) */
    abl_design_config cfg;
    const char *pipe_spec;
    const char *mode;           /* keep all, targets, slopes, clamp */
    float *slopes;              /* the answer (or the held slopes of --slopes) */
    int n;
    uint64_t *targets;
    uint64_t *sees;             /* --slopes: largest N per head */
    int simulated;
    abl_design_clamp clamp;
    int have_clamp;
    int clamp_skipped;          /* the kernel's softmax has no clamp check (sdpa-*) */
    int clamp_heads;            /* heads of the schedule the clamp is judged for */
    const char *schedule;       /* the schedule the clamp is judged for (display) */
    abl_schedule_spec sched;    /* the same as a value, parsed once (zeroed: press) */
    const abl_model *model;     /* --model, or NULL */
    abl_cli_bar bar;            /* progress, in milliseconds of the estimated work */
    double est_total, est_done; /* seconds: the whole estimate, and the part done */
    const char *config;         /* --config, or NULL */
    abl_model_spec spec;        /* what --config gave */
} design_run;

struct design_run;
static void design_progress(struct design_run *d, double seconds);
static void add_checks(const struct design_run *d, int heads, int min_logits, int clamp, abl_cost *acc);

static int parse_targets(const char *list, uint64_t **out, int *n)
{
    *n = 1;
    for (const char *p = list; *p; p++)
        *n += *p == ',';
    if (*n > ABL_MAX_HEADS)
        return abl_cli_usage_error("--targets: more than %d targets", ABL_MAX_HEADS);
    *out = calloc((size_t)*n, sizeof **out);
    char *copy = strdup(list);
    if (*out == NULL || copy == NULL) {
        free(copy);
        return abl_cli_internal_error("out of memory");
    }
    int rc = 0, i = 0;
    char *p = copy;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        if (abl_cli_count("targets", p, 1, ABL_SIMULATE_MAX_CONTEXT, &(*out)[i++])) {
            rc = ABL_EXIT_USAGE;
            break;
        }
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    free(copy);
    return rc;
}

static void cell_text(abl_report *r, const char *t)
{
    abl_report_cell(r, t, t, NULL);
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
static abl_status clamp_summary(abl_report *r, const design_run *d)
{
    const abl_design_clamp *c = &d->clamp;
    abl_status st;
    if (c->none_needed) {
        st = summary_owned(r, "clamp", "least restrictive clamp c",
                           abl_cli_printf("none needed (%s keeps every weight unclamped on %s; any clamp keeps them)",
                                       d->schedule, d->pipe_spec),
                           abl_cli_printf("null"));
    } else {
        st = summary_owned(r, "clamp", "least restrictive clamp c",
                           abl_cli_printf("%s (for %s on %s; the next clamp below, %s, leaves zero weights in %d of %d "
                                       "heads)", c->clamp_text, d->schedule, d->pipe_spec, c->next_text,
                                       c->next_failing, d->clamp_heads),
                           abl_cli_printf("%s", c->clamp_text));
        if (st == ABL_OK)
            st = summary_owned(r, "clamp_next", "next clamp below", abl_cli_printf("%s", c->next_text),
                               abl_cli_printf("%s", c->next_text));
        if (st == ABL_OK)
            st = summary_owned(r, "clamp_next_failing_heads", "heads the next clamp leaves blind",
                               abl_cli_printf("%d", c->next_failing), abl_cli_printf("%d", c->next_failing));
    }
    int none = strcmp(c->bound_text, "none") == 0;
    if (st == ABL_OK)
        st = summary_owned(r, "clamp_bound", "exact bound",
                           abl_cli_printf("%s (weight level: the exact softmax of the unrounded logits)", c->bound_text),
                           abl_cli_printf("%s", none ? "null" : c->bound_text));
    if (st == ABL_OK && !c->none_needed)
        st = summary_owned(r, "clamp_margin", "clamp margin", abl_cli_printf("%s", c->margin_text),
                           abl_cli_printf("%s", c->margin_text));
    if (st == ABL_OK)
        st = summary_owned(r, "paper_clamp_margin", "paper's clamp -87",
                           c->paper_failing > 0
                               ? abl_cli_printf("leaves zero weights in %d of %d heads (weight-level margin %s nats)",
                                             c->paper_failing, d->clamp_heads, c->paper_margin_text)
                               : abl_cli_printf("keeps every head (weight-level margin %s nats)", c->paper_margin_text),
                           abl_cli_printf("%s", c->paper_margin_text));
    if (st == ABL_OK)
        st = summary_owned(r, "paper_clamp_failing_heads", "heads -87 leaves blind", abl_cli_printf("%d", c->paper_failing),
                           abl_cli_printf("%d", c->paper_failing));
    return st;
}

static abl_status build_report(design_run *d, abl_report **out)
{
    char t[64]; /* bounded: ints, uint64_ts and %.9g; text goes through abl_cli_printf */
    char *v = NULL;
    abl_report *r = abl_report_new("ALiBi slope design", "heads");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    if (d->model != NULL) {
        abl_report_meta(r, "model", "model", d->model->name, NULL);
    }
    if (d->config != NULL) {
        char *q = abl_report_json_string(d->config);
        if (q == NULL) {
            abl_report_free(r);
            return ABL_ERR_NO_MEMORY;
        }
        abl_report_meta(r, "config", "config", d->config, q);
        free(q);
    }
    abl_report_meta(r, "pipeline", "pipeline", d->cfg.pipeline.preset, NULL);
    abl_report_meta(r, "dtype", "output dtype", d->cfg.pipeline.output_dtype.name, NULL);
    snprintf(t, sizeof t, "%llu", (unsigned long long)d->cfg.context);
    abl_report_meta(r, "context", "context N", t, t);
    abl_report_meta(r, "mode", "mode", d->mode, NULL);
    char *b = d->cfg.budget ? abl_decimal_string(d->cfg.budget) : NULL;
    abl_report_meta(r, "logit_budget", "logit budget B", b ? b : "0", b ? b : "0");
    free(b);
    if (d->slopes != NULL) {
        abl_report_column(r, "head", "head", ABL_ALIGN_RIGHT);
        abl_report_column(r, "slope", "slope (fp32)", ABL_ALIGN_RIGHT);
        if (d->targets != NULL)
            abl_report_column(r, "first_blind", "first blind", ABL_ALIGN_RIGHT);
        if (d->sees != NULL)
            abl_report_column(r, "sees", "sees N", ABL_ALIGN_RIGHT);
        abl_report_column(r, "min_logit_half", "min logit d=N/2", ABL_ALIGN_RIGHT);
        abl_report_column(r, "min_logit_last", "min logit d=N-1", ABL_ALIGN_RIGHT);
        for (int h = 0; h < d->n; h++) {
            abl_report_row(r);
            snprintf(t, sizeof t, "%d", h + 1);
            cell_text(r, t);
            char *exact = abl_design_slopes_spec(&d->slopes[h], 1);
            snprintf(t, sizeof t, "%.9g", (double)d->slopes[h]);
            abl_report_cell(r, t, exact ? exact + 7 : "null", NULL);
            free(exact);
            if (d->targets != NULL) {
                snprintf(t, sizeof t, "%llu", (unsigned long long)d->targets[h]);
                cell_text(r, t);
            }
            if (d->sees != NULL) {
                snprintf(t, sizeof t, "%s%llu", d->sees[h] >= DESIGN_SEES_CAP ? ">=" : "",
                         (unsigned long long)d->sees[h]);
                abl_report_cell(r, t, d->sees[h] >= DESIGN_SEES_CAP ? "null" : t, NULL);
            }
            uint64_t ds[2] = {d->cfg.context / 2, d->cfg.context - 1};
            for (int k = 0; k < 2; k++) {
                char *ml = NULL;
                abl_status st = abl_design_min_logit(&d->cfg, d->slopes[h], ds[k], 2, &ml);
                if (st == ABL_ERR_MISMATCH) {
                    abl_report_free(r);
                    return st;
                }
                if (st != ABL_OK) {
                    abl_report_free(r);
                    return st;
                }
                abl_report_cell(r, ml, strcmp(ml, "none") == 0 ? "null" : ml, NULL);
                free(ml);
            }
            abl_cost row;
            memset(&row, 0, sizeof row);
            add_checks(d, 1, 2, 0, &row);
            design_progress(d, row.seconds);
        }
        if (d->targets == NULL && d->sees == NULL) {
            v = abl_cli_printf("no zero weight in %llu x %llu on %s%s", (unsigned long long)d->cfg.context,
                               (unsigned long long)d->cfg.context, d->pipe_spec,
                               d->simulated ? " (predictor and simulate)" : " (predictor)");
            abl_report_summary(r, "verified", "verified", v ? v : "", "true");
            free(v);
        } else if (d->targets != NULL) {
            v = abl_cli_printf("first blind distance = target for every head on %s%s", d->pipe_spec,
                               d->simulated ? " (predictor and simulate)" : " (predictor)");
            abl_report_summary(r, "verified", "verified", v ? v : "", "true");
            free(v);
        }
    }
    if (d->have_clamp) {
        abl_status cs = clamp_summary(r, d);
        if (cs != ABL_OK) {
            abl_report_free(r);
            return cs;
        }
    }
    if (d->slopes != NULL)
        abl_report_note(r, "slopes are binary32 values; each is decided by the kernel's exact zero-logit predictor "
                           "(and the full emulation for N <= 4096).");
    if (d->sees != NULL)
        abl_report_note(r, "sees N: the largest context whose N x N matrix has no zero weight for that head.");
    if (d->slopes != NULL)
        abl_report_note(r, "min logit: the smallest logit a key at that distance needs (nats, relative to the "
                           "zero-logit keys) to keep a non-zero weight in the last row on the kernel: its score "
                           "through the kernel's roundings (the logit dtype, the softmax), found by bisection over "
                           "binary32 scores and checked one step beyond, rounded up. A value <= 0 at d=N-1 means a "
                           "zero-logit key there keeps its weight.");
    if (d->have_clamp)
        abl_report_note(r, "clamp: bias = max(-m d, c), decided on the kernel: c as the kernel stores it (eager: the "
                           "bias dtype; flash: fp32), every head's last row through its softmax, checked one step "
                           "beyond (the next representable clamp below); margins and the exact bound at the weight "
                           "level (eager: e^c/S of the heads the clamp reaches, else their key at N-1, against the "
                           "output dtype; flash: exp2's flush threshold).");
    if (d->clamp_skipped)
        abl_report_note(r, "no clamp line: the clamp is checked on eager and flash softmaxes only.");
    *out = r;
    return ABL_OK;
}

static int emit_special(design_run *d, const char *fmt, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL)
        return abl_cli_internal_error("out of memory");
    if (strcmp(fmt, "python") == 0) {
        fputc('[', mem);
        for (int h = 0; h < d->n; h++)
            fprintf(mem, "%s%.9g", h > 0 ? ", " : "", (double)d->slopes[h]);
        fputs("]\n", mem);
    } else {
        char *spec = abl_design_slopes_spec(d->slopes, d->n);
        fprintf(mem, "%s\n", spec ? spec : "");
        free(spec);
    }
    fclose(mem);
    int rc = 0;
    if (path == NULL) {
        if (fwrite(text, 1, len, d->ctx->out) != len || fflush(d->ctx->out) != 0)
            rc = abl_cli_internal_error("cannot write to standard output");
    } else {
        abl_cli_outfile o;
        rc = abl_cli_outfile_open(d->ctx, &o, "output", path);
        if (rc == 0) {
            fwrite(text, 1, len, o.f);
            rc = abl_cli_outfile_commit(&o);
        }
    }
    free(text);
    return rc;
}

static int design_status(abl_status st, const char *what)
{
    if (st == ABL_ERR_NO_MEMORY)
        return abl_cli_internal_error("%s", abl_status_message(st));
    return abl_cli_usage_error("design: %s: %s", what, abl_status_message(st));
}

/* The design's pipeline and threads for `heads` heads of `slopes` (NULL: press) at context n. */
static void design_sim_config(const design_run *d, const abl_schedule_spec *slopes, int heads, uint64_t n,
                              abl_simulate_config *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->pipeline = d->cfg.pipeline;
    sc->slopes = slopes;
    sc->heads = heads;
    sc->context = n;
    sc->threads = d->cfg.threads;
}

/* acc += `times` one-head predictions at context n on the design's pipeline (nominal). */
static void add_predictions(const design_run *d, uint64_t n, double times, abl_cost *acc)
{
    abl_simulate_config sc;
    const float unit = 1.0f; /* one slope as the searches try them: slopes:1 */
    abl_schedule_spec one_slope;
    if (abl_design_slopes_schedule(&unit, 1, &one_slope) != ABL_OK)
        return;
    design_sim_config(d, &one_slope, 1, n, &sc);
    abl_cost one;
    if (times > 0 && abl_predict_estimate(&sc, &one) == ABL_OK) {
        one.units *= times;
        one.seconds *= times;
        abl_cost_add(acc, &one);
    }
    abl_schedule_spec_free(&one_slope);
}

/* acc += the check after a search: the predictor on `heads` heads at N and, up to DESIGN_SIMULATE_MAX,
 * the emulation (predict: 0 when only the emulation runs). */
static void add_verification(const design_run *d, int heads, int predict, abl_cost *acc)
{
    abl_simulate_config sc;
    design_sim_config(d, NULL, heads, d->cfg.context, &sc);
    abl_cost c;
    if (predict && abl_predict_estimate(&sc, &c) == ABL_OK)
        abl_cost_add(acc, &c);
    if (d->cfg.context <= DESIGN_SIMULATE_MAX && abl_simulate_estimate(&sc, &c) == ABL_OK)
        abl_cost_add(acc, &c);
}

/* acc += --slopes: per head, predictions at N = 2, 4, ... up to the first N with a zero weight, then a
 * bisection below it. That N is taken from the closed form (a weight is surely zero once
 * exp(-m (N - 1)) is below the output dtype's zero point 2^k), a nominal guess, not a bound. */
static void add_largest_contexts(const design_run *d, abl_cost *acc)
{
    long k = 0;
    if (abl_threshold_log2_multiple(&d->cfg.pipeline.output_dtype, ABL_TAU_RN_ZERO, &k) != ABL_OK || k >= 0)
        k = -150;
    for (int h = 0; h < d->n; h++) {
        double dstar = (double)-k * 0.6931471805599453 / (double)d->slopes[h];
        uint64_t bad = 2;
        int steps = 1;
        while (bad < DESIGN_SEES_CAP && (double)bad < dstar + 2) {
            bad *= 2;
            steps++;
        }
        /* the doubling costs at most twice its last step; the bisection `steps` more at most */
        add_predictions(d, bad, 2.0 + steps, acc);
    }
}

/* acc += the kernel-level checks behind the printed claims: `min_logits` min-logit searches per head and,
 * when clamp is set, the clamp search (abl_design_checks_estimate). */
static void add_checks(const design_run *d, int heads, int min_logits, int clamp, abl_cost *acc)
{
    abl_cost c;
    if (abl_design_checks_estimate(&d->cfg, heads, min_logits, clamp, &c) == ABL_OK)
        abl_cost_add(acc, &c);
}


/* The bar moves by the estimated seconds of each part as it is done. */
static void design_progress(struct design_run *d, double seconds)
{
    d->est_done += seconds;
    if (d->est_total > 0)
        abl_cli_bar_update(&d->bar, (uint64_t)(1000 * fmin(d->est_done, d->est_total)),
                           (uint64_t)(1000 * d->est_total));
}

/* The search's nominal work, refused over the budget unless --force; the bar's total. */
static int design_budget(const abl_cli_cmd *cmd, const char **v, design_run *d, const abl_cost *c)
{
    d->est_total = c->seconds;
    return abl_cli_budget_of(cmd->name, v, c);
}

/* "As steep as the kernel allows", checked one step beyond: the next binary32 slope above the steepest
 * head must not be sighted (inside the searched range, up to 64). ABL_ERR_MISMATCH when it is. */
static abl_status check_steepest(const design_run *d)
{
    float steeper = nextafterf(d->slopes[0], INFINITY);
    if (!(d->slopes[0] < 64.0f))
        return ABL_OK;
    int ok = 0;
    abl_status st = abl_design_sighted(&d->cfg, steeper, &ok);
    return st != ABL_OK ? st : ok ? ABL_ERR_MISMATCH : ABL_OK;
}

static int design_with(const abl_cli_cmd *cmd, const char **v, design_run *d, mpq_t budget)
{
    const char *s;
    const char *fmt = abl_cli_arg(cmd, v, ABL_OPT_FORMAT);
    abl_output out = ABL_OUT_TEXT;
    abl_cli_bar_init(d->ctx, &d->bar, "design", cmd, v);
    int special = fmt != NULL && (strcmp(fmt, "python") == 0 || strcmp(fmt, "slopes") == 0);
    if (fmt != NULL && !special && abl_cli_output(fmt, &out))
        return ABL_EXIT_USAGE;
    /* --model first; --heads, --dtype, --pipeline, --ctx override it. */
    abl_cli_model_choice choice;
    int crc = abl_cli_model_choose(v, &choice);
    if (crc != 0)
        return crc;
    const abl_model *cat = choice.model;
    int have_config = choice.config != NULL;
    d->spec = choice.spec;
    d->config = choice.config;
    abl_format model;
    const char *dt = abl_cli_arg(cmd, v, ABL_OPT_DTYPE);
    if (dt == NULL && have_config)
        model = d->spec.dtype;
    else if (dt != NULL ? abl_cli_dtype_one("dtype", dt, "design fits one pipeline in one model dtype (run it once "
                                            "per dtype)", &model)
                        : abl_cli_dtype("dtype", cat != NULL && cat->dtype != NULL ? cat->dtype : "bf16", &model))
        return ABL_EXIT_USAGE;
    d->pipe_spec = abl_cli_arg(cmd, v, ABL_OPT_PIPELINE);
    if (d->pipe_spec == NULL && cat != NULL && cat->family != NULL && cat->family->npaths > 0)
        d->pipe_spec = cat->family->paths[0].pipeline;
    if (d->pipe_spec == NULL && have_config)
        d->pipe_spec = d->spec.pipeline;
    d->model = cat;
    if (d->pipe_spec != NULL && d->pipe_spec[0] == '\0')
        return abl_cli_usage_error("--pipeline: empty (presets: %s)", abl_pipeline_preset_names());
    int prc = abl_cli_pipeline(d->pipe_spec, &model, 1, &d->cfg.pipeline);
    if (prc != 0)
        return prc;
    if (d->cfg.pipeline.softmax == ABL_SOFTMAX_EAGER &&
        (d->cfg.pipeline.sum != ABL_SUM_EXACT || d->cfg.pipeline.exp != ABL_EXP_CORRECT))
        return abl_cli_usage_error("--pipeline: design decides with the exact predictor, which models sum=exact "
                                   "and exp=correct (got sum=%s, exp=%s)", abl_sum_order_name(d->cfg.pipeline.sum),
                                   abl_exp_model_name(d->cfg.pipeline.exp));
    if (d->pipe_spec == NULL)
        d->pipe_spec = "eager";
    uint64_t given_ctx = cat != NULL ? cat->context : have_config ? d->spec.context : 0;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) == NULL && given_ctx == 0)
        return abl_cli_usage_error("design: --ctx N is required");
    if (s == NULL)
        d->cfg.context = given_ctx;
    else if (abl_cli_count("ctx", s, 1, ABL_SIMULATE_MAX_CONTEXT, &d->cfg.context))
        return ABL_EXIT_USAGE;
    long heads = cat != NULL ? cat->heads : have_config ? d->spec.heads : 0, threads = 0;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) && abl_cli_int("heads", s, 1, ABL_MAX_HEADS, &heads))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_THREADS)) && abl_cli_int("threads", s, 1, 256, &threads))
        return ABL_EXIT_USAGE;
    d->cfg.threads = (int)threads;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_LOGIT_BUDGET)) != NULL) {
        if (abl_cli_decimal("logit-budget", s, 0, budget))
            return ABL_EXIT_USAGE;
        if (mpq_sgn(budget) > 0)
            return abl_cli_usage_error("--logit-budget: %s must be 0 or negative (a logit below the others)", s);
        d->cfg.budget = budget;
    }
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_KEEP)) != NULL && strcmp(s, "all") != 0)
        return abl_cli_usage_error("--keep: unknown value '%s' (known: all)", s);
    const char *slopes = abl_cli_arg(cmd, v, ABL_OPT_SLOPES), *targets = abl_cli_arg(cmd, v, ABL_OPT_TARGETS);
    int clamp_only = abl_cli_arg(cmd, v, ABL_OPT_CLAMP) != NULL;
    if ((slopes != NULL) + (targets != NULL) + (abl_cli_arg(cmd, v, ABL_OPT_KEEP) != NULL) > 1)
        return abl_cli_usage_error("design: --keep, --slopes and --targets exclude each other");
    if (special && (clamp_only || slopes != NULL))
        return abl_cli_usage_error("--format %s: exports designed slopes (drop --clamp/--slopes)", fmt);
    abl_status st;
    if (targets != NULL) {
        int nt;
        if (parse_targets(targets, &d->targets, &nt))
            return ABL_EXIT_USAGE;
        if (heads != 0 && heads != nt)
            return abl_cli_usage_error("--targets: %d targets for --heads %ld", nt, heads);
        for (int i = 0; i < nt; i++)
            if (d->targets[i] >= d->cfg.context)
                return abl_cli_usage_error("--targets: target %llu is not inside the context (below --ctx %llu)",
                                           (unsigned long long)d->targets[i], (unsigned long long)d->cfg.context);
        d->mode = "targets";
        d->n = nt;
        d->slopes = calloc((size_t)nt, sizeof *d->slopes);
        if (d->slopes == NULL)
            return abl_cli_internal_error("out of memory");
        abl_cost cost;
        memset(&cost, 0, sizeof cost);
        add_predictions(d, d->cfg.context, (double)nt * ABL_DESIGN_SEARCH_PREDICTIONS, &cost);
        double search = cost.seconds;
        add_verification(d, nt, 0, &cost);
        add_checks(d, nt, 2, 0, &cost);
        if (design_budget(cmd, v, d, &cost) != 0)
            return ABL_EXIT_USAGE;
        int failed = 0;
        st = abl_design_targets(&d->cfg, d->targets, nt, d->slopes, &failed);
        design_progress(d, search);
        if (st == ABL_ERR_DEGENERATE)
            return abl_cli_usage_error("--targets: no binary32 slope has its first blind distance at exactly %llu "
                                       "on %s at N = %llu", (unsigned long long)d->targets[failed], d->pipe_spec,
                                       (unsigned long long)d->cfg.context);
        if (st != ABL_OK)
            return design_status(st, "targets");
    } else if (slopes != NULL) {
        d->mode = "slopes";
        d->schedule = slopes;
        if (abl_cli_slopes(slopes, &d->sched))
            return ABL_EXIT_USAGE;
        st = abl_design_held_slopes(&d->cfg, &d->sched, (int)heads, &d->slopes, &d->n);
        if (st != ABL_OK)
            return abl_cli_usage_error("--slopes: '%s': %s", slopes, abl_status_message(st));
        d->sees = calloc((size_t)d->n, sizeof *d->sees);
        if (d->sees == NULL)
            return abl_cli_internal_error("out of memory");
        abl_cost cost;
        memset(&cost, 0, sizeof cost);
        add_largest_contexts(d, &cost);
        double search = cost.seconds;
        add_checks(d, d->n, 2, 1, &cost);
        if (design_budget(cmd, v, d, &cost) != 0)
            return ABL_EXIT_USAGE;
        for (int h = 0; h < d->n; h++) {
            if ((st = abl_design_largest_context(&d->cfg, d->slopes[h], DESIGN_SEES_CAP, &d->sees[h])) != ABL_OK)
                return design_status(st, "slopes");
            design_progress(d, search / d->n);
        }
    } else {
        if (heads == 0)
            return abl_cli_usage_error("design: --heads H is required (or --targets/--slopes)");
        d->mode = clamp_only ? "clamp" : "keep all";
        d->n = (int)heads;
        if (clamp_only) {
            abl_cost cost;
            memset(&cost, 0, sizeof cost);
            add_checks(d, (int)heads, 0, 1, &cost);
            if (design_budget(cmd, v, d, &cost) != 0)
                return ABL_EXIT_USAGE;
        } else {
            abl_cost cost;
            memset(&cost, 0, sizeof cost);
            /* the search, and the next slope up checked not to be sighted */
            add_predictions(d, d->cfg.context, ABL_DESIGN_SEARCH_PREDICTIONS + 1, &cost);
            add_verification(d, (int)heads, 1, &cost);
            add_checks(d, (int)heads, 2, 1, &cost);
            if (design_budget(cmd, v, d, &cost) != 0)
                return ABL_EXIT_USAGE;
            d->slopes = calloc((size_t)heads, sizeof *d->slopes);
            if (d->slopes == NULL)
                return abl_cli_internal_error("out of memory");
            st = abl_design_keep_all(&d->cfg, (int)heads, d->slopes);
            if (st == ABL_ERR_DEGENERATE) {
                char *b = d->cfg.budget ? abl_decimal_string(d->cfg.budget) : NULL;
                int rc = abl_cli_usage_error("design: no slope keeps %s at distance %llu on %s (logit budget %s is "
                                             "below what the normaliser allows)", b ? "a key" : "every key",
                                             (unsigned long long)(d->cfg.context - 1), d->pipe_spec, b ? b : "0");
                free(b);
                return rc;
            }
            if (st != ABL_OK)
                return design_status(st, "keep all");
            if ((st = check_steepest(d)) != ABL_OK)
                return st == ABL_ERR_MISMATCH
                           ? abl_cli_internal_error("design: the steepest slope failed its check one step beyond "
                                                    "(the next binary32 slope up is sighted too) on %s", d->pipe_spec)
                           : design_status(st, "keep all");
            abl_cost search;
            memset(&search, 0, sizeof search);
            add_predictions(d, d->cfg.context, ABL_DESIGN_SEARCH_PREDICTIONS + 1, &search);
            design_progress(d, search.seconds);
        }
    }
    /* Verify before printing. */
    if (d->slopes != NULL && d->targets == NULL && d->sees == NULL) {
        st = abl_design_verify(&d->cfg, d->slopes, d->n, DESIGN_SIMULATE_MAX, &d->simulated);
        if (st != ABL_OK)
            return abl_cli_internal_error("design: the designed slopes failed verification on %s: %s", d->pipe_spec,
                                          abl_status_message(st));
        abl_cost check;
        memset(&check, 0, sizeof check);
        add_verification(d, d->n, 1, &check);
        design_progress(d, check.seconds);
    }
    if (d->targets != NULL && d->cfg.context <= DESIGN_SIMULATE_MAX) {
        abl_schedule_spec spec;
        st = abl_design_slopes_schedule(d->slopes, d->n, &spec);
        abl_simulate_config sc;
        design_sim_config(d, &spec, 0, d->cfg.context, &sc);
        abl_simulation sim;
        if (st == ABL_OK)
            st = abl_simulate_run(&sc, &sim);
        abl_schedule_spec_free(&spec);
        if (st != ABL_OK)
            return design_status(st, "simulate");
        for (int h = 0; h < d->n; h++)
            if (sim.results[h].first_blind != (int64_t)d->targets[h])
                st = ABL_ERR_MISMATCH;
        abl_simulation_free(&sim);
        if (st != ABL_OK)
            return abl_cli_internal_error("design: simulate disagrees with the predictor on a target");
        d->simulated = 1;
    }
    if (special)
        return emit_special(d, fmt, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    /* The clamp, for the schedule a user has (press unless --slopes). */
    if (d->targets == NULL) {
        float *sched = d->slopes;
        int nsched = d->n;
        float *press = NULL;
        if (d->sees == NULL) {
            d->schedule = d->model != NULL && d->model->slopes != NULL ? d->model->slopes
                          : d->config != NULL                          ? d->spec.slopes
                                                                       : "press";
            /* the model's schedule as a value: the catalogue entry's text resolved here, once */
            st = ABL_OK;
            if (d->model != NULL && d->model->slopes != NULL)
                st = abl_schedule_spec_parse(d->model->slopes, &d->sched);
            else if (d->config != NULL)
                st = abl_model_spec_schedule(&d->spec, &d->sched);
            if (st != ABL_OK)
                return design_status(st, "press");
            const abl_schedule_spec *held = d->sched.text != NULL ? &d->sched : NULL;
            if ((st = abl_design_held_slopes(&d->cfg, held, d->n, &press, &nsched)) != ABL_OK)
                return design_status(st, "press");
            sched = press;
        }
        abl_design_clamp_init(&d->clamp);
        d->have_clamp = 1;
        d->clamp_heads = nsched;
        st = abl_design_clamp_find(&d->cfg, sched, nsched, 4, &d->clamp);
        free(press);
        abl_cost clamp;
        memset(&clamp, 0, sizeof clamp);
        add_checks(d, nsched, 0, 1, &clamp);
        design_progress(d, clamp.seconds);
        if (st == ABL_ERR_DEGENERATE)
            return abl_cli_usage_error("design: no clamp keeps every weight at N = %llu (even uniform attention "
                                       "underflows)", (unsigned long long)d->cfg.context);
        if (st == ABL_ERR_UNSUPPORTED && clamp_only)
            return abl_cli_usage_error("--clamp: not decided on %s (the clamp is checked on eager and flash "
                                       "softmaxes only)", d->pipe_spec);
        if (st == ABL_ERR_UNSUPPORTED) {
            abl_design_clamp_clear(&d->clamp); /* no clamp line: it could not be checked on this kernel */
            d->have_clamp = 0;
            d->clamp_skipped = 1;
        } else if (st == ABL_ERR_MISMATCH) {
            return abl_cli_internal_error("design: the least restrictive clamp failed its check one step beyond "
                                          "on %s", d->pipe_spec);
        } else if (st != ABL_OK) {
            return design_status(st, "clamp");
        }
    }
    if (clamp_only) {
        free(d->slopes);
        d->slopes = NULL;
    }
    abl_report *r = NULL;
    st = build_report(d, &r);
    abl_cli_bar_finish(&d->bar);
    if (st == ABL_ERR_MISMATCH)
        return abl_cli_internal_error("design: a min logit failed its check one step beyond on %s", d->pipe_spec);
    if (st != ABL_OK)
        return design_status(st, "report");
    int rc = abl_cli_emit(d->ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report_free(r);
    return rc;
}

static int run_design(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("design: unexpected argument '%s'", pos[0]);
    design_run d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    mpq_t budget;
    mpq_init(budget);
    int rc = design_with(cmd, v, &d, budget);
    abl_cli_bar_finish(&d.bar);
    if (d.have_clamp)
        abl_design_clamp_clear(&d.clamp);
    free(d.slopes);
    free(d.targets);
    abl_schedule_spec_free(&d.sched);
    free(d.sees);
    mpq_clear(budget);
    return rc;
}

const abl_cli_cmd abl_cli_design_cmd = {
    "design",
    "slopes, a clamp and logit budgets that keep every head seeing on a kernel",
    "--heads H --ctx N [--pipeline SPEC] [options]",
    "Designs binary32 ALiBi slopes for a kernel so that no head has a zero attention weight anywhere in\n"
    "the N x N causal matrix: the steepest head as steep as the kernel allows, the others spread like\n"
    "the Press schedule (2^(-8/H) apart). Every answer is decided by the kernel's exact zero-logit\n"
    "predictor and checked again (with the full emulation for N <= 4096) before it is printed. Also\n"
    "prints the least restrictive clamp for the Press schedule (the paper's -87 judged against it) and\n"
    "the smallest logit a key needs to stay seen. --slopes judges an existing schedule (the largest N\n"
    "each head keeps every key), --targets places first blind distances exactly.\n\n"
    "Example: alibi-blind design --heads 40 --ctx 32768 --dtype bf16 --pipeline eager",
    design_opts,
    sizeof design_opts / sizeof design_opts[0],
    run_design,
};
