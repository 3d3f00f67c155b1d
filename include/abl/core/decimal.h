/* alibi-blind: exact decimal numbers. Every number a user types (slopes, targets, logits, clamps,
 * contexts) is read exactly, never through binary64, so that decisions stay exact. */
#ifndef ABL_DECIMAL_H
#define ABL_DECIMAL_H

#include "abl/core/export.h"

#include <gmp.h>
#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Exact value of a decimal literal: [+-]digits[.digits][(e|E)[+-]digits] (".5" and "5." too).
 * Rejects NaN/Inf spellings, hex, empty text, trailing characters and exponents beyond +-100000,
 * so every accepted text denotes one rational. ABL_ERR_BAD_NUMBER on failure.
 */
ABL_API abl_status abl_decimal_to_mpq(const char *text, mpq_t out);

/*
 * Exact decimal text of q (malloc'd): plain ("0.001", "-87", "8192") unless scientific with every
 * significant digit is much shorter ("1e-30"). NULL when q does not terminate in base 10 or memory
 * runs out. Every value abl_decimal_to_mpq accepted terminates.
 */
ABL_API char *abl_decimal_string(const mpq_t q);

#ifdef __cplusplus
}
#endif
#endif
