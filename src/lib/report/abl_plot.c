/* alibi-blind: the chart model and its PLplot renderer (PNG and PDF through cairo, SVG through
 * PLplot's own svg driver). */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/report/plot.h"
#include "abl_internal.h"
#ifdef ABL_HAVE_PLPLOT
#include <plplot.h>
#endif

/* ---------------------------------------------------------------- devices */

static const char *const device_names[] = {"png", "svg", "pdf"};
#ifdef ABL_HAVE_PLPLOT
/* PLplot's driver for each: cairo for raster and PDF (antialiased, real fonts), PLplot's own svg
 * driver for SVG (plain <polyline>/<text> elements, no generated glyph ids). */
static const char *const device_drivers[] = {"pngcairo", "svg", "pdfcairo"};
#endif

const char *abl_plot_device_name(abl_plot_device d)
{
    return (unsigned)d < 3 ? device_names[d] : "?";
}

abl_status abl_plot_device_parse(const char *name, abl_plot_device *out)
{
    if (name == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < 3; i++)
        if (strcmp(name, device_names[i]) == 0) {
            *out = (abl_plot_device)i;
            return ABL_OK;
        }
    return ABL_ERR_INVALID_ARGUMENT;
}

abl_status abl_plot_device_from_path(const char *path, abl_plot_device *out)
{
    if (path == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot == NULL || (slash != NULL && dot < slash) || strlen(dot) != 4)
        return ABL_ERR_INVALID_ARGUMENT;
    /* The extension in any case: compared letter by letter, lower-cased, with the device names. */
    for (int i = 0; i < 3; i++) {
        int k = 0;
        while (k < 3 && tolower((unsigned char)dot[1 + k]) == device_names[i][k])
            k++;
        if (k == 3) {
            *out = (abl_plot_device)i;
            return ABL_OK;
        }
    }
    return ABL_ERR_INVALID_ARGUMENT;
}

/* ---------------------------------------------------------------- colours */

abl_rgb abl_plot_categorical(int i)
{
    /* Okabe & Ito, "Color Universal Design" (2008): blue, bluish green, orange, reddish purple,
     * sky blue. Yellow (#F0E442) is too light on white; vermillion (#D55E00) is kept for τ and
     * black for text and frames. */
    static const abl_rgb okabe_ito[] = {{0x00, 0x72, 0xB2}, {0x00, 0x9E, 0x73}, {0xE6, 0x9F, 0x00},
                                        {0xCC, 0x79, 0xA7}, {0x56, 0xB4, 0xE9}};
    int n = (int)(sizeof okabe_ito / sizeof okabe_ito[0]);
    if (i < 0)
        i = 0;
    return okabe_ito[i % n];
}

abl_rgb abl_plot_sequential(int i, int n)
{
    /* viridis (matplotlib) at 0, 0.1, ..., 1.0; used on [0, 0.9]: the last tenth is too light. */
    static const unsigned char v[11][3] = {{0x44, 0x01, 0x54}, {0x48, 0x24, 0x75}, {0x41, 0x44, 0x87},
                                           {0x35, 0x5f, 0x8d}, {0x2a, 0x78, 0x8e}, {0x21, 0x91, 0x8c},
                                           {0x22, 0xa8, 0x84}, {0x44, 0xbf, 0x70}, {0x7a, 0xd1, 0x51},
                                           {0xbd, 0xdf, 0x26}, {0xfd, 0xe7, 0x25}};
    double t = n > 1 ? 0.9 * (double)i / (double)(n - 1) : 0.0;
    if (t < 0)
        t = 0;
    if (t > 0.9)
        t = 0.9;
    double pos = t * 10.0;
    int k = (int)pos;
    if (k > 9)
        k = 9;
    double f = pos - k;
    abl_rgb c;
    c.r = (unsigned char)lround(v[k][0] + f * (v[k + 1][0] - v[k][0]));
    c.g = (unsigned char)lround(v[k][1] + f * (v[k + 1][1] - v[k][1]));
    c.b = (unsigned char)lround(v[k][2] + f * (v[k + 1][2] - v[k][2]));
    return c;
}

/* ---------------------------------------------------------------- chart model */

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static int dup_failed(const char *src, const char *copy)
{
    return src != NULL && copy == NULL;
}

abl_status abl_plot_init(abl_plot *p, int rows, int cols, const char *title)
{
    if (p == NULL || rows < 1 || cols < 1 || rows > 64 || cols > 64)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    p->panels = calloc((size_t)rows * (size_t)cols, sizeof *p->panels);
    p->title = dup_or_null(title);
    if (p->panels == NULL || dup_failed(title, p->title)) {
        free(p->panels);
        free(p->title);
        memset(p, 0, sizeof *p);
        return ABL_ERR_NO_MEMORY;
    }
    p->rows = rows;
    p->cols = cols;
    return ABL_OK;
}

static void panel_free(abl_plot_panel *pn)
{
    free(pn->title);
    free(pn->xlabel);
    free(pn->ylabel);
    for (size_t i = 0; i < pn->nseries; i++) {
        free(pn->series[i].label);
        free(pn->series[i].x);
        free(pn->series[i].y);
    }
    free(pn->series);
    for (size_t i = 0; i < pn->nhlines; i++)
        free(pn->hlines[i].label);
    free(pn->hlines);
    free(pn->markers);
    free(pn->marker_label);
    for (size_t i = 0; i < pn->nbands; i++)
        free(pn->bands[i].label);
    free(pn->bands);
    free(pn->map.cells);
    memset(pn, 0, sizeof *pn);
}

void abl_plot_free(abl_plot *p)
{
    if (p == NULL)
        return;
    for (int i = 0; p->panels != NULL && i < p->rows * p->cols; i++)
        panel_free(&p->panels[i]);
    free(p->panels);
    free(p->title);
    free(p->caption);
    memset(p, 0, sizeof *p);
}

abl_status abl_plot_set_caption(abl_plot *p, const char *caption)
{
    char *c = dup_or_null(caption);
    if (dup_failed(caption, c))
        return ABL_ERR_NO_MEMORY;
    free(p->caption);
    p->caption = c;
    return ABL_OK;
}

abl_status abl_plot_set_marker_label(abl_plot_panel *pn, const char *label)
{
    char *c = dup_or_null(label);
    if (pn == NULL || dup_failed(label, c)) {
        free(c);
        return pn == NULL ? ABL_ERR_INVALID_ARGUMENT : ABL_ERR_NO_MEMORY;
    }
    free(pn->marker_label);
    pn->marker_label = c;
    return ABL_OK;
}

abl_status abl_plot_axes(abl_plot_panel *pn, const char *title, const char *xlabel, const char *ylabel, double xmin,
                         double xmax, double ymin, double ymax, int xlog, int ylog)
{
    if (pn == NULL || !(xmin < xmax) || !(ymin < ymax) || (xlog && !(xmin > 0)) || (ylog && !(ymin > 0)) ||
        !isfinite(xmax) || !isfinite(ymax) || !isfinite(xmin) || !isfinite(ymin))
        return ABL_ERR_INVALID_ARGUMENT;
    char *t = dup_or_null(title), *xl = dup_or_null(xlabel), *yl = dup_or_null(ylabel);
    if (dup_failed(title, t) || dup_failed(xlabel, xl) || dup_failed(ylabel, yl)) {
        free(t);
        free(xl);
        free(yl);
        return ABL_ERR_NO_MEMORY;
    }
    free(pn->title);
    free(pn->xlabel);
    free(pn->ylabel);
    pn->title = t;
    pn->xlabel = xl;
    pn->ylabel = yl;
    pn->xmin = xmin;
    pn->xmax = xmax;
    pn->ymin = ymin;
    pn->ymax = ymax;
    pn->xlog = xlog;
    pn->ylog = ylog;
    return ABL_OK;
}

/* Grow an array of `size`-byte elements to hold n + 1 (doubling). */
static int grow(void **arr, size_t n, size_t size)
{
    if ((n & (n - 1)) != 0 && n != 0)
        return 0; /* capacity is the next power of two >= n, room left */
    size_t cap = n == 0 ? 4 : 2 * n;
    void *p = realloc(*arr, cap * size);
    if (p == NULL)
        return -1;
    *arr = p;
    return 0;
}

abl_status abl_plot_add_series(abl_plot_panel *pn, const char *label, const double *x, const double *y, size_t n,
                               abl_rgb colour, abl_plot_series **out)
{
    if (pn == NULL || n == 0 || n > ABL_PLOT_MAX_POINTS || x == NULL || y == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    if (grow((void **)&pn->series, pn->nseries, sizeof *pn->series) != 0)
        return ABL_ERR_NO_MEMORY;
    abl_plot_series *s = &pn->series[pn->nseries];
    memset(s, 0, sizeof *s);
    s->label = dup_or_null(label);
    s->x = malloc(n * sizeof *s->x);
    s->y = malloc(n * sizeof *s->y);
    if (dup_failed(label, s->label) || s->x == NULL || s->y == NULL) {
        free(s->label);
        free(s->x);
        free(s->y);
        return ABL_ERR_NO_MEMORY;
    }
    memcpy(s->x, x, n * sizeof *x);
    memcpy(s->y, y, n * sizeof *y);
    s->n = n;
    s->colour = colour;
    s->width = 2.0;
    pn->nseries++;
    if (out != NULL)
        *out = s;
    return ABL_OK;
}

abl_status abl_plot_add_hline(abl_plot_panel *pn, double y, const char *label)
{
    if (pn == NULL || !isfinite(y))
        return ABL_ERR_INVALID_ARGUMENT;
    if (grow((void **)&pn->hlines, pn->nhlines, sizeof *pn->hlines) != 0)
        return ABL_ERR_NO_MEMORY;
    char *l = dup_or_null(label);
    if (dup_failed(label, l))
        return ABL_ERR_NO_MEMORY;
    pn->hlines[pn->nhlines].y = y;
    pn->hlines[pn->nhlines].label = l;
    pn->nhlines++;
    return ABL_OK;
}

abl_status abl_plot_add_marker(abl_plot_panel *pn, double x, double y)
{
    if (pn == NULL || !isfinite(x) || !isfinite(y))
        return ABL_ERR_INVALID_ARGUMENT;
    if (grow((void **)&pn->markers, pn->nmarkers, sizeof *pn->markers) != 0)
        return ABL_ERR_NO_MEMORY;
    pn->markers[pn->nmarkers].x = x;
    pn->markers[pn->nmarkers].y = y;
    pn->nmarkers++;
    return ABL_OK;
}

abl_status abl_plot_add_band(abl_plot_panel *pn, double y0, double y1, const char *label)
{
    if (pn == NULL || !(y0 < y1))
        return ABL_ERR_INVALID_ARGUMENT;
    if (grow((void **)&pn->bands, pn->nbands, sizeof *pn->bands) != 0)
        return ABL_ERR_NO_MEMORY;
    char *l = dup_or_null(label);
    if (dup_failed(label, l))
        return ABL_ERR_NO_MEMORY;
    pn->bands[pn->nbands].y0 = y0;
    pn->bands[pn->nbands].y1 = y1;
    pn->bands[pn->nbands].label = l;
    pn->nbands++;
    return ABL_OK;
}

/* ---------------------------------------------------------------- the data as CSV */

static void csv_label(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s != NULL && *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_map(FILE *f, int panel, const abl_plot_panel *pn)
{
    const abl_plot_map *m = &pn->map;
    double cw = (pn->xmax - pn->xmin) / (double)m->cols, ch = (pn->ymax - pn->ymin) / (double)m->rows;
    for (size_t r = 0; r < m->rows; r++)
        for (size_t c = 0; c < m->cols; c++)
            fprintf(f, "%d,cell,,%.17g,%.17g,%.17g\n", panel, pn->xmin + (double)c * cw, pn->ymin + (double)r * ch,
                    m->cells[r * m->cols + c]);
}

abl_status abl_plot_data_csv(const abl_plot *p, FILE *f)
{
    if (p == NULL || f == NULL || p->panels == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    fputs("panel,element,label,x,y,value\n", f);
    for (int i = 0; i < p->rows * p->cols; i++) {
        const abl_plot_panel *pn = &p->panels[i];
        for (size_t s = 0; s < pn->nseries; s++)
            for (size_t k = 0; k < pn->series[s].n; k++) {
                fprintf(f, "%d,series,", i + 1);
                csv_label(f, pn->series[s].label);
                fprintf(f, ",%.17g,%.17g,\n", pn->series[s].x[k], pn->series[s].y[k]);
            }
        for (size_t h = 0; h < pn->nhlines; h++) {
            fprintf(f, "%d,line,", i + 1);
            csv_label(f, pn->hlines[h].label);
            fprintf(f, ",,%.17g,\n", pn->hlines[h].y);
        }
        for (size_t m = 0; m < pn->nmarkers; m++)
            fprintf(f, "%d,marker,,%.17g,%.17g,\n", i + 1, pn->markers[m].x, pn->markers[m].y);
        for (size_t b = 0; b < pn->nbands; b++) {
            fprintf(f, "%d,band,", i + 1);
            csv_label(f, pn->bands[b].label);
            fprintf(f, ",,%.17g,%.17g\n", pn->bands[b].y0, pn->bands[b].y1);
        }
        if (pn->map.cells != NULL)
            csv_map(f, i + 1, pn);
    }
    return ferror(f) ? ABL_ERR_IO : ABL_OK;
}

/* ---------------------------------------------------------------- layout */

void abl_plot_render_options_default(abl_plot_render_options *o)
{
    o->device = ABL_PLOT_PNG;
    o->width = ABL_PLOT_DEFAULT_WIDTH;
    o->height = ABL_PLOT_DEFAULT_HEIGHT;
}

/* The page, in normalised device coordinates (0..1, y up): the grid of panels sits in
 * [GRID_LEFT, right] x [GRID_BOTTOM, GRID_TOP]; a legend takes the right LEGEND_SHARE. */
#define GRID_LEFT 0.085
#define GRID_RIGHT 0.975
#define GRID_BOTTOM 0.115
#define GRID_TOP_TITLE 0.885
#define GRID_TOP_CAPTION 0.855
#define LEGEND_RIGHT 0.75
#define GAP_X 0.05
#define GAP_Y 0.085

typedef struct vp { double x0, x1, y0, y1; } vp;

/* Panel i's viewport; aspect: the page's width over its height (square panels need it). */
static vp panel_viewport(const abl_plot *p, int i, double aspect)
{
    double right = p->legend ? LEGEND_RIGHT : GRID_RIGHT;
    double top = p->caption != NULL ? GRID_TOP_CAPTION : GRID_TOP_TITLE;
    double left = GRID_LEFT, bottom = GRID_BOTTOM;
    double gx = p->cols > 1 ? GAP_X * (p->cols > 4 ? 0.5 : 1.0) : 0.0;
    double gy = p->rows > 1 ? GAP_Y * (p->rows > 4 ? 0.6 : 1.0) : 0.0;
    double w = (right - left - gx * (p->cols - 1)) / p->cols;
    double h = (top - bottom - gy * (p->rows - 1)) / p->rows;
    int r = i / p->cols, c = i % p->cols;
    vp v;
    v.x0 = left + c * (w + gx);
    v.x1 = v.x0 + w;
    v.y1 = top - r * (h + gy);
    v.y0 = v.y1 - h;
    if (p->square) { /* the shorter side wins: a wide cell is narrowed about its centre, a tall one lowered */
        double wide = w * aspect;
        if (wide > h) {
            double cx = 0.5 * (v.x0 + v.x1), half = 0.5 * h / aspect;
            v.x0 = cx - half;
            v.x1 = cx + half;
        } else {
            v.y0 = v.y1 - wide;
        }
    }
    return v;
}

void abl_plot_panel_frame(const abl_plot *p, int panel, int width, int height, abl_plot_frame *out)
{
    vp v = panel_viewport(p, panel, height > 0 ? (double)width / height : 1.0);
    out->left = v.x0 * width;
    out->right = v.x1 * width;
    out->top = (1.0 - v.y1) * height;
    out->bottom = (1.0 - v.y0) * height;
}

/*
 * PLplot copies a string it draws into fixed-size buffers of its own (a 10,000-character legend entry
 * crashes plinit of the next picture), so a text drawn on a picture is cut for display at
 * ABL_PLOT_TEXT_MAX bytes, on a UTF-8 character boundary, and the cut is marked with U+2026 (spec §13's
 * rule for display cuts; the report's tables carry the whole text).
 */
#define ABL_PLOT_TEXT_MAX 240

/* The length of the exponent at s (just after a '^'): "(...)" whole, else an optional sign and a run of
 * digits, letters, '/' and '.' (a '.' only when a digit follows: "2^-0.5." ends a sentence). */
static size_t exponent_len(const char *s, size_t avail)
{
    size_t k = 0;
    if (avail > 0 && s[0] == '(') {
        while (k < avail && s[k] != ')')
            k++;
        return k < avail ? k + 1 : 0;
    }
    if (avail > 0 && (s[0] == '-' || s[0] == '+'))
        k = 1;
    size_t start = k;
    while (k < avail && (isalnum((unsigned char)s[k]) || s[k] == '/' ||
                         (s[k] == '.' && k + 1 < avail && isdigit((unsigned char)s[k + 1]))))
        k++;
    return k > start ? k : 0;
}

char *abl_plot_text(const char *s)
{
    if (s == NULL)
        s = "";
    size_t len = strlen(s), keep = len;
    if (len > ABL_PLOT_TEXT_MAX) {
        keep = ABL_PLOT_TEXT_MAX;
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--; /* never split a UTF-8 sequence */
    }
    /* Each byte at most doubles ('#'), and each exponent adds "#u" and "#d" for its '^' and >= 1 byte. */
    char *out = malloc(3 * keep + 8);
    if (out == NULL)
        return NULL;
    char *o = out;
    for (size_t i = 0; i < keep; i++) {
        size_t e = s[i] == '^' ? exponent_len(s + i + 1, keep - i - 1) : 0;
        if (e > 0) {
            int paren = s[i + 1] == '(';
            memcpy(o, "#u", 2);
            o += 2;
            for (size_t k = paren; k < e - (size_t)paren; k++)
                *o++ = s[i + 1 + k];
            memcpy(o, "#d", 2);
            o += 2;
            i += e;
            continue;
        }
        *o++ = s[i];
        if (s[i] == '#')
            *o++ = '#';
    }
    if (keep < len) {
        memcpy(o, "\xe2\x80\xa6", 3); /* U+2026 */
        o += 3;
    }
    *o = '\0';
    return out;
}

int abl_plot_available(void)
{
#ifdef ABL_HAVE_PLPLOT
    return 1;
#else
    return 0;
#endif
}

#ifndef ABL_HAVE_PLPLOT
/* Built without PLplot (-DABL_PLOT=OFF, or AUTO without libplplot-dev): the chart model works, drawing
 * refuses with the packages that would make it work. */
abl_status abl_plot_render(const abl_plot *p, const abl_plot_render_options *o, char **buf, size_t *len, char **msg)
{
    (void)p;
    (void)o;
    if (buf != NULL)
        *buf = NULL;
    if (len != NULL)
        *len = 0;
            abl_set_error(msg, "%s", ABL_PLOT_MISSING);
    return ABL_ERR_UNSUPPORTED;
}
#else
/* ---------------------------------------------------------------- PLplot */

static pthread_mutex_t plplot_lock = PTHREAD_MUTEX_INITIALIZER;
static jmp_buf plplot_jmp;
static int plplot_broken;              /* a fatal PLplot error left its state undefined */
static char *plplot_message;            /* PLplot's last message, whole (heap; under plplot_lock) */

static void plplot_message_set(const char *msg)
{
    free(plplot_message);
    plplot_message = abl_strf("%s", msg);
}

static const char *plplot_message_text(void)
{
    return plplot_message != NULL ? plplot_message : "out of memory";
}

static int on_plexit(PLCHAR_VECTOR msg)
{
    plplot_message_set(msg != NULL ? msg : "fatal error");
    longjmp(plplot_jmp, 1);
}

static void on_plabort(PLCHAR_VECTOR msg)
{
    if (plplot_message == NULL || plplot_message[0] == '\0')
        plplot_message_set(msg != NULL ? msg : "error");
}

/* Marker glyphs (UTF-8), drawn as text: 1-based index of abl_plot_series.symbol. */
static const char *const glyphs[] = {"●", "■", "▲", "◆", "▼", "○", "□", "△"};
#define NGLYPHS ((int)(sizeof glyphs / sizeof glyphs[0]))

static const char *glyph(int symbol)
{
    return glyphs[(symbol - 1) % NGLYPHS];
}

enum { COL_BG = 0, COL_FG = 1, COL_GRID = 2, COL_TAU = 3, COL_BAND = 4, COL_MAP = 5, COL_SERIES = 6 };

static void set_colour(int idx, abl_rgb c)
{
    plscol0(idx, c.r, c.g, c.b);
}

static double tx(const abl_plot_panel *pn, double x)
{
    return pn->xlog ? log10(x) : x;
}

static double ty(const abl_plot_panel *pn, double y)
{
    return pn->ylog ? log10(y) : y;
}

static char *pl_text(const char *s)
{
    return abl_plot_text(s);
}

static int put_text(const char *side, double disp, double pos, double just, const char *text)
{
    char *t = pl_text(text);
    if (t == NULL)
        return -1;
    plmtex(side, disp, pos, just, t);
    free(t);
    return 0;
}

/* The map's shades: no weight zero is the page's white; some, a middle blue; all, a dark blue; the masked
 * future a light grey: four lightnesses apart in greyscale print (white 255, grey 224, 163, 45). */
static const abl_rgb map_some = {0x6B, 0xAE, 0xD6}, map_all = {0x08, 0x30, 0x6B}, map_masked = {0xE0, 0xE0, 0xE0};

static int map_level(double v)
{
    return v <= 0 ? 0 : v >= 1 ? 2 : 1;
}

/* The causal mask: the triangle where the key comes after the query (x > y), grey, edged by the diagonal. */
static void draw_mask(const abl_plot_panel *pn)
{
    PLFLT xs[3] = {pn->xmin, pn->xmax, pn->xmax}, ys[3] = {pn->ymin, pn->ymin, pn->ymax};
    set_colour(COL_MAP, map_masked);
    plcol0(COL_MAP);
    plfill(3, xs, ys);
    PLFLT dx[2] = {pn->xmin, pn->xmax}, dy[2] = {pn->ymin, pn->ymax};
    plcol0(COL_FG);
    plwidth(0.5);
    plline(2, dx, dy);
}

static int draw_map(const abl_plot_panel *pn)
{
    const abl_plot_map *m = &pn->map;
    if (m->cells == NULL || m->rows == 0 || m->cols == 0)
        return 0;
    /* Runs of cells with the same shade become one rectangle. */
    double cw = (pn->xmax - pn->xmin) / (double)m->cols, ch = (pn->ymax - pn->ymin) / (double)m->rows;
    for (size_t r = 0; r < m->rows; r++) {
        size_t c = 0;
        while (c < m->cols) {
            int level = map_level(m->cells[r * m->cols + c]);
            size_t e = c + 1;
            while (e < m->cols && map_level(m->cells[r * m->cols + e]) == level)
                e++;
            if (level > 0) {
                PLFLT xs[4], ys[4];
                xs[0] = xs[3] = pn->xmin + c * cw;
                xs[1] = xs[2] = pn->xmin + e * cw;
                ys[0] = ys[1] = pn->ymin + r * ch;
                ys[2] = ys[3] = pn->ymin + (r + 1) * ch;
                set_colour(COL_MAP, level == 2 ? map_all : map_some);
                plcol0(COL_MAP);
                plfill(4, xs, ys);
            }
            c = e;
        }
    }
    if (m->causal)
        draw_mask(pn);
    return 0;
}

/* The shaded bands behind everything else (Table 8's * and ** rows), each labelled in its upper part.
 * w: the panel's world window (axis units, log10 on a log axis). */
static int draw_bands(const abl_plot_panel *pn, vp w, double chr)
{
    for (size_t b = 0; b < pn->nbands; b++) {
        double b0 = fmax(ty(pn, pn->bands[b].y0), w.y0), b1 = fmin(ty(pn, pn->bands[b].y1), w.y1);
        if (b0 >= b1)
            continue;
        PLFLT xs[4] = {w.x0, w.x1, w.x1, w.x0}, ys[4] = {b0, b0, b1, b1};
        unsigned char g = (unsigned char)(0xF2 - 0x10 * (b % 3)); /* each band a little darker */
        set_colour(COL_BAND, (abl_rgb){g, g, g});
        plcol0(COL_BAND);
        plfill(4, xs, ys);
        if (pn->bands[b].label != NULL) {
            char *t = pl_text(pn->bands[b].label);
            if (t == NULL)
                return -1;
            plcol0(COL_FG);
            plschr(0, chr * 0.85);
            plptex(w.x1 - 0.01 * (w.x1 - w.x0), b0 + 0.72 * (b1 - b0), 1, 0, 1.0, t); /* upper part of the band */
            plschr(0, chr);
            free(t);
        }
    }
    return 0;
}

/* The data: each series as a line in its own colour and dash pattern, with its glyph at every point (or
 * every k-th) when it has one. */
static void draw_series(const abl_plot_panel *pn, double chr, int svg)
{
    for (size_t s = 0; s < pn->nseries; s++) {
        const abl_plot_series *se = &pn->series[s];
        PLFLT xs[ABL_PLOT_MAX_POINTS], ys[ABL_PLOT_MAX_POINTS], gx[ABL_PLOT_MAX_POINTS], gy[ABL_PLOT_MAX_POINTS];
        size_t every = se->symbol_every > 1 ? (size_t)se->symbol_every : 1, ng = 0;
        for (size_t k = 0; k < se->n; k++) {
            xs[k] = tx(pn, se->x[k]);
            ys[k] = ty(pn, se->y[k]);
            if (k >= (size_t)se->symbol_offset && (k - (size_t)se->symbol_offset) % every == 0) {
                gx[ng] = xs[k];
                gy[ng++] = ys[k];
            }
        }
        set_colour(COL_SERIES + (int)s, se->colour);
        plcol0(COL_SERIES + (int)s);
        plwidth(se->width > 0 ? se->width : 2.0);
        pllsty(!svg && se->style >= 1 && se->style <= 8 ? se->style : 1); /* SVG: svg_dashes */
        if (se->n > 1)
            plline((PLINT)se->n, xs, ys);
        pllsty(1);
        if (se->symbol > 0 && ng > 0) {
            plschr(0, chr * 0.8);
            plstring((PLINT)ng, gx, gy, glyph(se->symbol));
            plschr(0, chr);
        }
    }
}

/* The horizontal lines (τ): dashed, labelled just above at the right end, or in the legend when the
 * picture has one (a label inside the frame sits on some data); those outside the window are left out. */
static int draw_hlines(const abl_plot_panel *pn, vp w, double chr, int in_legend, int svg)
{
    plwidth(2.0);
    for (size_t h = 0; h < pn->nhlines; h++) {
        double y = ty(pn, pn->hlines[h].y);
        if (y < w.y0 || y > w.y1)
            continue;
        PLFLT xs[2] = {w.x0, w.x1}, ys[2] = {y, y};
        plcol0(COL_TAU);
        pllsty(svg ? 1 : 2);
        plline(2, xs, ys);
        pllsty(1);
        if (pn->hlines[h].label != NULL && !in_legend) {
            char *t = pl_text(pn->hlines[h].label);
            if (t == NULL)
                return -1;
            plschr(0, chr * 0.9);
            plptex(w.x1 - 0.01 * (w.x1 - w.x0), y + 0.015 * (w.y1 - w.y0), 1, 0, 1.0, t);
            plschr(0, chr);
            free(t);
        }
    }
    return 0;
}

/* The markers (δ): open circles, only those inside the window. */
static void draw_markers(const abl_plot_panel *pn, vp w)
{
    plwidth(1.5);
    plcol0(COL_FG);
    plssym(0, 0.8);
    for (size_t m = 0; m < pn->nmarkers; m++) {
        PLFLT x = tx(pn, pn->markers[m].x), y = ty(pn, pn->markers[m].y);
        if (x >= w.x0 && x <= w.x1 && y >= w.y0 && y <= w.y1)
            plpoin(1, &x, &y, 4);
    }
}

/* A log y axis's numbers, 10^k, only up to ynum_max: above it the panel holds regions whose height is
 * not a value (δ beyond binary64), so the axis gives it no scale. */
static int log_numbers(const abl_plot_panel *pn, vp w)
{
    double top = log10(pn->ynum_max);
    for (double k = ceil(w.y0); k <= floor(top) + 1e-9; k++) {
        char *t = abl_strf("10^%d", (int)k);
        int bad = t == NULL || put_text("lv", 0.8, (k - w.y0) / (w.y1 - w.y0), 1.0, t) != 0;
        free(t);
        if (bad)
            return -1;
    }
    return 0;
}

/* The frame with its ticks and numbers, the axis labels and the panel's title; smaller text for small
 * multiples. */
static int draw_frame(const abl_plot *p, const abl_plot_panel *pn, vp w, double chr)
{
    plwidth(1.0);
    plcol0(COL_FG);
    const char *xo = pn->xlog ? "bcnstl" : "bcnst", *yo = pn->ylog ? "bcnstvl" : "bcnstv";
    int many = p->rows * p->cols > 4;
    double small = many ? 0.6 : 1.0;
    plschr(0, chr * small);
    /* Small multiples: two intervals per axis, so the numbers do not collide. */
    int own_numbers = pn->ylog && pn->ynum_max > 0;
    if (own_numbers)
        yo = "bcstvl";
    plbox(xo, many && !pn->xlog ? (w.x1 - w.x0) / 2 : 0, 0, yo, many && !pn->ylog ? (w.y1 - w.y0) / 2 : 0, 0);
    if (own_numbers && log_numbers(pn, w) != 0)
        return -1;
    /* log x: the numbers carry exponents, the label goes lower */
    if ((pn->xlabel && put_text("b", pn->xlog ? 3.2 : 2.6, 0.5, 0.5, pn->xlabel) != 0) ||
        (pn->ylabel && put_text("l", many ? 2.8 : 4.2, 0.5, 0.5, pn->ylabel) != 0) ||
        (pn->title && put_text("t", 0.8, 0.5, 0.5, pn->title) != 0))
        return -1;
    plschr(0, chr);
    return 0;
}

/* One panel, under the caller's PLplot lock and setjmp: shaded bands and zero maps first, then the
 * grid, series, lines, markers, the frame last (each layer drawn over the one before). */
static int draw_panel(const abl_plot *p, int i, double chr, double aspect, int svg)
{
    const abl_plot_panel *pn = &p->panels[i];
    vp v = panel_viewport(p, i, aspect);
    plvpor(v.x0, v.x1, v.y0, v.y1);
    vp w = {tx(pn, pn->xmin), tx(pn, pn->xmax), ty(pn, pn->ymin), ty(pn, pn->ymax)};
    if (pn->yflip)
        plwind(w.x0, w.x1, w.y1, w.y0);
    else
        plwind(w.x0, w.x1, w.y0, w.y1);
    if (draw_bands(pn, w, chr) != 0 || draw_map(pn) != 0)
        return -1;
    plcol0(COL_GRID);
    plwidth(0.5);
    plbox(pn->xlog ? "gl" : "g", 0, 0, pn->ylog ? "gl" : "g", 0, 0);
    plwidth(1.0);
    draw_series(pn, chr, svg);
    if (draw_hlines(pn, w, chr, i == 0 && p->legend, svg) != 0)
        return -1;
    draw_markers(pn, w);
    return draw_frame(p, pn, w, chr);
}

/* The legend's entries: the first panel's series (every k-th of many, the first and last always), its
 * labelled horizontal lines (τ, dashed) and its markers (δ), as pllegend takes them. */
typedef struct legend_entries {
    PLINT n, *opt, *colours, *styles, *tcol, *snum;
    PLFLT *widths, *sscale;
    char **texts;
    const char **ctexts, **syms;
} legend_entries;

static void legend_free(legend_entries *e)
{
    for (PLINT k = 0; e->texts != NULL && k < e->n; k++)
        free(e->texts[k]);
    free(e->opt);
    free(e->colours);
    free(e->styles);
    free(e->tcol);
    free(e->snum);
    free(e->widths);
    free(e->sscale);
    free(e->texts);
    free(e->ctexts);
    free(e->syms);
}

static int legend_alloc(legend_entries *e, size_t n)
{
    memset(e, 0, sizeof *e);
    e->opt = calloc(n, sizeof *e->opt);
    e->colours = calloc(n, sizeof *e->colours);
    e->styles = calloc(n, sizeof *e->styles);
    e->tcol = calloc(n, sizeof *e->tcol);
    e->snum = calloc(n, sizeof *e->snum);
    e->widths = calloc(n, sizeof *e->widths);
    e->sscale = calloc(n, sizeof *e->sscale);
    e->texts = calloc(n, sizeof *e->texts);
    e->ctexts = calloc(n, sizeof *e->ctexts);
    e->syms = calloc(n, sizeof *e->syms);
    return e->opt && e->colours && e->styles && e->tcol && e->snum && e->widths && e->sscale && e->texts &&
                   e->ctexts && e->syms
               ? 0
               : -1;
}

/* Append one entry: a line of colour index col in style `style` (0: none) and/or the glyph sym. */
static int legend_add(legend_entries *e, PLINT col, int style, double width, const char *sym, const char *label)
{
    PLINT k = e->n++;
    e->opt[k] = (style > 0 ? PL_LEGEND_LINE : 0) | (sym != NULL ? PL_LEGEND_SYMBOL : 0);
    e->colours[k] = col;
    e->styles[k] = style > 0 ? style : 1;
    e->widths[k] = width;
    e->tcol[k] = COL_FG;
    e->snum[k] = 1;
    e->sscale[k] = 0.8;
    e->syms[k] = sym != NULL ? sym : "";
    e->texts[k] = pl_text(label);
    e->ctexts[k] = e->texts[k] != NULL ? e->texts[k] : "";
    return e->texts[k] != NULL ? 0 : -1;
}

static int legend_fill(const abl_plot_panel *pn, legend_entries *e)
{
    size_t n = pn->nseries, step = n > 24 ? (n + 15) / 16 : 1;
    int rc = 0;
    for (size_t s = 0; rc == 0 && s < n; s++) {
        if (!(s % step == 0 || s == n - 1))
            continue;
        const abl_plot_series *se = &pn->series[s];
        set_colour(COL_SERIES + (int)s, se->colour);
        rc = legend_add(e, COL_SERIES + (PLINT)s, se->style >= 1 ? se->style : 1, se->width > 0 ? se->width + 1 : 3.0,
                        se->symbol > 0 ? glyph(se->symbol) : NULL, se->label);
    }
    for (size_t h = 0; rc == 0 && h < pn->nhlines; h++)
        if (pn->hlines[h].label != NULL)
            rc = legend_add(e, COL_TAU, 2, 2.0, NULL, pn->hlines[h].label);
    return rc;
}

/* A map's legend, drawn by hand (pllegend's colour boxes have no edge, and white is one of the shades):
 * a framed swatch and its meaning per shade that appears. A bidirectional map (not causal) has no masked
 * keys: its legend lists the three shades it uses and says that nothing is masked. */
static int draw_map_legend(double chr, double top, int causal)
{
    static const char *const what[] = {"no weight exactly zero", "some weights zero", "every weight zero",
                                       "masked (key after query)"};
    abl_rgb shade[4] = {{255, 255, 255}, map_some, map_all, map_masked};
    plvpor(LEGEND_RIGHT + 0.02, 0.995, GRID_BOTTOM, top);
    plwind(0, 1, 0, 1);
    plschr(0, chr * 0.8);
    if (!causal) {
        char *t = pl_text("bidirectional: none masked");
        if (t == NULL)
            return -1;
        plcol0(COL_FG);
        plptex(0.0, 0.98 - 0.075 * 3 - 0.0225, 1, 0, 0.0, t);
        free(t);
    }
    for (int k = 0; k < (causal ? 4 : 3); k++) {
        double y1 = 0.98 - 0.075 * k, y0 = y1 - 0.045;
        PLFLT xs[5] = {0.0, 0.12, 0.12, 0.0, 0.0}, ys[5] = {y0, y0, y1, y1, y0};
        set_colour(COL_MAP, shade[k]);
        plcol0(COL_MAP);
        plfill(4, xs, ys);
        plcol0(COL_FG);
        plwidth(1.0);
        plline(5, xs, ys);
        char *t = pl_text(what[k]);
        if (t == NULL)
            return -1;
        plptex(0.16, 0.5 * (y0 + y1), 1, 0, 0.0, t);
        free(t);
    }
    plschr(0, chr);
    return 0;
}

static int draw_legend(const abl_plot *p, double chr, int svg)
{
    const abl_plot_panel *pn = &p->panels[0];
    double top = p->caption != NULL ? GRID_TOP_CAPTION : GRID_TOP_TITLE;
    if (!p->legend)
        return 0;
    if (pn->map.cells != NULL)
        return draw_map_legend(chr, top, pn->map.causal);
    legend_entries e;
    int rc = legend_alloc(&e, pn->nseries + pn->nhlines + 1);
    if (rc == 0)
        rc = legend_fill(pn, &e);
    if (rc == 0 && pn->nmarkers > 0)
        rc = legend_add(&e, COL_FG, 0, 1.0, "○", pn->marker_label != NULL ? pn->marker_label : "δ: where the line reaches τ");
    for (PLINT k = 0; svg && k < e.n; k++)
        e.styles[k] = 1; /* SVG: svg_dashes gives the samples their pattern */
    if (rc == 0 && e.n > 0) {
        double scale = e.n > 16 ? 0.5 : 0.62, spacing = e.n > 16 ? 1.3 : 1.6;
        if (svg) /* a browser's sans-serif runs wider than PLplot's estimate of it */
            scale *= 0.8;
        plvpor(LEGEND_RIGHT + 0.01, 0.995, GRID_BOTTOM, top);
        plwind(0, 1, 0, 1);
        PLFLT lw, lh;
        plschr(0, chr);
        pllegend(&lw, &lh, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
                 PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE, 0.0, 0.0, 0.05, COL_BG, COL_FG, 1, e.n, 1,
                 e.n, e.opt, 0.6, scale, spacing, 0.0, e.tcol, e.ctexts, NULL, NULL, NULL, NULL, e.colours, e.styles,
                 e.widths, e.colours, e.sscale, e.snum, e.syms);
    }
    legend_free(&e);
    return rc;
}

/*
 * cairo 1.16 stamps /CreationDate (D:YYYYMMDDHHMMSS...) into every PDF and PLplot cannot reach the
 * surface to set it: overwrite the digits in place with a fixed date of the same length (so every
 * xref offset stays valid) to keep the bytes reproducible.
 */
static void pdf_fix_date(char *buf, size_t len)
{
    static const char key[] = "/CreationDate (D:";
    size_t kl = sizeof key - 1;
    for (size_t i = 0; i + kl + 14 <= len; i++) {
        if (memcmp(buf + i, key, kl) != 0)
            continue;
        char *d = buf + i + kl;
        static const char fixed[] = "20000101000000";
        for (size_t k = 0; k < 14 && isdigit((unsigned char)d[k]); k++)
            d[k] = fixed[k];
        /* The time zone part (Z or +HH'MM'): its digits become 0 too. */
        for (size_t k = 14; i + kl + k < len && d[k] != ')'; k++)
            if (isdigit((unsigned char)d[k]))
                d[k] = '0';
        return;
    }
}

/*
 * PLplot draws a dashed line as many short solid pieces in its svg driver (its own dashing), which splits
 * one series into hundreds of elements. For SVG the lines are drawn solid and each <polyline> in a dashed
 * series' colour gets the pattern as stroke-dasharray here: one element per series, its pattern readable
 * from the file. The patterns are PLplot's pllsty ones (marks and spaces of 1, 1.5, 2, 2.5 mm), in the
 * page's units at about 4 per mm.
 */
static const char *const svg_dash[9] = {NULL, NULL, "4 4", "8 8", "8 4", "10 4 4 4", "8 8 4 4", "4 4 6 6 8 8",
                                        "4 4 6 4 8 4"};

static int hex_byte(const char *c)
{
    int v = 0;
    for (int k = 0; k < 2; k++) {
        int d = isdigit((unsigned char)c[k]) ? c[k] - '0' : toupper((unsigned char)c[k]) - 'A' + 10;
        if (d < 0 || d > 15)
            return -1;
        v = 16 * v + d;
    }
    return v;
}

/* The dash pattern of the colour "#RRGGBB" (7 bytes at c) in p: a series' style, or τ's (style 2). */
static const char *svg_dash_of(const abl_plot *p, const char *c)
{
    int r = hex_byte(c + 1), g = hex_byte(c + 3), b = hex_byte(c + 5);
    for (int i = 0; i < p->rows * p->cols; i++) {
        const abl_plot_panel *pn = &p->panels[i];
        for (size_t s = 0; s < pn->nseries; s++) {
            const abl_plot_series *se = &pn->series[s];
            if (se->colour.r == r && se->colour.g == g && se->colour.b == b)
                return se->style >= 2 && se->style <= 8 ? svg_dash[se->style] : NULL;
        }
    }
    return r == 0xD5 && g == 0x5E && b == 0x00 ? svg_dash[2] : NULL;
}

/* The SVG with stroke-dasharray added to the dashed series' polylines (*buf replaced; 0, or -1 when out of
 * memory, *buf then unchanged). */
static int svg_dashes(const abl_plot *p, char **buf, size_t *len)
{
    char *out = NULL;
    size_t olen = 0;
    FILE *f = open_memstream(&out, &olen);
    if (f == NULL)
        return -1;
    const char *s = *buf, *end = *buf + *len;
    while (s < end) {
        const char *pl = strstr(s, "<polyline");
        if (pl == NULL) {
            fwrite(s, 1, (size_t)(end - s), f);
            break;
        }
        pl += 9;
        fwrite(s, 1, (size_t)(pl - s), f);
        const char *close = strchr(pl, '>'), *st = strstr(pl, "stroke=\"#");
        const char *dash = st != NULL && close != NULL && st < close && st + 15 <= end ? svg_dash_of(p, st + 8) : NULL;
        if (dash != NULL)
            fprintf(f, " stroke-dasharray=\"%s\"", dash);
        s = pl;
    }
    if (fclose(f) != 0) {
        free(out);
        return -1;
    }
    free(*buf);
    *buf = out;
    *len = olen;
    return 0;
}

static int plot_valid(const abl_plot *p)
{
    if (p == NULL || p->panels == NULL || p->rows < 1 || p->cols < 1)
        return 0;
    for (int i = 0; i < p->rows * p->cols; i++) {
        const abl_plot_panel *pn = &p->panels[i];
        if (!(pn->xmin < pn->xmax) || !(pn->ymin < pn->ymax) || (pn->xlog && !(pn->xmin > 0)) ||
            (pn->ylog && !(pn->ymin > 0)))
            return 0;
        if (pn->nseries > ABL_PLOT_MAX_HEADS + 8)
            return 0;
        for (size_t s = 0; s < pn->nseries; s++) {
            if (pn->series[s].n > ABL_PLOT_MAX_POINTS)
                return 0;
            for (size_t k = 0; k < pn->series[s].n; k++)
                if (!isfinite(pn->series[s].x[k]) || !isfinite(pn->series[s].y[k]) ||
                    (pn->xlog && !(pn->series[s].x[k] > 0)) || (pn->ylog && !(pn->series[s].y[k] > 0)))
                    return 0;
        }
    }
    return 1;
}

/* The page's settings, once PLplot's stream is made: the device writing into mem, the page size, the
 * colour map (white background, black text and frame, light grid, τ vermillion, band grey), the font.
 * Returns the character height, which scales with the page (1.0 is readable at 1200 x 800). */
static double page_begin(const abl_plot_render_options *o, FILE *mem)
{
    plsdev(device_drivers[o->device]);
    plsfile(mem); /* PLplot closes it in plend */
    plspage(0, 0, o->width, o->height, 0, 0);
    plscmap0n(COL_SERIES + ABL_PLOT_MAX_HEADS + 16);
    set_colour(COL_BG, (abl_rgb){255, 255, 255});
    set_colour(COL_FG, (abl_rgb){0, 0, 0});
    set_colour(COL_GRID, (abl_rgb){0xDD, 0xDD, 0xDD});
    set_colour(COL_TAU, (abl_rgb){0xD5, 0x5E, 0x00});
    set_colour(COL_BAND, (abl_rgb){0xEE, 0xEE, 0xEE});
    plinit();
    plsfont(PL_FCI_SANS, PL_FCI_UPRIGHT, PL_FCI_MEDIUM); /* the same font family on every run */
    pladv(0);
    double chr = 0.85 * sqrt((double)o->width * o->height / (1200.0 * 800.0));
    if (chr < 0.6)
        chr = 0.6;
    plschr(0, chr);
    plvpor(0, 1, 0, 1);
    plwind(0, 1, 0, 1);
    plcol0(COL_FG);
    return chr;
}

/* One centred line of the page's head (title or caption) at height y, its size `scale` times chr. */
static int draw_heading(const char *text, double y, double scale, double chr, int svg)
{
    if (text == NULL)
        return 0;
    char *t = pl_text(text);
    plschr(0, chr * scale);
    if (t != NULL) {
        /* A line wider than the page is set smaller until it fits (never cut at the page's edges). */
        PLFLT xmin, xmax, ymin, ymax;
        plgspa(&xmin, &xmax, &ymin, &ymax);
        PLFLT def, ht;
        plgchr(&def, &ht);
        size_t chars = 0;
        for (const char *c = t; *c; c++)
            chars += ((unsigned char)*c & 0xC0) != 0x80; /* code points */
        /* cairo's sans-serif runs ~0.72 of PLplot's character height a character on average, a browser's
         * (SVG) ~0.75 */
        double room = 0.97 * (xmax - xmin), wide = (svg ? 0.75 : 0.72) * ht * (double)chars;
        if (wide > room)
            plschr(0, chr * scale * room / wide);
        plptex(0.5, y, 1, 0, 0.5, t);
    }
    plschr(0, chr);
    free(t);
    return t == NULL;
}

/*
 * Every PLplot call of one picture, under plplot_lock (held by the caller), with PLplot's fatal exit
 * caught here: plexit longjmps back to this frame's setjmp, so each PLplot call happens below it, and the
 * picture is drawn whole into mem (closed by plend1, or here when no stream can be made). After a fatal
 * error plplot_broken is set and mem is left as it is (PLplot's state, mem's included, is undefined).
 */
static abl_status render_locked(const abl_plot *p, const abl_plot_render_options *o, FILE *mem, char **msg)
{
    plplot_message_set("");
    PLINT stream;
    if (setjmp(plplot_jmp) != 0) {
        plplot_broken = 1;
        if (msg != NULL)
            abl_set_error(msg, "PLplot: %s", plplot_message_text());
        return ABL_ERR_UNSUPPORTED;
    }
    plsexit(on_plexit);
    plsabort(on_plabort);
    plmkstrm(&stream);
    if (stream < 0) {
        fclose(mem);
        return ABL_ERR_NO_MEMORY;
    }
    double chr = page_begin(o, mem);
    int svg = o->device == ABL_PLOT_SVG;
    int rc = draw_heading(p->title, 0.955, 1.25, chr, svg);
    rc |= draw_heading(p->caption, 0.915, 0.85, chr, svg);
    for (int i = 0; rc == 0 && i < p->rows * p->cols; i++)
        rc |= draw_panel(p, i, chr, (double)o->width / o->height, o->device == ABL_PLOT_SVG) != 0;
    if (rc == 0)
        rc |= draw_legend(p, chr, o->device == ABL_PLOT_SVG) != 0;
    plend1(); /* closes mem */
    if (rc != 0)
        return ABL_ERR_NO_MEMORY;
    if (plplot_message != NULL && plplot_message[0] != '\0') {
        if (msg != NULL)
            abl_set_error(msg, "PLplot: %s", plplot_message_text());
        return ABL_ERR_UNSUPPORTED;
    }
    return ABL_OK;
}

static int render_options_ok(const abl_plot_render_options *o)
{
    return (unsigned)o->device <= ABL_PLOT_PDF && o->width >= ABL_PLOT_MIN_SIZE && o->width <= ABL_PLOT_MAX_SIZE &&
           o->height >= ABL_PLOT_MIN_SIZE && o->height <= ABL_PLOT_MAX_SIZE;
}

abl_status abl_plot_render(const abl_plot *p, const abl_plot_render_options *o, char **buf, size_t *len, char **msg)
{
    if (msg != NULL)
        *msg = NULL;
    if (buf == NULL || len == NULL || o == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    *buf = NULL;
    *len = 0;
    if (!plot_valid(p) || !render_options_ok(o))
        return ABL_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&plplot_lock);
    if (plplot_broken) {
        pthread_mutex_unlock(&plplot_lock);
        if (msg != NULL)
            abl_set_error(msg, "PLplot failed earlier in this process: %s", plplot_message_text());
        return ABL_ERR_UNSUPPORTED;
    }
    char *mbuf = NULL;
    size_t mlen = 0;
    FILE *mem = open_memstream(&mbuf, &mlen);
    if (mem == NULL) {
        pthread_mutex_unlock(&plplot_lock);
        return ABL_ERR_NO_MEMORY;
    }
    abl_status st = render_locked(p, o, mem, msg);
    int broken = plplot_broken;
    pthread_mutex_unlock(&plplot_lock);
    if (broken)
        return st; /* mem may be open still: its buffer is left alone */
    if (st == ABL_OK && mlen == 0) {
        st = ABL_ERR_UNSUPPORTED;
        if (msg != NULL)
            abl_set_error(msg, "PLplot's %s driver wrote nothing", device_drivers[o->device]);
    }
    if (st != ABL_OK) {
        free(mbuf);
        return st;
    }
    if (o->device == ABL_PLOT_PDF)
        pdf_fix_date(mbuf, mlen);
    if (o->device == ABL_PLOT_SVG && svg_dashes(p, &mbuf, &mlen) != 0) {
        free(mbuf);
        return ABL_ERR_NO_MEMORY;
    }
    *buf = mbuf;
    *len = mlen;
    return ABL_OK;
}
#endif /* ABL_HAVE_PLPLOT */
