/* alibi-blind: the fast exact rows of `simulate` (see abl_simulate_fast.h for what makes them exact;
 * tests/unit/test_simulate_fast.c compares them with the reference rows and the exact accumulator). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_simulate_fast.h"
#include "kernel/abl_fastexp.h"
#include "kernel/abl_fastgauss.h"
#include "abl/kernel/npy.h"

/* GCC/Clang vector extensions of 16 bytes (one SSE2 register on baseline x86-64, one NEON register
 * on AArch64; plain lane-by-lane C semantics elsewhere): IEEE operations lane by lane. */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
typedef double v2d __attribute__((vector_size(16)));

#define LOAD(v, p) memcpy(&(v), (p), sizeof(v))

int abl_fast_eligible(const abl_sim_setup *s)
{
#if FLT_EVAL_METHOD != 0
    (void)s;
    return 0;   /* binary32 expressions would be evaluated wider: only the reference rows are exact */
#else
    const char *env = getenv("ABL_SIMULATE_SLOW");
    if (env != NULL && env[0] != '\0' && strcmp(env, "0") != 0)
        return 0;
    return s->em.softmax == ABL_SOFTMAX_EAGER;
#endif
}

/* The positions of row i's keys form [lo, hi]; key j sits at position pos(i, j). */
static void row_range(const abl_emul *em, uint64_t i, uint64_t *lo, uint64_t *hi)
{
    if (em->form == ABL_BIAS_TRAILING) {
        *lo = em->n - 1 - i;
        *hi = em->n - 1;
    } else {
        *lo = 0;
        *hi = i;
    }
}

void abl_fast_row_max(const abl_emul *em, const float *table, float *rmax)
{
    uint64_t n = em->n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t lo, hi;
        row_range(em, i, &lo, &hi);
        float v = table[em->form == ABL_BIAS_TRAILING ? lo : hi];   /* the position row i adds */
        rmax[i] = i == 0 || v > rmax[i - 1] ? v : rmax[i - 1];
    }
}

/* The per-row memo of exponentials by logit: 2^16 slots, so that a logit dtype of 16 bits on binary32's
 * grid (bf16: the low 16 bits are zero) maps each value to its own slot (no collisions, ~1700 distinct
 * values a row for scores of std 4); other logits are hashed into it. calloc'd: untouched pages cost no
 * memory. */
#define MEMO 65536

int abl_fast_thread_init(abl_fast_thread *t, uint64_t n)
{
    t->etab = malloc(n * sizeof *t->etab);
    t->row = malloc(n * sizeof *t->row);
    t->tag = calloc(MEMO, sizeof *t->tag);
    t->stamp = calloc(MEMO, sizeof *t->stamp);
    t->val = calloc(MEMO, sizeof *t->val);
    t->cur = 0;
    t->zeros2 = 0;
    t->head = -1;
    t->m = 0.0f;
    t->lo = 1;
    t->hi = 0;
    if (t->etab == NULL || t->row == NULL || t->tag == NULL || t->stamp == NULL || t->val == NULL) {
        abl_fast_thread_free(t);
        return 0;
    }
    return 1;
}

void abl_fast_thread_free(abl_fast_thread *t)
{
    free(t->etab);
    free(t->row);
    free(t->tag);
    free(t->stamp);
    free(t->val);
    t->etab = NULL;
    t->row = NULL;
    t->tag = t->stamp = NULL;
    t->val = NULL;
}

/* abl_emul_eager_exp: y = fp32(x - m) (a binary32 subtraction), then the exp model; the correctly
 * rounded exp through abl_fastexp_rn32 (equal to abl_exp_rn32 everywhere) */
static inline float eager_exp(const abl_emul *em, float x, float m)
{
    float y = x - m;
    return em->exp == ABL_EXP_SLEEF ? abl_exp_sleef_u10(y) : abl_fastexp_rn32(y, NULL);
}

/* etab[pos] = abl_emul_eager_exp(table[pos], m) for pos in [a, b], reusing the previous position's
 * value when the logit is the same (the same arguments give the same value). */
static void fill_exp(const abl_emul *em, const float *table, float m, float *etab, uint64_t a, uint64_t b)
{
    for (uint64_t pos = a; pos <= b; pos++) {
        if (pos > a && table[pos] == table[pos - 1])
            etab[pos] = etab[pos - 1];
        else
            etab[pos] = eager_exp(em, table[pos], m);
    }
}

/* Make etab valid on [lo, hi] for (head, m). Row ranges share an end (0 or N-1), so the valid
 * positions stay one interval. */
static void ensure_exp(const abl_emul *em, int head, const float *table, abl_fast_thread *t, float m, uint64_t lo,
                       uint64_t hi)
{
    if (t->head != head || t->m != m || t->lo > t->hi) {
        fill_exp(em, table, m, t->etab, lo, hi);
        t->head = head;
        t->m = m;
        t->lo = lo;
        t->hi = hi;
        return;
    }
    if (lo < t->lo) {
        fill_exp(em, table, m, t->etab, lo, t->lo - 1);
        t->lo = lo;
    }
    if (hi > t->hi) {
        fill_exp(em, table, m, t->etab, t->hi + 1, hi);
        t->hi = hi;
    }
}

float abl_fast_sum_exact(const float *e, uint64_t count, int *fallback)
{
    if (fallback != NULL)
        *fallback = 0;
    if (count == 0)
        return 0.0f;
    /* Binary64 sum of the (exactly converted) terms in 8 interleaved chains, then the chains. For
     * n >= 0 terms added in any order, |S^ - S| <= gamma_(n-1) S with gamma_k = k u / (1 - k u),
     * u = 2^-53 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., (4.4)); with
     * n <= 2^25 that is <= n 2^-52 S^. B = n 2^-51 S^ doubles it, and the roundings of S^ -+ B
     * (<= 2^-53 S^ each) keep [lo, hi] around S. RN32 is monotone: RN32(lo) == RN32(hi) decides. */
    v2d a0 = {0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0;
    uint64_t j = 0;
    for (; j + 8 <= count; j += 8) {
        v2f x0, x1, x2, x3;
        LOAD(x0, e + j);
        LOAD(x1, e + j + 2);
        LOAD(x2, e + j + 4);
        LOAD(x3, e + j + 6);
        a0 += __builtin_convertvector(x0, v2d);
        a1 += __builtin_convertvector(x1, v2d);
        a2 += __builtin_convertvector(x2, v2d);
        a3 += __builtin_convertvector(x3, v2d);
    }
    double tail = 0.0;
    for (; j < count; j++)
        tail += (double)e[j];
    v2d a = (a0 + a1) + (a2 + a3);
    double s = (a[0] + a[1]) + tail;
    double b = (double)count * s * 0x1p-51;
    float lo = (float)(s - b), hi = (float)(s + b);
    if (lo == hi)
        return lo;
    if (fallback != NULL)
        *fallback = 1;
    abl_xacc acc;
    abl_xacc_clear(&acc);
    for (j = 0; j < count; j++)
        abl_xacc_add(&acc, e[j]);
    return abl_xacc_round32(&acc);
}

/* Lane k of L accumulates keys k, k + L, ... in binary32 (an IEEE binary32 addition is the
 * reference's binary64 addition rounded once: 53 >= 2*24 + 2); then lane k += lane k + w for
 * w = L/2, ..., 1. acc starts at +0 and +0 + e = e for e >= +0, as the reference's first assignment. */
static float sum_lanes(const float *e, uint64_t count, unsigned lanes)
{
    v4f a0 = {0.0f, 0.0f, 0.0f, 0.0f}, a1 = a0, a2 = a0, a3 = a0;
    uint64_t j = 0;
    if (lanes == 8) {
        for (; j + 8 <= count; j += 8) {
            v4f x0, x1;
            LOAD(x0, e + j);
            LOAD(x1, e + j + 4);
            a0 += x0;
            a1 += x1;
        }
    } else {
        for (; j + 16 <= count; j += 16) {
            v4f x0, x1, x2, x3;
            LOAD(x0, e + j);
            LOAD(x1, e + j + 4);
            LOAD(x2, e + j + 8);
            LOAD(x3, e + j + 12);
            a0 += x0;
            a1 += x1;
            a2 += x2;
            a3 += x3;
        }
    }
    float l[16];
    memcpy(l, &a0, sizeof a0);
    memcpy(l + 4, &a1, sizeof a1);
    memcpy(l + 8, &a2, sizeof a2);
    memcpy(l + 12, &a3, sizeof a3);
    for (unsigned k = 0; j < count; j++, k++)
        l[k] += e[j];
    for (unsigned w = lanes / 2; w >= 1; w /= 2)
        for (unsigned k = 0; k < w; k++)
            l[k] += l[k + w];
    return l[0];
}

float abl_fast_sum(const abl_emul *em, const float *e, uint64_t count, uint64_t n)
{
    if (em->sum == ABL_SUM_EXACT)
        return abl_fast_sum_exact(e, count, NULL);
    unsigned lanes = em->sum == ABL_SUM_VEC8 ? 8 : em->sum == ABL_SUM_VEC16 ? 16 : 0;
    if (lanes == 0 || n < lanes) {
        float s = 0.0f;
        for (uint64_t j = 0; j < count; j++)
            s += e[j];
        return s;
    }
    return sum_lanes(e, count, lanes);
}

/* The largest binary32 value <= the output format's zero_max: p <= zero_max iff p <= zf. */
static float zero_threshold(const abl_emul *em)
{
    float zf = (float)em->out.zero_max;
    if ((double)zf > em->out.zero_max)
        zf = 0.0f;   /* zero_max = 2^-150 (binary32 output): only 0 itself */
    return zf;
}

/* Count p <= zf over e[0..count-1] with p = e * r (reciprocal) or e / s (divide). */
static uint64_t count_zeros(const abl_emul *em, const float *e, uint64_t count, float s, float r, float zf)
{
    /* per-lane counters: at most 2^24 / 8 each */
    v4i z0 = {0, 0, 0, 0}, z1 = z0;
    uint64_t j = 0, zeros = 0;
    v4f vz = {zf, zf, zf, zf};
    if (em->normalise == ABL_NORM_DIVIDE) {
        v4f vs = {s, s, s, s};
        for (; j + 8 <= count; j += 8) {
            v4f x0, x1;
            LOAD(x0, e + j);
            LOAD(x1, e + j + 4);
            z0 += (v4i)(x0 / vs <= vz);
            z1 += (v4i)(x1 / vs <= vz);
        }
        for (; j < count; j++)
            zeros += e[j] / s <= zf;
    } else {
        v4f vr = {r, r, r, r};
        for (; j + 8 <= count; j += 8) {
            v4f x0, x1;
            LOAD(x0, e + j);
            LOAD(x1, e + j + 4);
            z0 += (v4i)(x0 * vr <= vz);
            z1 += (v4i)(x1 * vr <= vz);
        }
        for (; j < count; j++)
            zeros += e[j] * r <= zf;
    }
    v4i z = z0 + z1;   /* each lane holds minus its count */
    for (int k = 0; k < 4; k++)
        zeros += (uint64_t)-(int64_t)z[k];
    return zeros;
}

/* count_zeros with em->zf2 too, in the same pass (abl_simulate_config.zero2): the weight is formed once
 * and compared twice; p <= zf2 is added to *zeros2. */
#define TWO_THRESHOLDS(P)          \
    do {                           \
        v4f p_ = (P);              \
        z += (v4i)(p_ <= vz);      \
        z2 += (v4i)(p_ <= vz2);    \
    } while (0)
static uint64_t count_zeros_two(const abl_emul *em, const float *e, uint64_t count, float s, float r, float zf,
                                uint64_t *zeros2)
{
    v4i z = {0, 0, 0, 0}, z2 = z;   /* per-lane counters: at most 2^24 / 4 each */
    uint64_t j = 0, zeros = 0;
    v4f vz = {zf, zf, zf, zf}, vz2 = {em->zf2, em->zf2, em->zf2, em->zf2}, vs = {s, s, s, s}, vr = {r, r, r, r};
    int divide = em->normalise == ABL_NORM_DIVIDE;
    for (; divide && j + 4 <= count; j += 4) {
        v4f x;
        LOAD(x, e + j);
        TWO_THRESHOLDS(x / vs);
    }
    for (; !divide && j + 4 <= count; j += 4) {
        v4f x;
        LOAD(x, e + j);
        TWO_THRESHOLDS(x * vr);
    }
    for (; j < count; j++) {
        float p = divide ? e[j] / s : e[j] * r;
        zeros += p <= zf;
        *zeros2 += p <= em->zf2;
    }
    for (int k = 0; k < 4; k++) {   /* each lane holds minus its count */
        zeros += (uint64_t)-(int64_t)z[k];
        *zeros2 += (uint64_t)-(int64_t)z2[k];
    }
    return zeros;
}
#undef TWO_THRESHOLDS

uint64_t abl_fast_row(const abl_emul *em, int head, const float *table, const float *rmax, abl_fast_thread *t,
                      uint64_t i, float *logits, float *wout)
{
    uint64_t lo, hi, count = i + 1;
    row_range(em, i, &lo, &hi);
    float m = rmax[i];
    ensure_exp(em, head, table, t, m, lo, hi);
    const float *eslice = t->etab + lo;
    /* key order: relative/symmetric and trailing run from the far end (pos decreasing in j) */
    int reversed = em->form != ABL_BIAS_ABSOLUTE;
    float s;
    if (em->sum == ABL_SUM_EXACT && wout == NULL) {
        s = abl_fast_sum_exact(eslice, count, NULL);
    } else {
        for (uint64_t j = 0; j < count; j++)
            t->row[j] = eslice[reversed ? count - 1 - j : j];
        s = abl_fast_sum(em, t->row, count, em->n);
    }
    float r = (float)(1.0 / (double)s);
    float zf = zero_threshold(em);
    if (logits != NULL)
        for (uint64_t j = 0; j < count; j++)
            logits[j] = table[lo + (reversed ? count - 1 - j : j)];
    if (wout != NULL) {
        uint64_t zeros = 0;
        for (uint64_t j = 0; j < count; j++) {
            float p = em->normalise == ABL_NORM_DIVIDE ? t->row[j] / s : t->row[j] * r;
            zeros += p <= zf;
            t->zeros2 += em->zero2 && p <= em->zf2;
            wout[j] = abl_fp_round32(&em->out, p);
        }
        return zeros;
    }
    if (em->zero2)
        return count_zeros_two(em, eslice, count, s, r, zf, &t->zeros2);
    return count_zeros(em, eslice, count, s, r, zf);
}

uint64_t abl_fast_row_values(const abl_emul *em, abl_fast_thread *t, const float *x, uint64_t from, uint64_t count,
                             float *e, float *wout)
{
    float m = x[from];
    for (uint64_t j = from + 1; j < count; j++)
        if (x[j] > m)
            m = x[j];
    /* exp(fp32(x - m)) depends only on x within the row: remembered by x's bit pattern (a new
     * stamp per row forgets the previous row's values) */
    if (++t->cur == 0) {
        memset(t->stamp, 0, MEMO * sizeof *t->stamp);
        t->cur = 1;
    }
    for (uint64_t j = from; j < count; j++) {
        if (x[j] - m < -104.0f) {
            e[j] = 0.0f;   /* both exp models give +0 below -104 (abl_exp_rn32, abl_exp_sleef_u10) */
            continue;
        }
        uint32_t b;
        memcpy(&b, &x[j], sizeof b);
        uint32_t h = (b & 0xffffu) == 0 ? b >> 16 : (b ^ (b >> 16) ^ (b >> 11)) & (MEMO - 1);
        if (t->stamp[h] == t->cur && t->tag[h] == b) {
            e[j] = t->val[h];
        } else {
            e[j] = eager_exp(em, x[j], m);
            t->stamp[h] = t->cur;
            t->tag[h] = b;
            t->val[h] = e[j];
        }
    }
    float s;
    if (em->sum == ABL_SUM_EXACT) {
        s = abl_fast_sum_exact(e + from, count - from, NULL);   /* the skipped +0 add nothing */
    } else {
        memset(e, 0, from * sizeof *e);                          /* the lanes see every key */
        s = abl_fast_sum(em, e, count, em->n);
    }
    float r = (float)(1.0 / (double)s);
    float zf = zero_threshold(em);
    if (wout != NULL) {
        uint64_t zeros = 0;
        for (uint64_t j = 0; j < count; j++) {
            float ej = j < from ? 0.0f : e[j];
            float p = em->normalise == ABL_NORM_DIVIDE ? ej / s : ej * r;
            zeros += p <= zf;
            t->zeros2 += em->zero2 && p <= em->zf2;
            wout[j] = abl_fp_round32(&em->out, p);
        }
        return zeros;
    }
    if (em->zero2) {
        t->zeros2 += from;   /* the skipped keys' p = +0 is below both thresholds */
        return from + count_zeros_two(em, e + from, count - from, s, r, zf, &t->zeros2);
    }
    return from + count_zeros(em, e + from, count - from, s, r, zf);
}

int abl_fast_gauss_head_init(abl_fast_gauss_head *g, uint64_t n)
{
    g->xhi = malloc(n * sizeof *g->xhi);
    g->xlo = malloc(n * sizeof *g->xlo);
    g->rmaxlo = malloc(n * sizeof *g->rmaxlo);
    g->skip = 0;
    if (g->xhi == NULL || g->xlo == NULL || g->rmaxlo == NULL) {
        abl_fast_gauss_head_free(g);
        return 0;
    }
    return 1;
}

void abl_fast_gauss_head_free(abl_fast_gauss_head *g)
{
    free(g->xhi);
    free(g->xlo);
    free(g->rmaxlo);
    g->xhi = g->xlo = g->rmaxlo = NULL;
}

void abl_fast_gauss_prepare(const abl_sim_setup *s, int head, const float *table, abl_fast_gauss_head *g)
{
    const abl_emul *em = &s->em;
    /* every score lies in [-smax, smax] */
    float smax = nextafterf((float)(s->std * ABL_GAUSS_Z_BOUND), INFINITY);
    g->skip = isfinite(smax) != 0;
    for (uint64_t pos = 0; pos < em->n; pos++) {
        g->xhi[pos] = abl_emul_logit(em, &s->hd[head], smax, pos, table[pos]);
        g->xlo[pos] = abl_emul_logit(em, &s->hd[head], -smax, pos, table[pos]);
        if (!isfinite(g->xhi[pos]) || !isfinite(g->xlo[pos]))
            g->skip = 0;
    }
    if (g->skip)
        abl_fast_row_max(em, g->xlo, g->rmaxlo);
}

/* The keys j < j0 of row i whose exponential is +0 whatever their draw: the logit is a monotone
 * function of the score (binary32 sum, product by a positive scale, rounding into the logit dtype),
 * so x_j <= xhi[pos] and the row max M >= max of xlo over the row = rmaxlo[i]; then
 * fp32(x_j - M) <= fp32(xhi[pos] - rmaxlo[i]) < -104 makes e_j = +0 under both exp models, x_j is
 * finite (between two finite bounds) and cannot be the row max. */
static uint64_t skipped_keys(const abl_emul *em, const abl_fast_gauss_head *g, uint64_t i)
{
    if (!g->skip)
        return 0;
    float mlo = g->rmaxlo[i];
    uint64_t j = 0;
    while (j < i && g->xhi[abl_emul_pos(em, i, j)] - mlo < -104.0f)
        j++;
    return j;
}

/* abl_fp_round32 for a format on binary32's grid and a finite t, inlined: the bit rounding to nearest
 * even at the format's last mantissa bit, then finish()'s overflow and signed-zero rules. */
static inline float grid_round(const abl_fp *f, float t)
{
    unsigned k = (unsigned)(24 - f->p);
    float ax = fabsf(t);
    uint32_t u;
    memcpy(&u, &ax, sizeof u);
    if (k > 0) {
        uint32_t half = 1u << (k - 1);
        u = (u + (half - 1) + ((u >> k) & 1u)) & ~((1u << k) - 1u);
    }
    float r;
    memcpy(&r, &u, sizeof r);
    if (!(r <= (float)f->max))
        r = f->has_inf || isnan(r) ? (isnan(t) ? t : INFINITY) : (float)f->max;
    if (r == 0.0f && !f->neg_zero)
        return 0.0f;
    return copysignf(r, t);
}

/* A captured score rounded to the dtype the model held it in (abl_fp_round32). */
static inline float score_round(const abl_fp *f, float v)
{
    return f->identity ? v : f->fp32_grid ? grid_round(f, v) : abl_fp_round32(f, v);
}

/* The logits of keys from..i of row i (key order) from their scores, each first rounded to sf when
 * sf is given (captured scores), as the reference's row_logits forms them; 0 when one is not finite.
 * score and x may be the same array. */
static int logits_of_scores(const abl_sim_setup *s, int head, const float *table, uint64_t i, uint64_t from,
                            const abl_fp *sf, const float *score, float *x)
{
    const abl_emul *em = &s->em;
    const abl_emul_head *eh = &s->hd[head];
    int ok = 1;
    if (em->logit.fp32_grid && !em->logit.identity && em->bias_add == ABL_BIAS_ADD_SCORES) {
        /* abl_emul_logit inlined for the formats on binary32's grid (bf16, tf32, ...): the binary32
         * sum (and product by the scale), then abl_fp_round32's bit rounding and finish() */
        int neg = em->form != ABL_BIAS_ABSOLUTE;
        for (uint64_t j = from; j <= i; j++) {
            uint64_t pos = abl_emul_pos(em, i, j);
            float t = (sf != NULL ? score_round(sf, score[j]) : score[j]) + (neg ? -table[pos] : table[pos]);
            if (em->has_scale)
                t *= em->scale;
            x[j] = grid_round(&em->logit, t);
            ok &= isfinite(x[j]) != 0;
        }
        return ok;
    }
    for (uint64_t j = from; j <= i; j++) {
        uint64_t pos = abl_emul_pos(em, i, j);
        x[j] = abl_emul_logit(em, eh, sf != NULL ? score_round(sf, score[j]) : score[j], pos, table[pos]);
        ok &= isfinite(x[j]) != 0;
    }
    return ok;
}

/* Gaussian logits of keys from..i of row i (key order), as the reference's row_logits forms them,
 * the scores through abl_fastgauss_scores; 0 when one is not finite. */
static int gauss_logits(const abl_sim_setup *s, int head, const float *table, uint64_t i, uint64_t from, float *score,
                        float *x)
{
    uint64_t hidx = (uint64_t)s->schedule.slopes[head].index;
    abl_fastgauss_scores(s->seed, hidx, i, s->std, from & ~UINT64_C(1), i + 1, score, NULL);
    return logits_of_scores(s, head, table, i, from, NULL, score, x);
}

int abl_fast_gauss_row(const abl_sim_setup *s, int head, const float *table, const abl_fast_gauss_head *g,
                       abl_fast_thread *t, uint64_t i, float *x, float *e, float *wout, uint64_t *zeros)
{
    uint64_t from = wout == NULL ? skipped_keys(&s->em, g, i) : 0;
    if (!gauss_logits(s, head, table, i, from, e, x))
        return 0;
    *zeros = abl_fast_row_values(&s->em, t, x, from, i + 1, e, wout);
    return 1;
}

/* ---- captured scores (simulate --logits, abl_flat's in-memory array) ---- */

int abl_fast_captured_skippable(const abl_sim_setup *s, const float *table)
{
    const abl_emul *em = &s->em;
    if ((em->form != ABL_BIAS_RELATIVE && em->form != ABL_BIAS_SYMMETRIC) || (em->has_scale && !(em->scale > 0.0f)))
        return 0;
    for (uint64_t pos = 1; pos < em->n; pos++)
        if (!(table[pos] >= table[pos - 1]))
            return 0;
    return 1;
}

/* Row i's scores in key order: a pointer into the data where they are aligned binary32, else
 * converted into buf (abl_npy_row). */
static const float *captured_scores(const abl_npy *f, int head, uint64_t i, float *buf)
{
    uint64_t hd = f->ndim == 3 ? (uint64_t)head : 0;
    const unsigned char *p = f->data + ((hd * f->n + i) * f->n) * (uint64_t)f->itemsize;
    if (f->itemsize == 4 && (uintptr_t)p % _Alignof(float) == 0)
        return (const float *)(const void *)p;
    abl_npy_row(f, (uint64_t)head, i, i + 1, buf);
    return buf;
}

/* The keys j < j0 of row i whose exponential is +0 whatever their score in [smin, smax] (the row's
 * range): with a relative bias whose magnitude never decreases with the distance d and a positive
 * scale, the logit is non-decreasing in the (rounded) score and non-increasing in d, so x_j <=
 * xhi(d) = logit(RN(smax), d), the row max M >= the diagonal's logit mlo, and fp32(x_j - M) <=
 * fp32(xhi(d) - mlo) < -104 gives e_j = +0 under both exp models (as skipped_keys); xhi is
 * non-increasing in d, so the first such d is found by bisection. x_j >= logit(RN(smin), i) must be
 * finite, or the reference's check on every logit decides (nothing skipped). */
static uint64_t captured_skip(const abl_sim_setup *s, int head, const float *table, uint64_t i, const float *raw)
{
    const abl_emul *em = &s->em;
    const abl_emul_head *eh = &s->hd[head];
    float smax = raw[0], smin = raw[0];
    for (uint64_t j = 1; j <= i; j++) {
        smax = raw[j] > smax ? raw[j] : smax;
        smin = raw[j] < smin ? raw[j] : smin;
    }
    float hi = score_round(&s->score_fp, smax), lo = score_round(&s->score_fp, smin);
    uint64_t p0 = abl_emul_pos(em, i, i), pi = abl_emul_pos(em, i, 0);
    float mlo = abl_emul_logit(em, eh, score_round(&s->score_fp, raw[i]), p0, table[p0]);
    if (!isfinite(mlo) || !isfinite(abl_emul_logit(em, eh, lo, pi, table[pi])) ||
        !(abl_emul_logit(em, eh, hi, pi, table[pi]) - mlo < -104.0f))
        return 0;
    uint64_t a = 0, b = i;   /* d = a: not below -104 (xhi(0) >= mlo); d = b: below */
    while (b - a > 1) {
        uint64_t d = a + (b - a) / 2, pos = abl_emul_pos(em, i, i - d);
        if (abl_emul_logit(em, eh, hi, pos, table[pos]) - mlo < -104.0f)
            b = d;
        else
            a = d;
    }
    return i - b + 1;   /* keys j = i - d, d >= b */
}

int abl_fast_captured_row(const abl_sim_setup *s, int head, const float *table, int skippable, abl_fast_thread *t,
                          uint64_t i, float *x, float *e, float *wout, uint64_t *zeros)
{
    const float *raw = captured_scores(s->captured, head, i, x);
    uint64_t from = wout == NULL && skippable ? captured_skip(s, head, table, i, raw) : 0;
    if (!logits_of_scores(s, head, table, i, from, &s->score_fp, raw, x))
        return 0;
    *zeros = abl_fast_row_values(&s->em, t, x, from, i + 1, e, wout);
    return 1;
}
