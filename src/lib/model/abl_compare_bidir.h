/* alibi-blind (private): what a comparison and a check of a bidirectional (encoder) layer decide differently
 * (abl_compare_bidir.c): a head is lost when its N x N matrix has a zero weight in ANY row. Its end row
 * (i = N - 1) holds the farthest key (d = N - 1), but it does not always hold the first zero: where the bias
 * dtype rounds the far biases to one value (bf16: a step of 0.5 at |bias| ~ 91), rows 1, 2, N - 3, N - 2
 * have the same far logits as the end row over a larger sum, and lose a weight the end row keeps (slope
 * 0.178571433 at N = 512 in bf16: 6 zeros in rows 1, 2, 509, 510, none in rows 0 and 511; PyTorch agrees,
 * tests/torch/validate_encoders.py). */
#ifndef ABL_COMPARE_BIDIR_H
#define ABL_COMPARE_BIDIR_H

#include <stdint.h>
#include "abl/model/compare.h"
#include "abl/report/report.h"

/* Whether a head is lost: causal, a lost key in the last row (first >= 0); bidirectional, any lost key of
 * the N x N matrix (matrix > 0). */
int abl_compare_head_lost(const abl_compare *c, int64_t first, uint64_t matrix);
/* A failed bidirectional check whose lost heads all have their zeros off the end row: the reason line. */
abl_status abl_compare_bidir_reason(abl_report *r, const abl_compare *c, int lost_heads);

#define ABL_COMPARE_BIDIR_CHECK_NOTE                                                                        \
    "One row per head; blind: the head has a zero attention weight in any row of the N × N bidirectional " \
    "matrix on this kernel (zero logits, the bidirectional predictor over every row); first blind and row " \
    "zeros are the end row's (i = N - 1), which can keep every weight while rows next to it lose one (far " \
    "biases rounded to one value, a larger sum); exit status 0 = pass, 1 = fail, 2 = bad input."

#endif
