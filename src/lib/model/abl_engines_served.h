/* alibi-blind (private): the serving-engine table's texts for the catalogue reports
 * (abl_engines_served.c). */
#ifndef ABL_ENGINES_SERVED_H
#define ABL_ENGINES_SERVED_H

#include "abl/model/catalogue.h"

/* "llama.cpp: yes (presets ...); vLLM: yes" (detail: each with the code read), malloc'd (NULL: out of
 * memory); "-" for a family without a row. */
char *abl_engines_text(const abl_model_family *f, int detail);
/* One sentence over every family: which engines serve it (malloc'd; NULL: out of memory). */
char *abl_engines_summary(void);

#endif
