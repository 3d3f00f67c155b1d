/* alibi-blind report: one self-contained HTML page (tables and inline SVG pictures) for a layer. */
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_opt report_opts[] = {
    {"config", "PATH", "a Hugging Face config.json: heads, slopes, dtype, context, kernel"},
    {"convention", "NAME", "paper (default), ftz, ieee or subnormal"},
    {"ctx", "N", "context length N (default: the model's trained context, else 2048)"},
    {"dtype", "TYPE", "floating-point format (default: the model's, else bf16)"},
    {"force", NULL, "run even if the estimated work is over the budget (1 minute)"},
    {"heads", "H", "number of heads (default: the model's, else 16)"},
    {"model", "NAME", "a catalogued model (alibi-blind models): heads, slopes, dtype, context, kernel"},
    {"output", "FILE", "the page (required, .html; written atomically)"},
    {"pipeline", "SPEC", "the kernel (default: the model's default code path, else eager)"},
    {"slopes", "SPEC", "press (default), mpt:B, pow2only, geometric:D1:DH, targets:..., slopes:..."},
};

static int run_report(const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("report: unexpected argument '%s'", pos[0]);
    const char *path = abl_cli_value(cmd, v, "output");
    if (path == NULL)
        return abl_cli_usage_error("report: --output FILE.html is required");
    abl_html_config c;
    memset(&c, 0, sizeof c);
    const char *s;
    if ((s = abl_cli_value(cmd, v, "model")) != NULL && (c.model = abl_model_find(s)) == NULL) {
        const abl_model *near = abl_model_suggest(s);
        return abl_cli_usage_error("--model: unknown model '%s'%s%s%s (see alibi-blind models)", s,
                                   near ? " (did you mean " : "", near ? near->name : "", near ? "?)" : "");
    }
    abl_model_spec spec;
    int have_config, rc0 = abl_cli_config_spec(cmd, v, &spec, &have_config);
    if (rc0 != 0)
        return rc0;
    if (have_config) {
        c.config = abl_cli_value(cmd, v, "config");
        c.model_type = spec.model_type;
    }
    abl_format_lookup("bf16", &c.format);
    if (c.model != NULL && c.model->dtype != NULL)
        abl_format_lookup(c.model->dtype, &c.format);
    if (have_config)
        c.format = spec.dtype;
    if ((s = abl_cli_value(cmd, v, "dtype")) &&
        abl_cli_dtype_one("dtype", s, "a report describes one model in one dtype (run it once per dtype)", &c.format))
        return ABL_EXIT_USAGE;
    c.convention = ABL_CONV_PAPER;
    if ((s = abl_cli_value(cmd, v, "convention")) && abl_cli_convention(s, &c.convention))
        return ABL_EXIT_USAGE;
    long heads = c.model != NULL ? c.model->heads : have_config ? spec.heads : 16;
    if ((s = abl_cli_value(cmd, v, "heads")) && abl_cli_int("heads", s, 1, ABL_PLOT_MAX_HEADS, &heads))
        return ABL_EXIT_USAGE;
    c.slopes = abl_cli_value(cmd, v, "slopes");
    if (c.slopes == NULL && c.model != NULL)
        c.slopes = c.model->slopes;
    if (c.slopes == NULL && have_config)
        c.slopes = spec.slopes;
    if (c.slopes != NULL && abl_cli_value(cmd, v, "heads") == NULL && c.model == NULL && !have_config &&
        (strncmp(c.slopes, "slopes:", 7) == 0 || strncmp(c.slopes, "targets:", 8) == 0))
        heads = 0;
    c.heads = (int)heads;
    c.context = c.model != NULL && c.model->context > 0 ? c.model->context
                : have_config && spec.context > 0    ? spec.context
                                                     : 2048;
    if ((s = abl_cli_value(cmd, v, "ctx")) && abl_cli_count("ctx", s, 1, ABL_MAX_CONTEXT, &c.context))
        return ABL_EXIT_USAGE;
    c.pipeline = abl_cli_value(cmd, v, "pipeline");
    if (c.pipeline == NULL && have_config)
        c.pipeline = spec.pipeline;
    abl_pipeline pl;
    if (c.pipeline != NULL && (rc0 = abl_cli_pipeline(c.pipeline, &c.format, 0, &pl)) != 0)
        return rc0;
    /* Known before any work starts: refuse a page over the budget unless forced. */
    abl_cost cost;
    if (abl_html_report_estimate(&c, &cost) == ABL_OK &&
        abl_cli_budget("report", &cost, abl_cli_value(cmd, v, "force") != NULL) != 0)
        return ABL_EXIT_USAGE;
    char *buf = NULL, *err = NULL;
    size_t len = 0;
    abl_status st = abl_html_report(&c, &buf, &len, &err);
    const char *why = err != NULL ? err : abl_status_message(st);
    int rc = 0;
    if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE ||
        st == ABL_ERR_DEGENERATE)
        rc = abl_cli_usage_error("--slopes: '%s': %s", c.slopes ? c.slopes : "press", abl_status_message(st));
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
    rc = abl_cli_outfile_open(&o, "output", path);
    if (rc == 0) {
        fwrite(buf, 1, len, o.f);
        rc = abl_cli_outfile_commit(&o);
    }
    free(buf);
    /* The page has its tables and says the pictures are missing; the user learns why here too. */
    if (rc == 0 && !abl_plot_available())
        fprintf(stderr, "alibi-blind: report: the pictures are left out: %s\n", ABL_PLOT_MISSING);
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
