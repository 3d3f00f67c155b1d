/* alibi-blind: vLLM's Triton unified attention, 2-D kernel (kernel_unified_attention_2d in
 * vllm/attention/ops/triton_unified_attention.py @001ceb3e), modelled from source, not measured
 * (docs/pipelines.md §3c).
 *
 * Per tile of TILE_SIZE keys (32 for a batch with a prefill) from key 0 upwards, for one query row:
 *   S += alibi_slope * (seq_offset - context_len)     fma(slope, j - c, score), c = N - R
 *   m_j = maximum(M, max(S)); m_j = 0 where -inf
 *   P = tl.exp(S - m_j)                                 ex2.approx.ftz(fp32(S - m) * log2 e): __expf's model
 *   l_j = tl.sum(P); alpha = tl.exp(M - m_j)
 *   acc = acc * alpha; L = L * alpha + l_j (one fma); M = m_j
 *   acc += dot(P.to(V.dtype), V)                        fp32 accumulator
 *   acc = acc / L                                       at the end
 * For a unit value vector of key j the output is ((dtype(P_j) * alpha_{t+1}) * ... * alpha_last) / L in fp32:
 * that coefficient is the key's weight and its influence. Triton's fp32 multiply and divide are taken as
 * IEEE (mul.rn, div.rn: subnormals kept, no flush), the exp as ex2.approx.ftz (flushed below 2^-126), the
 * order of tl.sum as sequential within the tile (it moves only L's last bits). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_cuda_math.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_engines_triton.h"

#define TRITON_TILE_PREFILL 32   /* TILE_SIZE_PREFILL */

float abl_vllm_triton_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos)
{
    /* the int32 offset converts exactly to fp32 below 2^24; fp fusion contracts S += slope * k */
    float k = (float)((double)pos - (double)e->first_row);
    return fmaf(h->factor, k, score);
}

/* tl.exp(a - b) in fp32 (a - b rounded, no flush; the product and the ex2 flushed as __expf's model) */
static float tri_exp(float a, float b)
{
    if (a == -INFINITY)
        return 0.0f;
    return abl_cuda_expf(a - b);
}

static uint64_t tile_of(const abl_emul *e)
{
    return e->block > 0 ? (uint64_t)e->block : TRITON_TILE_PREFILL;
}

uint64_t abl_vllm_triton_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    uint64_t B = tile_of(e), live = 0;
    float M = -INFINITY, L = 1.0f;
    for (uint64_t t0 = 0; t0 <= i; t0 += B) {
        uint64_t hi = t0 + B - 1 < i ? t0 + B - 1 : i;
        float mt = M;
        for (uint64_t j = t0; j <= hi; j++)
            mt = fmaxf(mt, x[j]);
        if (mt == -INFINITY)
            mt = 0.0f;
        float alpha = tri_exp(M, mt);
        if (alpha != 1.0f) {
            for (uint64_t j = live; j < t0; j++)   /* acc = acc * alpha, each key's share of it */
                col[j] = col[j] * alpha;
            while (live < t0 && col[live] == 0.0f)   /* leading zeros stay zero: skip them from now on */
                live++;
        }
        float l = 0.0f;
        for (uint64_t j = t0; j <= hi; j++) {
            float p = tri_exp(x[j], mt);
            l += p;
            col[j] = abl_fp_round32(&e->out, p);   /* P.to(V.dtype), added into the fp32 acc exactly */
        }
        L = fmaf(L, alpha, l);
        M = mt;
    }
    uint64_t zeros = 0;
    for (uint64_t j = 0; j <= i; j++) {
        float w = col[j] / L;
        zeros += w == 0.0f;
        if (wout != NULL)
            wout[j] = w;
        if (tvw != NULL)
            tvw[j] = w;
    }
    return zeros;
}

abl_status abl_vllm_triton_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n;
    float *buf = malloc(3 * n * sizeof *buf);
    if (buf == NULL)
        return ABL_ERR_NO_MEMORY;
    float *T = buf, *col = buf + n, *w = buf + 2 * n;
    for (uint64_t j = 0; j < n; j++)   /* the logit of key j is the same in every row */
        T[j] = abl_vllm_triton_logit(em, &s->hd[h], 0.0f, j);
    memset(out, 0, sizeof *out);
    out->first_blind = -1;
    for (uint64_t i = em->first_row; i < n; i++) {
        uint64_t z = abl_vllm_triton_row(em, i, T, col, i == n - 1 ? w : NULL, NULL);
        out->matrix_zeros += z;
        out->exact_rows++;
        if (i == n - 1) {
            out->row_zeros = z;
            for (uint64_t d = 0; d <= i && out->first_blind < 0; d++)
                if (w[i - d] == 0.0f)
                    out->first_blind = (int64_t)d;
        }
    }
    free(buf);
    return ABL_OK;
}
