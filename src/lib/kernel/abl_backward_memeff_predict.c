/* alibi-blind: the zero-logit predictor of the memory-efficient SDPA backward (softmax sdpa-efficient,
 * backward kind memeff; modelled from source, not measured: docs/pipelines.md §9, spec §15). It answers
 * what abl_backward_run's emulation (abl_backward_memeff.c) answers for zero logits at unit upstream,
 * without the N x N work.
 *
 * The emulation's dS of key j in row i is dS(e) = dtype(fp32(fp32(2^j P) scale)) with
 * P = dtype(RN32(exp(e))) and e = fp32(x_j - lse_i), lse_i = fp32(fp32(mi / log2 e) + fp32(log s)) from
 * the forward's running max mi and row sum s. Every step is monotone in e, so dS = 0 exactly when
 * e <= E*, the largest binary32 with dS(E*) = 0, found once per head by bisection over the ordered bit
 * patterns with the emulation's own function (abl_memeff_ds_zero_e, which simulate --backward uses too).
 * fp32(x - lse) is monotone in x, and zero logits make x monotone in the distance (the bias; checked), so a
 * row's zero-dS keys are the distances
 * d >= D_i, found by bisection. Only mi and s depend on the forward's blocks: the forward predictor
 * (abl_predict_sdpa.c) hands them over row by row (abl_sdpa_cut) and counts, beside its own zero weights,
 * those at distances >= D_i: the keys blind in both, so the gradient-only counts are the differences.
 * Where the logits are not monotone (the forward predictor says so) every row is emulated instead. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "abl_backward_memeff.h"
#include "kernel/abl_predict_sdpa.h"

typedef struct mctx {
    const abl_emul *em;
    const float *T;     /* the zero-score logit by position */
    uint64_t n;
    int rel;            /* relative/symmetric form: x depends on the distance only */
    float estar;        /* dS = 0 iff fp32(x - lse) <= estar */
    float lse_c;        /* relative: the last lse and its cut */
    uint64_t D_c;
    int cached;
    uint64_t matrix, row;   /* zero dS: the matrix, the last row */
    int64_t first;          /* the last row's first zero-dS distance; -1: none */
} mctx;

static int ds_zero(const mctx *m, float x, float lse)
{
    return (float)((double)x - (double)lse) <= m->estar;
}

/* The cut of row i: the smallest distance whose dS is 0 (row + 1, or n for the relative form: none),
 * and the row's counts. */
static uint64_t cut_at(void *ctx, uint64_t row, float mi, float s)
{
    mctx *m = ctx;
    float lse = abl_memeff_lse(mi, s);
    uint64_t D;
    if (m->rel && m->cached && lse == m->lse_c) {
        D = m->D_c;
    } else if (m->rel) {   /* x = T[d], non-increasing in d: the zeros are d >= D, D in [0, n] */
        uint64_t lo = 0, hi = m->n;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (ds_zero(m, m->T[mid], lse))
                hi = mid;
            else
                lo = mid + 1;
        }
        D = lo;
        m->lse_c = lse;
        m->D_c = D;
        m->cached = 1;
    } else {               /* x_j = T[pos(j)], non-decreasing in j: the zeros are keys j <= J */
        int64_t lo = -1, hi = (int64_t)row + 1;
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (ds_zero(m, m->T[abl_emul_pos(m->em, row, (uint64_t)mid)], lse))
                lo = mid;
            else
                hi = mid;
        }
        D = row - (uint64_t)lo;   /* lo = -1: row + 1, none */
    }
    uint64_t z = D <= row ? row + 1 - D : 0;
    m->matrix += z;
    if (row == m->n - 1) {
        m->row = z;
        m->first = D <= row ? (int64_t)D : -1;
    }
    return D;
}

/* The logits monotone as the cut needs: non-increasing in the distance (relative) or in the key. */
static int monotone(const mctx *m)
{
    for (uint64_t k = 1; k < m->n; k++) {
        float a = m->T[m->rel ? k - 1 : abl_emul_pos(m->em, m->n - 1, k)];
        float b = m->T[m->rel ? k : abl_emul_pos(m->em, m->n - 1, k - 1)];
        if (!(b <= a))
            return 0;
    }
    return 1;
}

/* Every row emulated (logits the cut cannot take): the emulation's own row functions and counts. */
static abl_status rows_head(const abl_emul *em, const float *T, uint64_t n, double up, float scale,
                            abl_bwd_head *o)
{
    float *x = malloc(n * sizeof *x), *acc = malloc(n * sizeof *acc), *w = malloc(n * sizeof *w);
    float *ds = malloc(n * sizeof *ds);
    abl_status st = x && acc && w && ds ? ABL_OK : ABL_ERR_NO_MEMORY;
    for (uint64_t i = 0; st == ABL_OK && i < n; i++) {
        for (uint64_t j = 0; j <= i; j++)
            x[j] = T[abl_emul_pos(em, i, j)];
        (void)abl_sdpa_row(em, x, i + 1, acc, w, NULL);
        abl_memeff_backward_row(&em->out, em->block, scale, up, x, i + 1, ds);
        for (uint64_t k = i + 1; k-- > 0;) {   /* the largest k first: the smallest distance */
            int64_t d = (int64_t)(i - k);
            if (i == n - 1 && w[k] == 0.0f && o->fwd_first_blind < 0)
                o->fwd_first_blind = d;
            if (ds[k] != 0.0f)
                continue;
            o->matrix_zeros++;
            o->only_matrix += w[k] != 0.0f;
            if (i == n - 1) {
                o->row_zeros++;
                o->only_row += w[k] != 0.0f;
                if (o->first_blind < 0)
                    o->first_blind = d;
            }
        }
    }
    free(x);
    free(acc);
    free(w);
    free(ds);
    return st;
}

abl_status abl_memeff_predict_head(const abl_emul *em, const float *T, uint64_t n, double up, float scale,
                                   abl_bwd_head *o)
{
    memset(o, 0, sizeof *o);
    o->first_blind = o->fwd_first_blind = -1;
    mctx m;
    memset(&m, 0, sizeof m);
    m.em = em;
    m.T = T;
    m.n = n;
    m.rel = em->form == ABL_BIAS_RELATIVE || em->form == ABL_BIAS_SYMMETRIC;
    m.estar = abl_memeff_ds_zero_e(&em->out, up, scale);
    m.first = -1;
    if (!monotone(&m))
        return rows_head(em, T, n, up, scale, o);
    abl_sdpa_cut cut = {cut_at, &m, 0, 0};
    abl_pred_head f;
    abl_status st = abl_predict_sdpa_head_cut(em, T, n, &cut, &f);
    if (st == ABL_ERR_UNSUPPORTED)
        return rows_head(em, T, n, up, scale, o);
    if (st != ABL_OK)
        return st;
    o->fwd_first_blind = f.first_blind;
    o->first_blind = m.first;
    o->row_zeros = m.row;
    o->matrix_zeros = m.matrix;
    o->only_row = m.row - cut.row_zeros;        /* zero dS, minus those whose weight is 0 too */
    o->only_matrix = m.matrix - cut.matrix_zeros;
    return ABL_OK;
}

typedef struct mteam {
    const abl_sim_setup *s;
    double up;
    float scale;
    abl_bwd_head *out;
    atomic_int next;
    atomic_int failed;
} mteam;

static void mworker(void *arg)
{
    mteam *t = arg;
    const abl_emul *em = &t->s->em;
    uint64_t n = em->n;
    float *T = malloc(n * sizeof *T);
    if (T == NULL)
        atomic_store(&t->failed, (int)ABL_ERR_NO_MEMORY);
    for (;;) {
        int h = atomic_fetch_add(&t->next, 1);
        if (h >= t->s->heads || atomic_load(&t->failed) != 0)
            break;
        const abl_emul_head *eh = &t->s->hd[h];
        int finite = 1;
        for (uint64_t pos = 0; pos < n; pos++) {
            T[pos] = abl_emul_logit(em, eh, 0.0f, pos, abl_emul_bias_mag(em, eh, pos));
            finite &= isfinite(T[pos]) != 0;
        }
        abl_status hs = finite ? abl_memeff_predict_head(em, T, n, t->up, t->scale, &t->out[h]) : ABL_ERR_UNSUPPORTED;
        if (hs != ABL_OK)
            atomic_store(&t->failed, (int)hs);
    }
    free(T);
}

abl_status abl_memeff_predict(const abl_simulate_config *cfg, long log2_upstream, abl_bwd_head **out, int *heads)
{
    *out = NULL;
    *heads = 0;
    abl_sim_setup s;
    abl_status st = abl_sim_setup_init(cfg, &s);
    if (st != ABL_OK)
        return st;
    /* zero logits on a causal layer only (the emulation's rows are causal; Gaussian logits are simulated) */
    if (s.gaussian || s.em.softmax != ABL_SOFTMAX_SDPA_EFFICIENT || cfg->attention == ABL_ATTENTION_BIDIRECTIONAL) {
        abl_sim_setup_free(&s);
        return ABL_ERR_UNSUPPORTED;
    }
    abl_bwd_head *res = calloc((size_t)s.heads, sizeof *res);
    if (res == NULL) {
        abl_sim_setup_free(&s);
        return ABL_ERR_NO_MEMORY;
    }
    mteam t;
    t.s = &s;
    t.up = ldexp(1.0, (int)log2_upstream);
    t.scale = abl_memeff_scale(cfg->pipeline.head_dim);
    t.out = res;
    atomic_init(&t.next, 0);
    atomic_init(&t.failed, 0);
    int nt = abl_sim_threads(cfg->threads);
    abl_sim_team_run(nt > s.heads ? s.heads : nt, mworker, &t, 0, NULL, NULL);
    st = (abl_status)atomic_load(&t.failed);
    if (st == ABL_OK) {
        *out = res;
        *heads = s.heads;
    } else {
        free(res);
    }
    abl_sim_setup_free(&s);
    return st;
}
