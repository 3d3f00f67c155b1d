/* alibi-blind: pictures. A plot is first built as a small chart model (panels of line series,
 * horizontal lines, markers, shaded bands and zero maps, with their axes), then drawn with PLplot
 * into PNG (cairo), SVG (PLplot's own svg driver) or PDF (cairo). The output is deterministic: the
 * same chart gives the same bytes (no timestamps, no random ids). */
#ifndef ABL_PLOT_H
#define ABL_PLOT_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "abl/core/status.h"
#include "abl/core/progress.h"
#include "abl/core/format.h"
#include "abl/core/convention.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- devices */

typedef enum abl_plot_device { ABL_PLOT_PNG = 0, ABL_PLOT_SVG = 1, ABL_PLOT_PDF = 2 } abl_plot_device;

/* "png", "svg", "pdf". */
ABL_API const char *abl_plot_device_name(abl_plot_device d);
/* Parse "png", "svg" or "pdf" (ABL_ERR_INVALID_ARGUMENT otherwise). */
ABL_API abl_status abl_plot_device_parse(const char *name, abl_plot_device *out);
/* The device a file name's extension asks for (.png, .svg, .pdf, any case); ABL_ERR_INVALID_ARGUMENT otherwise. */
ABL_API abl_status abl_plot_device_from_path(const char *path, abl_plot_device *out);

#define ABL_PLOT_DEFAULT_WIDTH 1200
#define ABL_PLOT_DEFAULT_HEIGHT 800
#define ABL_PLOT_MIN_SIZE 200
#define ABL_PLOT_MAX_SIZE 8000
/* Most heads one picture draws (a line, a colour and a legend entry each). */
#define ABL_PLOT_MAX_HEADS 256
/* Most points of one series: PLplot's drivers split longer polylines, and a series stays one path. */
#define ABL_PLOT_MAX_POINTS 250

/* ---------------------------------------------------------------- chart model */

typedef struct abl_rgb { unsigned char r, g, b; } abl_rgb;

/* Colour-blind-safe colours. Categorical: five of Okabe & Ito (2008) (i >= 5 wraps; vermillion is τ's,
 * black the frame's). Sequential (many heads, ordered by slope): viridis on [0, 0.9] at n points. */
ABL_API abl_rgb abl_plot_categorical(int i);
ABL_API abl_rgb abl_plot_sequential(int i, int n);

typedef struct abl_plot_series {
    char *label;          /* legend text (UTF-8) */
    size_t n;             /* at most ABL_PLOT_MAX_POINTS */
    double *x, *y;        /* data coordinates (not log-transformed) */
    abl_rgb colour;
    double width;         /* line width (PLplot units; 0: default 2) */
    int symbol;           /* 0: line only; k > 0: also glyph k (1 ●, 2 ■, 3 ▲, 4 ◆, 5 ▼, 6 ○, 7 □, 8 △)
                           * at every point, drawn as text so a series stays one path */
    int style;            /* line style: 0 or 1 solid, 2..8 PLplot's dash patterns (pllsty), so that series
                           * stay apart in greyscale print and for colour-blind readers */
    int symbol_every;     /* > 1: the glyph at every k-th point only (dense curves) */
    int symbol_offset;    /* the first point with a glyph (so glyphs of neighbouring series do not sit
                           * on each other) */
} abl_plot_series;


typedef struct abl_plot_hline {
    double y;
    char *label;          /* written above the line at the right end (may be NULL) */
} abl_plot_hline;

typedef struct abl_plot_marker {
    double x, y;
} abl_plot_marker;

/* A shaded horizontal band y0..y1 with a label (Table 8's * and ** regions). */
typedef struct abl_plot_band {
    double y0, y1;
    char *label;
} abl_plot_band;

/* An n_rows x n_cols map of values in [0, 1] (share of exactly-zero weights in each cell), drawn
 * over xmin..xmax, ymin..ymax: 0 white (no zero), 1 dark (all zero), between a middle shade. Row 0 is
 * at ymin. causal: the triangle x > y (key after query: masked) is drawn hatched grey over it. */
typedef struct abl_plot_map {
    size_t rows, cols;
    double *cells;        /* rows * cols, row-major */
    int causal;
} abl_plot_map;

typedef struct abl_plot_panel {
    char *title, *xlabel, *ylabel;
    double xmin, xmax, ymin, ymax;
    int xlog, ylog;       /* log10 axes (the limits stay in data units, > 0) */
    int yflip;            /* 1: ymin at the top (a matrix: query 0 first) */
    abl_plot_series *series;
    size_t nseries;
    abl_plot_hline *hlines;
    size_t nhlines;
    abl_plot_marker *markers;   /* drawn in black, on top of the series */
    size_t nmarkers;
    abl_plot_band *bands;
    size_t nbands;
    abl_plot_map map;     /* cells == NULL: none */
    char *marker_label;   /* the markers' legend entry (NULL: "δ: where the line reaches τ") */
    double ynum_max;      /* > 0 on a log y axis: numbers only up to this value (above it the axis has
                           * no scale: regions of values that are not drawn at their value) */
} abl_plot_panel;

typedef struct abl_plot {
    char *title;          /* over the whole page */
    char *caption;        /* one line under it (may be NULL) */
    int rows, cols;       /* panel grid */
    abl_plot_panel *panels;
    int legend;           /* 1: a legend of the first panel's series (and labelled horizontal lines; or the
                           * shades of its map) at the right */
    int square;           /* 1: every panel square on the page (maps: one token across = one token down) */
} abl_plot;

/* Allocate a plot with rows x cols empty panels. */
ABL_API abl_status abl_plot_init(abl_plot *p, int rows, int cols, const char *title);
ABL_API void abl_plot_free(abl_plot *p);
/* Set a panel's axes; labels are copied. */
ABL_API abl_status abl_plot_axes(abl_plot_panel *pn, const char *title, const char *xlabel, const char *ylabel, double xmin,
                         double xmax, double ymin, double ymax, int xlog, int ylog);
/* Append a series (x and y copied) and return it through *out when not NULL. */
ABL_API abl_status abl_plot_add_series(abl_plot_panel *pn, const char *label, const double *x, const double *y, size_t n,
                               abl_rgb colour, abl_plot_series **out);
ABL_API abl_status abl_plot_add_hline(abl_plot_panel *pn, double y, const char *label);
ABL_API abl_status abl_plot_add_marker(abl_plot_panel *pn, double x, double y);
ABL_API abl_status abl_plot_add_band(abl_plot_panel *pn, double y0, double y1, const char *label);
ABL_API abl_status abl_plot_set_caption(abl_plot *p, const char *caption);
/* The legend entry of a panel's markers (copied). */
ABL_API abl_status abl_plot_set_marker_label(abl_plot_panel *pn, const char *label);

/* ---------------------------------------------------------------- rendering */

/* 1 when this library was built with PLplot (cmake -DABL_PLOT=AUTO found it, or ON); 0 otherwise, and
 * abl_plot_render then returns ABL_ERR_UNSUPPORTED with ABL_PLOT_MISSING as its message. */
ABL_API int abl_plot_available(void);
#define ABL_PLOT_MISSING_PACKAGES "libplplot-dev plplot-driver-cairo"
#define ABL_PLOT_MISSING                                                                                         \
    "this alibi-blind was built without PLplot: apt-get install " ABL_PLOT_MISSING_PACKAGES                    \
    ", then configure and build again"

typedef struct abl_plot_render_options {
    abl_plot_device device;
    int width, height;    /* pixels for PNG; SVG and PDF use the same numbers as points */
} abl_plot_render_options;

ABL_API void abl_plot_render_options_default(abl_plot_render_options *o);

/*
 * Draw the plot into a malloc'd buffer (*buf, *len). PLplot is not reentrant: calls are serialised.
 * ABL_ERR_INVALID_ARGUMENT for a size outside ABL_PLOT_MIN_SIZE..ABL_PLOT_MAX_SIZE, a series longer
 * than ABL_PLOT_MAX_POINTS or an empty axis range; ABL_ERR_UNSUPPORTED when PLplot cannot draw
 * (driver missing), with *msg naming the problem.
 */
ABL_API abl_status abl_plot_render(const abl_plot *p, const abl_plot_render_options *o, char **buf, size_t *len, char **msg);

/* The text of the picture, as written to PLplot: '#' doubled, and an exponent after '^' (2^-0.5,
 * 10^9, 2^(1/3)) typeset as a superscript (PLplot's #u...#d); malloc'd (NULL: no memory). */
ABL_API char *abl_plot_text(const char *s);

/* The plotted data as CSV, exactly as drawn (data units; a placeholder height where the picture draws one):
 * header "panel,element,label,x,y,value", then per panel (1-based) its series points (element "series", x,
 * y), horizontal lines ("line", y), markers ("marker", x, y), bands ("band", y = lower, value = upper
 * edge) and map cells ("cell", x = first key, y = first query of the cell, value = share of zero
 * weights). Labels are quoted, numbers in %.17g. */
ABL_API abl_status abl_plot_data_csv(const abl_plot *p, FILE *f);

/* Where the panel's data rectangle ends up on the page, in device pixels from the top left
 * (PNG: pixels; SVG/PDF: points), for a page of width x height: for tests and the HTML report. */
typedef struct abl_plot_frame { double left, right, top, bottom; } abl_plot_frame;
ABL_API void abl_plot_panel_frame(const abl_plot *p, int panel, int width, int height, abl_plot_frame *out);

#ifdef __cplusplus
}
#endif
#endif
