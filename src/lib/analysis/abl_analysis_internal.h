/* alibi-blind: helpers of the analysis stage shared with the stages above it (not part of the public API). */
#ifndef ABL_ANALYSIS_INTERNAL_H
#define ABL_ANALYSIS_INTERNAL_H

#include "abl/analysis/analysis.h"

/*
 * The paper's analysis of one layer (abl_analysis_run with only these fields set): the start that
 * plots, the HTML report, compare, the paper's tables and reproduce share. a is as abl_analysis_run
 * leaves it (free it on success and on failure).
 */
abl_status abl_analysis_layer(const abl_format *format, abl_convention convention, int heads,
                              const abl_schedule_spec *slopes,
                              unsigned mitigations, uint64_t context, abl_analysis *a);

#endif
