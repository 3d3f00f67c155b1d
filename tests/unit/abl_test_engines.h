/* What the engine and predictor tests share: one case, a modelled preset's simulation (every row run through
 * the kernel model) and its zero-logit prediction of the same layer, for the caller to compare (test_engines.c,
 * test_engines_prefill.c, test_engines_trtllm.c); the refusal of fields a kernel does not model; the
 * predictor-vs-emulation comparison of one layer, forward or backward, that test_predict.c,
 * test_predict_sdpa.c, test_memeff_predict.c, test_ggml_bidir.c and test_ggml_fa_bidir.c run on their grids
 * (abl_test_agree; its forward comparison alone, abl_test_forward_agree, in test_engines*.c); the predictor
 * tests' random numbers and logit tables. Include after <cmocka.h> and "alibi_blind.h". */
#ifndef ABL_TEST_ENGINES_H
#define ABL_TEST_ENGINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl_test_schedule.h"

/* SPEC (a modelled preset, with fields) in DTYPE, HEADS heads at context N: sim and pred filled (the caller
 * frees both); a spec that does not parse, is not modelled, or a run that fails, fails the test. */
static inline void abl_test_engine_runs(const char *spec, const char *dtype, int heads, uint64_t n,
                                        abl_simulation *sim, abl_prediction *pred)
{
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, &model, &cfg.pipeline, &err), ABL_OK);
    assert_int_equal(cfg.pipeline.modelled, 1);
    cfg.heads = heads;
    cfg.context = n;
    assert_int_equal(abl_simulate_run(&cfg, sim), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, pred), ABL_OK);
}

/* Each of the COUNT specs parses but is refused by the check (a field the kernel does not model), with a
 * message. */
static inline void abl_test_engine_refuses(const char *const *specs, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        abl_pipeline p;
        char *err = NULL;
        assert_int_equal(abl_pipeline_parse_msg(specs[k], NULL, &p, &err), ABL_OK);
        assert_int_equal(abl_pipeline_check_msg(&p, &err), ABL_ERR_UNSUPPORTED);
        assert_non_null(err);
        free(err);
    }
}

/* One layer run through the emulation and the zero-logit predictor, and how strictly. */
typedef struct abl_test_layer {
    const char *spec;           /* the pipeline */
    const char *dtype;          /* the model dtype; NULL: no model, the spec's own formats */
    const char *slopes;         /* a schedule text (abl_test_schedule); NULL: press */
    int heads;                  /* 0: the slopes list's count */
    uint64_t n;                 /* the context */
    abl_attention attention;    /* bidirectional: the layer's middle-row total is compared too */
    /* NULL: the forward pass, abl_simulate_run against abl_predict_run on every head's first blind
     * distance, end/middle/matrix zeros and influence counts (abl_prediction_agrees). Otherwise the backward
     * at this config, abl_backward_run against abl_backward_predict: both of kind `kind`, every head's
     * abl_bwd_head fields and the layer totals */
    const abl_backward_config *backward;
    abl_backward_kind kind;
    /* backward, 1: only the fields the predictor answers for this kind (flash: the gradient's first zero and
     * its row and matrix counts; the forward's first zero and the gradient-only counts are not predicted) */
    int grad_only;
    /* 0: the layer must pass the pipeline check and both sides must run; 1 (random pipelines): a layer the
     * check refuses, or both sides refuse with the same status, is skipped */
    int lenient;
} abl_test_layer;

/* What the agreeing forward layers reached, summed by abl_test_agree (so that a grid's equality is not
 * equality of nothing): the emulation's matrix zero weights and matrix influence zeros. */
typedef struct abl_test_totals {
    uint64_t matrix_zeros, influence_zeros;
} abl_test_totals;

/* The failure lines' prefix: the layer's spec, dtype, slopes, H, N (and the loss scale 2^j). */
static inline void abl_test_layer_say(const abl_test_layer *L)
{
    print_error("%s %s %s H=%d N=%llu", L->spec, L->dtype != NULL ? L->dtype : "-",
                L->slopes != NULL ? L->slopes : "press", L->heads, (unsigned long long)L->n);
    if (L->backward != NULL)
        print_error(" 2^%ld", L->backward->log2_upstream);
}

/* CFG for the layer L. A spec that does not parse fails the test with its message; the pipeline check's
 * status is returned (a strict layer's refusal fails the test with its message). */
static inline abl_status abl_test_layer_config(abl_simulate_config *cfg, const abl_test_layer *L)
{
    abl_format model;
    if (L->dtype != NULL)
        assert_int_equal(abl_format_lookup(L->dtype, &model), ABL_OK);
    memset(cfg, 0, sizeof *cfg);
    char *err = NULL;
    abl_status st = abl_pipeline_parse_msg(L->spec, L->dtype != NULL ? &model : NULL, &cfg->pipeline, &err);
    if (st != ABL_OK)
        print_error("%s: %s\n", L->spec, err != NULL ? err : "?");
    assert_int_equal(st, ABL_OK);
    free(err);
    err = NULL;
    cfg->slopes = abl_test_schedule(L->slopes);
    cfg->heads = L->heads;
    cfg->context = L->n;
    cfg->attention = L->attention;
    st = abl_pipeline_check_msg(&cfg->pipeline, &err);
    if (st != ABL_OK && !L->lenient) {
        print_error("%s: %s\n", L->spec, err != NULL ? err : "?");
        fail();
    }
    free(err);
    return st;
}

/* The two sides' statuses: different ones (or, strict, any refusal) fail the test. 1 when both ran. */
static inline int abl_test_both_ran(const abl_test_layer *L, const char *what, abl_status s1, abl_status s2)
{
    if (s1 != s2 || (s1 != ABL_OK && !L->lenient)) {
        abl_test_layer_say(L);
        print_error(": %s %d, predictor %d\n", what, s1, s2);
        fail();
    }
    return s1 == ABL_OK;
}

static inline void abl_test_pred_head_say(const char *who, int h, int64_t first_blind, uint64_t row, uint64_t mid,
                                          uint64_t matrix, int64_t first_influence, uint64_t row_influence,
                                          uint64_t matrix_influence)
{
    print_error("  head %d %s: first 0 %lld, row %llu, mid %llu, matrix %llu; influence first 0 %lld, row %llu, "
                "matrix %llu\n", h + 1, who, (long long)first_blind, (unsigned long long)row,
                (unsigned long long)mid, (unsigned long long)matrix, (long long)first_influence,
                (unsigned long long)row_influence, (unsigned long long)matrix_influence);
}

/* Forward: on a disagreement every head of both sides is printed and the test fails. */
static inline void abl_test_forward_agree(const abl_test_layer *L, const abl_simulation *sim,
                                          const abl_prediction *pred)
{
    int ok = abl_prediction_agrees(sim, pred);
    if (L->attention == ABL_ATTENTION_BIDIRECTIONAL)
        ok = ok && sim->mid_row_zeros == pred->mid_row_zeros;
    if (ok)
        return;
    abl_test_layer_say(L);
    print_error(": %d heads emulated, %d predicted; middle rows %llu, %llu\n", sim->heads, pred->heads,
                (unsigned long long)sim->mid_row_zeros, (unsigned long long)pred->mid_row_zeros);
    for (int h = 0; h < sim->heads && h < pred->heads; h++) {
        const abl_sim_head *a = &sim->results[h];
        const abl_pred_head *b = &pred->results[h];
        abl_test_pred_head_say("emulation", h, a->first_blind, a->row_zeros, a->mid_row_zeros, a->matrix_zeros,
                               a->first_influence_zero, a->row_influence_zeros, a->matrix_influence_zeros);
        abl_test_pred_head_say("predictor", h, b->first_blind, b->row_zeros, b->mid_row_zeros, b->matrix_zeros,
                               b->first_influence_zero, b->row_influence_zeros, b->matrix_influence_zeros);
    }
    fail();
}

static inline int abl_test_bwd_same(const abl_bwd_head *a, const abl_bwd_head *b, int grad_only)
{
    return (grad_only || a->fwd_first_blind == b->fwd_first_blind) && a->first_blind == b->first_blind &&
           a->row_zeros == b->row_zeros && a->matrix_zeros == b->matrix_zeros &&
           (grad_only || (a->only_row == b->only_row && a->only_matrix == b->only_matrix));
}

static inline void abl_test_bwd_head_say(const char *who, int h, const abl_bwd_head *x)
{
    print_error("  head %d %s: P first 0 %lld, dS first 0 %lld, row %llu, matrix %llu, only row %llu, only matrix "
                "%llu\n", h + 1, who, (long long)x->fwd_first_blind, (long long)x->first_blind,
                (unsigned long long)x->row_zeros, (unsigned long long)x->matrix_zeros,
                (unsigned long long)x->only_row, (unsigned long long)x->only_matrix);
}

/* Backward: the kinds, every field of every head (the differing heads printed) and the totals. */
static inline void abl_test_backward_agree(const abl_test_layer *L, const abl_backward *e, const abl_backward *p)
{
    assert_int_equal(e->heads, p->heads);
    assert_int_equal(e->kind, L->kind);
    assert_int_equal(p->kind, L->kind);
    assert_true(p->predicted);
    int ok = 1;
    for (int h = 0; h < e->heads; h++)
        if (!abl_test_bwd_same(&e->results[h], &p->results[h], L->grad_only)) {
            if (ok) {
                abl_test_layer_say(L);
                print_error(":\n");
            }
            ok = 0;
            abl_test_bwd_head_say("emulation", h, &e->results[h]);
            abl_test_bwd_head_say("predictor", h, &p->results[h]);
        }
    assert_true(ok);
    assert_int_equal(e->row_zeros, p->row_zeros);
    assert_int_equal(e->matrix_zeros, p->matrix_zeros);
    if (L->grad_only)
        return;
    assert_int_equal(e->only_row, p->only_row);
    assert_int_equal(e->only_matrix, p->only_matrix);
}

/* The layer L through the emulation and the zero-logit predictor, which must agree (see abl_test_layer);
 * the forward emulation's zeros are added to *SUM (may be NULL). 1 when both ran and agree; a lenient
 * layer: -1 when the check refused it, 0 when both sides refused it alike. */
static inline int abl_test_agree(const abl_test_layer *L, abl_test_totals *sum)
{
    abl_simulate_config cfg;
    if (abl_test_layer_config(&cfg, L) != ABL_OK)
        return -1;
    abl_simulation sim;
    if (L->backward != NULL) {
        abl_backward e, p;
        abl_status s1 = abl_backward_run(&cfg, L->backward, &sim, &e);
        if (!abl_test_both_ran(L, "emulation", s1, abl_backward_predict(&cfg, L->backward, &p)))
            return 0;
        abl_test_backward_agree(L, &e, &p);
        abl_backward_free(&e);
        abl_backward_free(&p);
    } else {
        abl_prediction pred;
        abl_status s1 = abl_simulate_run(&cfg, &sim);
        if (!abl_test_both_ran(L, "simulate", s1, abl_predict_run(&cfg, &pred)))
            return 0;
        abl_test_forward_agree(L, &sim, &pred);
        if (sum != NULL) {
            sum->matrix_zeros += sim.matrix_zeros;
            sum->influence_zeros += sim.matrix_influence_zeros;
        }
        abl_prediction_free(&pred);
    }
    abl_simulation_free(&sim);
    return 1;
}

/* The backward predictor tests' short grid (test_memeff_predict.c, test_flash_backward_predict.c): PRESET with
 * each of the HDIMS head dims, each context of CTX, the three dtypes and loss scales 1, 2^16, 2^-10, the head
 * counts 1, 5, 8, 12, 16 in turn; each layer through abl_test_agree as backward kind KIND (GRAD_ONLY as in
 * abl_test_layer). */
static inline void abl_test_backward_grid(const char *preset, const int *hdims, size_t nhdims, const uint64_t *ctx,
                                          size_t nctx, abl_backward_kind kind, int grad_only)
{
    static const char *const dtypes[] = {"fp16", "bf16", "fp32"};
    static const long scales[] = {0, 16, -10};
    static const int heads[] = {1, 5, 8, 12, 16};
    for (size_t d = 0; d < 3; d++)
        for (size_t l = 0; l < 3; l++)
            for (size_t k = 0; k < nhdims; k++)
                for (size_t c = 0; c < nctx; c++) {
                    char spec[96];
                    snprintf(spec, sizeof spec, "%s,head-dim=%d", preset, hdims[k]);
                    abl_backward_config b;
                    memset(&b, 0, sizeof b);
                    b.log2_upstream = scales[l];
                    const abl_test_layer layer = {.spec = spec, .dtype = dtypes[d], .heads = heads[(d + l + k + c) % 5],
                                                  .n = ctx[c], .backward = &b, .kind = kind, .grad_only = grad_only};
                    abl_test_agree(&layer, NULL);
                }
}

/* Their long grid: N = 2048 and 3000, every dtype and loss scale, the head dims and the head counts 1 to 16 in
 * turn (the emulation is the cost: H N^2 / 2 weights each); in the sanitizer build (docs/ci.md) on one head. */
static inline void abl_test_backward_grid_long(const char *preset, const int *hdims, size_t nhdims,
                                               abl_backward_kind kind, int grad_only)
{
    static const char *const dtypes[] = {"fp16", "bf16", "fp32"};
    static const long scales[] = {0, 16, -10};
    static const int heads[] = {1, 5, 8, 12, 16};
    for (size_t d = 0; d < 3; d++)
        for (size_t l = 0; l < 3; l++) {
            char spec[96];
            snprintf(spec, sizeof spec, "%s,head-dim=%d", preset, hdims[(d + l) % nhdims]);
            abl_backward_config b;
            memset(&b, 0, sizeof b);
            b.log2_upstream = scales[l];
#ifdef ABL_TEST_SANITIZED
            int h = 1;
            (void)heads;
#else
            int h = heads[(d + 2 * l) % 5];
#endif
            const abl_test_layer layer = {.spec = spec, .dtype = dtypes[d], .heads = h, .n = (d + l) % 2 ? 2048 : 3000,
                                          .backward = &b, .kind = kind, .grad_only = grad_only};
            abl_test_agree(&layer, NULL);
        }
}

/* The predictor tests' reproducible random numbers: xorshift64 (13, 7, 17) on the caller's STATE (each test
 * keeps its own seed, so its grids stay what they were), reduced to 0..n-1. */
static inline unsigned abl_test_rnd(uint64_t *state, unsigned n)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (unsigned)(*state % n);
}

/* A random table of zero-score logits by position for the head predictors (from STATE): non-increasing steps
 * of random size (ties, small steps, cliffs) in the logit range the kernels see, or (WILD) with some steps up:
 * a predictor's fallback for non-monotone tables. */
static inline void abl_test_logit_table(uint64_t *state, float *T, uint64_t n, int wild)
{
    double v = 0.0;
    int mode = (int)abl_test_rnd(state, 4);
    for (uint64_t p = 0; p < n; p++) {
        T[p] = (float)v;
        unsigned r = abl_test_rnd(state, 100);
        double step = mode == 0 ? 0.7 : mode == 1 ? 0.01 : mode == 2 ? 3.0 : 0.2;
        if (r < 30)
            step = 0.0;             /* ties (a rounded bias) */
        else if (r < 33)
            step *= 40.0;           /* a cliff */
        else if (wild && r < 40)
            step = -step;           /* up again */
        v -= step * (0.5 + abl_test_rnd(state, 1000) / 1000.0);
        v = (double)(float)v;
    }
}

#endif
