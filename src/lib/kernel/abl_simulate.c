/* alibi-blind: `simulate` — every weight of a causal attention layer, emulated through a pipeline's
 * roundings (abl_round.h), streamed row by row: O(N) memory per thread, rows of one head shared
 * between all threads, heads one after the other. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gmp.h>
#include "abl/core/decimal.h"
#include "abl/kernel/simulate.h"
#include "abl/core/threshold.h"
#include "abl/core/blindness.h"
#include "abl/core/fraction.h"
#include "kernel/abl_flex.h"
#include "kernel/abl_triton.h"
#include "kernel/abl_round.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_engines_ggml_cuda.h"
#include "kernel/abl_engines_trtllm.h"
#include "kernel/abl_influence.h"
#include "kernel/abl_ggml.h"
#include "kernel/abl_simulate_fast.h"
#include "kernel/abl_fastgauss.h"
#include "kernel/abl_simulate_bidir.h"
#include "abl_internal.h"
#include "kernel/abl_kernel_internal.h"

/* ---- shared set-up (also used by the predictor) ---- */

abl_status abl_sim_setup_init(const abl_simulate_config *cfg, abl_sim_setup *s)
{
    memset(s, 0, sizeof *s);
    if (cfg == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (cfg->context < 1 || cfg->context > ABL_SIMULATE_MAX_CONTEXT)
        return ABL_ERR_CONTEXT_RANGE;
    if (cfg->heads < 0 || cfg->heads > ABL_MAX_HEADS)
        return ABL_ERR_HEADS_RANGE;
    abl_status st = abl_emul_init(&cfg->pipeline, cfg->context, &s->em);
    if (st != ABL_OK)
        return st;
    s->std = 0.0;
    if (cfg->logit_std != NULL) {
        if (mpq_sgn(cfg->logit_std) < 0 || mpq_cmp_ui(cfg->logit_std, ABL_SIMULATE_MAX_LOGIT_STD, 1) > 0)
            return ABL_ERR_BAD_NUMBER;
        s->std = mpq_get_d(cfg->logit_std);
    }
    s->gaussian = s->std > 0.0;
    s->seed = cfg->seed;
    if (cfg->logits != NULL) {
        if (s->gaussian)
            return ABL_ERR_INVALID_ARGUMENT;
        if (cfg->logits->n != cfg->context)
            return ABL_ERR_MISMATCH;
        abl_format f32;
        if ((st = abl_format_lookup("fp32", &f32)) != ABL_OK ||
            (st = abl_fp_init(cfg->logits_dtype ? cfg->logits_dtype : &f32, &s->score_fp)) != ABL_OK)
            return st;
        s->captured = cfg->logits;
        s->gaussian = 1;
    }
    /* Target-fitted schedules are fitted to the paper's tau (the ftz kind) of the output dtype. */
    long k;
    st = abl_threshold_log2_multiple(&cfg->pipeline.output_dtype, ABL_TAU_FTZ, &k);
    if (st != ABL_OK)
        return st;
    st = abl_schedule_build(cfg->slopes, cfg->heads, k, &s->schedule);
    if (st != ABL_OK)
        return st;
    s->heads = s->schedule.count;
    if (s->captured != NULL && s->captured->ndim == 3 && s->captured->heads != (uint64_t)s->heads) {
        abl_sim_setup_free(s);
        return ABL_ERR_MISMATCH;
    }
    s->hd = calloc((size_t)s->heads, sizeof *s->hd);
    s->m_exact = calloc((size_t)s->heads, sizeof *s->m_exact);
    if (s->hd == NULL || s->m_exact == NULL) {
        abl_sim_setup_free(s);
        return ABL_ERR_NO_MEMORY;
    }
    for (int h = 0; h < s->heads; h++) {
        /* an explicit slopes: list is what the code holds: taken as given */
        if (s->em.slope_calc == ABL_SLOPE_CALC_EXACT || s->schedule.kind == ABL_SCHEDULE_SLOPES) {
            st = abl_emul_head_init(&s->em, &s->schedule.slopes[h], &s->hd[h]);
        } else {
            float v;
            st = abl_slope_code_value(s->em.slope_calc, &s->schedule, h, &v);
            if (st == ABL_OK)
                st = abl_emul_head_init_value(&s->em, (double)v, &s->hd[h]);
        }
        if (st == ABL_OK) {
            mpfr_t m;
            mpfr_init2(m, 53);
            st = abl_slope_mpfr(m, &s->schedule.slopes[h], MPFR_RNDN);
            s->m_exact[h] = mpfr_get_d(m, MPFR_RNDN);
            mpfr_clear(m);
        }
        if (st != ABL_OK) {
            abl_sim_setup_free(s);
            return st;
        }
    }
    /* flash's KV splits and vllm-triton's 3-D kernel follow the head count (abl_engines.c) */
    if ((st = abl_engine_setup_heads(&cfg->pipeline, s->heads, &s->em)) != ABL_OK)
        abl_sim_setup_free(s);
    return st;
}

void abl_sim_setup_free(abl_sim_setup *s)
{
    abl_schedule_free(&s->schedule);
    free(s->hd);
    free(s->m_exact);
    s->hd = NULL;
    s->m_exact = NULL;
}

int abl_sim_threads(int requested)
{
    long n = requested > 0 ? requested : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > 256)
        n = 256;
    return (int)n;
}

int abl_sim_estimate_threads(int requested)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = abl_sim_threads(requested);
    return cores >= 1 && threads > cores ? (int)cores : threads;
}

abl_status abl_sim_estimate_schedule(const abl_simulate_config *cfg, abl_schedule *sched)
{
    long k;
    abl_status st = abl_threshold_log2_multiple(&cfg->pipeline.output_dtype, ABL_TAU_FTZ, &k);
    if (st != ABL_OK)
        return st;
    return abl_schedule_build(cfg->slopes, cfg->heads, k, sched);
}

typedef struct team_member {
    void (*fn)(void *);
    void *arg;
} team_member;

static void *team_thread(void *p)
{
    team_member *m = p;
    m->fn(m->arg);
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    return NULL;
}

int abl_sim_team_run(int nt, void (*fn)(void *arg), void *args, size_t argsize, void (*ready)(void *ctx, int n),
                     void *ctx)
{
    pthread_t *tid = nt > 1 ? calloc((size_t)nt, sizeof *tid) : NULL;
    team_member *m = nt > 1 ? calloc((size_t)nt, sizeof *m) : NULL;
    int started = 1;
    for (int k = 1; tid != NULL && m != NULL && k < nt; k++) {
        m[started] = (team_member){fn, (char *)args + (size_t)started * argsize};
        if (pthread_create(&tid[started], NULL, team_thread, &m[started]) != 0)
            break;
        started++;
    }
    if (ready != NULL)
        ready(ctx, started);
    team_member self = {fn, args};
    team_thread(&self);
    for (int k = 1; k < started; k++)
        pthread_join(tid[k], NULL);
    free(tid);
    free(m);
    return started;
}

/* ---- Gaussian logits: a counter-based generator, so every (seed, head, i, j) has its own value
 * whatever thread computes it ---- */

static inline uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Box-Muller: keys j = 2k and 2k + 1 of a row share one draw (cos and sin). (head - 1, i, k) is packed
 * into 16 + 24 + 24 bits (H <= 2^16, N <= 2^24): one key per pair of logits. */
void abl_sim_gauss_pair(uint64_t seed, uint64_t head, uint64_t i, uint64_t k, double *z0, double *z1)
{
    uint64_t h1 = mix64(((head - 1) << 48 | i << 24 | k) ^ mix64(seed));
    uint64_t h2 = mix64(h1 ^ UINT64_C(0xD1B54A32D192ED03));
    double u1 = (double)((h1 >> 11) + 1) * 0x1p-53;   /* (0, 1] */
    double u2 = (double)(h2 >> 11) * 0x1p-53;         /* [0, 1) */
    double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586 * u2;
    *z0 = r * cos(t);
    *z1 = r * sin(t);
}

static double gauss(uint64_t seed, uint64_t head, uint64_t i, uint64_t j)
{
    double z0, z1;
    abl_sim_gauss_pair(seed, head, i, j / 2, &z0, &z1);
    return j % 2 ? z1 : z0;
}

/* ---- one row ---- */

typedef struct row_ctx {
    const abl_sim_setup *s;
    int head;                 /* 0-based, model order */
    const float *table;       /* zero logits: logit by position; Gaussian: |bias| by position */
    uint64_t n;
    uint64_t *zeros2;         /* em->zero2: the eager rows add their weights p <= zf2 here (else NULL) */
    int64_t *first2;          /* the last row (optional): its smallest d with p <= zf2, else left as it is */
} row_ctx;

/* The logits of row i; 0 when one is not finite. */
static int row_logits(const row_ctx *rc, uint64_t i, float *x)
{
    const abl_emul *em = &rc->s->em;
    if (!rc->s->gaussian) {
        for (uint64_t j = 0; j <= i; j++)
            x[j] = rc->table[abl_emul_pos(em, i, j)];
        return 1;
    }
    const abl_emul_head *eh = &rc->s->hd[rc->head];
    uint64_t hidx = (uint64_t)rc->s->schedule.slopes[rc->head].index;
    int ok = 1;
    if (rc->s->captured != NULL) {
        /* captured scores: read into x, rounded to the model's score dtype, then biased in place */
        abl_npy_row(rc->s->captured, (uint64_t)rc->head, i, i + 1, x);
        for (uint64_t j = 0; j <= i; j++) {
            uint64_t pos = abl_emul_pos(em, i, j);
            float score = abl_fp_round32(&rc->s->score_fp, x[j]);
            x[j] = abl_emul_logit(em, eh, score, pos, rc->table[pos]);
            ok &= isfinite(x[j]) != 0 || abl_emul_inf_ok(em);
        }
        return ok;
    }
    double z[2] = {0.0, 0.0};
    for (uint64_t j = 0; j <= i; j++) {
        uint64_t pos = abl_emul_pos(em, i, j);
        if (j % 2 == 0)
            abl_sim_gauss_pair(rc->s->seed, hidx, i, j / 2, &z[0], &z[1]);
        float score = (float)(rc->s->std * z[j % 2]);
        x[j] = abl_emul_logit(em, eh, score, pos, rc->table[pos]);
        ok &= isfinite(x[j]) != 0 || abl_emul_inf_ok(em);   /* ggml: -inf is a masked key */
    }
    return ok;
}

static float row_max(const float *x, uint64_t count)
{
    float m = x[0];
    for (uint64_t j = 1; j < count; j++)
        if (x[j] > m)
            m = x[j];
    return m;
}

/*
 * Zero weights of row i (x already filled, e is scratch). wout (optional) gets the weights as rounded
 * into the output dtype (eager: p; flash: P); tvw (optional, the last row) the weights as they act on
 * V (eager: p; flash: P rescaled to the final max and divided by the row sum, in binary64).
 */
static uint64_t row_zeros(const row_ctx *rc, uint64_t i, const float *x, float *e, float *wout, double *tvw)
{
    const abl_emul *em = &rc->s->em;
    uint64_t count = i + 1, zeros = 0;
    if (em->softmax == ABL_SOFTMAX_SDPA_EFFICIENT || em->softmax == ABL_SOFTMAX_SDPA_CUDNN)
        return abl_sdpa_row(em, x, count, e, wout, tvw);
    if (abl_emul_ggml(em))
        return abl_ggml_row(em, i, x, e, wout, tvw);
    if (abl_emul_engine(em))
        return abl_engine_row(em, i, x, e, wout, tvw);
    if (em->softmax == ABL_SOFTMAX_FLEX)
        return abl_flex_row(em, i, x, e, wout, tvw);   /* abl_flex.c */
    if (em->softmax == ABL_SOFTMAX_TRITON_LSE)
        return abl_triton_row(em, i, x, e, wout, tvw);   /* abl_triton.c */
    if (em->softmax == ABL_SOFTMAX_EAGER) {
        uint64_t zeros2 = 0;
        float m = row_max(x, count);
        for (uint64_t j = 0; j < count; j++)
            e[j] = abl_emul_eager_exp(em, x[j], m);
        float s = abl_emul_sum(em, e, count, rc->n);
        float r = (float)(1.0 / (double)s);
        for (uint64_t j = 0; j < count; j++) {
            float p = e[j] == 0.0f ? 0.0f : abl_emul_eager_p32(em, e[j], s, r);
            zeros += abl_emul_zero(em, p);
            zeros2 += p <= em->zf2;   /* the second threshold on the same p (kept only when asked) */
            if (rc->first2 != NULL && p <= em->zf2)
                *rc->first2 = (int64_t)(i - j);   /* j increases: the last is the smallest d */
            if (wout != NULL || tvw != NULL) {
                float q = abl_fp_round32(&em->out, p);
                if (wout != NULL)
                    wout[j] = q;
                if (tvw != NULL)
                    tvw[j] = q;
            }
        }
        if (rc->zeros2 != NULL)
            *rc->zeros2 += zeros2;
        return zeros;
    }
    /* flash: blocks of B keys from the diagonal block backwards; the running max includes the
     * block being processed (softmax_rescale_o reduces the block's max into row_max first). */
    uint64_t B = em->block > 0 ? (uint64_t)em->block : count;
    float final_max = tvw != NULL ? row_max(x, count) : 0.0f;
    float run = -INFINITY;
    double l = 0.0;
    for (uint64_t top = i / B + 1; top-- > 0;) {
        uint64_t lo = top * B, hi = lo + B - 1 < i ? lo + B - 1 : i;
        for (uint64_t j = lo; j <= hi; j++)
            if (x[j] > run)
                run = x[j];
        float ms = abl_emul_max_scaled(em, run);
        double factor = tvw != NULL ? exp2((double)em->c_log2 * ((double)run - (double)final_max)) : 1.0;
        for (uint64_t j = lo; j <= hi; j++) {
            e[j] = abl_emul_flash_exp(em, x[j], ms);
            zeros += abl_emul_zero(em, e[j]);
            if (wout != NULL || tvw != NULL) {
                float q = abl_fp_round32(&em->out, e[j]);
                if (wout != NULL)
                    wout[j] = q;
                if (tvw != NULL) {
                    tvw[j] = (double)q * factor;
                    l += (double)e[j] * factor;
                }
            }
        }
    }
    if (tvw != NULL)
        for (uint64_t j = 0; j < count; j++)
            tvw[j] /= l;
    return zeros;
}

uint64_t abl_sim_row_weights(const abl_sim_setup *s, uint64_t i, const float *x, float *e, float *wout)
{
    row_ctx rc = {s, 0, NULL, s->em.n, NULL, NULL};
    return row_zeros(&rc, i, x, e, wout, NULL);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void abl_sim_row_stats(const float *x, uint64_t n, uint64_t i, float *sorted, abl_sim_head *out)
{
    uint64_t distinct = 1, run = 1, longest = 1, tied = 0;
    if (sorted != NULL) {
        memcpy(sorted, x, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_float);
        for (uint64_t j = 1; j < n; j++)
            distinct += sorted[j] != sorted[j - 1];
    }
    for (uint64_t j = 1; j < n; j++) {
        run = x[j] == x[j - 1] ? run + 1 : 1;
        if (run > longest)
            longest = run;
    }
    for (uint64_t j = 0; j < n; j++)
        tied += j != i && x[j] == x[i];
    out->distinct_logits = distinct;
    out->longest_tie_run = longest;
    out->tied_with_diagonal = tied;
}

/* Statistics of the last row: zeros, ties, TV distance against a binary64 softmax of eps - m d. */
static abl_status last_row(const row_ctx *rc, float *x, float *e, float *wout, abl_sim_head *out)
{
    uint64_t n = rc->n, i = n - 1;
    double *w = malloc(n * sizeof *w), *z = malloc(n * sizeof *z);
    float *sorted = malloc(n * sizeof *sorted);
    if (w == NULL || z == NULL || sorted == NULL) {
        free(w);
        free(z);
        free(sorted);
        return ABL_ERR_NO_MEMORY;
    }
    uint64_t zeros = row_zeros(rc, i, x, e, wout, w);
    out->row_zeros = zeros;
    out->first_blind = -1;
    for (uint64_t d = 0; d <= i; d++) {
        if (w[i - d] == 0.0) {
            out->first_blind = (int64_t)d;
            break;
        }
    }
    out->first_influence_zero = out->first_blind;
    out->row_influence_zeros = zeros;
    if (rc->s->em.infl_active)   /* the worker passes the weights whenever P.V can lose more */
        out->row_influence_zeros = abl_influence_count(&rc->s->em, wout, n, &out->first_influence_zero);
    abl_sim_row_stats(x, n, i, sorted, out);
    /* exact logits: eps - m d with the exact slope (the row max is subtracted before exp) */
    double m = rc->s->m_exact[rc->head], zmax = -INFINITY;
    uint64_t hidx = (uint64_t)rc->s->schedule.slopes[rc->head].index;
    if (rc->s->captured != NULL)
        abl_npy_row(rc->s->captured, (uint64_t)rc->head, i, i + 1, sorted);   /* scratch: the scores */
    for (uint64_t j = 0; j <= i; j++) {
        double eps = rc->s->captured != NULL ? (double)abl_fp_round32(&rc->s->score_fp, sorted[j])
                     : rc->s->gaussian ? rc->s->std * gauss(rc->s->seed, hidx, i, j) : 0.0;
        z[j] = eps - m * (double)(i - j);
        if (z[j] > zmax)
            zmax = z[j];
    }
    double sum = 0.0;
    for (uint64_t j = 0; j <= i; j++) {
        z[j] = exp(z[j] - zmax);
        sum += z[j];
    }
    double tv = 0.0, lost = 0.0;
    for (uint64_t j = 0; j <= i; j++) {
        tv += fabs(w[j] - z[j] / sum);
        if (w[j] == 0.0)
            lost += z[j] / sum;
    }
    out->tv_distance = 0.5 * tv;
    out->mass_lost = lost;
    free(w);
    free(z);
    free(sorted);
    return ABL_OK;
}

/* ---- the thread team ---- */

/* A barrier whose party count is fixed only once every thread that could be started has started. */
typedef struct sbar {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count, waiting, go;
    unsigned long gen;
} sbar;

static void sbar_wait(sbar *b)
{
    pthread_mutex_lock(&b->mu);
    unsigned long g = b->gen;
    if (++b->waiting == b->count) {
        b->waiting = 0;
        b->gen++;
        pthread_cond_broadcast(&b->cv);
    } else {
        while (g == b->gen)
            pthread_cond_wait(&b->cv, &b->mu);
    }
    pthread_mutex_unlock(&b->mu);
}

static void sbar_start(sbar *b)
{
    pthread_mutex_lock(&b->mu);
    while (!b->go)
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

typedef struct team {
    const abl_sim_setup *s;
    abl_simulation *out;
    int nthreads;
    sbar barrier;
    float *table;             /* current head's table (N floats) */
    int fast;                 /* the fast exact rows apply (abl_simulate_fast.h) */
    float *rmax;              /* fast: each row's max logit (N floats) */
    abl_fast_gauss_head gh;   /* fast, Gaussian: the current head's logit bounds */
    int cap_skip;             /* fast, captured: keys may be skipped by their logit bound */
    int head;
    uint64_t chunk_rows, nchunks;
    atomic_uint_fast64_t next_chunk;
    atomic_uint_fast64_t zeros;
    atomic_uint_fast64_t lost;   /* influence-zero keys of the head (abl_influence.h) */
    atomic_uint_fast64_t zeros2; /* em.zero2: the head's weights p <= zf2 */
    atomic_int failed;        /* an abl_status, 0 while all is well */
    pthread_mutex_t hook_mu;  /* row_hook calls, one at a time */
    atomic_uint_fast64_t done; /* weights emulated, for progress reports */
    uint64_t total;
    pthread_mutex_t progress_mu; /* progress calls, one at a time (a busy reporter is skipped) */
} team;

/* Rows [lo, hi) have sum (i + 1) = (hi (hi + 1) - lo (lo + 1)) / 2 weights. */
static uint64_t chunk_weights(uint64_t lo, uint64_t hi)
{
    return hi * (hi + 1) / 2 - lo * (lo + 1) / 2;
}

static void report_progress(team *t, uint64_t add)
{
    uint64_t done = atomic_fetch_add(&t->done, add) + add;
    const abl_progress *p = &t->out->config.progress;
    if (p->fn != NULL && pthread_mutex_trylock(&t->progress_mu) == 0) {
        p->fn(p->ctx, done, t->total);
        pthread_mutex_unlock(&t->progress_mu);
    }
}

/* Thread 0, between barriers: the head's table (zero logits: the logit of every position; Gaussian:
 * the bias magnitude of every position). */
static void prepare_head(team *t, int h)
{
    const abl_sim_setup *s = t->s;
    const abl_emul *em = &s->em;
    uint64_t n = s->em.n;
    for (uint64_t pos = 0; pos < n; pos++) {
        float mag = abl_emul_bias_mag(em, &s->hd[h], pos);
        float v = s->gaussian ? mag : abl_emul_logit(em, &s->hd[h], 0.0f, pos, mag);
        if (!isfinite(v) && !abl_emul_inf_ok(em)) {   /* ggml: an infinite bias is a masked key (fp16 mask) */
            atomic_store(&t->failed, (int)ABL_ERR_UNSUPPORTED);
            return;
        }
        t->table[pos] = v;
    }
    if (t->fast && !s->gaussian)
        abl_fast_row_max(em, t->table, t->rmax);
    if (t->fast && s->gaussian && s->captured == NULL)
        abl_fast_gauss_prepare(s, h, t->table, &t->gh);   /* bounds for generated scores only */
    if (t->fast && s->captured != NULL)
        t->cap_skip = abl_fast_captured_skippable(s, t->table);
    t->head = h;
    /* big rows first; about 16 chunks per thread for balance */
    uint64_t want = (uint64_t)t->nthreads * 16, rows = n - em->first_row;   /* ggml rows=R: the last R */
    t->chunk_rows = rows / want > 0 ? rows / want : 1;
    t->nchunks = (rows + t->chunk_rows - 1) / t->chunk_rows;
    atomic_store(&t->next_chunk, 0);
    atomic_store(&t->zeros, 0);
    atomic_store(&t->lost, 0);
    atomic_store(&t->zeros2, 0);
}

typedef struct worker_arg {
    team *t;
    int id;
} worker_arg;

/* Row i through the fast exact rows (abl_simulate_fast.h): its zero weights in *rz; wout (optional) gets
 * the weights (and x the logits). 0 when the row cannot be done (a logit not finite). */
static int fast_row(team *t, const row_ctx *rc, abl_fast_thread *ft, uint64_t i, float *x, float *e, float *wout,
                    uint64_t *rz)
{
    const abl_sim_setup *s = t->s;
    int h = rc->head;
    *rz = 0;
    if (!s->gaussian) {
        *rz = abl_fast_row(&s->em, h, t->table, t->rmax, ft, i, wout != NULL ? x : NULL, wout);
        return 1;
    }
    if (s->captured != NULL)   /* captured scores: the file's rows, then the fast exponentials and sums */
        return abl_fast_captured_row(s, h, t->table, t->cap_skip, ft, i, x, e, wout, rz);
    return abl_fast_gauss_row(s, h, t->table, &t->gh, ft, i, x, e, wout, rz);
}

/* The last row (last_row) into the head's results, with the second threshold's first d and count
 * when em.zero2 (rc->zeros2 accumulates the worker's count: the row's is the difference). */
static abl_status last_row_counted(team *t, const row_ctx *rc, float *x, float *e, float *wout)
{
    abl_sim_head *o = &t->out->results[rc->head];
    uint64_t before = rc->zeros2 != NULL ? *rc->zeros2 : 0;
    row_ctx lr = *rc;
    o->zero2_first_blind = -1;
    lr.first2 = &o->zero2_first_blind;
    abl_status st = last_row(&lr, x, e, wout, o);
    o->zero2_row_zeros = rc->zeros2 != NULL ? *rc->zeros2 - before : 0;
    return st;
}

/* The row hook, when set, one call at a time unless it runs concurrently. */
static void hook_row(team *t, int h, uint64_t i, const float *x, const float *wout)
{
    const abl_simulate_config *cfg = &t->out->config;
    if (cfg->row_hook == NULL)
        return;
    if (cfg->row_hook_concurrent) {   /* it locks what it shares (the backward's counts) */
        cfg->row_hook(cfg->row_hook_ctx, t->s->schedule.slopes[h].index, i, x, wout);
        return;
    }
    pthread_mutex_lock(&t->hook_mu);
    cfg->row_hook(cfg->row_hook_ctx, t->s->schedule.slopes[h].index, i, x, wout);
    pthread_mutex_unlock(&t->hook_mu);
}

static void worker(void *arg)
{
    worker_arg *wa = arg;
    team *t = wa->t;
    const abl_sim_setup *s = t->s;
    uint64_t n = s->em.n;
    const abl_simulate_config *cfg = &t->out->config;
    float *x = malloc(n * sizeof *x), *e = malloc(n * sizeof *e);
    /* the weights are needed by the row hook and to count influence-zero keys where P.V loses more */
    int need_w = cfg->row_hook != NULL || s->em.infl_active;
    float *wout = need_w ? malloc(n * sizeof *wout) : NULL;
    abl_fast_thread ft;
    memset(&ft, 0, sizeof ft);
    if (x == NULL || e == NULL || (need_w && wout == NULL) ||
        (t->fast && !abl_fast_thread_init(&ft, n)))
        atomic_store(&t->failed, (int)ABL_ERR_NO_MEMORY);
    sbar_start(&t->barrier);
    for (int h = 0; h < s->heads; h++) {
        if (wa->id == 0 && atomic_load(&t->failed) == 0)
            prepare_head(t, h);
        sbar_wait(&t->barrier);
        uint64_t zeros = 0, lost = 0, zeros2 = 0;
        row_ctx rc = {s, h, t->table, n, s->em.zero2 ? &zeros2 : NULL, NULL};
        while (atomic_load(&t->failed) == 0) {
            uint64_t c = atomic_fetch_add(&t->next_chunk, 1);
            if (c >= t->nchunks)
                break;
            uint64_t hi = n - c * t->chunk_rows;     /* rows [lo, hi), claimed from the bottom up */
            uint64_t lo = hi > t->chunk_rows + s->em.first_row ? hi - t->chunk_rows : s->em.first_row;
            for (uint64_t i = hi; i-- > lo;) {
                if (t->fast && i != n - 1) {
                    uint64_t rz;
                    if (!fast_row(t, &rc, &ft, i, x, e, wout, &rz)) {
                        atomic_store(&t->failed, (int)ABL_ERR_UNSUPPORTED);
                        break;
                    }
                    zeros += rz;
                    lost += s->em.infl_active ? abl_influence_count(&s->em, wout, i + 1, NULL) : rz;
                    hook_row(t, h, i, x, wout);
                    continue;
                }
                if (!row_logits(&rc, i, x)) {
                    atomic_store(&t->failed, (int)ABL_ERR_UNSUPPORTED);
                    break;
                }
                if (i == n - 1) {
                    abl_status st = last_row_counted(t, &rc, x, e, wout);
                    if (st != ABL_OK)
                        atomic_store(&t->failed, (int)st);
                    zeros += t->out->results[h].row_zeros;
                    lost += t->out->results[h].row_influence_zeros;
                } else {
                    uint64_t rz = row_zeros(&rc, i, x, e, wout, NULL);
                    zeros += rz;
                    lost += s->em.infl_active ? abl_influence_count(&s->em, wout, i + 1, NULL) : rz;
                }
                hook_row(t, h, i, x, wout);
            }
            report_progress(t, chunk_weights(lo, hi));
        }
        atomic_fetch_add(&t->zeros, zeros);
        atomic_fetch_add(&t->lost, lost);
        atomic_fetch_add(&t->zeros2, zeros2 + ft.zeros2);   /* the slow rows' and the fast rows' */
        ft.zeros2 = 0;
        sbar_wait(&t->barrier);
        if (wa->id == 0) {
            t->out->results[h].zero2_matrix_zeros = atomic_load(&t->zeros2);
            t->out->results[h].matrix_zeros = atomic_load(&t->zeros);
            t->out->results[h].matrix_influence_zeros = atomic_load(&t->lost);
        }
    }
    free(x);
    free(e);
    free(wout);
    abl_fast_thread_free(&ft);
}

/* abl_sim_team_run's ready: run with the threads we got, then release them all at once. */
static void team_ready(void *ctx, int n)
{
    team *t = ctx;
    t->nthreads = n;
    pthread_mutex_lock(&t->barrier.mu);
    t->barrier.count = n;
    t->barrier.go = 1;
    pthread_cond_broadcast(&t->barrier.cv);
    pthread_mutex_unlock(&t->barrier.mu);
}

/* config.zero2 into the emulation: the largest binary32 zf2 <= zero2_max (the float conversion rounds to
 * nearest, so one step down where it went up), eager rows only (the other kinds never compare it). */
static abl_status zero2_setup(const abl_simulate_config *cfg, abl_emul *em)
{
    if (!cfg->zero2)
        return ABL_OK;
    if (em->softmax != ABL_SOFTMAX_EAGER || !(cfg->zero2_max >= 0.0))
        return ABL_ERR_UNSUPPORTED;
    float z = (float)cfg->zero2_max;
    em->zf2 = (double)z > cfg->zero2_max ? nextafterf(z, 0.0f) : z;
    em->zero2 = 1;
    return ABL_OK;
}

abl_status abl_simulate_run(const abl_simulate_config *cfg, abl_simulation *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (cfg != NULL && cfg->attention == ABL_ATTENTION_BIDIRECTIONAL)   /* no second threshold there */
        return cfg->zero2 ? ABL_ERR_UNSUPPORTED : abl_simulate_bidir_run(cfg, out);   /* abl_simulate_bidir.c */
    memset(out, 0, sizeof *out);
    abl_sim_setup s;
    abl_status st = abl_sim_setup_init(cfg, &s);
    if (st == ABL_OK && (st = zero2_setup(cfg, &s.em)) != ABL_OK)
        abl_sim_setup_free(&s);
    if (st != ABL_OK)
        return st;
    out->config = *cfg;
    out->logit_std = s.std;
    out->heads = s.heads;
    out->results = calloc((size_t)s.heads, sizeof *out->results);
    team t;
    memset(&t, 0, sizeof t);
    t.s = &s;
    t.out = out;
    t.nthreads = abl_sim_threads(cfg->threads);
    t.table = malloc(cfg->context * sizeof *t.table);
    t.fast = abl_fast_eligible(&s);
    t.rmax = t.fast && !s.gaussian ? malloc(cfg->context * sizeof *t.rmax) : NULL;
    int gh_ok = !(t.fast && s.gaussian) || abl_fast_gauss_head_init(&t.gh, cfg->context);
    worker_arg *args = calloc((size_t)t.nthreads, sizeof *args);
    if (out->results == NULL || t.table == NULL || args == NULL || (t.fast && !s.gaussian && t.rmax == NULL) || !gh_ok) {
        st = ABL_ERR_NO_MEMORY;
    } else {
        for (int h = 0; h < s.heads; h++) {
            out->results[h].slope = s.schedule.slopes[h];
            out->results[h].slope_held = s.hd[h].held;
        }
        atomic_init(&t.failed, 0);
        atomic_init(&t.next_chunk, 0);
        atomic_init(&t.zeros, 0);
        atomic_init(&t.lost, 0);
        atomic_init(&t.zeros2, 0);
        pthread_mutex_init(&t.barrier.mu, NULL);
        pthread_mutex_init(&t.hook_mu, NULL);
        pthread_mutex_init(&t.progress_mu, NULL);
        atomic_init(&t.done, 0);
        t.total = chunk_weights(0, cfg->context) * (uint64_t)s.heads;
        pthread_cond_init(&t.barrier.cv, NULL);
        for (int k = 0; k < t.nthreads; k++)
            args[k] = (worker_arg){&t, k};
        abl_sim_team_run(t.nthreads, worker, args, sizeof *args, team_ready, &t);
        pthread_cond_destroy(&t.barrier.cv);
        pthread_mutex_destroy(&t.barrier.mu);
        pthread_mutex_destroy(&t.hook_mu);
        pthread_mutex_destroy(&t.progress_mu);
        st = (abl_status)atomic_load(&t.failed);
        /* The workers' reports skip a busy reporter, so the last one can be lost: always end on the total. */
        if (st == ABL_OK && cfg->progress.fn != NULL)
            cfg->progress.fn(cfg->progress.ctx, t.total, t.total);
        out->threads_used = t.nthreads;
        out->influence_differs = s.em.infl_active;
    }
    free(args);
    free(t.table);
    free(t.rmax);
    abl_fast_gauss_head_free(&t.gh);
    /* The results keep the schedule: their slopes point into it (a slopes: list's numbers and texts). */
    out->schedule = s.schedule;
    memset(&s.schedule, 0, sizeof s.schedule);
    abl_sim_setup_free(&s);
    if (st != ABL_OK) {
        abl_simulation_free(out);
        return st;
    }
    for (int h = 0; h < out->heads; h++) {
        out->row_zeros += out->results[h].row_zeros;
        out->matrix_zeros += out->results[h].matrix_zeros;
        out->row_influence_zeros += out->results[h].row_influence_zeros;
        out->matrix_influence_zeros += out->results[h].matrix_influence_zeros;
    }
    return ABL_OK;
}

abl_status abl_simulate_estimate(const abl_simulate_config *cfg, abl_cost *out)
{
    if (cfg == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (cfg->context < 1 || cfg->context > ABL_SIMULATE_MAX_CONTEXT)
        return ABL_ERR_CONTEXT_RANGE;
    abl_schedule sched;
    abl_status st = abl_sim_estimate_schedule(cfg, &sched);
    if (st != ABL_OK)
        return st;
    int heads = sched.count;
    abl_schedule_free(&sched);
    int threads = abl_sim_estimate_threads(cfg->threads);
    double n = (double)cfg->context;
    int gaussian = cfg->logit_std != NULL && mpq_sgn(cfg->logit_std) != 0;
    int fast = cfg->pipeline.softmax == ABL_SOFTMAX_EAGER && !gaussian && cfg->logits == NULL;
    out->units = abl_emul_ggml_kind(cfg->pipeline.softmax) ? abl_ggml_sim_units(&cfg->pipeline, cfg->context, heads)
                 : abl_emul_engine_kind(cfg->pipeline.softmax)
                     ? abl_engine_sim_units(&cfg->pipeline, cfg->context, heads)
                     : (double)heads * n * (n + 1) / 2;
    if (cfg->attention == ABL_ATTENTION_BIDIRECTIONAL) {
        out->units = (double)heads * n * n;   /* N keys a row, no fast path */
        fast = 0;
    }
    out->threads = threads;
    out->seconds = out->units / ((fast ? ABL_SIMULATE_RATE_FAST : ABL_SIMULATE_RATE) * threads);
    out->unit_name = "weights";
    return ABL_OK;
}

void abl_simulation_free(abl_simulation *s)
{
    if (s == NULL)
        return;
    free(s->results);
    s->results = NULL;
    s->heads = 0;
    abl_schedule_free(&s->schedule);
}

/* ---- report ---- */

int abl_prediction_agrees(const abl_simulation *sim, const abl_prediction *pred)
{
    if (sim == NULL || pred == NULL || sim->heads != pred->heads)
        return 0;
    for (int h = 0; h < sim->heads; h++) {
        const abl_sim_head *a = &sim->results[h];
        const abl_pred_head *b = &pred->results[h];
        if (a->first_blind != b->first_blind || a->row_zeros != b->row_zeros || a->matrix_zeros != b->matrix_zeros ||
            a->mid_row_zeros != b->mid_row_zeros)   /* 0 on both sides unless bidirectional */
            return 0;
        if (a->first_influence_zero != b->first_influence_zero || a->row_influence_zeros != b->row_influence_zeros ||
            a->matrix_influence_zeros != b->matrix_influence_zeros)
            return 0;
    }
    return 1;
}

/*
 * Cells, metadata and summaries from heap strings (abl_strf) that these free: a NULL one (out of memory)
 * adds nothing and gives ABL_ERR_NO_MEMORY.
 */
static abl_status cell_pair(abl_report *r, char *text, char *json)
{
    abl_status st = text == NULL || json == NULL ? ABL_ERR_NO_MEMORY : abl_report_cell(r, text, json, NULL);
    free(text);
    free(json);
    return st;
}

/* The text is the JSON too (a number). */
static abl_status cell_take(abl_report *r, char *text)
{
    abl_status st = text == NULL ? ABL_ERR_NO_MEMORY : abl_report_cell(r, text, text, NULL);
    free(text);
    return st;
}

static abl_status meta_take(abl_report *r, const char *key, const char *label, char *text)
{
    abl_status st = text == NULL ? ABL_ERR_NO_MEMORY : abl_report_meta(r, key, label, text, text);
    free(text);
    return st;
}

static abl_status summary_take(abl_report *r, const char *key, const char *label, char *text, char *json)
{
    abl_status st = text == NULL || json == NULL ? ABL_ERR_NO_MEMORY : abl_report_summary(r, key, label, text, json);
    free(text);
    free(json);
    return st;
}

static char *u64_text(uint64_t v)
{
    return abl_strf("%llu", (unsigned long long)v);
}

static abl_status cell_u64(abl_report *r, uint64_t v)
{
    return cell_take(r, u64_text(v));
}

static abl_status cell_blind(abl_report *r, int64_t d)
{
    if (d < 0)
        return abl_report_cell(r, "none", "null", NULL);
    return cell_take(r, abl_strf("%lld", (long long)d));
}

/* delta of a head at the exponent level (spec §4) for the output dtype, or "n/a" */
static abl_status cell_delta(abl_report *r, const abl_slope *slope, const abl_format *fmt, abl_convention conv)
{
    abl_blind_query q;
    memset(&q, 0, sizeof q);
    q.format = *fmt;
    q.convention = conv;
    q.distance = ABL_DISTANCE_LINEAR;
    abl_delta d;
    abl_delta_init(&d);
    abl_status st = abl_blindness(slope, &q, &d);
    if (st != ABL_OK) {
        abl_delta_clear(&d);
        return abl_report_cell(r, "n/a", "null", NULL);
    }
    int64_t v;
    char *text = abl_delta_get_i64(&d, &v) ? abl_strf("%lld", (long long)v) : abl_delta_text(&d, 12);
    char *json = abl_delta_json(&d);
    abl_delta_clear(&d);
    st = text != NULL && json != NULL ? abl_report_cell(r, text, json, NULL) : ABL_ERR_NO_MEMORY;
    free(text);
    free(json);
    return st;
}

/* count over the last rows (or the causal matrices; matrix = 2: the N x N bidirectional matrices) of `heads`
 * heads as text ("1.2345%") and JSON (12 digits), each malloc'd (NULL: out of memory). */
static void fraction_cells(uint64_t count, uint64_t heads, uint64_t n, int matrix, char **text, char **json)
{
    mpq_t q;
    mpq_init(q);
    mpz_t den;
    mpz_init_set_ui(den, (unsigned long)heads);
    mpz_mul_ui(den, den, (unsigned long)n);
    if (matrix == 2) {
        mpz_mul_ui(den, den, (unsigned long)n);
    } else if (matrix) {
        mpz_mul_ui(den, den, (unsigned long)(n + 1));
        mpz_fdiv_q_2exp(den, den, 1);
    }
    mpz_set_ui(mpq_numref(q), 0);
    mpz_import(mpq_numref(q), 1, 1, sizeof count, 0, 0, &count);
    mpz_set(mpq_denref(q), den);
    mpq_canonicalize(q);
    char *pct = abl_fraction_percent_text(q, 4);
    *text = pct != NULL ? abl_strf("%s%%", pct) : NULL;
    free(pct);
    *json = abl_fraction_decimal_text(q, 12);
    mpz_clear(den);
    mpq_clear(q);
}

void abl_sim_fraction_cells(uint64_t count, uint64_t heads, uint64_t n, int matrix, char **text, char **json)
{
    fraction_cells(count, heads, n, matrix, text, json);
}

#define TRY(x)                                                                                                    \
    do {                                                                                                          \
        abl_status st_ = (x);                                                                                     \
        if (st_ != ABL_OK)                                                                                        \
            return st_;                                                                                           \
    } while (0)

/* What a report is built from: the set-up (slopes, held values, emulation constants) and the results. */
typedef struct rep_ctx {
    abl_report *r;
    const abl_sim_setup *s;
    const abl_simulate_config *c;
    const abl_simulation *sim;     /* NULL: prediction only */
    const abl_prediction *pred;    /* NULL: simulation only */
} rep_ctx;

/* The dtype captured scores are rounded to (abl_sim_setup's score_fp): the config's, or binary32. */
static const char *score_dtype_name(const abl_simulate_config *c)
{
    return c->logits_dtype != NULL ? c->logits_dtype->name : "fp32";
}

/* The logits line: zero, Gaussian (std and seed) or captured. */
static abl_status report_logits_meta(const rep_ctx *x)
{
    const abl_sim_setup *s = x->s;
    if (s->captured != NULL) {
        abl_text t = {0};
        abl_text_add(&t, "captured scores (%s, %s), rounded to %s", s->captured->itemsize == 4 ? "float32"
                     : "float16", s->captured->ndim == 3 ? "one matrix per head" : "one matrix for every head",
                     score_dtype_name(x->c));
        abl_status st = t.oom ? ABL_ERR_NO_MEMORY : abl_report_meta(x->r, "logits", "logits", abl_text_str(&t), "\"captured\"");
        free(t.s);
        TRY(st);
        return abl_report_meta(x->r, "logits_dtype", "scores rounded to", score_dtype_name(x->c), NULL);
    }
    if (!s->gaussian)
        return abl_report_meta(x->r, "logits", "logits", "zero", "\"zero\"");
    /* std <= ABL_SIMULATE_MAX_LOGIT_STD: its decimal text is whole but may be long */
    char *std = abl_decimal_string(x->c->logit_std);
    char *line = std != NULL ? malloc(strlen(std) + 64) : NULL;
    abl_status st = ABL_ERR_NO_MEMORY;
    if (line != NULL) {
        sprintf(line, "Gaussian, std %s, seed %llu", std, (unsigned long long)x->c->seed);
        st = abl_report_meta(x->r, "logits", "logits", line, "\"gaussian\"");
        if (st == ABL_OK)
            st = abl_report_meta(x->r, "logit_std", "logit std", std, std);
    }
    free(line);
    free(std);
    TRY(st);
    return meta_take(x->r, "seed", "seed", u64_text(x->c->seed));
}

static abl_status report_meta(const rep_ctx *x)
{
    const abl_pipeline *p = &x->c->pipeline;
    TRY(abl_report_meta(x->r, "pipeline", "pipeline", p->preset, NULL));
    abl_text fields = {0}, fields_json = {0};
    abl_pipeline_describe_text(p, &fields);
    abl_pipeline_describe_json(p, &fields_json);
    abl_status fst = fields.oom || fields_json.oom
                         ? ABL_ERR_NO_MEMORY
                         : abl_report_meta(x->r, "pipeline_fields", "fields", abl_text_str(&fields),
                                           abl_text_str(&fields_json));
    free(fields.s);
    free(fields_json.s);
    TRY(fst);
    TRY(meta_take(x->r, "context", "context N", u64_text(x->c->context)));
    TRY(meta_take(x->r, "head_count", "heads", abl_strf("%d", x->s->heads)));
    TRY(abl_report_meta(x->r, "slopes", "slopes", x->s->schedule.spec, NULL));
    TRY(report_logits_meta(x));
    if (x->c->attention == ABL_ATTENTION_BIDIRECTIONAL)
        TRY(abl_bidir_report_meta(x->r));
    return abl_report_meta(x->r, "mode", "mode", x->sim && x->pred ? "simulation, checked against the predictor"
                                                 : x->sim ? "simulation" : "prediction (zero logits)", NULL);
}

/* The influence columns (docs/method.md): keys whose term in P.V is 0 for unit-scale V. */
static abl_status influence_columns(abl_report *r, const char *prefix)
{
    static const struct {
        const char *key, *label;
    } cols[] = {
        {"first_influence_zero", "first no-influence d"},
        {"row_influence_zeros", "row no-influence"},
        {"matrix_influence_zeros", "matrix no-influence"},
    };
    int pred = strcmp(prefix, "") != 0;
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
        const char *ck = cols[k].key, *cl = cols[k].label;
        char *key = abl_strf("%s%s", prefix, ck);
        char *label = abl_strf("%s%s", pred ? "pred. " : "", cl);
        abl_status st = key != NULL && label != NULL ? abl_report_column(r, key, label, ABL_ALIGN_RIGHT) : ABL_ERR_NO_MEMORY;
        free(key);
        free(label);
        TRY(st);
    }
    return ABL_OK;
}

static abl_status influence_cells(abl_report *r, int64_t first, uint64_t row, uint64_t matrix)
{
    TRY(cell_blind(r, first));
    TRY(cell_u64(r, row));
    return cell_u64(r, matrix);
}

static abl_status report_columns(const rep_ctx *x)
{
    abl_report *r = x->r;
    TRY(abl_report_column(r, "head", "head", ABL_ALIGN_RIGHT));
    TRY(abl_report_column(r, "slope_exact", "m", ABL_ALIGN_LEFT));
    abl_text h = {0};
    abl_text_add(&h, "m (%s)", x->c->pipeline.slope_dtype.name);
    abl_status hst = h.oom ? ABL_ERR_NO_MEMORY : abl_report_column(r, "slope", abl_text_str(&h), ABL_ALIGN_RIGHT);
    free(h.s);
    TRY(hst);
    TRY(abl_report_column(r, "delta", "δ paper", ABL_ALIGN_RIGHT));
    TRY(abl_report_column(r, "delta_ieee", "δ ieee", ABL_ALIGN_RIGHT));
    TRY(abl_report_column(r, "first_blind", "first blind d", ABL_ALIGN_RIGHT));
    TRY(abl_report_column(r, "row_zeros", "row zeros", ABL_ALIGN_RIGHT));
    TRY(abl_report_column(r, "matrix_zeros", "matrix zeros", ABL_ALIGN_RIGHT));
    if (x->s->em.infl_active)   /* influence columns where P.V can lose a key its weight keeps */
        TRY(influence_columns(r, ""));
    if (x->sim) {
        TRY(abl_report_column(r, "distinct_logits", "distinct logits", ABL_ALIGN_RIGHT));
        TRY(abl_report_column(r, "longest_tie_run", "longest tie", ABL_ALIGN_RIGHT));
        TRY(abl_report_column(r, "tied_with_diagonal", "tied w/ diag", ABL_ALIGN_RIGHT));
        TRY(abl_report_column(r, "tv_distance", "TV distance", ABL_ALIGN_RIGHT));
        TRY(abl_report_column(r, "mass_lost", "mass lost", ABL_ALIGN_RIGHT));
    }
    if (x->sim && x->pred) {
        TRY(abl_report_column(r, "predicted_first_blind", "pred. first blind d", ABL_ALIGN_RIGHT));
        TRY(abl_report_column(r, "predicted_row_zeros", "pred. row zeros", ABL_ALIGN_RIGHT));
        TRY(abl_report_column(r, "predicted_matrix_zeros", "pred. matrix zeros", ABL_ALIGN_RIGHT));
        if (x->s->em.infl_active)
            TRY(influence_columns(r, "predicted_"));
        TRY(abl_report_column(r, "agrees", "agrees", ABL_ALIGN_LEFT));
    }
    if (!x->sim)
        TRY(abl_report_column(r, "exact_rows", "exact-sum rows", ABL_ALIGN_RIGHT));
    return ABL_OK;
}

/* One head's row: slope, deltas, then the simulation's or the prediction's counts (or both). */
static abl_status report_head(const rep_ctx *x, int h)
{
    abl_report *r = x->r;
    const abl_pipeline *p = &x->c->pipeline;
    const abl_slope *sl = &x->s->schedule.slopes[h];
    TRY(abl_report_row(r));
    TRY(cell_take(r, abl_strf("%d", sl->index)));
    /* A heap string: a slope of a slopes: list is shown as written, any length. */
    char *exact = abl_slope_exact_text(sl);
    abl_status est = exact != NULL ? abl_report_cell(r, exact, NULL, NULL) : ABL_ERR_NO_MEMORY;
    free(exact);
    TRY(est);
    TRY(cell_take(r, abl_strf("%.9g", x->s->hd[h].held)));
    TRY(cell_delta(r, sl, &p->output_dtype, ABL_CONV_PAPER));
    TRY(cell_delta(r, sl, &p->output_dtype, ABL_CONV_IEEE));
    const abl_pred_head *b = x->pred ? &x->pred->results[h] : NULL;
    int infl = x->s->em.infl_active;
    if (x->sim) {
        const abl_sim_head *a = &x->sim->results[h];
        TRY(cell_blind(r, a->first_blind));
        TRY(cell_u64(r, a->row_zeros));
        TRY(cell_u64(r, a->matrix_zeros));
        if (infl)
            TRY(influence_cells(r, a->first_influence_zero, a->row_influence_zeros, a->matrix_influence_zeros));
        TRY(cell_u64(r, a->distinct_logits));
        TRY(cell_u64(r, a->longest_tie_run));
        TRY(cell_u64(r, a->tied_with_diagonal));
        TRY(cell_pair(r, abl_strf("%.4g", a->tv_distance), abl_strf("%.6e", a->tv_distance)));
        TRY(cell_pair(r, abl_strf("%.3g", a->mass_lost), abl_strf("%.6e", a->mass_lost)));
        if (b == NULL)
            return ABL_OK;
        TRY(cell_blind(r, b->first_blind));
        TRY(cell_u64(r, b->row_zeros));
        TRY(cell_u64(r, b->matrix_zeros));
        if (infl)
            TRY(influence_cells(r, b->first_influence_zero, b->row_influence_zeros, b->matrix_influence_zeros));
        int ok = a->first_blind == b->first_blind && a->row_zeros == b->row_zeros && a->matrix_zeros == b->matrix_zeros &&
                 a->first_influence_zero == b->first_influence_zero && a->row_influence_zeros == b->row_influence_zeros &&
                 a->matrix_influence_zeros == b->matrix_influence_zeros;
        return abl_report_cell(r, ok ? "yes" : "NO", ok ? "true" : "false", NULL);
    }
    TRY(cell_blind(r, b->first_blind));
    TRY(cell_u64(r, b->row_zeros));
    TRY(cell_u64(r, b->matrix_zeros));
    if (infl)
        TRY(influence_cells(r, b->first_influence_zero, b->row_influence_zeros, b->matrix_influence_zeros));
    return cell_u64(r, b->exact_rows);
}

static abl_status report_summary(const rep_ctx *x)
{
    abl_report *r = x->r;
    uint64_t rz = x->sim ? x->sim->row_zeros : x->pred->row_zeros;
    uint64_t mz = x->sim ? x->sim->matrix_zeros : x->pred->matrix_zeros;
    uint64_t heads = (uint64_t)x->s->heads, n = x->c->context;
    char *text, *json;
    TRY(summary_take(r, "row_zeros", "zero weights in the last rows", u64_text(rz), u64_text(rz)));
    TRY(summary_take(r, "matrix_zeros", "zero weights in the matrices", u64_text(mz), u64_text(mz)));
    if (x->s->em.infl_active) {
        uint64_t rl = x->sim ? x->sim->row_influence_zeros : x->pred->row_influence_zeros;
        uint64_t ml = x->sim ? x->sim->matrix_influence_zeros : x->pred->matrix_influence_zeros;
        TRY(summary_take(r, "row_influence_zeros", "keys without influence in the last rows (unit V)", u64_text(rl),
                         u64_text(rl)));
        TRY(summary_take(r, "matrix_influence_zeros", "keys without influence in the matrices (unit V)", u64_text(ml),
                         u64_text(ml)));
    }
    int bidir = x->c->attention == ABL_ATTENTION_BIDIRECTIONAL;
    fraction_cells(rz, heads, n, 0, &text, &json);
    TRY(summary_take(r, "row_fraction", "row fraction", text, json));
    fraction_cells(mz, heads, n, bidir ? 2 : 1, &text, &json);
    TRY(summary_take(r, "matrix_fraction", "matrix fraction", text, json));
    if (bidir)   /* the middle rows: abl_simulate_bidir.c */
        TRY(abl_bidir_report_summary(r, x->sim ? x->sim->mid_row_zeros : x->pred->mid_row_zeros, heads, n));
    if (x->sim) {
        double lost = 0.0;
        for (int h = 0; h < x->s->heads; h++)
            lost += x->sim->results[h].mass_lost;
        double mean = lost / x->s->heads;
        TRY(summary_take(r, "mass_lost", "attention mass lost (last row, mean over heads)", abl_strf("%.3g", mean),
                         abl_strf("%.6e", mean)));
    }
    if (x->sim && x->pred) {
        int ok = abl_prediction_agrees(x->sim, x->pred);
        TRY(abl_report_summary(r, "predictor_agrees", "predictor agrees", ok ? "yes" : "NO", ok ? "true" : "false"));
    }
    return ABL_OK;
}

/* The softmax model in one sentence. */
static void softmax_note(const abl_pipeline *p, const abl_emul *em, abl_text *t)
{
    if (p->softmax == ABL_SOFTMAX_TRTLLM_FMHA) {   /* abl_engines_trtllm.c */
        abl_trtllm_ctx_note(p, t);
        return;
    }
    if (p->softmax == ABL_SOFTMAX_GGML || p->softmax == ABL_SOFTMAX_GGML_FLASH) {   /* abl_ggml.c */
        abl_ggml_note(p, em, t);
        return;
    }
    if (p->softmax == ABL_SOFTMAX_EAGER) {
        abl_text_add(t,
                 "Eager softmax: e = fp32(exp(fp32(x - max))) %s, S = %s fp32 sum, p = %s, then one "
                 "round-to-nearest-even into %s; a weight is zero when p <= %.9g (half the smallest subnormal).",
                 p->exp == ABL_EXP_SLEEF ? "as Sleef_expf8_u10 computes it" : "correctly rounded",
                 p->sum == ABL_SUM_EXACT ? "the correctly rounded" : p->sum == ABL_SUM_SEQUENTIAL ? "a sequential"
                 : p->sum == ABL_SUM_VEC8 ? "an 8-lane (PyTorch AVX2)" : "a 16-lane (PyTorch AVX-512)",
                 p->normalise == ABL_NORM_DIVIDE ? "fp32(e / S)" : "fp32(e * fp32(1/S))", p->output_dtype.name,
                 em->out.zero_max);
    } else if (p->softmax == ABL_SOFTMAX_FLASH) {
        abl_text_add(t,
                 "Flash softmax: slope/scale added in fp32 by fma, e = exp2(fma(x, %.9g, -fp32(max * %.9g))) flushed "
                 "to zero below 2^-126, running max over blocks of %d keys from the diagonal; P = e rounded into %s "
                 "is zero when e <= %.9g.",
                 (double)em->c_log2, (double)em->c_log2, p->block, p->output_dtype.name, em->out.zero_max);
        if (em->softmax == ABL_SOFTMAX_FLASH_SPLITKV)   /* abl_flash_split.c */
            abl_text_add(t, " Split-KV (modelled from source, not measured): num_splits = %d%s, blocks of %d keys "
                            "from key 0 shared out in order; each split's O = acc * rcp(sum) and lse = max * scale "
                            "+ __logf(sum) in fp32, merged by __expf(lse_s - lse_total) in fp32 (flushed below "
                            "2^-126) and cast to %s: weight = the coefficient of a unit value (its influence); "
                            "the last %llu row(s).",
                         em->splits, p->splits == 0 ? " (num_splits_heuristic, 132 SMs, batch 1)" : "", em->block,
                         p->output_dtype.name, (unsigned long long)(em->n - em->first_row));
    } else if (p->softmax == ABL_SOFTMAX_GGML_CUDA_VEC) {
        abl_text_add(t, "llama.cpp CUDA flash attention, vector kernel (one query row): x = fma(slope, %s mask, "
                        "score); 4 warps of 32 keys per 128-key step, each with its running max of x + 3*0.6931, "
                        "p = __expf(x - max) flushed below 2^-126, an fp32 V accumulator rescaled by __expf; weight "
                        "= VKQ / sum (__fdividef): the coefficient of a unit value, its influence.",
                     p->mask_dtype.name);
    } else if (p->softmax == ABL_SOFTMAX_VLLM_PAGED || p->softmax == ABL_SOFTMAX_TRTLLM_MMHA) {
        abl_text_add(t, "%s decode kernel: x = score + fp32(slope * (j - i)); e = __expf(x - max) flushed below "
                        "2^-126; S the per-thread sums of a %s-thread block reduced by xor butterflies; P = "
                        "%s(fp32(e * __fdividef(1, S + 1e-6))), multiplied into V in fp32: a weight is zero when P is.",
                     p->softmax == ABL_SOFTMAX_VLLM_PAGED ? "vLLM paged-attention (V1)" : "TensorRT-LLM masked MHA",
                     p->softmax == ABL_SOFTMAX_VLLM_PAGED ? "128" : "64/128/256", p->output_dtype.name);
    } else if (p->softmax == ABL_SOFTMAX_GGML_CUDA) {
        abl_text_add(t, "llama.cpp CUDA soft_max_f32 (flash attention off): x = fma(slope, %s mask, score); e = "
                        "__expf(x - max) flushed below 2^-126; S the per-thread sums of a %d-thread block reduced "
                        "by xor butterflies; weight = fp32(e * rcp(S)); P.V takes it in %s, accumulated in %s.",
                     p->mask_dtype.name, abl_ggml_cuda_threads(em->n), p->pv_dtype.name, p->pv_accumulate.name);
    } else if (p->softmax == ABL_SOFTMAX_VLLM_TRITON) {
        abl_text_add(t, "vLLM Triton unified attention (2-D kernel): x = fma(slope, j - %llu, score) (the bias "
                        "relative to the query chunk's start); tiles of %d keys from key 0 with a running max; P = "
                        "exp2 of (x - max) log2 e flushed below 2^-126, in %s; each later tile rescales it in fp32, "
                        "then / L: the coefficient of a unit value, weight = influence.",
                     (unsigned long long)em->first_row, p->block, p->output_dtype.name);
        if (em->splits >= 2)   /* abl_engines_triton.c: the decode batch's kernel */
            abl_text_add(t, " Decode: the 3-D kernel (kernel_unified_attention_3d + reduce_segments): %d segments "
                            "of tiles of %d keys, each with its own max M_s and sum L_s; reduced by e_s = exp(M_s - "
                            "max M_s), weight = (acc_s e_s) / sum(L_s e_s).", em->splits, em->block);
    } else if (p->softmax == ABL_SOFTMAX_TRITON_LSE) {
        abl_text_add(t, "MosaicBERT Triton flash attention: keys in blocks of %d from key 0; P = exp(x - m), m the "
                        "larger of the block's max and the running log-sum-exp, rounded into %s before P.V; a "
                        "weight is zero when P is.", p->block, p->output_dtype.name);
    } else if (p->softmax == ABL_SOFTMAX_FLEX) {
        abl_text_add(t,
                 "FlexAttention: y = fp32(x * fp32(1/ln 2)); the diagonal's 128-key block first, then the full "
                 "blocks from key 0, in blocks of %d keys with a running max m; P = exp2(fp32(y - m)) flushed to "
                 "zero below 2^-126, rounded into %s; a weight is zero when P is.",
                 p->block, p->output_dtype.name);
    } else {
        abl_text_add(t,
                 "SDPA %s kernel: y = fp32(x * fp32(log2 e)), keys in blocks of %d from key 0 with a running max; "
                 "P = %s(exp2(y - max)), rescaled in fp32 when the max grows; weight = %s(fp32(P * rescales * "
                 "fp32(1/s)))%s.",
                 p->softmax == ABL_SOFTMAX_SDPA_CUDNN ? "cuDNN" : "memory-efficient", p->block, p->output_dtype.name,
                 p->output_dtype.name,
                 p->softmax == ABL_SOFTMAX_SDPA_CUDNN ? ", the fp32 value flushed to zero below 2^-126" : "");
    }
}

static abl_status report_notes(const rep_ctx *x)
{
    const abl_pipeline *p = &x->c->pipeline;
    const abl_emul *em = &x->s->em;
    abl_text t = {0};
    softmax_note(p, em, &t);
    abl_status st = t.oom ? ABL_ERR_NO_MEMORY : abl_report_note(x->r, abl_text_str(&t));
    t.n = 0;
    abl_text_add(&t, "Bias: %s form; slopes %s into %s%s; δ paper and δ ieee are the "
                              "exponent-level distances of spec §4 for %s (for comparison).",
             abl_bias_form_name(p->bias_form),
             p->slope_calc == ABL_SLOPE_CALC_EXACT ? "rounded once" : p->slope_calc == ABL_SLOPE_CALC_TORCH_POW
             ? "as torch.pow(fp32 base, k) computes them, held" : p->slope_calc == ABL_SLOPE_CALC_GGML
             ? "as ggml's powf(m0, k) computes them, held" : p->slope_calc == ABL_SLOPE_CALC_FLEX
             ? "as exp2(-(h+1)*8/H) computes them in fp32, held" : "as 1 / torch.pow(2, k B/H') computes them, held",
             p->slope_dtype.name,
             p->softmax == ABL_SOFTMAX_FLASH ? ", divided by the softmax scale" : ", cast to the product dtype",
             p->output_dtype.name);
    if (st == ABL_OK)
        st = t.oom ? ABL_ERR_NO_MEMORY : abl_report_note(x->r, abl_text_str(&t));
    if (st == ABL_OK && em->has_scale) {
        char *sc = abl_ratio_text(&p->bias_scale);
        t.n = 0;
        if (sc == NULL)
            t.oom = 1;
        abl_text_add(&t, "The bias is scaled by %s%s: the kernel's effective slope is %s m (the δ "
                                  "columns are for m itself).", sc,
                 p->bias_add == ABL_BIAS_ADD_BOTH ? " and added twice (scores and mask)" : "",
                 p->bias_add == ABL_BIAS_ADD_BOTH ? "2 x that times" : sc);
        free(sc);
        st = t.oom ? ABL_ERR_NO_MEMORY : abl_report_note(x->r, abl_text_str(&t));
    }
    free(t.s);
    TRY(st);
    if (abl_pipeline_modelled_note(p) != NULL)
        TRY(abl_report_note(x->r, abl_pipeline_modelled_note(p)));
    if (x->sim)
        TRY(abl_report_note(x->r, "Last-row statistics: first blind d = smallest distance with a zero weight; TV "
                                  "distance = 0.5 sum |p - p_exact| against a binary64 softmax of eps - m d with the "
                                  "exact slope; mass lost = the share of p_exact on the zero weights."));
    if (x->pred && !x->sim)
        TRY(abl_report_note(x->r, "Prediction: the same rounding model as simulate, without the N x N work; "
                                  "exact-sum rows = rows whose certified sum bound had to be replaced by the exact sum."));
    return ABL_OK;
}

static abl_status report_fill(const rep_ctx *x)
{
    TRY(report_meta(x));
    TRY(report_columns(x));
    for (int h = 0; h < x->s->heads; h++)
        TRY(report_head(x, h));
    TRY(report_summary(x));
    return report_notes(x);
}

abl_status abl_simulation_report(const abl_simulate_config *cfg, const abl_simulation *sim,
                                 const abl_prediction *pred, abl_report **out)
{
    if (out == NULL || (sim == NULL && pred == NULL) || (sim == NULL && cfg == NULL))
        return ABL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    abl_sim_setup s;
    const abl_simulate_config *c = sim ? &sim->config : cfg;
    /* the schedule again, for slopes and head indices (cheap; never differs from the run's) */
    abl_status st = abl_sim_setup_init(c, &s);
    if (st != ABL_OK)
        return st;
    abl_text title = {0};
    abl_text_add(&title, "%s of the %s pipeline (N = %llu)",
                 sim ? "Simulated attention weights" : "Predicted zero weights", c->pipeline.preset,
                 (unsigned long long)c->context);
    abl_report *r = title.oom ? NULL : abl_report_new(abl_text_str(&title), "heads");
    free(title.s);
    if (r == NULL) {
        abl_sim_setup_free(&s);
        return ABL_ERR_NO_MEMORY;
    }
    rep_ctx x = {r, &s, c, sim, pred};
    st = report_fill(&x);
    abl_sim_setup_free(&s);
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}
