/* alibi-blind: the zero-logit predictor. It answers what `simulate` answers for zero logits — the
 * first blind distance and the zero counts of every head — from the same rounding model, in
 * O(N log N) per head instead of O(N^2).
 *
 * With zero logits the logit of key j in row i is a table lookup T[pos(i, j)], non-decreasing in j
 * (every rounding is monotone), with the row max on the diagonal. Every later step is monotone too,
 * so the zero weights of a row are its keys j <= J_i, and J_i is found by bisection once the row's
 * normaliser is known:
 *  - flash: the normaliser does not matter (the weight is P, zero iff exp2 flushes or P rounds to 0);
 *  - eager, relative/symmetric form: every row sees the same exponentials e(d), d = i - j, so the
 *    exact row sums are prefix sums, kept exactly in a fixed-point accumulator;
 *  - eager, absolute/trailing form: the exponentials change with the row max. A binary64 recurrence
 *    gives the row sum with a certified error bound; J_i is non-decreasing in the fp32 sum, so the
 *    two ends of the bound are tried, and only when they disagree on J_i is the exact sum formed
 *    (O(i), rare). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "abl/kernel/simulate.h"
#include "kernel/abl_flex.h"
#include "kernel/abl_predict_sdpa.h"
#include "kernel/abl_round.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_ggml.h"
#include "kernel/abl_influence.h"
#include "kernel/abl_simulate_bidir.h"
#include "kernel/abl_triton.h"

typedef struct pctx {
    const abl_sim_setup *s;
    const abl_emul *em;
    uint64_t n;
    float *T;      /* zero-score logit by position */
    float *V;      /* absolute/trailing: the logit of key j (the same in every row) */
    float *ed;     /* relative: e(d) */
    int infl;      /* the pass that finds the influence-zero keys (abl_influence.h) instead of the zero weights */
} pctx;

/* The zero test of the pass on an fp32 weight before its output rounding. */
static int pzero(const pctx *c, float p)
{
    return c->infl ? abl_influence_zero(c->em, p) : abl_emul_zero(c->em, p);
}

/* Largest j in [0, i] with zero(j) (zero(j) true exactly for j <= J), or -1. */
#define BISECT(i, ZERO_J, out)                                                                                    \
    do {                                                                                                          \
        int64_t lo_ = -1, hi_ = (int64_t)(i) + 1;                                                                 \
        while (hi_ - lo_ > 1) {                                                                                   \
            int64_t j = lo_ + (hi_ - lo_) / 2;                                                                    \
            if (ZERO_J)                                                                                           \
                lo_ = j;                                                                                          \
            else                                                                                                  \
                hi_ = j;                                                                                          \
        }                                                                                                         \
        (out) = lo_;                                                                                              \
    } while (0)

static int eager_zero(const pctx *c, float ex, float s, float r)
{
    return ex == 0.0f || pzero(c, abl_emul_eager_p32(c->em, ex, s, r));
}

/* J for row i of an absolute/trailing eager head, given the fp32 row sum s. zero(j) is monotone (true
 * exactly for j <= J), so a search that starts at the previous row's answer `hint` and gallops outwards
 * before bisecting finds the same J as a bisection of [0, i], in O(log |J - hint|) evaluations. */
static int abs_zero(const pctx *c, int64_t j, float m, float s, float r)
{
    return eager_zero(c, abl_emul_eager_exp(c->em, c->V[j], m), s, r);
}

static int64_t abs_J(const pctx *c, uint64_t i, float m, float s, int64_t hint)
{
    float r = (float)(1.0 / (double)s);
    int64_t top = (int64_t)i;
    if (hint > top)
        hint = top;
    int64_t lo, hi;   /* invariant: zero(lo) or lo = -1; !zero(hi) or hi = i + 1 */
    if (hint < 0 || abs_zero(c, hint, m, s, r)) {
        lo = hint < 0 ? -1 : hint;
        int64_t step = 1;
        for (;;) {
            int64_t t = lo + step;
            if (t > top) {
                hi = top + 1;
                break;
            }
            if (!abs_zero(c, t, m, s, r)) {
                hi = t;
                break;
            }
            lo = t;
            step *= 2;
        }
    } else {
        hi = hint;
        int64_t step = 1;
        for (;;) {
            int64_t t = hi - step;
            if (t < 0) {
                lo = -1;
                break;
            }
            if (abs_zero(c, t, m, s, r)) {
                lo = t;
                break;
            }
            hi = t;
            step *= 2;
        }
    }
    while (hi - lo > 1) {
        int64_t j = lo + (hi - lo) / 2;
        if (abs_zero(c, j, m, s, r))
            lo = j;
        else
            hi = j;
    }
    return lo;
}

/* Largest j in [0, i] with ZERO_J (monotone: true exactly for j <= J), or -1, searched from `hint`
 * outwards (galloping) and then by bisection: the same answer as BISECT. */
#define GALLOP(i, hint, ZERO_J, out)                                                                              \
    do {                                                                                                          \
        int64_t top_ = (int64_t)(i), h_ = (hint) > top_ ? top_ : (hint), lo_, hi_, st_ = 1, j;                    \
        if (h_ < 0) {                                                                                             \
            lo_ = -1;                                                                                             \
        } else {                                                                                                  \
            j = h_;                                                                                               \
            lo_ = (ZERO_J) ? h_ : -2;                                                                             \
        }                                                                                                         \
        if (lo_ != -2) {                                                                                          \
            for (;;) {                                                                                            \
                j = lo_ + st_;                                                                                    \
                if (j > top_) {                                                                                   \
                    hi_ = top_ + 1;                                                                               \
                    break;                                                                                        \
                }                                                                                                 \
                if (!(ZERO_J)) {                                                                                  \
                    hi_ = j;                                                                                      \
                    break;                                                                                        \
                }                                                                                                 \
                lo_ = j;                                                                                          \
                st_ *= 2;                                                                                         \
            }                                                                                                     \
        } else {                                                                                                  \
            hi_ = h_;                                                                                             \
            for (;;) {                                                                                            \
                j = hi_ - st_;                                                                                    \
                if (j < 0) {                                                                                      \
                    lo_ = -1;                                                                                     \
                    break;                                                                                        \
                }                                                                                                 \
                if (ZERO_J) {                                                                                     \
                    lo_ = j;                                                                                      \
                    break;                                                                                        \
                }                                                                                                 \
                hi_ = j;                                                                                          \
                st_ *= 2;                                                                                         \
            }                                                                                                     \
        }                                                                                                         \
        while (hi_ - lo_ > 1) {                                                                                   \
            j = lo_ + (hi_ - lo_) / 2;                                                                            \
            if (ZERO_J)                                                                                           \
                lo_ = j;                                                                                          \
            else                                                                                                  \
                hi_ = j;                                                                                          \
        }                                                                                                         \
        (out) = lo_;                                                                                              \
    } while (0)

/* ulp of a logit-dtype value (0 counts as the smallest subnormal). A value at or above the format's
 * smallest normal is a normal binary32 (every format here has emin >= -126), so its exponent is read
 * from the bits; the ulp 2^(e - p + 1) >= 2^-149 is a normal binary64 built from its exponent. */
static double logit_ulp(const abl_fp *f, float v)
{
    float a = fabsf(v);
    if ((double)a < f->min_normal)
        return f->min_sub;
    uint32_t u;
    memcpy(&u, &a, sizeof u);
    int e = (int)(u >> 23) - 127;
    uint64_t b = (uint64_t)(e - f->p + 1 + 1023) << 52;
    double q;
    memcpy(&q, &b, sizeof q);
    return q;
}

/* fp32(v - m) is exact when both lie on the grid of the finer ulp and the difference has at most
 * 24 significant bits of it; otherwise "maybe inexact" (conservative). */
static int sub_exact(const abl_fp *f, float v, float m)
{
    if (m == 0.0f)
        return 1;   /* v - 0 = v (the same for every key of the row: the prefix stays a prefix) */
    double q = fmin(logit_ulp(f, v), logit_ulp(f, m));
    return fabs((double)v - (double)m) <= 0x1p24 * q;
}

/* One step of the bound B of sum_j exp(y_j) |y_j| (y_j = V[j] - V[i] <= 0) from row i-1 to row i,
 * when the max moves by delta = V[i-1] - V[i] in [-60, 0): every old term's exponential is multiplied
 * by w = exp(delta) and its |y| grows by |delta|, so B_i = w (B_{i-1} + |delta| A_{i-1}) (the new
 * term has y = 0). Ahi >= A_{i-1} is the certified upper bound of the old sum. B only bounds an error
 * term, so each step is inflated by (1 + 2^-44), far more than the binary64 roundings of exp (1 ulp,
 * its argument within 2^-53 |delta| <= 2^-47), the product, the sum (2^-53 each); over 2^24 rows
 * that inflation stays below 2^-19. Terms that fell below e^-60 are dropped by the caller, who adds
 * their total ((i + 1) 60 e^-60 < (i + 1) 10^-24) back. */
static double abs_B_step(double B, double Ahi, double w, double delta)
{
    return w * (B + -delta * Ahi) * (1.0 + 0x1p-44);
}

/* What a head's rows add up to: the zero weights of the matrix, the last row's J (its zero keys are
 * j <= J; -1: none) and how many rows needed the exact sum. */
typedef struct ptally {
    uint64_t matrix, exact_rows;
    int64_t Jlast;
} ptally;

static void tally_row(ptally *t, int64_t J)
{
    t->matrix += (uint64_t)(J + 1);
    t->Jlast = J;
}

/* Flash: a weight is zero iff exp2 of its logit against the (scaled) row max flushes; no sum involved. */
static void predict_flash(const pctx *c, ptally *t)
{
    const abl_emul *em = c->em;
    for (uint64_t i = 0; i < c->n; i++) {
        float m = c->T[abl_emul_pos(em, i, i)];
        float ms = abl_emul_max_scaled(em, m);
        int64_t J;
        GALLOP(i, t->Jlast, pzero(c, abl_emul_flash_exp(em, c->T[abl_emul_pos(em, i, (uint64_t)j)], ms)), J);
        tally_row(t, J);
    }
}

/* Eager, relative/symmetric form: every row sees the same e(d), so row i's exact sum is the prefix
 * sum of e(0..i), kept exactly in a fixed-point accumulator. */
static void predict_relative(const pctx *c, ptally *t)
{
    const abl_emul *em = c->em;
    float m = c->T[0];
    for (uint64_t d = 0; d < c->n; d++)
        c->ed[d] = abl_emul_eager_exp(em, c->T[d], m);
    abl_xacc acc;
    abl_xacc_clear(&acc);
    for (uint64_t i = 0; i < c->n; i++) {
        abl_xacc_add(&acc, c->ed[i]);          /* row i sums e(0..i) */
        float s = abl_xacc_round32(&acc);
        float r = (float)(1.0 / (double)s);
        int64_t J;
        GALLOP(i, t->Jlast, eager_zero(c, c->ed[i - (uint64_t)j], s, r), J);
        tally_row(t, J);
    }
}

/* The binary64 recurrence of an absolute/trailing eager head's row sum and its error terms. */
typedef struct abs_sum {
    double A, t, a;   /* A ~ sum_j exp(V[j] - V[i]); rel. error t, abs. error a */
    double B;   /* an upper bound of sum_{j: V[j] - V[i] > -60} exp(y_j) |y_j|, y_j = V[j] - V[i] */
    int64_t Jx_last;  /* the previous row's prefix of maybe-inexact fp32 subtractions */
} abs_sum;

/* From row i - 1 to row i (i > 0, max m = V[i]): old terms scale by exp(V[i-1] - m) and the new term
 * adds 1; terms that fall below e^-60 (e^-700) are kept only as an absolute error. */
static void abs_sum_next(abs_sum *x, float prev, float m, uint64_t i)
{
    if (m == prev) {
        x->A += 1.0;
        x->t = (1.0 + x->t) * (1.0 + 0x1p-52) - 1.0;
        return;
    }
    double delta = (double)prev - (double)m;   /* < 0 */
    if (delta < -700.0) {
        /* older terms are below e^-700 each (binary64 exp would lose them) */
        x->a = (double)(i + 1) * 0x1p-1000;
        x->A = 1.0;
        x->t = 0.0;
        x->B = 0.0;
    } else if (delta < -60.0) {
        /* older terms are below e^-60 each: keep them as an absolute error only */
        x->a = ((x->A * (1.0 + 2.0 * x->t)) + x->a) * exp(delta) * (1.0 + 0x1p-40);
        x->A = 1.0;
        x->t = 0.0;
        x->B = 0.0;
    } else {
        double w = exp(delta);
        x->B = abs_B_step(x->B, x->A * (1.0 + 2.0 * x->t) + x->a, w, delta);
        x->A = x->A * w + 1.0;
        /* exp within 1 ulp, argument within 2^-53|delta|, *, + each 2^-53: bounded generously */
        x->t = (1.0 + x->t) * (1.0 + 0x1p-48 + 0x1p-51 * fabs(delta)) - 1.0;
        x->a = x->a * w * (1.0 + 0x1p-40);
    }
}

/* The error of row i's fp32 subtractions V[j] - m: only a prefix j <= Jx may be inexact (relative
 * 2^-23 each); bounded by its largest term or, tighter when they decay geometrically, through B. */
static double abs_sub_error(const pctx *c, abs_sum *x, uint64_t i, float m)
{
    int64_t Jx;
    GALLOP(i, x->Jx_last, !sub_exact(&c->em->logit, c->V[j], m), Jx);
    x->Jx_last = Jx;
    double xsub = 0.0;
    if (Jx >= 0) {
        double dl = (double)c->V[Jx] - (double)m;   /* the largest such exponent */
        if (dl > -104.5) {
            double g = dl <= -1.0 ? exp(dl) * -dl : exp(-1.0);
            xsub = (double)(Jx + 1) * g * 0x1p-23;
            /* the same terms bounded through B (much tighter when |m| is small and the
             * inexact terms are many but decay geometrically) */
            xsub = fmin(xsub, (x->B + (double)(i + 1) * 1e-24) * 0x1p-23);
        }
    }
    return xsub;
}

/* J of row i from the certified bounds [tl, th] of its sum: the exact sum rounds (RN is monotone) to
 * an fp32 value in [slo, shi], and J(s) is non-decreasing in s (fp32(1/s) and every later rounding are
 * monotone), so when J(slo) = J(shi) every candidate in between gives the same J; otherwise (rare) the
 * exact sum is formed, O(i). */
static int64_t abs_row_J(const pctx *c, uint64_t i, float m, double tl, double th, ptally *t)
{
    float slo = (float)tl, shi = (float)th;
    int64_t J = -1;
    int decided = tl > 0.0 && isfinite(th);
    if (decided) {
        J = abs_J(c, i, m, slo, t->Jlast);
        if (shi != slo && J < (int64_t)i && abs_zero(c, J + 1, m, shi, (float)(1.0 / (double)shi)))
            decided = 0;   /* zero(J) holds for shi too; J(shi) > J(slo) */
    }
    if (!decided) {
        abl_xacc acc;
        abl_xacc_clear(&acc);
        for (uint64_t j = 0; j <= i; j++)
            abl_xacc_add(&acc, abl_emul_eager_exp(c->em, c->V[j], m));
        J = abs_J(c, i, m, abl_xacc_round32(&acc), t->Jlast);
        t->exact_rows++;
    }
    return J;
}

/* Eager, absolute/trailing form: the exponentials change with the row max, so the row sum comes from a
 * binary64 recurrence with a certified error bound (abs_sum), and J from its two ends (abs_row_J). */
static void predict_absolute(const pctx *c, ptally *t)
{
    uint64_t n = c->n;
    for (uint64_t j = 0; j < n; j++)
        c->V[j] = c->T[abl_emul_pos(c->em, n - 1, j)];   /* pos(i, j) does not depend on i here */
    abs_sum x = {0.0, 0.0, 0.0, 0.0, -1};
    for (uint64_t i = 0; i < n; i++) {
        float m = c->V[i];
        if (i == 0)
            x.A = 1.0;
        else
            abs_sum_next(&x, c->V[i - 1], m, i);
        double absb = (double)(i + 1) * 0x1p-149 + abs_sub_error(c, &x, i, m);
        double tl = ((x.A * (1.0 - 2.0 * x.t) - x.a) * (1.0 - 0x1p-24) - absb) * (1.0 - 0x1p-50);
        double th = ((x.A * (1.0 + 2.0 * x.t) + x.a) * (1.0 + 0x1p-24) + absb) * (1.0 + 0x1p-50);
        tally_row(t, abs_row_J(c, i, m, tl, th, t));
    }
}

/* One pass over the head's rows (c->infl: weights or influence) into t. */
static void predict_pass(const pctx *c, ptally *t)
{
    const abl_emul *em = c->em;
    if (em->softmax == ABL_SOFTMAX_FLASH)
        predict_flash(c, t);
    else if (em->form == ABL_BIAS_RELATIVE || em->form == ABL_BIAS_SYMMETRIC)
        predict_relative(c, t);
    else
        predict_absolute(c, t);
}

static abl_status predict_head(pctx *c, int h, abl_pred_head *out)
{
    const abl_emul *em = c->em;
    const abl_emul_head *eh = &c->s->hd[h];
    uint64_t n = c->n;
    for (uint64_t pos = 0; pos < n; pos++)
        c->T[pos] = abl_emul_logit(em, eh, 0.0f, pos, abl_emul_bias_mag(em, eh, pos));
    if (em->softmax == ABL_SOFTMAX_SDPA_EFFICIENT || em->softmax == ABL_SOFTMAX_SDPA_CUDNN ||
        em->softmax == ABL_SOFTMAX_FLEX) {
        abl_status st = em->softmax == ABL_SOFTMAX_FLEX
                            ? abl_predict_flex_head(em, c->T, n, out)    /* abl_flex.c */
                            : abl_predict_sdpa_head(em, c->T, n, out);   /* abl_predict_sdpa.c */
        out->first_influence_zero = out->first_blind;   /* the weight is the coefficient of V here */
        out->row_influence_zeros = out->row_zeros;
        out->matrix_influence_zeros = out->matrix_zeros;
        return st;
    }
    ptally t = {0, 0, -1}, u = {0, 0, -1};
    c->infl = 0;
    predict_pass(c, &t);
    if (em->infl_active) {   /* zero(j) for the influence is monotone too: a second pass */
        c->infl = 1;
        predict_pass(c, &u);
    } else {
        u = t;
    }
    out->matrix_zeros = t.matrix;
    out->row_zeros = (uint64_t)(t.Jlast + 1);
    out->first_blind = t.Jlast >= 0 ? (int64_t)(n - 1) - t.Jlast : -1;
    out->exact_rows = t.exact_rows + (em->infl_active ? u.exact_rows : 0);
    out->matrix_influence_zeros = u.matrix;
    out->row_influence_zeros = (uint64_t)(u.Jlast + 1);
    out->first_influence_zero = u.Jlast >= 0 ? (int64_t)(n - 1) - u.Jlast : -1;
    return ABL_OK;
}

typedef struct pteam {
    const abl_sim_setup *s;
    abl_prediction *out;
    atomic_int next;
    atomic_int failed;
} pteam;

static void pworker(void *arg)
{
    pteam *t = arg;
    uint64_t n = t->s->em.n;
    const abl_emul *em = &t->s->em;
    int eager = em->softmax == ABL_SOFTMAX_EAGER;
    int rel = em->form == ABL_BIAS_RELATIVE || em->form == ABL_BIAS_SYMMETRIC;
    pctx c = {t->s, em, n, malloc(n * sizeof(float)), eager && !rel ? malloc(n * sizeof(float)) : NULL,
              eager && rel ? malloc(n * sizeof(float)) : NULL, 0};
    if (c.T == NULL || (eager && !rel && c.V == NULL) || (eager && rel && c.ed == NULL))
        atomic_store(&t->failed, (int)ABL_ERR_NO_MEMORY);
    for (;;) {
        int h = atomic_fetch_add(&t->next, 1);
        if (h >= t->s->heads || atomic_load(&t->failed) != 0)
            break;
        abl_status hs = predict_head(&c, h, &t->out->results[h]);
        if (hs != ABL_OK)
            atomic_store(&t->failed, (int)hs);
    }
    free(c.T);
    free(c.V);
    free(c.ed);
}

abl_status abl_predict_run(const abl_simulate_config *cfg, abl_prediction *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_sim_setup s;
    abl_status st = abl_sim_setup_init(cfg, &s);
    if (st != ABL_OK)
        return st;
    /* ggml's flash kernels (llamacpp-cpu-fa): causal rows in abl_ggml_fa_predict.c, bidirectional layers in
     * abl_ggml_fa_bidir.c */
    if (s.gaussian ||
        (s.em.softmax == ABL_SOFTMAX_EAGER && (s.em.sum != ABL_SUM_EXACT || s.em.exp != ABL_EXP_CORRECT))) {
        abl_sim_setup_free(&s);
        return ABL_ERR_UNSUPPORTED;
    }
    if (cfg->attention == ABL_ATTENTION_BIDIRECTIONAL) {
        st = abl_predict_bidir_run(&s, out);   /* both horizons, the full N x N matrix: abl_simulate_bidir.c */
        abl_sim_setup_free(&s);
        return st;
    }
    /* The logit table must be finite (as simulate requires). */
    out->heads = s.heads;
    out->results = calloc((size_t)s.heads, sizeof *out->results);
    if (out->results == NULL) {
        abl_sim_setup_free(&s);
        return ABL_ERR_NO_MEMORY;
    }
    for (int h = 0; h < s.heads && st == ABL_OK; h++) {
        uint64_t last = s.em.n - 1;
        float big = abl_emul_logit(&s.em, &s.hd[h], 0.0f, last, abl_emul_bias_mag(&s.em, &s.hd[h], last));
        if (!isfinite(big) && !abl_emul_inf_ok(&s.em))   /* ggml: -inf is a key the fp16 mask hides */
            st = ABL_ERR_UNSUPPORTED;
    }
    for (int h = 0; st == ABL_OK && s.em.softmax == ABL_SOFTMAX_GGML && h < s.heads; h++)
        st = abl_ggml_predict_head(&s, h, &out->results[h]);   /* abl_ggml.c */
    for (int h = 0; st == ABL_OK && s.em.softmax == ABL_SOFTMAX_GGML_FLASH && h < s.heads; h++)
        st = abl_ggml_fa_predict_head(&s, h, &out->results[h]);   /* abl_ggml_fa_predict.c */
    for (int h = 0; st == ABL_OK && s.em.softmax == ABL_SOFTMAX_TRITON_LSE && h < s.heads; h++)
        st = abl_triton_predict_head(&s, h, 0, &out->results[h]);   /* abl_triton_predict.c */
    for (int h = 0; st == ABL_OK && abl_emul_engine(&s.em) && h < s.heads; h++) {
        abl_pred_head *r = &out->results[h];
        st = abl_engine_predict_head(&s, h, r);   /* abl_engines.c */
        if (s.em.infl_active)   /* ggml-cuda: P.V is cuBLAS's, the predictor counts the influence itself */
            continue;
        r->first_influence_zero = r->first_blind; /* the engines' weight is the coefficient of V */
        r->row_influence_zeros = r->row_zeros;
        r->matrix_influence_zeros = r->matrix_zeros;
    }
    if (st == ABL_OK && !abl_emul_ggml(&s.em) && s.em.softmax != ABL_SOFTMAX_TRITON_LSE &&
        !abl_emul_engine(&s.em)) {
        pteam t;
        t.s = &s;
        t.out = out;
        atomic_init(&t.next, 0);
        atomic_init(&t.failed, 0);
        int nt = abl_sim_threads(cfg->threads);
        if (nt > s.heads)
            nt = s.heads;
        abl_sim_team_run(nt, pworker, &t, 0, NULL, NULL);
        st = (abl_status)atomic_load(&t.failed);
    }
    int differs = s.em.infl_active;
    abl_sim_setup_free(&s);
    if (st != ABL_OK) {
        abl_prediction_free(out);
        return st;
    }
    for (int h = 0; h < out->heads; h++) {
        out->row_zeros += out->results[h].row_zeros;
        out->matrix_zeros += out->results[h].matrix_zeros;
        out->exact_rows += out->results[h].exact_rows;
        out->row_influence_zeros += out->results[h].row_influence_zeros;
        out->matrix_influence_zeros += out->results[h].matrix_influence_zeros;
    }
    out->influence_differs = differs;
    return ABL_OK;
}

void abl_prediction_free(abl_prediction *p)
{
    if (p == NULL)
        return;
    free(p->results);
    p->results = NULL;
    p->heads = 0;
}
