/* The bidirectional zero-logit predictor of ggml's flash attention (llamacpp-cpu-fa on an encoder,
 * abl_ggml_fa_bidir.c) against the emulation it must equal (abl_simulate_run: every row of the N x N matrix
 * run key by key through abl_ggml.c's tiled, one-chunk or split-kv kernel): first blind distance of the end
 * row, end/middle/matrix weight zeros and the influence counts, per head. N below one tile (the one-chunk
 * kernel ggml picks under 64 rows), at and around the 64-key tile, past the fp16 mask's exact range (2048),
 * not a multiple of the tile; both exp builds; the one-row kernels asked for explicitly (split-kv on several
 * threads: its chunks depend on them). ggml computes in fp32 whatever the model dtype, so no dtype varies.
 * The emulation's own exactness is checked against a real ggml build (tests/kernels/test_ggml_calibration.c,
 * the fa_tiled_bidir case). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#include "abl_test_engines.h"

/* One encoder layer, emulation against predictor (abl_test_agree: every head's counts and the middle rows'
 * total); the emulation's matrix zeros added to *ZEROS. */
static void run_case(const char *spec, int heads, uint64_t n, uint64_t *zeros)
{
    const abl_test_layer layer = {.spec = spec, .heads = heads, .n = n, .attention = ABL_ATTENTION_BIDIRECTIONAL};
    abl_test_totals sum = {0, 0};
    abl_test_agree(&layer, &sum);
    *zeros += sum.matrix_zeros;
}

/* The tiled kernel (ggml's choice from 64 rows on) and one-chunk below 64, both exp builds. */
static void test_tiled_agrees(void **state)
{
    (void)state;
    const char *specs[] = {"llamacpp-cpu-fa", "llamacpp-cpu-fa,exp=ggml-scalar"};
    const int heads[] = {1, 5, 8, 12, 16};
    const uint64_t lens[] = {1, 63, 64, 65, 130, 1000, 2049, 3000};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        uint64_t zeros = 0;
        for (size_t a = 0; a < sizeof heads / sizeof heads[0]; a++)
            for (size_t b = 0; b < sizeof lens / sizeof lens[0]; b++)
#ifdef ABL_TEST_SANITIZED
                /* ASan+UBSan build (docs/ci.md): both exp builds at every length to 2049 (past the fp16 mask's
                 * exact range, not a multiple of the tile: 3000 adds no path), one head count in turn (5 at
                 * 2049); the other builds run every head count (two at 2049 and 3000). */
                if (lens[b] < 2048 ? (k + b) % 5 == a : heads[a] == 5 && lens[b] == 2049)
#else
                if (lens[b] < 2048 || heads[a] == 5 || heads[a] == 12)   /* the long ones: two head counts */
#endif
                    run_case(specs[k], heads[a], lens[b], &zeros);
        /* the shapes reach zero weights, so equality is not equality of nothing */
        assert_true(zeros > 0);
    }
}

/* The one-row kernels asked for: one-chunk at every length, split-kv on 1, 3 and 4 threads. */
static void test_one_row_agrees(void **state)
{
    (void)state;
    const char *specs[] = {"llamacpp-cpu-fa,fa-kernel=one-chunk", "llamacpp-cpu-fa,fa-kernel=split-kv,threads=1",
                           "llamacpp-cpu-fa,fa-kernel=split-kv,threads=3", "llamacpp-cpu-fa,fa-kernel=split-kv,threads=4"};
    const int shapes[][2] = {{16, 130}, {12, 129}, {8, 300}, {5, 600}, {1, 1}};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        uint64_t zeros = 0;
        for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++)
#ifdef ABL_TEST_SANITIZED
            /* ASan+UBSan build (docs/ci.md): every kernel and thread count on 130 or 129 in turn, 300 and
             * 1 x 1, and 600 on split-kv's 4 threads only; the other builds run every shape on each. */
            if (q == 4 || q == 2 || q == k % 2 || (k == 3 && q == 3))
#endif
            run_case(specs[k], shapes[q][0], (uint64_t)shapes[q][1], &zeros);
        assert_true(zeros > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiled_agrees),
        cmocka_unit_test(test_one_row_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
