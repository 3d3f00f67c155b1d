/* alibi-blind: conventions (spec §4): which tau, which comparison, which rounding of delta. */
#ifndef ABL_CONVENTION_H
#define ABL_CONVENTION_H

#include "abl/core/export.h"

#include "abl/core/status.h"
#include "abl/core/threshold.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum abl_convention {
    ABL_CONV_PAPER = 0,     /* ftz kind, exponent <= tau, delta rounded to nearest (paper Tables 1, 8) */
    ABL_CONV_FTZ = 1,       /* ftz kind, exponent <  tau, exact delta (flush-to-zero kernels) */
    ABL_CONV_IEEE = 2,      /* rn-zero kind, exponent <= tau, exact delta (one RNE rounding) */
    ABL_CONV_SUBNORMAL = 3, /* subnormal kind, exponent <= tau, exact delta (paper's text tau_u) */
    ABL_CONV_COUNT = 4
} abl_convention;

ABL_API const char *abl_convention_name(abl_convention conv);
ABL_API abl_status abl_convention_parse(const char *text, abl_convention *out);
ABL_API abl_tau_kind abl_convention_tau_kind(abl_convention conv);
/* 1 when the head is blind only for exponent < tau (flush-to-zero keeps exp(tau) = smallest normal). */
ABL_API int abl_convention_strict(abl_convention conv);
/* 1 when delta is the nearest integer of the crossing point rather than the exact first blind distance. */
ABL_API int abl_convention_nearest(abl_convention conv);

#ifdef __cplusplus
}
#endif
#endif
