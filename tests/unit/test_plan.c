/* Unit tests of plan, then run (issue 17 item 2): for each composite entry point, its plan's cost is the
 * sum of its parts' costs, each part's cost computed here from the part's own public estimate (or
 * sub-plan) on a configuration built by this test; the public estimate is the plan's cost; and the run
 * executes exactly the planned computations (every step's `executed` equals its planned `calls`). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include "alibi_blind.h"

/* c1 == c2: the same seconds and units, bit for bit (the plan adds the same numbers in the same order). */
static void assert_cost_equal(const abl_cost *c1, const abl_cost *c2)
{
    assert_true(c1->seconds == c2->seconds);
    assert_true(c1->units == c2->units);
    assert_int_equal(c1->threads, c2->threads);
    if (c1->unit_name == NULL || c2->unit_name == NULL)
        assert_ptr_equal(c1->unit_name, c2->unit_name);
    else
        assert_string_equal(c1->unit_name, c2->unit_name);
}

static void test_plan_add(void **state)
{
    (void)state;
    abl_plan p;
    memset(&p, 0, sizeof p);
    abl_plan_step s;
    memset(&s, 0, sizeof s);
    s.what = "predict";
    s.cost.seconds = 1.5;
    s.cost.units = 10;
    s.cost.unit_name = "weights";
    s.executed = 7; /* reset by abl_plan_add */
    for (int i = 0; i < 9; i++)
        assert_int_equal(abl_plan_add(&p, &s), ABL_OK);
    assert_int_equal(p.nsteps, 9);
    assert_true(p.cost.seconds == 13.5);
    assert_true(p.cost.units == 90);
    assert_int_equal(p.steps[8].calls, 1); /* 0 calls means one */
    assert_false(abl_plan_done(&p));
    for (size_t i = 0; i < p.nsteps; i++)
        p.steps[i].executed = 1;
    assert_true(abl_plan_done(&p));
    abl_plan q;
    memset(&q, 0, sizeof q);
    assert_int_equal(abl_plan_append(&q, &p), 0);
    assert_int_equal(abl_plan_append(&q, &p), 9);
    assert_int_equal(q.nsteps, 18);
    assert_true(q.cost.seconds == 27);
    assert_false(abl_plan_done(&q)); /* the copies start unexecuted */
    abl_plan_free(&q);
    abl_plan_free(&p);
    assert_null(p.steps);
}

static void eager(const abl_format *f, abl_pipeline *pl)
{
    assert_int_equal(abl_pipeline_parse_msg("eager", f, pl, NULL), ABL_OK);
}

/* compare = the paper's analysis + the predictor. */
static void test_compare(void **state)
{
    (void)state;
    abl_compare_config cc;
    memset(&cc, 0, sizeof cc);
    assert_int_equal(abl_format_lookup("bf16", &cc.dtype), ABL_OK);
    cc.convention = ABL_CONV_PAPER;
    cc.heads = 8;
    cc.context = 3000;
    eager(&cc.dtype, &cc.pipeline);

    abl_analysis_config ac;
    memset(&ac, 0, sizeof ac);
    ac.format = cc.dtype;
    ac.convention = cc.convention;
    ac.heads = 8;
    ac.context = 3000;
    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    sc.pipeline = cc.pipeline;
    sc.heads = 8;
    sc.context = 3000;
    abl_cost want, part;
    memset(&want, 0, sizeof want);
    assert_int_equal(abl_analysis_estimate(&ac, &part), ABL_OK);
    abl_cost_add(&want, &part);
    assert_int_equal(abl_predict_estimate(&sc, &part), ABL_OK);
    abl_cost_add(&want, &part);

    abl_compare_plan p;
    assert_int_equal(abl_compare_plan_make(&cc, &p), ABL_OK);
    assert_int_equal(p.plan.nsteps, 2);
    assert_string_equal(p.plan.steps[0].what, "analysis");
    assert_string_equal(p.plan.steps[1].what, "predict");
    assert_cost_equal(&p.plan.cost, &want);
    abl_cost est;
    assert_int_equal(abl_compare_estimate(&cc, &est), ABL_OK);
    assert_cost_equal(&est, &want);
    abl_compare c;
    assert_int_equal(abl_compare_run_plan(&p, &c), ABL_OK);
    assert_true(abl_plan_done(&p.plan));
    assert_int_equal(c.heads, 8);
    abl_compare_free(&c);
    abl_compare_plan_free(&p);
}

/* The fraction plot's real-kernel curve: one predictor call at every N > 0 of its axis, 200 points
 * spaced geometrically from 1 to max (llround(max^(i/199)), repeats dropped: docs/spec.md's Figure 1b). */
static void test_plot_fraction(void **state)
{
    (void)state;
    abl_format bf;
    assert_int_equal(abl_format_lookup("bf16", &bf), ABL_OK);
    abl_convention conv = ABL_CONV_PAPER;
    abl_pipeline_spec pipes[1] = {{"eager", "eager", NULL, 0}}; /* the eager preset, no override */
    abl_plot_fraction_config fc;
    abl_plot_fraction_config_default(&fc);
    fc.formats = &bf;
    fc.conventions = &conv;
    fc.heads = 4;
    fc.max_context = 700;
    fc.pipelines = pipes;
    fc.npipelines = 1;

    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    eager(&bf, &sc.pipeline);
    sc.heads = 4;
    abl_cost want, part;
    memset(&want, 0, sizeof want);
    uint64_t last = 0;
    size_t calls = 0;
    for (int i = 0; i < 200; i++) {
        double v = i == 199 ? 700 : floor(pow(700.0, i / 199.0) + 0.5);
        uint64_t n = v < 1 ? 1 : (uint64_t)v;
        if (n <= last)
            continue;
        last = n;
        sc.context = n;
        assert_int_equal(abl_predict_estimate(&sc, &part), ABL_OK);
        abl_cost_add(&want, &part);
        calls++;
    }
    abl_plot_fraction_plan p;
    assert_int_equal(abl_plot_fraction_plan_make(&fc, &p), ABL_OK);
    assert_int_equal(p.plan.nsteps, calls);
    assert_cost_equal(&p.plan.cost, &want);
    abl_cost est;
    assert_int_equal(abl_plot_fraction_estimate(&fc, &est), ABL_OK);
    assert_cost_equal(&est, &want);
    abl_plot plot;
    char *err = NULL;
    assert_int_equal(abl_plot_fraction_run_plan(&p, &plot, &err), ABL_OK);
    free(err);
    assert_true(abl_plan_done(&p.plan));
    abl_plot_free(&plot);
    abl_plot_fraction_plan_free(&p);
}

/* The zero map = one emulation at its N. */
static void test_plot_blindmap(void **state)
{
    (void)state;
    abl_plot_blindmap_config mc;
    abl_plot_blindmap_config_default(&mc);
    mc.heads = 4;
    mc.context = 300;
    mc.threads = 1;
    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    eager(&mc.model_dtype, &sc.pipeline);
    sc.heads = 4;
    sc.context = 300;
    sc.threads = 1;
    abl_cost want;
    assert_int_equal(abl_simulate_estimate(&sc, &want), ABL_OK);
    abl_plot_blindmap_plan p;
    assert_int_equal(abl_plot_blindmap_plan_make(&mc, &p), ABL_OK);
    assert_int_equal(p.plan.nsteps, 1);
    assert_string_equal(p.plan.steps[0].what, "simulate");
    assert_cost_equal(&p.plan.cost, &want);
    abl_cost est;
    assert_int_equal(abl_plot_blindmap_estimate(&mc, &est), ABL_OK);
    assert_cost_equal(&est, &want);
    abl_plot plot;
    char *err = NULL;
    assert_int_equal(abl_plot_blindmap_run_plan(&p, &plot, &err), ABL_OK);
    free(err);
    assert_true(abl_plan_done(&p.plan));
    abl_plot_free(&plot);
    abl_plot_blindmap_plan_free(&p);
}

/* The HTML page = the predictor + the design search (one head, ABL_DESIGN_SEARCH_PREDICTIONS times) +
 * the fraction plot's kernel curve + the zero map (the pictures' parts where this build draws). */
static void test_html(void **state)
{
    (void)state;
    abl_html_config c;
    memset(&c, 0, sizeof c);
    assert_int_equal(abl_format_lookup("bf16", &c.format), ABL_OK);
    c.convention = ABL_CONV_PAPER;
    c.heads = 8;
    c.context = 1024;
    c.threads = 1;

    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    eager(&c.format, &sc.pipeline);
    sc.heads = 8;
    sc.context = 1024;
    abl_cost want, part;
    memset(&want, 0, sizeof want);
    assert_int_equal(abl_predict_estimate(&sc, &part), ABL_OK);
    abl_cost_add(&want, &part);
    abl_simulate_config one = sc;
    abl_schedule_spec one_slope; /* the design search's trial slope, as the user would write it */
    assert_int_equal(abl_schedule_spec_parse("slopes:1", &one_slope, NULL), ABL_OK);
    one.slopes = &one_slope;
    one.heads = 1;
    one.threads = 1;
    assert_int_equal(abl_predict_estimate(&one, &part), ABL_OK);
    abl_schedule_spec_free(&one_slope);
    part.units *= ABL_DESIGN_SEARCH_PREDICTIONS;
    part.seconds *= ABL_DESIGN_SEARCH_PREDICTIONS;
    abl_cost_add(&want, &part);
    int pictures = abl_plot_available();
    if (pictures) {
        abl_convention conv = ABL_CONV_PAPER;
        abl_pipeline_spec pipes[1] = {{"eager", "eager", NULL, 0}}; /* the eager preset, no override */
        abl_plot_fraction_config fc;
        abl_plot_fraction_config_default(&fc);
        fc.formats = &c.format;
        fc.conventions = &conv;
        fc.heads = 8;
        fc.max_context = 1024;
        fc.pipelines = pipes;
        fc.npipelines = 1;
        assert_int_equal(abl_plot_fraction_estimate(&fc, &part), ABL_OK);
        assert_true(part.seconds > 0);
        abl_cost_add(&want, &part);
        abl_plot_blindmap_config mc;
        abl_plot_blindmap_config_default(&mc);
        mc.heads = 8;
        mc.context = ABL_HTML_BLINDMAP_CONTEXT < 1024 ? ABL_HTML_BLINDMAP_CONTEXT : 1024;
        mc.threads = 1;
        assert_int_equal(abl_plot_blindmap_estimate(&mc, &part), ABL_OK);
        abl_cost_add(&want, &part);
    }

    abl_html_plan p;
    assert_int_equal(abl_html_plan_make(&c, &p), ABL_OK);
    assert_int_equal(p.plan.nsteps, pictures ? 4 : 2);
    assert_string_equal(p.plan.steps[0].what, "predict");
    assert_string_equal(p.plan.steps[1].what, "design search");
    assert_cost_equal(&p.plan.cost, &want);
    abl_cost est;
    assert_int_equal(abl_html_report_estimate(&c, &est), ABL_OK);
    assert_cost_equal(&est, &want);
    char *buf = NULL, *err = NULL;
    size_t len = 0;
    assert_int_equal(abl_html_run_plan(&p, &buf, &len, &err), ABL_OK);
    free(err);
    assert_true(abl_plan_done(&p.plan));
    if (pictures) {
        assert_true(abl_plan_done(&p.fraction.plan));
        assert_true(abl_plan_done(&p.blindmap.plan));
        assert_int_equal(p.plan.steps[2].calls, p.fraction.plan.nsteps);
    }
    free(buf);
    abl_html_plan_free(&p);
}

/* The kernel columns of tables 1 and 5: the cost is the predictor's at each computed row (the model's
 * catalogue settings at the row's window, priced here from abl_model_spec_from_catalogue); a row that
 * repeats the previous row's computation (table 5's bloom-1b1 after bloom-560m) and a skipped row cost
 * nothing; the table runs every planned row once. */
static void check_table(int table)
{
    abl_table_kernel_plan p;
    assert_int_equal(abl_table_kernel_plan_make(table, NULL, &p), ABL_OK);
    assert_true(p.plan.nsteps > 0);
    abl_cost want;
    memset(&want, 0, sizeof want);
    int predicted = 0, reused = 0;
    for (size_t i = 0; i < p.plan.nsteps; i++) {
        const abl_plan_step *s = &p.plan.steps[i];
        abl_cost part;
        memset(&part, 0, sizeof part);
        if (strcmp(s->what, "predict") == 0) {
            abl_model_spec spec;
            assert_int_equal(abl_model_spec_from_catalogue(p.models[i], &spec), ABL_OK);
            abl_simulate_config sc;
            memset(&sc, 0, sizeof sc);
            assert_int_equal(abl_pipeline_build(&spec.pipeline, &spec.dtype, &sc.pipeline), ABL_OK);
            abl_schedule_spec sched;
            assert_int_equal(abl_model_spec_schedule(&spec, &sched), ABL_OK);
            sc.heads = spec.heads;
            abl_model_spec_free(&spec);
            sc.slopes = &sched;
            sc.context = s->context;
            assert_int_equal(abl_predict_estimate(&sc, &part), ABL_OK);
            abl_schedule_spec_free(&sched);
            assert_true(part.seconds > 0);
            predicted++;
        } else if (strcmp(s->what, "reuse") == 0) {
            assert_true(i > 0);
            assert_int_equal(s->heads, p.plan.steps[i - 1].heads);
            assert_true(s->context == p.plan.steps[i - 1].context);
            assert_int_equal(table, 5);
            reused++;
        } else {
            assert_string_equal(s->what, "skip");
        }
        assert_cost_equal(&s->cost, &part);
        abl_cost_add(&want, &part);
    }
    assert_true(predicted > 0);
    if (table == 5)
        assert_true(reused > 0);
    assert_cost_equal(&p.plan.cost, &want);
    abl_cost est;
    assert_int_equal(abl_table_kernel_estimate(table, NULL, &est), ABL_OK);
    assert_cost_equal(&est, &want);
    abl_paper_options o;
    abl_paper_options_default(&o);
    abl_report *r = NULL;
    if (table == 1)
        assert_int_equal(abl_table1_report_plan(&o, &p, &r), ABL_OK);
    else
        assert_int_equal(abl_table5_report_plan(NULL, &o, &p, &r), ABL_OK);
    assert_true(abl_plan_done(&p.plan));
    assert_int_equal(p.next, p.plan.nsteps);
    abl_report_free(r);
    abl_table_kernel_plan_free(&p);
}

static void test_table1(void **state)
{
    (void)state;
    check_table(1);
}

static void test_table5(void **state)
{
    (void)state;
    check_table(5);
}

/* Figure 1a with the paper's settings: the heads' analysis (priced at N = 4096, the axis' end: an upper
 * bound of the run's N = 1 analysis) and 16 heads x 65 points (0, 64, ..., 4096) at ABL_FIGURE_RATE
 * values a second; counted in values. */
static void test_figure(void **state)
{
    (void)state;
    abl_figure_config c;
    abl_figure_config_default(&c, 0);
    abl_analysis_config ac;
    memset(&ac, 0, sizeof ac);
    ac.format = c.format;
    ac.convention = c.convention;
    ac.heads = 16;
    ac.context = 4096;
    abl_cost layer;
    assert_int_equal(abl_analysis_estimate(&ac, &layer), ABL_OK);
    abl_figure_plan p;
    assert_int_equal(abl_figure_plan_make(&c, &p), ABL_OK);
    assert_int_equal(p.plan.nsteps, 2);
    assert_true(p.plan.cost.units == 16 * 65);
    assert_true(p.plan.cost.seconds == layer.seconds + 16 * 65 / ABL_FIGURE_RATE);
    assert_string_equal(p.plan.cost.unit_name, "values (points x heads)");
    abl_cost est;
    assert_int_equal(abl_figure_estimate_config(&c, 0, &est), ABL_OK);
    assert_cost_equal(&est, &p.plan.cost);
    abl_figure f;
    assert_int_equal(abl_figure_run_plan(&p, &f), ABL_OK);
    assert_true(abl_plan_done(&p.plan));
    assert_int_equal(f.points, 65);
    assert_int_equal(f.heads, 16);
    abl_figure_free(&f);
    abl_figure_plan_free(&p);
}

/* design --heads 4 --ctx 64 (keep all): the search (ABL_DESIGN_SEARCH_PREDICTIONS one-head predictions
 * and the check one slope beyond), the verification (the predictor and the emulation on the 4 heads),
 * two min-logit searches per head and the clamp, each priced by its public estimate; the run makes each
 * planned call once and its answer passes the checks the plan lists (the slopes verified, every min
 * logit and the clamp present). */
static void test_design(void **state)
{
    (void)state;
    abl_design_job j;
    memset(&j, 0, sizeof j);
    abl_format bf16;
    assert_int_equal(abl_format_lookup("bf16", &bf16), ABL_OK);
    eager(&bf16, &j.cfg.pipeline);
    j.cfg.context = 64;
    j.cfg.threads = 1;
    j.mode = ABL_DESIGN_KEEP_ALL;
    j.heads = 4;
    j.checks = 1;

    abl_simulate_config one;
    memset(&one, 0, sizeof one);
    one.pipeline = j.cfg.pipeline;
    abl_schedule_spec one_slope; /* the search's trial slope, as the user would write it */
    assert_int_equal(abl_schedule_spec_parse("slopes:1", &one_slope, NULL), ABL_OK);
    one.slopes = &one_slope;
    one.heads = 1;
    one.context = 64;
    one.threads = 1;
    abl_cost want, part, verify;
    memset(&want, 0, sizeof want);
    memset(&verify, 0, sizeof verify);
    assert_int_equal(abl_predict_estimate(&one, &part), ABL_OK);
    abl_schedule_spec_free(&one_slope);
    part.units *= ABL_DESIGN_SEARCH_PREDICTIONS + 1;
    part.seconds *= ABL_DESIGN_SEARCH_PREDICTIONS + 1;
    abl_cost_add(&want, &part);
    abl_simulate_config layer = one;
    layer.slopes = NULL;
    layer.heads = 4;
    assert_int_equal(abl_predict_estimate(&layer, &part), ABL_OK);
    abl_cost_add(&verify, &part);
    assert_int_equal(abl_simulate_estimate(&layer, &part), ABL_OK);
    abl_cost_add(&verify, &part);
    abl_cost_add(&want, &verify);
    assert_int_equal(abl_design_checks_estimate(&j.cfg, 4, 2, 0, &part), ABL_OK);
    assert_true(part.units == 4.0 * 2 * ABL_DESIGN_MIN_LOGIT_ROWS * 64);
    abl_cost_add(&want, &part);
    assert_int_equal(abl_design_checks_estimate(&j.cfg, 4, 0, 1, &part), ABL_OK);
    assert_true(part.units == 4.0 * ABL_DESIGN_CLAMP_ROWS * 64);
    abl_cost_add(&want, &part);

    abl_design_plan p;
    assert_int_equal(abl_design_plan_make(&j, &p), ABL_OK);
    assert_int_equal(p.plan.nsteps, 4);
    assert_string_equal(p.plan.steps[0].what, "design search");
    assert_string_equal(p.plan.steps[1].what, "verify");
    assert_string_equal(p.plan.steps[2].what, "min logit");
    assert_int_equal(p.plan.steps[2].calls, 8);
    assert_string_equal(p.plan.steps[3].what, "clamp");
    assert_cost_equal(&p.plan.cost, &want);
    abl_design_result r;
    assert_int_equal(abl_design_run_plan(&p, NULL, &r), ABL_OK);
    assert_true(abl_plan_done(&p.plan));
    assert_int_equal(r.n, 4);
    assert_non_null(r.slopes);
    assert_int_equal(r.simulated, 1);
    for (int i = 0; i < 8; i++)
        assert_non_null(r.min_logits[i]);
    assert_true(r.have_clamp);
    abl_design_result_free(&r);
    abl_design_plan_free(&p);

    /* slopes only (--format python): no min logits, no clamp, and the run stops after the check */
    j.checks = 0;
    assert_int_equal(abl_design_plan_make(&j, &p), ABL_OK);
    assert_int_equal(p.plan.nsteps, 2);
    assert_int_equal(abl_design_run_plan(&p, NULL, &r), ABL_OK);
    assert_true(abl_plan_done(&p.plan));
    assert_null(r.min_logits);
    assert_false(r.have_clamp);
    abl_design_result_free(&r);
    abl_design_plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_add),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_plot_fraction),
        cmocka_unit_test(test_plot_blindmap),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_table1),
        cmocka_unit_test(test_table5),
        cmocka_unit_test(test_figure),
        cmocka_unit_test(test_design),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
