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
    /* ggml (llama.cpp's jina-bert-v2): soft_max (abl_ggml_bidir.c) and flash attention (abl_ggml_fa_bidir.c) */
    if (predict && p->softmax != ABL_SOFTMAX_EAGER && p->softmax != ABL_SOFTMAX_FLASH && p->softmax != ABL_SOFTMAX_GGML &&
        p->softmax != ABL_SOFTMAX_GGML_FLASH && p->softmax != ABL_SOFTMAX_TRITON_LSE)
        return abl_cli_usage_error("--attention: the bidirectional predictor models eager, flash, ggml soft_max, "
                                   "ggml flash attention and triton-lse kernels; pipeline %s runs with simulate "
                                   "(without --predict)", p->preset);
    return 0;
}

abl_attention abl_cli_model_attention(const abl_cli_model_choice *c)
{
    const abl_model_family *f = c->model != NULL ? c->model->family : c->config != NULL ? c->spec.family : NULL;
    return f != NULL ? f->attention : ABL_ATTENTION_CAUSAL;
}

int abl_cli_choice_attention(const abl_cli_cmd *cmd, const char **v, const abl_cli_model_choice *c, abl_attention *out)
{
    *out = abl_cli_model_attention(c);
    const char *o = abl_cli_arg(cmd, v, ABL_OPT_ATTENTION);
    return o != NULL ? abl_cli_attention(o, out) : 0;
}

int abl_cli_design_attention_options(const abl_cli_cmd *cmd, const char **v, abl_attention a)
{
    if (a != ABL_ATTENTION_BIDIRECTIONAL)
        return 0;
    /* both are decided on a causal last row (abl_design_clamp_find, the budget's margin): in a bidirectional
     * layer the middle row's sum is larger than the end row's, so that row alone does not decide */
    if (abl_cli_arg(cmd, v, ABL_OPT_CLAMP) != NULL)
        return abl_cli_usage_error("--clamp: not decided for a bidirectional layer (the clamp is checked on a causal "
                                   "last row); drop --clamp or use --attention causal");
    if (abl_cli_arg(cmd, v, ABL_OPT_LOGIT_BUDGET) != NULL)
        return abl_cli_usage_error("--logit-budget: not decided for a bidirectional layer (the budget is checked on a "
                                   "causal last row); drop --logit-budget or use --attention causal");
    return 0;
}

