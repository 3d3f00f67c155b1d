/* The library has no shared mutable state (issue 17 item 5): the published-table parser, an analysis,
 * a simulation (itself on 2 threads) and verify's experiments run from 4 threads at once give what one
 * thread alone gives. The ThreadSanitizer build
 * (-DABL_TSAN=ON, .ci/run) runs this test and reports any data race; a plain build checks the results.
 * The single-threaded run is anchored to the paper (Table 1: delta_1 = 124, delta_16 = 22358 for 16 press
 * heads in bf16) and to files whose repeated line is known by construction. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>
#include "alibi_blind.h"

/* The formatters return malloc'd text: copy it into the test's array and free it ("" when out of memory,
 * which the comparison that follows then reports). */
static void put_text(char *buf, size_t len, char *s)
{
    snprintf(buf, len, "%s", s ? s : "");
    free(s);
}

#define THREADS 4
#define ROUNDS 3
#define SIM_HEADS 8
#define SIM_CONTEXT 300

/* Everything one worker computes, compared field by field with the single-threaded run. */
typedef struct {
    abl_status st;              /* the first failure, ABL_OK when none */
    size_t rows[ABL_PUB_COUNT], cols[ABL_PUB_COUNT];
    unsigned long cells_hash[ABL_PUB_COUNT];
    char *dup_err;              /* the message for a file with a repeated key (malloc'd) */
    char delta[16][32];         /* analysis: each head's delta */
    char row_fraction[64];
    abl_sim_head sim[SIM_HEADS];
    uint64_t sim_row_zeros, sim_matrix_zeros;
    abl_verify_result verify[2];  /* fp8-e5m2 (exhaustive), fp32 (bisection) */
} outcome;

static unsigned long hash_text(unsigned long h, const char *s)
{
    for (; *s != '\0'; s++)
        h = h * 131 + (unsigned char)*s;
    return h * 131 + 1; /* a cell boundary */
}

/* A table8 file (name, d1..d9) whose row 4 (line 5) repeats row 2's key (line 3), between distinct
 * ones: sorting by the wrong key, or by another thread's table, names other lines. */
static const char dup_table8[] = "name,d1,d2,d3,d4,d5,d6,d7,d8,d9\n"
                                 "zeta,1,2,3,4,5,6,7,8,9\n"
                                 "alpha,1,2,3,4,5,6,7,8,9\n"
                                 "mid,1,2,3,4,5,6,7,8,9\n"
                                 "alpha,9,8,7,6,5,4,3,2,1\n"
                                 "beta,1,2,3,4,5,6,7,8,9\n";

static abl_status parse_published(outcome *o)
{
    abl_published p;
    memset(&p, 0, sizeof p);
    char *err = NULL;
    for (int f = 0; f < ABL_PUB_COUNT; f++) {
        size_t len = 0;
        const char *text = abl_published_builtin_text((abl_published_file)f, &len);
        abl_status st = text == NULL ? ABL_ERR_PARSE : abl_published_parse((abl_published_file)f, text, len, &p, &err);
        if (st != ABL_OK) {
            abl_published_free(&p);
            free(err);
            return st;
        }
        const abl_csv *c = &p.files[f];
        o->rows[f] = c->rows;
        o->cols[f] = c->cols;
        o->cells_hash[f] = 0;
        for (size_t i = 0; i < c->rows * c->cols; i++)
            o->cells_hash[f] = hash_text(o->cells_hash[f], c->cells[i]);
    }
    abl_status st = abl_published_parse(ABL_PUB_TABLE8, dup_table8, sizeof dup_table8 - 1, &p, &o->dup_err);
    free(err);
    abl_published_free(&p);
    return st == ABL_ERR_PARSE ? ABL_OK : ABL_ERR_MISMATCH;
}

static abl_status analyse(outcome *o)
{
    abl_analysis_config c;
    memset(&c, 0, sizeof c);
    abl_status st = abl_format_lookup("bf16", &c.format);
    if (st != ABL_OK)
        return st;
    c.convention = ABL_CONV_PAPER;
    c.heads = 16;
    c.context = 2048;
    abl_analysis a;
    if ((st = abl_analysis_run(&c, &a)) != ABL_OK)
        return st;
    for (int h = 0; h < a.heads && h < 16; h++)
        put_text(o->delta[h], sizeof o->delta[h], abl_delta_text(&a.results[h].delta, 12));
    gmp_snprintf(o->row_fraction, sizeof o->row_fraction, "%Qd", a.row_fraction);
    abl_analysis_free(&a);
    return ABL_OK;
}

/* Eight press heads in bf16 through an eager pipeline, itself on 2 threads (rows shared between them). */
static abl_status simulate(outcome *o)
{
    abl_format bf16;
    abl_status st = abl_format_lookup("bf16", &bf16);
    if (st != ABL_OK)
        return st;
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    if ((st = abl_pipeline_parse_msg("eager", &bf16, &cfg.pipeline, NULL)) != ABL_OK)
        return st;
    cfg.heads = SIM_HEADS;
    cfg.context = SIM_CONTEXT;
    cfg.threads = 2;
    abl_simulation sim;
    if ((st = abl_simulate_run(&cfg, &sim)) != ABL_OK)
        return st;
    for (int h = 0; h < SIM_HEADS && h < sim.heads; h++) {
        o->sim[h] = sim.results[h];
        memset(&o->sim[h].slope, 0, sizeof o->sim[h].slope); /* points into the freed schedule */
    }
    o->sim_row_zeros = sim.row_zeros;
    o->sim_matrix_zeros = sim.matrix_zeros;
    abl_simulation_free(&sim);
    return ABL_OK;
}

/* verify's experiments: MPFR's caches are per thread; two formats, one exhaustive, one by bisection. */
static abl_status verify(outcome *o)
{
    static const char *const names[2] = {"fp8-e5m2", "fp32"};
    for (int i = 0; i < 2; i++) {
        abl_format f;
        abl_status st = abl_format_lookup(names[i], &f);
        if (st == ABL_OK)
            st = abl_verify_format(&f, &o->verify[i]);
        if (st != ABL_OK)
            return st;
    }
    return ABL_OK;
}

static void compute(outcome *o)
{
    memset(o, 0, sizeof *o);
    o->st = parse_published(o);
    if (o->st == ABL_OK)
        o->st = analyse(o);
    if (o->st == ABL_OK)
        o->st = simulate(o);
    if (o->st == ABL_OK)
        o->st = verify(o);
}

static void expect_same_bound(const abl_verify_bound *a, const abl_verify_bound *b)
{
    assert_true(a->kind == b->kind && a->rounding == b->rounding && a->lower_inclusive == b->lower_inclusive);
    assert_true(a->has_below == b->has_below && a->has_above == b->has_above && a->agrees == b->agrees);
    assert_true(a->below_bits == b->below_bits && a->above_bits == b->above_bits);
}

static void expect_same_verify(const abl_verify_result *a, const abl_verify_result *b)
{
    assert_string_equal(a->format.name, b->format.name);
    assert_true(a->method == b->method && a->inputs == b->inputs && a->evaluations == b->evaluations);
    assert_memory_equal(a->class_count, b->class_count, sizeof a->class_count);
    assert_true(a->ftz_zero_count == b->ftz_zero_count && a->agrees == b->agrees);
    for (int k = 0; k < ABL_TAU_KIND_COUNT; k++)
        expect_same_bound(&a->bound[k], &b->bound[k]);
    expect_same_bound(&a->ftz_after_rounding, &b->ftz_after_rounding);
    assert_int_equal(a->ftz_after_rounding_same, b->ftz_after_rounding_same);
}

typedef struct {
    outcome out[ROUNDS];
} worker;

static pthread_barrier_t start;

static void *work(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(&start); /* all four begin together */
    for (int r = 0; r < ROUNDS; r++)
        compute(&w->out[r]);
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); /* MPFR's caches are per thread: a caller's thread frees its own */
    return NULL;
}

static void expect_same(const outcome *got, const outcome *want)
{
    assert_int_equal(got->st, ABL_OK);
    for (int f = 0; f < ABL_PUB_COUNT; f++) {
        assert_int_equal(got->rows[f], want->rows[f]);
        assert_int_equal(got->cols[f], want->cols[f]);
        assert_true(got->cells_hash[f] == want->cells_hash[f]);
    }
    assert_non_null(got->dup_err);
    assert_string_equal(got->dup_err, want->dup_err);
    for (int h = 0; h < 16; h++)
        assert_string_equal(got->delta[h], want->delta[h]);
    assert_string_equal(got->row_fraction, want->row_fraction);
    for (int h = 0; h < SIM_HEADS; h++) {
        const abl_sim_head *a = &got->sim[h], *b = &want->sim[h];
        assert_true(a->first_blind == b->first_blind && a->row_zeros == b->row_zeros &&
                    a->matrix_zeros == b->matrix_zeros && a->distinct_logits == b->distinct_logits &&
                    a->longest_tie_run == b->longest_tie_run && a->tied_with_diagonal == b->tied_with_diagonal);
        /* bit for bit: the same rows in the same arithmetic, whichever thread ran them */
        assert_memory_equal(&a->tv_distance, &b->tv_distance, sizeof a->tv_distance);
        assert_memory_equal(&a->mass_lost, &b->mass_lost, sizeof a->mass_lost);
        assert_memory_equal(&a->slope_held, &b->slope_held, sizeof a->slope_held);
    }
    assert_true(got->sim_row_zeros == want->sim_row_zeros && got->sim_matrix_zeros == want->sim_matrix_zeros);
    for (int i = 0; i < 2; i++)
        expect_same_verify(&got->verify[i], &want->verify[i]);
}

static void test_four_threads_equal_one(void **state)
{
    (void)state;
    static outcome alone;
    compute(&alone);
    assert_int_equal(alone.st, ABL_OK);
    /* The single-threaded run is the right one: Table 1's deltas, and the repeat named by construction. */
    assert_string_equal(alone.delta[0], "124");
    assert_string_equal(alone.delta[15], "22358");
    assert_string_equal(alone.dup_err, "table8.csv: line 5 repeats 'alpha' of line 3");
    assert_int_equal(alone.rows[ABL_PUB_TABLE8] > 0, 1);
    /* fp8-e5m2: 256 encodings less the 2 x (1 infinity + 3 NaNs) of the all-ones exponent */
    assert_int_equal(alone.verify[0].method, ABL_VERIFY_EXHAUSTIVE);
    assert_true(alone.verify[0].inputs == 248);
    assert_int_equal(alone.verify[1].method, ABL_VERIFY_BISECTION);

    static worker w[THREADS];
    pthread_t t[THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < THREADS; i++)
        for (int r = 0; r < ROUNDS; r++) {
            expect_same(&w[i].out[r], &alone);
            free(w[i].out[r].dup_err);
        }
    free(alone.dup_err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_threads_equal_one),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    mpfr_free_cache();
    return failed;
}
