/* libFuzzer harness: the config.json reader of --config (abl_model_spec_from_json: jansson parse, the
 * model_type / ALiBi detection, head count, context, dtype, slopes and the code path). Input: the
 * file's bytes (not NUL-terminated). Seeds: the .json files of tests/data/configs. Findings: sanitizer reports,
 * leaks, timeouts, and a broken contract: a status other than OK / ABL_ERR_PARSE, an error message
 * that is empty, not NUL-terminated or more than one line, or an accepted spec without a positive head
 * count or with unterminated strings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "alibi_blind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ABL_CONFIG_MAX_BYTES)
        return 0;
    abl_model_spec s;
    char *err = NULL;
    abl_status st = abl_model_spec_from_json((const char *)data, size, &s, &err);
    if (st != ABL_OK) {
        /* a refusal comes with its message, whole and on one line */
        if (st != ABL_ERR_PARSE || err == NULL || err[0] == '\0' || strchr(err, '\n'))
            abort();
        free(err);
        return 0;
    }
    /* an accepted spec: a model_type of at most ABL_MODEL_TYPE_MAX bytes, a pipeline that builds, a schedule */
    abl_pipeline pl;
    abl_schedule_spec sched;
    if (s.heads <= 0 || s.model_type == NULL || strlen(s.model_type) > ABL_MODEL_TYPE_MAX ||
        s.pipeline.text == NULL || s.heads_src.field == NULL ||
        abl_pipeline_build(&s.pipeline, &s.dtype, &pl) != ABL_OK || abl_model_spec_schedule(&s, &sched) != ABL_OK)
        abort();
    abl_schedule_spec_free(&sched);
    const abl_source *src[4] = {&s.heads_src, &s.dtype_src, &s.slopes_src, &s.pipeline_src};
    for (int i = 0; i < 4; i++)
        free(abl_source_text(src[i]));
    abl_model_spec_free(&s);
    free(err);
    return 0;
}
