/* alibi-blind: blindness distances delta_h(eps) (spec §6), decided exactly. */
#ifndef ABL_BLINDNESS_H
#define ABL_BLINDNESS_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include <gmp.h>
#include <mpfr.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"
#include "abl/core/slope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Past this many bits the exact integer of a log-distance delta is not materialised; approx stays exact to 64 bits. */
#define ABL_DELTA_EXACT_BITS_MAX (1L << 22)

typedef enum abl_distance { ABL_DISTANCE_LINEAR = 0, ABL_DISTANCE_LOG = 1 } abl_distance;

/* How the blindness question is asked. Numbers are exact rationals (NULL = absent), parsed by the caller. */
typedef struct abl_blind_query {
    abl_format format;
    abl_convention convention;
    abl_distance distance;        /* g(d) = d or ln(d + 1) */
    mpq_srcptr logit;             /* epsilon; NULL means 0 */
    mpq_srcptr clamp;             /* c of mitigation C (bias* = max(-m g(d), c)); NULL = no clamp */
    mpq_srcptr softcap;           /* z > 0 of a soft cap on the logit: eps becomes z tanh(eps/z); NULL = none */
    /*
     * 0: exponent level (the paper: exp(x) itself underflows). k > 0: weight level for a query row that
     * attends k keys (spec §4): every key has logit 0 except the one asked about (logit eps), the bias is
     * b(d) = max(-m g(d), c), and the key's exact softmax weight e^(eps+b)/S underflows, i.e.
     * eps + b(d) <= tau + ln S_k - log1p(e^tau expm1(-eps)), S_k = sum_{d<k} e^(b(d)). Every logit, clamp
     * and distance is supported; with a clamp, `never` means the clamped weight e^(eps+c)/S stays above tau.
     */
    uint64_t weight_keys;
} abl_blind_query;

/* A blindness distance: an exact integer, an astronomically large integer, or never. */
typedef struct abl_delta {
    int never;        /* the clamp keeps every exponent above tau */
    int exact;        /* `value` holds the exact integer (always, unless the integer would exceed ABL_DELTA_EXACT_BITS_MAX bits) */
    mpz_t value;
    mpfr_t approx;    /* delta rounded to nearest with 64 bits: huge values, display */
    int capped;       /* the Ziv loop reached ABL_ZIV_MAX_PREC bits without deciding: Q was taken to sit exactly
                       * on the rule's boundary (reports say so) */
} abl_delta;

ABL_API void abl_delta_init(abl_delta *d);
ABL_API void abl_delta_clear(abl_delta *d);
ABL_API void abl_delta_set(abl_delta *dst, const abl_delta *src);

/* delta_h(eps) for one slope. */
ABL_API abl_status abl_blindness(const abl_slope *slope, const abl_blind_query *q, abl_delta *out);

/* 1 when delta < n (the head is blind somewhere in the last row of an n-token context), else 0. */
ABL_API int abl_delta_lt_u64(const abl_delta *d, uint64_t n);

/* 1 and *out set when delta fits in int64, else 0. */
ABL_API int abl_delta_get_i64(const abl_delta *d, int64_t *out);

/*
 * Text of delta: the integer when it has at most `max_digits` digits, otherwise scientific with
 * 3 significant digits ("4.37e53", correctly rounded); "never" when never. Malloc'd, the caller's to
 * free; NULL only when out of memory.
 */
ABL_API char *abl_delta_text(const abl_delta *d, int max_digits);

/*
 * The one JSON type of a delta (docs/schema/README.md): null when never; a JSON integer up to 2^53
 * (exact in every JSON reader); above, a string holding the exact decimal integer (up to
 * ABL_DELTA_JSON_DIGITS digits), or beyond that the value rounded to 17 significant digits in
 * e-notation ("1.2345678901234567e5000"). Returns a malloc'd token, or NULL when out of memory.
 */
#define ABL_DELTA_JSON_DIGITS 1000
ABL_API char *abl_delta_json(const abl_delta *d);

/* Table 8 cell (spec §8): the integer when delta <= 10^9, "*" when 10^9 < delta < 2^1024, "**" beyond.
 * Malloc'd, the caller's to free; NULL only when out of memory. */
ABL_API char *abl_delta_table8_cell(const abl_delta *d);

/*
 * The clamp margin c - tau of a query, as decimal text with `decimals` digits (e.g. "0.3365"), malloc'd
 * into *out: how far above tau a clamped bias stays at eps = 0. ABL_ERR_INVALID_ARGUMENT when q->clamp
 * is NULL.
 */
ABL_API abl_status abl_clamp_margin_string(const abl_blind_query *q, int decimals, char **out);

#ifdef __cplusplus
}
#endif
#endif
