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

static vp panel_viewport(const abl_plot *p, int i)
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
    return v;
}

void abl_plot_panel_frame(const abl_plot *p, int panel, int width, int height, abl_plot_frame *out)
{
    vp v = panel_viewport(p, panel);
    out->left = v.x0 * width;
    out->right = v.x1 * width;
    out->top = (1.0 - v.y1) * height;
    out->bottom = (1.0 - v.y0) * height;
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

/*
 * PLplot copies a string it draws into fixed-size buffers of its own (a 10,000-character legend entry
 * crashes plinit of the next picture), so a text drawn on a picture is cut for display at
 * ABL_PLOT_TEXT_MAX bytes, on a UTF-8 character boundary, and the cut is marked with U+2026 (spec §13's
 * rule for display cuts; the report's tables carry the whole text).
 */
#define ABL_PLOT_TEXT_MAX 240

/* PLplot's text escape is '#': double it in user text. Returns a malloc'd copy (NULL: no memory). */
static char *pl_text(const char *s)
{
    if (s == NULL)
        s = "";
    size_t len = strlen(s), keep = len;
    if (len > ABL_PLOT_TEXT_MAX) {
        keep = ABL_PLOT_TEXT_MAX;
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--; /* never split a UTF-8 sequence */
    }
    size_t n = 0;
    for (size_t i = 0; i < keep; i++)
        n += s[i] == '#' ? 2 : 1;
    char *out = malloc(n + 4);
    if (out == NULL)
        return NULL;
    char *o = out;
    for (size_t i = 0; i < keep; i++) {
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

static int put_text(const char *side, double disp, double pos, double just, const char *text)
{
    char *t = pl_text(text);
    if (t == NULL)
        return -1;
    plmtex(side, disp, pos, just, t);
    free(t);
    return 0;
}

static int draw_map(const abl_plot_panel *pn)
{
    const abl_plot_map *m = &pn->map;
    if (m->cells == NULL || m->rows == 0 || m->cols == 0)
        return 0;
    /* Runs of cells with the same shade become one rectangle (4 shades). */
    static const abl_rgb shades[5] = {{255, 255, 255}, {0xC6, 0xDB, 0xEF}, {0x6B, 0xAE, 0xD6}, {0x21, 0x71, 0xB5},
                                      {0x08, 0x30, 0x6B}};
    double cw = (pn->xmax - pn->xmin) / (double)m->cols, ch = (pn->ymax - pn->ymin) / (double)m->rows;
    for (size_t r = 0; r < m->rows; r++) {
        size_t c = 0;
        while (c < m->cols) {
            double v = m->cells[r * m->cols + c];
            int level = v <= 0 ? 0 : v >= 1 ? 4 : 1 + (int)(v * 3.999);
            size_t e = c + 1;
            while (e < m->cols) {
                double w = m->cells[r * m->cols + e];
                int l2 = w <= 0 ? 0 : w >= 1 ? 4 : 1 + (int)(w * 3.999);
                if (l2 != level)
                    break;
                e++;
            }
            if (level > 0) {
                PLFLT xs[4], ys[4];
                xs[0] = xs[3] = pn->xmin + c * cw;
                xs[1] = xs[2] = pn->xmin + e * cw;
                ys[0] = ys[1] = pn->ymin + r * ch;
                ys[2] = ys[3] = pn->ymin + (r + 1) * ch;
                set_colour(COL_MAP, shades[level]);
                plcol0(COL_MAP);
                plfill(4, xs, ys);
            }
            c = e;
        }
    }
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

/* The data: each series as a line in its own colour, with its glyph at every point when it has one. */
static void draw_series(const abl_plot_panel *pn, double chr)
{
    for (size_t s = 0; s < pn->nseries; s++) {
        const abl_plot_series *se = &pn->series[s];
        PLFLT xs[ABL_PLOT_MAX_POINTS], ys[ABL_PLOT_MAX_POINTS];
        for (size_t k = 0; k < se->n; k++) {
            xs[k] = tx(pn, se->x[k]);
            ys[k] = ty(pn, se->y[k]);
        }
        set_colour(COL_SERIES + (int)s, se->colour);
        plcol0(COL_SERIES + (int)s);
        plwidth(se->width > 0 ? se->width : 2.0);
        if (se->n > 1)
            plline((PLINT)se->n, xs, ys);
        if (se->symbol > 0) {
            plschr(0, chr * 0.8);
            plstring((PLINT)se->n, xs, ys, glyph(se->symbol));
            plschr(0, chr);
        }
    }
}

/* The horizontal lines (τ): dashed, labelled just above at the right end; those outside the window are
 * left out. */
static int draw_hlines(const abl_plot_panel *pn, vp w, double chr)
{
    plwidth(2.0);
    for (size_t h = 0; h < pn->nhlines; h++) {
        double y = ty(pn, pn->hlines[h].y);
        if (y < w.y0 || y > w.y1)
            continue;
        PLFLT xs[2] = {w.x0, w.x1}, ys[2] = {y, y};
        plcol0(COL_TAU);
        pllsty(2);
        plline(2, xs, ys);
        pllsty(1);
        if (pn->hlines[h].label != NULL) {
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
    plbox(xo, many && !pn->xlog ? (w.x1 - w.x0) / 2 : 0, 0, yo, many && !pn->ylog ? (w.y1 - w.y0) / 2 : 0, 0);
    if ((pn->xlabel && put_text("b", 2.6, 0.5, 0.5, pn->xlabel) != 0) ||
        (pn->ylabel && put_text("l", many ? 2.8 : 4.2, 0.5, 0.5, pn->ylabel) != 0) ||
        (pn->title && put_text("t", 0.8, 0.5, 0.5, pn->title) != 0))
        return -1;
    plschr(0, chr);
    return 0;
}

/* One panel, under the caller's PLplot lock and setjmp: shaded bands and zero maps first, then the
 * grid, series, lines, markers, the frame last (each layer drawn over the one before). */
static int draw_panel(const abl_plot *p, int i, double chr)
{
    const abl_plot_panel *pn = &p->panels[i];
    vp v = panel_viewport(p, i);
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
    draw_series(pn, chr);
    if (draw_hlines(pn, w, chr) != 0)
        return -1;
    draw_markers(pn, w);
    return draw_frame(p, pn, w, chr);
}

static int draw_legend(const abl_plot *p, double chr, int svg)
{
    const abl_plot_panel *pn = &p->panels[0];
    if (!p->legend || pn->nseries == 0)
        return 0;
    PLINT n = (PLINT)pn->nseries;
    /* Many heads: every k-th entry (the first and last always) so the legend stays readable. */
    PLINT step = n > 24 ? (n + 15) / 16 : 1;
    PLINT shown = 0;
    for (PLINT s = 0; s < n; s++)
        shown += s % step == 0 || s == n - 1;
    PLINT *opt = calloc((size_t)shown, sizeof *opt), *colours = calloc((size_t)shown, sizeof *colours);
    PLINT *styles = calloc((size_t)shown, sizeof *styles), *tcol = calloc((size_t)shown, sizeof *tcol);
    PLINT *snum = calloc((size_t)shown, sizeof *snum);
    PLFLT *widths = calloc((size_t)shown, sizeof *widths), *sscale = calloc((size_t)shown, sizeof *sscale);
    char **texts = calloc((size_t)shown, sizeof *texts);
    const char **ctexts = calloc((size_t)shown, sizeof *ctexts), **syms = calloc((size_t)shown, sizeof *syms);
    int rc = -1;
    if (opt && colours && styles && tcol && widths && texts && ctexts && snum && sscale && syms) {
        rc = 0;
        PLINT k = 0;
        for (PLINT s = 0; s < n; s++) {
            if (!(s % step == 0 || s == n - 1))
                continue;
            const abl_plot_series *se = &pn->series[s];
            set_colour(COL_SERIES + s, se->colour);
            opt[k] = PL_LEGEND_LINE | (se->symbol > 0 ? PL_LEGEND_SYMBOL : 0);
            colours[k] = COL_SERIES + s;
            styles[k] = 1;
            widths[k] = se->width > 0 ? se->width + 1 : 3.0;
            tcol[k] = COL_FG;
            snum[k] = 1;
            sscale[k] = 0.8;
            syms[k] = se->symbol > 0 ? glyph(se->symbol) : "";
            if ((texts[k] = pl_text(se->label)) == NULL)
                rc = -1;
            ctexts[k] = texts[k] != NULL ? texts[k] : "";
            k++;
        }
        if (rc == 0) {
            PLINT cols = 1, rows = shown;
            double scale = shown > 16 ? 0.5 : 0.62, spacing = shown > 16 ? 1.3 : 1.6;
            if (svg) /* a browser's sans-serif runs wider than PLplot's estimate of it */
                scale *= 0.8;
            double top = p->caption != NULL ? GRID_TOP_CAPTION : GRID_TOP_TITLE;
            plvpor(LEGEND_RIGHT + 0.01, 0.995, GRID_BOTTOM, top);
            plwind(0, 1, 0, 1);
            PLFLT lw, lh;
            plschr(0, chr);
            pllegend(&lw, &lh, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
                     PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE, 0.0, 0.0, 0.05,
                     COL_BG, COL_FG, 1, rows, cols, shown, opt, 0.6, scale, spacing, 0.0, tcol, ctexts, NULL, NULL,
                     NULL, NULL, colours, styles, widths, colours, sscale, snum, syms);
        }
        for (PLINT s = 0; s < shown; s++)
            free(texts[s]);
    }
    free(opt);
    free(colours);
    free(styles);
    free(tcol);
    free(widths);
    free(texts);
    free(ctexts);
    free(snum);
    free(sscale);
    free(syms);
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
static int draw_heading(const char *text, double y, double scale, double chr)
{
    if (text == NULL)
        return 0;
    char *t = pl_text(text);
    plschr(0, chr * scale);
    if (t != NULL)
        plptex(0.5, y, 1, 0, 0.5, t);
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
    int rc = draw_heading(p->title, 0.955, 1.25, chr);
    rc |= draw_heading(p->caption, 0.915, 0.85, chr);
    for (int i = 0; rc == 0 && i < p->rows * p->cols; i++)
        rc |= draw_panel(p, i, chr) != 0;
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
    *buf = mbuf;
    *len = mlen;
    return ABL_OK;
}
#endif /* ABL_HAVE_PLPLOT */
