/* alibi-blind (private): a fast exp correctly rounded to binary32, equal to abl_exp_rn32 for every
 * binary32 argument (abl_fastexp.c proves the bound; tests/unit/test_fastexp.c checks it against the
 * MPFR-backed abl_exp_rn32 exhaustively on every bf16/fp16 argument and densely on binary32). */
#ifndef ABL_FASTEXP_H
#define ABL_FASTEXP_H

#include <stdint.h>

/* RN32(exp(y)) with gradual underflow: 0 for y <= -104, +Inf for y >= 89, exp(NaN) = NaN.
 * *slow (optional) is incremented when the binary64 approximation could not decide the rounding and
 * the MPFR-backed abl_exp_rn32 was called. */
float abl_fastexp_rn32(float y, uint64_t *slow);

#endif
