/* alibi-blind: closed forms of a bidirectional layer (include/abl/analysis/bidirectional.h): every count
 * is a sum of the causal one-horizon counts (abl_blind_rows_add), so any N costs the same. */
#include <string.h>
#include "abl/analysis/bidirectional.h"
#include "abl/core/fraction.h"
#include "abl_internal.h"

uint64_t abl_bidir_middle_row(uint64_t n)
{
    return n > 0 ? (n - 1) / 2 : 0;
}

static void set_u64(mpz_t z, uint64_t v)
{
    mpz_import(z, 1, 1, sizeof v, 0, 0, &v);
}

/* Keys at distances dmin..min(h, W) on one side whose distance is at least d: max(0, min(h, W) - max(d, dmin) + 1).
 * dmin = 0 on the left (the diagonal belongs to it), 1 on the right. */
static void side_add(mpz_t out, uint64_t h, uint64_t window, const mpz_t d, unsigned dmin)
{
    uint64_t top = window > 0 && h > window ? window : h;
    if (top < dmin)
        return;
    mpz_t t;
    mpz_init(t);
    set_u64(t, top);
    if (mpz_cmp_ui(d, dmin) > 0)
        mpz_sub(t, t, d);
    else
        mpz_sub_ui(t, t, dmin);
    mpz_add_ui(t, t, 1);
    if (mpz_sgn(t) > 0)
        mpz_add(out, out, t);
    mpz_clear(t);
}

static int usable(const abl_delta *delta)
{
    return !delta->never && delta->exact; /* never, or astronomically beyond any context: nothing blind */
}

abl_status abl_bidir_row_count(const abl_delta *delta, uint64_t n, uint64_t window, uint64_t i, mpz_t out)
{
    if (delta == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (n < 1 || n > ABL_MAX_CONTEXT || i >= n)
        return ABL_ERR_CONTEXT_RANGE;
    mpz_set_ui(out, 0);
    if (!usable(delta))
        return ABL_OK;
    side_add(out, i, window, delta->value, 0);
    side_add(out, n - 1 - i, window, delta->value, 1);
    return ABL_OK;
}

abl_status abl_bidir_head_counts(const abl_delta *delta, uint64_t n, uint64_t window, mpz_t end_row, mpz_t mid_row,
                                 mpz_t matrix)
{
    abl_status st = abl_bidir_row_count(delta, n, window, n - 1, end_row);
    if (st == ABL_OK)
        st = abl_bidir_row_count(delta, n, window, abl_bidir_middle_row(n), mid_row);
    if (st != ABL_OK)
        return st;
    mpz_set_ui(matrix, 0);
    if (!usable(delta))
        return ABL_OK;
    /* Left horizons r = i run over 0..N-1, and so do the right ones r = N-1-i: each side is the causal
     * matrix count, with the diagonal (d = 0) on the left only. */
    abl_blind_rows_add(matrix, 0, n - 1, delta->value, window);
    mpz_t d1;
    mpz_init(d1);
    mpz_set(d1, delta->value);
    if (mpz_cmp_ui(d1, 1) < 0)
        mpz_set_ui(d1, 1);
    abl_blind_rows_add(matrix, 0, n - 1, d1, window);
    mpz_clear(d1);
    return ABL_OK;
}

abl_status abl_bidir_attended(uint64_t n, uint64_t window, mpz_t end_row, mpz_t mid_row, mpz_t matrix)
{
    abl_delta zero;
    abl_delta_init(&zero);
    zero.exact = 1; /* delta = 0: every attended key */
    abl_status st = abl_bidir_head_counts(&zero, n, window, end_row, mid_row, matrix);
    abl_delta_clear(&zero);
    return st;
}
