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
#include "kernel/abl_engines_walk.h"

#define TRITON_TILE_PREFILL 32   /* TILE_SIZE_PREFILL */
#define TRITON_TILE_DECODE 16    /* TILE_SIZE_DECODE for a 2- or 4-byte query (q.element_size() >= 2) */
#define TRITON_SEGMENTS 16       /* NUM_SEGMENTS, unified_attention's 3-D branch */
#define TRITON_3D_MAX_BLOCKS 128 /* 3-D when total_num_q_blocks * num_kv_heads <= 128 (and max_seqlen_q = 1) */


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

int abl_vllm_triton_segments(const abl_pipeline *p, int heads)
{
    if (p->softmax != ABL_SOFTMAX_VLLM_TRITON)
        return 1;
    if (p->splits > 0)
        return p->splits;
    /* unified_attention: 2-D "if max_seqlen_q > 1 or total_num_q_blocks * num_kv_heads > 128"; one decode
     * query of one sequence is total_num_q_blocks = 1 // BLOCK_Q + 1 = 1 (MHA: BLOCK_Q = 16), so 3-D while
     * the heads are at most 128 */
    return p->rows == 1 && heads <= TRITON_3D_MAX_BLOCKS ? TRITON_SEGMENTS : 1;
}

abl_status abl_vllm_triton_setup(const abl_pipeline *p, int heads, abl_emul *em)
{
    if (em->softmax != ABL_SOFTMAX_VLLM_TRITON)
        return ABL_OK;
    int S = abl_vllm_triton_segments(p, heads);
    if (S >= 2) {
        em->splits = S;
        em->block = TRITON_TILE_DECODE;
    }
    return ABL_OK;
}

/* The running max after the tile's keys x[t0..hi] (m_j = max(M, tile max)); 0 when every key so far is masked
 * (-inf), as kernel_unified_attention_2d and _3d guard it (m_j = where(m_j > -inf, m_j, 0)), so that exp(-inf - 0)
 * is 0 rather than NaN. */
static float tile_max(const float *x, uint64_t t0, uint64_t hi, float M)
{
    float mt = M;
    for (uint64_t j = t0; j <= hi; j++)
        mt = fmaxf(mt, x[j]);
    return mt == -INFINITY ? 0.0f : mt;
}

/* kernel_unified_attention_3d + reduce_segments for the decode row i = N - 1 (context_len = N - 1): segment
 * s takes tiles [s tps, (s + 1) tps), tps = cdiv(N, S TILE), each with the 2-D kernel's running max M_s and sum
 * L_s (L starts at 1.0, the first alpha is 0), its acc stored unnormalised; the reduce: M = max M_s over the
 * cdiv(N, tps TILE) segments that ran, e_s = tl.exp(M_s - M), expsum = sum of L_s e_s (sequential), out =
 * (acc_s e_s) / expsum. Key j's coefficient: RN(RN(A_j e_s) / expsum), A_j its 2-D-style chain in the
 * segment. fp32 products and the divide IEEE, as in the 2-D model. */
static uint64_t tri3d_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    uint64_t B = (uint64_t)e->block, S = (uint64_t)e->splits, n = i + 1;
    uint64_t tps = (n + S * B - 1) / (S * B), act = (n + tps * B - 1) / (tps * B);
    float Ms[128], Ls[128], es[128];
    for (uint64_t s = 0; s < act; s++) {
        float M = -INFINITY, L = 1.0f;
        uint64_t k0 = s * tps * B, k1 = (s + 1) * tps * B - 1 < i ? (s + 1) * tps * B - 1 : i;
        for (uint64_t t0 = k0; t0 <= k1; t0 += B) {
            uint64_t hi = t0 + B - 1 < k1 ? t0 + B - 1 : k1;
            float mt = tile_max(x, t0, hi, M);
            float alpha = tri_exp(M, mt);
            for (uint64_t j = k0; j < t0 && alpha != 1.0f; j++)
                col[j] = col[j] * alpha;
            float l = 0.0f;
            for (uint64_t j = t0; j <= hi; j++) {
                float p = tri_exp(x[j], mt);
                l += p;
                col[j] = abl_fp_round32(&e->out, p);
            }
            L = fmaf(L, alpha, l);
            M = mt;
        }
        Ms[s] = M;
        Ls[s] = L;
    }
    float Mx = -INFINITY, sum = 0.0f;
    for (uint64_t s = 0; s < act; s++)
        Mx = fmaxf(Mx, Ms[s]);
    for (uint64_t s = 0; s < act; s++) {
        es[s] = tri_exp(Ms[s], Mx);
        sum += Ls[s] * es[s];   /* segm_expsum * tl.exp(segm_max - overall_max), then tl.sum */
    }
    uint64_t zeros = 0;
    for (uint64_t j = 0; j <= i; j++) {
        float w = sum == 0.0f ? 0.0f : (col[j] * es[j / (tps * B)]) / sum;
        zeros += abl_emul_put_weight(w, j, wout, tvw);
    }
    return zeros;
}

uint64_t abl_vllm_triton_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    if (e->splits >= 2)
        return tri3d_row(e, i, x, col, wout, tvw);
    uint64_t B = tile_of(e), live = 0;
    float M = -INFINITY, L = 1.0f;
    for (uint64_t t0 = 0; t0 <= i; t0 += B) {
        uint64_t hi = t0 + B - 1 < i ? t0 + B - 1 : i;
        float mt = tile_max(x, t0, hi, M);
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
    for (uint64_t j = 0; j <= i; j++)
        zeros += abl_emul_put_weight(col[j] / L, j, wout, tvw);
    return zeros;
}

/* ---- the zero-logit predictor of a prompt (or chunk): abl_engines_walk.c's tile walk ----
 * Here a key of an earlier tile reaches the output as RN(RN(A_j alpha_d(i)) / L_i), alpha_d(i) the alpha of
 * the row's diagonal tile and L_i its final sum (the walk's b, divided by); a key of the diagonal tile as
 * RN(P_j / L_i). */
static float tri_w(const abl_tile_walk *t, float a, float ad, float L)
{
    (void)t;
    return (a * ad) / L;
}

static float tri_diag(const abl_tile_walk *t, float p, float L)
{
    return tri_w(t, p, 1.0f, L);
}

/* acc = acc * alpha */
static void tri_rescale(const abl_tile_walk *t, float *A, uint64_t lo, float f)
{
    for (uint64_t k = lo; k < t->B; k++)
        A[k] = A[k] * f;
}

/* P.to(V.dtype) */
static float tri_p(abl_tile_walk *t, float xj, float xm)
{
    return abl_fp_round32(&t->em->out, tri_exp(xj, xm));
}

static void tri_tiles(abl_tile_walk *t)
{
    float M = -INFINITY, L = 1.0f;
    for (uint64_t tt = 0; tt < t->nt; tt++) {   /* the full tiles' alpha and L */
        uint64_t lo = tt * t->B, hi = lo + t->B - 1 < t->n - 1 ? lo + t->B - 1 : t->n - 1;
        float l = 0.0f, al = tri_exp(M, t->X[hi]);
        for (uint64_t j = lo; j <= hi; j++)
            l += tri_exp(t->X[j], t->X[hi]);
        L = fmaf(L, al, l);
        t->alpha[tt] = al;
        t->Lrun[tt] = L;
        M = t->X[hi];
    }
}

/* Row i's diagonal tile: its alpha, and its L */
static void tri_row_factors(abl_tile_walk *t, uint64_t i, float *ad, float *L)
{
    uint64_t T = i / t->B, lo = T * t->B;
    float a = T == 0 ? 0.0f : tri_exp(t->X[lo - 1], t->X[i]), l = 0.0f;
    for (uint64_t j = lo; j <= i; j++)
        l += tri_exp(t->X[j], t->X[i]);
    *ad = a;
    *L = fmaf(T == 0 ? 1.0f : t->Lrun[T - 1], a, l);
}

static const abl_tile_steps tri_steps = {tri_tiles, tri_row_factors, tri_p, tri_rescale, tri_w, tri_diag, 1};

/* The fast path: x rising strictly with j (zero logits); the counts into out. */
static abl_status tri_fast(const abl_emul *em, const float *X, uint64_t n, abl_pred_head *out)
{
    return abl_tile_walk_predict(em, X, n, tile_of(em), &tri_steps, NULL, out);
}

abl_status abl_vllm_triton_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    /* the 3-D kernel (splits >= 2): its rows one by one */
    return abl_engine_predict_absolute(s, h, s->em.splits < 2 ? tri_fast : NULL, 1, abl_vllm_triton_row, out);
}
