/* What the backward threshold tests share (test_backward_flash.c, test_backward_memeff.c): their rows and
 * their key-for-key comparison of the threshold with the row emulation. Include after <cmocka.h>. */
#ifndef ABL_TEST_ROWS_H
#define ABL_TEST_ROWS_H

#include <math.h>
#include <stdint.h>

/* Row r of n keys: x[j] = -slope (n - 1 - j) plus uniform noise of width std (a 64-bit LCG on *seed); with
 * TIES, every third key a tie with its left neighbour or masked (-inf). */
static inline void abl_test_threshold_row(uint64_t *seed, float *x, uint64_t n, double slope, double std, int ties)
{
    for (uint64_t j = 0; j < n; j++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double g = (double)(*seed >> 11) * 0x1p-53 - 0.5;
        x[j] = (float)(-slope * (double)(n - 1 - j) + std * g);
        if (ties && j % 3 == 0 && j + 1 < n)
            x[j] = j % 2 ? x[j - 1] : -INFINITY;   /* ties and masked keys */
    }
}

/* The threshold's zero set (x <= xthr) is the row emulation's (ds == 0), key for key; the zeros and non-zeros
 * seen are added to the caller's counts (a test asserts it met both sides). */
static inline void abl_test_threshold_agrees(const float *x, const float *ds, uint64_t n, float xthr,
                                             uint64_t *zeros, uint64_t *nonzeros)
{
    for (uint64_t j = 0; j < n; j++) {
        assert_int_equal(x[j] <= xthr, ds[j] == 0.0f);
        *zeros += ds[j] == 0.0f;
        *nonzeros += ds[j] != 0.0f;
    }
}
#endif
