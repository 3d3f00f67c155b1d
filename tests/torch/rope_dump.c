/* tests/torch/validate_rope.py's window into the rope library: the code's values for one configuration.
 * usage: rope_dump PATH DTYPE D BASE SCALING FACTOR MAXPOS N   (SCALING none|linear|dynamic|llama3:LOW:HIGH)
 * then lines on stdin:  v P1 P2 ...  -> per position and pair: "P i angle cos sin" (%a hex floats), then "end"
 *                       a P x_0..x_{D-1} (hex or decimal floats, already in DTYPE) -> the rotated vector (%a)
 *                       l PQ PK q_0..q_{D-1} k_0..k_{D-1} -> the logit the code computes (%a) */
/* getline is POSIX */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alibi_blind.h"

static int setup(char **argv, abl_rope_config *c)
{
    if (abl_rope_path_lookup(argv[1], &c->path, NULL) != ABL_OK || abl_format_lookup(argv[2], &c->dtype) != ABL_OK)
        return 1;
    c->head_dim = atoi(argv[3]);
    if (mpq_set_str(c->base, argv[4], 10) != 0)
        return 1;
    c->scaling = strcmp(argv[5], "linear") == 0 ? ABL_ROPE_SCALING_LINEAR
               : strcmp(argv[5], "dynamic") == 0 ? ABL_ROPE_SCALING_DYNAMIC
               : strncmp(argv[5], "llama3:", 7) == 0 ? ABL_ROPE_SCALING_LLAMA3
               : strncmp(argv[5], "yarn:", 5) == 0 ? ABL_ROPE_SCALING_YARN
               : strncmp(argv[5], "longrope:", 9) == 0 ? ABL_ROPE_SCALING_LONGROPE : ABL_ROPE_SCALING_NONE;
    if (c->scaling == ABL_ROPE_SCALING_LONGROPE) {   /* longrope:L0,L1,...:S0,S1,... (head_dim / 2 each) */
        char *end = argv[5] + 9;
        c->ext_count = c->head_dim / 2;
        c->long_factor = calloc((size_t)c->ext_count, sizeof(double));
        c->short_factor = calloc((size_t)c->ext_count, sizeof(double));
        if (c->long_factor == NULL || c->short_factor == NULL)
            return 1;
        for (int i = 0; i < c->ext_count; i++)
            c->long_factor[i] = strtod(end + (i > 0), &end);
        for (int i = 0; i < c->ext_count; i++)
            c->short_factor[i] = strtod(end + 1, &end);
    }
    if (c->scaling == ABL_ROPE_SCALING_YARN) {
        /* yarn:BETA_FAST:BETA_SLOW[:ATTENTION_FACTOR[:MSCALE:MSCALE_ALL_DIM:TRUNCATE]] (ATTENTION_FACTOR 0: none),
         * MAXPOS the length the ramp's ends come from */
        char *end = argv[5] + 5;
        c->beta_fast = strtod(end, &end);
        c->beta_slow = strtod(end + 1, &end);
        c->attention_factor = *end == ':' ? strtod(end + 1, &end) : 0;
        c->has_attention_factor = c->attention_factor != 0;
        if (*end == ':') {
            c->mscale = strtod(end + 1, &end);
            c->mscale_all_dim = strtod(end + 1, &end);
            c->yarn_no_truncate = strtol(end + 1, &end, 10) == 0;
        }
    }
    if (c->scaling == ABL_ROPE_SCALING_LLAMA3) {   /* llama3:LOW:HIGH, MAXPOS = original_max_position_embeddings */
        char *lo = argv[5] + 7, *hi = strchr(lo, ':');
        if (hi == NULL)
            return 1;
        *hi++ = '\0';
        if (mpq_set_str(c->low_freq, lo, 10) != 0 || mpq_set_str(c->high_freq, hi, 10) != 0)
            return 1;
    }
    if (mpq_set_str(c->factor, argv[6], 10) != 0)
        return 1;
    c->max_position = strtoull(argv[7], NULL, 10);
    c->n = strtoull(argv[8], NULL, 10);
    return 0;
}

/* "v P1 P2 ...": per position, per pair: "P i angle cos sin" */
static void dump_values(const abl_rope_config *c, char *rest)
{
    int h = c->head_dim / 2;
    float *a = calloc((size_t)h, sizeof *a), *cs = calloc((size_t)h, sizeof *cs), *sn = calloc((size_t)h, sizeof *sn);
    char *s = rest, *end;
    for (unsigned long long p = strtoull(s, &end, 10); end != s && a && cs && sn; p = strtoull(s, &end, 10)) {
        s = end;
        if (abl_rope_values(c, p, a, cs, sn) != ABL_OK) {
            printf("error\n");
            break;
        }
        for (int i = 0; i < h; i++)
            printf("%llu %d %a %a %a\n", p, i, (double)a[i], (double)cs[i], (double)sn[i]);
    }
    printf("end\n");
    free(a);
    free(cs);
    free(sn);
}

static void dump_apply(const abl_rope_config *c, unsigned long long p, char *rest)
{
    int d = c->head_dim;
    float *x = calloc((size_t)d, sizeof *x), *y = calloc((size_t)d, sizeof *y);
    char *s = rest;
    for (int j = 0; j < d && x != NULL; j++)
        x[j] = strtof(s, &s);
    if (x == NULL || y == NULL || abl_rope_apply(c, p, x, y) != ABL_OK)
        printf("error\n");
    else {
        for (int j = 0; j < d; j++)
            printf("%s%a", j ? " " : "", (double)y[j]);
        printf("\n");
    }
    free(x);
    free(y);
}

/* "l PQ PK q_0..q_{D-1} k_0..k_{D-1}": the logit the code computes (abl_rope_logit), %a */
static void dump_logit(const abl_rope_config *c, char *rest)
{
    int d = c->head_dim;
    double *x = calloc((size_t)d * 2, sizeof *x), out = 0;
    char *s = rest;
    unsigned long long pq = strtoull(s, &s, 10), pk = strtoull(s, &s, 10);
    for (int j = 0; j < 2 * d && x != NULL; j++)
        x[j] = strtod(s, &s);
    if (x == NULL || abl_rope_logit(c, x, x + d, pq, pk, &out) != ABL_OK)
        printf("error\n");
    else
        printf("%a\n", out);
    free(x);
}

int main(int argc, char **argv)
{
    if (argc != 9)
        return 2;
    abl_rope_config c;
    abl_rope_config_init(&c);
    if (setup(argv, &c) != 0)
        return 2;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        char *rest;
        if (line[0] == 'v') {
            dump_values(&c, line + 1);
        } else if (line[0] == 'l') {
            dump_logit(&c, line + 1);
        } else if (line[0] == 'a') {
            unsigned long long p = strtoull(line + 2, &rest, 10);
            dump_apply(&c, p, rest);
        }
        fflush(stdout);
    }
    free(line);
    abl_rope_config_clear(&c);
    return 0;
}
