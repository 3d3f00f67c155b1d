/* alibi-blind: the one-page HTML report of a layer: the model, the kernel, the per-head table, the
 * fractions and the pictures (inline SVG drawn by plot.h), with no external asset. */
#ifndef ABL_HTML_H
#define ABL_HTML_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "abl/core/status.h"
#include "abl/core/progress.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"
#include "abl/model/catalogue.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abl_html_config {
    const abl_model *model;    /* NULL: a layer given by heads/slopes/format */
    abl_format format;
    abl_convention convention;
    int heads;                 /* 0: from a slopes:/targets: list */
    const char *slopes;        /* NULL: press */
    uint64_t context;          /* N */
    const char *pipeline;      /* the kernel (NULL: the model's default code path, else eager) */
    int threads;               /* blindmap emulation; 0: all cores */
    const char *config;        /* the config.json the layer was read from (NULL: none); printed escaped */
    const char *model_type;    /* its model_type (NULL or "": none) */
} abl_html_config;

/* Largest N at which the report predicts each head's first blind distance through the kernel, and
 * the N of its zero map (min(N, this)). */
#define ABL_HTML_PREDICT_MAX_CONTEXT 65536
#define ABL_HTML_BLINDMAP_CONTEXT 2048

/*
 * The page, into a malloc'd buffer. ABL_ERR_UNSUPPORTED (*msg says why) for a pipeline that cannot
 * be parsed; slope and head errors as abl_analysis_run returns them.
 */
ABL_API abl_status abl_html_report(const abl_html_config *c, char **buf, size_t *len, char **msg);
/* Nominal cost of the page's kernel work: the predictor's first blind distances (N up to
 * ABL_HTML_PREDICT_MAX_CONTEXT), the design section's slope search, the fraction plot's kernel curve and
 * the zero map's emulation. ABL_ERR_UNSUPPORTED for a pipeline that does not parse. */
ABL_API abl_status abl_html_report_estimate(const abl_html_config *c, abl_cost *out);

/* Append s to f with &, <, >, " and ' escaped. */
ABL_API void abl_html_escape(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif
