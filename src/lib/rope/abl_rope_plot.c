/* alibi-blind: the picture of a rope run: each of four pairs' effective angle error and the first token's
 * shift sensitivity against the position (running maxima; both axes logarithmic). */
#include <math.h>
#include <stdlib.h>
#include "abl_internal.h"
#include "abl/rope/rope.h"

/* The series without its zero values (a log axis cannot draw them). */
static abl_status add_positive(abl_plot_panel *pn, const char *label, const double *x, const double *y, int n, abl_rgb c,
                               double *lo, double *hi)
{
    double *xs = malloc((size_t)(n > 0 ? n : 1) * sizeof *xs), *ys = malloc((size_t)(n > 0 ? n : 1) * sizeof *ys);
    if (xs == NULL || ys == NULL) {
        free(xs);
        free(ys);
        return ABL_ERR_NO_MEMORY;
    }
    size_t m = 0;
    for (int j = 0; j < n; j++)
        if (y[j] > 0) {
            xs[m] = x[j];
            ys[m++] = y[j];
            *lo = fmin(*lo, y[j]);
            *hi = fmax(*hi, y[j]);
        }
    abl_status st = m > 0 ? abl_plot_add_series(pn, label, xs, ys, m, c, NULL) : ABL_OK;
    free(xs);
    free(ys);
    return st;
}

abl_status abl_rope_plot(const abl_rope_result *r, abl_plot *out)
{
    if (r == NULL || out == NULL || r->pair == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    char *title = abl_strf("RoPE %s, %s, d = %d, base %.10g (modelled from source)",
                           abl_rope_path_name(r->path), r->dtype.name, r->head_dim, r->base);
    abl_status st = title ? abl_plot_init(out, 1, 2, title) : ABL_ERR_NO_MEMORY;
    free(title);
    if (st != ABL_OK)
        return st;
    out->legend = 1;
    double lo = INFINITY, hi = 0, slo = INFINITY, shi = 0;
    for (int s = 0; s < 4 && st == ABL_OK; s++) {
        int i = r->curve_pair[s];
        double theta = r->pair[i].theta;
        char *label = abl_strf("pair %d (θ = %.3g)", i, theta);
        st = label ? add_positive(&out->panels[0], label, r->curve_x, r->curve_eff[s], r->ncurve, abl_plot_categorical(s),
                                  &lo, &hi)
                   : ABL_ERR_NO_MEMORY;
        free(label);
    }
    if (st == ABL_OK)
        st = add_positive(&out->panels[1], "first token's row", r->curve_shift_x, r->curve_shift, r->nshift_curve,
                          abl_plot_categorical(0), &slo, &shi);
    double xmax = r->n > 1 ? (double)r->n : 2;
    if (st == ABL_OK)
        st = abl_plot_axes(&out->panels[0], "eff. angle error, max p ≤ x", "position", "radians", 1, xmax,
                           isfinite(lo) ? lo / 2 : 1e-9, hi > 0 ? hi * 2 : 1, 1, 1);
    if (st == ABL_OK)
        st = abl_plot_axes(&out->panels[1], "first-row shift, max p ≤ x", "query distance",
                           "|Δs| (unit q, k)", 1, xmax, isfinite(slo) ? slo / 2 : 1e-9, shi > 0 ? shi * 2 : 1,
                           1, 1);
    if (st != ABL_OK)
        abl_plot_free(out);
    return st;
}
