/* alibi-blind (private): the roundings a real attention kernel performs, emulated bit for bit.
 *
 * Every format the emulator handles fits in a binary32 variable (precision <= 24, exponent range
 * inside binary32's), so a value of any pipeline dtype is held in a `float`. A binary32 operation
 * is emulated by the binary64 operation followed by one conversion to float: for +, -, *, / of
 * binary32 operands binary64 has 53 >= 2*24 + 2 bits, so that double rounding is innocuous and the
 * result is the IEEE binary32 result (products of two binary32 values are even exact). Fused
 * multiply-adds use fmaf (C99: one rounding). Nothing here relies on the host's expf. */
#ifndef ABL_ROUND_H
#define ABL_ROUND_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <mpfr.h>
#include "abl/core/format.h"
#include "abl/core/status.h"
#include "abl/core/slope.h"
#include "abl/kernel/pipeline.h"
#include "abl/kernel/simulate.h"

/* A format held in binary32 (see above). */
typedef struct abl_fp {
    int p;              /* precision, hidden bit included */
    int emin, emax;
    int has_inf;        /* overflow gives +-Inf; otherwise the conversion saturates at +-max */
    int neg_zero;       /* the format has -0 (the fnuz formats turn -0 into +0) */
    int identity;       /* binary32 itself */
    int fp32_grid;      /* emin == -126: the grid is binary32's truncated (bit trick is exact) */
    double max;         /* largest finite */
    double min_normal;  /* 2^emin */
    double min_sub;     /* smallest subnormal 2^(emin - p + 1) */
    double zero_max;    /* largest |x| that rounds to 0: min_sub / 2 (the tie goes to the even 0) */
} abl_fp;

/* ABL_ERR_UNSUPPORTED when the format does not fit in binary32 (fp64, or a wider eXmY). */
abl_status abl_fp_init(const abl_format *f, abl_fp *out);

/* x (any binary64 value) rounded to nearest, ties to even, into the format; gradual underflow;
 * past the largest finite: +-Inf when the format has Inf, else saturated at +-max. */
double abl_fp_round(const abl_fp *f, double x);

/* The same for a binary32 input (fast path for formats on binary32's grid). */
float abl_fp_round32(const abl_fp *f, float x);

/* The largest binary32 v (-inf .. +inf) with zero(ctx, v) true, for a predicate true then false as v grows
 * (true at -inf); +inf when it holds there too. A bisection on the values' order (the thresholds of the
 * backward kernels' monotone dS: abl_backward_flash.c, abl_backward_memeff.c). */
float abl_float_last_true(int (*zero)(const void *ctx, float v), const void *ctx);

/* The exact slope rounded once into the format; ABL_ERR_DEGENERATE when it rounds to 0. */
abl_status abl_fp_round_slope(const abl_fp *f, const abl_slope *s, double *out);

/* RN32(exp(y)) and RN32(2^y): correctly rounded, with subnormal results (gradual underflow).
 * binary64 exp/exp2 decide every case whose value is not within 2^-20 units of a rounding
 * boundary of binary32; the rest go through MPFR (Ziv loop), so the result never depends on libm's
 * last-bit accuracy. */
float abl_exp_rn32(float y);
float abl_exp2_rn32(float y);

/* PyTorch's CPU exp on binary32 (Vectorized<float>::exp = Sleef_expf8_u10, SLEEF 3.5, FMA): not
 * correctly rounded (error <= 1 ulp), emulated operation by operation. */
float abl_exp_sleef_u10(float y);

/* Exact sum of non-negative binary32 values (a 256-bit fixed-point accumulator, unit 2^-149). */
typedef struct abl_xacc {
    uint64_t w[4];
} abl_xacc;

void abl_xacc_clear(abl_xacc *a);
void abl_xacc_add(abl_xacc *a, float v);     /* 0 <= v < 2^100 */
float abl_xacc_round32(const abl_xacc *a);   /* the exact sum, rounded once to binary32 (RNE) */

/* A pipeline resolved for emulation at context N. */
typedef struct abl_emul {
    abl_bias_form form;
    uint64_t offset;       /* bias-offset: the eager bias multiplies pos + offset */
    abl_softmax_kind softmax;
    abl_sum_order sum;
    abl_normalise normalise;
    abl_exp_model exp;
    abl_bias_add bias_add;
    abl_slope_calc slope_calc;
    abl_fp slope, prod, bias, logit, out;
    int has_scale;
    float scale;           /* fp32(bias-scale) */
    float sm_scale;        /* flash: fp32(head_dim^-0.5), as Python computes it and passes it as float */
    float c_log2;          /* flash: fp32(sm_scale * log2(e)) (params.scale_softmax_log2) */
    int block;             /* flash, sdpa: keys per block of the running max (0: whole row) */
    uint64_t n;            /* context */
    abl_fp mask;           /* ggml kinds: the mask's dtype */
    abl_fp half;           /* ggml-flash: fp16 (F16 Q, the F16 accumulator) */
    abl_fa_kernel fa_kernel; /* ggml-flash: the kernel run at this N (auto resolved) */
    int fa_threads;        /* ggml-flash split-kv: key chunks */
    uint64_t first_row;    /* ggml kinds: rows before it are not computed (pipeline field rows); else 0 */
    abl_fp pv, pv_acc;     /* P.V: P rounded into pv, the products added in pv_acc (abl_influence.h) */
    int splits;            /* flash-splitkv: num_splits (>= 2) */
    int head_dim;          /* flash-splitkv: the combine kernel's kBlockM follows it */
    float infl_max;        /* the largest fp32 weight whose influence is zero */
    int infl_active;       /* 1 when a non-zero weight can have zero influence */
    int zero2;             /* abl_simulate_config.zero2: also count p <= zf2 (eager rows) */
    float zf2;             /* the largest binary32 <= zero2_max: p <= zero2_max iff p <= zf2 */
} abl_emul;

/* The ggml kinds: the mask can hold -inf (fp16 from 65520), whose keys the kernel skips. */
static inline int abl_emul_ggml_kind(abl_softmax_kind k)
{
    return k == ABL_SOFTMAX_GGML || k == ABL_SOFTMAX_GGML_FLASH;
}

static inline int abl_emul_ggml(const abl_emul *e)
{
    return abl_emul_ggml_kind(e->softmax);
}

/* The GPU engines modelled from source (abl_engines.c). */
static inline int abl_emul_engine_kind(abl_softmax_kind k)
{
    return k == ABL_SOFTMAX_GGML_CUDA_VEC || k == ABL_SOFTMAX_VLLM_PAGED || k == ABL_SOFTMAX_TRTLLM_MMHA ||
           k == ABL_SOFTMAX_GGML_CUDA || k == ABL_SOFTMAX_VLLM_TRITON || k == ABL_SOFTMAX_TRTLLM_FMHA ||
           k == ABL_SOFTMAX_FLASH_SPLITKV;
}

static inline int abl_emul_engine(const abl_emul *e)
{
    return abl_emul_engine_kind(e->softmax);
}

/* Kinds whose F16 mask can hold -inf (a key the kernel skips): a logit of -inf is a masked key, not an error. */
static inline int abl_emul_inf_ok(const abl_emul *e)
{
    return abl_emul_ggml(e) || e->softmax == ABL_SOFTMAX_GGML_CUDA_VEC;
}

/* ABL_ERR_UNSUPPORTED when abl_pipeline_check fails. */
abl_status abl_emul_init(const abl_pipeline *p, uint64_t n, abl_emul *out);

/* One head: its slope as held and as it enters the product. */
typedef struct abl_emul_head {
    double held;           /* slope-dtype(m) */
    float factor;          /* eager: product-dtype(held); flash: fp32(held / sm_scale) */
} abl_emul_head;

abl_status abl_emul_head_init(const abl_emul *e, const abl_slope *s, abl_emul_head *out);
/* The same from a slope value the code computed (slope-calc), rounded into slope-dtype. */
abl_status abl_emul_head_init_value(const abl_emul *e, double value, abl_emul_head *out);

/* The slope of head h (0-based, schedule order) as the code computes it in fp32 (slope-calc torch-pow
 * or mpt-pow); ABL_ERR_SLOPE_CALC when the schedule is not one that code builds (torch-pow: press;
 * mpt-pow: mpt:B or press, any head count). */
abl_status abl_slope_code_value(abl_slope_calc calc, const abl_schedule *sched, int h, float *out);

/* The last step of an emulated row: key j's weight w as it comes out, stored in wout and (binary64) tvw when
 * the caller asked for them; 1 when it is an exact zero (the count the row returns). One definition for the
 * kernels that end a row this way (Triton, ggml, sdpa), inline because it runs once per key. */
static inline uint64_t abl_emul_put_weight(float w, uint64_t j, float *wout, double *tvw)
{
    if (wout != NULL)
        wout[j] = w;
    if (tvw != NULL)
        tvw[j] = w;
    return w == 0.0f;
}

/* sdpa-efficient / sdpa-cudnn: the zero weights of one row whose logits are x[0..count-1] (fp32
 * values as the kernel reads them). acc is scratch (count floats); wout (optional) gets the weights
 * as they come out (the coefficient of v_j, in the output dtype); tvw (optional) the same in binary64. */
uint64_t abl_sdpa_row(const abl_emul *e, const float *x, uint64_t count, float *acc, float *wout, double *tvw);
/* fp32(log2 e) as the memory-efficient kernel holds it (kLog2e) */
#define ABL_SDPA_LOG2E 1.4426950408889634074f

/* The position the bias multiplies for query i and key j <= i. */
static inline uint64_t abl_emul_pos(const abl_emul *e, uint64_t i, uint64_t j)
{
    switch (e->form) {
    case ABL_BIAS_ABSOLUTE: return j;
    case ABL_BIAS_TRAILING: return e->n - 1 - j;
    default: return i - j;
    }
}

/* |bias| at a position: eager bias-dtype(product-dtype(factor * product-dtype(pos))); flash
 * fp32(factor * pos). */
float abl_emul_bias_mag(const abl_emul *e, const abl_emul_head *h, uint64_t pos);

/* The logit the softmax reads for an fp32 score and the bias magnitude at `pos`. */
float abl_emul_logit(const abl_emul *e, const abl_emul_head *h, float score, uint64_t pos, float mag);

/* Eager: the exponential of x against the row max M: fp32(x - M), then exp per the model. */
static inline float abl_emul_eager_exp(const abl_emul *e, float x, float m)
{
    float y = (float)((double)x - (double)m);
    return e->exp == ABL_EXP_SLEEF ? abl_exp_sleef_u10(y) : abl_exp_rn32(y);
}

/* Eager: the fp32 weight before the output rounding (r = fp32(1/S) or S itself, per normalise). */
static inline float abl_emul_eager_p32(const abl_emul *e, float ex, float s, float r)
{
    return e->normalise == ABL_NORM_DIVIDE ? (float)((double)ex / (double)s) : (float)((double)ex * (double)r);
}

/* Flash: the exponential of x against the running max M, flushed to zero below 2^-126. */
static inline float abl_emul_flash_exp(const abl_emul *e, float x, float max_scaled)
{
    float y = fmaf(x, e->c_log2, -max_scaled);
    return y < -126.0f ? 0.0f : abl_exp2_rn32(y);
}

static inline float abl_emul_max_scaled(const abl_emul *e, float m)
{
    return (float)((double)m * (double)e->c_log2);
}

/* A weight is zero when the value about to be rounded into the output dtype rounds to 0. */
static inline int abl_emul_zero(const abl_emul *e, float v)
{
    return v <= e->out.zero_max;
}

/* The fp32 sum of e[0..count-1] in the pipeline's order; n is the row length the kernel sees
 * (masked keys contribute exact zeros; only the lane layout depends on it). */
float abl_emul_sum(const abl_emul *e, const float *ex, uint64_t count, uint64_t n);

/* A simulate/predict configuration resolved: the pipeline, the schedule, each head's slopes. */
typedef struct abl_sim_setup {
    abl_emul em;
    abl_schedule schedule;
    int heads;
    abl_emul_head *hd;     /* model order */
    double *m_exact;       /* exact slopes to binary64 (the TV reference) */
    double std;            /* Gaussian logits' standard deviation; 0: zero logits */
    int gaussian;          /* non-zero scores: Gaussian or captured (the table holds |bias|) */
    uint64_t seed;
    const abl_npy *captured;   /* captured scores, or NULL */
    abl_fp score_fp;       /* the dtype the captured scores are rounded to */
} abl_sim_setup;

abl_status abl_sim_setup_init(const abl_simulate_config *cfg, abl_sim_setup *s);
void abl_sim_setup_free(abl_sim_setup *s);
/* The zero weights of row i (keys 0..i) whose logits, as the softmax reads them, are x[0..i]: the same
 * roundings as abl_simulate_run's rows (e: i + 1 floats of scratch; wout, optional: the weights as rounded
 * into the output dtype). For callers that build their own rows (design's clamps and min logits). */
uint64_t abl_sim_row_weights(const abl_sim_setup *s, uint64_t i, const float *x, float *e, float *wout);
/* The logit statistics of row i (keys 0..n-1 in key order, the diagonal at i): distinct values (sorted: n
 * floats of scratch, left sorted; NULL: not counted, 1), the longest run of equal neighbours, the keys tied
 * with the diagonal's logit. One helper for the causal last row and the bidirectional end row. */
void abl_sim_row_stats(const float *x, uint64_t n, uint64_t i, float *sorted, abl_sim_head *out);
/* Threads to use: `requested`, or every online core when 0 (1..256). */
int abl_sim_threads(int requested);
/* The threads a cost estimate assumes: abl_sim_threads, but never more than the machine's cores (more
 * threads than cores do not run faster). */
int abl_sim_estimate_threads(int requested);
/* The schedule a cost estimate reads: cfg->slopes (press when NULL) for cfg->heads, parsed as the run
 * parses it (against the output dtype's tau). */
abl_status abl_sim_estimate_schedule(const abl_simulate_config *cfg, abl_schedule *sched);
/*
 * A team of nt threads running fn: nt - 1 new threads and the caller's (k = 0), thread k with
 * (char *)args + k * argsize (argsize 0: all with args). Threads that cannot be created are done
 * without: ready(ctx, n), when not NULL, learns how many run before the caller's fn starts (simulate
 * releases its barrier for exactly those). Each thread frees its MPFR cache when fn returns; the
 * call returns after all have joined, with n (>= 1).
 */
int abl_sim_team_run(int nt, void (*fn)(void *arg), void *args, size_t argsize, void (*ready)(void *ctx, int n),
                     void *ctx);

#endif
