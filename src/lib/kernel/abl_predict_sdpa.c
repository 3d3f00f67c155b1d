/* alibi-blind: the zero-logit predictor for torch SDPA's fused kernels (softmax sdpa-efficient,
 * sdpa-cudnn), exactly equal to abl_sdpa_row applied to every row, without running every row.
 *
 * The kernel (abl_sdpa.c): y_j = fp32(x_j * log2 e); keys in blocks of B from key 0; when block k
 * raises the running max from M to M', every earlier accumulator and the sum are multiplied by
 * g = RN32(2^fp32(M - M')); P_j = out(RN32(2^fp32(y_j - M_k))); s = fp32(fp32(s * g) + RN32(exact
 * block sum of the unrounded exponentials)); w_j = out(flush(fp32(acc_j * fp32(1 / s)))).
 *
 * Zero logits make y_j non-decreasing in j (checked; the row-by-row reference is used otherwise), so
 *  - each block's max is its last key and the running max moves at every block (g = 1 when it does
 *    not, which is the same arithmetic);
 *  - inside one block the final accumulators are non-decreasing in j (P is, and every key of the
 *    block goes through the same chain of roundings, each monotone), so a block's zeros are a prefix
 *    of its keys, found by bisection;
 *  - the zero test is monotone in acc: acc is zero exactly when acc <= A(alpha), the largest such
 *    fp32 value, found once per alpha by bisection over bit patterns;
 *  - a block's last key has P = 1, and its final value is non-increasing with the block's distance
 *    from the diagonal (1 * g rounds to at most 1, then the same monotone chain): the blocks that
 *    are entirely zero are the far ones, found by bisection over blocks.
 * A key's chain is bounded in binary64 (relative error (1 + 2^-24) per rounding while the values
 * stay normal, 2^-150 absolute per rounding below); only keys inside that band are multiplied out
 * (once per key, memoised).
 *
 * Relative/symmetric form (pos = i - j): row i = qB + rho sees the diagonal block of distances
 * [0, rho] and full blocks of distances [rho + 1 + (u - 1)B, rho + uB], u = 1..q. For one residue
 * rho every P, every g, and so every accumulator as a function of the distance, is the same in all
 * rows; only the sum depends on q. It is s(q) = f_0(f_1(...f_(q-1)(bs_q))) with monotone steps
 * f_u(s) = fp32(fp32(s * g_(u+1)) + bs_u): once f_0(...f_k(HI)) equals s(k) = f_0(...f_k(0)) for an
 * upper bound HI of every partial sum, s(q) = s(k) for every q >= k (the far blocks no longer change
 * the fp32 sum). Rows past that k add one block each: their zero counts are a running sum.
 * Absolute/trailing form (pos independent of the row): full blocks 0..q-1 are the same for every row
 * of the last block q; the sum over them is a prefix recurrence; only the partial block, the last
 * rescale and the threshold depend on the row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_predict_sdpa.h"

#define RFLOOR 0x1p-500   /* binary64 products of factors below this are kept at it (an upper bound) */

typedef struct sp {
    const abl_emul *em;
    uint64_t n, B;
    int cudnn;
    float *y;         /* fp32(logit * log2 e): relative forms by distance, absolute/trailing by key */
    float *memo;      /* exact (pre-)final accumulator of a key, valid when stamp == gen */
    uint32_t *stamp;
    uint32_t gen;
    float wmax;             /* the largest fp32(acc * alpha) whose weight is zero */
    float a_alpha, a_val;   /* last threshold computed */
    int a_ok;
    float b_A, b_g, b_val;  /* last below() */
    int b_ok;
    /* per group (relative: one residue, index u = block distance; absolute: index k = block) */
    uint64_t *t;      /* relative: the block's nearest distance */
    float *g;         /* rescale factors */
    double *R;        /* binary64 product of the factors a block's keys go through */
    double *SR;       /* sum over those factors of the product of the ones after it (chain_bounds) */
    double *lob;      /* lower bound of the block's smallest final accumulator */
    double *env;      /* monotone envelope of lob */
    float *bs;        /* relative: block sums of this residue; absolute: full block sums */
    float *sq;        /* relative: s(q); absolute: the sum after full blocks 0..q-1 */
    float *pmin;      /* absolute: P of a full block's first key */
    float *M;         /* absolute: a full block's max */
    float *bsT;       /* relative: the block sum by nearest distance, computed up to bs_done */
    uint64_t bs_done;
    abl_xacc win;
    abl_sdpa_cut *cut;   /* a second count (abl_predict_sdpa_head_cut; NULL: none) */
    uint64_t D0;         /* the current row's cut: distances >= D0 */
    int64_t J0;          /* absolute/trailing: the same as the largest key at or beyond the cut (-1: none) */
    uint64_t zc;         /* the current row's forward zeros at or beyond the cut */
} sp;

static float mul32(float a, float b)
{
    return (float)((double)a * (double)b);
}

static float add32(float a, float b)
{
    return (float)((double)a + (double)b);
}

/* abl_exp2_rn32 bit for bit: the same binary64 exp2 and the same test for a value near a binary32
 * rounding boundary (|frac - 1/2| <= 2^-20, frac the part of d below the binary32 spacing, 2^-149
 * at least), without frexp/ldexp: for normal results frac is the 29 bits of the binary64 mantissa
 * below the binary32 ones; below 2^-125 it is read from d * 2^149 (exact). */
static float exp2_rn32(float y)
{
    if (y <= -150.0f)
        return 0.0f;
    if (y >= 127.0f)
        return abl_exp2_rn32(y);
    double d = exp2((double)y);
    int near;
    if (y < -125.0f) {
        double t = d * 0x1p149;   /* < 2^24 */
        double frac = t - (double)(int64_t)t;
        near = fabs(frac - 0.5) <= 0x1p-20;
    } else {
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        uint64_t low = u & ((UINT64_C(1) << 29) - 1);
        near = low + 512 >= (UINT64_C(1) << 28) && low <= (UINT64_C(1) << 28) + 512;
    }
    return near ? abl_exp2_rn32(y) : (float)d;
}

/* RN32(2^fp32(a - b)) */
static float ex2(float a, float b)
{
    return exp2_rn32((float)((double)a - (double)b));
}

/* abl_xacc_round32 (the exact sum rounded once to binary32, ties to even) with word operations. */
static float xround(const abl_xacc *a)
{
    int k = 3;
    while (k >= 0 && a->w[k] == 0)
        k--;
    if (k < 0)
        return 0.0f;
    int top = 63;
    while (!(a->w[k] >> top))
        top--;
    int P = 64 * k + top;                     /* the leading bit is worth 2^(P - 149) */
    if (P <= 23)
        return (float)((double)a->w[0] * 0x1p-149);   /* at most 24 bits: exact */
    int low = P - 24, wi = low / 64, off = low % 64;   /* the round bit's position */
    uint64_t win = a->w[wi] >> off;
    if (off > 0 && wi < 3)
        win |= a->w[wi + 1] << (64 - off);
    uint64_t mant = (win >> 1) & ((UINT64_C(1) << 24) - 1), round = win & 1u;
    int sticky = off > 0 && (a->w[wi] & ((UINT64_C(1) << off) - 1)) != 0;
    for (int w = 0; w < wi && !sticky; w++)
        sticky = a->w[w] != 0;
    if (round && (sticky || (mant & 1u)))
        mant++;
    uint64_t e = (uint64_t)(1023 + P - 23 - 149) << 52;   /* 2^(P - 172), a normal binary64 */
    double scale;
    memcpy(&scale, &e, sizeof scale);
    return (float)((double)mant * scale);
}

static float outr(const sp *c, float v)
{
    return abl_fp_round32(&c->em->out, v);
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* the next fp32 value up / down from a finite v >= 0 (down from 0 stays 0) */
static float up1(float v)
{
    return from_bits(to_bits(v) + 1u);
}

static float down1(float v)
{
    return v > 0.0f ? from_bits(to_bits(v) - 1u) : 0.0f;
}

/* A monotone predicate over an index range: true exactly on a prefix. */
typedef int (*pred_fn)(sp *c, const void *ctx, int64_t x);

/* The first x in [lo, hi) where f is false (hi if none). With a hint (the answer of a neighbouring
 * row) it gallops from the hint outwards, then bisects: the same answer in O(log |answer - hint|)
 * evaluations; without one (hint < lo) it bisects [lo, hi]. */
static int64_t first_false(sp *c, const void *ctx, pred_fn f, int64_t lo, int64_t hi, int64_t hint)
{
    int64_t a = lo, b = hi;   /* the answer lies in [a, b] */
    if (hint >= lo) {
        if (hint > hi)
            hint = hi;
        if (hint < hi && f(c, ctx, hint)) {
            a = hint + 1;
            for (int64_t step = 1;; step *= 2) {
                int64_t t = hint + step;
                if (t >= hi)
                    break;
                if (!f(c, ctx, t)) {
                    b = t;
                    break;
                }
                a = t + 1;
            }
        } else {
            b = hint;
            for (int64_t step = 1;; step *= 2) {
                int64_t t = hint - step;
                if (t < lo)
                    break;
                if (f(c, ctx, t)) {
                    a = t + 1;
                    break;
                }
                b = t;
            }
        }
    }
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (f(c, ctx, m))
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* The epilogue's zero test, literally: is the weight zero for w = fp32(acc * alpha)? */
static int wzero_lit(const sp *c, float w)
{
    if (c->cudnn && w < 0x1p-126f)
        w = 0.0f;
    return outr(c, w) == 0.0f;
}

/* The largest fp32 w >= 0 whose weight is zero (the test is monotone in w: flush and rounding are),
 * by bisection over the bit patterns of [0, 1] (a weight of 1 is never zero). */
static float wmax_of(const sp *c)
{
    uint32_t lo = 0, hi = 0x3f800000u;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (wzero_lit(c, from_bits(mid)))
            lo = mid;
        else
            hi = mid;
    }
    return from_bits(lo);
}

/* The largest fp32 a in [0, 1] with fp32(a * g) <= lim (g > 0, finite): from the binary64 quotient,
 * moved by ulps until the (monotone) test changes. */
static float largest_below(float lim, float g)
{
    if (mul32(1.0f, g) <= lim)
        return 1.0f;
    /* RN(a g) <= lim when a g is below the midpoint of lim and its successor: start there */
    double mid = ((double)lim + (double)up1(lim)) / 2.0;
    float a = (float)(mid / (double)g);
    if (a > 1.0f)
        a = 1.0f;
    while (a > 0.0f && mul32(a, g) > lim)
        a = down1(a);
    for (;;) {
        float b = up1(a);
        if (b > 1.0f || mul32(b, g) > lim)
            return a;
        a = b;
    }
}

/* The largest fp32 acc in [0, 1] (every accumulator is: P <= 1, factors <= 1) whose weight is zero:
 * zero exactly when fp32(acc * alpha) <= wmax. */
static float astar(sp *c, float alpha)
{
    if (c->a_ok && c->a_alpha == alpha)
        return c->a_val;
    float A = largest_below(c->wmax, alpha);
    c->a_ok = 1;
    c->a_alpha = alpha;
    c->a_val = A;
    return A;
}

/* The largest fp32 a in [0, 1] with fp32(a * g) <= A (absolute form: the threshold before the last
 * rescale). */
static float below(sp *c, float A, float g)
{
    if (g == 1.0f)
        return A;
    if (c->b_ok && c->b_A == A && c->b_g == g)
        return c->b_val;
    float r = largest_below(A, g);
    c->b_ok = 1;
    c->b_A = A;
    c->b_g = g;
    c->b_val = r;
    return r;
}

/* R * g for the chain bound products (kept at RFLOOR once below it: still an upper bound) */
static double rmul(double R, float g)
{
    double v = R * (double)g;
    return v < RFLOOR ? RFLOOR : v;
}

/* Bounds on the fp32 chain a = fl(...fl(fl(P * g_1) * g_2) ... * g_k), k = steps, given R, the binary64
 * product of the factors (each of its products within 2^-53), and SR, the sum over the steps of the
 * product of the factors applied after that step. Each rounding is fl(z) = z (1 + r) + e with
 * |r| <= 2^-24, |e| <= 2^-150 (e = 0 while z >= 2^-126), so
 *   |a - P prod g| <= P prod g ((1 + 2^-24)^k - 1) + 2^-150 sum_v (prod of the later g) (1 + 2^-24)^k;
 * (1 + 2^-23)^(k + 1) covers both (1 + 2^-24)^k and the binary64 errors of R, SR and P * R. If the
 * relative lower bound is normal no intermediate value was below 2^-126 (each is at least the final
 * one, the factors being <= 1), so every e is 0. */
static void chain_bounds(float P, double R, double SR, uint64_t steps, double *lo, double *hi)
{
    double k = (double)steps + 1.0;
    double x = (double)P * R;
    /* (1 + 2^-23)^k <= e^(k 2^-23) <= 1 + k 2^-22 while k 2^-23 <= 1 */
    double up = k <= 0x1p23 ? 1.0 + k * 0x1p-22 : exp(k * 0x1p-23) * (1.0 + 0x1p-40);
    *hi = x * up;
    *lo = R <= RFLOOR ? -1.0 : x * (1.0 - k * 0x1p-23);
    if (*lo < 0x1p-126) {
        double e = SR * up * 0x1p-150;
        *lo -= e;
        *hi += e;
    }
}

/* a - v in the exact accumulator (v was added before) */
static void xacc_sub(abl_xacc *a, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    uint32_t ef = (u >> 23) & 0xFFu, man = u & 0x7FFFFFu;
    if (v <= 0.0f)
        return;
    uint64_t m = ef == 0 ? man : (man | 0x800000u);
    unsigned sh = ef == 0 ? 0 : ef - 1;
    unsigned wi = sh / 64, off = sh % 64;
    uint64_t lo = m << off, hi = off ? m >> (64 - off) : 0;
    uint64_t old = a->w[wi];
    a->w[wi] = old - lo;
    uint64_t borrow = hi + (old < lo);
    for (unsigned k = wi + 1; k < 4 && borrow; k++) {
        old = a->w[k];
        a->w[k] = old - borrow;
        borrow = old < borrow;
    }
}

/* How many of the distances a..b (a > b: none) are at least D0. */
static uint64_t past_cut(uint64_t a, uint64_t b, uint64_t D0)
{
    if (a > b || b < D0)
        return 0;
    return b - (a > D0 ? a : D0) + 1;
}

/* How many of the keys a..b (a > b: none) are at most J0 (-1: none). */
static uint64_t below_cut(uint64_t a, uint64_t b, int64_t J0)
{
    if (a > b || J0 < 0 || (uint64_t)J0 < a)
        return 0;
    return ((uint64_t)J0 < b ? (uint64_t)J0 : b) - a + 1;
}

/* ---- relative and symmetric forms ---- */

/* The block sum of the block whose nearest distance is t: RN32(sum of 2^fp32(y(d) - y(t)), d in
 * [t, t + B - 1]), computed for t = 1, 2, ... in order; where y(t) = y(t - 1) (ties of a rounded
 * bias) the window slides: the key at distance t - 1 (exponential 1) leaves, the one at t + B - 1
 * enters. */
static float rel_bs(sp *c, uint64_t t)
{
    const float *y = c->y;
    while (c->bs_done <= t) {
        uint64_t s = c->bs_done, B = c->B;
        if (s > 1 && y[s] == y[s - 1]) {
            xacc_sub(&c->win, 1.0f);
            abl_xacc_add(&c->win, ex2(y[s + B - 1], y[s]));
        } else {
            abl_xacc_clear(&c->win);
            float e = 0.0f;
            for (uint64_t d = s; d < s + B; d++) {
                if (d == s || y[d] != y[d - 1])
                    e = ex2(y[d], y[s]);
                abl_xacc_add(&c->win, e);
            }
        }
        c->bsT[s] = xround(&c->win);
        c->bs_done++;
    }
    return c->bsT[t];
}

typedef struct rgrp {
    uint64_t rho, Q, K;
    int64_t h_u1, h_u2;   /* the previous row's answers (search hints) */
} rgrp;

static uint64_t rel_len(const sp *c, const rgrp *r, uint64_t u)
{
    return u == 0 ? r->rho + 1 : c->B;
}

static float rel_P(const sp *c, uint64_t u, uint64_t d)
{
    return outr(c, ex2(c->y[d], c->y[c->t[u]]));
}

/* Is the weight at distance d (in block u of this residue) zero under threshold A? */
static int rel_zero(sp *c, uint64_t u, uint64_t d, float A)
{
    if (c->stamp[d] == c->gen)
        return c->memo[d] <= A;
    float P = u == 0 || d != c->t[u] ? rel_P(c, u, d) : 1.0f;
    if (u == 0 || P == 0.0f)
        return P <= A;
    double lo, hi;
    chain_bounds(P, c->R[u], c->SR[u], u, &lo, &hi);
    if (hi <= A)
        return 1;
    if (lo > A)
        return 0;
    float a = P;
    for (uint64_t v = u; v >= 1 && a != 0.0f; v--)
        a = mul32(a, c->g[v]);
    c->stamp[d] = c->gen;
    c->memo[d] = a;
    return a <= A;
}

/* A question about this residue under threshold A (u: a block). */
typedef struct rq {
    const rgrp *r;
    uint64_t u;
    float A;
} rq;

static int rel_key_nonzero(sp *c, const void *x, int64_t o)
{
    const rq *q = x;
    return !rel_zero(c, q->u, c->t[q->u] + (uint64_t)o, q->A);
}

static int rel_top_nonzero(sp *c, const void *x, int64_t u)
{
    const rq *q = x;
    return !rel_zero(c, (uint64_t)u, c->t[u], q->A);
}

static int rel_env_above(sp *c, const void *x, int64_t u)
{
    const rq *q = x;
    return c->env[u] > (double)q->A;
}

/* Zeros of block u under threshold A (a suffix of the block by distance). */
static uint64_t rel_cnt(sp *c, const rgrp *r, uint64_t u, float A)
{
    if (c->lob[u] > (double)A)
        return 0;
    uint64_t len = rel_len(c, r, u);
    rq x = {r, u, A};
    return len - (uint64_t)first_false(c, &x, rel_key_nonzero, 0, (int64_t)len, -1);
}

/* Zeros of row q of this residue under threshold A; *first (if given) gets the smallest zero
 * distance, -1 when none. Blocks before u1 hold no zero (envelope of lower bounds), blocks from u2
 * on are entirely zero (their nearest key is), the ones between are counted one by one. */
static uint64_t rel_row(sp *c, rgrp *r, uint64_t q, float A, int64_t *first)
{
    rq x = {r, 0, A};
    int64_t u2 = first_false(c, &x, rel_top_nonzero, 0, (int64_t)q + 1, r->h_u2);
    int64_t u1 = first_false(c, &x, rel_env_above, 0, (int64_t)q + 1, r->h_u1);
    r->h_u1 = u1;
    r->h_u2 = u2;
    uint64_t z = 0, zc = 0;
    int64_t f = -1;
    for (uint64_t u = (uint64_t)u1; u < (uint64_t)u2; u++) {
        uint64_t k = rel_cnt(c, r, u, A), end = c->t[u] + rel_len(c, r, u) - 1;
        if (k > 0 && f < 0)
            f = (int64_t)(end + 1 - k);
        z += k;
        zc += k > 0 ? past_cut(end + 1 - k, end, c->D0) : 0;   /* the block's zeros: its far k keys */
    }
    if ((uint64_t)u2 <= q) {
        z += u2 == 0 ? r->rho + 1 + q * c->B : (q - (uint64_t)u2 + 1) * c->B;
        zc += past_cut(c->t[u2], r->rho + q * c->B, c->D0);   /* t[0] = 0: the whole row */
        if (f < 0)
            f = (int64_t)c->t[u2];
    }
    c->zc = zc;
    if (first != NULL)
        *first = f;
    return z;
}

/* The residue's blocks: nearest distances, factors, bound products, lower bounds and envelope. */
static void rel_setup(sp *c, const rgrp *r)
{
    const float *y = c->y;
    c->t[0] = 0;
    c->R[0] = 1.0;
    c->SR[0] = 0.0;
    c->lob[0] = (double)outr(c, ex2(y[r->rho], y[0]));
    c->env[0] = c->lob[0];
    for (uint64_t u = 1; u <= r->Q; u++) {
        uint64_t t = r->rho + 1 + (u - 1) * c->B;
        c->t[u] = t;
        c->g[u] = ex2(y[t], y[c->t[u - 1]]);
        c->R[u] = rmul(c->R[u - 1], c->g[u]);
        c->SR[u] = c->SR[u - 1] + c->R[u - 1];   /* block u's chain ends with g_(u-1), ..., g_1 */
        float pm = outr(c, ex2(y[t + c->B - 1], y[t]));
        double lo = 0.0, hi;
        if (pm != 0.0f)
            chain_bounds(pm, c->R[u], c->SR[u], u, &lo, &hi);
        c->lob[u] = lo;
        c->env[u] = lo < c->env[u - 1] ? lo : c->env[u - 1];
    }
}

/* f_u(s) = fp32(fp32(s * g_(u+1)) + bs_u): the sum after block u, given it after block u + 1 */
static float rel_f(const sp *c, uint64_t u, float s)
{
    return add32(mul32(s, c->g[u + 1]), c->bs[u]);
}

/* s(q) for q = 0..K into sq, K the first k at which the far blocks stop mattering (or Q). */
static void rel_sums(sp *c, rgrp *r, float bs0)
{
    float HI = (float)(8.0 * (double)c->n);   /* > every partial sum: n exponentials <= 1, inflated
                                                * by < 2n + 2 roundings of 2^-24 (n <= 2^24) */
    c->bs[0] = bs0;
    r->K = r->Q;
    for (uint64_t k = 0; k <= r->Q; k++) {
        if (k > 0)
            c->bs[k] = rel_bs(c, c->t[k]);
        float s = c->bs[k];
        for (uint64_t u = k; u-- > 0;)
            s = rel_f(c, u, s);
        c->sq[k] = s;
        if (k == r->Q)
            break;
        float h = HI;
        for (uint64_t u = k + 1; u-- > 0;)
            h = rel_f(c, u, h);
        if (h == s) {
            r->K = k;
            break;
        }
    }
}

/* The cut of row i (the row's max is y[0], its sum s); 1 when it moved from the previous row's. */
static int rel_cut(sp *c, uint64_t i, float s, int first_of_group)
{
    if (c->cut == NULL)
        return 0;
    uint64_t D0 = c->cut->at(c->cut->ctx, i, c->y[0], s);
    int moved = first_of_group || D0 != c->D0;
    c->D0 = D0;
    return moved;
}

/* Row q > K of residue r: the sum no longer changes, so the row adds block q's zeros to the previous
 * row's (and, with a cut that did not move, those of block q at or beyond it). */
static uint64_t rel_far_row(sp *c, rgrp *r, uint64_t q, float AK, int moved, uint64_t *zc)
{
    uint64_t k = rel_cnt(c, r, q, AK), end = c->t[q] + c->B - 1;
    if (c->cut != NULL && moved) {
        (void)rel_row(c, r, q, AK, NULL);
        *zc = c->zc;
    } else if (c->cut != NULL && k > 0) {
        *zc += past_cut(end + 1 - k, end, c->D0);
    }
    return k;
}

static abl_status rel_head(sp *c, abl_pred_head *out)
{
    uint64_t n = c->n, B = c->B;
    abl_xacc pre;
    abl_xacc_clear(&pre);
    c->bs_done = 1;
    uint64_t matrix = 0, cmatrix = 0;
    for (uint64_t rho = 0; rho < B && rho < n; rho++) {
        rgrp r = {rho, (n - 1 - rho) / B, 0, -1, -1};
        abl_xacc_add(&pre, ex2(c->y[rho], c->y[0]));
        c->gen++;
        rel_setup(c, &r);
        rel_sums(c, &r, xround(&pre));
        uint64_t z = 0, zc = 0;
        float AK = 0.0f;
        for (uint64_t q = 0; q <= r.Q; q++) {
            int last = q * B + rho == n - 1;
            int64_t first = -1;
            int moved = rel_cut(c, q * B + rho, c->sq[q <= r.K ? q : r.K], q == 0);
            if (q <= r.K) {
                float A = astar(c, (float)(1.0 / (double)c->sq[q]));
                AK = A;
                z = rel_row(c, &r, q, A, last ? &first : NULL);
                zc = c->zc;
            } else {
                z += rel_far_row(c, &r, q, AK, moved, &zc);
                if (last)
                    (void)rel_row(c, &r, q, AK, &first);
            }
            matrix += z;
            cmatrix += zc;
            if (last) {
                out->row_zeros = z;
                out->first_blind = first;
                if (c->cut != NULL)
                    c->cut->row_zeros = zc;
            }
        }
    }
    out->matrix_zeros = matrix;
    if (c->cut != NULL)
        c->cut->matrix_zeros = cmatrix;
    return ABL_OK;
}

/* ---- absolute and trailing forms ---- */

typedef struct agrp {
    uint64_t q;       /* the row's last (partial) block */
    float A2;         /* threshold on the accumulators before the last rescale */
    uint64_t k, i;    /* the block or row a question is about */
    float A;          /* the row's threshold */
    int64_t h_k1, h_k2, h_part;   /* the previous row's answers (search hints) */
} agrp;

/* Is the pre-final accumulator of key j (full block k < q) at most a->A2? */
static int abs_zero(sp *c, const agrp *a, uint64_t k, uint64_t j)
{
    if (c->stamp[j] == c->gen)
        return c->memo[j] <= a->A2;
    uint64_t top = k * c->B + c->B - 1, steps = a->q - 1 - k;
    float P = j == top ? 1.0f : outr(c, ex2(c->y[j], c->M[k]));
    if (steps == 0 || P == 0.0f)
        return P <= a->A2;
    double lo, hi;
    chain_bounds(P, c->R[k], c->SR[k], steps, &lo, &hi);
    if (hi <= a->A2)
        return 1;
    if (lo > a->A2)
        return 0;
    float v = P;
    for (uint64_t w = k + 1; w < a->q && v != 0.0f; w++)
        v = mul32(v, c->g[w]);
    c->stamp[j] = c->gen;
    c->memo[j] = v;
    return v <= a->A2;
}

static int abs_key_zero(sp *c, const void *x, int64_t j)
{
    const agrp *a = x;
    return abs_zero(c, a, a->k, (uint64_t)j);
}

static int abs_top_zero(sp *c, const void *x, int64_t k)
{
    const agrp *a = x;
    return abs_zero(c, a, (uint64_t)k, (uint64_t)k * c->B + c->B - 1);
}

static int abs_env_le(sp *c, const void *x, int64_t k)
{
    const agrp *a = x;
    return c->env[k] <= (double)a->A2;
}

static int abs_part_zero(sp *c, const void *x, int64_t j)
{
    const agrp *a = x;
    return outr(c, ex2(c->y[j], c->y[a->i])) <= a->A;
}

/* Zeros of full block k (a prefix of its keys). */
static uint64_t abs_cnt(sp *c, agrp *a, uint64_t k)
{
    if (c->lob[k] > (double)a->A2)
        return 0;
    a->k = k;
    int64_t lo = (int64_t)(k * c->B);
    return (uint64_t)(first_false(c, a, abs_key_zero, lo, lo + (int64_t)c->B, -1) - lo);
}

/* Zeros among the full blocks of a row; *jmax gets the largest zero key (-1: none). Blocks before
 * k2 are entirely zero (their last key is), blocks from k1 on hold none (envelope of lower bounds),
 * the ones between are counted one by one. */
static uint64_t abs_full(sp *c, agrp *a, int64_t *jmax)
{
    uint64_t B = c->B;
    int64_t k2 = first_false(c, a, abs_top_zero, 0, (int64_t)a->q, a->h_k2);
    int64_t k1 = first_false(c, a, abs_env_le, 0, (int64_t)a->q, a->h_k1);
    a->h_k1 = k1;
    a->h_k2 = k2;
    uint64_t z = (uint64_t)k2 * B;
    c->zc = k2 > 0 ? below_cut(0, (uint64_t)k2 * B - 1, c->J0) : 0;
    *jmax = k2 > 0 ? k2 * (int64_t)B - 1 : -1;
    for (uint64_t k = (uint64_t)k2; k < (uint64_t)k1; k++) {
        uint64_t m = abs_cnt(c, a, k);
        if (m > 0) {
            *jmax = (int64_t)(k * B + m) - 1;
            c->zc += below_cut(k * B, k * B + m - 1, c->J0);   /* the block's zeros: its first m keys */
        }
        z += m;
    }
    return z;
}

/* Zeros of the partial block [q B, i] (a prefix: acc = P = out(2^fp32(y_j - y_i))). */
static uint64_t abs_part(sp *c, agrp *a, uint64_t i, float A)
{
    a->i = i;
    a->A = A;
    int64_t lo = (int64_t)(a->q * c->B);
    int64_t x = first_false(c, a, abs_part_zero, lo, (int64_t)i + 1, a->h_part);
    a->h_part = x;
    return (uint64_t)(x - lo);
}

/* The full blocks (shared by every row): maxima, factors, sums, first keys' P, prefix sums. */
static void abs_blocks(sp *c, uint64_t Qm)
{
    const float *y = c->y;
    uint64_t B = c->B;
    c->sq[0] = 0.0f;
    for (uint64_t k = 0; k < Qm; k++) {
        c->M[k] = y[k * B + B - 1];
        c->g[k] = k > 0 ? ex2(c->M[k - 1], c->M[k]) : 1.0f;
        abl_xacc acc;
        abl_xacc_clear(&acc);
        float e = 0.0f;
        for (uint64_t j = k * B; j < k * B + B; j++) {
            if (j == k * B || y[j] != y[j - 1])
                e = ex2(y[j], c->M[k]);
            abl_xacc_add(&acc, e);
        }
        c->bs[k] = xround(&acc);
        c->pmin[k] = outr(c, ex2(y[k * B], c->M[k]));
        c->sq[k + 1] = k > 0 ? add32(mul32(c->sq[k], c->g[k]), c->bs[k]) : c->bs[0];
    }
}

/* For the rows of last block q: each full block's bound product, lower bound and envelope. */
static void abs_group(sp *c, uint64_t q)
{
    c->gen++;
    for (uint64_t k = q; k-- > 0;) {
        c->R[k] = k + 1 == q ? 1.0 : rmul(c->R[k + 1], c->g[k + 1]);
        c->SR[k] = k + 1 == q ? 0.0 : c->SR[k + 1] + c->R[k + 1];   /* after g_(k+1): g_(k+2)... */
        double lo = 0.0, hi;
        if (c->pmin[k] != 0.0f)
            chain_bounds(c->pmin[k], c->R[k], c->SR[k], q - 1 - k, &lo, &hi);
        c->lob[k] = lo;
        c->env[k] = k + 1 == q || lo < c->env[k + 1] ? lo : c->env[k + 1];
    }
}

/* The partial block's exact sum for row i, updated from row i - 1 when y_i = y_(i-1). */
static void abs_psum(const sp *c, uint64_t q, uint64_t i, abl_xacc *part)
{
    const float *y = c->y;
    if (i > q * c->B && y[i] == y[i - 1]) {
        abl_xacc_add(part, 1.0f);
        return;
    }
    abl_xacc_clear(part);
    float e = 0.0f;
    for (uint64_t j = q * c->B; j <= i; j++) {
        if (j == q * c->B || y[j] != y[j - 1])
            e = ex2(y[j], y[i]);
        abl_xacc_add(part, e);
    }
}

/* The cut of row i (its max is y[i], the diagonal key's), as the largest key at or beyond it. */
static void abs_cut(sp *c, uint64_t i, float s)
{
    c->J0 = -1;
    if (c->cut == NULL)
        return;
    c->D0 = c->cut->at(c->cut->ctx, i, c->y[i], s);
    c->J0 = c->D0 <= i ? (int64_t)(i - c->D0) : -1;
}

static abl_status abs_head(sp *c, abl_pred_head *out)
{
    uint64_t n = c->n, B = c->B, Qm = (n - 1) / B, matrix = 0, cmatrix = 0;
    abs_blocks(c, Qm);
    for (uint64_t q = 0; q <= Qm; q++) {
        abs_group(c, q);
        abl_xacc part;
        abl_xacc_clear(&part);
        agrp a = {q, 0.0f, 0, 0, 0.0f, -1, -1, -1};
        uint64_t end = q * B + B < n ? q * B + B : n;
        for (uint64_t i = q * B; i < end; i++) {
            abs_psum(c, q, i, &part);
            float ps = xround(&part);
            float gp = q > 0 ? ex2(c->M[q - 1], c->y[i]) : 1.0f;
            float s = q > 0 ? add32(mul32(c->sq[q], gp), ps) : ps;
            float A = astar(c, (float)(1.0 / (double)s));
            abs_cut(c, i, s);
            uint64_t zp = abs_part(c, &a, i, A), z = zp;
            int64_t jmax = -1;
            c->zc = 0;
            if (q > 0) {
                a.A2 = below(c, A, gp);
                z += abs_full(c, &a, &jmax);
            }
            if (zp > 0)
                jmax = (int64_t)(q * B + zp) - 1;
            c->zc += zp > 0 ? below_cut(q * B, q * B + zp - 1, c->J0) : 0;
            matrix += z;
            cmatrix += c->zc;
            if (i == n - 1) {
                out->row_zeros = z;
                out->first_blind = jmax >= 0 ? (int64_t)(n - 1) - jmax : -1;
                if (c->cut != NULL)
                    c->cut->row_zeros = c->zc;
            }
        }
    }
    out->matrix_zeros = matrix;
    if (c->cut != NULL)
        c->cut->matrix_zeros = cmatrix;
    return ABL_OK;
}

/* ---- entry points ---- */

static void sp_free(sp *c)
{
    free(c->y);
    free(c->memo);
    free(c->stamp);
    free(c->t);
    free(c->g);
    free(c->R);
    free(c->SR);
    free(c->lob);
    free(c->env);
    free(c->bs);
    free(c->sq);
    free(c->pmin);
    free(c->M);
    free(c->bsT);
}

/* y by distance (relative) or key (absolute, trailing); 0 when it is not monotone as expected. */
static int sp_logits(sp *c, const float *T)
{
    const abl_emul *em = c->em;
    int rel = em->form == ABL_BIAS_RELATIVE || em->form == ABL_BIAS_SYMMETRIC;
    for (uint64_t k = 0; k < c->n; k++) {
        float x = T[rel ? k : abl_emul_pos(em, c->n - 1, k)];
        c->y[k] = (float)((double)x * (double)ABL_SDPA_LOG2E);
        if (!isfinite(c->y[k]) || (k > 0 && (rel ? c->y[k] > c->y[k - 1] : c->y[k] < c->y[k - 1])))
            return 0;
    }
    return 1;
}

abl_status abl_predict_sdpa_head(const abl_emul *em, const float *T, uint64_t n, abl_pred_head *out)
{
    return abl_predict_sdpa_head_cut(em, T, n, NULL, out);
}

abl_status abl_predict_sdpa_head_cut(const abl_emul *em, const float *T, uint64_t n, abl_sdpa_cut *cut,
                                     abl_pred_head *out)
{
    memset(out, 0, sizeof *out);
    out->first_blind = -1;
    sp c;
    memset(&c, 0, sizeof c);
    c.em = em;
    c.cut = cut;
    c.n = n;
    c.B = em->block > 0 && (uint64_t)em->block < n ? (uint64_t)em->block : n;
    c.cudnn = em->softmax == ABL_SOFTMAX_SDPA_CUDNN;
    c.wmax = wmax_of(&c);
    uint64_t G = (n - 1) / c.B + 2;
    c.y = malloc(n * sizeof *c.y);
    c.memo = malloc(n * sizeof *c.memo);
    c.stamp = calloc(n, sizeof *c.stamp);
    c.bsT = malloc(n * sizeof *c.bsT);
    c.t = malloc(G * sizeof *c.t);
    c.g = malloc(G * sizeof *c.g);
    c.R = malloc(G * sizeof *c.R);
    c.SR = malloc(G * sizeof *c.SR);
    c.lob = malloc(G * sizeof *c.lob);
    c.env = malloc(G * sizeof *c.env);
    c.bs = malloc(G * sizeof *c.bs);
    c.sq = malloc(G * sizeof *c.sq);
    c.pmin = malloc(G * sizeof *c.pmin);
    c.M = malloc(G * sizeof *c.M);
    abl_status st = ABL_ERR_NO_MEMORY;
    if (c.y && c.memo && c.stamp && c.bsT && c.t && c.g && c.R && c.SR && c.lob && c.env && c.bs && c.sq && c.pmin && c.M) {
        if (!sp_logits(&c, T))
            st = cut != NULL ? ABL_ERR_UNSUPPORTED : abl_predict_sdpa_head_rows(em, T, n, out);
        else if (em->form == ABL_BIAS_RELATIVE || em->form == ABL_BIAS_SYMMETRIC)
            st = rel_head(&c, out);
        else
            st = abs_head(&c, out);
    }
    sp_free(&c);
    return st;
}

abl_status abl_predict_sdpa_head_rows(const abl_emul *em, const float *T, uint64_t n, abl_pred_head *out)
{
    memset(out, 0, sizeof *out);
    out->first_blind = -1;
    float *x = malloc(n * sizeof *x), *acc = malloc(n * sizeof *acc), *w = malloc(n * sizeof *w);
    abl_status st = ABL_ERR_NO_MEMORY;
    if (x != NULL && acc != NULL && w != NULL) {
        for (uint64_t i = 0; i < n; i++) {
            for (uint64_t j = 0; j <= i; j++)
                x[j] = T[abl_emul_pos(em, i, j)];
            uint64_t z = abl_sdpa_row(em, x, i + 1, acc, i == n - 1 ? w : NULL, NULL);
            out->matrix_zeros += z;
            if (i == n - 1) {
                out->row_zeros = z;
                for (uint64_t d = 0; d <= i; d++) {
                    if (w[i - d] == 0.0f) {
                        out->first_blind = (int64_t)d;
                        break;
                    }
                }
            }
        }
        st = ABL_OK;
    }
    free(x);
    free(acc);
    free(w);
    return st;
}
