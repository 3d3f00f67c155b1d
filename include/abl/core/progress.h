/* alibi-blind: progress of long computations and their estimated cost. The library never writes to
 * a terminal: it reports work done through a callback, and the caller (the CLI) draws what it likes. */
#ifndef ABL_PROGRESS_H
#define ABL_PROGRESS_H

#include "abl/core/export.h"

#include <stdint.h>

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

#ifdef __cplusplus
}
#endif
#endif
