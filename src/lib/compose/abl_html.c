/* alibi-blind: the one-page HTML report (inline SVG pictures, inline CSS, no script, no external
 * asset). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include "abl/analysis/analysis.h"
#include "abl/core/fraction.h"
#include "abl/core/threshold.h"
#include "abl/design/design.h"
#include "abl/kernel/simulate.h"
#include "abl/compose/html.h"
#include "abl/compose/plot_kinds.h"
#include "abl/report/plot.h"
#include "abl_internal.h"
#include "report/abl_report_internal.h"
#include "kernel/abl_kernel_internal.h"
#include "compose/abl_compose_internal.h"

void abl_html_escape(FILE *f, const char *text)
{
    /* Text from a file or an argument: neutralised first (no raw control character on the page or in
     * its source lines), then the markup characters. */
    char *n = abl_neutral_text(text);
    const char *s = n != NULL ? n : "";
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
    free(n);
}

static void row2(FILE *f, const char *key, const char *value)
{
    fputs("<tr><th>", f);
    abl_html_escape(f, key);
    fputs("</th><td>", f);
    abl_html_escape(f, value);
    fputs("</td></tr>\n", f);
}

/* The SVG of a plot without its XML prologue, scaled to the page width. */
static abl_status put_svg(FILE *f, abl_plot *p, const char *caption, char **msg)
{
    abl_plot_render_options o;
    abl_plot_render_options_default(&o);
    o.device = ABL_PLOT_SVG;
    char *svg = NULL;
    size_t len = 0;
    abl_status st = abl_plot_render(p, &o, &svg, &len, msg);
    abl_plot_free(p);
    if (st != ABL_OK)
        return st;
    char *start = strstr(svg, "<svg");
    if (start == NULL) {
        free(svg);
        return ABL_ERR_UNSUPPORTED;
    }
    /* The root's fixed size in points gives way to the page width (the viewBox keeps the shape). */
    char *end = strchr(start, '>');
    fputs("<figure>\n<svg class=\"plot\" role=\"img\"", f);
    for (char *a = start + 4; end != NULL && a < end;) {
        /* copy the root attributes except width= and height= */
        while (a < end && (*a == ' ' || *a == '\n' || *a == '\t' || *a == '\r'))
            a++;
        if (a >= end)
            break;
        char *eq = memchr(a, '=', (size_t)(end - a));
        if (eq == NULL || eq[1] != '"')
            break;
        char *close = memchr(eq + 2, '"', (size_t)(end - eq - 2));
        if (close == NULL)
            break;
        size_t nlen = (size_t)(eq - a);
        if (!((nlen == 5 && strncmp(a, "width", 5) == 0) || (nlen == 6 && strncmp(a, "height", 6) == 0))) {
            fputc(' ', f);
            fwrite(a, 1, (size_t)(close + 1 - a), f);
        }
        a = close + 1;
    }
    fputs(">", f);
    if (end != NULL)
        fwrite(end + 1, 1, len - (size_t)(end + 1 - svg), f);
    fputs("<figcaption>", f);
    abl_html_escape(f, caption);
    fputs("</figcaption>\n</figure>\n", f);
    free(svg);
    return ABL_OK;
}

/* Design (spec: the design command): slopes that keep every head seeing at N on this kernel, and the
 * least restrictive clamp for the layer's own slopes, both decided by the exact predictor. */
static void design_section(FILE *f, const abl_pipeline *pl, uint64_t n, const abl_schedule_spec *spec, int heads,
                           int threads)
{
    abl_design_config dc;
    memset(&dc, 0, sizeof dc);
    dc.pipeline = *pl;
    dc.context = n;
    dc.threads = threads;
    fputs("<h2>Design</h2>\n", f);
    float *rec = malloc((size_t)heads * sizeof *rec);
    if (rec != NULL && abl_design_keep_all(&dc, heads, rec) == ABL_OK) {
        fprintf(f, "<p>Slopes that keep every head seeing every key of the %llu × %llu causal matrix on this kernel "
                   "(steepest head as steep as allowed, the Press spread below it; binary32):</p>\n"
                   "<table>\n<tr><th>head</th><th>recommended slope</th></tr>\n",
                (unsigned long long)n, (unsigned long long)n);
        for (int h = 0; h < heads; h++)
            fprintf(f, "<tr><td class=\"n\">%d</td><td class=\"n\">%.9g</td></tr>\n", h + 1, (double)rec[h]);
        fputs("</table>\n", f);
        char *sp = abl_design_slopes_spec(rec, heads);
        if (sp != NULL) {
            fputs("<p class=\"note\">As a schedule for --slopes: <code>", f);
            abl_html_escape(f, sp);
            fputs("</code></p>\n", f);
            free(sp);
        }
    } else {
        fputs("<p class=\"note\">No slope keeps every key at this context on this kernel.</p>\n", f);
    }
    free(rec);
    float *held = NULL;
    int nh = 0;
    if (abl_design_held_slopes(&dc, spec, heads, &held, &nh) == ABL_OK) {
        abl_design_clamp cl;
        abl_design_clamp_init(&cl);
        if (abl_design_clamp_find(&dc, held, nh, 4, &cl) == ABL_OK) {
            fputs("<table>\n", f);
            row2(f, "least restrictive clamp c (this layer's slopes)", cl.clamp_text ? cl.clamp_text : "");
            row2(f, "its margin (nats)", cl.margin_text ? cl.margin_text : "");
            char t[96]; /* bounded: a margin of 4 decimals (abl_design_clamp_find) and an int */
            snprintf(t, sizeof t, "margin %s nats, %d head(s) left blind",
                     cl.paper_margin_text ? cl.paper_margin_text : "?", cl.paper_failing);
            row2(f, "the paper's clamp -87", t);
            fputs("</table>\n", f);
        }
        abl_design_clamp_clear(&cl);
        free(held);
    }
}

static const char style[] =
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#111;background:#fff}"
    "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.2em .6em}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4;text-align:left}"
    "figure{margin:1.5em 0}svg.plot{width:100%;height:auto;display:block;border:1px solid #eee}"
    "figcaption{font-size:.9em;color:#444}.note{font-size:.9em;color:#444}code{word-break:break-all}";

/* The kernel when the caller names none: eager, as a value (no text parsed). */
static const abl_pipeline_spec k_eager = {"eager", "eager", NULL, 0};

/* A step of the page's plan: a leaf's cost (none when its estimate fails: the run reports it). */
static abl_status plan_step(abl_plan *p, const char *what, abl_status est, const abl_cost *c, uint64_t context,
                            int heads, long *index)
{
    *index = (long)p->nsteps;
    return abl_plan_leaf(p, what, est, c, context, heads);
}

/* A sub-plan as one step of the page: its cost, the calls its own steps stand for. */
static abl_status plan_sub(abl_plan *p, const char *what, const abl_plan *sub, uint64_t context, int heads,
                           long *index)
{
    abl_status st = plan_step(p, what, ABL_OK, &sub->cost, context, heads, index);
    if (st == ABL_OK) {
        unsigned long calls = 0;
        for (size_t i = 0; i < sub->nsteps; i++)
            calls += sub->steps[i].calls;
        p->steps[*index].calls = calls > 0 ? calls : 1;
    }
    return st;
}

/* The page's kernel work in the order the page runs it: the predictor's first blind distances, the
 * design section's slope search, the fraction plot's kernel curve, the zero map's emulation. */
static abl_status html_plan_steps(abl_html_plan *p)
{
    const abl_html_config *c = &p->config;
    abl_simulate_config *sc = &p->predict;
    sc->slopes = c->slopes;
    sc->heads = c->heads;
    sc->context = c->context;
    abl_cost part;
    abl_status st = ABL_OK;
    int predicted = c->context >= 2 && c->context <= ABL_HTML_PREDICT_MAX_CONTEXT &&
                    abl_predict_estimate(sc, &part) == ABL_OK;
    int checked = abl_pipeline_check_msg(&sc->pipeline, NULL) == ABL_OK;
    int pictures = abl_plot_available();
    if (predicted) {
        st = plan_step(&p->plan, "predict", ABL_OK, &part, c->context, c->heads, &p->step_predict);
        if (st == ABL_OK && checked) {
            /* the search predicts one head ABL_DESIGN_SEARCH_PREDICTIONS times */
            abl_simulate_config one = *sc;
            const float unit = 1.0f; /* one slope, as the design search tries them */
            abl_status est = abl_design_slopes_schedule(&unit, 1, &p->one_slope);
            one.slopes = &p->one_slope;
            one.heads = 1;
            one.threads = c->threads;
            if (est == ABL_OK)
                est = abl_predict_estimate(&one, &part);
            part.units *= ABL_DESIGN_SEARCH_PREDICTIONS;
            part.seconds *= ABL_DESIGN_SEARCH_PREDICTIONS;
            st = plan_step(&p->plan, "design search", est, &part, c->context, 1, &p->step_design);
        }
        if (st == ABL_OK && pictures && c->context <= 4096) {
            abl_plot_fraction_config fc;
            abl_plot_fraction_config_default(&fc);
            fc.formats = &p->config.format;
            fc.conventions = &p->config.convention;
            fc.heads = c->heads;
            fc.slopes = c->slopes;
            fc.max_context = c->context;
            fc.pipelines = p->pipe;
            fc.npipelines = 1;
            fc.model = c->model != NULL ? c->model->name : NULL;
            if (abl_plot_fraction_plan_make(&fc, &p->fraction) == ABL_OK)
                st = plan_sub(&p->plan, "fraction plot", &p->fraction.plan, c->context, c->heads, &p->step_fraction);
        }
    }
    if (st == ABL_OK && pictures && checked && c->context >= 2) {
        abl_plot_blindmap_config mc;
        abl_plot_blindmap_config_default(&mc);
        mc.pipeline = p->pipe;
        mc.model_dtype = c->format;
        mc.heads = c->heads;
        mc.slopes = c->slopes;
        mc.context = c->context < ABL_HTML_BLINDMAP_CONTEXT ? c->context : ABL_HTML_BLINDMAP_CONTEXT;
        mc.threads = c->threads;
        mc.model = c->model != NULL ? c->model->name : NULL;
        if (abl_plot_blindmap_plan_make(&mc, &p->blindmap) == ABL_OK)
            st = plan_sub(&p->plan, "zero map", &p->blindmap.plan, mc.context, c->heads, &p->step_blindmap);
    }
    return st;
}

abl_status abl_html_plan_make(const abl_html_config *c, abl_html_plan *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->config = *c;
    out->pipe = c->pipeline != NULL ? c->pipeline : &k_eager;
    out->pipeline = out->pipe->text != NULL ? out->pipe->text : "eager";
    out->step_predict = out->step_design = out->step_fraction = out->step_blindmap = -1;
    if (abl_pipeline_build(out->pipe, &c->format, &out->predict.pipeline) != ABL_OK)
        return ABL_ERR_UNSUPPORTED;
    abl_status st = html_plan_steps(out);
    if (st != ABL_OK)
        abl_html_plan_free(out);
    return st;
}

void abl_html_plan_free(abl_html_plan *p)
{
    if (p == NULL)
        return;
    abl_plot_fraction_plan_free(&p->fraction);
    abl_plot_blindmap_plan_free(&p->blindmap);
    abl_schedule_spec_free(&p->one_slope);
    abl_plan_free(&p->plan);
}

abl_status abl_html_report_estimate(const abl_html_config *c, abl_cost *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_html_plan p;
    abl_status st = abl_html_plan_make(c, &p);
    if (st == ABL_OK)
        *out = p.plan.cost;
    abl_html_plan_free(&p);
    return st;
}

/* A sub-plan's step of the page counts the calls its run made. */
static void count_sub(abl_html_plan *p, long step, const abl_plan *sub)
{
    if (step < 0)
        return;
    for (size_t i = 0; i < sub->nsteps; i++)
        p->plan.steps[step].executed += sub->steps[i].executed;
}

abl_status abl_html_report(const abl_html_config *c, char **buf, size_t *len, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (c == NULL || buf == NULL || len == NULL || c->context < 1 || c->context > ABL_MAX_CONTEXT)
        return ABL_ERR_INVALID_ARGUMENT;
    *buf = NULL;
    *len = 0;
    abl_html_plan p;
    abl_status st = abl_html_plan_make(c, &p);
    if (st == ABL_OK) {
        st = abl_html_run_plan(&p, buf, len, msg);
    } else if (st == ABL_ERR_UNSUPPORTED) { /* the pipeline could not be built */
        abl_set_error(msg, "--pipeline: '%s': %s", p.pipeline != NULL ? p.pipeline : "eager", abl_status_message(st));
    }
    abl_html_plan_free(&p);
    return st;
}

abl_status abl_html_run_plan(abl_html_plan *plan, char **buf, size_t *len, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (plan == NULL || buf == NULL || len == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    const abl_html_config *c = &plan->config;
    if (c->context < 1 || c->context > ABL_MAX_CONTEXT)
        return ABL_ERR_INVALID_ARGUMENT;
    *buf = NULL;
    *len = 0;
    const char *pipe = plan->pipeline;
    abl_pipeline pl = plan->predict.pipeline;
    char text[512]; /* bounded: counts, percents and the convention's name with its threshold */
    abl_analysis a;
    abl_status st = abl_plot_layer(&c->format, c->convention, c->heads, c->slopes, c->context, &a);
    if (st != ABL_OK)
        return st;
    /* The kernel's own first blind distance per head (exact predictor), where it applies. */
    abl_prediction pr;
    memset(&pr, 0, sizeof pr);
    int predicted = 0;
    if (plan->step_predict >= 0) {
        plan->plan.steps[plan->step_predict].executed++;
        predicted = abl_predict_run(&plan->predict, &pr) == ABL_OK;
    }

    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (f == NULL) {
        abl_prediction_free(&pr);
        abl_analysis_free(&a);
        return ABL_ERR_NO_MEMORY;
    }
    abl_text title = {0};
    if (c->model != NULL)
        abl_text_add(&title, "alibi-blind report: %s at %llu tokens", c->model->name, (unsigned long long)c->context);
    else
        abl_text_add(&title, "alibi-blind report: a %d-head layer at %llu tokens", a.heads,
                     (unsigned long long)c->context);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    abl_html_escape(f, abl_text_str(&title));
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", style);
    abl_html_escape(f, abl_text_str(&title));
    free(title.s);
    fputs("</h1>\n<p class=\"note\">Where, in finite precision, the heads of this ALiBi layer go blind: the "
          "distance δ beyond which exp(−m·d) underflows to zero, and the share of the attention matrix lost. "
          "Definitions: docs/spec.md.</p>\n",
          f);

    /* The model and the kernel. */
    fputs("<h2>Model and kernel</h2>\n<table>\n", f);
    if (c->model != NULL) {
        const abl_model *m = c->model;
        row2(f, "model", m->name);
        if (m->hf_id != NULL)
            row2(f, "Hugging Face id", m->hf_id);
        if (m->family != NULL)
            row2(f, "family", m->family->name);
        snprintf(text, sizeof text, "%d", m->heads);
        row2(f, "heads per layer", text);
        if (m->layers > 0) {
            snprintf(text, sizeof text, "%d", m->layers);
            row2(f, "layers", text);
        }
        if (m->context > 0) {
            snprintf(text, sizeof text, "%llu", (unsigned long long)m->context);
            row2(f, "trained context", text);
        }
        if (m->source != NULL)
            row2(f, "source", m->source);
    } else {
        if (c->config != NULL) {
            row2(f, "config", c->config);
            row2(f, "model_type", c->model_type != NULL && c->model_type[0] ? c->model_type : "(none)");
        }
        snprintf(text, sizeof text, "%d", a.heads);
        row2(f, "heads", text);
    }
    row2(f, "slopes", a.schedule.spec);
    row2(f, "dtype", c->format.name);
    char tau[64]; /* bounded: a threshold to 10 decimals */
    abl_threshold_into(&c->format, abl_convention_tau_kind(c->convention), 10, tau, sizeof tau);
    snprintf(text, sizeof text, "%s (τ = %s)", abl_convention_name(c->convention), tau);
    row2(f, "convention", text);
    snprintf(text, sizeof text, "%llu", (unsigned long long)c->context);
    row2(f, "context N", text);
    row2(f, "kernel (pipeline)", pipe);
    abl_text fields = {0};
    abl_pipeline_describe_text(&pl, &fields);
    row2(f, "kernel roundings", abl_text_str(&fields));
    free(fields.s);
    fputs("</table>\n", f);

    /* Fractions. */
    char rowp[64], matp[64]; /* bounded: fractions in [0, 1] as percents with 2 decimals */
    abl_put_text(rowp, sizeof rowp, abl_fraction_percent_text(a.row_fraction, 2));
    abl_put_text(matp, sizeof matp, abl_fraction_percent_text(a.matrix_fraction, 2));
    fputs("<h2>Fractions</h2>\n<table>\n", f);
    snprintf(text, sizeof text, "%d of %d", a.blind_heads, a.heads);
    row2(f, "heads blind inside the context", text);
    snprintf(text, sizeof text, "%s %%", rowp);
    row2(f, "row fraction (last query row)", text);
    snprintf(text, sizeof text, "%s %%", matp);
    row2(f, "matrix fraction (causal entries)", text);
    if (predicted) {
        double n = (double)c->context, h = (double)pr.heads;
        snprintf(text, sizeof text, "%.2f %%", 100.0 * (double)pr.row_zeros / (h * n));
        row2(f, "row fraction through the kernel (exact zeros)", text);
        snprintf(text, sizeof text, "%.2f %%", 100.0 * (double)pr.matrix_zeros / (h * n * (n + 1) / 2));
        row2(f, "matrix fraction through the kernel (exact zeros)", text);
    }
    fputs("</table>\n", f);

    /* Per head. */
    fputs("<h2>Per head</h2>\n<table>\n<tr><th>rank</th><th>head</th><th>slope</th><th>m</th><th>δ</th>"
          "<th>δ ieee</th><th>blind</th>",
          f);
    if (predicted)
        fputs("<th>first blind d (kernel)</th>", f);
    fputs("<th>row zeros</th><th>row %</th><th>matrix %</th></tr>\n", f);
    mpq_t q;
    mpq_init(q);
    for (int h = 0; h < a.heads; h++) {
        const abl_head_result *r = &a.results[h];
        /* bounded: m to 5 digits, deltas to 12, counts of at most N keys, percents with 2 decimals */
        char d[64], di[64], rz[64], rp[64], mp[64]; /* bounded: see above */
        char *exact = abl_slope_exact_text(&r->slope); /* a slope as written: any length */
        char *m = abl_slope_decimal_text(&r->slope, 5);
        abl_put_text(d, sizeof d, abl_delta_text(&r->delta, 12));
        abl_put_text(di, sizeof di, abl_delta_text(&r->delta_ieee, 12));
        gmp_snprintf(rz, sizeof rz, "%Zd", r->row_blind);
        mpq_set_num(q, r->row_blind);
        mpq_set_den(q, a.row_attended);
        mpq_canonicalize(q);
        abl_put_text(rp, sizeof rp, abl_fraction_percent_text(q, 2));
        mpq_set_num(q, r->matrix_blind);
        mpq_set_den(q, a.matrix_attended);
        mpq_canonicalize(q);
        abl_put_text(mp, sizeof mp, abl_fraction_percent_text(q, 2));
        fprintf(f, "<tr><td class=\"n\">%d</td><td class=\"n\">%d</td><td>", r->rank, r->slope.index);
        abl_html_escape(f, exact != NULL ? exact : "?");
        free(exact);
        fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td>",
                m != NULL ? m : "?", d, di, r->blind_in_context ? "yes" : "no");
        free(m);
        if (predicted) {
            int64_t fb = pr.results[r->slope.index - 1].first_blind;
            if (fb >= 0)
                fprintf(f, "<td class=\"n\">%lld</td>", (long long)fb);
            else
                fputs("<td class=\"n\">none</td>", f);
        }
        fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n", rz, rp, mp);
    }
    mpq_clear(q);
    fputs("</table>\n<p class=\"note\">δ: the first blind distance under the convention; δ ieee: under one "
          "round-to-nearest exp with gradual underflow; first blind d (kernel): the smallest distance with an "
          "exactly-zero weight in the last row through the kernel's roundings (zero logits).</p>\n",
          f);

    if (predicted && plan->step_design >= 0) {
        plan->plan.steps[plan->step_design].executed++;
        design_section(f, &pl, c->context, a.spec, a.heads, c->threads);
    }

    /* Pictures (the tables above stand alone when this build cannot draw). */
    fputs("<h2>Pictures</h2>\n", f);
    if (!abl_plot_available()) {
        fputs("<p class=\"note\">The pictures are missing: " ABL_PLOT_MISSING ".</p>\n", f);
        st = ABL_OK;
        goto finish;
    }
    abl_plot p;
    abl_plot_bias_config bc;
    abl_plot_bias_config_default(&bc);
    bc.format = c->format;
    bc.convention = c->convention;
    bc.heads = a.heads;
    bc.slopes = a.spec;
    bc.max_distance = c->context;
    bc.model = c->model != NULL ? c->model->name : NULL;
    st = abl_plot_bias(&bc, &p);
    if (st == ABL_OK)
        st = put_svg(f, &p, "Figure 1a for this layer: each head's bias −m·d, τ dashed, δ marked.", msg);
    if (st == ABL_OK) {
        abl_plot_fraction_config fc;
        abl_plot_fraction_config_default(&fc);
        fc.formats = &c->format;
        fc.conventions = &c->convention;
        fc.heads = a.heads;
        fc.slopes = a.spec;
        fc.max_context = c->context < 2 ? 2 : c->context;
        fc.model = bc.model;
        if (predicted && plan->step_fraction >= 0) { /* the planned kernel curve */
            abl_plot_fraction_plan *fp = &plan->fraction;
            fp->config.heads = a.heads; /* the closed-form curves and the title: the analysed layer */
            fp->config.slopes = a.spec;
            st = abl_plot_fraction_run_plan(fp, &p, msg);
            count_sub(plan, plan->step_fraction, &fp->plan);
            if (st == ABL_ERR_UNSUPPORTED) /* the formula curves alone */
                st = abl_plot_fraction(&fc, &p, msg);
        } else {
            st = abl_plot_fraction(&fc, &p, msg);
        }
        if (st == ABL_OK)
            st = put_svg(f, &p, "Figure 1b for this layer: underflow fractions against the context.", msg);
    }
    if (st == ABL_OK && plan->step_blindmap >= 0) {
        abl_plot_blindmap_plan *mp = &plan->blindmap;
        const abl_plot_blindmap_config *mc = &mp->config;
        mp->config.head = a.heads <= 64 ? 0 : 1; /* every head as small multiples when they fit */
        {
            abl_status bs = abl_plot_blindmap_run_plan(mp, &p, msg);
            count_sub(plan, plan->step_blindmap, &mp->plan);
            if (bs == ABL_OK) {
                snprintf(text, sizeof text, "Where attention goes blind: exactly-zero weights through %s at N = %llu.",
                         pipe, (unsigned long long)mc->context);
                st = put_svg(f, &p, text, msg);
            } else if (bs != ABL_ERR_UNSUPPORTED) {
                st = bs;
            }
        }
    }
    if (st == ABL_OK) {
        st = abl_plot_mitigations(&c->format, c->convention, &p);
        if (st == ABL_OK)
            st = put_svg(f, &p, "The paper's mitigations (Table 8, nine heads): δ per head for each combination.",
                         msg);
    }
finish:
    fputs("</body>\n</html>\n", f);
    int bad = fclose(f) != 0;
    abl_prediction_free(&pr);
    abl_analysis_free(&a);
    if (st == ABL_OK && bad)
        st = ABL_ERR_NO_MEMORY;
    if (st != ABL_OK) {
        free(out);
        return st;
    }
    *buf = out;
    *len = outlen;
    return ABL_OK;
}
