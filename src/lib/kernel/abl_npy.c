/* alibi-blind: a minimal, strict reader of NumPy .npy files (see abl/kernel/npy.h). The format is
 * numpy's own (numpy/lib/format.py): the magic "\x93NUMPY", two version bytes, a little-endian header
 * length (2 bytes in version 1.0, 4 in 2.0 and 3.0), then an ASCII (3.0: UTF-8) Python dict literal
 * {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces and ended by '\n'; the
 * data follows, in C order. Only the three keys, in any order, with the values numpy writes, are
 * accepted. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "abl/kernel/npy.h"
#include "abl_internal.h"

float abl_half_to_float(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(m | 0x400), e - 25);
    return sign ? -v : v;
}

static const unsigned char *skip_ws(const unsigned char *p, const unsigned char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* p at a quoted key or value: its text (without quotes) into [*s, *e) */
static const unsigned char *quoted(const unsigned char *p, const unsigned char *end, const unsigned char **s,
                                   const unsigned char **e)
{
    if (p >= end || (*p != '\'' && *p != '"'))
        return NULL;
    unsigned char q = *p++;
    *s = p;
    while (p < end && *p != q)
        p++;
    if (p >= end)
        return NULL;
    *e = p;
    return p + 1;
}

static int word(const unsigned char *s, const unsigned char *e, const char *w)
{
    return (size_t)(e - s) == strlen(w) && memcmp(s, w, (size_t)(e - s)) == 0;
}

/* The magic, the version and the header's length: the header is buf[*hstart, *hstart + *hlen). */
static abl_status npy_preamble(const unsigned char *buf, size_t len, size_t *hstart, size_t *hlen, char **msg)
{
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
        abl_set_error(msg, "not a NumPy .npy file (no \\x93NUMPY magic)");
        return ABL_ERR_PARSE;
    }
    int major = buf[6];
    if (major == 1) {
        *hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        *hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) {
            abl_set_error(msg, "truncated .npy header");
            return ABL_ERR_PARSE;
        }
        *hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        *hstart = 12;
    } else {
        abl_set_error(msg, ".npy format version %d.%d is not supported (1.0, 2.0, 3.0)", major, buf[7]);
        return ABL_ERR_PARSE;
    }
    if (*hlen > len - *hstart) {
        abl_set_error(msg, "truncated .npy header");
        return ABL_ERR_PARSE;
    }
    return ABL_OK;
}

/* How a header item failed: its own message was set, the header is malformed, or the shape is wrong. */
enum { NPY_ITEM_OK, NPY_ITEM_SAID, NPY_ITEM_MALFORMED, NPY_ITEM_BADSHAPE };

/* The value of 'descr' at *p: float32 or float16, little-endian. */
static int npy_descr(const unsigned char **p, const unsigned char *end, abl_npy *out, char **msg)
{
    const unsigned char *vs, *ve;
    if ((*p = quoted(*p, end, &vs, &ve)) == NULL)
        return NPY_ITEM_MALFORMED;
    if (word(vs, ve, "<f4")) {
        out->itemsize = 4;
    } else if (word(vs, ve, "<f2")) {
        out->itemsize = 2;
    } else {
        abl_set_error(msg, "unsupported .npy dtype '%.*s' (float32 '<f4' or float16 '<f2')",
                      (int)(ve - vs < 32 ? ve - vs : 32), (const char *)vs);
        return NPY_ITEM_SAID;
    }
    return NPY_ITEM_OK;
}

/* The value of 'fortran_order' at *p: False (C order) only. */
static int npy_order(const unsigned char **p, const unsigned char *end, char **msg)
{
    if ((size_t)(end - *p) >= 5 && memcmp(*p, "False", 5) == 0) {
        *p += 5;
        return NPY_ITEM_OK;
    }
    if ((size_t)(end - *p) >= 4 && memcmp(*p, "True", 4) == 0) {
        abl_set_error(msg, ".npy data in Fortran order is not supported (save a C-order array)");
        return NPY_ITEM_SAID;
    }
    return NPY_ITEM_MALFORMED;
}

/* The value of 'shape' at *p: a tuple of 2 or 3 decimal integers (Python 2 longs allowed) into dims. */
static int npy_shape(const unsigned char **pp, const unsigned char *end, uint64_t dims[3], int *ndim)
{
    const unsigned char *p = *pp;
    if (p >= end || *p != '(')
        return NPY_ITEM_MALFORMED;
    p++;
    int nd = 0;
    for (;;) {
        p = skip_ws(p, end);
        if (p < end && *p == ')') {
            p++;
            break;
        }
        if (p >= end || *p < '0' || *p > '9')
            return NPY_ITEM_MALFORMED;
        uint64_t v = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            if (v > (UINT64_MAX - 9) / 10)
                return NPY_ITEM_BADSHAPE;
            v = v * 10 + (uint64_t)(*p - '0');
            p++;
        }
        while (p < end && *p == 'L')   /* Python 2 longs */
            p++;
        if (nd >= 3)
            return NPY_ITEM_BADSHAPE;
        dims[nd++] = v;
        p = skip_ws(p, end);
        if (p < end && *p == ',')
            p++;
        else if (p < end && *p == ')') {
            p++;
            break;
        } else {
            return NPY_ITEM_MALFORMED;
        }
    }
    if (nd < 2)
        return NPY_ITEM_BADSHAPE;
    *ndim = nd;
    *pp = p;
    return NPY_ITEM_OK;
}

/* The header dict {'descr': ..., 'fortran_order': ..., 'shape': (...)} in [p, end), each key once. */
static int npy_dict(const unsigned char *p, const unsigned char *end, abl_npy *out, uint64_t dims[3], char **msg)
{
    while (end > p && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    p = skip_ws(p, end);
    if (p >= end || *p != '{' || end[-1] != '}') {
        abl_set_error(msg, "malformed .npy header (not a dict)");
        return NPY_ITEM_SAID;
    }
    p++;
    end--;
    int have_descr = 0, have_order = 0, have_shape = 0, r = NPY_ITEM_OK;
    for (;;) {
        p = skip_ws(p, end);
        if (p >= end)
            break;
        const unsigned char *ks, *ke;
        if ((p = quoted(p, end, &ks, &ke)) == NULL)
            return NPY_ITEM_MALFORMED;
        p = skip_ws(p, end);
        if (p >= end || *p != ':')
            return NPY_ITEM_MALFORMED;
        p = skip_ws(p + 1, end);
        if (word(ks, ke, "descr") && !have_descr) {
            r = npy_descr(&p, end, out, msg);
            have_descr = 1;
        } else if (word(ks, ke, "fortran_order") && !have_order) {
            r = npy_order(&p, end, msg);
            have_order = 1;
        } else if (word(ks, ke, "shape") && !have_shape) {
            r = npy_shape(&p, end, dims, &out->ndim);
            have_shape = 1;
        } else {
            r = NPY_ITEM_MALFORMED;
        }
        if (r != NPY_ITEM_OK)
            return r;
        p = skip_ws(p, end);
        if (p < end && *p == ',')
            p++;
        else if (p < end)
            return NPY_ITEM_MALFORMED;
    }
    return have_descr && have_order && have_shape ? NPY_ITEM_OK : NPY_ITEM_MALFORMED;
}

/* [N, N] or [H, N, N] within the limits, and the data (avail bytes) holds all of it. */
static abl_status npy_check_shape(abl_npy *out, const uint64_t dims[3], uint64_t avail, char **msg)
{
    out->heads = out->ndim == 3 ? dims[0] : 1;
    uint64_t rows = dims[out->ndim - 2], cols = dims[out->ndim - 1];
    if (rows != cols || rows == 0 || out->heads == 0) {
        if (out->ndim == 3)
            abl_set_error(msg, "wrong .npy shape: scores must be [H, N, N] with H >= 1 and N >= 1 (got %llu x %llu x %llu)",
                          (unsigned long long)dims[0], (unsigned long long)rows, (unsigned long long)cols);
        else
            abl_set_error(msg, "wrong .npy shape: scores must be [N, N] with N >= 1 (got %llu x %llu)",
                          (unsigned long long)rows, (unsigned long long)cols);
        return ABL_ERR_PARSE;
    }
    if (rows > (UINT64_C(1) << 24) || out->heads > 65536) {
        abl_set_error(msg, "wrong .npy shape: N at most 16777216 and H at most 65536");
        return ABL_ERR_PARSE;
    }
    out->n = rows;
    /* H * N * N * itemsize <= 2^16 * 2^48 * 4 would overflow: compare in steps */
    uint64_t per_head = rows * cols * (uint64_t)out->itemsize;   /* <= 2^50 */
    if (per_head > avail / out->heads) {
        abl_set_error(msg, "truncated .npy file: %llu bytes of data, %llu x %llu x %llu x %d expected",
                      (unsigned long long)avail, (unsigned long long)out->heads, (unsigned long long)rows,
                      (unsigned long long)cols, out->itemsize);
        return ABL_ERR_PARSE;
    }
    return ABL_OK;
}

abl_status abl_npy_parse(const unsigned char *buf, size_t len, abl_npy *out, char **msg)
{
    memset(out, 0, sizeof *out);
    size_t hlen, hstart;
    abl_status st = npy_preamble(buf, len, &hstart, &hlen, msg);
    if (st != ABL_OK)
        return st;
    uint64_t dims[3] = {0, 0, 0};
    switch (npy_dict(buf + hstart, buf + hstart + hlen, out, dims, msg)) {
    case NPY_ITEM_OK:
        break;
    case NPY_ITEM_SAID:
        return ABL_ERR_PARSE;
    case NPY_ITEM_BADSHAPE:
        abl_set_error(msg, "wrong .npy shape: scores must be [N, N] or [H, N, N]");
        return ABL_ERR_PARSE;
    default:
        abl_set_error(msg, "malformed .npy header (expected 'descr', 'fortran_order' and 'shape')");
        return ABL_ERR_PARSE;
    }
    if ((st = npy_check_shape(out, dims, (uint64_t)(len - hstart - hlen), msg)) != ABL_OK)
        return st;
    out->data = buf + hstart + hlen;
    out->map = buf;
    out->map_len = len;
    return ABL_OK;
}

void abl_npy_row(const abl_npy *f, uint64_t h, uint64_t i, uint64_t count, float *out)
{
    uint64_t head = f->ndim == 3 ? h : 0;
    const unsigned char *p = f->data + ((head * f->n + i) * f->n) * (uint64_t)f->itemsize;
    if (f->itemsize == 4) {
        memcpy(out, p, count * sizeof *out);     /* little-endian host (checked at open) */
    } else {
        for (uint64_t j = 0; j < count; j++) {
            uint16_t b = (uint16_t)(p[2 * j] | p[2 * j + 1] << 8);
            out[j] = abl_half_to_float(b);
        }
    }
}

abl_status abl_npy_map(const char *path, abl_npy *out, char **msg)
{
    memset(out, 0, sizeof *out);
    {
        uint32_t one = 1;
        unsigned char c;
        memcpy(&c, &one, 1);
        if (c != 1) {
            abl_set_error(msg, "reading .npy files needs a little-endian host");
            return ABL_ERR_UNSUPPORTED;
        }
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        abl_set_error(msg, "cannot open: %s", strerror(errno));
        return ABL_ERR_IO;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        abl_set_error(msg, "not a regular file");
        return ABL_ERR_IO;
    }
    size_t len = (size_t)sb.st_size;
    if (len < 10) {
        close(fd);
        abl_set_error(msg, "not a NumPy .npy file (%zu bytes)", len);
        return ABL_ERR_PARSE;
    }
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        abl_set_error(msg, "cannot map: %s", strerror(errno));
        return ABL_ERR_IO;
    }
    abl_status st = abl_npy_parse(m, len, out, msg);
    if (st != ABL_OK) {
        munmap(m, len);
        memset(out, 0, sizeof *out);
        return st;
    }
    return ABL_OK;
}

/* 1 when the count scores at p are all finite: no exponent field of all ones (binary32 0x7f800000,
 * binary16 0x7c00). Read in place and branch-free, so that the pass over the causal part (H N^2 / 2
 * scores, before any thread starts) costs a read of the data, not a copy and a test per score. */
static int scores_finite(const unsigned char *p, uint64_t count, int itemsize)
{
    unsigned bad = 0;
    if (itemsize == 4) {
        for (uint64_t j = 0; j < count; j++) {
            uint32_t u;
            memcpy(&u, p + 4 * j, sizeof u);
            bad |= (u & 0x7f800000u) == 0x7f800000u;
        }
    } else {
        for (uint64_t j = 0; j < count; j++) {
            uint16_t b;
            memcpy(&b, p + 2 * j, sizeof b);
            bad |= (b & 0x7c00u) == 0x7c00u;
        }
    }
    return bad == 0;
}

/* The first score of row i of head h that is not finite, named in *msg (the row has one). */
static abl_status row_error(const abl_npy *f, uint64_t h, uint64_t i, char **msg)
{
    float *row = malloc((i + 1) * sizeof *row);
    if (row == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_npy_row(f, h, i, i + 1, row);
    for (uint64_t j = 0; j <= i; j++) {
        if (!isfinite(row[j])) {
            abl_set_error(msg, "%s score at head %llu, query %llu, key %llu (only finite scores)",
                          isnan(row[j]) ? "NaN" : "infinite", (unsigned long long)(h + 1), (unsigned long long)i,
                          (unsigned long long)j);
            break;
        }
    }
    free(row);
    return ABL_ERR_PARSE;
}

abl_status abl_npy_check_scores(const abl_npy *f, char **msg)
{
    if (f == NULL || f->map == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    /* every causal score finite (the rest of the matrix is masked and never read) */
    for (uint64_t h = 0; h < f->heads; h++) {
        for (uint64_t i = 0; i < f->n; i++) {
            const unsigned char *p = f->data + ((h * f->n + i) * f->n) * (uint64_t)f->itemsize;
            if (!scores_finite(p, i + 1, f->itemsize))
                return row_error(f, h, i, msg);
        }
    }
    return ABL_OK;
}

abl_status abl_npy_open(const char *path, abl_npy *out, char **msg)
{
    abl_status st = abl_npy_map(path, out, msg);
    if (st == ABL_OK && (st = abl_npy_check_scores(out, msg)) != ABL_OK)
        abl_npy_close(out);
    return st;
}

void abl_npy_close(abl_npy *f)
{
    if (f != NULL && f->map != NULL)
        munmap((void *)f->map, f->map_len);
    if (f != NULL)
        memset(f, 0, sizeof *f);
}
