/* alibi-blind: a bidirectional (encoder) layer through a pipeline (issue 19): every query row i attends
 * all N keys j at distance d = |i - j| with the symmetric bias -m d, so the matrix is N x N and each row
 * has two horizons. The emulation runs every row through the same roundings as the causal rows
 * (abl_sim_row_weights: a row of N keys in key order; flash: the key blocks from the last one down, as
 * FlashAttention-2's non-causal loop runs them); the predictor decides the same zeros for zero logits in
 * O(N log N) per head (eager: exact two-sided sums; flash: the running max of each key block).
 *
 * The "last row" of a causal report is the END row here, i = N - 1 (keys at d = N - 1 - j, one horizon:
 * for a symmetric bias the same logits as a causal last row, over N keys); the MIDDLE row is
 * i = floor((N - 1) / 2). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include <mpfr.h>
#include "abl_internal.h"
#include "abl/kernel/simulate.h"
#include "kernel/abl_round.h"
#include "kernel/abl_fastgauss.h"
#include "kernel/abl_simulate_bidir.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_influence.h"
#include "kernel/abl_triton.h"
#include "kernel/abl_ggml.h"

uint64_t abl_bidir_mid(uint64_t n)
{
    return n > 0 ? (n - 1) / 2 : 0;
}

/* What a bidirectional layer can be emulated with: a bias that depends on |i - j| only (relative or
 * symmetric: the same values), and a kernel whose row is a plain list of keys (eager, flash, sdpa, and
 * ggml's: llama.cpp fills a non-causal mask with -|p0 - p1| for every key, llama-graph.cpp
 * llm_graph_input_attn_no_cache::set_input, so each row is N keys in key order at mask -d, as the ggml row
 * code runs them). The GPU engines and flex model causal decode / causal block-mask kernels. */
abl_status abl_bidir_check(const abl_sim_setup *s)
{
    if (s->em.form != ABL_BIAS_RELATIVE && s->em.form != ABL_BIAS_SYMMETRIC)
        return ABL_ERR_UNSUPPORTED;
    if (abl_emul_engine(&s->em) || s->em.softmax == ABL_SOFTMAX_FLEX)
        return ABL_ERR_UNSUPPORTED;
    return ABL_OK;
}

/* The layer totals of a run (an abl_simulation or an abl_prediction: the same field names). Where P.V loses
 * nothing more than the weights (infl 0: the predictor's kinds, and every kernel without infl_active), a key
 * without influence is a zero weight and each head's influence counts are its weight counts; otherwise the
 * emulation counted them row by row (bworker). One definition for the emulation and the predictor. */
#define BIDIR_TOTALS(out, infl)                                                                                \
    do {                                                                                                       \
        for (int h_ = 0; h_ < (out)->heads; h_++) {                                                            \
            if (!(infl)) {                                                                                     \
                (out)->results[h_].first_influence_zero = (out)->results[h_].first_blind;                      \
                (out)->results[h_].row_influence_zeros = (out)->results[h_].row_zeros;                         \
                (out)->results[h_].matrix_influence_zeros = (out)->results[h_].matrix_zeros;                   \
            }                                                                                                  \
            (out)->row_zeros += (out)->results[h_].row_zeros;                                                  \
            (out)->matrix_zeros += (out)->results[h_].matrix_zeros;                                            \
            (out)->mid_row_zeros += (out)->results[h_].mid_row_zeros;                                          \
            (out)->row_influence_zeros += (out)->results[h_].row_influence_zeros;                              \
            (out)->matrix_influence_zeros += (out)->results[h_].matrix_influence_zeros;                        \
        }                                                                                                      \
        (out)->influence_differs = (infl);                                                                     \
    } while (0)

/* ---- the emulation ---- */

typedef struct bteam {
    const abl_sim_setup *s;
    abl_simulation *out;
    float *table;              /* zero logits: logit by distance; else |bias| by distance */
    int head;
    atomic_uint_fast64_t next_row, zeros;
    atomic_uint_fast64_t lost;   /* influence-zero keys of the head, when P.V can lose more (abl_influence.h) */
    atomic_int failed;
    pthread_mutex_t hook_mu;   /* the row hook (plot blindmap of an encoder), one call at a time */
} bteam;

/* Row i's logits (all N keys); 0 when one is not finite. */
static int bidir_logits(const bteam *t, uint64_t i, float *x)
{
    const abl_sim_setup *s = t->s;
    const abl_emul *em = &s->em;
    uint64_t n = em->n;
    if (!s->gaussian) {
        for (uint64_t j = 0; j < n; j++)
            x[j] = t->table[j > i ? j - i : i - j];
        return 1;
    }
    const abl_emul_head *eh = &s->hd[t->head];
    uint64_t hidx = (uint64_t)s->schedule.slopes[t->head].index;
    int ok = 1;
    double z[2] = {0.0, 0.0};
    if (s->captured != NULL)
        abl_npy_row(s->captured, (uint64_t)t->head, i, n, x);
    for (uint64_t j = 0; j < n; j++) {
        uint64_t d = j > i ? j - i : i - j;
        float score;
        if (s->captured != NULL) {
            score = abl_fp_round32(&s->score_fp, x[j]);
        } else {
            if (j % 2 == 0)
                abl_sim_gauss_pair(s->seed, hidx, i, j / 2, &z[0], &z[1]);
            score = (float)(s->std * z[j % 2]);
        }
        x[j] = abl_emul_logit(em, eh, score, d, t->table[d]);
        ok &= isfinite(x[j]) != 0;
    }
    return ok;
}

/* Flash: the end row's weights as they act on V, P rescaled to the final max and divided by the row sum
 * (the causal emulation's tvw), from the exponentials e and the rounded P in w; NULL for the other kinds,
 * whose w already is the normalised weight. The blocks run from the last down, as the emulation ran them. */
static double *acting_weights(const abl_emul *em, const float *x, const float *e, const float *w)
{
    if (em->softmax == ABL_SOFTMAX_TRITON_LSE) {   /* P scaled by exp(m_block - lse): abl_triton.c */
        double *t = malloc(em->n * sizeof *t);
        float *p = malloc(em->n * sizeof *p);
        if (t != NULL && p != NULL)
            abl_triton_row(em, em->n - 1, x, p, NULL, t);
        free(p);
        return t;
    }
    if (em->softmax != ABL_SOFTMAX_FLASH)
        return NULL;
    uint64_t n = em->n, B = em->block > 0 ? (uint64_t)em->block : n;
    double *v = malloc(n * sizeof *v), l = 0.0;
    if (v == NULL)
        return NULL;
    float final_max = x[0], run = -INFINITY;
    for (uint64_t j = 1; j < n; j++)
        if (x[j] > final_max)
            final_max = x[j];
    for (uint64_t top = (n - 1) / B + 1; top-- > 0;) {
        uint64_t lo = top * B, hi = lo + B - 1 < n - 1 ? lo + B - 1 : n - 1;
        for (uint64_t j = lo; j <= hi; j++)
            if (x[j] > run)
                run = x[j];
        double factor = exp2((double)em->c_log2 * ((double)run - (double)final_max));
        for (uint64_t j = lo; j <= hi; j++) {
            v[j] = (double)w[j] * factor;
            l += (double)e[j] * factor;
        }
    }
    for (uint64_t j = 0; j < n; j++)
        v[j] /= l;
    return v;
}

/* End-row statistics (i = N - 1): first blind distance, ties, TV distance and mass lost against a binary64
 * softmax of the unrounded logits eps - m d. w: the row's weights as they act on V. */
static void end_row_stats(const bteam *t, const float *x, const float *e, const float *w, abl_sim_head *out)
{
    const abl_sim_setup *s = t->s;
    uint64_t n = s->em.n, i = n - 1;
    out->first_blind = -1;
    for (uint64_t d = 0; d <= i; d++)
        if (w[i - d] == 0.0f) {
            out->first_blind = (int64_t)d;
            break;
        }
    float *sorted = malloc(n * sizeof *sorted);
    abl_sim_row_stats(x, n, i, sorted, out);   /* the causal last row's statistics (abl_simulate.c) */
    if (sorted != NULL && s->captured != NULL)
        abl_npy_row(s->captured, (uint64_t)t->head, i, n, sorted); /* scratch: the scores */
    double m = s->m_exact[t->head], zmax = 0.0, sum = 0.0, tv = 0.0, lost = 0.0;
    double *v = acting_weights(&s->em, x, e, w);
    double *z = malloc(n * sizeof *z);
    if (z == NULL) {
        free(sorted);
        return;
    }
    uint64_t hidx = (uint64_t)s->schedule.slopes[t->head].index;
    for (uint64_t j = 0; j <= i; j++) {
        double eps = 0.0;
        if (s->captured != NULL && sorted != NULL) {
            eps = (double)abl_fp_round32(&s->score_fp, sorted[j]);
        } else if (s->gaussian && s->captured == NULL) {
            double z0, z1;
            abl_sim_gauss_pair(s->seed, hidx, i, j / 2, &z0, &z1);
            eps = s->std * (j % 2 ? z1 : z0);
        }
        z[j] = eps - m * (double)(i - j);
        if (j == 0 || z[j] > zmax)
            zmax = z[j];
    }
    for (uint64_t j = 0; j <= i; j++)
        sum += (z[j] = exp(z[j] - zmax));
    for (uint64_t j = 0; j <= i; j++) {
        tv += fabs((v != NULL ? v[j] : (double)w[j]) - z[j] / sum);
        if (w[j] == 0.0f)
            lost += z[j] / sum;
    }
    out->tv_distance = 0.5 * tv;
    out->mass_lost = lost;
    free(z);
    free(v);
    free(sorted);
}

static void bworker(void *arg)
{
    bteam *t = arg;
    const abl_sim_setup *s = t->s;
    uint64_t n = s->em.n, mid = abl_bidir_mid(n);
    float *x = malloc(n * sizeof *x), *e = malloc(n * sizeof *e), *w = malloc(n * sizeof *w);
    if (x == NULL || e == NULL || w == NULL)
        atomic_store(&t->failed, (int)ABL_ERR_NO_MEMORY);
    uint64_t zeros = 0, lost = 0;
    int infl = s->em.infl_active;
    abl_sim_head *res = &t->out->results[t->head];
    while (atomic_load(&t->failed) == 0) {
        uint64_t i = atomic_fetch_add(&t->next_row, 1);
        if (i >= n)
            break;
        if (!bidir_logits(t, i, x)) {
            atomic_store(&t->failed, (int)ABL_ERR_UNSUPPORTED);
            break;
        }
        /* a row of N keys in key order: the causal row code with its last key at N - 1 */
        uint64_t z = abl_sim_row_weights(s, n - 1, x, e, w);
        zeros += z;
        const abl_simulate_config *cfg = &t->out->config;
        if (cfg->row_hook != NULL) {   /* every key 0..N-1 of row i */
            pthread_mutex_lock(&t->hook_mu);
            cfg->row_hook(cfg->row_hook_ctx, s->schedule.slopes[t->head].index, i, x, w);
            pthread_mutex_unlock(&t->hook_mu);
        }
        if (i == mid)
            res->mid_row_zeros = z;
        if (i == n - 1) {
            res->row_zeros = z;
            end_row_stats(t, x, e, w, res);
        }
        if (infl) {   /* P.V in pv-dtype/pv-accumulate can lose a key its weight keeps (llama.cpp: P to F16) */
            uint64_t l = abl_influence_count(&s->em, w, n, i == n - 1 ? &res->first_influence_zero : NULL);
            lost += l;
            if (i == n - 1)
                res->row_influence_zeros = l;
        }
    }
    atomic_fetch_add(&t->zeros, zeros);
    atomic_fetch_add(&t->lost, lost);
    free(x);
    free(e);
    free(w);
}

/* Head h's table: the logit (zero scores) or the bias magnitude at every distance. */
static abl_status bidir_table(const abl_sim_setup *s, int h, float *table)
{
    const abl_emul *em = &s->em;
    for (uint64_t d = 0; d < em->n; d++) {
        float mag = abl_emul_bias_mag(em, &s->hd[h], d);
        float v = s->gaussian ? mag : abl_emul_logit(em, &s->hd[h], 0.0f, d, mag);
        if (!isfinite(v))
            return ABL_ERR_UNSUPPORTED;
        table[d] = v;
    }
    return ABL_OK;
}

abl_status abl_simulate_bidir_run(const abl_simulate_config *cfg, abl_simulation *out)
{
    memset(out, 0, sizeof *out);
    abl_sim_setup s;
    abl_status st = abl_sim_setup_init(cfg, &s);
    if (st != ABL_OK)
        return st;
    st = abl_bidir_check(&s);
    int infl = s.em.infl_active;
    out->config = *cfg;
    out->logit_std = s.std;
    out->heads = s.heads;
    out->results = calloc((size_t)s.heads, sizeof *out->results);
    bteam t;
    memset(&t, 0, sizeof t);
    t.s = &s;
    t.out = out;
    t.table = malloc(cfg->context * sizeof *t.table);
    pthread_mutex_init(&t.hook_mu, NULL);
    if (st == ABL_OK && (out->results == NULL || t.table == NULL))
        st = ABL_ERR_NO_MEMORY;
    int nt = abl_sim_threads(cfg->threads);
    for (int h = 0; st == ABL_OK && h < s.heads; h++) {
        out->results[h].slope = s.schedule.slopes[h];
        out->results[h].slope_held = s.hd[h].held;
        if ((st = bidir_table(&s, h, t.table)) != ABL_OK)
            break;
        t.head = h;
        atomic_init(&t.next_row, 0);
        atomic_init(&t.zeros, 0);
        atomic_init(&t.lost, 0);
        atomic_init(&t.failed, 0);
        abl_sim_team_run(nt, bworker, &t, 0, NULL, NULL);
        st = (abl_status)atomic_load(&t.failed);
        out->results[h].matrix_zeros = atomic_load(&t.zeros);
        out->results[h].matrix_influence_zeros = atomic_load(&t.lost);
        if (cfg->progress.fn != NULL)
            cfg->progress.fn(cfg->progress.ctx, (double)(h + 1) * cfg->context * cfg->context,
                             (double)s.heads * cfg->context * cfg->context);
    }
    out->threads_used = nt;
    pthread_mutex_destroy(&t.hook_mu);
    free(t.table);
    out->schedule = s.schedule; /* the results' slopes point into it */
    memset(&s.schedule, 0, sizeof s.schedule);
    abl_sim_setup_free(&s);
    if (st != ABL_OK) {
        abl_simulation_free(out);
        return st;
    }
    BIDIR_TOTALS(out, infl);
    return ABL_OK;
}

/* ---- the predictor ---- */

/* Zero keys of a row with horizons a (left, with the diagonal) and b (right) when exactly the distances
 * d >= D are zero (D > max(a, b): none). */
static uint64_t two_sided(uint64_t a, uint64_t b, uint64_t D)
{
    uint64_t z = a >= D ? a - D + 1 : 0;
    uint64_t D1 = D < 1 ? 1 : D;
    return z + (b >= D1 ? b - D1 + 1 : 0);
}

/* f as an exact integer in units of 2^-149 (every binary32 value is a whole number of them). */
static void units_of(mpz_t out, float f)
{
    int ex;
    float fr = frexpf(f, &ex);
    mpz_set_d(out, (double)ldexpf(fr, 24)); /* the 24-bit significand, exact */
    int sh = ex - 24 + 149;
    if (sh >= 0)
        mpz_mul_2exp(out, out, (mp_bitcnt_t)sh);
    else
        mpz_tdiv_q_2exp(out, out, (mp_bitcnt_t)-sh); /* exact: the low bits are zero for a subnormal */
}

typedef struct bpred {
    const abl_sim_setup *s;
    const abl_emul *em;
    uint64_t n;
    float *T;     /* logit by distance */
    float *ed;    /* eager: e(d) against the diagonal's logit */
    int64_t *Dg;  /* flash: the first zero distance against the running max of a block starting g away */
} bpred;

static int eager_zero_d(const bpred *c, uint64_t d, float s, float r)
{
    float ex = c->ed[d];
    return ex == 0.0f || abl_emul_zero(c->em, abl_emul_eager_p32(c->em, ex, s, r));
}

/* Smallest d in [lo, hi] with ZERO (monotone: false then true), or hi + 1. */
#define FIRST_TRUE(lo, hi, ZERO, out)                                                                          \
    do {                                                                                                       \
        uint64_t l_ = (lo), h_ = (hi) + 1;                                                                     \
        while (l_ < h_) {                                                                                      \
            uint64_t d = l_ + (h_ - l_) / 2;                                                                   \
            if (ZERO)                                                                                          \
                h_ = d;                                                                                        \
            else                                                                                               \
                l_ = d + 1;                                                                                    \
        }                                                                                                      \
        (out) = l_;                                                                                            \
    } while (0)

/* Eager, zero logits: e(d) is the same in every row (the row max is the diagonal's logit), and row i's
 * exact sum is E(0..i) + E(1..N-1-i), kept exactly as integers (GMP) as the two horizons move; it is
 * rounded once to fp32 (sum=exact), then the first zero distance is bisected. */
static void bidir_predict_eager(const bpred *c, abl_pred_head *out)
{
    uint64_t n = c->n, mid = abl_bidir_mid(n);
    float m = c->T[0];
    for (uint64_t d = 0; d < n; d++)
        c->ed[d] = abl_emul_eager_exp(c->em, c->T[d], m);
    mpz_t L, R, u, S;
    mpz_inits(L, R, u, S, (mpz_ptr)0);
    for (uint64_t d = 0; d < n; d++) {    /* R = E(0..N-1): the right horizon of row 0 */
        units_of(u, c->ed[d]);
        mpz_add(R, R, u);
    }
    mpz_t e0;
    mpz_init(e0);
    units_of(e0, c->ed[0]);
    mpfr_t f;
    mpfr_init2(f, 24);
    for (uint64_t i = 0; i < n; i++) {
        units_of(u, c->ed[i]);
        mpz_add(L, L, u);                 /* L = E(0..i) */
        if (i > 0) {
            units_of(u, c->ed[n - i]);
            mpz_sub(R, R, u);             /* R = E(0..N-1-i) */
        }
        mpz_add(S, L, R);
        mpz_sub(S, S, e0);                /* the diagonal once */
        mpfr_set_z_2exp(f, S, -149, MPFR_RNDN);
        float s = mpfr_get_flt(f, MPFR_RNDN);
        float r = (float)(1.0 / (double)s);
        uint64_t a = i, b = n - 1 - i, D;
        FIRST_TRUE(0, a > b ? a : b, eager_zero_d(c, d, s, r), D);
        uint64_t z = two_sided(a, b, D);
        out->matrix_zeros += z;
        if (i == mid)
            out->mid_row_zeros = z;
        if (i == n - 1) {
            out->row_zeros = z;
            out->first_blind = D <= a ? (int64_t)D : -1;
        }
    }
    mpfr_clear(f);
    mpz_clears(L, R, u, S, e0, (mpz_ptr)0);
}

static int flash_zero(const bpred *c, uint64_t d, float ms)
{
    return abl_emul_zero(c->em, abl_emul_flash_exp(c->em, c->T[d], ms));
}

/* Flash (FlashAttention-2 non-causal): the key blocks run from the last down; a weight is P, decided
 * against the running max when its block is processed. With zero logits the running max of a block
 * above the query's (its first key g > 0 away) is T[g], and from the query's block on it is T[0]: so
 * D(g), the first zero distance against T[g], is computed once per g, and each row adds up its blocks. */
static void bidir_predict_flash(const bpred *c, abl_pred_head *out)
{
    const abl_emul *em = c->em;
    uint64_t n = c->n, mid = abl_bidir_mid(n);
    uint64_t B = em->block > 0 ? (uint64_t)em->block : n;
    for (uint64_t g = 0; g < n; g++) {
        float ms = abl_emul_max_scaled(em, c->T[g]);
        uint64_t D;
        FIRST_TRUE(g, n - 1, flash_zero(c, d, ms), D);
        c->Dg[g] = (int64_t)D;
    }
    uint64_t D0 = (uint64_t)c->Dg[0];
    for (uint64_t i = 0; i < n; i++) {
        uint64_t qb = i / B;
        /* keys of the query's block and below: against T[0]; the left horizon i, and the right part of
         * the query's block */
        uint64_t right_in = (qb + 1) * B - 1 < n - 1 ? (qb + 1) * B - 1 - i : n - 1 - i;
        uint64_t z = two_sided(i, right_in, D0);
        for (uint64_t lo = (qb + 1) * B; lo < n; lo += B) {
            uint64_t g = lo - i, top = lo + B - 1 < n - 1 ? B - 1 : n - 1 - lo; /* d in [g, g + top] */
            uint64_t D = (uint64_t)c->Dg[g];
            if (D <= g + top)
                z += g + top - D + 1;
        }
        out->matrix_zeros += z;
        if (i == mid)
            out->mid_row_zeros = z;
        if (i == n - 1) {
            out->row_zeros = z;
            out->first_blind = D0 <= i ? (int64_t)D0 : -1;
        }
    }
}

abl_status abl_predict_bidir_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n;
    if (em->softmax == ABL_SOFTMAX_GGML)   /* llama.cpp's soft_max: weights and influence, abl_ggml_bidir.c */
        return abl_ggml_bidir_predict_head(s, h, out);
    if (em->softmax == ABL_SOFTMAX_GGML_FLASH)   /* llama.cpp's flash attention: abl_ggml_fa_bidir.c */
        return abl_ggml_fa_bidir_predict_head(s, h, out);
    if (em->softmax == ABL_SOFTMAX_TRITON_LSE)   /* MosaicBERT's Triton kernel: abl_triton_predict.c */
        return abl_triton_predict_head(s, h, 1, out);
    bpred c = {s, em, n, malloc(n * sizeof(float)), NULL, NULL};
    abl_status st = c.T != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK && em->softmax == ABL_SOFTMAX_EAGER)
        st = (c.ed = malloc(n * sizeof(float))) != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    else if (st == ABL_OK && em->softmax == ABL_SOFTMAX_FLASH)
        st = (c.Dg = malloc(n * sizeof(int64_t))) != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    else if (st == ABL_OK)
        st = ABL_ERR_UNSUPPORTED;   /* sdpa kinds: simulate emulates them both ways; no predictor yet */
    for (uint64_t d = 0; st == ABL_OK && d < n; d++) {
        c.T[d] = abl_emul_logit(em, &s->hd[h], 0.0f, d, abl_emul_bias_mag(em, &s->hd[h], d));
        if (!isfinite(c.T[d]))
            st = ABL_ERR_UNSUPPORTED;
    }
    memset(out, 0, sizeof *out);
    out->first_blind = -1;
    if (st == ABL_OK && em->softmax == ABL_SOFTMAX_EAGER)
        bidir_predict_eager(&c, out);
    else if (st == ABL_OK)
        bidir_predict_flash(&c, out);
    free(c.T);
    free(c.ed);
    free(c.Dg);
    return st;
}

abl_status abl_predict_bidir_run(const abl_sim_setup *s, abl_prediction *out)
{
    abl_status st = abl_bidir_check(s);
    /* the predictor counts influence both ways for ggml's soft_max only (P to F16 before P.V) */
    int infl = s->em.infl_active && s->em.softmax == ABL_SOFTMAX_GGML;
    if (st == ABL_OK && s->em.infl_active && !infl)
        st = ABL_ERR_UNSUPPORTED;   /* simulate counts it */
    if (st != ABL_OK)
        return st;
    out->heads = s->heads;
    out->results = calloc((size_t)s->heads, sizeof *out->results);
    if (out->results == NULL)
        return ABL_ERR_NO_MEMORY;
    for (int h = 0; h < s->heads && st == ABL_OK; h++)
        st = abl_predict_bidir_head(s, h, &out->results[h]);
    if (st != ABL_OK) {
        abl_prediction_free(out);
        return st;
    }
    BIDIR_TOTALS(out, infl);
    return ABL_OK;
}

abl_status abl_bidir_report_meta(abl_report *r)
{
    return abl_report_meta(r, "attention", "attention",
                           "bidirectional: every row attends all N keys at d = |i - j| (N × N matrix); "
                           "'last row' = the end row i = N - 1, middle row i = ⌊(N - 1)/2⌋",
                           "\"bidirectional\"");
}

abl_status abl_bidir_report_summary(abl_report *r, uint64_t mid_zeros, uint64_t heads, uint64_t n)
{
    char *t = abl_strf("%llu", (unsigned long long)mid_zeros);
    abl_status st = t != NULL ? abl_report_summary(r, "middle_row_zeros", "zero weights in the middle rows", t, t)
                              : ABL_ERR_NO_MEMORY;
    free(t);
    char *text = NULL, *json = NULL;
    abl_sim_fraction_cells(mid_zeros, heads, n, 0, &text, &json);
    if (st == ABL_OK)
        st = text != NULL && json != NULL ? abl_report_summary(r, "middle_row_fraction", "middle row fraction", text, json)
                                          : ABL_ERR_NO_MEMORY;
    free(text);
    free(json);
    return st;
}
