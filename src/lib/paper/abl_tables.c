/* alibi-blind: report builders for the threshold listing and the paper's tables. */
#include <stdio.h>
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

static void meaning(const abl_format *f, abl_tau_kind kind, char *buf, size_t len)
{
    long k = 0;
    abl_threshold_log2_multiple(f, kind, &k);
    /* k <= 0 for every underflow kind; print it with an ASCII minus sign. */
    const char *sign = k < 0 ? "-" : "";
    unsigned long ak = (unsigned long)(k < 0 ? -k : k);
    switch (kind) {
    case ABL_TAU_SUBNORMAL:
        snprintf(buf, len, "%s%lu·ln 2 = ln(smallest subnormal)", sign, ak);
        break;
    case ABL_TAU_RN_ZERO:
        snprintf(buf, len, "%s%lu·ln 2: exp(x) rounds to 0 (RNE) iff x ≤ τ", sign, ak);
        break;
    case ABL_TAU_FTZ:
        snprintf(buf, len, "%s%lu·ln 2 = ln(smallest normal): with FTZ exp(x) = 0 iff x < τ", sign, ak);
        break;
    case ABL_TAU_MAX:
        snprintf(buf, len, "ln(largest finite)");
        break;
    default:
        /* e4m3fn's max 448 has an even significand, so the tie at 464 rounds back to 448. */
        snprintf(buf, len, "ln(max + ulp/2): exp(x) rounds past max (RNE) iff x %s τ",
                 f->max_deficit == 0 ? "≥" : ">");
        break;
    }
}

/* A decimal text as a JSON number a double holds: 17 significant digits (the text itself goes beside it). */
static void json_number17(const char *decimal, char *buf, size_t len)
{
    size_t sig = 0;
    int lead = 1;
    for (const char *c = decimal; *c; c++) {
        if (*c < '0' || *c > '9') continue;
        if (lead && *c == '0') continue;
        lead = 0;
        sig++;
    }
    if (sig <= 17) {
        snprintf(buf, len, "%s", decimal);
        return;
    }
    mpfr_t x;
    mpfr_init2(x, 53);
    mpfr_set_str(x, decimal, 10, MPFR_RNDN);
    mpfr_snprintf(buf, len, "%.17Rg", x);
    mpfr_clear(x);
}

/*
 * The reviewer's columns for a printed value P with k decimals: P - tau to `decimals` decimals, and
 * whether P is tau correctly rounded to k decimals, tau truncated to k decimals, or neither (then it
 * is the value of another quantity: the verdict names the kind of the same format it rounds, if any).
 */
static abl_status paper_verdict(const abl_format *f, abl_tau_kind kind, const char *pval, int decimals, char *diff,
                                size_t dlen, char *verdict, size_t vlen, char *vjson, size_t vjlen)
{
    const char *dot = strchr(pval, '.');
    int k = dot != NULL ? (int)strlen(dot + 1) : 0;
    char rounded[1100];
    abl_status st = abl_threshold_into(f, kind, k, rounded, sizeof rounded);
    if (st != ABL_OK)
        return st;
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_prec_t prec = (mpfr_prec_t)((decimals > k ? decimals : k) * 4 + 256);
    mpfr_t tau, p, d;
    mpfr_inits2(prec, tau, p, d, (mpfr_ptr)0);
    abl_threshold_mpfr(tau, f, kind, MPFR_RNDN);
    mpfr_set_str(p, pval, 10, MPFR_RNDN);
    mpfr_sub(d, p, tau, MPFR_RNDN);
    mpfr_snprintf(diff, dlen, "%.*Rf", decimals, d);
    if (strncmp(diff, "-0.", 3) == 0 && strspn(diff + 3, "0") == strlen(diff + 3))
        memmove(diff, diff + 1, strlen(diff));
    char trunc[1100];
    mpfr_snprintf(trunc, sizeof trunc, "%.*RZf", k, tau);
    mpfr_clears(tau, p, d, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    if (strcmp(pval, rounded) == 0) {
        snprintf(verdict, vlen, "correctly rounded");
        snprintf(vjson, vjlen, "\"correctly_rounded\"");
    } else if (strcmp(pval, trunc) == 0) {
        snprintf(verdict, vlen, "truncated");
        snprintf(vjson, vjlen, "\"truncated\"");
    } else {
        const char *other = NULL;
        for (int o = 0; o < ABL_TAU_KIND_COUNT && other == NULL; o++) {
            if (o == (int)kind)
                continue;
            if (abl_threshold_into(f, (abl_tau_kind)o, k, rounded, sizeof rounded) == ABL_OK &&
                strcmp(pval, rounded) == 0)
                other = abl_tau_kind_name((abl_tau_kind)o);
        }
        if (other != NULL)
            snprintf(verdict, vlen, "another quantity (%s)", other);
        else
            snprintf(verdict, vlen, "another quantity");
        snprintf(vjson, vjlen, "\"another_quantity\"");
    }
    return ABL_OK;
}

/*
 * exp(tau) as the linear value numpy/torch users know: the smallest subnormal (subnormal), half of it
 * (rn-zero), the smallest normal = torch.finfo.tiny (ftz), the largest finite (max), max + ulp/2
 * (rn-overflow). Exact powers of two and significands, printed with 9 (text) and 17 (JSON) digits.
 */
static void linear_value(const abl_format *f, abl_tau_kind kind, char *text, size_t tlen, char *json, size_t jlen,
                         const char **finfo)
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
    mpfr_snprintf(text, tlen, "%.9Rg", x);
    mpfr_snprintf(json, jlen, "%.17Rg", x);
    mpz_clear(m);
    mpfr_clear(x);
    abl_mpfr_range_restore(saved);
}

abl_status abl_thresholds_report(const abl_format *formats, size_t nformats, int decimals, abl_report **out)
{
    if (formats == NULL || out == NULL || nformats == 0)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("Thresholds of exp in finite precision (natural-log units)", "thresholds");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    char t[1200], j[1300], p[64], d[1200], v[64], vj[64];
    snprintf(t, sizeof t, "%d decimals, correctly rounded (MPFR)", decimals);
    snprintf(j, sizeof j, "%d", decimals);
    abl_report_meta(r, "decimals", "digits", t, j);
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
    abl_status st = ABL_OK;
    for (size_t i = 0; i < nformats && st == ABL_OK; i++) {
        for (int k = 0; k < ABL_TAU_KIND_COUNT && st == ABL_OK; k++) {
            abl_tau_kind kind = (abl_tau_kind)k;
            abl_report_row(r);
            abl_report_cell(r, formats[i].name, NULL, NULL);
            abl_report_cell(r, abl_tau_kind_name(kind), NULL, NULL);
            st = abl_threshold_into(&formats[i], kind, decimals, t, sizeof t);
            if (st != ABL_OK)
                break;
            json_number17(t, j, sizeof j);
            abl_report_cell(r, t, j, NULL);
            snprintf(j, sizeof j, "\"%s\"", t);
            abl_report_cell(r, t, j, NULL);
            const char *pname = abl_tau_kind_paper_name(kind), *pval = abl_paper_table4_value(&formats[i], kind);
            if (pname != NULL) {
                snprintf(p, sizeof p, "%s %s", pname, abl_tau_kind_paper_symbol(kind));
                abl_report_cell(r, p, NULL, NULL);
            } else {
                abl_report_cell(r, "—", "null", NULL);
            }
            if (pval != NULL) {
                snprintf(p, sizeof p, "%s", pval);
                abl_report_cell(r, p, pval, NULL);
                if ((st = paper_verdict(&formats[i], kind, pval, decimals, d, sizeof d, v, sizeof v, vj,
                                        sizeof vj)) != ABL_OK)
                    break;
                json_number17(d, j, sizeof j);
                abl_report_cell(r, d, j, NULL);
                abl_report_cell(r, v, vj, NULL);
            } else {
                abl_report_cell(r, "—", "null", NULL);
                abl_report_cell(r, "—", "null", NULL);
                abl_report_cell(r, "—", "null", NULL);
            }
            const char *finfo;
            linear_value(&formats[i], kind, p, sizeof p, j, sizeof j, &finfo);
            abl_report_cell(r, p, j, NULL);
            if (finfo != NULL)
                abl_report_cell(r, finfo, NULL, NULL);
            else
                abl_report_cell(r, "—", "null", NULL);
            meaning(&formats[i], kind, t, sizeof t);
            abl_report_cell(r, t, NULL, NULL);
        }
    }
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
