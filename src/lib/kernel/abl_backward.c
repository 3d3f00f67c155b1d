/* alibi-blind: the backward pass of the eager attention softmax, emulated row by row beside the
 * forward emulation (spec §15, docs/pipelines.md §9).
 *
 * PyTorch's CPU kernel (aten/src/ATen/native/cpu/SoftMaxKernel.cpp, _vec_host_softmax_backward_lastdim,
 * torch 1.13): sum = sum_k gy_k y_k accumulated in fp32 and stored as scalar_t (the dtype), then
 * grad_input = (gy - sum) * y in fp32, stored as scalar_t. The forward emulation hands each row's
 * weights y as stored (abl_simulate_config.row_hook); this file forms dS from them. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "abl_internal.h"
#include "abl_round.h"
#include "abl/kernel/backward.h"
#include "abl_backward_memeff.h"
#include "abl_backward_flash.h"

/* The backward kind of each preset whose softmax is eager (docs/pipelines.md §9); others: native. */
static const struct {
    const char *preset;
    abl_backward_kind kind;
} kind_table[] = {
    {"bloom-hf", ABL_BACKWARD_UPCAST},      /* F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(dtype) */
    {"eager", ABL_BACKWARD_UPCAST},         /* the same call (the SDPA math path as the tests run it) */
    {"falcon-hf-eager", ABL_BACKWARD_NATIVE}, /* F.softmax(..., dtype=dtype): the softmax runs in the dtype */
    {"mpt", ABL_BACKWARD_NATIVE},           /* llm-foundry: torch.softmax(attn_weight, dim=-1) */
    {"mpt-hf", ABL_BACKWARD_UPCAST},        /* softmax(attn_weights.float(), dim=-1).to(dtype) */
};

abl_backward_kind abl_backward_kind_of(const abl_pipeline *p)
{
    if (p != NULL && p->softmax == ABL_SOFTMAX_SDPA_EFFICIENT)
        return ABL_BACKWARD_MEMEFF;   /* the kernel decides, whichever preset chose it (falcon-hf-sdpa too) */
    if (p != NULL && p->softmax == ABL_SOFTMAX_FLASH)
        return ABL_BACKWARD_FLASH;    /* FlashAttention-2's backward kernel, as its forward (flash2) */
    for (size_t i = 0; p != NULL && p->preset != NULL && i < sizeof kind_table / sizeof kind_table[0]; i++)
        if (strcmp(kind_table[i].preset, p->preset) == 0)
            return kind_table[i].kind;
    return ABL_BACKWARD_NATIVE;
}

const char *abl_backward_kind_name(abl_backward_kind k)
{
    return k == ABL_BACKWARD_UPCAST ? "upcast" : k == ABL_BACKWARD_MEMEFF ? "memeff"
           : k == ABL_BACKWARD_FLASH ? "flash" : "native";
}

typedef struct bwd_ctx {
    const abl_backward_config *b;
    abl_backward_kind kind;
    abl_fp out;              /* the training dtype (the pipeline's output dtype) */
    uint64_t n;
    double up;               /* 2^j (no file) */
    double scale;            /* 2^k (file) */
    abl_bwd_head *heads;     /* grown as head indices arrive (the hook is called one row at a time) */
    int cap;
    float *dp;               /* one row of dP */
    float *ds;               /* one row of dS */
    float *pt;               /* one row of P as stored in the dtype */
    int block;               /* memeff: the forward's keys per block */
    float sm_scale;          /* memeff: the softmax scale that multiplies dS */
    float ethr;              /* memeff: the largest fp32(x - lse) whose dS is 0 (abl_memeff_ds_zero_e) */
    abl_emul fl;             /* flash: the forward's emulation parameters (block, scale_softmax_log2, dtype) */
    int fl_thr;              /* flash: zeros by thresholds (hook_thr), the forward run in fp32 */
    int thr;                 /* flash with fl_thr, memeff: hook_thr, on several threads at once */
    pthread_mutex_t mu;      /* hook_thr: heads and failed */
    float ythr;              /* flash: the largest exp2 argument whose dS is 0 (abl_flash_ds_zero_y) */
    float wthr;              /* flash: the largest fp32 P whose stored weight dtype(P) is 0 */
    abl_status failed;
} bwd_ctx;

/* Into the dtype; a NaN stays NaN (abl_fp_round32 takes finite or infinite values only): a loss scale
 * that overflows dP gives inf - inf in D and dS, which PyTorch leaves NaN, never 0. */
static float to_dtype(const bwd_ctx *c, double v)
{
    return isnan(v) ? (float)v : abl_fp_round32(&c->out, (float)v);
}

static int grow_heads(bwd_ctx *c, int need)
{
    if (need <= c->cap)
        return 1;
    int cap = c->cap ? c->cap : 8;
    while (cap < need)
        cap *= 2;
    abl_bwd_head *h = realloc(c->heads, (size_t)cap * sizeof *h);
    if (h == NULL)
        return 0;
    for (int k = c->cap; k < cap; k++) {
        memset(&h[k], 0, sizeof h[k]);
        h[k].first_blind = -1;
        h[k].fwd_first_blind = -1;
    }
    c->heads = h;
    c->cap = cap;
    return 1;
}

/* dS of one row from the file's dP: the kernel's two loops. */
static void row_from_file(bwd_ctx *c, int h, uint64_t row, const float *w)
{
    uint64_t cnt = row + 1;
    abl_npy_row(c->b->grad, (uint64_t)(h - 1), row, cnt, c->dp);
    double sum = 0;
    for (uint64_t k = 0; k < cnt; k++) {
        c->dp[k] = to_dtype(c, (double)c->dp[k] * c->scale);
        sum += (double)c->dp[k] * (double)w[k];   /* each product exact in binary64 */
    }
    /* native: the CPU kernel stores the sum as scalar_t; upcast: it stays fp32 */
    float d = c->kind == ABL_BACKWARD_NATIVE ? to_dtype(c, sum) : (float)sum;
    for (uint64_t k = 0; k < cnt; k++) {
        float diff = (float)((double)c->dp[k] - (double)d);
        c->ds[k] = to_dtype(c, (double)(float)((double)diff * (double)w[k]));
    }
}

static void row_unit(bwd_ctx *c, uint64_t row, const float *w)
{
    for (uint64_t k = 0; k <= row; k++)
        c->ds[k] = to_dtype(c, (double)(float)((double)w[k] * c->up));
}

static void count_row(bwd_ctx *c, abl_bwd_head *hd, uint64_t row, const float *w)
{
    int last = row == c->n - 1;
    for (uint64_t k = 0; last && k <= row; k++)
        if (w[k] == 0.0f && (hd->fwd_first_blind < 0 || (int64_t)(row - k) < hd->fwd_first_blind))
            hd->fwd_first_blind = (int64_t)(row - k);
    for (uint64_t k = 0; k <= row; k++) {
        if (c->ds[k] != 0.0f)
            continue;
        hd->matrix_zeros++;
        if (w[k] != 0.0f)
            hd->only_matrix++;
        if (last) {
            hd->row_zeros++;
            if (w[k] != 0.0f)
                hd->only_row++;
            int64_t d = (int64_t)(row - k);
            if (hd->first_blind < 0 || d < hd->first_blind)
                hd->first_blind = d;
        }
    }
}

/* One row's zeros by comparisons, counted apart from the head so that rows can run on several threads. */
typedef struct row_tally {
    uint64_t zeros, only;     /* dS = 0; dS = 0 while the stored weight is not */
    int64_t first, fwd_first; /* the last row: the smallest d with dS = 0, with a zero weight (-1: none) */
} row_tally;

/*
 * count_row by comparisons (flash, memeff): the row's dS is 0 exactly on x <= xthr (abl_flash_ds_zero_x,
 * abl_memeff_row_zero_x), and the stored weight on w <= wthr (flash: w the fp32 P of the forward, run in
 * fp32, wthr the largest P the dtype takes to 0; memeff: w stored, wthr 0). Forming dS took an exp per key,
 * the forward's own cost again (issue 20: the backward at most 2x the forward).
 */
static void tally_thr(uint64_t row, int last, const float *x, float xthr, const float *w, float wthr, row_tally *t)
{
    uint64_t zeros = 0, only = 0;
    for (uint64_t k = 0; k <= row; k++) {
        int z = x[k] <= xthr;
        zeros += (uint64_t)z;
        only += (uint64_t)(z && w[k] > wthr);
    }
    *t = (row_tally){zeros, only, -1, -1};
    for (uint64_t k = row + 1; last && k-- > 0;)
        if (w[k] <= wthr) {   /* the largest k is the smallest d */
            t->fwd_first = (int64_t)(row - k);
            break;
        }
    for (uint64_t k = row + 1; last && k-- > 0;)
        if (x[k] <= xthr) {
            t->first = (int64_t)(row - k);
            break;
        }
}

static void add_tally(abl_bwd_head *hd, const row_tally *t, int last)
{
    hd->matrix_zeros += t->zeros;
    hd->only_matrix += t->only;
    if (!last)
        return;
    hd->row_zeros += t->zeros;
    hd->only_row += t->only;
    if (t->fwd_first >= 0)
        hd->fwd_first_blind = t->fwd_first;
    if (t->first >= 0)
        hd->first_blind = t->first;
}

/* flash and memeff rows, on the forward's threads at once (row_hook_concurrent): the row's work reads only
 * what abl_backward_run fixed before the forward started; the head table (grown here) under c->mu. */
static void hook_thr(bwd_ctx *c, int head_index, uint64_t row, const float *x, const float *w)
{
    int memeff = c->kind == ABL_BACKWARD_MEMEFF, last = row == c->n - 1;
    float xthr = memeff ? abl_memeff_row_zero_x(c->block, x, row + 1, c->ethr)
                        : abl_flash_row_zero_x(&c->fl, x, w, row + 1, c->ythr);
    row_tally t;
    tally_thr(row, last, x, xthr, w, memeff ? 0.0f : c->wthr, &t);
    pthread_mutex_lock(&c->mu);
    if (c->failed == ABL_OK && (head_index < 1 || !grow_heads(c, head_index)))
        c->failed = head_index < 1 ? ABL_ERR_INVALID_ARGUMENT : ABL_ERR_NO_MEMORY;
    if (c->failed == ABL_OK)
        add_tally(&c->heads[head_index - 1], &t, last);
    pthread_mutex_unlock(&c->mu);
}

/* Unit upstream, by comparisons alone: dS = dtype(fp32(P 2^j)) is 0 iff P 2^j <= zero_max (half the
 * smallest subnormal, a binary32 number or, for fp32 itself, 2^-150: rounding is monotone, so the fp32
 * rounding of the exact product does not cross it), and a stored weight dtype(P) is 0 iff P <= zero_max. */
static void count_unit(bwd_ctx *c, abl_bwd_head *hd, uint64_t row, const float *w)
{
    double zmax = c->out.zero_max, zs = zmax / c->up; /* P <= zs  <=>  P 2^j <= zmax (exact: powers of 2) */
    int last = row == c->n - 1;
    uint64_t zeros = 0, only = 0;
    for (uint64_t k = 0; k <= row; k++) {
        double p = w[k];
        if (p > zs)
            continue;
        zeros++;
        only += p > zmax;
    }
    hd->matrix_zeros += zeros;
    hd->only_matrix += only;
    if (!last)
        return;
    hd->row_zeros = zeros;
    hd->only_row = only;
    for (uint64_t k = row + 1; k-- > 0;)
        if ((double)w[k] <= zmax) {   /* the largest k is the smallest d */
            hd->fwd_first_blind = (int64_t)(row - k);
            break;
        }
    for (uint64_t k = row + 1; k-- > 0;)
        if ((double)w[k] <= zs) {
            hd->first_blind = (int64_t)(row - k);
            break;
        }
}

static void bwd_hook(void *ctxp, int head_index, uint64_t row, const float *logits, const float *weights)
{
    bwd_ctx *c = ctxp;
    if (c->thr) {   /* flash (fp32 P from the forward) and memeff (P recomputed from the logits' lse) */
        hook_thr(c, head_index, row, logits, weights);
        return;
    }
    if (c->failed != ABL_OK)
        return;
    if (head_index < 1 || !grow_heads(c, head_index)) {
        c->failed = head_index < 1 ? ABL_ERR_INVALID_ARGUMENT : ABL_ERR_NO_MEMORY;
        return;
    }
    if (c->kind == ABL_BACKWARD_FLASH) {    /* the fp32 P recomputed from the forward's log-sum-exp */
        abl_flash_backward_row(&c->fl, c->up, logits, row + 1, c->ds);
        count_row(c, &c->heads[head_index - 1], row, weights);
        return;
    }
    if (c->b->grad == NULL) {
        count_unit(c, &c->heads[head_index - 1], row, weights);
        return;
    }
    const float *pt = weights;
    if (c->kind == ABL_BACKWARD_UPCAST) { /* weights are the fp32 P; the stored ones are rounded here */
        for (uint64_t k = 0; k <= row; k++)
            c->pt[k] = abl_fp_round32(&c->out, weights[k]);
        pt = c->pt;
    }
    if (c->b->grad != NULL) {
        if (c->b->grad->ndim == 3 && (uint64_t)head_index > c->b->grad->heads) {
            c->failed = ABL_ERR_MISMATCH;
            return;
        }
        row_from_file(c, head_index, row, weights);
    } else {
        row_unit(c, row, weights);
    }
    count_row(c, &c->heads[head_index - 1], row, pt);
}

static abl_status check_pipeline(const abl_simulate_config *cfg, const abl_backward_config *b, abl_fp *out)
{
    int memeff = cfg->pipeline.softmax == ABL_SOFTMAX_SDPA_EFFICIENT;
    int flash = cfg->pipeline.softmax == ABL_SOFTMAX_FLASH;
    if (cfg->row_hook != NULL || (cfg->pipeline.softmax != ABL_SOFTMAX_EAGER && !memeff && !flash) ||
        cfg->pipeline.rows != 0)
        return ABL_ERR_UNSUPPORTED;
    if ((memeff || flash) && b->grad != NULL)
        return ABL_ERR_UNSUPPORTED;   /* their D is rowsum(dO * O), which a captured dP does not give */
    if (flash && cfg->pipeline.splits >= 2)
        return ABL_ERR_UNSUPPORTED;   /* split-KV is a decode path: its lse is the combine kernel's */
    return abl_fp_init(&cfg->pipeline.output_dtype, out);
}

static void totals(abl_backward *out)
{
    for (int h = 0; h < out->heads; h++) {
        out->row_zeros += out->results[h].row_zeros;
        out->matrix_zeros += out->results[h].matrix_zeros;
        out->only_row += out->results[h].only_row;
        out->only_matrix += out->results[h].only_matrix;
    }
}

static abl_status backward_init(const abl_simulate_config *cfg, const abl_backward_config *b, abl_backward *out,
                                abl_fp *fp)
{
    memset(out, 0, sizeof *out);
    if (cfg == NULL || b == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    out->log2_upstream = b->log2_upstream;
    out->log2_scale = b->log2_scale;
    out->from_file = b->grad != NULL;
    out->kind = abl_backward_kind_of(&cfg->pipeline);
    if (b->grad != NULL && b->grad->n != cfg->context)
        return ABL_ERR_MISMATCH;
    if (labs(b->log2_upstream) > 1000 || labs(b->log2_scale) > 1000)
        return ABL_ERR_INVALID_ARGUMENT;
    return check_pipeline(cfg, b, fp);
}

/* The gradient's zeros of head h from the forward runs: fwd (the dtype) and grad (the dtype with emin
 * lowered by j, or fwd itself). Blindness is monotone per row in the threshold, so the keys blind in one
 * and not the other are the difference of the counts. */
static void from_runs(abl_bwd_head *o, const abl_sim_head *fwd, const abl_sim_head *grad)
{
    o->fwd_first_blind = fwd->first_blind;
    o->first_blind = grad->first_blind;
    o->row_zeros = grad->row_zeros;
    o->matrix_zeros = grad->matrix_zeros;
    o->only_row = grad->row_zeros > fwd->row_zeros ? grad->row_zeros - fwd->row_zeros : 0;
    o->only_matrix = grad->matrix_zeros > fwd->matrix_zeros ? grad->matrix_zeros - fwd->matrix_zeros : 0;
}

/*
 * The dtype whose zeros are the unit-upstream gradient zeros of an fp32 P: P 2^j <= 2^(emin - p), i.e. emin
 * lowered by j. Below binary32's exponent range (bf16 with a loss scale) a dtype's zeros depend on emin - p
 * alone (x rounds to 0 iff x <= 2^(emin - p)), so the same threshold with emin = -126 and p raised; past
 * p = 24 the threshold is under 2^-150 and an fp32 P is 0 there iff it is 0: binary32's own zeros.
 * ABL_ERR_UNSUPPORTED when no such format exists (emin above emax).
 */
static abl_status shift_dtype(abl_format *f, long j)
{
    f->emin -= j;
    f->flags |= ABL_FMT_CUSTOM;
    if (f->emin < -126 && f->emin <= f->emax) {
        long p = f->precision + (-126 - f->emin);
        f->precision = (int)(p > 24 ? 24 : p);
        f->man_bits = f->precision - 1;
        f->emin = -126;
    }
    abl_fp fp;
    return f->emin > f->emax ? ABL_ERR_UNSUPPORTED : abl_fp_init(f, &fp);
}

/* The largest binary32 p whose rounding into the dtype is <= t: native kernels store P_T = dtype(p) and
 * their unit-upstream dS is 0 iff P_T <= t, i.e. iff p <= this (rounding is monotone, so a bisection on
 * the ordered bit patterns of +0 .. +inf, with the emulation's own rounding, finds it exactly). */
static double stored_threshold(const abl_fp *fp, double t)
{
    uint32_t lo = 0, hi = 0x7f800000u;   /* dtype(+0) = 0 <= t; dtype(+inf) = inf > t (t finite) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        float v;
        memcpy(&v, &mid, sizeof v);
        if ((double)abl_fp_round32(fp, v) <= t)
            lo = mid;
        else
            hi = mid;
    }
    float r;
    memcpy(&r, &lo, sizeof r);
    return r;
}

static abl_status zeros_only(abl_simulate_config *c)
{
    abl_status st = abl_format_lookup("fp32", &c->pipeline.pv_dtype);
    return st != ABL_OK ? st : abl_format_lookup("fp32", &c->pipeline.pv_accumulate);
}

/*
 * Unit upstream without the hook, one forward emulation per row where the kinds allow it: dS = 0 iff
 * P 2^j <= zero_max (see count_unit).
 *  - native with j >= 0, and upcast with j = 0 (dS = dtype(fp32(P32)) is the stored weight itself): the
 *    forward zeros are the gradient zeros, one run;
 *  - upcast with j != 0: the threshold sits on the fp32 P between other binades than the dtype's: the
 *    same run counts it as a second threshold on the same P (abl_simulate_config.zero2, zero_max 2^-j,
 *    exact: a power of 2 scaled by one), one run; bidirectional (no second threshold there): a second
 *    run in the shifted dtype (shift_dtype), whose zeros are the same P <= zero_max 2^-j.
 *  - native with j < 0: the stored P_T meets P_T <= zero_max 2^-j, which is no format's zero but is, on
 *    the fp32 p it is rounded from, p <= stored_threshold(): the same second threshold, one run.
 * ABL_ERR_UNSUPPORTED for native with j < 0 on a bidirectional layer (the caller takes the row hook).
 */
static abl_status unit_by_runs(const abl_simulate_config *cfg, const abl_backward_config *b, abl_simulation *sim,
                               abl_backward *out)
{
    abl_simulate_config gc = *cfg;
    int below = out->kind == ABL_BACKWARD_NATIVE && b->log2_upstream < 0;
    if (below && cfg->attention == ABL_ATTENTION_BIDIRECTIONAL)
        return ABL_ERR_UNSUPPORTED;   /* no second threshold there, and no format's zero: the row hook */
    int shifted = (out->kind == ABL_BACKWARD_UPCAST && b->log2_upstream != 0) || below;
    int second = shifted && cfg->attention == ABL_ATTENTION_BIDIRECTIONAL;
    if (second && shift_dtype(&gc.pipeline.output_dtype, b->log2_upstream) != ABL_OK)
        return ABL_ERR_UNSUPPORTED;
    abl_fp fp;
    if (shifted && !second && abl_fp_init(&cfg->pipeline.output_dtype, &fp) != ABL_OK)
        return ABL_ERR_UNSUPPORTED;
    /* both runs count weight zeros only: with P.V in fp32 (which keeps every dtype's smallest weight, the
     * shifted one's too: 2^-149 at the least) the influence rule, which writes every weight out and counts
     * it again, stays off (the backward reports no influence) */
    abl_simulate_config fc = *cfg;
    fc.zero2 = shifted && !second;   /* 2^-j: ldexp is exact down to binary64's 2^-1074, and below 2^-149 */
    fc.zero2_max = fc.zero2 ? ldexp(fp.zero_max, (int)-b->log2_upstream) : 0.0; /* only P = 0 counts */
    if (below)   /* native: the threshold is on the stored P_T, so on p: the largest p rounding under it */
        fc.zero2_max = stored_threshold(&fp, fc.zero2_max);
    if (zeros_only(&fc) != ABL_OK || (second && zeros_only(&gc) != ABL_OK))
        return ABL_ERR_UNSUPPORTED;
    abl_status st = abl_simulate_run(&fc, sim);
    if (st == ABL_OK)
        sim->config = *cfg;   /* as the caller gave it */
    abl_simulation g;
    memset(&g, 0, sizeof g);
    if (st == ABL_OK && second)
        st = abl_simulate_run(&gc, &g);
    if (st == ABL_OK && (out->results = calloc((size_t)sim->heads, sizeof *out->results)) == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK) {
        out->heads = sim->heads;
        for (int h = 0; h < sim->heads; h++) {
            abl_sim_head z = sim->results[h];   /* the gradient's zeros: the second threshold's when set */
            if (fc.zero2) {
                z.first_blind = z.zero2_first_blind;
                z.row_zeros = z.zero2_row_zeros;
                z.matrix_zeros = z.zero2_matrix_zeros;
            }
            from_runs(&out->results[h], &sim->results[h], second ? &g.results[h] : &z);
        }
        totals(out);
    }
    abl_simulation_free(&g);
    return st;
}

/* flash: the emulation parameters and the thresholds of hook_thr, fixed for the whole run (wthr: the
 * rounding into the dtype is monotone, so stored_threshold finds the largest P it takes to 0). */
static abl_status flash_setup(const abl_pipeline *p, bwd_ctx *c)
{
    abl_status st = abl_emul_init(p, c->n, &c->fl);
    c->fl_thr = st == ABL_OK && c->fl.c_log2 > 0.0f;   /* else y does not grow with x: the rows form dS */
    if (c->fl_thr) {
        c->ythr = abl_flash_ds_zero_y(&c->fl, c->up);
        c->wthr = (float)stored_threshold(&c->out, 0.0);
    }
    return st;
}

abl_status abl_backward_run(const abl_simulate_config *cfg, const abl_backward_config *b, abl_simulation *sim,
                            abl_backward *out)
{
    if (sim == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(sim, 0, sizeof *sim);
    bwd_ctx c;
    memset(&c, 0, sizeof c);
    abl_status st = backward_init(cfg, b, out, &c.out);
    if (st != ABL_OK)
        return st;
    if (b->grad == NULL && out->kind != ABL_BACKWARD_MEMEFF && out->kind != ABL_BACKWARD_FLASH) {
        st = unit_by_runs(cfg, b, sim, out);
        if (st != ABL_ERR_UNSUPPORTED)
            return st;
        abl_simulation_free(sim);
        memset(sim, 0, sizeof *sim);
        st = ABL_OK;
    }
    c.b = b;
    c.n = cfg->context;
    c.up = ldexp(1.0, (int)b->log2_upstream);
    c.scale = ldexp(1.0, (int)b->log2_scale);
    c.dp = malloc((size_t)c.n * sizeof *c.dp);
    c.ds = malloc((size_t)c.n * sizeof *c.ds);
    c.pt = malloc((size_t)c.n * sizeof *c.pt);
    if (c.dp == NULL || c.ds == NULL || c.pt == NULL)
        st = ABL_ERR_NO_MEMORY;
    c.kind = out->kind;
    c.block = cfg->pipeline.block;
    c.sm_scale = abl_memeff_scale(cfg->pipeline.head_dim);
    if (c.kind == ABL_BACKWARD_MEMEFF)
        c.ethr = abl_memeff_ds_zero_e(&c.out, c.up, c.sm_scale);
    if (st == ABL_OK && c.kind == ABL_BACKWARD_FLASH)
        st = flash_setup(&cfg->pipeline, &c);
    abl_simulate_config sc = *cfg;
    /* upcast: the emulation stops at the fp32 P (the rounding into the dtype is done in the hook); flash with
     * thresholds: the same, its P feeds the lse and hook_thr compares it with wthr */
    if (st == ABL_OK && (c.kind == ABL_BACKWARD_UPCAST || c.fl_thr))
        st = abl_format_lookup("fp32", &sc.pipeline.output_dtype);
    if (st == ABL_OK)
        st = zeros_only(&sc);   /* no influence counted: the backward does not report it */
    sc.row_hook = bwd_hook;
    sc.row_hook_ctx = &c;
    c.thr = c.kind == ABL_BACKWARD_MEMEFF || c.fl_thr;
    sc.row_hook_concurrent = c.thr;
    pthread_mutex_init(&c.mu, NULL);
    if (st == ABL_OK)
        st = abl_simulate_run(&sc, sim);
    pthread_mutex_destroy(&c.mu);
    if (st == ABL_OK)
        st = c.failed;
    if (st == ABL_OK && b->grad != NULL && b->grad->ndim == 3 && b->grad->heads != (uint64_t)sim->heads)
        st = ABL_ERR_MISMATCH;
    if (st == ABL_OK && !grow_heads(&c, sim->heads))
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK) {
        sim->config.row_hook = cfg->row_hook; /* the caller's (none), not ours: c dies here */
        sim->config.row_hook_ctx = cfg->row_hook_ctx;
        sim->config.row_hook_concurrent = cfg->row_hook_concurrent;
        out->heads = sim->heads;
        out->results = c.heads;
        c.heads = NULL;
        totals(out);
    }
    free(c.heads);
    if (st == ABL_OK)
        sim->config.pipeline = cfg->pipeline; /* as the caller gave it */
    free(c.dp);
    free(c.ds);
    free(c.pt);
    return st;
}

/* The pipeline whose forward zeros are the zero-logit gradient zeros (abl_backward_predict). */
static abl_status predict_pipeline(const abl_backward *out, const abl_backward_config *b, abl_simulate_config *pc)
{
    if (b->grad != NULL || out->kind == ABL_BACKWARD_MEMEFF || out->kind == ABL_BACKWARD_FLASH)
        return ABL_ERR_UNSUPPORTED;   /* flash: abl_flash_backward_predict, not a forward prediction */
    if (out->kind == ABL_BACKWARD_NATIVE)
        return b->log2_upstream >= 0 ? ABL_OK : ABL_ERR_UNSUPPORTED;
    return shift_dtype(&pc->pipeline.output_dtype, b->log2_upstream);
}

/* memeff: its own predictor (abl_backward_memeff_predict.c), unit upstream (no file) only. */
static abl_status predict_memeff(const abl_simulate_config *cfg, const abl_backward_config *b, abl_backward *out)
{
    if (b->grad != NULL)
        return ABL_ERR_UNSUPPORTED;
    abl_status st = abl_memeff_predict(cfg, b->log2_upstream, &out->results, &out->heads);
    if (st != ABL_OK)
        return st;
    out->predicted = 1;
    totals(out);
    return ABL_OK;
}

/* The gradient-only counts of an eager kind's prediction: upcast with 2^j < 1 loses keys whose weight is not
 * 0 (with 2^j >= 1, and native, the gradient's zeros are among the forward's: none). Both are thresholds on
 * the same fp32 P of every row, so the difference of the forward predictor's counts is the count. */
static abl_status predict_only(const abl_simulate_config *cfg, const abl_backward_config *b, abl_backward *out)
{
    if (out->kind != ABL_BACKWARD_UPCAST || b->log2_upstream >= 0)
        return ABL_OK;
    abl_prediction f;
    abl_status st = abl_predict_run(cfg, &f);
    for (int h = 0; st == ABL_OK && h < out->heads && h < f.heads; h++) {
        abl_bwd_head *o = &out->results[h];
        o->only_row = o->row_zeros > f.results[h].row_zeros ? o->row_zeros - f.results[h].row_zeros : 0;
        o->only_matrix = o->matrix_zeros > f.results[h].matrix_zeros ? o->matrix_zeros - f.results[h].matrix_zeros : 0;
    }
    if (st == ABL_OK)
        abl_prediction_free(&f);
    return st;
}

abl_status abl_backward_estimate(const abl_simulate_config *cfg, abl_cost *out)
{
    if (cfg == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (abl_backward_kind_of(&cfg->pipeline) != ABL_BACKWARD_FLASH || cfg->attention != ABL_ATTENTION_CAUSAL)
        return ABL_OK;
    abl_status st = abl_flash_backward_estimate(cfg, out);
    return st == ABL_ERR_UNSUPPORTED ? ABL_OK : st;   /* the predictor refuses it itself, at no cost */
}

abl_status abl_backward_predict(const abl_simulate_config *cfg, const abl_backward_config *b, abl_backward *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_fp fp;
    abl_status st = backward_init(cfg, b, out, &fp);
    if (st == ABL_OK && out->kind == ABL_BACKWARD_MEMEFF)
        return predict_memeff(cfg, b, out);
    if (st == ABL_OK && out->kind == ABL_BACKWARD_FLASH) {   /* its own row bisections (abl_backward_flash.c) */
        st = abl_flash_backward_predict(cfg, ldexp(1.0, (int)b->log2_upstream), &out->results, &out->heads);
        out->predicted = st == ABL_OK;
        if (st == ABL_OK)
            totals(out);
        return st;
    }
    abl_simulate_config pc;
    if (st == ABL_OK) {
        pc = *cfg;
        st = predict_pipeline(out, b, &pc);
    }
    abl_prediction p;
    memset(&p, 0, sizeof p);
    if (st == ABL_OK)
        st = abl_predict_run(&pc, &p);
    if (st == ABL_OK && (out->results = calloc((size_t)p.heads, sizeof *out->results)) == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK) {
        out->heads = p.heads;
        out->predicted = 1;
        for (int h = 0; h < p.heads; h++) {
            out->results[h].fwd_first_blind = -1; /* not predicted */
            out->results[h].first_blind = p.results[h].first_blind;
            out->results[h].row_zeros = p.results[h].row_zeros;
            out->results[h].matrix_zeros = p.results[h].matrix_zeros;
        }
        st = predict_only(cfg, b, out);
        totals(out);
    }
    abl_prediction_free(&p);
    return st;
}

void abl_backward_free(abl_backward *b)
{
    if (b == NULL)
        return;
    free(b->results);
    memset(b, 0, sizeof *b);
}
