/* alibi-blind: the paper's published values — a small RFC 4180 reader and the compiled-in
 * transcription (see include/abl/published.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/stat.h>
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
static abl_status read_field(const char *text, size_t len, size_t *i, size_t *line, char *buf, size_t *n, char **msg)
{
    size_t k = *i, m = 0;
    if (k < len && text[k] == '"') {
        size_t open_line = *line;
        k++;
        for (;;) {
            if (k >= len) {
                abl_set_error(msg, "line %zu: unterminated quoted field", open_line);
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
            abl_set_error(msg, "line %zu: text after a closing quote", *line);
            return ABL_ERR_PARSE;
        }
    } else {
        while (k < len && text[k] != ',' && text[k] != '\n' && text[k] != '\r') {
            if (text[k] == '"') {
                abl_set_error(msg, "line %zu: quote inside an unquoted field", *line);
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

/* One record starting at text[*i] (its fields pushed onto all, counted in *fields), up to and past its
 * end: LF, CRLF or the end of the text. buf: room for len + 1 bytes. */
static abl_status read_record(const char *text, size_t len, size_t *i, size_t *line, char *buf, field_list *all,
                              size_t *fields, char **msg)
{
    if (text[*i] == '\n' || text[*i] == '\r') {
        abl_set_error(msg, "line %zu: blank line", *line);
        return ABL_ERR_PARSE;
    }
    abl_status st;
    for (;;) {
        size_t n = 0;
        if ((st = read_field(text, len, i, line, buf, &n, msg)) != ABL_OK)
            return st;
        char *copy = malloc(n + 1);
        if (copy == NULL || push(all, copy) != 0) {
            free(copy);
            return ABL_ERR_NO_MEMORY;
        }
        memcpy(copy, buf, n + 1);
        (*fields)++;
        if (*i < len && text[*i] == ',') {
            (*i)++;
            continue;
        }
        break;
    }
    if (*i < len && text[*i] == '\r') {
        if (*i + 1 >= len || text[*i + 1] != '\n') {
            abl_set_error(msg, "line %zu: carriage return without line feed", *line);
            return ABL_ERR_PARSE;
        }
        (*i)++;
    }
    if (*i < len)
        (*i)++;
    (*line)++;
    return ABL_OK;
}

/* The fields read (a header and rows of cols fields each) become out's; all is emptied. */
static abl_status csv_take(abl_csv *out, field_list *all, size_t cols)
{
    out->cols = cols;
    out->rows = all->n / cols - 1;
    out->header = malloc(cols * sizeof *out->header);
    out->cells = malloc((out->rows * cols + 1) * sizeof *out->cells);
    if (out->header == NULL || out->cells == NULL) {
        free(out->header);
        free(out->cells);
        memset(out, 0, sizeof *out);
        free_list(all);
        return ABL_ERR_NO_MEMORY;
    }
    memcpy(out->header, all->items, cols * sizeof *out->header);
    memcpy(out->cells, all->items + cols, out->rows * cols * sizeof *out->cells);
    free(all->items);
    return ABL_OK;
}

abl_status abl_csv_parse(const char *text, size_t len, abl_csv *out, char **msg)
{
    if (text == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (len == 0) {
        abl_set_error(msg, "empty file");
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
        if ((st = read_record(text, len, &i, &line, buf, &all, &fields, msg)) != ABL_OK)
            break;
        if (cols == 0) {
            cols = fields;
        } else if (fields != cols) {
            abl_set_error(msg, "line %zu: %zu fields, the header has %zu", record_line, fields, cols);
            st = ABL_ERR_PARSE;
        }
    }
    free(buf);
    if (st != ABL_OK) {
        free_list(&all);
        return st;
    }
    return csv_take(out, &all, cols);
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
    free(p->source);
    p->source = NULL;
}

/* Rows ordered by their key (and second key), then by position: equal keys become neighbours. */
typedef struct {
    const abl_csv *csv;
    long k1, k2;
} key_order;

/* a before b in key order: the comparison takes its key as an argument (no static key: the parser
 * runs from several threads at once; C11's qsort has no context argument, hence the merge sort). */
static int row_before(const key_order *k, size_t a, size_t b)
{
    const abl_csv *c = k->csv;
    int d = strcmp(c->cells[a * c->cols + (size_t)k->k1], c->cells[b * c->cols + (size_t)k->k1]);
    if (d == 0 && k->k2 >= 0)
        d = strcmp(c->cells[a * c->cols + (size_t)k->k2], c->cells[b * c->cols + (size_t)k->k2]);
    return d != 0 ? d < 0 : a < b;
}

/* Bottom-up merge sort of idx[0..n) by key (tmp: n scratch entries); O(n log n). */
static void sort_rows(const key_order *k, size_t *idx, size_t *tmp, size_t n)
{
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                tmp[o++] = row_before(k, idx[j], idx[i]) ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[o++] = idx[i++];
            while (j < hi)
                tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, n * sizeof *idx);
    }
}

static int same_key(const abl_csv *c, size_t a, size_t b, long k1, long k2)
{
    return strcmp(c->cells[a * c->cols + (size_t)k1], c->cells[b * c->cols + (size_t)k1]) == 0 &&
           (k2 < 0 || strcmp(c->cells[a * c->cols + (size_t)k2], c->cells[b * c->cols + (size_t)k2]) == 0);
}

abl_status abl_published_parse(abl_published_file f, const char *text, size_t len, abl_published *p, char **msg)
{
    if ((unsigned)f >= ABL_PUB_COUNT || text == NULL || p == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_csv_free(&p->files[f]);
    char *why = NULL;
    abl_status st = abl_csv_parse(text, len, &p->files[f], msg != NULL ? &why : NULL);
    if (st == ABL_ERR_PARSE)
        abl_set_error(msg, "%s: %s", file_names[f], why != NULL ? why : abl_status_message(st));
    free(why);
    if (st != ABL_OK)
        return st;
    const abl_csv *csv = &p->files[f];
    for (int c = 0; required[f][c] != NULL; c++) {
        if (abl_csv_column(csv, required[f][c]) < 0) {
            if (msg != NULL)
                abl_set_error(msg, "%s: no column '%s'", file_names[f], required[f][c]);
            return ABL_ERR_PARSE;
        }
    }
    for (size_t i = 0; i < csv->rows * csv->cols; i++) {
        if (strlen(csv->cells[i]) > ABL_PUBLISHED_MAX_FIELD) {
            if (msg != NULL)
                abl_set_error(msg, "%s: line %zu: a field longer than %d bytes", file_names[f], i / csv->cols + 2,
                         ABL_PUBLISHED_MAX_FIELD);
            return ABL_ERR_PARSE;
        }
    }
    /* Each published item once: a repeated row (or a repeated header) would be checked twice or
     * mistaken for data, and an empty table would make every documented difference look stale. */
    const char *key = required[f][0];
    long k1 = abl_csv_column(csv, key), k2 = f == ABL_PUB_TABLE4 ? abl_csv_column(csv, "format") : -1;
    if (csv->rows == 0) {
        if (msg != NULL)
            abl_set_error(msg, "%s: no rows", file_names[f]);
        return ABL_ERR_PARSE;
    }
    for (size_t r = 0; r < csv->rows; r++) {
        if (strcmp(abl_csv_get(csv, r, key), key) == 0) {
            if (msg != NULL)
                abl_set_error(msg, "%s: line %zu repeats the header", file_names[f], r + 2);
            return ABL_ERR_PARSE;
        }
    }
    /* Repeated keys: sort the row indices by key (O(n log n)); the first repeat in file order is the
     * smallest second index of any group of equal keys, repeating the group's first row. */
    size_t *idx = malloc(2 * csv->rows * sizeof *idx);
    if (idx == NULL)
        return ABL_ERR_NO_MEMORY;
    for (size_t r = 0; r < csv->rows; r++)
        idx[r] = r;
    const key_order order = {csv, k1, k2};
    sort_rows(&order, idx, idx + csv->rows, csv->rows);
    size_t best_r = SIZE_MAX, best_q = 0;
    for (size_t i = 1; i < csv->rows; i++) {
        if (same_key(csv, idx[i - 1], idx[i], k1, k2) && (i < 2 || !same_key(csv, idx[i - 2], idx[i], k1, k2)) &&
            idx[i] < best_r) {
            best_r = idx[i];
            best_q = idx[i - 1];
        }
    }
    free(idx);
    if (best_r != SIZE_MAX) {
        if (msg != NULL)
            abl_set_error(msg, "%s: line %zu repeats '%s%s%s' of line %zu", file_names[f], best_r + 2,
                     abl_csv_get(csv, best_r, key), k2 >= 0 ? " " : "", k2 >= 0 ? abl_csv_get(csv, best_r, "format") : "",
                     best_q + 2);
        return ABL_ERR_PARSE;
    }
    return ABL_OK;
}

static abl_status load_one(abl_published *p, abl_published_file f, const char *text, size_t len, char **msg)
{
    return abl_published_parse(f, text, len, p, msg);
}

abl_status abl_published_builtin(abl_published *out, char **msg)
{
    if (out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if ((out->source = strdup("built-in")) == NULL)
        return ABL_ERR_NO_MEMORY;
    for (int f = 0; f < ABL_PUB_COUNT; f++) {
        size_t len = 0;
        const char *text = abl_published_builtin_text((abl_published_file)f, &len);
        abl_status st = text == NULL ? ABL_ERR_PARSE : load_one(out, (abl_published_file)f, text, len, msg);
        if (st != ABL_OK) {
            abl_published_free(out);
            return st;
        }
    }
    return ABL_OK;
}

/* A regular file of at most ABL_PUBLISHED_MAX_BYTES, read whole. *why names a refusal. */
static abl_status read_file(const char *path, char **text, size_t *len, const char **why)
{
    *why = NULL;
    /* O_NONBLOCK: opening a fifo must not wait for a writer (it is refused just below). */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return ABL_ERR_IO;
    struct stat st_;
    if (fstat(fd, &st_) != 0) {
        close(fd);
        return ABL_ERR_IO;
    }
    if (!S_ISREG(st_.st_mode)) {
        close(fd);
        *why = "not a regular file";
        return ABL_ERR_PARSE;
    }
    if (st_.st_size > ABL_PUBLISHED_MAX_BYTES) {
        close(fd);
        *why = "larger than 16 MiB";
        return ABL_ERR_PARSE;
    }
    size_t cap = (size_t)st_.st_size + 2, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL) {
        close(fd);
        return ABL_ERR_NO_MEMORY;
    }
    abl_status st = ABL_OK;
    /* Read at most one byte past the size fstat gave: a file that grows meanwhile is refused. */
    while (n < cap - 1) {
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            st = ABL_ERR_IO;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (st == ABL_OK && n > (size_t)st_.st_size) {
        *why = "changed while it was read";
        st = ABL_ERR_PARSE;
    }
    if (st != ABL_OK) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return ABL_OK;
}

abl_status abl_published_load_dir(const char *dir, abl_published *out, char **msg)
{
    if (dir == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if ((out->source = strdup(dir)) == NULL)
        return ABL_ERR_NO_MEMORY;
    for (int f = 0; f < ABL_PUB_COUNT; f++) {
        /* The whole path, however long the directory's name; messages name the file, not the directory. */
        char *path = malloc(strlen(dir) + strlen(file_names[f]) + 2);
        if (path == NULL) {
            abl_published_free(out);
            return ABL_ERR_NO_MEMORY;
        }
        sprintf(path, "%s/%s", dir, file_names[f]);
        char *text = NULL;
        size_t len = 0;
        const char *why = NULL;
        abl_status st = read_file(path, &text, &len, &why);
        free(path);
        if (st == ABL_ERR_IO && msg != NULL)
            abl_set_error(msg, "cannot read %s: %s", file_names[f], strerror(errno));
        if (st == ABL_ERR_PARSE && why != NULL && msg != NULL)
            abl_set_error(msg, "%s: %s", file_names[f], why);
        if (st == ABL_OK) {
            st = load_one(out, (abl_published_file)f, text, len, msg);
            free(text);
        }
        if (st != ABL_OK) {
            abl_published_free(out);
            return st;
        }
    }
    return ABL_OK;
}
