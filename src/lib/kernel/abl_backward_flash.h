/* alibi-blind: FlashAttention-2's backward dS at unit upstream, one row (abl_backward_flash.c). */
#ifndef ABL_BACKWARD_FLASH_H
#define ABL_BACKWARD_FLASH_H
#include <stdint.h>
#include "abl_round.h"

/* The log-sum-exp the forward kernel saves for row `count - 1` of fp32 logits x (flash logits: score units,
 * the alibi already in), as normalize_softmax_lse computes it: fma(row_max, scale_softmax, __logf(row_sum));
 * INFINITY when the sum is 0. e: a flash emulation (block, sm_scale, c_log2). */
float abl_flash_forward_lse(const abl_emul *e, const float *x, uint64_t count);

/* dS of keys [0, count) of the row, |dP - D| x loss scale = up (a power of 2): P = ex2.approx.ftz(fma(x,
 * scale_softmax_log2, -fp32(lse log2 e))), dS = dtype(ftz(fp32(P up))), the dtype being e->out. */
void abl_flash_backward_row(const abl_emul *e, double up, const float *x, uint64_t count, float *ds);
#endif
