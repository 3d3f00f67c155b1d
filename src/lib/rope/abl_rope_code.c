/* alibi-blind: the frequencies, angles and cos/sin of each RoPE code path, operation by operation in fp32
 * (docs/rope.md cites the source lines), and the exact frequencies they stand for (MPFR). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "abl_internal.h"
#include "rope/abl_rope_internal.h"

float abl_rope_pow32(float x, float y)
{
    return abl_rope_pow32d(x, (double)y);
}

float abl_rope_pow32d(float x, double y)
{
    mpfr_t a, b, r;
    mpfr_inits2(24, a, r, (mpfr_ptr)0);
    mpfr_init2(b, 53);
    mpfr_set_flt(a, x, MPFR_RNDN);
    mpfr_set_d(b, y, MPFR_RNDN);
    /* binary32's exponent range: a result past it would be a subnormal or an overflow in the code too */
    mpfr_pow(r, a, b, MPFR_RNDN);
    float out = mpfr_get_flt(r, MPFR_RNDN);
    mpfr_clears(a, b, r, (mpfr_ptr)0);
    return out;
}

static float rn32(double x)
{
    return (float)x;
}

/* RN32(ln x), correctly rounded (MPFR): llama.cpp's logf (glibc's is within 1 ulp; docs/rope.md). */
static float logf32(float x)
{
    mpfr_t a;
    mpfr_init2(a, 24);
    mpfr_set_flt(a, x, MPFR_RNDN);
    mpfr_log(a, a, MPFR_RNDN);
    float out = mpfr_get_flt(a, MPFR_RNDN);
    mpfr_clear(a);
    return out;
}

/* llama.cpp ggml.c ggml_rope_yarn_corr_dim: n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 *
 * logf(base)), every operation in fp32 (C's conversions: int with float gives float; n_ctx_orig < 2^24 exact). */
static float ggml_corr_dim(int d, uint64_t orig, float n_rot, float base)
{
    float den = rn32((double)rn32((double)n_rot * 2.0) * (double)(float)3.14159265358979323846);
    float l = logf32(rn32((double)(float)orig / (double)den));
    return rn32((double)rn32((double)(float)d * (double)l) / (double)rn32(2.0 * (double)logf32(base)));
}

/* ggml_rope_yarn_corr_dims: start = floorf(corr_dim(beta_fast)), end = ceilf(corr_dim(beta_slow)), dims[0] =
 * MAX(0, start), dims[1] = MIN(n_dims - 1, end) (fp32; the betas are llama.cpp's float hparams); rope_yarn_ramp
 * divides by MAX(0.001f, high - low) (*den; high - low is exact: integers below 2^11). */
static void ggml_yarn_dims(const abl_rope_config *c, float *low, float *den)
{
    float base = rn32(mpq_get_d(c->base));
    float start = floorf(ggml_corr_dim(c->head_dim, c->max_position, (float)c->beta_fast, base));
    float end = ceilf(ggml_corr_dim(c->head_dim, c->max_position, (float)c->beta_slow, base));
    float high = (float)(c->head_dim - 1) < end ? (float)(c->head_dim - 1) : end;
    *low = 0.0f > start ? 0.0f : start;
    float diff = high - *low;
    *den = 0.001f > diff ? 0.001f : diff;
}

/* ggml-cpu ops.cpp rope_yarn_ramp: y = (i0 / 2 - low) / MAX(0.001f, high - low) (fp32), 1 - MIN(1, MAX(0, y));
 * rope_yarn multiplies it by ext_factor, 1.0f for yarn (llama_context: yarn_ext_factor 1 when unset): exact. */
static float ggml_ramp(float low, float den, int i)
{
    float y = rn32((double)rn32((double)(float)i - (double)low) / (double)den);
    y = 1.0f < y ? 1.0f : 0.0f > y ? 0.0f : y;
    return rn32(1.0 - (double)y);
}

static float q32(const mpq_t q)
{
    return rn32(mpq_get_d(q));   /* mpq_get_d truncates; the values used here (bases, factors) are exact */
}

/* The enlarged base of hf dynamic NTK (modeling_rope_utils._compute_dynamic_ntk_parameters with seq_len a
 * tensor: every operation in fp32): base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2)). */
static float dynamic_base32(const abl_rope_config *c)
{
    float f = q32(c->factor);
    float x = rn32((double)f * (double)(float)c->n);
    x = rn32((double)x / (double)(float)c->max_position);
    x = rn32((double)x - (double)rn32(mpq_get_d(c->factor) - 1.0));
    /* tensor ** python float: PyTorch's pow_tensor_scalar keeps the exponent a double (std::pow(float, double)) */
    double e = (double)c->head_dim / (double)(c->head_dim - 2);
    return rn32((double)q32(c->base) * (double)abl_rope_pow32d(x, e));
}

static void llama3_exact(const abl_rope_config *c, mpfr_t theta);
static void yarn_extrapolation(const abl_rope_config *c, int i, mpfr_t w);

/* longrope's per-length switch (Phi-3's Phi3LongRoPEScaledRotaryEmbedding.forward; transformers'
 * _compute_longrope_parameters with the seq_len of its dynamic update): long_factor when the sequence,
 * positions 0..N-1, passes original_max_position_embeddings (seq_len = max(position_ids) + 1 = N > original),
 * short_factor otherwise; one choice for the whole run (the shifted rows included, docs/rope.md). */
static const double *longrope_factors(const abl_rope_config *c)
{
    return c->n > c->max_position ? c->long_factor : c->short_factor;
}

/* The exact theta_i: base^(-2i/d) (dynamic: the enlarged base, exactly), / factor when linear. */
static void exact_theta(const abl_rope_config *c, int i, mpfr_t out)
{
    mpfr_t b, e;
    mpfr_inits2(ABL_ROPE_PREC, b, e, (mpfr_ptr)0);
    mpfr_set_q(b, c->base, MPFR_RNDN);
    if (c->scaling == ABL_ROPE_SCALING_DYNAMIC && c->n > c->max_position) {
        mpfr_t g;
        mpfr_init2(g, ABL_ROPE_PREC);
        mpfr_set_q(g, c->factor, MPFR_RNDN);
        mpfr_mul_ui(g, g, (unsigned long)c->n, MPFR_RNDN);
        mpfr_div_ui(g, g, (unsigned long)c->max_position, MPFR_RNDN);
        mpfr_set_q(e, c->factor, MPFR_RNDN);
        mpfr_sub(g, g, e, MPFR_RNDN);
        mpfr_add_ui(g, g, 1, MPFR_RNDN);
        mpfr_set_ui(e, (unsigned long)c->head_dim, MPFR_RNDN);
        mpfr_div_ui(e, e, (unsigned long)(c->head_dim - 2), MPFR_RNDN);
        mpfr_pow(g, g, e, MPFR_RNDN);
        mpfr_mul(b, b, g, MPFR_RNDN);
        mpfr_clear(g);
    }
    mpfr_set_si(e, -2 * i, MPFR_RNDN);
    mpfr_div_ui(e, e, (unsigned long)c->head_dim, MPFR_RNDN);
    mpfr_pow(out, b, e, MPFR_RNDN);
    if (c->scaling == ABL_ROPE_SCALING_LINEAR) {
        mpfr_set_q(e, c->factor, MPFR_RNDN);
        mpfr_div(out, out, e, MPFR_RNDN);
    }
    mpfr_clears(b, e, (mpfr_ptr)0);
    if (c->scaling == ABL_ROPE_SCALING_LLAMA3)
        llama3_exact(c, out);
    if (c->scaling == ABL_ROPE_SCALING_LONGROPE) {
        mpfr_t w;
        mpfr_init2(w, ABL_ROPE_PREC);
        mpfr_set_d(w, longrope_factors(c)[i], MPFR_RNDN);
        mpfr_div(out, out, w, MPFR_RNDN);
        mpfr_clear(w);
    }
    if (c->scaling == ABL_ROPE_SCALING_YARN) {   /* theta ((1 - e) / factor + e), e the extrapolation share */
        mpfr_t w, v;
        mpfr_inits2(ABL_ROPE_PREC, w, v, (mpfr_ptr)0);
        yarn_extrapolation(c, i, w);
        mpfr_ui_sub(v, 1, w, MPFR_RNDN);
        mpfr_div_q(v, v, c->factor, MPFR_RNDN);
        mpfr_add(w, w, v, MPFR_RNDN);
        mpfr_mul(out, out, w, MPFR_RNDN);
        mpfr_clears(w, v, (mpfr_ptr)0);
    }
}

/* hf llama3 (_compute_llama3_parameters), every tensor operation in fp32, Python scalars cast to fp32:
 * wavelen = 2 * math.pi / inv_freq (Tensor.__rtruediv__: reciprocal() * 2pi); long wavelengths / factor; the
 * medium ones smoothed: ((1 - s) * inv / factor) + s * inv, s = (old / wavelen - low) / (high - low). */
static float llama3_one(const abl_rope_config *c, float inv)
{
    float factor = q32(c->factor), low = q32(c->low_freq);
    double old = (double)c->max_position;
    float lw = rn32(old / mpq_get_d(c->low_freq)), hw = rn32(old / mpq_get_d(c->high_freq));
    float wavelen = rn32((double)rn32(1.0 / (double)inv) * (double)rn32(2 * 3.14159265358979311599796346854));
    float llama = wavelen > lw ? rn32((double)inv / (double)factor) : inv;
    if (wavelen < hw || wavelen > lw)
        return llama;
    float s = rn32((double)rn32(1.0 / (double)wavelen) * (double)(float)old);
    s = rn32((double)s - (double)low);
    s = rn32((double)s / (double)rn32(mpq_get_d(c->high_freq) - mpq_get_d(c->low_freq)));
    float a = rn32((double)rn32((double)rn32(1.0 - (double)s) * (double)llama) / (double)factor);
    return rn32((double)a + (double)rn32((double)s * (double)llama));
}

/* The exact llama3 frequency: the same piecewise formula in real arithmetic (MPFR). */
static void llama3_exact(const abl_rope_config *c, mpfr_t theta)
{
    mpfr_t w, x, y;
    mpfr_inits2(ABL_ROPE_PREC, w, x, y, (mpfr_ptr)0);
    mpfr_const_pi(w, MPFR_RNDN);
    mpfr_mul_ui(w, w, 2, MPFR_RNDN);
    mpfr_div(w, w, theta, MPFR_RNDN);                       /* wavelen = 2 pi / theta */
    mpfr_set_ui(x, (unsigned long)c->max_position, MPFR_RNDN);
    mpfr_set_q(y, c->low_freq, MPFR_RNDN);
    mpfr_div(x, x, y, MPFR_RNDN);                           /* low_freq_wavelen */
    int long_wave = mpfr_cmp(w, x) > 0;
    mpfr_set_ui(x, (unsigned long)c->max_position, MPFR_RNDN);
    mpfr_set_q(y, c->high_freq, MPFR_RNDN);
    mpfr_div(x, x, y, MPFR_RNDN);                           /* high_freq_wavelen */
    int short_wave = mpfr_cmp(w, x) < 0;
    mpfr_set_q(y, c->factor, MPFR_RNDN);
    if (long_wave) {
        mpfr_div(theta, theta, y, MPFR_RNDN);
    } else if (!short_wave) {
        mpfr_ui_div(x, (unsigned long)c->max_position, w, MPFR_RNDN);   /* s = (old / wavelen - low) / (high - low) */
        mpfr_set_q(w, c->low_freq, MPFR_RNDN);
        mpfr_sub(x, x, w, MPFR_RNDN);
        mpfr_set_q(w, c->high_freq, MPFR_RNDN);
        mpfr_sub_q(w, w, c->low_freq, MPFR_RNDN);
        mpfr_div(x, x, w, MPFR_RNDN);
        mpfr_ui_sub(w, 1, x, MPFR_RNDN);                    /* theta ((1 - s) / factor + s) */
        mpfr_div(w, w, y, MPFR_RNDN);
        mpfr_add(w, w, x, MPFR_RNDN);
        mpfr_mul(theta, theta, w, MPFR_RNDN);
    }
    mpfr_clears(w, x, y, (mpfr_ptr)0);
}

/* hf yarn (_compute_yarn_parameters): the ramp's ends, Python binary64 with math.log:
 * find_correction_dim(r) = (dim * log(max_pos / (r * 2 * pi))) / (2 * log(base)); low = max(floor(dim(beta_fast)),
 * 0), high = min(ceil(dim(beta_slow)), dim - 1); equal ends: high + 0.001 (a binary64). */
static void yarn_range(const abl_rope_config *c, double *low, double *high)
{
    double d = (double)c->head_dim, mp = (double)c->max_position, base = mpq_get_d(c->base);
    const double pi = 3.14159265358979311599796346854;
    double lo = (d * log(mp / (c->beta_fast * 2 * pi))) / (2 * log(base));
    double hi = (d * log(mp / (c->beta_slow * 2 * pi))) / (2 * log(base));
    if (!c->yarn_no_truncate) {   /* later revisions: truncate (default True) */
        lo = floor(lo);
        hi = ceil(hi);
    }
    *low = lo > 0 ? lo : 0;
    *high = hi < d - 1 ? hi : d - 1;
    if (*low == *high)
        *high += 0.001;
}

/* The ramp: linear = (arange(d/2, float32) - low) / (high - low) (fp32, the Python numbers cast to fp32),
 * clamped to [0, 1]; the extrapolation share 1 - ramp (fp32). */
static float yarn_share32(const abl_rope_config *c, int i)
{
    double low, high;
    yarn_range(c, &low, &high);
    float r = rn32((double)rn32((double)i - (double)rn32(low)) / (double)rn32(high - low));
    r = r < 0 ? 0.0f : r > 1 ? 1.0f : r;
    return rn32(1.0 - (double)r);
}

/* The exact extrapolation share 1 - clamp((i - low) / (high - low), 0, 1) in real arithmetic (MPFR) on the
 * code's ends (low, high are the code's own decisions, integers or high + 0.001, taken as the binary64 they are). */
static void yarn_extrapolation(const abl_rope_config *c, int i, mpfr_t w)
{
    double low, high;
    yarn_range(c, &low, &high);
    mpfr_t h;
    mpfr_init2(h, ABL_ROPE_PREC);
    mpfr_set_d(h, high, MPFR_RNDN);
    mpfr_sub_d(h, h, low, MPFR_RNDN);   /* exact: both binary64 below 2^11, 160 bits */
    if (c->path == ABL_ROPE_GGML_CPU) {   /* ggml's own ends: the fp32 dims and MAX(0.001f, high - low) */
        float lo, den;
        ggml_yarn_dims(c, &lo, &den);
        low = lo;
        mpfr_set_flt(h, den, MPFR_RNDN);
    }
    mpfr_set_si(w, i, MPFR_RNDN);
    mpfr_sub_d(w, w, low, MPFR_RNDN);
    mpfr_div(w, w, h, MPFR_RNDN);
    if (mpfr_sgn(w) < 0)
        mpfr_set_ui(w, 0, MPFR_RNDN);
    if (mpfr_cmp_ui(w, 1) > 0)
        mpfr_set_ui(w, 1, MPFR_RNDN);
    mpfr_ui_sub(w, 1, w, MPFR_RNDN);
    mpfr_clear(h);
}

/* hf yarn: inv_freq_interpolation * (1 - e) + inv_freq_extrapolation * e, every tensor operation in fp32:
 * extrapolation = 1 / pos, interpolation = 1 / (factor * pos) (factor cast to fp32), pos = base ** (2i/d). */
static float yarn_one(const abl_rope_config *c, float pos, int i)
{
    float extra = rn32(1.0 / (double)pos), inter = rn32(1.0 / (double)rn32((double)q32(c->factor) * (double)pos));
    float e = yarn_share32(c, i);
    return rn32((double)rn32((double)inter * (double)rn32(1.0 - (double)e)) + (double)rn32((double)extra * (double)e));
}

/* hf and flash: inv_freq = 1.0 / (base ** (arange(0, d, 2).float() / d)), all fp32; linear: inv_freq /= factor. */
static void torch_inv_freq(const abl_rope_config *c, abl_rope_code *k)
{
    for (int i = 0; i < k->pairs; i++) {
        float e = rn32((double)(float)(2 * i) / (double)(float)c->head_dim);
        /* base ** exponents: SLEEF on the vector lanes, powf on the last pairs % 16 (abl_rope_sleef.c) */
        float pos = k->torch_trig ? abl_rope_torch_pow(k->base32, e, i < k->pairs - k->pairs % 16)
                                : abl_rope_pow32(k->base32, e);
        float v = rn32(1.0 / (double)pos);
        if (c->scaling == ABL_ROPE_SCALING_YARN)
            v = yarn_one(c, pos, i);
        if (c->scaling == ABL_ROPE_SCALING_LONGROPE)   /* 1.0 / (ext_factors * base ** shape), ext in fp32 */
            v = rn32(1.0 / (double)rn32((double)(float)longrope_factors(c)[i] * (double)pos));
        if (c->scaling == ABL_ROPE_SCALING_LINEAR)
            v = rn32((double)v / (double)q32(c->factor));
        if (c->scaling == ABL_ROPE_SCALING_LLAMA3)
            v = llama3_one(c, v);
        k->inv[i] = v;
    }
}

/* get_mscale(scale, m) = 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0 (binary64); the default
 * attention factor is get_mscale(factor), or get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
 * when both keys are non-zero (later transformers revisions: DeepSeek-V3). */
static double get_mscale(double scale, double m)
{
    return scale <= 1 ? 1.0 : 0.1 * m * log(scale) + 1.0;
}

static double yarn_mscale(const abl_rope_config *c, double factor)
{
    if (c->mscale != 0 && c->mscale_all_dim != 0)
        return get_mscale(factor, c->mscale) / get_mscale(factor, c->mscale_all_dim);
    return get_mscale(factor, 1);
}

/* llama.cpp's yarn magnitude, every step in fp32 (docs/rope.md): freq_scale = 1.0f/ropescale
 * (llama_model::load_hparams); llama_context: factor = 1.0f / freq_scale, yarn_attn_factor = get_mscale(factor,
 * 1.0f) = 0.1f * 1.0f * logf(factor) + 1.0f, then *= 1.0f / (1.0f + 0.1f * logf(factor)) (the cancellation of
 * ggml's own factor) and *= rope_attn_factor (1); ggml rope_yarn with ext_factor != 0: mscale *= 1.0f + 0.1f *
 * logf(1.0f / freq_scale). Unfused: no multiply-add contracted into an FMA (docs/rope.md, modelling choice). */
static float ggml_mscale(const abl_rope_config *c)
{
    float fs = rn32(1.0 / (double)q32(c->factor));
    float factor = rn32(1.0 / (double)fs);
    float g = rn32((double)rn32((double)0.1f * (double)logf32(factor)) + 1.0);
    float attn = factor <= 1.0f ? 1.0f : g;
    attn = rn32((double)attn * (double)rn32(1.0 / (double)g));
    return rn32((double)attn * (double)g);
}

/* hf: attention_scaling multiplies the fp32 cos and sin (LlamaRotaryEmbedding.forward, before the cast);
 * yarn's is attention_factor or 0.1 * math.log(factor) + 1.0 (binary64), the fp32 multiply casting it to fp32. */
static void yarn_attention(const abl_rope_config *c, abl_rope_code *k)
{
    k->att = 1.0;
    mpfr_t f;   /* the factor as Python's binary64 (expanded / original, or the config's float) */
    mpfr_init2(f, 53);
    mpfr_set_q(f, c->factor, MPFR_RNDN);
    double factor = mpfr_get_d(f, MPFR_RNDN);
    mpfr_clear(f);
    if (c->scaling == ABL_ROPE_SCALING_YARN)
        k->att = c->has_attention_factor ? c->attention_factor : yarn_mscale(c, factor);
    if (c->scaling == ABL_ROPE_SCALING_YARN && c->path == ABL_ROPE_GGML_CPU) {
        k->att = get_mscale(factor, 1);   /* the exact pair: transformers' 0.1 ln(factor) + 1 */
        k->att32 = ggml_mscale(c);
        return;
    }
    if (c->scaling == ABL_ROPE_SCALING_LONGROPE)   /* sqrt(1 + log(factor) / log(original)), 1 when factor <= 1 */
        k->att = c->has_attention_factor ? c->attention_factor
                 : factor <= 1 ? 1.0 : sqrt(1 + log(factor) / log((double)c->max_position));
    k->att32 = rn32(k->att);
}

/* yarn: hf-llama (transformers) and ggml-cpu (llama.cpp's own rope_yarn); flash_attn's RotaryEmbedding has none. */
static abl_status yarn_check(const abl_rope_config *c, char **msg)
{
    if (c->path == ABL_ROPE_FLASH_ROTARY) {
        abl_set_error(msg, "flash-rotary has no yarn: flash_attn's RotaryEmbedding takes dim, base, interleaved and "
                           "xPos's scale_base, and caches cos/sin of t * 1/base^(2i/d) only; yarn cos/sin a caller "
                           "passes to apply_rotary_emb are not this preset (hf-llama models transformers' yarn)");
        return ABL_ERR_UNSUPPORTED;
    }
    if (c->path == ABL_ROPE_GGML_CPU &&
        (c->has_attention_factor || c->mscale != 0 || c->mscale_all_dim != 0 || c->yarn_no_truncate ||
         c->max_position > (UINT64_C(1) << 24))) {
        abl_set_error(msg, "ggml-cpu yarn: llama.cpp derives the attention factor from the factor and always "
                           "floors/ceils the ramp's ends; attention_factor, mscale, mscale_all_dim and truncate "
                           "are not modelled for it (original length at most 2^24)");
        return ABL_ERR_UNSUPPORTED;
    }
    if (c->max_position < 2 || c->max_position > (UINT64_C(1) << 40) || !(c->beta_fast > 0) ||
        !(c->beta_slow > 0) || c->beta_fast > 1e6 || c->beta_slow > 1e6 ||
        (c->has_attention_factor && !(c->attention_factor > 0 && c->attention_factor <= 16))) {
        abl_set_error(msg, "yarn scaling needs max_position_embeddings >= 2, beta_fast and beta_slow > 0 (at most "
                           "1e6), attention_factor in (0, 16]");
        return ABL_ERR_UNSUPPORTED;
    }
    return ABL_OK;
}

static abl_status code_check(const abl_rope_config *c, char **msg)
{
    if (c->head_dim < 2 || c->head_dim > 1024 || c->head_dim % 2 != 0) {
        abl_set_error(msg, "head dim %d: an even number from 2 to 1024", c->head_dim);
        return ABL_ERR_INVALID_ARGUMENT;
    }
    if (c->n < 1 || c->n > (UINT64_C(1) << 24) || c->delta1 >= c->delta2 || c->delta2 > (UINT64_C(1) << 20) ||
        c->n + c->delta2 > (UINT64_C(1) << 24)) {
        abl_set_error(msg, "positions: N from 1 to 2^24 (fp32 holds every position), shifts D1 < D2 <= 2^20, "
                           "N + D2 <= 2^24");
        return ABL_ERR_INVALID_ARGUMENT;
    }
    if (mpq_cmp_ui(c->base, 1, 1) <= 0 || mpq_cmp_ui(c->base, 1000000000, 1) > 0) {
        abl_set_error(msg, "base (rope_theta): greater than 1, at most 1e9");
        return ABL_ERR_INVALID_ARGUMENT;
    }
    if (c->scaling != ABL_ROPE_SCALING_NONE && (mpq_cmp_ui(c->factor, 1, 1) < 0 || mpq_cmp_ui(c->factor, 1024, 1) > 0)) {
        abl_set_error(msg, "scaling factor: from 1 to 1024");
        return ABL_ERR_INVALID_ARGUMENT;
    }
    if (c->scaling == ABL_ROPE_SCALING_DYNAMIC && (c->path != ABL_ROPE_HF_LLAMA || c->max_position < 1)) {
        abl_set_error(msg, "dynamic NTK scaling is modelled for hf-llama only, with max_position_embeddings");
        return ABL_ERR_UNSUPPORTED;
    }
    if (c->scaling == ABL_ROPE_SCALING_LLAMA3 &&
        (c->path != ABL_ROPE_HF_LLAMA || c->max_position < 1 || mpq_cmp(c->low_freq, c->high_freq) >= 0 ||
         mpq_sgn(c->low_freq) <= 0)) {
        abl_set_error(msg, "llama3 scaling is modelled for hf-llama only, with original_max_position_embeddings and "
                           "0 < low_freq_factor < high_freq_factor");
        return ABL_ERR_UNSUPPORTED;
    }
    if (c->scaling == ABL_ROPE_SCALING_YARN && yarn_check(c, msg) != ABL_OK)
        return ABL_ERR_UNSUPPORTED;
    if (c->scaling == ABL_ROPE_SCALING_LONGROPE &&
        (c->path != ABL_ROPE_HF_LLAMA || c->max_position < 2 || c->ext_count != c->head_dim / 2 ||
         c->long_factor == NULL || c->short_factor == NULL ||
         (c->has_attention_factor && !(c->attention_factor > 0 && c->attention_factor <= 16)))) {
        abl_set_error(msg, "longrope scaling is modelled for hf-llama only, with head_dim / 2 long and short factors, "
                           "an original length >= 2 and attention_factor in (0, 16]");
        return ABL_ERR_UNSUPPORTED;
    }
    if (c->scaling == ABL_ROPE_SCALING_LINEAR && c->path == ABL_ROPE_FLASH_ROTARY) {
        abl_set_error(msg, "flash-rotary (flash_attn RotaryEmbedding) has no linear scaling");
        return ABL_ERR_UNSUPPORTED;
    }
    if (c->dtype.precision > 24 || c->dtype.emin < -126 || c->dtype.emax > 127 ||
        (c->path == ABL_ROPE_GGML_CPU && c->dtype.precision != 24 && c->dtype.precision != 11)) {
        abl_set_error(msg, "dtype %s: %s", c->dtype.name,
                      c->path == ABL_ROPE_GGML_CPU ? "ggml_rope on the CPU takes F32 or F16 tensors"
                                                   : "a format that fits in fp32 (bf16, fp16, fp32)");
        return ABL_ERR_UNSUPPORTED;
    }
    return ABL_OK;
}

abl_status abl_rope_code_init(const abl_rope_config *c, abl_rope_code *k, char **msg)
{
    memset(k, 0, sizeof *k);
    abl_status st = code_check(c, msg);
    if (st != ABL_OK)
        return st;
    abl_format f32;
    abl_format_lookup("fp32", &f32);
    k->path = c->path;
    k->pairs = c->head_dim / 2;
    abl_fp_init(&c->dtype, &k->dt);
    abl_fp_init(c->path == ABL_ROPE_GGML_CPU ? &f32 : &c->dtype, &k->table);
    k->inv = calloc((size_t)k->pairs, sizeof *k->inv);
    k->theta = calloc((size_t)k->pairs, sizeof *k->theta);
    k->scratch = calloc((size_t)k->pairs, sizeof *k->scratch);
    k->row_len = c->path == ABL_ROPE_HF_LLAMA ? 2 * k->pairs : k->pairs;
    k->torch_trig = c->path != ABL_ROPE_GGML_CPU && abl_rope_sleef();
    k->row = calloc((size_t)k->row_len, sizeof *k->row);
    k->rc = calloc((size_t)k->row_len, sizeof *k->rc);
    k->rs = calloc((size_t)k->row_len, sizeof *k->rs);
    k->nbr = calloc((size_t)k->pairs, sizeof *k->nbr);
    if (c->path == ABL_ROPE_GGML_CPU && c->scaling == ABL_ROPE_SCALING_YARN &&
        (k->ramp = calloc((size_t)k->pairs, sizeof *k->ramp)) == NULL) {
        abl_rope_code_clear(k);
        return ABL_ERR_NO_MEMORY;
    }
    if (k->inv == NULL || k->theta == NULL || k->scratch == NULL || k->row == NULL || k->rc == NULL || k->rs == NULL ||
        k->nbr == NULL) {
        abl_rope_code_clear(k);
        return ABL_ERR_NO_MEMORY;
    }
    abl_mpfr_range saved = abl_mpfr_range_widen();
    k->base32 = c->scaling == ABL_ROPE_SCALING_DYNAMIC && c->n > c->max_position ? dynamic_base32(c) : q32(c->base);
    for (int i = 0; i < k->pairs; i++) {
        mpfr_init2(k->theta[i], ABL_ROPE_PREC);
        exact_theta(c, i, k->theta[i]);
    }
    /* ggml: theta_scale = powf(freq_base, -2.0f/n_dims); freq_scale = 1.0f/factor (llama.cpp rope_freq_scale) */
    k->ts = abl_rope_pow32(k->base32, rn32(-2.0 / (double)(float)c->head_dim));
    k->freq_scale = c->scaling == ABL_ROPE_SCALING_LINEAR || c->scaling == ABL_ROPE_SCALING_YARN
                    ? rn32(1.0 / (double)q32(c->factor)) : 1.0f;
    if (c->path == ABL_ROPE_GGML_CPU && c->scaling == ABL_ROPE_SCALING_YARN && k->ramp != NULL) {
        float low, den;
        ggml_yarn_dims(c, &low, &den);
        for (int i = 0; i < k->pairs; i++)
            k->ramp[i] = ggml_ramp(low, den, i);
    }
    torch_inv_freq(c, k);
    yarn_attention(c, k);
    if (c->path == ABL_ROPE_GGML_CPU)
        for (int i = 0; i < k->pairs; i++)
            k->inv[i] = abl_rope_code_angle(k, i, 1);
    abl_mpfr_range_restore(saved);
    return ABL_OK;
}

void abl_rope_code_clear(abl_rope_code *k)
{
    if (k->theta != NULL)
        for (int i = 0; i < k->pairs; i++)
            if (k->theta[i]->_mpfr_d != NULL)
                mpfr_clear(k->theta[i]);
    free(k->theta);
    free(k->inv);
    free(k->scratch);
    free(k->row);
    free(k->rc);
    free(k->rs);
    free(k->nbr);
    free(k->ramp);
    memset(k, 0, sizeof *k);
}

/* ggml rope_yarn: theta_interp = freq_scale * theta_extrap; with yarn (ext_factor != 0) theta = theta_interp * (1 -
 * ramp_mix) + theta_extrap * ramp_mix, each product and the sum rounded (no FMA contraction, docs/rope.md). */
static float ggml_rope_yarn_theta(const abl_rope_code *k, int i, float theta_extrap)
{
    float theta = rn32((double)k->freq_scale * (double)theta_extrap);
    if (k->ramp == NULL)
        return theta;
    float m = k->ramp[i];
    return rn32((double)rn32((double)theta * (double)rn32(1.0 - (double)m)) + (double)rn32((double)theta_extrap * (double)m));
}

float abl_rope_code_angle(const abl_rope_code *k, int i, uint64_t p)
{
    if (k->path != ABL_ROPE_GGML_CPU)   /* freqs = inv_freq @ position_ids.float(): one fp32 product */
        return rn32((double)k->inv[i] * (double)(float)p);
    /* ggml_rope_cache_init: theta = p; per pair rope_yarn(theta / ff (ff = 1: exact), ...), theta *= theta_scale */
    float theta = (float)p;
    for (int j = 0; j < i; j++)
        theta = rn32((double)theta * (double)k->ts);
    return ggml_rope_yarn_theta(k, i, theta);
}

void abl_rope_code_angles(const abl_rope_code *k, uint64_t p, float *out)
{
    if (k->path != ABL_ROPE_GGML_CPU) {
        for (int i = 0; i < k->pairs; i++)
            out[i] = abl_rope_code_angle(k, i, p);
        return;
    }
    float theta = (float)p;   /* the same loop as ggml_rope_cache_init: one pass over the pairs */
    for (int i = 0; i < k->pairs; i++) {
        out[i] = ggml_rope_yarn_theta(k, i, theta);
        theta = rn32((double)theta * (double)k->ts);
    }
}

/* Whether binary64 v (within 1 ulp of the true value) is too close to a binary32 midpoint to decide RN32. */
static int near_midpoint(double v)
{
    float f = (float)v;
    double lo = ((double)f + (double)nextafterf(f, -INFINITY)) / 2, hi = ((double)f + (double)nextafterf(f, INFINITY)) / 2;
    double margin = ldexp(fabs(v), -50);
    return fabs(v - lo) <= margin || fabs(v - hi) <= margin;
}

/* A row shorter than, or not a multiple of, SLEEF's 8 lanes (head_dim % 8 != 0): PyTorch's groups of 8 run over
 * the flattened [positions, row] table, so a lane's neighbours are the rows of the next positions (the sequence
 * 0, 1, 2, ...; the zero padding of the tensor's very last group is not modelled, docs/rope.md). */
static void table_straddling(abl_rope_code *k, uint64_t p)
{
    uint64_t len = (uint64_t)k->row_len, first = p * len / 8, last = (p * len + len - 1) / 8;
    for (uint64_t g = first; g <= last; g++) {
        float lane[8], oc[8], os[8];
        uint64_t at = UINT64_MAX;
        for (int l = 0; l < 8; l++) {
            uint64_t f = g * 8 + (uint64_t)l, q = f / len;
            if (q != at)
                abl_rope_code_angles(k, q, k->nbr);
            at = q;
            lane[l] = k->nbr[(f % len) % (uint64_t)k->pairs];
        }
        abl_rope_torch_cos_sin(lane, 8, oc, os);
        for (int l = 0; l < 8; l++)
            if ((g * 8 + (uint64_t)l) / len == p) {
                k->rc[(g * 8 + (uint64_t)l) % len] = oc[l];
                k->rs[(g * 8 + (uint64_t)l) % len] = os[l];
            }
    }
}

void abl_rope_code_table(abl_rope_code *k, uint64_t p, const float *angles)
{
    if (!k->torch_trig)
        return;
    if (k->row_len % 8 != 0) {
        table_straddling(k, p);
        return;
    }
    /* hf: emb = torch.cat((freqs, freqs), dim=-1), then emb.cos(); flash: torch.cos(freqs) */
    memcpy(k->row, angles, (size_t)k->pairs * sizeof *angles);
    if (k->row_len > k->pairs)
        memcpy(k->row + k->pairs, angles, (size_t)k->pairs * sizeof *angles);
    abl_rope_torch_cos_sin(k->row, k->row_len, k->rc, k->rs);
}

void abl_rope_cos_sin(abl_rope_code *k, int j, float a, float *c, float *s, double *cd, double *sd)
{
    *cd = cos((double)a);
    *sd = sin((double)a);
    *c = (float)*cd;
    *s = (float)*sd;
    if (k->torch_trig) {
        *c = k->rc[j];
        *s = k->rs[j];
    } else if (near_midpoint(*cd) || near_midpoint(*sd)) {
        mpfr_t x, y;
        mpfr_inits2(24, x, y, (mpfr_ptr)0);
        mpfr_set_flt(x, a, MPFR_RNDN);
        mpfr_cos(y, x, MPFR_RNDN);
        *c = mpfr_get_flt(y, MPFR_RNDN);
        mpfr_sin(y, x, MPFR_RNDN);
        *s = mpfr_get_flt(y, MPFR_RNDN);
        mpfr_clears(x, y, (mpfr_ptr)0);
        k->fallbacks++;
    }
    if (k->att32 != 1.0f) {   /* yarn: cos * attention_scaling in fp32; the exact pair scaled by the same factor */
        *c = rn32((double)*c * (double)k->att32);
        *s = rn32((double)*s * (double)k->att32);
        *cd *= k->att;
        *sd *= k->att;
    }
}
