/* alibi-blind: FlashAttention-2's split-KV path in vLLM's fork, modelled from source, not measured
 * (vllm-project/flash-attention@617264c1, csrc/flash_attn/; docs/pipelines.md §3c).
 *
 * flash_api.cpp set_params_splitkv: block_n = 256 / 128 / 64 (head dim <= 64 / <= 128 / above), num_splits
 *   from num_splits_heuristic(batch * heads * m_blocks, 2 * SMs, ceil(N / block_n), 128) unless given.
 * flash_fwd_kernel.h compute_attn_1rowblock_splitkv: split s takes the key blocks [s * nbps, (s + 1) * nbps),
 *   nbps = ceil(ceil(N / kBlockN) / num_splits), from its last block down (the flash online softmax,
 *   softmax.h softmax_rescale_o: exp2f(x * scale_log2 - max * scale_log2), acc_o and the row sum rescaled by
 *   exp2f((max_prev - max) * scale_log2) when the max grows; P converted to the element type before the MMA,
 *   fp32 accumulator); normalize_softmax_lse<Split>: the 4 lanes' sums by quad_allreduce_, O_s = acc_o *
 *   (1.f / sum) and lse_s = row_max * softmax_scale + __logf(sum) (-inf where sum is 0), both fp32.
 * combine_attn_seqk_parallel: lse_max over the splits (0 if all -inf), lse_sum = sum of expf(lse_s - lse_max)
 *   (per-thread then Allreduce), lse_logsum = logf(lse_sum) + lse_max, O = sum_s expf(lse_s - lse_logsum) *
 *   O_s in fp32, converted to the element type.
 * The fork is built with --use_fast_math (CMakeLists.txt VLLM_FA_GPU_FLAGS): exp2f is ex2.approx.ftz, expf
 * __expf, logf __logf (lg2.approx.ftz * ln 2), 1.f / x rcp.approx.ftz, fp32 arithmetic flushed to zero.
 * For a unit value vector of key j in split s the output is out(fp32(scale_s * fp32(acc_j * inv_s))), acc_j
 * its P in the element type times every later rescale: the key's weight and influence. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_cuda_math.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_flash_split.h"

#define SPLIT_MAX 128        /* STD_TORCH_CHECK(params.num_splits <= 128) */
#define QUAD 4               /* the 4 threads of an MMA row (quad_allreduce_) */
#define COMBINE_THREADS 128  /* Kernel_traits::kNThreads */

int abl_flash_split_heuristic(int batch_nheads_mblocks, int num_sms, int num_n_blocks, int max_splits)
{
    if ((float)batch_nheads_mblocks >= 0.8f * (float)num_sms)
        return 1;
    int m = max_splits < num_sms ? max_splits : num_sms;
    m = m < num_n_blocks ? m : num_n_blocks;
    float eff[SPLIT_MAX + 1], best = 0.0f;
    /* a split count is eligible when it changes the blocks per split (else it is the previous count) */
#define ELIGIBLE(s) ((s) == 1 || (num_n_blocks + (s) - 1) / (s) != (num_n_blocks + (s) - 2) / ((s) - 1))
    for (int s = 1; s <= m && s <= SPLIT_MAX; s++) {
        eff[s] = 0.0f;
        if (ELIGIBLE(s)) {
            float waves = (float)(batch_nheads_mblocks * s) / (float)num_sms;
            eff[s] = waves / ceilf(waves);
            best = eff[s] > best ? eff[s] : best;
        }
    }
    for (int s = 1; s <= m && s <= SPLIT_MAX; s++)
        if (ELIGIBLE(s) && (double)eff[s] >= 0.85 * (double)best)
            return s;
#undef ELIGIBLE
    return 1;
}

int abl_flash_split_block(int head_dim)
{
    return head_dim <= 64 ? 256 : head_dim <= 128 ? 128 : 64;
}

int abl_flash_split_count(const abl_pipeline *p, int heads, uint64_t n)
{
    if (p->softmax != ABL_SOFTMAX_FLASH)
        return 1;
    if (p->splits > 0)
        return p->splits;
    if (p->rows != 1)
        return 1;
    uint64_t B = (uint64_t)abl_flash_split_block(p->head_dim), blocks = (n + B - 1) / B;
    int nb = blocks > (uint64_t)SPLIT_MAX * 2 ? SPLIT_MAX * 2 : (int)blocks;   /* only min(nb, 128) matters */
    return abl_flash_split_heuristic(heads, 2 * ABL_FLASH_SPLIT_SMS, nb, SPLIT_MAX);
}

abl_status abl_flash_split_setup(const abl_pipeline *p, int heads, abl_emul *em)
{
    if (em->softmax != ABL_SOFTMAX_FLASH)
        return ABL_OK;
    int S = abl_flash_split_count(p, heads, em->n);
    if (S < 2)
        return ABL_OK;
    em->softmax = ABL_SOFTMAX_FLASH_SPLITKV;
    em->splits = S;
    em->head_dim = p->head_dim;
    em->block = abl_flash_split_block(p->head_dim);
    return abl_emul_engine_init(p, em);   /* the rows computed: the last R */
}

/* __logf: lg2.approx.ftz.f32 (taken as correctly rounded; a subnormal input flushed: -inf) times fp32(ln 2). */
static float fast_logf(float x)
{
    if (!(x >= 0x1p-126f))
        return -INFINITY;
    return abl_cuda_fmul((float)log2((double)x), 0x1.62e430p-1f);
}

/* One split of row i: its keys' coefficients acc_j * inv into col, its lse returned (-inf: no key). */
static float split_run(const abl_emul *e, uint64_t i, const float *x, float *col, uint64_t b_lo, uint64_t b_hi)
{
    uint64_t B = (uint64_t)e->block, top = b_hi * B + B - 1 < i ? b_hi * B + B - 1 : i;
    float run = -INFINITY, lane[QUAD] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint64_t blk = b_hi + 1; blk-- > b_lo;) {
        uint64_t lo = blk * B, hi = lo + B - 1 < i ? lo + B - 1 : i;
        float mb = run;
        for (uint64_t j = lo; j <= hi; j++)
            mb = fmaxf(mb, x[j]);
        if (run != -INFINITY && mb != run) {   /* softmax_rescale_o: scores_scale of acc_o and the sums */
            float sc = abl_cuda_ex2_ftz(abl_cuda_fmul(abl_cuda_fadd(run, -mb), e->c_log2));
            for (uint64_t j = hi + 1; j <= top; j++)
                col[j] = abl_cuda_fmul(col[j], sc);
            for (int q = 0; q < QUAD; q++)
                lane[q] = abl_cuda_fmul(lane[q], sc);
        }
        run = mb;
        float ms = mb == -INFINITY ? 0.0f : abl_emul_max_scaled(e, mb);
        for (uint64_t j = lo; j <= hi; j++) {
            float p = x[j] == -INFINITY ? 0.0f : abl_emul_flash_exp(e, x[j], ms);
            int q = (int)(((j - lo) % 8) / 2);   /* lane q holds columns 8k + 2q, 8k + 2q + 1 */
            lane[q] = abl_cuda_fadd(lane[q], p);
            col[j] = abl_fp_round32(&e->out, p);   /* convert_type<Element>(acc_s), then P.V into fp32 */
        }
    }
    /* quad_allreduce_: xor 2, then xor 1 */
    float a = abl_cuda_fadd(lane[0], lane[2]), b = abl_cuda_fadd(lane[1], lane[3]);
    float sum = abl_cuda_fadd(a, b);
    float inv = sum == 0.0f ? 1.0f : abl_cuda_rcp_ftz(sum);
    for (uint64_t j = b_lo * B; j <= top; j++)
        col[j] = abl_cuda_fmul(col[j], inv);
    return sum == 0.0f ? -INFINITY : abl_cuda_fmaf(run, e->sm_scale, fast_logf(sum));
}

/* combine_attn_seqk_parallel for one row: each split's scale expf(lse_s - lse_logsum) into sc. */
static void combine(const abl_emul *e, const float *lse, int S, float *sc)
{
    int K = 2;
    while (K < S)
        K *= 2;   /* kMaxSplits = 2^Log_max_splits */
    int M = e->head_dim % 128 == 0 ? 4 : e->head_dim % 64 == 0 ? 8 : 16;   /* the combine's kBlockM */
    int R = COMBINE_THREADS / M < K ? COMBINE_THREADS / M : K, per = (K * M + COMBINE_THREADS - 1) / COMBINE_THREADS;
    float mx = -INFINITY;
    for (int s = 0; s < S; s++)
        mx = fmaxf(mx, lse[s]);
    if (mx == -INFINITY)
        mx = 0.0f;
    float v[32];
    for (int r = 0; r < R; r++)   /* thread r holds splits r, r + R, ... (lse_accum(l)) */
        for (int l = 0; l < per; l++) {
            int row = l * R + r;
            float t = row < S ? abl_cuda_expf(abl_cuda_fadd(lse[row], -mx)) : 0.0f;
            v[r] = l == 0 ? t : abl_cuda_fadd(v[r], t);
        }
    for (int m = R / 2; m >= 1; m /= 2) {   /* Allreduce<R>: xor shuffles R/2 .. 1 */
        float t[32];
        for (int r = 0; r < R; r++)
            t[r] = abl_cuda_fadd(v[r], v[r ^ m]);
        memcpy(v, t, (size_t)R * sizeof *v);
    }
    float lsum = v[0];
    float logsum = lsum == 0.0f || lsum != lsum ? INFINITY : abl_cuda_fadd(fast_logf(lsum), mx);
    for (int s = 0; s < S; s++)
        sc[s] = abl_cuda_expf(abl_cuda_fadd(lse[s], -logsum));
}

uint64_t abl_flash_split_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    uint64_t B = (uint64_t)e->block, S = (uint64_t)e->splits;
    uint64_t nb = (e->n + B - 1) / B, per = (nb + S - 1) / S;
    float lse[SPLIT_MAX], sc[SPLIT_MAX];
    for (uint64_t s = 0; s < S; s++) {
        uint64_t b_lo = s * per, b_hi = (s + 1) * per < nb ? (s + 1) * per - 1 : nb - 1;
        if (b_lo >= nb || b_lo * B > i) {   /* an empty split, or every key of it masked for this row */
            lse[s] = -INFINITY;
            continue;
        }
        if (b_hi > i / B)
            b_hi = i / B;
        lse[s] = split_run(e, i, x, col, b_lo, b_hi);
    }
    combine(e, lse, (int)S, sc);
    uint64_t zeros = 0;
    for (uint64_t j = 0; j <= i; j++) {
        /* tOrO += lse_scale * tOrOaccum: key j's only non-zero term is its split's; then convert_type */
        float w = abl_fp_round32(&e->out, abl_cuda_fmul(sc[(j / B) / per], col[j]));
        zeros += abl_emul_put_weight(w, j, wout, tvw);
    }
    return zeros;
}

abl_status abl_flash_split_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    return abl_engine_predict_absolute(s, h, NULL, 0, abl_flash_split_row, out);
}
