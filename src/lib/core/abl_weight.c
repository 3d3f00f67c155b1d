/* alibi-blind: the weight level (spec §4), certified.
 *
 * A query row attends k keys at distances d = 0..k-1 with bias b(d) = max(-m g(d), c) (c = -inf without a
 * clamp; g(d) = d or ln(d + 1)). Every key has logit 0 except the one asked about, which has logit eps.
 * Its exact softmax weight is w = e^(eps + b) / (S_k - e^b + e^(eps + b)), S_k = sum_d e^(b(d)), and
 *   w <= e^tau  <=>  eps + b <= tau + ln S_k - ln(1 - e^tau + e^(tau - eps)),
 * so the weight level is the exponent level with tau raised by
 *   L = ln S_k - log1p(e^tau expm1(-eps))        (L = ln S_k for eps = 0).
 * S_k: linear, unclamped: expm1(-m k)/expm1(-m); log: the generalised harmonic sum sum_{j<=k} j^-m,
 * enclosed by Euler-Maclaurin with a bounded remainder; a clamp adds (k - D) e^c for the D keys the clamp
 * leaves alone. Every enclosure below holds at an exact point m; S, the tails and the mass are monotone
 * in m, so the caller evaluates them at the two ends of m's interval. */
#include <string.h>
#include "abl_internal.h"

/* Working precision guard bits, and how many ulps of it each ball result is widened by. */
#define GUARD 32
#define ULPS_BITS 20
/* Direct terms of a harmonic sum before Euler-Maclaurin takes over, at most. */
#define DIRECT_MAX 4096UL
#define EM_TERMS 10

/* B_{2i} numerators and denominators, i = 1..10. */
static const long bern_num[EM_TERMS] = {1, -1, 1, -1, 5, -691, 7, -3617, 43867, -174611};
static const long bern_den[EM_TERMS] = {6, 30, 42, 30, 66, 2730, 6, 510, 798, 330};

static void set_u64_exact(mpfr_t x, uint64_t v)
{
    mpfr_set_prec(x, 64);
    mpfr_set_uj(x, v, MPFR_RNDN);
}

/* Direct terms of a harmonic sum run up to A - 1; A grows with the precision so that the Euler-Maclaurin
 * remainder stays below 2^-prec. */
static uint64_t direct_limit(mpfr_prec_t prec)
{
    uint64_t A = 65;
    if (prec > 120) {
        long e = (long)(prec / 20) + 1;
        A = e >= 12 ? DIRECT_MAX : (UINT64_C(1) << e);
        if (A < 65)
            A = 65;
    }
    return A;
}

/* Adds j^-m (negm = -m) for j = a .. min(b, A - 1) to [lo, hi]; returns the first j not added. */
static uint64_t harmonic_direct(mpfr_t lo, mpfr_t hi, const mpfr_t negm, uint64_t a, uint64_t b, uint64_t A,
                                mpfr_prec_t wp)
{
    mpfr_t t, tl;
    mpfr_inits2(wp, t, tl, (mpfr_ptr)0);
    uint64_t j = a;
    for (; j <= b && j < A; j++) {
        /* One correctly rounded power per term (the cost of these sums): j^-m lies strictly between the
         * neighbours of its nearest rounding, so they bound it (half the work of a directed pair). */
        mpfr_ui_pow(t, (unsigned long)j, negm, MPFR_RNDN);
        mpfr_set(tl, t, MPFR_RNDN);
        mpfr_nextbelow(tl);
        mpfr_nextabove(t);
        mpfr_add(lo, lo, tl, MPFR_RNDD);
        mpfr_add(hi, hi, t, MPFR_RNDU);
    }
    mpfr_clears(t, tl, (mpfr_ptr)0);
    return j;
}

/* I = int_A'^b x^-m dx = A'^(1-m) expm1((1-m) ln(b/A'))/(1-m), or ln(b/A') for m = 1 (fa = A'^-m). */
static void em_integral(mpfr_t I, const mpfr_t fa, const mpfr_t m, uint64_t Ap, uint64_t b, mpfr_prec_t wp)
{
    mpfr_t u, Lg, t, term, x;
    mpfr_inits2(wp, Lg, t, term, (mpfr_ptr)0);
    mpfr_init2(u, (mpfr_get_prec(m) > wp ? mpfr_get_prec(m) : wp) + 2);
    mpfr_init2(x, 64);
    mpfr_ui_sub(u, 1, m, MPFR_RNDN); /* exact: u has enough bits */
    set_u64_exact(x, b);
    mpfr_log(Lg, x, MPFR_RNDN);
    set_u64_exact(x, Ap);
    mpfr_log(t, x, MPFR_RNDN);
    mpfr_sub(Lg, Lg, t, MPFR_RNDN);
    if (mpfr_zero_p(u)) {
        mpfr_set(I, Lg, MPFR_RNDN);
    } else {
        mpfr_mul(term, u, Lg, MPFR_RNDN);
        mpfr_expm1(term, term, MPFR_RNDN);
        mpfr_div(term, term, u, MPFR_RNDN);
        mpfr_mul_ui(I, fa, (unsigned long)Ap, MPFR_RNDN); /* A'^(1-m) */
        mpfr_mul(I, I, term, MPFR_RNDN);
    }
    mpfr_clears(u, Lg, t, term, x, (mpfr_ptr)0);
}

/* The corrections sum_i B_2i/(2i)! (m)_(2i-1) (A'^(-m-2i+1) - b^(-m-2i+1)), i = 1..EM_TERMS, added to val,
 * their magnitudes to mag (fa = A'^-m, fb = b^-m); leaves poch = (m)_21 and ta = A'^(-m-21). */
static void em_corrections(mpfr_t val, mpfr_t mag, mpfr_t poch, mpfr_t ta, const mpfr_t fa, const mpfr_t fb,
                           const mpfr_t m, uint64_t Ap, uint64_t b, mpfr_prec_t wp)
{
    mpfr_t tb, term, t, x;
    mpfr_inits2(wp, tb, term, t, (mpfr_ptr)0);
    mpfr_init2(x, 64);
    mpfr_set(poch, m, MPFR_RNDN); /* (m)_1 */
    mpfr_set(ta, fa, MPFR_RNDN);  /* A'^-m, then times A'^-(2i-1) */
    mpfr_set(tb, fb, MPFR_RNDN);
    mpfr_div_ui(ta, ta, (unsigned long)Ap, MPFR_RNDN);
    set_u64_exact(x, b);
    mpfr_div(tb, tb, x, MPFR_RNDN);
    mpq_t coef;
    mpz_t fac;
    mpq_init(coef);
    mpz_init(fac);
    for (int i = 1; i <= EM_TERMS; i++) {
        mpz_fac_ui(fac, (unsigned long)(2 * i));
        mpq_set_si(coef, bern_num[i - 1], (unsigned long)bern_den[i - 1]);
        mpz_mul(mpq_denref(coef), mpq_denref(coef), fac);
        mpq_canonicalize(coef);
        mpfr_sub(term, ta, tb, MPFR_RNDN);
        mpfr_mul(term, term, poch, MPFR_RNDN);
        mpfr_mul_q(term, term, coef, MPFR_RNDN);
        mpfr_add(val, val, term, MPFR_RNDN);
        mpfr_abs(term, term, MPFR_RNDN);
        mpfr_add(mag, mag, term, MPFR_RNDN);
        /* (m)_(2i+1) = (m)_(2i-1) (m + 2i - 1)(m + 2i); A'^-(2i+1) */
        mpfr_add_ui(t, m, (unsigned long)(2 * i - 1), MPFR_RNDN);
        mpfr_mul(poch, poch, t, MPFR_RNDN);
        mpfr_add_ui(t, m, (unsigned long)(2 * i), MPFR_RNDN);
        mpfr_mul(poch, poch, t, MPFR_RNDN);
        set_u64_exact(x, Ap);
        mpfr_div(ta, ta, x, MPFR_RNDN);
        mpfr_div(ta, ta, x, MPFR_RNDN);
        set_u64_exact(x, b);
        mpfr_div(tb, tb, x, MPFR_RNDN);
        mpfr_div(tb, tb, x, MPFR_RNDN);
    }
    mpq_clear(coef);
    mpz_clear(fac);
    mpfr_clears(tb, term, t, x, (mpfr_ptr)0);
}

/* Euler-Maclaurin from A' to b, added to [lo, hi] (negm = -m):
 *   sum = I + (f(A') + f(b))/2 + sum_i B_2i/(2i)! (m)_(2i-1) (A'^(-m-2i+1) - b^(-m-2i+1)) + R,
 *   |R| <= 4/(2 pi)^20 (m)_19 A'^(-m-19). Terms are computed to nearest at wp bits and the result
 * widened by 2^ULPS_BITS ulps of wp per term (a generous bound on their rounding errors). */
static void harmonic_em(mpfr_t lo, mpfr_t hi, const mpfr_t m, const mpfr_t negm, uint64_t Ap, uint64_t b,
                        mpfr_prec_t wp)
{
    mpfr_t fa, fb, I, poch, ta, val, mag, rad, t, x;
    mpfr_inits2(wp, fa, fb, I, poch, ta, val, mag, rad, t, (mpfr_ptr)0);
    mpfr_init2(x, 64);
    mpfr_ui_pow(fa, (unsigned long)Ap, negm, MPFR_RNDN);
    mpfr_ui_pow(fb, (unsigned long)b, negm, MPFR_RNDN);
    em_integral(I, fa, m, Ap, b, wp);
    mpfr_add(val, fa, fb, MPFR_RNDN);
    mpfr_div_2ui(val, val, 1, MPFR_RNDN);
    mpfr_add(val, val, I, MPFR_RNDN);
    mpfr_abs(mag, val, MPFR_RNDN);
    mpfr_add(mag, mag, I, MPFR_RNDN);
    em_corrections(val, mag, poch, ta, fa, fb, m, Ap, b, wp);
    /* poch = (m)_21 >= (m)_19 (m + 19)(m + 20) >= (m)_19 for m > 0; ta = A'^(-m-21): bound R by
     * 4/(2 pi)^20 (m)_19 A'^(-m-19) <= 4.1e-16 (m)_21 A'^(-m-21) A'^2 / ((m+19)(m+20)) <= poch ta A'^2 2^-51 */
    mpfr_mul(rad, poch, ta, MPFR_RNDU);
    set_u64_exact(x, Ap);
    mpfr_mul(rad, rad, x, MPFR_RNDU);
    mpfr_mul(rad, rad, x, MPFR_RNDU);
    mpfr_div_2ui(rad, rad, 51, MPFR_RNDU);
    mpfr_mul_2si(mag, mag, ULPS_BITS - (long)wp, MPFR_RNDU);
    mpfr_add(rad, rad, mag, MPFR_RNDU);
    mpfr_sub(t, val, rad, MPFR_RNDD);
    mpfr_add(lo, lo, t, MPFR_RNDD);
    mpfr_add(t, val, rad, MPFR_RNDU);
    mpfr_add(hi, hi, t, MPFR_RNDU);
    mpfr_clears(fa, fb, I, poch, ta, val, mag, rad, t, x, (mpfr_ptr)0);
}

/* lo <= sum_{j=a}^{b} j^(-m) <= hi at the exact point m > 0 (1 <= a). */
static void harmonic_sum(mpfr_t lo, mpfr_t hi, const mpfr_t m, uint64_t a, uint64_t b)
{
    mpfr_prec_t prec = mpfr_get_prec(lo), wp = prec + GUARD;
    mpfr_set_zero(lo, 1);
    mpfr_set_zero(hi, 1);
    if (b < a)
        return;
    mpfr_t negm;
    mpfr_init2(negm, mpfr_get_prec(m));
    mpfr_neg(negm, m, MPFR_RNDN); /* exact */
    uint64_t j = harmonic_direct(lo, hi, negm, a, b, direct_limit(prec), wp);
    if (j <= b)
        harmonic_em(lo, hi, m, negm, j, b, wp);
    if (mpfr_sgn(lo) < 0)
        mpfr_set_zero(lo, 1);
    mpfr_clear(negm);
}

/* lo <= sum_{d=a}^{b-1} e^(-m d) <= hi at the exact point m > 0 (a <= b): e^(-m a) expm1(-m (b-a)) / expm1(-m). */
static void geometric_sum(mpfr_t lo, mpfr_t hi, const mpfr_t m, uint64_t a, uint64_t b)
{
    mpfr_prec_t prec = mpfr_get_prec(lo) + GUARD;
    if (b <= a) {
        mpfr_set_zero(lo, 1);
        mpfr_set_zero(hi, 1);
        return;
    }
    mpfr_t x, num, den, e;
    mpfr_inits2(prec, num, den, e, (mpfr_ptr)0);
    mpfr_init2(x, 64);
    for (int up = 0; up < 2; up++) {
        mpfr_rnd_t r = up ? MPFR_RNDU : MPFR_RNDD, rr = up ? MPFR_RNDD : MPFR_RNDU;
        /* numerator -expm1(-m n) > 0: larger when -m n is smaller (more negative) */
        set_u64_exact(x, b - a);
        mpfr_mul(num, m, x, r);
        mpfr_neg(num, num, MPFR_RNDN);
        mpfr_expm1(num, num, rr);
        mpfr_neg(num, num, MPFR_RNDN);
        mpfr_neg(den, m, MPFR_RNDN);
        mpfr_expm1(den, den, up ? MPFR_RNDU : MPFR_RNDD); /* -expm1(-m): smaller when expm1 is rounded up */
        mpfr_neg(den, den, MPFR_RNDN);
        set_u64_exact(x, a);
        mpfr_mul(e, m, x, rr);
        mpfr_neg(e, e, MPFR_RNDN);
        mpfr_exp(e, e, r);
        mpfr_div(num, num, den, r);
        mpfr_mul(up ? hi : lo, num, e, r);
    }
    mpfr_clears(x, num, den, e, (mpfr_ptr)0);
}

/*
 * D: how many keys d < k keep their unclamped bias (-m g(d) > c), at the exact point m. Without a clamp, or
 * when the clamp engages beyond the row, D = k.
 */
static uint64_t unclamped_keys(const mpfr_t m, const mpq_t *clamp, abl_distance dist, uint64_t k)
{
    if (clamp == NULL)
        return k;
    if (mpq_sgn(*clamp) >= 0)
        return 0;
    mpq_t mq, x;
    mpq_inits(mq, x, (mpq_ptr)0);
    mpfr_get_q(mq, m);
    mpq_neg(x, *clamp);
    mpq_div(x, x, mq); /* -c/m > 0 */
    uint64_t D = k;
    mpz_t z;
    mpz_init(z);
    if (dist == ABL_DISTANCE_LINEAR) {
        /* d < -c/m: D = ceil(-c/m) */
        mpz_cdiv_q(z, mpq_numref(x), mpq_denref(x));
    } else {
        /* d + 1 < e^(-c/m) (transcendental: never an integer): D = ceil(e^(-c/m)) - 1 = floor(e^(-c/m)) */
        mpfr_prec_t p = 128;
        mpfr_t lo, hi;
        mpfr_inits2(p, lo, hi, (mpfr_ptr)0);
        mpz_t zh;
        mpz_init(zh);
        for (;;) {
            mpfr_set_prec(lo, p);
            mpfr_set_prec(hi, p);
            mpfr_set_q(lo, x, MPFR_RNDD);
            mpfr_set_q(hi, x, MPFR_RNDU);
            /* beyond 2^64 keys the clamp never engages inside any row */
            if (mpfr_cmp_ui(lo, 45) > 0) {
                mpz_set_ui(z, 1);
                mpz_mul_2exp(z, z, 70);
                break;
            }
            mpfr_exp(lo, lo, MPFR_RNDD);
            mpfr_exp(hi, hi, MPFR_RNDU);
            mpfr_get_z(z, lo, MPFR_RNDD);
            mpfr_get_z(zh, hi, MPFR_RNDD);
            if (mpz_cmp(z, zh) == 0 || p >= ABL_ZIV_MAX_PREC)
                break;
            p *= 2;
        }
        mpz_clear(zh);
        mpfr_clears(lo, hi, (mpfr_ptr)0);
    }
    if (mpz_sizeinbase(z, 2) <= 64) {
        uint64_t v = 0;
        mpz_export(&v, NULL, 1, sizeof v, 0, 0, z);
        if (mpz_sgn(z) == 0)
            v = 0;
        if (v < D)
            D = v;
    }
    mpz_clear(z);
    mpq_clears(mq, x, (mpq_ptr)0);
    return D;
}

/* Enclose sum_{d=a}^{b-1} e^(b(d)) at the exact point m (the clamped bias row; D from unclamped_keys). */
static void row_sum_point(mpfr_t lo, mpfr_t hi, const mpfr_t m, const mpq_t *clamp, abl_distance dist, uint64_t D,
                          uint64_t a, uint64_t b)
{
    mpfr_prec_t prec = mpfr_get_prec(lo);
    uint64_t e = b < D ? b : D;
    if (dist == ABL_DISTANCE_LINEAR)
        geometric_sum(lo, hi, m, a, e > a ? e : a);
    else
        harmonic_sum(lo, hi, m, a + 1, e); /* j = d + 1 */
    uint64_t first_clamped = a > D ? a : D;
    if (clamp != NULL && b > first_clamped) {
        mpfr_t c, n;
        mpfr_inits2(prec + GUARD, c, n, (mpfr_ptr)0);
        set_u64_exact(n, b - first_clamped);
        mpfr_set_q(c, *clamp, MPFR_RNDD);
        mpfr_exp(c, c, MPFR_RNDD);
        mpfr_mul(c, c, n, MPFR_RNDD);
        mpfr_add(lo, lo, c, MPFR_RNDD);
        mpfr_set_q(c, *clamp, MPFR_RNDU);
        mpfr_exp(c, c, MPFR_RNDU);
        mpfr_mul(c, c, n, MPFR_RNDU);
        mpfr_add(hi, hi, c, MPFR_RNDU);
        mpfr_clears(c, n, (mpfr_ptr)0);
    }
}

void abl_weight_row_sum(mpfr_t lo, mpfr_t hi, const mpfr_t m_lo, const mpfr_t m_hi, const mpq_t *clamp,
                        abl_distance dist, uint64_t a, uint64_t b, uint64_t k)
{
    /* Every term is non-increasing in m: the lower bound at m_hi, the upper at m_lo. */
    mpfr_t l2, h2;
    mpfr_inits2(mpfr_get_prec(lo), l2, h2, (mpfr_ptr)0);
    row_sum_point(lo, h2, m_hi, clamp, dist, unclamped_keys(m_hi, clamp, dist, k), a, b);
    row_sum_point(l2, hi, m_lo, clamp, dist, unclamped_keys(m_lo, clamp, dist, k), a, b);
    mpfr_clears(l2, h2, (mpfr_ptr)0);
}

void abl_weight_offset(mpfr_t lo, mpfr_t hi, const mpfr_t m_lo, const mpfr_t m_hi, const mpfr_t eps_lo,
                       const mpfr_t eps_hi, const mpq_t *clamp, abl_distance dist, uint64_t k, unsigned long absk)
{
    mpfr_prec_t prec = mpfr_get_prec(lo) + GUARD;
    mpfr_t sl, sh;
    mpfr_inits2(prec, sl, sh, (mpfr_ptr)0);
    abl_weight_row_sum(sl, sh, m_lo, m_hi, clamp, dist, 0, k, k);
    mpfr_log(lo, sl, MPFR_RNDD);
    mpfr_log(hi, sh, MPFR_RNDU);
    if (!mpfr_zero_p(eps_lo) || !mpfr_zero_p(eps_hi)) {
        /* W = log1p(e^tau expm1(-eps)), increasing in both e^tau (for eps < 0) and expm1(-eps) */
        mpfr_t tl, th, gl, gh, vl, vh;
        mpfr_inits2(prec, tl, th, gl, gh, vl, vh, (mpfr_ptr)0);
        mpfr_const_log2(tl, MPFR_RNDU);
        mpfr_mul_ui(tl, tl, absk, MPFR_RNDU);
        mpfr_neg(tl, tl, MPFR_RNDN); /* tau lower bound */
        mpfr_const_log2(th, MPFR_RNDD);
        mpfr_mul_ui(th, th, absk, MPFR_RNDD);
        mpfr_neg(th, th, MPFR_RNDN);
        mpfr_exp(tl, tl, MPFR_RNDD);
        mpfr_exp(th, th, MPFR_RNDU);
        /* expm1(-eps) is decreasing in eps */
        mpfr_neg(gl, eps_hi, MPFR_RNDD);
        mpfr_expm1(gl, gl, MPFR_RNDD);
        mpfr_neg(gh, eps_lo, MPFR_RNDU);
        mpfr_expm1(gh, gh, MPFR_RNDU);
        /* product of [tl, th] > 0 with [gl, gh] */
        mpfr_mul(vl, mpfr_sgn(gl) >= 0 ? tl : th, gl, MPFR_RNDD);
        mpfr_mul(vh, mpfr_sgn(gh) >= 0 ? th : tl, gh, MPFR_RNDU);
        mpfr_log1p(vl, vl, MPFR_RNDD);
        mpfr_log1p(vh, vh, MPFR_RNDU);
        mpfr_sub(lo, lo, vh, MPFR_RNDD);
        mpfr_sub(hi, hi, vl, MPFR_RNDU);
        mpfr_clears(tl, th, gl, gh, vl, vh, (mpfr_ptr)0);
    }
    mpfr_clears(sl, sh, (mpfr_ptr)0);
}
