/* libFuzzer harness: the .npy reader of simulate --logits (abl_npy_parse: magic, version, header length,
 * the dict literal, dtype, order, shape and the size check; then abl_npy_row over every causal row of
 * a header that passed). Input: the file's bytes. Seeds: tests/cli/data/scores_*.npy. Findings:
 * sanitizer reports (any read outside the input), leaks, timeouts, and a success whose data would not
 * fit in the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "alibi_blind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    abl_npy f;
    char *err = NULL;
    abl_status st = abl_npy_parse(data, size, &f, &err);
    free(err);
    if (st != ABL_OK) {
        if (st != ABL_ERR_PARSE)
            abort();
        return 0;
    }
    uint64_t need = f.heads * f.n * f.n * (uint64_t)f.itemsize;
    if (f.data < data || (uint64_t)(data + size - f.data) < need)
        abort();
    if (f.n > 256)
        return 0;   /* keep each run short */
    float row[256];
    for (uint64_t h = 0; h < f.heads && h < 4; h++)
        for (uint64_t i = 0; i < f.n; i++)
            abl_npy_row(&f, h, i, i + 1, row);
    return 0;
}
