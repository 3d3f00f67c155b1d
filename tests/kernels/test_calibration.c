/* kernels.calibration: every case of the NVIDIA H200 measurements (tests/data/gpu_h200_real_kernels.json,
 * measured by tests/data/gpu_h200_measure_real_kernels.py, described in tests/data/gpu_h200_README.md)
 * must come out exactly -- every head's first blind distance, row zeros and matrix zeros --
 * from simulate (the full emulation) and from the zero-logit predictor, through the preset that
 * models the kernel. The measurements are independent of this code: they are counts of exact zeros
 * read back from the GPU.
 *
 * Usage: test_calibration FILE.json [CASE-SUBSTRING]   (exit 0: all exact) */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alibi_blind.h"

/* case name prefix -> preset */
static const struct {
    const char *prefix;
    const char *preset;
} k_map[] = {
    {"eager_relative_", "eager"},          {"sdpa_math_", "eager"},
    {"sdpa_efficient_attention_", "sdpa-efficient"}, {"sdpa_cudnn_attention_", "sdpa-cudnn"},
    {"hf_bloom_", "bloom-hf"},             {"hf_falcon_", "falcon-hf-eager"},
    {"hf_mpt_", "mpt-hf"},
};

static int64_t jint(json_t *v)
{
    return json_is_null(v) ? -1 : (int64_t)json_integer_value(v);
}

static int check_case(const char *name, json_t *c, uint64_t n)
{
    const char *preset = NULL;
    for (size_t k = 0; k < sizeof k_map / sizeof k_map[0]; k++)
        if (strncmp(name, k_map[k].prefix, strlen(k_map[k].prefix)) == 0)
            preset = k_map[k].preset;
    const char *dt = strstr(name, "bf16") ? "bf16" : strstr(name, "fp16") ? "fp16" : "fp32";
    const char *hpos = strrchr(name, 'H');
    if (preset == NULL || hpos == NULL) {
        printf("%s: no preset for this case\n", name);
        return 0;
    }
    int heads = atoi(hpos + 1);
    abl_format model;
    if (abl_format_lookup(dt, &model) != ABL_OK)
        return 0;
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    if (abl_pipeline_parse_msg(preset, &model, &cfg.pipeline, &err) != ABL_OK) {
        printf("%s: %s\n", name, err);
        return 0;
    }
    cfg.heads = heads;
    cfg.context = n;
    abl_simulation sim;
    abl_prediction pred;
    if (abl_simulate_run(&cfg, &sim) != ABL_OK || abl_predict_run(&cfg, &pred) != ABL_OK) {
        printf("%s: simulate/predict failed\n", name);
        return 0;
    }
    json_t *fb = json_object_get(c, "first_blind"), *rz = json_object_get(c, "row_zeros"),
           *mz = json_object_get(c, "matrix_zeros");
    int ok = (int)json_array_size(fb) == heads && sim.heads == heads && pred.heads == heads;
    for (int h = 0; ok && h < heads; h++) {
        int64_t want_fb = jint(json_array_get(fb, (size_t)h));
        uint64_t want_rz = (uint64_t)json_integer_value(json_array_get(rz, (size_t)h));
        uint64_t want_mz = (uint64_t)json_integer_value(json_array_get(mz, (size_t)h));
        const abl_sim_head *a = &sim.results[h];
        const abl_pred_head *b = &pred.results[h];
        if (a->first_blind != want_fb || a->row_zeros != want_rz || a->matrix_zeros != want_mz ||
            b->first_blind != want_fb || b->row_zeros != want_rz || b->matrix_zeros != want_mz) {
            printf("%s (%s, %s) head %d: measured %lld/%llu/%llu, simulate %lld/%llu/%llu, predict %lld/%llu/%llu\n",
                   name, preset, dt, h + 1, (long long)want_fb, (unsigned long long)want_rz,
                   (unsigned long long)want_mz, (long long)a->first_blind, (unsigned long long)a->row_zeros,
                   (unsigned long long)a->matrix_zeros, (long long)b->first_blind, (unsigned long long)b->row_zeros,
                   (unsigned long long)b->matrix_zeros);
            ok = 0;
        }
    }
    printf("%-40s %-16s %s\n", name, preset, ok ? "exact" : "DIFFERS");
    abl_simulation_free(&sim);
    abl_prediction_free(&pred);
    free(err);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_calibration FILE.json [CASE-SUBSTRING]\n");
        return 2;
    }
    json_error_t jerr;
    json_t *root = json_load_file(argv[1], 0, &jerr);
    if (root == NULL) {
        fprintf(stderr, "%s: %s\n", argv[1], jerr.text);
        return 2;
    }
    uint64_t n = (uint64_t)json_integer_value(json_object_get(root, "N"));
    json_t *cases = json_object_get(root, "cases");
    const char *name;
    json_t *c;
    int all = 1, count = 0;
    json_object_foreach(cases, name, c) {
        if (argc > 2 && strstr(name, argv[2]) == NULL)
            continue;
        all &= check_case(name, c, n);
        count++;
    }
    json_decref(root);
    printf("%d cases, %s\n", count, all ? "all exact" : "NOT all exact");
    return all && count > 0 ? 0 : 1;
}
