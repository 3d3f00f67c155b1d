/* alibi-blind: the report writer (see include/abl/report.h).
 *
 * A report is stored as plain copied strings; abl_report_write renders the whole report into a
 * memory buffer first and writes it with one fwrite, so an allocation failure never leaves half
 * a report on the stream and a write failure is detected in one place. */
#include "abl/report/report.h"
#include "abl_internal.h"
#include "report/abl_report_internal.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- output format names */

static const struct {
    const char *name;
    abl_output out;
} output_names[] = {
    {"text", ABL_OUT_TEXT}, {"markdown", ABL_OUT_MARKDOWN}, {"md", ABL_OUT_MARKDOWN},
    {"csv", ABL_OUT_CSV},   {"json", ABL_OUT_JSON},         {"latex", ABL_OUT_LATEX},
    {"tex", ABL_OUT_LATEX},
};

abl_status abl_output_parse(const char *text, abl_output *out)
{
    if (text == NULL || out == NULL) return ABL_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < sizeof output_names / sizeof output_names[0]; i++) {
        if (strcasecmp(text, output_names[i].name) == 0) {
            *out = output_names[i].out;
            return ABL_OK;
        }
    }
    return ABL_ERR_UNKNOWN_OUTPUT;
}

const char *abl_output_name(abl_output o)
{
    switch (o) {
    case ABL_OUT_TEXT: return "text";
    case ABL_OUT_MARKDOWN: return "markdown";
    case ABL_OUT_CSV: return "csv";
    case ABL_OUT_JSON: return "json";
    case ABL_OUT_LATEX: return "latex";
    }
    return NULL;
}

/* ---------------------------------------------------------------- the report */

typedef struct kv_line {
    char *key, *label, *text, *json; /* json may be NULL */
} kv_line;

typedef struct column {
    char *key, *header;
    abl_align align;
    bool explain;   /* footnoted in a text table that does not fit (abl_report_column_explains) */
    bool data_only; /* JSON and CSV only (abl_report_column_data_only) */
    bool new_panel; /* starts a text panel when the table is split (abl_report_column_new_panel) */
    bool integer;   /* an exact integer that may exceed 2^53: JSON/CSV `key` and `key_exact` (abl_report_column_integer) */
} column;

typedef struct cell {
    char *text, *json, *latex; /* json, latex may be NULL */
} cell;

typedef struct row {
    cell *cells;
    size_t n, cap;
} row;

struct abl_report {
    char *title, *json_key;
    bool json_rows_only; /* JSON is the bare array of row objects */
    kv_line *meta;
    size_t nmeta, capmeta;
    kv_line *summary;
    size_t nsummary, capsummary;
    column *cols;
    size_t ncols, capcols;
    row *rows;
    size_t nrows, caprows;
    char **notes;
    size_t nnotes, capnotes;
};

/* strdup that tolerates NULL (NULL in, NULL out); *oom is set when the copy itself fails. */
static char *dup_opt(const char *s, bool *oom)
{
    if (s == NULL) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p == NULL) {
        *oom = true;
        return NULL;
    }
    memcpy(p, s, n);
    return p;
}

/* Make room for one more element in a growable array; returns the (possibly moved) array, or
 * NULL on allocation failure with the old array untouched. Returning the pointer instead of
 * writing through a void ** keeps this free of type-punning. */
static void *grow(void *items, size_t *cap, size_t n, size_t elsize)
{
    if (n < *cap) return items;
    size_t ncap = *cap ? *cap * 2 : 8;
    if (ncap > ((size_t)-1) / elsize) return NULL;
    void *p = realloc(items, ncap * elsize);
    if (p == NULL) return NULL;
    *cap = ncap;
    return p;
}

abl_report *abl_report_new(const char *title, const char *json_key)
{
    if (title == NULL || json_key == NULL) return NULL;
    abl_report *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    bool oom = false;
    r->title = dup_opt(title, &oom);
    r->json_key = dup_opt(json_key, &oom);
    if (oom) {
        abl_report_free(r);
        return NULL;
    }
    return r;
}

static void free_kv(kv_line *l)
{
    free(l->key);
    free(l->label);
    free(l->text);
    free(l->json);
}

void abl_report_free(abl_report *r)
{
    if (r == NULL) return;
    for (size_t i = 0; i < r->nmeta; i++) free_kv(&r->meta[i]);
    for (size_t i = 0; i < r->nsummary; i++) free_kv(&r->summary[i]);
    for (size_t i = 0; i < r->ncols; i++) {
        free(r->cols[i].key);
        free(r->cols[i].header);
    }
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t j = 0; j < r->rows[i].n; j++) {
            free(r->rows[i].cells[j].text);
            free(r->rows[i].cells[j].json);
            free(r->rows[i].cells[j].latex);
        }
        free(r->rows[i].cells);
    }
    for (size_t i = 0; i < r->nnotes; i++) free(r->notes[i]);
    free(r->meta);
    free(r->summary);
    free(r->cols);
    free(r->rows);
    free(r->notes);
    free(r->title);
    free(r->json_key);
    free(r);
}

/* An empty verbatim JSON token can never be valid JSON, so it is rejected up front. */
static bool bad_override(const char *json) { return json != NULL && json[0] == '\0'; }

static abl_status add_kv(kv_line **items, size_t *n, size_t *cap, const char *key, const char *label,
                         const char *text, const char *json)
{
    if (key == NULL || label == NULL || text == NULL || bad_override(json))
        return ABL_ERR_INVALID_ARGUMENT;
    kv_line *grown = grow(*items, cap, *n, sizeof **items);
    if (grown == NULL) return ABL_ERR_NO_MEMORY;
    *items = grown;
    bool oom = false;
    kv_line l = {dup_opt(key, &oom), dup_opt(label, &oom), dup_opt(text, &oom), dup_opt(json, &oom)};
    if (oom) {
        free_kv(&l);
        return ABL_ERR_NO_MEMORY;
    }
    (*items)[(*n)++] = l;
    return ABL_OK;
}

abl_status abl_report_meta(abl_report *r, const char *key, const char *label, const char *text, const char *json)
{
    if (r == NULL) return ABL_ERR_INVALID_ARGUMENT;
    return add_kv(&r->meta, &r->nmeta, &r->capmeta, key, label, text, json);
}

abl_status abl_report_summary(abl_report *r, const char *key, const char *label, const char *text,
                              const char *json)
{
    if (r == NULL) return ABL_ERR_INVALID_ARGUMENT;
    return add_kv(&r->summary, &r->nsummary, &r->capsummary, key, label, text, json);
}

/*
 * The JSON keys that hold an exact integer which can exceed 2^53 (docs/schema/README.md, "One name, one
 * unit, one type"): wherever a report uses one of these keys, as a column or a meta/summary line, JSON and
 * CSV carry `key` (number, null above 2^53) and `key_exact` (string), so that no builder can give such a
 * field a type that depends on its value.
 */
static const char *const integer_keys[] = {
    "context", "window", "delta", "delta_ieee", "delta_exponent", "delta_softcap_min", "delta_softcap_max",
    "delta_logit_lo", "delta_logit_hi", "delta_1", "delta_h", "delta_1_ieee", "delta_h_ieee", "d1", "d2", "d3",
    "d4", "d5", "d6", "d7", "d8", "d9", "first_blind", "first_blind_1", "first_blind_h", "first_influence_zero",
    "row_zeros", "matrix_zeros", "middle_row_zeros", "row_influence_zeros", "matrix_influence_zeros",
    "forward_first_blind", "gradient_only_row", "gradient_only_matrix", "seed", "shift",
};

static bool integer_key(const char *key)
{
    for (size_t i = 0; i < sizeof integer_keys / sizeof integer_keys[0]; i++)
        if (strcmp(key, integer_keys[i]) == 0) return true;
    return false;
}

/*
 * The JSON keys that hold a real number (docs/schema/README.md, "One name, one unit, one type"): a fraction,
 * a mass, a distance between distributions, a slope, a margin, a logit, a clamp, an error bound. Their value
 * may happen to be exact (a fraction 0 or 1, a clamp -87), and a builder's decimal spelling of it is then an
 * integer literal; JSON always writes these with a fraction or exponent part (`0.0`, `1.0`, `-87.0`), so that
 * a reader's type (Python's float) never depends on the value. Keys ending in a suffix of real_suffixes are
 * real too, as are the per-head curve columns h1, h2, ... of the figures.
 */
static const char *const real_keys[] = {
    "slope", "tau", "mass_lost", "middle_mass_lost", "tv_distance", "theta", "x", "tolerance", "angle_error",
    "inv_freq", "linear", "value", "rn_value", "paper_value", "paper_difference", "clamp", "clamp_next", "logit",
    "logit_budget", "base", "base_fp32", "factor", "min_logit_half", "min_logit_last", "shift_first",
    "shift_interior", "qk_shift_first", "qk_shift_pair", "qk_exact_logit_0", "effective_error",
    "cos_sin_error", "attention_factor",
};
static const char *const real_suffixes[] = {"_fraction", "_margin", "_error", "_error_max", "_bound",
                                            "_error_first", "_error_keys", "_percent"};

static bool real_key(const char *key)
{
    for (size_t i = 0; i < sizeof real_keys / sizeof real_keys[0]; i++)
        if (strcmp(key, real_keys[i]) == 0) return true;
    size_t n = strlen(key);
    for (size_t i = 0; i < sizeof real_suffixes / sizeof real_suffixes[0]; i++) {
        size_t m = strlen(real_suffixes[i]);
        if (n > m && strcmp(key + n - m, real_suffixes[i]) == 0) return true;
    }
    /* h1, h2, ...: a figure's curve per head (its fraction at each point). */
    if (key[0] != 'h' || key[1] == '\0') return false;
    for (size_t i = 1; i < n; i++)
        if (key[i] < '0' || key[i] > '9') return false;
    return true;
}

const char *abl_json_real_suffix(const char *token)
{
    bool number = token != NULL && (token[0] == '-' || (token[0] >= '0' && token[0] <= '9'));
    return number && strpbrk(token, ".eE") == NULL ? ".0" : "";
}

abl_status abl_report_column(abl_report *r, const char *key, const char *header, abl_align align)
{
    if (r == NULL || key == NULL || header == NULL) return ABL_ERR_INVALID_ARGUMENT;
    if (align != ABL_ALIGN_LEFT && align != ABL_ALIGN_RIGHT) return ABL_ERR_INVALID_ARGUMENT;
    column *cols = grow(r->cols, &r->capcols, r->ncols, sizeof *r->cols);
    if (cols == NULL) return ABL_ERR_NO_MEMORY;
    r->cols = cols;
    bool oom = false;
    column c = {dup_opt(key, &oom), dup_opt(header, &oom), align, false, false, false, integer_key(key)};
    if (oom) {
        free(c.key);
        free(c.header);
        return ABL_ERR_NO_MEMORY;
    }
    r->cols[r->ncols++] = c;
    return ABL_OK;
}

abl_status abl_report_column_explains(abl_report *r)
{
    if (r == NULL || r->ncols == 0) return ABL_ERR_INVALID_ARGUMENT;
    r->cols[r->ncols - 1].explain = true;
    return ABL_OK;
}

abl_status abl_report_column_data_only(abl_report *r)
{
    if (r == NULL || r->ncols == 0) return ABL_ERR_INVALID_ARGUMENT;
    r->cols[r->ncols - 1].data_only = true;
    return ABL_OK;
}

abl_status abl_report_column_integer(abl_report *r)
{
    if (r == NULL || r->ncols == 0) return ABL_ERR_INVALID_ARGUMENT;
    r->cols[r->ncols - 1].integer = true;
    return ABL_OK;
}

abl_status abl_report_column_new_panel(abl_report *r)
{
    if (r == NULL || r->ncols == 0) return ABL_ERR_INVALID_ARGUMENT;
    r->cols[r->ncols - 1].new_panel = true;
    return ABL_OK;
}

abl_status abl_report_row(abl_report *r)
{
    if (r == NULL) return ABL_ERR_INVALID_ARGUMENT;
    row *rows = grow(r->rows, &r->caprows, r->nrows, sizeof *r->rows);
    if (rows == NULL) return ABL_ERR_NO_MEMORY;
    r->rows = rows;
    r->rows[r->nrows++] = (row){NULL, 0, 0};
    return ABL_OK;
}

abl_status abl_report_cell(abl_report *r, const char *text, const char *json, const char *latex)
{
    if (r == NULL || text == NULL || bad_override(json)) return ABL_ERR_INVALID_ARGUMENT;
    if (r->nrows == 0) return ABL_ERR_INVALID_ARGUMENT; /* no abl_report_row yet */
    row *w = &r->rows[r->nrows - 1];
    if (w->n >= r->ncols) return ABL_ERR_INVALID_ARGUMENT; /* more cells than columns */
    cell *cells = grow(w->cells, &w->cap, w->n, sizeof *w->cells);
    if (cells == NULL) return ABL_ERR_NO_MEMORY;
    w->cells = cells;
    bool oom = false;
    cell c = {dup_opt(text, &oom), dup_opt(json, &oom), dup_opt(latex, &oom)};
    if (oom) {
        free(c.text);
        free(c.json);
        free(c.latex);
        return ABL_ERR_NO_MEMORY;
    }
    w->cells[w->n++] = c;
    return ABL_OK;
}

abl_status abl_report_note(abl_report *r, const char *text)
{
    if (r == NULL || text == NULL) return ABL_ERR_INVALID_ARGUMENT;
    char **notes = grow(r->notes, &r->capnotes, r->nnotes, sizeof *r->notes);
    if (notes == NULL) return ABL_ERR_NO_MEMORY;
    r->notes = notes;
    bool oom = false;
    char *copy = dup_opt(text, &oom);
    if (oom) return ABL_ERR_NO_MEMORY;
    r->notes[r->nnotes++] = copy;
    return ABL_OK;
}

/* ---------------------------------------------------------------- string buffer */

/* The renderers append without checking each call; the sticky oom flag is checked once at the end. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 1024;
        while (ncap < b->len + n + 1) ncap *= 2;
        char *p = realloc(b->p, ncap);
        if (p == NULL) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }
static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

static void sb_spaces(sbuf *b, size_t n)
{
    while (n-- > 0) sb_putc(b, ' ');
}

/* Display width = number of UTF-8 code points (continuation bytes 10xxxxxx are not counted). */
static size_t u8_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

static bool is_ctrl(char c) { return (unsigned char)c < 0x20 || c == 0x7F; }

/* No line of text/markdown output may end in spaces (padding of a last column, empty cells). */
static void strip_trailing_spaces(sbuf *b)
{
    if (b->oom || b->p == NULL) return;
    size_t o = 0;
    for (size_t i = 0; i < b->len; i++) {
        if (b->p[i] == '\n')
            while (o > 0 && b->p[o - 1] == ' ') o--;
        b->p[o++] = b->p[i];
    }
    while (o > 0 && b->p[o - 1] == ' ') o--;
    b->len = o;
    b->p[o] = '\0';
}

/* A missing cell (row shorter than the header) renders as empty text / JSON null. */
static const cell *cell_at(const row *w, size_t c)
{
    static const cell empty = {"", NULL, NULL};
    return c < w->n ? &w->cells[c] : &empty;
}

/* Blocks of text/markdown output are separated by exactly one blank line. */
static void block_start(sbuf *b)
{
    if (b->len > 0) sb_putc(b, '\n');
}

/* ---------------------------------------------------------------- untrusted text */

/*
 * The one output neutraliser (docs/spec.md, "Text on standard output"). Any string of a report may
 * carry bytes from a file or an argument (a config's model_type, a --slopes list), so none reaches the
 * output raw: in text, Markdown, LaTeX and CSV every C0 control character (newline and tab too: a
 * cell, title or note is one logical line), DEL, every C1 control (U+0080..U+009F) and every byte that
 * is not part of valid UTF-8 is written as a visible escape (\n, \t, \r, \xHH, \u0080..\u009f); JSON
 * escapes the same characters as \u00XX (invalid UTF-8 becomes \ufffd). After rendering, a line that
 * would begin (after blanks) with "::" -- a GitHub Actions workflow command -- gets an escape in front.
 */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when s does not start one. */
static size_t u8_seq(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
    else return 0;
    unsigned cp = c & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* A C1 control character U+0080..U+009F (UTF-8 C2 80..C2 9F). */
static bool is_c1(const unsigned char *s) { return s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F; }

/*
 * CSV and JSON are for programs: numbers, formulas and the tool's own words are ASCII there
 * (docs/spec.md, "Text on standard output"). The tool's symbols get ASCII spellings; any other
 * non-ASCII character came from user text and stays (valid UTF-8, escaped in JSON as \uXXXX).
 */
static const struct {
    const char *utf8, *ascii;
} ascii_map[] = {
    {"\xE2\x88\x92", "-"},      /* − minus sign */
    {"\xCF\x84u", "tau_u"},     /* τu, τd, τo: the paper's thresholds */
    {"\xCF\x84" "d", "tau_d"},
    {"\xCF\x84o", "tau_o"},
    {"\xCF\x84", "tau"},        /* τ */
    {"\xCE\xB4", "delta"},      /* δ */
    {"\xCE\x94", "Delta"},      /* Δ */
    {"\xCE\xB5", "eps"},        /* ε */
    {"\xCE\xB1", "alpha"},      /* α */
    {"\xCE\xB2", "beta"},       /* β */
    {"\xCE\xBB", "lambda"},     /* λ */
    {"\xCE\xBC", "mu"},         /* μ */
    {"\xCF\x83", "sigma"},      /* σ */
    {"\xCE\xA3", "sum"},        /* Σ */
    {"\xC2\xB7", "*"},          /* · */
    {"\xC3\x97", "x"},          /* × */
    {"\xC2\xB1", "+/-"},        /* ± */
    {"\xC2\xB2", "^2"},         /* ² */
    {"\xC2\xA7", "sec. "},      /* § */
    {"\xE2\x89\xA4", "<="},     /* ≤ */
    {"\xE2\x89\xA5", ">="},     /* ≥ */
    {"\xE2\x89\x88", "~"},      /* ≈ */
    {"\xE2\x88\x9E", "inf"},    /* ∞ */
    {"\xE2\x86\x92", "->"},     /* → */
    {"\xE2\x80\xA6", "..."},    /* … */
    {"\xE2\x80\x94", "--"},     /* — em dash */
    {"\xE2\x80\x93", "-"},      /* – en dash */
    {"\xE2\x80\xA0", "[dagger]"},  /* † */
    {"\xE2\x80\xA1", "[ddagger]"}, /* ‡ */
};

/* The ASCII spelling of the character at s when it is one of the tool's symbols (its length in *n). */
static const char *ascii_of(const char *s, size_t *n)
{
    if ((unsigned char)s[0] < 0x80) return NULL;
    for (size_t i = 0; i < sizeof ascii_map / sizeof ascii_map[0]; i++) {
        size_t len = strlen(ascii_map[i].utf8);
        if (strncmp(s, ascii_map[i].utf8, len) == 0) {
            *n = len;
            return ascii_map[i].ascii;
        }
    }
    return NULL;
}

/* An escape: the prefix ("\\u", "\\x"), then v in `digits` lower-case hex digits, written straight into
 * the buffer (no intermediate array). */
static void sb_escape(sbuf *b, const char *prefix, unsigned v, int digits)
{
    static const char hex[] = "0123456789abcdef";
    sb_puts(b, prefix);
    for (int k = digits - 1; k >= 0; k--) sb_putc(b, hex[(v >> (4 * k)) & 0xF]);
}

/* Append the n bytes at s neutralised: JSON-string escapes when json, else the visible escapes of the
 * text formats. Quotes and backslashes are left to the format's own escaping. */
static void put_neutral(sbuf *b, const char *s, size_t len, bool json, bool machine)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t n = u8_seq(p); /* s is NUL-terminated: u8_seq stops at the NUL */
        if (n > (size_t)(end - p)) n = 0;
        size_t an;
        const char *a = machine && n > 1 ? ascii_of((const char *)p, &an) : NULL;
        if (a != NULL && an <= (size_t)(end - p)) {
            sb_puts(b, a);
            p += an;
            continue;
        }
        if (json && n > 1 && !(n == 2 && is_c1(p))) { /* other non-ASCII: \uXXXX (a surrogate pair past U+FFFF) */
            unsigned cp = p[0] & (0x7F >> n);
            for (size_t i = 1; i < n; i++) cp = (cp << 6) | (p[i] & 0x3F);
            if (cp > 0xFFFF) {
                sb_escape(b, "\\u", 0xD800 + ((cp - 0x10000) >> 10), 4);
                sb_escape(b, "\\u", 0xDC00 + ((cp - 0x10000) & 0x3FF), 4);
            } else {
                sb_escape(b, "\\u", cp, 4);
            }
            p += n;
            continue;
        }
        bool c1 = n == 2 && is_c1(p);
        unsigned c = c1 ? p[1] : p[0];
        if (n != 0 && !c1 && c >= 0x20 && c != 0x7F) {
            sb_putn(b, (const char *)p, n);
            p += n;
            continue;
        }
        if (json && n == 0) {
            sb_puts(b, "\\ufffd");
        } else if (json || c1) {
            sb_escape(b, "\\u", c, 4);
        } else if (c == '\n' || c == '\t' || c == '\r') {
            sb_puts(b, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r");
        } else {
            sb_escape(b, "\\x", c, 2);
        }
        p += n == 0 ? 1 : n;
    }
}

/* A neutralised heap copy of s (NULL stays NULL; *oom set on allocation failure). */
static char *neutral_dup(const char *s, bool json, bool *oom)
{
    if (s == NULL) return NULL;
    sbuf t = {NULL, 0, 0, false};
    put_neutral(&t, s, strlen(s), json, json);
    if (t.p == NULL && !t.oom) {
        t.p = calloc(1, 1);
        if (t.p == NULL) t.oom = true;
    }
    if (t.oom) {
        free(t.p);
        *oom = true;
        return NULL;
    }
    return t.p;
}

char *abl_neutral_text(const char *s)
{
    bool oom = false;
    char *t = neutral_dup(s != NULL ? s : "", false, &oom);
    return oom ? NULL : t;
}

/* Does the line starting at p begin, after blanks, with the workflow-command prefix "::"? */
static bool workflow_line(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return end - p >= 2 && p[0] == ':' && p[1] == ':';
}

/* Put esc in front of the "::" of every line from offset `from` on that would begin with it. */
static void guard_workflow_lines(sbuf *b, size_t from, const char *esc)
{
    if (b->oom || b->p == NULL) return;
    bool any = false;
    for (size_t i = from; i < b->len && !any; i++)
        any = (i == from || b->p[i - 1] == '\n') && workflow_line(b->p + i, b->p + b->len);
    if (!any) return;
    sbuf o = {NULL, 0, 0, false};
    sb_putn(&o, b->p, from);
    for (size_t i = from; i < b->len;) {
        size_t e = i;
        while (e < b->len && b->p[e] != '\n') e++;
        if (workflow_line(b->p + i, b->p + e)) {
            size_t k = i;
            while (b->p[k] == ' ' || b->p[k] == '\t') k++;
            sb_putn(&o, b->p + i, k - i);
            sb_puts(&o, esc);
            sb_putn(&o, b->p + k, e - k);
        } else {
            sb_putn(&o, b->p + i, e - i);
        }
        if (e < b->len) sb_putc(&o, '\n');
        i = e + 1;
    }
    free(b->p);
    *b = o;
}

/* ---------------------------------------------------------------- text */

/* A table cell must stay on one line: control characters become spaces (width stays 1). */
static void put_table_text(sbuf *b, const char *s, bool md_escape)
{
    for (; *s; s++) {
        if (is_ctrl(*s))
            sb_putc(b, ' ');
        else if (md_escape && *s == '|')
            sb_puts(b, "\\|");
        else
            sb_putc(b, *s);
    }
}

static void put_padded(sbuf *b, const char *s, size_t width, abl_align align)
{
    size_t w = u8_width(s);
    size_t pad = width > w ? width - w : 0;
    if (align == ABL_ALIGN_RIGHT) sb_spaces(b, pad);
    put_table_text(b, s, false);
    if (align == ABL_ALIGN_LEFT) sb_spaces(b, pad);
}

/*
 * Word wrapping for the width-limited text layout. A "line" of a wrapped text is a byte range;
 * breaks fall on spaces only, so a number (which has no space) is never split.
 */
typedef struct span {
    const char *p;
    size_t n;
} span;

/* Width of the first n bytes of s. */
static size_t u8_width_n(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) w++;
    return w;
}

/* A line may also break after a comma inside a list without spaces ("a=1,b=2"), not inside "2,000". */
static bool comma_break(const char *p)
{
    return p[0] == ',' && p[1] != '\0' && p[1] != ' ' && !(p[1] >= '0' && p[1] <= '9');
}

/* Widest unbreakable word of s. */
static size_t longest_word(const char *s)
{
    size_t best = 0, cur = 0;
    for (; *s; s++) {
        if (*s == ' ') {
            cur = 0;
            continue;
        }
        if (((unsigned char)*s & 0xC0) != 0x80 && ++cur > best) best = cur;
        if (comma_break(s)) cur = 0;
    }
    return best;
}

/*
 * Split s into lines of at most `width` display columns (a longer word gets a line of its own).
 * Writes up to cap spans into out (when out != NULL) and returns the number of lines (>= 1).
 */
static size_t wrap_lines(const char *s, size_t width, span *out, size_t cap)
{
    size_t nlines = 0;
    while (*s == ' ') s++;
    if (*s == '\0') {
        if (out != NULL && cap > 0) out[0] = (span){s, 0};
        return 1;
    }
    while (*s != '\0') {
        const char *line = s, *end = s, *p = s;
        size_t w = 0;
        for (;;) {
            const char *ws = p;
            while (*p == ' ') p++;
            const char *wb = p;
            while (*p != '\0' && *p != ' ') {
                if (comma_break(p++)) break;
            }
            if (wb == p) break; /* only trailing spaces left */
            size_t add = u8_width_n(ws, (size_t)(p - ws));
            if (end != line && w + add > width) {
                p = ws;
                break;
            }
            w += add;
            end = p;
        }
        if (out != NULL && nlines < cap) out[nlines] = (span){line, (size_t)(end - line)};
        nlines++;
        s = end;
        while (*s == ' ') s++;
    }
    return nlines;
}

/* Emit s wrapped at `width`, the first line after `first` columns already used, others indented. */
static void put_wrapped(sbuf *b, const char *s, size_t width, size_t used, size_t indent)
{
    if (width == 0 || used + u8_width(s) <= width) {
        sb_puts(b, s);
        sb_putc(b, '\n');
        return;
    }
    size_t avail = width > used + 8 ? width - used : 8;
    /* The first line has `avail` columns; continuation lines have width - indent. */
    const char *p = s;
    bool first = true;
    while (*p == ' ') p++;
    do {
        span l;
        size_t room = first ? avail : (width > indent + 8 ? width - indent : 8);
        wrap_lines(p, room, &l, 1);
        if (!first) sb_spaces(b, indent);
        char *tmp = malloc(l.n + 1);
        if (tmp == NULL) {
            b->oom = true;
            return;
        }
        memcpy(tmp, l.p, l.n);
        tmp[l.n] = '\0';
        put_table_text(b, tmp, false);
        free(tmp);
        sb_putc(b, '\n');
        p = l.p + l.n;
        while (*p == ' ') p++;
        first = false;
    } while (*p != '\0');
}

static void put_kv_lines(sbuf *b, const kv_line *items, size_t n, size_t width)
{
    for (size_t i = 0; i < n; i++) {
        sb_puts(b, items[i].label);
        sb_puts(b, ": ");
        put_wrapped(b, items[i].text, width, u8_width(items[i].label) + 2, 2);
    }
}

/* Line k of a wrapped cell, padded; an empty string when the cell has fewer lines. */
static void put_cell_line(sbuf *b, const char *text, size_t width, abl_align align, size_t k)
{
    size_t n = wrap_lines(text, width, NULL, 0);
    if (k >= n) {
        sb_spaces(b, width);
        return;
    }
    span *l = malloc(n * sizeof *l);
    char *tmp = malloc(strlen(text) + 1);
    if (l == NULL || tmp == NULL) {
        free(l);
        free(tmp);
        b->oom = true;
        return;
    }
    wrap_lines(text, width, l, n);
    memcpy(tmp, l[k].p, l[k].n);
    tmp[l[k].n] = '\0';
    put_padded(b, tmp, width, align);
    free(tmp);
    free(l);
}

/* One table row (or the header) whose cells wrap inside their columns. */
static void put_wrapped_row(sbuf *b, const char *const *texts, const column *cols, const size_t *width, size_t ncols)
{
    size_t nlines = 1;
    for (size_t c = 0; c < ncols; c++) {
        size_t n = wrap_lines(texts[c], width[c], NULL, 0);
        if (n > nlines) nlines = n;
    }
    for (size_t k = 0; k < nlines; k++) {
        for (size_t c = 0; c < ncols; c++) {
            if (c > 0) sb_puts(b, "  ");
            put_cell_line(b, texts[c], width[c], cols[c].align, k);
        }
        sb_putc(b, '\n');
    }
}

/* Narrowest a column may become by wrapping: its longest word, and no narrower than 12 (or its data width). */
#define ABL_WRAP_MIN 12
/* In a width-limited table, a left-aligned column with a cell wider than this is an explanation: footnotes. */
#define ABL_FOOTNOTE_MIN 30

/* The width-limited table: cell texts (markers replace footnoted explanations) and the footnotes. */
typedef struct text_table {
    size_t nrows, ncols;
    const char **cell; /* nrows * ncols */
    const char **note; /* footnote texts, in order of first use */
    char **marker;     /* "[k]" for each footnote */
    size_t nnotes;
} text_table;

static const char *tt_cell(const text_table *t, size_t i, size_t c) { return t->cell[i * t->ncols + c]; }

/* Natural and minimum (wrapped) widths of column c. */
static void tt_widths(const abl_report *r, const text_table *t, size_t c, size_t *nat, size_t *minw, size_t *data)
{
    size_t dataw = 0, word = longest_word(r->cols[c].header);
    for (size_t i = 0; i < t->nrows; i++) {
        const char *x = tt_cell(t, i, c);
        size_t w = u8_width(x), lw = longest_word(x);
        if (w > dataw) dataw = w;
        if (lw > word) word = lw;
    }
    size_t hw = u8_width(r->cols[c].header);
    *nat = hw > dataw ? hw : dataw;
    size_t floor_ = dataw < ABL_WRAP_MIN ? dataw : ABL_WRAP_MIN;
    *minw = word > floor_ ? word : floor_;
    if (data != NULL) *data = dataw;
}

/* Render columns cols[0..n) as one table no wider than limit (wrapping cells); false if it cannot fit. */
static bool tt_render(const abl_report *r, const text_table *t, const size_t *cols, size_t n, size_t limit,
                      bool dry_run, sbuf *b)
{
    size_t *width = calloc(n, sizeof *width), *minw = calloc(n, sizeof *minw), *data = calloc(n, sizeof *data);
    const char **texts = calloc(n, sizeof *texts);
    column *cl = calloc(n, sizeof *cl);
    if (width == NULL || minw == NULL || data == NULL || texts == NULL || cl == NULL) {
        free(width);
        free(data);
        free(minw);
        free(texts);
        free(cl);
        b->oom = true;
        return true;
    }
    size_t total = 2 * (n - 1);
    for (size_t k = 0; k < n; k++) {
        tt_widths(r, t, cols[k], &width[k], &minw[k], &data[k]);
        total += width[k];
        cl[k] = r->cols[cols[k]];
    }
    /* Shrink one column at a time until the table fits: first headers wider than their data (a
     * wrapped header costs little), then the widest column that can still wrap. */
    while (total > limit) {
        size_t best = n;
        for (size_t k = 0; k < n; k++) {
            size_t lo = minw[k] > data[k] ? minw[k] : data[k];
            if (width[k] > lo && (best == n || width[k] > width[best])) best = k;
        }
        for (size_t k = 0; best == n && k < n; k++)
            if (width[k] > minw[k]) best = k;
        for (size_t k = 0; k < n; k++)
            if (width[k] > minw[k] && width[k] > width[best]) {
                size_t lo = minw[best] > data[best] ? minw[best] : data[best];
                if (width[best] <= lo) best = k;
            }
        if (best == n) break;
        width[best]--;
        total--;
    }
    bool fits = total <= limit;
    if (fits && !dry_run) {
        block_start(b);
        for (size_t k = 0; k < n; k++) texts[k] = cl[k].header;
        put_wrapped_row(b, texts, cl, width, n);
        for (size_t k = 0; k < n; k++) {
            if (k > 0) sb_puts(b, "  ");
            for (size_t j = 0; j < width[k]; j++) sb_putc(b, '-');
        }
        sb_putc(b, '\n');
        for (size_t i = 0; i < t->nrows; i++) {
            for (size_t k = 0; k < n; k++) texts[k] = tt_cell(t, i, cols[k]);
            put_wrapped_row(b, texts, cl, width, n);
        }
    }
    free(width);
    free(minw);
    free(data);
    free(texts);
    free(cl);
    return fits;
}

/* Long explanations (wide left-aligned text) become numbered footnotes below the table: the cell shows
 * "[k]", the note the text once however many rows share it. False when out of memory (b->oom set). */
static bool tt_footnotes(const abl_report *r, text_table *t, sbuf *b)
{
    size_t nc = t->ncols, nr = t->nrows;
    for (size_t c = 1; c < nc; c++) {
        if (r->cols[c].align != ABL_ALIGN_LEFT) continue;
        size_t widest = 0;
        for (size_t i = 0; i < nr; i++) {
            size_t w = u8_width(t->cell[i * nc + c]);
            if (w > widest) widest = w;
        }
        if (widest <= ABL_FOOTNOTE_MIN && !r->cols[c].explain) continue;
        for (size_t i = 0; i < nr; i++) {
            const char *x = t->cell[i * nc + c];
            if (x[0] == '\0' || u8_width(x) <= 4) continue;
            size_t k;
            for (k = 0; k < t->nnotes; k++)
                if (strcmp(t->note[k], x) == 0) break;
            if (k == t->nnotes) {
                t->marker[k] = abl_strf("[%zu]", k + 1);
                if (t->marker[k] == NULL) {
                    b->oom = true;
                    return false;
                }
                t->note[t->nnotes++] = x;
            }
            t->cell[i * nc + c] = t->marker[k];
        }
    }
    return true;
}

/* The key column(s) of the panels: the first column and, when it is a short left-aligned label, the
 * second ("bf16  subnormal"). */
static size_t tt_panel_keys(const abl_report *r, const text_table *t)
{
    size_t nat1 = 0, min1 = 0;
    if (t->ncols > 2 && r->cols[1].align == ABL_ALIGN_LEFT) {
        tt_widths(r, t, 1, &nat1, &min1, NULL);
        if (nat1 <= ABL_WRAP_MIN) return 2;
    }
    return 1;
}

/* Panels: the key column(s), then as many further columns as fit, repeated below. A dry pass first:
 * every panel must fit with at least one column beside the key, else nothing is written and the
 * result is false (the caller falls back to records). */
static bool tt_render_panels(const abl_report *r, const text_table *t, size_t limit, sbuf *b)
{
    size_t nc = t->ncols, nkeys = tt_panel_keys(r, t);
    bool ok = true;
    size_t *panel = calloc(nc, sizeof *panel);
    if (panel == NULL) {
        b->oom = true;
        return true; /* nothing more to write: the buffer failed */
    }
    for (int pass = 0; pass < 2 && ok; pass++) {
        size_t start = nkeys;
        while (ok && start < nc) {
            size_t n = nkeys, end = start;
            for (size_t k = 0; k < nkeys; k++) panel[k] = k;
            while (end < nc) {
                if (end > start && r->cols[end].new_panel) break;
                panel[n] = end;
                if (!tt_render(r, t, panel, n + 1, limit, true, b)) break;
                n++;
                end++;
            }
            if (end == start)
                ok = false;
            else if (pass == 1)
                tt_render(r, t, panel, n, limit, false, b);
            start = end;
        }
    }
    free(panel);
    return ok;
}

/* Not even two columns fit: one block per row, a "header: value" line per cell. */
static void tt_render_records(const abl_report *r, const text_table *t, size_t limit, sbuf *b)
{
    for (size_t i = 0; i < t->nrows; i++) {
        block_start(b);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *x = tt_cell(t, i, c);
            if (x[0] == '\0') continue;
            size_t indent = c == 0 ? 0 : 2;
            sb_spaces(b, indent);
            sb_puts(b, r->cols[c].header);
            sb_puts(b, ": ");
            put_wrapped(b, x, limit, indent + u8_width(r->cols[c].header) + 2, indent + 4);
        }
    }
}

/* The footnotes below the table, each wrapped under its own marker. */
static void tt_put_notes(const text_table *t, size_t limit, sbuf *b)
{
    if (t->nnotes == 0) return;
    block_start(b);
    for (size_t k = 0; k < t->nnotes; k++) {
        sb_puts(b, t->marker[k]);
        sb_putc(b, ' ');
        put_wrapped(b, t->note[k], limit, u8_width(t->marker[k]) + 1, u8_width(t->marker[k]) + 1);
    }
}

/* The table in at most `limit` columns: footnotes for explanations, wrapped cells, then panels, then records. */
static void render_table_limited(const abl_report *r, sbuf *b, size_t limit)
{
    size_t nc = r->ncols, nr = r->nrows;
    text_table t = {nr, nc, NULL, NULL, NULL, 0};
    size_t *cols = calloc(nc, sizeof *cols);
    t.cell = calloc(nr * nc + 1, sizeof *t.cell);
    t.note = calloc(nr * nc + 1, sizeof *t.note);
    t.marker = calloc(nr * nc + 1, sizeof *t.marker);
    if (cols == NULL || t.cell == NULL || t.note == NULL || t.marker == NULL) {
        b->oom = true;
    } else {
        for (size_t i = 0; i < nr; i++)
            for (size_t c = 0; c < nc; c++) t.cell[i * nc + c] = cell_at(&r->rows[i], c)->text;
        for (size_t c = 0; c < nc; c++) cols[c] = c;
        if (tt_footnotes(r, &t, b)) {
            if (tt_render(r, &t, cols, nc, limit, true, b))
                tt_render(r, &t, cols, nc, limit, false, b);
            else if (!tt_render_panels(r, &t, limit, b))
                tt_render_records(r, &t, limit, b);
            tt_put_notes(&t, limit, b);
        }
    }
    for (size_t k = 0; k < t.nnotes; k++) free(t.marker[k]);
    free(t.marker);
    free(t.note);
    free(t.cell);
    free(cols);
}

static void render_table_text(const abl_report *r, sbuf *b, size_t limit)
{
    size_t nc = r->ncols;
    size_t *width = calloc(nc, sizeof *width);
    if (width == NULL) {
        b->oom = true;
        return;
    }
    size_t total = 2 * (nc - 1);
    for (size_t c = 0; c < nc; c++) {
        width[c] = u8_width(r->cols[c].header);
        for (size_t i = 0; i < r->nrows; i++) {
            size_t w = u8_width(cell_at(&r->rows[i], c)->text);
            if (w > width[c]) width[c] = w;
        }
        total += width[c];
    }
    if (limit != 0 && total > limit) {
        free(width);
        render_table_limited(r, b, limit);
        return;
    }
    block_start(b);
    for (size_t c = 0; c < nc; c++) {
        if (c > 0) sb_puts(b, "  ");
        put_padded(b, r->cols[c].header, width[c], r->cols[c].align);
    }
    sb_putc(b, '\n');
    for (size_t c = 0; c < nc; c++) {
        if (c > 0) sb_puts(b, "  ");
        for (size_t k = 0; k < width[c]; k++) sb_putc(b, '-');
    }
    sb_putc(b, '\n');
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t c = 0; c < nc; c++) {
            if (c > 0) sb_puts(b, "  ");
            put_padded(b, cell_at(&r->rows[i], c)->text, width[c], r->cols[c].align);
        }
        sb_putc(b, '\n');
    }
    free(width);
}

/* limit: the widest a line may be (0 = no limit: one line per row, meta line and note). */
static void render_text(const abl_report *r, sbuf *b, size_t limit)
{
    if (r->title[0] != '\0' || r->nmeta > 0) {
        if (r->title[0] != '\0')
            put_wrapped(b, r->title, limit, 0, 2);
        put_kv_lines(b, r->meta, r->nmeta, limit);
    }
    if (r->ncols > 0)
        render_table_text(r, b, limit);
    if (r->nsummary > 0) {
        block_start(b);
        put_kv_lines(b, r->summary, r->nsummary, limit);
    }
    if (r->nnotes > 0) {
        block_start(b);
        for (size_t i = 0; i < r->nnotes; i++)
            put_wrapped(b, r->notes[i], limit, 0, 2);
    }
    strip_trailing_spaces(b);
}

/* ---------------------------------------------------------------- markdown */

static void md_list(sbuf *b, const kv_line *items, size_t n)
{
    if (n == 0) return;
    block_start(b);
    for (size_t i = 0; i < n; i++) {
        sb_puts(b, "- **");
        sb_puts(b, items[i].label);
        sb_puts(b, "**: ");
        sb_puts(b, items[i].text);
        sb_putc(b, '\n');
    }
}

static void render_markdown(const abl_report *r, sbuf *b)
{
    if (r->title[0] != '\0') {
        sb_puts(b, "## ");
        sb_puts(b, r->title);
        sb_putc(b, '\n');
    }
    md_list(b, r->meta, r->nmeta);
    if (r->ncols > 0) {
        block_start(b);
        sb_putc(b, '|');
        for (size_t c = 0; c < r->ncols; c++) {
            sb_putc(b, ' ');
            put_table_text(b, r->cols[c].header, true);
            sb_puts(b, " |");
        }
        sb_puts(b, "\n|");
        for (size_t c = 0; c < r->ncols; c++)
            sb_puts(b, r->cols[c].align == ABL_ALIGN_RIGHT ? "---:|" : ":---|");
        sb_putc(b, '\n');
        for (size_t i = 0; i < r->nrows; i++) {
            sb_putc(b, '|');
            for (size_t c = 0; c < r->ncols; c++) {
                sb_putc(b, ' ');
                put_table_text(b, cell_at(&r->rows[i], c)->text, true);
                sb_puts(b, " |");
            }
            sb_putc(b, '\n');
        }
    }
    md_list(b, r->summary, r->nsummary);
    /* Each note is its own paragraph (consecutive lines would be joined by a Markdown renderer). */
    for (size_t i = 0; i < r->nnotes; i++) {
        block_start(b);
        sb_puts(b, r->notes[i]);
        sb_putc(b, '\n');
    }
    strip_trailing_spaces(b);
}

/* ---------------------------------------------------------------- csv */

/* The one CSV emission: neutralised (no raw control character, so no line break either), quoted when
 * it holds a comma or quote, or begins with the workflow-command prefix "::". */
static void csv_field(sbuf *b, const char *s)
{
    sbuf t = {NULL, 0, 0, false};
    put_neutral(&t, s, strlen(s), false, true);
    if (t.oom) {
        b->oom = true;
        free(t.p);
        return;
    }
    const char *v = t.p != NULL ? t.p : "";
    if (strpbrk(v, ",\"") == NULL && !workflow_line(v, v + strlen(v))) {
        sb_puts(b, v);
        free(t.p);
        return;
    }
    sb_putc(b, '"');
    for (const char *q = v; *q; q++) {
        if (*q == '"') sb_putc(b, '"');
        sb_putc(b, *q);
    }
    sb_putc(b, '"');
    free(t.p);
}

/* The value of the four hex digits of a \\u escape at p (the callers write \\u00XX; a non-digit ends it). */
static long hex4(const char *p)
{
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int d = p[k] >= '0' && p[k] <= '9' ? p[k] - '0'
                : p[k] >= 'a' && p[k] <= 'f' ? p[k] - 'a' + 10
                : p[k] >= 'A' && p[k] <= 'F' ? p[k] - 'A' + 10 : -1;
        if (d < 0) break;
        v = 16 * v + d;
    }
    return v;
}

static void json_string(sbuf *b, const char *s);

/* A JSON token that is a bare number (not a string, true/false, null, an object or an array). */
static bool json_is_number(const char *j)
{
    return j != NULL && (j[0] == '-' || (j[0] >= '0' && j[0] <= '9'));
}

/*
 * An integer column's cell split into its two members (abl_report_column_integer): `key` is the number
 * when it holds exactly in a binary64 (at most 2^53), else "null"; `key_exact` is the decimal string
 * (quoted), or "null" when the cell is null ("never"). The tokens are malloc'd (NULL: out of memory).
 */
static void integer_split(const cell *c, char **number, char **exact)
{
    const char *j = c != NULL ? c->json : NULL;
    bool oom = false;
    if (j == NULL || strcmp(j, "null") == 0) {
        *number = dup_opt("null", &oom);
        *exact = dup_opt("null", &oom);
    } else if (j[0] == '"') {
        *number = dup_opt("null", &oom);
        *exact = dup_opt(j, &oom);
    } else {
        /* 2^53 = 9007199254740992 has 16 digits: shorter is below it, longer above. */
        size_t n = strlen(j);
        bool fits = n < 16 || (n == 16 && strcmp(j, "9007199254740992") <= 0);
        *number = dup_opt(fits ? j : "null", &oom);
        *exact = abl_report_json_string(j);
    }
}

void abl_text_json_integer(abl_text *t, const char *key, const char *token)
{
    char *number = NULL, *exact = NULL;
    integer_split(&(cell){NULL, (char *)token, NULL}, &number, &exact);
    if (number == NULL || exact == NULL) {
        t->oom = 1;
    } else {
        abl_text_json(t, key);
        abl_text_add(t, ": %s, ", number);
        char *k = abl_strf("%s_exact", key);
        if (k == NULL)
            t->oom = 1;
        else
            abl_text_json(t, k);
        abl_text_add(t, ": %s", exact);
        free(k);
    }
    free(number);
    free(exact);
}

/* A column of numbers: an integer column, or one whose non-null cells include a JSON number. */
static bool column_numeric(const abl_report *r, size_t c)
{
    if (r->cols[c].integer) return true;
    for (size_t i = 0; i < r->nrows; i++)
        if (json_is_number(cell_at(&r->rows[i], c)->json)) return true;
    return false;
}

/*
 * CSV is for programs and carries the JSON values (one schema: same unit and type in both, e.g. a
 * fraction, not the percentage a text cell shows): null is `nan` in a numeric column (numpy's genfromtxt
 * and float() read it as NaN; an empty cell would become -1 in an integer column) and an empty cell
 * elsewhere; a number or true/false is the JSON token; a JSON string is its decoded text; an object or
 * array falls back to the text.
 */
static void csv_cell(sbuf *b, const cell *c, bool numeric)
{
    const char *j = c->json;
    if (j == NULL || j[0] == '{' || j[0] == '[') {
        csv_field(b, c->text);
        return;
    }
    if (strcmp(j, "null") == 0) {
        if (numeric) sb_puts(b, "nan");
        return;
    }
    if (j[0] != '"') {
        csv_field(b, j);
        return;
    }
    /* Decode the JSON string (the escapes the report writer's callers produce). */
    sbuf s = {NULL, 0, 0, false};
    for (const char *p = j + 1; *p != '\0' && *p != '"'; p++) {
        if (*p == '\\' && p[1] != '\0') {
            p++;
            switch (*p) {
            case 'n': sb_putc(&s, '\n'); break;
            case 't': sb_putc(&s, '\t'); break;
            case 'r': sb_putc(&s, '\r'); break;
            case 'u': /* \u00XX: control characters only */
                if (p[1] && p[2] && p[3] && p[4]) {
                    sb_putc(&s, (char)hex4(p + 1));
                    p += 4;
                }
                break;
            default: sb_putc(&s, *p);
            }
        } else {
            sb_putc(&s, *p);
        }
    }
    if (s.oom) {
        b->oom = true;
    } else {
        csv_field(b, s.p != NULL ? s.p : "");
    }
    free(s.p);
}

/* One CSV cell of column c (two for an integer column: the number, then the exact text). */
static void csv_column_cell(sbuf *b, const abl_report *r, size_t w, size_t c, bool numeric)
{
    const cell *x = cell_at(&r->rows[w], c);
    if (!r->cols[c].integer) {
        csv_cell(b, x, numeric);
        return;
    }
    char *number = NULL, *exact = NULL;
    integer_split(x, &number, &exact);
    if (number == NULL || exact == NULL) {
        b->oom = true;
    } else {
        csv_cell(b, &(cell){NULL, number, NULL}, true);
        sb_putc(b, ',');
        csv_cell(b, &(cell){NULL, exact, NULL}, false);
    }
    free(number);
    free(exact);
}

/* The CSV header names of column c (an integer column: key, key_exact). */
static void csv_column_header(sbuf *b, const column *col)
{
    csv_field(b, col->key);
    if (col->integer) {
        sb_putc(b, ',');
        sb_puts(b, col->key);
        sb_puts(b, "_exact");
    }
}

static void render_csv(const abl_report *r, sbuf *b)
{
    if (r->ncols == 0) return;
    for (size_t c = 0; c < r->ncols; c++) {
        if (c > 0) sb_putc(b, ',');
        csv_column_header(b, &r->cols[c]);
    }
    sb_putc(b, '\n');
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t c = 0; c < r->ncols; c++) {
            if (c > 0) sb_putc(b, ',');
            csv_column_cell(b, r, i, c, column_numeric(r, c));
        }
        sb_putc(b, '\n');
    }
}

/* ---------------------------------------------------------------- json */

static void json_string(sbuf *b, const char *s)
{
    sb_putc(b, '"');
    while (*s) {
        size_t run = strcspn(s, "\"\\");
        put_neutral(b, s, run, true, true);
        s += run;
        if (*s) {
            sb_putc(b, '\\');
            sb_putc(b, *s++);
        }
    }
    sb_putc(b, '"');
}

char *abl_report_json_string(const char *s)
{
    if (s == NULL) return NULL;
    sbuf b = {NULL, 0, 0, false};
    json_string(&b, s);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

void abl_text_json(abl_text *t, const char *s)
{
    char *j = abl_report_json_string(s);
    if (j == NULL) {
        t->oom = 1;
        return;
    }
    abl_text_add(t, "%s", j);
    free(j);
}

/* A member's value: the builder's JSON token (a real key's number with a fraction part, real_key), else
 * the text as a JSON string. */
static void json_value(sbuf *b, const char *key, const char *text, const char *json)
{
    if (json != NULL) {
        sb_puts(b, json);
        if (real_key(key)) sb_puts(b, abl_json_real_suffix(json));
    } else {
        json_string(b, text);
    }
}

/* Top-level members are written as ",\n"-separated lines; `first` tracks the separator. */
static void json_member_start(sbuf *b, bool *first, const char *key)
{
    sb_puts(b, *first ? "  " : ",\n  ");
    *first = false;
    json_string(b, key);
    sb_puts(b, ": ");
}

/* An integer field's two members (sep between them): "key": number or null, "key_exact": string or null. */
static void json_integer_member(sbuf *b, const char *key, const cell *c, const char *sep)
{
    char *number = NULL, *exact = NULL;
    integer_split(c, &number, &exact);
    if (number == NULL || exact == NULL) {
        b->oom = true;
    } else {
        json_string(b, key);
        sb_puts(b, ": ");
        sb_puts(b, number);
        sb_puts(b, sep);
        sb_puts(b, "\"");
        sb_puts(b, key);
        sb_puts(b, "_exact\": ");
        sb_puts(b, exact);
    }
    free(number);
    free(exact);
}

static void json_members(sbuf *b, bool *first, const kv_line *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (integer_key(items[i].key)) {
            sb_puts(b, *first ? "  " : ",\n  ");
            *first = false;
            json_integer_member(b, items[i].key, &(cell){items[i].text, items[i].json, NULL}, ",\n  ");
            continue;
        }
        json_member_start(b, first, items[i].key);
        json_value(b, items[i].key, items[i].text, items[i].json);
    }
}

/* The row objects, one per line (compact, yet diffs stay row by row), each prefixed by indent. */
static void json_rows(const abl_report *r, sbuf *b, const char *indent)
{
    for (size_t i = 0; i < r->nrows; i++) {
        const row *w = &r->rows[i];
        sb_puts(b, indent);
        sb_puts(b, "{");
        for (size_t c = 0; c < r->ncols; c++) {
            if (c > 0) sb_puts(b, ", ");
            if (r->cols[c].integer) {
                json_integer_member(b, r->cols[c].key, c < w->n ? &w->cells[c] : NULL, ", ");
                continue;
            }
            json_string(b, r->cols[c].key);
            sb_puts(b, ": ");
            if (c < w->n)
                json_value(b, r->cols[c].key, w->cells[c].text, w->cells[c].json);
            else
                sb_puts(b, "null");
        }
        sb_puts(b, i + 1 < r->nrows ? "},\n" : "}\n");
    }
}

static void render_json(const abl_report *r, sbuf *b)
{
    if (r->json_rows_only) {
        sb_puts(b, r->nrows == 0 ? "[" : "[\n");
        json_rows(r, b, "  ");
        sb_puts(b, "]\n");
        return;
    }
    bool first = true;
    sb_puts(b, "{\n");
    json_member_start(b, &first, "schema_version");
    sb_puts(b, ABL_REPORT_SCHEMA_VERSION_TEXT);
    json_members(b, &first, r->meta, r->nmeta);
    json_member_start(b, &first, r->json_key);
    if (r->nrows == 0) {
        sb_puts(b, "[]");
    } else {
        sb_puts(b, "[\n");
        json_rows(r, b, "    ");
        sb_puts(b, "  ]");
    }
    json_members(b, &first, r->summary, r->nsummary);
    if (r->nnotes > 0) {
        json_member_start(b, &first, "notes");
        sb_puts(b, "[\n");
        for (size_t i = 0; i < r->nnotes; i++) {
            sb_puts(b, "    ");
            json_string(b, r->notes[i]);
            sb_puts(b, i + 1 < r->nnotes ? ",\n" : "\n");
        }
        sb_puts(b, "  ]");
    }
    sb_puts(b, "\n}\n");
}

abl_status abl_report_json_rows_only(abl_report *r)
{
    if (r == NULL) return ABL_ERR_INVALID_ARGUMENT;
    r->json_rows_only = true;
    return ABL_OK;
}

/* ---------------------------------------------------------------- latex */

/* UTF-8 characters that have a standard LaTeX spelling; everything else passes through. */
static const struct {
    const char *utf8, *latex;
} latex_map[] = {
    {"\xCE\xB4", "$\\delta$"},      /* δ */
    {"\xCE\x94", "$\\Delta$"},      /* Δ */
    {"\xCF\x84", "$\\tau$"},        /* τ */
    {"\xCE\xB5", "$\\varepsilon$"}, /* ε */
    {"\xCE\xB1", "$\\alpha$"},      /* α */
    {"\xCE\xB2", "$\\beta$"},       /* β */
    {"\xCE\xBB", "$\\lambda$"},     /* λ */
    {"\xCE\xBC", "$\\mu$"},         /* μ */
    {"\xCF\x83", "$\\sigma$"},      /* σ */
    {"\xE2\x88\x92", "$-$"},        /* − minus sign */
    {"\xE2\x89\x88", "$\\approx$"}, /* ≈ */
    {"\xE2\x80\x94", "---"},        /* — em dash */
    {"\xE2\x80\x93", "--"},         /* – en dash */
    {"\xE2\x88\x9E", "$\\infty$"},  /* ∞ */
    {"\xE2\x89\xA4", "$\\le$"},     /* ≤ */
    {"\xE2\x89\xA5", "$\\ge$"},     /* ≥ */
    {"\xC3\x97", "$\\times$"},      /* × */
    {"\xC2\xB1", "$\\pm$"},         /* ± */
    {"\xE2\x86\x92", "$\\to$"},     /* → */
    {"\xE2\x80\xA6", "\\ldots{}"},  /* … */
};

static void latex_text(sbuf *b, const char *s)
{
    const char *start = s;
    while (*s) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x80) {
            size_t i, n = sizeof latex_map / sizeof latex_map[0];
            for (i = 0; i < n; i++) {
                size_t len = strlen(latex_map[i].utf8);
                if (strncmp(s, latex_map[i].utf8, len) == 0) {
                    sb_puts(b, latex_map[i].latex);
                    s += len;
                    break;
                }
            }
            if (i < n) continue;
            sb_putc(b, *s++);
            continue;
        }
        switch (c) {
        case '&': case '%': case '$': case '#': case '_': case '{': case '}':
            sb_putc(b, '\\');
            sb_putc(b, (char)c);
            break;
        case '~': sb_puts(b, "\\textasciitilde{}"); break;
        case '^': sb_puts(b, "\\textasciicircum{}"); break;
        case '\\': sb_puts(b, "\\textbackslash{}"); break;
        /* These print as other glyphs in the default OT1 font encoding. */
        case '<': sb_puts(b, "\\textless{}"); break;
        case '>': sb_puts(b, "\\textgreater{}"); break;
        case '|': sb_puts(b, "\\textbar{}"); break;
        case '-':
            /* A minus sign of a number (not a hyphen inside a word) is typeset as a math minus. */
            if (s[1] >= '0' && s[1] <= '9' &&
                (s == start || !((s[-1] >= '0' && s[-1] <= '9') || (s[-1] >= 'a' && s[-1] <= 'z') ||
                                 (s[-1] >= 'A' && s[-1] <= 'Z') || s[-1] == '^' || s[-1] == 'e'))) {
                sb_puts(b, "$-$");
                break;
            }
            /* "--" would become an en dash (e.g. in "--format"); keep hyphens separate. */
            sb_putc(b, '-');
            if (s[1] == '-' || strncmp(s + 1, "\xE2\x80\x94", 3) == 0 || strncmp(s + 1, "\xE2\x80\x93", 3) == 0)
                sb_puts(b, "{}");
            break;
        default:
            /* A blank line inside a cell or caption would end the paragraph: flatten controls. */
            sb_putc(b, is_ctrl((char)c) ? ' ' : (char)c);
        }
        s++;
    }
}

/* Comments hold raw text; only line breaks must go, or the text would leave the comment. */
static void latex_comments(sbuf *b, const kv_line *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sb_puts(b, "% ");
        put_table_text(b, items[i].label, false);
        sb_puts(b, ": ");
        put_table_text(b, items[i].text, false);
        sb_putc(b, '\n');
    }
}

static void render_latex(const abl_report *r, sbuf *b)
{
    latex_comments(b, r->meta, r->nmeta);
    sb_puts(b, "\\begin{table}[t]\n  \\centering\n");
    if (r->title[0] != '\0') {
        sb_puts(b, "  \\caption{");
        latex_text(b, r->title);
        sb_puts(b, "}\n");
    }
    /* An empty column spec is a LaTeX error, so a report without columns has no tabular. */
    if (r->ncols > 0) {
        sb_puts(b, "  \\begin{tabular}{");
        for (size_t c = 0; c < r->ncols; c++) {
            if (c > 0) sb_putc(b, ' ');
            sb_putc(b, r->cols[c].align == ABL_ALIGN_RIGHT ? 'r' : 'l');
        }
        sb_puts(b, "}\n    \\toprule\n    ");
        for (size_t c = 0; c < r->ncols; c++) {
            if (c > 0) sb_puts(b, " & ");
            latex_text(b, r->cols[c].header);
        }
        sb_puts(b, " \\\\\n    \\midrule\n");
        for (size_t i = 0; i < r->nrows; i++) {
            sb_puts(b, "    ");
            for (size_t c = 0; c < r->ncols; c++) {
                const cell *x = cell_at(&r->rows[i], c);
                if (c > 0) sb_puts(b, " & ");
                if (x->latex != NULL)
                    sb_puts(b, x->latex);
                else
                    latex_text(b, x->text);
            }
            sb_puts(b, " \\\\\n");
        }
        sb_puts(b, "    \\bottomrule\n  \\end{tabular}\n");
    }
    for (size_t i = 0; i < r->nnotes; i++) {
        sb_puts(b, "  \\par\\smallskip\\footnotesize ");
        latex_text(b, r->notes[i]);
        sb_putc(b, '\n');
    }
    sb_puts(b, "\\end{table}\n");
    /* The spec has no place for summary lines in the float; keep them as comments after it. */
    latex_comments(b, r->summary, r->nsummary);
}

/* ---------------------------------------------------------------- write */

abl_status abl_report_write(const abl_report *r, abl_output fmt, FILE *out)
{
    return abl_report_write_width(r, fmt, ABL_REPORT_WIDTH, out);
}

/* Render r, already neutralised, into b. */
static abl_status render_view(const abl_report *r, abl_output fmt, size_t width, sbuf *bp)
{
    sbuf b = *bp;
    /* The formats for people leave out the data-only columns: render a shallow view without them. */
    abl_report view;
    column *vcols = NULL;
    row *vrows = NULL;
    size_t ndata = 0;
    for (size_t c = 0; c < r->ncols; c++) ndata += r->cols[c].data_only;
    if (ndata > 0 && (fmt == ABL_OUT_TEXT || fmt == ABL_OUT_MARKDOWN || fmt == ABL_OUT_LATEX)) {
        view = *r;
        vcols = calloc(r->ncols, sizeof *vcols);
        vrows = calloc(r->nrows + 1, sizeof *vrows);
        bool oom = vcols == NULL || vrows == NULL;
        for (size_t i = 0; !oom && i < r->nrows; i++) {
            vrows[i].cells = calloc(r->ncols, sizeof *vrows[i].cells);
            if (vrows[i].cells == NULL) oom = true;
        }
        if (oom) {
            for (size_t i = 0; vrows != NULL && i < r->nrows; i++) free(vrows[i].cells);
            free(vcols);
            free(vrows);
            return ABL_ERR_NO_MEMORY;
        }
        size_t n = 0;
        for (size_t c = 0; c < r->ncols; c++) {
            if (r->cols[c].data_only) continue;
            vcols[n] = r->cols[c];
            for (size_t i = 0; i < r->nrows; i++) {
                if (c < r->rows[i].n) {
                    vrows[i].cells[n] = r->rows[i].cells[c];
                    vrows[i].n = n + 1;
                }
            }
            n++;
        }
        view.cols = vcols;
        view.ncols = n;
        view.rows = vrows;
        r = &view;
    }
    switch (fmt) {
    case ABL_OUT_TEXT: render_text(r, &b, width); break;
    case ABL_OUT_MARKDOWN: render_markdown(r, &b); break;
    case ABL_OUT_CSV: render_csv(r, &b); break;
    case ABL_OUT_JSON: render_json(r, &b); break;
    case ABL_OUT_LATEX: render_latex(r, &b); break;
    default: return ABL_ERR_INVALID_ARGUMENT;
    }
    if (vrows != NULL) {
        for (size_t i = 0; i < r->nrows; i++) free(vrows[i].cells);
        free(vrows);
        free(vcols);
    }
    *bp = b;
    return b.oom ? ABL_ERR_NO_MEMORY : ABL_OK;
}

/*
 * The report as the format will show it: every string that format prints, neutralised (put_neutral).
 * JSON neutralises its verbatim tokens here and its strings in json_string; CSV in csv_field.
 */
static abl_report *neutral_view(const abl_report *r, abl_output fmt)
{
    bool text = fmt == ABL_OUT_TEXT || fmt == ABL_OUT_MARKDOWN || fmt == ABL_OUT_LATEX, js = fmt == ABL_OUT_JSON;
    bool oom = false;
    abl_report *n = calloc(1, sizeof *n);
    if (n == NULL) return NULL;
    n->json_rows_only = r->json_rows_only;
#define ABL_NT(s, on, json) ((on) ? neutral_dup((s), (json), &oom) : dup_opt((s), &oom))
    n->title = ABL_NT(r->title, text, false);
    n->json_key = dup_opt(r->json_key, &oom);
    n->meta = calloc(r->nmeta + 1, sizeof *n->meta);
    n->summary = calloc(r->nsummary + 1, sizeof *n->summary);
    n->cols = calloc(r->ncols + 1, sizeof *n->cols);
    n->rows = calloc(r->nrows + 1, sizeof *n->rows);
    n->notes = calloc(r->nnotes + 1, sizeof *n->notes);
    if (n->meta == NULL || n->summary == NULL || n->cols == NULL || n->rows == NULL || n->notes == NULL) {
        abl_report_free(n);
        return NULL;
    }
    for (int part = 0; part < 2; part++) {
        const kv_line *from = part == 0 ? r->meta : r->summary;
        kv_line *to = part == 0 ? n->meta : n->summary;
        size_t cnt = part == 0 ? r->nmeta : r->nsummary;
        for (size_t i = 0; i < cnt; i++) {
            to[i] = (kv_line){dup_opt(from[i].key, &oom), ABL_NT(from[i].label, text, false),
                              ABL_NT(from[i].text, text, false), ABL_NT(from[i].json, js, true)};
            if (part == 0) n->nmeta++;
            else n->nsummary++;
        }
    }
    for (size_t c = 0; c < r->ncols; c++) {
        n->cols[c] = r->cols[c];
        n->cols[c].key = dup_opt(r->cols[c].key, &oom);
        n->cols[c].header = ABL_NT(r->cols[c].header, text, false);
        n->ncols++;
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const row *w = &r->rows[i];
        n->rows[i].cells = calloc(w->n + 1, sizeof *w->cells);
        n->nrows++;
        if (n->rows[i].cells == NULL) {
            oom = true;
            break;
        }
        n->rows[i].cap = w->n + 1;
        for (size_t c = 0; c < w->n; c++) {
            n->rows[i].cells[c] = (cell){ABL_NT(w->cells[c].text, text, false), ABL_NT(w->cells[c].json, js, true),
                                         ABL_NT(w->cells[c].latex, text, false)};
            n->rows[i].n++;
        }
    }
    for (size_t i = 0; i < r->nnotes; i++) n->notes[n->nnotes++] = ABL_NT(r->notes[i], text, false);
#undef ABL_NT
    if (oom) {
        abl_report_free(n);
        return NULL;
    }
    return n;
}

/* Append the rendering of r to b (b->oom set on allocation failure). */
static abl_status render_into(const abl_report *r, abl_output fmt, size_t width, sbuf *bp)
{
    if (fmt != ABL_OUT_TEXT && fmt != ABL_OUT_MARKDOWN && fmt != ABL_OUT_CSV && fmt != ABL_OUT_JSON &&
        fmt != ABL_OUT_LATEX)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *n = neutral_view(r, fmt);
    if (n == NULL) return ABL_ERR_NO_MEMORY;
    size_t from = bp->len;
    abl_status st = render_view(n, fmt, width, bp);
    abl_report_free(n);
    /* Text, Markdown and LaTeX lines may start with a string's text: no workflow command can. */
    if (st == ABL_OK && fmt != ABL_OUT_CSV && fmt != ABL_OUT_JSON)
        guard_workflow_lines(bp, from, fmt == ABL_OUT_LATEX ? "{}" : "\\");
    return st != ABL_OK ? st : bp->oom ? ABL_ERR_NO_MEMORY : ABL_OK;
}

/* Write the rendered buffer and free it. */
static abl_status write_out(sbuf *bp, FILE *out)
{
    sbuf b = *bp;
    if (b.oom) {
        free(b.p);
        return ABL_ERR_NO_MEMORY;
    }
    abl_status st = ABL_OK;
    if (b.len > 0 && fwrite(b.p, 1, b.len, out) != b.len) st = ABL_ERR_IO;
    /* Flush so that a failure of a buffered stream (disk full, closed pipe) is reported here. */
    if (fflush(out) != 0 || ferror(out)) st = ABL_ERR_IO;
    free(b.p);
    return st;
}

abl_status abl_report_write_width(const abl_report *r, abl_output fmt, size_t width, FILE *out)
{
    if (r == NULL || out == NULL) return ABL_ERR_INVALID_ARGUMENT;
    sbuf b = {NULL, 0, 0, false};
    abl_status st = render_into(r, fmt, width, &b);
    if (st == ABL_ERR_INVALID_ARGUMENT) {
        free(b.p);
        return st;
    }
    return write_out(&b, out);
}

/* ---------------------------------------------------------------- a set of reports */

/* The kv line `key` among r's meta and summary lines, or NULL. */
static const kv_line *find_kv(const abl_report *r, const char *key)
{
    for (size_t i = 0; i < r->nmeta; i++)
        if (strcmp(r->meta[i].key, key) == 0) return &r->meta[i];
    for (size_t i = 0; i < r->nsummary; i++)
        if (strcmp(r->summary[i].key, key) == 0) return &r->summary[i];
    return NULL;
}

/* The overview: one row per report, its label and the compared meta/summary values. */
static abl_report *set_overview(const abl_report_set *s)
{
    abl_report *o = abl_report_new(s->title, s->set_key);
    abl_status st = o != NULL ? abl_report_column(o, s->label_key, s->label_header, ABL_ALIGN_LEFT) : ABL_ERR_NO_MEMORY;
    for (size_t k = 0; st == ABL_OK && k < s->ncompare; k++)
        st = abl_report_column(o, s->compare[k].key, s->compare[k].header, ABL_ALIGN_RIGHT);
    for (size_t i = 0; st == ABL_OK && i < s->n; i++) {
        st = abl_report_row(o);
        if (st == ABL_OK) st = abl_report_cell(o, s->labels[i], NULL, NULL);
        for (size_t k = 0; st == ABL_OK && k < s->ncompare; k++) {
            const kv_line *kv = find_kv(s->reports[i], s->compare[k].key);
            st = abl_report_cell(o, kv != NULL ? kv->text : "", kv != NULL ? kv->json : "null", NULL);
        }
    }
    if (st != ABL_OK) {
        abl_report_free(o);
        return NULL;
    }
    return o;
}

static bool has_note(const abl_report *r, const char *note)
{
    for (size_t i = 0; i < r->nnotes; i++)
        if (strcmp(r->notes[i], note) == 0) return true;
    return false;
}

/* One section for people: the report titled "<title>: <label>"; a note the last section repeats is
 * left to it, so that notes common to all sections are printed once, at the end. */
static abl_status render_section(const abl_report_set *s, size_t i, abl_output fmt, size_t width, sbuf *b)
{
    const abl_report *r = s->reports[i], *last = s->reports[s->n - 1];
    abl_report view = *r;
    size_t tl = strlen(r->title) + strlen(s->labels[i]) + 3;
    char *title = malloc(tl);
    char **notes = calloc(r->nnotes + 1, sizeof *notes);
    if (title == NULL || notes == NULL) {
        free(title);
        free(notes);
        return ABL_ERR_NO_MEMORY;
    }
    snprintf(title, tl, "%s: %s", r->title, s->labels[i]);
    view.title = title;
    view.notes = notes;
    view.nnotes = 0;
    for (size_t k = 0; k < r->nnotes; k++)
        if (r == last || !has_note(last, r->notes[k])) notes[view.nnotes++] = r->notes[k];
    if (fmt != ABL_OUT_LATEX) block_start(b);
    abl_status st = render_into(&view, fmt, width, b);
    free(title);
    free(notes);
    return st;
}

/* CSV: one table, the label first on every row (the reports share their columns). */
static abl_status render_set_csv(const abl_report_set *s, sbuf *b)
{
    const abl_report *first = s->reports[0];
    for (size_t i = 1; i < s->n; i++) {
        if (s->reports[i]->ncols != first->ncols) return ABL_ERR_INVALID_ARGUMENT;
        for (size_t c = 0; c < first->ncols; c++)
            if (strcmp(s->reports[i]->cols[c].key, first->cols[c].key) != 0) return ABL_ERR_INVALID_ARGUMENT;
    }
    csv_field(b, s->label_key);
    for (size_t c = 0; c < first->ncols; c++) {
        sb_putc(b, ',');
        csv_column_header(b, &first->cols[c]);
    }
    sb_putc(b, '\n');
    /* A column is numeric when it is so in any of the reports: one type for the whole table. */
    bool *numeric = calloc(first->ncols + 1, sizeof *numeric);
    if (numeric == NULL) return ABL_ERR_NO_MEMORY;
    for (size_t i = 0; i < s->n; i++)
        for (size_t c = 0; c < first->ncols; c++)
            numeric[c] = numeric[c] || column_numeric(s->reports[i], c);
    for (size_t i = 0; i < s->n; i++) {
        const abl_report *r = s->reports[i];
        for (size_t w = 0; w < r->nrows; w++) {
            csv_field(b, s->labels[i]);
            for (size_t c = 0; c < r->ncols; c++) {
                sb_putc(b, ',');
                csv_column_cell(b, r, w, c, numeric[c]);
            }
            sb_putc(b, '\n');
        }
    }
    free(numeric);
    return ABL_OK;
}

/* JSON: {"<labels_key>": [labels], "<set_key>": [each report's own object, indented]}. */
static abl_status render_set_json(const abl_report_set *s, sbuf *b)
{
    sb_puts(b, "{\n  \"schema_version\": " ABL_REPORT_SCHEMA_VERSION_TEXT ",\n  ");
    json_string(b, s->labels_key);
    sb_puts(b, ": [");
    for (size_t i = 0; i < s->n; i++) {
        if (i > 0) sb_puts(b, ", ");
        json_string(b, s->labels[i]);
    }
    sb_puts(b, "],\n  ");
    json_string(b, s->set_key);
    sb_puts(b, ": [\n");
    for (size_t i = 0; i < s->n; i++) {
        sbuf one = {NULL, 0, 0, false};
        abl_status st = render_into(s->reports[i], ABL_OUT_JSON, 0, &one);
        if (st != ABL_OK) {
            free(one.p);
            return st;
        }
        /* JSON strings hold no raw newline, so indenting line by line is safe. */
        for (size_t k = 0; k < one.len;) {
            size_t e = k;
            while (e < one.len && one.p[e] != '\n') e++;
            sb_puts(b, "    ");
            sb_putn(b, one.p + k, e - k);
            if (e + 1 >= one.len && i + 1 < s->n) sb_putc(b, ',');
            sb_putc(b, '\n');
            k = e + 1;
        }
        free(one.p);
    }
    sb_puts(b, "  ]\n}\n");
    return ABL_OK;
}

abl_status abl_report_set_write(const abl_report_set *s, abl_output fmt, size_t width, FILE *out)
{
    if (s == NULL || out == NULL || s->n == 0 || s->reports == NULL || s->labels == NULL ||
        (fmt != ABL_OUT_TEXT && fmt != ABL_OUT_MARKDOWN && fmt != ABL_OUT_CSV && fmt != ABL_OUT_JSON &&
         fmt != ABL_OUT_LATEX))
        return ABL_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < s->n; i++)
        if (s->reports[i] == NULL || s->labels[i] == NULL) return ABL_ERR_INVALID_ARGUMENT;
    sbuf b = {NULL, 0, 0, false};
    abl_status st = ABL_OK;
    if (fmt == ABL_OUT_CSV) {
        st = render_set_csv(s, &b);
    } else if (fmt == ABL_OUT_JSON) {
        st = render_set_json(s, &b);
    } else {
        if (s->ncompare > 0) {
            abl_report *o = set_overview(s);
            st = o != NULL ? render_into(o, fmt, width, &b) : ABL_ERR_NO_MEMORY;
            abl_report_free(o);
        }
        for (size_t i = 0; st == ABL_OK && i < s->n; i++)
            st = render_section(s, i, fmt, width, &b);
    }
    if (st != ABL_OK) {
        free(b.p);
        return st;
    }
    return write_out(&b, out);
}
