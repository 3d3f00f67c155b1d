/* alibi-blind CLI: --model NAME / --config config.json and the options that override them, shared by
 * analyze, simulate and check. Explicit options win; every value remembers where it came from. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    if (s->have_layer)
        abl_layer_free(&s->layer);
    abl_model_spec_free(&s->spec);
    free(s->schedule_msg);
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
    abl_setup_note_source(s->sources, &s->nsources, sizeof s->sources / sizeof s->sources[0], what, src);
}

/* A source's field is static text: opt is a literal, "--opt" made at compile time. */
#define option_source(src, opt) ((src)->origin = ABL_ORIGIN_OPTION, (void)((src)->field = "--" opt))

/* "catalogue: bloom-7b1: heads, dtype; option --ctx: context" and {"heads": "...", ...}. */
static int build_sources(abl_cli_setup *s)
{
    char *t = NULL, *j = NULL;
    if (abl_setup_sources_build(s->sources, s->nsources, &t, &j) != ABL_OK)
        return -1;
    s->meta[s->nmeta++] = (abl_compare_meta){"sources", "values from", own(s, t), own(s, j)};
    return 0;
}

static int out_of_memory(void)
{
    return abl_cli_internal_error("out of memory");
}

/* Read the config.json at path into c (c->config names it). who prefixes the error line: "" for the
 * --config FILE the user named, "--model org/name: " for a file found in the Hugging Face cache. */
static int read_config(const char *who, const char *path, abl_cli_model_choice *c)
{
    char *err = NULL;
    abl_status st = abl_model_spec_from_file(path, &c->spec, &err);
    int rc = 0;
    if (st == ABL_ERR_NO_MEMORY)
        rc = out_of_memory();
    else if (st != ABL_OK)
        rc = abl_cli_usage_error("%s%s: %s", who, path, abl_cli_why(st, err));
    free(err);
    if (rc == 0)
        c->config = path;
    return rc;
}

/* --config -: the config.json on standard input, bounded as a file is (ABL_CONFIG_MAX_BYTES). */
static int read_config_stdin(abl_cli_model_choice *c)
{
    char *err = NULL;
    abl_status st = abl_model_spec_from_stream(stdin, &c->spec, &err);
    int rc = 0;
    if (st == ABL_ERR_NO_MEMORY)
        rc = out_of_memory();
    else if (st != ABL_OK)
        rc = abl_cli_usage_error("--config -: standard input: %s", abl_cli_why(st, err));
    free(err);
    if (rc == 0)
        c->config = "standard input";
    return rc;
}

/* --config PATH: "-" is standard input, a folder (a downloaded snapshot) means its config.json, anything
 * else is the file itself. */
static int choose_config(const char *config, abl_cli_model_choice *c)
{
    if (strcmp(config, "-") == 0)
        return read_config_stdin(c);
    struct stat sb;
    if (stat(config, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return read_config("", config, c);
    size_t n = strlen(config);
    if ((c->owned_path = abl_cli_printf("%s%sconfig.json", config, n > 0 && config[n - 1] == '/' ? "" : "/")) == NULL)
        return out_of_memory();
    return read_config("", c->owned_path, c);
}

/* The Hugging Face hub cache, where huggingface_hub puts it: $HF_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. NULL: none can be named, or no memory
 * (*oom set). */
static char *hf_hub_dir(int *oom)
{
    const char *e;
    char *d = NULL;
    if ((e = getenv("HF_HUB_CACHE")) != NULL && e[0])
        d = abl_cli_printf("%s", e);
    else if ((e = getenv("HF_HOME")) != NULL && e[0])
        d = abl_cli_printf("%s/hub", e);
    else if ((e = getenv("XDG_CACHE_HOME")) != NULL && e[0])
        d = abl_cli_printf("%s/huggingface/hub", e);
    else if ((e = getenv("HOME")) != NULL && e[0])
        d = abl_cli_printf("%s/.cache/huggingface/hub", e);
    else
        return NULL;
    *oom = d == NULL;
    return d;
}

/* A name that is one path component of a repository id or revision ("bigscience", "bloom-560m", a commit
 * hash): no separator, no "." or "..", so a name never leads outside the cache. */
static int hf_component(const char *s, size_t n)
{
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.'))
            return 0;
    return 1;
}

/* The revision refs/main names (a commit hash on one line), malloc'd; NULL after the one-line error
 * (*rc set), the file named in it. */
static char *hf_revision(const char *model, const char *refs, int *rc)
{
    FILE *f = fopen(refs, "rb");
    if (f == NULL) {
        *rc = abl_cli_usage_error("--model %s: %s: cannot read: %s (the Hugging Face cache has no main revision of it)",
                                  model, refs, strerror(errno));
        return NULL;
    }
    /* a revision is a 40-digit hash: far more than that is not a refs file */
    size_t cap = 256, n;
    char *rev = malloc(cap + 1);
    if (rev == NULL) {
        fclose(f);
        *rc = out_of_memory();
        return NULL;
    }
    n = fread(rev, 1, cap + 1, f);
    fclose(f);
    while (n > 0 && n <= cap && isspace((unsigned char)rev[n - 1]))
        n--;
    if (n > cap || !hf_component(rev, n)) {
        free(rev);
        *rc = abl_cli_usage_error("--model %s: %s: not a revision", model, refs);
        return NULL;
    }
    rev[n] = '\0';
    return rev;
}

/* --model org/name that the catalogue does not have: the config.json of its main revision in the local
 * Hugging Face cache (no network). 0 with c->config set; -1 when the cache does not hold the repository
 * (the caller refuses the name); else the exit status after the one-line error. */
static int choose_hf_cache(const char *model, abl_cli_model_choice *c)
{
    const char *slash = strchr(model, '/');
    if (slash == NULL || !hf_component(model, (size_t)(slash - model)) || !hf_component(slash + 1, strlen(slash + 1)))
        return -1;
    int oom = 0;
    char *hub = hf_hub_dir(&oom);
    if (hub == NULL)
        return oom ? out_of_memory() : -1;
    char *repo = abl_cli_printf("%s/models--%.*s--%s", hub, (int)(slash - model), model, slash + 1);
    char *refs = repo ? abl_cli_printf("%s/refs/main", repo) : NULL;
    free(hub);
    struct stat sb;
    int rc = repo == NULL || refs == NULL ? out_of_memory() : stat(repo, &sb) != 0 || !S_ISDIR(sb.st_mode) ? -1 : 0;
    char *rev = rc == 0 ? hf_revision(model, refs, &rc) : NULL;
    if (rev != NULL) {
        char *who = abl_cli_printf("--model %s: ", model);
        if (who == NULL || (c->owned_path = abl_cli_printf("%s/snapshots/%s/config.json", repo, rev)) == NULL)
            rc = out_of_memory();
        else
            rc = read_config(who, c->owned_path, c);
        free(who);
    }
    free(rev);
    free(refs);
    free(repo);
    return rc;
}

/* A catalogue entry whose head count no published configuration gives: the one refusal every command
 * prints (not a later, misleading one about the slopes of zero heads). */
static int heads_unknown(const abl_model *m)
{
    return abl_cli_usage_error("--model: %s: its head count was not found in a published configuration "
                               "(docs/models.md); use --config with the model's config.json",
                               m->name);
}

int abl_cli_model_choose(const char **v, abl_cli_model_choice *c)
{
    memset(c, 0, sizeof *c);
    const char *model = v[ABL_OPT_MODEL], *config = v[ABL_OPT_CONFIG];
    if (model != NULL && config != NULL)
        return abl_cli_usage_error("--model and --config exclude each other");
    int rc = 0;
    if (config != NULL)
        rc = choose_config(config, c);
    else if (model != NULL && (c->model = abl_model_find(model)) == NULL) {
        /* not in the catalogue (which wins): the local Hugging Face cache, then the did-you-mean refusal */
        if ((rc = choose_hf_cache(model, c)) < 0)
            rc = abl_cli_unknown_model("--model", model);
    }
    if (rc == 0 && c->model != NULL && c->model->heads == 0 && v[ABL_OPT_HEADS] == NULL)
        rc = heads_unknown(c->model);   /* --heads H stands in for it where a command takes one */
    if (rc != 0)
        abl_cli_model_choice_release(c); /* a refused choice owns nothing: callers return at once */
    return rc;
}

void abl_cli_model_choice_release(abl_cli_model_choice *c)
{
    free(c->owned_path);
    c->owned_path = NULL;
    c->config = NULL;
}

/* --model NAME or --config FILE: the "model"/"config" line of the report, and the model's layer in
 * s->layer (the defaults without either). 0, or the exit status after the one-line error. */
static int setup_model(const char **v, abl_cli_setup *s)
{
    abl_cli_model_choice choice;
    int crc = abl_cli_model_choose(v, &choice);
    if (crc != 0)
        return crc;
    char *t = NULL, *j = NULL;
    if (choice.model != NULL) {
        const abl_model *m = choice.model;
        if (abl_model_spec_from_catalogue(m, &s->spec) != ABL_OK)
            return heads_unknown(m);
        t = printf_dup(m->hf_id ? "%s (%s)" : "%s%s", m->name, m->hf_id ? m->hf_id : "");
        j = abl_report_json_string(m->name);
    } else if (choice.config != NULL) {
        s->spec = choice.spec;
        const char *fam = s->spec.family ? s->spec.family->name : "generic ALiBi";
        t = abl_cli_printf("%s (model_type %s, %s)", choice.config,
                           s->spec.model_type != NULL && s->spec.model_type[0] ? s->spec.model_type : "(none)", fam);
        j = abl_report_json_string(choice.config);
        abl_cli_model_choice_release(&choice); /* t and j hold the path now */
    } else {
        abl_layer_init(&s->layer);
        s->have_layer = 1;
        return 0;
    }
    s->have_model = 1;
    if (t == NULL || j == NULL) {
        free(t);
        free(j);
        return out_of_memory();
    }
    s->meta[s->nmeta++] = (abl_compare_meta){choice.model ? "model" : "config", choice.model ? "model" : "config",
                                             own(s, t), own(s, j)};
    char *msg = NULL;
    abl_status st = abl_layer_from_model(&s->spec, &s->layer, &msg);
    int rc = st == ABL_OK ? 0 : msg == NULL ? out_of_memory()
                                            : abl_cli_usage_error("--%s: %s", choice.model ? "model" : "config", msg);
    free(msg);
    s->have_layer = st == ABL_OK;
    return rc;
}

/* --dtype over the model's (the layer's format). */
static int setup_dtype(const abl_cli_cmd *cmd, const char **v, abl_cli_setup *s)
{
    abl_source src;
    const char *o = abl_cli_arg(cmd, v, ABL_OPT_DTYPE);
    if (o != NULL) {
        /* analyze splits a list before it gets here: simulate and check run one pipeline. */
        if (abl_cli_dtype_one("dtype", o, strcmp(cmd->name, "check") == 0 ? "check gates one model dtype (run it once "
                              "per dtype)" : ABL_CLI_ONE_PIPELINE, &s->layer.format))
            return ABL_EXIT_USAGE;
        option_source(&src, "dtype");
    } else if (s->have_model) {
        src = s->spec.dtype_src;
    } else {
        src = (abl_source){ABL_ORIGIN_DEFAULT, "bf16"}; /* abl_layer_init's format */
    }
    note_source(s, "dtype", &src);
    return 0;
}

/* --heads and --slopes over the model's. A --slopes text that does not parse is reported after the other
 * settings (s->schedule_status), where the run used to find it. */
static int setup_heads_slopes(const abl_cli_cmd *cmd, const char **v, abl_cli_setup *s)
{
    abl_source src;
    abl_layer *l = &s->layer;
    long heads = 0;
    const char *o;
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) != NULL) {
        if (abl_cli_int("heads", o, 1, ABL_MAX_HEADS, &heads))
            return ABL_EXIT_USAGE;
        l->heads = (int)heads;
        option_source(&src, "heads");
        note_source(s, "heads", &src);
    } else if (s->have_model) {
        note_source(s, "heads", &s->spec.heads_src);
    }
    if ((o = abl_cli_arg(cmd, v, ABL_OPT_SLOPES)) != NULL) {
        s->slopes = o;
        option_source(&src, "slopes");
        note_source(s, "slopes", &src);
        abl_schedule_spec_free(&l->schedule);
        s->schedule_status = abl_schedule_spec_parse(o, &l->schedule, &s->schedule_msg); /* the one parse of --slopes */
        l->has_schedule = s->schedule_status == ABL_OK;
    } else if (s->have_model) {
        s->slopes = l->schedule.text != NULL ? l->schedule.text : "press"; /* display: "press", "mpt:8" */
        note_source(s, "slopes", &s->spec.slopes_src);
    }
    int list = l->has_schedule && (l->schedule.kind == ABL_SCHEDULE_SLOPES || l->schedule.kind == ABL_SCHEDULE_TARGETS);
    if (l->heads == 0 && s->schedule_status == ABL_OK && !list)
        return abl_cli_usage_error("%s: --heads H is required (or --model/--config; except with slopes:/targets: "
                                   "lists)", cmd->name);
    return 0;
}

/* --attention over the model's direction (its family's: the encoders are bidirectional). */
static int setup_attention(const abl_cli_cmd *cmd, const char **v, abl_cli_setup *s)
{
    abl_source src;
    const char *o = abl_cli_arg(cmd, v, ABL_OPT_ATTENTION);
    if (o != NULL) {
        if (abl_cli_attention(o, &s->layer.attention))
            return ABL_EXIT_USAGE;
        option_source(&src, "attention");
        note_source(s, "attention", &src);
    } else if (s->have_model && s->spec.family != NULL && s->layer.attention == ABL_ATTENTION_BIDIRECTIONAL) {
        /* said only where it is not the default: the encoder families */
        src = s->spec.model != NULL ? (abl_source){ABL_ORIGIN_CATALOGUE, s->spec.family->name} : s->spec.pipeline_src;
        note_source(s, "attention", &src);
    }
    return 0;
}

/* --ctx over the model's trained context (bounded by max_ctx: the predictor's range). */
static int setup_context(const abl_cli_cmd *cmd, const char **v, uint64_t max_ctx, abl_cli_setup *s)
{
    abl_source src;
    const char *o = abl_cli_arg(cmd, v, ABL_OPT_CTX);
    if (o != NULL) {
        if (abl_cli_context("ctx", o, 1, max_ctx, &s->layer.context))
            return ABL_EXIT_USAGE;
        option_source(&src, "ctx");
        note_source(s, "context", &src);
    } else if (s->have_model && s->layer.context > 0) {
        if (s->layer.context > max_ctx)
            return abl_cli_usage_error("%s: the model's context %llu is beyond the kernel predictor's %llu; give "
                                       "--ctx", cmd->name, (unsigned long long)s->layer.context,
                                       (unsigned long long)max_ctx);
        note_source(s, "context", &s->spec.context_src);
    } else {
        return abl_cli_usage_error("%s: --ctx N is required%s", cmd->name,
                                   s->have_model ? " (the model's configuration gives no context)" : "");
    }
    return 0;
}

/* --pipeline PRESET[,FIELD=VALUE...] or a code path of the model's family, over the model's default code
 * path (eager without a model): parsed once into the layer, then built for its format and checked. */
static int setup_pipeline(const abl_cli_cmd *cmd, const char **v, abl_cli_setup *s)
{
    abl_source src;
    const char *spec = abl_cli_arg(cmd, v, ABL_OPT_PIPELINE), *path_name = NULL;
    char *full = NULL;
    if (spec != NULL && spec[0] == '\0')
        return abl_cli_usage_error("--pipeline: empty (presets: %s)", abl_pipeline_preset_names());
    if (spec != NULL) {
        option_source(&src, "pipeline");
        /* NAME a code path of the model's family: that path's pipeline with the given fields after it */
        if (s->have_model && abl_setup_code_path_spec(&s->spec, spec, &full, &path_name) != ABL_OK)
            return out_of_memory();
    } else if (s->have_model) {
        src = s->spec.pipeline_src;
        path_name = s->spec.path ? s->spec.path->name : NULL;
    } else {
        src = (abl_source){ABL_ORIGIN_DEFAULT, "eager"};
    }
    if (path_name != NULL) {
        char *j = abl_report_json_string(path_name);
        if (j == NULL) {
            free(full);
            return out_of_memory();
        }
        s->meta[s->nmeta++] = (abl_compare_meta){"code_path", "code path", path_name, own(s, j)};
    }
    note_source(s, "pipeline", &src);
    int prc = 0;
    if (spec != NULL) { /* the one parse of --pipeline; the model's own is already a value */
        abl_pipeline_spec_free(&s->layer.pipeline);
        prc = abl_cli_pipeline_spec(full != NULL ? full : spec, &s->layer.pipeline);
        s->layer.has_pipeline = prc == 0;
    }
    free(full);
    if (prc != 0)
        return prc;
    return abl_cli_pipeline_value(&s->layer, &s->pipeline);
}

/* BTLM/jais alibi_scaling.train_seq_len T: the slopes a run of more than T keys uses, as the model's code does
 * (abl_setup_keys_scaling); the slopes' source says so. --slopes wins. */
static int setup_keys_scaling(abl_cli_setup *s)
{
    if (!s->have_model)
        return 0;
    abl_status st = abl_setup_keys_scaling(&s->spec, &s->layer, &s->slopes, s->sources, s->nsources);
    if (st == ABL_OK)
        return 0;
    return st == ABL_ERR_NO_MEMORY ? out_of_memory() : abl_cli_internal_error("%s", abl_cli_why(st, NULL));
}

int abl_cli_setup_resolve(const abl_cli_cmd *cmd, const char **v, uint64_t max_ctx, abl_cli_setup *s)
{
    memset(s, 0, sizeof *s);
    int rc = setup_model(v, s);
    if (rc == 0)
        rc = setup_dtype(cmd, v, s);
    if (rc == 0)
        rc = setup_heads_slopes(cmd, v, s);
    if (rc == 0)
        rc = setup_context(cmd, v, max_ctx, s);
    if (rc == 0)
        rc = setup_keys_scaling(s);
    if (rc == 0)
        rc = setup_pipeline(cmd, v, s);
    if (rc == 0)
        rc = setup_attention(cmd, v, s);
    if (rc != 0)
        return rc;
    if (s->schedule_status == ABL_ERR_NO_MEMORY)
        return out_of_memory();
    if (s->schedule_status != ABL_OK)
        return abl_cli_usage_error("--slopes: '%s': %s", s->slopes, abl_cli_why(s->schedule_status, s->schedule_msg));
    if (build_sources(s) != 0)
        return out_of_memory();
    return 0;
}

int abl_cli_compare_config(const abl_cli_setup *s, abl_compare_config *cc)
{
    abl_status st = abl_layer_compare_config(&s->layer, cc);
    return st == ABL_OK ? 0 : abl_cli_internal_error("%s", abl_cli_why(st, NULL));
}

/* The budget of abl_compare_run (abl_compare_estimate: the paper's analysis and the predictor). */
static int compare_budget(const abl_cli_work *work, const abl_compare_config *cc)
{
    abl_cost cost;
    if (abl_compare_estimate(cc, &cost) != ABL_OK)
        return 0;
    return abl_cli_budget(work, &cost);
}

/* check --criterion: the head's first lost distance (influence: its first key without influence). */
static int64_t lost_first(const abl_compare_head *h, int influence)
{
    return influence ? h->first_influence_zero : h->first_blind;
}

int abl_cli_compare(const abl_cli_ctx *ctx, const char *cmdname, const abl_compare_config *cc, const abl_cli_setup *s, abl_output out,
                    const char *path, const abl_check_limits *limits, abl_report **keep, const abl_cli_work *work)
{
    if (cc->pipeline.softmax == ABL_SOFTMAX_EAGER &&
        (cc->pipeline.sum != ABL_SUM_EXACT || cc->pipeline.exp != ABL_EXP_CORRECT))
        return abl_cli_usage_error("--pipeline: %s answers with the zero-logit predictor, which models sum=exact and "
                                   "exp=correct (got sum=%s, exp=%s; use simulate for the others)", cmdname,
                                   abl_sum_order_name(cc->pipeline.sum), abl_exp_model_name(cc->pipeline.exp));
    if (abl_cli_attention_kernel(cc->attention, &cc->pipeline, 1) != 0)
        return ABL_EXIT_USAGE;
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
    if (st == ABL_OK && work != NULL && work->model_row)
        st = abl_cli_model_row_summaries(&c, r);
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
        int worst = -1, infl = limits->criterion == ABL_CRITERION_INFLUENCE;
        for (int i = 0; i < c.heads; i++)
            if (lost_first(&c.results[i], infl) >= 0 &&
                (worst < 0 || lost_first(&c.results[i], infl) < lost_first(&c.results[worst], infl)))
                worst = i;
        if (worst >= 0)
            fprintf(stderr, "alibi-blind: check: fail: %d of %d heads %s inside %llu tokens (head %d from d = %lld)\n",
                    infl ? c.kernel_lost_heads : c.kernel_blind_heads, c.heads, infl ? "lose a key's influence" : "blind",
                    (unsigned long long)cc->context, c.results[worst].slope.index,
                    (long long)lost_first(&c.results[worst], infl));
        else
            fprintf(stderr, "alibi-blind: check: fail\n");
        rc = ABL_EXIT_DIFFERS;
    }
    abl_report_free(r);
    abl_compare_free(&c);
    return rc;
}

/* The layer's kernel as a value: --pipeline (parsed here, once), else the catalogue model's default code
 * path, else the config's (both already values: no catalogue text is read again). */
int abl_cli_layer_kernel(const char *text, const abl_model *cat, const abl_model_spec *spec, abl_layer *l)
{
    abl_status st = ABL_OK;
    abl_pipeline_spec_free(&l->pipeline);
    if (text != NULL) {
        int rc = abl_cli_pipeline_spec(text, &l->pipeline);
        l->has_pipeline = rc == 0;
        return rc;
    }
    if (cat != NULL && cat->family != NULL && cat->family->npaths > 0)
        st = abl_code_path_pipeline(&cat->family->paths[0], &l->pipeline);
    else if (spec != NULL)
        st = abl_model_spec_pipeline(spec, &l->pipeline);
    else
        return 0; /* eager */
    l->has_pipeline = st == ABL_OK;
    return st == ABL_OK ? 0 : abl_cli_internal_error("%s", abl_cli_why(st, NULL));
}
