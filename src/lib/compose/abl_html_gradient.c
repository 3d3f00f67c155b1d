/* alibi-blind: the HTML report's gradient section (abl_html_gradient.h). Its kernel work is the zero-logit
 * gradient predictor (abl_backward_predict) three times, each the cost of the forward prediction the page
 * already ran (the page calls it only where that prediction ran, N <= ABL_HTML_PREDICT_MAX_CONTEXT). */
#include <stdint.h>
#include <string.h>
#include "abl/compose/html.h"
#include "abl/kernel/backward.h"
#include "compose/abl_html_gradient.h"

/* a small upstream, unit upstream, GradScaler's 2^16 (the plan counts ABL_HTML_GRADIENT_BOUNDS of them) */
static const long k_bounds[ABL_HTML_GRADIENT_BOUNDS] = {-8, 0, 16};

/* One bound's row: its heads, first distances and gradient-only keys, or why it is not modelled. */
static void bound_row(FILE *f, const abl_simulate_config *cfg, const abl_prediction *fwd, long j)
{
    abl_backward_config b;
    memset(&b, 0, sizeof b);
    b.log2_upstream = j;
    abl_backward g;
    abl_status st = abl_backward_predict(cfg, &b, &g);
    fprintf(f, "<tr><td class=\"n\">2^%ld</td>", j);
    if (st != ABL_OK || g.heads != fwd->heads) {
        fputs("<td colspan=\"3\">not modelled on this kernel (spec §15)</td></tr>\n", f);
        abl_backward_free(&g);
        return;
    }
    int blind = 0;
    uint64_t only = 0;
    for (int h = 0; h < g.heads; h++) {
        blind += g.results[h].row_zeros > 0;
        /* eager kinds: blindness is a threshold on each weight, so the gradient's zeros hold the forward
         * ones; memeff recomputes P from the log-sum-exp (its zeros need not hold them): its predictor
         * counts these keys itself */
        if (g.kind == ABL_BACKWARD_MEMEFF)
            only += g.results[h].only_row;
        else if (g.results[h].row_zeros > fwd->results[h].row_zeros)
            only += g.results[h].row_zeros - fwd->results[h].row_zeros;
    }
    fprintf(f, "<td class=\"n\">%d of %d</td><td>", blind, g.heads);
    for (int h = 0; h < g.heads; h++) {
        if (g.results[h].first_blind >= 0)
            fprintf(f, "%s%lld", h > 0 ? ", " : "", (long long)g.results[h].first_blind);
        else
            fprintf(f, "%snone", h > 0 ? ", " : "");
    }
    fprintf(f, "</td><td class=\"n\">%llu</td></tr>\n", (unsigned long long)only);
    abl_backward_free(&g);
}

void abl_html_gradient_section(FILE *f, const abl_simulate_config *cfg, const abl_prediction *fwd)
{
    abl_backward_kind kind = abl_backward_kind_of(&cfg->pipeline);
    fputs("<h2>Training: gradient blindness</h2>\n", f);
    fprintf(f, "<p>Where the gradient of a key's score, dS = P (dP − D) rounded into %s, is exactly 0 in the last "
               "row (zero logits, the zero-logit gradient predictor; backward kind <code>%s</code>%s, "
               "docs/pipelines.md §9), for a bound on |dP − D| times the loss scale:</p>\n",
            cfg->pipeline.output_dtype.name, abl_backward_kind_name(kind),
            kind == ABL_BACKWARD_MEMEFF ? ": the memory-efficient SDPA backward, modelled from source, not measured"
            : kind == ABL_BACKWARD_FLASH ? ": FlashAttention-2's backward, modelled from source, not measured"
                                         : "");
    fputs("<table>\n<tr><th>|dP − D| × loss scale</th><th>heads with a zero dS</th><th>first zero dS per head "
          "(model order)</th><th>last-row keys: zero dS, weight not 0</th></tr>\n", f);
    for (size_t i = 0; i < sizeof k_bounds / sizeof k_bounds[0]; i++)
        bound_row(f, cfg, fwd, k_bounds[i]);
    fputs("</table>\n<p class=\"note\">2^16 is torch.cuda.amp.GradScaler's initial scale; the eager softmax "
          "backwards, the memory-efficient SDPA one and FlashAttention-2's (other fused kernels: analyze "
          "--gradient's closed form). spec §15.</p>\n", f);
}
