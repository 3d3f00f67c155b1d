/* alibi-blind (private): TensorRT-LLM's context (prefill) FMHA for ALiBi (softmax=trtllm-fmha, preset
 * trtllm-context): the fmha_v2 flash-attention kernel of Ampere/Ada, modelled from source, not measured
 * (docs/pipelines.md §3c cites file, function and revision for every step). */
#ifndef ABL_ENGINES_TRTLLM_H
#define ABL_ENGINES_TRTLLM_H

#include <stdint.h>
#include "kernel/abl_round.h"
#include "abl_internal.h"

/* The kind's part of abl_emul_engine_init: its P.V accumulator (pipeline field pv-accumulate: fp16, the
 * HMMA with an fp16 accumulator of TensorRT-LLM's fp16 kernels, or fp32). */
abl_status abl_trtllm_ctx_init(const abl_pipeline *p, abl_emul *e);

/* x_j = fma(slope, j, score): apply_mask_alibi's absolute column bias on the (fp16 with an fp16
 * accumulator) score; pos is the key index j. */
float abl_trtllm_ctx_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos);

/* Row i (keys 0..i, logits x): the coefficient with which a unit value of each key reaches the output (its
 * weight and its influence), as the kernel forms it: P in the model dtype, every later key tile's rescale of
 * the accumulator, then the final 1/sum. col: i + 1 floats of scratch; wout, tvw optional (abl_engine_row). */
uint64_t abl_trtllm_ctx_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw);

/* Zero logits: the counts of the rows the pipeline computes (the last R), by tiles (see the .c). */
abl_status abl_trtllm_ctx_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);

/* simulate's note on the arithmetic (appended to t). */
void abl_trtllm_ctx_note(const abl_pipeline *p, abl_text *t);

#endif
