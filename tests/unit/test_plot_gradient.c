/* Unit tests of plot gradient's chart model (abl/compose/plot_gradient.h; issue 20). The expected
 * distances are the closed form of spec §15 computed with mpmath (60 digits), not by the library: zero
 * logits, last row of N = 2048 keys, fp16 (p = 11, emin = -14), the upcast backward of `eager`:
 * the weight is 0 from d = ceil((25 ln 2 - ln S_N) / m) and dS = P 2^-8 from d = ceil((17 ln 2 - ln S_N) / m),
 * S_N = (1 - e^(-m N)) / (1 - e^(-m)):
 *   m = 1/2:     32.7919 -> 33 and 21.7015 -> 22;
 *   m = 1/4:     63.2800 -> 64 and 41.0992 -> 42;
 *   m = 2^-12:   40728.8 and 18015.7: neither inside N (drawn in the band above N).
 * Every quotient is at least 0.07 tokens (0.018 nats) from an integer, far beyond fp32's rounding of
 * the weight, and m d is exact in fp16 for these slopes, so the kernel's distances are the closed form's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#include "abl/compose/plot_gradient.h"

static void config(abl_plot_gradient_config *c, abl_schedule_spec *spec)
{
    char *msg = NULL;
    assert_int_equal(abl_schedule_spec_parse("slopes:0.5,0.25,0.000244140625", spec, &msg), ABL_OK);
    free(msg);
    abl_plot_gradient_config_default(c);
    assert_int_equal(abl_format_lookup("fp16", &c->model_dtype), ABL_OK);
    c->slopes = spec;
    c->heads = 0;
    c->context = 2048;
    c->log2_upstream = -8;
}

/* The first zero distances of c's three heads (-1: none inside N): the gradient's first zero dS (GRAD) and the
 * forward's first zero weight (FWD; NULL: not checked). */
static void expect_distances(const abl_plot_gradient_config *c, const int64_t *want_fwd, const int64_t *want_grad)
{
    int heads = 0;
    int64_t *fwd = NULL, *grad = NULL;
    char *msg = NULL;
    assert_int_equal(abl_plot_gradient_distances(c, &heads, &fwd, &grad, &msg), ABL_OK);
    assert_int_equal(heads, 3);
    for (int h = 0; h < 3; h++) {
        if (want_fwd != NULL)
            assert_int_equal(fwd[h], want_fwd[h]);
        assert_int_equal(grad[h], want_grad[h]);
    }
    free(fwd);
    free(grad);
    free(msg);
}

/* c's pipeline: TEXT, parsed into *PIPE (the caller frees it). */
static void use_pipeline(abl_plot_gradient_config *c, abl_pipeline_spec *pipe, const char *text)
{
    char *msg = NULL;
    assert_int_equal(abl_pipeline_spec_parse(text, pipe, &msg), ABL_OK);
    free(msg);
    c->pipeline = pipe;
}

static void test_distances(void **state)
{
    (void)state;
    abl_plot_gradient_config c;
    abl_schedule_spec spec;
    config(&c, &spec);
    static const int64_t fwd[] = {33, 64, -1}, grad[] = {22, 42, -1};
    expect_distances(&c, fwd, grad);
    abl_schedule_spec_free(&spec);
}

static void test_chart(void **state)
{
    (void)state;
    abl_plot_gradient_config c;
    abl_schedule_spec spec;
    config(&c, &spec);
    abl_plot p;
    char *msg = NULL;
    assert_int_equal(abl_plot_gradient(&c, &p, &msg), ABL_OK);
    assert_int_equal(p.rows * p.cols, 1);
    assert_true(p.legend);
    const abl_plot_panel *pn = &p.panels[0];
    assert_int_equal(pn->nseries, 2);
    assert_string_equal(pn->series[0].label, "forward: first zero weight P");
    assert_string_equal(pn->series[1].label, "gradient: first zero dS (2^-8)");
    assert_int_equal(pn->series[0].n, 3);
    assert_true(pn->series[0].y[0] == 33.0 && pn->series[1].y[0] == 22.0);
    assert_true(pn->series[0].y[1] == 64.0 && pn->series[1].y[1] == 42.0);
    /* the head without a zero inside N sits in the band above N */
    assert_int_equal(pn->nbands, 1);
    assert_true(pn->series[0].y[2] > pn->bands[0].y0 && pn->series[0].y[2] < pn->bands[0].y1);
    assert_true(pn->bands[0].y0 == 2048.0);
    assert_true(pn->ylog);
    abl_plot_free(&p);
    free(msg);
    abl_schedule_spec_free(&spec);
}

/* The memory-efficient SDPA backward (sdpa-efficient, modelled from source): dS = fp16(fp32(P 2^-8) / 8),
 * head_dim 64, with P = fp16(e^(-m d) / S_N) recomputed from the log-sum-exp (one rounding of the normalised
 * weight), is 0 iff P <= 2^-14, i.e. e^(-m d) / S_N <= 2^-14 (1 + 2^-11) (the tie goes to the even 2^-14):
 * d >= (14 ln 2 - ln(1 + 2^-11) - ln S_N) / m, with mpmath (60 digits): m = 1/2: 17.5416 -> 18; m = 1/4:
 * 32.7795 -> 33; m = 2^-12: 9496.3, not inside N. The kernel's lse (fp32 sums and logs) is within 2^-20
 * nats of ln S_N, far from moving these. The caption says the kernel is modelled, not measured. */
static void test_memeff(void **state)
{
    (void)state;
    abl_plot_gradient_config c;
    abl_schedule_spec spec;
    config(&c, &spec);
    abl_pipeline_spec pipe;
    use_pipeline(&c, &pipe, "sdpa-efficient");
    static const int64_t grad[] = {18, 33, -1};
    expect_distances(&c, NULL, grad);
    char *msg = NULL;
    abl_plot p;
    assert_int_equal(abl_plot_gradient(&c, &p, &msg), ABL_OK);
    assert_non_null(p.caption);
    assert_non_null(strstr(p.caption, "modelled from source, not measured"));
    abl_plot_free(&p);
    free(msg);
    abl_pipeline_spec_free(&pipe);
    abl_schedule_spec_free(&spec);
}

/* A kernel whose backward is not modelled: refused with a message, no chart. */
static void test_refusals(void **state)
{
    (void)state;
    abl_plot_gradient_config c;
    abl_schedule_spec spec;
    config(&c, &spec);
    abl_pipeline_spec pipe;
    use_pipeline(&c, &pipe, "sdpa-cudnn");   /* closed source */
    char *msg = NULL;
    abl_plot p;
    assert_int_equal(abl_plot_gradient(&c, &p, &msg), ABL_ERR_UNSUPPORTED);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "softmax=sdpa-cudnn"));
    assert_int_equal(p.panels == NULL, 1);
    free(msg);
    abl_pipeline_spec_free(&pipe);
    c.pipeline = NULL;
    c.context = 1;
    msg = NULL;
    assert_int_equal(abl_plot_gradient(&c, &p, &msg), ABL_ERR_INVALID_ARGUMENT);
    free(msg);
    abl_schedule_spec_free(&spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distances),
        cmocka_unit_test(test_chart),
        cmocka_unit_test(test_memeff),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
