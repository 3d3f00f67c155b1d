/* alibi-blind (private): the HTML report's gradient section (issue 20, spec §15), called by abl_html.c. */
#ifndef ABL_HTML_GRADIENT_H
#define ABL_HTML_GRADIENT_H

#include <stdio.h>
#include "abl/kernel/simulate.h"

/* "Training: gradient blindness": for the layer of cfg (zero logits, the kernel's backward kind), per bound
 * |dP - D| x loss scale in 2^-8, 2^0 and 2^16 (GradScaler's initial scale), the heads with a zero rounded
 * dS in the last row, each head's first zero dS and the last-row keys whose gradient is 0 while their
 * weight (fwd, the forward prediction of the same layer) is not. A bound the gradient predictor does not
 * model on this kernel says so. */
void abl_html_gradient_section(FILE *f, const abl_simulate_config *cfg, const abl_prediction *fwd);

#endif
