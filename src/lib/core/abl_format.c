/* alibi-blind: floating-point formats (spec §2). */
#include "abl/core/format.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define IEEE_FLAGS (ABL_FMT_HAS_INF | ABL_FMT_HAS_NAN | ABL_FMT_NEG_ZERO)
#define FN_FLAGS (ABL_FMT_HAS_NAN | ABL_FMT_NEG_ZERO)   /* finite-only, NaN kept */
#define FNUZ_FLAGS (ABL_FMT_HAS_NAN)                    /* NaN takes the -0 encoding */
#define MX_FLAGS (ABL_FMT_NEG_ZERO)                     /* OCP MX fp6/fp4: no Inf, no NaN */

/*
 * spec §2 order. emin/emax are not all 1-bias/bias: formats without Inf reuse the top
 * exponent for finite values (emax one higher), and the fnuz formats use bias 2^(X-1),
 * one more than IEEE, so their emin is one lower.
 */
static const abl_format k_formats[] = {
    {"fp64", 11, 52, 53, -1022, 1023, 0, IEEE_FLAGS},
    {"fp32", 8, 23, 24, -126, 127, 0, IEEE_FLAGS},
    {"tf32", 8, 10, 11, -126, 127, 0, IEEE_FLAGS},
    {"bf16", 8, 7, 8, -126, 127, 0, IEEE_FLAGS},
    {"fp16", 5, 10, 11, -14, 15, 0, IEEE_FLAGS},
    {"fp8-e5m2", 5, 2, 3, -14, 15, 0, IEEE_FLAGS},
    /* S.1111.111 is NaN, so the top binade stops at 1.110b * 2^8 = 448. */
    {"fp8-e4m3fn", 4, 3, 4, -6, 8, 1, FN_FLAGS},
    {"fp8-e4m3fnuz", 4, 3, 4, -7, 7, 0, FNUZ_FLAGS},
    {"fp8-e5m2fnuz", 5, 2, 3, -15, 15, 0, FNUZ_FLAGS},
    {"fp6-e2m3fn", 2, 3, 4, 0, 2, 0, MX_FLAGS},
    {"fp6-e3m2fn", 3, 2, 3, -2, 4, 0, MX_FLAGS},
    {"fp4-e2m1fn", 2, 1, 2, 0, 2, 0, MX_FLAGS},
    /* ml_dtypes' IEEE-style fp8 formats (Inf and NaN reserved in the top exponent):
     * float8_e4m3 max 1.111b * 2^7 = 240, float8_e3m4 max 1.1111b * 2^3 = 15.5. */
    {"float8_e4m3", 4, 3, 4, -6, 7, 0, IEEE_FLAGS},
    {"fp8-e3m4", 3, 4, 5, -2, 3, 0, IEEE_FLAGS},
    /* ml_dtypes float8_e4m3b11fnuz: bias 11, no Inf, NaN = 0x80: max 1.111b * 2^4 = 30. */
    {"fp8-e4m3b11fnuz", 4, 3, 4, -10, 4, 0, FNUZ_FLAGS},
};

#define FORMAT_COUNT (sizeof k_formats / sizeof k_formats[0])

#define E4M3_CANDIDATES                                                                                   \
    "fp8-e4m3fn (torch.float8_e4m3fn, ml_dtypes float8_e4m3fn: no Inf, max 448) or float8_e4m3 "         \
    "(ml_dtypes float8_e4m3: IEEE-style with Inf, max 240)"
#define FP8_CANDIDATES                                                                                    \
    "fp8-e4m3fn, fp8-e5m2, float8_e4m3, fp8-e3m4, fp8-e4m3fnuz, fp8-e5m2fnuz or fp8-e4m3b11fnuz"

static int equal_nocase(const char *a, const char *b);

/* Aliases, compared case-insensitively; canonical names are matched from k_formats directly. */
static const struct {
    const char *alias;
    size_t index;
} k_aliases[] = {
    {"double", 0}, {"float64", 0}, {"f64", 0}, {"e11m52", 0},
    {"float", 1}, {"float32", 1}, {"f32", 1}, {"single", 1}, {"e8m23", 1},
    {"tensorfloat32", 2}, {"tensorfloat-32", 2}, {"e8m10", 2},
    {"bfloat16", 3}, {"e8m7", 3},
    {"half", 4}, {"float16", 4}, {"f16", 4}, {"e5m10", 4},
    {"e5m2", 5}, {"float8_e5m2", 5}, {"fp8e5m2", 5}, {"fp8_e5m2", 5},
    /* e4m3, fp8-e4m3, fp8_e4m3, fp8e4m3 are ambiguous (abl_format_ambiguous): refused. */
    {"e4m3fn", 6}, {"float8_e4m3fn", 6}, {"fp8_e4m3fn", 6}, {"fp8e4m3fn", 6},
    {"e4m3fnuz", 7}, {"float8_e4m3fnuz", 7}, {"fp8_e4m3fnuz", 7}, {"fp8e4m3fnuz", 7},
    {"e5m2fnuz", 8}, {"float8_e5m2fnuz", 8}, {"fp8_e5m2fnuz", 8}, {"fp8e5m2fnuz", 8},
    {"e2m3", 9}, {"e2m3fn", 9}, {"fp6_e2m3", 9}, {"fp6-e2m3", 9}, {"fp6_e2m3fn", 9},
    {"float6_e2m3fn", 9},
    {"e3m2", 10}, {"e3m2fn", 10}, {"fp6_e3m2", 10}, {"fp6-e3m2", 10}, {"fp6_e3m2fn", 10},
    {"float6_e3m2fn", 10},
    {"e2m1", 11}, {"e2m1fn", 11}, {"fp4", 11}, {"fp4_e2m1", 11}, {"fp4-e2m1", 11},
    {"fp4_e2m1fn", 11}, {"float4_e2m1fn", 11},
    {"e3m4", 13}, {"float8_e3m4", 13}, {"fp8_e3m4", 13}, {"fp8e3m4", 13},
    {"e4m3b11fnuz", 14}, {"float8_e4m3b11fnuz", 14}, {"fp8_e4m3b11fnuz", 14},
};

/*
 * PyTorch's names (torch.finfo / tensor.dtype spellings), each with the format it denotes; only the
 * floating dtypes torch has (torch.float is float32, torch.half float16).
 */
static const struct {
    const char *name;
    size_t index;
} k_torch[] = {
    {"float64", 0}, {"double", 0}, {"float32", 1}, {"float", 1}, {"bfloat16", 3}, {"float16", 4},
    {"half", 4}, {"float8_e5m2", 5}, {"float8_e4m3fn", 6}, {"float8_e4m3fnuz", 7}, {"float8_e5m2fnuz", 8},
};

/* Names that mean different formats in different libraries: refused, with the candidates. */
static const struct {
    const char *name, *candidates;
} k_ambiguous[] = {
    {"e4m3", E4M3_CANDIDATES},     {"fp8-e4m3", E4M3_CANDIDATES}, {"fp8_e4m3", E4M3_CANDIDATES},
    {"fp8e4m3", E4M3_CANDIDATES},  {"fp8", FP8_CANDIDATES},       {"float8", FP8_CANDIDATES},
    {"torch.float8", FP8_CANDIDATES},
};

const char *abl_format_ambiguous(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof k_ambiguous / sizeof k_ambiguous[0]; i++)
        if (equal_nocase(name, k_ambiguous[i].name))
            return k_ambiguous[i].candidates;
    return NULL;
}

size_t abl_format_count(void)
{
    return FORMAT_COUNT;
}

const abl_format *abl_format_at(size_t i)
{
    return i < FORMAT_COUNT ? &k_formats[i] : NULL;
}

const char *abl_format_names(void)
{
    return "fp64, fp32, tf32, bf16, fp16, fp8-e5m2, fp8-e4m3fn, fp8-e4m3fnuz, fp8-e5m2fnuz, "
           "fp6-e2m3fn, fp6-e3m2fn, fp4-e2m1fn, float8_e4m3, fp8-e3m4, fp8-e4m3b11fnuz";
}

static int equal_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    }
    return *a == *b;
}

/* Strict decimal: digits only, no sign, no leading zero, at most 3 digits. */
static const char *parse_small_uint(const char *s, int *out)
{
    int v = 0, n = 0;
    if (*s == '0')
        return NULL;
    while (isdigit((unsigned char)*s) && n < 4) {
        v = v * 10 + (*s - '0');
        s++;
        n++;
    }
    if (n == 0 || n > 3)
        return NULL;
    *out = v;
    return s;
}

/* "eXmY" with 2 <= X <= 20, 1 <= Y <= 112; returns 1 on success. */
static int parse_exmy(const char *name, int *x, int *y)
{
    const char *s = name;
    if (*s != 'e' && *s != 'E')
        return 0;
    s = parse_small_uint(s + 1, x);
    if (!s || (*s != 'm' && *s != 'M'))
        return 0;
    s = parse_small_uint(s + 1, y);
    if (!s || *s != '\0')
        return 0;
    return *x >= 2 && *x <= 20 && *y >= 1 && *y <= 112;
}

abl_status abl_format_lookup(const char *name, abl_format *out)
{
    size_t i;
    int x, y;

    if (!name || !out)
        return ABL_ERR_INVALID_ARGUMENT;
    if (abl_format_ambiguous(name) != NULL)
        return ABL_ERR_UNKNOWN_DTYPE;
    /* torch.<dtype>: PyTorch's own names only. */
    if (strncasecmp(name, "torch.", 6) == 0) {
        for (i = 0; i < sizeof k_torch / sizeof k_torch[0]; i++) {
            if (equal_nocase(name + 6, k_torch[i].name)) {
                *out = k_formats[k_torch[i].index];
                return ABL_OK;
            }
        }
        return ABL_ERR_UNKNOWN_DTYPE;
    }
    /* ml_dtypes.<name>, np./numpy.<name>: the library's names, which are aliases here. */
    if (strncasecmp(name, "ml_dtypes.", 10) == 0)
        name += 10;
    else if (strncasecmp(name, "numpy.", 6) == 0)
        name += 6;
    else if (strncasecmp(name, "np.", 3) == 0)
        name += 3;
    for (i = 0; i < FORMAT_COUNT; i++) {
        if (equal_nocase(name, k_formats[i].name)) {
            *out = k_formats[i];
            return ABL_OK;
        }
    }
    /* Aliases first: e5m2, e4m3, e2m1, e8m7, ... name real formats, not IEEE-like customs. */
    for (i = 0; i < sizeof k_aliases / sizeof k_aliases[0]; i++) {
        if (equal_nocase(name, k_aliases[i].alias)) {
            *out = k_formats[k_aliases[i].index];
            return ABL_OK;
        }
    }
    if (parse_exmy(name, &x, &y)) {
        long bias = (1L << (x - 1)) - 1;
        abl_format f;
        memset(&f, 0, sizeof f);
        snprintf(f.name, sizeof f.name, "e%dm%d", x, y);
        f.exp_bits = x;
        f.man_bits = y;
        f.precision = y + 1;
        f.emin = 1 - bias;
        f.emax = bias;
        f.max_deficit = 0;
        f.flags = IEEE_FLAGS | ABL_FMT_CUSTOM;
        *out = f;
        return ABL_OK;
    }
    return ABL_ERR_UNKNOWN_DTYPE;
}
