/* alibi-blind: design (issue 10). Slopes are searched over binary32 values by bisection on their bit
 * patterns (positive floats order like their patterns), each candidate decided by the kernel's exact
 * zero-logit predictor; clamps and logit budgets are decided with certified MPFR intervals at the weight
 * level (abl_weight.c). The property searched is monotone in the slope (steeper heads lose more keys) and
 * in the context (a longer context holds every row of a shorter one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/design/design.h"
#include "abl/kernel/simulate.h"
#include "abl/core/threshold.h"
#include "abl_internal.h"

#define FLAT_BITS 0x0d800000u   /* 2^-100: the flattest slope tried */
#define STEEP_BITS 0x42800000u  /* 64: the steepest */

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* The exact decimal of a binary32 value (malloc'd). */
static char *float_decimal(float f)
{
    mpq_t q;
    mpq_init(q);
    mpq_set_d(q, (double)f);
    char *s = abl_decimal_string(q);
    mpq_clear(q);
    return s;
}

char *abl_design_slopes_spec(const float *slopes, int n)
{
    size_t cap = 16, len = 0;
    char *out = malloc(cap);
    if (out == NULL)
        return NULL;
    len = (size_t)sprintf(out, "slopes:");
    for (int i = 0; i < n; i++) {
        char *d = float_decimal(slopes[i]);
        if (d == NULL) {
            free(out);
            return NULL;
        }
        size_t need = len + strlen(d) + 2;
        if (need > cap) {
            while (cap < need)
                cap *= 2;
            char *grown = realloc(out, cap);
            if (grown == NULL) {
                free(d);
                free(out);
                return NULL;
            }
            out = grown;
        }
        len += (size_t)sprintf(out + len, "%s%s", i > 0 ? "," : "", d);
        free(d);
    }
    return out;
}

static void sim_config(const abl_design_config *c, const char *spec, uint64_t n, abl_simulate_config *s)
{
    memset(s, 0, sizeof *s);
    s->pipeline = c->pipeline;
    s->slopes = spec;
    s->context = n;
    s->threads = c->threads;
}

/* Predictor of one slope at context n. */
static abl_status predict_one(const abl_design_config *c, float m, uint64_t n, abl_pred_head *out)
{
    char *spec = abl_design_slopes_spec(&m, 1);
    if (spec == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_simulate_config s;
    sim_config(c, spec, n, &s);
    abl_prediction p;
    abl_status st = abl_predict_run(&s, &p);
    if (st == ABL_OK) {
        *out = p.results[0];
        abl_prediction_free(&p);
    }
    free(spec);
    return st;
}

/* tau of the kernel, -absk ln 2, and whether it is strict (blind only below tau). */
static void kernel_tau(const abl_pipeline *p, unsigned long *absk, int *strict)
{
    long k = 0;
    abl_threshold_log2_multiple(&p->output_dtype, ABL_TAU_RN_ZERO, &k);
    *absk = (unsigned long)(k < 0 ? -k : 0);
    *strict = 0;
    if (p->softmax == ABL_SOFTMAX_FLASH && *absk > 126) {
        *absk = 126; /* exp2 flushes below 2^-126 before P is rounded into the output dtype */
        *strict = 1;
    }
}

/*
 * Sign of x + absk ln 2 - L (L the weight-level offset of an eager kernel, 0 for flash), where
 * x = eps - m d (clamp NULL) or x = c (clamp set: the clamped key; eps = 0): > 0 means the weight is kept.
 */
typedef struct {
    const abl_design_config *c;
    float m;
    mpq_srcptr eps;   /* NULL = 0 */
    uint64_t d;
    mpq_srcptr clamp; /* NULL = none */
} margin_q;

static int margin_interval(mpfr_t lo, mpfr_t hi, void *vctx)
{
    const margin_q *q = vctx;
    mpfr_prec_t prec = mpfr_get_prec(lo) + 32;
    unsigned long absk;
    int strict;
    kernel_tau(&q->c->pipeline, &absk, &strict);
    mpfr_t m, x, l2, el, eh, Ll, Lh;
    mpfr_inits2(prec, x, l2, el, eh, Ll, Lh, (mpfr_ptr)0);
    mpfr_init2(m, 32);
    mpfr_set_flt(m, q->m, MPFR_RNDN); /* exact */
    mpq_t e;
    mpq_init(e);
    if (q->eps != NULL)
        mpq_set(e, q->eps);
    mpfr_set_q(el, e, MPFR_RNDD);
    mpfr_set_q(eh, e, MPFR_RNDU);
    mpfr_set_zero(Ll, 1);
    mpfr_set_zero(Lh, 1);
    if (q->c->pipeline.softmax == ABL_SOFTMAX_EAGER) {
        const mpq_t *cp = q->clamp != NULL ? (const mpq_t *)q->clamp : NULL;
        abl_weight_offset(Ll, Lh, m, m, el, eh, cp, ABL_DISTANCE_LINEAR, q->c->context, absk);
    }
    mpfr_const_log2(l2, MPFR_RNDD);
    mpfr_mul_ui(lo, l2, absk, MPFR_RNDD);
    mpfr_const_log2(l2, MPFR_RNDU);
    mpfr_mul_ui(hi, l2, absk, MPFR_RNDU);
    if (q->clamp != NULL) {
        mpfr_add_q(lo, lo, q->clamp, MPFR_RNDD);
        mpfr_add_q(hi, hi, q->clamp, MPFR_RNDU);
    } else {
        mpfr_set_uj(x, q->d, MPFR_RNDN);
        mpfr_mul(x, x, m, MPFR_RNDU);
        mpfr_sub(lo, lo, x, MPFR_RNDD);
        mpfr_set_uj(x, q->d, MPFR_RNDN);
        mpfr_mul(x, x, m, MPFR_RNDD);
        mpfr_sub(hi, hi, x, MPFR_RNDU);
    }
    mpfr_add(lo, lo, el, MPFR_RNDD);
    mpfr_add(hi, hi, eh, MPFR_RNDU);
    mpfr_sub(lo, lo, Lh, MPFR_RNDD);
    mpfr_sub(hi, hi, Ll, MPFR_RNDU);
    mpq_clear(e);
    mpfr_clears(m, x, l2, el, eh, Ll, Lh, (mpfr_ptr)0);
    return 0;
}

/* 1 when the weight is kept (margin > 0, or >= 0 under a strict flush), by a Ziv loop. */
static int margin_kept(const margin_q *q)
{
    unsigned long absk;
    int strict;
    kernel_tau(&q->c->pipeline, &absk, &strict);
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_prec_t prec = ABL_ZIV_START_PREC;
    mpfr_t lo, hi;
    mpfr_inits2(prec, lo, hi, (mpfr_ptr)0);
    int kept;
    for (;;) {
        mpfr_set_prec(lo, prec);
        mpfr_set_prec(hi, prec);
        margin_interval(lo, hi, (void *)q);
        if (mpfr_sgn(lo) > 0 || mpfr_sgn(hi) < 0) {
            kept = mpfr_sgn(lo) > 0;
            break;
        }
        if (prec >= 4096) {
            kept = strict; /* taken as an exact tie */
            break;
        }
        prec *= 2;
    }
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    return kept;
}

abl_status abl_design_sighted(const abl_design_config *c, float m, int *ok)
{
    if (c == NULL || ok == NULL || !(m > 0.0f) || c->context < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_pred_head h;
    abl_status st = predict_one(c, m, c->context, &h);
    if (st != ABL_OK)
        return st;
    *ok = h.matrix_zeros == 0;
    if (*ok && c->budget != NULL && mpq_sgn(c->budget) != 0) {
        margin_q q = {c, m, c->budget, c->context - 1, NULL};
        *ok = margin_kept(&q);
    }
    return ABL_OK;
}

abl_status abl_design_keep_all(const abl_design_config *c, int heads, float *out)
{
    if (c == NULL || out == NULL || heads < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    int ok;
    abl_status st = abl_design_sighted(c, from_bits(FLAT_BITS), &ok);
    if (st != ABL_OK)
        return st;
    if (!ok)
        return ABL_ERR_DEGENERATE;
    uint32_t lo = FLAT_BITS, hi = STEEP_BITS; /* ok(lo), and hi is taken when it is ok too */
    if ((st = abl_design_sighted(c, from_bits(hi), &ok)) != ABL_OK)
        return st;
    if (ok) {
        lo = hi;
    } else {
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if ((st = abl_design_sighted(c, from_bits(mid), &ok)) != ABL_OK)
                return st;
            if (ok)
                lo = mid;
            else
                hi = mid;
        }
    }
    float m1 = from_bits(lo);
    out[0] = m1;
    for (int h = 1; h < heads; h++) {
        /* the Press spread: 2^(-8/H) per head, rounded down so that no head is steeper than designed */
        mpfr_t x;
        mpfr_init2(x, 64);
        mpfr_set_si(x, -8L * h, MPFR_RNDN);
        mpfr_div_si(x, x, heads, MPFR_RNDD);
        mpfr_exp2(x, x, MPFR_RNDD);
        mpfr_mul_d(x, x, (double)m1, MPFR_RNDD);
        out[h] = mpfr_get_flt(x, MPFR_RNDD);
        mpfr_clear(x);
    }
    return ABL_OK;
}

abl_status abl_design_first_blind(const abl_design_config *c, float m, int64_t *out)
{
    abl_pred_head h;
    abl_status st = predict_one(c, m, c->context, &h);
    if (st == ABL_OK)
        *out = h.first_blind;
    return st;
}

abl_status abl_design_targets(const abl_design_config *c, const uint64_t *targets, int n, float *out, int *failed)
{
    if (c == NULL || targets == NULL || out == NULL || n < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < n; i++) {
        if (failed != NULL)
            *failed = i;
        uint64_t t = targets[i];
        if (t >= c->context)
            return ABL_ERR_DEGENERATE;
        /* P(m): a zero weight at distance <= t in the last row; monotone in m. The flattest m with P. */
        uint32_t lo = FLAT_BITS, hi = STEEP_BITS;
        int64_t fb;
        abl_status st = abl_design_first_blind(c, from_bits(hi), &fb);
        if (st != ABL_OK)
            return st;
        if (fb < 0 || (uint64_t)fb > t)
            return ABL_ERR_DEGENERATE;
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if ((st = abl_design_first_blind(c, from_bits(mid), &fb)) != ABL_OK)
                return st;
            if (fb >= 0 && (uint64_t)fb <= t)
                hi = mid;
            else
                lo = mid;
        }
        if ((st = abl_design_first_blind(c, from_bits(hi), &fb)) != ABL_OK)
            return st;
        if (fb < 0 || (uint64_t)fb != t)
            return ABL_ERR_DEGENERATE;
        out[i] = from_bits(hi);
    }
    return ABL_OK;
}

abl_status abl_design_largest_context(const abl_design_config *c, float m, uint64_t cap, uint64_t *out)
{
    if (c == NULL || out == NULL || cap < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    uint64_t good = 1, bad = 0;
    abl_pred_head h;
    abl_status st;
    for (uint64_t n = 2; n <= cap; n = n * 2 > cap && n < cap ? cap : n * 2) {
        if ((st = predict_one(c, m, n, &h)) != ABL_OK)
            return st;
        if (h.matrix_zeros != 0) {
            bad = n;
            break;
        }
        good = n;
        if (n == cap)
            break;
    }
    if (bad == 0) {
        *out = good;
        return ABL_OK;
    }
    while (bad - good > 1) {
        uint64_t mid = good + (bad - good) / 2;
        if ((st = predict_one(c, m, mid, &h)) != ABL_OK)
            return st;
        if (h.matrix_zeros == 0)
            good = mid;
        else
            bad = mid;
    }
    *out = good;
    return ABL_OK;
}

abl_status abl_design_min_logit(const abl_design_config *c, float m, uint64_t d, int decimals, char **out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    /* eps = tau + L(eps) + m d: one fixed-point step from L(0) (L moves by e^tau-sized amounts). */
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_t lo, hi;
    mpfr_inits2(192, lo, hi, (mpfr_ptr)0);
    mpq_t e;
    mpq_init(e);
    margin_q q = {c, m, NULL, d, NULL};
    margin_interval(lo, hi, &q); /* -(tau + L(0) + m d) enclosed */
    mpfr_neg(lo, lo, MPFR_RNDN);
    mpfr_get_q(e, lo); /* eps0 */
    q.eps = e;
    margin_interval(lo, hi, &q); /* eps0 - (tau + L(eps0) + m d) */
    mpfr_t x;
    mpfr_init2(x, 192);
    mpfr_set_q(x, e, MPFR_RNDU);
    mpfr_sub(x, x, lo, MPFR_RNDU); /* an upper bound of the crossing */
    char *s = NULL;
    if (mpfr_asprintf(&s, "%.*RUf", decimals, x) < 0)
        s = NULL;
    const char *t = s;
    if (t != NULL && t[0] == '-' && strspn(t + 1, "0.") == strlen(t + 1))
        t++; /* "-0.00": a crossing just below 0 rounds up to 0 */
    char *copy = t != NULL ? malloc(strlen(t) + 1) : NULL;
    if (copy != NULL)
        strcpy(copy, t);
    if (s != NULL)
        mpfr_free_str(s);
    mpfr_clear(x);
    mpq_clear(e);
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    *out = copy;
    return copy != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
}

void abl_design_clamp_init(abl_design_clamp *r)
{
    memset(r, 0, sizeof *r);
    mpq_init(r->clamp);
}

void abl_design_clamp_clear(abl_design_clamp *r)
{
    mpq_clear(r->clamp);
    free(r->clamp_text);
    free(r->bound_text);
    free(r->margin_text);
    free(r->paper_margin_text);
    r->clamp_text = r->margin_text = r->paper_margin_text = r->bound_text = NULL;
}

/* Smallest margin over heads for clamp c (lower bound), and how many heads have no margin. */
static void clamp_margin(const abl_design_config *c, const float *slopes, int n, mpq_srcptr clamp, mpfr_t min_lo,
                         int *failing)
{
    *failing = 0;
    mpfr_set_inf(min_lo, 1);
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_t lo, hi;
    mpfr_inits2(mpfr_get_prec(min_lo), lo, hi, (mpfr_ptr)0);
    for (int i = 0; i < n; i++) {
        margin_q q = {c, slopes[i], NULL, 0, clamp};
        margin_interval(lo, hi, &q);
        if (mpfr_cmp(lo, min_lo) < 0)
            mpfr_set(min_lo, lo, MPFR_RNDD);
        if (!margin_kept(&q))
            (*failing)++;
    }
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
}

static char *fixed_text(const mpfr_t x, int decimals)
{
    char *s = NULL;
    if (mpfr_asprintf(&s, "%.*RDf", decimals, x) < 0)
        return NULL;
    char *copy = malloc(strlen(s) + 1);
    if (copy != NULL)
        strcpy(copy, s);
    mpfr_free_str(s);
    return copy;
}

abl_status abl_design_clamp_find(const abl_design_config *c, const float *slopes, int n, int decimals,
                                 abl_design_clamp *out)
{
    if (c == NULL || slopes == NULL || out == NULL || n < 1 || decimals < 0 || decimals > 9)
        return ABL_ERR_INVALID_ARGUMENT;
    unsigned long absk;
    int strict;
    kernel_tau(&c->pipeline, &absk, &strict);
    long scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    /* k/scale for k in [lo, 0]: lo sits below tau (a clamp there cannot keep anything). */
    long lo = -(long)ceil((double)absk * 0.6931471805599453 * (double)scale) - 1, hi = 0;
    mpq_t cq;
    mpq_init(cq);
    int failing;
    mpfr_t m;
    mpfr_init2(m, 128);
    mpq_set_si(cq, hi, 1);
    clamp_margin(c, slopes, n, cq, m, &failing);
    abl_status st = ABL_OK;
    if (failing > 0) {
        st = ABL_ERR_DEGENERATE; /* even c = 0 (uniform attention) leaves zeros: the context is too long */
    } else {
        while (hi - lo > 1) {
            long mid = lo + (hi - lo) / 2;
            mpq_set_si(cq, mid, (unsigned long)scale);
            mpq_canonicalize(cq);
            clamp_margin(c, slopes, n, cq, m, &failing);
            if (failing == 0)
                hi = mid;
            else
                lo = mid;
        }
        mpq_set_si(out->clamp, hi, (unsigned long)scale);
        mpq_canonicalize(out->clamp);
        out->bound_text = abl_decimal_string(out->clamp);
        /* The clamped bias is a logit: round the bound up (toward 0) into the logit dtype. */
        const abl_format *lf = &c->pipeline.logit_dtype;
        mpfr_t v;
        mpfr_init2(v, lf->precision);
        mpfr_set_q(v, out->clamp, MPFR_RNDU);
        if (mpfr_cmp_si_2exp(v, -1, (mpfr_exp_t)lf->emin) > 0 && !mpfr_zero_p(v)) {
            /* subnormal range of the logit dtype (|c| tiny): keep the grid value */
        } else {
            mpfr_get_q(out->clamp, v);
        }
        mpfr_clear(v);
        clamp_margin(c, slopes, n, out->clamp, m, &failing);
        out->clamp_text = abl_decimal_string(out->clamp);
        out->margin_text = fixed_text(m, 6);
        mpq_set_si(cq, -87, 1);
        clamp_margin(c, slopes, n, cq, m, &out->paper_failing);
        out->paper_margin_text = fixed_text(m, 4);
        if (out->clamp_text == NULL || out->margin_text == NULL || out->paper_margin_text == NULL ||
            out->bound_text == NULL)
            st = ABL_ERR_NO_MEMORY;
    }
    mpfr_clear(m);
    mpq_clear(cq);
    return st;
}

abl_status abl_design_verify(const abl_design_config *c, const float *slopes, int n, uint64_t max_simulate,
                             int *simulated)
{
    if (c == NULL || slopes == NULL || n < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    if (simulated != NULL)
        *simulated = 0;
    char *spec = abl_design_slopes_spec(slopes, n);
    if (spec == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_simulate_config s;
    sim_config(c, spec, c->context, &s);
    abl_prediction p;
    abl_status st = abl_predict_run(&s, &p);
    if (st == ABL_OK) {
        if (p.matrix_zeros != 0)
            st = ABL_ERR_MISMATCH;
        abl_prediction_free(&p);
    }
    if (st == ABL_OK && c->context <= max_simulate) {
        abl_simulation sim;
        st = abl_simulate_run(&s, &sim);
        if (st == ABL_OK) {
            if (sim.matrix_zeros != 0)
                st = ABL_ERR_MISMATCH;
            abl_simulation_free(&sim);
            if (simulated != NULL)
                *simulated = 1;
        }
    }
    free(spec);
    return st;
}

abl_status abl_design_held_slopes(const abl_design_config *c, const char *spec, int heads, float **out, int *n)
{
    if (c == NULL || out == NULL || n == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_simulate_config s;
    sim_config(c, spec, 1, &s);
    s.heads = heads;
    abl_simulation sim;
    abl_status st = abl_simulate_run(&s, &sim);
    if (st != ABL_OK)
        return st;
    *out = malloc((size_t)sim.heads * sizeof **out);
    if (*out == NULL) {
        abl_simulation_free(&sim);
        return ABL_ERR_NO_MEMORY;
    }
    for (int h = 0; h < sim.heads; h++)
        (*out)[h] = (float)sim.results[h].slope_held;
    *n = sim.heads;
    abl_simulation_free(&sim);
    return ABL_OK;
}
