/* alibi-blind: a whole layer analysed — slopes -> thresholds -> blindness and fractions,
 * with mitigations (paper §3.4) applied — and its report. */
#ifndef ABL_ANALYSIS_H
#define ABL_ANALYSIS_H

#include "abl/core/export.h"

#include <stdint.h>
#include <gmp.h>
#include "abl/core/status.h"
#include "abl/core/progress.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"
#include "abl/core/slope.h"
#include "abl/core/blindness.h"
#include "abl/core/attention.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mitigations of the paper (§3.4, §4.3), combinable. */
enum {
    ABL_MITIGATE_CLAMP = 1u << 0,    /* C: bias* = max(bias, c), c = -87 unless given */
    ABL_MITIGATE_EXPLICIT = 1u << 1, /* E: robust slopes, targets 32 * 2^(h-1) */
    ABL_MITIGATE_LOG = 1u << 2,      /* L: distances ln(d + 1) */
    ABL_MITIGATE_SOFTCAP = 1u << 3   /* S: logits in (-z, z), z = 50 unless given */
};

#define ABL_PAPER_CLAMP (-87)        /* c of mitigation C */
#define ABL_PAPER_SOFTCAP 50         /* z of mitigation S */
#define ABL_PAPER_ROBUST_DELTA1 "32" /* D1 of mitigation E (robust:32) */
#define ABL_PAPER_ROBUST_D1 32        /* the same D1 as a number (abl_schedule_spec_robust) */

/* Parse "C,E,L,S" (any order, any subset, or "none"). */
ABL_API abl_status abl_mitigations_parse(const char *text, unsigned *out);
/* "C+E+L" style name ("none" for 0): a malloc'd string, the caller's to free (NULL: out of memory). */
ABL_API char *abl_mitigations_name(unsigned mitigations);

typedef enum abl_level {
    ABL_LEVEL_EXPONENT = 0, /* the paper: exp(x) itself underflows (x <= tau) */
    ABL_LEVEL_WEIGHT = 1    /* the normalised weight exp(x)/S underflows (x <= tau + ln S, spec §4) */
} abl_level;

typedef struct abl_analysis_config {
    abl_format format;
    abl_convention convention;
    int heads;                 /* 0: from a slopes:/targets: list */
    const abl_schedule_spec *slopes; /* the schedule, parsed at the boundary; NULL = press (or robust:32 under E) */
    uint64_t context;          /* N */
    uint64_t window;           /* W, 0 = none: keys at distance d > W are masked, d <= W attended */
    abl_distance distance;     /* L forces log */
    mpq_srcptr logit;          /* epsilon exactly, NULL = 0 */
    mpq_srcptr clamp;          /* c exactly, NULL = none (C sets -87 when NULL) */
    mpq_srcptr softcap;        /* z > 0 exactly, NULL = none (S sets 50 when NULL); caps the logit to z tanh(eps/z) */
    mpq_srcptr logit_lo, logit_hi; /* a range of logits LO <= eps <= HI (both or neither; NULL = none) */
    unsigned mitigations;
    abl_level level;           /* weight: every logit, clamp, distance and window (spec §4, docs/method.md §5) */
    long gradient_log2;        /* 0: the weights. j != 0: the rounded gradient dS = P * 2^j (spec §15,
                                * analyze --gradient): every blindness query's tau is lowered by j ln 2;
                                * the slopes are still fitted to the format's own tau */
    abl_progress progress;     /* reports of abl_analysis_run and abl_analysis_report (fn NULL: none); the
                                * total is 2 * ABL_ANALYSIS_PROGRESS_UNITS * heads: the run the first half,
                                * the report (its mass lost) the second */
    abl_attention attention;   /* causal (0, the default) or bidirectional: the row and matrix counts of
                                * abl/analysis/bidirectional.h, the end and middle rows; exponent level only */
} abl_analysis_config;

#define ABL_ANALYSIS_PROGRESS_UNITS 1024

typedef struct abl_head_result {
    abl_slope slope;
    int rank;                  /* 1 = steepest */
    abl_delta delta;           /* under the configured convention */
    abl_delta delta_ieee;      /* under the ieee convention, for the spread */
    abl_delta delta_lo, delta_hi; /* soft-cap range: delta(-z), delta(+z) (only with a soft cap) */
    abl_delta delta_exponent;  /* weight level only: the exponent-level delta, for the shift */
    abl_delta delta_range_lo, delta_range_hi; /* logit range: delta(LO), delta(HI) (soft cap applied) */
    int blind_in_context;
    int window_masks;          /* W < delta: the window masks every key before it underflows */
    mpz_t row_blind, matrix_blind;  /* bidirectional: row_blind is the end row's (i = N - 1) */
    mpz_t mid_blind;           /* bidirectional: the middle row's (i = floor((N - 1) / 2)); else 0 */
} abl_head_result;

typedef struct abl_analysis {
    abl_analysis_config config;   /* as resolved (mitigations applied); numbers point at the fields below */
    abl_schedule_spec *spec;      /* the schedule analysed (own heap copy; config.slopes points here) */
    char *slopes_spec;            /* its text (whole, display only) */
    mpq_t logit, clamp, softcap, neg_softcap; /* own copies of the configured numbers */
    mpq_t logit_lo, logit_hi;
    abl_schedule schedule;
    int heads;
    abl_head_result *results;     /* sorted steepest first */
    int blind_heads;
    mpz_t row_attended, matrix_attended;  /* per head: attended keys of the last row, of the matrix */
    mpq_t row_fraction, matrix_fraction;
    mpz_t mid_attended;           /* bidirectional: attended keys of the middle row (else 0) */
    mpq_t mid_fraction;           /* bidirectional: the middle row's fraction (else 0) */
} abl_analysis;

ABL_API abl_status abl_analysis_run(const abl_analysis_config *cfg, abl_analysis *out);

/*
 * Nominal cost of abl_analysis_run and of its report (the mass lost), an upper bound of the CPU time on
 * the reference machine (tests/cost_bound.py): per head, its exact decisions (more at the weight level,
 * where log distances sum up to 4096 terms per decision), the mass lost of a head blind inside the row,
 * and at the weight level the walk over the rows' deltas, bounded per head from closed forms in binary64
 * (abl_analysis.c). Cheap: it parses the schedule and looks at each slope once. Units: heads.
 */
#define ABL_ANALYSIS_HEAD_SECONDS 2e-4  /* the least a head costs (kept for callers; the model is finer) */
ABL_API abl_status abl_analysis_estimate(const abl_analysis_config *cfg, abl_cost *out);
ABL_API void abl_analysis_free(abl_analysis *a);

/*
 * Attention mass lost (spec §4, docs/method.md §5): the share of an exact softmax of the last row's zero
 * logits that sits on its blind keys, sum_{d >= delta} e^(b(d)) / S_k, for head i (0-based, steepest
 * first) or, with i = -1, the layer's mean over heads. Bidirectional: the end row's (the same one horizon
 * of N - 1 keys); abl_analysis_mass_lost_row_text gives any row's, both horizons summed. Printed correctly rounded with `digits` significant
 * digits (%g style: "2.15e-39", "0") into *out, a malloc'd string the caller frees (NULL on an error).
 * ABL_ERR_UNSUPPORTED when the analysis has a non-zero logit.
 */
ABL_API abl_status abl_analysis_mass_lost_text(const abl_analysis *a, int i, int digits, char **out);
/* The same for query row `row` (0..N-1): causal, its keys 0..row; bidirectional, both horizons
 * (row and N - 1 - row keys besides the diagonal). */
ABL_API abl_status abl_analysis_mass_lost_row_text(const abl_analysis *a, int i, uint64_t row, int digits, char **out);

/* The report of an analysis (heads table, summary, notes). The caller frees it. */
ABL_API abl_status abl_analysis_report(const abl_analysis *a, abl_report **out);

#ifdef __cplusplus
}
#endif
#endif
