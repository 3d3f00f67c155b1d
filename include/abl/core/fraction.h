/* alibi-blind: underflow fractions (spec §7), exact rationals in closed form. */
#ifndef ABL_FRACTION_H
#define ABL_FRACTION_H

#include "abl/core/export.h"

#include <stdint.h>
#include <gmp.h>
#include "abl/core/status.h"
#include "abl/core/blindness.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ABL_MAX_CONTEXT UINT64_C(1000000000000000000)   /* 10^18 */

/*
 * Row fraction at context n: (1/H) sum_h max(0, n - delta_h) / n, the share of the n keys of the
 * last query row that are blind. window = 0: no window; window W > 0: keys with d > W are masked
 * (not attended), and the fraction is over the attended keys (d <= min(W, n - 1)).
 */
ABL_API abl_status abl_fraction_row(const abl_delta *deltas, int heads, uint64_t n, uint64_t window, mpq_t out);

/*
 * Matrix fraction at context n: (1/H) sum_h T(n - delta_h) / T(n), T(k) = k(k+1)/2, the share of the
 * n(n+1)/2 causal entries that are blind; with a window, over the attended entries.
 */
ABL_API abl_status abl_fraction_matrix(const abl_delta *deltas, int heads, uint64_t n, uint64_t window, mpq_t out);

/* Blind entries of one head: in the last row (row) and in the whole causal n x n matrix (matrix). */
ABL_API abl_status abl_fraction_head_counts(const abl_delta *delta, uint64_t n, uint64_t window, mpz_t row, mpz_t matrix);

/* q as a percentage with `decimals` digits, correctly rounded ("36.57"); malloc'd (NULL: out of memory). */
ABL_API char *abl_fraction_percent_text(const mpq_t q, int decimals);

/* q as a decimal in [0,1] with `digits` significant digits, for JSON ("0.365692138671875" style, no exponent). */
ABL_API char *abl_fraction_decimal_text(const mpq_t q, int digits); /* malloc'd (NULL: out of memory) */

#ifdef __cplusplus
}
#endif
#endif
