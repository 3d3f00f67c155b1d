/* alibi-blind: the bidirectional (encoder) emulation and predictor (abl_simulate_bidir.c), called from
 * abl_simulate_run and abl_predict_run when the configuration's attention is bidirectional. */
#ifndef ABL_SIMULATE_BIDIR_H
#define ABL_SIMULATE_BIDIR_H

#include "abl/kernel/simulate.h"
#include "kernel/abl_round.h"

/* The middle row, floor((N - 1) / 2). */
uint64_t abl_bidir_mid(uint64_t n);
/* ABL_ERR_UNSUPPORTED unless the bias depends on |i - j| only (relative/symmetric) and the kernel is not a
 * ggml kind. */
abl_status abl_bidir_check(const abl_sim_setup *s);
/* abl_simulate_run for a bidirectional configuration (out zeroed here). */
abl_status abl_simulate_bidir_run(const abl_simulate_config *cfg, abl_simulation *out);
/* One head's zero-logit prediction (eager, flash, triton-lse, ggml soft_max, ggml flash attention;
 * ABL_ERR_UNSUPPORTED otherwise). */
abl_status abl_predict_bidir_head(const abl_sim_setup *s, int h, abl_pred_head *out);
/* Every head (out zeroed by the caller; freed on failure). */
abl_status abl_predict_bidir_run(const abl_sim_setup *s, abl_prediction *out);

/* The report's bidirectional lines: the attention meta line; the middle rows' zeros and fraction. */
abl_status abl_bidir_report_meta(abl_report *r);
abl_status abl_bidir_report_summary(abl_report *r, uint64_t mid_zeros, uint64_t heads, uint64_t n);
/* abl_simulate.c's fraction cells (matrix: 0 the rows, 1 the causal matrices, 2 the N x N matrices). */
void abl_sim_fraction_cells(uint64_t count, uint64_t heads, uint64_t n, int matrix, char **text, char **json);

#endif
