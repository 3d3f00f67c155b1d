/* alibi-blind: what the flat entry points share between their files (src/lib/compose/abl_flat*.c). */
#ifndef ABL_FLAT_INTERNAL_H
#define ABL_FLAT_INTERNAL_H

#include "abl/compose/flat.h"
#include "abl/kernel/pipeline.h"
#include "abl/model/compare.h"
#include "abl/model/config.h"
#include "abl/model/layer.h"
#include "abl/model/setup.h"

struct abl_flat_result {
    abl_status st;
    char *json;
    char *msg;
};

/* A failed result: st and one printf line. NULL only when out of memory. */
abl_flat_result *abl_flat_fail(abl_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The report (or, with s, the set) as the CLI's --format json. */
abl_flat_result *abl_flat_render(const abl_report *rep, const abl_report_set *s);
/* The work of a call against its budget; NULL when within it (or forced). */
abl_flat_result *abl_flat_budget(const char *what, const abl_flat_work *w, const abl_cost *c);
abl_progress abl_flat_progress(const abl_flat_work *w);

#define ABL_FLAT_MAX_SOURCES 16
#define ABL_FLAT_MAX_OWNED 8

/*
 * A model's layer with the arguments over it: the flat twin of the CLI's abl_cli_setup_resolve
 * (src/cli/abl_cli_model.c), with the same value sources and report lines, so that the documents are
 * the CLI's byte for byte (tests/python/test_equal_cli.py runs both). model: a catalogue name (the local
 * Hugging Face cache is the CLI's alone); config: a config.json or a folder holding one.
 */
typedef struct abl_flat_setup {
    abl_model_spec spec;
    int have_model;
    abl_layer layer;
    int have_layer;
    const char *slopes;          /* the schedule's text for messages (NULL: press) */
    abl_pipeline pipeline;       /* the layer's, built for its format and checked */
    abl_setup_source sources[ABL_FLAT_MAX_SOURCES];   /* where each value came from (abl_setup_note_source) */
    size_t nsources;
    abl_compare_meta meta[4];
    size_t nmeta;
    char *owned[ABL_FLAT_MAX_OWNED];
} abl_flat_setup;

abl_flat_result *abl_flat_setup_resolve(const abl_flat_model_args *a, const char *command, uint64_t max_ctx,
                                        abl_flat_setup *s);
void abl_flat_setup_free(abl_flat_setup *s);
/* config=: a config.json, or a folder holding one, read into *spec; *path the file read (malloc'd, also on
 * failure; NULL out of memory). NULL, or the failure naming the file. */
abl_flat_result *abl_flat_config_read(const char *config, abl_model_spec *spec, char **path);

#endif
