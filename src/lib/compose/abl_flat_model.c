/* alibi-blind: the flat entry points over a model (analyze with a kernel, check): the paper's model beside
 * the kernel's zero-logit predictor, as the CLI's abl_cli_compare runs and reports them. */
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include "abl/core/decimal.h"
#include "abl/core/format.h"
#include "abl/kernel/simulate.h"
#include "abl/model/compare.h"
#include "abl/report/report.h"
#include "abl_internal.h"
#include "compose/abl_flat_internal.h"

#define FLAT_MAX_DTYPES 64

/* The comparison's failure as the CLI words it (abl_cli_compare). */
static abl_flat_result *compare_error(abl_status st, const char *command, const abl_compare_config *cc,
                                      const char *slopes)
{
    if (st == ABL_ERR_HEADS_RANGE && cc->heads > 0 && cc->slopes != NULL)
        return abl_flat_fail(st, "slopes: the list '%s' does not have %d entries (the head count)", slopes, cc->heads);
    if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE)
        return abl_flat_fail(st, "slopes: '%s': %s", slopes, abl_status_message(st));
    if (st == ABL_ERR_DEGENERATE)
        return abl_flat_fail(st, "slopes: '%s': a slope rounds to zero in slope-dtype=%s, or a target needs a non-zero "
                             "tau of %s", slopes, cc->pipeline.slope_dtype.name, cc->dtype.name);
    if (st == ABL_ERR_UNSUPPORTED)
        return abl_flat_fail(st, "%s: the bias or the logits overflow to Inf/NaN in this pipeline at N = %llu", command,
                             (unsigned long long)cc->context);
    return abl_flat_fail(st, "%s: %s", command, abl_status_message(st));
}

/* Run the comparison of a resolved setup; its report (check's verdict with limits) into *out, and *pass. */
static abl_flat_result *compare_run(const char *command, abl_flat_setup *s, const abl_check_limits *limits,
                                    const abl_flat_work *w, abl_report **out, int *pass)
{
    abl_compare_config cc;
    abl_status st = abl_layer_compare_config(&s->layer, &cc);
    if (st != ABL_OK)
        return abl_flat_fail(st, "%s", abl_status_message(st));
    if (cc.pipeline.softmax == ABL_SOFTMAX_EAGER && (cc.pipeline.sum != ABL_SUM_EXACT || cc.pipeline.exp != ABL_EXP_CORRECT))
        return abl_flat_fail(ABL_ERR_UNSUPPORTED, "pipeline: %s answers with the zero-logit predictor, which models "
                             "sum=exact and exp=correct (got sum=%s, exp=%s; use simulate for the others)", command,
                             abl_sum_order_name(cc.pipeline.sum), abl_exp_model_name(cc.pipeline.exp));
    abl_cost cost;
    abl_flat_result *e = abl_compare_estimate(&cc, &cost) == ABL_OK ? abl_flat_budget(command, w, &cost) : NULL;
    if (e != NULL)
        return e;
    abl_compare c;
    st = abl_compare_run(&cc, &c);
    const char *slopes = s->slopes != NULL ? s->slopes : cc.slopes != NULL ? cc.slopes->text : "press";
    if (st != ABL_OK)
        return compare_error(st, command, &cc, slopes);
    st = limits ? abl_check_report(&c, limits, s->meta, s->nmeta, out) : abl_compare_report(&c, s->meta, s->nmeta, out);
    *pass = limits == NULL || abl_check_pass(&c, limits);
    abl_compare_free(&c);
    return st == ABL_OK ? NULL : abl_flat_fail(st, "%s", abl_status_message(st));
}

/* One format's report of analyze with a kernel (dtype NULL: the model's or bf16). */
static abl_flat_result *analyze_kernel_one(const abl_flat_model_args *m, const char *dtype, const char *convention,
                                           const abl_flat_work *w, abl_report **out)
{
    abl_flat_model_args a = *m;
    a.dtype = dtype;
    abl_flat_setup s;
    abl_flat_result *e = abl_flat_setup_resolve(&a, "analyze", ABL_SIMULATE_MAX_CONTEXT, &s);
    if (e == NULL && convention != NULL && abl_convention_parse(convention, &s.layer.convention) != ABL_OK)
        e = abl_flat_fail(ABL_ERR_UNKNOWN_CONVENTION, "convention: unknown convention '%s' (known: paper, ftz, ieee, "
                          "subnormal)", convention);
    int pass;
    if (e == NULL)
        e = compare_run("analyze", &s, NULL, w, out, &pass);
    abl_flat_setup_free(&s);
    return e;
}

/* What the overview of a list of formats compares with a kernel (the CLI's kernel_compare). */
static const abl_report_compare flat_kernel_compare[] = {
    {"paper_blind_heads", "paper: blind"}, {"blind_heads", "kernel: blind"},
    {"paper_row_fraction", "paper: row"}, {"row_fraction", "kernel: row"},
    {"matrix_fraction", "kernel: matrix"},
};

abl_flat_result *abl_flat_analyze_kernel(const abl_flat_model_args *m, const char *const *dtypes, size_t ndtypes,
                                         int dtype_list, const char *convention, const abl_flat_work *w)
{
    const char *names[FLAT_MAX_DTYPES];
    size_t n = ndtypes;
    if (dtype_list && ndtypes == 0)
        for (n = 0; n < abl_format_count() && n < FLAT_MAX_DTYPES; n++)
            names[n] = abl_format_at(n)->name;
    else if (n > FLAT_MAX_DTYPES)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "dtype: at most %d formats", FLAT_MAX_DTYPES);
    else
        for (size_t i = 0; i < n; i++)
            names[i] = dtypes[i];
    if (!dtype_list) {
        abl_report *r = NULL;
        abl_flat_result *e = analyze_kernel_one(m, n ? names[0] : NULL, convention, w, &r);
        if (e == NULL)
            e = abl_flat_render(r, NULL);
        abl_report_free(r);
        return e;
    }
    abl_report *reps[FLAT_MAX_DTYPES] = {NULL};
    abl_flat_work share = w != NULL ? *w : (abl_flat_work){0, 0, NULL, NULL};
    share.budget_seconds = (share.budget_seconds > 0 ? share.budget_seconds : 60.0) / (double)n;
    abl_flat_result *e = NULL;
    for (size_t i = 0; e == NULL && i < n; i++)
        for (size_t k = 0; e == NULL && k < i; k++)
            if (strcmp(names[i], names[k]) == 0)
                e = abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "dtype: %s is named twice", names[i]);
    for (size_t i = 0; e == NULL && i < n; i++)
        e = analyze_kernel_one(m, names[i], convention, &share, &reps[i]);
    if (e == NULL) {
        abl_report_set set = {(const abl_report *const *)reps, names, n,
                              "ALiBi blindness by dtype: the paper's model and the real kernel", "dtype", "dtype",
                              "dtypes", "analyses", flat_kernel_compare,
                              sizeof flat_kernel_compare / sizeof flat_kernel_compare[0]};
        e = abl_flat_render(NULL, &set);
    }
    for (size_t i = 0; i < n; i++)
        abl_report_free(reps[i]);
    return e;
}

abl_flat_result *abl_flat_check(const abl_flat_model_args *m, int max_blind_heads, const char *max_row_fraction,
                                const abl_flat_work *w)
{
    if (m->model == NULL && m->config == NULL)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "check: config= (a config.json) or model= is required");
    if (max_blind_heads < 0 || max_blind_heads > ABL_MAX_HEADS)
        return abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "max_blind_heads: %d is out of range (0 to %d)", max_blind_heads,
                             ABL_MAX_HEADS);
    mpq_t frac;
    mpq_init(frac);
    abl_check_limits lim = {max_blind_heads, NULL, ABL_CRITERION_WEIGHT};
    abl_flat_result *e = NULL;
    if (max_row_fraction != NULL) {
        if (abl_decimal_to_mpq(max_row_fraction, frac) != ABL_OK || mpq_sgn(frac) < 0 || mpq_cmp_ui(frac, 1, 1) > 0)
            e = abl_flat_fail(ABL_ERR_INVALID_ARGUMENT, "max_row_fraction: %s is out of range (0 to 1; 0.05 = 5 %%)",
                              max_row_fraction);
        lim.max_row_fraction = frac;
    }
    abl_flat_setup s;
    memset(&s, 0, sizeof s);
    if (e == NULL)
        e = abl_flat_setup_resolve(m, "check", ABL_SIMULATE_MAX_CONTEXT, &s);
    abl_report *r = NULL;
    int pass = 1;
    if (e == NULL)
        e = compare_run("check", &s, &lim, w, &r, &pass);
    if (e == NULL && (e = abl_flat_render(r, NULL)) != NULL && e->st == ABL_OK && !pass) {
        /* the CLI's exit 1: the verdict is the document, the status says the gate failed */
        e->st = ABL_ERR_MISMATCH;
        e->msg = abl_strf("check: fail: the model is over the limits at context %llu",
                          (unsigned long long)s.layer.context);
    }
    abl_report_free(r);
    abl_flat_setup_free(&s);
    mpq_clear(frac);
    return e;
}
