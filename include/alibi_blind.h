/* alibi-blind: the public API. Data flow: slope schedule -> threshold engine -> blindness
 * distances and underflow fractions (and mitigated variants) -> report writer. */
#ifndef ALIBI_BLIND_H
#define ALIBI_BLIND_H

#define ABL_VERSION_STRING "0.2.0"

/* core: slope schedule -> threshold engine -> blindness distances, fractions, mitigations */
#include "abl/core/status.h"
#include "abl/core/decimal.h"
#include "abl/core/format.h"
#include "abl/core/threshold.h"
#include "abl/core/convention.h"
#include "abl/core/slope.h"
#include "abl/core/blindness.h"
#include "abl/core/fraction.h"
#include "abl/core/progress.h"
#include "abl/core/attention.h"
/* analysis: one layer analysed end to end (mitigations, weight level) and its report */
#include "abl/analysis/analysis.h"
#include "abl/analysis/bidirectional.h"
#include "abl/analysis/gradient.h"
/* kernel: real attention pipelines (rounding, simulation, prediction, verification) */
#include "abl/kernel/pipeline.h"
#include "abl/kernel/simulate.h"
#include "abl/kernel/backward.h"
#include "abl/kernel/npy.h"
#include "abl/kernel/verify.h"
/* paper: the paper's tables, published values and their reproduction */
#include "abl/paper/tables.h"
#include "abl/paper/published.h"
#include "abl/paper/paper.h"
#include "abl/paper/reproduce.h"
/* model: the catalogue of ALiBi models and config.json */
#include "abl/model/catalogue.h"
#include "abl/model/config.h"
#include "abl/model/compare.h"
#include "abl/model/layer.h"
#include "abl/model/setup.h"
#include "abl/design/design.h"
/* rope: rotary position embeddings as code computes them, against the exact rotation */
#include "abl/rope/rope.h"
/* report: one report model, rendered as text, markdown, csv, json, latex; pictures (PLplot) */
#include "abl/report/report.h"
#include "abl/report/plot.h"
/* compose: analyses run and composed into pictures and the HTML page */
#include "abl/compose/plot_kinds.h"
#include "abl/compose/html.h"
#include "abl/compose/flat.h"

#endif
