/* alibi-blind: helpers of the kernel stage shared with the stages above it (not part of the public API). */
#ifndef ABL_KERNEL_INTERNAL_H
#define ABL_KERNEL_INTERNAL_H

#include "abl/kernel/pipeline.h"
#include "abl_internal.h"

/* abl_pipeline_describe's text, appended to t (any length). */
struct abl_pipeline;
void abl_pipeline_describe_text(const struct abl_pipeline *p, abl_text *t);
/* The same fields as a JSON object of strings, appended to t (abl_pipeline_json.c). */
void abl_pipeline_describe_json(const struct abl_pipeline *p, abl_text *t);

/* 1 when the softmax kind emulates P.V itself (sdpa-*, ggml-flash, the GPU engines, flex): its weight is
 * already the coefficient of V, and the fields pv-dtype / pv-accumulate are not read */
int abl_pipeline_owns_pv(const struct abl_pipeline *p);

/* Pipeline versions (abl_pipeline_version.c): a version= value parsed against every preset's versions
 * (a row, ABL_VERSION_NEWEST for "newest", ABL_VERSION_UNKNOWN); abl_version_of: that value's row for one
 * preset (-1 when the preset has no such version); abl_version_apply sets the row's version and what it
 * changes; abl_version_default: the preset's newest version name ("?" for an unknown preset). */
enum { ABL_VERSION_NEWEST = -1, ABL_VERSION_UNKNOWN = -2 };
int abl_version_parse(const char *text);
int abl_version_of(const char *preset, int version);
void abl_version_apply(struct abl_pipeline *p, int row);
const char *abl_version_default(const char *preset);

#endif
