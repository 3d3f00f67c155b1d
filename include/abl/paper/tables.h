/* alibi-blind: report builders for the threshold listing and the paper's tables. */
#ifndef ABL_TABLES_H
#define ABL_TABLES_H

#include "abl/core/export.h"

#include <stddef.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/threshold.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The paper's Table 4 value for (format, kind) exactly as printed ("-92.1886"), or NULL where the
 * paper prints none (only bf16/fp32 × subnormal/ftz/max are printed).
 */
ABL_API const char *abl_paper_table4_value(const abl_format *fmt, abl_tau_kind kind);

/*
 * Every threshold kind of each format, correctly rounded to `decimals` digits, with the paper's
 * printed value beside the kinds the paper prints.
 */
ABL_API abl_status abl_thresholds_report(const abl_format *formats, size_t nformats, int decimals, abl_report **out);

#ifdef __cplusplus
}
#endif
#endif
