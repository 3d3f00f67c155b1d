/* Unit tests of the paper's tables and figure data, and of the published-values reader.
 * Expected numbers come from the paper (Tables 1, 4, 8; §3.3), docs/spec.md (spec §3, §7, §8) and closed
 * forms worked out by hand below (checked with mpmath at 60 digits), never from the code under test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#include "abl_test_schedule.h"

/* The formatters return malloc'd text: copy it into the test's array and free it ("" when out of memory,
 * which the comparison that follows then reports). */
static void put_text(char *buf, size_t len, char *s)
{
    snprintf(buf, len, "%s", s ? s : "");
    free(s);
}

/* The message pointer for one more call: the previous call's message freed (the library sets *msg
 * afresh on every call and the caller owns what it gets). */
static char **fresh(char **msg)
{
    free(*msg);
    *msg = NULL;
    return msg;
}

#ifndef ABL_SOURCE_DIR
#error "ABL_SOURCE_DIR must name the source tree (tests/CMakeLists.txt)"
#endif

static char *render(const abl_report *r, abl_output fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(abl_report_write(r, fmt, f), ABL_OK);
    fclose(f);
    return buf;
}

static void cells_text(const abl_delta *d, char out[][64], int n)
{
    for (int h = 0; h < n; h++)
        put_text(out[h], 64, abl_table8_cell_text(&d[h], 0));
}

/* ---------------------------------------------------------------- Table 8 */

/* Rows the formulas determine, as the paper's Table 8 prints them; E+L as paper §4.3's formula gives:
 * m = -tau/ln(t + 1) makes exp(-tau/m) - 1 = t exactly, so delta = the targets 32 ... 8192. */
static const struct {
    const char *name;
    const char *cells[ABL_TABLE8_HEADS];
} expected8[] = {
    {"Steep", {"128", "152", "181", "215", "256", "304", "362", "431", "512"}},
    {"Safe", {"2048", "2233", "2435", "2656", "2896", "3158", "3444", "3756", "4096"}},
    {"Wide", {"16", "32", "64", "128", "256", "512", "1024", "2048", "4096"}},
    {"ALiBi (default)", {"124", "175", "349", "699", "1397", "2795", "5590", "11179", "22358"}},
    {"Explicit", {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"}},
    {"Log", {"*", "*", "*", "*", "**", "**", "**", "**", "**"}},
    {"C+L", {"*", "*", "*", "*", "**", "**", "**", "**", "**"}},
    {"C+E", {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"}},
    {"E+L", {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"}},
    {"E+S", {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"}},
    {"L+S", {"*", "*", "*", "*", "**", "**", "**", "**", "**"}},
    {"C+E+L", {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"}},
    {"C+E+S", {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"}},
    {"C+L+S", {"*", "*", "*", "*", "**", "**", "**", "**", "**"}},
    {"E+L+S", {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"}},
    {"C+E+L+S", {"32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"}},
};

static void test_table8_rows(void **state)
{
    (void)state;
    assert_int_equal(abl_table8_config_count(), 16);
    abl_paper_options o;
    abl_paper_options_default(&o);
    abl_delta d[ABL_TABLE8_HEADS];
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_init(&d[h]);
    for (size_t i = 0; i < sizeof expected8 / sizeof expected8[0]; i++) {
        /* The paper's order. */
        assert_string_equal(abl_table8_config_at(i)->name, expected8[i].name);
        char cells[ABL_TABLE8_HEADS][64];
        assert_int_equal(abl_table8_deltas(abl_table8_config_at(i), &o, d, NULL), ABL_OK);
        cells_text(d, cells, ABL_TABLE8_HEADS);
        for (int h = 0; h < ABL_TABLE8_HEADS; h++)
            if (strcmp(cells[h], expected8[i].cells[h]) != 0)
                fail_msg("%s d%d: got %s, expected %s", expected8[i].name, h + 1, cells[h], expected8[i].cells[h]);
    }
    /* E with L resolves to the log-fitted schedule; E alone to the linear one. */
    char *spec = NULL;
    assert_int_equal(abl_table8_deltas(abl_table8_config_find("C+E+L+S"), &o, d, &spec), ABL_OK);
    assert_string_equal(spec, "robust-log:32, log distance");
    free(spec);
    assert_int_equal(abl_table8_deltas(abl_table8_config_find("C+E"), &o, d, &spec), ABL_OK);
    assert_string_equal(spec, "robust:32");
    free(spec);
    assert_null(abl_table8_config_find("E+C"));
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_clear(&d[h]);
}

/* Log row, default slopes: delta = 2^(126/m) - 1 under tau = -126 ln 2; for m = 2^-1 that is
 * 2^252 - 1 exactly, and the steepest head (m = 2^-0.5) is exp(126 ln2 sqrt 2) - 1 = 4.37e53 (§3.4). */
static void test_table8_log_exact(void **state)
{
    (void)state;
    abl_paper_options o;
    abl_paper_options_default(&o);
    abl_delta d[ABL_TABLE8_HEADS];
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_init(&d[h]);
    assert_int_equal(abl_table8_deltas(abl_table8_config_find("Log"), &o, d, NULL), ABL_OK);
    mpz_t want;
    mpz_init(want);
    mpz_setbit(want, 252);
    mpz_sub_ui(want, want, 1);
    assert_true(d[1].exact);
    assert_int_equal(mpz_cmp(d[1].value, want), 0);
    char t[64];
    put_text(t, sizeof t, abl_table8_cell_text(&d[0], 1));
    assert_string_equal(t, "4.37e53");
    /* m = 2^-4: 2^2016 - 1, past binary64. */
    mpz_set_ui(want, 0);
    mpz_setbit(want, 2016);
    mpz_sub_ui(want, want, 1);
    assert_int_equal(mpz_cmp(d[4].value, want), 0);
    mpz_clear(want);
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_clear(&d[h]);
}

/* The * / ** rule at its boundaries: 10^9 prints, 10^9 + 1 is *, 2^1024 - 1 is *, 2^1024 is **. */
static void test_star_rule_boundaries(void **state)
{
    (void)state;
    abl_delta d;
    abl_delta_init(&d);
    d.exact = 1;
    char t[64];
    mpz_set_ui(d.value, 1000000000UL);
    put_text(t, sizeof t, abl_table8_cell_text(&d, 0));
    assert_string_equal(t, "1000000000");
    mpz_add_ui(d.value, d.value, 1);
    put_text(t, sizeof t, abl_table8_cell_text(&d, 0));
    assert_string_equal(t, "*");
    mpz_set_ui(d.value, 0);
    mpz_setbit(d.value, 1024);
    mpz_sub_ui(d.value, d.value, 1);
    put_text(t, sizeof t, abl_table8_cell_text(&d, 0));
    assert_string_equal(t, "*");
    mpz_add_ui(d.value, d.value, 1);
    put_text(t, sizeof t, abl_table8_cell_text(&d, 0));
    assert_string_equal(t, "**");
    /* Beyond the exact range: only an approximation is kept, far past 2^1024. */
    d.exact = 0;
    mpfr_set_ui_2exp(d.approx, 1, 5000000, MPFR_RNDN);
    put_text(t, sizeof t, abl_table8_cell_text(&d, 0));
    assert_string_equal(t, "**");
    abl_delta_clear(&d);
}

/* The same boundaries reached through the engine. Linear, paper convention: a slope fitted to a
 * target t gives delta = t exactly. Log distance with the rational slope m = 126/1024: Q = 2^(126/m) - 1
 * = 2^1024 - 1 exactly; under ftz (strict, floor + 1) delta = 2^1024. */
static void test_star_rule_engine(void **state)
{
    (void)state;
    abl_format bf16;
    assert_int_equal(abl_format_lookup("bf16", &bf16), ABL_OK);
    static const struct {
        const char *slopes;
        abl_convention conv;
        abl_distance dist;
        const char *cell;
    } cases[] = {
        {"targets:1000000000", ABL_CONV_PAPER, ABL_DISTANCE_LINEAR, "1000000000"},
        {"targets:1000000001", ABL_CONV_PAPER, ABL_DISTANCE_LINEAR, "*"},
        {"slopes:0.123046875", ABL_CONV_PAPER, ABL_DISTANCE_LOG, "*"},
        {"slopes:0.123046875", ABL_CONV_FTZ, ABL_DISTANCE_LOG, "**"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long k;
        assert_int_equal(abl_threshold_log2_multiple(&bf16, abl_convention_tau_kind(cases[i].conv), &k), ABL_OK);
        abl_schedule s;
        memset(&s, 0, sizeof s);
        assert_int_equal(abl_schedule_parse(cases[i].slopes, 0, k, &s), ABL_OK);
        abl_blind_query q;
        memset(&q, 0, sizeof q);
        q.format = bf16;
        q.convention = cases[i].conv;
        q.distance = cases[i].dist;
        abl_delta d;
        abl_delta_init(&d);
        assert_int_equal(abl_blindness(&s.slopes[0], &q, &d), ABL_OK);
        char t[64];
        put_text(t, sizeof t, abl_table8_cell_text(&d, 0));
        if (strcmp(t, cases[i].cell) != 0)
            fail_msg("%s: got %s, expected %s", cases[i].slopes, t, cases[i].cell);
        abl_delta_clear(&d);
        abl_schedule_free(&s);
    }
}

static void test_table8_report_csv(void **state)
{
    (void)state;
    abl_paper_options o;
    abl_paper_options_default(&o);
    abl_report *r = NULL;
    assert_int_equal(abl_table8_report(&o, &r), ABL_OK);
    char *csv = render(r, ABL_OUT_CSV);
    /* One row per configuration: its name, then the nine cells as printed. */
    /* each delta as two columns (issue 21): the number (nan above 2^53) and the exact decimal text */
    assert_non_null(strstr(csv, "name,d1,d1_exact,d2,d2_exact,d3,d3_exact,d4,d4_exact,d5,d5_exact,d6,d6_exact,d7,"
                                "d7_exact,d8,d8_exact,d9,d9_exact\n"
                                "Steep,128,128,152,152,181,181,215,215,256,256,304,304,362,362,431,431,512,512\n"));
    assert_non_null(strstr(csv, "\nALiBi (default),124,124,175,175,349,349,699,699,1397,1397,2795,2795,5590,5590,"
                                "11179,11179,22358,22358\n"));
    /* CSV carries delta itself (the JSON value), not the paper's * and **: Log's delta1 =
     * round(exp(87.3365447505531 / 2^-0.5)) - 1 = 4.37e53 (claim.log_delta1), exactly. */
    assert_non_null(strstr(csv, "\nC+L+S,nan,437329245818487130341580886098229473052520611859048707,"));
    size_t lines = 0;
    for (const char *p = csv; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 17);
    free(csv);
    abl_report_free(r);
}

/* ---------------------------------------------------------------- Table 1 */

/* delta_1 = round(87.3365 / m_1): BLOOM 2^-0.5 -> 123.51 -> 124, Falcon-RW 2^-0.125 -> 95.24 -> 95,
 * MPT 2^-0.25 -> 103.86 -> 104 (the paper prints 10); delta_H = round(87.3365 * 256) = 22358. */
static void test_table1_models(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *d1, *dh, *slopes;
    } want[] = {
        {"BLOOM", "124", "22358", "2^-0.5, 2^-1, …, 2^-8"},
        {"Falcon-RW", "95", "22358", "2^-0.125, 2^-0.25, …, 2^-8"},
        {"MPT", "104", "22358", "2^-0.25, 2^-0.5, …, 2^-8"},
    };
    abl_format bf16;
    abl_format_lookup("bf16", &bf16);
    assert_int_equal(abl_paper_model_count(), 3);
    for (size_t i = 0; i < 3; i++) {
        const abl_paper_model *m = abl_paper_model_find(want[i].name);
        assert_non_null(m);
        abl_delta a, b;
        abl_delta_init(&a);
        abl_delta_init(&b);
        /* the row's typed schedule is the one its display name reads as */
        abl_schedule_spec typed;
        assert_int_equal(abl_paper_model_schedule(m, &typed), ABL_OK);
        assert_string_equal(typed.text, m->slopes);
        assert_int_equal(typed.kind, abl_test_schedule(m->slopes)->kind);
        assert_int_equal(typed.mpt_bias, abl_test_schedule(m->slopes)->mpt_bias);
        abl_schedule_spec_free(&typed);
        char *text = NULL, t[64];
        assert_int_equal(abl_paper_model_deltas(abl_test_schedule(m->slopes), m->heads, &bf16, ABL_CONV_PAPER, &a, &b, &text), ABL_OK);
        put_text(t, sizeof t, abl_delta_text(&a, 12));
        assert_string_equal(t, want[i].d1);
        put_text(t, sizeof t, abl_delta_text(&b, 12));
        assert_string_equal(t, want[i].dh);
        assert_string_equal(text, want[i].slopes);
        free(text);
        abl_delta_clear(&a);
        abl_delta_clear(&b);
    }
    /* Falcon-RW-7B's configuration has 64 heads (Table 5 prints 71). */
    assert_int_equal(abl_paper_model_find("Falcon-RW")->heads, 64);
}

/* ---------------------------------------------------------------- Table 4 */

/* spec §3 values, rounded to 4 decimals by hand: -92.1885750145, -103.2789299030, -87.3365447506,
 * 88.7189252124, 88.7228390521; rn-zero -92.8817221950, -103.9720770840; rn-overflow 88.7208840768,
 * 88.7228390819. */
static void test_table4(void **state)
{
    (void)state;
    abl_format f[2];
    abl_format_lookup("bf16", &f[0]);
    abl_format_lookup("fp32", &f[1]);
    abl_report *r = NULL;
    assert_int_equal(abl_table4_report(f, 2, 4, 1, &r), ABL_OK);
    char *csv = render(r, ABL_OUT_CSV);
    static const char *const lines[] = {
        "name,condition,format,value,rn_value,rn_meaning\n",
        /* CSV is ASCII (docs/spec.md 13): the paper's tau_u for its τu, <= for ≤ */
        "Underflow tau_u,x <= tau_u,bf16,-92.1886,-92.8817,",
        "Underflow tau_u,x <= tau_u,fp32,-103.2789,-103.9721,",
        "Denorm tau_d,tau_u < x <= tau_d,bf16,-87.3365,-87.3365,",
        "Denorm tau_d,tau_u < x <= tau_d,fp32,-87.3365,-87.3365,",
        "Overflow tau_o,tau_o <= x,bf16,88.7189,88.7209,",
        "Overflow tau_o,tau_o <= x,fp32,88.7228,88.7228,",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (strstr(csv, lines[i]) == NULL)
            fail_msg("missing: %s\n%s", lines[i], csv);
    free(csv);
    abl_report_free(r);
    assert_int_equal(abl_table4_report(f, 0, 4, 0, &r), ABL_ERR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------- Table 5 */

/* bloom-560m: the 16-head layer of spec §7 at N = 2048: row 0.365692 (36.57 %), matrix 0.285060
 * (28.51 %), 9 heads below 2048. MosaicBERT-base: 12 heads, W = 128, only delta_1 = 124 < 128:
 * row (128 - 124)/(12 * 128) = 0.26 %, matrix T(4)/(12 T(128)) = 10/99072 = 0.01 %. */
static void test_table5(void **state)
{
    (void)state;
    abl_paper_options o;
    abl_paper_options_default(&o);
    abl_report *r = NULL;
    assert_int_equal(abl_table5_report(NULL, &o, &r), ABL_OK);
    char *csv = render(r, ABL_OUT_CSV);
    assert_non_null(strstr(csv, "\nbigscience/bloom-560m,dec,base,560M,\"46 lang., code\",y,2048,2048,16,default,124,124,"
                                "22358,22358,9,0.365692138671875,0.28505997590287945,"));
    assert_non_null(strstr(csv, "\nMosaicBERT-base,enc,base,137M,eng,y,128,128,12,default,124,124,22358,22358,1,"
                                "0.0026041666666666667,0.00010093669250645995,"));
    /* (the paper's columns are followed by the kernel's: tests/unit/test_table_kernel.c) */
    /* The printed 71 heads are kept, and the configured 64 follow in a marked row (delta_1 95, Table 1). */
    assert_non_null(strstr(csv, "\nFalcon-RW 7B,dec,\"base,chat\",7B,eng,y,2048,2048,71,default,91,91,"));
    assert_non_null(strstr(csv, "\nFalcon-RW 7B[ddagger],dec,\"base,chat\",7B,eng,y,2048,2048,64,default,95,95,22358,"));
    free(csv);
    abl_report_free(r);
}

/* ---------------------------------------------------------------- Figure 1 */

static void test_figure(void **state)
{
    (void)state;
    abl_figure_config c;
    abl_figure_config_default(&c, 1);
    abl_figure f;
    assert_int_equal(abl_figure_run(&c, &f), ABL_OK);
    assert_int_equal(f.points, 257);
    assert_int_equal(f.x[128], 2048);
    abl_report *r = NULL;
    assert_int_equal(abl_figure1b_report(&f, &r), ABL_OK);
    char *csv = render(r, ABL_OUT_CSV);
    /* spec §7 at N = 2048; at N = 0 nothing is blind. */
    assert_non_null(strstr(csv, "\n2048,9,0.365692,0.285060\n"));
    assert_non_null(strstr(csv, "distance,blind_heads,row_fraction,matrix_fraction\n0,0,0.000000,0.000000\n"));
    free(csv);
    abl_report_free(r);
    abl_figure_free(&f);

    /* 1a: -m d at d = 64 for m = 2^-0.5 is -64/sqrt 2 = -45.254834; the last x is the context even
     * when the step does not divide it. */
    abl_figure_config_default(&c, 0);
    c.max_distance = 100;
    assert_int_equal(abl_figure_run(&c, &f), ABL_OK);
    assert_int_equal(f.points, 3);
    assert_int_equal(f.x[2], 100);
    assert_int_equal(abl_figure1a_report(&f, &r), ABL_OK);
    csv = render(r, ABL_OUT_CSV);
    assert_non_null(strstr(csv, "\n64,-45.2548,-32.0000,"));
    assert_non_null(strstr(csv, ",-0.2500,-87.3365\n"));
    free(csv);
    abl_report_free(r);
    abl_figure_free(&f);

    c.step = 0;
    assert_int_equal(abl_figure_run(&c, &f), ABL_ERR_CONTEXT_RANGE);
}

/* ---------------------------------------------------------------- the published values */

static void test_csv_parse(void **state)
{
    (void)state;
    abl_csv c;
    char *err = NULL;
    const char *text = "a,b,c\r\n1,\"x, \"\"y\"\"\",\r\n\"multi\nline\",2,3";
    assert_int_equal(abl_csv_parse(text, strlen(text), &c, fresh(&err)), ABL_OK);
    assert_int_equal(c.rows, 2);
    assert_int_equal(c.cols, 3);
    assert_string_equal(abl_csv_get(&c, 0, "b"), "x, \"y\"");
    assert_string_equal(abl_csv_get(&c, 0, "c"), "");
    assert_string_equal(abl_csv_get(&c, 1, "a"), "multi\nline");
    assert_int_equal(abl_csv_find(&c, "c", "3"), 1);
    assert_int_equal(abl_csv_find(&c, "c", "4"), -1);
    assert_null(abl_csv_get(&c, 0, "d"));
    assert_null(abl_csv_get(&c, 2, "a"));
    abl_csv_free(&c);

    static const struct {
        const char *text, *err;
    } bad[] = {
        {"a,b\n1\n", "line 2: 1 fields, the header has 2"},
        {"a,b\n\n1,2\n", "line 2: blank line"},
        {"a,b\n\"1,2\n", "line 2: unterminated quoted field"},
        {"a,b\n1\"x,2\n", "line 2: quote inside an unquoted field"},
        {"a,b\n\"1\"x,2\n", "line 2: text after a closing quote"},
        {"", "empty file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(abl_csv_parse(bad[i].text, strlen(bad[i].text), &c, fresh(&err)), ABL_ERR_PARSE);
        assert_string_equal(err, bad[i].err);
    }
    free(err);
}

/* The compiled-in copy is byte for byte tables/published/ (the build embeds it; CMake re-runs on change). */
static void test_builtin_equals_files(void **state)
{
    (void)state;
    for (int f = 0; f < ABL_PUB_COUNT; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tables/published/%s", ABL_SOURCE_DIR,
                 abl_published_file_name((abl_published_file)f));
        FILE *fp = fopen(path, "rb");
        assert_non_null(fp);
        static char buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        size_t len = 0;
        const char *text = abl_published_builtin_text((abl_published_file)f, &len);
        assert_non_null(text);
        assert_int_equal(len, n);
        assert_memory_equal(text, buf, n);
        assert_int_equal(text[len], '\0');
    }
    abl_published p;
    char *err = NULL;
    assert_int_equal(abl_published_builtin(&p, fresh(&err)), ABL_OK);
    assert_int_equal(p.files[ABL_PUB_TABLE8].rows, 16);
    assert_int_equal(p.files[ABL_PUB_TABLE4].rows, 6);
    assert_string_equal(abl_csv_get(&p.files[ABL_PUB_TABLE1], 2, "delta_1"), "10");
    abl_published_free(&p);

    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tables/published", ABL_SOURCE_DIR);
    assert_int_equal(abl_published_load_dir(dir, &p, fresh(&err)), ABL_OK);
    assert_string_equal(abl_csv_get(&p.files[ABL_PUB_CLAIMS], 0, "printed_value"), "-103.27");
    abl_published_free(&p);
    assert_int_equal(abl_published_load_dir("/nonexistent-abl-dir", &p, fresh(&err)), ABL_ERR_IO);
    assert_non_null(strstr(err, "cannot read table1.csv"));
    free(err);
}

/* abl_paper_table4_value (tables.h, used by `thresholds`) keeps its own copy of Table 4: it must agree
 * with the transcription reproduce compares against. */
static void test_table4_copies_agree(void **state)
{
    (void)state;
    abl_published p;
    assert_int_equal(abl_published_builtin(&p, NULL), ABL_OK);
    const abl_csv *t4 = &p.files[ABL_PUB_TABLE4];
    assert_int_equal(t4->rows, 6);
    for (size_t row = 0; row < t4->rows; row++) {
        const char *name = abl_csv_get(t4, row, "name");
        abl_tau_kind kind = strcmp(name, "underflow") == 0 ? ABL_TAU_SUBNORMAL
                            : strcmp(name, "denorm") == 0  ? ABL_TAU_FTZ
                                                           : ABL_TAU_MAX;
        abl_format f;
        assert_int_equal(abl_format_lookup(abl_csv_get(t4, row, "format"), &f), ABL_OK);
        const char *v = abl_paper_table4_value(&f, kind);
        assert_non_null(v);
        assert_string_equal(v, abl_csv_get(t4, row, "value"));
    }
    abl_published_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table8_rows),
        cmocka_unit_test(test_table8_log_exact),
        cmocka_unit_test(test_star_rule_boundaries),
        cmocka_unit_test(test_star_rule_engine),
        cmocka_unit_test(test_table8_report_csv),
        cmocka_unit_test(test_table1_models),
        cmocka_unit_test(test_table4),
        cmocka_unit_test(test_table5),
        cmocka_unit_test(test_figure),
        cmocka_unit_test(test_csv_parse),
        cmocka_unit_test(test_builtin_equals_files),
        cmocka_unit_test(test_table4_copies_agree),
    };
    return cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
}
