/* alibi-blind: the HTML report of a bidirectional (encoder) layer (issue 19). Every row i of the N x N
 * matrix attends all N keys at d = |i - j|: the fractions come from the bidirectional closed forms
 * (abl_bidirectional.c, through abl_analysis_run with attention = bidirectional) and, through the kernel,
 * from the bidirectional predictor (abl_simulate_bidir.c); the end row is i = N - 1, the middle row
 * i = floor((N - 1) / 2), the matrix all N^2 entries. */
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include "abl/analysis/bidirectional.h"
#include "abl/core/fraction.h"
#include "abl/report/plot.h"
#include "abl_internal.h"
#include "compose/abl_html_bidir.h"

static void brow(FILE *f, const char *key, char *value)
{
    fputs("<tr><th>", f);
    abl_html_escape(f, key);
    fputs("</th><td>", f);
    abl_html_escape(f, value != NULL ? value : "");
    fputs("</td></tr>\n", f);
    free(value);
}

abl_status abl_html_bidir_layer(const abl_html_config *c, abl_analysis *a)
{
    abl_analysis_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.format = c->format;
    cfg.convention = c->convention;
    cfg.heads = c->heads;
    cfg.slopes = c->slopes;
    cfg.context = c->context;
    cfg.attention = ABL_ATTENTION_BIDIRECTIONAL;
    abl_status st = abl_analysis_run(&cfg, a);
    if (st == ABL_OK && a->heads > ABL_PLOT_MAX_HEADS)
        st = ABL_ERR_HEADS_RANGE;
    if (st != ABL_OK)
        abl_analysis_free(a);
    return st;
}

void abl_html_bidir_model_rows(FILE *f)
{
    brow(f, "attention", abl_strf("bidirectional (encoder): every row i attends all N keys at d = |i - j|; "
                                  "end row i = N - 1 (one horizon of N - 1 keys), middle row i = ⌊(N - 1)/2⌋ "
                                  "(two horizons)"));
}

/* q as a percent with 2 decimals (malloc'd). */
static char *percent(const mpq_t q)
{
    char *p = abl_fraction_percent_text(q, 2);
    char *t = abl_strf("%s %%", p != NULL ? p : "");
    free(p);
    return t;
}

/* count / (heads * per) as a percent with 2 decimals, exactly (malloc'd). */
static char *kernel_percent(uint64_t count, int heads, const mpz_t per)
{
    mpq_t q;
    mpq_init(q);
    mpz_set_ui(mpq_numref(q), 0);
    mpz_import(mpq_numref(q), 1, 1, sizeof count, 0, 0, &count);
    mpz_mul_ui(mpq_denref(q), per, (unsigned long)heads);
    char *t = NULL;
    if (mpz_sgn(mpq_denref(q)) > 0) {
        mpq_canonicalize(q);
        t = percent(q);
    }
    mpq_clear(q);
    return t;
}

void abl_html_bidir_fractions(FILE *f, const abl_html_config *c, const abl_analysis *a, const abl_prediction *pr)
{
    fputs("<h2>Fractions (bidirectional)</h2>\n<table>\n", f);
    brow(f, "heads blind inside the context (δ < N)", abl_strf("%d of %d", a->blind_heads, a->heads));
    brow(f, "row fraction (end row, i = N - 1)", percent(a->row_fraction));
    brow(f, "row fraction (middle row, i = ⌊(N - 1)/2⌋)", percent(a->mid_fraction));
    brow(f, "matrix fraction (all N × N entries)", percent(a->matrix_fraction));
    if (pr != NULL) {
        int kb = 0;   /* blind: a zero weight in any row, not only the end row (docs/method.md) */
        for (int h = 0; h < pr->heads; h++)
            kb += pr->results[h].matrix_zeros > 0;
        brow(f, "heads with a zero weight through the kernel (any row of the N × N matrix)",
             abl_strf("%d of %d", kb, pr->heads));
        brow(f, "end row fraction through the kernel (exact zeros)",
             kernel_percent(pr->row_zeros, pr->heads, a->row_attended));
        brow(f, "middle row fraction through the kernel (exact zeros)",
             kernel_percent(pr->mid_row_zeros, pr->heads, a->mid_attended));
        brow(f, "matrix fraction through the kernel (exact zeros, N × N)",
             kernel_percent(pr->matrix_zeros, pr->heads, a->matrix_attended));
    }
    fputs("</table>\n", f);
    fprintf(f, "<p class=\"note\">A bidirectional layer (N = %llu): the closed forms count the keys at d ≥ δ on "
               "both horizons of a row (docs/method.md, Bidirectional layers); in the table below, row zeros and "
               "row %% are the end row's and matrix %% is of all N × N entries.%s</p>\n",
            (unsigned long long)c->context,
            pr != NULL ? " Through the kernel: the bidirectional predictor's exact zeros for zero logits."
                       : " The kernel's zeros are not predicted here (a kernel the bidirectional predictor does "
                         "not model, or N above the page's limit).");
}

void abl_html_bidir_pictures_note(FILE *f)
{
    fputs("<p class=\"note\">Figure 1b and the zero map are drawn for causal layers only; the table of "
          "fractions above is this bidirectional layer's.</p>\n", f);
}
