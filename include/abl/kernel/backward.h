/* alibi-blind: the backward pass of the attention softmax (simulate --backward, spec §15): where the
 * gradient of a score, dS = P * (dP - D) rounded into the training dtype, is exactly 0. */
#ifndef ABL_BACKWARD_H
#define ABL_BACKWARD_H

#include "abl/core/export.h"

#include <stdint.h>
#include "abl/core/status.h"
#include "abl/kernel/simulate.h"
#include "abl/kernel/npy.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which P the backward multiplies by (docs/pipelines.md §9). */
typedef enum abl_backward_kind {
    ABL_BACKWARD_UPCAST = 0, /* F.softmax(x, dim=-1, dtype=torch.float32).to(dtype) (eager, bloom-hf, mpt-hf):
                              * autograd keeps the fp32 P; D and dS in fp32, dS rounded into the dtype */
    ABL_BACKWARD_NATIVE = 1, /* torch.softmax(x) in the dtype (mpt, falcon-hf-eager): the CPU kernel reads the
                              * stored P, stores D = sum dP P in the dtype, dS = (dP - D) P in fp32 */
    ABL_BACKWARD_MEMEFF = 2, /* softmax sdpa-efficient: the memory-efficient CUDA kernel recomputes P from the
                              * saved log-sum-exp and rounds it into the dtype; dS * scale rounded into the
                              * dtype (modelled from source, not measured; unit upstream only) */
    ABL_BACKWARD_FLASH = 3   /* softmax flash (flash2): FlashAttention-2 recomputes the fp32 P from the saved
                              * log-sum-exp (exp2, flushed below 2^-126); dS = dtype(ftz(fp32 P (dP - D))),
                              * unscaled (modelled from source, not measured; unit upstream only) */
} abl_backward_kind;

/* The kind of a pipeline (its preset: the table in abl_backward.c), and its name ("upcast", "native",
 * "memeff", "flash"). */
ABL_API abl_backward_kind abl_backward_kind_of(const abl_pipeline *p);
ABL_API const char *abl_backward_kind_name(abl_backward_kind k);

typedef struct abl_backward_config {
    long log2_upstream;      /* no grad file: |dP - D| times the loss scale = 2^j (unit upstream: j = 0) */
    long log2_scale;         /* with a grad file: the loss scale 2^k that multiplies dP */
    const abl_npy *grad;     /* dP = dO V^T (simulate --grad-weights): [H, N, N] or [N, N]; NULL: none */
} abl_backward_config;

typedef struct abl_bwd_head {
    int64_t fwd_first_blind; /* the weight P itself (as stored in the dtype): smallest d with P = 0; -1: none */
    int64_t first_blind;     /* smallest d whose dS is 0 in the last row; -1: none */
    uint64_t row_zeros;      /* zero dS in the last row */
    uint64_t matrix_zeros;   /* zero dS in the causal matrix */
    uint64_t only_row;       /* last row: dS = 0 while the weight P is not 0 */
    uint64_t only_matrix;    /* the same over the matrix */
} abl_bwd_head;

typedef struct abl_backward {
    int heads;
    abl_bwd_head *results;   /* model order, as abl_simulation's */
    uint64_t row_zeros, matrix_zeros, only_row, only_matrix;
    long log2_upstream, log2_scale;
    int from_file;           /* dP from a file */
    int predicted;           /* from the zero-logit predictor (abl_backward_predict) */
    abl_backward_kind kind;
} abl_backward;

/*
 * The eager softmax backward (PyTorch's _softmax_backward_data, CPU; docs/pipelines.md §9) after the
 * forward emulation of cfg, for the pipeline's kind: with dP = dtype(file * 2^k), native: D =
 * dtype(fp32(sum_k dP_k P_k)), dS_j = dtype(fp32(fp32(dP_j - D) P_j)) from the stored P; upcast: the same
 * from the fp32 P with D kept in fp32. Without a file dS_j = dtype(P_j 2^j).
 * Runs abl_simulate_run into *sim (the caller frees it) and counts the zeros into *out.
 * The memeff and flash kinds (softmax sdpa-efficient, flash) run row by row at unit upstream from each row's
 * logits (abl_backward_memeff.c, abl_backward_flash.c: modelled from source, not measured).
 * ABL_ERR_UNSUPPORTED for a pipeline whose softmax is none of these (or flash with splits >= 2, memeff or
 * flash with a file), or with a row hook already set;
 * ABL_ERR_MISMATCH when the file's N or H does not match the layer.
 */
ABL_API abl_status abl_backward_run(const abl_simulate_config *cfg, const abl_backward_config *b, abl_simulation *sim,
                                    abl_backward *out);

/*
 * Zero logits without a file: the same counts without the N x N work, through abl_predict_run. Native
 * and 2^j >= 1: the forward zeros (a stored weight is 0 or at least the smallest subnormal, and P 2^j >= P
 * cannot round to 0). Upcast: dS = 0 iff P32 <= 2^(emin - p - j), i.e. P32 rounds to 0 in the dtype with
 * emin lowered by j: the forward zeros of that output dtype (when it fits binary32's range); with 2^j < 1
 * the gradient-only counts from the forward predictor's. Memeff (sdpa-efficient, modelled from source):
 * its own predictor (abl_backward_memeff_predict.c), every count the emulation gives, causal layers.
 * Flash (causal): the emulation's first zero and zero counts (the same lse; each row's zeros a prefix found
 * by bisection, abl_backward_flash.c).
 * ABL_ERR_UNSUPPORTED otherwise.
 */
ABL_API abl_status abl_backward_predict(const abl_simulate_config *cfg, const abl_backward_config *b,
                                        abl_backward *out);
/* The nominal cost of abl_backward_predict beyond the forward prediction it runs (abl_predict_estimate
 * counts that): FlashAttention-2's own row sums (abl_backward_flash.c), zero for the other kinds. */
ABL_API abl_status abl_backward_estimate(const abl_simulate_config *cfg, abl_cost *out);
ABL_API void abl_backward_free(abl_backward *b);

/* One row per head: the forward first zero (sim; NULL: not shown), the gradient's first zero, zero
 * counts and the gradient-only counts; pred (may be NULL) beside with an agreement column. */
ABL_API abl_status abl_backward_report(const abl_simulate_config *cfg, const abl_simulation *sim,
                                       const abl_backward *b, const abl_backward *pred, abl_report **out);

#ifdef __cplusplus
}
#endif
#endif
