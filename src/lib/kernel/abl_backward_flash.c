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
    float sum = abl_cuda_fadd(a, b);
    return sum == 0.0f || sum != sum ? INFINITY : abl_cuda_fmaf(run, e->sm_scale, fast_logf(sum));
}

static float lse_from(const abl_emul *e, const float *x, uint64_t count, uint64_t from)
{
    return lse_blocks(e, x, NULL, count, from);
}

float abl_flash_forward_lse(const abl_emul *e, const float *x, uint64_t count)
{
    return lse_from(e, x, count, 0);
}


/* P as the backward recomputes it, from lse2 = fp32(lse log2 e), and its dS at 2^j = up. */
static float recomputed_p(const abl_emul *e, float x, float lse2)
{
    float y = x == -INFINITY ? -INFINITY : abl_cuda_fmaf(x, e->c_log2, -lse2);
    /* below -126 the flush decides without the exp2: the binary32 next to -126 is -126 - 2^-17, whose 2^y
     * rounds to a subnormal (the time is the exp2 of the far keys) */
    return y < -126.0f ? 0.0f : abl_cuda_ex2_ftz(y);
}

static float ds_of(const abl_emul *e, float p, double up)
{
    /* fp32(2^j P): exact but for fp32's range; mul.ftz flushes a subnormal product (bf16 with 2^j < 1) */
    return abl_fp_round32(&e->out, abl_cuda_ftz((float)((double)p * up)));
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
        ds[j] = (double)y < yz ? 0.0f : ds_of(e, recomputed_p(e, x[j], lse2), up);
    }
}

/* Binary32 numbers in their order as integers: k >= 0 is the bit pattern k, k < 0 the negative of pattern -k
 * (-inf .. +inf is -0x7f800000 .. 0x7f800000), so a bisection on a monotone predicate of a float runs on k. */
static float float_at(int64_t k)
{
    uint32_t u = (uint32_t)(k < 0 ? -k : k);
    float f;
    memcpy(&f, &u, sizeof f);
    return k < 0 ? -f : f;
}

/* abl_flash_backward_row's dS = 0 as a function of the exp2 argument y alone: the same two tests. */
static int ds_zero_at(const abl_emul *e, double up, double yz, float y)
{
    return (double)y < yz || ds_of(e, y < -126.0f ? 0.0f : abl_cuda_ex2_ftz(y), up) == 0.0f;
}

/* Each step of dS from y is monotone (fma, ex2 correctly rounded then flushed, the product by a power of 2,
 * the rounding into the dtype), so dS = 0 exactly on y <= the largest such y: one bisection per run. */
float abl_flash_ds_zero_y(const abl_emul *e, double up)
{
    double yz = zero_below(e, up);
    int64_t lo = -0x7f800000, hi = 0x7f800000;   /* y = -inf: dS = 0; +inf: P = inf */
    if (ds_zero_at(e, up, yz, INFINITY))
        return INFINITY;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ds_zero_at(e, up, yz, float_at(mid)))
            lo = mid;
        else
            hi = mid;
    }
    return float_at(lo);
}

/* y = fma(x, scale_softmax_log2, -lse2) grows with x (scale_softmax_log2 > 0), so the keys of a row whose dS
 * is 0 are x <= the largest x with y <= ythr: one bisection per row instead of an exp2 per key. */
float abl_flash_ds_zero_x(const abl_emul *e, float lse2, float ythr)
{
    int64_t lo = -0x7f800000, hi = 0x7f800000;   /* x = -inf: y = -inf (a masked key), dS = 0 */
    if (abl_cuda_fmaf(INFINITY, e->c_log2, -lse2) <= ythr)
        return INFINITY;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (abl_cuda_fmaf(float_at(mid), e->c_log2, -lse2) <= ythr)
            lo = mid;
        else
            hi = mid;
    }
    return float_at(lo);
}

float abl_flash_row_zero_x(const abl_emul *e, const float *x, const float *p, uint64_t count, float ythr)
{
    float lse2 = abl_cuda_fmul(lse_blocks(e, x, p, count, 0), 0x1.715476p+0f);   /* as abl_flash_backward_row */
    return abl_flash_ds_zero_x(e, lse2, ythr);
}

/* The smallest j in [lo, hi] with f(j) true for a predicate false then true along j; hi + 1 if none. */
#define FIRST_TRUE(lo, hi, f, out)                    \
    do {                                              \
        uint64_t a_ = (lo), b_ = (hi) + 1;            \
        while (a_ < b_) {                             \
            uint64_t m_ = a_ + (b_ - a_) / 2;         \
            if (f(m_))                                \
                b_ = m_;                              \
            else                                      \
                a_ = m_ + 1;                          \
        }                                             \
        (out) = a_;                                   \
    } while (0)

typedef struct pred_row {
    const abl_emul *e;
    const float *T;   /* the zero-score logit of every position */
    float *x;         /* row scratch: x[j] for the keys read */
    uint64_t i;
    float ms, lse2;
    double up;
} pred_row;

static float row_x(const pred_row *r, uint64_t j)
{
    return r->T[abl_emul_pos(r->e, r->i, j)];
}

#define EXP_NONZERO(j) (abl_emul_flash_exp(r->e, row_x(r, j), r->ms) > 0.0f)
#define DS_NONZERO(j) (ds_of(r->e, recomputed_p(r->e, row_x(r, j), r->lse2), r->up) != 0.0f)

/* Row i's zero-dS keys: a prefix [0, J) (the logits grow along j), J returned. */
static uint64_t row_prefix(pred_row *r)
{
    uint64_t i = r->i, from, J;
    r->ms = abl_emul_max_scaled(r->e, row_x(r, i));   /* the diagonal holds the row's max */
    FIRST_TRUE(0, i, EXP_NONZERO, from);
    for (uint64_t j = from; j <= i; j++)
        r->x[j] = row_x(r, j);
    r->lse2 = abl_cuda_fmul(lse_from(r->e, r->x, i + 1, from), 0x1.715476p+0f);
    FIRST_TRUE(0, i, DS_NONZERO, J);
    return J;
}

static abl_status predict_head(const abl_sim_setup *s, int h, double up, float *T, float *x, abl_bwd_head *o)
{
    const abl_emul *e = &s->em;
    uint64_t n = e->n;
    for (uint64_t pos = 0; pos < n; pos++) {
        T[pos] = abl_emul_logit(e, &s->hd[h], 0.0f, pos, abl_emul_bias_mag(e, &s->hd[h], pos));
        if (!isfinite(T[pos]))
            return ABL_ERR_UNSUPPORTED;
    }
    pred_row r = {e, T, x, n - 1, 0.0f, 0.0f, up};
    for (uint64_t j = 1; j < n; j++)   /* every row reads a range of T in the last row's order */
        if (row_x(&r, j) < row_x(&r, j - 1))
            return ABL_ERR_UNSUPPORTED;
    memset(o, 0, sizeof *o);
    o->fwd_first_blind = -1;   /* not predicted */
    for (uint64_t i = 0; i < n; i++) {
        r.i = i;
        uint64_t J = row_prefix(&r);
        o->matrix_zeros += J;
        if (i == n - 1) {
            o->row_zeros = J;
            o->first_blind = J > 0 ? (int64_t)(n - J) : -1;   /* key J - 1 is the nearest zero */
        }
    }
    return ABL_OK;
}

/* The predictor's nominal work for one head: each row sums the keys whose exp2 is not flushed (the last
 * row's count w, found by the same bisection: a row of i + 1 keys sums min(i + 1, w) of them), plus two
 * bisections a row. */
static double head_units(const abl_sim_setup *s, int h)
{
    const abl_emul *e = &s->em;
    uint64_t n = e->n, i = n - 1, from;
    pred_row r = {e, NULL, NULL, i, 0.0f, 0.0f, 1.0};
    /* the last row's logits on demand (O(log N) of them), not the whole table */
#define LAST_X(j) abl_emul_logit(e, &s->hd[h], 0.0f, abl_emul_pos(e, i, (j)), \
                                 abl_emul_bias_mag(e, &s->hd[h], abl_emul_pos(e, i, (j))))
#define EXP_NONZERO_LAST(j) (abl_emul_flash_exp(e, LAST_X(j), r.ms) > 0.0f)
    r.ms = abl_emul_max_scaled(e, LAST_X(i));
    FIRST_TRUE(0, i, EXP_NONZERO_LAST, from);
#undef EXP_NONZERO_LAST
#undef LAST_X
    double w = (double)(n - from), nn = (double)n;
    double sums = w >= nn ? nn * (nn + 1) / 2 : w * (w + 1) / 2 + (nn - w) * w;
    return sums + 2.0 * nn * (log2(nn) + 1.0);
}

/* Measured on one core (64 heads x 32768, bf16: 8.8e9 units in about 100 s, a shared machine): units of
 * about 10 ns. */
#define FLASH_BWD_PREDICT_RATE 1.0e8

abl_status abl_flash_backward_estimate(const abl_simulate_config *cfg, abl_cost *out)
{
    memset(out, 0, sizeof *out);
    abl_sim_setup s;
    abl_status st = abl_sim_setup_init(cfg, &s);
    if (st != ABL_OK)
        return st;
    if (s.gaussian || s.captured != NULL || s.em.softmax != ABL_SOFTMAX_FLASH || s.em.n == 0) {
        abl_sim_setup_free(&s);
        return ABL_ERR_UNSUPPORTED;
    }
    for (int h = 0; h < s.heads; h++)
        out->units += head_units(&s, h);
    abl_sim_setup_free(&s);
    out->seconds = out->units / FLASH_BWD_PREDICT_RATE;
    out->threads = 1;
    out->unit_name = "weights";
    return ABL_OK;
}

abl_status abl_flash_backward_predict(const abl_simulate_config *cfg, double up, abl_bwd_head **out, int *heads)
{
    *out = NULL;
    *heads = 0;
    if (cfg->attention != ABL_ATTENTION_CAUSAL || cfg->pipeline.softmax != ABL_SOFTMAX_FLASH)
        return ABL_ERR_UNSUPPORTED;
    abl_sim_setup s;
    abl_status st = abl_sim_setup_init(cfg, &s);
    if (st == ABL_OK && (s.gaussian || s.captured != NULL || s.em.softmax != ABL_SOFTMAX_FLASH))
        st = ABL_ERR_UNSUPPORTED;   /* zero logits, one split */
    uint64_t n = s.em.n;
    float *T = st == ABL_OK ? malloc(n * sizeof *T) : NULL, *x = st == ABL_OK ? malloc(n * sizeof *x) : NULL;
    abl_bwd_head *res = st == ABL_OK ? calloc((size_t)(s.heads > 0 ? s.heads : 1), sizeof *res) : NULL;
    if (st == ABL_OK && (T == NULL || x == NULL || res == NULL))
        st = ABL_ERR_NO_MEMORY;
    for (int h = 0; st == ABL_OK && h < s.heads; h++) {
        int idx = s.schedule.slopes[h].index;   /* model order, as the emulation's results */
        st = idx >= 1 && idx <= s.heads ? predict_head(&s, h, up, T, x, &res[idx - 1]) : ABL_ERR_INVALID_ARGUMENT;
    }
    if (st == ABL_OK) {
        *out = res;
        *heads = s.heads;
        res = NULL;
    }
    free(res);
    free(T);
    free(x);
    abl_sim_setup_free(&s);
    return st;
}
