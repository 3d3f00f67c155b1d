/* alibi-blind: FlashAttention-2's backward dS at unit upstream, one row (softmax flash, the flash2 preset;
 * modelled from source, not measured: docs/pipelines.md §9).
 *
 * github:Dao-AILab/flash-attention at 0251105a (csrc/flash_attn/src/, built with --use_fast_math: setup.py):
 *  - forward, softmax.h Softmax::softmax_rescale_o and normalize_softmax_lse: per row the running max of the
 *    scores (blocks of kBlockN keys from the diagonal block down; each thread of the row's quad sums its
 *    columns 8k + 2q, 8k + 2q + 1 in fp32, rescaled by exp2f((max_prev - max_cur) * scale_softmax_log2) as
 *    the max grows), quad_allreduce_ (xor 2, then xor 1), lse = row_max * softmax_scale + __logf(sum)
 *    (contracted to an fma), INFINITY when the sum is 0 or NaN: the forward emulation's own loop
 *    (abl_simulate.c row_zeros, flash) with the lane sums of abl_flash_split.c split_run;
 *  - backward, flash_bwd_kernel.h compute_dq_dk_dv_1colblock: the same alibi (alibi.h Alibi::apply_alibi)
 *    on the recomputed scores, then scale_apply_exp2<Scale_max = false>(scores, lse,
 *    params.scale_softmax_log2): P = exp2f(x * scale_softmax_log2 - lse * float(M_LOG2E)) (fma,
 *    ex2.approx.ftz); pointwise_mult: dS = p * (dp - d) in fp32 (mul.ftz under fast math), d = dP_sum =
 *    rowsum(dO * O) (flash_bwd_preprocess_kernel.h dot_do_o); "Convert dS from fp32 to fp16":
 *    convert_type<Element>(dS_reshaped) before the dQ/dK GEMMs; the softmax scale multiplies acc_dq and
 *    acc_dk after them (params.scale_softmax_rp_dropout), so dS itself is rounded unscaled.
 * With |dp - d| x loss scale = 2^j: dS = dtype(ftz(fp32(2^j P))). Not modelled: the approximate
 * instructions' errors (ex2.approx, lg2.approx: taken correctly rounded before the flush, abl_cuda_math.h)
 * and D itself (no --grad-weights: a captured dP does not give rowsum(dO * O)). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "abl_backward_flash.h"
#include "abl_cuda_math.h"

#define QUAD 4   /* the threads of an MMA row fragment (SM80_16x8x16: a quad holds one row) */

/* __logf: lg2.approx.ftz.f32 (taken correctly rounded; a subnormal input flushed: -inf) times fp32(ln 2). */
static float fast_logf(float x)
{
    if (!(x >= 0x1p-126f))
        return -INFINITY;
    return abl_cuda_fmul((float)log2((double)x), 0x1.62e430p-1f);
}

float abl_flash_lse_of(const abl_emul *e, float run, float sum)
{
    return sum == 0.0f || sum != sum ? INFINITY : abl_cuda_fmaf(run, e->sm_scale, fast_logf(sum));
}

/* The lse of row count - 1 with the keys below `from` known to give exp2 = 0 (skipped: adding 0 changes no
 * lane, and their block maxima are below the diagonal block's in the predictor's monotone rows). pf (or
 * NULL): the forward's own fp32 P of the keys, the exp2 below with the same running max (row_zeros, flash),
 * so the sum costs no exp2; a zero P is not added (lane + 0 is the lane: every lane is already flushed). */
static float lse_blocks(const abl_emul *e, const float *x, const float *pf, uint64_t count, uint64_t from)
{
    uint64_t i = count - 1, B = e->block > 0 ? (uint64_t)e->block : count;
    float run = -INFINITY, lane[QUAD] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint64_t top = i / B + 1; top-- > from / B;) {   /* n_block from the diagonal block down */
        uint64_t lo = top * B, hi = lo + B - 1 < i ? lo + B - 1 : i, j0 = lo > from ? lo : from;
        float mb = run;
        for (uint64_t j = j0; j <= hi; j++)   /* fmaxf without the call: no logit is NaN */
            mb = x[j] > mb ? x[j] : mb;
        if (run != -INFINITY && mb != run) {   /* row_sum *= scores_scale (1 when the max did not grow) */
            float sc = abl_cuda_ex2_ftz(abl_cuda_fmul(abl_cuda_fadd(run, -mb), e->c_log2));
            for (int q = 0; q < QUAD; q++)
                lane[q] = abl_cuda_fmul(lane[q], sc);
        }
        run = mb;
        float ms = mb == -INFINITY ? 0.0f : abl_emul_max_scaled(e, mb);
        for (uint64_t j = j0; j <= hi; j++) {
            float p = x[j] == -INFINITY ? 0.0f : pf != NULL ? pf[j] : abl_emul_flash_exp(e, x[j], ms);
            int q = (int)(((j - lo) % 8) / 2);   /* lane q holds columns 8k + 2q, 8k + 2q + 1 */
            /* abl_cuda_fadd without its flushes: p is 0 (skipped), >= 2^-126 or inf, the lane 0 or >= 2^-126,
             * so nothing is subnormal; double rounding through binary64 is exact for a sum of two floats */
            if (p != 0.0f)
                lane[q] = (float)((double)lane[q] + (double)p);
        }
    }
    float a = abl_cuda_fadd(lane[0], lane[2]), b = abl_cuda_fadd(lane[1], lane[3]);   /* xor 2, then xor 1 */
    return abl_flash_lse_of(e, run, abl_cuda_fadd(a, b));
}

float abl_flash_lse_from(const abl_emul *e, const float *x, uint64_t count, uint64_t from)
{
    return lse_blocks(e, x, NULL, count, from);
}

float abl_flash_forward_lse(const abl_emul *e, const float *x, uint64_t count)
{
    return abl_flash_lse_from(e, x, count, 0);
}


static float ds_of(const abl_emul *e, float p, double up)
{
    /* fp32(2^j P): exact but for fp32's range; mul.ftz flushes a subnormal product (bf16 with 2^j < 1) */
    return abl_fp_round32(&e->out, abl_cuda_ftz((float)((double)p * up)));
}

/* dS of a key whose exp2 argument fma(x, scale_softmax_log2, -lse2) is the binary32 y. */
static float ds_at(const abl_emul *e, float y, double up)
{
    /* below -126 the flush decides without the exp2: the binary32 next to -126 is -126 - 2^-17, whose 2^y
     * rounds to a subnormal (the time is the exp2 of the far keys) */
    return ds_of(e, y < -126.0f ? 0.0f : abl_cuda_ex2_ftz(y), up);
}

/* A bound on the exp2 argument below which dS is 0 without the exp2: with T = max(zero_max, 2^-127) (a power
 * of 2) and y < log2(T / up) - 1, P = rn32(2^y) < T / (2 up) (1 + 2^-23), so fp32(P up) < T: it rounds to 0
 * in the dtype (T = zero_max) or is flushed (T = 2^-127). */
static double zero_below(const abl_emul *e, double up)
{
    double t = e->out.zero_max > 0x1p-127 ? e->out.zero_max : 0x1p-127;
    return log2(t / up) - 1.0;
}

void abl_flash_backward_row(const abl_emul *e, double up, const float *x, uint64_t count, float *ds)
{
    float lse2 = abl_cuda_fmul(abl_flash_forward_lse(e, x, count), 0x1.715476p+0f); /* lse * float(M_LOG2E) */
    double yz = zero_below(e, up);
    for (uint64_t j = 0; j < count; j++) {
        float y = x[j] == -INFINITY ? -INFINITY : abl_cuda_fmaf(x[j], e->c_log2, -lse2);
        ds[j] = (double)y < yz ? 0.0f : ds_at(e, y, up);
    }
}

/* abl_flash_backward_row's dS = 0 as a function of the exp2 argument y alone: the same two tests. */
typedef struct ds_y {
    const abl_emul *e;
    double up, yz;
} ds_y;

static int ds_zero_at(const void *ctx, float y)
{
    const ds_y *d = ctx;
    return (double)y < d->yz || ds_at(d->e, y, d->up) == 0.0f;
}

/* Each step of dS from y is monotone (fma, ex2 correctly rounded then flushed, the product by a power of 2,
 * the rounding into the dtype), so dS = 0 exactly on y <= the largest such y (y = -inf: dS = 0): one
 * bisection per run. */
float abl_flash_ds_zero_y(const abl_emul *e, double up)
{
    const ds_y d = {e, up, zero_below(e, up)};
    return abl_float_last_true(ds_zero_at, &d);
}

typedef struct y_x {
    const abl_emul *e;
    float lse2, ythr;
} y_x;

static int y_at_most(const void *ctx, float x)
{
    const y_x *d = ctx;
    return abl_cuda_fmaf(x, d->e->c_log2, -d->lse2) <= d->ythr;
}

/* y = fma(x, scale_softmax_log2, -lse2) grows with x (scale_softmax_log2 > 0), so the keys of a row whose dS
 * is 0 are x <= the largest x with y <= ythr (x = -inf, a masked key, among them): one bisection per row
 * instead of an exp2 per key. */
float abl_flash_ds_zero_x(const abl_emul *e, float lse2, float ythr)
{
    const y_x d = {e, lse2, ythr};
    return abl_float_last_true(y_at_most, &d);
}

float abl_flash_row_zero_x(const abl_emul *e, const float *x, const float *p, uint64_t count, float ythr)
{
    float lse2 = abl_cuda_fmul(lse_blocks(e, x, p, count, 0), 0x1.715476p+0f);   /* as abl_flash_backward_row */
    return abl_flash_ds_zero_x(e, lse2, ythr);
}
