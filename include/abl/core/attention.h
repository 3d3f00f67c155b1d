/* alibi-blind: the attention direction of a layer (issue 19): which keys a query row attends. It sits in
 * core because every stage above asks it (the closed forms of the analysis, the emulation and the
 * predictor, the layer value). */
#ifndef ABL_ATTENTION_H
#define ABL_ATTENTION_H

#include "abl/core/export.h"

#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum abl_attention {
    ABL_ATTENTION_CAUSAL = 0,        /* decoders: query i attends keys j <= i, at distances d = i - j */
    ABL_ATTENTION_BIDIRECTIONAL = 1, /* encoders: query i attends every key j, at distances d = |i - j| (two
                                      * horizons: i keys on the left, N - 1 - i on the right) */
    ABL_ATTENTION_COUNT = 2
} abl_attention;

/* "causal", "bidirectional"; NULL when unknown. */
ABL_API const char *abl_attention_name(abl_attention a);
/* The name above (exact, lower case) into *out; ABL_ERR_INVALID_ARGUMENT when unknown. */
ABL_API abl_status abl_attention_parse(const char *text, abl_attention *out);

#ifdef __cplusplus
}
#endif
#endif
