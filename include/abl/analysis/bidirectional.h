/* alibi-blind: the closed forms of a bidirectional (encoder) layer (issue 19; spec §7, docs/method.md).
 *
 * Query row i of an N-token encoder attends every key j at distance d = |i - j| with the symmetric bias
 * -m d: two horizons, i keys on the left and N - 1 - i on the right, besides the diagonal. A head's
 * delta (spec §6) is the same as in a causal layer; what changes is how many keys lie at d >= delta:
 *   row i:   max(0, min(i, W) - delta + 1) + max(0, min(N - 1 - i, W) - delta + 1)   (delta >= 1)
 *   matrix:  twice the causal count, 2 sum_r max(0, min(r, W) - delta + 1); without a window
 *            2 T(N - delta) of the N^2 entries, T(k) = k (k + 1) / 2.
 * Two rows are reported: the END row (i = N - 1, or i = 0: one horizon of N - 1 keys, the same count as a
 * causal last row, over N keys) and the MIDDLE row (i = floor((N - 1) / 2): horizons floor((N - 1) / 2)
 * and ceil((N - 1) / 2); for even N the other middle row i = N / 2 has the same two horizons swapped
 * and the same count). A window W > 0 masks keys with d > W on both sides.
 */
#ifndef ABL_ANALYSIS_BIDIRECTIONAL_H
#define ABL_ANALYSIS_BIDIRECTIONAL_H

#include "abl/core/export.h"

#include <stdint.h>
#include <gmp.h>
#include "abl/core/status.h"
#include "abl/core/blindness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The middle row's index, floor((N - 1) / 2) (0 for N = 1). */
ABL_API uint64_t abl_bidir_middle_row(uint64_t n);

/* Blind keys of row i (0 <= i < n) of one head: both horizons. */
ABL_API abl_status abl_bidir_row_count(const abl_delta *delta, uint64_t n, uint64_t window, uint64_t i, mpz_t out);

/* One head's blind entries: the end row, the middle row and the whole N x N matrix (0 when delta is never
 * or beyond any context). ABL_ERR_CONTEXT_RANGE for n outside 1..ABL_MAX_CONTEXT. */
ABL_API abl_status abl_bidir_head_counts(const abl_delta *delta, uint64_t n, uint64_t window, mpz_t end_row,
                                         mpz_t mid_row, mpz_t matrix);

/* The attended entries of one head: the end row (min(W, N - 1) + 1), the middle row and the matrix (N^2
 * without a window). */
ABL_API abl_status abl_bidir_attended(uint64_t n, uint64_t window, mpz_t end_row, mpz_t mid_row, mpz_t matrix);

#ifdef __cplusplus
}
#endif
#endif
