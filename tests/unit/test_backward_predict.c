/* Unit tests: the eager kinds' zero-logit gradient predictor (abl_backward_predict, upcast and native)
 * equals the backward emulation (abl_backward_run, which tests/torch/validate_gradient.py checks against
 * PyTorch autograd) on every count it reports, the gradient-only counts included: with an upcast kind and
 * |dP - D| x loss scale < 1 the gradient loses keys whose weight is not 0, and the prediction must count
 * them (before, it printed 0 there). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <mpfr.h>
#include "alibi_blind.h"
#include "abl/kernel/backward.h"

static void agree(const char *spec, const char *dtype, int heads, uint64_t n, long j)
{
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, &model, &cfg.pipeline, &err), ABL_OK);
    free(err);
    cfg.heads = heads;
    cfg.context = n;
    abl_backward_config b;
    memset(&b, 0, sizeof b);
    b.log2_upstream = j;
    abl_simulation sim;
    abl_backward e, p;
    assert_int_equal(abl_backward_run(&cfg, &b, &sim, &e), ABL_OK);
    assert_int_equal(abl_backward_predict(&cfg, &b, &p), ABL_OK);
    assert_int_equal(e.heads, p.heads);
    for (int h = 0; h < e.heads; h++) {
        const abl_bwd_head *x = &e.results[h], *y = &p.results[h];
        if (x->first_blind != y->first_blind || x->row_zeros != y->row_zeros || x->matrix_zeros != y->matrix_zeros ||
            x->only_row != y->only_row || x->only_matrix != y->only_matrix)
            print_error("%s %s N=%llu 2^%ld head %d: emulation (%lld %llu %llu %llu %llu) predictor (%lld %llu %llu "
                        "%llu %llu)\n", spec, dtype, (unsigned long long)n, j, h + 1, (long long)x->first_blind,
                        (unsigned long long)x->row_zeros, (unsigned long long)x->matrix_zeros,
                        (unsigned long long)x->only_row, (unsigned long long)x->only_matrix, (long long)y->first_blind,
                        (unsigned long long)y->row_zeros, (unsigned long long)y->matrix_zeros,
                        (unsigned long long)y->only_row, (unsigned long long)y->only_matrix);
        assert_int_equal(x->first_blind, y->first_blind);
        assert_int_equal(x->row_zeros, y->row_zeros);
        assert_int_equal(x->matrix_zeros, y->matrix_zeros);
        assert_int_equal(x->only_row, y->only_row);
        assert_int_equal(x->only_matrix, y->only_matrix);
    }
    assert_int_equal(e.only_row, p.only_row);
    assert_int_equal(e.only_matrix, p.only_matrix);
    abl_simulation_free(&sim);
    abl_backward_free(&e);
    abl_backward_free(&p);
}

static void test_eager_kinds(void **state)
{
    (void)state;
    static const char *const upcast[] = {"eager", "bloom-hf", "mpt-hf"};
    static const char *const dtypes[] = {"bf16", "fp16", "fp32"};
    static const long scales[] = {0, 16, -10, -3, 5, -1};
    for (size_t p = 0; p < 3; p++)
        for (size_t d = 0; d < 3; d++)
            for (size_t l = 0; l < 6; l++)
                agree(upcast[p], dtypes[d], 1 + (int)((p + d + l) % 8), (p + l) % 2 ? 300 : 513, scales[l]);
    for (size_t d = 0; d < 2; d++)   /* native: 2^j >= 1 only (its predictor refuses below) */
        for (long j = 0; j <= 16; j += 8)
            agree(d ? "mpt" : "falcon-hf-eager", dtypes[d], 6, 400, j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eager_kinds),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mpfr_free_cache();
    return rc;
}
