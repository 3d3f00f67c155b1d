/* alibi-blind: plot gradient (issue 20, spec §15): forward vs gradient blindness per head. For each head
 * of a layer on a real kernel, zero logits, the first blind distance of the last row of the N-token context
 * twice: where the weight P is first exactly 0 (the exact zero-logit predictor) and where the rounded
 * gradient dS = P (dP - D) is first exactly 0 for |dP - D| x loss scale = 2^j (the zero-logit gradient
 * predictor, abl_backward_predict). A chart model of abl/report/plot.h (the compose stage). */
#ifndef ABL_PLOT_GRADIENT_H
#define ABL_PLOT_GRADIENT_H

#include "abl/core/export.h"

#include <stdint.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/slope.h"
#include "abl/kernel/pipeline.h"
#include "abl/report/plot.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abl_plot_gradient_config {
    const abl_pipeline_spec *pipeline; /* parsed at the boundary, built for model_dtype; NULL: eager */
    abl_format model_dtype;
    int heads;
    const abl_schedule_spec *slopes;   /* NULL: press */
    uint64_t context;                  /* N >= 2 (default 2048) */
    long log2_upstream;                /* j: |dP - D| x loss scale = 2^j (default 0, unit upstream) */
    const char *model;                 /* shown in the title when not NULL */
} abl_plot_gradient_config;

ABL_API void abl_plot_gradient_config_default(abl_plot_gradient_config *c);

/* The per-head distances the picture draws (model order; -1: no zero inside N), without the picture. */
/* The nominal cost of both predictors on the layer (the forward and the backward kind's own work), known
 * before they run. */
ABL_API abl_status abl_plot_gradient_estimate(const abl_plot_gradient_config *c, abl_cost *out);
ABL_API abl_status abl_plot_gradient_distances(const abl_plot_gradient_config *c, int *heads, int64_t **forward,
                                               int64_t **gradient, char **msg);

/*
 * The picture: x the head (model order), y the distance (log), one series per criterion ("forward: first
 * zero weight P", "gradient: first zero dS"), heads with no zero inside N drawn in a band above N.
 * ABL_ERR_UNSUPPORTED with *msg when the kernel's backward is not modelled (a softmax other than eager,
 * or a native backward with 2^j < 1: spec §15).
 */
ABL_API abl_status abl_plot_gradient(const abl_plot_gradient_config *c, abl_plot *out, char **msg);

#ifdef __cplusplus
}
#endif
#endif
