/* alibi-blind thresholds: the five thresholds of each format, MPFR-exact, beside the paper's Table 4. */
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use thresholds_opts[] = {
    ABL_USE(ABL_OPT_DIGITS),
    /* a list, with its own default */
    {ABL_OPT_DTYPE, 0, "LIST",
     "comma-separated formats, or 'all' (default bf16,fp32)"},
    ABL_USE(ABL_OPT_FORMAT),
    ABL_USE(ABL_OPT_OUTPUT),
};

static int run_thresholds(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("thresholds: unexpected argument '%s'", pos[0]);
    const char *s;
    abl_output out = ABL_OUT_TEXT;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_FORMAT)) && abl_cli_output(s, &out))
        return ABL_EXIT_USAGE;
    long digits = 10;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_DIGITS)) && abl_cli_int("digits", s, 0, 1000, &digits))
        return ABL_EXIT_USAGE;
    const char *list = (s = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) ? s : "bf16,fp32";
    abl_format fmts[64];
    size_t n = 0;
    if (abl_cli_dtype_list("dtype", list, fmts, sizeof fmts / sizeof fmts[0], &n))
        return ABL_EXIT_USAGE;
    abl_report *r = NULL;
    abl_status st = abl_thresholds_report(fmts, n, (int)digits, &r);
    if (st != ABL_OK)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    int rc = abl_cli_emit(ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report_free(r);
    return rc;
}

const abl_cli_cmd abl_cli_thresholds_cmd = {
    "thresholds",
    "the thresholds of exp in each floating-point format, beside the paper's Table 4",
    "[--dtype LIST|all] [--digits N] [options]",
    "Five thresholds per format, in natural-log units, computed with MPFR and correctly rounded:\n"
    "subnormal (ln of the smallest subnormal; the paper's 'underflow'), rn-zero (exp rounds to 0\n"
    "under round-to-nearest), ftz (ln of the smallest normal; the paper's 'denorm'), max (ln of the\n"
    "largest finite; the paper's 'overflow') and rn-overflow.",
    thresholds_opts,
    sizeof thresholds_opts / sizeof thresholds_opts[0],
    run_thresholds,
    NULL,
};
