/* alibi-blind: gradient blindness in closed form (spec §15, docs/method.md §7): where the rounded
 * gradient of a key's score, dS = P * (dP - D), is exactly 0 in the training dtype. */
#ifndef ABL_GRADIENT_H
#define ABL_GRADIENT_H

#include "abl/core/export.h"

#include <gmp.h>
#include "abl/core/status.h"
#include "abl/analysis/analysis.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GradScaler's default initial scale (torch.cuda.amp.GradScaler(init_scale=2.**16)): --loss-scale dynamic. */
#define ABL_GRADIENT_DYNAMIC_LOG2 16
/* The closed form takes upstream magnitudes 2^j with |j| at most this. */
#define ABL_GRADIENT_LOG2_MAX 1000

/*
 * A positive power of two written as an integer or decimal ("65536", "0.125"), or 2^K ("2^16", "2^-3"):
 * its exponent in *log2. ABL_ERR_BAD_NUMBER for anything else (not positive, not a power of two,
 * |K| > ABL_GRADIENT_LOG2_MAX).
 */
ABL_API abl_status abl_gradient_pow2_parse(const char *text, long *log2);

typedef struct abl_gradient {
    abl_analysis grad;      /* the rounded dS = P * 2^j under ieee (one round-to-nearest rounding) */
    abl_analysis fwd;       /* the weights P themselves, same level, ieee */
    long log2_upstream;     /* j: |dP - D| * loss scale = 2^j */
    mpz_t *only_row;        /* per head (steepest first): last-row keys gradient-blind, weight not 0 */
    mpz_t *only_matrix;     /* the same over the causal matrix */
    mpz_t only_row_total, only_matrix_total;
} abl_gradient;

/*
 * Both analyses of cfg (its convention replaced by ieee, its gradient_log2 by 0 and by j) and the
 * keys that are gradient-blind while their weight is not 0. The one-rounding model: dS is the exact
 * weight times 2^j rounded once into cfg->format (FlashAttention-2's backward, whose P is recomputed
 * in fp32; for the eager softmax, whose P is rounded first, see spec §15).
 */
ABL_API abl_status abl_gradient_run(const abl_analysis_config *cfg, long log2_upstream, abl_gradient *out);
ABL_API void abl_gradient_free(abl_gradient *g);

/* The gradient analysis' report, with the quantity and the gradient-only counts added. */
ABL_API abl_status abl_gradient_report(const abl_gradient *g, abl_report **out);

#ifdef __cplusplus
}
#endif
#endif
