/* alibi-blind: the paper's published values (the CSV files of tables/published, transcribed as printed).
 * They are data to compare computed values against (`reproduce`), never output as computed
 * values. The transcription is compiled into the library; a directory can replace it. */
#ifndef ABL_PUBLISHED_H
#define ABL_PUBLISHED_H

#include "abl/core/export.h"

#include <stddef.h>
#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed CSV file (RFC 4180): a header row and `rows` data rows of `cols` fields each. */
typedef struct abl_csv {
    size_t rows, cols;
    char **header;   /* cols names */
    char **cells;    /* rows * cols fields, row-major */
} abl_csv;

/*
 * Parse CSV text: fields separated by ',', optionally quoted with '"' ("" inside quotes is a quote),
 * records ended by LF or CRLF (the last one may be unterminated). Every record must have as many
 * fields as the header; blank records are errors. ABL_ERR_PARSE on malformed text, and then `*msg`
 * (if not NULL) names the problem ("line 3: 9 fields, expected 10").
 */
ABL_API abl_status abl_csv_parse(const char *text, size_t len, abl_csv *out, char **msg);
ABL_API void abl_csv_free(abl_csv *csv);

/* Column index of `name`, or -1. */
ABL_API long abl_csv_column(const abl_csv *csv, const char *name);
/* Field of data row `row` in column `name`, or NULL (no such column or row). */
ABL_API const char *abl_csv_get(const abl_csv *csv, size_t row, const char *name);
/* First data row whose column `name` equals `value`, or -1. */
ABL_API long abl_csv_find(const abl_csv *csv, const char *name, const char *value);

/* The transcribed files, in a fixed order. */
typedef enum abl_published_file {
    ABL_PUB_TABLE1 = 0, ABL_PUB_TABLE4 = 1, ABL_PUB_TABLE5 = 2, ABL_PUB_TABLE8 = 3, ABL_PUB_CLAIMS = 4,
    ABL_PUB_COUNT = 5
} abl_published_file;

/* "table1.csv", ..., "claims.csv". */
ABL_API const char *abl_published_file_name(abl_published_file f);

/* The compiled-in bytes of a file, exactly as in tables/published/ (len set when not NULL). */
ABL_API const char *abl_published_builtin_text(abl_published_file f, size_t *len);

typedef struct abl_published {
    char *source;                /* "built-in" or the directory it was read from (malloc'd, whole) */
    abl_csv files[ABL_PUB_COUNT];
} abl_published;

/*
 * Limits of a published directory, so that reading it has a bounded cost: each file is a regular
 * file (not a fifo, device or directory; symlinks are followed) of at most ABL_PUBLISHED_MAX_BYTES,
 * and every field is at most ABL_PUBLISHED_MAX_FIELD bytes (a printed number or name; a longer field
 * is refused, never cut).
 */
#define ABL_PUBLISHED_MAX_BYTES (16L * 1024 * 1024)
#define ABL_PUBLISHED_MAX_FIELD 100

/*
 * Parse and check the text of one published file into p->files[f] (what abl_published_load_dir does
 * for each file): columns, no empty table, no repeated header or key (O(n log n)), field sizes.
 */
ABL_API abl_status abl_published_parse(abl_published_file f, const char *text, size_t len, abl_published *p, char **msg);

/*
 * Load the compiled-in transcription, or read DIR/table1.csv ... DIR/claims.csv. Each file must have
 * the columns reproduce relies on (table1: model, window, layers, heads, slopes, delta_1, delta_H;
 * table4: name, format, value; table5: model, size, window, heads; table8: name, d1..d9;
 * claims: id, printed_value). ABL_ERR_IO (unreadable file) or ABL_ERR_PARSE, with `*msg` naming
 * the file and the problem.
 */
ABL_API abl_status abl_published_builtin(abl_published *out, char **msg);
ABL_API abl_status abl_published_load_dir(const char *dir, abl_published *out, char **msg);
ABL_API void abl_published_free(abl_published *p);

#ifdef __cplusplus
}
#endif
#endif
