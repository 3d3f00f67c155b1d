/* alibi-blind: the layer value (include/abl/model/layer.h): built once, then only read through its
 * projections, so every computation of one command sees the same settings. */
#include <stdlib.h>
#include <string.h>
#include "abl/model/layer.h"
#include "abl_internal.h"

void abl_layer_init(abl_layer *l)
{
    memset(l, 0, sizeof *l);
    abl_format_lookup("bf16", &l->format); /* built in: cannot fail */
    l->convention = ABL_CONV_PAPER;
    l->distance = ABL_DISTANCE_LINEAR;
    l->level = ABL_LEVEL_EXPONENT;
    l->attention = ABL_ATTENTION_CAUSAL;
    mpq_inits(l->logit, l->clamp, l->softcap, l->logit_lo, l->logit_hi, (mpq_ptr)0);
}

void abl_layer_free(abl_layer *l)
{
    if (l == NULL)
        return;
    abl_schedule_spec_free(&l->schedule);
    abl_pipeline_spec_free(&l->pipeline);
    mpq_clears(l->logit, l->clamp, l->softcap, l->logit_lo, l->logit_hi, (mpq_ptr)0);
    memset(l, 0, sizeof *l);
}

abl_status abl_layer_copy(const abl_layer *src, abl_layer *out)
{
    if (src == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_layer_init(out);
    /* The plain fields one by one; the owned parts (numbers, schedule, pipeline) as deep copies, never
     * shared with src. */
    out->format = src->format;
    out->convention = src->convention;
    out->heads = src->heads;
    out->has_schedule = src->has_schedule;
    out->context = src->context;
    out->window = src->window;
    out->distance = src->distance;
    out->has_logit = src->has_logit;
    out->has_clamp = src->has_clamp;
    out->has_softcap = src->has_softcap;
    out->has_logit_range = src->has_logit_range;
    mpq_set(out->logit, src->logit);
    mpq_set(out->clamp, src->clamp);
    mpq_set(out->softcap, src->softcap);
    mpq_set(out->logit_lo, src->logit_lo);
    mpq_set(out->logit_hi, src->logit_hi);
    out->mitigations = src->mitigations;
    out->level = src->level;
    out->has_pipeline = src->has_pipeline;
    out->attention = src->attention;
    abl_status st = ABL_OK;
    if (src->has_schedule)
        st = abl_schedule_spec_copy(&src->schedule, &out->schedule);
    if (st == ABL_OK && src->has_pipeline)
        st = abl_pipeline_spec_copy(&src->pipeline, &out->pipeline);
    if (st != ABL_OK)
        abl_layer_free(out);
    return st;
}

/* The one line a failed build leaves in *msg (when asked for); NULL when out of memory. */
static abl_status model_failed(abl_layer *out, abl_status st, const char *what, char **msg)
{
    abl_layer_free(out);
    if (msg != NULL)
        *msg = st == ABL_ERR_NO_MEMORY ? NULL : abl_strf("the model's %s: %s", what, abl_status_message(st));
    return st;
}

abl_status abl_layer_from_model(const abl_model_spec *spec, abl_layer *out, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (spec == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_layer_init(out);
    out->format = spec->dtype;
    out->heads = spec->heads;
    out->context = spec->context;
    /* Only the spec's two accessors are read for what it holds as typed values: however the spec
     * stores its schedule and pipeline, these give owned copies. */
    abl_status st = abl_model_spec_schedule(spec, &out->schedule);
    if (st != ABL_OK)
        return model_failed(out, st, "slope schedule", msg);
    out->has_schedule = 1;
    st = abl_model_spec_pipeline(spec, &out->pipeline);
    if (st != ABL_OK)
        return model_failed(out, st, "pipeline", msg);
    out->has_pipeline = 1;
    /* the family's direction: the encoders (mosaic-bert, jina-bert) are bidirectional */
    out->attention = spec->family != NULL ? spec->family->attention : ABL_ATTENTION_CAUSAL;
    return ABL_OK;
}

void abl_layer_analysis_config(const abl_layer *l, abl_analysis_config *out)
{
    memset(out, 0, sizeof *out);
    out->format = l->format;
    out->convention = l->convention;
    out->heads = l->heads;
    out->slopes = abl_layer_schedule(l);
    out->context = l->context;
    out->window = l->window;
    out->distance = l->distance;
    out->logit = l->has_logit ? l->logit : NULL;
    out->clamp = l->has_clamp ? l->clamp : NULL;
    out->softcap = l->has_softcap ? l->softcap : NULL;
    out->logit_lo = l->has_logit_range ? l->logit_lo : NULL;
    out->logit_hi = l->has_logit_range ? l->logit_hi : NULL;
    out->mitigations = l->mitigations;
    out->level = l->level;
    out->attention = l->attention;
}

abl_status abl_layer_pipeline(const abl_layer *l, abl_pipeline *out)
{
    return abl_pipeline_build(l->has_pipeline ? &l->pipeline : NULL, &l->format, out);
}

abl_status abl_layer_compare_config(const abl_layer *l, abl_compare_config *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = l->format;
    out->convention = l->convention;
    out->heads = l->heads;
    out->slopes = abl_layer_schedule(l);
    out->context = l->context;
    out->attention = l->attention;
    return abl_layer_pipeline(l, &out->pipeline);
}

const abl_schedule_spec *abl_layer_schedule(const abl_layer *l)
{
    return l->has_schedule ? &l->schedule : NULL;
}
