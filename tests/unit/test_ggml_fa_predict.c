/* The zero-logit predictor of softmax=ggml-flash (src/lib/kernel/abl_ggml_fa_predict.c) against the emulation
 * it must equal (abl_ggml.c's tiled_row / one_chunk / split_row run on every row asked: an independent
 * computation of the same kernel, key by key), per head: the first blind distance, the last row's zeros, the
 * matrix's, and the influence counts. Every kernel ggml picks and every one forced, the rows field (1, 7, 63,
 * 64, N), split-kv's thread counts, both exp variants, head counts that are and are not powers of two (m1's
 * slopes), contexts around the tile and the fp16 mask's exact range (2048), and the masked keys past 65520.
 * The real ggml's measurements are tests/kernels/test_ggml_calibration.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"

/* SPEC with H heads at N: simulate and --predict agree head by head (a failure names the case). */
static void agree(const char *spec, int heads, uint64_t n)
{
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, NULL, &cfg.pipeline, &err), ABL_OK);
    cfg.heads = heads;
    cfg.context = n;
    abl_simulation sim;
    abl_prediction pred;
    assert_int_equal(abl_simulate_run(&cfg, &sim), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
    int ok = abl_prediction_agrees(&sim, &pred);
    for (int h = 0; !ok && h < sim.heads; h++) {
        const abl_sim_head *a = &sim.results[h];
        const abl_pred_head *b = &pred.results[h];
        if (a->first_blind != b->first_blind || a->row_zeros != b->row_zeros || a->matrix_zeros != b->matrix_zeros)
            print_message("%s H %d N %llu head %d: simulate %lld/%llu/%llu, predict %lld/%llu/%llu\n", spec, heads,
                          (unsigned long long)n, h + 1, (long long)a->first_blind, (unsigned long long)a->row_zeros,
                          (unsigned long long)a->matrix_zeros, (long long)b->first_blind,
                          (unsigned long long)b->row_zeros, (unsigned long long)b->matrix_zeros);
    }
    assert_true(ok);
    abl_simulation_free(&sim);
    abl_prediction_free(&pred);
}

/* The kernel ggml picks for the rows asked (tiled from 64 rows, split-kv for one row of >= 512 keys,
 * one-chunk otherwise). simulate's one-chunk rows rescale every live F16 column at every key (minutes for
 * 32 heads of 63 rows at N = 2100): the longest contexts there with fewer heads. */
static void test_auto(void **state)
{
    (void)state;
    const int H[] = {1, 5, 8, 12, 16, 32};
    const uint64_t N[] = {1, 63, 64, 65, 127, 600, 2048, 2100};
    const char *rows[] = {"", ",rows=1", ",rows=64", ",rows=7", ",rows=63"};
    char spec[128];
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (size_t h = 0; h < sizeof H / sizeof H[0]; h++)
            for (size_t k = 0; k < sizeof N / sizeof N[0]; k++) {
                if (r >= 3 && N[k] > 600 && H[h] > 5)
                    continue;
#ifdef ABL_TEST_SANITIZED
                /* ASan+UBSan build (docs/ci.md): every rows field at every context, with one head count in
                 * turn (each head count still meets every rows field; one head for one-chunk's 7 and 63 rows
                 * past 600, the costliest); the whole grid runs in the other builds. */
                if ((r >= 3 && N[k] > 600 ? 0 : (r + k) % 6) != h)
                    continue;
#endif
                snprintf(spec, sizeof spec, "llamacpp-cpu-fa%s", rows[r]);
                agree(spec, H[h], N[k]);
            }
}

/* Each kernel forced whatever the rows, split-kv with 1 to 4 threads, the scalar exp. The one-row kernels on
 * every row cost simulate N^2 rescales a row: smaller contexts there. */
static void test_forced(void **state)
{
    (void)state;
    const char *specs[] = {
        "llamacpp-cpu-fa,fa-kernel=tiled,rows=7",   "llamacpp-cpu-fa,fa-kernel=tiled,rows=1",
        "llamacpp-cpu-fa,fa-kernel=one-chunk,rows=64", "llamacpp-cpu-fa,fa-kernel=split-kv,rows=7",
        "llamacpp-cpu-fa,rows=1,threads=2",         "llamacpp-cpu-fa,rows=1,threads=3",
        "llamacpp-cpu-fa,rows=1,threads=4",         "llamacpp-cpu-fa,exp=ggml-scalar",
        "llamacpp-cpu-fa,exp=ggml-scalar,rows=1,threads=4", "llamacpp-cpu-fa,exp=ggml-scalar,rows=7",
    };
    const char *every_row[] = {"llamacpp-cpu-fa,fa-kernel=one-chunk", "llamacpp-cpu-fa,fa-kernel=split-kv,threads=3",
                               "llamacpp-cpu-fa,fa-kernel=split-kv,threads=2"};
    const int H[] = {1, 5, 12, 32};
    const uint64_t N[] = {65, 600, 2100}, Nsmall[] = {1, 63, 65, 300};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (size_t h = 0; h < sizeof H / sizeof H[0]; h++)
            for (size_t k = 0; k < sizeof N / sizeof N[0]; k++)
#ifdef ABL_TEST_SANITIZED
                /* ASan+UBSan build (docs/ci.md): every kernel, thread count and exp at every context, one head
                 * count in turn; the whole grid runs in the other builds. */
                if ((s + k) % 4 == h)
#endif
                if (!(s == 2 && N[k] > 600 && H[h] > 5))   /* one-chunk on 64 rows: as test_auto */
                    agree(specs[s], H[h], N[k]);
    for (size_t s = 0; s < sizeof every_row / sizeof every_row[0]; s++)
        for (size_t h = 0; h < 3; h++)
            for (size_t k = 0; k < sizeof Nsmall / sizeof Nsmall[0]; k++)
#ifdef ABL_TEST_SANITIZED
                /* ASan+UBSan build: each one-row kernel at every small context, one head count in turn */
                if ((s + k) % 3 == h)
#endif
                agree(every_row[s], H[h], Nsmall[k]);
}

/* Longer contexts: the fp16 mask's spacing 2, 4 past 2048 and 4096, one row and a few. */
static void test_long(void **state)
{
    (void)state;
    agree("llamacpp-cpu-fa,rows=1", 8, 5000);
    agree("llamacpp-cpu-fa,rows=1,threads=4", 12, 5000);
    agree("llamacpp-cpu-fa,rows=3", 5, 5000);
    agree("llamacpp-cpu-fa,rows=200", 16, 5000);
    agree("llamacpp-cpu-fa,rows=64,fa-kernel=tiled", 32, 5000);
}

/* Past 65520 the fp16 mask is -inf: those keys are skipped (and zero); a small slope keeps keys alive that
 * far (slopes: one head at 2^-12), every kernel. */
static void test_masked_tail(void **state)
{
    (void)state;
#ifdef ABL_TEST_SANITIZED
    /* ASan+UBSan build (docs/ci.md): the one-chunk kernel on one row (simulate's one-chunk row rescales every
     * live column at every key: 3 rows of 65600 were half the test's time); rows=3 in the other builds. */
    const char *specs[] = {"llamacpp-cpu-fa,rows=1", "llamacpp-cpu-fa,rows=1,threads=3",
                           "llamacpp-cpu-fa,rows=1,fa-kernel=one-chunk", "llamacpp-cpu-fa,rows=2,fa-kernel=tiled"};
#else
    const char *specs[] = {"llamacpp-cpu-fa,rows=1", "llamacpp-cpu-fa,rows=1,threads=3", "llamacpp-cpu-fa,rows=3",
                           "llamacpp-cpu-fa,rows=2,fa-kernel=tiled"};
#endif
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        abl_simulate_config cfg;
        memset(&cfg, 0, sizeof cfg);
        assert_int_equal(abl_pipeline_parse_msg(specs[s], NULL, &cfg.pipeline, NULL), ABL_OK);
        abl_schedule_spec sched;
        assert_int_equal(abl_schedule_spec_parse("slopes:0.000244140625", &sched, NULL), ABL_OK);
        cfg.slopes = &sched;
        cfg.heads = 1;
        cfg.context = 65600;
        abl_simulation sim;
        abl_prediction pred;
        assert_int_equal(abl_simulate_run(&cfg, &sim), ABL_OK);
        assert_int_equal(abl_predict_run(&cfg, &pred), ABL_OK);
        assert_true(sim.results[0].row_zeros >= 65600 - 65520);   /* the masked keys at least */
        assert_true(abl_prediction_agrees(&sim, &pred));
        abl_simulation_free(&sim);
        abl_prediction_free(&pred);
        abl_schedule_spec_free(&sched);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto),
        cmocka_unit_test(test_forced),
        cmocka_unit_test(test_long),
        cmocka_unit_test(test_masked_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
