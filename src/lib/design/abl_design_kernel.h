/* alibi-blind (private): design's claims decided on the kernel itself. The last row of a head is built
 * here (zero logits, optionally a clamped bias and one key with its own score) and run through the same
 * row emulation as `simulate` (abl_sim_row_weights), so a clamp or a minimum logit is what the kernel
 * does, not what the exact softmax would do. */
#ifndef ABL_DESIGN_KERNEL_H
#define ABL_DESIGN_KERNEL_H

#include <stdint.h>
#include "abl/design/design.h"
#include "kernel/abl_round.h"

typedef struct abl_dk {
    abl_sim_setup s;
    uint64_t n;       /* context: the row built is the last one, keys 0..n-1 */
    float *x, *e, *w; /* n floats each: logits, scratch, weights in the output dtype */
    /* heads x n floats each, or NULL when that is over ABL_DK_CACHE_FLOATS: every head's bias magnitudes
     * and unclamped zero-score logits of the last row, filled on the head's first row (a clamp bisection
     * builds each head's row some 35 times; only the clamp changes) */
    float *mag, *x0;
    unsigned char *ready; /* per head: its mag and x0 are filled */
} abl_dk;

/* The kernel of c at context c->context for `n` slopes; relative = 1 forces the relative bias form (a
 * clamp max(-m d, c) is a relative bias by definition). */
abl_status abl_dk_init(abl_dk *k, const abl_design_config *c, const float *slopes, int n, int relative);
void abl_dk_free(abl_dk *k);

/* The clamp value the kernel's logits meet for a binary32 clamp v (<= 0): eager, the bias dtype's
 * rounding of v (the bias is clamped in fp32, then cast); flash, v in the kernel's score units (v divided
 * by the softmax scale, in fp32). Two v with the same value build the same kernel. */
float abl_dk_clamp_value(const abl_dk *k, float v);
/* The clamp as the user states it (nats): eager, the bias dtype's rounding of v; flash, v. */
double abl_dk_clamp_stated(const abl_dk *k, float v);

/* Head h's last row: clamp (NULL: none) as abl_dk_clamp_value gives it; key (-1: none) gets score
 * `score` (the kernel's score units), every other key 0. Then run through the kernel: the number of
 * zero weights in the row; k->w holds the weights. */
uint64_t abl_dk_last_row(abl_dk *k, int h, const float *clamp, int64_t key, float score);

/* The kernel's logit of key `key` of the last row for score `score` (no clamp). */
float abl_dk_key_logit(const abl_dk *k, int h, int64_t key, float score);

/* Nats per score unit: the softmax scale (flash) or the bias scale (eager), 1 when none. */
double abl_dk_score_scale(const abl_dk *k);

/* Binary32 values in order: a monotone map to integers and back. */
int64_t abl_dk_ord(float v);
float abl_dk_unord(int64_t o);

#endif
