/* libFuzzer harness: the published-CSV reader (abl_csv_parse and the checks of abl_published_parse:
 * columns, field sizes, empty tables, repeated headers and keys). Input: one byte choosing the file
 * (table1, table4, table5, table8, claims: its required columns differ), then the file's text. Seeds:
 * the files of tables/published with their selector byte. Findings: sanitizer reports, leaks, timeouts, and
 * a success that leaves a table without rows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alibi_blind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    abl_published_file f = (abl_published_file)(data[0] % ABL_PUB_COUNT);
    abl_published p;
    memset(&p, 0, sizeof p);
    char *err = NULL;
    abl_status st = abl_published_parse(f, (const char *)data + 1, size - 1, &p, &err);
    if (st == ABL_OK && (p.files[f].rows == 0 || p.files[f].cols == 0))
        abort();
    if (st != ABL_OK && st != ABL_ERR_PARSE && st != ABL_ERR_NO_MEMORY)
        abort();
    abl_published_free(&p);
    free(err);
    return 0;
}
