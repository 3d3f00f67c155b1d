/* alibi-blind: one short message per status code (shown by the CLI after "error: "). */
#include "abl/core/status.h"

const char *abl_status_message(abl_status status)
{
    /* A switch rather than a table: the compiler warns (-Wswitch) when a new code is added
     * to the enum without a message here. */
    switch (status) {
    case ABL_OK: return "success";
    case ABL_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ABL_ERR_UNKNOWN_DTYPE: return "unknown floating-point format";
    case ABL_ERR_BAD_NUMBER: return "malformed or non-finite number";
    case ABL_ERR_BAD_SLOPE_SPEC: return "slope schedule not understood";
    case ABL_ERR_BAD_SLOPE: return "slope or target must be positive and finite";
    case ABL_ERR_HEADS_RANGE: return "number of heads out of range or list length mismatch";
    case ABL_ERR_CONTEXT_RANGE: return "context length out of range";
    case ABL_ERR_UNKNOWN_CONVENTION: return "unknown convention";
    case ABL_ERR_UNKNOWN_OUTPUT: return "unknown output format";
    case ABL_ERR_NO_MEMORY: return "out of memory";
    case ABL_ERR_IO: return "input/output error";
    case ABL_ERR_PARSE: return "malformed input file";
    case ABL_ERR_DEGENERATE: return "degenerate case (e.g. a zero threshold)";
    case ABL_ERR_UNSUPPORTED: return "combination not supported";
    case ABL_ERR_MISMATCH: return "a difference was found";
    case ABL_ERR_SLOPE_CALC: return "the pipeline's slope-calc has no formula for this schedule";
    }
    return "unknown status";
}
