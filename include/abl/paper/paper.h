/* alibi-blind: the paper's tables (1, 4, 5, 8) and the data of its Figure 1, computed from the
 * definitions (spec §8). Published values are never copied into these outputs; reproduce.h
 * compares the two. */
#ifndef ABL_PAPER_H
#define ABL_PAPER_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <gmp.h>
#include <mpfr.h>
#include "abl/core/status.h"
#include "abl/core/progress.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"
#include "abl/model/catalogue.h"
#include "abl/core/slope.h"
#include "abl/core/blindness.h"
#include "abl/analysis/analysis.h"
#include "abl/report/report.h"
#include "abl/paper/published.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Heads of the paper's trained models (Table 7), the H of Table 8. */
#define ABL_TABLE8_HEADS 9

/* Settings shared by the table builders; abl_paper_options_default gives the paper's (bf16, paper). */
typedef struct abl_paper_options {
    abl_format format;
    abl_convention convention;
    int exact;   /* Table 8: print delta itself (4.37e53 style) instead of the * / ** cells */
    int ieee;    /* Tables 1 and 5: add delta under the ieee convention beside it */
} abl_paper_options;

ABL_API void abl_paper_options_default(abl_paper_options *o);

/* ---------------------------------------------------------------- Table 8 */

/* One configuration (row) of Table 8. */
typedef struct abl_table8_config {
    const char *name;        /* the paper's row name: "Steep", "ALiBi (default)", "C+E+L", ... */
    abl_schedule_kind slopes; /* PRESS (or E's robust slopes when E is set) or GEOMETRIC: geometric:d1:dh */
    long d1, dh;              /* GEOMETRIC: the targets of the first and the last head */
    unsigned mitigations;    /* ABL_MITIGATE_* */
} abl_table8_config;

/* The 16 configurations of spec §8, in the paper's order. */
ABL_API size_t abl_table8_config_count(void);
ABL_API const abl_table8_config *abl_table8_config_at(size_t i);
ABL_API const abl_table8_config *abl_table8_config_find(const char *name);

/*
 * The nine distances of a configuration, steepest head first, into deltas[0..8] (initialised by the
 * caller). Only E and L enter: C and S do not change the distances the slopes and the distance
 * scaling imply (spec §8). spec (may be NULL) receives the resolved schedule ("robust-log:32"), malloc'd,
 * the caller's to free (set only on ABL_OK).
 */
ABL_API abl_status abl_table8_deltas(const abl_table8_config *c, const abl_paper_options *o, abl_delta *deltas,
                             char **spec);

/* A Table 8 cell: abl_delta_table8_cell, or with `exact` the delta itself ("8192", "4.37e53"); malloc'd,
 * the caller's to free (NULL only when out of memory). */
ABL_API char *abl_table8_cell_text(const abl_delta *d, int exact);

ABL_API abl_status abl_table8_report(const abl_paper_options *o, abl_report **out);

/* ---------------------------------------------------------------- Table 1 */

/* A model of Table 1, as its configuration defines it: inputs, not the paper's printed values. */
typedef struct abl_paper_model {
    const char *name;         /* Table 1's name: "BLOOM", "Falcon-RW", "MPT" */
    const char *hub_id;       /* "bigscience/bloom-560m" */
    const char *table5_name;  /* its row in Table 5 */
    const char *size, *languages;
    uint64_t window;
    int layers, heads;
    abl_pow2_schedule schedule; /* the schedule as the model's code computes it: press, mpt:8 */
    const char *slopes;       /* its display name ("press", "mpt:8"), shown in outputs (test_paper checks it
                               * against the value) */
    const char *config;       /* where heads/layers/window come from (one line) */
} abl_paper_model;

ABL_API size_t abl_paper_model_count(void);
ABL_API const abl_paper_model *abl_paper_model_at(size_t i);
ABL_API const abl_paper_model *abl_paper_model_find(const char *name);
/* The model's schedule as a value (from the typed row, no text read; free with abl_schedule_spec_free). */
ABL_API abl_status abl_paper_model_schedule(const abl_paper_model *m, abl_schedule_spec *out);

/*
 * Steepest and flattest delta of `heads` heads of schedule `slopes` (NULL: press; the deltas initialised
 * by the caller), and
 * when text != NULL, *text = the slopes as "2^-0.5, 2^-1, …, 2^-8" (first two and last, steepest first),
 * a malloc'd string the caller frees (NULL on an error).
 */
ABL_API abl_status abl_paper_model_deltas(const abl_schedule_spec *slopes, int heads, const abl_format *fmt, abl_convention conv,
                                          abl_delta *first, abl_delta *last, char **text);

ABL_API abl_status abl_table1_report(const abl_paper_options *o, abl_report **out);
/* Table 1 with its kernel columns run from `plan` (made by abl_table_kernel_plan_make(1, ...)). */
struct abl_table_kernel_plan;
ABL_API abl_status abl_table1_report_plan(const abl_paper_options *o, struct abl_table_kernel_plan *plan,
                                          abl_report **out);

/* Nominal cost of the real-kernel columns of table 1 or 5 (the zero-logit predictor on each catalogued
 * model at its window). It does not depend on the options: the catalogue fixes it. pub as for
 * abl_table5_report (NULL: the built-in tables). */
ABL_API abl_status abl_table_kernel_estimate(int table, const abl_published *pub, abl_cost *out);

/*
 * Plan, then run: the kernel columns of table 1 or 5, one step per row in the order the table prints
 * them (table 5's rows marked ‡ included): "predict" (the zero-logit predictor on the row's catalogue
 * model at its window, with its cost), "reuse" (table 5: the previous row ran exactly this, its answer
 * is copied; no cost) or "skip" (the cells stay empty; no cost). The estimate is plan.cost;
 * abl_table1_report / abl_table5_report make the plan and run it (the _plan forms run a given one, each
 * row counted in its step's `executed`). A plan runs once (next: the run's cursor).
 */
typedef struct abl_table_kernel_plan {
    int table;
    const struct abl_model **models; /* per step: the row's catalogue model (NULL: none) */
    size_t next;
    abl_plan plan;
} abl_table_kernel_plan;
ABL_API abl_status abl_table_kernel_plan_make(int table, const abl_published *pub, abl_table_kernel_plan *out);
ABL_API void abl_table_kernel_plan_free(abl_table_kernel_plan *p);

/* ---------------------------------------------------------------- Table 4 */

/*
 * The paper's Table 4 layout (underflow τu, denorm τd, overflow τo per format) computed with
 * `decimals` digits; rn adds the exact round-to-nearest points (rn-zero, rn-overflow).
 */
ABL_API abl_status abl_table4_report(const abl_format *formats, size_t nformats, int decimals, int rn, abl_report **out);

/* ---------------------------------------------------------------- Table 5 */

/*
 * The model list of Table 5 (names, windows and heads as the transcription prints them; pub = NULL:
 * the compiled-in one) with computed columns: delta_1, delta_H of `press` slopes, heads blind inside
 * the model's own window, and the row and matrix fractions at context = window.
 */
ABL_API abl_status abl_table5_report(const abl_published *pub, const abl_paper_options *o, abl_report **out);
/* Table 5 with its kernel columns run from `plan` (made by abl_table_kernel_plan_make(5, pub, ...)). */
ABL_API abl_status abl_table5_report_plan(const abl_published *pub, const abl_paper_options *o,
                                          abl_table_kernel_plan *plan, abl_report **out);

/* ---------------------------------------------------------------- Figure 1 */

typedef struct abl_figure_config {
    abl_format format;
    abl_convention convention;
    int heads;                /* 16 in the paper */
    const abl_schedule_spec *slopes; /* the schedule, parsed at the boundary; NULL: press */
    uint64_t max_distance;    /* last x value (4096) */
    uint64_t step;            /* x spacing */
} abl_figure_config;

/* The paper's Figure 1 settings: bf16, paper, 16 press heads, 0..4096; step 64 for 1a, 16 for 1b. */
ABL_API void abl_figure_config_default(abl_figure_config *c, int panel_b);

typedef struct abl_figure {
    abl_figure_config config;
    abl_schedule_spec *spec;  /* the schedule drawn (own heap copy; config.slopes points here) */
    abl_schedule schedule;    /* the slopes' exact numbers live here */
    const char *slopes_spec;  /* = schedule.spec (display) */
    int heads;
    abl_slope *slopes;        /* steepest first (pointing into schedule) */
    abl_delta *deltas;        /* delta of each, under the configured convention */
    size_t points;
    uint64_t *x;              /* 0, step, 2 step, ..., max_distance (always included) */
} abl_figure;

ABL_API abl_status abl_figure_run(const abl_figure_config *c, abl_figure *out);
ABL_API void abl_figure_free(abl_figure *f);

/* Figure 1a: bias -m·d of every head at every x, and the threshold line. */
ABL_API abl_status abl_figure1a_report(const abl_figure *f, abl_report **out);
/* Figure 1b: row and matrix underflow fractions at context N = x (0 at N = 0). */
ABL_API abl_status abl_figure1b_report(const abl_figure *f, abl_report **out);

/*
 * The cost of a panel's series: points x heads values (`panel_b` 0 for 1a, 1 for 1b) at the nominal
 * rate ABL_FIGURE_RATE per second. A report (abl_figure1a_report/1b) holds the whole table in memory
 * and is refused (ABL_ERR_CONTEXT_RANGE) past ABL_FIGURE_MAX_CELLS cells; abl_figure_write_csv streams
 * the series row by row in O(heads) memory, with the same bytes as the report's CSV rendering.
 */
#define ABL_FIGURE_RATE 8e4
#define ABL_FIGURE_MAX_CELLS 4000000
ABL_API void abl_figure_estimate(const abl_figure *f, abl_cost *out);
/* The same from the configuration, before abl_figure_run (which analyses every head): points x heads at
 * ABL_FIGURE_RATE plus the analysis of the heads (abl_analysis_estimate). */
ABL_API abl_status abl_figure_estimate_config(const abl_figure_config *c, int panel_b, abl_cost *out);
/*
 * Plan, then run: plan.steps[0] the heads' analysis (run at N = 1: the deltas do not depend on N;
 * priced at max_distance, an upper bound; its time counted, no plotted value), plan.steps[1] the points x heads values at ABL_FIGURE_RATE (the run lays
 * out the points, the report or CSV writer evaluates them). abl_figure_estimate_config returns plan.cost
 * (or `priced`, the analysis estimate's error); abl_figure_run is abl_figure_plan_make +
 * abl_figure_run_plan. ABL_ERR_CONTEXT_RANGE as abl_figure_run.
 */
typedef struct abl_figure_plan {
    abl_figure_config config;
    abl_analysis_config analysis;
    uint64_t points;
    abl_status priced;
    abl_plan plan;
} abl_figure_plan;
ABL_API abl_status abl_figure_plan_make(const abl_figure_config *c, abl_figure_plan *out);
ABL_API abl_status abl_figure_run_plan(abl_figure_plan *plan, abl_figure *out);
ABL_API void abl_figure_plan_free(abl_figure_plan *p);
ABL_API abl_status abl_figure_write_csv(const abl_figure *f, int panel_b, FILE *out, const abl_progress *progress);

#ifdef __cplusplus
}
#endif
#endif
