/* alibi-blind: the zero-logit predictor of llama.cpp's CUDA soft_max_f32 (softmax=ggml-cuda), modelled from
 * source, not measured (docs/pipelines.md §3c; abl_engines_ggml_cuda.h says what it computes).
 *
 * Row i of a prompt: x_d = fma(-slope, d, 0) for the keys at distance d <= i, max x_0, e_d = __expf(x_d - x_0)
 * (the same for every row), S_i the thread-ordered fp32 sum of e_0..e_i, w = fp32(e_d * rcp(S_i)) flushed.
 * Every step is monotone in e, so the zero weights of a row are the distances d >= D(rcp(S_i)), and a larger
 * 1/S can only move D out. S_i is bracketed by the exact sum (binary64 prefix sums of the fp32 e) widened by
 * the fp32 summation bound gamma_k for the k additions on the longest path (a thread's ceil((i+1)/T) keys,
 * then two five-level butterflies); when both ends of the bracket give the same D the row is settled,
 * otherwise the row runs through abl_engine_row. */
#include <math.h>
#include <stdlib.h>
#include "kernel/abl_cuda_math.h"
#include "kernel/abl_engines.h"
#include "kernel/abl_engines_ggml_cuda.h"
#include "kernel/abl_influence.h"

#define GGML_WARP 32
#define GGML_MAX_THREADS 1024   /* CUDA_SOFT_MAX_BLOCK_SIZE */
#define FP32_U 0x1p-24          /* unit roundoff of binary32 */

int abl_ggml_cuda_threads(uint64_t ncols)
{
    int nth = GGML_WARP;
    while ((uint64_t)nth < ncols && nth < GGML_MAX_THREADS)
        nth *= 2;
    return nth;
}

typedef struct gc_ctx {
    const abl_emul *em;
    const float *E;    /* e_d by distance */
    uint64_t n;
} gc_ctx;

/* The first distance whose weight (infl = 0) or influence (infl = 1) is zero at inv; n when none. */
static uint64_t first_zero(const gc_ctx *c, float inv, int infl)
{
    uint64_t lo = 0, hi = c->n;   /* answer in [lo, hi] */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        float w = abl_cuda_fmul(c->E[mid], inv);
        int z = infl ? abl_influence_zero(c->em, w) : w == 0.0f;
        if (z)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The fp32 values the kernel's 1/S can take for S in [lo, hi] (binary64): [rcp(up(hi)), rcp(down(lo))]. */
static void inv_bracket(double lo, double hi, float *inv_lo, float *inv_hi)
{
    float flo = (float)lo, fhi = (float)hi;
    if ((double)flo > lo)
        flo = nextafterf(flo, 0.0f);
    if ((double)fhi < hi)
        fhi = nextafterf(fhi, INFINITY);
    *inv_lo = abl_cuda_rcp_ftz(fhi);
    *inv_hi = abl_cuda_rcp_ftz(flo);
}

/* Zero counts of a row from its thresholds (a suffix of distances D..i). */
static uint64_t suffix(uint64_t i, uint64_t D)
{
    return D <= i ? i - D + 1 : 0;
}

typedef struct gc_tally {
    uint64_t wz, iz, exact;      /* matrix weight zeros, influence zeros, rows run exactly */
    int64_t last_w, last_i;      /* the last row's first zero distances (-1: none) */
    uint64_t last_wz, last_iz;   /* the last row's zeros */
} gc_tally;

/* Row i through the kernel model (its bracket left the threshold open). */
static void exact_row(const gc_ctx *c, const float *T, uint64_t i, float *x, float *col, float *w, gc_tally *t)
{
    for (uint64_t j = 0; j <= i; j++)
        x[j] = T[i - j];
    uint64_t wz = abl_engine_row(c->em, i, x, col, w, NULL);
    int64_t first_w = -1, first_i = -1;
    for (uint64_t d = 0; d <= i && first_w < 0; d++)
        if (w[i - d] == 0.0f)
            first_w = (int64_t)d;
    uint64_t iz = c->em->infl_active ? abl_influence_count(c->em, w, i + 1, &first_i) : wz;
    if (!c->em->infl_active)
        first_i = first_w;
    t->wz += wz;
    t->iz += iz;
    t->exact++;
    if (i == c->n - 1) {
        t->last_w = first_w;
        t->last_i = first_i;
        t->last_wz = wz;
        t->last_iz = iz;
    }
}

/* One settled row: both bracket ends gave the thresholds Dw, Di. */
static void settled_row(const gc_ctx *c, uint64_t i, uint64_t Dw, uint64_t Di, gc_tally *t)
{
    t->wz += suffix(i, Dw);
    t->iz += suffix(i, Di);
    if (i == c->n - 1) {
        t->last_w = Dw <= i ? (int64_t)Dw : -1;
        t->last_i = Di <= i ? (int64_t)Di : -1;
        t->last_wz = suffix(i, Dw);
        t->last_iz = suffix(i, Di);
    }
}

/* e_d for every distance, P the binary64 prefix sums; 0 when the logits do not peak at d = 0 and fall with d
 * (then every row is run through the kernel model). */
static int fill_e(const float *T, uint64_t n, float *E, double *P)
{
    int ok = 1;
    P[0] = 0.0;
    for (uint64_t d = 0; d < n; d++) {
        E[d] = abl_cuda_expf(abl_cuda_fadd(T[d], -T[0]));
        ok = ok && !(T[d] > T[0]) && (d == 0 || E[d] <= E[d - 1]);
        P[d + 1] = P[d] + (double)E[d];   /* n < 2^53 terms <= 1: the error is below n^2 2^-53 of the sum */
    }
    return ok;
}

/* The bracket ends of 1/S and the thresholds at each (weight low/high, influence low/high), kept from the
 * previous row: once every e beyond the row is 0 the bracket stops moving. */
typedef struct gc_memo {
    float lo, hi;
    uint64_t D[4];
} gc_memo;

/* The thresholds of row i (*Dw, *Di): 1 when settled, 0 when its bracket leaves them open. */
static int row_thresholds(const gc_ctx *c, const double *P, uint64_t i, int T, gc_memo *m, uint64_t *Dw,
                          uint64_t *Di)
{
    double S = P[i + 1];
    double k = (double)((i + 1 + (uint64_t)T - 1) / (uint64_t)T) + 10.0;   /* additions on the longest path */
    double rel = k * FP32_U / (1.0 - k * FP32_U) * 1.0001 + (double)(i + 1) * (double)(i + 1) * 0x1p-52;
    float lo, hi;
    inv_bracket(S * (1.0 - rel), S * (1.0 + rel), &lo, &hi);
    if (lo != m->lo || hi != m->hi) {
        m->lo = lo;
        m->hi = hi;
        m->D[0] = first_zero(c, lo, 0);
        m->D[1] = first_zero(c, hi, 0);
        m->D[2] = c->em->infl_active ? first_zero(c, lo, 1) : m->D[0];
        m->D[3] = c->em->infl_active ? first_zero(c, hi, 1) : m->D[1];
    }
    /* a larger 1/S moves the thresholds out: D[0] <= D[1], D[2] <= D[3]; a threshold past i either way
     * leaves the row without such keys */
    *Dw = m->D[0];
    *Di = m->D[2];
    return (m->D[0] == m->D[1] || m->D[0] > i) && (m->D[2] == m->D[3] || m->D[2] > i);
}

static void put_result(const gc_tally *t, abl_pred_head *out)
{
    out->matrix_zeros = t->wz;
    out->matrix_influence_zeros = t->iz;
    out->row_zeros = t->last_wz;
    out->row_influence_zeros = t->last_iz;
    out->first_blind = t->last_w;
    out->first_influence_zero = t->last_i;
    out->exact_rows = t->exact;
}

abl_status abl_ggml_cuda_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n;
    float *buf = malloc(5 * n * sizeof *buf);
    double *P = malloc((n + 1) * sizeof *P);
    if (buf == NULL || P == NULL) {
        free(buf);
        free(P);
        return ABL_ERR_NO_MEMORY;
    }
    float *T = buf, *E = buf + n, *x = buf + 2 * n, *col = buf + 3 * n, *w = buf + 4 * n;
    for (uint64_t d = 0; d < n; d++)
        T[d] = abl_engine_logit(em, &s->hd[h], 0.0f, d, abl_engine_bias_mag(em, &s->hd[h], d));
    gc_ctx c = {em, E, n};
    int mono = fill_e(T, n, E, P);
    int nth = abl_ggml_cuda_threads(n);
    gc_tally t = {0, 0, 0, -1, -1, 0, 0};
    gc_memo m = {-1.0f, -1.0f, {0, 0, 0, 0}};
    for (uint64_t i = em->first_row; i < n; i++) {
        uint64_t Dw, Di;
        if (mono && row_thresholds(&c, P, i, nth, &m, &Dw, &Di))
            settled_row(&c, i, Dw, Di, &t);
        else
            exact_row(&c, T, i, x, col, w, &t);
    }
    put_result(&t, out);
    free(buf);
    free(P);
    return ABL_OK;
}
