/* alibi-blind: TensorRT-LLM's context (prefill) attention for ALiBi, modelled from source, not measured
 * (docs/pipelines.md §3c cites every step). The kernel is fmha_v2's flash attention for Ampere/Ada
 * (fused_multihead_flash_attention_kernel_noloop.h @22200e4b; fmhaRunner.cpp picks it for every ALiBi
 * context call on sm80/86/89, and the Hopper kernels without ALiBi only), built with -use_fast_math and
 * -DHALF_ACCUMULATION_FOR_FLASH_ATTENTION (fmha_v2 Makefile @0c8de69a). For one query row i, key tiles of
 * Cta_tile_p::N keys (field block) from key 0 upwards:
 *   x_j = elt * scale_after_alibi + m * (col + sequence_pos_offset)    apply_mask_alibi, softmax.h @161ddf34:
 *         contracted to fma(m, j, score) (scale_after_alibi 1, offset 0: one rank); with an fp16 accumulator
 *         the score is the fp16 value Softmax_hmma::unpack converts (hmul2 by scale_bmm1, satfinite)
 *   tile max M_t (reduce<Max_>), running max fmax(M, M_t)
 *   alpha = expf(M_old - M) = __expf; sum = fma(sum, alpha, l_t) (Tile_o_normalizer::update, fragment.h
 *         @22200e4b: sum *= alpha, then the tile sum added); acc_o rescaled by alpha: in fp32 (fp32
 *         accumulator, bf16 and fp16 with context_fmha_fp32_acc) or as hmul2 by fp16(alpha) (fp16 accumulator)
 *   P_j = expf(x_j - M) = __expf (apply_exp_with_mask), packed into the model dtype for the P.V HMMA
 *   at the end beta = 1.f / sum (rcp.approx.ftz under fast math), acc_o * beta: fp32, or hmul2 by fp16(beta).
 * For a unit value vector of key j the output is mul(...mul(mul(dtype(P_j), a_{t+1}), ...), b): that
 * coefficient is the key's weight and influence (fp32 products flushed below 2^-126; fp16 products keep fp16
 * subnormals and vanish below 2^-25). The order of the tile sum (USE_SAME_SUM_ORDER_IN_SOFTMAX_AS_REF_CODE:
 * pairs, quads, warps) is modelled as sequential: it moves only the sum's last bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_cuda_math.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_engines_trtllm.h"
#include "kernel/abl_engines_walk.h"

#define TRT_KV_STEP 128   /* step_kv of the sm80 tiled kernels (64_128, 128_128) */
#define FP16_MAX 65504.0f

abl_status abl_trtllm_ctx_init(const abl_pipeline *p, abl_emul *e)
{
    return abl_fp_init(&p->pv_accumulate, &e->pv_acc);
}

/* The accumulator is fp16 (HMMA with an fp16 accumulator): the kind checks it is fp16 or fp32. */
static int half_acc(const abl_emul *e)
{
    return !e->pv_acc.identity;
}

static uint64_t tile_of(const abl_emul *e)
{
    return e->block > 0 ? (uint64_t)e->block : TRT_KV_STEP;
}

float abl_trtllm_ctx_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos)
{
    float s = score;
    if (half_acc(e)) {   /* satfinite_h2(hmul2(acc, scale_bmm1)): the score in fp16, clamped to finite */
        s = abl_cuda_f2h(score);
        s = s > FP16_MAX ? FP16_MAX : s < -FP16_MAX ? -FP16_MAX : s;
    }
    /* int col converts exactly to fp32 below 2^24 */
    return abl_cuda_fmaf(h->factor, (float)pos, s);
}

/* expf(a - b) under -use_fast_math: __expf of the fp32 difference */
static float trt_exp(float a, float b)
{
    return abl_cuda_expf(abl_cuda_fadd(a, -b));
}

/* A factor as the accumulator multiplies by it: fp16(f) for hmul2, f itself in fp32. */
static float acc_factor(const abl_emul *e, float f)
{
    return half_acc(e) ? abl_cuda_f2h(f) : f;
}

/* acc_o * factor: hmul2 (one fp16 rounding, subnormals kept) or an fp32 product (flushed) */
static float acc_mul(const abl_emul *e, float a, float f)
{
    return half_acc(e) ? abl_cuda_hmul(a, f) : abl_cuda_fmul(a, f);
}

uint64_t abl_trtllm_ctx_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    uint64_t B = tile_of(e), live = 0;
    float M = 0.0f, L = 0.0f;
    for (uint64_t t0 = 0; t0 <= i; t0 += B) {
        uint64_t hi = t0 + B - 1 < i ? t0 + B - 1 : i;
        float mt = x[t0];
        for (uint64_t j = t0 + 1; j <= hi; j++)
            mt = fmaxf(mt, x[j]);
        float alpha = 1.0f;
        if (t0 > 0) {   /* acc_o_normalizer.update: the running max, the rescale of acc_o and sum */
            mt = fmaxf(M, mt);
            alpha = trt_exp(M, mt);
            float af = acc_factor(e, alpha);
            for (uint64_t j = live; j < t0; j++)
                col[j] = acc_mul(e, col[j], af);
            while (live < t0 && col[live] == 0.0f)   /* leading zeros stay zero */
                live++;
        }
        float l = 0.0f;
        for (uint64_t j = t0; j <= hi; j++) {
            float p = trt_exp(x[j], mt);
            l = abl_cuda_fadd(l, p);
            col[j] = abl_fp_round32(&e->out, p);   /* softmax.pack: P in the model dtype, into acc_o exactly */
        }
        L = t0 > 0 ? abl_cuda_fmaf(L, alpha, l) : l;
        M = mt;
    }
    float beta = acc_factor(e, L == 0.0f ? 1.0f : abl_cuda_rcp_ftz(L));   /* final_update */
    uint64_t zeros = 0;
    for (uint64_t j = 0; j <= i; j++) {
        float w = acc_mul(e, col[j], beta);
        zeros += abl_emul_put_weight(w, j, wout, tvw);
    }
    return zeros;
}

/* ---- the zero-logit predictor of a prompt (or its last R rows): abl_engines_walk.c's tile walk ----
 * Here a key of an earlier tile reaches the output as mul(mul(A_j, a_d(i)), b_i) (each product rounded as the
 * accumulator rounds it), a_d(i) the factor of the row's diagonal tile and b_i = 1/sum its final factor; a key
 * of the diagonal tile as mul(P_j, b_i). */
typedef struct trt_cache {
    uint32_t *ckey;          /* a direct-mapped cache of __expf by the bits of its fp32 argument: the */
    float *cval;             /* differences x_j - x_i take few values per distance, so most calls hit */
    int half, out16;         /* an fp16 accumulator; P in fp16 */
} trt_cache;

#define TRT_CACHE_BITS 14

/* The predictor's own copies of the hot roundings, bit for bit those of abl_cuda_math.c (simulate runs those;
 * unit.test_engines_trtllm checks the two paths agree): an fp32 add flushed, and a binary64 value that holds
 * the exact result rounded once into fp16 (subnormals kept, past 65504 by half an ulp: inf): adding
 * 1.5 * 2^(e + 42) rounds at 2^(e - 10), fp16's spacing at x's binade e (2^-24 below 2^-14). */
static inline float fast_fadd(float a, float b)
{
    float r = a + b;
    return fabsf(r) < 0x1p-126f ? 0.0f * r : r;
}

static inline float fast_h(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    if (e < -14)
        e = -14;
    if (e > 15)
        return x > 0 ? INFINITY : -INFINITY;
    uint64_t cb = ((uint64_t)(1023 + e + 42) << 52) | ((uint64_t)1 << 51);
    double c;
    memcpy(&c, &cb, sizeof c);
    double r = (x + c) - c;
    return fabs(r) > 65504.0 ? (r > 0 ? INFINITY : -INFINITY) : (float)r;
}

static inline float fast_mul(const abl_tile_walk *t, float a, float f)
{
    const trt_cache *c = t->engine;
    if (!c->half)
        return fabsf(a * f) < 0x1p-126f ? 0.0f : a * f;   /* non-negative operands */
    return fast_h((double)a * (double)f);
}

static inline float fast_out(const abl_tile_walk *t, float p)
{
    const trt_cache *c = t->engine;
    return c->out16 ? fast_h((double)p) : abl_fp_round32(&t->em->out, p);
}

static float trt_w(const abl_tile_walk *t, float a, float ad, float b)
{
    return fast_mul(t, fast_mul(t, a, ad), b);
}

/* trt_exp(a, b) through the cache (the same value: __expf is a function of the fp32 difference) */
static float trt_cexp(abl_tile_walk *t, float a, float b)
{
    trt_cache *c = t->engine;
    float d = fast_fadd(a, -b);
    uint32_t u;
    memcpy(&u, &d, sizeof u);
    uint32_t k = (u ^ (u >> 13) ^ (u >> 23)) & ((1u << TRT_CACHE_BITS) - 1);
    if (c->ckey[k] != u) {
        c->ckey[k] = u;
        c->cval[k] = abl_cuda_expf(d);
    }
    return c->cval[k];
}

/* P_j in the model dtype: softmax.pack */
static float trt_p(abl_tile_walk *t, float xj, float xm)
{
    return fast_out(t, trt_cexp(t, xj, xm));
}

/* acc_o rescaled by a tile's factor */
static void trt_rescale(const abl_tile_walk *t, float *A, uint64_t lo, float f)
{
    for (uint64_t k = lo; k < t->B; k++)
        A[k] = fast_mul(t, A[k], f);
}

static float trt_diag(const abl_tile_walk *t, float p, float b)
{
    return fast_mul(t, p, b);
}

static void trt_tiles(abl_tile_walk *t)
{
    float L = 0.0f;
    for (uint64_t tt = 0; tt < t->nt; tt++) {   /* the full tiles' factors and running sums */
        uint64_t lo = tt * t->B, hi = lo + t->B - 1;
        float l = 0.0f, al = tt > 0 ? trt_cexp(t, t->X[lo - 1], t->X[hi]) : 1.0f;
        for (uint64_t j = lo; j <= hi; j++)
            l = fast_fadd(l, trt_cexp(t, t->X[j], t->X[hi]));
        L = tt > 0 ? abl_cuda_fmaf(L, al, l) : l;
        t->alpha[tt] = acc_factor(t->em, al);
        t->Lrun[tt] = L;
    }
}

/* Row i's diagonal tile: its factor, and the final factor 1/sum (final_update) */
static void trt_row_factors(abl_tile_walk *t, uint64_t i, float *ad, float *b)
{
    uint64_t T = i / t->B, lo = T * t->B;
    float a = T == 0 ? 1.0f : trt_cexp(t, t->X[lo - 1], t->X[i]), l = 0.0f;
    for (uint64_t j = lo; j <= i; j++)
        l = fast_fadd(l, trt_cexp(t, t->X[j], t->X[i]));
    float Li = T == 0 ? l : abl_cuda_fmaf(t->Lrun[T - 1], a, l);
    *ad = acc_factor(t->em, a);
    *b = acc_factor(t->em, abl_cuda_rcp_ftz(Li));
}

static const abl_tile_steps trt_steps = {trt_tiles, trt_row_factors, trt_p, trt_rescale, trt_w, trt_diag, 0};

static abl_status trt_fast(const abl_emul *em, const float *X, uint64_t n, abl_pred_head *out)
{
    size_t C = (size_t)1 << TRT_CACHE_BITS;
    trt_cache c;
    c.cval = malloc(2 * C * sizeof *c.cval);
    if (c.cval == NULL)
        return ABL_ERR_NO_MEMORY;
    c.ckey = (uint32_t *)(c.cval + C);   /* float and uint32_t: the same size and alignment */
    memset(c.ckey, 0xff, C * sizeof *c.ckey);   /* a NaN pattern no difference of finite logits has */
    c.half = half_acc(em);
    c.out16 = em->out.p == 11 && em->out.emin == -14 && em->out.has_inf;
    abl_status st = abl_tile_walk_predict(em, X, n, tile_of(em), &trt_steps, &c, out);
    free(c.cval);
    return st;
}

abl_status abl_trtllm_ctx_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    return abl_engine_predict_absolute(s, h, trt_fast, 0, abl_trtllm_ctx_row, out);
}

void abl_trtllm_ctx_note(const abl_pipeline *p, abl_text *t)
{
    int half = strcmp(p->pv_accumulate.name, "fp16") == 0;
    abl_text_add(t, "TensorRT-LLM context FMHA (fmha_v2 flash attention, Ampere/Ada): x = fma(slope, j, score) (the "
                    "absolute column bias); key tiles of %d from key 0 with a running max; P = __expf(x - max) "
                    "flushed below 2^-126, in %s; the %s accumulator rescaled by every later tile%s and by 1/sum "
                    "at the end: the coefficient of a unit value, weight = influence.",
                 p->block, p->output_dtype.name, half ? "fp16" : "fp32",
                 half ? " (hmul2 by fp16(alpha): a coefficient below 2^-25 is 0)" : " (fp32, flushed below 2^-126)");
}
