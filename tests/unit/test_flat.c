/*
 * Unit tests of the flat entry points for bindings (include/abl/compose/flat.h): every function's success
 * and refusal paths, the result handle's ownership (run under ASan with leak detection in CI), captured
 * scores read from the caller's memory. Expected values: the paper's Table 1 (16 heads, 2048 tokens in
 * bf16: delta_1 = 124, 9 heads blind), bf16's smallest subnormal 2^-133 (ln = -133 ln 2 = -92.1885750145
 * to 10 decimals), zero scores giving the zero-logit layer (the same counts as no scores at all). The full
 * documents are compared with the CLI's by tests/python/test_equal_cli.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "alibi_blind.h"

static void assert_ok_has(abl_flat_result *r, const char *needle)
{
    assert_non_null(r);
    if (abl_flat_status(r) != ABL_OK)
        fail_msg("status %d: %s", abl_flat_status(r), abl_flat_message(r));
    assert_null(abl_flat_message(r));
    assert_non_null(abl_flat_json(r));
    if (strstr(abl_flat_json(r), needle) == NULL)
        fail_msg("'%s' not in %.200s", needle, abl_flat_json(r));
    abl_flat_free(r);
}

static void assert_refused(abl_flat_result *r, const char *prefix)
{
    assert_non_null(r);
    assert_int_not_equal(abl_flat_status(r), ABL_OK);
    assert_null(abl_flat_json(r));
    const char *m = abl_flat_message(r);
    assert_non_null(m);
    assert_null(strchr(m, '\n'));
    if (strncmp(m, prefix, strlen(prefix)) != 0)
        fail_msg("message '%s' does not start with '%s'", m, prefix);
    abl_flat_free(r);
}

static void test_thresholds(void **state)
{
    (void)state;
    const char *bf16[] = {"bf16"}, *bad[] = {"bf17"};
    assert_ok_has(abl_flat_thresholds(bf16, 1, 10), "\"tau_decimal\": \"-92.1885750145\"");
    assert_ok_has(abl_flat_thresholds(NULL, 0, 4), "\"fp8-e4m3fn\"");
    assert_refused(abl_flat_thresholds(bad, 1, 10), "dtype: unknown floating-point format 'bf17'");
    assert_refused(abl_flat_thresholds(bf16, 1, 1001), "digits: ");
    abl_flat_free(NULL);
    assert_int_equal(abl_flat_status(NULL), ABL_ERR_NO_MEMORY);
}

static void test_analyze(void **state)
{
    (void)state;
    abl_flat_analyze_args a;
    memset(&a, 0, sizeof a);
    a.heads = 16;
    a.ctx = 2048;
    assert_ok_has(abl_flat_analyze(&a, NULL), "\"delta\": 124,");
    assert_ok_has(abl_flat_analyze(&a, NULL), "\"blind_heads\": 9,");
    const char *two[] = {"bf16", "fp16"};
    a.dtypes = two;
    a.ndtypes = 2;
    a.dtype_list = 1;
    assert_ok_has(abl_flat_analyze(&a, NULL), "\"dtypes\": [\"bf16\", \"fp16\"]");
    a.ndtypes = 0;
    a.dtype_list = 0;
    a.clamp = "1";
    assert_refused(abl_flat_analyze(&a, NULL), "clamp: ");
    a.clamp = NULL;
    a.slopes = "bogus:1";
    assert_refused(abl_flat_analyze(&a, NULL), "slopes: 'bogus:1': ");
    a.slopes = NULL;
    a.ctx = 0;
    assert_refused(abl_flat_analyze(&a, NULL), "ctx: ");
    /* over a tiny budget: refused unless forced */
    abl_flat_work w = {1e-12, 0, NULL, NULL};
    a.ctx = 2048;
    a.level = "weight";
    assert_refused(abl_flat_analyze(&a, &w), "analyze: ");
    w.force = 1;
    assert_ok_has(abl_flat_analyze(&a, &w), "\"level\": \"weight\"");
}

static void count_progress(void *ctx, uint64_t done, uint64_t total)
{
    uint64_t *last = ctx;
    assert_true(done <= total);
    last[0] = done;
    last[1] = total;
}

static void test_simulate_scores(void **state)
{
    (void)state;
    enum { H = 2, N = 300 };
    float *zero = calloc((size_t)H * N * N, sizeof *zero);
    assert_non_null(zero);
    abl_flat_scores sc = {zero, 4, 3, H, N};
    abl_flat_simulate_args a;
    memset(&a, 0, sizeof a);
    a.logits = &sc;
    uint64_t last[2] = {0, 0};
    abl_flat_work w = {0, 0, count_progress, last};
    abl_flat_result *r = abl_flat_simulate(&a, &w);
    assert_int_equal(abl_flat_status(r), ABL_OK);
    /* zero scores are the zero-logit layer: the same zeros as simulate without scores */
    const char *z = strstr(abl_flat_json(r), "\"matrix_zeros\": ");
    assert_non_null(z);
    abl_flat_simulate_args b;
    memset(&b, 0, sizeof b);
    b.heads = H;
    b.ctx = N;
    abl_flat_result *q = abl_flat_simulate(&b, NULL);
    assert_int_equal(abl_flat_status(q), ABL_OK);
    const char *zq = strstr(abl_flat_json(q), "\"matrix_zeros\": ");
    assert_non_null(zq);
    assert_int_equal(strtoull(z + 16, NULL, 10), strtoull(zq + 16, NULL, 10));
    assert_true(last[1] == (uint64_t)H * N * (N + 1) / 2 && last[0] == last[1]);
    abl_flat_free(r);
    abl_flat_free(q);
    zero[(size_t)N * 5 + 2] = 1.0f / 0.0f;   /* head 1, query 5, key 2: causal, not finite */
    assert_refused(abl_flat_simulate(&a, NULL), "logits: ");
    sc.itemsize = 3;
    assert_refused(abl_flat_simulate(&a, NULL), "logits: ");
    free(zero);
    a.logits = NULL;
    a.heads = 4;
    a.ctx = 100;
    a.pipeline = "nope";
    assert_refused(abl_flat_simulate(&a, NULL), "pipeline: ");
}

static void test_models_tables(void **state)
{
    (void)state;
    assert_ok_has(abl_flat_models("bloom-7b1"), "\"bloom-7b1\"");
    assert_ok_has(abl_flat_models(NULL), "\"mpt-7b\"");
    assert_refused(abl_flat_models("bloom-7b2"), "unknown model 'bloom-7b2'");
    abl_flat_table_args t;
    memset(&t, 0, sizeof t);
    t.table = 8;
    t.digits = -1;
    assert_ok_has(abl_flat_table(&t, NULL), "\"");
    t.table = 3;
    assert_refused(abl_flat_table(&t, NULL), "table: 3 ");
    t.table = 8;
    t.rn = 1;
    assert_refused(abl_flat_table(&t, NULL), "rn applies to table 4 only");
    abl_flat_result *r = abl_flat_reproduce(NULL, 1);
    assert_non_null(abl_flat_json(r));
    abl_flat_free(r);
}

static void test_model_paths(void **state)
{
    (void)state;
    abl_flat_model_args m;
    memset(&m, 0, sizeof m);
    m.model = "bloom-560m";
    m.ctx = 2048;
    assert_ok_has(abl_flat_check(&m, 16, NULL, NULL), "\"model\": \"bloom-560m\"");
    abl_flat_result *r = abl_flat_check(&m, 0, "0", NULL);   /* bloom-560m goes blind at 2048: the gate fails */
    assert_int_equal(abl_flat_status(r), ABL_ERR_MISMATCH);
    assert_non_null(abl_flat_json(r));
    assert_non_null(abl_flat_message(r));
    abl_flat_free(r);
    assert_ok_has(abl_flat_analyze_kernel(&m, NULL, 0, 0, NULL, NULL), "\"code_path\"");
    m.model = "bloom-999";
    assert_refused(abl_flat_check(&m, 0, NULL, NULL), "model: unknown model");
    m.model = NULL;
    assert_refused(abl_flat_check(&m, 0, NULL, NULL), "check: ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thresholds), cmocka_unit_test(test_analyze), cmocka_unit_test(test_simulate_scores),
        cmocka_unit_test(test_models_tables), cmocka_unit_test(test_model_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
