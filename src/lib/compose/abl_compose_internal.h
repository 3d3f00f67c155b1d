/* alibi-blind: helpers shared by the compose stage's pictures and HTML page (not part of the public API). */
#ifndef ABL_COMPOSE_INTERNAL_H
#define ABL_COMPOSE_INTERNAL_H

#include "abl/analysis/analysis.h"

/* abl_analysis_layer at zero mitigations, refused (ABL_ERR_HEADS_RANGE, a freed) above ABL_PLOT_MAX_HEADS heads:
 * the layer a picture or the HTML report draws (abl_plot_kinds.c). On failure a is freed. */
abl_status abl_plot_layer(const abl_format *format, abl_convention convention, int heads,
                              const abl_schedule_spec *slopes,
                          uint64_t context, abl_analysis *a);

#endif
