/* alibi-blind: the zero-logit tile walk of the tiled GPU kernels with a running max (trtllm-context,
 * vllm-triton's 2-D kernel), modelled from source, not measured (docs/pipelines.md §3c; abl_engines_walk.h
 * says why it is exact). One walk, so that the two kernels' predictors cannot drift apart: each kernel gives
 * only its arithmetic (abl_tile_steps). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_engines_walk.h"

static void walk_last(abl_tile_walk *t, uint64_t base, uint64_t z)
{
    t->last_zeros += z;
    if (z > 0 && (int64_t)(base + z - 1) > t->last_key)
        t->last_key = (int64_t)(base + z - 1);
}

/* The full tiles' factors, then each computed row's factors and the zero prefix of its diagonal tile. */
static void walk_rows(abl_tile_walk *t)
{
    const abl_tile_steps *s = t->steps;
    s->tiles(t);
    for (uint64_t tt = 0; tt <= t->nt; tt++) {   /* row groups 0 .. nt */
        t->gmin[2 * tt] = t->gmin[2 * tt + 1] = INFINITY;
        t->gmax[2 * tt] = t->gmax[2 * tt + 1] = -INFINITY;
    }
    for (uint64_t i = t->c; i < t->n; i++) {
        uint64_t T = i / t->B, lo = T * t->B;
        float ad, b;
        s->row(t, i, &ad, &b);
        t->ad[i - t->c] = ad;
        t->b[i - t->c] = b;
        t->gmin[2 * T] = fminf(t->gmin[2 * T], ad);
        t->gmax[2 * T] = fmaxf(t->gmax[2 * T], ad);
        t->gmin[2 * T + 1] = fminf(t->gmin[2 * T + 1], b);
        t->gmax[2 * T + 1] = fmaxf(t->gmax[2 * T + 1], b);
        uint64_t z = 0;   /* the diagonal tile's keys: a zero prefix */
        while (lo + z <= i && s->diag(t, s->p(t, t->X[lo + z], t->X[i]), b) == 0.0f)
            z++;
        t->zeros += z;
        if (i == t->n - 1)
            walk_last(t, lo, z);
    }
}

/* Zeros of one row among a tile's keys A[lo..B-1] (non-decreasing; A[0..lo) already 0): the zero prefix. */
static uint64_t walk_prefix(const abl_tile_walk *t, const float *A, uint64_t lo, float ad, float b)
{
    uint64_t a = lo, hi = t->B;   /* keys < a zero; keys >= hi not */
    while (a < hi) {
        uint64_t mid = a + (hi - a) / 2;
        if (t->steps->weight(t, A[mid], ad, b) == 0.0f)
            a = mid + 1;
        else
            hi = mid;
    }
    return a;
}

/* Adds the zeros of row group T among one tile's keys (A: their A_j(T-1), lo of them 0); returns the last
 * row's zero prefix when the group holds it, else 0. */
static uint64_t walk_group(abl_tile_walk *t, const float *A, uint64_t lo, uint64_t T)
{
    uint64_t B = t->B, r0 = T * B > t->c ? T * B : t->c, r1 = T * B + B - 1 < t->n - 1 ? T * B + B - 1 : t->n - 1;
    if (r0 > r1)
        return 0;
    /* the final factor that makes a coefficient largest: the largest 1/sum, or the smallest sum divided by */
    float bhi = t->steps->b_divides ? t->gmin[2 * T + 1] : t->gmax[2 * T + 1];
    float blo = t->steps->b_divides ? t->gmax[2 * T + 1] : t->gmin[2 * T + 1];
    uint64_t all = UINT64_MAX;
    if (t->steps->weight(t, A[B - 1], t->gmax[2 * T], bhi) == 0.0f)
        all = B;    /* even the largest key with the largest factors is 0 */
    else if (lo == B || t->steps->weight(t, A[lo], t->gmin[2 * T], blo) != 0.0f)
        all = lo;   /* even the smallest live key with the smallest factors is not */
    if (all != UINT64_MAX) {
        t->zeros += all * (r1 - r0 + 1);
        return r1 == t->n - 1 ? all : 0;
    }
    uint64_t z = 0;
    for (uint64_t i = r0; i <= r1; i++) {
        z = walk_prefix(t, A, lo, t->ad[i - t->c], t->b[i - t->c]);
        t->zeros += z;
    }
    return r1 == t->n - 1 ? z : 0;
}

/* Tile tt's keys through every later row group, until all of them are 0. A: B floats of scratch. */
static void walk_tile(abl_tile_walk *t, uint64_t tt, float *A)
{
    const abl_tile_steps *s = t->steps;
    uint64_t B = t->B, base = tt * B, Tlast = (t->n - 1) / B, lo = 0;
    for (uint64_t k = 0; k < B; k++)
        A[k] = s->p(t, t->X[base + k], t->X[base + B - 1]);
    while (lo < B && A[lo] == 0.0f)
        lo++;
    for (uint64_t T = tt + 1; T <= Tlast; T++) {
        if (lo == B) {   /* every key 0: zero in every row from here on */
            uint64_t r0 = T * B > t->c ? T * B : t->c;
            t->zeros += B * (t->n - r0);
            walk_last(t, base, B);
            return;
        }
        uint64_t z = walk_group(t, A, lo, T);
        if (T == Tlast) {
            walk_last(t, base, z);
        } else {
            s->rescale(t, A, lo, t->alpha[T]);   /* the accumulator rescaled by tile T's factor */
            while (lo < B && A[lo] == 0.0f)
                lo++;
        }
    }
}

abl_status abl_tile_walk_predict(const abl_emul *em, const float *X, uint64_t n, uint64_t B,
                                 const abl_tile_steps *steps, void *engine, abl_pred_head *out)
{
    uint64_t Tlast = (n - 1) / B, R = n - em->first_row;
    size_t G = 2 * (size_t)(Tlast + 1);
    float *buf = malloc((2 * (size_t)(Tlast + 1) + 2 * (size_t)R + 2 * G + (size_t)B) * sizeof *buf);
    if (buf == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_tile_walk t;
    memset(&t, 0, sizeof t);
    t.em = em;
    t.steps = steps;
    t.engine = engine;
    t.X = X;
    t.n = n;
    t.B = B;
    t.c = em->first_row;
    t.nt = Tlast;
    t.alpha = buf;
    t.Lrun = buf + (Tlast + 1);
    t.ad = buf + 2 * (Tlast + 1);
    t.b = t.ad + R;
    t.gmin = t.b + R;
    t.gmax = t.gmin + G;
    t.last_key = -1;
    float *A = t.gmax + G;
    walk_rows(&t);
    for (uint64_t tt = 0; tt < Tlast; tt++)
        walk_tile(&t, tt, A);
    out->matrix_zeros = t.zeros;
    out->row_zeros = t.last_zeros;
    out->first_blind = t.last_key >= 0 ? (int64_t)(n - 1) - t.last_key : -1;
    free(buf);
    return ABL_OK;
}
