/* alibi-blind: one JSON document from text in memory, as the config.json readers take it (abl_config.c for
 * ALiBi models, abl_rope_models.c for RoPE ones). */
#ifndef ABL_JSON_TEXT_H
#define ABL_JSON_TEXT_H

#include <stddef.h>
#include <jansson.h>

/* TEXT (LEN bytes) parsed with duplicate keys refused (a config with two values for one field has no
 * meaning). NULL on a parse error, with *msg = "WHAT: line L, column C: jansson's reason". The caller owns
 * the result (json_decref). */
json_t *abl_json_text_load(const char *text, size_t len, const char *what, char **msg);

#endif
