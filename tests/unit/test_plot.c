/* Unit tests of the pictures: devices, palette, the chart models and the PLplot renderer.
 * The pixel test reads the PNG back with libpng and finds the τ line at the row that the axis
 * mapping gives, with τ computed here from its closed form (-126 ln 2 for bf16, spec §3), the
 * frame found from the pixels themselves. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"
#ifdef ABL_HAVE_PNG
#include <png.h>

/* The message pointer for one more call: the previous call's message freed (the library sets *msg
 * afresh on every call and the caller owns what it gets). */
static char **fresh(char **msg)
{
    free(*msg);
    *msg = NULL;
    return msg;
}
#endif

static void render(const abl_plot *p, abl_plot_device dev, int w, int h, char **buf, size_t *len)
{
    abl_plot_render_options o;
    abl_plot_render_options_default(&o);
    o.device = dev;
    o.width = w;
    o.height = h;
    char *err = NULL;
    assert_int_equal(abl_plot_render(p, &o, buf, len, fresh(&err)), ABL_OK);
    assert_non_null(*buf);
    assert_true(*len > 1000);
    free(err);
}

static void bias16(abl_plot *p)
{
    abl_plot_bias_config c;
    abl_plot_bias_config_default(&c);
    assert_int_equal(abl_plot_bias(&c, p), ABL_OK);
}

static void test_devices(void **state)
{
    (void)state;
    abl_plot_device d;
    assert_int_equal(abl_plot_device_from_path("a/b/fig.PNG", &d), ABL_OK);
    assert_int_equal(d, ABL_PLOT_PNG);
    assert_int_equal(abl_plot_device_from_path("fig.svg", &d), ABL_OK);
    assert_int_equal(d, ABL_PLOT_SVG);
    assert_int_equal(abl_plot_device_from_path("x.pdf", &d), ABL_OK);
    assert_int_equal(d, ABL_PLOT_PDF);
    assert_int_equal(abl_plot_device_from_path("x.jpg", &d), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_plot_device_from_path("a.png/x", &d), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_plot_device_from_path("png", &d), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_plot_device_parse("svg", &d), ABL_OK);
    assert_int_equal(abl_plot_device_parse("SVG", &d), ABL_ERR_INVALID_ARGUMENT);
}

static void test_palette(void **state)
{
    (void)state;
    /* viridis(0) = #440154 (matplotlib), Okabe-Ito blue #0072B2 first. */
    abl_rgb c = abl_plot_sequential(0, 16);
    assert_int_equal(c.r, 0x44);
    assert_int_equal(c.g, 0x01);
    assert_int_equal(c.b, 0x54);
    c = abl_plot_categorical(0);
    assert_int_equal(c.r * 65536 + c.g * 256 + c.b, 0x0072B2);
    /* 64 heads: 64 distinct colours. */
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < i; j++) {
            abl_rgb a = abl_plot_sequential(i, 64), b = abl_plot_sequential(j, 64);
            assert_false(a.r == b.r && a.g == b.g && a.b == b.b);
        }
}

/* The chart of Figure 1a: the paper's numbers (Table 1: δ1 = 124, δ16 = 22358; Figure 1: 0..4096). */
static void test_bias_model(void **state)
{
    (void)state;
    abl_plot p;
    bias16(&p);
    assert_int_equal(p.rows * p.cols, 1);
    const abl_plot_panel *pn = &p.panels[0];
    assert_int_equal(pn->nseries, 16);
    assert_non_null(strstr(pn->series[0].label, "δ = 124"));
    assert_non_null(strstr(pn->series[15].label, "δ = 22358"));
    /* Heads with δ <= 4096: δ11 = round(126 ln2 · 2^5.5) = 3952 is the last (δ12 = 5590). */
    assert_int_equal(pn->nmarkers, 11);
    double tau = -126.0 * log(2.0);
    assert_int_equal(pn->nhlines, 1);
    assert_true(fabs(pn->hlines[0].y - tau) < 1e-9);
    for (size_t i = 0; i < pn->nmarkers; i++) /* each mark sits on τ to within half a slope step */
        assert_true(fabs(pn->markers[i].y - tau) < 0.5 * sqrt(0.5) + 1e-9);
    assert_true(pn->ymin <= 2 * tau && pn->ymax > 0);
    assert_true(pn->xmin == 0 && pn->xmax == 4096);
    abl_plot_free(&p);
}

/* Figure 1b at N = 2048: the paper's 36.6 % (README: 36.57 %), and the closed form of spec §7 at
 * N = 4096 recomputed here from the paper's δ (Table 1 press heads at bf16). */
static void test_fraction_model(void **state)
{
    (void)state;
    abl_plot_fraction_config c;
    abl_plot_fraction_config_default(&c);
    assert_string_equal(c.formats[0].name, "bf16"); /* the default, read from the library's own table */
    c.linear = 1;
    c.max_context = 2048;
    abl_plot p;
    assert_int_equal(abl_plot_fraction(&c, &p, NULL), ABL_OK);
    const abl_plot_panel *pn = &p.panels[0];
    assert_int_equal(pn->nseries, 2);
    const abl_plot_series *row = &pn->series[0], *mat = &pn->series[1];
    assert_true(row->x[row->n - 1] == 2048);
    assert_true(fabs(row->y[row->n - 1] - 0.3657) < 0.00005);
    assert_true(row->x[0] == 0 && row->y[0] == 0);
    /* Matrix fraction at 2048: (1/16) sum_h T(N - δh)/T(N), T(k) = k(k+1)/2, δ from Table 1's rule. */
    double tau = -126.0 * log(2.0), sum = 0, N = 2048;
    for (int h = 1; h <= 16; h++) {
        double d = round(-tau / pow(2.0, -0.5 * h));
        double k = N - d > 0 ? N - d : 0;
        sum += k * (k + 1) / (N * (N + 1));
    }
    assert_true(fabs(mat->y[mat->n - 1] - sum / 16) < 1e-9);
    abl_plot_free(&p);
    /* Log axis: from 1 to N, increasing, at most one path of points. */
    c.linear = 0;
    c.max_context = 1000000;
    assert_int_equal(abl_plot_fraction(&c, &p, NULL), ABL_OK);
    pn = &p.panels[0];
    assert_true(pn->xlog && pn->series[0].x[0] == 1 && pn->series[0].x[pn->series[0].n - 1] == 1e6);
    for (size_t i = 1; i < pn->series[0].n; i++)
        assert_true(pn->series[0].x[i] > pn->series[0].x[i - 1]);
    abl_plot_free(&p);
}

/* Table 8 as printed by the paper: the default row's δ, and Log's * and ** cells in their bands. */
static void test_mitigations_model(void **state)
{
    (void)state;
    abl_format bf16;
    assert_int_equal(abl_format_lookup("bf16", &bf16), ABL_OK);
    abl_plot p;
    assert_int_equal(abl_plot_mitigations(&bf16, ABL_CONV_PAPER, &p), ABL_OK);
    const abl_plot_panel *pn = &p.panels[0];
    assert_int_equal(pn->nseries, 16);
    assert_int_equal(pn->nbands, 2);
    static const double alibi[9] = {124, 175, 349, 699, 1397, 2795, 5590, 11179, 22358};
    int seen = 0;
    for (size_t s = 0; s < pn->nseries; s++) {
        const abl_plot_series *se = &pn->series[s];
        if (strcmp(se->label, "ALiBi (default)") == 0) {
            for (int h = 0; h < 9; h++)
                assert_true(se->y[h] == alibi[h]);
            seen++;
        }
        if (strcmp(se->label, "Log") == 0) { /* * * * * ** ** ** ** ** */
            for (int h = 0; h < 9; h++) {
                const abl_plot_band *b = &pn->bands[h < 4 ? 0 : 1];
                assert_true(se->y[h] > b->y0 && se->y[h] < b->y1);
            }
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    abl_plot_free(&p);
}

/* The zero map of head 1 (m = 2^-0.5) through the eager kernel: nothing within distance 100, all
 * beyond 200 (its exponent-level δ is 124 paper / 132 ieee). */
/* The layer's own heads under the mitigations (the report's picture): for the press schedule of nine heads,
 * the "none" series is the paper's Table 8 row "ALiBi (default)" and the L series its row "Log" (* for the
 * first four heads, ** after), as the paper prints them; C and S share the series of E and L. */
static void test_mitigations_layer(void **state)
{
    (void)state;
    abl_format bf16;
    assert_int_equal(abl_format_lookup("bf16", &bf16), ABL_OK);
    abl_plot p;
    assert_int_equal(abl_plot_mitigations_layer(&bf16, ABL_CONV_PAPER, 9, NULL, "nine", &p), ABL_OK);
    const abl_plot_panel *pn = &p.panels[0];
    assert_int_equal(pn->nseries, 4);
    assert_true(pn->ynum_max == 1e9); /* no scale above 10^9 */
    static const double alibi[9] = {124, 175, 349, 699, 1397, 2795, 5590, 11179, 22358};
    assert_string_equal(pn->series[0].label, "none, C, S, C+S");
    for (int h = 0; h < 9; h++)
        assert_true(pn->series[0].y[h] == alibi[h]);
    assert_string_equal(pn->series[2].label, "L, C+L, L+S, C+L+S");
    for (int h = 0; h < 9; h++) {
        const abl_plot_band *b = &pn->bands[h < 4 ? 0 : 1];
        assert_true(pn->series[2].y[h] > b->y0 && pn->series[2].y[h] < b->y1);
    }
    /* No two series share both glyph and dash pattern. */
    for (size_t i = 0; i < pn->nseries; i++)
        for (size_t j = i + 1; j < pn->nseries; j++)
            assert_false(pn->series[i].symbol == pn->series[j].symbol && pn->series[i].style == pn->series[j].style);
    abl_plot_free(&p);
}

/* The bias as a kernel forms it: Falcon's alibi/8 puts 1/8 on m·d, so head h of the press layer of 16
 * ends at -4096 · 2^(-h/2) / 8 (closed form), and the kernel's first blind distances are the markers. */
static void test_bias_kernel(void **state)
{
    (void)state;
    abl_plot_bias_config c;
    abl_plot_bias_config_default(&c);
    int64_t first[16];
    for (int h = 0; h < 16; h++)
        first[h] = h < 3 ? 700 + 100 * h : -1;
    c.kernel = "falcon-hf-sdpa";
    c.scale = 0.125;
    c.first_blind = first;
    abl_plot p;
    assert_int_equal(abl_plot_bias(&c, &p), ABL_OK);
    const abl_plot_panel *pn = &p.panels[0];
    assert_int_equal(pn->nseries, 16);
    for (size_t s = 0; s < pn->nseries; s++) {
        double want = -4096.0 * pow(2.0, -0.5 * (double)(s + 1)) / 8.0;
        assert_true(fabs(pn->series[s].y[1] - want) <= 1e-12 * fabs(want));
    }
    assert_int_equal(pn->nmarkers, 3);
    assert_true(pn->markers[0].x == 700 && pn->markers[2].x == 900);
    assert_true(fabs(pn->markers[0].y - (-700.0 * pow(2.0, -0.5) / 8.0)) < 1e-9);
    assert_non_null(pn->marker_label);
    abl_plot_free(&p);
}

/* The text as PLplot gets it: '#' doubled (PLplot's escape character), an exponent after '^' between
 * PLplot's #u (superscript) and #d (back down), parentheses around it dropped; a '^' with no exponent
 * and a sentence's final '.' stay as they are. */
static void test_plot_text(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"m = 2^-0.5", "m = 2#u-0.5#d"},      {"10^9 < δ < 2^1024", "10#u9#d < δ < 2#u1024#d"},
        {"2^(1/3) x", "2#u1/3#d x"},           {"a#b", "a##b"},
        {"x^ y", "x^ y"},                       {"2^-0.5.", "2#u-0.5#d."},
        {"m = 2^-0.125  δ = 95", "m = 2#u-0.125#d  δ = 95"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = abl_plot_text(cases[i][0]);
        assert_non_null(t);
        assert_string_equal(t, cases[i][1]);
        free(t);
    }
}

static void test_blindmap_model(void **state)
{
    (void)state;
    abl_plot_blindmap_config c;
    abl_plot_blindmap_config_default(&c);
    c.context = 512;
    c.threads = 1;
    abl_plot p;
    char *err = NULL;
    assert_int_equal(abl_plot_blindmap(&c, &p, fresh(&err)), ABL_OK);
    const abl_plot_panel *pn = &p.panels[0];
    const abl_plot_map *m = &pn->map;
    assert_non_null(m->cells);
    double bin = pn->xmax / (double)m->cols;
    assert_true(pn->xmax == 512 && m->rows == m->cols);
    int full = 0;
    for (size_t r = 0; r < m->rows; r++)
        for (size_t k = 0; k < m->cols; k++) {
            double imin = r * bin, imax = (r + 1) * bin - 1, jmin = k * bin, jmax = (k + 1) * bin - 1;
            double v = m->cells[r * m->cols + k];
            if (jmin > imax)
                assert_true(v == 0); /* above the diagonal: no causal entries */
            else if (imax - jmin < 100)
                assert_true(v == 0);
            else if (imin - jmax > 200)
                assert_true(v == 1), full++;
        }
    assert_true(full > 0);
    abl_plot_free(&p);
    c.head = 17;
    assert_int_equal(abl_plot_blindmap(&c, &p, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    free(err);
}

static unsigned be32(const unsigned char *b)
{
    return (unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3];
}

static void test_formats(void **state)
{
    (void)state;
    abl_plot p;
    bias16(&p);
    char *buf;
    size_t len;
    /* PNG: signature and the IHDR size as asked. */
    static const int sizes[][2] = {{1200, 800}, {900, 600}, {640, 1000}};
    for (size_t i = 0; i < 3; i++) {
        render(&p, ABL_PLOT_PNG, sizes[i][0], sizes[i][1], &buf, &len);
        assert_memory_equal(buf, "\x89PNG\r\n\x1a\n", 8);
        assert_memory_equal(buf + 12, "IHDR", 4);
        assert_int_equal(be32((unsigned char *)buf + 16), sizes[i][0]);
        assert_int_equal(be32((unsigned char *)buf + 20), sizes[i][1]);
        free(buf);
    }
    /* SVG: XML, and the same bytes twice. */
    char *buf2;
    size_t len2;
    render(&p, ABL_PLOT_SVG, 1200, 800, &buf, &len);
    render(&p, ABL_PLOT_SVG, 1200, 800, &buf2, &len2);
    assert_memory_equal(buf, "<?xml", 5);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    free(buf);
    free(buf2);
    /* PDF: header, and no clock in it (the same bytes twice). */
    render(&p, ABL_PLOT_PDF, 1200, 800, &buf, &len);
    render(&p, ABL_PLOT_PDF, 1200, 800, &buf2, &len2);
    assert_memory_equal(buf, "%PDF-", 5);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    free(buf);
    free(buf2);
    abl_plot_free(&p);
}

static void test_refusals(void **state)
{
    (void)state;
    abl_plot p;
    bias16(&p);
    abl_plot_render_options o;
    abl_plot_render_options_default(&o);
    char *buf = (char *)&o;
    size_t len = 1;
    o.width = 10;
    assert_int_equal(abl_plot_render(&p, &o, &buf, &len, NULL), ABL_ERR_INVALID_ARGUMENT);
    assert_null(buf);
    assert_int_equal(len, 0);
    o.width = 1200;
    o.height = ABL_PLOT_MAX_SIZE + 1;
    assert_int_equal(abl_plot_render(&p, &o, &buf, &len, NULL), ABL_ERR_INVALID_ARGUMENT);
    abl_plot_free(&p);
    /* A series longer than one path, an empty or non-positive log axis. */
    assert_int_equal(abl_plot_init(&p, 1, 1, "t"), ABL_OK);
    double x[ABL_PLOT_MAX_POINTS + 1] = {0}, y[ABL_PLOT_MAX_POINTS + 1] = {0};
    assert_int_equal(abl_plot_add_series(&p.panels[0], "s", x, y, ABL_PLOT_MAX_POINTS + 1, abl_plot_categorical(0),
                                         NULL),
                     ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_plot_axes(&p.panels[0], NULL, "x", "y", 1, 1, 0, 1, 0, 0), ABL_ERR_INVALID_ARGUMENT);
    assert_int_equal(abl_plot_axes(&p.panels[0], NULL, "x", "y", 0, 1, 0, 1, 1, 0), ABL_ERR_INVALID_ARGUMENT);
    abl_plot_free(&p);
    abl_plot_bias_config c;
    abl_plot_bias_config_default(&c);
    c.heads = ABL_PLOT_MAX_HEADS + 1;
    assert_int_equal(abl_plot_bias(&c, &p), ABL_ERR_HEADS_RANGE);
}

#ifdef ABL_HAVE_PNG
/* Decode an RGB(A) PNG into 8-bit RGB rows. */
static unsigned char *decode_png(const char *buf, size_t len, unsigned *w, unsigned *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_memory(&img, buf, len));
    img.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(px);
    assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
    *w = img.width;
    *h = img.height;
    return px;
}

static int near(const unsigned char *p, int r, int g, int b, int tol)
{
    return abs(p[0] - r) <= tol && abs(p[1] - g) <= tol && abs(p[2] - b) <= tol;
}

/* Longest run of dark pixels in row y between x0 and x1. */
static unsigned dark_run(const unsigned char *px, unsigned w, unsigned y, unsigned x0, unsigned x1)
{
    unsigned best = 0, cur = 0;
    for (unsigned x = x0; x < x1 && x < w; x++) {
        const unsigned char *p = px + 3 * ((size_t)y * w + x);
        cur = p[0] < 170 && p[1] < 170 && p[2] < 170 ? cur + 1 : 0;
        if (cur > best)
            best = cur;
    }
    return best;
}

static void check_tau_row(int width, int height)
{
    abl_plot p;
    bias16(&p);
    char *buf;
    size_t len;
    render(&p, ABL_PLOT_PNG, width, height, &buf, &len);
    unsigned w, h;
    unsigned char *px = decode_png(buf, len, &w, &h);
    assert_int_equal(w, (unsigned)width);
    assert_int_equal(h, (unsigned)height);
    /* The frame: the topmost and bottommost rows crossed by a dark run over a third of the width
     * in the left two thirds of the page (the legend box is at the right). An antialiased edge
     * covers one or two pixel rows: its centre is the middle of the rows it darkens. */
    unsigned top = 0, bottom = 0, found = 0;
    for (unsigned y = 0; y < h; y++)
        if (dark_run(px, w, y, 0, 2 * w / 3) > w / 3) {
            if (!found)
                top = y;
            bottom = y;
            found = 1;
        }
    assert_true(found && bottom > top + h / 3);
    unsigned top_end = top, bottom_start = bottom;
    while (dark_run(px, w, top_end + 1, 0, 2 * w / 3) > w / 3)
        top_end++;
    while (dark_run(px, w, bottom_start - 1, 0, 2 * w / 3) > w / 3)
        bottom_start--;
    assert_true(top_end - top <= 2 && bottom - bottom_start <= 2);
    double top_c = 0.5 * (top + top_end + 1), bottom_c = 0.5 * (bottom_start + bottom + 1);
    /* The frame's left edge: first column where a dark run spans most of top..bottom. */
    unsigned left = 0;
    for (unsigned x = 0; x < w / 2 && left == 0; x++) {
        unsigned run = 0;
        for (unsigned y = top; y <= bottom; y++) {
            const unsigned char *q = px + 3 * ((size_t)y * w + x);
            run += q[0] < 170 && q[1] < 170 && q[2] < 170;
        }
        if (run > (bottom - top) * 9 / 10)
            left = x;
    }
    assert_true(left > 0);
    /* τ = -126 ln 2 on the axis ymin..ymax of the model, between the centres of the frame's edges. */
    const abl_plot_panel *pn = &p.panels[0];
    double tau = -126.0 * log(2.0);
    double yc = top_c + (pn->ymax - tau) / (pn->ymax - pn->ymin) * (bottom_c - top_c);
    int expect = (int)floor(yc);
    /* The dashed vermillion (#D55E00) line: many pixels on its row, none a few rows away. */
    unsigned counts[21] = {0};
    for (int dy = -10; dy <= 10; dy++) {
        int y = expect + dy;
        for (unsigned x = left + 2; x < left + (unsigned)(0.6 * width); x++)
            counts[dy + 10] += near(px + 3 * ((size_t)y * w + x), 0xD5, 0x5E, 0x00, 40);
    }
    unsigned on = 0;
    for (int dy = -1; dy <= 1; dy++)
        on = counts[dy + 10] > on ? counts[dy + 10] : on;
    assert_true(on > (unsigned)(0.15 * width));
    for (int dy = -10; dy <= -5; dy++)
        assert_true(counts[dy + 10] < on / 10);
    for (int dy = 5; dy <= 10; dy++)
        assert_true(counts[dy + 10] < on / 10);
    free(px);
    free(buf);
    abl_plot_free(&p);
}

static void test_tau_row(void **state)
{
    (void)state;
    check_tau_row(1200, 800);
    check_tau_row(800, 1000);
}
#else
static void test_tau_row(void **state)
{
    (void)state;
    skip();
}
#endif

/* A 10,000-character --pipeline spec comes back whole in *msg (no intermediate fixed-size buffer);
 * the expected message is built here from the spec. */
static void test_blindmap_long_pipeline(void **state)
{
    (void)state;
    enum { LONG = 10000 };
    const char *prefix = "eager,bias-form=";
    size_t n = strlen(prefix) + LONG + 1;
    char *spec = malloc(n), *want = malloc(2 * n + 200), *err = NULL;
    assert_non_null(spec);
    assert_non_null(want);
    memcpy(spec, prefix, strlen(prefix));
    memset(spec + strlen(prefix), 'x', LONG - 3);
    memcpy(spec + n - 4, "END", 4);
    snprintf(want, 2 * n + 200,
             "bias-form: unknown form '%s' (known: relative, absolute, symmetric, trailing)", spec + strlen(prefix));
    /* the plot takes the parsed value (issue 17): the text is read, and refused whole, by the boundary's parser */
    abl_pipeline_spec ps;
    assert_int_equal(abl_pipeline_spec_parse(spec, &ps, fresh(&err)), ABL_ERR_INVALID_ARGUMENT);
    abl_pipeline_spec_free(&ps);
    assert_string_equal(err, want);
    free(spec);
    free(want);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices),    cmocka_unit_test(test_palette),  cmocka_unit_test(test_bias_model),
        cmocka_unit_test(test_formats),    cmocka_unit_test(test_refusals), cmocka_unit_test(test_tau_row),
        cmocka_unit_test(test_fraction_model), cmocka_unit_test(test_mitigations_model),
        cmocka_unit_test(test_blindmap_model),
        cmocka_unit_test(test_blindmap_long_pipeline),
        cmocka_unit_test(test_mitigations_layer),
        cmocka_unit_test(test_bias_kernel),
        cmocka_unit_test(test_plot_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
