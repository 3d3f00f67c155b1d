/* alibi-blind: the nominal cost of the zero-logit predictor (abl_predict_run), per algorithm path.
 *
 * The paths of abl_predict.c and what their work grows with (per head):
 *   flash                       O(N log N): one galloping search per row, no row sum;
 *   eager, relative/symmetric   O(N log N): prefix sums of the same exponentials;
 *   eager, absolute/trailing    O(N log N): a certified binary64 row-sum bound per row (the rare rows
 *                               it cannot decide cost O(i) more; the rate below includes them);
 *   sdpa-efficient, sdpa-cudnn  abl_predict_sdpa.c: per key block and residue, bisections over
 *                               monotone chains; about linear in N in practice (64 heads: 0.5 to 1.6 s
 *                               at N = 32768, 4 to 15 s at 262144, the absolute form the slowest);
 *                               the absolute/trailing forms add (N/B)^2 / 2 bound products (below).
 * All are counted in query rows (H N); each path has its own nominal per-thread rate in simulate.h. A
 * path whose algorithm changes needs only its entry in predict_path_cost below and its rate constant
 * (before abl_predict_sdpa.c the SDPA path ran every row, H N (N + 1) / 2 weights at 10^7/s). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "abl/kernel/simulate.h"
#include "kernel/abl_round.h"
#include "kernel/abl_ggml.h"

typedef struct path_cost {
    double units;            /* per head */
    double rate;             /* units per second per thread */
    const char *unit_name;
} path_cost;

/* A lower bound of the schedule's smallest slope known without building it (a long schedule costs more
 * to build than to estimate): press slopes are 2^(-8k/H') >= 2^-8 for every H, mpt:B slopes
 * 2^(-kB/H') >= 2^-B (B read from the value). -1 when only the built schedule tells. */
static double min_slope_closed(const abl_schedule_spec *spec)
{
    if (spec == NULL || spec->kind == ABL_SCHEDULE_PRESS)
        return 0x1p-8;
    if (spec->kind == ABL_SCHEDULE_MPT)
        return exp2(-(double)spec->mpt_bias);
    return -1.0;
}

/* The smallest slope of a parsed schedule, rounded down (0 when none is known). */
static double min_slope_parsed(const abl_schedule *sched)
{
    double lo = INFINITY;
    mpfr_t m;
    mpfr_init2(m, 53);
    for (int h = 0; h < sched->count; h++)
        if (abl_slope_mpfr(m, &sched->slopes[h], MPFR_RNDD) == ABL_OK)
            lo = fmin(lo, mpfr_get_d(m, MPFR_RNDD));
    mpfr_clear(m);
    return isfinite(lo) ? lo : 0.0;
}

/* abl_triton_predict.c for one head of slope m: the kept chains, one per residue (B N expf steps), and each
 * row's own blocks until it joins one: about 17 / (m B) blocks (the far blocks' share of the sum below
 * 2^-24) plus two, on both sides of a bidirectional row, never more than the whole row. An expf step is
 * about a tenth of an engine key step (measured: one head of slope 2^-8 at N = 32768, bidirectional,
 * 1.24 s on one core, estimated 1.3 s). */
static double triton_units(const abl_pipeline *p, double n, double m)
{
    double B = p->block > 0 ? (double)p->block : 128.0;
    double join = m > 0 ? ceil(17.0 / (m * B)) + 2 : n / B + 1;
    if (join > n / B + 1)
        join = n / B + 1;
    return (B * n + 2 * n * join * B) / 160;
}

/* The mean of a per-head cost over the schedule's heads (the slopes differ by orders of magnitude). */
static double mean_units(const abl_simulate_config *cfg, double fallback,
                         double (*units)(const abl_pipeline *p, double n, double m))
{
    abl_schedule sched;
    if (abl_sim_estimate_schedule(cfg, &sched) != ABL_OK)
        return fallback;
    double sum = 0.0;
    mpfr_t m;
    mpfr_init2(m, 53);
    for (int h = 0; h < sched.count; h++)
        sum += units(&cfg->pipeline, (double)cfg->context,
                     abl_slope_mpfr(m, &sched.slopes[h], MPFR_RNDD) == ABL_OK ? mpfr_get_d(m, MPFR_RNDD) : 0.0);
    mpfr_clear(m);
    int count = sched.count;
    abl_schedule_free(&sched);
    return count > 0 ? sum / count : fallback;
}

/* abl_ggml_fa_predict.c (softmax=ggml-flash, causal) for one head of slope m: tiled, a pass per residue over
 * its longest row whose columns live about W = min(N, 104 / m) keys (the fp32 accumulator's subnormals), N W
 * / 64 rescales a residue, 64 residues, plus the tiles' (cached) exponentials and the rows' sums; the one-row
 * kernels far less. Units of 256 rescales and 8 per row, at ABL_GGML_FA_RATE (measured on one core of the
 * CI machine: 0.11 s for a head of slope 2^-8 at N = 32768, 0.02 s at 2^-1; 64 press heads 2.3 s; the rate
 * rounded down). The heads run one after another (abl_predict_run). */
#define ABL_GGML_FA_RATE 2e7
static double ggml_fa_units(const abl_pipeline *p, double n, double m)
{
    (void)p;
    double w = m > 0 && 104.0 / m < n ? 104.0 / m : n;
    return n * (8.0 + w / 256.0);
}

static path_cost predict_path_cost(const abl_pipeline *p, double n, double m_min)
{
    path_cost c = {n, ABL_PREDICT_RATE_BOUND, "rows"};
    double B = p->block > 0 && (double)p->block < n ? (double)p->block : n;   /* key block of the SDPA kernels */
    switch (p->softmax) {
    case ABL_SOFTMAX_SDPA_EFFICIENT:
    case ABL_SOFTMAX_SDPA_CUDNN:
        c.rate = ABL_PREDICT_RATE_SDPA;
        if (p->bias_form == ABL_BIAS_ABSOLUTE || p->bias_form == ABL_BIAS_TRAILING) {
            /* abs_group: the bound products of every full block for every last block, (N/B)^2 / 2
             * of them per head, about 25 to a row's cost: what dominates at very long contexts
             * (N = 2^24, B = 64: about ten minutes a head) and with tiny blocks */
            double blocks = floor((n - 1) / B) + 1;
            c.units += blocks * blocks / 50;
        } else {
            /* relative/symmetric: the chains of the keys a row still sees, W = min(N, 104 / m) of them
             * (104 nats: past the fp32 subnormals), cost about W^2 / B products per head, 460 to a row
             * (measured: one head of slope 1e-5 at N = 131072, B = 64: 0.58 s). Linear in N for the
             * press slopes (W <= 26,624), quadratic for very flat ones. */
            double w = m_min > 0 && ABL_PREDICT_SDPA_SEEN_NATS / m_min < n ? ABL_PREDICT_SDPA_SEEN_NATS / m_min : n;
            c.units += w * w / B / ABL_PREDICT_SDPA_CHAIN_PER_ROW;
        }
        break;
    case ABL_SOFTMAX_GGML_FLASH:
        c.units = ggml_fa_units(p, n, m_min);
        c.rate = ABL_GGML_FA_RATE;
        c.unit_name = "rescales / 256";
        break;
    case ABL_SOFTMAX_FLASH:
    case ABL_SOFTMAX_FLEX:
        c.rate = ABL_PREDICT_RATE_FLASH;
        break;
    case ABL_SOFTMAX_GGML_CUDA: {
        /* abl_ggml_cuda_predict_head: four binary searches over the distances where a row's bracket on 1/S
         * moves (about 60 products, 4 units), the rare unsettled rows run whole */
        double R = p->rows > 0 && (double)p->rows < n ? (double)p->rows : n;
        c.units = R * 4 + n / 16 + 1;
        c.unit_name = "key steps / 16";
        break;
    }
    case ABL_SOFTMAX_VLLM_TRITON:
    case ABL_SOFTMAX_TRTLLM_FMHA: {   /* abl_engines_trtllm.c walks its tiles the same way */
        /* abl_engines_triton.c's walk: each computed row's diagonal tile, and every tile's keys through the
         * later row groups until they reach 0 (at most (N/B)^2 / 2 tile-group pairs of B products) */
        double R = p->rows > 0 && (double)p->rows < n ? (double)p->rows : n;
        double tiles = n / (p->block > 0 ? p->block : 32) + 1;
        c.units = R * 4 + tiles * tiles;
        c.unit_name = "key steps / 16";
        break;
    }
    case ABL_SOFTMAX_TRITON_LSE:
        c.units = triton_units(p, n, m_min);
        c.unit_name = "expf steps / 160";
        break;
    case ABL_SOFTMAX_GGML_CUDA_VEC:
    case ABL_SOFTMAX_VLLM_PAGED:
    case ABL_SOFTMAX_TRTLLM_MMHA: {
        /* abl_engine_predict_head runs each computed row through the kernel model: R rows of up to N keys,
         * about 16 key steps to one unit at the bound rate */
        double R = p->rows > 0 && (double)p->rows < n ? (double)p->rows : n;
        c.units = R * (n / 16 + 1);
        c.unit_name = "key steps / 16";
        break;
    }
    default:
        if (p->bias_form == ABL_BIAS_RELATIVE || p->bias_form == ABL_BIAS_SYMMETRIC)
            c.rate = ABL_PREDICT_RATE_PREFIX;
        break;
    }
    return c;
}

abl_status abl_predict_estimate(const abl_simulate_config *cfg, abl_cost *out)
{
    if (cfg == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (cfg->context < 1 || cfg->context > ABL_SIMULATE_MAX_CONTEXT)
        return ABL_ERR_CONTEXT_RANGE;
    /* The head count: as given (a schedule that disagrees fails in the run itself), else from the
     * slopes:/targets: list. The SDPA paths also need the smallest slope. The schedule is built once,
     * and only when one of them needs it; a failed build fails the estimate only when the head count
     * depends on it (else the smallest slope is taken as unknown: the worst case). */
    int heads = cfg->heads;
    int sdpa = cfg->pipeline.softmax == ABL_SOFTMAX_SDPA_EFFICIENT || cfg->pipeline.softmax == ABL_SOFTMAX_SDPA_CUDNN ||
               cfg->pipeline.softmax == ABL_SOFTMAX_TRITON_LSE;   /* both need the smallest slope */
    double m_min = sdpa ? min_slope_closed(cfg->slopes) : 0.0;
    if (heads <= 0 || m_min < 0) {
        abl_schedule sched;
        abl_status st = abl_sim_estimate_schedule(cfg, &sched);
        if (st != ABL_OK && heads <= 0)
            return st;
        if (st == ABL_OK) {
            if (heads <= 0)
                heads = sched.count;
            if (m_min < 0)
                m_min = min_slope_parsed(&sched);
            abl_schedule_free(&sched);
        }
    }
    if (m_min < 0)
        m_min = 0.0;
    if (heads > ABL_MAX_HEADS)
        return ABL_ERR_HEADS_RANGE;
    /* abl_predict_run hands whole heads to min(threads, heads) threads */
    int threads = abl_sim_estimate_threads(cfg->threads);
    if (threads > heads)
        threads = heads;
    path_cost c = predict_path_cost(&cfg->pipeline, (double)cfg->context, m_min);
    if (cfg->pipeline.softmax == ABL_SOFTMAX_TRITON_LSE)
        c.units = mean_units(cfg, c.units, triton_units);
    if (cfg->pipeline.softmax == ABL_SOFTMAX_GGML_FLASH) {
        c.units = mean_units(cfg, c.units, ggml_fa_units);
        threads = 1;
    }
    if (cfg->attention == ABL_ATTENTION_BIDIRECTIONAL) {
        /* abl_simulate_bidir.c runs the heads on one thread; flash adds each row's key blocks, N / B of
         * them a row (counted as that many rows), eager one bisection a row as the causal prefix path */
        threads = 1;
        if (cfg->pipeline.softmax == ABL_SOFTMAX_FLASH) {
            double B = cfg->pipeline.block > 0 ? (double)cfg->pipeline.block : (double)cfg->context;
            c.units += c.units * (double)cfg->context / B;
        }
        /* ggml-flash (abl_ggml_fa_bidir.c): the tiled kernel about 0.3 us a row (the rows rate); the
         * one-row kernels run every row as simulate does: N^2 keys, each new max rescaling up to N / 16 */
        if (cfg->pipeline.softmax == ABL_SOFTMAX_GGML_FLASH &&
            abl_ggml_fa_kernel(&cfg->pipeline, cfg->context) != ABL_FA_TILED) {
            double n = (double)cfg->context;
            c.units = n * n * (n / 16 + 1);
            c.rate = ABL_SIMULATE_RATE;
            c.unit_name = "weights";
        }
    }
    out->units = (double)heads * c.units;
    out->threads = threads;
    /* heads are whole units of work: the slowest thread runs ceil(H / T) of them */
    out->seconds = (double)((heads + threads - 1) / threads) * c.units / c.rate;
    out->unit_name = c.unit_name;
    return ABL_OK;
}
