/* alibi-blind: the memory-efficient SDPA backward's dS at unit upstream, one row (softmax sdpa-efficient;
 * modelled from source, not measured: docs/pipelines.md §9).
 *
 * github:pytorch/pytorch aten/src/ATen/native/transformers/cuda/mem_eff_attention at 00f993df:
 *  - kernel_forward.h (AttentionKernel, after the key loop): the saved log-sum-exp is
 *    lse = accum_t(mi / kLog2e) + cutlass::fast_log(accum_t(s_prime)), mi the running max of the logits
 *    times log2 e and s_prime the running row sum of exp2f(y - mi), rescaled as the max grows: the same
 *    loop as the forward emulation (abl_sdpa.c, abl_sdpa_row), which this file replays for mi and s;
 *  - kernel_backward.h (AttentionBackwardKernel): the scaled scores (the fp32 logit x) go through
 *    MatmulQK::B2bGemm::accumApplyLSEToSmem, whose epilogue ApplyLogSumExp
 *    (epilogue_thread_apply_logsumexp.h) computes exp(x - lse) in fp32 and converts it to the shared-memory
 *    tile's scalar_t: P = dtype(fp32(exp(fp32(x - lse))));
 *  - "dSij = (dPij - Di) * Pij" in accum_t, then accum = accum * scale and scalar_t(accum): with
 *    |dP - D| = 2^j, dS = dtype(fp32(fp32(2^j P) * scale)).
 * Not modelled: the fast intrinsics' errors (fast_log, and expf under fast math: both taken correctly
 * rounded here), and D = rowsum(dO * O) itself (no --grad-weights: the captured dP alone does not give it). */
#include <math.h>
#include "abl_backward_memeff.h"

/* The forward's mi (log2 domain) and s over keys [0, count), blocks of B from key 0 upwards. */
static void forward_stats(const float *x, uint64_t count, uint64_t B, float *mi_out, float *s_out)
{
    const float L = ABL_SDPA_LOG2E;
    float mi = -INFINITY, s = 0.0f;
    for (uint64_t lo = 0; lo < count; lo += B) {
        uint64_t hi = lo + B < count ? lo + B : count;
        float bm = -INFINITY;
        for (uint64_t j = lo; j < hi; j++) {
            float y = (float)((double)x[j] * (double)L);
            if (y > bm)
                bm = y;
        }
        if (bm > mi) {
            if (mi != -INFINITY)
                s = (float)((double)s * (double)abl_exp2_rn32((float)((double)mi - (double)bm)));
            mi = bm;
        }
        abl_xacc sum;
        abl_xacc_clear(&sum);
        for (uint64_t j = lo; j < hi; j++) {
            float y = (float)((double)x[j] * (double)L);
            abl_xacc_add(&sum, y == -INFINITY ? 0.0f : abl_exp2_rn32((float)((double)y - (double)mi)));
        }
        s = (float)((double)s + (double)abl_xacc_round32(&sum));
    }
    *mi_out = mi;
    *s_out = s;
}

float abl_memeff_lse(float mi, float s)
{
    return (float)((double)(float)((double)mi / (double)ABL_SDPA_LOG2E) + (double)(float)log((double)s));
}

float abl_memeff_ds(const abl_fp *out, float e, double up, float scale)
{
    float p = abl_fp_round32(out, abl_exp_rn32(e));
    float g = (float)((double)p * up);              /* fp32(2^j P): exact but for fp32's own range */
    return abl_fp_round32(out, (float)((double)g * (double)scale)); /* both factors fp32: one rounding */
}

void abl_memeff_backward_row(const abl_fp *out, int block, float scale, double up, const float *x, uint64_t count,
                             float *ds)
{
    float mi, s;
    forward_stats(x, count, block > 0 ? (uint64_t)block : count, &mi, &s);
    float lse = abl_memeff_lse(mi, s);
    for (uint64_t j = 0; j < count; j++)
        ds[j] = x[j] == -INFINITY ? 0.0f   /* a masked key: P = 0 */
                                  : abl_memeff_ds(out, (float)((double)x[j] - (double)lse), up, scale);
}

typedef struct ds_e {
    const abl_fp *out;
    double up;
    float scale;
} ds_e;

static int ds_zero_at(const void *ctx, float e)
{
    const ds_e *d = ctx;
    return abl_memeff_ds(d->out, e, d->up, d->scale) == 0.0f;
}

/* abl_memeff_ds is monotone in e (e = -inf: P = 0), so its zeros are e <= the largest e it takes to 0: one
 * bisection per run. */
float abl_memeff_ds_zero_e(const abl_fp *out, double up, float scale)
{
    const ds_e d = {out, up, scale};
    return abl_float_last_true(ds_zero_at, &d);
}

typedef struct e_x {
    double lse;
    float ethr;
} e_x;

static int e_at_most(const void *ctx, float x)
{
    const e_x *d = ctx;
    return (float)((double)x - d->lse) <= d->ethr;
}

/* e = fp32(x - lse) grows with x, so the row's zeros are x <= the largest x with e <= ethr (a masked key,
 * -inf, among them): one bisection per row instead of an exp and two roundings per key. */
float abl_memeff_row_zero_x(int block, const float *x, uint64_t count, float ethr)
{
    float mi, s;
    forward_stats(x, count, block > 0 ? (uint64_t)block : count, &mi, &s);
    const e_x d = {(double)abl_memeff_lse(mi, s), ethr};
    return abl_float_last_true(e_at_most, &d);
}

float abl_memeff_scale(int head_dim)
{
    return (float)(1.0 / sqrt((double)(head_dim > 0 ? head_dim : 1)));
}
