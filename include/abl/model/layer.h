/* alibi-blind: one attention layer as one value (issue 17, item 1): the format, convention, heads,
 * schedule, context, window, distance, logits, mitigations, level, kernel pipeline and attention
 * direction, built once at the boundary (from a model's settings, a config.json, or the CLI's options)
 * and read by every computation through projections that point into it. It sits in the model stage
 * because it holds a kernel pipeline and is built from a model's settings. */
#ifndef ABL_MODEL_LAYER_H
#define ABL_MODEL_LAYER_H

#include "abl/core/export.h"

#include <stdint.h>
#include <gmp.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"
#include "abl/core/slope.h"
#include "abl/core/blindness.h"
#include "abl/core/attention.h"
#include "abl/kernel/pipeline.h"
#include "abl/analysis/analysis.h"
#include "abl/model/config.h"
#include "abl/model/compare.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which keys a query attends to: abl_attention (include/abl/core/attention.h), ABL_ATTENTION_CAUSAL for
 * decoders, ABL_ATTENTION_BIDIRECTIONAL for encoders (MosaicBERT, JinaBERT: -m|i-j| over the whole N x N
 * matrix). The enum and its names live in core, where the closed forms and the kernels read it. */

/*
 * The layer. It owns everything it holds (the schedule, the pipeline, the numbers); a builder fills
 * it, after which every function takes it as const (nothing below the boundary changes it). Release
 * with abl_layer_free, duplicate with abl_layer_copy. abl_layer_init makes the default layer: bf16,
 * convention paper, no heads (a builder sets them), press slopes, no context (a builder sets it), no
 * window, linear distances, zero logits, no mitigation, exponent level, eager kernel, causal (a model's
 * layer takes its family's direction: abl_layer_from_model).
 */
typedef struct abl_layer {
    abl_format format;           /* the model dtype: the exponential's format, the pipeline's 'model' fields */
    abl_convention convention;
    int heads;                   /* 0: from a slopes:/targets: list */
    int has_schedule;            /* 0: none given (press, or robust:32 under mitigation E) */
    abl_schedule_spec schedule;  /* owned (zeroed when has_schedule is 0) */
    uint64_t context;            /* N */
    uint64_t window;             /* W, 0 = none */
    abl_distance distance;
    int has_logit, has_clamp, has_softcap, has_logit_range; /* which numbers below are given */
    mpq_t logit, clamp, softcap, logit_lo, logit_hi;        /* owned, exact; 0 when not given */
    unsigned mitigations;        /* ABL_MITIGATE_* */
    abl_level level;
    int has_pipeline;            /* 0: none given (the analysis of the paper, or eager where a kernel is needed) */
    abl_pipeline_spec pipeline;  /* owned, dtype-independent (zeroed when has_pipeline is 0) */
    abl_attention attention;
} abl_layer;

/* The default layer (above); its numbers initialised. Every layer is released with abl_layer_free. */
ABL_API void abl_layer_init(abl_layer *l);
ABL_API void abl_layer_free(abl_layer *l);
/* A deep copy into *out (not initialised by the caller); on failure *out is left freed. */
ABL_API abl_status abl_layer_copy(const abl_layer *src, abl_layer *out);

/*
 * A model's layer: its dtype, heads, trained context, schedule (abl_model_spec_schedule) and the
 * kernel of its default code path (abl_model_spec_pipeline); the rest the defaults. *out is
 * initialised here; on failure it is left freed and *msg (when msg is not NULL) gets one malloc'd line
 * saying what failed (NULL when out of memory).
 */
ABL_API abl_status abl_layer_from_model(const abl_model_spec *spec, abl_layer *out, char **msg);

/*
 * Projections: the configuration of one computation on the layer. Pointers in the result point into
 * the layer (keep it alive and unchanged while the configuration is used); nothing is copied.
 */
/* The paper's analysis (abl_analysis_run). Its progress is left empty for the caller. */
ABL_API void abl_layer_analysis_config(const abl_layer *l, abl_analysis_config *out);
/* The paper's analysis beside the kernel's predictor (abl_compare_run): the pipeline built for the
 * layer's format (eager when the layer has none). ABL_ERR_* of abl_pipeline_build. */
ABL_API abl_status abl_layer_compare_config(const abl_layer *l, abl_compare_config *out);
/* The kernel alone (abl_pipeline_build of the layer's pipeline, eager when none, in its format). */
ABL_API abl_status abl_layer_pipeline(const abl_layer *l, abl_pipeline *out);
/* The schedule the layer analyses (NULL: none given, press). */
ABL_API const abl_schedule_spec *abl_layer_schedule(const abl_layer *l);

#ifdef __cplusplus
}
#endif
#endif
