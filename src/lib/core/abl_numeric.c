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

/*
 * Exact decimal text of a rational whose denominator is 2^a 5^b (sign included), malloc'd. Plain
 * notation unless it is much longer than d.ddd e<exp> with every significant digit. NULL when it
 * does not terminate (or out of memory).
 */
char *abl_decimal_string(const mpq_t q)
{
    mpz_t den, n;
    mpz_init_set(den, mpq_denref(q));
    mp_bitcnt_t a = mpz_scan1(den, 0);
    mpz_fdiv_q_2exp(den, den, a);
    unsigned long b = 0;
    while (mpz_divisible_ui_p(den, 5)) {
        mpz_divexact_ui(den, den, 5);
        b++;
    }
    char *res = NULL;
    if (mpz_cmp_ui(den, 1) == 0) {
        unsigned long k = a > b ? (unsigned long)a : b;
        /* n = |q| * 10^k is an integer: k digits after the point, and k is minimal. */
        mpz_init(n);
        mpz_ui_pow_ui(n, 10, k);
        mpz_mul(n, n, mpq_numref(q));
        mpz_divexact(n, n, mpq_denref(q));
        mpz_abs(n, n);
        char *s = mpz_get_str(NULL, 10, n);
        size_t len = strlen(s);
        const char *sign = mpq_sgn(q) < 0 ? "-" : "";
        char *plain = malloc(len + k + 8);
        /* Scientific: digits without trailing zeros, exponent of the leading digit. */
        size_t nd = len;
        while (nd > 1 && s[nd - 1] == '0')
            nd--;
        long e10 = (long)len - 1 - (long)k;
        char *sci = malloc(nd + 32);
        if (plain != NULL && sci != NULL) {
            if (k == 0) {
                sprintf(plain, "%s%s", sign, s);
            } else if (len > k) {
                sprintf(plain, "%s%.*s.%s", sign, (int)(len - k), s, s + len - k);
            } else {
                /* 0.000ddd: k - len zeros after the point */
                char *w = plain + sprintf(plain, "%s0.", sign);
                memset(w, '0', k - len);
                strcpy(w + (k - len), s);
            }
            if (nd == 1)
                sprintf(sci, "%s%ce%ld", sign, s[0], e10);
            else
                sprintf(sci, "%s%c.%.*se%ld", sign, s[0], (int)(nd - 1), s + 1, e10);
            /* Plain unless it is much longer ("0.001" and "8192", but "1e-30" not 30 zeros). */
            if (strlen(plain) <= strlen(sci) + 4) {
                res = plain;
                plain = NULL;
            } else {
                res = sci;
                sci = NULL;
            }
        }
        free(plain);
        free(sci);
        void (*freefunc)(void *, size_t);
        mp_get_memory_functions(NULL, NULL, &freefunc);
        freefunc(s, len + 1);
        mpz_clear(n);
    }
    mpz_clear(den);
    return res;
}

/* Print one bound (malloc'd); drop the sign of a zero so that -0.000 and 0.000 compare equal. */
static char *print_bound(const char *fmt, int digits, mpfr_t x)
{
    char *m = NULL;
    if (mpfr_asprintf(&m, fmt, digits, x) < 0)
        return NULL;
    char *buf = malloc(strlen(m) + 1);
    if (buf != NULL)
        strcpy(buf, m);
    mpfr_free_str(m);
    if (buf != NULL && buf[0] == '-') {
        int zero = 1;
        for (const char *c = buf + 1; *c != '\0' && *c != 'e'; c++)
            if (*c >= '1' && *c <= '9')
                zero = 0;
        if (zero)
            memmove(buf, buf + 1, strlen(buf));
    }
    return buf;
}

static abl_status ziv_print(abl_interval_fn fn, void *ctx, const char *fmt, int digits, long max_prec, char **out)
{
    *out = NULL;
    if (fn == NULL || digits < 0 || digits > 100000)
        return ABL_ERR_INVALID_ARGUMENT;
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
        char *a = print_bound(fmt, digits, lo), *b = print_bound(fmt, digits, hi);
        if (a == NULL || b == NULL) {
            free(a);
            free(b);
            st = ABL_ERR_NO_MEMORY;
            break;
        }
        int same = strcmp(a, b) == 0;
        free(b);
        if (same || prec >= max_prec) {
            *out = a;
            st = ABL_OK;
            break;
        }
        free(a);
        prec *= 2;
    }
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    return st;
}

abl_status abl_ziv_fixed_string(abl_interval_fn fn, void *ctx, int decimals, char **out)
{
    return ziv_print(fn, ctx, "%.*Rf", decimals, ABL_ZIV_MAX_PREC, out);
}

abl_status abl_ziv_general_capped(abl_interval_fn fn, void *ctx, int digits, long max_prec, char **out)
{
    *out = NULL;
    if (digits < 1)
        return ABL_ERR_INVALID_ARGUMENT;
    return ziv_print(fn, ctx, "%.*Rg", digits, max_prec < ABL_ZIV_MAX_PREC ? max_prec : ABL_ZIV_MAX_PREC, out);
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

/* printf into a malloc'd string of any length (NULL: out of memory or a bad format). */
static char *vstrf(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *out = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (out != NULL)
        vsnprintf(out, (size_t)n + 1, fmt, again);
    va_end(again);
    return out;
}

/* The message is one line whatever it quotes: text from user files or from jansson (which echoes the
 * offending bytes, raw newlines included) has its control characters replaced by '?'. */
static char *one_line(char *s)
{
    for (char *c = s; c != NULL && *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return s;
}

void abl_set_error(char **msg, const char *fmt, ...)
{
    if (msg == NULL)
        return;
    free(*msg); /* a later, more precise message replaces an earlier one */
    va_list ap;
    va_start(ap, fmt);
    *msg = one_line(vstrf(fmt, ap));
    va_end(ap);
}

void abl_error_dup(char **msg, const char *fmt, ...)
{
    if (msg == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    *msg = one_line(vstrf(fmt, ap));
    va_end(ap);
}

char *abl_strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = vstrf(fmt, ap);
    va_end(ap);
    return out;
}

void abl_text_add(abl_text *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) {
        t->oom = 1;
        return;
    }
    if (t->n + (size_t)need + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 256) + (size_t)need;
        char *s = realloc(t->s, cap);
        if (s == NULL) {
            t->oom = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)need;
}

const char *abl_text_str(const abl_text *t)
{
    return t->s ? t->s : "";
}

char *abl_text_take(abl_text *t)
{
    char *s = t->s;
    if (t->oom) {
        free(s);
        s = NULL;
    }
    memset(t, 0, sizeof *t);
    return s;
}
