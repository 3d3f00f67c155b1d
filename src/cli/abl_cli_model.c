/* alibi-blind CLI: --model NAME / --config config.json and the options that override them, shared by
 * analyze, simulate and check. Explicit options win; every value remembers where it came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static char *printf_dup(const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, fmt, a, b ? b : "");
    return s;
}

void abl_cli_setup_free(abl_cli_setup *s)
{
    for (size_t i = 0; i < sizeof s->owned / sizeof s->owned[0]; i++)
        free(s->owned[i]);
    abl_schedule_spec_free(&s->schedule);
    abl_model_spec_free(&s->spec);
    for (size_t i = 0; i < s->nsources; i++)
        free(s->sources[i].from);
    memset(s, 0, sizeof *s);
}

static char *own(abl_cli_setup *s, char *p)
{
    for (size_t i = 0; p != NULL && i < sizeof s->owned / sizeof s->owned[0]; i++)
        if (s->owned[i] == NULL) {
            s->owned[i] = p;
            return p;
        }
    free(p);
    return NULL;
}

/* Record "what" as coming from src (for the grouped "values from" line and the JSON sources object). */
static void note_source(abl_cli_setup *s, const char *what, const abl_source *src)
{
    if (s->nsources < sizeof s->sources / sizeof s->sources[0]) {
        /* out of memory: the line is left out, and the report's own allocations fail next */
        if ((s->sources[s->nsources].from = abl_source_text(src)) == NULL)
            return;
        s->sources[s->nsources].what = what;
        s->nsources++;
    }
}

/* A source's field is static text: opt is a literal, "--opt" made at compile time. */
#define option_source(src, opt) ((src)->origin = ABL_ORIGIN_OPTION, (void)((src)->field = "--" opt))

/* "catalogue: bloom-7b1: heads, dtype; option --ctx: context" and {"heads": "...", ...}. */
static int build_sources(abl_cli_setup *s)
{
    size_t cap = 64, len = 0, jcap = 64, jlen = 0;
    for (size_t i = 0; i < s->nsources; i++) {
        cap += strlen(s->sources[i].from) + strlen(s->sources[i].what) + 8;
        jcap += strlen(s->sources[i].from) * 6 + strlen(s->sources[i].what) + 12;
    }
    char *t = malloc(cap), *j = malloc(jcap);
    if (t == NULL || j == NULL) {
        free(t);
        free(j);
        return -1;
    }
    t[0] = '\0';
    int done[16] = {0};
    for (size_t i = 0; i < s->nsources; i++) {
        if (done[i])
            continue;
        for (size_t k = i, first = 1; k < s->nsources; k++)
            if (!done[k] && strcmp(s->sources[k].from, s->sources[i].from) == 0) {
                len += (size_t)snprintf(t + len, cap - len, "%s%s", first ? (len ? "; " : "") : ", ",
                                        s->sources[k].what);
                done[k] = 1;
                first = 0;
            }
        len += (size_t)snprintf(t + len, cap - len, " (%s)", s->sources[i].from);
    }
    jlen += (size_t)snprintf(j + jlen, jcap - jlen, "{");
    for (size_t i = 0; i < s->nsources; i++) {
        char *q = abl_report_json_string(s->sources[i].from);
        if (q == NULL) {
            free(t);
            free(j);
            return -1;
        }
        jlen += (size_t)snprintf(j + jlen, jcap - jlen, "%s\"%s\": %s", i ? ", " : "", s->sources[i].what, q);
        free(q);
    }
    snprintf(j + jlen, jcap - jlen, "}");
    s->meta[s->nmeta++] = (abl_compare_meta){"sources", "values from", own(s, t), own(s, j)};
    return 0;
}

static int out_of_memory(void)
{
    return abl_cli_internal_error("out of memory");
}

int abl_cli_model_choose(const char **v, abl_cli_model_choice *c)
{
    memset(c, 0, sizeof *c);
    const char *model = v[ABL_OPT_MODEL], *config = v[ABL_OPT_CONFIG];
    if (model != NULL && config != NULL)
        return abl_cli_usage_error("--model and --config exclude each other");
    if (model != NULL && (c->model = abl_model_find(model)) == NULL)
        return abl_cli_unknown_model("--model", model);
    if (config != NULL) {
        char *err = NULL;
        abl_status st = abl_model_spec_from_file(config, &c->spec, &err);
        int rc = 0;
        if (st == ABL_ERR_NO_MEMORY)
            rc = out_of_memory();
        else if (st != ABL_OK)
            rc = abl_cli_usage_error("%s: %s", config, abl_cli_why(st, err));
        free(err);
        if (rc != 0)
            return rc;
        c->config = config;
    }
    return 0;
}

int abl_cli_setup_resolve(const abl_cli_cmd *cmd, const char **v, uint64_t max_ctx, abl_cli_setup *s)
{
    memset(s, 0, sizeof *s);
    const char *o;
    abl_cli_model_choice choice;
    int crc = abl_cli_model_choose(v, &choice);
    if (crc != 0)
        return crc;
    const char *config = choice.config;
    if (choice.model != NULL) {
        const abl_model *m = choice.model;
        if (abl_model_spec_from_catalogue(m, &s->spec) != ABL_OK)
            return abl_cli_usage_error("--model: %s: its head count was not found in a published configuration "
                                       "(docs/models.md); use --config with the model's config.json",
                                       m->name);
        s->have_model = 1;
        char *t = printf_dup(m->hf_id ? "%s (%s)" : "%s%s", m->name, m->hf_id ? m->hf_id : "");
        char *j = abl_report_json_string(m->name);
        if (t == NULL || j == NULL) {
            free(t);
            free(j);
            return out_of_memory();
        }
        s->meta[s->nmeta++] = (abl_compare_meta){"model", "model", own(s, t), own(s, j)};
    } else if (config != NULL) {
        s->spec = choice.spec;
        s->have_model = 1;
        const char *fam = s->spec.family ? s->spec.family->name : "generic ALiBi";
        char *t = abl_cli_printf("%s (model_type %s, %s)", config, s->spec.model_type[0] ? s->spec.model_type : "(none)",
                             fam);
        char *j = abl_report_json_string(config);
        if (t == NULL || j == NULL) {
            free(t);
            free(j);
            return out_of_memory();
        }
        s->meta[s->nmeta++] = (abl_compare_meta){"config", "config", own(s, t), own(s, j)};
    }

    /* dtype */
    abl_source src;
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) != NULL) {
        /* analyze splits a list before it gets here: simulate and check run one pipeline. */
        if (abl_cli_dtype_one("dtype", o, strcmp(cmd->name, "check") == 0 ? "check gates one model dtype (run it once "
                              "per dtype)" : ABL_CLI_ONE_PIPELINE, &s->dtype))
            return ABL_EXIT_USAGE;
        option_source(&src, "dtype");
    } else if (s->have_model) {
        s->dtype = s->spec.dtype;
        src = s->spec.dtype_src;
    } else {
        abl_format_lookup("bf16", &s->dtype);
        src = (abl_source){ABL_ORIGIN_DEFAULT, "bf16"};
    }
    note_source(s, "dtype", &src);

    /* heads and slopes */
    long heads = 0;
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) != NULL) {
        if (abl_cli_int("heads", o, 1, ABL_MAX_HEADS, &heads))
            return ABL_EXIT_USAGE;
        option_source(&src, "heads");
        note_source(s, "heads", &src);
    } else if (s->have_model) {
        heads = s->spec.heads;
        note_source(s, "heads", &s->spec.heads_src);
    }
    s->heads = (int)heads;
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_SLOPES)) != NULL) {
        s->slopes = o;
        option_source(&src, "slopes");
        note_source(s, "slopes", &src);
        s->schedule_status = abl_schedule_spec_parse(o, &s->schedule); /* the one parse of --slopes */
    } else if (s->have_model) {
        s->schedule_status = abl_model_spec_schedule(&s->spec, &s->schedule);
        s->slopes = s->schedule.text != NULL ? s->schedule.text : "press"; /* display: "press", "mpt:8" */
        note_source(s, "slopes", &s->spec.slopes_src);
    }
    /* A text that does not parse is reported after the other settings, where the run used to find it. */
    int list = s->slopes != NULL && s->schedule_status == ABL_OK &&
               (s->schedule.kind == ABL_SCHEDULE_SLOPES || s->schedule.kind == ABL_SCHEDULE_TARGETS);
    if (s->heads == 0 && s->schedule_status == ABL_OK && !list)
        return abl_cli_usage_error("%s: --heads H is required (or --model/--config; except with slopes:/targets: "
                                   "lists)", cmd->name);

    /* context */
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_CTX)) != NULL) {
        if (abl_cli_count("ctx", o, 1, max_ctx, &s->context))
            return ABL_EXIT_USAGE;
        option_source(&src, "ctx");
        note_source(s, "context", &src);
    } else if (s->have_model && s->spec.context > 0) {
        if (s->spec.context > max_ctx)
            return abl_cli_usage_error("%s: the model's context %llu is beyond the kernel predictor's %llu; give "
                                       "--ctx", cmd->name, (unsigned long long)s->spec.context,
                                       (unsigned long long)max_ctx);
        s->context = s->spec.context;
        note_source(s, "context", &s->spec.context_src);
    } else {
        return abl_cli_usage_error("%s: --ctx N is required%s", cmd->name,
                                   s->have_model ? " (the model's configuration gives no context)" : "");
    }

    /* pipeline: --pipeline PRESET[,FIELD=VALUE...] or a code path of the model's family */
    const char *spec = abl_cli_arg(cmd, v, ABL_OPT_PIPELINE);
    const char *path_name = NULL;
    if (spec != NULL && spec[0] == '\0')
        return abl_cli_usage_error("--pipeline: empty (presets: %s)", abl_pipeline_preset_names());
    if (spec != NULL) {
        option_source(&src, "pipeline");
        if (s->have_model && s->spec.family != NULL) {
            size_t n = strcspn(spec, ",");
            for (size_t i = 0; i < s->spec.family->npaths; i++) {
                const abl_code_path *p = &s->spec.family->paths[i];
                if (strlen(p->name) == n && strncmp(p->name, spec, n) == 0) {
                    char *full = printf_dup("%s%s", p->pipeline, spec + n);
                    if (full == NULL)
                        return out_of_memory();
                    spec = own(s, full);
                    path_name = p->name;
                }
            }
        }
    } else if (s->have_model) {
        spec = s->spec.pipeline.text;
        src = s->spec.pipeline_src;
        path_name = s->spec.path ? s->spec.path->name : NULL;
    } else {
        spec = "eager";
        src = (abl_source){ABL_ORIGIN_DEFAULT, "eager"};
    }
    if (path_name != NULL) {
        char *j = abl_report_json_string(path_name);
        if (j == NULL)
            return out_of_memory();
        s->meta[s->nmeta++] = (abl_compare_meta){"code_path", "code path", path_name, own(s, j)};
    }
    note_source(s, "pipeline", &src);
    int prc = abl_cli_pipeline(spec, &s->dtype, 1, &s->pipeline);
    if (prc != 0)
        return prc;
    s->pipeline_spec = spec;
    if (s->schedule_status == ABL_ERR_NO_MEMORY)
        return out_of_memory();
    if (s->schedule_status != ABL_OK)
        return abl_cli_usage_error("--slopes: '%s': %s", s->slopes, abl_cli_why(s->schedule_status, NULL));

    if (build_sources(s) != 0)
        return out_of_memory();
    return 0;
}

void abl_cli_compare_config(const abl_cli_setup *s, abl_compare_config *cc)
{
    memset(cc, 0, sizeof *cc);
    cc->dtype = s->dtype;
    cc->heads = s->heads;
    cc->slopes = s->slopes != NULL ? &s->schedule : NULL;
    cc->context = s->context;
    cc->pipeline = s->pipeline;
}

/* The budget of abl_compare_run (abl_compare_estimate: the paper's analysis and the predictor). */
static int compare_budget(const abl_cli_work *work, const abl_compare_config *cc)
{
    abl_cost cost;
    if (abl_compare_estimate(cc, &cost) != ABL_OK)
        return 0;
    return abl_cli_budget(work, &cost);
}

int abl_cli_compare(const abl_cli_ctx *ctx, const char *cmdname, const abl_compare_config *cc, const abl_cli_setup *s, abl_output out,
                    const char *path, const abl_check_limits *limits, abl_report **keep, const abl_cli_work *work)
{
    if (cc->pipeline.softmax == ABL_SOFTMAX_EAGER &&
        (cc->pipeline.sum != ABL_SUM_EXACT || cc->pipeline.exp != ABL_EXP_CORRECT))
        return abl_cli_usage_error("--pipeline: %s answers with the zero-logit predictor, which models sum=exact and "
                                   "exp=correct (got sum=%s, exp=%s; use simulate for the others)", cmdname,
                                   abl_sum_order_name(cc->pipeline.sum), abl_exp_model_name(cc->pipeline.exp));
    if (compare_budget(work, cc) != 0)
        return ABL_EXIT_USAGE;
    abl_compare c;
    abl_status st = abl_compare_run(cc, &c);
    const char *slopes = s != NULL && s->slopes != NULL ? s->slopes : cc->slopes != NULL ? cc->slopes->text : "press";
    if (st == ABL_ERR_HEADS_RANGE && cc->heads > 0 && cc->slopes != NULL)
        return abl_cli_usage_error("--slopes: the list '%s' does not have %d entries (the head count)", slopes,
                                   cc->heads);
    if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE)
        return abl_cli_usage_error("--slopes: '%s': %s", slopes, abl_cli_why(st, NULL));
    if (st == ABL_ERR_DEGENERATE)
        return abl_cli_usage_error("--slopes: '%s': a slope rounds to zero in slope-dtype=%s, or a target needs a "
                                   "non-zero tau of %s", slopes, cc->pipeline.slope_dtype.name, cc->dtype.name);
    if (st == ABL_ERR_SLOPE_CALC)
        return abl_cli_slope_calc_error(slopes, cc->pipeline.slope_calc);
    if (st == ABL_ERR_UNSUPPORTED)
        return abl_cli_usage_error("%s: the bias or the logits overflow to Inf/NaN in this pipeline at N = %llu",
                                   cmdname, (unsigned long long)cc->context);
    if (st == ABL_ERR_NO_MEMORY)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    if (st != ABL_OK)
        return abl_cli_usage_error("%s: %s", cmdname, abl_cli_why(st, NULL));
    abl_report *r = NULL;
    st = limits ? abl_check_report(&c, limits, s->meta, s->nmeta, &r) : abl_compare_report(&c, s->meta, s->nmeta, &r);
    int rc;
    if (st != ABL_OK) {
        rc = abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    } else if (keep != NULL) {
        *keep = r;
        r = NULL;
        rc = ABL_EXIT_OK;
    } else {
        rc = abl_cli_emit(ctx, r, out, path);
    }
    if (rc == ABL_EXIT_OK && limits != NULL && !abl_check_pass(&c, limits)) {
        /* The verdict is complete on stdout; the one stderr line says why the status is 1. */
        int worst = -1;
        for (int i = 0; i < c.heads; i++)
            if (c.results[i].first_blind >= 0 && (worst < 0 || c.results[i].first_blind < c.results[worst].first_blind))
                worst = i;
        if (worst >= 0)
            fprintf(stderr, "alibi-blind: check: fail: %d of %d heads blind inside %llu tokens (head %d from d = %lld)\n",
                    c.kernel_blind_heads, c.heads, (unsigned long long)cc->context, c.results[worst].slope.index,
                    (long long)c.results[worst].first_blind);
        else
            fprintf(stderr, "alibi-blind: check: fail\n");
        rc = ABL_EXIT_DIFFERS;
    }
    abl_report_free(r);
    abl_compare_free(&c);
    return rc;
}
