/* alibi-blind: PyTorch FlexAttention's forward (softmax kind flex; preset flex-alibi), modelled from the
 * Triton template, not measured (docs/pipelines.md §3f).
 *
 * forward_block_mn: post_mod_scores = score_mod(qk * SM_SCALE) (the logits x here), then
 * `post_mod_scores *= RCP_LN2` (fp32), `m_ij = maximum(m_i, max(post_mod_scores))`,
 * `p = exp2(post_mod_scores - m_ij)` (tl.math.exp2: ex2.approx.ftz.f32, so a result below 2^-126 is 0),
 * `acc = dot(p.to(MATMUL_PRECISION = Q dtype), v, acc * alpha)`. The forward loops first over the KV
 * blocks the block mask
 * marks partial (for a causal mask_mod: the 128-key block holding the diagonal), then over the full ones
 * from key 0 upwards, each in sub-blocks of BLOCK_N keys (field block). The weight is P in the output
 * dtype, the value multiplied into V (as for flash). */
#include <math.h>
#include <string.h>
#include "kernel/abl_flex.h"

/* y = fp32(x * fp32(RCP_LN2)): RCP_LN2 = 1.44269504 rounds to fp32(log2 e) */
static float flex_y(float x)
{
    return (float)((double)x * (double)ABL_SDPA_LOG2E);
}

/* P = exp2(fp32(y - m)), flushed to zero below 2^-126 (the exp2 itself modelled as correctly rounded) */
static float flex_p(float y, float m)
{
    float d = (float)((double)y - (double)m);
    return d < -126.0f ? 0.0f : abl_exp2_rn32(d);
}

static uint64_t sub_block(const abl_emul *e)
{
    return e->block > 0 && (unsigned)e->block < ABL_FLEX_SPARSE_BLOCK ? (uint64_t)e->block : ABL_FLEX_SPARSE_BLOCK;
}

/* One sub-block [lo, hi] of row i: its P against the running max (updated first), zeros counted. */
static uint64_t flex_block(const abl_emul *e, const float *x, uint64_t lo, uint64_t hi, float *run, float *mj,
                           float *wout)
{
    uint64_t zeros = 0;
    for (uint64_t j = lo; j <= hi; j++)
        if (flex_y(x[j]) > *run)
            *run = flex_y(x[j]);
    for (uint64_t j = lo; j <= hi; j++) {
        float p = flex_p(flex_y(x[j]), *run);
        zeros += abl_emul_zero(e, p);
        mj[j] = *run;
        if (wout != NULL)
            wout[j] = abl_fp_round32(&e->out, p);
    }
    return zeros;
}

uint64_t abl_flex_row(const abl_emul *e, uint64_t i, const float *x, float *mj, float *wout, double *tvw)
{
    uint64_t B = sub_block(e), ps = i - i % ABL_FLEX_SPARSE_BLOCK, zeros = 0;
    float run = -INFINITY;
    for (uint64_t lo = ps; lo <= i; lo += B)
        zeros += flex_block(e, x, lo, lo + B - 1 < i ? lo + B - 1 : i, &run, mj, wout);
    for (uint64_t lo = 0; lo < ps; lo += B)
        zeros += flex_block(e, x, lo, lo + B - 1, &run, mj, wout);
    if (tvw != NULL) {
        /* the weight acting on V: P times the later rescales exp2(m_j - m_final), over the row sum */
        double l = 0.0;
        for (uint64_t j = 0; j <= i; j++) {
            double f = exp2((double)mj[j] - (double)run);
            tvw[j] = (double)abl_fp_round32(&e->out, flex_p(flex_y(x[j]), mj[j])) * f;
            l += (double)flex_p(flex_y(x[j]), mj[j]) * f;
        }
        for (uint64_t j = 0; j <= i; j++)
            tvw[j] /= l;
    }
    return zeros;
}

/* ---- the zero-logit predictor ---- */

/* Zero logits: along a row the logit never decreases towards the diagonal (every bias form), so the
 * running max of a sub-block ending at key hi is y(hi), every full block sees the diagonal's y, and
 * within a block the zero keys are a prefix. */
typedef struct flex_ctx {
    const abl_emul *e;
    const float *Y;   /* y by bias position */
    uint64_t i;
    int64_t dstar;    /* relative/symmetric form: the full blocks' keys are zero from this distance on (the
                       * max there is always y(0)); -1 for the other forms */
    /* relative/symmetric form: the diagonal block's zeros and last zero key (offset from the block start,
     * -1: none) for each r = i mod 128: they depend on r alone */
    uint64_t pz[ABL_FLEX_SPARSE_BLOCK];
    int64_t plast[ABL_FLEX_SPARSE_BLOCK];
} flex_ctx;

static int zero_at(const flex_ctx *c, uint64_t j, float m)
{
    return abl_emul_zero(c->e, flex_p(c->Y[abl_emul_pos(c->e, c->i, j)], m));
}

/* The zero prefix of [lo, hi] against max m: its last key, or lo - 1 (as int64) when none. */
static int64_t zero_prefix(const flex_ctx *c, uint64_t lo, uint64_t hi, float m)
{
    if (!zero_at(c, lo, m))
        return (int64_t)lo - 1;
    uint64_t a = lo, b = hi + 1;   /* zero at a, not zero at b (b = hi + 1: past the end) */
    while (b - a > 1) {
        uint64_t mid = a + (b - a) / 2;
        if (zero_at(c, mid, m))
            a = mid;
        else
            b = mid;
    }
    return (int64_t)a;
}

/* Row i: its zero count; *last the largest zero key (-1: none). */
static uint64_t predict_row(const flex_ctx *c, uint64_t B, int64_t *last)
{
    uint64_t i = c->i, ps = i - i % ABL_FLEX_SPARSE_BLOCK, zeros = 0;
    *last = -1;
    if (ps > 0) {
        float m = c->Y[abl_emul_pos(c->e, i, i)];
        int64_t J = c->dstar < 0 ? zero_prefix(c, 0, ps - 1, m)
                    : (int64_t)i >= c->dstar ? (int64_t)(i - (uint64_t)c->dstar < ps - 1 ? i - (uint64_t)c->dstar
                                                                                        : ps - 1)
                    : -1;
        zeros += (uint64_t)(J + 1);
        *last = J;
    }
    if (c->dstar >= 0 && i >= ABL_FLEX_SPARSE_BLOCK) {
        uint64_t r = i - ps;
        zeros += c->pz[r];
        if (c->plast[r] >= 0)
            *last = (int64_t)ps + c->plast[r];
        return zeros;
    }
    for (uint64_t lo = ps; lo <= i; lo += B) {
        uint64_t hi = lo + B - 1 < i ? lo + B - 1 : i;
        int64_t J = zero_prefix(c, lo, hi, c->Y[abl_emul_pos(c->e, i, hi)]);
        if (J >= (int64_t)lo) {
            zeros += (uint64_t)(J - (int64_t)lo + 1);
            *last = J;
        }
    }
    return zeros;
}

abl_status abl_predict_flex_head(const abl_emul *em, const float *T, uint64_t n, abl_pred_head *out)
{
    float *Y = malloc(n * sizeof *Y);
    if (Y == NULL)
        return ABL_ERR_NO_MEMORY;
    for (uint64_t pos = 0; pos < n; pos++)
        Y[pos] = flex_y(T[pos]);
    uint64_t B = sub_block(em), matrix = 0, rowz = 0;
    flex_ctx c;
    memset(&c, 0, sizeof c);
    c.e = em;
    c.Y = Y;
    c.dstar = -1;
    if (em->form == ABL_BIAS_RELATIVE || em->form == ABL_BIAS_SYMMETRIC) {
        /* the last row's keys at distance d (pos = d) against y(0): zero from some D* on (n: never) */
        c.i = n - 1;
        int64_t J = zero_prefix(&c, 0, n - 1, Y[0]);   /* keys j <= J, i.e. distances >= n - 1 - J */
        c.dstar = J >= 0 ? (int64_t)(n - 1) - J : (int64_t)n;
        /* rows 0..127 have no full blocks: their diagonal block is [0, i], the same as any row's with
         * i mod 128 = r (relative form), so they fill the table */
        int64_t keep = c.dstar;
        c.dstar = -1;
        for (uint64_t r = 0; r < ABL_FLEX_SPARSE_BLOCK && r < n; r++) {
            c.i = r;
            int64_t lastr;
            c.pz[r] = predict_row(&c, B, &lastr);
            c.plast[r] = lastr;
        }
        c.dstar = keep;
    }
    int64_t last = -1;
    for (uint64_t i = 0; i < n; i++) {
        c.i = i;
        rowz = predict_row(&c, B, &last);
        matrix += rowz;
    }
    free(Y);
    out->matrix_zeros = matrix;
    out->row_zeros = rowz;
    out->first_blind = last >= 0 ? (int64_t)(n - 1) - last : -1;
    out->exact_rows = 0;
    return ABL_OK;
}
