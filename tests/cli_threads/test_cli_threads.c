/* The CLI as a function is reentrant: abl_cli_main run on several threads at once writes each run's report
 * and errors to that run's own streams (issue 17 item 5; the error stream is thread-local). Each thread runs
 * the same command line many times; the reference for its output is the same command run alone before any
 * thread starts, and the errors must name the input of their own run, never another thread's.
 * ThreadSanitizer (.ci/run's TSan step) checks the runs for data races. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "abl_cli.h"

enum { THREADS = 4, ROUNDS = 40 };

typedef struct run {
    const char *const *args;   /* after the program name, NULL-terminated */
    int rc;
    char *out, *err;           /* malloc'd */
} run;

static void run_once(run *r)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"alibi-blind";
    for (size_t i = 0; r->args[i] != NULL; i++)
        argv[argc++] = (char *)r->args[i];
    argv[argc] = NULL;
    size_t nout = 0, nerr = 0;
    FILE *out = open_memstream(&r->out, &nout);
    FILE *err = open_memstream(&r->err, &nerr);
    r->rc = abl_cli_main(argc, argv, out, err);
    fclose(out);
    fclose(err);
}

static void run_free(run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Four command lines: two reports and two bad inputs whose one error line names a different option. */
static const char *const good_a[] = {"analyze", "--heads", "12", "--ctx", "4096", NULL};
static const char *const good_b[] = {"thresholds", "--dtype", "fp16", "--format", "json", NULL};
static const char *const bad_c[] = {"analyze", "--heads", "12", "--ctx", "zero-c", NULL};
static const char *const bad_d[] = {"analyze", "--heads", "many-d", NULL};
static const char *const *const lines[THREADS] = {good_a, good_b, bad_c, bad_d};

typedef struct job {
    const run *alone;     /* the reference: the same line run before any thread */
    int mismatches;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int k = 0; k < ROUNDS; k++) {
        run r = {j->alone->args, 0, NULL, NULL};
        run_once(&r);
        if (r.rc != j->alone->rc || strcmp(r.out, j->alone->out) != 0 || strcmp(r.err, j->alone->err) != 0)
            j->mismatches++;
        run_free(&r);
    }
    return NULL;
}

static int newlines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_runs_in_parallel_keep_their_streams(void **state)
{
    (void)state;
    run alone[THREADS];
    for (int t = 0; t < THREADS; t++) {
        alone[t] = (run){lines[t], 0, NULL, NULL};
        run_once(&alone[t]);
    }
    /* The references are what the contract says, independently of the threads: a report and no error for
     * the good lines, exit 2 with one line naming the run's own bad value and no report for the bad ones. */
    for (int t = 0; t < 2; t++) {
        assert_int_equal(alone[t].rc, 0);
        assert_true(strlen(alone[t].out) > 0);
        assert_string_equal(alone[t].err, "");
    }
    assert_int_equal(alone[2].rc, 2);
    assert_int_equal(alone[3].rc, 2);
    assert_string_equal(alone[2].out, "");
    assert_non_null(strstr(alone[2].err, "zero-c"));
    assert_null(strstr(alone[2].err, "many-d"));
    assert_non_null(strstr(alone[3].err, "many-d"));
    assert_int_equal(newlines(alone[2].err), 1);
    assert_int_equal(newlines(alone[3].err), 1);

    pthread_t th[THREADS];
    job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (job){&alone[t], 0};
        assert_int_equal(pthread_create(&th[t], NULL, worker, &jobs[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(jobs[t].mismatches, 0);
        run_free(&alone[t]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_in_parallel_keep_their_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
