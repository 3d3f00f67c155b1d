/* alibi-blind report: one self-contained HTML page (tables and inline SVG pictures) for a layer. */
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use report_opts[] = {
    ABL_USE(ABL_OPT_CONFIG),
    ABL_USE(ABL_OPT_CONVENTION),
    /* default: the trained context */
    {ABL_OPT_CTX, 0, NULL,
     "context length N (default: the model's trained context, else 2048)"},
    {ABL_OPT_DTYPE, 0, NULL, "floating-point format (default: the model's, else bf16)"}, /* default: the model's */
    ABL_USE(ABL_OPT_FORCE),
    {ABL_OPT_HEADS, 0, NULL, "number of heads (default: the model's, else 16)"}, /* default: the model's */
    ABL_USE(ABL_OPT_MODEL),
    {ABL_OPT_OUTPUT, 0, NULL, "the page (required, .html; written atomically)"}, /* required: the page */
    /* default: the model's path */
    {ABL_OPT_PIPELINE, 0, NULL,
     "the kernel (default: the model's default code path, else eager)"},
    ABL_USE(ABL_OPT_SLOPES),
};

/* Build the page of `c` and write it to `path` (the errors name --slopes by slopes_text). */
static int write_page(const abl_cli_ctx *ctx, const abl_html_config *c, const char *slopes_text, const char *path)
{
    char *buf = NULL, *err = NULL;
    size_t len = 0;
    abl_status st = abl_html_report(c, &buf, &len, &err);
    const char *why = abl_cli_why(st, err);
    int rc = 0;
    if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE ||
        st == ABL_ERR_DEGENERATE)
        rc = abl_cli_usage_error("--slopes: '%s': %s", slopes_text ? slopes_text : "press", abl_cli_why(st, NULL));
    else if (st == ABL_ERR_UNSUPPORTED)
        rc = abl_cli_usage_error("report: %s", why);
    else if (st == ABL_ERR_NO_MEMORY)
        rc = abl_cli_internal_error("out of memory");
    else if (st != ABL_OK)
        rc = abl_cli_internal_error("report: %s", why);
    free(err);
    if (rc != 0)
        return rc;
    abl_cli_outfile o;
    rc = abl_cli_outfile_open(ctx, &o, "output", path);
    if (rc == 0) {
        fwrite(buf, 1, len, o.f);
        rc = abl_cli_outfile_commit(&o);
    }
    free(buf);
    /* The page has its tables and says the pictures are missing; the user learns why here too. */
    if (rc == 0 && !abl_plot_available())
        fprintf(ctx->err, "alibi-blind: report: the pictures are left out: %s\n", ABL_PLOT_MISSING);
    return rc;
}

/* The page; the schedule is parsed into *sched (the caller frees it). */
/* pipe: the kernel's value, zeroed, the caller's to free; so is *owned, the --config spec. */
static int report_with(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos,
                       abl_schedule_spec *sched, abl_pipeline_spec *pipe, abl_model_spec *owned)
{
    if (npos > 0)
        return abl_cli_usage_error("report: unexpected argument '%s'", pos[0]);
    const char *path = abl_cli_arg(cmd, v, ABL_OPT_OUTPUT);
    if (path == NULL)
        return abl_cli_usage_error("report: --output FILE.html is required");
    abl_html_config c;
    memset(&c, 0, sizeof c);
    const char *s;
    abl_cli_model_choice choice;
    int rc0 = abl_cli_model_choose(v, &choice);
    if (rc0 != 0)
        return rc0;
    c.model = choice.model;
    *owned = choice.spec;
    const abl_model_spec spec = choice.spec;
    int have_config = choice.config != NULL;
    if (have_config) {
        c.config = choice.config;
        c.model_type = spec.model_type;
    }
    abl_format_lookup("bf16", &c.format);
    if (c.model != NULL && c.model->dtype != NULL)
        abl_format_lookup(c.model->dtype, &c.format);
    if (have_config)
        c.format = spec.dtype;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) &&
        abl_cli_dtype_one("dtype", s, "a report describes one model in one dtype (run it once per dtype)", &c.format))
        return ABL_EXIT_USAGE;
    c.convention = ABL_CONV_PAPER;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CONVENTION)) && abl_cli_convention(s, &c.convention))
        return ABL_EXIT_USAGE;
    long heads = c.model != NULL ? c.model->heads : have_config ? spec.heads : 16;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) && abl_cli_int("heads", s, 1, ABL_PLOT_MAX_HEADS, &heads))
        return ABL_EXIT_USAGE;
    /* The schedule, parsed here once: --slopes, else the catalogue entry's, else the config's (a value). */
    const char *slopes_text = abl_cli_arg(cmd, v, ABL_OPT_SLOPES);
    abl_status pst = ABL_OK;
    if (slopes_text != NULL) {
        if (abl_cli_slopes(slopes_text, sched))
            return ABL_EXIT_USAGE;
    } else if (c.model != NULL || have_config) {
        pst = c.model != NULL ? abl_model_schedule(c.model, sched) : abl_model_spec_schedule(&spec, sched);
        slopes_text = sched->text != NULL ? sched->text : "press"; /* display: "press", "mpt:8" */
    }
    if (pst != ABL_OK)
        return abl_cli_usage_error("--slopes: '%s': %s", slopes_text, abl_cli_why(pst, NULL));
    c.slopes = slopes_text != NULL ? sched : NULL;
    if (c.slopes != NULL && abl_cli_arg(cmd, v, ABL_OPT_HEADS) == NULL && c.model == NULL && !have_config &&
        (c.slopes->kind == ABL_SCHEDULE_SLOPES || c.slopes->kind == ABL_SCHEDULE_TARGETS))
        heads = 0;
    c.heads = (int)heads;
    c.context = c.model != NULL && c.model->context > 0 ? c.model->context
                : have_config && spec.context > 0    ? spec.context
                                                     : 2048;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) && abl_cli_count("ctx", s, 1, ABL_MAX_CONTEXT, &c.context))
        return ABL_EXIT_USAGE;
    /* The kernel: --pipeline, the config's, the model's default code path, else eager; parsed here once. */
    const char *ptext = abl_cli_arg(cmd, v, ABL_OPT_PIPELINE);
    if (ptext == NULL && have_config)
        ptext = spec.pipeline.text;
    if (ptext == NULL && c.model != NULL && c.model->family != NULL && c.model->family->npaths > 0)
        ptext = c.model->family->paths[0].pipeline;
    if (ptext != NULL && (rc0 = abl_cli_pipeline_spec(ptext, pipe)) != 0)
        return rc0;
    c.pipeline = ptext != NULL ? pipe : NULL;
    /* Known before any work starts: refuse a page over the budget unless forced. */
    abl_cost cost;
    if (abl_html_report_estimate(&c, &cost) == ABL_OK &&
        abl_cli_budget_of("report", v, &cost) != 0)
        return ABL_EXIT_USAGE;
    return write_page(ctx, &c, slopes_text, path);
}

static int run_report(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    abl_schedule_spec sched;
    memset(&sched, 0, sizeof sched);
    abl_pipeline_spec pipe;
    memset(&pipe, 0, sizeof pipe);
    abl_model_spec spec;
    memset(&spec, 0, sizeof spec);
    int rc = report_with(ctx, cmd, v, npos, pos, &sched, &pipe, &spec);
    abl_schedule_spec_free(&sched);
    abl_pipeline_spec_free(&pipe);
    abl_model_spec_free(&spec);
    return rc;
}

const abl_cli_cmd abl_cli_report_cmd = {
    "report",
    "one self-contained HTML page for a model or layer: tables and pictures",
    "--model NAME|--config FILE|--heads H [options] --output report.html",
    "The model and its kernel, the per-head table (δ, δ ieee, the kernel's first blind distance,\n"
    "zeros), the row and matrix fractions, and the pictures of plot (bias, fraction, blindmap,\n"
    "mitigations) as inline SVG: one file, no external asset, no script.\n\n"
    "Example: alibi-blind report --model bloom-560m --ctx 4096 --output report.html",
    report_opts,
    sizeof report_opts / sizeof report_opts[0],
    run_report,
};
