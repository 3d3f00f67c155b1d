/* alibi-blind: design's gradient criterion (abl_design_gradient.h; design --keep gradient, spec §15). */
#include <string.h>
#include "abl/kernel/backward.h"
#include "design/abl_design_gradient.h"

const char *abl_design_gradient_refusal(const abl_pipeline *p)
{
    if (p == NULL)
        return "no pipeline";
    if (p->softmax != ABL_SOFTMAX_EAGER && p->softmax != ABL_SOFTMAX_SDPA_EFFICIENT && p->softmax != ABL_SOFTMAX_FLASH)
        return "its zero-logit predictor models the eager softmax backward (PyTorch's _softmax_backward_data), "
               "the memory-efficient SDPA one (sdpa-efficient) and FlashAttention-2's (flash2); this softmax has "
               "none (spec §15)";
    if (p->softmax == ABL_SOFTMAX_FLASH && p->splits >= 2)
        return "FlashAttention-2's backward is modelled without split-KV (splits >= 2 is a decode path, spec §15)";
    return NULL;
}

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
