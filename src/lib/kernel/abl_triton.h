/* alibi-blind (private): MosaicBERT's Triton flash attention forward (softmax kind triton-lse), abl_triton.c. */
#ifndef ABL_TRITON_H
#define ABL_TRITON_H

#include <stdint.h>
#include "abl/kernel/simulate.h"
#include "kernel/abl_round.h"

/* The zero weights of row i whose logits are x[0..i] (keys in blocks from key 0): p is scratch (i + 1
 * floats); wout (optional) P as rounded into the output dtype; tvw (optional) the weights as they act on V. */
uint64_t abl_triton_row(const abl_emul *e, uint64_t i, const float *x, float *p, float *wout, double *tvw);

/* The zero-logit predictor of triton-lse (abl_triton_predict.c): simulate's counts for head h, causal or
 * bidirectional (bidir: every row of the N x N matrix, the middle row too). ABL_ERR_UNSUPPORTED when a logit
 * is not finite. */
abl_status abl_triton_predict_head(const abl_sim_setup *s, int h, int bidir, abl_pred_head *out);

#endif
