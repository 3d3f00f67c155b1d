/* alibi-blind plot: pictures (PNG, SVG, PDF) drawn with PLplot from the exact engines. */
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_use plot_opts[] = {
    /* plot reads fewer fields of the config */
    {ABL_OPT_CONFIG, 0, NULL,
     "heads, slopes and dtype (blindmap: kernel) of a Hugging Face config.json"},
    /* fraction takes a list */
    {ABL_OPT_CONVENTION, 0, "LIST",
     "paper (default), ftz, ieee, subnormal; fraction: a comma-separated list"},
    /* the axis end, per plot kind */
    {ABL_OPT_CTX, 0, NULL,
     "right end of the axis: d for bias (4096), N for fraction (65536), the context of blindmap (2048)"},
    ABL_USE(ABL_OPT_DATA),
    ABL_USE(ABL_OPT_DEVICE),
    /* fraction takes a list */
    {ABL_OPT_DTYPE, 0, "LIST",
     "floating-point format (default bf16, or the model's); fraction: a comma-separated list"},
    ABL_USE(ABL_OPT_FORCE),
    ABL_USE(ABL_OPT_HEAD),
    {ABL_OPT_HEADS, 0, NULL, "number of heads (default 16, as in the paper)"}, /* default 16 */
    ABL_USE(ABL_OPT_HEIGHT),
    ABL_USE(ABL_OPT_LINEAR),
    ABL_USE(ABL_OPT_LOSS_SCALE),
    /* plot reads fewer fields of the model */
    {ABL_OPT_MODEL, 0, NULL,
     "heads, slopes and dtype of a catalogued model (alibi-blind models)"},
    {ABL_OPT_OUTPUT, 0, NULL, "the picture (required; written atomically)"}, /* required: the picture */
    /* a list for fraction */
    {ABL_OPT_PIPELINE, 0, "LIST",
     "fraction: real kernels to overlay (exact predictor, N <= 65536); blindmap: the kernel"},
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_QUIET),
    ABL_USE(ABL_OPT_SLOPES),
    ABL_USE(ABL_OPT_UPSTREAM),
    ABL_USE(ABL_OPT_WIDTH),
};

/* The device and page size from --device/--output/--width/--height. */
int abl_cli_plot_target(const char *device, const char *path, const char *width, const char *height,
                        abl_plot_render_options *ro)
{
    /* Before any work or output: a build without PLplot cannot draw (exit 2, one line). */
    if (!abl_plot_available())
        return abl_cli_usage_error("cannot draw: %s", ABL_PLOT_MISSING);
    abl_plot_render_options_default(ro);
    if (device != NULL) {
        if (abl_plot_device_parse(device, &ro->device) != ABL_OK)
            return abl_cli_usage_error("--device: unknown device '%s' (known: png, svg, pdf)", device);
    } else if (abl_plot_device_from_path(path, &ro->device) != ABL_OK) {
        return abl_cli_usage_error("--output: cannot tell the picture format from '%s' (name it .png, .svg or .pdf, "
                                   "or give --device)", path);
    }
    long v;
    if (width != NULL) {
        if (abl_cli_int("width", width, ABL_PLOT_MIN_SIZE, ABL_PLOT_MAX_SIZE, &v))
            return ABL_EXIT_USAGE;
        ro->width = (int)v;
    }
    if (height != NULL) {
        if (abl_cli_int("height", height, ABL_PLOT_MIN_SIZE, ABL_PLOT_MAX_SIZE, &v))
            return ABL_EXIT_USAGE;
        ro->height = (int)v;
    }
    return 0;
}

int abl_cli_plot_write(const abl_cli_ctx *ctx, const abl_plot *p, const abl_plot_render_options *ro, const char *opt, const char *path)
{
    char *buf = NULL, *err = NULL;
    size_t len = 0;
    abl_status st = abl_plot_render(p, ro, &buf, &len, &err);
    int rc = 0;
    if (st == ABL_ERR_NO_MEMORY)
        rc = abl_cli_internal_error("out of memory");
    else if (st != ABL_OK)
        rc = abl_cli_internal_error("cannot draw the %s picture: %s", abl_plot_device_name(ro->device),
                                    abl_cli_why(st, err));
    free(err);
    if (rc != 0)
        return rc;
    abl_cli_outfile o;
    rc = abl_cli_outfile_open(ctx, &o, opt, path);
    if (rc == 0) {
        fwrite(buf, 1, len, o.f);
        rc = abl_cli_outfile_commit(&o);
    }
    free(buf);
    return rc;
}

/* Split a comma-separated list in place (at most cap items). Returns the count, or -1. */
static int split_list(char *text, char **items, int cap)
{
    int n = 0;
    if (text[0] == '\0')
        return -1;
    for (char *p = text;;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        if (p[0] == '\0' || n == cap)
            return -1;
        items[n++] = p;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return n;
}

#define PLOT_MAX_LIST 8

static int plot_status(abl_status st, const char *slopes, const char *err)
{
    if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE ||
        st == ABL_ERR_DEGENERATE)
        return abl_cli_usage_error("--slopes: '%s': %s%s", slopes ? slopes : "press", abl_cli_why(st, NULL),
                                   st == ABL_ERR_HEADS_RANGE ? " (a plot draws 1 to 256 heads, blindmap --head 0 64)"
                                                             : "");
    if (st == ABL_ERR_UNSUPPORTED || (st == ABL_ERR_INVALID_ARGUMENT && err != NULL))
        return abl_cli_usage_error("plot: %s", abl_cli_why(st, err));
    if (st == ABL_ERR_NO_MEMORY)
        return abl_cli_internal_error("out of memory");
    return abl_cli_internal_error("plot: %s", abl_cli_why(st, NULL));
}

/* The kernel work of fraction (--pipeline curves) and blindmap, refused over the budget unless --force
 * (an estimate that fails is not judged: the run reports the error). */
static int plot_budget(const abl_cli_cmd *cmd, const char **v, abl_status est, const abl_cost *cost)
{
    if (est != ABL_OK)
        return 0;
    return abl_cli_budget_of(cmd->name, v, cost);
}

/* Options a kind does not use are refused rather than ignored: 0, or the exit status after the error. */
static int plot_uses(const char **v, const char *kind)
{
    static const struct { abl_opt opt; const char *kinds; } uses[] = {
        {ABL_OPT_CONVENTION, "bias fraction mitigations"}, {ABL_OPT_CTX, "bias fraction blindmap gradient"},
        {ABL_OPT_DTYPE, "bias fraction blindmap mitigations gradient"}, {ABL_OPT_HEAD, "blindmap"},
        {ABL_OPT_HEADS, "bias fraction blindmap gradient"}, {ABL_OPT_LINEAR, "fraction"},
        {ABL_OPT_MODEL, "bias fraction blindmap gradient"},
        {ABL_OPT_CONFIG, "bias fraction blindmap gradient"}, {ABL_OPT_PIPELINE, "fraction blindmap gradient"},
        {ABL_OPT_FORCE, "fraction blindmap gradient"}, {ABL_OPT_SLOPES, "bias fraction blindmap gradient"},
        {ABL_OPT_LOSS_SCALE, "gradient"}, {ABL_OPT_UPSTREAM, "gradient"}, /* plot gradient (issue 20) */
    };
    for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++)
        if (v[uses[i].opt] != NULL && strstr(uses[i].kinds, kind) == NULL)
            return abl_cli_usage_error("plot %s: --%s does not apply (it is for: %s)", kind,
                                       abl_cli_options[uses[i].opt].name, uses[i].kinds);
    return 0;
}

/* --convention s (NULL: the default, left in convs): a list for fraction, one convention for the others. */
static int plot_conventions(const char *s, const char *kind, abl_convention *convs, size_t *nconvs)
{
    int rc = 0;
    char *copy = NULL, *items[PLOT_MAX_LIST];
    if (s == NULL)
        return 0;
    if ((copy = strdup(s)) == NULL)
        return abl_cli_internal_error("out of memory");
    int n = split_list(copy, items, strcmp(kind, "fraction") == 0 ? ABL_CONV_COUNT : 1);
    if (n < 0)
        rc = abl_cli_usage_error("--convention: '%s' is not %s", s,
                                 strcmp(kind, "fraction") == 0 ? "a comma-separated list of conventions"
                                                               : "one convention");
    for (int i = 0; rc == 0 && i < n; i++)
        rc = abl_cli_convention(items[i], &convs[i]);
    *nconvs = n > 0 ? (size_t)n : 1;
    free(copy);
    if (rc)
        return ABL_EXIT_USAGE;
    return 0;
}

/* What plot_with read from the options, for the kinds that take many of them. */
typedef struct plot_layer {
    const abl_format *formats;
    size_t nformats;
    const abl_convention *convs;
    size_t nconvs;
    abl_pipeline_spec *specs;      /* --pipeline's values (parsed once, in plot_pipelines); [0] also the default */
    int npipes;
    const abl_layer *layer;        /* heads, schedule, the first format and convention, context (0: not given) */
    const char *slopes_text;
    const char *label;
    const char *default_pipeline;  /* blindmap without --pipeline: the model's or config's code path */
    abl_progress progress;         /* the bar of the kernel work (fraction's curves, blindmap's emulation) */
} plot_layer;

/* plot fraction: refused past the pipeline curves' context, 32 pairs of curves or the budget. */
static int plot_fraction(const abl_cli_cmd *cmd, const char **v, const plot_layer *L, abl_plot *p, char **err)
{
    int rc = 0;
    abl_status st = ABL_OK;
    abl_cost cost;
    abl_plot_fraction_config c;
    abl_plot_fraction_config_default(&c);
    c.formats = L->formats;
    c.nformats = L->nformats;
    c.conventions = L->convs;
    c.nconventions = L->nconvs;
    c.pipelines = L->specs;
    c.npipelines = (size_t)L->npipes;
    c.heads = L->layer->heads;
    c.slopes = abl_layer_schedule(L->layer);
    c.model = L->label;
    c.progress = L->progress;
    c.linear = abl_cli_arg(cmd, v, ABL_OPT_LINEAR) != NULL;
    c.attention = L->layer->attention;
    if (c.linear)
        c.max_context = 4096;
    if (L->layer->context)
        c.max_context = L->layer->context;
    if (L->npipes > 0 && c.max_context > ABL_PLOT_PIPELINE_MAX_CONTEXT)
        rc = abl_cli_usage_error("plot fraction: --pipeline curves run the exact predictor at every point: "
                                 "--ctx at most %d", ABL_PLOT_PIPELINE_MAX_CONTEXT);
    else if (L->nformats * L->nconvs + (size_t)L->npipes * L->nformats > 32)
        rc = abl_cli_usage_error("plot fraction: at most 32 pairs of curves");
    else if (plot_budget(cmd, v, abl_plot_fraction_estimate(&c, &cost), &cost) != 0)
        rc = ABL_EXIT_USAGE;
    else
        st = abl_plot_fraction(&c, p, err);
    return rc != 0 ? rc : st != ABL_OK ? plot_status(st, L->slopes_text, *err) : 0;
}

/* plot blindmap: one head of one pipeline (--pipeline, else the model's default code path). */
static int plot_blindmap(const abl_cli_cmd *cmd, const char **v, const plot_layer *L, abl_plot *p, char **err)
{
    int rc = 0;
    abl_status st = ABL_OK;
    abl_cost cost;
    const char *s;
    abl_plot_blindmap_config c;
    abl_plot_blindmap_config_default(&c);
    c.model_dtype = L->layer->format;
    c.heads = L->layer->heads;
    c.slopes = abl_layer_schedule(L->layer);
    c.model = L->label;
    c.progress = L->progress;
    c.attention = L->layer->attention;   /* an encoder: the whole N x N map */
    /* --pipeline, else the model's default code path or the config's, parsed here once */
    if (L->npipes <= 0 && L->default_pipeline != NULL && (rc = abl_cli_pipeline_spec(L->default_pipeline, &L->specs[0])) != 0)
        return rc;
    c.pipeline = L->npipes > 0 || L->default_pipeline != NULL ? &L->specs[0] : NULL;
    long head = 1;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEAD)) && abl_cli_int("head", s, 0, ABL_PLOT_MAX_HEADS, &head))
        rc = ABL_EXIT_USAGE;
    c.head = (int)head;
    if (L->layer->context)
        c.context = L->layer->context;
    if (rc == 0 && plot_budget(cmd, v, abl_plot_blindmap_estimate(&c, &cost), &cost) != 0)
        rc = ABL_EXIT_USAGE;
    if (rc == 0)
        st = abl_plot_blindmap(&c, p, err);
    return rc != 0 ? rc : st != ABL_OK ? plot_status(st, L->slopes_text, *err) : 0;
}

/* plot gradient (issue 20): the layer on its kernel (--pipeline, else the model's code path, as blindmap). */
static int plot_gradient(const abl_cli_cmd *cmd, const char **v, const plot_layer *L, abl_plot *p)
{
    int rc = 0;
    if (L->npipes <= 0 && L->default_pipeline != NULL && (rc = abl_cli_pipeline_spec(L->default_pipeline, &L->specs[0])) != 0)
        return rc;
    const abl_pipeline_spec *pipe = L->npipes > 0 || L->default_pipeline != NULL ? &L->specs[0] : NULL;
    return abl_cli_plot_gradient(cmd, v, L->layer, pipe, L->label, p);
}

/* The formats: the model's (else bf16), or --dtype (a list for fraction, one format for the others). */
static int plot_formats(const char *s, const char *kind, const abl_model *model, const abl_model_spec *spec,
                        abl_format *formats, size_t *nformats)
{
    *nformats = 1;
    if (abl_format_lookup(model != NULL && model->dtype != NULL ? model->dtype : "bf16", &formats[0]) != ABL_OK)
        abl_format_lookup("bf16", &formats[0]);
    if (model == NULL && spec != NULL)
        formats[0] = spec->dtype;
    if (s != NULL) {
        if (strcmp(kind, "fraction") != 0) {
            char *why = abl_cli_printf("plot %s draws one format (plot fraction takes a list)", kind);
            if (why == NULL)
                return abl_cli_internal_error("out of memory");
            int bad = abl_cli_dtype_one("dtype", s, why, &formats[0]);
            free(why);
            if (bad)
                return ABL_EXIT_USAGE;
        } else if (abl_cli_dtype_list("dtype", s, formats, PLOT_MAX_LIST, nformats)) {
            return ABL_EXIT_USAGE;
        }
    }
    return 0;
}

/* --pipeline s: a list of presets for fraction, one spec (which may hold field=value commas) for blindmap,
 * each parsed once into specs[i] (the caller frees them); pipes point into *pipecopy (the caller frees it).
 * 0, or the exit status after the error. */
static int plot_pipelines(const char *s, const char *kind, abl_pipeline_spec *specs, char **pipecopy, char **pipes,
                          int *npipes)
{
    *pipecopy = NULL;
    *npipes = 0;
    if (s == NULL)
        return 0;
    if ((*pipecopy = strdup(s)) == NULL)
        return abl_cli_internal_error("out of memory");
    /* fraction: a list of presets; blindmap: one spec (which may hold field=value commas) */
    if (strcmp(kind, "fraction") == 0)
        *npipes = split_list(*pipecopy, pipes, PLOT_MAX_LIST);
    else
        pipes[0] = *pipecopy, *npipes = (*pipecopy)[0] ? 1 : -1;
    if (*npipes < 0) {
        free(*pipecopy);
        *pipecopy = NULL;
        return abl_cli_usage_error("--pipeline: '%s' is not a comma-separated list of pipelines", s);
    }
    for (int i = 0; i < *npipes; i++) {
        int prc = abl_cli_pipeline_spec(pipes[i], &specs[i]);
        if (prc != 0) {
            free(*pipecopy);
            *pipecopy = NULL;
            return prc;
        }
    }
    return 0;
}

/* plot bias: the bias of each head against distance, and the threshold. */
static abl_status plot_bias(const plot_layer *L, abl_plot *p)
{
    abl_plot_bias_config c;
    abl_plot_bias_config_default(&c);
    c.format = L->layer->format;
    c.convention = L->layer->convention;
    c.heads = L->layer->heads;
    c.slopes = abl_layer_schedule(L->layer);
    c.model = L->label;
    if (L->layer->context)
        c.max_distance = L->layer->context;
    return abl_plot_bias(&c, p);
}

/* The one argument: the picture's kind. 0, or the exit status after the error. */
static int plot_kind(int npos, char **pos)
{
    static const char *const kinds = "bias, fraction, blindmap, mitigations or gradient";
    if (npos == 0)
        return abl_cli_usage_error("plot: which picture? (%s)", kinds);
    if (npos > 1)
        return abl_cli_usage_error("plot: unexpected argument '%s'", pos[1]);
    const char *kind = pos[0];
    if (strcmp(kind, "bias") != 0 && strcmp(kind, "fraction") != 0 && strcmp(kind, "blindmap") != 0 &&
        strcmp(kind, "mitigations") != 0 && strcmp(kind, "gradient") != 0)
        return abl_cli_usage_error("plot: '%s' is not a picture this tool draws (%s)", kind, kinds);
    return 0;
}

/* The schedule, parsed here once: --slopes (*slopes on entry), else the catalogue entry's, else the config's
 * (a value); *slopes is its text (NULL: press). 0, or the exit status after the error. */
static int plot_schedule(const abl_model *model, const abl_model_spec *spec, abl_schedule_spec *sched,
                         const char **slopes)
{
    abl_status pst = ABL_OK;
    if (*slopes != NULL) {
        if (abl_cli_slopes(*slopes, sched))
            return ABL_EXIT_USAGE;
    } else if (model != NULL || spec != NULL) {
        pst = model != NULL ? abl_model_schedule(model, sched) : abl_model_spec_schedule(spec, sched);
        *slopes = sched->text != NULL ? sched->text : "press"; /* display: "press", "mpt:8" */
    }
    if (pst != ABL_OK)
        return abl_cli_usage_error("--slopes: '%s': %s", *slopes, abl_cli_why(pst, NULL));
    return 0;
}

/* The layer's heads (the model's, the config's, else 16; --heads over them) and its schedule
 * (plot_schedule; *slopes its text). 0, or the exit status after the error. */
static int plot_heads(const abl_cli_cmd *cmd, const char **v, const abl_model *model, const abl_model_spec *spec,
                      abl_layer *l, const char **slopes)
{
    const char *s;
    long heads = model != NULL ? model->heads : spec != NULL ? spec->heads : 16;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) && abl_cli_int("heads", s, 1, ABL_PLOT_MAX_HEADS, &heads))
        return ABL_EXIT_USAGE;
    *slopes = abl_cli_arg(cmd, v, ABL_OPT_SLOPES);
    if (plot_schedule(model, spec, &l->schedule, slopes))
        return ABL_EXIT_USAGE;
    l->has_schedule = *slopes != NULL;
    if (*slopes != NULL && abl_cli_arg(cmd, v, ABL_OPT_HEADS) == NULL && model == NULL && spec == NULL &&
        (l->schedule.kind == ABL_SCHEDULE_SLOPES || l->schedule.kind == ABL_SCHEDULE_TARGETS))
        heads = 0; /* the list gives H */
    l->heads = (int)heads;
    return 0;
}

/* The code path a blindmap draws without --pipeline: the catalogue model's default, else the config's. */
static const char *default_pipeline(const abl_model *model, const abl_model_spec *spec)
{
    if (model != NULL && model->family != NULL && model->family->npaths > 0)
        return model->family->paths[0].pipeline;
    return spec != NULL ? spec->pipeline.text : NULL;
}

static int plot_draw(const abl_cli_ctx *cli, const abl_cli_cmd *cmd, const char **v, const char *kind,
                     const plot_layer *Lp, const abl_plot_render_options *ro);

/* An encoder (bidirectional attention) for a kind that draws a causal layer (gradient): one line, exit 2.
 * bias draws per-distance biases and per-head δ, the same for |i - j| (docs/method.md: δ per head is
 * unchanged); fraction draws the bidirectional fractions; blindmap the whole N x N map; mitigations takes
 * no model. */
static int plot_encoder_refused(const char *kind, const abl_cli_model_choice *c)
{
    const abl_model_family *f = c->model != NULL ? c->model->family : c->spec.family;
    if (f == NULL || f->attention != ABL_ATTENTION_BIDIRECTIONAL)
        return 0;
    return abl_cli_usage_error("plot %s: %s is an encoder (bidirectional attention, family %s); plot %s draws the "
                               "causal last row's eager softmax backward: use plot fraction, bias or blindmap, or "
                               "analyze, check, simulate", kind,
                               c->model != NULL ? c->model->name : "the config's model", f->name, kind);
}

/* The picture of the layer the options describe (*l: initialised, the caller frees it; the lists of
 * formats, conventions and pipelines of fraction beside it); the --config spec is kept in *owned (the
 * caller frees it). */
static int plot_with(const abl_cli_ctx *cli, const abl_cli_cmd *cmd, const char **v, int npos, char **pos, abl_layer *l,
                     abl_pipeline_spec *specs, abl_model_spec *owned)
{
    if (plot_kind(npos, pos))
        return ABL_EXIT_USAGE;
    const char *kind = pos[0];
    const char *path = abl_cli_arg(cmd, v, ABL_OPT_OUTPUT);
    if (path == NULL)
        return abl_cli_usage_error("plot: --output FILE is required (.png, .svg or .pdf)");
    abl_plot_render_options ro;
    if (abl_cli_plot_target(abl_cli_arg(cmd, v, ABL_OPT_DEVICE), path, abl_cli_arg(cmd, v, ABL_OPT_WIDTH),
                            abl_cli_arg(cmd, v, ABL_OPT_HEIGHT), &ro))
        return ABL_EXIT_USAGE;
    if (plot_uses(v, kind))
        return ABL_EXIT_USAGE;
    /* The layer: --model first, then --heads/--slopes/--dtype override it. */
    const char *s;
    abl_cli_model_choice choice;
    int rc0 = abl_cli_model_choose(v, &choice);
    /* an encoder: plot fraction draws its bidirectional fractions (end row, N x N), bias its biases, blindmap
     * its N x N map; gradient draws a causal last row's backward and refuses it */
    if (rc0 == 0 && strcmp(kind, "gradient") == 0 &&
        (rc0 = plot_encoder_refused(kind, &choice)) != 0) {
        abl_model_spec_free(&choice.spec);
        abl_cli_model_choice_release(&choice);
    }
    if (rc0 == 0)   /* plot takes no --attention: the model's own */
        l->attention = abl_cli_model_attention(&choice);
    if (rc0 != 0)
        return rc0;
    const abl_model *model = choice.model;
    *owned = choice.spec;
    const abl_model_spec spec = choice.spec;
    int have_config = choice.config != NULL;
    abl_cli_model_choice_release(&choice); /* the path is not shown in a picture */
    const char *slopes = NULL;
    if (plot_heads(cmd, v, model, have_config ? &spec : NULL, l, &slopes))
        return ABL_EXIT_USAGE;
    abl_format formats[PLOT_MAX_LIST];
    size_t nformats = 1;
    if ((rc0 = plot_formats(abl_cli_arg(cmd, v, ABL_OPT_DTYPE), kind, model, have_config ? &spec : NULL, formats,
                            &nformats)) != 0)
        return rc0;
    abl_convention convs[ABL_CONV_COUNT] = {ABL_CONV_PAPER};
    size_t nconvs = 1;
    int rc = 0;
    if ((rc = plot_conventions(abl_cli_arg(cmd, v, ABL_OPT_CONVENTION), kind, convs, &nconvs)) != 0)
        return rc;
    l->format = formats[0];
    l->convention = convs[0];
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) &&
        abl_cli_context("ctx", s, strcmp(kind, "blindmap") == 0 ? 2 : 1,
                        strcmp(kind, "blindmap") == 0 ? ABL_PLOT_BLINDMAP_MAX_CONTEXT : ABL_MAX_CONTEXT, &l->context))
        return ABL_EXIT_USAGE;
    char *pipecopy = NULL, *pipes[PLOT_MAX_LIST];
    int npipes = 0;
    if ((rc = plot_pipelines(abl_cli_arg(cmd, v, ABL_OPT_PIPELINE), kind, specs, &pipecopy, pipes, &npipes)) != 0)
        return rc;
    const char *label = model != NULL ? model->name : have_config && spec.model_type != NULL && spec.model_type[0] ? spec.model_type : NULL;
    abl_cli_bar bar;
    abl_cli_bar_init(cli, &bar, "plot", cmd, v);
    const plot_layer L = {formats, nformats, convs, nconvs, specs, npipes, l, slopes, label,
                          default_pipeline(model, have_config ? &spec : NULL), {abl_cli_bar_update, &bar}};
    rc = plot_draw(cli, cmd, v, kind, &L, &ro);
    abl_cli_bar_finish(&bar);
    free(pipecopy);
    return rc;
}

/* The picture of kind `kind` for the layer L, written to --output (and its data to --data). */
static int plot_draw(const abl_cli_ctx *cli, const abl_cli_cmd *cmd, const char **v, const char *kind,
                     const plot_layer *Lp, const abl_plot_render_options *ro)
{
    const plot_layer L = *Lp;
    const char *data = abl_cli_arg(cmd, v, ABL_OPT_DATA);
    if (data != NULL && abl_cli_same_file(data, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT)))
        return abl_cli_usage_error("--data: '%s' is the picture's file too (give the data its own .csv)", data);
    int rc = 0;
    abl_plot p;
    memset(&p, 0, sizeof p);
    abl_status st = ABL_OK;
    char *err = NULL;
    if (strcmp(kind, "bias") == 0) {
        st = plot_bias(&L, &p);
    } else if (strcmp(kind, "fraction") == 0) {
        rc = plot_fraction(cmd, v, &L, &p, &err);
    } else if (strcmp(kind, "mitigations") == 0) {
        st = abl_plot_mitigations(&L.formats[0], L.convs[0], &p);
    } else {
        rc = strcmp(kind, "gradient") == 0 ? plot_gradient(cmd, v, &L, &p) : plot_blindmap(cmd, v, &L, &p, &err);
    }
    if (rc == 0 && st != ABL_OK)
        rc = plot_status(st, L.slopes_text, err);
    free(err);
    if (rc != 0)
        return rc;
    rc = abl_cli_plot_write(cli, &p, ro, "output", abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
    abl_cli_outfile o;
    if (rc == 0 && data != NULL && (rc = abl_cli_outfile_open(cli, &o, "data", data)) == 0) {
        if (abl_plot_data_csv(&p, o.f) != ABL_OK) {
            abl_cli_outfile_abort(&o);
            rc = abl_cli_internal_error("--data: cannot write '%s'", data);
        } else {
            rc = abl_cli_outfile_commit(&o);
        }
    }
    abl_plot_free(&p);
    return rc;
}

static int run_plot(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    abl_layer l;
    abl_layer_init(&l);
    abl_pipeline_spec specs[PLOT_MAX_LIST];
    memset(specs, 0, sizeof specs);
    abl_model_spec spec;
    memset(&spec, 0, sizeof spec);
    int rc = plot_with(ctx, cmd, v, npos, pos, &l, specs, &spec);
    abl_layer_free(&l);
    abl_model_spec_free(&spec);
    for (size_t i = 0; i < PLOT_MAX_LIST; i++)
        abl_pipeline_spec_free(&specs[i]);
    return rc;
}

const abl_cli_cmd abl_cli_plot_cmd = {
    "plot",
    "pictures of the paper's figures for any layer (PNG, SVG or PDF, drawn with PLplot)",
    "bias|fraction|blindmap|mitigations|gradient [options] --output FILE",
    "bias: the paper's Figure 1a for any layer: each head's bias -m·d against the token distance d,\n"
    "the threshold τ of the chosen format and convention as a dashed line, and each head's δ marked\n"
    "(o) where its line reaches τ.\n"
    "fraction: Figure 1b: the row and matrix underflow fractions against the context N (log N up to\n"
    "--ctx, or --linear), one pair of curves per --dtype and --convention (lists), and per real\n"
    "kernel with --pipeline (the exact zero-logit predictor at every N, N <= 65536). An encoder's\n"
    "model (bidirectional attention) draws its end row i = N - 1 and its whole N x N matrix; bias\n"
    "draws an encoder as any layer (|i - j|: the same biases and δ); blindmap draws its whole N x N\n"
    "map (nothing masked); gradient draws a causal layer and refuses an encoder.\n"
    "blindmap: the N x N weights of one head (--head, or 0 for every head) emulated through a real\n"
    "kernel (simulate, N <= 8192), exactly-zero weights shaded: where attention goes blind; causal:\n"
    "the masked future grey; an encoder (bidirectional): every row over all N keys.\n"
    "mitigations: δ of the nine heads of each of Table 8's mitigation combinations, log10 δ, with\n"
    "the * (10^9 < δ < 2^1024) and ** (δ >= 2^1024) regions shaded.\n"
    "gradient: per head, the first blind distance of the forward weight and of the rounded gradient\n"
    "dS = P (dP - D) for |dP - D| x loss scale = 2^j (--upstream, --loss-scale), zero logits, on the\n"
    "kernel (the zero-logit predictors; eager softmax backwards, and the memory-efficient SDPA and\n"
    "FlashAttention-2 ones, modelled from source, not measured: spec §15).\n"
    "Colours are colour-blind safe (Okabe-Ito; viridis ordered by slope for many heads).\n"
    "The picture format comes from the --output extension (.png, .svg, .pdf) or --device; the\n"
    "same inputs give the same bytes.\n\n"
    "Example: alibi-blind plot bias --heads 16 --output fig1a.png",
    plot_opts,
    sizeof plot_opts / sizeof plot_opts[0],
    run_plot,
    NULL,
};

/* ---------------------------------------------------------------- plot KIND --help */

/* Each kind's own help: what it draws and only the options it takes (plot_uses refuses the others). */
#define PLOT_PICTURE_OPTS                                                                                      \
    ABL_USE(ABL_OPT_DATA), ABL_USE(ABL_OPT_DEVICE)
#define PLOT_PAGE_OPTS                                                                                         \
    ABL_USE(ABL_OPT_HEIGHT), {ABL_OPT_OUTPUT, 0, NULL, "the picture (required; written atomically)"}

static const abl_cli_use bias_opts[] = {
    {ABL_OPT_CONFIG, 0, NULL, "heads, slopes and dtype of a Hugging Face config.json"},
    ABL_USE(ABL_OPT_CONVENTION),
    {ABL_OPT_CTX, 0, NULL, "right end of the distance axis d (default 4096, or the model's context)"},
    PLOT_PICTURE_OPTS,
    {ABL_OPT_DTYPE, 0, NULL, "floating-point format (default bf16, or the model's)"},
    {ABL_OPT_HEADS, 0, NULL, "number of heads (default 16, as in the paper)"},
    PLOT_PAGE_OPTS,
    {ABL_OPT_MODEL, 0, NULL, "heads, slopes and dtype of a catalogued model (alibi-blind models)"},
    ABL_USE(ABL_OPT_SLOPES),
    ABL_USE(ABL_OPT_WIDTH),
};

static const abl_cli_use fraction_opts[] = {
    {ABL_OPT_CONFIG, 0, NULL, "heads, slopes and dtype of a Hugging Face config.json"},
    {ABL_OPT_CONVENTION, 0, "LIST", "comma-separated conventions (paper, ftz, ieee, subnormal; default paper)"},
    {ABL_OPT_CTX, 0, NULL, "right end of the N axis (default 65536; 4096 with --linear)"},
    PLOT_PICTURE_OPTS,
    {ABL_OPT_DTYPE, 0, "LIST", "comma-separated formats (default bf16, or the model's)"},
    ABL_USE(ABL_OPT_FORCE),
    {ABL_OPT_HEADS, 0, NULL, "number of heads (default 16, as in the paper)"},
    PLOT_PAGE_OPTS,
    ABL_USE(ABL_OPT_LINEAR),
    {ABL_OPT_MODEL, 0, NULL, "heads, slopes and dtype of a catalogued model (alibi-blind models)"},
    {ABL_OPT_PIPELINE, 0, "LIST", "real kernels to overlay (the exact zero-logit predictor at every N <= 65536)"},
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_QUIET),
    ABL_USE(ABL_OPT_SLOPES),
    ABL_USE(ABL_OPT_WIDTH),
};

static const abl_cli_use blindmap_opts[] = {
    {ABL_OPT_CONFIG, 0, NULL, "heads, slopes, dtype and kernel of a Hugging Face config.json"},
    {ABL_OPT_CTX, 0, NULL, "the context N of the N x N map (2 to 8192, default 2048)"},
    PLOT_PICTURE_OPTS,
    {ABL_OPT_DTYPE, 0, NULL, "the model's floating-point format (default bf16, or the model's)"},
    ABL_USE(ABL_OPT_FORCE),
    ABL_USE(ABL_OPT_HEAD),
    {ABL_OPT_HEADS, 0, NULL, "number of heads (default 16, as in the paper)"},
    PLOT_PAGE_OPTS,
    {ABL_OPT_MODEL, 0, NULL, "heads, slopes, dtype and default code path of a catalogued model"},
    {ABL_OPT_PIPELINE, 0, NULL, "the kernel emulated (default: the model's code path, else eager)"},
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_QUIET),
    ABL_USE(ABL_OPT_SLOPES),
    ABL_USE(ABL_OPT_WIDTH),
};

static const abl_cli_use mitigations_opts[] = {
    ABL_USE(ABL_OPT_CONVENTION),
    PLOT_PICTURE_OPTS,
    {ABL_OPT_DTYPE, 0, NULL, "floating-point format (default bf16)"},
    PLOT_PAGE_OPTS,
    ABL_USE(ABL_OPT_WIDTH),
};

#define PLOT_KIND_CMD(kind, usage, text, opts)                                                                  \
    {"plot", "draw " kind ": " usage, kind " [options] --output FILE", text "\n\nThe picture format comes from "  \
     "the --output extension (.png, .svg, .pdf) or --device; --data FILE.csv writes the plotted data beside "      \
     "it; the same inputs give the same bytes.", opts, sizeof opts / sizeof opts[0], run_plot, NULL}

static const abl_cli_cmd plot_kind_cmds[] = {
    PLOT_KIND_CMD("bias", "the paper's Figure 1a for any layer",
                  "Each head's bias -m·d against the token distance d (colour and dash pattern per head, ordered "
                  "by slope), the threshold τ of the chosen format and convention as a dashed vermillion line, and "
                  "each head's δ marked (○) where its line reaches τ.\n\n"
                  "Example: alibi-blind plot bias --model bloom-560m --output bias.png",
                  bias_opts),
    PLOT_KIND_CMD("fraction", "the paper's Figure 1b for any layer",
                  "The row and matrix underflow fractions against the context N (log N, or --linear), one pair "
                  "of curves per --dtype and --convention: dash pattern per convention, glyph per dtype (filled "
                  "for the row, open for the matrix). --pipeline adds the kernels' own curves from the exact "
                  "zero-logit predictor (N <= 65536; one prediction per point, under the work budget).\n\n"
                  "Example: alibi-blind plot fraction --dtype bf16 --convention paper,ieee --output f.svg",
                  fraction_opts),
    PLOT_KIND_CMD("blindmap", "where attention goes blind, through a real kernel",
                  "The causal N x N weights of one head (--head, or 0 for every head as small multiples) "
                  "emulated through a kernel (simulate, N <= 8192), drawn square: cells with no weight exactly "
                  "zero white, some zero a middle blue, every weight zero dark blue, the masked future (key "
                  "after query) grey; a legend says which is which.\n\n"
                  "Example: alibi-blind plot blindmap --model bloom-560m --ctx 2048 --output map.png",
                  blindmap_opts),
    PLOT_KIND_CMD("mitigations", "δ under the paper's mitigations (Table 8)",
                  "δ of the nine heads of each of Table 8's mitigation combinations (glyph and dash pattern per "
                  "combination), log10 δ with numbers up to 10^9; above, the * (10^9 < δ < 2^1024) and ** (δ ≥ "
                  "2^1024: beyond binary64, or never) regions are marked, not scaled: a point there is not at its "
                  "value.\n\n"
                  "Example: alibi-blind plot mitigations --dtype fp16 --output table8.pdf",
                  mitigations_opts),
};

const abl_cli_cmd *abl_cli_plot_kind_help(const char *kind)
{
    for (size_t i = 0; kind != NULL && i < sizeof plot_kind_cmds / sizeof plot_kind_cmds[0]; i++)
        if (strncmp(plot_kind_cmds[i].usage, kind, strlen(kind)) == 0 && plot_kind_cmds[i].usage[strlen(kind)] == ' ')
            return &plot_kind_cmds[i];
    return NULL;
}
