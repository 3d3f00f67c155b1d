/* alibi-blind: the nominal cost of the zero-logit predictor (abl_predict_run), per algorithm path.
 *
 * The paths of abl_predict.c and what their work grows with (per head):
 *   flash                       O(N log N): one galloping search per row, no row sum;
 *   eager, relative/symmetric   O(N log N): prefix sums of the same exponentials;
 *   eager, absolute/trailing    O(N log N): a certified binary64 row-sum bound per row (the rare rows
 *                               it cannot decide cost O(i) more; the rate below includes them);
 *   sdpa-efficient, sdpa-cudnn  abl_predict_sdpa.c: searches per row (N), plus
 *                               relative/symmetric: the row sums before they settle, B K^2 steps for
 *                               K = min(N/B, 40 / (B m log2 e)) blocks (m the flattest head's slope
 *                               times bias-scale), about 128 steps to a row's cost;
 *                               absolute/trailing: the bound products of the full blocks for every last
 *                               block ((N/B)^2 / 2) and the partial block's exact sums when the logits
 *                               do not tie (N B / 2 exponentials), about 25 of either to a row's cost.
 * Every path is counted in query rows (H N, plus the SDPA terms above in row equivalents); each has
 * its own nominal per-thread rate in simulate.h. A path whose algorithm changes needs only its entry in
 * path_cost below and its rate constant. */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include "abl/core/threshold.h"
#include "abl/kernel/simulate.h"
#include "kernel/abl_round.h"

typedef struct path_cost {
    double units;            /* per head */
    double rate;             /* units per second per thread */
    const char *unit_name;
} path_cost;

/* The SDPA predictor's row equivalents per head (see the top); m_min: the flattest slope (0: unknown). */
static double sdpa_units(const abl_pipeline *p, double n, double m_min)
{
    double B = p->block > 0 && (double)p->block < n ? (double)p->block : n;
    double blocks = floor((n - 1) / B) + 1;
    if (p->bias_form == ABL_BIAS_ABSOLUTE || p->bias_form == ABL_BIAS_TRAILING)
        return n + blocks * blocks / 50 + n * B / 50;
    double scale = (double)p->bias_scale.num / (double)p->bias_scale.den;
    double K = blocks;
    if (m_min > 0 && isfinite(m_min) && scale > 0) {
        double settle = ceil(40 / (B * m_min * scale * 1.4426950408889634)) + 2;
        if (settle < K)
            K = settle;
    }
    return n + B * K * K / 128;
}

static path_cost predict_path_cost(const abl_pipeline *p, double n, double m_min)
{
    path_cost c = {n, ABL_PREDICT_RATE_BOUND, "rows"};
    switch (p->softmax) {
    case ABL_SOFTMAX_SDPA_EFFICIENT:
    case ABL_SOFTMAX_SDPA_CUDNN:
        c.units = sdpa_units(p, n, m_min);
        c.rate = ABL_PREDICT_RATE_SDPA;
        break;
    case ABL_SOFTMAX_FLASH:
        c.rate = ABL_PREDICT_RATE_FLASH;
        break;
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
    long k;
    abl_status st = abl_threshold_log2_multiple(&cfg->pipeline.output_dtype, ABL_TAU_FTZ, &k);
    if (st != ABL_OK)
        return st;
    abl_schedule sched;
    st = abl_schedule_parse(cfg->slopes ? cfg->slopes : "press", cfg->heads, k, &sched);
    if (st != ABL_OK)
        return st;
    int heads = sched.count;
    double m_min = 0.0;
    for (int h = 0; h < heads; h++)
        if (h == 0 || sched.slopes[h].value < m_min)
            m_min = sched.slopes[h].value;
    abl_schedule_free(&sched);
    /* abl_predict_run hands whole heads to min(threads, heads) threads */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = abl_sim_threads(cfg->threads);
    if (cores >= 1 && threads > cores)
        threads = (int)cores;
    if (threads > heads)
        threads = heads;
    path_cost c = predict_path_cost(&cfg->pipeline, (double)cfg->context, m_min);
    out->units = (double)heads * c.units;
    out->threads = threads;
    /* heads are whole units of work: the slowest thread runs ceil(H / T) of them */
    out->seconds = (double)((heads + threads - 1) / threads) * c.units / c.rate;
    out->unit_name = c.unit_name;
    return ABL_OK;
}
