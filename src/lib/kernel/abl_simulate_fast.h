/* alibi-blind (private): the fast exact rows of `simulate` (abl_simulate_fast.c).
 *
 * The fast path computes exactly what the reference rows of abl_simulate.c compute (the same
 * emulated roundings, weight by weight), only faster:
 *  - zero logits: a row's logits are a contiguous slice of the head's logit table, so the binary32
 *    exponentials exp(fp32(x - M)) depend only on the position and the row max M; each thread keeps
 *    them by position for the current M (a memo of the same pure function abl_emul_eager_exp);
 *  - Gaussian logits: each row's exponentials through abl_fastexp_rn32 (equal to abl_exp_rn32);
 *  - binary32 sums, products and quotients are done in binary32 arithmetic (bit-identical to the
 *    reference's binary64 operation + one rounding, FLT_EVAL_METHOD == 0), in vectors;
 *  - the exact sum (sum=exact) is a binary64 sum with a certified error bound, rounded once to
 *    binary32 when the bound leaves one candidate, else the exact accumulator (abl_xacc).
 * ABL_SIMULATE_SLOW=1 in the environment selects the reference rows everywhere (tests, diagnosis). */
#ifndef ABL_SIMULATE_FAST_H
#define ABL_SIMULATE_FAST_H

#include <stdint.h>
#include "kernel/abl_round.h"

/* 1 when the fast rows apply to this configuration (eager softmax, binary32 evaluation, not
 * disabled by ABL_SIMULATE_SLOW); zero logits use abl_fast_row, Gaussian ones abl_fast_row_values. */
int abl_fast_eligible(const abl_sim_setup *s);

/* rmax[i] = the max of row i's logits (table: logit by position), for every row. */
void abl_fast_row_max(const abl_emul *em, const float *table, float *rmax);

/* Per-thread state: the exponentials by position for one (head, row max). */
typedef struct abl_fast_thread {
    float *etab;            /* N floats */
    float *row;             /* N floats: a row in key order */
    int head;               /* -1: nothing cached */
    float m;                /* the row max etab was built for */
    uint64_t lo, hi;        /* positions [lo, hi] are valid (lo > hi: none) */
    /* Gaussian rows: exp(fp32(x - M)) by logit x for the current row (M fixed), direct-mapped */
    uint32_t *tag, *stamp, cur;
    float *val;
    uint64_t zeros2;        /* em->zero2: weights p <= zf2 counted by the rows, added up by the caller */
} abl_fast_thread;

int abl_fast_thread_init(abl_fast_thread *t, uint64_t n);
void abl_fast_thread_free(abl_fast_thread *t);

/* The zero weights of row i of head `head` (table and rmax of that head). logits (optional) gets
 * the row's logits in key order, wout (optional) the weights rounded into the output dtype. */
uint64_t abl_fast_row(const abl_emul *em, int head, const float *table, const float *rmax, abl_fast_thread *t,
                      uint64_t i, float *logits, float *wout);

/* The zero weights of a row whose logits x[from..count-1] (key order, finite) are given, keys
 * j < from being known to have e = +0 (and logits below the row max): e is scratch, wout (optional,
 * then from = 0) gets the weights rounded into the output dtype. */
uint64_t abl_fast_row_values(const abl_emul *em, abl_fast_thread *t, const float *x, uint64_t from, uint64_t count,
                             float *e, float *wout);

/* Gaussian rows: per head, the logit bounds for the scores' range (abl_fastgauss.h) */
typedef struct abl_fast_gauss_head {
    float *xhi, *xlo;      /* by position: the logit for the largest / smallest possible score */
    float *rmaxlo;         /* by row: the max of xlo over the row's keys */
    int skip;              /* the bounds are finite: keys may be skipped */
} abl_fast_gauss_head;

int abl_fast_gauss_head_init(abl_fast_gauss_head *g, uint64_t n);
void abl_fast_gauss_head_free(abl_fast_gauss_head *g);
void abl_fast_gauss_prepare(const abl_sim_setup *s, int head, const float *table, abl_fast_gauss_head *g);

/* A Gaussian row (not the last): the zeros into *zeros, x gets the logits (all of them when wout is
 * given, for the row hook; else keys whose exponential is provably +0 are skipped without a draw);
 * e is scratch. 0 when a logit is not finite. */
int abl_fast_gauss_row(const abl_sim_setup *s, int head, const float *table, const abl_fast_gauss_head *g,
                       abl_fast_thread *t, uint64_t i, float *x, float *e, float *wout, uint64_t *zeros);

/* Captured scores (s->captured): 1 when keys may be skipped by the logit bound of
 * abl_fast_captured_row (relative/symmetric form, |bias| by position in table non-decreasing, positive
 * scale); computed once per head. */
int abl_fast_captured_skippable(const abl_sim_setup *s, const float *table);

/* A captured row (not the last): the zeros into *zeros, x gets the logits (all of them when wout is
 * given, for the row hook; else keys whose exponential is provably +0 are skipped: the range of the
 * row's scores bounds their logits); e is scratch. 0 when a logit is not finite. */
int abl_fast_captured_row(const abl_sim_setup *s, int head, const float *table, int skippable, abl_fast_thread *t,
                          uint64_t i, float *x, float *e, float *wout, uint64_t *zeros);

/* The binary32 sum of e[0..count-1] in the pipeline's order, as abl_emul_sum, for e >= +0 (n: the
 * row length the kernel sees). */
float abl_fast_sum(const abl_emul *em, const float *e, uint64_t count, uint64_t n);

/* RN32 of the exact sum of e[0..count-1] (every e >= +0, finite): certified binary64 sum, exact
 * accumulator when the certificate fails. *fallback (optional) is set to 1 when it did. */
float abl_fast_sum_exact(const float *e, uint64_t count, int *fallback);

#endif
