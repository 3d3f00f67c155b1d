/* alibi-blind: the trained context of a config.json that gives none, from the catalogue (issue 19: "a
 * config without a context (BLOOM, Falcon) takes the catalogue's trained context and says so"). */
#include <string.h>
#include "abl/model/catalogue.h"
#include "abl_config_internal.h"

/* m describes the same layer as s: the family and head count, and head dim and layers where both know them. */
static int same_layer(const abl_model *m, const abl_model_spec *s)
{
    return m->family == s->family && m->heads == s->heads && m->context > 0 &&
           (s->head_dim == 0 || m->head_dim == 0 || m->head_dim == s->head_dim) &&
           (s->layers == 0 || m->layers == 0 || m->layers == s->layers);
}

/* The entry `_name_or_path` names, when it is the same layer. */
static const abl_model *by_name(json_t *root, const abl_model_spec *s)
{
    json_t *n = json_object_get(root, "_name_or_path");
    const abl_model *m = json_is_string(n) ? abl_model_find(json_string_value(n)) : NULL;
    return m != NULL && same_layer(m, s) ? m : NULL;
}

/* The first entry of the same layer, when every such entry has the same context (one answer, not a guess
 * between two); the head dim or the layers must be known, so that the heads alone never decide. */
static const abl_model *by_architecture(const abl_model_spec *s)
{
    if (s->head_dim == 0 && s->layers == 0)
        return NULL;
    const abl_model *first = NULL;
    for (size_t i = 0; i < abl_model_count(); i++) {
        const abl_model *m = abl_model_at(i);
        if (!same_layer(m, s))
            continue;
        if (first != NULL && m->context != first->context)
            return NULL;
        if (first == NULL)
            first = m;
    }
    return first;
}

void abl_config_catalogue_context(json_t *root, abl_model_spec *s)
{
    if (s->context > 0 || s->family == NULL)
        return;
    const abl_model *m = by_name(root, s);
    if (m == NULL)
        m = by_architecture(s);
    if (m == NULL)
        return;
    s->context = m->context;
    s->context_src.origin = ABL_ORIGIN_CATALOGUE;
    s->context_src.field = m->name;
}
