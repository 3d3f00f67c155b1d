/*
 * The CLI's options, each once: name, argument kind, metavar and help text, sorted by name and indexed by
 * its id (abl_cli.h). Commands list the ids they take (their `opts`); --help, `alibi-blind man` (the man
 * page's OPTIONS) and `alibi-blind completion` are written from this table and the lists.
 */
#include <assert.h>
#include <string.h>
#include "abl_cli.h"

const abl_cli_opt abl_cli_options[ABL_OPT_COUNT] = {
    [ABL_OPT_ATTENTION] = {"attention", ABL_ARG_VALUE, "DIR",
            "causal (decoders) or bidirectional (encoders: every row attends all N keys at |i-j|); default: "
            "the model's, else causal"},
    [ABL_OPT_BACKWARD] = {"backward", ABL_ARG_FLAG, NULL,
            "also the backward pass: zero gradients dS = P (dP - D) of the scores (spec §15); the backward kind "
            "follows the softmax: eager (PyTorch, upcast or native), sdpa-efficient (memeff) and flash "
            "(FlashAttention-2), the last two modelled from source, not measured"},
    [ABL_OPT_BASE] = {"base", ABL_ARG_VALUE, "B",
            "rope: the RoPE base (rope_theta), exact decimal > 1 (default 10000, or the model's)"},
    [ABL_OPT_CLAMP] = {"clamp", ABL_ARG_VALUE, "C",
            "clamp the bias at C (mitigation C; paper: -87)"},
    [ABL_OPT_COMPARE] = {"compare", ABL_ARG_FLAG, NULL,
            "run the simulation and the zero-logit predictor; exit 1 if they disagree"},
    [ABL_OPT_CONFIG] = {"config", ABL_ARG_FILE, "FILE",
            "a Hugging Face config.json, a folder holding one (a downloaded snapshot) or - (standard input): "
            "heads, slopes, dtype, context and code path from it"},
    [ABL_OPT_CONVENTION] = {"convention", ABL_ARG_CONVENTION, "NAME",
            "paper (default), ftz, ieee or subnormal: which tau and rounding (spec §4)"},
    [ABL_OPT_CRITERION] = {"criterion", ABL_ARG_VALUE, "KIND",
            "what makes a key lost: weight (default: its attention weight is 0), influence (its term in P.V "
            "is 0 for unit-scale values: P rounded to pv-dtype, added in pv-accumulate) or gradient (its "
            "score's rounded gradient is 0, spec §15; with --loss-scale, --upstream)"},
    [ABL_OPT_CTX] = {"ctx", ABL_ARG_VALUE, "N",
            "context length N (1 to 1e18): 8192, 1e12, 8k or 8K (k = 1024: 8192), 64Ki, 1M (1024^2), 2^15 [required]"},
    [ABL_OPT_DATA] = {"data", ABL_ARG_FILE, "FILE",
            "also write the plotted data, exactly as drawn, into FILE as CSV (written atomically)"},
    [ABL_OPT_DEVICE] = {"device", ABL_ARG_VALUE, "DEV",
            "png, svg or pdf (default: from the --output extension)"},
    [ABL_OPT_DIFFERENCES] = {"differences", ABL_ARG_FLAG, NULL,
            "list only the values that differ (and stale errata)"},
    [ABL_OPT_DIGITS] = {"digits", ABL_ARG_VALUE, "N",
            "decimals after the point, correctly rounded (default 10, up to 1000)"},
    [ABL_OPT_DISTANCE] = {"distance", ABL_ARG_VALUE, "KIND",
            "linear (default) or log: g(d) = d or ln(d + 1)"},
    [ABL_OPT_DTYPE] = {"dtype", ABL_ARG_DTYPE, "TYPE",
            "floating-point format (default bf16)"},
    [ABL_OPT_EXACT] = {"exact", ABL_ARG_FLAG, NULL,
            "table 8: print each δ itself (4.37e53 style) instead of * and **"},
    [ABL_OPT_FORCE] = {"force", ABL_ARG_FLAG, NULL,
            "run even if the estimated work is over the budget (1 minute)"},
    [ABL_OPT_FORMAT] = {"format", ABL_ARG_FORMAT, "FMT",
            "output: text (default), markdown, csv, json, latex"},
    [ABL_OPT_GRAD_WEIGHTS] = {"grad-weights", ABL_ARG_FILE, "FILE",
            "--backward: dP, the gradient of the loss w.r.t. the weights, .npy [H, N, N] or [N, N]"},
    [ABL_OPT_GRADIENT] = {"gradient", ABL_ARG_FLAG, NULL,
            "where the rounded gradient dS = P (dP - D) of a score is 0 (spec §15) instead of the weight"},
    [ABL_OPT_HEAD] = {"head", ABL_ARG_VALUE, "H",
            "blindmap: the head to draw (default 1; 0: every head as small multiples)"},
    [ABL_OPT_HEAD_DIM] = {"head-dim", ABL_ARG_VALUE, "D",
            "rope: the rotary dimension, even, 2 to 1024 (default 128, or the model's)"},
    [ABL_OPT_HEADS] = {"heads", ABL_ARG_VALUE, "H",
            "number of heads (1 to 65536); optional with slopes:/targets: lists"},
    [ABL_OPT_HEIGHT] = {"height", ABL_ARG_VALUE, "PX",
            "page height (default 800; pixels for PNG, points for SVG/PDF)"},
    [ABL_OPT_HELP] = {"help", ABL_ARG_FLAG, NULL,
            "describe the command and its options (also -h)"},
    [ABL_OPT_IEEE] = {"ieee", ABL_ARG_FLAG, NULL,
            "tables 1, 5: add δ1 and δH under the ieee convention"},
    [ABL_OPT_K] = {"k", ABL_ARG_FILE, "FILE",
            "rope: a key vector, .npy of shape (d,) ('<f2', '<f4', '<f8'); with --q: the logits the code computes"},
    [ABL_OPT_KEEP] = {"keep", ABL_ARG_VALUE, "WHAT",
            "all (default): every head keeps every key (steepest head as steep as allowed)"},
    [ABL_OPT_LEVEL] = {"level", ABL_ARG_VALUE, "LEVEL",
            "exponent (default: exp(x) underflows, the paper) or weight (exp(x)/S underflows, spec §4)"},
    [ABL_OPT_LIBM] = {"libm", ABL_ARG_FLAG, NULL,
            "also compare the host expf/exp2f with the correctly rounded exp (binary32; informational)"},
    [ABL_OPT_LINEAR] = {"linear", ABL_ARG_FLAG, NULL,
            "fraction: a linear N axis from 0 (the paper's Figure 1b) instead of log N"},
    [ABL_OPT_LOGIT] = {"logit", ABL_ARG_VALUE, "EPS",
            "attention logit epsilon added to the bias (default 0)"},
    [ABL_OPT_LOGIT_BUDGET] = {"logit-budget", ABL_ARG_VALUE, "B",
            "the most negative logit a key at distance N-1 must still be seen with (default 0)"},
    [ABL_OPT_LOGIT_RANGE] = {"logit-range", ABL_ARG_VALUE, "LO:HI",
            "logits between LO and HI: report delta(LO) and delta(HI) per head"},
    [ABL_OPT_LOGIT_STD] = {"logit-std", ABL_ARG_VALUE, "S",
            "Gaussian logits N(0, S^2) instead of zero logits (0 to 1000)"},
    [ABL_OPT_LOGITS] = {"logits", ABL_ARG_FILE, "FILE",
            "captured scores q.k^T*scale before the bias: .npy float32/float16, [H,N,N] or [N,N]"},
    [ABL_OPT_LOGITS_DTYPE] = {"logits-dtype", ABL_ARG_VALUE, "TYPE",
            "the dtype the model held the captured scores in (rounded to it; default fp32)"},
    [ABL_OPT_LOSS_SCALE] = {"loss-scale", ABL_ARG_VALUE, "S",
            "gradient: loss scale, a power of two (65536, 2^16) or dynamic (GradScaler's 2^16); default 1"},
    [ABL_OPT_MAX_BLIND_HEADS] = {"max-blind-heads", ABL_ARG_VALUE, "K",
            "heads allowed to have a zero weight in the last row (default 0)"},
    [ABL_OPT_MAX_ROW_FRACTION] = {"max-row-fraction", ABL_ARG_VALUE, "F",
            "largest allowed fraction of zero weights in the last row, 0 to 1 (default: no limit)"},
    [ABL_OPT_MITIGATE] = {"mitigate", ABL_ARG_VALUE, "LIST",
            "paper mitigations, e.g. C,E,L,S: clamp -87, robust slopes 32*2^(h-1), log distance, soft cap 50"},
    [ABL_OPT_MODEL] = {"model", ABL_ARG_VALUE, "NAME",
            "a model of the catalogue (alibi-blind models): its heads, slopes, dtype, context, code path; "
            "an org/name it lacks is read from the local Hugging Face cache (no network); analyze and check take a "
            "list a,b,c: one table, a row per model"},
    [ABL_OPT_OUTPUT] = {"output", ABL_ARG_FILE, "FILE",
            "write to FILE (atomically) instead of standard output; - is standard output"},
    [ABL_OPT_PIPELINE] = {"pipeline", ABL_ARG_VALUE, "SPEC",
            "PRESET[,FIELD=VALUE...] or a code path of the model: the real kernel's first blind d"},
    [ABL_OPT_PLOT] = {"plot", ABL_ARG_FILE, "FILE",
            "also draw the panel (plot bias / plot fraction --linear) into FILE (.png, .svg, .pdf)"},
    [ABL_OPT_PREDICT] = {"predict", ABL_ARG_FLAG, NULL,
            "zero logits: the exact predictor alone, O(N log N) per head"},
    [ABL_OPT_PROGRESS] = {"progress", ABL_ARG_FLAG, NULL,
            "progress bar on stderr even when not a terminal"},
    [ABL_OPT_PUBLISHED] = {"published", ABL_ARG_DIR, "DIR",
            "read the published values from DIR/table1.csv ... DIR/claims.csv instead of the built-in copy"},
    [ABL_OPT_Q] = {"q", ABL_ARG_FILE, "FILE",
            "rope: a query vector, .npy of shape (d,) ('<f2', '<f4', '<f8'); with --k"},
    [ABL_OPT_QUIET] = {"quiet", ABL_ARG_FLAG, NULL,
            "no progress bar"},
    [ABL_OPT_RN] = {"rn", ABL_ARG_FLAG, NULL,
            "table 4: add the exact round-to-nearest points (where exp gives 0 or overflows)"},
    [ABL_OPT_SCALING] = {"scaling", ABL_ARG_VALUE, "KIND",
            "rope: none, linear:F (positions / F), dynamic:F:MAXPOS (hf dynamic NTK), llama3:F:LOW:HIGH:ORIGINAL, "
            "yarn:F:MAXPOS[:BETA_FAST:BETA_SLOW] or longrope:F:ORIGINAL:L1,L2,...:S1,S2,... (F = max_position_embeddings "
            "/ ORIGINAL; head_dim/2 long and short factors; the long ones when --ctx passes ORIGINAL) (hf-llama; linear "
            "and yarn also ggml-cpu: llama.cpp's own); "
            "default: the model's"},
    [ABL_OPT_SEED] = {"seed", ABL_ARG_VALUE, "K",
            "seed of the Gaussian logits (default 0)"},
    [ABL_OPT_SHIFT] = {"shift", ABL_ARG_VALUE, "D1,D2",
            "rope: the two position shifts of the shift sensitivity, D1 < D2 (default 0,16: the paper's)"},
    [ABL_OPT_SLOPES] = {"slopes", ABL_ARG_VALUE, "SPEC",
            "press (default), mpt:B, pow2only, geometric:D1:DH, targets:d1,..., slopes:m1,..."},
    [ABL_OPT_SOFTCAP] = {"softcap", ABL_ARG_VALUE, "Z",
            "soft-cap logits to (-Z, Z) and report the range of delta (mitigation S; paper: 50)"},
    [ABL_OPT_STEP] = {"step", ABL_ARG_VALUE, "S",
            "spacing of the distances (default 64 for 1a, 16 for 1b)"},
    [ABL_OPT_TARGETS] = {"targets", ABL_ARG_VALUE, "LIST",
            "d1,...,dH: slopes whose first blind distance on the kernel is exactly each target"},
    [ABL_OPT_THREADS] = {"threads", ABL_ARG_VALUE, "T",
            "threads (default: every online core)"},
    [ABL_OPT_TOLERANCE] = {"tolerance", ABL_ARG_VALUE, "RAD",
            "rope: the angle error that makes a position indistinguishable (default: each pair's theta_i)"},
    [ABL_OPT_UNTIL] = {"until", ABL_ARG_VALUE, "N",
            "last value of the series: distance d (1a) or context N (1b); default 4096"},
    [ABL_OPT_UPSTREAM] = {"upstream", ABL_ARG_VALUE, "B",
            "gradient: the bound on |dP - D|, a power of two (default 1, unit upstream)"},
    [ABL_OPT_WEIGHTS] = {"weights", ABL_ARG_FILE, "FILE",
            "also write every logit and weight (binary32 bits, hex) to FILE (N <= 4096)"},
    [ABL_OPT_WIDE] = {"wide", ABL_ARG_FLAG, NULL,
            "text output: one line per table row and note (no 80-column layout)"},
    [ABL_OPT_WIDTH] = {"width", ABL_ARG_VALUE, "PX",
            "page width (default 1200)"},
    [ABL_OPT_WINDOW] = {"window", ABL_ARG_VALUE, "W",
            "hard attention window: keys farther than W are masked"},
};

abl_cli_opt abl_cli_use_opt(const abl_cli_use *use)
{
    abl_cli_opt o = abl_cli_options[use->id];
    if (use->arg != ABL_ARG_SAME) {
        o.arg = use->arg;
        if (o.arg == ABL_ARG_FLAG)
            o.metavar = NULL;
    }
    if (use->metavar != NULL)
        o.metavar = use->metavar;
    if (use->help != NULL)
        o.help = use->help;
    return o;
}

abl_opt abl_cli_opt_id(const char *name, size_t len)
{
    /* The table is sorted by name: bisect. */
    size_t lo = 0, hi = ABL_OPT_COUNT;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *t = abl_cli_options[mid].name;
        int c = strncmp(t, name, len);
        if (c == 0 && t[len] != '\0')
            c = 1;
        if (c == 0)
            return (abl_opt)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return ABL_OPT_COUNT;
}

const char *abl_cli_arg(const abl_cli_cmd *cmd, const char **values, abl_opt id)
{
    /* An option the command does not list is never given: reading it is a mistake in the code (the id
     * form of a misspelt name), caught in debug builds. */
    size_t k = 0;
    while (k < cmd->nopts && cmd->opts[k].id != id)
        k++;
    assert(k < cmd->nopts);
    (void)k;
    return values[id];
}
