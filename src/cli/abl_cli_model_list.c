/*
 * analyze --model a,b,c and check --model a,b,c (issue 19, "Compare models"): each model once, at its own
 * context or the given --ctx, and one table with a row per model before the models' own reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "abl_cli.h"

#define MODEL_LIST_MAX 64

/* The overview's columns: meta and summary keys of the kernel report (check's report has the same). */
static const abl_report_compare model_columns[] = {
    {"head_count", "heads"},           {"pipeline", "kernel"},          {"context", "context"},
    {"blind_heads", "blind"},     {"first_blind_any", "first blind"},  {"row_fraction", "row"},
    {"matrix_fraction", "matrix"},
};

abl_status abl_cli_model_row_summaries(const abl_compare *c, abl_report *r)
{
    int64_t first = -1;
    for (int i = 0; i < c->heads; i++)
        if (c->results[i].first_blind >= 0 && (first < 0 || c->results[i].first_blind < first))
            first = c->results[i].first_blind;
    char *heads = abl_cli_printf("%d", c->heads);
    char *d = first >= 0 ? abl_cli_printf("%lld", (long long)first) : NULL;
    abl_status st = heads == NULL || (first >= 0 && d == NULL) ? ABL_ERR_NO_MEMORY : ABL_OK;
    if (st == ABL_OK)
        st = abl_report_summary(r, "head_count", "heads", heads, heads);
    if (st == ABL_OK)
        st = abl_report_summary(r, "first_blind_any", "first blind distance (any head)", d ? d : "none",
                                d ? d : "null");
    free(heads);
    free(d);
    return st;
}

/* Split the comma list into names (a heap copy the caller frees); 0, or the exit status after the error. */
static int split_models(const char *list, char **copy, const char **names, size_t *n)
{
    *n = 0;
    if ((*copy = strdup(list)) == NULL)
        return abl_cli_internal_error("out of memory");
    for (char *p = *copy, *next; p != NULL; p = next) {
        next = strchr(p, ',');
        if (next != NULL)
            *next++ = '\0';
        if (*p == '\0')
            return abl_cli_usage_error("--model: '%s' has an empty name (a,b,c: names separated by commas)", list);
        for (size_t k = 0; k < *n; k++)
            if (strcasecmp(names[k], p) == 0)
                return abl_cli_usage_error("--model: %s is named twice in '%s'", p, list);
        if (*n == MODEL_LIST_MAX)
            return abl_cli_usage_error("--model: more than %d models in '%s'", MODEL_LIST_MAX, list);
        names[(*n)++] = p;
    }
    return 0;
}

/* Each model's run with its share of the budget; 0, 1 (some run answered 1) or the exit status. */
static int run_each(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **w, const char **names, size_t n,
                    abl_cli_model_run one, abl_report **reps)
{
    abl_cli_work work = abl_cli_work_of(cmd->name, w);
    char *what = abl_cli_printf("%s (1/%zu of the budget for each of %zu models)", cmd->name, n, n);
    if (what == NULL)
        return abl_cli_internal_error("out of memory");
    work.what = what;
    work.seconds /= (double)n;
    work.model_row = 1;
    int worst = ABL_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        w[ABL_OPT_MODEL] = names[i];
        int rc = one(ctx, cmd, w, &work, &reps[i]);
        if (rc == ABL_EXIT_DIFFERS && reps[i] != NULL) {
            worst = rc;
            continue;
        }
        if (rc != ABL_EXIT_OK) {
            worst = rc;
            break;
        }
    }
    free(what);
    return worst;
}

int abl_cli_model_list(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, abl_output out,
                       abl_cli_model_run one)
{
    const char *dt = abl_cli_arg(cmd, v, ABL_OPT_DTYPE);
    if (dt != NULL && (strchr(dt, ',') != NULL || strcasecmp(dt, "all") == 0))
        return abl_cli_usage_error("--model: a list of models and a list of dtypes ('%s') at once; give one list", dt);
    const char *names[MODEL_LIST_MAX];
    size_t n = 0;
    char *copy = NULL;
    int rc = split_models(abl_cli_arg(cmd, v, ABL_OPT_MODEL), &copy, names, &n);
    const char **w = rc == 0 ? malloc(ABL_OPT_COUNT * sizeof *w) : NULL;
    abl_report *reps[MODEL_LIST_MAX] = {NULL};
    if (rc == 0 && w == NULL)
        rc = abl_cli_internal_error("out of memory");
    if (rc == 0) {
        memcpy(w, v, ABL_OPT_COUNT * sizeof *w);
        rc = run_each(ctx, cmd, w, names, n, one, reps);
    }
    if (rc == ABL_EXIT_OK || (rc == ABL_EXIT_DIFFERS && reps[n - 1] != NULL)) {
        abl_report_set set = {
            (const abl_report *const *)reps, names, n, "ALiBi blindness by model: the real kernel of each",
            "model", "model", "models", "analyses", model_columns, sizeof model_columns / sizeof model_columns[0],
        };
        int erc = abl_cli_emit_set(ctx, &set, out, abl_cli_arg(cmd, v, ABL_OPT_OUTPUT));
        if (erc != ABL_EXIT_OK)
            rc = erc;
    }
    for (size_t i = 0; i < n; i++)
        abl_report_free(reps[i]);
    free(w);
    free(copy);
    return rc;
}
