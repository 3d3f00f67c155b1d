/* alibi-blind: the kinds of plot (bias, fraction, blindmap, mitigations) as chart models, from the
 * exact engines: δ and fractions from the analysis, zero maps from the kernel emulation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include <mpfr.h>
#include "abl/analysis/analysis.h"
#include "abl/analysis/bidirectional.h"
#include "abl/core/fraction.h"
#include "abl/core/threshold.h"
#include "abl/kernel/simulate.h"
#include "abl/paper/paper.h"
#include "abl/compose/plot_kinds.h"
#include "abl/report/plot.h"
#include "abl_internal.h"
#include "kernel/abl_kernel_internal.h"
#include "compose/abl_compose_internal.h"
#include "analysis/abl_analysis_internal.h"

/* τ of a convention as a double and as malloc'd text with 4 decimals ("-87.3365"; "?" when it cannot be
 * decided; *text NULL only when out of memory). */
static double tau_of(const abl_format *fmt, abl_convention conv, char **text)
{
    abl_tau_kind kind = abl_convention_tau_kind(conv);
    *text = NULL;
    if (abl_threshold_string(fmt, kind, 4, text) != ABL_OK) {
        free(*text);
        *text = abl_strf("?");
    }
    return abl_threshold_double(fmt, kind);
}

/* A round number >= |v| for an axis end: 1, 2 or 5 times a power of ten. */
static double nice_ceil(double v)
{
    if (!(v > 0))
        return 1;
    double p = pow(10.0, floor(log10(v)));
    for (int k = 0; k < 3; k++) {
        static const double m[3] = {1, 2, 5};
        if (m[k] * p >= v * (1 - 1e-12))
            return m[k] * p;
    }
    return 10 * p;
}

/* ---------------------------------------------------------------- bias (Figure 1a) */

void abl_plot_bias_config_default(abl_plot_bias_config *c)
{
    memset(c, 0, sizeof *c);
    abl_format_lookup("bf16", &c->format);
    c->convention = ABL_CONV_PAPER;
    c->heads = 16;
    c->max_distance = 4096;
}

/* Colour of head rank r of n: categorical for a few heads, viridis (ordered by slope) for many. */
static abl_rgb head_colour(int r, int n)
{
    return n <= 5 ? abl_plot_categorical(r) : abl_plot_sequential(r, n);
}

abl_status abl_plot_layer(const abl_format *format, abl_convention convention, int heads,
                          const abl_schedule_spec *slopes,
                          uint64_t context, abl_analysis *a)
{
    abl_status st = abl_analysis_layer(format, convention, heads, slopes, 0, context, a);
    if (st == ABL_OK && a->heads > ABL_PLOT_MAX_HEADS)
        st = ABL_ERR_HEADS_RANGE;
    if (st != ABL_OK)
        abl_analysis_free(a);
    return st;
}

/* One head's line of Figure 1a: the bias -m·d (times the kernel's scale) from 0 to D, labelled with m
 * and δ (or the kernel's first blind distance), that distance marked on it. */
static abl_status bias_head(abl_plot_panel *pn, const abl_plot_bias_config *c, const abl_head_result *r, int h,
                            int heads, double D)
{
    double k = c->scale > 0 ? c->scale : 1.0, m = r->slope.value * k;
    int64_t kd = c->first_blind != NULL ? c->first_blind[r->slope.index - 1] : -1;
    char *exact = abl_slope_exact_text(&r->slope), *dtxt = abl_delta_text(&r->delta, 9);
    char *label = NULL;
    if (exact != NULL && dtxt != NULL && c->first_blind != NULL)
        label = kd >= 0 ? abl_strf("h%d  m = %s  first blind %lld", r->slope.index, exact, (long long)kd)
                        : abl_strf("h%d  m = %s  no zero", r->slope.index, exact);
    else if (exact != NULL && dtxt != NULL)
        label = abl_strf("h%d  m = %s  δ = %s", r->slope.index, exact, dtxt);
    free(exact);
    free(dtxt);
    /* A straight line: its two ends (PLplot clips it to the frame). */
    double x[2] = {0, D}, y[2] = {0, -m * D};
    abl_plot_series *s = NULL;
    abl_status st = label != NULL ? abl_plot_add_series(pn, label, x, y, 2, head_colour(h, heads), &s)
                                  : ABL_ERR_NO_MEMORY;
    free(label);
    if (st == ABL_OK)
        s->style = 1 + h % 8; /* neighbours in slope order differ in dash pattern too (greyscale print) */
    int64_t d;
    if (c->first_blind != NULL) {
        if (st == ABL_OK && kd >= 0 && (double)kd <= D)
            st = abl_plot_add_marker(pn, (double)kd, -m * (double)kd);
    } else if (st == ABL_OK && !r->delta.never && abl_delta_get_i64(&r->delta, &d) && (double)d <= D) {
        st = abl_plot_add_marker(pn, (double)d, -m * (double)d);
    }
    return st;
}

/* Figure 1a's frame: its title, the caption naming the slopes and τ, the axes. */
static abl_status bias_frame(const abl_plot_bias_config *c, const abl_analysis *a, const char *tau_txt, double tau,
                             abl_plot *out)
{
    char *title = c->model != NULL ? abl_strf("ALiBi bias of %s (%d heads, %s)", c->model, a->heads, c->format.name)
                                   : abl_strf("ALiBi bias of a %d-head layer (%s)", a->heads, c->format.name);
    abl_status st = title != NULL ? abl_plot_init(out, 1, 1, title) : ABL_ERR_NO_MEMORY;
    free(title);
    if (st != ABL_OK)
        return st;
    out->legend = 1;
    double ymin = -nice_ceil(-2.0 * tau), ymax = -0.04 * ymin;
    char *cap = c->kernel != NULL
                    ? abl_strf("slopes %s, as %s forms the bias: -%g·m·d; τ = %s (%s, %s); ○ where the kernel's "
                               "first weight is exactly zero", a->schedule.spec, c->kernel, c->scale > 0 ? c->scale : 1.0,
                               tau_txt, c->format.name, abl_convention_name(c->convention))
                    : abl_strf("slopes %s; τ = %s (%s, %s convention): head h goes blind at d = δh, where -m·d "
                               "reaches τ (○)", a->schedule.spec, tau_txt, c->format.name,
                               abl_convention_name(c->convention));
    st = cap != NULL ? abl_plot_set_caption(out, cap) : ABL_ERR_NO_MEMORY;
    free(cap);
    if (st == ABL_OK)
        st = abl_plot_axes(&out->panels[0], NULL, "token distance d",
                           c->kernel != NULL ? "bias as the kernel adds it (nats)" : "bias -m·d (nats)", 0,
                           (double)c->max_distance,
                           ymin, ymax, 0, 0);
    return st;
}

abl_status abl_plot_bias(const abl_plot_bias_config *c, abl_plot *out)
{
    if (c == NULL || out == NULL || c->max_distance < 1 || c->max_distance > ABL_MAX_CONTEXT)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_analysis a;
    abl_status st = abl_plot_layer(&c->format, c->convention, c->heads, c->slopes, c->max_distance, &a);
    if (st != ABL_OK)
        return st;
    char *tau_txt = NULL;
    double tau = tau_of(&c->format, c->convention, &tau_txt);
    st = tau_txt != NULL ? bias_frame(c, &a, tau_txt, tau, out) : ABL_ERR_NO_MEMORY;
    abl_plot_panel *pn = st == ABL_OK ? &out->panels[0] : NULL;
    for (int h = 0; st == ABL_OK && h < a.heads; h++)
        st = bias_head(pn, c, &a.results[h], h, a.heads, (double)c->max_distance);
    if (st == ABL_OK && c->first_blind != NULL)
        st = abl_plot_set_marker_label(pn, "the kernel's first exactly-zero weight");
    if (st == ABL_OK) {
        char *label = abl_strf("τ = %s", tau_txt);
        st = label != NULL ? abl_plot_add_hline(pn, tau, label) : ABL_ERR_NO_MEMORY;
        free(label);
    }
    free(tau_txt);
    abl_analysis_free(&a);
    if (st != ABL_OK)
        abl_plot_free(out);
    return st;
}

/* ---------------------------------------------------------------- fraction (Figure 1b) */

void abl_plot_fraction_config_default(abl_plot_fraction_config *c)
{
    static const abl_convention paper = ABL_CONV_PAPER;
    memset(c, 0, sizeof *c);
    c->formats = abl_format_at(3); /* bf16, spec §2 order (the library's table: no static written per call) */
    c->nformats = 1;
    c->conventions = &paper;
    c->nconventions = 1;
    c->heads = 16;
    c->max_context = 65536;
}

#define FRACTION_POINTS 200

/* Curve i of n (row and matrix alternate): each pair one hue (Okabe-Ito up to five pairs, viridis
 * beyond), the matrix curve a lighter tint of it (drawn thinner). */
static abl_rgb curve_colour(int i, int n)
{
    int pair = i / 2, pairs = (n + 1) / 2;
    abl_rgb c = pairs <= 5 ? abl_plot_categorical(pair) : abl_plot_sequential(pair, pairs);
    if (i % 2 == 1) {
        c.r = (unsigned char)(c.r + (255 - c.r) * 45 / 100);
        c.g = (unsigned char)(c.g + (255 - c.g) * 45 / 100);
        c.b = (unsigned char)(c.b + (255 - c.b) * 45 / 100);
    }
    return c;
}

/* The contexts N of the x axis: 0..max evenly (linear) or 1..max geometrically, as integers. */
static size_t fraction_contexts(uint64_t max, int linear, uint64_t *n)
{
    size_t k = 0;
    for (int i = 0; i < FRACTION_POINTS; i++) {
        uint64_t v;
        if (linear)
            v = (uint64_t)llround((double)max * i / (FRACTION_POINTS - 1));
        else
            v = (uint64_t)llround(pow((double)max, (double)i / (FRACTION_POINTS - 1)));
        if (v > max || i == FRACTION_POINTS - 1)
            v = max;
        if (!linear && v < 1)
            v = 1;
        if (k == 0 || v > n[k - 1])
            n[k++] = v;
    }
    return k;
}

/* A pipeline's name as the outputs show it: the text it was parsed from. */
static const char *spec_name(const abl_pipeline_spec *s)
{
    return s != NULL && s->text != NULL ? s->text : "eager";
}

/* The steps of one (pipeline, format) curve: a predictor call at every N > 0 of the axis. */
static abl_status fraction_plan_curve(abl_plot_fraction_plan *p, size_t pi, size_t f)
{
    const abl_plot_fraction_config *c = &p->config;
    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    if (abl_pipeline_build(&c->pipelines[pi], &c->formats[f], &sc.pipeline) != ABL_OK)
        return ABL_OK; /* no step: the run stops there and says why */
    p->curve_first[pi * c->nformats + f] = (long)p->plan.nsteps;
    sc.slopes = c->slopes;
    sc.heads = c->heads;
    sc.attention = c->attention;
    abl_simulate_config priced = sc;
    abl_cost one;
    priced.context = 1;
    if (priced.heads <= 0 && abl_predict_estimate(&priced, &one) == ABL_OK)
        priced.heads = (int)one.units; /* a list's head count, parsed once (one unit per head at N = 1) */
    for (size_t i = 0; i < p->npoints; i++) {
        if (p->contexts[i] == 0)
            continue;
        sc.context = priced.context = p->contexts[i];
        abl_cost cost;
        abl_status est = abl_predict_estimate(&priced, &cost);
        abl_status st = abl_plan_leaf(&p->plan, "predict", est, &cost, sc.context, sc.heads);
        if (st != ABL_OK)
            return st;
        p->calls[p->plan.nsteps - 1] = sc;
    }
    return ABL_OK;
}

abl_status abl_plot_fraction_plan_make(const abl_plot_fraction_config *c, abl_plot_fraction_plan *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->config = *c;
    if (c->npipelines == 0)
        return ABL_OK;
    if (c->max_context < 1 || c->max_context > ABL_PLOT_PIPELINE_MAX_CONTEXT || c->nformats < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    size_t curves = c->npipelines * c->nformats;
    out->contexts = malloc(FRACTION_POINTS * sizeof *out->contexts);
    out->curve_first = malloc(curves * sizeof *out->curve_first);
    out->calls = malloc(curves * FRACTION_POINTS * sizeof *out->calls);
    if (out->contexts == NULL || out->curve_first == NULL || out->calls == NULL) {
        abl_plot_fraction_plan_free(out);
        return ABL_ERR_NO_MEMORY;
    }
    out->npoints = fraction_contexts(c->max_context, c->linear, out->contexts);
    abl_status st = ABL_OK;
    for (size_t pi = 0; st == ABL_OK && pi < c->npipelines; pi++)
        for (size_t f = 0; st == ABL_OK && f < c->nformats; f++) {
            out->curve_first[pi * c->nformats + f] = -1;
            st = fraction_plan_curve(out, pi, f);
        }
    if (st != ABL_OK)
        abl_plot_fraction_plan_free(out);
    return st;
}

void abl_plot_fraction_plan_free(abl_plot_fraction_plan *p)
{
    if (p == NULL)
        return;
    free(p->contexts);
    free(p->curve_first);
    free(p->calls);
    abl_plan_free(&p->plan);
    memset(p, 0, sizeof *p);
}

abl_status abl_plot_fraction_estimate(const abl_plot_fraction_config *c, abl_cost *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_plot_fraction_plan p;
    abl_status st = abl_plot_fraction_plan_make(c, &p);
    if (st == ABL_OK)
        *out = p.plan.cost;
    abl_plot_fraction_plan_free(&p);
    return st;
}

/* How a pair of curves looks apart from its colour: the dash pattern (per convention, or per kernel) and
 * the glyph family (per dtype: filled for the row curve, open for the matrix's). */
typedef struct curve_look {
    int style;
    size_t dtype;
} curve_look;

/* The glyph of dtype f: ● ■ ▲ filled (row) and ○ □ △ open (matrix); ◆ ▼ beyond three dtypes. */
static int curve_glyph(size_t f, int matrix)
{
    if (f < 3)
        return (int)f + (matrix ? 6 : 1);
    return 4 + (int)(f % 2);
}

/* The dash pattern of a convention: paper solid, then PLplot's styles 2..4 (ftz short, ieee long dashes, so
 * that bf16 paper and bf16 ieee differ in print as well as in colour). */
static int convention_style(abl_convention v)
{
    return 1 + (int)v % 4;
}

static void curve_dress(abl_plot_series *s, curve_look look, int matrix, int ci, size_t np)
{
    s->style = look.style;
    s->symbol = curve_glyph(look.dtype, matrix);
    s->symbol_every = np > 16 ? (int)(np / 8) : 1;
    s->symbol_offset = s->symbol_every > 1 ? (ci * 5) % s->symbol_every : 0;
    if (matrix)
        s->width = 1.3;
}

/* A pair of curves (row, then the matrix's lighter and thinner one) labelled "<what>: row" and
 * "<what>: matrix", in the next two colours, dressed by look. */
static abl_status fraction_pair(abl_plot_panel *pn, const char *what, const double *x, const double *yr,
                                const double *ym, size_t np, int *ci, int ncurves, curve_look look)
{
    char *row = abl_strf("%s: row", what), *mat = abl_strf("%s: matrix", what);
    abl_plot_series *s;
    abl_status st = row != NULL && mat != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        st = abl_plot_add_series(pn, row, x, yr, np, curve_colour(*ci, ncurves), &s);
    if (st == ABL_OK)
        curve_dress(s, look, 0, (*ci)++, np);
    if (st == ABL_OK)
        st = abl_plot_add_series(pn, mat, x, ym, np, curve_colour(*ci, ncurves), &s);
    if (st == ABL_OK)
        curve_dress(s, look, 1, (*ci)++, np);
    free(row);
    free(mat);
    return st;
}

/* The real-kernel curves: the plan's predictor calls, curve by curve. */
static abl_status fraction_kernel_curves(abl_plot_fraction_plan *p, abl_plot_panel *pn, const double *x, int *ci,
                                         int ncurves, char **msg)
{
    const abl_plot_fraction_config *c = &p->config;
    size_t np = p->npoints;
    double yr[FRACTION_POINTS], ym[FRACTION_POINTS];
    abl_status st = ABL_OK;
    for (size_t pi = 0; st == ABL_OK && pi < c->npipelines; pi++)
        for (size_t f = 0; st == ABL_OK && f < c->nformats; f++) {
            long k = p->curve_first[pi * c->nformats + f];
            if (k < 0) { /* the pipeline could not be built */
                abl_set_error(msg, "--pipeline: '%s': %s", spec_name(&c->pipelines[pi]),
                              abl_status_message(ABL_ERR_UNSUPPORTED));
                st = ABL_ERR_UNSUPPORTED;
                break;
            }
            for (size_t i = 0; st == ABL_OK && i < np; i++) {
                if (p->contexts[i] == 0) {
                    yr[i] = ym[i] = 0;
                    continue;
                }
                abl_prediction pr;
                memset(&pr, 0, sizeof pr);
                p->plan.steps[k].executed++;
                st = abl_predict_run(&p->calls[k++], &pr);
                if (c->progress.fn != NULL)
                    c->progress.fn(c->progress.ctx, (uint64_t)k, (uint64_t)p->plan.nsteps);
                if (st == ABL_OK) {
                    double n = (double)p->contexts[i], h = (double)pr.heads;
                    yr[i] = (double)pr.row_zeros / (h * n);
                    ym[i] = (double)pr.matrix_zeros /
                            (h * n * (c->attention == ABL_ATTENTION_BIDIRECTIONAL ? n : (n + 1) / 2));
                } else if (st == ABL_ERR_UNSUPPORTED && msg != NULL) {
                    abl_set_error(msg, "--pipeline: '%s' cannot be predicted exactly (zero logits, eager kernels "
                                       "with an exact sum and a correctly rounded exp, or flash)",
                                  spec_name(&c->pipelines[pi]));
                }
                abl_prediction_free(&pr);
            }
            char *what = abl_strf("%s (%s)", spec_name(&c->pipelines[pi]), c->formats[f].name);
            if (st == ABL_OK)
                st = what != NULL ? fraction_pair(pn, what, x, yr, ym, np, ci, ncurves,
                                                  (curve_look){5 + (int)(pi % 4), f})
                                  : ABL_ERR_NO_MEMORY;
            free(what);
        }
    return st;
}

abl_status abl_plot_fraction(const abl_plot_fraction_config *c, abl_plot *out, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_plot_fraction_plan p;
    abl_status st = abl_plot_fraction_plan_make(c, &p);
    if (st == ABL_OK)
        st = abl_plot_fraction_run_plan(&p, out, msg);
    abl_plot_fraction_plan_free(&p);
    return st;
}

/* A one-panel figure with a legend: its title (taken and freed here; NULL means the caller's abl_strf ran out
 * of memory) and its caption. Shared by the fraction and the mitigations figures. */
static abl_status legend_frame(abl_plot *out, char *title, const char *caption)
{
    abl_status st = title != NULL ? abl_plot_init(out, 1, 1, title) : ABL_ERR_NO_MEMORY;
    free(title);
    if (st != ABL_OK)
        return st;
    out->legend = 1;
    return abl_plot_set_caption(out, caption);
}

/* Figure 1b's frame: its title, the caption saying which curve is which, the axes (a context of one
 * token still gets an axis from 0 or 0.5 to 2). */
static abl_status fraction_frame(const abl_plot_fraction_config *c, abl_plot *out)
{
    char *title = c->model != NULL ? abl_strf("Underflow fractions of %s against the context", c->model)
                                   : abl_strf("Underflow fractions of a %d-head layer against the context", c->heads);
    abl_status st = legend_frame(out, title,
                                 c->attention == ABL_ATTENTION_BIDIRECTIONAL
                                     ? "bidirectional (encoder): row: the end row i = N - 1; matrix (lighter, open "
                                       "marks): all N x N entries; dashes per convention or kernel, marks per dtype"
                                     : "row: the last query row; matrix (lighter, open marks): all causal entries; "
                                       "dashes per convention or kernel, marks per dtype");
    if (st != ABL_OK)
        return st;
    abl_plot_panel *pn = &out->panels[0];
    st = abl_plot_axes(pn, NULL, "context length N (tokens)", "underflow fraction", c->linear ? 0 : 1,
                       (double)c->max_context, 0, 1, !c->linear, 0);
    if (st == ABL_OK && c->max_context == 1)
        st = abl_plot_axes(pn, NULL, "context length N (tokens)", "underflow fraction", c->linear ? 0 : 0.5, 2, 0,
                           1, !c->linear, 0);
    return st;
}

/* The bidirectional matrix fraction (docs/method.md): the heads' blind entries of the N x N matrix over
 * H N^2, exact in GMP, then rounded for the picture. */
static abl_status bidir_matrix_fraction(const abl_delta *d, int heads, uint64_t n, double *out)
{
    mpz_t end, mid, mat, sum;
    mpz_inits(end, mid, mat, sum, (mpz_ptr)0);
    abl_status st = ABL_OK;
    for (int h = 0; st == ABL_OK && h < heads; h++)
        if ((st = abl_bidir_head_counts(&d[h], n, 0, end, mid, mat)) == ABL_OK)
            mpz_add(sum, sum, mat);
    mpq_t q;
    mpq_init(q);
    mpq_set_z(q, sum);
    mpz_set_ui(mat, n);
    mpz_mul_ui(mat, mat, n);
    mpz_mul_ui(mat, mat, (unsigned long)heads);
    mpz_set(mpq_denref(q), mat);
    mpq_canonicalize(q);
    *out = mpq_get_d(q);
    mpq_clear(q);
    mpz_clears(end, mid, mat, sum, (mpz_ptr)0);
    return st;
}

/* The closed form (spec §7) for one format and convention: the row and matrix fractions at each N. */
static abl_status fraction_formula(const abl_plot_fraction_config *c, size_t f, size_t v, const uint64_t *ns,
                                   size_t np, double *yr, double *ym)
{
    abl_analysis a;
    abl_status st = abl_analysis_layer(&c->formats[f], c->conventions[v], c->heads, c->slopes, 0, c->max_context, &a);
    abl_delta *d = st == ABL_OK ? calloc((size_t)a.heads, sizeof *d) : NULL;
    if (st == ABL_OK && d == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK && a.heads > ABL_PLOT_MAX_HEADS)
        st = ABL_ERR_HEADS_RANGE;
    for (int h = 0; st == ABL_OK && h < a.heads; h++)
        d[h] = a.results[h].delta; /* shallow: read only */
    mpq_t q;
    mpq_init(q);
    for (size_t i = 0; st == ABL_OK && i < np; i++) {
        if (ns[i] == 0) {
            yr[i] = ym[i] = 0;
            continue;
        }
        st = abl_fraction_row(d, a.heads, ns[i], 0, q);   /* a bidirectional end row: the causal last row */
        yr[i] = mpq_get_d(q);
        if (st == ABL_OK && c->attention == ABL_ATTENTION_BIDIRECTIONAL)
            st = bidir_matrix_fraction(d, a.heads, ns[i], &ym[i]);
        else if (st == ABL_OK)
            st = abl_fraction_matrix(d, a.heads, ns[i], 0, q);
        if (c->attention != ABL_ATTENTION_BIDIRECTIONAL)
            ym[i] = mpq_get_d(q);
    }
    mpq_clear(q);
    free(d);
    abl_analysis_free(&a);
    return st;
}

/* The closed-form curves, a pair for each format and convention. */
static abl_status fraction_formula_curves(const abl_plot_fraction_config *c, abl_plot_panel *pn, const uint64_t *ns,
                                          const double *x, size_t np, int *ci, int ncurves)
{
    double yr[FRACTION_POINTS], ym[FRACTION_POINTS];
    abl_status st = ABL_OK;
    for (size_t f = 0; st == ABL_OK && f < c->nformats; f++)
        for (size_t v = 0; st == ABL_OK && v < c->nconventions; v++) {
            st = fraction_formula(c, f, v, ns, np, yr, ym);
            const abl_format *fmt = &c->formats[f];
            char *what = abl_strf("%s %s", fmt->name, abl_convention_name(c->conventions[v]));
            if (st == ABL_OK)
                st = what != NULL ? fraction_pair(pn, what, x, yr, ym, np, ci, ncurves,
                                                  (curve_look){convention_style(c->conventions[v]), f})
                                  : ABL_ERR_NO_MEMORY;
            free(what);
        }
    return st;
}

abl_status abl_plot_fraction_run_plan(abl_plot_fraction_plan *plan, abl_plot *out, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (plan == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    const abl_plot_fraction_config *c = &plan->config;
    if (out == NULL || c->nformats < 1 || c->nconventions < 1 || c->max_context < 1 ||
        c->max_context > ABL_MAX_CONTEXT || (c->npipelines > 0 && c->max_context > ABL_PLOT_PIPELINE_MAX_CONTEXT))
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    size_t curves = 2 * (c->nformats * c->nconventions + c->npipelines * c->nformats);
    /* Each curve its own colour: Okabe-Ito for up to five, viridis beyond. */
    if (curves > 2 * 32)
        return ABL_ERR_INVALID_ARGUMENT;
    uint64_t ns[FRACTION_POINTS];
    double x[FRACTION_POINTS];
    size_t np = fraction_contexts(c->max_context, c->linear, ns);
    for (size_t i = 0; i < np; i++)
        x[i] = (double)ns[i];
    int ci = 0, ncurves = (int)curves;
    abl_status st = fraction_frame(c, out);
    if (st == ABL_OK)
        st = fraction_formula_curves(c, &out->panels[0], ns, x, np, &ci, ncurves);
    /* Real kernels: the exact zero-logit predictor at every N (kernel/predict), as planned. */
    if (st == ABL_OK)
        st = fraction_kernel_curves(plan, &out->panels[0], x, &ci, ncurves, msg);
    if (st != ABL_OK)
        abl_plot_free(out);
    return st;
}

/* ---------------------------------------------------------------- mitigations (Table 8) */

/* The y axis (log δ) has numbers up to 10^9 only: above, two marked regions that are not a scale. A δ
 * that Table 8 prints as * (10^9 < δ < 2^1024) is drawn in the middle of the * region, one printed as **
 * (δ >= 2^1024: beyond binary64, or never) in the ** region, as the table shows them, never at a height
 * that would read as its value. */
#define MIT_STAR_LO 1e9
#define MIT_STAR_HI 1e11
#define MIT_TOP 1e12
#define MIT_STAR_Y 1e10
#define MIT_STARSTAR_Y 1.6e11 /* the lower part of the band; its label sits above */

/* The mitigation figures' * and ** regions (Table 8's marks: no scale, beyond binary64), with the y numbers
 * stopping below them. */
static abl_status mitigation_bands(abl_plot_panel *pn)
{
    abl_status st = abl_plot_add_band(pn, MIT_STAR_LO, MIT_STAR_HI, "*   10^9 < δ < 2^1024 (no scale)");
    if (st == ABL_OK)
        st = abl_plot_add_band(pn, MIT_STAR_HI, MIT_TOP, "**  δ ≥ 2^1024: beyond binary64, or never");
    pn->ynum_max = MIT_STAR_LO;
    return st;
}

/* Where a δ is drawn: in the ** band (never blind, or printed **), the * band, or at its value (at
 * least 1, the axis's foot). */
static double mitigation_y(const abl_delta *d)
{
    char *cell = abl_delta_table8_cell(d);
    const char *t = cell != NULL ? cell : "";
    double y;
    if (d->never || strcmp(t, "**") == 0) {
        y = MIT_STARSTAR_Y;
    } else if (strcmp(t, "*") == 0) {
        y = MIT_STAR_Y;
    } else {
        double v = mpfr_get_d(d->approx, MPFR_RNDN);
        y = v < 1 ? 1 : v;
    }
    free(cell);
    return y;
}

abl_status abl_plot_mitigations(const abl_format *format, abl_convention convention, abl_plot *out)
{
    if (format == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_paper_options o;
    abl_paper_options_default(&o);
    o.format = *format;
    o.convention = convention;
    char *title = abl_strf("δ per head under the paper's mitigations (Table 8, %s, %s)", format->name,
                           abl_convention_name(convention));
    abl_status st = legend_frame(out, title,
                                 "C clamp, E explicit robust slopes, L log distance, S soft-cap; "
                                 "* and ** as Table 8 prints them (regions, not values)");
    if (st != ABL_OK) {
        abl_plot_free(out);
        return st;
    }
    abl_plot_panel *pn = &out->panels[0];
    st = abl_plot_axes(pn, NULL, "head (steepest first)", "δ (tokens)", 0.5, ABL_TABLE8_HEADS + 0.5, 1, MIT_TOP, 0,
                       1);
    if (st == ABL_OK)
        st = mitigation_bands(pn);
    size_t nc = abl_table8_config_count();
    abl_delta d[ABL_TABLE8_HEADS];
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_init(&d[h]);
    for (size_t i = 0; st == ABL_OK && i < nc; i++) {
        const abl_table8_config *tc = abl_table8_config_at(i);
        st = abl_table8_deltas(tc, &o, d, NULL);
        double x[ABL_TABLE8_HEADS], y[ABL_TABLE8_HEADS];
        for (int h = 0; st == ABL_OK && h < ABL_TABLE8_HEADS; h++) {
            x[h] = h + 1;
            y[h] = mitigation_y(&d[h]);
        }
        abl_plot_series *s;
        if (st == ABL_OK)
            st = abl_plot_add_series(pn, tc->name, x, y, ABL_TABLE8_HEADS, abl_plot_sequential((int)i, (int)nc), &s);
        if (st == ABL_OK) { /* 16 combinations: no two share both glyph and dash pattern */
            s->symbol = 1 + (int)(i % 8);
            s->style = 1 + (int)((i / 2) % 8);
            s->width = 1.5;
        }
    }
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_clear(&d[h]);
    if (st != ABL_OK)
        abl_plot_free(out);
    return st;
}

/* The mitigations applied to one layer's own heads: δ of each head under E and L (E replaces the layer's
 * slopes by the robust ones for its head count), in the marked-region y axis of Table 8's picture. C and S
 * bound the logits, not the bias: Table 8 computes δ of a combination with them as without them
 * (abl_table8_deltas), so one series stands for the four combinations that share E and L. */
static const char *const mitigation_groups[4] = {"none, C, S, C+S", "E, C+E, E+S, C+E+S", "L, C+L, L+S, C+L+S",
                                                  "E+L, C+E+L, E+L+S, C+E+L+S"};

static abl_status mitigation_layer_series(abl_plot_panel *pn, const abl_format *format, abl_convention convention,
                                          int heads, const abl_schedule_spec *slopes, unsigned group)
{
    unsigned mit = (group & 1 ? ABL_MITIGATE_EXPLICIT : 0) | (group & 2 ? ABL_MITIGATE_LOG : 0);
    abl_analysis a;
    abl_status st = abl_analysis_layer(format, convention, heads, (mit & ABL_MITIGATE_EXPLICIT) ? NULL : slopes,
                                       mit, 1, &a); /* δ does not depend on N: 1, as Table 8 */
    double *x = st == ABL_OK ? malloc((size_t)a.heads * sizeof *x) : NULL;
    double *y = st == ABL_OK ? malloc((size_t)a.heads * sizeof *y) : NULL;
    if (st == ABL_OK && (x == NULL || y == NULL))
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK && a.heads > ABL_PLOT_MAX_POINTS)
        st = ABL_ERR_HEADS_RANGE;
    for (int h = 0; st == ABL_OK && h < a.heads; h++) {
        x[h] = h + 1;
        y[h] = mitigation_y(&a.results[h].delta);
    }
    abl_plot_series *s;
    if (st == ABL_OK)
        st = abl_plot_add_series(pn, mitigation_groups[group], x, y, (size_t)a.heads, abl_plot_categorical((int)group),
                                 &s);
    if (st == ABL_OK) { /* each its own glyph and dash pattern */
        s->symbol = 1 + (int)group;
        s->style = 1 + (int)group;
        s->width = 1.5;
        s->symbol_every = a.heads > 24 ? a.heads / 12 : 1;
        s->symbol_offset = (int)group * (s->symbol_every / 4);
    }
    free(x);
    free(y);
    abl_analysis_free(&a);
    return st;
}

abl_status abl_plot_mitigations_layer(const abl_format *format, abl_convention convention, int heads,
                                      const abl_schedule_spec *slopes, const char *model, abl_plot *out)
{
    if (format == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    char *title = model != NULL ? abl_strf("δ per head of %s under the paper's mitigations (%s, %s)", model,
                                           format->name, abl_convention_name(convention))
                                : abl_strf("δ per head of the layer under the paper's mitigations (%s, %s)",
                                           format->name, abl_convention_name(convention));
    abl_status st = legend_frame(out, title,
                                 "this layer's heads; E robust slopes, L log distance (C clamp and S soft-cap "
                                 "bound the logits: δ as without them, as Table 8); * and ** regions, not values");
    if (st != ABL_OK) {
        abl_plot_free(out);
        return st;
    }
    abl_plot_panel *pn = &out->panels[0];
    for (unsigned group = 0; st == ABL_OK && group < 4; group++)
        st = mitigation_layer_series(pn, format, convention, heads, slopes, group);
    int n = pn->nseries > 0 ? (int)pn->series[0].n : 1;
    if (st == ABL_OK)
        st = abl_plot_axes(pn, NULL, "head (the layer's order)", "δ (tokens)", 0.5, n + 0.5, 1, MIT_TOP, 0, 1);
    if (st == ABL_OK)
        st = mitigation_bands(pn);
    if (st != ABL_OK)
        abl_plot_free(out);
    return st;
}

/* ---------------------------------------------------------------- blindmap (simulate) */

void abl_plot_blindmap_config_default(abl_plot_blindmap_config *c)
{
    memset(c, 0, sizeof *c);
    abl_format_lookup("bf16", &c->model_dtype);
    c->heads = 16;
    c->context = 2048;
    c->head = 1;
}

typedef struct map_acc {
    uint64_t n, bin;        /* N, tokens per cell */
    size_t cells;           /* cells per side */
    int heads, head;        /* head: 0 = all */
    int bidir;              /* an encoder: every row has all N keys */
    uint32_t *zeros;        /* per map (head), cells x cells */
    uint32_t *total;
} map_acc;

static void map_hook(void *ctx, int head_index, uint64_t row, const float *logits, const float *weights)
{
    (void)logits;
    map_acc *m = ctx;
    int k;
    if (m->head != 0) {
        if (head_index != m->head)
            return;
        k = 0;
    } else {
        k = head_index - 1;
        if (k < 0 || k >= m->heads)
            return;
    }
    size_t r = (size_t)(row / m->bin), side = m->cells;
    uint32_t *z = m->zeros + (size_t)k * side * side + r * side, *t = m->total + (size_t)k * side * side + r * side;
    uint64_t last = m->bidir ? m->n - 1 : row;   /* the keys the hook was given */
    for (uint64_t j = 0; j <= last; j++) {
        size_t c = (size_t)(j / m->bin);
        t[c]++;
        z[c] += weights[j] == 0.0f;
    }
}

abl_status abl_plot_blindmap_plan_make(const abl_plot_blindmap_config *c, abl_plot_blindmap_plan *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->config = *c;
    abl_simulate_config *sc = &out->simulate;
    if (abl_pipeline_build(c->pipeline, &c->model_dtype, &sc->pipeline) != ABL_OK) /* NULL: eager */
        return ABL_ERR_UNSUPPORTED;
    sc->slopes = c->slopes;
    sc->heads = c->heads;
    sc->context = c->context;
    sc->threads = c->threads;
    sc->progress = c->progress;
    sc->attention = c->attention;
    abl_cost cost;
    abl_status est = abl_simulate_estimate(sc, &cost); /* a failure costs nothing: the run reports it */
    return abl_plan_leaf(&out->plan, "simulate", est, &cost, c->context, c->heads);
}

void abl_plot_blindmap_plan_free(abl_plot_blindmap_plan *p)
{
    if (p != NULL)
        abl_plan_free(&p->plan);
}

abl_status abl_plot_blindmap_estimate(const abl_plot_blindmap_config *c, abl_cost *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_plot_blindmap_plan p;
    abl_status st = abl_plot_blindmap_plan_make(c, &p);
    if (st == ABL_OK)
        *out = p.plan.cost;
    abl_plot_blindmap_plan_free(&p);
    return st;
}

abl_status abl_plot_blindmap(const abl_plot_blindmap_config *c, abl_plot *out, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (c == NULL || out == NULL || c->context < 2 || c->context > ABL_PLOT_BLINDMAP_MAX_CONTEXT || c->head < 0)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_plot_blindmap_plan p;
    abl_status st = abl_plot_blindmap_plan_make(c, &p);
    if (st == ABL_OK)
        st = abl_plot_blindmap_run_plan(&p, out, msg);
    else if (st == ABL_ERR_UNSUPPORTED) /* the pipeline could not be built */
        abl_set_error(msg, "--pipeline: '%s': %s", spec_name(c->pipeline), abl_status_message(st));
    abl_plot_blindmap_plan_free(&p);
    return st;
}

/* The layer's head count, and whether the head asked for can be drawn: every head (--head 0) as small
 * multiples of at most 64, or one head of the layer. */
static abl_status blindmap_heads(const abl_plot_blindmap_config *c, int *heads, char **msg)
{
    abl_schedule sched;
    memset(&sched, 0, sizeof sched);
    abl_status st = abl_schedule_build(c->slopes, c->heads, -126, &sched);
    if (st != ABL_OK)
        return st;
    *heads = sched.count;
    abl_schedule_free(&sched);
    if (*heads > 64 && c->head == 0) {
        /* The head choice is at fault, not the schedule: say so (not a slopes error). */
        if (msg != NULL)
            abl_set_error(msg, "--head 0 draws every head as small multiples, at most 64; this layer has %d "
                               "heads (give --head H for one of them)", *heads);
        return ABL_ERR_UNSUPPORTED;
    }
    if (c->head > *heads) {
        if (msg != NULL)
            abl_set_error(msg, "--head: %d is not a head of this %d-head layer", c->head, *heads);
        return ABL_ERR_INVALID_ARGUMENT;
    }
    return ABL_OK;
}

/* The zero maps' accumulator: square cells of a power-of-two number of tokens (whole cells for a
 * power-of-two N), about 256 per side for one head, fewer for small multiples. */
static abl_status map_acc_init(map_acc *m, const abl_plot_blindmap_config *c, int heads, int maps)
{
    memset(m, 0, sizeof *m);
    m->n = c->context;
    size_t target = c->head == 0 ? (heads > 16 ? 48 : 96) : 256;
    m->bin = 1;
    while ((c->context + m->bin - 1) / m->bin > target)
        m->bin *= 2;
    m->cells = (size_t)((c->context + m->bin - 1) / m->bin);
    m->heads = heads;
    m->head = c->head;
    m->bidir = c->attention == ABL_ATTENTION_BIDIRECTIONAL;
    size_t per = m->cells * m->cells;
    m->zeros = calloc(per * (size_t)maps, sizeof *m->zeros);
    m->total = calloc(per * (size_t)maps, sizeof *m->total);
    if (m->zeros == NULL || m->total == NULL) {
        free(m->zeros);
        free(m->total);
        return ABL_ERR_NO_MEMORY;
    }
    return ABL_OK;
}

/* The picture's frame: its title naming the kernel and N, a grid of panels near square for every head,
 * the caption saying what a cell's shade means. */
static abl_status blindmap_frame(const abl_plot_blindmap_config *c, const char *pipe, int heads, const map_acc *m,
                                 abl_plot *out)
{
    const char *who = c->model != NULL ? c->model : "the layer";
    const char *dir = m->bidir ? ", bidirectional" : "";
    char *title = c->head == 0 ? abl_strf("Where attention goes blind: every head of %s (%s%s, N = %llu)", who, pipe,
                                          dir, (unsigned long long)c->context)
                               : abl_strf("Where attention goes blind: head %d of %s (%s%s, N = %llu)", c->head, who,
                                          pipe, dir, (unsigned long long)c->context);
    int cols = 1, rows = 1;
    if (c->head == 0) {
        while (cols * cols < heads)
            cols++;
        rows = (heads + cols - 1) / cols;
    }
    abl_status st = title != NULL ? abl_plot_init(out, rows, cols, title) : ABL_ERR_NO_MEMORY;
    free(title);
    /* an encoder's rows all attend every key: the map has no masked half, and the caption says so */
    char *cap = st == ABL_OK ? abl_strf("cells of %llu x %llu tokens shaded by their exactly-zero weights; query i down, key "
                                        "j across, drawn square%s",
                                        (unsigned long long)m->bin, (unsigned long long)m->bin,
                                        m->bidir ? "; bidirectional (encoder): all N rows attend all N keys, no key "
                                                   "is masked"
                                                 : "")
                             : NULL;
    if (st == ABL_OK) {
        out->square = 1;
        out->legend = 1;
    }
    if (st == ABL_OK)
        st = cap != NULL ? abl_plot_set_caption(out, cap) : ABL_ERR_NO_MEMORY;
    free(cap);
    return st;
}

/* Panel k: map k's shares of zero weights, titled with its head's slope and first blind distance (the
 * grid's spare cells stay blank, valid panels). */
static abl_status blindmap_panel(abl_plot_panel *pn, const abl_plot_blindmap_config *c, int k, int maps,
                                 const abl_simulation *sim, const map_acc *m)
{
    double N = (double)c->context;
    if (k >= maps)
        return abl_plot_axes(pn, NULL, NULL, NULL, 0, N, 0, N, 0, 0);
    int hi = c->head == 0 ? k + 1 : c->head;
    const abl_sim_head *r = &sim->results[hi - 1];
    char *exact = abl_slope_exact_text(&r->slope), *fb = NULL, *title = NULL;
    if (r->first_blind >= 0)
        fb = abl_strf(maps > 1 ? "d ≥ %lld" : "first blind d = %lld", (long long)r->first_blind);
    else
        fb = abl_strf("no zero");
    if (exact != NULL && fb != NULL)
        title = maps > 1 ? abl_strf("h%d %s: %s", hi, exact, fb) : abl_strf("head %d: m = %s, %s", hi, exact, fb);
    free(exact);
    free(fb);
    abl_status st = title != NULL ? abl_plot_axes(pn, title, maps > 4 ? NULL : "key j", maps > 4 ? NULL : "query i",
                                                  0, N, 0, N, 0, 0)
                                  : ABL_ERR_NO_MEMORY;
    free(title);
    size_t per = m->cells * m->cells;
    pn->yflip = 1;
    pn->map.causal = !m->bidir;
    pn->map.rows = pn->map.cols = m->cells;
    pn->map.cells = st == ABL_OK ? malloc(per * sizeof *pn->map.cells) : NULL;
    if (st == ABL_OK && pn->map.cells == NULL)
        st = ABL_ERR_NO_MEMORY;
    for (size_t i = 0; st == ABL_OK && i < per; i++) {
        uint32_t t = m->total[(size_t)k * per + i];
        pn->map.cells[i] = t ? (double)m->zeros[(size_t)k * per + i] / t : 0.0;
    }
    /* The map spans whole cells: the last may reach past N. */
    pn->xmax = pn->ymax = (double)(m->cells * m->bin);
    return st;
}

abl_status abl_plot_blindmap_run_plan(abl_plot_blindmap_plan *plan, abl_plot *out, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (plan == NULL || out == NULL || plan->plan.nsteps != 1)
        return ABL_ERR_INVALID_ARGUMENT;
    const abl_plot_blindmap_config *c = &plan->config;
    if (c->context < 2 || c->context > ABL_PLOT_BLINDMAP_MAX_CONTEXT || c->head < 0)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_simulate_config sc = plan->simulate;
    const char *pipe = spec_name(c->pipeline);
    int heads = 0;
    abl_status st = blindmap_heads(c, &heads, msg);
    if (st != ABL_OK)
        return st;
    int maps = c->head == 0 ? heads : 1;
    map_acc m;
    st = map_acc_init(&m, c, heads, maps);
    if (st != ABL_OK)
        return st;
    sc.row_hook = map_hook;
    sc.row_hook_ctx = &m;
    abl_simulation sim;
    memset(&sim, 0, sizeof sim);
    plan->plan.steps[0].executed++;
    st = abl_simulate_run(&sc, &sim);
    if (st == ABL_ERR_UNSUPPORTED && msg != NULL)
        abl_set_error(msg, "--pipeline: '%s' cannot be emulated at N = %llu", pipe, (unsigned long long)c->context);
    if (st == ABL_OK)
        st = blindmap_frame(c, pipe, heads, &m, out);
    for (int k = 0; st == ABL_OK && k < out->rows * out->cols; k++) {
        st = blindmap_panel(&out->panels[k], c, k, maps, &sim, &m);
        /* Small multiples: axis labels on the outer panels only (inner ones would run into titles). */
        abl_plot_panel *pn = &out->panels[k];
        if (k / out->cols != out->rows - 1 && k + out->cols < maps) {
            free(pn->xlabel);
            pn->xlabel = NULL;
        }
        if (k % out->cols != 0) {
            free(pn->ylabel);
            pn->ylabel = NULL;
        }
    }
    abl_simulation_free(&sim);
    free(m.zeros);
    free(m.total);
    if (st != ABL_OK)
        abl_plot_free(out);
    return st;
}
