/* alibi-blind check: a gate for a model repository's CI. Exit 0 when the model is within the limits
 * at context N on its kernel, 1 when it is not (naming the heads and where they go blind), 2 on bad
 * input. */
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use check_opts[] = {
    ABL_USE(ABL_OPT_ATTENTION),
    ABL_USE(ABL_OPT_CONFIG),
    ABL_USE(ABL_OPT_CRITERION),
    /* default: the trained context; simulator range */
    {ABL_OPT_CTX, 0, NULL,
     "context length N to check (default: the model's trained context; 1 to 16777216)"},
    /* default from the config */
    {ABL_OPT_DTYPE, 0, NULL,
     "the model dtype (default: the config's torch_dtype, else bf16)"},
    ABL_USE(ABL_OPT_FORCE),
    ABL_USE(ABL_OPT_FORMAT),
    {ABL_OPT_HEADS, 0, NULL, "override the head count"}, /* overrides the model's */
    ABL_USE(ABL_OPT_LOSS_SCALE),
    ABL_USE(ABL_OPT_MAX_BLIND_HEADS),
    ABL_USE(ABL_OPT_MAX_ROW_FRACTION),
    ABL_USE(ABL_OPT_MODEL),
    ABL_USE(ABL_OPT_OUTPUT),
    /* default: the model's path */
    {ABL_OPT_PIPELINE, 0, NULL,
     "PRESET[,FIELD=VALUE...] or a code path of the model (default: its default path)"},
    ABL_USE(ABL_OPT_SLOPES),
    ABL_USE(ABL_OPT_UPSTREAM),
};

/* --criterion: one of the library's criteria by name (the table in src/lib/model/abl_criterion.c: weight,
 * influence), or gradient: the backward pass's zero-gradient predictor (abl_cli_check_gradient, spec §15),
 * a report of its own. 0, or the exit status after the error. */
static int check_criterion(const char *text, abl_check_criterion *out, int *gradient)
{
    *gradient = strcmp(text, "gradient") == 0;
    if (*gradient)
        return 0;
    size_t len = sizeof ", gradient";
    for (int k = 0; k < ABL_CRITERION_COUNT; k++) {
        const char *name = abl_check_criterion_name((abl_check_criterion)k);
        if (strcmp(text, name) == 0) {
            *out = (abl_check_criterion)k;
            return 0;
        }
        len += strlen(name) + 2;
    }
    char *known = malloc(len);   /* the names, "weight, influence, gradient" */
    if (known != NULL) {
        known[0] = '\0';
        for (int k = 0; k < ABL_CRITERION_COUNT; k++) {
            if (k > 0)
                strcat(known, ", ");
            strcat(known, abl_check_criterion_name((abl_check_criterion)k));
        }
        strcat(known, ", gradient");
    }
    int rc = abl_cli_usage_error("--criterion: unknown criterion '%s' (known: %s)", text, known != NULL ? known : "?");
    free(known);
    return rc;
}

/* One model's check: emitted (keep NULL) or kept in *keep (check --model a,b,c); 0, 1 (a limit failed) or
 * the exit status after the one-line error. */
static int check_one(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, abl_output out,
                     const abl_cli_work *given, abl_report **keep)
{
    const char *o;
    abl_check_limits lim = {0, NULL, ABL_CRITERION_WEIGHT};
    int gradient = 0;
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_CRITERION)) && check_criterion(o, &lim.criterion, &gradient))
        return ABL_EXIT_USAGE;
    if (!gradient && abl_cli_gradient_refuse_without(cmd, v, "--criterion gradient"))
        return ABL_EXIT_USAGE;
    long k = 0;
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_MAX_BLIND_HEADS)) && abl_cli_int("max-blind-heads", o, 0, ABL_MAX_HEADS, &k))
        return ABL_EXIT_USAGE;
    lim.max_blind_heads = (int)k;
    mpq_t frac;
    mpq_init(frac);
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_MAX_ROW_FRACTION)) != NULL) {
        int bad = abl_cli_decimal("max-row-fraction", o, 0, frac);
        if (!bad && (mpq_sgn(frac) < 0 || mpq_cmp_ui(frac, 1, 1) > 0))
            bad = abl_cli_usage_error("--max-row-fraction: %s is out of range (0 to 1; 0.05 = 5 %%)", o);
        if (bad) {
            mpq_clear(frac);
            return ABL_EXIT_USAGE;
        }
        lim.max_row_fraction = frac;
    }
    abl_cli_setup s;
    int rc = abl_cli_setup_resolve(cmd, v, ABL_SIMULATE_MAX_CONTEXT, &s);
    if (rc == 0 && gradient) {
        rc = abl_cli_check_gradient(ctx, cmd, v, &s, &lim, out);
    } else if (rc == 0) {
        abl_compare_config cc;
        abl_cli_work work = given != NULL ? *given : abl_cli_work_of(cmd->name, v);
        rc = abl_cli_compare_config(&s, &cc);
        if (rc == 0)
            rc = abl_cli_compare(ctx, cmd->name, &cc, &s, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT), &lim, keep, &work);
    }
    abl_cli_setup_free(&s);
    mpq_clear(frac);
    return rc;
}

/* check --model a,b,c: each model's report kept for the one table (abl_cli_model_list). */
static int check_kept(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_cli_work *work,
                      abl_report **r)
{
    return check_one(ctx, cmd, v, ABL_OUT_TEXT, work, r);
}

static int run_check(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("check: unexpected argument '%s'", pos[0]);
    abl_output out = ABL_OUT_TEXT;
    const char *o;
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_FORMAT)) && abl_cli_output(o, &out))
        return ABL_EXIT_USAGE;
    if (abl_cli_arg(cmd, v, ABL_OPT_MODEL) == NULL && abl_cli_arg(cmd, v, ABL_OPT_CONFIG) == NULL)
        return abl_cli_usage_error("check: --config config.json or --model NAME is required");
    const char *mlist = abl_cli_arg(cmd, v, ABL_OPT_MODEL);
    if (mlist != NULL && strchr(mlist, ',') != NULL) /* --model a,b,c: one table, a row per model */
        return abl_cli_model_list(ctx, cmd, v, out, check_kept);
    return check_one(ctx, cmd, v, out, NULL, NULL);
}

const abl_cli_cmd abl_cli_check_cmd = {
    "check",
    "CI gate: is the model blind at context N on its kernel? exit 0 pass, 1 fail",
    "--config FILE | --model NAME [--ctx N] [--pipeline P] [--dtype T] [--criterion weight|influence|gradient]\n"
    "       [--max-blind-heads K] [--max-row-fraction F]",
    "Reads the model (config.json or catalogue name), runs the exact zero-logit predictor of its kernel\n"
    "(the model's default code path unless --pipeline says otherwise) at context N, and prints a short\n"
    "verdict: the heads that have a zero attention weight in the last query row, the distance where each\n"
    "goes blind, and the layer's row and matrix fractions. Exit status 0 when at most K heads are blind\n"
    "(default 0) and the row fraction is at most F; 1 when not; 2 on bad input. --format json for machines.\n"
    "--criterion influence counts a key lost when its term in P.V is 0 for unit-scale values (a weight\n"
    "rounded to 0 in the pipeline's pv-dtype, e.g. llama.cpp's fp16 P), not only when its weight is 0.\n\n"
    "Example: alibi-blind check --config config.json --ctx 8192 --max-blind-heads 4",
    check_opts,
    sizeof check_opts / sizeof check_opts[0],
    run_check,
    NULL,
};
