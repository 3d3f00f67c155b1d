/* alibi-blind plot: pictures (PNG, SVG, PDF) drawn with PLplot from the exact engines. */
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static const abl_cli_opt plot_opts[] = {
    {"convention", "NAME", "paper (default), ftz, ieee or subnormal"},
    {"ctx", "N", "right end of the distance axis (default 4096)"},
    {"device", "DEV", "png, svg or pdf (default: from the --output extension)"},
    {"dtype", "TYPE", "floating-point format (default bf16)"},
    {"heads", "H", "number of heads (default 16, as in the paper)"},
    {"height", "PX", "page height (default 800; pixels for PNG, points for SVG/PDF)"},
    {"output", "FILE", "the picture (required; written atomically)"},
    {"slopes", "SPEC", "press (default), mpt:B, pow2only, geometric:D1:DH, targets:..., slopes:..."},
    {"width", "PX", "page width (default 1200)"},
};

/* The device and page size from --device/--output/--width/--height. */
int abl_cli_plot_target(const char *device, const char *path, const char *width, const char *height,
                        abl_plot_render_options *ro)
{
    abl_plot_render_options_default(ro);
    if (device != NULL) {
        if (abl_plot_device_parse(device, &ro->device) != ABL_OK)
            return abl_cli_usage_error("--device: unknown device '%s' (known: png, svg, pdf)", device);
    } else if (abl_plot_device_from_path(path, &ro->device) != ABL_OK) {
        return abl_cli_usage_error("--output: cannot tell the picture format from '%s' (name it .png, .svg or .pdf, "
                                   "or give --device)", path);
    }
    long v;
    if (width != NULL) {
        if (abl_cli_int("width", width, ABL_PLOT_MIN_SIZE, ABL_PLOT_MAX_SIZE, &v))
            return ABL_EXIT_USAGE;
        ro->width = (int)v;
    }
    if (height != NULL) {
        if (abl_cli_int("height", height, ABL_PLOT_MIN_SIZE, ABL_PLOT_MAX_SIZE, &v))
            return ABL_EXIT_USAGE;
        ro->height = (int)v;
    }
    return 0;
}

int abl_cli_plot_write(const abl_plot *p, const abl_plot_render_options *ro, const char *opt, const char *path)
{
    char *buf = NULL, err[320];
    size_t len = 0;
    abl_status st = abl_plot_render(p, ro, &buf, &len, err, sizeof err);
    if (st == ABL_ERR_NO_MEMORY)
        return abl_cli_internal_error("out of memory");
    if (st != ABL_OK)
        return abl_cli_internal_error("cannot draw the %s picture: %s", abl_plot_device_name(ro->device),
                                      err[0] ? err : abl_status_message(st));
    abl_cli_outfile o;
    int rc = abl_cli_outfile_open(&o, opt, path);
    if (rc == 0) {
        fwrite(buf, 1, len, o.f);
        rc = abl_cli_outfile_commit(&o);
    }
    free(buf);
    return rc;
}

static int run_plot(const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos == 0)
        return abl_cli_usage_error("plot: which picture? (bias)");
    if (npos > 1)
        return abl_cli_usage_error("plot: unexpected argument '%s'", pos[1]);
    if (strcmp(pos[0], "bias") != 0)
        return abl_cli_usage_error("plot: '%s' is not a picture this tool draws (bias)", pos[0]);
    const char *path = abl_cli_value(cmd, v, "output");
    if (path == NULL)
        return abl_cli_usage_error("plot: --output FILE is required (.png, .svg or .pdf)");
    abl_plot_render_options ro;
    if (abl_cli_plot_target(abl_cli_value(cmd, v, "device"), path, abl_cli_value(cmd, v, "width"),
                            abl_cli_value(cmd, v, "height"), &ro))
        return ABL_EXIT_USAGE;

    abl_plot_bias_config c;
    abl_plot_bias_config_default(&c);
    const char *s;
    if ((s = abl_cli_value(cmd, v, "dtype")) && abl_cli_dtype("dtype", s, &c.format))
        return ABL_EXIT_USAGE;
    if ((s = abl_cli_value(cmd, v, "convention")) && abl_cli_convention(s, &c.convention))
        return ABL_EXIT_USAGE;
    long heads = c.heads;
    if ((s = abl_cli_value(cmd, v, "heads")) && abl_cli_int("heads", s, 1, ABL_PLOT_MAX_HEADS, &heads))
        return ABL_EXIT_USAGE;
    c.heads = (int)heads;
    if ((s = abl_cli_value(cmd, v, "ctx")) && abl_cli_count("ctx", s, 1, ABL_MAX_CONTEXT, &c.max_distance))
        return ABL_EXIT_USAGE;
    c.slopes = abl_cli_value(cmd, v, "slopes");
    if (c.slopes != NULL && abl_cli_value(cmd, v, "heads") == NULL &&
        (strncmp(c.slopes, "slopes:", 7) == 0 || strncmp(c.slopes, "targets:", 8) == 0))
        c.heads = 0; /* the list gives H */

    abl_plot p;
    abl_status st = abl_plot_bias(&c, &p);
    if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE ||
        st == ABL_ERR_DEGENERATE)
        return abl_cli_usage_error("--slopes: '%s': %s%s", c.slopes ? c.slopes : "press", abl_status_message(st),
                                   st == ABL_ERR_HEADS_RANGE ? " (a plot draws 1 to 256 heads)" : "");
    if (st == ABL_ERR_UNSUPPORTED)
        return abl_cli_usage_error("plot: %s", abl_status_message(st));
    if (st != ABL_OK)
        return abl_cli_internal_error("plot: %s", abl_status_message(st));
    int rc = abl_cli_plot_write(&p, &ro, "output", path);
    abl_plot_free(&p);
    return rc;
}

const abl_cli_cmd abl_cli_plot_cmd = {
    "plot",
    "pictures: Figure 1a for any layer (PNG, SVG or PDF, drawn with PLplot)",
    "bias [options] --output FILE",
    "bias: the paper's Figure 1a for any layer: each head's bias -m·d against the token distance d,\n"
    "the threshold τ of the chosen format and convention as a dashed line, and each head's δ marked\n"
    "(o) where its line reaches τ. Colours are colour-blind safe (viridis by slope for many heads).\n"
    "The picture format comes from the --output extension (.png, .svg, .pdf) or --device; the\n"
    "same inputs give the same bytes.\n\n"
    "Example: alibi-blind plot bias --heads 16 --output fig1a.png",
    plot_opts,
    sizeof plot_opts / sizeof plot_opts[0],
    run_plot,
};
