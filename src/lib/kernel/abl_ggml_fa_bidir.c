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
 *     diagonal's tile, whose max is T[0]), each product rounded to fp32: its final column depends on (rho, d)
 *     alone, not on q, so it is tabulated once per residue (CL). S runs the same rescales:
 *     S = fp32(fp32(S b) + tile sum) tile by tile, the tile sum the kernel's binary64 sum of its 8-key
 *     vectors' lane trees;
 *   - the diagonal's tile and the tiles right of it: the max is already T[0] = 0 and stays, so e = exp(T[d])
 *     (table eA) with no later rescale, each tile's sum added to S in fp32 (the last tile cut at key N - 1);
 *   - the weight is fp32(col fp32(1 / S)): zero exactly when col <= E(r) (abl_ggml_zero_bound, monotone).
 * The zero keys of a row are counted per side from the tables: none below the band's first distance (whose
 * value exceeds E for the smallest r any row can have), all from the last non-zero one on, a suffix found
 * by bisection in between where the table is non-increasing there (checked per head and residue, not
 * assumed), every key tested otherwise.
 * A left tile whose every column is 0 makes every farther tile 0 (its keys enter the same rescales with
 * e <= 1 = the nearer tile's max key, checked): the chains stop there.
 * The one-row kernels (one-chunk: N < 64; split-kv or one-chunk when the pipeline asks for them) are run
 * row by row as simulate runs them (abl_ggml_row) up to FB_ROW_MAX keys, refused above.
 * ggml-flash's column is already the coefficient of V (P.V inside the kernel), so the influence counts are
 * the weight counts (abl_influence.h).
 * Cost per head: O(64 N) exponentials for the tables, the left chains O(64 K^2) per residue (K: the tiles
 * before a left tile is all zero), O(q + K) per row for S. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_ggml.h"
#include "kernel/abl_simulate_bidir.h"

#define FB_TILE 64
#define FB_LANES 8
#define FB_ROW_MAX 4096   /* the one-row kernels: emulated rows up to this N (O(N^2) keys, rescales) */

typedef struct fb_pred {
    const abl_emul *em;
    uint64_t n, L;            /* keys; lanes per vector (8: AVX2 build, 1: scalar build) */
    const float *T, *eA;      /* logit by distance; ggml's exp of it against the diagonal's 0 */
    uint64_t DzA, D0A;        /* eA: first d with eA <= Eb (n: none); 1 + the last d with eA != 0 */
    int monoA;                /* eA non-increasing on [DzA, D0A) */
    float Eb;                 /* E(r) for the smallest r a row can have (S < 2 N) */
    /* one residue rho at a time */
    float *ER, *CL;           /* by distance: a left key's e against its tile max; its final column */
    double *ts, *TR;          /* by tile k: the left tile's sum; the whole right tile's sum */
    float *b;                 /* by tile k: the rescale leaving left tile k (k = 1: into the diagonal's) */
    uint64_t DzL, DcL;        /* CL's band (as DzA, D0A) */
    int monoL;
} fb_pred;

static float fb_exp(const abl_emul *em, float y)
{
    return em->exp == ABL_EXP_GGML_AVX2 ? abl_ggml_expf_avx2(y) : abl_exp_rn32(y);
}

static float fb_sub(float a, float b)
{
    return (float)((double)a - (double)b);
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

/* The sum of a tile at or right of the diagonal: slot s is key j0 + s at d = j0 + s - i (|.|); keys past
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

/* Band of a table by distance on [lo, n): first d with t <= Eb, 1 + the last d with t != 0, monotone. */
static void fb_band(const float *t, uint64_t lo, uint64_t n, float Eb, uint64_t *Dz, uint64_t *Dc, int *mono)
{
    *Dz = n;
    *Dc = lo;
    for (uint64_t d = lo; d < n; d++) {
        if (*Dz == n && t[d] <= Eb)
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

/* Residue rho's left tiles (k = 1..qmax): e against each tile's max, the tile sums, the rescales; 0 when
 * some e exceeds its tile max's (the stop rule's premise). */
static int fb_left_tables(fb_pred *f, uint64_t rho, uint64_t qmax)
{
    const float *T = f->T;
    int ok = 1;
    for (uint64_t k = 1; k <= qmax; k++) {
        uint64_t g = rho + 1 + FB_TILE * (k - 1);
        float v[FB_TILE];
        for (uint64_t l = 0; l < FB_TILE; l++) {
            float e = fb_exp(f->em, fb_sub(T[g + l], T[g]));
            f->ER[g + l] = e;
            v[FB_TILE - 1 - l] = e;   /* slot s holds key d = g + 63 - s */
            ok &= e <= f->ER[g];
        }
        ok &= f->ER[g] == 1.0f;
        f->ts[k] = fb_tile_sum(v, f->L);
        float next = k >= 2 ? T[g - FB_TILE] : T[0];
        f->b[k] = next > T[g] ? abl_exp_rn32(fb_sub(T[g], next)) : 1.0f;
    }
    return ok;
}

/* The final columns of residue rho's left keys: e through the rescales b_k, ..., b_1, each product
 * rounded to fp32 (tiled_row's col[k] * ms). Stops (the rest 0) after a tile left all zero when stop. */
static void fb_left_columns(fb_pred *f, uint64_t rho, uint64_t qmax, int stop)
{
    int zero_tile = 0;
    for (uint64_t k = 1; k <= qmax; k++) {
        uint64_t g = rho + 1 + FB_TILE * (k - 1);
        int all_zero = 1;
        for (uint64_t l = 0; l < FB_TILE; l++) {
            float v = zero_tile ? 0.0f : f->ER[g + l];
            for (uint64_t s = k; s >= 1 && v != 0.0f; s--)
                if (f->b[s] != 1.0f)
                    v = (float)((double)v * (double)f->b[s]);
            f->CL[g + l] = v;
            all_zero &= v == 0.0f;
        }
        zero_tile |= stop && all_zero;
    }
}

/* S of row i = 64 q + rho as tiled_row forms it (left tiles, the diagonal's, the right ones). */
static float fb_row_sum(const fb_pred *f, uint64_t q, uint64_t rho)
{
    uint64_t i = FB_TILE * q + rho, last_tile = (f->n - 1) / FB_TILE;
    float S = 0.0f;
    for (uint64_t k = q; k >= 1; k--) {
        if (k < q && f->b[k + 1] != 1.0f)
            S = (float)((double)S * (double)f->b[k + 1]);
        S = (float)((double)S + f->ts[k]);
    }
    if (q >= 1 && f->b[1] != 1.0f)
        S = (float)((double)S * (double)f->b[1]);
    S = (float)((double)S + fb_right_sum(f, i, FB_TILE * q));
    for (uint64_t k = 1; q + k <= last_tile; k++) {
        if (FB_TILE * k >= f->D0A + rho)
            break;   /* every later key has e = 0: S + 0 */
        int whole = FB_TILE * (q + k + 1) <= f->n;
        S = (float)((double)S + (whole ? f->TR[k] : fb_right_sum(f, i, FB_TILE * (q + k))));
    }
    return S;
}

/* Row i = 64 q + rho's zero weights; *first_left the smallest zero distance on its left (-1: none). */
static uint64_t fb_row_zeros(const fb_pred *f, uint64_t q, uint64_t rho, int64_t *first_left)
{
    uint64_t i = FB_TILE * q + rho, right = f->n - 1 - i;
    *first_left = -1;
    if (rho < f->DzA && i < f->DzL && right < f->DzA)
        return 0;   /* every key's column is above E for every r */
    float S = fb_row_sum(f, q, rho);
    float r = (float)(1.0 / (double)S);
    float E = abl_ggml_zero_bound(r, 0.0f);
    int64_t fd, fl, fr;
    /* the diagonal's tile left of the diagonal: d in [1, rho], columns eA */
    uint64_t z = fb_count(f->eA, f->DzA, f->D0A, f->monoA, 1, rho, E, &fd);
    z += fb_count(f->CL, f->DzL, f->DcL, f->monoL, rho + 1, i, E, &fl);
    z += fb_count(f->eA, f->DzA, f->D0A, f->monoA, 1, right, E, &fr);
    *first_left = fd >= 0 ? fd : fl;
    return z;
}

/* Residue rho: its tables, then its rows' counts into out. */
static void fb_residue(fb_pred *f, uint64_t rho, abl_pred_head *out)
{
    uint64_t n = f->n, qmax = (n - 1 - rho) / FB_TILE, mid = abl_bidir_mid(n);
    int stop = fb_left_tables(f, rho, qmax);
    fb_left_columns(f, rho, qmax, stop);
    uint64_t lo = rho + 1 < n ? rho + 1 : n;
    fb_band(f->CL, lo, qmax >= 1 ? FB_TILE * qmax + rho + 1 : lo, f->Eb, &f->DzL, &f->DcL, &f->monoL);
    if (f->DzL == (qmax >= 1 ? FB_TILE * qmax + rho + 1 : lo))
        f->DzL = n;   /* no left key can vanish */
    uint64_t last_tile = (n - 1) / FB_TILE;
    for (uint64_t k = 1; k <= last_tile && FB_TILE * k < f->D0A + rho; k++)
        f->TR[k] = fb_right_sum(f, rho, FB_TILE * k);   /* row rho (q = 0): right tile k whole when used so */
    for (uint64_t q = 0; q <= qmax; q++) {
        uint64_t i = FB_TILE * q + rho;
        int64_t first;
        uint64_t z = fb_row_zeros(f, q, rho, &first);
        out->matrix_zeros += z;
        if (i == mid)
            out->mid_row_zeros = z;
        if (i == n - 1) {
            out->row_zeros = z;
            out->first_blind = first;
        }
    }
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
        if (!isfinite(T[d]) || T[d] > T[0] || (d > 0 && T[d] > T[d - 1]))
            return ABL_ERR_UNSUPPORTED;
        eA[d] = fb_exp(em, fb_sub(T[d], T[0]));
    }
    if (T[0] != 0.0f)
        return ABL_ERR_UNSUPPORTED;   /* the diagonal's tile max is taken as 0 */
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
    if (!tiled && n > FB_ROW_MAX)
        return ABL_ERR_UNSUPPORTED;   /* the one-row kernels at this length: simulate only */
    float *buf = malloc(5 * n * sizeof *buf);
    double *dbuf = malloc(2 * nt * sizeof *dbuf);
    float *bk = malloc(nt * sizeof *bk);
    fb_pred f = {em, n, em->exp == ABL_EXP_GGML_AVX2 ? FB_LANES : 1, buf, buf + n, 0, 0, 0, 0.0f,
                 buf + 2 * n, buf + 3 * n, dbuf, dbuf + nt, bk, 0, 0, 0};
    abl_status st = buf != NULL && dbuf != NULL && bk != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        st = fb_tables(s, h, &f, buf, buf + n);
    if (st == ABL_OK && tiled)
        for (uint64_t rho = 0; rho < FB_TILE && rho < n; rho++)
            fb_residue(&f, rho, out);
    else if (st == ABL_OK)
        fb_one_row(&f, buf + 2 * n, buf + 3 * n, buf + 4 * n, out);
    free(buf);
    free(dbuf);
    free(bk);
    out->first_influence_zero = out->first_blind;   /* the column is the coefficient of V */
    out->row_influence_zeros = out->row_zeros;
    out->matrix_influence_zeros = out->matrix_zeros;
    return st;
}
