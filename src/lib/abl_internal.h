/* alibi-blind: helpers shared by the library's modules (not part of the public API). */
#ifndef ABL_INTERNAL_H
#define ABL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <gmp.h>
#include <mpfr.h>
#include "abl/core/status.h"
#include "abl/core/decimal.h"
#include "abl/core/blindness.h"


/*
 * An interval evaluator: set lo <= x <= hi for the real x it stands for, computing at precision
 * prec (lo/hi already have that precision). Non-zero return means failure.
 */
typedef int (*abl_interval_fn)(mpfr_t lo, mpfr_t hi, void *ctx);

/*
 * x as fixed-point text with `decimals` digits after the point, correctly rounded to nearest:
 * Ziv's loop widens the precision until both bounds print the same. x must not be an exact
 * decimal midpoint (true of every logarithm and transcendental value this project prints);
 * after the precision cap the lower bound's text is used. "-0.000" is printed as "0.000".
 */
abl_status abl_ziv_fixed_string(abl_interval_fn fn, void *ctx, int decimals, char **out);

/* The same with `digits` significant digits, printf %g style (exponent below 1e-4 and from 10^digits),
 * widening no further than max_prec bits (then it prints the lower bound): for enclosures that cannot
 * tighten past a known width (log-distance sums, ABL_WEIGHT_LOG_MAX_PREC), where widening further would
 * only cost time (up to ABL_ZIV_MAX_PREC bits: minutes per number). *out malloc'd; NULL on failure. */
abl_status abl_ziv_general_capped(abl_interval_fn fn, void *ctx, int digits, long max_prec, char **out);

/*
 * out += the blind entries of rows a..b of a causal matrix for a head blind from distance d: each row r
 * loses max(0, min(r, W) - d + 1) keys (window W; 0 = none). Closed form, no loop over rows.
 */
void abl_blind_rows_add(mpz_t out, uint64_t a, uint64_t b, const mpz_t d, uint64_t window);

/*
 * MPFR's exponent range is global (thread-local) state that format emulation narrows; exact work runs
 * in the widest range and gives the caller's back afterwards.
 */
typedef struct abl_mpfr_range {
    mpfr_exp_t emin, emax;
} abl_mpfr_range;
abl_mpfr_range abl_mpfr_range_widen(void);
void abl_mpfr_range_restore(abl_mpfr_range saved);

/* printf into an optional message buffer (err may be NULL): the detail behind a returned status. */
/* The message as abl_set_error writes it, but malloc'd whole into *msg (NULL: no message wanted;
 * *msg NULL when out of memory). For messages that quote user text of any length. */
void abl_error_dup(char **msg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* An error message, whole, malloc'd into *msg (NULL: no message wanted): it replaces (frees) a message
 * already there, so *msg must be NULL or an earlier one; control characters become '?' (one line). */
void abl_set_error(char **msg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/*
 * Growable text (abl_numeric.c). abl_text_add appends printf output; after an allocation failure it
 * appends nothing more and sets oom, so a caller checks once at the end. Reuse: set n = 0 (s stays).
 */
typedef struct abl_text {
    char *s;   /* NUL-terminated once anything was added; NULL before */
    size_t n, cap;
    int oom;
} abl_text;
void abl_text_add(abl_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* printf into a malloc'd string of any length, the caller's to free; NULL only when out of memory. */
char *abl_strf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* The text so far ("" when empty). */
const char *abl_text_str(const abl_text *t);
/* The text, the caller's to free; NULL (and freed) after an allocation failure. */
char *abl_text_take(abl_text *t);

/*
 * Weight level (abl_weight.c). The bias row of k keys: b(d) = max(-m g(d), c) (clamp NULL: no clamp).
 * abl_weight_row_sum encloses sum_{d=a}^{b-1} e^(b(d)) for m in [m_lo, m_hi] at lo's precision (certified:
 * closed form for linear distances, Euler-Maclaurin with a bounded remainder for log distances).
 * abl_weight_offset encloses L = ln S_k - log1p(e^tau expm1(-eps)), tau = -absk ln 2, for eps in
 * [eps_lo, eps_hi]: a key with logit eps among zero-logit keys has a zero weight iff eps + b(d) <= tau + L.
 */
void abl_weight_row_sum(mpfr_t lo, mpfr_t hi, const mpfr_t m_lo, const mpfr_t m_hi, const mpq_t *clamp,
                        abl_distance dist, uint64_t a, uint64_t b, uint64_t k);
void abl_weight_offset(mpfr_t lo, mpfr_t hi, const mpfr_t m_lo, const mpfr_t m_hi, const mpfr_t eps_lo,
                       const mpfr_t eps_hi, const mpq_t *clamp, abl_distance dist, uint64_t k, unsigned long absk);

/* The largest B of an mpt:B schedule (abl_slope.c); config.json's attn_config.alibi_bias_max is
 * checked against the same bound, so the refusal names the field, not an option. */
#define ABL_MPT_BIAS_MAX 64
/* The largest head dimension a pipeline takes (head-dim=); config.json's hidden size / heads is checked
 * against it when read, so the refusal names the config's fields, not --pipeline. */
#define ABL_MAX_HEAD_DIM 65536

/* Working precision for the first try of a Ziv loop, and the cap past which it stops widening. */
#define ABL_ZIV_START_PREC 128
#define ABL_ZIV_MAX_PREC (1L << 17)
/* The cap for weight-level log-distance decisions (their harmonic sums are certified to about 2^-240). */
#define ABL_WEIGHT_LOG_MAX_PREC 512L

#endif
