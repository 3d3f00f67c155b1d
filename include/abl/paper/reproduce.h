/* alibi-blind: reproduction of the paper. Every computable published number (Tables 1, 4, 8, the
 * model facts of Tables 1 and 5, the claims of the text) is recomputed and compared; each
 * difference is either documented (docs/errata.md, mirrored by the compiled-in list below) or
 * unexplained. */
#ifndef ABL_REPRODUCE_H
#define ABL_REPRODUCE_H

#include "abl/core/export.h"

#include <stddef.h>
#include "abl/core/status.h"
#include "abl/paper/published.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum abl_verdict { ABL_VERDICT_MATCH = 0, ABL_VERDICT_DIFFERS = 1 } abl_verdict;

/* How a check stands against the documented differences. */
typedef enum abl_errata_state {
    ABL_ERRATA_NONE = 0,        /* a match, and none is documented */
    ABL_ERRATA_DOCUMENTED = 1,  /* a difference documented with exactly these published and computed values */
    ABL_ERRATA_UNEXPLAINED = 2, /* a difference nobody documented, or documented with other values */
    ABL_ERRATA_STALE = 3        /* documented as a difference, but it matches now (or the value is gone) */
} abl_errata_state;

/* A documented difference (docs/errata.md): the id, the two values as compared, and the reason. */
typedef struct abl_known_difference {
    const char *id;
    const char *published;
    const char *computed;
    const char *reason;       /* one line */
} abl_known_difference;

ABL_API size_t abl_known_difference_count(void);
ABL_API const abl_known_difference *abl_known_difference_at(size_t i);
ABL_API const abl_known_difference *abl_known_difference_find(const char *id);

typedef struct abl_check {
    /* Text of any length, owned by the reproduction (freed by abl_reproduction_free): the published values
     * come from a transcription file, whose cells are not bounded. */
    char *id;                  /* "table8.E+L.d1", "table4.bf16.underflow", "claim.row_fraction_16h_2048" */
    char *published;           /* as printed */
    char *computed;            /* formatted like the printed value */
    char *convention;          /* what was computed, and how */
    abl_verdict verdict;
    abl_errata_state errata;
    char *reason;              /* one line: why it differs, or a remark on a match ("" when none) */
} abl_check;

typedef struct abl_reproduction {
    char *source;             /* where the published values came from (malloc'd) */
    abl_check *checks;
    size_t count, cap;
    size_t matches, differences, documented, unexplained, stale;
    char **notes;             /* published items that are not computable, and why */
    size_t nnotes, capnotes;
} abl_reproduction;

/* Run every check against `pub`. ABL_ERR_PARSE when a published cell that must be a number is not one
 * is reported as an unexplained difference, not as an error; errors are for memory and engine failures. */
ABL_API abl_status abl_reproduce_run(const abl_published *pub, abl_reproduction *out);
ABL_API void abl_reproduction_free(abl_reproduction *r);

/* 1 when every difference is documented and no documented difference is stale. */
ABL_API int abl_reproduction_ok(const abl_reproduction *r);

/* The report: one row per check (only the differences with differences_only), summary, notes. */
ABL_API abl_status abl_reproduce_report(const abl_reproduction *r, int differences_only, abl_report **out);

ABL_API const char *abl_verdict_name(abl_verdict v);          /* "match", "differs" */
ABL_API const char *abl_errata_state_name(abl_errata_state s); /* "", "documented", "unexplained", "stale" */

#ifdef __cplusplus
}
#endif
#endif
