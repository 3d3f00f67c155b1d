/* alibi-blind: the flat entry points, for bindings (the Python package alibi_blind loads them with ctypes).
 *
 * Plain C values in (names, integers, decimal text for exact numbers, a pointer to captured scores), one
 * result handle out: the command's JSON text (the same document as the CLI's --format json) or one line
 * saying why not. No GMP type crosses this boundary. Like the CLI, these functions are a boundary: they
 * take the user's text for dtypes, slopes (--slopes) and pipelines (--pipeline) and parse it once. */
#ifndef ABL_FLAT_H
#define ABL_FLAT_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include "abl/core/progress.h"
#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The answer of one call: status ABL_OK and the JSON text, or another status and one line (no newline). */
typedef struct abl_flat_result abl_flat_result;

ABL_API int abl_flat_status(const abl_flat_result *r);        /* an abl_status; ABL_ERR_NO_MEMORY for NULL */
/* The document: always with ABL_OK; also with ABL_ERR_MISMATCH from simulate(compare) (the CLI's exit 1:
 * the document stands, the emulation and the predictor differ); else NULL. */
ABL_API const char *abl_flat_json(const abl_flat_result *r);
ABL_API const char *abl_flat_message(const abl_flat_result *r); /* NULL when ABL_OK */
ABL_API void abl_flat_free(abl_flat_result *r);

/* The work budget, as the CLI's: a computation whose nominal cost is above budget_seconds (<= 0: 60 s)
 * is refused unless force; progress (fn NULL: none) gets the work done so far. NULL: all defaults. */
typedef struct abl_flat_work {
    double budget_seconds;
    int force;
    abl_progress_fn progress;
    void *progress_ctx;
} abl_flat_work;

/* A model and the options over it (--model or --config, then --dtype, --heads, --slopes, --ctx, --pipeline,
 * which override the model's values; the document says where each value came from). model: a catalogue
 * name, alias or Hugging Face id; config: a config.json, or a folder holding one. NULL/0: the model's. */
typedef struct abl_flat_model_args {
    const char *model, *config;
    const char *dtype;
    int heads;
    const char *slopes;
    uint64_t ctx;
    const char *pipeline;        /* PRESET[,FIELD=VALUE...] or a code path of the model's family */
} abl_flat_model_args;

/* thresholds --dtype A,B --digits D: names[0..n-1] (n == 0: every format, as 'all'). */
ABL_API abl_flat_result *abl_flat_thresholds(const char *const *names, size_t n, int digits);

/* analyze without a model or a kernel: the paper's analysis of one layer. Every pointer may be NULL (the
 * CLI's default); numbers are exact decimal text. */
typedef struct abl_flat_analyze_args {
    const char *const *dtypes;  /* format names; ndtypes 0: bf16 */
    size_t ndtypes;
    int dtype_list;             /* 1: the document of a list (--dtype A,B or all), even of one format */
    const char *convention;
    int heads;                  /* 0: from a slopes:/targets: list */
    uint64_t ctx;               /* required (>= 1) */
    uint64_t window;            /* 0: none */
    const char *slopes;
    const char *distance;       /* linear | log */
    const char *level;          /* exponent | weight */
    const char *mitigate;       /* C,E,L,S list or none */
    const char *logit, *logit_lo, *logit_hi, *clamp, *softcap;
} abl_flat_analyze_args;
ABL_API abl_flat_result *abl_flat_analyze(const abl_flat_analyze_args *a, const abl_flat_work *w);

/* Captured scores held by the caller: C-contiguous little-endian [heads, n, n] (ndim 3) or [n, n]
 * (ndim 2), itemsize 4 (float32) or 2 (float16); read in place, never copied. */
typedef struct abl_flat_scores {
    const void *data;
    int itemsize;
    int ndim;
    uint64_t heads, n;
} abl_flat_scores;

/* simulate (the options over --pipeline; with model set, over a model: see abl_flat_model_args). */
typedef struct abl_flat_simulate_args {
    const char *dtype;          /* the model dtype; NULL: bf16 */
    const char *pipeline;       /* PRESET[,FIELD=VALUE...]; NULL: eager */
    int heads;                  /* 0: a slopes list's length, or the scores' H */
    uint64_t ctx;               /* 0: the scores' N (required without scores) */
    const char *slopes;
    const char *logit_std;      /* decimal text; NULL: zero logits */
    uint64_t seed;
    int threads;                /* 0: every core */
    int predict, compare;
    const abl_flat_scores *logits;   /* NULL: none */
    const char *logits_dtype;
    const char *model, *config;  /* NULL: none (then dtype, pipeline, heads, slopes, ctx alone) */
} abl_flat_simulate_args;
ABL_API abl_flat_result *abl_flat_simulate(const abl_flat_simulate_args *a, const abl_flat_work *w);

/* models [NAME]: the catalogue (name NULL, full JSON), or one model. */
ABL_API abl_flat_result *abl_flat_models(const char *name);

/* analyze with a kernel (--model/--config/--pipeline): the paper's delta beside the kernel's exact first
 * blind distance, head by head. m->dtype is ignored: dtypes/ndtypes/dtype_list as abl_flat_analyze (a list
 * gives the document of a list); convention as analyze's. */
ABL_API abl_flat_result *abl_flat_analyze_kernel(const abl_flat_model_args *m, const char *const *dtypes, size_t ndtypes,
                                                 int dtype_list, const char *convention, const abl_flat_work *w);

/* check: the CI gate. max_blind_heads (>= 0), max_row_fraction (decimal text in [0, 1], NULL: none). Status
 * ABL_ERR_MISMATCH with the document when the model is over the limits (the CLI's exit 1). */
ABL_API abl_flat_result *abl_flat_check(const abl_flat_model_args *m, int max_blind_heads, const char *max_row_fraction,
                                        const abl_flat_work *w);

/* table N (1, 4, 5, 8). Table 4: names[0..n-1] (n 0 with list 0: bf16,fp32; list 1 with n 0: all), digits
 * (-1: 4), rn. Tables 1, 5, 8: one format (n 0: bf16), convention (NULL: paper), exact (8), ieee (1, 5).
 * A setting the table does not take is refused, as the CLI does. */
typedef struct abl_flat_table_args {
    int table;
    const char *const *dtypes;
    size_t ndtypes;
    int dtype_list;
    const char *convention;
    int digits;
    int exact, ieee, rn;
} abl_flat_table_args;
ABL_API abl_flat_result *abl_flat_table(const abl_flat_table_args *a, const abl_flat_work *w);

/* reproduce [--published DIR] [--differences]: status ABL_ERR_MISMATCH with the document when a difference
 * is unexplained or an erratum stale (the CLI's exit 1). */
/* design: the CLI's design command (abl_design_report's document). The model arguments as for check (heads
 * and slopes: the heads designed, or the schedule judged); keep "all" or NULL; targets: first blind distances,
 * one per head (NULL: none); keep "gradient": every key keeps a non-zero rounded gradient dS (the eager
 * softmax backward); clamp_only: the clamp alone; logit_budget: decimal text, 0 or negative. */
typedef struct abl_flat_design_args {
    const char *keep;
    const uint64_t *targets;
    size_t ntargets;
    int clamp_only;
    const char *logit_budget;
    int threads;                /* 0: every core */
    /* keep "gradient" (spec §15): |dP - D| x loss scale as powers of two, text as the CLI's --upstream and
     * --loss-scale ("65536", "2^16", "dynamic"); NULL: 1 */
    const char *upstream, *loss_scale;
} abl_flat_design_args;
ABL_API abl_flat_result *abl_flat_design(const abl_flat_model_args *m, const abl_flat_design_args *d,
                                         const abl_flat_work *w);

ABL_API abl_flat_result *abl_flat_reproduce(const char *published_dir, int differences);

#ifdef __cplusplus
}
#endif
#endif
