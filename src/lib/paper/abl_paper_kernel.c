/* alibi-blind: the real kernel's columns of tables 1 and 5 (see abl_paper_kernel.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/core/fraction.h"
#include "abl/model/compare.h"
#include "abl/model/config.h"
#include "abl/kernel/simulate.h"
#include "abl_internal.h"
#include "abl_paper_kernel.h"

/*
 * Default code paths whose exact prediction at a paper window costs too much for tables that CI
 * regenerates on every run. Their cells stay empty and the footnote says so. When the predictor for a
 * path is fast, delete its entry here, then regenerate tables/ and the table goldens: nothing else
 * changes. (falcon-hf-sdpa was here until the SDPA predictor stopped running every row,
 * src/lib/kernel/abl_predict_sdpa.c.)
 */
static const struct {
    const char *preset, *reason;
} slow_paths[] = {
    {NULL, NULL}, /* the end (the list may be otherwise empty) */
};

const char *abl_kernel_skip_reason(const char *preset)
{
    for (size_t i = 0; preset != NULL && slow_paths[i].preset != NULL; i++)
        if (strcmp(preset, slow_paths[i].preset) == 0)
            return slow_paths[i].reason;
    return NULL;
}

void abl_kernel_cells_clear(abl_kernel_cells *k)
{
    if (k == NULL)
        return;
    mpq_clear(k->row_fraction);
    mpq_clear(k->matrix_fraction);
}

/* The steepest and the flattest head of c, as the paper's δ1 and δH are (model order need not be). */
static void extreme_heads(const abl_compare *c, int *steep, int *flat)
{
    *steep = *flat = 0;
    for (int i = 1; i < c->heads; i++) {
        if (abl_slope_compare(&c->results[i].slope, &c->results[*steep].slope) > 0)
            *steep = i;
        if (abl_slope_compare(&c->results[i].slope, &c->results[*flat].slope) < 0)
            *flat = i;
    }
}

static abl_status predict(const abl_model_spec *spec, uint64_t window, abl_kernel_cells *k)
{
    abl_compare_config cc;
    memset(&cc, 0, sizeof cc);
    cc.dtype = spec->dtype;
    cc.convention = ABL_CONV_PAPER;
    cc.heads = spec->heads;
    cc.context = window;
    abl_status st = abl_pipeline_build(&spec->pipeline, &spec->dtype, &cc.pipeline);
    if (st != ABL_OK)
        return st;
    abl_schedule_spec sched;
    if ((st = abl_model_spec_schedule(spec, &sched)) != ABL_OK)
        return st;
    cc.slopes = &sched;
    abl_compare c;
    st = abl_compare_run(&cc, &c);
    abl_schedule_spec_free(&sched);
    if (st != ABL_OK)
        return st;
    int steep, flat;
    extreme_heads(&c, &steep, &flat);
    k->heads = c.heads;
    k->first_blind_steep = c.results[steep].first_blind;
    k->first_blind_flat = c.results[flat].first_blind;
    k->blind_heads = c.kernel_blind_heads;
    mpq_set(k->row_fraction, c.row_fraction);
    mpq_set(k->matrix_fraction, c.matrix_fraction);
    abl_compare_free(&c);
    return ABL_OK;
}

/* Whether abl_kernel_cells_run computes the cells of (m, heads): the catalogue entry has a public code
 * path the table can afford and the head count is the configured one (spec filled then; the caller frees
 * it with abl_model_spec_free either way). */
static int cells_computed(const abl_model *m, int heads, abl_model_spec *spec)
{
    return m != NULL && abl_model_spec_from_catalogue(m, spec) == ABL_OK && spec->path != NULL &&
           m->hf_id != NULL && heads == m->heads && abl_kernel_skip_reason(spec->path->pipeline) == NULL;
}

static int same_run(const abl_model *a, const abl_model *b);
static abl_status cells_of(const abl_model *m, int heads, uint64_t window, const abl_model_spec *spec,
                           abl_kernel_cells *k);

abl_status abl_kernel_cells_plan_row(abl_table_kernel_plan *tp, const abl_model *m, int heads, uint64_t window,
                                     int reuse)
{
    size_t n = tp->plan.nsteps;
    const abl_model **models = realloc(tp->models, (n + 1) * sizeof *models);
    if (models == NULL)
        return ABL_ERR_NO_MEMORY;
    tp->models = models;
    models[n] = m;
    abl_plan_step s;
    memset(&s, 0, sizeof s);
    s.context = window;
    s.heads = heads;
    s.calls = 1;
    abl_model_spec spec;
    memset(&spec, 0, sizeof spec);
    const abl_plan_step *prev = n > 0 ? &tp->plan.steps[n - 1] : NULL;
    if (!cells_computed(m, heads, &spec)) {
        s.what = "skip"; /* the cells stay empty */
    } else if (reuse && prev != NULL && strcmp(prev->what, "skip") != 0 && prev->context == window &&
               prev->heads == heads && same_run(m, models[n - 1])) {
        s.what = "reuse"; /* the previous row's answer (abl_kernel_cells_run_after) */
    } else {
        s.what = "predict";
        abl_simulate_config sc;
        memset(&sc, 0, sizeof sc);
        abl_schedule_spec sched;
        memset(&sched, 0, sizeof sched);
        sc.heads = spec.heads;
        sc.slopes = &sched;
        sc.context = window;
        /* a pipeline or schedule that cannot be built costs nothing: the run fails there */
        if (abl_pipeline_build(&spec.pipeline, &spec.dtype, &sc.pipeline) != ABL_OK ||
            abl_model_spec_schedule(&spec, &sched) != ABL_OK || abl_predict_estimate(&sc, &s.cost) != ABL_OK)
            memset(&s.cost, 0, sizeof s.cost);
        abl_schedule_spec_free(&sched);
    }
    abl_model_spec_free(&spec);
    return abl_plan_add(&tp->plan, &s);
}

abl_status abl_kernel_cells_run_step(abl_table_kernel_plan *tp, const abl_model *m, int heads, uint64_t window,
                                     const abl_kernel_cells *prev, abl_kernel_cells *k)
{
    memset(k, 0, sizeof *k);
    mpq_init(k->row_fraction);
    mpq_init(k->matrix_fraction);
    if (tp == NULL || tp->next >= tp->plan.nsteps)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_plan_step *s = &tp->plan.steps[tp->next];
    /* the table walks its rows in the order they were planned */
    if (tp->models[tp->next] != m || s->heads != heads || s->context != window)
        return ABL_ERR_INVALID_ARGUMENT;
    tp->next++;
    s->executed++;
    abl_kernel_cells_clear(k);
    if (strcmp(s->what, "reuse") == 0 && prev != NULL)
        return abl_kernel_cells_run_after(m, heads, window, prev, k);
    return abl_kernel_cells_run(m, heads, window, k);
}

abl_status abl_kernel_cells_run(const abl_model *m, int heads, uint64_t window, abl_kernel_cells *k)
{
    memset(k, 0, sizeof *k);
    mpq_init(k->row_fraction);
    mpq_init(k->matrix_fraction);
    k->model = m;
    k->window = window;
    k->first_blind_steep = k->first_blind_flat = -1;
    abl_model_spec spec;
    if (m == NULL || abl_model_spec_from_catalogue(m, &spec) != ABL_OK || spec.path == NULL) {
        k->skipped = "not in the catalogue with a head count and a code path";
        if (m != NULL)
            abl_model_spec_free(&spec);
        return ABL_OK;
    }
    abl_status st = cells_of(m, heads, window, &spec, k);
    abl_model_spec_free(&spec);
    return st;
}

/* The cells of a catalogue model with a code path (spec its settings), or why they are skipped. */
static abl_status cells_of(const abl_model *m, int heads, uint64_t window, const abl_model_spec *spec,
                           abl_kernel_cells *k)
{
    k->path = spec->path->name;
    k->preset = spec->path->pipeline;
    if (m->hf_id == NULL) {
        /* The catalogue's path for an unpublished model is an assumption, not the model's code. */
        k->skipped = "weights and code not public, no code path to model";
        return ABL_OK;
    }
    if (heads != m->heads) {
        k->skipped = "printed with a head count its configuration does not have (the row marked ‡ has the "
                     "configured one)";
        return ABL_OK;
    }
    if ((k->skipped = abl_kernel_skip_reason(k->preset)) != NULL)
        return ABL_OK;
    return predict(spec, window, k);
}

/* Whether a and b run the same computation (the dtype names are compared, not their addresses). */
static int same_run(const abl_model *a, const abl_model *b)
{
    return a != NULL && b != NULL && a->family == b->family && a->heads == b->heads &&
           strcmp(a->dtype, b->dtype) == 0 && a->slopes.kind == b->slopes.kind &&
           a->slopes.mpt_bias == b->slopes.mpt_bias && a->hf_id != NULL && b->hf_id != NULL;
}

abl_status abl_kernel_cells_run_after(const abl_model *m, int heads, uint64_t window, const abl_kernel_cells *prev,
                                      abl_kernel_cells *k)
{
    if (prev == NULL || prev->skipped != NULL || prev->window != window || heads != prev->heads ||
        !same_run(m, prev->model))
        return abl_kernel_cells_run(m, heads, window, k);
    memset(k, 0, sizeof *k);
    mpq_init(k->row_fraction);
    mpq_init(k->matrix_fraction);
    k->model = m;
    k->window = window;
    k->path = prev->path;
    k->preset = prev->preset;
    k->heads = prev->heads;
    k->blind_heads = prev->blind_heads;
    k->first_blind_steep = prev->first_blind_steep;
    k->first_blind_flat = prev->first_blind_flat;
    mpq_set(k->row_fraction, prev->row_fraction);
    mpq_set(k->matrix_fraction, prev->matrix_fraction);
    return ABL_OK;
}

void abl_kernel_cell_first_blind(abl_report *r, const abl_kernel_cells *k, int flattest)
{
    int64_t d = flattest ? k->first_blind_flat : k->first_blind_steep;
    if (k->skipped != NULL) {
        abl_report_cell(r, "", "null", NULL);
    } else if (d < 0) {
        abl_report_cell(r, "none", "null", NULL);
    } else {
        char *t = abl_strf("%lld", (long long)d);
        abl_report_cell(r, t ? t : "", t ? t : "null", NULL);
        free(t);
    }
}

void abl_kernel_cell_blind_heads(abl_report *r, const abl_kernel_cells *k)
{
    if (k->skipped != NULL) {
        abl_report_cell(r, "", "null", NULL);
        return;
    }
    char *t = abl_strf("%d", k->blind_heads);
    abl_report_cell(r, t ? t : "", t ? t : "null", NULL);
    free(t);
}

void abl_kernel_cell_fraction(abl_report *r, const abl_kernel_cells *k, int matrix)
{
    if (k->skipped != NULL) {
        abl_report_cell(r, "", "null", NULL);
        return;
    }
    char *t = abl_fraction_percent_text(matrix ? k->matrix_fraction : k->row_fraction, 2);
    char *j = abl_fraction_decimal_text(matrix ? k->matrix_fraction : k->row_fraction, 17);
    abl_report_cell(r, t ? t : "", j ? j : "null", NULL);
    free(t);
    free(j);
}

/* ------------------------------------------------------------------ footnotes */

static int in_list(const char *const *items, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0)
            return 1;
    return 0;
}

static void add_unique(const char **items, size_t *n, const char *s)
{
    if (s != NULL && *n < ABL_KERNEL_NOTE_MAX && !in_list(items, *n, s))
        items[(*n)++] = s;
}

void abl_kernel_notes_add(abl_kernel_notes *n, const abl_kernel_cells *k, const char *table_dtype)
{
    const abl_model *m = k->model;
    if (m == NULL || k->path == NULL)
        return;
    if (k->skipped != NULL && k->skipped != abl_kernel_skip_reason(k->preset)) {
        size_t e = 0;
        while (e < n->nempty && strcmp(n->empty[e].reason, k->skipped) != 0)
            e++;
        if (e == n->nempty && n->nempty < ABL_KERNEL_NOTE_MAX)
            n->empty[n->nempty++].reason = k->skipped;
        if (e < n->nempty)
            add_unique(n->empty[e].rows, &n->empty[e].nrows, m->table5 != NULL ? m->table5 : m->name);
        return;
    }
    size_t p = 0;
    while (p < n->npaths && (strcmp(n->paths[p].path, k->path) != 0 || strcmp(n->paths[p].preset, k->preset) != 0))
        p++;
    if (p == n->npaths && n->npaths < ABL_KERNEL_NOTE_MAX) {
        n->paths[p].path = k->path;
        n->paths[p].preset = k->preset;
        n->paths[p].skipped = k->skipped;
        n->npaths++;
    }
    if (p < n->npaths)
        add_unique(n->paths[p].families, &n->paths[p].nfamilies, m->family->name);
    if (table_dtype != NULL && strcmp(m->dtype, table_dtype) != 0 &&
        !in_list(n->other_dtype, n->nother, m->family->name) && n->nother < ABL_KERNEL_NOTE_MAX) {
        n->other_dtype[n->nother] = m->family->name;
        n->other_dtype_name[n->nother++] = m->dtype;
    }
}

static void sb_list(abl_text *b, const char *const *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        abl_text_add(b, "%s%s", i ? ", " : "", items[i]);
}

char *abl_kernel_notes_paths(const abl_kernel_notes *n)
{
    abl_text b = {NULL, 0, 0, 0};
    abl_text_add(&b, "Code paths (catalogue family: default code path, its pipeline preset): ");
    for (size_t p = 0; p < n->npaths; p++) {
        abl_text_add(&b, "%s", p ? "; " : "");
        sb_list(&b, n->paths[p].families, n->paths[p].nfamilies);
        abl_text_add(&b, ": %s (pipeline %s)%s%s", n->paths[p].path, n->paths[p].preset, n->paths[p].skipped ? ", " : "",
                  n->paths[p].skipped ? n->paths[p].skipped : "");
    }
    abl_text_add(&b, ".");
    return abl_text_take(&b);
}

char *abl_kernel_notes_empty(const abl_kernel_notes *n)
{
    if (n->nempty == 0)
        return NULL;
    abl_text b = {NULL, 0, 0, 0};
    abl_text_add(&b, "Empty kernel cells: ");
    for (size_t e = 0; e < n->nempty; e++) {
        abl_text_add(&b, "%s", e ? "; " : "");
        sb_list(&b, n->empty[e].rows, n->empty[e].nrows);
        abl_text_add(&b, ": %s", n->empty[e].reason);
    }
    abl_text_add(&b, ".");
    return abl_text_take(&b);
}

char *abl_kernel_notes_dtypes(const abl_kernel_notes *n)
{
    if (n->nother == 0)
        return NULL;
    abl_text b = {NULL, 0, 0, 0};
    for (size_t i = 0; i < n->nother; i++)
        abl_text_add(&b, "%s%s %s", i ? ", " : "", n->other_dtype[i], n->other_dtype_name[i]);
    return abl_text_take(&b);
}
