/* alibi-blind: emulation of a whole causal attention layer through a real pipeline (`simulate`), and
 * the exact zero-logit predictor that answers the same questions without the N x N work. */
#ifndef ABL_SIMULATE_H
#define ABL_SIMULATE_H

#include "abl/core/export.h"

#include <stdint.h>
#include "abl/core/status.h"
#include "abl/core/progress.h"
#include "abl/core/slope.h"
#include "abl/core/attention.h"
#include "abl/kernel/pipeline.h"
#include "abl/kernel/npy.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Positions must be exact in binary32 (FlashAttention's fp32 column index), so N <= 2^24. */
#define ABL_SIMULATE_MAX_CONTEXT (UINT64_C(1) << 24)
#define ABL_SIMULATE_MAX_LOGIT_STD 1000

/*
 * Called for every emulated row when set, one call at a time (rows arrive in any order): the logits
 * the softmax read and the weights as rounded into the output dtype (flash: P), keys 0..row (a
 * bidirectional layer: keys 0..N-1).
 */
typedef void (*abl_row_hook)(void *ctx, int head_index, uint64_t row, const float *logits, const float *weights);

typedef struct abl_simulate_config {
    abl_pipeline pipeline;
    const abl_schedule_spec *slopes; /* the schedule (spec §5), parsed at the boundary; NULL = press */
    int heads;                 /* 0: from a slopes:/targets: list */
    uint64_t context;          /* N: queries 0..N-1, each attending keys 0..i */
    mpq_srcptr logit_std;      /* NULL or 0: zero logits; else Gaussian logits N(0, S^2), S exactly */
    uint64_t seed;             /* Gaussian logits: the same seed gives the same logits */
    int threads;               /* 0: all online cores */
    abl_row_hook row_hook;     /* NULL: none (simulate only) */
    void *row_hook_ctx;
    abl_progress progress;     /* simulate: weights emulated so far, of H N (N + 1) / 2 */
    const abl_npy *logits;     /* captured scores (simulate --logits): [H, N, N] or [N, N]; NULL: none.
                                * Excludes Gaussian logits; N must equal context and a 3-D file's H the
                                * head count (ABL_ERR_MISMATCH otherwise). */
    const abl_format *logits_dtype; /* the dtype the model held the scores in (rounded to it first);
                                * NULL: fp32 */
    abl_attention attention;   /* causal (0) or bidirectional: every row attends all N keys at |i - j|
                                * (abl_simulate_bidir.c); the bias form must be relative or symmetric */
    /* A second zero threshold on the same fp32 weight p, counted in the same pass (abl_sim_head zero2_*):
     * the upcast backward's dS = dtype(fp32(2^j p)) is 0 iff p <= zero_max 2^-j (abl_backward.c), so one
     * emulation gives the forward's zeros and the gradient's. Eager softmax, causal only
     * (ABL_ERR_UNSUPPORTED otherwise). zero2 = 0: none. */
    int zero2;
    double zero2_max;          /* p counts iff p <= zero2_max (compared exactly: binary32 p in binary64) */
    /* row_hook may run on several threads at once (it locks what it shares itself); 0: one call at a time,
     * under the simulation's own lock */
    int row_hook_concurrent;
} abl_simulate_config;

/*
 * Nominal cost of abl_simulate_run: H N (N + 1) / 2 weights at the documented nominal rate (per thread:
 * ABL_SIMULATE_RATE_FAST weights/s for the fast exact rows of zero logits through an eager softmax,
 * ABL_SIMULATE_RATE weights/s otherwise), on min(threads, online cores) threads.
 */
#define ABL_SIMULATE_RATE_FAST 2e8
#define ABL_SIMULATE_RATE 5e6
ABL_API abl_status abl_simulate_estimate(const abl_simulate_config *cfg, abl_cost *out);

/*
 * Nominal cost of abl_predict_run, per algorithm path (src/lib/kernel/abl_predict_cost.c), per thread,
 * measured in a Release build on the project's 2-core machine under load (2026-11-30) and rounded
 * down: flash ABL_PREDICT_RATE_FLASH query rows/s; eager relative/symmetric (exact prefix sums)
 * ABL_PREDICT_RATE_PREFIX rows/s; eager absolute/trailing (certified row-sum bounds)
 * ABL_PREDICT_RATE_BOUND rows/s; sdpa-efficient/sdpa-cudnn (block-wise bisections,
 * abl_predict_sdpa.c) ABL_PREDICT_RATE_SDPA rows/s. Units: H N query rows; heads are split over
 * min(threads, online cores, H) threads, whole heads per thread.
 */
#define ABL_PREDICT_RATE_FLASH 1e7
#define ABL_PREDICT_RATE_PREFIX 3e6
#define ABL_PREDICT_RATE_BOUND 1.5e6
#define ABL_PREDICT_RATE_SDPA 1e6
/* sdpa, relative/symmetric bias: a row sees keys up to W = min(N, ABL_PREDICT_SDPA_SEEN_NATS / m) away;
 * their chains cost W^2 / B products per head, ABL_PREDICT_SDPA_CHAIN_PER_ROW of them to a query row */
#define ABL_PREDICT_SDPA_SEEN_NATS 104.0
#define ABL_PREDICT_SDPA_CHAIN_PER_ROW 460.0
ABL_API abl_status abl_predict_estimate(const abl_simulate_config *cfg, abl_cost *out);

typedef struct abl_sim_head {
    abl_slope slope;           /* exact */
    double slope_held;         /* the slope as the pipeline holds it (slope-dtype) */
    int64_t first_blind;       /* smallest d with a zero weight in the last row; -1: none */
    uint64_t row_zeros;        /* zero weights in the last row */
    uint64_t matrix_zeros;     /* zero weights in the whole causal matrix */
    uint64_t distinct_logits;  /* distinct logit values in the last row */
    uint64_t longest_tie_run;  /* longest run of adjacent keys of the last row sharing one logit */
    uint64_t tied_with_diagonal; /* keys j < N-1 of the last row whose logit equals the diagonal's */
    double tv_distance;        /* 0.5 sum |p - p_exact| over the last row, p_exact a binary64 softmax of
                                * the unrounded logits eps - m d */
    double mass_lost;          /* attention mass lost: the share of that binary64 softmax sitting on the
                                * last row's zero weights (measured) */
    /* Influence (docs/method.md): keys whose term in P.V is 0 for unit-scale V (pipeline fields pv-dtype,
     * pv-accumulate), a superset of the zero weights; equal to them where P.V loses nothing more. */
    int64_t first_influence_zero;     /* smallest d with zero influence in the last row; -1: none */
    uint64_t row_influence_zeros;     /* in the last row */
    uint64_t matrix_influence_zeros;  /* in the whole causal matrix */
    uint64_t mid_row_zeros;    /* bidirectional: zero weights of the middle row i = floor((N - 1) / 2); the
                                * "last row" fields above are the end row i = N - 1 over its N keys */
    /* config.zero2: the weights p <= zero2_max, as first_blind, row_zeros and matrix_zeros */
    int64_t zero2_first_blind;
    uint64_t zero2_row_zeros, zero2_matrix_zeros;
} abl_sim_head;

typedef struct abl_simulation {
    abl_simulate_config config;  /* as given (its strings and numbers must outlive the simulation) */
    double logit_std;
    int heads;
    abl_sim_head *results;     /* in the model's head order */
    uint64_t row_zeros, matrix_zeros;   /* layer totals */
    uint64_t mid_row_zeros;             /* bidirectional: the middle rows' total */
    int threads_used;
    uint64_t row_influence_zeros, matrix_influence_zeros;   /* layer totals of the influence-zero keys */
    int influence_differs;     /* the pipeline's P.V can lose a key whose weight is not 0 */
    abl_schedule schedule;     /* owns the numbers and texts results[h].slope point into */
} abl_simulation;

/*
 * Emulate the N x N causal attention matrix of every head through the pipeline, streaming: O(N)
 * memory per thread, rows shared between threads. ABL_ERR_UNSUPPORTED when the pipeline cannot be
 * emulated (abl_pipeline_check) or its bias or logits overflow to Inf/NaN at this N;
 * ABL_ERR_CONTEXT_RANGE for N outside 1..ABL_SIMULATE_MAX_CONTEXT.
 */
ABL_API abl_status abl_simulate_run(const abl_simulate_config *cfg, abl_simulation *out);
ABL_API void abl_simulation_free(abl_simulation *s);

/* Zero-logit prediction of the zero pattern, exact (same model as the emulation). */
typedef struct abl_pred_head {
    int64_t first_blind;       /* -1: none */
    uint64_t row_zeros, matrix_zeros;
    uint64_t mid_row_zeros;    /* bidirectional: the middle row's (row_zeros: the end row's) */
    uint64_t exact_rows;       /* rows whose sum had to be formed exactly (the certified bound was
                                * not enough to decide); a cost diagnostic */
    int64_t first_influence_zero;     /* as abl_sim_head's */
    uint64_t row_influence_zeros, matrix_influence_zeros;
} abl_pred_head;

typedef struct abl_prediction {
    int heads;
    abl_pred_head *results;    /* model order */
    uint64_t row_zeros, matrix_zeros;
    uint64_t mid_row_zeros;    /* bidirectional: the middle rows' total */
    uint64_t exact_rows;
    uint64_t row_influence_zeros, matrix_influence_zeros;
    int influence_differs;     /* as abl_simulation's */
} abl_prediction;

/*
 * For zero logits: the per-head first blind distance and zero counts that abl_simulate_run returns,
 * in O(N log N) per head (exact prefix sums for relative/symmetric forms; for absolute/trailing forms
 * a certified binary64 bound on each row sum, with the exact sum formed only for rows the bound
 * cannot decide). ABL_ERR_UNSUPPORTED for Gaussian logits, or an eager pipeline other than
 * sum=exact, exp=correct (the predictor relies on a monotone exp and an order-free sum).
 */
ABL_API abl_status abl_predict_run(const abl_simulate_config *cfg, abl_prediction *out);
ABL_API void abl_prediction_free(abl_prediction *p);

/*
 * The report: one row per head (model order). sim and/or pred may be NULL (not both): with both, the
 * predictor's columns are shown beside the simulation's with an agreement column. cfg is needed
 * when sim is NULL.
 */
ABL_API abl_status abl_simulation_report(const abl_simulate_config *cfg, const abl_simulation *sim,
                                 const abl_prediction *pred, abl_report **out);

/* 1 when the prediction agrees with the simulation on every head's first blind distance and zero counts,
 * and on its first influence-zero distance and influence-zero counts. */
ABL_API int abl_prediction_agrees(const abl_simulation *sim, const abl_prediction *pred);

#ifdef __cplusplus
}
#endif
#endif
