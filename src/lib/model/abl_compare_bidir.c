/* alibi-blind: the verdict of a bidirectional (encoder) comparison and check (abl_compare_bidir.h): a head is
 * lost when any row of its N x N matrix has a zero weight, the predictor's matrix count. */
#include <stdlib.h>
#include "abl_internal.h"
#include "model/abl_compare_bidir.h"

int abl_compare_head_lost(const abl_compare *c, int64_t first, uint64_t matrix)
{
    if (c->config.attention == ABL_ATTENTION_BIDIRECTIONAL)
        return matrix > 0;
    return first >= 0;
}

abl_status abl_compare_bidir_reason(abl_report *r, const abl_compare *c, int lost_heads)
{
    if (c->config.attention != ABL_ATTENTION_BIDIRECTIONAL || lost_heads == 0)
        return ABL_OK;
    char *t = abl_strf("%d of %d heads go blind inside %llu tokens, in rows other than the end row (which keeps "
                       "every weight)", lost_heads, c->heads, (unsigned long long)c->config.context);
    abl_status st = t != NULL ? abl_report_summary(r, "reason", "reason", t, NULL) : ABL_ERR_NO_MEMORY;
    free(t);
    return st;
}
