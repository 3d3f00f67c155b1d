/* alibi-blind: the zero-logit predictor of ggml's flash attention (llamacpp-cpu-fa,
 * ggml_compute_forward_flash_attn_ext_f16 at ggml-org/ggml@d99724f2; abl_ggml.c models it) for a
 * bidirectional layer: llama.cpp's jina-bert-v2 fills the (F16) mask with -|p0 - p1| for every key
 * (llama-graph.cpp @00395eb2), so each row i is N keys in key order, its diagonal the row max.
 *
 * The tiled kernel (abl_ggml.c tiled_row, from 64 query rows on: every bidirectional layer of N >= 64) runs
 * 64-key tiles from key 0 with a running max M, an fp32 accumulator col and an fp32 sum S. With zero logits
 * x_j = T[|i - j|] (T[0] = 0, T non-increasing: -fp32(slope fp16(d))), so for row i = 64 q + rho:
 *   - left tiles (k = 1..q tiles left of the diagonal's tile q): the tile max is its last key, at distance
 *     g_k = rho + 1 + 64 (k - 1); a key at d = g_k + l gets e = exp(T[d] - T[g_k]) (ggml_v_expf in the AVX2
 *     build), then every later tile rescales it by b_s = expf(T[g_s] - T[g_(s-1)]) (libm; b_1 into the
 *     diagonal's tile, whose max is T[0]), each product rounded to fp32: its column depends on (rho, d)
 *     alone, not on q. S runs the same rescales: S = fp32(fp32(S b) + tile sum) tile by tile, the tile sum
 *     the kernel's binary64 sum of its 8-key vectors' lane trees;
 *   - the diagonal's tile and the tiles right of it: the max is already T[0] = 0 and stays, so e = exp(T[d])
 *     (table eA) with no later rescale, each tile's sum added to S in fp32 (the last tile cut at key N - 1);
 *   - the weight is fp32(col fp32(1 / S)): zero exactly when col <= E(r) (abl_ggml_zero_bound, monotone).
 * Per residue rho, in O(1) amortised per row:
 *   - the left state: each tile's step is monotone in the state, so once the state after tiles K..1 is the
 *     same from 0 and from the largest state farther tiles can leave, every longer row has it (O(K^2), K
 *     the tiles the state takes to forget; every row's own chain where it never does);
 *   - the right part: whole tiles' sums tabulated per residue, up to the first tile whose e are all 0; rows
 *     whose right tiles are all whole up to there and whose left state repeats have the same S;
 *   - the left zeros: a key of tile k is zero for E exactly when its e <= th_k(E), th_0 = E and th_k the
 *     largest v with fp32(v b_k) <= th_(k-1) (each rescale is monotone): the thresholds for the smallest
 *     and the largest E of the rows decide every key but those between them, whose column is formed
 *     through the k rescales and compared row by row; from a tile where th_k >= 2 every farther key is
 *     zero (ggml's exp of a non-positive argument is 2^n (1 + p), n <= 0, p < 0.5);
 *   - the diagonal's tile and the right keys: eA's band (abl_ggml.c's, with its monotone check) per row.
 * The one-row kernels (one-chunk: N < 64; split-kv or one-chunk when the pipeline asks for them) are run
 * row by row as simulate runs them (abl_ggml_row): exact, at simulate's cost (abl_predict_estimate).
 * ggml-flash's column is already the coefficient of V (P.V inside the kernel), so the influence counts are
 * the weight counts (abl_influence.h).
 * Cost: 64 heads at N = 32768 in 0.9 CPU-s on one core (bench/bench_predict.sh; docs/pipelines.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_ggml.h"
#include "kernel/abl_simulate_bidir.h"

#define FB_TILE 64
#define FB_LANES 8

/* A left key whose zero test depends on the row (its column between the rows' smallest and largest E). */
typedef struct fb_amb {
    uint64_t k, d;    /* its tile, its distance */
    float col;        /* its final column */
} fb_amb;

typedef struct fb_pred {
    const abl_emul *em;
    uint64_t n, L;            /* keys; lanes per vector (8: AVX2 build, 1: scalar build) */
    const float *T, *eA;      /* logit by distance; ggml's exp of it against the diagonal's 0 */
    uint64_t DzA, D0A;        /* eA: first d with eA <= Eb (n: none); 1 + the last d with eA != 0 */
    int monoA;                /* eA non-increasing on [DzA, D0A) */
    float Eb;                 /* E(r) for the smallest r a row can have (S < 2 N) */
    /* one residue rho at a time: rows i = 64 q + rho, q <= qmax; left tiles k = 1..q */
    uint64_t rho, qmax, have; /* tiles 1..have tabulated */
    float *ER;                /* by distance: a left key's e against its tile max */
    double *ts, *TR;          /* by tile: the left tile's sum (its own max); whole tile k right of the
                               * diagonal's (k = 0: the diagonal's own) */
    float *b;                 /* by tile: the rescale leaving tile k (k = 1: into the diagonal's) */
    float *SL, *Er;           /* by row: S after the left tiles (before b_1); E(r) (NaN: no zero possible) */
    uint64_t *PZ;             /* by tile: left keys zero in every row (tiles 1..k) */
    fb_amb *amb;              /* the row-dependent left keys, by tile */
    size_t namb, camb;
    uint64_t k0;              /* the first tile where a left key can be zero */
} fb_pred;

static float fb_exp(const abl_emul *em, float y)
{
    return em->exp == ABL_EXP_GGML_AVX2 ? abl_ggml_expf_avx2(y) : abl_exp_rn32(y);
}

static float fb_sub(float a, float b)
{
    return (float)((double)a - (double)b);
}

static float fb_mul(float a, float b)
{
    return (float)((double)a * (double)b);
}

/* A tile's binary64 sum as ggml_vec_soft_max_f32 forms it from 64 slots in key order (absent keys 0). */
static double fb_tile_sum(const float *v, uint64_t L)
{
    double s = 0.0;
    if (L == 1) {
        for (int k = 0; k < FB_TILE; k++)
            s += (double)v[k];
        return s;
    }
    for (int k = 0; k < FB_TILE; k += FB_LANES) {
        const float *w = v + k;
        float a0 = w[0] + w[4], a1 = w[1] + w[5], a2 = w[2] + w[6], a3 = w[3] + w[7];
        s += (double)((a0 + a2) + (a1 + a3));
    }
    return s;
}

/* The sum of a tile at or right of the diagonal: slot s is key j0 + s at d = |j0 + s - i|; keys past
 * N - 1 are absent. */
static double fb_right_sum(const fb_pred *f, uint64_t i, uint64_t j0)
{
    float v[FB_TILE];
    for (uint64_t s = 0; s < FB_TILE; s++) {
        uint64_t j = j0 + s, d = j > i ? j - i : i - j;
        v[s] = j < f->n ? f->eA[d] : 0.0f;
    }
    return fb_tile_sum(v, f->L);
}

/* Band of a table by distance on [lo, end): first d with t <= Eb (end: none), 1 + the last d with t != 0,
 * whether t is non-increasing in between. */
static void fb_band(const float *t, uint64_t lo, uint64_t end, float Eb, uint64_t *Dz, uint64_t *Dc, int *mono)
{
    *Dz = end;
    *Dc = lo;
    for (uint64_t d = lo; d < end; d++) {
        if (*Dz == end && t[d] <= Eb)
            *Dz = d;
        if (t[d] != 0.0f)
            *Dc = d + 1;
    }
    *mono = 1;
    for (uint64_t d = *Dz + 1; d < *Dc && *mono; d++)
        *mono = t[d] <= t[d - 1];
}

/* Zero keys among distances [lo, hi] of a table with band [Dz, Dc): *first the smallest (-1: none). */
static uint64_t fb_count(const float *t, uint64_t Dz, uint64_t Dc, int mono, uint64_t lo, uint64_t hi, float E,
                         int64_t *first)
{
    *first = -1;
    if (lo > hi || hi < Dz)
        return 0;
    uint64_t z = 0;
    if (mono) {
        uint64_t s = abl_ggml_band_start(t, Dz, Dc, E);
        s = s > lo ? s : lo;
        if (s <= hi) {
            *first = (int64_t)s;
            z = hi - s + 1;
        }
        return z;
    }
    for (uint64_t d = lo > Dz ? lo : Dz; d <= hi; d++)
        if (d >= Dc || t[d] <= E) {
            z++;
            if (*first < 0)
                *first = (int64_t)d;
        }
    return z;
}

static uint64_t fb_g(const fb_pred *f, uint64_t k)
{
    return f->rho + 1 + FB_TILE * (k - 1);   /* left tile k's max: its last key */
}

/* Tabulates the left tiles up to k: e against each tile's max (ggml's exp), the tile sums, the rescales
 * (libm expf of the max's step, 1 where the max does not rise: no rescale). */
static void fb_need(fb_pred *f, uint64_t k)
{
    const float *T = f->T;
    for (; f->have < k && f->have < f->qmax; f->have++) {
        uint64_t t = f->have + 1, g = fb_g(f, t);
        float v[FB_TILE];
        for (uint64_t l = 0; l < FB_TILE; l++) {
            float e = fb_exp(f->em, fb_sub(T[g + l], T[g]));
            f->ER[g + l] = e;
            v[FB_TILE - 1 - l] = e;   /* slot s holds key d = g + 63 - s */
        }
        f->ts[t] = fb_tile_sum(v, f->L);
        float next = t >= 2 ? T[g - FB_TILE] : T[0];
        f->b[t] = next > T[g] ? abl_exp_rn32(fb_sub(T[g], next)) : 1.0f;
    }
}

/* The left state after tiles K..1 from S (tiled_row: S = fp32(S b) + the tile's binary64 sum). */
static float fb_left_from(const fb_pred *f, uint64_t K, float S)
{
    for (uint64_t k = K; k >= 1; k--) {
        if (k < K && f->b[k + 1] != 1.0f)
            S = fb_mul(S, f->b[k + 1]);
        S = (float)((double)S + f->ts[k]);
    }
    return S;
}

/* SL[q] for every row of the residue. Each tile's step is monotone in the state, so when the state after
 * tiles K..1 is the same from S = 0 (row q = K) and from the largest state tile K + 1 can leave (2 N: at
 * most N terms < 1.5, rounded), every row q > K has it. */
static void fb_left_sums(fb_pred *f)
{
    float big = 2.0f * (float)f->n;
    uint64_t K = 1;
    f->SL[0] = 0.0f;
    for (; K <= f->qmax; K++) {
        fb_need(f, K + 1);
        f->SL[K] = fb_left_from(f, K, 0.0f);
        if (K < f->qmax && fb_left_from(f, K, fb_mul(big, f->b[K + 1])) == f->SL[K])
            break;
    }
    for (uint64_t q = K + 1; q <= f->qmax; q++)
        f->SL[q] = f->SL[K];
}

/* S of row i = 64 q + rho as tiled_row forms it: the left state, the diagonal's tile, the right tiles
 * (those from the first whose keys all have e = 0 on add 0). */
static float fb_row_sum(const fb_pred *f, uint64_t q)
{
    uint64_t i = FB_TILE * q + f->rho, last_tile = (f->n - 1) / FB_TILE;
    float S = f->SL[q];
    if (q >= 1 && f->b[1] != 1.0f)
        S = fb_mul(S, f->b[1]);
    /* whole tiles from the residue's table (the same keys at the same distances), the cut one here */
    for (uint64_t k = 0; q + k <= last_tile && (k == 0 || FB_TILE * k < f->D0A + f->rho); k++)
        S = (float)((double)S + (FB_TILE * (q + k + 1) <= f->n ? f->TR[k] : fb_right_sum(f, i, FB_TILE * (q + k))));
    return S;
}

/* The largest v with fp32(v b) <= th (fp32(v b) is monotone in v): the inverse of one rescale. */
static float fb_inv(float th, float b)
{
    if (b == 1.0f)
        return th;
    if (b == 0.0f)
        return INFINITY;
    /* fp32(x) <= th exactly for x up to the midpoint of th and its successor: start from that bound */
    double mid = 0.5 * ((double)th + (double)nextafterf(th, INFINITY));
    float c = (float)(mid / (double)b);
    if (isinf(c) || isinf(th))
        return INFINITY;
    while (c > 0.0f && fb_mul(c, b) > th)
        c = nextafterf(c, 0.0f);
    while (isfinite(c) && fb_mul(nextafterf(c, INFINITY), b) <= th)
        c = nextafterf(c, INFINITY);
    return c;
}

/* The left keys' zero sets for E in [lo, hi] (the rows' E): a key of tile k is zero for E exactly when
 * its e <= th_k(E), th_0 = E, th_k = fb_inv(th_(k-1), b_k) (the column is e through b_k, ..., b_1). Keys
 * zero for lo count in PZ; keys zero for hi only are kept with their column (forward chain). From a
 * tile where th_k(lo) >= 2 every farther key is zero (ggml's exp of a non-positive argument is < 2). */
static int fb_left_zeros(fb_pred *f, float lo, float hi)
{
    float tl = lo, th = hi;
    int full = 0;
    f->namb = 0;
    f->PZ[0] = 0;
    for (uint64_t k = 1; k <= f->qmax; k++) {
        uint64_t z = FB_TILE;
        if (!full) {
            fb_need(f, k);
            tl = fb_inv(tl, f->b[k]);
            th = fb_inv(th, f->b[k]);
            full = tl >= 2.0f;
        }
        if (!full) {
            z = 0;
            uint64_t g = fb_g(f, k);
            for (uint64_t l = 0; l < FB_TILE; l++) {
                float e = f->ER[g + l];
                if (e <= tl) {
                    z++;
                } else if (e <= th) {
                    if (f->namb == f->camb) {
                        size_t c = f->camb ? 2 * f->camb : 64;
                        fb_amb *a = realloc(f->amb, c * sizeof *a);
                        if (a == NULL)
                            return 0;
                        f->amb = a;
                        f->camb = c;
                    }
                    float v = e;
                    for (uint64_t s = k; s >= 1 && v != 0.0f; s--)
                        if (f->b[s] != 1.0f)
                            v = fb_mul(v, f->b[s]);
                    f->amb[f->namb++] = (fb_amb){k, g + l, v};
                }
            }
        }
        f->PZ[k] = f->PZ[k - 1] + z;
    }
    return 1;
}
/* The first tile where a left key can be zero in some row (E <= Eb); qmax + 1 when none. */
static uint64_t fb_first_tile(fb_pred *f)
{
    float th = f->Eb;
    for (uint64_t k = 1; k <= f->qmax; k++) {
        fb_need(f, k);
        th = fb_inv(th, f->b[k]);
        if (th >= 2.0f)
            return k;
        for (uint64_t l = 0, g = fb_g(f, k); l < FB_TILE; l++)
            if (f->ER[g + l] <= th)
                return k;
    }
    return f->qmax + 1;
}

/* The smallest left distance zero in row q for E (-1: none): the end row's first blind distance. */
static int64_t fb_first_left(fb_pred *f, uint64_t q, float E)
{
    float th = E;
    for (uint64_t k = 1; k <= q; k++) {
        fb_need(f, k);
        th = fb_inv(th, f->b[k]);
        uint64_t g = fb_g(f, k);
        if (th >= 2.0f)
            return (int64_t)g;
        for (uint64_t l = 0; l < FB_TILE; l++)
            if (f->ER[g + l] <= th)
                return (int64_t)(g + l);
    }
    return -1;
}

/* Pass 1: E(r) of every row that can have a zero (NaN: none can); *lo, *hi: the extremes over the rows
 * that reach tile k0. Rows whose right tiles are all whole up to the zeros and whose SL is the last
 * one's have its S (the same sums in the same order). */
static void fb_row_bounds(fb_pred *f, float *lo, float *hi)
{
    uint64_t Kr = (f->D0A + f->rho + FB_TILE - 1) / FB_TILE;
    float cS = NAN, cSL = NAN, cr = NAN, cE = 0.0f;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (uint64_t q = 0; q <= f->qmax; q++) {
        uint64_t i = FB_TILE * q + f->rho, right = f->n - 1 - i;
        f->Er[q] = NAN;
        if (f->rho < f->DzA && right < f->DzA && q < f->k0)
            continue;   /* every key's column is above E for every r */
        int steady = FB_TILE * (q + Kr) <= f->n;
        float S = steady && f->SL[q] == cSL ? cS : fb_row_sum(f, q);
        if (steady) {
            cSL = f->SL[q];
            cS = S;
        }
        float r = (float)(1.0 / (double)S);
        if (!(r == cr)) {
            cr = r;
            cE = abl_ggml_zero_bound(r, 0.0f);
        }
        f->Er[q] = cE;
        if (q >= f->k0) {
            *lo = fminf(*lo, cE);
            *hi = fmaxf(*hi, cE);
        }
    }
}

/* Residue rho: its tables, then its rows' counts into out. 0: out of memory. */
static int fb_residue(fb_pred *f, uint64_t rho, abl_pred_head *out)
{
    uint64_t n = f->n, mid = abl_bidir_mid(n);
    f->rho = rho;
    f->qmax = (n - 1 - rho) / FB_TILE;
    f->have = 0;
    fb_left_sums(f);
    f->k0 = fb_first_tile(f);
    for (uint64_t k = 0; k <= (n - 1) / FB_TILE && (k == 0 || FB_TILE * k < f->D0A + rho); k++)
        f->TR[k] = fb_right_sum(f, rho, FB_TILE * k);   /* row q = 0: tile k whole when a row uses it */
    float lo, hi;
    fb_row_bounds(f, &lo, &hi);
    if (lo <= hi && !fb_left_zeros(f, lo, hi))
        return 0;
    for (uint64_t q = 0; q <= f->qmax; q++) {
        uint64_t i = FB_TILE * q + rho, z = 0;
        float E = f->Er[q];
        int64_t fd = -1, fr;
        if (!isnan(E)) {
            z = fb_count(f->eA, f->DzA, f->D0A, f->monoA, 1, rho, E, &fd);   /* the diagonal's tile, left */
            z += fb_count(f->eA, f->DzA, f->D0A, f->monoA, 1, n - 1 - i, E, &fr);   /* the right */
            if (q >= f->k0) {
                z += f->PZ[q];
                for (size_t a = 0; a < f->namb && f->amb[a].k <= q; a++)
                    z += f->amb[a].col <= E;
            }
        }
        out->matrix_zeros += z;
        if (i == mid)
            out->mid_row_zeros = z;
        if (i == n - 1) {
            out->row_zeros = z;
            out->first_blind = fd >= 0 || isnan(E) ? fd : fb_first_left(f, q, E);
        }
    }
    return 1;
}

/* The one-row kernels (one-chunk, split-kv): each row run as simulate runs it (abl_ggml_row on the N keys
 * in key order). w: N floats; x, col: N floats of scratch. */
static void fb_one_row(const fb_pred *f, float *x, float *col, float *w, abl_pred_head *out)
{
    uint64_t n = f->n, mid = abl_bidir_mid(n);
    for (uint64_t i = 0; i < n; i++) {
        for (uint64_t j = 0; j < n; j++)
            x[j] = f->T[j > i ? j - i : i - j];
        uint64_t z = abl_ggml_row(f->em, n - 1, x, col, w, NULL);
        out->matrix_zeros += z;
        if (i == mid)
            out->mid_row_zeros = z;
        if (i == n - 1) {
            out->row_zeros = z;
            for (uint64_t d = 0; d <= i && out->first_blind < 0; d++)
                if (w[i - d] == 0.0f)
                    out->first_blind = (int64_t)d;
        }
    }
}

/* The head's logits by distance (refused when one is not finite, as simulate refuses it, or exceeds the
 * diagonal's) and eA with its band. */
static abl_status fb_tables(const abl_sim_setup *s, int h, fb_pred *f, float *T, float *eA)
{
    const abl_emul *em = &s->em;
    for (uint64_t d = 0; d < f->n; d++) {
        T[d] = abl_emul_logit(em, &s->hd[h], 0.0f, d, abl_emul_bias_mag(em, &s->hd[h], d));
        /* the diagonal's tile max is taken as T[0] = 0 and T as non-increasing */
        if (!isfinite(T[d]) || (d == 0 && T[d] != 0.0f) || (d > 0 && T[d] > T[d - 1]))
            return ABL_ERR_UNSUPPORTED;
        eA[d] = fb_exp(em, fb_sub(T[d], T[0]));
    }
    double smax = 2.0 * (double)f->n;   /* S < 2 N: N terms <= 1, rounded */
    f->Eb = abl_ggml_zero_bound((float)(1.0 / smax), 0.0f);
    fb_band(eA, 1, f->n, f->Eb, &f->DzA, &f->D0A, &f->monoA);
    return ABL_OK;
}

abl_status abl_ggml_fa_bidir_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n, nt = n / FB_TILE + 2;
    memset(out, 0, sizeof *out);
    out->first_blind = out->first_influence_zero = -1;
    int tiled = em->fa_kernel == ABL_FA_TILED;
    float *buf = malloc((5 * n + 3 * nt) * sizeof *buf);
    double *ts = malloc(2 * nt * sizeof *ts);
    uint64_t *pz = malloc(nt * sizeof *pz);
    fb_pred f = {em, n, em->exp == ABL_EXP_GGML_AVX2 ? FB_LANES : 1, buf, buf + n, 0, 0, 0, 0.0f, 0, 0, 0,
                 buf + 2 * n, ts, ts + nt, buf + 5 * n, buf + 5 * n + nt, buf + 5 * n + 2 * nt, pz, NULL, 0, 0, 0};
    abl_status st = buf != NULL && ts != NULL && pz != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        st = fb_tables(s, h, &f, buf, buf + n);
    for (uint64_t rho = 0; st == ABL_OK && tiled && rho < FB_TILE && rho < n; rho++)
        st = fb_residue(&f, rho, out) ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK && !tiled)
        fb_one_row(&f, buf + 2 * n, buf + 3 * n, buf + 4 * n, out);
    free(buf);
    free(ts);
    free(pz);
    free(f.amb);
    out->first_influence_zero = out->first_blind;   /* the column is the coefficient of V */
    out->row_influence_zeros = out->row_zeros;
    out->matrix_influence_zeros = out->matrix_zeros;
    return st;
}
