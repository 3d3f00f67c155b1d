/*
 * Unit tests of the setup steps the CLI and the flat API share (include/abl/model/setup.h). Expected values:
 * the "values from" line's documented form (docs/architecture.md; the goldens' "values from: dtype
 * (config.json: torch_dtype); heads (config.json: n_head)"): values grouped by source in order, names joined
 * by ", ", groups by "; "; the JSON object one member per value in order; and the catalogue's own code-path
 * table (a path's pipeline text with the given fields after it), never the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "alibi_blind.h"

static void test_sources_line(void **state)
{
    (void)state;
    char cat[] = "catalogue: bloom-7b1", opt[] = "option --ctx";
    abl_setup_source src[] = {{"heads", cat}, {"context", opt}, {"dtype", cat}};
    char *text = NULL, *json = NULL;
    assert_int_equal(abl_setup_sources_build(src, 3, &text, &json), ABL_OK);
    assert_string_equal(text, "heads, dtype (catalogue: bloom-7b1); context (option --ctx)");
    assert_string_equal(json, "{\"heads\": \"catalogue: bloom-7b1\", \"context\": \"option --ctx\", "
                              "\"dtype\": \"catalogue: bloom-7b1\"}");
    free(text);
    free(json);
    assert_int_equal(abl_setup_sources_build(src, 0, &text, &json), ABL_OK);
    assert_string_equal(text, "");
    assert_string_equal(json, "{}");
    free(text);
    free(json);
}

static void test_note_source_bounded(void **state)
{
    (void)state;
    abl_setup_source src[2];
    size_t n = 0;
    abl_source s = {ABL_ORIGIN_OPTION, "--heads"};
    for (int i = 0; i < 3; i++)   /* the third does not fit: left out */
        abl_setup_note_source(src, &n, 2, "heads", &s);
    assert_int_equal(n, 2);
    assert_string_equal(src[1].what, "heads");
    char *want = abl_source_text(&s);
    assert_non_null(want);
    assert_string_equal(src[0].from, want);
    free(want);
    free(src[0].from);
    free(src[1].from);
}

static void test_code_path(void **state)
{
    (void)state;
    abl_model_spec spec;
    memset(&spec, 0, sizeof spec);
    char *full = NULL;
    const char *path = NULL;
    /* no model family: never a code path */
    assert_int_equal(abl_setup_code_path_spec(&spec, "eager,rows=3", &full, &path), ABL_OK);
    assert_null(full);
    const abl_model *m = abl_model_find("bloom-7b1");
    assert_non_null(m);
    assert_int_equal(abl_model_spec_from_catalogue(m, &spec), ABL_OK);
    assert_non_null(spec.family);
    assert_true(spec.family->npaths > 0);
    const abl_code_path *p = &spec.family->paths[spec.family->npaths - 1];
    size_t n = strlen(p->name) + strlen(",block=32") + 1, w = strlen(p->pipeline) + strlen(",block=32") + 1;
    char *text = malloc(n), *want = malloc(w);
    assert_non_null(text);
    assert_non_null(want);
    strcpy(text, p->name);
    strcat(text, ",block=32");
    strcpy(want, p->pipeline);
    strcat(want, ",block=32");
    assert_int_equal(abl_setup_code_path_spec(&spec, text, &full, &path), ABL_OK);
    assert_non_null(full);
    assert_string_equal(full, want);
    assert_string_equal(path, p->name);
    free(full);
    assert_int_equal(abl_setup_code_path_spec(&spec, "no-such-path,block=32", &full, &path), ABL_OK);
    assert_null(full);
    free(text);
    free(want);
    abl_model_spec_free(&spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sources_line),
        cmocka_unit_test(test_note_source_bounded),
        cmocka_unit_test(test_code_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
