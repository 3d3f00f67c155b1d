/* alibi-blind (private): design's gradient criterion (design --keep gradient, spec §15). A head is sighted
 * when no key of the N x N matrix gets an exactly-zero rounded gradient dS = P (dP - D) for the bound
 * |dP - D| x loss scale = 2^j, decided by the zero-logit gradient predictor (abl_backward_predict) and
 * checked by the backward emulation (abl_backward_run). Why the same search works: with zero logits a
 * zero dS anywhere in the matrix is one in the last row (the design kernel's argument for the weights,
 * abl_design_kernel.c, carries over since dS = 0 is a threshold on P), and a steeper slope lowers every
 * P of the last row but the diagonal. */
#ifndef ABL_DESIGN_GRADIENT_H
#define ABL_DESIGN_GRADIENT_H

#include "abl/design/design.h"
#include "abl/kernel/simulate.h"

/* *zeros = 1 when the predictor finds a zero dS in s's matrix (s: one slope at some context). */
abl_status abl_design_gradient_zeros(const abl_design_config *c, const abl_simulate_config *s, int *zeros);

/* Every head of s without a zero dS: the predictor and, when s->context <= max_simulate, the backward
 * emulation (*simulated = 1). ABL_ERR_MISMATCH when a head has one. */
abl_status abl_design_gradient_verify(const abl_design_config *c, const abl_simulate_config *s, uint64_t max_simulate,
                                      int *simulated);

#endif
