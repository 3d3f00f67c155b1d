/* alibi-blind: GPU attention engines modelled from their source, not measured (docs/pipelines.md §3c).
 *
 * ggml-cuda-vec (llama.cpp, flash attention on, one query row: flash_attn_ext_vec, fattn-vec.cuh, built
 * with -use_fast_math; NVIDIA GPUs, where V_DOT2_F32_F16_AVAILABLE is not defined, so KQ and VKQ are fp32):
 *   x = fma(slope, F16 mask, score); keys in iterations of 128, warp w of 4 taking keys 32w..32w+31 of each;
 *   per warp: M_new = max(M, x + FATTN_KQ_MAX_OFFSET), s = __expf(M - M_new), p = __expf(x - M_new),
 *   lane sums KQ_sum = fma(KQ_sum, s, p), VKQ = VKQ * s, VKQ += v p (fp32, flushed);
 *   at the end each warp's VKQ and sums scaled by __expf(M_w - M), summed by xor butterflies, and
 *   dst = VKQ / KQ_sum (__fdividef under fast math).
 * vllm-paged (vLLM paged_attention_kernel, V1, 128 threads) and trtllm-mmha (TensorRT-LLM masked MHA,
 * single-block mode, 64/128/256 threads by step): x = score + fp32(slope * (j - i)); M = the row max;
 *   e = __expf(x - M), per-thread sums of keys t, t + T, ..., a block sum (xor butterfly in each warp,
 *   then over the warps' sums); inv = __fdividef(1, S + 1e-6); P = model-dtype(fp32(e * inv)), multiplied
 *   into V with an fp32 accumulator: the weight is P.
 * ggml-cuda (llama.cpp, flash attention off: soft_max_f32 in softmax.cu, -use_fast_math): the same block
 *   softmax with min(1024, the power of two >= N) threads (N the row length, llama.cpp's n_kv), no 1e-6,
 *   inv = 1.0f / S (rcp.approx.ftz under -prec-div=false), dst = fp32(e * inv): the weight; P.V is the
 *   cuBLAS GEMM's (pv-dtype, pv-accumulate; abl_influence.c), its fast predictor abl_engines_ggml_cuda.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_cuda_math.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_engines_ggml_cuda.h"
#include "kernel/abl_engines_triton.h"
#include "kernel/abl_engines_trtllm.h"
#include "kernel/abl_flash_split.h"

#define CUDA_WARP 32
#define VEC_THREADS 128                  /* ggml_cuda_fattn_vec_get_nthreads_device() */
#define VEC_WARPS (VEC_THREADS / CUDA_WARP)
#define KQ_MAX_OFFSET (3.0f * 0.6931f)   /* FATTN_KQ_MAX_OFFSET, evaluated in fp32 */
#define VLLM_THREADS 128                 /* paged_attention_v1: NUM_THREADS = 128 */
#define GGML_SOFTMAX_MAX_THREADS 1024    /* CUDA_SOFT_MAX_BLOCK_SIZE */

/* The kinds that read llama.cpp's mask and add slope * mask by fma (ggml-cuda-vec, ggml-cuda). */
static int ggml_mask_kind(const abl_emul *e)
{
    return e->softmax == ABL_SOFTMAX_GGML_CUDA_VEC || e->softmax == ABL_SOFTMAX_GGML_CUDA;
}

abl_status abl_emul_engine_init(const abl_pipeline *p, abl_emul *e)
{
    abl_status st = abl_fp_init(&p->mask_dtype, &e->mask);
    if (st != ABL_OK)
        return st;
    uint64_t R = p->rows > 0 && (uint64_t)p->rows < e->n ? (uint64_t)p->rows : e->n;
    e->first_row = e->n - R;
    if (p->softmax == ABL_SOFTMAX_TRTLLM_FMHA)   /* abl_engines_trtllm.c: its accumulator */
        return abl_trtllm_ctx_init(p, e);
    return ABL_OK;
}

abl_status abl_engine_setup_heads(const abl_pipeline *p, int heads, abl_emul *em)
{
    abl_status st = abl_flash_split_setup(p, heads, em);   /* abl_flash_split.c */
    return st != ABL_OK ? st : abl_vllm_triton_setup(p, heads, em);   /* abl_engines_triton.c */
}

double abl_engine_sim_units(const abl_pipeline *p, uint64_t n, double heads)
{
    uint64_t R = p->rows > 0 && (uint64_t)p->rows < n ? (uint64_t)p->rows : n;
    double nn = (double)n, first = (double)(n - R);
    /* ggml-cuda-vec rescales each live column once per 128-key iteration of its warp */
    double per = p->softmax == ABL_SOFTMAX_GGML_CUDA_VEC ? 4.0 : 2.0;
    if (p->softmax == ABL_SOFTMAX_VLLM_TRITON || p->softmax == ABL_SOFTMAX_TRTLLM_FMHA)
        per = 2.0 + nn / (2.0 * (p->block > 0 ? p->block : 32));   /* every later tile rescales each live key */
    return heads * (nn * (nn + 1) / 2 - first * (first + 1) / 2) * per;
}

float abl_engine_bias_mag(const abl_emul *e, const abl_emul_head *h, uint64_t pos)
{
    if (e->softmax == ABL_SOFTMAX_VLLM_TRITON)
        return fabsf(abl_vllm_triton_logit(e, h, 0.0f, pos));
    if (e->softmax == ABL_SOFTMAX_TRTLLM_FMHA)
        return fabsf(abl_trtllm_ctx_logit(e, h, 0.0f, pos));
    if (e->softmax == ABL_SOFTMAX_FLASH_SPLITKV)   /* flash's slope/scale * col */
        return (float)((double)h->factor * (double)pos);
    if (ggml_mask_kind(e))   /* slope * |mask|: +inf where the F16 mask is -inf */
        return (float)((double)h->factor * abl_fp_round(&e->mask, (double)pos));
    return abl_cuda_fmul(h->factor, (float)pos);
}

float abl_engine_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos, float mag)
{
    (void)mag;
    if (e->softmax == ABL_SOFTMAX_VLLM_TRITON)
        return abl_vllm_triton_logit(e, h, score, pos);
    if (e->softmax == ABL_SOFTMAX_TRTLLM_FMHA)
        return abl_trtllm_ctx_logit(e, h, score, pos);
    if (e->softmax == ABL_SOFTMAX_FLASH_SPLITKV)   /* alibi.h: + alibi_slope * col, contracted (flash's logit) */
        return fmaf(h->factor, (float)pos, score);
    if (ggml_mask_kind(e)) {
        /* sum += slope*__half2float(maskh[...]) (fattn-vec); x[col]*scale + slope*mask[col] (soft_max_f32,
         * the score arriving scaled): contracted to one fma */
        float mk = (float)abl_fp_round(&e->mask, (double)pos);
        return abl_cuda_fmaf(-h->factor, mk, score);
    }
    /* qk += alibi_slope * (token_idx - context_len + 1) (vLLM); qk_ += slope * (local_time_now - tlength) (TRT) */
    return abl_cuda_fadd(score, abl_cuda_fmul(h->factor, -(float)pos));
}

/* warp_reduce_sum / block_sum's shuffles: v[l] += v[l ^ mask] for mask = width/2 .. 1; every lane ends with
 * the same value (addition commutes), lane 0's is returned. */
static float butterfly(float *v, int width)
{
    for (int m = width / 2; m >= 1; m /= 2) {
        float t[CUDA_WARP];
        for (int l = 0; l < width; l++)
            t[l] = abl_cuda_fadd(v[l], v[l ^ m]);
        memcpy(v, t, (size_t)width * sizeof *v);
    }
    return v[0];
}

static uint64_t put_weights(const float *col, uint64_t count, float *wout, double *tvw)
{
    uint64_t zeros = 0;
    for (uint64_t j = 0; j < count; j++) {
        zeros += col[j] == 0.0f;
        if (wout != NULL)
            wout[j] = col[j];
        if (tvw != NULL)
            tvw[j] = col[j];
    }
    return zeros;
}

/* Scale warp w's columns below `below` by s (fp32, flushed); columns that reached 0 stay 0, *live skips them. */
static void vec_rescale(float *col, int w, uint64_t *live, uint64_t below, float s)
{
    if (s == 1.0f)
        return;
    for (uint64_t b = *live; b < below; b += VEC_THREADS)
        for (uint64_t k = b + (uint64_t)w * CUDA_WARP; k < b + (uint64_t)(w + 1) * CUDA_WARP && k < below; k++)
            col[k] = abl_cuda_fmul(col[k], s);
    /* advance past whole 128-key iterations whose columns of this warp are all 0 */
    while (*live + VEC_THREADS <= below) {
        int any = 0;
        for (uint64_t k = *live + (uint64_t)w * CUDA_WARP; k < *live + (uint64_t)(w + 1) * CUDA_WARP; k++)
            any |= col[k] != 0.0f;
        if (any)
            break;
        *live += VEC_THREADS;
    }
}

/* flash_attn_ext_vec for one row (ncols = 1, one block: gridDim.y = 1). */
static uint64_t vec_row(uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    float M[VEC_WARPS], sum[VEC_WARPS][CUDA_WARP];
    uint64_t live[VEC_WARPS] = {0};
    for (int w = 0; w < VEC_WARPS; w++) {
        M[w] = -0x1.fffffep127f / 2.0f;   /* -FLT_MAX/2 */
        for (int l = 0; l < CUDA_WARP; l++)
            sum[w][l] = 0.0f;
    }
    for (uint64_t c0 = 0; c0 <= i; c0 += VEC_THREADS) {
        for (int w = 0; w < VEC_WARPS; w++) {
            uint64_t lo = c0 + (uint64_t)w * CUDA_WARP;
            if (lo > i)   /* every key masked: the max stays, the scale is __expf(0) = 1, p = 0 */
                break;
            uint64_t hi = lo + CUDA_WARP - 1 < i ? lo + CUDA_WARP - 1 : i;
            float Mn = M[w];
            for (uint64_t j = lo; j <= hi; j++)
                Mn = fmaxf(Mn, abl_cuda_fadd(x[j], KQ_MAX_OFFSET));
            float s = abl_cuda_expf(abl_cuda_fadd(M[w], -Mn));
            M[w] = Mn;
            vec_rescale(col, w, &live[w], lo, s);
            for (int l = 0; l < CUDA_WARP; l++) {
                uint64_t j = lo + (uint64_t)l;
                float p = j <= i ? abl_cuda_expf(abl_cuda_fadd(x[j], -Mn)) : 0.0f;
                sum[w][l] = abl_cuda_fmaf(sum[w][l], s, p);
                if (j <= i)
                    col[j] = p;   /* VKQ += v * p with v the unit vector of key j: fma(1, p, 0) = p */
            }
        }
    }
    float Mall = M[0];
    for (int w = 1; w < VEC_WARPS; w++)
        Mall = fmaxf(Mall, M[w]);
    float wsum[CUDA_WARP] = {0};
    for (int w = 0; w < VEC_WARPS; w++) {
        float s = abl_cuda_expf(abl_cuda_fadd(M[w], -Mall));
        vec_rescale(col, w, &live[w], i + 1, s);
        for (int l = 0; l < CUDA_WARP; l++)
            sum[w][l] = abl_cuda_fmul(sum[w][l], s);
        wsum[w] = butterfly(sum[w], CUDA_WARP);
    }
    float S = butterfly(wsum, CUDA_WARP);   /* KQ_sum_shared[lane]: 4 warps' sums, the rest 0 */
    for (uint64_t j = 0; j <= i; j++)
        col[j] = abl_cuda_fdividef(col[j], S);   /* dst_val /= KQ_sum: __fdividef under -use_fast_math */
    return put_weights(col, i + 1, wout, tvw);
}

/* The block's threads: vLLM 128; TensorRT-LLM's mmha_launch_kernel 64 below 32 steps, 128 below 2048, else 256. */
static int mmha_threads(const abl_emul *e, uint64_t i)
{
    if (e->softmax == ABL_SOFTMAX_VLLM_PAGED)
        return VLLM_THREADS;
    if (e->softmax == ABL_SOFTMAX_GGML_CUDA)
        return abl_ggml_cuda_threads(e->n);
    return i < 32 ? 64 : i < 2048 ? 128 : 256;
}

/* The FasterTransformer-style decode softmax (vLLM paged attention V1, TensorRT-LLM mmha single block). */
static uint64_t mmha_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    int T = mmha_threads(e, i), W = T / CUDA_WARP;
    float M = x[0];
    for (uint64_t j = 1; j <= i; j++)
        M = fmaxf(M, x[j]);
    float ts[GGML_SOFTMAX_MAX_THREADS];
    for (int t = 0; t < T; t++)
        ts[t] = 0.0f;
    for (uint64_t j = 0; j <= i; j++) {
        col[j] = abl_cuda_expf(abl_cuda_fadd(x[j], -M));
        ts[j % (uint64_t)T] = abl_cuda_fadd(ts[j % (uint64_t)T], col[j]);   /* exp_sum += val */
    }
    float red[CUDA_WARP] = {0};
    for (int w = 0; w < W; w++)
        red[w] = butterfly(ts + w * CUDA_WARP, CUDA_WARP);
    /* block_sum: lanes < NUM_WARPS take red_smem[lane], masks W/2 .. 1; ggml's warp_reduce_sum over 32 lanes
     * whose lanes >= W hold 0 adds those zeros exactly, the same sum */
    float S = butterfly(red, W);
    /* vLLM / TensorRT-LLM: __fdividef(1, sum + 1e-6); ggml: 1.0f / tmp, rcp.approx.ftz, = __fdividef(1, S) */
    float inv = abl_cuda_fdividef(1.0f, e->softmax == ABL_SOFTMAX_GGML_CUDA ? S : abl_cuda_fadd(S, 1e-6f));
    for (uint64_t j = 0; j <= i; j++)   /* logits *= inv_sum; from_float / convert_from_float into T */
        col[j] = abl_fp_round32(&e->out, abl_cuda_fmul(col[j], inv));
    return put_weights(col, i + 1, wout, tvw);
}

int64_t abl_engine_first_zero(const float *w, uint64_t i)
{
    for (uint64_t d = 0; d <= i; d++)
        if (w[i - d] == 0.0f)
            return (int64_t)d;
    return -1;
}

uint64_t abl_engine_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    if (e->softmax == ABL_SOFTMAX_GGML_CUDA_VEC)
        return vec_row(i, x, col, wout, tvw);
    if (e->softmax == ABL_SOFTMAX_VLLM_TRITON)
        return abl_vllm_triton_row(e, i, x, col, wout, tvw);   /* abl_engines_triton.c */
    if (e->softmax == ABL_SOFTMAX_TRTLLM_FMHA)
        return abl_trtllm_ctx_row(e, i, x, col, wout, tvw);    /* abl_engines_trtllm.c */
    if (e->softmax == ABL_SOFTMAX_FLASH_SPLITKV)
        return abl_flash_split_row(e, i, x, col, wout, tvw);   /* abl_flash_split.c */
    return mmha_row(e, i, x, col, wout, tvw);
}

/* Each computed row (the last R) through the kernel's row model once: the zeros, and the last row's first
 * blind distance. x NULL: the logits follow the key index (every row reads T); else x is rebuilt per row from
 * the distances' logits, x[j] = T[i - j]. col: scratch; w: the last row's weights (may be col). */
static void predict_rows(const abl_emul *em, const float *T, float *x, float *col, float *w, abl_engine_row_fn row,
                         abl_pred_head *out)
{
    uint64_t n = em->n;
    for (uint64_t i = em->first_row; i < n; i++) {
        if (x != NULL)
            for (uint64_t j = 0; j <= i; j++)
                x[j] = T[i - j];
        uint64_t z = row(em, i, x != NULL ? x : T, col, i == n - 1 ? w : NULL, NULL);
        out->matrix_zeros += z;
        out->exact_rows++;
        if (i == n - 1) {
            out->row_zeros = z;
            out->first_blind = abl_engine_first_zero(w, i);
        }
    }
}

abl_status abl_engine_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n;
    if (em->softmax == ABL_SOFTMAX_VLLM_TRITON)   /* its logit follows the key index, not the distance */
        return abl_vllm_triton_predict_head(s, h, out);
    if (em->softmax == ABL_SOFTMAX_TRTLLM_FMHA)   /* the same: the absolute column bias */
        return abl_trtllm_ctx_predict_head(s, h, out);
    if (em->softmax == ABL_SOFTMAX_FLASH_SPLITKV)   /* the absolute bias: one logit per key, every row */
        return abl_flash_split_predict_head(s, h, out);
    if (em->form != ABL_BIAS_RELATIVE && em->form != ABL_BIAS_SYMMETRIC)
        return ABL_ERR_UNSUPPORTED;
    if (em->softmax == ABL_SOFTMAX_GGML_CUDA)   /* every row of a prompt: the bounded-sum predictor */
        return abl_ggml_cuda_predict_head(s, h, out);
    float *buf = malloc(3 * n * sizeof *buf);
    if (buf == NULL)
        return ABL_ERR_NO_MEMORY;
    float *T = buf, *x = buf + n, *w = buf + 2 * n;
    for (uint64_t d = 0; d < n; d++)
        T[d] = abl_engine_logit(em, &s->hd[h], 0.0f, d, abl_engine_bias_mag(em, &s->hd[h], d));
    memset(out, 0, sizeof *out);
    out->first_blind = -1;
    predict_rows(em, T, x, w, w, abl_engine_row, out);   /* w: the row's scratch, then the last row's weights */
    free(buf);
    return ABL_OK;
}

static int logits_rise(const float *T, uint64_t n, int strict)
{
    if (n == 0 || !isfinite(T[0]))
        return 0;
    for (uint64_t j = 1; j < n; j++)
        if (!isfinite(T[j]) || (strict ? !(T[j] > T[j - 1]) : !(T[j] >= T[j - 1])))
            return 0;
    return 1;
}

abl_status abl_engine_predict_absolute(const abl_sim_setup *s, int h, abl_engine_fast_fn fast, int strict,
                                       abl_engine_row_fn row, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n;
    float *buf = malloc(3 * n * sizeof *buf);
    if (buf == NULL)
        return ABL_ERR_NO_MEMORY;
    float *T = buf, *col = buf + n, *w = buf + 2 * n;
    for (uint64_t j = 0; j < n; j++)   /* the logit of key j is the same in every row */
        T[j] = abl_engine_logit(em, &s->hd[h], 0.0f, j, 0.0f);
    memset(out, 0, sizeof *out);
    out->first_blind = -1;
    if (fast != NULL && logits_rise(T, n, strict)) {
        abl_status st = fast(em, T, n, out);
        free(buf);
        return st;
    }
    predict_rows(em, T, NULL, col, w, row, out);   /* logits that fall somewhere: every row */
    free(buf);
    return ABL_OK;
}
