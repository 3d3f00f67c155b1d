/* alibi-blind: the zero-logit predictor of softmax=ggml-flash (llamacpp-cpu-fa), causal rows: the counts
 * simulate gives through abl_ggml.c's tiled_row / one_chunk / split_row, from the same roundings, without
 * running every row.
 *
 * With zero scores the logit of a key depends on its distance d = i - j alone: X(d) = -fp32(slope *
 * fp16(d)), non-increasing in d, -inf from d = 65520 (the fp16 mask's infinity: the key is skipped).
 *
 * tiled (64-key tiles from key 0): row i = 64 q + rho sees, counted from the diagonal's tile (k = 0), tiles
 * whose keys, lanes and maxima depend on rho alone (tile k >= 1 holds d = rho + 64 (k - 1) + 1 ..
 * rho + 64 k). So the final accumulator of the key at distance d -- its exponential against its tile's max,
 * then every later tile's rescale in order -- is one value w(d, rho) for all rows of residue rho, and the
 * tiles' binary64 sums T_k and rescales m_k are shared too. Per residue one pass over its longest row
 * (exactly tiled_row's operations) gives w(., rho), T and m; each row's fp32 sum is then the recursion
 * S = fp32(fp32(S m_k) + T_k) from its own farthest tile, and two rows' recursions that meet at some tile
 * agree from there on, so each row runs only until it meets the previous row's (amortised O(1) per row).
 * The zero keys of a row are those with fp32(w r) = 0 (r = fp32(1 / S)): every key before the first d with
 * w <= E(r_max) is non-zero, every key past the last non-zero w is zero, the band between is tested key
 * by key (w need not be monotone there: ggml_v_expf is a polynomial). The pass rescales only the columns
 * that can still end at zero: one whose value times a lower bound of the rescales left stays above every
 * row's zero bound is marked non-zero (NaN) and leaves the loop (tiled_bounds), which for flat slopes is
 * most of the work.
 *
 * one-chunk (key by key, F16 accumulator): every key is a new max or ties it (vs = 1), so the key at
 * distance d holds the chain F16(fp32(v * mm[d'])) over the rescales of the keys after it, mm[d'] =
 * expf(X(d' + 1) - X(d')) where X rises: one value C(d) for every row. C is non-increasing in d (the
 * chain is monotone and its first factor F16(mm[d]) <= 1 = the start of C(d)'s chain), so a row's zero keys
 * are a suffix in d, found by bisection; the row sums S = fma(S, mm, 1) run from key 0 and meet like the
 * tiled ones.
 *
 * split-kv: each thread's chunk is a one-chunk pass whose chain stops at the chunk's last key (distance e):
 * C_e(d), non-increasing in d, so each chunk's zero keys are a suffix found by bisection after the merge's
 * fp32 rescales (reduce_partials, chunk order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_ggml.h"

#define FA_TILE 64   /* GGML_FA_TILE_KV */
#define FA_LANES 8   /* the AVX2 build's vectors */

/* The tiles' exponentials by argument: a tile's 64 arguments fp32(X(d) - X(a)) repeat from tile to tile (one
 * value per offset, give or take an ulp of the products), so most of the 64 N exponentials of a head are
 * looked up, not evaluated. Direct-mapped on the argument's bits; a miss evaluates and replaces. */
#define FA_EXP_CACHE 4096
typedef struct fa_exp_cache {
    uint32_t key[FA_EXP_CACHE];
    float val[FA_EXP_CACHE];
} fa_exp_cache;

typedef struct fa_ctx {
    const abl_emul *em;
    fa_exp_cache *ec;      /* tiled: the exponential cache (key 0 = +0.0f, whose value is set up front) */
    uint64_t n, first_row; /* the rows asked: first_row .. n - 1 */
    uint64_t dinf;         /* the first d whose logit is -inf (n when none) */
    float *X;              /* X[d]: the logit at distance d */
    float *mm;             /* one-row kernels: mm[d] the rescale when key d follows key d + 1 (1: none) */
} fa_ctx;

static float sub32(float a, float b)
{
    return (float)((double)a - (double)b);
}

static float mul32(float a, float b)
{
    return (float)((double)a * (double)b);
}

static float fa_exp(const abl_emul *em, float y)
{
    return em->exp == ABL_EXP_GGML_AVX2 ? abl_ggml_expf_avx2(y) : abl_exp_rn32(y);
}

static float fa_exp_cached(const abl_emul *em, fa_exp_cache *ec, float y)
{
    uint32_t u;
    memcpy(&u, &y, sizeof u);
    uint32_t slot = (u ^ (u >> 13)) % FA_EXP_CACHE;
    if (ec->key[slot] != u) {
        ec->key[slot] = u;
        ec->val[slot] = fa_exp(em, y);
    }
    return ec->val[slot];
}

/* r = fp32(1 / S) as every path ends (0 for an empty row) */
static float fa_rinv(float S)
{
    return S == 0.0f ? 0.0f : (float)(1.0 / (double)S);
}

static int fa_zero(float w, float r)
{
    return mul32(w, r) == 0.0f;
}

/* The row's counts into out: zeros added to the matrix; the last row also sets the first blind d. */
static void fa_tally(const fa_ctx *c, uint64_t i, uint64_t zeros, int64_t first, abl_pred_head *out)
{
    out->matrix_zeros += zeros;
    if (i == c->n - 1) {
        out->row_zeros = zeros;
        out->first_blind = first;
    }
}

/* ---- tiled ---- */

/* v[0..len-1] *= ms in binary32 (the IEEE product, as mul32), eight at a time so that the compiler's
 * straight-line vectoriser takes it: the hot loop of a small slope's long-lived columns. */
static void fa_scale(float *v, uint64_t len, float ms)
{
    uint64_t j = 0;
    for (; j + 8 <= len; j += 8) {
        float *p = v + j;
        p[0] *= ms;
        p[1] *= ms;
        p[2] *= ms;
        p[3] *= ms;
        p[4] *= ms;
        p[5] *= ms;
        p[6] *= ms;
        p[7] *= ms;
    }
    for (; j < len; j++)
        v[j] *= ms;
}

/* One residue's shared tables: w (by d, from its longest row), the tiles' sums and rescales by k. */
typedef struct fa_tiles {
    float *w;        /* w[d], d <= imax */
    double *T;       /* T[k]: tile k's binary64 sum */
    float *m;        /* m[k]: the rescale of S when tile k follows tile k + 1 (1: none) */
    float *S;        /* S[k]: the latest row's running sum after tile k */
    double *thr;     /* thr[k]: above it a column's value after tile k is non-zero in the end */
    uint64_t kfin;   /* the farthest tile with a finite max */
    uint64_t dhi;    /* every d >= dhi has w = 0 */
} fa_tiles;

/* ggml_vec_soft_max_f32 over a tile [lo, lo + 64) of row x whose last key is `last`: e into col, the
 * binary64 sum of 8-key vectors (lane tree hi4 + lo4, [0]+[2], [1]+[3], [0]+[1]; the scalar build adds
 * key by key). Mirrors abl_ggml.c's ggml_softmax_span for a whole tile. */
static double fa_tile_span(const abl_emul *em, fa_exp_cache *ec, const float *x, uint64_t lo, uint64_t last, float max,
                           float *col)
{
    uint64_t lanes = em->exp == ABL_EXP_GGML_AVX2 ? FA_LANES : 1;
    double sum = 0.0;
    for (uint64_t j = lo; j < lo + FA_TILE && j <= last; j += lanes) {
        float v[FA_LANES] = {0};
        for (uint64_t k = 0; k < lanes && j + k <= last; k++)
            v[k] = col[j + k] = fa_exp_cached(em, ec, sub32(x[j + k], max));
        if (lanes == 1) {
            sum += (double)v[0];
            continue;
        }
        float a0 = v[0] + v[4], a1 = v[1] + v[5], a2 = v[2] + v[6], a3 = v[3] + v[7];
        sum += (double)((a0 + a2) + (a1 + a3));
    }
    return sum;
}

/* The tiles' rescales m[k] of row i (x non-decreasing: a tile's max is its last key) and the threshold
 * thr[k] above which a column's value after tile k is non-zero in the end whatever the roundings of the k
 * rescales left: fp32(v m) >= v m (1 - 2^-24) - 2^-150, so the end value is >= v P (1 - 2^-24)^k - k 2^-150
 * (P the exact product of m[0..k-1]), and a key is zero only when w <= E(r) <= 2^-150 S (1 + 2^-23) with
 * S <= 2 (N + 1). P from binary64 logarithms, with a margin far above their error. */
static void tiled_bounds(const fa_ctx *c, uint64_t i, const float *x, fa_tiles *tb)
{
    uint64_t q = i / FA_TILE;
    float M = -INFINITY;
    for (uint64_t lo = 0; lo <= i; lo += FA_TILE) {
        uint64_t k = q - lo / FA_TILE, hi = lo + FA_TILE - 1 < i ? lo + FA_TILE - 1 : i;
        float tmax = x[hi];
        tb->m[k] = M != -INFINITY && tmax > M ? abl_exp_rn32(sub32(M, tmax)) : 1.0f;
        M = tmax > M ? tmax : M;
    }
    double L = 0.0, need = 0x1p-149 * 1.01 * (double)(c->n + 1);
    for (uint64_t k = 0; k <= q; k++) {
        double P = exp(L) * pow(1.0 - 0x1p-24, (double)k) * (1.0 - 0x1p-30);
        tb->thr[k] = P > 0.0 ? (need + (double)k * 0x1p-150) / P : INFINITY;
        L += log((double)tb->m[k]);
    }
}

/* A column certified non-zero (NaN: its value is no longer kept) or above the threshold. */
static int certified(float v, double thr)
{
    return isnan(v) || (double)v > thr;
}

/* tiled_row on row i (keys x[0..i]), recording each tile's sum and rescale by its k = q - t; col ends with
 * the final accumulator (w[d] = col[i - d]) of every column that can be zero, NaN for those certified
 * non-zero (tiled_bounds: their rescales are skipped, the pass's cost for a flat slope). Outside the kept
 * range [live, top) every column is 0 (dead, it stays 0) or NaN. */
static void tiled_pass(const fa_ctx *c, uint64_t i, const float *x, float *col, fa_tiles *tb)
{
    uint64_t q = i / FA_TILE, live = 0, top = 0;
    float M = -INFINITY;
    tb->kfin = 0;
    tiled_bounds(c, i, x, tb);
    for (uint64_t lo = 0; lo <= i; lo += FA_TILE) {
        uint64_t k = q - lo / FA_TILE, hi = lo + FA_TILE - 1 < i ? lo + FA_TILE - 1 : i;
        float tmax = x[hi];
        tb->T[k] = 0.0;
        memset(col + lo, 0, (hi - lo + 1) * sizeof *col);
        if (tmax == -INFINITY)
            continue;
        if (M == -INFINITY)
            tb->kfin = k;
        else if (tmax > M)
            fa_scale(col + live, top - live, tb->m[k]);
        M = tmax > M ? tmax : M;
        while (top > live && certified(col[top - 1], tb->thr[k]))
            col[--top] = NAN;
        tb->T[k] = fa_tile_span(c->em, c->ec, x, lo, hi, M, col);
        for (uint64_t j = lo; j <= hi; j++) {
            if (certified(col[j], tb->thr[k]))
                col[j] = NAN;
            else
                top = j + 1;
        }
        while (live < top && (col[live] == 0.0f || isnan(col[live])))
            live++;
    }
    for (uint64_t d = 0; d <= i; d++)
        tb->w[d] = col[i - d];
    tb->dhi = i + 1;
    while (tb->dhi > 0 && tb->w[tb->dhi - 1] == 0.0f)
        tb->dhi--;
}

/* Row q's sum: from its farthest finite tile towards the diagonal, stopping where it meets the previous
 * row's recursion (tb->S holds it for k <= pk0, its start; pk0 = UINT64_MAX: no previous row). */
static float tiled_sum(fa_tiles *tb, uint64_t q, uint64_t *pk0)
{
    uint64_t k0 = q < tb->kfin ? q : tb->kfin, prev = *pk0;
    *pk0 = k0;
    float S = (float)tb->T[k0];
    for (uint64_t k = k0;; k--) {
        if (k != k0)
            S = (float)((double)mul32(S, tb->m[k]) + tb->T[k]);
        if (prev != UINT64_MAX && k <= prev && tb->S[k] == S)
            return tb->S[0];
        tb->S[k] = S;
        if (k == 0)
            return S;
    }
}

/* The rows of residue rho: the longest row's pass, each row's r, then its zeros. rs: one float per row of
 * the residue. */
static void tiled_residue(const fa_ctx *c, uint64_t rho, float *x, float *col, fa_tiles *tb, float *rs,
                          abl_pred_head *out)
{
    uint64_t n = c->n;
    if (rho > n - 1)
        return;
    uint64_t imax = (n - 1 - rho) / FA_TILE * FA_TILE + rho;
    if (imax < c->first_row)
        return;
    for (uint64_t j = 0; j <= imax; j++)
        x[j] = c->X[imax - j];
    tiled_pass(c, imax, x, col, tb);
    uint64_t q0 = c->first_row <= rho ? 0 : (c->first_row - rho + FA_TILE - 1) / FA_TILE, qmax = imax / FA_TILE;
    uint64_t pk0 = UINT64_MAX;
    float rmin = INFINITY;
    for (uint64_t q = q0; q <= qmax; q++) {
        rs[q - q0] = fa_rinv(tiled_sum(tb, q, &pk0));
        rmin = rs[q - q0] < rmin ? rs[q - q0] : rmin;
    }
    /* zero iff w <= E(r), E non-increasing in r: no key before dlo (w > E(rmin)) is zero in any row */
    float E = abl_ggml_zero_bound(rmin, 0.0f);
    uint64_t dlo = 0;
    while (dlo < tb->dhi && !(tb->w[dlo] <= E))   /* NaN: certified non-zero */
        dlo++;
    /* rows in order of length: with the same r a row's band count is the previous row's plus its new keys */
    float rlast = NAN;
    uint64_t zb = 0, scanned = dlo;   /* zb: the zero keys in [dlo, scanned) for rlast */
    int64_t fb = -1;
    for (uint64_t q = q0; q <= qmax; q++) {
        uint64_t i = q * FA_TILE + rho, top = i + 1 < tb->dhi ? i + 1 : tb->dhi;
        float r = rs[q - q0];
        if (r != rlast) {
            rlast = r;
            zb = 0;
            scanned = dlo;
            fb = -1;
        }
        for (; scanned < top; scanned++) {
            if (fa_zero(tb->w[scanned], r)) {
                zb++;
                fb = fb < 0 ? (int64_t)scanned : fb;
            }
        }
        /* every key from dhi on is zero */
        uint64_t z = zb + (i >= tb->dhi ? i - tb->dhi + 1 : 0);
        fa_tally(c, i, z, fb >= 0 ? fb : i >= tb->dhi ? (int64_t)tb->dhi : -1, out);
    }
}

/* tiled: every residue of the rows asked. */
static abl_status tiled_head(fa_ctx *c, abl_pred_head *out)
{
    uint64_t n = c->n, nt = n / FA_TILE + 2;
    float *x = malloc(n * sizeof *x), *col = malloc(n * sizeof *col), *w = malloc(n * sizeof *w);
    float *m = malloc(nt * sizeof *m), *S = malloc(nt * sizeof *S), *rs = malloc(nt * sizeof *rs);
    double *T = malloc(nt * sizeof *T), *thr = malloc(nt * sizeof *thr);
    fa_exp_cache *ec = calloc(1, sizeof *ec);
    abl_status st = ABL_ERR_NO_MEMORY;
    if (x != NULL && col != NULL && w != NULL && m != NULL && S != NULL && rs != NULL && T != NULL && thr != NULL && ec != NULL) {
        for (size_t k = 0; k < FA_EXP_CACHE; k++)   /* every key 0: the argument +0.0f, evaluated once */
            ec->val[k] = fa_exp(c->em, 0.0f);
        c->ec = ec;
        fa_tiles tb = {w, T, m, S, thr, 0, 0};
        for (uint64_t rho = 0; rho < FA_TILE; rho++)
            tiled_residue(c, rho, x, col, &tb, rs, out);
        st = ABL_OK;
    }
    free(x);
    free(col);
    free(w);
    free(m);
    free(S);
    free(rs);
    free(T);
    free(thr);
    free(ec);
    return st;
}

/* ---- the one-row kernels (one-chunk, split-kv) ---- */

/* C_e(d): the F16 accumulator of the key at distance d after a one-row pass whose last key is at
 * distance e (e <= d < dinf): 1, then F16(fp32(v * mm[d'])) for d' = d - 1 down to e. */
static float chain16(const fa_ctx *c, uint64_t d, uint64_t e)
{
    float v = 1.0f;
    for (uint64_t dd = d; dd-- > e && v != 0.0f;)
        if (c->mm[dd] != 1.0f)
            v = abl_fp_round32(&c->em->half, mul32(v, c->mm[dd]));
    return v;
}

/* The key's weight after the merge's rescales post[0..np-1] (split-kv; none for one-chunk), zero test. */
static int key_zero16(const fa_ctx *c, uint64_t d, uint64_t e, const float *post, size_t np, float r)
{
    if (d >= c->dinf)
        return 1;   /* a skipped key: its column stays 0 */
    float v = chain16(c, d, e);
    for (size_t k = 0; k < np; k++)
        v = mul32(v, post[k]);
    return fa_zero(v, r);
}

/* The first zero key in [a, b] (b + 1: none): the zero test is monotone in d (C_e non-increasing). */
static uint64_t first_zero16(const fa_ctx *c, uint64_t a, uint64_t b, uint64_t e, const float *post, size_t np,
                             float r)
{
    uint64_t lo = a, hi = b + 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (key_zero16(c, mid, e, post, np, r))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The one-row kernel's sum over the keys at distances f down to e (0: none live): S = fma(S, ms, 1). */
static float chunk_sum(const fa_ctx *c, uint64_t f, uint64_t e)
{
    uint64_t st = f < c->dinf - 1 ? f : c->dinf - 1;
    if (st < e)
        return 0.0f;
    float S = 1.0f;
    for (uint64_t dd = st; dd-- > e;)
        S = fmaf(S, c->mm[dd], 1.0f);
    return S;
}

/* one-chunk row i's sum from key 0, stopping where it meets the previous row's (Sd: its value after
 * each distance, for d <= *pst, the previous row's first live key; UINT64_MAX: none). */
static float one_sum(const fa_ctx *c, float *Sd, uint64_t i, uint64_t *pst)
{
    uint64_t st = i < c->dinf - 1 ? i : c->dinf - 1, prev = *pst;
    *pst = st;
    float S = 1.0f;
    for (uint64_t dd = st;; dd--) {
        if (dd != st)
            S = fmaf(S, c->mm[dd], 1.0f);
        if (prev != UINT64_MAX && dd <= prev && Sd[dd] == S)
            return Sd[0];
        Sd[dd] = S;
        if (dd == 0)
            return S;
    }
}

/* one-chunk: every row shares C_0; its zeros are the keys from the first zero D(r) on. */
static abl_status one_chunk_head(const fa_ctx *c, abl_pred_head *out)
{
    float *Sd = malloc(c->n * sizeof *Sd);
    if (Sd == NULL)
        return ABL_ERR_NO_MEMORY;
    uint64_t pst = UINT64_MAX, D = 0;
    float rlast = NAN;
    for (uint64_t i = c->first_row; i < c->n; i++) {
        float r = fa_rinv(one_sum(c, Sd, i, &pst));
        if (r != rlast)   /* the zero test does not depend on the row: D(r) over every key */
            D = first_zero16(c, 0, c->dinf - 1, 0, NULL, 0, r);
        rlast = r;
        fa_tally(c, i, D <= i ? i - D + 1 : 0, D <= i ? (int64_t)D : -1, out);
    }
    free(Sd);
    return ABL_OK;
}

/* split-kv row i: chunks of ceil(N / T) keys from key 0, merged in order; post holds, per chunk, its own
 * rescale and every later merge's (T + 1 floats each). */
static void split_row_pred(const fa_ctx *c, uint64_t i, float *post, uint64_t *ce, size_t *np, abl_pred_head *out)
{
    uint64_t T = (uint64_t)c->em->fa_threads, cs = (c->n + T - 1) / T, nc = 0;
    float Mf = -INFINITY, Sf = 0.0f;
    for (uint64_t a = 0; a <= i; a += cs) {
        uint64_t b = a + cs - 1 < i ? a + cs - 1 : i, e = i - b;
        float Sc = chunk_sum(c, i - a, e);
        if (Sc == 0.0f)
            continue;   /* every key skipped: the chunk's columns stay 0 */
        float Mc = c->X[e], Mn = fmaxf(Mf, Mc), so = abl_exp_rn32(sub32(Mf, Mn)), sn = abl_exp_rn32(sub32(Mc, Mn));
        for (uint64_t k = 0; k < nc; k++)
            post[k * (T + 1) + np[k]++] = so;
        ce[nc] = a;
        post[nc * (T + 1)] = sn;
        np[nc++] = 1;
        Sf = fmaf(Sf, so, mul32(Sc, sn));
        Mf = Mn;
    }
    float r = fa_rinv(Sf);
    uint64_t zeros = i + 1;   /* every key not in a kept chunk's non-zero prefix */
    int64_t first = -1;
    for (uint64_t k = 0; k < nc; k++) {
        uint64_t a = ce[k], b = a + cs - 1 < i ? a + cs - 1 : i, e = i - b, f = i - a;
        uint64_t top = f < c->dinf - 1 ? f : c->dinf - 1;
        uint64_t D = first_zero16(c, e, top, e, post + k * (T + 1), np[k], r);
        zeros -= D - e;
        if (D <= f && (first < 0 || (int64_t)D < first))
            first = (int64_t)D;
    }
    if (c->dinf <= i && (first < 0 || (int64_t)c->dinf < first))
        first = (int64_t)c->dinf;   /* a skipped key (a skipped chunk's keys among them) is zero */
    fa_tally(c, i, zeros, first, out);
}

/* split-kv: each row asked (one, unless the rows field asks more). */
static abl_status split_head(const fa_ctx *c, abl_pred_head *out)
{
    uint64_t T = (uint64_t)c->em->fa_threads;
    float *post = malloc((T + 1) * (T + 1) * sizeof *post);
    uint64_t *ce = malloc((T + 1) * sizeof *ce);
    size_t *np = malloc((T + 1) * sizeof *np);
    abl_status st = ABL_ERR_NO_MEMORY;
    if (post != NULL && ce != NULL && np != NULL) {
        for (uint64_t i = c->first_row; i < c->n; i++)
            split_row_pred(c, i, post, ce, np, out);
        st = ABL_OK;
    }
    free(post);
    free(ce);
    free(np);
    return st;
}

/* The head's logits by distance (non-increasing, finite at d = 0) and the one-row kernels' rescales. */
static abl_status fa_tables(const abl_sim_setup *s, int h, fa_ctx *c)
{
    const abl_emul *em = c->em;
    c->dinf = c->n;
    for (uint64_t d = 0; d < c->n; d++) {
        c->X[d] = abl_emul_logit(em, &s->hd[h], 0.0f, d, abl_emul_bias_mag(em, &s->hd[h], d));
        if (isnan(c->X[d]) || (d == 0 && !isfinite(c->X[0])) || (d > 0 && c->X[d] > c->X[d - 1]))
            return ABL_ERR_UNSUPPORTED;   /* the model above needs the diagonal the row max */
        if (c->X[d] == -INFINITY && c->dinf == c->n)
            c->dinf = d;
    }
    for (uint64_t d = 0; c->mm != NULL && d + 1 < c->n; d++)
        c->mm[d] = d + 1 >= c->dinf ? 0.0f : c->X[d] > c->X[d + 1] ? abl_exp_rn32(sub32(c->X[d + 1], c->X[d])) : 1.0f;
    return ABL_OK;
}

abl_status abl_ggml_fa_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    fa_ctx c = {em, NULL, em->n, em->first_row, em->n, malloc(em->n * sizeof(float)),
                em->fa_kernel == ABL_FA_TILED ? NULL : malloc(em->n * sizeof(float))};
    abl_status st = c.X == NULL || (em->fa_kernel != ABL_FA_TILED && c.mm == NULL) ? ABL_ERR_NO_MEMORY : ABL_OK;
    memset(out, 0, sizeof *out);
    out->first_blind = -1;
    if (st == ABL_OK)
        st = fa_tables(s, h, &c);
    if (st == ABL_OK)
        st = em->fa_kernel == ABL_FA_TILED      ? tiled_head(&c, out)
             : em->fa_kernel == ABL_FA_SPLIT_KV ? split_head(&c, out)
                                                : one_chunk_head(&c, out);
    /* the emulated weight is the coefficient of V (its influence): the same counts */
    out->first_influence_zero = out->first_blind;
    out->row_influence_zeros = out->row_zeros;
    out->matrix_influence_zeros = out->matrix_zeros;
    free(c.X);
    free(c.mm);
    return st;
}
