/* alibi-blind (private): GPU attention engines modelled from their source, not measured (docs/pipelines.md
 * §3c cites file, function and commit for every step): llama.cpp's CUDA flash-attention vector kernel
 * (softmax=ggml-cuda-vec), vLLM's paged-attention kernel (vllm-paged) and TensorRT-LLM's masked
 * multi-head attention decode kernel (trtllm-mmha). Each computes one query row from its keys; the
 * intrinsics follow abl_cuda_math.h. */
#ifndef ABL_ENGINES_H
#define ABL_ENGINES_H

#include <stdint.h>
#include "kernel/abl_round.h"

/* The engine part of abl_emul_init: the mask format, the rows computed (the last R: pipeline field rows). */
abl_status abl_emul_engine_init(const abl_pipeline *p, abl_emul *e);

/* The part of abl_sim_setup_init that needs the head count: vllm-flash's num_splits (num_splits_heuristic) and
 * vllm-triton's 2-D or 3-D kernel, both as vLLM decides them for the rows asked. */
abl_status abl_engine_setup_heads(const abl_pipeline *p, int heads, abl_emul *em);

/* simulate's nominal work for an engine pipeline (weights at ABL_SIMULATE_RATE). */
double abl_engine_sim_units(const abl_pipeline *p, uint64_t n, double heads);

/* |bias| of a key at distance pos and the logit the kernel adds it to (score + bias, per engine). */
float abl_engine_bias_mag(const abl_emul *e, const abl_emul_head *h, uint64_t pos);
float abl_engine_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos, float mag);

/* The zero weights of row i whose logits are x[0..i] (-inf: a masked key). col: i + 1 floats of scratch;
 * wout (optional) the weights: the coefficient with which a unit value of each key reaches the output
 * (its influence); tvw (optional) the same in binary64. */
/* Row i's first blind distance: the smallest d with w[i - d] == 0 (-1: none). */
int64_t abl_engine_first_zero(const float *w, uint64_t i);
uint64_t abl_engine_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw);

/* Zero logits: the first blind distance and the zero counts of the rows the pipeline computes (the last R),
 * each row run through the kernel model once (O(R N) per head; a decode step is R = 1). */
abl_status abl_engine_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);

/* A kernel's shortcut for zero logits X[0..n) that rise along the keys (it decides every row at once), and its
 * row model (as abl_engine_row). */
typedef abl_status (*abl_engine_fast_fn)(const abl_emul *em, const float *X, uint64_t n, abl_pred_head *out);
typedef uint64_t (*abl_engine_row_fn)(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout,
                                      double *tvw);

/* Zero logits under a bias that follows the key index (an absolute column bias: trtllm-context, vllm-triton,
 * vllm-flash's split-KV): key j's logit is the same in every row, so it is formed once. While it rises along the
 * keys (strictly when `strict`), `fast` (if any) decides every row; else each computed row runs through `row`
 * once (O(R N) per head). */
abl_status abl_engine_predict_absolute(const abl_sim_setup *s, int h, abl_engine_fast_fn fast, int strict,
                                       abl_engine_row_fn row, abl_pred_head *out);

#endif
