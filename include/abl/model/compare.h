/* alibi-blind: the paper's answer beside a real kernel's, head by head (`analyze --pipeline`,
 * `analyze --model`, `check`): the paper's delta (exponent level, the chosen convention) and the
 * exact first blind distance and zero counts of the pipeline from the zero-logit predictor. */
#ifndef ABL_MODEL_COMPARE_H
#define ABL_MODEL_COMPARE_H

#include "abl/core/export.h"

#include <stdint.h>
#include <gmp.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"
#include "abl/core/slope.h"
#include "abl/core/blindness.h"
#include "abl/core/progress.h"
#include "abl/kernel/pipeline.h"
#include "abl/kernel/simulate.h"
#include "abl/analysis/analysis.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abl_compare_config {
    abl_format dtype;          /* the model dtype: the paper's delta uses it, the pipeline's 'model' fields follow it */
    abl_convention convention; /* of `delta` (paper by default) */
    int heads;                 /* 0: from a slopes:/targets: list */
    const abl_schedule_spec *slopes; /* the schedule, parsed at the boundary; NULL = press */
    uint64_t context;          /* N, 1..2^24 (the predictor's range) */
    abl_pipeline pipeline;     /* must satisfy the predictor (sum=exact, exp=correct) */
    abl_attention attention;   /* causal (0) or bidirectional: both sides answer for the encoder's N x N matrix */
} abl_compare_config;

typedef struct abl_compare_head {
    abl_slope slope;           /* exact; slope.index is the model's head number */
    abl_delta delta, delta_ieee;
    int paper_blind;           /* delta < N under the convention */
    uint64_t paper_row_zeros;  /* the paper's blind keys of the last row */
    int64_t first_blind;       /* the kernel: smallest d with a zero weight in the last row; -1 none */
    int64_t first_influence_zero;     /* the kernel: smallest d whose key has no influence (docs/method.md) */
    uint64_t row_influence_zeros, matrix_influence_zeros;
    uint64_t row_zeros, matrix_zeros; /* the kernel's zero weights: last row, whole causal matrix (bidirectional:
                                       * the end row i = N - 1 and the whole N x N matrix) */
    uint64_t paper_mid_zeros, mid_zeros; /* bidirectional: the middle row's, the paper's and the kernel's */
} abl_compare_head;

typedef struct abl_compare {
    abl_compare_config config;
    abl_schedule_spec *spec;            /* the schedule analysed (own heap copy); config.slopes points here */
    char *slopes_spec;                  /* its text (whole, display only) */
    abl_schedule schedule;              /* owns the numbers and texts results[i].slope point into */
    int heads;
    abl_compare_head *results;          /* model order: results[i].slope.index == i + 1 */
    int paper_blind_heads, kernel_blind_heads;
    uint64_t row_zeros, matrix_zeros;   /* the kernel's layer totals */
    mpq_t paper_row_fraction, paper_matrix_fraction;
    mpq_t row_fraction, matrix_fraction; /* the kernel's */
    /* influence (keys whose term in P.V is 0 for unit V): equal to the zero weights unless influence_differs */
    int influence_differs;
    int kernel_lost_heads;              /* heads with a key without influence in the last row */
    uint64_t row_influence_zeros, matrix_influence_zeros;
    mpq_t row_influence_fraction, matrix_influence_fraction;
    uint64_t mid_zeros;                 /* bidirectional: the kernel's middle-row total */
    mpq_t paper_mid_fraction, mid_fraction; /* bidirectional: the middle row (0 when causal) */
} abl_compare;

/*
 * Run both. ABL_ERR_UNSUPPORTED when the pipeline is not one the predictor models or overflows;
 * ABL_ERR_CONTEXT_RANGE for N outside 1..2^24; slope errors as abl_schedule_build. On failure
 * nothing is left to free; on success abl_compare_free releases it.
 */
ABL_API abl_status abl_compare_run(const abl_compare_config *cfg, abl_compare *out);
ABL_API void abl_compare_free(abl_compare *c);
/* What abl_compare_run costs before it starts: its plan's cost (a part whose estimate fails costs
 * nothing: the run reports that failure). */
ABL_API abl_status abl_compare_estimate(const abl_compare_config *cfg, abl_cost *out);

/* Plan, then run: the comparison's two computations, configured once; plan.steps[0] is the paper's
 * analysis, plan.steps[1] the predictor; plan.cost their costs added. abl_compare_run is
 * abl_compare_plan_make + abl_compare_run_plan. The plan points into cfg's texts (keep cfg alive). */
typedef struct abl_compare_plan {
    abl_compare_config config;
    abl_analysis_config analysis;
    abl_simulate_config predict;
    abl_plan plan;
} abl_compare_plan;

ABL_API abl_status abl_compare_plan_make(const abl_compare_config *cfg, abl_compare_plan *out);
/* Execute the plan (each step's `executed` counts its call); results as abl_compare_run. */
ABL_API abl_status abl_compare_run_plan(abl_compare_plan *plan, abl_compare *out);
ABL_API void abl_compare_plan_free(abl_compare_plan *p);

/* A line shown before the table (the model, its settings and where they came from), given by the caller. */
typedef struct abl_compare_meta {
    const char *key;    /* JSON member */
    const char *label;  /* text label */
    const char *text;   /* value as shown */
    const char *json;   /* JSON token (NULL: a string of text) */
} abl_compare_meta;

/* The side-by-side report: the caller's "model"/"config" line, the settings (pipeline and its fields,
 * dtype, context, heads, slopes, convention), the caller's other lines, one row per head (model
 * order), the paper's and the kernel's summaries. */
ABL_API abl_status abl_compare_report(const abl_compare *c, const abl_compare_meta *meta, size_t nmeta, abl_report **out);

/* check: what makes a key lost (check --criterion). A new criterion is one enum value here and one row
 * of the table in src/lib/model/abl_criterion.c, plus what abl_check_pass reads for it. */
typedef enum abl_check_criterion {
    ABL_CRITERION_WEIGHT = 0,     /* the key's attention weight is exactly 0 */
    ABL_CRITERION_INFLUENCE = 1,  /* the key's term in P.V is 0 for unit-scale V (pv-dtype, pv-accumulate) */
    ABL_CRITERION_COUNT
} abl_check_criterion;

/* The criterion's name ("weight", ...; NULL out of range) and a one-line description (help texts). */
ABL_API const char *abl_check_criterion_name(abl_check_criterion c);
ABL_API const char *abl_check_criterion_help(abl_check_criterion c);

/* check: the limits of a CI gate. */
typedef struct abl_check_limits {
    int max_blind_heads;          /* heads allowed to go blind on the kernel (default 0) */
    mpq_srcptr max_row_fraction;  /* exact, in [0,1], or NULL: no limit */
    abl_check_criterion criterion; /* what counts as lost (default weight) */
} abl_check_limits;

/* 1 when the kernel's answer is within the limits. */
ABL_API int abl_check_pass(const abl_compare *c, const abl_check_limits *l);
/* The verdict report: meta lines, the blind heads (head, slope, first blind, row zeros), the verdict. */
ABL_API abl_status abl_check_report(const abl_compare *c, const abl_check_limits *l, const abl_compare_meta *meta,
                            size_t nmeta, abl_report **out);

#ifdef __cplusplus
}
#endif
#endif
