/* alibi-blind (private): the HTML report of a bidirectional (encoder) layer (abl_html_bidir.c): its analysis
 * from the bidirectional closed forms, its fractions (end row, middle row, N x N matrix) and what the page
 * says instead of the causal pictures. abl_html.c calls these when the page's attention is bidirectional. */
#ifndef ABL_HTML_BIDIR_H
#define ABL_HTML_BIDIR_H

#include <stdio.h>
#include "abl/analysis/analysis.h"
#include "abl/compose/html.h"
#include "abl/kernel/simulate.h"

/* The layer analysed with attention = bidirectional (abl/analysis/bidirectional.h: row_blind is the end
 * row's, mid_blind the middle row's, matrix_blind of all N x N entries); on failure a is freed. */
abl_status abl_html_bidir_layer(const abl_html_config *c, abl_analysis *a);
/* The model section's attention row. */
void abl_html_bidir_model_rows(FILE *f);
/* The Fractions section: closed forms and, when predicted (pr != NULL), the kernel's exact zeros. */
void abl_html_bidir_fractions(FILE *f, const abl_html_config *c, const abl_analysis *a, const abl_prediction *pr);
/* The note in Pictures where the causal Figure 1b and zero map are left out. */
void abl_html_bidir_pictures_note(FILE *f);

#endif
