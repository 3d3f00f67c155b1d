/* alibi-blind: the part of a model's setup that the CLI (abl_cli_model.c) and the flat API
 * (abl_flat_setup.c) share once their arguments are typed values (abl/model/setup.h says what and why). */
#include <stdlib.h>
#include <string.h>
#include "abl/model/setup.h"
#include "abl/model/catalogue.h"
#include "abl/report/report.h"
#include "abl_internal.h"

void abl_setup_note_source(abl_setup_source *sources, size_t *n, size_t cap, const char *what,
                           const abl_source *src)
{
    if (*n < cap && (sources[*n].from = abl_source_text(src)) != NULL)
        sources[(*n)++].what = what;
}

abl_status abl_setup_sources_build(const abl_setup_source *sources, size_t n, char **text, char **json)
{
    abl_text t = {0}, j = {0};
    abl_text_add(&t, "%s", "");   /* no sources: an empty line, not a missing one */
    char *done = calloc(n + 1, 1);   /* the sources already named in a group */
    if (done == NULL)
        return ABL_ERR_NO_MEMORY;
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        for (size_t k = i, first = 1; k < n; k++)
            if (!done[k] && strcmp(sources[k].from, sources[i].from) == 0) {
                abl_text_add(&t, "%s%s", first ? (t.n ? "; " : "") : ", ", sources[k].what);
                done[k] = 1;
                first = 0;
            }
        abl_text_add(&t, " (%s)", sources[i].from);
    }
    free(done);
    abl_text_add(&j, "{");
    for (size_t i = 0; i < n; i++) {
        char *q = abl_report_json_string(sources[i].from);
        if (q == NULL)
            j.oom = 1;
        abl_text_add(&j, "%s\"%s\": %s", i ? ", " : "", sources[i].what, q ? q : "");
        free(q);
    }
    abl_text_add(&j, "}");
    *text = abl_text_take(&t);
    *json = abl_text_take(&j);
    if (*text == NULL || *json == NULL) {
        free(*text);
        free(*json);
        *text = *json = NULL;
        return ABL_ERR_NO_MEMORY;
    }
    return ABL_OK;
}

abl_status abl_setup_code_path_spec(const abl_model_spec *spec, const char *text, char **full, const char **path)
{
    *full = NULL;
    if (spec->family == NULL)
        return ABL_OK;
    size_t n = strcspn(text, ",");
    for (size_t i = 0; i < spec->family->npaths; i++) {
        const abl_code_path *p = &spec->family->paths[i];
        if (strlen(p->name) == n && strncmp(p->name, text, n) == 0) {
            free(*full);
            if ((*full = abl_strf("%s%s", p->pipeline, text + n)) == NULL)
                return ABL_ERR_NO_MEMORY;
            *path = p->name;
        }
    }
    return ABL_OK;
}

abl_status abl_setup_keys_scaling(const abl_model_spec *spec, abl_layer *layer, const char **slopes,
                                  abl_setup_source *sources, size_t n)
{
    if (spec->alibi_train_seq_len == 0 || layer->context <= spec->alibi_train_seq_len || *slopes == NULL ||
        layer->schedule.text == NULL || strcmp(*slopes, layer->schedule.text) != 0)
        return ABL_OK; /* (*slopes is the model's schedule text unless the user gave slopes) */
    abl_schedule_spec keyed;
    abl_status st = abl_model_spec_schedule_keys(spec, layer->context, &keyed);
    if (st != ABL_OK)
        return st;
    abl_schedule_spec_free(&layer->schedule);
    layer->schedule = keyed;
    *slopes = layer->schedule.text;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(sources[i].what, "slopes") != 0)
            continue;
        char *from = abl_strf("config.json: alibi_scaling.train_seq_len %llu (context %llu > %llu: slopes / "
                              "(context / train_seq_len), fp32)", (unsigned long long)spec->alibi_train_seq_len,
                              (unsigned long long)layer->context, (unsigned long long)spec->alibi_train_seq_len);
        if (from == NULL)
            return ABL_ERR_NO_MEMORY;
        free(sources[i].from);
        sources[i].from = from;
    }
    return ABL_OK;
}
