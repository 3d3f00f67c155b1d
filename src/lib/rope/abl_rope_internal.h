/* alibi-blind (private): the rope stage's shared pieces: the code's frequencies resolved once. */
#ifndef ABL_ROPE_INTERNAL_H
#define ABL_ROPE_INTERNAL_H

#include <mpfr.h>
#include "abl/rope/rope.h"
#include "kernel/abl_round.h"

/* Precision of the exact frequencies and angles: p * theta_i (p < 2^24) keeps 2^-100 relative. */
#define ABL_ROPE_PREC 160

typedef struct abl_rope_code {
    abl_rope_path path;
    int pairs;
    abl_fp dt;            /* the model dtype */
    abl_fp table;         /* the dtype the cos/sin are applied from (hf, flash: the model's; ggml: fp32) */
    float *inv;           /* hf, flash: inv_freq in fp32, per pair */
    float ts;             /* ggml: theta_scale = powf(freq_base, -2.0f/n_dims) */
    float freq_scale;     /* ggml: 1/factor (linear, yarn), 1 otherwise */
    float *ramp;          /* ggml yarn: rope_yarn_ramp(...) * ext_factor per pair (fp32); NULL without yarn */
    float base32;         /* the fp32 base the code raises */
    float att32;          /* hf: attention_scaling as the fp32 multiply takes it (1 but for yarn) */
    double att;           /* its exact value (binary64 of it) */
    mpfr_t *theta;        /* exact theta_i */
    uint64_t fallbacks;   /* cos/sin decided by MPFR */
    float *scratch;       /* pairs floats: one position's angles (abl_rope_code_apply) */
    int torch_trig;       /* hf, flash: pow, cos, sin as PyTorch CPU's SLEEF computes them (abl_rope_sleef.c) */
    int row_len;          /* the row PyTorch takes cos/sin of: hf emb = cat(freqs, freqs) 2 pairs, flash pairs */
    float *row, *rc, *rs; /* row_len floats: one position's row, its fp32 cos and sin (abl_rope_code_table) */
    float *nbr;           /* pairs floats: a neighbouring position's angles (rows straddling SLEEF's groups) */
} abl_rope_code;

abl_status abl_rope_code_init(const abl_rope_config *c, abl_rope_code *k, char **msg);
void abl_rope_code_clear(abl_rope_code *k);
/* The fp32 angle the code applies for pair i at position p. */
float abl_rope_code_angle(const abl_rope_code *k, int i, uint64_t p);
/* The angles of every pair at position p (O(pairs) for ggml's loop as well). */
void abl_rope_code_angles(const abl_rope_code *k, uint64_t p, float *out);
/* The fp32 cos/sin table row of one position from its angles (hf, flash: PyTorch CPU's SLEEF, by groups of 8). */
void abl_rope_code_table(abl_rope_code *k, uint64_t p, const float *angles);
/* The fp32 cos and sin the code uses at row index j (j < pairs: pair j; hf j >= pairs: the second copy of pair
 * j - pairs) of angle a: PyTorch's SLEEF values from the last abl_rope_code_table, else RN32(cos a), RN32(sin a)
 * (correctly rounded: libm's binary64 values, MPFR near a midpoint); cd, sd get the binary64 values (|error| <= 1
 * ulp of binary64). */
void abl_rope_cos_sin(abl_rope_code *k, int j, float a, float *c, float *s, double *cd, double *sd);
/* abl_rope_sleef.c: whether PyTorch's SLEEF cos/sin/pow (AVX2 + FMA) are available on this build and CPU. */
int abl_rope_sleef(void);
/* PyTorch's fp32 pow: SLEEF's powf u10 for a vector lane, libm powf for the scalar tail. */
float abl_rope_torch_pow(float x, float y, int vector_lane);
/* PyTorch CPU's cos/sin of n contiguous fp32 angles (vec::map with Sleef_cosf8_u10/Sleef_sinf8_u10). */
void abl_rope_torch_cos_sin(const float *row, int n, float *c, float *s);
/* RN32(x^y), correctly rounded (MPFR). */
float abl_rope_pow32(float x, float y);
/* RN32(x^y) for a binary64 exponent (PyTorch's tensor ** python float), correctly rounded. */
float abl_rope_pow32d(float x, double y);

/* x (head_dim values in the model dtype) rotated to position p as the code computes it (abl_rope_apply). */
void abl_rope_code_apply(abl_rope_code *k, uint64_t p, const float *x, float *out);

#endif
