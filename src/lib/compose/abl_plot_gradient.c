/* alibi-blind: plot gradient (abl/compose/plot_gradient.h): the forward predictor's and the gradient
 * predictor's first blind distances per head, as a chart model. */
#include <stdlib.h>
#include <string.h>
#include "abl/compose/plot_gradient.h"
#include "abl/kernel/backward.h"
#include "abl/kernel/simulate.h"
#include "abl_internal.h"

void abl_plot_gradient_config_default(abl_plot_gradient_config *c)
{
    memset(c, 0, sizeof *c);
    abl_format_lookup("bf16", &c->model_dtype);
    c->heads = 16;
    c->context = 2048;
}

static const char *pipe_name(const abl_plot_gradient_config *c)
{
    return c->pipeline != NULL && c->pipeline->text != NULL ? c->pipeline->text : "eager";
}

/* Both predictors on the layer: the forward one's and the gradient one's first blind distances. */
static abl_status run_predictors(const abl_simulate_config *sc, long j, abl_prediction *fwd, abl_backward *grad)
{
    abl_backward_config b;
    memset(&b, 0, sizeof b);
    b.log2_upstream = j;
    abl_status st = abl_backward_predict(sc, &b, grad);
    if (st == ABL_OK)
        st = abl_predict_run(sc, fwd);
    return st;
}

abl_status abl_plot_gradient_estimate(const abl_plot_gradient_config *c, abl_cost *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    if (abl_pipeline_build(c->pipeline, &c->model_dtype, &sc.pipeline) != ABL_OK)
        return ABL_ERR_UNSUPPORTED;
    sc.slopes = c->slopes;
    sc.heads = c->heads;
    sc.context = c->context;
    sc.threads = 1;
    abl_cost fwd, bwd;
    abl_status st = abl_predict_estimate(&sc, &fwd);
    if (st == ABL_OK)
        st = abl_backward_estimate(&sc, &bwd);
    if (st == ABL_OK) {
        abl_cost_add(out, &fwd);
        abl_cost_add(out, &bwd);
    }
    return st;
}

abl_status abl_plot_gradient_distances(const abl_plot_gradient_config *c, int *heads, int64_t **forward,
                                       int64_t **gradient, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (c == NULL || heads == NULL || forward == NULL || gradient == NULL || c->context < 2)
        return ABL_ERR_INVALID_ARGUMENT;
    *forward = *gradient = NULL;
    abl_simulate_config sc;
    memset(&sc, 0, sizeof sc);
    if (abl_pipeline_build(c->pipeline, &c->model_dtype, &sc.pipeline) != ABL_OK) {
        abl_error_dup(msg, "--pipeline: '%s': %s", pipe_name(c), abl_status_message(ABL_ERR_UNSUPPORTED));
        return ABL_ERR_UNSUPPORTED;
    }
    sc.slopes = c->slopes;
    sc.heads = c->heads;
    sc.context = c->context;
    sc.threads = 1;
    abl_prediction fwd;
    abl_backward grad;
    memset(&fwd, 0, sizeof fwd);
    memset(&grad, 0, sizeof grad);
    abl_status st = run_predictors(&sc, c->log2_upstream, &fwd, &grad);
    if (st == ABL_ERR_UNSUPPORTED)
        abl_error_dup(msg, "plot gradient: the zero-logit gradient predictor models the eager softmax backward "
                           "(a native one with |dP - D| x loss scale >= 1), the memory-efficient SDPA one and "
                           "FlashAttention-2's (spec §15): not %s (softmax=%s, %s backward) at 2^%ld", pipe_name(c),
                      abl_softmax_kind_name(sc.pipeline.softmax),
                      abl_backward_kind_name(abl_backward_kind_of(&sc.pipeline)), c->log2_upstream);
    if (st == ABL_OK && (fwd.heads != grad.heads || fwd.heads < 1))
        st = ABL_ERR_MISMATCH;
    if (st == ABL_OK) {
        *forward = malloc((size_t)fwd.heads * sizeof **forward);
        *gradient = malloc((size_t)fwd.heads * sizeof **gradient);
        if (*forward == NULL || *gradient == NULL)
            st = ABL_ERR_NO_MEMORY;
    }
    for (int h = 0; st == ABL_OK && h < fwd.heads; h++) {
        (*forward)[h] = fwd.results[h].first_blind;
        (*gradient)[h] = grad.results[h].first_blind;
    }
    if (st == ABL_OK)
        *heads = fwd.heads;
    else {
        free(*forward);
        free(*gradient);
        *forward = *gradient = NULL;
    }
    abl_prediction_free(&fwd);
    abl_backward_free(&grad);
    return st;
}

/* y of a distance: itself, or inside the band above N when there is no zero inside N. */
static double where(int64_t d, uint64_t n)
{
    return d < 0 ? 1.4 * (double)n : d < 1 ? 1.0 : (double)d;
}

static abl_status add_criterion(abl_plot_panel *pn, const char *label, const int64_t *d, int heads, uint64_t n,
                                int colour, int symbol)
{
    double *x = malloc((size_t)heads * sizeof *x), *y = malloc((size_t)heads * sizeof *y);
    abl_status st = x != NULL && y != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    for (int h = 0; st == ABL_OK && h < heads; h++) {
        x[h] = h + 1;
        y[h] = where(d[h], n);
    }
    abl_plot_series *s = NULL;
    if (st == ABL_OK)
        st = abl_plot_add_series(pn, label, x, y, (size_t)heads, abl_plot_categorical(colour), &s);
    if (st == ABL_OK) {
        s->symbol = symbol;
        s->width = 1.5;
    }
    free(x);
    free(y);
    return st;
}

static abl_status gradient_frame(const abl_plot_gradient_config *c, int heads, abl_plot *out)
{
    char *title = abl_strf("Forward vs gradient blindness per head%s%s (%s, %s, N = %llu)",
                           c->model != NULL ? ": " : "", c->model != NULL ? c->model : "", pipe_name(c),
                           c->model_dtype.name, (unsigned long long)c->context);
    abl_status st = title != NULL ? abl_plot_init(out, 1, 1, title) : ABL_ERR_NO_MEMORY;
    free(title);
    if (st != ABL_OK)
        return st;
    out->legend = 1;
    /* the memory-efficient backward is a CUDA kernel read in the source: its picture says so */
    abl_pipeline pl;
    int memeff = abl_pipeline_build(c->pipeline, &c->model_dtype, &pl) == ABL_OK &&
                 abl_backward_kind_of(&pl) == ABL_BACKWARD_MEMEFF;
    char *cap = abl_strf("zero logits, last row; gradient: dS = P (dP - D)%s rounded into %s, |dP - D| x loss scale "
                         "= 2^%ld (spec §15)%s", memeff ? " x scale" : "", c->model_dtype.name, c->log2_upstream,
                         memeff ? "; memory-efficient backward: modelled from source, not measured" : "");
    st = cap != NULL ? abl_plot_set_caption(out, cap) : ABL_ERR_NO_MEMORY;
    free(cap);
    abl_plot_panel *pn = &out->panels[0];
    if (st == ABL_OK)
        st = abl_plot_axes(pn, NULL, "head (model order)", "first blind distance d (tokens)", 0.5, heads + 0.5, 1,
                           2.0 * (double)c->context, 0, 1);
    if (st == ABL_OK)
        st = abl_plot_add_band(pn, (double)c->context, 2.0 * (double)c->context, "no zero inside N");
    return st;
}

abl_status abl_plot_gradient(const abl_plot_gradient_config *c, abl_plot *out, char **msg)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    int heads = 0;
    int64_t *fwd = NULL, *grad = NULL;
    abl_status st = abl_plot_gradient_distances(c, &heads, &fwd, &grad, msg);
    if (st == ABL_OK)
        st = gradient_frame(c, heads, out);
    char *glabel = st == ABL_OK ? abl_strf("gradient: first zero dS (2^%ld)", c->log2_upstream) : NULL;
    if (st == ABL_OK && glabel == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        st = add_criterion(&out->panels[0], "forward: first zero weight P", fwd, heads, c->context, 0, 1);
    if (st == ABL_OK)
        st = add_criterion(&out->panels[0], glabel, grad, heads, c->context, 1, 3);
    free(glabel);
    free(fwd);
    free(grad);
    if (st != ABL_OK)
        abl_plot_free(out);
    return st;
}
