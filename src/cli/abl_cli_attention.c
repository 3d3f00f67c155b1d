/* alibi-blind: the attention direction at the CLI boundary (--attention), and what a bidirectional layer
 * can run on. */
#include "abl_cli.h"

int abl_cli_attention(const char *text, abl_attention *out)
{
    if (abl_attention_parse(text, out) != ABL_OK)
        return abl_cli_usage_error("--attention: unknown direction '%s' (known: causal, bidirectional)", text);
    return 0;
}

int abl_cli_encoder_refused(const char *cmdname, const abl_cli_model_choice *c)
{
    const abl_model_family *f = c->model != NULL ? c->model->family : c->spec.family;
    if (f == NULL || f->attention != ABL_ATTENTION_BIDIRECTIONAL)
        return 0;
    /* answered as a causal decoder it would be wrong: refused until this command models both horizons */
    return abl_cli_usage_error("%s: %s is an encoder (bidirectional attention, family %s); %s answers causal layers "
                               "only: use analyze, check or simulate", cmdname, c->model != NULL ? c->model->name
                               : "the config's model", f->name, cmdname);
}

int abl_cli_attention_kernel(abl_attention a, const abl_pipeline *p, int predict)
{
    if (a != ABL_ATTENTION_BIDIRECTIONAL)
        return 0;
    /* the bias must depend on |i - j| alone: +m j and -m (N - 1 - j) rely on the causal mask */
    if (p->bias_form != ABL_BIAS_RELATIVE && p->bias_form != ABL_BIAS_SYMMETRIC)
        return abl_cli_usage_error("--attention: bidirectional needs a bias of |i - j| (bias-form=symmetric); "
                                   "pipeline %s has bias-form=%s, which relies on a causal mask", p->preset,
                                   abl_bias_form_name(p->bias_form));
    if (p->softmax == ABL_SOFTMAX_GGML || p->softmax == ABL_SOFTMAX_GGML_FLASH)
        return abl_cli_usage_error("--attention: bidirectional layers are not modelled on pipeline %s (ggml's "
                                   "mask) yet", p->preset);
    if (predict && p->softmax != ABL_SOFTMAX_EAGER && p->softmax != ABL_SOFTMAX_FLASH)
        return abl_cli_usage_error("--attention: the bidirectional predictor models eager and flash kernels; "
                                   "pipeline %s runs with simulate (without --predict)", p->preset);
    return 0;
}
