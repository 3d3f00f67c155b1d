/* alibi-blind: a model's settings from the catalogue or from a Hugging Face config.json (read with
 * jansson), with where each value came from, so that explicit options can override them and the
 * output can say which is which. docs/models.md lists the fields read for each model_type. */
#ifndef ABL_MODEL_CONFIG_H
#define ABL_MODEL_CONFIG_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "abl/core/status.h"
#include "abl/core/format.h"
#include "abl/core/slope.h"
#include "abl/model/catalogue.h"
#include "abl/kernel/pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a value came from. */
typedef enum abl_origin {
    ABL_ORIGIN_NONE = 0,       /* not set */
    ABL_ORIGIN_DEFAULT = 1,    /* the tool's default (e.g. bf16 when the config has no torch_dtype) */
    ABL_ORIGIN_CATALOGUE = 2,  /* the catalogue entry (--model) */
    ABL_ORIGIN_CONFIG = 3,     /* a field of config.json (--config) */
    ABL_ORIGIN_OPTION = 4      /* an explicit command-line option */
} abl_origin;

ABL_API const char *abl_origin_name(abl_origin o);   /* "default", "catalogue", "config", "option" */

typedef struct abl_source {
    abl_origin origin;
    const char *field;         /* static text, never freed: the config field ("n_head",
                                * "attn_config.alibi_bias_max"), the option ("--heads"), the catalogue
                                * entry's name, or a default's reason; NULL or "" for none. The one
                                * exception: a spec's pipeline_src may point into the spec's own
                                * kernel_note, valid while the spec lives */
} abl_source;

/* A model's settings. It owns model_type and pipeline: free it with abl_model_spec_free. */
typedef struct abl_model_spec {
    const abl_model *model;            /* the catalogue entry (--model), else NULL */
    const abl_model_family *family;    /* NULL: a generic ALiBi model (relative bias, eager) */
    char *model_type;                  /* config.json's model_type ("" when absent; at most 63 bytes, longer
                                        * is refused), heap; NULL for a catalogue model */
    int heads;                 abl_source heads_src;
    int head_dim;              abl_source head_dim_src;    /* 0: unknown */
    int layers;                abl_source layers_src;      /* 0: unknown */
    uint64_t context;          abl_source context_src;     /* trained context; 0: unknown */
    abl_format dtype;          abl_source dtype_src;
    abl_source slopes_src;                                 /* the schedule (abl_model_spec_schedule): */
    abl_schedule_kind slopes_kind;                         /* PRESS, POW2ONLY or MPT */
    long slopes_mpt_bias;                                  /* MPT: B */
    const abl_code_path *path;                             /* the default code path (NULL: generic) */
    abl_pipeline_spec pipeline; abl_source pipeline_src;   /* the default code path's pipeline, owned (its
                                                            * text is the display name, e.g. "falcon-hf-sdpa,
                                                            * head-dim=128,bias-scale=0.088388347648318433") */
    double slope_divisor;              /* BTLM/jais alibi_scaling.factor F: the code's slopes are fp32(m32 / fp32(F))
                                        * (abl_config_fields.c); 0: none */
    uint64_t alibi_train_seq_len;      /* BTLM/jais alibi_scaling.train_seq_len T (no factor): beyond T keys the
                                        * code's slopes are fp32(m32 / fp32(keys / T)) (abl_model_spec_schedule_keys);
                                        * 0: none */
    char *kernel_note;                 /* the config fields read that do not change the zero-logit answer
                                        * (clip_qkv, mup_scale_qk_dot_by_d, alibi_scaling.train_seq_len), as
                                        * shown in the pipeline's source; owned, NULL when none */
} abl_model_spec;

/* The longest model_type accepted (a real one is a word: "mpt", "RefinedWebModel"). */
#define ABL_MODEL_TYPE_MAX 63

/* Free what the spec owns and zero it; safe on a zeroed spec, and on one a failed call left. */
ABL_API void abl_model_spec_free(abl_model_spec *s);

/* The settings of a catalogue model (free with abl_model_spec_free). ABL_ERR_INVALID_ARGUMENT when the entry's head count was not
 * found (the model cannot be analysed from the catalogue alone). */
ABL_API abl_status abl_model_spec_from_catalogue(const abl_model *m, abl_model_spec *out);

/* The model's schedule as a value (press or mpt:B, from the typed fields: no text; free with
 * abl_schedule_spec_free). */
ABL_API abl_status abl_model_spec_schedule(const abl_model_spec *s, abl_schedule_spec *out);
/* The schedule for a run of `keys` keys: abl_model_spec_schedule's, except that a spec with
 * alibi_train_seq_len T and keys > T gets the slopes the code uses then (Cerebras's
 * AlibiPositionEmbeddingLayer: scale = keys / T, slopes / scale in fp32; abl_config_fields.c). */
ABL_API abl_status abl_model_spec_schedule_keys(const abl_model_spec *s, uint64_t keys, abl_schedule_spec *out);
/* The kernel of the model's default code path as a value (a deep copy of s->pipeline the caller frees
 * with abl_pipeline_spec_free): the one way above the model stage to read the spec's pipeline. */
ABL_API abl_status abl_model_spec_pipeline(const abl_model_spec *s, abl_pipeline_spec *out);

/*
 * Read a config.json (text of len bytes; it need not be NUL-terminated). On failure the status is
 * ABL_ERR_PARSE and *msg gets one line without the file name, e.g.
 *   "not JSON: line 3, column 5: ..."
 *   "this model does not use ALiBi (rotary)"
 *   "no head count (n_head)"  /  "n_head is not a positive integer"
 *   "unknown model_type 'x' and no ALiBi field (alibi, attn_config.alibi, position_embedding_type,
 *    alibi_starting_size)"
 */
ABL_API abl_status abl_model_spec_from_json(const char *text, size_t len, abl_model_spec *out, char **msg);

/* The same for a file; ABL_ERR_IO (*msg: "cannot read: <reason>") when it cannot be read. Files over
 * ABL_CONFIG_MAX_BYTES are refused (a config.json is a few kilobytes). */
#define ABL_CONFIG_MAX_BYTES (4u << 20)
ABL_API abl_status abl_model_spec_from_file(const char *path, abl_model_spec *out, char **msg);
/* The same for an open stream read to its end (standard input: the CLI's --config -), under the same
 * ABL_CONFIG_MAX_BYTES bound; the stream stays open, the caller's to close. */
ABL_API abl_status abl_model_spec_from_stream(FILE *f, abl_model_spec *out, char **msg);

/* "config.json: n_head", "catalogue: bloom-7b1", "option --heads", "default": a malloc'd string, the
 * caller's to free (NULL: out of memory). */
ABL_API char *abl_source_text(const abl_source *s);

#ifdef __cplusplus
}
#endif
#endif
