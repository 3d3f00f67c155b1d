/* alibi-blind: report builders for the threshold listing and the paper's tables. */
#include <stdio.h>
#include <string.h>
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

abl_status abl_thresholds_report(const abl_format *formats, size_t nformats, int decimals, abl_report **out)
{
    if (formats == NULL || out == NULL || nformats == 0)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("Thresholds of exp in finite precision (natural-log units)", "thresholds");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    char t[1200], j[1200], p[64];
    snprintf(t, sizeof t, "%d decimals, correctly rounded (MPFR)", decimals);
    snprintf(j, sizeof j, "%d", decimals);
    abl_report_meta(r, "decimals", "digits", t, j);
    abl_report_column(r, "dtype", "dtype", ABL_ALIGN_LEFT);
    abl_report_column(r, "kind", "kind", ABL_ALIGN_LEFT);
    abl_report_column(r, "tau", "τ", ABL_ALIGN_RIGHT);
    abl_report_column(r, "paper_name", "paper (Table 4)", ABL_ALIGN_LEFT);
    abl_report_column(r, "paper_value", "paper value", ABL_ALIGN_RIGHT);
    abl_report_column(r, "meaning", "meaning", ABL_ALIGN_LEFT);
    abl_status st = ABL_OK;
    for (size_t i = 0; i < nformats && st == ABL_OK; i++) {
        for (int k = 0; k < ABL_TAU_KIND_COUNT && st == ABL_OK; k++) {
            abl_tau_kind kind = (abl_tau_kind)k;
            abl_report_row(r);
            abl_report_cell(r, formats[i].name, NULL, NULL);
            abl_report_cell(r, abl_tau_kind_name(kind), NULL, NULL);
            st = abl_threshold_string(&formats[i], kind, decimals, j, sizeof j);
            if (st != ABL_OK)
                break;
            snprintf(t, sizeof t, "%s", j);
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
            } else {
                abl_report_cell(r, "—", "null", NULL);
            }
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
    *out = r;
    return ABL_OK;
}
