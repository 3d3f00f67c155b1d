/* alibi-blind: underflow fractions (spec §7), exact and in closed form: no loop over n. */
#include <stdio.h>
#include <string.h>
#include "abl/core/fraction.h"
#include "abl_internal.h"

static void set_u64(mpz_t z, uint64_t v)
{
    mpz_import(z, 1, 1, sizeof v, 0, 0, &v);
}

/* T(k) = k(k+1)/2 for k > 0, else 0. */
static void tri(mpz_t out, const mpz_t k)
{
    if (mpz_sgn(k) <= 0) {
        mpz_set_ui(out, 0);
        return;
    }
    mpz_add_ui(out, k, 1);
    mpz_mul(out, out, k);
    mpz_fdiv_q_2exp(out, out, 1);
}

/* Effective window: distances 0..L are attended in a full row; L = min(W, n-1) (W = 0: none). */
static void attended_last(mpz_t L, uint64_t n, uint64_t window)
{
    set_u64(L, n - 1);
    if (window > 0 && window < n - 1)
        set_u64(L, window);
}

/* out += sum over rows r in [a, b] of max(0, min(r, W) - d + 1) (W = 0: no window). */
void abl_blind_rows_add(mpz_t out, uint64_t a, uint64_t b, const mpz_t d, uint64_t window)
{
    mpz_t lo, hi, t, u;
    mpz_inits(lo, hi, t, u, (mpz_ptr)0);
    uint64_t last_unwindowed = (window == 0 || window >= b) ? b : window;
    if (a <= last_unwindowed) {
        /* rows a..last: r - d + 1 where positive: T(last - d + 1) - T(max(a, d) - d) */
        set_u64(hi, last_unwindowed);
        mpz_sub(hi, hi, d);
        mpz_add_ui(hi, hi, 1);
        tri(t, hi);
        set_u64(lo, a);
        if (mpz_cmp(lo, d) < 0)
            mpz_set(lo, d);
        mpz_sub(lo, lo, d);
        tri(u, lo);
        if (mpz_sgn(hi) > 0) {
            mpz_add(out, out, t);
            mpz_sub(out, out, u);
        }
    }
    if (window > 0 && b > window) {
        /* rows past the window each lose W - d + 1 keys */
        uint64_t first = a > window + 1 ? a : window + 1;
        set_u64(t, window);
        mpz_sub(t, t, d);
        mpz_add_ui(t, t, 1);
        if (mpz_sgn(t) > 0 && first <= b) {
            set_u64(u, b - first + 1);
            mpz_mul(t, t, u);
            mpz_add(out, out, t);
        }
    }
    mpz_clears(lo, hi, t, u, (mpz_ptr)0);
}

static abl_status check(const abl_delta *deltas, int heads, uint64_t n)
{
    if (deltas == NULL || heads < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    if (n < 1 || n > ABL_MAX_CONTEXT)
        return ABL_ERR_CONTEXT_RANGE;
    return ABL_OK;
}

abl_status abl_fraction_head_counts(const abl_delta *delta, uint64_t n, uint64_t window, mpz_t row, mpz_t matrix)
{
    abl_status st = check(delta, 1, n);
    if (st != ABL_OK)
        return st;
    mpz_set_ui(row, 0);
    mpz_set_ui(matrix, 0);
    if (delta->never || !delta->exact)
        return ABL_OK; /* never, or astronomically beyond any context */
    mpz_t L;
    mpz_init(L);
    attended_last(L, n, window);
    /* Last row: distances delta..L are blind. */
    mpz_sub(row, L, delta->value);
    mpz_add_ui(row, row, 1);
    if (mpz_sgn(row) < 0)
        mpz_set_ui(row, 0);
    abl_blind_rows_add(matrix, 0, n - 1, delta->value, window);
    mpz_clear(L);
    return ABL_OK;
}

/* Attended keys of the last row and attended entries of the matrix. */
static void attended_totals(uint64_t n, uint64_t window, mpz_t row, mpz_t matrix)
{
    mpz_t L, t;
    mpz_inits(L, t, (mpz_ptr)0);
    attended_last(L, n, window);
    mpz_add_ui(row, L, 1);
    mpz_add_ui(t, L, 1);
    tri(matrix, t);
    set_u64(t, n - 1);
    mpz_sub(t, t, L);
    mpz_mul(t, t, row);
    mpz_add(matrix, matrix, t);
    mpz_clears(L, t, (mpz_ptr)0);
}

static abl_status fraction(const abl_delta *deltas, int heads, uint64_t n, uint64_t window, mpq_t out, int matrix)
{
    abl_status st = check(deltas, heads, n);
    if (st != ABL_OK)
        return st;
    mpz_t sum, row, mat, trow, tmat;
    mpz_inits(sum, row, mat, trow, tmat, (mpz_ptr)0);
    for (int h = 0; h < heads; h++) {
        abl_fraction_head_counts(&deltas[h], n, window, row, mat);
        mpz_add(sum, sum, matrix ? mat : row);
    }
    attended_totals(n, window, trow, tmat);
    mpz_mul_ui(matrix ? tmat : trow, matrix ? tmat : trow, (unsigned long)heads);
    mpq_set_num(out, sum);
    mpq_set_den(out, matrix ? tmat : trow);
    mpq_canonicalize(out);
    mpz_clears(sum, row, mat, trow, tmat, (mpz_ptr)0);
    return ABL_OK;
}

abl_status abl_fraction_row(const abl_delta *deltas, int heads, uint64_t n, uint64_t window, mpq_t out)
{
    return fraction(deltas, heads, n, window, out, 0);
}

abl_status abl_fraction_matrix(const abl_delta *deltas, int heads, uint64_t n, uint64_t window, mpq_t out)
{
    return fraction(deltas, heads, n, window, out, 1);
}

char *abl_fraction_percent_text(const mpq_t q, int decimals)
{
    if (decimals < 0)
        decimals = 0;
    /* round(q * 100 * 10^decimals), ties up; q >= 0 here. */
    mpz_t num, den, p, hundred;
    mpz_inits(num, den, p, hundred, (mpz_ptr)0);
    /* Never print 0.00 for a positive fraction nor 100.00 for one below 1: add decimals until the
     * rounded value is neither (at most 40 more). */
    for (int extra = 0;; extra++) {
        mpz_ui_pow_ui(p, 10, (unsigned long)decimals);
        mpz_mul_ui(num, mpq_numref(q), 100);
        mpz_mul(num, num, p);
        mpz_mul_2exp(num, num, 1);
        mpz_add(num, num, mpq_denref(q));
        mpz_mul_2exp(den, mpq_denref(q), 1);
        mpz_fdiv_q(num, num, den);
        mpz_mul_ui(hundred, p, 100);
        int false_zero = mpz_sgn(num) == 0 && mpq_sgn(q) > 0;
        int false_full = mpz_cmp(num, hundred) == 0 && mpq_cmp_ui(q, 1, 1) < 0;
        if (!(false_zero || false_full) || extra >= 40)
            break;
        decimals++;
    }
    char *s = mpz_get_str(NULL, 10, num);
    size_t len = strlen(s);
    size_t d = (size_t)decimals;
    abl_text t = {0};
    if (decimals == 0) {
        abl_text_add(&t, "%s", s);
    } else if (len <= d) {
        /* pad to one integer digit: "0." and d - len zeros before the digits */
        abl_text_add(&t, "0.");
        for (size_t i = len; i < d; i++)
            abl_text_add(&t, "0");
        abl_text_add(&t, "%s", s);
    } else {
        abl_text_add(&t, "%.*s.%s", (int)(len - d), s, s + len - d);
    }
    char *out = abl_text_take(&t);
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(s, len + 1);
    mpz_clears(num, den, p, hundred, (mpz_ptr)0);
    return out;
}

char *abl_fraction_decimal_text(const mpq_t q, int digits)
{
    mpfr_t x;
    mpfr_init2(x, 256);
    mpfr_set_q(x, q, MPFR_RNDN);
    char *m = NULL, *out = NULL;
    if (mpfr_zero_p(x))
        out = abl_strf("0");
    else if (mpfr_asprintf(&m, "%.*Rg", digits < 1 ? 1 : digits, x) >= 0)
        out = abl_strf("%s", m);
    if (m != NULL)
        mpfr_free_str(m);
    mpfr_clear(x);
    return out;
}
