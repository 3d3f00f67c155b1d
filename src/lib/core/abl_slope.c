/* alibi-blind: slope schedules (spec §5).
 *
 * Slopes are stored symbolically (2^(num/den), an exact decimal, or -tau/t with t = lo (hi/lo)^(g/G)).
 * Every number derived from them comes from certified interval bounds [lo, hi] of m at a working
 * precision; Ziv's loop widens the precision until the rounded bounds agree, so roundings are correct
 * and comparisons exact. Where two different forms can denote the same real (rational slopes, fitted
 * targets whose t is a root of a rational), equality is decided symbolically with GMP first. */
#include <ctype.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/core/slope.h"
#include "abl_internal.h"

/* Ziv loops start here and stop widening past the cap (2^16 bits, as the contract of compare says). */
#define SLOPE_PREC_START 64
#define SLOPE_PREC_CAP (1L << 16)
/* Symbolic comparisons give up (and leave it to the intervals) past this many bits per operand. */
#define SLOPE_EXACT_BITS_MAX (1UL << 20)

static const char MINUS_TAU[] = "\xe2\x88\x92\xcf\x84/"; /* "−τ/" in UTF-8 */

/* ---------------------------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------------------------- */

static long gcd_long(long a, long b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b != 0) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int is_pow2_int(long n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

static int ci_equal(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen)
        return 0;
    for (size_t i = 0; i < alen; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return 0;
    return 1;
}

/* Decimal text -> rational, classifying failures the way the schedule grammar reports them. */
static abl_status decimal_positive(const char *text, mpq_t out)
{
    if (abl_decimal_to_mpq(text, out) != ABL_OK) {
        const char *p = text;
        if (*p == '+' || *p == '-')
            p++;
        size_t n = strlen(p);
        if (ci_equal(p, n, "nan") || ci_equal(p, n, "inf") || ci_equal(p, n, "infinity"))
            return ABL_ERR_BAD_SLOPE;
        return ABL_ERR_BAD_SLOPE_SPEC;
    }
    return mpq_sgn(out) > 0 ? ABL_OK : ABL_ERR_BAD_SLOPE;
}

/* Bit size of a rational, for the "is the exact route affordable" guards. */
static size_t mpq_bits(const mpq_t q)
{
    return mpz_sizeinbase(mpq_numref(q), 2) + mpz_sizeinbase(mpq_denref(q), 2);
}

/* q^e for e >= 0 (GMP has no mpq_pow). */
static void mpq_pow_ui(mpq_t rop, const mpq_t q, unsigned long e)
{
    mpz_pow_ui(mpq_numref(rop), mpq_numref(q), e);
    mpz_pow_ui(mpq_denref(rop), mpq_denref(q), e);
    mpq_canonicalize(rop);
}

static char *mpq_to_decimal(const mpq_t q)
{
    return abl_decimal_string(q);
}

/* ---------------------------------------------------------------------------------------------
 * Symbolic forms
 * ------------------------------------------------------------------------------------------- */

/* t = lo * a^(p/q) with a = hi/lo, p >= 0 and q >= 1 coprime; p = 0 when t = lo. */
typedef struct {
    mpq_t lo, a;
    unsigned long p, q;
} tform;

static void tform_init(tform *f)
{
    mpq_init(f->lo);
    mpq_init(f->a);
    f->p = 0;
    f->q = 1;
}

static void tform_clear(tform *f)
{
    mpq_clear(f->lo);
    mpq_clear(f->a);
}

/* Read and normalise the target of a TARGET/LOG_TARGET slope; 0 on a malformed slope. When a is a
 * perfect q-th power the root is taken exactly (geometric 128->512 at h = 5 is t = 256). */
static int tform_get(const abl_slope *s, tform *f)
{
    if (s->form != ABL_SLOPE_TARGET && s->form != ABL_SLOPE_LOG_TARGET)
        return 0;
    if (s->target_lo == NULL || mpq_sgn(s->target_lo) <= 0)
        return 0;
    mpq_set(f->lo, s->target_lo);
    mpq_set_ui(f->a, 1, 1);
    f->p = 0;
    f->q = 1;
    if (s->geo_num == 0)
        return 1;
    if (s->geo_den <= 0 || s->geo_num == LONG_MIN)
        return 0;
    if (s->target_hi == NULL || mpq_sgn(s->target_hi) <= 0)
        return 0;
    mpq_div(f->a, s->target_hi, f->lo);
    long g = gcd_long(s->geo_num, s->geo_den);
    long p = s->geo_num / g, q = s->geo_den / g;
    if (p < 0) {
        mpq_inv(f->a, f->a);
        p = -p;
    }
    if (mpq_cmp_ui(f->a, 1, 1) == 0) {
        p = 0;
        q = 1;
    }
    f->p = (unsigned long)p;
    f->q = (unsigned long)q;
    if (f->q > 1) {
        mpz_t rn, rd;
        mpz_inits(rn, rd, (mpz_ptr)0);
        if (mpz_root(rn, mpq_numref(f->a), f->q) && mpz_root(rd, mpq_denref(f->a), f->q)) {
            mpz_swap(mpq_numref(f->a), rn);
            mpz_swap(mpq_denref(f->a), rd);
            f->q = 1;
        }
        mpz_clears(rn, rd, (mpz_ptr)0);
    }
    return 1;
}

/* t exactly when it is rational (q = 1) and not too large to write down. */
static int tform_rational(const tform *f, mpq_t t)
{
    if (f->q != 1)
        return 0;
    if (f->p != 0 && mpq_bits(f->a) * f->p > SLOPE_EXACT_BITS_MAX)
        return 0;
    mpq_pow_ui(t, f->a, f->p);
    mpq_mul(t, t, f->lo);
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Certified bounds
 * ------------------------------------------------------------------------------------------- */

typedef enum { QTY_M, QTY_T, QTY_T_PLUS_1 } quantity;


/* m exactly when it is rational: a decimal slope, 2^k with an integer k of moderate size, or a
 * log-fitted slope whose t + 1 is 2^j (then ln(t+1) = j ln 2 and m = -tau_log2 / j). Every other
 * slope is irrational: 2^(p/q) algebraic, -tau ln2 / t transcendental (Lindemann), and
 * ln 2 / ln(t+1) transcendental when not rational (Gelfond-Schneider). */
static int slope_rational(const abl_slope *s, mpq_t m)
{
    if (s->form == ABL_SLOPE_RATIONAL) {
        if (s->rational == NULL || mpq_sgn(s->rational) <= 0)
            return 0;
        mpq_set(m, s->rational);
        return 1;
    }
    if (s->form == ABL_SLOPE_LOG_TARGET) {
        if (s->tau_log2 >= 0 || s->tau_log2 == LONG_MIN)
            return 0;
        tform f;
        tform_init(&f);
        int ok = 0;
        if (tform_get(s, &f) && tform_rational(&f, m)) {
            mpz_add(mpq_numref(m), mpq_numref(m), mpq_denref(m)); /* t + 1 */
            if (mpz_popcount(mpq_numref(m)) == 1 && mpz_popcount(mpq_denref(m)) == 1) {
                long j = (long)mpz_scan1(mpq_numref(m), 0) - (long)mpz_scan1(mpq_denref(m), 0);
                if (j > 0) {
                    mpq_set_si(m, -s->tau_log2, (unsigned long)j);
                    mpq_canonicalize(m);
                    ok = 1;
                }
            }
        }
        tform_clear(&f);
        return ok;
    }
    if (s->form != ABL_SLOPE_POW2 || s->pow2_den <= 0 || s->pow2_num % s->pow2_den != 0)
        return 0;
    long k = s->pow2_num / s->pow2_den;
    if (k < -100000 || k > 100000)
        return 0;
    mpq_set_ui(m, 1, 1);
    if (k >= 0)
        mpz_mul_2exp(mpq_numref(m), mpq_numref(m), (mp_bitcnt_t)k);
    else
        mpz_mul_2exp(mpq_denref(m), mpq_denref(m), (mp_bitcnt_t)-k);
    return 1;
}

/* The quantity exactly when it is rational. */
static int quantity_rational(const abl_slope *s, quantity which, mpq_t q)
{
    if (which == QTY_M)
        return slope_rational(s, q);
    tform f;
    tform_init(&f);
    int ok = tform_get(s, &f) && tform_rational(&f, q);
    if (ok && which == QTY_T_PLUS_1)
        mpz_add(mpq_numref(q), mpq_numref(q), mpq_denref(q));
    tform_clear(&f);
    return ok;
}

/* lo <= t <= hi for the target of a fitted slope, at the precision of lo and hi. */
static int target_bounds(const abl_slope *s, mpfr_t lo, mpfr_t hi)
{
    tform f;
    tform_init(&f);
    mpq_t t;
    mpq_init(t);
    int ok = tform_get(s, &f);
    if (ok && tform_rational(&f, t)) {
        mpfr_set_q(lo, t, MPFR_RNDD);
        mpfr_set_q(hi, t, MPFR_RNDU);
    } else if (ok) {
        /* t = lo exp((p/q) ln a): each step is monotone, so directed roundings carry the bounds. */
        mpfr_t al, ah, el, eh, x;
        mpfr_inits2(mpfr_get_prec(lo) + 16, al, ah, el, eh, x, (mpfr_ptr)0);
        mpfr_set_q(al, f.a, MPFR_RNDD);
        mpfr_set_q(ah, f.a, MPFR_RNDU);
        mpfr_log(al, al, MPFR_RNDD);
        mpfr_log(ah, ah, MPFR_RNDU);
        mpfr_set_ui(el, f.p, MPFR_RNDD);
        mpfr_div_ui(el, el, f.q, MPFR_RNDD);
        mpfr_set_ui(eh, f.p, MPFR_RNDU);
        mpfr_div_ui(eh, eh, f.q, MPFR_RNDU);
        /* e >= 0 but ln a may be negative (DH < D1): pick the extreme corners accordingly. */
        mpfr_mul(al, mpfr_sgn(al) >= 0 ? el : eh, al, MPFR_RNDD);
        mpfr_mul(ah, mpfr_sgn(ah) >= 0 ? eh : el, ah, MPFR_RNDU);
        mpfr_exp(al, al, MPFR_RNDD);
        mpfr_exp(ah, ah, MPFR_RNDU);
        mpfr_set_q(x, f.lo, MPFR_RNDD);
        mpfr_mul(lo, x, al, MPFR_RNDD);
        mpfr_set_q(x, f.lo, MPFR_RNDU);
        mpfr_mul(hi, x, ah, MPFR_RNDU);
        mpfr_clears(al, ah, el, eh, x, (mpfr_ptr)0);
    }
    mpq_clear(t);
    tform_clear(&f);
    return ok;
}

/* lo <= x <= hi for the chosen quantity of a slope, at the precision of lo and hi (>= 64 bits).
 * Returns 0 when the slope is malformed or the quantity does not apply to its form. */
static int slope_bounds(const abl_slope *s, quantity which, mpfr_t lo, mpfr_t hi)
{
    mpfr_prec_t w = mpfr_get_prec(lo);
    if (which == QTY_M && s->form == ABL_SLOPE_LOG_TARGET) {
        /* A rational m must come out exact, or directed roundings of it would never agree. */
        mpq_t q;
        mpq_init(q);
        int rational = slope_rational(s, q);
        if (rational) {
            mpfr_set_q(lo, q, MPFR_RNDD);
            mpfr_set_q(hi, q, MPFR_RNDU);
        }
        mpq_clear(q);
        if (rational)
            return 1;
    }
    if (s->form == ABL_SLOPE_POW2) {
        if (which != QTY_M || s->pow2_den <= 0 || s->pow2_num < -(1L << 40) || s->pow2_num > (1L << 40))
            return 0;
        mpfr_t two;
        mpfr_init2(two, 2);
        mpfr_set_si_2exp(two, 1, s->pow2_num, MPFR_RNDN); /* exact: one significant bit */
        if (s->pow2_den == 1) {
            mpfr_set(lo, two, MPFR_RNDN);
            mpfr_set(hi, two, MPFR_RNDN);
        } else {
            /* 2^(num/den) = rootn(2^num, den): no rounding of the (non-dyadic) exponent. */
            mpfr_rootn_ui(lo, two, (unsigned long)s->pow2_den, MPFR_RNDD);
            mpfr_rootn_ui(hi, two, (unsigned long)s->pow2_den, MPFR_RNDU);
        }
        mpfr_clear(two);
        return 1;
    }
    if (s->form == ABL_SLOPE_RATIONAL) {
        if (which != QTY_M)
            return 0;
        int ok = s->rational != NULL && mpq_sgn(s->rational) > 0;
        if (ok) {
            mpfr_set_q(lo, s->rational, MPFR_RNDD);
            mpfr_set_q(hi, s->rational, MPFR_RNDU);
        }
        return ok;
    }
    if (s->form != ABL_SLOPE_TARGET && s->form != ABL_SLOPE_LOG_TARGET)
        return 0;
    if (which == QTY_T)
        return target_bounds(s, lo, hi);
    if (which == QTY_T_PLUS_1) {
        if (!target_bounds(s, lo, hi))
            return 0;
        mpfr_add_ui(lo, lo, 1, MPFR_RNDD);
        mpfr_add_ui(hi, hi, 1, MPFR_RNDU);
        return 1;
    }
    if (s->tau_log2 >= 0)
        return 0;
    mpfr_t kl, kh, tl, th;
    mpfr_inits2(w + 16, kl, kh, tl, th, (mpfr_ptr)0);
    if (!target_bounds(s, tl, th)) {
        mpfr_clears(kl, kh, tl, th, (mpfr_ptr)0);
        return 0;
    }
    /* K = -tau_log2 ln 2 > 0; tau_log2 fits exactly in >= 64 bits. */
    mpfr_const_log2(kl, MPFR_RNDD);
    mpfr_const_log2(kh, MPFR_RNDU);
    mpfr_mul_si(kl, kl, s->tau_log2, MPFR_RNDU); /* negative: rounding up then negating gives a lower bound */
    mpfr_mul_si(kh, kh, s->tau_log2, MPFR_RNDD);
    mpfr_neg(kl, kl, MPFR_RNDN);
    mpfr_neg(kh, kh, MPFR_RNDN);
    if (s->form == ABL_SLOPE_LOG_TARGET) {
        /* ln(t + 1) without forming t + 1 (tiny targets would lose everything to the rounding). */
        mpfr_log1p(tl, tl, MPFR_RNDD);
        mpfr_log1p(th, th, MPFR_RNDU);
    }
    mpfr_div(lo, kl, th, MPFR_RNDD);
    mpfr_div(hi, kh, tl, MPFR_RNDU); /* tl = 0 gives +Inf: a valid (useless) bound, Ziv widens */
    mpfr_clears(kl, kh, tl, th, (mpfr_ptr)0);
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Correct rounding
 * ------------------------------------------------------------------------------------------- */

abl_status abl_slope_mpfr(mpfr_t rop, const abl_slope *slope, mpfr_rnd_t rnd)
{
    if (rop == NULL || slope == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (rnd == MPFR_RNDF)
        rnd = MPFR_RNDN;
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_prec_t p = mpfr_get_prec(rop);
    mpfr_prec_t w = p + 32 > SLOPE_PREC_START ? p + 32 : SLOPE_PREC_START;
    mpfr_prec_t cap = 4 * p > SLOPE_PREC_CAP ? 4 * p : SLOPE_PREC_CAP;
    mpfr_t lo, hi, a, b;
    mpfr_inits2(w, lo, hi, (mpfr_ptr)0);
    mpfr_inits2(p, a, b, (mpfr_ptr)0);
    abl_status st = ABL_ERR_INVALID_ARGUMENT;
    int inex = 0;
    for (;;) {
        mpfr_set_prec(lo, w);
        mpfr_set_prec(hi, w);
        if (!slope_bounds(slope, QTY_M, lo, hi))
            break;
        inex = mpfr_set(a, lo, rnd);
        mpfr_set(b, hi, rnd);
        /* Rounding is monotone: equal roundings of both bounds are the rounding of m. The value is
         * never a rounding boundary unless it is exact (then lo == hi), so the loop ends. */
        if (mpfr_equal_p(a, b) || w >= cap) {
            if (!mpfr_equal_p(lo, hi))
                inex = mpfr_cmp(a, lo) < 0 ? -1 : 1;
            mpfr_set(rop, a, MPFR_RNDN);
            st = ABL_OK;
            break;
        }
        w *= 2;
    }
    mpfr_clears(lo, hi, a, b, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    if (st == ABL_OK)
        mpfr_check_range(rop, inex, rnd);
    return st;
}

/* The first `digits` significant decimal digits of the quantity, correctly rounded to nearest:
 * dig gets exactly `digits` characters, value = 0.DIG x 10^e. Returns 0 on a malformed slope. */
static int ziv_digits(const abl_slope *s, quantity which, int digits, char *dig, long *e)
{
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_prec_t w = (mpfr_prec_t)(digits * 3.33) + SLOPE_PREC_START;
    mpfr_t lo, hi;
    mpfr_inits2(w, lo, hi, (mpfr_ptr)0);
    int ok = 0;
    for (;;) {
        mpfr_set_prec(lo, w);
        mpfr_set_prec(hi, w);
        if (!slope_bounds(s, which, lo, hi) || mpfr_sgn(lo) <= 0 || !mpfr_number_p(lo))
            break;
        if (mpfr_number_p(hi)) {
            mpfr_exp_t ea, eb;
            char *sa = mpfr_get_str(NULL, &ea, 10, (size_t)digits, lo, MPFR_RNDN);
            char *sb = mpfr_get_str(NULL, &eb, 10, (size_t)digits, hi, MPFR_RNDN);
            int same = sa != NULL && sb != NULL && ea == eb && strcmp(sa, sb) == 0;
            if (sa != NULL && (same || w >= SLOPE_PREC_CAP)) {
                memcpy(dig, sa, (size_t)digits + 1);
                *e = (long)ea;
                ok = 1;
            }
            if (sa != NULL)
                mpfr_free_str(sa);
            if (sb != NULL)
                mpfr_free_str(sb);
            if (ok)
                break;
        }
        if (w >= SLOPE_PREC_CAP)
            break;
        w *= 2;
    }
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    return ok;
}

/* p = 10^k as a rational. */
static void mpq_pow10(mpq_t p, long k)
{
    mpq_set_ui(p, 1, 1);
    if (k >= 0)
        mpz_ui_pow_ui(mpq_numref(p), 10, (unsigned long)k);
    else
        mpz_ui_pow_ui(mpq_denref(p), 10, (unsigned long)-k);
}

/* The same digits for a positive rational, by exact arithmetic (ties to even, like MPFR's RNDN):
 * intervals around an exact decimal midpoint such as 0.123455 would never agree. */
static void rational_digits(const mpq_t q, int digits, char *dig, long *e)
{
    mpq_t p, x;
    mpq_inits(p, x, (mpq_ptr)0);
    /* e with 10^(e-1) <= q < 10^e; the size estimate is off by at most a couple. */
    long k = (long)mpz_sizeinbase(mpq_numref(q), 10) - (long)mpz_sizeinbase(mpq_denref(q), 10);
    for (;;) {
        mpq_pow10(p, k);
        if (mpq_cmp(q, p) >= 0) {
            k++;
            continue;
        }
        mpq_pow10(p, k - 1);
        if (mpq_cmp(q, p) < 0) {
            k--;
            continue;
        }
        break;
    }
    mpq_pow10(p, digits - k);
    mpq_mul(x, q, p);
    mpz_t n, r;
    mpz_inits(n, r, (mpz_ptr)0);
    mpz_fdiv_qr(n, r, mpq_numref(x), mpq_denref(x));
    mpz_mul_2exp(r, r, 1);
    int c = mpz_cmp(r, mpq_denref(x));
    if (c > 0 || (c == 0 && mpz_odd_p(n)))
        mpz_add_ui(n, n, 1);
    mpz_ui_pow_ui(r, 10, (unsigned long)digits);
    if (mpz_cmp(n, r) == 0) { /* 9.99..95 rounded up to 10.00..0 */
        mpz_divexact_ui(n, n, 10);
        k++;
    }
    mpz_get_str(dig, 10, n);
    *e = k;
    mpz_clears(n, r, (mpz_ptr)0);
    mpq_clears(p, x, (mpq_ptr)0);
}

/* malloc'd printf (NULL when out of memory). */
static char *str_printf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *out = malloc((size_t)n + 1);
    if (out == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(out, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return out;
}

/* %g-like text of 0.DIG x 10^e (`digits` long): trailing zeros dropped, fixed notation for
 * 1e-5 <= x < 10^digits (so no digit is ever invented as a padding zero). A heap string. */
static char *format_sig(char *dig, long e)
{
    long digits = (long)strlen(dig);
    size_t n = strlen(dig);
    while (n > 1 && dig[n - 1] == '0')
        n--;
    dig[n] = '\0';
    long e10 = e - 1; /* exponent of the leading digit */
    if (e10 < -5 || e10 >= digits) {
        if (n == 1)
            return str_printf("%ce%c%02ld", dig[0], e10 < 0 ? '-' : '+', labs(e10));
        return str_printf("%c.%se%c%02ld", dig[0], dig + 1, e10 < 0 ? '-' : '+', labs(e10));
    }
    if (e <= 0)
        return str_printf("0.%.*s%s", (int)-e, "00000", dig);
    if ((size_t)e >= n) { /* an integer: the dropped trailing zeros restored */
        char *out = malloc((size_t)e + 1);
        if (out != NULL) {
            memcpy(out, dig, n);
            memset(out + n, '0', (size_t)e - n);
            out[e] = '\0';
        }
        return out;
    }
    return str_printf("%.*s.%s", (int)e, dig, dig + e);
}

/* Quantity as text with `digits` significant digits, a heap string; "?" for a malformed slope. */
static char *quantity_text(const abl_slope *s, quantity which, int digits)
{
    if (digits < 1)
        digits = 1;
    if (digits > 1000)
        digits = 1000;
    char *dig = malloc((size_t)digits + 2);
    if (dig == NULL)
        return NULL;
    long e = 0;
    mpq_t q;
    mpq_init(q);
    int ok = 1;
    if (quantity_rational(s, which, q) && mpq_sgn(q) > 0)
        rational_digits(q, digits, dig, &e);
    else
        ok = ziv_digits(s, which, digits, dig, &e);
    mpq_clear(q);
    char *out = ok ? format_sig(dig, e) : str_printf("?");
    free(dig);
    return out;
}

char *abl_slope_decimal_text(const abl_slope *slope, int digits)
{
    if (slope == NULL)
        return str_printf("?");
    return quantity_text(slope, QTY_M, digits);
}

/* ---------------------------------------------------------------------------------------------
 * Exact text
 * ------------------------------------------------------------------------------------------- */

char *abl_slope_exact_text(const abl_slope *slope)
{
    if (slope == NULL)
        return str_printf("?");
    char *out = NULL;
    switch (slope->form) {
    case ABL_SLOPE_POW2: {
        if (slope->pow2_den <= 0)
            return str_printf("?");
        mpq_t e;
        mpq_init(e);
        mpq_set_si(e, slope->pow2_num, (unsigned long)slope->pow2_den);
        mpq_canonicalize(e);
        char *num = mpq_to_decimal(e);
        if (num != NULL)
            out = str_printf("2^%s", num);
        else
            out = str_printf("2^(%ld/%ld)", slope->pow2_num, slope->pow2_den); /* reduced already */
        free(num);
        mpq_clear(e);
        break;
    }
    case ABL_SLOPE_RATIONAL:
        if (slope->text != NULL)
            out = str_printf("%s", slope->text);
        else if (slope->rational != NULL)
            out = mpq_to_decimal(slope->rational);
        if (out == NULL)
            out = str_printf("?");
        break;
    case ABL_SLOPE_TARGET:
    case ABL_SLOPE_LOG_TARGET: {
        int log = slope->form == ABL_SLOPE_LOG_TARGET;
        tform f;
        tform_init(&f);
        mpq_t t;
        mpq_init(t);
        char *num = NULL;
        if (tform_get(slope, &f)) {
            if (f.p == 0 && !log && slope->text != NULL) {
                /* A plain target is shown as written ("1e-3" stays "1e-3"). */
                num = str_printf("%s", slope->text);
            } else if (tform_rational(&f, t)) {
                if (log) /* t + 1 = (n + d)/d, still in lowest terms */
                    mpz_add(mpq_numref(t), mpq_numref(t), mpq_denref(t));
                num = mpq_to_decimal(t);
            }
        }
        if (num == NULL) /* irrational: 6 significant digits, correctly rounded */
            num = quantity_text(slope, log ? QTY_T_PLUS_1 : QTY_T, 6);
        if (num != NULL)
            out = log ? str_printf("%sln(%s)", MINUS_TAU, num) : str_printf("%s%s", MINUS_TAU, num);
        free(num);
        mpq_clear(t);
        tform_clear(&f);
        break;
    }
    default:
        out = str_printf("?");
        break;
    }
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * Exact comparison
 * ------------------------------------------------------------------------------------------- */

static int sign_of(int c)
{
    return (c > 0) - (c < 0);
}

/* (-tau_x)^Q * t_y^Q as an exact rational, t_y = lo (a)^(p/q) with q | Q; 0 when too large. */
static int target_power(long tau_x, const tform *ty, unsigned long Q, mpq_t out)
{
    unsigned long pe = ty->p * (Q / ty->q);
    if (ty->p != 0 && pe / ty->p != Q / ty->q)
        return 0;
    if (pe != 0 && mpq_bits(ty->a) > SLOPE_EXACT_BITS_MAX / pe)
        return 0;
    if ((64 + mpq_bits(ty->lo)) * Q + mpq_bits(ty->a) * pe > SLOPE_EXACT_BITS_MAX)
        return 0;
    mpq_t x;
    mpq_init(x);
    mpq_pow_ui(out, ty->a, pe);
    mpq_pow_ui(x, ty->lo, Q);
    mpq_mul(out, out, x);
    mpz_set_si(mpq_numref(x), tau_x);
    mpz_neg(mpq_numref(x), mpq_numref(x));
    mpz_set_ui(mpq_denref(x), 1);
    mpq_pow_ui(x, x, Q);
    mpq_mul(out, out, x);
    mpq_clear(x);
    return 1;
}

/* The sign of na/da - nb/db (da, db > 0), exactly: the cross products in GMP integers (they overflow a long). */
static int ratio_compare(long na, long da, long nb, long db)
{
    mpz_t x, y;
    mpz_inits(x, y, (mpz_ptr)0);
    mpz_set_si(x, na);
    mpz_mul_si(x, x, db);
    mpz_set_si(y, nb);
    mpz_mul_si(y, y, da);
    int r = sign_of(mpz_cmp(x, y));
    mpz_clears(x, y, (mpz_ptr)0);
    return r;
}

/* Two powers of two: 2^x is increasing, so compare the exponents num_a/den_a and num_b/den_b. */
static int pow2_compare(const abl_slope *a, const abl_slope *b, int *res)
{
    if (a->pow2_den <= 0 || b->pow2_den <= 0)
        return 0;
    *res = ratio_compare(a->pow2_num, a->pow2_den, b->pow2_num, b->pow2_den);
    return 1;
}

/* Both slopes rational (whatever their forms): compare the rationals. 1 and *res when both are. */
static int rational_compare(const abl_slope *a, const abl_slope *b, int *res)
{
    mpq_t x, y;
    mpq_inits(x, y, (mpq_ptr)0);
    int decided = slope_rational(a, x) && slope_rational(b, y);
    if (decided)
        *res = sign_of(mpq_cmp(x, y));
    mpq_clears(x, y, (mpq_ptr)0);
    return decided;
}

/* Same family (one geometric schedule: same tau, same ends): t moves monotonically with the exponent
 * g/G, so no arithmetic on t is needed. This keeps sorting large geometric schedules cheap. */
static int family_compare(const abl_slope *a, const abl_slope *b, int *res)
{
    mpq_srcptr lo_a = a->target_lo, lo_b = b->target_lo, hi_a = a->target_hi, hi_b = b->target_hi;
    if (a->tau_log2 != b->tau_log2 || lo_a == NULL || lo_b == NULL || !mpq_equal(lo_a, lo_b) || mpq_sgn(lo_a) <= 0)
        return 0;
    if (a->geo_num == 0 && b->geo_num == 0) {
        *res = 0;
        return 1;
    }
    if (hi_a == NULL || hi_b == NULL || !mpq_equal(hi_a, hi_b) || mpq_sgn(hi_a) <= 0 || a->geo_den <= 0 ||
        b->geo_den <= 0)
        return 0;
    /* t increases with g/G when hi > lo, and m = -tau/t (or -tau/ln(t+1)) decreases with t. */
    int dir = sign_of(mpq_cmp(hi_a, lo_a));
    *res = -dir * ratio_compare(a->geo_num, a->geo_den, b->geo_num, b->geo_den);
    return 1;
}

/* Two targets: m_a vs m_b  <=>  (-tau_a) t_b vs (-tau_b) t_a  <=>  the same raised to Q = lcm(q_a, q_b),
 * which makes both sides rational: exact even for roots (128*4^(1/3) == 64*32^(1/3)). */
static int target_compare(const abl_slope *a, const abl_slope *b, const tform *fa, const tform *fb, int *res)
{
    unsigned long g = fa->q, h = fb->q;
    while (h != 0) {
        unsigned long r = g % h;
        g = h;
        h = r;
    }
    unsigned long Q = fa->q / g * fb->q;
    mpq_t x, y;
    mpq_inits(x, y, (mpq_ptr)0);
    int decided = Q / fb->q == fa->q / g && Q <= (1UL << 16) && target_power(a->tau_log2, fb, Q, x) &&
                  target_power(b->tau_log2, fa, Q, y);
    if (decided)
        *res = sign_of(mpq_cmp(x, y));
    mpq_clears(x, y, (mpq_ptr)0);
    return decided;
}

/* Two log targets: m_a vs m_b  <=>  (-tau_a) ln(1+t_b) vs (-tau_b) ln(1+t_a)  <=>  (1+t_b)^(-tau_a) vs
 * (1+t_a)^(-tau_b), exponents divided by their gcd first (equal taus just compare the targets). */
static int log_target_compare(const abl_slope *a, const abl_slope *b, const tform *fa, const tform *fb, int *res)
{
    if (a->tau_log2 == LONG_MIN || b->tau_log2 == LONG_MIN)
        return 0;
    mpq_t x, y;
    mpq_inits(x, y, (mpq_ptr)0);
    int decided = 0;
    if (tform_rational(fa, x) && tform_rational(fb, y)) {
        long g = gcd_long(a->tau_log2, b->tau_log2);
        long ka = -a->tau_log2 / g, kb = -b->tau_log2 / g;
        mpz_add(mpq_numref(x), mpq_numref(x), mpq_denref(x)); /* 1 + t_a */
        mpz_add(mpq_numref(y), mpq_numref(y), mpq_denref(y)); /* 1 + t_b */
        if (ka > 0 && kb > 0 && (size_t)ka <= SLOPE_EXACT_BITS_MAX / mpq_bits(y) &&
            (size_t)kb <= SLOPE_EXACT_BITS_MAX / mpq_bits(x)) {
            mpq_pow_ui(y, y, (unsigned long)ka);
            mpq_pow_ui(x, x, (unsigned long)kb);
            *res = sign_of(mpq_cmp(y, x));
            decided = 1;
        }
    }
    mpq_clears(x, y, (mpq_ptr)0);
    return decided;
}

/* Symbolic comparison for the pairs of forms that can denote the same real (elsewhere the values
 * are algebraic vs transcendental and intervals always separate them). 1 and *res when decided. */
static int exact_compare(const abl_slope *a, const abl_slope *b, int *res)
{
    if (a->form == ABL_SLOPE_POW2 && b->form == ABL_SLOPE_POW2)
        return pow2_compare(a, b, res);
    if (rational_compare(a, b, res))
        return 1;
    /* Across forms, one side is transcendental or irrational where the other is not: no ties. */
    if (a->form != b->form || (a->form != ABL_SLOPE_TARGET && a->form != ABL_SLOPE_LOG_TARGET) ||
        a->tau_log2 >= 0 || b->tau_log2 >= 0)
        return 0;
    if (family_compare(a, b, res))
        return 1;
    tform fa, fb;
    tform_init(&fa);
    tform_init(&fb);
    int decided = 0;
    if (tform_get(a, &fa) && tform_get(b, &fb))
        decided = a->form == ABL_SLOPE_TARGET ? target_compare(a, b, &fa, &fb, res)
                                              : log_target_compare(a, b, &fa, &fb, res);
    tform_clear(&fa);
    tform_clear(&fb);
    return decided;
}

int abl_slope_compare(const abl_slope *a, const abl_slope *b)
{
    if (a == b)
        return 0;
    if (a == NULL || b == NULL)
        return a == NULL ? -1 : 1;
    int r = 0;
    if (exact_compare(a, b, &r))
        return r;
    /* Disjoint certified intervals decide; distinct values separate long before the cap, which
     * only values equal in some form not recognised above can reach (reported as equal). */
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_t al, ah, bl, bh;
    mpfr_inits2(SLOPE_PREC_START, al, ah, bl, bh, (mpfr_ptr)0);
    r = 0;
    for (mpfr_prec_t w = SLOPE_PREC_START; w <= SLOPE_PREC_CAP; w *= 2) {
        mpfr_set_prec(al, w);
        mpfr_set_prec(ah, w);
        mpfr_set_prec(bl, w);
        mpfr_set_prec(bh, w);
        if (!slope_bounds(a, QTY_M, al, ah) || !slope_bounds(b, QTY_M, bl, bh))
            break;
        if (mpfr_less_p(ah, bl)) {
            r = -1;
            break;
        }
        if (mpfr_greater_p(al, bh)) {
            r = 1;
            break;
        }
    }
    mpfr_clears(al, ah, bl, bh, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    return r;
}

abl_status abl_schedule_sorted(const abl_schedule *sched, abl_slope **sorted_out)
{
    if (sorted_out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    *sorted_out = NULL;
    if (sched == NULL || sched->count < 0 || (sched->count > 0 && sched->slopes == NULL))
        return ABL_ERR_INVALID_ARGUMENT;
    size_t n = (size_t)sched->count;
    abl_slope *out = malloc((n ? n : 1) * sizeof *out);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    size_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (out == NULL || idx == NULL || tmp == NULL) {
        free(out);
        free(idx);
        free(tmp);
        return ABL_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    /* Bottom-up merge sort on indices: stable (qsort is not), steepest first. */
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                /* Take the left one unless the right one is strictly steeper (keeps ties in order). */
                if (abl_slope_compare(&sched->slopes[idx[j]], &sched->slopes[idx[i]]) > 0)
                    tmp[k++] = idx[j++];
                else
                    tmp[k++] = idx[i++];
            }
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        size_t *sw = idx;
        idx = tmp;
        tmp = sw;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = sched->slopes[idx[i]];
    free(idx);
    free(tmp);
    *sorted_out = out;
    return ABL_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Schedules
 * ------------------------------------------------------------------------------------------- */

void abl_schedule_free(abl_schedule *sched)
{
    if (sched == NULL)
        return;
    free(sched->slopes);
    free(sched->spec);
    for (size_t i = 0; i < sched->nnumbers; i++)
        mpq_clear(sched->numbers[i]);
    free(sched->numbers);
    free(sched->texts);
    memset(sched, 0, sizeof *sched);
}

typedef struct {
    const char *p;
    size_t n;
} span;

static span trim(const char *p, size_t n)
{
    while (n > 0 && isspace((unsigned char)p[0])) {
        p++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    span s = {p, n};
    return s;
}

/* One positive decimal of the spec (any length): its text with a leading '+' dropped, its value into q. */
static abl_status take_decimal(span item, span *text, mpq_t q)
{
    item = trim(item.p, item.n);
    if (item.n > 0 && item.p[0] == '+') {
        item.p++;
        item.n--;
    }
    if (item.n == 0 || memchr(item.p, '\0', item.n) != NULL)
        return ABL_ERR_BAD_SLOPE_SPEC;
    char *z = malloc(item.n + 1);
    if (z == NULL)
        return ABL_ERR_NO_MEMORY;
    memcpy(z, item.p, item.n);
    z[item.n] = '\0';
    abl_status st = decimal_positive(z, q);
    free(z);
    *text = item;
    return st;
}

/*
 * "2^X" as the tool prints a power-of-two slope: X an exact decimal ("-0.5", "-8") or "(P/Q)" with integers
 * ("2^(-8/9)"). 1 and num/den (den > 0, both at most 2^20 in size) set when the item has this form; 0 when
 * it does not start with "2^"; -1 when it starts with "2^" but is malformed; -2 when out of memory.
 */
static int take_pow2(span item, long *num, long *den)
{
    item = trim(item.p, item.n);
    if (item.n < 3 || item.p[0] != '2' || item.p[1] != '^')
        return 0;
    span e = {item.p + 2, item.n - 2};
    int paren = e.n >= 2 && e.p[0] == '(' && e.p[e.n - 1] == ')';
    if (paren) {
        e.p++;
        e.n -= 2;
    }
    if (e.n == 0 || memchr(e.p, '\0', e.n) != NULL)
        return -1;
    char *buf = malloc(e.n + 1);
    if (buf == NULL)
        return -2;
    memcpy(buf, e.p, e.n);
    buf[e.n] = '\0';
    mpq_t q;
    mpq_init(q);
    int ok = -1;
    if (paren) {
        /* P/Q with optional sign on P, digits only */
        char *slash = strchr(buf, '/');
        if (slash != NULL) {
            *slash = '\0';
            const char *p = buf + (buf[0] == '-'), *d = slash + 1;
            if (*p != '\0' && *d != '\0' && strspn(p, "0123456789") == strlen(p) && strspn(d, "0123456789") == strlen(d) &&
                mpz_set_str(mpq_numref(q), buf, 10) == 0 && mpz_set_str(mpq_denref(q), d, 10) == 0 &&
                mpz_sgn(mpq_denref(q)) > 0) {
                mpq_canonicalize(q);
                ok = 1;
            }
        }
    } else if (abl_decimal_to_mpq(buf, q) == ABL_OK) {
        ok = 1;
    }
    if (ok == 1) {
        if (mpz_cmpabs_ui(mpq_numref(q), 1UL << 20) > 0 || mpz_cmp_ui(mpq_denref(q), 1UL << 20) > 0) {
            ok = -1;
        } else {
            *num = mpz_get_si(mpq_numref(q));
            *den = mpz_get_si(mpq_denref(q));
        }
    }
    mpq_clear(q);
    free(buf);
    return ok;
}

static void slope_defaults(abl_slope *s, abl_slope_form form, int index)
{
    memset(s, 0, sizeof *s);
    s->form = form;
    s->index = index;
    s->pow2_den = 1;
    s->geo_den = 1;
}

static void set_pow2(abl_slope *s, long num, long den)
{
    long g = gcd_long(num, den);
    s->pow2_num = num / g;
    s->pow2_den = den / g;
}

/* Press et al. get_slopes: exponents -8h/H for a power of two, else press(c) then the even-indexed
 * entries of press(2c), i.e. -4(2h-1)/c, appended unsorted. */
static void build_press(abl_slope *s, int H)
{
    if (is_pow2_int(H)) {
        for (int h = 1; h <= H; h++)
            set_pow2(&s[h - 1], -8L * h, H);
        return;
    }
    int c = 1;
    while (c * 2 < H)
        c *= 2;
    for (int h = 1; h <= c; h++)
        set_pow2(&s[h - 1], -8L * h, c);
    for (int h = 1; h <= H - c; h++)
        set_pow2(&s[c + h - 1], -4L * (2 * h - 1), c);
}

/* llm-foundry gen_slopes: 2^(-B h/H') over H' = 2^ceil(log2 H); for H' != H the order is
 * concat(s[1::2], s[0::2])[:H] (0-based), s[i] = 2^(-B (i+1)/H'). */
static void build_mpt(abl_slope *s, int H, long B)
{
    long Hp = 1;
    while (Hp < H)
        Hp *= 2;
    if (Hp == H) {
        for (int h = 1; h <= H; h++)
            set_pow2(&s[h - 1], -B * h, Hp);
        return;
    }
    int k = 0;
    for (long i = 1; i < Hp && k < H; i += 2)
        set_pow2(&s[k++], -B * (i + 1), Hp);
    for (long i = 0; i < Hp && k < H; i += 2)
        set_pow2(&s[k++], -B * (i + 1), Hp);
}

/* ---------------------------------------------------------------------------------------------
 * Typed descriptions: the text is read here once; everything else builds from the value
 * ------------------------------------------------------------------------------------------- */

static const char *const kind_names[] = {"press",   "mpt",    "pow2only", "geometric",
                                         "targets", "slopes", "robust",   "robust-log"};

static int kind_is_list(abl_schedule_kind k)
{
    return k == ABL_SCHEDULE_TARGETS || k == ABL_SCHEDULE_SLOPES;
}

static int kind_is_fitted(abl_schedule_kind k)
{
    return k == ABL_SCHEDULE_GEOMETRIC || k == ABL_SCHEDULE_TARGETS || k == ABL_SCHEDULE_ROBUST ||
           k == ABL_SCHEDULE_ROBUST_LOG;
}

void abl_schedule_spec_free(abl_schedule_spec *spec)
{
    if (spec == NULL)
        return;
    for (size_t i = 0; spec->numbers != NULL && i < spec->count; i++) {
        mpq_clear(spec->numbers[i].value);
        free(spec->numbers[i].text);
    }
    free(spec->numbers);
    free(spec->text);
    memset(spec, 0, sizeof *spec);
}

static abl_status spec_alloc(abl_schedule_spec *s, size_t count)
{
    s->numbers = calloc(count ? count : 1, sizeof *s->numbers);
    if (s->numbers == NULL)
        return ABL_ERR_NO_MEMORY;
    for (size_t i = 0; i < count; i++) {
        mpq_init(s->numbers[i].value);
        s->numbers[i].pow2_den = 1;
    }
    s->count = count;
    return ABL_OK;
}

static char *span_dup(span t)
{
    char *d = malloc(t.n + 1);
    if (d != NULL) {
        memcpy(d, t.p, t.n);
        d[t.n] = '\0';
    }
    return d;
}

/* The canonical text of a description, from its kind and numbers. */
static abl_status spec_set_text(abl_schedule_spec *s)
{
    abl_text t = {0};
    if (s->kind == ABL_SCHEDULE_MPT)
        abl_text_add(&t, "mpt:%ld", s->mpt_bias);
    else
        abl_text_add(&t, "%s", kind_names[s->kind]);
    for (size_t i = 0; i < s->count; i++)
        abl_text_add(&t, "%s%s", i == 0 ? ":" : s->kind == ABL_SCHEDULE_GEOMETRIC ? ":" : ",", s->numbers[i].text);
    s->text = abl_text_take(&t);
    return s->text != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
}

/* One number of the text: a positive exact decimal, or (allow_pow2, slopes: lists) the tool's own 2^X. */
static abl_status spec_number(span item, int allow_pow2, abl_schedule_number *n)
{
    span text;
    abl_status st;
    int pow2 = allow_pow2 ? take_pow2(item, &n->pow2_num, &n->pow2_den) : 0;
    if (pow2 == -2)
        return ABL_ERR_NO_MEMORY;
    if (pow2 < 0)
        return ABL_ERR_BAD_SLOPE_SPEC;
    if (pow2 > 0) {
        n->pow2 = 1;
        text = trim(item.p, item.n); /* the tool's own notation: 2^-0.5, 2^(-8/9) */
    } else if ((st = take_decimal(item, &text, n->value)) != ABL_OK) {
        return st;
    }
    n->text = span_dup(text);
    return n->text != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
}

static abl_status parse_keyword(span kw, abl_schedule_spec *s)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (ci_equal(kw.p, kw.n, kind_names[i])) {
            s->kind = (abl_schedule_kind)i;
            return ABL_OK;
        }
    return ABL_ERR_BAD_SLOPE_SPEC;
}

static abl_status parse_mpt(int has_args, span args, abl_schedule_spec *s)
{
    if (!has_args)
        return ABL_OK;
    span t = trim(args.p, args.n);
    long B = 0;
    if (t.n == 0 || t.n > 3)
        return ABL_ERR_BAD_SLOPE_SPEC;
    for (size_t i = 0; i < t.n; i++) {
        if (!isdigit((unsigned char)t.p[i]))
            return ABL_ERR_BAD_SLOPE_SPEC;
        B = B * 10 + (t.p[i] - '0');
    }
    if (B < 1 || B > ABL_MPT_BIAS_MAX)
        return ABL_ERR_BAD_SLOPE_SPEC;
    s->mpt_bias = B;
    return ABL_OK;
}

/* targets:/slopes: lists: the length is checked before any item (a list over the head limit says so
 * first), then every item in order. */
static abl_status parse_list(int has_args, span args, abl_schedule_spec *s)
{
    if (!has_args)
        return ABL_ERR_BAD_SLOPE_SPEC;
    size_t items = 1, pos = 0;
    for (size_t i = 0; i < args.n; i++)
        items += args.p[i] == ',';
    if (items > ABL_MAX_HEADS)
        return ABL_ERR_HEADS_RANGE;
    abl_status st = spec_alloc(s, items);
    for (size_t n = 0; st == ABL_OK && n < items; n++) {
        const char *comma = memchr(args.p + pos, ',', args.n - pos);
        size_t end = comma ? (size_t)(comma - args.p) : args.n;
        span it = {args.p + pos, end - pos};
        st = spec_number(it, s->kind == ABL_SCHEDULE_SLOPES, &s->numbers[n]);
        pos = end + 1;
    }
    return st;
}

/* The parameters after "name:" (geometric:D1:DH splits at its first colon). */
static abl_status parse_params(int has_args, span args, abl_schedule_spec *s)
{
    s->mpt_bias = 8;
    switch (s->kind) {
    case ABL_SCHEDULE_PRESS:
    case ABL_SCHEDULE_POW2ONLY:
        return has_args ? ABL_ERR_BAD_SLOPE_SPEC : ABL_OK;
    case ABL_SCHEDULE_MPT:
        return parse_mpt(has_args, args, s);
    case ABL_SCHEDULE_GEOMETRIC: {
        const char *c2 = has_args ? memchr(args.p, ':', args.n) : NULL;
        if (c2 == NULL)
            return ABL_ERR_BAD_SLOPE_SPEC;
        span x = {args.p, (size_t)(c2 - args.p)}, y = {c2 + 1, args.n - (size_t)(c2 - args.p) - 1};
        abl_status st = spec_alloc(s, 2);
        if (st == ABL_OK)
            st = spec_number(x, 0, &s->numbers[0]);
        return st == ABL_OK ? spec_number(y, 0, &s->numbers[1]) : st;
    }
    case ABL_SCHEDULE_ROBUST:
    case ABL_SCHEDULE_ROBUST_LOG: {
        if (!has_args)
            return ABL_ERR_BAD_SLOPE_SPEC;
        abl_status st = spec_alloc(s, 1);
        return st == ABL_OK ? spec_number(args, 0, &s->numbers[0]) : st;
    }
    default:
        return parse_list(has_args, args, s);
    }
}

/* Why a schedule text was refused, in one line naming the part at fault: the library says it, the
 * caller does not guess it from the status (issue 17). */
static void parse_error(char **msg, span kw, int known, const abl_schedule_spec *s, abl_status st)
{
    if (msg == NULL || st == ABL_ERR_NO_MEMORY)
        return;
    char *k = span_dup(kw);
    if (!known) {
        abl_set_error(msg, "unknown schedule '%s' (known: press, pow2only, mpt:B, geometric:D1:DH, targets:d1,..., "
                           "slopes:m1,..., robust:D1, robust-log:D1)", k != NULL ? k : "");
    } else if (st == ABL_ERR_BAD_SLOPE) { /* the number is read; its value is what is wrong */
        abl_set_error(msg, "%s", abl_status_message(st));
    } else if (kind_is_list(s->kind) && st == ABL_ERR_HEADS_RANGE) {
        abl_set_error(msg, "%s: a list of more than %d values (one per head, at most %d heads)", k != NULL ? k : "",
                      ABL_MAX_HEADS, ABL_MAX_HEADS);
    } else {
        static const char *const grammar[] = {
            "takes no parameter", "is mpt or mpt:B with B an integer from 1 to 64", "takes no parameter",
            "is geometric:D1:DH with two positive distances",
            "is targets:d1,... with one positive distance per head",
            "is slopes:m1,... with one positive number (or 2^X) per head",
            "is robust:D1 with a positive distance", "is robust-log:D1 with a positive distance"};
        abl_set_error(msg, "%s %s", kind_names[s->kind], grammar[s->kind]);
    }
    free(k);
}

abl_status abl_schedule_spec_parse(const char *text, abl_schedule_spec *out, char **msg)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (text == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    span all = trim(text, strlen(text));
    const char *colon = memchr(all.p, ':', all.n);
    span kw = {all.p, colon ? (size_t)(colon - all.p) : all.n};
    span args = {colon ? colon + 1 : all.p + all.n, colon ? all.n - (size_t)(colon - all.p) - 1 : 0};
    kw = trim(kw.p, kw.n);
    abl_status st = parse_keyword(kw, out);
    int known = st == ABL_OK;
    if (st == ABL_OK)
        st = parse_params(colon != NULL, args, out);
    if (st != ABL_OK)
        parse_error(msg, kw, known, out, st);
    if (st == ABL_OK)
        st = spec_set_text(out);
    if (st != ABL_OK)
        abl_schedule_spec_free(out);
    return st;
}

abl_status abl_schedule_spec_pow2(abl_schedule_kind kind, long mpt_bias, abl_schedule_spec *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (kind != ABL_SCHEDULE_PRESS && kind != ABL_SCHEDULE_MPT && kind != ABL_SCHEDULE_POW2ONLY)
        return ABL_ERR_INVALID_ARGUMENT;
    if (kind == ABL_SCHEDULE_MPT && (mpt_bias < 1 || mpt_bias > ABL_MPT_BIAS_MAX))
        return ABL_ERR_BAD_SLOPE_SPEC;
    out->kind = kind;
    out->mpt_bias = kind == ABL_SCHEDULE_MPT ? mpt_bias : 8;
    return spec_set_text(out);
}

/* A number from an exact value: its text is its exact decimal. */
static abl_status spec_number_value(const mpq_t v, abl_schedule_number *n)
{
    if (mpq_sgn(v) <= 0)
        return ABL_ERR_BAD_SLOPE;
    mpq_set(n->value, v);
    n->text = abl_decimal_string(v);
    return n->text != NULL ? ABL_OK : ABL_ERR_INVALID_ARGUMENT;
}

abl_status abl_schedule_spec_robust(abl_schedule_kind kind, long d1, abl_schedule_spec *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (kind != ABL_SCHEDULE_ROBUST && kind != ABL_SCHEDULE_ROBUST_LOG)
        return ABL_ERR_INVALID_ARGUMENT;
    if (d1 < 1)
        return ABL_ERR_BAD_SLOPE;
    out->kind = kind;
    out->mpt_bias = 8;
    mpq_t q;
    mpq_init(q);
    mpq_set_si(q, d1, 1);
    abl_status st = spec_alloc(out, 1);
    if (st == ABL_OK)
        st = spec_number_value(q, &out->numbers[0]);
    mpq_clear(q);
    if (st == ABL_OK)
        st = spec_set_text(out);
    if (st != ABL_OK)
        abl_schedule_spec_free(out);
    return st;
}

abl_status abl_schedule_spec_geometric(long d1, long dh, abl_schedule_spec *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (d1 < 1 || dh < 1)
        return ABL_ERR_BAD_SLOPE;
    out->kind = ABL_SCHEDULE_GEOMETRIC;
    out->mpt_bias = 8;
    mpq_t q;
    mpq_init(q);
    abl_status st = spec_alloc(out, 2);
    mpq_set_si(q, d1, 1);
    if (st == ABL_OK)
        st = spec_number_value(q, &out->numbers[0]);
    mpq_set_si(q, dh, 1);
    if (st == ABL_OK)
        st = spec_number_value(q, &out->numbers[1]);
    mpq_clear(q);
    if (st == ABL_OK)
        st = spec_set_text(out);
    if (st != ABL_OK)
        abl_schedule_spec_free(out);
    return st;
}

abl_status abl_schedule_spec_slopes(const mpq_t *m, size_t n, abl_schedule_spec *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (m == NULL || n == 0)
        return ABL_ERR_INVALID_ARGUMENT;
    if (n > ABL_MAX_HEADS)
        return ABL_ERR_HEADS_RANGE;
    out->kind = ABL_SCHEDULE_SLOPES;
    out->mpt_bias = 8;
    abl_status st = spec_alloc(out, n);
    for (size_t i = 0; st == ABL_OK && i < n; i++)
        st = spec_number_value(m[i], &out->numbers[i]);
    if (st == ABL_OK)
        st = spec_set_text(out);
    if (st != ABL_OK)
        abl_schedule_spec_free(out);
    return st;
}

abl_status abl_schedule_spec_copy(const abl_schedule_spec *src, abl_schedule_spec *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (src == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    out->kind = src->kind;
    out->mpt_bias = src->mpt_bias;
    abl_status st = src->count > 0 ? spec_alloc(out, src->count) : ABL_OK;
    for (size_t i = 0; st == ABL_OK && i < src->count; i++) {
        abl_schedule_number *d = &out->numbers[i];
        const abl_schedule_number *s = &src->numbers[i];
        mpq_set(d->value, s->value);
        d->pow2 = s->pow2;
        d->pow2_num = s->pow2_num;
        d->pow2_den = s->pow2_den;
        d->text = s->text != NULL ? strdup(s->text) : NULL;
        if (s->text != NULL && d->text == NULL)
            st = ABL_ERR_NO_MEMORY;
    }
    if (st == ABL_OK && src->text != NULL && (out->text = strdup(src->text)) == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st != ABL_OK)
        abl_schedule_spec_free(out);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Instantiation: a description, a head count and a tau give the slopes
 * ------------------------------------------------------------------------------------------- */

/* The schedule's own copies of the numbers (the slopes point at them) and their texts. */
static abl_status store_numbers(abl_schedule *out, const abl_schedule_spec *spec)
{
    size_t text_bytes = 0;
    for (size_t i = 0; i < spec->count; i++)
        text_bytes += spec->numbers[i].text != NULL ? strlen(spec->numbers[i].text) + 1 : 1;
    out->numbers = malloc((spec->count ? spec->count : 1) * sizeof *out->numbers);
    out->texts = malloc(text_bytes + 1);
    if (out->numbers == NULL || out->texts == NULL)
        return ABL_ERR_NO_MEMORY;
    for (size_t i = 0; i < spec->count; i++)
        mpq_init(out->numbers[i]);
    out->nnumbers = spec->count;
    out->texts[0] = '\0';
    return ABL_OK;
}

/* Copy text to texts + *used (NUL-terminated) and return where it went. */
static const char *store_text(abl_schedule *out, size_t *used, const char *text)
{
    char *dst = out->texts + *used;
    size_t n = strlen(text);
    memcpy(dst, text, n + 1);
    *used += n + 1;
    return dst;
}

/* targets:/slopes: lists, one head per item. */
static abl_status build_list(const abl_schedule_spec *spec, int H, abl_schedule *out)
{
    abl_status st = store_numbers(out, spec);
    size_t used = 0;
    for (int h = 0; st == ABL_OK && h < H; h++) {
        const abl_schedule_number *n = &spec->numbers[h];
        abl_slope *s = &out->slopes[h];
        if (n->pow2) {
            slope_defaults(s, ABL_SLOPE_POW2, h + 1);
            set_pow2(s, n->pow2_num, n->pow2_den);
            continue;
        }
        mpq_set(out->numbers[h], n->value);
        if (spec->kind == ABL_SCHEDULE_SLOPES) {
            slope_defaults(s, ABL_SLOPE_RATIONAL, h + 1);
            s->rational = out->numbers[h];
        } else {
            slope_defaults(s, ABL_SLOPE_TARGET, h + 1);
            s->target_lo = s->target_hi = out->numbers[h];
        }
        s->text = store_text(out, &used, n->text != NULL ? n->text : "");
    }
    return st;
}

/* press, pow2only, mpt:B: powers of two. */
static void build_pow2(const abl_schedule_spec *spec, int H, abl_schedule *out)
{
    for (int h = 1; h <= H; h++)
        slope_defaults(&out->slopes[h - 1], ABL_SLOPE_POW2, h);
    if (spec->kind == ABL_SCHEDULE_PRESS)
        build_press(out->slopes, H);
    else if (spec->kind == ABL_SCHEDULE_MPT)
        build_mpt(out->slopes, H, spec->mpt_bias);
    else
        for (int h = 1; h <= H; h++)
            set_pow2(&out->slopes[h - 1], -8L * h, H);
}

static abl_status build_geometric(const abl_schedule_spec *spec, int H, abl_schedule *out)
{
    abl_status st = store_numbers(out, spec);
    if (st != ABL_OK)
        return st;
    mpq_set(out->numbers[0], spec->numbers[0].value);
    mpq_set(out->numbers[1], spec->numbers[1].value);
    for (int h = 1; h <= H; h++) {
        abl_slope *s = &out->slopes[h - 1];
        slope_defaults(s, ABL_SLOPE_TARGET, h);
        s->target_lo = out->numbers[0];
        s->target_hi = out->numbers[1];
        s->geo_num = H > 1 ? h - 1 : 0;
        s->geo_den = H > 1 ? H - 1 : 1;
    }
    return ABL_OK;
}

/* Mitigation E: targets D1 * 2^(h-1), exact. */
static abl_status build_robust(const abl_schedule_spec *spec, int H, abl_schedule *out)
{
    out->numbers = malloc((size_t)H * sizeof *out->numbers);
    out->texts = malloc(1);
    if (out->numbers == NULL || out->texts == NULL)
        return ABL_ERR_NO_MEMORY;
    out->texts[0] = '\0';
    for (int h = 1; h <= H; h++) {
        abl_slope *s = &out->slopes[h - 1];
        mpq_init(out->numbers[h - 1]);
        out->nnumbers = (size_t)h;
        slope_defaults(s, spec->kind == ABL_SCHEDULE_ROBUST ? ABL_SLOPE_TARGET : ABL_SLOPE_LOG_TARGET, h);
        mpq_mul_2exp(out->numbers[h - 1], spec->numbers[0].value, (mp_bitcnt_t)(h - 1));
        s->target_lo = s->target_hi = out->numbers[h - 1];
    }
    return ABL_OK;
}

/* The display value, and a range check: the blindness engine needs a positive finite double. */
static abl_status schedule_values(abl_schedule *out)
{
    abl_status st = ABL_OK;
    mpfr_t v;
    mpfr_init2(v, 53);
    for (int h = 0; st == ABL_OK && h < out->count; h++) {
        abl_slope *s = &out->slopes[h];
        st = abl_slope_mpfr(v, s, MPFR_RNDN);
        if (st == ABL_OK) {
            s->value = mpfr_get_d(v, MPFR_RNDN);
            if (!(s->value > 0.0) || s->value > 1.7976931348623157e308)
                st = ABL_ERR_BAD_SLOPE;
        }
    }
    mpfr_clear(v);
    return st;
}

static abl_status build_into(const abl_schedule_spec *spec, int heads, long tau_log2, abl_schedule *out)
{
    int list = kind_is_list(spec->kind);
    int H = heads;
    if (spec->kind < ABL_SCHEDULE_PRESS || spec->kind > ABL_SCHEDULE_ROBUST_LOG)
        return ABL_ERR_INVALID_ARGUMENT;
    if (!list && H == 0)
        return ABL_ERR_HEADS_RANGE;
    if (list && H == 0)
        H = (int)spec->count;
    if (list && spec->count != (size_t)H)
        return ABL_ERR_HEADS_RANGE;
    if ((spec->kind == ABL_SCHEDULE_GEOMETRIC && spec->count != 2) ||
        ((spec->kind == ABL_SCHEDULE_ROBUST || spec->kind == ABL_SCHEDULE_ROBUST_LOG) && spec->count != 1))
        return ABL_ERR_INVALID_ARGUMENT;
    out->slopes = calloc((size_t)H, sizeof *out->slopes);
    out->spec = strdup(spec->text != NULL ? spec->text : kind_names[spec->kind]);
    if (out->slopes == NULL || out->spec == NULL)
        return ABL_ERR_NO_MEMORY;
    out->count = H;
    out->kind = spec->kind;
    out->mpt_bias = spec->mpt_bias;
    abl_status st = ABL_OK;
    if (list)
        st = build_list(spec, H, out);
    else if (spec->kind == ABL_SCHEDULE_GEOMETRIC)
        st = build_geometric(spec, H, out);
    else if (spec->kind == ABL_SCHEDULE_ROBUST || spec->kind == ABL_SCHEDULE_ROBUST_LOG)
        st = build_robust(spec, H, out);
    else
        build_pow2(spec, H, out);
    if (st == ABL_OK && kind_is_fitted(spec->kind)) {
        if (tau_log2 >= 0)
            return ABL_ERR_DEGENERATE;
        for (int h = 0; h < H; h++)
            out->slopes[h].tau_log2 = tau_log2;
    }
    return st == ABL_OK ? schedule_values(out) : st;
}

abl_status abl_schedule_build(const abl_schedule_spec *spec, int heads, long tau_log2, abl_schedule *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (heads < 0 || heads > ABL_MAX_HEADS)
        return ABL_ERR_HEADS_RANGE;
    abl_schedule_spec press;
    memset(&press, 0, sizeof press);
    press.kind = ABL_SCHEDULE_PRESS;
    press.mpt_bias = 8;
    abl_status st = build_into(spec != NULL ? spec : &press, heads, tau_log2, out);
    if (st != ABL_OK)
        abl_schedule_free(out);
    return st;
}

abl_status abl_schedule_parse(const char *spec, int heads, long tau_log2, abl_schedule *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (spec == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (heads < 0 || heads > ABL_MAX_HEADS)
        return ABL_ERR_HEADS_RANGE;
    abl_schedule_spec s;
    abl_status st = abl_schedule_spec_parse(spec, &s, NULL);
    if (st == ABL_OK)
        st = abl_schedule_build(&s, heads, tau_log2, out);
    abl_schedule_spec_free(&s);
    return st;
}
