/* alibi-blind: the zero-logit predictor of ggml's soft_max (llamacpp-cpu, ggml_compute_forward_soft_max_f32 at
 * ggml-org/ggml@d99724f2; abl_ggml.c models it) for a bidirectional layer: llama.cpp's jina-bert-v2 fills the
 * mask with -|p0 - p1| for every key (llama-graph.cpp @00395eb2), so each row i is N keys in key order, its
 * diagonal the row max, with two horizons (i keys on the left, N - 1 - i on the right).
 *
 * What simulate computes for row i (abl_ggml.c softmax_row with its last key at N - 1):
 *   e_j = ggml_v_expf(T[|i - j|]) for j < V = L floor(N / L) (8-key vectors; L = 1 in the scalar build,
 *         every key through libm expf), libm expf for the last N mod 8 keys (j >= V);
 *   S   = binary64 sum, in key order, of each vector's fp32 lane tree, then the tail keys one by one;
 *   r   = fp32(1.0 / S); p_j = fp32(e_j r); zero when p_j = 0, influence-zero when p_j <= infl_max.
 * With zero logits e depends on the distance alone, and a vector's lane tree on its offset from the
 * diagonal's vector and the row's residue rho = i mod L: the left vectors k = 1.. away hold d = L k + rho - l,
 * the right ones d = L k + l - rho, the diagonal's d = |rho - l|. So
 *   - the sum: A = PL_rho(q) + cD_rho + PR_rho(nb - 1 - q) + tail, from prefix sums per residue built once per
 *     head (O(L N)). Every sum involved adds non-negative terms, so the kernel's ordered binary64 sum and A
 *     are both within gamma_(m+2) of the exact sum (m: the kernel's terms); r = fp32(1/S) is monotone in
 *     S, so when both ends of A (1 -/+ 4 (m + 4) 2^-53) give the same r it is the kernel's r; otherwise
 *     (rare) the kernel's ordered sum is formed over the vectors within D0 of the diagonal, O(D0);
 *   - the zeros: fp32(e r) <= zmax is monotone in e, so a key is zero when e <= E(r) (abl_ggml_zero_bound).
 *     Keys before Dz are never zero and keys from Dc on always are (abl_ggml.c's bands); where the vector
 *     table is non-increasing on [Dz, Dc) (checked per head, not assumed: ggml_v_expf is a polynomial) the
 *     zero distances on each side are a suffix found by one bisection per distinct r, otherwise every key of
 *     the band is tested; the at most 7 tail keys are always tested one by one.
 * Cost: O(L N) per head for the prefixes, O(1) + O(log N) per row (O(band) per row where not monotone). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_ggml.h"
#include "kernel/abl_simulate_bidir.h"

#define GB_LANES 8

typedef struct gb_pred {
    const abl_emul *em;
    uint64_t n, L, nb, V, m;  /* lanes per vector, whole vectors, keys in vectors, terms of the kernel's sum */
    uint64_t D0, Dz;          /* 1 + the last d with a non-zero e; the first d whose e can vanish in a row */
    const float *eb, *eT;     /* the vectors' table (ggml_v_expf; libm expf in the scalar build), libm expf */
    double *PL, *PR;          /* per residue, (nb + 1) each: prefix sums of the left/right vectors' lane trees */
    double cD[GB_LANES];      /* the diagonal's vector per residue */
} gb_pred;

/* The keys a zero test counts (p <= zmax): none before Dz, all from Dc on, tested or a suffix in between. */
typedef struct gb_band {
    float zmax;
    uint64_t Dz, Dc;
    int mono;
    float r_last;     /* the last r its suffix start was found for (NaN: none yet) */
    uint64_t s_last;
} gb_band;

static float eb_at(const gb_pred *g, uint64_t d)
{
    return d < g->n ? g->eb[d] : 0.0f;
}

/* One vector's sum as the AVX2 build adds it (extract hi4 + lo4, movehl, movehdup); one key as itself. */
static float lane_tree(const float *v, uint64_t L)
{
    if (L == 1)
        return v[0];
    float a0 = v[0] + v[4], a1 = v[1] + v[5], a2 = v[2] + v[6], a3 = v[3] + v[7];
    return (a0 + a2) + (a1 + a3);
}

static void gb_prefixes(gb_pred *g)
{
    uint64_t L = g->L, w = g->nb + 1;
    float v[GB_LANES];
    for (uint64_t rho = 0; rho < L; rho++) {
        double *pl = g->PL + rho * w, *pr = g->PR + rho * w;
        pl[0] = pr[0] = 0.0;
        for (uint64_t k = 1; k <= g->nb; k++) {
            for (uint64_t l = 0; l < L; l++)
                v[l] = eb_at(g, L * k + rho - l);
            pl[k] = pl[k - 1] + (double)lane_tree(v, L);
            for (uint64_t l = 0; l < L; l++)
                v[l] = eb_at(g, L * k + l - rho);
            pr[k] = pr[k - 1] + (double)lane_tree(v, L);
        }
        for (uint64_t l = 0; l < L; l++)
            v[l] = eb_at(g, rho > l ? rho - l : l - rho);
        g->cD[rho] = (double)lane_tree(v, L);
    }
}

static double tail_sum(const gb_pred *g, uint64_t i, double a)
{
    for (uint64_t j = g->V; j < g->n; j++)
        a += (double)g->eT[j > i ? j - i : i - j];
    return a;
}

/* The kernel's binary64 sum of row i in its order, over the vectors that hold a key with d < D0 (the
 * others add +0). */
static double gb_exact_sum(const gb_pred *g, uint64_t i)
{
    uint64_t lo = i + 1 > g->D0 ? i + 1 - g->D0 : 0, hi = i + g->D0;   /* keys with d < D0: [lo, hi) */
    double sum = 0.0;
    float v[GB_LANES];
    for (uint64_t b = lo / g->L; b < g->nb && b * g->L < hi; b++) {
        for (uint64_t l = 0; l < g->L; l++) {
            uint64_t j = b * g->L + l;
            v[l] = eb_at(g, j > i ? j - i : i - j);
        }
        sum += (double)lane_tree(v, g->L);
    }
    return tail_sum(g, i, sum);
}

/* r = fp32(1.0 / S_i) (see the file comment); *exact counts the rows that needed the ordered sum. */
static float gb_row_r(const gb_pred *g, uint64_t i, uint64_t *exact)
{
    double a;
    uint64_t w = g->nb + 1;
    if (i < g->V) {
        uint64_t q = i / g->L, rho = i % g->L;
        a = g->PL[rho * w + q] + g->cD[rho] + g->PR[rho * w + (g->nb - 1 - q)];
    } else {   /* a tail row: every vector is on its left */
        a = g->PL[(i - g->V) * w + g->nb];
    }
    a = tail_sum(g, i, a);
    double eps = 4.0 * (double)(g->m + 4) * 0x1p-53;
    float rl = (float)(1.0 / (a * (1.0 + eps))), rh = (float)(1.0 / (a * (1.0 - eps)));
    if (a > 0.0 && rl == rh)
        return rl;
    (*exact)++;
    return (float)(1.0 / gb_exact_sum(g, i));
}

static int gb_zero(float e, float r, float zmax)
{
    return (float)((double)e * (double)r) <= zmax;
}

/* Zero keys among the vector keys at distances [lo, hi] of a row with r; *first the smallest (-1: none). */
static uint64_t range_zeros(const gb_pred *g, const gb_band *b, uint64_t lo, uint64_t hi, float r, int64_t *first)
{
    *first = -1;
    if (lo > hi)
        return 0;
    if (b->mono) {
        uint64_t f = lo > b->s_last ? lo : b->s_last;
        if (f > hi)
            return 0;
        *first = (int64_t)f;
        return hi - f + 1;
    }
    uint64_t z = 0, top = b->Dc > 0 && hi > b->Dc - 1 ? b->Dc - 1 : hi;
    for (uint64_t d = lo > b->Dz ? lo : b->Dz; d <= top && b->Dc > 0; d++)
        if (gb_zero(g->eb[d], r, b->zmax)) {
            z++;
            if (*first < 0)
                *first = (int64_t)d;
        }
    uint64_t c = lo > b->Dc ? lo : b->Dc;
    if (c <= hi) {
        z += hi - c + 1;
        if (*first < 0)
            *first = (int64_t)c;
    }
    return z;
}

static void first_min(int64_t *f, int64_t d)
{
    if (d >= 0 && (*f < 0 || d < *f))
        *f = d;
}

/* Row i's zero keys on both sides; *first_left the smallest zero distance on the left (the end row's). */
static uint64_t gb_row_zeros(const gb_pred *g, gb_band *b, uint64_t i, float r, int64_t *first_left)
{
    if (b->mono && !(b->r_last == r)) {
        b->r_last = r;
        b->s_last = abl_ggml_band_start(g->eb, b->Dz, b->Dc, abl_ggml_zero_bound(r, b->zmax));
    }
    int64_t f = -1, fr;
    uint64_t lb = i < g->V ? i : g->V;   /* left vector keys j in [0, lb) ... */
    uint64_t z = lb > 0 ? range_zeros(g, b, i - lb + 1, i, r, &f) : 0;   /* ... at d in [i - lb + 1, i] */
    for (uint64_t j = g->V; j < i; j++)   /* left tail keys */
        if (gb_zero(g->eT[i - j], r, b->zmax)) {
            z++;
            first_min(&f, (int64_t)(i - j));
        }
    if (i + 1 < g->V)   /* right vector keys j in (i, V): d in [1, V - 1 - i] */
        z += range_zeros(g, b, 1, g->V - 1 - i, r, &fr);
    for (uint64_t j = g->V > i + 1 ? g->V : i + 1; j < g->n; j++)   /* right tail keys */
        z += (uint64_t)gb_zero(g->eT[j - i], r, b->zmax);
    *first_left = f;
    return z;
}

static gb_band gb_make_band(const gb_pred *g, float zmax, uint64_t Dz, uint64_t Dc)
{
    gb_band b = {zmax, Dz, Dc, 1, NAN, 0};
    for (uint64_t d = Dz + 1; d < Dc && b.mono; d++)
        b.mono = g->eb[d] <= g->eb[d - 1];
    return b;
}

/* The weights' band (abl_ggml.c pred_bounds: S <= N, so a key is zero only if e <= 2^-150 1.01 N) and the
 * influence band (p <= zmax needs e r <= 2 zmax, r >= 1/(1.01 N); every key with e <= zmax counts). */
static void gb_bands(gb_pred *g, gb_band *bw, gb_band *bi)
{
    double wb = 0x1p-150 * 1.01 * (double)g->n;
    float zmax = g->em->infl_max;
    double ib = 2.0 * (double)zmax * 1.01 * (double)g->n;
    uint64_t iz = g->n, ic = 0;
    g->D0 = 0;
    g->Dz = g->n;
    for (uint64_t d = 0; d < g->n; d++) {
        float lo = fminf(g->eb[d], g->eT[d]), hi = fmaxf(g->eb[d], g->eT[d]);
        if (hi != 0.0f)
            g->D0 = d + 1;
        if (g->Dz == g->n && (double)lo <= wb)
            g->Dz = d;
        if (hi > zmax)
            ic = d + 1;
        if (iz == g->n && (double)lo <= ib)
            iz = d;
    }
    *bw = gb_make_band(g, 0.0f, g->Dz, g->D0);
    *bi = g->em->infl_active ? gb_make_band(g, zmax, iz, ic) : *bw;
}

/* The head's tables against the diagonal's logit: t[0..N) ggml_v_expf, t[N..2N) libm expf. */
static abl_status gb_tables(const abl_sim_setup *s, int h, float *t, uint64_t n)
{
    const abl_emul *em = &s->em;
    float x0 = abl_emul_logit(em, &s->hd[h], 0.0f, 0, abl_emul_bias_mag(em, &s->hd[h], 0));
    for (uint64_t d = 0; d < n; d++) {
        float x = abl_emul_logit(em, &s->hd[h], 0.0f, d, abl_emul_bias_mag(em, &s->hd[h], d));
        if (!isfinite(x) || x > x0)   /* simulate refuses a non-finite bidirectional logit too */
            return ABL_ERR_UNSUPPORTED;
        float y = (float)((double)x - (double)x0);
        t[d] = abl_ggml_expf_avx2(y);
        t[n + d] = abl_exp_rn32(y);
    }
    return ABL_OK;
}

/* Every row: the matrix counts; the middle row's; the end row's with its first zero distances. */
static void gb_rows(const gb_pred *g, gb_band *bw, gb_band *bi, abl_pred_head *out)
{
    uint64_t n = g->n, mid = abl_bidir_mid(n);
    int infl = g->em->infl_active;
    uint64_t reach = bi->Dz < g->Dz ? bi->Dz : g->Dz;
    for (uint64_t i = 0; i < n; i++) {
        if ((i > n - 1 - i ? i : n - 1 - i) < reach)
            continue;   /* both horizons short of every band: no zero */
        float r = gb_row_r(g, i, &out->exact_rows);
        int64_t fw = -1, fi = -1;
        uint64_t rz = gb_row_zeros(g, bw, i, r, &fw);
        uint64_t lz = infl ? gb_row_zeros(g, bi, i, r, &fi) : rz;
        out->matrix_zeros += rz;
        out->matrix_influence_zeros += lz;
        if (i == mid)
            out->mid_row_zeros = rz;
        if (i == n - 1) {
            out->row_zeros = rz;
            out->first_blind = fw;
            out->row_influence_zeros = lz;
            out->first_influence_zero = infl ? fi : fw;
        }
    }
}

abl_status abl_ggml_bidir_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n;
    memset(out, 0, sizeof *out);
    out->first_blind = out->first_influence_zero = -1;
    int avx2 = em->exp == ABL_EXP_GGML_AVX2;
    uint64_t L = avx2 ? GB_LANES : 1, nb = n / L;
    float *t = malloc(2 * n * sizeof *t);
    double *pl = malloc(2 * L * (nb + 1) * sizeof *pl);
    abl_status st = t != NULL && pl != NULL ? gb_tables(s, h, t, n) : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK) {
        gb_pred g = {em, n, L, nb, L * nb, nb + (n - L * nb), 0, 0, avx2 ? t : t + n, t + n, pl,
                     pl + L * (nb + 1), {0}};
        gb_band bw, bi;
        gb_bands(&g, &bw, &bi);
        gb_prefixes(&g);
        gb_rows(&g, &bw, &bi, out);
    }
    free(t);
    free(pl);
    return st;
}
