/* Unit tests: the fast exact rows of `simulate` (src/lib/kernel/abl_simulate_fast.c) against the
 * reference rows (ABL_SIMULATE_SLOW=1: every exponential through abl_exp_rn32/abl_exp_sleef_u10,
 * the exact sum through the 256-bit accumulator, binary64 operations rounded once), weight by weight
 * on every pipeline class the fast path covers, and the certified binary64 sum against the exact
 * accumulator on random and adversarial (rounding-boundary) inputs. test_simulate.c checks both
 * paths against an independent MPFR emulation; this file proves the two paths agree where that file
 * cannot reach (long rows, every sum order and dtype). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <gmp.h>
#include "alibi_blind.h"
#include "kernel/abl_round.h"
#include "kernel/abl_simulate_fast.h"
#include "abl_test_schedule.h"

static uint64_t g_state = 0x243F6A8885A308D3u;

static uint64_t rnd(void)
{
    /* splitmix64 (Vigna) */
    uint64_t z = (g_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float exact_sum(const float *e, uint64_t n)
{
    abl_xacc a;
    abl_xacc_clear(&a);
    for (uint64_t j = 0; j < n; j++)
        abl_xacc_add(&a, e[j]);
    return abl_xacc_round32(&a);
}

/* a random non-negative finite binary32 of a random kind: any encoding, [0, 1], subnormal, 0 */
static float rnd_term(unsigned kind)
{
    switch (kind % 4) {
    case 0: return bits_float((uint32_t)(rnd() % 0x6C800000u));            /* [0, 2^90): the accumulator's range */
    case 1: return bits_float((uint32_t)(rnd() % 0x3F800001u));            /* [0, 1] */
    case 2: return bits_float((uint32_t)(rnd() % 0x00800000u));            /* 0 or subnormal */
    default: return rnd() % 3 ? 1.0f : 0.0f;
    }
}

static void test_sum_exact_random(void **state)
{
    (void)state;
    enum { MAXN = 3000 };
    float *e = malloc(MAXN * sizeof *e);
    assert_non_null(e);
    for (int trial = 0; trial < 3000; trial++) {
        uint64_t n = trial < 40 ? (uint64_t)trial : rnd() % MAXN;
        unsigned mix = (unsigned)rnd();
        for (uint64_t j = 0; j < n; j++) {
            e[j] = rnd_term(mix & 1 ? (unsigned)rnd() : mix >> 1);
            if (!(e[j] < 0x1p90f))
                e[j] = 0x1p90f;     /* the accumulator's range (2^107; values of exp are <= 1 anyway) */
        }
        float got = abl_fast_sum_exact(e, n, NULL);
        float want = exact_sum(e, n);
        assert_memory_equal(&got, &want, sizeof got);
    }
    free(e);
}

/* Sums that sit exactly on, or within a few units of 2^-149 of, a binary32 rounding boundary: the
 * binary64 sum cannot decide them; the certificate must send them to the exact accumulator. */
static void test_sum_exact_boundaries(void **state)
{
    (void)state;
    enum { N = 1000 };
    float e[N + 8];
    int fallbacks = 0;
    for (int trial = 0; trial < 4000; trial++) {
        /* an odd or even significand at binary exponent k, plus half its ulp split into pieces,
         * plus 0, +-tiny */
        int k = (int)(rnd() % 40) - 20;
        uint32_t sig = (uint32_t)(0x800000u | (rnd() & 0x7FFFFFu));
        float big = ldexpf((float)sig, k - 23);
        float half = ldexpf(1.0f, k - 24);
        uint64_t pieces = 1 + rnd() % N;
        uint64_t n = 0;
        e[n++] = big;
        /* split `half` into `pieces` equal powers of two when possible, else one piece */
        int lp = 0;
        while ((1u << (lp + 1)) <= pieces && lp < 9)
            lp++;
        for (int p = 0; p < (1 << lp); p++)
            e[n++] = ldexpf(half, -lp);
        int tweak = (int)(rnd() % 3);   /* 0: exactly the midpoint, 1: just above, 2: just below */
        if (tweak == 1)
            e[n++] = 0x1p-149f;
        if (tweak == 2)
            e[1] = nextafterf(e[1], 0.0f);   /* one piece a little smaller */
        /* shuffle */
        for (uint64_t j = n; j > 1; j--) {
            uint64_t r = rnd() % j;
            float t = e[j - 1];
            e[j - 1] = e[r];
            e[r] = t;
        }
        int fb;
        float got = abl_fast_sum_exact(e, n, &fb);
        float want = exact_sum(e, n);
        fallbacks += fb;
        assert_memory_equal(&got, &want, sizeof got);
    }
    assert_true(fallbacks > 1000);   /* the midpoints themselves cannot be decided in binary64 */
    /* the textbook tie: 1 + 2^-24 is a midpoint (ties to even: 1), one more 2^-149 rounds up */
    float t3[3] = {1.0f, 0x1p-24f, 0x1p-149f};
    assert_true(abl_fast_sum_exact(t3, 2, NULL) == 1.0f);
    assert_true(abl_fast_sum_exact(t3, 3, NULL) == 1.0f + 0x1p-23f);
}

/* abl_fast_sum against abl_emul_sum for every order, rows shorter and longer than the lanes. */
static void test_sum_orders(void **state)
{
    (void)state;
    enum { MAXN = 700 };
    float *e = malloc(MAXN * sizeof *e);
    assert_non_null(e);
    abl_pipeline p;
    assert_int_equal(abl_pipeline_parse_msg("eager", NULL, &p, NULL), ABL_OK);
    const abl_sum_order orders[] = {ABL_SUM_EXACT, ABL_SUM_SEQUENTIAL, ABL_SUM_VEC8, ABL_SUM_VEC16};
    for (int o = 0; o < 4; o++) {
        p.sum = orders[o];
        for (int trial = 0; trial < 1500; trial++) {
            uint64_t count = trial < 40 ? (uint64_t)trial : rnd() % MAXN;
            uint64_t n = count + (trial % 3 == 0 ? rnd() % 20 : 0);
            if (n == 0)
                n = 1;
            abl_emul em;
            assert_int_equal(abl_emul_init(&p, n, &em), ABL_OK);
            unsigned mix = (unsigned)rnd();
            for (uint64_t j = 0; j < count; j++)
                e[j] = rnd_term(mix & 1 ? (unsigned)rnd() : 1 + (mix >> 1) % 3);
            float got = abl_fast_sum(&em, e, count, n);
            float want = abl_emul_sum(&em, e, count, n);
            if (memcmp(&got, &want, sizeof got) != 0)
                fail_msg("order %d count %llu n %llu: %a vs %a", o, (unsigned long long)count, (unsigned long long)n,
                         (double)got, (double)want);
        }
    }
    free(e);
}

/* ---- whole simulations, fast rows against reference rows ---- */

typedef struct capture {
    int heads;
    uint64_t n;
    uint64_t *hash;     /* heads x n: a hash of row (logits, weights) */
    int *seen;
} capture;

static void hook(void *ctx, int head, uint64_t row, const float *logits, const float *weights)
{
    capture *c = ctx;
    uint64_t h = 1469598103934665603u;
    for (uint64_t j = 0; j <= row; j++) {
        uint32_t a, b;
        memcpy(&a, &logits[j], sizeof a);
        memcpy(&b, &weights[j], sizeof b);
        h = (h ^ a) * 1099511628211u;
        h = (h ^ b) * 1099511628211u;
    }
    size_t k = (size_t)(head - 1) * c->n + row;
    c->hash[k] = h;
    c->seen[k]++;
}

static const char *g_std;   /* Gaussian logits' std for the next runs (NULL: zero logits) */
static const abl_npy *g_scores;      /* captured scores for the next runs (NULL: none) */
static const char *g_scores_dtype;   /* the dtype they are rounded to (NULL: fp32) */

static void run_sim(const char *spec, const char *dtype, const char *slopes, uint64_t n, int threads, int slow,
                    int with_hook, abl_simulation *sim, capture *cap)
{
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    if (abl_pipeline_parse_msg(spec, &model, &cfg.pipeline, &err) != ABL_OK)
        fail_msg("%s: %s", spec, err);
    cfg.slopes = abl_test_schedule(slopes);
    cfg.heads = strcmp(slopes, "press") == 0 ? 16 : 0;
    cfg.context = n;
    cfg.threads = threads;
    mpq_t q;
    mpq_init(q);
    if (g_std != NULL) {
        assert_int_equal(abl_decimal_to_mpq(g_std, q), ABL_OK);
        cfg.logit_std = q;
    }
    cfg.seed = 5;
    abl_format sf;
    cfg.logits = g_scores;
    if (g_scores_dtype != NULL) {
        assert_int_equal(abl_format_lookup(g_scores_dtype, &sf), ABL_OK);
        cfg.logits_dtype = &sf;
    }
    if (with_hook) {
        cfg.row_hook = hook;
        cfg.row_hook_ctx = cap;
    }
    if (slow)
        setenv("ABL_SIMULATE_SLOW", "1", 1);
    else
        unsetenv("ABL_SIMULATE_SLOW");
    abl_status st = abl_simulate_run(&cfg, sim);
    unsetenv("ABL_SIMULATE_SLOW");
    mpq_clear(q);
    if (st != ABL_OK)
        fail_msg("%s %s N=%llu: status %d", spec, dtype, (unsigned long long)n, (int)st);
    free(err);
}

static void same_results(const abl_simulation *a, const abl_simulation *b, const char *what)
{
    assert_int_equal(a->heads, b->heads);
    for (int h = 0; h < a->heads; h++) {
        const abl_sim_head *x = &a->results[h], *y = &b->results[h];
        if (x->first_blind != y->first_blind || x->row_zeros != y->row_zeros || x->matrix_zeros != y->matrix_zeros ||
            x->distinct_logits != y->distinct_logits || x->longest_tie_run != y->longest_tie_run ||
            x->tied_with_diagonal != y->tied_with_diagonal ||
            memcmp(&x->tv_distance, &y->tv_distance, sizeof x->tv_distance) != 0)
            fail_msg("%s: head %d differs (matrix zeros %llu vs %llu)", what, h + 1,
                     (unsigned long long)x->matrix_zeros, (unsigned long long)y->matrix_zeros);
    }
    assert_int_equal(a->matrix_zeros, b->matrix_zeros);
    assert_int_equal(a->row_zeros, b->row_zeros);
}

/* every weight and logit (hook) and every statistic, fast vs reference, at thread counts 1 and 3 */
static void compare_hooked(const char *spec, const char *dtype, const char *slopes, uint64_t n)
{
    abl_simulation fast, slow;
    capture cf, cs;
    int heads = 16;
    for (capture *c = &cf; c; c = c == &cf ? &cs : NULL) {
        c->heads = heads;
        c->n = n;
        c->hash = calloc((size_t)heads * n, sizeof *c->hash);
        c->seen = calloc((size_t)heads * n, sizeof *c->seen);
        assert_non_null(c->hash);
        assert_non_null(c->seen);
    }
    run_sim(spec, dtype, slopes, n, 3, 0, 1, &fast, &cf);
    run_sim(spec, dtype, slopes, n, 1, 1, 1, &slow, &cs);
    char what[160];
    snprintf(what, sizeof what, "%s %s %s N=%llu std %s", spec, dtype, slopes, (unsigned long long)n,
             g_std ? g_std : "0");
    same_results(&fast, &slow, what);
    for (size_t k = 0; k < (size_t)fast.heads * n; k++) {
        if (cf.seen[k] != 1 || cs.seen[k] != 1 || cf.hash[k] != cs.hash[k])
            fail_msg("%s: head %zu row %zu: weights differ", what, k / n + 1, k % n);
    }
    abl_simulation_free(&fast);
    abl_simulation_free(&slow);
    free(cf.hash);
    free(cf.seen);
    free(cs.hash);
    free(cs.seen);
}

/* statistics only (no hook: the fast rows' own exact-sum branch), thread counts 2 vs 1 */
static void compare_plain(const char *spec, const char *dtype, const char *slopes, uint64_t n)
{
    abl_simulation fast, slow;
    run_sim(spec, dtype, slopes, n, 2, 0, 0, &fast, NULL);
    run_sim(spec, dtype, slopes, n, 1, 1, 0, &slow, NULL);
    char what[160];
    snprintf(what, sizeof what, "%s %s %s N=%llu std %s", spec, dtype, slopes, (unsigned long long)n,
             g_std ? g_std : "0");
    same_results(&fast, &slow, what);
    abl_simulation_free(&fast);
    abl_simulation_free(&slow);
}

static const char *const k_pipes[] = {
    "eager", "bloom-hf", "falcon-rw-hf", "mpt",
    "eager,sum=sequential", "eager,sum=vec8", "eager,sum=vec16", "eager,sum=vec8,exp=sleef",
    "eager,sum=vec16,exp=sleef,normalise=divide", "bloom-hf,sum=vec8,exp=sleef", "mpt,sum=vec8,exp=sleef",
    "falcon-rw-hf,sum=vec16", "mpt,normalise=divide", "eager,bias-form=symmetric,sum=sequential",
    "eager,output-dtype=fp32", "eager,output-dtype=fp8-e4m3fn", "bloom-hf,output-dtype=fp6-e3m2fn",
    "mpt,logit-dtype=fp32", "bloom-hf,logit-dtype=fp32,sum=vec8", "eager,bias-form=trailing,exp=sleef",
    "eager,bias-form=absolute,sum=sequential,normalise=divide", "mpt,product-dtype=tf32,sum=vec16",
};

static void test_fast_matches_reference_weights(void **state)
{
    (void)state;
    const uint64_t ns[] = {1, 2, 7, 9, 16, 17, 33, 130};
    const char *dtypes[] = {"bf16", "fp16"};
    for (size_t p = 0; p < sizeof k_pipes / sizeof *k_pipes; p++)
        for (int d = 0; d < 2; d++)
            for (size_t k = 0; k < sizeof ns / sizeof *ns; k++)
                compare_hooked(k_pipes[p], dtypes[d], "press", ns[k]);
    /* fp32 logits, steep and shallow slopes, ties in the absolute form */
    compare_hooked("eager,output-dtype=fp32", "fp32", "slopes:0.5,0.0625,1.375,3", 200);
    compare_hooked("bloom-hf", "bf16", "slopes:0.70710678118654752440,0.001,7", 300);
}

static void test_fast_matches_reference_long(void **state)
{
    (void)state;
    /* long rows: many exponentials per row, the exact sum's certificate at work, 16 lanes */
    for (size_t p = 0; p < sizeof k_pipes / sizeof *k_pipes; p++)
        compare_plain(k_pipes[p], p % 2 ? "bf16" : "fp16", "slopes:0.5,0.03125,0.0078125,0.002", 500 + 23 * p);
    compare_plain("eager", "bf16", "press", 1100);
    compare_plain("bloom-hf", "fp16", "slopes:0.001,0.0001,0.01", 1500);
}

/* Gaussian logits: every row's exponentials through abl_fastexp_rn32 */
static void test_fast_matches_reference_gaussian(void **state)
{
    (void)state;
    const char *stds[] = {"0.5", "3", "40"};
    for (int k = 0; k < 3; k++) {
        g_std = stds[k];
        for (size_t p = 0; p < sizeof k_pipes / sizeof *k_pipes; p += 3)
            compare_hooked(k_pipes[p], k % 2 ? "bf16" : "fp16", "press", 40 + (uint64_t)p);
        compare_plain("eager", "bf16", "slopes:0.5,0.03125,0.0078125,0.002", 700);
        compare_plain("mpt,logit-dtype=fp32,output-dtype=fp32", "bf16", "slopes:0.5,0.002", 500);
        /* keys skipped without a draw (their exponential provably +0) under every sum order */
        compare_plain("eager,sum=vec8,exp=sleef", "bf16", "slopes:2,0.5,0.25", 600);
        compare_plain("bloom-hf,sum=vec16", "bf16", "slopes:3,0.7", 520);
        compare_plain("mpt,sum=sequential", "fp16", "slopes:1.5,0.3", 480);
        compare_plain("falcon-rw-hf", "bf16", "slopes:8,2", 510);
    }
    g_std = NULL;
}

/* Captured scores: 2-D [N, N] scores of std `std` (a sum of four uniforms, deterministic) at byte
 * offset `skew` of buf (0: aligned, read in place; 2: misaligned, converted row by row). */
static abl_npy make_scores(unsigned char *buf, uint64_t n, double std, size_t skew)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (uint64_t k = 0; k < n * n; k++) {
        double u = 0.0;
        for (int r = 0; r < 4; r++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            u += (double)(x >> 11) * 0x1p-53 - 0.5;
        }
        float v = (float)(u * std * 1.7320508075688772);   /* sd of the sum of 4 uniforms: 1/sqrt(3) */
        memcpy(buf + skew + 4 * k, &v, sizeof v);
    }
    abl_npy f;
    memset(&f, 0, sizeof f);
    f.map = buf;
    f.map_len = (size_t)(n * n * 4 + skew);
    f.data = buf + skew;
    f.itemsize = 4;
    f.ndim = 2;
    f.heads = 1;
    f.n = n;
    return f;
}

/* Captured scores (simulate --logits, Python's simulate(logits=)): the keys skipped by their logit
 * bound (steep slopes), the in-place and the converted reads, scores rounded to bf16/fp16/fp32 */
static void test_fast_matches_reference_captured(void **state)
{
    (void)state;
    const double stds[] = {0.5, 4.0, 40.0};
    const char *sdt[] = {"bf16", NULL, "fp16"};
    const uint64_t n = 520, nh[2] = {130, 77};
    unsigned char *buf = malloc((size_t)(n * n * 4 + 2));
    assert_non_null(buf);
    for (int k = 0; k < 3; k++) {
        abl_npy f = make_scores(buf, n, stds[k], k == 1 ? 2 : 0);
        g_scores = &f;
        g_scores_dtype = sdt[k];
        for (size_t p = 0; p < sizeof k_pipes / sizeof *k_pipes; p += 2)
            compare_plain(k_pipes[p], k % 2 ? "fp16" : "bf16", "slopes:8,2,0.5,0.03125,0.002", n);
        compare_plain("eager,bias-scale=0.5", "bf16", "slopes:4,0.25", n);
        for (int q = 0; q < 2; q++) {   /* every weight and logit through the row hook */
            f = make_scores(buf, nh[q], stds[k], k == 1 ? 2 : 0);
            compare_hooked(q ? "mpt,sum=vec8,exp=sleef" : "eager", q ? "fp16" : "bf16", "press", nh[q]);
        }
    }
    g_scores = NULL;
    g_scores_dtype = NULL;
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_exact_random),
        cmocka_unit_test(test_sum_exact_boundaries),
        cmocka_unit_test(test_sum_orders),
        cmocka_unit_test(test_fast_matches_reference_weights),
        cmocka_unit_test(test_fast_matches_reference_long),
        cmocka_unit_test(test_fast_matches_reference_gaussian),
        cmocka_unit_test(test_fast_matches_reference_captured),
    };
    return cmocka_run_group_tests(tests, NULL, abl_test_schedules_free);
}
