/* alibi-blind models: the catalogue of ALiBi models, or one model in detail. */
#include <stdio.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use models_opts[] = {
    ABL_USE(ABL_OPT_FORMAT),
    ABL_USE(ABL_OPT_OUTPUT),
};

/* "'X' does not use ALiBi: ... (RoPE)", else "unknown model 'X' (did you mean 'Y'? see alibi-blind models)" */
int abl_cli_unknown_model(const char *opt, const char *name)
{
    /* a well-known RoPE model is told why, not offered the nearest ALiBi name (falcon-7b is not falcon-rw-7b) */
    const char *why = abl_model_not_alibi(name);
    if (why != NULL)
        return abl_cli_usage_error("%s%s'%s' does not use ALiBi: %s", opt ? opt : "", opt ? ": " : "", name, why);
    const abl_model *near = abl_model_suggest(name);
    if (near != NULL)
        return abl_cli_usage_error("%s%sunknown model '%s' (did you mean '%s'? 'alibi-blind models' lists them)",
                                   opt ? opt : "", opt ? ": " : "", name, near->name);
    return abl_cli_usage_error("%s%sunknown model '%s' ('alibi-blind models' lists them, or use --config config.json)",
                               opt ? opt : "", opt ? ": " : "", name);
}

static int run_models(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 1)
        return abl_cli_usage_error("models: unexpected argument '%s'", pos[1]);
    abl_output out = ABL_OUT_TEXT;
    const char *s;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_FORMAT)) && abl_cli_output(s, &out))
        return ABL_EXIT_USAGE;
    const abl_model *m = NULL;
    if (npos == 1 && (m = abl_model_find(pos[0])) == NULL)
        return abl_cli_unknown_model(NULL, pos[0]);
    abl_report *r = NULL;
    abl_status st = m ? abl_model_detail_report(m, &r)
                      : abl_model_catalogue_report(out == ABL_OUT_CSV || out == ABL_OUT_JSON, &r);
    if (st != ABL_OK)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    int rc = abl_cli_emit(ctx, r, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_report_free(r);
    return rc;
}

const abl_cli_cmd abl_cli_models_cmd = {
    "models",
    "the ALiBi models the tool knows: heads, context, dtype, slopes, code paths",
    "[NAME] [--format FMT]",
    "Lists every ALiBi model in the catalogue (the paper's Table 5 and their families): heads, head\n"
    "dimension, layers, trained context, default dtype and slope schedule. csv and json add the Hugging\n"
    "Face id, aliases, the slopes as the model's code computes them, the bias form, every code path with\n"
    "the pipeline preset it maps to, and the source of the values. With NAME (a catalogue name, alias or\n"
    "Hugging Face id) one model is shown in full. docs/models.md cites the config file and code of every\n"
    "entry. Use a model with analyze/simulate/check --model NAME.\n\n"
    "Example: alibi-blind models bloom-7b1",
    models_opts,
    sizeof models_opts / sizeof models_opts[0],
    run_models,
    NULL,
};
