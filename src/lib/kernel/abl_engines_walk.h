/* alibi-blind (private): the zero-logit predictor that the tiled GPU kernels with a running max share
 * (trtllm-context: TensorRT-LLM's fmha_v2 flash attention, abl_engines_trtllm.c; vllm-triton's 2-D kernel,
 * abl_engines_triton.c), modelled from source, not measured (docs/pipelines.md §3c).
 *
 * With zero logits x_j rising with j, for row i (tile T = i / B) every earlier tile t is full: its max is its
 * last key, its P_j, its rescale factor alpha_t and the running sum after it do not depend on the row. Key j
 * of tile t < T reaches the output as weight(A_j(T-1), ad_i, b_i): A_j(T-1) its P in the model dtype times
 * alpha_{t+1} .. alpha_{T-1} (each product rounded), the same for every row of tile T; ad_i the factor of the
 * row's diagonal tile and b_i its final factor (1/sum, or the sum it is divided by). A_j is non-decreasing in j
 * within a tile and every step is monotone, so each row's zeros in a tile are a prefix; a tile's keys are
 * walked through the later row groups until all of them are 0, a group settled at once when its extreme
 * factors decide it, by a prefix search per row otherwise. The kernels differ only in the arithmetic of each
 * step: abl_tile_steps. */
#ifndef ABL_ENGINES_WALK_H
#define ABL_ENGINES_WALK_H

#include <stdint.h>
#include "kernel/abl_round.h"

typedef struct abl_tile_walk abl_tile_walk;

/* One kernel's arithmetic of the walk's steps. */
typedef struct abl_tile_steps {
    /* The full tiles tt < w->nt: w->alpha[tt] (the factor as the accumulator applies it) and w->Lrun[tt] (the
     * running sum after the tile). */
    void (*tiles)(abl_tile_walk *w);
    /* Row i's factor of its diagonal tile (*ad) and its final factor (*b). */
    void (*row)(abl_tile_walk *w, uint64_t i, float *ad, float *b);
    /* P of a key with logit xj against the max xm, in the model dtype. */
    float (*p)(abl_tile_walk *w, float xj, float xm);
    /* The accumulator rescaled: A[k] = A[k] * f for lo <= k < w->B (a loop per kernel, not a call per key:
     * the walk's hottest step). */
    void (*rescale)(const abl_tile_walk *w, float *A, uint64_t lo, float f);
    /* The output coefficient of a key of an earlier tile (A_j = a) in a row with factors ad, b. */
    float (*weight)(const abl_tile_walk *w, float a, float ad, float b);
    /* The output coefficient of a key of the row's diagonal tile with P = p, final factor b. */
    float (*diag)(const abl_tile_walk *w, float p, float b);
    /* 1: the coefficient falls as b grows (b is the sum it is divided by); 0: it rises (b is 1/sum). */
    int b_divides;
} abl_tile_steps;

struct abl_tile_walk {
    const abl_emul *em;
    const abl_tile_steps *steps;
    void *engine;            /* the kernel's own state (trtllm-context: its __expf cache) */
    const float *X;          /* x_j */
    uint64_t n, B, c, nt;    /* keys, tile, first computed row, full tiles before the last */
    float *alpha, *Lrun;     /* per full tile: its factor, the running sum after it */
    float *ad, *b;           /* per computed row: the factor of its diagonal tile, its final factor */
    float *gmin, *gmax;      /* per row group (tile): ad min, max, b min, max (2 floats each) */
    uint64_t zeros;          /* matrix zeros */
    uint64_t last_zeros;     /* the last row's */
    int64_t last_key;        /* the last row's largest zero key (-1: none) */
};

/* The zero counts of the rows em computes (its last n - em->first_row) for zero logits X[0..n) that rise with
 * the key, in tiles of B keys, through the kernel's steps (engine: their state). */
abl_status abl_tile_walk_predict(const abl_emul *em, const float *X, uint64_t n, uint64_t B,
                                 const abl_tile_steps *steps, void *engine, abl_pred_head *out);

#endif
