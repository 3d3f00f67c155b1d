/* alibi-blind (private): the zero-logit predictor for the SDPA kernels (softmax sdpa-efficient,
 * sdpa-cudnn), and the row-by-row reference it must equal. */
#ifndef ABL_PREDICT_SDPA_H
#define ABL_PREDICT_SDPA_H

#include <stdint.h>
#include "abl/kernel/simulate.h"
#include "kernel/abl_round.h"

/* One head: T[pos] is the zero-score logit at bias position pos (n entries, finite). The first blind
 * distance and row zeros of the last row, and the matrix zeros, exactly as abl_sdpa_row gives them
 * row by row; O(N) to O(N log N) work for the usual slopes (docs/pipelines.md).
 * ABL_ERR_NO_MEMORY when its O(N) scratch cannot be allocated. */
abl_status abl_predict_sdpa_head(const abl_emul *em, const float *T, uint64_t n, abl_pred_head *out);

/* The same, every row through abl_sdpa_row: O(N^3 / block) (the reference of the tests). */
abl_status abl_predict_sdpa_head_rows(const abl_emul *em, const float *T, uint64_t n, abl_pred_head *out);

#endif
