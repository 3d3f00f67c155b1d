/* alibi-blind: the paper's tables 1, 4, 5 and 8 and the data of Figure 1, computed from the
 * definitions. Model facts (heads, windows, slope schedules) are inputs; every number the paper
 * derives from them is computed here, never copied. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/paper/paper.h"
#include "abl/analysis/analysis.h"
#include "abl/core/fraction.h"
#include "abl/core/threshold.h"
#include "abl/model/catalogue.h"
#include "abl_internal.h"
#include "analysis/abl_analysis_internal.h"
#include "report/abl_report_internal.h"
#include "abl_paper_kernel.h"

void abl_paper_options_default(abl_paper_options *o)
{
    memset(o, 0, sizeof *o);
    abl_format_lookup("bf16", &o->format);
    o->convention = ABL_CONV_PAPER;
}

/* ---------------------------------------------------------------- shared helpers */

/* One layer through the analysis engine: heads steepest first, fractions at `context`. */
static abl_status run_layer(const abl_schedule_spec *slopes, int heads, unsigned mitigations, const abl_format *fmt,
                            abl_convention conv, uint64_t context, abl_analysis *a)
{
    return abl_analysis_layer(fmt, conv, heads, slopes, mitigations, context, a);
}

/* The same for a Table 1 model: its typed schedule made a description here. When that fails (out of
 * memory) a is left as a failed run leaves it. */
static abl_status run_model_layer(const abl_paper_model *m, const abl_format *fmt, abl_convention conv,
                                  abl_analysis *a)
{
    abl_schedule_spec spec;
    abl_status st = abl_paper_model_schedule(m, &spec);
    if (st != ABL_OK) {
        (void)abl_analysis_layer(fmt, conv, m->heads, NULL, 0, 0, a); /* context 0: a initialised, refused */
        return st;
    }
    st = run_layer(&spec, m->heads, 0, fmt, conv, m->window, a);
    abl_schedule_spec_free(&spec);
    return st;
}

abl_status abl_paper_model_schedule(const abl_paper_model *m, abl_schedule_spec *out)
{
    if (m == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    return abl_pow2_schedule_spec(&m->schedule, out);
}

/* A meta line from malloc'd text and JSON, which it frees (NULL after an allocation failure: an empty line,
 * as the report then fails on its own allocations too). */
static void meta_take(abl_report *r, const char *key, const char *label, char *t, char *j)
{
    abl_report_meta(r, key, label, t != NULL ? t : "", j != NULL ? j : "null");
    free(t);
    free(j);
}

/* A cell from malloc'd text and JSON, which it frees. */
static void cell_take(abl_report *r, char *t, char *j)
{
    abl_report_cell(r, t != NULL ? t : "", j != NULL ? j : "null", NULL);
    free(t);
    free(j);
}

/* tau to 4 decimals, malloc'd ("" when it cannot be computed; NULL only when out of memory). */
static char *tau_text(const abl_format *fmt, abl_convention conv)
{
    char *raw = NULL;
    if (abl_threshold_string(fmt, abl_convention_tau_kind(conv), 4, &raw) != ABL_OK)
        return abl_strf("%s", "");
    return raw;
}

/* "paper (bf16, τ = -87.3365, ftz kind; δ rounded to the nearest integer)", malloc'd. */
static char *convention_text(const abl_format *fmt, abl_convention conv)
{
    char *tau = tau_text(fmt, conv);
    char *t = tau == NULL ? NULL
                          : abl_strf("%s (%s, τ = %s, %s kind; δ %s)", abl_convention_name(conv), fmt->name, tau,
                                     abl_tau_kind_name(abl_convention_tau_kind(conv)),
                                     abl_convention_nearest(conv) ? "rounded to the nearest integer"
                                                                  : "exact: the first blind distance");
    free(tau);
    return t;
}

/* The dtype, convention and tau meta lines of a table or a figure. */
static void format_meta(abl_report *r, const abl_format *fmt, abl_convention conv)
{
    meta_take(r, "dtype", "dtype", abl_strf("%s", fmt->name), abl_strf("\"%s\"", fmt->name));
    meta_take(r, "convention", "convention", convention_text(fmt, conv), abl_strf("\"%s\"", abl_convention_name(conv)));
    char *j = NULL;
    abl_threshold_string(fmt, abl_convention_tau_kind(conv), 17, &j);
    meta_take(r, "tau", "τ", tau_text(fmt, conv), j);
}

static void add_common_meta(abl_report *r, const char *table, const abl_format *fmt, abl_convention conv)
{
    meta_take(r, "table", "table", abl_strf("%s", table), abl_strf("\"%s\"", table));
    format_meta(r, fmt, conv);
}

/* Delta as a table cell and as a JSON token (integer, or a string such as "4.37e53" / "never"), both malloc'd. */
static void delta_cells(const abl_delta *d, char **text, char **json)
{
    *text = abl_delta_text(d, 18);
    *json = abl_delta_json(d);
}

/* "2^-0.5" -> "$2^{-0.5}$" for LaTeX; other texts escaped by hand for the few characters slopes use. */
static char *slope_latex(const char *text)
{
    abl_text t = {0};
    const char *p = text;
    abl_text_add(&t, "%s", "");
    while (*p != '\0') {
        if (p[0] == '2' && p[1] == '^') {
            const char *e = p + 2;
            size_t n = strcspn(e, ", ");
            abl_text_add(&t, "$2^{%.*s}$", (int)n, e);
            p = e + n;
        } else if (strncmp(p, "…", strlen("…")) == 0) {
            abl_text_add(&t, "\\ldots{}");
            p += strlen("…");
        } else {
            abl_text_add(&t, "%c", *p++);
        }
    }
    return abl_text_take(&t);
}

/* ---------------------------------------------------------------- Table 8 */

#define E_ ABL_MITIGATE_EXPLICIT
#define L_ ABL_MITIGATE_LOG
#define C_ ABL_MITIGATE_CLAMP
#define S_ ABL_MITIGATE_SOFTCAP

static const abl_table8_config table8_configs[] = {
    {"Steep", ABL_SCHEDULE_GEOMETRIC, 128, 512, 0},
    {"Safe", ABL_SCHEDULE_GEOMETRIC, 2048, 4096, 0},
    {"Wide", ABL_SCHEDULE_GEOMETRIC, 16, 4096, 0},
    {"ALiBi (default)", ABL_SCHEDULE_PRESS, 0, 0, 0},
    {"Explicit", ABL_SCHEDULE_PRESS, 0, 0, E_},
    {"Log", ABL_SCHEDULE_PRESS, 0, 0, L_},
    {"C+L", ABL_SCHEDULE_PRESS, 0, 0, C_ | L_},
    {"C+E", ABL_SCHEDULE_PRESS, 0, 0, C_ | E_},
    {"E+L", ABL_SCHEDULE_PRESS, 0, 0, E_ | L_},
    {"E+S", ABL_SCHEDULE_PRESS, 0, 0, E_ | S_},
    {"L+S", ABL_SCHEDULE_PRESS, 0, 0, L_ | S_},
    {"C+E+L", ABL_SCHEDULE_PRESS, 0, 0, C_ | E_ | L_},
    {"C+E+S", ABL_SCHEDULE_PRESS, 0, 0, C_ | E_ | S_},
    {"C+L+S", ABL_SCHEDULE_PRESS, 0, 0, C_ | L_ | S_},
    {"E+L+S", ABL_SCHEDULE_PRESS, 0, 0, E_ | L_ | S_},
    {"C+E+L+S", ABL_SCHEDULE_PRESS, 0, 0, C_ | E_ | L_ | S_},
};

/*
 * The paper's static tables (Table 8's configurations, Table 1's models) are looked up alike: entry i,
 * or the entry of a name. Each entry's first member is its name, so an entry's address is that of its
 * name (C11 6.7.2.1p15).
 */
static const void *entry_at(const void *table, size_t n, size_t size, size_t i)
{
    return i < n ? (const char *)table + i * size : NULL;
}

static const void *entry_named(const void *table, size_t n, size_t size, const char *name)
{
    for (size_t i = 0; name != NULL && i < n; i++) {
        const char *const *entry = entry_at(table, n, size, i);
        if (strcmp(*entry, name) == 0)
            return entry;
    }
    return NULL;
}

/* PREFIX_count, PREFIX_at and PREFIX_find of a named static table (paper.h declares them). */
#define NAMED_TABLE_API(prefix, type, table)                                                                    \
    size_t prefix##_count(void) { return sizeof(table) / sizeof((table)[0]); }                                 \
    const type *prefix##_at(size_t i) { return entry_at((table), prefix##_count(), sizeof((table)[0]), i); }   \
    const type *prefix##_find(const char *name)                                                                \
    {                                                                                                          \
        return entry_named((table), prefix##_count(), sizeof((table)[0]), name);                               \
    }

/* abl_table8_config_count, abl_table8_config_at, abl_table8_config_find */
NAMED_TABLE_API(abl_table8_config, abl_table8_config, table8_configs)

abl_status abl_table8_deltas(const abl_table8_config *c, const abl_paper_options *o, abl_delta *deltas, char **spec)
{
    if (c == NULL || o == NULL || deltas == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    /* The row's schedule from its typed fields (E chooses its own: the analysis refuses any other). */
    abl_schedule_spec geo;
    memset(&geo, 0, sizeof geo);
    abl_status st = ABL_OK;
    if (c->slopes == ABL_SCHEDULE_GEOMETRIC && !(c->mitigations & ABL_MITIGATE_EXPLICIT))
        st = abl_schedule_spec_geometric(c->d1, c->dh, &geo);
    if (st != ABL_OK)
        return st;
    abl_analysis a;
    st = run_layer(geo.text != NULL ? &geo : NULL, ABL_TABLE8_HEADS,
                   c->mitigations & (ABL_MITIGATE_EXPLICIT | ABL_MITIGATE_LOG), &o->format, o->convention, 1, &a);
    abl_schedule_spec_free(&geo);
    if (st == ABL_OK && a.heads != ABL_TABLE8_HEADS)
        st = ABL_ERR_HEADS_RANGE;
    if (st == ABL_OK) {
        for (int h = 0; h < ABL_TABLE8_HEADS; h++)
            abl_delta_set(&deltas[h], &a.results[h].delta);
        if (spec != NULL) {
            *spec = abl_strf("%s%s", a.schedule.spec, a.config.distance == ABL_DISTANCE_LOG ? ", log distance" : "");
            if (*spec == NULL)
                st = ABL_ERR_NO_MEMORY;
        }
    }
    abl_analysis_free(&a);
    return st;
}

char *abl_table8_cell_text(const abl_delta *d, int exact)
{
    return exact ? abl_delta_text(d, 9) : abl_delta_table8_cell(d);
}

abl_status abl_table8_report(const abl_paper_options *o, abl_report **out)
{
    if (o == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("Expected failure distances (rounded to the nearest number) for all ALiBi "
                                   "models trained in this work. Mitigation combinations that were omitted use "
                                   "default slopes.",
                                   "rows");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    add_common_meta(r, "8", &o->format, o->convention);
    abl_report_meta(r, "head_count", "heads", "9", "9");
    abl_report_meta(r, "cells", "cells", o->exact ? "δ itself" : "δ, * or ** (see the notes)",
                    o->exact ? "\"exact\"" : "\"paper\"");
    abl_report_column(r, "name", "Name", ABL_ALIGN_LEFT);
    for (int h = 1; h <= ABL_TABLE8_HEADS; h++) {
        char *key = abl_strf("d%d", h), *head = abl_strf("δ%d", h);
        if (key != NULL && head != NULL)
            abl_report_column(r, key, head, ABL_ALIGN_RIGHT);
        free(key);
        free(head);
    }
    abl_delta d[ABL_TABLE8_HEADS];
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_init(&d[h]);
    abl_status st = ABL_OK;
    for (size_t i = 0; i < abl_table8_config_count() && st == ABL_OK; i++) {
        const abl_table8_config *c = &table8_configs[i];
        if ((st = abl_table8_deltas(c, o, d, NULL)) != ABL_OK)
            break;
        abl_report_row(r);
        abl_report_cell(r, c->name, NULL, NULL);
        for (int h = 0; h < ABL_TABLE8_HEADS; h++) {
            /* Text shows the paper's * and ** (or δ with --exact); JSON and CSV always carry δ itself. */
            char *t = abl_table8_cell_text(&d[h], o->exact), *j = abl_delta_json(&d[h]);
            if (t == NULL || j == NULL)
                st = ABL_ERR_NO_MEMORY;
            else
                abl_report_cell(r, t, j, NULL);
            free(t);
            free(j);
            if (st != ABL_OK)
                break;
        }
    }
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_clear(&d[h]);
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    char *tau = tau_text(&o->format, o->convention);
    if (!o->exact)
        abl_report_note(r, "*: 10^9 < δ < 2^1024. **: δ ≥ 2^1024, beyond binary64. (The paper: * δ > 10^9, "
                           "** δ much greater than 10^9.)");
    char *t = tau == NULL ? NULL
                          : abl_strf("H = 9 heads, sorted steepest first; %s, τ = %s; %s.", o->format.name, tau,
                                     abl_convention_nearest(o->convention)
                                         ? "δ is the distance at which −m·g(d) reaches τ, rounded to the nearest integer"
                                         : "δ is the smallest distance d at which exp(−m·g(d)) is 0");
    free(tau);
    if (t == NULL) {
        abl_report_free(r);
        return ABL_ERR_NO_MEMORY;
    }
    abl_report_note(r, t);
    free(t);
    abl_report_note(r, "Slopes: Steep, Safe, Wide = geometric δ1 → δ9 (128 → 512, 2048 → 4096, 16 → 4096); "
                       "ALiBi (default) = Press et al.; E (Explicit) = targets 32·2^(h-1), m = −τ/δh, and "
                       "m = −τ/ln(δh + 1) together with L (paper §4.3); L = log-scaled distances g(d) = ln(d + 1).");
    abl_report_note(r, "C (clamp -87) and S (soft cap 50) do not change the distances listed. Their real effect "
                       "(C: at ε = 0 the clamped exponent never reaches τ; S: δ lies between δ(-50) and δ(+50)) is "
                       "shown by alibi-blind analyze --mitigate.");
    abl_report_note(r, "E+L, C+E+L, E+L+S, C+E+L+S: the paper prints * for every head; E's log-adapted slopes keep "
                       "δ at the targets 32 … 8192 (docs/errata.md; alibi-blind reproduce).");
    *out = r;
    return ABL_OK;
}

/* ---------------------------------------------------------------- Table 1 */

static const abl_paper_model paper_models[] = {
    {"BLOOM", "bigscience/bloom-560m", "bigscience/bloom-560m", "560M", "46 lang.", 2048, 24, 16, {ABL_SCHEDULE_PRESS, 8}, "press",
     "bigscience/bloom-560m config.json: n_head = 16, n_layer = 24; trained on 2,048-token sequences"},
    {"Falcon-RW", "tiiuae/falcon-rw-7b", "Falcon-RW 7B", "7B", "eng", 2048, 36, 64, {ABL_SCHEDULE_PRESS, 8}, "press",
     "tiiuae/falcon-rw-7b config.json: alibi = true, n_head = 64, n_layer = 36, hidden_size = 4096"},
    {"MPT", "mosaicml/mpt-7b", "MPT 7B", "7B", "eng", 2048, 32, 32, {ABL_SCHEDULE_MPT, 8}, "mpt:8",
     "mosaicml/mpt-7b config.json: n_heads = 32, n_layers = 32, max_seq_len = 2048, alibi_bias_max = 8, "
     "clip_qkv = null"},
};

/* abl_paper_model_count, abl_paper_model_at, abl_paper_model_find */
NAMED_TABLE_API(abl_paper_model, abl_paper_model, paper_models)

/* "2^-0.5, 2^-1, …, 2^-8" from slopes sorted steepest first: a malloc'd string (NULL: out of memory). */
static char *slope_range_text(const abl_head_result *res, int heads)
{
    char *a = abl_slope_exact_text(&res[0].slope);
    char *b = heads > 2 ? abl_slope_exact_text(&res[1].slope) : NULL;
    char *z = heads > 1 ? abl_slope_exact_text(&res[heads - 1].slope) : NULL;
    char *out = NULL;
    if (a != NULL && (heads < 2 || z != NULL) && (heads < 3 || b != NULL)) {
        if (heads == 1)
            out = abl_strf("%s", a);
        else if (heads == 2)
            out = abl_strf("%s, %s", a, z);
        else
            out = abl_strf(heads == 3 ? "%s, %s, %s" : "%s, %s, …, %s", a, b, z);
    }
    free(a);
    free(b);
    free(z);
    return out;
}

abl_status abl_paper_model_deltas(const abl_schedule_spec *slopes, int heads, const abl_format *fmt, abl_convention conv,
                                  abl_delta *first, abl_delta *last, char **text)
{
    if (fmt == NULL || first == NULL || last == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (text != NULL)
        *text = NULL;
    abl_analysis a;
    abl_status st = run_layer(slopes, heads, 0, fmt, conv, 1, &a);
    if (st == ABL_OK) {
        abl_delta_set(first, &a.results[0].delta);
        abl_delta_set(last, &a.results[a.heads - 1].delta);
        if (text != NULL && (*text = slope_range_text(a.results, a.heads)) == NULL)
            st = ABL_ERR_NO_MEMORY;
    }
    abl_analysis_free(&a);
    return st;
}

/* Tables 1 and 5: the slopes and the first and last head's delta (and under ieee with --ieee). */
static void slope_delta_columns(abl_report *r, int ieee)
{
    abl_report_column(r, "slopes", "Slopes", ABL_ALIGN_LEFT);
    abl_report_column(r, "delta_1", "δ1", ABL_ALIGN_RIGHT);
    abl_report_column(r, "delta_h", "δH", ABL_ALIGN_RIGHT);
    if (ieee) {
        abl_report_column(r, "delta_1_ieee", "δ1 ieee", ABL_ALIGN_RIGHT);
        abl_report_column(r, "delta_h_ieee", "δH ieee", ABL_ALIGN_RIGHT);
    }
}

/* Their cells after the slopes: the first and the last head's delta (and the ieee ones). */
static void delta_pair_cells(abl_report *r, const abl_analysis *a, int ieee)
{
    const abl_delta *d[4] = {&a->results[0].delta, &a->results[a->heads - 1].delta, &a->results[0].delta_ieee,
                             &a->results[a->heads - 1].delta_ieee};
    for (int i = 0; i < (ieee ? 4 : 2); i++) {
        char *t, *j;
        delta_cells(d[i], &t, &j);
        cell_take(r, t, j);
    }
}

abl_status abl_table1_report(const abl_paper_options *o, abl_report **out)
{
    if (o == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_table_kernel_plan plan;
    abl_status st = abl_table_kernel_plan_make(1, NULL, &plan);
    if (st == ABL_OK)
        st = abl_table1_report_plan(o, &plan, out);
    abl_table_kernel_plan_free(&plan);
    return st;
}

/* Table 1's report with its meta lines and columns, before any row (NULL: out of memory). */
static abl_report *table1_new(const abl_paper_options *o)
{
    abl_report *r = abl_report_new("Selected pre-trained decoder models that were trained with ALiBi. These models "
                                   "are subject of the first experiment and differ in number of parameters, "
                                   "training context window, number of layers, number of attention heads, and "
                                   "slopes.",
                                   "models");
    if (r == NULL)
        return NULL;
    add_common_meta(r, "1", &o->format, o->convention);
    abl_report_column(r, "model", "Model", ABL_ALIGN_LEFT);
    abl_report_column(r, "size", "Size", ABL_ALIGN_LEFT);
    abl_report_column(r, "languages", "Language(s)", ABL_ALIGN_LEFT);
    abl_report_column(r, "window", "Window", ABL_ALIGN_RIGHT);
    abl_report_column(r, "layers", "Layers", ABL_ALIGN_RIGHT);
    abl_report_column(r, "head_count", "Heads", ABL_ALIGN_RIGHT);
    slope_delta_columns(r, o->ieee);
    abl_report_column(r, "first_blind_1", "kernel 1", ABL_ALIGN_RIGHT);
    abl_report_column(r, "first_blind_h", "kernel H", ABL_ALIGN_RIGHT);
    return r;
}

/* A Table 1 row's cells up to the deltas: the model's configuration and what the analysis of its
 * schedule gives (the slopes and the first and last head's delta). */
static abl_status table1_layer_cells(abl_report *r, const abl_paper_model *m, const abl_paper_options *o)
{
    abl_analysis a;
    abl_status st = run_model_layer(m, &o->format, o->convention, &a);
    if (st != ABL_OK) {
        abl_analysis_free(&a);
        return st;
    }
    abl_report_row(r);
    /* The dagger marks the footnote; JSON keeps the plain name. */
    cell_take(r, abl_strf("%s%s", m->name, strcmp(m->name, "MPT") == 0 ? "†" : ""), abl_strf("\"%s\"", m->name));
    abl_report_cell(r, m->size, NULL, NULL);
    abl_report_cell(r, m->languages, NULL, NULL);
    cell_take(r, abl_strf("%llu", (unsigned long long)m->window), abl_strf("%llu", (unsigned long long)m->window));
    cell_take(r, abl_strf("%d", m->layers), abl_strf("%d", m->layers));
    cell_take(r, abl_strf("%d", m->heads), abl_strf("%d", m->heads));
    char *range = slope_range_text(a.results, a.heads), *tex = range != NULL ? slope_latex(range) : NULL;
    if (tex == NULL) {
        free(range);
        abl_analysis_free(&a);
        return ABL_ERR_NO_MEMORY;
    }
    abl_report_cell(r, range, NULL, tex);
    free(range);
    free(tex);
    delta_pair_cells(r, &a, o->ieee);
    abl_analysis_free(&a);
    return ABL_OK;
}

/* A Table 1 row's kernel cells, the plan's next step; its code path is added to *kernels for the note. */
static abl_status table1_kernel_cells(abl_report *r, const abl_paper_model *m, abl_table_kernel_plan *plan,
                                      abl_text *kernels)
{
    abl_kernel_cells k;
    abl_status st = abl_kernel_cells_run_step(plan, abl_model_find(m->hub_id), m->heads, m->window, NULL, &k);
    if (st == ABL_OK) {
        abl_kernel_cell_first_blind(r, &k, 0);
        abl_kernel_cell_first_blind(r, &k, 1);
        if (k.path != NULL)
            abl_text_add(kernels, "%s%s: %s (pipeline %s)%s%s", kernels->n ? "; " : "", m->name, k.path, k.preset,
                         k.skipped ? ", " : "", k.skipped ? k.skipped : "");
    }
    abl_kernel_cells_clear(&k);
    return st;
}

/* Table 1's notes: what δ and the kernel columns are (the code paths the rows ran, `kernels`), the
 * configurations read and the MPT footnote. */
static abl_status table1_notes(abl_report *r, const abl_paper_options *o, const abl_text *kernels)
{
    char *tau = tau_text(&o->format, o->convention);
    char *t = tau == NULL ? NULL
                          : abl_strf("δ1, δH: blindness distances of the steepest and the flattest head at ε = 0 (%s, "
                                     "τ = %s%s).",
                                     o->format.name, tau,
                                     abl_convention_nearest(o->convention) ? ", rounded to the nearest integer" : "");
    char *kn = t == NULL ? NULL
                         : abl_strf("kernel 1, kernel H: first_blind, the exact first blind distance (smallest d with "
                                    "an exactly-zero weight in the last row of a W-token context) of head 1 and head H "
                                    "on the model's default code path (zero-logit predictor, as analyze --model; none: "
                                    "no zero inside W). Code paths: %s.",
                                    abl_text_str(kernels));
    free(tau);
    if (kn == NULL || kernels->oom) {
        free(t);
        free(kn);
        return ABL_ERR_NO_MEMORY;
    }
    abl_report_note(r, t);
    free(t);
    if (o->ieee)
        abl_report_note(r, "δ ieee: the exact δ under round-to-nearest with gradual underflow (τ = ln of half the "
                           "smallest subnormal).");
    abl_report_note(r, "Inputs from the models' configurations: BLOOM-560M (n_head = 16, n_layer = 24), "
                       "Falcon-RW-7B (n_head = 64, n_layer = 36), MPT-7B (n_heads = 32, n_layers = 32, "
                       "alibi_bias_max = 8: slopes 2^(−h/4)).");
    abl_report_note(r, kn);
    free(kn);
    abl_report_note(r, "†: the paper prints δ1 = 10 and δH = 2,000 for MPT (\"The MPT architecture applied "
                       "additional clamping\"). MPT-7B's code builds the bias −m·|i − j| without a clamp (its "
                       "alibi_bias_max = 8 sets the slopes; clip_qkv = null), so neither value can be derived; the "
                       "computed values are shown. The printed ones fit a bias clamped at -8: 8·2^0.25 = 9.5 and "
                       "8·2^8 = 2048 (docs/errata.md).");
    return ABL_OK;
}

abl_status abl_table1_report_plan(const abl_paper_options *o, abl_table_kernel_plan *plan, abl_report **out)
{
    if (o == NULL || out == NULL || plan == NULL || plan->table != 1)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = table1_new(o);
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = ABL_OK;
    abl_text kernels = {0};
    for (size_t i = 0; i < abl_paper_model_count() && st == ABL_OK; i++) {
        st = table1_layer_cells(r, &paper_models[i], o);
        if (st == ABL_OK)
            st = table1_kernel_cells(r, &paper_models[i], plan, &kernels);
    }
    if (st == ABL_OK)
        st = table1_notes(r, o, &kernels);
    free(kernels.s);
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}

/* ---------------------------------------------------------------- Table 4 */

static const struct {
    abl_tau_kind kind, rn_kind;
    const char *name, *condition, *rn_condition, *name_latex, *condition_latex;
} table4_rows[] = {
    {ABL_TAU_SUBNORMAL, ABL_TAU_RN_ZERO, "Underflow τu", "x ≤ τu", "exp(x) = 0 iff x ≤ this", "Underflow $\\tau_u$",
     "$x \\le \\tau_u$"},
    {ABL_TAU_FTZ, ABL_TAU_FTZ, "Denorm τd", "τu < x ≤ τd", "exp(x) is subnormal (0 with FTZ) iff x < this",
     "Denorm $\\tau_d$", "$\\tau_u < x \\le \\tau_d$"},
    {ABL_TAU_MAX, ABL_TAU_RN_OVERFLOW, "Overflow τo", "τo ≤ x", "exp(x) rounds past the maximum iff x ≥ this",
     "Overflow $\\tau_o$", "$\\tau_o \\le x$"},
};

/* A tau cell of Table 4: the decimal text (text and JSON), in math mode for LaTeX. */
static abl_status tau_cell(abl_report *r, const abl_format *f, abl_tau_kind kind, int decimals)
{
    char *j = NULL;
    abl_status st = abl_threshold_string(f, kind, decimals, &j);
    if (st != ABL_OK)
        return st;
    char *t = abl_strf("$%s$", j);
    if (t == NULL)
        st = ABL_ERR_NO_MEMORY;
    else
        abl_report_cell(r, j, j, t);
    free(t);
    free(j);
    return st;
}

abl_status abl_table4_report(const abl_format *formats, size_t nformats, int decimals, int rn, abl_report **out)
{
    if (formats == NULL || nformats == 0 || out == NULL || decimals < 0 || decimals > 1000)
        return ABL_ERR_INVALID_ARGUMENT;
    /* The paper's caption when the formats are the paper's. */
    int paper_formats = nformats == 2 && strcmp(formats[0].name, "bf16") == 0 && strcmp(formats[1].name, "fp32") == 0;
    abl_report *r = abl_report_new(paper_formats ? "Thresholds for underflow, denormalization, and overflow each in "
                                                   "both 32-bit full precision (fp32) and brain float 16-bit "
                                                   "half-precision (bf16)."
                                                 : "Thresholds for underflow, denormalization, and overflow.",
                                   "rows");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_report_meta(r, "table", "table", "4", "\"4\"");
    meta_take(r, "decimals", "digits", abl_strf("%d decimals, correctly rounded (MPFR)", decimals),
              abl_strf("%d", decimals));
    abl_report_column(r, "name", "Name", ABL_ALIGN_LEFT);
    abl_report_column(r, "condition", "Condition", ABL_ALIGN_LEFT);
    abl_report_column(r, "format", "Format", ABL_ALIGN_LEFT);
    abl_report_column(r, "value", "Value", ABL_ALIGN_RIGHT);
    if (rn) {
        abl_report_column(r, "rn_value", "round-to-nearest", ABL_ALIGN_RIGHT);
        abl_report_column(r, "rn_meaning", "meaning", ABL_ALIGN_LEFT);
    }
    abl_status st = ABL_OK;
    for (size_t k = 0; k < sizeof table4_rows / sizeof table4_rows[0] && st == ABL_OK; k++) {
        for (size_t i = 0; i < nformats && st == ABL_OK; i++) {
            abl_report_row(r);
            abl_report_cell(r, table4_rows[k].name, NULL, table4_rows[k].name_latex);
            abl_report_cell(r, table4_rows[k].condition, NULL, table4_rows[k].condition_latex);
            abl_report_cell(r, formats[i].name, NULL, NULL);
            /* Numbers keep an ASCII minus (CSV readers); LaTeX sets them in math mode. */
            if ((st = tau_cell(r, &formats[i], table4_rows[k].kind, decimals)) != ABL_OK)
                break;
            if (rn) {
                if ((st = tau_cell(r, &formats[i], table4_rows[k].rn_kind, decimals)) != ABL_OK)
                    break;
                /* e4m3fn: the tie at max + ulp/2 rounds back to the (even) maximum. */
                int strict = table4_rows[k].kind == ABL_TAU_MAX && formats[i].max_deficit != 0;
                abl_report_cell(r, strict ? "exp(x) rounds past the maximum iff x > this" : table4_rows[k].rn_condition,
                                NULL, NULL);
            }
        }
    }
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    abl_report_note(r, "Values in natural-log units, computed with MPFR and correctly rounded: τu = ln(smallest "
                       "subnormal), τd = ln(smallest normal), τo = ln(largest finite).");
    abl_report_note(r, "τu is not where exp underflows to 0: exp(τu) is the smallest subnormal. Under "
                       "round-to-nearest exp(x) is 0 only for x ≤ τu − ln 2 (column round-to-nearest with --rn); "
                       "with flush-to-zero, for x < τd. The paper's distance tables use τd = -87.3365.");
    abl_report_note(r, "The paper prints the overflow condition as τd ≤ x; it is τo ≤ x (docs/errata.md).");
    *out = r;
    return ABL_OK;
}

/* ---------------------------------------------------------------- Table 5 */

static int parse_count(const char *s, long lo, long hi, long *out)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The catalogue entry of a Table 5 row (by the row's printed name), or NULL. */
static const abl_model *table5_model(const char *name)
{
    for (size_t i = 0; name != NULL && i < abl_model_count(); i++) {
        const abl_model *m = abl_model_at(i);
        if (m->table5 != NULL && strcmp(m->table5, name) == 0)
            return m;
    }
    return NULL;
}

/* The published tables to read: `*pub`, or the built-in copy loaded into *builtin and pointed to
 * (*own = 1: the caller frees it with abl_published_free). */
static abl_status published_or_builtin(const abl_published **pub, abl_published *builtin, int *own)
{
    *own = *pub == NULL;
    if (!*own)
        return ABL_OK;
    abl_status st = abl_published_builtin(builtin, NULL);
    if (st == ABL_OK)
        *pub = builtin;
    return st;
}

/* Table 5's rows as table5_report walks them: each printed row, then the row marked ‡ with the
 * configured head count (a row whose numbers do not parse ends the plan: the table fails there). */
static abl_status table5_kernel_plan(const abl_published *pub, abl_table_kernel_plan *tp)
{
    const abl_csv *t5 = &pub->files[ABL_PUB_TABLE5];
    abl_status st = ABL_OK;
    for (size_t row = 0; row < t5->rows && st == ABL_OK; row++) {
        long heads, window;
        if (parse_count(abl_csv_get(t5, row, "heads"), 1, ABL_MAX_HEADS, &heads) != 0 ||
            parse_count(abl_csv_get(t5, row, "window"), 1, (long)1e15, &window) != 0)
            break;
        const char *name = abl_csv_get(t5, row, "model");
        st = abl_kernel_cells_plan_row(tp, table5_model(name), (int)heads, (uint64_t)window, 1);
        for (size_t i = 0; st == ABL_OK && name != NULL && i < abl_paper_model_count(); i++)
            if (strcmp(paper_models[i].table5_name, name) == 0 && paper_models[i].heads != heads)
                st = abl_kernel_cells_plan_row(tp, table5_model(name), paper_models[i].heads, (uint64_t)window, 1);
    }
    return st;
}

abl_status abl_table_kernel_plan_make(int table, const abl_published *pub, abl_table_kernel_plan *out)
{
    if (out == NULL || (table != 1 && table != 5))
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->table = table;
    abl_status st = ABL_OK;
    if (table == 1) {
        for (size_t i = 0; i < abl_paper_model_count() && st == ABL_OK; i++)
            st = abl_kernel_cells_plan_row(out, abl_model_find(paper_models[i].hub_id), paper_models[i].heads,
                                           paper_models[i].window, 0);
    } else {
        abl_published builtin;
        int own;
        st = published_or_builtin(&pub, &builtin, &own);
        if (st == ABL_OK) {
            st = table5_kernel_plan(pub, out);
            if (own)
                abl_published_free(&builtin);
        }
    }
    if (st != ABL_OK)
        abl_table_kernel_plan_free(out);
    return st;
}

void abl_table_kernel_plan_free(abl_table_kernel_plan *p)
{
    if (p == NULL)
        return;
    free(p->models);
    abl_plan_free(&p->plan);
    memset(p, 0, sizeof *p);
}

abl_status abl_table_kernel_estimate(int table, const abl_published *pub, abl_cost *out)
{
    if (out == NULL || (table != 1 && table != 5))
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    abl_table_kernel_plan p;
    abl_status st = abl_table_kernel_plan_make(table, pub, &p);
    if (st == ABL_OK)
        *out = p.plan.cost;
    abl_table_kernel_plan_free(&p);
    return st;
}

/* The kernel columns of one Table 5 row; the code path joins the footnote's list. */
/* What the kernel columns carry from row to row: the footnotes' lists and the previous answer. */
typedef struct table5_kernel_state {
    abl_kernel_notes notes;
    abl_kernel_cells last;
    int have_last;
    abl_table_kernel_plan *plan; /* the rows' kernel cells, as planned */
} table5_kernel_state;

static abl_status table5_kernel(abl_report *r, const char *name, long heads, long window, const char *dtype,
                                table5_kernel_state *ks)
{
    abl_kernel_cells k;
    abl_status st = abl_kernel_cells_run_step(ks->plan, table5_model(name), (int)heads, (uint64_t)window,
                                              ks->have_last ? &ks->last : NULL, &k);
    if (st == ABL_OK) {
        abl_report_cell(r, k.skipped ? "" : k.preset, k.skipped ? "null" : NULL, NULL);
        abl_kernel_cell_first_blind(r, &k, 0);
        abl_kernel_cell_first_blind(r, &k, 1);
        abl_kernel_cell_blind_heads(r, &k);
        abl_kernel_cell_fraction(r, &k, 0);
        abl_kernel_cell_fraction(r, &k, 1);
        abl_kernel_notes_add(&ks->notes, &k, dtype);
        if (ks->have_last)
            abl_kernel_cells_clear(&ks->last);
        ks->last = k; /* keeps k's fractions */
        ks->have_last = 1;
        return ABL_OK;
    }
    abl_kernel_cells_clear(&k);
    return st;
}

/* The footnotes on the kernel columns: what they are, the code paths, the empty cells. */
static abl_status table5_kernel_notes(abl_report *r, const abl_kernel_notes *n, const char *dtype)
{
    char *dtypes = abl_kernel_notes_dtypes(n);
    size_t len = 1400 + (dtypes != NULL ? strlen(dtypes) : 0);
    char *t = malloc(len);
    if (t == NULL) {
        free(dtypes);
        return ABL_ERR_NO_MEMORY;
    }
    snprintf(t, len,
             "kernel columns: the model on a real kernel, not the paper's exponent model: its catalogue entry "
             "(alibi-blind models NAME: heads, slopes as the model's code computes them, dtype %s%s%s) on its "
             "default code path at context W, the exact zero weights from the zero-logit predictor (as analyze "
             "--model NAME --ctx W). kernel 1, kernel H: first_blind, the smallest d with an exactly-zero weight "
             "in the last row, of the steepest and the flattest head (those of δ1 and δH; none: no zero inside "
             "W); kernel blind: heads with such a zero; kernel row %%, kernel matrix %%: the exactly-zero weights "
             "of that row and of the W(W + 1)/2 causal entries. enc rows run under a causal mask, where "
             "−m·|i − j| is the relative bias: their last row is the encoder's own (every key on one side), the "
             "matrix is that of the causally masked layer.",
             dtype, dtypes != NULL ? " except " : "", dtypes != NULL ? dtypes : "");
    free(dtypes);
    abl_status st = abl_report_note(r, t);
    free(t);
    char *paths = abl_kernel_notes_paths(n), *empty = abl_kernel_notes_empty(n);
    if (paths == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        st = abl_report_note(r, paths);
    if (st == ABL_OK && empty != NULL)
        st = abl_report_note(r, empty);
    free(paths);
    free(empty);
    return st;
}

/* One Table 5 row: the printed inputs, then the computed columns, then the kernel's. */
static abl_status table5_row(abl_report *r, const abl_csv *t5, size_t row, const char *name, long heads,
                             const abl_paper_options *o, table5_kernel_state *ks)
{
    long window;
    if (parse_count(abl_csv_get(t5, row, "window"), 1, (long)1e15, &window) != 0)
        return ABL_ERR_PARSE;
    static const char *const inputs[] = {"arch", "type", "size", "languages", "public"};
    abl_analysis a;
    abl_status st = run_layer(NULL /* press */, (int)heads, 0, &o->format, o->convention, (uint64_t)window, &a);
    if (st != ABL_OK) {
        abl_analysis_free(&a);
        return st;
    }
    abl_report_row(r);
    abl_report_cell(r, name, NULL, NULL);
    for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++) {
        const char *v = abl_csv_get(t5, row, inputs[k]);
        abl_report_cell(r, v != NULL ? v : "", NULL, NULL);
    }
    cell_take(r, abl_strf("%ld", window), abl_strf("%ld", window));
    cell_take(r, abl_strf("%ld", heads), abl_strf("%ld", heads));
    const char *sl = abl_csv_get(t5, row, "slopes");
    abl_report_cell(r, sl != NULL ? sl : "", NULL, NULL);
    delta_pair_cells(r, &a, o->ieee);
    cell_take(r, abl_strf("%d", a.blind_heads), abl_strf("%d", a.blind_heads));
    cell_take(r, abl_fraction_percent_text(a.row_fraction, 2), abl_fraction_decimal_text(a.row_fraction, 17));
    cell_take(r, abl_fraction_percent_text(a.matrix_fraction, 2), abl_fraction_decimal_text(a.matrix_fraction, 17));
    abl_analysis_free(&a);
    /* The ‡ row carries the printed name plus the mark; the catalogue knows the printed name. The
     * name comes from the published file (any length): copied whole, never into a fixed buffer. */
    const char *mark = strstr(name, "‡");
    size_t len = mark != NULL ? (size_t)(mark - name) : strlen(name);
    char *plain = malloc(len + 1);
    if (plain == NULL)
        return ABL_ERR_NO_MEMORY;
    memcpy(plain, name, len);
    plain[len] = '\0';
    st = table5_kernel(r, plain, heads, window, o->format.name, ks);
    free(plain);
    return st;
}

abl_status abl_table5_report(const abl_published *pub, const abl_paper_options *o, abl_report **out)
{
    if (o == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_table_kernel_plan plan;
    abl_status st = abl_table_kernel_plan_make(5, pub, &plan);
    if (st == ABL_OK)
        st = abl_table5_report_plan(pub, o, &plan, out);
    abl_table_kernel_plan_free(&plan);
    return st;
}

/* Table 5's report with its meta lines and columns, before any row (NULL: out of memory). */
static abl_report *table5_new(const abl_paper_options *o)
{
    abl_report *r = abl_report_new("Overview of models trained with the ALiBi positional encoding, with their "
                                   "blindness distances and underflow fractions at their own window.",
                                   "models");
    if (r == NULL)
        return NULL;
    add_common_meta(r, "5", &o->format, o->convention);
    abl_report_meta(r, "slopes", "slopes", "press (Press et al.) for every model", "\"press\"");
    abl_report_column(r, "model", "Model", ABL_ALIGN_LEFT);
    abl_report_column(r, "arch", "Arch.", ABL_ALIGN_LEFT);
    abl_report_column(r, "type", "Type", ABL_ALIGN_LEFT);
    abl_report_column(r, "size", "Size", ABL_ALIGN_LEFT);
    abl_report_column(r, "languages", "Language(s)", ABL_ALIGN_LEFT);
    abl_report_column(r, "public", "Public", ABL_ALIGN_LEFT);
    abl_report_column(r, "window", "Window", ABL_ALIGN_RIGHT);
    abl_report_column(r, "head_count", "Heads", ABL_ALIGN_RIGHT);
    slope_delta_columns(r, o->ieee);
    abl_report_column(r, "blind_heads", "blind in W", ABL_ALIGN_RIGHT);
    abl_report_column(r, "row_fraction", "row % at W", ABL_ALIGN_RIGHT);
    abl_report_column(r, "matrix_fraction", "matrix % at W", ABL_ALIGN_RIGHT);
    /* The real kernel beside the paper's model (issue 8): for programs, the preset it ran. */
    abl_report_column(r, "pipeline", "pipeline", ABL_ALIGN_LEFT);
    abl_report_column_data_only(r);
    abl_report_column(r, "first_blind_1", "kernel 1", ABL_ALIGN_RIGHT);
    abl_report_column_new_panel(r);
    abl_report_column(r, "first_blind_h", "kernel H", ABL_ALIGN_RIGHT);
    abl_report_column(r, "kernel_blind_heads", "kernel blind", ABL_ALIGN_RIGHT);
    abl_report_column(r, "kernel_row_fraction", "kernel row %", ABL_ALIGN_RIGHT);
    abl_report_column(r, "kernel_matrix_fraction", "kernel matrix %", ABL_ALIGN_RIGHT);
    return r;
}

/* A printed head count that contradicts the model's configuration (a Table 1 model's): the row again,
 * marked ‡, with the configured count; *note (freed first) says so. */
static abl_status table5_configured_rows(abl_report *r, const abl_csv *t5, size_t row, const char *name, long heads,
                                         const abl_paper_options *o, table5_kernel_state *ks, char **note)
{
    for (size_t i = 0; i < abl_paper_model_count(); i++) {
        const abl_paper_model *m = &paper_models[i];
        if (strcmp(m->table5_name, name) != 0 || m->heads == heads)
            continue;
        char *label = abl_strf("%s‡", name);
        abl_status st = label != NULL ? table5_row(r, t5, row, label, m->heads, o, ks) : ABL_ERR_NO_MEMORY;
        free(label);
        if (st != ABL_OK)
            return st;
        free(*note);
        *note = abl_strf("‡: %s is printed with %ld heads; its configuration (%s) and Table 1 have %d. The row "
                         "marked ‡ is computed with %d (docs/errata.md).",
                         name, heads, m->config, m->heads, m->heads);
        if (*note == NULL)
            return ABL_ERR_NO_MEMORY;
    }
    return ABL_OK;
}

/* Every printed row of Table 5 (each followed by its ‡ row when there is one); *note: the last ‡ footnote. */
static abl_status table5_rows(abl_report *r, const abl_csv *t5, const abl_paper_options *o, table5_kernel_state *ks,
                              char **note)
{
    abl_status st = ABL_OK;
    for (size_t row = 0; row < t5->rows && st == ABL_OK; row++) {
        const char *name = abl_csv_get(t5, row, "model");
        long heads;
        if (parse_count(abl_csv_get(t5, row, "heads"), 1, ABL_MAX_HEADS, &heads) != 0)
            return ABL_ERR_PARSE;
        if ((st = table5_row(r, t5, row, name, heads, o, ks)) == ABL_OK)
            st = table5_configured_rows(r, t5, row, name, heads, o, ks, note);
    }
    return st;
}

/* Table 5's notes: what is printed and what computed, the columns, the encoders, the ‡ footnote (note,
 * may be NULL) and the kernels'. */
static abl_status table5_notes(abl_report *r, const abl_paper_options *o, const char *note,
                               const abl_kernel_notes *kn)
{
    char *tau = tau_text(&o->format, o->convention);
    char *t = tau == NULL ? NULL
                          : abl_strf("Model, arch., type, size, languages, public, window, heads and slopes as the "
                                     "paper's Table 5 prints them; δ1, δH, blind in W, row %% and matrix %% are "
                                     "computed with press slopes for the printed number of heads (%s, τ = %s).",
                                     o->format.name, tau);
    free(tau);
    if (t == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_report_note(r, t);
    free(t);
    abl_report_note(r, "blind in W: heads whose δ is below the window (blind somewhere in the last row of a "
                       "W-token context); row %: blind share of that row; matrix %: blind share of the W(W + 1)/2 "
                       "causal entries.");
    abl_report_note(r, "enc: encoders use the symmetric bias −m·|i − j|; the same δ applies on both sides, and the "
                       "fractions above count the causal half.");
    if (note != NULL)
        abl_report_note(r, note);
    return table5_kernel_notes(r, kn, o->format.name);
}

abl_status abl_table5_report_plan(const abl_published *pub, const abl_paper_options *o, abl_table_kernel_plan *plan,
                                  abl_report **out)
{
    if (o == NULL || out == NULL || plan == NULL || plan->table != 5)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_published builtin;
    int own;
    abl_status st = published_or_builtin(&pub, &builtin, &own);
    if (st != ABL_OK)
        return st;
    abl_report *r = table5_new(o);
    table5_kernel_state *ks = r != NULL ? calloc(1, sizeof *ks) : NULL;
    char *note = NULL; /* the last contradicted head count's footnote */
    if (ks == NULL)
        st = ABL_ERR_NO_MEMORY;
    else {
        ks->plan = plan;
        st = table5_rows(r, &pub->files[ABL_PUB_TABLE5], o, ks, &note);
    }
    if (own)
        abl_published_free(&builtin);
    if (ks != NULL && ks->have_last)
        abl_kernel_cells_clear(&ks->last);
    if (st == ABL_OK)
        st = table5_notes(r, o, note, &ks->notes);
    free(note);
    free(ks);
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}

/* ---------------------------------------------------------------- Figure 1 */

void abl_figure_config_default(abl_figure_config *c, int panel_b)
{
    memset(c, 0, sizeof *c);
    abl_format_lookup("bf16", &c->format);
    c->convention = ABL_CONV_PAPER;
    c->heads = 16;
    c->slopes = NULL;
    c->max_distance = 4096;
    c->step = panel_b ? 16 : 64;
}

void abl_figure_free(abl_figure *f)
{
    if (f == NULL)
        return;
    if (f->deltas != NULL)
        for (int h = 0; h < f->heads; h++)
            abl_delta_clear(&f->deltas[h]);
    free(f->deltas);
    free(f->slopes);
    free(f->x);
    abl_schedule_free(&f->schedule);
    abl_schedule_spec_free(f->spec);
    free(f->spec);
    memset(f, 0, sizeof *f);
}

/* Past this many points a series is no longer figure data. */
#define ABL_FIGURE_MAX_POINTS 1000001

abl_status abl_figure_run(const abl_figure_config *c, abl_figure *f)
{
    if (c == NULL || f == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(f, 0, sizeof *f);
    abl_figure_plan p;
    abl_status st = abl_figure_plan_make(c, &p);
    if (st == ABL_OK)
        st = abl_figure_run_plan(&p, f);
    abl_figure_plan_free(&p);
    return st;
}

abl_status abl_figure_run_plan(abl_figure_plan *plan, abl_figure *f)
{
    if (plan == NULL || f == NULL || plan->plan.nsteps != 2)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(f, 0, sizeof *f);
    const abl_figure_config *c = &plan->config;
    uint64_t n = plan->points;
    f->config = *c;
    abl_analysis a;
    plan->plan.steps[0].executed++;
    abl_status st = abl_analysis_run(&plan->analysis, &a);
    if (st != ABL_OK) {
        abl_analysis_free(&a);
        return st;
    }
    /* The figure keeps the schedule: its slopes point into it. */
    f->schedule = a.schedule;
    memset(&a.schedule, 0, sizeof a.schedule);
    f->spec = a.spec;
    a.spec = NULL;
    f->slopes_spec = f->schedule.spec;
    f->config.slopes = f->spec;
    f->heads = a.heads;
    f->slopes = calloc((size_t)a.heads, sizeof *f->slopes);
    f->deltas = calloc((size_t)a.heads, sizeof *f->deltas);
    f->x = calloc((size_t)n, sizeof *f->x);
    if (f->slopes == NULL || f->deltas == NULL || f->x == NULL) {
        abl_analysis_free(&a);
        free(f->slopes);
        free(f->deltas);
        free(f->x);
        abl_schedule_free(&f->schedule);
        abl_schedule_spec_free(f->spec);
        free(f->spec);
        memset(f, 0, sizeof *f);
        return ABL_ERR_NO_MEMORY;
    }
    for (int h = 0; h < a.heads; h++) {
        f->slopes[h] = a.results[h].slope;
        abl_delta_init(&f->deltas[h]);
        abl_delta_set(&f->deltas[h], &a.results[h].delta);
    }
    abl_analysis_free(&a);
    for (uint64_t i = 0; i < n; i++)
        f->x[i] = i * c->step < c->max_distance ? i * c->step : c->max_distance;
    f->points = (size_t)n;
    plan->plan.steps[1].executed++; /* the points laid out; the writers evaluate their values */
    return ABL_OK;
}

/* -m·d with 4 decimals, correctly rounded from a 256-bit product (exact for dyadic slopes); malloc'd (NULL:
 * out of memory). */
static char *bias_text(const abl_slope *s, uint64_t d)
{
    if (d == 0)
        return abl_strf("0.0000");
    mpfr_t m;
    mpfr_init2(m, 256);
    abl_slope_mpfr(m, s, MPFR_RNDN);
    mpz_t z;
    mpz_init(z);
    mpz_import(z, 1, 1, sizeof d, 0, 0, &d);
    mpfr_mul_z(m, m, z, MPFR_RNDN);
    mpfr_neg(m, m, MPFR_RNDN);
    char *g = NULL, *out = NULL;
    if (mpfr_asprintf(&g, "%.4Rf", m) >= 0) {
        out = abl_strf("%s", g);
        mpfr_free_str(g);
    }
    mpz_clear(z);
    mpfr_clear(m);
    return out;
}

static void figure_meta(abl_report *r, const abl_figure *f, const char *figure)
{
    meta_take(r, "figure", "figure", abl_strf("%s", figure), abl_strf("\"%s\"", figure));
    format_meta(r, &f->config.format, f->config.convention);
    {
        /* The schedule as given, whole (a long list stays long). */
        size_t sl = strlen(f->slopes_spec);
        char *st_ = malloc(sl + 32), *sj = malloc(2 * sl + 3);
        if (st_ != NULL && sj != NULL) {
            sprintf(st_, "%s (%d heads)", f->slopes_spec, f->heads);
            char *w = sj;
            *w++ = '"';
            for (const char *p = f->slopes_spec; *p != '\0'; p++) {
                if (*p == '"' || *p == '\\')
                    *w++ = '\\';
                *w++ = *p;
            }
            *w++ = '"';
            *w = '\0';
            abl_report_meta(r, "slopes", "slopes", st_, sj);
        }
        free(st_);
        free(sj);
    }
    /* Each head's slope and delta, steepest first: where its line crosses τ (every head, any length). */
    abl_text ht = {0}, hj = {0};
    abl_text_add(&ht, "%s", "");
    abl_text_add(&hj, "[");
    for (int h = 0; h < f->heads; h++) {
        char *d, *dj;
        char *s = abl_slope_exact_text(&f->slopes[h]);
        delta_cells(&f->deltas[h], &d, &dj);
        if (d == NULL || dj == NULL)
            ht.oom = 1;
        abl_text_add(&ht, "%s%s: %s", h ? ", " : "", s != NULL ? s : "?", d != NULL ? d : "");
        char *m = abl_slope_decimal_text(&f->slopes[h], 17);   /* slope as a number in every head record */
        if (m == NULL)
            hj.oom = 1;
        abl_text_add(&hj, "%s{\"head\": %d, \"slope_exact\": ", h ? ", " : "", h + 1);
        abl_text_json(&hj, s != NULL ? s : "?");
        abl_text_add(&hj, ", \"slope\": %s%s, ", m != NULL ? m : "null", abl_json_real_suffix(m));
        abl_text_json_integer(&hj, "delta", dj != NULL ? dj : "null");
        abl_text_add(&hj, "}");
        free(m);
        free(s);
        free(d);
        free(dj);
    }
    abl_text_add(&hj, "]");
    if (!ht.oom && !hj.oom)
        abl_report_meta(r, "heads", "δ per head (steepest first)", abl_text_str(&ht), abl_text_str(&hj));
    free(ht.s);
    free(hj.s);
}

/* Either panel's report up to its first column: the cell limit, the title, the meta lines, the distance. */
static abl_status figure_report_start(const abl_figure *f, int have_out, double cells, const char *title,
                                      const char *panel, const char *distance_header, abl_report **r)
{
    if (f == NULL || !have_out || f->heads < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    if (cells > ABL_FIGURE_MAX_CELLS)
        return ABL_ERR_CONTEXT_RANGE;
    if ((*r = abl_report_new(title, "points")) == NULL)
        return ABL_ERR_NO_MEMORY;
    figure_meta(*r, f, panel);
    abl_report_column(*r, "distance", distance_header, ABL_ALIGN_RIGHT);
    return ABL_OK;
}

abl_status abl_figure1a_report(const abl_figure *f, abl_report **out)
{
    abl_report *r;
    abl_status st0 = figure_report_start(f, out != NULL,
                                         f != NULL ? (double)f->points * (double)(f->heads + 2) : 0,
                                         "ALiBi bias −m·d versus token distance, one series per head, and the "
                                         "threshold τ",
                                         "1a", "d", &r);
    if (st0 != ABL_OK)
        return st0;
    for (int h = 1; h <= f->heads; h++) {
        char *key = abl_strf("h%d", h);
        if (key != NULL)
            abl_report_column(r, key, key, ABL_ALIGN_RIGHT);
        free(key);
    }
    abl_report_column(r, "tau", "τ", ABL_ALIGN_RIGHT);
    char *tau = NULL;
    abl_threshold_string(&f->config.format, abl_convention_tau_kind(f->config.convention), 4, &tau);
    char *taut = tau != NULL ? abl_strf("$%s$", tau) : NULL;
    if (taut == NULL) {
        free(tau);
        abl_report_free(r);
        return ABL_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < f->points; i++) {
        abl_report_row(r);
        cell_take(r, abl_strf("%llu", (unsigned long long)f->x[i]), abl_strf("%llu", (unsigned long long)f->x[i]));
        /* ASCII minus: the CSV is read by plotting tools. */
        uint64_t d = f->x[i];
        for (int h = 0; h < f->heads; h++) {
            char *t = bias_text(&f->slopes[h], d);
            char *p = t != NULL ? abl_strf("$%s$", t) : NULL;
            abl_report_cell(r, t != NULL ? t : "", t != NULL ? t : "null", p);
            free(t);
            free(p);
        }
        abl_report_cell(r, tau, tau, taut);
    }
    free(tau);
    free(taut);
    abl_report_note(r, "h1 … hH: bias −m·d of each head (steepest first) at distance d, 4 decimals; a head's "
                       "weights underflow where its line reaches τ (its δ above).");
    *out = r;
    return ABL_OK;
}

/* The CSV cells of Figure 1b at one context n, malloc'd. */
typedef struct {
    char *blind, *row, *mat;
} fig1b_row;

static void fig1b_row_free(fig1b_row *c)
{
    free(c->blind);
    free(c->row);
    free(c->mat);
}

/* Row and matrix fractions of Figure 1b at context n, as the CSV cells (blind heads, 6 decimals). */
static abl_status fig1b_cells(const abl_figure *f, uint64_t n, fig1b_row *c)
{
    mpq_t row, mat, hundredth;
    mpq_inits(row, mat, hundredth, (mpq_ptr)0);
    mpq_set_ui(hundredth, 1, 100);
    abl_status st = ABL_OK;
    int blind = 0;
    if (n > 0) {
        for (int h = 0; h < f->heads; h++)
            blind += abl_delta_lt_u64(&f->deltas[h], n);
        st = abl_fraction_row(f->deltas, f->heads, n, 0, row);
        if (st == ABL_OK)
            st = abl_fraction_matrix(f->deltas, f->heads, n, 0, mat);
    }
    c->blind = abl_strf("%d", blind);
    /* A fraction with 6 decimals: the percent text of q/100. */
    mpq_mul(row, row, hundredth);
    mpq_mul(mat, mat, hundredth);
    c->row = abl_fraction_percent_text(row, 6);
    c->mat = abl_fraction_percent_text(mat, 6);
    mpq_clears(row, mat, hundredth, (mpq_ptr)0);
    if (st == ABL_OK && (c->blind == NULL || c->row == NULL || c->mat == NULL))
        st = ABL_ERR_NO_MEMORY;
    return st;
}

abl_status abl_figure1b_report(const abl_figure *f, abl_report **out)
{
    abl_report *r;
    abl_status st = figure_report_start(f, out != NULL, f != NULL ? (double)f->points : 0,
                                        "Underflow fraction versus token distance: row (last query row) and matrix "
                                        "(all causal entries)",
                                        "1b", "N", &r);
    if (st != ABL_OK)
        return st;
    abl_report_column(r, "blind_heads", "blind heads", ABL_ALIGN_RIGHT);
    abl_report_column(r, "row_fraction", "row", ABL_ALIGN_RIGHT);
    abl_report_column(r, "matrix_fraction", "matrix", ABL_ALIGN_RIGHT);
    for (size_t i = 0; i < f->points && st == ABL_OK; i++) {
        uint64_t n = f->x[i];
        fig1b_row c = {NULL, NULL, NULL};
        if ((st = fig1b_cells(f, n, &c)) == ABL_OK) {
            abl_report_row(r);
            cell_take(r, abl_strf("%llu", (unsigned long long)n), abl_strf("%llu", (unsigned long long)n));
            abl_report_cell(r, c.blind, c.blind, NULL);
            abl_report_cell(r, c.row, c.row, NULL);
            abl_report_cell(r, c.mat, c.mat, NULL);
        }
        fig1b_row_free(&c);
    }
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    abl_report_note(r, "row: (1/H)·Σ max(0, N − δh)/N, the blind share of the N keys of the last query row "
                       "(the paper's 36.6 % at N = 2048). matrix: (1/H)·Σ T(N − δh)/T(N), T(k) = k(k + 1)/2, the "
                       "blind share of all causal entries. Exact rationals, rounded to 6 decimals; 0 at N = 0.");
    *out = r;
    return ABL_OK;
}

void abl_figure_estimate(const abl_figure *f, abl_cost *out)
{
    memset(out, 0, sizeof *out);
    out->units = (double)f->points * (double)f->heads;
    out->seconds = out->units / ABL_FIGURE_RATE;
    out->threads = 1;
    out->unit_name = "values (points x heads)";
}

static const char figure_units[] = "values (points x heads)";

abl_status abl_figure_plan_make(const abl_figure_config *c, abl_figure_plan *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->config = *c;
    if (c->step < 1 || c->max_distance < 1 || c->max_distance > ABL_MAX_CONTEXT)
        return ABL_ERR_CONTEXT_RANGE;
    uint64_t n = c->max_distance / c->step + 1 + (c->max_distance % c->step != 0);
    if (n > ABL_FIGURE_MAX_POINTS)
        return ABL_ERR_CONTEXT_RANGE; /* a hard limit (abl_figure_run says so), not a budget */
    out->points = n;
    /* The heads' deltas: one analysis at N = 1 (the deltas do not depend on N). */
    abl_analysis_config *a = &out->analysis;
    a->heads = c->heads;
    a->slopes = c->slopes;
    a->format = c->format;
    a->convention = c->convention;
    a->context = 1;
    abl_plan_step s;
    memset(&s, 0, sizeof s);
    s.what = "analysis";
    /* Priced at the largest N of the axis, an upper bound of the N = 1 analysis the run makes (the mass
     * lost of the heads blind within N is not computed at N = 1); kept so that the budget's refusals
     * read as before (figure_budget: 56.7 minutes, 56.4 priced at N = 1). A schedule the estimate
     * cannot read costs nothing: the run's analysis reports it. */
    abl_analysis_config priced = *a;
    priced.context = c->max_distance;
    out->priced = abl_analysis_estimate(&priced, &s.cost);
    if (out->priced != ABL_OK)
        memset(&s.cost, 0, sizeof s.cost);
    int heads = out->priced == ABL_OK ? (int)s.cost.units : c->heads; /* the analysis counts a list's heads */
    /* The figure is counted in plotted values: the analysis takes time but plots none. */
    s.cost.units = 0;
    s.cost.unit_name = figure_units;
    s.context = 1;
    s.heads = heads;
    s.calls = 1;
    abl_status st = abl_plan_add(&out->plan, &s);
    if (st != ABL_OK)
        return st;
    memset(&s, 0, sizeof s);
    s.what = "values";
    s.cost.units = (double)n * heads;
    s.cost.seconds = s.cost.units / ABL_FIGURE_RATE;
    s.cost.threads = 1;
    s.cost.unit_name = figure_units;
    s.context = n;
    s.heads = heads;
    s.calls = 1;
    if ((st = abl_plan_add(&out->plan, &s)) != ABL_OK)
        abl_figure_plan_free(out);
    return st;
}

void abl_figure_plan_free(abl_figure_plan *p)
{
    if (p != NULL)
        abl_plan_free(&p->plan);
}

abl_status abl_figure_estimate_config(const abl_figure_config *c, int panel_b, abl_cost *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    (void)panel_b; /* both panels evaluate points x heads values */
    abl_figure_plan p;
    abl_status st = abl_figure_plan_make(c, &p);
    if (st == ABL_OK && (st = p.priced) == ABL_OK)
        *out = p.plan.cost;
    abl_figure_plan_free(&p);
    return st;
}

abl_status abl_figure_write_csv(const abl_figure *f, int panel_b, FILE *out, const abl_progress *progress)
{
    if (f == NULL || out == NULL || f->heads < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    char *tau = NULL;
    if (panel_b) {
        fputs("distance,blind_heads,row_fraction,matrix_fraction\n", out);
    } else {
        fputs("distance", out);
        for (int h = 1; h <= f->heads; h++)
            fprintf(out, ",h%d", h);
        fputs(",tau\n", out);
        abl_status st0 = abl_threshold_string(&f->config.format, abl_convention_tau_kind(f->config.convention), 4, &tau);
        if (st0 != ABL_OK)
            return st0;
    }
    abl_status st = ABL_OK;
    for (size_t i = 0; i < f->points && st == ABL_OK; i++) {
        uint64_t n = f->x[i];
        if (panel_b) {
            fig1b_row c = {NULL, NULL, NULL};
            if ((st = fig1b_cells(f, n, &c)) == ABL_OK)
                fprintf(out, "%llu,%s,%s,%s\n", (unsigned long long)n, c.blind, c.row, c.mat);
            fig1b_row_free(&c);
        } else {
            fprintf(out, "%llu", (unsigned long long)n);
            for (int h = 0; h < f->heads && st == ABL_OK; h++) {
                char *t = bias_text(&f->slopes[h], n);
                if (t == NULL)
                    st = ABL_ERR_NO_MEMORY;
                else
                    fprintf(out, ",%s", t);
                free(t);
            }
            fprintf(out, ",%s\n", tau);
        }
        if (ferror(out))
            st = ABL_ERR_IO;
        if (progress != NULL && progress->fn != NULL)
            progress->fn(progress->ctx, (uint64_t)i + 1, (uint64_t)f->points);
    }
    free(tau);
    return st;
}
