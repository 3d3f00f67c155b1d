/* alibi-blind: floating-point formats (spec §2). */
#ifndef ABL_FORMAT_H
#define ABL_FORMAT_H

#include "abl/core/export.h"

#include <stddef.h>
#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    ABL_FMT_HAS_INF = 1u << 0,   /* the format encodes +-Inf */
    ABL_FMT_HAS_NAN = 1u << 1,   /* the format encodes NaN */
    ABL_FMT_NEG_ZERO = 1u << 2,  /* the format has a distinct -0 */
    ABL_FMT_CUSTOM = 1u << 3     /* built from an eXmY name, not a named format */
};

/*
 * IEEE-style binary format. Precision p counts the hidden bit; smallest subnormal
 * 2^(emin-p+1), smallest normal 2^emin, largest finite
 * (2^p - 1 - max_deficit) * 2^(emax-p+1): max_deficit is 0 except for fp8-e4m3fn
 * (448 = 14 * 2^5, one significand short of the IEEE maximum because S.1111.111 is NaN).
 */
typedef struct abl_format {
    char name[24];        /* canonical name, e.g. "bf16", "fp8-e4m3fn", "e6m9" */
    int exp_bits;         /* storage exponent bits */
    int man_bits;         /* storage mantissa bits (p - 1) */
    int precision;        /* p */
    long emin;            /* 1 - bias */
    long emax;
    unsigned max_deficit;
    unsigned flags;       /* ABL_FMT_* */
} abl_format;

/* Number of built-in formats, in spec §2 order (fp64 first, fp4-e2m1fn last). */
ABL_API size_t abl_format_count(void);

/* Built-in format i (0 <= i < abl_format_count()), or NULL. */
ABL_API const abl_format *abl_format_at(size_t i);

/*
 * Resolve a name: canonical names, aliases (bfloat16, float32, half, float16, e4m3, e5m2, ...),
 * case-insensitive; a custom IEEE-like "eXmY" (2 <= X <= 20, 1 <= Y <= 112) that is not an alias
 * of a named format. ABL_ERR_UNKNOWN_DTYPE otherwise.
 */
ABL_API abl_status abl_format_lookup(const char *name, abl_format *out);

/*
 * A name that means different formats in different libraries ("e4m3": torch.float8_e4m3fn, max
 * 448, or ml_dtypes.float8_e4m3, IEEE-style, max 240): the text naming the candidates; NULL for any
 * other name. abl_format_lookup refuses these names. Lookup also takes torch.<dtype> (PyTorch's
 * names: torch.bfloat16, torch.half, torch.float8_e4m3fn, ...), ml_dtypes.<name> and np.<name>.
 */
ABL_API const char *abl_format_ambiguous(const char *name);

/* Comma-separated list of canonical names of the built-in formats (for --help). */
ABL_API const char *abl_format_names(void);

#ifdef __cplusplus
}
#endif
#endif
