/* alibi-blind: estimated costs (abl_cost) combined. */
#include <stdlib.h>
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

abl_status abl_plan_add(abl_plan *p, const abl_plan_step *s)
{
    if (p == NULL || s == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (p->nsteps == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 4;
        abl_plan_step *t = realloc(p->steps, cap * sizeof *t);
        if (t == NULL)
            return ABL_ERR_NO_MEMORY;
        p->steps = t;
        p->cap = cap;
    }
    abl_plan_step *n = &p->steps[p->nsteps++];
    *n = *s;
    n->executed = 0;
    if (n->calls == 0)
        n->calls = 1;
    abl_cost_add(&p->cost, &n->cost);
    return ABL_OK;
}

abl_status abl_plan_leaf(abl_plan *p, const char *what, abl_status est, const abl_cost *c, uint64_t context,
                         int heads)
{
    abl_plan_step s;
    memset(&s, 0, sizeof s);
    s.what = what;
    if (est == ABL_OK && c != NULL)
        s.cost = *c;
    s.context = context;
    s.heads = heads;
    s.calls = 1;
    return abl_plan_add(p, &s);
}

long abl_plan_append(abl_plan *p, const abl_plan *sub)
{
    if (p == NULL || sub == NULL)
        return -1;
    long first = (long)p->nsteps;
    for (size_t i = 0; i < sub->nsteps; i++)
        if (abl_plan_add(p, &sub->steps[i]) != ABL_OK)
            return -1;
    return first;
}

int abl_plan_done(const abl_plan *p)
{
    if (p == NULL)
        return 0;
    for (size_t i = 0; i < p->nsteps; i++)
        if (p->steps[i].executed != p->steps[i].calls)
            return 0;
    return 1;
}

void abl_plan_free(abl_plan *p)
{
    if (p == NULL)
        return;
    free(p->steps);
    memset(p, 0, sizeof *p);
}
