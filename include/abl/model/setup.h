/* alibi-blind: what the CLI's model setup (src/cli/abl_cli_model.c, abl_cli_setup_resolve) and the flat API's
 * (src/lib/compose/abl_flat_setup.c, abl_flat_setup_resolve) share once each has its typed values: the record
 * of where every value came from and its "values from" line, the code path a pipeline name may stand for,
 * and BTLM/jais's keyed slopes. One copy, so that the documents of the two paths cannot drift apart; each
 * caller keeps its own error lines (options named "--ctx" or "ctx="). */
#ifndef ABL_MODEL_SETUP_H
#define ABL_MODEL_SETUP_H

#include "abl/core/export.h"

#include <stddef.h>
#include "abl/core/status.h"
#include "abl/model/config.h"
#include "abl/model/layer.h"

/* One value's source: what ("heads", "context", ...: static text) and from where (abl_source_text, owned by
 * the record; free it with the record). */
typedef struct abl_setup_source {
    const char *what;
    char *from;
} abl_setup_source;

/* Records what as coming from src in sources[*n] when *n < cap (out of memory: the line is left out, and the
 * report's own allocations fail next). */
ABL_API void abl_setup_note_source(abl_setup_source *sources, size_t *n, size_t cap, const char *what,
                                   const abl_source *src);

/* The report's "values from" line, "catalogue: bloom-7b1: heads, dtype; option --ctx: context" (the values
 * grouped by source, in order), and its JSON object {"heads": "...", ...}: malloc'd into *text and *json. */
ABL_API abl_status abl_setup_sources_build(const abl_setup_source *sources, size_t n, char **text, char **json);

/* A pipeline text NAME[,FIELD=VALUE...] whose NAME is a code path of the model's family (spec->family; none
 * without a model): that path's pipeline with the given fields after it, malloc'd into *full, and the path's
 * name in *path. *full NULL when NAME is no code path. */
ABL_API abl_status abl_setup_code_path_spec(const abl_model_spec *spec, const char *text, char **full,
                                            const char **path);

/* BTLM/jais alibi_scaling.train_seq_len T: a run of more than T keys uses the slopes divided by keys / T, as the
 * model's code does (abl_model_spec_schedule_keys). Applied to the layer when the model has T, the layer's
 * context exceeds it and *slopes is still the model's schedule text (slopes given by the user win); then
 * *slopes is the keyed schedule's text and the "slopes" source says so. */
ABL_API abl_status abl_setup_keys_scaling(const abl_model_spec *spec, abl_layer *layer, const char **slopes,
                                          abl_setup_source *sources, size_t n);

#endif
