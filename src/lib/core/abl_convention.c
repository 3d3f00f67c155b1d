/* alibi-blind: conventions (spec §4). */
#include <strings.h>
#include "abl/core/convention.h"

static const struct {
    const char *name;
    abl_tau_kind kind;
    int strict, nearest;
} conventions[ABL_CONV_COUNT] = {
    [ABL_CONV_PAPER] = {"paper", ABL_TAU_FTZ, 0, 1},
    /* Flush-to-zero keeps exp(tau_ftz) = smallest normal, so only exponents strictly below vanish. */
    [ABL_CONV_FTZ] = {"ftz", ABL_TAU_FTZ, 1, 0},
    [ABL_CONV_IEEE] = {"ieee", ABL_TAU_RN_ZERO, 0, 0},
    [ABL_CONV_SUBNORMAL] = {"subnormal", ABL_TAU_SUBNORMAL, 0, 0},
};

const char *abl_convention_name(abl_convention conv)
{
    return (unsigned)conv < ABL_CONV_COUNT ? conventions[conv].name : "unknown";
}

abl_status abl_convention_parse(const char *text, abl_convention *out)
{
    if (text == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < ABL_CONV_COUNT; i++) {
        if (strcasecmp(text, conventions[i].name) == 0) {
            *out = (abl_convention)i;
            return ABL_OK;
        }
    }
    return ABL_ERR_UNKNOWN_CONVENTION;
}

abl_tau_kind abl_convention_tau_kind(abl_convention conv)
{
    return (unsigned)conv < ABL_CONV_COUNT ? conventions[conv].kind : ABL_TAU_FTZ;
}

int abl_convention_strict(abl_convention conv)
{
    return (unsigned)conv < ABL_CONV_COUNT ? conventions[conv].strict : 0;
}

int abl_convention_nearest(abl_convention conv)
{
    return (unsigned)conv < ABL_CONV_COUNT ? conventions[conv].nearest : 0;
}
