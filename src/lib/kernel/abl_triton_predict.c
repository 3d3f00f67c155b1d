/* alibi-blind: the zero-logit predictor of MosaicBERT's Triton kernel (softmax kind triton-lse, preset
 * mosaicbert-triton; the kernel model is abl_triton.c), causal and bidirectional, equal to simulate.
 *
 * A row runs its key blocks from key 0 (B = 128 keys) against the running log-sum-exp: per block
 * m = max(block max, lse), p = expf(x - m), l = the fp32 sum, lse = m + logf(expf(lse - m) + l); a key is
 * zero when p rounds to 0 in the model dtype. With zero logits x = T[|i - j|], so row i = a B + b sees, in
 * its block at offset o from the diagonal's, the keys at d = |B o + t - b|: the blocks depend on the
 * residue b and the offset alone, and the state between blocks is the one float lse. So:
 *  - left of the diagonal: per residue, the chain of the row with the most left blocks (a_max) is run once
 *    and kept (lse after each offset, and the zeros of the offsets nearer the diagonal). Any other row of
 *    that residue runs its own chain from its first block until its lse equals the kept lse at the same
 *    offset: from there on it is the same computation, so its remaining zeros are the kept ones;
 *  - the diagonal's block (causal: b + 1 keys; bidirectional: up to the matrix's end) is run per row;
 *  - right of the diagonal (bidirectional): per residue, the chain from the diagonal lse of the rows that
 *    joined the kept chain, over every full right block, is kept the same way (a row whose diagonal lse
 *    differs runs until it joins); once a right block gives p = 0 for every key with m = lse, lse is
 *    unchanged (lse + logf(1 + 0)) and every farther block (smaller logits when T is non-increasing, checked
 *    per head) is all zero, so the chain stops there; the matrix's last partial block is run per row;
 *  - the end row's first zero distance and zeros: that row run whole (abl_triton_row).
 * Cost: the kept chains O(B N) expf per head; each row O(B) times the blocks before it joins a kept chain
 * (a few for steep slopes; about 35 / (m B) blocks for a flat slope m, where the far blocks' share of the sum
 * falls below fp32's half ulp). Exact whatever the join point: a row that never joins runs to its end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/abl_triton.h"
#include "kernel/abl_simulate_bidir.h"

#define TRITON_BLOCK_N 128

typedef struct tp {
    const abl_emul *em;
    const float *T;   /* the logit by distance */
    uint64_t n, B, nfull;
    int bidir, mono;
} tp;

/* One block of len keys at distances |base + t|, after the state lse: the new lse; *zeros += its zero keys;
 * *dead: every p was 0 with m = lse (lse unchanged). The operations and their order are abl_triton_row's. */
static float tblock(const tp *c, int64_t base, uint64_t len, float lse, uint64_t *zeros, int *dead)
{
    float bmax = -INFINITY;
    for (uint64_t t = 0; t < len; t++) {
        int64_t d = base + (int64_t)t;
        float x = c->T[d < 0 ? -d : d];
        bmax = x > bmax ? x : bmax;
    }
    float m = bmax > lse ? bmax : lse, l = 0.0f;
    uint64_t z = 0;
    for (uint64_t t = 0; t < len; t++) {
        int64_t d = base + (int64_t)t;
        float p = expf(c->T[d < 0 ? -d : d] - m);
        l += p;
        z += (uint64_t)abl_emul_zero(c->em, p);
    }
    *zeros += z;
    if (dead != NULL)
        *dead = z == len && l == 0.0f && m == lse;
    return m + logf(expf(lse - m) + l);
}

/* A kept chain: lse after each of its blocks k = 1..K and the zeros of blocks 1..k (prefix). */
typedef struct kept {
    float *lse;
    uint64_t *pre;
} kept;

/* The left chain of residue b's row a_max: block k = 1..a_max at offset -k, run from the farthest. */
static void keep_left(const tp *c, uint64_t b, uint64_t a_max, kept *L)
{
    float lse = -INFINITY;
    uint64_t *zk = L->pre;   /* zeros of block k first, summed into prefixes below */
    for (uint64_t k = a_max; k >= 1; k--) {
        zk[k] = 0;
        lse = tblock(c, -(int64_t)(c->B * k) - (int64_t)b, c->B, lse, &zk[k], NULL);
        L->lse[k] = lse;
    }
    L->pre[0] = 0;
    for (uint64_t k = 1; k <= a_max; k++)
        L->pre[k] += L->pre[k - 1];
}

/* The right chain of residue b from the diagonal lse ld: full blocks o = 1..R; stops at a dead block. */
static void keep_right(const tp *c, uint64_t b, uint64_t R, float ld, kept *K)
{
    float lse = ld;
    int dead = 0;
    K->pre[0] = 0;
    for (uint64_t o = 1; o <= R; o++) {
        uint64_t z = 0;
        if (!dead)
            lse = tblock(c, (int64_t)(c->B * o) - (int64_t)b, c->B, lse, &z, &dead);
        else
            z = c->B;
        dead = dead && c->mono;
        K->lse[o] = lse;
        K->pre[o] = K->pre[o - 1] + z;
    }
}

/* The full right blocks of row a (o = 1 .. nfull - 1 - a) from its diagonal lse: its zeros into *z; the lse
 * after them. */
static float right_blocks(const tp *c, uint64_t b, uint64_t a, const kept *K, float ld, float lse, uint64_t *zp)
{
    uint64_t B = c->B, z = 0;
    uint64_t R = c->nfull - 1 - a, o = 1;
    if (lse == ld) {
        z += K->pre[R];
        lse = K->lse[R];
    } else {
        for (; o <= R; o++) {
            int dead;
            lse = tblock(c, (int64_t)(B * o) - (int64_t)b, B, lse, &z, &dead);
            if (lse == K->lse[o]) {   /* joined: blocks o + 1 .. R as kept */
                z += K->pre[R] - K->pre[o];
                lse = K->lse[R];
                break;
            }
            if (dead && c->mono) {   /* lse stays; every farther block is all zero */
                z += (R - o) * B;
                break;
            }
        }
    }
    *zp += z;
    return lse;
}

/* Row a of residue b: its zero keys (the kept chains L, and K from the diagonal lse ld when bidirectional). */
static uint64_t trow(const tp *c, uint64_t b, uint64_t a, const kept *L, const kept *K, float ld)
{
    uint64_t z = 0, B = c->B;
    float lse = -INFINITY;
    for (uint64_t k = a; k >= 1; k--) {
        lse = tblock(c, -(int64_t)(B * k) - (int64_t)b, B, lse, &z, NULL);
        if (lse == L->lse[k]) {   /* joined: blocks k - 1 .. 1 as kept */
            z += L->pre[k - 1];
            lse = L->lse[1];
            break;
        }
    }
    uint64_t i = a * B + b, end = c->bidir ? (a * B + B < c->n ? a * B + B : c->n) : i + 1;
    lse = tblock(c, -(int64_t)b, end - a * B, lse, &z, NULL);
    if (c->bidir && a + 1 < c->nfull)   /* full right blocks */
        lse = right_blocks(c, b, a, K, ld, lse, &z);
    if (c->bidir && c->n % B != 0 && a < c->nfull)   /* the matrix's last partial block */
        tblock(c, (int64_t)(B * (c->nfull - a)) - (int64_t)b, c->n % B, lse, &z, NULL);
    return z;
}

/* The end row run whole: its zeros and first zero distance. */
static abl_status end_row(const tp *c, abl_pred_head *out)
{
    uint64_t n = c->n;
    float *x = malloc(2 * n * sizeof *x);
    if (x == NULL)
        return ABL_ERR_NO_MEMORY;
    for (uint64_t j = 0; j < n; j++)
        x[j] = c->T[n - 1 - j];
    out->row_zeros = abl_triton_row(c->em, n - 1, x, x + n, NULL, NULL);
    out->first_blind = -1;
    for (uint64_t d = 0; d < n && out->first_blind < 0; d++)
        if (abl_emul_zero(c->em, x[n + n - 1 - d]))
            out->first_blind = (int64_t)d;
    free(x);
    return ABL_OK;
}

/* Every residue's kept chains, then its rows. */
static void tp_rows(const tp *c, kept *L, kept *K, abl_pred_head *out)
{
    uint64_t n = c->n, B = c->B, mid = abl_bidir_mid(n);
    for (uint64_t b = 0; b < B && b < n; b++) {
        uint64_t a_max = (n - 1 - b) / B;
        keep_left(c, b, a_max, L);
        float ld = -INFINITY;
        if (c->bidir && c->nfull >= 2) {   /* some row has a full right block */
            uint64_t z = 0;
            ld = tblock(c, -(int64_t)b, B, a_max >= 1 ? L->lse[1] : -INFINITY, &z, NULL);
            keep_right(c, b, c->nfull - 1, ld, K);
        }
        for (uint64_t a = 0; a <= a_max; a++) {
            uint64_t z = trow(c, b, a, L, K, ld);
            out->matrix_zeros += z;
            if (c->bidir && a * B + b == mid)
                out->mid_row_zeros = z;
        }
    }
}

abl_status abl_triton_predict_head(const abl_sim_setup *s, int h, int bidir, abl_pred_head *out)
{
    const abl_emul *em = &s->em;
    uint64_t n = em->n, B = em->block > 0 ? (uint64_t)em->block : TRITON_BLOCK_N;
    memset(out, 0, sizeof *out);
    float *T = malloc(n * sizeof *T);
    kept L = {malloc((n / B + 2) * sizeof(float)), malloc((n / B + 2) * sizeof(uint64_t))};
    kept K = {malloc((n / B + 2) * sizeof(float)), malloc((n / B + 2) * sizeof(uint64_t))};
    abl_status st = T != NULL && L.lse != NULL && L.pre != NULL && K.lse != NULL && K.pre != NULL ? ABL_OK
                                                                                                  : ABL_ERR_NO_MEMORY;
    int mono = 1;
    for (uint64_t d = 0; st == ABL_OK && d < n; d++) {
        T[d] = abl_emul_logit(em, &s->hd[h], 0.0f, d, abl_emul_bias_mag(em, &s->hd[h], d));
        if (!isfinite(T[d]))
            st = ABL_ERR_UNSUPPORTED;   /* as simulate */
        mono &= d == 0 || T[d] <= T[d - 1];
    }
    if (st == ABL_OK) {
        tp c = {em, T, n, B, n / B, bidir, mono};
        tp_rows(&c, &L, &K, out);
        st = end_row(&c, out);
    }
    out->first_influence_zero = out->first_blind;   /* P.V is the kernel's own: the weight is the influence */
    out->row_influence_zeros = out->row_zeros;
    out->matrix_influence_zeros = out->matrix_zeros;
    free(T);
    free(L.lse);
    free(L.pre);
    free(K.lse);
    free(K.pre);
    return st;
}
