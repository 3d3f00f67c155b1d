/* alibi-blind: progress of long computations and their estimated cost. The library never writes to
 * a terminal: it reports work done through a callback, and the caller (the CLI) draws what it likes. */
#ifndef ABL_PROGRESS_H
#define ABL_PROGRESS_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Called with the work done so far and the total, in the computation's own units (never decreasing
 * `done`, ending with done == total on success). It may be called from a worker thread, but never
 * from two threads at once; it must be cheap (throttle any drawing on the caller's side).
 */
typedef void (*abl_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct abl_progress {
    abl_progress_fn fn;   /* NULL: no reports */
    void *ctx;
} abl_progress;

/* What a computation will cost before it starts: `units` of work (e.g. attention weights) and the
 * wall time it takes at the documented nominal rate on `threads` threads. */
typedef struct abl_cost {
    double units;
    double seconds;
    int threads;
    const char *unit_name;   /* "weights", "points", "formats" */
} abl_cost;

/* acc += c, for work that runs one part after the other: the seconds add; the units add when both
 * count the same thing (or acc is empty), else the part with more seconds names them; threads: those
 * of the part with the most seconds (the one that decides the time). */
ABL_API void abl_cost_add(abl_cost *acc, const abl_cost *c);

/*
 * Plan, then run (issue 17 item 2). A heavy computation is first planned from its configuration: the
 * plan lists what will be computed (one step per call of the analysis, the predictor, the emulator...,
 * with its size and its nominal cost) and its cost is the sum of the steps' costs, added by
 * abl_plan_add, so a composite's cost is its parts' by construction. The run then executes exactly the
 * plan's steps, counting each call in the step's `executed`: the public `*_estimate` functions return
 * the plan's cost, never a second description of the run.
 */
typedef struct abl_plan_step {
    const char *what;        /* static: "analysis", "predict", "simulate", "design search", ... */
    abl_cost cost;           /* of all `calls` together */
    uint64_t context;        /* the size: N (or points, for a figure) */
    int heads;               /* 0: from the schedule (a list's length) */
    unsigned long calls;     /* how many calls of `what` the step stands for (>= 1) */
    unsigned long executed;  /* filled by the run: the calls it made */
} abl_plan_step;

typedef struct abl_plan {
    abl_cost cost;           /* abl_cost_add over the steps, in order */
    size_t nsteps, cap;
    abl_plan_step *steps;    /* heap; abl_plan_free */
} abl_plan;

/* Append a step (its `executed` set to 0) and add its cost. ABL_ERR_NO_MEMORY, the plan unchanged. */
ABL_API abl_status abl_plan_add(abl_plan *p, const abl_plan_step *s);
/* Append one call of `what` (calls 1) at size (context, heads) costing *c, or nothing when its estimate
 * failed (est != ABL_OK: the run reports that failure). As abl_plan_add. */
ABL_API abl_status abl_plan_leaf(abl_plan *p, const char *what, abl_status est, const abl_cost *c, uint64_t context,
                                 int heads);
/* Append every step of `sub` (a sub-plan: its cost joins p's, step by step); returns the index of
 * sub's first step in p, or -1 (no memory: p keeps the steps added so far, its cost theirs). */
ABL_API long abl_plan_append(abl_plan *p, const abl_plan *sub);
/* 1 when every step was executed exactly as planned (executed == calls). */
ABL_API int abl_plan_done(const abl_plan *p);
ABL_API void abl_plan_free(abl_plan *p);

#ifdef __cplusplus
}
#endif
#endif
