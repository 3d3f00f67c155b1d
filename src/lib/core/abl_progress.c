/* alibi-blind: estimated costs (abl_cost) combined. */
#include <string.h>
#include "abl/core/progress.h"

void abl_cost_add(abl_cost *acc, const abl_cost *c)
{
    if (acc == NULL || c == NULL)
        return;
    int larger = c->seconds > acc->seconds || acc->unit_name == NULL;
    if (acc->unit_name == NULL || (c->unit_name != NULL && strcmp(acc->unit_name, c->unit_name) == 0)) {
        acc->units += c->units;
        acc->unit_name = c->unit_name;
    } else if (larger) {
        acc->units = c->units;
        acc->unit_name = c->unit_name;
    }
    if (larger)
        acc->threads = c->threads;
    acc->seconds += c->seconds;
}
