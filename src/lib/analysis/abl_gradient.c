/* alibi-blind: gradient blindness in closed form (spec §15, docs/method.md §7).
 *
 * The backward pass of softmax forms dS = P * (dP - D) and rounds it into the training dtype before the
 * dQ/dK products. With |dP - D| times the loss scale equal to 2^j, the exact dS = P * 2^j rounds to 0
 * iff P <= 2^(emin - p - j), half the smallest subnormal shifted by j binades: the weight level of
 * spec §10 for a threshold tau - j ln 2 (the analysis' gradient_log2). 2^j is exact, so the shifted
 * threshold is as exact as tau itself: every decision below is the analysis' own certified one. */
#include <stdlib.h>
#include <string.h>
#include "abl_internal.h"
#include "abl/analysis/gradient.h"
#include "abl/core/decimal.h"

/* "2^K" (K an integer), or an exact decimal that is a power of two. */
abl_status abl_gradient_pow2_parse(const char *text, long *log2)
{
    if (text == NULL || log2 == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (text[0] == '2' && text[1] == '^') {
        char *end = NULL;
        long k = strtol(text + 2, &end, 10);
        if (end == text + 2 || *end != '\0' || k < -ABL_GRADIENT_LOG2_MAX || k > ABL_GRADIENT_LOG2_MAX)
            return ABL_ERR_BAD_NUMBER;
        *log2 = k;
        return ABL_OK;
    }
    mpq_t q;
    mpq_init(q);
    abl_status st = abl_decimal_to_mpq(text, q);
    long k = 0;
    if (st == ABL_OK && mpq_sgn(q) <= 0)
        st = ABL_ERR_BAD_NUMBER;
    /* a power of two: numerator and denominator each a power of two, one of them 1 */
    if (st == ABL_OK) {
        mpz_srcptr n = mpq_numref(q), d = mpq_denref(q);
        size_t bn = mpz_sizeinbase(n, 2) - 1, bd = mpz_sizeinbase(d, 2) - 1;
        if (mpz_scan1(n, 0) != bn || mpz_scan1(d, 0) != bd || (bn > 0 && bd > 0))
            st = ABL_ERR_BAD_NUMBER;
        else if (bn > ABL_GRADIENT_LOG2_MAX || bd > ABL_GRADIENT_LOG2_MAX)
            st = ABL_ERR_BAD_NUMBER;
        else
            k = (long)bn - (long)bd;
    }
    mpq_clear(q);
    if (st == ABL_OK)
        *log2 = k;
    return st == ABL_OK ? ABL_OK : ABL_ERR_BAD_NUMBER;
}

static void only_clear(abl_gradient *g, int heads)
{
    for (int i = 0; i < heads; i++) {
        if (g->only_row != NULL)
            mpz_clear(g->only_row[i]);
        if (g->only_matrix != NULL)
            mpz_clear(g->only_matrix[i]);
    }
    free(g->only_row);
    free(g->only_matrix);
    g->only_row = g->only_matrix = NULL;
}

void abl_gradient_free(abl_gradient *g)
{
    if (g == NULL)
        return;
    only_clear(g, g->grad.heads);
    abl_analysis_free(&g->grad);
    abl_analysis_free(&g->fwd);
    mpz_clear(g->only_row_total);
    mpz_clear(g->only_matrix_total);
    memset(g, 0, sizeof *g);
    mpz_init(g->only_row_total);
    mpz_init(g->only_matrix_total);
}

/* max(0, a - b) added to *out and to total: the keys blind in a but not in b. Blindness is monotone
 * in the threshold (in every row, keys from a distance on), so the difference of counts is the count
 * of the difference. */
static void add_excess(mpz_t out, mpz_t total, mpz_srcptr a, mpz_srcptr b)
{
    mpz_sub(out, a, b);
    if (mpz_sgn(out) < 0)
        mpz_set_ui(out, 0);
    mpz_add(total, total, out);
}

static abl_status gradient_only(abl_gradient *g)
{
    int heads = g->grad.heads;
    if (heads != g->fwd.heads)
        return ABL_ERR_MISMATCH;
    g->only_row = calloc((size_t)heads, sizeof *g->only_row);
    g->only_matrix = calloc((size_t)heads, sizeof *g->only_matrix);
    if (g->only_row == NULL || g->only_matrix == NULL) {
        free(g->only_row);
        free(g->only_matrix);
        g->only_row = g->only_matrix = NULL;
        return ABL_ERR_NO_MEMORY;
    }
    for (int i = 0; i < heads; i++) {
        mpz_init(g->only_row[i]);
        mpz_init(g->only_matrix[i]);
        add_excess(g->only_row[i], g->only_row_total, g->grad.results[i].row_blind, g->fwd.results[i].row_blind);
        add_excess(g->only_matrix[i], g->only_matrix_total, g->grad.results[i].matrix_blind,
                   g->fwd.results[i].matrix_blind);
    }
    return ABL_OK;
}

abl_status abl_gradient_run(const abl_analysis_config *cfg, long log2_upstream, abl_gradient *out)
{
    if (cfg == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    mpz_init(out->only_row_total);
    mpz_init(out->only_matrix_total);
    if (log2_upstream < -ABL_GRADIENT_LOG2_MAX || log2_upstream > ABL_GRADIENT_LOG2_MAX)
        return ABL_ERR_INVALID_ARGUMENT;
    out->log2_upstream = log2_upstream;
    abl_analysis_config c = *cfg;
    c.convention = ABL_CONV_IEEE; /* dS is rounded once, to nearest, with gradual underflow */
    c.gradient_log2 = 0;
    abl_status st = abl_analysis_run(&c, &out->fwd);
    if (st == ABL_OK) {
        c.gradient_log2 = log2_upstream;
        st = abl_analysis_run(&c, &out->grad);
    }
    if (st == ABL_OK)
        st = gradient_only(out);
    return st;
}

static char *mpz_dup_text(mpz_srcptr z)
{
    return mpz_get_str(NULL, 10, z);
}

/* The per-head gradient-only counts as a JSON array. */
static char *only_json(mpz_t *v, int n)
{
    abl_text t;
    memset(&t, 0, sizeof t);
    abl_text_add(&t, "%s", "[");
    for (int i = 0; i < n; i++) {
        char *s = mpz_dup_text(v[i]);
        if (s == NULL) {
            free(t.s);
            return NULL;
        }
        abl_text_add(&t, "%s%s", i ? ", " : "", s);
        free(s);
    }
    abl_text_add(&t, "%s", "]");
    return abl_text_take(&t);
}

static abl_status gradient_lines(const abl_gradient *g, abl_report *r)
{
    char *up = abl_strf("2^%ld", g->log2_upstream), *upj = abl_strf("%ld", g->log2_upstream);
    abl_status st = (up && upj) ? abl_report_meta(r, "gradient_upstream_log2",
                                                  "gradient: |dP - D| x loss scale", up, upj)
                                : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        st = abl_report_meta(r, "quantity", "quantity",
                             "the gradient dS = P (dP - D), rounded once into the dtype (spec §15)",
                             "\"gradient\"");
    char *rt = mpz_dup_text(g->only_row_total), *mt = mpz_dup_text(g->only_matrix_total);
    char *rj = only_json(g->only_row, g->grad.heads), *mj = only_json(g->only_matrix, g->grad.heads);
    if (st == ABL_OK && (rt == NULL || mt == NULL || rj == NULL || mj == NULL))
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        st = abl_report_summary(r, "gradient_only_row", "last-row keys gradient-blind, weight not 0", rt, rt);
    if (st == ABL_OK)
        st = abl_report_summary(r, "gradient_only_matrix", "matrix keys gradient-blind, weight not 0", mt, mt);
    if (st == ABL_OK)
        st = abl_report_summary(r, "gradient_only_row_per_head", "the same per head (steepest first), last row",
                                rj, rj);
    if (st == ABL_OK)
        st = abl_report_summary(r, "gradient_only_matrix_per_head", "the same per head, matrix", mj, mj);
    free(up);
    free(upj);
    free(rt);
    free(mt);
    free(rj);
    free(mj);
    return st;
}

abl_status abl_gradient_report(const abl_gradient *g, abl_report **out)
{
    if (g == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_status st = abl_analysis_report(&g->grad, out);
    if (st == ABL_OK)
        st = gradient_lines(g, *out);
    if (st == ABL_OK)
        st = abl_report_note(*out, "gradient: delta is the first distance whose rounded dS = P (dP - D) is 0 "
                                   "(|dP - D| times the loss scale as above); the forward weight itself "
                                   "vanishes later or at the same key when that factor is below 1");
    if (st != ABL_OK && *out != NULL) {
        abl_report_free(*out);
        *out = NULL;
    }
    return st;
}
