/* alibi-blind verify: prove the thresholds of each format by emulating exp in it (MPFR). */
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use verify_opts[] = {
    /* a list, with its own default */
    {ABL_OPT_DTYPE, 0, "LIST",
     "comma-separated formats, or 'all' (default bf16,fp32,fp16)"},
    ABL_USE(ABL_OPT_FORMAT),
    ABL_USE(ABL_OPT_LIBM),
    ABL_USE(ABL_OPT_OUTPUT),
};

/* verify decodes encodings into 64 bits: wider custom formats are refused up front. */
static int parse_dtypes(const char *list, abl_format *fmts, size_t cap, size_t *n)
{
    int rc = abl_cli_dtype_list("dtype", list, fmts, cap, n);
    for (size_t i = 0; rc == 0 && i < *n; i++) {
        int bits = abl_verify_format_bits(&fmts[i]);
        if (bits > ABL_VERIFY_MAX_BITS)
            rc = abl_cli_usage_error("--dtype: %s has %d bits; verify handles formats of at most %d bits",
                                     fmts[i].name, bits, ABL_VERIFY_MAX_BITS);
    }
    return rc;
}

static int run_verify(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("verify: unexpected argument '%s'", pos[0]);
    const char *s;
    abl_output out = ABL_OUT_TEXT;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_FORMAT)) && abl_cli_output(s, &out))
        return ABL_EXIT_USAGE;
    abl_format fmts[64];
    size_t n = 0;
    const char *list = (s = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) ? s : "bf16,fp32,fp16";
    int rc = parse_dtypes(list, fmts, sizeof fmts / sizeof fmts[0], &n);
    if (rc != 0)
        return rc;
    abl_report *r = NULL;
    int agree = 0;
    abl_status st = abl_verify_report(fmts, n, abl_cli_arg(cmd, v, ABL_OPT_LIBM) != NULL, &r, &agree);
    if (st == ABL_ERR_UNSUPPORTED)
        return abl_cli_usage_error("--dtype: a format whose fields do not describe its encoding cannot be verified");
    if (st != ABL_OK)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    rc = abl_cli_emit(ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report_free(r);
    if (rc == ABL_EXIT_OK && !agree)
        rc = ABL_EXIT_DIFFERS;
    return rc;
}

const abl_cli_cmd abl_cli_verify_cmd = {
    "verify",
    "prove the thresholds by emulating exp in each format (MPFR); exit 1 on a disagreement",
    "[--dtype LIST|all] [--libm] [options]",
    "For each format, exp(x) is rounded into the format with MPFR's exact emulation (precision p,\n"
    "gradual underflow) for every finite input of a format of at most 16 bits, or by bisection over\n"
    "the ordered encodings for wider ones (fp32, tf32, fp64). Each threshold kind becomes a claim\n"
    "(e.g. rn-zero: rounded to nearest, exp(x) = 0 iff x <= tau); verify prints the last representable\n"
    "x on each side of the boundary and whether they straddle the closed-form tau as claimed.\n"
    "--libm adds the host expf and exp2f(x*log2 e) against the correctly rounded result over every\n"
    "binary32 x in [-104, -87] and [88, 89]; that part is informational. Exit status 1 when any claim\n"
    "disagrees with its closed form.",
    verify_opts,
    sizeof verify_opts / sizeof verify_opts[0],
    run_verify,
    NULL,
};
