/* alibi-blind: design — slopes, a clamp and logit budgets that keep every head seeing on a real kernel
 * (issue 10). Every slope answer is decided by the exact zero-logit predictor of the kernel (and can be
 * checked by the emulation); clamps and logit budgets are decided exactly at the weight level (spec §4). */
#ifndef ABL_DESIGN_H
#define ABL_DESIGN_H

#include "abl/core/export.h"

#include <stdint.h>
#include <gmp.h>
#include "abl/core/status.h"
#include "abl/core/slope.h"
#include "abl/kernel/pipeline.h"
#include "abl/core/progress.h"
#include "abl/core/attention.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abl_design_config {
    abl_pipeline pipeline;    /* the kernel */
    uint64_t context;         /* N >= 1: no zero weight anywhere in the N x N causal matrix */
    mpq_srcptr budget;        /* logit budget B <= 0 a key at distance N - 1 must still be seen with; NULL = 0 */
    int threads;              /* 0: all online cores */
    /* --keep gradient (issue 20, spec §15): 1 = a head is sighted when no key of the N x N matrix gets an
     * exactly-zero rounded gradient dS = P (dP - D) for |dP - D| x loss scale = 2^log2_upstream (the
     * zero-logit gradient predictor, abl_backward_predict), instead of no zero weight. Eager softmaxes only
     * (ABL_ERR_UNSUPPORTED otherwise), no budget (ABL_ERR_UNSUPPORTED), no clamp or min-logit checks. */
    int gradient;
    long log2_upstream;
    abl_attention attention;  /* causal (0, the default) or bidirectional (an encoder layer): the searches, the
                               * largest contexts and the verification then ask the bidirectional predictor
                               * and emulation (abl_simulate_bidir.c) for a zero weight anywhere in the N x N
                               * matrix, every row with its two horizons (docs/design.md, "Bidirectional
                               * layers"). The checks that walk a causal last row (abl_design_min_logit,
                               * abl_design_clamp_find, a logit budget) answer ABL_ERR_UNSUPPORTED for it. */
} abl_design_config;

/* Slopes are binary32 values (what training code holds); 0 < m. */

/*
 * Whether a head with slope m keeps every weight of the N x N matrix non-zero on the kernel (zero logits,
 * the exact predictor) and, with a budget, keeps a key of logit B at distance N - 1 (weight level for eager
 * kernels, exponent level for flash). *ok = 1 or 0.
 */
ABL_API abl_status abl_design_sighted(const abl_design_config *c, float m, int *ok);

/*
 * --keep all: the steepest binary32 slope m1 that stays sighted at N, and H slopes m1 2^(-8(h-1)/H)
 * (the Press spread) rounded to binary32. ABL_ERR_DEGENERATE when even the flattest slope (2^-100) is not
 * sighted (an impossible budget or context).
 */
ABL_API abl_status abl_design_keep_all(const abl_design_config *c, int heads, float *out);

/* The most one-head predictions at N that abl_design_keep_all makes, and that abl_design_targets makes per
 * target: a bisection over the binary32 slopes 2^-100 .. 64 (bit patterns 0x0d800000 .. 0x42800000: at
 * most 30 steps) and two checks at its ends. A caller sizes the work from it (abl_predict_estimate). */
#define ABL_DESIGN_SEARCH_PREDICTIONS 32

/*
 * --targets: per target t (< N), the flattest binary32 slope whose first blind distance in the last row of
 * the N-token context is t. ABL_ERR_DEGENERATE, with *failed the 0-based index, when no binary32 slope
 * lands exactly on t (the kernel's distances jump over it) or t >= N.
 */
ABL_API abl_status abl_design_targets(const abl_design_config *c, const uint64_t *targets, int n, float *out, int *failed);

/* The largest N' <= cap with no zero weight in N' x N' for slope m (zero logits); cap when none up to it. */
ABL_API abl_status abl_design_largest_context(const abl_design_config *c, float m, uint64_t cap, uint64_t *out);

/* First blind distance in the last row of the N-token context (-1: none), by the predictor. */
ABL_API abl_status abl_design_first_blind(const abl_design_config *c, float m, int64_t *out);

/*
 * The smallest logit (relative to the zero-logit keys, in nats) a key at distance d needs to keep a
 * non-zero weight in the last row of the N-token context, on the kernel: the key's score goes through the
 * kernel's roundings (its logit in the logit dtype, the softmax as `simulate` emulates it), the smallest
 * binary32 score that keeps the weight is found by bisection and checked (that score keeps it, the next
 * binary32 score below loses it), then written in nats rounded up to `decimals` digits (malloc'd).
 * "none" when no score keeps it. ABL_ERR_MISMATCH when the check fails (the kernel is not monotone there).
 */
ABL_API abl_status abl_design_min_logit(const abl_design_config *c, float m, uint64_t d, int decimals, char **out);

/*
 * --clamp: the least restrictive clamp c (the most negative value; bias = max(-m d, c)) with which no head
 * of `slopes` has a zero weight anywhere in the N x N matrix, decided on the kernel: every binary32 c is
 * stored as the kernel stores its bias (eager: the bias dtype; flash: fp32 in its score units), each
 * candidate's last rows run through the kernel's emulation (the relative form; with zero logits the last
 * row holds every zero of the matrix), and the answer is checked one step beyond (the next representable
 * clamp below leaves a zero weight). The exact weight level (spec §4) gives the bound and the margins:
 * for each head its smallest weight is the clamped key's e^c/S_N(c) when the clamp engages inside the row
 * (m (N-1) > -c), else the unclamped key at N - 1. ABL_ERR_UNSUPPORTED for the sdpa-* softmaxes (their
 * running max makes a row's zeros depend on more than the last row); ABL_ERR_DEGENERATE when even c = 0
 * leaves zero weights.
 */
typedef struct abl_design_clamp {
    mpq_t clamp;               /* the least restrictive clamp as stated (eager: a bias-dtype value) */
    char *clamp_text;          /* its exact decimal, or "none" when none_needed */
    char *next_text;           /* the next representable clamp below it, which the kernel shows failing */
    int next_failing;          /* how many heads that one leaves with a zero weight */
    char *bound_text;          /* weight level: the least clamp on the 10^-decimals grid ("none") */
    char *margin_text;         /* weight level: the smallest margin over heads at clamp (nats, 6 decimals) */
    char *paper_margin_text;   /* the same at -87 (4 decimals) */
    int paper_failing;         /* on the kernel: heads -87 leaves with a zero weight */
    int none_needed;           /* the schedule keeps every weight unclamped: any clamp keeps them */
} abl_design_clamp;
ABL_API void abl_design_clamp_init(abl_design_clamp *r);
ABL_API void abl_design_clamp_clear(abl_design_clamp *r);
ABL_API abl_status abl_design_clamp_find(const abl_design_config *c, const float *slopes, int n, int decimals,
                                 abl_design_clamp *out);

/*
 * Nominal cost of the kernel-level checks that print design's claims: `min_logits` searches per head of
 * abl_design_min_logit (ABL_DESIGN_MIN_LOGIT_ROWS rows each) and, when clamp is set, abl_design_clamp_find
 * (ABL_DESIGN_CLAMP_ROWS rows per head). Units: weights emulated (N per row), one thread, at
 * ABL_DESIGN_ROW_RATE weights/s (measured about 3e7 on the project's 2-core machine under load, 2026-12-01;
 * a third of it), plus a fixed cost that dominates at short contexts: ABL_DESIGN_MIN_LOGIT_SECONDS per
 * search (its set-up) and ABL_DESIGN_CLAMP_HEAD_SECONDS per head for the clamp (the weight level's MPFR
 * bisection); both twice what 4096 heads at N = 64 measured there (0.16 ms and 0.23 ms).
 */
#define ABL_DESIGN_MIN_LOGIT_ROWS 48
#define ABL_DESIGN_CLAMP_ROWS 40
#define ABL_DESIGN_ROW_RATE 1e7
#define ABL_DESIGN_MIN_LOGIT_SECONDS 3e-4
#define ABL_DESIGN_CLAMP_HEAD_SECONDS 5e-4
/* The cost of those checks: the cost of a plan with their two steps (abl_design_plan_make prices its
 * "min logit" and "clamp" steps the same way). */
ABL_API abl_status abl_design_checks_estimate(const abl_design_config *c, int heads, int min_logits, int clamp,
                                      abl_cost *out);

/*
 * Design, planned (issue 17 item 2): the design command's whole computation as a plan built from a job.
 * Steps, in run order: the search ("design search": abl_design_keep_all and the check one slope beyond,
 * one call; "design targets": abl_design_targets, one call; "largest context": one
 * abl_design_largest_context per held slope), the check after it ("verify": abl_design_verify;
 * "simulate": the targets' emulation, N <= ABL_DESIGN_SIMULATE_MAX only), then, when `checks` is set,
 * "min logit" (abl_design_min_logit at d = N/2 and d = N - 1 per head; not for the clamp alone) and
 * "clamp" (abl_design_held_slopes of the schedule and abl_design_clamp_find, one call; not for targets). Each step's cost is its calls' public estimate (abl_predict_estimate,
 * abl_simulate_estimate, abl_design_checks_estimate); the plan's cost is their sum.
 */
#define ABL_DESIGN_SIMULATE_MAX 4096
#define ABL_DESIGN_SEES_CAP (UINT64_C(1) << 24)

typedef enum abl_design_mode {
    ABL_DESIGN_KEEP_ALL,   /* H slopes, the steepest as steep as the kernel allows */
    ABL_DESIGN_TARGETS,    /* one slope per target first blind distance */
    ABL_DESIGN_JUDGE,      /* held slopes judged: the largest N each keeps */
    ABL_DESIGN_CLAMP_ONLY  /* only the clamp for the schedule */
} abl_design_mode;

typedef struct abl_design_job {
    abl_design_config cfg;
    abl_design_mode mode;
    int heads;                         /* KEEP_ALL, CLAMP_ONLY: H; TARGETS: the targets; JUDGE: the held slopes */
    const uint64_t *targets;           /* TARGETS (borrowed) */
    const float *held;                 /* JUDGE: the slopes as the kernel holds them (borrowed) */
    const abl_schedule_spec *schedule; /* KEEP_ALL, CLAMP_ONLY: the schedule the clamp is judged for (NULL: press) */
    int checks;                        /* 1: the clamp and the min logits the report prints */
} abl_design_job;

typedef struct abl_design_plan {
    abl_plan plan;
    abl_design_job job;                /* a copy: its pointers stay the caller's */
    long step_search, step_verify, step_clamp, step_min_logit; /* -1: not planned */
} abl_design_plan;

typedef struct abl_design_result {
    float *slopes;             /* the answer (JUDGE: a copy of the held slopes; CLAMP_ONLY: NULL) */
    int n;                     /* its heads */
    uint64_t *sees;            /* JUDGE: the largest N per head (ABL_DESIGN_SEES_CAP: none below it) */
    int simulated;             /* the emulation checked the answer */
    char **min_logits;         /* 2 per head (d = N/2, d = N - 1), when planned */
    abl_design_clamp clamp;    /* when have_clamp */
    int have_clamp, clamp_skipped, clamp_heads;
    int failed;                /* TARGETS, ABL_ERR_DEGENERATE: the target no slope lands on */
    const char *stage;         /* on failure: the step that failed ("design search", "steepest", ...) */
} abl_design_result;

ABL_API abl_status abl_design_plan_make(const abl_design_job *job, abl_design_plan *out);
/* Runs the plan's steps in order, counting each call in its step; progress in milliseconds of the plan's
 * nominal seconds. On failure, out->stage names the step and the status says why. */
ABL_API abl_status abl_design_run_plan(abl_design_plan *p, const abl_progress *progress, abl_design_result *out);
ABL_API void abl_design_plan_free(abl_design_plan *p);
ABL_API void abl_design_result_free(abl_design_result *r);

/* --keep gradient on pipeline p: NULL when a zero-logit gradient predictor answers for it (the eager softmax
 * backward, the memory-efficient SDPA one, FlashAttention-2's without split-KV; spec §15), else a static
 * sentence saying why not, for the caller to prefix with the option and the softmax's name. One rule for
 * the CLI and the Python layer. */
ABL_API const char *abl_design_gradient_refusal(const abl_pipeline *p);

/*
 * Verification: every slope through the predictor (matrix zeros must be 0) and, when N <= max_simulate,
 * through the full emulation of the kernel. *simulated = 1 when the emulation ran. ABL_ERR_MISMATCH when a
 * head has a zero weight.
 */
ABL_API abl_status abl_design_verify(const abl_design_config *c, const float *slopes, int n, uint64_t max_simulate,
                             int *simulated);

/* The slopes as the kernel holds them for a schedule (NULL: press; one emulated row): binary32 values,
 * model order. */
ABL_API abl_status abl_design_held_slopes(const abl_design_config *c, const abl_schedule_spec *spec, int heads,
                                          float **out, int *n);

/* The schedule slopes:m1,...,mn of binary32 values, exactly (no text round trip; free with
 * abl_schedule_spec_free). ABL_ERR_BAD_SLOPE for a value that is not positive. */
ABL_API abl_status abl_design_slopes_schedule(const float *slopes, int n, abl_schedule_spec *out);

/* How a design report names what the caller resolved: the catalogue model (NULL: none), the config.json read
 * (NULL: none), the kernel as the user gave it ("eager" when none) and the schedule the clamp is judged for
 * (KEEP_ALL, CLAMP_ONLY, JUDGE). */
typedef struct abl_design_shown {
    const char *model;
    const char *config;
    const char *kernel;
    const char *schedule;
} abl_design_shown;

/* design's report of a finished run: a row per head (slope, target or largest N, first distance without
 * influence where the kernel's P.V loses more keys than its weights, min logits), the clamp's lines and
 * the notes. The document the CLI prints and abl_flat_design returns. */
ABL_API abl_status abl_design_report(const abl_design_job *job, const abl_design_result *res,
                                     const abl_design_shown *shown, abl_report **out);

/* "slopes:m1,m2,..." with each binary32 value written exactly (malloc'd); analyze --slopes reads it back. */
ABL_API char *abl_design_slopes_spec(const float *slopes, int n);

#ifdef __cplusplus
}
#endif
#endif
