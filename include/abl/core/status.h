/* alibi-blind: status codes shared by every module. Codes are pinned: never renumber. */
#ifndef ABL_STATUS_H
#define ABL_STATUS_H

#include "abl/core/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum abl_status {
    ABL_OK = 0,
    ABL_ERR_INVALID_ARGUMENT = 1,  /* NULL pointer, value out of the documented range */
    ABL_ERR_UNKNOWN_DTYPE = 2,     /* format name not recognised */
    ABL_ERR_BAD_NUMBER = 3,        /* malformed or non-finite number */
    ABL_ERR_BAD_SLOPE_SPEC = 4,    /* slope schedule text not understood */
    ABL_ERR_BAD_SLOPE = 5,         /* slope or target <= 0, NaN or infinite */
    ABL_ERR_HEADS_RANGE = 6,       /* H outside 1..ABL_MAX_HEADS, or list length != H */
    ABL_ERR_CONTEXT_RANGE = 7,     /* context N outside 1..ABL_MAX_CONTEXT */
    ABL_ERR_UNKNOWN_CONVENTION = 8,
    ABL_ERR_UNKNOWN_OUTPUT = 9,    /* output format name not recognised */
    ABL_ERR_NO_MEMORY = 10,
    ABL_ERR_IO = 11,
    ABL_ERR_PARSE = 12,            /* malformed input file */
    ABL_ERR_DEGENERATE = 13,       /* e.g. fitting slopes to tau = 0 (fp4/fp6 ftz kind) */
    ABL_ERR_UNSUPPORTED = 14,      /* combination the engine does not model */
    ABL_ERR_MISMATCH = 15,         /* a verification or reproduction found a difference */
    ABL_ERR_SLOPE_CALC = 16        /* the pipeline's slope-calc has no formula for this schedule */
} abl_status;

/*
 * Error detail comes back one way: the status, and, from a function that takes `char **msg`, a message
 * malloc'd whole into *msg (one line, any length; the caller frees it; NULL on success, when msg is
 * NULL, or when even the message could not be allocated). No function writes into a caller's buffer.
 * abl_status_message is the sentence for a status alone; never NULL.
 */
ABL_API const char *abl_status_message(abl_status status);

#ifdef __cplusplus
}
#endif
#endif
