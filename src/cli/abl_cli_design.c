/* alibi-blind design: slopes, a clamp and logit budgets that keep every head of a layer seeing on a kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use design_opts[] = {
    /* the layer's direction: an encoder's N x N matrix */
    {ABL_OPT_ATTENTION, 0, NULL,
     "causal or bidirectional (encoders: no zero weight in any row of the N x N matrix); default: the model's"},
    /* a flag here: the least restrictive clamp is searched, not given */
    {ABL_OPT_CLAMP, ABL_ARG_FLAG, NULL,
     "only the least restrictive clamp (per kernel and dtype) and the paper's -87 judged"},
    ABL_USE(ABL_OPT_CONFIG),
    /* the design target, not a context to analyse */
    {ABL_OPT_CTX, 0, NULL,
     "context N: no zero weight anywhere in the N x N causal (or bidirectional) matrix [required]"},
    /* the model dtype of the pipeline */
    {ABL_OPT_DTYPE, 0, NULL,
     "the model dtype the pipeline's 'model' fields follow (default bf16)"},
    ABL_USE(ABL_OPT_FORCE),
    /* design has two more formats */
    {ABL_OPT_FORMAT, 0, NULL,
     "text (default), markdown, csv, json, latex, python (a list literal), slopes (slopes: spec)"},
    {ABL_OPT_HEADS, 0, NULL, "number of heads to design (1 to 65536)"}, /* the heads to design */
    /* design's two criteria */
    {ABL_OPT_KEEP, 0, NULL,
     "all (default): every head keeps every key; gradient: every key keeps a non-zero rounded gradient dS"},
    ABL_USE(ABL_OPT_LOGIT_BUDGET),
    ABL_USE(ABL_OPT_LOSS_SCALE),
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
    ABL_USE(ABL_OPT_UPSTREAM),
};

#define DESIGN_SIMULATE_MAX ABL_DESIGN_SIMULATE_MAX
#define DESIGN_SEES_CAP ABL_DESIGN_SEES_CAP

/* What design's options give (the job the library plans and runs) and what the report shows. */
typedef struct design_run {
    const abl_cli_ctx *ctx;     /* the abl_cli_main call (its streams) */
    abl_design_job job;         /* the configuration, planned by the library */
    abl_design_result res;      /* what the run gave */
    abl_layer layer;            /* the layer designed for: its format, kernel, heads and context (a value) */
    const char *pipe_spec;      /* the kernel's name as given (display) */
    uint64_t *targets;          /* --targets */
    float *held;                /* --slopes: the schedule's slopes as the kernel holds them */
    const char *schedule;       /* the schedule the clamp is judged for (display) */
    abl_schedule_spec sched;    /* the same as a value, parsed once (zeroed: press) */
    const abl_model *model;     /* --model, or NULL */
    abl_cli_bar bar;            /* progress, in milliseconds of the plan's nominal seconds */
    const char *config;         /* the config.json read (abl_cli_model_choice's config), or NULL */
    char *config_owned;         /* the path a folder or the Hugging Face cache made: run_design frees it */
    abl_model_spec spec;        /* what --config gave */
    long heads;                 /* --heads, or the model's (0: none) */
    int special;                /* --format python or slopes: the slopes only */
    int clamp_only;
} design_run;

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

static int emit_special(const design_run *d, const char *fmt, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL)
        return abl_cli_internal_error("out of memory");
    if (strcmp(fmt, "python") == 0) {
        fputc('[', mem);
        for (int h = 0; h < d->res.n; h++)
            fprintf(mem, "%s%.9g", h > 0 ? ", " : "", (double)d->res.slopes[h]);
        fputs("]\n", mem);
    } else {
        char *spec = abl_design_slopes_spec(d->res.slopes, d->res.n);
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

/* The kernel: --dtype, --pipeline (or the model's), checked to be one the exact predictor models. */
static int design_kernel(const abl_cli_cmd *cmd, const char **v, design_run *d)
{
    const abl_model *cat = d->model;
    int have_config = d->config != NULL;
    abl_format model;
    const char *dt = abl_cli_arg(cmd, v, ABL_OPT_DTYPE);
    if (dt == NULL && have_config)
        model = d->spec.dtype;
    else if (dt != NULL ? abl_cli_dtype_one("dtype", dt, "design fits one pipeline in one model dtype (run it once "
                                            "per dtype)", &model)
                        : abl_cli_dtype("dtype", cat != NULL && cat->dtype != NULL ? cat->dtype : "bf16", &model))
        return ABL_EXIT_USAGE;
    abl_layer *l = &d->layer;
    l->format = model;
    int prc = abl_cli_layer_kernel(abl_cli_arg(cmd, v, ABL_OPT_PIPELINE), cat, have_config ? &d->spec : NULL, l);
    abl_pipeline *pl = &d->job.cfg.pipeline;
    if (prc != 0 || (prc = abl_cli_pipeline_value(l, pl)) != 0)
        return prc;
    d->pipe_spec = l->has_pipeline ? l->pipeline.text : "eager";
    if ((prc = abl_cli_attention_kernel(d->job.cfg.attention, pl, 1)) != 0)
        return prc;
    if (pl->softmax == ABL_SOFTMAX_EAGER && (pl->sum != ABL_SUM_EXACT || pl->exp != ABL_EXP_CORRECT))
        return abl_cli_usage_error("--pipeline: design decides with the exact predictor, which models sum=exact "
                                   "and exp=correct (got sum=%s, exp=%s)", abl_sum_order_name(pl->sum),
                                   abl_exp_model_name(pl->exp));
    return 0;
}

/* --ctx, --heads, --threads and --logit-budget (the model's context and heads unless given). */
static int design_sizes(const abl_cli_cmd *cmd, const char **v, design_run *d, mpq_t budget)
{
    const char *s;
    const abl_model *cat = d->model;
    int have_config = d->config != NULL;
    uint64_t given_ctx = cat != NULL ? cat->context : have_config ? d->spec.context : 0;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) == NULL && given_ctx == 0)
        return abl_cli_usage_error("design: --ctx N is required");
    if (s == NULL)
        d->job.cfg.context = given_ctx;
    else if (abl_cli_context("ctx", s, 1, ABL_SIMULATE_MAX_CONTEXT, &d->job.cfg.context))
        return ABL_EXIT_USAGE;
    d->layer.context = d->job.cfg.context;
    long threads = 0;
    d->heads = cat != NULL ? cat->heads : have_config ? d->spec.heads : 0;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) && abl_cli_int("heads", s, 1, ABL_MAX_HEADS, &d->heads))
        return ABL_EXIT_USAGE;
    d->layer.heads = (int)d->heads;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_THREADS)) && abl_cli_int("threads", s, 1, 256, &threads))
        return ABL_EXIT_USAGE;
    d->job.cfg.threads = (int)threads;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_LOGIT_BUDGET)) != NULL) {
        if (abl_cli_decimal("logit-budget", s, 0, budget))
            return ABL_EXIT_USAGE;
        if (mpq_sgn(budget) > 0)
            return abl_cli_usage_error("--logit-budget: %s must be 0 or negative (a logit below the others)", s);
        d->job.cfg.budget = budget;
    }
    return 0;
}

/* --targets: each inside the context, as many as --heads when both are given. */
static int design_targets(const char *targets, design_run *d)
{
    int nt;
    if (parse_targets(targets, &d->targets, &nt))
        return ABL_EXIT_USAGE;
    if (d->heads != 0 && d->heads != nt)
        return abl_cli_usage_error("--targets: %d targets for --heads %ld", nt, d->heads);
    for (int i = 0; i < nt; i++)
        if (d->targets[i] >= d->job.cfg.context)
            return abl_cli_usage_error("--targets: target %llu is not inside the context (below --ctx %llu)",
                                       (unsigned long long)d->targets[i], (unsigned long long)d->job.cfg.context);
    d->job.mode = ABL_DESIGN_TARGETS;
    d->job.targets = d->targets;
    d->job.heads = nt;
    return 0;
}

/* --slopes: the schedule judged, as the kernel holds it. */
static int design_judge(const char *slopes, design_run *d)
{
    d->schedule = slopes;
    if (abl_cli_slopes(slopes, &d->sched))
        return ABL_EXIT_USAGE;
    abl_status st = abl_design_held_slopes(&d->job.cfg, &d->sched, (int)d->heads, &d->held, &d->job.heads);
    if (st != ABL_OK)
        return abl_cli_usage_error("--slopes: '%s': %s", slopes, abl_status_message(st));
    d->job.mode = ABL_DESIGN_JUDGE;
    d->job.held = d->held;
    return 0;
}

/* Keep all (or --clamp only): the clamp is judged for the model's schedule, resolved here once
 * (the catalogue entry's text, the config's schedule), else press. */
static int design_keep_all(design_run *d)
{
    if (d->heads == 0)
        return abl_cli_usage_error("design: --heads H is required (or --targets/--slopes)");
    d->job.mode = d->clamp_only ? ABL_DESIGN_CLAMP_ONLY : ABL_DESIGN_KEEP_ALL;
    d->job.heads = (int)d->heads;
    abl_status st = ABL_OK;
    if (d->model != NULL)
        st = abl_model_schedule(d->model, &d->sched);
    else if (d->config != NULL)
        st = abl_model_spec_schedule_keys(&d->spec, d->job.cfg.context, &d->sched); /* alibi_scaling.train_seq_len */
    if (st != ABL_OK)
        return design_status(st, "press");
    d->schedule = d->sched.text != NULL ? d->sched.text : "press";
    d->job.schedule = d->sched.text != NULL ? &d->sched : NULL;
    return 0;
}

/* --keep gradient (spec §15): the bound on |dP - D| and the loss scale; the backward kinds with a zero-logit
 * predictor (docs/pipelines.md §9: the eager softmax backward, and the memory-efficient SDPA and
 * FlashAttention-2 ones, modelled from source), no budget or clamp (weight claims). */
static int design_gradient(const abl_cli_cmd *cmd, const char **v, design_run *d)
{
    if (abl_cli_gradient_upstream(cmd, v, &d->job.cfg.log2_upstream))
        return ABL_EXIT_USAGE;
    const char *why = abl_design_gradient_refusal(&d->job.cfg.pipeline);
    if (why != NULL)
        return abl_cli_usage_error("--keep gradient: softmax=%s: %s",
                                   abl_softmax_kind_name(d->job.cfg.pipeline.softmax), why);
    if (d->job.cfg.budget != NULL)
        return abl_cli_usage_error("--logit-budget: a weight-level claim, not with --keep gradient");
    if (abl_cli_arg(cmd, v, ABL_OPT_CLAMP) != NULL)
        return abl_cli_usage_error("--clamp: a weight-level claim, not with --keep gradient");
    d->job.cfg.gradient = 1;
    return 0;
}

/* The mode's options (--keep, --slopes, --targets, --clamp), and the job they make. */
static int design_mode(const abl_cli_cmd *cmd, const char **v, design_run *d, const char *fmt)
{
    const char *s;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_KEEP)) != NULL && strcmp(s, "all") != 0 && strcmp(s, "gradient") != 0)
        return abl_cli_usage_error("--keep: unknown value '%s' (known: all, gradient)", s);
    int rc = s != NULL && strcmp(s, "gradient") == 0 ? design_gradient(cmd, v, d)
                                                      : abl_cli_gradient_refuse_without(cmd, v, "--keep gradient");
    if (rc != 0)
        return rc;
    const char *slopes = abl_cli_arg(cmd, v, ABL_OPT_SLOPES), *targets = abl_cli_arg(cmd, v, ABL_OPT_TARGETS);
    d->clamp_only = abl_cli_arg(cmd, v, ABL_OPT_CLAMP) != NULL;
    if ((slopes != NULL) + (targets != NULL) + (abl_cli_arg(cmd, v, ABL_OPT_KEEP) != NULL) > 1)
        return abl_cli_usage_error("design: --keep, --slopes and --targets exclude each other");
    if (d->special && (d->clamp_only || slopes != NULL))
        return abl_cli_usage_error("--format %s: exports designed slopes (drop --clamp/--slopes)", fmt);
    d->job.checks = !d->special;
    if (targets != NULL)
        return design_targets(targets, d);
    if (slopes != NULL)
        return design_judge(slopes, d);
    return design_keep_all(d);
}

/* A failed check: the clamp (and the schedule it is judged for), the min logits, the targets' emulation. */
static int design_check_failure(const design_run *d, const char *stage, abl_status st)
{
    if (strcmp(stage, "clamp") == 0 && st == ABL_ERR_DEGENERATE)
        return abl_cli_usage_error("design: no clamp keeps every weight at N = %llu (even uniform attention "
                                   "underflows)", (unsigned long long)d->job.cfg.context);
    if (strcmp(stage, "clamp") == 0 && st == ABL_ERR_UNSUPPORTED)
        return abl_cli_usage_error("--clamp: not decided on %s (the clamp is checked on eager and flash "
                                   "softmaxes only)", d->pipe_spec);
    if (strcmp(stage, "clamp") == 0 && st == ABL_ERR_MISMATCH)
        return abl_cli_internal_error("design: the least restrictive clamp failed its check one step beyond "
                                      "on %s", d->pipe_spec);
    if (strcmp(stage, "min logit") == 0 && st == ABL_ERR_MISMATCH)
        return abl_cli_internal_error("design: a min logit failed its check one step beyond on %s", d->pipe_spec);
    if (strcmp(stage, "min logit") == 0)
        return design_status(st, "report");
    return design_status(st, stage);
}

/* A failed step of the run, told the way the user can act on it. */
static int design_failure(const design_run *d, abl_status st)
{
    const char *stage = d->res.stage != NULL ? d->res.stage : "design";
    unsigned long long n = (unsigned long long)d->job.cfg.context;
    if (st == ABL_ERR_NO_MEMORY)
        return design_status(st, stage);
    if (d->job.cfg.gradient && st == ABL_ERR_UNSUPPORTED)
        return abl_cli_usage_error("--keep gradient: the zero-logit gradient predictor does not answer for "
                                   "|dP - D| x loss scale < 1 on a native backward (%s is %s; got 2^%ld, spec §15)",
                                   d->pipe_spec,
                                   abl_backward_kind_name(abl_backward_kind_of(&d->job.cfg.pipeline)),
                                   d->job.cfg.log2_upstream);
    if (strcmp(stage, "design search") == 0 && st == ABL_ERR_DEGENERATE) {
        char *b = d->job.cfg.budget ? abl_decimal_string(d->job.cfg.budget) : NULL;
        int rc = abl_cli_usage_error("design: no slope keeps %s at distance %llu on %s (logit budget %s is below "
                                     "what the normaliser allows)", b ? "a key" : "every key", n - 1, d->pipe_spec,
                                     b ? b : "0");
        free(b);
        return rc;
    }
    if (strcmp(stage, "steepest") == 0 && st == ABL_ERR_MISMATCH)
        return abl_cli_internal_error("design: the steepest slope failed its check one step beyond (the next binary32 "
                                      "slope up is sighted too) on %s", d->pipe_spec);
    if (strcmp(stage, "design search") == 0 || strcmp(stage, "steepest") == 0)
        return design_status(st, "keep all");
    if (strcmp(stage, "design targets") == 0 && st == ABL_ERR_DEGENERATE)
        return abl_cli_usage_error("--targets: no binary32 slope has its first blind distance at exactly %llu on %s "
                                   "at N = %llu", (unsigned long long)d->targets[d->res.failed], d->pipe_spec, n);
    if (strcmp(stage, "design targets") == 0)
        return design_status(st, "targets");
    if (strcmp(stage, "largest context") == 0)
        return design_status(st, "slopes");
    if (strcmp(stage, "verify") == 0)
        return abl_cli_internal_error("design: the designed slopes failed verification on %s: %s", d->pipe_spec,
                                      abl_status_message(st));
    if (strcmp(stage, "targets check") == 0)
        return abl_cli_internal_error("design: simulate disagrees with the predictor on a target");
    return design_check_failure(d, stage, st);
}

/* Plan the job, refuse it over the work budget unless --force, run it with the bar. */
static int design_execute(const abl_cli_cmd *cmd, const char **v, design_run *d)
{
    abl_design_plan plan;
    abl_status st = abl_design_plan_make(&d->job, &plan);
    if (st != ABL_OK)
        return design_status(st, "plan");
    if (abl_cli_budget_of(cmd->name, v, &plan.plan.cost) != 0) {
        abl_design_plan_free(&plan);
        return ABL_EXIT_USAGE;
    }
    abl_progress progress = {abl_cli_bar_update, &d->bar};
    st = abl_design_run_plan(&plan, &progress, &d->res);
    abl_design_plan_free(&plan);
    return st != ABL_OK ? design_failure(d, st) : 0;
}

static int design_with(const abl_cli_cmd *cmd, const char **v, design_run *d, mpq_t budget)
{
    const char *fmt = abl_cli_arg(cmd, v, ABL_OPT_FORMAT);
    abl_output out = ABL_OUT_TEXT;
    abl_cli_bar_init(d->ctx, &d->bar, "design", cmd, v);
    d->special = fmt != NULL && (strcmp(fmt, "python") == 0 || strcmp(fmt, "slopes") == 0);
    if (fmt != NULL && !d->special && abl_cli_output(fmt, &out))
        return ABL_EXIT_USAGE;
    /* --model first; --heads, --dtype, --pipeline, --ctx override it. */
    abl_cli_model_choice choice;
    int rc = abl_cli_model_choose(v, &choice);
    if (rc != 0)
        return rc;
    /* an encoder's layer is bidirectional (its family's); design answers it over the N x N matrix */
    if ((rc = abl_cli_choice_attention(cmd, v, &choice, &d->job.cfg.attention)) != 0 ||
        (rc = abl_cli_design_attention_options(cmd, v, d->job.cfg.attention)) != 0) {
        abl_model_spec_free(&choice.spec);
        abl_cli_model_choice_release(&choice);
        return rc;
    }
    d->model = choice.model;
    d->spec = choice.spec;
    d->config = choice.config;
    d->config_owned = choice.owned_path; /* d->config may point to it: freed with d */
    if ((rc = design_kernel(cmd, v, d)) != 0 || (rc = design_sizes(cmd, v, d, budget)) != 0 ||
        (rc = design_mode(cmd, v, d, fmt)) != 0 || (rc = design_execute(cmd, v, d)) != 0)
        return rc;
    if (d->special)
        return emit_special(d, fmt, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report *r = NULL;
    const abl_design_shown shown = {d->model != NULL ? d->model->name : NULL, d->config, d->pipe_spec, d->schedule};
    abl_status st = abl_design_report(&d->job, &d->res, &shown, &r);
    abl_cli_bar_finish(&d->bar);
    if (st != ABL_OK)
        return design_status(st, "report");
    rc = abl_cli_emit(d->ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report_free(r);
    return rc;
}

static int run_design(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("design: unexpected argument '%s'", pos[0]);
    design_run d;
    memset(&d, 0, sizeof d);
    abl_layer_init(&d.layer);
    d.ctx = ctx;
    mpq_t budget;
    mpq_init(budget);
    int rc = design_with(cmd, v, &d, budget);
    abl_cli_bar_finish(&d.bar);
    abl_design_result_free(&d.res);
    free(d.targets);
    free(d.held);
    abl_schedule_spec_free(&d.sched);
    abl_model_spec_free(&d.spec);
    free(d.config_owned);
    abl_layer_free(&d.layer);
    mpq_clear(budget);
    return rc;
}

const abl_cli_cmd abl_cli_design_cmd = {
    "design",
    "slopes, a clamp and logit budgets that keep every head seeing on a kernel",
    "--heads H --ctx N [--pipeline SPEC] [options]",
    "Designs binary32 ALiBi slopes for a kernel so that no head has a zero attention weight anywhere in\n"
    "the N x N causal matrix (--attention bidirectional, an encoder's default: in any row of its N x N\n"
    "matrix, each row with both horizons): the steepest head as steep as the kernel allows, the others\n"
    "spread like the Press schedule (2^(-8/H) apart). Every answer is decided by the kernel's exact\n"
    "zero-logit predictor and checked again (with the full emulation for N <= 4096) before it is\n"
    "printed. For a causal layer it also prints the least restrictive clamp for the Press schedule (the\n"
    "paper's -87 judged against it) and the smallest logit a key needs to stay seen. --slopes judges an existing schedule (the largest N\n"
    "each head keeps every key), --targets places first blind distances exactly.\n\n"
    "Example: alibi-blind design --heads 40 --ctx 32768 --dtype bf16 --pipeline eager",
    design_opts,
    sizeof design_opts / sizeof design_opts[0],
    run_design,
    NULL,
};
