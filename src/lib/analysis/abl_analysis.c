/* alibi-blind: one layer analysed end to end, and its report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "abl/analysis/analysis.h"
#include "abl/analysis/bidirectional.h"
#include "abl/core/fraction.h"
#include "abl/core/threshold.h"
#include "abl_internal.h"
#include "report/abl_report_internal.h"
#include "analysis/abl_analysis_internal.h"

abl_status abl_mitigations_parse(const char *text, unsigned *out)
{
    if (text == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    *out = 0;
    if (strcasecmp(text, "none") == 0)
        return ABL_OK;
    const char *p = text;
    if (*p == '\0')
        return ABL_ERR_INVALID_ARGUMENT;
    while (*p != '\0') {
        unsigned bit;
        switch (*p) {
        case 'C': case 'c': bit = ABL_MITIGATE_CLAMP; break;
        case 'E': case 'e': bit = ABL_MITIGATE_EXPLICIT; break;
        case 'L': case 'l': bit = ABL_MITIGATE_LOG; break;
        case 'S': case 's': bit = ABL_MITIGATE_SOFTCAP; break;
        default: return ABL_ERR_INVALID_ARGUMENT;
        }
        *out |= bit;
        p++;
        if (*p == ',' || *p == '+') {
            p++;
            if (*p == '\0')
                return ABL_ERR_INVALID_ARGUMENT;
        } else if (*p != '\0') {
            return ABL_ERR_INVALID_ARGUMENT;
        }
    }
    return ABL_OK;
}

char *abl_mitigations_name(unsigned m)
{
    static const char letters[] = "CELS";
    abl_text t = {0};
    for (int i = 0; i < 4; i++)
        if (m & (1u << i))
            abl_text_add(&t, "%s%c", t.n > 0 ? "+" : "", letters[i]);
    if (t.n == 0)
        abl_text_add(&t, "none");
    return abl_text_take(&t);
}

static void head_init(abl_head_result *h)
{
    memset(h, 0, sizeof *h);
    abl_delta_init(&h->delta);
    abl_delta_init(&h->delta_ieee);
    abl_delta_init(&h->delta_lo);
    abl_delta_init(&h->delta_hi);
    abl_delta_init(&h->delta_exponent);
    abl_delta_init(&h->delta_range_lo);
    abl_delta_init(&h->delta_range_hi);
    mpz_init(h->row_blind);
    mpz_init(h->matrix_blind);
    mpz_init(h->mid_blind);
}

static void head_clear(abl_head_result *h)
{
    abl_delta_clear(&h->delta);
    abl_delta_clear(&h->delta_ieee);
    abl_delta_clear(&h->delta_lo);
    abl_delta_clear(&h->delta_hi);
    abl_delta_clear(&h->delta_exponent);
    abl_delta_clear(&h->delta_range_lo);
    abl_delta_clear(&h->delta_range_hi);
    mpz_clear(h->row_blind);
    mpz_clear(h->matrix_blind);
    mpz_clear(h->mid_blind);
}

void abl_analysis_free(abl_analysis *a)
{
    if (a == NULL)
        return;
    if (a->results != NULL) {
        for (int i = 0; i < a->heads; i++)
            head_clear(&a->results[i]);
        free(a->results);
        a->results = NULL;
    }
    abl_schedule_free(&a->schedule);
    abl_schedule_spec_free(a->spec);
    free(a->spec);
    a->spec = NULL;
    free(a->slopes_spec);
    a->slopes_spec = NULL;
    mpq_clears(a->logit, a->clamp, a->softcap, a->neg_softcap, a->logit_lo, a->logit_hi, (mpq_ptr)0);
    mpz_clear(a->row_attended);
    mpz_clear(a->matrix_attended);
    mpq_clear(a->row_fraction);
    mpq_clear(a->matrix_fraction);
    mpz_clear(a->mid_attended);
    mpq_clear(a->mid_fraction);
}

/* Keys attended by row r (0-based): r + 1, or W + 1 under a window W (keys with d > W are masked). */
static uint64_t attended_keys(uint64_t r, uint64_t window)
{
    return window > 0 && r > window ? window + 1 : r + 1;
}

/* delta as a key of the matrix walk: its value, or n for "no key of any row of an n-token context"
 * (never, astronomically large and not materialised (exact = 0, value unset), or simply >= n). Every
 * row r < n then counts max(0, min(r, W) - key + 1) blind keys, and the key is as monotone in r as delta. */
static uint64_t delta_key(const abl_delta *d, uint64_t n)
{
    if (!abl_delta_lt_u64(d, n))
        return n;
    int64_t v = 0;
    abl_delta_get_i64(d, &v); /* delta < n <= 10^18: fits */
    return (uint64_t)v;
}

/*
 * Blind entries of the whole matrix at weight level. Row r has r + 1 keys and its own S_{r+1}, so its
 * delta_r is non-increasing in r (S grows with the row); walk the runs of equal delta_r with a binary
 * search. Runs are compared by delta_key, so all the rows with nothing blind (delta_r >= n, huge or
 * never) form one run: comparing two unmaterialised deltas by their unset integers once merged the
 * flat head's first rows with its last, all-blind ones and counted nothing (issue 15, item 3).
 */
/* Progress of an analysis: `done` units of the 2 * ABL_ANALYSIS_PROGRESS_UNITS * heads in all. */
static void analysis_progress(const abl_analysis_config *c, int heads, double done)
{
    if (c->progress.fn == NULL)
        return;
    uint64_t total = 2 * (uint64_t)ABL_ANALYSIS_PROGRESS_UNITS * (uint64_t)heads;
    uint64_t d = done <= 0 ? 0 : done >= (double)total ? total : (uint64_t)done;
    c->progress.fn(c->progress.ctx, d, total);
}

static abl_status weight_matrix_blind(const abl_slope *s, abl_blind_query q, uint64_t n, uint64_t window,
                                      const abl_delta *last, mpz_t out, const abl_analysis_config *c, int heads,
                                      int head)
{
    mpz_set_ui(out, 0);
    /* Rows before the last one have a smaller S, so a delta no smaller than the last row's: rows
     * r < delta_last cannot be blind, and nothing is when the last row has nothing blind. */
    uint64_t r = delta_key(last, n);
    abl_delta d, probe;
    abl_delta_init(&d);
    abl_delta_init(&probe);
    abl_status st = ABL_OK;
    mpz_t dv;
    mpz_init(dv);
    while (r < n && st == ABL_OK) {
        /* Row r attends min(r, W) + 1 keys (keys with d > W are masked). */
        q.weight_keys = attended_keys(r, window);
        if ((st = abl_blindness(s, &q, &d)) != ABL_OK)
            break;
        uint64_t key = delta_key(&d, n), lo = r, hi = n - 1;
        if (window > 0 && r >= window)
            lo = hi; /* every later row has the same W + 1 keys, the same S and the same delta */
        while (lo < hi && st == ABL_OK) {
            uint64_t mid = lo + (hi - lo + 1) / 2;
            q.weight_keys = attended_keys(mid, window);
            st = abl_blindness(s, &q, &probe);
            if (st == ABL_OK && delta_key(&probe, n) == key)
                lo = mid;
            else
                hi = mid - 1;
        }
        if (key < n) {
            mpz_import(dv, 1, 1, sizeof key, 0, 0, &key);
            abl_blind_rows_add(out, r, lo, dv, window);
        }
        r = lo + 1;
        /* one head can walk for minutes (log distances): its share of the bar moves with its rows */
        analysis_progress(c, heads, ABL_ANALYSIS_PROGRESS_UNITS * (head + (double)r / (double)n));
    }
    mpz_clear(dv);
    abl_delta_clear(&d);
    abl_delta_clear(&probe);
    return st;
}

abl_status abl_analysis_layer(const abl_format *format, abl_convention convention, int heads,
                              const abl_schedule_spec *slopes,
                              unsigned mitigations, uint64_t context, abl_analysis *a)
{
    abl_analysis_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.format = *format;
    cfg.convention = convention;
    cfg.heads = heads;
    cfg.slopes = slopes;
    cfg.mitigations = mitigations;
    cfg.context = context;
    return abl_analysis_run(&cfg, a);
}

/* Mitigations resolve into plain settings, so the rest sees one configuration; the analysis keeps its
 * own copies of the numbers (config points at them, and stays valid however the caller's numbers live). */
static abl_status resolve_numbers(abl_analysis *a)
{
    abl_analysis_config *c = &a->config;
    if (c->mitigations & ABL_MITIGATE_LOG)
        c->distance = ABL_DISTANCE_LOG;
    if (c->logit != NULL) {
        mpq_set(a->logit, c->logit);
        c->logit = a->logit;
    }
    if ((c->logit_lo == NULL) != (c->logit_hi == NULL))
        return ABL_ERR_INVALID_ARGUMENT;
    if (c->logit_lo != NULL) {
        if (mpq_cmp(c->logit_lo, c->logit_hi) > 0)
            return ABL_ERR_INVALID_ARGUMENT;
        mpq_set(a->logit_lo, c->logit_lo);
        mpq_set(a->logit_hi, c->logit_hi);
        c->logit_lo = a->logit_lo;
        c->logit_hi = a->logit_hi;
    }
    if (c->clamp != NULL || (c->mitigations & ABL_MITIGATE_CLAMP)) {
        if (c->clamp != NULL)
            mpq_set(a->clamp, c->clamp);
        else
            mpq_set_si(a->clamp, ABL_PAPER_CLAMP, 1);
        c->clamp = a->clamp;
    }
    if (c->softcap != NULL || (c->mitigations & ABL_MITIGATE_SOFTCAP)) {
        if (c->softcap != NULL)
            mpq_set(a->softcap, c->softcap);
        else
            mpq_set_si(a->softcap, ABL_PAPER_SOFTCAP, 1);
        if (mpq_sgn(a->softcap) <= 0)
            return ABL_ERR_BAD_NUMBER;
        mpq_neg(a->neg_softcap, a->softcap);
        c->softcap = a->softcap;
    }
    return ABL_OK;
}

/* The analysis owns its copy of the schedule's description (E chooses robust:32 itself), on the heap:
 * config.slopes points at it and stays valid when the result struct is moved or copied. */
static abl_status resolve_schedule(abl_analysis *a)
{
    abl_analysis_config *c = &a->config;
    if ((c->mitigations & ABL_MITIGATE_EXPLICIT) && c->slopes != NULL)
        return ABL_ERR_BAD_SLOPE_SPEC; /* E chooses the slopes itself */
    if ((a->spec = calloc(1, sizeof *a->spec)) == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st;
    if (c->mitigations & ABL_MITIGATE_EXPLICIT)
        st = abl_schedule_spec_robust(c->distance == ABL_DISTANCE_LOG ? ABL_SCHEDULE_ROBUST_LOG : ABL_SCHEDULE_ROBUST,
                                      ABL_PAPER_ROBUST_D1, a->spec);
    else if (c->slopes != NULL)
        st = abl_schedule_spec_copy(c->slopes, a->spec);
    else
        st = abl_schedule_spec_pow2(ABL_SCHEDULE_PRESS, 8, a->spec);
    if (st != ABL_OK)
        return st;
    if ((a->slopes_spec = strdup(a->spec->text)) == NULL)
        return ABL_ERR_NO_MEMORY;
    c->slopes = a->spec;
    return ABL_OK;
}

/* The schedule instantiated for the layer's tau, its slopes sorted steepest first (*sorted: the
 * caller frees it), and one zeroed result per head. */
static abl_status build_heads(abl_analysis *a, abl_slope **sorted)
{
    abl_analysis_config *c = &a->config;
    long k;
    abl_status st = abl_threshold_log2_multiple(&c->format, abl_convention_tau_kind(c->convention), &k);
    if (st != ABL_OK)
        return st;
    if ((st = abl_schedule_build(c->slopes, c->heads, k, &a->schedule)) != ABL_OK)
        return st;
    if ((st = abl_schedule_sorted(&a->schedule, sorted)) != ABL_OK)
        return st;
    a->heads = a->schedule.count;
    if ((a->results = calloc((size_t)a->heads, sizeof *a->results)) == NULL)
        return ABL_ERR_NO_MEMORY;
    for (int i = 0; i < a->heads; i++)
        head_init(&a->results[i]);
    return ABL_OK;
}

/* Every delta one head reports: under the convention and under ieee, at the soft cap's ends -z and +z,
 * at the logit range's ends, and at the weight level the exponent level's for the shift. q is the
 * layer's query (the last row's keys at the weight level). */
static abl_status head_deltas(const abl_analysis *a, const abl_blind_query *q, abl_head_result *h)
{
    const abl_analysis_config *c = &a->config;
    abl_blind_query qi = *q;
    qi.convention = ABL_CONV_IEEE;
    abl_status st = abl_blindness(&h->slope, q, &h->delta);
    if (st == ABL_OK)
        st = abl_blindness(&h->slope, &qi, &h->delta_ieee);
    if (st == ABL_OK && c->softcap != NULL) {
        abl_blind_query qs = *q;
        qs.softcap = NULL; /* the range's ends are the capped logits -z and +z themselves */
        qs.logit = a->neg_softcap;
        st = abl_blindness(&h->slope, &qs, &h->delta_lo);
        qs.logit = c->softcap;
        if (st == ABL_OK)
            st = abl_blindness(&h->slope, &qs, &h->delta_hi);
    }
    if (st == ABL_OK && c->logit_lo != NULL) {
        abl_blind_query qr = *q; /* the soft cap, if any, caps LO and HI like any logit */
        qr.logit = c->logit_lo;
        st = abl_blindness(&h->slope, &qr, &h->delta_range_lo);
        qr.logit = c->logit_hi;
        if (st == ABL_OK)
            st = abl_blindness(&h->slope, &qr, &h->delta_range_hi);
    }
    if (st == ABL_OK && c->level == ABL_LEVEL_WEIGHT) {
        abl_blind_query qe = *q;
        qe.weight_keys = 0;
        st = abl_blindness(&h->slope, &qe, &h->delta_exponent);
    }
    return st;
}

/* Head i (steepest first): its deltas, whether it is blind in the context or masked by the window, and
 * its blind entries of the last row and of the matrix. */
static abl_status analyse_head(abl_analysis *a, const abl_blind_query *q, const abl_slope *slope, int i)
{
    const abl_analysis_config *c = &a->config;
    abl_head_result *h = &a->results[i];
    h->slope = *slope;
    h->rank = i + 1;
    abl_status st = head_deltas(a, q, h);
    if (st != ABL_OK)
        return st;
    h->blind_in_context = abl_delta_lt_u64(&h->delta, c->context);
    /* Keys with d > W are masked: the window hides every blind key when W < delta. */
    h->window_masks = c->window > 0 && !abl_delta_lt_u64(&h->delta, c->window + 1);
    a->blind_heads += h->blind_in_context;
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL) /* two horizons: abl_bidirectional.c */
        return abl_bidir_head_counts(&h->delta, c->context, c->window, h->row_blind, h->mid_blind, h->matrix_blind);
    st = abl_fraction_head_counts(&h->delta, c->context, c->window, h->row_blind, h->matrix_blind);
    /* At weight level each row has its own S, so the matrix count walks the rows' deltas. */
    if (st == ABL_OK && c->level == ABL_LEVEL_WEIGHT)
        st = weight_matrix_blind(&h->slope, *q, c->context, c->window, &h->delta, h->matrix_blind, c, a->heads, i);
    return st;
}

/* Layer fractions: the per-head counts over H times the attended entries of one head (a head blind from
 * distance 0 loses them all). */
static abl_status layer_fractions(abl_analysis *a)
{
    const abl_analysis_config *c = &a->config;
    abl_delta zero;
    abl_delta_init(&zero);
    zero.exact = 1;
    abl_status st = c->attention == ABL_ATTENTION_BIDIRECTIONAL
                        ? abl_bidir_attended(c->context, c->window, a->row_attended, a->mid_attended, a->matrix_attended)
                        : abl_fraction_head_counts(&zero, c->context, c->window, a->row_attended, a->matrix_attended);
    abl_delta_clear(&zero);
    mpz_t row, mat, mid;
    mpz_inits(row, mat, mid, (mpz_ptr)0);
    for (int i = 0; i < a->heads; i++) {
        mpz_add(row, row, a->results[i].row_blind);
        mpz_add(mat, mat, a->results[i].matrix_blind);
        mpz_add(mid, mid, a->results[i].mid_blind);
    }
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL) {
        mpq_set_num(a->mid_fraction, mid);
        mpz_mul_ui(mpq_denref(a->mid_fraction), a->mid_attended, (unsigned long)a->heads);
        mpq_canonicalize(a->mid_fraction);
    }
    mpz_clear(mid);
    mpq_set_num(a->row_fraction, row);
    mpz_mul_ui(mpq_denref(a->row_fraction), a->row_attended, (unsigned long)a->heads);
    mpq_canonicalize(a->row_fraction);
    mpq_set_num(a->matrix_fraction, mat);
    mpz_mul_ui(mpq_denref(a->matrix_fraction), a->matrix_attended, (unsigned long)a->heads);
    mpq_canonicalize(a->matrix_fraction);
    mpz_clears(row, mat, (mpz_ptr)0);
    return st;
}

abl_status abl_analysis_run(const abl_analysis_config *cfg, abl_analysis *a)
{
    if (cfg == NULL || a == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(a, 0, sizeof *a);
    mpz_init(a->row_attended);
    mpz_init(a->matrix_attended);
    mpq_init(a->row_fraction);
    mpq_init(a->matrix_fraction);
    mpz_init(a->mid_attended);
    mpq_init(a->mid_fraction);
    mpq_inits(a->logit, a->clamp, a->softcap, a->neg_softcap, a->logit_lo, a->logit_hi, (mpq_ptr)0);
    a->config = *cfg;
    abl_analysis_config *c = &a->config;
    if (c->context < 1 || c->context > ABL_MAX_CONTEXT)
        return ABL_ERR_CONTEXT_RANGE;
    if ((unsigned)c->convention >= ABL_CONV_COUNT)
        return ABL_ERR_UNKNOWN_CONVENTION;
    /* A bidirectional row's S has two horizons: the weight level's per-row walk is causal only (refused,
     * never approximated: spec §10). */
    if ((unsigned)c->attention >= ABL_ATTENTION_COUNT ||
        (c->attention == ABL_ATTENTION_BIDIRECTIONAL && c->level == ABL_LEVEL_WEIGHT))
        return ABL_ERR_INVALID_ARGUMENT;
    abl_status st = resolve_numbers(a);
    if (st == ABL_OK)
        st = resolve_schedule(a);
    abl_slope *sorted = NULL;
    if (st == ABL_OK)
        st = build_heads(a, &sorted);
    if (st != ABL_OK) {
        free(sorted);
        return st;
    }
    abl_blind_query q = {.format = c->format, .convention = c->convention, .distance = c->distance,
                         .logit = c->logit, .clamp = c->clamp, .softcap = c->softcap};
    if (c->level == ABL_LEVEL_WEIGHT)
        q.weight_keys = attended_keys(c->context - 1, c->window); /* the last row */
    q.format.emin -= c->gradient_log2; /* the gradient's tau - j ln 2 (abl_gradient.c); 0: the weights */
    for (int i = 0; i < a->heads && st == ABL_OK; i++) {
        st = analyse_head(a, &q, &sorted[i], i);
        if (st == ABL_OK)
            analysis_progress(c, a->heads, (double)ABL_ANALYSIS_PROGRESS_UNITS * (i + 1));
    }
    if (st == ABL_OK)
        st = layer_fractions(a);
    free(sorted);
    return st;
}

/* --- attention mass lost ------------------------------------------------------------------- */

typedef struct mass_ctx {
    const abl_analysis *a;
    int head;   /* -1: the layer's mean */
    uint64_t row; /* the query row */
} mass_ctx;

/* Enclose sum_{d=from}^{k-1} e^(b(d)) into [tl, th] (0 when from >= k). */
static void side_sum(const abl_analysis *a, mpfr_t tl, mpfr_t th, const mpfr_t m_lo, const mpfr_t m_hi, uint64_t from,
                     uint64_t k)
{
    const abl_analysis_config *c = &a->config;
    mpfr_set_zero(tl, 1);
    mpfr_set_zero(th, 1);
    if (from < k)
        abl_weight_row_sum(tl, th, m_lo, m_hi, c->clamp != NULL ? (const mpq_t *)&a->clamp : NULL, c->distance, from,
                           k, k);
}

/* The row's two sides as key counts at distances 0..left-1 and 1..right-1 (causal: right = 0). */
static void row_sides(const abl_analysis_config *c, uint64_t row, uint64_t *left, uint64_t *right)
{
    *left = attended_keys(row, c->window);
    *right = c->attention == ABL_ATTENTION_BIDIRECTIONAL ? attended_keys(c->context - 1 - row, c->window) : 0;
}

/* Enclose one head's lost mass in the row, sum over its keys at d >= delta of e^(b(d)) / S, at lo's
 * precision (0 when no key is blind); a bidirectional row sums both horizons (the diagonal once). */
static int head_mass(const abl_analysis *a, const abl_head_result *h, uint64_t row, mpfr_t lo, mpfr_t hi)
{
    uint64_t k, kr;
    row_sides(&a->config, row, &k, &kr);
    mpfr_set_zero(lo, 1);
    mpfr_set_zero(hi, 1);
    int64_t d;
    if (!abl_delta_get_i64(&h->delta, &d) || ((uint64_t)d >= k && (uint64_t)d >= kr))
        return 0;
    mpfr_prec_t prec = mpfr_get_prec(lo) + 32;
    mpfr_t m_lo, m_hi, tl, th, sl, sh, xl, xh;
    mpfr_inits2(prec, m_lo, m_hi, tl, th, sl, sh, xl, xh, (mpfr_ptr)0);
    int bad = abl_slope_mpfr(m_lo, &h->slope, MPFR_RNDD) != ABL_OK || abl_slope_mpfr(m_hi, &h->slope, MPFR_RNDU) != ABL_OK;
    if (!bad) {
        uint64_t d1 = d < 1 ? 1 : (uint64_t)d;
        side_sum(a, tl, th, m_lo, m_hi, (uint64_t)d, k);
        side_sum(a, sl, sh, m_lo, m_hi, 0, k);
        side_sum(a, xl, xh, m_lo, m_hi, d1, kr);
        mpfr_add(tl, tl, xl, MPFR_RNDD);
        mpfr_add(th, th, xh, MPFR_RNDU);
        side_sum(a, xl, xh, m_lo, m_hi, 1, kr);
        mpfr_add(sl, sl, xl, MPFR_RNDD);
        mpfr_add(sh, sh, xh, MPFR_RNDU);
        mpfr_div(lo, tl, sh, MPFR_RNDD);
        mpfr_div(hi, th, sl, MPFR_RNDU);
    }
    mpfr_clears(m_lo, m_hi, tl, th, sl, sh, xl, xh, (mpfr_ptr)0);
    return bad;
}

static int mass_interval(mpfr_t lo, mpfr_t hi, void *vctx)
{
    const mass_ctx *m = vctx;
    if (m->head >= 0)
        return head_mass(m->a, &m->a->results[m->head], m->row, lo, hi);
    mpfr_t l, h;
    mpfr_inits2(mpfr_get_prec(lo), l, h, (mpfr_ptr)0);
    mpfr_set_zero(lo, 1);
    mpfr_set_zero(hi, 1);
    int bad = 0;
    for (int i = 0; i < m->a->heads && !bad; i++) {
        bad = head_mass(m->a, &m->a->results[i], m->row, l, h);
        mpfr_add(lo, lo, l, MPFR_RNDD);
        mpfr_add(hi, hi, h, MPFR_RNDU);
    }
    mpfr_div_ui(lo, lo, (unsigned long)m->a->heads, MPFR_RNDD);
    mpfr_div_ui(hi, hi, (unsigned long)m->a->heads, MPFR_RNDU);
    mpfr_clears(l, h, (mpfr_ptr)0);
    return bad;
}

static int logit_is_zero(const abl_analysis_config *c)
{
    return c->logit == NULL || mpq_sgn(c->logit) == 0;
}

abl_status abl_analysis_mass_lost_text(const abl_analysis *a, int i, int digits, char **out)
{
    if (out != NULL)
        *out = NULL;
    if (a == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    return abl_analysis_mass_lost_row_text(a, i, a->config.context - 1, digits, out);
}

abl_status abl_analysis_mass_lost_row_text(const abl_analysis *a, int i, uint64_t row, int digits, char **out)
{
    if (out != NULL)
        *out = NULL;
    if (a == NULL || out == NULL || i < -1 || i >= a->heads || row >= a->config.context)
        return ABL_ERR_INVALID_ARGUMENT;
    if (!logit_is_zero(&a->config))
        return ABL_ERR_UNSUPPORTED;
    mass_ctx m = {a, i, row};
    abl_mpfr_range saved = abl_mpfr_range_widen();
    /* Log-distance row sums are certified to about 2^-240 only: past that, widening cannot decide a digit
     * and only costs (a head at 131072 bits took seconds; issue 15, item 11), so the loop stops there with
     * the lower bound (wrong by at most one unit in the last digit, and only within 2^-240 of a tie). */
    long cap = a->config.distance == ABL_DISTANCE_LOG ? ABL_ZIV_START_PREC + (long)(digits * 3.33) + ABL_WEIGHT_LOG_MAX_PREC
                                                      : ABL_ZIV_MAX_PREC;
    abl_status st = abl_ziv_general_capped(mass_interval, &m, digits, cap, out);
    abl_mpfr_range_restore(saved);
    return st;
}

/* --- report ------------------------------------------------------------------------------ */

/* A cell from malloc'd text and JSON, which it frees (NULL after an allocation failure: an empty cell, as
 * the report itself then fails on its own allocations). */
static void cell_take(abl_report *r, char *t, char *j)
{
    abl_report_cell(r, t != NULL ? t : "", j != NULL ? j : "null", NULL);
    free(t);
    free(j);
}

/* A number cell (text and JSON the same) from malloc'd text, which it frees. */
static void number_cell(abl_report *r, char *t)
{
    abl_report_cell(r, t != NULL ? t : "", t != NULL ? t : "null", NULL);
    free(t);
}

/* A meta line from malloc'd text and JSON, which it frees. */
static void meta_take(abl_report *r, const char *key, const char *label, char *t, char *j)
{
    abl_report_meta(r, key, label, t != NULL ? t : "", j != NULL ? j : "null");
    free(t);
    free(j);
}

/* mpz as malloc'd decimal text (GMP's own string freed with GMP's allocator). */
static char *mpz_text(const mpz_t z)
{
    char *g = mpz_get_str(NULL, 10, z);
    char *s = abl_strf("%s", g);
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(g, strlen(g) + 1);
    return s;
}

/* A delta cell: text, and for JSON abl_delta_json (null, an integer up to 2^53, else an exact decimal string). */
static void delta_cell(abl_report *r, const abl_delta *d)
{
    cell_take(r, abl_delta_text(d, 12), abl_delta_json(d));
}

/* An exact number as a JSON number with 17 significant digits, malloc'd (NULL: out of memory). */
static char *json_decimal(mpq_srcptr value)
{
    mpq_t q;
    mpq_init(q);
    mpq_abs(q, value);
    char *d = abl_fraction_decimal_text(q, 17);
    mpq_clear(q);
    if (d == NULL || mpq_sgn(value) >= 0)
        return d;
    char *neg = abl_strf("-%s", d);
    free(d);
    return neg;
}

/* A configured number in a meta line: its exact decimal text (the whole of it). */
static abl_status meta_number(abl_report *r, const char *key, const char *label, mpq_srcptr value,
                              const char *suffix)
{
    char *text = abl_decimal_string(value);
    char *line = text != NULL ? abl_strf("%s%s", text, suffix) : NULL;
    char *j = json_decimal(value);
    abl_status st = line != NULL && j != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        abl_report_meta(r, key, label, line, j);
    free(line);
    free(text);
    free(j);
    return st;
}

/* num/den (0 when den is 0) as a percent cell: 2 decimals, and 17 digits for JSON. */
static void percent_cell(abl_report *r, const mpz_t num, const mpz_t den)
{
    mpq_t q;
    mpq_init(q);
    if (mpz_sgn(den) > 0) {
        mpq_set_num(q, num);
        mpq_set_den(q, den);
        mpq_canonicalize(q);
    }
    cell_take(r, abl_fraction_percent_text(q, 2), abl_fraction_decimal_text(q, 17));
    mpq_clear(q);
}

/* Head i's mass lost (i = -1: the mean over heads) to 3 digits, and to 17 for JSON: a cell, or the
 * summary line. An unsupported case (nonzero logit) keeps the empty texts it always had. */
static void mass_cell(abl_report *r, const abl_analysis *a, int i, int summary)
{
    char *t = NULL, *j = NULL;
    abl_analysis_mass_lost_text(a, i, 3, &t);
    abl_analysis_mass_lost_text(a, i, 17, &j);
    if (summary)
        abl_report_summary(r, "mass_lost", "attention mass lost (last row, mean over heads)", t ? t : "", j ? j : "");
    else
        abl_report_cell(r, t ? t : "", j ? j : "", NULL);
    free(t);
    free(j);
}

/* dtype, convention, tau, context, window. */
static void report_meta_format(const abl_analysis *a, abl_report *r)
{
    const abl_analysis_config *c = &a->config;
    abl_tau_kind kind = abl_convention_tau_kind(c->convention);
    meta_take(r, "dtype", "dtype",
              abl_strf("%s (p = %d, emin = %s%ld, emax = %ld)", c->format.name, c->format.precision,
                       c->format.emin < 0 ? "-" : "", c->format.emin < 0 ? -c->format.emin : c->format.emin,
                       c->format.emax),
              abl_strf("\"%s\"", c->format.name));
    meta_take(r, "convention", "convention",
              abl_strf("%s (τ = %s kind; blind when the exponent is %s τ; δ %s)", abl_convention_name(c->convention),
                       abl_tau_kind_name(kind), abl_convention_strict(c->convention) ? "<" : "≤",
                       abl_convention_nearest(c->convention) ? "rounded to the nearest integer, as in the paper"
                                                              : "exact (the first blind distance)"),
              abl_strf("\"%s\"", abl_convention_name(c->convention)));
    char *t = NULL, *j = NULL;
    abl_threshold_string(&c->format, kind, 10, &t);
    abl_threshold_string(&c->format, kind, 17, &j);
    meta_take(r, "tau", "τ", t, j);
    meta_take(r, "context", "context", abl_strf("%llu", (unsigned long long)c->context),
              abl_strf("%llu", (unsigned long long)c->context));
    if (c->window > 0)
        meta_take(r, "window", "window", abl_strf("%llu", (unsigned long long)c->window),
                  abl_strf("%llu", (unsigned long long)c->window));
}

/* The schedule as given, whole (a long list stays long). */
static abl_status report_meta_slopes(const abl_analysis *a, abl_report *r)
{
    size_t sl = strlen(a->schedule.spec);
    char *st_ = malloc(sl + 32), *sj = malloc(2 * sl + 3);
    if (st_ == NULL || sj == NULL) {
        free(st_);
        free(sj);
        return ABL_ERR_NO_MEMORY;
    }
    sprintf(st_, "%s (%d heads)", a->schedule.spec, a->heads);
    char *w = sj;
    *w++ = '"';
    for (const char *p = a->schedule.spec; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            *w++ = '\\';
        *w++ = *p;
    }
    *w++ = '"';
    *w = '\0';
    abl_report_meta(r, "slopes", "slopes", st_, sj);
    free(st_);
    free(sj);
    return ABL_OK;
}

/* The clamp with its exponent-level margin c - tau. */
static abl_status report_meta_clamp(const abl_analysis *a, abl_report *r)
{
    const abl_analysis_config *c = &a->config;
    abl_blind_query q = {.format = c->format, .convention = c->convention, .distance = c->distance,
                         .logit = c->logit, .clamp = c->clamp};
    char *margin = NULL, *suffix = NULL;
    abl_status ms = abl_clamp_margin_string(&q, 4, &margin);
    if (ms == ABL_OK && (suffix = malloc(strlen(margin) + 40)) == NULL)
        ms = ABL_ERR_NO_MEMORY;
    if (ms == ABL_OK) {
        sprintf(suffix, " (margin c − τ = %s nats)", margin);
        ms = meta_number(r, "clamp", "clamp c", c->clamp, suffix);
    }
    free(margin);
    free(suffix);
    return ms;
}

/* slopes, distance, logits, mitigations, level, clamp, soft cap. */
static abl_status report_meta_model(const abl_analysis *a, abl_report *r)
{
    const abl_analysis_config *c = &a->config;
    abl_status st = report_meta_slopes(a, r);
    if (st != ABL_OK)
        return st;
    abl_report_meta(r, "distance", "distance", c->distance == ABL_DISTANCE_LOG ? "log: g(d) = ln(d + 1)" : "linear: g(d) = d",
                    c->distance == ABL_DISTANCE_LOG ? "\"log\"" : "\"linear\"");
    mpq_t zero;
    mpq_init(zero);
    st = meta_number(r, "logit", "logit ε", c->logit ? c->logit : zero, "");
    mpq_clear(zero);
    if (st == ABL_OK && c->logit_lo != NULL) {
        char *lo = abl_decimal_string(c->logit_lo), *hi = abl_decimal_string(c->logit_hi);
        char *line = lo && hi ? abl_strf("%s to %s", lo, hi) : NULL;
        char *jl = json_decimal(c->logit_lo), *jh = json_decimal(c->logit_hi);
        /* Two reals: `-10.0`, not `-10` (abl_json_real_suffix), as the report writes its real keys. */
        char *json = jl && jh ? abl_strf("[%s%s, %s%s]", jl, abl_json_real_suffix(jl), jh, abl_json_real_suffix(jh))
                              : NULL;
        if (line != NULL && json != NULL)
            abl_report_meta(r, "logit_range", "logit range", line, json);
        else
            st = ABL_ERR_NO_MEMORY;
        free(lo);
        free(hi);
        free(jl);
        free(jh);
        free(line);
        free(json);
    }
    if (st != ABL_OK)
        return st;
    char *mit = abl_mitigations_name(c->mitigations);
    if (mit == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_report_meta(r, "mitigations", "mitigations", mit, NULL);
    free(mit);
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL)
        abl_report_meta(r, "attention", "attention", "bidirectional: d = |i − j|, every key of every row (encoder)",
                        "\"bidirectional\"");
    abl_report_meta(r, "level", "level",
                    c->level == ABL_LEVEL_WEIGHT ? "weight: exp(x)/S underflows, threshold τ + ln S (spec §4)"
                                                 : "exponent: exp(x) underflows, threshold τ (the paper)",
                    c->level == ABL_LEVEL_WEIGHT ? "\"weight\"" : "\"exponent\"");
    if (c->clamp != NULL && (st = report_meta_clamp(a, r)) != ABL_OK)
        return st;
    if (c->softcap != NULL)
        st = meta_number(r, "softcap", "soft cap z", c->softcap, "");
    return st;
}

static void report_columns(const abl_analysis *a, abl_report *r, int mass)
{
    const abl_analysis_config *c = &a->config;
    abl_report_column(r, "rank", "rank", ABL_ALIGN_RIGHT);
    abl_report_column(r, "head", "head", ABL_ALIGN_RIGHT);
    abl_report_column(r, "slope_exact", "slope", ABL_ALIGN_LEFT);
    abl_report_column(r, "slope", "m", ABL_ALIGN_RIGHT);
    abl_report_column(r, "delta", "δ", ABL_ALIGN_RIGHT);
    abl_report_column(r, "delta_ieee", "δ ieee", ABL_ALIGN_RIGHT);
    if (c->level == ABL_LEVEL_WEIGHT) {
        abl_report_column(r, "delta_exponent", "δ exponent", ABL_ALIGN_RIGHT);
        abl_report_column(r, "shift", "shift", ABL_ALIGN_RIGHT);
    }
    if (c->softcap != NULL) {
        abl_report_column(r, "delta_softcap_min", "δ(−z)", ABL_ALIGN_RIGHT);
        abl_report_column(r, "delta_softcap_max", "δ(+z)", ABL_ALIGN_RIGHT);
    }
    if (c->logit_lo != NULL) {
        abl_report_column(r, "delta_logit_lo", "δ(LO)", ABL_ALIGN_RIGHT);
        abl_report_column(r, "delta_logit_hi", "δ(HI)", ABL_ALIGN_RIGHT);
    }
    abl_report_column(r, "blind_in_context", "blind", ABL_ALIGN_LEFT);
    if (c->window > 0)
        abl_report_column(r, "window_masks", "W < δ", ABL_ALIGN_LEFT);
    abl_report_column(r, "row_zeros", "row zeros", ABL_ALIGN_RIGHT);
    abl_report_column(r, "row_fraction", "row %", ABL_ALIGN_RIGHT);
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL) {
        abl_report_column(r, "middle_row_zeros", "mid zeros", ABL_ALIGN_RIGHT);
        abl_report_column(r, "middle_row_fraction", "mid %", ABL_ALIGN_RIGHT);
    }
    abl_report_column(r, "matrix_fraction", "matrix %", ABL_ALIGN_RIGHT);
    if (mass)
        abl_report_column(r, "mass_lost", "mass lost", ABL_ALIGN_RIGHT);
}

static abl_status report_slope_cells(abl_report *r, const abl_slope *s)
{
    char *exact = abl_slope_exact_text(s);
    char *tex = exact != NULL ? malloc(strlen(exact) + 8) : NULL;
    if (tex == NULL) {
        free(exact);
        return ABL_ERR_NO_MEMORY;
    }
    if (strncmp(exact, "2^", 2) == 0) {
        sprintf(tex, "$2^{%s}$", exact + 2); /* 2^-0.5 would typeset as 2 with a caret */
        abl_report_cell(r, exact, NULL, tex);
    } else {
        abl_report_cell(r, exact, NULL, NULL);
    }
    free(tex);
    free(exact);
    char *t = abl_slope_decimal_text(s, 5), *j = abl_slope_decimal_text(s, 17);
    abl_status st = t != NULL && j != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        abl_report_cell(r, t, j, NULL);
    free(t);
    free(j);
    return st;
}

/* delta(exponent) - delta(weight): how many tokens earlier the weight goes blind. */
static void report_shift_cell(abl_report *r, const abl_head_result *h)
{
    if (!h->delta.exact || !h->delta_exponent.exact || h->delta.never || h->delta_exponent.never) {
        abl_report_cell(r, "—", "null", NULL);
        return;
    }
    mpz_t sh;
    mpz_init(sh);
    mpz_sub(sh, h->delta_exponent.value, h->delta.value);
    char *txt = mpz_get_str(NULL, 10, sh);
    abl_report_cell(r, txt, txt, NULL);
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(txt, strlen(txt) + 1);
    mpz_clear(sh);
}

static abl_status report_head_row(const abl_analysis *a, abl_report *r, int i, int mass)
{
    const abl_analysis_config *c = &a->config;
    const abl_head_result *h = &a->results[i];
    abl_report_row(r);
    number_cell(r, abl_strf("%d", h->rank));
    number_cell(r, abl_strf("%d", h->slope.index));
    abl_status st = report_slope_cells(r, &h->slope);
    if (st != ABL_OK)
        return st;
    delta_cell(r, &h->delta);
    delta_cell(r, &h->delta_ieee);
    if (c->level == ABL_LEVEL_WEIGHT) {
        delta_cell(r, &h->delta_exponent);
        report_shift_cell(r, h);
    }
    if (c->softcap != NULL) {
        delta_cell(r, &h->delta_lo);
        delta_cell(r, &h->delta_hi);
    }
    if (c->logit_lo != NULL) {
        delta_cell(r, &h->delta_range_lo);
        delta_cell(r, &h->delta_range_hi);
    }
    abl_report_cell(r, h->blind_in_context ? "yes" : "no", h->blind_in_context ? "true" : "false", NULL);
    if (c->window > 0)
        abl_report_cell(r, h->window_masks ? "yes" : "no", h->window_masks ? "true" : "false", NULL);
    number_cell(r, mpz_text(h->row_blind));
    percent_cell(r, h->row_blind, a->row_attended);
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL) {
        number_cell(r, mpz_text(h->mid_blind));
        percent_cell(r, h->mid_blind, a->mid_attended);
    }
    percent_cell(r, h->matrix_blind, a->matrix_attended);
    if (mass) {
        mass_cell(r, a, i, 0);
    }
    return ABL_OK;
}

/* A summary line from malloc'd text and JSON, which it frees. */
static void summary_take(abl_report *r, const char *key, const char *label, char *t, char *j)
{
    abl_report_summary(r, key, label, t != NULL ? t : "", j != NULL ? j : "null");
    free(t);
    free(j);
}

/* A fraction's summary line: "36.57 %", and 17 digits for JSON. */
static void summary_fraction(abl_report *r, const char *key, const char *label, mpq_srcptr q)
{
    char *p = abl_fraction_percent_text(q, 2);
    summary_take(r, key, label, p != NULL ? abl_strf("%s %%", p) : NULL, abl_fraction_decimal_text(q, 17));
    free(p);
}

/* A bidirectional layer's summary: the end row, the middle row, the N x N matrix, and the mass lost in
 * both rows. */
static void report_summary_bidir(const abl_analysis *a, abl_report *r, int mass)
{
    uint64_t mid = abl_bidir_middle_row(a->config.context);
    summary_fraction(r, "row_fraction", "row fraction (end row, i = N − 1)", a->row_fraction);
    char *label = abl_strf("row fraction (middle row, i = %llu)", (unsigned long long)mid);
    summary_fraction(r, "middle_row_fraction", label != NULL ? label : "row fraction (middle row)", a->mid_fraction);
    free(label);
    summary_fraction(r, "matrix_fraction", "matrix fraction (all N × N entries)", a->matrix_fraction);
    if (!mass)
        return;
    static const char *const keys[2] = {"mass_lost", "middle_mass_lost"};
    static const char *const labels[2] = {"attention mass lost (end row, mean over heads)",
                                          "attention mass lost (middle row, mean over heads)"};
    const uint64_t rows[2] = {a->config.context - 1, mid};
    for (int k = 0; k < 2; k++) {
        char *t = NULL, *j = NULL;
        abl_analysis_mass_lost_row_text(a, -1, rows[k], 3, &t);
        abl_analysis_mass_lost_row_text(a, -1, rows[k], 17, &j);
        abl_report_summary(r, keys[k], labels[k], t ? t : "", j ? j : "");
        free(t);
        free(j);
    }
}

static void report_summary(const abl_analysis *a, abl_report *r, int mass)
{
    summary_take(r, "blind_heads", "heads blind inside the context", abl_strf("%d of %d", a->blind_heads, a->heads),
                 abl_strf("%d", a->blind_heads));
    if (a->config.attention == ABL_ATTENTION_BIDIRECTIONAL) {
        report_summary_bidir(a, r, mass);
        return;
    }
    summary_fraction(r, "row_fraction", "row fraction (last query row)", a->row_fraction);
    summary_fraction(r, "matrix_fraction", "matrix fraction (causal entries)", a->matrix_fraction);
    if (mass) {
        mass_cell(r, a, -1, 1);
    }
}

static void report_notes(const abl_analysis *a, abl_report *r, int mass)
{
    const abl_analysis_config *c = &a->config;
    abl_report_note(r, "δ: smallest distance d at which exp(ε − m·g(d)) underflows (ε = logit); heads sorted "
                       "steepest first, 'head' is the model's own index.");
    abl_report_note(r, "δ ieee: the exact δ under round-to-nearest with gradual underflow (τ = ln of half "
                       "the smallest subnormal).");
    if (c->clamp != NULL)
        abl_report_note(r, c->level == ABL_LEVEL_WEIGHT
                               ? "clamp: 'never' when the clamped weight e^(ε+c)/S stays above e^τ; otherwise the "
                                 "head goes blind at the unclamped δ, before the clamp engages."
                               : "clamp: 'never' when ε + c stays above τ; otherwise the head goes blind at the "
                                 "unclamped δ, before the clamp engages.");
    if (c->softcap != NULL)
        abl_report_note(r, "soft cap: logits lie in (−z, z), so the real δ lies between δ(−z) and δ(+z); δ uses "
                           "the capped logit z·tanh(ε/z).");
    if (c->logit_lo != NULL)
        abl_report_note(r, "logit range: a key whose logit lies in [LO, HI] (relative to zero-logit keys) goes "
                           "blind between δ(LO) and δ(HI) (soft-capped like any logit).");
    if (c->level == ABL_LEVEL_WEIGHT)
        abl_report_note(r, "weight level: the last row's S over its attended keys (all n, or W + 1 with a window) "
                           "gives δ; every row uses its own S for the matrix fraction; shift = δ exponent − δ.");
    int capped = 0;
    for (int i = 0; i < a->heads; i++) {
        const abl_head_result *h = &a->results[i];
        capped += h->delta.capped || h->delta_ieee.capped || h->delta_lo.capped || h->delta_hi.capped ||
                  h->delta_exponent.capped;
    }
    if (capped > 0) {
        char *t = abl_strf("precision: for %d head(s) the certified interval still straddled a rounding boundary "
                           "at the precision cap (%ld bits); δ there takes Q to sit exactly on the boundary.",
                           capped, (long)ABL_ZIV_MAX_PREC);
        if (t != NULL)
            abl_report_note(r, t);
        free(t);
    }
    if (c->window > 0)
        abl_report_note(r, "window: keys at distance d > W are masked (d ≤ W attended), so W < δ hides every blind "
                           "key; fractions count blind keys among the attended ones.");
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL)
        abl_report_note(r, "bidirectional: every query row attends all N keys at d = |i − j|, two horizons; 'row' is "
                           "the end row i = N − 1 (one horizon of N − 1 keys), 'mid' the middle row "
                           "i = ⌊(N − 1)/2⌋ (horizons ⌊(N − 1)/2⌋ and ⌈(N − 1)/2⌉); the matrix has N² entries.");
    if (mass)
        abl_report_note(r, c->attention == ABL_ATTENTION_BIDIRECTIONAL
                               ? "mass lost: the share of an exact softmax of the row (zero logits, both horizons) "
                                 "that sits on its blind keys; per head, the end row."
                               : "mass lost: the share of an exact softmax of the last row (zero logits) that sits on "
                                 "its blind keys.");
}

abl_status abl_analysis_report(const abl_analysis *a, abl_report **out)
{
    if (a == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("ALiBi blindness analysis", "heads");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    int mass = logit_is_zero(&a->config);
    report_meta_format(a, r);
    abl_status st = report_meta_model(a, r);
    if (st == ABL_OK) {
        report_columns(a, r, mass);
        /* The rows take the third quarter of the bar, the layer's mass lost (every head again) the last. */
        for (int i = 0; i < a->heads && st == ABL_OK; i++) {
            st = report_head_row(a, r, i, mass);
            analysis_progress(&a->config, a->heads, ABL_ANALYSIS_PROGRESS_UNITS * (a->heads + (i + 1) / 2.0));
        }
    }
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    report_summary(a, r, mass);
    report_notes(a, r, mass);
    analysis_progress(&a->config, a->heads, 2.0 * ABL_ANALYSIS_PROGRESS_UNITS * a->heads);
    *out = r;
    return ABL_OK;
}

/*
 * The estimate's model (calibrated on tests/cost_bound.py's grid; bench/README.md has the ratios). What a
 * head costs grows with how many exact decisions it needs and with what each one sums:
 *   - every head: its deltas (2, +2 for a soft cap, +2 for a logit range, +1 at the weight level), each a
 *     Ziv loop: EST_CALL seconds at the exponent level; at the weight level each also encloses S_k, closed
 *     form for linear distances (EST_CALL_WEIGHT) and for log distances a harmonic sum of up to 512 direct
 *     terms at the first precision (EST_TERM seconds each) and up to 4096 when the loop widens;
 *   - a head blind inside the row with a zero logit: its mass lost, enclosed four times (two digit counts,
 *     the head and the layer) by row sums, EST_MASS_TERM seconds per direct term for log distances, and
 *     EST_MASS_TIE_TERM when the head may be blind from d <= 1 (a mass next to 1 widens to the cap);
 *   - the weight level: the walk over the rows' deltas (weight_matrix_blind), one decision per run of equal
 *     delta and a binary search of at most log2(N) + 2 more; the runs are at most the rows from the
 *     smallest possible delta d_lo to N and at most the distances between d_lo and the exponent-level
 *     delta d_hi (delta_r lies between them: 1 <= S_r <= r + 1), both from closed forms in binary64
 *     (walk_bounds), and for linear distances at most the values that ln S_r still takes past d_lo (S
 *     saturates); a walk decision on a log row costs what a head's does (near ties widen the precision).
 */
#define EST_HEAD 1.5e-4
#define EST_CALL 1.5e-4
#define EST_CALL_WEIGHT 1e-4
#define EST_TERM 2.5e-5
#define EST_MASS_LINEAR 3e-4
#define EST_MASS_TERM 6e-5
#define EST_MASS_TIE_TERM 2.5e-4
#define EST_LN2 0.6931471805599453

/* g^-1(x) for x >= 0 in binary64: the smallest real distance with g(d) >= x (inf past the range). */
static double distance_at(abl_distance dist, double x)
{
    if (x <= 0)
        return 0;
    return dist == ABL_DISTANCE_LOG ? expm1(x) : x;
}

/* Bounds of one head's deltas from closed forms: *lo no more than any row's weight-level delta (or the
 * exponent-level delta when weight is 0), *hi no less than the exponent-level delta. m: the slope
 * rounded up; tau < 0 the threshold; eps the logit (0 when none); k the keys of the last row. */
static void walk_bounds(double m, double tau, double eps, double k, abl_distance dist, int weight, double *lo,
                        double *hi)
{
    /* weight level: eps + b(d) <= tau + L with L <= ln S_k + max(eps, 0) and S_k <= k (every term <= 1) */
    double thr_lo = tau - eps + (weight ? log(k) + (eps > 0 ? eps : 0) : 0) + 1e-9 * fabs(tau);
    double thr_hi = tau - eps - 1e-9 * fabs(tau);
    *lo = m > 0 && thr_lo < 0 ? floor(distance_at(dist, -thr_lo / m)) - 1 : 0;
    *hi = m > 0 && thr_hi < 0 ? ceil(distance_at(dist, -thr_hi / m)) + 1 : 0;
    if (!(*lo >= 0))
        *lo = 0;
    if (!(*hi >= 0) || !isfinite(*hi))
        *hi = INFINITY;
}

/* The heads' slopes, rounded up to binary64 (NULL when the schedule cannot be built: its run fails). */
static double *estimate_slopes(const abl_analysis_config *cfg, long k, int *heads)
{
    abl_schedule_spec robust;
    memset(&robust, 0, sizeof robust);
    const abl_schedule_spec *spec = cfg->slopes;
    if (cfg->mitigations & ABL_MITIGATE_EXPLICIT) {
        int log = cfg->distance == ABL_DISTANCE_LOG || (cfg->mitigations & ABL_MITIGATE_LOG);
        if (abl_schedule_spec_robust(log ? ABL_SCHEDULE_ROBUST_LOG : ABL_SCHEDULE_ROBUST, ABL_PAPER_ROBUST_D1,
                                     &robust) != ABL_OK)
            return NULL;
        spec = &robust;
    }
    abl_schedule s;
    abl_status st = abl_schedule_build(spec, cfg->heads, k, &s);
    abl_schedule_spec_free(&robust);
    if (st != ABL_OK)
        return NULL;
    double *m = malloc((size_t)(s.count > 0 ? s.count : 1) * sizeof *m);
    if (m != NULL) {
        mpfr_t x;
        mpfr_init2(x, 53);
        for (int h = 0; h < s.count; h++)
            m[h] = abl_slope_mpfr(x, &s.slopes[h], MPFR_RNDU) == ABL_OK ? mpfr_get_d(x, MPFR_RNDU) : INFINITY;
        mpfr_clear(x);
        *heads = s.count;
    }
    abl_schedule_free(&s);
    return m;
}

abl_status abl_analysis_estimate(const abl_analysis_config *cfg, abl_cost *out)
{
    if (cfg == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    int heads = cfg->heads;
    const abl_schedule_spec *spec = cfg->slopes;
    if (spec != NULL && heads == 0) {
        /* A list gives H (the value counts it); any other kind needs H (its run fails without). */
        if (spec->kind != ABL_SCHEDULE_SLOPES && spec->kind != ABL_SCHEDULE_TARGETS)
            return ABL_ERR_HEADS_RANGE;
        heads = (int)spec->count;
    }
    out->units = (double)heads;
    out->threads = 1;
    out->unit_name = "heads";
    abl_distance dist = (cfg->mitigations & ABL_MITIGATE_LOG) ? ABL_DISTANCE_LOG : cfg->distance;
    int weight = cfg->level == ABL_LEVEL_WEIGHT;
    double n = (double)cfg->context;
    double k = cfg->window > 0 && cfg->window + 1 < cfg->context ? (double)cfg->window + 1 : n;
    double calls = 2 + (cfg->softcap || (cfg->mitigations & ABL_MITIGATE_SOFTCAP) ? 2 : 0) +
                   (cfg->logit_lo != NULL ? 2 : 0) + weight;
    double call = EST_CALL;
    if (weight)
        call = dist == ABL_DISTANCE_LOG ? EST_CALL + EST_TERM * fmin(k, 512) + EST_TERM / 8 * fmin(k, 4096)
                                        : EST_CALL_WEIGHT;
    out->seconds = heads * (EST_HEAD + calls * call);
    /* The blind heads' mass and the weight level's walk: per head, from its slope. */
    long kl;
    int parsed = 0;
    double *m = NULL;
    if (abl_threshold_log2_multiple(&cfg->format, abl_convention_tau_kind(cfg->convention), &kl) == ABL_OK)
        m = estimate_slopes(cfg, kl, &parsed);
    double tau = (double)kl * EST_LN2;
    double eps = cfg->logit != NULL ? mpq_get_d(cfg->logit) : 0;
    int mass = cfg->logit == NULL || mpq_sgn(cfg->logit) == 0;
    double probes = ceil(log2(n + 1)) + 2;
    double walk_call = dist == ABL_DISTANCE_LOG ? EST_CALL + EST_TERM * fmin(n, 512) + EST_TERM / 8 * fmin(n, 4096)
                                                : EST_CALL_WEIGHT;
    double mass_cost = dist == ABL_DISTANCE_LOG ? EST_MASS_LINEAR + EST_MASS_TERM * fmin(k, 4096) : EST_MASS_LINEAR;
    for (int h = 0; h < heads; h++) {
        double lo = 0, hi = INFINITY;
        /* unknown slopes (an unparsable schedule, an unknown tau): the worst case, every head blind */
        if (m != NULL && h < parsed)
            walk_bounds(m[h], tau, eps, k, dist, weight, &lo, &hi);
        /* A head blind from distance 0 or 1 can lose a mass within a hair of 1 (exactly 1 at delta = 0),
         * where no precision decides the digits: its loop widens to the cap (log distances: ~700 bits). */
        if (mass && lo < k)
            out->seconds += hi <= 1 && dist == ABL_DISTANCE_LOG ? EST_MASS_LINEAR + EST_MASS_TIE_TERM * fmin(k, 4096)
                                                                : mass_cost;
        if (weight && lo < n) {
            double runs = fmin(n - lo, hi - lo + 1);
            /* Linear distances without a clamp: S_r is within a factor 1 - e^(-m (r + 1)) of its limit, so
             * over the rows r >= lo the deltas (A + ln S_r) / m take at most -log1p(-e^(-m (lo + 1))) / m + 2
             * values. */
            if (dist == ABL_DISTANCE_LINEAR && cfg->clamp == NULL && !(cfg->mitigations & ABL_MITIGATE_CLAMP) &&
                m != NULL && h < parsed && m[h] > 0)
                runs = fmin(runs, -log1p(-exp(-m[h] * (lo + 1))) / m[h] + 2);
            /* Linear distances, zero logits, no clamp: a run with 1 < delta_r < n needs
             * -tau - m n < ln S_r < -tau, and S_r grows by at least e^(-m (n - 1)) a row, so at most
             * e^(-tau + m (n - 1)) (1 - e^(-m n)) + 1 rows lie there; the runs delta <= 1 and delta >= n add 3.
             * A flat head (m n << 1) has a handful of runs however long the context (issue 15 item 3's
             * m = 1e-20 at N = 40000 was estimated at 72 s for a 0.1 s run). */
            if (dist == ABL_DISTANCE_LINEAR && eps == 0 && cfg->clamp == NULL &&
                !(cfg->mitigations & ABL_MITIGATE_CLAMP) && m != NULL && h < parsed && m[h] > 0)
                runs = fmin(runs, 1.001 * exp(-tau + m[h] * (n - 1)) * -expm1(-m[h] * n) + 5);
            /* Log distances likewise: 1 < delta_r < n needs -tau - m ln n <= ln S_r < -tau - m ln 2, and S_r
             * grows by at least n^-m a row: at most e^-tau ((n/2)^m - 1) + 1 rows (the 16-head fp8
             * layer at N = 171 was estimated at 2.3 min for a 3 s run). */
            if (dist == ABL_DISTANCE_LOG && eps == 0 && cfg->clamp == NULL && !(cfg->mitigations & ABL_MITIGATE_CLAMP) &&
                m != NULL && h < parsed && m[h] > 0)
                runs = fmin(runs, 1.001 * exp(-tau) * fmax(0, expm1(m[h] * log(n / 2))) + 5);
            out->seconds += runs * probes * walk_call;
        }
    }
    free(m);
    return ABL_OK;
}
