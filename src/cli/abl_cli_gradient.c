/* alibi-blind: the gradient options (--gradient, --loss-scale, --upstream; spec §15), shared by
 * analyze and simulate, and analyze's closed form of gradient blindness. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "abl_cli.h"
#include "abl/analysis/gradient.h"
#include "abl/compose/plot_gradient.h"

/* One power of two of an option: 0, or the exit status after the one-line error. */
static int pow2_option(const char *name, const char *text, long *out)
{
    if (abl_gradient_pow2_parse(text, out) != ABL_OK)
        return abl_cli_usage_error("--%s: '%s' is not a positive power of two (65536, 0.125, 2^16, 2^-3; "
                                   "|exponent| <= %d)", name, text, ABL_GRADIENT_LOG2_MAX);
    return 0;
}

int abl_cli_gradient_scale(const abl_cli_cmd *cmd, const char **v, long *scale_log2)
{
    const char *s = abl_cli_arg(cmd, v, ABL_OPT_LOSS_SCALE);
    *scale_log2 = 0;
    if (s == NULL)
        return 0;
    if (strcasecmp(s, "dynamic") == 0) {
        *scale_log2 = ABL_GRADIENT_DYNAMIC_LOG2;
        return 0;
    }
    return pow2_option("loss-scale", s, scale_log2);
}

int abl_cli_gradient_upstream(const abl_cli_cmd *cmd, const char **v, long *log2)
{
    long scale = 0, bound = 0;
    const char *s = abl_cli_arg(cmd, v, ABL_OPT_UPSTREAM);
    if (abl_cli_gradient_scale(cmd, v, &scale))
        return ABL_EXIT_USAGE;
    if (s != NULL && pow2_option("upstream", s, &bound))
        return ABL_EXIT_USAGE;
    *log2 = scale + bound;
    if (*log2 < -ABL_GRADIENT_LOG2_MAX || *log2 > ABL_GRADIENT_LOG2_MAX)
        return abl_cli_usage_error("--upstream: |dP - D| x loss scale = 2^%ld is outside 2^-%d .. 2^%d", *log2,
                                   ABL_GRADIENT_LOG2_MAX, ABL_GRADIENT_LOG2_MAX);
    return 0;
}

int abl_cli_gradient_refuse_without(const abl_cli_cmd *cmd, const char **v, const char *needs)
{
    static const abl_opt opts[] = {ABL_OPT_LOSS_SCALE, ABL_OPT_UPSTREAM};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (abl_cli_arg(cmd, v, opts[i]) != NULL)
            return abl_cli_usage_error("--%s: applies with %s only", abl_cli_options[opts[i]].name, needs);
    return 0;
}

int abl_cli_analyze_gradient(const abl_cli_cmd *cmd, const char **v, const abl_analysis_config *cfg, abl_report **r)
{
    long j = 0;
    if (abl_cli_gradient_upstream(cmd, v, &j))
        return ABL_EXIT_USAGE;
    /* run_analysis pointed cfg's progress at its own progress bar, gone by now: none here */
    abl_analysis_config c = *cfg;
    c.progress.fn = NULL;
    c.progress.ctx = NULL;
    abl_gradient g;
    abl_status st = abl_gradient_run(&c, j, &g);
    if (st == ABL_OK)
        st = abl_gradient_report(&g, r);
    abl_gradient_free(&g);
    if (st == ABL_ERR_NO_MEMORY || st == ABL_ERR_MISMATCH)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    if (st != ABL_OK)
        return abl_cli_usage_error("analyze --gradient: %s", abl_cli_why(st, NULL));
    return 0;
}

/* --grad-weights FILE mapped and checked into *npy (opened: the caller closes it). 0, or the exit status. */
static int open_grad(const char *path, abl_npy *npy)
{
    if (path[0] == '\0')
        return abl_cli_usage_error("--grad-weights: empty file name");
    char *err = NULL;
    abl_status st = abl_npy_open(path, npy, &err);
    int rc = st == ABL_OK ? 0
             : st == ABL_ERR_NO_MEMORY ? abl_cli_internal_error("%s", abl_cli_why(st, NULL))
                                       : abl_cli_usage_error("--grad-weights: %s: %s", path, abl_cli_why(st, err));
    free(err);
    return rc;
}

/* The backward predictor's own work (FlashAttention-2's row sums) against the budget, before it starts. */
static int backward_budget(const char *what, const char **v, const abl_simulate_config *cfg)
{
    abl_cost c;
    if (abl_backward_estimate(cfg, &c) != ABL_OK || c.units <= 0)
        return 0;   /* an estimate that fails is the predictor's own refusal, reported when it runs */
    return abl_cli_budget_of(what, v, &c);
}

static int backward_error(abl_status st, const abl_simulate_config *cfg, const char *gpath)
{
    if (st == ABL_ERR_UNSUPPORTED && abl_backward_kind_of(&cfg->pipeline) == ABL_BACKWARD_MEMEFF)
        return abl_cli_usage_error("--backward: the memory-efficient backward (softmax=sdpa-efficient) is modelled %s",
                                   gpath != NULL ? "at unit upstream only (--grad-weights: its D = rowsum(dO O) is not "
                                   "given by dP)" : "for finite logits only (the bias or the logits overflow to "
                                   "Inf/NaN here)");
    if (st == ABL_ERR_UNSUPPORTED && abl_backward_kind_of(&cfg->pipeline) == ABL_BACKWARD_FLASH)
        return abl_cli_usage_error("--backward: FlashAttention-2's backward (softmax=flash) is emulated at unit "
                                   "upstream only, without split-KV (%s)", gpath != NULL ? "--grad-weights: its D = "
                                   "rowsum(dO O) is not given by dP" : cfg->pipeline.splits >= 2 ? "splits >= 2 is "
                                   "a decode path" : "its zero-logit predictor: causal layers only");
    if (st == ABL_ERR_UNSUPPORTED)
        return abl_cli_usage_error("--backward: models the eager softmax backward (PyTorch's _softmax_backward_data) "
                                   "and, with --predict, zero logits with |dP - D| x loss scale >= 1; softmax=%s is "
                                   "not modelled (spec §15)", abl_softmax_kind_name(cfg->pipeline.softmax));
    if (st == ABL_ERR_MISMATCH)
        return abl_cli_usage_error("--grad-weights: %s: its shape is not [H, N, N] or [N, N] of this layer "
                                   "(N = %llu)", gpath ? gpath : "", (unsigned long long)cfg->context);
    if (st == ABL_ERR_NO_MEMORY)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    return abl_cli_usage_error("simulate --backward: %s", abl_cli_why(st, NULL));
}

static int backward_emit(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, abl_output out,
                         const abl_simulate_config *cfg, const abl_simulation *sim, const abl_backward *b,
                         const abl_backward *pred)
{
    abl_report *r = NULL;
    abl_status st = abl_backward_report(cfg, sim, b, pred, &r);
    if (st != ABL_OK)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    int rc = abl_cli_emit(ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report_free(r);
    return rc;
}

static int agrees(const abl_backward *a, const abl_backward *b)
{
    if (a->heads != b->heads)
        return 0;
    for (int h = 0; h < a->heads; h++)
        if (a->results[h].first_blind != b->results[h].first_blind ||
            a->results[h].row_zeros != b->results[h].row_zeros ||
            a->results[h].matrix_zeros != b->results[h].matrix_zeros)
            return 0;
    return 1;
}

int abl_cli_simulate_backward(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v,
                              const abl_simulate_config *cfg, int predict, int compare, abl_output out)
{
    abl_backward_config bc;
    memset(&bc, 0, sizeof bc);
    const char *gpath = abl_cli_arg(cmd, v, ABL_OPT_GRAD_WEIGHTS);
    abl_npy grad;
    memset(&grad, 0, sizeof grad);
    if (gpath != NULL && (predict || compare))
        return abl_cli_usage_error("--grad-weights: the predictor answers for a bound on |dP - D| (drop --%s)",
                                   predict ? "predict" : "compare");
    if (gpath != NULL && abl_cli_arg(cmd, v, ABL_OPT_UPSTREAM) != NULL)
        return abl_cli_usage_error("--upstream: a bound on |dP - D|; --grad-weights gives dP itself");
    if (gpath != NULL ? abl_cli_gradient_scale(cmd, v, &bc.log2_scale) : abl_cli_gradient_upstream(cmd, v, &bc.log2_upstream))
        return ABL_EXIT_USAGE;
    if (gpath != NULL && open_grad(gpath, &grad))
        return ABL_EXIT_USAGE;
    bc.grad = gpath != NULL ? &grad : NULL;
    abl_simulation sim;
    abl_backward b, p;
    memset(&sim, 0, sizeof sim);
    memset(&b, 0, sizeof b);
    memset(&p, 0, sizeof p);
    abl_status st = ABL_OK;
    if ((predict || compare) && backward_budget("simulate", v, cfg) != 0)
        return ABL_EXIT_USAGE;
    if (!predict)
        st = abl_backward_run(cfg, &bc, &sim, &b);
    if (st == ABL_OK && (predict || compare))
        st = abl_backward_predict(cfg, &bc, &p);
    int rc;
    if (st != ABL_OK)
        rc = backward_error(st, cfg, gpath);
    else
        rc = backward_emit(ctx, cmd, v, out, cfg, predict ? NULL : &sim, predict ? &p : &b, compare ? &p : NULL);
    if (rc == 0 && compare && !agrees(&b, &p))
        rc = ABL_EXIT_DIFFERS;
    abl_simulation_free(&sim);
    abl_backward_free(&b);
    abl_backward_free(&p);
    abl_npy_close(&grad);
    return rc;
}

int abl_cli_backward_checks(const abl_cli_cmd *cmd, const char **v, const char *wpath)
{
    int backward = abl_cli_arg(cmd, v, ABL_OPT_BACKWARD) != NULL;
    if (!backward && abl_cli_arg(cmd, v, ABL_OPT_GRAD_WEIGHTS) != NULL)
        return abl_cli_usage_error("--grad-weights: applies with --backward only");
    if (!backward && abl_cli_gradient_refuse_without(cmd, v, "--backward"))
        return ABL_EXIT_USAGE;
    if (backward && wpath != NULL)
        return abl_cli_usage_error("--weights: not with --backward (one row hook at a time)");
    return 0;
}

/* The verdict: heads with a zero dS in the last row, the row fraction, against the limits. 1 within. */
static int gradient_within(const abl_backward *b, uint64_t n, const abl_check_limits *lim, abl_report *r)
{
    int blind = 0;
    for (int h = 0; h < b->heads; h++)
        blind += b->results[h].row_zeros > 0;
    mpq_t f;
    mpq_init(f);
    mpz_set_ui(mpq_numref(f), 0);
    mpz_set_ui(mpq_denref(f), 1);
    if (b->heads > 0 && n > 0) {
        mpz_set_ui(mpq_numref(f), (unsigned long)b->row_zeros);
        mpz_set_ui(mpq_denref(f), (unsigned long)n);
        mpz_mul_ui(mpq_denref(f), mpq_denref(f), (unsigned long)b->heads);
        mpq_canonicalize(f);
    }
    int ok = blind <= lim->max_blind_heads && (lim->max_row_fraction == NULL || mpq_cmp(f, lim->max_row_fraction) <= 0);
    char *t = NULL, *fs = mpq_get_str(NULL, 10, f);
    if (fs != NULL)
        t = malloc(strlen(fs) + 64);
    if (t != NULL) {
        sprintf(t, "%d of %d heads; last-row fraction %s", blind, b->heads, fs);
        abl_report_summary(r, "gradient_blind_heads", "heads with a zero gradient in the last row", t, NULL);
    }
    abl_report_summary(r, "verdict", "verdict", ok ? "pass" : "FAIL", ok ? "\"pass\"" : "\"fail\"");
    free(t);
    free(fs);
    mpq_clear(f);
    return ok;
}

/* The one line on stderr of a failed check, as the weight criterion writes it. */
static void fail_line(const abl_backward *b, uint64_t n)
{
    int blind = 0, first = -1;
    for (int h = 0; h < b->heads; h++)
        if (b->results[h].row_zeros > 0) {
            blind++;
            if (first < 0)
                first = h;
        }
    if (first < 0) {
        fprintf(stderr, "alibi-blind: check: fail (gradient)\n");
        return;
    }
    fprintf(stderr, "alibi-blind: check: fail: %d of %d heads with a zero gradient inside %llu tokens (head %d from d = %lld)\n",
            blind, b->heads, (unsigned long long)n, first + 1, (long long)b->results[first].first_blind);
}

int abl_cli_check_gradient(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_cli_setup *s,
                           const abl_check_limits *lim, abl_output out)
{
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.pipeline = s->pipeline;
    cfg.slopes = abl_layer_schedule(&s->layer);
    cfg.heads = s->layer.heads;
    cfg.context = s->layer.context;
    cfg.threads = 1;
    abl_backward_config bc;
    memset(&bc, 0, sizeof bc);
    if (abl_cli_gradient_upstream(cmd, v, &bc.log2_upstream))
        return ABL_EXIT_USAGE;
    if (backward_budget("check", v, &cfg) != 0)
        return ABL_EXIT_USAGE;
    abl_backward b;
    abl_status st = abl_backward_predict(&cfg, &bc, &b);
    if (st != ABL_OK) {
        abl_backward_free(&b);
        return backward_error(st, &cfg, NULL);
    }
    abl_report *r = NULL;
    st = abl_backward_report(&cfg, NULL, &b, NULL, &r);
    int ok = st == ABL_OK ? gradient_within(&b, cfg.context, lim, r) : 0;
    int rc = st == ABL_OK ? abl_cli_emit(ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT))
                          : abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    abl_report_free(r);
    if (rc == 0 && !ok)
        fail_line(&b, cfg.context);
    abl_backward_free(&b);
    return rc != 0 ? rc : ok ? ABL_EXIT_OK : ABL_EXIT_DIFFERS;
}

int abl_cli_plot_gradient(const abl_cli_cmd *cmd, const char **v, const abl_layer *layer,
                          const abl_pipeline_spec *pipe, const char *label, abl_plot *p)
{
    abl_plot_gradient_config c;
    abl_plot_gradient_config_default(&c);
    if (abl_cli_gradient_upstream(cmd, v, &c.log2_upstream))
        return ABL_EXIT_USAGE;
    c.pipeline = pipe;
    c.model_dtype = layer->format;
    c.heads = layer->heads;
    c.slopes = abl_layer_schedule(layer);
    c.model = label;
    if (layer->context)
        c.context = layer->context;
    if (c.context < 2)
        return abl_cli_usage_error("--ctx: plot gradient needs N >= 2 (got %llu)", (unsigned long long)c.context);
    abl_cost cost;   /* known before the predictors run: over the budget only with --force */
    if (abl_plot_gradient_estimate(&c, &cost) == ABL_OK && abl_cli_budget_of(cmd->name, v, &cost) != 0)
        return ABL_EXIT_USAGE;
    char *err = NULL;
    abl_status st = abl_plot_gradient(&c, p, &err);
    int rc = 0;
    if (st == ABL_ERR_NO_MEMORY)
        rc = abl_cli_internal_error("out of memory");
    else if (st != ABL_OK && err != NULL)
        rc = abl_cli_usage_error("%s", err); /* the library's message names the option or the kind */
    else if (st != ABL_OK)
        rc = abl_cli_usage_error("plot gradient: %s", abl_cli_why(st, NULL));
    free(err);
    return rc;
}
