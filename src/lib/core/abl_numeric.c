/* alibi-blind: exact decimal parsing and correctly rounded printing shared by the modules. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "abl_internal.h"

abl_status abl_decimal_to_mpq(const char *text, mpq_t out)
{
    if (text == NULL)
        return ABL_ERR_BAD_NUMBER;
    const char *p = text;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = (*p++ == '-');
    /* Collect the significand digits without the point; count digits after it. */
    size_t len = strlen(p);
    char *digits = malloc(len + 2);
    if (digits == NULL)
        return ABL_ERR_NO_MEMORY;
    size_t nd = 0, frac = 0, seen = 0;
    int point = 0;
    for (; *p != '\0' && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.' && !point) {
            point = 1;
        } else if (isdigit((unsigned char)*p)) {
            digits[nd++] = *p;
            seen++;
            if (point)
                frac++;
        } else {
            free(digits);
            return ABL_ERR_BAD_NUMBER;
        }
    }
    digits[nd] = '\0';
    long exp10 = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '+' || *p == '-')
            eneg = (*p++ == '-');
        if (!isdigit((unsigned char)*p)) {
            free(digits);
            return ABL_ERR_BAD_NUMBER;
        }
        for (; isdigit((unsigned char)*p); p++) {
            exp10 = exp10 * 10 + (*p - '0');
            if (exp10 > 100000) {
                free(digits);
                return ABL_ERR_BAD_NUMBER;
            }
        }
        if (*p != '\0') {
            free(digits);
            return ABL_ERR_BAD_NUMBER;
        }
        if (eneg)
            exp10 = -exp10;
    }
    if (seen == 0) {
        free(digits);
        return ABL_ERR_BAD_NUMBER;
    }
    mpz_t num, pow;
    mpz_init_set_str(num, digits, 10);
    free(digits);
    mpz_init(pow);
    exp10 -= (long)frac;
    mpz_ui_pow_ui(pow, 10, (unsigned long)labs(exp10));
    mpq_set_z(out, num);
    if (exp10 >= 0) {
        mpz_mul(mpq_numref(out), mpq_numref(out), pow);
    } else {
        mpz_set(mpq_denref(out), pow);
        mpq_canonicalize(out);
    }
    if (neg)
        mpq_neg(out, out);
    mpz_clear(num);
    mpz_clear(pow);
    return ABL_OK;
}

/* Print one bound; drop the sign of a zero so that -0.000 and 0.000 compare equal. */
static int print_bound(char *buf, size_t len, const char *fmt, int digits, mpfr_t x)
{
    int n = mpfr_snprintf(buf, len, fmt, digits, x);
    if (n < 0 || (size_t)n >= len)
        return -1;
    if (buf[0] == '-') {
        int zero = 1;
        for (const char *c = buf + 1; *c != '\0' && *c != 'e'; c++)
            if (*c >= '1' && *c <= '9')
                zero = 0;
        if (zero)
            memmove(buf, buf + 1, strlen(buf));
    }
    return 0;
}

static abl_status ziv_print(abl_interval_fn fn, void *ctx, const char *fmt, int digits,
                            char *buf, size_t buflen)
{
    if (fn == NULL || buf == NULL || buflen == 0 || digits < 0 || digits > 100000)
        return ABL_ERR_INVALID_ARGUMENT;
    size_t cap = (size_t)digits + 64;
    char *a = malloc(cap), *b = malloc(cap);
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return ABL_ERR_NO_MEMORY;
    }
    abl_status st = ABL_ERR_INVALID_ARGUMENT;
    mpfr_t lo, hi;
    mpfr_prec_t prec = ABL_ZIV_START_PREC + (mpfr_prec_t)(digits * 3.33);
    mpfr_inits2(prec, lo, hi, (mpfr_ptr)0);
    for (;;) {
        mpfr_set_prec(lo, prec);
        mpfr_set_prec(hi, prec);
        if (fn(lo, hi, ctx) != 0) {
            st = ABL_ERR_INVALID_ARGUMENT;
            break;
        }
        /* Exponent of a huge bound can need more room than digits + 64. */
        if (print_bound(a, cap, fmt, digits, lo) != 0 || print_bound(b, cap, fmt, digits, hi) != 0) {
            st = ABL_ERR_INVALID_ARGUMENT;
            break;
        }
        if (strcmp(a, b) == 0 || prec >= ABL_ZIV_MAX_PREC) {
            if (strlen(a) + 1 > buflen) {
                st = ABL_ERR_INVALID_ARGUMENT;
            } else {
                memcpy(buf, a, strlen(a) + 1);
                st = ABL_OK;
            }
            break;
        }
        prec *= 2;
    }
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    free(a);
    free(b);
    return st;
}

abl_status abl_ziv_fixed(abl_interval_fn fn, void *ctx, int decimals, char *buf, size_t buflen)
{
    return ziv_print(fn, ctx, "%.*Rf", decimals, buf, buflen);
}

abl_status abl_ziv_general(abl_interval_fn fn, void *ctx, int digits, char *buf, size_t buflen)
{
    if (digits < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    return ziv_print(fn, ctx, "%.*Rg", digits, buf, buflen);
}

abl_mpfr_range abl_mpfr_range_widen(void)
{
    abl_mpfr_range saved = {mpfr_get_emin(), mpfr_get_emax()};
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    return saved;
}

void abl_mpfr_range_restore(abl_mpfr_range saved)
{
    mpfr_set_emin(saved.emin);
    mpfr_set_emax(saved.emax);
}

void abl_set_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
