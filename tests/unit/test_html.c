/* Unit tests of the HTML report: self-contained (no script, no external reference), four inline
 * pictures, the paper's δ in the per-head table, escaping. δ of the 8-head press layer (slopes
 * 2^-1 ... 2^-8) at bf16: round(126 ln 2 / m) = 175 (m = 1/2) and 22358 (m = 2^-8), paper Table 1. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"

/* The message pointer for one more call: the previous call's message freed (the library sets *msg
 * afresh on every call and the caller owns what it gets). */
static char **fresh(char **msg)
{
    free(*msg);
    *msg = NULL;
    return msg;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_report(void **state)
{
    (void)state;
    abl_html_config c;
    memset(&c, 0, sizeof c);
    assert_int_equal(abl_format_lookup("bf16", &c.format), ABL_OK);
    c.convention = ABL_CONV_PAPER;
    c.heads = 8;
    c.context = 1024;
    c.threads = 1;
    char *buf = NULL;
    char *err = NULL;
    size_t len = 0;
    assert_int_equal(abl_html_report(&c, &buf, &len, fresh(&err)), ABL_OK);
    assert_non_null(buf);
    assert_int_equal(strlen(buf), len);
    assert_memory_equal(buf, "<!DOCTYPE html>", 15);
    assert_int_equal(count(buf, "<svg"), 4);
    assert_int_equal(count(buf, "</svg>"), 4);
    assert_int_equal(count(buf, "<?xml"), 0);
    assert_int_equal(count(buf, "<script"), 0);
    assert_int_equal(count(buf, "http://www.w3.org/2000/svg"), 4); /* namespaces only */
    assert_int_equal(count(buf, "https://"), 0);
    assert_non_null(strstr(buf, "<td class=\"n\">175</td>"));
    assert_non_null(strstr(buf, "<td class=\"n\">22358</td>"));
    assert_non_null(strstr(buf, "</html>\n"));
    free(buf);
    /* A catalogued model: its name in the title. */
    c.model = abl_model_find("bloom-560m");
    assert_non_null(c.model);
    c.heads = 16;
    assert_int_equal(abl_html_report(&c, &buf, &len, fresh(&err)), ABL_OK);
    assert_non_null(strstr(buf, "<title>alibi-blind report: bloom-560m at 1024 tokens</title>"));
    /* With a kernel the predictor handles: the design section (recommended slopes and the clamp). */
    assert_non_null(strstr(buf, "<h2>Design</h2>"));
    assert_non_null(strstr(buf, "least restrictive clamp c"));
    free(buf);
    /* The kernel by value: bloom-hf (parsed once here) gives the page its name. */
    abl_pipeline_spec ps;
    assert_int_equal(abl_pipeline_spec_parse("bloom-hf", &ps, fresh(&err)), ABL_OK);
    c.pipeline = &ps;
    assert_int_equal(abl_html_report(&c, &buf, &len, fresh(&err)), ABL_OK);
    assert_non_null(strstr(buf, "bloom-hf"));
    free(buf);
    abl_pipeline_spec_free(&ps);
    free(err);
}

/* A kernel named by a long text (600+ characters: valid fields repeated) is named whole wherever the
 * page names it, the zero map's caption included (it was cut at 511 bytes). */
static void test_long_pipeline(void **state)
{
    (void)state;
    static const char *const fields[] = {",bias-dtype=bf16", ",sum=exact", ",exp=correct"};
    char *text = malloc(1024);
    assert_non_null(text);
    strcpy(text, "eager");
    for (int k = 0; strlen(text) < 600; k++)
        strcat(text, fields[k % 3]);
    char *err = NULL;
    abl_pipeline_spec ps;
    assert_int_equal(abl_pipeline_spec_parse(text, &ps, fresh(&err)), ABL_OK);
    abl_html_config c;
    memset(&c, 0, sizeof c);
    assert_int_equal(abl_format_lookup("bf16", &c.format), ABL_OK);
    c.convention = ABL_CONV_PAPER;
    c.heads = 4;
    c.context = 64;
    c.threads = 1;
    c.pipeline = &ps;
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(abl_html_report(&c, &buf, &len, fresh(&err)), ABL_OK);
    assert_int_equal(count(buf, "<svg"), 4); /* the zero map is drawn */
    size_t n = strlen(text) + 128;
    char *caption = malloc(n);
    assert_non_null(caption);
    snprintf(caption, n, "<figcaption>Where attention goes blind: exactly-zero weights through %s at N = 64.</figcaption>",
             text);
    assert_non_null(strstr(buf, caption));
    free(caption);
    free(buf);
    abl_pipeline_spec_free(&ps);
    free(text);
    free(err);
}

static void test_escape(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    abl_html_escape(f, "<a href=\"x\">&'</a>");
    fclose(f);
    assert_string_equal(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_report), cmocka_unit_test(test_long_pipeline),
                                       cmocka_unit_test(test_escape)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
