/* alibi-blind: FlashAttention-2's backward dS at unit upstream, one row (abl_backward_flash.c), and its
 * zero-logit predictor (abl_backward_flash_predict.c). */
#ifndef ABL_BACKWARD_FLASH_H
#define ABL_BACKWARD_FLASH_H
#include <stdint.h>
#include "abl_round.h"
#include "abl/kernel/backward.h"

/* The log-sum-exp the forward kernel saves for row `count - 1` of fp32 logits x (flash logits: score units,
 * the alibi already in), as normalize_softmax_lse computes it: fma(row_max, scale_softmax, __logf(row_sum));
 * INFINITY when the sum is 0. e: a flash emulation (block, sm_scale, c_log2). */
float abl_flash_forward_lse(const abl_emul *e, const float *x, uint64_t count);

/* The same with the keys below `from` known to give exp2 = 0 and the row's max on the diagonal block
 * (rows whose logits grow along the keys: abl_backward_flash_predict.c). */
float abl_flash_lse_from(const abl_emul *e, const float *x, uint64_t count, uint64_t from);

/* The lse from the row's final running max and its fp32 row sum (normalize_softmax_lse). */
float abl_flash_lse_of(const abl_emul *e, float run, float sum);

/* dS of keys [0, count) of the row, |dP - D| x loss scale = up (a power of 2): P = ex2.approx.ftz(fma(x,
 * scale_softmax_log2, -fp32(lse log2 e))), dS = dtype(ftz(fp32(P up))), the dtype being e->out. */
void abl_flash_backward_row(const abl_emul *e, double up, const float *x, uint64_t count, float *ds);

/* The largest exp2 argument y whose dS is 0 in abl_flash_backward_row at 2^j = up (every smaller y gives 0,
 * every larger one not), and the largest logit x of a row with lse2 = fp32(lse log2 e) whose y is <= ythr:
 * the keys of that row with dS = 0 are exactly x <= abl_flash_ds_zero_x (masked keys -inf included).
 * Requires e->c_log2 > 0. */
float abl_flash_ds_zero_y(const abl_emul *e, double up);
float abl_flash_ds_zero_x(const abl_emul *e, float lse2, float ythr);

/* abl_flash_ds_zero_x of row count - 1, its lse summed from the forward's own fp32 P of the keys, p (the flash
 * row of abl_simulate.c: each key's exp2 against the running max of its block, what the lse sums), instead of
 * an exp2 per key: the keys with dS = 0 are x <= the result, at 2^j whose abl_flash_ds_zero_y is ythr. */
float abl_flash_row_zero_x(const abl_emul *e, const float *x, const float *p, uint64_t count, float ythr);

/* Zero logits, causal, unit upstream 2^j = up (abl_backward_flash_predict.c): per head (model order, *heads
 * of them, calloc'd into *out) the same counts as the row emulation above without forming every dS: each
 * row's logits grow along the keys (checked: ABL_ERR_UNSUPPORTED otherwise), so its dS is 0 on a prefix.
 * The prefix depends on the row's lse only through one binary32; a certified interval on the fp32 row sum
 * settles it for most rows in O(log N), the others sum their keys as the kernel does. fwd_first_blind and
 * the only_* counts are not predicted (-1, 0). ABL_ERR_UNSUPPORTED for bidirectional layers, split-KV,
 * Gaussian or captured scores. */
abl_status abl_flash_backward_predict(const abl_simulate_config *cfg, double up, abl_bwd_head **out, int *heads);

/* One head from its last row's logits X[0 .. e->n - 1] (ascending; row i reads X[0 .. i], or X[n-1-i ..
 * n-1] for the relative/symmetric forms): first_blind, row_zeros, matrix_zeros as above; *open_rows (may be
 * NULL): how many rows the bounds left open (their keys summed). */
abl_status abl_flash_backward_predict_table(const abl_emul *e, const float *X, double up, abl_bwd_head *o,
                                            uint64_t *open_rows);

/* The nominal cost of abl_flash_backward_predict (one thread), known before it runs. */
abl_status abl_flash_backward_estimate(const abl_simulate_config *cfg, abl_cost *out);
#endif
