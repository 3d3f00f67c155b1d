/* alibi-blind: the logits of given q and k under a RoPE code path (rope --q FILE.npy --k FILE.npy), and the
 * .npy vector reader they come from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl_internal.h"
#include "rope/abl_rope_internal.h"

#define NPY_MAX_BYTES (1u << 20)   /* a vector of at most 1024 values: far below this */

/* The value of 'key': in a .npy header dict (the text after it, up to len); NULL when absent. */
static const char *npy_field(const char *h, size_t len, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl <= len; i++)
        if (memcmp(h + i, key, kl) == 0) {
            const char *p = h + i + kl;
            while ((size_t)(p - h) < len && (*p == ' ' || *p == ':'))
                p++;
            return (size_t)(p - h) < len ? p : NULL;
        }
    return NULL;
}

/* The shape: "(d,)" or "(1, d)"; the count, or -1. */
static long npy_shape(const char *p, const char *end)
{
    long a = -1, b = -1;
    int n = 0;
    if (p >= end || *p++ != '(')
        return -1;
    while (p < end && *p != ')') {
        if (*p >= '0' && *p <= '9') {
            long v = 0;
            while (p < end && *p >= '0' && *p <= '9' && v < 100000)
                v = v * 10 + (*p++ - '0');
            if (n == 0) a = v; else if (n == 1) b = v;
            n++;
        } else if (*p == ',' || *p == ' ') {
            p++;
        } else {
            return -1;
        }
    }
    if (p >= end)
        return -1;
    return n == 1 ? a : n == 2 && a == 1 ? b : -1;
}

static int npy_item(const char *descr, const char *end)
{
    static const char *const kinds[] = {"'<f2'", "'<f4'", "'<f8'"};
    for (int i = 0; i < 3; i++)
        if ((size_t)(end - descr) >= 5 && memcmp(descr, kinds[i], 5) == 0)
            return 2 << i;
    return 0;
}

static double npy_value(const unsigned char *d, int item)
{
    if (item == 2)
        return (double)abl_half_to_float((uint16_t)(d[0] | d[1] << 8));
    uint64_t u = 0;
    for (int b = item - 1; b >= 0; b--)
        u = u << 8 | d[b];
    if (item == 4) {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, sizeof f);
        return (double)f;
    }
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Magic, version and header: the header's text and the data's offset; 0, or -1 with *msg. */
static int npy_header(const unsigned char *buf, size_t len, const char **h, size_t *hlen, size_t *data, char **msg)
{
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
        abl_set_error(msg, "not a .npy file (no \\x93NUMPY magic)");
        return -1;
    }
    int v = buf[6];
    size_t lenbytes = v == 1 ? 2 : (v == 2 || v == 3) ? 4 : 0;
    if (lenbytes == 0 || len < 8 + lenbytes) {
        abl_set_error(msg, ".npy format version %d.%d is not 1.0, 2.0 or 3.0", v, buf[7]);
        return -1;
    }
    size_t n = 0;
    for (size_t b = lenbytes; b-- > 0;)
        n = n << 8 | buf[8 + b];
    if (n > len - 8 - lenbytes) {
        abl_set_error(msg, ".npy header claims %zu bytes, the file has %zu", n, len - 8 - lenbytes);
        return -1;
    }
    *h = (const char *)buf + 8 + lenbytes;
    *hlen = n;
    *data = 8 + lenbytes + n;
    return 0;
}

abl_status abl_rope_vector_parse(const unsigned char *buf, size_t len, double **out, int *count, char **msg)
{
    if (buf == NULL || out == NULL || count == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    *count = 0;
    const char *h;
    size_t hlen, data;
    if (npy_header(buf, len, &h, &hlen, &data, msg) != 0)
        return ABL_ERR_PARSE;
    const char *end = h + hlen, *descr = npy_field(h, hlen, "'descr'"), *fo = npy_field(h, hlen, "'fortran_order'");
    const char *shape = npy_field(h, hlen, "'shape'");
    int item = descr ? npy_item(descr, end) : 0;
    long n = shape ? npy_shape(shape, end) : -1;
    if (item == 0 || fo == NULL || (size_t)(end - fo) < 5 || memcmp(fo, "False", 5) != 0 || n < 2 || n > 1024) {
        abl_set_error(msg, "a query/key .npy must be '<f2', '<f4' or '<f8', C order, shape (d,) or (1, d), "
                           "2 <= d <= 1024");
        return ABL_ERR_PARSE;
    }
    if ((size_t)n * (size_t)item > len - data) {
        abl_set_error(msg, ".npy data truncated: %ld values of %d bytes announced", n, item);
        return ABL_ERR_PARSE;
    }
    double *v = malloc((size_t)n * sizeof *v);
    if (v == NULL)
        return ABL_ERR_NO_MEMORY;
    for (long i = 0; i < n; i++) {
        v[i] = npy_value(buf + data + (size_t)i * (size_t)item, item);
        if (!isfinite(v[i])) {
            free(v);
            abl_set_error(msg, ".npy value %ld is not finite", i);
            return ABL_ERR_PARSE;
        }
    }
    *out = v;
    *count = (int)n;
    return ABL_OK;
}

abl_status abl_rope_vector_read(const char *path, double **out, int *count, char **msg)
{
    if (path == NULL || out == NULL || count == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        abl_set_error(msg, "%s: cannot open", path);
        return ABL_ERR_IO;
    }
    unsigned char *buf = malloc(NPY_MAX_BYTES);
    size_t len = buf ? fread(buf, 1, NPY_MAX_BYTES, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (buf == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = ABL_ERR_IO;
    if (err)
        abl_set_error(msg, "%s: read error", path);
    else if (len == NPY_MAX_BYTES)
        abl_set_error(msg, "%s: over 1 MiB, not a query/key vector", path);
    else
        st = abl_rope_vector_parse(buf, len, out, count, msg);
    free(buf);
    return st;
}

/* sum a[j] b[j] (values held in float) with a double-double accumulator, rounded once into the dtype: every
 * product is exact in binary64; the pair (hi, lo) carries the sum to ~2^-100 relative, and the sign of lo breaks
 * a tie of hi exactly on a midpoint of the dtype's grid. */
static double dot_rounded(const abl_fp *dt, const float *a, const float *b, int d)
{
    double hi = 0, lo = 0;
    for (int j = 0; j < d; j++) {
        double x = (double)a[j] * (double)b[j], s = hi + x, bb = s - hi;
        lo += (hi - (s - bb)) + (x - bb);
        hi = s;
    }
    double s = hi + lo;
    lo -= s - hi;
    hi = s;
    return abl_fp_round(dt, lo > 0 ? nextafter(hi, INFINITY) : lo < 0 ? nextafter(hi, -INFINITY) : hi);
}

typedef struct qk_run {
    abl_rope_code k;
    int d, h;
    float *q, *kv;          /* q, k in the model dtype */
    float *qr[3], *kr[3];   /* q rotated to r, r + D1, r + D2; k to p, p + D1, p + D2 */
    float *k0[3];           /* k rotated to 0, D1, D2 */
    mpfr_t t, cs, sn;
} qk_run;

/* The exact relative logit for the query r positions after the key: sum_i Re(conj(Q_i) K_i e^{-i r theta_i}). */
static double exact_logit(qk_run *u, uint64_t r)
{
    double s = 0;
    for (int i = 0; i < u->h; i++) {
        mpfr_mul_ui(u->t, u->k.theta[i], (unsigned long)r, MPFR_RNDN);
        mpfr_sin_cos(u->sn, u->cs, u->t, MPFR_RNDN);
        double c = mpfr_get_d(u->cs, MPFR_RNDN), sn = mpfr_get_d(u->sn, MPFR_RNDN);
        double q0 = u->q[i], q1 = u->q[i + u->h], k0 = u->kv[i], k1 = u->kv[i + u->h];
        double re = q0 * k0 + q1 * k1, im = q0 * k1 - q1 * k0;   /* conj(Q) K */
        s += re * c + im * sn;                                   /* Re(conj(Q) K e^{-i r theta}) */
    }
    return s * u->k.att * u->k.att;   /* yarn scales cos and sin, so both q and k, by the attention factor */
}

static void qk_rotate(qk_run *u, const abl_rope_config *c, uint64_t base, const float *x, float **out)
{
    abl_rope_code_apply(&u->k, base, x, out[0]);
    abl_rope_code_apply(&u->k, base + c->delta1, x, out[1]);
    abl_rope_code_apply(&u->k, base + c->delta2, x, out[2]);
}

static void qk_max(double v, uint64_t at, double *best, uint64_t *best_at)
{
    if (v > *best) {
        *best = v;
        *best_at = at;
    }
}

static void qk_loop(qk_run *u, const abl_rope_config *c, abl_rope_qk *out)
{
    double pair_exact = exact_logit(u, out->distance);
    out->exact_first = exact_logit(u, 0);
    qk_rotate(u, c, 0, u->kv, u->k0);
    for (uint64_t r = 0; r < c->n; r++) {
        qk_rotate(u, c, r, u->q, u->qr);
        double l0 = dot_rounded(&u->k.dt, u->qr[0], u->k0[0], u->d);
        qk_max(fabs(l0 - exact_logit(u, r)), r, &out->first_err, &out->first_err_at);
        double l1 = dot_rounded(&u->k.dt, u->qr[1], u->k0[1], u->d), l2 = dot_rounded(&u->k.dt, u->qr[2], u->k0[2], u->d);
        qk_max(fabs(l1 - l2), r, &out->shift_first, &out->shift_first_at);
        if (r < out->distance)
            continue;
        uint64_t p = r - out->distance;
        qk_rotate(u, c, p, u->kv, u->kr);
        double m0 = dot_rounded(&u->k.dt, u->qr[0], u->kr[0], u->d);
        qk_max(fabs(m0 - pair_exact), p, &out->pair_err, &out->pair_err_at);
        double m1 = dot_rounded(&u->k.dt, u->qr[1], u->kr[1], u->d), m2 = dot_rounded(&u->k.dt, u->qr[2], u->kr[2], u->d);
        qk_max(fabs(m1 - m2), p, &out->shift_pair, &out->shift_pair_at);
    }
}

abl_status abl_rope_qk_run(const abl_rope_config *c, const double *q, const double *k, uint64_t distance,
                           abl_rope_qk *out, char **msg)
{
    if (c == NULL || q == NULL || k == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->distance = distance;
    qk_run u;
    memset(&u, 0, sizeof u);
    abl_status st = abl_rope_code_init(c, &u.k, msg);
    if (st != ABL_OK)
        return st;
    if (distance >= c->n) {
        abl_rope_code_clear(&u.k);
        abl_set_error(msg, "distance %llu: below the positions N = %llu", (unsigned long long)distance,
                      (unsigned long long)c->n);
        return ABL_ERR_INVALID_ARGUMENT;
    }
    u.d = c->head_dim;
    u.h = u.d / 2;
    float *mem = calloc((size_t)u.d * 11, sizeof *mem);
    if (mem == NULL) {
        abl_rope_code_clear(&u.k);
        return ABL_ERR_NO_MEMORY;
    }
    u.q = mem;
    u.kv = mem + u.d;
    for (int j = 0; j < 3; j++) {
        u.qr[j] = mem + (size_t)u.d * (size_t)(2 + j);
        u.kr[j] = mem + (size_t)u.d * (size_t)(5 + j);
        u.k0[j] = mem + (size_t)u.d * (size_t)(8 + j);
    }
    for (int j = 0; j < u.d; j++) {   /* q and k as the model holds them: in its dtype */
        u.q[j] = (float)abl_fp_round(&u.k.dt, q[j]);
        u.kv[j] = (float)abl_fp_round(&u.k.dt, k[j]);
    }
    abl_mpfr_range saved = abl_mpfr_range_widen();
    mpfr_init2(u.t, ABL_ROPE_PREC);
    mpfr_inits2(64, u.cs, u.sn, (mpfr_ptr)0);
    qk_loop(&u, c, out);
    mpfr_clears(u.t, u.cs, u.sn, (mpfr_ptr)0);
    abl_mpfr_range_restore(saved);
    free(mem);
    abl_rope_code_clear(&u.k);
    return ABL_OK;
}

abl_status abl_rope_logit(const abl_rope_config *c, const double *q, const double *k, uint64_t pq, uint64_t pk,
                          double *out)
{
    if (c == NULL || q == NULL || k == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_rope_code code;
    abl_status st = abl_rope_code_init(c, &code, NULL);
    if (st != ABL_OK)
        return st;
    int d = c->head_dim;
    float *m = calloc((size_t)d * 4, sizeof *m);
    if (m == NULL) {
        abl_rope_code_clear(&code);
        return ABL_ERR_NO_MEMORY;
    }
    for (int j = 0; j < d; j++) {
        m[j] = (float)abl_fp_round(&code.dt, q[j]);
        m[d + j] = (float)abl_fp_round(&code.dt, k[j]);
    }
    abl_rope_code_apply(&code, pq, m, m + 2 * d);
    abl_rope_code_apply(&code, pk, m + d, m + 3 * d);
    *out = dot_rounded(&code.dt, m + 2 * d, m + 3 * d, d);
    free(m);
    abl_rope_code_clear(&code);
    return ABL_OK;
}

static abl_status qk_summary(abl_report *r, const char *key, const char *label, double v, uint64_t at, int has_at)
{
    char *t = has_at ? abl_strf("%.4g (at %llu)", v, (unsigned long long)at) : abl_strf("%.6g", v);
    char *j = abl_strf("%.17g", v);
    abl_status st = t && j ? abl_report_summary(r, key, label, t, j) : ABL_ERR_NO_MEMORY;
    free(t);
    free(j);
    return st;
}

abl_status abl_rope_qk_report(const abl_rope_qk *x, abl_report *r)
{
    if (x == NULL || r == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    char *d = abl_strf("%llu", (unsigned long long)x->distance);
    abl_status st = d ? abl_report_summary(r, "qk_distance", "given q, k: distance of the pairs (p, p+Δ)", d, d)
                      : ABL_ERR_NO_MEMORY;
    free(d);
    if (st == ABL_OK) st = qk_summary(r, "qk_exact_logit_0", "given q, k: exact logit at distance 0", x->exact_first, 0, 0);
    if (st == ABL_OK) st = qk_summary(r, "qk_first_error", "given q, k: first token's row, |s(r, 0) - exact|",
                                      x->first_err, x->first_err_at, 1);
    if (st == ABL_OK) st = qk_summary(r, "qk_pair_error", "given q, k: pairs (p, p+Δ), |s - exact|", x->pair_err,
                                      x->pair_err_at, 1);
    if (st == ABL_OK) st = qk_summary(r, "qk_shift_first", "given q, k: shift sensitivity, first token's row",
                                      x->shift_first, x->shift_first_at, 1);
    if (st == ABL_OK) st = qk_summary(r, "qk_shift_pair", "given q, k: shift sensitivity, pairs (p, p+Δ)",
                                      x->shift_pair, x->shift_pair_at, 1);
    return st;
}
