/* Unit tests: abl_fastgauss_scores (inlined log/sin/cos with a certified binary32 decision) gives
 * exactly the scores (float)(S·z) of the reference generator abl_sim_gauss_pair (host libm), on
 * 2^22 draws over random seeds, heads, rows and standard deviations, and on rows of every length
 * parity. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/abl_fastgauss.h"

static void check_row(uint64_t seed, uint64_t head, uint64_t i, double std, uint64_t count, float *got,
                      uint64_t *slow)
{
    abl_fastgauss_scores(seed, head, i, std, 0, count, got, slow);
    for (uint64_t j = 0; j < count; j++) {
        double z0, z1;
        abl_sim_gauss_pair(seed, head, i, j / 2, &z0, &z1);
        float want = (float)(std * (j % 2 ? z1 : z0));
        if (memcmp(&got[j], &want, sizeof want) != 0)
            fail_msg("seed %llu head %llu row %llu key %llu std %a: %a vs %a", (unsigned long long)seed,
                     (unsigned long long)head, (unsigned long long)i, (unsigned long long)j, std, (double)got[j],
                     (double)want);
    }
}

static void test_random_draws(void **state)
{
    (void)state;
    const double stds[] = {1.0, 2.0, 0.5, 3.0, 1000.0, 0.001, 0.1, 7.25, 1e-30, 123.456};
    float *row = malloc(8192 * sizeof *row);
    assert_non_null(row);
    uint64_t x = 88172645463325252u, draws = 0, slow = 0;
    while (draws < (UINT64_C(1) << 22)) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t seed = draws % 3 == 0 ? x : draws % 7;
        uint64_t head = 1 + (x >> 20) % 65536;
        uint64_t i = (x >> 5) % (UINT64_C(1) << 24);
        uint64_t count = 1 + (x >> 40) % 4096;
        check_row(seed, head, i, stds[(x >> 56) % 10], count, row, &slow);
        /* a row started at an even key gives the same scores from there on */
        uint64_t from = ((x >> 30) % count) & ~UINT64_C(1);
        abl_fastgauss_scores(seed, head, i, stds[(x >> 56) % 10], from, count, row + 4096, NULL);
        if (memcmp(row + 4096 + from, row + from, (count - from) * sizeof *row) != 0)
            fail_msg("row started at key %llu differs", (unsigned long long)from);
        draws += count;
    }
    printf("draws %llu, pairs recomputed by the reference: %llu\n", (unsigned long long)draws,
           (unsigned long long)slow);
    free(row);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
