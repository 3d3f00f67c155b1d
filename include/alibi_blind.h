/* alibi-blind: the public API. Data flow: slope schedule -> threshold engine -> blindness
 * distances and underflow fractions (and mitigated variants) -> report writer. */
#ifndef ALIBI_BLIND_H
#define ALIBI_BLIND_H

#define ABL_VERSION_STRING "0.1.0"

#include "abl/status.h"
#include "abl/decimal.h"
#include "abl/format.h"
#include "abl/threshold.h"
#include "abl/convention.h"
#include "abl/slope.h"
#include "abl/blindness.h"
#include "abl/fraction.h"
#include "abl/report.h"
#include "abl/analysis.h"
#include "abl/tables.h"
#include "abl/published.h"
#include "abl/paper.h"
#include "abl/reproduce.h"
#include "abl/verify.h"
#include "abl/pipeline.h"
#include "abl/simulate.h"

#endif
