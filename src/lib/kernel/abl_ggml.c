/* alibi-blind: ggml's CPU attention kernels as llama.cpp runs them (softmax kinds ggml and ggml-flash),
 * emulated rounding by rounding from ggml-org/ggml@d99724f2 (src/ggml-cpu/ops.cpp, vec.h, vec.cpp).
 *
 * soft_max (ggml_compute_forward_soft_max_f32, flash attention off):
 *   x = fma(slope, mask, score)              wp[i] += slope*mp[i], contracted by the measured build
 *   e = exp(fp32(x - max))                   ggml_vec_soft_max_f32: ggml_v_expf on 8-key vectors, libm
 *                                            expf on the row's last n mod 8 keys
 *   S = sum in binary64 of each vector's fp32 lane sum (hi4 + lo4, then [0]+[2], [1]+[3], then [0]+[1])
 *   p = fp32(e * fp32(1.0 / S))              sum = 1.0/sum in double, ggml_vec_scale_f32 takes a float
 * flash attention (ggml_compute_forward_flash_attn_ext_f16, F16 K and V, V the identity so each output
 * column is one key's coefficient -- its influence on the output):
 *   tiled      64-key tiles from key 0: mask32 = fp32(slope*mask), KQ + mask32, tile max, the running max
 *              M, rescale by libm expf(Mold - Mnew) of the fp32 accumulator and S, then
 *              ggml_vec_soft_max_f32 on the tile (its binary64 sum added to the fp32 S), VKQ += e
 *   one-chunk  key by key: s = F16(q).k + fp32(slope*mask); on a new max the F16 accumulator is scaled by
 *              expf(Mold - M) (fp32 product rounded to F16), else vs = expf(s - M); VKQ16 = F16(VKQ16 +
 *              v*vs); S = fma(S, ms, vs)
 *   split-kv   one-chunk on each thread's contiguous chunk of ceil(N/T) keys, merged in chunk order:
 *              VKQ = fma(VKQ, expf(Mf - Mn), fp32(VKQc * expf(Mc - Mn))), the same for S
 *   every path ends with fp32(VKQ * fp32(1 / S)).
 * libm expf is modelled as correctly rounded (glibc's expf is within 0.502 ulp). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_ggml.h"

#define GGML_LANES 8    /* AVX2: 8 fp32 lanes */
#define GGML_KV_TILE 64 /* GGML_FA_TILE_KV */
#define GGML_Q_TILE 64  /* GGML_FA_TILE_Q: the tiled kernel runs from this many query rows on */
#define GGML_SPLIT_MIN 512 /* the split-KV path needs at least this many keys */

/* The kernel ggml runs for the last R of N rows in one call (ggml_compute_forward_flash_attn_ext_f16's
 * choice from the shape: tiled from 64 query rows, split-KV for one row with 512 keys or more). */
static abl_fa_kernel ggml_kernel(const abl_pipeline *p, uint64_t n, uint64_t *rows)
{
    uint64_t R = p->rows > 0 && (uint64_t)p->rows < n ? (uint64_t)p->rows : n;
    abl_fa_kernel k = p->fa_kernel;
    if (k == ABL_FA_AUTO)
        k = R >= GGML_Q_TILE ? ABL_FA_TILED : R == 1 && n >= GGML_SPLIT_MIN ? ABL_FA_SPLIT_KV : ABL_FA_ONE_CHUNK;
    if (k == ABL_FA_SPLIT_KV && n < GGML_SPLIT_MIN)
        k = ABL_FA_ONE_CHUNK;   /* ggml takes the one-row kernel below 512 keys */
    *rows = R;
    return k;
}

abl_fa_kernel abl_ggml_fa_kernel(const abl_pipeline *p, uint64_t n)
{
    uint64_t R;
    return ggml_kernel(p, n, &R);
}

abl_status abl_emul_ggml_init(const abl_pipeline *p, abl_emul *e)
{
    abl_format half;
    abl_status st;
    if ((st = abl_fp_init(&p->mask_dtype, &e->mask)) != ABL_OK || (st = abl_format_lookup("fp16", &half)) != ABL_OK ||
        (st = abl_fp_init(&half, &e->half)) != ABL_OK)
        return st;
    e->exp = p->exp;
    e->fa_threads = p->threads > 0 ? p->threads : 1;
    uint64_t R;
    e->fa_kernel = ggml_kernel(p, e->n, &R);
    e->first_row = e->n - R;
    return ABL_OK;
}

/* The exp of both kernels: the build's (ggml_v_expf in AVX2 vectors, libm on the tail) or libm's alone. */
static const char *exp_text(const abl_pipeline *p)
{
    return p->exp == ABL_EXP_GGML_AVX2 ? "ggml_v_expf in 8-lane vectors (an AVX2 build), libm expf on the row's "
                                          "last N mod 8 keys"
                                        : "libm expf key by key (a build without AVX2)";
}

void abl_ggml_note(const abl_pipeline *p, const abl_emul *em, abl_text *t)
{
    if (p->softmax == ABL_SOFTMAX_GGML) {
        abl_text_add(t, "llama.cpp CPU soft_max (flash attention off): x = fma(slope, %s mask, score * scale); "
                        "e = exp(fp32(x - max)) by %s; S summed in binary64, weight = fp32(e * fp32(1/S)); P.V "
                        "takes P in %s (accumulated in %s): a key whose P rounds to 0 there keeps its weight and "
                        "loses its influence.",
                     p->mask_dtype.name, exp_text(p), p->pv_dtype.name, p->pv_accumulate.name);
        return;
    }
    uint64_t rows;
    abl_fa_kernel k = ggml_kernel(p, em->n, &rows);
    abl_text_add(t, "llama.cpp CPU flash attention (flash_attn_ext_f16), the %s kernel for the last %llu row(s): "
                    "x = score * scale + fp32(slope * F16 mask), keys at d >= 65520 -inf and skipped; ",
                 k == ABL_FA_TILED ? "tiled" : k == ABL_FA_SPLIT_KV ? "split-KV" : "one-chunk",
                 (unsigned long long)rows);
    if (k == ABL_FA_TILED)
        abl_text_add(t, "64-key tiles from key 0 with a running max, e = exp(fp32(x - max)) by %s, into an fp32 "
                        "accumulator rescaled by libm expf when the max grows;",
                     p->exp == ABL_EXP_GGML_AVX2 ? "ggml_v_expf in 8-lane vectors (an AVX2 build)"
                                                 : "libm expf (a build without AVX2)");
    else
        abl_text_add(t, "Q in F16, keys one by one with a running max, e by libm expf into an F16 accumulator (every "
                        "live column rounded to F16 at each rescale)%s;",
                     k == ABL_FA_SPLIT_KV ? ", in chunks of ceil(N / threads) keys merged in chunk order" : "");
    abl_text_add(t, " weight = accumulator * fp32(1/S): the coefficient of a unit value, its influence.");
}

double abl_ggml_sim_units(const abl_pipeline *p, uint64_t n, double heads)
{
    uint64_t R;
    abl_fa_kernel k = ggml_kernel(p, n, &R);
    double nn = (double)n, first = (double)(n - R);
    double weights = nn * (nn + 1) / 2 - first * (first + 1) / 2;
    /* the one-row kernels rescale every live F16 column on each new max: up to i per key */
    double per = p->softmax == ABL_SOFTMAX_GGML_FLASH && k != ABL_FA_TILED ? nn / 16 + 1 : 1;
    return heads * weights * per;
}

float abl_ggml_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos, float mag)
{
    if (e->softmax == ABL_SOFTMAX_GGML) {
        float mk = (float)abl_fp_round(&e->mask, (double)pos);
        return fmaf(-h->factor, mk, score);
    }
    /* the one-row kernel converts Q to F16 before K.Q (q_to_vec_dot); the tiled GEMM reads Q in fp32 */
    float s = e->fa_kernel == ABL_FA_TILED ? score : abl_fp_round32(&e->half, score);
    return (float)((double)s - (double)mag);
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float abl_ggml_expf_avx2(float x)
{
    const float r = 0x1.8p23f;
    float z = fmaf(x, 0x1.715476p+0f, r);
    float n = z - r;
    float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    uint32_t e = f2u(z) << 23;
    float k = u2f(e + f2u(1.0f));
    float u = b * b;
    float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                   0x1.ffffecp-1f * b);
    if (!(fabsf(n) > 126.0f))
        return fmaf(j, k, k);
    /* |n| > 126: 2^n split into two factors s1 s2 so the result underflows gradually (or overflows) */
    uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
    float s1 = u2f(g + 0x7f000000u), s2 = u2f(e - g);
    if (fabsf(n) > 192.0f)
        return s1 * s1;
    return fmaf(s2, j, s2) * s1;
}

static float ggml_exp(const abl_emul *e, float y)
{
    return e->exp == ABL_EXP_GGML_AVX2 ? abl_ggml_expf_avx2(y) : abl_exp_rn32(y);
}

static float sub32(float a, float b)
{
    return (float)((double)a - (double)b);
}

/*
 * ggml_vec_soft_max_f32 over keys [lo, lo + len) of a row whose live keys end at `last` (later keys are
 * masked: e = 0): e[j] = exp(fp32(x[j] - max)); returns the binary64 sum. Vectors of 8 keys from lo (the
 * AVX2 build), the lanes added as _mm256 extract/movehl/movehdup do; the last len mod 8 keys through libm
 * expf one by one. The scalar build adds every key.
 */
static double ggml_softmax_span(const abl_emul *em, const float *x, uint64_t lo, uint64_t len, uint64_t last,
                                float max, float *e)
{
    uint64_t lanes = em->exp == ABL_EXP_GGML_AVX2 ? GGML_LANES : 1, vec_end = lo + len / lanes * lanes;
    double sum = 0.0;
    uint64_t j = lo;
    for (; j < vec_end && j <= last; j += lanes) {
        float v[GGML_LANES] = {0};
        for (uint64_t k = 0; k < lanes && j + k <= last; k++)
            v[k] = e[j + k] = ggml_exp(em, sub32(x[j + k], max));
        if (lanes == 1) {
            sum += (double)v[0];
            continue;
        }
        float a0 = v[0] + v[4], a1 = v[1] + v[5], a2 = v[2] + v[6], a3 = v[3] + v[7];
        float b0 = a0 + a2, b1 = a1 + a3;
        sum += (double)(b0 + b1);
    }
    for (j = j > vec_end ? j : vec_end; j <= last && j < lo + len; j++) {
        e[j] = abl_exp_rn32(sub32(x[j], max));
        sum += (double)e[j];
    }
    return sum;
}

static uint64_t put_weights(const abl_emul *em, const float *col, uint64_t count, float s_inv, float *wout,
                            double *tvw)
{
    (void)em;
    uint64_t zeros = 0;
    for (uint64_t j = 0; j < count; j++)
        zeros += abl_emul_put_weight((float)((double)col[j] * (double)s_inv), j, wout, tvw);
    return zeros;
}

/* soft_max: the whole row of N keys the kernel sees, keys after i masked. */
static uint64_t softmax_row(const abl_emul *em, uint64_t i, const float *x, float *e, float *wout, double *tvw)
{
    float m = -INFINITY;
    for (uint64_t j = 0; j <= i; j++)
        if (x[j] > m)
            m = x[j];
    double sum = ggml_softmax_span(em, x, 0, em->n, i, m, e);
    float r = (float)(1.0 / sum);
    return put_weights(em, e, i + 1, r, wout, tvw);
}

/* tiled: 64-key tiles from key 0 with the fp32 accumulator (col). */
static uint64_t tiled_row(const abl_emul *em, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    float M = -INFINITY, S = 0.0f;
    uint64_t live = 0;   /* columns below it are 0 and stay 0 */
    for (uint64_t lo = 0; lo <= i; lo += GGML_KV_TILE) {
        uint64_t hi = lo + GGML_KV_TILE - 1 < i ? lo + GGML_KV_TILE - 1 : i;
        float tmax = -INFINITY;
        for (uint64_t j = lo; j <= hi; j++)
            if (x[j] > tmax)
                tmax = x[j];
        if (tmax == -INFINITY) {
            for (uint64_t j = lo; j <= hi; j++)
                col[j] = 0.0f;
            continue;
        }
        float Mnew = fmaxf(M, tmax);
        if (Mnew > M) {
            float ms = abl_exp_rn32(sub32(M, Mnew));
            for (uint64_t k = live; k < lo; k++)
                col[k] = (float)((double)col[k] * (double)ms);
            while (live < lo && col[live] == 0.0f)
                live++;
            S = (float)((double)S * (double)ms);
        }
        M = Mnew;
        memset(col + lo, 0, (hi - lo + 1) * sizeof *col);
        /* always a whole tile: the keys past N are padded with -inf (e = 0) */
        S = (float)((double)S + ggml_softmax_span(em, x, lo, GGML_KV_TILE, hi, Mnew, col));
    }
    float s_inv = S == 0.0f ? 0.0f : (float)(1.0 / (double)S);
    return put_weights(em, col, i + 1, s_inv, wout, tvw);
}

/* The one-row kernel on keys [a, b]: col[a..b] the F16 accumulator (as fp32), *M and *S its max and sum. */
static void one_chunk(const abl_emul *em, const float *x, uint64_t a, uint64_t b, float *col, float *Mo, float *So)
{
    float M = -INFINITY, S = 0.0f;
    uint64_t live = a;
    for (uint64_t j = a; j <= b; j++) {
        col[j] = 0.0f;
        if (x[j] == -INFINITY)   /* mv == -INFINITY: the key is skipped */
            continue;
        float s = x[j], ms = 1.0f, vs = 1.0f;
        if (s > M) {
            float Mold = M;
            M = s;
            ms = abl_exp_rn32(sub32(Mold, M));
            for (uint64_t k = live; k < j; k++)   /* ggml_vec_scale_f16: F16(fp32(y * ms)) */
                col[k] = abl_fp_round32(&em->half, (float)((double)col[k] * (double)ms));
            while (live < j && col[live] == 0.0f)
                live++;
        } else {
            vs = abl_exp_rn32(sub32(s, M));
        }
        col[j] = abl_fp_round32(&em->half, vs);   /* ggml_vec_mad_f16: F16(fma(v, vs, y)), v = e_j */
        S = fmaf(S, ms, vs);
    }
    *Mo = M;
    *So = S;
}

/* split-kv: one chunk of ceil(N / T) keys per thread, merged in chunk order (reduce_partials). */
static uint64_t split_row(const abl_emul *em, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    uint64_t T = (uint64_t)em->fa_threads, cs = (em->n + T - 1) / T;
    float Mf = -INFINITY, Sf = 0.0f;
    for (uint64_t a = 0; a <= i; a += cs) {
        uint64_t b = a + cs - 1 < i ? a + cs - 1 : i;
        float Mc, Sc;
        one_chunk(em, x, a, b, col, &Mc, &Sc);
        if (Sc == 0.0f)
            continue;
        float Mn = fmaxf(Mf, Mc), so = abl_exp_rn32(sub32(Mf, Mn)), sn = abl_exp_rn32(sub32(Mc, Mn));
        for (uint64_t k = 0; k < a; k++)   /* earlier chunks' columns: the new chunk's V is 0 there */
            col[k] = (float)((double)col[k] * (double)so);
        for (uint64_t k = a; k <= b; k++)
            col[k] = (float)((double)col[k] * (double)sn);
        Sf = fmaf(Sf, so, (float)((double)Sc * (double)sn));
        Mf = Mn;
    }
    float s_inv = Sf == 0.0f ? 0.0f : (float)(1.0 / (double)Sf);
    return put_weights(em, col, i + 1, s_inv, wout, tvw);
}

uint64_t abl_ggml_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw)
{
    if (e->softmax == ABL_SOFTMAX_GGML)
        return softmax_row(e, i, x, col, wout, tvw);
    if (e->fa_kernel == ABL_FA_TILED)
        return tiled_row(e, i, x, col, wout, tvw);
    if (e->fa_kernel == ABL_FA_SPLIT_KV)
        return split_row(e, i, x, col, wout, tvw);
    float M, S;
    one_chunk(e, x, 0, i, col, &M, &S);
    float s_inv = S == 0.0f ? 0.0f : (float)(1.0 / (double)S);
    return put_weights(e, col, i + 1, s_inv, wout, tvw);
}

/* ---- the zero-logit predictor for softmax=ggml (llamacpp-cpu) ----
 * Zero logits with a relative bias: the logit of a key depends on its distance d alone (T[d], T[0] = 0 the
 * row max), so e is a table: eV[d] through ggml_v_expf (keys in the vector part, j < V = 8 floor(N/8)),
 * eT[d] through libm expf (the last N mod 8 keys). Row i's binary64 sum S_i takes the 8-key vectors by
 * absolute position; keys at d >= D0 (e = 0 from there on) add nothing. A key can be zero only if
 * e <= 2^-150 S_i (1 + 2^-20) <= 2^-150 1.01 N: the keys before Dz, the first d whose e reaches that, are not
 * zero in any row, and rows shorter than Dz need no sum.
 * The influence-zero keys (p <= zmax = e->infl_max, abl_influence.h) are found the same way with their own
 * band [Dz, Dc): p = fp32(e * fp32(1/S)) <= e (S >= 1, the diagonal's e is 1), so every key from Dc on
 * (e <= zmax there) counts, and none before Dz (e > 2 zmax 1.01 N) can.
 *
 * Each row costs O(1) amortised, not O(D0) (issue 18: 64 heads at N = 32768 under 2 s on one core):
 *  - the sum: rows i = L q + rho (L = 8 vectors, or 1 key in the scalar build) add the same block sums
 *    c_rho(k) (block k counted from the diagonal's), farthest first; the forward prefix F = c(0) + ... +
 *    c(q), kept per residue, is within 2 gamma_q of the kernel's binary64 sum (both sum q + 1 non-negative
 *    terms), and r = fp32(1.0 / S) is monotone in S, so when both ends of that interval give the same r it
 *    is the kernel's r; otherwise (rare) the kernel's ordered sum is formed, O(D0 / L);
 *  - the zeros: fp32(e r) <= zmax is monotone in e, so a row's zero keys are those with e <= E(r), the
 *    largest float that still rounds to <= zmax. Where the table is non-increasing over the band (checked
 *    per head, not assumed: ggml_v_expf is a polynomial) those keys are a suffix of the band, found by a
 *    bisection; elsewhere every key of the band is tested as simulate tests it. */
typedef struct ggml_pred {
    const abl_emul *em;
    const float *eV, *eT;
    uint64_t n, V, D0, Dz;
    const float *eb;   /* the table the blocks read: eV (AVX2), eT (scalar) */
    uint64_t L, Vb;    /* keys per block; rows below Vb see only blocks */
} ggml_pred;

/* The keys a zero test counts in a row: p <= zmax; tested in [Dz, Dc), all from Dc on. mono: eb is
 * non-increasing on [Dz, Dc). The last E(r) and suffix start per residue are kept (steady rows repeat r). */
typedef struct ggml_band {
    float zmax;
    uint64_t Dz, Dc;
    int mono;
    float r_last[GGML_LANES], E_last[GGML_LANES];
    uint64_t start_last[GGML_LANES];
} ggml_band;

/* The kernel's binary64 sum of row i, in its order (O(min(i, D0))): the fallback and the tail rows. */
static double pred_row_sum(const ggml_pred *g, uint64_t i)
{
    uint64_t lo = i + 1 > g->D0 ? i + 1 - g->D0 : 0;   /* the first key with d < D0 */
    double sum = 0.0;
    for (uint64_t b = lo / GGML_LANES * GGML_LANES; b < g->V && b <= i; b += GGML_LANES) {
        float v[GGML_LANES] = {0};
        for (uint64_t k = 0; k < GGML_LANES && b + k <= i; k++)
            v[k] = i - (b + k) < g->D0 ? g->eV[i - (b + k)] : 0.0f;
        if (g->em->exp == ABL_EXP_GGML_AVX2) {
            float a0 = v[0] + v[4], a1 = v[1] + v[5], a2 = v[2] + v[6], a3 = v[3] + v[7];
            sum += (double)((a0 + a2) + (a1 + a3));
        } else {
            for (uint64_t k = 0; k < GGML_LANES; k++)
                sum += (double)v[k];
        }
    }
    for (uint64_t j = g->V > lo ? g->V : lo; j <= i; j++)
        sum += (double)g->eT[i - j];
    return sum;
}

/* Block k of rows i = L q + rho, counted from the diagonal's block: keys at d = rho + L k - l (lane l),
 * as the kernel's vector adds them (pred_row_sum's lane tree). */
static float block_sum(const ggml_pred *g, uint64_t rho, uint64_t k)
{
    if (g->L == 1)
        return g->eb[k];
    float v[GGML_LANES];
    for (uint64_t l = 0; l < GGML_LANES; l++) {
        uint64_t d = rho + GGML_LANES * k;
        v[l] = d >= l && d - l < g->D0 ? g->eb[d - l] : 0.0f;
    }
    float a0 = v[0] + v[4], a1 = v[1] + v[5], a2 = v[2] + v[6], a3 = v[3] + v[7];
    return (a0 + a2) + (a1 + a3);
}

/* The forward prefixes of the block sums per residue: F[rho] = c(0) + ... + c(next[rho] - 1). */
typedef struct ggml_fwd {
    double F[GGML_LANES];
    uint64_t next[GGML_LANES];
} ggml_fwd;

/* r = fp32(1.0 / S_i) of row i (see the section comment); *exact counts the rows that needed the ordered
 * sum. Rows from Vb on (the AVX2 build's last N mod 8 rows) always take it. */
static float pred_row_r(const ggml_pred *g, ggml_fwd *f, uint64_t i, uint64_t *exact)
{
    if (i < g->Vb) {
        uint64_t rho = i % g->L, q = i / g->L;
        while (f->next[rho] <= q)
            f->F[rho] += (double)block_sum(g, rho, f->next[rho]++);
        /* |S - F| <= 2 gamma_q X <= 2.03 (q + 1) 2^-53 F; the slack covers the products' own roundings */
        double F = f->F[rho], eps = 4.0 * (double)(q + 2) * 0x1p-53;
        float rl = (float)(1.0 / (F * (1.0 + eps))), rh = (float)(1.0 / (F * (1.0 - eps)));
        if (F > 0.0 && rl == rh)
            return rl;
    }
    (*exact)++;
    return (float)(1.0 / pred_row_sum(g, i));
}

static int key_zero(float e, float r, float zmax)
{
    return (float)((double)e * (double)r) <= zmax;
}

float abl_ggml_zero_bound(float r, float zmax)
{
    uint32_t lo = 0, hi = 0x7f800000u;   /* key_zero(lo); hi: +inf, past every candidate */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (key_zero(u2f(mid), r, zmax))
            lo = mid;
        else
            hi = mid;
    }
    return u2f(lo);
}

uint64_t abl_ggml_band_start(const float *eb, uint64_t Dz, uint64_t Dc, float E)
{
    uint64_t lo = Dz, hi = Dc > Dz ? Dc : Dz;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (eb[mid] <= E)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The zero keys of row i (r = fp32(1/S_i)) and the first of them (-1: none). */
static uint64_t pred_row_zeros(const ggml_pred *g, ggml_band *b, uint64_t i, float r, int64_t *first)
{
    uint64_t zeros = 0;
    *first = -1;
    uint64_t top = b->Dc == 0 ? 0 : i < b->Dc - 1 ? i : b->Dc - 1;
    if (b->mono && i < g->Vb) {
        uint64_t rho = i % GGML_LANES;
        if (b->r_last[rho] != r) {
            b->r_last[rho] = r;
            b->E_last[rho] = abl_ggml_zero_bound(r, b->zmax);
            b->start_last[rho] = abl_ggml_band_start(g->eb, b->Dz, b->Dc, b->E_last[rho]);
        }
        uint64_t s = b->start_last[rho];
        if (b->Dc > 0 && s <= top) {
            zeros = top - s + 1;
            *first = (int64_t)s;
        }
    } else {
        for (uint64_t d = b->Dz; d <= top && b->Dc > 0; d++) {
            float e = i - d >= g->V ? g->eT[d] : g->eV[d];
            if (key_zero(e, r, b->zmax)) {
                zeros++;
                if (*first < 0)
                    *first = (int64_t)d;
            }
        }
    }
    if (i >= b->Dc) {   /* every key from Dc on */
        zeros += i - b->Dc + 1;
        if (*first < 0)
            *first = (int64_t)b->Dc;
    }
    return zeros;
}

/* A band's start and end, and whether the suffix rule holds on it. */
static ggml_band make_band(const ggml_pred *g, float zmax, uint64_t Dz, uint64_t Dc)
{
    ggml_band b;
    memset(&b, 0, sizeof b);
    b.zmax = zmax;
    b.Dz = Dz;
    b.Dc = Dc;
    b.mono = 1;
    for (uint64_t d = Dz + 1; d < Dc && b.mono; d++)
        b.mono = g->eb[d] <= g->eb[d - 1];
    for (int k = 0; k < GGML_LANES; k++)
        b.r_last[k] = NAN;   /* no cached r yet (NaN equals nothing) */
    return b;
}

/* The influence band: Dz the first d whose e may give p <= zmax in some row (p = RN(e r) <= zmax needs
 * e r <= 2 zmax, r >= 1/(1.01 N)), Dc one past the last d with an e above zmax. */
static ggml_band influence_band(const ggml_pred *g, float zmax)
{
    uint64_t Dz = g->n, Dc = 0;
    double bound = 2.0 * (double)zmax * 1.01 * (double)g->n;
    for (uint64_t d = 0; d < g->n; d++) {
        float lo = g->eV[d] < g->eT[d] ? g->eV[d] : g->eT[d];
        float hi = g->eV[d] < g->eT[d] ? g->eT[d] : g->eV[d];
        if (hi > zmax)
            Dc = d + 1;
        if (Dz == g->n && (double)lo <= bound)
            Dz = d;
    }
    return make_band(g, zmax, Dz, Dc);
}

/* D0 (1 + the last d with a non-zero e) and Dz (the first d whose e is small enough to vanish in some row). */
static void pred_bounds(ggml_pred *g)
{
    double bound = 0x1p-150 * 1.01 * (double)g->n;
    g->D0 = 0;
    g->Dz = g->n;
    for (uint64_t d = 0; d < g->n; d++) {
        float m = g->eV[d] < g->eT[d] ? g->eV[d] : g->eT[d];
        if (g->eV[d] != 0.0f || g->eT[d] != 0.0f)
            g->D0 = d + 1;
        if (g->Dz == g->n && (double)m <= bound)
            g->Dz = d;
    }
}

/* The tables eV (ggml_v_expf) and eT (libm expf) of the head's logits against the diagonal's;
 * ABL_ERR_UNSUPPORTED when some key's logit exceeds the diagonal's (the row max must be the diagonal). */
static abl_status pred_tables(const abl_sim_setup *s, int h, float *t, uint64_t n)
{
    const abl_emul *em = &s->em;
    float x0 = abl_emul_logit(em, &s->hd[h], 0.0f, 0, abl_emul_bias_mag(em, &s->hd[h], 0));
    for (uint64_t d = 0; d < n; d++) {
        float x = abl_emul_logit(em, &s->hd[h], 0.0f, d, abl_emul_bias_mag(em, &s->hd[h], d));
        if (x > x0)
            return ABL_ERR_UNSUPPORTED;
        t[d] = abl_ggml_expf_avx2(sub32(x, x0));
        t[n + d] = abl_exp_rn32(sub32(x, x0));
    }
    return ABL_OK;
}

/* Row i's counts into out (weights band bw, influence band bi); the last row also sets the first zeros. */
static void pred_row(const ggml_pred *g, ggml_band *bw, ggml_band *bi, uint64_t i, float r, abl_pred_head *out)
{
    const abl_emul *em = g->em;
    int64_t first = -1, lfirst = -1;
    uint64_t rz = i >= g->Dz ? pred_row_zeros(g, bw, i, r, &first) : 0;
    uint64_t lz = em->infl_active ? pred_row_zeros(g, bi, i, r, &lfirst) : rz;
    out->matrix_zeros += rz;
    out->matrix_influence_zeros += lz;
    if (i == g->n - 1) {
        out->first_blind = i >= g->Dz ? first : -1;
        out->row_zeros = rz;
        out->first_influence_zero = em->infl_active ? lfirst : out->first_blind;
        out->row_influence_zeros = lz;
    }
}

abl_status abl_ggml_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n;
    float *t = malloc(2 * n * sizeof *t);
    if (t == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = pred_tables(s, h, t, n);
    if (st != ABL_OK) {
        free(t);
        return st;
    }
    int avx2 = em->exp == ABL_EXP_GGML_AVX2;
    /* the scalar build: every key through libm expf, added one by one (blocks of one key) */
    ggml_pred g = {em, t, t + n, n, avx2 ? n / GGML_LANES * GGML_LANES : 0, 0, 0, avx2 ? t : t + n,
                   avx2 ? GGML_LANES : 1, avx2 ? n / GGML_LANES * GGML_LANES : n};
    pred_bounds(&g);
    ggml_band bw = make_band(&g, 0.0f, g.Dz, g.D0);
    ggml_band bi = em->infl_active ? influence_band(&g, em->infl_max) : bw;
    memset(out, 0, sizeof *out);
    ggml_fwd f;
    memset(&f, 0, sizeof f);
    for (uint64_t i = bi.Dz < g.Dz ? bi.Dz : g.Dz; i < n; i++)
        pred_row(&g, &bw, &bi, i, pred_row_r(&g, &f, i, &out->exact_rows), out);
    if (g.Dz >= n)
        out->first_blind = -1;
    if (bi.Dz >= n)
        out->first_influence_zero = -1;
    free(t);
    return ABL_OK;
}
