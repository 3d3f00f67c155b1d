/* alibi-blind: the one-page HTML report of a layer: the model, the kernel, the per-head table, the
 * fractions and the pictures (inline SVG drawn by plot.h), with no external asset. */
#ifndef ABL_HTML_H
#define ABL_HTML_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "abl/core/status.h"
#include "abl/core/progress.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"
#include "abl/core/slope.h"
#include "abl/core/attention.h"
#include "abl/model/catalogue.h"
#include "abl/kernel/simulate.h"
#include "abl/report/plot.h"
#include "abl/compose/plot_kinds.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abl_html_config {
    const abl_model *model;    /* NULL: a layer given by heads/slopes/format */
    abl_format format;
    abl_convention convention;
    int heads;                 /* 0: from a slopes:/targets: list */
    const abl_schedule_spec *slopes; /* the schedule, parsed at the boundary; NULL: press */
    uint64_t context;          /* N */
    const abl_pipeline_spec *pipeline; /* the kernel, parsed at the boundary (the caller resolves --pipeline,
                                        * the model's default code path); NULL: eager */
    int threads;               /* blindmap emulation; 0: all cores */
    const char *config;        /* the config.json the layer was read from (NULL: none); printed escaped */
    const char *model_type;    /* its model_type (NULL or "": none) */
    abl_attention attention;   /* causal (0) or bidirectional (an encoder: the fractions of its N x N matrix,
                                * end and middle rows, from the bidirectional closed forms and predictor;
                                * src/lib/compose/abl_html_bidir.c) */
    abl_progress progress;     /* the page's parts done, of ABL_HTML_PARTS (prediction, design, pictures) */
} abl_html_config;

/* The parts of a page that abl_html_config.progress counts. */
#define ABL_HTML_PARTS 6

/* Largest N at which the report predicts each head's first blind distance through the kernel, and
 * the N of its zero map (min(N, this)). */
#define ABL_HTML_PREDICT_MAX_CONTEXT 65536
/* The gradient section's bounds on |dP - D| x loss scale: 2^-8, 2^0, 2^16 (abl_html_gradient.c). */
#define ABL_HTML_GRADIENT_BOUNDS 3
#define ABL_HTML_BLINDMAP_CONTEXT 2048
/* The zero map emulates every weight (H N (N + 1) / 2 of them): the page halves its N until the map's
 * weights fit this many, so that a page takes seconds for every catalogue model (plot blindmap draws it at
 * any N up to 8192). */
#define ABL_HTML_BLINDMAP_WEIGHTS (1u << 24)

/*
 * The page, into a malloc'd buffer. ABL_ERR_UNSUPPORTED (*msg says why) for a pipeline that cannot
 * be built; slope and head errors as abl_analysis_run returns them.
 */
ABL_API abl_status abl_html_report(const abl_html_config *c, char **buf, size_t *len, char **msg);
/* Nominal cost of the page's kernel work: its plan's cost. ABL_ERR_UNSUPPORTED for a pipeline that cannot
 * be built. */
ABL_API abl_status abl_html_report_estimate(const abl_html_config *c, abl_cost *out);

/*
 * Plan, then run: the page's kernel work in the order the page runs it, each part a step of plan (the
 * index of its step, or -1 when the page does not run it): the predictor's first blind distances
 * (N up to ABL_HTML_PREDICT_MAX_CONTEXT), the design section's slope search (ABL_DESIGN_SEARCH_PREDICTIONS
 * one-head predictions), the fraction plot's kernel curve (N <= 4096; the sub-plan `fraction`, one step
 * of the page standing for its calls) and the zero map's emulation (the sub-plan `blindmap`); the
 * pictures' parts only where this build draws. abl_html_report is abl_html_plan_make +
 * abl_html_run_plan; the run counts in each step the calls it made. The plan points into c's texts.
 */
typedef struct abl_html_plan {
    abl_html_config config;
    const abl_pipeline_spec *pipe;     /* the kernel (config.pipeline, else eager) */
    const char *pipeline;              /* its name as the page shows it */
    abl_simulate_config predict;       /* its pipeline built for the format; the first blind distances */
    abl_plot_fraction_plan fraction;
    abl_plot_blindmap_plan blindmap;
    abl_schedule_spec one_slope;       /* the design search's one slope (slopes:1), as a value */
    long step_predict, step_design, step_fraction, step_blindmap;
    abl_plan plan;
} abl_html_plan;
ABL_API abl_status abl_html_plan_make(const abl_html_config *c, abl_html_plan *out);
ABL_API abl_status abl_html_run_plan(abl_html_plan *plan, char **buf, size_t *len, char **msg);
ABL_API void abl_html_plan_free(abl_html_plan *p);

/* Append s to f with &, <, >, " and ' escaped. */
ABL_API void abl_html_escape(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif
