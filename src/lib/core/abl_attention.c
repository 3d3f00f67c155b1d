/* alibi-blind: the attention direction's names (include/abl/core/attention.h). */
#include <string.h>
#include "abl/core/attention.h"

static const char *const names[ABL_ATTENTION_COUNT] = {"causal", "bidirectional"};

const char *abl_attention_name(abl_attention a)
{
    return (unsigned)a < ABL_ATTENTION_COUNT ? names[a] : NULL;
}

abl_status abl_attention_parse(const char *text, abl_attention *out)
{
    if (text == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    for (int a = 0; a < ABL_ATTENTION_COUNT; a++)
        if (strcmp(text, names[a]) == 0) {
            *out = (abl_attention)a;
            return ABL_OK;
        }
    return ABL_ERR_INVALID_ARGUMENT;
}
