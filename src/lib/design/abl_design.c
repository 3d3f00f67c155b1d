/* alibi-blind: design (issue 10). Slopes are searched over binary32 values by bisection on their bit
 * patterns (positive floats order like their patterns), each candidate decided by the kernel's exact
 * zero-logit predictor; clamps and logit budgets are decided with certified MPFR intervals at the weight
 * level (abl_weight.c). The property searched is monotone in the slope (steeper heads lose more keys) and
 * in the context (a longer context holds every row of a shorter one). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/design/design.h"
#include "abl/kernel/simulate.h"
#include "abl/core/threshold.h"
#include "abl/analysis/analysis.h"
#include "abl_internal.h"
#include "design/abl_design_kernel.h"
#include "design/abl_design_gradient.h"
#include "kernel/abl_flash_split.h"

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

abl_status abl_design_slopes_schedule(const float *slopes, int n, abl_schedule_spec *out)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (slopes == NULL || n < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    mpq_t *q = malloc((size_t)n * sizeof *q);
    if (q == NULL)
        return ABL_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++) {
        mpq_init(q[i]);
        mpq_set_d(q[i], (double)slopes[i]); /* exact: every binary32 value is a binary64 value */
    }
    abl_status st = abl_schedule_spec_slopes((const mpq_t *)q, (size_t)n, out);
    for (int i = 0; i < n; i++)
        mpq_clear(q[i]);
    free(q);
    return st;
}

static void sim_config(const abl_design_config *c, const abl_schedule_spec *spec, uint64_t n, abl_simulate_config *s)
{
    memset(s, 0, sizeof *s);
    s->pipeline = c->pipeline;
    s->slopes = spec;
    s->context = n;
    s->threads = c->threads;
    s->attention = c->attention;
}

/* The configuration of slope m alone at context n, its schedule in *spec (the caller frees it after the
 * run): the exact binary32 value, no text. */
static abl_status one_slope_config(const abl_design_config *c, float m, uint64_t n, abl_schedule_spec *spec,
                                   abl_simulate_config *s)
{
    abl_status st = abl_design_slopes_schedule(&m, 1, spec);
    if (st == ABL_OK)
        sim_config(c, spec, n, s);
    return st;
}

/* Predictor of one slope at context n. */
static abl_status predict_one(const abl_design_config *c, float m, uint64_t n, abl_pred_head *out)
{
    abl_simulate_config s;
    abl_schedule_spec spec;
    abl_status st = one_slope_config(c, m, n, &spec, &s);
    if (st != ABL_OK)
        return st;
    abl_prediction p;
    st = abl_predict_run(&s, &p);
    if (st == ABL_OK) {
        *out = p.results[0];
        abl_prediction_free(&p);
    }
    abl_schedule_spec_free(&spec);
    return st;
}

/*
 * Whether slope m's logits are finite at context n on the kernel. The key at position n - 1 carries the
 * largest bias magnitude in every bias form; when it overflows (fp16's 65504 is m (n - 1) = 65504 for
 * m = 64 at n = 1025) its logit is -Inf and exp(-Inf) = 0: that key has a zero weight, which is what
 * torch computes too. The predictor refuses such a table, so the searches ask here first.
 */
static abl_status logits_finite(const abl_design_config *c, float m, uint64_t n, int *finite)
{
    abl_simulate_config sc;
    abl_schedule_spec spec;
    abl_status st = one_slope_config(c, m, n, &spec, &sc);
    if (st != ABL_OK)
        return st;
    abl_sim_setup s;
    st = abl_sim_setup_init(&sc, &s);
    abl_schedule_spec_free(&spec);
    if (st != ABL_OK)
        return st;
    float big = abl_emul_logit(&s.em, &s.hd[0], 0.0f, n - 1, abl_emul_bias_mag(&s.em, &s.hd[0], n - 1));
    *finite = isfinite(big) != 0;
    abl_sim_setup_free(&s);
    return ABL_OK;
}

/* Zero weights in the n x n matrix of slope m (*zeros = 1 when any): the predictor, or an overflowing
 * bias (a -Inf logit, a zero weight). */
static abl_status has_zeros(const abl_design_config *c, float m, uint64_t n, int *zeros)
{
    int finite;
    abl_status st = logits_finite(c, m, n, &finite);
    if (st != ABL_OK)
        return st;
    if (!finite) {
        *zeros = 1;
        return ABL_OK;
    }
    if (c->gradient) { /* --keep gradient: a zero dS instead of a zero weight */
        abl_simulate_config s;
        abl_schedule_spec spec;
        if ((st = one_slope_config(c, m, n, &spec, &s)) == ABL_OK)
            st = abl_design_gradient_zeros(c, &s, zeros);
        abl_schedule_spec_free(&spec);
        return st;
    }
    abl_pred_head h;
    if ((st = predict_one(c, m, n, &h)) == ABL_OK)
        *zeros = h.matrix_zeros != 0;
    return st;
}

/* The steepest slope pattern in [FLAT_BITS, STEEP_BITS] whose logits stay finite at N (bias magnitude is
 * monotone in m, so a bisection); STEEP_BITS when 64 itself does. */
static abl_status steep_bits(const abl_design_config *c, uint32_t *out)
{
    int finite;
    abl_status st = logits_finite(c, from_bits(STEEP_BITS), c->context, &finite);
    if (st != ABL_OK || finite) {
        *out = STEEP_BITS;
        return st;
    }
    uint32_t lo = FLAT_BITS, hi = STEEP_BITS;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((st = logits_finite(c, from_bits(mid), c->context, &finite)) != ABL_OK)
            return st;
        if (finite)
            lo = mid;
        else
            hi = mid;
    }
    *out = lo;
    return ABL_OK;
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
    if (c->budget != NULL && mpq_sgn(c->budget) != 0 && c->attention == ABL_ATTENTION_BIDIRECTIONAL)
        return ABL_ERR_UNSUPPORTED; /* the budget's margin is a causal last row's (margin_kept) */
    int zeros;
    abl_status st = has_zeros(c, m, c->context, &zeros);
    if (st != ABL_OK)
        return st;
    *ok = !zeros;
    if (*ok && !c->gradient && c->budget != NULL && mpq_sgn(c->budget) != 0) {
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
        uint32_t lo = FLAT_BITS, hi;
        int64_t fb;
        abl_status st = steep_bits(c, &hi); /* the predictor needs finite logits */
        if (st != ABL_OK)
            return st;
        st = abl_design_first_blind(c, from_bits(hi), &fb);
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
    int zeros;
    abl_status st;
    for (uint64_t n = 2; n <= cap; n = n * 2 > cap && n < cap ? cap : n * 2) {
        if ((st = has_zeros(c, m, n, &zeros)) != ABL_OK)
            return st;
        if (zeros) {
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
        if ((st = has_zeros(c, m, mid, &zeros)) != ABL_OK)
            return st;
        if (!zeros)
            good = mid;
        else
            bad = mid;
    }
    *out = good;
    return ABL_OK;
}

/* Memo of the kernel's verdicts by the value the kernel actually meets (a key's logit, a clamp as stored):
 * many searched values round to one, which decides the row. A bisection needs fewer than 64. */
typedef struct {
    float key[64];
    int verdict[64];
    int n;
    int first; /* kernel_failing's head to try first: the last one that failed */
} verdict_memo;

/* 1 and *verdict when memo (NULL: none) holds key x. */
static int memo_find(const verdict_memo *memo, float x, int *verdict)
{
    for (int i = 0; memo != NULL && i < memo->n; i++)
        if (memo->key[i] == x || (isnan(x) && isnan(memo->key[i]))) {
            *verdict = memo->verdict[i];
            return 1;
        }
    return 0;
}

static int memo_put(verdict_memo *memo, float x, int verdict)
{
    if (memo != NULL && memo->n < 64) {
        memo->key[memo->n] = x;
        memo->verdict[memo->n++] = verdict;
    }
    return verdict;
}

/* Whether key `key` of head 0's last row keeps a non-zero weight when its score is `score`. */
static int key_kept(abl_dk *k, int64_t key, float score, verdict_memo *memo)
{
    float x = abl_dk_key_logit(k, 0, key, score);
    int kept;
    if (memo_find(memo, x, &kept))
        return kept;
    abl_dk_last_row(k, 0, NULL, key, score);
    return memo_put(memo, x, k->w[key] != 0.0f);
}

/* x with `decimals` digits, rounded down (margins: lower bounds) or up (min logits), malloc'd. */
static char *fixed_text(const mpfr_t x, int decimals, int up)
{
    char *s = NULL;
    if (mpfr_asprintf(&s, up ? "%.*RUf" : "%.*RDf", decimals, x) < 0)
        return NULL;
    char *copy = malloc(strlen(s) + 1);
    if (copy != NULL)
        strcpy(copy, s);
    mpfr_free_str(s);
    return copy;
}

/* The score as nats rounded up to `decimals` digits ("-0.00" written "0.00"), malloc'd. */
static char *nats_up(const abl_dk *k, float score, int decimals)
{
    mpfr_t x;
    mpfr_init2(x, 128);
    mpfr_set_flt(x, score, MPFR_RNDN);
    mpfr_mul_d(x, x, abl_dk_score_scale(k), MPFR_RNDU); /* exact: 24 + 53 bits */
    char *s = fixed_text(x, decimals, 1);
    mpfr_clear(x);
    if (s != NULL && s[0] == '-' && strspn(s + 1, "0.") == strlen(s + 1))
        memmove(s, s + 1, strlen(s)); /* "-0.00": a crossing just below 0 rounds up to 0 */
    return s;
}

abl_status abl_design_min_logit(const abl_design_config *c, float m, uint64_t d, int decimals, char **out)
{
    if (c == NULL || out == NULL || d >= c->context || decimals < 0 || decimals > 9)
        return ABL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL)
        return ABL_ERR_UNSUPPORTED; /* the design kernel (abl_design_kernel.c) emulates causal last rows */
    abl_dk k;
    abl_status st = abl_dk_init(&k, c, &m, 1, 0);
    if (st != ABL_OK)
        return st;
    int64_t key = (int64_t)(c->context - 1 - d);
    verdict_memo memo = {.n = 0};
    /* A bracket by galloping from score 0 (lo loses the weight, hi keeps it), then a bisection over the
     * binary32 scores between them (the weight grows with the key's score). */
    float lo = 0.0f, hi = 0.0f, step = 1.0f;
    int found = 1;
    if (key_kept(&k, key, 0.0f, &memo)) {
        for (lo = -step; key_kept(&k, key, lo, &memo); lo -= step) {
            hi = lo;
            step *= 2.0f;
            if (!(lo > -1e30f)) {
                found = 0; /* kept at any finite score: cannot happen with an underflowing exp */
                break;
            }
        }
    } else {
        for (hi = step; !key_kept(&k, key, hi, &memo); hi += step) {
            lo = hi;
            step *= 2.0f;
            if (!(hi < 1e30f)) {
                found = 0; /* no score keeps it (an output dtype that loses even the max) */
                break;
            }
        }
    }
    if (found) {
        int64_t ol = abl_dk_ord(lo), oh = abl_dk_ord(hi);
        while (oh - ol > 1) {
            int64_t mid = ol + (oh - ol) / 2;
            if (key_kept(&k, key, abl_dk_unord(mid), &memo))
                oh = mid;
            else
                ol = mid;
        }
        /* the claim checked afresh: the score keeps the weight, the next binary32 score below does not */
        hi = abl_dk_unord(oh);
        int kh = key_kept(&k, key, hi, NULL);
        int kl = key_kept(&k, key, abl_dk_unord(oh - 1), NULL);
        if (!kh || kl)
            st = ABL_ERR_MISMATCH;
    }
    if (st == ABL_OK) {
        *out = found ? nats_up(&k, hi, decimals) : strdup("none");
        if (*out == NULL)
            st = ABL_ERR_NO_MEMORY;
    }
    abl_dk_free(&k);
    return st;
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
    free(r->next_text);
    free(r->bound_text);
    free(r->margin_text);
    free(r->paper_margin_text);
    r->clamp_text = r->next_text = r->margin_text = r->paper_margin_text = r->bound_text = NULL;
}

/*
 * The weight-level query of head m's smallest weight in the last row under clamp c: the clamped key
 * (e^c / S_N(c)) when the clamp engages inside the row, m (N - 1) > -c; otherwise no key is clamped and
 * the smallest is the unclamped key at N - 1 (S_N without a clamp). Judging the clamped key of a head the
 * clamp never reaches is the error of issue 15 item 2: the flattest head's large S bound a clamp it never
 * sees.
 */
static margin_q clamp_query(const abl_design_config *c, float m, mpq_srcptr clamp)
{
    mpq_t md;
    mpq_init(md);
    mpq_set_d(md, (double)m); /* exact */
    mpz_mul_ui(mpq_numref(md), mpq_numref(md), (unsigned long)(c->context - 1));
    mpq_canonicalize(md);
    mpq_neg(md, md); /* -m (N - 1) */
    int engages = mpq_cmp(md, clamp) < 0;
    mpq_clear(md);
    margin_q q = {c, m, NULL, engages ? 0 : c->context - 1, engages ? clamp : NULL};
    return q;
}

/* Smallest margin over heads for clamp c (lower bound), and how many heads have no margin (weight level). */
static void clamp_margin(const abl_design_config *c, const float *slopes, int n, mpq_srcptr clamp, mpfr_t min_lo,
                         int *failing)
{
    *failing = 0;
    mpfr_set_inf(min_lo, 1);
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_t lo, hi;
    mpfr_inits2(mpfr_get_prec(min_lo), lo, hi, (mpfr_ptr)0);
    for (int i = 0; i < n; i++) {
        margin_q q = clamp_query(c, slopes[i], clamp);
        margin_interval(lo, hi, &q);
        if (mpfr_cmp(lo, min_lo) < 0)
            mpfr_set(min_lo, lo, MPFR_RNDD);
        if (!margin_kept(&q))
            (*failing)++;
    }
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
}

/* The weight level's least clamp on the 10^-decimals grid (text; "none" when no head needs one). */
static char *weight_bound(const abl_design_config *c, const float *slopes, int n, int decimals)
{
    unsigned long absk;
    int strict;
    kernel_tau(&c->pipeline, &absk, &strict);
    long scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    /* k/scale for k in [lo, 0]: lo sits below tau, where a clamp that engages keeps nothing; when lo keeps
     * every head, no head needs the clamp (the ones it engages were lost unclamped too). */
    long lo = -(long)ceil((double)absk * 0.6931471805599453 * (double)scale) - 1, hi = 0;
    mpq_t cq;
    mpq_init(cq);
    mpfr_t m;
    mpfr_init2(m, 128);
    int failing;
    mpq_set_si(cq, lo, (unsigned long)scale);
    mpq_canonicalize(cq);
    clamp_margin(c, slopes, n, cq, m, &failing);
    char *text;
    if (failing == 0) {
        text = strdup("none");
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
        mpq_set_si(cq, hi, (unsigned long)scale);
        mpq_canonicalize(cq);
        text = abl_decimal_string(cq);
    }
    mpfr_clear(m);
    mpq_clear(cq);
    return text;
}


/* How many heads keep a zero weight on the kernel with binary32 clamp v (v NULL: no clamp). With a memo
 * (the bisection, which asks only whether any head fails) it stops at the first failing head, and tries
 * first the head that failed last: 1 then stands for "some". */
static int kernel_failing(abl_dk *k, const float *v, verdict_memo *memo)
{
    float cv = v != NULL ? abl_dk_clamp_value(k, *v) : -INFINITY;
    int failing = 0;
    if (memo_find(memo, cv, &failing))
        return failing;
    int heads = k->s.heads, first = memo != NULL && memo->first < heads ? memo->first : 0;
    for (int i = 0; i < heads && (memo == NULL || failing == 0); i++) {
        int h = (first + i) % heads;
        if (abl_dk_last_row(k, h, v != NULL ? &cv : NULL, -1, 0.0f) != 0) {
            failing++;
            if (memo != NULL)
                memo->first = h;
        }
    }
    return memo_put(memo, cv, failing);
}

static char *stated_text(const abl_dk *k, float v, mpq_t q)
{
    mpq_set_d(q, abl_dk_clamp_stated(k, v));
    return abl_decimal_string(q);
}

/*
 * The kernel's least clamp: the smallest binary32 v (a bisection over the values between the most
 * negative clamp, which engages no head, and 0) with which every head keeps every weight, checked afresh
 * with the next binary32 value below. ABL_ERR_DEGENERATE when 0 fails.
 */
static abl_status kernel_clamp(abl_dk *k, abl_design_clamp *out)
{
    verdict_memo memo = {.n = 0};
    float zero = 0.0f;
    if (kernel_failing(k, &zero, &memo) > 0)
        return ABL_ERR_DEGENERATE; /* even c = 0 (uniform attention) leaves zeros: the context is too long */
    if (kernel_failing(k, NULL, NULL) == 0) {
        out->none_needed = 1;
        out->clamp_text = strdup("none");
        return out->clamp_text != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
    }
    int64_t lo = abl_dk_ord(-FLT_MAX), hi = abl_dk_ord(0.0f);
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        float v = abl_dk_unord(mid);
        if (kernel_failing(k, &v, &memo) == 0)
            hi = mid;
        else
            lo = mid;
    }
    float best = abl_dk_unord(hi), next = abl_dk_unord(hi - 1);
    /* one step beyond, without the memo: the answer keeps every head and the next clamp below does not */
    if (kernel_failing(k, &best, NULL) != 0 || (out->next_failing = kernel_failing(k, &next, NULL)) == 0)
        return ABL_ERR_MISMATCH;
    mpq_t q;
    mpq_init(q);
    out->next_text = stated_text(k, next, q);
    out->clamp_text = stated_text(k, best, q);
    mpq_set(out->clamp, q);
    mpq_clear(q);
    return out->clamp_text != NULL && out->next_text != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
}

abl_status abl_design_clamp_find(const abl_design_config *c, const float *slopes, int n, int decimals,
                                 abl_design_clamp *out)
{
    if (c == NULL || slopes == NULL || out == NULL || n < 1 || decimals < 0 || decimals > 9)
        return ABL_ERR_INVALID_ARGUMENT;
    if (c->pipeline.softmax != ABL_SOFTMAX_EAGER && c->pipeline.softmax != ABL_SOFTMAX_FLASH)
        return ABL_ERR_UNSUPPORTED;
    /* a split-KV decode row (vllm-flash, rows=1) adds the absolute column bias and merges its splits by their
     * lse: the clamp search's relative last row is not that kernel's row, so it cannot decide a clamp there */
    if (c->pipeline.softmax == ABL_SOFTMAX_FLASH && abl_flash_split_count(&c->pipeline, n, c->context) > 1)
        return ABL_ERR_UNSUPPORTED;
    /* a bidirectional middle row has a larger sum than its end row: the last row alone does not decide */
    if (c->attention == ABL_ATTENTION_BIDIRECTIONAL)
        return ABL_ERR_UNSUPPORTED;
    abl_dk k;
    abl_status st = abl_dk_init(&k, c, slopes, n, 1);
    if (st != ABL_OK)
        return st;
    st = kernel_clamp(&k, out);
    if (st == ABL_OK) {
        float paper = (float)ABL_PAPER_CLAMP;
        out->paper_failing = kernel_failing(&k, &paper, NULL);
    }
    abl_dk_free(&k);
    if (st != ABL_OK)
        return st;
    /* the weight level: the exact softmax's bound, and the margins of the kernel's clamp and of -87 (one
     * rounding for both, 6 decimals rounded down: a margin is one quantity in text and JSON alike) */
    mpfr_t m;
    mpfr_init2(m, 128);
    int failing;
    out->bound_text = weight_bound(c, slopes, n, decimals);
    if (!out->none_needed) {
        clamp_margin(c, slopes, n, out->clamp, m, &failing);
        out->margin_text = fixed_text(m, 6, 0);
    }
    mpq_t cq;
    mpq_init(cq);
    mpq_set_si(cq, ABL_PAPER_CLAMP, 1);
    clamp_margin(c, slopes, n, cq, m, &failing);
    out->paper_margin_text = fixed_text(m, 6, 0);
    mpq_clear(cq);
    mpfr_clear(m);
    if (out->bound_text == NULL || (!out->none_needed && out->margin_text == NULL) || out->paper_margin_text == NULL)
        return ABL_ERR_NO_MEMORY;
    return ABL_OK;
}

abl_status abl_design_verify(const abl_design_config *c, const float *slopes, int n, uint64_t max_simulate,
                             int *simulated)
{
    if (c == NULL || slopes == NULL || n < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    if (simulated != NULL)
        *simulated = 0;
    abl_schedule_spec spec;
    abl_status st = abl_design_slopes_schedule(slopes, n, &spec);
    if (st != ABL_OK)
        return st;
    abl_simulate_config s;
    sim_config(c, &spec, c->context, &s);
    if (c->gradient) { /* --keep gradient: the predictor and the backward emulation */
        st = abl_design_gradient_verify(c, &s, max_simulate, simulated);
        abl_schedule_spec_free(&spec);
        return st;
    }
    abl_prediction p;
    st = abl_predict_run(&s, &p);
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
    abl_schedule_spec_free(&spec);
    return st;
}

abl_status abl_design_held_slopes(const abl_design_config *c, const abl_schedule_spec *spec, int heads, float **out, int *n)
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
