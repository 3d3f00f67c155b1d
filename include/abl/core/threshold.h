/* alibi-blind: the threshold engine (spec §3). Every value comes from MPFR, correctly rounded. */
#ifndef ABL_THRESHOLD_H
#define ABL_THRESHOLD_H

#include "abl/core/export.h"

#include <stddef.h>
#include <mpfr.h>
#include "abl/core/format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum abl_tau_kind {
    ABL_TAU_SUBNORMAL = 0,   /* ln(smallest subnormal)                  = (emin-p+1) ln 2 */
    ABL_TAU_RN_ZERO = 1,     /* ln(smallest subnormal / 2)              = (emin-p) ln 2   */
    ABL_TAU_FTZ = 2,         /* ln(smallest normal)                     = emin ln 2       */
    ABL_TAU_MAX = 3,         /* ln(largest finite)                                        */
    ABL_TAU_RN_OVERFLOW = 4, /* ln(largest finite + ulp(largest finite)/2)               */
    ABL_TAU_KIND_COUNT = 5
} abl_tau_kind;

/* "subnormal", "rn-zero", "ftz", "max", "rn-overflow". */
ABL_API const char *abl_tau_kind_name(abl_tau_kind kind);

/* The paper's Table 4 name ("underflow", "denorm", "overflow"), or NULL where the paper has none. */
ABL_API const char *abl_tau_kind_paper_name(abl_tau_kind kind);

/* The paper's Table 4 symbol in UTF-8 ("τu", "τd", "τo"), or NULL. */
ABL_API const char *abl_tau_kind_paper_symbol(abl_tau_kind kind);

/* Parse a kind name (as printed by abl_tau_kind_name). */
ABL_API abl_status abl_tau_kind_parse(const char *text, abl_tau_kind *out);

/*
 * The underflow kinds are integer multiples of ln 2: tau = k * ln 2. Returns k for
 * SUBNORMAL, RN_ZERO and FTZ; ABL_ERR_INVALID_ARGUMENT for MAX and RN_OVERFLOW.
 */
ABL_API abl_status abl_threshold_log2_multiple(const abl_format *fmt, abl_tau_kind kind, long *k);

/* tau rounded to rop's precision in direction rnd (a single, correct rounding). */
ABL_API abl_status abl_threshold_mpfr(mpfr_t rop, const abl_format *fmt, abl_tau_kind kind, mpfr_rnd_t rnd);

/* tau to binary64, round-to-nearest. */
ABL_API double abl_threshold_double(const abl_format *fmt, abl_tau_kind kind);

/*
 * tau as fixed-point decimal text with `decimals` digits after the point (0..1000), correctly
 * rounded to nearest (Ziv loop: the digits are certain, not an artefact of working precision), malloc'd
 * into *out (the caller's to free; untouched on error).
 */
ABL_API abl_status abl_threshold_string(const abl_format *fmt, abl_tau_kind kind, int decimals, char **out);

#ifdef __cplusplus
}
#endif
#endif
