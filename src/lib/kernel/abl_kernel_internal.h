/* alibi-blind: helpers of the kernel stage shared with the stages above it (not part of the public API). */
#ifndef ABL_KERNEL_INTERNAL_H
#define ABL_KERNEL_INTERNAL_H

#include "abl/kernel/pipeline.h"
#include "abl_internal.h"

/* abl_pipeline_describe's text, appended to t (any length). */
struct abl_pipeline;
void abl_pipeline_describe_text(const struct abl_pipeline *p, abl_text *t);

#endif
