/* alibi-blind: rotary position embeddings (RoPE) as real code computes them, against the exact rotation
 * (issue 22, docs/rope.md). For a code path (a preset), a model dtype, a head dimension, a base and a
 * scaling, every frequency pair i and position p < N: the angle the code applies (its fp32 arithmetic,
 * operation by operation) against the exact p * theta_i (MPFR), the cos/sin it uses (after the cast into
 * the table's dtype) against the exact ones, and what that does to the logits (worst case over unit q, k). */
#ifndef ABL_ROPE_H
#define ABL_ROPE_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include <gmp.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/progress.h"
#include "abl/report/report.h"
#include "abl/report/plot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The code paths (docs/rope.md cites each, file, function and revision). */
typedef enum abl_rope_path {
    ABL_ROPE_HF_LLAMA = 0,   /* transformers LlamaRotaryEmbedding + apply_rotary_pos_emb (eager, model dtype) */
    ABL_ROPE_FLASH_ROTARY,   /* flash_attn RotaryEmbedding cos/sin cache + the Triton rotary kernel (fp32 math) */
    ABL_ROPE_GGML_CPU,       /* llama.cpp ggml_rope_ext on the CPU (ggml_rope_cache_init, rotate_pairs) */
    ABL_ROPE_PATH_COUNT
} abl_rope_path;

/* The scalings (rope_scaling of a config.json). */
typedef enum abl_rope_scaling {
    ABL_ROPE_SCALING_NONE = 0,
    ABL_ROPE_SCALING_LINEAR,   /* positions / factor (hf: inv_freq /= factor; ggml: freq_scale = 1/factor) */
    ABL_ROPE_SCALING_DYNAMIC,  /* hf dynamic NTK: the base enlarged when the sequence passes max_position */
    ABL_ROPE_SCALING_LLAMA3,   /* hf llama3 (Llama 3.1): long wavelengths / factor, a smooth ramp between */
    ABL_ROPE_SCALING_YARN,     /* hf yarn: interpolation and extrapolation blended by a linear ramp over the pairs,
                                * cos and sin times an attention factor */
    ABL_ROPE_SCALING_LONGROPE  /* hf longrope: inv_freq / a per-pair factor (long or short list), attention factor */
} abl_rope_scaling;

/* The preset's name ("hf-llama", "flash-rotary", "ggml-cpu"); NULL out of range. */
ABL_API const char *abl_rope_path_name(abl_rope_path p);
/* The preset of a name (ABL_ERR_UNSUPPORTED when none; *msg says which exist). */
ABL_API abl_status abl_rope_path_lookup(const char *name, abl_rope_path *out, char **msg);

typedef struct abl_rope_config {
    abl_rope_path path;
    abl_format dtype;          /* the model dtype: bf16, fp16 or fp32 */
    int head_dim;              /* rotary dimension d: even, 2..1024 */
    mpq_t base;                /* rope_theta, exact (> 1) */
    abl_rope_scaling scaling;
    mpq_t factor;              /* the scaling factor (>= 1; ignored with ABL_ROPE_SCALING_NONE) */
    uint64_t max_position;     /* dynamic: max_position_embeddings; llama3: original_max_position_embeddings */
    mpq_t low_freq, high_freq; /* llama3: low_freq_factor, high_freq_factor (low < high) */
    uint64_t n;                /* positions 0..n-1 (1..2^24: fp32 holds every position exactly) */
    int has_tolerance;
    mpq_t tolerance;           /* radians; when absent each pair's own theta_i */
    uint64_t delta1, delta2;   /* the shifts of the shift sensitivity (delta1 < delta2) */
    /* yarn (max_position: the config's max_position_embeddings): binary64 like the Python floats the code
     * holds them in; beta_fast 32 and beta_slow 1 by default; attention factor 0.1 ln(factor) + 1 unless given */
    double beta_fast, beta_slow;
    int has_attention_factor;
    double attention_factor;   /* yarn, longrope */
    /* longrope (max_position: original_max_position_embeddings; factor: the expanded length over it): the
     * per-pair factors, head_dim / 2 each, binary64 as the JSON has them; malloc'd, freed by config_clear */
    double *long_factor, *short_factor;
    int ext_count;
    /* yarn, keys of later transformers revisions (docs/rope.md): mscale and mscale_all_dim (0 when absent: the
     * attention factor is get_mscale(f, mscale) / get_mscale(f, mscale_all_dim) when both are non-zero), and
     * truncate = false (yarn_no_truncate 1: the ramp's ends are not floored/ceiled). */
    double mscale, mscale_all_dim;
    int yarn_no_truncate;
} abl_rope_config;

/* Initialise (d = 128, base 10000, bf16, hf-llama, n = 4096, shifts 0 and 16) / release the mpq fields. */
ABL_API void abl_rope_config_init(abl_rope_config *c);
ABL_API void abl_rope_config_clear(abl_rope_config *c);

/* One frequency pair over positions 0..n-1. */
typedef struct abl_rope_pair {
    double theta;              /* the exact frequency theta_i (radians per position), to binary64 */
    float inv_freq;            /* the code's frequency: its angle at position 1 */
    double angle_err;          /* max |angle(p) - p theta_i|, exact (MPFR), rounded to binary64 */
    uint64_t angle_err_at;
    double cs_err;             /* max |(cos, sin) used - (cos, sin)(p theta_i)| (Euclidean) */
    uint64_t cs_err_at;
    double eff_err;            /* max |atan2(sin used, cos used) - p theta_i| (the angle the used pair encodes) */
    uint64_t eff_err_at;
    double tolerance;          /* the tolerance this pair was judged against */
    int64_t first_angle_over;  /* first p with |angle error| > tolerance; -1: none below n */
    int64_t first_eff_over;    /* first p with |effective angle error| > tolerance; -1: none */
} abl_rope_pair;

typedef struct abl_rope_result {
    abl_rope_path path;
    abl_format dtype;
    abl_format table;          /* the dtype the cos/sin are held in when applied */
    int head_dim;
    int pairs;
    uint64_t n;
    double base;               /* binary64 of the base, for display */
    double base_used;          /* the base the code raises (dynamic NTK: enlarged), fp32 */
    abl_rope_scaling scaling;
    double factor;
    uint64_t delta1, delta2;
    abl_rope_pair *pair;       /* pairs entries */
    /* the logit of unit q, k at (query p, key 0) against the exact relative logit, worst case: */
    double rot_err_first;      /* max over p < n of max_i |conj(z_p) z_0 - e^{-i p theta}| (rotation only) */
    uint64_t rot_err_first_at;
    double rot_err_any;        /* the same over every (p, p') of the positions sampled (see docs) */
    double round_bound;        /* the rounding of the rotated q, k and of q.k, bound for unit q, k */
    /* the shift sensitivity |s(p+D1, 0+D1) - s(p+D2, 0+D2)| worst case over unit q, k (first token's row),
     * and the same for the key at p/2 (an interior key) for comparison: */
    double shift_first;
    uint64_t shift_first_at;
    double shift_mid;
    uint64_t shift_mid_at;
    double shift_first_at_n[24]; /* max over p < 2^k (k = 0..23, for 2^k <= n) of the first-row sensitivity */
    int shift_levels;
    uint64_t mpfr_fallbacks;   /* cos/sin values decided by MPFR (binary64 was too close to a midpoint) */
    /* the picture's curves: at positions curve_x[j] (about N^(j/63)), the running maxima over p <= x of the
     * effective angle error of four pairs (curve_pair) and of the first-row shift sensitivity */
    int ncurve, nshift_curve;
    double curve_x[64], curve_eff[4][64], curve_shift_x[64], curve_shift[64];
    int curve_pair[4];
    /* how the code's fp32 pow/cos/sin were computed: 1 PyTorch CPU's SLEEF (AVX2 + FMA, bit for bit), 0 correctly
     * rounded (ggml-cpu's libm model, or a CPU without AVX2/FMA) (docs/rope.md) */
    int torch_sleef;
    double attention_factor;   /* yarn, longrope: the fp32 factor multiplied into cos and sin (1 otherwise) */
} abl_rope_result;

/* The work: (n + delta2) * head_dim / 2 evaluations; seconds estimated at ~0.5 us each. */
ABL_API abl_status abl_rope_cost(const abl_rope_config *c, abl_cost *out);
/* Run (progress: optional, called with done/total evaluations). */
ABL_API abl_status abl_rope_run(const abl_rope_config *c, abl_progress_fn progress, void *ctx, abl_rope_result *out,
                                char **msg);
ABL_API void abl_rope_result_free(abl_rope_result *r);
/* The report: one row per pair, summaries, notes ("modelled from source, not measured"). */
ABL_API abl_status abl_rope_report(const abl_rope_result *r, abl_report **out);

/* The picture: the effective angle error of four pairs and the first-row shift sensitivity against the
 * position (running maxima, log axes). *out is initialised here; abl_plot_free releases it. */
ABL_API abl_status abl_rope_plot(const abl_rope_result *r, abl_plot *out);

/* The code's own numbers at position p for every pair i < head_dim/2 (the fp32 angle, the cos/sin as applied,
 * in the table's dtype), for the tests and the torch validation. */
ABL_API abl_status abl_rope_values(const abl_rope_config *c, uint64_t p, float *angle, float *cos_used,
                                   float *sin_used);
/* The rotated vector as the code computes it: x (head_dim values, already in the model dtype) rotated to
 * position p, out (head_dim values, in the model dtype, held in float); HF rotate_half layout. */
ABL_API abl_status abl_rope_apply(const abl_rope_config *c, uint64_t p, const float *x, float *out);

/* A small catalogue of RoPE models (docs/rope.md cites each value to its config.json). */
typedef struct abl_rope_model {
    const char *name;
    int head_dim;
    const char *rope_theta;    /* decimal text, exact */
    const char *dtype;         /* torch_dtype */
    uint64_t max_position;
    abl_rope_scaling scaling;
    const char *factor;        /* decimal text or NULL */
    const char *source;        /* the config.json it is transcribed from */
} abl_rope_model;
ABL_API size_t abl_rope_model_count(void);
ABL_API const abl_rope_model *abl_rope_model_at(size_t i);
ABL_API const abl_rope_model *abl_rope_model_find(const char *name);

/* A Hugging Face config.json read into the fields above (head_dim or hidden_size / num_attention_heads,
 * rope_theta (default 10000), rope_scaling {type|rope_type, factor}, torch_dtype, max_position_embeddings).
 * ABL_ERR_IO / ABL_ERR_PARSE / ABL_ERR_UNSUPPORTED with one line in *msg naming the field. */
typedef struct abl_rope_file {
    int head_dim;
    char *rope_theta;          /* malloc'd decimal text as the file has it */
    char *dtype;               /* malloc'd, or NULL when absent */
    uint64_t max_position;
    abl_rope_scaling scaling;
    char *factor;              /* malloc'd decimal text or NULL */
    char *low_freq, *high_freq; /* llama3: malloc'd decimal texts */
    uint64_t original_max_position; /* llama3 */
    double beta_fast, beta_slow; /* yarn: 0 when absent (the code's `or 32`, `or 1`) */
    int has_attention_factor;    /* yarn: attention_factor given */
    double attention_factor;
    double *long_factor, *short_factor; /* longrope: malloc'd, ext_count each */
    int ext_count;
    int has_original;            /* longrope: a top-level original_max_position_embeddings (original_max_position) */
    double mscale, mscale_all_dim; /* yarn: 0 when absent or null */
    int yarn_no_truncate;        /* yarn: "truncate": false */
    uint64_t yarn_original;      /* yarn: rope_scaling's original_max_position_embeddings, 0 when absent */
} abl_rope_file;
ABL_API abl_status abl_rope_file_read(const char *path, abl_rope_file *out, char **msg);
ABL_API void abl_rope_file_free(abl_rope_file *f);

/* A config.json held in memory (len bytes, not NUL-terminated): as abl_rope_file_read (the fuzz harness). */
ABL_API abl_status abl_rope_file_parse(const char *buf, size_t len, abl_rope_file *out, char **msg);

/* A query or key vector from a NumPy .npy file: format 1.0-3.0, descr '<f2', '<f4' or '<f8', C order, shape
 * (d,) or (1, d), every value finite. *out (malloc'd, *count values as binary64) is the caller's to free.
 * ABL_ERR_IO (cannot read), ABL_ERR_PARSE (anything else), with one line in *msg. */
ABL_API abl_status abl_rope_vector_read(const char *path, double **out, int *count, char **msg);
ABL_API abl_status abl_rope_vector_parse(const unsigned char *buf, size_t len, double **out, int *count, char **msg);

/* The logits of given q and k (head_dim values each, rounded into the model dtype first, as the model holds
 * them), as the code computes them: each rotated by abl_rope_apply's arithmetic, the dot product exact and
 * rounded once into the model dtype (the fp32 accumulation is modelled exact: docs/rope.md), against the exact
 * relative logit sum_i Re(conj(Q_i) K_i e^{i (pk - pq) theta_i}) (Q_i = q_i + i q_{i+d/2}). */
typedef struct abl_rope_qk {
    uint64_t distance;       /* the pairs (p, p + distance): query at p + distance, key at p */
    double exact_first;      /* the exact logit at distance 0 (|q.k| scale) */
    double first_err;        /* first token's row: max over r < n of |s(r, 0) - s*(r)| */
    uint64_t first_err_at;
    double pair_err;         /* max over p of |s(p + distance, p) - s*(distance)| */
    uint64_t pair_err_at;
    double shift_first;      /* max over r of |s(r + D1, D1) - s(r + D2, D2)| (first token's row) */
    uint64_t shift_first_at;
    double shift_pair;       /* max over p of |s(p + dist + D1, p + D1) - s(p + dist + D2, p + D2)| */
    uint64_t shift_pair_at;
} abl_rope_qk;
/* Cost: about 6 (n + D2) head_dim / 2 evaluations (abl_rope_cost counts the rest). */
ABL_API abl_status abl_rope_qk_run(const abl_rope_config *c, const double *q, const double *k, uint64_t distance,
                                   abl_rope_qk *out, char **msg);
/* One logit as the code computes it: q at position pq, k at pk (the arithmetic of abl_rope_qk_run). */
ABL_API abl_status abl_rope_logit(const abl_rope_config *c, const double *q, const double *k, uint64_t pq, uint64_t pk,
                                  double *out);
/* Append its summaries (qk_* keys) to a rope report. */
ABL_API abl_status abl_rope_qk_report(const abl_rope_qk *x, abl_report *r);

#ifdef __cplusplus
}
#endif

#endif
