/* alibi-blind: the zero-logit predictor of FlashAttention-2's backward (the flash2 preset's backward half,
 * kind flash; modelled from source, not measured: docs/pipelines.md §9). It answers what the row emulation
 * (abl_backward_flash.c, abl_flash_backward_row) answers for zero logits at unit upstream 2^j.
 *
 * With zero logits each row's logits grow along the keys (checked), and dS of key j depends on the row only
 * through lse2 = fp32(lse log2 e): dS = 0 iff y = fma(x_j, scale_softmax_log2, -lse2) <= y0, the largest
 * binary32 whose dS is 0 (abl_flash_ds_zero_y: one bisection over the ordered binary32 values). So a row's zero-dS
 * keys are a prefix, its length J a non-decreasing function of lse2, and lse2 a non-decreasing function of
 * the row's fp32 sum F (__logf, the fma and the product are monotone).
 *
 * Every row of a head reads a range [a, b] of the last row's logits X (ascending), its max X[b] on the
 * diagonal. F is the kernel's four-lane fp32 sum of t_j = ex2(fl(fma(x_j, c, -ms))), ms = fp32(X[b] c).
 * Its exact counterpart R = sum_j 2^(c x_j - ms) comes in O(1) from binary64 prefix sums of X, and F is
 * bounded around R (row_bounds): each t_j is within 90 u of 2^(c x_j - ms) (the fma rounds |y| <= 127 to
 * 2^-24 |y|, ex2 rounds once: u = 2^-24); a lane's fp32 additions err by at most min(u L, t_j) each (RN:
 * never more than the addend, nor than half an ulp of a partial sum <= L, L bounding F: Higham's gamma);
 * the three adds of the quad reduction by u L each; flushed keys (y < -126) by 2^-125 each. When both ends
 * of [F_lo, F_hi] give the same J, that is the row's J; otherwise (a few rows in a hundred on the smallest
 * slopes) the row's keys are summed as the kernel sums them (abl_flash_lse_from). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "abl_backward_flash.h"
#include "abl_cuda_math.h"

#define U32 0x1p-24                 /* binary32's unit roundoff */
#define LOG2E_F 0x1.715476p+0f      /* float(M_LOG2E), as the backward kernel multiplies the lse */
#define MAX_BOUND_N (1u << 22)      /* past it the binary64 prefix sums' slack is not argued: every row exact */

typedef struct fhead {
    const abl_emul *e;
    uint64_t n;
    int rel;           /* relative/symmetric: row i reads X[n-1-i .. n-1]; else X[0 .. i] */
    float *X;          /* the last row's logits, ascending */
    double *S;         /* rel: S[k] = sum_{q >= k} 2^(c (X_q - X_{n-1})); else S[k] = sum_{q <= k} 2^(c (X_q - X_k)) */
    float yzero;       /* dS = 0 iff fma(x, c, -lse2) <= yzero (abl_flash_ds_zero_y); +inf: always */
    double up, eps;    /* 2^j; the binary64 sums' relative slack */
    uint64_t exact_rows;
    uint64_t hint;     /* the previous row's J */
} fhead;

static double cx(const fhead *h, uint64_t k)
{
    return (double)h->X[k] * (double)h->e->c_log2;   /* exact: two 24-bit significands */
}

/* The prefix (suffix, rel) sums of the head's exponentials, normalised so that none overflows: a term
 * more than 2^-1100 below the top is below binary64's range and is 0 here (its share, below 2^-1000 of the
 * row, sits far inside the slack). */
static void head_sums(fhead *h)
{
    uint64_t n = h->n;
    if (h->rel) {
        double top = cx(h, n - 1);
        h->S[n - 1] = 1.0;
        for (uint64_t k = n - 1; k-- > 0;)
            h->S[k] = h->S[k + 1] + exp2(fmax(cx(h, k) - top, -1100.0));
    } else {
        h->S[0] = 1.0;
        for (uint64_t k = 1; k < n; k++)
            h->S[k] = h->S[k - 1] * exp2(fmax(cx(h, k - 1) - cx(h, k), -1100.0)) + 1.0;
    }
}

/* sum_{q in [lo, hi]} 2^(c X_q - ms) for a row [a, b]: lo = a in both forms (abs: a = 0), hi <= b. */
static double range_sum(const fhead *h, uint64_t lo, uint64_t hi, float ms)
{
    if (!h->rel)
        return exp2(cx(h, hi) - ms) * h->S[hi];
    double above = hi + 1 < h->n ? h->S[hi + 1] : 0.0;
    return exp2(cx(h, h->n - 1) - ms) * (h->S[lo] - above);
}

/* The first k in [a, b + 1] with c X_k - ms > thr (X ascending). */
static uint64_t first_above(const fhead *h, uint64_t a, uint64_t b, float ms, double thr)
{
    uint64_t lo = a, hi = b + 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cx(h, mid) - ms > thr)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Certified bounds of the kernel's fp32 row sum F for the row [a, b] (the file comment's argument). */
static void row_bounds(const fhead *h, uint64_t a, uint64_t b, float ms, double *flo, double *fhi)
{
    double cnt = (double)(b - a + 1), gam = (cnt + 3.0) * U32 / (1.0 - (cnt + 3.0) * U32);
    double R = range_sum(h, a, b, ms);
    double thi = R * (1.0 + h->eps) * (1.0 + 91.0 * U32), tlo = R * (1.0 - h->eps) * (1.0 - 91.0 * U32);
    double L = thi * (1.0 + gam);                 /* every partial sum and F itself are <= L */
    uint64_t k = first_above(h, a, b, ms, log2(U32 * L));   /* keys k.. b: each add errs by <= u L */
    double tail = k > a ? range_sum(h, a, k - 1, ms) : 0.0;
    if (h->rel)                                   /* a difference of suffix sums: its rounding, absolutely */
        tail += 4.0 * h->eps * R;
    double err = U32 * L * (double)(b + 1 - k) + tail * (1.0 + h->eps) * (1.0 + 91.0 * U32) + 3.0 * U32 * L;
    *flo = tlo - err - cnt * 0x1p-125;
    *fhi = thi + err;
}

/* The binary32 lse2 of a row sum F: fp32(fma(X[b], scale, __logf(F)) float(log2 e)). */
static float lse2_of(const abl_emul *e, float xmax, float F)
{
    return abl_cuda_fmul(abl_flash_lse_of(e, xmax, F), LOG2E_F);
}

/* Key j of the row starting at X[a] keeps a non-zero dS at lse2. */
static int keeps(const fhead *h, uint64_t a, uint64_t j, float lse2)
{
    return abl_cuda_fmaf(h->X[a + j], h->e->c_log2, -lse2) > h->yzero;
}

/* J: the zero-dS prefix of the row reading X[a .. a + count - 1] at lse2 (keeps() is false then true
 * along j), searched from the previous row's J (rows move it by a key or so): gallop, then bisect. */
static uint64_t row_cut(const fhead *h, uint64_t a, uint64_t count, float lse2, uint64_t hint)
{
    uint64_t lo, hi, step = 1;   /* J in [lo, hi] */
    if (hint >= count || keeps(h, a, hint, lse2)) {
        hi = hint < count ? hint : count;
        for (;;) {
            lo = hi > step ? hi - step : 0;
            if (lo == 0 || !keeps(h, a, lo, lse2))
                break;
            hi = lo;
            step *= 2;
        }
        if (lo == 0 && keeps(h, a, 0, lse2))
            return 0;
        lo++;   /* keeps(lo - 1) is false */
    } else {
        lo = hint + 1;
        for (;;) {
            hi = lo + step - 1 < count ? lo + step - 1 : count;
            if (hi == count || keeps(h, a, hi, lse2))
                break;
            lo = hi + 1;
            step *= 2;
        }
    }
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (keeps(h, a, mid, lse2))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Lane q's next addend p leaves it unchanged: p < half an ulp of the (non-zero, normal) lane. */
static int lane_still(float lane, float p)
{
    return lane >= 0x1p-126f && p < ldexpf(1.0f, ilogbf(lane) - 24);
}

/* The row's exact lse2 (abl_flash_lse_from's sum for a row that grows along its keys): the blocks from
 * the diagonal's down, each lane adding its columns in the kernel's order. Every later key's exp2 is at
 * most the block's top key's, so once that is below half an ulp of every lane, no lane changes again
 * (round to nearest) and the sum is final: a row costs the keys above u times its sum, not all of them. */
static float exact_lse2(fhead *h, uint64_t a, uint64_t count, float ms)
{
    const abl_emul *e = h->e;
    const float *x = h->X + a;
    uint64_t i = count - 1, B = e->block > 0 ? (uint64_t)e->block : count;
    float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint64_t top = i / B + 1; top-- > 0;) {
        uint64_t lo = top * B, hi = lo + B - 1 < i ? lo + B - 1 : i;
        float pmax = abl_emul_flash_exp(e, x[hi], ms);
        if (lane_still(lane[0], pmax) && lane_still(lane[1], pmax) && lane_still(lane[2], pmax) &&
            lane_still(lane[3], pmax))
            break;
        for (uint64_t j = lo; j <= hi; j++)
            lane[((j - lo) % 8) / 2] = abl_cuda_fadd(lane[((j - lo) % 8) / 2], abl_emul_flash_exp(e, x[j], ms));
    }
    h->exact_rows++;
    float sum = abl_cuda_fadd(abl_cuda_fadd(lane[0], lane[2]), abl_cuda_fadd(lane[1], lane[3]));
    return abl_cuda_fmul(abl_flash_lse_of(e, x[i], sum), LOG2E_F);
}

/* Row i's zero-dS count J. */
static uint64_t row_J(fhead *h, uint64_t i)
{
    uint64_t a = h->rel ? h->n - 1 - i : 0, b = h->rel ? h->n - 1 : i, count = i + 1;
    float xmax = h->X[b], ms = abl_emul_max_scaled(h->e, xmax);
    if (h->yzero == INFINITY)
        return count;
    if (h->n <= MAX_BOUND_N) {
        double flo, fhi;
        row_bounds(h, a, b, ms, &flo, &fhi);
        float lo = (float)flo, hi = (float)fhi;   /* outward to binary32 */
        if ((double)lo > flo)
            lo = nextafterf(lo, 0.0f);
        if ((double)hi < fhi)
            hi = nextafterf(hi, INFINITY);
        if (lo >= 0x1p-126f && isfinite(hi)) {
            /* J(hi) >= J(lo): equal when key J(lo) still keeps its dS at lse2(hi) */
            uint64_t jlo = row_cut(h, a, count, lse2_of(h->e, xmax, lo), h->hint);
            if (jlo == count || keeps(h, a, jlo, lse2_of(h->e, xmax, hi)))
                return h->hint = jlo;
        }
    }
    return h->hint = row_cut(h, a, count, exact_lse2(h, a, count, ms), h->hint);
}

static abl_status fhead_init(fhead *h, const abl_emul *e, double up)
{
    uint64_t n = e->n;
    *h = (fhead){e, n, e->form == ABL_BIAS_RELATIVE || e->form == ABL_BIAS_SYMMETRIC, NULL, NULL,
                 abl_flash_ds_zero_y(e, up), up, (8.0 * (double)n + 4096.0) * 0x1p-53, 0, 0};
    h->X = malloc((n > 0 ? n : 1) * sizeof *h->X);
    h->S = malloc((n > 0 ? n : 1) * sizeof *h->S);
    return h->X != NULL && h->S != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
}

static void fhead_free(fhead *h)
{
    free(h->X);
    free(h->S);
}

/* The head whose last row's logits h->X holds, made ready for its rows: checked, its sums built. */
static abl_status head_rows_ready(fhead *h, abl_bwd_head *o)
{
    for (uint64_t k = 0; k < h->n; k++)
        if (!isfinite(h->X[k]) || (k > 0 && h->X[k] < h->X[k - 1]))
            return ABL_ERR_UNSUPPORTED;   /* every row reads a range of X in order: it must grow */
    head_sums(h);
    h->hint = 0;
    memset(o, 0, sizeof *o);
    o->fwd_first_blind = -1;   /* not predicted */
    return ABL_OK;
}

/* Every row of the head: the zero-dS counts. */
static abl_status head_rows(fhead *h, abl_bwd_head *o)
{
    abl_status st = head_rows_ready(h, o);
    if (st != ABL_OK)
        return st;
    for (uint64_t i = 0; i < h->n; i++) {
        uint64_t J = row_J(h, i);
        o->matrix_zeros += J;
        if (i == h->n - 1) {
            o->row_zeros = J;
            o->first_blind = J > 0 ? (int64_t)(h->n - J) : -1;   /* key J - 1 is the nearest zero */
        }
    }
    return ABL_OK;
}

abl_status abl_flash_backward_predict_table(const abl_emul *e, const float *X, double up, abl_bwd_head *o,
                                            uint64_t *open_rows)
{
    fhead h;
    abl_status st = fhead_init(&h, e, up);
    if (st == ABL_OK) {
        memcpy(h.X, X, e->n * sizeof *X);
        st = head_rows(&h, o);
    }
    if (open_rows != NULL)
        *open_rows = h.exact_rows;
    fhead_free(&h);
    return st;
}

/* The last row's logit of every key of head hh. */
static void head_table(const abl_sim_setup *s, int hh, float *X)
{
    const abl_emul *e = &s->em;
    for (uint64_t k = 0; k < e->n; k++) {
        uint64_t pos = abl_emul_pos(e, e->n - 1, k);
        X[k] = abl_emul_logit(e, &s->hd[hh], 0.0f, pos, abl_emul_bias_mag(e, &s->hd[hh], pos));
    }
}

/* Zero logits, causal, one split (the emulation's own setup decides). */
static abl_status predict_setup(const abl_simulate_config *cfg, abl_sim_setup *s)
{
    if (cfg->attention != ABL_ATTENTION_CAUSAL || cfg->pipeline.softmax != ABL_SOFTMAX_FLASH)
        return ABL_ERR_UNSUPPORTED;
    abl_status st = abl_sim_setup_init(cfg, s);
    if (st == ABL_OK && (s->gaussian || s->captured != NULL || s->em.softmax != ABL_SOFTMAX_FLASH || s->em.n == 0)) {
        abl_sim_setup_free(s);
        st = ABL_ERR_UNSUPPORTED;
    }
    return st;
}

abl_status abl_flash_backward_predict(const abl_simulate_config *cfg, double up, abl_bwd_head **out, int *heads)
{
    *out = NULL;
    *heads = 0;
    abl_sim_setup s;
    abl_status st = predict_setup(cfg, &s);
    if (st != ABL_OK)
        return st;
    fhead h;
    st = fhead_init(&h, &s.em, up);
    abl_bwd_head *res = calloc((size_t)(s.heads > 0 ? s.heads : 1), sizeof *res);
    if (st == ABL_OK && res == NULL)
        st = ABL_ERR_NO_MEMORY;
    for (int k = 0; st == ABL_OK && k < s.heads; k++) {
        int idx = s.schedule.slopes[k].index;   /* model order, as the emulation's results */
        head_table(&s, k, h.X);
        st = idx >= 1 && idx <= s.heads ? head_rows(&h, &res[idx - 1]) : ABL_ERR_INVALID_ARGUMENT;
    }
    if (st == ABL_OK) {
        *out = res;
        *heads = s.heads;
        res = NULL;
    }
    free(res);
    fhead_free(&h);
    abl_sim_setup_free(&s);
    return st;
}

/* Estimate: each row costs its searches and a few exp2/log2 (4 log2 N + 16 units); a row the bounds leave
 * open also sums, in exact_lse2, about the keys above 2^-27 of its sum (4 units each, a block more at most).
 * Which rows are open is sampled: up to 256 rows spread over the head, run through the bounds as the
 * predictor runs them (on the head's prefix sums, built for that: O(N)). */
#define SAMPLES 256

static double open_row_keys(const fhead *h, uint64_t i)
{
    uint64_t a = h->rel ? h->n - 1 - i : 0, b = h->rel ? h->n - 1 : i;
    float ms = abl_emul_max_scaled(h->e, h->X[b]);
    double R = range_sum(h, a, b, ms);
    uint64_t B = h->e->block > 0 ? (uint64_t)h->e->block : i + 1;
    return (double)(b + 1 - first_above(h, a, b, ms, log2(0x1p-27 * R))) + (double)B;
}

static double head_units(const abl_sim_setup *s, int hh, fhead *h)
{
    uint64_t n = h->n, step = n > SAMPLES ? n / SAMPLES : 1, seen = 0;
    head_table(s, hh, h->X);
    abl_bwd_head o;
    if (head_rows_ready(h, &o) != ABL_OK)
        return 0.0;   /* the predictor refuses it at once */
    double keys = 0.0;
    for (uint64_t i = n - 1;; i -= step) {
        uint64_t before = h->exact_rows;
        (void)row_J(h, i);
        seen++;
        if (h->exact_rows > before)
            keys += open_row_keys(h, i);
        if (i < step)
            break;
    }
    double rows = (double)n;
    return rows * (4.0 * log2(rows + 1.0) + 16.0) + 4.0 * keys * rows / (double)seen;
}

/* Measured on one core (Release, 64 heads x 32768, bf16 and fp16: bench/bench_backward_predict.sh, 2026-12-02):
 * units of about 2.5 ns. */
#define FLASH_BWD_PREDICT_RATE 4.0e8

abl_status abl_flash_backward_estimate(const abl_simulate_config *cfg, abl_cost *out)
{
    memset(out, 0, sizeof *out);
    abl_sim_setup s;
    abl_status st = predict_setup(cfg, &s);
    if (st != ABL_OK)
        return st;
    fhead h;
    st = fhead_init(&h, &s.em, 1.0);
    for (int k = 0; st == ABL_OK && k < s.heads; k++)
        out->units += head_units(&s, k, &h);
    fhead_free(&h);
    abl_sim_setup_free(&s);
    out->seconds = out->units / FLASH_BWD_PREDICT_RATE;
    out->threads = 1;
    out->unit_name = "weights";
    return st;
}
