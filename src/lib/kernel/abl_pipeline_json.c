/* alibi-blind: a pipeline's fields as a JSON object (issue 21: key/value data is an object in JSON). */
#include <stdlib.h>
#include <string.h>
#include "abl_internal.h"
#include "kernel/abl_kernel_internal.h"
#include "report/abl_report_internal.h"

/*
 * abl_pipeline_describe_text's fields as {"field_name": "value", ...} (the option's name in snake_case), in its order, every value a string
 * (a field's type never depends on its value: rows=0 and dtype names alike). The description is this
 * stage's own text, "name=value" pairs joined by ',' whose names and values hold neither character
 * (field names, dtype and kind names, integers, a ratio, a version tag), so it splits without ambiguity.
 */
void abl_pipeline_describe_json(const struct abl_pipeline *p, abl_text *t)
{
    abl_text d = {0};
    abl_pipeline_describe_text(p, &d);
    if (d.oom) {
        t->oom = 1;
        free(d.s);
        return;
    }
    abl_text_add(t, "{");
    int n = 0;
    for (const char *s = abl_text_str(&d); s != NULL && *s != '\0';) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        size_t klen = eq ? (size_t)(eq - s) : len;
        char *key = abl_strf("%.*s", (int)klen, s);
        char *value = eq ? abl_strf("%.*s", (int)(len - klen - 1), eq + 1) : abl_strf("%s", "");
        for (char *k = key; k != NULL && *k != '\0'; k++)
            if (*k == '-') *k = '_';   /* JSON keys are snake_case (bias-form: "bias_form") */
        if (key == NULL || value == NULL)
            t->oom = 1;
        else {
            abl_text_add(t, "%s", n++ ? ", " : "");
            abl_text_json(t, key);
            abl_text_add(t, ": ");
            abl_text_json(t, value);
        }
        free(key);
        free(value);
        s = comma ? comma + 1 : NULL;
    }
    abl_text_add(t, "}");
    free(d.s);
}
