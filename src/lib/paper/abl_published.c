/* alibi-blind: the paper's published values — a small RFC 4180 reader and the compiled-in
 * transcription (see include/abl/published.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/paper/published.h"
#include "abl_internal.h"
#include "paper/abl_published_data.h"

/* ---------------------------------------------------------------- CSV */

typedef struct field_list {
    char **items;
    size_t n, cap;
} field_list;

static int push(field_list *l, char *s)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? 2 * l->cap : 32;
        char **p = realloc(l->items, ncap * sizeof *p);
        if (p == NULL)
            return -1;
        l->items = p;
        l->cap = ncap;
    }
    l->items[l->n++] = s;
    return 0;
}

static void free_list(field_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

void abl_csv_free(abl_csv *csv)
{
    if (csv == NULL)
        return;
    if (csv->header != NULL)
        for (size_t i = 0; i < csv->cols; i++)
            free(csv->header[i]);
    if (csv->cells != NULL)
        for (size_t i = 0; i < csv->rows * csv->cols; i++)
            free(csv->cells[i]);
    free(csv->header);
    free(csv->cells);
    memset(csv, 0, sizeof *csv);
}



/* One field starting at text[*i]; the unquoted text goes to buf (room for len + 1 bytes). */
static abl_status read_field(const char *text, size_t len, size_t *i, size_t *line, char *buf, size_t *n, char *err,
                             size_t errlen)
{
    size_t k = *i, m = 0;
    if (k < len && text[k] == '"') {
        size_t open_line = *line;
        k++;
        for (;;) {
            if (k >= len) {
                abl_set_error(err, errlen, "line %zu: unterminated quoted field", open_line);
                return ABL_ERR_PARSE;
            }
            if (text[k] == '"') {
                if (k + 1 < len && text[k + 1] == '"') {
                    buf[m++] = '"';
                    k += 2;
                    continue;
                }
                k++;
                break;
            }
            if (text[k] == '\n')
                (*line)++;
            buf[m++] = text[k++];
        }
        if (k < len && text[k] != ',' && text[k] != '\n' && text[k] != '\r') {
            abl_set_error(err, errlen, "line %zu: text after a closing quote", *line);
            return ABL_ERR_PARSE;
        }
    } else {
        while (k < len && text[k] != ',' && text[k] != '\n' && text[k] != '\r') {
            if (text[k] == '"') {
                abl_set_error(err, errlen, "line %zu: quote inside an unquoted field", *line);
                return ABL_ERR_PARSE;
            }
            buf[m++] = text[k++];
        }
    }
    buf[m] = '\0';
    *i = k;
    *n = m;
    return ABL_OK;
}

abl_status abl_csv_parse(const char *text, size_t len, abl_csv *out, char *err, size_t errlen)
{
    if (text == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (len == 0) {
        abl_set_error(err, errlen, "empty file");
        return ABL_ERR_PARSE;
    }
    char *buf = malloc(len + 1);
    if (buf == NULL)
        return ABL_ERR_NO_MEMORY;
    field_list all = {NULL, 0, 0};
    size_t cols = 0, line = 1, i = 0;
    abl_status st = ABL_OK;
    while (i < len && st == ABL_OK) {
        size_t record_line = line, fields = 0;
        if (text[i] == '\n' || text[i] == '\r') {
            abl_set_error(err, errlen, "line %zu: blank line", line);
            st = ABL_ERR_PARSE;
            break;
        }
        for (;;) {
            size_t n = 0;
            if ((st = read_field(text, len, &i, &line, buf, &n, err, errlen)) != ABL_OK)
                break;
            char *copy = malloc(n + 1);
            if (copy == NULL || push(&all, copy) != 0) {
                free(copy);
                st = ABL_ERR_NO_MEMORY;
                break;
            }
            memcpy(copy, buf, n + 1);
            fields++;
            if (i < len && text[i] == ',') {
                i++;
                continue;
            }
            break;
        }
        if (st != ABL_OK)
            break;
        /* End of record: LF, CRLF or the end of the text. */
        if (i < len && text[i] == '\r') {
            if (i + 1 >= len || text[i + 1] != '\n') {
                abl_set_error(err, errlen, "line %zu: carriage return without line feed", line);
                st = ABL_ERR_PARSE;
                break;
            }
            i++;
        }
        if (i < len)
            i++;
        line++;
        if (cols == 0) {
            cols = fields;
        } else if (fields != cols) {
            abl_set_error(err, errlen, "line %zu: %zu fields, the header has %zu", record_line, fields, cols);
            st = ABL_ERR_PARSE;
        }
    }
    free(buf);
    if (st != ABL_OK) {
        free_list(&all);
        return st;
    }
    out->cols = cols;
    out->rows = all.n / cols - 1;
    out->header = malloc(cols * sizeof *out->header);
    out->cells = malloc((out->rows * cols + 1) * sizeof *out->cells);
    if (out->header == NULL || out->cells == NULL) {
        free(out->header);
        free(out->cells);
        memset(out, 0, sizeof *out);
        free_list(&all);
        return ABL_ERR_NO_MEMORY;
    }
    memcpy(out->header, all.items, cols * sizeof *out->header);
    memcpy(out->cells, all.items + cols, out->rows * cols * sizeof *out->cells);
    free(all.items);
    return ABL_OK;
}

long abl_csv_column(const abl_csv *csv, const char *name)
{
    if (csv == NULL || name == NULL)
        return -1;
    for (size_t c = 0; c < csv->cols; c++)
        if (strcmp(csv->header[c], name) == 0)
            return (long)c;
    return -1;
}

const char *abl_csv_get(const abl_csv *csv, size_t row, const char *name)
{
    long c = abl_csv_column(csv, name);
    if (c < 0 || row >= csv->rows)
        return NULL;
    return csv->cells[row * csv->cols + (size_t)c];
}

long abl_csv_find(const abl_csv *csv, const char *name, const char *value)
{
    long c = abl_csv_column(csv, name);
    if (c < 0 || value == NULL)
        return -1;
    for (size_t r = 0; r < csv->rows; r++)
        if (strcmp(csv->cells[r * csv->cols + (size_t)c], value) == 0)
            return (long)r;
    return -1;
}

/* ---------------------------------------------------------------- the transcription */

static const char *const file_names[ABL_PUB_COUNT] = {"table1.csv", "table4.csv", "table5.csv", "table8.csv",
                                                      "claims.csv"};

/* Columns reproduce reads; a transcription without them cannot be compared. */
static const char *const required[ABL_PUB_COUNT][11] = {
    {"model", "window", "layers", "heads", "slopes", "delta_1", "delta_H", NULL},
    {"name", "format", "value", NULL},
    {"model", "size", "window", "heads", NULL},
    {"name", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", NULL},
    {"id", "printed_value", NULL},
};

const char *abl_published_file_name(abl_published_file f)
{
    return (unsigned)f < ABL_PUB_COUNT ? file_names[f] : NULL;
}

const char *abl_published_builtin_text(abl_published_file f, size_t *len)
{
    const char *name = abl_published_file_name(f);
    for (size_t i = 0; name != NULL && i < abl_embedded_published_count; i++) {
        if (strcmp(abl_embedded_published[i].name, name) == 0) {
            if (len != NULL)
                *len = abl_embedded_published[i].len;
            return (const char *)abl_embedded_published[i].bytes;
        }
    }
    return NULL;
}

void abl_published_free(abl_published *p)
{
    if (p == NULL)
        return;
    for (int f = 0; f < ABL_PUB_COUNT; f++)
        abl_csv_free(&p->files[f]);
}

static abl_status load_one(abl_published *p, abl_published_file f, const char *text, size_t len, char *err,
                           size_t errlen)
{
    char why[256] = "";
    abl_status st = abl_csv_parse(text, len, &p->files[f], why, sizeof why);
    if (st == ABL_ERR_PARSE && err != NULL)
        snprintf(err, errlen, "%s: %s", file_names[f], why);
    if (st != ABL_OK)
        return st;
    for (int c = 0; required[f][c] != NULL; c++) {
        if (abl_csv_column(&p->files[f], required[f][c]) < 0) {
            if (err != NULL)
                snprintf(err, errlen, "%s: no column '%s'", file_names[f], required[f][c]);
            return ABL_ERR_PARSE;
        }
    }
    /* Each published item once: a repeated row (or a repeated header) would be checked twice or
     * mistaken for data, and an empty table would make every documented difference look stale. */
    const abl_csv *csv = &p->files[f];
    const char *key = required[f][0], *key2 = f == ABL_PUB_TABLE4 ? "format" : NULL;
    if (csv->rows == 0) {
        if (err != NULL)
            snprintf(err, errlen, "%s: no rows", file_names[f]);
        return ABL_ERR_PARSE;
    }
    for (size_t r = 0; r < csv->rows; r++) {
        const char *k = abl_csv_get(csv, r, key), *k2 = key2 ? abl_csv_get(csv, r, key2) : "";
        if (strcmp(k, key) == 0) {
            if (err != NULL)
                snprintf(err, errlen, "%s: line %zu repeats the header", file_names[f], r + 2);
            return ABL_ERR_PARSE;
        }
        for (size_t q = 0; q < r; q++) {
            if (strcmp(abl_csv_get(csv, q, key), k) == 0 && (key2 == NULL || strcmp(abl_csv_get(csv, q, key2), k2) == 0)) {
                if (err != NULL)
                    snprintf(err, errlen, "%s: line %zu repeats '%s%s%s' of line %zu", file_names[f], r + 2, k,
                             key2 ? " " : "", k2, q + 2);
                return ABL_ERR_PARSE;
            }
        }
    }
    return ABL_OK;
}

abl_status abl_published_builtin(abl_published *out, char *err, size_t errlen)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    snprintf(out->source, sizeof out->source, "built-in");
    for (int f = 0; f < ABL_PUB_COUNT; f++) {
        size_t len = 0;
        const char *text = abl_published_builtin_text((abl_published_file)f, &len);
        abl_status st = text == NULL ? ABL_ERR_PARSE : load_one(out, (abl_published_file)f, text, len, err, errlen);
        if (st != ABL_OK) {
            abl_published_free(out);
            return st;
        }
    }
    return ABL_OK;
}

static abl_status read_file(const char *path, char **text, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return ABL_ERR_IO;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    abl_status st = ABL_OK;
    for (;;) {
        if (n + 4096 > cap) {
            size_t ncap = cap ? cap * 2 : 8192;
            char *p = realloc(buf, ncap);
            if (p == NULL) {
                st = ABL_ERR_NO_MEMORY;
                break;
            }
            buf = p;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        if (got == 0) {
            if (ferror(fp))
                st = ABL_ERR_IO;
            break;
        }
    }
    fclose(fp);
    if (st != ABL_OK) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return ABL_OK;
}

abl_status abl_published_load_dir(const char *dir, abl_published *out, char *err, size_t errlen)
{
    if (dir == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    snprintf(out->source, sizeof out->source, "%s", dir);
    for (int f = 0; f < ABL_PUB_COUNT; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, file_names[f]);
        char *text = NULL;
        size_t len = 0;
        abl_status st = read_file(path, &text, &len);
        if (st == ABL_ERR_IO && err != NULL)
            snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        if (st == ABL_OK) {
            st = load_one(out, (abl_published_file)f, text, len, err, errlen);
            free(text);
        }
        if (st != ABL_OK) {
            abl_published_free(out);
            return st;
        }
    }
    return ABL_OK;
}
