/* alibi-blind CLI: entry point, subcommand dispatch, option parsing and output. */
/* realpath is XSI */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gmp.h>
#include "abl_cli.h"

const abl_cli_cmd *const abl_cli_commands[] = {
    &abl_cli_analyze_cmd,
    &abl_cli_check_cmd,
    &abl_cli_design_cmd,
    &abl_cli_figure_cmd,
    &abl_cli_models_cmd,
    &abl_cli_plot_cmd,
    &abl_cli_report_cmd,
    &abl_cli_reproduce_cmd,
    &abl_cli_rope_cmd,
    &abl_cli_simulate_cmd,
    &abl_cli_table_cmd,
    &abl_cli_thresholds_cmd,
    &abl_cli_verify_cmd,
};
const size_t abl_cli_ncommands = sizeof abl_cli_commands / sizeof abl_cli_commands[0];
#define commands abl_cli_commands
#define NCOMMANDS abl_cli_ncommands

/* Where print_error writes: the stream of the running abl_cli_main, one per thread (see abl_cli.h). */
_Thread_local FILE *abl_cli_err;

/* One line, whatever the echoed values hold: control characters are written as escapes. */
static void print_error(const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    fputs("alibi-blind: ", abl_cli_err);
    if (msg == NULL) {
        fputs("out of memory", abl_cli_err);
    } else {
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        for (const unsigned char *p = (const unsigned char *)msg; *p != '\0'; p++) {
            if (*p == '\n')
                fputs("\\n", abl_cli_err);
            else if (*p == '\t')
                fputs("\\t", abl_cli_err);
            else if (*p == '\r')
                fputs("\\r", abl_cli_err);
            else if (*p < 0x20 || *p == 0x7f)
                fprintf(abl_cli_err, "\\x%02x", *p);
            else
                fputc(*p, abl_cli_err);
        }
        free(msg);
    }
    fputc('\n', abl_cli_err);
}

/* Handled by parse_options for every command; help, completion and the man page test list them too. */
const abl_opt abl_cli_shared_opts[] = {ABL_OPT_HELP, ABL_OPT_WIDE};
const size_t abl_cli_nshared = sizeof abl_cli_shared_opts / sizeof abl_cli_shared_opts[0];

char *abl_cli_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s != NULL) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

int abl_cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_error(fmt, ap);
    va_end(ap);
    return ABL_EXIT_USAGE;
}

int abl_cli_slope_calc_error(const char *slopes, abl_slope_calc calc)
{
    const char *which = calc == ABL_SLOPE_CALC_MPT_POW
                            ? "only mpt:B, or press (llm-foundry gen_slopes, any head count); "
                              "give --slopes mpt:8 for MPT's own"
                            : calc == ABL_SLOPE_CALC_FLEX ? "only press (the score_mod's exp2(-(h+1)*8/H))"
                            : "only press (build_alibi_tensor's torch.pow)";
    return abl_cli_usage_error("--slopes: '%s': slope-calc=%s computes %s", slopes, abl_slope_calc_name(calc), which);
}

int abl_cli_internal_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_error(fmt, ap);
    va_end(ap);
    return ABL_EXIT_INTERNAL;
}

int abl_cli_int(const char *opt, const char *text, long lo, long hi, long *out)
{
    /* Every integer option takes the same spellings as --ctx: "16", "1e1", "2.048e3" (an exact
     * decimal that is a whole number). */
    mpq_t q;
    mpq_init(q);
    int rc = 0;
    if (abl_decimal_to_mpq(text, q) != ABL_OK) {
        rc = abl_cli_usage_error("--%s: '%s' is not an integer", opt, text);
    } else if (mpz_cmp_ui(mpq_denref(q), 1) != 0) {
        rc = abl_cli_usage_error("--%s: '%s' is not a whole number", opt, text);
    } else if (!mpz_fits_slong_p(mpq_numref(q)) || mpz_cmp_si(mpq_numref(q), lo) < 0 ||
               mpz_cmp_si(mpq_numref(q), hi) > 0) {
        rc = abl_cli_usage_error("--%s: %s is out of range (%ld to %ld)", opt, text, lo, hi);
    } else {
        *out = mpz_get_si(mpq_numref(q));
    }
    mpq_clear(q);
    return rc;
}

int abl_cli_count(const char *opt, const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    /* Exact decimal, so "1e12" and "2048" work and "2048.5" or "nan" do not. */
    mpq_t q;
    mpq_init(q);
    int rc = 0;
    if (abl_decimal_to_mpq(text, q) != ABL_OK) {
        rc = abl_cli_usage_error("--%s: '%s' is not a number", opt, text);
    } else if (mpz_cmp_ui(mpq_denref(q), 1) != 0) {
        rc = abl_cli_usage_error("--%s: '%s' is not a whole number", opt, text);
    } else {
        mpz_t z;
        mpz_init(z);
        mpz_set(z, mpq_numref(q));
        uint64_t v = 0;
        if (mpz_sgn(z) < 0 || mpz_sizeinbase(z, 2) > 63) {
            rc = abl_cli_usage_error("--%s: %s is out of range (%llu to %llu)", opt, text, (unsigned long long)lo,
                                     (unsigned long long)hi);
        } else {
            mpz_export(&v, NULL, 1, sizeof v, 0, 0, z);
            if (v < lo || v > hi)
                rc = abl_cli_usage_error("--%s: %s is out of range (%llu to %llu)", opt, text, (unsigned long long)lo,
                                         (unsigned long long)hi);
            else
                *out = v;
        }
        mpz_clear(z);
    }
    mpq_clear(q);
    return rc;
}

int abl_cli_decimal(const char *opt, const char *text, int positive, mpq_t q)
{
    int rc = 0;
    if (abl_decimal_to_mpq(text, q) != ABL_OK)
        rc = abl_cli_usage_error("--%s: '%s' is not a finite decimal number (exponent at most 100000)", opt, text);
    else if (positive && mpq_sgn(q) <= 0)
        rc = abl_cli_usage_error("--%s: %s must be positive", opt, text);
    return rc;
}

int abl_cli_dtype(const char *opt, const char *text, abl_format *out)
{
    const char *amb = abl_format_ambiguous(text);
    if (amb != NULL)
        return abl_cli_usage_error("--%s: '%s' is ambiguous: %s", opt, text, amb);
    if (abl_format_lookup(text, out) != ABL_OK)
        return abl_cli_usage_error("--%s: unknown floating-point format '%s' (known: %s, torch.<dtype>, "
                                   "ml_dtypes names, or eXmY)", opt, text, abl_format_names());
    return 0;
}

int abl_cli_dtype_one(const char *opt, const char *text, const char *why, abl_format *out)
{
    if (strchr(text, ',') != NULL || strcasecmp(text, "all") == 0)
        return abl_cli_usage_error("--%s: '%s' is a list, but %s", opt, text, why);
    return abl_cli_dtype(opt, text, out);
}

int abl_cli_dtype_list(const char *opt, const char *list, abl_format *out, size_t cap, size_t *n)
{
    *n = 0;
    if (strcasecmp(list, "all") == 0) {
        for (size_t i = 0; i < abl_format_count() && *n < cap; i++)
            out[(*n)++] = *abl_format_at(i);
        return 0;
    }
    if (list[0] == '\0' || list[0] == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,") != NULL)
        return abl_cli_usage_error("--%s: '%s' is not a comma-separated list of formats", opt, list);
    char *copy = strdup(list);
    if (copy == NULL)
        return abl_cli_internal_error("out of memory");
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); rc == 0 && tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (*n == cap)
            rc = abl_cli_usage_error("--%s: at most %zu formats", opt, cap);
        else
            rc = abl_cli_dtype(opt, tok, &out[(*n)++]);
    }
    free(copy);
    return rc;
}

int abl_cli_pipeline_spec(const char *spec, abl_pipeline_spec *out)
{
    memset(out, 0, sizeof *out);
    /* Here, not per command: every command that takes --pipeline refuses an empty one alike. */
    if (spec != NULL && spec[0] == '\0')
        return abl_cli_usage_error("--pipeline: empty (presets: %s)", abl_pipeline_preset_names());
    char *msg = NULL;
    abl_status st = abl_pipeline_spec_parse(spec, out, &msg);
    if (st == ABL_OK)
        return 0;
    int rc = st == ABL_ERR_NO_MEMORY || msg == NULL ? abl_cli_internal_error("out of memory")
                                                    : abl_cli_usage_error("--pipeline: %s", msg);
    free(msg);
    return rc;
}

/* A built pipeline (st: the build's status) checked when asked: 0, or the exit status after the line. */
static int pipeline_checked(abl_status st, int check, abl_pipeline *out)
{
    char *msg = NULL;
    if (st == ABL_OK && check)
        st = abl_pipeline_check_msg(out, &msg);
    if (st == ABL_OK)
        return 0;
    int rc = st == ABL_ERR_NO_MEMORY || msg == NULL ? abl_cli_internal_error("out of memory")
                                                    : abl_cli_usage_error("--pipeline: %s", msg);
    free(msg);
    return rc;
}

int abl_cli_pipeline(const char *spec, const abl_format *model, int check, abl_pipeline *out)
{
    abl_pipeline_spec s;
    int rc = abl_cli_pipeline_spec(spec, &s);
    abl_status st = rc == 0 ? abl_pipeline_build(&s, model, out) : ABL_OK;
    abl_pipeline_spec_free(&s);
    if (rc != 0)
        return rc;
    return pipeline_checked(st, check, out);
}

int abl_cli_pipeline_value(const abl_layer *l, abl_pipeline *out)
{
    return pipeline_checked(abl_layer_pipeline(l, out), 1, out);
}

const char *abl_cli_why(abl_status st, const char *msg)
{
    return msg != NULL ? msg : abl_status_message(st);
}

int abl_cli_slopes(const char *text, abl_schedule_spec *out)
{
    memset(out, 0, sizeof *out);
    if (text == NULL)
        return 0;
    char *msg = NULL;
    abl_status st = abl_schedule_spec_parse(text, out, &msg);
    int rc = st == ABL_OK ? 0
             : st == ABL_ERR_NO_MEMORY ? abl_cli_internal_error("%s", abl_cli_why(st, NULL))
                                       : abl_cli_usage_error("--slopes: '%s': %s", text, abl_cli_why(st, msg));
    free(msg);
    return rc;
}

int abl_cli_convention(const char *text, abl_convention *out)
{
    if (abl_convention_parse(text, out) != ABL_OK)
        return abl_cli_usage_error("--convention: unknown convention '%s' (known: paper, ftz, ieee, subnormal)", text);
    return 0;
}

int abl_cli_output(const char *text, abl_output *out)
{
    if (abl_output_parse(text, out) != ABL_OK)
        return abl_cli_usage_error("--format: unknown output format '%s' (known: text, markdown, csv, json, latex)",
                                   text);
    return 0;
}

/*
 * The file a path names after following its symlinks, also when the last link dangles (realpath fails
 * then): a dangling --output link is written through, creating its target, not replaced by a file.
 * NULL on allocation failure; after 40 links the path reached is returned (opening it then fails).
 */
static char *follow_links(const char *path)
{
    char *cur = strdup(path);
    for (int hop = 0; cur != NULL && hop < 40; hop++) {
        struct stat ls;
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode))
            break;
        size_t cap = (size_t)(ls.st_size > 0 ? ls.st_size : 255) + 1;
        char *link = malloc(cap);
        ssize_t n = link != NULL ? readlink(cur, link, cap) : -1;
        if (n < 0 || (size_t)n >= cap) { /* gone or grown since lstat: stop here */
            free(link);
            break;
        }
        link[n] = '\0';
        const char *slash = strrchr(cur, '/');
        size_t dirlen = link[0] == '/' || slash == NULL ? 0 : (size_t)(slash - cur) + 1;
        char *next = malloc(dirlen + (size_t)n + 1);
        if (next != NULL) {
            memcpy(next, cur, dirlen);
            memcpy(next + dirlen, link, (size_t)n + 1);
        }
        free(link);
        free(cur);
        cur = next;
    }
    return cur;
}

int abl_cli_outfile_open(const abl_cli_ctx *ctx, abl_cli_outfile *o, const char *opt, const char *path)
{
    memset(o, 0, sizeof *o);
    o->opt = opt;
    o->out = ctx->out;
    if (path[0] == '\0')
        return abl_cli_usage_error("--%s: empty file name", opt);
    if (strcmp(path, "-") == 0) {
        /* "-" is standard output (the usual convention); written in place. */
        o->target = strdup("standard output");
        if (o->target == NULL)
            return abl_cli_internal_error("out of memory");
        o->f = o->out;
        return 0;
    }
    struct stat st;
    /* Write through symlinks, and into devices and fifos, rather than replacing them. */
    char *resolved = realpath(path, NULL);
    o->target = resolved != NULL ? resolved : follow_links(path);
    if (o->target == NULL)
        return abl_cli_internal_error("out of memory");
    if (stat(o->target, &st) == 0 && !S_ISREG(st.st_mode)) {
        if ((o->f = fopen(o->target, "w")) == NULL) {
            int rc = abl_cli_usage_error("--%s: cannot open '%s': %s", opt, path, strerror(errno));
            abl_cli_outfile_abort(o);
            return rc;
        }
        return 0;
    }
    /* A short temporary name in the target's directory, so a target name of NAME_MAX bytes works. */
    const char *slash = strrchr(o->target, '/');
    size_t dirlen = slash == NULL ? 0 : (size_t)(slash - o->target) + 1;
    size_t len = dirlen + 16;
    if ((o->tmp = malloc(len)) == NULL) {
        abl_cli_outfile_abort(o);
        return abl_cli_internal_error("out of memory");
    }
    memcpy(o->tmp, o->target, dirlen);
    strcpy(o->tmp + dirlen, ".abl-tmpXXXXXX");
    int fd = mkstemp(o->tmp);
    if (fd < 0 || (o->f = fdopen(fd, "w")) == NULL) {
        int rc = abl_cli_usage_error("--%s: cannot create '%s': %s", opt, path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
        abl_cli_outfile_abort(o);
        return rc;
    }
    /* mkstemp creates 0600; give the file the mode a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    return 0;
}

int abl_cli_outfile_flush(abl_cli_outfile *o)
{
    return o->f == NULL || fflush(o->f) != 0 || ferror(o->f);
}

/* The absolute name a path will have: realpath of the file, or of its directory plus the last name. */
static char *resolved_name(const char *path)
{
    char *r = realpath(path, NULL);
    if (r != NULL)
        return r;
    const char *slash = strrchr(path, '/');
    char *dir = slash == NULL ? strdup(".") : strndup(path, slash == path ? 1 : (size_t)(slash - path));
    const char *base = slash == NULL ? path : slash + 1;
    char *rd = dir != NULL ? realpath(dir, NULL) : NULL;
    free(dir);
    if (rd == NULL)
        return strdup(path);
    char *out = malloc(strlen(rd) + strlen(base) + 2);
    if (out != NULL)
        sprintf(out, "%s/%s", rd, base);
    free(rd);
    return out;
}

int abl_cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *ra = resolved_name(a), *rb = resolved_name(b);
    int same = ra != NULL && rb != NULL && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

int abl_cli_outfile_commit(abl_cli_outfile *o)
{
    int bad = o->f == NULL || ferror(o->f);
    if (o->f != NULL && o->f == o->out)
        bad |= fflush(o->out) != 0;
    else if (o->f != NULL)
        bad |= fclose(o->f) != 0;
    o->f = NULL;
    if (!bad && o->tmp != NULL)
        bad = rename(o->tmp, o->target) != 0;
    int rc = bad ? abl_cli_usage_error("--%s: cannot write '%s': %s", o->opt, o->target, strerror(errno)) : 0;
    if (bad && o->tmp != NULL)
        unlink(o->tmp);
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return rc;
}

void abl_cli_outfile_abort(abl_cli_outfile *o)
{
    if (o->f != NULL)
        if (o->f != o->out)
            fclose(o->f);
    if (o->tmp != NULL)
        unlink(o->tmp);
    free(o->tmp);
    free(o->target);
    o->f = NULL;
    o->tmp = o->target = NULL;
}

int abl_cli_render(const abl_cli_ctx *ctx, const abl_report *r, abl_output fmt, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *mem = open_memstream(buf, len);
    if (mem == NULL)
        return abl_cli_internal_error("out of memory");
    abl_status st = abl_report_write_width(r, fmt, ctx->wide ? 0 : ABL_REPORT_WIDTH, mem);
    if (fclose(mem) != 0 && st == ABL_OK)
        st = ABL_ERR_IO;
    if (st != ABL_OK) {
        free(*buf);
        *buf = NULL;
        return abl_cli_internal_error("cannot render the report: %s", abl_cli_why(st, NULL));
    }
    return 0;
}

int abl_cli_emit(const abl_cli_ctx *ctx, const abl_report *r, abl_output fmt, const char *path)
{
    char *buf;
    size_t len;
    int rc = abl_cli_render(ctx, r, fmt, &buf, &len);
    if (rc != 0)
        return rc;
    return abl_cli_emit_buffer(ctx, buf, len, path);
}

int abl_cli_emit_set(const abl_cli_ctx *ctx, const abl_report_set *s, abl_output fmt, const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem == NULL)
        return abl_cli_internal_error("out of memory");
    abl_status st = abl_report_set_write(s, fmt, ctx->wide ? 0 : ABL_REPORT_WIDTH, mem);
    if (fclose(mem) != 0 && st == ABL_OK)
        st = ABL_ERR_IO;
    if (st != ABL_OK) {
        free(buf);
        return abl_cli_internal_error("cannot render the report: %s", abl_cli_why(st, NULL));
    }
    return abl_cli_emit_buffer(ctx, buf, len, path);
}

int abl_cli_emit_buffer(const abl_cli_ctx *ctx, char *buf, size_t len, const char *path)
{
    int rc = 0;
    if (path == NULL || strcmp(path, "-") == 0) {
        if (fwrite(buf, 1, len, ctx->out) != len || fflush(ctx->out) != 0)
            rc = abl_cli_internal_error("cannot write to standard output");
    } else {
        abl_cli_outfile o;
        rc = abl_cli_outfile_open(ctx, &o, "output", path);
        if (rc == 0) {
            fwrite(buf, 1, len, o.f);
            rc = abl_cli_outfile_commit(&o);
        }
    }
    free(buf);
    return rc;
}

/* Display width of the first n bytes (UTF-8 code points). */
static size_t u8w(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) w++;
    return w;
}

/*
 * Print one line of help text wrapped at ABL_HELP_WIDTH columns: `used` columns are already taken on
 * the first line, continuation lines are indented by `indent`. Breaks fall on spaces only.
 */
#define ABL_HELP_WIDTH 80
static void print_wrapped(FILE *out, const char *s, size_t used, size_t indent)
{
    size_t col = used;
    bool line_empty = true;
    while (*s != '\0') {
        const char *ws = s;
        while (*s == ' ') s++;
        const char *wb = s;
        while (*s != '\0' && *s != ' ') s++;
        if (wb == s) break;
        size_t sp = line_empty ? 0 : u8w(ws, (size_t)(wb - ws)), w = u8w(wb, (size_t)(s - wb));
        if (!line_empty && col + sp + w > ABL_HELP_WIDTH) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
            sp = 0;
        }
        if (sp > 0) fprintf(out, "%.*s", (int)(wb - ws), ws);
        fprintf(out, "%.*s", (int)(s - wb), wb);
        col += sp + w;
        line_empty = false;
    }
    fputc('\n', out);
}

/*
 * A help text reflowed to ABL_HELP_WIDTH: a line that does not end a sentence ('.') continues on
 * the next source line; a blank line stays a blank line.
 */
static void print_paragraphs(FILE *out, const char *text)
{
    size_t len = strlen(text);
    char *para = malloc(len + 1);
    if (para == NULL) return;
    size_t n = 0;
    const char *p = text;
    for (;;) {
        const char *nl = strchr(p, '\n');
        size_t ln = nl ? (size_t)(nl - p) : strlen(p);
        if (ln == 0) {
            if (n > 0) {
                para[n] = '\0';
                print_wrapped(out, para, 0, 0);
                n = 0;
            }
            if (nl != NULL) fputc('\n', out);
        } else {
            if (n > 0) para[n++] = ' ';
            memcpy(para + n, p, ln);
            n += ln;
            while (n > 0 && para[n - 1] == ' ') n--;
            if (n > 0 && para[n - 1] == '.') {
                para[n] = '\0';
                print_wrapped(out, para, 0, 0);
                n = 0;
            }
        }
        if (nl == NULL) break;
        p = nl + 1;
    }
    if (n > 0) {
        para[n] = '\0';
        print_wrapped(out, para, 0, 0);
    }
    free(para);
}

/*
 * The "Presets:" block, made from the preset table's own help (abl_pipeline_preset_help: one "name: text"
 * line per preset) and each preset's code revisions, so that a new preset shows here as soon as it exists:
 * one entry per preset, its text wrapped at ABL_HELP_WIDTH under a hanging indent (readable at 80 columns).
 */
static void print_presets(FILE *out)
{
    fprintf(out, "Presets (--pipeline PRESET; the field version=V picks another revision):\n");
    for (const char *p = abl_pipeline_preset_help(); p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t ln = nl ? (size_t)(nl - p) : strlen(p);
        const char *colon = memchr(p, ':', ln);
        size_t nlen = colon ? (size_t)(colon - p) : ln;
        char *name = abl_cli_printf("%.*s", (int)nlen, p);
        const char *text = colon ? colon + 1 : p + ln;
        while (text < p + ln && *text == ' ') text++;
        const char *range = name != NULL ? abl_pipeline_version_range(name, NULL) : NULL;
        const char *versions = name != NULL ? abl_pipeline_version_names(name) : NULL;
        char *entry = abl_cli_printf("%s: %.*s%s%s%s%s%s", name != NULL ? name : "", (int)(p + ln - text), text,
                                     range ? " [" : "", range ? range : "", range ? "]" : "",
                                     versions && strchr(versions, ',') ? "; versions: " : "",
                                     versions && strchr(versions, ',') ? versions : "");
        if (entry != NULL) {
            fputs("  ", out);
            print_wrapped(out, entry, 2, 6);
        }
        free(entry);
        free(name);
        p = nl ? nl + 1 : p + ln;
    }
}

/* Commands whose help lists the pipeline presets (simulate: the command that runs a kernel). */
static bool lists_presets(const abl_cli_cmd *cmd)
{
    return strcmp(cmd->name, "simulate") == 0;
}

static void print_help(FILE *out, const abl_cli_cmd *cmd)
{
    size_t ul = strlen(cmd->name) + strlen(cmd->usage) + 32;
    char *usage = malloc(ul);
    if (usage == NULL) return;
    snprintf(usage, ul, "Usage: alibi-blind %s %s", cmd->name, cmd->usage);
    print_wrapped(out, usage, 0, 7);
    free(usage);
    fputc('\n', out);
    print_paragraphs(out, cmd->summary);
    fputc('\n', out);
    print_paragraphs(out, cmd->description);
    if (lists_presets(cmd)) {   /* after the description, before the fields that refer to the presets */
        print_presets(out);
        fputc('\n', out);
    }
    if (cmd->description_more != NULL)
        print_paragraphs(out, cmd->description_more);
    fprintf(out, "\nOptions:\n");
    size_t w = 0;
    for (size_t i = 0; i < cmd->nopts; i++) {
        abl_cli_opt o = abl_cli_use_opt(&cmd->opts[i]);
        size_t l = strlen(o.name) + (o.metavar ? strlen(o.metavar) + 1 : 0);
        if (l > w)
            w = l;
    }
    /* A long option column would leave little room: then the help goes on the next lines. */
    bool below = w + 6 > 32;
    for (size_t i = 0; i < cmd->nopts; i++) {
        abl_cli_opt o = abl_cli_use_opt(&cmd->opts[i]);
        char *left = abl_cli_printf("%s%s%s", o.name, o.metavar ? " " : "", o.metavar ? o.metavar : "");
        if (left == NULL)
            return;
        if (below && strlen(left) + 6 > 32) {
            fprintf(out, "  --%s\n%*s", left, 8, "");
            print_wrapped(out, o.help, 8, 8);
        } else {
            fprintf(out, "  --%-*s  ", (int)(below ? 26 : w), left);
            print_wrapped(out, o.help, (below ? 26 : w) + 6, (below ? 26 : w) + 6);
        }
        free(left);
    }
    /* The shared options (--help itself is what the reader just used). */
    for (size_t i = 0; i < abl_cli_nshared; i++) {
        const abl_cli_opt *o = &abl_cli_options[abl_cli_shared_opts[i]];
        if (abl_cli_shared_opts[i] == ABL_OPT_HELP)
            continue;
        fprintf(out, "  --%-*s  ", (int)(below ? 26 : w), o->name);
        print_wrapped(out, o->help, (below ? 26 : w) + 6, (below ? 26 : w) + 6);
    }
}

static void print_main_help(FILE *out)
{
    fprintf(out, "Usage: alibi-blind COMMAND [options]\n\n"
           "Where, in finite precision, the heads of an ALiBi attention layer go blind.\n\nCommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        fprintf(out, "  %-11s ", commands[i]->name);
        print_wrapped(out, commands[i]->summary, 14, 14);
    }
    fprintf(out, "\n");
    print_paragraphs(out, "'alibi-blind help COMMAND' or 'alibi-blind COMMAND --help' describes a command's options; "
                     "--wide (every command) keeps text output on one line per table row. -V or --version prints "
                     "the version.\n"
                     "Exit status: 0 success, 1 a check found an unexplained difference, 2 bad usage or input "
                     "(including an unwritable --output), 3 internal error.");
}

/* Edit distance (insert, delete, substitute, adjacent swap), ASCII case-insensitive; capped at 99. */
static size_t edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
            int cb = b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? b[j - 1] + 32 : b[j - 1];
            size_t best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

/*
 * The nearest of n names to the unknown word (or NULL when none is close): a unique name that starts
 * with the word, else the smallest edit distance up to a third of the word's length (1 to 2 for short words).
 */
static const char *nearest_name(const char *word, size_t len, const char *const *names, size_t n)
{
    const char *prefix = NULL;
    size_t nprefix = 0;
    for (size_t i = 0; i < n; i++) {
        if (len > 0 && strncmp(names[i], word, len) == 0) {
            prefix = names[i];
            nprefix++;
        }
    }
    if (nprefix == 1) return prefix;
    const char *best = NULL;
    size_t bestd = len / 3 > 2 ? len / 3 : 2;
    if (len <= 2) bestd = 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, len, names[i]);
        if (d <= bestd && (best == NULL || d < bestd)) {
            best = names[i];
            bestd = d;
        }
    }
    return best;
}

static int unknown_option(const abl_cli_cmd *cmd, const char *name, size_t nlen)
{
    const char **names = calloc(cmd->nopts + abl_cli_nshared + 1, sizeof *names);
    const char *near = NULL;
    if (names != NULL) {
        size_t n = 0;
        for (size_t i = 0; i < cmd->nopts; i++) names[n++] = abl_cli_options[cmd->opts[i].id].name;
        for (size_t i = 0; i < abl_cli_nshared; i++) names[n++] = abl_cli_options[abl_cli_shared_opts[i]].name;
        near = nearest_name(name, nlen, names, n);
        free(names);
    }
    if (near != NULL)
        return abl_cli_usage_error("%s: unknown option '--%.*s'; did you mean --%s? (see alibi-blind %s --help)",
                                   cmd->name, (int)nlen, name, near, cmd->name);
    return abl_cli_usage_error("%s: unknown option '--%.*s' (see alibi-blind %s --help)", cmd->name, (int)nlen, name,
                               cmd->name);
}

/* Parse --name value / --name=value against the command's table. */
static int parse_options(const abl_cli_cmd *cmd, int argc, char **argv, const char **values, int *npos, char **pos,
                         int *help, int *wide)
{
    *npos = 0;
    *help = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *help = 1;
            continue;
        }
        if (strcmp(a, "--wide") == 0) {
            *wide = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (a[0] == '-' && a[1] != '\0' && !(a[1] >= '0' && a[1] <= '9'))
                return abl_cli_usage_error("%s: unknown option '%s' (see alibi-blind %s --help)", cmd->name, a,
                                           cmd->name);
            pos[(*npos)++] = argv[i];
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        abl_opt id = abl_cli_opt_id(name, nlen);
        size_t k;
        for (k = 0; k < cmd->nopts; k++)
            if (cmd->opts[k].id == id)
                break;
        if (k == cmd->nopts)
            return unknown_option(cmd, name, nlen);
        abl_cli_opt o = abl_cli_use_opt(&cmd->opts[k]);
        if (o.metavar == NULL) {
            if (eq)
                return abl_cli_usage_error("--%s takes no value", o.name);
            values[id] = "";
        } else if (eq) {
            values[id] = eq + 1;
        } else if (i + 1 < argc) {
            values[id] = argv[++i];
        } else {
            return abl_cli_usage_error("--%s needs a value (%s)", o.name, o.metavar);
        }
    }
    return 0;
}

static const abl_cli_cmd *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

static int unknown_command(const char *name)
{
    const char *names[NCOMMANDS + 1];
    for (size_t i = 0; i < NCOMMANDS; i++) names[i] = commands[i]->name;
    names[NCOMMANDS] = "help";
    const char *near = nearest_name(name, strlen(name), names, NCOMMANDS + 1);
    if (near != NULL)
        return abl_cli_usage_error("unknown command '%s'; did you mean '%s'? (see alibi-blind --help)", name, near);
    return abl_cli_usage_error("unknown command '%s' (see alibi-blind --help)", name);
}

/* Help and version text is output like any other: a stream that cannot take it is exit 3. */
static int flushed(FILE *out)
{
    if (fflush(out) != 0 || ferror(out))
        return abl_cli_internal_error("cannot write to standard output");
    return ABL_EXIT_OK;
}

int abl_cli_main(int argc, char **argv, FILE *out, FILE *err)
{
    /* This call's streams and flags, handed down to the command (nothing of it outlives the call). */
    abl_cli_ctx ctx = {out, err, 0};
    abl_cli_err = err;
    if (argc < 2)
        return abl_cli_usage_error("no command given (see alibi-blind --help)");
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 && argc >= 3) {
        /* "alibi-blind help CMD" is "alibi-blind CMD --help". */
        const abl_cli_cmd *cmd = find_command(argv[2]);
        if (cmd == NULL)
            return unknown_command(argv[2]);
        if (argc > 3)
            return abl_cli_usage_error("help: one command at a time (got '%s' after '%s')", argv[3], argv[2]);
        print_help(out, cmd);
        return flushed(out);
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_main_help(out);
        return flushed(out);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        fprintf(out, "alibi-blind %s (MPFR %s, GMP %s)\n", ABL_VERSION_STRING, mpfr_get_version(), gmp_version);
        return flushed(out);
    }
    if (strcmp(name, "completion") == 0) /* hidden: shell completion from the option tables */
        return abl_cli_completion(&ctx, argc - 2, argv + 2);
    if (strcmp(name, "man") == 0) /* hidden: the man page from its template and the option table */
        return abl_cli_man(&ctx, argc - 2, argv + 2);
    const abl_cli_cmd *cmd = find_command(name);
    if (cmd == NULL)
        return unknown_command(name);
    const char **values = calloc(ABL_OPT_COUNT, sizeof *values);
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (values == NULL || pos == NULL) {
        free(values);
        free(pos);
        return abl_cli_internal_error("out of memory");
    }
    int npos, help, rc = parse_options(cmd, argc - 2, argv + 2, values, &npos, pos, &help, &ctx.wide);
    if (rc == 0) {
        if (help) {
            if (cmd == &abl_cli_plot_cmd && npos > 0 && abl_cli_plot_kind_help(pos[0]) != NULL)
                cmd = abl_cli_plot_kind_help(pos[0]); /* plot KIND --help: that kind's own */
            print_help(out, cmd);
            rc = flushed(out);
        } else
            rc = cmd->run(&ctx, cmd, values, npos, pos);
    }
    free(values);
    free(pos);
    mpfr_free_cache();
    return rc;
}

#ifndef ABL_CLI_NO_MAIN
int main(int argc, char **argv)
{
    return abl_cli_main(argc, argv, stdout, stderr);
}
#endif
