/* alibi-blind: the kinds of plot. Each runs the computation it draws (the analysis, the exact predictor,
 * the emulation) and composes the result into a chart model of abl/report/plot.h, so it lives in the
 * compose stage, above every computing stage (docs/architecture.md, "The stages"). */
#ifndef ABL_PLOT_KINDS_H
#define ABL_PLOT_KINDS_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include "abl/core/status.h"
#include "abl/core/progress.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"
#include "abl/core/slope.h"
#include "abl/report/plot.h"
#include "abl/kernel/simulate.h"

#ifdef __cplusplus
extern "C" {
#endif


/* Figure 1a for any layer: each head's bias -m·d against d, the threshold τ and each head's δ. */
typedef struct abl_plot_bias_config {
    abl_format format;
    abl_convention convention;
    int heads;                 /* 0: from a slopes:/targets: list */
    const abl_schedule_spec *slopes; /* the schedule, parsed at the boundary; NULL: press */
    uint64_t max_distance;     /* right end of the d axis (default 4096) */
    const char *model;         /* shown in the title when not NULL */
    /* The bias as a kernel forms it (the report): kernel names it; scale is the factor the kernel puts on
     * m·d (Falcon: alibi/8, twice in the eager path: 1/4); first_blind, per head in model order, the
     * kernel's own first blind distance (-1: none inside the context), marked instead of δ. */
    const char *kernel;
    double scale;              /* 0: 1 */
    const int64_t *first_blind;
} abl_plot_bias_config;

ABL_API void abl_plot_bias_config_default(abl_plot_bias_config *c);
ABL_API abl_status abl_plot_bias(const abl_plot_bias_config *c, abl_plot *out);

/* Figure 1b: row and matrix underflow fractions against the context N (log x), one pair of curves
 * per (dtype, convention) and per real-kernel pipeline. */
typedef struct abl_plot_fraction_config {
    const abl_format *formats;         /* nformats >= 1 */
    size_t nformats;
    const abl_convention *conventions; /* nconventions >= 1 */
    size_t nconventions;
    const abl_pipeline_spec *pipelines; /* real kernels (zero logits, exact prediction), parsed at the
                                        * boundary and built per format; may be empty */
    size_t npipelines;
    int heads;
    const abl_schedule_spec *slopes;   /* NULL: press */
    uint64_t max_context;              /* right end of the N axis */
    int linear;                        /* 1: linear N axis from 0 (the paper's 0..4096); 0: log N from 1 */
    const char *model;
    abl_progress progress;             /* the real-kernel curves' predictor calls done, of the plan's */
    abl_attention attention;           /* bidirectional (an encoder): row = the end row i = N - 1, matrix = all
                                        * N x N entries (docs/method.md); causal (0, the default) otherwise */
} abl_plot_fraction_config;

/* Largest context the real-kernel curves accept (each point runs the exact predictor). */
#define ABL_PLOT_PIPELINE_MAX_CONTEXT 65536

ABL_API void abl_plot_fraction_config_default(abl_plot_fraction_config *c);
/* ABL_ERR_UNSUPPORTED with *msg naming the pipeline when it cannot be predicted. */
ABL_API abl_status abl_plot_fraction(const abl_plot_fraction_config *c, abl_plot *out, char **msg);
/* Nominal cost of the real-kernel curves (abl_predict_estimate at every point, per pipeline and format;
 * the closed-form curves are cheap and not counted). A pipeline that cannot be built counts nothing. */
ABL_API abl_status abl_plot_fraction_estimate(const abl_plot_fraction_config *c, abl_cost *out);
/* Plan, then run: one step per predictor call of the real-kernel curves (pipeline by pipeline, format
 * by format, every N > 0 of the axis; calls[i] configures plan.steps[i]); the closed-form curves are
 * cheap and not planned. The estimate is plan.cost; abl_plot_fraction is abl_plot_fraction_plan_make +
 * abl_plot_fraction_run_plan. The plan points into c's arrays and texts (keep them alive). */
typedef struct abl_plot_fraction_plan {
    abl_plot_fraction_config config;
    uint64_t *contexts;            /* the N of the axis, npoints of them */
    size_t npoints;
    long *curve_first;             /* per (pipeline, format), pipeline-major: its first step; -1: the
                                    * pipeline cannot be built (the run fails there, saying why) */
    abl_simulate_config *calls;
    abl_plan plan;
} abl_plot_fraction_plan;
ABL_API abl_status abl_plot_fraction_plan_make(const abl_plot_fraction_config *c, abl_plot_fraction_plan *out);
ABL_API abl_status abl_plot_fraction_run_plan(abl_plot_fraction_plan *plan, abl_plot *out, char **msg);
ABL_API void abl_plot_fraction_plan_free(abl_plot_fraction_plan *p);

/* Table 8: δ of the nine heads of each mitigation combination, log y, with the * and ** regions. */
ABL_API abl_status abl_plot_mitigations(const abl_format *format, abl_convention convention, abl_plot *out);

/* The mitigations applied to a layer's own heads (the report's picture): δ of each head under the
 * combinations of E and L (C and S leave δ as Table 8 computes it unchanged: each series names the four
 * combinations it stands for), with the * and ** regions as abl_plot_mitigations draws them. */
ABL_API abl_status abl_plot_mitigations_layer(const abl_format *format, abl_convention convention, int heads,
                                      const abl_schedule_spec *slopes, const char *model, abl_plot *out);

/* Where attention goes blind: the N x N weight matrix of one head (or all, as small multiples)
 * emulated through a real pipeline, exactly-zero weights shaded; causal: the lower triangle with the
 * masked future drawn as such; bidirectional (an encoder): every row over all N keys, nothing masked. */
#define ABL_PLOT_BLINDMAP_MAX_CONTEXT 8192
typedef struct abl_plot_blindmap_config {
    const abl_pipeline_spec *pipeline; /* parsed at the boundary, built for model_dtype; NULL: eager */
    abl_format model_dtype;
    int heads;
    const abl_schedule_spec *slopes; /* NULL: press */
    uint64_t context;          /* N <= ABL_PLOT_BLINDMAP_MAX_CONTEXT */
    int head;                  /* 1-based head index to draw; 0: every head, small multiples */
    int threads;               /* 0: all cores */
    const char *model;
    abl_progress progress;     /* the emulation's, as simulate reports it */
    abl_attention attention;   /* causal (0, the default) or bidirectional (abl_simulate_bidir.c) */
} abl_plot_blindmap_config;

ABL_API void abl_plot_blindmap_config_default(abl_plot_blindmap_config *c);
ABL_API abl_status abl_plot_blindmap(const abl_plot_blindmap_config *c, abl_plot *out, char **msg);
/* Nominal cost of the emulation behind the map: its plan's cost (abl_simulate_estimate of the one
 * emulation). ABL_ERR_UNSUPPORTED for a pipeline that cannot be built. */
ABL_API abl_status abl_plot_blindmap_estimate(const abl_plot_blindmap_config *c, abl_cost *out);
/* Plan, then run: plan.steps[0] is the emulation (simulate, at the config's N). abl_plot_blindmap is
 * abl_plot_blindmap_plan_make + abl_plot_blindmap_run_plan. The plan points into c's texts. */
typedef struct abl_plot_blindmap_plan {
    abl_plot_blindmap_config config;
    abl_simulate_config simulate;  /* the run adds its row hook */
    abl_plan plan;
} abl_plot_blindmap_plan;
ABL_API abl_status abl_plot_blindmap_plan_make(const abl_plot_blindmap_config *c, abl_plot_blindmap_plan *out);
ABL_API abl_status abl_plot_blindmap_run_plan(abl_plot_blindmap_plan *plan, abl_plot *out, char **msg);
ABL_API void abl_plot_blindmap_plan_free(abl_plot_blindmap_plan *p);

#ifdef __cplusplus
}
#endif
#endif
