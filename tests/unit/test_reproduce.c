/* Unit tests of reproduce: the built-in transcription reproduces with only documented differences,
 * and any altered published value, stale erratum or unknown item makes it fail. The expected set of
 * differences is the one derived by hand in docs/errata.md (36 E+L cells, MPT's †10/†2,000 and the
 * 2,000 of §5.1, Explicit's 4096, the two truncated tau of §3.2, Falcon-RW's 71 heads: 43). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"

#ifndef ABL_SOURCE_DIR
#error "ABL_SOURCE_DIR must name the source tree (tests/CMakeLists.txt)"
#endif

static void load(abl_published *p)
{
    char *err = NULL;
    assert_int_equal(abl_published_builtin(p, &err), ABL_OK);
    free(err);
}

/* Replace one published cell (the test's altered copy of the transcription). */
static void set_cell(abl_published *p, abl_published_file f, const char *key_col, const char *key, const char *col,
                     const char *value)
{
    abl_csv *c = &p->files[f];
    long row = abl_csv_find(c, key_col, key), k = abl_csv_column(c, col);
    assert_true(row >= 0 && k >= 0);
    char **cell = &c->cells[(size_t)row * c->cols + (size_t)k];
    free(*cell);
    *cell = strdup(value);
    assert_non_null(*cell);
}

static const abl_check *find(const abl_reproduction *r, const char *id)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->checks[i].id, id) == 0)
            return &r->checks[i];
    return NULL;
}

static void test_builtin_reproduces(void **state)
{
    (void)state;
    abl_published p;
    load(&p);
    abl_reproduction r;
    assert_int_equal(abl_reproduce_run(&p, &r), ABL_OK);
    assert_true(abl_reproduction_ok(&r));
    assert_int_equal(r.differences, 43);
    assert_int_equal(r.documented, 43);
    assert_int_equal(r.unexplained, 0);
    assert_int_equal(r.stale, 0);
    /* 6 Table 4 cells + 3 x 6 Table 1 values + 6 Table 5 inputs + 144 Table 8 cells + 9 claims. */
    assert_int_equal(r.count, 6 + 18 + 6 + 144 + 9);
    assert_int_equal(r.matches + r.differences, r.count);
    assert_int_equal(abl_known_difference_count(), 43);

    const abl_check *c = find(&r, "table8.E+L.d1");
    assert_non_null(c);
    assert_string_equal(c->published, "*");
    assert_string_equal(c->computed, "32");
    assert_int_equal(c->verdict, ABL_VERDICT_DIFFERS);
    assert_int_equal(c->errata, ABL_ERRATA_DOCUMENTED);
    c = find(&r, "table1.MPT.delta_1");
    assert_string_equal(c->computed, "104");
    assert_int_equal(c->errata, ABL_ERRATA_DOCUMENTED);
    /* §3.3: 36.6 % is the row fraction (spec §7: 0.365692); §5.2: 88.3 % one head's matrix fraction,
     * T(1924)/T(2048) = 0.882600. */
    c = find(&r, "claim.row_fraction_16h_2048");
    assert_string_equal(c->computed, "36.6%");
    assert_int_equal(c->verdict, ABL_VERDICT_MATCH);
    c = find(&r, "claim.matrix_fraction_window124");
    assert_string_equal(c->computed, "88.3%");
    c = find(&r, "claim.log_delta1");
    assert_string_equal(c->computed, "4.37e53");
    c = find(&r, "claim.tau_u_bf16_text");
    assert_string_equal(c->computed, "-92.19");
    c = find(&r, "table4.bf16.underflow");
    assert_string_equal(c->computed, "-92.1886");
    assert_int_equal(c->verdict, ABL_VERDICT_MATCH);
    /* softcap_z has nothing to compute: a note, not a check. */
    assert_null(find(&r, "claim.softcap_z"));
    assert_int_equal(r.nnotes, 1);
    abl_reproduction_free(&r);
    abl_published_free(&p);
}

/* An altered published value that the formulas determine is a new, unexplained difference. */
static void test_altered_value_fails(void **state)
{
    (void)state;
    abl_published p;
    load(&p);
    set_cell(&p, ABL_PUB_TABLE8, "name", "Steep", "d2", "153");
    abl_reproduction r;
    assert_int_equal(abl_reproduce_run(&p, &r), ABL_OK);
    assert_false(abl_reproduction_ok(&r));
    assert_int_equal(r.unexplained, 1);
    const abl_check *c = find(&r, "table8.Steep.d2");
    assert_int_equal(c->verdict, ABL_VERDICT_DIFFERS);
    assert_int_equal(c->errata, ABL_ERRATA_UNEXPLAINED);
    abl_reproduction_free(&r);
    abl_published_free(&p);

    /* A documented difference with another published value is not the documented one. */
    load(&p);
    set_cell(&p, ABL_PUB_TABLE1, "model", "MPT", "delta_1", "11");
    assert_int_equal(abl_reproduce_run(&p, &r), ABL_OK);
    assert_false(abl_reproduction_ok(&r));
    assert_int_equal(find(&r, "table1.MPT.delta_1")->errata, ABL_ERRATA_UNEXPLAINED);
    abl_reproduction_free(&r);
    abl_published_free(&p);

    /* Table 4, claims and model facts are checked too. */
    load(&p);
    set_cell(&p, ABL_PUB_TABLE4, "value", "88.7228", "value", "88.7229");
    set_cell(&p, ABL_PUB_CLAIMS, "id", "row_fraction_16h_2048", "printed_value", "36.5%");
    set_cell(&p, ABL_PUB_TABLE5, "model", "MPT 7B", "heads", "16");
    assert_int_equal(abl_reproduce_run(&p, &r), ABL_OK);
    assert_int_equal(r.unexplained, 3);
    abl_reproduction_free(&r);
    abl_published_free(&p);
}

/* A documented difference that now matches is stale: the errata must follow the engine. */
static void test_stale_erratum_fails(void **state)
{
    (void)state;
    abl_published p;
    load(&p);
    set_cell(&p, ABL_PUB_TABLE8, "name", "E+L", "d1", "32");
    abl_reproduction r;
    assert_int_equal(abl_reproduce_run(&p, &r), ABL_OK);
    assert_false(abl_reproduction_ok(&r));
    assert_int_equal(r.stale, 1);
    assert_int_equal(r.unexplained, 0);
    const abl_check *c = find(&r, "table8.E+L.d1");
    assert_int_equal(c->verdict, ABL_VERDICT_MATCH);
    assert_int_equal(c->errata, ABL_ERRATA_STALE);
    abl_reproduction_free(&r);
    abl_published_free(&p);
}

/* Unknown rows and claims cannot be checked: unexplained. A documented value the transcription no
 * longer has is stale. */
static void test_unknown_items_fail(void **state)
{
    (void)state;
    abl_published p;
    load(&p);
    set_cell(&p, ABL_PUB_CLAIMS, "id", "explicit_target", "id", "something_new");
    set_cell(&p, ABL_PUB_TABLE8, "name", "Wide", "name", "Wider");
    abl_reproduction r;
    assert_int_equal(abl_reproduce_run(&p, &r), ABL_OK);
    assert_false(abl_reproduction_ok(&r));
    assert_int_equal(find(&r, "claim.something_new")->errata, ABL_ERRATA_UNEXPLAINED);
    assert_int_equal(find(&r, "table8.Wider")->errata, ABL_ERRATA_UNEXPLAINED);
    const abl_check *c = find(&r, "claim.explicit_target");
    assert_non_null(c);
    assert_string_equal(c->published, "(absent)");
    assert_int_equal(c->errata, ABL_ERRATA_STALE);
    abl_reproduction_free(&r);
    abl_published_free(&p);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Every documented difference is written up in docs/errata.md (by id, in backquotes). */
static void test_errata_lists_every_id(void **state)
{
    (void)state;
    char *doc = read_text(ABL_SOURCE_DIR "/docs/errata.md");
    for (size_t i = 0; i < abl_known_difference_count(); i++) {
        const abl_known_difference *k = abl_known_difference_at(i);
        char quoted[160];
        snprintf(quoted, sizeof quoted, "`%s`", k->id);
        if (strstr(doc, quoted) == NULL)
            fail_msg("docs/errata.md does not mention %s", quoted);
        assert_true(strlen(k->reason) > 0 && strchr(k->reason, '\n') == NULL);
    }
    free(doc);
}

static void test_report_json(void **state)
{
    (void)state;
    abl_published p;
    load(&p);
    abl_reproduction r;
    assert_int_equal(abl_reproduce_run(&p, &r), ABL_OK);
    abl_report *rep = NULL;
    assert_int_equal(abl_reproduce_report(&r, 1, &rep), ABL_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(abl_report_write(rep, ABL_OUT_JSON, f), ABL_OK);
    fclose(f);
    /* An object: the rows ("checks": id, published, computed, verdict, reason) and the counts (issue 11). */
    assert_non_null(strstr(buf, "\"checks\": [\n    {\"id\": \"table1.MPT.delta_1\", \"published\": \"10\", "
                                "\"computed\": \"104\", \"verdict\": \"differs\", \"errata\": \"documented\""));
    assert_int_equal(buf[0], '{');
    assert_non_null(strstr(buf, "\"checked\": "));
    /* --differences: only the 43 differing rows. */
    size_t rows = 0;
    for (const char *q = strstr(buf, "{\"id\""); q != NULL; q = strstr(q + 1, "{\"id\""))
        rows++;
    assert_int_equal(rows, 43);
    free(buf);
    abl_report_free(rep);
    abl_reproduction_free(&r);
    abl_published_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_reproduces),
        cmocka_unit_test(test_altered_value_fails),
        cmocka_unit_test(test_stale_erratum_fails),
        cmocka_unit_test(test_unknown_items_fail),
        cmocka_unit_test(test_errata_lists_every_id),
        cmocka_unit_test(test_report_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
