/* libFuzzer harness: the two readers of `rope` (issue 22). Input: one byte choosing the reader (even: the
 * config.json reader abl_rope_file_parse; odd: the .npy vector reader abl_rope_vector_parse of --q/--k), then
 * the file's bytes. Seeds: tests/data/configs/rope_*.json and tests/cli/data/rope_*.npy. Findings: sanitizer
 * reports, leaks, timeouts, and a broken contract: a status other than OK / parse error / unsupported (config)
 * or OK / parse error (vector); an error message empty or over one line; an accepted config without an even
 * head dim in 2..1024 and a rope_theta, a scaled one without its factor (longrope: unless the lengths give
 * it) or a longrope one without its two lists; an accepted vector without 2..1024 finite values. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "alibi_blind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_message(abl_status st, char *msg)
{
    if (st == ABL_ERR_NO_MEMORY)
        return;
    if (msg == NULL || msg[0] == '\0' || strchr(msg, '\n') != NULL)
        abort();
}

static void fuzz_config(const uint8_t *data, size_t size)
{
    abl_rope_file f;
    char *msg = NULL;
    abl_status st = abl_rope_file_parse((const char *)data, size, &f, &msg);
    if (st == ABL_OK) {
        /* longrope with a top-level original_max_position_embeddings takes its factor from the lengths */
        int factor_from_lengths = f.scaling == ABL_ROPE_SCALING_LONGROPE && f.has_original;
        if (f.head_dim < 2 || f.head_dim > 1024 || f.head_dim % 2 != 0 || f.rope_theta == NULL ||
            (f.scaling != ABL_ROPE_SCALING_NONE && f.factor == NULL && !factor_from_lengths) ||
            (f.scaling == ABL_ROPE_SCALING_LONGROPE && (f.long_factor == NULL || f.short_factor == NULL)))
            abort();
        abl_rope_file_free(&f);
    } else if (st != ABL_ERR_PARSE && st != ABL_ERR_UNSUPPORTED && st != ABL_ERR_NO_MEMORY) {
        abort();
    } else {
        check_message(st, msg);
    }
    free(msg);
}

static void fuzz_vector(const uint8_t *data, size_t size)
{
    double *v = NULL;
    int n = 0;
    char *msg = NULL;
    abl_status st = abl_rope_vector_parse(data, size, &v, &n, &msg);
    if (st == ABL_OK) {
        if (v == NULL || n < 2 || n > 1024)
            abort();
        for (int i = 0; i < n; i++)
            if (!isfinite(v[i]))
                abort();
    } else if (st != ABL_ERR_PARSE && st != ABL_ERR_NO_MEMORY) {
        abort();
    } else {
        check_message(st, msg);
    }
    free(v);
    free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    if (data[0] % 2 == 0)
        fuzz_config(data + 1, size - 1);
    else
        fuzz_vector(data + 1, size - 1);
    return 0;
}
