/* alibi-blind CLI: the progress bar (drawn from the library's abl_progress reports) and the work budget. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "abl_cli.h"

/* ABL_BUDGET_SECONDS (hidden, for tests: tests/cost_bound.py runs cases near a budget of a few seconds
 * instead of a minute): a positive number of seconds; anything else (unset, empty, not a number, not
 * positive) leaves the documented minute. */
double abl_cli_budget_from_env(void)
{
    const char *s = getenv("ABL_BUDGET_SECONDS");
    if (s == NULL || *s == '\0')
        return ABL_CLI_BUDGET_SECONDS;
    char *end;
    double v = strtod(s, &end);
    return *end == '\0' && isfinite(v) && v > 0 ? v : ABL_CLI_BUDGET_SECONDS;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

char *abl_cli_duration_text(double s)
{
    if (s < 1)
        return abl_cli_printf("less than a second");
    if (s < 90)
        return abl_cli_printf("%.0f second%s", s, s < 1.5 ? "" : "s"); /* 1 second, 2 seconds */
    if (s < 90 * 60)
        return abl_cli_printf("%.1f minutes", s / 60);
    if (s < 36 * 3600)
        return abl_cli_printf("%.1f hours", s / 3600);
    if (s < 2 * 365.25 * 86400)
        return abl_cli_printf("%.1f days", s / 86400);
    return abl_cli_printf("%.3g years", s / (365.25 * 86400));
}

/* ABL_COST_TRACE (hidden, for tests/cost_bound.py): each estimate judged against the budget is also
 * written to standard error, one line each, so a test can compare it with the measured CPU time. */
static void cost_trace(const char *what, const abl_cost *c)
{
    const char *s = getenv("ABL_COST_TRACE");
    if (s == NULL || *s == '\0' || strcmp(s, "0") == 0 || abl_cli_err == NULL)
        return;
    fprintf(abl_cli_err, "alibi-blind: cost: %.9g seconds on %d threads (%s)\n", c->seconds, c->threads, what);
}

abl_cli_work abl_cli_work_of(const char *what, const char **values)
{
    return (abl_cli_work){what, abl_cli_budget_from_env(), values[ABL_OPT_FORCE] != NULL, 0};
}

int abl_cli_budget_of(const char *what, const char **values, const abl_cost *c)
{
    abl_cli_work w = abl_cli_work_of(what, values);
    return abl_cli_budget(&w, c);
}

int abl_cli_budget(const abl_cli_work *w, const abl_cost *c)
{
    const char *what = w->what;
    cost_trace(what, c);
    if (w->force || c->seconds <= w->seconds)
        return 0;
    char *need = abl_cli_duration_text(c->seconds), *budget = abl_cli_duration_text(w->seconds);
    int rc = need == NULL || budget == NULL
                 ? abl_cli_internal_error("out of memory")
                 : abl_cli_usage_error("%s: %s%s of work (%.3g %s on %d thread%s at the nominal rate), over the "
                                       "budget of %s: pass --force to run it anyway",
                                       what, c->seconds < 1 ? "" : "about ", need, c->units,
                                       c->unit_name ? c->unit_name : "units", c->threads,
                                       c->threads == 1 ? "" : "s", budget);
    free(need);
    free(budget);
    return rc;
}

int abl_cli_predict_budget(const abl_cli_work *w, const abl_simulate_config *sc, double calls,
                           const abl_cost *extra)
{
    abl_cost one, total;
    memset(&total, 0, sizeof total);
    if (extra != NULL)
        abl_cost_add(&total, extra);
    if (calls > 0 && abl_predict_estimate(sc, &one) == ABL_OK) {
        one.units *= calls;
        one.seconds *= calls;
        abl_cost_add(&total, &one);
    }
    return abl_cli_budget(w, &total);
}

void abl_cli_bar_init(const abl_cli_ctx *ctx, abl_cli_bar *b, const char *label, const abl_cli_cmd *cmd, const char **values)
{
    memset(b, 0, sizeof *b);
    b->label = label;
    b->f = ctx->err;
    int fd = b->f != NULL ? fileno(b->f) : -1;
    b->on = abl_cli_arg(cmd, values, ABL_OPT_PROGRESS) != NULL || (fd >= 0 && isatty(fd));
    if (abl_cli_arg(cmd, values, ABL_OPT_QUIET) != NULL)
        b->on = 0;
    b->start = now_s();
    b->last = -1;
}

/* One line, redrawn in place with \r: never a newline, so an error line after it is still one line. */
void abl_cli_bar_update(void *ctx, uint64_t done, uint64_t total)
{
    abl_cli_bar *b = ctx;
    if (!b->on || total == 0)
        return;
    double t = now_s();
    if (b->last >= 0 && t - b->last < 0.2 && done < total)
        return;
    b->last = t;
    double frac = done >= total ? 1.0 : (double)done / (double)total;
    /* the bar's 40 cells: `fill` of the first, the rest of the second */
    static const char hashes[] = "########################################";
    static const char dashes[] = "----------------------------------------";
    int fill = (int)(frac * 40);
    char *eta = NULL;
    double elapsed = t - b->start;
    if (done > 0 && done < total && elapsed > 0.5) {
        double left = elapsed * (1.0 - frac) / frac;
        char *d = abl_cli_duration_text(left);
        /* "about" goes with an amount, not with "less than a second" */
        eta = d != NULL ? abl_cli_printf("  %s%s left", left < 1 ? "" : "about ", d) : NULL;
        free(d);
    }
    int n = fprintf(b->f, "\r%s [%.*s%.*s] %3.0f%%%s", b->label, fill, hashes, 40 - fill, dashes, 100 * frac,
                    eta != NULL ? eta : "");
    free(eta);
    /* pad over a longer previous line */
    for (int k = n; k < b->width; k++)
        fputc(' ', b->f);
    if (n > b->width)
        b->width = n;
    fflush(b->f);
}

void abl_cli_bar_finish(abl_cli_bar *b)
{
    if (!b->on || b->width == 0)
        return;
    fputc('\r', b->f);
    for (int k = 0; k < b->width; k++)
        fputc(' ', b->f);
    fputc('\r', b->f);
    fflush(b->f);
    b->width = 0;
}
