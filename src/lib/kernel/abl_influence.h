/* alibi-blind (private): the influence rule (docs/method.md, "Influence"). A key's weight w can be
 * non-zero while its term in P.V is zero: the kernel rounds P into pv-dtype before it multiplies V and
 * adds the products in pv-accumulate. For unit-scale values (v = 1, so the product is the rounded P
 * itself) the key has lost its influence exactly when pv-accumulate(pv-dtype(output-dtype(p))) = 0, p
 * the fp32 weight before the output rounding. Every rounding is monotone, so that holds exactly for
 * p <= a threshold, computed once per pipeline. Absorption by a running sum is not counted (it depends
 * on the values' signs and the kernel's order): influence-zero is what no value vector can recover. */
#ifndef ABL_INFLUENCE_H
#define ABL_INFLUENCE_H

#include "kernel/abl_round.h"

/* Sets e->infl_max (the largest fp32 p whose influence is zero) and e->infl_active (1 when some
 * non-zero weight has zero influence) from p's pv-dtype and pv-accumulate; sdpa-efficient, sdpa-cudnn
 * and ggml-flash, whose emulated weight already is the coefficient of V, keep the weight rule.
 * e->out must be set. */
abl_status abl_influence_init(const abl_pipeline *p, abl_emul *e);

/* The term of a weight (fp32 before or after the output rounding) as P.V adds it, for v = 1. */
float abl_influence_term(const abl_emul *e, float p);

/* Whether a weight (fp32, before or after the output rounding, >= 0) has lost its influence. */
static inline int abl_influence_zero(const abl_emul *e, float p)
{
    return p <= e->infl_max;
}

/* Influence-zero keys among w[0..count-1] (weights as they come out); *first_d (optional) the smallest
 * distance count - 1 - j of one, -1 when none. */
uint64_t abl_influence_count(const abl_emul *e, const float *w, uint64_t count, int64_t *first_d);

#endif
