/* alibi-blind (private): vLLM's Triton unified attention, the 2-D kernel (softmax=vllm-triton, preset
 * vllm-triton), modelled from source, not measured (docs/pipelines.md §3c). */
#ifndef ABL_ENGINES_TRITON_H
#define ABL_ENGINES_TRITON_H

#include <stdint.h>
#include "kernel/abl_round.h"

/* S_j = fma(slope, j - context_len, score): the bias relative to the start of the query chunk, whose rows are
 * the last R (context_len = N - R; pos is the key index j). */
float abl_vllm_triton_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos);

/* Row i (keys 0..i, logits x): the coefficient with which a unit value of each key reaches the output, in
 * fp32 as the kernel forms it (P in the model dtype, then every later tile's rescale acc * alpha, then / L);
 * the zeros among them. col: i + 1 floats of scratch; wout, tvw optional (as abl_engine_row). */
uint64_t abl_vllm_triton_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw);

/* Zero logits: every computed row through abl_vllm_triton_row (O(R i N / TILE) per head at most: the chains
 * stop where a key's coefficient reaches 0). */
abl_status abl_vllm_triton_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);

/* The segments of the 3-D decode kernel vLLM runs (field splits; 0: auto = 16 for rows=1 and at most 128
 * heads, else 1 = the 2-D kernel), and its part of the setup (em->splits, the decode tile). */
int abl_vllm_triton_segments(const abl_pipeline *p, int heads);
abl_status abl_vllm_triton_setup(const abl_pipeline *p, int heads, abl_emul *em);

#endif
