/* alibi-blind: the report of simulate --backward (spec §15): one row per head. */
#include <stdlib.h>
#include <string.h>
#include "abl_internal.h"
#include "abl/kernel/backward.h"

#define BTRY(x)                     \
    do {                            \
        abl_status st_ = (x);       \
        if (st_ != ABL_OK)          \
            return st_;             \
    } while (0)

static abl_status take(abl_report *r, char *text, const char *json_literal)
{
    abl_status st = text == NULL ? ABL_ERR_NO_MEMORY : abl_report_cell(r, text, json_literal ? json_literal : text, NULL);
    free(text);
    return st;
}

static abl_status u64_cell(abl_report *r, uint64_t v)
{
    return take(r, abl_strf("%llu", (unsigned long long)v), NULL);
}

static abl_status dist_cell(abl_report *r, int64_t d)
{
    if (d < 0)
        return abl_report_cell(r, "none", "null", NULL);
    return take(r, abl_strf("%lld", (long long)d), NULL);
}

static abl_status meta_own(abl_report *r, const char *key, const char *label, char *text, char *json)
{
    abl_status st = text && json ? abl_report_meta(r, key, label, text, json) : ABL_ERR_NO_MEMORY;
    free(text);
    free(json);
    return st;
}

static abl_status backward_meta(const abl_simulate_config *cfg, const abl_simulation *sim, const abl_backward *b,
                                abl_report *r)
{
    BTRY(abl_report_meta(r, "pipeline", "pipeline", cfg->pipeline.preset, NULL));
    BTRY(abl_report_meta(r, "dtype", "training dtype (dS)", cfg->pipeline.output_dtype.name, NULL));
    /* one entry per line: clang's -Wstring-concatenation takes a wrapped literal beside others for a
     * missing comma */
    static const char *const kind_text[4] = {
        "upcast: fp32 P saved by autograd, D in fp32",
        "native: P as stored, D stored in the dtype (CPU kernel)",
        ("memeff: P recomputed from the log-sum-exp and rounded into the dtype, dS x scale rounded (CUDA "
         "memory-efficient kernel: modelled from source, not measured)"),
        ("flash: fp32 P recomputed from the log-sum-exp (exp2, flushed below 2^-126), dS rounded unscaled "
         "(FlashAttention-2 kernel: modelled from source, not measured)"),
    };
    static const char *const kind_json[4] = {"\"upcast\"", "\"native\"", "\"memeff\"", "\"flash\""};
    BTRY(abl_report_meta(r, "backward_kind", "backward", kind_text[b->kind], kind_json[b->kind]));
    BTRY(meta_own(r, "context", "context N", abl_strf("%llu", (unsigned long long)cfg->context),
                  abl_strf("%llu", (unsigned long long)cfg->context)));
    if (sim != NULL)
        BTRY(abl_report_meta(r, "slopes", "slopes", sim->schedule.spec, NULL));
    if (b->from_file) {
        BTRY(abl_report_meta(r, "upstream", "upstream", "dP from --grad-weights", "\"file\""));
        BTRY(meta_own(r, "loss_scale_log2", "loss scale", abl_strf("2^%ld", b->log2_scale),
                      abl_strf("%ld", b->log2_scale)));
    } else {
        BTRY(abl_report_meta(r, "upstream", "upstream", "|dP - D| x loss scale as below (unit upstream: 1)",
                             "\"bound\""));
        BTRY(meta_own(r, "upstream_log2", "|dP - D| x loss scale", abl_strf("2^%ld", b->log2_upstream),
                      abl_strf("%ld", b->log2_upstream)));
    }
    return abl_report_meta(r, "mode", "mode", b->predicted ? "prediction (zero logits)" : "simulation", NULL);
}

static abl_status backward_columns(const abl_simulation *sim, const abl_backward *pred, abl_report *r)
{
    BTRY(abl_report_column(r, "head", "head", ABL_ALIGN_RIGHT));
    if (sim != NULL)
        BTRY(abl_report_column(r, "forward_first_blind", "P: first 0 d", ABL_ALIGN_RIGHT));
    BTRY(abl_report_column(r, "first_blind", "dS: first 0 d", ABL_ALIGN_RIGHT));
    BTRY(abl_report_column(r, "row_zeros", "dS row zeros", ABL_ALIGN_RIGHT));
    BTRY(abl_report_column(r, "matrix_zeros", "dS matrix zeros", ABL_ALIGN_RIGHT));
    BTRY(abl_report_column(r, "gradient_only_row", "only dS: row", ABL_ALIGN_RIGHT));
    BTRY(abl_report_column(r, "gradient_only_matrix", "only dS: matrix", ABL_ALIGN_RIGHT));
    if (pred != NULL) {
        BTRY(abl_report_column(r, "predicted_first_blind", "pred. first 0 d", ABL_ALIGN_RIGHT));
        BTRY(abl_report_column(r, "predicted_matrix_zeros", "pred. matrix zeros", ABL_ALIGN_RIGHT));
        BTRY(abl_report_column(r, "agrees", "agrees", ABL_ALIGN_LEFT));
    }
    return ABL_OK;
}

static int head_agrees(const abl_bwd_head *a, const abl_bwd_head *b)
{
    return a->first_blind == b->first_blind && a->row_zeros == b->row_zeros && a->matrix_zeros == b->matrix_zeros;
}

static abl_status backward_row(const abl_simulation *sim, const abl_backward *b, const abl_backward *pred, int h,
                               abl_report *r)
{
    const abl_bwd_head *x = &b->results[h];
    BTRY(abl_report_row(r));
    BTRY(take(r, abl_strf("%d", h + 1), NULL));
    if (sim != NULL)
        BTRY(dist_cell(r, x->fwd_first_blind));
    BTRY(dist_cell(r, x->first_blind));
    BTRY(u64_cell(r, x->row_zeros));
    BTRY(u64_cell(r, x->matrix_zeros));
    BTRY(u64_cell(r, x->only_row));
    BTRY(u64_cell(r, x->only_matrix));
    if (pred != NULL) {
        BTRY(dist_cell(r, pred->results[h].first_blind));
        BTRY(u64_cell(r, pred->results[h].matrix_zeros));
        int ok = head_agrees(x, &pred->results[h]);
        BTRY(abl_report_cell(r, ok ? "yes" : "NO", ok ? "true" : "false", NULL));
    }
    return ABL_OK;
}

static abl_status backward_summary(const abl_backward *b, abl_report *r)
{
    char *t[4] = {abl_strf("%llu", (unsigned long long)b->row_zeros),
                  abl_strf("%llu", (unsigned long long)b->matrix_zeros),
                  abl_strf("%llu", (unsigned long long)b->only_row),
                  abl_strf("%llu", (unsigned long long)b->only_matrix)};
    static const char *const keys[4] = {"row_zeros", "matrix_zeros", "gradient_only_row", "gradient_only_matrix"};
    static const char *const labels[4] = {"zero dS in the last rows", "zero dS in the matrices",
                                    "last rows: dS = 0, weight not 0", "matrices: dS = 0, weight not 0"};
    abl_status st = ABL_OK;
    for (int k = 0; k < 4; k++) {
        if (st == ABL_OK)
            st = t[k] == NULL ? ABL_ERR_NO_MEMORY : abl_report_summary(r, keys[k], labels[k], t[k], t[k]);
    }
    for (int k = 0; k < 4; k++)
        free(t[k]);
    return st;
}

static abl_status backward_fill(const abl_simulate_config *cfg, const abl_simulation *sim, const abl_backward *b,
                                const abl_backward *pred, abl_report *r)
{
    BTRY(backward_meta(cfg, sim, b, r));
    BTRY(backward_columns(sim, pred, r));
    for (int h = 0; h < b->heads; h++)
        BTRY(backward_row(sim, b, pred, h, r));
    BTRY(backward_summary(b, r));
    if (b->kind == ABL_BACKWARD_MEMEFF)
        return abl_report_note(r, "dS = P (dP - D) x scale rounded into the training dtype, P recomputed from the "
                                  "forward's log-sum-exp, as the memory-efficient SDPA backward does: modelled from "
                                  "source, not measured (docs/pipelines.md §9); only dS: keys whose gradient is 0 "
                                  "while their forward weight is not");
    if (b->kind == ABL_BACKWARD_FLASH)
        return abl_report_note(r, "dS = P (dP - D) in fp32 (flushed below 2^-126) rounded into the training dtype, P "
                                  "recomputed in fp32 from the forward's log-sum-exp, as FlashAttention-2's backward "
                                  "does: modelled from source, not measured (docs/pipelines.md §9); only dS: keys "
                                  "whose gradient is 0 while their forward weight is not");
    return abl_report_note(r, "dS = P (dP - D) rounded into the training dtype as PyTorch's eager softmax backward "
                              "does (spec §15); only dS: keys whose gradient is 0 while their weight is not");
}

abl_status abl_backward_report(const abl_simulate_config *cfg, const abl_simulation *sim, const abl_backward *b,
                               const abl_backward *pred, abl_report **out)
{
    if (cfg == NULL || b == NULL || out == NULL || (pred != NULL && pred->heads != b->heads) ||
        (sim != NULL && sim->heads != b->heads))
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("simulate --backward: zero gradients of the scores", "backward");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = backward_fill(cfg, sim, b, pred, r);
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}
