/* alibi-blind: slope schedules (spec §5). Slopes are kept in exact symbolic form so that
 * blindness decisions are exact; `value` is only a binary64 rendering for display. */
#ifndef ABL_SLOPE_H
#define ABL_SLOPE_H

#include "abl/core/export.h"

#include <stddef.h>
#include <mpfr.h>
#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ABL_MAX_HEADS 65536

typedef enum abl_slope_form {
    ABL_SLOPE_POW2 = 0,       /* m = 2^(pow2_num / pow2_den) */
    ABL_SLOPE_RATIONAL = 1,   /* m = *rational (an exact rational, typed as a decimal) */
    ABL_SLOPE_TARGET = 2,     /* m = -tau / t,        tau = tau_log2 * ln 2 (fitted for linear distance) */
    ABL_SLOPE_LOG_TARGET = 3  /* m = -tau / ln(t + 1) (fitted for log-scaled distance, paper §4.3) */
} abl_slope_form;

/*
 * For TARGET and LOG_TARGET the target distance is t = target_lo * (target_hi / target_lo)^(geo_num / geo_den):
 * a plain target has geo_num = 0 (t = target_lo); geometric:D1:DH has target_lo = D1, target_hi = DH,
 * geo_num = h - 1, geo_den = H - 1.
 *
 * The exact numbers are held by pointer (text is parsed once, into the schedule): a slope from
 * abl_schedule_parse points into its schedule and stays valid while the schedule lives (copies
 * such as abl_schedule_sorted's share that storage). A hand-made slope points at the caller's mpq_t.
 */
typedef struct abl_slope {
    abl_slope_form form;
    int index;                       /* head index in the model's own order, 1-based */
    double value;                    /* m to binary64 (display only; never used for decisions) */
    long pow2_num, pow2_den;         /* POW2: reduced, pow2_den > 0 */
    mpq_srcptr rational;             /* RATIONAL: m > 0 exactly */
    mpq_srcptr target_lo;            /* TARGET / LOG_TARGET: t_lo > 0 exactly */
    mpq_srcptr target_hi;            /* TARGET / LOG_TARGET: t_hi > 0 exactly (= target_lo for a plain target) */
    const char *text;                /* RATIONAL or plain TARGET: the number as written (display only), or NULL */
    long geo_num, geo_den;
    long tau_log2;                   /* TARGET / LOG_TARGET: the tau the slope was fitted to, in units of ln 2 */
} abl_slope;

/* The kinds of schedule (spec §5), read from the value: nothing below the boundary parsers compares text. */
typedef enum abl_schedule_kind {
    ABL_SCHEDULE_PRESS = 0,      /* press */
    ABL_SCHEDULE_MPT = 1,        /* mpt:B */
    ABL_SCHEDULE_POW2ONLY = 2,   /* pow2only */
    ABL_SCHEDULE_GEOMETRIC = 3,  /* geometric:D1:DH */
    ABL_SCHEDULE_TARGETS = 4,    /* targets:d1,d2,... */
    ABL_SCHEDULE_SLOPES = 5,     /* slopes:m1,m2,... */
    ABL_SCHEDULE_ROBUST = 6,     /* robust:D1 (mitigation E) */
    ABL_SCHEDULE_ROBUST_LOG = 7  /* robust-log:D1 (E combined with L) */
} abl_schedule_kind;

/* One number of a schedule description, exact. */
typedef struct abl_schedule_number {
    mpq_t value;                     /* the number (> 0); 0 for a power-of-two item */
    int pow2;                        /* 1: a slopes: item written 2^X, m = 2^(pow2_num / pow2_den) */
    long pow2_num, pow2_den;         /* pow2: reduced, pow2_den > 0 */
    char *text;                      /* as written (trimmed, a leading '+' dropped) */
} abl_schedule_number;

/*
 * A schedule as described, before it is instantiated for a head count and a tau (targets are fitted to
 * tau): the typed form of the text `press | mpt:B | ... | robust-log:D1`. Built once at the boundary
 * (abl_schedule_spec_parse, or the constructors from values below), then handed down by pointer; the
 * library below the parsers takes this value, never the text. Owns its numbers and text.
 */
typedef struct abl_schedule_spec {
    abl_schedule_kind kind;
    long mpt_bias;                   /* MPT: B (1..64; mpt alone is mpt:8); 8 for the others */
    size_t count;                    /* numbers: GEOMETRIC 2 (D1, DH), ROBUST/ROBUST_LOG 1 (D1), TARGETS/SLOPES
                                      * the list; 0 for PRESS, MPT, POW2ONLY */
    abl_schedule_number *numbers;
    char *text;                      /* the canonical text ("press", "mpt:8", "slopes:0.5,2^-8"), display only */
} abl_schedule_spec;

typedef struct abl_schedule {
    abl_schedule_kind kind;          /* from the description it was built from */
    long mpt_bias;                   /* MPT: B */
    int count;
    abl_slope *slopes;               /* in the model's head order (index 1..count) */
    char *spec;                      /* canonical spec text, e.g. "press", "mpt:8", "geometric:128:512" (whole) */
    mpq_t *numbers;                  /* the exact numbers the slopes point into */
    size_t nnumbers;
    char *texts;                     /* the numbers as written, NUL-separated */
} abl_schedule;

/*
 * The typed description of a schedule text (the grammar of abl_schedule_parse below): every number is
 * read exactly and checked here, once (ABL_ERR_BAD_SLOPE_SPEC malformed, ABL_ERR_BAD_SLOPE for a zero,
 * negative, NaN or infinite number, ABL_ERR_HEADS_RANGE for a list over ABL_MAX_HEADS). On failure
 * *out is zeroed and *msg (msg not NULL) gets one malloc'd line naming the part at fault ("unknown
 * schedule 'x' (known: ...)", "geometric is geometric:D1:DH with two positive distances"), the caller's
 * to free. Free *out with abl_schedule_spec_free.
 */
ABL_API abl_status abl_schedule_spec_parse(const char *text, abl_schedule_spec *out, char **msg);

/* press (kind PRESS or POW2ONLY) or mpt:B (kind MPT, B in 1..64), from values. */
ABL_API abl_status abl_schedule_spec_pow2(abl_schedule_kind kind, long mpt_bias, abl_schedule_spec *out);

/* geometric:D1:DH for integers D1, DH >= 1. */
ABL_API abl_status abl_schedule_spec_geometric(long d1, long dh, abl_schedule_spec *out);

/* robust:D1 or robust-log:D1 (kind ROBUST or ROBUST_LOG) for an integer D1 >= 1. */
ABL_API abl_status abl_schedule_spec_robust(abl_schedule_kind kind, long d1, abl_schedule_spec *out);

/*
 * slopes:m1,...,mn from exact values (n in 1..ABL_MAX_HEADS, each m > 0 and a terminating decimal, as a
 * binary32 or binary64 value is): what design builds from the floats it searches, with no text round
 * trip. The text form writes each m as its exact decimal.
 */
ABL_API abl_status abl_schedule_spec_slopes(const mpq_t *m, size_t n, abl_schedule_spec *out);

/* A deep copy of src (the copy owns its numbers). */
ABL_API abl_status abl_schedule_spec_copy(const abl_schedule_spec *src, abl_schedule_spec *out);

/* Free what the description owns; safe on a zeroed one. */
ABL_API void abl_schedule_spec_free(abl_schedule_spec *spec);

/*
 * Instantiate a description for H heads and a tau (spec §5), no text involved. spec NULL: press.
 * heads: H (1..ABL_MAX_HEADS); for targets:/slopes: lists heads = 0 takes H from the list and a non-zero
 * H must equal the list length (ABL_ERR_HEADS_RANGE). tau_log2: the tau (in units of ln 2, < 0) that
 * target schedules are fitted to (ABL_ERR_DEGENERATE otherwise). The schedule owns copies of the numbers.
 */
ABL_API abl_status abl_schedule_build(const abl_schedule_spec *spec, int heads, long tau_log2, abl_schedule *out);

/*
 * Build a schedule from its text form (spec §5), at the boundary (= abl_schedule_spec_parse, then
 * abl_schedule_build):
 *   press | mpt:B | pow2only | geometric:D1:DH | targets:d1,d2,... | slopes:m1,m2,...
 *   robust:D1 (mitigation E, targets D1*2^(h-1)) | robust-log:D1 (E combined with L)
 * heads: H (1..ABL_MAX_HEADS); for targets:/slopes: lists, heads = 0 takes H from the list and a
 * non-zero H must equal the list length. tau_log2: the tau (in units of ln 2, < 0) that target
 * schedules are fitted to. Numbers in lists are exact decimals (1e-3, 0.0625, 32); negative,
 * zero, NaN or infinite values give ABL_ERR_BAD_SLOPE.
 */
ABL_API abl_status abl_schedule_parse(const char *spec, int heads, long tau_log2, abl_schedule *out);

/* Free the slopes array; safe on a zeroed schedule. */
ABL_API void abl_schedule_free(abl_schedule *sched);

/* Copy of the schedule's slopes sorted steepest first (exact comparison, stable on ties). */
ABL_API abl_status abl_schedule_sorted(const abl_schedule *sched, abl_slope **sorted_out);

/* m rounded to rop's precision in direction rnd. */
ABL_API abl_status abl_slope_mpfr(mpfr_t rop, const abl_slope *slope, mpfr_rnd_t rnd);

/*
 * Exact form of the slope for display: "2^-0.5", "2^-8", "2^(-8/9)" for POW2 (decimal exponent when it
 * terminates, else a fraction), the decimal text for RATIONAL, "-tau/128" style for targets
 * ("-τ/t" with t written out), "" never. The whole text in a malloc'd string, the caller's to free
 * (NULL only when out of memory); "?" for a malformed slope.
 */
ABL_API char *abl_slope_exact_text(const abl_slope *slope);

/* The slope as decimal with `digits` (1..1000) significant digits (correct rounding), e.g. "0.70711":
 * a malloc'd string, the caller's to free (NULL only when out of memory). */
ABL_API char *abl_slope_decimal_text(const abl_slope *slope, int digits);

/* Exact comparison of two slopes: <0, 0, >0 as a < b, a == b, a > b. */
ABL_API int abl_slope_compare(const abl_slope *a, const abl_slope *b);

#ifdef __cplusplus
}
#endif
#endif
