/* alibi-blind: the kinds of plot (bias, fraction, blindmap, mitigations) as chart models, from the
 * exact engines: δ and fractions from the analysis, zero maps from the kernel emulation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include <mpfr.h>
#include "abl/core/analysis.h"
#include "abl/core/fraction.h"
#include "abl/core/threshold.h"
#include "abl/report/plot.h"

/* τ of a convention as a double and as text with 4 decimals ("-87.3365"). */
static double tau_of(const abl_format *fmt, abl_convention conv, char *text, size_t len)
{
    abl_tau_kind kind = abl_convention_tau_kind(conv);
    if (text != NULL && abl_threshold_string(fmt, kind, 4, text, len) != ABL_OK)
        snprintf(text, len, "?");
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

abl_status abl_plot_bias(const abl_plot_bias_config *c, abl_plot *out)
{
    if (c == NULL || out == NULL || c->max_distance < 1 || c->max_distance > ABL_MAX_CONTEXT)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_analysis_config ac;
    memset(&ac, 0, sizeof ac);
    ac.format = c->format;
    ac.convention = c->convention;
    ac.heads = c->heads;
    ac.slopes = c->slopes;
    ac.context = c->max_distance;
    abl_analysis a;
    abl_status st = abl_analysis_run(&ac, &a);
    if (st != ABL_OK) {
        abl_analysis_free(&a);
        return st;
    }
    if (a.heads > ABL_PLOT_MAX_HEADS) {
        abl_analysis_free(&a);
        return ABL_ERR_HEADS_RANGE;
    }
    char tau_txt[64], buf[512], title[256];
    double tau = tau_of(&c->format, c->convention, tau_txt, sizeof tau_txt);
    if (c->model != NULL)
        snprintf(title, sizeof title, "ALiBi bias of %s (%d heads, %s)", c->model, a.heads, c->format.name);
    else
        snprintf(title, sizeof title, "ALiBi bias of a %d-head layer (%s)", a.heads, c->format.name);
    st = abl_plot_init(out, 1, 1, title);
    if (st != ABL_OK) {
        abl_analysis_free(&a);
        return st;
    }
    out->legend = 1;
    double D = (double)c->max_distance;
    double ymin = -nice_ceil(-2.0 * tau), ymax = -0.04 * ymin;
    snprintf(buf, sizeof buf, "slopes %s; τ = %s (%s, %s convention): head h goes blind at d = δh, where -m·d reaches τ (o)",
             a.schedule.spec, tau_txt, c->format.name, abl_convention_name(c->convention));
    st = abl_plot_set_caption(out, buf);
    abl_plot_panel *pn = &out->panels[0];
    if (st == ABL_OK)
        st = abl_plot_axes(pn, NULL, "token distance d", "bias -m·d (nats)", 0, D, ymin, ymax, 0, 0);
    for (int h = 0; st == ABL_OK && h < a.heads; h++) {
        const abl_head_result *r = &a.results[h];
        char exact[96], dtxt[64];
        abl_slope_exact_text(&r->slope, exact, sizeof exact);
        abl_delta_text(&r->delta, 9, dtxt, sizeof dtxt);
        snprintf(buf, sizeof buf, "h%d  m = %s  δ = %s", r->slope.index, exact, dtxt);
        /* A straight line: its two ends (PLplot clips it to the frame). */
        double x[2] = {0, D}, y[2] = {0, -r->slope.value * D};
        st = abl_plot_add_series(pn, buf, x, y, 2, head_colour(h, a.heads), NULL);
        int64_t d;
        if (st == ABL_OK && !r->delta.never && abl_delta_get_i64(&r->delta, &d) && (double)d <= D)
            st = abl_plot_add_marker(pn, (double)d, -r->slope.value * (double)d);
    }
    if (st == ABL_OK) {
        snprintf(buf, sizeof buf, "τ = %s", tau_txt);
        st = abl_plot_add_hline(pn, tau, buf);
    }
    abl_analysis_free(&a);
    if (st != ABL_OK)
        abl_plot_free(out);
    return st;
}
