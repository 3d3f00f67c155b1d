/* alibi-blind: the report writer. Every command builds one report (meta lines, one table,
 * summary lines, notes) and renders it as text, markdown, csv, json or latex. */
#ifndef ABL_REPORT_H
#define ABL_REPORT_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdio.h>
#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum abl_output {
    ABL_OUT_TEXT = 0, ABL_OUT_MARKDOWN = 1, ABL_OUT_CSV = 2, ABL_OUT_JSON = 3, ABL_OUT_LATEX = 4
} abl_output;

typedef enum abl_align { ABL_ALIGN_LEFT = 0, ABL_ALIGN_RIGHT = 1 } abl_align;

ABL_API abl_status abl_output_parse(const char *text, abl_output *out);
ABL_API const char *abl_output_name(abl_output o);

typedef struct abl_report abl_report;

/*
 * title: printed first (text/markdown), as \caption (latex); json_key: name of the JSON array that
 * holds the table rows (e.g. "heads", "rows"). Returns NULL on allocation failure.
 */
ABL_API abl_report *abl_report_new(const char *title, const char *json_key);
ABL_API void abl_report_free(abl_report *r);

/*
 * A value is given by its display text and its JSON token. json = NULL means "a JSON string of text";
 * otherwise json is inserted verbatim (a number, true/false, null, or an already quoted string).
 * latex = NULL means text with LaTeX specials escaped; otherwise inserted verbatim.
 */

/* A key/value line printed before the table (text: "label: text"); a top-level JSON member `key`. */
ABL_API abl_status abl_report_meta(abl_report *r, const char *key, const char *label, const char *text, const char *json);
/* The same, printed after the table. */
ABL_API abl_status abl_report_summary(abl_report *r, const char *key, const char *label, const char *text, const char *json);
/* A column: key (JSON member and CSV header), header (text/markdown/latex header). */
ABL_API abl_status abl_report_column(abl_report *r, const char *key, const char *header, abl_align align);
/*
 * Mark the column just added as an explanation: when a text table does not fit its width, its
 * cells become numbered footnotes below the table (left-aligned columns with a cell wider than 30
 * columns are treated so without being marked).
 */
ABL_API abl_status abl_report_column_explains(abl_report *r);
/* Mark the column just added as data for programs: JSON and CSV carry it, text/markdown/latex do not. */
ABL_API abl_status abl_report_column_data_only(abl_report *r);
/*
 * Mark the column just added as an exact integer that may exceed 2^53 (a distance delta, a count): its
 * cells' JSON token is null (never), a JSON integer, or a quoted decimal integer (abl_delta_json). JSON and
 * CSV then carry two members whose types never depend on the value (docs/schema/README.md): `key`, a
 * number when the integer is at most 2^53 (exact in every JSON reader) and null otherwise, and
 * `key_exact`, the decimal text as a string (null when the cell is null).
 */
ABL_API abl_status abl_report_column_integer(abl_report *r);
/*
 * Mark the column just added as the first of a group: when a text table is split into panels to fit
 * its width, the group starts a new panel (so that adding a group leaves the earlier panels as they
 * were). A table that fits is not split.
 */
ABL_API abl_status abl_report_column_new_panel(abl_report *r);
/* Start a row; then one abl_report_cell per column, in order. */
ABL_API abl_status abl_report_row(abl_report *r);
ABL_API abl_status abl_report_cell(abl_report *r, const char *text, const char *json, const char *latex);
/* A footnote / remark line printed after the table (JSON: "notes" array). */
ABL_API abl_status abl_report_note(abl_report *r, const char *text);

/*
 * The version of the JSON shapes (docs/schema/README.md): the first member of every JSON object the report
 * writer renders, "schema_version". 2: the type rule (a field's type never depends on its value).
 */
#define ABL_REPORT_SCHEMA_VERSION 2
#define ABL_REPORT_SCHEMA_VERSION_TEXT "2"

/* Make the JSON rendering the bare array of row objects (meta, summary and notes are left out). */
ABL_API abl_status abl_report_json_rows_only(abl_report *r);

/*
 * s as a JSON string token, quoted, written as the report's JSON rendering writes its strings (the one JSON
 * escaper: quotes and backslashes escaped, the output neutraliser's \u escapes for control characters, DEL,
 * C1 controls, non-ASCII and invalid UTF-8, the tool's symbols in ASCII; docs/spec.md, "Text on standard
 * output"): for a verbatim json token of abl_report_meta or abl_report_cell. malloc'd, the caller's to free;
 * NULL on allocation failure or when s is NULL.
 */
ABL_API char *abl_report_json_string(const char *s);

/*
 * Render. CSV is the table alone (header row + rows, RFC 4180 quoting). JSON is one object:
 * meta members, then json_key: [ {column key: value, ...}, ... ], then summary members, then
 * "notes" (only when there are notes). Text aligns columns by display width (UTF-8 aware).
 */
ABL_API abl_status abl_report_write(const abl_report *r, abl_output fmt, FILE *out);

/*
 * Text lines are at most ABL_REPORT_WIDTH display columns by default: meta and summary lines and
 * notes wrap at spaces (continuation lines indented), table cells wrap inside their columns (the
 * widest column first; a word, hence a number, is never split), and a table that still does not
 * fit prints one "header: value" block per row. abl_report_write_width sets the limit for text
 * (0 = no limit: one line per row, meta line and note); the other formats ignore it.
 */
#define ABL_REPORT_WIDTH 80
ABL_API abl_status abl_report_write_width(const abl_report *r, abl_output fmt, size_t width, FILE *out);

/*
 * Several reports of one shape as one document (analyze --dtype bf16,fp16: one report per dtype).
 * Text, markdown and latex: an overview first (title; one row per report: its label and the meta or
 * summary values named in compare), then each report as a section titled "<its title>: <label>";
 * notes that the last section repeats are printed there only, once. CSV: one table, the label in a
 * first column label_key, the header once (the reports must share their columns). JSON:
 * {"<labels_key>": [labels...], "<set_key>": [each report's own JSON object...]}.
 */
typedef struct abl_report_compare {
    const char *key;      /* a meta or summary key of the reports ("row_fraction") */
    const char *header;   /* its overview column header ("row %") */
} abl_report_compare;

typedef struct abl_report_set {
    const abl_report *const *reports;
    const char *const *labels;         /* one per report ("bf16") */
    size_t n;                          /* at least 1 */
    const char *title;                 /* the overview's title */
    const char *label_key, *label_header; /* "dtype": CSV column and overview column */
    const char *labels_key, *set_key;  /* JSON: "dtypes" (the labels), "analyses" (the objects) */
    const abl_report_compare *compare; /* the overview's columns after the label (ncompare may be 0) */
    size_t ncompare;
} abl_report_set;

ABL_API abl_status abl_report_set_write(const abl_report_set *s, abl_output fmt, size_t width, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
