/* alibi-blind figure: the data series of the paper's Figure 1 (CSV/JSON to plot). */
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use figure_opts[] = {
    ABL_USE(ABL_OPT_CONVENTION),
    /* an alias of --until */
    {ABL_OPT_CTX, 0, NULL,
     "alias of --until (kept for scripts; --ctx is the context length elsewhere)"},
    ABL_USE(ABL_OPT_DTYPE),
    ABL_USE(ABL_OPT_FORCE),
    /* figure streams its CSV */
    {ABL_OPT_FORMAT, 0, NULL,
     "output: text (default), markdown, csv (streamed), json, latex"},
    {ABL_OPT_HEADS, 0, NULL, "number of heads (default 16, as in the paper)"}, /* default 16 */
    ABL_USE(ABL_OPT_OUTPUT),
    ABL_USE(ABL_OPT_PLOT),
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_QUIET),
    ABL_USE(ABL_OPT_SLOPES),
    ABL_USE(ABL_OPT_STEP),
    ABL_USE(ABL_OPT_UNTIL),
};

static int figure_with(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, abl_output out, int panel_b, abl_figure_config *cp,
                       const char *slopes_text);

static int run_figure(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos == 0)
        return abl_cli_usage_error("figure: which panel? (1a or 1b)");
    if (npos > 1)
        return abl_cli_usage_error("figure: unexpected argument '%s'", pos[1]);
    int panel_b;
    if (strcmp(pos[0], "1a") == 0)
        panel_b = 0;
    else if (strcmp(pos[0], "1b") == 0)
        panel_b = 1;
    else
        return abl_cli_usage_error("figure: '%s' is not a panel this tool computes (1a or 1b)", pos[0]);
    abl_figure_config c;
    abl_figure_config_default(&c, panel_b);
    const char *s;
    abl_output out = ABL_OUT_TEXT;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_FORMAT)) && abl_cli_output(s, &out))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) &&
        abl_cli_dtype_one("dtype", s, "a figure panel is drawn for one format (run it once per dtype; plot "
                          "fraction --dtype LIST puts several in one picture)", &c.format))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CONVENTION)) && abl_cli_convention(s, &c.convention))
        return ABL_EXIT_USAGE;
    long heads = c.heads;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) && abl_cli_int("heads", s, 1, ABL_MAX_HEADS, &heads))
        return ABL_EXIT_USAGE;
    c.heads = (int)heads;
    if (abl_cli_arg(cmd, v, ABL_OPT_CTX) != NULL && abl_cli_arg(cmd, v, ABL_OPT_UNTIL) != NULL)
        return abl_cli_usage_error("figure: --ctx is an alias of --until: give one of them");
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_UNTIL)) &&
        abl_cli_context("until", s, 1, ABL_MAX_CONTEXT, &c.max_distance))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) && abl_cli_context("ctx", s, 1, ABL_MAX_CONTEXT, &c.max_distance))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_STEP)) && abl_cli_count("step", s, 1, ABL_MAX_CONTEXT, &c.step))
        return ABL_EXIT_USAGE;
    const char *slopes_text = abl_cli_arg(cmd, v, ABL_OPT_SLOPES);
    abl_schedule_spec slopes;
    if (abl_cli_slopes(slopes_text, &slopes))
        return ABL_EXIT_USAGE;
    c.slopes = slopes_text != NULL ? &slopes : NULL;
    if (c.slopes != NULL && abl_cli_arg(cmd, v, ABL_OPT_HEADS) == NULL &&
        (c.slopes->kind == ABL_SCHEDULE_SLOPES || c.slopes->kind == ABL_SCHEDULE_TARGETS))
        c.heads = 0; /* the list gives H */
    int rc = figure_with(ctx, cmd, v, out, panel_b, &c, slopes_text);
    abl_schedule_spec_free(&slopes);
    return rc;
}

/* The figure of a configuration whose schedule is parsed (slopes_text: the user's, for messages). */
/* --plot PATH: the picture of the same panel and settings, written before the data (0 without --plot). */
static int figure_plot(const abl_cli_ctx *ctx, const abl_figure_config *cp, const abl_figure *f, int panel_b,
                       const char *plot_path)
{
    abl_figure_config c = *cp;
    abl_plot_render_options ro;
    if (plot_path == NULL)
        return 0;
    if (abl_cli_plot_target(NULL, plot_path, NULL, NULL, &ro))
        return ABL_EXIT_USAGE;
    abl_plot p;
    abl_status st;
    if (panel_b) {
        abl_plot_fraction_config pc;
        abl_plot_fraction_config_default(&pc);
        pc.formats = &c.format;
        pc.conventions = &c.convention;
        pc.heads = f->heads;
        pc.slopes = f->spec;
        pc.max_context = c.max_distance;
        pc.linear = 1;
        st = abl_plot_fraction(&pc, &p, NULL);
    } else {
        abl_plot_bias_config bc;
        abl_plot_bias_config_default(&bc);
        bc.format = c.format;
        bc.convention = c.convention;
        bc.heads = f->heads;
        bc.slopes = f->spec;
        bc.max_distance = c.max_distance;
        st = abl_plot_bias(&bc, &p);
    }
    if (st == ABL_ERR_HEADS_RANGE)
        return abl_cli_usage_error("--plot: a plot draws 1 to %d heads", ABL_PLOT_MAX_HEADS);
    if (st != ABL_OK)
        return abl_cli_internal_error("figure: %s", abl_cli_why(st, NULL));
    int rc = abl_cli_plot_write(ctx, &p, &ro, "plot", plot_path);
    abl_plot_free(&p);
    return rc;
}

/* --format csv: streamed row by row, so memory stays O(heads) whatever the number of points. */
static int figure_csv(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_figure *f,
                      int panel_b, const char *path)
{
    int rc = ABL_EXIT_OK;
    abl_cli_bar bar;
    abl_cli_bar_init(ctx, &bar, "figure", cmd, v);
    abl_progress pr = {abl_cli_bar_update, &bar};
    abl_cli_outfile o;
    memset(&o, 0, sizeof o);
    if (path != NULL)
        rc = abl_cli_outfile_open(ctx, &o, "output", path);
    if (rc == ABL_EXIT_OK) {
        abl_status st = abl_figure_write_csv(f, panel_b, path != NULL ? o.f : ctx->out, &pr);
        abl_cli_bar_finish(&bar);
        if (st != ABL_OK)
            rc = path != NULL ? abl_cli_usage_error("--output: cannot write '%s'", path)
                              : abl_cli_internal_error("figure: %s", abl_cli_why(st, NULL));
        else if (path != NULL)
            rc = abl_cli_outfile_commit(&o);
        else if (fflush(ctx->out) != 0)
            rc = abl_cli_internal_error("cannot write to standard output");
    }
    abl_cli_outfile_abort(&o);
    return rc;
}

static int figure_with(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, abl_output out, int panel_b, abl_figure_config *cp,
                       const char *slopes_text)
{
    abl_figure_config c = *cp;

    /* The cost is known before any work starts: refuse it above the budget unless forced. */
    abl_cost cost;
    if (abl_figure_estimate_config(&c, panel_b, &cost) == ABL_OK) {
        /* A table held in memory has a hard size limit: judged first (no --force lifts it), from the
         * same points x heads the estimate counts (the report adds the distance and tau columns). */
        double points = (double)(c.max_distance / c.step + 1 + (c.max_distance % c.step != 0));
        double cells = panel_b ? points : cost.units + 2 * points;
        if (out != ABL_OUT_CSV && cells > ABL_FIGURE_MAX_CELLS)
            return abl_cli_usage_error("figure: %.0f points x %.0f heads is more than %d cells for a %s table held "
                                       "in memory; --format csv streams any number", points, cost.units / points,
                                       ABL_FIGURE_MAX_CELLS,
                                       abl_cli_arg(cmd, v, ABL_OPT_FORMAT) ? abl_cli_arg(cmd, v, ABL_OPT_FORMAT) : "text");
        if (abl_cli_budget_of("figure", v, &cost) != 0)
            return ABL_EXIT_USAGE;
    }
    abl_figure f;
    abl_status st = abl_figure_run(&c, &f);
    if (st == ABL_ERR_CONTEXT_RANGE)
        return abl_cli_usage_error("figure: --ctx/--step give more than a million points");
    if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE ||
        st == ABL_ERR_DEGENERATE)
        return abl_cli_usage_error("--slopes: '%s': %s", slopes_text ? slopes_text : "press", abl_cli_why(st, NULL));
    if (st == ABL_ERR_UNSUPPORTED)
        return abl_cli_usage_error("figure: %s", abl_cli_why(st, NULL));
    if (st != ABL_OK)
        return abl_cli_internal_error("figure: %s", abl_cli_why(st, NULL));
    const char *path = abl_cli_arg(cmd, v, ABL_OPT_OUTPUT);
    int prc = figure_plot(ctx, &c, &f, panel_b, abl_cli_arg(cmd, v, ABL_OPT_PLOT));
    if (prc != 0) {
        abl_figure_free(&f);
        return prc;
    }
    int rc = ABL_EXIT_OK;
    if (out == ABL_OUT_CSV) {
        rc = figure_csv(ctx, cmd, v, &f, panel_b, path);
        abl_figure_free(&f);
        return rc;
    }
    abl_report *r = NULL;
    st = panel_b ? abl_figure1b_report(&f, &r) : abl_figure1a_report(&f, &r);
    if (st == ABL_ERR_CONTEXT_RANGE)
        rc = abl_cli_usage_error("figure: %zu points x %d heads is more than %d cells for a %s table held in "
                                 "memory; --format csv streams any number", f.points, f.heads, ABL_FIGURE_MAX_CELLS,
                                 abl_cli_arg(cmd, v, ABL_OPT_FORMAT) ? abl_cli_arg(cmd, v, ABL_OPT_FORMAT) : "text");
    else if (st != ABL_OK)
        rc = abl_cli_internal_error("figure: %s", abl_cli_why(st, NULL));
    else
        rc = abl_cli_emit(ctx, r, out, path);
    abl_report_free(r);
    abl_figure_free(&f);
    return rc;
}

const abl_cli_cmd abl_cli_figure_cmd = {
    "figure",
    "the data of the paper's Figure 1 (bias per head; underflow fractions), to plot",
    "1a|1b [options]",
    "1a: the bias −m·d of each head of a 16-head bf16 layer at distances 0, step, ..., 4096, and the\n"
    "threshold τ (a head goes blind where its line reaches τ).\n"
    "1b: the row underflow fraction (last query row; the paper's 36.6 % at 2048) and the matrix\n"
    "fraction (all causal entries) at context N = 0, step, ..., 4096.\n\n"
    "--plot FILE draws the same panel as a picture (plot bias; plot fraction --linear).\n\n"
    "Example: alibi-blind figure 1b --format csv --plot figure1b.png",
    figure_opts,
    sizeof figure_opts / sizeof figure_opts[0],
    run_figure,
    NULL,
};
