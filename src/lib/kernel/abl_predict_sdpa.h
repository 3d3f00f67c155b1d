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

/* A second question on the same rows (the memory-efficient backward's predictor,
 * abl_backward_memeff_predict.c): for each row, `at` learns the row's forward max mi (fp32, log2 domain)
 * and row sum s as the kernel leaves them and returns the row's cut, a distance D (may exceed the row);
 * the forward zeros at distances >= D are counted into row_zeros (last row) and matrix_zeros. */
typedef struct abl_sdpa_cut {
    uint64_t (*at)(void *ctx, uint64_t row, float mi, float s);
    void *ctx;
    uint64_t row_zeros, matrix_zeros;
} abl_sdpa_cut;

/* abl_predict_sdpa_head with a cut (NULL: none). ABL_ERR_UNSUPPORTED with a cut where the logits are not
 * monotone as the fast path needs (the caller runs its rows itself). */
abl_status abl_predict_sdpa_head_cut(const abl_emul *em, const float *T, uint64_t n, abl_sdpa_cut *cut,
                                     abl_pred_head *out);

/* The same, every row through abl_sdpa_row: O(N^3 / block) (the reference of the tests). */
abl_status abl_predict_sdpa_head_rows(const abl_emul *em, const float *T, uint64_t n, abl_pred_head *out);

#endif
