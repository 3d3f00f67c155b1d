/* alibi-blind: helpers of the kernel stage shared with the stages above it (not part of the public API). */
#ifndef ABL_KERNEL_INTERNAL_H
#define ABL_KERNEL_INTERNAL_H

#include "abl/kernel/pipeline.h"
#include "abl_internal.h"

/*
 * abl_pipeline_parse for the plot and report APIs: on failure err gets "--pipeline: 'SPEC': MESSAGE",
 * built from the whole message (abl_pipeline_parse_msg, no intermediate buffer); only the caller's
 * err/errlen bounds it.
 */
abl_status abl_pipeline_error(const char *spec, const abl_format *model_dtype, abl_pipeline *out, char *err,
                              size_t errlen);

/* abl_pipeline_describe's text, appended to t (any length). */
struct abl_pipeline;
void abl_pipeline_describe_text(const struct abl_pipeline *p, abl_text *t);

#endif
