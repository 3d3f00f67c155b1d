/* alibi-blind: the memory-efficient SDPA backward's dS at unit upstream, one row (abl_backward_memeff.c). */
#ifndef ABL_BACKWARD_MEMEFF_H
#define ABL_BACKWARD_MEMEFF_H
#include <stdint.h>
#include "abl_round.h"
#include "abl/kernel/backward.h"

/* dS of keys [0, count) of a row whose fp32 logits are x (blocks of `block` keys as the forward's, 0: one
 * block), |dP - D| x loss scale = up (a power of 2), softmax scale `scale`: dS = dtype(fp32(fp32(up P) scale))
 * with P = dtype(fp32(exp(fp32(x - lse)))) recomputed from the forward's log-sum-exp. */
void abl_memeff_backward_row(const abl_fp *out, int block, float scale, double up, const float *x, uint64_t count,
                             float *ds);
/* The saved log-sum-exp from the forward's running max mi (log2 domain) and row sum s:
 * fp32(fp32(mi / log2 e) + fp32(log s)). */
float abl_memeff_lse(float mi, float s);
/* dS of a key whose fp32(x - lse) is e: dtype(fp32(fp32(up P) scale)), P = dtype(RN32(exp(e))). Monotone
 * (non-decreasing) in e: every step is. */
float abl_memeff_ds(const abl_fp *out, float e, double up, float scale);
/* The largest e whose abl_memeff_ds is 0 (every smaller e's is 0, every larger one's not), and the largest
 * logit x of a row (as abl_memeff_backward_row takes it) whose fp32(x - lse) is <= ethr: the keys of that row
 * with dS = 0 are exactly x <= abl_memeff_row_zero_x, masked keys included. */
float abl_memeff_ds_zero_e(const abl_fp *out, double up, float scale);
float abl_memeff_row_zero_x(int block, const float *x, uint64_t count, float ethr);
/* The kernel's softmax scale, fp32(1 / sqrt(head_dim)). */
float abl_memeff_scale(int head_dim);

/* The zero-logit predictor (abl_backward_memeff_predict.c): one head whose zero-score logits by position
 * are T[0..n-1] (finite), |dP - D| x loss scale = up, softmax scale `scale`: the counts the emulation gives
 * (abl_backward_run with this kind), the forward's first zero weight included. */
abl_status abl_memeff_predict_head(const abl_emul *em, const float *T, uint64_t n, double up, float scale,
                                   abl_bwd_head *out);
/* Every head of cfg (zero logits, causal) at 2^log2_upstream into *out (allocated, model order; the caller
 * frees it) and *heads.
 * ABL_ERR_UNSUPPORTED for Gaussian or captured logits, a bidirectional layer, another softmax, or a logit
 * table that is not finite. */
abl_status abl_memeff_predict(const abl_simulate_config *cfg, long log2_upstream, abl_bwd_head **out, int *heads);
#endif
