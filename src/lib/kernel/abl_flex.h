/* alibi-blind (private): PyTorch FlexAttention's forward (softmax kind flex), abl_flex.c. */
#ifndef ABL_FLEX_H
#define ABL_FLEX_H

#include <stdint.h>
#include <stdlib.h>
#include "abl/kernel/simulate.h"
#include "kernel/abl_round.h"

/* create_block_mask's default BLOCK_SIZE: the granularity of partial and full KV blocks */
#define ABL_FLEX_SPARSE_BLOCK 128u

/* The zero weights of row i whose logits are x[0..i]: mj is scratch (i + 1 floats); wout (optional) the
 * weights (P in the output dtype); tvw (optional) the weights as they act on V, in binary64. */
uint64_t abl_flex_row(const abl_emul *e, uint64_t i, const float *x, float *mj, float *wout, double *tvw);

/* The zero-logit predictor of one head (T[pos]: the logit at bias position pos): the same counts as
 * abl_flex_row on every row, O(N log N). ABL_ERR_NO_MEMORY when its scratch cannot be allocated. */
abl_status abl_predict_flex_head(const abl_emul *em, const float *T, uint64_t n, abl_pred_head *out);

#endif
