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

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abl_design_config {
    abl_pipeline pipeline;    /* the kernel */
    uint64_t context;         /* N >= 1: no zero weight anywhere in the N x N causal matrix */
    mpq_srcptr budget;        /* logit budget B <= 0 a key at distance N - 1 must still be seen with; NULL = 0 */
    int threads;              /* 0: all online cores */
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
 * The smallest logit (relative to zero-logit keys) a key at distance d needs to keep a non-zero weight in
 * the last row of the N-token context, as decimal text rounded up to `decimals` digits (malloc'd).
 */
ABL_API abl_status abl_design_min_logit(const abl_design_config *c, float m, uint64_t d, int decimals, char **out);

/*
 * --clamp: the least restrictive clamp c = k / 10^decimals (the most negative such value) with which no
 * head of `slopes` has a zero weight at context N: c - ln S_N(c) > tau (eager: exact weight level at the
 * output dtype's rn-zero; flash: c not below the flush threshold of exp2). margin: the smallest over heads
 * of c - tau - ln S_N(c) in nats (malloc'd text, 4 decimals). paper_margin: the same for c = -87 (<= 0:
 * -87 leaves zero weights); paper_failing: how many heads -87 leaves with a zero weight.
 */
typedef struct abl_design_clamp {
    mpq_t clamp;               /* the bound rounded up into the kernel's logit dtype (the bias is stored there) */
    char *bound_text;          /* the least clamp on the 10^-decimals grid, before that rounding */
    char *clamp_text, *margin_text, *paper_margin_text;
    int paper_failing;
} abl_design_clamp;
ABL_API void abl_design_clamp_init(abl_design_clamp *r);
ABL_API void abl_design_clamp_clear(abl_design_clamp *r);
ABL_API abl_status abl_design_clamp_find(const abl_design_config *c, const float *slopes, int n, int decimals,
                                 abl_design_clamp *out);

/*
 * Verification: every slope through the predictor (matrix zeros must be 0) and, when N <= max_simulate,
 * through the full emulation of the kernel. *simulated = 1 when the emulation ran. ABL_ERR_MISMATCH when a
 * head has a zero weight.
 */
ABL_API abl_status abl_design_verify(const abl_design_config *c, const float *slopes, int n, uint64_t max_simulate,
                             int *simulated);

/* The slopes as the kernel holds them for a schedule spec (one emulated row): binary32 values, model order. */
ABL_API abl_status abl_design_held_slopes(const abl_design_config *c, const char *spec, int heads, float **out, int *n);

/* "slopes:m1,m2,..." with each binary32 value written exactly (malloc'd); analyze --slopes reads it back. */
ABL_API char *abl_design_slopes_spec(const float *slopes, int n);

#ifdef __cplusplus
}
#endif
#endif
