/* alibi-blind: the threshold engine (spec §3). */
#include "abl/core/threshold.h"
#include "abl_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on a caller-built format: keep every exponent far inside MPFR's range on any ABI. */
#define MAX_PRECISION 4096
#define MAX_ABS_EXP (1L << 28)
/* Ziv loop guard; never reached for a transcendental tau, only protects against a bug. */
#define MAX_ZIV_PREC ((mpfr_prec_t)1 << 22)

static const char *const k_names[ABL_TAU_KIND_COUNT] = {
    "subnormal", "rn-zero", "ftz", "max", "rn-overflow"};

const char *abl_tau_kind_name(abl_tau_kind kind)
{
    if ((int)kind < 0 || kind >= ABL_TAU_KIND_COUNT)
        return NULL;
    return k_names[kind];
}

const char *abl_tau_kind_paper_name(abl_tau_kind kind)
{
    switch (kind) {
    case ABL_TAU_SUBNORMAL: return "underflow";
    case ABL_TAU_FTZ: return "denorm";
    case ABL_TAU_MAX: return "overflow";
    default: return NULL;
    }
}

const char *abl_tau_kind_paper_symbol(abl_tau_kind kind)
{
    switch (kind) {
    case ABL_TAU_SUBNORMAL: return "\xcf\x84u"; /* τu */
    case ABL_TAU_FTZ: return "\xcf\x84" "d";
    case ABL_TAU_MAX: return "\xcf\x84o";
    default: return NULL;
    }
}

static int equal_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    }
    return *a == *b;
}

abl_status abl_tau_kind_parse(const char *text, abl_tau_kind *out)
{
    int i;
    if (!text || !out)
        return ABL_ERR_INVALID_ARGUMENT;
    for (i = 0; i < ABL_TAU_KIND_COUNT; i++) {
        if (equal_nocase(text, k_names[i])) {
            *out = (abl_tau_kind)i;
            return ABL_OK;
        }
    }
    return ABL_ERR_INVALID_ARGUMENT;
}

static int kind_ok(abl_tau_kind kind)
{
    return (int)kind >= 0 && kind < ABL_TAU_KIND_COUNT;
}

/* Reject formats whose numbers would not be exact dyadics within MPFR's exponent range. */
static int format_ok(const abl_format *fmt)
{
    if (!fmt)
        return 0;
    if (fmt->precision < 1 || fmt->precision > MAX_PRECISION)
        return 0;
    if (fmt->emin < -MAX_ABS_EXP || fmt->emin > MAX_ABS_EXP || fmt->emax < -MAX_ABS_EXP ||
        fmt->emax > MAX_ABS_EXP || fmt->emin > fmt->emax)
        return 0;
    /* The largest significand 2^p - 1 - deficit must stay >= 1. */
    if (fmt->precision <= 32 && (unsigned long long)fmt->max_deficit + 2 > (1ULL << fmt->precision))
        return 0;
    return 1;
}

abl_status abl_threshold_log2_multiple(const abl_format *fmt, abl_tau_kind kind, long *k)
{
    if (!format_ok(fmt) || !k || !kind_ok(kind))
        return ABL_ERR_INVALID_ARGUMENT;
    switch (kind) {
    case ABL_TAU_SUBNORMAL: *k = fmt->emin - fmt->precision + 1; return ABL_OK;
    case ABL_TAU_RN_ZERO: *k = fmt->emin - fmt->precision; return ABL_OK;
    case ABL_TAU_FTZ: *k = fmt->emin; return ABL_OK;
    default: return ABL_ERR_INVALID_ARGUMENT;
    }
}

/*
 * Sets x to the exact dyadic whose log is tau. x's precision is chosen so that no
 * operation rounds: 2 bits for a power of two, p + 2 for the (p + 1)-bit significands.
 */
static void exact_argument(mpfr_t x, const abl_format *fmt, abl_tau_kind kind)
{
    long k;
    mpfr_prec_t p = fmt->precision;

    if (abl_threshold_log2_multiple(fmt, kind, &k) == ABL_OK) {
        mpfr_init2(x, 2);
        mpfr_set_ui_2exp(x, 1, k, MPFR_RNDN);
        return;
    }
    mpfr_init2(x, p + 2);
    if (kind == ABL_TAU_MAX) {
        /* (2^p - 1 - deficit) * 2^(emax - p + 1) */
        mpfr_set_ui_2exp(x, 1, p, MPFR_RNDN);
        mpfr_sub_ui(x, x, 1, MPFR_RNDN);
        mpfr_sub_ui(x, x, fmt->max_deficit, MPFR_RNDN);
        mpfr_mul_2si(x, x, fmt->emax - p + 1, MPFR_RNDN);
    } else {
        /* (2^p - 1 - deficit + 1/2) * 2^(emax - p + 1) = (2^(p+1) - 1 - 2 deficit) * 2^(emax - p) */
        mpfr_set_ui_2exp(x, 1, p + 1, MPFR_RNDN);
        mpfr_sub_ui(x, x, 1, MPFR_RNDN);
        mpfr_sub_ui(x, x, fmt->max_deficit, MPFR_RNDN);
        mpfr_sub_ui(x, x, fmt->max_deficit, MPFR_RNDN);
        mpfr_mul_2si(x, x, fmt->emax - p, MPFR_RNDN);
    }
}


/* tau in the widened range; returns the ternary value of the single rounding. */
static int tau_wide(mpfr_t rop, const abl_format *fmt, abl_tau_kind kind, mpfr_rnd_t rnd)
{
    mpfr_t x;
    int t;

    exact_argument(x, fmt, kind);
    t = mpfr_log(rop, x, rnd);
    mpfr_clear(x);
    return t;
}

abl_status abl_threshold_mpfr(mpfr_t rop, const abl_format *fmt, abl_tau_kind kind, mpfr_rnd_t rnd)
{
    abl_mpfr_range w;
    int t;

    if (!rop || !format_ok(fmt) || !kind_ok(kind))
        return ABL_ERR_INVALID_ARGUMENT;
    w = abl_mpfr_range_widen();
    t = tau_wide(rop, fmt, kind, rnd);
    abl_mpfr_range_restore(w);
    /* Like any MPFR function, the result obeys the caller's exponent range. */
    mpfr_check_range(rop, t, rnd);
    return ABL_OK;
}

double abl_threshold_double(const abl_format *fmt, abl_tau_kind kind)
{
    mpfr_t r;
    mpfr_flags_t flags;
    abl_mpfr_range w;
    double d;

    if (!format_ok(fmt) || !kind_ok(kind))
        return NAN;
    flags = mpfr_flags_save();
    w = abl_mpfr_range_widen();
    mpfr_init2(r, 53);
    tau_wide(r, fmt, kind, MPFR_RNDN);
    d = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clear(r);
    abl_mpfr_range_restore(w);
    mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
    return d;
}

abl_status abl_threshold_string(const abl_format *fmt, abl_tau_kind kind, int decimals, char **out)
{
    mpfr_t lo, hi;
    mpfr_prec_t prec;
    mpfr_flags_t flags;
    abl_mpfr_range w;
    abl_status st = ABL_ERR_UNSUPPORTED;

    if (!out || decimals < 0 || decimals > 1000 || !format_ok(fmt) ||
        !kind_ok(kind))
        return ABL_ERR_INVALID_ARGUMENT;
    /*
     * log2(10) < 3.33 bits per decimal plus a small margin; wide integer parts (custom formats)
     * or unlucky digits just cost one more doubling, which also keeps that path exercised.
     */
    prec = (mpfr_prec_t)decimals * 333 / 100 + 16;
    flags = mpfr_flags_save();
    w = abl_mpfr_range_widen();
    mpfr_init2(lo, prec);
    mpfr_init2(hi, prec);
    for (; prec <= MAX_ZIV_PREC; prec *= 2) {
        char *slo = NULL, *shi = NULL;
        int same;

        mpfr_set_prec(lo, prec);
        mpfr_set_prec(hi, prec);
        /* lo <= tau <= hi, so if both round to the same decimal text, tau does too. */
        tau_wide(lo, fmt, kind, MPFR_RNDD);
        tau_wide(hi, fmt, kind, MPFR_RNDU);
        if (mpfr_asprintf(&slo, "%.*RNf", decimals, lo) < 0 ||
            mpfr_asprintf(&shi, "%.*RNf", decimals, hi) < 0) {
            if (slo)
                mpfr_free_str(slo);
            st = ABL_ERR_NO_MEMORY;
            break;
        }
        same = strcmp(slo, shi) == 0;
        if (same) {
            *out = abl_strf("%s", slo);
            st = *out != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
        }
        mpfr_free_str(slo);
        mpfr_free_str(shi);
        if (same)
            break;
    }
    mpfr_clear(lo);
    mpfr_clear(hi);
    abl_mpfr_range_restore(w);
    mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
    return st;
}
