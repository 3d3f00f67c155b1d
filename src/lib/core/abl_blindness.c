/* alibi-blind: blindness distances (spec §6).
 *
 * delta = min{ d in N : eps - m g(d) <= tau } (or < tau under flush-to-zero), tau = k ln 2.
 * With Q = (eps - tau)/m (linear) or Q = exp((eps - tau)/m) - 1 (log), delta is ceil(Q), floor(Q) + 1
 * (strict) or the nearest integer (paper), then at least 1 (spec §6): the diagonal d = 0 is never blind
 * at the exponent level (exp(0) = 1; the paper's N starts at 1), and only the weight level of a row with
 * two or more keys can give 0, when the diagonal's own normalised weight 1/S vanishes (Q <= 0, Q < 0
 * under ftz); the paper's rounding never turns a positive Q into 0. Q is almost always transcendental, so a
 * Ziv loop on a certified interval decides it; the cases where Q can be an exact integer (slopes fitted
 * to the same tau, rational slopes with log distances: Q = 2^(|k|/m) - 1) are solved symbolically. */
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "abl/core/blindness.h"
#include "abl_internal.h"

/* A Ziv loop materialises integers up to 4096 bits (the Table 8 rule needs exactness near 2^1024);
 * larger ones keep 64 certified bits in `approx`. */
#define ABL_DELTA_ZIV_BITS_MAX 4096L

typedef enum { RULE_CEIL, RULE_FLOOR_PLUS_ONE, RULE_NEAREST } abl_rule;

void abl_delta_init(abl_delta *d)
{
    d->never = 0;
    d->exact = 0;
    d->capped = 0;
    mpz_init(d->value);
    mpfr_init2(d->approx, 64);
    mpfr_set_zero(d->approx, 1);
}

void abl_delta_clear(abl_delta *d)
{
    mpz_clear(d->value);
    mpfr_clear(d->approx);
}

void abl_delta_set(abl_delta *dst, const abl_delta *src)
{
    dst->never = src->never;
    dst->exact = src->exact;
    dst->capped = src->capped;
    mpz_set(dst->value, src->value);
    mpfr_set(dst->approx, src->approx, MPFR_RNDN);
}

/* m exactly, when it is rational (decimal slopes, 2^integer). */
static int slope_rational(const abl_slope *s, mpq_t m)
{
    if (s->form == ABL_SLOPE_RATIONAL) {
        if (s->rational == NULL)
            return 0;
        mpq_set(m, s->rational);
        return 1;
    }
    if (s->form == ABL_SLOPE_POW2 && s->pow2_den == 1 && s->pow2_num > -100000 && s->pow2_num < 100000) {
        mpq_set_ui(m, 1, 1);
        if (s->pow2_num >= 0)
            mpz_mul_2exp(mpq_numref(m), mpq_numref(m), (mp_bitcnt_t)s->pow2_num);
        else
            mpz_mul_2exp(mpq_denref(m), mpq_denref(m), (mp_bitcnt_t)(-s->pow2_num));
        return 1;
    }
    return 0;
}

/* The target t = lo (hi/lo)^(r/s) of a fitted slope exactly, when it is rational. */
static int target_rational(const abl_slope *s, mpq_t t)
{
    if (s->form != ABL_SLOPE_TARGET && s->form != ABL_SLOPE_LOG_TARGET)
        return 0;
    if (s->target_lo == NULL)
        return 0;
    mpq_set(t, s->target_lo);
    if (s->geo_num == 0)
        return 1;
    if (s->geo_num < 0 || s->geo_den <= 0)
        return 0;
    mpq_t ratio;
    mpq_init(ratio);
    int ok = 0;
    if (s->target_hi != NULL) {
        mpq_div(ratio, s->target_hi, t);
        unsigned long r = (unsigned long)s->geo_num, d = (unsigned long)s->geo_den;
        unsigned long g = r, h = d;
        while (h != 0) {
            unsigned long tmp = g % h;
            g = h;
            h = tmp;
        }
        r /= g;
        d /= g;
        mpz_t pr, qr;
        mpz_inits(pr, qr, (mpz_ptr)0);
        /* (p/q)^(r/d) in lowest terms is rational iff p and q are perfect d-th powers. */
        if (mpz_root(pr, mpq_numref(ratio), d) != 0 && mpz_root(qr, mpq_denref(ratio), d) != 0) {
            mpz_pow_ui(pr, pr, r);
            mpz_pow_ui(qr, qr, r);
            mpz_mul(mpq_numref(t), mpq_numref(t), pr);
            mpz_mul(mpq_denref(t), mpq_denref(t), qr);
            mpq_canonicalize(t);
            ok = 1;
        }
        mpz_clears(pr, qr, (mpz_ptr)0);
    }
    mpq_clear(ratio);
    return ok;
}

static void rule_rational(mpz_t out, const mpq_t q, abl_rule rule)
{
    switch (rule) {
    case RULE_CEIL:
        mpz_cdiv_q(out, mpq_numref(q), mpq_denref(q));
        break;
    case RULE_FLOOR_PLUS_ONE:
        mpz_fdiv_q(out, mpq_numref(q), mpq_denref(q));
        mpz_add_ui(out, out, 1);
        break;
    case RULE_NEAREST: {
        /* floor(q + 1/2): ties go up, the way a reader rounds 22358.5. */
        mpz_t n, d;
        mpz_init(n);
        mpz_init(d);
        mpz_mul_2exp(n, mpq_numref(q), 1);
        mpz_add(n, n, mpq_denref(q));
        mpz_mul_2exp(d, mpq_denref(q), 1);
        mpz_fdiv_q(out, n, d);
        mpz_clear(n);
        mpz_clear(d);
        /* 0 < q < 1/2: the key at d = 0 is not blind (0 < q), so rounding must not make it so. */
        if (mpz_sgn(out) <= 0 && mpq_sgn(q) > 0)
            mpz_set_ui(out, 1);
        break;
    }
    }
}

/* The rule applied to one bound of the interval; `up` says which bound (for the +1/2 rounding). */
static void rule_bound(mpz_t out, const mpfr_t x, abl_rule rule, int up)
{
    switch (rule) {
    case RULE_CEIL:
        mpfr_get_z(out, x, MPFR_RNDU);
        break;
    case RULE_FLOOR_PLUS_ONE:
        mpfr_get_z(out, x, MPFR_RNDD);
        mpz_add_ui(out, out, 1);
        break;
    case RULE_NEAREST: {
        mpfr_t h;
        mpfr_init2(h, mpfr_get_prec(x) + 2);
        mpfr_add_d(h, x, 0.5, up ? MPFR_RNDU : MPFR_RNDD);
        mpfr_get_z(out, h, MPFR_RNDD);
        mpfr_clear(h);
        /* As rule_rational: a positive Q never rounds to 0 (still monotone in x, so the bounds enclose). */
        if (mpz_sgn(out) <= 0 && mpfr_sgn(x) > 0)
            mpz_set_ui(out, 1);
        break;
    }
    }
}

typedef struct {
    const abl_slope *slope;
    const mpq_t *eps;
    mpq_srcptr cap;           /* soft cap z: the logit is z tanh(eps/z); NULL = eps itself */
    unsigned long absk;       /* tau = -absk ln 2 */
    abl_distance distance;
    uint64_t weight_keys;     /* 0: exponent level */
    const mpq_t *clamp;       /* weight level: the clamp shapes S (NULL: none) */
} q_ctx;

/* lo <= eps' <= hi for the logit eps' = eps, or z tanh(eps/z) under a soft cap z > 0 (increasing in eps). */
static void logit_interval(mpfr_t lo, mpfr_t hi, const mpq_t eps, mpq_srcptr cap)
{
    if (cap == NULL || mpq_sgn(eps) == 0) {
        mpfr_set_q(lo, eps, MPFR_RNDD);
        mpfr_set_q(hi, eps, MPFR_RNDU);
        return;
    }
    mpq_t r;
    mpq_init(r);
    mpq_div(r, eps, cap);
    mpfr_set_q(lo, r, MPFR_RNDD);
    mpfr_set_q(hi, r, MPFR_RNDU);
    mpfr_tanh(lo, lo, MPFR_RNDD);
    mpfr_tanh(hi, hi, MPFR_RNDU);
    /* z > 0 keeps the order; the product's rounding keeps the bounds. */
    mpfr_mul_q(lo, lo, cap, MPFR_RNDD);
    mpfr_mul_q(hi, hi, cap, MPFR_RNDU);
    mpq_clear(r);
}

/* Certified enclosure of Q at the precision of lo/hi. */
static int q_interval(mpfr_t lo, mpfr_t hi, void *vctx)
{
    const q_ctx *c = vctx;
    mpfr_prec_t prec = mpfr_get_prec(lo) + 16;
    mpfr_t a_lo, a_hi, m_lo, m_hi, n_lo, n_hi;
    mpfr_inits2(prec, a_lo, a_hi, m_lo, m_hi, n_lo, n_hi, (mpfr_ptr)0);
    int bad = 0;
    mpfr_const_log2(a_lo, MPFR_RNDD);
    mpfr_const_log2(a_hi, MPFR_RNDU);
    mpfr_mul_ui(a_lo, a_lo, c->absk, MPFR_RNDD);
    mpfr_mul_ui(a_hi, a_hi, c->absk, MPFR_RNDU);
    logit_interval(n_lo, n_hi, *c->eps, c->cap);
    mpfr_add(n_lo, n_lo, a_lo, MPFR_RNDD);
    mpfr_add(n_hi, n_hi, a_hi, MPFR_RNDU);
    if (abl_slope_mpfr(m_lo, c->slope, MPFR_RNDD) != ABL_OK || abl_slope_mpfr(m_hi, c->slope, MPFR_RNDU) != ABL_OK ||
        mpfr_sgn(m_lo) <= 0)
        bad = 1;
    if (!bad && c->weight_keys > 0) {
        /* Weight level: the threshold rises by L = ln S_k - log1p(e^tau expm1(-eps')) (abl_weight.c). */
        mpfr_t l_lo, l_hi, el, eh;
        mpfr_inits2(prec, l_lo, l_hi, el, eh, (mpfr_ptr)0);
        logit_interval(el, eh, *c->eps, c->cap);
        abl_weight_offset(l_lo, l_hi, m_lo, m_hi, el, eh, c->clamp, c->distance, c->weight_keys, c->absk);
        mpfr_clears(el, eh, (mpfr_ptr)0);
        mpfr_sub(n_lo, n_lo, l_hi, MPFR_RNDD);
        mpfr_sub(n_hi, n_hi, l_lo, MPFR_RNDU);
        mpfr_clears(l_lo, l_hi, (mpfr_ptr)0);
    }
    if (!bad) {
        /* m > 0: the quotient's lower bound divides by the larger m when the numerator is >= 0. */
        mpfr_div(lo, n_lo, mpfr_sgn(n_lo) >= 0 ? m_hi : m_lo, MPFR_RNDD);
        mpfr_div(hi, n_hi, mpfr_sgn(n_hi) >= 0 ? m_lo : m_hi, MPFR_RNDU);
        if (c->distance == ABL_DISTANCE_LOG) {
            mpfr_expm1(lo, lo, MPFR_RNDD);
            mpfr_expm1(hi, hi, MPFR_RNDU);
        }
        if (!mpfr_number_p(lo) || !mpfr_number_p(hi))
            bad = 1;
    }
    mpfr_clears(a_lo, a_hi, m_lo, m_hi, n_lo, n_hi, (mpfr_ptr)0);
    return bad;
}

/* The smallest delta a query can have (spec §6). At the exponent level the diagonal's exponent is
 * eps - m g(0) = eps, and delta counts from d = 1 (the paper's N): exp(0) = 1 is never blind, even where
 * tau = 0 (fp4-e2m1fn, fp6-e2m3fn) makes "0 <= tau" true, and a logit at or below tau blinds d = 1 first.
 * A row of one key gives that key the weight 1 whatever its logit, bias or clamp: the same. Only a row
 * of two or more keys at the weight level can lose its diagonal (1/S vanishes once S is large). */
static unsigned long delta_min(const abl_blind_query *q)
{
    return q->weight_keys >= 2 ? 0 : 1;
}

static void finish_exact(abl_delta *out, unsigned long min)
{
    if (mpz_cmp_ui(out->value, min) < 0)
        mpz_set_ui(out->value, min);
    out->exact = 1;
    mpfr_set_z(out->approx, out->value, MPFR_RNDN);
}

/* Is exp(x) of the clamped exponent ever at or below tau? Sign of eps' + c + absk ln 2 (eps' the
 * possibly soft-capped logit). */
static abl_status clamp_allows_blindness(const mpq_t eps, mpq_srcptr cap, const mpq_t clamp, unsigned long absk,
                                         int strict, int *allows)
{
    mpq_t s;
    mpq_init(s);
    mpq_add(s, eps, clamp);
    int sign;
    int capped = cap != NULL && mpq_sgn(eps) != 0;
    if (absk == 0 && !capped) {
        sign = mpq_sgn(s);
    } else if (capped) {
        /* z tanh(eps/z) + c + absk ln 2: transcendental (Lindemann) unless it is exactly 0, which a
         * nonzero tanh of a rational never makes rational; widening decides, the cap bounds the work. */
        mpfr_t lo, hi, l2, el, eh;
        mpfr_prec_t prec = ABL_ZIV_START_PREC;
        mpfr_inits2(prec, lo, hi, l2, el, eh, (mpfr_ptr)0);
        for (;;) {
            mpfr_set_prec(lo, prec);
            mpfr_set_prec(hi, prec);
            mpfr_set_prec(l2, prec);
            mpfr_set_prec(el, prec);
            mpfr_set_prec(eh, prec);
            mpfr_const_log2(l2, MPFR_RNDD);
            mpfr_mul_ui(lo, l2, absk, MPFR_RNDD);
            mpfr_const_log2(l2, MPFR_RNDU);
            mpfr_mul_ui(hi, l2, absk, MPFR_RNDU);
            mpfr_add_q(lo, lo, clamp, MPFR_RNDD);
            mpfr_add_q(hi, hi, clamp, MPFR_RNDU);
            logit_interval(el, eh, eps, cap);
            mpfr_add(lo, lo, el, MPFR_RNDD);
            mpfr_add(hi, hi, eh, MPFR_RNDU);
            if (mpfr_sgn(lo) > 0 || mpfr_sgn(hi) < 0 || prec >= ABL_ZIV_MAX_PREC) {
                sign = mpfr_sgn(lo) > 0 ? 1 : -1;
                break;
            }
            prec *= 2;
        }
        mpfr_clears(lo, hi, l2, el, eh, (mpfr_ptr)0);
    } else {
        /* s + absk ln 2 is transcendental (never 0), so widening the precision always decides it. */
        mpfr_t lo, hi, l2;
        mpfr_prec_t prec = ABL_ZIV_START_PREC;
        mpfr_inits2(prec, lo, hi, l2, (mpfr_ptr)0);
        for (;;) {
            mpfr_set_prec(lo, prec);
            mpfr_set_prec(hi, prec);
            mpfr_set_prec(l2, prec);
            mpfr_const_log2(l2, MPFR_RNDD);
            mpfr_mul_ui(lo, l2, absk, MPFR_RNDD);
            mpfr_const_log2(l2, MPFR_RNDU);
            mpfr_mul_ui(hi, l2, absk, MPFR_RNDU);
            mpfr_add_q(lo, lo, s, MPFR_RNDD);
            mpfr_add_q(hi, hi, s, MPFR_RNDU);
            if (mpfr_sgn(lo) > 0 || mpfr_sgn(hi) < 0 || prec >= ABL_ZIV_MAX_PREC) {
                sign = mpfr_sgn(lo) > 0 ? 1 : -1;
                break;
            }
            prec *= 2;
        }
        mpfr_clears(lo, hi, l2, (mpfr_ptr)0);
    }
    mpq_clear(s);
    *allows = strict ? sign < 0 : sign <= 0;
    return ABL_OK;
}

/* Weight level: sign of eps' + c - tau - L (L from abl_weight_offset), by a Ziv loop; *allows as above. */
static abl_status weight_clamp_allows(const q_ctx *c, const mpq_t clamp, int strict, int *allows)
{
    mpfr_prec_t prec = ABL_ZIV_START_PREC;
    long max_prec = c->distance == ABL_DISTANCE_LOG ? ABL_WEIGHT_LOG_MAX_PREC : ABL_ZIV_MAX_PREC;
    mpfr_t lo, hi, l2, m_lo, m_hi, l_lo, l_hi, el, eh;
    mpfr_inits2(prec, lo, hi, l2, m_lo, m_hi, l_lo, l_hi, el, eh, (mpfr_ptr)0);
    int sign = 0;
    abl_status st = ABL_OK;
    for (;;) {
        mpfr_set_prec(lo, prec);
        mpfr_set_prec(hi, prec);
        mpfr_set_prec(l2, prec);
        mpfr_set_prec(m_lo, prec + 16);
        mpfr_set_prec(m_hi, prec + 16);
        mpfr_set_prec(l_lo, prec);
        mpfr_set_prec(l_hi, prec);
        mpfr_set_prec(el, prec + 16);
        mpfr_set_prec(eh, prec + 16);
        if (abl_slope_mpfr(m_lo, c->slope, MPFR_RNDD) != ABL_OK || abl_slope_mpfr(m_hi, c->slope, MPFR_RNDU) != ABL_OK) {
            st = ABL_ERR_BAD_SLOPE;
            break;
        }
        logit_interval(el, eh, *c->eps, c->cap);
        abl_weight_offset(l_lo, l_hi, m_lo, m_hi, el, eh, c->clamp, c->distance, c->weight_keys, c->absk);
        /* eps' + c + absk ln 2 - L */
        mpfr_const_log2(l2, MPFR_RNDD);
        mpfr_mul_ui(lo, l2, c->absk, MPFR_RNDD);
        mpfr_const_log2(l2, MPFR_RNDU);
        mpfr_mul_ui(hi, l2, c->absk, MPFR_RNDU);
        mpfr_add_q(lo, lo, clamp, MPFR_RNDD);
        mpfr_add_q(hi, hi, clamp, MPFR_RNDU);
        mpfr_add(lo, lo, el, MPFR_RNDD);
        mpfr_add(hi, hi, eh, MPFR_RNDU);
        mpfr_sub(lo, lo, l_hi, MPFR_RNDD);
        mpfr_sub(hi, hi, l_lo, MPFR_RNDU);
        if (mpfr_sgn(lo) > 0 || mpfr_sgn(hi) < 0) {
            sign = mpfr_sgn(lo) > 0 ? 1 : -1;
            break;
        }
        if (prec >= max_prec) {
            sign = 0; /* taken as an exact tie */
            break;
        }
        prec *= 2;
    }
    mpfr_clears(lo, hi, l2, m_lo, m_hi, l_lo, l_hi, el, eh, (mpfr_ptr)0);
    *allows = strict ? sign < 0 : sign <= 0;
    return st;
}

/* |k| of tau = k ln 2 (k <= 0) under q's convention, and the rounding rule that turns Q into delta. */
static abl_status query_tau(const abl_slope *slope, const abl_blind_query *q, unsigned long *absk, abl_rule *rule)
{
    if (slope == NULL || q == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (!(slope->value > 0.0))
        return ABL_ERR_BAD_SLOPE;
    if ((unsigned)q->convention >= ABL_CONV_COUNT)
        return ABL_ERR_UNKNOWN_CONVENTION;
    long k;
    abl_status st = abl_threshold_log2_multiple(&q->format, abl_convention_tau_kind(q->convention), &k);
    if (st != ABL_OK)
        return st;
    if (k > 0)
        return ABL_ERR_UNSUPPORTED;
    *absk = (unsigned long)(-k);
    *rule = abl_convention_nearest(q->convention) ? RULE_NEAREST
            : abl_convention_strict(q->convention) ? RULE_FLOOR_PLUS_ONE
                                                    : RULE_CEIL;
    return ABL_OK;
}

/* Can the clamped exponent reach tau at all? At the weight level the clamp decides against tau + L (the
 * clamped weight e^c/S can flush). */
static abl_status clamp_allows(const q_ctx *ctx, const abl_blind_query *q, const mpq_t clamp, int *allows)
{
    int strict = abl_convention_strict(q->convention);
    if (q->weight_keys > 0)
        return weight_clamp_allows(ctx, clamp, strict, allows);
    return clamp_allows_blindness(*ctx->eps, q->softcap, clamp, ctx->absk, strict, allows);
}

/* Linear distance: Q exactly in qv (return 1) when it is rational, else 0. */
static int linear_shortcut(const abl_slope *slope, const mpq_t eps, unsigned long absk, mpq_t qv)
{
    int eps_zero = mpq_sgn(eps) == 0, found = 0;
    mpq_t m, t;
    mpq_inits(m, t, (mpq_ptr)0);
    if (absk == 0 && eps_zero) {
        mpq_set_ui(qv, 0, 1);
        found = 1;
    } else if (absk == 0 && slope_rational(slope, m)) {
        mpq_div(qv, eps, m);
        found = 1;
    } else if (eps_zero && slope->form == ABL_SLOPE_TARGET && slope->tau_log2 < 0 && target_rational(slope, t)) {
        /* Q = (|k| ln2) t / (|k_fit| ln2): the logarithms cancel. */
        mpq_set_ui(qv, absk, (unsigned long)(-slope->tau_log2));
        mpq_canonicalize(qv);
        mpq_mul(qv, qv, t);
        found = 1;
    }
    mpq_clears(m, t, (mpq_ptr)0);
    return found;
}

/* Q = 2^y - 1 (log distance, zero logit, y = |k|/m an integer): delta exactly, or 2^y to 64 bits. */
static void pow2_delta(unsigned long y, abl_rule rule, const abl_blind_query *q, abl_delta *out)
{
    if (y <= (unsigned long)ABL_DELTA_EXACT_BITS_MAX) {
        mpz_set_ui(out->value, 0);
        mpz_setbit(out->value, y);
        if (rule != RULE_FLOOR_PLUS_ONE)
            mpz_sub_ui(out->value, out->value, 1);
        finish_exact(out, delta_min(q));
    } else {
        /* 2^y - 1 to 64 bits is 2^y; y < 2^40 can exceed the default exponent range (2^30). */
        abl_mpfr_range saved = abl_mpfr_range_widen();
        mpfr_set_ui_2exp(out->approx, 1, (mpfr_exp_t)y, MPFR_RNDN);
        abl_mpfr_range_restore(saved);
    }
}

/* Log distance, zero logit: 2 when delta is set (Q = 2^y - 1), 1 with Q exactly in qv, else 0. */
static int log_shortcut(const abl_slope *slope, const abl_blind_query *q, unsigned long absk, abl_rule rule, mpq_t qv,
                        abl_delta *out)
{
    int found = 0;
    mpq_t m, t;
    mpq_inits(m, t, (mpq_ptr)0);
    if (absk == 0) {
        mpq_set_ui(qv, 0, 1);
        found = 1;
    } else if (slope_rational(slope, m)) {
        /* Q = 2^(|k|/m) - 1: an integer whenever |k|/m is. */
        mpq_set_ui(t, absk, 1);
        mpq_div(t, t, m);
        if (mpz_cmp_ui(mpq_denref(t), 1) == 0 && mpz_sizeinbase(mpq_numref(t), 2) <= 40) {
            pow2_delta(mpz_get_ui(mpq_numref(t)), rule, q, out);
            found = 2;
        }
    } else if (slope->form == ABL_SLOPE_LOG_TARGET && slope->tau_log2 < 0 &&
               (unsigned long)(-slope->tau_log2) == absk && target_rational(slope, t)) {
        /* Q = exp(ln(t + 1)) - 1 = t exactly when fitted to this very tau. */
        mpq_set(qv, t);
        found = 1;
    }
    mpq_clears(m, t, (mpq_ptr)0);
    return found;
}

/* delta from a certified interval of Q and a Ziv loop. Huge values need the exponent range MPFR allows. */
static abl_status ziv_delta(q_ctx *ctx, const abl_blind_query *q, abl_rule rule, abl_delta *out)
{
    abl_status st = ABL_OK;
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_prec_t prec = ABL_ZIV_START_PREC;
    /* Log-distance sums tighten only up to about 2^-240 (abl_weight.c): widening past that is futile. */
    long max_prec = q->weight_keys > 0 && q->distance == ABL_DISTANCE_LOG ? ABL_WEIGHT_LOG_MAX_PREC : ABL_ZIV_MAX_PREC;
    mpfr_t lo, hi;
    mpz_t zl, zh;
    mpfr_inits2(prec, lo, hi, (mpfr_ptr)0);
    mpz_inits(zl, zh, (mpz_ptr)0);
    for (;;) {
        mpfr_set_prec(lo, prec);
        mpfr_set_prec(hi, prec);
        if (q_interval(lo, hi, ctx) != 0) {
            st = ABL_ERR_UNSUPPORTED;
            break;
        }
        long bits = mpfr_zero_p(hi) ? 0 : (long)mpfr_get_exp(hi);
        /* At the weight level the exact integer only matters inside a context (< 2^60): past 2^62 the
         * 64 certified bits are kept, which spares Euler-Maclaurin sums at thousands of bits. */
        if ((bits > ABL_DELTA_ZIV_BITS_MAX || (q->weight_keys > 0 && bits > 63 && mpfr_cmp_ui_2exp(lo, 1, 62) >= 0)) &&
            mpfr_sgn(lo) > 0) {
            /* Beyond any context: keep 64 correct bits, not a multi-megabyte integer. */
            mpfr_set(out->approx, lo, MPFR_RNDN);
            break;
        }
        if (bits + 64 > prec) {
            prec = bits + 64;
            continue;
        }
        rule_bound(zl, lo, rule, 0);
        rule_bound(zh, hi, rule, 1);
        if (mpz_cmp(zl, zh) == 0 || prec >= max_prec + bits) {
            /* At the cap, Q is taken to sit exactly on the rule's boundary integer (and it is said). */
            out->capped = mpz_cmp(zl, zh) != 0;
            mpz_set(out->value, rule == RULE_CEIL ? zl : zh);
            finish_exact(out, delta_min(q));
            break;
        }
        prec *= 2;
    }
    mpz_clears(zl, zh, (mpz_ptr)0);
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    return st;
}

/* delta when the clamp (if any) lets the exponent reach tau: it engages no earlier than the unclamped
 * crossing, so delta is the unclamped one. Symbolic shortcuts first (Q may be an exact tie such as
 * 100.5, which no precision decides), else the Ziv loop. */
static abl_status unclamped_delta(q_ctx *ctx, const abl_blind_query *q, abl_rule rule, abl_delta *out)
{
    int eps_zero = mpq_sgn(*ctx->eps) == 0;
    /* One key with a zero logit and no clamp: S_1 = e^(-m g(0)) = 1 and ln S_1 = 0 exactly, so the weight
     * level is the exponent level (symbolic shortcuts included). */
    uint64_t weight_keys = q->weight_keys == 1 && eps_zero && q->clamp == NULL ? 0 : q->weight_keys;
    int found = 0;
    mpq_t qv;
    mpq_init(qv);
    /* ln S_k, or z tanh(eps/z) with eps != 0, keeps Q transcendental: no symbolic shortcut. */
    if (weight_keys > 0 || (q->softcap != NULL && !eps_zero))
        found = 0;
    else if (q->distance == ABL_DISTANCE_LINEAR)
        found = linear_shortcut(ctx->slope, *ctx->eps, ctx->absk, qv);
    else if (eps_zero)
        found = log_shortcut(ctx->slope, q, ctx->absk, rule, qv, out);
    if (found == 1) {
        rule_rational(out->value, qv, rule);
        finish_exact(out, delta_min(q));
    }
    mpq_clear(qv);
    if (found != 0)
        return ABL_OK;
    ctx->weight_keys = weight_keys;
    return ziv_delta(ctx, q, rule, out);
}

abl_status abl_blindness(const abl_slope *slope, const abl_blind_query *q, abl_delta *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    unsigned long absk;
    abl_rule rule;
    abl_status st = query_tau(slope, q, &absk, &rule);
    if (st != ABL_OK)
        return st;
    out->never = 0;
    out->exact = 0;
    out->capped = 0;
    mpz_set_ui(out->value, 0);
    mpfr_set_zero(out->approx, 1);

    mpq_t eps, clamp;
    mpq_inits(eps, clamp, (mpq_ptr)0);
    if (q->logit != NULL)
        mpq_set(eps, q->logit);
    if (q->clamp != NULL)
        mpq_set(clamp, q->clamp);
    q_ctx ctx = {slope, (const mpq_t *)&eps, q->softcap, absk, q->distance, q->weight_keys,
                 q->clamp != NULL ? (const mpq_t *)&clamp : NULL};
    int allows = 1;
    if (q->clamp != NULL)
        st = clamp_allows(&ctx, q, clamp, &allows);
    if (st == ABL_OK && !allows) { /* the clamp keeps the exponent above tau: never blind */
        out->never = 1;
        mpfr_set_inf(out->approx, 1);
    } else if (st == ABL_OK) {
        st = unclamped_delta(&ctx, q, rule, out);
    }
    mpq_clears(eps, clamp, (mpq_ptr)0);
    return st;
}

int abl_delta_lt_u64(const abl_delta *d, uint64_t n)
{
    if (d->never)
        return 0;
    if (!d->exact)
        return 0; /* beyond 2^ABL_DELTA_EXACT_BITS_MAX */
    mpz_t z;
    mpz_init(z);
    mpz_import(z, 1, 1, sizeof n, 0, 0, &n);
    int lt = mpz_cmp(d->value, z) < 0;
    mpz_clear(z);
    return lt;
}

int abl_delta_get_i64(const abl_delta *d, int64_t *out)
{
    if (d->never || !d->exact || mpz_sizeinbase(d->value, 2) > 63)
        return 0;
    if (out != NULL) {
        uint64_t v = 0;
        mpz_export(&v, NULL, 1, sizeof v, 0, 0, d->value);
        *out = (int64_t)v;
    }
    return 1;
}

/* "4.37e+53" -> "4.37e53". */
static void tidy_exponent(char *s)
{
    char *e = strchr(s, 'e');
    if (e == NULL)
        return;
    char *src = e + 1, *dst = e + 1;
    if (*src == '+')
        src++;
    else if (*src == '-')
        *dst++ = *src++;
    while (*src == '0' && src[1] != '\0')
        src++;
    memmove(dst, src, strlen(src) + 1);
}

static void free_gmp_str(char *s)
{
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(s, strlen(s) + 1);
}

/* mpfr's %.2Re of x as a malloc'd string with a tidy exponent; NULL when out of memory. */
static char *sci3(mpfr_srcptr x)
{
    char *m = NULL;
    if (mpfr_asprintf(&m, "%.2Re", x) < 0)
        return NULL;
    tidy_exponent(m);
    char *s = abl_strf("%s", m);
    mpfr_free_str(m);
    return s;
}

char *abl_delta_text(const abl_delta *d, int max_digits)
{
    if (d->never)
        return abl_strf("never");
    if (d->exact && mpz_sizeinbase(d->value, 10) <= (size_t)max_digits + 1) {
        char *s = mpz_get_str(NULL, 10, d->value);
        int fits = strlen(s) <= (size_t)max_digits;
        char *out = fits ? abl_strf("%s", s) : NULL;
        free_gmp_str(s);
        if (fits)
            return out;
    }
    if (!d->exact)
        return sci3(d->approx);
    /* Round the exact integer once, to 3 significant digits. */
    size_t bits = mpz_sizeinbase(d->value, 2);
    mpfr_t x;
    mpfr_init2(x, (mpfr_prec_t)(bits < 64 ? 64 : bits));
    mpfr_set_z(x, d->value, MPFR_RNDN);
    char *out = sci3(x);
    mpfr_clear(x);
    return out;
}

char *abl_delta_json(const abl_delta *d)
{
    size_t cap = ABL_DELTA_JSON_DIGITS + 64;
    char *buf = malloc(cap);
    if (buf == NULL)
        return NULL;
    if (d->never) {
        snprintf(buf, cap, "null");
    } else if (d->exact && mpz_sizeinbase(d->value, 2) <= 53) {
        snprintf(buf, cap, "%lu", mpz_get_ui(d->value));
    } else if (d->exact && mpz_sizeinbase(d->value, 10) <= ABL_DELTA_JSON_DIGITS) {
        buf[0] = '"';
        mpz_get_str(buf + 1, 10, d->value);
        strcat(buf, "\"");
    } else {
        mpfr_t x;
        if (d->exact) {
            size_t bits = mpz_sizeinbase(d->value, 2);
            mpfr_init2(x, (mpfr_prec_t)bits);
            mpfr_set_z(x, d->value, MPFR_RNDN);
        } else {
            mpfr_init2(x, mpfr_get_prec(d->approx));
            mpfr_set(x, d->approx, MPFR_RNDN);
        }
        buf[0] = '"';
        mpfr_snprintf(buf + 1, cap - 2, "%.16Re", x);
        mpfr_clear(x);
        tidy_exponent(buf + 1);
        strcat(buf, "\"");
    }
    return buf;
}

char *abl_delta_table8_cell(const abl_delta *d)
{
    if (d->never)
        return abl_strf("never");
    if (!d->exact || mpz_sizeinbase(d->value, 2) > 1024)
        return abl_strf("**"); /* >= 2^1024: beyond binary64 */
    if (mpz_cmp_ui(d->value, 1000000000UL) > 0)
        return abl_strf("*");
    return abl_strf("%lu", mpz_get_ui(d->value));
}

typedef struct {
    mpq_t c;
    unsigned long absk;
} margin_ctx;

static int margin_interval(mpfr_t lo, mpfr_t hi, void *vctx)
{
    margin_ctx *m = vctx;
    mpfr_const_log2(lo, MPFR_RNDD);
    mpfr_const_log2(hi, MPFR_RNDU);
    mpfr_mul_ui(lo, lo, m->absk, MPFR_RNDD);
    mpfr_mul_ui(hi, hi, m->absk, MPFR_RNDU);
    mpfr_add_q(lo, lo, m->c, MPFR_RNDD);
    mpfr_add_q(hi, hi, m->c, MPFR_RNDU);
    return 0;
}

abl_status abl_clamp_margin_string(const abl_blind_query *q, int decimals, char **out)
{
    if (out != NULL)
        *out = NULL;
    if (q == NULL || q->clamp == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    long k;
    abl_status st = abl_threshold_log2_multiple(&q->format, abl_convention_tau_kind(q->convention), &k);
    if (st != ABL_OK)
        return st;
    margin_ctx m;
    mpq_init(m.c);
    m.absk = (unsigned long)(k < 0 ? -k : 0);
    mpq_set(m.c, q->clamp);
    st = abl_ziv_fixed_string(margin_interval, &m, decimals, out);
    mpq_clear(m.c);
    return st;
}
