/* alibi-blind report: one self-contained HTML page (tables and inline SVG pictures) for a layer. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "abl_cli.h"

static const abl_cli_use report_opts[] = {
    ABL_USE(ABL_OPT_ATTENTION),
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
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_QUIET),
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

/* The page's configuration: a projection of the layer (pointers into it) and the model it describes. */
static void page_config(const abl_layer *l, const abl_cli_model_choice *choice, abl_html_config *c)
{
    memset(c, 0, sizeof *c);
    c->model = choice->model;
    if (choice->config != NULL) {
        c->config = choice->config;
        c->model_type = choice->spec.model_type;
    }
    c->format = l->format;
    c->convention = l->convention;
    c->heads = l->heads;
    c->slopes = abl_layer_schedule(l);
    c->context = l->context;
    c->pipeline = l->has_pipeline ? &l->pipeline : NULL;
    c->attention = l->attention;
}

/* The page's format, heads and context: the catalogue entry's or the config's, else bf16, 16 heads and
 * 2048 tokens; the options over them. 0, or the exit status after the one-line error. */
static int report_shape(const abl_cli_cmd *cmd, const char **v, const abl_cli_model_choice *choice, abl_layer *l)
{
    const abl_model *m = choice->model;
    const abl_model_spec *spec = choice->config != NULL ? &choice->spec : NULL;
    const char *s;
    if (m != NULL && m->dtype != NULL)
        abl_format_lookup(m->dtype, &l->format);
    if (spec != NULL)
        l->format = spec->dtype;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) &&
        abl_cli_dtype_one("dtype", s, "a report describes one model in one dtype (run it once per dtype)", &l->format))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CONVENTION)) && abl_cli_convention(s, &l->convention))
        return ABL_EXIT_USAGE;
    long heads = m != NULL ? m->heads : spec != NULL ? spec->heads : 16;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) && abl_cli_int("heads", s, 1, ABL_PLOT_MAX_HEADS, &heads))
        return ABL_EXIT_USAGE;
    l->heads = (int)heads;
    return 0;
}

/* The schedule, parsed here once into the layer: --slopes, else the catalogue entry's, else the
 * config's (a value); *slopes_text names it in messages. */
static int report_schedule(const abl_cli_cmd *cmd, const char **v, const abl_cli_model_choice *choice, abl_layer *l,
                           const char **slopes_text)
{
    const abl_model *m = choice->model;
    const char *text = abl_cli_arg(cmd, v, ABL_OPT_SLOPES);
    abl_status pst = ABL_OK;
    if (text != NULL) {
        if (abl_cli_slopes(text, &l->schedule))
            return ABL_EXIT_USAGE;
    } else if (m != NULL || choice->config != NULL) { /* a value: the catalogue's or the config's */
        pst = m != NULL ? abl_model_schedule(m, &l->schedule) : abl_model_spec_schedule(&choice->spec, &l->schedule);
        text = l->schedule.text != NULL ? l->schedule.text : "press"; /* display: "press", "mpt:8" */
    }
    if (pst != ABL_OK)
        return abl_cli_usage_error("--slopes: '%s': %s", text, abl_cli_why(pst, NULL));
    l->has_schedule = text != NULL;
    *slopes_text = text;
    if (l->has_schedule && abl_cli_arg(cmd, v, ABL_OPT_HEADS) == NULL && m == NULL && choice->config == NULL &&
        (l->schedule.kind == ABL_SCHEDULE_SLOPES || l->schedule.kind == ABL_SCHEDULE_TARGETS))
        l->heads = 0;
    return 0;
}

/* The context and the kernel: --pipeline, the config's, the model's default code path, else eager;
 * parsed here once into the layer. */
static int report_kernel(const abl_cli_cmd *cmd, const char **v, const abl_cli_model_choice *choice, abl_layer *l)
{
    const abl_model *m = choice->model;
    const abl_model_spec *spec = choice->config != NULL ? &choice->spec : NULL;
    l->context = m != NULL && m->context > 0 ? m->context : spec != NULL && spec->context > 0 ? spec->context : 2048;
    const char *s;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) && abl_cli_context("ctx", s, 1, ABL_MAX_CONTEXT, &l->context))
        return ABL_EXIT_USAGE;
    return abl_cli_layer_kernel(abl_cli_arg(cmd, v, ABL_OPT_PIPELINE), m, spec, l);
}

/* BTLM/jais alibi_scaling.train_seq_len T: a config's slopes at a context beyond T keys are divided by
 * context / T, as the model's code does (abl_model_spec_schedule_keys); --slopes wins. */
static int report_keys_scaling(const abl_cli_cmd *cmd, const char **v, const abl_cli_model_choice *choice,
                               abl_layer *l, const char **slopes_text)
{
    const abl_model_spec *spec = choice->config != NULL ? &choice->spec : NULL;
    if (spec == NULL || choice->model != NULL || abl_cli_arg(cmd, v, ABL_OPT_SLOPES) != NULL ||
        spec->alibi_train_seq_len == 0 || l->context <= spec->alibi_train_seq_len)
        return 0;
    abl_schedule_spec keyed;
    abl_status st = abl_model_spec_schedule_keys(spec, l->context, &keyed);
    if (st != ABL_OK)
        return abl_cli_usage_error("--config: the model's slopes: %s", abl_cli_why(st, NULL));
    abl_schedule_spec_free(&l->schedule);
    l->schedule = keyed;
    *slopes_text = l->schedule.text;
    return 0;
}

/* 1 when the file name ends in .html or .htm (any case): the page is HTML, and a name that says PDF or
 * PNG would mislead whoever opens it. */
static int html_name(const char *path)
{
    static const char *const exts[] = {".html", ".htm"};
    size_t n = strlen(path);
    for (size_t i = 0; i < 2; i++) {
        size_t k = strlen(exts[i]);
        if (n > k && strncasecmp(path + n - k, exts[i], k) == 0 && path[n - k - 1] != '/')
            return 1;
    }
    return 0;
}

/* The page of the layer the options describe (the caller frees *l, initialised, and *owned, the --model
 * or --config choice: its spec and path). */
static int report_with(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos,
                       abl_layer *l, abl_cli_model_choice *owned)
{
    if (npos > 0)
        return abl_cli_usage_error("report: unexpected argument '%s'", pos[0]);
    const char *path = abl_cli_arg(cmd, v, ABL_OPT_OUTPUT);
    if (path == NULL)
        return abl_cli_usage_error("report: --output FILE.html is required");
    if (strcmp(path, "-") != 0 && !html_name(path)) /* "-": the page on standard output */
        return abl_cli_usage_error("--output: '%s': the report is an HTML page: name it .html or .htm", path);
    abl_cli_model_choice choice;
    int rc0 = abl_cli_model_choose(v, &choice);
    *owned = choice; /* the caller frees its spec and path, whatever happens next */
    /* an encoder's page is about its bidirectional layer (abl_html_bidir.c) */
    if (rc0 != 0 || (rc0 = abl_cli_choice_attention(cmd, v, &choice, &l->attention)) != 0)
        return rc0;
    const char *slopes_text = NULL;
    if ((rc0 = report_shape(cmd, v, &choice, l)) != 0 || (rc0 = report_schedule(cmd, v, &choice, l, &slopes_text)) != 0 ||
        (rc0 = report_kernel(cmd, v, &choice, l)) != 0 ||
        (rc0 = report_keys_scaling(cmd, v, &choice, l, &slopes_text)) != 0)
        return rc0;
    abl_html_config c;
    page_config(l, &choice, &c);
    /* Known before any work starts: refuse a page over the budget unless forced. */
    abl_cost cost;
    if (abl_html_report_estimate(&c, &cost) == ABL_OK &&
        abl_cli_budget_of("report", v, &cost) != 0)
        return ABL_EXIT_USAGE;
    abl_cli_bar bar;
    abl_cli_bar_init(ctx, &bar, "report", cmd, v);
    c.progress.fn = abl_cli_bar_update;
    c.progress.ctx = &bar;
    int rc = write_page(ctx, &c, slopes_text, path);
    abl_cli_bar_finish(&bar);
    return rc;
}

static int run_report(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    abl_layer l;
    abl_layer_init(&l);
    abl_cli_model_choice choice;
    memset(&choice, 0, sizeof choice);
    int rc = report_with(ctx, cmd, v, npos, pos, &l, &choice);
    abl_layer_free(&l);
    abl_model_spec_free(&choice.spec);
    abl_cli_model_choice_release(&choice);
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
    NULL,
};
