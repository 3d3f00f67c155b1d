/* alibi-blind (private): ggml's CPU attention kernels (llama.cpp), emulated rounding by rounding.
 * Source: ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465 (the ggml tree of llama.cpp
 * ggml-org/llama.cpp@d3cf1f14a2e16fbd7ebad34b12cb71b8af345c43), src/ggml-cpu/ops.cpp and vec.h/vec.cpp;
 * docs/pipelines.md cites every function. */
#ifndef ABL_GGML_H
#define ABL_GGML_H

#include <stdint.h>
#include "kernel/abl_round.h"
#include "abl_internal.h"

/* The ggml part of abl_emul_init: the mask and fp16 formats, the flash kernel resolved for N. */
abl_status abl_emul_ggml_init(const abl_pipeline *p, abl_emul *e);

/* The flash kernel ggml runs for a pipeline at N keys (fa-kernel=auto resolved from the rows asked). */
abl_fa_kernel abl_ggml_fa_kernel(const abl_pipeline *p, uint64_t n);

/* The report's note on what the ggml kernel (soft_max or flash_attn_ext, the kernel resolved for em) computes. */
void abl_ggml_note(const abl_pipeline *p, const abl_emul *em, abl_text *t);

/* simulate's nominal work (weights at ABL_SIMULATE_RATE) for a ggml pipeline: the rows emulated, times
 * the F16 accumulator's rescaling in the one-row kernels (abl_simulate_estimate). */
double abl_ggml_sim_units(const abl_pipeline *p, uint64_t n, double heads);

/* The score the softmax reads for a score (already times kq_scale) and a key at distance pos:
 * soft_max: fma(slope, mask, score) (the build contracts wp[i] += slope*mp[i]); flash: the score (F16 Q in
 * the one-row kernel) plus fp32(slope * mask); -inf where the mask is -inf. */
float abl_ggml_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos, float mag);

/* ggml_v_expf of an AVX2+FMA build (vec.h), lane by lane: fmaf for every fused multiply-add. */
float abl_ggml_expf_avx2(float x);

/* The zero weights of row i whose logits are x[0..i] (-inf: a masked key). col: i + 1 floats of scratch;
 * wout (optional) the weights (soft_max: p; flash: the output coefficient of each key, its influence);
 * tvw (optional) the same in binary64. */
uint64_t abl_ggml_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw);

/* The zero-logit predictor for softmax=ggml: the same first blind distance and zero counts as simulate, from
 * a per-distance table of exponentials and each row's binary64 sum over the keys it can see (abl_ggml.c).
 * ABL_ERR_UNSUPPORTED when the diagonal is not the row max. */
abl_status abl_ggml_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);

/* E(r): the largest float e >= 0 with fp32(e r) <= zmax (monotone in e; 0 always passes): a key of
 * exponential e in a row of r = fp32(1/S) is zero (p <= zmax) exactly when e <= E(r). */
float abl_ggml_zero_bound(float r, float zmax);

/* The first d in [Dz, Dc) of a band where eb is non-increasing with eb[d] <= E (Dc if none): where the keys
 * with p <= zmax begin in a row whose r gives the bound E (the causal and the bidirectional predictors). */
uint64_t abl_ggml_band_start(const float *eb, uint64_t Dz, uint64_t Dc, float E);

/* The zero-logit predictor of softmax=ggml for a bidirectional layer (abl_ggml_bidir.c): every row of the
 * N x N matrix as simulate runs it (N keys in key order, the diagonal the row max), weight and influence
 * counts, the end and middle rows. ABL_ERR_UNSUPPORTED when some logit exceeds the diagonal's or is not
 * finite. */
abl_status abl_ggml_bidir_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);

/* The zero-logit predictor of softmax=ggml-flash (llamacpp-cpu-fa) for a bidirectional layer
 * (abl_ggml_fa_bidir.c): simulate's weight counts per head (end, middle and matrix; the influence counts
 * are the same: the column is the coefficient of V). The tiled kernel from per-residue tables; the one-row
 * kernels row by row as simulate runs them. ABL_ERR_UNSUPPORTED when a logit is not finite or exceeds
 * the diagonal's. */
abl_status abl_ggml_fa_bidir_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);
/* The zero-logit predictor of softmax=ggml-flash for causal rows (abl_ggml_fa_predict.c): the counts simulate
 * gives through the kernel ggml runs for the rows asked (tiled, one-chunk or split-kv), weight = influence.
 * ABL_ERR_UNSUPPORTED when a logit exceeds the diagonal's. */
abl_status abl_ggml_fa_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);

#endif
