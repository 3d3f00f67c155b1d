/* kernels.ggml_calibration: every case of the ggml CPU measurements (tests/data/ggml-cpu/cases/,
 * measured by tests/data/ggml-cpu/measure.c against ggml-org/ggml@d99724f2, described in
 * tests/data/ggml-cpu/README.md) must come out exactly from simulate through the llama.cpp presets: every
 * head's slope (bit for bit), first blind distance, last-row zeros, zeros of the rows measured, and the
 * smallest and largest first blind distance over those rows; for the soft_max cases and the
 * flash_attn_ext cases (causal: tiled, one-chunk, split-kv, abl_ggml_fa_predict.c; bidirectional:
 * abl_ggml_fa_bidir.c) also from the zero-logit predictor (first blind, row and matrix zeros of the rows
 * measured). The expected values are read from the
 * measurement files (zero counts read back from ggml's own output), never from this code.
 *
 * The pipeline is derived from the case's own parameters, not from its counts: soft_max_ext ->
 * llamacpp-cpu with the case's mask dtype; flash_attn_ext -> llamacpp-cpu-fa with the case's thread count
 * and, for rows "last:R", rows=R, so that fa-kernel=auto must pick the kernel ggml picked.
 * A case with "attention": "bidirectional" (measure.c --attention bidirectional: llama.cpp's non-causal mask,
 * -|p0 - p1| for every key) runs simulate and the predictor with --attention bidirectional; its counts are
 * the end row's, the whole N x N matrix's and the middle row's (mid_row_zeros) instead of the first blind
 * range over the rows (the row hook sees the causal rows only).
 *
 * Usage: test_ggml_calibration FILE.json...   (exit 0: all exact) */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alibi_blind.h"

#define MAX_HEADS 256

typedef struct rows_seen {
    int64_t fb_min[MAX_HEADS], fb_max[MAX_HEADS];
} rows_seen;

/* The row hook: the first zero of every row emulated, per head (index is the 1-based head). */
static void on_row(void *ctx, int head_index, uint64_t row, const float *logits, const float *weights)
{
    (void)logits;
    rows_seen *r = ctx;
    int h = head_index - 1;
    if (h < 0 || h >= MAX_HEADS)
        return;
    for (uint64_t d = 0; d <= row; d++) {
        if (weights[row - d] == 0.0f) {
            if (r->fb_min[h] < 0 || (int64_t)d < r->fb_min[h])
                r->fb_min[h] = (int64_t)d;
            if ((int64_t)d > r->fb_max[h])
                r->fb_max[h] = (int64_t)d;
            return;
        }
    }
}

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s != NULL ? s : "";
}

static int64_t jint(json_t *o, const char *k)
{
    return (int64_t)json_integer_value(json_object_get(o, k));
}

/* The pipeline text for a case, from its parameters. 0: not a case these presets model. */
static int case_pipeline(json_t *c, char *out, size_t n, int *last_rows)
{
    const char *path = jstr(c, "path"), *rows = jstr(c, "rows");
    *last_rows = strncmp(rows, "last:", 5) == 0 ? atoi(rows + 5) : 0;
    if (strcmp(jstr(c, "logits"), "zeros") != 0 || json_number_value(json_object_get(c, "scale")) != 1.0 ||
        json_number_value(json_object_get(c, "max_bias")) != 8.0)
        return 0;
    if (strcmp(path, "soft_max_ext") == 0)
        snprintf(out, n, "llamacpp-cpu,mask-dtype=%s,rows=%d", strcmp(jstr(c, "mask"), "f16") == 0 ? "fp16" : "fp32",
                 *last_rows);
    else if (strcmp(path, "flash_attn_ext") == 0)
        snprintf(out, n, "llamacpp-cpu-fa,threads=%d,rows=%d", (int)jint(c, "threads"), *last_rows);
    else
        return 0;
    return 1;
}

static int check_head(const char *file, int h, json_t *w, const abl_sim_head *a, const rows_seen *rs, int last_rows,
                      int bidir)
{
    float held = (float)a->slope_held;
    uint32_t bits;
    memcpy(&bits, &held, sizeof bits);
    unsigned long want_bits = strtoul(jstr(w, "slope_hex"), NULL, 16);
    int64_t want_fb = jint(w, "first_blind");
    uint64_t want_rz = (uint64_t)jint(w, "row_zeros");
    uint64_t want_mz = (uint64_t)jint(w, last_rows > 0 ? "zeros_in_rows" : "matrix_zeros");
    int64_t want_min = jint(w, "fb_min"), want_max = jint(w, "fb_max");
    int rows_ok = bidir ? a->mid_row_zeros == (uint64_t)jint(w, "mid_row_zeros")
                        : rs->fb_min[h] == want_min && rs->fb_max[h] == want_max;
    if (bits == want_bits && a->first_blind == want_fb && a->row_zeros == want_rz && a->matrix_zeros == want_mz &&
        rows_ok)
        return 1;
    if (bidir)
        printf("%s head %d: middle row measured %lld, simulate %llu\n", file, h + 1, (long long)jint(w, "mid_row_zeros"),
               (unsigned long long)a->mid_row_zeros);
    printf("%s head %d: measured slope 0x%08lx fb %lld rz %llu zeros %llu fb %lld..%lld; simulate 0x%08lx fb %lld "
           "rz %llu zeros %llu fb %lld..%lld\n",
           file, h + 1, want_bits, (long long)want_fb, (unsigned long long)want_rz, (unsigned long long)want_mz,
           (long long)want_min, (long long)want_max, (unsigned long)bits, (long long)a->first_blind,
           (unsigned long long)a->row_zeros, (unsigned long long)a->matrix_zeros, (long long)rs->fb_min[h],
           (long long)rs->fb_max[h]);
    return 0;
}

/* The zero-logit predictor (--predict) for the soft_max and causal flash cases: the same counts from the
 * measurement. */
static int check_predictor(const char *file, const abl_simulate_config *cfg, json_t *hs, int heads, int last_rows)
{
    abl_prediction pred;
    if (abl_predict_run(cfg, &pred) != ABL_OK) {
        printf("%s: predict failed\n", file);
        return 0;
    }
    int ok = pred.heads == heads;
    for (int h = 0; ok && h < heads; h++) {
        json_t *w = json_array_get(hs, (size_t)h);
        const abl_pred_head *b = &pred.results[h];
        if (b->first_blind != jint(w, "first_blind") || b->row_zeros != (uint64_t)jint(w, "row_zeros") ||
            b->matrix_zeros != (uint64_t)jint(w, last_rows > 0 ? "zeros_in_rows" : "matrix_zeros") ||
            (cfg->attention == ABL_ATTENTION_BIDIRECTIONAL && b->mid_row_zeros != (uint64_t)jint(w, "mid_row_zeros"))) {
            printf("%s head %d: predict %lld/%llu/%llu\n", file, h + 1, (long long)b->first_blind,
                   (unsigned long long)b->row_zeros, (unsigned long long)b->matrix_zeros);
            ok = 0;
        }
    }
    printf("%s: predict %s\n", file, ok ? "exact" : "DIFFERS");
    abl_prediction_free(&pred);
    return ok;
}

static int check_case(const char *file)
{
    json_error_t jerr;
    json_t *c = json_load_file(file, 0, &jerr);
    char spec[160];
    int last_rows = 0;
    if (c == NULL || !case_pipeline(c, spec, sizeof spec, &last_rows)) {
        printf("%s: unreadable, or not a case the llama.cpp presets model\n", file);
        json_decref(c);
        return 0;
    }
    int heads = (int)jint(c, "H");
    json_t *hs = json_object_get(c, "heads");
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    rows_seen *rs = malloc(sizeof *rs);
    int ok = rs != NULL && heads <= MAX_HEADS && (int)json_array_size(hs) == heads &&
             abl_pipeline_parse_msg(spec, NULL, &cfg.pipeline, &err) == ABL_OK;
    for (int h = 0; ok && h < MAX_HEADS; h++)
        rs->fb_min[h] = rs->fb_max[h] = -1;
    cfg.heads = heads;
    cfg.context = (uint64_t)jint(c, "N");
    int bidir = strcmp(jstr(c, "attention"), "bidirectional") == 0;
    cfg.attention = bidir ? ABL_ATTENTION_BIDIRECTIONAL : ABL_ATTENTION_CAUSAL;
    cfg.row_hook = on_row;
    cfg.row_hook_ctx = rs;
    abl_simulation sim;
    if (ok && abl_simulate_run(&cfg, &sim) != ABL_OK) {
        printf("%s (%s): simulate failed\n", file, spec);
        ok = 0;
    } else if (ok) {
        for (int h = 0; h < heads; h++)
            ok &= check_head(file, h, json_array_get(hs, (size_t)h), &sim.results[h], rs, last_rows, bidir);
        /* soft_max: every row measured; flash_attn_ext causal: the rows measured are the rows asked (rows=R);
         * flash_attn_ext on an encoder: every row (the tiled kernel, abl_ggml_fa_bidir.c) */
        if (ok && ((strcmp(jstr(c, "path"), "soft_max_ext") == 0 && last_rows == 0) ||
                   (strcmp(jstr(c, "path"), "flash_attn_ext") == 0 && (!bidir || last_rows == 0))))
            ok = check_predictor(file, &cfg, hs, heads, last_rows);
        printf("%s (%s): %s\n", file, spec, ok ? "exact" : "DIFFERS");
        abl_simulation_free(&sim);
    }
    free(err);
    free(rs);
    json_decref(c);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_ggml_calibration FILE.json...\n");
        return 2;
    }
    int exact = 0;
    for (int k = 1; k < argc; k++)
        exact += check_case(argv[k]);
    printf("%d of %d cases exact\n", exact, argc - 1);
    return exact == argc - 1 ? 0 : 1;
}
