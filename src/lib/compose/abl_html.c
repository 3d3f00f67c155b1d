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
#include "compose/abl_html_gradient.h"
#include "abl/kernel/backward.h"
#include "compose/abl_html_bidir.h"

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

/* A row whose value the caller made on the heap (freed here; NULL, out of memory, shows as ""). */
static void row2_take(FILE *f, const char *key, char *value)
{
    row2(f, key, value != NULL ? value : "");
    free(value);
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
                           int threads, abl_attention attention)
{
    abl_design_config dc;
    memset(&dc, 0, sizeof dc);
    dc.pipeline = *pl;
    dc.context = n;
    dc.threads = threads;
    dc.attention = attention; /* bidirectional: every row of the N x N matrix (no clamp: a causal last row's) */
    fputs("<h2>Design</h2>\n", f);
    float *rec = malloc((size_t)heads * sizeof *rec);
    if (rec != NULL && abl_design_keep_all(&dc, heads, rec) == ABL_OK) {
        fprintf(f, "<p>Slopes that keep every head seeing every key of the %llu × %llu %s matrix on this kernel "
                   "(steepest head as steep as allowed, the Press spread below it; binary32):</p>\n"
                   "<table>\n<tr><th>head</th><th>recommended slope</th></tr>\n",
                (unsigned long long)n, (unsigned long long)n, abl_attention_name(attention));
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
            row2_take(f, "the paper's clamp -87", abl_strf("margin %s nats, %d head(s) left blind",
                                                           cl.paper_margin_text ? cl.paper_margin_text : "?",
                                                           cl.paper_failing));
            fputs("</table>\n", f);
        }
        abl_design_clamp_clear(&cl);
        free(held);
    }
}

static const char style[] =
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#111;background:#fff}"
    "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:1em 0;display:block;overflow-x:auto;max-width:100%}th,td{border:1px solid #ccc;padding:.2em .6em}"
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
    sc->attention = c->attention;
    int causal = c->attention != ABL_ATTENTION_BIDIRECTIONAL; /* Figure 1b and the zero map are causal */
    abl_cost part;
    abl_status st = ABL_OK;
    int predicted = c->context >= 2 && c->context <= ABL_HTML_PREDICT_MAX_CONTEXT &&
                    abl_predict_estimate(sc, &part) == ABL_OK;
    int checked = abl_pipeline_check_msg(&sc->pipeline, NULL) == ABL_OK;
    int pictures = abl_plot_available();
    if (predicted) {
        st = plan_step(&p->plan, "predict", ABL_OK, &part, c->context, c->heads, &p->step_predict);
        abl_cost grad;   /* the gradient section's backward predictors, one per bound (abl_html_gradient.c):
                          * FlashAttention-2's row sums are the only ones that cost more than the forward's */
        if (st == ABL_OK && abl_backward_estimate(sc, &grad) == ABL_OK && grad.units > 0) {
            grad.units *= ABL_HTML_GRADIENT_BOUNDS;
            grad.seconds *= ABL_HTML_GRADIENT_BOUNDS;
            abl_cost_add(&p->plan.cost, &grad);
        }
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
        if (st == ABL_OK && pictures && causal && c->context <= 4096) {
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
    if (st == ABL_OK && pictures && causal && checked && c->context >= 2) {
        abl_plot_blindmap_config mc;
        abl_plot_blindmap_config_default(&mc);
        mc.pipeline = p->pipe;
        mc.model_dtype = c->format;
        mc.heads = c->heads;
        mc.slopes = c->slopes;
        mc.context = c->context < ABL_HTML_BLINDMAP_CONTEXT ? c->context : ABL_HTML_BLINDMAP_CONTEXT;
        while (mc.context > 256 && (double)c->heads * (double)mc.context * (double)(mc.context + 1) / 2 >
                                       (double)ABL_HTML_BLINDMAP_WEIGHTS)
            mc.context /= 2;
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

/* The page's head: its title (the model, or the layer's head count, at N) and what the page shows. */
static void html_head(FILE *f, const abl_html_config *c, const abl_analysis *a)
{
    char *title = c->model != NULL ? abl_strf("alibi-blind report: %s at %llu tokens", c->model->name,
                                              (unsigned long long)c->context)
                                   : abl_strf("alibi-blind report: a %d-head layer at %llu tokens", a->heads,
                                              (unsigned long long)c->context);
    const char *t = title != NULL ? title : "";
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    abl_html_escape(f, t);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", style);
    abl_html_escape(f, t);
    free(title);
    fputs("</h1>\n<p class=\"note\">Where, in finite precision, the heads of this ALiBi layer go blind: the "
          "distance δ beyond which exp(−m·d) underflows to zero, and the share of the attention matrix lost. "
          "Definitions: docs/spec.md.</p>\n",
          f);
}

/* Where the layer comes from: the catalogue's entry (id, family, sizes, source) or the config.json. */
static void html_source_rows(FILE *f, const abl_html_config *c, const abl_analysis *a)
{
    if (c->model != NULL) {
        const abl_model *m = c->model;
        row2(f, "model", m->name);
        if (m->hf_id != NULL)
            row2(f, "Hugging Face id", m->hf_id);
        if (m->family != NULL)
            row2(f, "family", m->family->name);
        row2_take(f, "heads per layer", abl_strf("%d", m->heads));
        if (m->layers > 0)
            row2_take(f, "layers", abl_strf("%d", m->layers));
        if (m->context > 0)
            row2_take(f, "trained context", abl_strf("%llu", (unsigned long long)m->context));
        if (m->source != NULL)
            row2(f, "source", m->source);
        return;
    }
    if (c->config != NULL) {
        row2(f, "config", c->config);
        row2(f, "model_type", c->model_type != NULL && c->model_type[0] ? c->model_type : "(none)");
    }
    row2_take(f, "heads", abl_strf("%d", a->heads));
}

/* The model and the kernel: the layer's source, slopes, dtype, convention with τ, N and the kernel. */
static void html_model_section(FILE *f, const abl_html_plan *plan, const abl_analysis *a)
{
    const abl_html_config *c = &plan->config;
    fputs("<h2>Model and kernel</h2>\n<table>\n", f);
    html_source_rows(f, c, a);
    row2(f, "slopes", a->schedule.spec);
    row2(f, "dtype", c->format.name);
    char *tau = NULL; /* τ to 10 decimals ("?" when it cannot be decided) */
    if (abl_threshold_string(&c->format, abl_convention_tau_kind(c->convention), 10, &tau) != ABL_OK) {
        free(tau);
        tau = NULL;
    }
    row2_take(f, "convention", abl_strf("%s (τ = %s)", abl_convention_name(c->convention), tau != NULL ? tau : "?"));
    free(tau);
    row2_take(f, "context N", abl_strf("%llu", (unsigned long long)c->context));
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL)
        abl_html_bidir_model_rows(f);
    row2(f, "kernel (pipeline)", plan->pipeline);
    abl_text fields = {0};
    abl_pipeline_describe_text(&plan->predict.pipeline, &fields);
    row2(f, "kernel roundings", abl_text_str(&fields));
    free(fields.s);
    if (abl_pipeline_modelled_note(&plan->predict.pipeline) != NULL)
        row2(f, "kernel source", abl_pipeline_modelled_note(&plan->predict.pipeline));
    fputs("</table>\n", f);
}

/* A fraction as a percent with 2 decimals and " %" (malloc'd; NULL when out of memory). */
static char *percent_text(const mpq_t q)
{
    char *p = abl_fraction_percent_text(q, 2);
    char *t = abl_strf("%s %%", p != NULL ? p : "");
    free(p);
    return t;
}

/* Fractions: blind heads, the row and matrix fractions (closed form), and through the kernel when
 * predicted (exact zeros of the last row and of the causal matrix). */
static void html_fractions(FILE *f, const abl_html_config *c, const abl_analysis *a, const abl_prediction *pr)
{
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL) {
        abl_html_bidir_fractions(f, c, a, pr); /* end row, middle row, N x N: abl_html_bidir.c */
        return;
    }
    fputs("<h2>Fractions</h2>\n<table>\n", f);
    row2_take(f, "heads blind inside the context", abl_strf("%d of %d", a->blind_heads, a->heads));
    row2_take(f, "row fraction (last query row)", percent_text(a->row_fraction));
    row2_take(f, "matrix fraction (causal entries)", percent_text(a->matrix_fraction));
    if (pr != NULL) {
        double n = (double)c->context, h = (double)pr->heads;
        row2_take(f, "row fraction through the kernel (exact zeros)",
                  abl_strf("%.2f %%", 100.0 * (double)pr->row_zeros / (h * n)));
        row2_take(f, "matrix fraction through the kernel (exact zeros)",
                  abl_strf("%.2f %%", 100.0 * (double)pr->matrix_zeros / (h * n * (n + 1) / 2)));
    }
    if (pr != NULL && pr->influence_differs) {   /* P.V loses keys the weights keep (docs/method.md) */
        double n = (double)c->context, h = (double)pr->heads;
        row2_take(f, "row fraction through the kernel (keys without influence, unit V)",
                  abl_strf("%.2f %%", 100.0 * (double)pr->row_influence_zeros / (h * n)));
        row2_take(f, "matrix fraction through the kernel (keys without influence, unit V)",
                  abl_strf("%.2f %%", 100.0 * (double)pr->matrix_influence_zeros / (h * n * (n + 1) / 2)));
    }
    fputs("</table>\n", f);
}

/* blind / attended as a percent with 2 decimals (malloc'd; NULL when out of memory); q is scratch. */
static char *share_text(mpq_t q, const mpz_t blind, const mpz_t attended)
{
    mpq_set_num(q, blind);
    mpq_set_den(q, attended);
    mpq_canonicalize(q);
    return abl_fraction_percent_text(q, 2);
}

/* A first distance cell ("none" when -1). */
static void html_first_cell(FILE *f, int64_t d)
{
    if (d >= 0)
        fprintf(f, "<td class=\"n\">%lld</td>", (long long)d);
    else
        fputs("<td class=\"n\">none</td>", f);
}

/* One head's row: rank, index, slope as written, m, δ, δ ieee, blind, the kernel's first blind distance
 * (when predicted), the blind keys of the last row and the row and matrix shares. */
static void html_head_row(FILE *f, const abl_analysis *a, const abl_head_result *r, const abl_prediction *pr, mpq_t q)
{
    char *exact = abl_slope_exact_text(&r->slope); /* a slope as written: any length */
    char *m = abl_slope_decimal_text(&r->slope, 5);
    char *d = abl_delta_text(&r->delta, 12), *di = abl_delta_text(&r->delta_ieee, 12);
    char *rz = NULL;
    if (gmp_asprintf(&rz, "%Zd", r->row_blind) < 0)
        rz = NULL;
    char *rp = share_text(q, r->row_blind, a->row_attended), *mp = share_text(q, r->matrix_blind, a->matrix_attended);
    fprintf(f, "<tr><td class=\"n\">%d</td><td class=\"n\">%d</td><td>", r->rank, r->slope.index);
    abl_html_escape(f, exact != NULL ? exact : "?");
    fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td>",
            m != NULL ? m : "?", d != NULL ? d : "", di != NULL ? di : "", r->blind_in_context ? "yes" : "no");
    if (pr != NULL)
        html_first_cell(f, pr->results[r->slope.index - 1].first_blind);
    if (pr != NULL && pr->influence_differs)
        html_first_cell(f, pr->results[r->slope.index - 1].first_influence_zero);
    fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n", rz != NULL ? rz : "",
            rp != NULL ? rp : "", mp != NULL ? mp : "");
    free(exact);
    free(m);
    free(d);
    free(di);
    if (rz != NULL) {
        void (*gmp_free)(void *, size_t);
        mp_get_memory_functions(NULL, NULL, &gmp_free);
        gmp_free(rz, strlen(rz) + 1);
    }
    free(rp);
    free(mp);
}

/* Per head: the table of every head (in the analysis's order) and what its columns mean. */
static void html_per_head(FILE *f, const abl_analysis *a, const abl_prediction *pr)
{
    fputs("<h2>Per head</h2>\n<table>\n<tr><th>rank</th><th>head</th><th>slope</th><th>m</th><th>δ</th>"
          "<th>δ ieee</th><th>blind</th>",
          f);
    if (pr != NULL)
        fputs("<th>first blind d (kernel)</th>", f);
    if (pr != NULL && pr->influence_differs)
        fputs("<th>first no-influence d (kernel)</th>", f);
    fputs("<th>row zeros</th><th>row %</th><th>matrix %</th></tr>\n", f);
    mpq_t q;
    mpq_init(q);
    for (int h = 0; h < a->heads; h++)
        html_head_row(f, a, &a->results[h], pr, q);
    mpq_clear(q);
    fputs("</table>\n<p class=\"note\">δ: the first blind distance under the convention; δ ieee: under one "
          "round-to-nearest exp with gradual underflow; first blind d (kernel): the smallest distance with an "
          "exactly-zero weight in the last row through the kernel's roundings (zero logits).</p>\n",
          f);
    if (pr != NULL && pr->influence_differs)
        fputs("<p class=\"note\">first no-influence d (kernel): the smallest distance whose key contributes nothing "
              "to P·V for unit-scale values (P rounded to the pipeline's pv-dtype, added in pv-accumulate; "
              "docs/method.md, Influence), although its weight may not be 0.</p>\n",
              f);
}

/* Figure 1b for the layer: the planned kernel curve with the formula's when it was predicted (the
 * formula's alone when the kernel cannot be predicted exactly), else the formula's. */
static abl_status html_fraction_plot(abl_html_plan *plan, const abl_analysis *a, int predicted, abl_plot *p,
                                     char **msg)
{
    const abl_html_config *c = &plan->config;
    abl_plot_fraction_config fc;
    abl_plot_fraction_config_default(&fc);
    fc.formats = &c->format;
    fc.conventions = &c->convention;
    fc.heads = a->heads;
    fc.slopes = a->spec;
    fc.max_context = c->context < 2 ? 2 : c->context;
    fc.model = c->model != NULL ? c->model->name : NULL;
    if (!predicted || plan->step_fraction < 0)
        return abl_plot_fraction(&fc, p, msg);
    abl_plot_fraction_plan *fp = &plan->fraction;
    fp->config.heads = a->heads; /* the closed-form curves and the title: the analysed layer */
    fp->config.slopes = a->spec;
    abl_status st = abl_plot_fraction_run_plan(fp, p, msg);
    count_sub(plan, plan->step_fraction, &fp->plan);
    if (st == ABL_ERR_UNSUPPORTED) /* the formula curves alone */
        st = abl_plot_fraction(&fc, p, msg);
    return st;
}

/* The zero map through the kernel, as planned; a kernel that cannot be emulated leaves it out. */
static abl_status html_blindmap(FILE *f, abl_html_plan *plan, const abl_analysis *a, char **msg)
{
    if (plan->step_blindmap < 0)
        return ABL_OK;
    abl_plot_blindmap_plan *mp = &plan->blindmap;
    mp->config.head = a->heads <= 64 ? 0 : 1; /* every head as small multiples when they fit */
    abl_plot p;
    abl_status bs = abl_plot_blindmap_run_plan(mp, &p, msg);
    count_sub(plan, plan->step_blindmap, &mp->plan);
    if (bs == ABL_ERR_UNSUPPORTED)
        return ABL_OK;
    if (bs != ABL_OK)
        return bs;
    char *caption = mp->config.context < plan->config.context
                        ? abl_strf("Where attention goes blind: exactly-zero weights through %s at N = %llu (the page "
                                   "emulates at most %u weights; plot blindmap --ctx %llu draws the whole context).",
                                   plan->pipeline, (unsigned long long)mp->config.context,
                                   (unsigned)ABL_HTML_BLINDMAP_WEIGHTS,
                                   (unsigned long long)(plan->config.context < ABL_PLOT_BLINDMAP_MAX_CONTEXT
                                                            ? plan->config.context
                                                            : ABL_PLOT_BLINDMAP_MAX_CONTEXT))
                        : abl_strf("Where attention goes blind: exactly-zero weights through %s at N = %llu.",
                                   plan->pipeline, (unsigned long long)mp->config.context);
    if (caption == NULL) {
        abl_plot_free(&p);
        return ABL_ERR_NO_MEMORY;
    }
    abl_status st = put_svg(f, &p, caption, msg);
    free(caption);
    return st;
}

/* One more part of the page done (ABL_HTML_PARTS in all). */
static void page_part(const abl_html_config *c, uint64_t done)
{
    if (c->progress.fn != NULL)
        c->progress.fn(c->progress.ctx, done, ABL_HTML_PARTS);
}

/* The kernel's side of Figure 1a: the factor it puts on m·d (bias-scale c; twice when it adds the bias to
 * the scores and again in the mask) and its first blind distances (the prediction's, NULL without one). */
static void html_bias_kernel(const abl_html_plan *plan, const abl_prediction *pr, int64_t *first,
                             abl_plot_bias_config *bc)
{
    const abl_pipeline *pl = &plan->predict.pipeline;
    bc->kernel = plan->pipeline;
    bc->scale = (double)pl->bias_scale.num / (double)pl->bias_scale.den * (pl->bias_add == ABL_BIAS_ADD_BOTH ? 2 : 1);
    if (pr != NULL && first != NULL) {
        for (int h = 0; h < pr->heads; h++)
            first[h] = pr->results[h].first_blind;
        bc->first_blind = first;
    }
}

/* Figure 1a as the kernel forms the bias (scaled as the kernel scales it, its first blind distances
 * marked when predicted). */
static abl_status html_bias_plot(FILE *f, const abl_html_plan *plan, const abl_analysis *a,
                                 const abl_prediction *pr, char **msg)
{
    const abl_html_config *c = &plan->config;
    abl_plot p;
    abl_plot_bias_config bc;
    abl_plot_bias_config_default(&bc);
    bc.format = c->format;
    bc.convention = c->convention;
    bc.heads = a->heads;
    bc.slopes = a->spec;
    bc.max_distance = c->context;
    bc.model = c->model != NULL ? c->model->name : NULL;
    int64_t *first = pr != NULL ? malloc((size_t)pr->heads * sizeof *first) : NULL;
    html_bias_kernel(plan, pr, first, &bc);
    abl_status st = abl_plot_bias(&bc, &p);
    free(first);
    if (st == ABL_OK)
        st = put_svg(f, &p, "Figure 1a for this layer on its kernel: each head's bias as the kernel adds it, τ "
                            "dashed, the kernel's first blind distance marked (zero logits, exact predictor).", msg);
    return st;
}

/* The mitigations on this layer's heads as its kernel scales the bias: the slopes times the kernel's
 * factor (Falcon: 1/8) as binary32 values, or the layer's own schedule when the kernel does not scale. */
static abl_status html_mitigations(FILE *f, const abl_html_plan *plan, const abl_analysis *a, char **msg)
{
    const abl_html_config *c = &plan->config;
    abl_plot_bias_config bc;
    memset(&bc, 0, sizeof bc);
    html_bias_kernel(plan, NULL, NULL, &bc);
    abl_schedule_spec scaled;
    memset(&scaled, 0, sizeof scaled);
    float *m = bc.scale != 1.0 ? malloc((size_t)a->heads * sizeof *m) : NULL;
    abl_status st = bc.scale != 1.0 && m == NULL ? ABL_ERR_NO_MEMORY : ABL_OK;
    for (int h = 0; m != NULL && h < a->heads; h++)
        m[a->results[h].slope.index - 1] = (float)(a->results[h].slope.value * bc.scale);
    if (m != NULL)
        st = abl_design_slopes_schedule(m, a->heads, &scaled);
    free(m);
    abl_plot p;
    if (st == ABL_OK)
        st = abl_plot_mitigations_layer(&c->format, c->convention, a->heads, bc.scale != 1.0 ? &scaled : a->spec,
                                        c->model != NULL ? c->model->name : NULL, &p);
    abl_schedule_spec_free(&scaled);
    char *cap = bc.scale != 1.0 ? abl_strf("The paper's mitigations (§3.4, §4.3) applied to this layer's heads as %s "
                                           "scales the bias (m × %g, binary32): δ per head for each combination, "
                                           "computed as Table 8 computes its rows.", plan->pipeline, bc.scale)
                                : abl_strf("The paper's mitigations (§3.4, §4.3) applied to this layer's heads: δ per "
                                           "head for each combination, computed as Table 8 computes its rows.");
    if (st == ABL_OK)
        st = cap != NULL ? put_svg(f, &p, cap, msg) : (abl_plot_free(&p), ABL_ERR_NO_MEMORY);
    free(cap);
    return st;
}

/* Pictures: Figure 1a and 1b for this layer, the zero map, the mitigations on its heads (the tables above
 * stand alone when this build cannot draw). */
static abl_status html_pictures(FILE *f, abl_html_plan *plan, const abl_analysis *a, const abl_prediction *pr,
                                char **msg)
{
    int predicted = pr != NULL;
    const abl_html_config *c = &plan->config;
    fputs("<h2>Pictures</h2>\n", f);
    if (!abl_plot_available()) {
        fputs("<p class=\"note\">The pictures are missing: " ABL_PLOT_MISSING ".</p>\n", f);
        return ABL_OK;
    }
    abl_plot p;
    abl_status st = html_bias_plot(f, plan, a, pr, msg);
    page_part(c, 3);
    int causal = c->attention != ABL_ATTENTION_BIDIRECTIONAL; /* Figure 1b and the zero map are causal */
    if (st == ABL_OK && !causal)
        abl_html_bidir_pictures_note(f);
    if (st == ABL_OK && causal)
        st = html_fraction_plot(plan, a, predicted, &p, msg);
    if (st == ABL_OK && causal)
        st = put_svg(f, &p, "Figure 1b for this layer: underflow fractions against the context.", msg);
    page_part(c, 4);
    if (st == ABL_OK)
        st = html_blindmap(f, plan, a, msg);
    page_part(c, 5);
    if (st == ABL_OK)
        st = html_mitigations(f, plan, a, msg);
    page_part(c, 6);
    return st;
}

/* The page's body into f, section by section, from the analysed layer and the prediction (NULL: none). */
static abl_status html_page(FILE *f, abl_html_plan *plan, const abl_analysis *a, const abl_prediction *pr,
                            char **msg)
{
    const abl_html_config *c = &plan->config;
    html_head(f, c, a);
    html_model_section(f, plan, a);
    html_fractions(f, c, a, pr);
    html_per_head(f, a, pr);
    if (pr != NULL) /* issue 20: where the gradient goes blind (abl_html_gradient.c) */
        abl_html_gradient_section(f, &plan->predict, pr);
    if (pr != NULL && plan->step_design >= 0) {
        plan->plan.steps[plan->step_design].executed++;
        design_section(f, &plan->predict.pipeline, c->context, a->spec, a->heads, c->threads, c->attention);
    }
    page_part(c, 2);
    abl_status st = html_pictures(f, plan, a, pr, msg);
    fputs("</body>\n</html>\n", f);
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
    abl_analysis a;
    abl_status st = c->attention == ABL_ATTENTION_BIDIRECTIONAL
                         ? abl_html_bidir_layer(c, &a) /* the bidirectional closed forms */
                         : abl_plot_layer(&c->format, c->convention, c->heads, c->slopes, c->context, &a);
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
    page_part(c, 1);
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (f == NULL) {
        abl_prediction_free(&pr);
        abl_analysis_free(&a);
        return ABL_ERR_NO_MEMORY;
    }
    st = html_page(f, plan, &a, predicted ? &pr : NULL, msg);
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
