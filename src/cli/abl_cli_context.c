/*
 * A context length as users write it (issue 19): "8192", "1e12", "8k" / "8K" / "8Ki" (k = 1024, as model
 * cards mean it: "8k context" is 8192 tokens), "1M" / "1Mi" (1024^2), "2^15". One parser at the boundary;
 * every --ctx (and figure's --until, its alias) reads through it.
 */
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"
#include "abl/core/decimal.h"

/* The unit a suffix names (1 when there is none) and the length of the number before it. */
static unsigned long ctx_unit(const char *text, size_t *numlen)
{
    static const struct {
        const char *suffix;
        unsigned long unit;
    } units[] = {{"Ki", 1024UL}, {"Mi", 1024UL * 1024UL}, {"k", 1024UL}, {"K", 1024UL}, {"M", 1024UL * 1024UL}};
    size_t len = strlen(text);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t sl = strlen(units[i].suffix);
        if (len > sl && strcmp(text + len - sl, units[i].suffix) == 0) {
            *numlen = len - sl;
            return units[i].unit;
        }
    }
    *numlen = len;
    return 1;
}

/* An exact decimal of at most len characters of text into q (0), or -1. */
static int ctx_decimal(const char *text, size_t len, mpq_t q)
{
    char *s = malloc(len + 1);
    if (s == NULL)
        return -1;
    memcpy(s, text, len);
    s[len] = '\0';
    int rc = abl_decimal_to_mpq(s, q) == ABL_OK ? 0 : -1;
    free(s);
    return rc;
}

/* "B^E": whole B >= 0 and E >= 0, B^E at most 4096 bits (a bounded integer: the range check says the rest). */
static int ctx_power(const char *text, const char *caret, mpq_t q)
{
    mpq_t b, e;
    mpq_init(b);
    mpq_init(e);
    int rc = -1;
    if (ctx_decimal(text, (size_t)(caret - text), b) == 0 && ctx_decimal(caret + 1, strlen(caret + 1), e) == 0 &&
        mpz_cmp_ui(mpq_denref(b), 1) == 0 && mpz_cmp_ui(mpq_denref(e), 1) == 0 && mpq_sgn(b) >= 0 &&
        mpq_sgn(e) >= 0 && mpz_cmp_ui(mpq_numref(e), 4096) <= 0 &&
        mpz_sizeinbase(mpq_numref(b), 2) * mpz_get_ui(mpq_numref(e)) <= 4096) {
        mpz_pow_ui(mpq_numref(q), mpq_numref(b), mpz_get_ui(mpq_numref(e)));
        mpz_set_ui(mpq_denref(q), 1);
        rc = 0;
    }
    mpq_clear(b);
    mpq_clear(e);
    return rc;
}

/* The text's value as an exact rational (0), or -1 when it is none of the spellings. */
static int ctx_value(const char *text, mpq_t q)
{
    const char *caret = strchr(text, '^');
    if (caret != NULL)
        return ctx_power(text, caret, q);
    size_t numlen;
    unsigned long unit = ctx_unit(text, &numlen);
    if (ctx_decimal(text, numlen, q) != 0)
        return -1;
    mpq_t u;
    mpq_init(u);
    mpq_set_ui(u, unit, 1);
    mpq_mul(q, q, u);
    mpq_clear(u);
    return 0;
}

int abl_cli_context(const char *opt, const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    mpq_t q;
    mpq_init(q);
    int rc = 0;
    if (ctx_value(text, q) != 0) {
        rc = abl_cli_usage_error("--%s: '%s' is not a context length (N, 1e12, 8k or 8K = 8192, 64Ki, 1M, 2^15)",
                                 opt, text);
    } else if (mpz_cmp_ui(mpq_denref(q), 1) != 0) {
        rc = abl_cli_usage_error("--%s: '%s' is not a whole number of tokens", opt, text);
    } else if (mpq_sgn(q) < 0 || mpz_sizeinbase(mpq_numref(q), 2) > 63 ||
               mpz_get_ui(mpq_numref(q)) < lo || mpz_get_ui(mpq_numref(q)) > hi) {
        rc = abl_cli_usage_error("--%s: %s is out of range (%llu to %llu)", opt, text, (unsigned long long)lo,
                                 (unsigned long long)hi);
    } else {
        *out = mpz_get_ui(mpq_numref(q));
    }
    mpq_clear(q);
    return rc;
}
