/* alibi-blind: design's kernel-level checks (abl_design_kernel.h). Why the last row is enough: with zero
 * logits under the relative bias, row i holds the keys d = 0..i of the last row with the same logits, and
 * the diagonal (logit 0) is every row's max; an eager row's exact sum grows with i, so its fp32 sum,
 * reciprocal and products only shrink a weight; a flash row's exponent of a key is fixed by its logit
 * and the max 0. A zero anywhere in the matrix is a zero in the last row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "design/abl_design_kernel.h"

/* The most floats each of the per-head caches may hold (64 MiB): 16 M, 256 heads at 65536 keys. */
#define ABL_DK_CACHE_FLOATS ((size_t)1 << 24)

abl_status abl_dk_init(abl_dk *k, const abl_design_config *c, const float *slopes, int n, int relative)
{
    memset(k, 0, sizeof *k);
    abl_schedule_spec spec;
    abl_status st = abl_design_slopes_schedule(slopes, n, &spec);
    if (st != ABL_OK)
        return st;
    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    sc.pipeline = c->pipeline;
    if (relative)
        sc.pipeline.bias_form = ABL_BIAS_RELATIVE;
    sc.slopes = &spec;
    sc.context = c->context;
    sc.threads = 1;
    st = abl_sim_setup_init(&sc, &k->s);
    abl_schedule_spec_free(&spec);
    if (st != ABL_OK)
        return st;
    k->n = c->context;
    k->x = malloc(k->n * sizeof *k->x);
    k->e = malloc(k->n * sizeof *k->e);
    k->w = malloc(k->n * sizeof *k->w);
    if (k->x == NULL || k->e == NULL || k->w == NULL) {
        abl_dk_free(k);
        return ABL_ERR_NO_MEMORY;
    }
    size_t heads = (size_t)k->s.heads;
    if (heads > 0 && k->n <= ABL_DK_CACHE_FLOATS / heads) { /* a layer too large to cache computes each row afresh */
        k->mag = malloc(heads * k->n * sizeof *k->mag);
        k->x0 = malloc(heads * k->n * sizeof *k->x0);
        k->ready = calloc(heads, 1);
        if (k->mag == NULL || k->x0 == NULL || k->ready == NULL) {
            abl_dk_free(k);
            return ABL_ERR_NO_MEMORY;
        }
    }
    return ABL_OK;
}

void abl_dk_free(abl_dk *k)
{
    if (k->s.hd != NULL)
        abl_sim_setup_free(&k->s);
    free(k->x);
    free(k->e);
    free(k->w);
    free(k->mag);
    free(k->x0);
    free(k->ready);
    memset(k, 0, sizeof *k);
}

float abl_dk_clamp_value(const abl_dk *k, float v)
{
    const abl_emul *em = &k->s.em;
    if (em->softmax == ABL_SOFTMAX_FLASH)
        return (float)((double)v / (double)em->sm_scale);
    return (float)abl_fp_round(&em->bias, (double)v);
}

double abl_dk_clamp_stated(const abl_dk *k, float v)
{
    if (k->s.em.softmax == ABL_SOFTMAX_FLASH)
        return (double)v;
    return (double)abl_dk_clamp_value(k, v);
}

double abl_dk_score_scale(const abl_dk *k)
{
    const abl_emul *em = &k->s.em;
    if (em->softmax == ABL_SOFTMAX_FLASH)
        return (double)em->sm_scale;
    return em->has_scale ? (double)em->scale : 1.0;
}

/* Key j's logit in the last row: eager, the bias magnitude as the kernel stores it, limited by the clamp
 * (max(-mag, c) = -min(mag, -c)), through the pipeline's additions; flash, its fused bias, then the clamp. */
static float key_logit(const abl_dk *k, int h, uint64_t j, const float *clamp, float score)
{
    const abl_emul *em = &k->s.em;
    const abl_emul_head *hd = &k->s.hd[h];
    uint64_t pos = abl_emul_pos(em, k->n - 1, j);
    float mag = abl_emul_bias_mag(em, hd, pos);
    if (em->softmax == ABL_SOFTMAX_FLASH) {
        float x = abl_emul_logit(em, hd, score, pos, mag);
        return clamp != NULL && x < *clamp ? *clamp : x;
    }
    if (clamp != NULL && mag > -*clamp)
        mag = -*clamp;
    return abl_emul_logit(em, hd, score, pos, mag);
}

float abl_dk_key_logit(const abl_dk *k, int h, int64_t key, float score)
{
    return key_logit(k, h, (uint64_t)key, NULL, score);
}

/* Head h's zero-score row from its cached magnitudes and logits: key_logit's result for every key, the
 * bias magnitude and logit computed once per head (the first call fills them) instead of once per row. */
static void cached_row(abl_dk *k, int h, const float *clamp)
{
    const abl_emul *em = &k->s.em;
    const abl_emul_head *hd = &k->s.hd[h];
    float *mag = k->mag + (size_t)h * k->n, *x0 = k->x0 + (size_t)h * k->n;
    if (!k->ready[h]) {
        for (uint64_t j = 0; j < k->n; j++) {
            uint64_t pos = abl_emul_pos(em, k->n - 1, j);
            mag[j] = abl_emul_bias_mag(em, hd, pos);
            x0[j] = abl_emul_logit(em, hd, 0.0f, pos, mag[j]);
        }
        k->ready[h] = 1;
    }
    if (clamp == NULL) {
        memcpy(k->x, x0, k->n * sizeof *k->x);
    } else if (em->softmax == ABL_SOFTMAX_FLASH) { /* the clamp bounds the fused logit */
        for (uint64_t j = 0; j < k->n; j++)
            k->x[j] = x0[j] < *clamp ? *clamp : x0[j];
    } else { /* the clamp bounds the magnitude, then the pipeline's additions as for any key (the eager
              * additions do not look at the position: one clamped logit serves every clamped key) */
        int by_pos = abl_emul_ggml(em) || abl_emul_engine(em);
        float xc = abl_emul_logit(em, hd, 0.0f, k->n - 1, -*clamp);
        for (uint64_t j = 0; j < k->n; j++)
            k->x[j] = !(mag[j] > -*clamp) ? x0[j]
                      : by_pos         ? abl_emul_logit(em, hd, 0.0f, abl_emul_pos(em, k->n - 1, j), -*clamp)
                                       : xc;
    }
}

uint64_t abl_dk_last_row(abl_dk *k, int h, const float *clamp, int64_t key, float score)
{
    if (k->ready != NULL)
        cached_row(k, h, clamp);
    for (uint64_t j = 0; k->ready == NULL && j < k->n; j++)
        k->x[j] = key_logit(k, h, j, clamp, 0.0f);
    if (key >= 0)
        k->x[key] = key_logit(k, h, (uint64_t)key, clamp, score);
    return abl_sim_row_weights(&k->s, k->n - 1, k->x, k->e, k->w);
}

int64_t abl_dk_ord(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return (b & 0x80000000u) ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b;
}

float abl_dk_unord(int64_t o)
{
    uint32_t b = o < 0 ? (uint32_t)(-o) | 0x80000000u : (uint32_t)o;
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}
