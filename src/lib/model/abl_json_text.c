/* alibi-blind: the one place config.json text becomes a jansson tree (see abl_json_text.h). */
#include "model/abl_json_text.h"
#include "abl_internal.h"

json_t *abl_json_text_load(const char *text, size_t len, const char *what, char **msg)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL)
        abl_set_error(msg, "%s: line %d, column %d: %s", what, je.line, je.column, je.text);
    return root;
}
