/* alibi-blind: report builders for the threshold listing and the paper's tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include <mpfr.h>
#include "abl/paper/tables.h"
#include "abl_internal.h"

/* Table 4 of the paper (Appendix A), as printed: data to compare against, never output as computed. */
static const struct {
    const char *format;
    abl_tau_kind kind;
    const char *value;
} paper_table4[] = {
    {"bf16", ABL_TAU_SUBNORMAL, "-92.1886"}, {"fp32", ABL_TAU_SUBNORMAL, "-103.2789"},
    {"bf16", ABL_TAU_FTZ, "-87.3365"},       {"fp32", ABL_TAU_FTZ, "-87.3365"},
    {"bf16", ABL_TAU_MAX, "88.7189"},        {"fp32", ABL_TAU_MAX, "88.7228"},
};

const char *abl_paper_table4_value(const abl_format *fmt, abl_tau_kind kind)
{
    if (fmt == NULL || (fmt->flags & ABL_FMT_CUSTOM))
        return NULL;
    for (size_t i = 0; i < sizeof paper_table4 / sizeof paper_table4[0]; i++)
        if (paper_table4[i].kind == kind && strcmp(paper_table4[i].format, fmt->name) == 0)
            return paper_table4[i].value;
    return NULL;
}

/* The meaning column, malloc'd (NULL: out of memory). */
static char *meaning(const abl_format *f, abl_tau_kind kind)
{
    long k = 0;
    abl_threshold_log2_multiple(f, kind, &k);
    /* k <= 0 for every underflow kind; print it with an ASCII minus sign. */
    const char *sign = k < 0 ? "-" : "";
    unsigned long ak = (unsigned long)(k < 0 ? -k : k);
    switch (kind) {
    case ABL_TAU_SUBNORMAL:
        return abl_strf("%s%lu·ln 2 = ln(smallest subnormal)", sign, ak);
    case ABL_TAU_RN_ZERO:
        return abl_strf("%s%lu·ln 2: exp(x) rounds to 0 (RNE) iff x ≤ τ", sign, ak);
    case ABL_TAU_FTZ:
        return abl_strf("%s%lu·ln 2 = ln(smallest normal): with FTZ exp(x) = 0 iff x < τ", sign, ak);
    case ABL_TAU_MAX:
        return abl_strf("ln(largest finite)");
    default:
        /* e4m3fn's max 448 has an even significand, so the tie at 464 rounds back to 448. */
        return abl_strf("ln(max + ulp/2): exp(x) rounds past max (RNE) iff x %s τ",
                 f->max_deficit == 0 ? "≥" : ">");
    }
}

/* mpfr_asprintf with one int and one number, as a malloc'd string (NULL: out of memory). */
static char *mpfr_text(const char *fmt, int digits, mpfr_srcptr x)
{
    char *m = NULL;
    if (mpfr_asprintf(&m, fmt, digits, x) < 0)
        return NULL;
    char *s = abl_strf("%s", m);
    mpfr_free_str(m);
    return s;
}

/* A decimal text as a JSON number a double holds: 17 significant digits (the text itself goes beside it);
 * malloc'd (NULL: out of memory). */
static char *json_number17(const char *decimal)
{
    size_t sig = 0;
    int lead = 1;
    for (const char *c = decimal; *c; c++) {
        if (*c < '0' || *c > '9') continue;
        if (lead && *c == '0') continue;
        lead = 0;
        sig++;
    }
    if (sig <= 17)
        return abl_strf("%s", decimal);
    mpfr_t x;
    mpfr_init2(x, 53);
    mpfr_set_str(x, decimal, 10, MPFR_RNDN);
    char *out = mpfr_text("%.*Rg", 17, x);
    mpfr_clear(x);
    return out;
}

/*
 * The reviewer's columns for a printed value P with k decimals: P - tau to `decimals` decimals, and
 * whether P is tau correctly rounded to k decimals, tau truncated to k decimals, or neither (then it
 * is the value of another quantity: the verdict names the kind of the same format it rounds, if any).
 */
typedef struct {
    char *diff;        /* P - tau, `decimals` decimals (malloc'd) */
    char *verdict;     /* the verdict's text (malloc'd) and JSON token (a static string) */
    const char *vjson;
} paper_cmp;

/* The name of another tau kind of f that rounds to pval at k decimals, or NULL. */
static const char *other_kind(const abl_format *f, abl_tau_kind kind, const char *pval, int k)
{
    const char *other = NULL;
    for (int o = 0; o < ABL_TAU_KIND_COUNT && other == NULL; o++) {
        char *rounded = NULL;
        if (o != (int)kind && abl_threshold_string(f, (abl_tau_kind)o, k, &rounded) == ABL_OK &&
            strcmp(pval, rounded) == 0)
            other = abl_tau_kind_name((abl_tau_kind)o);
        free(rounded);
    }
    return other;
}

static abl_status paper_verdict(const abl_format *f, abl_tau_kind kind, const char *pval, int decimals, paper_cmp *out)
{
    const char *dot = strchr(pval, '.');
    int k = dot != NULL ? (int)strlen(dot + 1) : 0;
    char *rounded = NULL;
    abl_status st = abl_threshold_string(f, kind, k, &rounded);
    if (st != ABL_OK)
        return st;
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_prec_t prec = (mpfr_prec_t)((decimals > k ? decimals : k) * 4 + 256);
    mpfr_t tau, p, d;
    mpfr_inits2(prec, tau, p, d, (mpfr_ptr)0);
    abl_threshold_mpfr(tau, f, kind, MPFR_RNDN);
    mpfr_set_str(p, pval, 10, MPFR_RNDN);
    mpfr_sub(d, p, tau, MPFR_RNDN);
    char *diff = mpfr_text("%.*Rf", decimals, d);
    if (diff != NULL && strncmp(diff, "-0.", 3) == 0 && strspn(diff + 3, "0") == strlen(diff + 3))
        memmove(diff, diff + 1, strlen(diff));
    char *trunc = mpfr_text("%.*RZf", k, tau);
    mpfr_clears(tau, p, d, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    out->diff = diff;
    out->verdict = NULL;
    out->vjson = "\"another_quantity\"";
    if (diff == NULL || trunc == NULL) {
        st = ABL_ERR_NO_MEMORY;
    } else if (strcmp(pval, rounded) == 0) {
        out->verdict = abl_strf("correctly rounded");
        out->vjson = "\"correctly_rounded\"";
    } else if (strcmp(pval, trunc) == 0) {
        out->verdict = abl_strf("truncated");
        out->vjson = "\"truncated\"";
    } else {
        const char *other = other_kind(f, kind, pval, k);
        out->verdict = other != NULL ? abl_strf("another quantity (%s)", other) : abl_strf("another quantity");
    }
    if (st == ABL_OK && out->verdict == NULL)
        st = ABL_ERR_NO_MEMORY;
    free(rounded);
    free(trunc);
    return st;
}

/*
 * exp(tau) as the linear value numpy/torch users know: the smallest subnormal (subnormal), half of it
 * (rn-zero), the smallest normal = torch.finfo.tiny (ftz), the largest finite (max), max + ulp/2
 * (rn-overflow). Exact powers of two and significands, printed with 9 (text) and 17 (JSON) digits.
 */
static void linear_value(const abl_format *f, abl_tau_kind kind, char **text, char **json, const char **finfo)
{
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_t x;
    mpfr_init2(x, f->precision + 8);
    mpz_t m;
    mpz_init(m);
    *finfo = NULL;
    switch (kind) {
    case ABL_TAU_SUBNORMAL:
        mpfr_set_ui_2exp(x, 1, f->emin - f->precision + 1, MPFR_RNDN);
        *finfo = "smallest_subnormal";
        break;
    case ABL_TAU_RN_ZERO:
        mpfr_set_ui_2exp(x, 1, f->emin - f->precision, MPFR_RNDN);
        break;
    case ABL_TAU_FTZ:
        mpfr_set_ui_2exp(x, 1, f->emin, MPFR_RNDN);
        *finfo = "tiny";
        break;
    case ABL_TAU_MAX:
        /* (2^p - 1 - deficit) * 2^(emax - p + 1) */
        mpz_ui_pow_ui(m, 2, (unsigned long)f->precision);
        mpz_sub_ui(m, m, 1 + f->max_deficit);
        mpfr_set_z_2exp(x, m, f->emax - f->precision + 1, MPFR_RNDN);
        *finfo = "max";
        break;
    default:
        /* max + ulp/2 = (2^(p+1) - 1 - 2 deficit) * 2^(emax - p) */
        mpz_ui_pow_ui(m, 2, (unsigned long)f->precision + 1);
        mpz_sub_ui(m, m, 1 + 2 * (unsigned long)f->max_deficit);
        mpfr_set_z_2exp(x, m, f->emax - f->precision, MPFR_RNDN);
        break;
    }
    *text = mpfr_text("%.*Rg", 9, x);
    *json = mpfr_text("%.*Rg", 17, x);
    mpz_clear(m);
    mpfr_clear(x);
    abl_mpfr_range_restore(saved);
}

/* The paper's columns of one row: its name for tau, its printed value, P - tau and the verdict. */
static abl_status paper_cells(abl_report *r, const abl_format *f, abl_tau_kind kind, int decimals)
{
    const char *pname = abl_tau_kind_paper_name(kind), *pval = abl_paper_table4_value(f, kind);
    abl_status st = ABL_OK;
    if (pname != NULL) {
        char *p = abl_strf("%s %s", pname, abl_tau_kind_paper_symbol(kind));
        st = p != NULL ? abl_report_cell(r, p, NULL, NULL) : ABL_ERR_NO_MEMORY;
        free(p);
    } else {
        abl_report_cell(r, "—", "null", NULL);
    }
    if (st != ABL_OK)
        return st;
    if (pval == NULL) {
        abl_report_cell(r, "—", "null", NULL);
        abl_report_cell(r, "—", "null", NULL);
        abl_report_cell(r, "—", "null", NULL);
        return ABL_OK;
    }
    abl_report_cell(r, pval, pval, NULL);
    paper_cmp c = {NULL, NULL, NULL};
    if ((st = paper_verdict(f, kind, pval, decimals, &c)) == ABL_OK) {
        char *j = json_number17(c.diff);
        st = j != NULL ? abl_report_cell(r, c.diff, j, NULL) : ABL_ERR_NO_MEMORY;
        if (st == ABL_OK)
            abl_report_cell(r, c.verdict, c.vjson, NULL);
        free(j);
    }
    free(c.diff);
    free(c.verdict);
    return st;
}

/* One row of the threshold listing: format, kind, tau (text and JSON), the paper's columns, exp(tau). */
static abl_status thresholds_row(abl_report *r, const abl_format *f, abl_tau_kind kind, int decimals)
{
    abl_report_row(r);
    abl_report_cell(r, f->name, NULL, NULL);
    abl_report_cell(r, abl_tau_kind_name(kind), NULL, NULL);
    char *t = NULL;
    abl_status st = abl_threshold_string(f, kind, decimals, &t);
    if (st != ABL_OK)
        return st;
    char *j = json_number17(t), *q = abl_strf("\"%s\"", t);
    if (j == NULL || q == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK) {
        abl_report_cell(r, t, j, NULL);
        abl_report_cell(r, t, q, NULL);
        st = paper_cells(r, f, kind, decimals);
    }
    free(t);
    free(j);
    free(q);
    if (st != ABL_OK)
        return st;
    const char *finfo;
    char *lt = NULL, *lj = NULL, *mean = meaning(f, kind);
    linear_value(f, kind, &lt, &lj, &finfo);
    if (lt == NULL || lj == NULL || mean == NULL) {
        st = ABL_ERR_NO_MEMORY;
    } else {
        abl_report_cell(r, lt, lj, NULL);
        abl_report_cell(r, finfo != NULL ? finfo : "—", finfo != NULL ? NULL : "null", NULL);
        abl_report_cell(r, mean, NULL, NULL);
    }
    free(lt);
    free(lj);
    free(mean);
    return st;
}

abl_status abl_thresholds_report(const abl_format *formats, size_t nformats, int decimals, abl_report **out)
{
    if (formats == NULL || out == NULL || nformats == 0)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("Thresholds of exp in finite precision (natural-log units)", "thresholds");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    char *t = abl_strf("%d decimals, correctly rounded (MPFR)", decimals), *j = abl_strf("%d", decimals);
    abl_status st = t != NULL && j != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        abl_report_meta(r, "decimals", "digits", t, j);
    free(t);
    free(j);
    abl_report_column(r, "dtype", "dtype", ABL_ALIGN_LEFT);
    abl_report_column(r, "kind", "kind", ABL_ALIGN_LEFT);
    abl_report_column(r, "tau", "τ", ABL_ALIGN_RIGHT);
    abl_report_column(r, "tau_decimal", "τ (decimal)", ABL_ALIGN_RIGHT);
    abl_report_column_data_only(r);
    abl_report_column(r, "paper_name", "paper (Table 4)", ABL_ALIGN_LEFT);
    abl_report_column(r, "paper_value", "paper value", ABL_ALIGN_RIGHT);
    abl_report_column(r, "paper_difference", "paper - τ", ABL_ALIGN_RIGHT);
    abl_report_column(r, "paper_verdict", "paper verdict", ABL_ALIGN_LEFT);
    abl_report_column(r, "linear", "exp(τ)", ABL_ALIGN_RIGHT);
    abl_report_column(r, "finfo", "finfo name", ABL_ALIGN_LEFT);
    abl_report_column(r, "meaning", "meaning", ABL_ALIGN_LEFT);
    abl_report_column_explains(r);
    for (size_t i = 0; i < nformats && st == ABL_OK; i++)
        for (int k = 0; k < ABL_TAU_KIND_COUNT && st == ABL_OK; k++)
            st = thresholds_row(r, &formats[i], (abl_tau_kind)k, decimals);
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    abl_report_note(r, "The paper's \"underflow τu\" is ln of the smallest subnormal: exp(τu) is that subnormal, "
                       "not 0. Under round-to-nearest exp(x) is 0 only for x ≤ rn-zero (one ln 2 lower); with "
                       "flush-to-zero, for x < ftz. The paper's distance tables use the ftz value -87.3365.");
    abl_report_note(r, "paper - τ: the printed value minus the exact τ; paper verdict: whether the printed value is τ "
                       "correctly rounded to its decimals, τ truncated, or another quantity. exp(τ): the linear "
                       "value; finfo name: its name in torch.finfo / ml_dtypes.finfo (tiny = smallest normal).");
    *out = r;
    return ABL_OK;
}
