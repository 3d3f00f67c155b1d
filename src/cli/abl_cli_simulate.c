/* alibi-blind simulate: emulate a whole causal attention layer through a real pipeline, or predict
 * its zero weights exactly without the N x N work. */
#include <errno.h>
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "abl_cli.h"

static const abl_cli_use simulate_opts[] = {
    ABL_USE(ABL_OPT_ATTENTION),
    ABL_USE(ABL_OPT_BACKWARD),
    ABL_USE(ABL_OPT_COMPARE),
    ABL_USE(ABL_OPT_CONFIG),
    /* simulator range: queries 0..N-1 */
    {ABL_OPT_CTX, 0, NULL,
     "context length N: queries 0..N-1 (1 to 16777216) [required]"},
    /* the model dtype of the pipeline */
    {ABL_OPT_DTYPE, 0, NULL,
     "the model dtype the pipeline's 'model' fields follow (default bf16)"},
    ABL_USE(ABL_OPT_FORCE),
    ABL_USE(ABL_OPT_FORMAT),
    ABL_USE(ABL_OPT_GRAD_WEIGHTS),
    ABL_USE(ABL_OPT_HEADS),
    ABL_USE(ABL_OPT_LOGIT_STD),
    ABL_USE(ABL_OPT_LOGITS),
    ABL_USE(ABL_OPT_LOGITS_DTYPE),
    ABL_USE(ABL_OPT_LOSS_SCALE),
    ABL_USE(ABL_OPT_MODEL),
    ABL_USE(ABL_OPT_OUTPUT),
    /* the kernel simulated; default eager */
    {ABL_OPT_PIPELINE, 0, NULL,
     "PRESET[,FIELD=VALUE...]: eager (default), flash2, sdpa-efficient, sdpa-cudnn, bloom-hf, falcon-hf-eager, falcon-hf-sdpa, falcon-rw-hf, mpt, mpt-hf, llamacpp-cpu, llamacpp-cpu-fa"},
    ABL_USE(ABL_OPT_PREDICT),
    ABL_USE(ABL_OPT_PROGRESS),
    ABL_USE(ABL_OPT_QUIET),
    ABL_USE(ABL_OPT_SEED),
    ABL_USE(ABL_OPT_SLOPES),
    ABL_USE(ABL_OPT_THREADS),
    ABL_USE(ABL_OPT_UPSTREAM),
    ABL_USE(ABL_OPT_WEIGHTS),
};

/* --weights: one line of logits and one of weights per row, as binary32 bit patterns. */
typedef struct dump_ctx {
    FILE *f;
    int bad;
} dump_ctx;

static void dump_values(FILE *f, const float *v, uint64_t count)
{
    for (uint64_t j = 0; j < count; j++) {
        uint32_t u;
        memcpy(&u, &v[j], sizeof u);
        fprintf(f, "%s%08x", j ? " " : "", (unsigned)u);
    }
    fputc('\n', f);
}

static void dump_row(void *ctx, int head, uint64_t row, const float *logits, const float *weights)
{
    dump_ctx *d = ctx;
    fprintf(d->f, "%d,%llu,L,", head, (unsigned long long)row);
    dump_values(d->f, logits, row + 1);
    fprintf(d->f, "%d,%llu,W,", head, (unsigned long long)row);
    dump_values(d->f, weights, row + 1);
    if (ferror(d->f))
        d->bad = 1;
}

static int simulate_with(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, mpq_t logit_std, const abl_npy *npy,
                         const abl_cli_setup *setup, abl_schedule_spec *slopes);

static int run_simulate(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, int npos, char **pos)
{
    if (npos > 0)
        return abl_cli_usage_error("simulate: unexpected argument '%s'", pos[0]);
    abl_npy npy;
    memset(&npy, 0, sizeof npy);
    const char *lpath = abl_cli_arg(cmd, v, ABL_OPT_LOGITS);
    if (lpath != NULL) {
        if (lpath[0] == '\0')
            return abl_cli_usage_error("--logits: empty file name");
        /* The header only: its shape is judged against the file's size here and against the budget
         * below, before a byte of the scores is read (abl_npy_check_scores after the budget). */
        char *lerr = NULL;
        abl_status ls = abl_npy_map(lpath, &npy, &lerr);
        int lrc = ls == ABL_OK ? 0
                               : abl_cli_usage_error("--logits: %s: %s", lpath, abl_cli_why(ls, lerr));
        free(lerr);
        if (lrc != 0)
            return lrc;
    }
    /* --model/--config: heads, slopes, dtype, context and pipeline from the model; options override */
    abl_cli_setup setup;
    memset(&setup, 0, sizeof setup);
    int model = abl_cli_arg(cmd, v, ABL_OPT_MODEL) != NULL || abl_cli_arg(cmd, v, ABL_OPT_CONFIG) != NULL;
    int rc = model ? abl_cli_setup_resolve(cmd, v, ABL_SIMULATE_MAX_CONTEXT, &setup) : 0;
    if (rc == 0) {
        mpq_t logit_std;
        mpq_init(logit_std);
        /* without --model/--config, --slopes is parsed into this value (with them, the setup's layer holds it) */
        abl_schedule_spec slopes;
        memset(&slopes, 0, sizeof slopes);
        rc = simulate_with(ctx, cmd, v, logit_std, lpath != NULL ? &npy : NULL, model ? &setup : NULL, &slopes);
        abl_schedule_spec_free(&slopes);
        mpq_clear(logit_std);
    }
    abl_cli_setup_free(&setup);
    abl_npy_close(&npy);
    return rc;
}

/* The line for a failed run (st != ABL_OK) of the emulation or the predictor; the exit status. */
static int run_error(abl_status st, const char *slopes_text, const abl_simulate_config *cfg)
{
    const char *slopes = slopes_text ? slopes_text : "press";
    if (st == ABL_ERR_BAD_SLOPE_SPEC || st == ABL_ERR_BAD_SLOPE || st == ABL_ERR_HEADS_RANGE)
        return abl_cli_usage_error("--slopes: '%s': %s", slopes, abl_cli_why(st, NULL));
    if (st == ABL_ERR_DEGENERATE)
        return abl_cli_usage_error("--slopes: '%s': a slope rounds to zero in slope-dtype=%s, or a target needs a "
                                   "non-zero tau of %s", slopes,
                                   cfg->pipeline.slope_dtype.name, cfg->pipeline.output_dtype.name);
    if (st == ABL_ERR_SLOPE_CALC)
        return abl_cli_slope_calc_error(slopes, cfg->pipeline.slope_calc);
    if (st == ABL_ERR_UNSUPPORTED)
        return abl_cli_usage_error("simulate: the bias or the logits overflow to Inf/NaN in this pipeline at N = %llu",
                                   (unsigned long long)cfg->context);
    if (st == ABL_ERR_NO_MEMORY)
        return abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    return abl_cli_usage_error("simulate: %s", abl_cli_why(st, NULL));
}

/* The report of the run, with --weights and --output: every output is written and flushed first; only then do
 * the files move into place and the report reach standard output, so a failure leaves nothing behind. */
static int simulate_write(const abl_cli_ctx *ctx, const abl_simulate_config *cfg, const abl_cli_setup *setup,
                          const abl_simulation *sim, const abl_prediction *pred, int predict, int compare,
                          abl_output out, const char *wpath, const char *opath, abl_cli_outfile *wfile,
                          const dump_ctx *dump)
{
    int rc = ABL_EXIT_OK;
    abl_status st;
    abl_report *r = NULL;
    char *buf = NULL;
    size_t len = 0;
    abl_cli_outfile ofile;
    memset(&ofile, 0, sizeof ofile);
    st = abl_simulation_report(cfg, predict ? NULL : sim, (predict || compare) ? pred : NULL, &r);
    for (size_t i = 0; st == ABL_OK && setup != NULL && i < setup->nmeta; i++)
        st = abl_report_meta(r, setup->meta[i].key, setup->meta[i].label, setup->meta[i].text,
                             setup->meta[i].json);
    if (st != ABL_OK)
        rc = abl_cli_internal_error("%s", abl_cli_why(st, NULL));
    else
        rc = abl_cli_render(ctx, r, out, &buf, &len);
    abl_report_free(r);
    if (rc == ABL_EXIT_OK && (dump->bad || (wpath != NULL && abl_cli_outfile_flush(wfile) != 0)))
        rc = abl_cli_usage_error("--weights: cannot write '%s'", wpath);
    if (rc == ABL_EXIT_OK && opath != NULL && (rc = abl_cli_outfile_open(ctx, &ofile, "output", opath)) == 0) {
        fwrite(buf, 1, len, ofile.f);
        if (abl_cli_outfile_flush(&ofile) != 0)
            rc = abl_cli_usage_error("--output: cannot write '%s'", opath);
    }
    if (rc == ABL_EXIT_OK && wpath != NULL)
        rc = abl_cli_outfile_commit(wfile);
    if (rc == ABL_EXIT_OK && opath != NULL)
        rc = abl_cli_outfile_commit(&ofile);
    if (rc == ABL_EXIT_OK && opath == NULL && (fwrite(buf, 1, len, ctx->out) != len || fflush(ctx->out) != 0))
        rc = abl_cli_internal_error("cannot write to standard output");
    abl_cli_outfile_abort(&ofile);
    free(buf);
    if (rc == ABL_EXIT_OK && compare && !abl_prediction_agrees(sim, pred))
        rc = ABL_EXIT_DIFFERS;
    return rc;
}

/* The layer: pipeline and heads (--model's, or the options), --logits-dtype into *ldt, the context and the
 * --logits file's shape. 0, or the exit status after the error. */
static int simulate_layer(const abl_cli_cmd *cmd, const char **v, const abl_cli_setup *setup, const abl_npy *npy,
                          abl_simulate_config *cfg, abl_format *ldt)
{
    const char *s;
    if (setup != NULL) {
        cfg->pipeline = setup->pipeline;
        cfg->heads = setup->layer.heads;
        cfg->attention = setup->layer.attention;
    } else {
        if ((s = abl_cli_arg(cmd, v, ABL_OPT_ATTENTION)) != NULL && abl_cli_attention(s, &cfg->attention))
            return ABL_EXIT_USAGE;
        abl_format model;
        if (abl_cli_dtype_one("dtype", (s = abl_cli_arg(cmd, v, ABL_OPT_DTYPE)) ? s : "bf16", ABL_CLI_ONE_PIPELINE, &model))
            return ABL_EXIT_USAGE;
        const char *spec = abl_cli_arg(cmd, v, ABL_OPT_PIPELINE);
        if (spec != NULL && spec[0] == '\0')
            return abl_cli_usage_error("--pipeline: empty (presets: %s)", abl_pipeline_preset_names());
        int prc = abl_cli_pipeline(spec, &model, 1, &cfg->pipeline);
        if (prc != 0)
            return prc;
        long heads = 0;
        if ((s = abl_cli_arg(cmd, v, ABL_OPT_HEADS)) && abl_cli_int("heads", s, 1, ABL_MAX_HEADS, &heads))
            return ABL_EXIT_USAGE;
        cfg->heads = (int)heads;
    }
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_LOGITS_DTYPE)) != NULL) {
        if (npy == NULL)
            return abl_cli_usage_error("--logits-dtype: applies to --logits FILE only");
        if (abl_cli_dtype("logits-dtype", s, ldt))
            return ABL_EXIT_USAGE;
        if (ldt->precision > 24 || ldt->emin < -126 || ldt->emax > 127)
            return abl_cli_usage_error("--logits-dtype: %s is wider than binary32 (the scores are read as float32)",
                                       ldt->name);
        cfg->logits_dtype = ldt;
    }
    if (setup != NULL) {
        cfg->context = setup->layer.context;
        s = "";
    } else {
        if ((s = abl_cli_arg(cmd, v, ABL_OPT_CTX)) == NULL && npy == NULL)
            return abl_cli_usage_error("simulate: --ctx N is required");
        if (s != NULL && abl_cli_context("ctx", s, 1, ABL_SIMULATE_MAX_CONTEXT, &cfg->context))
            return ABL_EXIT_USAGE;
    }
    if (npy != NULL) {
        if (s == NULL)
            cfg->context = npy->n;
        else if (cfg->context != npy->n)
            return abl_cli_usage_error("--logits: the file holds N = %llu scores per row, --ctx is %llu",
                                       (unsigned long long)npy->n, (unsigned long long)cfg->context);
        if (npy->ndim == 3) {
            if (cfg->heads == 0 && abl_cli_arg(cmd, v, ABL_OPT_SLOPES) == NULL)
                cfg->heads = (int)npy->heads;
            else if (cfg->heads != 0 && (uint64_t)cfg->heads != npy->heads)
                return abl_cli_usage_error("--logits: the file holds H = %llu heads, --heads is %d",
                                           (unsigned long long)npy->heads, cfg->heads);
        }
        cfg->logits = npy;
    }
    return 0;
}

/* --logit-std (into logit_std; *gaussian when positive), --seed, --threads. 0, or the exit status. */
static int simulate_numbers(const abl_cli_cmd *cmd, const char **v, mpq_t logit_std, abl_simulate_config *cfg,
                            int *gaussian)
{
    const char *s;
    *gaussian = 0;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_LOGIT_STD)) != NULL) {
        if (abl_cli_decimal("logit-std", s, 0, logit_std))
            return ABL_EXIT_USAGE;
        int sgn = mpq_sgn(logit_std), big = mpq_cmp_ui(logit_std, ABL_SIMULATE_MAX_LOGIT_STD, 1) > 0;
        if (sgn < 0 || big)
            return abl_cli_usage_error("--logit-std: %s is out of range (0 to %d)", s, ABL_SIMULATE_MAX_LOGIT_STD);
        cfg->logit_std = logit_std;
        *gaussian = sgn > 0;
    }
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_SEED)) && abl_cli_count("seed", s, 0, UINT64_C(9223372036854775807), &cfg->seed))
        return ABL_EXIT_USAGE;
    long threads = 0;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_THREADS)) && abl_cli_int("threads", s, 1, 256, &threads))
        return ABL_EXIT_USAGE;
    cfg->threads = (int)threads;
    return 0;
}

/* --heads where the schedule does not give H, and what --predict/--compare and --logits/--logit-std exclude. 0, or the exit status after the error. */
static int simulate_excludes(const abl_npy *npy, int gaussian, int predict, int compare, const abl_simulate_config *cfg)
{
    if (cfg->heads == 0 && (cfg->slopes == NULL || (cfg->slopes->kind != ABL_SCHEDULE_SLOPES &&
                                                    cfg->slopes->kind != ABL_SCHEDULE_TARGETS)))
        return abl_cli_usage_error("simulate: --heads H is required (except with slopes:/targets: lists)");
    if (npy != NULL && gaussian)
        return abl_cli_usage_error("--logits: captured scores exclude --logit-std");
    if (npy != NULL && (predict || compare))
        return abl_cli_usage_error("--%s: the predictor answers for zero logits (drop --logits)",
                                   predict ? "predict" : "compare");
    if (predict && compare)
        return abl_cli_usage_error("simulate: --predict and --compare exclude each other");
    if (predict || compare) {
        if (gaussian)
            return abl_cli_usage_error("--%s: the predictor answers for zero logits (drop --logit-std)",
                                       predict ? "predict" : "compare");
        if (cfg->pipeline.softmax == ABL_SOFTMAX_EAGER &&
            (cfg->pipeline.sum != ABL_SUM_EXACT || cfg->pipeline.exp != ABL_EXP_CORRECT))
            return abl_cli_usage_error("--%s: the predictor models an eager pipeline with sum=exact and exp=correct "
                                       "(got sum=%s, exp=%s)", predict ? "predict" : "compare",
                                       abl_sum_order_name(cfg->pipeline.sum), abl_exp_model_name(cfg->pipeline.exp));
    }
    return 0;
}

/* --weights FILE (not the --output file): opened, and the row hook that dumps each row into it (0 without --weights). */
static int open_weights(const abl_cli_ctx *ctx, const char *wpath, const char *opath, int predict,
                        abl_simulate_config *cfg, abl_cli_outfile *wfile, dump_ctx *dump)
{
    if (wpath != NULL && opath != NULL && abl_cli_same_file(wpath, opath))
        return abl_cli_usage_error("--weights: '%s' is also the --output file; give two different files", wpath);
    if (wpath == NULL)
        return 0;
    if (predict)
        return abl_cli_usage_error("--weights: --predict computes no weights");
    if (cfg->context > 4096)
        return abl_cli_usage_error("--weights: N = %llu is too large to dump (at most 4096)",
                                   (unsigned long long)cfg->context);
    int wrc = abl_cli_outfile_open(ctx, wfile, "weights", wpath);
    if (wrc != 0)
        return wrc;
    dump->f = wfile->f;
    fprintf(dump->f, "# alibi-blind simulate: head,row,L|W,values of keys 0..row as binary32 bits (hex)\n");
    cfg->row_hook = dump_row;
    cfg->row_hook_ctx = dump;
    return 0;
}

/* A bidirectional layer: a kernel that can run it (abl_cli_attention_kernel), and no --weights dump (its rows
 * hold keys 0..i of causal rows). 0, or the exit status after the error. */
static int simulate_attention(const abl_cli_cmd *cmd, const char **v, const abl_simulate_config *cfg, int predict)
{
    if (abl_cli_attention_kernel(cfg->attention, &cfg->pipeline, predict) != 0)
        return ABL_EXIT_USAGE;
    if (cfg->attention == ABL_ATTENTION_BIDIRECTIONAL && abl_cli_arg(cmd, v, ABL_OPT_WEIGHTS) != NULL)
        return abl_cli_usage_error("--weights: the dump holds keys 0..i of causal rows; a bidirectional layer's "
                                   "rows are not dumped (drop --weights)");
    if (cfg->attention == ABL_ATTENTION_BIDIRECTIONAL && abl_cli_arg(cmd, v, ABL_OPT_BACKWARD) != NULL)
        return abl_cli_usage_error("--backward: the backward emulation answers causal layers only (drop "
                                   "--attention bidirectional)");
    return 0;
}

/* --logits: every causal score finite (read after the budget check). 0, or the exit status after the error
 * (the --weights file abandoned). */
static int check_scores(const abl_cli_cmd *cmd, const char **v, const abl_npy *npy, abl_cli_outfile *wfile)
{
    char *lerr = NULL;
    abl_status st = abl_npy_check_scores(npy, &lerr);
    if (st == ABL_OK)
        return 0;
    abl_cli_outfile_abort(wfile);
    int lrc = st == ABL_ERR_NO_MEMORY ? abl_cli_internal_error("%s", abl_cli_why(st, NULL))
                                      : abl_cli_usage_error("--logits: %s: %s", abl_cli_arg(cmd, v, ABL_OPT_LOGITS),
                                                            abl_cli_why(st, lerr));
    free(lerr);
    return lrc;
}

static int simulate_with(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, mpq_t logit_std, const abl_npy *npy,
                         const abl_cli_setup *setup, abl_schedule_spec *slopes)
{
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    const char *s;
    abl_output out = ABL_OUT_TEXT;
    if ((s = abl_cli_arg(cmd, v, ABL_OPT_FORMAT)) && abl_cli_output(s, &out))
        return ABL_EXIT_USAGE;
    abl_format ldt;
    int rc0 = simulate_layer(cmd, v, setup, npy, &cfg, &ldt);
    if (rc0 != 0)
        return rc0;
    int gaussian;
    if ((rc0 = simulate_numbers(cmd, v, logit_std, &cfg, &gaussian)) != 0)
        return rc0;
    const char *slopes_text = setup != NULL ? setup->slopes : abl_cli_arg(cmd, v, ABL_OPT_SLOPES);
    if (setup == NULL && abl_cli_slopes(slopes_text, slopes))
        return ABL_EXIT_USAGE;
    cfg.slopes = slopes_text != NULL ? (setup != NULL ? abl_layer_schedule(&setup->layer) : slopes) : NULL;
    int predict = abl_cli_arg(cmd, v, ABL_OPT_PREDICT) != NULL, compare = abl_cli_arg(cmd, v, ABL_OPT_COMPARE) != NULL;
    if ((rc0 = simulate_excludes(npy, gaussian, predict, compare, &cfg)) != 0)
        return rc0;
    if ((rc0 = simulate_attention(cmd, v, &cfg, predict || compare)) != 0)
        return rc0;
    const char *wpath = abl_cli_arg(cmd, v, ABL_OPT_WEIGHTS), *opath = abl_cli_arg(cmd, v, ABL_OPT_OUTPUT);
    if ((rc0 = abl_cli_backward_checks(cmd, v, wpath)) != 0)
        return rc0;
    dump_ctx dump = {NULL, 0};
    abl_cli_outfile wfile;
    memset(&wfile, 0, sizeof wfile);
    if ((rc0 = open_weights(ctx, wpath, opath, predict, &cfg, &wfile, &dump)) != 0)
        return rc0;
    abl_simulation sim;
    abl_prediction pred;
    memset(&sim, 0, sizeof sim);
    memset(&pred, 0, sizeof pred);
    abl_status st = ABL_OK;
    abl_cli_bar bar;
    abl_cli_bar_init(ctx, &bar, "simulate", cmd, v);
    /* The cost is known before any work starts (the emulation's and the predictor's, as run): refuse
     * it above the budget unless forced. */
    abl_cost cost;
    memset(&cost, 0, sizeof cost);
    if (!predict)
        st = abl_simulate_estimate(&cfg, &cost);
    abl_cli_work work = abl_cli_work_of("simulate", v);
    if (st == ABL_OK && abl_cli_predict_budget(&work, &cfg, predict || compare ? 1 : 0, predict ? NULL : &cost) != 0) {
        abl_cli_outfile_abort(&wfile);
        return ABL_EXIT_USAGE;
    }
    if (npy != NULL && (rc0 = check_scores(cmd, v, npy, &wfile)) != 0)
        return rc0;
    if (abl_cli_arg(cmd, v, ABL_OPT_BACKWARD) != NULL) { /* its own run and report (abl_cli_gradient.c) */
        abl_cli_bar_finish(&bar);
        return abl_cli_simulate_backward(ctx, cmd, v, &cfg, predict, compare, out);
    }
    if (!predict) {
        cfg.progress.fn = abl_cli_bar_update;
        cfg.progress.ctx = &bar;
    }
    if (!predict && st == ABL_OK)
        st = abl_simulate_run(&cfg, &sim);
    abl_cli_bar_finish(&bar);
    if (st == ABL_OK && (predict || compare))
        st = abl_predict_run(&cfg, &pred);
    int rc = ABL_EXIT_OK;
    if (st != ABL_OK)
        rc = run_error(st, slopes_text, &cfg);
    else
        rc = simulate_write(ctx, &cfg, setup, &sim, &pred, predict, compare, out, wpath, opath, &wfile, &dump);
    abl_cli_outfile_abort(&wfile);
    abl_simulation_free(&sim);
    abl_prediction_free(&pred);
    return rc;
}

const abl_cli_cmd abl_cli_simulate_cmd = {
    "simulate",
    "emulate a causal attention layer through a real kernel's roundings",
    "--heads H --ctx N [--pipeline PRESET[,FIELD=VALUE...]] [options] | --model NAME | --config FILE [options]",
    "Emulates every weight of the N x N causal attention matrix of every head, rounding exactly as the\n"
    "pipeline does: the bias form and the dtypes it is built, stored and added in, the softmax (eager:\n"
    "fp32 exp, fp32 reciprocal of the sum, fp32 product, one rounding into the output dtype; flash:\n"
    "exp2 with flush-to-zero against the running max; sdpa-efficient / sdpa-cudnn: torch SDPA's fused\n"
    "kernels, P in the model dtype per key block, fp32 rescaling and normalisation), and the output\n"
    "dtype. Per head: the first blind distance and the zeros of the last row, the zeros of the matrix,\n"
    "the distinct logits, ties and the total-variation distance of the last row from an exact softmax.\n"
    "Streams rows (O(N) memory per thread) on every core.\n\n",
    simulate_opts,
    sizeof simulate_opts / sizeof simulate_opts[0],
    run_simulate,
    "Pipeline fields (override after the preset, e.g. bloom-hf,output-dtype=fp16): bias-form\n"
    "(relative, absolute, symmetric, trailing), slope-dtype, slope-calc (exact, torch-pow, mpt-pow,\n"
    "ggml-powf, flex-exp2),\n"
    "product-dtype, bias-dtype, bias-scale, bias-add (scores, mask, both), logit-dtype, softmax (eager,\n"
    "flash, sdpa-efficient, sdpa-cudnn, ggml, ggml-flash, ggml-cuda-vec, vllm-paged,\n"
    "trtllm-mmha, flex, ggml-cuda, vllm-triton, trtllm-fmha), sum (exact, sequential, vec8, vec16), exp\n"
    "(correct, sleef, ggml-avx2, ggml-scalar), normalise (reciprocal, divide), output-dtype, head-dim,\n"
    "block, mask-dtype (ggml: fp32, fp16), fa-kernel (auto, tiled, one-chunk, split-kv), threads, rows\n"
    "(ggml and the GPU engines: the last R query rows of one call, 0 = all), version (the code revision: newest, the\n"
    "default, or one the preset lists above; every output names it), splits (flash: FlashAttention-2's\n"
    "num_splits, auto or 1..128; auto = vLLM's rule, the heuristic for 132 SMs at rows=1, else 1;\n"
    "vllm-triton: the 3-D kernel's segments, auto = 16 at rows=1 and <= 128 heads, 1 = the 2-D kernel); a\n"
    "dtype field takes a format name or\n"
    "'model' (--dtype). exp=sleef,sum=vec8 is PyTorch's CPU softmax on AVX2 bit for bit.\n"
    "docs/pipelines.md gives each preset's source. --model/--config take the heads, slopes, dtype, context\n"
    "and default code path from a catalogue model or a config.json (explicit options override them).\n\n"
    "Example: alibi-blind simulate --heads 16 --ctx 2048 --pipeline bloom-hf",
};
