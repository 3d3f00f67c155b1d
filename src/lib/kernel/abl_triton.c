/* alibi-blind: MosaicBERT's Triton flash attention forward (softmax kind triton-lse; preset mosaicbert-triton),
 * modelled from source, not measured: mosaicml/examples@daddaeff7a535273ff984b0134da4839c70a45b3,
 * examples/benchmarks/bert/src/flash_attn_triton.py, _fwd_kernel (docs/pipelines.md §3d):
 *
 *   for start_n in range(0, end_n, BLOCK_N):          key blocks ascending from key 0 (BLOCK_N = 128)
 *       qk = qk * softmax_scale + bias                 fp32 (the fp32 alibi mask, .to(tl.float32))
 *       m_ij = tl.maximum(tl.max(qk, 1), lse_i)        the running LOG-SUM-EXP, not the running max
 *       p = tl.exp(qk - m_ij[:, None])                 fp32; modelled as a correctly rounded expf
 *       l_ij = tl.sum(p, 1)
 *       p = p.to(v.dtype); acc_o += tl.dot(p, v)       P rounded into the model dtype before P.V
 *       lse_i = m_ij + tl.log(tl.exp(lse_i - m_ij) + l_ij)
 *   acc_o *= tl.exp(m_i - lse_i)
 *
 * A key is lost when its P rounds to 0 in the model dtype (the kernel's weight is then 0 and its V term too).
 * tl.exp on the GPU (Triton lowers it through an approximate ex2 on NVIDIA) and tl.sum's reduction order are
 * not modelled: the row sum is added in key order in fp32. */
#include <float.h>
#include <math.h>
#include "kernel/abl_triton.h"

#define TRITON_BLOCK_N 128 /* the one autotune config: BLOCK_M = BLOCK_N = 128 */

/* One pass over row i's blocks: its zeros into *zeros, the final lse returned. With tvw, lse_final (from a
 * first pass) scales each key: tvw = q exp(m - lse_final) in one exp, so that no intermediate underflows
 * (exp(m) alone is 0 in binary64 from m < -745); a weight whose P is not 0 stays positive (DBL_TRUE_MIN when
 * binary64 cannot hold it): the key is lost exactly when P rounds to 0, as the counts say. */
static float triton_pass(const abl_emul *e, uint64_t i, const float *x, float *p, float *wout, double *tvw,
                         float lse_final, uint64_t *zeros)
{
    uint64_t count = i + 1, B = e->block > 0 ? (uint64_t)e->block : TRITON_BLOCK_N;
    float lse = -INFINITY;
    for (uint64_t lo = 0; lo < count; lo += B) {
        uint64_t hi = lo + B < count ? lo + B : count;
        float bmax = -INFINITY;
        for (uint64_t j = lo; j < hi; j++)
            bmax = x[j] > bmax ? x[j] : bmax;
        float m = bmax > lse ? bmax : lse, l = 0.0f;
        double scale = tvw != NULL ? exp((double)m - (double)lse_final) : 0.0;
        for (uint64_t j = lo; j < hi; j++) {
            p[j] = expf(x[j] - m);
            l += p[j];
            *zeros += abl_emul_zero(e, p[j]);
            float q = abl_fp_round32(&e->out, p[j]);
            if (wout != NULL)
                wout[j] = q;
            if (tvw != NULL)
                tvw[j] = q != 0.0f && (double)q * scale == 0.0 ? DBL_TRUE_MIN : (double)q * scale;
        }
        lse = m + logf(expf(lse - m) + l);
    }
    return lse;
}

uint64_t abl_triton_row(const abl_emul *e, uint64_t i, const float *x, float *p, float *wout, double *tvw)
{
    uint64_t zeros = 0;
    float lse = tvw != NULL ? triton_pass(e, i, x, p, NULL, NULL, 0.0f, &zeros) : 0.0f;
    zeros = 0;
    triton_pass(e, i, x, p, wout, tvw, lse, &zeros);
    return zeros;
}
