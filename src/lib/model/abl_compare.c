/* alibi-blind: the paper's delta and a real kernel's first blind distance side by side, and the
 * verdict of `check`. The paper's side is abl_analysis_run; the kernel's is the exact zero-logit
 * predictor abl_predict_run (docs/pipelines.md §6). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/analysis/analysis.h"
#include "abl/core/decimal.h"
#include "abl/core/fraction.h"
#include "abl/kernel/simulate.h"
#include "abl/model/compare.h"
#include "abl_internal.h"
#include "kernel/abl_kernel_internal.h"
#include "model/abl_compare_bidir.h"
#include "report/abl_report_internal.h"
#include "analysis/abl_analysis_internal.h"

static void compare_init(abl_compare *c)
{
    memset(c, 0, sizeof *c);
    mpq_init(c->paper_row_fraction);
    mpq_init(c->paper_matrix_fraction);
    mpq_init(c->row_fraction);
    mpq_init(c->matrix_fraction);
    mpq_init(c->row_influence_fraction);
    mpq_init(c->matrix_influence_fraction);
    mpq_init(c->paper_mid_fraction);
    mpq_init(c->mid_fraction);
}

void abl_compare_free(abl_compare *c)
{
    if (c == NULL)
        return;
    for (int i = 0; c->results != NULL && i < c->heads; i++) {
        abl_delta_clear(&c->results[i].delta);
        abl_delta_clear(&c->results[i].delta_ieee);
    }
    free(c->results);
    c->results = NULL;
    abl_schedule_free(&c->schedule);
    abl_schedule_spec_free(c->spec);
    free(c->spec);
    c->spec = NULL;
    free(c->slopes_spec);
    c->slopes_spec = NULL;
    mpq_clear(c->paper_row_fraction);
    mpq_clear(c->paper_matrix_fraction);
    mpq_clear(c->row_fraction);
    mpq_clear(c->matrix_fraction);
    mpq_clear(c->row_influence_fraction);
    mpq_clear(c->matrix_influence_fraction);
    mpq_clear(c->paper_mid_fraction);
    mpq_clear(c->mid_fraction);
    c->heads = 0;
}

/* zeros / (heads * per_head) as an exact fraction. */
static void fraction_of(mpq_t out, uint64_t zeros, int heads, const mpz_t per_head)
{
    mpz_t den;
    mpz_init(den);
    mpz_mul_ui(den, per_head, (unsigned long)heads);
    if (mpz_sgn(den) > 0) {
        mpz_set_ui(mpq_numref(out), 0);
        mpz_import(mpq_numref(out), 1, 1, sizeof zeros, 0, 0, &zeros);
        mpz_set(mpq_denref(out), den);
        mpq_canonicalize(out);
    } else {
        mpq_set_ui(out, 0, 1);
    }
    mpz_clear(den);
}

/* The predictor's configuration for a comparison (run and estimate alike). */
static void compare_sim_config(const abl_compare_config *cfg, abl_simulate_config *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->pipeline = cfg->pipeline;
    sc->slopes = cfg->slopes;
    sc->heads = cfg->heads;
    sc->context = cfg->context;
    sc->attention = cfg->attention;
}

/* The paper's analysis of a comparison (its config is what abl_analysis_layer builds). */
static void compare_analysis_config(const abl_compare_config *cfg, abl_analysis_config *ac)
{
    memset(ac, 0, sizeof *ac);
    ac->format = cfg->dtype;
    ac->convention = cfg->convention;
    ac->heads = cfg->heads;
    ac->slopes = cfg->slopes;
    ac->context = cfg->context;
    ac->attention = cfg->attention;
}

abl_status abl_compare_plan_make(const abl_compare_config *cfg, abl_compare_plan *out)
{
    if (cfg == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->config = *cfg;
    compare_analysis_config(cfg, &out->analysis);
    compare_sim_config(cfg, &out->predict);
    abl_cost part;
    abl_status est = abl_analysis_estimate(&out->analysis, &part);
    abl_status st = abl_plan_leaf(&out->plan, "analysis", est, &part, cfg->context, cfg->heads);
    if (st == ABL_OK) {
        est = abl_predict_estimate(&out->predict, &part);
        st = abl_plan_leaf(&out->plan, "predict", est, &part, cfg->context, cfg->heads);
    }
    if (st != ABL_OK)
        abl_compare_plan_free(out);
    return st;
}

void abl_compare_plan_free(abl_compare_plan *p)
{
    if (p != NULL)
        abl_plan_free(&p->plan);
}

abl_status abl_compare_estimate(const abl_compare_config *cfg, abl_cost *out)
{
    if (cfg == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_compare_plan p;
    abl_status st = abl_compare_plan_make(cfg, &p);
    if (st != ABL_OK)
        return st;
    *out = p.plan.cost;
    abl_compare_plan_free(&p);
    return ABL_OK;
}

abl_status abl_compare_run(const abl_compare_config *cfg, abl_compare *out)
{
    if (cfg == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_compare_plan p;
    abl_status st = abl_compare_plan_make(cfg, &p);
    if (st != ABL_OK)
        return st;
    st = abl_compare_run_plan(&p, out);
    abl_compare_plan_free(&p);
    return st;
}

/* The kernel's influence-zero keys (docs/method.md) per head and for the layer, from the prediction. */
static void compare_influence(abl_compare *out, const abl_prediction *p, const abl_analysis *a)
{
    for (int k = 0; k < out->heads; k++) {
        abl_compare_head *o = &out->results[k];
        o->first_influence_zero = p->results[k].first_influence_zero;
        o->row_influence_zeros = p->results[k].row_influence_zeros;
        o->matrix_influence_zeros = p->results[k].matrix_influence_zeros;
        out->kernel_lost_heads += abl_compare_head_lost(out, o->first_influence_zero, o->matrix_influence_zeros);
    }
    out->influence_differs = p->influence_differs;
    out->row_influence_zeros = p->row_influence_zeros;
    out->matrix_influence_zeros = p->matrix_influence_zeros;
    fraction_of(out->row_influence_fraction, p->row_influence_zeros, out->heads, a->row_attended);
    fraction_of(out->matrix_influence_fraction, p->matrix_influence_zeros, out->heads, a->matrix_attended);
}

/* The analysis (sorted steepest first) and the prediction (model order) head by head into out->results. */
static abl_status compare_heads(abl_compare *out, const abl_analysis *a, const abl_prediction *p)
{
    abl_status st = ABL_OK;
    /* the analysis is sorted steepest first; the prediction is in the model's order */
    for (int i = 0; i < a->heads; i++) {
        const abl_head_result *h = &a->results[i];
        int k = h->slope.index - 1;
        if (k < 0 || k >= a->heads) {
            st = ABL_ERR_INVALID_ARGUMENT;
            break;
        }
        abl_compare_head *o = &out->results[k];
        o->slope = h->slope;
        abl_delta_set(&o->delta, &h->delta);
        abl_delta_set(&o->delta_ieee, &h->delta_ieee);
        o->paper_blind = h->blind_in_context;
        o->paper_row_zeros = mpz_get_ui(h->row_blind);
        o->first_blind = p->results[k].first_blind;
        o->row_zeros = p->results[k].row_zeros;
        o->matrix_zeros = p->results[k].matrix_zeros;
        o->paper_mid_zeros = mpz_get_ui(h->mid_blind);
        o->mid_zeros = p->results[k].mid_row_zeros;
    }
    return st;
}

abl_status abl_compare_run_plan(abl_compare_plan *plan, abl_compare *out)
{
    if (plan == NULL || out == NULL || plan->plan.nsteps != 2)
        return ABL_ERR_INVALID_ARGUMENT;
    const abl_compare_config *cfg = &plan->config;
    compare_init(out);
    out->config = *cfg;
    if (cfg->context < 1 || cfg->context > ABL_SIMULATE_MAX_CONTEXT) {
        abl_compare_free(out);
        return ABL_ERR_CONTEXT_RANGE;
    }

    abl_analysis a;
    plan->plan.steps[0].executed++;
    abl_status st = abl_analysis_run(&plan->analysis, &a);
    if (st != ABL_OK) {
        abl_analysis_free(&a);
        abl_compare_free(out);
        return st;
    }

    abl_prediction p;
    memset(&p, 0, sizeof p);
    plan->plan.steps[1].executed++;
    st = abl_predict_run(&plan->predict, &p);
    if (st == ABL_OK && p.heads != a.heads)
        st = ABL_ERR_HEADS_RANGE;
    if (st == ABL_OK && (out->results = calloc((size_t)a.heads, sizeof *out->results)) == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK) {
        out->heads = a.heads;
        /* The comparison keeps the analysed schedule and its text: its slopes point into them. */
        out->slopes_spec = a.slopes_spec;
        a.slopes_spec = NULL;
        out->spec = a.spec;
        a.spec = NULL;
        out->config.slopes = out->spec;
        out->schedule = a.schedule;
        memset(&a.schedule, 0, sizeof a.schedule);
        for (int i = 0; i < a.heads; i++) {
            abl_delta_init(&out->results[i].delta);
            abl_delta_init(&out->results[i].delta_ieee);
        }
        st = compare_heads(out, &a, &p);
    }
    if (st == ABL_OK) {
        out->paper_blind_heads = a.blind_heads;
        for (int i = 0; i < out->heads; i++)
            out->kernel_blind_heads += abl_compare_head_lost(out, out->results[i].first_blind,
                                                             out->results[i].matrix_zeros);
        compare_influence(out, &p, &a);
        out->row_zeros = p.row_zeros;
        out->matrix_zeros = p.matrix_zeros;
        mpq_set(out->paper_row_fraction, a.row_fraction);
        mpq_set(out->paper_matrix_fraction, a.matrix_fraction);
        fraction_of(out->row_fraction, p.row_zeros, out->heads, a.row_attended);
        fraction_of(out->matrix_fraction, p.matrix_zeros, out->heads, a.matrix_attended);
        if (cfg->attention == ABL_ATTENTION_BIDIRECTIONAL) {
            out->mid_zeros = p.mid_row_zeros;
            mpq_set(out->paper_mid_fraction, a.mid_fraction);
            fraction_of(out->mid_fraction, p.mid_row_zeros, out->heads, a.mid_attended);
        }
    }
    abl_prediction_free(&p);
    abl_analysis_free(&a);
    if (st != ABL_OK)
        abl_compare_free(out);
    return st;
}

/* ------------------------------------------------------------------ reports */

/* A cell whose text is also its JSON token (a number), from heap text; NULL text: out of memory. */
static abl_status cell_number(abl_report *r, char *t)
{
    abl_status st = t != NULL ? abl_report_cell(r, t, t, NULL) : ABL_ERR_NO_MEMORY;
    free(t);
    return st;
}

static abl_status cell_u64(abl_report *r, uint64_t v)
{
    return cell_number(r, abl_strf("%llu", (unsigned long long)v));
}

static abl_status cell_first_blind(abl_report *r, int64_t d)
{
    if (d < 0)
        return abl_report_cell(r, "none", "null", NULL);
    return cell_number(r, abl_strf("%lld", (long long)d));
}

/* A cell from heap text and its JSON token (either NULL: out of memory); both freed. */
static abl_status cell_pair(abl_report *r, char *t, char *j)
{
    abl_status st = t != NULL && j != NULL ? abl_report_cell(r, t, j, NULL) : ABL_ERR_NO_MEMORY;
    free(t);
    free(j);
    return st;
}

static abl_status cell_delta(abl_report *r, const abl_delta *d)
{
    /* JSON: the one token of a delta (abl_delta_json; the report splits it into delta and delta_exact). */
    return cell_pair(r, abl_delta_text(d, 12), abl_delta_json(d));
}

static abl_status cell_fraction(abl_report *r, const mpq_t q)
{
    /* text: a percent with 2 decimals; JSON: the fraction to 17 digits */
    return cell_pair(r, abl_fraction_percent_text(q, 2), abl_fraction_decimal_text(q, 17));
}

static abl_status cell_slope(abl_report *r, const abl_slope *s)
{
    /* A heap string: a slope of a slopes: list is shown as written, any length. */
    char *t = abl_slope_exact_text(s);
    abl_status st = t != NULL ? abl_report_cell(r, t, NULL, NULL) : ABL_ERR_NO_MEMORY;
    free(t);
    /* The slope as a number too (a data-only column, 17 significant digits as analyze gives it). */
    char *d = st == ABL_OK ? abl_slope_decimal_text(s, 17) : NULL;
    if (st == ABL_OK)
        st = d != NULL ? abl_report_cell(r, d, d, NULL) : ABL_ERR_NO_MEMORY;
    free(d);
    return st;
}

/* A run of columns of a per-head table, added in order; data_only: for programs (JSON and CSV) only. */
typedef struct column_spec {
    const char *key, *header;
    abl_align align;
    int data_only;
} column_spec;

static abl_status add_columns(abl_report *r, const column_spec *c, size_t n)
{
    abl_status st = ABL_OK;
    for (size_t i = 0; i < n && st == ABL_OK; i++) {
        st = abl_report_column(r, c[i].key, c[i].header, c[i].align);
        if (st == ABL_OK && c[i].data_only)
            st = abl_report_column_data_only(r);
    }
    return st;
}

/* The slope_exact and slope columns of a per-head table (slope: for programs, JSON and CSV only). */
static abl_status slope_columns(abl_report *r)
{
    static const column_spec cols[] = {{"slope_exact", "slope", ABL_ALIGN_LEFT, 0}, {"slope", "m", ABL_ALIGN_RIGHT, 1}};
    return add_columns(r, cols, sizeof cols / sizeof cols[0]);
}

/* a/b for one head's share */
static abl_status cell_share(abl_report *r, uint64_t zeros, const mpz_t per_head)
{
    mpq_t q;
    mpq_init(q);
    fraction_of(q, zeros, 1, per_head);
    abl_status st = cell_fraction(r, q);
    mpq_clear(q);
    return st;
}

static int is_model_line(const abl_compare_meta *m)
{
    return strcmp(m->key, "model") == 0 || strcmp(m->key, "config") == 0;
}

/* The caller's model line, the settings as resolved, then the caller's other lines ("values from"). */
static abl_status common_meta(abl_report *r, const abl_compare *c, const abl_compare_meta *meta, size_t nmeta)
{
    abl_status st = ABL_OK;
    for (size_t i = 0; i < nmeta && st == ABL_OK; i++)
        if (is_model_line(&meta[i]))
            st = abl_report_meta(r, meta[i].key, meta[i].label, meta[i].text, meta[i].json);
    /* Heap text: the slopes spec is the user's and may be any length (a list of thousands of slopes). */
    abl_text t = {0}, j = {0};
    if (st == ABL_OK)
        st = abl_report_meta(r, "pipeline", "pipeline", c->config.pipeline.preset, NULL);
    abl_pipeline_describe_text(&c->config.pipeline, &t);
    abl_pipeline_describe_json(&c->config.pipeline, &j);
    if (st == ABL_OK)
        st = t.oom || j.oom ? ABL_ERR_NO_MEMORY
                            : abl_report_meta(r, "pipeline_fields", "pipeline fields", abl_text_str(&t), abl_text_str(&j));
    j.n = 0;
    if (st == ABL_OK)
        st = abl_report_meta(r, "dtype", "dtype", c->config.dtype.name, NULL);
    t.n = 0;
    abl_text_add(&t, "%llu", (unsigned long long)c->config.context);
    if (st == ABL_OK)
        st = t.oom ? ABL_ERR_NO_MEMORY : abl_report_meta(r, "context", "context", abl_text_str(&t), abl_text_str(&t));
    t.n = 0;
    abl_text_add(&t, "%s (%d heads)", c->slopes_spec, c->heads);
    abl_text_json(&j, c->slopes_spec);
    if (st == ABL_OK)
        st = t.oom || j.oom ? ABL_ERR_NO_MEMORY : abl_report_meta(r, "slopes", "slopes", abl_text_str(&t), abl_text_str(&j));
    free(t.s);
    free(j.s);
    if (st == ABL_OK)
        st = abl_report_meta(r, "convention", "convention of δ paper", abl_convention_name(c->config.convention), NULL);
    if (st == ABL_OK && c->config.attention == ABL_ATTENTION_BIDIRECTIONAL)
        st = abl_report_meta(r, "attention", "attention", "bidirectional: d = |i - j| over the whole N × N matrix "
                             "(encoder); row = the end row i = N - 1, mid = the middle row i = ⌊(N - 1)/2⌋",
                             "\"bidirectional\"");
    for (size_t i = 0; i < nmeta && st == ABL_OK; i++)
        if (!is_model_line(&meta[i]))
            st = abl_report_meta(r, meta[i].key, meta[i].label, meta[i].text, meta[i].json);
    return st;
}

/* A new row for head h, its first cells: the model's head index, the slope, the paper's delta. */
static abl_status head_row(abl_report *r, const abl_compare_head *h)
{
    abl_status st = abl_report_row(r);
    if (st == ABL_OK)
        st = cell_number(r, abl_strf("%d", h->slope.index));
    if (st == ABL_OK)
        st = cell_slope(r, &h->slope);
    if (st == ABL_OK)
        st = cell_delta(r, &h->delta);
    return st;
}

/* A fraction in [0, 1] as "36.57 %" (text; NULL: out of memory), malloc'd. */
static char *percent_text(const mpq_t q)
{
    char *p = abl_fraction_percent_text(q, 2);
    char *t = p != NULL ? abl_strf("%s %%", p) : NULL;
    free(p);
    return t;
}

/* A summary line from heap key, text and JSON token (any NULL: out of memory); all three freed. */
static abl_status summary_line(abl_report *r, char *k, const char *label, char *t, char *j)
{
    abl_status st = k != NULL && t != NULL && j != NULL ? abl_report_summary(r, k, label, t, j) : ABL_ERR_NO_MEMORY;
    free(k);
    free(t);
    free(j);
    return st;
}

/* One side's summary (the paper's model, key prefix "paper_", or the kernel's, no prefix): blind heads,
 * row and matrix fractions (text: percent; JSON: the fraction to 17 digits). */
static abl_status summary_side(abl_report *r, const char *prefix, const char *const labels[3], int blind, int heads,
                               const mpq_t row, const mpq_t matrix)
{
    static const char *const keys[3] = {"blind_heads", "row_fraction", "matrix_fraction"};
    abl_status st = summary_line(r, abl_strf("%s%s", prefix, keys[0]), labels[0], abl_strf("%d of %d", blind, heads),
                                 abl_strf("%d", blind));
    const mpq_srcptr q[2] = {row, matrix};
    for (int i = 0; i < 2 && st == ABL_OK; i++)
        st = summary_line(r, abl_strf("%s%s", prefix, keys[i + 1]), labels[i + 1], percent_text(q[i]),
                          abl_fraction_decimal_text(q[i], 17));
    return st;
}

/* The influence columns (shown where the pipeline's P.V loses keys whose weight is not 0). */
static abl_status influence_columns(abl_report *r)
{
    static const column_spec cols[] = {{"first_influence_zero", "first no-influence", ABL_ALIGN_RIGHT, 0},
                                       {"row_influence_zeros", "row no-influence", ABL_ALIGN_RIGHT, 0},
                                       {"matrix_influence_zeros", "matrix no-influence", ABL_ALIGN_RIGHT, 0}};
    return add_columns(r, cols, sizeof cols / sizeof cols[0]);
}

static abl_status influence_cells(abl_report *r, const abl_compare_head *h)
{
    abl_status st = cell_first_blind(r, h->first_influence_zero);
    if (st == ABL_OK)
        st = cell_u64(r, h->row_influence_zeros);
    if (st == ABL_OK)
        st = cell_u64(r, h->matrix_influence_zeros);
    return st;
}

/* A bidirectional comparison's middle-row fractions, the paper's and the kernel's. */
static abl_status summary_mid(abl_report *r, const abl_compare *c)
{
    abl_status st = summary_line(r, abl_strf("paper_middle_row_fraction"), "paper: row fraction (middle row)",
                                 percent_text(c->paper_mid_fraction), abl_fraction_decimal_text(c->paper_mid_fraction, 17));
    if (st == ABL_OK)
        st = summary_line(r, abl_strf("middle_row_fraction"), "kernel: row fraction (zero weights, middle row)",
                          percent_text(c->mid_fraction), abl_fraction_decimal_text(c->mid_fraction, 17));
    return st;
}

/* The paper's and the kernel's summaries (bidirectional: the end row, the N x N matrix, the middle row). */
static abl_status compare_summaries(abl_report *r, const abl_compare *c, int bidir)
{
    abl_status st;
    static const char *const paper_labels[3] = {"paper: heads blind inside the context (δ < N)",
                                                "paper: row fraction (last query row)",
                                                "paper: matrix fraction (causal entries)"};
    static const char *const kernel_labels[3] = {"kernel: heads with a zero weight in the last row",
                                                 "kernel: row fraction (zero weights, last query row)",
                                                 "kernel: matrix fraction (zero weights, causal entries)"};
    static const char *const paper_bidir[3] = {"paper: heads blind inside the context (δ < N)",
                                               "paper: row fraction (end row, i = N - 1)",
                                               "paper: matrix fraction (all N × N entries)"};
    static const char *const kernel_bidir[3] = {"kernel: heads with a zero weight in any row",
                                                "kernel: row fraction (zero weights, end row)",
                                                "kernel: matrix fraction (zero weights, all N × N entries)"};
    st = summary_side(r, "paper_", bidir ? paper_bidir : paper_labels, c->paper_blind_heads, c->heads,
                      c->paper_row_fraction, c->paper_matrix_fraction);
    if (st == ABL_OK)
        st = summary_side(r, "", bidir ? kernel_bidir : kernel_labels, c->kernel_blind_heads, c->heads,
                          c->row_fraction, c->matrix_fraction);
    if (st == ABL_OK && bidir)
        st = summary_mid(r, c);
    return st;
}

abl_status abl_compare_report(const abl_compare *c, const abl_compare_meta *meta, size_t nmeta, abl_report **out)
{
    if (c == NULL || out == NULL || c->results == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("ALiBi blindness: the paper's model and the real kernel", "heads");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = common_meta(r, c, meta, nmeta);
    static const struct {
        const char *key, *header;
    } cols[] = {{"head", "head"},           {"slope_exact", "slope"},       {"delta", "δ paper"},
                {"delta_ieee", "δ ieee"},   {"first_blind", "first blind"}, {"row_zeros", "row zeros"},
                {"row_fraction", "row %"},  {"matrix_zeros", "matrix zeros"}, {"matrix_fraction", "matrix %"}};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0] && st == ABL_OK; i++)
        st = i == 1 ? slope_columns(r) : abl_report_column(r, cols[i].key, cols[i].header, ABL_ALIGN_RIGHT);
    if (st == ABL_OK && c->influence_differs)   /* P.V loses keys the weights keep (docs/method.md) */
        st = influence_columns(r);
    mpz_t row_keys, matrix_keys;
    mpz_init_set_ui(row_keys, 0);
    mpz_init(matrix_keys);
    mpz_import(row_keys, 1, 1, sizeof c->config.context, 0, 0, &c->config.context);
    int bidir = c->config.attention == ABL_ATTENTION_BIDIRECTIONAL;
    if (bidir) {
        mpz_mul(matrix_keys, row_keys, row_keys); /* N^2: every row attends every key */
    } else {
        mpz_add_ui(matrix_keys, row_keys, 1);
        mpz_mul(matrix_keys, matrix_keys, row_keys);
        mpz_fdiv_q_2exp(matrix_keys, matrix_keys, 1);
    }
    if (st == ABL_OK && bidir)
        st = abl_report_column(r, "middle_row_zeros", "mid zeros", ABL_ALIGN_RIGHT);
    for (int i = 0; i < c->heads && st == ABL_OK; i++) {
        const abl_compare_head *h = &c->results[i];
        st = head_row(r, h);
        if (st == ABL_OK)
            st = cell_delta(r, &h->delta_ieee);
        if (st == ABL_OK)
            st = cell_first_blind(r, h->first_blind);
        if (st == ABL_OK)
            st = cell_u64(r, h->row_zeros);
        if (st == ABL_OK)
            st = cell_share(r, h->row_zeros, row_keys);
        if (st == ABL_OK)
            st = cell_u64(r, h->matrix_zeros);
        if (st == ABL_OK)
            st = cell_share(r, h->matrix_zeros, matrix_keys);
        if (st == ABL_OK && c->influence_differs)
            st = influence_cells(r, h);
        if (st == ABL_OK && bidir)
            st = cell_u64(r, h->mid_zeros);
    }
    mpz_clear(row_keys);
    mpz_clear(matrix_keys);
    if (st == ABL_OK)
        st = compare_summaries(r, c, bidir);
    static const char *const infl_labels[3] = {"kernel: heads with a key without influence in the last row",
                                               "kernel: row fraction (keys without influence, unit V)",
                                               "kernel: matrix fraction (keys without influence, unit V)"};
    if (st == ABL_OK && c->influence_differs)
        st = summary_side(r, "influence_", infl_labels, c->kernel_lost_heads, c->heads, c->row_influence_fraction,
                          c->matrix_influence_fraction);
    if (st == ABL_OK)
        st = abl_report_note(r, "δ paper: the paper's blindness distance (exponent −m·d below τ, the chosen "
                                "convention); δ ieee: the same with one round-to-nearest exp.");
    if (st == ABL_OK)
        st = abl_report_note(r, "first blind, row/matrix zeros and %: the exact zero weights of the pipeline "
                                "(bias rounding, scaling, softmax, output dtype) for zero logits, from the "
                                "predictor (docs/pipelines.md §6); 'none' = no zero weight in the last row.");
    if (st == ABL_OK && abl_pipeline_modelled_note(&c->config.pipeline) != NULL)
        st = abl_report_note(r, abl_pipeline_modelled_note(&c->config.pipeline));
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}

/* What a criterion reads of the kernel's answer: per head and for the layer. */
typedef struct check_view {
    int lost_heads;
    mpq_srcptr row_fraction, matrix_fraction;
} check_view;

static check_view view_of(const abl_compare *c, abl_check_criterion k)
{
    if (k == ABL_CRITERION_INFLUENCE)
        return (check_view){c->kernel_lost_heads, c->row_influence_fraction, c->matrix_influence_fraction};
    return (check_view){c->kernel_blind_heads, c->row_fraction, c->matrix_fraction};
}

/* The head's first lost distance, last-row and matrix counts under the criterion. */
static void head_view(const abl_compare_head *h, abl_check_criterion k, int64_t *first, uint64_t *row, uint64_t *matrix)
{
    int infl = k == ABL_CRITERION_INFLUENCE;
    *first = infl ? h->first_influence_zero : h->first_blind;
    *row = infl ? h->row_influence_zeros : h->row_zeros;
    *matrix = infl ? h->matrix_influence_zeros : h->matrix_zeros;
}

int abl_check_pass(const abl_compare *c, const abl_check_limits *l)
{
    if (c == NULL || l == NULL || (unsigned)l->criterion >= ABL_CRITERION_COUNT)
        return 0;
    check_view v = view_of(c, l->criterion);
    if (v.lost_heads > l->max_blind_heads)
        return 0;
    if (l->max_row_fraction != NULL && mpq_cmp(v.row_fraction, l->max_row_fraction) > 0)
        return 0;
    return 1;
}

/* The check's limits as meta lines: the blind heads allowed, and the row fraction when one is set. */
static abl_status check_limits_meta(abl_report *r, const abl_check_limits *l)
{
    abl_status st = ABL_OK;
    if (l->criterion != ABL_CRITERION_WEIGHT)   /* the default (weight) is not repeated */
        st = abl_report_meta(r, "criterion", "criterion", abl_check_criterion_name(l->criterion), NULL);
    char *t = abl_strf("%d", l->max_blind_heads);
    if (st == ABL_OK)
        st = t != NULL ? abl_report_meta(r, "max_blind_heads", "limit: blind heads at most", t, t) : ABL_ERR_NO_MEMORY;
    free(t);
    if (st != ABL_OK || l->max_row_fraction == NULL)
        return st;
    char *p = percent_text(l->max_row_fraction), *j = abl_fraction_decimal_text(l->max_row_fraction, 17);
    st = p != NULL && j != NULL ? abl_report_meta(r, "max_row_fraction", "limit: row fraction at most", p, j)
                                : ABL_ERR_NO_MEMORY;
    free(p);
    free(j);
    return st;
}

/* The check's table: every head, with a blind flag (a lost key in the last row under the criterion). */
static abl_status check_rows(abl_report *r, const abl_compare *c, abl_check_criterion k)
{
    int infl = k == ABL_CRITERION_INFLUENCE;
    const char *keys[] = {"head", "slope_exact", "delta", "blind", infl ? "first_influence_zero" : "first_blind",
                          infl ? "row_influence_zeros" : "row_zeros", infl ? "matrix_influence_zeros" : "matrix_zeros"};
    const char *heads[] = {"head", "slope", "δ paper", "blind", infl ? "first no-influence" : "first blind",
                           infl ? "row no-influence" : "row zeros", infl ? "matrix no-influence" : "matrix zeros"};
    abl_status st = ABL_OK;
    for (size_t i = 0; i < 7 && st == ABL_OK; i++)
        st = i == 1 ? slope_columns(r)
                    : abl_report_column(r, keys[i], heads[i], i == 3 ? ABL_ALIGN_LEFT : ABL_ALIGN_RIGHT);
    for (int i = 0; i < c->heads && st == ABL_OK; i++) {
        int64_t first;
        uint64_t row, matrix;
        head_view(&c->results[i], k, &first, &row, &matrix);
        int lost = abl_compare_head_lost(c, first, matrix); /* bidirectional: a zero in any row */
        st = head_row(r, &c->results[i]);
        if (st == ABL_OK)
            st = abl_report_cell(r, lost ? "yes" : "no", lost ? "true" : "false", NULL);
        if (st == ABL_OK)
            st = cell_first_blind(r, first);
        if (st == ABL_OK)
            st = cell_u64(r, row);
        if (st == ABL_OK)
            st = cell_u64(r, matrix);
    }
    return st;
}

/* A failed check's reason: how many heads lose keys and the steepest offender (smallest first distance). */
static abl_status check_reason(abl_report *r, const abl_compare *c, abl_check_criterion k)
{
    const abl_compare_head *w = NULL;
    int64_t wfirst = -1;
    for (int i = 0; i < c->heads; i++) {
        int64_t first;
        uint64_t row, matrix;
        head_view(&c->results[i], k, &first, &row, &matrix);
        if (first >= 0 && (w == NULL || first < wfirst)) {
            w = &c->results[i];
            wfirst = first;
        }
    }
    if (w == NULL)   /* bidirectional: every lost head's zeros are off the end row */
        return abl_compare_bidir_reason(r, c, view_of(c, k).lost_heads);
    char *t = abl_strf("%d of %d heads %s inside %llu tokens; head %d first, from d = %lld",
                       view_of(c, k).lost_heads, c->heads, k == ABL_CRITERION_INFLUENCE ? "lose a key's influence"
                       : "go blind", (unsigned long long)c->config.context, w->slope.index, (long long)wfirst);
    abl_status st = t != NULL ? abl_report_summary(r, "reason", "reason", t, NULL) : ABL_ERR_NO_MEMORY;
    free(t);
    return st;
}

abl_status abl_check_report(const abl_compare *c, const abl_check_limits *l, const abl_compare_meta *meta,
                            size_t nmeta, abl_report **out)
{
    if (c == NULL || l == NULL || out == NULL || c->results == NULL || (unsigned)l->criterion >= ABL_CRITERION_COUNT)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("alibi-blind check", "heads");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = common_meta(r, c, meta, nmeta);
    if (st == ABL_OK)
        st = check_limits_meta(r, l);
    if (st == ABL_OK)
        st = check_rows(r, c, l->criterion);
    int infl = l->criterion == ABL_CRITERION_INFLUENCE;
    static const char *const labels[3] = {"heads blind on the kernel", "row fraction (zero weights, last query row)",
                                          "matrix fraction (zero weights, causal entries)"};
    static const char *const infl_labels[3] = {"heads losing a key's influence on the kernel",
                                               "row fraction (keys without influence, last query row)",
                                               "matrix fraction (keys without influence, causal entries)"};
    static const char *const labels_bidir[3] = {"heads blind on the kernel", "row fraction (zero weights, end row)",
                                                "matrix fraction (zero weights, all N × N entries)"};
    int bidir = c->config.attention == ABL_ATTENTION_BIDIRECTIONAL;
    check_view v = view_of(c, l->criterion);
    if (st == ABL_OK)
        st = summary_side(r, "", infl ? infl_labels : bidir ? labels_bidir : labels, v.lost_heads, c->heads,
                          v.row_fraction, v.matrix_fraction);
    if (st == ABL_OK && bidir)
        st = summary_line(r, abl_strf("middle_row_fraction"), "row fraction (zero weights, middle row)",
                          percent_text(c->mid_fraction), abl_fraction_decimal_text(c->mid_fraction, 17));
    int pass = abl_check_pass(c, l);
    if (st == ABL_OK)
        st = abl_report_summary(r, "verdict", "verdict", pass ? "pass" : "fail", pass ? "\"pass\"" : "\"fail\"");
    if (st == ABL_OK && !pass)
        st = check_reason(r, c, l->criterion);
    if (st == ABL_OK)
        st = abl_report_note(r, infl ? "One row per head; blind: the head has a key whose term in P.V is 0 for "
                                       "unit-scale values in the last query row on this kernel (P rounded to pv-dtype, "
                                       "added in pv-accumulate; zero logits, exact predictor); exit status 0 = pass, "
                                       "1 = fail, 2 = bad input."
                                     : bidir ? ABL_COMPARE_BIDIR_CHECK_NOTE
                                     : "One row per head; blind: the head has a zero attention weight in the last query "
                                       "row on this kernel (zero logits, exact predictor); exit status 0 = pass, "
                                       "1 = fail, 2 = bad input.");
    if (st == ABL_OK && abl_pipeline_modelled_note(&c->config.pipeline) != NULL)
        st = abl_report_note(r, abl_pipeline_modelled_note(&c->config.pipeline));
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}
