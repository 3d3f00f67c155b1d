/* alibi-blind: RoPE against the exact rotation (issue 22, docs/rope.md). One pass over positions
 * 0..n-1+D2 evaluates every pair once per position: the per-pair angle and cos/sin errors (positions < n),
 * the worst-case logit error of the first token's row and of sampled interior keys, and the shift
 * sensitivity |s(p+D1, b+D1) - s(p+D2, b+D2)| (a ring of the last D2-D1+1 positions' cos/sin). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "abl_internal.h"
#include "rope/abl_rope_internal.h"

static const char *const path_names[ABL_ROPE_PATH_COUNT] = {"hf-llama", "flash-rotary", "ggml-cpu"};

const char *abl_rope_path_name(abl_rope_path p)
{
    return (int)p >= 0 && p < ABL_ROPE_PATH_COUNT ? path_names[p] : NULL;
}

abl_status abl_rope_path_lookup(const char *name, abl_rope_path *out, char **msg)
{
    for (int i = 0; i < ABL_ROPE_PATH_COUNT; i++)
        if (name != NULL && strcmp(name, path_names[i]) == 0) {
            *out = (abl_rope_path)i;
            return ABL_OK;
        }
    abl_set_error(msg, "'%s' is not a RoPE code path (hf-llama, flash-rotary, ggml-cpu)", name ? name : "");
    return ABL_ERR_UNSUPPORTED;
}

void abl_rope_config_init(abl_rope_config *c)
{
    memset(c, 0, sizeof *c);
    c->path = ABL_ROPE_HF_LLAMA;
    abl_format_lookup("bf16", &c->dtype);
    c->head_dim = 128;
    mpq_inits(c->base, c->factor, c->tolerance, c->low_freq, c->high_freq, (mpq_ptr)0);
    mpq_set_ui(c->low_freq, 1, 1);
    mpq_set_ui(c->high_freq, 4, 1);
    mpq_set_ui(c->base, 10000, 1);
    mpq_set_ui(c->factor, 1, 1);
    c->n = 4096;
    c->delta1 = 0;
    c->delta2 = 16;
    c->beta_fast = 32;
    c->beta_slow = 1;
}

void abl_rope_config_clear(abl_rope_config *c)
{
    mpq_clears(c->base, c->factor, c->tolerance, c->low_freq, c->high_freq, (mpq_ptr)0);
    free(c->long_factor);
    free(c->short_factor);
    c->long_factor = c->short_factor = NULL;
}

abl_status abl_rope_cost(const abl_rope_config *c, abl_cost *out)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->units = (double)(c->n + c->delta2) * (double)(c->head_dim / 2);
    out->seconds = out->units * 4e-7;
    out->threads = 1;
    out->unit_name = "evaluations";
    return ABL_OK;
}

/* One position's values of one pair: as applied (table dtype) and exact (binary64 of the exact value). */
typedef struct rope_z {
    double c, s;     /* cos/sin as applied */
    double ec, es;   /* cos/sin of the exact angle p theta_i */
    double err;      /* angle - p theta_i (exact, rounded) */
} rope_z;

static void eval_z(abl_rope_code *k, int i, uint64_t p, float a, mpfr_t t, rope_z *z)
{
    float c32, s32;
    double cd, sd;
    abl_rope_cos_sin(k, i, a, &c32, &s32, &cd, &sd);
    z->c = abl_fp_round(&k->table, (double)c32);
    z->s = abl_fp_round(&k->table, (double)s32);
    /* e = a - p theta exactly (t has ABL_ROPE_PREC bits): p theta = a - e, so cos(p theta) = cos a cos e + sin a sin e */
    mpfr_mul_ui(t, k->theta[i], (unsigned long)p, MPFR_RNDN);
    mpfr_d_sub(t, (double)a, t, MPFR_RNDN);
    z->err = mpfr_get_d(t, MPFR_RNDN);
    double ce = cos(z->err), se = sin(z->err);
    z->ec = cd * ce + sd * se;
    z->es = sd * ce - cd * se;
}

/* |z(a) conj(z(b)) - w(a) conj(w(b))|: the logit kernel of one pair against another (both as applied, or
 * applied against exact). */
static double kernel_diff(double ac, double as, double bc, double bs, double xc, double xs, double yc, double ys)
{
    double re1 = ac * bc + as * bs, im1 = as * bc - ac * bs;
    double re2 = xc * yc + xs * ys, im2 = xs * yc - xc * ys;
    return hypot(re1 - re2, im1 - im2);
}

/* The per-pair statistics of one position p < n. */
static void pair_update(abl_rope_pair *pr, const rope_z *z, uint64_t p)
{
    double ae = fabs(z->err);
    double ce = hypot(z->c - z->ec, z->s - z->es);
    double ee = fabs(atan2(z->s * z->ec - z->c * z->es, z->c * z->ec + z->s * z->es));
    if (ae > pr->angle_err) {
        pr->angle_err = ae;
        pr->angle_err_at = p;
    }
    if (ce > pr->cs_err) {
        pr->cs_err = ce;
        pr->cs_err_at = p;
    }
    if (ee > pr->eff_err) {
        pr->eff_err = ee;
        pr->eff_err_at = p;
    }
    if (pr->first_angle_over < 0 && ae > pr->tolerance)
        pr->first_angle_over = (int64_t)p;
    if (pr->first_eff_over < 0 && ee > pr->tolerance)
        pr->first_eff_over = (int64_t)p;
}

/* The sampled keys: the first token (0), 1 and n/2; each holds its z at b, b+D1, b+D2 for every pair. */
#define ROPE_KEYS 3
typedef struct rope_run {
    abl_rope_code k;
    const abl_rope_config *c;
    abl_rope_result *r;
    uint64_t key[ROPE_KEYS];
    int nkeys;
    rope_z *kz;          /* [key][3][pair] */
    rope_z *ring;        /* [D2-D1+1][pair] */
    rope_z *cur;         /* [pair] */
    float *angle;        /* [pair]: the angles at one position */
    double zmax;
    mpfr_t t;
} rope_run;

static rope_z *key_z(rope_run *u, int key, int which)
{
    return u->kz + ((size_t)key * 3 + (size_t)which) * (size_t)u->k.pairs;
}

static abl_status run_keys(rope_run *u)
{
    uint64_t n = u->c->n;
    u->key[0] = 0;
    u->nkeys = 1;
    if (n > 2)
        u->key[u->nkeys++] = 1;
    if (n / 2 > 1)
        u->key[u->nkeys++] = n / 2;
    u->kz = calloc((size_t)ROPE_KEYS * 3 * (size_t)u->k.pairs, sizeof *u->kz);
    if (u->kz == NULL)
        return ABL_ERR_NO_MEMORY;
    for (int b = 0; b < u->nkeys; b++) {
        uint64_t at[3] = {u->key[b], u->key[b] + u->c->delta1, u->key[b] + u->c->delta2};
        for (int w = 0; w < 3; w++) {
            abl_rope_code_angles(&u->k, at[w], u->angle);
            abl_rope_code_table(&u->k, at[w], u->angle);
            for (int i = 0; i < u->k.pairs; i++)
                eval_z(&u->k, i, at[w], u->angle[i], u->t, &key_z(u, b, w)[i]);
        }
    }
    return ABL_OK;
}

/* Position P < n: the pairs' statistics and the logit error against every sampled key b <= P. */
/* The next curve position after x: about N^(1/63) times further, at least one more. */
static uint64_t curve_next(uint64_t x, uint64_t n)
{
    double step = pow((double)n, 1.0 / 63.0), y = ceil((double)(x + 1) * step);
    return y > (double)x + 1 ? (uint64_t)y : x + 1;
}

static void curve_record(rope_run *u, uint64_t P)
{
    abl_rope_result *r = u->r;
    if (r->ncurve >= 64 || (r->ncurve > 0 && P + 1 < curve_next((uint64_t)r->curve_x[r->ncurve - 1], r->n) &&
                            P + 1 != r->n))
        return;
    r->curve_x[r->ncurve] = (double)(P + 1);
    for (int s = 0; s < 4; s++)
        r->curve_eff[s][r->ncurve] = r->pair[r->curve_pair[s]].eff_err;
    r->ncurve++;
}

static void shift_record(abl_rope_result *r, uint64_t p)
{
    if (r->nshift_curve >= 64 || (r->nshift_curve > 0 && p + 1 < curve_next((uint64_t)r->curve_shift_x[r->nshift_curve - 1],
                                                                              r->n) && p + 1 != r->n))
        return;
    r->curve_shift_x[r->nshift_curve] = (double)(p + 1);
    r->curve_shift[r->nshift_curve++] = r->shift_first;
}

static void run_position(rope_run *u, uint64_t P)
{
    abl_rope_result *r = u->r;
    for (int i = 0; i < u->k.pairs; i++) {
        pair_update(&r->pair[i], &u->cur[i], P);
        double zz = hypot(u->cur[i].c, u->cur[i].s);
        if (zz > u->zmax)
            u->zmax = zz;
    }
    for (int b = 0; b < u->nkeys && u->key[b] <= P; b++) {
        const rope_z *kb = key_z(u, b, 0);
        double worst = 0;
        for (int i = 0; i < u->k.pairs; i++) {
            const rope_z *z = &u->cur[i];
            double d = kernel_diff(z->c, z->s, kb[i].c, kb[i].s, z->ec, z->es, kb[i].ec, kb[i].es);
            worst = d > worst ? d : worst;
        }
        if (b == 0 && worst > r->rot_err_first) {
            r->rot_err_first = worst;
            r->rot_err_first_at = P;
        }
        if (worst > r->rot_err_any)
            r->rot_err_any = worst;
    }
    curve_record(u, P);
}

/* Query p = P - D2 (< n): the shift sensitivity against every sampled key b <= p. */
static void run_shift(rope_run *u, uint64_t p, const rope_z *z1, double *first_max)
{
    abl_rope_result *r = u->r;
    for (int b = 0; b < u->nkeys && u->key[b] <= p; b++) {
        const rope_z *k1 = key_z(u, b, 1), *k2 = key_z(u, b, 2);
        double worst = 0;
        for (int i = 0; i < u->k.pairs; i++) {
            const rope_z *z2 = &u->cur[i];
            double d = kernel_diff(z1[i].c, z1[i].s, k1[i].c, k1[i].s, z2->c, z2->s, k2[i].c, k2[i].s);
            worst = d > worst ? d : worst;
        }
        if (b == 0) {
            if (worst > r->shift_first) {
                r->shift_first = worst;
                r->shift_first_at = p;
            }
        } else if (worst > r->shift_mid) {
            r->shift_mid = worst;
            r->shift_mid_at = p;
        }
    }
    *first_max = r->shift_first;
    shift_record(r, p);
    if (((p + 1) & p) == 0 && r->shift_levels < 24) /* p + 1 a power of two: the maximum over p < 2^k */
        r->shift_first_at_n[r->shift_levels++] = *first_max;
}

static abl_status run_loop(rope_run *u, abl_progress_fn progress, void *ctx)
{
    const abl_rope_config *c = u->c;
    uint64_t span = c->delta2 - c->delta1, ring = span + 1, total = c->n + c->delta2;
    size_t np = (size_t)u->k.pairs;
    u->ring = calloc((size_t)ring * np, sizeof *u->ring);
    if (u->ring == NULL)
        return ABL_ERR_NO_MEMORY;
    double first_max = 0;
    for (uint64_t P = 0; P < total; P++) {
        u->cur = u->ring + (size_t)(P % ring) * np;
        abl_rope_code_angles(&u->k, P, u->angle);
        abl_rope_code_table(&u->k, P, u->angle);
        for (int i = 0; i < u->k.pairs; i++)
            eval_z(&u->k, i, P, u->angle[i], u->t, &u->cur[i]);
        if (P < c->n)
            run_position(u, P);
        if (P >= c->delta2 && P - c->delta2 < c->n)
            run_shift(u, P - c->delta2, u->ring + (size_t)((P - span) % ring) * np, &first_max);
        if (progress != NULL && (P % 4096 == 0 || P + 1 == total))
            progress(ctx, (P + 1) * np, total * np);
    }
    return ABL_OK;
}

/* The rounding part of the worst-case logit error for unit q, k (docs/rope.md, "logit bound"). */
static double round_bound(const abl_rope_config *c, double z)
{
    double u = ldexp(1.0, -c->dtype.precision), u32 = ldexp(1.0, -24);
    /* hf: q*cos and rotate_half(q)*sin rounded into the dtype, then their sum; flash and ggml: fp32 products and
     * difference, one rounding into the dtype */
    double g = c->path == ABL_ROPE_HF_LLAMA ? (1 + u) * (1 + u) - 1 : (1 + u32) * (1 + u32) * (1 + u) - 1;
    double gd = (double)c->head_dim * u32 / (1 - (double)c->head_dim * u32); /* fp32 accumulation of q.k */
    double qn = z * (1 + sqrt(2.0) * g);
    return 2 * sqrt(2.0) * g * z * z + 2 * g * g * z * z + (gd + u * (1 + gd)) * qn * qn;
}

static abl_status result_init(const abl_rope_config *c, const abl_rope_code *k, abl_rope_result *r)
{
    memset(r, 0, sizeof *r);
    r->pair = calloc((size_t)k->pairs, sizeof *r->pair);
    if (r->pair == NULL)
        return ABL_ERR_NO_MEMORY;
    r->path = c->path;
    r->dtype = c->dtype;
    abl_format_lookup(c->path == ABL_ROPE_GGML_CPU ? "fp32" : c->dtype.name, &r->table);
    if (c->path != ABL_ROPE_GGML_CPU)
        r->table = c->dtype;
    r->head_dim = c->head_dim;
    r->pairs = k->pairs;
    r->n = c->n;
    r->base = mpq_get_d(c->base);
    r->base_used = k->base32;
    r->torch_sleef = k->torch_trig;
    r->attention_factor = (double)k->att32;
    r->scaling = c->scaling;
    r->factor = mpq_get_d(c->factor);
    r->delta1 = c->delta1;
    r->delta2 = c->delta2;
    for (int i = 0; i < k->pairs; i++) {
        abl_rope_pair *p = &r->pair[i];
        p->theta = mpfr_get_d(k->theta[i], MPFR_RNDN);
        p->inv_freq = k->inv[i];
        p->tolerance = c->has_tolerance ? mpq_get_d(c->tolerance) : p->theta;
        p->first_angle_over = -1;
        p->first_eff_over = -1;
    }
    for (int s = 0; s < 4; s++)   /* the highest, two middle and the lowest frequency */
        r->curve_pair[s] = s * (k->pairs - 1) / 3;
    return ABL_OK;
}

abl_status abl_rope_run(const abl_rope_config *c, abl_progress_fn progress, void *ctx, abl_rope_result *out,
                        char **msg)
{
    if (c == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    rope_run u;
    memset(&u, 0, sizeof u);
    u.c = c;
    u.r = out;
    abl_status st = abl_rope_code_init(c, &u.k, msg);
    if (st != ABL_OK)
        return st;
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_init2(u.t, ABL_ROPE_PREC);
    st = result_init(c, &u.k, out);
    u.angle = calloc((size_t)u.k.pairs, sizeof *u.angle);
    if (st == ABL_OK && u.angle == NULL)
        st = ABL_ERR_NO_MEMORY;
    if (st == ABL_OK)
        st = run_keys(&u);
    if (st == ABL_OK)
        st = run_loop(&u, progress, ctx);
    if (st == ABL_OK) {
        out->round_bound = round_bound(c, u.zmax);
        out->mpfr_fallbacks = u.k.fallbacks;
    }
    mpfr_clear(u.t);
    abl_mpfr_range_restore(saved);
    free(u.kz);
    free(u.ring);
    free(u.angle);
    abl_rope_code_clear(&u.k);
    if (st != ABL_OK)
        abl_rope_result_free(out);
    return st;
}

void abl_rope_result_free(abl_rope_result *r)
{
    if (r == NULL)
        return;
    free(r->pair);
    r->pair = NULL;
}

abl_status abl_rope_values(const abl_rope_config *c, uint64_t p, float *angle, float *cos_used, float *sin_used)
{
    if (c == NULL || angle == NULL || cos_used == NULL || sin_used == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_rope_code k;
    abl_status st = abl_rope_code_init(c, &k, NULL);
    if (st != ABL_OK)
        return st;
    abl_rope_code_angles(&k, p, angle);
    abl_rope_code_table(&k, p, angle);
    for (int i = 0; i < k.pairs; i++) {
        float cs, sn;
        double cd, sd;
        abl_rope_cos_sin(&k, i, angle[i], &cs, &sn, &cd, &sd);
        cos_used[i] = (float)abl_fp_round(&k.table, (double)cs);
        sin_used[i] = (float)abl_fp_round(&k.table, (double)sn);
    }
    abl_rope_code_clear(&k);
    return ABL_OK;
}

/* One rotated pair (x0 at j, x1 at j + d/2) as the code computes it. */
static void apply_pair(const abl_rope_code *k, float x0, float x1, float cs, float sn, float *o0, float *o1)
{
    if (k->path == ABL_ROPE_HF_LLAMA) {
        /* q_embed = (q * cos) + (rotate_half(q) * sin): each op rounded into the model dtype; rotate_half = (-x1, x0) */
        const abl_fp *d = &k->dt;
        *o0 = (float)abl_fp_round(d, abl_fp_round(d, (double)x0 * cs) + abl_fp_round(d, -(double)x1 * sn));
        *o1 = (float)abl_fp_round(d, abl_fp_round(d, (double)x1 * cs) + abl_fp_round(d, (double)x0 * sn));
    } else {
        /* flash (Triton) and ggml (rotate_pairs): x0*cos - x1*sin in fp32, one rounding into the dtype; modelled
         * without contraction into an fma (docs/rope.md) */
        float a = (float)((double)x0 * cs), b = (float)((double)x1 * sn);
        float c = (float)((double)x0 * sn), e = (float)((double)x1 * cs);
        *o0 = (float)abl_fp_round(&k->dt, (double)(float)((double)a - (double)b));
        *o1 = (float)abl_fp_round(&k->dt, (double)(float)((double)c + (double)e));
    }
}

void abl_rope_code_apply(abl_rope_code *k, uint64_t p, const float *x, float *out)
{
    int h = k->pairs;
    abl_rope_code_angles(k, p, k->scratch);
    abl_rope_code_table(k, p, k->scratch);
    for (int i = 0; i < h; i++) {
        float a = k->scratch[i], cs[2], sn[2], o[2];
        double cd, sd;
        /* hf: out[i] takes emb's cos/sin at i, out[i + h] those at i + h (equal unless a SLEEF group straddles) */
        for (int w = 0; w < 2; w++) {
            abl_rope_cos_sin(k, w == 1 && k->row_len > h ? i + h : i, a, &cs[w], &sn[w], &cd, &sd);
            cs[w] = (float)abl_fp_round(&k->table, (double)cs[w]);
            sn[w] = (float)abl_fp_round(&k->table, (double)sn[w]);
        }
        apply_pair(k, x[i], x[i + h], cs[0], sn[0], &out[i], &o[1]);
        apply_pair(k, x[i], x[i + h], cs[1], sn[1], &o[0], &out[i + h]);
    }
}

abl_status abl_rope_apply(const abl_rope_config *c, uint64_t p, const float *x, float *out)
{
    if (c == NULL || x == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_rope_code k;
    abl_status st = abl_rope_code_init(c, &k, NULL);
    if (st != ABL_OK)
        return st;
    abl_rope_code_apply(&k, p, x, out);
    abl_rope_code_clear(&k);
    return ABL_OK;
}
