/* alibi-blind: a model's layer with the flat arguments over it (abl_flat_setup_resolve), the flat twin of the
 * CLI's abl_cli_setup_resolve: the same order of resolution, the same value sources ("option --ctx",
 * "catalogue: ...") and the same report lines, so that the documents equal the CLI's. What both do once the
 * values are typed is one copy below them (abl/model/setup.h: the sources line, code paths, keyed slopes);
 * the steps here name the flat arguments in their errors. tests/python/test_equal_cli.py runs both. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "abl/core/format.h"
#include "abl/model/catalogue.h"
#include "abl/model/setup.h"
#include "abl/report/report.h"
#include "abl_internal.h"
#include "compose/abl_flat_internal.h"

void abl_flat_setup_free(abl_flat_setup *s)
{
    for (size_t i = 0; i < ABL_FLAT_MAX_OWNED; i++)
        free(s->owned[i]);
    if (s->have_layer)
        abl_layer_free(&s->layer);
    abl_model_spec_free(&s->spec);
    for (size_t i = 0; i < s->nsources; i++)
        free(s->sources[i].from);
    memset(s, 0, sizeof *s);
}

static char *own(abl_flat_setup *s, char *p)
{
    for (size_t i = 0; p != NULL && i < ABL_FLAT_MAX_OWNED; i++)
        if (s->owned[i] == NULL)
            return s->owned[i] = p;
    free(p);
    return NULL;
}

static void note_source(abl_flat_setup *s, const char *what, const abl_source *src)
{
    abl_setup_note_source(s->sources, &s->nsources, ABL_FLAT_MAX_SOURCES, what, src);
}

/* An argument given: the CLI's option of the same name, as the documents name it. */
static abl_source option_source(const char *opt)
{
    return (abl_source){ABL_ORIGIN_OPTION, opt};
}

/* "catalogue: bloom-7b1: heads, dtype; option --ctx: context" and {"heads": "...", ...} (abl_setup_sources_build). */
static abl_status build_sources(abl_flat_setup *s)
{
    char *ts = NULL, *js = NULL;
    abl_status st = abl_setup_sources_build(s->sources, s->nsources, &ts, &js);
    if (st != ABL_OK)
        return st;
    s->meta[s->nmeta++] = (abl_compare_meta){"sources", "values from", own(s, ts), own(s, js)};
    return ABL_OK;
}

abl_flat_result *abl_flat_config_read(const char *config, abl_model_spec *spec, char **path)
{
    struct stat sb;
    size_t n = strlen(config);
    int dir = stat(config, &sb) == 0 && S_ISDIR(sb.st_mode);
    *path = dir ? abl_strf("%s%sconfig.json", config, n > 0 && config[n - 1] == '/' ? "" : "/") : abl_strf("%s", config);
    if (*path == NULL)
        return abl_flat_fail(ABL_ERR_NO_MEMORY, "out of memory");
    char *err = NULL;
    abl_status st = abl_model_spec_from_file(*path, spec, &err);
    abl_flat_result *e = st == ABL_OK ? NULL : abl_flat_fail(st, "config: %s: %s", *path, err ? err : abl_status_message(st));
    free(err);
    return e;
}

/* config: a file, or a folder holding config.json (the path shown is owned by s). */
static abl_flat_result *read_config(const char *config, abl_flat_setup *s, const char **shown)
{
    char *path = NULL;
    abl_flat_result *e = abl_flat_config_read(config, &s->spec, &path);
    *shown = own(s, path);
    return e;
}

/* The "model"/"config" line and the model's layer (the defaults without either). */
static abl_flat_result *setup_model(const abl_flat_model_args *a, abl_flat_setup *s)
{
    if (a->model != NULL && a->config != NULL)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "model and config exclude each other");
    const abl_model *m = NULL;
    const char *shown = NULL;
    char *t = NULL, *j = NULL;
    abl_flat_result *e = NULL;
    if (a->model != NULL) {
        if ((m = abl_model_find(a->model)) == NULL) {
            const abl_model *near = abl_model_suggest(a->model);
            return near != NULL ? abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "model: unknown model '%s' (did you mean '%s'? "
                                                "models() lists them)", a->model, near->name)
                                : abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "model: unknown model '%s' (models() lists "
                                                "them, or use config=)", a->model);
        }
        if (abl_model_spec_from_catalogue(m, &s->spec) != ABL_OK)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "model: %s: its head count was not found in a published "
                                 "configuration (docs/models.md); use config= with the model's config.json", m->name);
        t = m->hf_id ? abl_strf("%s (%s)", m->name, m->hf_id) : abl_strf("%s", m->name);
        j = abl_report_json_string(m->name);
    } else if (a->config != NULL) {
        if ((e = read_config(a->config, s, &shown)) != NULL)
            return e;
        const char *fam = s->spec.family ? s->spec.family->name : "generic ALiBi";
        t = abl_strf("%s (model_type %s, %s)", shown,
                     s->spec.model_type != NULL && s->spec.model_type[0] ? s->spec.model_type : "(none)", fam);
        j = abl_report_json_string(shown);
    } else {
        abl_layer_init(&s->layer);
        s->have_layer = 1;
        return NULL;
    }
    s->have_model = 1;
    if ((t = own(s, t)) == NULL || (j = own(s, j)) == NULL)
        return abl_flat_fail(ABL_ERR_NO_MEMORY, "out of memory");
    s->meta[s->nmeta++] = (abl_compare_meta){m ? "model" : "config", m ? "model" : "config", t, j};
    char *msg = NULL;
    abl_status st = abl_layer_from_model(&s->spec, &s->layer, &msg);
    e = st == ABL_OK ? NULL : abl_flat_fail(st, "%s: %s", m ? "model" : "config", msg ? msg : abl_status_message(st));
    free(msg);
    s->have_layer = st == ABL_OK;
    return e;
}

static abl_flat_result *setup_dtype(const abl_flat_model_args *a, const char *command, abl_flat_setup *s)
{
    abl_source src;
    if (a->dtype != NULL) {
        if (strchr(a->dtype, ',') != NULL || strcmp(a->dtype, "all") == 0)
            return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "dtype: '%s' is a list, but %s runs one model dtype",
                                 a->dtype, command);
        const char *amb = abl_format_ambiguous(a->dtype);
        if (amb != NULL)
            return abl_flat_fail(ABL_ERR_UNKNOWN_DTYPE, "dtype: '%s' is ambiguous: %s", a->dtype, amb);
        if (abl_format_lookup(a->dtype, &s->layer.format) != ABL_OK)
            return abl_flat_fail(ABL_ERR_UNKNOWN_DTYPE, "dtype: unknown floating-point format '%s' (known: %s, "
                                 "torch.<dtype>, ml_dtypes names, or eXmY)", a->dtype, abl_format_names());
        src = option_source("--dtype");
    } else if (s->have_model) {
        src = s->spec.dtype_src;
    } else {
        src = (abl_source){ABL_ORIGIN_DEFAULT, "bf16"};
    }
    note_source(s, "dtype", &src);
    return NULL;
}

static abl_flat_result *setup_heads_slopes(const abl_flat_model_args *a, const char *command, abl_flat_setup *s)
{
    abl_layer *l = &s->layer;
    if (a->heads < 0 || a->heads > ABL_MAX_HEADS)
        return abl_flat_fail(ABL_ERR_HEADS_RANGE, "heads: %d is out of range (1 to %d)", a->heads, ABL_MAX_HEADS);
    abl_source src = option_source("--heads");
    if (a->heads > 0) {
        l->heads = a->heads;
        note_source(s, "heads", &src);
    } else if (s->have_model) {
        note_source(s, "heads", &s->spec.heads_src);
    }
    if (a->slopes != NULL) {
        s->slopes = a->slopes;
        src = option_source("--slopes");
        note_source(s, "slopes", &src);
        abl_schedule_spec_free(&l->schedule);
        char *msg = NULL;
        abl_status st = abl_schedule_spec_parse(a->slopes, &l->schedule, &msg);
        abl_flat_result *e = st == ABL_OK ? NULL : abl_flat_fail(st, "slopes: '%s': %s", a->slopes,
                                                                  msg ? msg : abl_status_message(st));
        free(msg);
        if (e != NULL)
            return e;
        l->has_schedule = 1;
    } else if (s->have_model) {
        s->slopes = l->schedule.text != NULL ? l->schedule.text : "press";
        note_source(s, "slopes", &s->spec.slopes_src);
    }
    int list = l->has_schedule && (l->schedule.kind == ABL_SCHEDULE_SLOPES || l->schedule.kind == ABL_SCHEDULE_TARGETS);
    if (l->heads == 0 && !list)
        return abl_flat_fail(ABL_ERR_HEADS_RANGE, "%s: heads= is required (or model=/config=; except with "
                             "slopes:/targets: lists)", command);
    return NULL;
}

static abl_flat_result *setup_context(const abl_flat_model_args *a, const char *command, uint64_t max_ctx,
                                      abl_flat_setup *s)
{
    if (a->ctx > 0) {
        if (a->ctx > max_ctx)
            return abl_flat_fail(ABL_ERR_CONTEXT_RANGE, "ctx: %llu is out of range (1 to %llu)",
                                 (unsigned long long)a->ctx, (unsigned long long)max_ctx);
        s->layer.context = a->ctx;
        abl_source src = option_source("--ctx");
        note_source(s, "context", &src);
    } else if (s->have_model && s->layer.context > 0) {
        if (s->layer.context > max_ctx)
            return abl_flat_fail(ABL_ERR_CONTEXT_RANGE, "%s: the model's context %llu is beyond the kernel predictor's "
                                 "%llu; give ctx=", command, (unsigned long long)s->layer.context,
                                 (unsigned long long)max_ctx);
        note_source(s, "context", &s->spec.context_src);
    } else {
        return abl_flat_fail(ABL_ERR_CONTEXT_RANGE, "%s: ctx= is required%s", command,
                             s->have_model ? " (the model's configuration gives no context)" : "");
    }
    return NULL;
}

static abl_flat_result *setup_pipeline(const abl_flat_model_args *a, abl_flat_setup *s)
{
    abl_source src;
    const char *path_name = NULL;
    char *full = NULL;
    if (a->pipeline != NULL && a->pipeline[0] == '\0')
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "pipeline: empty (presets: %s)", abl_pipeline_preset_names());
    if (a->pipeline != NULL) {
        src = option_source("--pipeline");
        /* pipeline= as a code path of the model's family: that path's pipeline with the given fields after it */
        if (s->have_model && abl_setup_code_path_spec(&s->spec, a->pipeline, &full, &path_name) != ABL_OK)
            return abl_flat_fail(ABL_ERR_NO_MEMORY, "out of memory");
    } else if (s->have_model) {
        src = s->spec.pipeline_src;
        path_name = s->spec.path ? s->spec.path->name : NULL;
    } else {
        src = (abl_source){ABL_ORIGIN_DEFAULT, "eager"};
    }
    if (path_name != NULL)
        s->meta[s->nmeta++] = (abl_compare_meta){"code_path", "code path", path_name,
                                                 own(s, abl_report_json_string(path_name))};
    note_source(s, "pipeline", &src);
    char *msg = NULL;
    abl_status st = ABL_OK;
    if (a->pipeline != NULL) {
        abl_pipeline_spec_free(&s->layer.pipeline);
        st = abl_pipeline_spec_parse(full != NULL ? full : a->pipeline, &s->layer.pipeline, &msg);
        s->layer.has_pipeline = st == ABL_OK;
    }
    free(full);
    if (st == ABL_OK && (st = abl_layer_pipeline(&s->layer, &s->pipeline)) == ABL_OK)
        st = abl_pipeline_check_msg(&s->pipeline, &msg);
    abl_flat_result *e = st == ABL_OK ? NULL : abl_flat_fail(st, "pipeline: %s", msg ? msg : abl_status_message(st));
    free(msg);
    return e;
}

/* BTLM/jais alibi_scaling.train_seq_len T: the slopes a run of more than T keys uses (abl_setup_keys_scaling;
 * the CLI's setup does the same). slopes= wins. */
static abl_flat_result *setup_keys_scaling(abl_flat_setup *s)
{
    if (!s->have_model)
        return NULL;
    abl_status st = abl_setup_keys_scaling(&s->spec, &s->layer, &s->slopes, s->sources, s->nsources);
    if (st == ABL_ERR_NO_MEMORY)
        return abl_flat_fail(st, "out of memory");
    return st == ABL_OK ? NULL : abl_flat_fail(st, "the model's slope schedule: %s", abl_status_message(st));
}

abl_flat_result *abl_flat_setup_resolve(const abl_flat_model_args *a, const char *command, uint64_t max_ctx,
                                        abl_flat_setup *s)
{
    memset(s, 0, sizeof *s);
    abl_flat_result *e = setup_model(a, s);
    if (e == NULL)
        e = setup_dtype(a, command, s);
    if (e == NULL)
        e = setup_heads_slopes(a, command, s);
    if (e == NULL)
        e = setup_context(a, command, max_ctx, s);
    if (e == NULL)
        e = setup_keys_scaling(s);
    if (e == NULL)
        e = setup_pipeline(a, s);
    if (e == NULL && build_sources(s) != ABL_OK)
        e = abl_flat_fail(ABL_ERR_NO_MEMORY, "out of memory");
    return e;
}
