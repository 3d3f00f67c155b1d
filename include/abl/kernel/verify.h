/* alibi-blind: proof of the thresholds of spec §3 by emulating exp in each format (MPFR). */
#ifndef ABL_VERIFY_H
#define ABL_VERIFY_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include <mpfr.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/threshold.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Formats of at most this many storage bits are verified on every encoding; wider ones by bisection. */
#define ABL_VERIFY_EXHAUSTIVE_BITS 16
/* Encodings are handled as uint64_t: 1 + exp_bits + man_bits must not exceed this. */
#define ABL_VERIFY_MAX_BITS 64

/* Where exp(x), rounded once into a format, lands. */
typedef enum abl_exp_class {
    ABL_EXP_ZERO = 0,
    ABL_EXP_SUBNORMAL = 1,
    ABL_EXP_NORMAL = 2,
    ABL_EXP_OVERFLOW = 3,    /* Inf; in formats without Inf the NaN or saturated result */
    ABL_EXP_CLASS_COUNT = 4
} abl_exp_class;

/* "zero", "subnormal", "normal", "overflow". */
ABL_API const char *abl_exp_class_name(abl_exp_class c);

/*
 * exp(x) rounded once into fmt in direction rnd (MPFR_RNDN, RNDZ, RNDU or RNDD), emulated as in
 * spec §2: correctly rounded at precision p in a wide exponent range, then check_range and
 * subnormalize in the format's range (gradual underflow). rop must have precision p; on overflow it
 * is +Inf (even for formats without Inf, where the class says what happened). Round-toward-zero
 * never overflows: it delivers the largest finite (448 for fp8-e4m3fn, not the NaN pattern 480).
 * Works whatever exponent range the caller set; the caller's range and flags are preserved.
 */
ABL_API abl_status abl_verify_exp(mpfr_t rop, const abl_format *fmt, const mpfr_t x, mpfr_rnd_t rnd, abl_exp_class *cls);

/* Total storage bits 1 + exp_bits + man_bits. */
ABL_API int abl_verify_format_bits(const abl_format *fmt);

/*
 * The value of an encoding of fmt (sign, exponent field, mantissa field; the fn/fnuz/OCP MX rules
 * for Inf, NaN and -0 follow fmt->flags). *finite = 0 for Inf/NaN encodings (x is then left NaN).
 * x must have precision >= p. ABL_ERR_UNSUPPORTED for a format wider than ABL_VERIFY_MAX_BITS or
 * whose emax does not match its exponent field.
 */
ABL_API abl_status abl_verify_decode(const abl_format *fmt, uint64_t bits, mpfr_t x, int *finite);

/*
 * One threshold as an experiment: every representable x falls in a lower class (e.g. exp(x) rounds
 * to 0) or an upper class, monotonically. The claim of the closed form is
 *   lower class  iff  x <= tau   (lower_inclusive = 1)   or   iff  x < tau   (lower_inclusive = 0),
 * so it holds iff below <= tau < above (resp. below < tau <= above), where below is the largest x in
 * the lower class and above the smallest x in the upper class (two adjacent representable numbers).
 */
typedef struct abl_verify_bound {
    abl_tau_kind kind;
    mpfr_rnd_t rounding;     /* rounding of the emulated exp: MPFR_RNDN, MPFR_RNDZ or MPFR_RNDU */
    int lower_inclusive;
    int has_below, has_above;  /* 0 when no representable x is in that class (a vacuous side) */
    uint64_t below_bits;     /* encoding of the largest x in the lower class */
    uint64_t above_bits;     /* encoding of the smallest x in the upper class */
    int agrees;              /* filled by abl_verify_format: the claim holds for the MPFR-enclosed tau */
} abl_verify_bound;

typedef enum abl_verify_method { ABL_VERIFY_EXHAUSTIVE = 0, ABL_VERIFY_BISECTION = 1 } abl_verify_method;

typedef struct abl_verify_result {
    abl_format format;
    abl_verify_method method;
    uint64_t inputs;        /* finite encodings classified (exhaustive), or 0 (bisection) */
    uint64_t evaluations;   /* emulated exp calls made */
    uint64_t class_count[ABL_EXP_CLASS_COUNT];  /* exhaustive: inputs per class of exp(x) under RNE */
    uint64_t ftz_zero_count;                     /* exhaustive: inputs whose RNE result is 0 or subnormal */
    abl_verify_bound bound[ABL_TAU_KIND_COUNT];  /* indexed by abl_tau_kind */
    /*
     * FTZ applied after rounding: exp(x) rounded to nearest with gradual underflow, then a
     * subnormal result flushed. Lower class: the RNE result is below the smallest normal. Its exact
     * boundary is ln(2^emin - 2^(emin-p)), which can put an x just below the ftz tau on the normal
     * side (fp6-e3m2fn: exp(-1.5) = 0.223 rounds up to 0.25). Its agrees is checked against that
     * closed form (with lower_inclusive = 0), and counts in the result's agrees.
     */
    abl_verify_bound ftz_after_rounding;
    int ftz_after_rounding_same;  /* its bracket equals bound[ABL_TAU_FTZ]'s */
    int agrees;                   /* every bound agrees */
} abl_verify_result;

/*
 * Classify exp(x) for the inputs of fmt (every finite encoding when fmt has at most
 * ABL_VERIFY_EXHAUSTIVE_BITS bits, else bisection over the ordered encodings, relying on exp and
 * rounding being monotone), find the bracket of each threshold kind and check it against tau from
 * abl_threshold_mpfr (an enclosure from directed roundings, widened until the comparison is certain).
 * A disagreement is reported in out->agrees, not as an error status.
 */
ABL_API abl_status abl_verify_format(const abl_format *fmt, abl_verify_result *out);

/* Does the claim of bound b hold for this exact tau? 1 yes, 0 no (e.g. a deliberately wrong tau). */
ABL_API int abl_verify_bound_holds(const abl_format *fmt, const abl_verify_bound *b, const mpfr_t tau);

/* The exact decimal value of an encoding ("-92.5", "0.125") of any length, malloc'd into *out (the caller
 * frees it); *out is NULL on failure (a NaN or infinite encoding: ABL_ERR_INVALID_ARGUMENT). */
ABL_API abl_status abl_verify_value_text(const abl_format *fmt, uint64_t bits, char **out);

/* Host libm (binary32) against the correctly rounded exp, over every float in a range. */
typedef struct abl_verify_libm {
    uint64_t inputs;
    uint64_t expf_differs;      /* expf(x) != RNE exp(x) in binary32 */
    uint64_t exp2f_differs;     /* exp2f(x * log2(e)f) != RNE exp(x) (the kernels' exp2 form) */
    uint64_t expf_differs_tiny, exp2f_differs_tiny;   /* of those, where RNE exp(x) is subnormal or 0 */
    float expf_first[4], exp2f_first[4];   /* the first differing inputs (in scan order) */
    unsigned expf_nfirst, exp2f_nfirst;
    /*
     * Per implementation ([0] correctly rounded, [1] expf, [2] exp2f), over the scanned inputs: the
     * largest x giving 0 and the smallest giving non-zero (bit 0 / bit 1 of have_zero_bracket set when
     * seen), the largest x giving a finite value and the smallest giving +Inf (have_inf_bracket).
     */
    int have_zero_bracket[3];
    float zero_last[3], nonzero_first[3];
    int have_inf_bracket[3];
    float finite_last[3], inf_first[3];
} abl_verify_libm;

/* Clear a scan record before the first abl_verify_libm_scan. */
ABL_API void abl_verify_libm_init(abl_verify_libm *out);

/* Every float x with lo <= x <= hi (both finite, lo <= hi), increasing; results accumulate in out. */
ABL_API abl_status abl_verify_libm_scan(float lo, float hi, abl_verify_libm *out);

/*
 * The verify report: one row per (format, kind) with the claim, tau (10 decimals), the bracketing
 * inputs (exact decimal and encoding) and the agreement; with_libm adds the host expf/exp2f scan of
 * binary32 over [-104, -87] and [88, 89] (informational: never a disagreement). *all_agree tells
 * whether every threshold of every format agrees.
 */
ABL_API abl_status abl_verify_report(const abl_format *formats, size_t nformats, int with_libm, abl_report **out,
                             int *all_agree);

#ifdef __cplusplus
}
#endif
#endif
