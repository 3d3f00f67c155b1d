/* alibi-blind: MPT's attn_config.attn_impl, the code path the model's own config asks for (issue 19). */
#include <string.h>
#include "abl/model/catalogue.h"
#include "abl_internal.h"
#include "abl_config_internal.h"

/* attn_impl -> the mpt family's code path (catalogue names) and the source shown for the pipeline. */
static const struct {
    const char *impl, *path, *source, *replit_source;
} impls[] = {
    {"torch", "llm-foundry-torch", "attn_config.attn_impl torch", "attn_impl torch"},
    {"flash", "flash-attention", "attn_config.attn_impl flash", "attn_impl flash"},
    /* llm-foundry's Triton FlashAttention kernel has no preset: the torch path is answered, and said so */
    {"triton", "llm-foundry-torch", "attn_config.attn_impl triton (not modelled: the torch path; give --pipeline)",
     "attn_impl triton (not modelled: the torch path; give --pipeline)"},
};

abl_status abl_config_mpt_attn_impl(json_t *root, abl_model_spec *s, char **msg)
{
    /* replit_lm (replit-code-v1-3b) keeps MPT's attention fields at the top level */
    int replit = s->model_type != NULL && strcmp(s->model_type, "replit_lm") == 0;
    json_t *ac = replit ? root : json_object_get(root, "attn_config");
    json_t *v = json_is_object(ac) ? json_object_get(ac, "attn_impl") : NULL;
    const char *name = replit ? "attn_impl" : "attn_config.attn_impl";
    if (v == NULL)
        return ABL_OK;
    if (!json_is_string(v)) {
        abl_set_error(msg, "%s is not a string (torch, flash or triton)", name);
        return ABL_ERR_PARSE;
    }
    const char *impl = json_string_value(v);
    for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++) {
        if (strcmp(impl, impls[i].impl) != 0)
            continue;
        const abl_code_path *p = abl_model_family_path(s->family, impls[i].path);
        if (p == NULL)
            return ABL_ERR_INVALID_ARGUMENT; /* the catalogue lost a path: a bug */
        abl_pipeline_spec_free(&s->pipeline);
        abl_status st = abl_code_path_pipeline(p, &s->pipeline);
        s->path = p;
        s->pipeline_src.origin = ABL_ORIGIN_CONFIG;
        s->pipeline_src.field = replit ? impls[i].replit_source : impls[i].source;
        return st;
    }
    abl_set_error(msg, "%s is not torch, flash or triton", name);
    return ABL_ERR_PARSE;
}
