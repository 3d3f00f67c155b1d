/* alibi-blind (private): the real kernel's columns of tables 1 and 5 -- a catalogue model's exact
 * zero pattern on its default code path at the table's window, by the zero-logit predictor (the
 * same answer as `analyze --model NAME --ctx W`). */
#ifndef ABL_PAPER_KERNEL_H
#define ABL_PAPER_KERNEL_H

#include <stdint.h>
#include <gmp.h>
#include "abl/core/progress.h"
#include "abl/core/status.h"
#include "abl/model/catalogue.h"
#include "abl/report/report.h"
#include "abl/paper/paper.h"

typedef struct abl_kernel_cells {
    const abl_model *model;   /* the catalogue entry, or NULL */
    const char *path;         /* its default code path ("transformers"), NULL when none */
    const char *preset;       /* that path's pipeline preset ("bloom-hf") */
    const char *skipped;      /* why the cells are empty (a phrase), or NULL when computed */
    uint64_t window;          /* the context it was computed at */
    int heads, blind_heads;   /* blind_heads: heads with a zero weight in the last row */
    int64_t first_blind_steep, first_blind_flat; /* of the steepest / flattest head; -1: none */
    mpq_t row_fraction, matrix_fraction;
} abl_kernel_cells;

/*
 * The kernel's answer for catalogue model m (may be NULL) at context `window`, computed when m has a
 * published code path, `heads` equals its head count (the table's printed count may differ) and the
 * path's prediction is affordable in a table; otherwise k->skipped says why and the cells are empty.
 * Errors only for a failure of the computation itself. abl_kernel_cells_clear releases k.
 */
abl_status abl_kernel_cells_run(const abl_model *m, int heads, uint64_t window, abl_kernel_cells *k);
/* The same, copied from `prev` (a computed answer, or NULL) when m runs exactly what prev ran: the same
 * code path, dtype, slopes and heads at the same window (bloom-1b1 after bloom-560m). */
abl_status abl_kernel_cells_run_after(const abl_model *m, int heads, uint64_t window, const abl_kernel_cells *prev,
                                      abl_kernel_cells *k);
void abl_kernel_cells_clear(abl_kernel_cells *k);
/* Plan the cells of the next row of a table: a step "predict" (the predictor's cost at the window),
 * "reuse" (reuse != 0 and the previous row ran exactly this: abl_kernel_cells_run_after copies it) or
 * "skip" (the cells stay empty, as abl_kernel_cells_run decides). */
abl_status abl_kernel_cells_plan_row(abl_table_kernel_plan *tp, const abl_model *m, int heads, uint64_t window,
                                     int reuse);
/* Execute the next planned row (which must be (m, heads, window): ABL_ERR_INVALID_ARGUMENT otherwise),
 * counting it in its step; prev: the previous row's cells, for a "reuse" step. k as abl_kernel_cells_run. */
abl_status abl_kernel_cells_run_step(abl_table_kernel_plan *tp, const abl_model *m, int heads, uint64_t window,
                                     const abl_kernel_cells *prev, abl_kernel_cells *k);

/* One cell each: first_blind (number, "none"/null, or empty), blind heads, a fraction (percent text). */
void abl_kernel_cell_first_blind(abl_report *r, const abl_kernel_cells *k, int flattest);
void abl_kernel_cell_blind_heads(abl_report *r, const abl_kernel_cells *k);
void abl_kernel_cell_fraction(abl_report *r, const abl_kernel_cells *k, int matrix);

/* The reason phrase for a default code path whose prediction the tables skip, or NULL. */
const char *abl_kernel_skip_reason(const char *preset);

/*
 * What a table's kernel footnotes list: each code path used (with the families on it) and each
 * reason a row's cells are empty (with the rows). Only pointers to the catalogue's static strings
 * are kept, so the sizes bound nothing a user writes.
 */
#define ABL_KERNEL_NOTE_MAX 64
typedef struct abl_kernel_notes {
    struct {
        const char *path, *preset, *skipped;
        const char *families[ABL_KERNEL_NOTE_MAX];
        size_t nfamilies;
    } paths[ABL_KERNEL_NOTE_MAX];
    size_t npaths;
    struct {
        const char *reason;
        const char *rows[ABL_KERNEL_NOTE_MAX];
        size_t nrows;
    } empty[ABL_KERNEL_NOTE_MAX];
    size_t nempty;
    const char *other_dtype[ABL_KERNEL_NOTE_MAX]; /* "baichuan: fp16": families not in the table's dtype */
    const char *other_dtype_name[ABL_KERNEL_NOTE_MAX];
    size_t nother;
} abl_kernel_notes;

/* Record row k (its catalogue name for an empty row: model->table5) against the table's dtype name. */
void abl_kernel_notes_add(abl_kernel_notes *n, const abl_kernel_cells *k, const char *table_dtype);
/* The code-path footnote ("bloom: transformers (pipeline bloom-hf); ..."), the empty-cells footnote
 * ("BloombergGPT, CodeLLM: weights and code not public ..."; NULL when none) and the dtype clause
 * ("baichuan fp16"; NULL when none), each malloc'd (NULL on allocation failure too). */
char *abl_kernel_notes_paths(const abl_kernel_notes *n);
char *abl_kernel_notes_empty(const abl_kernel_notes *n);
char *abl_kernel_notes_dtypes(const abl_kernel_notes *n);

#endif
