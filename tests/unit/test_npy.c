/* Unit tests: the .npy reader (simulate --logits). Headers are built here byte by byte as numpy's
 * format.py writes them (magic, version, little-endian header length, dict literal padded with spaces
 * and '\n'), independently of the reader. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "alibi_blind.h"

/* The message pointer for one more call: the previous call's message freed (the library sets *msg
 * afresh on every call and the caller owns what it gets). */
static char **fresh(char **msg)
{
    free(*msg);
    *msg = NULL;
    return msg;
}

static size_t make(unsigned char *buf, int version, const char *dict, size_t data_bytes)
{
    size_t pre = version == 1 ? 10 : 12, dl = strlen(dict);
    size_t total = pre + dl + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = dl + pad + 1;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    buf[8] = (unsigned char)(hlen & 0xFF);
    buf[9] = (unsigned char)(hlen >> 8);
    if (version != 1) {
        buf[10] = 0;
        buf[11] = 0;
    }
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', pad);
    buf[pre + dl + pad] = '\n';
    memset(buf + pre + hlen, 0, data_bytes);
    return pre + hlen + data_bytes;
}

static void test_headers(void **state)
{
    (void)state;
    static unsigned char buf[8192];
    abl_npy f;
    char *err = NULL;
    size_t n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 4), }", 3 * 16 * 4);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_OK);
    assert_int_equal(f.ndim, 3);
    assert_int_equal(f.heads, 3);
    assert_int_equal(f.n, 4);
    assert_int_equal(f.itemsize, 4);
    /* version 2.0, keys in another order, float16, 2-D */
    n = make(buf, 2, "{'shape': (5, 5), 'fortran_order': False, 'descr': '<f2'}", 50);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_OK);
    assert_int_equal(f.ndim, 2);
    assert_int_equal(f.heads, 1);
    assert_int_equal(f.itemsize, 2);
    /* one byte short: truncated */
    assert_int_equal(abl_npy_parse(buf, n - 1, &f, fresh(&err)), ABL_ERR_PARSE);
    assert_non_null(strstr(err, "truncated"));
    n = make(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4), }", 128);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_ERR_PARSE);
    assert_non_null(strstr(err, "dtype"));
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (4, 4), }", 64);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_ERR_PARSE);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 4), }", 4 * 96);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_ERR_PARSE);
    assert_non_null(strstr(err, "shape"));
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 0), }", 0);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_ERR_PARSE);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, }", 0);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_ERR_PARSE);
    /* a huge shape whose byte count overflows 64 bits must be refused, not wrapped */
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 16777216, 16777216), }", 0);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_ERR_PARSE);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 2), }", 0);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_ERR_PARSE);
    memcpy(buf, "GARBAGE", 7);
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_ERR_PARSE);
    free(err);
}

static void test_rows(void **state)
{
    (void)state;
    static unsigned char buf[8192];
    abl_npy f;
    char *err = NULL;
    size_t n = make(buf, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3, 3), }", 2 * 9 * 2);
    unsigned char *data = buf + n - 36;
    /* head 2, row 1: 1.0 (0x3C00), -2.0 (0xC000), smallest subnormal 2^-24 (0x0001) */
    uint16_t v[3] = {0x3C00, 0xC000, 0x0001};
    for (int k = 0; k < 3; k++) {
        data[(9 + 3 + k) * 2] = (unsigned char)(v[k] & 0xFF);
        data[(9 + 3 + k) * 2 + 1] = (unsigned char)(v[k] >> 8);
    }
    assert_int_equal(abl_npy_parse(buf, n, &f, fresh(&err)), ABL_OK);
    float row[3];
    abl_npy_row(&f, 1, 1, 3, row);
    assert_true(row[0] == 1.0f && row[1] == -2.0f && row[2] == 0x1p-24f);
    assert_true(abl_half_to_float(0x7BFF) == 65504.0f);
    assert_true(abl_half_to_float(0x0400) == 0x1p-14f);
    assert_true(isnan(abl_half_to_float(0x7E00)));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headers),
        cmocka_unit_test(test_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
