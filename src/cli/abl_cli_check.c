/* alibi-blind check: a gate for a model repository's CI. Exit 0 when the model is within the limits
 * at context N on its kernel, 1 when it is not (naming the heads and where they go blind), 2 on bad
 * input. */
#include <gmp.h>
#include <stdio.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use check_opts[] = {
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
    abl_check_limits lim = {0, NULL};
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
    abl_cli_criterion crit;
    if (abl_cli_criterion_parse(abl_cli_arg(cmd, v, ABL_OPT_CRITERION), &crit) ||
        (crit != ABL_CLI_CRITERION_GRADIENT && abl_cli_gradient_refuse_without(cmd, v, "--criterion gradient"))) {
        mpq_clear(frac);
        return ABL_EXIT_USAGE;
    }
    abl_cli_setup s;
    int rc = abl_cli_setup_resolve(cmd, v, ABL_SIMULATE_MAX_CONTEXT, &s);
    if (rc == 0 && crit == ABL_CLI_CRITERION_GRADIENT) {
        rc = abl_cli_check_gradient(ctx, cmd, v, &s, &lim, out);
    } else if (rc == 0) {
        abl_compare_config cc;
        abl_cli_work work = abl_cli_work_of(cmd->name, v);
        rc = abl_cli_compare_config(&s, &cc);
        if (rc == 0)
            rc = abl_cli_compare(ctx, cmd->name, &cc, &s, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT), &lim, NULL, &work);
    }
    abl_cli_setup_free(&s);
    mpq_clear(frac);
    return rc;
}

const abl_cli_cmd abl_cli_check_cmd = {
    "check",
    "CI gate: is the model blind at context N on its kernel? exit 0 pass, 1 fail",
    "--config FILE | --model NAME [--ctx N] [--pipeline P] [--dtype T] [--max-blind-heads K] [--max-row-fraction F]",
    "Reads the model (config.json or catalogue name), runs the exact zero-logit predictor of its kernel\n"
    "(the model's default code path unless --pipeline says otherwise) at context N, and prints a short\n"
    "verdict: the heads that have a zero attention weight in the last query row, the distance where each\n"
    "goes blind, and the layer's row and matrix fractions. Exit status 0 when at most K heads are blind\n"
    "(default 0) and the row fraction is at most F; 1 when not; 2 on bad input. --format json for machines.\n\n"
    "Example: alibi-blind check --config config.json --ctx 8192 --max-blind-heads 4",
    check_opts,
    sizeof check_opts / sizeof check_opts[0],
    run_check,
};
