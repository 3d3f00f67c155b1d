/* alibi-blind: the memory-efficient SDPA backward's dS at unit upstream, one row (abl_backward_memeff.c). */
#ifndef ABL_BACKWARD_MEMEFF_H
#define ABL_BACKWARD_MEMEFF_H
#include <stdint.h>
#include "abl_round.h"

/* dS of keys [0, count) of a row whose fp32 logits are x (blocks of `block` keys as the forward's, 0: one
 * block), |dP - D| x loss scale = up (a power of 2), softmax scale `scale`: dS = dtype(fp32(fp32(up P) scale))
 * with P = dtype(fp32(exp(fp32(x - lse)))) recomputed from the forward's log-sum-exp. */
void abl_memeff_backward_row(const abl_fp *out, int block, float scale, double up, const float *x, uint64_t count,
                             float *ds);
/* The kernel's softmax scale, fp32(1 / sqrt(head_dim)). */
float abl_memeff_scale(int head_dim);
#endif
