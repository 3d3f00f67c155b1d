/* alibi-blind (private): FlashAttention-2's split-KV decode path as vLLM's fork runs it
 * (vllm-project/flash-attention@617264c1: flash_fwd_splitkv_kernel + flash_fwd_splitkv_combine_kernel),
 * modelled from source, not measured (docs/pipelines.md §3c, "vllm-flash with several splits"). */
#ifndef ABL_FLASH_SPLIT_H
#define ABL_FLASH_SPLIT_H

#include <stdint.h>
#include "kernel/abl_round.h"

/* The SMs of an H100/H200-class GPU (SXM: 132), the heuristic's default device. */
#define ABL_FLASH_SPLIT_SMS 132

/* num_splits_heuristic (flash_api.cpp): the smallest eligible split count whose wave efficiency is within
 * 85 % of the best, 1 when batch * heads * m-blocks already fills 80 % of num_sms. */
int abl_flash_split_heuristic(int batch_nheads_mblocks, int num_sms, int num_n_blocks, int max_splits);

/* kBlockN of run_mha_fwd_splitkv_dispatch for num_splits > 1: 256 (head dim <= 64), 128 (<= 128), 64. */
int abl_flash_split_block(int head_dim);

/* The num_splits flash_attn_with_kvcache runs with for a pipeline (field splits; 0: auto) on `heads` heads at
 * context n: auto is the heuristic for one decode row (rows = 1: batch 1, one m-block, 2 * 132 SMs, as
 * set_params_splitkv calls it) and 1 otherwise (vLLM's prefill goes through flash_attn_varlen_func, whose
 * split-KV path mha_varlen_fwd takes only without ALiBi). */
int abl_flash_split_count(const abl_pipeline *p, int heads, uint64_t n);

/* The split part of abl_sim_setup_init: for softmax=flash resolved to S >= 2 splits, the emulation's kind
 * becomes ABL_SOFTMAX_FLASH_SPLITKV (rows honoured, kBlockN of the split kernel); else nothing changes. */
abl_status abl_flash_split_setup(const abl_pipeline *p, int heads, abl_emul *em);

/* Row i (keys 0..i, logits x as flash forms them): the coefficient with which a unit value of each key
 * reaches the output after the merge, in the output dtype; the zeros among them. col: i + 1 floats of
 * scratch; wout, tvw optional (as abl_engine_row). */
uint64_t abl_flash_split_row(const abl_emul *e, uint64_t i, const float *x, float *col, float *wout, double *tvw);

/* Zero logits: each computed row (the last R) through abl_flash_split_row once: O(R N) per head. */
abl_status abl_flash_split_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);

#endif
