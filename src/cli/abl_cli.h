/* alibi-blind CLI: shared option parsing, number parsing and output (files share the abl_cli_ prefix). */
#ifndef ABL_CLI_H
#define ABL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "alibi_blind.h"

/* Exit statuses (documented in the man page, docs/alibi-blind.1.in). */
enum {
    ABL_EXIT_OK = 0,
    ABL_EXIT_DIFFERS = 1,   /* reproduce/verify found an unexplained difference */
    ABL_EXIT_USAGE = 2,     /* bad option, bad number, bad file: nothing written */
    ABL_EXIT_INTERNAL = 3   /* out of memory, I/O error while writing */
};

/*
 * The options: every option of every command once, in one table sorted by name (abl_cli_options,
 * src/cli/abl_cli_options.c), named by an id, so that a misspelt option does not compile. A command lists
 * the ids it takes; the parser puts each value at its id in a per-run array (values[ABL_OPT_...]); --help,
 * the man page's OPTIONS (alibi-blind man) and the shell completions are written from the table.
 */
typedef enum abl_opt {
    ABL_OPT_ATTENTION,
    ABL_OPT_BACKWARD,
    ABL_OPT_BASE,
    ABL_OPT_CLAMP,
    ABL_OPT_COMPARE,
    ABL_OPT_CONFIG,
    ABL_OPT_CONVENTION,
    ABL_OPT_CRITERION,
    ABL_OPT_CTX,
    ABL_OPT_DATA,
    ABL_OPT_DEVICE,
    ABL_OPT_DIFFERENCES,
    ABL_OPT_DIGITS,
    ABL_OPT_DISTANCE,
    ABL_OPT_DTYPE,
    ABL_OPT_EXACT,
    ABL_OPT_FORCE,
    ABL_OPT_FORMAT,
    ABL_OPT_GRAD_WEIGHTS,
    ABL_OPT_GRADIENT,
    ABL_OPT_HEAD,
    ABL_OPT_HEAD_DIM,
    ABL_OPT_HEADS,
    ABL_OPT_HEIGHT,
    ABL_OPT_HELP,
    ABL_OPT_IEEE,
    ABL_OPT_K,
    ABL_OPT_KEEP,
    ABL_OPT_LEVEL,
    ABL_OPT_LIBM,
    ABL_OPT_LINEAR,
    ABL_OPT_LOGIT,
    ABL_OPT_LOGIT_BUDGET,
    ABL_OPT_LOGIT_RANGE,
    ABL_OPT_LOGIT_STD,
    ABL_OPT_LOGITS,
    ABL_OPT_LOGITS_DTYPE,
    ABL_OPT_LOSS_SCALE,
    ABL_OPT_MAX_BLIND_HEADS,
    ABL_OPT_MAX_ROW_FRACTION,
    ABL_OPT_MITIGATE,
    ABL_OPT_MODEL,
    ABL_OPT_OUTPUT,
    ABL_OPT_PIPELINE,
    ABL_OPT_PLOT,
    ABL_OPT_PREDICT,
    ABL_OPT_PROGRESS,
    ABL_OPT_PUBLISHED,
    ABL_OPT_Q,
    ABL_OPT_QUIET,
    ABL_OPT_RN,
    ABL_OPT_SCALING,
    ABL_OPT_SEED,
    ABL_OPT_SHIFT,
    ABL_OPT_SLOPES,
    ABL_OPT_SOFTCAP,
    ABL_OPT_STEP,
    ABL_OPT_TARGETS,
    ABL_OPT_THREADS,
    ABL_OPT_TOLERANCE,
    ABL_OPT_UNTIL,
    ABL_OPT_UPSTREAM,
    ABL_OPT_WEIGHTS,
    ABL_OPT_WIDE,
    ABL_OPT_WIDTH,
    ABL_OPT_WINDOW,
    ABL_OPT_COUNT
} abl_opt;

/* What an option's argument is (the completions offer values or file names from it). */
typedef enum abl_arg {
    ABL_ARG_SAME = 0,     /* in a command's use: the table's kind */
    ABL_ARG_FLAG,         /* no value */
    ABL_ARG_VALUE,        /* a number, a spec, a name */
    ABL_ARG_FILE,
    ABL_ARG_DIR,
    ABL_ARG_FORMAT,       /* an output format (text, markdown ...) */
    ABL_ARG_CONVENTION,   /* paper, ftz, ieee, subnormal */
    ABL_ARG_DTYPE         /* a floating-point format name */
} abl_arg;

typedef struct abl_cli_opt {
    const char *name;      /* without the leading "--" */
    abl_arg arg;
    const char *metavar;   /* NULL: a flag without value */
    const char *help;
} abl_cli_opt;

/* The table, indexed by id. */
extern const abl_cli_opt abl_cli_options[ABL_OPT_COUNT];

/*
 * An option a command takes: the table's row, or where the option means something else for this command
 * (another default, a list instead of one value, a flag instead of a value) the command's own kind,
 * metavar and help (non-zero fields override; each override says why, in a comment beside it).
 */
typedef struct abl_cli_use {
    abl_opt id;
    abl_arg arg;
    const char *metavar;
    const char *help;
} abl_cli_use;

/* A use of the table's row as it is. */
#define ABL_USE(id) {(id), ABL_ARG_SAME, NULL, NULL}

/* The option as command `use` presents it (the table's row with the use's overrides). */
abl_cli_opt abl_cli_use_opt(const abl_cli_use *use);

/*
 * One abl_cli_main call: its streams and the shared flags, made by abl_cli_main on its stack and handed
 * down to the command (never file-scope state: the fuzzers and the tests call abl_cli_main again and again,
 * with other streams).
 */
typedef struct abl_cli_ctx {
    FILE *out;   /* the report: stdout, or the caller's stream */
    FILE *err;   /* messages and the progress bar */
    int wide;    /* --wide (accepted by every command, like --help): text output keeps one line per table
                  * row, meta line and note instead of fitting 80 columns */
} abl_cli_ctx;

typedef struct abl_cli_cmd {
    const char *name;
    const char *summary;
    const char *usage;                 /* argument synopsis after "alibi-blind NAME" */
    const char *description;           /* paragraph(s) for --help */
    const abl_cli_use *opts;           /* sorted by name */
    size_t nopts;
    /* values: ABL_OPT_COUNT entries, indexed by id (NULL: not given; "" a flag that is given). */
    int (*run)(const abl_cli_ctx *ctx, const struct abl_cli_cmd *cmd, const char **values, int npos, char **pos);
    /* more paragraphs after the description (NULL: none): a C literal stays under 4095 bytes, so a long
     * help (simulate's presets and fields) is two literals */
    const char *description_more;
} abl_cli_cmd;

/*
 * The CLI as a function: no exit(), no global streams. argv[0] is the program name; the report goes
 * to `out`, messages to `err` (main passes stdout and stderr; the fuzzers pass memory streams).
 */
int abl_cli_main(int argc, char **argv, FILE *out, FILE *err);
/* The error stream of the running abl_cli_main (= its ctx.err), so that the ~240 one-line errors
 * (abl_cli_usage_error, abl_cli_internal_error and the parsers below) need not each take the context.
 * Thread-local: abl_cli_main run on several threads at once (tests/cli_threads/, under TSan in .ci/run)
 * writes each run's errors to its own stream; nothing else in the CLI at file scope is written. */
extern _Thread_local FILE *abl_cli_err;
/* The options every command takes, handled by the shared parser rather than the command's list
 * (--help, --wide): help texts, completions and the man page list them for every command. */
extern const abl_opt abl_cli_shared_opts[];
extern const size_t abl_cli_nshared;

/* Print "alibi-blind: <message>" as one line on stderr; returns ABL_EXIT_USAGE. Control characters in
 * the message (echoed values) are escaped (\n, \x1b), so it is always one line. */
int abl_cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* ABL_ERR_SLOPE_CALC: the schedule `slopes` is not one the pipeline's slope-calc (the model code's own slope
 * formula) computes; says which schedules it does. Returns ABL_EXIT_USAGE. */
int abl_cli_slope_calc_error(const char *slopes, abl_slope_calc calc);
/* The same for failures that are not the user's (returns ABL_EXIT_INTERNAL). */
int abl_cli_internal_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The one mapping from a failed status to its message in the CLI: the library's own message (`msg`, the
 * malloc'd text of a char **msg API) when it gave one, else the status's text (abl_status_message). Every
 * error line of the CLI that reports a library status takes its text from here. */
const char *abl_cli_why(abl_status st, const char *msg);

/* Value of option `id` (NULL when absent, "" for a flag that is present); cmd must list id (asserted). */
const char *abl_cli_arg(const abl_cli_cmd *cmd, const char **values, abl_opt id);
/* The id of an option name (ABL_OPT_COUNT when there is none). */
abl_opt abl_cli_opt_id(const char *name, size_t len);

/* Strict parsers: each prints its one-line error and returns non-zero on bad input. */
int abl_cli_int(const char *opt, const char *text, long lo, long hi, long *out);
int abl_cli_count(const char *opt, const char *text, uint64_t lo, uint64_t hi, uint64_t *out); /* integer, "1e12" allowed */
/* A context length: what abl_cli_count takes, and "8k" / "8K" / "8Ki" (x1024), "1M" / "1Mi" (x1024^2), "2^15"
 * (abl_cli_context.c): every --ctx reads through it. */
int abl_cli_context(const char *opt, const char *text, uint64_t lo, uint64_t hi, uint64_t *out);
/* An exact decimal (any length) into q, which the caller has initialised: the one place user numbers are read. */
int abl_cli_decimal(const char *opt, const char *text, int positive, mpq_t q);
int abl_cli_dtype(const char *opt, const char *text, abl_format *out);
/* One format where one is inherent: a list ("bf16,fp16", "all") is refused with `why` ("simulate
 * runs one pipeline in one model dtype; run it once per dtype"). */
int abl_cli_dtype_one(const char *opt, const char *text, const char *why, abl_format *out);
#define ABL_CLI_ONE_PIPELINE "simulate runs one pipeline in one model dtype (run it once per dtype)"
/* A comma-separated list of formats, or "all" (every built-in format); at most cap entries. */
int abl_cli_dtype_list(const char *opt, const char *list, abl_format *out, size_t cap, size_t *n);
int abl_cli_convention(const char *text, abl_convention *out);
/* --attention causal|bidirectional (abl_cli_attention.c): 0, or the exit status after the one-line error. */
int abl_cli_attention(const char *text, abl_attention *out);
/* Whether a layer of this direction can run on this kernel (bidirectional: a bias of |i - j| only, not a
 * ggml kind; with the predictor (predict), eager or flash): 0, or the exit status after the error. */
int abl_cli_attention_kernel(abl_attention a, const abl_pipeline *p, int predict);
/* --pipeline SPEC parsed, and checked when `check` (abl_pipeline_parse_msg/_check_msg: the message is
 * whole, however long the spec it quotes); 0, or the exit status after the one-line error. plot and
 * report parse here what the library parses again, so that a bad spec never reaches the library's
 * fixed-size error buffers. */
int abl_cli_pipeline(const char *spec, const abl_format *model, int check, abl_pipeline *out);
/* A layer's pipeline (abl_layer_pipeline: eager when it has none) built for its format and checked as
 * abl_cli_pipeline does; 0, or the exit status after the one-line error. */
int abl_cli_pipeline_value(const abl_layer *l, abl_pipeline *out);
/* The layer's kernel as a value (l->pipeline, l->has_pipeline): the text of --pipeline (parsed once), else
 * the catalogue model's default code path (cat), else the config's (spec); none of them: eager. --model and
 * --config exclude each other. 0, or the exit status after the one-line error. */
int abl_cli_layer_kernel(const char *text, const abl_model *cat, const abl_model_spec *spec, abl_layer *l);
/* --pipeline SPEC parsed once into the dtype-independent value the library takes (abl_pipeline_spec_parse;
 * *out freed by the caller, also after an error); 0, or the exit status after the one-line error. */
int abl_cli_pipeline_spec(const char *spec, abl_pipeline_spec *out);
/* --slopes TEXT parsed once, at the boundary, into the value the library takes (NULL text: *out zeroed,
 * 0); 0, or the exit status after the one-line error "--slopes: 'TEXT': why". */
int abl_cli_slopes(const char *text, abl_schedule_spec *out);
int abl_cli_output(const char *text, abl_output *out);

/*
 * An output file that appears only when everything succeeded: a new or regular file is written beside
 * its (symlink-resolved) target and renamed over it by commit; a device or fifo is written in place.
 */
typedef struct abl_cli_outfile {
    const char *opt;   /* option name, for messages */
    char *target;      /* where the data ends up */
    char *tmp;         /* temporary beside it, or NULL when writing in place */
    FILE *f;
    FILE *out;         /* the call's standard output ("-" writes there; it is flushed, never closed) */
} abl_cli_outfile;

int abl_cli_outfile_open(const abl_cli_ctx *ctx, abl_cli_outfile *o, const char *opt, const char *path);
/* Flush what was written so far; non-zero when the data did not all reach the file (or device). */
int abl_cli_outfile_flush(abl_cli_outfile *o);
/* Non-zero when the two paths name the same file (existing or to be created). */
int abl_cli_same_file(const char *a, const char *b);
/* Close and move into place; on failure the target is left as it was. Returns an exit status. */
int abl_cli_outfile_commit(abl_cli_outfile *o);
/* Close and forget the data (safe on a zeroed or committed outfile). */
void abl_cli_outfile_abort(abl_cli_outfile *o);

/* Render the report into a malloc'd buffer. Returns an exit status. */
int abl_cli_render(const abl_cli_ctx *ctx, const abl_report *r, abl_output fmt, char **buf, size_t *len);

/* Render the report and write it to stdout, or to `path` through an abl_cli_outfile. */
int abl_cli_emit(const abl_cli_ctx *ctx, const abl_report *r, abl_output fmt, const char *path);
/* The same for a set of reports (analyze --dtype LIST). */
int abl_cli_emit_set(const abl_cli_ctx *ctx, const abl_report_set *s, abl_output fmt, const char *path);
/* Write a rendered buffer (freed here) to stdout or to `path`. */
int abl_cli_emit_buffer(const abl_cli_ctx *ctx, char *buf, size_t len, const char *path);

/* Pictures: the device and page size from --device/--output/--width/--height (width and height may
 * be NULL), and drawing a plot into `path` through an abl_cli_outfile. Both return an exit status. */
int abl_cli_plot_target(const char *device, const char *path, const char *width, const char *height,
                        abl_plot_render_options *ro);
int abl_cli_plot_write(const abl_cli_ctx *ctx, const abl_plot *p, const abl_plot_render_options *ro, const char *opt, const char *path);

/*
 * Work budget: a computation whose nominal cost (abl_cost) is over the budget is refused with a message
 * saying how long it would take, unless --force is given (the man page, BUDGET). The budget is a value
 * handed down to what checks it (analyze --dtype LIST hands each format its share), not a global.
 */
#define ABL_CLI_BUDGET_SECONDS 60.0
typedef struct abl_cli_work {
    const char *what;   /* how the refusal names the work: "design", "analyze (1/2 of the budget ...)" */
    double seconds;     /* the budget */
    int force;          /* --force given: run whatever the estimate */
    int model_row;      /* analyze/check --model a,b,c: the kernel report also gets the summaries "head_count" and
                         * "first_blind_any" (the comparison's columns; abl_cli_model_list.c) */
} abl_cli_work;
/* analyze/check --model a,b,c: `one` run for each model (its --model one name, 1/n of the budget), one
 * document: an overview with a row per model (heads, kernel, context, blind heads, first blind distance,
 * fractions), then each model's report; text, markdown, CSV (a first column model) and JSON
 * ({"models": [...], "analyses": [...]}). Exit 1 when a run answered 1 (check: a limit failed). */
typedef int (*abl_cli_model_run)(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v,
                                 const abl_cli_work *work, abl_report **r);
/* The summaries "head_count" and "first_blind_any" (the smallest first blind distance of any head,
 * "none"/null when no head is blind) that the comparison of abl_cli_model_list shows. */
abl_status abl_cli_model_row_summaries(const abl_compare *c, abl_report *r);
int abl_cli_model_list(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, abl_output out,
                       abl_cli_model_run one);
/* The budget of this run: ABL_BUDGET_SECONDS when it is a positive number, else ABL_CLI_BUDGET_SECONDS. */
double abl_cli_budget_from_env(void);
/* The budget of command `what`: the run's seconds, and --force from the values (indexed by id). */
abl_cli_work abl_cli_work_of(const char *what, const char **values);
/* 0 when within the budget or forced; else prints the one-line refusal and returns ABL_EXIT_USAGE. */
int abl_cli_budget(const abl_cli_work *w, const abl_cost *c);
/* abl_cli_budget with abl_cli_work_of(what, values). */
int abl_cli_budget_of(const char *what, const char **values, const abl_cost *c);
/* abl_cli_budget for the zero-logit predictor's cost on sc times `calls` (calls of the same size; 0:
 * none), plus `extra` when not NULL (the same command's other work). A predictor estimate that fails
 * counts nothing (the run reports the error itself). */
int abl_cli_predict_budget(const abl_cli_work *w, const abl_simulate_config *sc, double calls,
                           const abl_cost *extra);
/* "4.5 minutes", "3.2 days", malloc'd (NULL on allocation failure). */
char *abl_cli_duration_text(double seconds);

/*
 * A progress bar with an estimate of the time left, on standard error: drawn when it is a terminal or
 * --progress is given, never with --quiet. abl_cli_bar_update is an abl_progress_fn (ctx = the bar).
 */
typedef struct abl_cli_bar {
    FILE *f;
    const char *label;
    int on, width;
    double start, last;
} abl_cli_bar;
void abl_cli_bar_init(const abl_cli_ctx *ctx, abl_cli_bar *b, const char *label, const abl_cli_cmd *cmd, const char **values);
void abl_cli_bar_update(void *ctx, uint64_t done, uint64_t total);
void abl_cli_bar_finish(abl_cli_bar *b);

/* The commands, sorted by name (the parser's table; completion and the tests walk it too). */
extern const abl_cli_cmd *const abl_cli_commands[];
extern const size_t abl_cli_ncommands;

/* alibi-blind completion bash|zsh|list (hidden): argv holds the arguments after "completion". */
int abl_cli_completion(const abl_cli_ctx *ctx, int argc, char **argv);
/* alibi-blind man TEMPLATE (hidden): the man page from its template and the option table. */
int abl_cli_man(const abl_cli_ctx *ctx, int argc, char **argv);

/* plot KIND --help: the kind's own help (NULL: not a kind). */
const abl_cli_cmd *abl_cli_plot_kind_help(const char *kind);

/* Subcommands. */
extern const abl_cli_cmd abl_cli_analyze_cmd;
extern const abl_cli_cmd abl_cli_thresholds_cmd;
extern const abl_cli_cmd abl_cli_table_cmd;
extern const abl_cli_cmd abl_cli_figure_cmd;
extern const abl_cli_cmd abl_cli_plot_cmd;
extern const abl_cli_cmd abl_cli_report_cmd;
extern const abl_cli_cmd abl_cli_reproduce_cmd;
extern const abl_cli_cmd abl_cli_simulate_cmd;
extern const abl_cli_cmd abl_cli_verify_cmd;
extern const abl_cli_cmd abl_cli_design_cmd;
extern const abl_cli_cmd abl_cli_models_cmd;
extern const abl_cli_cmd abl_cli_check_cmd;
extern const abl_cli_cmd abl_cli_rope_cmd;

/*
 * --model NAME / --config PATH and the options that override them (--dtype, --heads, --slopes, --ctx,
 * --pipeline; the ones the command has). The result remembers where each value came from.
 */
typedef struct abl_cli_setup {
    abl_model_spec spec;
    int have_model;              /* --model or --config given */
    abl_layer layer;             /* the one layer: the model's (or the defaults), the options over it */
    int have_layer;              /* layer initialised (abl_cli_setup_free releases it) */
    const char *slopes;          /* NULL: press (the schedule's text, for messages) */
    abl_status schedule_status;  /* the parse of --slopes: reported at the end of the resolution */
    char *schedule_msg;          /* its reason, the library's (malloc'd; NULL when none) */
    abl_pipeline pipeline;       /* the layer's pipeline built for its format, checked */
    abl_setup_source sources[16];   /* where each value came from (abl_setup_note_source) */
    size_t nsources;
    abl_compare_meta meta[4];    /* "model"/"config" and "sources" lines for the report */
    size_t nmeta;
    char *owned[8];
} abl_cli_setup;

/* Resolve; returns 0, or the exit status after printing the one-line error. max_ctx bounds --ctx. */
int abl_cli_setup_resolve(const abl_cli_cmd *cmd, const char **v, uint64_t max_ctx, abl_cli_setup *s);
void abl_cli_setup_free(abl_cli_setup *s);
/*
 * --model NAME / --config PATH, resolved here for every command that takes them (abl_cli_setup_resolve
 * and design, plot, report): they exclude each other; --config DIR reads DIR/config.json, --config - standard
 * input; a --model org/name the catalogue lacks is read from the local Hugging Face cache, any other unknown
 * name is refused with a did-you-mean; the config.json is read. Returns 0, or the exit status after the one-line error.
 */
typedef struct abl_cli_model_choice {
    const abl_model *model;   /* --model: its catalogue entry; NULL when not given or not catalogued */
    const char *config;       /* the config.json read, as shown: --config FILE, DIR/config.json, "standard
                               * input" (--config -), or the Hugging Face cache's file for a --model org/name
                               * the catalogue lacks; NULL when none */
    abl_model_spec spec;      /* what the config.json says (when config != NULL) */
    char *owned_path;         /* the path made here that config may point to: abl_cli_model_choice_release */
} abl_cli_model_choice;
/* design, report, plot: a model of an encoder family (bidirectional) is refused with a line naming the
 * commands that answer it (abl_cli_attention.c); 0 for every causal model. */
int abl_cli_encoder_refused(const char *cmdname, const abl_cli_model_choice *c);
/* The attention of the model or config chosen (its family's), causal without one; for a command without
 * --attention (plot). */
abl_attention abl_cli_model_attention(const abl_cli_model_choice *c);
/* design and report: the layer's direction, the model family's (the encoders are bidirectional) unless
 * --attention says otherwise (abl_cli_attention.c). 0, or the exit status after the one-line error. */
int abl_cli_choice_attention(const abl_cli_cmd *cmd, const char **v, const abl_cli_model_choice *c, abl_attention *out);
/* design: the options a bidirectional layer cannot answer (--clamp, --logit-budget: decided on a causal last
 * row) refused; 0 for a causal layer. */
int abl_cli_design_attention_options(const abl_cli_cmd *cmd, const char **v, abl_attention a);
int abl_cli_model_choose(const char **v, abl_cli_model_choice *c);
/* Free the path a choice made (not its spec, which callers move out); c->config is NULL after it. */
void abl_cli_model_choice_release(abl_cli_model_choice *c);
/* printf into a malloc'd string of any length (NULL on allocation failure): text is never held in a
 * fixed-size buffer (it may hold a user's --pipeline or --slopes). */
char *abl_cli_printf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The comparison a resolved setup asks for: the projection of its layer (abl_layer_compare_config; *cc
 * points into s). 0, or the exit status after the one-line error. */
int abl_cli_compare_config(const abl_cli_setup *s, abl_compare_config *cc);

/*
 * Run the paper's model and the kernel's predictor side by side and write the report (analyze), or
 * the verdict (check, limits != NULL: exit 1 when the limits are exceeded). With keep != NULL the
 * report is handed back in *keep instead of written (analyze --dtype LIST). The analysis and the predictor
 * are refused over the work budget `work`. Returns the exit status.
 */
int abl_cli_compare(const abl_cli_ctx *ctx, const char *cmdname, const abl_compare_config *cc, const abl_cli_setup *s, abl_output out,
                    const char *path, const abl_check_limits *limits, abl_report **keep, const abl_cli_work *work);

/* One line for an unknown --model NAME (with a did-you-mean); returns ABL_EXIT_USAGE. opt may be NULL. */
int abl_cli_unknown_model(const char *opt, const char *name);

/* The gradient options (abl_cli_gradient.c, spec §15). --loss-scale S|dynamic into *scale_log2 (0 when
 * absent); --upstream B times the loss scale into *log2 (0 when both absent). 0, or the exit status after
 * the one-line error. */
int abl_cli_gradient_scale(const abl_cli_cmd *cmd, const char **v, long *scale_log2);
int abl_cli_gradient_upstream(const abl_cli_cmd *cmd, const char **v, long *log2);
/* --loss-scale or --upstream without the option they belong to (needs: "--gradient"): the error. */
int abl_cli_gradient_refuse_without(const abl_cli_cmd *cmd, const char **v, const char *needs);
/* analyze --gradient: the closed form (abl_gradient_run) of cfg, its report into *r. */
int abl_cli_analyze_gradient(const abl_cli_cmd *cmd, const char **v, const abl_analysis_config *cfg, abl_report **r);

/* simulate --backward (with --predict/--compare, --grad-weights, --loss-scale, --upstream): the run and its
 * report, after simulate's own checks and budget. The exit status. */
/* simulate: what --backward needs and excludes (--grad-weights, --loss-scale, --upstream without it; --weights
 * with it). 0, or the exit status after the error. */
/* check --criterion gradient: the zero-logit gradient predictor on the layer of s, its report and verdict
 * (exit 0 within the limits, 1 not, 2 bad input). */
int abl_cli_check_gradient(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v, const abl_cli_setup *s,
                           const abl_check_limits *lim, abl_output out);
int abl_cli_backward_checks(const abl_cli_cmd *cmd, const char **v, const char *wpath);
/* plot gradient: forward vs gradient first blind distances per head of the layer on pipe (NULL: eager) into
 * *p (--upstream, --loss-scale; --ctx default 2048). 0, or the exit status after the error. */
int abl_cli_plot_gradient(const abl_cli_cmd *cmd, const char **v, const abl_layer *layer,
                          const abl_pipeline_spec *pipe, const char *label, abl_plot *p);
int abl_cli_simulate_backward(const abl_cli_ctx *ctx, const abl_cli_cmd *cmd, const char **v,
                              const abl_simulate_config *cfg, int predict, int compare, abl_output out);

#endif
