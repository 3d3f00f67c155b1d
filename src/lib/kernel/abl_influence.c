/* alibi-blind: the influence rule (abl_influence.h; docs/method.md "Influence"). */
#include <string.h>
#include "kernel/abl_influence.h"
#include "kernel/abl_kernel_internal.h"

float abl_influence_term(const abl_emul *e, float p)
{
    float w = abl_fp_round32(&e->out, p);
    if (!e->infl_active)
        return w;
    return abl_fp_round32(&e->pv_acc, abl_fp_round32(&e->pv, w));
}

/* The largest non-negative binary32 p with term(p) = 0: term is monotone and term(0) = 0, so a
 * bisection over the bit patterns of the non-negative finite floats (ordered as integers) finds it. */
static float zero_threshold(const abl_emul *e)
{
    uint32_t lo = 0, hi = 0x7f800000u;   /* term(lo) = 0; hi: +inf, not zero */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        float p;
        memcpy(&p, &mid, sizeof p);
        if (abl_influence_term(e, p) == 0.0f)
            lo = mid;
        else
            hi = mid;
    }
    float t;
    memcpy(&t, &lo, sizeof t);
    return t;
}

abl_status abl_influence_init(const abl_pipeline *p, abl_emul *e)
{
    e->infl_active = 0;
    /* the kinds that emulate P.V inside the kernel: their weight is already the coefficient of V (the
     * influence) */
    if (!abl_pipeline_owns_pv(p)) {
        abl_status st;
        if ((st = abl_fp_init(&p->pv_dtype, &e->pv)) != ABL_OK || (st = abl_fp_init(&p->pv_accumulate, &e->pv_acc)) != ABL_OK)
            return st;
        e->infl_active = 1;
    }
    e->infl_max = zero_threshold(e);
    /* active only when a weight the output dtype keeps (its smallest positive value) can vanish */
    e->infl_active = e->infl_active && abl_influence_zero(e, (float)e->out.min_sub);
    if (!e->infl_active)
        e->infl_max = zero_threshold(e);
    return ABL_OK;
}

uint64_t abl_influence_count(const abl_emul *e, const float *w, uint64_t count, int64_t *first_d)
{
    uint64_t zeros = 0;
    int64_t first = -1;
    for (uint64_t j = count; j-- > 0;) {
        if (abl_influence_zero(e, w[j])) {
            zeros++;
            if (first < 0)
                first = (int64_t)(count - 1 - j);
        }
    }
    if (first_d != NULL)
        *first_d = first;
    return zeros;
}
