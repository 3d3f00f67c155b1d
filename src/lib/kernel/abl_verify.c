/* alibi-blind: proof of the thresholds by emulating exp in each format with MPFR (spec §2, §3). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/kernel/verify.h"
#include "abl_internal.h"
#include "report/abl_report_internal.h"
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

/* Precision cap of the tau enclosure; reached only if tau were a representable number. */
#define MAX_TAU_PREC ((mpfr_prec_t)1 << 16)

const char *abl_exp_class_name(abl_exp_class c)
{
    switch (c) {
    case ABL_EXP_ZERO: return "zero";
    case ABL_EXP_SUBNORMAL: return "subnormal";
    case ABL_EXP_NORMAL: return "normal";
    case ABL_EXP_OVERFLOW: return "overflow";
    default: return NULL;
    }
}

/* ------------------------------------------------------------------ formats and encodings */

/* A format prepared for emulation; every mpfr_t has precision p. */
typedef struct fmt_info {
    const abl_format *f;
    int x_bits, m_bits, bits, p;
    long bias;
    uint64_t cmax;               /* magnitude code of the largest finite */
    mpfr_exp_t narrow_emin, narrow_emax;
    mpfr_t max_finite;
} fmt_info;

int abl_verify_format_bits(const abl_format *fmt)
{
    return fmt ? 1 + fmt->exp_bits + fmt->man_bits : 0;
}

/* Checks that the format's fields describe its encoding (caller-built formats included). */
static abl_status info_init(fmt_info *fi, const abl_format *f)
{
    memset(fi, 0, sizeof *fi);
    if (f == NULL || f->exp_bits < 1 || f->man_bits < 1 || f->precision != f->man_bits + 1)
        return ABL_ERR_INVALID_ARGUMENT;
    if (abl_verify_format_bits(f) > ABL_VERIFY_MAX_BITS || f->exp_bits > 30)
        return ABL_ERR_UNSUPPORTED;
    fi->f = f;
    fi->x_bits = f->exp_bits;
    fi->m_bits = f->man_bits;
    fi->bits = abl_verify_format_bits(f);
    fi->p = f->precision;
    fi->bias = 1 - f->emin;
    long etop = (1L << f->exp_bits) - 1;
    long efinite = (f->flags & ABL_FMT_HAS_INF) ? etop - 1 : etop;
    /* fn formats (NaN, -0, no Inf) lose the all-ones pattern of the top binade to NaN. */
    unsigned deficit = ((f->flags & ABL_FMT_HAS_NAN) && (f->flags & ABL_FMT_NEG_ZERO) &&
                        !(f->flags & ABL_FMT_HAS_INF)) ? 1u : 0u;
    if (f->emax != efinite - fi->bias || f->max_deficit != deficit || efinite < 1)
        return ABL_ERR_UNSUPPORTED;
    uint64_t mmask = (f->man_bits >= 64) ? ~(uint64_t)0 : (((uint64_t)1 << f->man_bits) - 1);
    fi->cmax = ((uint64_t)efinite << f->man_bits) | (mmask - deficit);
    fi->narrow_emin = (mpfr_exp_t)(f->emin - fi->p + 2);
    fi->narrow_emax = (mpfr_exp_t)(f->emax + 1);
    mpfr_init2(fi->max_finite, fi->p);
    /* (2^p - 1 - deficit) * 2^(emax - p + 1) */
    mpfr_set_ui_2exp(fi->max_finite, 1, fi->p, MPFR_RNDN);
    mpfr_sub_ui(fi->max_finite, fi->max_finite, 1 + deficit, MPFR_RNDN);
    mpfr_mul_2si(fi->max_finite, fi->max_finite, f->emax - fi->p + 1, MPFR_RNDN);
    return ABL_OK;
}

static void info_clear(fmt_info *fi)
{
    if (fi->f != NULL)
        mpfr_clear(fi->max_finite);
    fi->f = NULL;
}

/* x = v * 2^e exactly (v has at most p <= 64 significant bits, x has precision >= p). */
static void set_u64_2exp(mpfr_t x, uint64_t v, long e)
{
    mpfr_set_ui(x, (unsigned long)(v >> 32), MPFR_RNDN);
    mpfr_mul_2ui(x, x, 32, MPFR_RNDN);
    mpfr_add_ui(x, x, (unsigned long)(v & 0xFFFFFFFFu), MPFR_RNDN);
    mpfr_mul_2si(x, x, e, MPFR_RNDN);
}

/* Value of an encoding; 0 for Inf/NaN patterns. The caller's range must hold the format. */
static int decode(const fmt_info *fi, uint64_t bits, mpfr_t x)
{
    const abl_format *f = fi->f;
    int sign = (int)((bits >> (fi->bits - 1)) & 1u);
    uint64_t mag = bits & ((((uint64_t)1) << (fi->bits - 1)) - 1);
    uint64_t e = mag >> fi->m_bits, m = mag & ((((uint64_t)1) << fi->m_bits) - 1);
    uint64_t etop = (((uint64_t)1) << fi->x_bits) - 1;
    uint64_t mtop = (((uint64_t)1) << fi->m_bits) - 1;

    if ((f->flags & ABL_FMT_HAS_INF) && e == etop)
        return 0;
    if ((f->flags & ABL_FMT_HAS_NAN) && !(f->flags & ABL_FMT_HAS_INF)) {
        if ((f->flags & ABL_FMT_NEG_ZERO) && e == etop && m == mtop)
            return 0;   /* fn: S.1..1.1..1 */
        if (!(f->flags & ABL_FMT_NEG_ZERO) && sign && mag == 0)
            return 0;   /* fnuz: the -0 pattern is the NaN */
    }
    if (e == 0)
        set_u64_2exp(x, m, f->emin - fi->m_bits);
    else
        set_u64_2exp(x, m | (mtop + 1), (long)e - fi->bias - fi->m_bits);
    if (sign)
        mpfr_neg(x, x, MPFR_RNDN);
    return 1;
}

/*
 * Finite values in increasing order: position u in [0, 2 cmax] stands for -cmax + u on the scale of
 * magnitude codes, so -0 and +0 share the middle position (both are 0).
 */
static uint64_t position_bits(const fmt_info *fi, uint64_t u)
{
    if (u >= fi->cmax)
        return u - fi->cmax;
    return (((uint64_t)1) << (fi->bits - 1)) | (fi->cmax - u);
}

static uint64_t bits_position(const fmt_info *fi, uint64_t bits)
{
    uint64_t sign = ((uint64_t)1) << (fi->bits - 1);
    uint64_t mag = bits & (sign - 1);
    return (bits & sign) ? fi->cmax - mag : fi->cmax + mag;
}

abl_status abl_verify_decode(const abl_format *fmt, uint64_t bits, mpfr_t x, int *finite)
{
    fmt_info fi;
    abl_status st = info_init(&fi, fmt);
    if (st != ABL_OK)
        return st;
    if (x == NULL || finite == NULL || mpfr_get_prec(x) < fi.p ||
        (fi.bits < 64 && bits >> fi.bits != 0)) {
        info_clear(&fi);
        return ABL_ERR_INVALID_ARGUMENT;
    }
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    *finite = decode(&fi, bits, x);
    if (!*finite)
        mpfr_set_nan(x);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    /* Like any MPFR result, x obeys the caller's range (every format fits the default one). */
    mpfr_check_range(x, 0, MPFR_RNDN);
    info_clear(&fi);
    return ABL_OK;
}

/* ------------------------------------------------------------------ the emulated exponential */

/*
 * spec §2 recipe; the widest range must be active. Rounding in the wide range first, then
 * check_range and subnormalize in the format's range, gives a single correct rounding.
 */
static abl_exp_class emulate(mpfr_t y, const fmt_info *fi, const mpfr_t x, mpfr_rnd_t rnd)
{
    mpfr_exp_t wmin = mpfr_get_emin(), wmax = mpfr_get_emax();
    int t = mpfr_exp(y, x, rnd);
    mpfr_set_emin(fi->narrow_emin);
    mpfr_set_emax(fi->narrow_emax);
    t = mpfr_check_range(y, t, rnd);
    mpfr_subnormalize(y, t, rnd);
    mpfr_set_emin(wmin);
    mpfr_set_emax(wmax);

    if (mpfr_inf_p(y))
        return ABL_EXP_OVERFLOW;
    if (mpfr_zero_p(y))
        return ABL_EXP_ZERO;
    if (mpfr_cmp_ui_2exp(y, 1, fi->f->emin) < 0)
        return ABL_EXP_SUBNORMAL;
    if (mpfr_cmp(y, fi->max_finite) > 0) {
        /* Only fp8-e4m3fn-like formats: 480 is in MPFR's range but is the NaN pattern. */
        if (rnd == MPFR_RNDZ || rnd == MPFR_RNDD) {
            mpfr_set(y, fi->max_finite, MPFR_RNDN);
            return ABL_EXP_NORMAL;
        }
        mpfr_set_inf(y, 1);
        return ABL_EXP_OVERFLOW;
    }
    return ABL_EXP_NORMAL;
}

abl_status abl_verify_exp(mpfr_t rop, const abl_format *fmt, const mpfr_t x, mpfr_rnd_t rnd, abl_exp_class *cls)
{
    if (rop == NULL || x == NULL || cls == NULL || mpfr_nan_p(x) ||
        (rnd != MPFR_RNDN && rnd != MPFR_RNDZ && rnd != MPFR_RNDU && rnd != MPFR_RNDD))
        return ABL_ERR_INVALID_ARGUMENT;
    fmt_info fi;
    abl_status st = info_init(&fi, fmt);
    if (st != ABL_OK)
        return st;
    if (mpfr_get_prec(rop) != fi.p) {
        info_clear(&fi);
        return ABL_ERR_INVALID_ARGUMENT;
    }
    mpfr_flags_t flags = mpfr_flags_save();
    abl_mpfr_range w = abl_mpfr_range_widen();
    *cls = emulate(rop, &fi, x, rnd);
    abl_mpfr_range_restore(w);
    mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
    info_clear(&fi);
    return ABL_OK;
}

/* ------------------------------------------------------------------ experiments */

/* The six experiments: the five kinds, then FTZ applied after RNE rounding. */
#define N_EXPERIMENTS (ABL_TAU_KIND_COUNT + 1)
#define FTZ_AFTER ABL_TAU_KIND_COUNT

static const mpfr_rnd_t k_rounding[N_EXPERIMENTS] = {
    MPFR_RNDZ,  /* subnormal: RZ gives 0 iff exp(x) < smallest subnormal */
    MPFR_RNDN,  /* rn-zero */
    MPFR_RNDZ,  /* ftz: RZ lands below the smallest normal iff exp(x) does */
    MPFR_RNDU,  /* max: RU overflows iff exp(x) > largest finite */
    MPFR_RNDN,  /* rn-overflow */
    MPFR_RNDN,  /* FTZ after rounding */
};

/* Lower class of experiment k for a class of exp(x) rounded with k_rounding[k]. */
static int is_lower(int k, abl_exp_class c)
{
    switch (k) {
    case ABL_TAU_SUBNORMAL:
    case ABL_TAU_RN_ZERO:
        return c == ABL_EXP_ZERO;
    case ABL_TAU_FTZ:
    case FTZ_AFTER:
        return c == ABL_EXP_ZERO || c == ABL_EXP_SUBNORMAL;
    default:
        return c != ABL_EXP_OVERFLOW;
    }
}

/* Claim "lower iff x <= tau" (1) or "lower iff x < tau" (0). Ties exp(x) = boundary need x = 0. */
static int lower_inclusive(const abl_format *f, int k)
{
    switch (k) {
    case ABL_TAU_RN_ZERO:
    case ABL_TAU_MAX:
        return 1;
    case ABL_TAU_RN_OVERFLOW:
        /* An even largest significand (e4m3fn's 448) wins the tie at max + ulp/2. */
        return f->max_deficit != 0;
    default:
        return 0;
    }
}

/* Classes of one input under the three roundings, computed lazily. */
typedef struct probe {
    const fmt_info *fi;
    mpfr_t x, y;
    abl_exp_class cls[3];
    int have[3];
    int rz_below_max;        /* the RZ result is below the largest finite */
    uint64_t *evaluations;
} probe;

static int rnd_slot(mpfr_rnd_t r)
{
    return r == MPFR_RNDN ? 0 : r == MPFR_RNDZ ? 1 : 2;
}

static abl_exp_class probe_class(probe *pr, mpfr_rnd_t r)
{
    int s = rnd_slot(r);
    if (!pr->have[s]) {
        pr->cls[s] = emulate(pr->y, pr->fi, pr->x, r);
        pr->have[s] = 1;
        (*pr->evaluations)++;
        if (r == MPFR_RNDZ)
            pr->rz_below_max = mpfr_cmp(pr->y, pr->fi->max_finite) < 0;
    }
    return pr->cls[s];
}

/* Returns 0 for an Inf/NaN pattern. */
static int probe_set(probe *pr, uint64_t bits)
{
    pr->have[0] = pr->have[1] = pr->have[2] = 0;
    return decode(pr->fi, bits, pr->x);
}

static int probe_lower(probe *pr, int k)
{
    /*
     * RZ below the largest finite means exp(x) is below it (the largest finite is representable),
     * so RU cannot overflow: saves the third evaluation for almost every input.
     */
    if (k == ABL_TAU_MAX && pr->have[rnd_slot(MPFR_RNDZ)] && pr->rz_below_max)
        return 1;
    return is_lower(k, probe_class(pr, k_rounding[k]));
}

static void probe_init(probe *pr, const fmt_info *fi, uint64_t *evaluations)
{
    memset(pr, 0, sizeof *pr);
    pr->fi = fi;
    pr->evaluations = evaluations;
    mpfr_init2(pr->x, fi->p);
    mpfr_init2(pr->y, fi->p);
}

static void probe_clear(probe *pr)
{
    mpfr_clear(pr->x);
    mpfr_clear(pr->y);
}

typedef struct bracket {
    int has_below, has_above, separated;
    uint64_t below_pos, above_pos;
} bracket;

static void exhaustive(const fmt_info *fi, abl_verify_result *res, bracket br[N_EXPERIMENTS])
{
    probe pr;
    probe_init(&pr, fi, &res->evaluations);
    for (int k = 0; k < N_EXPERIMENTS; k++)
        br[k] = (bracket){0, 0, 1, 0, 0};
    uint64_t n = ((uint64_t)1) << fi->bits;
    for (uint64_t bits = 0; bits < n; bits++) {
        if (!probe_set(&pr, bits))
            continue;
        res->inputs++;
        uint64_t pos = bits_position(fi, bits);
        abl_exp_class rn = probe_class(&pr, MPFR_RNDN);
        res->class_count[rn]++;
        if (rn == ABL_EXP_ZERO || rn == ABL_EXP_SUBNORMAL)
            res->ftz_zero_count++;
        for (int k = 0; k < N_EXPERIMENTS; k++) {
            bracket *b = &br[k];
            if (probe_lower(&pr, k)) {
                if (!b->has_below || pos > b->below_pos)
                    b->below_pos = pos;
                b->has_below = 1;
            } else {
                if (!b->has_above || pos < b->above_pos)
                    b->above_pos = pos;
                b->has_above = 1;
            }
        }
    }
    /* Every input was classified, so separated classes are also adjacent. */
    for (int k = 0; k < N_EXPERIMENTS; k++)
        if (br[k].has_below && br[k].has_above && br[k].below_pos + 1 != br[k].above_pos)
            br[k].separated = 0;
    probe_clear(&pr);
}

/* Monotone in x: bisect over positions 0 .. 2 cmax, keeping lower at lo and upper at hi. */
static void bisection(const fmt_info *fi, abl_verify_result *res, bracket br[N_EXPERIMENTS])
{
    probe pr;
    probe_init(&pr, fi, &res->evaluations);
    uint64_t top = 2 * fi->cmax;
    for (int k = 0; k < N_EXPERIMENTS; k++) {
        bracket *b = &br[k];
        *b = (bracket){0, 0, 1, 0, 0};
        probe_set(&pr, position_bits(fi, 0));
        int low_end = probe_lower(&pr, k);
        probe_set(&pr, position_bits(fi, top));
        int high_end = probe_lower(&pr, k);
        if (!low_end) {
            b->has_above = 1;
            b->above_pos = 0;
            b->separated = !high_end;
            continue;
        }
        if (high_end) {
            b->has_below = 1;
            b->below_pos = top;
            continue;
        }
        uint64_t lo = 0, hi = top;
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            probe_set(&pr, position_bits(fi, mid));
            if (probe_lower(&pr, k))
                lo = mid;
            else
                hi = mid;
        }
        b->has_below = b->has_above = 1;
        b->below_pos = lo;
        b->above_pos = hi;
    }
    probe_clear(&pr);
}

/* ------------------------------------------------------------------ agreement with the closed form */

/* 1: the claim holds for every tau in [lo, hi]; 0: for none; -1: undecided at this precision. */
static int check_interval(const fmt_info *fi, const abl_verify_bound *b, const mpfr_t lo, const mpfr_t hi)
{
    mpfr_t xb, xa;
    mpfr_init2(xb, fi->p);
    mpfr_init2(xa, fi->p);
    int below_lo = 1, below_hi = 1, above_lo = 1, above_hi = 1;
    if (b->has_below) {
        decode(fi, b->below_bits, xb);
        /* inclusive: below <= tau; strict: below < tau */
        below_lo = b->lower_inclusive ? mpfr_lessequal_p(xb, lo) : mpfr_less_p(xb, lo);
        below_hi = b->lower_inclusive ? mpfr_lessequal_p(xb, hi) : mpfr_less_p(xb, hi);
    }
    if (b->has_above) {
        decode(fi, b->above_bits, xa);
        /* inclusive: tau < above; strict: tau <= above */
        above_lo = b->lower_inclusive ? mpfr_less_p(lo, xa) : mpfr_lessequal_p(lo, xa);
        above_hi = b->lower_inclusive ? mpfr_less_p(hi, xa) : mpfr_lessequal_p(hi, xa);
    }
    mpfr_clear(xb);
    mpfr_clear(xa);
    /* below_ok grows with tau, above_ok shrinks: the set of good tau is an interval. */
    if (below_lo && above_hi)
        return 1;
    if (!below_hi || !above_lo)
        return 0;
    return -1;
}

int abl_verify_bound_holds(const abl_format *fmt, const abl_verify_bound *b, const mpfr_t tau)
{
    fmt_info fi;
    if (b == NULL || tau == NULL || mpfr_nan_p(tau) || info_init(&fi, fmt) != ABL_OK)
        return 0;
    abl_mpfr_range w = abl_mpfr_range_widen();
    int r = check_interval(&fi, b, tau, tau) == 1;
    abl_mpfr_range_restore(w);
    info_clear(&fi);
    return r;
}

/* lo <= ln((2^p - 1) * 2^(emin - p)) <= hi: the boundary of FTZ applied after RNE rounding. */
static void ftz_after_tau(mpfr_t lo, mpfr_t hi, const abl_format *f)
{
    mpfr_t v;
    mpfr_init2(v, f->precision + 2);
    mpfr_set_ui_2exp(v, 1, f->precision, MPFR_RNDN);
    mpfr_sub_ui(v, v, 1, MPFR_RNDN);
    mpfr_mul_2si(v, v, f->emin - f->precision, MPFR_RNDN);
    mpfr_log(lo, v, MPFR_RNDD);
    mpfr_log(hi, v, MPFR_RNDU);
    mpfr_clear(v);
}

/* Ziv: widen the enclosure of tau until the comparison is certain. The wide range is active. */
static int agrees_with_tau(const fmt_info *fi, const abl_verify_bound *b, int k)
{
    int r = -1;
    for (mpfr_prec_t prec = 2 * fi->p + 64; r < 0 && prec <= MAX_TAU_PREC; prec *= 2) {
        mpfr_t lo, hi;
        mpfr_init2(lo, prec);
        mpfr_init2(hi, prec);
        if (k == FTZ_AFTER) {
            ftz_after_tau(lo, hi, fi->f);
        } else {
            abl_threshold_mpfr(lo, fi->f, (abl_tau_kind)k, MPFR_RNDD);
            abl_threshold_mpfr(hi, fi->f, (abl_tau_kind)k, MPFR_RNDU);
        }
        r = check_interval(fi, b, lo, hi);
        mpfr_clear(lo);
        mpfr_clear(hi);
    }
    return r == 1;
}

abl_status abl_verify_format(const abl_format *fmt, abl_verify_result *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    fmt_info fi;
    abl_status st = info_init(&fi, fmt);
    if (st != ABL_OK)
        return st;
    memset(out, 0, sizeof *out);
    out->format = *fmt;
    out->method = fi.bits <= ABL_VERIFY_EXHAUSTIVE_BITS ? ABL_VERIFY_EXHAUSTIVE : ABL_VERIFY_BISECTION;

    mpfr_flags_t flags = mpfr_flags_save();
    abl_mpfr_range w = abl_mpfr_range_widen();
    bracket br[N_EXPERIMENTS];
    if (out->method == ABL_VERIFY_EXHAUSTIVE)
        exhaustive(&fi, out, br);
    else
        bisection(&fi, out, br);

    out->agrees = 1;
    for (int k = 0; k < N_EXPERIMENTS; k++) {
        abl_verify_bound *b = k == FTZ_AFTER ? &out->ftz_after_rounding : &out->bound[k];
        b->kind = k == FTZ_AFTER ? ABL_TAU_FTZ : (abl_tau_kind)k;
        b->rounding = k_rounding[k];
        b->lower_inclusive = lower_inclusive(fmt, k);
        b->has_below = br[k].has_below;
        b->has_above = br[k].has_above;
        b->below_bits = position_bits(&fi, br[k].below_pos);
        b->above_bits = position_bits(&fi, br[k].above_pos);
        b->agrees = br[k].separated && agrees_with_tau(&fi, b, k);
        out->agrees &= b->agrees;
    }
    out->ftz_after_rounding_same =
        br[FTZ_AFTER].has_below == br[ABL_TAU_FTZ].has_below && br[FTZ_AFTER].has_above == br[ABL_TAU_FTZ].has_above &&
        br[FTZ_AFTER].below_pos == br[ABL_TAU_FTZ].below_pos && br[FTZ_AFTER].above_pos == br[ABL_TAU_FTZ].above_pos;
    abl_mpfr_range_restore(w);
    mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
    info_clear(&fi);
    return ABL_OK;
}

/* ------------------------------------------------------------------ exact text of an input */

/* x exactly in fixed point: a dyadic with f fractional bits has at most f decimals. */
static abl_status exact_text(const mpfr_t x, char **out)
{
    if (mpfr_zero_p(x)) {
        *out = strdup(mpfr_signbit(x) ? "-0" : "0");
        return *out != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    }
    long frac = (long)mpfr_get_prec(x) - (long)mpfr_get_exp(x);
    if (frac < 0)
        frac = 0;
    char *s = NULL;
    if (mpfr_asprintf(&s, "%.*Rf", (int)frac, x) < 0)
        return ABL_ERR_NO_MEMORY;
    size_t n = strlen(s);
    if (strchr(s, '.') != NULL) {
        while (n > 0 && s[n - 1] == '0')
            s[--n] = '\0';
        if (n > 0 && s[n - 1] == '.')
            s[--n] = '\0';
    }
    *out = strdup(s);
    mpfr_free_str(s);
    return *out != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
}

abl_status abl_verify_value_text(const abl_format *fmt, uint64_t bits, char **out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (fmt == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    mpfr_t x;
    mpfr_init2(x, fmt->precision > 0 && fmt->precision <= 4096 ? fmt->precision : 2);
    int finite = 0;
    abl_status st = abl_verify_decode(fmt, bits, x, &finite);
    if (st == ABL_OK)
        st = finite ? exact_text(x, out) : ABL_ERR_INVALID_ARGUMENT;
    mpfr_clear(x);
    return st;
}

/* ------------------------------------------------------------------ host libm (binary32) */

void abl_verify_libm_init(abl_verify_libm *out)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Records one result of one implementation (0 reference, 1 expf, 2 exp2f) in the boundary trackers. */
static void libm_track(abl_verify_libm *out, int i, float x, float r)
{
    if (r == 0.0f) {
        if (!(out->have_zero_bracket[i] & 1) || x > out->zero_last[i])
            out->zero_last[i] = x;
        out->have_zero_bracket[i] |= 1;
    } else {
        if (!(out->have_zero_bracket[i] & 2) || x < out->nonzero_first[i])
            out->nonzero_first[i] = x;
        out->have_zero_bracket[i] |= 2;
    }
    if (isinf(r)) {
        if (!(out->have_inf_bracket[i] & 2) || x < out->inf_first[i])
            out->inf_first[i] = x;
        out->have_inf_bracket[i] |= 2;
    } else {
        if (!(out->have_inf_bracket[i] & 1) || x > out->finite_last[i])
            out->finite_last[i] = x;
        out->have_inf_bracket[i] |= 1;
    }
}

/* The kernels' form: exp(x) = exp2(x * log2(e)), the product rounded to binary32. */
static float exp2f_form(float x)
{
    volatile float log2e = 1.44269504088896340736f;
    return exp2f(x * log2e);
}

abl_status abl_verify_libm_scan(float lo, float hi, abl_verify_libm *out)
{
    if (out == NULL || !isfinite(lo) || !isfinite(hi) || !(lo <= hi))
        return ABL_ERR_INVALID_ARGUMENT;
    abl_format f32;
    abl_format_lookup("fp32", &f32);
    fmt_info fi;
    abl_status st = info_init(&fi, &f32);
    if (st != ABL_OK)
        return st;
    mpfr_flags_t flags = mpfr_flags_save();
    abl_mpfr_range w = abl_mpfr_range_widen();
    mpfr_t x, y;
    mpfr_init2(x, 24);
    mpfr_init2(y, 24);
    for (float v = lo;; v = nextafterf(v, INFINITY)) {
        mpfr_set_flt(x, v, MPFR_RNDN);
        abl_exp_class c = emulate(y, &fi, x, MPFR_RNDN);
        float ref = mpfr_get_flt(y, MPFR_RNDN);   /* exact: y is a binary32 value or +Inf */
        int tiny = c == ABL_EXP_ZERO || c == ABL_EXP_SUBNORMAL;
        float e1 = expf(v), e2 = exp2f_form(v);
        out->inputs++;
        if (float_bits(e1) != float_bits(ref)) {
            if (out->expf_nfirst < 4)
                out->expf_first[out->expf_nfirst++] = v;
            out->expf_differs++;
            out->expf_differs_tiny += tiny;
        }
        if (float_bits(e2) != float_bits(ref)) {
            if (out->exp2f_nfirst < 4)
                out->exp2f_first[out->exp2f_nfirst++] = v;
            out->exp2f_differs++;
            out->exp2f_differs_tiny += tiny;
        }
        libm_track(out, 0, v, ref);
        libm_track(out, 1, v, e1);
        libm_track(out, 2, v, e2);
        if (v >= hi)
            break;
    }
    mpfr_clear(x);
    mpfr_clear(y);
    abl_mpfr_range_restore(w);
    mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
    info_clear(&fi);
    return ABL_OK;
}

/* ------------------------------------------------------------------ the report */

static const char *claim_text(const abl_format *f, abl_tau_kind kind)
{
    switch (kind) {
    case ABL_TAU_SUBNORMAL: return "RZ: exp(x) = 0 iff x < τ";
    case ABL_TAU_RN_ZERO: return "RN: exp(x) = 0 iff x ≤ τ";
    case ABL_TAU_FTZ: return "FTZ: exp(x) flushed iff x < τ";
    case ABL_TAU_MAX: return "RU: exp(x) overflows iff x > τ";
    default: return f->max_deficit != 0 ? "RN: exp(x) overflows iff x > τ" : "RN: exp(x) overflows iff x ≥ τ";
    }
}

/* "-92.5 (0xc2b9)" for text, {"x": -92.5, "bits": "0xc2b9"} for JSON. */
static abl_status input_cells(const abl_format *f, int present, uint64_t bits, char **t, char **j)
{
    *t = *j = NULL;
    char *v = NULL;
    abl_status st = present ? abl_verify_value_text(f, bits, &v) : ABL_OK;
    if (st != ABL_OK)
        return st;
    int digits = (abl_verify_format_bits(f) + 3) / 4;
    *t = present ? abl_strf("%s (0x%0*llx)", v, digits, (unsigned long long)bits) : strdup("— (none)");
    *j = present ? abl_strf("{\"x\": %s%s, \"bits\": \"0x%0*llx\"}", v, abl_json_real_suffix(v), digits,
                                (unsigned long long)bits)
                 : strdup("null");
    free(v);
    if (*t == NULL || *j == NULL) {
        free(*t);
        free(*j);
        *t = *j = NULL;
        return ABL_ERR_NO_MEMORY;
    }
    return ABL_OK;
}

/* One input cell of a row (text and JSON). */
static abl_status input_cell(abl_report *r, const abl_format *f, int present, uint64_t bits)
{
    char *t, *j;
    abl_status st = input_cells(f, present, bits, &t, &j);
    if (st == ABL_OK)
        abl_report_cell(r, t, j, NULL);
    free(t);
    free(j);
    return st;
}

/* One row of the table. */
static abl_status add_row(abl_report *r, const abl_verify_result *res, abl_tau_kind kind)
{
    const abl_format *f = &res->format;
    const abl_verify_bound *b = &res->bound[kind];
    char *tau = NULL;
    abl_status st = abl_threshold_string(f, kind, 10, &tau);
    if (st != ABL_OK)
        return st;
    abl_report_row(r);
    abl_report_cell(r, f->name, NULL, NULL);
    abl_report_cell(r, abl_tau_kind_name(kind), NULL, NULL);
    abl_report_cell(r, claim_text(f, kind), NULL, NULL);
    abl_report_cell(r, tau, tau, NULL);
    free(tau);
    if ((st = input_cell(r, f, b->has_below, b->below_bits)) != ABL_OK)
        return st;
    if ((st = input_cell(r, f, b->has_above, b->above_bits)) != ABL_OK)
        return st;
    return abl_report_cell(r, b->agrees ? "yes" : "NO", b->agrees ? "true" : "false", NULL);
}

/* Exact text of a binary32 value, with its bits, malloc'd (NULL: out of memory). */
static char *float_text(float v)
{
    abl_format f32;
    abl_format_lookup("fp32", &f32);
    if (isinf(v))
        return abl_strf("%sInf", v < 0 ? "-" : "+");
    char *d = NULL, *out;
    if (abl_verify_value_text(&f32, float_bits(v), &d) != ABL_OK)
        out = abl_strf("%.9g (0x%08lx)", (double)v, (unsigned long)float_bits(v));
    else
        out = abl_strf("%s (0x%08lx)", d, (unsigned long)float_bits(v));
    free(d);
    return out;
}

/* One "... at x = A, ... at x = B" clause of the brackets (a text that ran out of memory records it). */
static void bracket_add(abl_text *t, const char *fmt, float a, float b, const char *tail)
{
    char *ta = float_text(a), *tb = float_text(b);
    if (ta == NULL || tb == NULL)
        t->oom = 1;
    else
        abl_text_add(t, fmt, ta, tb, tail);
    free(ta);
    free(tb);
}

/* "last 0 at x = …, first non-zero at x = …; last finite at …, first +Inf at …" */
static void libm_brackets(const abl_verify_libm *l, int i, abl_text *t)
{
    if (l->have_zero_bracket[i] == 3) {
        bracket_add(t, "last 0 at x = %s, first non-zero at x = %s%s", l->zero_last[i], l->nonzero_first[i],
                    l->zero_last[i] < l->nonzero_first[i] ? "" : " (not monotone)");
    } else {
        abl_text_add(t, "no zero boundary in the scanned range");
    }
    if (l->have_inf_bracket[i] == 3) {
        bracket_add(t, "; last finite at x = %s, first +Inf at x = %s%s", l->finite_last[i], l->inf_first[i],
                    l->finite_last[i] < l->inf_first[i] ? "" : " (not monotone)");
    } else {
        abl_text_add(t, "; no overflow boundary in the scanned range");
    }
}

static int same_brackets(const abl_verify_libm *l, int i)
{
    return l->have_zero_bracket[i] == l->have_zero_bracket[0] && l->have_inf_bracket[i] == l->have_inf_bracket[0] &&
           l->zero_last[i] == l->zero_last[0] && l->nonzero_first[i] == l->nonzero_first[0] &&
           l->finite_last[i] == l->finite_last[0] && l->inf_first[i] == l->inf_first[0];
}

static void libm_impl_line(const abl_verify_libm *l, int i, abl_text *t, abl_text *j)
{
    uint64_t n = i == 1 ? l->expf_differs : l->exp2f_differs;
    uint64_t tiny = i == 1 ? l->expf_differs_tiny : l->exp2f_differs_tiny;
    unsigned nf = i == 1 ? l->expf_nfirst : l->exp2f_nfirst;
    const float *first = i == 1 ? l->expf_first : l->exp2f_first;
    abl_text_add(t, "%llu of %llu inputs differ from the correctly rounded result (%llu of them where it is subnormal or 0)",
           (unsigned long long)n, (unsigned long long)l->inputs, (unsigned long long)tiny);
    abl_text_add(j, "{\"differs\": %llu, \"differs_subnormal_or_zero\": %llu, \"first\": [", (unsigned long long)n,
           (unsigned long long)tiny);
    for (unsigned k = 0; k < nf && k < 3; k++) {
        float x = first[k];
        float host = i == 1 ? expf(x) : exp2f_form(x);
        mpfr_t mx, my;
        abl_format f32;
        fmt_info fi;
        abl_format_lookup("fp32", &f32);
        info_init(&fi, &f32);
        mpfr_init2(mx, 24);
        mpfr_init2(my, 24);
        mpfr_flags_t flags = mpfr_flags_save();
        abl_mpfr_range w = abl_mpfr_range_widen();
        mpfr_set_flt(mx, x, MPFR_RNDN);
        emulate(my, &fi, mx, MPFR_RNDN);
        float ref = mpfr_get_flt(my, MPFR_RNDN);
        abl_mpfr_range_restore(w);
        mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
        mpfr_clear(mx);
        mpfr_clear(my);
        info_clear(&fi);
        char *a = float_text(x);
        if (a == NULL)
            t->oom = 1;
        else
            abl_text_add(t, "%s x = %s gives %.9g (0x%08lx), correctly rounded %.9g (0x%08lx)", k == 0 ? "; e.g." : ";",
                         a, (double)host, (unsigned long)float_bits(host), (double)ref, (unsigned long)float_bits(ref));
        free(a);
        abl_text_add(j, "%s{\"x\": \"0x%08lx\", \"host\": \"0x%08lx\", \"correct\": \"0x%08lx\"}", k ? ", " : "",
               (unsigned long)float_bits(x), (unsigned long)float_bits(host), (unsigned long)float_bits(ref));
    }
    abl_text_add(t, ". ");
    libm_brackets(l, i, t);
    int same = same_brackets(l, i);
    abl_text_add(t, same ? " (same as correctly rounded)" : " (DIFFERENT from correctly rounded)");
    abl_text_add(j, "], \"same_boundaries\": %s}", same ? "true" : "false");
}

static abl_status add_libm(abl_report *r)
{
    abl_verify_libm l;
    abl_verify_libm_init(&l);
    abl_status st = abl_verify_libm_scan(-104.0f, -87.0f, &l);
    if (st == ABL_OK)
        st = abl_verify_libm_scan(88.0f, 89.0f, &l);
    if (st != ABL_OK)
        return st;
    abl_text t = {0}, j = {0};
#if defined(__GLIBC__)
    abl_text_add(&t, "glibc %s; ", gnu_get_libc_version());
    abl_text_add(&j, "{\"libc\": \"glibc %s\", ", gnu_get_libc_version());
#else
    abl_text_add(&j, "{\"libc\": null, ");
#endif
    abl_text_add(&t, "every binary32 x in [-104, -87] and [88, 89] (%llu inputs) against MPFR's correctly rounded exp; "
               "informational: a host difference is not a disagreement and never makes verify exit 1",
           (unsigned long long)l.inputs);
    abl_text_add(&j, "\"ranges\": [[-104, -87], [88, 89]], \"inputs\": %llu, \"affects_exit_status\": false}",
           (unsigned long long)l.inputs);
    abl_report_summary(r, "libm", "host libm", abl_text_str(&t), abl_text_str(&j));
    t.n = j.n = 0;
    libm_brackets(&l, 0, &t);
    abl_report_summary(r, "libm_correctly_rounded", "correctly rounded exp (binary32)", abl_text_str(&t), NULL);
    t.n = j.n = 0;
    libm_impl_line(&l, 1, &t, &j);
    abl_report_summary(r, "libm_expf", "host expf", abl_text_str(&t), abl_text_str(&j));
    t.n = j.n = 0;
    libm_impl_line(&l, 2, &t, &j);
    abl_report_summary(r, "libm_exp2f", "host exp2f(x·log2 e)", abl_text_str(&t), abl_text_str(&j));
    st = (t.oom || j.oom) ? ABL_ERR_NO_MEMORY : ABL_OK;
    free(t.s);
    free(j.s);
    return st;
}

/* The texts of a verify report, accumulated format by format. */
typedef struct verify_texts {
    abl_text names, nj;    /* dtypes: text, JSON */
    abl_text mt, mj;       /* inputs: method per format, text, JSON */
    abl_text ct, cj;       /* classes of exp(x) (exhaustive formats), text, JSON */
    abl_text bis;          /* formats proved by bisection */
    abl_text same, diff;   /* FTZ after rounding: same boundary as ftz / the note where it differs */
    abl_text bad;          /* claims that disagree */
    size_t nbad;
    int agree, any_exhaustive, any_bisection, no_inf;
} verify_texts;

/* How format i was proved: the "dtypes", "inputs" and "classes" texts. */
static void texts_method(verify_texts *t, const abl_verify_result *v, size_t i)
{
    const char *name = v->format.name;
    abl_text_add(&t->names, "%s%s", i ? ", " : "", name);
    abl_text_add(&t->nj, "%s\"%s\"", i ? ", " : "[", name);
    if (v->method == ABL_VERIFY_EXHAUSTIVE) {
        abl_text_add(&t->mt, "%s%s: every finite input (%llu encodings, %llu emulated exp calls)", i ? "; " : "", name,
               (unsigned long long)v->inputs, (unsigned long long)v->evaluations);
        abl_text_add(&t->ct, "%s%s: %llu zero, %llu subnormal, %llu normal, %llu overflow (FTZ: %llu zero)",
               t->any_exhaustive ? "; " : "", name, (unsigned long long)v->class_count[ABL_EXP_ZERO],
               (unsigned long long)v->class_count[ABL_EXP_SUBNORMAL],
               (unsigned long long)v->class_count[ABL_EXP_NORMAL],
               (unsigned long long)v->class_count[ABL_EXP_OVERFLOW], (unsigned long long)v->ftz_zero_count);
        abl_text_add(&t->cj, "%s\"%s\": {\"zero\": %llu, \"subnormal\": %llu, \"normal\": %llu, \"overflow\": %llu, "
                       "\"ftz_zero\": %llu}",
               t->any_exhaustive ? ", " : "", name, (unsigned long long)v->class_count[ABL_EXP_ZERO],
               (unsigned long long)v->class_count[ABL_EXP_SUBNORMAL],
               (unsigned long long)v->class_count[ABL_EXP_NORMAL],
               (unsigned long long)v->class_count[ABL_EXP_OVERFLOW], (unsigned long long)v->ftz_zero_count);
        t->any_exhaustive = 1;
    } else {
        abl_text_add(&t->mt, "%s%s: bisection over the ordered encodings (%llu emulated exp calls)", i ? "; " : "", name,
               (unsigned long long)v->evaluations);
        abl_text_add(&t->bis, "%s%s", t->any_bisection ? ", " : "", name);
        t->any_bisection = 1;
    }
    abl_text_add(&t->mj, "%s\"%s\": {\"method\": \"%s\", \"inputs\": %llu, \"evaluations\": %llu}", i ? ", " : "", name,
           v->method == ABL_VERIFY_EXHAUSTIVE ? "exhaustive" : "bisection", (unsigned long long)v->inputs,
           (unsigned long long)v->evaluations);
    if (!(v->format.flags & ABL_FMT_HAS_INF))
        t->no_inf = 1;
}

/* Which claims of the format disagree (the five kinds and FTZ after rounding). */
static void texts_agreement(verify_texts *t, const abl_verify_result *v)
{
    const char *name = v->format.name;
    for (int k = 0; k < ABL_TAU_KIND_COUNT; k++) {
        if (!v->bound[k].agrees) {
            abl_text_add(&t->bad, "%s%s %s", t->nbad ? ", " : "", name, abl_tau_kind_name((abl_tau_kind)k));
            t->nbad++;
        }
    }
    if (!v->ftz_after_rounding.agrees) {
        abl_text_add(&t->bad, "%s%s ftz after rounding", t->nbad ? ", " : "", name);
        t->nbad++;
    }
    t->agree &= v->agrees;
}

/* FTZ applied after RN rounding: the same boundary as the ftz kind, or a note with the other one. */
static void texts_ftz_after_rounding(verify_texts *t, const abl_verify_result *v)
{
    const abl_verify_bound *fa = &v->ftz_after_rounding;
    if (v->ftz_after_rounding_same) {
        abl_text_add(&t->same, "%s%s", t->same.n ? ", " : "", v->format.name);
        return;
    }
    /* ln((2^p - 1) 2^(emin - p)) = ln(2^emin - 2^(emin - p)), 4 decimals for the note. */
    char *lo = NULL, *hi = NULL, *jl = NULL, *tau = NULL;
    mpfr_t a, b;
    mpfr_init2(a, 128);
    mpfr_init2(b, 128);
    mpfr_flags_t flags = mpfr_flags_save();
    abl_mpfr_range w = abl_mpfr_range_widen();
    ftz_after_tau(a, b, &v->format);
    if (mpfr_asprintf(&tau, "%.4RNf", a) < 0)
        tau = NULL;
    abl_mpfr_range_restore(w);
    mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
    mpfr_clear(a);
    mpfr_clear(b);
    input_cells(&v->format, fa->has_below, fa->below_bits, &lo, &jl);
    free(jl);
    input_cells(&v->format, fa->has_above, fa->above_bits, &hi, &jl);
    free(jl);
    if (tau == NULL || lo == NULL || hi == NULL)
        t->diff.oom = 1; /* texts_free reports it */
    else
        abl_text_add(&t->diff,
               "%s%s: if instead the subnormal result of RN rounding is flushed, exp(x) = 0 iff x < "
               "ln(2^emin - 2^(emin-p)) = %s…, %s by emulation: last flushed x = %s, first kept x = %s "
               "(an x just below the ftz τ rounds up to the smallest normal).",
               t->diff.n ? " " : "", v->format.name, tau, fa->agrees ? "proved" : "NOT confirmed", lo, hi);
    if (tau != NULL)
        mpfr_free_str(tau);
    free(lo);
    free(hi);
}

/* Frees the texts; returns non-zero if any of them ran out of memory. */
static int texts_free(verify_texts *t)
{
    abl_text *all[] = {&t->names, &t->nj, &t->mt, &t->mj, &t->ct, &t->cj, &t->bis, &t->same, &t->diff, &t->bad};
    int oom = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        oom |= all[i]->oom;
        free(all[i]->s);
    }
    return oom;
}

/* One row per format and threshold kind. */
static abl_status add_rows(abl_report *r, const abl_verify_result *res, size_t nformats)
{
    abl_report_column(r, "dtype", "dtype", ABL_ALIGN_LEFT);
    abl_report_column(r, "kind", "kind", ABL_ALIGN_LEFT);
    abl_report_column(r, "claim", "claim", ABL_ALIGN_LEFT);
    abl_report_column_explains(r);
    abl_report_column(r, "tau", "τ (closed form)", ABL_ALIGN_RIGHT);
    abl_report_column(r, "below", "last x below", ABL_ALIGN_RIGHT);
    abl_report_column(r, "above", "first x above", ABL_ALIGN_RIGHT);
    abl_report_column(r, "agrees", "agrees", ABL_ALIGN_LEFT);
    abl_status st = ABL_OK;
    for (size_t i = 0; i < nformats && st == ABL_OK; i++)
        for (int k = 0; k < ABL_TAU_KIND_COUNT && st == ABL_OK; k++)
            st = add_row(r, &res[i], (abl_tau_kind)k);
    return st;
}

/* The classes of exp(x), the verdict over all claims, and (with_libm) the host libm comparison. */
static abl_status add_summary(abl_report *r, const verify_texts *t, size_t nformats, int with_libm)
{
    if (t->any_exhaustive)
        abl_report_summary(r, "classes", "exp(x) rounded to nearest", abl_text_str(&t->ct), abl_text_str(&t->cj));
    size_t total = nformats * (ABL_TAU_KIND_COUNT + 1);
    char *s = t->agree ? abl_strf("all %zu claims hold (%zu thresholds and %zu FTZ-after-rounding check%s)", total,
                                  nformats * ABL_TAU_KIND_COUNT, nformats, nformats == 1 ? "" : "s")
                       : abl_strf("DISAGREEMENT in %zu of %zu claims", t->nbad, total);
    if (s == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_report_summary(r, "agrees", "agreement", s, t->agree ? "true" : "false");
    free(s);
    if (!t->agree)
        abl_report_summary(r, "disagreements", "disagreeing", abl_text_str(&t->bad), NULL);
    return with_libm ? add_libm(r) : ABL_OK;
}

/* What the columns mean, how the wide formats were proved, and FTZ after rounding. */
static void add_notes(abl_report *r, const verify_texts *t)
{
    abl_report_note(r, "RN, RZ, RU: exp(x) rounded once into the format (to nearest-even, toward zero, upward) "
                       "with gradual underflow, emulated exactly with MPFR (spec §2). RZ gives 0 iff exp(x) < "
                       "smallest subnormal; RU overflows iff exp(x) > largest finite; FTZ flushes iff exp(x) < "
                       "smallest normal (tininess before rounding; emulated as RZ below the smallest normal).");
    abl_report_note(r, "last x below: the largest representable x on the lower side (0, flushed or finite); first "
                       "x above: the next representable x, on the other side. A row agrees iff the two straddle "
                       "the MPFR enclosure of τ as its claim states (≤ or <), so the claim holds for every input.");
    if (t->no_inf)
        abl_report_note(r, "overflows: Inf; formats without Inf give NaN or saturate to the largest finite there.");
    if (t->any_bisection) {
        abl_text s = {0};
        abl_text_add(&s, "%s: bisection over the ordered encodings; exp and rounding are monotone, so "
                         "one boundary per claim, bracketed by adjacent representable inputs.", abl_text_str(&t->bis));
        abl_report_note(r, abl_text_str(&s));
        free(s.s);
    }
    if (t->same.n) {
        abl_text s = {0};
        abl_text_add(&s, "FTZ applied after RN rounding (a subnormal result flushed) has the same boundary for: %s.",
               abl_text_str(&t->same));
        abl_report_note(r, abl_text_str(&s));
        free(s.s);
    }
    if (t->diff.n)
        abl_report_note(r, abl_text_str(&t->diff));
    abl_report_note(r, "verify exits 1 on any disagreement with the closed form.");
}

abl_status abl_verify_report(const abl_format *formats, size_t nformats, int with_libm, abl_report **out,
                             int *all_agree)
{
    if (formats == NULL || nformats == 0 || out == NULL || all_agree == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_verify_result *res = calloc(nformats, sizeof *res);
    if (res == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = ABL_OK;
    for (size_t i = 0; i < nformats && st == ABL_OK; i++)
        st = abl_verify_format(&formats[i], &res[i]);
    abl_report *r = st == ABL_OK ? abl_report_new("Thresholds of exp proved by emulation (MPFR)", "thresholds") : NULL;
    if (st == ABL_OK && r == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st != ABL_OK) {
        free(res);
        return st;
    }

    verify_texts t = {.agree = 1};
    abl_text_add(&t.mj, "{");
    abl_text_add(&t.cj, "{");
    for (size_t i = 0; i < nformats; i++) {
        texts_method(&t, &res[i], i);
        texts_agreement(&t, &res[i]);
        texts_ftz_after_rounding(&t, &res[i]);
    }
    abl_text_add(&t.mj, "}");
    abl_text_add(&t.cj, "}");
    abl_text_add(&t.nj, "]");
    abl_report_meta(r, "dtypes", "dtypes", abl_text_str(&t.names), abl_text_str(&t.nj));
    abl_report_meta(r, "inputs", "inputs", abl_text_str(&t.mt), abl_text_str(&t.mj));

    st = add_rows(r, res, nformats);
    if (st == ABL_OK)
        st = add_summary(r, &t, nformats, with_libm);
    if (st == ABL_OK)
        add_notes(r, &t);
    int agree = t.agree;
    int oom = texts_free(&t);
    free(res);
    if (st == ABL_OK && oom)
        st = ABL_ERR_NO_MEMORY;
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *all_agree = agree;
    *out = r;
    return ABL_OK;
}
