/* alibi-blind: the catalogue of ALiBi models (docs/models.md cites the configuration file and the
 * code each entry was read from). An entry holds what the model's own configuration and code fix:
 * heads, head dimension, layers, trained context, dtype, slope schedule, bias form, and the code
 * paths it runs under, each mapped to a pipeline preset of simulate. */
#ifndef ABL_MODEL_CATALOGUE_H
#define ABL_MODEL_CATALOGUE_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/slope.h"
#include "abl/core/attention.h"
#include "abl/kernel/pipeline.h"
#include "abl/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One way the model's attention is run, e.g. transformers' eager path, and the pipeline it maps to: a
 * typed value (preset + field overrides, issue 17: no text is parsed below the boundary) and the name
 * outputs show for it. The name is display only; test_catalogue checks that it reads back as the value. */
typedef struct abl_code_path {
    const char *name;        /* "transformers-eager", "llm-foundry-torch", ... */
    const char *pipeline;    /* display name: "bloom-hf", "eager,bias-form=symmetric", ... */
    const char *preset;      /* the pipeline's preset (canonical name) */
    const abl_pipeline_override *overrides;  /* applied after the preset (NULL when none) */
    size_t noverrides;
    const char *code;        /* the code read: "transformers modeling_bloom.py build_alibi_tensor" */
} abl_code_path;

/* A code path's pipeline as an owned value (a copy: text = its display name); free with
 * abl_pipeline_spec_free. */
ABL_API abl_status abl_code_path_pipeline(const abl_code_path *p, abl_pipeline_spec *out);

/* A schedule of the power-of-two family as a value: press, pow2only or mpt:B (kind and B; B is 8 for
 * the others), what a model's own code computes. */
typedef struct abl_pow2_schedule {
    abl_schedule_kind kind;      /* ABL_SCHEDULE_PRESS, ABL_SCHEDULE_POW2ONLY or ABL_SCHEDULE_MPT */
    long mpt_bias;               /* MPT: B (1..ABL_MPT_BIAS_MAX) */
} abl_pow2_schedule;

/* The schedule description of s (its text, "press" or "mpt:8", made here for display); free with
 * abl_schedule_spec_free. ABL_ERR_INVALID_ARGUMENT for another kind. */
ABL_API abl_status abl_pow2_schedule_spec(const abl_pow2_schedule *s, abl_schedule_spec *out);

typedef struct abl_model_family {
    const char *name;            /* "bloom", "falcon-rw", "mpt", ... */
    const char *slope_code;      /* how the model's code computes the slopes */
    abl_bias_form bias_form;     /* of the default code path */
    const abl_code_path *paths;  /* the first is the default */
    size_t npaths;
    abl_attention attention;     /* the layers' direction: bidirectional for the encoders (mosaic-bert, jina-bert) */
} abl_model_family;

typedef struct abl_model {
    const char *name;            /* catalogue name: "bloom-7b1" */
    const char *hf_id;           /* Hugging Face id, or NULL when the weights are not public */
    const char *aliases;         /* comma-separated further names, or "" */
    const abl_model_family *family;
    const char *table5;          /* its row in the paper's Table 5, or NULL */
    int heads;                   /* attention heads per layer */
    int head_dim;                /* 0: not found */
    int layers;                  /* 0: not found */
    uint64_t context;            /* trained context (tokens); 0: not found */
    const char *dtype;           /* default dtype (format name) */
    abl_pow2_schedule slopes;    /* the schedule as the model's code computes it: press, mpt:8 */
    const char *source;          /* where heads/head_dim/layers/context/dtype were read (one line) */
} abl_model;

ABL_API size_t abl_model_count(void);
ABL_API const abl_model *abl_model_at(size_t i);
/* By catalogue name, alias or Hugging Face id (ASCII case-insensitive); NULL when unknown. */
ABL_API const abl_model *abl_model_find(const char *name);
/* The "did you mean" candidate for an unknown name (the closest catalogue name), or NULL. */
ABL_API const abl_model *abl_model_suggest(const char *name);
/* A well-known model that does not use ALiBi (Falcon-7B/40B, Llama, Mistral, Qwen, jais-adapted, ...; a
 * name or Hugging Face id, ASCII case-insensitive, an org/ prefix where the whole org is RoPE): the one-line
 * reason it is refused ("... use rotary position embeddings (RoPE), not ALiBi"), or NULL. Static text. */
ABL_API const char *abl_model_not_alibi(const char *name);
/* The entry's schedule as a value (free with abl_schedule_spec_free). */
ABL_API abl_status abl_model_schedule(const abl_model *m, abl_schedule_spec *out);

ABL_API size_t abl_model_family_count(void);
ABL_API const abl_model_family *abl_model_family_at(size_t i);
ABL_API const abl_model_family *abl_model_family_find(const char *name);
/* A family's code path by name; NULL = the default (first). */
ABL_API const abl_code_path *abl_model_family_path(const abl_model_family *f, const char *name);

/* Whether a serving engine runs a family with its ALiBi bias (src/lib/model/abl_engines_served.c,
 * docs/models.md "Serving engines"). */
typedef enum abl_served {
    ABL_SERVED_YES = 0,        /* the engine computes the family's ALiBi bias */
    ABL_SERVED_NO = 1,         /* the engine has the architecture, but not with ALiBi */
    ABL_SERVED_NOT_FOUND = 2   /* no such architecture found in the engine's source */
} abl_served;

typedef struct abl_engine_served {
    const char *engine;     /* "llama.cpp", "vLLM" */
    abl_served served;
    const char *presets;    /* the pipeline presets that model that engine for it ("" when none) */
    const char *source;     /* the code read (file, function, revision) */
} abl_engine_served;

/* The engines of a family (*count of them; NULL and 0 for a family without a row). */
ABL_API const abl_engine_served *abl_model_engines(const abl_model_family *f, size_t *count);
ABL_API const char *abl_served_name(abl_served s);

/*
 * The catalogue as a report: one row per model. full = 0: name, heads, head dim, layers, context,
 * dtype, slopes (fits 80 columns); full = 1 adds the Hugging Face id, aliases, family, the slope code,
 * bias form, default pipeline, every code path -> pipeline, the Table 5 row and the source.
 */
ABL_API abl_status abl_model_catalogue_report(int full, abl_report **out);
/* One model: every field as meta lines, its code paths as the table. */
ABL_API abl_status abl_model_detail_report(const abl_model *m, abl_report **out);

#ifdef __cplusplus
}
#endif
#endif
