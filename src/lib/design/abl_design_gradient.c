/* alibi-blind: design's gradient criterion (abl_design_gradient.h; design --keep gradient, spec §15). */
#include <string.h>
#include "abl/kernel/backward.h"
#include "design/abl_design_gradient.h"

static void backward_config(const abl_design_config *c, abl_backward_config *b)
{
    memset(b, 0, sizeof *b);
    b->log2_upstream = c->log2_upstream; /* no dP file: the bound times the loss scale */
}

abl_status abl_design_gradient_zeros(const abl_design_config *c, const abl_simulate_config *s, int *zeros)
{
    /* a budget is a weight-level claim on one key's logit; its gradient twin is not decided here */
    if (c->budget != NULL && mpq_sgn(c->budget) != 0)
        return ABL_ERR_UNSUPPORTED;
    abl_backward_config b;
    backward_config(c, &b);
    abl_backward p;
    abl_status st = abl_backward_predict(s, &b, &p);
    if (st == ABL_OK)
        *zeros = p.matrix_zeros != 0;
    abl_backward_free(&p);
    return st;
}

abl_status abl_design_gradient_verify(const abl_design_config *c, const abl_simulate_config *s, uint64_t max_simulate,
                                      int *simulated)
{
    int zeros = 0;
    abl_status st = abl_design_gradient_zeros(c, s, &zeros);
    if (st == ABL_OK && zeros)
        st = ABL_ERR_MISMATCH;
    if (st != ABL_OK || s->context > max_simulate)
        return st;
    abl_backward_config b;
    backward_config(c, &b);
    abl_simulation sim;
    abl_backward e;
    memset(&e, 0, sizeof e);
    st = abl_backward_run(s, &b, &sim, &e);
    if (st == ABL_OK) {
        if (e.matrix_zeros != 0)
            st = ABL_ERR_MISMATCH;
        if (simulated != NULL)
            *simulated = 1;
    }
    abl_simulation_free(&sim);
    abl_backward_free(&e);
    return st;
}
