/* alibi-blind (private): llama.cpp's CUDA soft_max_f32 (softmax=ggml-cuda, preset llamacpp-cuda; flash
 * attention off), modelled from source, not measured (docs/pipelines.md §3c): the block size and the
 * zero-logit predictor of every row of a prompt. The row itself is abl_engine_row's (abl_engines.c). */
#ifndef ABL_ENGINES_GGML_CUDA_H
#define ABL_ENGINES_GGML_CUDA_H

#include <stdint.h>
#include "kernel/abl_round.h"

/* soft_max_f32_cuda's block: nth = 32, doubled while nth < ncols and nth < CUDA_SOFT_MAX_BLOCK_SIZE (1024);
 * ncols is the row length (every query row spans the n keys, the causal part masked with -inf). */
int abl_ggml_cuda_threads(uint64_t ncols);

/* Zero logits, the rows the pipeline computes: weight zeros and influence zeros (P rounded into pv-dtype).
 * Each row's zeros are a suffix in distance (e = __expf(-slope d) never grows with d); its threshold follows
 * from 1/S, and S from a certified interval around the exact sum of the e (fp32 summation error bound for
 * the thread order); a row whose interval leaves the threshold open is run through the kernel model. */
abl_status abl_ggml_cuda_predict_head(const abl_sim_setup *s, int h, abl_pred_head *out);

#endif
